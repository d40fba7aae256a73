/*
 * gaps.c - what a profile is missing, from the run metadata the injection
 * library writes (run_meta): figures from a profile that dropped records
 * or that CUPTI refused are low, and a tool that prints them says so.
 */
#include <stdlib.h>

#include <sqlite3.h>

#include "rep_int.h"

/*
 * NCCL calls captured into CUDA graphs, in a profile that joined their
 * replays (run_meta nccl_graph_replay_joined/_unjoined, issue 19 item 8):
 * how many replayed kernels got their sizes, and how many did not.
 */
static void graph_gap(char *gap, size_t cap, int64_t calls, int64_t joined, int64_t unjoined)
{
	if (unjoined == 0 && joined > 0)
		snprintf(gap, cap, "%lld NCCL call(s) were captured into CUDA graphs: all %lld "
			 "replayed NCCL kernel(s) carry their captured sizes",
			 (long long)calls, (long long)joined);
	else if (joined == 0 && unjoined == 0)
		snprintf(gap, cap, "%lld NCCL call(s) were captured into CUDA graphs: no replay "
			 "of them was recorded", (long long)calls);
	else
		snprintf(gap, cap, "%lld NCCL call(s) were captured into CUDA graphs: %lld "
			 "replayed NCCL kernel(s) carry their captured sizes, %lld carry none "
			 "(see docs/PROFILER.md)", (long long)calls, (long long)joined,
			 (long long)unjoined);
}

cvc_status cvc_rep_profile_gaps(cvc_db *db, const char *run, cvc_rep_table **out)
{
	/* In the order of the query's w column; 39 is
	   CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED; any other refusal
	   the library names (run_meta cupti_subscribe_error, w 5). */
	static const char *const why[] = {
		"%lld records were lost while profiling",
		"another CUPTI client held CUPTI (CUPTI error %lld): nothing was recorded",
		"CUPTI refused %lld activity kind(s): their records are missing",
		"%lld NCCL call(s) were captured into CUDA graphs: replays carry no sizes",
		"the CUDA driver found no usable GPU (CUDA error %lld): nothing was recorded"};
	char gap[256];
	static const char *const cols[] = {"run", "gap"};
	sqlite3_stmt *q = NULL;
	cvc_rep_table *t = cvc_rep_table_new("profile_gaps", "What the profiles are missing", 2,
					     cols);
	cvc_status st = CVC_OK;

	*out = NULL;
	if (!t)
		return CVC_ERR_NOMEM;
	if (sqlite3_prepare_v2(cvc_db_sqlite(db),
			       "SELECT r.name, CASE m.key WHEN 'lost_records' THEN 0 "
			       "WHEN 'cupti_subscribe_result' THEN 1 "
			       "WHEN 'nccl_graph_captured_calls' THEN 3 "
			       "WHEN 'cuda_init_result' THEN 4 "
			       "WHEN 'cupti_subscribe_error' THEN 5 ELSE 2 END AS w, "
			       "CAST(m.value AS INTEGER), "
			       "(SELECT CAST(j.value AS INTEGER) FROM run_meta j WHERE "
			       "j.run_id=m.run_id AND j.key='nccl_graph_replay_joined'), "
			       "(SELECT CAST(u.value AS INTEGER) FROM run_meta u WHERE "
			       "u.run_id=m.run_id AND u.key='nccl_graph_replay_unjoined'), m.value "
			       "FROM run_meta m "
			       "JOIN runs r ON r.id=m.run_id WHERE ((m.key='lost_records' "
			       "AND CAST(m.value AS INTEGER)>0) OR (m.key='cupti_subscribe_result' "
			       "AND CAST(m.value AS INTEGER)=39) OR (m.key='activity_enable_failures' "
			       "AND CAST(m.value AS INTEGER)>0 AND NOT EXISTS (SELECT 1 FROM run_meta s "
			       "WHERE s.run_id=m.run_id AND s.key='cupti_subscribe_result' "
			       "AND CAST(s.value AS INTEGER)<>0)) OR (m.key='nccl_graph_captured_calls' "
			       "AND CAST(m.value AS INTEGER)>0) OR (m.key='cuda_init_result' "
			       "AND CAST(m.value AS INTEGER)<>0) OR m.key='cupti_subscribe_error') "
			       "AND (?1 IS NULL OR r.name=?1) "
			       "ORDER BY r.id, w",
			       -1, &q, NULL) != SQLITE_OK)
		goto out; /* no run_meta: nothing known to be missing */
	sqlite3_bind_text(q, 1, run, -1, SQLITE_STATIC);
	while (sqlite3_step(q) == SQLITE_ROW) {
		int w = sqlite3_column_int(q, 1);
		long r = cvc_rep_table_add_row(t);

		if (w == 5)
			snprintf(gap, sizeof gap, "CUPTI refused cvc's subscription (%.160s): nothing "
				 "was recorded", (const char *)sqlite3_column_text(q, 5));
		else if (w == 3 && sqlite3_column_type(q, 3) != SQLITE_NULL)
			graph_gap(gap, sizeof gap, sqlite3_column_int64(q, 2),
				  sqlite3_column_int64(q, 3), sqlite3_column_int64(q, 4));
		else
			snprintf(gap, sizeof gap, why[w < 0 || w > 4 ? 0 : w],
				 (long long)sqlite3_column_int64(q, 2));
		if (r < 0 ||
		    cvc_rep_table_set_str(t, (size_t)r, 0, (const char *)sqlite3_column_text(q, 0)) ||
		    cvc_rep_table_set_str(t, (size_t)r, 1, gap)) {
			st = CVC_ERR_NOMEM;
			goto out;
		}
	}
out:
	sqlite3_finalize(q);
	if (!st)
		*out = t;
	else
		cvc_rep_table_free(t);
	return st;
}
