/*
 * cmd_analyze.c - `cvc analyze`: compute vs communication per run and rank
 * (or step), the per-class breakdown (--classes) and collective bandwidths
 * (--collectives) and where idle time goes (--idle), as an aligned table,
 * CSV or JSON.
 *
 * One table per invocation: the main breakdown, or the classes, or the
 * collectives, or the idle time (two of those together are a usage error).
 * CSV / JSON columns:
 *   main:  run,rank,device,kernels,comm_kernels,busy_us,compute_us,comm_us,
 *          hidden_comm_us,exposed_comm_us,overlap_pct,idle_us,span_us,
 *          comm_share,exposed_share,skew_us
 *          (comm_share = comm / span, exposed_share = exposed / span: the
 *          shares the projector and the report print, cvc_shares_of;
 *          skew_us, by rank only: span end minus the run's earliest span
 *          end, clock offsets applied, in every format, as the table shows
 *          it; --by step: a "step" column after device and no skew_us)
 *   --classes:     run,rank,device[,step],class,kernels,sum_us,union_us,busy_pct
 *                  (busy_pct = 100 * union / busy of that row)
 *   --collectives: run,rank,coll,bytes,group_size,count,total_us,mean_us,
 *                  algbw_gbps,busbw_gbps (busbw empty / null when unknown)
 *   --idle:        run,rank,device,gaps,unlaunched_gaps,idle_us,host_wait_us,
 *                  kernel_wait_us,other_us (cvc_analyze_idle; by rank only)
 * Times are printed in microseconds with 3 decimals, from integer ns, so the
 * CSV is exact.  An empty result (no activities, no step ranges, no sized
 * collectives) prints the header alone (CSV), "[]" (JSON) or nothing
 * (table), with a note on stderr, and exits 0: an empty run is not an error.
 */
#include <assert.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <json-c/json.h>

#include "cli.h"
#include "commands.h"
#include "cvc/cvc_analyze.h"
#include "cvc/cvc_base.h"
#include "cvc/cvc_db.h"
#include "cvc/cvc_report.h"

enum fmt { FMT_TABLE, FMT_CSV, FMT_JSON };

#define MAX_COLS 18

/*
 * A printed table: cells hold the text as printed (so CSV, JSON and the
 * aligned table agree to the digit), and numeric columns are right-aligned
 * in "table" and numbers in JSON.
 */
struct grid {
	cvc_rep_table *t;
	int numeric[MAX_COLS];
};

/* One row being filled, left to right: its cells' text and their storage. */
struct rowb {
	const char *cell[MAX_COLS];
	char buf[MAX_COLS][40];
	size_t n;
};

static void put_str(struct rowb *rb, const char *s)
{
	rb->cell[rb->n++] = s;
}

static void put_i64(struct rowb *rb, int64_t v)
{
	snprintf(rb->buf[rb->n], sizeof rb->buf[rb->n], "%" PRId64, v);
	put_str(rb, rb->buf[rb->n]);
}

/* "12.345" from ns; exact, no floating point. */
static void put_us3(struct rowb *rb, int64_t ns)
{
	uint64_t a = ns < 0 ? (uint64_t)0 - (uint64_t)ns : (uint64_t)ns;

	snprintf(rb->buf[rb->n], sizeof rb->buf[rb->n], "%s%" PRIu64 ".%03" PRIu64,
		 ns < 0 ? "-" : "", a / 1000, a % 1000);
	put_str(rb, rb->buf[rb->n]);
}

/* "%.3f"; empty for NaN (unknown). */
static void put_dbl3(struct rowb *rb, double v)
{
	if (isnan(v)) {
		put_str(rb, "");
		return;
	}
	snprintf(rb->buf[rb->n], sizeof rb->buf[rb->n], "%.3f", v);
	put_str(rb, rb->buf[rb->n]);
}

/* A share of the step at 6 significant digits; empty for NaN (no span). */
static void put_share(struct rowb *rb, double v)
{
	put_str(rb, cvc_fmt_plain(v, 6, rb->buf[rb->n], sizeof rb->buf[rb->n]));
}

/* The columns that say whose row it is: run, rank, device (and step). */
static void put_whose(struct rowb *rb, const cvc_breakdown *x, int by_step)
{
	put_str(rb, x->run);
	put_i64(rb, x->rank);
	put_i64(rb, x->device);
	if (by_step)
		put_i64(rb, x->step);
}

