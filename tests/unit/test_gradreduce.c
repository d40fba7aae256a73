/*
 * test_gradreduce.c - the data-parallel gradients' dtype (grad_reduce_fp32):
 * one setting for the bytes the gradient buffer and the optimizer hold and
 * the bytes the data-parallel collectives move (projector/run.c, memory.c,
 * stepops.c).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <criterion/criterion.h>

#include "cvc/cvc_project.h"
#include "testutil.h"

#define LLAMA8B                                                                        \
	"model: {layers: 32, hidden: 4096, heads: 32, kv_heads: 8, ffn: 14336,\n"      \
	"        ffn_type: swiglu, vocab: 128256, seq: 8192, tie_embeddings: false}\n"

static void first(const char *training, const char *dtype_fw, cvc_proj_scenario *sc,
		  cvc_proj_result *r)
{
	char yaml[1024];

	snprintf(yaml, sizeof yaml,
		 LLAMA8B "training: {global_batch: 64, recompute: none, %s%s}\n"
			 "parallelism: {tp: 1, pp: 1}\nhardware: {gpu: H100-SXM, gpus: 8}\n",
		 training, dtype_fw);
	cr_assert_eq(tu_proj_first(yaml, sc, r), 1, "%s", yaml);
	cr_assert(r->valid, "%s", r->reason);
}

/* Claim: left unset, gradients are 16-bit unless the weights are fp32, as
 * NVIDIA's published performance recipes run them (Megatron-Bridge's and
 * NeMo's set grad_reduce_in_fp32 off), but under torchtitan, which ships
 * an fp32 reduce dtype; a value given, under either of Megatron's names,
 * is kept. */
Test(gradreduce, the_default_is_megatron_lms_rule)
{
	static const struct {
		const char *set;
		int want;
	} t[] = {
		{"dtype: bf16", 0},
		{"dtype: fp16", 0},
		{"dtype: fp8", 0},
		{"dtype: fp32", 1},
		{"dtype: bf16, framework: pytorch", 0},
		{"dtype: bf16, framework: torchtitan", 1},
		{"dtype: bf16, grad_reduce_in_fp32: false", 0},
		{"dtype: fp16, accumulate_allreduce_grads_in_fp32: true", 1},
	};

	for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
		cvc_proj_scenario sc;
		cvc_proj_result r;

		first("zero: 1, ", t[i].set, &sc, &r);
		cr_expect_eq(sc.grad_reduce_fp32, t[i].want, "%s: %d", t[i].set,
			     sc.grad_reduce_fp32);
	}
}

/*
 * Claim: the bytes a parameter holds are the Megatron Core guide's table
 * (docs.nvidia.com/megatron-core/developer-guide/latest/
 * distrib_optimizer.html): bf16 weights with fp32 gradients 18 B, or 6 +
 * 12/d with the distributed optimizer; with 16-bit gradients 20 B, or 4 +
 * 16/d (the optimizer's fp32 copy of its shard's gradients).  With the
 * moments in bf16 (optimizer_moments, Megatron-Core's precision-aware
 * optimizer; DeepSeek-V3's AdamW) each moment takes 2 B: Adam 4 B less,
 * SGD's momentum 2.  Setup: Llama 3
 * 8B on 8 H100 (d = 8), bf16, no lower-precision weight cache.  Exact: the
 * parameter count comes out of the first case (18 B each) and every other
 * case must be its multiple to 1e-9.
 */
