/*
 * blockfp8.c - fp8 GEMMs with 1x128 / 128x128 block scales on Hopper
 * (Transformer Engine's Float8BlockScaling, DeepSeek-V3's recipe), from
 * the one published benchmark of such kernels: DeepGEMM's first release
 * (deepseek-ai/DeepGEMM README, 2025-02, "Performance": H800, NVCC 12.8,
 * "all shapes potentially used in DeepSeek-V3/R1 inference"; the table as
 * mirrored with the release's text in a Chinese walk-through of it).
 *
 * Hopper's fp8 tensor cores accumulate in limited precision, so these
 * kernels promote each 128-wide slice of K to fp32 on the CUDA cores and
 * apply the block scales there (the README's "two-level accumulation");
 * cvc's per-tensor fp8 price does not include that work.  What the
 * benchmark measured, over what cvc's default fp8 model of the same GPU
 * prices the same shapes (the benchmark's bursts moved to the sustained
 * clock as every kernel table is, ceiling.c), is the recipe's factor.
 * It depends on K: the training-sized rows (M = 4096 and the contiguous
 * grouped rows of 4096 and 8192 rows per group) run at 0.60 of cvc's
 * per-tensor price at K = 512 and 1.02 at K = 16384; the factor is read
 * off the rows' mean per K, linear on log2 K between them and held past
 * the ends.  docs/MODELS.md "FP4 and the FP8 recipes".
 */
#include <math.h>
#include <string.h>

#include "cvc/cvc_model.h"
#include "models/modelset_int.h"

#define BLOCKFP8_GPU "H800-SXM" /* the benchmark's GPU, as the catalog names it */

/* The README's rows with M >= 4096 (the decoding rows of 64 and 128
 * rows are not what a training step runs); groups > 1: the contiguous
 * grouped GEMMs, M rows per group. */
static const struct {
	int groups;
	double m, n, k, tflops;
} dg_tab[] = {
	{1, 4096, 2112, 7168, 1058},  {1, 4096, 24576, 1536, 990},
	{1, 4096, 32768, 512, 590},   {1, 4096, 7168, 16384, 1358},
	{1, 4096, 4096, 7168, 1304},  {1, 4096, 7168, 2048, 1025},
	{4, 8192, 4096, 7168, 1297},  {4, 8192, 7168, 2048, 1099},
	{8, 4096, 4096, 7168, 1288},  {8, 4096, 7168, 2048, 1093},
};
#define NDG (sizeof dg_tab / sizeof dg_tab[0])

const char *cvc_model_blockfp8_gpu(void)
{
	return BLOCKFP8_GPU;
}

int cvc_model_same_generation(const cvc_hw_spec *a, const cvc_hw_spec *b)
{
	return a && b && opm_attn_ref_gpu(a) == opm_attn_ref_gpu(b);
}

/* log of the benchmark's sustained time over ref's fp8 price of row i */
static double row_log_ratio(const cvc_modelset *ref, size_t i)
{
	const cvc_hw_spec *spec = cvc_modelset_spec(ref);
	double f = 2.0 * dg_tab[i].groups * dg_tab[i].m * dg_tab[i].n * dg_tab[i].k;
	double t_dg = f / (dg_tab[i].tflops * 1e12) * opm_burst_ratio(spec) * 1e6;
	double t_cvc = cvc_model_gemm_us(ref, (int64_t)dg_tab[i].m, (int64_t)dg_tab[i].n,
					 (int64_t)dg_tab[i].k, dg_tab[i].groups, CVC_HW_FP8);

	return log(t_dg / t_cvc);
}

