/*
 * test_moegaps.c - the figures docs/MODELS.md's known gaps on MoE layers
 * quote, recomputed: what cvc gives Qwen3-30B-A3B on 8 B200 (micro-batch 4,
 * EP 8, 4096 tokens) on the alltoall path and on HybridEP with CUDA graphs,
 * in bf16 and MXFP8, and DeepSeek-V3 at PP 16 / EP 8 on 256 B200 in both,
 * against what the runs that name their settings measured.  These hold a
 * gap open, not a bar met: a change to the pricing
 * that moves them fails here, so the gap's text moves with it.
 */
#include <math.h>
#include <string.h>

#include <criterion/criterion.h>

#include "cvc/cvc_project.h"
#include "testutil.h"

struct runs {
	int n;
	double tps[8];
	int dtype[8], disp[8];
};

static int keep(void *user, const cvc_proj_scenario *sc, const cvc_proj_result *r)
{
	struct runs *g = user;

	cr_assert(r->valid, "%s", r->reason);
	cr_assert_lt(g->n, 8);
	g->tps[g->n] = r->tokens_per_s_per_gpu;
	g->dtype[g->n] = sc->dtype;
	g->disp[g->n++] = sc->ep_dispatcher;
	return 0;
}

/* The projection of dtype and dispatcher among g's. */
static double tps_of(const struct runs *g, int dtype, int disp)
{
	for (int i = 0; i < g->n; i++)
		if (g->dtype[i] == dtype && g->disp[i] == disp)
			return g->tps[i];
	cr_assert_fail("no scenario of dtype %d and dispatcher %d", dtype, disp);
	return NAN;
}

/*
 * Claim: at Qwen3-30B-A3B's shape cvc prices HybridEP (with Transformer
 * Engine's CUDA graphs over attention, router and dispatch preprocessing,
 * as the B200 MXFP8 preset of the 26.04.01 container runs it: Megatron-
 * Bridge issue #4439) 20-30% faster than the alltoall path and 15-30%
 * faster than the release's published run of that preset (27136 tokens/s
 * per GPU, blackwell-moe-runs.csv, the "documented reference" #4439 cites);
 * and it prices MXFP8 5-20% faster than bf16 on either path, where #4439
 * measured 562 against 552 TFLOP/s/GPU (+1.8%).
 * Setup: the four scenarios, spec-sheet models (no db).
 * Tolerance: the bands around the figures docs/MODELS.md quotes (HybridEP
 * +25% over alltoall, +22% over the published run, +34% and +32% before
 * the H100 shares at hidden 2048; MXFP8 +11% and +14%):
 * wide enough for a small change elsewhere, narrow enough that closing
 * either gap fails the test.
 */
