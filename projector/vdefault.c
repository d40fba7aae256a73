/*
 * vdefault.c - what a published row did not say, filled in from the stack
 * and the date its source and notes name, and said.  A feature is assumed
 * only where that stack had it at that date:
 *  - Megatron's sequence parallelism: Korthikanti et al., "Reducing
 *    Activation Recomputation in Large Transformer Models" (arXiv
 *    2205.05198, May 2022), implemented in Megatron-LM then; never in
 *    Megatron-DeepSpeed's 2021-22 fork (BLOOM, MT-NLG).
 *  - TP communication overlap (--tp-comm-overlap): Transformer Engine's
 *    userbuffers, released with Hopper at the end of 2022: none before 2023.
 *  - FlashAttention: Dao et al. (arXiv 2205.14135, May 2022); a Megatron
 *    stack dated before June 2022, or Megatron-DeepSpeed before 2023, ran
 *    its unfused attention with the fused softmax kernel.
 *  - The distributed optimizer: NeMo's and Megatron-Bridge's recipes turn
 *    it on (`use_distributed_optimizer=True` in their
 *    `distributed_fused_adam_with_cosine_annealing`), so "DDP" in their
 *    tables is Megatron-Core's data parallel with ZeRO-1.
 *  - The FP8 recipe: Megatron-Core's --fp8-recipe defaults to "delayed".
 *  - NVFP4 without TP communication overlap: NeMo's and Megatron-Bridge's
 *    performance scripts switch it off for that precision
 *    (scripts/performance/configs/llama/llama3_llm_pretrain.py,
 *    llama31_llm_pretrain.py, gpt_oss: `cfg.comm_overlap.tp_comm_overlap =
 *    False if precision == "nvfp4"`); Transformer Engine's Userbuffers
 *    gained MXFP8 (its PR #1711), no 4-bit format.
 *  - Recompute and FP8 scaling of a Megatron-Bridge row naming a model whose
 *    performance recipe is transcribed: the recipe's (vrecipe.c).
 * docs/SCENARIOS.md "validate" lists these with an example each.
 */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cvc/cvc_model.h"
#include "ctx.h"
#include "vrow.h"

/* Fields that define a run: a default filled in for one of them is said. */
static const char *const defining[] = {
	"layers", "hidden", "heads", "kv_heads", "ffn", "ffn_type", "vocab", "seq",
	"global_batch", "micro_batch", "tp", "pp", "vpp", "cp", "sp",
};


/* The framework: a column's, else the stack's, else the sharding's words,
 * else Megatron-Core as its recipes run it.  1 when the stack is one cvc
 * has no model of. */
static int framework(struct vrow *r)
{
	cvc_proj_scenario *sc = &r->sc;
	const struct vstack *st = &r->stack;

	if (r->g.framework)
		return 0;
	if (st->family == VS_JAX)
		return vrow_cannot(r, CVC_PROJ_VWHY_UNMODELLED,
				   "the stack '%s' (a JAX stack) is none cvc models", st->word);
	if (vstack_megatron(st)) {
		sc->framework = CVC_PROJ_FW_MEGATRON;
		vrow_note(r, "framework=megatron (%s, named in the row's text)", st->name);
	} else if (st->family == VS_TORCHTITAN) {
		sc->framework = CVC_PROJ_FW_TORCHTITAN;
		vrow_note(r, "framework=torchtitan (named in the row's text)");
	} else if (st->family) {
		sc->framework = CVC_PROJ_FW_PYTORCH;
		vrow_note(r, "framework=pytorch (%s, named in the row's text)", st->name);
	} else if (r->g.has_shard && r->g.shard.torch_fsdp) {
		sc->framework = CVC_PROJ_FW_PYTORCH;
		vrow_note(r, "framework=pytorch (PyTorch FSDP's sharding names)");
	} else {
		sc->framework = CVC_PROJ_FW_MEGATRON;
		vrow_assume(r, "framework=megatron (default)");
	}
	return 0;
}

/* The sharding cell applied under the stack now known. */
static void sharding(struct vrow *r)
{
	cvc_proj_scenario *sc = &r->sc;
	const struct vshard *s = &r->g.shard;
	const struct vstack *st = &r->stack;
	int megatron = sc->framework == CVC_PROJ_FW_MEGATRON;

	if (!r->g.has_shard) {
		if (megatron && !proj_is_3d(sc)) {
			/* a 3D grid's depth axis shards the weights itself (AxoNN):
			 * no distributed optimizer on top */
			sc->zero = 1;
			vrow_assume(r, "zero=1 (%s's distributed optimizer)",
				    st->family == VS_MEGATRON_DS ? "DeepSpeed ZeRO-1, BLOOM" :
								   "Megatron-Core");
		} else {
			vrow_assume(r, "zero=%g (default)", sc->zero);
		}
		return;
	}
	if (s->ddp) {
		/* plain data parallel: with Megatron-Core's recipes that is
		 * the distributed optimizer (NeMo, Megatron-Bridge) */
		int dist = megatron && (st->family == VS_NEMO || st->family == VS_BRIDGE ||
					!st->family);

		sc->zero = dist ? 1 : 0;
		if (dist)
			vrow_assume(r, "zero=1 ('%s': data parallel with the distributed optimizer "
				       "%s recipes turn on)", r->g.shard_cell,
				    st->family ? st->name : "Megatron-Core's");
		else
			vrow_note(r, "zero=0 (data parallel, no sharding)");
	} else if (s->stage_unnamed) {
		sc->zero = 1;
		vrow_assume(r, "zero=1 (ZeRO named with no stage: stage 1)");
	} else if (s->stage == 0 && !strcmp(r->g.shard_cell, "0") && megatron &&
		   (st->family == VS_NEMO || st->family == VS_BRIDGE)) {
		/* NeMo's and Megatron-Bridge's performance tables print an FSDP
		 * column: its 0 is FSDP off, not a ZeRO stage their stacks run */
		sc->zero = 1;
		vrow_assume(r, "zero=1 ('0' in a %s table's FSDP column: FSDP off, with the "
			       "distributed optimizer its recipes turn on)", st->name);
	} else {
		sc->zero = s->stage;
		if (!isdigit((unsigned char)r->g.shard_cell[0]))
			vrow_note(r, "zero=%d ('%s')", s->stage, r->g.shard_cell);
	}
	if (s->group > 0 && !(sc->shard_group > 0)) {
		sc->shard_group = s->group;
		if (s->group_pair)
			vrow_assume(r, "shard_group=%g ('%g/%g': the first number read as the shard "
				       "group, the second as its replicas)", s->group, s->group,
				    s->replicas);
		else
			vrow_note(r, "shard_group=%g", s->group);
	} else if (s->hybrid && !(sc->shard_group > 0)) {
		double gpn = sc->gpus_per_node >= 1 ? sc->gpus_per_node : 8;
		double per = (sc->tp >= 1 ? sc->tp : 1) * (sc->cp >= 1 ? sc->cp : 1);

		sc->shard_group = fmax(1, floor(gpn / per));
		vrow_assume(r, "shard_group=%g (hybrid sharding: shard inside a node, replicate "
			       "across)", sc->shard_group);
	}
	r->hybrid = s->hybrid || s->group > 0;
}

