/*
 * ceiling.c - what the tensor cores of a GPU reach on a dense matmul when it
 * is measured, in a short burst at the boost clock and sustained at the
 * power limit: the published measurements of Stas Bekman's "Machine
 * Learning Engineering" (github.com/stas00/ml-engineering,
 * compute/accelerator/README.md, "Maximum Achievable and Sustainable Matmul
 * FLOPS comparison table", commit fe12f4e4b0418f5e5a8321a1685c2ab26e41f416;
 * its benchmarks/mamf-finder.py, benchmark version 4).
 *
 * Three facts come out of it (docs/MODELS.md "Clocks: benchmarks vs
 * training"):
 *
 *  - every kernel table cvc fits (XLA's, vidur's, cudnn-frontend's) was
 *    measured in bursts; a training step holds its GPU at the power limit,
 *    where the SM clock settles lower.  The sustained share of the burst
 *    throughput (MSMF / MAMF, one GPU, one harness, one session: H200
 *    755 / 850 at 1860-1918 MHz against 1980) converts one to the other
 *    (opm_burst_ratio());
 *  - an fp8 GEMM does not reach the share of its (twice as high) peak that
 *    bf16 reaches of its own: sustained, H200 68.4% against 76.3%, B200
 *    62.0% against 64.0% (opm_fp8_share());
 *  - GPUs do not reach the same share of their datasheet peaks, even in a
 *    burst: an MI300X 48% where an H200 reaches 86%, a B200 77%.  A fit
 *    carried to another GPU goes through these ceilings, not the spec
 *    sheet alone (opm_ceiling_share()).
 */
#include <math.h>
#include <string.h>

#include "cvc/cvc_model.h"
#include "models/modelset_int.h"

/*
 * Burst (MAMF) and sustained (MSMF) TFLOP/s, bf16 and fp8; 0 = not
 * measured.  Only the rows measured both ways are here, each with the
 * table's own figures: the GPUs measured with benchmark version 4 (A100
 * PCIe, H200 SXM and NVL, B200; the sustained figure the median of the eight
 * GPUs of a node all busy), and the MI300X, the only AMD GPU measured both
 * ways, with an earlier version "that defined both headlines differently,
 * so compare those two [B300, MI300X] with the rest only roughly" (the
 * table's words).  The B300, measured the same earlier way, is left out:
 * the B200 speaks for Blackwell in the current benchmark (the B300's
 * ceiling comes from the earlier-harness pair below).  The table's
 * burst figures for other GPUs (H100 795, A100 SXM 271, GB200 1822, ...)
 * come from older benchmark versions and are not compared with these rows
 * directly (H100 and H200 are one die at one power limit, 795 against
 * 850); a GPU that older harness measured beside one of these rows is
 * placed through that pair (earlier_tab below: the GB200 beside the B200).
 * Measured on two GPU pairs with the same harness on both (vidur's A100
 * and H100 tables, XLA's sm_90 and sm_100 tables), ratios of these rows
 * carry a GEMM fit across GPUs within 3% and 6.6% in the median, where the
 * spec sheet alone is off by 3% and 13.7% (ceiling.carry_across_gpus_...).
 */
static const struct ceiling {
	const char *gpu;  /* catalog name (H200 NVL: not in the catalog) */
	double theory;    /* the table's dense bf16 peak, TFLOP/s */
	double watts;     /* the card's power limit */
	double mamf[2];   /* bf16, fp8 */
	double msmf[2];
} ceil_tab[] = {
	/* 80 GB, 300 W; MSMF at 1326 MHz, MAMF at 1395 MHz */
	{"A100-PCIE-80GB", 312, 300, {285, 0}, {258, 0}},
	/* MAMF at 1980 MHz; MSMF at 1860-1918 MHz, 685-688 W (fp8: 1767-1848) */
	{"H200-SXM", 989, 700, {850, 1525}, {755, 1354}},
	/* the same die at 600 W */
	{"H200-NVL", 835, 600, {761, 1366}, {665, 1160}},
	/* MAMF at 1965 MHz; MSMF at 1399-1443 MHz, 978-987 W */
	{"B200", 2250, 1000, {1737, 3350}, {1439, 2788}},
	/* earlier benchmark version; 750 W, reached within the first kernel, so
	 * its burst is hardly one */
	{"MI300X", 1300, 750, {634, 1230}, {616, 1182}},
};
#define NCEIL (sizeof ceil_tab / sizeof ceil_tab[0])

