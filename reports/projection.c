/*
 * projection.c - the projection section's tables, derived from the
 * projector's output read generically (cvc_rep_table): columns are found by
 * name, so a new projector column never breaks a report, and a chart whose
 * columns are missing is left out with a note rather than failing.
 */
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cvc/cvc_base.h"
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
	[REP_ROLE_COMM] = {"comm_s", "comm_ms"},
};

static const char *const role_keys[REP_ROLE_N] = {
	"step", "compute", "hidden", "exposed", "bubble", "comm_share", "exposed_share",
	"tokens_per_s", "gpus", "hw", "model", "params_b", "params", "mfu", "mem",
	"valid", "fits", "index", "tokens_per_s_lo", "tokens_per_s_hi", "warnings", "comm",
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
	ro->share_iv = cvc_rep_table_find(t, "comm_to_compute") >= 0;
}

/*
 * What a projection's numbers may be, per role: a count of GPUs is a whole
 * number from 1 to 2^24, times and rates are finite and not negative, and
 * nothing in between 0 and 1e-12 (issue 36 item 11: gpus 1e308 or
 * tokens_per_s 1e-320 made a page Chromium never finished drawing; the
 * projector writes none of them).
 */
static const struct role_bound {
	int role;
	double hi;
	const char *what;
} role_bounds[] = {
	{REP_ROLE_GPUS, 16777216, "a whole number of GPUs from 1 to 16777216"},
	{REP_ROLE_STEP, 1e12, "a time from 1e-12 to 1e12"},
	{REP_ROLE_COMPUTE, 1e12, "a time from 0 to 1e12"},
	{REP_ROLE_HIDDEN, 1e12, "a time from 0 to 1e12"},
	{REP_ROLE_EXPOSED, 1e12, "a time from 0 to 1e12"},
	{REP_ROLE_BUBBLE, 1e12, "a time from 0 to 1e12"},
	{REP_ROLE_COMM, 1e12, "a time from 0 to 1e12"},
	{REP_ROLE_TOKENS, 1e15, "tokens/s from 0 to 1e15"},
	{REP_ROLE_TOKENS_LO, 1e15, "tokens/s from 0 to 1e15"},
	{REP_ROLE_TOKENS_HI, 1e15, "tokens/s from 0 to 1e15"},
	{REP_ROLE_COMM_SHARE, 100, "a share from 0 to 100"},
	{REP_ROLE_EXPOSED_SHARE, 100, "a share from 0 to 100"},
	{REP_ROLE_MFU, 1e4, "an MFU from 0 to 1e4"},
	{REP_ROLE_PARAMS_B, 1e9, "billions of parameters from 0 to 1e9"},
	{REP_ROLE_PARAMS, 1e18, "parameters from 0 to 1e18"},
	{REP_ROLE_MEM, 1e12, "a memory size from 0 to 1e12"},
};

cvc_status rep_roles_check(const cvc_rep_table *t, const struct rep_roles *ro, const char *path,
			   char *err, size_t errlen)
{
	/* every section of a projection stands on its step time: a table
	 * without one is some other table (a validate input, another tool's
	 * CSV), whose report would be empty charts */
	if (ro->col[REP_ROLE_STEP] < 0)
		return cvc_errf(err, errlen, CVC_ERR_FORMAT,
				"'%s': expected a projection (the output of cvc project --csv or "
				"--json): no step-time column (step_s, step_ms, step_time_s or "
				"step_time_ms)", path);
	for (size_t b = 0; b < sizeof role_bounds / sizeof role_bounds[0]; b++) {
		const struct role_bound *rb = &role_bounds[b];
		long c = ro->col[rb->role];

		for (size_t r = 0; c >= 0 && r < cvc_rep_table_nrows(t); r++) {
			double v;

			if (cvc_rep_table_kind(t, r, (size_t)c) != CVC_REP_NUM)
				continue;
			v = cvc_rep_table_num(t, r, (size_t)c);
			if (isfinite(v) && v >= 0 && v <= rb->hi && (v == 0 || v >= 1e-12) &&
			    (rb->role != REP_ROLE_GPUS || (v >= 1 && v == floor(v))) &&
			    (rb->role != REP_ROLE_STEP || v > 0))
				continue;
			return cvc_errf(err, errlen, CVC_ERR_FORMAT,
					"'%s': row %zu: column %s: expected %s, got %.17g", path,
					r + 1, cvc_rep_table_col(t, (size_t)c), rb->what, v);
		}
	}
	return CVC_OK;
}

