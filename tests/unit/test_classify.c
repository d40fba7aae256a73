/*
 * test_classify.c - the kernel classifier: shipped rules against real
 * kernel names, rule-file errors, thread safety.  Labelling a database and
 * the command: test_classify_db.c.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>
#include <json-c/json.h>
#include <sqlite3.h>

#include "cvc/cvc_classify.h"
#include "testutil.h"

/* ---- examples: real names (tests/data/classify_examples.tsv) ------------- */

#define NFIELD 6

struct example {
	int line; /* in the data file, for failure messages */
	const char *name;
	const char *cls;
	const char *coll, *algo, *proto, *dtype; /* NULL = not checked, "" = empty */
};

struct examples {
	char *text; /* the file; the fields point into it */
	struct example *v;
	size_t n;
};

/* A field as the data file writes it: "-" = not checked, "\"\"" = empty. */
static const char *field_value(char *f)
{
	if (strcmp(f, "-") == 0)
		return NULL;
	if (strcmp(f, "\"\"") == 0)
		return "";
	return f;
}

/*
 * Reads the examples: each line not a comment must have exactly NFIELD
 * tab-separated fields, so a damaged line fails the test instead of being
 * skipped.
 */
static void load_examples(struct examples *ex)
{
	const char *path = tu_path(CVC_SOURCE_DIR "/tests/data", "classify_examples.tsv");
	char *p, *l;
	int line = 0;

	memset(ex, 0, sizeof *ex);
	ex->text = tu_read(path, NULL);
	cr_assert(ex->text, "cannot read %s", path);
	ex->v = calloc(tu_count_lines(ex->text), sizeof *ex->v);
	cr_assert(ex->v);
	p = ex->text;
	while ((l = tu_next_line(&p))) {
		struct example *e = &ex->v[ex->n];
		char *f[NFIELD];
		int nf = 0;

		line++;
		if (l[0] == '#')
			continue;
		for (char *t = l; t; nf++) {
			char *tab = strchr(t, '\t');

			if (nf < NFIELD)
				f[nf] = t;
			if (tab)
				*tab++ = '\0';
			t = tab;
		}
		cr_assert_eq(nf, NFIELD, "%s:%d: %d fields, want %d", path, line, nf, NFIELD);
		e->line = line;
		e->name = f[0];
		e->cls = f[1];
		e->coll = field_value(f[2]);
		e->algo = field_value(f[3]);
		e->proto = field_value(f[4]);
		e->dtype = field_value(f[5]);
		ex->n++;
	}
	cr_assert(ex->n > 0, "%s has no examples", path);
}

static void free_examples(struct examples *ex)
{
	free(ex->v);
	free(ex->text);
}

static cvc_rules *load_default(void)
{
	cvc_rules *r = NULL;
	char err[512] = "";

	cr_assert_eq(cvc_rules_default(&r, err, sizeof err), CVC_OK, "%s", err);
	cr_assert(cvc_rules_count(r) > 0);
	return r;
}

static void check_field(const struct example *e, const char *want, const char *got,
			const char *what)
{
	if (want)
		cr_expect_str_eq(got, want, "line %d '%s': %s is '%s', want '%s'", e->line,
				 e->name, what, got, want);
}

Test(classify, class_names_round_trip)
{
	for (int c = 0; c < CVC_CLS_COUNT; c++) {
		cvc_op_class back;
		const char *n = cvc_class_name((cvc_op_class)c);

		cr_assert(n);
		cr_assert_eq(cvc_class_parse(n, &back), CVC_OK, "%s", n);
		cr_assert_eq((int)back, c);
		cr_assert_eq(cvc_class_is_comm((cvc_op_class)c),
			     c >= CVC_CLS_ALLREDUCE && c <= CVC_CLS_OTHER_COMM);
	}
	cr_assert_null(cvc_class_name(CVC_CLS_COUNT));
	cr_assert_str_eq(cvc_class_name(CVC_CLS_OTHER_COMM), "other-comm");
	{
		cvc_op_class x;

		cr_assert_eq(cvc_class_parse("comm", &x), CVC_ERR_NOTFOUND);
		cr_assert_eq(cvc_class_parse("GEMM", &x), CVC_ERR_NOTFOUND);
	}
}