/*
 * GPUs whose burst ceiling the table measured only with its earlier
 * harness (the revision before benchmark version 4: "a mean of 100
 * iterations after 50 warmup iterations for each shape"; stas00/
 * ml-engineering compute/accelerator/README.md as mirrored in
 * Mu-L/ml-engineering at 330ebdd93ba8b41b6c8e11b6acd46d03d53ea1ec), placed
 * against a GPU of ceil_tab measured in that same harness: its version-4
 * ceiling times the two GPUs' ratio there.  The GB200's datasheet peak is
 * 11% over the B200's, but in one harness its best matmul is 4.4% faster
 * (bf16 1822.0 against 1745.0; fp8 3615.6 against 3432.5, 5.3%): taking
 * the B200's share of peak would price its GEMMs 6% fast.  The two
 * harnesses agree where both measured: the B200's bf16 1745.0 against
 * 1737 (0.5%).  The current table still lists the GB200's 1822 and 3616.
 */
static const struct earlier {
	const char *gpu, *ref; /* catalog names; ref is a ceil_tab row */
	double theory;         /* the table's dense bf16 peak of gpu */
	double mamf[2];        /* gpu, bf16 and fp8, earlier harness */
	double ref_mamf[2];    /* ref, the same harness */
} earlier_tab[] = {
	/* torch 2.10.0.dev20250916+cu130 and 2.7.1+cu128 */
	{"GB200", "B200", 2500, {1822.0, 3615.6}, {1745.0, 3432.5}},
	/* torch 2.9.1+cu130 ("same as B200, newer torch/cuda"): 1.4% over it */
	{"B300", "B200", 2250, {1769.0, 3353.3}, {1745.0, 3432.5}},
};
#define NEARLIER (sizeof earlier_tab / sizeof earlier_tab[0])

static const struct ceiling *row_of(const char *gpu)
{
	for (size_t i = 0; i < NCEIL; i++)
		if (!strcmp(ceil_tab[i].gpu, gpu))
			return &ceil_tab[i];
	return NULL;
}

/* The row that gives each reference generation of opm_attn_ref_gpu()
 * (Ampere, Hopper, Blackwell, CDNA3) its burst/sustained ratio: the GPU of
 * the generation measured with the current benchmark (CDNA3: the only
 * one). */
static const char *const sustain_gpu[] = {"A100-PCIE-80GB", "H200-SXM", "B200", "MI300X"};

/* The measured row of reference generation ref (Hopper's when out of
 * range). */
static const struct ceiling *sustain_row(int ref)
{
	if (ref < 0 || (size_t)ref >= sizeof sustain_gpu / sizeof sustain_gpu[0])
		ref = 1;
	return row_of(sustain_gpu[ref]);
}

/*
 * Sustained rows of a generation's second die at another power limit, from
 * the earlier harness only (so not in ceil_tab), kept to check the Hopper
 * slope before it is carried there: the B300 at 1100 W (MAMF 1892, MSMF
 * 1519 bf16; ml-engineering's table, the revision of earlier_tab) sustains
 * 0.803 of its burst, under the B200's 0.828 at 1000 W, where the slope
 * says 0.837.
 */
static const struct {
	const char *ref; /* the ceil_tab row of the generation */
	double watts, mamf, msmf;
} slope_check[] = {
	{"B200", 1100, 1892, 1519},
};

/* Whether the H200's slope may move generation row m: not where a die of
 * that generation measured at another limit moved the other way. */
static int slope_holds(const struct ceiling *m, double slope)
{
	for (size_t i = 0; i < sizeof slope_check / sizeof slope_check[0]; i++) {
		double moved;

		if (strcmp(slope_check[i].ref, m->gpu))
			continue;
		moved = slope_check[i].msmf / slope_check[i].mamf - m->msmf[0] / m->mamf[0];
		if (moved * slope * log(slope_check[i].watts / m->watts) < 0)
			return 0;
	}
	return 1;
}

