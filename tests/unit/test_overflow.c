/*
 * test_overflow.c - times inside the accepted window never overflow
 * (issue 36 item 7).  One kernel over [-2^62, 2^62] made busy_us print
 * -9223372036854775.808 and was a signed overflow in intervals.c and
 * analyze.c; kernels over [0, 2^62] overflowed `analyze --classes` and
 * `report`.  The window is now +-CVC_TIME_LIMIT_NS (2^62 - 1), the
 * longest spans it allows are measured exactly, and sums that can pass
 * 2^63 are summed in 128 bits and refused when they do.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "cvc/cvc_analyze.h"
#include "cvc/cvc_classify.h"
#include "cvc/cvc_db.h"
#include "cvc/cvc_profile.h"
#include "testutil.h"

#define L CVC_TIME_LIMIT_NS

static int64_t add_kernel(cvc_db *db, int64_t run, const char *name, int64_t s, int64_t e,
			  cvc_status want)
{
	cvc_activity a;
	int64_t id = 0, nid = 0;
	cvc_status st;

	cr_assert_eq(cvc_db_intern(db, name, strlen(name), &nid), CVC_OK);
	memset(&a, 0, sizeof a);
	a.run_id = run;
	a.kind = CVC_ACT_KERNEL;
	a.name_id = nid;
	a.start_ns = s;
	a.end_ns = e;
	a.stream = 7;
	a.correlation = a.external_id = -1;
	st = cvc_db_activity_add(db, &a, &id);
	cr_assert_eq(st, want, "[%lld, %lld]: status %d (%s)", (long long)s, (long long)e, st,
		     cvc_db_errmsg(db));
	return id;
}

/* A database at dir/name of one run holding kernels [s[i], e[i]) named
 * names[i], classified by the shipped rules.  Returns its path (static). */
static const char *make_db(const char *name, const char *const *names, const int64_t *s,
			   const int64_t *e, int n)
{
	static char path[4200];
	cvc_run_info ri = {.name = "edge"};
	cvc_db *db = NULL;
	int64_t run;

	snprintf(path, sizeof path, "%s", tu_path(tu_tmpdir(), name));
	cr_assert_eq(cvc_db_open(path, CVC_DB_CREATE, &db), CVC_OK);
	cr_assert_eq(cvc_db_begin(db), CVC_OK);
	cr_assert_eq(cvc_db_run_new(db, &ri, &run), CVC_OK);
	for (int i = 0; i < n; i++)
		add_kernel(db, run, names[i], s[i], e[i], CVC_OK);
	cr_assert_eq(cvc_classify_db(db, NULL, 0), CVC_OK, "%s", cvc_db_errmsg(db));
	cr_assert_eq(cvc_db_commit(db), CVC_OK);
	cvc_db_close(db);
	return path;
}

/* The union functions on any int64 times: no overflow, saturated totals. */
Test(overflow, interval_functions_take_any_int64_times)
{
	cvc_ival iv[] = {{INT64_MIN, INT64_MAX}, {0, 1}};
	cvc_ival a[] = {{INT64_MIN, INT64_MAX}}, b[] = {{INT64_MIN, INT64_MAX}};
	cvc_merger m;

	cr_expect_eq(cvc_ivals_union_ns(iv, 2), INT64_MAX);
	cr_expect_eq(cvc_ivals_intersect_ns(a, 1, b, 1), INT64_MAX);
	cvc_merger_init(&m);
	cr_assert_eq(cvc_merger_add(&m, INT64_MIN, 0), CVC_OK);
	cr_assert_eq(cvc_merger_add(&m, 1, INT64_MAX), CVC_OK);
	cr_expect_eq(cvc_merger_total(&m), INT64_MAX);
	/* the widest the window allows is exact */
	cvc_merger_init(&m);
	cr_assert_eq(cvc_merger_add(&m, -L, 0), CVC_OK);
	cr_assert_eq(cvc_merger_add(&m, 1, L), CVC_OK);
	cr_expect_eq(cvc_merger_total(&m), 2 * L - 1);
}