/* Every example gets its class and captures, and every shipped rule has an example. */
Test(classify, shipped_rules_on_examples)
{
	cvc_rules *r = load_default();
	size_t nrules = cvc_rules_count(r);
	int *hit = calloc(nrules, sizeof *hit);
	struct examples ex;

	cr_assert(hit);
	load_examples(&ex);
	for (size_t i = 0; i < ex.n; i++) {
		const struct example *e = &ex.v[i];
		cvc_class_match m;

		cr_assert_eq(cvc_rules_match(r, e->name, strlen(e->name), &m), CVC_OK);
		cr_expect_str_eq(cvc_class_name(m.cls), e->cls,
				 "line %d '%s': class %s, want %s (rule %d)", e->line, e->name,
				 cvc_class_name(m.cls), e->cls, m.rule);
		check_field(e, e->coll, m.coll, "coll");
		check_field(e, e->algo, m.algo, "algo");
		check_field(e, e->proto, m.proto, "proto");
		check_field(e, e->dtype, m.dtype, "dtype");
		if (m.rule >= 0)
			hit[m.rule]++;
		else
			cr_expect_eq(m.cls, CVC_CLS_OTHER);
	}
	for (size_t i = 0; i < nrules; i++)
		cr_expect(hit[i] > 0, "rule %zu (default.rules line %d) has no example", i,
			  cvc_rules_line(r, (int)i));
	free_examples(&ex);
	free(hit);
	cvc_rules_free(r);
}

/* The length argument bounds the subject: no reading past it. */
Test(classify, match_respects_length)
{
	cvc_rules *r = load_default();
	cvc_class_match m;
	const char *s = "volta_sgemm_128x32_nt";

	cr_assert_eq(cvc_rules_match(r, s, 5, &m), CVC_OK);
	cr_assert_eq(m.cls, CVC_CLS_OTHER, "'volta' alone is no gemm");
	cr_assert_eq(m.rule, -1);
	cr_assert_eq(cvc_rules_match(r, s, strlen(s), &m), CVC_OK);
	cr_assert_eq(m.cls, CVC_CLS_GEMM);
	cr_assert_eq(cvc_rules_match(r, "", 0, &m), CVC_OK);
	cr_assert_eq(m.cls, CVC_CLS_OTHER);
	cvc_rules_free(r);
}

/* ---- real trace names ----------------------------------------------------- */

struct tname {
	char *name;
	double dur_us;
	long count;
};

struct tnames {
	struct tname *v;
	size_t n, cap;
};

static void tn_add(struct tnames *t, const char *name, double dur)
{
	for (size_t i = 0; i < t->n; i++) {
		if (strcmp(t->v[i].name, name) == 0) {
			t->v[i].dur_us += dur;
			t->v[i].count++;
			return;
		}
	}
	if (t->n == t->cap) {
		t->cap = t->cap ? t->cap * 2 : 256;
		t->v = realloc(t->v, t->cap * sizeof *t->v);
		cr_assert(t->v);
	}
	t->v[t->n].name = strdup(name);
	t->v[t->n].dur_us = dur;
	t->v[t->n].count = 1;
	cr_assert(t->v[t->n].name);
	t->n++;
}

static const char *const kineto_traces[] = {
	"traces/hta-ddp-v100-2rank/df_index_resolver.json.gz",
	"traces/hta-trace-diff-a100-w8/control.json.gz",
	"traces/hta-trace-diff-v100-w2/test.json.gz",
	"traces/hta-nccl-args-a100-w2/nccl_data.json.gz",
	"traces/hta-a100-80g-w16-rank0/rank0.json.gz",
	"traces/tracelens-h100-qwen05b/Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz",
	"traces/param-dlrm-8xv100/worker0_step_12.1694128201545.pt.trace.json.gz",
	"traces/param-dlrm-8xv100/worker1_step_12.1694128201556.pt.trace.json.gz",
	"traces/param-dlrm-8xv100/worker2_step_12.1694128201554.pt.trace.json.gz",
	"traces/param-dlrm-8xv100/worker3_step_12.1694128201557.pt.trace.json.gz",
	"traces/param-dlrm-8xv100/worker4_step_12.1694128201547.pt.trace.json.gz",
	"traces/param-dlrm-8xv100/worker5_step_12.1694128201549.pt.trace.json.gz",
	"traces/param-dlrm-8xv100/worker6_step_12.1694128201553.pt.trace.json.gz",
	"traces/param-dlrm-8xv100/worker7_step_12.1694128201553.pt.trace.json.gz",
};