double rep_comm_share(const cvc_rep_table *sc, size_t r, const struct rep_roles *ro,
		      double *lo, double *hi)
{
	double comm = rep_num(sc, r, ro->col[REP_ROLE_COMM]);
	double step = rep_num(sc, r, ro->col[REP_ROLE_STEP]);
	cvc_shares sh;
	double v;

	/* the definition analyze and the projector use (cvc_shares_of) */
	cvc_shares_of(step, NAN, comm, NAN, &sh);
	v = isfinite(comm) && step > 0 ? sh.comm_share
				       : rep_num(sc, r, ro->col[REP_ROLE_COMM_SHARE]);

	if (lo)
		*lo = ro->share_iv ? rep_num(sc, r, cvc_rep_table_find(sc, "comm_share_lo")) : NAN;
	if (hi)
		*hi = ro->share_iv ? rep_num(sc, r, cvc_rep_table_find(sc, "comm_share_hi")) : NAN;
	return v;
}

const char *rep_pct3(double frac, char *buf, size_t len)
{
	double p = 100 * frac, a = fabs(p);

	snprintf(buf, len, "%.*f%%", a >= 99.95 ? 0 : a >= 9.995 ? 1 : 2, p);
	return buf;
}

double rep_num(const cvc_rep_table *t, size_t r, long c)
{
	return c < 0 ? NAN : cvc_rep_table_num(t, r, (size_t)c);
}

/* A cell as text: strings as they are, numbers formatted, empty as "". */
const char *rep_text(const cvc_rep_table *t, size_t r, long c, char *buf, size_t len)
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
 * Model size in billions of parameters: the projector's params_b column
 * (or another params column) when there is one, else counted from the
 * row's model fields by the projector's own count (cvc_proj_params_of:
 * MoE experts at their own width, shared experts, dense first layers, MLA
 * latents, a hybrid's Mamba layers), never a formula of the report's own,
 * which took an MoE model's dense ffn times its experts (DeepSeek-V3 at
 * 6,204 B for 671 B); NaN when the row gives no shape.
 */
static double params_b(const cvc_rep_table *t, size_t r, const struct rep_roles *ro)
{
	enum { MAXC = 512 };
	const char *keys[MAXC], *vals[MAXC];
	char text[MAXC][48];
	double p = rep_num(t, r, ro->col[REP_ROLE_PARAMS_B]), active;
	size_t n = 0;

	if (isfinite(p))
		return p;
	p = rep_num(t, r, ro->col[REP_ROLE_PARAMS]);
	if (isfinite(p))
		return p > 1e5 ? p / 1e9 : p;
	if (!(rep_num(t, r, cvc_rep_table_find(t, "layers")) > 0 &&
	      rep_num(t, r, cvc_rep_table_find(t, "hidden")) > 0))
		return NAN;
	for (size_t c = 0; c < cvc_rep_table_ncols(t) && n < MAXC; c++) {
		keys[n] = cvc_rep_table_col(t, c);
		vals[n] = rep_text(t, r, (long)c, text[n], sizeof text[n]);
		n++;
	}
	if (cvc_proj_params_of(keys, vals, n, &p, &active) != CVC_OK)
		return NAN;
	return p;
}

/* Usable for the charts: not marked invalid. */
static int usable(const cvc_rep_table *t, size_t r, const struct rep_roles *ro)
{
	double v = rep_num(t, r, ro->col[REP_ROLE_VALID]);

	return !(v == 0);
}

static int fits(const cvc_rep_table *t, size_t r, const struct rep_roles *ro)
{
	double v = rep_num(t, r, ro->col[REP_ROLE_FITS]);

	return usable(t, r, ro) && !(v == 0);
}

