/*
 * test_classify_db.c - the classifier over a database: labels written in
 * the caller's transaction, relabelling, the summary and the unknown names,
 * and the `cvc classify` command.  The rules themselves: test_classify.c.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <criterion/criterion.h>
#include <sqlite3.h>

#include "cvc/cvc_classify.h"
#include "cvc/cvc_db.h"
#include "testutil.h"

static void add_act(cvc_db *db, int64_t run, const char *name, cvc_act_kind kind,
		    int64_t start, int64_t dur, int64_t *name_id)
{
	cvc_activity a = {0};
	int64_t id;

	cr_assert_eq(cvc_db_intern(db, name, strlen(name), &id), CVC_OK, "%s", cvc_db_errmsg(db));
	a.run_id = run;
	a.kind = kind;
	a.name_id = id;
	a.start_ns = start;
	a.end_ns = start + dur;
	a.stream = 7;
	a.correlation = -1;
	a.external_id = -1;
	cr_assert_eq(cvc_db_activity_add(db, &a, NULL), CVC_OK, "%s", cvc_db_errmsg(db));
	if (name_id)
		*name_id = id;
}

static cvc_db *new_db(const char *path, int64_t *run)
{
	cvc_db *db = NULL;
	cvc_run_info ri = {0};

	cr_assert_eq(cvc_db_open(path, CVC_DB_CREATE, &db), CVC_OK, "%s",
		     db ? cvc_db_errmsg(db) : "nomem");
	cr_assert_eq(cvc_db_begin(db), CVC_OK);
	ri.name = "r1";
	ri.format = "test";
	cr_assert_eq(cvc_db_run_new(db, &ri, run), CVC_OK, "%s", cvc_db_errmsg(db));
	return db;
}

static long long q_int(cvc_db *db, const char *sql)
{
	sqlite3_stmt *st = NULL;
	long long v;

	cr_assert_eq(sqlite3_prepare_v2(cvc_db_sqlite(db), sql, -1, &st, NULL), SQLITE_OK,
		     "%s: %s", sql, sqlite3_errmsg(cvc_db_sqlite(db)));
	cr_assert_eq(sqlite3_step(st), SQLITE_ROW, "%s", sql);
	v = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return v;
}

static const char *q_text(cvc_db *db, const char *sql, char *buf, size_t len)
{
	sqlite3_stmt *st = NULL;
	const unsigned char *s;

	cr_assert_eq(sqlite3_prepare_v2(cvc_db_sqlite(db), sql, -1, &st, NULL), SQLITE_OK);
	cr_assert_eq(sqlite3_step(st), SQLITE_ROW, "%s", sql);
	s = sqlite3_column_text(st, 0);
	snprintf(buf, len, "%s", s ? (const char *)s : "(null)");
	sqlite3_finalize(st);
	return buf;
}

Test(classify, db_labels_new_names_then_relabels)
{
	const char *path = tu_path(tu_tmpdir(), "c.db");
	int64_t run, id_ar, id_gemm, id_cpy, id_unk, id_range;
	cvc_db *db = new_db(path, &run);
	const char *rules = tu_path(tu_tmpdir(), "user.rules");
	char buf[256], err[256];
	cvc_rules *mine = NULL;
	cvc_class_total tot[CVC_CLS_COUNT];
	int64_t all_ns;

	add_act(db, run, "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)",
		CVC_ACT_KERNEL, 0, 1000, &id_ar);
	add_act(db, run, "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)",
		CVC_ACT_KERNEL, 5000, 3000, NULL);
	add_act(db, run, "volta_sgemm_128x32_nt", CVC_ACT_KERNEL, 1000, 4000, &id_gemm);
	add_act(db, run, "Memcpy HtoD (Pinned -> Device)", CVC_ACT_MEMCPY, 9000, 500, &id_cpy);
	add_act(db, run, "my_kernel", CVC_ACT_KERNEL, 9500, 500, &id_unk);
	/* a range name is not a kernel name: it must stay unlabelled */
	cr_assert_eq(cvc_db_intern(db, "ProfilerStep#1", 14, &id_range), CVC_OK);
	cr_assert_eq(cvc_classify_db(db, NULL, 0), CVC_OK, "%s", cvc_db_errmsg(db));
	cr_assert_eq(q_int(db, "SELECT COUNT(*) FROM op_classes"), CVC_CLS_COUNT);
	cr_assert_eq(q_int(db, "SELECT COUNT(*) FROM op_classes WHERE is_comm=1"), 8);
	cr_assert_str_eq(q_text(db, "SELECT name FROM op_classes WHERE id=18", buf, sizeof buf),
			 "other-comm");
	cr_assert_eq(q_int(db, "SELECT COUNT(*) FROM name_class"), 4);
	snprintf(buf, sizeof buf, "SELECT class_id FROM name_class WHERE name_id=%lld", (long long)id_ar);
	cr_assert_eq(q_int(db, buf), CVC_CLS_ALLREDUCE);
	snprintf(buf, sizeof buf, "SELECT algo||'/'||proto||'/'||dtype||'/'||coll FROM name_class WHERE name_id=%lld",
		 (long long)id_ar);
	{
		char out[128];

		cr_assert_str_eq(q_text(db, buf, out, sizeof out), "RING/LL/bf16/allreduce");
	}
	snprintf(buf, sizeof buf, "SELECT class_id FROM name_class WHERE name_id=%lld", (long long)id_gemm);
	cr_assert_eq(q_int(db, buf), CVC_CLS_GEMM);
	snprintf(buf, sizeof buf, "SELECT class_id*10 + (rule IS NULL) FROM name_class WHERE name_id=%lld",
		 (long long)id_cpy);
	cr_assert_eq(q_int(db, buf), CVC_CLS_COPY * 10 + 1, "memcpy -> copy, no rule");
	snprintf(buf, sizeof buf, "SELECT class_id*10 + (rule IS NULL) FROM name_class WHERE name_id=%lld",
		 (long long)id_unk);
	cr_assert_eq(q_int(db, buf), CVC_CLS_OTHER * 10 + 1);
	snprintf(buf, sizeof buf, "SELECT COUNT(*) FROM name_class WHERE name_id=%lld", (long long)id_range);
	cr_assert_eq(q_int(db, buf), 0);

	/* all = 0 only touches names without a label: a manual label survives */
	snprintf(buf, sizeof buf, "UPDATE name_class SET class_id=9 WHERE name_id=%lld", (long long)id_gemm);
	cr_assert_eq(cvc_db_exec(db, buf), CVC_OK);
	add_act(db, run, "void at::native::vectorized_elementwise_kernel<4>()", CVC_ACT_KERNEL,
		20000, 100, NULL);
	cr_assert_eq(cvc_classify_db(db, NULL, 0), CVC_OK, "%s", cvc_db_errmsg(db));
	cr_assert_eq(q_int(db, "SELECT COUNT(*) FROM name_class"), 5);
	snprintf(buf, sizeof buf, "SELECT class_id FROM name_class WHERE name_id=%lld", (long long)id_gemm);
	cr_assert_eq(q_int(db, buf), 9);

	/* all = 1 with other rules relabels everything */
	cr_assert_eq(tu_write(rules, "softmax ^my_kernel$\n", 20), 0);
	cr_assert_eq(cvc_rules_load(rules, &mine, err, sizeof err), CVC_OK, "%s", err);
	cr_assert_eq(cvc_classify_db(db, mine, 1), CVC_OK, "%s", cvc_db_errmsg(db));
	snprintf(buf, sizeof buf, "SELECT class_id FROM name_class WHERE name_id=%lld", (long long)id_unk);
	cr_assert_eq(q_int(db, buf), CVC_CLS_SOFTMAX);
	snprintf(buf, sizeof buf, "SELECT class_id FROM name_class WHERE name_id=%lld", (long long)id_gemm);
	cr_assert_eq(q_int(db, buf), CVC_CLS_OTHER);
	snprintf(buf, sizeof buf, "SELECT class_id FROM name_class WHERE name_id=%lld", (long long)id_cpy);
	cr_assert_eq(q_int(db, buf), CVC_CLS_COPY);

	/* summary follows the stored labels */
	cr_assert_eq(cvc_classify_summary(db, -1, tot, &all_ns), CVC_OK);
	cr_assert_eq(all_ns, 1000 + 3000 + 4000 + 500 + 500 + 100);
	cr_assert_eq(tot[CVC_CLS_SOFTMAX].count, 1);
	cr_assert_eq(tot[CVC_CLS_OTHER].total_ns, 1000 + 3000 + 4000 + 100);
	cr_assert_eq(tot[CVC_CLS_COPY].total_ns, 500);
	cr_assert_eq(cvc_classify_summary(db, run + 1, tot, &all_ns), CVC_OK);
	cr_assert_eq(all_ns, 0);
	cvc_rules_free(mine);
	cr_assert_eq(cvc_db_commit(db), CVC_OK);
	cvc_db_close(db);
}

