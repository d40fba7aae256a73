/*
 * test_top.c - rankings (cvc_proj_top, `cvc project --top K --by METRIC
 * --per FIELDS`): the K best per model x hardware x GPU count by default,
 * other groupings, what is ranked, bad values; and the examples every
 * command's --help ends with.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "cvc/cvc_project.h"
#include "projector/proj_internal.h"
#include "testutil.h"

/* Two models on four kinds of hardware (B200 twice: with 2x compute it is
 * hardware of its own) at two GPU counts: 16 groups, each with 76..92
 * layouts that fit, so that 5 per group is a choice, not all there is. */
static const char study[] =
	"name: groups\n"
	"defaults:\n"
	"  training: {micro_batch: 1, recompute: [selective, full], zero: [1, 3]}\n"
	"  parallelism: auto\n"
	"  hardware:\n"
	"    - {gpu: A100-SXM-80GB, host_launch_us: 0}\n"
	"    - {gpu: H100-SXM, host_launch_us: 0}\n"
	"    - {gpu: B200, host_launch_us: 0}\n"
	"    - {gpu: B200, scale: {compute: 2}, host_launch_us: 0}\n"
	"scenarios:\n"
	"  - model: {name: small, layers: 16, hidden: 2048, heads: 16, seq: 2048}\n"
	"    training: {global_batch: 256}\n"
	"    hardware: {gpus: [64, 128]}\n"
	"  - model: {name: mid, layers: 32, hidden: 4096, heads: 32, seq: 2048}\n"
	"    training: {global_batch: 512}\n"
	"    hardware: {gpus: [64, 128]}\n";

/* One CSV row of `cvc project` as the tests read it. */
struct prow {
	char model[32], gpu[32];
	double scale, gpus, tps, step_s;
	int fits;
	long index;
};

enum { C_NAME, C_GPU, C_SCALE, C_GPUS, C_FITS, C_TPS, C_STEP, C_INDEX, C_N };
static const char *const cols[C_N] = {"name", "gpu", "scale_compute", "gpus",
				      "fits", "tokens_per_s", "step_s", "index"};

/* Splits a CSV line in place (quoted cells as RFC 4180); returns the cells. */
static int split(char *line, char **cell, int max)
{
	int n = 0;
	char *w = line;

	for (char *p = line;;) {
		int q = *p == '"';

		if (n == max)
			return n;
		cell[n++] = w;
		p += q;
		for (; *p && (q || *p != ','); p++) {
			if (q && *p == '"') {
				if (p[1] != '"') {
					q = 0;
					continue;
				}
				p++;
			}
			*w++ = *p;
		}
		if (!*p) {
			*w = 0;
			return n;
		}
		*w++ = 0;
		p++;
	}
}

/* Parses `cvc project` CSV into rows (malloc'd; *n rows). */
static struct prow *parse_rows(char *csv, size_t *n)
{
	char *p = csv, *line = tu_next_line(&p), *cell[512];
	int at[C_N], nc = split(line, cell, 512);
	struct prow *rows = calloc(tu_count_lines(p) + 1, sizeof *rows);

	cr_assert(rows);
	for (int c = 0; c < C_N; c++) {
		at[c] = -1;
		for (int i = 0; i < nc; i++)
			if (strcmp(cell[i], cols[c]) == 0)
				at[c] = i;
		cr_assert_geq(at[c], 0, "no column %s", cols[c]);
	}
	*n = 0;
	while ((line = tu_next_line(&p)) && *line) {
		struct prow *r = &rows[(*n)++];

		cr_assert_gt(split(line, cell, 512), at[C_INDEX]);
		snprintf(r->model, sizeof r->model, "%s", cell[at[C_NAME]]);
		snprintf(r->gpu, sizeof r->gpu, "%s", cell[at[C_GPU]]);
		r->scale = atof(cell[at[C_SCALE]]);
		r->gpus = atof(cell[at[C_GPUS]]);
		r->fits = atoi(cell[at[C_FITS]]);
		r->tps = atof(cell[at[C_TPS]]);
		r->step_s = atof(cell[at[C_STEP]]);
		r->index = atol(cell[at[C_INDEX]]);
	}
	return rows;
}

