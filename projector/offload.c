/*
 * offload.c - activation offloading to the host (cpu_offload_layers, and
 * fine-grained: offload_modules): what Megatron-Core refuses beside it and
 * the time the copies cost a step.
 * Megatron-Core offloads through Transformer Engine's
 * AsyncDoubleBufferGroupOffloadHandler (transformer_engine/pytorch/
 * cpu_offload_v1.py @bd06fb2c): the first N of a stage's L layers
 * each copy their saved activations to pinned host memory on a side
 * stream, one layer's copy at a time, and the compute stream waits for
 * copy i at the end of layer (L / N)(i + 1) - 1 ("layer_window_map: make
 * offloading load balance across computation"), where copy i + 1 starts.
 * So each copy runs beside L / N layers' forward, and each reload beside
 * as many layers' backward (the same windows, walked down).  Per offloaded
 * layer and micro-batch the GPU waits max(0, copy - (L / N) forward) and
 * max(0, copy - (L / N) backward).  The memory they free is memory.c's
 * (mem_offload_gb).
 */
#include <math.h>
#include <stdio.h>

#include "proj_internal.h"

/*
 * The share of a host link's datasheet bandwidth a copy engine reaches:
 * 346 GB/s host to device over GH200's NVLink-C2C (450 GB/s each way) in
 * nvbandwidth's host_to_device_memcpy_ce (NVIDIA/nvbandwidth issue #23,
 * 2024-08-23), 0.769.  Over PCIe Gen5 x16 (64 GB/s each way) the same
 * tool's SM copies on an H100 host measured 35.2 to the GPU and 52.8 back
 * (issue #24): 0.55 and 0.82 around it; no copy-engine figure of PCIe is
 * in hand, so one share serves both links.
 */
#define HOST_COPY_EFF (346.0 / 450.0)

/* The copies' relative error: the PCIe shares around it, 0.55 (ln 0.769 /
 * 0.55 = 0.335), taken as a 90% bound: 0.335 / 1.645. */
#define HOST_COPY_SIGMA (0.335 / 1.645)

double proj_offload_sigma(void)
{
	return HOST_COPY_SIGMA;
}

/*
 * What Megatron-Core refuses with CPU offloading (TransformerConfig.
 * __post_init__: "CPU offloading can be done only for layers less than
 * num_layers", "no support for Pipeline parallelism with CPU offloading",
 * "CPU offloading does not work when activation recomputation is
 * enabled"; Megatron-Bridge's docs/training/cpu-offloading.md @b00deab6:
 * "CUDA graphs not supported with CPU offloading"); NULL when valid.
 */
const char *proj_offload_reason(const cvc_proj_scenario *sc)
{
	double n = sc->cpu_offload_layers;
	int of = 0;
	char bad[80];

	if (proj_offload_modules(sc->offload_modules, &of, bad, sizeof bad))
		return "offload_modules: expected attn_norm, qkv_linear, core_attn, attn_proj, "
		       "mlp_norm, expert_fc1, moe_act or fused_group_mlp";
	if (of) {
		/* Megatron-Core's fine-grained offloading (TransformerConfig.
		 * __post_init__: "fine_grained_activation_offloading cannot be
		 * enabled with cpu_offloading", "attn_proj cannot be set to
		 * offload_modules alone without core_attn"; its user guide,
		 * "Fine-Grained Activation Offloading": fused_group_mlp "offloads
		 * the whole fused grouped MLP, so it cannot be combined with
		 * expert_fc1 or moe_act"); Megatron-Bridge refuses the MoE-only
		 * modules on a dense model ("A MoE-only offload module requires a
		 * MoE model") */
		if (n > 0)
			return "give offload_modules or cpu_offload_layers, not both (Megatron-Core "
			       "refuses both)";
		if ((of & PROJ_OF_PROJ) && !(of & PROJ_OF_CORE))
			return "offload_modules: attn_proj needs core_attn (Megatron-Core refuses it "
			       "alone)";
		if ((of & PROJ_OF_FUSED) && (of & (PROJ_OF_FC1 | PROJ_OF_ACT)))
			return "offload_modules: fused_group_mlp offloads the whole fused MLP, not "
			       "beside expert_fc1 or moe_act";
		if ((of & (PROJ_OF_FC1 | PROJ_OF_ACT | PROJ_OF_FUSED)) && !(sc->experts > 1))
			return "offload_modules: expert_fc1, moe_act and fused_group_mlp need experts";
		/* the 3D grid is AxoNN's, whose layers keep their own shards
		 * (tp3d.c), not Megatron-Core's modules */
		if (proj_is_3d(sc))
			return "offload_modules: Megatron-Core's, not beside a 3D tensor-parallel grid";
	}

	if (n < 0 || n != floor(n) || (n > 0 && n >= sc->layers))
		return "cpu_offload_layers must be a whole number below layers";
	if (!(n > 0))
		return NULL;
	if (sc->pp > 1)
		return "cpu_offload_layers needs pp 1 (Megatron-Core offloads no pipeline stage)";
	if (sc->recompute != CVC_PROJ_RECOMP_NONE)
		return "cpu_offload_layers needs recompute none (Megatron-Core refuses both)";
	if (sc->cuda_graphs)
		return "cpu_offload_layers needs cuda_graphs off (Megatron-Core refuses both)";
	return NULL;
}

