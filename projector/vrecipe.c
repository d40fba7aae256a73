/*
 * vrecipe.c - what Megatron-Bridge's performance recipe for a named model
 * on a named GPU sets, for a row of that stack that does not say it.
 *
 * A recipe's recompute and its FP8 scaling are what a run computes and
 * holds: on 16 H100 the Nemotron-3-Nano layout (TP 1, EP 8, micro-batch 1,
 * 8K tokens) does not fit in 80 GB with Megatron-Core's default selective
 * recompute (core_attn) by cvc's own memory model, and the recipe
 * recomputes the whole MoE layer, the norms and the experts' activation to
 * make it fit.  Only such settings are taken here; how tokens move (the
 * dispatcher) and how kernels launch (CUDA graphs) follow validate's rules
 * for every row of the stack (vdefault.c), whatever the model, except that
 * a recipe which turns off the all-to-all overlap those rules would
 * assume is taken at its word.
 *
 * Each entry names the recipe function and the commit it was read at
 * (docs/SCENARIOS.md "validate", docs/MODELS.md "Mamba-2").  A row whose
 * cells state a setting keeps it.
 */
#include <stdio.h>
#include <string.h>

#include "cvc/cvc_model.h"
#include "vrow.h"

struct recipe {
	const char *model; /* cvc's catalog name (projector/archs.yaml) */
	const char *gpus;  /* catalog GPU names, '|' separated */
	int dtype;         /* the row's CVC_PROJ_* dtype; -1: any */
	int fp8_recipe;    /* CVC_PROJ_FP8_*; -1: none set */
	int recompute;     /* CVC_PROJ_RECOMP_* */
	const char *modules; /* Megatron-Core's --recompute-modules, ',' joined */
	const char *source;
	double pp, ep;       /* the recipe's layout, which a row must have; 0: any */
	int a2a_overlap;     /* moe_a2a_overlap where the recipe turns it off
				against the stack's rule (vdefault.c); -1: the rule */
};

#define NANO "nemotron-3-nano-30b-a3b"
#define MB "NVIDIA-NeMo/Megatron-Bridge perf_recipes/nemotronh/"
#define DSV3 "deepseek-v3"
#define DS "NVIDIA-NeMo/Megatron-Bridge scripts/performance/configs/deepseek/"