/* [-2^62, 2^62] was accepted and later overflowed every sum: it is outside
 * the window now, and so is a clock offset that would carry a time out. */
Test(overflow, the_window_is_what_the_sums_hold)
{
	cvc_run_info ri = {.name = "w"};
	cvc_rank_info rk = {.rank = 0};
	cvc_db *db = NULL;
	int64_t run;

	cr_expect_eq(L, ((int64_t)1 << 62) - 1);
	cr_assert_eq(cvc_db_open(tu_path(tu_tmpdir(), "w.db"), CVC_DB_CREATE, &db), CVC_OK);
	cr_assert_eq(cvc_db_begin(db), CVC_OK);
	cr_assert_eq(cvc_db_run_new(db, &ri, &run), CVC_OK);
	add_kernel(db, run, "k", -((int64_t)1 << 62), (int64_t)1 << 62, CVC_ERR_FORMAT);
	add_kernel(db, run, "k", 0, (int64_t)1 << 62, CVC_ERR_FORMAT);
	add_kernel(db, run, "k", -L, L, CVC_OK);
	rk.clock_offset_ns = (int64_t)1 << 62;
	cr_expect_eq(cvc_db_rank_put(db, run, &rk), CVC_ERR_FORMAT);
	rk.clock_offset_ns = -L;
	cr_expect_eq(cvc_db_rank_put(db, run, &rk), CVC_OK, "%s", cvc_db_errmsg(db));
	cvc_db_rollback(db);
	cvc_db_close(db);
}

/*
 * A compute kernel and a communication kernel, each as long as the window
 * allows, on one device: |comm| + |compute| is 2^64 - 4, which wrapped
 * before the hidden time was taken from it.  Every figure is exact now,
 * through the library and the tool (analyze, report, export).
 */
Test(overflow, the_longest_spans_are_measured_exactly)
{
	const char *const names[] = {"volta_sgemm_128x64_nn", "ncclKernel_AllReduce_RING_LL_Sum_float"};
	const int64_t s[] = {-L, -L}, e[] = {L, L};
	const char *path = make_db("edge.db", names, s, e, 2);
	cvc_analyze_opts o = {.classes = 1};
	cvc_breakdown *rows = NULL;
	size_t n = 0;
	cvc_db *db = NULL;
	char args[9000], *out = NULL, *err = NULL;

	cr_assert_eq(cvc_db_open(path, CVC_DB_READONLY, &db), CVC_OK);
	cr_assert_eq(cvc_analyze_run(db, &o, &rows, &n), CVC_OK, "%s", cvc_db_errmsg(db));
	cr_assert_eq(n, 1);
	cr_expect_eq(rows[0].busy_ns, 2 * L);
	cr_expect_eq(rows[0].compute_ns, 2 * L);
	cr_expect_eq(rows[0].comm_ns, 2 * L);
	cr_expect_eq(rows[0].hidden_ns, 2 * L, "hidden %lld", (long long)rows[0].hidden_ns);
	cr_expect_eq(rows[0].exposed_ns, 0);
	cr_expect_eq(rows[0].idle_ns, 0);
	cr_expect_eq(rows[0].span_ns, 2 * L);
	for (size_t i = 0; i < rows[0].nclasses; i++)
		cr_expect_eq(rows[0].classes[i].sum_ns, 2 * L, "%s", rows[0].classes[i].name);
	cvc_breakdown_free(rows, n);
	cvc_db_close(db);
	snprintf(args, sizeof args, "analyze --db '%s' --format csv", path);
	cr_assert_eq(tu_cvc(args, &out, &err), 0, "%s", err);
	cr_expect(strstr(out, "9223372036854775.806"), "%s", out);
	cr_expect_null(strstr(out, "-9223372036854775"), "%s", out);
	free(out);
	free(err);
	snprintf(args, sizeof args, "report --db '%s' -o '%s.html'", path, path);
	cr_expect_eq(tu_cvc(args, NULL, &err), 0, "%s", err);
	free(err);
	snprintf(args, sizeof args, "export --db '%s' --perfetto -", path);
	cr_expect_eq(tu_cvc(args, &out, &err), 0, "%s", err);
	cr_expect(out && strstr(out, "\"dur\":9223372036854775.806"), "%s", out);
	free(out);
	free(err);
}