static const char *cell(const struct grid *g, size_t r, size_t c)
{
	return cvc_rep_table_str(g->t, r, c);
}

static void print_table(const struct grid *g)
{
	size_t w[MAX_COLS] = {0}, nc = cvc_rep_table_ncols(g->t), nr = cvc_rep_table_nrows(g->t);

	for (size_t c = 0; c < nc; c++)
		w[c] = strlen(cvc_rep_table_col(g->t, c));
	for (size_t r = 0; r < nr; r++)
		for (size_t c = 0; c < nc; c++)
			if (strlen(cell(g, r, c)) > w[c])
				w[c] = strlen(cell(g, r, c));
	for (size_t r = 0; r <= nr; r++)
		for (size_t c = 0; c < nc; c++) {
			/* row 0 is the header */
			const char *s = r ? cell(g, r - 1, c) : cvc_rep_table_col(g->t, c);

			if (g->numeric[c])
				printf("%*s", (int)w[c], s);
			else
				printf("%-*s", c + 1 == nc ? 0 : (int)w[c], s);
			fputs(c + 1 == nc ? "\n" : "  ", stdout);
		}
}

/* JSON numbers keep the printed text ("6571.000"), so they equal the CSV. */
static int print_json(const struct grid *g)
{
	json_object *arr = json_object_new_array();

	if (!arr)
		return -1;
	for (size_t r = 0; r < cvc_rep_table_nrows(g->t); r++) {
		json_object *o = json_object_new_object();

		if (!o || json_object_array_add(arr, o)) {
			json_object_put(o);
			json_object_put(arr);
			return -1;
		}
		for (size_t c = 0; c < cvc_rep_table_ncols(g->t); c++) {
			const char *s = cell(g, r, c);
			json_object *v;

			if (!g->numeric[c])
				v = json_object_new_string(s);
			else if (!*s)
				v = NULL; /* unknown (busbw without a group size) */
			else if (strchr(s, '.'))
				v = json_object_new_double_s(strtod(s, NULL), s);
			else
				v = json_object_new_int64(strtoll(s, NULL, 10));
			json_object_object_add(o, cvc_rep_table_col(g->t, c), v);
		}
	}
	puts(json_object_to_json_string_ext(arr, JSON_C_TO_STRING_PRETTY |
							 JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(arr);
	return 0;
}

/*
 * Starts g with the columns of hdr/numeric (n of them) that are not left
 * out (skip[i] set); -1 on no memory.
 */
static int grid_init(struct grid *g, const char *const *hdr, const int *numeric,
		     const int *skip, size_t n)
{
	const char *h[MAX_COLS];
	size_t nc = 0;

	assert(n <= MAX_COLS);
	for (size_t i = 0; i < n; i++) {
		if (skip[i])
			continue;
		h[nc] = hdr[i];
		g->numeric[nc++] = numeric[i];
	}
	g->t = cvc_rep_table_new("analyze", NULL, nc, h);
	return g->t ? 0 : -1;
}

/* Appends rb, a row of the table's width; -1 on no memory. */
static int grid_row(struct grid *g, const struct rowb *rb)
{
	long r = cvc_rep_table_add_row(g->t);

	assert(rb->n == cvc_rep_table_ncols(g->t));
	if (r < 0)
		return -1;
	for (size_t c = 0; c < rb->n; c++) {
		/* a trace's names reach a terminal in every format: CR and
		 * escapes shown, not obeyed (issue 36 item 13) */
		char *safe = cvc_text_safe_dup(rb->cell[c], 0);
		int bad = !safe || cvc_rep_table_set_str(g->t, (size_t)r, c, safe);

		free(safe);
		if (bad)
			return -1;
	}
	return 0;
}

/*
 * Straggler skew (by rank, every format): how much later this rank's device went quiet
 * (span end, clock offsets applied) than the first one of its run.
 */
static int64_t skew_ns(const cvc_breakdown *b, size_t n, size_t i, int *multi)
{
	int64_t end_i = b[i].first_ns + b[i].span_ns + b[i].clock_offset_ns, lo = end_i;

	*multi = 0;
	for (size_t k = 0; k < n; k++) {
		int64_t e = b[k].first_ns + b[k].span_ns + b[k].clock_offset_ns;

		if (b[k].run_id != b[i].run_id || k == i)
			continue;
		*multi = 1;
		if (e < lo)
			lo = e;
	}
	return end_i - lo;
}

static int build_main(struct grid *g, const cvc_breakdown *b, size_t n, int by_step,
		      int with_skew)
{
	static const char *const hdr[] = {
		"run", "rank", "device", "step", "kernels", "comm_kernels", "busy_us",
		"compute_us", "comm_us", "hidden_comm_us", "exposed_comm_us", "overlap_pct",
		"idle_us", "span_us", "comm_share", "exposed_share", "skew_us"};
	static const int num[] = {0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1};
	const int skip[] = {[3] = !by_step, [16] = !with_skew};

	if (grid_init(g, hdr, num, skip, 17))
		return -1;
	for (size_t i = 0; i < n; i++) {
		struct rowb rb = {.n = 0};
		int multi = 0;
		int64_t skew = skew_ns(b, n, i, &multi);

		put_whose(&rb, &b[i], by_step);
		put_i64(&rb, b[i].kernels);
		put_i64(&rb, b[i].comm_kernels);
		put_us3(&rb, b[i].busy_ns);
		put_us3(&rb, b[i].compute_ns);
		put_us3(&rb, b[i].comm_ns);
		put_us3(&rb, b[i].hidden_ns);
		put_us3(&rb, b[i].exposed_ns);
		put_dbl3(&rb, b[i].overlap_pct);
		put_us3(&rb, b[i].idle_ns);
		put_us3(&rb, b[i].span_ns);
		put_share(&rb, b[i].shares.comm_share);
		put_share(&rb, b[i].shares.exposed_share);
		if (with_skew && multi)
			put_us3(&rb, skew);
		else if (with_skew)
			put_str(&rb, "");
		if (grid_row(g, &rb))
			return -1;
	}
	return 0;
}

static int build_classes(struct grid *g, const cvc_breakdown *b, size_t n, int by_step)
{
	static const char *const hdr[] = {"run", "rank", "device", "step", "class",
					  "kernels", "sum_us", "union_us", "busy_pct"};
	static const int num[] = {0, 1, 1, 1, 0, 1, 1, 1, 1};
	const int skip[9] = {[3] = !by_step};

	if (grid_init(g, hdr, num, skip, 9))
		return -1;
	for (size_t i = 0; i < n; i++)
		for (size_t c = 0; c < b[i].nclasses; c++) {
			const cvc_class_time *ct = &b[i].classes[c];
			struct rowb rb = {.n = 0};

			put_whose(&rb, &b[i], by_step);
			put_str(&rb, ct->name);
			put_i64(&rb, ct->kernels);
			put_us3(&rb, ct->sum_ns);
			put_us3(&rb, ct->union_ns);
			put_dbl3(&rb, b[i].busy_ns ? 100.0 * (double)ct->union_ns / (double)b[i].busy_ns
						   : 0.0);
			if (grid_row(g, &rb))
				return -1;
		}
	return 0;
}

static int build_colls(struct grid *g, const cvc_coll_stat *s, size_t n)
{
	static const char *const hdr[] = {"run", "rank", "coll", "bytes", "group_size",
					  "count", "total_us", "mean_us", "algbw_gbps",
					  "busbw_gbps"};
	static const int num[] = {0, 1, 0, 1, 1, 1, 1, 1, 1, 1};
	static const int skip[10] = {0};

	if (grid_init(g, hdr, num, skip, 10))
		return -1;
	for (size_t i = 0; i < n; i++) {
		struct rowb rb = {.n = 0};

		put_str(&rb, s[i].run);
		put_i64(&rb, s[i].rank);
		put_str(&rb, s[i].coll);
		put_i64(&rb, s[i].bytes);
		put_i64(&rb, s[i].group_size);
		put_i64(&rb, s[i].count);
		put_us3(&rb, s[i].total_ns);
		put_dbl3(&rb, s[i].mean_ns / 1000.0);
		put_dbl3(&rb, s[i].algbw_gbps);
		put_dbl3(&rb, s[i].busbw_gbps);
		if (grid_row(g, &rb))
			return -1;
	}
	return 0;
}

static int build_idle(struct grid *g, const cvc_idle_stat *s, size_t n)
{
	static const char *const hdr[] = {"run", "rank", "device", "gaps", "unlaunched_gaps",
					  "idle_us", "host_wait_us", "kernel_wait_us", "other_us"};
	static const int num[] = {0, 1, 1, 1, 1, 1, 1, 1, 1};
	static const int skip[9] = {0};

	if (grid_init(g, hdr, num, skip, 9))
		return -1;
	for (size_t i = 0; i < n; i++) {
		struct rowb rb = {.n = 0};

		put_str(&rb, s[i].run);
		put_i64(&rb, s[i].rank);
		put_i64(&rb, s[i].device);
		put_i64(&rb, s[i].gaps);
		put_i64(&rb, s[i].unlaunched_gaps);
		put_us3(&rb, s[i].idle_ns);
		put_us3(&rb, s[i].host_wait_ns);
		put_us3(&rb, s[i].kernel_wait_ns);
		put_us3(&rb, s[i].other_ns);
		if (grid_row(g, &rb))
			return -1;
	}
	return 0;
}

/*
 * A profile that dropped records or whose CUPTI was held or refused is
 * empty or partial: say so on stderr for every run concerned.
 */
static void warn_profile_gaps(cvc_db *db, const char *run)
{
	cvc_rep_table *gaps = NULL;

	if (cvc_rep_profile_gaps(db, run, &gaps) != CVC_OK)
		return;
	for (size_t r = 0; r < cvc_rep_table_nrows(gaps); r++)
		cli_say("warning: run '%s': %s\n", cvc_rep_table_str(gaps, r, 0),
			cvc_rep_table_str(gaps, r, 1));
	cvc_rep_table_free(gaps);
}

/* What one invocation prints. */
enum table { T_MAIN, T_CLASSES, T_COLLS, T_IDLE };

/* Fills g with the table `which` of db; a status with the message in db. */
static cvc_status build(cvc_db *db, const cvc_analyze_opts *ao, enum table which,
			int64_t kernel_wait_ns, struct grid *g)
{
	cvc_breakdown *rows = NULL;
	cvc_coll_stat *cs = NULL;
	cvc_idle_stat *is = NULL;
	size_t nr = 0, nc = 0, ni = 0;
	cvc_status st;
	int by_step = ao->by == CVC_BY_STEP, bad;

	if (which == T_COLLS) {
		if (!(st = cvc_analyze_collectives(db, ao, &cs, &nc)) && build_colls(g, cs, nc))
			st = CVC_ERR_NOMEM;
	} else if (which == T_IDLE) {
		if (!(st = cvc_analyze_idle(db, ao, kernel_wait_ns, &is, &ni)) &&
		    build_idle(g, is, ni))
			st = CVC_ERR_NOMEM;
	} else if (!(st = cvc_analyze_run(db, ao, &rows, &nr))) {
		bad = which == T_CLASSES ? build_classes(g, rows, nr, by_step)
					 : build_main(g, rows, nr, by_step, !by_step);
		if (bad)
			st = CVC_ERR_NOMEM;
	}
	cvc_breakdown_free(rows, nr);
	free(cs);
	free(is);
	return st;
}

int cmd_analyze(int argc, char **argv, struct cvc_ctx *ctx)
{
	const char *dbpath = CVC_DEFAULT_DB, *format = "table", *by = "rank";
	const char *run = NULL, *step_regex = NULL;
	int classes = 0, colls = 0, idle = 0, npos = 0, ret = 1, rc;
	double kw_us = CVC_KERNEL_WAIT_NS_DEFAULT / 1e3;
	const struct cli_opt opts[] = {
		{"db", 0, CLI_PATH, &dbpath, "PATH", "database (default cvc.db)", NULL},
		{"format", 'f', CLI_CHOICE, &format, "FMT", "output format", "table|csv|json"},
		{"by", 0, CLI_CHOICE, &by, "WHAT", "one row per rank (device) or per step",
		 "rank|step"},
		{"run", 0, CLI_STR, &run, "NAME", "only this run (default: every run)", NULL},
		{"step-regex", 0, CLI_STR, &step_regex, "RE",
		 "step range names (PCRE2; group 1 = step number), default "
		 "^ProfilerStep#(\\d+)(?:, .*)?$ (emit_nvtx adds ', op_id = N')",
		 NULL},
		{"classes", 0, CLI_FLAG, &classes, NULL,
		 "per-class breakdown: kernels, sum, union, share of busy", NULL},
		{"collectives", 0, CLI_FLAG, &colls, NULL,
		 "per (rank, collective, size, group size): count, time, algbw, busbw", NULL},
		{"idle", 0, CLI_FLAG, &idle, NULL,
		 "per rank: idle time as host wait, kernel wait and other (HTA's breakdown, "
		 "on the device)", NULL},
		{"kernel-wait-us", 0, CLI_DOUBLE, &kw_us, "US",
		 "with --idle: a gap shorter than US that the host did not cause is kernel wait "
		 "(default 20, the back-to-back launch gaps of docs/MODELS.md 'Kernel gaps')", NULL},
		{0},
	};
	cvc_analyze_opts ao = {0};
	cvc_db *db = NULL;
	struct grid g = {0};
	cvc_status st;
	enum fmt fmt;
	enum table which;

	rc = cli_parse(ctx->cmd, "[--db PATH] [--format table|csv|json] [--by rank|step] "
				 "[--run NAME] [--step-regex RE] [--classes | --collectives | "
				 "--idle [--kernel-wait-us US]]",
		       opts, argc, argv, &npos, NULL);
	if (rc)
		return rc < 0 ? 0 : rc;
	if (npos > 0)
		return cli_error("%s: unexpected argument '%s'", ctx->cmd, argv[1]);
	if (classes + colls + idle > 1)
		return cli_error("%s: --classes, --collectives and --idle print different tables; "
				 "give one", ctx->cmd);
	if (idle && strcmp(by, "step") == 0)
		return cli_error("%s: --idle is by rank: a gap between two steps belongs to "
				 "neither; give --by rank or leave it out", ctx->cmd);
	if (!(kw_us >= 0 && kw_us <= 1e9))
		return cli_error("%s: --kernel-wait-us: expected 0 to 1e9 microseconds, got %g",
				 ctx->cmd, kw_us);
	which = classes ? T_CLASSES : colls ? T_COLLS : idle ? T_IDLE : T_MAIN;
	fmt = strcmp(format, "csv") == 0 ? FMT_CSV
	      : strcmp(format, "json") == 0 ? FMT_JSON
					    : FMT_TABLE;
	if (access(dbpath, F_OK) != 0)
		return cli_error("'%s': no such database (create it with 'cvc import --db %s "
				 "FILES')", dbpath, dbpath);
	/* A file we may not write is analysed read-only (no classification). */
	rc = cli_db_open(ctx, dbpath, cli_db_read_flags(dbpath), &db);
	if (rc) {
		ret = rc;
		goto out;
	}
	ao.run = run;
	ao.by = strcmp(by, "step") == 0 ? CVC_BY_STEP : CVC_BY_RANK;
	ao.step_regex = step_regex;
	ao.classes = classes;
	st = build(db, &ao, which, (int64_t)(kw_us * 1000 + 0.5), &g);
	if (st) {
		ret = cli_fail(st, "%s", *cvc_db_errmsg(db) ? cvc_db_errmsg(db) : cvc_strerror(st));
		goto out;
	}
	warn_profile_gaps(db, run);
	cli_warn_suspects(db, -1);
	if (cvc_rep_table_nrows(g.t) == 0)
		cli_say("note: '%s': %s%s%s\n", dbpath,
			colls ? "no collectives with known sizes"
			: ao.by == CVC_BY_STEP ? "no device activities in step ranges (a trace "
						 "without ProfilerStep#N annotations, or ranges "
						 "--step-regex names, has none: analyze it "
						 "without --by step)"
					       : "no device activities",
			run ? " in run " : "", run ? run : "");
	if (fmt == FMT_CSV)
		cvc_rep_table_write_csv(stdout, g.t);
	else if (fmt == FMT_JSON) {
		if (print_json(&g)) {
			ret = cli_fail(CVC_ERR_NOMEM, "out of memory");
			goto out;
		}
	} else if (cvc_rep_table_nrows(g.t) > 0)
		print_table(&g);
	ret = fflush(stdout) == 0 ? 0 : 1;
out:
	cvc_rep_table_free(g.t);
	return ret;
}
