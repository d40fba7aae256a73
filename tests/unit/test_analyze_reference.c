/*
 * test_analyze_reference.c - the analyzer on the real traces of ../shared
 * against INDEX.md's independent reference table (parsed at test time),
 * through `cvc import` and `cvc analyze --format csv`.
 */
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <criterion/criterion.h>

#include "testutil.h"

#define MAXCOL 20

struct refrow {
	char file[128];
	double v[MAXCOL];
	int dev;
};

/* Splits a markdown table line "| a | b |" into trimmed cells. */
static int md_cells(char *line, char **cells, int max)
{
	int n = 0;
	char *p = strchr(line, '|');

	while (p && n < max) {
		char *q = strchr(p + 1, '|');
		char *s = p + 1, *e;

		if (!q)
			break;
		*q = '\0';
		while (*s == ' ')
			s++;
		e = s + strlen(s);
		while (e > s && e[-1] == ' ')
			*--e = '\0';
		cells[n++] = s;
		p = q;
	}
	return n;
}

/*
 * Reads the "Reference check" table of INDEX.md: *cols gets the header
 * names (static), rows the values.  Returns the row count.
 */
static int read_reference(struct refrow *rows, int max, char hdr[MAXCOL][32], int *ncols)
{
	char *text = tu_read(tu_shared("traces/INDEX.md"), NULL);
	char *line, *cur = text;
	int n = 0, in = 0;

	cr_assert_not_null(text);
	while ((line = tu_next_line(&cur))) {
		char *cells[MAXCOL + 2];
		int k;

		if (!in) {
			if (strncmp(line, "| file | dev |", 14) != 0)
				continue;
			k = md_cells(line, cells, MAXCOL);
			for (int i = 0; i < k; i++)
				snprintf(hdr[i], 32, "%s", cells[i]);
			*ncols = k;
			in = 1;
			continue;
		}
		if (line[0] != '|')
			break;
		if (strncmp(line, "|---", 4) == 0)
			continue;
		k = md_cells(line, cells, MAXCOL);
		if (k != *ncols || n >= max)
			continue;
		snprintf(rows[n].file, sizeof rows[n].file, "%s", cells[0]);
		rows[n].dev = (int)strtol(cells[1], NULL, 10);
		for (int i = 1; i < k; i++)
			rows[n].v[i] = strtod(cells[i], NULL);
		n++;
	}
	free(text);
	cr_assert_gt(n, 10, "INDEX.md reference table not found or changed shape");
	return n;
}

static int col_of(char hdr[MAXCOL][32], int ncols, const char *name)
{
	for (int i = 0; i < ncols; i++)
		if (strcmp(hdr[i], name) == 0)
			return i;
	cr_assert_fail("INDEX.md table has no column '%s'", name);
	return -1;
}

/* Our CSV, parsed: header names and rows of cells (no quoting in these runs). */
struct csv {
	char *text;
	char *hdr[32];
	int ncols;
	char *cell[512][32];
	int nrows;
};

static void csv_parse(struct csv *c, char *text)
{
	char *line, *cur = text;

	memset(c, 0, sizeof *c);
	c->text = text;
	while ((line = tu_next_line(&cur))) {
		char **dst = c->ncols ? c->cell[c->nrows] : c->hdr;
		int k = 0;
		char *p = line;

		for (;;) {
			char *comma = strchr(p, ',');

			if (k < 32)
				dst[k++] = p;
			if (!comma)
				break;
			*comma = '\0';
			p = comma + 1;
		}
		if (!c->ncols)
			c->ncols = k;
		else if (c->nrows < 511)
			c->nrows++;
	}
}

static double csv_get(const struct csv *c, int row, const char *col)
{
	for (int i = 0; i < c->ncols; i++)
		if (strcmp(c->hdr[i], col) == 0)
			return strtod(c->cell[row][i], NULL);
	cr_assert_fail("our CSV has no column '%s'", col);
	return NAN;
}

static int ends_with(const char *s, const char *suf)
{
	size_t a = strlen(s), b = strlen(suf);

	return a >= b && strcmp(s + a - b, suf) == 0;
}