static const struct recipe recipes[] = {
	{NANO, "H100-SXM", CVC_PROJ_FP8, CVC_PROJ_FP8_CURRENT, CVC_PROJ_RECOMP_SELECTIVE,
	 "moe,layernorm,core_attn,moe_act",
	 MB "h100/nemotronh.py @d861fb2f nemotron_3_nano_pretrain_16gpu_h100_fp8cs_config", 0, 0, -1},
	{NANO, "H100-SXM", CVC_PROJ_BF16, -1, CVC_PROJ_RECOMP_SELECTIVE, "moe,layernorm",
	 MB "h100/nemotronh.py @d861fb2f nemotron_3_nano_pretrain_16gpu_h100_bf16_config", 0, 0, -1},
	/* no recompute: the model recipe's recompute_granularity = None
	 * (recipes/nemotronh/nemotron_3_nano.py @04d63863), kept by the
	 * Blackwell performance recipes */
	{NANO, "B200|GB200", -1, -1, CVC_PROJ_RECOMP_NONE, NULL,
	 MB "b200/nemotronh.py @130e14d4, gb200/nemotronh.py @c830d230 "
	    "(nemotron_3_nano_pretrain_8gpu_*_config)", 0, 0, -1},
	/*
	 * DeepSeek-V3, by the layouts the recipes publish: each of these
	 * recomputes what the same layout's recipe did in every version read
	 * (deepseek_llm_pretrain.py @0132842, workload_base_configs.py
	 * @0fa501a, deepseek_workload_base_configs.py @0426418); their FP8 is
	 * current scaling (FP8_CS) or a format the row names (FP8_MX, FP8_SC).
	 * The GB200 recipes changed their recompute between versions (mlp,
	 * mla_up_proj, both): none is assumed there.
	 */
	{DSV3, "B200", -1, CVC_PROJ_FP8_CURRENT, CVC_PROJ_RECOMP_SELECTIVE, "mla_up_proj",
	 DS "deepseek_workload_base_configs.py @0426418 DEEPSEEK_V3_PRETRAIN_CONFIG_B200_V1, "
	    "deepseek_llm_pretrain.py @0132842 deepseek_v3_b200_256gpus_*_config", 16, 8, -1},
	{DSV3, "B200", -1, CVC_PROJ_FP8_CURRENT, CVC_PROJ_RECOMP_SELECTIVE, "mla_up_proj,mlp",
	 DS "deepseek_workload_base_configs.py @0426418 DEEPSEEK_V3_PRETRAIN_CONFIG_B200_FP8_MX_V2",
	 8, 32, -1},
	{DSV3, "H100-SXM", -1, CVC_PROJ_FP8_CURRENT, CVC_PROJ_RECOMP_SELECTIVE, "mla_up_proj,mlp",
	 DS "deepseek_workload_base_configs.py @0426418 DEEPSEEK_V3_PRETRAIN_CONFIG_H100_V1, "
	    "deepseek_llm_pretrain.py @0132842 deepseek_v3_h100_1024gpus_*_config", 8, 64, -1},
	/*
	 * Qwen3-30B-A3B on 16 H100 at EP 16: "the 16-GPU topology fits without
	 * activation recomputation" (recompute_granularity = None), and the
	 * H100 presets are BF16 and FP8_CS only, so an fp8 row that names no
	 * scaling ran current scaling.  Its EP 16 spans two HGX boards, where
	 * validate's rule would take the DeepSeek-V3 recipes' 1F1B all-to-all
	 * overlap; this recipe sets moe_a2a_overlap = False.  (It also runs
	 * HybridEP, whose exchange across domains nobody has measured: the
	 * dispatcher stays the rule's, docs/MODELS.md "HybridEP".)
	 */
	{"qwen3-30b-a3b", "H100-SXM", -1, CVC_PROJ_FP8_CURRENT, CVC_PROJ_RECOMP_NONE, NULL,
	 "NVIDIA-NeMo/Megatron-Bridge src/megatron/bridge/recipes/qwen/h100/qwen3_moe.py @04eb4f8d "
	 "qwen3_30b_a3b_pretrain_16gpu_h100_bf16_config; scripts/performance/configs/qwen/"
	 "qwen3_workload_base_configs.py @f29a269f QWEN3_30B_A3B_PRETRAIN_CONFIG_H100_FP8_CS_V1",
	 1, 16, 0},
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

static void recompute(struct vrow *r, const struct recipe *e)
{
	cvc_proj_scenario *sc = &r->sc;
	int f = vrow_fid(r, "recompute"), fm = vrow_fid(r, "recompute_modules");

	if (r->g.recompute || f < 0 || fm < 0 || vrow_given(r, fm))
		return;
	sc->recompute = e->recompute;
	r->g.recompute = 1;
	vrow_mark(r, f);
	if (e->modules) {
		snprintf(r->rcmods, sizeof r->rcmods, "%s", e->modules);
		sc->recompute_modules = r->rcmods;
		vrow_mark(r, fm);
		vrow_assume(r, "recompute=selective, recompute_modules=%s (Megatron-Bridge's "
			       "performance recipe for %s on %s: %s)", e->modules, e->model, sc->gpu,
			    e->source);
		return;
	}
	vrow_assume(r, "recompute=%s (Megatron-Bridge's performance recipe for %s on %s: %s)",
		    e->recompute == CVC_PROJ_RECOMP_NONE	   ? "none"
		    : e->recompute == CVC_PROJ_RECOMP_FULL ? "full"
							   : "selective",
		    e->model, sc->gpu, e->source);
}

/* Runs before validate's dispatcher rule (vdefault.c moe_dispatch), which
 * then keeps what is marked here. */
static void a2a_overlap(struct vrow *r, const struct recipe *e)
{
	int f = vrow_fid(r, "ep_overlap");

	if (e->a2a_overlap < 0 || f < 0 || vrow_given(r, f) || !(r->sc.ep > 1))
		return;
	r->sc.ep_overlap = e->a2a_overlap;
	vrow_mark(r, f);
	vrow_assume(r, "ep_overlap=%d (moe_a2a_overlap in Megatron-Bridge's performance recipe "
		       "for %s on %s, which runs HybridEP: its exchange across NVLink domains is "
		       "measured by nobody, so the dispatcher stays validate's rule)",
		    e->a2a_overlap, e->model, r->sc.gpu);
}

void vrecipe_apply(struct vrow *r)
{
	cvc_proj_scenario *sc = &r->sc;
	const struct proj_arch *a;
	int fr = vrow_fid(r, "fp8_recipe");

	if (r->stack.family != VS_BRIDGE || !r->archs || !r->name[0] || !sc->gpu ||
	    !(a = proj_archs_find(r->archs, r->name)))
		return;
	for (size_t i = 0; i < sizeof recipes / sizeof recipes[0]; i++) {
		const struct recipe *e = &recipes[i];

		if (strcmp(e->model, a->name) || !one_of(e->gpus, sc->gpu) ||
		    (e->dtype >= 0 && e->dtype != sc->dtype) || (e->pp > 0 && sc->pp != e->pp) ||
		    (e->ep > 0 && sc->ep != e->ep))
			continue;
		recompute(r, e);
		a2a_overlap(r, e);
		if (e->fp8_recipe >= 0 && sc->dtype == CVC_PROJ_FP8 && !r->g.recipe && fr >= 0) {
			char name[32];

			sc->fp8_recipe = e->fp8_recipe;
			r->g.recipe = 1;
			proj_enum_name(proj_fields[fr].names, e->fp8_recipe, name, sizeof name);
			vrow_assume(r, "fp8_recipe=%s (Megatron-Bridge's performance recipe for %s "
				       "on %s: %s)", name, e->model, sc->gpu, e->source);
		}
		return;
	}
}
