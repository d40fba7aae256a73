/*
 * lowprec.c - the transformer layers' GEMMs in a low-precision format:
 * fp8 under each of Transformer Engine's scaling recipes, NVFP4 and MXFP4.
 * What each format adds to a step is memory-bound work (the quantize
 * kernels: an amax pass where the recipe needs a per-tensor scale, the
 * cast writing every layout a GEMM reads, block scales, NVFP4's random
 * Hadamard transform on the wgrad operands and stochastic rounding of
 * the gradients), the bytes the quantized tensors occupy, and, for a
 * format whose GEMM efficiency nobody measured, a wider interval
 * (docs/MODELS.md "FP4 and the FP8 recipes"; docs/SCENARIOS.md "What
 * one step is made of").
 *
 * Sources, per figure below:
 *   fp8 delayed / current / mxfp8 / blockwise: Transformer Engine's
 *     recipes (DelayedScaling, Float8CurrentScaling, MXFP8BlockScaling:
 *     an E8M0 scale per 32 elements; Float8BlockScaling: fp32 scales per
 *     1x128 block of activations and gradients, per 128x128 block of
 *     weights, DeepSeek-V3's recipe); current scaling computes the
 *     tensor's amax in a kernel of its own before the cast;
 *   NVFP4: Transformer Engine docs, low_precision_training/nvfp4: E2M1
 *     values, an E4M3 scale per 16 consecutive elements (16x16 tiles for
 *     weights, the default "2D" weight scaling), an fp32 per-tensor scale
 *     from the tensor's global amax, the 16x16 random Hadamard transform
 *     on both operands of the wgrad GEMM only, stochastic rounding of
 *     gradients in the cast ("hardware-accelerated using native GPU
 *     instructions");
 *   MXFP4: the OCP Microscaling Formats specification v1.0: E2M1 values,
 *     an E8M0 scale per 32, the scale from the block's own amax (no
 *     per-tensor pass).
 */
#include <math.h>

#include "cvc/cvc_model.h"
#include "proj_internal.h"

double proj_lowp_share(const cvc_proj_scenario *sc)
{
	double hp = sc->bf16_layers_first + sc->bf16_layers_last;

	if (!proj_lowp_dtype(sc->dtype))
		return 0;
	return sc->layers > 0 && hp > 0 ? fmax(0, 1 - hp / sc->layers) : 1;
}

/*
 * Megatron-Core's --fp8-param-gather (NeMo's and Megatron-Bridge's fp8
 * precision recipes: docs/SCENARIOS.md) builds the layers' weights as fp8
 * tensors: the distributed optimizer keeps the fp32 master shard and
 * gathers the updated weights in fp8, and no 16-bit copy is held.  It
 * needs the distributed optimizer or FSDP (zero >= 1) and Megatron-Core.
 */
int proj_fp8_params(const cvc_proj_scenario *sc)
{
	return sc->fp8_param_gather > 0 && sc->dtype == CVC_PROJ_FP8 &&
	       sc->framework == CVC_PROJ_FW_MEGATRON && sc->zero >= 1 && proj_lowp_share(sc) > 0;
}

/* Bytes of one quantized element with its block scale(s). */
static double elem_bytes(int dtype, int recipe)
{
	if (dtype == CVC_PROJ_NVFP4)
		return 0.5 + 1.0 / 16;  /* E2M1 + an E4M3 scale per 16 */
	if (dtype == CVC_PROJ_MXFP4)
		return 0.5 + 1.0 / 32;  /* E2M1 + an E8M0 scale per 32 */
	if (recipe == CVC_PROJ_FP8_MXFP8)
		return 1 + 1.0 / 32;    /* E4M3 + an E8M0 scale per 32 */
	if (recipe == CVC_PROJ_FP8_BLOCKWISE)
		return 1 + 4.0 / 128;   /* E4M3 + an fp32 scale per 1x128 */
	return 1;                       /* one fp32 scale per tensor */
}

/* The same for a weight (2D block scales where the recipe has them). */
static double weight_elem_bytes(int dtype, int recipe)
{
	if (dtype == CVC_PROJ_NVFP4)
		return 0.5 + 1.0 / 256; /* an E4M3 scale per 16x16 tile */
	if (dtype == CVC_PROJ_FP8 && recipe == CVC_PROJ_FP8_BLOCKWISE)
		return 1 + 4.0 / 16384; /* an fp32 scale per 128x128 block */
	return elem_bytes(dtype, recipe);
}

