/*
 * headline.c - the report's first screen: for each model, hardware and GPU
 * count, the best layout's communication and exposed shares with their 90%
 * intervals and the change to the next hardware generation; one sentence
 * per model computed from those numbers; and the tables of the charts drawn
 * from the same best layouts (exposed time by type, memory against HBM,
 * sensitivity to each hardware factor).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cvc/cvc_model.h"
#include "rep_proj.h"

/* The projector's communication types, in its column order. */
static const char *const ctype[] = {"tp", "pp", "dp", "fsdp", "ep", "cp", "xc"};
#define NTYPE (sizeof ctype / sizeof ctype[0])

/* One best layout with its hardware generation. */
struct hrow {
	const struct rep_gkey *g;
	int gen; /* 1 = oldest hardware of the projection */
};

/* A distinct hardware label and what orders it among generations. */
struct hwgen {
	const char *hw;
	double peak, hbm; /* bf16 peak and HBM bandwidth, scale factors applied */
	size_t first;     /* first best row on it: the order of unknown GPUs */
};

static double scale(const cvc_rep_table *sc, size_t r, const char *col)
{
	double v = rep_num(sc, r, cvc_rep_table_find(sc, col));

	return isfinite(v) && v > 0 ? v : 1;
}

static int cmp_gen(const void *pa, const void *pb)
{
	const struct hwgen *a = pa, *b = pb;
	int ka = isfinite(a->peak), kb = isfinite(b->peak);

	if (ka != kb)
		return kb - ka; /* GPUs the catalog knows first */
	if (ka && a->peak != b->peak)
		return a->peak < b->peak ? -1 : 1;
	if (ka && a->hbm != b->hbm)
		return a->hbm < b->hbm ? -1 : 1;
	return a->first < b->first ? -1 : a->first > b->first;
}

/*
 * Generation of each row: hardware ordered by the catalog's bf16 peak times
 * the compute scale (then HBM bandwidth times its scale), so "B200 compute
 * x2" follows B200 and the order is computed, never assumed from the file.
 * -1 on no memory.
 */
static int generations(const cvc_rep_table *sc, const struct rep_roles *ro, struct hrow *h,
		       size_t n)
{
	struct hwgen *gv = calloc(n ? n : 1, sizeof *gv);
	cvc_hw_catalog *cat = NULL;
	size_t ng = 0;

	if (!gv)
		return -1;
	if (cvc_hw_catalog_new(&cat) != CVC_OK) {
		cvc_hw_catalog_free(cat); /* unknown order: the file's */
		cat = NULL;
	}
	for (size_t i = 0; i < n; i++) {
		size_t r = h[i].g->row, k;
		char buf[64];
		const cvc_hw_spec *sp;

		for (k = 0; k < ng && strcmp(gv[k].hw, h[i].g->hw); k++)
			;
		if (k < ng)
			continue;
		sp = cat ? cvc_hw_catalog_lookup(cat, rep_text(sc, r, ro->col[REP_ROLE_HW], buf,
								  sizeof buf)) : NULL;
		gv[ng].hw = h[i].g->hw;
		gv[ng].peak = sp && sp->peak_tflops[CVC_HW_BF16] > 0
				      ? sp->peak_tflops[CVC_HW_BF16] * scale(sc, r, "scale_compute")
				      : NAN;
		gv[ng].hbm = sp ? sp->hbm_bw_gbps * scale(sc, r, "scale_hbm_bw") : NAN;
		gv[ng++].first = i;
	}
	cvc_hw_catalog_free(cat);
	qsort(gv, ng, sizeof *gv, cmp_gen);
	for (size_t i = 0; i < n; i++)
		for (size_t k = 0; k < ng; k++)
			if (strcmp(gv[k].hw, h[i].g->hw) == 0)
				h[i].gen = (int)k + 1;
	free(gv);
	return 0;
}

/* Headline order: model (by size), GPU count, hardware generation. */
static int cmp_hrow(const void *pa, const void *pb)
{
	const struct hrow *a = pa, *b = pb;
	int c;

	if (a->g->params != b->g->params && isfinite(a->g->params) && isfinite(b->g->params))
		return a->g->params < b->g->params ? -1 : 1;
	c = strcmp(a->g->model, b->g->model);
	if (c)
		return c;
	if (a->g->gpus != b->g->gpus)
		return a->g->gpus < b->g->gpus ? -1 : 1;
	return a->gen - b->gen;
}

