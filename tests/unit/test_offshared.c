/*
 * test_offshared.c - cvc against published runs that ../shared does not
 * hold: the 25.11 NeMo container's rows of Megatron-Bridge's performance
 * summary for model families and a GPU generation the shared files lack
 * (tests/data/megatron-bridge-25.11-offshared.csv: GPT-OSS-120B and
 * Qwen3-235B-A22B on GB200, B200 and H100, and every GB300 NVL72 row).
 * Nothing in cvc was set from these rows; they check that a row naming a
 * model and a system cvc has never been scored on is read and priced the
 * way the shared files' rows are (docs/MODELS.md "Off the shared set").
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cvc/cvc_project.h"
#include "testutil.h"

#define OFFSHARED CVC_SOURCE_DIR "/tests/data/megatron-bridge-25.11-offshared.csv"

/* The scored CSV's line of the row whose model and gpu cells start so
 * (the n-th such line, 0 first); NULL when there is none. */
static const char *row_line(const char *out, const char *model, const char *gpu, int n,
			    char *line, size_t len)
{
	char key[128];

	snprintf(key, sizeof key, "\n%s,", model);
	for (const char *p = strstr(out, key); p; p = strstr(p + 1, key))
		if (strstr(tu_copy_line(p + 1, line, len), gpu) && n-- == 0)
			return line;
	return NULL;
}

/*
 * Every row is projected, and the shape of each model the shared files do
 * not have comes from cvc's catalog (the rows leave every shape cell
 * blank, as the summary does): GPT-OSS-120B with its sliding window every
 * other layer, Qwen3-235B-A22B with its 128 experts.  The GB300 rows are
 * priced as one NVL72 domain.
 */
Test(offshared, rows_read_from_the_catalog)
{
	cvc_proj_validation v;
	char *out = tu_validate(OFFSHARED, NULL, &v, CVC_OK);
	char line[8192];

	cr_expect_eq(v.all.rows, 14);
	cr_expect_eq(v.all.expressible, 14, "%d of 14 rows projected", v.all.expressible);
	cr_assert(row_line(out, "GPT-OSS-120B", "B200 (DGX", 0, line, sizeof line));
	cr_expect(strstr(line, "(gpt-oss-120b in cvc's catalog"), "%s", line);
	cr_expect(strstr(line, "window=128, window_skip_freq=2"), "%s", line);
	cr_assert(row_line(out, "Qwen3-235B-A22B", "GB200", 0, line, sizeof line));
	cr_expect(strstr(line, "(qwen3-235b-a22b in cvc's catalog"), "%s", line);
	cr_expect(strstr(line, "experts=128, top_k=8"), "%s", line);
	cr_assert(row_line(out, "Llama3-8B", "GB300", 1, line, sizeof line));
	cr_expect(strstr(line, "gpu=GB300"), "%s", line);
	cr_expect(strstr(line, "nvlink_domain=72"), "%s", line);
	cr_expect(strstr(line, "fp8_recipe=mxfp8"), "%s", line);
	free(out);
	cvc_proj_validation_release(&v);
}

/*
 * How far off they are.  At e45007e: MAPE 22.49%, median 13.74%; with
 * the measured NVLink collectives (opformula.c nvlink_ref): MAPE 23.11%,
 * median 14.94%, 35.7% within 10%, bias +8.59%, 71.4% of the 90%
 * intervals hold; with expert parameters synchronised over the expert
 * data-parallel group (stepops.c proj_expert_group): MAPE 19.62%,
 * median 14.97%, bias +5.05%; with the DeepSeek-V3 rows priced without the
 * MTP layer their TFLOP/s leave out (vdefault.c mtp_from_flops): 18.70%,
 * median 13.86%, bias +5.14%.  By part: the GB300 rows are slow by 3-21%
 * (cvc's GB300 differs from its GB200 only by named figures, "GB300
 * against GB200"); GPT-OSS-120B is +7% on GB200 and +25% / +80% on H100 / B200,
 * whose 153 and 223 model TFLOP/s per GPU are far below the same model on
 * GB200 (488).  The bound holds today's figure so that a change that
 * loses it fails here; it is not a target.
 */
