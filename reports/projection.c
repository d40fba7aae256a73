/*
 * projection.c - the projection section's tables, derived from the
 * projector's output read generically (cvc_rep_table): columns are found by
 * name, so a new projector column never breaks a report, and a chart whose
 * columns are missing is left out with a note rather than failing.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cvc/cvc_project.h"
#include "rep_proj.h"

/* Names a role may have in the projector's output, first match wins. */
static const char *const role_names[REP_ROLE_N][6] = {
	[REP_ROLE_STEP] = {"step_s", "step_ms", "step_time_s", "step_time_ms"},
	[REP_ROLE_COMPUTE] = {"compute_s", "compute_ms"},
	[REP_ROLE_HIDDEN] = {"hidden_s", "hidden_ms", "comm_hidden_s"},
	[REP_ROLE_EXPOSED] = {"exposed_s", "exposed_ms", "comm_exposed_s"},
	[REP_ROLE_BUBBLE] = {"bubble_s", "bubble_ms"},
	[REP_ROLE_COMM_SHARE] = {"comm_share", "comm_frac"},
	[REP_ROLE_EXPOSED_SHARE] = {"exposed_share", "exposed_frac"},
	[REP_ROLE_TOKENS] = {"tokens_per_s", "tokens_s", "throughput_tokens_s"},
	[REP_ROLE_GPUS] = {"gpus", "n_gpus", "num_gpus", "world_size"},
	[REP_ROLE_HW] = {"gpu", "hw", "hardware", "system"},
	[REP_ROLE_MODEL] = {"model", "model_name", "name"},
	[REP_ROLE_PARAMS_B] = {"params_b", "model_params_b"},
	[REP_ROLE_PARAMS] = {"params", "n_params", "model_params"},
	[REP_ROLE_MFU] = {"mfu"},
	[REP_ROLE_MEM] = {"mem_gb", "memory_gb"},
	[REP_ROLE_VALID] = {"valid"},
	[REP_ROLE_FITS] = {"fits"},
	[REP_ROLE_INDEX] = {"index", "scenario", "id"},
	[REP_ROLE_TOKENS_LO] = {"tokens_per_s_lo"},
	[REP_ROLE_TOKENS_HI] = {"tokens_per_s_hi"},
	[REP_ROLE_WARNINGS] = {"warnings"},
};

static const char *const role_keys[REP_ROLE_N] = {
	"step", "compute", "hidden", "exposed", "bubble", "comm_share", "exposed_share",
	"tokens_per_s", "gpus", "hw", "model", "params_b", "params", "mfu", "mem",
	"valid", "fits", "index", "tokens_per_s_lo", "tokens_per_s_hi", "warnings",
};

const char *rep_role_key(int role)
{
	return role >= 0 && role < REP_ROLE_N ? role_keys[role] : NULL;
}

void rep_roles_find(const cvc_rep_table *t, struct rep_roles *ro)
{
	for (int r = 0; r < REP_ROLE_N; r++) {
		ro->col[r] = -1;
		for (int k = 0; k < 6 && role_names[r][k]; k++) {
			long c = cvc_rep_table_find(t, role_names[r][k]);

			if (c >= 0) {
				ro->col[r] = c;
				break;
			}
		}
	}
	/* The unit of the time columns: the step column's suffix. */
	snprintf(ro->unit, sizeof ro->unit, "%s", "s");
	if (ro->col[REP_ROLE_STEP] >= 0) {
		const char *name = cvc_rep_table_col(t, (size_t)ro->col[REP_ROLE_STEP]);
		const char *u = strrchr(name, '_');

		if (u && u[1] && strlen(u + 1) < sizeof ro->unit)
			snprintf(ro->unit, sizeof ro->unit, "%s", u + 1);
	}
}

static double num(const cvc_rep_table *t, size_t r, long c)
{
	return c < 0 ? NAN : cvc_rep_table_num(t, r, (size_t)c);
}

