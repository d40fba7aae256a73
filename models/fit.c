/*
 * fit.c - fitting operator models to measured rows (GSL) and their quality
 * figures; storing the fits is fitstore.c's.
 *
 * Both fits minimise relative error: a GEMM of 5 us and one of 5 ms count
 * the same, which is what a projection summing many ops needs.  Outliers
 * (a noisy row, a different kernel picked by a heuristic) are damped by
 * bisquare reweighting rather than trusted.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_errno.h>
#include <gsl/gsl_multifit.h>

#include "cvc/cvc_model.h"
#include "models/opmodel_int.h"

/* What the GSL fitters do first: the arguments checked (CVC_ERR_USAGE
 * when one is missing), out cleared, err empty, and GSL's default handler,
 * which aborts, off: the library returns statuses instead. */
static cvc_status fit_start(const cvc_model_row *rows, const cvc_hw_spec *spec,
			    cvc_model_fit *out, char *err, size_t errlen)
{
	if (!rows || !spec || !out || !err || !errlen)
		return CVC_ERR_USAGE;
	gsl_set_error_handler_off();
	err[0] = '\0';
	memset(out, 0, sizeof *out);
	return CVC_OK;
}

/* ---- quality ---------------------------------------------------------------- */

static void quality(const cvc_model_fit *fit, const cvc_hw_spec *spec, const cvc_model_row *rows,
		    size_t n, double *r2, double *mape)
{
	double sum = 0, mean = 0, ss_tot = 0, ss_res = 0;

	for (size_t i = 0; i < n; i++)
		mean += log(rows[i].time_us);
	mean /= (double)(n ? n : 1);
	for (size_t i = 0; i < n; i++) {
		double t = cvc_model_fit_predict(fit, spec, &rows[i]);
		double y = rows[i].time_us, d;

		sum += fabs(t - y) / y;
		d = log(t > 0 ? t : 1e-9) - log(y);
		ss_res += d * d;
		ss_tot += (log(y) - mean) * (log(y) - mean);
	}
	if (mape)
		*mape = n ? 100.0 * sum / (double)n : NAN;
	if (r2)
		*r2 = ss_tot > 0 ? 1.0 - ss_res / ss_tot : NAN;
}

static double row_size(const cvc_model_row *r)
{
	if (r->kind == CVC_MODEL_COLLECTIVE || r->kind == CVC_MODEL_MEMBOUND)
		return (double)r->bytes;
	return 2.0 * (double)(r->b > 0 ? r->b : 1) * (double)r->m * (double)r->n * (double)r->k;
}

static int cmp_size(const void *a, const void *b)
{
	double x = row_size(a), y = row_size(b);

	return x < y ? -1 : x > y;
}

/* Sorted copy of rows by size (FLOPs or bytes); caller frees. */
static cvc_model_row *sorted_copy(const cvc_model_row *rows, size_t n)
{
	cvc_model_row *s = malloc((n ? n : 1) * sizeof *s);

	if (!s)
		return NULL;
	memcpy(s, rows, n * sizeof *s);
	qsort(s, n, sizeof *s, cmp_size);
	return s;
}

/* ---- GEMM -------------------------------------------------------------------- */

/* Column subsets tried in order: a negative factor means the data cannot
 * tell two terms apart, so the simpler form is used instead. */
static const int gemm_forms[][4] = {
	{1, 1, 1, 1}, {1, 0, 1, 1}, {1, 1, 0, 1}, {1, 0, 0, 1},
};

/*
 * Least squares on relative error, bisquare-reweighted (GSL): finds c[0..nc)
 * with sum_j c_j x_ij ~ t_i for every row, each row divided by its time
 * t_i so that a 10% miss weighs the same on a 5 us and a 5 ms row.  feat
 * fills row i's nc features.  CVC_ERR_INTERNAL when GSL fails (its last
 * iterate after GSL_EMAXITER is kept: it is usable).
 */
typedef void (*feat_fn)(const cvc_model_row *row, const void *ctx, double *x);

