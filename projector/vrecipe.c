/*
 * vrecipe.c - what Megatron-Bridge's performance recipe for a named model
 * on a named GPU sets, for a row of that stack that does not say it.
 *
 * A recipe's recompute and its FP8 scaling are what a run computes and
 * holds: on 16 H100 the Nemotron-3-Nano layout (TP 1, EP 8, micro-batch 1,
 * 8K tokens) does not fit in 80 GB with Megatron-Core's default selective
 * recompute (core_attn) by cvc's own memory model, and the recipe
 * recomputes the whole MoE layer, the norms and the experts' activation to
 * make it fit.  Those are taken here, and so is how a recipe moves tokens
 * where its expert parallelism spans NVLink domains: its dispatcher and
 * whether it overlaps the all-to-alls in the 1F1B schedule, which the
 * recipes set model by model and layout by layout (no rule for the stack
 * holds: Megatron-Bridge's WorkloadBaseConfig leaves moe_a2a_overlap
 * False, and the presets turn it on for some), and the gradient
 * reduce-scatter where a recipe keeps it after the backward.  A recipe
 * that names HybridEP across domains is priced on DeepEP, said: that
 * exchange nobody has measured (docs/MODELS.md "HybridEP").  How kernels
 * launch (CUDA graphs) is taken only from the token-drop presets a row's
 * label names (vrecipe_graphs()).
 *
 * Each entry names the recipe function and the commit it was read at
 * (docs/SCENARIOS.md "validate", docs/MODELS.md "Mamba-2").  A row whose
 * cells state a setting keeps it.
 */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "cvc/cvc_model.h"
#include "vrow.h"

struct recipe {
	const char *model; /* cvc's catalog name (projector/archs.yaml) */
	const char *gpus;  /* catalog GPU names, '|' separated */
	int dtype;         /* the row's CVC_PROJ_* dtype; -1: any */
	int fp8_recipe;    /* CVC_PROJ_FP8_*; -1: none set */
	int recompute;     /* CVC_PROJ_RECOMP_*; -1: none set */
	const char *modules; /* Megatron-Core's --recompute-modules, ',' joined */
	const char *source;
	double pp, ep;       /* the recipe's layout, which a row must have; 0: any */
	int a2a_overlap;     /* moe_a2a_overlap: 0, 1; -1: none set */
	int dp_overlap;      /* overlap_grad_reduce where the recipe turns it
				off; -1: cvc's default (on) */
	int disp;            /* CVC_PROJ_DISPATCH_* the recipe's tokens move
				by (HybridEP across domains: DeepEP, said);
				-1: none set */
	const char *disp_why; /* the recipe's words for it, or why it differs */
};

#define NANO "nemotron-3-nano-30b-a3b"
#define MB "NVIDIA-NeMo/Megatron-Bridge perf_recipes/nemotronh/"
#define DSV3 "deepseek-v3"
#define QWEN30 "qwen3-30b-a3b"
#define DS "NVIDIA-NeMo/Megatron-Bridge scripts/performance/configs/deepseek/"
#define QW "NVIDIA-NeMo/Megatron-Bridge scripts/performance/configs/qwen/qwen3_workload_base_configs.py @01b2977e "

#define GO "NVIDIA-NeMo/Megatron-Bridge scripts/performance/configs/gpt_oss/gpt_oss_workload_base_configs.py @07eea52d "
#define GO26 "NVIDIA-NeMo/Megatron-Bridge scripts/performance/configs/gpt_oss/gpt_oss_workload_base_configs.py @1e7adfa9 "
#define NOA2A "WorkloadBaseConfig's moe_a2a_overlap = False, scripts/performance/utils/utils.py"