/* A switch the text states ("without sequence parallel", "SP=1"), else
 * the stack's default when it had the feature then.  key: the field. */
static void feature_in(struct vrow *r, const char *t, const char *key, const char *words,
		       int on, const char *why_off, const char *why_on)
{
	int f = vrow_fid(r, key), said;

	if (f < 0 || vrow_given(r, f))
		return;
	said = vtext_switch_lower(t, words);
	if (said >= 0) {
		proj_field_set_num(&r->sc, f, said);
		vrow_mark(r, f);
		vrow_note(r, "%s=%d (the row's text says so)", key, said);
		return;
	}
	if (!on && !why_off)
		return;
	proj_field_set_num(&r->sc, f, on);
	vrow_mark(r, f);
	vrow_assume(r, "%s=%d (%s)", key, on, on ? why_on : why_off);
}

/* feature_in() the row's source and notes. */
static void feature(struct vrow *r, const char *key, const char *words, int on,
		    const char *why_off, const char *why_on)
{
	feature_in(r, r->text, key, words, on, why_off, why_on);
}

/* CUDA graphs the row says it ran with: of the whole forward and backward
 * ("full-iteration CUDA graphs", Megatron-Core's --cuda-graph-impl
 * full_iteration), else cvc's layer graphs ("run with CUDA Graphs
 * enabled"). */
static void graphs_said(struct vrow *r)
{
	int f = vrow_fid(r, "cuda_graphs");

	if (f >= 0 && !vrow_given(r, f) &&
	    vtext_switch_lower(r->text, "full-iteration cuda graphs|full-iteration cuda graph|"
			       "full iteration cuda graphs|full iteration cuda graph|"
			       "full-iter cuda graphs|full-iteration graphs|full-iteration graph|"
			       "full_iteration|full-iter cg") > 0) {
		proj_field_set_num(&r->sc, f, 2);
		vrow_mark(r, f);
		vrow_note(r, "cuda_graphs=2 (the row's text says full-iteration graphs)");
		return;
	}
	feature(r, "cuda_graphs", "cuda graphs|cuda graph|cuda-graphs|cuda-graph|"
		"cuda_graphs|cuda_graph|cudagraphs|cudagraph", 0, NULL, NULL);
}

/* torchtitan's: torch.compile as the text says ("+ torch.compile", "no
 * torch.compile"), else on, as every configuration of its published
 * benchmarks but the eager baselines compiled
 * (benchmarks/llama3_h100_202412_torchtitan.md, asyncTP_llama3_h100_2025-06). */
static void torchtitan_features(struct vrow *r)
{
	cvc_proj_scenario *sc = &r->sc;

	if (sc->framework != CVC_PROJ_FW_TORCHTITAN)
		return;
	feature(r, "compile", "torch.compile|torch compile|torch_compile|--training.compile|compile",
		1, NULL, "torchtitan's published benchmark configurations compile");
	/* its TP plan shards the norms along the sequence (SequenceParallel)
	 * and reduce-scatters wo's and w2's outputs: Megatron's sequence
	 * parallelism (torchtitan parallelize_llama.py) */
	feature(r, "sp", "sequence parallel|sequence-parallel|sequence_parallel|sp", sc->tp > 1, NULL,
		"torchtitan's TP plan: SequenceParallel norms, reduce-scattered outputs");
	/* async TP (SymmetricMemory) is not Transformer Engine's overlap: its
	 * measured gain is a fraction of what cvc's tp_overlap prices */
	if (sc->tp > 1 && vtext_switch_lower(r->text, "asynctp|async tp|async-tp|async tensor "
				      "parallel|enable_async_tensor_parallel") > 0)
		vrow_assume(r, "tp_overlap=0 (torchtitan's async TP is not priced: docs/MODELS.md "
			       "\"torchtitan\")");
}

/*
 * fp8 weights without a 16-bit copy (fp8_param_gather): set by the fp8
 * precision recipes of NeMo 2.0 (delayed and current scaling, not MXFP8:
 * nemo/collections/llm/recipes/precision/mixed_precision.py @0a07447c) and
 * of Megatron-Bridge (delayed, current scaling and MXFP8, not blockwise:
 * src/megatron/bridge/training/mixed_precision.py @05097809); NeMo's
 * performance tables ran NeMo 2.0 from release 24.09, and NeMo 1.0's
 * launcher configurations of that time set it too (dgxc-benchmarking's
 * nemo_megatron/gpt3_175b_hydra.yaml @35a9aecc: fp8_params: true).
 * Not for MoE models: the MoE performance presets read turn it off
 * (Megatron-Bridge's kimi_k2_pretrain_256gpu_gb200_fp8mx_config and
 * deepseek_v3_pretrain_1024gpu_h100_fp8cs_config: fp8_param_gather =
 * False), and none was found that keeps it.  Megatron-LM's
 * --fp8-param-gather is off by default.
 */
static void fp8_params_default(struct vrow *r)
{
	const cvc_proj_scenario *sc = &r->sc;
	const struct vstack *st = &r->stack;
	int rc = sc->fp8_recipe, dsc = rc == CVC_PROJ_FP8_DELAYED || rc == CVC_PROJ_FP8_CURRENT;
	int nemo2 = st->family == VS_NEMO && st->year && !vstack_before(st, 2024, 9);
	int bridge = st->family == VS_BRIDGE;
	/* an MoE row: only where its text says it */
	int on = sc->experts <= 1 &&
		 ((nemo2 && dsc) || (bridge && (dsc || rc == CVC_PROJ_FP8_MXFP8)));
	char why[200];

	if (sc->dtype != CVC_PROJ_FP8 || sc->zero < 1)
		return;
	snprintf(why, sizeof why, "the %s precision recipe of %s sets it",
		 rc == CVC_PROJ_FP8_MXFP8 ? "MXFP8" : rc == CVC_PROJ_FP8_CURRENT
			 ? "current-scaling fp8" : "delayed-scaling fp8",
		 bridge ? "Megatron-Bridge" : "NeMo from 24.09");
	feature(r, "fp8_param_gather", "fp8_param_gather|fp8-param-gather|fp8 param gather|"
		"fp8_params|fp8 params", on, NULL, why);
}