static cvc_status robust_relfit(const cvc_model_row *rows, size_t n, size_t nc, feat_fn feat,
				const void *ctx, double *c_out)
{
	gsl_matrix *X = gsl_matrix_alloc(n, nc), *cov = gsl_matrix_alloc(nc, nc);
	gsl_vector *y = gsl_vector_alloc(n), *c = gsl_vector_alloc(nc);
	gsl_multifit_robust_workspace *w =
		gsl_multifit_robust_alloc(gsl_multifit_robust_bisquare, n, nc);
	cvc_status st = CVC_ERR_NOMEM;

	if (X && cov && y && c && w) {
		int rc;

		for (size_t i = 0; i < n; i++) {
			double x[8];

			feat(&rows[i], ctx, x);
			for (size_t j = 0; j < nc; j++)
				gsl_matrix_set(X, i, j, x[j] / rows[i].time_us);
			gsl_vector_set(y, i, 1.0);
		}
		rc = gsl_multifit_robust(X, y, c, cov, w);
		st = rc && rc != GSL_EMAXITER ? CVC_ERR_INTERNAL : CVC_OK;
		for (size_t j = 0; st == CVC_OK && j < nc; j++)
			c_out[j] = gsl_vector_get(c, j);
	}
	gsl_matrix_free(X);
	gsl_matrix_free(cov);
	gsl_vector_free(y);
	gsl_vector_free(c);
	if (w)
		gsl_multifit_robust_free(w);
	return st;
}

/* GEMM features of one form: the columns of opm_gemm_features it keeps. */
struct gemm_feat {
	const double *p;
	const cvc_hw_spec *spec;
	const int *cols;
	int nc;
};

static void gemm_row_feat(const cvc_model_row *r, const void *ctx, double *x)
{
	const struct gemm_feat *g = ctx;
	double all[4];

	opm_gemm_features(g->p, g->spec, r->m, r->n, r->k, r->b, r->dtype, all);
	for (int j = 0; j < g->nc; j++)
		x[j] = all[g->cols[j]];
}

static cvc_status gemm_solve(const cvc_model_row *rows, size_t n, const cvc_hw_spec *spec,
			     double *p)
{
	cvc_status st = CVC_ERR_INTERNAL;

	for (size_t f = 0; f < sizeof gemm_forms / sizeof gemm_forms[0]; f++) {
		int cols[4], nc = 0, ok = 1;
		double c[4], q[4] = {0, 0, 0, 0};
		struct gemm_feat g = {p, spec, cols, 0};

		for (int j = 0; j < 4; j++)
			if (gemm_forms[f][j])
				cols[nc++] = j;
		if (n <= (size_t)nc + 1)
			continue;
		g.nc = nc;
		if ((st = robust_relfit(rows, n, (size_t)nc, gemm_row_feat, &g, c)) == CVC_ERR_NOMEM)
			return st;
		if (st)
			continue;
		for (int j = 0; j < nc; j++)
			q[cols[j]] = c[j];
		for (int j = 0; j < 4; j++)
			if (!isfinite(q[j]) || q[j] < 0)
				ok = 0;
		if (ok && q[3] > 0) {
			p[GP_T0] = q[0], p[GP_WAVE] = q[1], p[GP_CWAVE] = q[2], p[GP_CFLOP] = q[3];
			return CVC_OK;
		}
		st = CVC_ERR_INTERNAL;
	}
	return st;
}

cvc_status cvc_model_fit_gemm(const cvc_model_row *rows, size_t n, const cvc_hw_spec *spec,
			      cvc_model_fit *out, char *err, size_t errlen)
{
	return cvc_model_fit_gemm_min(rows, n, 6, spec, out, err, errlen);
}

