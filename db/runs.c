/*
 * runs.c - the runs a database holds, by name, for the commands that must
 * not pick one for the user (`cvc export` without --run over several runs).
 */
#include <stdio.h>
#include <string.h>

#include <sqlite3.h>

#include "cvc/cvc_db.h"

cvc_status cvc_db_run_names(cvc_db *db, char *buf, size_t len, int *count)
{
	sqlite3_stmt *st = NULL;
	size_t n = 0;
	int rc;

	*count = 0;
	if (len)
		buf[0] = '\0';
	if (sqlite3_prepare_v2(cvc_db_sqlite(db), "SELECT name FROM runs ORDER BY id", -1, &st,
			       NULL) != SQLITE_OK)
		return cvc_db_fail(db, CVC_ERR_DB, "'%s': listing runs: %s", cvc_db_path(db),
				   sqlite3_errmsg(cvc_db_sqlite(db)));
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		const char *name = (const char *)sqlite3_column_text(st, 0);
		int w;

		(*count)++;
		if (!len || n == (size_t)-1)
			continue;
		w = snprintf(buf + n, len - n, "%s'%s'", n ? ", " : "", name ? name : "");
		if (w < 0 || (size_t)w >= len - n) {
			/* cut at the last whole name */
			char *comma = strrchr(buf, ',');

			if (comma && (size_t)(comma - buf) + 6 < len)
				snprintf(comma, len - (size_t)(comma - buf), ", ...");
			n = (size_t)-1;
			continue;
		}
		n += (size_t)w;
	}
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? CVC_OK
				 : cvc_db_fail(db, CVC_ERR_DB, "'%s': listing runs", cvc_db_path(db));
}
