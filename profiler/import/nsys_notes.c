/*
 * nsys_notes.c - where an Nsight Systems export holds other than it seems,
 * found and said per file in run_meta (`cvc import` prints them):
 *   - CUDA graphs traced whole: a row per graph launch and none of its
 *     kernels (nsys.incomplete[FILE]);
 *   - activity rows written twice: the same start, end, deviceId, streamId
 *     and correlationId (and globalPid, where the table has it: stream and
 *     correlation ids are one process's).  One stream runs one kernel, copy
 *     or memset at a time, so two such rows are one activity; imported
 *     twice, its time and count would double.  The first row of each
 *     (table order) is imported and the others are counted, as the Kineto
 *     importer keeps the first launch call of a correlation id
 *     (nsys.duplicates[FILE]);
 *   - a globalPid that is not an integer, which the importer refuses
 *     (imp_nsys_bad_gpid()).
 */
#include <stdio.h>
#include <string.h>

#include <sqlite3.h>

#include "import_int.h"

/* The key columns, in the order a partition lists them. */
static const char *const key_cols[] = {"start", "end", "deviceId", "streamId", "correlationId",
				       "globalPid"};
enum { N_KEY = 5 }; /* globalPid joins them where the table has it */

static int has_col(sqlite3 *src, const char *t, const char *c)
{
	char sql[256];

	snprintf(sql, sizeof sql, "SELECT count(*) FROM pragma_table_info('%s') WHERE name='%s'",
		 t, c);
	return imp_sq_int(src, sql) == 1;
}

/*
 * The repeated keys first, each with the first row that has it (one
 * GROUP BY: a sort of the key in SQLite's temporary store, bounded memory,
 * rather than a hash of every row; the export has no index on these
 * columns), then, only when there are any, the other rows of those keys.
 * Measured on a made-up export of 10^6 kernels without repeats: 1.2 to
 * 1.7 s on one core, where a window numbering every row took 5 s.  Rows
 * with a NULL in the key cannot be told apart from another activity and
 * are left alone, as are untimed rows (start = end = 0), which the
 * importer skips and counts apart.
 */
int imp_nsys_dup_rows(sqlite3 *src, const char *table, int64_t *n)
{
	char sql[2048], part[256] = "", nonnull[320] = "", on[512] = "";
	int ncol = N_KEY;

	*n = 0;
	for (int i = 0; i < N_KEY; i++)
		if (!has_col(src, table, key_cols[i]))
			return 0; /* an export without the key: nothing to tell rows apart by */
	ncol += has_col(src, table, key_cols[N_KEY]);
	for (int i = 0; i < ncol; i++) {
		size_t lp = strlen(part), ln = strlen(nonnull), lo = strlen(on);

		snprintf(part + lp, sizeof part - lp, "%s\"%s\"", i ? ", " : "", key_cols[i]);
		snprintf(nonnull + ln, sizeof nonnull - ln, "\"%s\" IS NOT NULL AND ", key_cols[i]);
		snprintf(on + lo, sizeof on - lo, " AND d.\"%s\" = a.\"%s\"", key_cols[i],
			 key_cols[i]);
	}
	if (snprintf(sql, sizeof sql,
		     "CREATE TEMP TABLE IF NOT EXISTS cvc_nsys_dup(rid INTEGER PRIMARY KEY);"
		     "DELETE FROM temp.cvc_nsys_dup;"
		     "DROP TABLE IF EXISTS temp.cvc_nsys_dupkey;"
		     "CREATE TEMP TABLE cvc_nsys_dupkey AS SELECT %s, min(rowid) AS keep FROM \"%s\" "
		     "WHERE %sNOT (start = 0 AND \"end\" = 0) GROUP BY %s HAVING count(*) > 1;",
		     part, table, nonnull, part) >= (int)sizeof sql)
		return -1;
	if (sqlite3_exec(src, sql, NULL, NULL, NULL) != SQLITE_OK)
		return -1;
	if (imp_sq_int(src, "SELECT count(*) FROM temp.cvc_nsys_dupkey") == 0)
		return 0;
	/* the table scanned once (CROSS JOIN keeps it the outer loop), each
	 * row looked up among the repeated keys by their index */
	if (snprintf(sql, sizeof sql,
		     "CREATE INDEX temp.cvc_nsys_dupkey_k ON cvc_nsys_dupkey(%s);"
		     "INSERT INTO temp.cvc_nsys_dup SELECT a.rowid FROM \"%s\" a CROSS JOIN "
		     "temp.cvc_nsys_dupkey d ON a.rowid <> d.keep%s",
		     part, table, on) >= (int)sizeof sql)
		return -1;
	if (sqlite3_exec(src, sql, NULL, NULL, NULL) != SQLITE_OK)
		return -1;
	*n = imp_sq_int(src, "SELECT count(*) FROM temp.cvc_nsys_dup");
	return 0;
}