cvc_status cvc_model_fit_gemm_min(const cvc_model_row *rows, size_t n, size_t min_rows,
				  const cvc_hw_spec *spec, cvc_model_fit *out, char *err,
				  size_t errlen)
{
	cvc_model_row *s = NULL;
	cvc_status st = CVC_OK;
	cvc_hw_spec boosted;
	const cvc_hw_spec *sheet;

	if (fit_start(rows, spec, out, err, errlen))
		return CVC_ERR_USAGE;
	if (min_rows < 4) {
		snprintf(err, errlen, "gemm fit: minimum row count %zu is below 4", min_rows);
		return CVC_ERR_USAGE;
	}
	if (n < min_rows) {
		snprintf(err, errlen, "gemm fit: need at least %zu rows, got %zu", min_rows, n);
		return CVC_ERR_USAGE;
	}
	for (size_t i = 0; i < n; i++) {
		if (rows[i].kind != CVC_MODEL_GEMM || rows[i].m <= 0 || rows[i].n <= 0 ||
		    rows[i].k <= 0 || !(rows[i].time_us > 0)) {
			snprintf(err, errlen, "gemm fit: row %zu is not a gemm row with a positive time", i);
			return CVC_ERR_USAGE;
		}
	}
	out->kind = CVC_MODEL_GEMM;
	snprintf(out->gpu, sizeof out->gpu, "%s", spec->name);
	out->dtype = rows[0].dtype;
	out->nparams = GP_N;
	/* benchmark rows ran in bursts: fit against the peak times the burst
	 * over the sustained matmul throughput of the GPU's generation
	 * (ceiling.c), so the efficiency is what a training step sustains; the
	 * quality figures below compare with the rows as measured, so they use
	 * the same spec */
	sheet = spec;
	boosted = *spec;
	if (rows[0].bench) {
		double c = opm_burst_ratio(spec);

		for (int d = 0; d < CVC_HW_NDTYPE; d++)
			boosted.peak_tflops[d] *= c;
	}
	spec = &boosted;
	opm_gemm_defaults(out->params);
	if ((st = gemm_solve(rows, n, spec, out->params))) {
		snprintf(err, errlen, "gemm fit: no model form gives non-negative factors on %zu rows", n);
		return st;
	}
	{
		/* faster than the peak at the datasheet clock: not a GEMM */
		double t = opm_gemm_us(out->params, sheet, 8192, 8192, 8192, 1, out->dtype);
		double floor_us = 2.0 * 8192 * 8192 * 8192 / opm_peak_flops_us(sheet, out->dtype);

		if (t < floor_us) {
			snprintf(err, errlen,
				 "gemm fit: %s rows run faster than the dense %s peak (%.2f of it "
				 "at 8192^3): not consistent with the spec sheet, not fitted",
				 cvc_hw_dtype_name(out->dtype), cvc_hw_dtype_name(out->dtype),
				 floor_us / t);
			return CVC_ERR_USAGE;
		}
	}
	out->n_points = (int)n;
	out->dom_min = INFINITY;
	out->dom_max = 0;
	for (size_t i = 0; i < n; i++) {
		double f = row_size(&rows[i]);

		out->dom_min = f < out->dom_min ? f : out->dom_min;
		out->dom_max = f > out->dom_max ? f : out->dom_max;
	}
	quality(out, spec, rows, n, &out->r2, &out->mape);
	/* Extrapolation: fit on the smaller half of the FLOPs, predict the rest. */
	out->extrap_mape = NAN;
	s = sorted_copy(rows, n);
	if (!s)
		return CVC_ERR_NOMEM;
	if (n >= 12) {
		cvc_model_fit half = *out;

		opm_gemm_defaults(half.params);
		if (gemm_solve(s, n / 2, spec, half.params) == CVC_OK)
			quality(&half, spec, s + n / 2, n - n / 2, NULL, &out->extrap_mape);
	}
	free(s);
	return CVC_OK;
}

/* ---- memory-bound ------------------------------------------------------------- */

/*
 * t = floor + eff^-1 bytes/BW on rows[0..n) (robust_relfit).  When the free
 * floor comes out negative (rows that never reach the launch-bound regime
 * cannot place it) it is pinned to 0.
 */
struct mem_feat {
	double bw;  /* bytes per us */
	int floor;  /* 1: the floor is a column */
};

static void mem_row_feat(const cvc_model_row *r, const void *ctx, double *x)
{
	const struct mem_feat *m = ctx;

	if (m->floor)
		*x++ = 1.0;
	*x = (double)r->bytes / m->bw;
}

