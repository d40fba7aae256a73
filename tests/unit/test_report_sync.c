/*
 * test_report_sync.c - the report of a projection whose layouts sync every H
 * steps (local SGD / DiLoCo, projector/studies/localsgd2024.yaml).  A layout
 * that syncs rarely is faster per step but needs more tokens for the same
 * loss; the report's best layouts must be the best in tokens that reach the
 * loss (eff_tokens_per_s), and their labels and findings must say what they
 * cost, so a planner reading the first screen is not sold raw throughput.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "cvc/cvc_csv.h"
#include "testutil.h"

#define MAXF 160

/* A CSV written by cvc: header names and rows of fields, one line each. */
struct csv {
	char *text;
	char *hdr[MAXF];
	int nh;
	char *rows[4096];
	int nrows;
};

static void csv_read(struct csv *c, const char *path)
{
	char *p, *line;

	memset(c, 0, sizeof *c);
	c->text = tu_read(path, NULL);
	cr_assert_not_null(c->text, "%s", path);
	p = c->text;
	line = tu_next_line(&p);
	cr_assert_not_null(line);
	c->nh = cvc_csv_split(line, c->hdr, MAXF);
	cr_assert_gt(c->nh, 0);
	while ((line = tu_next_line(&p)) && c->nrows < 4096)
		if (*line)
			c->rows[c->nrows++] = line;
}

static int col(const struct csv *c, const char *name)
{
	for (int i = 0; i < c->nh; i++)
		if (strcmp(c->hdr[i], name) == 0)
			return i;
	cr_assert_fail("no column %s", name);
	return -1;
}

/* Field k of row r, copied into out. */
static const char *field(const struct csv *c, int r, int k, char *out, size_t len)
{
	char line[65536], *f[MAXF + 1];
	int n;

	snprintf(line, sizeof line, "%s", c->rows[r]);
	n = cvc_csv_split(line, f, MAXF);
	cr_assert_gt(n, k, "row %d has %d fields", r, n);
	snprintf(out, len, "%s", f[k]);
	return out;
}

/* Claim: every best layout the headline shows is the one with the most
 * effective tokens/s of its (model, hardware, GPU count), the same one the
 * projector's own `--top 1 --by eff_tokens_per_s` keeps; its label names H,
 * the streamed exchange and the token factor; the model's finding says how
 * many more tokens it needs.  Setup: localsgd2024.yaml, projected, reported
 * without a database.  Tolerance: exact (the same scenario index, words as
 * written). */
Test(report_sync, best_layouts_rank_by_tokens_that_reach_the_loss, .timeout = 120)
{
	char dir[512], args[8192], scen[64], idx[64], lay[512], fin[2048], *err = NULL;
	struct csv top, hl, fd;
	int kept = 0;

	/* tu_tmpdir's buffer is reused by tu_cvc: keep a copy */
	snprintf(dir, sizeof dir, "%s", tu_tmpdir());
	snprintf(args, sizeof args,
		 "project '%s/projector/studies/localsgd2024.yaml' --csv '%s/p.csv' && "
		 "'%s' project '%s/projector/studies/localsgd2024.yaml' --top 1 --by "
		 "eff_tokens_per_s --per model,hardware,gpus --csv '%s/top.csv' && "
		 "'%s' report --no-db -p '%s/p.csv' -o '%s/r.html' --csv-dir '%s/t'",
		 CVC_SOURCE_DIR, dir, CVC_TOOL, CVC_SOURCE_DIR, dir, CVC_TOOL, dir, dir, dir);
	cr_assert_eq(tu_cvc(args, NULL, &err), 0, "%s", err);
	free(err);
	csv_read(&top, tu_path(dir, "top.csv"));
	csv_read(&hl, tu_path(dir, "t/headline.csv"));
	csv_read(&fd, tu_path(dir, "t/findings.csv"));
	cr_assert_gt(hl.nrows, 5);
	for (int r = 0; r < hl.nrows; r++) {
		int found = 0;

		field(&hl, r, col(&hl, "scenario"), scen, sizeof scen);
		for (int q = 0; q < top.nrows && !found; q++)
			found = strcmp(field(&top, q, col(&top, "index"), idx, sizeof idx), scen) == 0;
		cr_expect(found, "headline row %d: scenario %s is not the --top 1 by "
			  "eff_tokens_per_s of its group", r, scen);
		kept += found;
		field(&hl, r, col(&hl, "layout"), lay, sizeof lay);
		cr_expect(strstr(lay, "H=") && strstr(lay, "tokens-x") && strstr(lay, "clusters="),
			  "row %d layout '%s' hides the sync interval or its token cost", r, lay);
	}
	cr_assert_eq(kept, hl.nrows);
	for (int r = 0; r < fd.nrows; r++) {
		field(&fd, r, col(&fd, "finding"), fin, sizeof fin);
		cr_expect(strstr(fin, "It syncs every") && strstr(fin, "tokens for the same loss"),
			  "%s", fin);
	}
	free(top.text);
	free(hl.text);
	free(fd.text);
}
