/*
 * test_vpresets.c - what validate takes from Megatron-Bridge's performance
 * presets beyond a layout's recipe (projector/vrecipe.c).  The CUDA graphs
 * of a token-drop recipe (vrecipe_graphs): Megatron-Bridge's
 * Qwen3-30B-A3B presets of the token-drop schedule capture the whole
 * iteration on B200 and GB200 and nothing on H100, so a row labelled
 * "(tokendrop)" of that model on a Blackwell GPU is priced with graphs,
 * said with the recipe it comes from; a dropless row of the same layout,
 * an H100 row and a row whose cell states the graphs are not.  The FP8
 * scaling of the presets where a row names none.
 */
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "cvc/cvc_project.h"
#include "testutil.h"

/*
 * Claim: row-a (token drop, B200) says cuda_graphs=2 (the whole forward
 * and backward, as the preset's "full_iteration" scope captures it) and
 * names the recipe at its commit; row-b, the same row with a cuda_graphs cell of 0, keeps
 * it; row-c (token drop, H100) and row-d (dropless, B200) get no graphs,
 * and no recompute, as every Qwen3 preset.
 * The graphs are priced: at micro-batch 1 the host sets row-b's pace
 * (docs/MODELS.md "Host time per launch"), and the graphed row-a projects
 * well over half again as fast.
 */
Test(vpresets, token_drop_recipes_capture_the_iteration)
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
	cr_expect(strstr(line, "cuda_graphs=2 (the token-drop recipe for qwen3-30b-a3b on B200: ") &&
			  strstr(line, "qwen3_30b_a3b_llm_pretrain.py @4054233a") &&
			  strstr(line, "full_iteration"),
		  "%s", line);
	graphed = tu_csv_num(line, PRED);
	cr_assert(tu_line_with(out, "row-b", line, sizeof line));
	cr_expect(!strstr(line, "cuda_graphs="), "the cell states it: %s", line);
	stated = tu_csv_num(line, PRED);
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

/*
 * Claim: a DeepSeek-V3 row on GB200 that names FP8 and no scaling is
 * priced with the presets' current scaling and says so; one that names
 * MXFP8 keeps it.  The GB200 presets changed their recompute between
 * releases, so it is taken by the row's release: mla_up_proj through
 * 26.02 in either FP8 (row-a, row-b), mlp for current scaling from 26.04
 * (row-c, PR #3031), mla_up_proj again for MXFP8 (row-d); a row its text
 * does not date keeps Megatron-Core's default, no recompute (row-e).
 */
Test(vpresets, unnamed_fp8_is_the_presets_current_scaling)
{
	static const char text[] =
		"model,layers,hidden,heads,seq,tp,pp,vpp,ep,micro_batch,global_batch,gpus,gpu,dtype,"
		"tokens_per_s_per_gpu,source,notes\n"
		"DeepSeek-V3,,,,4096,1,4,4,64,1,2048,256,GB200 (NVL72),fp8,3454,"
		"Megatron-Bridge,Release 25.09 NeMo container; row-a\n"
		"DeepSeek-V3,,,,4096,1,4,4,64,1,2048,256,GB200 (NVL72),mxfp8,3454,"
		"Megatron-Bridge,Release 25.09 NeMo container; row-b\n"
		"DeepSeek-V3,,,,4096,1,4,4,64,1,2048,256,GB200 (NVL72),fp8,3454,"
		"Megatron-Bridge,Release 26.06 NeMo container; row-c\n"
		"DeepSeek-V3,,,,4096,1,4,4,64,1,2048,256,GB200 (NVL72),mxfp8,3454,"
		"Megatron-Bridge,Release 26.06 NeMo container; row-d\n"
		"DeepSeek-V3,,,,4096,1,4,4,64,1,2048,256,GB200 (NVL72),mxfp8,3454,"
		"Megatron-Bridge,row-e\n";
	static const struct { const char *row, *rc; } want[] = {
		{"row-a", "recompute=selective, recompute_modules=mla_up_proj (Megatron-Bridge's "
			  "performance recipe for deepseek-v3 on GB200 in the row's release: "},
		{"row-b", "recompute=selective, recompute_modules=mla_up_proj ("},
		{"row-c", "recompute=selective, recompute_modules=mlp (Megatron-Bridge's "
			  "performance recipe for deepseek-v3 on GB200 in the row's release: "},
		{"row-d", "recompute=selective, recompute_modules=mla_up_proj ("},
		{"row-e", "recompute=none (Megatron-Core's default"},
	};
	cvc_proj_validation v;
	char *out = tu_validate_text(text, NULL, &v, CVC_OK);
	char line[8192];

	cr_expect_eq(v.all.expressible, 5, "%d of 5 projected", v.all.expressible);
	cr_assert(tu_line_with(out, "row-a", line, sizeof line));
	cr_expect(strstr(line, "fp8_recipe=current (Megatron-Bridge's performance recipe for "
			       "deepseek-v3 on GB200: ") &&
			  strstr(line, "deepseek_v3_gb200_256gpus_fp8_config"),
		  "%s", line);
	cr_assert(tu_line_with(out, "row-b", line, sizeof line));
	cr_expect(strstr(line, "fp8_recipe=mxfp8 ('mxfp8')") && !strstr(line, "fp8_recipe=current"),
		  "%s", line);
	for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
		cr_assert(tu_line_with(out, want[i].row, line, sizeof line));
		cr_expect(strstr(line, want[i].rc), "%s: want '%s' in %s", want[i].row, want[i].rc,
			  line);
	}
	free(out);
	cvc_proj_validation_release(&v);
}