/* `cvc project` on the study with args; its rows. */
static struct prow *project(const char *args, size_t *n)
{
	const char *dir = tu_tmpdir(), *y = tu_path(dir, "groups.yaml");
	char cmd[1024], *out = NULL, *err = NULL;
	struct prow *rows;

	cr_assert_eq(tu_write(y, study, strlen(study)), 0);
	snprintf(cmd, sizeof cmd, "project '%s' --no-marginal --intervals off %s", y, args);
	cr_assert_eq(tu_cvc(cmd, &out, &err), 0, "%s: %s", cmd, err);
	rows = parse_rows(out, n);
	free(out);
	free(err);
	return rows;
}

static int same_group(const struct prow *a, const struct prow *b, int hw)
{
	return strcmp(a->model, b->model) == 0 && a->gpus == b->gpus &&
	       (!hw || (strcmp(a->gpu, b->gpu) == 0 && a->scale == b->scale));
}

/* Rows of all that fit and share r's group, better than r by tokens/s. */
static size_t better_in_group(const struct prow *all, size_t n, const struct prow *r, int hw)
{
	size_t k = 0;

	for (size_t i = 0; i < n; i++)
		k += all[i].fits && same_group(&all[i], r, hw) &&
		     (all[i].tps > r->tps || (all[i].tps == r->tps && all[i].index < r->index));
	return k;
}

/* The done-when of issue 16: `cvc project --top 5` gives 5 rows per model x
 * hardware x GPU count, each group's 5 best by tokens/s, best first. */
Test(top, five_per_model_hardware_and_gpu_count)
{
	size_t n = 0, nall = 0, groups = 0;
	struct prow *top = project("--top 5", &n), *all = project("", &nall);

	cr_assert_eq(n, 16 * 5, "%zu rows", n);
	for (size_t i = 0; i < n; i += 5) {
		groups++;
		for (size_t j = i; j < i + 5; j++) {
			cr_assert(same_group(&top[j], &top[i], 1), "row %zu strays into group %zu", j, i);
			cr_expect(top[j].fits);
			/* the j-th best of its group: j - i rows of it are better */
			cr_expect_eq(better_in_group(all, nall, &top[j], 1), j - i,
				     "%s on %s x%g at %g GPUs: row %zu", top[j].model, top[j].gpu,
				     top[j].scale, top[j].gpus, j);
		}
		/* each group lies in one block: no later block has its key */
		for (size_t j = i + 5; j < n; j++)
			cr_assert(!same_group(&top[j], &top[i], 1), "group of row %zu split", i);
	}
	cr_assert_eq(groups, 16);
	free(top);
	free(all);
}

/* --per with a list of one's own: the best 2 per model and GPU count over
 * every hardware; --per gpu puts both B200s in one group; none ranks all. */
Test(top, per_custom_fields)
{
	size_t n = 0, nall = 0;
	struct prow *all = project("", &nall), *top = project("--top 2 --per model,gpus", &n);

	cr_assert_eq(n, 4 * 2, "%zu rows", n);
	for (size_t i = 0; i < n; i++)
		cr_expect_eq(better_in_group(all, nall, &top[i], 0), i % 2, "row %zu", i);
	free(top);
	top = project("--top 1 --per gpu,model,gpus", &n);
	cr_assert_eq(n, 3 * 2 * 2, "B200 with and without 2x compute are one gpu: %zu rows", n);
	free(top);
	top = project("--top 3 --per none", &n);
	cr_assert_eq(n, 3);
	for (size_t i = 0; i < n; i++) {
		size_t better = 0;

		for (size_t j = 0; j < nall; j++)
			better += all[j].fits && all[j].tps > top[i].tps;
		cr_expect_eq(better, i, "row %zu of the one ranking", i);
	}
	free(top);
	/* --asc: smallest step time per group first */
	top = project("--top 1 --by step_s --asc --per model,hardware", &n);
	cr_assert_eq(n, 8);
	for (size_t i = 0; i < n; i++)
		for (size_t j = 0; j < nall; j++)
			if (all[j].fits && !strcmp(all[j].model, top[i].model) &&
			    !strcmp(all[j].gpu, top[i].gpu) && all[j].scale == top[i].scale)
				cr_expect_geq(all[j].step_s, top[i].step_s, "row %zu", i);
	free(top);
	free(all);
}

