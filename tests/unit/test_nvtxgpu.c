/*
 * test_nvtxgpu.c - NVTX ranges projected onto the GPU timeline when a spool
 * is materialized (profiler/materialize_project.c), and `cvc analyze --by
 * step` counting each step's kernels where they ran.
 *
 * The shape is the one an H200 showed (docs/GPU-VALIDATION.md): a step's
 * range closes on the CPU long before its kernels run, so cut by the CPU
 * window a step held a handful of its kernels.  Here two steps on thread 7
 * launch two kernels each (device 0) and a copy (device 1); the GPU runs
 * everything after both ranges have closed.  A kernel launched on another
 * thread, and one launched between the steps, belong to no step; a nested
 * range gets its own projection.
 */
#include <sqlite3.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "cvc/cvc_analyze.h"
#include "cvc/cvc_db.h"
#include "cvc/cvc_profile.h"
#include "testutil.h"

#define B 1000000000LL /* a realistic clock base, ns */

static void put_str(cvc_spool *sp, uint32_t id, const char *s)
{
	cr_assert_eq(cvc_spool_put_str(sp, id, s, strlen(s)), CVC_OK);
}

static void put_mark(cvc_spool *sp, uint32_t flags, uint32_t id, int64_t ts, uint32_t name,
		     int64_t tid)
{
	struct cvc_spool_marker k = {flags, id, B + ts, name, 0, tid};

	cr_assert_eq(cvc_spool_put(sp, CVC_SPOOL_MARKER, &k, sizeof k), CVC_OK);
}

static void put_launch(cvc_spool *sp, uint32_t corr, int64_t ts, int64_t tid)
{
	struct cvc_spool_api a = {2, 0, B + ts, B + ts + 5, tid, corr, CVC_API_LAUNCH_ONLY};

	cr_assert_eq(cvc_spool_put(sp, CVC_SPOOL_API, &a, sizeof a), CVC_OK);
}

static void put_act(cvc_spool *sp, uint8_t kind, uint32_t dev, uint32_t corr, int64_t s,
		    int64_t e, uint32_t name)
{
	struct cvc_spool_act a = {0};

	a.kind = kind, a.device = dev, a.correlation = corr, a.name_sid = name;
	a.start_ns = B + s, a.end_ns = B + e, a.stream = 7;
	cr_assert_eq(cvc_spool_put(sp, CVC_SPOOL_ACT, &a, sizeof a), CVC_OK);
}

/* Materializes the spool described above; returns the database path. */
static const char *spool_of_two_steps(void)
{
	static char db[4200];
	char spool[4200], err[1024] = "";
	cvc_materialize_stats ms;
	cvc_spool *sp = tu_spool_begin(spool, db);
	cvc_status st;

	put_str(sp, 4, "step0"), put_str(sp, 5, "step1"), put_str(sp, 6, "fwd");
	put_str(sp, 7, "gemm_kernel"), put_str(sp, 8, "Memcpy HtoD (Pinned -> Device)");
	/* CPU: step0 [0, 100) with fwd [10, 40) inside, step1 [200, 300), thread 7 */
	put_mark(sp, CVC_MARK_START, 1, 0, 4, 7);
	put_mark(sp, CVC_MARK_START, 2, 10, 6, 7);
	put_launch(sp, 11, 20, 7);
	put_mark(sp, CVC_MARK_END, 2, 40, 0, 7);
	put_launch(sp, 12, 50, 7);
	put_launch(sp, 13, 60, 7);
	put_mark(sp, CVC_MARK_END, 1, 100, 0, 7);
	put_launch(sp, 20, 150, 7);  /* between the steps */
	put_launch(sp, 30, 210, 9);  /* step1's time, another thread */
	put_mark(sp, CVC_MARK_START, 3, 200, 5, 7);
	put_launch(sp, 21, 220, 7);
	put_launch(sp, 22, 230, 7);
	put_mark(sp, CVC_MARK_END, 3, 300, 0, 7);
	/* GPU: everything after both ranges closed */
	put_act(sp, CVC_ACT_KERNEL, 0, 11, 1000, 2000, 7);
	put_act(sp, CVC_ACT_KERNEL, 0, 12, 2000, 3000, 7);
	put_act(sp, CVC_ACT_MEMCPY, 1, 13, 2500, 2600, 8);
	put_act(sp, CVC_ACT_KERNEL, 0, 20, 3000, 3500, 7);
	put_act(sp, CVC_ACT_KERNEL, 0, 30, 3500, 3600, 7);
	put_act(sp, CVC_ACT_KERNEL, 0, 21, 4000, 5000, 7);
	put_act(sp, CVC_ACT_KERNEL, 0, 22, 5000, 6000, 7);
	cr_assert_eq(cvc_spool_close(sp), CVC_OK);
	st = cvc_profile_materialize(spool, db, &ms, err, sizeof err);
	cr_assert_eq(st, CVC_OK, "status %d: %s", st, err);
	return db;
}