static int same_group(const struct hrow *a, const struct hrow *b)
{
	return strcmp(a->g->model, b->g->model) == 0 && a->g->gpus == b->g->gpus;
}

/* A column of sc named stem + "_" + unit (+ suffix), or -1. */
static long unit_col(const cvc_rep_table *sc, const struct rep_roles *ro, const char *stem,
		     const char *suffix)
{
	char name[64];

	snprintf(name, sizeof name, "%s_%s%s", stem, ro->unit, suffix);
	return cvc_rep_table_find(sc, name);
}

/* The type with the most exposed time in row r, and its fraction of the
 * typed total; -1 when nothing typed is exposed. */
static int top_type(const cvc_rep_table *sc, const struct rep_roles *ro, size_t r,
		    double *frac)
{
	double sum = 0, best = 0;
	int top = -1;

	for (size_t k = 0; k < NTYPE; k++) {
		char stem[32];
		double v;

		snprintf(stem, sizeof stem, "exposed_%s", ctype[k]);
		v = rep_num(sc, r, unit_col(sc, ro, stem, ""));
		if (!(v > 0))
			continue;
		sum += v;
		if (v > best) {
			best = v;
			top = (int)k;
		}
	}
	*frac = top >= 0 ? best / sum : NAN;
	return top;
}

enum {
	H_MODEL, H_PARAMS, H_GPUS, H_HW, H_GEN, H_LAYOUT, H_TPG, H_CS, H_CS_LO, H_CS_HI, H_ES,
	H_ES_LO, H_ES_HI, H_TOP, H_TOP_FRAC, H_NEXT, H_D_CS, H_D_ES, H_TPG_RATIO, H_SCEN, H_N
};

static cvc_rep_table *headline_new(void)
{
	static const char *const cols[H_N] = {
		"model", "params_b", "gpus", "hw", "generation", "layout", "tokens_per_s_per_gpu",
		"comm_share", "comm_share_lo90", "comm_share_hi90", "exposed_share",
		"exposed_share_lo90", "exposed_share_hi90", "top_exposed_type",
		"top_exposed_frac", "next_hw", "next_comm_share_change",
		"next_exposed_share_change", "next_tokens_per_gpu_ratio", "scenario"};

	return cvc_rep_table_new("headline", "Best layout per model, hardware and GPU count: "
				 "communication and exposed share (90% interval) and the change "
				 "to the next hardware generation", H_N, cols);
}

static double tokens_per_gpu(const cvc_rep_table *sc, const struct rep_roles *ro, size_t r)
{
	double v = rep_num(sc, r, cvc_rep_table_find(sc, "tokens_per_s_per_gpu"));

	return isfinite(v) ? v : rep_num(sc, r, ro->col[REP_ROLE_TOKENS]) /
					 rep_num(sc, r, ro->col[REP_ROLE_GPUS]);
}