/* Bad --per and --by values: exit 2 and a message naming the word and the
 * valid ones. */
Test(top, bad_per_and_by)
{
	static const struct {
		const char *args, *want;
	} cases[] = {
		{"--top 5 --per model,gpuz",
		 "error: project: --per: unknown field 'gpuz' (one of model,hardware,none,"},
		{"--top 5 --per ''", "error: project: --per: an empty field name (one of model,"},
		{"--top 5 --per model,,gpus", "--per: an empty field name"},
		{"--top 5 --per none,gpus", "--per: 'none' ranks all scenarios together"},
		{"--top 5 --by speed", "error: project: --by: unknown metric 'speed' (one of step_s,"},
		{"--top 5 --by gpu", "--by: unknown metric 'gpu'"},
		{"--by speed", "--by: unknown metric 'speed'"},
		{"--per gpuz", "--per: unknown field 'gpuz'"},
		{"--top -1", "--top: expected 0..10000000, got -1"},
	};

	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char args[256], *out = NULL, *err = NULL;

		snprintf(args, sizeof args, "project %s", cases[i].args);
		cr_expect_eq(tu_cvc(args, &out, &err), 2, "%s", args);
		cr_expect(strstr(err, cases[i].want), "%s: '%s' lacks '%s'", args, err,
			  cases[i].want);
		cr_expect_eq(out[0], 0, "%s wrote rows", args);
		free(out);
		free(err);
	}
}

/* A scenario and result for the library's ranking: value is the metric. */
static void fake(cvc_proj_scenario *sc, cvc_proj_result *r, uint64_t index, const char *model,
		 double gpus, double value)
{
	cvc_proj_scenario_default(sc);
	memset(r, 0, sizeof *r);
	sc->index = index;
	sc->model = model;
	sc->gpus = gpus;
	r->valid = r->fits = 1;
	r->tokens_per_s = value;
}

struct seen {
	int n;
	uint64_t index[64];
};

static int seen_cb(void *user, const cvc_proj_scenario *sc, const cvc_proj_result *r)
{
	struct seen *s = user;

	(void)r;
	if (s->n < 64)
		s->index[s->n] = sc->index;
	s->n++;
	return 0;
}

/* The library streams 100000 rows through 4 groups x 3 kept: the best of
 * each, ties to the earlier scenario, NaN, invalid and unfit rows left out
 * (unfit kept with include_unfit), and rows offered after a read count. */