/* Appends " word" (no space first in an empty buf); whole words only. */
static void add_word(char *buf, size_t len, const char *fmt, ...)
{
	size_t n = strlen(buf);
	char w[96];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(w, sizeof w, fmt, ap);
	va_end(ap);
	if (n + (n ? 1 : 0) + strlen(w) < len)
		snprintf(buf + n, len - n, "%s%s", n ? " " : "", w);
}

/*
 * Appends to buf what else tells two layouts of the same parallelism apart:
 * the recompute policy ("rc:full"), the layers' precision when not bf16
 * ("fp8:current", "nvfp4"), TP overlap ("tp-overlap"), a 3D tensor
 * parallel grid ("grid=8x1x16": row x column x depth), the clusters of a
 * multi-cluster run ("clusters=4") and local SGD's sync interval with what
 * it costs in tokens ("H=100 streamed tokens-x1.15"): a layout that syncs
 * every H steps is faster per step but needs more tokens for the same loss,
 * and the label must not hide that.
 */
static void rep_layout_extras(const cvc_rep_table *t, size_t r, char *buf, size_t len)
{
	long c = cvc_rep_table_find(t, "recompute");
	const char *rc = c >= 0 ? cvc_rep_table_str(t, r, (size_t)c) : NULL;
	double g[3], cl = rep_num(t, r, cvc_rep_table_find(t, "clusters"));
	double H = rep_num(t, r, cvc_rep_table_find(t, "local_sgd_h"));
	double tf = rep_num(t, r, cvc_rep_table_find(t, "token_factor"));
	static const char *const grid[3] = {"tp_row", "tp_col", "tp_depth"};
	char a[40], b[40], d[40];

	long cd = cvc_rep_table_find(t, "dtype"), cr = cvc_rep_table_find(t, "fp8_recipe");
	const char *dt = cd >= 0 ? cvc_rep_table_str(t, r, (size_t)cd) : NULL;

	if (rc && *rc && strcasecmp(rc, "none") != 0)
		add_word(buf, len, "rc:%s", rc);
	/* the layers' precision, when a sweep sets it: bf16 goes unsaid, fp8
	 * with its recipe ("fp8:current"), nvfp4 and mxfp4 by name */
	if (dt && *dt && strcasecmp(dt, "bf16") != 0) {
		const char *rec = cr >= 0 ? cvc_rep_table_str(t, r, (size_t)cr) : NULL;

		if (!strcasecmp(dt, "fp8") && rec && *rec)
			add_word(buf, len, "fp8:%s", rec);
		else
			add_word(buf, len, "%s", dt);
	}
	if (rep_num(t, r, cvc_rep_table_find(t, "tp_overlap")) > 0)
		add_word(buf, len, "tp-overlap");
	for (int k = 0; k < 3; k++) {
		g[k] = rep_num(t, r, cvc_rep_table_find(t, grid[k]));
		g[k] = isfinite(g[k]) && g[k] > 0 ? g[k] : 0;
	}
	if (g[0] + g[1] + g[2] > 0)
		add_word(buf, len, "grid=%sx%sx%s", rep_fmt_num(g[0] > 0 ? g[0] : 1, a, sizeof a),
			 rep_fmt_num(g[1] > 0 ? g[1] : 1, b, sizeof b),
			 rep_fmt_num(g[2] > 0 ? g[2] : 1, d, sizeof d));
	if (isfinite(cl) && cl > 1)
		add_word(buf, len, "clusters=%s", rep_fmt_num(cl, a, sizeof a));
	if (isfinite(H) && H > 1) {
		add_word(buf, len, "H=%s", rep_fmt_num(H, a, sizeof a));
		if (rep_num(t, r, cvc_rep_table_find(t, "outer_overlap")) > 0)
			add_word(buf, len, "streamed");
		if (isfinite(tf) && tf != 1)
			add_word(buf, len, "tokens-x%.2f", tf);
	}
}

/* "tp8 pp4 dp2 mb1 rc:full" from the layout columns present. */
void rep_layout(const cvc_rep_table *t, size_t r, char *buf, size_t len)
{
	static const char *const keys[] = {"tp", "pp", "vpp", "dp", "cp", "ep", "zero",
					   "micro_batch"};
	static const char *const shown[] = {"tp", "pp", "vpp", "dp", "cp", "ep", "zero", "mb"};
	size_t n = 0;

	buf[0] = '\0';
	for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++) {
		long c = cvc_rep_table_find(t, keys[k]);
		double v = rep_num(t, r, c);
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
	rep_layout_extras(t, r, buf, len);
}