/* A cell as text: strings as they are, numbers formatted, empty as "". */
static const char *text(const cvc_rep_table *t, size_t r, long c, char *buf, size_t len)
{
	const char *s;

	if (c < 0)
		return "";
	s = cvc_rep_table_str(t, r, (size_t)c);
	if (s)
		return s;
	return rep_fmt_num(cvc_rep_table_num(t, r, (size_t)c), buf, len);
}

/*
 * Model size in billions of parameters: a params column when there is one,
 * else counted from the shape columns (attention q/o + k/v scaled by
 * kv_heads/heads, MLP 2 or 3 matrices (swiglu) per expert, untied embedding
 * and head); NaN when the shape is not given.  Norms and biases are left
 * out: they are under 0.1% of any model this chart is for.
 */
static double params_b(const cvc_rep_table *t, size_t r, const struct rep_roles *ro)
{
	double p = num(t, r, ro->col[REP_ROLE_PARAMS_B]);
	double l, h, heads, kv, ffn, vocab, experts, mats = 2, attn;
	long c;
	const char *ft;

	if (isfinite(p))
		return p;
	p = num(t, r, ro->col[REP_ROLE_PARAMS]);
	if (isfinite(p))
		return p > 1e5 ? p / 1e9 : p;
	l = num(t, r, cvc_rep_table_find(t, "layers"));
	h = num(t, r, cvc_rep_table_find(t, "hidden"));
	if (!(l > 0 && h > 0))
		return NAN;
	heads = num(t, r, cvc_rep_table_find(t, "heads"));
	kv = num(t, r, cvc_rep_table_find(t, "kv_heads"));
	ffn = num(t, r, cvc_rep_table_find(t, "ffn"));
	vocab = num(t, r, cvc_rep_table_find(t, "vocab"));
	experts = num(t, r, cvc_rep_table_find(t, "experts"));
	c = cvc_rep_table_find(t, "ffn_type");
	ft = c >= 0 ? cvc_rep_table_str(t, r, (size_t)c) : NULL;
	if (ft && strcasecmp(ft, "swiglu") == 0)
		mats = 3;
	else if (c >= 0 && cvc_rep_table_num(t, r, (size_t)c) == 1)
		mats = 3;
	if (!(ffn > 0))
		ffn = 4 * h;
	if (!(experts >= 1))
		experts = 1;
	attn = 2 * h * h + (heads > 0 && kv > 0 ? 2 * h * h * kv / heads : 2 * h * h);
	p = l * (attn + mats * h * ffn * experts) + (vocab > 0 ? 2 * vocab * h : 0);
	return p / 1e9;
}

/* Usable for the charts: not marked invalid. */
static int usable(const cvc_rep_table *t, size_t r, const struct rep_roles *ro)
{
	double v = num(t, r, ro->col[REP_ROLE_VALID]);

	return !(v == 0);
}

static int fits(const cvc_rep_table *t, size_t r, const struct rep_roles *ro)
{
	double v = num(t, r, ro->col[REP_ROLE_FITS]);

	return usable(t, r, ro) && !(v == 0);
}

/* "tp8 pp4 dp2" from the layout columns present. */
static void layout(const cvc_rep_table *t, size_t r, char *buf, size_t len)
{
	static const char *const keys[] = {"tp", "pp", "vpp", "dp", "cp", "ep", "zero",
					   "micro_batch"};
	static const char *const shown[] = {"tp", "pp", "vpp", "dp", "cp", "ep", "zero", "mb"};
	size_t n = 0;

	buf[0] = '\0';
	for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++) {
		long c = cvc_rep_table_find(t, keys[k]);
		double v = num(t, r, c);
		char nb[40];
		int w;

		if (!isfinite(v))
			continue;
		/* tp, pp, dp and mb always; the rest only when in use (1 and 0
		   mean "not used" and only add noise). */
		if ((k == 2 || k == 4 || k == 5) && v <= 1)
			continue;
		if (k == 6 && v <= 0)
			continue;
		w = snprintf(buf + n, len - n, "%s%s%s", n ? " " : "", shown[k],
			     rep_fmt_num(v, nb, sizeof nb));
		if (w < 0 || (size_t)w >= len - n)
			break;
		n += (size_t)w;
	}
}