Test(offshared, accuracy_bound)
{
	cvc_proj_validation v;
	struct cvc_proj_validate_opts o = {.by = "gpu"};
	char *out = tu_validate(OFFSHARED, &o, &v, CVC_OK);

	cr_log_info("off the shared set: %d rows, MAPE %.2f%%, median %.2f%%, within 10%% %.1f%%, "
		    "bias %+.2f%%, intervals hold %.1f%%",
		    v.all.expressible, v.all.mape_pct, v.all.median_pct, v.all.within10_pct,
		    v.all.bias_pct, v.all.coverage_pct);
	for (size_t i = 0; i < v.ngroups; i++)
		cr_log_info("  %s: %d rows, MAPE %.2f%%, bias %+.2f%%", v.groups[i].key,
			    v.groups[i].st.expressible, v.groups[i].st.mape_pct,
			    v.groups[i].st.bias_pct);
	cr_expect_eq(v.ngroups, 4);
	cr_expect_leq(v.all.mape_pct, 19.0, "MAPE %.2f%%", v.all.mape_pct);
	cr_expect_leq(v.all.median_pct, 15.5, "median %.2f%%", v.all.median_pct);
	free(out);
	cvc_proj_validation_release(&v);
}

#define AUTOMODEL CVC_SOURCE_DIR "/tests/data/nemo-automodel-offshared.csv"

/*
 * NeMo AutoModel's pre-training table (tests/data/nemo-automodel-offshared.csv:
 * DeepSeek-V3, Kimi K2, Qwen3-30B-A3B, GPT-OSS on DGX H100, BF16, named as
 * the table prints them: "DeepSeek V3 671B", "Qwen3 MoE 30B") is
 * NeMo's PyTorch backend, FSDP2 with Transformer Engine kernels: a row
 * naming it is a PyTorch stack, not NeMo's Megatron-Core one, though its
 * source is NVIDIA-NeMo's.  Read as Megatron its rows were +26% (MAPE
 * 25.76%, every row fast); as PyTorch FSDP 16.42% (median 14.21%, bias
 * +14.49%); with DeepEP's measured shares at hidden 2048 (models/epcomm.c)
 * 17.64%: DeepSeek-V3 +28% and +7%, Kimi K2 +36%, Qwen3-30B-A3B -2%,
 * GPT-OSS-20B +21%, GPT-OSS-120B -12% (EP 64 over 8 nodes, its RDMA at
 * hidden 2880 now slower).  AutoModel's DeepSeek-V3 has no multi-token
 * prediction module (vlaunch.c): priced without the catalog's MTP layer,
 * the set goes 14.00% -> 13.65% (DeepSeek-V3 -3.9% and -19.8% -> -2.8% and
 * -18.8%), and its two rows' TFLOP/s then give their tokens/s within 1%
 * under megatron-causal, as they did not with it.  The bound holds that
 * figure as a regression guard, not a target.
 */
Test(offshared, automodel_rows_are_a_pytorch_stack)
{
	cvc_proj_validation v;
	char *out = tu_validate(AUTOMODEL, NULL, &v, CVC_OK);
	char line[8192];
	int n = 0;

	cr_expect_eq(v.all.rows, 6);
	cr_expect_eq(v.all.expressible, 6, "%d of 6 rows projected", v.all.expressible);
	for (int i = 0; row_line(out, "DeepSeek V3 671B", "H100", i, line, sizeof line); i++, n++) {
		cr_expect(strstr(line, "framework=pytorch (NeMo AutoModel"), "%s", line);
		cr_expect(strstr(line, "(deepseek-v3 in cvc's catalog"), "%s", line);
		cr_expect(strstr(line, "mtp_layers=0 (the launcher's model has none: "
				       "NVIDIA-NeMo/Automodel"), "%s", line);
	}
	cr_expect_eq(n, 2);
	cr_assert(row_line(out, "GPT-OSS 120B", "H100", 0, line, sizeof line));
	cr_expect(strstr(line, "framework=pytorch (NeMo AutoModel"), "%s", line);
	cr_expect(!strstr(line, "framework=megatron"), "%s", line);
	cr_log_info("NeMo AutoModel: %d rows, MAPE %.2f%%, median %.2f%%, bias %+.2f%%",
		    v.all.expressible, v.all.mape_pct, v.all.median_pct, v.all.bias_pct);
	cr_expect_leq(v.all.mape_pct, 14.0, "MAPE %.2f%%", v.all.mape_pct);
	free(out);
	cvc_proj_validation_release(&v);
}