/* Fills row k of t from best layout h[i] and, within its group, the next generation. */
static int headline_row(cvc_rep_table *t, const cvc_rep_table *sc, const struct rep_roles *ro,
			const struct hrow *h, size_t i, size_t n)
{
	static const char *const iv[4] = {"comm_share_lo", "comm_share_hi", "exposed_share_lo",
					  "exposed_share_hi"};
	size_t r = h[i].g->row;
	long k = cvc_rep_table_add_row(t);
	double frac, idx = rep_num(sc, r, ro->col[REP_ROLE_INDEX]);
	char lay[160];
	int top = top_type(sc, ro, r, &frac);

	if (k < 0)
		return -1;
	rep_layout(sc, r, lay, sizeof lay);
	if (cvc_rep_table_set_str(t, (size_t)k, H_MODEL, h[i].g->model) ||
	    cvc_rep_table_set_str(t, (size_t)k, H_HW, h[i].g->hw) ||
	    cvc_rep_table_set_str(t, (size_t)k, H_LAYOUT, lay) ||
	    cvc_rep_table_set_str(t, (size_t)k, H_TOP, top >= 0 ? ctype[top] : ""))
		return -1;
	cvc_rep_table_set_num(t, (size_t)k, H_PARAMS, h[i].g->params);
	cvc_rep_table_set_num(t, (size_t)k, H_GPUS, h[i].g->gpus);
	cvc_rep_table_set_num(t, (size_t)k, H_GEN, h[i].gen);
	cvc_rep_table_set_num(t, (size_t)k, H_TPG, tokens_per_gpu(sc, ro, r));
	cvc_rep_table_set_num(t, (size_t)k, H_CS, rep_num(sc, r, ro->col[REP_ROLE_COMM_SHARE]));
	cvc_rep_table_set_num(t, (size_t)k, H_ES, rep_num(sc, r, ro->col[REP_ROLE_EXPOSED_SHARE]));
	cvc_rep_table_set_num(t, (size_t)k, H_CS_LO, rep_num(sc, r, cvc_rep_table_find(sc, iv[0])));
	cvc_rep_table_set_num(t, (size_t)k, H_CS_HI, rep_num(sc, r, cvc_rep_table_find(sc, iv[1])));
	cvc_rep_table_set_num(t, (size_t)k, H_ES_LO, rep_num(sc, r, cvc_rep_table_find(sc, iv[2])));
	cvc_rep_table_set_num(t, (size_t)k, H_ES_HI, rep_num(sc, r, cvc_rep_table_find(sc, iv[3])));
	cvc_rep_table_set_num(t, (size_t)k, H_TOP_FRAC, frac);
	cvc_rep_table_set_num(t, (size_t)k, H_SCEN, isfinite(idx) ? idx : (double)r);
	if (i + 1 < n && same_group(&h[i], &h[i + 1])) {
		size_t q = h[i + 1].g->row;

		if (cvc_rep_table_set_str(t, (size_t)k, H_NEXT, h[i + 1].g->hw))
			return -1;
		cvc_rep_table_set_num(t, (size_t)k, H_D_CS,
				      rep_num(sc, q, ro->col[REP_ROLE_COMM_SHARE]) -
					      rep_num(sc, r, ro->col[REP_ROLE_COMM_SHARE]));
		cvc_rep_table_set_num(t, (size_t)k, H_D_ES,
				      rep_num(sc, q, ro->col[REP_ROLE_EXPOSED_SHARE]) -
					      rep_num(sc, r, ro->col[REP_ROLE_EXPOSED_SHARE]));
		cvc_rep_table_set_num(t, (size_t)k, H_TPG_RATIO,
				      tokens_per_gpu(sc, ro, q) / tokens_per_gpu(sc, ro, r));
	}
	return 0;
}

/* "35% (28–41%)": a share with its interval when there is one. */
static const char *pct(const cvc_rep_table *t, size_t r, int c, int lo, char *buf, size_t len)
{
	double v = rep_num(t, r, c), a = rep_num(t, r, lo), b = rep_num(t, r, lo + 1);

	if (isfinite(a) && isfinite(b))
		snprintf(buf, len, "%.0f%% (%.0f\xe2\x80\x93%.0f%%)", 100 * v, 100 * a, 100 * b);
	else
		snprintf(buf, len, "%.0f%%", 100 * v);
	return buf;
}

static void upper(const char *s, char *buf, size_t len)
{
	size_t i = 0;

	for (; s[i] && i + 1 < len; i++)
		buf[i] = (char)(s[i] >= 'a' && s[i] <= 'z' ? s[i] - 32 : s[i]);
	buf[i] = '\0';
}

