/*
 * cmd_project.c - `cvc project [SCENARIOS.yaml]`: expands a scenario file
 * (or the shipped default study), projects every scenario and writes CSV
 * (stdout or --csv) and JSON (--json).  With --top K --by METRIC --per FIELDS
 * only the K best rows of each group are kept (cvc_proj_top: memory is
 * groups x K rows however large the sweep).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "commands.h"
#include "cvc/cvc_base.h"
#include "cvc/cvc_db.h"
#include "cvc/cvc_out.h"
#include "cvc/cvc_project.h"
#include "cvc/cvc_report.h"

struct sink {
	FILE *csv, *json;
	cvc_out *csv_out, *json_out, *prov_out; /* committed together at the end */
	int json_first;
	int begun;           /* the CSV header and JSON opening written */
	cvc_proj_top *top;   /* --top: the K best per group; NULL: every row */
	cvc_rep_table *table; /* the table a person reads: the kept rows, or */
	cvc_proj_top *best;   /* without --top, the best one per default group */
	cvc_status top_rc;
	char err[4096];
	uint64_t valid, total;
	int progress;        /* stderr is a terminal */
	double last_draw;    /* monotonic seconds of the last progress line */
	double walked, size; /* points of the expansion walked, of size */
	const char *name;
	char safe_name[256];  /* name as shown on stderr: escapes shown, not acted on */
};

static double mono_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/*
 * A sweep of millions of scenarios runs for seconds to minutes: on a
 * terminal, redraw how far the walk of the expansion is and the scenarios
 * that passed the filters, at most ten times a second.  Called every 64K
 * scenarios and every 256 points walked, so the clock costs nothing per
 * scenario, and a `where:` that passes nothing still shows the walk.
 */
static void show_progress(struct sink *s)
{
	double t = mono_s();

	if (t - s->last_draw < 0.1)
		return;
	s->last_draw = t;
	fprintf(stderr, "\rprojecting '%.40s': %.1f%% of %.3g points, %llu scenarios", s->safe_name,
		s->size > 0 ? 100 * s->walked / s->size : 0, s->size, (unsigned long long)s->total);
	fflush(stderr);
}

/* cvc_proj_study_on_walk's callback */
static void on_walk(void *user, double walked, double size)
{
	struct sink *s = user;

	s->walked = walked;
	s->size = size;
	if (s->progress && ((uint64_t)walked & 0xff) == 0)
		show_progress(s);
}

/* A stream that failed a write (stdio keeps the error): said in s->err,
 * so the sweep stops there instead of pricing the rest for nothing (a
 * full disk, a closed pipe with SIGPIPE ignored). */
static int write_failed(struct sink *s, FILE *f, const char *what)
{
	int e = errno;

	if (!f || !ferror(f))
		return 0;
	snprintf(s->err, sizeof s->err, "%s: write error: %s", what, strerror(e ? e : EIO));
	s->top_rc = CVC_ERR_IO;
	return 1;
}

/*
 * The CSV header and the JSON opening, written with the first row (or at
 * the end of a study with none): a study that stops at run time (a GPU the
 * catalog lacks, named on line 6) leaves standard output empty, where a
 * header alone read as an empty projection.
 */
static void begin_out(struct sink *s)
{
	if (s->begun)
		return;
	s->begun = 1;
	if (s->csv)
		cvc_proj_csv_header(s->csv);
	if (s->json)
		cvc_proj_json_begin(s->json, s->name);
}

static void write_row(struct sink *s, const cvc_proj_scenario *sc, const cvc_proj_result *r)
{
	begin_out(s);
	if (s->csv)
		cvc_proj_csv_row(s->csv, sc, r);
	if (s->json) {
		cvc_proj_json_row(s->json, s->json_first, sc, r);
		s->json_first = 0;
	}
	if (s->table && !s->best && cli_proj_table_add(s->table, sc, r)) {
		s->top_rc = CVC_ERR_NOMEM;
		snprintf(s->err, sizeof s->err, "out of memory");
	}
	if (!s->top_rc && !write_failed(s, s->csv, s->csv == stdout ? "standard output" : "the CSV"))
		write_failed(s, s->json, s->json == stdout ? "standard output" : "the JSON");
}

