/*
 * opmodel.c - the operator model formulas and cvc_modelset: everything a
 * projection needs to turn an operator into microseconds for one GPU or
 * system.  A modelset is built once (fits from the db, carried over from
 * the closest GPU, or spec-sheet defaults) and is then only read, so the
 * predict calls are a handful of floating-point operations each.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cvc/cvc_model.h"
#include "models/opmodel_int.h"

/* ---- defaults (docs/MODELS.md "Default efficiencies") --------------------- */

#define DEF_GEMM_T0_US 4.0       /* launch floor of a library GEMM */
/* Fraction of the datasheet's dense peak on padded FLOPs: the median of
 * XLA's H100 bf16 table over its 34 rows of 2^36 FLOPs and more (0.757),
 * per datasheet clock (/ OPM_BENCH_CLOCK_HOPPER: benchmarks hold the boost
 * clock, a training step does not).  models_gemm.default_efficiency_from_xla
 * recomputes it. */
#define DEF_GEMM_EFF 0.6993
#define DEF_MEM_EFF 0.80         /* fraction of HBM bandwidth when memory bound */
#define DEF_MEMBOUND_FLOOR_US 2.5
#define DEF_COLL_INTRA_ALPHA_US 10.0
#define DEF_COLL_INTER_ALPHA_US 20.0
#define DEF_COLL_INTRA_EFF 0.75  /* busbw / unidirectional link bandwidth */
#define DEF_COLL_INTER_EFF 0.80

/*
 * Uncertainty (docs/MODELS.md "Uncertainty"): relative standard errors, on
 * log time, of each kind of price.  A measured MAPE m becomes sigma =
 * m sqrt(pi/2) (normal errors: E|e| = sigma sqrt(2/pi)).  Each figure is a
 * measurement of the repository's own tests on ../shared data:
 *   GEMM carried to another GPU: vidur Llama-2-7B on A100 from the H100
 *     fit, up / down / qkv 8.8 / 7.5 / 9.4% (test_models, mean 8.6%);
 *   GEMM at the default efficiency: the spec-sheet default on XLA's H100
 *     bf16 table, 13.1% (test_tracefit); on its 34 rows of 2^36 FLOPs and
 *     more, where the default comes from and where it answers past a fit's
 *     largest size, 3.8% (models_gemm.default_efficiency_from_xla);
 *   attention on its measured generation: H200 cuDNN causal S = 8192
 *     within 8% of the measured kernels (test_attention); carried to
 *     another generation: plus the GEMM carry-over (no attention pair
 *     measured);
 *   memory-bound at the default efficiencies: Llama-2-70b norm 36.0%,
 *     elementwise 31.6% (test_memfit, mean 33.8%);
 *   kernel gaps: the spread of A100's three traces (2.73, 3.34, 4.58 us:
 *     sd / mean 0.266, test_models kernel_gaps_from_traces);
 *   collectives carried on the topology: the held-out 2-node H100 logs,
 *     11.3 / 6.1 / 9.5 / 41.6% (unit.colltopo, mean 17.1%); an all-reduce
 *     level on all-gather rings: 4 / 11 / 27% (GCP logs, mean 14%);
 *   collectives at the defaults: 13 shared logs at 64 MiB and up, mean
 *     MAPE 33.8%.
 */
#define SIG_PER_MAPE 1.2533
#define SIG_GEMM_CARRY (SIG_PER_MAPE * 0.086)
#define SIG_GEMM_DEFAULT (SIG_PER_MAPE * 0.131)
#define SIG_GEMM_DEFAULT_LARGE (SIG_PER_MAPE * 0.038)
#define GEMM_LARGE_FLOPS 68719476736.0 /* 2^36 */
#define SIG_ATTN (SIG_PER_MAPE * 0.08)
#define SIG_MEM_DEFAULT (SIG_PER_MAPE * 0.338)
#define SIG_GAP 0.266
#define SIG_COLL_CARRY (SIG_PER_MAPE * 0.171)
#define SIG_COLL_RING_CARRY (SIG_PER_MAPE * 0.14)
#define SIG_COLL_DEFAULT (SIG_PER_MAPE * 0.338)

static const double membound_eff[CVC_MODEL_NMEM] = {
	[CVC_MODEL_MEM_ELEMENTWISE] = 0.80, [CVC_MODEL_MEM_NORM] = 0.70,
	[CVC_MODEL_MEM_REDUCTION] = 0.70,   [CVC_MODEL_MEM_COPY] = 0.85,
	[CVC_MODEL_MEM_GATHER] = 0.50,      [CVC_MODEL_MEM_OPTIMIZER] = 0.75,
};

double opm_bench_clock(const cvc_hw_spec *spec)
{
	static const double clock[3] = {OPM_BENCH_CLOCK_AMPERE, OPM_BENCH_CLOCK_HOPPER,
					OPM_BENCH_CLOCK_BLACKWELL};
	int ref = opm_attn_ref_gpu(spec);

	return ref >= 0 && ref < 3 ? clock[ref] : 1.0;
}

double opm_gemm_default_efficiency(void)
{
	return DEF_GEMM_EFF;
}

void opm_gemm_defaults(double p[GP_N])
{
	p[GP_T0] = DEF_GEMM_T0_US;
	p[GP_WAVE] = 0;
	p[GP_CWAVE] = 0;
	p[GP_CFLOP] = 1.0 / DEF_GEMM_EFF;
	p[GP_MEMEFF] = DEF_MEM_EFF;
	p[GP_TILE] = 128;
}

/* ---- formulas ----------------------------------------------------------------- */

double opm_peak_flops_us(const cvc_hw_spec *spec, cvc_hw_dtype dt)
{
	double t = 0;

	if ((unsigned)dt < CVC_HW_NDTYPE)
		t = spec->peak_tflops[dt];
	if (t <= 0 && dt == CVC_HW_BF16)
		t = spec->peak_tflops[CVC_HW_FP16];
	if (t <= 0 && dt == CVC_HW_FP16)
		t = spec->peak_tflops[CVC_HW_BF16];
	if (t <= 0 && dt == CVC_HW_FP8)
		t = spec->peak_tflops[CVC_HW_BF16] > 0 ? spec->peak_tflops[CVC_HW_BF16]
						       : spec->peak_tflops[CVC_HW_FP16];
	if (t <= 0)
		t = spec->peak_tflops[CVC_HW_FP32];
	if (t <= 0)
		t = 1.0; /* a catalog row always has one figure; never divide by 0 */
	return t * 1e6;
}

static double ceil_div(double a, double b)
{
	return ceil(a / b);
}

void opm_gemm_features(const double *p, const cvc_hw_spec *spec, int64_t m, int64_t n,
		       int64_t k, int64_t b, cvc_hw_dtype dt, double x[4])
{
	double P = opm_peak_flops_us(spec, dt);
	double sms = spec->sm_count > 0 ? spec->sm_count : 1;
	double T = p[GP_TILE] > 0 ? p[GP_TILE] : 128;
	double tm = ceil_div((double)m, T), tn = ceil_div((double)n, T), bb = b > 0 ? (double)b : 1;
	double tiles = tm * tn * bb, waves = ceil(tiles / sms);

	x[0] = 1.0;
	x[1] = waves;
	/* one wave = every SM runs a T x T tile through all of k at its share of peak */
	x[2] = waves * 2.0 * T * T * (double)k / (P / sms);
	x[3] = 2.0 * bb * tm * T * tn * T * (double)k / P;
}

