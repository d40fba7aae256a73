/*
 * test_report_review.c - what a planner's review of the report found: the
 * size of MoE, MLA and hybrid models (DeepSeek-V3 shown at 6,204 B for
 * its 671 B), host-bound layouts read as communication-bound, models the
 * study never priced said not to fit, the warnings table's figures, a
 * sensitivity chart without gains, scaling efficiency against a baseline
 * that is the layout itself, and the numbers' precision.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "cvc/cvc_report.h"
#include "testutil.h"

static cvc_rep_table *read_table(const char *dir, const char *name)
{
	char path[4400], err[512];
	cvc_rep_table *t = NULL;

	snprintf(path, sizeof path, "%s/%s.csv", dir, name);
	cr_assert_eq(cvc_rep_table_read(path, &t, err, sizeof err), CVC_OK, "%s", err);
	return t;
}

static long col(const cvc_rep_table *t, const char *name)
{
	long c = cvc_rep_table_find(t, name);

	cr_assert_geq(c, 0, "no column %s", name);
	return c;
}

/* The row of t whose column key is val; asserts there is one. */
static size_t row_of(const cvc_rep_table *t, const char *key, const char *val)
{
	long c = col(t, key);

	for (size_t r = 0; r < cvc_rep_table_nrows(t); r++) {
		const char *s = cvc_rep_table_str(t, r, (size_t)c);

		if (s && strcmp(s, val) == 0)
			return r;
	}
	cr_assert_fail("no row with %s = %s", key, val);
	return 0;
}

/* Projects study (YAML text) into dir/p.csv and reports it with tables in
 * dir/t; with `strip`, the projection's params columns are renamed first
 * (a projection of a cvc that did not write them). */
static void project_and_report(const char *dir, const char *study, const char *extra,
			       int strip)
{
	char args[16384], *err = NULL, *csv, *p;
	size_t len;

	cr_assert_eq(tu_write(tu_path(dir, "s.yaml"), study, strlen(study)), 0);
	snprintf(args, sizeof args, "project '%s' %s --csv '%s'", tu_path(dir, "s.yaml"),
		 extra ? extra : "", tu_path(dir, "p.csv"));
	cr_assert_eq(tu_cvc(args, NULL, &err), 0, "%s", err);
	free(err);
	if (strip) {
		csv = tu_read(tu_path(dir, "p.csv"), &len);
		cr_assert(csv);
		p = strstr(csv, ",params_b,active_params_b,");
		cr_assert(p && p < strchr(csv, '\n'));
		memcpy(p, ",xarams_b,xctive_params_b,", strlen(",xarams_b,xctive_params_b,"));
		cr_assert_eq(tu_write(tu_path(dir, "p.csv"), csv, len), 0);
		free(csv);
	}
	snprintf(args, sizeof args, "report --no-db -p '%s' -o '%s' --csv-dir '%s'",
		 tu_path(dir, "p.csv"), tu_path(dir, "r.html"), tu_path(dir, "t"));
	cr_assert_eq(tu_cvc(args, NULL, &err), 0, "%s", err);
	free(err);
}

static const char moe_study[] =
	"model: [deepseek-v3, qwen3-235b-a22b, nemotron-h-56b, qwen2-57b-a14b]\n"
	"hardware: {gpu: H100-SXM, gpus: 2048}\n"
	"training: {global_batch: 4096, recompute: full}\n"
	"parallelism: {tp: [4, 8], pp: 8, ep: [1, 8]}\n";

/* Published totals: DeepSeek-V3 671B (arXiv 2412.19437, its MTP module
 * aside), Qwen3-235B-A22B 235B (Qwen/Qwen3-235B-A22B model card),
 * Nemotron-H-56B 56B (arXiv 2504.03624), Qwen2-57B-A14B 57B (arXiv
 * 2407.10671); within 2%. */
static void expect_published_sizes(const char *dir)
{
	static const struct {
		const char *model;
		double b;
	} want[] = {{"deepseek-v3", 671}, {"qwen3-235b-a22b", 235}, {"nemotron-h-56b", 56},
		    {"qwen2-57b-a14b", 57}};
	cvc_rep_table *t = read_table(tu_path(dir, "t"), "best_layout");

	for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
		size_t r = row_of(t, "model", want[i].model);
		double b = cvc_rep_table_num(t, r, (size_t)col(t, "params_b"));

		cr_expect(fabs(b / want[i].b - 1) < 0.02, "%s: %g B, published %g B", want[i].model,
			  b, want[i].b);
	}
	cvc_rep_table_free(t);
}

/* The projector's params_b column, and the report's own count from a
 * projection without it, both give the published totals (the report
 * counted a dense ffn per expert: DeepSeek-V3 6,204 B, Qwen3-235B 1,821 B,
 * Nemotron-H-56B 83.3 B, Qwen2-57B 367 B). */
Test(report_review, moe_mla_hybrid_sizes_are_published_totals)
{
	char dir[4096];
	cvc_rep_table *p;
	size_t r;

	/* a copy: tu_run makes directories of its own in tu_tmpdir's buffer */
	snprintf(dir, sizeof dir, "%s", tu_tmpdir());
	project_and_report(dir, moe_study, NULL, 0);
	expect_published_sizes(dir);
	p = read_table(dir, "p");
	r = row_of(p, "name", "deepseek-v3");
	/* 37B activated per token (arXiv 2412.19437) */
	cr_expect(fabs(cvc_rep_table_num(p, r, (size_t)col(p, "active_params_b")) / 37 - 1) < 0.03);
	r = row_of(p, "name", "qwen3-235b-a22b");
	cr_expect(fabs(cvc_rep_table_num(p, r, (size_t)col(p, "active_params_b")) / 22 - 1) < 0.03);
	cvc_rep_table_free(p);
	project_and_report(dir, moe_study, NULL, 1);
	expect_published_sizes(dir);
}

