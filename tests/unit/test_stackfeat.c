/*
 * test_stackfeat.c - two features of Megatron-Core's 2026 stack: CUDA
 * graphs over the whole forward and backward (cuda_graphs: full_iteration)
 * and the routed experts' fused grouped MLP (fused_grouped_mlp): what each
 * removes from the step, what Megatron-Core and Transformer Engine refuse,
 * and validate reading them from a row (projector/stackfeat.c, evaluate.c,
 * host.c, moe.c, project.c, lowprec.c, vdefault.c, vfield.c).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "cvc/cvc_project.h"
#include "testutil.h"

/* Qwen3-30B-A3B on 8 GPUs of gpu at EP 8, dropless, with the training and
 * comm lines' extra fields; valid or not as the study gives it. */
static void qwen(const char *gpu, int mb, const char *training, const char *comm,
		 cvc_proj_result *r)
{
	char yaml[1024];

	snprintf(yaml, sizeof yaml,
		 "model: {arch: qwen3-30b-a3b, seq: 4096}\n"
		 "training: {global_batch: 512, micro_batch: %d, recompute: none, zero: 1%s%s}\n"
		 "parallelism: {tp: 1, pp: 1, ep: 8, etp: 1}\nhardware: {gpu: %s, gpus: 8}\n"
		 "comm: {ep_dispatcher: %s}\n",
		 mb, training[0] ? ", " : "", training, gpu, comm);
	cr_assert_eq(tu_proj_first(yaml, NULL, r), 1, "%s", yaml);
}

/*
 * Claim: a graph of the whole forward and backward leaves no kernel to
 * launch in them: no launch gap and no host wait.  Without graphs, at
 * micro-batch 1 on B200, the host sets the pace behind each MoE layer's
 * synchronisation; the layer graphs leave a dropless layer's routed experts
 * out, with their gaps.  Each step projects faster than the one before.
 */
Test(stackfeat, full_iteration_leaves_nothing_to_launch)
{
	cvc_proj_result none, layers, full;

	qwen("B200", 1, "dtype: fp8, fp8_recipe: mxfp8", "hybridep", &none);
	qwen("B200", 1, "dtype: fp8, fp8_recipe: mxfp8, cuda_graphs: true", "hybridep", &layers);
	qwen("B200", 1, "dtype: fp8, fp8_recipe: mxfp8, cuda_graphs: full_iteration", "hybridep",
	     &full);
	cr_assert(none.valid && layers.valid && full.valid, "%s / %s / %s", none.reason,
		  layers.reason, full.reason);
	cr_log_info("no graphs: gaps %.4f s, host wait %.4f s, %.0f tokens/s/GPU; layer graphs: "
		    "gaps %.4f s, host wait %.4f s, %.0f; full iteration: gaps %.4f s, host wait "
		    "%.4f s, %.0f",
		    none.gaps_s, none.host_s, none.tokens_per_s_per_gpu, layers.gaps_s,
		    layers.host_s, layers.tokens_per_s_per_gpu, full.gaps_s, full.host_s,
		    full.tokens_per_s_per_gpu);
	cr_expect_gt(none.host_s, 0, "the host sets the pace at micro-batch 1");
	cr_expect_gt(layers.gaps_s, 0);
	cr_expect_lt(layers.gaps_s, none.gaps_s);
	cr_expect_eq(full.gaps_s, 0);
	cr_expect_eq(full.host_s, 0);
	cr_expect_gt(layers.tokens_per_s_per_gpu, none.tokens_per_s_per_gpu);
	cr_expect_gt(full.tokens_per_s_per_gpu, layers.tokens_per_s_per_gpu);
}

/*
 * Claim: on a dense model the layer graphs still leave the end stages'
 * embedding, logits and loss their launch gaps; the whole-iteration graph
 * takes them too.
 */