/* Which type dominates the exposed time over rows a..b of t, and how it moves. */
static void type_clause(const cvc_rep_table *t, size_t a, size_t b, char *buf, size_t len)
{
	const char *ta = rep_cell_at(t, a, H_TOP)->s, *tb = rep_cell_at(t, b, H_TOP)->s;
	char ua[16], ub[16];
	int same = 1;

	for (size_t i = a; i <= b; i++)
		same = same && strcmp(rep_cell_at(t, i, H_TOP)->s, ta) == 0;
	upper(ta, ua, sizeof ua);
	upper(tb, ub, sizeof ub);
	if (!*ta && !*tb)
		snprintf(buf, len, " No communication is exposed.");
	else if (same && a == b)
		snprintf(buf, len, " %s communication is the largest part of the exposed time "
			 "(%.0f%% of it).", ua, 100 * rep_num(t, a, H_TOP_FRAC));
	else if (same || strcmp(ta, tb) == 0)
		snprintf(buf, len, " %s communication is the largest part of the exposed time %s "
			 "(%.0f%% of it on %s, %.0f%% on %s).", ua,
			 same ? "on every generation" : "on the oldest and the newest hardware",
			 100 * rep_num(t, a, H_TOP_FRAC), rep_cell_at(t, a, H_HW)->s,
			 100 * rep_num(t, b, H_TOP_FRAC), rep_cell_at(t, b, H_HW)->s);
	else
		snprintf(buf, len, " The largest part of the exposed time moves from %s (%.0f%%) "
			 "on %s to %s (%.0f%%) on %s.", *ua ? ua : "none",
			 100 * rep_num(t, a, H_TOP_FRAC), rep_cell_at(t, a, H_HW)->s,
			 *ub ? ub : "none", 100 * rep_num(t, b, H_TOP_FRAC),
			 rep_cell_at(t, b, H_HW)->s);
}

/*
 * The token side of the best layout in scenario row r when it syncs every
 * H steps (local SGD / DiLoCo): " It syncs every 100 steps (streamed) and
 * needs 15% more tokens for the same loss."  Empty for layouts that sync
 * every step.
 */
static void sync_clause(const cvc_rep_table *sc, size_t r, char *buf, size_t len)
{
	double H = rep_num(sc, r, cvc_rep_table_find(sc, "local_sgd_h"));
	double f = rep_num(sc, r, cvc_rep_table_find(sc, "token_factor"));
	const char *streamed =
		rep_num(sc, r, cvc_rep_table_find(sc, "outer_overlap")) > 0 ? " (streamed)" : "";

	buf[0] = '\0';
	if (!(H > 1))
		return;
	if (isnan(f))
		f = 1;
	if (!isfinite(f))
		snprintf(buf, len, " It syncs every %.0f steps%s, and no token budget reaches the "
			 "loss of syncing every step (docs/MODELS.md, local SGD).", H, streamed);
	else if (fabs(f - 1) < 0.005)
		snprintf(buf, len, " It syncs every %.0f steps%s and needs about as many tokens for "
			 "the same loss (docs/MODELS.md, local SGD).", H, streamed);
	else
		snprintf(buf, len, " It syncs every %.0f steps%s and needs %.0f%% %s tokens for the "
			 "same loss (docs/MODELS.md, local SGD).", H, streamed, fabs(f - 1) * 100,
			 f >= 1 ? "more" : "fewer");
}

/* The finding of one model: rows a..b of the headline (oldest to newest
 * hardware at one GPU count) as a sentence; sync: row b's sync_clause(). */
static void finding(const cvc_rep_table *t, size_t a, size_t b, const char *sync, char *buf,
		    size_t len)
{
	char ca[48], cb[48], ea[48], eb[48], g[32], moves[160], tail[400];
	double d = rep_num(t, b, H_ES) - rep_num(t, a, H_ES);
	const char *m = rep_cell_at(t, a, H_MODEL)->s, *ha = rep_cell_at(t, a, H_HW)->s;

	rep_fmt_num(rep_num(t, a, H_GPUS), g, sizeof g);
	pct(t, a, H_CS, H_CS_LO, ca, sizeof ca);
	pct(t, b, H_CS, H_CS_LO, cb, sizeof cb);
	pct(t, a, H_ES, H_ES_LO, ea, sizeof ea);
	pct(t, b, H_ES, H_ES_LO, eb, sizeof eb);
	type_clause(t, a, b, tail, sizeof tail);
	if (a == b) {
		snprintf(buf, len, "%s at %s GPUs on %s: communication is %s of the step and %s "
			 "of the step is exposed.%s%s", m, g, ha, ca, ea, tail, sync);
		return;
	}
	/* Half a point either way reads as no change at the precision shown. */
	if (fabs(d) < 0.005)
		snprintf(moves, sizeof moves, "stays near %s", eb);
	else
		snprintf(moves, sizeof moves, "%s from %s to %s", d > 0 ? "rises" : "falls", ea, eb);
	snprintf(buf, len, "%s at %s GPUs: communication is %s of the step on %s and %s on %s; "
		 "the exposed share %s, and tokens/s per GPU change %.2gx.%s%s", m, g, ca, ha, cb,
		 rep_cell_at(t, b, H_HW)->s, moves, rep_num(t, b, H_TPG) / rep_num(t, a, H_TPG),
		 tail, sync);
}