double opm_gemm_us(const double *p, const cvc_hw_spec *spec, int64_t m, int64_t n, int64_t k,
		   int64_t b, cvc_hw_dtype dt)
{
	double x[4], tc, tmem, bytes, bw, eff, bb = b > 0 ? (double)b : 1;

	if (m <= 0 || n <= 0 || k <= 0)
		return p[GP_T0];
	opm_gemm_features(p, spec, m, n, k, b, dt, x);
	tc = p[GP_T0] * x[0] + p[GP_WAVE] * x[1] + p[GP_CWAVE] * x[2] + p[GP_CFLOP] * x[3];
	bytes = cvc_hw_dtype_bytes(dt) * bb *
		((double)m * (double)k + (double)k * (double)n + (double)m * (double)n);
	bw = spec->hbm_bw_gbps > 0 ? spec->hbm_bw_gbps * 1e3 : 1e3; /* bytes per us */
	eff = p[GP_MEMEFF] > 0 ? p[GP_MEMEFF] : DEF_MEM_EFF;
	tmem = p[GP_T0] + bytes / (bw * eff);
	return tc > tmem ? tc : tmem;
}

/*
 * Large-message references, one per group size in one NVLink domain, fitted
 * (tests/unit/test_models.c models_coll.simple_ref_matches_xla recomputes
 * them) on XLA's sm_90 all-reduce table: the largest third of the sizes
 * (32 MiB .. 2 GiB), t = a + b S weighted on relative error; eff =
 * f(n)/b / 450 GB/s (H100 NVLink, unidirectional), sfill = a/b bytes.  The
 * fill is carried as bytes, not microseconds: in a pipelined ring it is
 * the chunks in flight over the steps, whose time scales with 1/bandwidth.
 */
static const struct {
	int n;
	double eff, sfill;
} simple_ref[] = {
	{2, 0.5386, 12.56e6},
	{4, 0.6613, 10.26e6},
	{8, 0.8925, 18.86e6},
};

int opm_coll_simple_ref(cvc_model_coll c, int n, double *eff, double *sfill)
{
	size_t best = 0;

	if (c != CVC_MODEL_ALLREDUCE || n < 2)
		return 0;
	/* nearest measured group size, on log n */
	for (size_t i = 1; i < sizeof simple_ref / sizeof simple_ref[0]; i++)
		if (fabs(log((double)n / simple_ref[i].n)) < fabs(log((double)n / simple_ref[best].n)))
			best = i;
	*eff = simple_ref[best].eff;
	*sfill = simple_ref[best].sfill;
	return 1;
}

static double regime_us(const double *q, double f, int64_t bytes)
{
	double t;

	if (q[2] <= 0 || q[4] <= 0)
		return q[1] > 0.1 ? q[1] : 0.1;
	/* time over the bandwidth term at s_ref, scaled by (s/s_ref)^exponent */
	t = q[1] + q[4] * f / (q[2] * 1e3) * pow((double)bytes / q[4], q[3]);
	return t > 0.1 ? t : 0.1;
}

double opm_coll_us(const double *p, int nparams, cvc_model_coll c, int64_t bytes, int nranks)
{
	int nreg = (int)p[0], nfit, r = 0;
	double f, t;

	if (nreg < 1 || nreg > CP_MAXREG || nparams < 1 + CP_PER * nreg)
		return NAN;
	nfit = nreg;
	if (nreg > 1 && p[1 + CP_PER * (nreg - 1)] < 0)
		nfit = nreg - 1; /* the last is a large-message regime */
	for (int i = 1; i < nfit; i++)
		if ((double)bytes >= p[1 + CP_PER * i])
			r = i;
	f = cvc_model_busbw_factor(c, nranks > 1 ? nranks : 2);
	t = regime_us(p + 1 + CP_PER * r, f, bytes);
	if (nfit < nreg && (double)bytes > -p[1 + CP_PER * nfit]) {
		double tl = regime_us(p + 1 + CP_PER * nfit, f, bytes);

		t = tl < t ? tl : t;
	}
	return t;
}

double opm_membound_us(const double *p, const cvc_hw_spec *spec, int64_t bytes)
{
	double bw = spec->hbm_bw_gbps > 0 ? spec->hbm_bw_gbps * 1e3 : 1e3; /* bytes per us */
	double eff = p[MP_EFF] > 0 ? p[MP_EFF] : DEF_MEM_EFF;

	if (bytes <= 0)
		return p[MP_FLOOR];
	return p[MP_FLOOR] + (double)bytes / (bw * eff);
}

/* ---- modelset -------------------------------------------------------------------- */

#define MS_COLL_MAX 96
#define ORIGIN_MAX 256

struct gemm_slot {
	double p[GP_N];
	double def[GP_N];        /* the defaults, outside a fit's sizes */
	double dom_min, dom_max; /* FLOPs the fit measured; 0 = defaults */
	double sigma;            /* of the fit inside its sizes (docs/MODELS.md
				    "Uncertainty"); the default's outside */
	int carried;             /* fitted on another GPU */
	char origin[ORIGIN_MAX];
};

struct coll_slot {
	cvc_model_coll c;
	int nranks, gpn; /* as fitted */
	int nparams;
	double p[CVC_MODEL_MAXPARAM];
	char origin[ORIGIN_MAX];
	int regimes_ok;  /* the regime fit passed the gate: prices its own span */
	int level_ok;    /* the large-message level passed: carried over spans */
	int64_t id;
	double sigma, dom_min, dom_max;  /* of the size regimes */
	cvc_model_coll_level lvl;
	char label[96];  /* "model 3 (H100-SXM, 16 ranks, 8 per node)" */
	/* how the level prices other spans, per algorithm: with a fitted
	 * NVLink level, and with the spec's */
	char topo_origin[OPM_NALGO][ORIGIN_MAX];
	char topo_def_origin[OPM_NALGO][ORIGIN_MAX];
	/* an all-reduce level carried to all-gather / reduce-scatter rings */
	char ring_origin[2][ORIGIN_MAX];
	char small_origin[ORIGIN_MAX]; /* its regimes below the level's sizes */
};

struct mem_slot {
	double p[MP_N];
	double sigma;
	int fitted, carried;
	char origin[ORIGIN_MAX];
};

struct cvc_modelset {
	cvc_hw_spec spec;
	struct gemm_slot gemm[CVC_HW_NDTYPE];
	struct mem_slot mem[CVC_MODEL_NMEM];
	struct coll_slot coll[MS_COLL_MAX];
	int ncoll;
	char def_origin[ORIGIN_MAX];
	char coll_def_origin[ORIGIN_MAX];
	char attn_origin[ORIGIN_MAX];
	int attn_ref;              /* reference GPU of the attention curves */
	double kernel_gap_us;      /* between back-to-back kernels */
};

void cvc_modelset_free(cvc_modelset *ms)
{
	free(ms);
}

const cvc_hw_spec *cvc_modelset_spec(const cvc_modelset *ms)
{
	return ms ? &ms->spec : NULL;
}

static double gap_for(const cvc_hw_spec *spec);

