/*
 * host.c - the host's side of a step: what its launches cost it, and
 * whether the GPU can run ahead of it.  An eager step (PyTorch, Megatron-
 * Core's Python) spends host time on every kernel it launches; the GPU
 * runs a kernel only once it is launched, so a GPU that is faster than
 * the host waits for it (docs/MODELS.md "Host time per launch").
 */
#include "cvc/cvc_model.h"
#include "proj_internal.h"

/*
 * The kernels an eager step launches per operator launch cvc prices:
 * DeepSeek-V3's chunk pair (../shared/traces/deepseek-train-h800-ep64: 4
 * MoE layers forward and backward) launches 963 kernels where cvc prices
 * 296 launches for the same work (moerun.host_time_of_the_chunk_pair
 * recomputes both).  cvc prices an operator as one kernel; the stacks
 * launch casts, allocations' memsets, norms' and routers' pieces, DeepEP's
 * notify kernels around them.
 */
#define LAUNCHES_PER_OP (963.0 / 296.0)

double proj_host_us(const cvc_proj_scenario *sc)
{
	double us = sc->host_launch_us >= 0 ? sc->host_launch_us : cvc_model_host_launch_us();

	return us * LAUNCHES_PER_OP;
}

double proj_host_sigma(const cvc_proj_scenario *sc)
{
	return sc->host_launch_us >= 0 ? 0 : cvc_model_host_launch_sigma();
}

double proj_host_launches_per_op(void)
{
	return LAUNCHES_PER_OP;
}

/*
 * Whether a micro-batch holds a host synchronisation: every dropless MoE
 * layer copies its token counts to the host before its dispatch (Megatron-
 * Core's MoEAlltoAllTokenDispatcher: cuda_sync_point "before_ep_alltoall",
 * or "before_finish" without EP; megatron/core/transformer/moe/
 * token_dispatcher.py @bed33f89; the flex dispatcher's DeepEP and HybridEP
 * the same: "the device-host sync in the MoE model (its purpose is to get
 * the tokens per expert information)", Megatron-LM docs/discussions/
 * deepseek-v3-gb200-optimization @b6bf017a, sec. 3.1).  Token drop padded
 * to capacity has static shapes and none ("drop_and_pad": no sync); so does
 * a graph of the whole forward and backward, whose experts take HybridEP's
 * capacity-sized buffers ("Sync-free", NVIDIA/Megatron-LM docs/user-guide/
 * features/paged_stash.md @e2c4d59c; stackfeat.c).
 */
int proj_host_syncs(const cvc_proj_scenario *sc)
{
	return sc->experts > 1 && !sc->moe_token_drop && sc->cuda_graphs != 2;
}