/*
 * Both offloadings wait alike: `copies` copies of `bytes` each, each beside
 * f seconds of forward and b of backward, wait max(0, copy - f) + max(0,
 * copy - b) apiece, at the host link's rate (none where the catalog has no
 * figure: proj_offload_warn() says so).  CPU offloading: one copy per
 * offloaded layer and micro-batch beside its window of L / N layers.
 * Fine-grained offloading (Megatron-Core's fine_grained_activation_offload.py
 * PipelineOffloadManager: a device-to-host stream and a host-to-device
 * stream beside the compute; each module's input is copied out after its
 * forward and reloaded ahead of its backward): with no cap on the copies
 * in flight (fine_grained_offloading_max_inflight_offloads, None by
 * default), each stream runs a micro-batch's copies back to back while its
 * forward or backward runs: one copy per micro-batch beside the stage's
 * whole forward and backward.
 */
void proj_offload_apply(const cvc_proj_scenario *sc, const struct proj_pricer *p,
			const struct proj_shape *x, const double *nk, double m,
			double layers, double fwd_s, double bwd_s, cvc_proj_result *r, double *copy_s)
{
	double n = sc->cpu_offload_layers, bytes, copies, f, b, copy, wait;

	r->offload_s = 0;
	*copy_s = 0;
	if (!(r->mem_offload_gb > 0) || !(p->host_bw_gbps > 0))
		return;
	if (x->ofm) {
		bytes = proj_offload_mb_bytes(sc, x, nk), copies = m, f = fwd_s, b = bwd_s;
	} else if (n > 0 && layers > 0) {
		double win = fmax(1, floor(layers / n)); /* the layers each copy runs beside */

		bytes = r->mem_offload_gb * 1e9 / n; /* one layer's activations, one micro-batch */
		copies = m * n, f = win * fwd_s / layers, b = win * bwd_s / layers;
	} else {
		return;
	}
	copy = bytes / (p->host_bw_gbps * 1e9 * HOST_COPY_EFF);
	wait = copies * (fmax(0, copy - f) + fmax(0, copy - b));
	/* the copies the wait moves with, second for second */
	*copy_s = copies * copy * ((copy > f) + (copy > b));
	r->offload_s = wait;
	r->compute_s += wait;
	r->step_s += wait;
}

void proj_offload_warn(const cvc_proj_scenario *sc, const struct proj_pricer *p,
		       cvc_proj_result *r)
{
	char item[160];

	if (!(r->mem_offload_gb > 0) || p->host_bw_gbps > 0)
		return;
	snprintf(item, sizeof item,
		 "%s: the copies to the host not priced (the catalog has no host link figure for %s)",
		 sc->cpu_offload_layers > 0 ? "cpu_offload_layers" : "offload_modules", p->gpu);
	proj_warn_add(r, item);
}