/*
 * The hardware a scenario runs on: the GPU name, plus the projector's
 * future-hardware scale factors when they are not 1, so that "B200 with 2x
 * compute" is a generation of its own in the charts.
 */
static void hw_label(const cvc_rep_table *t, size_t r, const struct rep_roles *ro, char *buf,
		     size_t len)
{
	static const char *const keys[] = {"scale_compute", "scale_hbm_bw", "scale_hbm_cap",
					   "scale_intra_bw", "scale_inter_bw"};
	static const char *const shown[] = {"compute", "hbm_bw", "hbm_cap", "intra_bw",
					    "inter_bw"};
	char nb[40];
	size_t n;

	snprintf(buf, len, "%s", text(t, r, ro->col[REP_ROLE_HW], nb, sizeof nb));
	for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++) {
		double v = num(t, r, cvc_rep_table_find(t, keys[k]));

		if (!isfinite(v) || v == 1)
			continue;
		n = strlen(buf);
		if (n + 1 < len)
			snprintf(buf + n, len - n, " %s x%s", shown[k], rep_fmt_num(v, nb, sizeof nb));
	}
}

/* Sort key of a scenario for grouping by (hw, model, gpus). */
struct gkey {
	size_t row;
	const char *hw, *model;
	double params, gpus;
};

static int cmp_gkey(const void *pa, const void *pb)
{
	const struct gkey *a = pa, *b = pb;
	int c = strcmp(a->hw, b->hw);

	if (c)
		return c;
	if (a->params != b->params && isfinite(a->params) && isfinite(b->params))
		return a->params < b->params ? -1 : 1;
	c = strcmp(a->model, b->model);
	if (c)
		return c;
	if (a->gpus != b->gpus)
		return a->gpus < b->gpus ? -1 : 1;
	return a->row < b->row ? -1 : a->row > b->row;
}

static int cmp_double(const void *pa, const void *pb)
{
	double a = *(const double *)pa, b = *(const double *)pb;

	return (a > b) - (a < b);
}

/* Per-row strings: group keys need stable text for numbers too. */
struct rowtext {
	char hw[96], model[96];
};

/* Scenario index: the projector's index column, else the row number. */
static double scenario_index(const cvc_rep_table *sc, size_t r, const struct rep_roles *ro)
{
	return ro->col[REP_ROLE_INDEX] >= 0 ? num(sc, r, ro->col[REP_ROLE_INDEX]) : (double)r;
}

/* 1. time per scenario, stacked: compute-only, hidden, exposed, bubble. */
static int proj_time_table(const cvc_rep_table *sc, const struct rep_roles *ro,
			   struct rep_tables *out)
{
	static const char *const stem[5] = {"compute_only", "hidden", "exposed", "bubble", "step"};
	const long *col = ro->col;
	const char *cols[7] = {"scenario", "label"};
	char unit_cols[5][40];
	cvc_rep_table *t;
	int rc = 0;

