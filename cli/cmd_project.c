/*
 * cmd_project.c - `cvc project [SCENARIOS.yaml]`: expands a scenario file
 * (or the shipped default study), projects every scenario and writes CSV
 * (stdout or --csv) and JSON (--json).  With --top K --by METRIC only the K
 * best rows are kept (a heap: memory is K rows however large the sweep).
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "commands.h"
#include "cvc/cvc_db.h"
#include "cvc/cvc_project.h"

struct row {
	cvc_proj_scenario sc;
	cvc_proj_result r;
	double key;
};

struct sink {
	FILE *csv, *json;
	int json_first;
	const char *by;
	int asc;
	long long top;
	int include_unfit;  /* --top also ranks layouts that do not fit */
	struct row *heap;    /* worst kept row at [0] */
	size_t n;
	uint64_t valid, total;
	int bad_metric;
	int progress;        /* stderr is a terminal */
	double last_draw;    /* monotonic seconds of the last progress line */
	const char *name;
};

static double mono_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/*
 * A sweep of millions of scenarios runs for seconds to minutes: on a
 * terminal, redraw a count at most ten times a second; checked every 64K
 * scenarios so the clock costs nothing per scenario.
 */
static void show_progress(struct sink *s)
{
	double t;

	if (!s->progress || (s->total & 0xffff) != 0)
		return;
	t = mono_s();
	if (t - s->last_draw < 0.1)
		return;
	s->last_draw = t;
	fprintf(stderr, "\rprojecting '%.40s': %llu scenarios", s->name,
		(unsigned long long)s->total);
	fflush(stderr);
}

/* a is "worse" than b: it leaves the heap first */
static int worse(const struct sink *s, const struct row *a, const struct row *b)
{
	return s->asc ? a->key > b->key : a->key < b->key;
}

static void sift_down(struct sink *s, size_t i)
{
	for (;;) {
		size_t l = 2 * i + 1, r = l + 1, w = i;
		struct row tmp;

		if (l < s->n && worse(s, &s->heap[l], &s->heap[w]))
			w = l;
		if (r < s->n && worse(s, &s->heap[r], &s->heap[w]))
			w = r;
		if (w == i)
			return;
		tmp = s->heap[i];
		s->heap[i] = s->heap[w];
		s->heap[w] = tmp;
		i = w;
	}
}

static void sift_up(struct sink *s, size_t i)
{
	while (i > 0) {
		size_t p = (i - 1) / 2;
		struct row tmp;

		if (!worse(s, &s->heap[i], &s->heap[p]))
			return;
		tmp = s->heap[i];
		s->heap[i] = s->heap[p];
		s->heap[p] = tmp;
		i = p;
	}
}

static void write_row(struct sink *s, const cvc_proj_scenario *sc, const cvc_proj_result *r)
{
	if (s->csv)
		cvc_proj_csv_row(s->csv, sc, r);
	if (s->json) {
		cvc_proj_json_row(s->json, s->json_first, sc, r);
		s->json_first = 0;
	}
}

static int on_row(void *user, const cvc_proj_scenario *sc, const cvc_proj_result *r)
{
	struct sink *s = user;
	struct row row;

	s->total++;
	s->valid += r->valid != 0;
	show_progress(s);
	if (s->top <= 0) {
		write_row(s, sc, r);
		return 0;
	}
	/* a ranking offers only what can run */
	if (!r->valid || (!r->fits && !s->include_unfit))
		return 0;
	if (cvc_proj_metric(sc, r, s->by, &row.key)) {
		s->bad_metric = 1;
		return 1;
	}
	if (isnan(row.key))
		return 0;
	row.sc = *sc;
	row.r = *r;
	if (s->n < (size_t)s->top) {
		s->heap[s->n++] = row;
		sift_up(s, s->n - 1);
	} else if (worse(s, &s->heap[0], &row)) {
		s->heap[0] = row;
		sift_down(s, 0);
	}
	return 0;
}

static int cmp_best(const void *a, const void *b, void *asc)
{
	const struct row *x = a, *y = b;
	int up = *(int *)asc;

	if (x->key == y->key)
		return 0;
	return (x->key < y->key) == up ? -1 : 1;
}

/* qsort has no user pointer in C11: a file-scope flag for the comparator */
static int sort_asc;

