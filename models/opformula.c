/*
 * opformula.c - the operator model formulas (GEMM waves, collective
 * regimes, memory-bound) and their defaults: what a parameter means, shared
 * by fitting (fit.c) and prediction (opprice.c) through opmodel_int.h.
 */
#include <math.h>
#include <string.h>

#include "cvc/cvc_model.h"
#include "models/opmodel_int.h"

/* ---- defaults (docs/MODELS.md "Default efficiencies") --------------------- */

#define DEF_GEMM_T0_US 4.0       /* launch floor of a library GEMM */
/* Fraction of the datasheet's dense peak on padded FLOPs, in a burst: the
 * median of XLA's H100 bf16 table over its 34 rows of 2^36 FLOPs and more.
 * models_gemm.default_efficiency_from_xla recomputes it. */
#define DEF_GEMM_EFF_BURST 0.7570
/* The GPU XLA's table was measured on, for its ceiling (ceiling.c): an
 * H100, whose die and power limit the H200 SXM row measured. */
#define DEF_GEMM_EFF_GPU "H200-SXM"

double opm_gemm_default_efficiency(const cvc_hw_catalog *cat, const cvc_hw_spec *spec)
{
	double to = opm_ceiling_share(cat, spec, NULL);
	double from = opm_ceiling_share_of(DEF_GEMM_EFF_GPU);

	/* XLA's burst, through the two ceilings, at spec's sustained clock */
	return DEF_GEMM_EFF_BURST * (to > 0 && from > 0 ? to / from : 1) / opm_burst_ratio(spec);
}

int opm_gemm_default_carried(const cvc_hw_catalog *cat, const cvc_hw_spec *spec)
{
	const char *to = NULL;

	/* the default's own GPU (an H100, whose die and power limit the H200
	 * SXM row measured) prices it as measured; any other through the
	 * ceilings, a carry as a fitted GEMM's is */
	return !(opm_ceiling_share(cat, spec, &to) > 0 && to && !strcmp(to, DEF_GEMM_EFF_GPU));
}

void opm_gemm_defaults(double p[GP_N])
{
	p[GP_T0] = DEF_GEMM_T0_US;
	p[GP_WAVE] = 0;
	p[GP_CWAVE] = 0;
	p[GP_CFLOP] = 1.0 / DEF_GEMM_EFF_BURST;
	p[GP_MEMEFF] = OPM_DEF_MEM_EFF;
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
	if (t <= 0 && dt == CVC_HW_FP4)
		t = spec->peak_tflops[CVC_HW_FP8];
	if (t <= 0 && (dt == CVC_HW_FP8 || dt == CVC_HW_FP4))
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
	bytes = cvc_hw_dtype_size(dt) * bb *
		((double)m * (double)k + (double)k * (double)n + (double)m * (double)n);
	bw = spec->hbm_bw_gbps > 0 ? spec->hbm_bw_gbps * 1e3 : 1e3; /* bytes per us */
	eff = p[GP_MEMEFF] > 0 ? p[GP_MEMEFF] : OPM_DEF_MEM_EFF;
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

/*
 * Collectives in one NVLink domain, measured per NVLink generation: XLA's
 * collective tables of 8 GPUs of one H100 node (sm_90: NVLink 4, 450 GB/s)
 * and of one B200 node (sm_100_B200: NVLink 5, 900 GB/s), 22 sizes from
 * 1 KiB to 2 GiB each, fitted as the all-reduce references above (largest
 * third of the sizes, 32 MiB .. 2 GiB, t = a + b S on relative error; eff
 * = f(8)/b / link, fill = a/b bytes).  tests/unit/test_nvlinkref.c
 * (nvlinkref.refs_match_xla) recomputes them.  The fill also stands in
 * for the latency: (S + fill) f / (eff link) is within 1-15% of every row
 * from 32 MiB up and errs slow below 8 MiB, where the spec-sheet default
 * (10 us + S f / (0.75 link)) is 40-90% fast (docs/MODELS.md
 * "Collectives in one NVLink domain").  Order: cvc_model_coll's all-reduce,
 * all-gather, reduce-scatter, all-to-all.
 */
static const struct {
	double link_gbps;
	double eff[4], sfill[4];
} nvlink_ref[] = {
	{450, {0.89249, 0.77471, 0.72401, 0.74444}, {18.855e6, 18.291e6, 15.959e6, 17.575e6}},
	{900, {0.69989, 0.66798, 0.68973, 0.66843}, {38.525e6, 28.418e6, 36.391e6, 45.307e6}},
};

int opm_coll_nvlink_ref(const cvc_hw_spec *spec, cvc_model_coll c, double *eff, double *sfill)
{
	int k = c == CVC_MODEL_ALLREDUCE       ? 0
		: c == CVC_MODEL_ALLGATHER     ? 1
		: c == CVC_MODEL_REDUCESCATTER ? 2
		: c == CVC_MODEL_ALLTOALL      ? 3
					       : -1;

	if (k < 0 || !spec || strcmp(spec->vendor, "NVIDIA"))
		return 0;
	/* only the measured links: the H100 table's 18.9 MB all-reduce fill
	 * at NVLink 3's bandwidth made Megatron 2021's A100 tensor-parallel
	 * all-reduces 20% slow (megatron-2021-selene 3.76 -> 7.42% MAPE) */
	for (size_t i = 0; i < sizeof nvlink_ref / sizeof nvlink_ref[0]; i++)
		if (fabs(spec->intra_bw_gbps / nvlink_ref[i].link_gbps - 1) < 1e-6) {
			*eff = nvlink_ref[i].eff[k];
			*sfill = nvlink_ref[i].sfill[k];
			return 1;
		}
	return 0;
}

/*
 * Measured on Perlmutter (4 A100s, 4 NVLink3 links per pair) by AxoNN's
 * authors: 76 GB/s for a pair against 225 for all four
 * (tests/data/axonn-perlmutter-busbw.csv; docs/MODELS.md "Mesh nodes").
 */
double opm_intra_share(const cvc_hw_spec *spec, int k)
{
	int P = cvc_hw_domain(spec);

	if (!spec || !spec->intra_mesh || P <= 1 || k <= 1 || k >= P)
		return 1;
	return (double)(k - 1) / (P - 1);
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
	double eff = p[MP_EFF] > 0 ? p[MP_EFF] : OPM_DEF_MEM_EFF;

	if (bytes <= 0)
		return p[MP_FLOOR];
	return p[MP_FLOOR] + (double)bytes / (bw * eff);
}