static cvc_modelset *ms_new(const cvc_hw_spec *spec)
{
	cvc_modelset *ms = calloc(1, sizeof *ms);

	if (!ms)
		return NULL;
	ms->spec = *spec;
	snprintf(ms->def_origin, sizeof ms->def_origin,
		 "spec-sheet roofline of %s, default efficiency %.2f (no fitted model)", spec->name,
		 DEF_GEMM_EFF);
	snprintf(ms->coll_def_origin, sizeof ms->coll_def_origin,
		 "spec-sheet links of %s, default alpha-beta (no fitted model)", spec->name);
	ms->attn_ref = opm_attn_ref_gpu(spec);
	ms->kernel_gap_us = gap_for(spec);
	snprintf(ms->attn_origin, sizeof ms->attn_origin,
		 "fused-attention curves measured on %s (attention-bench), carried to %s "
		 "through the spec sheet", opm_attn_ref_name(ms->attn_ref), spec->name);
	for (int d = 0; d < CVC_HW_NDTYPE; d++) {
		opm_gemm_defaults(ms->gemm[d].p);
		opm_gemm_defaults(ms->gemm[d].def);
		ms->gemm[d].sigma = SIG_GEMM_DEFAULT;
		snprintf(ms->gemm[d].origin, sizeof ms->gemm[d].origin, "%s", ms->def_origin);
	}
	for (int c = 0; c < CVC_MODEL_NMEM; c++) {
		ms->mem[c].p[MP_FLOOR] = DEF_MEMBOUND_FLOOR_US;
		ms->mem[c].p[MP_EFF] = membound_eff[c];
		ms->mem[c].sigma = SIG_MEM_DEFAULT;
		snprintf(ms->mem[c].origin, sizeof ms->mem[c].origin,
			 "spec-sheet HBM bandwidth, default per-class efficiency");
	}
	return ms;
}

/* Canonical GPU name of a spec (a system's base GPU). */
static const char *gpu_of(const cvc_hw_spec *s)
{
	return s->base[0] ? s->base : s->name;
}

/* Canonical GPU a fit's gpu field resolves to; the field itself if unknown. */
static const char *fit_gpu(const cvc_hw_catalog *cat, const cvc_model_fit *f)
{
	const cvc_hw_spec *s = cat ? cvc_hw_catalog_lookup(cat, f->gpu) : NULL;

	return s ? gpu_of(s) : f->gpu;
}

/*
 * The quality gate (docs/MODELS.md "Fit quality"): a fit that does not
 * explain its own rows (R^2 < 0 on log time) or that misses the larger half
 * of its sizes by more than 30% when fitted on the smaller half does not
 * price anything: the default answers, and `cvc models` says why.
 */
#define GATE_EXTRAP_PCT 30.0

int cvc_model_level_usable(const cvc_model_fit *f, const char **why)
{
	static const char *const reasons[] = {"", "not a collective fit",
					      "fewer than 3 rows of 1 MiB and more",
					      "large-message error above 30%",
					      "large-message extrapolation error above 30%"};
	int r = 0;

	if (f->kind != CVC_MODEL_COLLECTIVE)
		r = 1;
	else if (!f->lvl.valid)
		r = 2;
	else if (isfinite(f->lvl.mape) && f->lvl.mape > GATE_EXTRAP_PCT)
		r = 3;
	else if (isfinite(f->lvl.extrap_mape) && f->lvl.extrap_mape > GATE_EXTRAP_PCT)
		r = 4;
	if (why)
		*why = reasons[r];
	return r == 0;
}

int cvc_model_fit_usable(const cvc_model_fit *f, const char **why)
{
	static const char *const reasons[] = {"", "R^2 below 0 on its own rows",
					      "extrapolation error above 30%"};
	int r = 0;

	if (isfinite(f->r2) && f->r2 < 0)
		r = 1;
	else if (isfinite(f->extrap_mape) && f->extrap_mape > GATE_EXTRAP_PCT)
		r = 2;
	if (why)
		*why = reasons[r];
	return r == 0;
}

/* Which fits a slot takes: arg is the dtype (GEMM) or the class (memory). */
typedef int (*fit_match)(const cvc_model_fit *f, int arg);

static int gemm_of(const cvc_model_fit *f, int dtype)
{
	return f->kind == CVC_MODEL_GEMM && (int)f->dtype == dtype && cvc_model_fit_usable(f, NULL);
}

static int mem_of(const cvc_model_fit *f, int cls)
{
	return f->kind == CVC_MODEL_MEMBOUND && (int)f->mem == cls && f->nparams == MP_N &&
	       cvc_model_fit_usable(f, NULL);
}

/* The first (newest) matching fit on GPU target; NULL when none. */
static const cvc_model_fit *pick_on(const cvc_hw_catalog *cat, const char *target,
				    const cvc_model_fit *fits, size_t n, fit_match ok, int arg)
{
	for (size_t i = 0; i < n; i++)
		if (ok(&fits[i], arg) && strcmp(fit_gpu(cat, &fits[i]), target) == 0)
			return &fits[i];
	return NULL;
}

/* The matching fit of the catalog GPU closest to spec (cvc_hw_closest,
 * among the first 64 matches); NULL when none or no catalog. */
static const cvc_model_fit *pick_closest(const cvc_hw_catalog *cat, const cvc_hw_spec *spec,
					 const cvc_model_fit *fits, size_t n, fit_match ok, int arg)
{
	const char *names[64];
	const cvc_model_fit *cand[64];
	size_t nc = 0;
	int best;

	if (!cat)
		return NULL;
	for (size_t i = 0; i < n && nc < 64; i++)
		if (ok(&fits[i], arg))
			names[nc] = fits[i].gpu, cand[nc++] = &fits[i];
	best = cvc_hw_closest(cat, spec, names, nc);
	return best >= 0 ? cand[best] : NULL;
}

/*
 * The reference GEMM fits every modelset starts from when no fit of its own
 * applies, fitted per datasheet clock as `cvc fit` fits the same files:
 * XLA's H100 bf16 table (xla_matmul_perf_table.csv.gz, 375 rows, m, n, k
 * 256..4096) and vidur's A100 Llama-2-7B operator timings
 * (a100__Llama-2-7b-hf__mlp.csv.gz, 4176 fp16 GEMM rows).  The one of the
 * closest GPU prices a GPU's GEMMs through its spec sheet inside the FLOPs
 * it measured; beyond them the default efficiency (XLA's large-GEMM end)
 * answers.  models_gemm.reference_fits_refit recomputes both.
 */
static const cvc_model_fit ref_gemm[] = {
	{.kind = CVC_MODEL_GEMM, .gpu = "H100-SXM", .dtype = CVC_HW_BF16, .nparams = GP_N,
	 .params = {5.0545075511085802, 0.74499272262461869, 0.1866920525133991,
		    1.1230840250250347, 0.80, 128},
	 .dom_min = 33554432, .dom_max = 549755813888.0,
	 .source = "xla_matmul_perf_table.csv.gz", .n_points = 375,
	 .r2 = 0.994931209908575, .mape = 4.80450087031124, .extrap_mape = 15.0701961159707},
	{.kind = CVC_MODEL_GEMM, .gpu = "A100-SXM-80GB", .dtype = CVC_HW_FP16, .nparams = GP_N,
	 .params = {4.5247767893364914, 0.66663691207201747, 0.14462308116102762,
		    1.1776701047925526, 0.80, 128},
	 .dom_min = 4194304, .dom_max = 738734374912.0,
	 .source = "a100__Llama-2-7b-hf__mlp.csv.gz", .n_points = 4176,
	 .r2 = 0.994381692919458, .mape = 6.60707958404745, .extrap_mape = 5.9101718068926},
};

const cvc_model_fit *opm_gemm_references(size_t *n)
{
	*n = sizeof ref_gemm / sizeof ref_gemm[0];
	return ref_gemm;
}