/*
 * findings: per model (rows of the headline grouped by model), the largest
 * GPU count that has the most hardware generations, oldest to newest.
 */
static int findings_table(const cvc_rep_table *hl, const cvc_rep_table *sc,
			  const struct hrow *h, struct rep_tables *out)
{
	static const char *const cols[] = {"model", "gpus", "from_hw", "to_hw", "finding"};
	cvc_rep_table *t = cvc_rep_table_new("findings", "What the projection says, per model",
					     5, cols);
	char text[1200], sync[200];
	int rc = t ? 0 : -1;

	for (size_t i = 0, j; !rc && i < hl->nrows; i = j) {
		size_t a = i, b = i, best = 0;
		long k;

		for (j = i; j < hl->nrows && strcmp(rep_cell_at(hl, j, H_MODEL)->s,
						   rep_cell_at(hl, i, H_MODEL)->s) == 0; j++) {
			size_t e = j;

			while (e + 1 < hl->nrows && rep_num(hl, e + 1, H_GPUS) == rep_num(hl, j, H_GPUS) &&
			       strcmp(rep_cell_at(hl, e + 1, H_MODEL)->s, rep_cell_at(hl, j, H_MODEL)->s) == 0)
				e++;
			if (e - j + 1 >= best) { /* ties: the larger count, later in order */
				best = e - j + 1;
				a = j;
				b = e;
			}
			j = e;
		}
		sync_clause(sc, h[b].g->row, sync, sizeof sync);
		finding(hl, a, b, sync, text, sizeof text);
		k = cvc_rep_table_add_row(t);
		if (k < 0 || cvc_rep_table_set_str(t, (size_t)k, 0, rep_cell_at(hl, a, H_MODEL)->s) ||
		    cvc_rep_table_set_str(t, (size_t)k, 2, rep_cell_at(hl, a, H_HW)->s) ||
		    cvc_rep_table_set_str(t, (size_t)k, 3, rep_cell_at(hl, b, H_HW)->s) ||
		    cvc_rep_table_set_str(t, (size_t)k, 4, text)) {
			rc = -1;
			break;
		}
		cvc_rep_table_set_num(t, (size_t)k, 1, rep_num(hl, a, H_GPUS));
	}
	if (!rc)
		rc = rep_tables_take(out, &t);
	cvc_rep_table_free(t);
	return rc;
}

/*
 * A chart's table: model, hw, gpus, layout, scenario of each best layout,
 * then the columns of sc named in want[0..nwant) that it has.  Left out
 * (0) when sc has none of them.  -1 on no memory.
 */
static int chart_table(const cvc_rep_table *sc, const struct rep_roles *ro,
		       const struct hrow *h, size_t n, const char *name, const char *title,
		       const char *const *want, size_t nwant, struct rep_tables *out)
{
	const char *cols[5 + 16] = {"model", "hw", "gpus", "layout", "scenario"};
	long src[16];
	size_t nc = 5;
	cvc_rep_table *t;
	int rc = 0;

	for (size_t w = 0; w < nwant && w < 16; w++) {
		long c = cvc_rep_table_find(sc, want[w]);

		if (c >= 0) {
			src[nc - 5] = c;
			cols[nc++] = want[w];
		}
	}
	if (nc == 5)
		return 0;
	t = cvc_rep_table_new(name, title, nc, cols);
	for (size_t i = 0; t && !rc && i < n; i++) {
		size_t r = h[i].g->row;
		long k = cvc_rep_table_add_row(t);
		double idx = rep_num(sc, r, ro->col[REP_ROLE_INDEX]);
		char lay[160];

		rep_layout(sc, r, lay, sizeof lay);
		if (k < 0 || cvc_rep_table_set_str(t, (size_t)k, 0, h[i].g->model) ||
		    cvc_rep_table_set_str(t, (size_t)k, 1, h[i].g->hw) ||
		    cvc_rep_table_set_str(t, (size_t)k, 3, lay)) {
			rc = -1;
			break;
		}
		cvc_rep_table_set_num(t, (size_t)k, 2, h[i].g->gpus);
		cvc_rep_table_set_num(t, (size_t)k, 4, isfinite(idx) ? idx : (double)r);
		for (size_t c = 5; c < nc; c++)
			cvc_rep_table_set_num(t, (size_t)k, c, rep_num(sc, r, src[c - 5]));
	}
	if (!t)
		return -1;
	if (!rc)
		rc = rep_tables_take(out, &t);
	cvc_rep_table_free(t);
	return rc;
}

