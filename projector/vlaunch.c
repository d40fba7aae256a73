/*
 * vlaunch.c - what the launchers NVIDIA publishes benchmark tables with,
 * other than Megatron-Bridge's presets (vrecipe.c), ran for a row's
 * recompute where the row does not say it.
 *
 * NVIDIA's dgxc-benchmarking recipes run NeMo: their configuration files
 * leave NeMo's activations_checkpoint_granularity null (Megatron-Core's
 * recompute_granularity None, vdefault.c's default for the stack) but
 * for Nemotron-4 340B.  NeMo AutoModel's benchmark configurations
 * (examples/benchmark/configs/, the *_te_deepep files its performance
 * summary links) set the parallelizer's activation_checkpointing, which
 * wraps every decoder block in a checkpoint (full recompute;
 * components/moe/parallelizer.py apply_ac), model by model; unset it is
 * False.  Each entry names the file and the commit it was read at; a row
 * matches by the launcher its text names, the model (cvc's catalog name)
 * and, where an entry has one, the last release its text may date it by.
 * A row that says its recompute keeps it.
 *
 * A launcher's own implementation of a model may also leave out what the
 * model's configuration has: NeMo AutoModel's DeepSeek-V3 builds the
 * decoder blocks and the head, no multi-token prediction module.
 */
#include <string.h>

#include "vrow.h"

struct launch {
	const char *launcher;      /* the words a row's text names it by */
	const char *model;         /* cvc's catalog name (projector/archs.yaml) */
	int to_year, to_month;     /* the last release that ran it; 0: any
				      (the row need not be dated) */
	int recompute;             /* CVC_PROJ_RECOMP_* */
	const char *what, *source;
};

#define AM "NVIDIA-NeMo/Automodel examples/benchmark/configs/"

static const struct launch launches[] = {
	/* Nemotron-4 340B from v25.01.1 through v25.03 (NeMo 1.0 on the
	 * nemo:24.09 container; launch.sh keeps 24.09 for 340b): selective,
	 * which NeMo 1.0 hands Megatron-Core as recompute_granularity, core
	 * attention only (no recompute_modules in that mapping); v25.04 on
	 * run NeMo 2.0's recommended configurations, recompute_layers 0 */
	{"dgxc-benchmarking", "nemotron-4-340b", 2025, 3, CVC_PROJ_RECOMP_SELECTIVE,
	 "selective (core attention)",
	 "NVIDIA/dgxc-benchmarking nemotron/nemotron4-340b-synth.yaml @8f5cbb37 (v25.02): "
	 "activations_checkpoint_granularity: selective"},
	{"automodel", "deepseek-v3", 0, 0, CVC_PROJ_RECOMP_FULL, "full (every decoder block)",
	 AM "deepseek_v3_te_deepep.yaml @cab96cff and deepseek_v3_te_deepep_1024.yaml @604375ac: "
	    "activation_checkpointing: true"},
	{"automodel", "kimi-k2", 0, 0, CVC_PROJ_RECOMP_FULL, "full (every decoder block)",
	 AM "kimi_k2_te_deepep.yaml @cab96cff: activation_checkpointing: true"},
	{"automodel", "qwen3-30b-a3b", 0, 0, CVC_PROJ_RECOMP_FULL, "full (every decoder block)",
	 AM "qwen3_moe_30b_te_deepep.yaml @092af93e: activation_checkpointing: true"},
	{"automodel", "gpt-oss-120b", 0, 0, CVC_PROJ_RECOMP_NONE, "none",
	 AM "gptoss_120b_te_deepep.yaml @17fb7c5e: activation_checkpointing: false"},
};

int vlaunch_recompute(struct vrow *r)
{
	const struct proj_arch *a;

	if (!r->archs || !r->name[0] || !vrow_recompute_open(r) ||
	    !(a = proj_archs_find(r->archs, r->name)))
		return 0;
	for (size_t i = 0; i < sizeof launches / sizeof launches[0]; i++) {
		const struct launch *e = &launches[i];

		if (strcmp(e->model, a->name) || !strstr(r->text, e->launcher) ||
		    !vstack_within(&r->stack, 0, 0, e->to_year, e->to_month))
			continue;
		vrow_set_recompute(r, e->recompute, NULL);
		vrow_assume(r, "recompute=%s (the launcher's: %s)", e->what, e->source);
		return 1;
	}
	return 0;
}

/* Models a launcher runs without the catalog's multi-token prediction
 * layers: its implementation has no such module. */
static const struct {
	const char *launcher, *model, *source;
} no_mtp[] = {
	{"automodel", "deepseek-v3",
	 "NVIDIA-NeMo/Automodel nemo_automodel/components/models/deepseek_v3/model.py @05e09029: "
	 "DeepseekV3Model builds num_hidden_layers blocks and the head, no MTP module"},
};

int vlaunch_mtp(struct vrow *r)
{
	const struct proj_arch *a;

	if (!r->g.mtp_catalog || !(r->sc.mtp_layers > 0) || !r->archs || !r->name[0] ||
	    !(a = proj_archs_find(r->archs, r->name)))
		return 0;
	for (size_t i = 0; i < sizeof no_mtp / sizeof no_mtp[0]; i++) {
		if (strcmp(no_mtp[i].model, a->name) || !strstr(r->text, no_mtp[i].launcher))
			continue;
		r->sc.mtp_layers = 0;
		vrow_assume(r, "mtp_layers=0 (the launcher's model has none: %s)", no_mtp[i].source);
		return 1;
	}
	return 0;
}