/* Imports every *.json.gz of traces/<dir> into one run; returns the db path. */
static const char *import_dir(const char *dir, double *secs)
{
	char rel[256], args[16384];
	const char *tmp = tu_tmpdir();
	static char db[4096];
	char *err = NULL;
	size_t len;
	DIR *d;
	struct dirent *de;
	int rc, nfiles = 0;
	const char *base;

	snprintf(rel, sizeof rel, "traces/%s", dir);
	base = tu_shared(rel);
	snprintf(db, sizeof db, "%s/ref.db", tmp);
	len = (size_t)snprintf(args, sizeof args, "import --db '%s'", db);
	d = opendir(base);
	cr_assert_not_null(d, "%s", base);
	while ((de = readdir(d))) {
		if (!ends_with(de->d_name, ".json.gz"))
			continue;
		len += (size_t)snprintf(args + len, sizeof args - len, " '%s/%s'", base, de->d_name);
		nfiles++;
		cr_assert_lt(len, sizeof args);
	}
	closedir(d);
	cr_assert_gt(nfiles, 0, "no .json.gz in %s", base);
	rc = tu_cvc(args, NULL, &err);
	cr_assert_eq(rc, 0, "cvc %s: exit %d: %s", args, rc, err ? err : "");
	free(err);
	{
		struct timespec t0, t1;
		char *out = NULL;

		snprintf(args, sizeof args, "analyze --db '%s' --format csv", db);
		clock_gettime(CLOCK_MONOTONIC, &t0);
		rc = tu_cvc(args, &out, NULL);
		clock_gettime(CLOCK_MONOTONIC, &t1);
		free(out);
		if (secs)
			*secs = (double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9;
	}
	return db;
}

static void expect_close(double got, double want, const char *what, const char *file)
{
	double tol = fmax(1e-4 * fabs(want), 0.0015);

	cr_expect(fabs(got - want) <= tol, "%s: %s = %.3f, reference %.3f (tol %.4f)", file,
		  what, got, want, tol);
}

/*
 * Checks every reference row whose file cell starts with prefix (or, for
 * the DLRM run, every workerN row) against `cvc analyze --format csv`.
 */
static void check_reference(const char *dir, const char *prefix, int workers)
{
	static struct refrow ref[64];
	char hdr[MAXCOL][32];
	int ncols = 0, nref = read_reference(ref, 64, hdr, &ncols), checked = 0;
	const char *db = import_dir(dir, NULL);
	char args[4200], *out = NULL, *err = NULL;
	struct csv *c = calloc(1, sizeof *c);
	static const char *const map[][2] = {
		{"busy_us", "busy_all"},         {"compute_us", "comp_union"},
		{"comm_us", "comm_union"},       {"hidden_comm_us", "overlap"},
		{"exposed_comm_us", "exposed_comm"}, {"span_us", "span"},
		{"kernels", "n_kern"},           {"comm_kernels", "n_comm"},
		{"overlap_pct", "overlap_pct"},
	};
	int rc;

	cr_assert_not_null(c);
	snprintf(args, sizeof args, "analyze --db '%s' --format csv", db);
	rc = tu_cvc(args, &out, &err);
	cr_assert_eq(rc, 0, "exit %d: %s", rc, err);
	csv_parse(c, out);
	cr_assert_gt(c->nrows, 0, "no rows: %s", err);
	for (int i = 0; i < nref; i++) {
		int match = workers ? strstr(ref[i].file, "worker") != NULL
				    : strncmp(ref[i].file, prefix, strlen(prefix)) == 0;
		int found = -1;

		if (!match || strstr(ref[i].file, "--gpu-step"))
			continue;
		for (int r = 0; r < c->nrows; r++)
			if ((int)csv_get(c, r, "device") == ref[i].dev)
				found = r;
		cr_expect_geq(found, 0, "%s: no row for device %d", ref[i].file, ref[i].dev);
		if (found < 0)
			continue;
		for (size_t m = 0; m < sizeof map / sizeof map[0]; m++) {
			int col = col_of(hdr, ncols, map[m][1]);

			if (strcmp(map[m][0], "overlap_pct") == 0)
				/* The reference rounds the percentage to 3 decimals. */
				cr_expect(fabs(csv_get(c, found, map[m][0]) - ref[i].v[col]) <= 0.0015,
					  "%s: overlap_pct %.3f vs %.3f", ref[i].file,
					  csv_get(c, found, map[m][0]), ref[i].v[col]);
			else
				expect_close(csv_get(c, found, map[m][0]), ref[i].v[col], map[m][0],
					     ref[i].file);
		}
		/* idle is span - busy by definition. */
		expect_close(csv_get(c, found, "idle_us"),
			     ref[i].v[col_of(hdr, ncols, "span")] -
				     ref[i].v[col_of(hdr, ncols, "busy_all")],
			     "idle_us", ref[i].file);
		checked++;
	}
	cr_expect_gt(checked, 0, "no INDEX.md row for %s", dir);
	if (workers)
		cr_expect_eq(checked, workers, "DLRM: one row per worker");
	free(c->text);
	free(c);
	free(err);
}

Test(reference, param_dlrm_8ranks)
{
	check_reference("param-dlrm-8xv100", NULL, 8);
}

Test(reference, hta_ddp_v100_2rank)
{
	double secs = 0;

	check_reference("hta-ddp-v100-2rank", "hta-ddp-v100-2rank", 0);
	import_dir("hta-ddp-v100-2rank", &secs);
	cr_log_info("analyze of the 216k-event trace: %.3f s (tool start included)", secs);
}

Test(reference, hta_trace_diff_a100_w8)
{
	check_reference("hta-trace-diff-a100-w8", "hta-trace-diff-a100-w8", 0);
}

Test(reference, hta_trace_diff_v100_w2)
{
	check_reference("hta-trace-diff-v100-w2", "hta-trace-diff-v100-w2", 0);
}

Test(reference, hta_nccl_args_a100_w2)
{
	check_reference("hta-nccl-args-a100-w2", "hta-nccl-args-a100-w2", 0);
}

Test(reference, hta_a100_80g_w16_rank0)
{
	check_reference("hta-a100-80g-w16-rank0", "hta-a100-80g-w16-rank0", 0);
}

Test(reference, tracelens_whole_trace)
{
	check_reference("tracelens-h100-qwen05b", "tracelens-h100-qwen05b (whole", 0);
}

/* TraceLens's window: the GPU ProfilerStep#6 span. */
Test(reference, tracelens_gpu_step)
{
	static struct refrow ref[64];
	char hdr[MAXCOL][32];
	int ncols = 0, nref = read_reference(ref, 64, hdr, &ncols), want = -1, got = -1;
	const char *db = import_dir("tracelens-h100-qwen05b", NULL);
	char args[4200], *out = NULL, *err = NULL;
	struct csv *c = calloc(1, sizeof *c);
	int rc;

	for (int i = 0; i < nref; i++)
		if (strstr(ref[i].file, "tracelens") && strstr(ref[i].file, "--gpu-step"))
			want = i;
	cr_assert_geq(want, 0, "INDEX.md has no tracelens --gpu-step row");
	snprintf(args, sizeof args, "analyze --db '%s' --format csv --by step", db);
	rc = tu_cvc(args, &out, &err);
	cr_assert_eq(rc, 0, "exit %d: %s", rc, err);
	csv_parse(c, out);
	for (int r = 0; r < c->nrows; r++)
		if ((int)csv_get(c, r, "step") == 6)
			got = r;
	cr_assert_geq(got, 0, "no ProfilerStep#6 row:\n%s", err);
	/* busy is every activity's union, TraceLens's busy_time */
	expect_close(csv_get(c, got, "busy_us"), ref[want].v[col_of(hdr, ncols, "busy_all")],
		     "busy_us", "tracelens --gpu-step");
	expect_close(csv_get(c, got, "span_us"), ref[want].v[col_of(hdr, ncols, "span")],
		     "span_us", "tracelens --gpu-step");
	cr_expect_eq((int)csv_get(c, got, "kernels"),
		     (int)ref[want].v[col_of(hdr, ncols, "n_kern")]);
	free(c->text);
	free(c);
	free(err);
}