Test(gradreduce, bytes_per_parameter_are_the_guides_table)
{
	static const struct {
		const char *set;
		double bytes;
	} t[] = {
		{"zero: 0, grad_reduce_fp32: true, ", 18},
		{"zero: 0, grad_reduce_fp32: false, ", 20},
		{"zero: 1, grad_reduce_fp32: true, ", 6 + 12.0 / 8},
		{"zero: 1, grad_reduce_fp32: false, ", 4 + 16.0 / 8},
		{"zero: 0, grad_reduce_fp32: true, optimizer_moments: bf16, ", 14},
		{"zero: 1, grad_reduce_fp32: false, exp_avg_dtype: bf16, ", 4 + 12.0 / 8},
		{"zero: 0, grad_reduce_fp32: true, optimizer: sgd, ", 14},
		{"zero: 0, grad_reduce_fp32: true, optimizer: sgd, optimizer_moments: bf16, ", 12},
	};
	double p = 0;

	for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
		cvc_proj_scenario sc;
		cvc_proj_result r;

		first(t[i].set, "dtype: bf16", &sc, &r);
		if (i == 0)
			p = r.mem_params_gb / 18;
		cr_expect_float_eq(r.mem_params_gb, p * t[i].bytes, 1e-9 * r.mem_params_gb,
				   "%s %g GB, want %g", t[i].set, r.mem_params_gb, p * t[i].bytes);
	}
	cr_expect_float_eq(p * 1e9, 8.03e9, 0.01e9, "%g parameters", p * 1e9);
}

/*
 * Claim: the gradients' dtype is what the data-parallel sync moves, and
 * only the gradients: with the distributed optimizer a step reduce-scatters
 * the gradients (4 B or 2 B a parameter) and all-gathers the bf16 weights
 * (2 B either way), so fp32 gradients make the sync 1.5 times the bytes.
 * Setup: Llama 3 8B on 8 H100, one node, ZeRO 1.  Tolerance: the ratio of
 * the seconds within [1.35, 1.55]: the collectives' fixed costs pull it
 * below 1.5, never above.
 */
Test(gradreduce, the_sync_moves_the_gradients_dtype)
{
	cvc_proj_scenario sc;
	cvc_proj_result r32, r16;
	double q;

	first("zero: 1, grad_reduce_fp32: true, ", "dtype: bf16", &sc, &r32);
	first("zero: 1, grad_reduce_fp32: false, ", "dtype: bf16", &sc, &r16);
	q = r32.comm_type_s[CVC_PROJ_COMM_DP] / r16.comm_type_s[CVC_PROJ_COMM_DP];
	cr_expect(q >= 1.35 && q <= 1.55, "fp32 / bf16 gradients: %g s / %g s = %g",
		  r32.comm_type_s[CVC_PROJ_COMM_DP], r16.comm_type_s[CVC_PROJ_COMM_DP], q);
	/* the pipeline's and the tensor-parallel traffic do not move */
	cr_expect_eq(r32.comm_type_s[CVC_PROJ_COMM_PP], r16.comm_type_s[CVC_PROJ_COMM_PP]);
	cr_expect_eq(r32.comm_type_s[CVC_PROJ_COMM_TP], r16.comm_type_s[CVC_PROJ_COMM_TP]);
}

/*
 * Claim: validate takes bf16 moments where a row ran DeepSeek's own
 * framework (DualPipe named: the DeepSeek-V3 report, sec. 3.3.3, keeps
 * AdamW's moments in BF16) or says so itself, and nowhere else.
 */
Test(gradreduce, validate_reads_bf16_moments)
{
	static const char text[] =
		"model,layers,hidden,heads,seq,tp,pp,ep,micro_batch,global_batch,gpus,gpu,dtype,"
		"tokens_per_s_per_gpu,source,notes\n"
		"DeepSeek-V3,,,,4096,1,16,64,1,15360,2048,H800,fp8,1500,DeepSeek-V3 report,"
		"DualPipe\n"
		"DeepSeek-V3,,,,4096,1,16,64,1,15360,2048,H800,fp8,1500,DeepSeek-V3 report,\n"
		"Llama3-8B,,,,4096,1,1,,1,64,8,H100,bf16,9000,Megatron-LM,bf16 moments\n";
	static const char *const want[][3] = {
		{"optimizer_moments=1 (DeepSeek's framework, DualPipe in the text", NULL, NULL},
		{"!optimizer_moments", NULL, NULL},
		{"optimizer_moments=1 (the row's text says so)", NULL, NULL},
	};

	tu_rows_said(text, want, sizeof want / sizeof want[0], NULL);
}