static const struct recipe recipes[] = {
	{NANO, "H100-SXM", CVC_PROJ_FP8, CVC_PROJ_FP8_CURRENT, CVC_PROJ_RECOMP_SELECTIVE,
	 "moe,layernorm,core_attn,moe_act",
	 MB "h100/nemotronh.py @d861fb2f nemotron_3_nano_pretrain_16gpu_h100_fp8cs_config", 0, 0, -1,
	 -1, -1, NULL},
	{NANO, "H100-SXM", CVC_PROJ_BF16, -1, CVC_PROJ_RECOMP_SELECTIVE, "moe,layernorm",
	 MB "h100/nemotronh.py @d861fb2f nemotron_3_nano_pretrain_16gpu_h100_bf16_config", 0, 0, -1,
	 -1, -1, NULL},
	/* no recompute: the model recipe's recompute_granularity = None
	 * (recipes/nemotronh/nemotron_3_nano.py @04d63863), kept by the
	 * Blackwell performance recipes */
	{NANO, "B200|GB200", -1, -1, CVC_PROJ_RECOMP_NONE, NULL,
	 MB "b200/nemotronh.py @130e14d4, gb200/nemotronh.py @c830d230 "
	    "(nemotron_3_nano_pretrain_8gpu_*_config)", 0, 0, -1, -1, -1, NULL},
	/*
	 * DeepSeek-V3, by the layouts the recipes publish: each of these
	 * recomputes what the same layout's recipe did in every version read
	 * (deepseek_llm_pretrain.py @0132842, workload_base_configs.py
	 * @0fa501a, deepseek_workload_base_configs.py @0426418); their FP8 is
	 * current scaling (FP8_CS) or a format the row names (FP8_MX, FP8_SC).
	 * The GB200 recipes changed their recompute between versions: taken
	 * by the row's release (dated[] below), and here only their FP8
	 * scaling (the entry below).  PP 16 / EP 8 stays in
	 * one board.  On H100 the recipe of the rows' release (25.09) runs
	 * DeepEP with the 1F1B overlap (enable_deepep=True,
	 * set_moe_a2a_overlap_overrides); @0426418's HybridEP without it came
	 * later.
	 */
	{DSV3, "B200", -1, CVC_PROJ_FP8_CURRENT, CVC_PROJ_RECOMP_SELECTIVE, "mla_up_proj",
	 DS "deepseek_workload_base_configs.py @0426418 DEEPSEEK_V3_PRETRAIN_CONFIG_B200_V1, "
	    "deepseek_llm_pretrain.py @0132842 deepseek_v3_b200_256gpus_*_config", 16, 8, -1, -1,
	 -1, NULL},
	{DSV3, "B200", -1, CVC_PROJ_FP8_CURRENT, CVC_PROJ_RECOMP_SELECTIVE, "mla_up_proj,mlp",
	 DS "deepseek_workload_base_configs.py @0426418 DEEPSEEK_V3_PRETRAIN_CONFIG_B200_FP8_MX_V2",
	 8, 32, 1, -1, CVC_PROJ_DISPATCH_DEEPEP, "moe_flex_dispatcher_backend=\"deepep\""},
	/* GB200 and GB300, any layout: the scaling only (an FP8 that names
	 * none is the presets' "cs"); the recompute by release (dated[]) */
	{DSV3, "GB200|GB300", -1, CVC_PROJ_FP8_CURRENT, -1, NULL,
	 DS "deepseek_llm_pretrain.py @0132842 deepseek_v3_gb200_256gpus_fp8_config(fp8_recipe=\"cs\"); "
	    "deepseek_workload_base_configs.py @0426418 DEEPSEEK_V3_PRETRAIN_CONFIG_GB200_FP8_CS_V1",
	 0, 0, -1, -1, -1, NULL},
	{DSV3, "H100-SXM", -1, CVC_PROJ_FP8_CURRENT, CVC_PROJ_RECOMP_SELECTIVE, "mla_up_proj,mlp",
	 DS "deepseek_workload_base_configs.py @0426418 DEEPSEEK_V3_PRETRAIN_CONFIG_H100_V1, "
	    "deepseek_llm_pretrain.py @0132842 deepseek_v3_h100_1024gpus_*_config", 8, 64, 1, 0,
	 CVC_PROJ_DISPATCH_DEEPEP, "enable_deepep=True (@0132842)"},
	/*
	 * Qwen3-30B-A3B on 16 H100 at EP 16: "the 16-GPU topology fits without
	 * activation recomputation" (recompute_granularity = None), and the
	 * H100 presets are BF16 and FP8_CS only, so an fp8 row that names no
	 * scaling ran current scaling.  Its EP 16 spans two HGX boards on
	 * HybridEP without the 1F1B overlap.
	 */
	{QWEN30, "H100-SXM", -1, CVC_PROJ_FP8_CURRENT, CVC_PROJ_RECOMP_NONE, NULL,
	 "NVIDIA-NeMo/Megatron-Bridge src/megatron/bridge/recipes/qwen/h100/qwen3_moe.py @04eb4f8d "
	 "qwen3_30b_a3b_pretrain_16gpu_h100_bf16_config; scripts/performance/configs/qwen/"
	 "qwen3_workload_base_configs.py @f29a269f QWEN3_30B_A3B_PRETRAIN_CONFIG_H100_FP8_CS_V1",
	 1, 16, 0, -1, CVC_PROJ_DISPATCH_DEEPEP,
	 "its HybridEP, which nobody has measured across NVLink domains, priced on DeepEP"},
	/* Qwen3-30B-A3B in every other layout, on H100 and Blackwell: every
	 * preset read sets no recompute (set_qwen3_common_configs:
	 * recompute_granularity = None), the 25.09 token-drop ones too
	 * (set_qwen3_30b_a3b_specific_overrides), and an FP8 that names no
	 * scaling is current scaling (their fp8_recipe default "cs"; fp8_cs,
	 * fp8_mx by name later) */
	{QWEN30, "H100-SXM|B200|GB200|B300|GB300", -1, CVC_PROJ_FP8_CURRENT, CVC_PROJ_RECOMP_NONE,
	 NULL,
	 "NVIDIA-NeMo/Megatron-Bridge scripts/performance/configs/qwen/qwen3_llm_pretrain.py "
	 "@05c0c90f set_qwen3_common_configs; configs/qwen3/qwen3_30b_a3b_llm_pretrain.py @4054233a "
	 "set_qwen3_30b_a3b_specific_overrides",
	 0, 0, -1, -1, -1, NULL},
	/* Qwen3-235B-A22B on 256 H100 (TP 2, PP 8, VPP 4, EP 32): the
	 * alltoall dispatcher with the 1F1B overlap; no recompute set */
	{"qwen3-235b-a22b", "H100-SXM", -1, CVC_PROJ_FP8_CURRENT, -1, NULL,
	 QW "QWEN3_235B_A22B_PRETRAIN_CONFIG_H100_FP8_CS_V1, _BF16_V1", 8, 32, 1, -1,
	 CVC_PROJ_DISPATCH_ALLTOALL, "moe_token_dispatcher_type=\"alltoall\""},
	/* GPT-OSS-120B on 64 B200 and B300 at EP 64: the model recipe's
	 * alltoall dispatcher (recipes/gpt_oss/gpt_oss.py
	 * gpt_oss_120b_pretrain_config), no flex backend and no 1F1B overlap
	 * in the preset; B200 recomputes the norms and the experts'
	 * activation, B300 nothing (the model recipe's recompute_granularity
	 * None) */
	{"gpt-oss-120b", "B200", -1, -1, CVC_PROJ_RECOMP_SELECTIVE, "layernorm,moe_act",
	 GO "GPT_OSS_120B_PRETRAIN_CONFIG_B200_BF16_V1; " NOA2A, 1, 64, 0, -1,
	 CVC_PROJ_DISPATCH_ALLTOALL, "gpt_oss.py's moe_token_dispatcher_type = \"alltoall\""},
	/* GPT-OSS-120B in any other layout: B200, GB200 and H100 recompute
	 * the norms and the experts' activation in the 25.11 and 26.02
	 * presets, GB300 nothing (25.11's workload_base_configs.py @6b296ac1,
	 * 26.02's gpt_oss_workload_base_configs.py @1e7adfa9) */
	{"gpt-oss-120b", "B200|GB200|H100-SXM", -1, -1, CVC_PROJ_RECOMP_SELECTIVE,
	 "layernorm,moe_act",
	 GO26 "GPT_OSS_120B_PRETRAIN_CONFIG_{B200,GB200,H100}_BF16_V1", 0, 0, -1, -1, -1, NULL},
	{"gpt-oss-120b", "GB300", -1, -1, CVC_PROJ_RECOMP_NONE, NULL,
	 GO26 "GPT_OSS_120B_PRETRAIN_CONFIG_GB300_BF16_V1", 0, 0, -1, -1, -1, NULL},
	{"gpt-oss-120b", "B300", -1, -1, CVC_PROJ_RECOMP_NONE, NULL,
	 GO "GPT_OSS_120B_PRETRAIN_CONFIG_B300_BF16_V1; " NOA2A, 1, 64, 0, -1,
	 CVC_PROJ_DISPATCH_ALLTOALL, "gpt_oss.py's moe_token_dispatcher_type = \"alltoall\""},
};