cvc_status cvc_model_blockfp8_fit(const cvc_modelset *ref, cvc_model_blockfp8 *out)
{
	double lr[NDG], lk[NDG], ss = 0;
	int df = 0;

	if (!ref || !out)
		return CVC_ERR_USAGE;
	memset(out, 0, sizeof *out);
	for (size_t i = 0; i < NDG; i++)
		lr[i] = row_log_ratio(ref, i), lk[i] = log2(dg_tab[i].k);
	/* the rows' K values, ascending, each with its rows' mean */
	for (size_t i = 0; i < NDG; i++) {
		int j = 0;

		while (j < out->n && out->log2k[j] < lk[i])
			j++;
		if (j < out->n && out->log2k[j] == lk[i])
			continue;
		if (out->n == CVC_MODEL_BLOCKFP8_MAXK)
			return CVC_ERR_INTERNAL;
		memmove(&out->log2k[j + 1], &out->log2k[j], (size_t)(out->n - j) * sizeof out->log2k[0]);
		out->log2k[j] = lk[i];
		out->n++;
	}
	for (int j = 0; j < out->n; j++) {
		double sum = 0;
		int c = 0;

		for (size_t i = 0; i < NDG; i++)
			if (lk[i] == out->log2k[j])
				sum += lr[i], c++;
		out->log_ratio[j] = sum / c;
		for (size_t i = 0; i < NDG; i++)
			if (lk[i] == out->log2k[j])
				ss += (lr[i] - out->log_ratio[j]) * (lr[i] - out->log_ratio[j]);
		df += c - 1;
	}
	/* the rows' scatter around their K's mean */
	out->sigma = df > 0 ? sqrt(ss / df) : 0;
	return CVC_OK;
}

double cvc_model_blockfp8_factor(const cvc_model_blockfp8 *t, int64_t k, double *sigma)
{
	double lk = k > 0 ? log2((double)k) : 0, lr;

	if (sigma)
		*sigma = t && t->n > 0 ? t->sigma : 0;
	if (!t || t->n <= 0)
		return 1.0;
	if (lk <= t->log2k[0])
		lr = t->log_ratio[0];
	else if (lk >= t->log2k[t->n - 1])
		lr = t->log_ratio[t->n - 1];
	else {
		int j = 1;

		while (t->log2k[j] < lk)
			j++;
		lr = t->log_ratio[j - 1] + (t->log_ratio[j] - t->log_ratio[j - 1]) *
						   (lk - t->log2k[j - 1]) / (t->log2k[j] - t->log2k[j - 1]);
	}
	/* a time factor: how much longer than the per-tensor price */
	return exp(lr);
}

/*
 * The weight gradients.  DeepGEMM's first release measured the forward
 * kind only: activations scaled 1x128 along K, weights 128x128 (its
 * "1D2D" kernels).  A weight gradient's K is the tokens and both of its
 * operands are activations or gradients scaled 1x128 along it, so every
 * 128-wide slice promotes with an outer product of two scale vectors
 * instead of one scale; DeepSeek's trainer writes it into the fp32
 * gradient (its "_acc" kernels).  Measured in DeepSeek-V3's own training
 * trace (deepseek-ai/profile-data train.json, ../shared/traces/
 * deepseek-train-h800-ep64: 4 MoE layers forward and backward on H800):
 * its 60 weight-gradient kernels (fp8_dptp128c_acc) run 27.49 ms, its 80
 * forward and dgrad kernels (fp8_ptp128c, m_grouped_fp8_ptp128c) 41.76
 * ms, the same layers' shapes, beside the same DeepEP kernels; cvc's
 * prices of those GEMMs as the forward kind put the ratio at 0.456
 * against the trace's 0.658.  The factor is the ratio of the two ratios,
 * so the SMs DeepEP holds and the clock, common to both, drop out.  Its
 * sigma: the four layers' ratios in the trace scatter 2.8% around their
 * mean.  moerun.blockwise_wgrad_against_the_trace recomputes it.
 */
#define BLOCKFP8_WGRAD 1.444
#define BLOCKFP8_WGRAD_SIGMA 0.028

double cvc_model_blockfp8_wgrad_factor(double *sigma)
{
	if (sigma)
		*sigma = BLOCKFP8_WGRAD_SIGMA;
	return BLOCKFP8_WGRAD;
}