Test(top, library_ranking)
{
	cvc_proj_top_opts o = {.k = 3, .per = "model,gpus"};
	cvc_proj_top *t = NULL;
	cvc_proj_scenario sc;
	cvc_proj_result r;
	struct seen s = {0};
	char err[4096];
	size_t groups = 0;

	cr_assert_eq(cvc_proj_top_new(&o, &t, err, sizeof err), CVC_OK, "%s", err);
	for (uint64_t i = 0; i < 100000; i++) {
		/* group g = i % 4; value rises with i but the best rows of each
		 * group sit at i = 4..7 */
		fake(&sc, &r, i, i % 2 ? "b" : "a", i % 4 < 2 ? 8 : 16,
		     i >= 4 && i < 8 ? 1e9 : (double)i);
		cr_assert_eq(cvc_proj_top_add(t, &sc, &r, err, sizeof err), CVC_OK, "%s", err);
	}
	fake(&sc, &r, 200000, "a", 8, 2e9);
	r.valid = 0;
	cvc_proj_top_add(t, &sc, &r, err, sizeof err);
	r.valid = 1, r.fits = 0;
	cvc_proj_top_add(t, &sc, &r, err, sizeof err);
	r.fits = 1, r.tokens_per_s = NAN;
	cvc_proj_top_add(t, &sc, &r, err, sizeof err);
	cr_assert_eq(cvc_proj_top_each(t, seen_cb, &s, &groups), CVC_OK);
	cr_assert_eq(groups, 4);
	cr_assert_eq(s.n, 12);
	{
		/* first appearance order: i = 0 (a, 8), 1 (b, 8), 2 (a, 16), 3 (b, 16) */
		static const uint64_t want[12] = {4, 99996, 99992, 5, 99997, 99993,
						  6, 99998, 99994, 7, 99999, 99995};

		for (int i = 0; i < 12; i++)
			cr_expect_eq(s.index[i], want[i], "row %d: %llu", i,
				     (unsigned long long)s.index[i]);
	}
	/* a tie keeps the earlier scenario; a better row read later still ranks */
	fake(&sc, &r, 100001, "a", 8, 1e9);
	cvc_proj_top_add(t, &sc, &r, err, sizeof err);
	fake(&sc, &r, 3, "a", 8, 1e9);
	cvc_proj_top_add(t, &sc, &r, err, sizeof err);
	memset(&s, 0, sizeof s);
	cvc_proj_top_each(t, seen_cb, &s, NULL);
	cr_expect_eq(s.index[0], 3);
	cr_expect_eq(s.index[1], 4);
	cr_expect_eq(s.index[2], 100001);
	/* a full group of ties keeps what it has */
	fake(&sc, &r, 100002, "a", 8, 1e9);
	cvc_proj_top_add(t, &sc, &r, err, sizeof err);
	memset(&s, 0, sizeof s);
	cvc_proj_top_each(t, seen_cb, &s, NULL);
	cr_expect_eq(s.index[2], 100001);
	cvc_proj_top_free(t);
	/* include_unfit ranks what does not fit; asc keeps the smallest */
	o.include_unfit = 1, o.asc = 1, o.per = "none", o.k = 1;
	cr_assert_eq(cvc_proj_top_new(&o, &t, err, sizeof err), CVC_OK, "%s", err);
	fake(&sc, &r, 1, "a", 8, 5);
	cvc_proj_top_add(t, &sc, &r, err, sizeof err);
	fake(&sc, &r, 2, "b", 16, 2);
	r.fits = 0;
	cvc_proj_top_add(t, &sc, &r, err, sizeof err);
	memset(&s, 0, sizeof s);
	cvc_proj_top_each(t, seen_cb, &s, &groups);
	cr_expect_eq(groups, 1);
	cr_expect_eq(s.n, 1);
	cr_expect_eq(s.index[0], 2);
	cvc_proj_top_free(t);
	cvc_proj_top_free(NULL);
}

/* Every command's --help ends with an example that runs that command, and
 * project's lists the metrics from the table the CSV writer uses. */
Test(top, help_has_examples_and_metrics)
{
	char *out = NULL, *err = NULL, *p, *line;
	int commands = 0;

	cr_assert_eq(tu_cvc("--help", &out, &err), 0);
	free(err);
	p = strstr(out, "commands:\n");
	cr_assert(p);
	p += strlen("commands:\n");
	while ((line = tu_next_line(&p)) && line[0] == ' ' && line[2] != ' ') {
		char name[32], args[64], want[64], *help = NULL, *herr = NULL;

		cr_assert_eq(sscanf(line, " %31s", name), 1);
		snprintf(args, sizeof args, "%s --help", name);
		cr_expect_eq(tu_cvc(args, &help, &herr), 0, "%s: %s", args, herr);
		snprintf(want, sizeof want, "\nexamples:\n  cvc %s", name);
		cr_expect(strstr(help, want), "'cvc %s --help' has no example:\n%s", name, help);
		free(help);
		free(herr);
		commands++;
	}
	cr_assert_geq(commands, 13);
	free(out);
	cr_assert_eq(tu_cvc("project --help", &out, &err), 0);
	cr_assert(strstr(out, "metrics for --by"), "%s", out);
	/* the first, a middle and the last metric of the table, each one word */
	for (const char *m = cvc_proj_metric_names(), *c; *m; m = c ? c + 1 : m + strlen(m)) {
		char word[64];

		c = strchr(m, ',');
		snprintf(word, sizeof word, " %.*s%s", (int)(c ? c - m : (long)strlen(m)), m,
			 c ? "," : "\n");
		cr_expect(strstr(out, word), "--help lacks metric '%s'", word + 1);
	}
	cr_assert(strstr(out, "fields for --per"), "%s", out);
	cr_assert(strstr(out, " hardware,"), "%s", out);
	free(out);
	free(err);
}