/* The optimizer's moments in bf16 where the row says so, or where it ran
 * DeepSeek's own framework (DualPipe named): "we adopt the BF16 data
 * format instead of FP32 to track the first and second moments in the
 * AdamW optimizer" (DeepSeek-V3 Technical Report, arXiv 2412.19437, sec.
 * 3.3.3). */
static void moments_default(struct vrow *r)
{
	feature(r, "optimizer_moments", "bf16 moments|bf16 optimizer states|bf16 adam moments|"
		"exp_avg_dtype|exp-avg-dtype", vtext_has(r->text, "dualpipe|dual-pipe"), NULL,
		"DeepSeek's framework, DualPipe in the text: AdamW's moments in BF16, the "
		"DeepSeek-V3 report sec. 3.3.3");
}

/* Megatron's features by stack and date; PyTorch stacks keep the defaults. */
static void megatron_features(struct vrow *r)
{
	cvc_proj_scenario *sc = &r->sc;
	const struct vstack *st = &r->stack;
	int ds = st->family == VS_MEGATRON_DS;
	int no_sp = ds || vstack_before(st, 2022, 5);
	int no_ub = ds || vstack_before(st, 2023, 1);
	int fp4 = sc->dtype == CVC_PROJ_NVFP4 && (st->family == VS_NEMO || st->family == VS_BRIDGE);
	int f = vrow_fid(r, "attention");
	char why_sp[160], why_ub[160], why_on[200];

	if (sc->framework != CVC_PROJ_FW_MEGATRON)
		return;
	snprintf(why_sp, sizeof why_sp, "%s%s: before Megatron's sequence parallelism",
		 st->name ? st->name : "the stack", st->year ? " dated by the text" : "");
	if (fp4) /* no_ub too: the older reason wins */
		snprintf(why_ub, sizeof why_ub, "%s's performance scripts turn it off for nvfp4",
			 st->name);
	if (!fp4 || no_ub)
		snprintf(why_ub, sizeof why_ub, "%s%s: before Transformer Engine's TP overlap",
			 st->name ? st->name : "the stack", st->year ? " dated by the text" : "");
	feature(r, "sp", "sequence parallel|sequence-parallel|sequence_parallel|"
		"sequence parallelism|seq parallel|--sequence-parallel|sp",
		sc->tp > 1 && !no_sp, sc->tp > 1 ? why_sp : NULL, "Megatron-Core with tp > 1");
	/* Megatron-LM's --tp-comm-overlap is store_true (off unless given);
	 * the assumption is the performance recipes', which set it */
	if (st->family == VS_NEMO || st->family == VS_BRIDGE)
		snprintf(why_on, sizeof why_on, "%s's performance recipes set comm_overlap's "
			 "tp_comm_overlap", st->name);
	else
		snprintf(why_on, sizeof why_on, "NeMo's and Megatron-Bridge's performance "
			 "recipes set it; Megatron-LM's --tp-comm-overlap is off unless given");
	feature(r, "tp_overlap", "tp comm overlap|tp-comm-overlap|tp_comm_overlap|tp overlap|"
		"userbuffers|comm-gemm overlap", sc->tp > 1 && !no_ub && !fp4, sc->tp > 1 ? why_ub : NULL,
		why_on);
	/* Megatron-LM's command line reduces bf16 weights' gradients in fp32;
	 * NeMo's and Megatron-Bridge's performance recipes set it off, as the
	 * projector's default does (docs/SCENARIOS.md, grad_reduce_fp32) */
	feature(r, "grad_reduce_fp32",
		"grad_reduce_in_fp32|grad-reduce-in-fp32|accumulate-allreduce-grads-in-fp32|"
		"accumulate_allreduce_grads_in_fp32",
		st->family == VS_MEGATRON_LM && sc->dtype != CVC_PROJ_FP16 &&
			sc->dtype != CVC_PROJ_FP32, NULL,
		"Megatron-LM's arguments.py: bf16 weights accumulate and all-reduce their "
		"gradients in fp32");
	fp8_params_default(r);
	/* before FlashAttention: Megatron's unfused attention, fused softmax */
	if (f >= 0 && !vrow_given(r, f) &&
	    ((ds && !(st->year >= 2023)) || vstack_before(st, 2022, 6))) {
		sc->attention = CVC_PROJ_ATTN_UNFUSED;
		vrow_mark(r, f);
		vrow_assume(r, "attention=unfused (%s%s: before FlashAttention)",
			    st->name ? st->name : "the stack", st->year ? " as dated" : "");
	}
	/*
	 * NeMo's launcher turned Transformer Engine's cuDNN attention off
	 * until August 2024 (NVTE_FUSED_ATTN: 0, "Disable cudnn FA until
	 * we've tested it more"), so its runs took FlashAttention-2, which
	 * is also what Transformer Engine runs on Ampere without it.
	 */
	if (f >= 0 && !vrow_given(r, f) && st->family == VS_NEMO && vstack_before(st, 2024, 8)) {
		sc->attention = CVC_PROJ_ATTN_FA2;
		vrow_mark(r, f);
		vrow_assume(r, "attention=fa2 (NeMo dated by the text before 2024-08: "
			       "NeMo-Framework-Launcher's config.yaml sets NVTE_FUSED_ATTN: 0, "
			       "'Disable cudnn FA until we've tested it more', @01d07738 with "
			       "nemo:24.03.01; cuDNN's turned on by its PR #384, approved 2024-08-06)");
	}
}