/*
 * What the recipe of a dated release ran that validate does not assume:
 * said on that release's rows, so the error they show says where it comes
 * from (docs/MODELS.md "Published MoE rows that disagree with themselves").
 * The rows do not state it, and cvc prices part of it faster than it ran
 * (HybridEP at these shapes: Known gaps there); each row says beside its
 * own the projection with all of it priced (validate.c ran_features()).
 * The first entry that matches wins, so a later release comes first.
 */
struct ran {
	const char *model, *gpus;
	double mb;          /* the preset's micro-batch; 0: any */
	int year, month;    /* from the release of that month */
	const char *what, *source;
	/* of what ran, what cvc can price (vrecipe_ran_alt()): -1 none;
	 * graphs as cuda_graphs (2: the whole forward and backward) */
	int graphs, overlap, disp, fp8_attn, fused;
};

static const struct ran rans[] = {
	{QWEN30, "GB200", 0, 2026, 6,
	 "full-iteration CUDA graphs, the 1F1B all-to-all overlap, the CuTe-DSL fused grouped MLP and "
	 "FP8 attention, on HybridEP",
	 "Megatron-Bridge PR #4249 'Enable Qwen3 GB200/GB300/GB300 MXFP8 CuTeDSL Fusion and Full-Iter "
	 "CUDA Graphs for 26.06'; the path's settings listed by PR #4606",
	 2, 1, CVC_PROJ_DISPATCH_HYBRIDEP, 1, 1},
	{QWEN30, "GB200", 0, 2026, 4,
	 "HybridEP on the flex dispatcher with CUDA graphs",
	 "Megatron-Bridge PR #2499 (2026-02-23): GB200's preset had them; 26.04 is Megatron-Bridge "
	 "0.4.0, docs/releases/software-versions.md",
	 1, -1, CVC_PROJ_DISPATCH_HYBRIDEP, -1, -1},
	{QWEN30, "B200", 4, 2026, 2,
	 "HybridEP on the flex dispatcher with CUDA graphs over attention, router and dispatch "
	 "preprocessing",
	 "Megatron-Bridge PR #2499 (2026-02-23, the preset's micro-batch 4), logged in the "
	 "26.04.01 container by issue #4439",
	 1, -1, CVC_PROJ_DISPATCH_HYBRIDEP, -1, -1},
	{DSV3, "GB200", 0, 2026, 6,
	 "full-iteration CUDA graphs, the 1F1B all-to-all overlap and the CuTe-DSL fused grouped "
	 "MLP, on HybridEP",
	 "Megatron-Bridge PR #4226 'DSV3 GB200 MXFP8 full-iter CG recipe', on the 26.06 branch "
	 "r0.5.0 by PR #4666; its DEEPSEEK_V3_PRETRAIN_CONFIG_GB200_FP8_MX_V1 replaces "
	 "GB200_V1's, whose moe_flex_dispatcher_backend is \"hybridep\" (the PR author's branch, "
	 "dingqingy-nv/Megatron-Bridge deepseek_workload_base_configs.py @0a0e1537)",
	 2, 1, CVC_PROJ_DISPATCH_HYBRIDEP, -1, 1},
};