static cvc_status mem_solve(const cvc_model_row *rows, size_t n, const cvc_hw_spec *spec,
			    double *p)
{
	struct mem_feat m = {spec->hbm_bw_gbps > 0 ? spec->hbm_bw_gbps * 1e3 : 1e3, 1};
	cvc_status st = CVC_ERR_INTERNAL;

	for (int form = 0; form < 2; form++) {
		size_t nc = form == 0 ? 2 : 1;
		double c[2], fl, cb;

		if (n <= nc + 1)
			continue;
		m.floor = form == 0;
		if ((st = robust_relfit(rows, n, nc, mem_row_feat, &m, c)) == CVC_ERR_NOMEM)
			return st;
		if (st)
			continue;
		fl = nc == 2 ? c[0] : 0.0;
		cb = c[nc - 1];
		if (isfinite(fl) && isfinite(cb) && fl >= 0 && cb > 0) {
			p[MP_FLOOR] = fl;
			p[MP_EFF] = 1.0 / cb;
			return CVC_OK;
		}
		st = CVC_ERR_INTERNAL;
	}
	return st;
}

/* Token count first (the split the extrapolation check makes), then bytes. */
static int cmp_tokens(const void *a, const void *b)
{
	const cvc_model_row *x = a, *y = b;

	if (x->m != y->m)
		return x->m < y->m ? -1 : 1;
	return x->bytes < y->bytes ? -1 : x->bytes > y->bytes;
}

cvc_status cvc_model_fit_membound(const cvc_model_row *rows, size_t n, const cvc_hw_spec *spec,
				  cvc_model_fit *out, char *err, size_t errlen)
{
	cvc_model_row *s = NULL;
	cvc_status st;
	size_t half;

	if (fit_start(rows, spec, out, err, errlen))
		return CVC_ERR_USAGE;
	if (n < 4) {
		snprintf(err, errlen, "membound fit: need at least 4 rows, got %zu", n);
		return CVC_ERR_USAGE;
	}
	for (size_t i = 0; i < n; i++) {
		if (rows[i].kind != CVC_MODEL_MEMBOUND || rows[i].mem != rows[0].mem ||
		    rows[i].bytes <= 0 || !(rows[i].time_us > 0)) {
			snprintf(err, errlen,
				 "membound fit: row %zu is not a %s row with positive bytes and time", i,
				 cvc_model_mem_name(rows[0].mem) ? cvc_model_mem_name(rows[0].mem) : "?");
			return CVC_ERR_USAGE;
		}
	}
	out->kind = CVC_MODEL_MEMBOUND;
	out->mem = rows[0].mem;
	out->dtype = rows[0].dtype;
	snprintf(out->gpu, sizeof out->gpu, "%s", spec->name);
	out->nparams = MP_N;
	if ((st = mem_solve(rows, n, spec, out->params))) {
		snprintf(err, errlen, "membound fit: no positive efficiency fits the %zu rows", n);
		return st;
	}
	if (out->params[MP_EFF] > 1.0) {
		snprintf(err, errlen,
			 "membound fit: %zu rows run at %.2f x the HBM bandwidth of %s: their data "
			 "was cached, not streamed from HBM",
			 n, out->params[MP_EFF], spec->name);
		return CVC_ERR_USAGE;
	}
	out->n_points = (int)n;
	out->dom_min = INFINITY;
	out->dom_max = 0;
	for (size_t i = 0; i < n; i++) {
		double b = (double)rows[i].bytes;

		out->dom_min = b < out->dom_min ? b : out->dom_min;
		out->dom_max = b > out->dom_max ? b : out->dom_max;
	}
	quality(out, spec, rows, n, &out->r2, &out->mape);
	out->extrap_mape = NAN;
	s = malloc(n * sizeof *s);
	if (!s)
		return CVC_ERR_NOMEM;
	memcpy(s, rows, n * sizeof *s);
	qsort(s, n, sizeof *s, cmp_tokens);
	/* the smaller half of the token counts: every row of the middle token
	 * count goes to one side, so no shape is on both */
	half = n / 2;
	while (half > 0 && half < n && s[half].m == s[half - 1].m && s[half].m > 0)
		half--;
	if (half >= 4 && n - half >= 4) {
		cvc_model_fit h = *out;

		if (mem_solve(s, half, spec, h.params) == CVC_OK)
			quality(&h, spec, s + half, n - half, NULL, &out->extrap_mape);
	}
	free(s);
	return CVC_OK;
}

/* ---- collectives ------------------------------------------------------------ */

struct cpt {
	double s, t; /* bytes, us */
};