static int on_row(void *user, const cvc_proj_scenario *sc, const cvc_proj_result *r)
{
	struct sink *s = user;

	s->total++;
	s->valid += r->valid != 0;
	if (s->progress && (s->total & 0xffff) == 0)
		show_progress(s);
	if (s->best && (s->top_rc = cvc_proj_top_add(s->best, sc, r, s->err, sizeof s->err)))
		return 1;
	if (!s->top) {
		write_row(s, sc, r);
		return s->top_rc != CVC_OK;
	}
	s->top_rc = cvc_proj_top_add(s->top, sc, r, s->err, sizeof s->err);
	return s->top_rc != CVC_OK;
}

/* cvc_proj_top_each's callback for the table of the best layouts */
static int on_best(void *user, const cvc_proj_scenario *sc, const cvc_proj_result *r)
{
	return cli_proj_table_add(user, sc, r);
}

/* cvc_proj_top_each's callback: the kept rows, in order */
static int on_kept(void *user, const cvc_proj_scenario *sc, const cvc_proj_result *r)
{
	struct sink *s = user;

	write_row(s, sc, r);
	return s->top_rc != CVC_OK;
}

/*
 * The CSV (stdout unless csv_path), the JSON (none unless json_path; "-"
 * is stdout) and the CSV's provenance side file (a JSON projection carries
 * its own) of sink, each written aside through cvc_out and renamed only
 * when all are complete (issue 36 item 6: an interrupted projection left a
 * cut CSV over a good earlier one), and st's walk
 * followed (the progress line when stderr is a terminal, the summary's
 * points).  The headers wait for the first row (begin_out).
 */
static int open_sinks(struct sink *sink, const char *csv_path, const char *json_path,
		      cvc_proj_study *st, int progress)
{
	char prov[4096], err[1024];
	cvc_status rc;

	if (csv_path && (rc = cvc_out_open(csv_path, &sink->csv_out, err, sizeof err)))
		return cli_fail(rc, "%s", err);
	sink->csv = sink->csv_out ? cvc_out_file(sink->csv_out) : NULL;
	if (json_path && (rc = cvc_out_open(json_path, &sink->json_out, err, sizeof err)))
		return cli_fail(rc, "%s", err);
	sink->json = sink->json_out ? cvc_out_file(sink->json_out) : NULL;
	if (csv_path && strcmp(csv_path, "-") != 0) {
		if (cvc_proj_provenance_path(csv_path, prov, sizeof prov))
			return cli_error("'%s': path too long", csv_path);
		if ((rc = cvc_out_open(prov, &sink->prov_out, err, sizeof err)))
			return cli_fail(rc, "%s", err);
	}
	sink->json_first = 1;
	sink->progress = progress;
	sink->name = cvc_proj_study_name(st);
	cvc_text_safe(sink->name, 0, sink->safe_name, sizeof sink->safe_name);
	/* the walk is counted for the summary, drawn only on a terminal */
	cvc_proj_study_on_walk(st, on_walk, sink);
	return 0;
}

/* Why writing the provenance failed: the ctx's message, else the status's. */
static const char *prov_error(const cvc_proj_ctx *ctx, cvc_status rc)
{
	return *cvc_proj_ctx_errmsg(ctx) ? cvc_proj_ctx_errmsg(ctx) : cvc_strerror(rc);
}

/* Finishes the outputs: the provenance written, then every file renamed
 * over its target.  Returns an exit code. */
static int close_sinks(struct sink *sink, cvc_proj_ctx *ctx, const char *json_path)
{
	char err[1024];
	cvc_status rc;

	begin_out(sink);
	if (sink->json && (rc = cvc_proj_json_end(sink->json, ctx)))
		return cli_fail(rc, "'%s': %s", strcmp(json_path, "-") ? json_path : "standard output",
				rc == CVC_ERR_IO ? "write error" : prov_error(ctx, rc));
	if (sink->prov_out) {
		FILE *f = cvc_out_file(sink->prov_out);

		if ((rc = cvc_proj_provenance_write(ctx, f)))
			return cli_fail(rc, "'%s': %s", cvc_out_path(sink->prov_out),
					prov_error(ctx, rc));
		fputc('\n', f);
	}
	rc = cvc_out_commit(sink->csv_out, err, sizeof err);
	sink->csv_out = NULL;
	if (!rc) {
		rc = cvc_out_commit(sink->json_out, err, sizeof err);
		sink->json_out = NULL;
	}
	if (!rc) {
		rc = cvc_out_commit(sink->prov_out, err, sizeof err);
		sink->prov_out = NULL;
	}
	return rc ? cli_fail(rc, "project: %s", err) : 0;
}

