/*
 * test_memory.c - what a GPU holds, as the stacks that ran published
 * configurations hold it: the claims a review of memory.c against
 * torchtitan's benchmark tables and its FSDP code found cvc breaking
 * (docs/SCENARIOS.md "Memory").
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <criterion/criterion.h>

#include "cvc/cvc_project.h"
#include "testutil.h"

static cvc_proj_result first(const char *yaml)
{
	cvc_proj_result r;

	cr_assert_eq(tu_proj_first(yaml, NULL, &r), 1, "%s", yaml);
	cr_assert(r.valid, "%s: %s", yaml, r.reason);
	return r;
}

#define LLAMA8B_FSDP(dtype)                                                                        \
	"model: {arch: llama3.1-8b, seq: 8192}\n"                                                  \
	"training: {global_batch: 16, micro_batch: 2, dtype: " dtype ", recompute: selective,\n"   \
	"           zero: 3, framework: torchtitan, compile: true, fp8_recipe: current}\n"       \
	"parallelism: {tp: 1}\nhardware: {gpu: H100-SXM, gpus: 8, scale_hbm_cap: 1.2}\n"

/*
 * Claim: under FSDP an fp8 run holds no unsharded fp8 copy of the
 * model: torchao's Float8 casts each gathered unit as it is used.
 * torchtitan's Llama 3.1 8B on 8 H100 of 96 GB (FSDP 8, local batch 2,
 * selective checkpointing) measured 77.0 GiB in bf16 and 76.8 GiB with Float8
 * (benchmarks/llama3_h100_202412_torchtitan.md @31a17bfd, Table 1); cvc
 * counted 2 bytes a parameter of fp8 weights unsharded, +14 GB, and said
 * the fp8 run did not fit.
 */
Test(memory, fp8_under_fsdp_holds_no_unsharded_copy)
{
	cvc_proj_result b = first(LLAMA8B_FSDP("bf16")), f = first(LLAMA8B_FSDP("fp8"));

	cr_expect_leq(f.mem_params_gb, b.mem_params_gb + 1.5, "fp8 %g GB of weights, bf16 %g GB",
		      f.mem_params_gb, b.mem_params_gb);
	cr_expect(f.fits, "fp8: %g GB of %g", f.mem_gb, f.hbm_gb);
}

/*
 * Claim: with a pipeline, torchtitan keeps its stage's blocks gathered
 * from their forward to their backward (apply_fsdp's default:
 * reshard_after_forward = not pp_enabled, torchtitan/models/llama3/infra/
 * parallelize.py @018740b7): a stage's weights in bf16 beside its shards,
 * where cvc counted two gathered blocks.  Llama 3.1 405B at FSDP 8 x TP 8 x
 * PP 8 measured 82.5 GiB reserved (Table 5) where cvc said 20 GB.
 */
Test(memory, torchtitan_pipeline_keeps_its_stage_gathered)
{
	static const char pp[] =
		"model: {arch: llama3.1-405b, seq: 8192}\n"
		"training: {global_batch: 256, micro_batch: 1, recompute: full, zero: 3,\n"
		"           framework: torchtitan}\n"
		"parallelism: {tp: 8, pp: 8}\n"
		"hardware: {gpu: H100-SXM, gpus: 512}\n";
	cvc_proj_scenario sc;
	cvc_proj_result r;
	/* a stage's share of 405B over tp 8 and pp 8: its fp32 weights,
	 * gradients and Adam's two moments sharded over FSDP 8 (16 / 8 bytes a
	 * parameter), and the same parameters gathered in bf16 (2 bytes) */
	double per_gpu = 405e9 / 64, want = (16.0 / 8 + 2) * per_gpu / 1e9;

	cr_assert_eq(tu_proj_first(pp, &sc, &r), 1);
	cr_assert(r.valid, "%s", r.reason);
	cr_expect_geq(r.mem_params_gb, 0.95 * want, "%g GB of weights and states, at least %g GB",
		      r.mem_params_gb, want);
}

/*
 * Claim: a model mapping that holds a catalog model's name and nothing
 * else is refused with the way to say it: it named a label only, and cvc
 * priced the default 24 x 2048 shape as "llama3.1-405b" (30 GB, fits).
 */
Test(memory, a_catalog_name_alone_is_refused)
{
	cvc_proj_study *st = NULL;
	static const char y[] =
		"model: [{model: llama3.1-405b}]\ntraining: {global_batch: 8}\n"
		"hardware: {gpu: H100-SXM, gpus: 8}\n";

	cr_expect_eq(cvc_proj_study_parse("f.yaml", y, strlen(y), &st), CVC_ERR_FORMAT);
	cr_expect(strstr(cvc_proj_study_errmsg(st), "line 1, column 17: 'llama3.1-405b' names a "
			 "model of cvc's catalog") != NULL, "%s", cvc_proj_study_errmsg(st));
	cvc_proj_study_free(st);
}

/*
 * Claim: full recomputation never holds more activations than none.  A
 * recomputed layer is rebuilt from its checkpointed input: that input is
 * counted once, not again inside the rebuilt layer.  Counted twice, a
 * stage of one layer and one micro-batch in flight held more with full
 * recompute (0.253 GB) than without (0.236 GB).
 */
Test(memory, full_recompute_holds_no_more_than_none)
{
	static const char base[] =
		"model: {layers: 4, hidden: 8192, heads: 64, kv_heads: 2, seq: 1024, vocab: 128256}\n"
		"training: {global_batch: 16, recompute: %s}\nparallelism: {pp: 4}\n"
		"hardware: {gpu: GB300, gpus: 64}\n";
	cvc_proj_result r[2];

	tu_proj_pair(base, "none", "full", r);
	cr_expect_leq(r[1].mem_act_gb, r[0].mem_act_gb * (1 + 1e-12), "full %g GB, none %g GB",
		      r[1].mem_act_gb, r[0].mem_act_gb);
}
