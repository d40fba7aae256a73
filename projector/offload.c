/*
 * offload.c - activation offloading to the host (cpu_offload_layers): what
 * Megatron-Core refuses beside it and the time the copies cost a step.
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

void proj_offload_apply(const cvc_proj_scenario *sc, const struct proj_pricer *p, double m,
			double layers, double fwd_s, double bwd_s, cvc_proj_result *r, double *copy_s)
{
	double n = sc->cpu_offload_layers, per, copy, win, f, b, wait;

	r->offload_s = 0;
	*copy_s = 0;
	if (!(n > 0) || !(layers > 0) || !(r->mem_offload_gb > 0))
		return;
	if (!(p->host_bw_gbps > 0))
		return; /* proj_offload_warn() says so */
	per = r->mem_offload_gb * 1e9 / n; /* one layer's activations, one micro-batch */
	copy = per / (p->host_bw_gbps * 1e9 * HOST_COPY_EFF);
	win = fmax(1, floor(layers / n)); /* the layers each copy runs beside */
	f = win * fwd_s / layers, b = win * bwd_s / layers;
	wait = m * n * (fmax(0, copy - f) + fmax(0, copy - b));
	/* the copies the wait moves with, second for second */
	*copy_s = m * n * copy * ((copy > f) + (copy > b));
	r->offload_s = wait;
	r->compute_s += wait;
	r->step_s += wait;
}

void proj_offload_warn(const cvc_proj_scenario *sc, const struct proj_pricer *p,
		       cvc_proj_result *r)
{
	char item[160];

	if (!(sc->cpu_offload_layers > 0) || !(r->mem_offload_gb > 0) || p->host_bw_gbps > 0)
		return;
	snprintf(item, sizeof item,
		 "cpu_offload_layers: the copies to the host not priced (the catalog has no host "
		 "link figure for %s)",
		 p->gpu);
	proj_warn_add(r, item);
}