/* A fit's relative standard error from its in-sample MAPE, with a
 * carry-over's added in quadrature (carry = 0: none). */
static double fit_sigma(const cvc_model_fit *f, double carry)
{
	double m = isfinite(f->mape) && f->mape > 0 ? SIG_PER_MAPE * f->mape / 100 : 0;

	return sqrt(m * m + carry * carry);
}

static void install_gemm(cvc_modelset *ms, const cvc_hw_catalog *cat, const cvc_model_fit *fits,
			 size_t n)
{
	const char *target = gpu_of(&ms->spec);

	for (int d = 0; d < CVC_HW_NDTYPE; d++) {
		const cvc_model_fit *pick = NULL;
		int same = 0;
		cvc_hw_dtype want[2] = {(cvc_hw_dtype)d, (cvc_hw_dtype)d};

		/* fp16 and bf16 run on the same tensor cores: each may stand in
		 * for the other.  Order: this GPU (this dtype, then its sibling),
		 * then the closest fitted GPU (same order).  Fits are newest
		 * first, so the first match wins. */
		/* fp8 without an fp8 fit: the bf16 one, as a share of the fp8
		 * peak (XLA's H100 table: 2048^3 reaches 0.71 of the fp8 peak and
		 * 0.65 of the bf16 one; its larger fp8 rows exceed the fp8 peak
		 * and fit nothing) */
		if (d == CVC_HW_BF16 || d == CVC_HW_FP8)
			want[1] = d == CVC_HW_FP8 ? CVC_HW_BF16 : CVC_HW_FP16;
		else if (d == CVC_HW_FP16)
			want[1] = CVC_HW_BF16;
		for (int w = 0; w < 2 && !pick; w++)
			same = (pick = pick_on(cat, target, fits, n, gemm_of, (int)want[w])) != NULL;
		for (int w = 0; w < 2 && !pick; w++)
			pick = pick_closest(cat, &ms->spec, fits, n, gemm_of, (int)want[w]);
		if (!pick) {
			/* the built-in references: bf16 and fp16 stand in for each
			 * other (and for fp8) as for fitted models */
			const cvc_model_fit *ref = NULL;
			size_t nr = sizeof ref_gemm / sizeof ref_gemm[0];
			char to[CVC_HW_NAME_MAX];

			if (d == CVC_HW_BF16 || d == CVC_HW_FP16 || d == CVC_HW_FP8) {
				const char *names[sizeof ref_gemm / sizeof ref_gemm[0]];
				int best;

				for (size_t i = 0; i < nr; i++)
					names[i] = ref_gemm[i].gpu;
				best = cat ? cvc_hw_closest(cat, &ms->spec, names, nr) : 0;
				ref = &ref_gemm[best >= 0 ? best : 0];
			}
			if (!ref)
				continue;
			memcpy(ms->gemm[d].p, ref->params, sizeof ms->gemm[d].p);
			ms->gemm[d].dom_min = ref->dom_min;
			ms->gemm[d].dom_max = ref->dom_max;
			ms->gemm[d].carried = strcmp(ref->gpu, target) != 0;
			ms->gemm[d].sigma = fit_sigma(ref, ms->gemm[d].carried ? SIG_GEMM_CARRY : 0);
			snprintf(to, sizeof to, "%s", ms->spec.name);
			snprintf(ms->gemm[d].origin, sizeof ms->gemm[d].origin,
				 "built-in reference fit (%.40s, %.20s %s), carried to %.47s through "
				 "the spec sheet; default efficiency %.2f beyond its sizes",
				 ref->source, ref->gpu, cvc_hw_dtype_name(ref->dtype), to, DEF_GEMM_EFF);
			continue;
		}
		memcpy(ms->gemm[d].p, pick->params, sizeof ms->gemm[d].p);
		ms->gemm[d].dom_min = pick->dom_min;
		ms->gemm[d].dom_max = pick->dom_max;
		ms->gemm[d].carried = !same;
		ms->gemm[d].sigma = fit_sigma(pick, same ? 0 : SIG_GEMM_CARRY);
		if (same)
			snprintf(ms->gemm[d].origin, sizeof ms->gemm[d].origin,
				 "fitted model %lld (%.47s %s, %.60s)", (long long)pick->id, pick->gpu,
				 cvc_hw_dtype_name(pick->dtype), pick->source);
		else {
			char from[CVC_HW_NAME_MAX], to[CVC_HW_NAME_MAX];

			/* copies: the formatter may not read from the object it writes */
			snprintf(from, sizeof from, "%s", fit_gpu(cat, pick));
			snprintf(to, sizeof to, "%s", ms->spec.name);
			snprintf(ms->gemm[d].origin, sizeof ms->gemm[d].origin,
				 "model %lld fitted on %.47s %s, carried over to %.47s through the spec sheet",
				 (long long)pick->id, from, cvc_hw_dtype_name(pick->dtype), to);
		}
	}
}

static void install_coll(cvc_modelset *ms, const cvc_hw_catalog *cat, const cvc_model_fit *fits,
			 size_t n)
{
	/* Fits of this system (or, for a GPU spec, of any system built of this
	 * GPU); the newest of each (collective, group size, node size). */
	for (int pass = 0; pass < 2; pass++) {
		for (size_t i = 0; i < n && ms->ncoll < MS_COLL_MAX; i++) {
			const cvc_model_fit *f = &fits[i];
			const cvc_hw_spec *fs;
			int match = 0, dup = 0;

			if (f->kind != CVC_MODEL_COLLECTIVE || f->nparams < 1 + CP_PER ||
			    (!cvc_model_fit_usable(f, NULL) && !cvc_model_level_usable(f, NULL)))
				continue;
			fs = cat && f->system[0] ? cvc_hw_catalog_lookup(cat, f->system) : NULL;
			if (pass == 0)
				match = (fs && strcmp(fs->name, ms->spec.name) == 0) ||
					strcmp(f->system, ms->spec.name) == 0;
			else
				match = strcmp(fit_gpu(cat, f), gpu_of(&ms->spec)) == 0;
			if (!match)
				continue;
			for (int j = 0; j < ms->ncoll; j++)
				dup |= ms->coll[j].c == f->coll && ms->coll[j].nranks == f->nranks &&
				       ms->coll[j].gpn == f->gpus_per_node;
			if (dup)
				continue;
			{
				struct coll_slot *s = &ms->coll[ms->ncoll++];

				s->c = f->coll;
				s->nranks = f->nranks;
				s->gpn = f->gpus_per_node;
				s->nparams = f->nparams;
				memcpy(s->p, f->params, sizeof s->p);
				s->regimes_ok = cvc_model_fit_usable(f, NULL);
				s->level_ok = cvc_model_level_usable(f, NULL);
				s->id = f->id;
				s->lvl = f->lvl;
				s->sigma = fit_sigma(f, 0);
				s->dom_max = f->dom_max > 0 ? f->dom_max : 1;
				s->dom_min = f->dom_min > 0 ? f->dom_min : 1;
				snprintf(s->label, sizeof s->label, "model %lld (%.40s, %d ranks, %d per node)",
					 (long long)f->id, f->system[0] ? f->system : f->gpu, f->nranks,
					 f->gpus_per_node);
				/* a copy: the formatter may not read from the object it
				 * writes */
				char label[sizeof s->label];

				memcpy(label, s->label, sizeof label);
				snprintf(s->small_origin, sizeof s->small_origin,
					 "size regimes of %s, measured at this size, carried over the "
					 "span's latency", label);
				for (int d = 0; d < 2; d++)
					snprintf(s->ring_origin[d], sizeof s->ring_origin[d],
						 "large-message level of %s (all-reduce) carried to this "
						 "ring collective, span and NICs, on the %s NVLink level",
						 label, d ? "spec's" : "fitted");
				for (int a = 0; a < OPM_NALGO; a++) {
					snprintf(s->topo_origin[a], sizeof s->topo_origin[a],
						 "large-message level of %s carried over the span and "
						 "NICs, %s, on the fitted NVLink level",
						 label, opm_algo_name(a));
					snprintf(s->topo_def_origin[a], sizeof s->topo_def_origin[a],
						 "large-message level of %s carried over the span and "
						 "NICs, %s, on the spec's NVLink level",
						 label, opm_algo_name(a));
				}
				snprintf(s->origin, sizeof s->origin,
					 "fitted model %lld (%.47s %s, %d ranks, %d per node, %.60s)",
					 (long long)f->id, f->system[0] ? f->system : f->gpu,
					 cvc_model_coll_name(f->coll), f->nranks, f->gpus_per_node,
					 f->source);
			}
		}
		if (ms->ncoll)
			break; /* system fits found: GPU-wide ones would only blur them */
	}
}

