/*
 * test_vexperts.c - the expert tensor parallelism validate gives a row
 * that does not state it: the value Megatron-Bridge's performance recipes
 * set for the models they name (projector/vrecipe.c), else Megatron-Core's
 * default tp where the stated layout allows it, else 1 where only that
 * makes the layout whole (projector/vdefault.c expert_tp()).
 */
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "cvc/cvc_project.h"
#include "testutil.h"

/*
 * Claim: a Megatron-Bridge row of DeepSeek-V3 or Qwen3-235B-A22B at TP 2
 * takes etp 1 from the recipes' base configurations, said with the file;
 * a Megatron-Bridge row of a model without such a recipe keeps etp = tp
 * where EP x TP fits TP x DP x CP (nothing said), and takes etp 1, said
 * with the reason, where only etp 1 makes the layout whole; a row stating
 * etp keeps it.  Rows are told apart by their notes cell.
 */
Test(vexperts, etp_from_recipe_default_or_layout)
{
	static const char text[] =
		"model,layers,hidden,heads,seq,moe_experts,moe_topk,tp,pp,ep,etp,micro_batch,"
		"global_batch,gpus,gpu,dtype,tokens_per_s_per_gpu,source,notes\n"
		"DeepSeek-V3,,,,4096,,,2,8,64,,1,8192,1024,H100-SXM-80GB,bf16,1300,"
		"Megatron-Bridge 25.09,row-a\n"
		"Qwen3-235B-A22B,,,,4096,,,2,8,32,,1,8192,256,H100-SXM-80GB,bf16,1600,"
		"Megatron-Bridge 26.02,row-b\n"
		"Qwen2-57B-A14B,,,,4096,,,2,4,8,,1,1024,256,H100-SXM-80GB,bf16,1000,"
		"Megatron-Bridge 26.02,row-c\n"
		"Qwen2-57B-A14B,,,,4096,,,2,4,64,,1,1024,256,H100-SXM-80GB,bf16,1000,"
		"Megatron-Bridge 26.02,row-d\n"
		"DeepSeek-V3,,,,4096,,,2,8,64,2,1,8192,1024,H100-SXM-80GB,bf16,1300,"
		"Megatron-Bridge 25.09,row-e\n";
	cvc_proj_validation v;
	char *out = tu_validate_text(text, NULL, &v, CVC_OK);
	char line[8192];

	cr_expect_eq(v.all.expressible, 5, "%d of 5 projected", v.all.expressible);
	cr_assert(tu_line_with(out, "row-a", line, sizeof line));
	cr_expect(strstr(line, "etp=1 (Megatron-Bridge's performance recipes for deepseek-v3: ") &&
			  strstr(line, "BASE_DEEPSEEK_V3_CONFIG"), "%s", line);
	cr_assert(tu_line_with(out, "row-b", line, sizeof line));
	cr_expect(strstr(line, "BASE_QWEN3_235B_A22B_CONFIG"), "%s", line);
	cr_assert(tu_line_with(out, "row-c", line, sizeof line));
	cr_expect(!strstr(line, "etp="), "EP 8 x TP 2 fits 256 / PP 4: %s", line);
	cr_assert(tu_line_with(out, "row-d", line, sizeof line));
	cr_expect(strstr(line, "etp=1 (EP 64 x TP 2 does not fit in TP x DP x CP = 64"), "%s",
		  line);
	cr_assert(tu_line_with(out, "row-e", line, sizeof line));
	cr_expect(!strstr(line, "etp="), "stated: %s", line);
	free(out);
	cvc_proj_validation_release(&v);
}