#define BRIDGE2602 CVC_SOURCE_DIR "/tests/data/megatron-bridge-26.02-offshared.csv"

/*
 * The 26.02 rows of Megatron-Bridge's performance summary that ../shared
 * does not hold (tests/data/megatron-bridge-26.02-offshared.csv, @df0289c1):
 * the GB300 table, the DGX B300 table (a GPU no other file has), and
 * GPT-OSS-120B and Qwen3-235B-A22B on GB200, B200 and H100.  Every row is
 * projected: the H100 Qwen3-235B-A22B row (TP 2, EP 32 on 256 GPUs) only
 * with etp 1, which its recipe sets (vrecipe.c; before, validate inferred it
 * because EP x TP does not fit in TP x DP x CP); the B300 rows are priced
 * as B300.
 * At 1d4c316 + the rule: MAPE 29.45%, median 15.91%, bias +14.45%; GB300
 * 15.11%, B300 59%, B200 36%, GB200 34%: GPT-OSS-120B at EP 64 is +24..+148%
 * (docs/MODELS.md "Off the shared set").  With each rank routing its
 * sequence shard (test_moetokens.c) the H100 Qwen3-235B-A22B row at TP 2
 * moved from +12% to +35%: 30.60%.  With each transcribed recipe's
 * dispatcher and 1F1B overlap instead of one rule for the stack (vrecipe.c:
 * GPT-OSS-120B on B200 and B300 on alltoall without the overlap, +56/+148%
 * -> +12/+63%; Qwen3-235B-A22B on H100 on alltoall with it, +35% -> +8%):
 * 22.83%.  The bound holds that figure as a regression guard, not a target.
 */
Test(offshared, bridge_26_02_rows)
{
	cvc_proj_validation v;
	struct cvc_proj_validate_opts o = {.by = "gpu"};
	char *out = tu_validate(BRIDGE2602, &o, &v, CVC_OK);
	char line[8192];

	cr_expect_eq(v.all.rows, 20);
	cr_expect_eq(v.all.expressible, 20, "%d of 20 rows projected", v.all.expressible);
	cr_assert(row_line(out, "Qwen3-235B-A22B", "H100", 0, line, sizeof line));
	cr_expect(strstr(line, "etp=1 (Megatron-Bridge's performance recipes for qwen3-235b-a22b"),
		  "%s", line);
	cr_assert(row_line(out, "Qwen3-30B-A3B", "B300 (DGX", 0, line, sizeof line));
	cr_expect(strstr(line, "gpu=B300 ("), "%s", line);
	cr_log_info("Megatron-Bridge 26.02 off the shared set: %d rows, MAPE %.2f%%, median %.2f%%, "
		    "bias %+.2f%%", v.all.expressible, v.all.mape_pct, v.all.median_pct,
		    v.all.bias_pct);
	for (size_t i = 0; i < v.ngroups; i++)
		cr_log_info("  %s: %d rows, MAPE %.2f%%, bias %+.2f%%", v.groups[i].key,
			    v.groups[i].st.expressible, v.groups[i].st.mape_pct,
			    v.groups[i].st.bias_pct);
	cr_expect_leq(v.all.mape_pct, 23.5, "MAPE %.2f%%", v.all.mape_pct);
	free(out);
	cvc_proj_validation_release(&v);
}

/*
 * A zoo file's rows: all n read and projected, the first row on gpu says
 * want, and the MAPE stays within bound (a regression guard); v filled.
 */