/* Per class: the newest fit on this GPU, else the newest on the closest
 * fitted GPU (its efficiency then applies to this GPU's HBM bandwidth;
 * the floor, a launch cost, is kept as fitted). */
static void install_mem(cvc_modelset *ms, const cvc_hw_catalog *cat, const cvc_model_fit *fits,
			size_t n)
{
	const char *target = gpu_of(&ms->spec);

	for (int c = 0; c < CVC_MODEL_NMEM; c++) {
		const cvc_model_fit *pick = pick_on(cat, target, fits, n, mem_of, c);
		int same = pick != NULL;

		if (!pick)
			pick = pick_closest(cat, &ms->spec, fits, n, mem_of, c);
		if (!pick || !(pick->params[MP_EFF] > 0) || !(pick->params[MP_FLOOR] >= 0))
			continue;
		memcpy(ms->mem[c].p, pick->params, sizeof ms->mem[c].p);
		ms->mem[c].fitted = 1;
		ms->mem[c].carried = !same;
		ms->mem[c].sigma = fit_sigma(pick, same ? 0 : SIG_GEMM_CARRY);
		if (same)
			snprintf(ms->mem[c].origin, sizeof ms->mem[c].origin,
				 "fitted membound model %lld (%.47s %s: floor %.2f us, eff %.2f, %.60s)",
				 (long long)pick->id, pick->gpu, cvc_model_mem_name((cvc_model_mem)c), pick->params[MP_FLOOR],
				 pick->params[MP_EFF], pick->source);
		else {
			char from[CVC_HW_NAME_MAX], to[CVC_HW_NAME_MAX];

			snprintf(from, sizeof from, "%s", fit_gpu(cat, pick));
			snprintf(to, sizeof to, "%s", ms->spec.name);
			snprintf(ms->mem[c].origin, sizeof ms->mem[c].origin,
				 "membound model %lld fitted on %.47s %s (eff %.2f), carried over to %.47s "
				 "through the HBM bandwidth",
				 (long long)pick->id, from, cvc_model_mem_name((cvc_model_mem)c), pick->params[MP_EFF], to);
		}
	}
}

cvc_status cvc_modelset_from_fits(const cvc_hw_catalog *cat, const cvc_hw_spec *spec,
				  const cvc_model_fit *fits, size_t n, cvc_modelset **out)
{
	cvc_modelset *ms;

	if (!spec || !out || (n && !fits))
		return CVC_ERR_USAGE;
	*out = NULL;
	ms = ms_new(spec);
	if (!ms)
		return CVC_ERR_NOMEM;
	install_gemm(ms, cat, fits, n);
	install_coll(ms, cat, fits, n);
	install_mem(ms, cat, fits, n);
	*out = ms;
	return CVC_OK;
}

cvc_status cvc_modelset_new_ex(cvc_db *db, const cvc_hw_catalog *cat, const cvc_hw_spec *spec,
			       int force, cvc_modelset **out)
{
	cvc_model_fit *fits = NULL;
	size_t n = 0;
	cvc_status st;

	if (!spec || !out)
		return CVC_ERR_USAGE;
	*out = NULL;
	if (db && (st = cvc_model_fit_list(db, &fits, &n)))
		return st;
	/* forced: the gate's figures are not consulted and GEMM fits price
	 * every size; the origins say so */
	for (size_t i = 0; force && i < n; i++) {
		cvc_model_fit *f = &fits[i];
		char src[sizeof f->source];

		f->r2 = NAN;
		f->extrap_mape = NAN;
		if (f->kind == CVC_MODEL_GEMM)
			f->dom_min = 0, f->dom_max = INFINITY;
		if (f->kind == CVC_MODEL_COLLECTIVE && f->lvl.algbw_gbps > 0)
			f->lvl.valid = 1, f->lvl.mape = NAN, f->lvl.extrap_mape = NAN;
		memcpy(src, f->source, sizeof src);
		snprintf(f->source, sizeof f->source, "forced past the gate: %.200s", src);
	}
	st = cvc_modelset_from_fits(cat, spec, fits, n, out);
	free(fits);
	return st;
}

cvc_status cvc_modelset_new(cvc_db *db, const cvc_hw_catalog *cat, const cvc_hw_spec *spec,
			    cvc_modelset **out)
{
	return cvc_modelset_new_ex(db, cat, spec, 0, out);
}

/* ---- predictions ------------------------------------------------------------------ */

/* A fit prices only the GEMM sizes it measured; outside them the default
 * (the large-GEMM efficiency of the reference table) answers. */
static const double *gemm_params(const cvc_modelset *ms, int64_t m, int64_t n, int64_t k,
				 int64_t b, cvc_hw_dtype dt)
{
	const struct gemm_slot *g = &ms->gemm[dt];
	double f = 2.0 * (double)(b > 0 ? b : 1) * (double)m * (double)n * (double)k;

	if (g->dom_max > 0 && (f < g->dom_min || f > g->dom_max))
		return g->def;
	return g->p;
}

double cvc_model_gemm_us(const cvc_modelset *ms, int64_t m, int64_t n, int64_t k, int64_t b,
			 cvc_hw_dtype dt)
{
	if (!ms || (unsigned)dt >= CVC_HW_NDTYPE)
		return NAN;
	return opm_gemm_us(gemm_params(ms, m, n, k, b, dt), &ms->spec, m, n, k, b, dt);
}