Test(moegaps, qwen3_on_hybridep_and_mxfp8_at_b200)
{
	static const char yaml[] =
		"name: moegaps\n"
		"scenarios:\n"
		"  - model: {arch: qwen3-30b-a3b, seq: 4096}\n"
		"    training: {global_batch: 512, micro_batch: 4, dtype: [bf16, fp8], "
		"fp8_recipe: mxfp8, recompute: selective, distributed_optimizer: true}\n"
		"    parallelism: {tp: 1, pp: 1, ep: 8}\n"
		"    comm: {ep_dispatcher: alltoall}\n"
		"    hardware: {gpu: B200, gpus: 8}\n"
		"  - model: {arch: qwen3-30b-a3b, seq: 4096}\n"
		"    training: {global_batch: 512, micro_batch: 4, dtype: [bf16, fp8], "
		"fp8_recipe: mxfp8, recompute: selective, distributed_optimizer: true, "
		"cuda_graphs: true}\n"
		"    parallelism: {tp: 1, pp: 1, ep: 8}\n"
		"    comm: {ep_dispatcher: hybridep}\n"
		"    hardware: {gpu: B200, gpus: 8}\n";
	struct runs g;
	double a2a_bf16, a2a_mx, hy_bf16, hy_mx, published = 27136;

	memset(&g, 0, sizeof g);
	tu_study_run("moegaps.yaml", yaml, CVC_PROJ_NO_MARGINAL, keep, &g);
	cr_assert_eq(g.n, 4);
	a2a_bf16 = tps_of(&g, CVC_PROJ_BF16, CVC_PROJ_DISPATCH_ALLTOALL);
	a2a_mx = tps_of(&g, CVC_PROJ_FP8, CVC_PROJ_DISPATCH_ALLTOALL);
	hy_bf16 = tps_of(&g, CVC_PROJ_BF16, CVC_PROJ_DISPATCH_HYBRIDEP);
	hy_mx = tps_of(&g, CVC_PROJ_FP8, CVC_PROJ_DISPATCH_HYBRIDEP);
	cr_log_info("alltoall bf16 %.0f mxfp8 %.0f; hybridep bf16 %.0f mxfp8 %.0f tokens/s/GPU",
		    a2a_bf16, a2a_mx, hy_bf16, hy_mx);

	cr_expect(hy_mx / a2a_mx > 1.20 && hy_mx / a2a_mx < 1.30, "hybridep / alltoall %.3f",
		  hy_mx / a2a_mx);
	cr_expect(hy_mx / published > 1.15 && hy_mx / published < 1.30,
		  "hybridep / the published run %.3f", hy_mx / published);
	cr_expect(a2a_mx / a2a_bf16 > 1.05 && a2a_mx / a2a_bf16 < 1.20, "mxfp8 / bf16 %.3f",
		  a2a_mx / a2a_bf16);
	cr_expect(hy_mx / hy_bf16 > 1.05 && hy_mx / hy_bf16 < 1.20, "mxfp8 / bf16 %.3f",
		  hy_mx / hy_bf16);
}

/*
 * Claim (held out: nothing was set from these runs): at Qwen3-30B-A3B's
 * shape, swapping DeepEP for HybridEP gains what NeMo Automodel measured
 * on H100 (docs/deepep_vs_hybridep_benchmark.md @18007663, section 4: the
 * qwen3_moe_30b_te_deepep recipe, 4096 tokens, activation checkpointing,
 * forced-balanced gate, only the dispatcher changed): one node, EP 8,
 * global batch 128, local 4: 5.366 -> 5.085 s a step, +5.5%; two nodes,
 * EP 16, global batch 256, local 2: 5.906 -> 5.472 s, +7.9%.  Setup: that
 * layout as a PyTorch FSDP2 stack (framework pytorch, zero 3, full
 * recompute).  Tolerance: 2.5 points of gain.  Before the H100 shares at
 * hidden 2048 (models/epcomm.c shape_factor) cvc gave +8.7% and +12.2%.
 */
Test(moegaps, hybridep_over_deepep_gain_at_qwen3_shape_on_h100)
{
	static const char yaml[] =
		"name: hyb\n"
		"scenarios:\n"
		"  - model: {arch: qwen3-30b-a3b, seq: 4096}\n"
		"    training: {global_batch: 128, micro_batch: 4, dtype: bf16, recompute: full,\n"
		"               framework: pytorch, zero: 3}\n"
		"    parallelism: {tp: 1, pp: 1, ep: 8}\n"
		"    comm: {ep_dispatcher: [deepep, hybridep]}\n"
		"    hardware: {gpu: H100-SXM, gpus: 8}\n"
		"  - model: {arch: qwen3-30b-a3b, seq: 4096}\n"
		"    training: {global_batch: 256, micro_batch: 2, dtype: bf16, recompute: full,\n"
		"               framework: pytorch, zero: 3}\n"
		"    parallelism: {tp: 1, pp: 1, ep: 16}\n"
		"    comm: {ep_dispatcher: [deepep, hybridep]}\n"
		"    hardware: {gpu: H100-SXM, gpus: 16}\n";
	static const double measured[2] = {5.366 / 5.085, 5.906 / 5.472};
	struct runs g;

	memset(&g, 0, sizeof g);
	tu_study_run("hyb.yaml", yaml, CVC_PROJ_NO_MARGINAL, keep, &g);
	cr_assert_eq(g.n, 4);
	for (int i = 0; i < 2; i++) {
		double gain = g.tps[2 * i + 1] / g.tps[2 * i];

		cr_assert_eq(g.disp[2 * i], CVC_PROJ_DISPATCH_DEEPEP);
		cr_assert_eq(g.disp[2 * i + 1], CVC_PROJ_DISPATCH_HYBRIDEP);
		cr_log_info("EP %d: HybridEP over DeepEP %+.1f%%, measured %+.1f%%", 8 << i,
			    100 * (gain - 1), 100 * (measured[i] - 1));
		cr_expect_lt(fabs(gain - measured[i]), 0.025, "EP %d: %+.1f%% against %+.1f%%",
			     8 << i, 100 * (gain - 1), 100 * (measured[i] - 1));
	}
}

