/*
 * cmd_analyze.c - `cvc analyze`: compute vs communication per run and rank
 * (or step), the per-class breakdown (--classes) and collective bandwidths
 * (--collectives), as an aligned table, CSV or JSON.
 *
 * One table per invocation: the main breakdown, or the classes, or the
 * collectives (--classes and --collectives together are a usage error).
 * CSV / JSON columns:
 *   main:  run,rank,device,kernels,comm_kernels,busy_us,compute_us,comm_us,
 *          hidden_comm_us,exposed_comm_us,overlap_pct,idle_us,span_us
 *          (--by step: a "step" column after device; table format adds
 *          skew_us by rank: span end minus the run's earliest span end,
 *          clock offsets applied)
 *   --classes:     run,rank,device[,step],class,kernels,sum_us,union_us,busy_pct
 *                  (busy_pct = 100 * union / busy of that row)
 *   --collectives: run,rank,coll,bytes,group_size,count,total_us,mean_us,
 *                  algbw_gbps,busbw_gbps (busbw empty / null when unknown)
 * Times are printed in microseconds with 3 decimals, from integer ns, so the
 * CSV is exact.  An empty result (no activities, no step ranges, no sized
 * collectives) prints the header alone (CSV), "[]" (JSON) or nothing
 * (table), with a note on stderr, and exits 0: an empty run is not an error.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <json-c/json.h>
#include <sqlite3.h>

#include "cli.h"
#include "cvc/cvc_csv.h"
#include "commands.h"
#include "cvc/cvc_analyze.h"
#include "cvc/cvc_db.h"

enum fmt { FMT_TABLE, FMT_CSV, FMT_JSON };

/* A printed table: cells as strings, so widths can be measured for "table". */
struct grid {
	size_t ncols, nrows, cap;
	char **cells;          /* nrows x ncols, row 0 is the header */
	int *numeric;          /* right-align this column */
};

static int grid_add(struct grid *g, char **row)
{
	if (g->nrows == g->cap) {
		size_t ncap = g->cap ? g->cap * 2 : 64;
		char **nc = realloc(g->cells, ncap * g->ncols * sizeof *nc);

		if (!nc)
			return -1;
		g->cells = nc;
		g->cap = ncap;
	}
	memcpy(g->cells + g->nrows * g->ncols, row, g->ncols * sizeof *row);
	g->nrows++;
	return 0;
}

static void grid_free(struct grid *g)
{
	for (size_t i = 0; i < g->nrows * g->ncols; i++)
		free(g->cells[i]);
	free(g->cells);
	free(g->numeric);
}

/* "12.345" from ns; exact, no floating point. */
static char *us3(int64_t ns)
{
	char buf[40];
	uint64_t a = ns < 0 ? (uint64_t)0 - (uint64_t)ns : (uint64_t)ns;

	snprintf(buf, sizeof buf, "%s%" PRIu64 ".%03" PRIu64, ns < 0 ? "-" : "", a / 1000,
		 a % 1000);
	return strdup(buf);
}

static char *i64s(int64_t v)
{
	char buf[32];

	snprintf(buf, sizeof buf, "%" PRId64, v);
	return strdup(buf);
}

static char *dbl3(double v)
{
	char buf[64];

	if (isnan(v))
		return strdup("");
	snprintf(buf, sizeof buf, "%.3f", v);
	return strdup(buf);
}

static void print_csv(const struct grid *g)
{
	for (size_t r = 0; r < g->nrows; r++)
		for (size_t c = 0; c < g->ncols; c++) {
			cvc_csv_field(stdout, g->cells[r * g->ncols + c]);
			fputc(c + 1 == g->ncols ? '\n' : ',', stdout);
		}
}

static void print_table(const struct grid *g)
{
	size_t w[32] = {0};

	for (size_t r = 0; r < g->nrows; r++)
		for (size_t c = 0; c < g->ncols && c < 32; c++) {
			size_t l = strlen(g->cells[r * g->ncols + c]);

			if (l > w[c])
				w[c] = l;
		}
	for (size_t r = 0; r < g->nrows; r++)
		for (size_t c = 0; c < g->ncols && c < 32; c++) {
			const char *s = g->cells[r * g->ncols + c];

			if (g->numeric[c])
				printf("%*s", (int)w[c], s);
			else
				printf("%-*s", c + 1 == g->ncols ? 0 : (int)w[c], s);
			fputs(c + 1 == g->ncols ? "\n" : "  ", stdout);
		}
}