/*
 * Releases the stack's own issue tracker records as regressed for a model
 * on a GPU: said on their rows, which keep their projection (cvc prices
 * layouts and features, not a release's defect) and are counted apart in
 * the summary.  The months run from..to inclusive.
 */
struct regressed {
	const char *model, *gpus;
	int dropless;            /* only rows that are not token drop */
	int from_y, from_m, to_y, to_m;
	const char *what, *source;
};

static const struct regressed regressions[] = {
	/* the issue names 25.11 against 25.09 and asks for the fix in 26.02;
	 * the 26.02 rows measure as 25.11's (H100, PP 2: 5113 against 5275
	 * tokens/s per GPU; B200, micro-batch 1: 9691 against 9299) and
	 * 26.02.01's H100 row twice that (9058), so 26.02 is taken as still
	 * regressed: docs/MODELS.md "Published MoE rows that disagree with
	 * themselves" */
	{QWEN30, "H100-SXM|B200", 1, 2025, 11, 2026, 2,
	 "dropless Qwen3-30B-A3B 2x slower than 25.09's token drop on H100 and B200",
	 "Megatron-Bridge issue #1998 (2026-01-20), '[Regression] Low QWEN3 30B B200 and H100 "
	 "performance with dropless': 'the perf in 25.11 is 2X slower than 25.09. We need to fix "
	 "this in 26.02'"},
};

/* Whether name is one of the '|'-separated names in list. */
static int one_of(const char *list, const char *name)
{
	size_t n = strlen(name);

	for (const char *p = list; *p;) {
		const char *e = strchr(p, '|');
		size_t len = e ? (size_t)(e - p) : strlen(p);

		if (len == n && !strncmp(p, name, n))
			return 1;
		if (!e)
			break;
		p = e + 1;
	}
	return 0;
}

/* Whether a table entry for model on gpus ('|'-separated catalog names)
 * is about the row's catalog model a on its GPU. */
static int is_for(const char *model, const char *gpus, const struct proj_arch *a,
		  const cvc_proj_scenario *sc)
{
	return !strcmp(model, a->name) && one_of(gpus, sc->gpu);
}

/* "Megatron-Bridge's performance recipe for M on G: SOURCE" in buf, or
 * "the same recipe" once the row has said it: a row takes several settings
 * from one recipe, and its notes hold 4 KB. */
static const char *recipe_ref(const struct vrow *r, const struct recipe *e, char *buf,
			      size_t len)
{
	if (strstr(r->assumed, e->source))
		return "the same recipe";
	snprintf(buf, len, "Megatron-Bridge's performance recipe for %s on %s: %s", e->model,
		 r->sc.gpu, e->source);
	return buf;
}

static void recompute(struct vrow *r, const struct recipe *e)
{
	char ref[400];

	if (e->recompute < 0 || !vrow_recompute_open(r))
		return;
	vrow_set_recompute(r, e->recompute, e->modules);
	if (e->modules) {
		vrow_assume(r, "recompute=selective, recompute_modules=%s (%s)", e->modules,
			    recipe_ref(r, e, ref, sizeof ref));
		return;
	}
	vrow_assume(r, "recompute=%s (%s)",
		    e->recompute == CVC_PROJ_RECOMP_NONE	   ? "none"
		    : e->recompute == CVC_PROJ_RECOMP_FULL ? "full"
							   : "selective",
		    recipe_ref(r, e, ref, sizeof ref));
}

/* Sets the 0/1 field key to the recipe's v (its own name for it: what),
 * said, where the recipe sets it (v >= 0) and the row's cells do not. */
static void recipe_flag(struct vrow *r, const struct recipe *e, const char *key, int v,
			const char *what)
{
	int f = vrow_fid(r, key);
	char ref[400];

	if (v < 0 || f < 0 || vrow_given(r, f))
		return;
	proj_field_set_num(&r->sc, f, v);
	vrow_mark(r, f);
	vrow_assume(r, "%s=%d (%s in %s)", key, v, what, recipe_ref(r, e, ref, sizeof ref));
}

/* The recipe's 1F1B all-to-all overlap, for an MoE row with expert
 * parallelism, not turned on beside full recompute.  Runs before
 * validate's dispatcher reading (vdefault.c moe_dispatch), which then
 * keeps what is marked here. */
static void a2a_overlap(struct vrow *r, const struct recipe *e)
{
	if (!(r->sc.ep > 1) || !(r->sc.experts > 1) ||
	    (e->a2a_overlap > 0 && r->sc.recompute == CVC_PROJ_RECOMP_FULL))
		return;
	recipe_flag(r, e, "ep_overlap", e->a2a_overlap, "moe_a2a_overlap");
}

