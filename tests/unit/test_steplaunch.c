/*
 * test_steplaunch.c - `cvc analyze --by step` places GPU work by the host
 * time of its launch (activities.launch_ns, schema 4): the three shared
 * Kineto traces where the GPU runs behind the CPU, a synthetic kernel
 * launched in one step and run in the next, and a database made before
 * launch times existed.  Expected figures were computed from the raw traces
 * by an independent script (each activity to the ProfilerStep holding its
 * cuda_runtime call, as HTA's add_iteration does).
 */
#include <stdio.h>
#include <string.h>

#include <criterion/criterion.h>
#include <sqlite3.h>

#include "cvc/cvc_analyze.h"
#include "cvc/cvc_db.h"
#include "testutil.h"

static void by_step(cvc_db *db, cvc_breakdown **rows, size_t *n)
{
	cvc_analyze_opts o = {.by = CVC_BY_STEP};

	cr_assert_eq(cvc_analyze_run(db, &o, rows, n), CVC_OK, "%s", cvc_db_errmsg(db));
}

/* Two runs before: 1274 1610 2298 1008 1393 2264 kernels, clipped to the
 * CPU windows; the 546 kernels queued before the host trace began (no
 * cuda_runtime call in the file) belong to no step. */
Test(steplaunch, v100_steady_kernels_per_step)
{
	cvc_db *db = tu_import(tu_shared("traces/hta-trace-diff-v100-w2/test.json.gz"), "v.db");
	cvc_breakdown *rows = NULL;
	size_t n = 0;

	by_step(db, &rows, &n);
	cr_assert_eq(n, 6);
	for (size_t i = 0; i < n; i++) {
		cr_expect_eq(rows[i].step, 1009 + (int64_t)i);
		cr_expect_eq(rows[i].kernels, 1555, "step %lld: %lld kernels",
			     (long long)rows[i].step, (long long)rows[i].kernels);
		cr_expect_eq(rows[i].comm_kernels, 10);
	}
	/* step 1012, all its activities launched in it */
	cr_expect_eq(rows[3].busy_ns, 117642000);
	cr_expect_eq(rows[3].span_ns, 122696000);
	cvc_breakdown_free(rows, n);
	cvc_db_close(db);
}

/* Clipped to the step window, 119 kernels still running after it ended were
 * lost: 844 kernels, comm 98,211 us, exposed 2,174 us. */
Test(steplaunch, deepseek_step_keeps_its_kernels)
{
	cvc_db *db = tu_import(tu_shared("traces/deepseek-train-h800-ep64/train.json.gz"), "d.db");
	cvc_breakdown *rows = NULL;
	size_t n = 0;

	by_step(db, &rows, &n);
	cr_assert_eq(n, 1);
	cr_expect_eq(rows[0].step, 1);
	cr_expect_eq(rows[0].kernels, 963);
	cr_expect_eq(rows[0].comm_kernels, 32);
	cr_expect_eq(rows[0].comm_ns, 113030000);
	cr_expect_eq(rows[0].exposed_ns, 4162000);
	cr_expect_eq(rows[0].hidden_ns, 108868000);
	cr_expect_eq(rows[0].busy_ns, 128515000);
	cr_expect_eq(rows[0].span_ns, 129012000);
	cvc_breakdown_free(rows, n);
	cvc_db_close(db);
}

/* The GPU runs ~160 ms behind the CPU and the next step's prefetch copies
 * start during the previous one: each step its own activities, once. */
Test(steplaunch, a100_gpu_behind_cpu)
{
	cvc_db *db = tu_import(tu_shared("traces/hta-a100-80g-w16-rank0/rank0.json.gz"), "a.db");
	cvc_breakdown *rows = NULL;
	size_t n = 0;
	static const int64_t busy_us[5] = {75381, 79470, 74948, 80960, 70176};

	by_step(db, &rows, &n);
	cr_assert_eq(n, 5);
	for (size_t i = 0; i < n; i++) {
		cr_expect_eq(rows[i].step, 550 + (int64_t)i);
		cr_expect_eq(rows[i].kernels, 1075);
		cr_expect_eq(rows[i].busy_ns, busy_us[i] * 1000, "step %lld busy %lld ns",
			     (long long)rows[i].step, (long long)rows[i].busy_ns);
	}
	cvc_breakdown_free(rows, n);
	cvc_db_close(db);
}

static int64_t add_act(cvc_db *db, int64_t run, const char *name, int64_t s, int64_t e)
{
	cvc_activity a;
	int64_t id = 0;

	memset(&a, 0, sizeof a);
	a.run_id = run;
	a.kind = CVC_ACT_KERNEL;
	a.stream = a.context = a.correlation = a.external_id = -1;
	a.start_ns = s;
	a.end_ns = e;
	cr_assert_eq(cvc_db_intern(db, name, strlen(name), &a.name_id), CVC_OK);
	cr_assert_eq(cvc_db_activity_add(db, &a, &id), CVC_OK, "%s", cvc_db_errmsg(db));
	return id;
}