/* k-th smallest of v[0..n) (reorders v): Hoare's quickselect, O(n). */
static double select_kth(double *v, size_t n, size_t k)
{
	size_t lo = 0, hi = n - 1;

	while (lo < hi) {
		double piv = v[(lo + hi) / 2];
		size_t i = lo, j = hi;

		while (i <= j) {
			while (v[i] < piv)
				i++;
			while (v[j] > piv)
				j--;
			if (i <= j) {
				double t = v[i];

				v[i] = v[j], v[j] = t;
				i++;
				if (j == 0)
					break;
				j--;
			}
		}
		if (k <= j)
			hi = j;
		else if (k >= i)
			lo = i;
		else
			break;
	}
	return v[k];
}

/*
 * t = a + c s^pexp on pts[lo..hi), weighted on relative error, with three
 * bisquare reweighting passes.  Returns the sum of squared relative
 * residuals (unweighted) and sets a, c.  Closed form: the breakpoint search
 * calls it tens of thousands of times.
 */
static double seg_fit(const struct cpt *pts, size_t lo, size_t hi, double pexp, double *a,
		      double *c)
{
	double rw[4096];
	size_t n = hi - lo;
	double sse = 0;

	*a = 0, *c = 0;
	if (n == 0)
		return 0;
	for (size_t i = 0; i < n && i < 4096; i++)
		rw[i] = 1.0;
	for (int it = 0; it < 4; it++) {
		double sw = 0, sx = 0, sy = 0, sxx = 0, sxy = 0, det, med, scale;
		double ares[4096];
		size_t m = 0;

		for (size_t i = 0; i < n; i++) {
			double w = (i < 4096 ? rw[i] : 1.0) / (pts[lo + i].t * pts[lo + i].t);
			double x = pow(pts[lo + i].s, pexp), y = pts[lo + i].t;

			sw += w, sx += w * x, sy += w * y, sxx += w * x * x, sxy += w * x * y;
		}
		det = sw * sxx - sx * sx;
		if (n == 1 || fabs(det) < 1e-300 * (sw * sxx + 1e-300)) {
			*a = sy / sw, *c = 0;
		} else {
			*c = (sw * sxy - sx * sy) / det;
			*a = (sy - *c * sx) / sw;
		}
		if (n < 6 || it == 3)
			break;
		for (size_t i = 0; i < n && i < 4096; i++) {
			double r = (*a + *c * pow(pts[lo + i].s, pexp) - pts[lo + i].t) / pts[lo + i].t;

			ares[m++] = fabs(r);
		}
		med = select_kth(ares, m, m / 2);
		scale = 4.685 * 1.4826 * med + 1e-6;
		for (size_t i = 0; i < n && i < 4096; i++) {
			double r = (*a + *c * pow(pts[lo + i].s, pexp) - pts[lo + i].t) / pts[lo + i].t;
			double u = r / scale;

			rw[i] = fabs(u) < 1 ? (1 - u * u) * (1 - u * u) : 0.0;
		}
	}
	for (size_t i = 0; i < n; i++) {
		double r = (*a + *c * pow(pts[lo + i].s, pexp) - pts[lo + i].t) / pts[lo + i].t;

		sse += r * r;
	}
	return sse;
}

struct cstruct {
	int nreg;
	size_t cut[CP_MAXREG + 1]; /* segment r = [cut[r], cut[r+1]) */
	double pexp[CP_MAXREG];
	double a[CP_MAXREG], c[CP_MAXREG];
	double sse;
};

/* Turns segment fits into the stored parameter layout. */
static void to_params(const struct cstruct *cs, const struct cpt *pts, double f, double *p,
		      int *np)
{
	p[0] = cs->nreg;
	for (int r = 0; r < cs->nreg; r++) {
		double *q = p + 1 + CP_PER * r;
		double sref = pts[cs->cut[r + 1] - 1].s;
		double xref = cs->c[r] * pow(sref, cs->pexp[r]);

		q[0] = r == 0 ? 0 : pts[cs->cut[r]].s;
		q[1] = cs->a[r];
		/* busbw at s_ref; 0 marks a flat (latency-only) regime. */
		q[2] = xref > 0 ? sref * f / (xref * 1e3) : 0;
		q[3] = cs->pexp[r];
		q[4] = sref;
	}
	*np = 1 + CP_PER * cs->nreg;
}