/* The FP8 recipe a row names none of, and a dtype cvc does not price. */
static int precision(struct vrow *r)
{
	cvc_proj_scenario *sc = &r->sc;

	if (r->g.dtype_name)
		return vrow_cannot(r, CVC_PROJ_VWHY_UNMODELLED, "dtype '%s' ('%s') is none cvc "
				   "prices (%s)", r->g.dtype_name, r->g.dtype_cell,
				   proj_fields[vrow_fid(r, "dtype")].names);
	if (!r->g.dtype)
		vrow_assume(r, "dtype=bf16 (default)");
	if (sc->dtype == CVC_PROJ_FP8 && !r->g.recipe && sc->framework == CVC_PROJ_FW_TORCHTITAN) {
		/* torchao's Float8 training recipes (torchtitan docs/float8.md):
		 * tensorwise, its default, scales each tensor by its own amax as
		 * Transformer Engine's current scaling does; rowwise scales per
		 * row, a GEMM cvc has no measure of */
		if (vtext_find(r->text, "rowwise") || vtext_find(r->text, "row-wise"))
			return vrow_cannot(r, CVC_PROJ_VWHY_UNMODELLED,
					   "torchao's rowwise float8 recipe is none cvc prices "
					   "(tensorwise is: fp8_recipe current)");
		sc->fp8_recipe = CVC_PROJ_FP8_CURRENT;
		vrow_assume(r, "fp8_recipe=current (torchao's tensorwise Float8, torchtitan's "
			       "default: each tensor's own amax)");
	} else if (sc->dtype == CVC_PROJ_FP8 && !r->g.recipe) {
		sc->fp8_recipe = CVC_PROJ_FP8_DELAYED;
		vrow_assume(r, "fp8_recipe=delayed (no recipe named: Megatron-Core's --fp8-recipe "
			       "default)");
	}
	return 0;
}

/* The row's model name and text, lower-cased, in t (what the words of a
 * model's kind are looked for in). */
static void name_and_text(const struct vrow *r, char *t, size_t len)
{
	snprintf(t, len, "%s %s", r->name, r->text);
	vtext_lower(t, len, t);
}

/* The FFN activation t (name_and_text()) names ("GeGLU"), or -1. */
static int ffn_named(const char *t)
{
	static const char words[] = "swiglu|geglu|reglu|glu|gated|gelu|relu|squared relu";
	int v = vrow_enum_words_lower("ffn_type", t);

	return v >= 0 && vtext_switch_lower(t, words) > 0 ? v : -1;
}

/*
 * A model the row names by a name cvc's catalog knows (projector/archs.yaml:
 * "DeepSeek-V3", "Qwen3-30B-A3B", "Llama3-70B"): each field of its published
 * configuration the row leaves blank, said with the source.  The row's
 * cells win, its shared experts counted in the experts cell too ("256+1
 * shared"); a row whose text says the run went without multi-token
 * prediction ("w/o MTP") keeps none.
 */
void vrow_catalog(struct vrow *r)
{
	const struct proj_arch *e;
	char said[1200], t[2300];
	size_t n = 0;

	if (!r->archs || !r->name[0] || !(e = proj_archs_find(r->archs, r->name)))
		return;
	said[0] = 0;
	name_and_text(r, t, sizeof t);
	for (int i = 0; i < e->nkv; i++) {
		const struct proj_arch_kv *kv = &e->kv[i];
		const struct proj_field *fd = &proj_fields[kv->field];
		char val[64];
		int k;

		if (vrow_given(r, kv->field) || (!strcmp(fd->key, "shared_ffn") && r->g.shared_n > 0) ||
		    (!strcmp(fd->key, "kv_heads") && r->g.mla))
			continue;
		/* an activation the row's text names is the row's (ffn_kind()) */
		if (!strcmp(fd->key, "ffn_type") && ffn_named(t) >= 0)
			continue;
		if (!strcmp(fd->key, "mtp_layers") && vtext_switch_lower(t, "mtp|multi-token "
									"prediction") == 0) {
			vrow_note(r, "mtp_layers=0 (the row's text says the run had none)");
			continue;
		}
		if (fd->type == PF_STR)
			*(const char **)((char *)&r->sc + fd->offset) = kv->str;
		else
			proj_field_set_num(&r->sc, kv->field, kv->num);
		vrow_mark(r, kv->field);
		if (!strcmp(fd->key, "ffn_type"))
			r->g.ffn_type = 1;
		if (!strcmp(fd->key, "mtp_layers")) /* "w/ MTP" makes them the row's */
			r->g.mtp_catalog = vtext_switch_lower(t, "mtp|multi-token prediction") < 0;
		if (fd->type == PF_ENUM)
			proj_enum_name(fd->names, (int)kv->num, val, sizeof val);
		else if (fd->type == PF_STR)
			snprintf(val, sizeof val, "%.40s%s", kv->str, strlen(kv->str) > 40 ? "..." : "");
		else
			snprintf(val, sizeof val, "%g", kv->num);
		k = snprintf(said + n, sizeof said - n, "%s%s=%s", n ? ", " : "", fd->key, val);
		if (k > 0 && (size_t)k < sizeof said - n)
			n += (size_t)k;
	}
	/* the model's published configuration, not the table's words: an
	 * assumption --strict refuses */
	if (n)
		vrow_assume(r, "%s (%s in cvc's catalog: %s)", said, e->name, e->source);
}

/* The FFN's kind: a column's, the words of the model name or notes
 * ("GeGLU"), else by width (a gated FFN is sized about 8h/3..3.5h to keep a
 * 4h two-matrix FFN's parameters). */
static void ffn_kind(struct vrow *r)
{
	cvc_proj_scenario *sc = &r->sc;
	char t[2300];
	double w = sc->ffn > 0 ? sc->ffn : sc->moe_ffn;
	int v, f = vrow_fid(r, "ffn_type");

	if (r->g.ffn_type)
		return;
	name_and_text(r, t, sizeof t);
	if ((v = ffn_named(t)) >= 0) {
		char nm[16];

		sc->ffn_type = v;
		vrow_mark(r, f);
		proj_enum_name(proj_fields[f].names, v, nm, sizeof nm);
		vrow_note(r, "ffn_type=%s (named in the row's text)", nm);
		return;
	}
	if (!(w > 0) || !(sc->hidden > 0))
		return;
	sc->ffn_type = w < 4 * sc->hidden ? CVC_PROJ_FFN_SWIGLU : CVC_PROJ_FFN_GELU;
	vrow_assume(r, "ffn_type=%s (ffn %s 4 x hidden)",
		    sc->ffn_type == CVC_PROJ_FFN_SWIGLU ? "swiglu" : "gelu",
		    sc->ffn_type == CVC_PROJ_FFN_SWIGLU ? "<" : ">=");
	vrow_mark(r, f);
}