static void zoo_rows(const char *path, int n, const char *gpu, const char *want,
		     double bound, cvc_proj_validation *v)
{
	struct cvc_proj_validate_opts o = {0};
	char *out = tu_validate(path, &o, v, CVC_OK);
	char line[8192];

	cr_expect_eq(v->all.rows, n);
	cr_expect_eq(v->all.expressible, n, "%d of %d rows projected", v->all.expressible, n);
	cr_assert(row_line(out, "Qwen3-235B-A22B", gpu, 0, line, sizeof line));
	cr_expect(strstr(line, want), "%s", line);
	cr_log_info("%s: %d rows, MAPE %.2f%%, bias %+.2f%%", path, v->all.expressible,
		    v->all.mape_pct, v->all.bias_pct);
	cr_expect_leq(v->all.mape_pct, bound, "MAPE %.2f%%", v->all.mape_pct);
	free(out);
}

#define ZOO CVC_SOURCE_DIR "/tests/data/megatron-moe-modelzoo-qwen3-offshared.csv"

/*
 * Megatron-Core's own MoE model zoo (yanring/Megatron-MoE-ModelZoo
 * best_practice/Qwen3/readme.md @c1ad0b5c): Qwen3-235B-A22B on 256 H100s
 * in five layouts, each row's dispatcher, recompute, FSDP and all-to-all
 * overlap as the table prints them, the flags its model configuration
 * sets (model_configs/benchmarking/Qwen3-235B-A22B.yaml @1ed4179f: fused
 * router and permutation, no --tp-comm-overlap) as cells.  Megatron-LM's
 * command line, so gradients reduce in fp32.  Every row is projected;
 * MAPE 28.23%, bias +28.23% (cvc fast: +7%, +31%, +4%, +44%, +55%; the
 * TP 4 and PP 32 layouts, with a rank's 1024 and 2048 tokens, the
 * farthest: docs/MODELS.md "Off the shared set").  A regression guard.
 */
Test(offshared, megatron_moe_modelzoo_qwen3_rows)
{
	cvc_proj_validation v;

	zoo_rows(ZOO, 5, "H100", "grad_reduce_fp32=1 (Megatron-LM's arguments.py", 29.0, &v);
	cvc_proj_validation_release(&v);
}

#define ZOO_MORE CVC_SOURCE_DIR "/tests/data/megatron-moe-modelzoo-qwen3-more-offshared.csv"

/*
 * The zoo readme's later revision (best_practice/qwen3/readme.md
 * @020b8136): Qwen3-235B-A22B at 16k-128k tokens on 256 H100s (forced
 * balance), and on GB200 and GB300 NVL72 racks with HybridEP, each row's
 * cells from the command printed under its table.  They give TFLOP/s only,
 * counted as Megatron-LM now counts them (megatron-causal, test_mcore_ways
 * megatron_causal_flops_are_what_the_zoo_prints).  Every row is projected.
 * MAPE 7.45%, bias +1.06%, 87.5% of the intervals hold: H100 -0.3%, -1.9%,
 * -3.0%, -2.5% from 16k to 128k; GB200 +8.2% (bf16) and +25.8% (MXFP8,
 * whose activation offload cvc does not price); GB300 -5.4% and -12.5%.
 * Counted non-causally, as the megatron convention does, the same rows
 * read 36.17% (bias +36%); with the expert groups spread over the context-
 * parallel ranks (before moe.c ep_xfer followed MoE parallel folding,
 * test_mcore_ways), 12.58% with the H100 rows at 64k and 128k -20%.  A
 * regression guard, not a target.
 */
Test(offshared, megatron_moe_modelzoo_qwen3_more_rows)
{
	cvc_proj_validation v;

	zoo_rows(ZOO_MORE, 8, "GB300", "nvlink_domain=72", 8.0, &v);
	cr_expect_gt(v.all.bias_pct, -5.0, "bias %+.2f%%", v.all.bias_pct);
	cvc_proj_validation_release(&v);
}

#define LADDER CVC_SOURCE_DIR "/tests/data/deepseek-v3-gb200-ladder-offshared.csv"