/* The recipe's gradient reduce-scatter after the backward where cvc
 * would overlap it: DeepSeek-V3 on H100, "Disabling to avoid functional
 * errors" (cfg.comm_overlap.overlap_grad_reduce = False in every version
 * read: deepseek_llm_pretrain.py @0132842, deepseek_v3_pretrain_config_h100
 * in later ones).  Megatron-Core overlaps the parameter all-gather only
 * with it, so both run exposed. */
static void grad_overlap(struct vrow *r, const struct recipe *e)
{
	recipe_flag(r, e, "dp_overlap", e->dp_overlap, "overlap_grad_reduce");
}

/* The first of rans[] an MXFP8 row of its release matches, said. */
static void ran_not_assumed(struct vrow *r, const struct proj_arch *a)
{
	const cvc_proj_scenario *sc = &r->sc;

	if (sc->dtype != CVC_PROJ_FP8 || sc->fp8_recipe != CVC_PROJ_FP8_MXFP8 ||
	    !(r->stack.year > 0))
		return;
	for (size_t i = 0; i < sizeof rans / sizeof rans[0]; i++) {
		const struct ran *e = &rans[i];

		if (!is_for(e->model, e->gpus, a, sc) || (e->mb > 0 && sc->micro_batch != e->mb) ||
		    vstack_before(&r->stack, e->year, e->month))
			continue;
		vrow_note(r, "ran, not assumed (the row does not say it): %s (%s)", e->what,
			  e->source);
		r->ran = (int)i;
		return;
	}
}

int vrecipe_ran_alt(const struct vrow *r, cvc_proj_scenario *alt, char *what, size_t len)
{
	const struct ran *e;
	size_t n = 0;

	if (r->ran < 0 || (size_t)r->ran >= sizeof rans / sizeof rans[0])
		return 0;
	e = &rans[r->ran];
	*alt = r->sc;
	what[0] = 0;
#define RAN_SAY(...) (n += (size_t)snprintf(what + (n < len ? n : len), n < len ? len - n : 0, \
					    __VA_ARGS__))
	if (e->disp >= 0) {
		alt->ep_dispatcher = e->disp;
		RAN_SAY("%s", e->disp == CVC_PROJ_DISPATCH_HYBRIDEP ? "HybridEP" : "its dispatcher");
	}
	if (e->overlap > 0) {
		alt->ep_overlap = 1;
		RAN_SAY("%sthe 1F1B all-to-all overlap", n ? ", " : "");
	}
	if (e->graphs > 0) {
		alt->cuda_graphs = e->graphs;
		RAN_SAY("%s%sCUDA graphs", n ? ", " : "", e->graphs == 2 ? "full-iteration " : "");
	}
	if (e->fused > 0) {
		alt->fused_grouped_mlp = 1;
		RAN_SAY("%sthe fused grouped MLP", n ? ", " : "");
	}
	if (e->fp8_attn > 0) {
		alt->fp8_attention = 1;
		RAN_SAY("%sFP8 attention", n ? ", " : "");
	}
#undef RAN_SAY
	return n > 0;
}

/* Whether the release the date came from is a patch release: "26.02.01"
 * after the "26.02" read. */
static int patch_release(const char *text, const char *date_from)
{
	const char *p = strstr(text, date_from);

	if (!p)
		return 0;
	p += strlen(date_from);
	return p[0] == '.' && isdigit((unsigned char)p[1]);
}

/* The catalog entry of a Megatron-Bridge row's model on a named GPU, the
 * rows this file's tables are about; NULL for any other row. */
static const struct proj_arch *bridge_arch(const struct vrow *r)
{
	if (r->stack.family != VS_BRIDGE || !r->archs || !r->name[0] || !r->sc.gpu)
		return NULL;
	return proj_archs_find(r->archs, r->name);
}

/* The first of regressions[] the row's release, model and GPU match: said
 * and flagged; after the defaults, which read token drop from the text.
 * A release "26.02.01" is past 26.02's fix, so a dated patch release
 * (three numbers) is not taken for its month. */
void vrecipe_regressed(struct vrow *r)
{
	const cvc_proj_scenario *sc = &r->sc;
	const struct vstack *st = &r->stack;
	const struct proj_arch *a = bridge_arch(r);

	if (!a || !(st->year > 0))
		return;
	for (size_t i = 0; i < sizeof regressions / sizeof regressions[0]; i++) {
		const struct regressed *e = &regressions[i];

		if (!is_for(e->model, e->gpus, a, sc) || (e->dropless && sc->moe_token_drop) ||
		    !vstack_within(st, e->from_y, e->from_m, e->to_y, e->to_m) ||
		    patch_release(r->text, st->date_from))
			continue;
		r->regressed = 1;
		vrow_note(r, "regressed release: %s (%s)", e->what, e->source);
		return;
	}
}

/*
 * CUDA graphs of the token-drop schedule.  Megatron-Bridge's Qwen3-30B-A3B
 * presets of the 25.09 tables ("(tokendrop)" in their labels) apply token
 * drop by default (use_tokendrop True, apply_moe_token_drop) and capture
 * the whole iteration on B200 and GB200 (cuda_graph_impl "local",
 * cuda_graph_scope "full_iteration"), not on H100 (none set): static
 * shapes let it.  Keyed on the row's token-drop label, not on its release:
 * the dropless rows of the same layouts ran other presets, and issue #1998
 * measures them 2x slower.  cvc prices them as that graph (cuda_graphs
 * 2); the optimizer step, outside it, keeps its launches.
 */