/* Blanks out "token drop" where the text weighs it against another
 * ("token-drop vs dropless", "token drop or dropless"): a choice, not a
 * switch. */
static void blank_choices(char *t)
{
	static const char *const words[] = {"token-drop", "token drop", "tokendrop"};

	for (size_t i = 0; i < sizeof words / sizeof words[0]; i++)
		for (char *p = strstr(t, words[i]); p; p = strstr(p + 1, words[i])) {
			const char *a = p + strlen(words[i]);

			if (!strncmp(a, " vs", 3) || !strncmp(a, " or ", 4) ||
			    !strncmp(a, " and dropless", 13) || !strncmp(a, "/dropless", 9))
				memset(p, ' ', strlen(words[i]));
		}
}

/*
 * Layers of a kind cvc does not price, by the model's name or the row's
 * words, as cvc's config.json reader refuses them (hfconfig.c
 * unpriced_layers()): priced as softmax attention they would be wrong by
 * their own cost (Qwen3-Next's 36 gated DeltaNet layers of 48: +131% FLOPs
 * at 32K tokens).
 */
static int unpriced_layers(struct vrow *r)
{
	static const struct {
		const char *words, *what;
	} kinds[] = {
		{"qwen3-next|qwen3_next|qwen3next|qwen3.5|qwen3_5|gated deltanet|gated delta net|"
		 "gated-deltanet|deltanet", "gated DeltaNet (linear attention) layers"},
		{"minimax-text-01|minimax-m1|minimax-01|lightning attention",
		 "lightning (linear) attention layers"},
		{"deepseek-v3.2|deepseek-v3_2|deepseek sparse attention",
		 "DeepSeek Sparse Attention's indexer and top-k attention"},
		{"jamba", "Jamba's Mamba-1 layers"},
		{"falcon-h1|falcon_h1", "Falcon-H1's attention and Mamba-2 side by side in one layer"},
	};
	char t[sizeof r->text + 160];

	name_and_text(r, t, sizeof t);
	for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
		if (vtext_has(t, kinds[i].words))
			return vrow_cannot(r, CVC_PROJ_VWHY_UNMODELLED, "%s are none cvc prices "
					   "(docs/SCENARIOS.md \"config.json\")", kinds[i].what);
	return 0;
}

/* Experts' widths and attention's kind the cells named by their forms. */
static int moe_and_mla(struct vrow *r)
{
	cvc_proj_scenario *sc = &r->sc;
	int fs = vrow_fid(r, "shared_ffn");

	if (r->g.shared_n > 0 && !vrow_given(r, fs)) {
		if (!(sc->moe_ffn > 0))
			return vrow_cannot(r, CVC_PROJ_VWHY_MISSING, "%g shared experts named, but "
					   "no expert width (moe_ffn) to size them", r->g.shared_n);
		sc->shared_ffn = r->g.shared_n * sc->moe_ffn;
		vrow_mark(r, fs);
		vrow_note(r, "shared_ffn=%g (%g shared experts of moe_ffn %g)", sc->shared_ffn,
			  r->g.shared_n, sc->moe_ffn);
	}
	/* token drop the row names, in its model cell too: NeMo's and
	 * Megatron-Bridge's "(tokendrop)" benchmark rows (capacity factor 1,
	 * the experts' inputs padded to capacity: Megatron-Core's
	 * drop_and_pad), the keys that set it (NeMo's YAML
	 * moe_pad_expert_input_to_capacity, as dgxc-benchmarking's Grok-1
	 * configuration writes it; cvc's own moe_token_drop), and "token drop"
	 * in prose, but not where it is one of two ("token-drop vs dropless as
	 * labelled", the summaries' footnote) */
	if (sc->experts > 1) {
		char t[sizeof r->text + 160];

		name_and_text(r, t, sizeof t);
		blank_choices(t);
		feature_in(r, t, "moe_token_drop", "tokendrop|token drop|token-drop|token dropping|"
			   "drop_and_pad|pad_expert_input_to_capacity|pad-expert-input-to-capacity|"
			   "moe_pad_expert_input_to_capacity|moe-pad-expert-input-to-capacity|"
			   "moe_token_drop", 0, NULL, NULL);
	}
	if (r->g.mla && !(sc->kv_lora_rank > 0))
		return vrow_cannot(r, CVC_PROJ_VWHY_MISSING,
				   "kv_heads says multi-latent attention, and no cell gives its "
				   "ranks (kv_lora_rank, q_lora_rank, qk_rope_head_dim, v_head_dim)");
	return 0;
}

/* The hardware cell's domain, node and links, as scenario fields. */
static void hardware(struct vrow *r, cvc_proj_ctx *ctx)
{
	cvc_proj_scenario *sc = &r->sc;
	const struct vgpu *hw = &r->g.hw;
	const cvc_hw_spec *spec = cvc_hw_catalog_lookup(ctx->cat, sc->gpu);
	int fd = vrow_fid(r, "nvlink_domain"), fn = vrow_fid(r, "gpus_per_node");

	if (!r->g.has_hw && !r->g.has_net)
		return;
	if (hw->count > 0 && !vrow_given(r, vrow_fid(r, "gpus"))) {
		sc->gpus = hw->count;
		vrow_mark(r, vrow_fid(r, "gpus"));
		vrow_note(r, "gpus=%g (the gpu text)", hw->count);
	}
	if (hw->per_node > 0 && !vrow_given(r, fn)) {
		sc->gpus_per_node = hw->per_node;
		vrow_mark(r, fn);
		vrow_note(r, "gpus_per_node=%g (the gpu text)", hw->per_node);
	}
	if (hw->domain > 0 && fd >= 0 && !vrow_given(r, fd)) {
		proj_field_set_num(sc, fd, hw->domain);
		vrow_mark(r, fd);
		vrow_note(r, "nvlink_domain=%g (NVL%g in the gpu text)", hw->domain, hw->domain);
	}
	if (hw->nic_gbps > 0 && spec && spec->inter_bw_gbps > 0) {
		sc->scale_inter_bw = hw->nic_gbps / spec->inter_bw_gbps;
		(hw->nic_assumed ? vrow_assume : vrow_note)(
			r, "network %.4g GB/s per GPU ('%s' read %s)", hw->nic_gbps, hw->nic_text,
			hw->nic_how);
	}
	if (hw->nvlink_gbps > 0 && spec && spec->intra_bw_gbps > 0) {
		sc->scale_intra_bw = hw->nvlink_gbps / spec->intra_bw_gbps;
		(hw->nvlink_assumed ? vrow_assume : vrow_note)(
			r, "NVLink %.4g GB/s per GPU each way ('%s'%s)", hw->nvlink_gbps,
			hw->nvlink_text,
			hw->nvlink_assumed ? " read as both directions, as datasheets print NVLink"
					   : "");
	}
	if (hw->ignored[0])
		vrow_note(r, "'%s' not read (the gpu text names no link for it)", hw->ignored);
}

