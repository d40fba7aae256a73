/*
 * nsys_session.c - what an Nsight Systems export says of its session, for
 * the importer (nsys.c): when it started, on which host, and the rank and
 * world size its launcher left in the environment; and whether a rank is
 * still free in a run.  With the two one-row query helpers the importers'
 * identification (group.c) shares.  nsys counts an export's times from the session's
 * start (TARGET_INFO_SESSION_START_TIME.utcEpochNs), so one export per
 * rank (srun nsys profile -o r%q{SLURM_PROCID}) lines up once each rank's
 * clock offset is its session's start.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "cvc/cvc_db.h"
#include "import_int.h"

int64_t imp_sq_int(sqlite3 *sq, const char *sql)
{
	sqlite3_stmt *st = NULL;
	int64_t v = 0;

	if (sqlite3_prepare_v2(sq, sql, -1, &st, NULL) == SQLITE_OK &&
	    sqlite3_step(st) == SQLITE_ROW)
		v = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return v;
}

void imp_sq_text(sqlite3 *sq, const char *sql, char *out, size_t len)
{
	sqlite3_stmt *st = NULL;

	out[0] = '\0';
	if (sqlite3_prepare_v2(sq, sql, -1, &st, NULL) == SQLITE_OK &&
	    sqlite3_step(st) == SQLITE_ROW && sqlite3_column_text(st, 0))
		snprintf(out, len, "%s", (const char *)sqlite3_column_text(st, 0));
	sqlite3_finalize(st);
}

void imp_nsys_session(sqlite3 *src, int have_kernels, struct imp_nsys_session *out)
{
	int64_t start = imp_sq_int(src, "SELECT utcEpochNs FROM TARGET_INFO_SESSION_START_TIME");
	/* any kernel's start says which clock the times are on */
	int64_t first = have_kernels ? imp_sq_int(src, "SELECT start FROM "
						       "CUPTI_ACTIVITY_KIND_KERNEL LIMIT 1") : 0;
	char *env = NULL;
	sqlite3_stmt *st = NULL;

	memset(out, 0, sizeof *out);
	/* an export whose times are already since the epoch (past 1e17 ns, an
	 * export normalised to wall time) needs no offset */
	if (start > 0 && start < CVC_TIME_LIMIT_NS && first >= 0 && first < (int64_t)1e17)
		out->clock_offset = start;
	imp_sq_text(src, "SELECT value FROM TARGET_INFO_SYSTEM_ENV WHERE name = 'Hostname'",
		    out->host, sizeof out->host);
	out->env.rank = out->env.world = -1;
	if (sqlite3_prepare_v2(src, "SELECT value FROM TARGET_INFO_SYSTEM_ENV WHERE name = "
			       "'DeviceEnvironment'", -1, &st, NULL) == SQLITE_OK &&
	    sqlite3_step(st) == SQLITE_ROW && sqlite3_column_text(st, 0) &&
	    (env = strdup((const char *)sqlite3_column_text(st, 0))))
		imp_launcher_env(env, &out->env);
	free(env);
	sqlite3_finalize(st);
}

int imp_rank_free(cvc_db *db, int64_t run_id, int rank)
{
	sqlite3_stmt *st = NULL;
	int free_ = 0;

	if (sqlite3_prepare_v2(cvc_db_sqlite(db), "SELECT 1 FROM ranks WHERE run_id=? AND rank=?",
			       -1, &st, NULL) == SQLITE_OK) {
		sqlite3_bind_int64(st, 1, run_id);
		sqlite3_bind_int(st, 2, rank);
		free_ = sqlite3_step(st) == SQLITE_DONE;
	}
	sqlite3_finalize(st);
	return free_;
}

/* Whether table t has the columns a launch record is read by. */
static int launch_cols(sqlite3 *src, const char *t)
{
	char sql[256];

	snprintf(sql, sizeof sql,
		 "SELECT count(*) FROM pragma_table_info('%s') "
		 "WHERE name IN ('start', 'globalTid', 'correlationId')", t);
	return imp_sq_int(src, sql) == 3;
}

/*
 * A temporary table because the export is opened read-only and its call
 * tables have no index on correlationId: joined by (proc, corr) through
 * this table's key, the activities read stays one pass.  Correlation ids
 * are unique within a process; a runtime call and the driver call under
 * it may share one, and the earlier is the launch.
 */
int imp_nsys_launch_table(sqlite3 *src, int *have)
{
	static const char *const tabs[] = {"CUPTI_ACTIVITY_KIND_RUNTIME",
					   "CUPTI_ACTIVITY_KIND_DRIVER"};
	char sql[1024];
	int n = 0, off;

	*have = 0;
	off = snprintf(sql, sizeof sql,
		       "CREATE TEMP TABLE IF NOT EXISTS cvc_nsys_launch(proc INTEGER, "
		       "corr INTEGER, ts INTEGER NOT NULL, PRIMARY KEY(proc, corr)) WITHOUT ROWID;"
		       "DELETE FROM temp.cvc_nsys_launch;"
		       "INSERT INTO temp.cvc_nsys_launch SELECT p, c, min(s) FROM (");
	for (size_t i = 0; i < sizeof tabs / sizeof tabs[0]; i++) {
		int h = 0;

		if (cvc_db_sqlite_has_table(src, tabs[i]) != 1 || !launch_cols(src, tabs[i]))
			continue;
		h = snprintf(sql + off, sizeof sql - (size_t)off,
			     "%sSELECT globalTid & ~16777215 AS p, correlationId AS c, start AS s "
			     "FROM \"%s\" WHERE correlationId IS NOT NULL AND globalTid IS NOT NULL "
			     "AND typeof(start)='integer'",
			     n ? " UNION ALL " : "", tabs[i]);
		if (h < 0 || (size_t)h >= sizeof sql - (size_t)off)
			return -1;
		off += h;
		n++;
	}
	if (n == 0)
		return 0;
	if ((size_t)snprintf(sql + off, sizeof sql - (size_t)off, ") GROUP BY p, c") >=
	    sizeof sql - (size_t)off)
		return -1;
	if (sqlite3_exec(src, sql, NULL, NULL, NULL) != SQLITE_OK)
		return -1;
	*have = imp_sq_int(src, "SELECT EXISTS (SELECT 1 FROM temp.cvc_nsys_launch)") != 0;
	return 0;
}