/*
 * Megatron-LM's DeepSeek-V3 GB200 optimization guide, step by step
 * (tests/data/deepseek-v3-gb200-ladder-offshared.csv: 256 GB200, MXFP8,
 * TP 1, PP 8 x VPP 4, EP 32, the steps cvc can state as fields).  Every
 * row is projected; MAPE 56.70%, every row fast: +105% at the 494 TFLOP/s
 * baseline, whose host-bound inefficiencies (allocation kernels, a slow
 * permute kernel, no NUMA binding) cvc has no field for, down to +19% at
 * HybridEP (943.56).  DeepEP inside the NVL72 domain is priced 21% slower
 * than the all-to-all it replaced; it measured 4.8% faster (docs/MODELS.md
 * "Off the shared set").  A regression guard, not a target.
 */
/*
 * A set of n rows, every one projected, the row holding cell read from
 * arch in cvc's catalog, its MAPE at most bound (logged under name).
 */
static void whole_set(const char *path, const char *name, int n, const char *cell,
		      const char *arch, double bound)
{
	cvc_proj_validation v;
	char *out = tu_validate(path, NULL, &v, CVC_OK);
	char line[8192], want[128];

	cr_expect_eq(v.all.rows, n);
	cr_expect_eq(v.all.expressible, n, "%d of %d rows projected", v.all.expressible, n);
	cr_assert(tu_line_with(out, cell, line, sizeof line));
	snprintf(want, sizeof want, "(%s in cvc's catalog", arch);
	cr_expect(strstr(line, want), "%s", line);
	cr_log_info("%s: %d rows, MAPE %.2f%%, bias %+.2f%%", name, v.all.expressible,
		    v.all.mape_pct, v.all.bias_pct);
	cr_expect_leq(v.all.mape_pct, bound, "MAPE %.2f%%", v.all.mape_pct);
	free(out);
	cvc_proj_validation_release(&v);
}

Test(offshared, deepseek_v3_gb200_ladder_off_the_shared_set)
{
	whole_set(LADDER, "DeepSeek-V3 GB200 ladder", 7, ",943.56,", "deepseek-v3", 57.5);
}

#define GROK1 CVC_SOURCE_DIR "/tests/data/dgxc-grok1-gb200-h100-2504-offshared.csv"

/*
 * NVIDIA/dgxc-benchmarking's Grok-1 314B recipe (grok1/README.md @1f6d9f40,
 * NeMo 25.04): a model family the shared files lack (8 GeGLU experts, top
 * 2) on 128-512 GB200 (TP 4, EP 8 x ETP 4, PP 1) and 512 H100 (TP 4, PP 8 x
 * VP 8, CP 2, EP 8), BF16 and FP8, the step time measured.  Every row is
 * projected from the catalog's grok-1: MAPE 8.95%, GB200 -6..-11% (slow),
 * H100 BF16 -4.6%, FP8 +12.4% (9.00% since the ends' TP collectives are
 * priced).  A regression guard, not a target.
 */
Test(offshared, grok1_off_the_shared_set)
{
	whole_set(GROK1, "Grok-1 GB200/H100 (dgxc 25.04)", 8, ",15.933,", "grok-1", 10.0);
}

#define TT_DEEPEP CVC_SOURCE_DIR "/tests/data/torchtitan-deepep-qwen3-b200-offshared.csv"

/*
 * torchtitan's DeepEP README (torchtitan/distributed/deepep/README.md
 * @022f885f): Qwen3-30B-A3B on 1-16 nodes of 8 B200, FSDP2 over every GPU,
 * EP 8 inside a node, torch.compile, full activation checkpointing, forced
 * balance; and its default-EP baseline on one node.  A PyTorch-native MoE
 * stack on the Blackwell generation: every row projected fast, the DeepEP
 * rows +19..+27% (cvc flat where the runs lose 6% from 1 to 16 nodes), the
 * default all-to-all +75% (the README measures DeepEP 49% faster; cvc
 * prices the two 1% apart).  MAPE 31.33%.  A regression guard, not a target.
 */
Test(offshared, torchtitan_deepep_off_the_shared_set)
{
	whole_set(TT_DEEPEP, "torchtitan DeepEP Qwen3-30B-A3B B200", 7, "14,796",
		  "qwen3-30b-a3b", 32.5);
}