/* --origins: where the figures of each GPU the study priced come from (a
 * fixed list of three generations said nothing of a GB300 or a VR200 study,
 * and something of GPUs it never named). */
static void print_origins(cvc_proj_ctx *ctx)
{
	const char *gpu;

	for (size_t i = 0; (gpu = cvc_proj_ctx_gpu(ctx, i)); i++) {
		char buf[8192];

		if (cvc_proj_ctx_origin(ctx, gpu, 0, buf, sizeof buf) == CVC_OK)
			cli_say("models: %s\n", buf);
	}
}

/* --models: the catalog `model: NAME` reads, on stdout in format (CSV
 * unless told: -f json printed CSV). */
static int print_models(int npos, const char *format)
{
	char err[1024], *buf = NULL;
	size_t len = 0;
	cvc_rep_table *t = NULL;
	cvc_status rc;
	FILE *mem;

	if (npos > 0)
		return cli_error("project: --models takes no scenario file");
	if (!format || !strcmp(format, "csv")) {
		if ((rc = cvc_proj_archs_write(stdout, err, sizeof err)) == CVC_ERR_IO)
			return cli_fail(rc, "project: standard output: %s", err);
		if (rc)
			return cli_fail(rc, "project: %s", err);
		return 0;
	}
	if (!(mem = open_memstream(&buf, &len)))
		return cli_fail(CVC_ERR_NOMEM, "project: out of memory");
	rc = cvc_proj_archs_write(mem, err, sizeof err);
	if (fclose(mem) && !rc)
		rc = CVC_ERR_NOMEM;
	if (!rc && !(rc = cvc_rep_table_parse("models", buf, len, &t, err, sizeof err)))
		cli_table_print(t, format);
	cvc_rep_table_free(t);
	free(buf);
	return rc ? cli_fail(rc, "project: %s", err) : 0;
}

/* A constant ranks nothing: K arbitrary rows would be kept as "best". */
static int by_ranks_nothing(const cvc_proj_top *top)
{
	return cli_error("project: --by %s: every group holds one value of it, so it ranks "
			 "nothing; rank by a metric that varies (tokens_per_s, mfu, step_s, "
			 "cost_usd, ... 'cvc project --help')", cvc_proj_top_by(top));
}

/* The table a person reads; without --top, of the best layout per group. */
static int open_table(struct sink *sink)
{
	cvc_proj_top_opts bo = {1, "tokens_per_s", 0, CVC_PROJ_TOP_PER_DEFAULT, 0, 0};
	cvc_status rc;

	if (!(sink->table = cli_proj_table_new()))
		return cli_fail(CVC_ERR_NOMEM, "project: out of memory");
	if (!sink->top && (rc = cvc_proj_top_new(&bo, &sink->best, sink->err, sizeof sink->err)))
		return cli_fail(rc, "project: %s", sink->err);
	return 0;
}

/* After the run: the table, the origins, the summary lines on stderr. */
static void say_done(struct sink *sink, cvc_proj_ctx *ctx, int origins,
		     double secs, size_t ngroups, long long top, const char *by, int asc,
		     const char *per, const char *csv_path)
{
	if (sink->table)
		cli_table_print(sink->table, "table");
	if (origins)
		print_origins(ctx);
	cli_say("project: '%s': %llu scenarios (%llu valid) from %.0f point%s in %.3f s\n",
		sink->safe_name, (unsigned long long)sink->total,
		(unsigned long long)sink->valid, sink->walked, sink->walked == 1 ? "" : "s", secs);
	if (sink->top && strcmp(per, "none") == 0)
		cli_say("project: kept the %lld best by %s%s over all scenarios\n", top, by,
			asc ? " (smallest first)" : "");
	else if (sink->top)
		cli_say("project: kept the %lld best by %s%s of each of %zu groups (per %s)\n",
			top, by, asc ? " (smallest first)" : "", ngroups, per);
	if (sink->best)
		cli_say("project: the best layout by tokens/s of each of %zu groups (per "
			"%s)%s; every scenario: --csv FILE, a pipe or --format csv\n", ngroups,
			CVC_PROJ_TOP_PER_DEFAULT, csv_path ? ", all in the CSV" : "");
}

