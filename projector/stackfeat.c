/*
 * stackfeat.c - what two features of Megatron-Core's 2026 stack need
 * before a scenario may turn them on: CUDA graphs over the whole forward
 * and backward (cuda_graphs 2, --cuda-graph-impl full_iteration) and the
 * routed experts' fused grouped MLP (fused_grouped_mlp).  Their pricing
 * lives where the work is priced (evaluate.c, host.c, moe.c, project.c,
 * lowprec.c); the GPU's own condition for the fused MLP (block-scaled
 * tensor cores) is checked where the GPU is known (evaluate.c).
 */
#include "proj_internal.h"

/*
 * Why a scenario's cuda_graphs or fused_grouped_mlp cannot run as given;
 * NULL when they can (or are off).
 *
 * Full-iteration graphs capture every launch of the micro-batches, so
 * nothing in them may wait on the host: NaN checks off, and a dropless MoE
 * layer's token counts never copied to the host.  Megatron-Core reaches the
 * latter only with HybridEP dispatching into buffers sized ahead by
 * --moe-expert-rank-capacity-factor, with --moe-paged-stash and the
 * Transformer Engine op fuser ("With paged stash, expert dispatch shapes
 * become static ... which allows full-iteration CUDA graphs to be used on
 * MoE models as well"; NVIDIA/Megatron-LM docs/user-guide/features/
 * cuda_graph.md @145c047d, paged_stash.md @e2c4d59c), or with token drop
 * padded to capacity, whose shapes are static anyway.
 *
 * The fused grouped MLP is Transformer Engine's op
 * (transformer_engine/pytorch/ops/fused/grouped_mlp.py @011829b6: "MXFP8
 * uses CuTe DSL grouped-GEMM kernels via the cuDNN front-end"), which it
 * fuses only for the block-scaled recipes (fuse_grouped_mlp_ops: mxfp8 or
 * nvfp4) and for the activations it has kernels for (SwiGLU, and squared
 * ReLU in later releases); Megatron-Core takes it only with expert tensor
 * parallelism 1 and without the fine-grained offloading of expert_fc1 or
 * moe_act, whose tensors the fused op never makes
 * (TEGroupedMLP._is_fused_impl_supported(), Megatron-LM PR #4269 and
 * #5178).
 */
const char *proj_stack_reason(const cvc_proj_scenario *sc)
{
	int moe = sc->experts > 1;

	if (sc->cuda_graphs < 0 || sc->cuda_graphs > 2)
		return "cuda_graphs: expected false, true (the layers) or full_iteration";
	if (sc->cuda_graphs == 2) {
		if (sc->framework != CVC_PROJ_FW_MEGATRON)
			return "cuda_graphs full_iteration is Megatron-Core's (framework megatron)";
		if (moe && !sc->moe_token_drop &&
		    (sc->ep < 2 || sc->ep_dispatcher != CVC_PROJ_DISPATCH_HYBRIDEP))
			return "cuda_graphs full_iteration with dropless experts needs "
			       "ep_dispatcher hybridep over ep > 1 (Megatron-Core's static, "
			       "capacity-sized expert buffers) or moe_token_drop";
	}
	if (!sc->fused_grouped_mlp)
		return NULL;
	if (!moe)
		return "fused_grouped_mlp needs experts";
	if (sc->framework != CVC_PROJ_FW_MEGATRON)
		return "fused_grouped_mlp is Megatron-Core's with Transformer Engine (framework "
		       "megatron)";
	if (!(sc->dtype == CVC_PROJ_NVFP4 ||
	      (sc->dtype == CVC_PROJ_FP8 && sc->fp8_recipe == CVC_PROJ_FP8_MXFP8)))
		return "fused_grouped_mlp needs dtype nvfp4, or fp8 with fp8_recipe mxfp8 "
		       "(Transformer Engine fuses only the block-scaled recipes)";
	if (sc->ffn_type != CVC_PROJ_FFN_SWIGLU && sc->ffn_type != CVC_PROJ_FFN_RELU2)
		return "fused_grouped_mlp fuses a swiglu or relu2 activation only";
	if ((sc->etp > 0 ? sc->etp : sc->tp) > 1) /* etp 0: tp's, Megatron-Core's default */
		return "fused_grouped_mlp needs etp 1 (Megatron-Core refuses expert tensor "
		       "parallelism with it)";
	{
		int of = 0;
		char bad[80];

		if (!proj_offload_modules(sc->offload_modules, &of, bad, sizeof bad) &&
		    (of & (PROJ_OF_FC1 | PROJ_OF_ACT)))
			return "fused_grouped_mlp: offload_modules expert_fc1 and moe_act name "
			       "tensors the fused MLP does not make (fused_group_mlp does)";
	}
	return NULL;
}