/* The convention the row's text names for its TFLOP/s (*named 1), else
 * the one its stack prints (*named 0); -1 when neither says.  Megatron-
 * Bridge prints Megatron-LM's count of the causal half of the attention
 * pairs (megatron-causal): the TFLOP/s and tokens/s of its performance
 * summary's rows agree under it, release 25.09 to 26.08, and 4-18% apart
 * under the non-causal count, whose formula its notes name ("NeMo/Megatron
 * model-FLOP formula"); NeMo's own summary prints the non-causal one
 * (test_mcore_ways stacks_print_their_own_flop_counts: 106 of 110 rows
 * within 1%). */
static int printed_convention(const struct vrow *r, int *named)
{
	static const struct {
		int conv;
		const char *words;
	} words[] = {
		{PROJ_FLOPS_MEGATRON_CAUSAL, "megatron-causal"},
		{PROJ_FLOPS_MEGATRON_2021, "narayanan|eq. 3|megatron-2021"},
		{PROJ_FLOPS_MEGATRON, "megatron model-flop|nemo/megatron model-flop|"
				      "num_floating_point_operations|model tflop/s uses nemo|"
				      "megatron model flop|nemo model-flop"},
		{PROJ_FLOPS_PALM, "palm|6n + 12"},
	};
	int bridge = r->stack.family == VS_BRIDGE;

	*named = 0;
	for (size_t i = 0; i < sizeof words / sizeof words[0]; i++)
		if (vtext_has(r->text, words[i].words)) {
			if (words[i].conv == PROJ_FLOPS_MEGATRON && bridge)
				break; /* the formula named; which count of it below */
			*named = 1;
			return words[i].conv;
		}
	if (bridge)
		return PROJ_FLOPS_MEGATRON_CAUSAL;
	return r->stack.family == VS_NEMO ? PROJ_FLOPS_MEGATRON : -1;
}

/* A TFLOP/s or MFU figure's convention, where no column or flag names it,
 * for a row compared on it alone. */
static void convention(struct vrow *r)
{
	int named;

	if (r->conv >= 0 || !(r->tflops > 0 || r->mfu > 0) || r->tps > 0 || r->iter > 0)
		return;
	if ((r->conv = printed_convention(r, &named)) < 0)
		return;
	if (named)
		vrow_note(r, "TFLOP/s counted as %s (named in the row's text)",
			  proj_flops_name(r->conv));
	else if (r->conv == PROJ_FLOPS_MEGATRON_CAUSAL)
		vrow_assume(r, "TFLOP/s counted as megatron-causal (Megatron-Bridge prints "
			       "Megatron-LM's causal count: its performance summary's TFLOP/s and "
			       "tokens/s agree under it, 25.09-26.08)");
	else
		vrow_assume(r, "TFLOP/s counted as megatron (%s prints Megatron-LM's "
			       "num_floating_point_operations)", r->stack.name);
}

/* Whether the TFLOP/s a row prints, counted by conv over sc, give its
 * tokens/s tps within 1%; *off the miss (%).  0 when sc does not finalize. */
static int flops_agree(cvc_proj_scenario sc, int conv, double tflops, double tps, double *off)
{
	double x;

	*off = NAN;
	if (proj_finalize(&sc))
		return 0;
	x = 100 * (proj_flops_tokens_per_s(conv, &sc, tflops) / tps - 1);
	/* said to the tenth: a miss that rounds to zero says +0.0, not -0.0 */
	*off = round(10 * x) / 10 + 0.0;
	return fabs(x) <= 1;
}

/*
 * Whether the run had the catalog's multi-token prediction layers, where the
 * row neither gives them nor says: the TFLOP/s it prints beside its tokens/s
 * or step time count the model that ran (Megatron-LM adds each MTP layer and
 * its logits), so where they agree within 1% without the MTP layers and not
 * with them, the run had none: Megatron-Bridge's 25.11 DeepSeek-V3 rows on
 * GB300 (test_mcore_ways printed_flops_say_whether_mtp_ran).  A launcher
 * whose model has no MTP module says so first (vlaunch.c).
 */
static void mtp_from_flops(struct vrow *r)
{
	cvc_proj_scenario none = r->sc;
	double tps = r->tps, with, without;
	int named, conv = r->conv >= 0 ? r->conv : printed_convention(r, &named);

	if (!(r->sc.mtp_layers > 0) || !r->g.mtp_catalog || conv < 0 || !(r->tflops > 0))
		return;
	if (!(tps > 0) && r->iter > 0 && r->sc.gpus > 0)
		tps = r->sc.global_batch * r->sc.seq / (r->iter * r->sc.gpus);
	if (!(tps > 0))
		return;
	none.mtp_layers = 0;
	if (flops_agree(r->sc, conv, r->tflops, tps, &with) ||
	    !flops_agree(none, conv, r->tflops, tps, &without))
		return;
	r->sc.mtp_layers = 0;
	vrow_assume(r, "mtp_layers=0 (its %g TFLOP/s, counted as %s, give its %.0f tokens/s "
		       "without the catalog's MTP layers (%+.1f%%), not with them (%+.1f%%))",
		    r->tflops, proj_flops_name(conv), tps, without, with);
}

