/*
 * test_vgraphs.c - the CUDA graphs validate takes from a token-drop
 * recipe (projector/vrecipe.c vrecipe_graphs): Megatron-Bridge's
 * Qwen3-30B-A3B presets of the token-drop schedule capture the whole
 * iteration on B200 and GB200 and nothing on H100, so a row labelled
 * "(tokendrop)" of that model on a Blackwell GPU is priced with graphs,
 * said with the recipe it comes from; a dropless row of the same layout,
 * an H100 row and a row whose cell states the graphs are not.
 */
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "cvc/cvc_project.h"
#include "testutil.h"

/* The n-th comma-separated field of line as a number (no quoted comma
 * before it). */
static double field(const char *line, int n)
{
	for (int i = 0; i < n && line; i++) {
		line = strchr(line, ',');
		line = line ? line + 1 : NULL;
	}
	cr_assert(line);
	return strtod(line, NULL);
}

/*
 * Claim: row-a (token drop, B200) says cuda_graphs=1 and names the recipe
 * at its commit; row-b, the same row with a cuda_graphs cell of 0, keeps
 * it; row-c (token drop, H100) and row-d (dropless, B200) get no graphs,
 * and no recompute, as every Qwen3 preset.
 * The graphs are priced: at micro-batch 1 the host sets row-b's pace
 * (docs/MODELS.md "Host time per launch"), and the graphed row-a projects
 * well over half again as fast.
 */
Test(vgraphs, token_drop_recipes_capture_the_iteration)
{
	static const char text[] =
		"model,layers,hidden,heads,seq,tp,pp,vpp,ep,micro_batch,global_batch,gpus,gpu,dtype,"
		"cuda_graphs,tokens_per_s_per_gpu,source,notes\n"
		"Qwen3-30B-A3B,,,,4096,1,1,,8,1,512,8,B200 (DGX B200),mxfp8,,18066,"
		"Megatron-Bridge 25.09,row-a Qwen3_30B_a3B (tokendrop)\n"
		"Qwen3-30B-A3B,,,,4096,1,1,,8,1,512,8,B200 (DGX B200),mxfp8,0,18066,"
		"Megatron-Bridge 25.09,row-b Qwen3_30B_a3B (tokendrop)\n"
		"Qwen3-30B-A3B,,,,4096,1,2,24,8,2,512,16,H100-SXM-80GB,fp8-cs,,10494,"
		"Megatron-Bridge 25.09,row-c Qwen3_30B_a3B (tokendrop)\n"
		"Qwen3-30B-A3B,,,,4096,1,1,,8,1,512,8,B200 (DGX B200),mxfp8,,9299,"
		"Megatron-Bridge 25.11,row-d Qwen3_30B_a3B\n";
	/* predicted_tokens_per_s_per_gpu: after the 18 columns above */
	enum { PRED = 18 };
	cvc_proj_validation v;
	char *out = tu_validate_text(text, NULL, &v, CVC_OK);
	char line[8192];
	double graphed, stated;

	cr_expect_eq(v.all.expressible, 4, "%d of 4 projected", v.all.expressible);
	cr_assert(tu_line_with(out, "row-a", line, sizeof line));
	cr_expect(strstr(line, "moe_token_drop=1 (the row's text says so)"), "%s", line);
	cr_expect(strstr(line, "cuda_graphs=1 (the token-drop recipe for qwen3-30b-a3b on B200: ") &&
			  strstr(line, "qwen3_30b_a3b_llm_pretrain.py @4054233a") &&
			  strstr(line, "full_iteration"),
		  "%s", line);
	graphed = field(line, PRED);
	cr_assert(tu_line_with(out, "row-b", line, sizeof line));
	cr_expect(!strstr(line, "cuda_graphs="), "the cell states it: %s", line);
	stated = field(line, PRED);
	cr_expect_gt(graphed, 1.5 * stated, "graphed %g, stated off %g tokens/s", graphed, stated);
	cr_assert(tu_line_with(out, "row-c", line, sizeof line));
	cr_expect(strstr(line, "moe_token_drop=1") && !strstr(line, "cuda_graphs="), "%s", line);
	cr_assert(tu_line_with(out, "row-d", line, sizeof line));
	cr_expect(!strstr(line, "moe_token_drop=") && !strstr(line, "cuda_graphs="), "%s", line);
	/* every Qwen3 preset read sets no recompute */
	cr_expect(strstr(line, "recompute=none (Megatron-Bridge's performance recipe for "
			       "qwen3-30b-a3b on B200: ") &&
			  strstr(line, "set_qwen3_common_configs"),
		  "%s", line);
	free(out);
	cvc_proj_validation_release(&v);
}
