/*
 * test_fp8params.c - fp8 weights held as the parameters (fp8_param_gather,
 * Megatron-Core's --fp8-param-gather): what a GPU no longer holds, what the
 * distributed optimizer's gather moves, where it applies, and which
 * published rows validate takes it for (projector/memory.c, stepops.c,
 * lowprec.c, vdefault.c).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <criterion/criterion.h>

#include "cvc/cvc_project.h"
#include "testutil.h"

/* Llama 3 8B's shape: untied, vocabulary 128256, hidden 4096 */
#define LLAMA8B                                                                        \
	"model: {layers: 32, hidden: 4096, heads: 32, kv_heads: 8, ffn: 14336,\n"      \
	"        ffn_type: swiglu, vocab: 128256, seq: 8192, tie_embeddings: false}\n"
#define VOCAB_PARAMS (2.0 * 128256 * 4096)

static cvc_proj_result first(const char *training, const char *gpu)
{
	char yaml[1024];
	cvc_proj_result r;

	/* the distributed optimizer unless the caller names a stage */
	snprintf(yaml, sizeof yaml,
		 LLAMA8B "training: {global_batch: 64, recompute: none, %s%s}\n"
			 "parallelism: {tp: 1, pp: 1}\nhardware: {gpu: %s, gpus: 8}\n",
		 strstr(training, "zero:") ? "" : "zero: 1, ", training, gpu);
	cr_assert_eq(tu_proj_first(yaml, NULL, &r), 1, "%s", yaml);
	cr_assert(r.valid, "%s: %s", yaml, r.reason);
	return r;
}

/*
 * Claim: with fp8 weights as the parameters, the 16-bit copy of every
 * quantized layer's weight is gone (2 B a parameter with the distributed
 * optimizer, which does not shard it); the embedding and the output layer
 * keep theirs (Transformer Engine quantizes only the layers' GEMMs), and
 * nothing else moves: the fp32 master, the gradients and the fp8 copies in
 * both layouts stay.  Setup: Llama 3 8B shape, 8 H100, ZeRO 1, delayed
 * scaling.  Exact to 1e-9: the parameter count is cvc's own (params_b).
 */
Test(fp8params, no_16bit_copy_of_the_layers_weights)
{
	cvc_proj_result off = first("dtype: fp8, fp8_param_gather: false", "H100-SXM");
	cvc_proj_result on = first("dtype: fp8, fp8_params: true", "H100-SXM");
	double q = off.params_b * 1e9 - VOCAB_PARAMS, want = 2 * q / 1e9;

	cr_expect_float_eq(off.mem_params_gb - on.mem_params_gb, want, 1e-9 * want,
			   "%g GB saved, want %g (2 B of %g quantized parameters)",
			   off.mem_params_gb - on.mem_params_gb, want, q);
	cr_expect_eq(on.mem_act_gb, off.mem_act_gb);
}

/*
 * Claim: per-tensor scaled fp8 weights are gathered in fp8 (1 B a layer
 * weight, the embedding and output layer in 16 bits), so the data-parallel
 * sync (16-bit gradients reduce-scattered, weights gathered) moves
 * (2 + 1) / (2 + 2) of its bytes in the layers: 0.78 of them for this
 * shape; MXFP8's are gathered in 16 bits into the gradient buffer, so its
 * sync does not change, while its memory still drops.  Tolerance: the
 * ratio of the seconds in [0.75, 0.85]: the collectives' fixed costs pull
 * it towards 1.
 */
Test(fp8params, the_gather_moves_what_the_recipe_gathers)
{
	cvc_proj_result off = first("dtype: fp8, fp8_recipe: current", "H100-SXM");
	cvc_proj_result on = first("dtype: fp8, fp8_recipe: current, fp8_param_gather: true",
				   "H100-SXM");
	cvc_proj_result mx_off = first("dtype: fp8, fp8_recipe: mxfp8", "B200");
	cvc_proj_result mx_on = first("dtype: fp8, fp8_recipe: mxfp8, fp8_param_gather: true",
				      "B200");
	double q = on.comm_type_s[CVC_PROJ_COMM_DP] / off.comm_type_s[CVC_PROJ_COMM_DP];

	cr_expect(q >= 0.75 && q <= 0.85, "current scaling: %g s / %g s = %g",
		  on.comm_type_s[CVC_PROJ_COMM_DP], off.comm_type_s[CVC_PROJ_COMM_DP], q);
	cr_expect_eq(mx_on.comm_type_s[CVC_PROJ_COMM_DP], mx_off.comm_type_s[CVC_PROJ_COMM_DP]);
	cr_expect_lt(mx_on.mem_params_gb, mx_off.mem_params_gb - 10, "mxfp8: %g against %g GB",
		     mx_on.mem_params_gb, mx_off.mem_params_gb);
}