/* Says the defaults filled in for the fields that define a run. */
static void note_defining(struct vrow *r, int legacy)
{
	cvc_proj_scenario *sc = &r->sc;

	for (size_t i = 0; i < sizeof defining / sizeof defining[0]; i++) {
		int f = vrow_fid(r, defining[i]);
		char val[64];

		if (f < 0 || vrow_given(r, f))
			continue;
		if (legacy && (!strcmp(defining[i], "seq") || !strcmp(defining[i], "vocab") ||
			       !strcmp(defining[i], "micro_batch") || !strcmp(defining[i], "sp") ||
			       !strcmp(defining[i], "vpp") || !strcmp(defining[i], "cp") ||
			       !strcmp(defining[i], "kv_heads") || !strcmp(defining[i], "ffn") ||
			       !strcmp(defining[i], "ffn_type")))
			continue; /* the table's own conventions, said once above */
		if (!strcmp(defining[i], "kv_heads") && r->g.mla)
			continue;
		if (!strcmp(defining[i], "kv_heads") || !strcmp(defining[i], "ffn"))
			snprintf(val, sizeof val, "%s", !strcmp(defining[i], "ffn")
							      ? (sc->ffn_type ? "8h/3" : "4h")
							      : "heads");
		else if (proj_fields[f].type == PF_ENUM)
			proj_enum_name(proj_fields[f].names, (int)proj_field_get(sc, f), val,
				       sizeof val);
		else
			snprintf(val, sizeof val, "%g", proj_field_get(sc, f));
		vrow_assume(r, "%s=%s (default)", defining[i], val);
	}
}

/*
 * How an MoE row's tokens crossed the network, where its text does not
 * say.  DualPipe named in the text: DeepSeek's schedule (deepseek-ai/
 * DualPipe), its all-to-all the node-limited kernels of the DeepSeek-V3
 * report (sec. 3.2.2: each token over InfiniBand once per node, then
 * NVLink), which DeepEP releases.  Expert parallelism wider than an NVLink
 * domain on Megatron-Bridge: its performance recipes run that on DeepEP
 * with the 1F1B all-to-all overlap (DeepSeek-V3 on 1024 H100, EP 64:
 * enable_deepep=True and set_moe_a2a_overlap_overrides(),
 * scripts/performance/configs/deepseek/deepseek_llm_pretrain.py @0132842;
 * on 256 B200, EP 32: moe_flex_dispatcher_backend="deepep",
 * moe_a2a_overlap=True, deepseek_workload_base_configs.py @0426418).
 * Inside one domain the recipes keep Megatron-Core's all-to-all.  A
 * dispatcher the text names wins.
 */
/*
 * Expert tensor parallelism a row does not state.  Megatron-Core's default
 * is tp (expert_tensor_parallel_size follows tensor_model_parallel_size),
 * but its expert layout carves ep x etp ranks out of tp x dp x cp: where
 * that makes the stated layout impossible and etp 1 makes it whole, the
 * run had etp 1, as Megatron-Bridge's MoE recipes set it (Qwen3-235B-A22B
 * on 256 H100 at TP 2, EP 32).  Said.
 */
static void expert_tp(struct vrow *r)
{
	cvc_proj_scenario *sc = &r->sc;
	int f = vrow_fid(r, "etp");
	double t = sc->tp >= 1 ? sc->tp : 1, c = sc->cp >= 1 ? sc->cp : 1;
	double pp = sc->pp >= 1 ? sc->pp : 1;
	double d = sc->dp >= 1 ? sc->dp : sc->gpus / (t * pp * c), room = t * d * c;

	if (f < 0 || vrow_given(r, f) || !(sc->experts > 1) || !(sc->ep > 1) || !(t > 1) ||
	    !(room >= 1) || fmod(room, sc->ep * t) == 0 || fmod(room, sc->ep) != 0)
		return;
	sc->etp = 1;
	vrow_mark(r, f);
	vrow_assume(r, "etp=1 (EP %g x TP %g does not fit in TP x DP x CP = %g: the run's experts "
		       "were not tensor-parallel)", sc->ep, t, room);
}

static void moe_dispatch(struct vrow *r, cvc_proj_ctx *ctx)
{
	/* a dispatcher the text names, by Megatron-Core's and DeepEP's words
	 * ("HybridEP", "DeepEP", "flex dispatcher", "alltoall dispatcher") */
	static const struct {
		int v;
		const char *words;
	} said[] = {
		{CVC_PROJ_DISPATCH_HYBRIDEP, "hybridep|hybrid-ep|hybrid_ep|hybrid ep"},
		{CVC_PROJ_DISPATCH_DEEPEP, "deepep|deep-ep|deep_ep"},
		{CVC_PROJ_DISPATCH_FLEX, "flex dispatcher|flex token dispatcher"},
		{CVC_PROJ_DISPATCH_ALLTOALL, "alltoall|all-to-all dispatcher|a2a dispatcher|"
					     "alltoall dispatcher"},
	};
	cvc_proj_scenario *sc = &r->sc;
	int fd = vrow_fid(r, "ep_dispatcher"), fs = vrow_fid(r, "pp_schedule");
	double etp = sc->etp >= 1 ? sc->etp : (sc->tp >= 1 ? sc->tp : 1), dom;
	int dualpipe, d, off[sizeof said / sizeof said[0]] = {0};
	char why[400], dn[16], notes[sizeof r->text];

	if (!(sc->experts > 1) || !(sc->ep > 1) || fd < 0 || fs < 0)
		return;
	dualpipe = vtext_has(r->text, "dualpipe|dual-pipe");
	if (dualpipe && !vrow_given(r, fs)) {
		proj_field_set_num(sc, fs, CVC_PROJ_PP_DUALPIPE);
		vrow_mark(r, fs);
		vrow_note(r, "pp_schedule=dualpipe (named in the row's text)");
	}
	if (vrow_given(r, fd))
		return;
	/* the notes' words before the source's: a source path's folder
	 * ("distributed/deepep/README.md") names what the page is about, and
	 * its baseline rows ("all-to-all dispatcher", "no DeepEP") say otherwise */
	snprintf(notes, sizeof notes, "%.*s", (int)r->notes_len, r->text + r->notes_at);
	for (int pass = 0; pass < 2; pass++)
		for (size_t i = 0; i < sizeof said / sizeof said[0]; i++) {
			char nm[16];
			int s = vtext_switch_lower(pass ? r->text : notes, said[i].words);

			if (!pass && s == 0)
				off[i] = 1;
			if (s <= 0 || off[i])
				continue;
			sc->ep_dispatcher = said[i].v;
			vrow_mark(r, fd);
			proj_enum_name(proj_fields[fd].names, said[i].v, nm, sizeof nm);
			vrow_note(r, "ep_dispatcher=%s (named in the row's text)", nm);
			return;
		}
	if (dualpipe) {
		sc->ep_dispatcher = CVC_PROJ_DISPATCH_DEEPEP;
		vrow_mark(r, fd);
		vrow_assume(r, "ep_dispatcher=deepep (DualPipe: DeepSeek's node-limited all-to-all, "
			       "V3 report sec. 3.2.2, released as DeepEP)");
		return;
	}
	/* across NVLink domains, the dispatcher of the model's transcribed
	 * recipe (vrecipe.c); the recipes differ by model and layout, so a
	 * row without one keeps cvc's */
	dom = proj_domain_of(sc, proj_ctx_pricer(ctx, sc));
	if (!(sc->ep * etp > dom) || (d = vrecipe_dispatcher(r, why, sizeof why)) < 0)
		return;
	sc->ep_dispatcher = d;
	vrow_mark(r, fd);
	proj_enum_name(proj_fields[fd].names, d, dn, sizeof dn);
	vrow_assume(r, "ep_dispatcher=%s (EP %g over NVLink domains of %g: %s)", dn, sc->ep * etp,
		    dom, why);
}