Test(nvtxgpu, ranges_follow_their_launches_onto_the_gpu)
{
	const char *db = spool_of_two_steps();
	sqlite3 *sq = NULL;
	sqlite3_stmt *q = NULL;
	char got[1024] = "";

	cr_assert_eq(sqlite3_open_v2(db, &sq, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
	cr_assert_eq(sqlite3_prepare_v2(sq, "SELECT group_concat(x, ';') FROM (SELECT s.value||'|'||"
					"device||'|'||(start_ns-1000000000)||'|'||(end_ns-1000000000)||'|'||tid"
					" AS x FROM ranges r JOIN strings s ON s.id=r.name_id WHERE kind=2 "
					"ORDER BY device, start_ns, end_ns DESC)", -1, &q, NULL), SQLITE_OK);
	cr_assert_eq(sqlite3_step(q), SQLITE_ROW);
	snprintf(got, sizeof got, "%s", (const char *)sqlite3_column_text(q, 0));
	/* step0's launches ran 1000..3000 on device 0 and 2500..2600 on device 1;
	 * fwd's one launch 1000..2000; step1's 4000..6000.  The API rows asked
	 * for no row: none stored (kind 1). */
	cr_expect_str_eq(got, "step0|0|1000|3000|7;fwd|0|1000|2000|7;step1|0|4000|6000|7;"
			      "step0|1|2500|2600|7");
	sqlite3_finalize(q);
	cr_assert_eq(sqlite3_prepare_v2(sq, "SELECT (SELECT count(*) FROM ranges WHERE kind=1)||'|'||"
					"(SELECT value FROM run_meta WHERE key='nvtx_ranges_on_gpu')",
					-1, &q, NULL), SQLITE_OK);
	cr_assert_eq(sqlite3_step(q), SQLITE_ROW);
	cr_expect_str_eq((const char *)sqlite3_column_text(q, 0), "0|4");
	sqlite3_finalize(q);
	sqlite3_close(sq);
}

/* `cvc analyze --by step`: each step holds the kernels it launched. */
Test(nvtxgpu, steps_count_the_kernels_they_launched)
{
	const char *path = spool_of_two_steps();
	cvc_analyze_opts o = {NULL, CVC_BY_STEP, "^step(\\d+)$", 0};
	cvc_breakdown *rows = NULL;
	size_t n = 0;
	cvc_db *db = NULL;

	cr_assert_eq(cvc_db_open(path, 0, &db), CVC_OK);
	cr_assert_eq(cvc_analyze_run(db, &o, &rows, &n), CVC_OK, "%s", cvc_db_errmsg(db));
	/* device 0: step0 (two kernels, 2 us busy), step1 (two, 2 us); device 1: step0's copy */
	cr_assert_eq(n, 3);
	cr_expect_eq(rows[0].device, 0);
	cr_expect_eq(rows[0].step, 0);
	cr_expect_eq(rows[0].kernels, 2);
	cr_expect_eq(rows[0].busy_ns, 2000);
	cr_expect_eq(rows[1].device, 0);
	cr_expect_eq(rows[1].step, 1);
	cr_expect_eq(rows[1].kernels, 2);
	cr_expect_eq(rows[1].busy_ns, 2000);
	cr_expect_eq(rows[2].device, 1);
	cr_expect_eq(rows[2].step, 0);
	cvc_breakdown_free(rows, n);
	cvc_db_close(db);
}