static void add_step(cvc_db *db, int64_t run, const char *name, int64_t s, int64_t e)
{
	cvc_range r = {.run_id = run, .device = -1, .kind = CVC_RANGE_CPU, .tid = -1};

	r.start_ns = s;
	r.end_ns = e;
	cr_assert_eq(cvc_db_intern(db, name, strlen(name), &r.name_id), CVC_OK);
	cr_assert_eq(cvc_db_range_add(db, &r), CVC_OK, "%s", cvc_db_errmsg(db));
}

/*
 * Steps 1 = [0, 1000) and 2 = [1000, 2000) on the CPU.  Kernel a, launched
 * at 100, runs [300, 600); kernel b, launched at 900 (step 1), runs
 * [1200, 1500) in step 2's window; kernel c, launched at 1100, runs
 * [1500, 1700).  The launch times are written through SQL, as an importer
 * leaves them.
 */
static const char *build_late_kernel(void)
{
	const char *path = tu_path(tu_tmpdir(), "late.db");
	cvc_run_info ri = {.name = "late", .format = "synthetic", .world_size = 1};
	cvc_db *db = NULL;
	int64_t run = 0, a, b, c;
	char sql[256];

	cr_assert_eq(cvc_db_open(path, CVC_DB_CREATE, &db), CVC_OK);
	cr_assert_eq(cvc_db_begin(db), CVC_OK);
	cr_assert_eq(cvc_db_run_new(db, &ri, &run), CVC_OK);
	a = add_act(db, run, "gemm_a", 300, 600);
	b = add_act(db, run, "gemm_b", 1200, 1500);
	c = add_act(db, run, "gemm_c", 1500, 1700);
	add_step(db, run, "ProfilerStep#1", 0, 1000);
	add_step(db, run, "ProfilerStep#2", 1000, 2000);
	snprintf(sql, sizeof sql,
		 "UPDATE activities SET launch_ns=CASE id WHEN %lld THEN 100 WHEN %lld THEN 900 "
		 "WHEN %lld THEN 1100 END",
		 (long long)a, (long long)b, (long long)c);
	cr_assert_eq(cvc_db_exec(db, sql), CVC_OK, "%s", cvc_db_errmsg(db));
	cr_assert_eq(cvc_db_commit(db), CVC_OK);
	cvc_db_close(db);
	return path;
}

Test(steplaunch, kernel_launched_in_step1_counts_in_step1)
{
	const char *path = build_late_kernel();
	cvc_db *db = NULL;
	cvc_breakdown *rows = NULL;
	size_t n = 0;

	cr_assert_eq(cvc_db_open(path, 0, &db), CVC_OK);
	by_step(db, &rows, &n);
	cr_assert_eq(n, 2);
	cr_expect_eq(rows[0].step, 1);
	cr_expect_eq(rows[0].kernels, 2, "a and b were launched in step 1");
	cr_expect_eq(rows[0].compute_ns, 600);
	cr_expect_eq(rows[0].span_ns, 1200, "from a's start to b's end");
	cr_expect_eq(rows[0].idle_ns, 600);
	cr_expect_eq(rows[0].step_rule, CVC_STEP_BY_LAUNCH);
	cr_expect_eq(rows[1].step, 2);
	cr_expect_eq(rows[1].kernels, 1);
	cr_expect_eq(rows[1].compute_ns, 200);
	cr_expect_eq(rows[1].span_ns, 200);
	cvc_breakdown_free(rows, n);
	cvc_db_close(db);
}

/* The same database as a version 3 cvc wrote it (no launch_ns column):
 * read-only it analyzes as before, clipped to the windows; opened for
 * writing it is upgraded to 4 with NULL launch times and the same figures. */
Test(steplaunch, older_database_still_analyzes)
{
	const char *path = build_late_kernel();
	cvc_db *db = NULL;
	cvc_breakdown *rows = NULL;
	size_t n = 0;
	sqlite3 *sq = NULL;

	cr_assert_eq(sqlite3_open(path, &sq), SQLITE_OK);
	cr_assert_eq(sqlite3_exec(sq, "ALTER TABLE activities DROP COLUMN launch_ns;"
				      "PRAGMA user_version=3;", NULL, NULL, NULL),
		     SQLITE_OK, "%s", sqlite3_errmsg(sq));
	sqlite3_close(sq);
	for (int pass = 0; pass < 2; pass++) {
		cr_assert_eq(cvc_db_open(path, pass ? 0 : CVC_DB_READONLY, &db), CVC_OK, "%s",
			     cvc_db_errmsg(db));
		cr_expect_eq(tu_db_int(db, "PRAGMA user_version"), pass ? 4 : 3);
		by_step(db, &rows, &n);
		cr_assert_eq(n, 2);
		/* clipped: a and b's [1200, 1500) is step 2's */
		cr_expect_eq(rows[0].kernels, 1);
		cr_expect_eq(rows[0].compute_ns, 300);
		cr_expect_eq(rows[0].step_rule, CVC_STEP_BY_HOST_CLIP);
		cr_expect_eq(rows[1].kernels, 2);
		cr_expect_eq(rows[1].compute_ns, 500);
		if (pass)
			cr_expect_eq(tu_db_int(db, "SELECT count(launch_ns) FROM activities"), 0);
		cvc_breakdown_free(rows, n);
		cvc_db_close(db);
	}
}