static int cmp_rows(const void *a, const void *b)
{
	return cmp_best(a, b, &sort_asc);
}

/* Why writing the provenance failed: the ctx's message, else the status's. */
static const char *prov_error(const cvc_proj_ctx *ctx, cvc_status rc)
{
	return *cvc_proj_ctx_errmsg(ctx) ? cvc_proj_ctx_errmsg(ctx) : cvc_strerror(rc);
}

/*
 * The provenance of a CSV projection, in its side file (a JSON projection
 * carries its own): what priced it, for `cvc report` to show as it was.
 */
static int write_provenance(const char *csv_path, cvc_proj_ctx *ctx)
{
	char path[4096];
	cvc_status rc;
	FILE *f;
	int bad;

	if (cvc_proj_provenance_path(csv_path, path, sizeof path))
		return cli_error("'%s': path too long", csv_path);
	if (!(f = fopen(path, "w")))
		return cli_fail(CVC_ERR_IO, "'%s': cannot write: %s", path, strerror(errno));
	rc = cvc_proj_provenance_write(ctx, f);
	bad = fputc('\n', f) == EOF;
	bad |= fclose(f) != 0;
	if (rc)
		return cli_fail(rc, "'%s': %s", path, prov_error(ctx, rc));
	if (bad)
		return cli_fail(CVC_ERR_IO, "'%s': write error", path);
	return 0;
}

