/*
 * absent.c - the first screen's sentence for a model that has no best
 * layout at a GPU count another model has one: why, from the projection
 * (the study never priced it there, none of its layouts there is valid
 * and the projector's reason, or none of the valid ones fits in memory
 * and by how much), instead of the page's guess that it "does not fit".
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "headline.h"

/* The scenario rows of model m at g GPUs: how many, how many valid, how
 * many of those fit, the least memory of a valid one against its HBM, and
 * the reason most of the invalid ones give (a pointer into sc). */
struct absent_tally {
	size_t n, valid, fit, top_n;
	double mem, hbm;
	const char *top;
};

static void tally(const cvc_rep_table *sc, const struct rep_roles *ro, const char *m, double g,
		  struct absent_tally *a)
{
	long rc = cvc_rep_table_find(sc, "reason"), hc = cvc_rep_table_find(sc, "hbm_gb");
	char buf[64];

	memset(a, 0, sizeof *a);
	a->mem = INFINITY;
	a->hbm = NAN;
	for (size_t r = 0; r < sc->nrows; r++) {
		const char *why;
		size_t same = 0;

		if (rep_num(sc, r, ro->col[REP_ROLE_GPUS]) != g ||
		    strcmp(rep_text(sc, r, ro->col[REP_ROLE_MODEL], buf, sizeof buf), m) != 0)
			continue;
		a->n++;
		if (rep_num(sc, r, ro->col[REP_ROLE_VALID]) != 0) {
			double mem = rep_num(sc, r, ro->col[REP_ROLE_MEM]);

			a->valid++;
			a->fit += rep_num(sc, r, ro->col[REP_ROLE_FITS]) != 0;
			if (mem < a->mem)
				a->mem = mem, a->hbm = rep_num(sc, r, hc);
			continue;
		}
		why = rep_text(sc, r, rc, buf, sizeof buf);
		if (!*why || why == buf) /* a number is no reason */
			continue;
		/* the most frequent reason: counted when first met */
		for (size_t j = 0; j < r; j++)
			if (rep_num(sc, j, ro->col[REP_ROLE_GPUS]) == g &&
			    rep_num(sc, j, ro->col[REP_ROLE_VALID]) == 0 &&
			    cvc_rep_table_str(sc, j, (size_t)rc) &&
			    strcmp(cvc_rep_table_str(sc, j, (size_t)rc), why) == 0 &&
			    strcmp(rep_text(sc, j, ro->col[REP_ROLE_MODEL], buf, sizeof buf), m) == 0)
				goto seen;
		for (size_t j = r; j < sc->nrows; j++)
			same += rep_num(sc, j, ro->col[REP_ROLE_GPUS]) == g &&
				rep_num(sc, j, ro->col[REP_ROLE_VALID]) == 0 &&
				cvc_rep_table_str(sc, j, (size_t)rc) &&
				strcmp(cvc_rep_table_str(sc, j, (size_t)rc), why) == 0 &&
				strcmp(rep_text(sc, j, ro->col[REP_ROLE_MODEL], buf, sizeof buf), m) == 0;
		if (same > a->top_n)
			a->top_n = same, a->top = cvc_rep_table_str(sc, r, (size_t)rc);
seen:;
	}
}

/* The sentence for model m at g GPUs ("16,384" in gs). */
static void absent_text(const cvc_rep_table *sc, const struct rep_roles *ro, const char *m,
			double g, const char *gs, char *buf, size_t len)
{
	struct absent_tally a;
	char x[32], y[32];

	tally(sc, ro, m, g, &a);
	if (!a.n)
		snprintf(buf, len, "%s at %s GPUs: not in the study at this GPU count (no layout of "
			 "it was priced here).", m, gs);
	else if (!a.valid)
		snprintf(buf, len, "%s at %s GPUs: no valid layout (%zu priced here)%s%s%s.", m,
			 gs, a.n, a.top ? ": " : "", a.top ? a.top : "",
			 a.top && a.top_n < a.n ? " (the most frequent reason)" : "");
	else if (!a.fit && isfinite(a.mem) && isfinite(a.hbm))
		snprintf(buf, len, "%s at %s GPUs: no layout fits in memory (%zu valid here): the "
			 "least needs %s GB per GPU of %s GB usable.", m, gs, a.valid,
			 rep_fmt_num(round(a.mem * 10) / 10, x, sizeof x),
			 rep_fmt_num(round(a.hbm * 10) / 10, y, sizeof y));
	else if (!a.fit)
		snprintf(buf, len, "%s at %s GPUs: no layout fits in memory (%zu valid here).", m,
			 gs, a.valid);
	else
		snprintf(buf, len, "%s at %s GPUs: its layouts that fit give no tokens/s.", m, gs);
}

static int in_headline(const cvc_rep_table *hl, const char *m, double g)
{
	for (size_t i = 0; i < hl->nrows; i++)
		if (rep_num(hl, i, H_GPUS) == g && strcmp(rep_cell_at(hl, i, H_MODEL)->s, m) == 0)
			return 1;
	return 0;
}

int rep_absent_findings(const cvc_rep_table *sc, const struct rep_roles *ro,
			const cvc_rep_table *hl, cvc_rep_table *f)
{
	char text[1200], gs[40];

	for (size_t i = 0; i < hl->nrows; i++) {
		const char *m = rep_cell_at(hl, i, H_MODEL)->s;
		int first = 1;

		for (size_t j = 0; j < i && first; j++)
			first = strcmp(rep_cell_at(hl, j, H_MODEL)->s, m) != 0;
		if (!first)
			continue;
		/* every GPU count the first screen offers */
		for (size_t k = 0; k < hl->nrows; k++) {
			double g = rep_num(hl, k, H_GPUS);
			int seen = 0;
			long r;

			for (size_t j = 0; j < k && !seen; j++)
				seen = rep_num(hl, j, H_GPUS) == g;
			if (seen || in_headline(hl, m, g))
				continue;
			rep_fmt_count(g, gs, sizeof gs);
			absent_text(sc, ro, m, g, gs, text, sizeof text);
			r = cvc_rep_table_add_row(f);
			if (r < 0 || cvc_rep_table_set_str(f, (size_t)r, 0, m) ||
			    cvc_rep_table_set_str(f, (size_t)r, 5, text))
				return -1;
			cvc_rep_table_set_num(f, (size_t)r, 1, g);
			cvc_rep_table_set_num(f, (size_t)r, 4, 0);
		}
	}
	return 0;
}