/* The charts' tables: exposed time by type (with the total's interval),
 * memory per GPU against HBM, gain from 2x each hardware factor. */
static int chart_tables(const cvc_rep_table *sc, const struct rep_roles *ro,
			const struct hrow *h, size_t n, struct rep_tables *out)
{
	static const char *const mem[] = {"mem_params_gb", "mem_act_gb", "mem_buf_gb", "mem_gb",
					  "hbm_gb"};
	static const char *const gain[] = {"gain_compute", "gain_hbm_bw", "gain_hbm_cap",
					   "gain_intra_bw", "gain_inter_bw"};
	char names[NTYPE + 4][48];
	const char *exp[NTYPE + 4];
	size_t ne = 0;

	for (size_t k = 0; k < NTYPE; k++)
		snprintf(names[ne++], sizeof names[0], "exposed_%s_%s", ctype[k], ro->unit);
	snprintf(names[ne++], sizeof names[0], "exposed_%s", ro->unit);
	snprintf(names[ne++], sizeof names[0], "exposed_%s_lo", ro->unit);
	snprintf(names[ne++], sizeof names[0], "exposed_%s_hi", ro->unit);
	snprintf(names[ne++], sizeof names[0], "step_%s", ro->unit);
	for (size_t k = 0; k < ne; k++)
		exp[k] = names[k];
	/* Without a typed column there is nothing to stack. */
	if (unit_col(sc, ro, "exposed_tp", "") < 0 && unit_col(sc, ro, "exposed_dp", "") < 0)
		ne = 0;
	if ((ne && chart_table(sc, ro, h, n, "exposed_by_type",
			       "Exposed communication by type (best layouts), with the 90% interval of the total",
			       exp, ne, out)) ||
	    chart_table(sc, ro, h, n, "memory", "Memory per GPU against HBM (best layouts)", mem,
			sizeof mem / sizeof mem[0], out) ||
	    chart_table(sc, ro, h, n, "sensitivity",
			"Throughput gain from 2x each hardware factor (best layouts)", gain,
			sizeof gain / sizeof gain[0], out))
		return -1;
	return 0;
}

int rep_headline_tables(const cvc_rep_table *sc, const struct rep_roles *ro,
			const struct rep_gkey *best, size_t n, struct rep_tables *out)
{
	struct hrow *h = calloc(n ? n : 1, sizeof *h);
	cvc_rep_table *hl = NULL;
	int rc = -1;

	if (!h)
		return -1;
	for (size_t i = 0; i < n; i++)
		h[i].g = &best[i];
	if (generations(sc, ro, h, n))
		goto out;
	qsort(h, n, sizeof *h, cmp_hrow);
	if (ro->col[REP_ROLE_COMM_SHARE] >= 0 && ro->col[REP_ROLE_EXPOSED_SHARE] >= 0 && n) {
		hl = headline_new();
		for (size_t i = 0; hl && i < n; i++)
			if (headline_row(hl, sc, ro, h, i, n))
				goto out;
		if (!hl || findings_table(hl, sc, h, out) || rep_tables_take(out, &hl))
			goto out;
	}
	rc = chart_tables(sc, ro, h, n, out);
out:
	cvc_rep_table_free(hl);
	free(h);
	return rc;
}