/*
 * Where the projection goes: *format for stdout ("table", "csv", "json",
 * or "none"), the CSV and JSON files.  Given, the format rules; else a
 * terminal gets the table, and a pipe the CSV unless --csv/--json FILE
 * took it (then nothing).  A "-" file is stdout and sets the format;
 * stdout takes one of them.  Returns 0 or the usage error's exit code.
 */
static int stdout_choice(const char **format, const char **csv_path, const char **json_path)
{
	int csv_out = *csv_path && strcmp(*csv_path, "-") == 0;
	int json_out = *json_path && strcmp(*json_path, "-") == 0;
	int files = (*csv_path && !csv_out) || (*json_path && !json_out);

	if (csv_out && json_out)
		return cli_error("project: --csv - and --json -: stdout takes one of them");
	if ((csv_out || json_out) && *format && strcmp(*format, csv_out ? "csv" : "json") != 0)
		return cli_error("project: %s - writes stdout, and --format %s would too",
				 csv_out ? "--csv" : "--json", *format);
	if (csv_out || json_out)
		*format = csv_out ? "csv" : "json";
	*format = cli_format_default(*format, files ? "none" : "csv");
	if (strcmp(*format, "csv") == 0) {
		if (*csv_path && !csv_out)
			return cli_error("project: --format csv writes the CSV to stdout: not with "
					 "--csv FILE");
		*csv_path = "-";
	}
	if (strcmp(*format, "json") == 0) {
		if (*json_path && !json_out)
			return cli_error("project: --format json writes the JSON to stdout: not with "
					 "--json FILE");
		*json_path = "-";
	}
	return 0;
}