/*
 * Claim: it is Megatron-Core's, with fp8 weights and the distributed
 * optimizer or FSDP: under bf16, without the distributed optimizer
 * (zero 0) and on torchtitan (whose Float8 is torchao's) the field changes
 * nothing; layers kept in bf16 keep their 16-bit weights, so the saving
 * shrinks by their share.
 */
Test(fp8params, applies_where_megatron_core_applies_it)
{
	static const char *const same[] = {
		"dtype: bf16",
		"dtype: fp8, zero: 0",
		"dtype: fp8, framework: torchtitan, fp8_recipe: current",
	};
	cvc_proj_result off, on, full;
	double saved, part;

	for (size_t i = 0; i < sizeof same / sizeof same[0]; i++) {
		char a[160], b[160];

		snprintf(a, sizeof a, "%s", same[i]);
		snprintf(b, sizeof b, "%s, fp8_param_gather: true", same[i]);
		off = first(a, "H100-SXM");
		on = first(b, "H100-SXM");
		cr_expect_eq(on.mem_gb, off.mem_gb, "%s: %g against %g GB", same[i], on.mem_gb,
			     off.mem_gb);
		cr_expect_eq(on.step_s, off.step_s, "%s", same[i]);
		/* said where fp8 is the dtype; a study sweeping the dtype
		 * sets it for its fp8 rows, so bf16 says nothing */
		cr_expect_eq(!!strstr(on.warnings, "fp8_param_gather: not applied"), i > 0, "%s: %s",
			     same[i], on.warnings);
	}
	off = first("dtype: fp8", "H100-SXM");
	full = first("dtype: fp8, fp8_param_gather: true", "H100-SXM");
	on = first("dtype: fp8, fp8_param_gather: true, bf16_layers_first: 4, "
		   "bf16_layers_last: 4", "H100-SXM");
	saved = off.mem_params_gb - full.mem_params_gb;
	part = first("dtype: fp8, bf16_layers_first: 4, bf16_layers_last: 4", "H100-SXM")
		       .mem_params_gb -
	       on.mem_params_gb;
	cr_expect_float_eq(part, saved * 24 / 32, 1e-9 * saved, "%g GB of %g", part, saved);
}

/*
 * Claim: validate takes fp8_param_gather from the precision recipe of the
 * stack a row names: NeMo 2.0's delayed and current scaling (its
 * mixed_precision.py sets it; its MXFP8 recipe does not), Megatron-Bridge's
 * delayed, current scaling and MXFP8, never Megatron-LM's command line
 * (off by default) nor a NeMo release before 24.09 (NeMo 1.0's launcher),
 * nor an MoE model (the MoE performance presets read turn it off: Megatron-
 * Bridge's Kimi-K2 GB200 MXFP8 and DeepSeek-V3 H100 presets); a row that
 * says it is read as said.
 */