/* The finding at gpus of model m, or fails. */
static const char *finding_of(const cvc_rep_table *f, const char *m, double gpus)
{
	for (size_t r = 0; r < cvc_rep_table_nrows(f); r++)
		if (cvc_rep_table_num(f, r, (size_t)col(f, "gpus")) == gpus &&
		    strcmp(cvc_rep_table_str(f, r, (size_t)col(f, "model")), m) == 0)
			return cvc_rep_table_str(f, r, (size_t)col(f, "finding"));
	cr_assert_fail("no finding for %s at %g GPUs", m, gpus);
	return NULL;
}

/* A model without a best layout at a GPU count was said to have "no
 * layout of the study [that] is valid and fits in memory" whatever the
 * cause (examples/moe.yaml: nemotron-3-nano, priced at 256 GPUs only, at
 * 1,024): the finding says the study did not price it there, or the
 * projector's reason no layout is valid, or that none fits and by how much. */
Test(report_review, absent_model_says_why)
{
	static const char study[] =
		"scenarios:\n"
		"  - model: {name: a, layers: 8, hidden: 1024, heads: 8, vocab: 32000, seq: 2048}\n"
		"    training: {global_batch: 512}\n"
		"    parallelism: {tp: 1, pp: 1}\n"
		"    hardware: {gpu: H100-SXM, gpus: [64, 128, 512]}\n"
		"  - model: {name: b, layers: 8, hidden: 1024, heads: 8, vocab: 32000, seq: 2048}\n"
		"    training: {global_batch: 256}\n"
		"    parallelism: {tp: 1, pp: 1}\n"
		"    hardware: {gpu: H100-SXM, gpus: [64, 512]}\n"
		"  - model: {name: c, layers: 8, hidden: 1024, heads: 8, vocab: 32000, seq: 2048}\n"
		"    training: {global_batch: 256}\n"
		"    parallelism: {tp: 1, pp: 1}\n"
		"    hardware: {gpu: H100-SXM, gpus: [64, 128]}\n";
	char dir[4096];
	cvc_rep_table *f;
	const char *s;

	snprintf(dir, sizeof dir, "%s", tu_tmpdir());
	project_and_report(dir, study, NULL, 0);
	f = read_table(tu_path(dir, "t"), "findings");
	s = finding_of(f, "b", 128);
	cr_expect(strstr(s, "not in the study at this GPU count"), "%s", s);
	cr_expect_null(strstr(s, "fits in memory"), "%s", s);
	/* 512 GPUs: b's dp 512 > its global_batch 256, the projector's reason */
	s = finding_of(f, "b", 512);
	cr_expect(strstr(s, "no valid layout (1 priced here): global_batch"), "%s", s);
	s = finding_of(f, "c", 512);
	cr_expect(strstr(s, "not in the study"), "%s", s);
	cvc_rep_table_free(f);
}

/* Writes text as dir/p.csv and reports it with tables in dir/t. */
static void report_csv(const char *dir, const char *text)
{
	char args[16384], *err = NULL;

	cr_assert_eq(tu_write(tu_path(dir, "p.csv"), text, strlen(text)), 0);
	snprintf(args, sizeof args, "report --no-db -p '%s' -o '%s' --csv-dir '%s'",
		 tu_path(dir, "p.csv"), tu_path(dir, "r.html"), tu_path(dir, "t"));
	cr_assert_eq(tu_cvc(args, NULL, &err), 0, "%s", err);
	free(err);
}

/* The memory warning has three figures, its own first: the table printed
 * "memory: of HBM, over the every published ..." with the last figure,
 * the constant median 95.9%, as the worst of every row. */
Test(report_review, warning_keeps_its_words_and_worst_is_its_own_figure)
{
	static const char csv[] =
		"model,gpu,gpus,valid,fits,step_s,tokens_per_s,warnings\n"
		"m,H100-SXM,8,1,1,1,1000,\"memory: 91.5% of HBM, over the 88.1% every published "
		"training run held before it ran out, under their median 95.9%: may fit\"\n"
		"m,H100-SXM,16,1,1,1,2000,\"memory: 93.2% of HBM, over the 88.1% every published "
		"training run held before it ran out, under their median 95.9%: may fit; gemm: 3x "
		"past the measured range\"\n";
	char dir[4096];
	cvc_rep_table *w;
	size_t r;

	snprintf(dir, sizeof dir, "%s", tu_tmpdir());
	report_csv(dir, csv);
	w = read_table(tu_path(dir, "t"), "proj_warnings");
	r = row_of(w, "warning", "memory: of HBM, over the 88.1% every published training run "
				 "held before it ran out, under their median 95.9%: may fit");
	cr_expect_eq(cvc_rep_table_num(w, r, (size_t)col(w, "scenarios")), 2);
	cr_expect_str_eq(cvc_rep_table_str(w, r, (size_t)col(w, "worst")), "93.2%");
	r = row_of(w, "warning", "gemm: past the measured range");
	cr_expect_str_eq(cvc_rep_table_str(w, r, (size_t)col(w, "worst")), "3x");
	cvc_rep_table_free(w);
}