/*
 * The sustained share of the burst at a power limit of `watts`: the
 * generation's measured GPU, moved by the power difference.  The share
 * grows with the power limit (the clock settles where the power limit
 * is): one die measured at two limits, H200 SXM (700 W, 0.888) and NVL
 * (600 W, 0.874), gives its slope on log power; an A100 SXM (400 W) is
 * priced from the A100 PCIe (300 W) through it.  Not on Blackwell, where
 * the one other die measured goes the other way (slope_check): a GB200 at
 * 1200 W sustains what the B200 measured.  Never above 1.
 */
static double sustained_share(int ref, double watts)
{
	const struct ceiling *m = sustain_row(ref), *a = row_of("H200-SXM"), *b = row_of("H200-NVL");
	double share = m->msmf[0] / m->mamf[0];
	double slope = (a->msmf[0] / a->mamf[0] - b->msmf[0] / b->mamf[0]) / log(a->watts / b->watts);

	if (watts > 0 && slope_holds(m, slope))
		share += slope * log(watts / m->watts);
	return fmin(1.0, share);
}

double opm_burst_ratio_ref(int ref)
{
	return 1 / sustained_share(ref, opm_attn_ref_watts(ref));
}

double opm_burst_ratio(const cvc_hw_spec *spec)
{
	return 1 / sustained_share(opm_attn_ref_gpu(spec), spec->tdp_w);
}

const char *opm_burst_ratio_gpu(const cvc_hw_spec *spec)
{
	return sustain_row(opm_attn_ref_gpu(spec))->gpu;
}

/* Each of these GPUs' fp8 peak is twice its bf16 peak (H200 1978.9 and
 * 989.4, B200 4500 and 2250, MI300X 2614.9 and 1307.4), so the share of
 * the fp8 peak over the share of the bf16 peak is msmf_fp8 / (2 msmf_bf16). */
double opm_fp8_share(const cvc_hw_spec *spec)
{
	const struct ceiling *c = sustain_row(opm_attn_ref_gpu(spec));

	if (!(c->msmf[1] > 0))
		return 1.0; /* no fp8 on the generation (Ampere) */
	return c->msmf[1] / (2 * c->msmf[0]);
}

/*
 * NVFP4 GEMMs against bf16 GEMMs on one B200, one harness, one session:
 * torchao's benchmarks/float8/bench_matmul.py --recipe nvfp4 (pytorch/ao
 * PR #2427, 2025-06-23; torch._scaled_mm through cuBLAS), square
 * M = K = N, TFLOP/s as printed against the peaks it prints (bf16 2250,
 * fp4 9000, the HGX B200 datasheet's).  The rows of 2^36 FLOPs and more,
 * where the default efficiency answers (4096^3 to 8192^3).  No such pair
 * exists for MXFP4 or for fp8 with blockwise scales: docs/MODELS.md
 * "FP4 and the FP8 recipes".
 */
static const struct {
	double mkn, bf16_tflops, fp4_tflops;
} fp4_tab[] = {
	{4096, 1410, 4460},
	{6144, 1450, 5500},
	{8192, 1420, 5370},
};
#define NFP4 (sizeof fp4_tab / sizeof fp4_tab[0])
#define B200_BF16_PEAK 2250.0
#define B200_FP4_PEAK 9000.0

/* Row i's fp4 share of its peak over bf16's of its own. */
static double fp4_row_share(size_t i)
{
	return fp4_tab[i].fp4_tflops / B200_FP4_PEAK / (fp4_tab[i].bf16_tflops / B200_BF16_PEAK);
}

double opm_fp4_share_measured(double *sd_log)
{
	double v[NFP4], mean = 0, ss = 0, t;

	for (size_t i = 0; i < NFP4; i++) {
		v[i] = fp4_row_share(i);
		mean += log(v[i]) / NFP4;
	}
	for (size_t i = 0; i < NFP4; i++)
		ss += (log(v[i]) - mean) * (log(v[i]) - mean);
	if (sd_log)
		*sd_log = sqrt(ss / (NFP4 - 1));
	/* the median: the 4096^3 row has not filled the GPU with fp4 tiles */
	for (size_t i = 0; i < NFP4; i++)
		for (size_t j = i + 1; j < NFP4; j++)
			if (v[j] < v[i])
				t = v[i], v[i] = v[j], v[j] = t;
	return v[NFP4 / 2];
}