Test(fp8params, validate_takes_it_from_the_stacks_recipe)
{
	static const char text[] =
		"model,layers,hidden,heads,seq,tp,pp,micro_batch,global_batch,gpus,gpu,dtype,tokens_per_s_per_gpu,"
		"source,notes\n"
		"Llama3-8B,,,,8192,1,1,1,128,8,H100,fp8-cs,14000,NeMo performance summary,"
		"NeMo 25.04 container\n"
		"Llama3-8B,,,,8192,1,1,2,128,8,B200,mxfp8,30000,NeMo performance summary,"
		"NeMo 25.04 container\n"
		"Llama3-8B,,,,8192,1,1,2,128,8,B200,mxfp8,30000,Megatron Bridge performance summary,"
		"Release 25.11 NeMo container\n"
		"Llama3-8B,,,,8192,1,1,1,128,8,H100,fp8,14000,Megatron-LM,2025-03\n"
		"Llama3-8B,,,,8192,1,1,1,128,8,H100,fp8,14000,NeMo performance summary,"
		"NeMo 24.05 container\n"
		"Llama3-8B,,,,8192,1,1,1,128,8,H100,fp8,14000,NeMo performance summary,"
		"NeMo 25.04 container; fp8_param_gather off\n"
		"Qwen3-30B-A3B,,,,4096,1,1,4,512,8,GB200 (NVL72),mxfp8,30000,Megatron Bridge "
		"performance summary,Release 25.11 NeMo container\n";
	static const char *const want[][3] = {
		{"fp8_param_gather=1 (the current-scaling fp8 precision recipe of NeMo from 24.09",
		 NULL, NULL},
		{"!fp8_param_gather", NULL, NULL},
		{"fp8_param_gather=1 (the MXFP8 precision recipe of Megatron-Bridge sets it)", NULL,
		 NULL},
		{"!fp8_param_gather", NULL, NULL},
		{"!fp8_param_gather", NULL, NULL},
		{"fp8_param_gather=0 (the row's text says so)", NULL, NULL},
		{"!fp8_param_gather", NULL, NULL},
	};

	tu_rows_said(text, want, sizeof want / sizeof want[0], NULL);
}

/*
 * Claim: every published row ran, so a row cvc's memory count refuses is a
 * miss of that count: validate says so in the row's notes and counts such
 * rows, without leaving the row unscored.  Setup: Llama 3 70B on 8 H100
 * with no model parallelism (about 16 B a parameter on one GPU) and
 * Llama 3 8B at sequence 2048, which fits (one row each way).
 */
Test(fp8params, validate_counts_rows_its_memory_count_refuses)
{
	static const char text[] =
		"model,layers,hidden,heads,seq,tp,pp,micro_batch,global_batch,gpus,gpu,dtype,tokens_per_s_per_gpu,"
		"source,notes\n"
		"Llama3-70B,,,,4096,1,1,1,64,8,H100,bf16,500,Megatron-LM,2025-03\n"
		"Llama3-8B,,,,2048,1,1,1,64,8,H100,bf16,9000,Megatron-LM,2025-03\n";
	cvc_proj_validation v;
	char *out = tu_validate_text(text, NULL, &v, CVC_OK), line[8192];

	cr_expect_eq(v.all.expressible, 2);
	cr_expect_eq(v.all.unfit_rows, 1, "%d rows", v.all.unfit_rows);
	cr_expect_gt(v.all.unfit_worst_pct, 100, "%g%% over", v.all.unfit_worst_pct);
	cr_assert(tu_line_with(out, "Llama3-70B", line, sizeof line));
	cr_expect(strstr(line, "by cvc's count, over the") && strstr(line, "yet the run fit"),
		  "%s", line);
	cr_assert(tu_line_with(out, "Llama3-8B", line, sizeof line));
	cr_expect(!strstr(line, "yet the run fit"), "%s", line);
	cvc_proj_validation_release(&v);
	free(out);
}

/*
 * Claim: a bare 0 in the sharding column of a NeMo or Megatron-Bridge row
 * is their performance tables' FSDP column saying FSDP off, so the row
 * runs the distributed optimizer its recipes turn on (zero 1), not ZeRO
 * stage 0 (NeMo 25.04's MoE rows were counted 16-140% over their HBM);
 * a Megatron-LM row's 0 stays stage 0.
 */
Test(fp8params, a_nemo_tables_fsdp_0_is_the_distributed_optimizer)
{
	static const char text[] =
		"model,layers,hidden,heads,seq,tp,pp,zero_fsdp,micro_batch,global_batch,gpus,gpu,"
		"dtype,tokens_per_s_per_gpu,source,notes\n"
		"Llama3-8B,,,,8192,1,1,0,1,128,8,H100,bf16,9000,NeMo performance summary,"
		"NeMo 25.04 container\n"
		"Llama3-8B,,,,8192,1,1,0,1,128,8,H100,bf16,9000,Megatron-LM,2025-03\n";
	static const char *const want[][3] = {
		{"zero=1 ('0' in a NeMo table's FSDP column: FSDP off", NULL, NULL},
		{"!zero=1", NULL, NULL},
	};

	tu_rows_said(text, want, sizeof want / sizeof want[0], NULL);
}