	for (int k = 0; k < 5; k++) {
		snprintf(unit_cols[k], sizeof unit_cols[k], "%s_%s", stem[k], ro->unit);
		cols[k + 2] = unit_cols[k];
	}
	t = cvc_rep_table_new("proj_time", "Step time per scenario", 7, cols);
	if (!t)
		return -1;
	for (size_t r = 0; r < cvc_rep_table_nrows(sc) && !rc; r++) {
		double comp = num(sc, r, col[REP_ROLE_COMPUTE]);
		double hid = num(sc, r, col[REP_ROLE_HIDDEN]);
		double bub = num(sc, r, col[REP_ROLE_BUBBLE]);
		char lay[160], label[400], b1[40], b2[96], b3[64];
		long i;

		if (!usable(sc, r, ro))
			continue;
		if (!isfinite(hid))
			hid = 0;
		if (!isfinite(bub))
			bub = 0;
		i = cvc_rep_table_add_row(t);
		if (i < 0) {
			rc = -1;
			break;
		}
		layout(sc, r, lay, sizeof lay);
		hw_label(sc, r, ro, b2, sizeof b2);
		snprintf(label, sizeof label, "%s %s x%s %s",
			 text(sc, r, col[REP_ROLE_MODEL], b1, sizeof b1), b2,
			 text(sc, r, col[REP_ROLE_GPUS], b3, sizeof b3), lay);
		cvc_rep_table_set_num(t, (size_t)i, 0, scenario_index(sc, r, ro));
		rc = cvc_rep_table_set_str(t, (size_t)i, 1, label);
		/* Hidden communication runs under compute: take it out so the
		   stack adds up to the step. */
		cvc_rep_table_set_num(t, (size_t)i, 2, comp - hid > 0 ? comp - hid : 0);
		cvc_rep_table_set_num(t, (size_t)i, 3, hid);
		cvc_rep_table_set_num(t, (size_t)i, 4, num(sc, r, col[REP_ROLE_EXPOSED]));
		cvc_rep_table_set_num(t, (size_t)i, 5, bub);
		cvc_rep_table_set_num(t, (size_t)i, 6, num(sc, r, col[REP_ROLE_STEP]));
	}
	if (!rc)
		rc = rep_tables_take(out, &t);
	cvc_rep_table_free(t);
	return rc;
}

/*
 * The scenarios that fit and have a throughput, as group keys sorted by
 * (hw, model, gpus); their strings live in rt (one per scenario row).
 */
static void group_keys(const cvc_rep_table *sc, const struct rep_roles *ro, struct gkey *g,
		      struct rowtext *rt, size_t *ng)
{
	const long *col = ro->col;
	char buf[64];

	*ng = 0;
	for (size_t r = 0; r < cvc_rep_table_nrows(sc); r++) {
		double tps = num(sc, r, col[REP_ROLE_TOKENS]);

		if (!fits(sc, r, ro) || !isfinite(tps) || !isfinite(num(sc, r, col[REP_ROLE_GPUS])))
			continue;
		hw_label(sc, r, ro, rt[r].hw, sizeof rt[r].hw);
		snprintf(rt[r].model, sizeof rt[r].model, "%s",
			 text(sc, r, col[REP_ROLE_MODEL], buf, sizeof buf));
		g[*ng].row = r;
		g[*ng].hw = rt[r].hw;
		g[*ng].model = rt[r].model;
		g[*ng].params = params_b(sc, r, ro);
		g[*ng].gpus = num(sc, r, col[REP_ROLE_GPUS]);
		(*ng)++;
	}
	qsort(g, *ng, sizeof *g, cmp_gkey);
}

/* The best_layout table, empty, with the step column in the projection's unit. */
static cvc_rep_table *best_layout_new(const struct rep_roles *ro)
{
	static const char *const cols[] = {"hw", "model", "params_b", "gpus", "layout",
					   "tokens_per_s", "step", "mfu", "comm_share",
					   "exposed_share", "mem_gb", "scenario",
					   "tokens_per_s_lo90", "tokens_per_s_hi90",
					   "warnings"};
	cvc_rep_table *best = cvc_rep_table_new("best_layout", "Best layout per GPU count (with the "
					    "90% interval of its throughput)", 15, cols);
	char step_col[40];

	if (!best)
		return NULL;
	snprintf(step_col, sizeof step_col, "step_%s", ro->unit);
	free(best->cols[6]);
	best->cols[6] = strdup(step_col);
	if (!best->cols[6]) {
		cvc_rep_table_free(best);
		return NULL;
	}
	return best;
}