/* JSON numbers keep the printed text ("6571.000"), so they equal the CSV. */
static int print_json(const struct grid *g)
{
	json_object *arr = json_object_new_array();

	if (!arr)
		return -1;
	for (size_t r = 1; r < g->nrows; r++) {
		json_object *o = json_object_new_object();

		if (!o || json_object_array_add(arr, o)) {
			json_object_put(o);
			json_object_put(arr);
			return -1;
		}
		for (size_t c = 0; c < g->ncols; c++) {
			const char *key = g->cells[c];
			const char *s = g->cells[r * g->ncols + c];
			json_object *v;

			if (!g->numeric[c])
				v = json_object_new_string(s);
			else if (!*s)
				v = NULL; /* unknown (busbw without a group size) */
			else if (strchr(s, '.'))
				v = json_object_new_double_s(strtod(s, NULL), s);
			else
				v = json_object_new_int64(strtoll(s, NULL, 10));
			json_object_object_add(o, key, v);
		}
	}
	puts(json_object_to_json_string_ext(arr, JSON_C_TO_STRING_PRETTY |
							 JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(arr);
	return 0;
}

/* Adds a row of n strdup'd cells; any NULL (allocation failed) fails it. */
static int grid_row(struct grid *g, char **row)
{
	for (size_t i = 0; i < g->ncols; i++)
		if (!row[i]) {
			for (size_t k = 0; k < g->ncols; k++)
				free(row[k]);
			return -1;
		}
	if (grid_add(g, row)) {
		for (size_t k = 0; k < g->ncols; k++)
			free(row[k]);
		return -1;
	}
	return 0;
}

static int grid_init(struct grid *g, const char *const *hdr, const int *numeric, size_t n)
{
	char *row[32];

	memset(g, 0, sizeof *g);
	g->ncols = n;
	g->numeric = calloc(n, sizeof *g->numeric);
	if (!g->numeric)
		return -1;
	memcpy(g->numeric, numeric, n * sizeof *numeric);
	for (size_t i = 0; i < n; i++)
		row[i] = strdup(hdr[i]);
	return grid_row(g, row);
}

/*
 * Straggler skew, table only: how much later this rank's device went quiet
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
		"idle_us", "span_us", "skew_us"};
	static const int num[] = {0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1};
	const char *h[15];
	int nm[15];
	size_t nc = 0;

	for (size_t i = 0; i < 15; i++) {
		if ((i == 3 && !by_step) || (i == 14 && !with_skew))
			continue;
		h[nc] = hdr[i];
		nm[nc++] = num[i];
	}
	if (grid_init(g, h, nm, nc))
		return -1;
	for (size_t i = 0; i < n; i++) {
		char *row[15];
		size_t k = 0;
		int multi = 0;
		int64_t skew = skew_ns(b, n, i, &multi);

		row[k++] = strdup(b[i].run);
		row[k++] = i64s(b[i].rank);
		row[k++] = i64s(b[i].device);
		if (by_step)
			row[k++] = i64s(b[i].step);
		row[k++] = i64s(b[i].kernels);
		row[k++] = i64s(b[i].comm_kernels);
		row[k++] = us3(b[i].busy_ns);
		row[k++] = us3(b[i].compute_ns);
		row[k++] = us3(b[i].comm_ns);
		row[k++] = us3(b[i].hidden_ns);
		row[k++] = us3(b[i].exposed_ns);
		row[k++] = dbl3(b[i].overlap_pct);
		row[k++] = us3(b[i].idle_ns);
		row[k++] = us3(b[i].span_ns);
		if (with_skew)
			row[k++] = multi ? us3(skew) : strdup("");
		if (grid_row(g, row))
			return -1;
	}
	return 0;
}

static int build_classes(struct grid *g, const cvc_breakdown *b, size_t n, int by_step)
{
	static const char *const hdr[] = {"run", "rank", "device", "step", "class",
					  "kernels", "sum_us", "union_us", "busy_pct"};
	static const int num[] = {0, 1, 1, 1, 0, 1, 1, 1, 1};
	const char *h[9];
	int nm[9];
	size_t nc = 0;

	for (size_t i = 0; i < 9; i++) {
		if (i == 3 && !by_step)
			continue;
		h[nc] = hdr[i];
		nm[nc++] = num[i];
	}
	if (grid_init(g, h, nm, nc))
		return -1;
	for (size_t i = 0; i < n; i++)
		for (size_t c = 0; c < b[i].nclasses; c++) {
			const cvc_class_time *ct = &b[i].classes[c];
			char *row[9];
			size_t k = 0;

			row[k++] = strdup(b[i].run);
			row[k++] = i64s(b[i].rank);
			row[k++] = i64s(b[i].device);
			if (by_step)
				row[k++] = i64s(b[i].step);
			row[k++] = strdup(ct->name);
			row[k++] = i64s(ct->kernels);
			row[k++] = us3(ct->sum_ns);
			row[k++] = us3(ct->union_ns);
			row[k++] = dbl3(b[i].busy_ns ? 100.0 * (double)ct->union_ns /
							   (double)b[i].busy_ns
						     : 0.0);
			if (grid_row(g, row))
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

	if (grid_init(g, hdr, num, 10))
		return -1;
	for (size_t i = 0; i < n; i++) {
		char *row[10];

		row[0] = strdup(s[i].run);
		row[1] = i64s(s[i].rank);
		row[2] = strdup(s[i].coll);
		row[3] = i64s(s[i].bytes);
		row[4] = i64s(s[i].group_size);
		row[5] = i64s(s[i].count);
		row[6] = us3(s[i].total_ns);
		row[7] = dbl3(s[i].mean_ns / 1000.0);
		row[8] = dbl3(s[i].algbw_gbps);
		row[9] = dbl3(s[i].busbw_gbps);
		if (grid_row(g, row))
			return -1;
	}
	return 0;
}

/*
 * A profile that dropped records (full buffers, full disk) undercounts, and
 * one whose CUPTI was held by another client (Nsight Systems, a profiler
 * that subscribed first) or refused activity kinds is empty or partial:
 * say so on stderr for every run concerned (run_meta written by the
 * injection library; 39 is CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED).
 */
static void warn_profile_gaps(cvc_db *db, const char *run)
{
	static const char *const why[] = {
		"%lld records were lost while profiling",
		"another CUPTI client held CUPTI (CUPTI error %lld): nothing was recorded",
		"CUPTI refused %lld activity kind(s): their records are missing",
		"%lld NCCL call(s) were captured into CUDA graphs: replays carry no sizes"};
	sqlite3_stmt *q = NULL;

	if (sqlite3_prepare_v2(cvc_db_sqlite(db),
			       "SELECT r.name, CASE m.key WHEN 'lost_records' THEN 0 "
			       "WHEN 'cupti_subscribe_result' THEN 1 "
			       "WHEN 'nccl_graph_captured_calls' THEN 3 ELSE 2 END AS w, "
			       "CAST(m.value AS INTEGER) FROM run_meta m "
			       "JOIN runs r ON r.id=m.run_id WHERE ((m.key='lost_records' "
			       "AND CAST(m.value AS INTEGER)>0) OR (m.key='cupti_subscribe_result' "
			       "AND CAST(m.value AS INTEGER)=39) OR (m.key='activity_enable_failures' "
			       "AND CAST(m.value AS INTEGER)>0 AND NOT EXISTS (SELECT 1 FROM run_meta s "
			       "WHERE s.run_id=m.run_id AND s.key='cupti_subscribe_result' "
			       "AND CAST(s.value AS INTEGER)<>0)) OR (m.key='nccl_graph_captured_calls' "
			       "AND CAST(m.value AS INTEGER)>0)) AND (?1 IS NULL OR r.name=?1) "
			       "ORDER BY r.id, w",
			       -1, &q, NULL) != SQLITE_OK)
		return;
	sqlite3_bind_text(q, 1, run, -1, SQLITE_STATIC);
	while (sqlite3_step(q) == SQLITE_ROW) {
		int w = sqlite3_column_int(q, 1);

		fprintf(stderr, "warning: run '%s': ", (const char *)sqlite3_column_text(q, 0));
		fprintf(stderr, why[w < 0 || w > 3 ? 0 : w], (long long)sqlite3_column_int64(q, 2));
		fputc('\n', stderr);
	}
	sqlite3_finalize(q);
}

int cmd_analyze(int argc, char **argv, struct cvc_ctx *ctx)
{
	const char *dbpath = CVC_DEFAULT_DB, *format = "table", *by = "rank";
	const char *run = NULL, *step_regex = NULL;
	int classes = 0, colls = 0, npos = 0, ret = 1, rc;
	const struct cli_opt opts[] = {
		{"db", 0, CLI_STR, &dbpath, "PATH", "database (default cvc.db)", NULL},
		{"format", 'f', CLI_CHOICE, &format, "FMT", "output format", "table|csv|json"},
		{"by", 0, CLI_CHOICE, &by, "WHAT", "one row per rank (device) or per step",
		 "rank|step"},
		{"run", 0, CLI_STR, &run, "NAME", "only this run (default: every run)", NULL},
		{"step-regex", 0, CLI_STR, &step_regex, "RE",
		 "step range names (PCRE2; group 1 = step number), default ^ProfilerStep#(\\d+)$",
		 NULL},
		{"classes", 0, CLI_FLAG, &classes, NULL,
		 "per-class breakdown: kernels, sum, union, share of busy", NULL},
		{"collectives", 0, CLI_FLAG, &colls, NULL,
		 "per (rank, collective, size, group size): count, time, algbw, busbw", NULL},
		{0},
	};
	cvc_analyze_opts ao = {0};
	cvc_db *db = NULL;
	cvc_breakdown *rows = NULL;
	cvc_coll_stat *cs = NULL;
	size_t nrows = 0, ncs = 0;
	struct grid g = {0};
	cvc_status st;
	enum fmt fmt;

	rc = cli_parse(ctx->cmd, "[--db PATH] [--format table|csv|json] [--by rank|step] "
				 "[--run NAME] [--step-regex RE] [--classes | --collectives]",
		       opts, argc, argv, &npos, NULL);
	if (rc)
		return rc < 0 ? 0 : rc;
	if (npos > 0)
		return cli_error("%s: unexpected argument '%s'", ctx->cmd, argv[1]);
	if (classes && colls)
		return cli_error("%s: --classes and --collectives print different tables; "
				 "give one", ctx->cmd);
	fmt = strcmp(format, "csv") == 0 ? FMT_CSV
	      : strcmp(format, "json") == 0 ? FMT_JSON
					    : FMT_TABLE;
	if (access(dbpath, F_OK) != 0)
		return cli_error("'%s': no such database (create it with 'cvc import --db %s "
				 "FILES')", dbpath, dbpath);
	/* A file we may not write is analysed read-only (no classification). */
	st = cvc_db_open(dbpath, access(dbpath, W_OK) == 0 ? 0 : CVC_DB_READONLY, &db);
	if (st) {
		cli_error("%s", db ? cvc_db_errmsg(db) : cvc_strerror(st));
		/* An unreadable or foreign file is bad input, not a cvc failure. */
		ret = st == CVC_ERR_NOMEM ? 1 : 2;
		goto out;
	}
	ao.run = run;
	ao.by = strcmp(by, "step") == 0 ? CVC_BY_STEP : CVC_BY_RANK;
	ao.step_regex = step_regex;
	ao.classes = classes;
	if (colls) {
		st = cvc_analyze_collectives(db, &ao, &cs, &ncs);
		if (!st && build_colls(&g, cs, ncs))
			st = CVC_ERR_NOMEM;
	} else {
		st = cvc_analyze_run(db, &ao, &rows, &nrows);
		if (!st && (classes ? build_classes(&g, rows, nrows, ao.by == CVC_BY_STEP)
				    : build_main(&g, rows, nrows, ao.by == CVC_BY_STEP,
					 fmt == FMT_TABLE && ao.by == CVC_BY_RANK)))
			st = CVC_ERR_NOMEM;
	}
	if (st) {
		ret = cli_fail(st, "%s", *cvc_db_errmsg(db) ? cvc_db_errmsg(db) : cvc_strerror(st));
		goto out;
	}
	warn_profile_gaps(db, run);
	cli_warn_suspects(db, -1);
	if (g.nrows <= 1)
		fprintf(stderr, "note: '%s': %s%s%s\n", dbpath,
			colls ? "no collectives with known sizes"
			: ao.by == CVC_BY_STEP ? "no device activities in step ranges"
					       : "no device activities",
			run ? " in run " : "", run ? run : "");
	if (fmt == FMT_CSV)
		print_csv(&g);
	else if (fmt == FMT_JSON) {
		if (print_json(&g)) {
			ret = cli_fail(CVC_ERR_NOMEM, "out of memory");
			goto out;
		}
	} else if (g.nrows > 1)
		print_table(&g);
	ret = fflush(stdout) == 0 ? 0 : 1;
out:
	grid_free(&g);
	cvc_breakdown_free(rows, nrows);
	free(cs);
	cvc_db_close(db);
	return ret;
}