static int count_cb(void *user, const cvc_proj_scenario *sc, const cvc_proj_result *r)
{
	(void)sc;
	(void)r;
	++*(long *)user;
	return 0;
}

/*
 * Claim: a study builds each pricer (one GPU at one set of scale factors)
 * once, however often its walk comes back to it.  Hardware swept in the
 * innermost loop cycles through its pricers for every other point: with
 * 48 slots replaced in turn, 49 scaled GPUs (or 9 with intervals, each
 * scenario also pricing its 5 doubled factors) missed on every scenario
 * and the sweep ran 24-30x slower.  A count of builds, not a time.
 */
Test(top, each_pricer_built_once_however_the_walk_cycles)
{
	static const char yaml[] =
		"model: {layers: 4, hidden: 1024, heads: 8, seq: 1024}\n"
		"training: {global_batch: 64}\nparallelism: {tp: [1, 2], pp: [1, 2]}\n"
		"hardware: {gpu: [H100-SXM, B200], gpus: 8, scale: {compute: {from: 1, to: 30, "
		"step: 1}}}\n";
	cvc_proj_study *st = NULL;
	cvc_proj_ctx *ctx = NULL;
	long n = 0;

	cr_assert_eq(cvc_proj_study_parse("c.yaml", yaml, strlen(yaml), &st), CVC_OK, "%s",
		     cvc_proj_study_errmsg(st));
	cr_assert_eq(cvc_proj_ctx_new(NULL, &ctx), CVC_OK);
	cr_assert_eq(cvc_proj_study_run(st, ctx, CVC_PROJ_NO_MARGINAL, count_cb, &n, NULL), CVC_OK);
	cr_expect_eq(n, 4 * 60, "%ld scenarios", n);
	/* 60 keys, each with its 5 doubled factors: at most 6 x 60 pricers */
	cr_expect_leq(proj_ctx_builds(ctx), 6 * 60, "%ld pricers built for 60 keys",
		      proj_ctx_builds(ctx));
	cvc_proj_ctx_free(ctx);
	cvc_proj_study_free(st);
}

/*
 * Claim: a ranking whose kept rows would pass the memory it may hold stops
 * with a usage error that says how much and what to change, instead of
 * being killed by the kernel: 2^20 groups of 3 kept rows hold 8 GB at
 * 2.6 KB a row.  Setup: a cap of 1 MB and one group per scenario (its GPU
 * count); under the
 * default cap (half the machine's memory) the same 400 rows are kept.
 */
Test(top, kept_rows_past_the_memory_cap_stop_the_ranking)
{
	cvc_proj_top_opts o = {.k = 3, .per = "gpus", .max_bytes = 1000000};
	cvc_proj_top *t = NULL;
	cvc_proj_scenario sc;
	cvc_proj_result r;
	char err[4096] = "";
	cvc_status st = CVC_OK;
	uint64_t i;

	cr_assert_eq(cvc_proj_top_new(&o, &t, err, sizeof err), CVC_OK, "%s", err);
	for (i = 0; i < 400 && st == CVC_OK; i++) {
		fake(&sc, &r, i, "a", 1 + (double)i, (double)i);
		st = cvc_proj_top_add(t, &sc, &r, err, sizeof err);
	}
	cr_expect_eq(st, CVC_ERR_USAGE, "status %d after %llu rows", st, (unsigned long long)i);
	cr_expect(strstr(err, "--top 3: the ") && strstr(err, "past the 0.0 GB allowed") &&
			  strstr(err, "group by fewer fields (--per)"),
		  "%s", err);
	cvc_proj_top_free(t);
	o.max_bytes = 0;
	cr_assert_eq(cvc_proj_top_new(&o, &t, err, sizeof err), CVC_OK, "%s", err);
	for (i = 0; i < 400; i++) {
		fake(&sc, &r, i, "a", 1 + (double)i, (double)i);
		cr_assert_eq(cvc_proj_top_add(t, &sc, &r, err, sizeof err), CVC_OK, "%s", err);
	}
	cvc_proj_top_free(t);
}