/*
 * Claim: a row whose release ran what validate does not assume (Qwen3-30B-
 * A3B on GB200 in MXFP8, release 26.06: HybridEP, the 1F1B overlap,
 * full-iteration CUDA graphs, the fused grouped MLP and FP8 attention)
 * keeps its projection and its interval, and says beside them the
 * projection with those features priced, with that projection's own 90%
 * interval; a row of the release before (26.02, nothing listed) says no
 * such thing.  The features are priced: with them the row projects well
 * over a third faster, outside the row's own interval.
 */
Test(vpresets, what_a_release_ran_is_priced_beside_the_row)
{
	static const char text[] =
		"model,layers,hidden,heads,seq,tp,pp,vpp,ep,micro_batch,global_batch,gpus,gpu,dtype,"
		"tokens_per_s_per_gpu,source,notes\n"
		"Qwen3-30B-A3B,,,,4096,1,1,,8,4,512,8,GB200 (NVL72),mxfp8,40706,"
		"Megatron-Bridge,Release 26.06 NeMo container row-a\n"
		"Qwen3-30B-A3B,,,,4096,1,1,,8,4,512,8,GB200 (NVL72),mxfp8,26084,"
		"Megatron-Bridge,Release 26.02 NeMo container row-b\n";
	/* predicted, its 90% interval's lo and hi: after the 17 columns */
	enum { PRED = 17, LO, HI };
	cvc_proj_validation v;
	char *out = tu_validate_text(text, NULL, &v, CVC_OK);
	char line[8192];
	const char *note;
	char *end;
	double a[3], b[3], alt, alt_lo, alt_hi;

	cr_expect_eq(v.all.expressible, 2, "%d of 2 projected", v.all.expressible);
	cr_assert(tu_line_with(out, "row-a", line, sizeof line));
	for (int i = 0; i < 3; i++)
		a[i] = tu_csv_num(line, PRED + i);
	static const char said[] = "priced with what the release ran that cvc prices (HybridEP, "
				   "the 1F1B all-to-all overlap, full-iteration CUDA graphs, the "
				   "fused grouped MLP, FP8 attention): ";
	note = strstr(line, said);
	cr_assert(note, "%s", line);
	alt = strtod(note + strlen(said), &end);
	cr_assert(!strncmp(end, " tokens/s/GPU, 90% interval ", 28), "%s", end);
	alt_lo = strtod(end + 28, &end);
	cr_assert_eq(*end, '-', "%s", end);
	alt_hi = strtod(end + 1, NULL);
	cr_expect(alt_lo < alt && alt < alt_hi, "%g-%g around %g", alt_lo, alt_hi, alt);
	cr_assert(tu_line_with(out, "row-b", line, sizeof line));
	for (int i = 0; i < 3; i++)
		b[i] = tu_csv_num(line, PRED + i);
	cr_expect(!strstr(line, "priced with what the release ran"), "%s", line);
	/* the same scenario priced alike, intervals and all */
	for (int i = 0; i < 3; i++)
		cr_expect_float_eq(a[i], b[i], 1e-9 * b[i]);
	cr_expect_gt(alt, 1.3 * a[0], "with the features %g, without %g", alt, a[0]);
	cr_expect_gt(alt, a[2], "the row's hi %g, the features' price %g", a[2], alt);
	free(out);
	cvc_proj_validation_release(&v);
}