/* Appends scenario row r, the best of its group g, to best; -1 on no memory. */
static int best_layout_row(cvc_rep_table *best, const cvc_rep_table *sc,
			   const struct rep_roles *ro, const struct gkey *g)
{
	static const int roles[] = {REP_ROLE_TOKENS, REP_ROLE_STEP, REP_ROLE_MFU,
				    REP_ROLE_COMM_SHARE, REP_ROLE_EXPOSED_SHARE, REP_ROLE_MEM};
	size_t r = g->row;
	char lay[160];
	long k = cvc_rep_table_add_row(best);

	if (k < 0)
		return -1;
	layout(sc, r, lay, sizeof lay);
	if (cvc_rep_table_set_str(best, (size_t)k, 0, g->hw) || cvc_rep_table_set_str(best, (size_t)k, 1, g->model) ||
	    cvc_rep_table_set_str(best, (size_t)k, 4, lay))
		return -1;
	cvc_rep_table_set_num(best, (size_t)k, 2, g->params);
	cvc_rep_table_set_num(best, (size_t)k, 3, g->gpus);
	for (size_t i = 0; i < sizeof roles / sizeof roles[0]; i++)
		cvc_rep_table_set_num(best, (size_t)k, 5 + i, num(sc, r, ro->col[roles[i]]));
	cvc_rep_table_set_num(best, (size_t)k, 11, scenario_index(sc, r, ro));
	cvc_rep_table_set_num(best, (size_t)k, 12, num(sc, r, ro->col[REP_ROLE_TOKENS_LO]));
	cvc_rep_table_set_num(best, (size_t)k, 13, num(sc, r, ro->col[REP_ROLE_TOKENS_HI]));
	return cvc_rep_table_set_str(best, (size_t)k, 14,
			   text(sc, r, ro->col[REP_ROLE_WARNINGS], lay, sizeof lay));
}

/*
 * 2. best layout per (hardware, model, GPU count): most tokens/s that fits,
 * one row per group of g[0..ng); the groups' GPU counts go to gpu_counts.
 */
static int best_layout_fill(cvc_rep_table *best, const cvc_rep_table *sc,
			    const struct rep_roles *ro, const struct gkey *g, size_t ng,
			    double *gpu_counts)
{
	const long tok = ro->col[REP_ROLE_TOKENS];

	for (size_t i = 0, j; i < ng; i = j) {
		size_t b = i;

		for (j = i; j < ng && strcmp(g[j].hw, g[i].hw) == 0 &&
			    strcmp(g[j].model, g[i].model) == 0 && g[j].gpus == g[i].gpus; j++)
			if (num(sc, g[j].row, tok) > num(sc, g[b].row, tok))
				b = j;
		if (best_layout_row(best, sc, ro, &g[b]))
			return -1;
		gpu_counts[best->nrows - 1] = g[b].gpus;
	}
	return 0;
}

/* Sorts and dedups counts[0..n); returns how many are kept (at most 64). */
static size_t distinct_counts(double *counts, size_t n)
{
	size_t u = 0;

	qsort(counts, n, sizeof *counts, cmp_double);
	for (size_t i = 0; i < n; i++)
		if (u == 0 || counts[u - 1] != counts[i])
			counts[u++] = counts[i];
	return u > 64 ? 64 : u; /* a wider heat map is unreadable */
}

/* Whether rows i and j of best are of the same (hardware, model). */
static int same_model(const cvc_rep_table *best, size_t i, size_t j)
{
	return strcmp(rep_cell_at(best, i, 0)->s, rep_cell_at(best, j, 0)->s) == 0 &&
	       strcmp(rep_cell_at(best, i, 1)->s, rep_cell_at(best, j, 1)->s) == 0;
}

/* Appends a row to t led by hw, model and params_b of best's row i: the
 * key columns of the tables derived from best.  Its index, or -1. */
