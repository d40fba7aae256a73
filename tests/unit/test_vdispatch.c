/*
 * test_vdispatch.c - how validate moves a Megatron-Bridge row's tokens
 * where its expert parallelism spans NVLink domains: the dispatcher and
 * the 1F1B all-to-all overlap of the model's transcribed performance
 * recipe (projector/vrecipe.c), and nothing for a model without one
 * (Megatron-Bridge's WorkloadBaseConfig leaves moe_a2a_overlap off).
 */
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "cvc/cvc_project.h"
#include "testutil.h"

/*
 * Claim: GPT-OSS-120B at EP 64 on eight B200 boards runs its recipe's
 * alltoall dispatcher without the overlap; Qwen3-235B-A22B at EP 32 on
 * H100 the alltoall dispatcher with it; Qwen2-57B-A14B, which has no
 * transcribed recipe, at EP 32 on H100, neither a dispatcher nor the
 * overlap (cvc's alltoall, exposed).  Each says its source.  Rows are told
 * apart by their notes cell.
 */
Test(vdispatch, each_recipe_its_own_way)
{
	static const char text[] =
		"model,layers,hidden,heads,seq,tp,pp,vpp,ep,micro_batch,global_batch,gpus,gpu,dtype,"
		"tokens_per_s_per_gpu,source,notes\n"
		"GPT-OSS-120B,,,,4096,1,1,,64,4,1280,64,B200 (DGX B200),bf16,8000,"
		"Megatron-Bridge 26.02,row-a\n"
		"Qwen3-235B-A22B,,,,4096,2,8,4,32,1,8192,256,H100-SXM-80GB,fp8-cs,1600,"
		"Megatron-Bridge 26.02,row-b\n"
		"Qwen2-57B-A14B,,,,4096,2,4,,32,1,1024,256,H100-SXM-80GB,bf16,1000,"
		"Megatron-Bridge 26.02,row-c\n";
	cvc_proj_validation v;
	char *out = tu_validate_text(text, NULL, &v, CVC_OK);
	char line[8192];

	cr_expect_eq(v.all.expressible, 3, "%d of 3 projected", v.all.expressible);
	cr_assert(tu_line_with(out, "row-a", line, sizeof line));
	cr_expect(strstr(line, "recompute_modules=layernorm,moe_act (Megatron-Bridge's "
			       "performance recipe for gpt-oss-120b on B200: ") &&
			  strstr(line, "GPT_OSS_120B_PRETRAIN_CONFIG_B200_BF16_V1"),
		  "%s", line);
	cr_expect(strstr(line, "ep_overlap=0 (moe_a2a_overlap in the same recipe)"), "%s", line);
	cr_expect(strstr(line, "ep_dispatcher=alltoall (EP 64 over NVLink domains of 8: the same "
			       "recipe: gpt_oss.py's moe_token_dispatcher_type"),
		  "%s", line);
	cr_assert(tu_line_with(out, "row-b", line, sizeof line));
	cr_expect(strstr(line, "ep_overlap=1 (moe_a2a_overlap in Megatron-Bridge's performance "
			       "recipe for qwen3-235b-a22b on H100-SXM: ") &&
			  strstr(line, "QWEN3_235B_A22B_PRETRAIN_CONFIG_H100_FP8_CS_V1"),
		  "%s", line);
	cr_expect(strstr(line, "ep_dispatcher=alltoall (EP 32 over NVLink domains of 8"), "%s",
		  line);
	cr_assert(tu_line_with(out, "row-c", line, sizeof line));
	cr_expect(!strstr(line, "ep_dispatcher=") && !strstr(line, "ep_overlap="), "%s", line);
	free(out);
	cvc_proj_validation_release(&v);
}