/* A global batch given in tokens, in sequences of the row's length. */
static int batch_in_tokens(struct vrow *r)
{
	cvc_proj_scenario *sc = &r->sc;
	int f = vrow_fid(r, "global_batch");
	double b;

	if (!(r->g.batch_tokens > 0))
		return 0;
	if (!vrow_given(r, vrow_fid(r, "seq")))
		return vrow_cannot(r, CVC_PROJ_VWHY_MISSING, "global_batch '%s' is in tokens and "
				   "the row gives no seq to make sequences of them", r->g.batch_cell);
	/* "4M tokens" in a paper is 4 x 2^20 = 1024 sequences of 4096 as often
	 * as 4e6: the reading that makes whole sequences, within 1% */
	{
		static const double bin[] = {['K'] = 1024.0, ['M'] = 1048576.0, ['G'] = 1073741824.0};
		unsigned char u = (unsigned char)r->g.batch_unit;
		double tok[2] = {r->g.batch_tokens,
				 u < sizeof bin / sizeof bin[0] && bin[u] > 0 ? r->g.batch_num * bin[u]
									      : r->g.batch_tokens};
		int best = -1;

		for (int i = 0; i < 2; i++) {
			double q = tok[i] / sc->seq;

			if (q >= 1 && fabs(q - round(q)) <= 0.01 * q &&
			    (best < 0 || fabs(q - round(q)) <
					     fabs(tok[best] / sc->seq - round(tok[best] / sc->seq))))
				best = i;
		}
		if (best < 0)
			return vrow_cannot(r, CVC_PROJ_VWHY_CELL, "column global_batch: '%s' (expected "
					   "whole sequences of %g tokens)", r->g.batch_cell, sc->seq);
		b = round(tok[best] / sc->seq);
		sc->global_batch = b;
		vrow_mark(r, f);
		vrow_assume(r, "global_batch=%g ('%s': %.0f tokens over seq %g)", b, r->g.batch_cell,
			    tok[best], sc->seq);
	}
	return 0;
}

/*
 * The recompute of a row that names none and whose recipe cvc has not
 * transcribed: what its launcher ran where cvc has read it (vlaunch.c),
 * else its framework's default.  Megatron-Core's is none
 * (TransformerConfig.recompute_granularity = None; Megatron-LM's
 * --recompute-granularity defaults to none), and NeMo's and Megatron-
 * Bridge's model recipes keep it unless a performance preset names
 * modules; NeMo AutoModel's parallelizer checkpoints nothing unless its
 * configuration says so.  Other stacks keep the scenario default (none,
 * PyTorch's), said.
 */
static void recompute_default(struct vrow *r)
{
	cvc_proj_scenario *sc = &r->sc;
	int fm = vrow_fid(r, "recompute_modules");

	if (r->g.recompute)
		return;
	/* a recompute_modules cell names what a selective recompute ran */
	if (fm >= 0 && vrow_given(r, fm)) {
		vrow_set_recompute(r, CVC_PROJ_RECOMP_SELECTIVE, NULL);
		vrow_note(r, "recompute=selective (the recompute_modules cell)");
		return;
	}
	if (vlaunch_recompute(r))
		return;
	if (sc->framework == CVC_PROJ_FW_MEGATRON) {
		sc->recompute = CVC_PROJ_RECOMP_NONE;
		vrow_assume(r, "recompute=none (Megatron-Core's default: TransformerConfig."
			    "recompute_granularity = None)");
		return;
	}
	if (r->stack.family == VS_AUTOMODEL) {
		sc->recompute = CVC_PROJ_RECOMP_NONE;
		vrow_assume(r, "recompute=none (NeMo AutoModel's default: parallelize_model's "
			    "activation_checkpointing = False, components/moe/parallelizer.py)");
		return;
	}
	vrow_assume(r, "recompute=%s (default)",
		    sc->recompute == CVC_PROJ_RECOMP_SELECTIVE ? "selective" : "none");
}

int vrow_defaults(struct vrow *r, cvc_proj_ctx *ctx, int legacy)
{
	cvc_proj_scenario *sc = &r->sc;

	if (batch_in_tokens(r))
		return 1;

	if (!r->g.gpu && !legacy)
		vrow_assume(r, "gpu=%s (default)", sc->gpu);
	if (!legacy) {
		vrecipe_apply(r);
		if (framework(r) || precision(r))
			return 1;
		recompute_default(r);
		sharding(r);
		megatron_features(r);
		torchtitan_features(r);
		moments_default(r);
		graphs_said(r);
		/* the fused grouped MLP the row says it ran with */
		feature(r, "fused_grouped_mlp", "cutedsl fused grouped mlp|cute-dsl fused grouped "
			"mlp|cute dsl fused grouped mlp|fused grouped mlp|cutedsl_fused_grouped_mlp",
			0, NULL, NULL);
	}
	if (unpriced_layers(r))
		return 1;
	ffn_kind(r);
	if (moe_and_mla(r))
		return 1;
	hardware(r, ctx);
	if (!legacy) {
		expert_tp(r);
		moe_dispatch(r, ctx);
		vrecipe_graphs(r);
		vrecipe_offload(r);
		vrecipe_offload_modules(r);
		vrecipe_regressed(r);
	}
	convention(r);
	if (!legacy && !vlaunch_mtp(r))
		mtp_from_flops(r);
	note_defining(r, legacy);
	return r->why[0] ? 1 : 0;
}