int cmd_project(int argc, char **argv, struct cvc_ctx *cctx)
{
	const char *db_path = NULL, *csv_path = NULL, *json_path = NULL, *by = "tokens_per_s";
	const char *intervals = "on";
	long long top = 0;
	int asc = 0, valid_only = 0, no_marginal = 0, origins = 0, npos = 0, ret = 1;
	int include_unfit = 0, force = 0;
	const struct cli_opt opts[] = {
		{"db", 0, CLI_STR, &db_path, "PATH", "price with the fitted models of this database", NULL},
		{"csv", 0, CLI_STR, &csv_path, "FILE", "write the CSV here instead of stdout", NULL},
		{"json", 0, CLI_STR, &json_path, "FILE", "also write JSON", NULL},
		{"top", 0, CLI_INT, &top, "K", "keep only the K best scenarios", NULL},
		{"by", 0, CLI_STR, &by, "METRIC", "metric ranking --top (default tokens_per_s)", NULL},
		{"asc", 0, CLI_FLAG, &asc, NULL, "smaller is better for --by (step_s, cost_usd)", NULL},
		{"valid-only", 0, CLI_FLAG, &valid_only, NULL, "leave out impossible layouts", NULL},
		{"include-unfit", 0, CLI_FLAG, &include_unfit, NULL,
		 "let --top rank layouts that do not fit in memory too", NULL},
		{"no-marginal", 0, CLI_FLAG, &no_marginal, NULL, "skip the half-GPU comparison", NULL},
		{"origins", 0, CLI_FLAG, &origins, NULL, "print where each GPU's model figures come from", NULL},
		{"force", 0, CLI_FLAG, &force, NULL,
		 "also price with fits the quality gate keeps out (see 'cvc models show ID')", NULL},
		{"intervals", 0, CLI_STR, &intervals, "on|off",
		 "90% intervals, warnings and upgrade gains (default on; off is faster)", NULL},
		{0},
	};
	struct sink sink = {0};
	cvc_proj_study *st = NULL;
	cvc_proj_ctx *ctx = NULL;
	cvc_status rc;
	uint64_t count = 0;
	struct timespec t0, t1;
	int r;

	r = cli_parse("project", "[SCENARIOS.yaml] [options]", opts, argc, argv, &npos, NULL);
	if (r)
		return r < 0 ? 0 : r;
	if (npos > 1)
		return cli_error("project: expected at most one scenario file");
	if (top < 0 || top > 10000000)
		return cli_error("project: --top: expected 0..10000000, got %lld", top);
	if (strcmp(intervals, "on") != 0 && strcmp(intervals, "off") != 0)
		return cli_error("project: --intervals: expected on or off, got '%s'", intervals);
	{
		cvc_proj_scenario dsc;
		cvc_proj_result dr;
		double dummy;

		memset(&dr, 0, sizeof dr);
		cvc_proj_scenario_default(&dsc);
		if (cvc_proj_metric(&dsc, &dr, by, &dummy))
			return cli_error("project: --by: unknown metric '%s' (one of %s)", by,
					 cvc_proj_metric_names());
	}
	rc = npos == 1 ? cvc_proj_study_load(argv[1], &st) : cvc_proj_study_default(&st);
	if (rc) {
		ret = cli_fail(rc, "%s", st ? cvc_proj_study_errmsg(st) : cvc_strerror(rc));
		goto out;
	}
	if ((r = cli_proj_open(cctx, db_path, force, &ctx))) {
		ret = r;
		goto out;
	}
	cvc_proj_ctx_set_intervals(ctx, strcmp(intervals, "on") == 0);
	sink.csv = stdout;
	if (csv_path && !(sink.csv = fopen(csv_path, "w"))) {
		ret = cli_fail(CVC_ERR_IO, "'%s': cannot write: %s", csv_path, strerror(errno));
		goto out;
	}
	if (json_path && !(sink.json = fopen(json_path, "w"))) {
		ret = cli_fail(CVC_ERR_IO, "'%s': cannot write: %s", json_path, strerror(errno));
		goto out;
	}
	sink.json_first = 1;
	sink.by = by;
	sink.asc = asc;
	sink.top = top;
	sink.include_unfit = include_unfit;
	sink.progress = cctx->progress;
	sink.name = cvc_proj_study_name(st);
	if (top > 0 && !(sink.heap = malloc((size_t)top * sizeof *sink.heap))) {
		ret = cli_fail(CVC_ERR_NOMEM, "project: out of memory for --top %lld", top);
		goto out;
	}
	cvc_proj_csv_header(sink.csv);
	if (sink.json)
		cvc_proj_json_begin(sink.json, cvc_proj_study_name(st));
	clock_gettime(CLOCK_MONOTONIC, &t0);
	rc = cvc_proj_study_run(st, ctx,
				(valid_only ? CVC_PROJ_VALID_ONLY : 0) |
					(no_marginal ? CVC_PROJ_NO_MARGINAL : 0),
				on_row, &sink, &count);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	if (sink.last_draw > 0)
		fputs("\r\033[K", stderr);
	if (sink.bad_metric) {
		ret = cli_error("project: --by: unknown metric '%s'", by);
		goto out;
	}
	if (rc) {
		ret = cli_fail(rc, "%s", cvc_proj_study_errmsg(st));
		goto out;
	}
	if (top > 0) {
		sort_asc = asc;
		qsort(sink.heap, sink.n, sizeof *sink.heap, cmp_rows);
		for (size_t i = 0; i < sink.n; i++)
			write_row(&sink, &sink.heap[i].sc, &sink.heap[i].r);
	}
	if (sink.json && (rc = cvc_proj_json_end(sink.json, ctx))) {
		ret = cli_fail(rc, "'%s': %s", json_path, prov_error(ctx, rc));
		goto out;
	}
	if (csv_path && (r = write_provenance(csv_path, ctx))) {
		ret = r;
		goto out;
	}
	if (origins) {
		static const char *const gpus[] = {"A100-SXM-80GB", "H100-SXM", "B200"};

		for (size_t i = 0; i < sizeof gpus / sizeof gpus[0]; i++) {
			char buf[8192];

			if (cvc_proj_ctx_origin(ctx, gpus[i], 0, buf, sizeof buf) == CVC_OK)
				fprintf(stderr, "models: %s\n", buf);
		}
	}
	fprintf(stderr, "project: '%s': %llu scenarios (%llu valid) in %.3f s\n",
		cvc_proj_study_name(st), (unsigned long long)sink.total,
		(unsigned long long)sink.valid,
		(double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec));
	ret = 0;
	if ((sink.csv && fflush(sink.csv)) || (sink.json && fflush(sink.json)) ||
	    (sink.csv && ferror(sink.csv)) || (sink.json && ferror(sink.json)))
		ret = cli_fail(CVC_ERR_IO, "project: write error");
out:
	if (sink.csv && sink.csv != stdout)
		fclose(sink.csv);
	if (sink.json)
		fclose(sink.json);
	free(sink.heap);
	cvc_proj_study_free(st);
	cvc_proj_ctx_free(ctx);
	return ret;
}