/*
 * Three kernels of one class over [0, 2^62 - 1]: each fits, their plain
 * sum does not.  It was wrapped into a negative figure; now the class
 * breakdown says why it cannot be given, and the union figures stay exact.
 */
Test(overflow, sums_past_2_63_are_refused_not_wrapped)
{
	const char *const names[] = {"volta_sgemm_a", "volta_sgemm_a", "volta_sgemm_a"};
	const int64_t s[] = {0, 0, 0}, e[] = {L, L, L};
	const char *path = make_db("sum.db", names, s, e, 3);
	cvc_analyze_opts o = {.classes = 1}, plain = {0};
	cvc_breakdown *rows = NULL;
	size_t n = 0;
	cvc_db *db = NULL;
	char args[9000], *err = NULL;
	const char *const cmds[] = {"analyze --db '%s' --classes", "classify --db '%s'",
				    "classify --db '%s' --unknown", "report --db '%s' -o '%s.html'"};

	cr_assert_eq(cvc_db_open(path, CVC_DB_READONLY, &db), CVC_OK);
	cr_assert_eq(cvc_analyze_run(db, &plain, &rows, &n), CVC_OK, "%s", cvc_db_errmsg(db));
	cr_assert_eq(n, 1);
	cr_expect_eq(rows[0].busy_ns, L);
	cvc_breakdown_free(rows, n);
	cr_expect_eq(cvc_analyze_run(db, &o, &rows, &n), CVC_ERR_FORMAT);
	cr_expect(strstr(cvc_db_errmsg(db), "2^63 ns or more"), "%s", cvc_db_errmsg(db));
	cvc_db_close(db);
	for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++) {
		snprintf(args, sizeof args, cmds[i], path, path);
		cr_expect_eq(tu_cvc(args, NULL, &err), 2, "%s: %s", args, err);
		cr_expect(err && strstr(err, "2^63 ns or more"), "%s: %s", args, err);
		free(err);
		err = NULL;
	}
}

/*
 * A spool whose clock pair lies 2^64 - 1 ns apart: the rank's clock offset
 * was a signed overflow while the spool became a database; it is a format
 * error naming the spool now, and an offset that fits but leaves the
 * window is refused where ranks are written.
 */
Test(overflow, spool_clock_pairs_that_do_not_fit_are_refused)
{
	static const char *const strs[] = {"clock_start_cupti_ns", "clock_start_realtime_ns"};
	struct cvc_spool_meta lo = {4, 0, INT64_MIN}, hi = {5, 0, INT64_MAX};
	cvc_materialize_stats ms;
	char spool[4200], db[4200], err[1024] = "";
	cvc_spool *sp = tu_spool_begin(spool, db);
	cvc_status st;

	for (unsigned i = 0; i < sizeof strs / sizeof strs[0]; i++)
		cr_assert_eq(cvc_spool_put_str(sp, i + 4, strs[i], strlen(strs[i])), CVC_OK);
	cr_assert_eq(cvc_spool_put(sp, CVC_SPOOL_META, &lo, sizeof lo), CVC_OK);
	cr_assert_eq(cvc_spool_put(sp, CVC_SPOOL_META, &hi, sizeof hi), CVC_OK);
	cr_assert_eq(cvc_spool_close(sp), CVC_OK);
	st = cvc_profile_materialize(spool, db, &ms, err, sizeof err);
	cr_expect_eq(st, CVC_ERR_FORMAT, "status %d: %s", st, err);
	cr_expect(strstr(err, "clock") && strstr(err, spool), "%s", err);
}