/*
 * NVFP4 GEMMs against bf16 GEMMs on one B300, one harness, inputs
 * quantized before the timed loop: Transformer Engine's
 * benchmarks/gemm/benchmark_gemm.py --pre-quantize (docs/examples/
 * gemm_profiling at 8f2e6357, "Worked Example: 5B Model on B300": 15,872
 * tokens, hidden 4096, FFN 16384, 0.53-2.1 TFLOP per GEMM, the sizes of
 * torchao's B200 rows), ms per layer of its four linear layers, each pass.
 * Blackwell Ultra's datasheet gives FP4 5.83x its bf16 peak (HGX B300:
 * 105 PF dense per 8 against 2.25 PF), the B200's 4x; the kernels measured
 * did not reach the difference: NVFP4 3.48x bf16 on the B300, 3.8x on the
 * B200 (torchao, 8192^3).
 */
static const struct {
	const char *pass;
	double bf16_ms, fp4_ms;
} b300_fp4_tab[] = {
	{"fprop", 4.250, 1.254},
	{"dgrad", 4.434, 1.305},
	{"wgrad", 4.418, 1.205},
};
#define NB300 (sizeof b300_fp4_tab / sizeof b300_fp4_tab[0])
#define B300_BF16_PEAK 2250.0
#define B300_FP4_PEAK 13125.0

/* The B300's: the layer's time in each format, as the benchmark sums it;
 * *sd_log the passes' scatter. */
static double fp4_share_b300(double *sd_log)
{
	double a = 0, b = 0, mean = 0, ss = 0, l;
	double peaks = B300_FP4_PEAK / B300_BF16_PEAK;

	for (size_t i = 0; i < NB300; i++) {
		a += b300_fp4_tab[i].bf16_ms;
		b += b300_fp4_tab[i].fp4_ms;
		mean += log(b300_fp4_tab[i].bf16_ms / b300_fp4_tab[i].fp4_ms) / NB300;
	}
	for (size_t i = 0; i < NB300; i++) {
		l = log(b300_fp4_tab[i].bf16_ms / b300_fp4_tab[i].fp4_ms) - mean;
		ss += l * l;
	}
	if (sd_log)
		*sd_log = sqrt(ss / (NB300 - 1));
	return a / b / peaks;
}

double opm_fp4_share_of(const cvc_hw_spec *spec, double *sd_log, const char **src)
{
	double r16 = spec ? spec->peak_tflops[CVC_HW_BF16] : 0;
	double r4 = spec ? spec->peak_tflops[CVC_HW_FP4] : 0;

	/* measured on NVIDIA's Blackwell GPUs; another vendor's 4-bit path is
	 * not: its fp8 share stands in (docs/MODELS.md) */
	if (spec && strcmp(spec->vendor, "NVIDIA") != 0) {
		if (sd_log)
			*sd_log = 0;
		if (src)
			*src = "its fp8 share: no 4-bit measurement of its vendor";
		return opm_fp8_share(spec);
	}
	/* the measured GPU whose FP4 peak over its bf16 peak is nearest (on log
	 * scale): Blackwell's 4x (B200, GB200), Blackwell Ultra's 5.8-6x (B300,
	 * GB300) */
	if (r16 > 0 && r4 > 0 &&
	    fabs(log(r4 / r16 / (B300_FP4_PEAK / B300_BF16_PEAK))) <
		    fabs(log(r4 / r16 / (B200_FP4_PEAK / B200_BF16_PEAK)))) {
		if (src)
			*src = "NVFP4, Transformer Engine on B300";
		return fp4_share_b300(sd_log);
	}
	if (src)
		*src = "NVFP4, torchao on B200";
	return opm_fp4_share_measured(sd_log);
}

double opm_fp4_share(const cvc_hw_spec *spec)
{
	return opm_fp4_share_of(spec, NULL, NULL);
}

/*
 * MXFP8 GEMMs (E4M3 with an E8M0 scale per 32 elements, the scales read by
 * the block-scaled tensor-core instruction) against per-tensor scaled fp8
 * GEMMs of the same shapes, one GPU, one harness, inputs quantized before
 * the timed loop so that only the GEMM kernels count: Transformer
 * Engine's benchmarks/gemm/benchmark_gemm.py --pre-quantize on a B300
 * (NVIDIA/TransformerEngine docs/examples/gemm_profiling/gemm_profiling.rst
 * at 8f2e6357, "Worked Example: 5B Model on B300": hidden 4096, FFN 16384,
 * 15,872 tokens; ms per layer of the four linear layers, each pass).  The
 * B300's fp8 tensor cores are the B200's (4.5 PF dense both), and its
 * per-tensor fp8 runs at 0.962 of bf16's share of peak there against the
 * B200's sustained 0.969 (opm_fp8_share()).  No B200 table of the two
 * formats over a model's GEMMs was found; the one B200 pair found (cuDNN,
 * one batched shape, flashinfer PR #2256) is 0.991.
 */