Test(classify, db_needs_transaction)
{
	const char *path = tu_path(tu_tmpdir(), "t.db");
	int64_t run;
	cvc_db *db = new_db(path, &run);

	cr_assert_eq(cvc_db_commit(db), CVC_OK);
	cr_assert_eq(cvc_classify_db(db, NULL, 0), CVC_ERR_USAGE);
	cr_assert(strstr(cvc_db_errmsg(db), "transaction"), "%s", cvc_db_errmsg(db));
	cvc_db_close(db);
}

struct unk {
	int n;
	char first[64];
	int64_t first_ns;
	int64_t last_ns;
};

static int on_unknown(void *arg, const char *name, int64_t count, int64_t total_ns)
{
	struct unk *u = arg;

	(void)count;
	if (u->n == 0) {
		snprintf(u->first, sizeof u->first, "%s", name);
		u->first_ns = total_ns;
	}
	cr_assert(u->n == 0 || total_ns <= u->last_ns, "not in descending time order");
	u->last_ns = total_ns;
	u->n++;
	return 0;
}

Test(classify, unknown_names_by_time)
{
	const char *path = tu_path(tu_tmpdir(), "u.db");
	int64_t run;
	cvc_db *db = new_db(path, &run);
	struct unk u = {0};

	add_act(db, run, "mystery_a", CVC_ACT_KERNEL, 0, 100, NULL);
	add_act(db, run, "mystery_b", CVC_ACT_KERNEL, 100, 300, NULL);
	add_act(db, run, "mystery_b", CVC_ACT_KERNEL, 400, 300, NULL);
	add_act(db, run, "volta_sgemm_32x128_nn", CVC_ACT_KERNEL, 700, 1000, NULL);
	add_act(db, run, "Memset (Device)", CVC_ACT_MEMSET, 1700, 5000, NULL);
	cr_assert_eq(cvc_db_commit(db), CVC_OK);
	cr_assert_eq(cvc_classify_unknown(db, NULL, -1, on_unknown, &u), CVC_OK, "%s",
		     cvc_db_errmsg(db));
	cr_assert_eq(u.n, 2);
	cr_assert_str_eq(u.first, "mystery_b");
	cr_assert_eq(u.first_ns, 600);
	cr_assert_eq(q_int(db, "SELECT COUNT(*) FROM name_class"), 0, "--unknown writes nothing");
	cvc_db_close(db);
}