/*
 * The hardware a scenario runs on: the GPU name, plus the projector's
 * future-hardware scale factors when they are not 1, so that "B200 with 2x
 * compute" is a generation of its own in the charts.
 */
void rep_hw_label(const cvc_rep_table *t, size_t r, const struct rep_roles *ro, char *buf,
		     size_t len)
{
	static const char *const keys[] = {"scale_compute", "scale_hbm_bw", "scale_hbm_cap",
					   "scale_intra_bw", "scale_inter_bw"};
	static const char *const shown[] = {"compute", "hbm_bw", "hbm_cap", "intra_bw",
					    "inter_bw"};
	char nb[40];
	size_t n;

	snprintf(buf, len, "%s", rep_text(t, r, ro->col[REP_ROLE_HW], nb, sizeof nb));
	for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++) {
		double v = rep_num(t, r, cvc_rep_table_find(t, keys[k]));

		if (!isfinite(v) || v == 1)
			continue;
		n = strlen(buf);
		if (n + 1 < len)
			snprintf(buf + n, len - n, " %s x%s", shown[k], rep_fmt_num(v, nb, sizeof nb));
	}
}

static int cmp_gkey(const void *pa, const void *pb)
{
	const struct rep_gkey *a = pa, *b = pb;
	int c;

	if (a->gen != b->gen)
		return a->gen - b->gen;
	c = strcmp(a->hw, b->hw);
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
	return ro->col[REP_ROLE_INDEX] >= 0 ? rep_num(sc, r, ro->col[REP_ROLE_INDEX]) : (double)r;
}

/* 1. time per scenario that fits, stacked: compute-only, hidden, exposed,
   bubble; model, hardware, GPU count and layout apart, so the page can
   group the bars (a scenario that does not fit has no step to show). */
static int proj_time_table(const cvc_rep_table *sc, const struct rep_roles *ro,
			   struct rep_tables *out)
{
	static const char *const stem[6] = {"compute_only", "hidden", "exposed", "bubble", "step",
					    "host"};
	const long *col = ro->col;
	const char *cols[11] = {"scenario", "model", "hw", "gpus", "layout"};
	char unit_cols[6][40];
	cvc_rep_table *t;
	long hc;
	int rc = 0;

	for (int k = 0; k < 6; k++) {
		snprintf(unit_cols[k], sizeof unit_cols[k], "%s_%s", stem[k], ro->unit);
		cols[k + 5] = unit_cols[k];
	}
	hc = cvc_rep_table_find(sc, unit_cols[5]);
	t = cvc_rep_table_new("proj_time", "Step time per scenario that fits", 11, cols);
	if (!t)
		return -1;
	for (size_t r = 0; r < cvc_rep_table_nrows(sc) && !rc; r++) {
		double comp = rep_num(sc, r, col[REP_ROLE_COMPUTE]);
		double hid = rep_num(sc, r, col[REP_ROLE_HIDDEN]);
		double bub = rep_num(sc, r, col[REP_ROLE_BUBBLE]);
		double host = rep_num(sc, r, hc);
		char lay[160], b1[96], b2[96];
		long i;

		if (!fits(sc, r, ro))
			continue;
		if (!isfinite(hid))
			hid = 0;
		if (!isfinite(bub))
			bub = 0;
		if (!isfinite(host))
			host = 0;
		i = cvc_rep_table_add_row(t);
		if (i < 0) {
			rc = -1;
			break;
		}
		rep_layout(sc, r, lay, sizeof lay);
		rep_hw_label(sc, r, ro, b2, sizeof b2);
		cvc_rep_table_set_num(t, (size_t)i, 0, scenario_index(sc, r, ro));
		rc = cvc_rep_table_set_str(t, (size_t)i, 1,
					   rep_text(sc, r, col[REP_ROLE_MODEL], b1, sizeof b1)) ||
		     cvc_rep_table_set_str(t, (size_t)i, 2, b2) ||
		     cvc_rep_table_set_str(t, (size_t)i, 4, lay);
		cvc_rep_table_set_num(t, (size_t)i, 3, rep_num(sc, r, col[REP_ROLE_GPUS]));
		/* Hidden communication runs under compute: take it out so the
		   stack adds up to the step; so is the GPU's wait on the host's
		   launches (host_s, in compute_s), its own part of the bar, not
		   compute the GPU does. */
		host = fmin(host, comp > 0 ? comp : 0);
		cvc_rep_table_set_num(t, (size_t)i, 5,
				      comp - hid - host > 0 ? comp - hid - host : 0);
		cvc_rep_table_set_num(t, (size_t)i, 10, host);
		cvc_rep_table_set_num(t, (size_t)i, 6, hid);
		cvc_rep_table_set_num(t, (size_t)i, 7, rep_num(sc, r, col[REP_ROLE_EXPOSED]));
		cvc_rep_table_set_num(t, (size_t)i, 8, bub);
		cvc_rep_table_set_num(t, (size_t)i, 9, rep_num(sc, r, col[REP_ROLE_STEP]));
	}
	if (!rc)
		rc = rep_tables_take(out, &t);
	cvc_rep_table_free(t);
	return rc;
}