static const struct {
	const char *pass;
	double fp8_ms, mxfp8_ms; /* FP8 CurrentScaling and MXFP8, pre-quantized */
} mxfp8_tab[] = {
	{"fprop", 2.158, 2.365},
	{"dgrad", 2.329, 2.397},
	{"wgrad", 2.325, 2.400},
};
#define NMX (sizeof mxfp8_tab / sizeof mxfp8_tab[0])

double opm_mxfp8_factor(double *sd_log)
{
	double a = 0, b = 0, mean = 0, ss = 0;

	for (size_t i = 0; i < NMX; i++) {
		a += mxfp8_tab[i].mxfp8_ms;
		b += mxfp8_tab[i].fp8_ms;
		mean += log(mxfp8_tab[i].mxfp8_ms / mxfp8_tab[i].fp8_ms) / NMX;
	}
	for (size_t i = 0; i < NMX; i++) {
		double d = log(mxfp8_tab[i].mxfp8_ms / mxfp8_tab[i].fp8_ms) - mean;

		ss += d * d;
	}
	if (sd_log)
		*sd_log = sqrt(ss / (NMX - 1));
	/* the layer's time in each, as the benchmark sums it */
	return a / b;
}

/* The burst ceiling as a share of the measured GPU's own peak, as the
 * table gives it (a GPU the projector scales keeps its model's share);
 * NaN for no row. */
static double share_of(const struct ceiling *c)
{
	return c ? c->mamf[0] / c->theory : NAN;
}

/* The same for a GPU of either table by name (earlier_tab: the reference's
 * version-4 ceiling moved by the one-harness ratio); NaN when neither.
 * *name (may be NULL) gets the table's own copy of the name. */
static double share_named(const char *gpu, const char **name)
{
	const struct ceiling *c = gpu ? row_of(gpu) : NULL;

	if (name)
		*name = c ? c->gpu : NULL;
	if (c)
		return share_of(c);
	for (size_t i = 0; gpu && i < NEARLIER; i++) {
		const struct earlier *e = &earlier_tab[i];
		const struct ceiling *r = row_of(e->ref);

		if (!strcmp(e->gpu, gpu) && r) {
			if (name)
				*name = e->gpu;
			return r->mamf[0] * (e->mamf[0] / e->ref_mamf[0]) / e->theory;
		}
	}
	return NAN;
}

double opm_ceiling_share(const cvc_hw_catalog *cat, const cvc_hw_spec *spec, const char **from)
{
	const char *names[NCEIL + NEARLIER], *name = NULL;
	double share = share_named(opm_gpu_of(spec), &name);

	if (!(share > 0) && cat) {
		int best;

		for (size_t i = 0; i < NCEIL; i++)
			names[i] = ceil_tab[i].gpu;
		for (size_t i = 0; i < NEARLIER; i++)
			names[NCEIL + i] = earlier_tab[i].gpu;
		best = cvc_hw_closest(cat, spec, names, NCEIL + NEARLIER);
		share = share_named(best >= 0 ? names[best] : NULL, &name);
	}
	if (from)
		*from = share > 0 ? name : NULL;
	return share;
}

double opm_ceiling_share_of(const char *gpu)
{
	return share_named(gpu, NULL);
}

double opm_carry_factor(const cvc_hw_catalog *cat, const cvc_hw_spec *from,
			const cvc_hw_spec *spec, const char **gpu_a, const char **gpu_b)
{
	double a = opm_ceiling_share(cat, from, gpu_a), b = opm_ceiling_share(cat, spec, gpu_b);

	if (!(a > 0) || !(b > 0))
		return 1.0;
	/* from's sustained efficiency, back to its burst, through the two
	 * ceilings, down to spec's sustained */
	return b / a * opm_burst_ratio(from) / opm_burst_ratio(spec);
}