int cmd_project(int argc, char **argv, struct cvc_ctx *cctx)
{
	const char *db_path = NULL, *csv_path = NULL, *json_path = NULL, *by = "tokens_per_s";
	const char *intervals = "on", *per = CVC_PROJ_TOP_PER_DEFAULT, *format = NULL, *out_fmt;
	long long top = 0;
	int asc = 0, valid_only = 0, no_marginal = 0, origins = 0, npos = 0, ret = 1;
	int include_unfit = 0, force = 0, models = 0, columns = 0;
	const struct cli_opt opts[] = {
		{"db", 0, CLI_PATH, &db_path, "PATH", "price with the fitted models of this database", NULL},
		{"csv", 0, CLI_OUT, &csv_path, "FILE", "write every scenario as CSV here ('-' = stdout)",
		 NULL},
		{"json", 0, CLI_OUT, &json_path, "FILE", "write every scenario as JSON here ('-' = stdout)",
		 NULL},
		{"format", 'f', CLI_CHOICE, &format, "FMT",
		 "stdout: table (the best layouts; default on a terminal), csv (default in a pipe) "
		 "or json", CLI_FORMATS},
		{"columns", 0, CLI_FLAG, &columns, NULL,
		 "print what every CSV/JSON column means (unit, definition) and exit", NULL},
		{"top", 0, CLI_INT, &top, "K", "keep only the K best scenarios of each --per group", NULL},
		{"by", 0, CLI_STR, &by, "METRIC",
		 "metric ranking --top (default tokens_per_s; the list below)", NULL},
		{"per", 0, CLI_STR, &per, "FIELDS",
		 "fields grouping --top (default " CVC_PROJ_TOP_PER_DEFAULT "; none: all)", NULL},
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
		{"models", 0, CLI_FLAG, &models, NULL,
		 "list the models 'model: NAME' knows (CSV: name, aliases, source) and exit", NULL},
		{0},
	};
	struct sink sink = {0};
	cvc_proj_top_opts topts = {0};
	size_t ngroups = 0;
	cvc_proj_study *st = NULL;
	cvc_proj_ctx *ctx = NULL;
	cvc_status rc;
	uint64_t count = 0;
	struct timespec t0, t1;
	int r;

	r = cli_parse("project", "[SCENARIOS.yaml] [options]", opts, argc, argv, &npos, NULL);
	if (r < 0) {
		/* --by's choices come from the metric table the writer uses */
		printf("\nmetrics for --by (also any numeric scenario field):\n");
		cli_print_list(stdout, cvc_proj_metric_names());
		printf("\nfields for --per, comma-separated (hardware: the GPU with its scale"
		       " factors;\nnone: one ranking over all scenarios):\n");
		cli_print_list(stdout, cvc_proj_group_names());
		return 0;
	}
	if (r)
		return r;
	if (models)
		return print_models(npos, format);
	if (columns)
		return cli_proj_columns(format ? format : "table");
	/* stdout: a table for a person, the CSV for a pipe, unless told;
	 * '-' is stdout, as everywhere on a command line */
	if ((r = stdout_choice(&format, &csv_path, &json_path)))
		return r;
	out_fmt = format;
	if (npos > 1)
		return cli_error("project: expected at most one scenario file");
	if (top < 0 || top > CVC_PROJ_TOP_MAX_K)
		return cli_error("project: --top: expected 0..%lld, got %lld", CVC_PROJ_TOP_MAX_K,
				 top);
	if (strcmp(intervals, "on") != 0 && strcmp(intervals, "off") != 0)
		return cli_error("project: --intervals: expected on or off, got '%s'", intervals);
	/* --by and --per are checked with or without --top: a typo is an error */
	topts.k = top > 0 ? top : 1;
	topts.by = by;
	topts.asc = asc;
	topts.per = per;
	topts.include_unfit = include_unfit;
	if ((rc = cvc_proj_top_new(&topts, &sink.top, sink.err, sizeof sink.err)))
		return cli_fail(rc, "project: %s", sink.err);
	if (top == 0) {
		cvc_proj_top_free(sink.top);
		sink.top = NULL;
	}
	if (strcmp(out_fmt, "table") == 0 && (r = open_table(&sink)))
		return r;
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
	if ((r = open_sinks(&sink, csv_path, json_path, st, cctx->progress))) {
		ret = r;
		goto out;
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	rc = cvc_proj_study_run(st, ctx,
				(valid_only ? CVC_PROJ_VALID_ONLY : 0) |
					(no_marginal ? CVC_PROJ_NO_MARGINAL : 0),
				on_row, &sink, &count);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	if (sink.last_draw > 0)
		fputs("\r\033[K", stderr);
	if (sink.top_rc) {
		ret = cli_fail(sink.top_rc, "project: %s", sink.err);
		goto out;
	}
	if (rc) {
		ret = cli_fail(rc, "%s", cvc_proj_study_errmsg(st));
		goto out;
	}
	if (sink.top && !cvc_proj_top_ranked(sink.top)) {
		ret = by_ranks_nothing(sink.top);
		goto out;
	}
	if (sink.top && (cvc_proj_top_each(sink.top, on_kept, &sink, &ngroups) || sink.top_rc)) {
		ret = cli_fail(sink.top_rc, "project: %s", sink.err); /* on_kept said why */
		goto out;
	}
	if (sink.best && cvc_proj_top_each(sink.best, on_best, sink.table, &ngroups)) {
		ret = cli_fail(CVC_ERR_NOMEM, "project: out of memory");
		goto out;
	}
	if ((r = close_sinks(&sink, ctx, json_path))) {
		ret = r;
		goto out;
	}
	say_done(&sink, ctx, origins,
		 (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec), ngroups,
		 top, sink.top ? cvc_proj_top_by(sink.top) : by, asc, per, csv_path && strcmp(csv_path, "-") != 0 ? csv_path : NULL);
	ret = 0;
out:
	cvc_out_abort(sink.csv_out);
	cvc_out_abort(sink.json_out);
	cvc_out_abort(sink.prov_out);
	cvc_proj_top_free(sink.top);
	cvc_proj_top_free(sink.best);
	cvc_rep_table_free(sink.table);
	cvc_proj_study_free(st);
	cvc_proj_ctx_free(ctx);
	return ret;
}