/*
 * The scenarios that fit and have a throughput, as group keys sorted by
 * (hardware generation, model size, model, gpus); their strings live in rt
 * (one per scenario row).  Appends the `hardware` table to out.  -1 on no
 * memory.
 */
static int group_keys(const cvc_rep_table *sc, const struct rep_roles *ro, struct rep_gkey *g,
		      struct rowtext *rt, size_t *ng, struct rep_tables *out)
{
	const long *col = ro->col;
	char buf[64];

	*ng = 0;
	for (size_t r = 0; r < cvc_rep_table_nrows(sc); r++) {
		double tps = rep_num(sc, r, col[REP_ROLE_TOKENS]);

		if (!fits(sc, r, ro) || !isfinite(tps) || !isfinite(rep_num(sc, r, col[REP_ROLE_GPUS])))
			continue;
		rep_hw_label(sc, r, ro, rt[r].hw, sizeof rt[r].hw);
		snprintf(rt[r].model, sizeof rt[r].model, "%s",
			 rep_text(sc, r, col[REP_ROLE_MODEL], buf, sizeof buf));
		g[*ng].row = r;
		g[*ng].hw = rt[r].hw;
		g[*ng].model = rt[r].model;
		g[*ng].params = params_b(sc, r, ro);
		g[*ng].gpus = rep_num(sc, r, col[REP_ROLE_GPUS]);
		(*ng)++;
	}
	if (rep_hw_generations(sc, ro, g, *ng, out))
		return -1;
	qsort(g, *ng, sizeof *g, cmp_gkey);
	return 0;
}

