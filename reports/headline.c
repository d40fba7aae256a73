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

#include "headline.h"

/* The projector's communication types, in its column order. */
static const char *const ctype[] = {"tp", "pp", "dp", "fsdp", "ep", "cp", "xc"};
#define NTYPE (sizeof ctype / sizeof ctype[0])

/* One best layout with its hardware generation. */
struct hrow {
	const struct rep_gkey *g;
	int gen; /* 1 = oldest hardware of the projection */
};

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

static cvc_rep_table *headline_new(void)
{
	static const char *const cols[H_N] = {
		"model", "params_b", "gpus", "hw", "generation", "layout", "tokens_per_s_per_gpu",
		"comm_share", "comm_share_lo", "comm_share_hi", "exposed_share",
		"exposed_share_lo", "exposed_share_hi", "top_exposed_type",
		"top_exposed_frac", "next_hw", "next_comm_share_change",
		"next_exposed_share_change", "next_tokens_per_gpu_ratio", "scaling_efficiency",
		"bubble_share", "hbm_headroom", "flags", "tokens_per_s", "scenario", "host_share"};

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
	size_t r = h[i].g->row;
	long k = cvc_rep_table_add_row(t);
	double frac, idx = rep_num(sc, r, ro->col[REP_ROLE_INDEX]), cs_lo, cs_hi;
	double cs = rep_comm_share(sc, r, ro, &cs_lo, &cs_hi);
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
	cvc_rep_table_set_num(t, (size_t)k, H_CS, cs);
	cvc_rep_table_set_num(t, (size_t)k, H_ES, rep_num(sc, r, ro->col[REP_ROLE_EXPOSED_SHARE]));
	cvc_rep_table_set_num(t, (size_t)k, H_CS_LO, cs_lo);
	cvc_rep_table_set_num(t, (size_t)k, H_CS_HI, cs_hi);
	cvc_rep_table_set_num(t, (size_t)k, H_ES_LO,
			      rep_num(sc, r, cvc_rep_table_find(sc, "exposed_share_lo")));
	cvc_rep_table_set_num(t, (size_t)k, H_ES_HI,
			      rep_num(sc, r, cvc_rep_table_find(sc, "exposed_share_hi")));
	cvc_rep_table_set_num(t, (size_t)k, H_TOP_FRAC, frac);
	cvc_rep_table_set_num(t, (size_t)k, H_SCEN, isfinite(idx) ? idx : (double)r);
	cvc_rep_table_set_num(t, (size_t)k, H_TPS, rep_num(sc, r, ro->col[REP_ROLE_TOKENS]));
	cvc_rep_table_set_num(t, (size_t)k, H_BUBBLE,
			      rep_num(sc, r, ro->col[REP_ROLE_BUBBLE]) /
				      rep_num(sc, r, ro->col[REP_ROLE_STEP]));
	/* the GPU waiting on the host's launches: part of compute_s */
	cvc_rep_table_set_num(t, (size_t)k, H_HOST,
			      rep_num(sc, r, unit_col(sc, ro, "host", "")) /
				      rep_num(sc, r, ro->col[REP_ROLE_STEP]));
	{
		double hbm = rep_num(sc, r, cvc_rep_table_find(sc, "hbm_gb"));

		cvc_rep_table_set_num(t, (size_t)k, H_ROOM,
				      hbm > 0 ? (hbm - rep_num(sc, r, ro->col[REP_ROLE_MEM])) / hbm
					      : NAN);
	}
	if (i + 1 < n && same_group(&h[i], &h[i + 1])) {
		size_t q = h[i + 1].g->row;

		if (cvc_rep_table_set_str(t, (size_t)k, H_NEXT, h[i + 1].g->hw))
			return -1;
		cvc_rep_table_set_num(t, (size_t)k, H_D_CS,
				      rep_comm_share(sc, q, ro, NULL, NULL) - cs);
		cvc_rep_table_set_num(t, (size_t)k, H_D_ES,
				      rep_num(sc, q, ro->col[REP_ROLE_EXPOSED_SHARE]) -
					      rep_num(sc, r, ro->col[REP_ROLE_EXPOSED_SHARE]));
		cvc_rep_table_set_num(t, (size_t)k, H_TPG_RATIO,
				      tokens_per_gpu(sc, ro, q) / tokens_per_gpu(sc, ro, r));
	}
	return 0;
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

/* Whether column c of sc holds a number in a best layout's row. */
static int has_value(const cvc_rep_table *sc, const struct hrow *h, size_t n, long c)
{
	for (size_t i = 0; i < n; i++)
		if (isfinite(rep_num(sc, h[i].g->row, c)))
			return 1;
	return 0;
}

/*
 * A chart's table: model, hw, gpus, layout, scenario of each best layout,
 * then the columns of sc named in want[0..nwant) that it has (with
 * `filled`, that hold a number in some best layout's row: a projection
 * priced with --intervals off has the gain columns, empty).  Left out (0)
 * when sc has none of them.  -1 on no memory.
 */
static int chart_table(const cvc_rep_table *sc, const struct rep_roles *ro,
		       const struct hrow *h, size_t n, const char *name, const char *title,
		       const char *const *want, size_t nwant, int filled, struct rep_tables *out)
{
	const char *cols[5 + 16] = {"model", "hw", "gpus", "layout", "scenario"};
	long src[16];
	size_t nc = 5;
	cvc_rep_table *t;
	int rc = 0;

	for (size_t w = 0; w < nwant && w < 16; w++) {
		long c = cvc_rep_table_find(sc, want[w]);

		if (c >= 0 && (!filled || has_value(sc, h, n, c))) {
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
	char names[NTYPE + 5][48];
	const char *exp[NTYPE + 5];
	size_t ne = 0;

	for (size_t k = 0; k < NTYPE; k++)
		snprintf(names[ne++], sizeof names[0], "exposed_%s_%s", ctype[k], ro->unit);
	snprintf(names[ne++], sizeof names[0], "exposed_%s", ro->unit);
	snprintf(names[ne++], sizeof names[0], "step_%s", ro->unit);
	/* The whiskers are the exposed share's own interval, the one the
	   headline prints: never exposed_hi over the nominal step. */
	snprintf(names[ne++], sizeof names[0], "exposed_share");
	snprintf(names[ne++], sizeof names[0], "exposed_share_lo");
	snprintf(names[ne++], sizeof names[0], "exposed_share_hi");
	for (size_t k = 0; k < ne; k++)
		exp[k] = names[k];
	/* Without a typed column there is nothing to stack. */
	if (unit_col(sc, ro, "exposed_tp", "") < 0 && unit_col(sc, ro, "exposed_dp", "") < 0)
		ne = 0;
	if ((ne && chart_table(sc, ro, h, n, "exposed_by_type",
			       "Exposed communication by type (best layouts), with the 90% interval of the exposed share",
			       exp, ne, 0, out)) ||
	    chart_table(sc, ro, h, n, "memory", "Memory per GPU against HBM (best layouts)", mem,
			sizeof mem / sizeof mem[0], 0, out) ||
	    chart_table(sc, ro, h, n, "sensitivity",
			"Throughput gain from 2x each hardware factor (best layouts)", gain,
			sizeof gain / sizeof gain[0], 1, out))
		return -1;
	return 0;
}

/* Appends " and "-less items to buf: "; " between them. */
static void flag_add(char *buf, size_t len, const char *item)
{
	size_t n = strlen(buf);

	if (n + 2 + strlen(item) < len)
		snprintf(buf + n, len - n, "%s%s", n ? "; " : "", item);
}

/*
 * Scaling efficiency of each headline row (tokens/s per GPU against the
 * smallest GPU count of the same model and hardware: what linear scaling
 * from there keeps), then the flags of the rows far from the best
 * (headline.h).  -1 on no memory.
 */
static int headline_flags(cvc_rep_table *t)
{
	for (size_t k = 0; k < t->nrows; k++) {
		size_t base = k, others = 0;
		double eff, bub = rep_num(t, k, H_BUBBLE), room = rep_num(t, k, H_ROOM);
		double host = rep_num(t, k, H_HOST);
		char flags[160] = "", item[64], p[16];

		for (size_t j = 0; j < t->nrows; j++)
			if (strcmp(rep_cell_at(t, j, H_MODEL)->s, rep_cell_at(t, k, H_MODEL)->s) == 0 &&
			    strcmp(rep_cell_at(t, j, H_HW)->s, rep_cell_at(t, k, H_HW)->s) == 0 &&
			    rep_num(t, j, H_GPUS) != rep_num(t, k, H_GPUS)) {
				others++;
				if (rep_num(t, j, H_GPUS) < rep_num(t, base, H_GPUS))
					base = j;
			}
		/* the only GPU count of this hardware and model has nothing to
		   scale from: no efficiency (it read 100% beside others' from
		   a smaller count) */
		eff = others ? rep_num(t, k, H_TPG) / rep_num(t, base, H_TPG) : NAN;
		cvc_rep_table_set_num(t, k, H_EFF, eff);
		if (eff < REP_FLAG_EFF) {
			snprintf(item, sizeof item, "scaling efficiency %s", rep_pct3(eff, p, sizeof p));
			flag_add(flags, sizeof flags, item);
		}
		if (bub > REP_FLAG_BUBBLE) {
			snprintf(item, sizeof item, "bubble %s", rep_pct3(bub, p, sizeof p));
			flag_add(flags, sizeof flags, item);
		}
		if (host > REP_FLAG_HOST) {
			snprintf(item, sizeof item, "host-bound: host wait %s of the step",
				 rep_pct3(host, p, sizeof p));
			flag_add(flags, sizeof flags, item);
		}
		if (room < REP_FLAG_ROOM) {
			snprintf(item, sizeof item, "HBM left %s", rep_pct3(room, p, sizeof p));
			flag_add(flags, sizeof flags, item);
		}
		if (cvc_rep_table_set_str(t, k, H_FLAGS, flags))
			return -1;
	}
	return 0;
}

int rep_headline_tables(const cvc_rep_table *sc, const struct rep_roles *ro,
			const struct rep_gkey *best, size_t n, struct rep_tables *out)
{
	struct hrow *h = calloc(n ? n : 1, sizeof *h);
	cvc_rep_table *hl = NULL;
	const char **sync = NULL;
	char (*text)[200] = NULL;
	int rc = -1;

	if (!h)
		return -1;
	for (size_t i = 0; i < n; i++) {
		h[i].g = &best[i];
		h[i].gen = best[i].gen;
	}
	qsort(h, n, sizeof *h, cmp_hrow);
	if ((ro->col[REP_ROLE_COMM_SHARE] >= 0 ||
	     (ro->col[REP_ROLE_COMM] >= 0 && ro->col[REP_ROLE_STEP] >= 0)) &&
	    ro->col[REP_ROLE_EXPOSED_SHARE] >= 0 && n) {
		hl = headline_new();
		sync = calloc(n, sizeof *sync);
		text = calloc(n, sizeof *text);
		if (!hl || !sync || !text)
			goto out;
		for (size_t i = 0; i < n; i++) {
			if (headline_row(hl, sc, ro, h, i, n))
				goto out;
			sync_clause(sc, h[i].g->row, text[i], sizeof text[i]);
			sync[i] = text[i];
		}
		if (headline_flags(hl) || rep_findings_tables(hl, sync, out))
			goto out;
		for (size_t i = 0; i < out->n; i++)
			if (!strcmp(out->v[i]->name, "findings") &&
			    rep_absent_findings(sc, ro, hl, out->v[i]))
				goto out;
		if (rep_tables_take(out, &hl))
			goto out;
	}
	rc = chart_tables(sc, ro, h, n, out);
out:
	cvc_rep_table_free(hl);
	free(sync);
	free(text);
	free(h);
	return rc;
}