/*
 * Claim: DeepSeek-V3 on 256 B200 at PP 16 / EP 8 is priced fast in bf16
 * as well as in MXFP8, so the gap of that layout's published MXFP8 rows
 * (docs/MODELS.md, Known gaps, "Also open: DeepSeek-V3 at PP 16 on B200")
 * is not MXFP8's pricing.  Measured: Megatron-Bridge PR #1869 (2026-01-06,
 * "Update Deepseek V3 B200 recipe"): "25.11 tracker has 532 and 557 TFLOPs
 * for BF16 and MXFP8 respectively".  557 is the 25.11 row of
 * blackwell-moe-runs.csv (2139 tokens/s/GPU), so both ran the 25.11
 * preset (scripts/performance/configs/deepseek/workload_base_configs.py
 * @d19cb73c: PP 16, EP 8, ETP 1, global batch 2048, recompute mla_up_proj,
 * no 1F1B overlap, no flex dispatcher) with the multi-token prediction
 * layer; 532 TFLOP/s is 2046 tokens/s/GPU by Megatron-LM's causal count,
 * the one that gives the MXFP8 row's 2139 from its 557.  MXFP8 over BF16:
 * 1.047.  Setup: that preset as validate reads it, spec-sheet models.
 * Tolerance: a gap held open, not a bar met: bf16 cvc 2609, +27.5% (band
 * +15..+40%); MXFP8 over bf16 cvc 1.144 (band 1.08-1.22).  A change that
 * closes either fails here, so the text moves with it.
 */
Test(moegaps, deepseek_v3_pp16_on_b200_fast_in_bf16_too)
{
	static const char yaml[] =
		"name: dsv3pp16\n"
		"scenarios:\n"
		"  - model: {arch: deepseek-v3, seq: 4096}\n"
		"    training: {global_batch: 2048, micro_batch: 1, dtype: [bf16, fp8], "
		"fp8_recipe: mxfp8, recompute: selective, recompute_modules: mla_up_proj, "
		"distributed_optimizer: true}\n"
		"    parallelism: {tp: 1, pp: 16, ep: 8, etp: 1}\n"
		"    comm: {ep_dispatcher: alltoall}\n"
		"    hardware: {gpu: B200, gpus: 256}\n";
	double bf16, mx, measured = 2046;
	struct runs g;

	memset(&g, 0, sizeof g);
	tu_study_run("dsv3pp16.yaml", yaml, CVC_PROJ_NO_MARGINAL, keep, &g);
	cr_assert_eq(g.n, 2);
	bf16 = tps_of(&g, CVC_PROJ_BF16, CVC_PROJ_DISPATCH_ALLTOALL);
	mx = tps_of(&g, CVC_PROJ_FP8, CVC_PROJ_DISPATCH_ALLTOALL);
	cr_log_info("DeepSeek-V3 PP 16 / EP 8 on B200: bf16 %.0f tokens/s/GPU (%+.1f%% against %.0f), "
		    "MXFP8 / bf16 %.3f (measured 1.047)",
		    bf16, 100 * (bf16 / measured - 1), measured, mx / bf16);
	cr_expect(bf16 / measured > 1.15 && bf16 / measured < 1.40, "bf16: %+.1f%%",
		  100 * (bf16 / measured - 1));
	cr_expect(mx / bf16 > 1.08 && mx / bf16 < 1.22, "MXFP8 / bf16 %.3f", mx / bf16);
}