static long model_row(cvc_rep_table *t, const cvc_rep_table *best, size_t i)
{
	const rep_cell *p = rep_cell_at(best, i, 2);
	long k = cvc_rep_table_add_row(t);

	if (k < 0 || cvc_rep_table_set_str(t, (size_t)k, 0, rep_cell_at(best, i, 0)->s) ||
	    cvc_rep_table_set_str(t, (size_t)k, 1, rep_cell_at(best, i, 1)->s))
		return -1;
	cvc_rep_table_set_num(t, (size_t)k, 2, p->kind == CVC_REP_NUM ? p->v : NAN);
	return k;
}

/* 3. scaling: best tokens/s against GPUs, with the ideal linear line
   from the smallest GPU count of each (hardware, model). */
static int scaling_table(const cvc_rep_table *best, struct rep_tables *out)
{
	static const char *const cols[] = {"hw", "model", "params_b", "gpus", "tokens_per_s",
					   "ideal_tokens_per_s", "scaling_efficiency"};
	cvc_rep_table *t = cvc_rep_table_new("scaling", "Throughput against GPU count", 7, cols);
	size_t base = 0;
	int rc = t ? 0 : -1;

	for (size_t i = 0; !rc && i < best->nrows; i++) {
		double gp = rep_cell_at(best, i, 3)->v, tps = rep_cell_at(best, i, 5)->v;
		double b_g, b_t, ideal;
		long k;

		if (i == 0 || !same_model(best, i, i - 1))
			base = i;
		b_g = rep_cell_at(best, base, 3)->v;
		b_t = rep_cell_at(best, base, 5)->v;
		ideal = b_g > 0 ? b_t * gp / b_g : NAN;
		k = model_row(t, best, i);
		if (k < 0) {
			rc = -1;
			break;
		}
		cvc_rep_table_set_num(t, (size_t)k, 3, gp);
		cvc_rep_table_set_num(t, (size_t)k, 4, tps);
		cvc_rep_table_set_num(t, (size_t)k, 5, ideal);
		cvc_rep_table_set_num(t, (size_t)k, 6, ideal > 0 ? tps / ideal : NAN);
	}
	if (!rc)
		rc = rep_tables_take(out, &t);
	cvc_rep_table_free(t);
	return rc;
}

/* 4. communication share against model size, one line per hardware:
   mean (and range) over GPU counts of the best layouts. */
static int comm_share_table(const cvc_rep_table *best, struct rep_tables *out)
{
	static const char *const cols[] = {"hw", "model", "params_b", "comm_share_mean",
					   "comm_share_min", "comm_share_max", "gpu_counts"};
	cvc_rep_table *t = cvc_rep_table_new("comm_share", "Communication share against model size",
					 7, cols);
	int rc = t ? 0 : -1;

	for (size_t i = 0, j; !rc && i < best->nrows; i = j) {
		size_t cnt = 0;
		double sum = 0, lo = INFINITY, hi = -INFINITY;
		long k;

		for (j = i; j < best->nrows && same_model(best, j, i); j++) {
			const rep_cell *x = rep_cell_at(best, j, 8);

			if (x->kind == CVC_REP_NUM) {
				sum += x->v;
				lo = x->v < lo ? x->v : lo;
				hi = x->v > hi ? x->v : hi;
				cnt++;
			}
		}
		if (!cnt)
			continue;
		k = model_row(t, best, i);
		if (k < 0) {
			rc = -1;
			break;
		}
		cvc_rep_table_set_num(t, (size_t)k, 3, sum / (double)cnt);
		cvc_rep_table_set_num(t, (size_t)k, 4, lo);
		cvc_rep_table_set_num(t, (size_t)k, 5, hi);
		cvc_rep_table_set_num(t, (size_t)k, 6, (double)cnt);
	}
	if (!rc)
		rc = rep_tables_take(out, &t);
	cvc_rep_table_free(t);
	return rc;
}