/* The best_layout table, empty, with the step column in the projection's unit. */
static cvc_rep_table *best_layout_new(const struct rep_roles *ro)
{
	static const char *const cols[] = {"hw", "model", "params_b", "gpus", "layout",
					   "tokens_per_s", "step", "mfu", "comm_share",
					   "exposed_share", "mem_gb", "scenario",
					   "tokens_per_s_lo", "tokens_per_s_hi",
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
			   const struct rep_roles *ro, const struct rep_gkey *g)
{
	static const int roles[] = {REP_ROLE_TOKENS, REP_ROLE_STEP, REP_ROLE_MFU,
				    REP_ROLE_COMM_SHARE, REP_ROLE_EXPOSED_SHARE, REP_ROLE_MEM};
	size_t r = g->row;
	char lay[160];
	long k = cvc_rep_table_add_row(best);

	if (k < 0)
		return -1;
	rep_layout(sc, r, lay, sizeof lay);
	if (cvc_rep_table_set_str(best, (size_t)k, 0, g->hw) || cvc_rep_table_set_str(best, (size_t)k, 1, g->model) ||
	    cvc_rep_table_set_str(best, (size_t)k, 4, lay))
		return -1;
	cvc_rep_table_set_num(best, (size_t)k, 2, g->params);
	cvc_rep_table_set_num(best, (size_t)k, 3, g->gpus);
	for (size_t i = 0; i < sizeof roles / sizeof roles[0]; i++)
		cvc_rep_table_set_num(best, (size_t)k, 5 + i,
				      roles[i] == REP_ROLE_COMM_SHARE
					      ? rep_comm_share(sc, r, ro, NULL, NULL)
					      : rep_num(sc, r, ro->col[roles[i]]));
	cvc_rep_table_set_num(best, (size_t)k, 11, scenario_index(sc, r, ro));
	cvc_rep_table_set_num(best, (size_t)k, 12, rep_num(sc, r, ro->col[REP_ROLE_TOKENS_LO]));
	cvc_rep_table_set_num(best, (size_t)k, 13, rep_num(sc, r, ro->col[REP_ROLE_TOKENS_HI]));
	return cvc_rep_table_set_str(best, (size_t)k, 14,
			   rep_text(sc, r, ro->col[REP_ROLE_WARNINGS], lay, sizeof lay));
}

/*
 * 2. best layout per (hardware, model, GPU count): most tokens/s that fits,
 * one row per group of g[0..ng); the groups' GPU counts go to gpu_counts
 * and their keys to chosen (both one per row of best).
 */
static int best_layout_fill(cvc_rep_table *best, const cvc_rep_table *sc,
			    const struct rep_roles *ro, const struct rep_gkey *g, size_t ng,
			    double *gpu_counts, struct rep_gkey *chosen)
{
	/* local SGD's effective throughput (tokens/s over the tokens it needs
	 * for the same loss) where the projection has it: equal to tokens/s
	 * for every layout that syncs each step */
	const long eff = cvc_rep_table_find(sc, "eff_tokens_per_s");
	const long tok = eff >= 0 ? eff : ro->col[REP_ROLE_TOKENS];

	for (size_t i = 0, j; i < ng; i = j) {
		size_t b = i;

		for (j = i; j < ng && strcmp(g[j].hw, g[i].hw) == 0 &&
			    strcmp(g[j].model, g[i].model) == 0 && g[j].gpus == g[i].gpus; j++)
			if (rep_num(sc, g[j].row, tok) > rep_num(sc, g[b].row, tok))
				b = j;
		if (best_layout_row(best, sc, ro, &g[b]))
			return -1;
		gpu_counts[best->nrows - 1] = g[b].gpus;
		chosen[best->nrows - 1] = g[b];
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

		size_t n1;

		if (i == 0 || !same_model(best, i, i - 1))
			base = i;
		for (n1 = base; n1 + 1 < best->nrows && same_model(best, n1 + 1, base); n1++)
			;
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
		/* a hardware and model at one GPU count scales from nothing */
		cvc_rep_table_set_num(t, (size_t)k, 6, ideal > 0 && n1 > base ? tps / ideal : NAN);
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
	struct rep_gkey *g = calloc(n ? n : 1, sizeof *g);
	struct rowtext *rt = calloc(n ? n : 1, sizeof *rt);
	double *gpu_counts = NULL;
	struct rep_gkey *chosen = NULL;
	cvc_rep_table *best = NULL;
	int rc = -1;

	if (!g || !rt || group_keys(sc, ro, g, rt, &ng, out))
		goto out;
	best = best_layout_new(ro);
	gpu_counts = calloc(ng ? ng : 1, sizeof *gpu_counts);
	chosen = calloc(ng ? ng : 1, sizeof *chosen);
	if (!best || !gpu_counts || !chosen ||
	    best_layout_fill(best, sc, ro, g, ng, gpu_counts, chosen))
		goto out;
	ncounts = distinct_counts(gpu_counts, best->nrows);
	if (rep_headline_tables(sc, ro, chosen, best->nrows, out) || scaling_table(best, out) ||
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
	free(chosen);
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
/*
 * Detail columns of the projector's output that the page leaves to the
 * projection file: per-type communication and hidden time and their
 * intervals, the intervals of what the page does not chart, FLOP counts,
 * the memory split (charted from the best layouts), the model's shape.
 */
static int detail_col(const char *name)
{
	static const char *const exact[] = {
		"model_flops", "hw_flops", "hfu", "sigma", "contention_s", "gaps_s", "host_s",
		"half_tokens_per_s", "marginal_tokens_per_gpu", "mem_params_gb", "mem_act_gb",
		"mem_buf_gb", "energy_mwh", "gpu_hours", "layers", "hidden", "heads", "kv_heads",
		"ffn", "ffn_type", "vocab", "seq", "nodes", "study", "step_s_lo", "step_s_hi",
		"compute_s_lo", "compute_s_hi", "comm_s_lo", "comm_s_hi", "hidden_s_lo",
		"hidden_s_hi", "exposed_s_lo", "exposed_s_hi", "mfu_lo", "mfu_hi",
		"tokens_per_s_per_gpu_lo", "tokens_per_s_per_gpu_hi", "train_days_lo",
		"train_days_hi", "cost_usd_lo", "cost_usd_hi"};

	for (size_t i = 0; i < sizeof exact / sizeof exact[0]; i++)
		if (strcmp(name, exact[i]) == 0)
			return 1;
	return (strncmp(name, "comm_", 5) == 0 || strncmp(name, "hidden_", 7) == 0) &&
	       strcmp(name, "comm_s") != 0 && strcmp(name, "hidden_s") != 0 &&
	       strncmp(name, "comm_share", 10) != 0;
}

/* The local-SGD columns that are throughput or days over a token factor
 * (projector/localsgd.c): with token_factor the same in every row (1 when
 * nothing syncs every H steps) they repeat tokens_per_s and train_days. */
static int token_scaled_col(const char *name)
{
	return strncmp(name, "eff_tokens_per_s", 16) == 0 || strcmp(name, "days_to_loss") == 0;
}

/* Whether column c holds one value in every row (and there are rows to compare). */
static int constant_col(const cvc_rep_table *t, size_t c)
{
	size_t n = cvc_rep_table_nrows(t);

	for (size_t r = 1; r < n; r++) {
		const rep_cell *a = rep_cell_at(t, 0, c), *b = rep_cell_at(t, r, c);

		if (a->kind != b->kind || (a->kind == CVC_REP_NUM && a->v != b->v) ||
		    (a->kind == CVC_REP_STR && strcmp(a->s, b->s) != 0))
			return 0;
	}
	return n > 1;
}

int rep_scenarios_view(const cvc_rep_table *sc, cvc_rep_table **out)
{
	size_t nc = cvc_rep_table_ncols(sc), nk = 0;
	size_t *keep = calloc(nc ? nc : 1, sizeof *keep);
	const char **cols = calloc(nc ? nc : 1, sizeof *cols);
	cvc_rep_table *t = NULL;
	int rc = -1;

	*out = NULL;
	long tf = cvc_rep_table_find(sc, "token_factor");
	int tf_same = tf < 0 || constant_col(sc, (size_t)tf);

	if (!keep || !cols)
		goto out;
	for (size_t c = 0; c < nc; c++)
		if (!detail_col(cvc_rep_table_col(sc, c)) && !constant_col(sc, c) &&
		    !(tf_same && token_scaled_col(cvc_rep_table_col(sc, c)))) {
			cols[nk] = cvc_rep_table_col(sc, c);
			keep[nk++] = c;
		}
	t = cvc_rep_table_new("scenarios", "Scenarios: the columns that differ between them "
			      "(every column is in the projection file)", nk, cols);
	if (!t)
		goto out;
	free(t->comments);
	t->comments = strdup(cvc_rep_table_comments(sc));
	if (!t->comments)
		goto out;
	for (size_t r = 0; r < cvc_rep_table_nrows(sc); r++) {
		long k = cvc_rep_table_add_row(t);

		if (k < 0)
			goto out;
		for (size_t j = 0; j < nk; j++) {
			const rep_cell *x = rep_cell_at(sc, r, keep[j]);

			if (x->kind == CVC_REP_NUM)
				cvc_rep_table_set_num(t, (size_t)k, j, x->v);
			else if (x->kind == CVC_REP_STR && cvc_rep_table_set_str(t, (size_t)k, j, x->s))
				goto out;
		}
	}
	*out = t;
	t = NULL;
	rc = 0;
out:
	cvc_rep_table_free(t);
	free(keep);
	free(cols);
	return rc;
}