/* Best structure with nreg regimes; last_pow lets the last regime's exponent
 * float (0.5 .. 1), for the bandwidth ramp of large messages. */
static void search(const struct cpt *pts, size_t n, int nreg, int last_pow, size_t minseg,
		   struct cstruct *best)
{
	size_t cand[40];
	int nc = 0;
	int G = 24;

	best->sse = INFINITY;
	best->nreg = 0;
	if (n < (size_t)nreg * minseg)
		return;
	for (int g = 1; g <= G; g++) {
		size_t i = n * (size_t)g / (size_t)(G + 1);

		if (i >= minseg && n - i >= minseg && (nc == 0 || cand[nc - 1] != i))
			cand[nc++] = i;
	}
	for (int i1 = -1; i1 < nc; i1++) {
		for (int i2 = -1; i2 < nc; i2++) {
			struct cstruct cs = {0};
			size_t cuts[CP_MAXREG + 1];
			int k = 0;

			if (nreg == 1 && (i1 >= 0 || i2 >= 0))
				continue;
			if (nreg == 2 && (i1 < 0 || i2 >= 0))
				continue;
			if (nreg == 3 && (i1 < 0 || i2 <= i1))
				continue;
			cuts[k++] = 0;
			if (i1 >= 0)
				cuts[k++] = cand[i1];
			if (i2 >= 0)
				cuts[k++] = cand[i2];
			cuts[k] = n;
			if (nreg == 3 && cuts[2] - cuts[1] < minseg)
				continue;
			cs.nreg = nreg;
			memcpy(cs.cut, cuts, sizeof cuts);
			cs.sse = 0;
			for (int r = 0; r < nreg; r++) {
				double bsse = INFINITY, ba = 0, bc = 0, bp = 1;
				int pstep = (r == nreg - 1 && last_pow) ? 25 : 0;

				for (int s = 0; s <= pstep; s++) {
					double pe = 1.0 - 0.02 * s, a, c;
					double e = seg_fit(pts, cuts[r], cuts[r + 1], pe, &a, &c);

					if (e < bsse)
						bsse = e, ba = a, bc = c, bp = pe;
				}
				cs.a[r] = ba, cs.c[r] = bc, cs.pexp[r] = bp;
				cs.sse += bsse;
			}
			if (cs.sse < best->sse)
				*best = cs;
		}
	}
}

struct cctx {
	cvc_model_coll c;
	int nranks;
	double f;
	int large;         /* attach a large-message regime */
	double bw_l, sfill; /* its bus bandwidth (GB/s) and fill (bytes) */
};

/*
 * Appends the large-message regime t = (S + sfill) f / bw_l, competing with
 * the fitted ones above dom_max (opmodel_int.h).  Its bandwidth is the
 * system's link bandwidth times an efficiency fitted on other measured data
 * (XLA's H100 table), never on the rows at hand: sizes below the largest
 * measured one cannot show a protocol NCCL only picks above it.
 */
static void attach_large(double *p, int *np, double dom_max, const struct cctx *cx)
{
	int nreg = (int)p[0];
	double *q = p + 1 + CP_PER * nreg;

	if (nreg >= CP_MAXREG)
		return;
	q[0] = -dom_max;
	q[1] = cx->sfill * cx->f / (cx->bw_l * 1e3);
	q[2] = cx->bw_l;
	q[3] = 1.0;
	q[4] = dom_max;
	p[0] = nreg + 1;
	*np = 1 + CP_PER * (nreg + 1);
}

static double cs_predict(const double *p, int np, double s, const struct cctx *cx)
{
	return opm_coll_us(p, np, cx->c, (int64_t)s, cx->nranks);
}

/* MAPE of params on pts[lo..hi). */
static double pts_mape(const double *p, int np, const struct cpt *pts, size_t lo, size_t hi,
		       const struct cctx *cx)
{
	double sum = 0;

	for (size_t i = lo; i < hi; i++)
		sum += fabs(cs_predict(p, np, pts[i].s, cx) - pts[i].t) / pts[i].t;
	return hi > lo ? 100.0 * sum / (double)(hi - lo) : NAN;
}