static const struct {
	const char *model, *gpus, *source;
} token_drop_graphs[] = {
	{QWEN30, "B200|GB200",
	 "NVIDIA-NeMo/Megatron-Bridge scripts/performance/configs/qwen3/"
	 "qwen3_30b_a3b_llm_pretrain.py @4054233a qwen3_30b_a3b_{b200,gb200}_8gpus_*_config: "
	 "use_tokendrop True, cuda_graph_impl \"local\", cuda_graph_scope \"full_iteration\""},
};

void vrecipe_graphs(struct vrow *r)
{
	const struct proj_arch *a = bridge_arch(r);
	int f = vrow_fid(r, "cuda_graphs");

	if (!a || f < 0 || vrow_given(r, f) || !r->sc.moe_token_drop)
		return;
	for (size_t i = 0; i < sizeof token_drop_graphs / sizeof token_drop_graphs[0]; i++) {
		if (!is_for(token_drop_graphs[i].model, token_drop_graphs[i].gpus, a, &r->sc))
			continue;
		r->sc.cuda_graphs = 2;
		vrow_mark(r, f);
		vrow_assume(r, "cuda_graphs=2 (the token-drop recipe for %s on %s: %s; the whole "
			    "forward and backward, the optimizer step outside)", a->name, r->sc.gpu,
			    token_drop_graphs[i].source);
		return;
	}
}

/*
 * Activations offloaded to the Grace CPU (cpu_offload_layers).  Megatron-
 * Bridge's FSDP presets of the Llama 3 family on GB200 and GB300 (and one
 * on B200) keep their dense layers' activations whole (no recompute, pp 1)
 * and offload the first N layers' to the host: set_recompute_overrides
 * turns cpu_offloading on with its weights off.  Keyed on the preset's
 * layout (FSDP, pp 1, tp, micro-batch) and precision, as the row's cells
 * give them; without it 64 GB200 count Llama 3 70B's FP8 preset 80% over
 * their HBM, which the runs were not.
 */
#define LL3 "NVIDIA-NeMo/Megatron-Bridge scripts/performance/configs/llama/"
struct offload_preset {
	const char *model, *gpus;
	int dtype;       /* CVC_PROJ_BF16 or CVC_PROJ_FP8 (the FP8_CS preset) */
	double tp, mb, layers;
	const char *source;
};

static const struct offload_preset offload_presets[] = {
	{"llama3-70b", "GB200", CVC_PROJ_FP8, 1, 2, 40,
	 LL3 "llama3_workload_base_configs.py @3dafb00a LLAMA3_70B_PRETRAIN_CONFIG_GB200_FP8_CS_V1/_V2"},
	{"llama3-70b", "GB200", CVC_PROJ_BF16, 1, 1, 20,
	 LL3 "llama3_workload_base_configs.py @3dafb00a LLAMA3_70B_PRETRAIN_CONFIG_GB200_BF16_V1/_V2"},
	{"llama3-70b", "GB300", CVC_PROJ_FP8, 1, 2, 20,
	 LL3 "llama3_workload_base_configs.py @3dafb00a LLAMA3_70B_PRETRAIN_CONFIG_GB300_FP8_CS_V1/_V2"},
	{"llama3-70b", "GB300", CVC_PROJ_BF16, 1, 2, 30,
	 LL3 "llama3_workload_base_configs.py @3dafb00a LLAMA3_70B_PRETRAIN_CONFIG_GB300_BF16_V1/_V2"},
	{"llama3-70b", "B200", CVC_PROJ_FP8, 1, 1, 5,
	 LL3 "llama3_workload_base_configs.py @3dafb00a LLAMA3_70B_PRETRAIN_CONFIG_B200_FP8_CS_V1/_V2"},
	{"llama3.1-405b", "GB200", CVC_PROJ_FP8, 2, 1, 92,
	 LL3 "llama31_workload_base_configs.py @3d277f69 LLAMA31_405B_PRETRAIN_CONFIG_GB200_FP8_CS_V1"},
	{"llama3.1-405b", "GB300", CVC_PROJ_FP8, 2, 1, 10,
	 LL3 "llama31_workload_base_configs.py @3d277f69 LLAMA31_405B_PRETRAIN_CONFIG_GB300_FP8_CS_V1"},
	{"llama3.1-405b", "GB300", CVC_PROJ_BF16, 2, 1, 40,
	 LL3 "llama31_workload_base_configs.py @3d277f69 LLAMA31_405B_PRETRAIN_CONFIG_GB300_BF16_V1"},
};