/* Kernel names and summed durations of one Kineto trace ("cat": "kernel"). */
static void kineto_names(const char *gz, const char *dir, struct tnames *t)
{
	const char *raw = tu_gunzip(gz, dir);
	json_object *root = json_object_from_file(raw), *evs = NULL;
	size_t n;

	cr_assert(root, "cannot parse %s", raw);
	cr_assert(json_object_object_get_ex(root, "traceEvents", &evs), "%s: no traceEvents", gz);
	n = json_object_array_length(evs);
	for (size_t i = 0; i < n; i++) {
		json_object *e = json_object_array_get_idx(evs, i), *cat, *name, *dur;

		if (!json_object_object_get_ex(e, "cat", &cat) ||
		    strcmp(json_object_get_string(cat), "kernel") != 0 ||
		    !json_object_object_get_ex(e, "name", &name))
			continue;
		tn_add(t, json_object_get_string(name),
		       json_object_object_get_ex(e, "dur", &dur) ? json_object_get_double(dur)
								 : 0.0);
	}
	json_object_put(root);
	remove(raw);
}

/* Kernel names of an Nsight Systems export (demangled, as the importer reads them). */
static void nsys_names(const char *gz, const char *dir, struct tnames *t)
{
	const char *raw = tu_gunzip(gz, dir);
	sqlite3 *sq = NULL;
	sqlite3_stmt *st = NULL;

	cr_assert_eq(sqlite3_open_v2(raw, &sq, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
	cr_assert_eq(sqlite3_prepare_v2(sq, "SELECT s.value, k.end - k.start FROM "
				       "CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s "
				       "ON s.id = k.demangledName", -1, &st, NULL),
		     SQLITE_OK, "%s", sqlite3_errmsg(sq));
	while (sqlite3_step(st) == SQLITE_ROW)
		tn_add(t, (const char *)sqlite3_column_text(st, 0),
		       (double)sqlite3_column_int64(st, 1) / 1e3);
	sqlite3_finalize(st);
	sqlite3_close(sq);
	remove(raw);
}

static int hta_is_nccl(const char *s)
{
	return strncmp(s, "nccl", 4) == 0 || strstr(s, "ncclKernel") ||
	       strstr(s, "ncclDevKernel");
}

/*
 * Over every shared trace: a kernel is communication exactly when HTA's
 * rule says NCCL, and the kernel time left in `other` stays small.
 */
Test(classify, shared_traces)
{
	const char *dir = tu_tmpdir();
	struct tnames t = {0};
	cvc_rules *r;
	double all_us = 0, other_us = 0;
	size_t comm = 0, other_names = 0;

	for (size_t i = 0; i < sizeof kineto_traces / sizeof kineto_traces[0]; i++)
		kineto_names(tu_shared(kineto_traces[i]), dir, &t);
	nsys_names(tu_shared("traces/pipit-nsys-sqlite-perlmutter/perlmutter-cloverleaf-cuda.sqlite.gz"),
		   dir, &t);
	nsys_names(tu_shared("traces/pipit-nsys-sqlite-perlmutter/saxpy-mpi-cuda_nsys_perlmutter0.sqlite.gz"),
		   dir, &t);
	cr_assert(t.n > 300, "only %zu distinct kernel names read", t.n);
	r = load_default();
	for (size_t i = 0; i < t.n; i++) {
		cvc_class_match m;

		cr_assert_eq(cvc_rules_match(r, t.v[i].name, strlen(t.v[i].name), &m), CVC_OK);
		cr_expect_eq(cvc_class_is_comm(m.cls), !!hta_is_nccl(t.v[i].name),
			     "'%s' is %s", t.v[i].name, cvc_class_name(m.cls));
		comm += cvc_class_is_comm(m.cls);
		all_us += t.v[i].dur_us;
		if (m.cls == CVC_CLS_OTHER) {
			other_us += t.v[i].dur_us;
			other_names++;
			cr_log_info("unclassified: %.0f us  %.150s", t.v[i].dur_us, t.v[i].name);
		}
	}
	cr_log_info("%zu distinct kernel names, %zu communication, %zu unclassified; "
		    "unclassified time %.3f%% of %.0f us",
		    t.n, comm, other_names, 100.0 * other_us / all_us, all_us);
	cr_expect(comm >= 5, "the traces hold 5 distinct NCCL kernel names, got %zu", comm);
	/* measured 0.003% (1 name, searchsorted) with the shipped rules; 1% leaves room */
	cr_expect(other_us < 0.01 * all_us, "unclassified kernel time %.2f%%",
		  100.0 * other_us / all_us);
	for (size_t i = 0; i < t.n; i++)
		free(t.v[i].name);
	free(t.v);
	cvc_rules_free(r);
}

/* ---- rule files ------------------------------------------------------------- */

static cvc_status load_text(const char *text, char *err, size_t errlen, const char **pathp,
			    cvc_rules **out)
{
	const char *path = tu_path(tu_tmpdir(), "user.rules");

	cr_assert_eq(tu_write(path, text, strlen(text)), 0);
	if (pathp)
		*pathp = path;
	return cvc_rules_load(path, out, err, errlen);
}

/* A rule file that does not load: nothing comes back, and the whole message is
 * "'<path>': " then want. */
static void expect_format_error(const char *text, const char *want)
{
	char err[512] = "", full[1024];
	const char *path;
	cvc_rules *r = NULL;

	cr_assert_eq(load_text(text, err, sizeof err, &path, &r), CVC_ERR_FORMAT, "%s", text);
	cr_assert_null(r);
	snprintf(full, sizeof full, "'%s': %s", path, want);
	cr_assert_str_eq(err, full, "got '%s', want '%s'", err, full);
}

Test(classify, bad_regex_message)
{
	/* the regex starts at column 6 (after "gemm\t"); PCRE2 reports offset 7, the end */
	expect_format_error("# mine\n\ngemm\tfoo(bar\n",
			    "line 3, column 13: missing closing parenthesis");
	/* flags shift the column too */
	expect_format_error("copy   icase=1  a[b\n",
			    "line 1, column 20: missing terminating ] for character class");
}

Test(classify, unknown_class_message)
{
	expect_format_error("gemm gemm\nfoo  bar\n",
			    "line 2: unknown class 'foo' (expected one of gemm, attention, conv, "
			    "norm, softmax, elementwise, reduction, optimizer, embedding, copy, "
			    "allreduce, allgather, reducescatter, broadcast, reduce, sendrecv, "
			    "alltoall, other-comm, other, comm)");
}

Test(classify, other_file_errors)
{
	char err[512] = "";
	cvc_rules *r = NULL;
	const char *path;

	cr_assert_eq(load_text("gemm\n", err, sizeof err, &path, &r), CVC_ERR_FORMAT);
	cr_assert(strstr(err, "line 1, column 5: expected a regex after class 'gemm'"), "%s", err);
	cr_assert_eq(load_text("gemm icase=2 x\n", err, sizeof err, &path, &r), CVC_ERR_FORMAT);
	cr_assert(strstr(err, "line 1, column 12: expected icase=0 or icase=1"), "%s", err);
	cr_assert_eq(load_text("gemm a\0b\n", err, sizeof err, &path, &r), CVC_OK, "%s", err);
	cvc_rules_free(r);
	r = NULL;
	{
		const char *p = tu_path(tu_tmpdir(), "nul.rules");

		cr_assert_eq(tu_write(p, "gemm a\0b\n", 9), 0);
		cr_assert_eq(cvc_rules_load(p, &r, err, sizeof err), CVC_ERR_FORMAT);
		cr_assert(strstr(err, "line 1, column 7: unexpected NUL byte"), "%s", err);
	}
	cr_assert_eq(cvc_rules_load("/nonexistent/x.rules", &r, err, sizeof err),
		     CVC_ERR_NOTFOUND);
	cr_assert(strstr(err, "'/nonexistent/x.rules': "), "%s", err);
	{
		/* a line over the cap */
		size_t n = 9000;
		char *big = malloc(n + 8);

		cr_assert(big);
		memcpy(big, "gemm ", 5);
		memset(big + 5, 'a', n);
		big[n + 5] = '\n';
		big[n + 6] = '\0';
		cr_assert_eq(load_text(big, err, sizeof err, &path, &r), CVC_ERR_FORMAT);
		cr_assert(strstr(err, "line 1: longer than"), "%s", err);
		free(big);
	}
}

/* User rules: comments, CRLF, icase, `comm` derivation, duplicate capture names. */
Test(classify, user_rules_semantics)
{
	char err[512] = "";
	cvc_rules *r = NULL;
	cvc_class_match m;
	const char *text =
		"# comment\r\n"
		"   # indented comment\n"
		"comm\t^my(?<coll>AllGather|Send)_(?<algo>[A-Z]+)|^their_(?<coll>alltoall)\r\n"
		"comm  ^lonely_comm\n"
		"gemm  icase=1 MATMUL   \n"
		"norm  norm$\n";

	cr_assert_eq(load_text(text, err, sizeof err, NULL, &r), CVC_OK, "%s", err);
	cr_assert_eq(cvc_rules_count(r), 4);
	cr_assert_eq(cvc_rules_line(r, 0), 3);
	cr_assert_eq(cvc_rules_line(r, 3), 6);
	cr_assert_eq(cvc_rules_line(r, 4), 0);
	cr_assert_eq(cvc_rules_match(r, "myAllGather_RING", 16, &m), CVC_OK);
	cr_assert_eq(m.cls, CVC_CLS_ALLGATHER);
	cr_assert_str_eq(m.coll, "allgather");
	cr_assert_str_eq(m.algo, "RING");
	cr_assert_eq(m.rule, 0);
	cr_assert_eq(cvc_rules_match(r, "mySend_X", 8, &m), CVC_OK);
	cr_assert_eq(m.cls, CVC_CLS_SENDRECV);
	cr_assert_eq(cvc_rules_match(r, "their_alltoall", 14, &m), CVC_OK);
	cr_assert_eq(m.cls, CVC_CLS_ALLTOALL, "second group of the same name");
	cr_assert_eq(cvc_rules_match(r, "lonely_comm", 11, &m), CVC_OK);
	cr_assert_eq(m.cls, CVC_CLS_OTHER_COMM);
	cr_assert_str_eq(m.coll, "");
	cr_assert_eq(cvc_rules_match(r, "x_matmul_y", 10, &m), CVC_OK);
	cr_assert_eq(m.cls, CVC_CLS_GEMM, "icase=1 and trailing blanks trimmed");
	cr_assert_eq(cvc_rules_match(r, "layer_norm", 10, &m), CVC_OK);
	cr_assert_eq(m.cls, CVC_CLS_NORM);
	cr_assert_eq(m.rule, 3);
	cr_assert_eq(cvc_rules_match(r, "layer_norm_x", 12, &m), CVC_OK);
	cr_assert_eq(m.cls, CVC_CLS_OTHER);
	cvc_rules_free(r);
	/* an empty file is a valid rule set that matches nothing */
	cr_assert_eq(load_text("", err, sizeof err, NULL, &r), CVC_OK, "%s", err);
	cr_assert_eq(cvc_rules_count(r), 0);
	cr_assert_eq(cvc_rules_match(r, "volta_sgemm", 11, &m), CVC_OK);
	cr_assert_eq(m.cls, CVC_CLS_OTHER);
	cvc_rules_free(r);
}

/* A catastrophic regex gives up on the match limit instead of hanging. */
Test(classify, backtracking_is_bounded)
{
	char err[512] = "", name[4096];
	cvc_rules *r = NULL;
	cvc_class_match m;

	cr_assert_eq(load_text("gemm (?:a|a)*(?:a|a)*(?:a|a)*b\ncopy a\n", err, sizeof err,
			       NULL, &r), CVC_OK, "%s", err);
	memset(name, 'a', sizeof name);
	cr_assert_eq(cvc_rules_match(r, name, sizeof name, &m), CVC_OK);
	cr_assert_eq(m.cls, CVC_CLS_COPY, "the runaway rule counts as not matching");
	cvc_rules_free(r);
}

/* ---- threads ------------------------------------------------------------------ */

struct thr {
	const cvc_rules *r;
	const struct examples *ex;
	int mismatches;
};

static void *thr_main(void *arg)
{
	struct thr *t = arg;

	for (int round = 0; round < 200; round++) {
		for (size_t i = 0; i < t->ex->n; i++) {
			const struct example *e = &t->ex->v[i];
			cvc_class_match m;
			cvc_op_class want;

			if (cvc_rules_match(t->r, e->name, strlen(e->name), &m) ||
			    cvc_class_parse(e->cls, &want) || m.cls != want ||
			    (e->coll && strcmp(m.coll, e->coll) != 0))
				t->mismatches++;
		}
	}
	return NULL;
}

Test(classify, two_threads_share_rules)
{
	cvc_rules *r = load_default();
	struct examples ex;
	struct thr a = {r, &ex, 0}, b = {r, &ex, 0};
	pthread_t ta, tb;

	load_examples(&ex);
	cr_assert_eq(pthread_create(&ta, NULL, thr_main, &a), 0);
	cr_assert_eq(pthread_create(&tb, NULL, thr_main, &b), 0);
	pthread_join(ta, NULL);
	pthread_join(tb, NULL);
	cr_assert_eq(a.mismatches, 0);
	cr_assert_eq(b.mismatches, 0);
	free_examples(&ex);
	cvc_rules_free(r);
}

/* `--rules FILE` adds to the shipped rules (it replaced them, and every
 * kernel the file did not name became "other"); `--rules-only` replaces. */
Test(classify, user_rules_add_to_the_shipped_ones)
{
	const char *path = tu_path(tu_tmpdir(), "mine.rules");
	const char *text = "softmax ^my_softmax_kernel\ngemm ^ncclDevKernel_MineOverride\n";
	cvc_rules *over = NULL, *only = NULL, *shipped = NULL;
	cvc_class_match m;
	char err[512];
	size_t nship;

	cr_assert_eq(tu_write(path, text, strlen(text)), 0);
	cr_assert_eq(cvc_rules_default(&shipped, err, sizeof err), CVC_OK, "%s", err);
	cr_assert_eq(cvc_rules_load_over_default(path, &over, err, sizeof err), CVC_OK, "%s", err);
	cr_assert_eq(cvc_rules_load(path, &only, err, sizeof err), CVC_OK, "%s", err);
	nship = cvc_rules_count(shipped);
	cr_assert_eq(cvc_rules_count(over), 2 + nship);
	cr_assert_eq(cvc_rules_count(only), 2);
	/* the user's rules first, then the shipped ones, each naming its file */
	cr_assert_str_eq(cvc_rules_source(over, 0), path);
	cr_assert_eq(cvc_rules_line(over, 1), 2);
	cr_assert_str_eq(cvc_rules_source(over, 2), "default.rules");
	cr_assert_eq(cvc_rules_line(over, 2), cvc_rules_line(shipped, 0));
	/* a name the file does not know keeps its shipped class ... */
	cr_assert_eq(cvc_rules_match(over, "ncclKernel_AllReduce_RING_LL_Sum_float", 38, &m), CVC_OK);
	cr_assert_eq(m.cls, CVC_CLS_ALLREDUCE);
	cr_assert_eq(cvc_rules_match(only, "ncclKernel_AllReduce_RING_LL_Sum_float", 38, &m), CVC_OK);
	cr_assert_eq(m.cls, CVC_CLS_OTHER);
	/* ... and the file's rules, tried first, add and override */
	cr_assert_eq(cvc_rules_match(over, "my_softmax_kernel", 17, &m), CVC_OK);
	cr_assert_eq(m.cls, CVC_CLS_SOFTMAX);
	cr_assert_eq(cvc_rules_match(over, "ncclDevKernel_MineOverride", 26, &m), CVC_OK);
	cr_assert_eq(m.cls, CVC_CLS_GEMM);
	/* a bad user file names itself, under either */
	cr_assert_eq(tu_write(path, "gemm (\n", 7), 0);
	cvc_rules_free(over);
	over = NULL;
	cr_assert_eq(cvc_rules_load_over_default(path, &over, err, sizeof err), CVC_ERR_FORMAT);
	cr_assert(strstr(err, "mine.rules': line 1"), "%s", err);
	cr_assert_null(over);
	cvc_rules_free(only);
	cvc_rules_free(shipped);
}