/*
 * Chooses the structure (1-3 regimes, last one linear or ramping) that
 * both fits and extrapolates: each candidate is also fitted on the smaller
 * half of the points and scored on the larger half; score = 0.5 x in-sample
 * MAPE + that extrapolation MAPE.  Projections mostly go to larger
 * messages than were measured, so a structure that only bends to the data
 * it saw loses (the weight was chosen on vidur's a100_dgx groups).
 */
static void coll_choose(const struct cpt *pts, size_t n, const struct cctx *cx, int maxreg,
			double *p, int *np)
{
	double best_score = INFINITY;
	size_t minseg = n >= 40 ? n / 10 : 3;

	for (int nreg = 1; nreg <= maxreg; nreg++) {
		for (int lp = 0; lp <= 1; lp++) {
			struct cstruct full, half;
			double q[CVC_MODEL_MAXPARAM], qh[CVC_MODEL_MAXPARAM], score;
			int nq, nqh;

			search(pts, n, nreg, lp, minseg, &full);
			if (!full.nreg)
				continue;
			to_params(&full, pts, cx->f, q, &nq);
			score = 0.5 * pts_mape(q, nq, pts, 0, n, cx);
			search(pts, n / 2, nreg, lp, minseg / 2 > 2 ? minseg / 2 : 2, &half);
			if (half.nreg) {
				to_params(&half, pts, cx->f, qh, &nqh);
				if (cx->large)
					attach_large(qh, &nqh, pts[n / 2 - 1].s, cx);
				score += pts_mape(qh, nqh, pts, n / 2, n, cx);
			} else {
				score += 1000.0; /* cannot be checked: last resort */
			}
			if (score < best_score) {
				best_score = score;
				memcpy(p, q, sizeof q);
				*np = nq;
			}
		}
	}
}