#define MOE_FAMILIES CVC_SOURCE_DIR "/tests/data/nemo-dgxc-moe-families-offshared.csv"

/*
 * MoE families the shared files lack, on GB200, B200 and H100: Mixtral
 * 8x7B and 8x22B (NeMo 25.02 / 25.04 performance summaries), Llama 4 Scout
 * (NeMo 25.07) and Maverick (NVIDIA/dgxc-benchmarking llama4 @1f6d9f40 and
 * @14fb6ae6, step times on 128-512 GB200 and 512 H100), transcribed by a
 * helper with each row's source and derivations in its notes.  Every row
 * is projected from the catalog: MAPE 13.30%, bias +13.26% (Mixtral 8x7B
 * +3.9%, 8x22B +12.5%, Scout -0.3%, Maverick +17.0%: its GB200 FP8 rows
 * +24..+26%, docs/MODELS.md "Off the shared set").  A regression guard,
 * not a target.
 */
Test(offshared, nemo_dgxc_moe_families_off_the_shared_set)
{
	whole_set(MOE_FAMILIES, "Mixtral / Llama 4 (NeMo, dgxc)", 14, ",13783,",
		  "llama4-scout-17b-16e", 14.5);
}

#define BRIDGE_2608 CVC_SOURCE_DIR "/tests/data/megatron-bridge-2602-2608-offshared.csv"

/*
 * Megatron-Bridge's performance summaries of releases 26.02.01 to 26.08.01
 * on GB300, B300, GB200 and B200, read in forks that carry the upstream
 * page (each row names its fork, commit and section), less every row
 * ../shared/published/blackwell-moe-runs.csv already holds: 99 rows of
 * models cvc's catalog knows, the next Blackwell generation above all (60
 * GB300 rows, 19 B300).  Every row projected: MAPE 22.88%, bias -5.46%;
 * GB300 -15.0% (Llama 3 -20.2% on 21 rows, where one layout measures 1.20x
 * GB200 in the same release and cvc's GB300 differs from its GB200 only by
 * named figures), GPT-OSS-120B +13..+47% everywhere, and the later releases
 * slower in cvc (26.08.01 -25.7%: docs/MODELS.md "Off the shared set").
 * A regression guard, not a target.
 */
Test(offshared, megatron_bridge_2602_to_2608_off_the_shared_set)
{
	whole_set(BRIDGE_2608, "Megatron-Bridge 26.02.01-26.08.01 (GB300, B300)", 99, ",7002,",
		  "llama3-70b", 24.0);
}

#define NEMOTRON3 CVC_SOURCE_DIR "/tests/data/megatron-bridge-nemotron3-offshared.csv"

/*
 * Nemotron 3 Super and Ultra (LatentMoE hybrid Mamba-Transformer: a family
 * the shared files lack) in Megatron-Bridge's summaries of 26.04 to
 * 26.08.01 on GB300, GB200, B300 and B200, each with its recipe's
 * dispatcher, CUDA graphs and recompute (nemotron_3_workload_base_configs.py
 * @f601ba97), and the one VR200 figure published (PR #5721, its tokens/s
 * derived from the GB300 row of the same layout).  Every row projected,
 * with the two multi-token-prediction depths the recipes run (the rows'
 * own TFLOP/s count them: latentmoe.megatron_count_reads_back_the_
 * published_tflops) and Ultra's recipe offloading its experts' fused MLP
 * (offload_modules), and the fused grouped MLP the Ultra GB300 and VR200
 * rows name: MAPE 41.50% (56.57% without the first two, 40.92% without
 * the third), fast everywhere but on B200 (Super: B200 -7.8%, GB300 +23%,
 * GB200 at TP 2 +54%, B300 at EP 8 +79%; Ultra: GB300 +12.3%, GB200 +26%;
 * the VR200 row +106%: cvc prices Rubin far above GB300 on that layout
 * where it measured 1.40x).  A regression guard, not a target.
 */
Test(offshared, nemotron3_latent_moe_off_the_shared_set)
{
	whole_set(NEMOTRON3, "Nemotron 3 Super / Ultra (Megatron-Bridge)", 45, ",9623,",
		  "nemotron-3-super-120b-a12b", 42.0);
}