void proj_lowp_cast(const struct proj_shape *x, struct proj_lowp *c)
{
	int dt = x->dtype, rc = x->fp8_recipe;
	double e = elem_bytes(dt, rc), w = weight_elem_bytes(dt, rc);

	c->amax = c->wamax = 0;
	/* every cast reads the 16-bit tensor once and writes the two layouts
	 * its GEMMs read (rowwise for fprop / dgrad, columnwise for wgrad) */
	c->cast = 2 + 2 * e;
	c->wcast = 2 + 2 * w;
	/* a per-tensor scale from this tensor's amax: one more read before
	 * the cast (fp8 current scaling, NVFP4's global scale; for NVFP4 the
	 * same pass gives the amax of the Hadamard-transformed copy) */
	if ((dt == CVC_PROJ_FP8 && rc == CVC_PROJ_FP8_CURRENT) || dt == CVC_PROJ_NVFP4) {
		c->amax = 2;
		c->wamax = 2;
	}
	/* GEMM inputs kept for backward, and the cached weight in both
	 * layouts */
	c->saved = e;
	c->wcache = 2 * w;
	/* nobody measured these GEMMs against bf16 in one harness: MXFP4 and
	 * fp8 with 1x128 / 128x128 block scales (ceiling.c) */
	c->unmeasured = dt == CVC_PROJ_MXFP4 || (dt == CVC_PROJ_FP8 && rc == CVC_PROJ_FP8_BLOCKWISE);
	/* MXFP8's GEMMs read an E8M0 scale per 32 elements: measured 5% slower
	 * than per-tensor fp8's in one harness (cvc_model_mxfp8_factor()) */
	c->block_scaled = dt == CVC_PROJ_FP8 && rc == CVC_PROJ_FP8_MXFP8;
}

/*
 * Elements of the FFN's GEMM inputs that no norm makes, per micro-batch,
 * on a Megatron-Core stack: its MLP and TEGroupedMLP run the activation as
 * a 16-bit kernel of their own (bias_activation_fusion; use_te_activation_
 * func and the TE op fuser off, as in Megatron-Bridge's resolved
 * performance configs, scripts/performance/dryrun_configs/ @a9497c6b) and
 * Transformer Engine's Linear and GroupedLinear quantize their input in a
 * kernel of their own (megatron/core/transformer/mlp.py, moe/experts.py,
 * moe/shared_experts.py).  Dense: the down projection's input.  MoE: the
 * routed experts' inputs (the permuted tokens, or each token once before
 * an fp8 dispatch) and their down projection's, the shared experts' two
 * (the pre-MLP norm is a kernel of its own, shared with the router).
 * torchtitan's Float8 casts inside the compiled graph: none there.
 */
static double ffn_inputs_cast_apart(const struct proj_shape *x)
{
	double routed = x->Tm * x->imb, e;

	if (!x->moe)
		return x->T * x->f / x->t;
	/* the fused grouped MLP quantizes the down projection's input in the
	 * up projection's epilogue */
	e = (x->disp8 ? x->Te : routed) * x->h + (x->fgm ? 0 : routed * x->f / x->et);
	if (x->fs > 0)
		e += x->T * (x->h + x->fs / x->t);
	return e;
}

/* Low-precision casts of a layer (per element, elem_bytes() above):
 * forward the input of the output projection (the attention output, a
 * Mamba mixer's gated norm output) and the FFN's GEMM inputs no norm
 * makes (below), backward the gradient of every GEMM output with its
 * transpose; the inputs a norm makes are cast inside it. */
void proj_lowp_cast_ops(struct proj_sink *k, const struct proj_shape *x, double cf, double cb,
			double *mf, double *mb)
{
	struct proj_lowp c;
	double fwd = 0, outs = 0;

	proj_lowp_cast(x, &c);
	if (x->mixer == PROJ_MIX_MAMBA) {
		fwd = x->T * x->di / x->t;
		outs = (2 * x->di + 2 * x->mg * x->mn + x->mh) / x->t + x->h;
	} else if (x->mixer != PROJ_MIX_NONE) {
		fwd = x->T * x->a * x->dv / x->t;
		outs = (x->mla ? x->rq + x->a / x->t * x->dqk + x->rkv + x->dr +
					 x->a / x->t * (x->dh + x->dv)
			       : x->qkv / x->t) +
		       x->h;
	}
	if (!x->noffn) {
		/* the up projection's output gradient: with the fused grouped MLP
		 * quantized in the down projection's dgrad epilogue */
		if (!x->fgm)
			outs = outs + (x->gated ? 2 : 1) * x->Tm * x->imb / x->T * x->f /
				      (x->moe ? x->et : x->t);
		outs = outs + x->h;
		outs = outs + (x->fs > 0 ? ((x->gated ? 2 : 1) * x->fs / x->t + x->h) : 0);
	}
	if (x->framework == CVC_PROJ_FW_MEGATRON && !x->noffn)
		fwd += ffn_inputs_cast_apart(x);
	if (fwd > 0)
		*mf += proj_op_mem(k, CVC_MODEL_MEM_ELEMENTWISE, c.cast * fwd, cf, 0);
	*mb += proj_op_mem(k, CVC_MODEL_MEM_ELEMENTWISE, c.cast * x->T * outs, cb, 0);
	if (c.amax > 0) { /* the per-tensor amax, a pass of its own */
		if (fwd > 0)
			*mf += proj_op_mem(k, CVC_MODEL_MEM_REDUCTION, c.amax * fwd, cf, 0);
		*mb += proj_op_mem(k, CVC_MODEL_MEM_REDUCTION, c.amax * x->T * outs, cb, 0);
	}
}