Test(stackfeat, full_iteration_takes_the_end_stages)
{
	static const char fmt[] =
		"model: {arch: llama3-8b, seq: 8192}\n"
		"training: {global_batch: 128, micro_batch: 1, dtype: bf16, cuda_graphs: %s}\n"
		"parallelism: {tp: 1, pp: 1}\nhardware: {gpu: H100-SXM, gpus: 8}\n";
	cvc_proj_result r[2];

	tu_proj_pair(fmt, "true", "full_iteration", r);
	cr_log_info("gaps: layer graphs %.6f s, full iteration %.6f s", r[0].gaps_s, r[1].gaps_s);
	cr_expect_gt(r[0].gaps_s, 0);
	cr_expect_eq(r[1].gaps_s, 0);
	cr_expect_geq(r[1].tokens_per_s_per_gpu, r[0].tokens_per_s_per_gpu);
}

/*
 * Claim: a whole-iteration graph needs static shapes: a dropless MoE layout
 * on the alltoall dispatcher is refused, saying why; on HybridEP or with
 * token drop it runs; outside Megatron-Core it is refused.
 */
Test(stackfeat, full_iteration_needs_static_shapes)
{
	cvc_proj_result r;

	qwen("GB200", 4, "dtype: bf16, cuda_graphs: full_iteration", "alltoall", &r);
	cr_expect(!r.valid && strstr(r.reason, "needs ep_dispatcher hybridep"), "%s", r.reason);
	qwen("GB200", 4, "dtype: bf16, cuda_graphs: full_iteration, moe_token_drop: true",
	     "alltoall", &r);
	cr_expect(r.valid, "%s", r.reason);
	qwen("GB200", 4, "dtype: bf16, cuda_graphs: full_iteration", "hybridep", &r);
	cr_expect(r.valid, "%s", r.reason);
	qwen("GB200", 4, "dtype: bf16, cuda_graphs: full_iteration, framework: torchtitan",
	     "hybridep", &r);
	cr_expect(!r.valid && strstr(r.reason, "Megatron-Core's"), "%s", r.reason);
}

/*
 * Claim: the fused grouped MLP runs the same GEMMs (the model's FLOPs as
 * executed unchanged) with the routed experts' activation and two casts
 * folded into their epilogues: less compute, fewer launch gaps.
 */
Test(stackfeat, fused_mlp_keeps_the_gemms_and_drops_the_rest)
{
	cvc_proj_result plain, fused;

	qwen("GB200", 4, "dtype: fp8, fp8_recipe: mxfp8", "hybridep", &plain);
	qwen("GB200", 4, "dtype: fp8, fp8_recipe: mxfp8, fused_grouped_mlp: true", "hybridep",
	     &fused);
	cr_assert(plain.valid && fused.valid, "%s / %s", plain.reason, fused.reason);
	cr_log_info("compute %.4f -> %.4f s, gaps %.4f -> %.4f s, %.0f -> %.0f tokens/s/GPU",
		    plain.compute_s, fused.compute_s, plain.gaps_s, fused.gaps_s,
		    plain.tokens_per_s_per_gpu, fused.tokens_per_s_per_gpu);
	cr_expect_float_eq(fused.hw_flops, plain.hw_flops, 1e-12 * plain.hw_flops);
	cr_expect_lt(fused.compute_s, plain.compute_s);
	cr_expect_lt(fused.gaps_s, plain.gaps_s);
	cr_expect_gt(fused.tokens_per_s_per_gpu, plain.tokens_per_s_per_gpu);
	cr_expect_float_eq(fused.mem_gb, plain.mem_gb, 1e-12 * plain.mem_gb);
}

/*
 * Claim: the fused grouped MLP is refused where Transformer Engine has no
 * kernel for it or Megatron-Core does not take it, each saying why.
 */