/* The heat map, empty: hw, model, params_b, then a column per GPU count. */
static cvc_rep_table *heatmap_new(const double *gpu_counts, size_t ncounts)
{
	const char **cols = calloc(ncounts + 3, sizeof *cols);
	char (*names)[32] = calloc(ncounts + 1, sizeof *names);
	cvc_rep_table *t = NULL;
	char buf[64];

	if (cols && names) {
		cols[0] = "hw";
		cols[1] = "model";
		cols[2] = "params_b";
		for (size_t c = 0; c < ncounts; c++) {
			snprintf(names[c], sizeof names[c], "gpus=%s",
				 rep_fmt_num(gpu_counts[c], buf, sizeof buf));
			cols[c + 3] = names[c];
		}
		t = cvc_rep_table_new("exposed_heatmap",
				  "Exposed communication share (best layout) by model size and GPU count",
				  ncounts + 3, cols);
	}
	free(cols);
	free(names);
	return t;
}

/* 5. heat map: exposed share of the best layout, model size x GPU count. */
static int heatmap_table(const cvc_rep_table *best, const double *gpu_counts, size_t ncounts,
			 struct rep_tables *out)
{
	cvc_rep_table *t = heatmap_new(gpu_counts, ncounts);
	int rc = t ? 0 : -1;

	for (size_t i = 0; !rc && i < best->nrows; i++) {
		size_t k;
		double gp = rep_cell_at(best, i, 3)->v;
		const rep_cell *x = rep_cell_at(best, i, 9);

		if ((i == 0 || !same_model(best, i, i - 1)) && model_row(t, best, i) < 0) {
			rc = -1;
			break;
		}
		for (k = 0; k < ncounts && gpu_counts[k] != gp; k++)
			;
		if (k < ncounts && x->kind == CVC_REP_NUM)
			cvc_rep_table_set_num(t, t->nrows - 1, k + 3, x->v);
	}
	if (!rc)
		rc = rep_tables_take(out, &t);
	cvc_rep_table_free(t);
	return rc;
}

/* Sections 2 to 5: the best layouts and what is derived from them. */
static int best_layout_tables(const cvc_rep_table *sc, const struct rep_roles *ro,
			      struct rep_tables *out)
{
	size_t n = cvc_rep_table_nrows(sc), ng = 0, ncounts;
	struct gkey *g = calloc(n ? n : 1, sizeof *g);
	struct rowtext *rt = calloc(n ? n : 1, sizeof *rt);
	double *gpu_counts = NULL;
	cvc_rep_table *best = NULL;
	int rc = -1;

	if (!g || !rt)
		goto out;
	group_keys(sc, ro, g, rt, &ng);
	best = best_layout_new(ro);
	gpu_counts = calloc(ng ? ng : 1, sizeof *gpu_counts);
	if (!best || !gpu_counts || best_layout_fill(best, sc, ro, g, ng, gpu_counts))
		goto out;
	ncounts = distinct_counts(gpu_counts, best->nrows);
	if (scaling_table(best, out) ||
	    (ro->col[REP_ROLE_COMM_SHARE] >= 0 && comm_share_table(best, out)) ||
	    (ro->col[REP_ROLE_EXPOSED_SHARE] >= 0 &&
	     heatmap_table(best, gpu_counts, ncounts, out)) ||
	    rep_tables_take(out, &best))
		goto out;
	rc = 0;
out:
	cvc_rep_table_free(best);
	free(g);
	free(rt);
	free(gpu_counts);
	return rc;
}

cvc_status rep_projection_tables(const cvc_rep_table *sc, const struct rep_roles *ro,
				 struct rep_tables *out, char *err, size_t errlen)
{
	const long *col = ro->col;

	if (col[REP_ROLE_STEP] >= 0 && col[REP_ROLE_COMPUTE] >= 0 && col[REP_ROLE_EXPOSED] >= 0 &&
	    proj_time_table(sc, ro, out))
		goto nomem;
	if (col[REP_ROLE_TOKENS] >= 0 && col[REP_ROLE_GPUS] >= 0 && best_layout_tables(sc, ro, out))
		goto nomem;
	return CVC_OK;
nomem:
	return cvc_errf(err, errlen, CVC_ERR_NOMEM, "out of memory (or over %d rows)",
		       CVC_REP_MAX_ROWS);
}