cvc_status cvc_model_fit_collective(const cvc_model_row *rows, size_t n, const cvc_hw_spec *spec,
				    cvc_model_fit *out, char *err, size_t errlen)
{
	struct cpt *pts = NULL;
	cvc_model_row *s = NULL;
	struct cctx cx = {0};
	cvc_status st = CVC_OK;
	int nfit;

	if (!rows || !out || !err || !errlen)
		return CVC_ERR_USAGE;
	err[0] = '\0';
	memset(out, 0, sizeof *out);
	if (n < 3) {
		snprintf(err, errlen, "collective fit: need at least 3 rows, got %zu", n);
		return CVC_ERR_USAGE;
	}
	for (size_t i = 0; i < n; i++) {
		if (rows[i].kind != CVC_MODEL_COLLECTIVE || rows[i].bytes <= 0 ||
		    !(rows[i].time_us > 0) || rows[i].coll != rows[0].coll ||
		    rows[i].nranks != rows[0].nranks) {
			snprintf(err, errlen,
				 "collective fit: row %zu is not a %s row of %d ranks with positive size and time",
				 i, cvc_model_coll_name(rows[0].coll) ? cvc_model_coll_name(rows[0].coll) : "?",
				 rows[0].nranks);
			return CVC_ERR_USAGE;
		}
	}
	s = sorted_copy(rows, n);
	pts = malloc(n * sizeof *pts);
	if (!s || !pts) {
		st = CVC_ERR_NOMEM;
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < n; i++)
		pts[i].s = (double)s[i].bytes, pts[i].t = s[i].time_us;
	out->kind = CVC_MODEL_COLLECTIVE;
	snprintf(out->gpu, sizeof out->gpu, "%s", spec ? spec->name : rows[0].gpu);
	snprintf(out->system, sizeof out->system, "%s", rows[0].system);
	out->coll = rows[0].coll;
	out->nranks = rows[0].nranks;
	out->gpus_per_node = rows[0].gpus_per_node;
	cx.c = out->coll;
	cx.nranks = out->nranks;
	cx.f = cvc_model_busbw_factor(out->coll, out->nranks);
	cx.large = 0;
	{
		/* One NVLink domain with a known link: NCCL's large-message protocol
		 * gets a spec-sheet regime (docs/MODELS.md "Large messages"), on
		 * the share of the links the group reaches on a mesh node. */
		int gpn = out->gpus_per_node > 0 ? out->gpus_per_node : spec ? spec->gpus_per_node : 0;
		double eff, sfill;

		if (spec && spec->intra_bw_gbps > 0 && gpn > 1 && out->nranks <= gpn &&
		    opm_coll_simple_ref(out->coll, out->nranks, &eff, &sfill)) {
			cx.large = 1;
			cx.bw_l = eff * spec->intra_bw_gbps * opm_intra_share(spec, out->nranks);
			cx.sfill = sfill;
		}
	}
	/* with a large regime, the fitted ones get the other CP_MAXREG - 1 slots */
	coll_choose(pts, n, &cx, cx.large ? CP_MAXREG - 1 : CP_MAXREG, out->params, &out->nparams);
	nfit = (int)out->params[0];
	if (cx.large)
		attach_large(out->params, &out->nparams, pts[n - 1].s, &cx);
	/* busbw was computed with factor f; predictions use the same f. */
	out->n_points = (int)n;
	out->dom_min = pts[0].s;
	out->dom_max = pts[n - 1].s;
	quality(out, spec, s, n, &out->r2, &out->mape);
	{
		/* the large-message level, placed on the topology by the fitted
		 * cluster's NICs (docs/MODELS.md "Collectives") */
		int gpn = out->gpus_per_node > 0 ? out->gpus_per_node : spec ? spec->gpus_per_node : 0;
		double *ss = malloc(n * sizeof *ss), *tt = malloc(n * sizeof *tt);
		const char *algo = s[0].tag;

		for (size_t i = 1; i < n; i++)
			if (strcmp(s[i].tag, algo) != 0)
				algo = ""; /* mixed: NCCL's own choice */
		if (!ss || !tt) {
			free(ss);
			free(tt);
			st = CVC_ERR_NOMEM;
			snprintf(err, errlen, "out of memory");
			goto out;
		}
		for (size_t i = 0; i < n; i++)
			ss[i] = pts[i].s, tt[i] = pts[i].t;
		opm_level_fit(ss, tt, n,
			      spec && spec->inter_bw_gbps > 0 && gpn > 0 ? spec->inter_bw_gbps * gpn : 0,
			      algo, &out->lvl);
		free(ss);
		free(tt);
	}
	out->extrap_mape = NAN;
	if (n >= 8) {
		struct cstruct half;

		/* Extrapolation quality of the chosen form: refit its regime count
		 * on the smaller half. */
		{
			int nreg = nfit;
			int lp = out->params[1 + CP_PER * (nreg - 1) + 3] < 1.0;
			size_t ms = n >= 40 ? n / 20 : 2;
			double q[CVC_MODEL_MAXPARAM];
			int nq;

			search(pts, n / 2, nreg, lp, ms, &half);
			if (!half.nreg)
				search(pts, n / 2, 1, lp, 2, &half);
			if (half.nreg) {
				to_params(&half, pts, cx.f, q, &nq);
				if (cx.large)
					attach_large(q, &nq, pts[n / 2 - 1].s, &cx);
				out->extrap_mape = pts_mape(q, nq, pts, n / 2, n, &cx);
			}
		}
	}
out:
	free(s);
	free(pts);
	return st;
}

double cvc_model_fit_predict(const cvc_model_fit *fit, const cvc_hw_spec *spec,
			     const cvc_model_row *row)
{
	if (!fit || !row || fit->kind != row->kind)
		return NAN;
	if (fit->kind == CVC_MODEL_GEMM) {
		if (!spec)
			return NAN;
		return opm_gemm_us(fit->params, spec, row->m, row->n, row->k, row->b, row->dtype);
	}
	if (fit->kind == CVC_MODEL_MEMBOUND) {
		if (!spec || fit->nparams != MP_N)
			return NAN;
		return opm_membound_us(fit->params, spec, row->bytes);
	}
	if (fit->kind == CVC_MODEL_COLLECTIVE) {
		double t = opm_coll_us(fit->params, fit->nparams, row->coll, row->bytes,
				       row->nranks > 0 ? row->nranks : fit->nranks);
		/* Params hold busbw for the fitted group size; another group size
		 * at the same busbw moves f(n) x bytes. */
		return t;
	}
	return NAN;
}