double cvc_model_grouped_gemm_us(const cvc_modelset *ms, const int64_t *m_per_group, int groups,
				 int64_t n, int64_t k, cvc_hw_dtype dt)
{
	const double *p;
	double P, sms, T, tn, tiles = 0, fpad = 0, bytes = 0, waves, tc, tmem, bw;

	if (!ms || (unsigned)dt >= CVC_HW_NDTYPE || groups < 0 || (groups && !m_per_group))
		return NAN;
	{
		int64_t mt = 0;

		for (int g = 0; g < groups; g++)
			mt += m_per_group[g] > 0 ? m_per_group[g] : 0;
		p = gemm_params(ms, mt, n, k, 1, dt); /* the fit's sizes: all groups */
	}
	if (n <= 0 || k <= 0 || groups == 0)
		return p[GP_T0];
	P = opm_peak_flops_us(&ms->spec, dt);
	sms = ms->spec.sm_count > 0 ? ms->spec.sm_count : 1;
	T = p[GP_TILE] > 0 ? p[GP_TILE] : 128;
	tn = ceil((double)n / T);
	for (int g = 0; g < groups; g++) {
		double mg = m_per_group[g] > 0 ? (double)m_per_group[g] : 0;
		double tm = ceil(mg / T);

		tiles += tm * tn;
		fpad += 2.0 * tm * T * tn * T * (double)k;
		/* every expert's weights are read even when few tokens reach it */
		bytes += cvc_hw_dtype_bytes(dt) * (mg * (double)k + (double)k * (double)n + mg * (double)n);
	}
	/* all groups' tiles share the waves of one launch */
	waves = ceil(tiles / sms);
	tc = p[GP_T0] + p[GP_WAVE] * waves + p[GP_CWAVE] * waves * 2.0 * T * T * (double)k / (P / sms) +
	     p[GP_CFLOP] * fpad / P;
	bw = ms->spec.hbm_bw_gbps > 0 ? ms->spec.hbm_bw_gbps * 1e3 : 1e3;
	tmem = p[GP_T0] + bytes / (bw * (p[GP_MEMEFF] > 0 ? p[GP_MEMEFF] : DEF_MEM_EFF));
	return tc > tmem ? tc : tmem;
}

double cvc_model_attention_us(const cvc_modelset *ms, const cvc_model_attn *a)
{
	double B, H, Hkv, Sq, Skv, D, flops, bytes, P, sms, tiles, util, eff, tc, tm, es;
	int fp8, exact = 0, be;

	if (!ms || !a || (unsigned)a->dtype >= CVC_HW_NDTYPE)
		return NAN;
	B = a->batch > 0 ? (double)a->batch : 1;
	H = a->heads > 0 ? (double)a->heads : 1;
	Hkv = a->kv_heads > 0 ? (double)a->kv_heads : H;
	Sq = a->seq_q > 0 ? (double)a->seq_q : 0;
	Skv = a->seq_kv > 0 ? (double)a->seq_kv : Sq;
	D = a->head_dim > 0 ? (double)a->head_dim : 0;
	if (Sq <= 0 || D <= 0)
		return DEF_MEMBOUND_FLOOR_US;
	/* QK^T and PV: 2 matmuls of 2 Sq Skv D FLOPs per head; the causal
	 * mask leaves half the (query, key) pairs, for a square block and for
	 * the load-balanced chunks context parallelism gives each rank */
	flops = 4.0 * B * H * Sq * Skv * D;
	if (a->causal)
		flops *= 0.5;
	es = cvc_hw_dtype_bytes(a->dtype);
	bytes = es * (2.0 * B * H * Sq * D + 2.0 * B * Hkv * Skv * D); /* Q, O, K, V */
	if (a->backward) {
		flops *= 2.5; /* dQ, dK, dV and the recomputed scores */
		bytes *= 2.5;
	}
	/* the measured curves are shares of the dense bf16 peak (fp8 ones
	 * too): price every dtype against it */
	fp8 = a->dtype == CVC_HW_FP8;
	P = opm_peak_flops_us(&ms->spec, CVC_HW_BF16);
	sms = ms->spec.sm_count > 0 ? ms->spec.sm_count : 1;
	/* one CTA per (batch, head, 128-row block of queries): the measured
	 * shapes fill every SM, a small batch x heads may not */
	tiles = B * H * ceil(Sq / 128.0);
	util = tiles / (ceil(tiles / sms) * sms);
	be = a->backend >= 0 ? a->backend
			     : opm_attn_default(ms->attn_ref, a->backend == CVC_ATTN_DEFAULT_TORCH);
	eff = opm_attn_eff(ms->attn_ref, be, fp8, a->backward, a->causal, Skv, D, &exact);
	if (!(eff > 0))
		eff = 0.5; /* no curve at all: cannot happen with the compiled-in set */
	eff *= util;
	tc = flops / (P * eff);
	tm = bytes / ((ms->spec.hbm_bw_gbps > 0 ? ms->spec.hbm_bw_gbps : 1) * 1e3 * DEF_MEM_EFF);
	return ms->gemm[a->dtype].p[GP_T0] + (tc > tm ? tc : tm);
}

cvc_model_attn_backend cvc_model_attn_default(const cvc_modelset *ms, int torch)
{
	return (cvc_model_attn_backend)opm_attn_default(ms ? ms->attn_ref : 0, torch);
}

/*
 * The gap between back-to-back kernels, per trace: the mean of the gaps
 * shorter than 20 us (longer ones are host stalls, synchronisations, the
 * data loader) between consecutive kernels of the stream with the most
 * non-NCCL kernels.  Per GPU generation the median of its traces.
 * models_gap.kernel_gaps_from_traces recomputes each from its trace.
 */
static const struct opm_gap_ref gap_refs[] = {
	{"V100-SXM2-32GB", 125, 2.907, "hta-ddp-v100-2rank"},
	{"V100-SXM2-32GB", 125, 4.059, "hta-trace-diff-v100-w2"},
	{"A100-SXM-80GB", 312, 3.336, "hta-trace-diff-a100-w8"},
	{"A100-SXM-80GB", 312, 2.725, "hta-nccl-args-a100-w2"},
	{"A100-SXM-80GB", 312, 4.581, "hta-a100-80g-w16-rank0"},
	{"H100-SXM", 989.4, 1.936, "tracelens-h100-qwen05b"},
};

const struct opm_gap_ref *opm_gap_refs(size_t *n)
{
	*n = sizeof gap_refs / sizeof gap_refs[0];
	return gap_refs;
}