#define MCORE_REPORT CVC_SOURCE_DIR "/tests/data/megatron-core-moe-report-offshared.csv"

/*
 * NVIDIA's Megatron-Core MoE report (arXiv 2603.07685v2): Table 11's
 * force-balanced DeepSeek-V3 and Qwen3-235B-A22B runs on GB300, GB200 and
 * H100, each in Table 20's layout with Appendix B.2's dispatcher,
 * recompute, all-to-all overlap and CUDA graphs; less the two rows the
 * model zoo's readme gives alike.  Every row projected: MAPE 16.03%, bias
 * +12.27%; DeepSeek-V3 GB300 +17.8% (cvc 1.29x its GB200 row where it
 * measured 1.18x), H100 +27.0%, Qwen3-235B-A22B GB200 BF16 +31.9%: worse
 * than the naive 40% of peak (12.51%), the four rows with the overlap
 * all fast.  A regression guard, not a target.
 */
Test(offshared, megatron_core_moe_report_off_the_shared_set)
{
	whole_set(MCORE_REPORT, "Megatron-Core MoE report (GB300, GB200, H100)", 7, ",1233,",
		  "deepseek-v3", 17.0);
}

#define MLM_RECIPES CVC_SOURCE_DIR "/tests/data/megatron-lm-moe-recipes-offshared.csv"

/*
 * Megatron-LM's MoE recipe index (examples/moe_recipes, every flag in a
 * YAML; TFLOP/s of PR #5728): Qwen3-235B-A22B on H100, GB200 and GB300 and
 * Qwen3-30B-A3B on H100 and GB200, all on HybridEP with the fused
 * permutation and router, dropless, forced balance; three of them with
 * full-iteration CUDA graphs and the fused grouped MLP.  Every row
 * projected and every one fast: MAPE 26.80% (BF16 and blockwise FP8
 * +22..+27%, MXFP8 with layer graphs on GB200 +44..+55%, where that recipe
 * measures 0.95x the BF16 one; MXFP8 with full-iteration graphs and the
 * fused MLP +6..+21%, where they measure 1.25x and 1.38x the layer-graph
 * recipes and cvc prices 1.05x).  The stack as these runs state it is what
 * cvc prices too fast (docs/MODELS.md "Off the shared set").  A regression
 * guard, not a target.
 */
Test(offshared, megatron_lm_moe_recipes_off_the_shared_set)
{
	whole_set(MLM_RECIPES, "Megatron-LM MoE recipes (Qwen3, H100, GB200 and GB300)", 9,
		  ",302.0,", "qwen3-235b-a22b", 28.0);
}

#define PAI_H800 CVC_SOURCE_DIR "/tests/data/pai-megatron-patch-qwen3-h800-offshared.csv"

/*
 * Another stack: Alibaba's Pai-Megatron-Patch (its Qwen3 script over
 * Megatron-LM, the alltoall dispatcher, no NVIDIA performance recipe) on
 * H800, as one user measured it (issues #643 and #658): Qwen3-30B-A3B on 16
 * GPUs at 8192 tokens with an unpadded capacity factor, and Qwen3-235B-A22B
 * on 256 GPUs, PP 32 x VPP 3, full or selective recompute.  The precision
 * is not stated (a guess, bf16).  Every row projected: MAPE 16.89%, bias
 * +9.72%; the 30B rows +27..+29% (cvc's MFU 30.5% where the measured
 * step is 24.0% by the same count), the 235B rows -12.6..+20.7%:
 * micro-batch 4 with full recompute measures 1.08x (TP 1) and 1.03x (TP 2)
 * micro-batch 1 with selective recompute, where cvc prices 0.91x and
 * 0.78x.  A regression guard, not a target.
 */
Test(offshared, pai_megatron_patch_h800_off_the_shared_set)
{
	whole_set(PAI_H800, "Pai-Megatron-Patch Qwen3 (H800)", 6, ",42.537,", "qwen3-235b-a22b",
		  18.0);
}