void vrecipe_offload(struct vrow *r)
{
	cvc_proj_scenario *sc = &r->sc;
	const struct proj_arch *a = bridge_arch(r);
	int f = vrow_fid(r, "cpu_offload_layers");

	if (!a || f < 0 || vrow_given(r, f) || !(sc->zero >= 3) || sc->cp > 1)
		return;
	for (size_t i = 0; i < sizeof offload_presets / sizeof offload_presets[0]; i++) {
		const struct offload_preset *e = &offload_presets[i];
		cvc_proj_scenario t = *sc;

		/* the preset's layout, which Megatron-Core also runs it in
		 * (pp 1, no recompute, no CUDA graphs: proj_offload_reason()) */
		t.cpu_offload_layers = e->layers;
		if (!is_for(e->model, e->gpus, a, sc) || e->dtype != sc->dtype || sc->tp != e->tp ||
		    sc->micro_batch != e->mb || proj_offload_reason(&t))
			continue;
		sc->cpu_offload_layers = e->layers;
		vrow_mark(r, f);
		vrow_assume(r, "cpu_offload_layers=%.0f (Megatron-Bridge's performance recipe for %s on "
			    "%s: %s, cpu_offloading_num_layers)", e->layers, a->name, sc->gpu, e->source);
		return;
	}
}

/*
 * Fine-grained activation offloading (offload_modules) of the models whose
 * Megatron-Bridge recipe turns it on in the model's own configuration,
 * which every performance preset of the model starts from.  Nemotron 3
 * Ultra's offloads the routed experts' fused MLP and recomputes its
 * activation (nemotron_3_ultra_pretrain_config: offload_modules
 * ["fused_group_mlp"], recompute_modules ["moe_act"], after Megatron-LM's
 * examples/nt3/gb300_nt3.sh).  A row whose offload_modules cell is given
 * keeps it; one whose layout Megatron-Core would refuse it in is left as
 * it is (proj_offload_reason()).
 */
static const struct {
	const char *model, *modules, *source;
} offload_modules[] = {
	{"nemotron-3-ultra-550b-a55b", "fused_group_mlp",
	 "NVIDIA-NeMo/Megatron-Bridge src/megatron/bridge/recipes/nemotronh/nemotron_3_ultra.py "
	 "@6a5abeac nemotron_3_ultra_pretrain_config"},
};

void vrecipe_offload_modules(struct vrow *r)
{
	cvc_proj_scenario *sc = &r->sc;
	const struct proj_arch *a = bridge_arch(r);
	int f = vrow_fid(r, "offload_modules");

	if (!a || f < 0 || vrow_given(r, f))
		return;
	for (size_t i = 0; i < sizeof offload_modules / sizeof offload_modules[0]; i++) {
		cvc_proj_scenario t = *sc;

		t.offload_modules = offload_modules[i].modules;
		if (strcmp(offload_modules[i].model, a->name) || proj_offload_reason(&t))
			continue;
		sc->offload_modules = offload_modules[i].modules;
		vrow_mark(r, f);
		vrow_assume(r, "offload_modules=%s (Megatron-Bridge's recipe for %s: %s)",
			    offload_modules[i].modules, a->name, offload_modules[i].source);
		return;
	}
}

/*
 * Expert tensor parallelism of the models whose performance recipes set
 * it: every preset of their base configuration has
 * expert_tensor_parallel_size = 1, where Megatron-Core's default would be
 * tp.  It matters with tp > 1 only (the exchange is then the rank's
 * sequence shard, its experts whole: projector/project.c).
 */
static const struct {
	const char *model, *source;
} etp_one[] = {
	{DSV3, DS "deepseek_workload_base_configs.py @0426418 BASE_DEEPSEEK_V3_CONFIG"},
	{QWEN30, QW "BASE_QWEN3_30B_A3B_CONFIG"},
	{"qwen3-235b-a22b", QW "BASE_QWEN3_235B_A22B_CONFIG"},
};

static void expert_tp_one(struct vrow *r, const struct proj_arch *a)
{
	int f = vrow_fid(r, "etp");

	if (f < 0 || vrow_given(r, f) || !(r->sc.tp > 1) || !(r->sc.experts > 1))
		return;
	for (size_t i = 0; i < sizeof etp_one / sizeof etp_one[0]; i++) {
		if (strcmp(etp_one[i].model, a->name))
			continue;
		r->sc.etp = 1;
		vrow_mark(r, f);
		vrow_assume(r, "etp=1 (Megatron-Bridge's performance recipes for %s: %s)", a->name,
			    etp_one[i].source);
		return;
	}
}

/*
 * Recompute a preset changed between releases, taken by the release the
 * row's text dates it by (a row without one keeps its stack's default).
 * DeepSeek-V3 on GB200 recomputes selectively in every version read:
 * mla_up_proj in bf16 and MXFP8 throughout, and in current-scaling FP8
 * through 26.02; PR #3031 (2026-03-30, "from mla_up_proj to mlp for
 * higher throughput") moved FP8 to mlp, PR #3067 took bf16 back, and PR
 * #4226 (2026-06-09, 26.06) gave MXFP8 mla_up_proj again.  Whether the
 * 26.04 branch took #3031 was not found: its MXFP8 rows take mla_up_proj,
 * said with the alternative.
 */
struct dated {
	const char *model, *gpus;
	int dtype, fp8;                 /* the row's; fp8: its FP8 scaling, -1 any */
	int from_y, from_m, to_y, to_m; /* releases; to_y 0: on */
	const char *modules, *source;
};