Test(stackfeat, fused_mlp_refusals)
{
	static const struct {
		const char *gpu, *training, *why;
	} cases[] = {
		{"H100-SXM", "dtype: fp8, fp8_recipe: current", "dtype nvfp4, or fp8 with"},
		{"H100-SXM", "dtype: bf16", "dtype nvfp4, or fp8 with"},
		{"GB200", "dtype: fp8, fp8_recipe: current", "fp8_recipe mxfp8"},
		{"GB200", "dtype: fp8, fp8_recipe: mxfp8, offload_modules: moe_act",
		 "expert_fc1 and moe_act"},
		{"GB200", "dtype: fp8, fp8_recipe: mxfp8, framework: torchtitan", "framework megatron"},
	};
	cvc_proj_result r;
	char tr[256];

	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		snprintf(tr, sizeof tr, "%s, fused_grouped_mlp: true", cases[i].training);
		qwen(cases[i].gpu, 4, tr, "alltoall", &r);
		cr_expect(!r.valid && strstr(r.reason, cases[i].why), "%s / %s: %s", cases[i].gpu,
			  cases[i].training, r.valid ? "valid" : r.reason);
	}
	/* a GPU without block-scaled tensor cores in a format it runs; a dense
	 * model; an activation with no kernel; expert tensor parallelism */
	static const struct {
		const char *model, *par, *gpu, *why;
	} other[] = {
		{"arch: qwen3-30b-a3b, seq: 4096", "tp: 1, pp: 1, ep: 8, etp: 1", "H100-SXM",
		 "block-scaled"},
		{"arch: llama3-8b, seq: 8192", "tp: 1, pp: 1", "GB200", "needs experts"},
		{"arch: qwen3-30b-a3b, seq: 4096, ffn_type: geglu", "tp: 1, pp: 1, ep: 8, etp: 1",
		 "GB200", "swiglu or relu2"},
		{"arch: qwen3-30b-a3b, seq: 4096", "tp: 2, pp: 1, ep: 4, etp: 2", "GB200", "etp 1"},
	};
	char yaml[512];

	for (size_t i = 0; i < sizeof other / sizeof other[0]; i++) {
		snprintf(yaml, sizeof yaml,
			 "model: {%s}\ntraining: {global_batch: 512, micro_batch: 4, dtype: fp8, "
			 "fp8_recipe: mxfp8, fused_grouped_mlp: true}\nparallelism: {%s}\n"
			 "hardware: {gpu: %s, gpus: 8}\n",
			 other[i].model, other[i].par, other[i].gpu);
		cr_assert_eq(tu_proj_first(yaml, NULL, &r), 1, "%s", yaml);
		cr_expect(!r.valid && strstr(r.reason, other[i].why), "%s: %s", yaml,
			  r.valid ? "valid" : r.reason);
	}
}

/*
 * Claim: validate takes both from a row: full-iteration graphs from its text
 * or from a cuda_graph_impl cell (Megatron-Core's value), the layer graphs
 * from that cell's transformer_engine, the fused MLP from its text; each
 * said.
 */
Test(stackfeat, validate_reads_them)
{
	static const char text[] =
		"model,layers,hidden,heads,seq,tp,pp,ep,micro_batch,global_batch,gpus,gpu,dtype,"
		"ep_dispatcher,cuda_graph_impl,tokens_per_s_per_gpu,source,notes\n"
		"Qwen3-30B-A3B,,,,4096,1,1,8,4,512,8,GB200 (NVL72),mxfp8,hybridep,,40000,"
		"Megatron-LM,row-a with full-iteration CUDA graphs and the CuTe-DSL fused grouped "
		"MLP\n"
		"Qwen3-30B-A3B,,,,4096,1,1,8,4,512,8,GB200 (NVL72),mxfp8,hybridep,full_iteration,40000,"
		"Megatron-LM,row-b\n"
		"Qwen3-30B-A3B,,,,4096,1,1,8,4,512,8,GB200 (NVL72),mxfp8,hybridep,transformer_engine,"
		"30000,Megatron-LM,row-c\n";
	cvc_proj_validation v;
	char *out = tu_validate_text(text, NULL, &v, CVC_OK);
	char line[8192];

	cr_expect_eq(v.all.expressible, 3, "%d of 3 projected", v.all.expressible);
	cr_assert(tu_line_with(out, "row-a", line, sizeof line));
	cr_expect(strstr(line, "cuda_graphs=2 (the row's text says full-iteration graphs)"), "%s",
		  line);
	cr_expect(strstr(line, "fused_grouped_mlp=1 (the row's text says so)"), "%s", line);
	cr_assert(tu_line_with(out, "row-b", line, sizeof line));
	cr_expect(strstr(line, "cuda_graphs=2 ('full_iteration')"), "%s", line);
	cr_expect(!strstr(line, "fused_grouped_mlp="), "%s", line);
	cr_assert(tu_line_with(out, "row-c", line, sizeof line));
	cr_expect(strstr(line, "cuda_graphs=1 ('transformer_engine')"), "%s", line);
	free(out);
	cvc_proj_validation_release(&v);
}
