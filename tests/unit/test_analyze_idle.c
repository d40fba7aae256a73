/*
 * test_analyze_idle.c - where idle time goes (cvc_analyze_idle, `cvc
 * analyze --idle`): a synthetic device with one gap of each kind, worked
 * by hand; and every shared Kineto trace, whose parts must add up to the
 * idle time the breakdown reports for the same device.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "cvc/cvc_analyze.h"
#include "cvc/cvc_db.h"
#include "testutil.h"

static void act(cvc_db *db, int64_t run, cvc_act_kind kind, int64_t s, int64_t e, int launched,
		int64_t launch)
{
	cvc_activity a;
	int64_t name = 0;

	cr_assert_eq(cvc_db_intern(db, "k", 1, &name), CVC_OK);
	memset(&a, 0, sizeof a);
	a.run_id = run;
	a.kind = kind;
	a.name_id = name;
	a.start_ns = s;
	a.end_ns = e;
	a.stream = 7;
	a.context = 1;
	a.correlation = -1;
	a.external_id = -1;
	a.has_launch = launched;
	a.launch_ns = launch;
	cr_assert_eq(cvc_db_activity_add(db, &a, NULL), CVC_OK, "%s", cvc_db_errmsg(db));
}

/*
 * Claim: each gap goes to one part by HTA's rules, on the device.  Setup,
 * one device, times in ns, kernel wait under 20 ns:
 *   [0,100) launched at -50;  [105,200) launched at 10: a 5 ns gap whose
 *   work was queued before it began: kernel wait 5;
 *   [300,400) launched at 250, after [200,300) began: host wait 100;
 *   [500,600) launched at 150: queued, 100 ns: other 100;
 *   a copy [700,750) with no launch time: unlaunched, 100 ns: other 100;
 *   [760,800) launched at 755 and [760,780) launched at 500, both ending
 *   the gap [750,760): the second was queued, so not a host wait (a rule
 *   that looked at the first row alone would say host wait): kernel wait 10.
 * Gaps 5, one unlaunched; idle 315 = 100 + 15 + 200, the breakdown's idle.
 * With no kernel wait (threshold 0) the 15 ns go to other.
 */
Test(analyze_idle, one_gap_of_each_kind)
{
	const char *path = tu_path(tu_tmpdir(), "idle.db");
	cvc_run_info ri = {.name = "idle", .format = "synthetic", .world_size = 1};
	cvc_analyze_opts o = {0};
	cvc_idle_stat *s = NULL;
	cvc_breakdown *b = NULL;
	size_t n = 0, nb = 0;
	cvc_db *db = NULL;
	int64_t run = 0;

	cr_assert_eq(cvc_db_open(path, CVC_DB_CREATE, &db), CVC_OK);
	cr_assert_eq(cvc_db_begin(db), CVC_OK);
	cr_assert_eq(cvc_db_run_new(db, &ri, &run), CVC_OK);
	act(db, run, CVC_ACT_KERNEL, 0, 100, 1, -50);
	act(db, run, CVC_ACT_KERNEL, 105, 200, 1, 10);
	act(db, run, CVC_ACT_KERNEL, 300, 400, 1, 250);
	act(db, run, CVC_ACT_KERNEL, 500, 600, 1, 150);
	act(db, run, CVC_ACT_MEMCPY, 700, 750, 0, 0);
	act(db, run, CVC_ACT_KERNEL, 760, 800, 1, 755);
	act(db, run, CVC_ACT_KERNEL, 760, 780, 1, 500);
	cr_assert_eq(cvc_db_commit(db), CVC_OK);

	cr_assert_eq(cvc_analyze_idle(db, &o, 20, &s, &n), CVC_OK, "%s", cvc_db_errmsg(db));
	cr_assert_eq(n, 1);
	cr_expect_eq(s[0].gaps, 5);
	cr_expect_eq(s[0].unlaunched_gaps, 1);
	cr_expect_eq(s[0].idle_ns, 315);
	cr_expect_eq(s[0].host_wait_ns, 100);
	cr_expect_eq(s[0].kernel_wait_ns, 15);
	cr_expect_eq(s[0].other_ns, 200);
	cr_assert_eq(cvc_analyze_run(db, &o, &b, &nb), CVC_OK);
	cr_assert_eq(nb, 1);
	cr_expect_eq(b[0].idle_ns, s[0].idle_ns);
	free(s);
	cr_assert_eq(cvc_analyze_idle(db, &o, 0, &s, &n), CVC_OK);
	cr_expect_eq(s[0].kernel_wait_ns, 0);
	cr_expect_eq(s[0].other_ns, 215);
	free(s);
	cvc_breakdown_free(b, nb);
	cvc_db_close(db);
}

/*
 * Claim: on real traces the parts add up to the breakdown's idle time,
 * device by device, and a trace that records its launches has host wait to
 * tell apart.  Setup: the shared Kineto traces of one rank each (A100,
 * H100, V100), imported as `cvc import` does.
 */
Test(analyze_idle, real_traces_add_up_to_the_breakdowns_idle)
{
	static const char *const traces[] = {
		"traces/tracelens-h100-qwen05b/Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz",
		"traces/hta-a100-80g-w16-rank0/rank0.json.gz",
		"traces/hta-ddp-v100-2rank/df_index_resolver.json.gz",
	};

	for (size_t t = 0; t < sizeof traces / sizeof traces[0]; t++) {
		char name[32];
		cvc_analyze_opts o = {0};
		cvc_idle_stat *s = NULL;
		cvc_breakdown *b = NULL;
		size_t n = 0, nb = 0;
		cvc_db *db;
		int64_t host = 0;

		snprintf(name, sizeof name, "real%zu.db", t);
		db = tu_import(tu_shared(traces[t]), name);
		cr_assert_eq(cvc_analyze_idle(db, &o, 20000, &s, &n), CVC_OK, "%s",
			     cvc_db_errmsg(db));
		cr_assert_eq(cvc_analyze_run(db, &o, &b, &nb), CVC_OK);
		cr_assert_eq(n, nb, "%s: %zu idle rows, %zu breakdown rows", traces[t], n, nb);
		for (size_t i = 0; i < n; i++) {
			cr_expect_eq(s[i].rank, b[i].rank);
			cr_expect_eq(s[i].device, b[i].device);
			cr_expect_eq(s[i].idle_ns, b[i].idle_ns, "%s device %d: %lld against %lld",
				     traces[t], s[i].device, (long long)s[i].idle_ns,
				     (long long)b[i].idle_ns);
			cr_expect_eq(s[i].host_wait_ns + s[i].kernel_wait_ns + s[i].other_ns,
				     s[i].idle_ns, "%s device %d", traces[t], s[i].device);
			cr_expect_leq(s[i].unlaunched_gaps, s[i].gaps);
			host += s[i].host_wait_ns;
		}
		cr_expect_gt(host, 0, "%s: no host wait at all", traces[t]);
		free(s);
		cvc_breakdown_free(b, nb);
		cvc_db_close(db);
	}
}