static int cmp_dbl(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* Median gap of the traces of the generation nearest spec (log peak). */
static double gap_for(const cvc_hw_spec *spec)
{
	double p = spec->peak_tflops[CVC_HW_BF16] > 0 ? spec->peak_tflops[CVC_HW_BF16]
						     : spec->peak_tflops[CVC_HW_FP16];
	double best = INFINITY, bf = 0, v[16];
	size_t n = 0;

	if (!(p > 0))
		p = 312;
	for (size_t i = 0; i < sizeof gap_refs / sizeof gap_refs[0]; i++)
		if (fabs(log(p / gap_refs[i].bf16)) < best)
			best = fabs(log(p / gap_refs[i].bf16)), bf = gap_refs[i].bf16;
	for (size_t i = 0; i < sizeof gap_refs / sizeof gap_refs[0] && n < 16; i++)
		if (gap_refs[i].bf16 == bf)
			v[n++] = gap_refs[i].gap_us;
	qsort(v, n, sizeof v[0], cmp_dbl);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

double cvc_model_kernel_gap_us(const cvc_modelset *ms)
{
	return ms ? ms->kernel_gap_us : NAN;
}

double cvc_model_kernel_gap_sigma(const cvc_modelset *ms)
{
	return ms ? SIG_GAP : NAN;
}

void cvc_model_gemm_price(const cvc_modelset *ms, int64_t m, int64_t n, int64_t k, int64_t b,
			  cvc_hw_dtype dt, cvc_model_price *out)
{
	const struct gemm_slot *g;
	double f = 2.0 * (double)(b > 0 ? b : 1) * (double)m * (double)n * (double)k;

	memset(out, 0, sizeof *out);
	out->us = cvc_model_gemm_us(ms, m, n, k, b, dt);
	out->origin = "no model set";
	if (!ms || (unsigned)dt >= CVC_HW_NDTYPE)
		return;
	g = &ms->gemm[dt];
	out->origin = g->origin;
	if (g->dom_max > 0 && f >= g->dom_min && f <= g->dom_max) {
		out->sigma = g->sigma;
		out->extrap = 1;
		out->carried = g->carried;
	} else {
		/* the default efficiency answers outside the fit's sizes: the
		 * large-GEMM end it was taken from, or smaller ones */
		out->sigma = f >= GEMM_LARGE_FLOPS ? SIG_GEMM_DEFAULT_LARGE : SIG_GEMM_DEFAULT;
		out->extrap = g->dom_max > 0 && f > 0 ? fmax(f / g->dom_max, g->dom_min / f) : 0;
	}
}

void cvc_model_attention_price(const cvc_modelset *ms, const cvc_model_attn *a,
			       cvc_model_price *out)
{
	memset(out, 0, sizeof *out);
	out->us = cvc_model_attention_us(ms, a);
	out->origin = ms ? ms->attn_origin : "no model set";
	if (!ms)
		return;
	out->extrap = 1;
	/* curves measured on another generation carry over through the spec */
	out->carried = strcmp(opm_attn_ref_name(ms->attn_ref), gpu_of(&ms->spec)) != 0;
	out->sigma = out->carried ? sqrt(SIG_ATTN * SIG_ATTN + SIG_GEMM_CARRY * SIG_GEMM_CARRY)
				  : SIG_ATTN;
}

void cvc_model_membound_price(const cvc_modelset *ms, int64_t bytes, cvc_model_mem cls,
			      cvc_model_price *out)
{
	memset(out, 0, sizeof *out);
	out->us = cvc_model_membound_us(ms, bytes, cls);
	out->origin = "no model set";
	if (!ms || (unsigned)cls >= CVC_MODEL_NMEM)
		return;
	out->origin = ms->mem[cls].origin;
	out->sigma = ms->mem[cls].sigma;
	out->extrap = ms->mem[cls].fitted ? 1 : 0;
	out->carried = ms->mem[cls].carried;
}

double cvc_model_membound_us(const cvc_modelset *ms, int64_t bytes, cvc_model_mem cls)
{
	if (!ms || (unsigned)cls >= CVC_MODEL_NMEM)
		return NAN;
	if (bytes <= 0)
		return ms->mem[cls].p[MP_FLOOR];
	return ms->mem[cls].p[MP_FLOOR] +
	       (double)bytes / ((ms->spec.hbm_bw_gbps > 0 ? ms->spec.hbm_bw_gbps : 1) * 1e3 *
				ms->mem[cls].p[MP_EFF]);
}

enum level { L_INTRA, L_INTER, L_HIER };

static enum level level_of(int n, int gpn)
{
	if (gpn <= 1)
		return L_INTER;
	return n <= gpn ? L_INTRA : L_HIER;
}

/* The fitted slot for (c, n, gpn): the same group size if fitted, else the
 * nearest group size on the same topology level. */
static const struct coll_slot *find_slot(const cvc_modelset *ms, cvc_model_coll c, int n,
					 int gpn)
{
	const struct coll_slot *best = NULL;
	enum level lv = level_of(n, gpn);
	int best_d = 1 << 30;

	for (int i = 0; i < ms->ncoll; i++) {
		const struct coll_slot *s = &ms->coll[i];
		int d;

		if (s->c != c || !s->regimes_ok ||
		    level_of(s->nranks, s->gpn > 0 ? s->gpn : gpn) != lv)
			continue;
		/* across nodes, a fit prices only the node count it measured:
		 * latency and congestion grow with the span, not the group */
		if (lv != L_INTRA && s->gpn > 0 &&
		    (s->nranks + s->gpn - 1) / s->gpn != (n + gpn - 1) / gpn)
			continue;
		d = abs(s->nranks - n) * 4 + (s->gpn != gpn);
		if (d < best_d)
			best_d = d, best = s;
	}
	return best;
}

static double coll_default(const cvc_hw_spec *sys, cvc_model_coll c, int64_t bytes, int n,
			   int gpn)
{
	double S = (double)bytes, intra, inter, f;

	intra = (sys->intra_bw_gbps > 0 ? sys->intra_bw_gbps : 16) * 1e3 * DEF_COLL_INTRA_EFF;
	inter = (sys->inter_bw_gbps > 0 ? sys->inter_bw_gbps : 12.5) * 1e3 * DEF_COLL_INTER_EFF;
	f = cvc_model_busbw_factor(c, n);
	switch (level_of(n, gpn)) {
	case L_INTRA:
		return DEF_COLL_INTRA_ALPHA_US + S * f / intra;
	case L_INTER:
		return DEF_COLL_INTER_ALPHA_US + S * f / inter;
	default: {
		/* Hierarchical: NCCL pipelines the node-local and the network
		 * phases, so the slower one sets the bandwidth.  Over the
		 * network each GPU carries its 1/gpn share of the node's data
		 * (all NICs busy), except all-to-all and point to point. */
		int nodes = (n + gpn - 1) / gpn;
		double f_in = cvc_model_busbw_factor(c, gpn), f_out;
		double t_in, t_out;

		if (c == CVC_MODEL_ALLTOALL)
			f_out = (double)(n - gpn) / n;
		else if (c == CVC_MODEL_SENDRECV || c == CVC_MODEL_BROADCAST || c == CVC_MODEL_REDUCE)
			f_out = 1.0 / gpn;
		else
			f_out = cvc_model_busbw_factor(c, nodes) / gpn;
		t_in = S * f_in / intra;
		t_out = S * f_out / inter;
		return DEF_COLL_INTRA_ALPHA_US + DEF_COLL_INTER_ALPHA_US + (t_in > t_out ? t_in : t_out);
	}
	}
}

/*
 * Latency of a default-priced group past the two nodes the defaults'
 * alpha covers: NCCL's latency model (colltopo.c: per inter-node ring step
 * and NVLink step, per tree level), the same growth a fitted level gets.
 */
static double default_hops_us(cvc_model_coll c, int n, int gpn)
{
	int nodes = (n + gpn - 1) / gpn;
	struct opm_span to = {n, gpn, nodes, 0, 0}, two = {2 * gpn, gpn, 2, 0, 0};

	if (nodes <= 2)
		return 0;
	if (c != CVC_MODEL_ALLGATHER && c != CVC_MODEL_REDUCESCATTER && c != CVC_MODEL_ALLREDUCE)
		return 0;
	/* NCCL's latency model past the two nodes the defaults' alpha covers,
	 * the cheaper algorithm (the same growth the fitted levels get) */
	return opm_span_lat_us(c, c, &two, &to, OPM_ALGO_AUTO);
}

/* The newest slot of c whose large-message level passed the gate and that
 * spans more than one NVLink domain (multi = 1) or one domain (multi = 0). */
static const struct coll_slot *level_slot(const cvc_modelset *ms, cvc_model_coll c, int multi)
{
	for (int i = 0; i < ms->ncoll; i++) {
		const struct coll_slot *s = &ms->coll[i];

		if (s->c == c && s->level_ok && s->gpn > 0 && (s->nranks > s->gpn) == multi)
			return s;
	}
	return NULL;
}

/* The NVLink level's large-message bus bandwidth (GB/s): a fitted one-node
 * level of c (else of all-reduce: the same links), else the spec's link
 * times the default efficiency. */
static double dom_busbw(const cvc_modelset *ms, cvc_model_coll c, const cvc_hw_spec *sys,
			const struct coll_slot **from)
{
	const struct coll_slot *s = level_slot(ms, c, 0);

	if (!s)
		s = level_slot(ms, CVC_MODEL_ALLREDUCE, 0);
	*from = s;
	if (s)
		return s->lvl.algbw_gbps * cvc_model_busbw_factor(s->c, s->nranks);
	return (sys->intra_bw_gbps > 0 ? sys->intra_bw_gbps : 16) * DEF_COLL_INTRA_EFF;
}

static double node_nics(const cvc_hw_spec *sys, int gpn)
{
	return (sys->inter_bw_gbps > 0 ? sys->inter_bw_gbps : 12.5) * gpn;
}

void cvc_model_collective_price(const cvc_modelset *ms, cvc_model_coll c, int64_t bytes,
				int group_size, int gpus_per_node, const cvc_hw_spec *sys, int algo,
				cvc_model_price *out)
{
	const struct coll_slot *s, *net, *dom;
	int nodes, borrowed;

	memset(out, 0, sizeof *out);
	out->origin = ms ? ms->coll_def_origin : "no model set";
	out->sigma = SIG_COLL_DEFAULT;
	if (!ms || (unsigned)c >= CVC_MODEL_NCOLL) {
		out->us = NAN;
		return;
	}
	if (group_size <= 1 || bytes <= 0) {
		out->sigma = 0, out->extrap = 1;
		return;
	}
	if (!sys)
		sys = &ms->spec;
	if (gpus_per_node <= 0)
		gpus_per_node = sys->gpus_per_node > 0 ? sys->gpus_per_node : 8;
	if (gpus_per_node > group_size)
		gpus_per_node = group_size;
	nodes = (group_size + gpus_per_node - 1) / gpus_per_node;
	net = nodes > 1 ? level_slot(ms, c, 1) : NULL;
	/* all-gather and reduce-scatter run NCCL's rings on the links an
	 * all-reduce level measured (carry-over error in docs/MODELS.md) */
	borrowed = !net && nodes > 1 &&
		   (c == CVC_MODEL_ALLGATHER || c == CVC_MODEL_REDUCESCATTER) &&
		   (net = level_slot(ms, CVC_MODEL_ALLREDUCE, 1)) != NULL;
	s = find_slot(ms, c, group_size, gpus_per_node);
	/* a regime fit prices its own span, on its own cluster's NICs */
	if (s && algo == OPM_ALGO_AUTO &&
	    (nodes == 1 || !s->level_ok || !net ||
	     fabs(s->lvl.b_node_gbps - node_nics(sys, gpus_per_node)) <= 0.01 * s->lvl.b_node_gbps)) {
		out->origin = s->origin;
		out->us = opm_coll_us(s->p, s->nparams, c, bytes, group_size);
		out->sigma = s->sigma;
		/* the nearest fitted group size, or sizes past the fitted ones */
		out->extrap = fmax((double)bytes / s->dom_max, 1.0) *
			      fmax((double)group_size / s->nranks, (double)s->nranks / group_size);
		return;
	}
	if (net) {
		struct opm_span fit, to;
		double busbw = dom_busbw(ms, c, sys, &dom);
		int used;

		fit.n = net->nranks;
		fit.gpn = net->gpn;
		fit.nodes = (net->nranks + net->gpn - 1) / net->gpn;
		fit.busbw_dom = busbw;
		fit.b_node = net->lvl.b_node_gbps > 0 ? net->lvl.b_node_gbps
						      : node_nics(sys, net->gpn);
		to.n = group_size;
		to.gpn = gpus_per_node;
		to.nodes = nodes;
		to.busbw_dom = busbw;
		to.b_node = node_nics(sys, gpus_per_node);
		out->us = opm_topo_us(&net->lvl, net->c, c, &fit, &to, bytes, algo, &used);
		/* below the level's sizes, inside the fit's: the fit's own
		 * regimes measured them (latency-bound sizes the large-message
		 * line overprices), carried by the span's latency */
		if ((double)bytes < net->lvl.min_bytes && (double)bytes >= net->dom_min &&
		    !borrowed) {
			double ts = opm_coll_us(net->p, net->nparams, c, bytes, net->nranks) +
				    opm_span_lat_us(net->c, c, &fit, &to, algo);

			if (ts < out->us) {
				out->us = ts;
				out->origin = net->small_origin;
			}
		}
		out->origin = borrowed ? (dom ? net->ring_origin[0] : net->ring_origin[1])
			      : dom    ? net->topo_origin[used]
				       : net->topo_def_origin[used];
		{
			double lv = SIG_PER_MAPE * (isfinite(net->lvl.mape) ? net->lvl.mape : 0) / 100;
			double carry = nodes != fit.nodes || fabs(to.b_node - fit.b_node) > 0.01 * fit.b_node
					       ? SIG_COLL_CARRY : 0;
			double ring = borrowed ? SIG_COLL_RING_CARRY : 0;

			out->sigma = sqrt(lv * lv + carry * carry + ring * ring);
		}
		out->extrap = fmax((double)nodes / fit.nodes, 1.0);
		out->carried = borrowed || nodes != fit.nodes;
		return;
	}
	out->us = coll_default(sys, c, bytes, group_size, gpus_per_node) +
		  default_hops_us(c, group_size, gpus_per_node);
}

double cvc_model_collective_algo_us(const cvc_modelset *ms, cvc_model_coll c, int64_t bytes,
				    int group_size, int gpus_per_node, const cvc_hw_spec *sys,
				    int algo, const char **origin)
{
	cvc_model_price pr;

	cvc_model_collective_price(ms, c, bytes, group_size, gpus_per_node, sys, algo, &pr);
	if (origin)
		*origin = pr.origin;
	return pr.us;
}

double cvc_model_collective_us(const cvc_modelset *ms, cvc_model_coll c, int64_t bytes,
			       int group_size, int gpus_per_node, const cvc_hw_spec *sys)
{
	return cvc_model_collective_algo_us(ms, c, bytes, group_size, gpus_per_node, sys,
					    OPM_ALGO_AUTO, NULL);
}

const char *cvc_model_collective_origin(const cvc_modelset *ms, cvc_model_coll c, int group_size,
					int gpus_per_node)
{
	const char *o;

	/* the algorithm NCCL picks depends on the size: named at 256 MiB, a
	 * gradient bucket's order of magnitude */
	cvc_model_collective_algo_us(ms, c, 256 << 20, group_size, gpus_per_node, NULL,
				     OPM_ALGO_AUTO, &o);
	return o;
}

const char *cvc_model_origin(const cvc_modelset *ms, cvc_model_kind kind, int sub, int group_size)
{
	if (!ms)
		return "no model set";
	switch (kind) {
	case CVC_MODEL_GEMM:
		return (unsigned)sub < CVC_HW_NDTYPE ? ms->gemm[sub].origin : ms->def_origin;
	case CVC_MODEL_COLLECTIVE:
		return (unsigned)sub < CVC_MODEL_NCOLL
			       ? cvc_model_collective_origin(ms, (cvc_model_coll)sub, group_size, 0)
			       : ms->coll_def_origin;
	case CVC_MODEL_ATTENTION:
		return ms->attn_origin;
	case CVC_MODEL_MEMBOUND:
		return (unsigned)sub < CVC_MODEL_NMEM
			       ? ms->mem[sub].origin
			       : "spec-sheet HBM bandwidth, default per-class efficiency";
	}
	return "unknown model kind";
}