/* "2 kernel rows and 1 memset row repeat ...": dups[0..3) kernel, memcpy
 * and memset rows dropped, into out. */
static void dup_note(const int64_t *dups, char *out, size_t len)
{
	static const char *const what[] = {"kernel", "memcpy", "memset"};
	int64_t total = 0;
	int parts = 0, done = 0;

	out[0] = '\0';
	for (int i = 0; i < 3; i++) {
		total += dups[i];
		parts += dups[i] > 0;
	}
	for (int i = 0; i < 3; i++) {
		size_t o = strlen(out);

		if (dups[i] <= 0)
			continue;
		done++;
		snprintf(out + o, len - o, "%s%lld %s row%s",
			 done == 1 ? "" : done == parts ? " and " : ", ", (long long)dups[i], what[i],
			 dups[i] == 1 ? "" : "s");
	}
	snprintf(out + strlen(out), len - strlen(out),
		 " repeat%s an earlier row's start, end, device, stream and correlation id (one "
		 "activity written twice): the first imported, %lld dropped",
		 total == 1 ? "s" : "", (long long)total);
}

/*
 * CUDA graphs traced whole (nsys's default --cuda-graph-trace=graph): one
 * row per graph launch in CUPTI_ACTIVITY_KIND_GRAPH_TRACE, none of its
 * kernels in the kernel table, so their time would read as idle and a
 * collective inside them as nothing; said, not guessed at.
 */
cvc_status imp_nsys_notes(cvc_db *db, int64_t run_id, const char *path, sqlite3 *src,
			  const int64_t *dups)
{
	int hg = cvc_db_sqlite_has_table(src, "CUPTI_ACTIVITY_KIND_GRAPH_TRACE");
	int64_t ng = hg > 0 ? imp_sq_int(src, "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_GRAPH_TRACE")
			    : 0;
	char why[400];
	cvc_status st;

	if (hg < 0)
		return cvc_db_fail(db, CVC_ERR_FORMAT, "'%s': corrupt or unreadable SQLite file: %s",
				   path, sqlite3_errmsg(src));
	snprintf(why, sizeof why, "%lld CUDA graph launch%s traced whole: their kernels are not in "
		 "the export (profile with --cuda-graph-trace=node)", (long long)ng,
		 ng == 1 ? "" : "es");
	if (ng > 0 && (st = imp_meta_per_file(db, run_id, "nsys.incomplete", path, why)))
		return st;
	if (dups[0] + dups[1] + dups[2] == 0)
		return CVC_OK;
	dup_note(dups, why, sizeof why);
	return imp_meta_per_file(db, run_id, "nsys.duplicates", path, why);
}

int imp_nsys_bad_gpid(sqlite3 *src, const char *table, int64_t *rowid, char *type, size_t len)
{
	char sql[256];
	sqlite3_stmt *st = NULL;
	int rc;

	snprintf(sql, sizeof sql,
		 "SELECT rowid, typeof(globalPid) FROM \"%s\" WHERE typeof(globalPid) "
		 "NOT IN ('integer', 'null') LIMIT 1", table);
	if (sqlite3_prepare_v2(src, sql, -1, &st, NULL) != SQLITE_OK)
		return -1;
	if ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		*rowid = sqlite3_column_int64(st, 0);
		snprintf(type, len, "%s", (const char *)sqlite3_column_text(st, 1));
	}
	sqlite3_finalize(st);
	return rc == SQLITE_ROW ? 1 : rc == SQLITE_DONE ? 0 : -1;
}