#define DSGB "NVIDIA-NeMo/Megatron-Bridge scripts/performance/configs/deepseek/"
static const struct dated dated[] = {
	{DSV3, "GB200", CVC_PROJ_BF16, -1, 2025, 9, 0, 0, "mla_up_proj",
	 DSGB "deepseek_llm_pretrain.py @0132842 deepseek_v3_gb200_256gpus_bf16_config; "
	      "deepseek_workload_base_configs.py @f0e2c37e and @0426418 "
	      "DEEPSEEK_V3_PRETRAIN_CONFIG_GB200_BF16_V1"},
	{DSV3, "GB200", CVC_PROJ_FP8, CVC_PROJ_FP8_MXFP8, 2025, 9, 0, 0, "mla_up_proj",
	 DSGB "deepseek_llm_pretrain.py @0132842, deepseek_workload_base_configs.py @f0e2c37e "
	      "(26.02) and @0426418 DEEPSEEK_V3_PRETRAIN_CONFIG_GB200_FP8_MX_V1 (PR #4226, 26.06); "
	      "26.04 may have run mlp (PR #3031)"},
	{DSV3, "GB200", CVC_PROJ_FP8, CVC_PROJ_FP8_CURRENT, 2025, 9, 2026, 2, "mla_up_proj",
	 DSGB "deepseek_llm_pretrain.py @0132842 deepseek_v3_gb200_256gpus_fp8_config; "
	      "deepseek_workload_base_configs.py @f0e2c37e DEEPSEEK_V3_PRETRAIN_CONFIG_GB200_V1"},
	{DSV3, "GB200", CVC_PROJ_FP8, CVC_PROJ_FP8_CURRENT, 2026, 4, 0, 0, "mlp",
	 DSGB "deepseek_workload_base_configs.py @0426418 DEEPSEEK_V3_PRETRAIN_CONFIG_GB200_V1 "
	      "(PR #3031, 2026-03-30)"},
};

/* The first of dated[] the row's model, GPU, format and release match:
 * its selective recompute, said; after the recipe's FP8 scaling. */
static void dated_recompute(struct vrow *r, const struct proj_arch *a)
{
	cvc_proj_scenario *sc = &r->sc;
	const struct vstack *st = &r->stack;

	if (!vrow_recompute_open(r) || !(st->year > 0))
		return;
	for (size_t i = 0; i < sizeof dated / sizeof dated[0]; i++) {
		const struct dated *e = &dated[i];

		if (!is_for(e->model, e->gpus, a, sc) || sc->dtype != e->dtype ||
		    (e->fp8 >= 0 && sc->fp8_recipe != e->fp8) ||
		    !vstack_within(st, e->from_y, e->from_m, e->to_y, e->to_m))
			continue;
		vrow_set_recompute(r, CVC_PROJ_RECOMP_SELECTIVE, e->modules);
		vrow_assume(r, "recompute=selective, recompute_modules=%s (Megatron-Bridge's "
			    "performance recipe for %s on %s in the row's release: %s)",
			    e->modules, e->model, sc->gpu, e->source);
		return;
	}
}

/* The transcribed recipe of a Megatron-Bridge row's model (a, from
 * bridge_arch(); NULL: none), GPU, dtype and layout; NULL when none is. */
static const struct recipe *recipe_of(const struct vrow *r, const struct proj_arch *a)
{
	const cvc_proj_scenario *sc = &r->sc;

	for (size_t i = 0; a && i < sizeof recipes / sizeof recipes[0]; i++) {
		const struct recipe *e = &recipes[i];

		if (!is_for(e->model, e->gpus, a, sc) || (e->dtype >= 0 && e->dtype != sc->dtype) ||
		    (e->pp > 0 && sc->pp != e->pp) ||
		    (e->ep > 0 && sc->ep != e->ep))
			continue;
		return e;
	}
	return NULL;
}

int vrecipe_dispatcher(const struct vrow *r, char *why, size_t len)
{
	const struct recipe *e = recipe_of(r, bridge_arch(r));
	char ref[400];

	if (!e || e->disp < 0)
		return -1;
	snprintf(why, len, "%s: %s", recipe_ref(r, e, ref, sizeof ref), e->disp_why);
	return e->disp;
}

void vrecipe_apply(struct vrow *r)
{
	cvc_proj_scenario *sc = &r->sc;
	const struct proj_arch *a = bridge_arch(r);
	const struct recipe *e;
	int fr = vrow_fid(r, "fp8_recipe");

	if (!a)
		return;
	ran_not_assumed(r, a);
	expert_tp_one(r, a);
	if (!(e = recipe_of(r, a))) {
		dated_recompute(r, a);
		return;
	}
	recompute(r, e);
	a2a_overlap(r, e);
	grad_overlap(r, e);
	if (e->fp8_recipe >= 0 && sc->dtype == CVC_PROJ_FP8 && !r->g.recipe && fr >= 0) {
		char name[32], ref[400];

		sc->fp8_recipe = e->fp8_recipe;
		r->g.recipe = 1;
		proj_enum_name(proj_fields[fr].names, e->fp8_recipe, name, sizeof name);
		vrow_assume(r, "fp8_recipe=%s (%s)", name, recipe_ref(r, e, ref, sizeof ref));
	}
	dated_recompute(r, a);
}