/* Thousands of distinct names classify in well under a second each thousand. */
Test(classify, db_many_names_fast)
{
	const char *path = tu_path(tu_tmpdir(), "big.db");
	int64_t run;
	cvc_db *db = new_db(path, &run);
	struct timespec t0, t1;
	double secs;
	char name[256];
	const int n = 5000;

	for (int i = 0; i < n; i++) {
		snprintf(name, sizeof name, "%s_%d<float, %d>(float*, int)",
			 i % 3 == 0 ? "void at::native::vectorized_elementwise_kernel" :
			 i % 3 == 1 ? "volta_sgemm_128x64" : "unknown_thing", i, i * 7);
		add_act(db, run, name, CVC_ACT_KERNEL, i * 10, 5, NULL);
		add_act(db, run, name, CVC_ACT_KERNEL, i * 10 + 5, 5, NULL);
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	cr_assert_eq(cvc_classify_db(db, NULL, 1), CVC_OK, "%s", cvc_db_errmsg(db));
	clock_gettime(CLOCK_MONOTONIC, &t1);
	secs = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-9;
	cr_log_info("classified %d distinct names (%d activities) in %.3f s", n, 2 * n, secs);
	cr_assert_eq(q_int(db, "SELECT COUNT(*) FROM name_class"), n);
	cr_assert_eq(q_int(db, "SELECT COUNT(*) FROM name_class WHERE class_id=1"), n / 3 + (n % 3 > 1));
	cr_expect(secs < 5.0, "%.3f s for %d names", secs, n);
	cr_assert_eq(cvc_db_commit(db), CVC_OK);
	cvc_db_close(db);
}

/* ---- the command ---------------------------------------------------------------- */

/* A small committed database: one run, kernels of three classes plus an unknown one. */
static const char *cli_db(void)
{
	const char *path = tu_path(tu_tmpdir(), "cli.db");
	int64_t run;
	cvc_db *db = new_db(path, &run);

	add_act(db, run, "ncclKernel_AllReduce_RING_LL_Sum_float(ncclWorkElem)", CVC_ACT_KERNEL,
		0, 6000, NULL);
	add_act(db, run, "volta_sgemm_128x64_nn", CVC_ACT_KERNEL, 0, 3000, NULL);
	add_act(db, run, "Memcpy DtoD (Device -> Device)", CVC_ACT_MEMCPY, 3000, 500, NULL);
	add_act(db, run, "odd, \"quoted\" kernel", CVC_ACT_KERNEL, 4000, 500, NULL);
	cr_assert_eq(cvc_db_commit(db), CVC_OK);
	cvc_db_close(db);
	return path;
}

static long long file_count(const char *path, const char *sql)
{
	cvc_db *db = NULL;
	long long v;

	cr_assert_eq(cvc_db_open(path, 0, &db), CVC_OK);
	v = q_int(db, sql);
	cvc_db_close(db);
	return v;
}

/* One run of `cvc classify --db '<db>' <extra>`: its exit status and output. */
struct cli {
	int rc;
	char *out, *err;
};

/* Runs the command and asserts its exit status is want (cli_free after). */
static void classify_cli(struct cli *c, const char *db, const char *extra, int want)
{
	char args[2048];

	snprintf(args, sizeof args, "classify --db '%s'%s%s", db, *extra ? " " : "", extra);
	c->rc = tu_cvc(args, &c->out, &c->err);
	cr_assert_eq(c->rc, want, "%s: exit %d, want %d: %s", args, c->rc, want, c->err);
}

static void cli_free(struct cli *c)
{
	free(c->out);
	free(c->err);
}

Test(classify, cli_summary_and_errors)
{
	char path[512], extra[1024], missing[1024];
	const char *rules = tu_path(tu_tmpdir(), "bad.rules");
	struct cli c;

	snprintf(path, sizeof path, "%s", cli_db());
	/* bad rules: one error line, exit 2, nothing written */
	cr_assert_eq(tu_write(rules, "gemm (\n", 7), 0);
	snprintf(extra, sizeof extra, "--rules '%s'", rules);
	classify_cli(&c, path, extra, 2);
	cr_assert_eq(tu_count_lines(c.err), 1, "%s", c.err);
	cr_assert(strstr(c.err, "line 1, column 7: missing closing parenthesis"), "%s", c.err);
	cr_assert_str_eq(c.out, "");
	cr_assert_eq(file_count(path, "SELECT COUNT(*) FROM name_class"), 0);
	cli_free(&c);

	/* default rules: labels every name in one go and prints the table */
	classify_cli(&c, path, "", 0);
	cr_assert(strstr(c.out, "allreduce"), "%s", c.out);
	cr_assert(strstr(c.out, "allreduce      1         6         60\n"),
		  "allreduce is 6000 of 10000 ns:\n%s", c.out);
	cr_assert(strstr(c.out, "gemm"), "%s", c.out);
	cr_assert(strstr(c.out, "copy"), "%s", c.out);
	cr_assert(strstr(c.out, "total          4        10        100\n"), "total 10 us:\n%s", c.out);
	cr_assert_eq(file_count(path, "SELECT COUNT(*) FROM name_class"), 4);
	cli_free(&c);

	/* csv */
	classify_cli(&c, path, "--format csv", 0);
	cr_assert(strstr(c.out, "class,count,total_us,share_pct\nallreduce,1,6,60\n"), "%s",
		  c.out);
	cr_assert_null(strstr(c.out, "\ntotal,"), "a script sums the classes itself:\n%s", c.out);
	cli_free(&c);

	/* json */
	classify_cli(&c, path, "--format json", 0);
	cr_assert(strstr(c.out, "{\"class\":\"allreduce\",\"count\":1,\"total_us\":6,\"share_pct\":60}"),
		  "%s", c.out);
	cli_free(&c);

	/* --unknown: only the unmatched kernel, csv-quoted */
	classify_cli(&c, path, "--unknown --format csv", 0);
	cr_assert_str_eq(c.out, "name,count,total_us\n\"odd, \"\"quoted\"\" kernel\",1,0.500\n");
	cli_free(&c);

	/* unknown run, missing db */
	classify_cli(&c, path, "--run nope", 2);
	cr_assert(strstr(c.err, "no run named 'nope'"), "%s", c.err);
	cli_free(&c);
	snprintf(missing, sizeof missing, "%s/none.db", tu_tmpdir());
	classify_cli(&c, missing, "", 2);
	cr_assert(strstr(c.err, "none.db'"), "%s", c.err);
	cli_free(&c);
}

/*
 * Communication from a stack the rules do not know is said, not silently
 * counted as compute (issue 14, item 9): a DeepEP build in its own
 * namespace is communication; an unknown send kernel holding time is
 * named by cvc_classify_suspects and by `cvc import`'s warning.
 */
Test(classify, unknown_communication_is_said)
{
	static const char text[] =
		"{\"traceEvents\":["
		"{\"ph\":\"X\",\"cat\":\"kernel\",\"pid\":0,\"tid\":7,\"ts\":0,\"dur\":880,"
		"\"name\":\"void dpsk::ep::internode::dispatch<false, 8>(int4*, int)\"},"
		"{\"ph\":\"X\",\"cat\":\"kernel\",\"pid\":0,\"tid\":7,\"ts\":900,\"dur\":60,"
		"\"name\":\"void acme::p2p::send_tokens_kernel(int*)\"},"
		"{\"ph\":\"X\",\"cat\":\"kernel\",\"pid\":0,\"tid\":7,\"ts\":1000,\"dur\":60,"
		"\"name\":\"void descend_tree_kernel(int*)\"}]}";
	const char *dir = tu_tmpdir();
	char path[4096], args[8300], ex[160], *out = NULL, *err = NULL;
	cvc_class_total tot[CVC_CLS_COUNT];
	int64_t all = 0;
	double share = 0;
	cvc_db *db;

	snprintf(path, sizeof path, "%s", tu_path(dir, "ep.json"));
	cr_assert_eq(tu_write(path, text, sizeof text - 1), 0);
	db = tu_import(path, "ep.db");
	cr_assert_eq(cvc_classify_summary(db, -1, tot, &all), CVC_OK);
	cr_expect_eq(tot[CVC_CLS_ALLTOALL].total_ns, 880000, "DeepEP dispatch is all-to-all");
	cr_assert_eq(cvc_classify_suspects(db, -1, &share, ex, sizeof ex), CVC_OK);
	cr_expect_float_eq(share, 60.0 / 1000, 1e-9, "share %.4f", share);
	cr_expect_str_eq(ex, "void acme::p2p::send_tokens_kernel(int*)");
	cvc_db_close(db);
	snprintf(args, sizeof args, "import --db '%s' '%s'", tu_path(dir, "cli.db"), path);
	cr_assert_eq(tu_cvc(args, &out, &err), 0, "%s", err);
	cr_expect(strstr(err, "warning: 6.0% of the kernel time") &&
		  strstr(err, "send_tokens_kernel") && strstr(err, "cvc classify --unknown"), "%s",
		  err);
	free(out);
	free(err);
}

/*
 * A database no classification has labelled yet (one `cvc profile`
 * materialized, read by `cvc analyze --collectives` or opened read-only):
 * its NCCL kernels are what the shipped rules say, communication, not
 * suspects; an unlabelled name no rule knows still is one.  Before, every
 * unlabelled name counted as other: "100.0% of the kernel time is in
 * kernels no rule classes as communication" for an all-gather.
 */
Test(classify, unlabelled_names_are_judged_by_the_rules)
{
	char ex[160];
	double share = 1;
	int64_t run = 0;
	cvc_db *db = new_db(tu_path(tu_tmpdir(), "unlabelled.db"), &run);

	add_act(db, run, "ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<4096ul>)",
		CVC_ACT_KERNEL, 0, 900, NULL);
	add_act(db, run, "void acme::p2p::send_tokens_kernel(int*)", CVC_ACT_KERNEL, 1000, 100,
		NULL);
	cr_assert_eq(cvc_db_commit(db), CVC_OK);
	cr_expect_eq(q_int(db, "SELECT count(*) FROM name_class"), 0);
	cr_assert_eq(cvc_classify_suspects(db, -1, &share, ex, sizeof ex), CVC_OK);
	cr_expect_float_eq(share, 100.0 / 1000, 1e-9, "share %.4f", share);
	cr_expect_str_eq(ex, "void acme::p2p::send_tokens_kernel(int*)");
	cvc_db_close(db);
}
