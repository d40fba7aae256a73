/*
 * run.c - expanding a study: the cross product of each block's axes
 * (an odometer, so memory stays constant however large the sweep), derived
 * fields, `auto` layouts, `where:` filters, evaluation, and the marginal
 * comparison with the same model at half the GPUs.  One result at a time is
 * handed to the caller's callback.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ctx.h"
#include "cvc/cvc_model.h"
#include "proj_internal.h"
#include "study.h"

static int is_int(double x)
{
	return x >= 1 && x < 1e15 && x == floor(x);
}

const char *proj_finalize(cvc_proj_scenario *sc)
{
	if (!is_int(sc->layers) || !is_int(sc->hidden) || !is_int(sc->heads) ||
	    !is_int(sc->vocab) || !is_int(sc->seq))
		return "model sizes must be positive integers";
	if (sc->kv_heads <= 0)
		sc->kv_heads = sc->heads;
	if (sc->head_dim <= 0) {
		if (proj_fmod(sc->hidden, sc->heads) != 0)
			return "hidden not divisible by heads";
		sc->head_dim = sc->hidden / sc->heads;
	}
	/* the latent ranks and the rope part mean nothing without MLA */
	if (sc->kv_lora_rank <= 0)
		sc->kv_lora_rank = sc->q_lora_rank = sc->qk_rope_dim = 0;
	if (sc->v_head_dim <= 0 || sc->kv_lora_rank <= 0)
		sc->v_head_dim = sc->head_dim;
	if (sc->q_lora_rank < 0)
		sc->q_lora_rank = 0;
	if (sc->qk_rope_dim < 0)
		sc->qk_rope_dim = 0;
	if (!is_int(sc->head_dim) || !is_int(sc->v_head_dim) ||
	    (sc->kv_lora_rank > 0 && !is_int(sc->kv_lora_rank)) ||
	    sc->q_lora_rank != floor(sc->q_lora_rank) || sc->qk_rope_dim != floor(sc->qk_rope_dim))
		return "head_dim and the MLA ranks must be positive integers";
	if (sc->ffn <= 0)
		sc->ffn = sc->ffn_type == CVC_PROJ_FFN_SWIGLU || sc->ffn_type == CVC_PROJ_FFN_GEGLU
				  ? 256 * ceil(8 * sc->hidden / 3 / 256)
				  : 4 * sc->hidden;
	if (sc->experts < 1)
		sc->experts = 1;
	/* a token goes to a whole number of experts */
	if (sc->experts > 1 && sc->top_k >= 1 && !is_int(sc->top_k))
		return "top_k must be a whole number";
	if (sc->top_k < 1 || sc->experts == 1)
		sc->top_k = 1;
	/* the expert widths mean nothing to a dense model (a sweep over
	 * experts: [1, 64] keeps them for its MoE half) */
	if (sc->experts == 1)
		sc->moe_ffn = sc->shared_ffn = sc->moe_latent = 0;
	else if (sc->moe_ffn <= 0)
		sc->moe_ffn = sc->ffn;
	/* so is the layer pattern (every layer of a dense model is alike) */
	if (sc->experts == 1 || sc->moe_layer_freq < 1)
		sc->moe_layer_freq = 1;
	if (sc->experts == 1 || sc->moe_first_dense < 0)
		sc->moe_first_dense = 0;
	if (sc->shared_ffn < 0)
		sc->shared_ffn = 0;
	if (sc->gpus_per_node < 1)
		sc->gpus_per_node = 8;
	if (!is_int(sc->gpus_per_node))
		return "gpus_per_node must be a whole number";
	if (sc->nvlink_domain < 0 || sc->nvlink_domain != floor(sc->nvlink_domain))
		return "nvlink_domain must be a whole number (0: the catalog's)";
	if (sc->bf16_layers_first < 0 || sc->bf16_layers_last < 0 ||
	    sc->bf16_layers_first != floor(sc->bf16_layers_first) ||
	    sc->bf16_layers_last != floor(sc->bf16_layers_last) ||
	    sc->bf16_layers_first + sc->bf16_layers_last > sc->layers)
		return "bf16_layers_first and bf16_layers_last must be whole numbers that the layers "
		       "hold";
	if (sc->micro_batch < 1)
		sc->micro_batch = 1;
	/* 0: none; a fraction of a rank is no layout (layout_reason()) */
	if (sc->cp == 0)
		sc->cp = 1;
	if (sc->ep == 0)
		sc->ep = 1;
	if (sc->tp_overlap_ag < 0)
		sc->tp_overlap_ag = sc->tp_overlap;
	if (sc->tp_overlap_rs < 0)
		sc->tp_overlap_rs = sc->tp_overlap;
	/* 16-bit gradients unless the weights are fp32: what NVIDIA's
	 * published performance recipes run (Megatron-Bridge's set
	 * grad_reduce_in_fp32 = False for every model family, NeMo's
	 * performance scripts too), where Megatron-LM's command line would
	 * reduce bf16 weights' gradients in fp32 (validate takes that for its
	 * rows: vdefault.c); torchtitan reduces in fp32 (its
	 * training.mixed_precision_reduce ships "float32") */
	if (sc->grad_reduce_fp32 < 0)
		sc->grad_reduce_fp32 = sc->dtype == CVC_PROJ_FP32 ||
				       sc->framework == CVC_PROJ_FW_TORCHTITAN;
	if (sc->vpp == 0)
		sc->vpp = 1;
	if (sc->clusters < 1)
		sc->clusters = 1;
	if (sc->experts > 1 && sc->top_k > sc->experts)
		return "top_k larger than experts";
	if (sc->experts > 1 && (!is_int(sc->moe_ffn) ||
				(sc->shared_ffn > 0 && !is_int(sc->shared_ffn))))
		return "moe_ffn and shared_ffn must be positive integers";
	if (sc->moe_latent != 0 && !is_int(sc->moe_latent))
		return "moe_latent must be a positive integer (0: none)";
	if (sc->moe_first_dense != floor(sc->moe_first_dense) || !is_int(sc->moe_layer_freq))
		return "moe_first_dense and moe_layer_freq must be whole numbers";
	{
		int mask;
		char bad[80];

		if (proj_recompute_modules(sc->recompute_modules, &mask, bad, sizeof bad))
			return "recompute_modules: expected core_attn, moe_act, layernorm, "
			       "mla_up_proj, mlp, moe or shared_experts";
	}
	/* the busiest rank holds at most all of the group's tokens */
	if (!(sc->moe_imbalance >= 1) || (sc->experts > 1 && sc->moe_imbalance > sc->ep &&
					  sc->moe_imbalance > 1))
		return "moe_imbalance must be at least 1 and at most ep";
	/* no SM, no kernel to move the tokens */
	if (sc->ep_sms != PROJ_AUTO && !is_int(sc->ep_sms))
		return "ep_sms must be auto or a whole number of SMs, at least 1";
	if (!is_int(sc->local_sgd_h))
		return "local_sgd_h must be a whole number of steps, at least 1";
	if (sc->moe_router_group_topk != 0 && !is_int(sc->moe_router_group_topk))
		return "moe_router_group_topk must be a whole number of nodes (0: any)";
	/* power usage effectiveness: facility energy over the IT equipment's,
	 * at least 1 by its definition (The Green Grid, White Paper #49) */
	if (!(sc->pue >= 1))
		return "pue must be at least 1";
	if (sc->mtp_layers < 0 || sc->mtp_layers != floor(sc->mtp_layers) || sc->mtp_layers > 64)
		return "mtp_layers must be a whole number, 0 to 64";
	{
		const char *why = proj_layers_finalize(sc);

		if (why)
			return why;
	}
	if (sc->experts > 1 && sc->moe_first_dense >= sc->layers)
		return "moe_first_dense leaves no MoE layer (set experts: 1 for a dense model)";
	if (sc->clusters > 1 && !(sc->inter_cluster_gbps > 0))
		return "clusters > 1 need inter_cluster_gbps > 0";
	if (sc->gpus <= 0) {
		if (sc->nodes > 0)
			sc->gpus = sc->nodes * sc->gpus_per_node;
		else if (sc->dp > 0 && sc->tp > 0 && sc->pp > 0)
			sc->gpus = sc->tp * sc->pp * sc->cp * sc->dp;
		else
			return "hardware: gpus or nodes needed";
	}
	if (!is_int(sc->gpus))
		return "gpus must be a positive integer";
	if (sc->nodes > 0 && sc->nodes != ceil(sc->gpus / sc->gpus_per_node))
		return "nodes != gpus / gpus_per_node";
	sc->nodes = ceil(sc->gpus / sc->gpus_per_node);
	if (!(sc->scale_compute > 0 && sc->scale_hbm_bw > 0 && sc->scale_hbm_cap > 0 &&
	      sc->scale_intra_bw > 0 && sc->scale_inter_bw > 0))
		return "scale factors must be > 0";
	return NULL;
}

/* Checks a concrete layout and derives dp; NULL when valid. */
static const char *layout_reason(cvc_proj_scenario *sc, double dp_given)
{
	double tpc, dp, m;

	if (!is_int(sc->tp) || !is_int(sc->pp) || !is_int(sc->vpp) || !is_int(sc->cp) ||
	    !is_int(sc->ep) || !is_int(sc->micro_batch) || !is_int(sc->global_batch))
		return "parallel sizes and batches must be positive integers";
	if (proj_is_3d(sc)) {
		/* the grid's own checks; tp becomes the grid's size */
		const char *why = proj_grid_reason(sc);

		if (why)
			return why;
	} else if (sc->heads > 0 && sc->kv_heads > 0 &&
		   (sc->kv_heads > sc->heads || proj_fmod(sc->heads, sc->kv_heads) != 0)) {
		/* grouped-query attention: each key/value head serves
		 * heads / kv_heads query heads */
		return "heads not divisible by kv_heads";
	} else if (proj_fmod(sc->heads, sc->tp) != 0) {
		return "heads not divisible by tp";
	} else if (proj_fmod(sc->kv_heads, sc->tp) != 0 && proj_fmod(sc->tp, sc->kv_heads) != 0) {
		return "kv_heads and tp do not divide";
	} else if ((sc->experts == 1 || proj_layers_mixed(sc)) && proj_fmod(sc->ffn, sc->tp) != 0) {
		return "ffn not divisible by tp";
	} else if (proj_fmod(sc->shared_ffn, sc->tp) != 0) {
		return "shared_ffn not divisible by tp";
	}
	if (sc->kv_lora_rank > 0 && sc->attention == CVC_PROJ_ATTN_UNFUSED)
		return "multi-latent attention is priced with fused attention only";
	if (proj_has_kind(sc, PROJ_MIX_MAMBA)) {
		/* MambaMixer: each tensor-parallel rank holds whole heads and groups */
		if (proj_fmod(sc->mamba_heads, sc->tp) != 0 || proj_fmod(sc->mamba_groups, sc->tp) != 0)
			return "mamba_heads and mamba_groups not divisible by tp";
		if (sc->cp > 1)
			return "Mamba layers with context parallelism are not priced (cp 1)";
		if (proj_is_3d(sc))
			return "3D tensor parallelism is priced for attention layers only";
	}
	if (sc->pp_layout && sc->pp_layout[0]) {
		/* the layout says how many virtual stages each rank runs */
		double v;
		const char *why;

		if (sc->first_stage_layers > 0 || sc->last_stage_layers > 0)
			return "give pp_layout or first/last_stage_layers, not both";
		if (!(sc->pp > 1))
			return "pp_layout needs pp > 1";
		if ((why = proj_pp_layout_check(sc, &v)))
			return why;
		if (sc->vpp > 1 && sc->vpp != v)
			return "vpp differs from pp_layout's stages per rank";
		sc->vpp = v;
	}
	if (sc->vpp > 1 && sc->pp < 2)
		return "vpp > 1 needs pp > 1";
	{
		const char *why = proj_offload_reason(sc);

		if (!why)
			why = proj_stack_reason(sc);
		if (why)
			return why;
	}
	{
		double f, mid, l;
		const char *why = proj_stage_layers(sc, &f, &mid, &l);

		if (why)
			return why;
	}
	if (proj_fmod(sc->seq, sc->cp) != 0)
		return "seq not divisible by cp";
	tpc = sc->tp * sc->pp * sc->cp;
	if (proj_fmod(sc->gpus, tpc) != 0)
		return "gpus not divisible by tp*pp*cp";
	dp = sc->gpus / tpc;
	if (dp_given > 0 && dp_given != dp)
		return "dp != gpus/(tp*pp*cp)";
	sc->dp = dp;
	if (proj_fmod(sc->global_batch, dp * sc->micro_batch) != 0)
		return "global_batch not divisible by dp*micro_batch";
	m = sc->global_batch / (dp * sc->micro_batch);
	if (sc->vpp > 1 && proj_fmod(m, sc->pp) != 0)
		return "interleaving needs micro-batches divisible by pp";
	/* deepseek-ai/DualPipe dualpipe.py: an even number of ranks, each
	 * holding one chunk per direction, and an even number of at least 2 pp
	 * micro-batches */
	if (sc->pp_schedule == CVC_PROJ_PP_DUALPIPE &&
	    (sc->pp < 2 || proj_fmod(sc->pp, 2) != 0 || sc->vpp > 1 || proj_fmod(m, 2) != 0 ||
	     m < 2 * sc->pp))
		return "dualpipe needs an even pp >= 2, vpp 1 and an even count of >= 2 pp "
		       "micro-batches";
	if (sc->experts > 1) {
		double etp = sc->etp > 0 ? sc->etp : sc->tp;

		if (proj_fmod(sc->experts, sc->ep) != 0)
			return "experts not divisible by ep";
		if (!is_int(etp) || proj_fmod(sc->moe_ffn, etp) != 0)
			return "moe_ffn not divisible by etp";
		/* Megatron-Core's expert layout: ep x etp ranks carved from
		 * tp x dp x cp (ep divides dp*cp when etp = tp) */
		if (proj_fmod(sc->tp * dp * sc->cp, sc->ep * etp) != 0)
			return "ep*etp must divide tp*dp*cp";
	} else if (sc->ep > 1) {
		return "ep > 1 needs experts > 1";
	}
	/* Megatron-Core's combined 1F1B pairs one micro-batch's forward with
	 * another's backward layer by layer; a fully recomputed layer has no
	 * such split (its prerequisites: selective recompute or none) */
	if (sc->ep_overlap && sc->ep > 1 && sc->recompute == CVC_PROJ_RECOMP_FULL)
		return "ep_overlap needs recompute none or selective";
	if (sc->zero < 0 || sc->zero > 3 || sc->zero != floor(sc->zero))
		return "zero must be 0, 1, 2 or 3";
	if (proj_fmod(dp, sc->clusters) != 0)
		return "dp not divisible by clusters";
	if (sc->shard_group > 0 && (!is_int(sc->shard_group) ||
				    proj_fmod(dp * sc->cp, sc->shard_group) != 0))
		return "shard_group must divide dp*cp";
	return NULL;
}

void cvc_proj_evaluate(cvc_proj_ctx *ctx, const cvc_proj_scenario *in, cvc_proj_result *r)
{
	cvc_proj_scenario sc = *in;
	const char *why = proj_finalize(&sc);

	if (!why && (sc.tp == PROJ_AUTO || sc.pp == PROJ_AUTO || sc.vpp == PROJ_AUTO))
		why = "auto layouts are expanded by a study, not by evaluate";
	if (!why)
		why = layout_reason(&sc, in->dp);
	if (why) {
		memset(r, 0, sizeof *r);
		r->valid = 0;
		r->reason = why;
		r->half_tokens_per_s = r->marginal_tokens_per_gpu = NAN;
		return;
	}
	proj_evaluate(ctx, &sc, r);
}

struct runner {
	cvc_proj_ctx *ctx;
	const struct block *b;
	int flags;
	cvc_proj_cb cb;
	void *user;
	uint64_t count;
	int stopped;
};

/* The block's filters on sc: before evaluation (r NULL) those that read
 * only scenario fields, after it (r set) those that read output columns. */
static int where_ok(const struct block *b, const cvc_proj_scenario *sc, const cvc_proj_result *r)
{
	for (int i = 0; i < b->nwhere; i++) {
		double v;

		if (proj_expr_uses_result(b->where[i]) != (r != NULL))
			continue;
		v = proj_expr_eval(b->where[i], sc, r);
		if (!(v == v && v != 0))
			return 0;
	}
	return 1;
}

/* Layout values to try for a field: itself, or every candidate for auto. */
static int candidates(const cvc_proj_scenario *sc, int which, double *out, int max)
{
	int n = 0;

	if (which == 0) { /* tp: powers of two within a node */
		for (double t = 1; t <= sc->gpus_per_node && t <= sc->heads && n < max; t *= 2)
			out[n++] = t;
	} else if (which == 1) { /* pp: divisors of the layer count */
		for (double p = 1; p <= sc->layers && p <= 128 && n < max; p++)
			if (proj_fmod(sc->layers, p) == 0 && proj_fmod(sc->gpus, p) == 0)
				out[n++] = p;
	} else { /* vpp */
		static const double v[] = {1, 2, 4};

		for (int i = 0; i < 3 && n < max; i++)
			out[n++] = v[i];
	}
	return n;
}

/*
 * Calls fn for every layout of base (one when nothing is auto).  Auto
 * layouts that are impossible are skipped silently; a fixed impossible
 * layout is reported with its reason.
 */
typedef void (*layout_fn)(struct runner *rn, cvc_proj_scenario *sc, const char *why,
			  void *arg);

static void layouts(struct runner *rn, const cvc_proj_scenario *base, layout_fn fn, void *arg)
{
	double tps[16], pps[128], vps[4];
	int nt, np, nv, autos;
	double dp_given = base->dp;

	autos = (base->tp == PROJ_AUTO) | (base->pp == PROJ_AUTO) << 1 |
		(base->vpp == PROJ_AUTO) << 2;
	if (autos & 1)
		nt = candidates(base, 0, tps, 16);
	else
		tps[0] = base->tp, nt = 1;
	if (autos & 2)
		np = candidates(base, 1, pps, 128);
	else
		pps[0] = base->pp, np = 1;
	if (autos & 4)
		nv = candidates(base, 2, vps, 4);
	else
		vps[0] = base->vpp, nv = 1;
	if (autos)
		dp_given = 0; /* dp follows the layout being tried */
	for (int i = 0; i < nt && !rn->stopped; i++)
		for (int j = 0; j < np && !rn->stopped; j++)
			for (int k = 0; k < nv && !rn->stopped; k++) {
				cvc_proj_scenario sc = *base;
				const char *why;

				sc.tp = tps[i];
				sc.pp = pps[j];
				sc.vpp = vps[k];
				if ((autos & 4) && sc.vpp > 1 && sc.pp < 2)
					continue;
				why = layout_reason(&sc, dp_given);
				if (why && autos)
					continue;
				fn(rn, &sc, why, arg);
			}
}

/* Best tokens/s at half the GPUs (auto layouts: over every layout that
 * passes the filters, preferring ones that fit in memory). */
struct half {
	double best, best_fit;
};

static void half_one(struct runner *rn, cvc_proj_scenario *sc, const char *why, void *arg)
{
	struct half *h = arg;
	cvc_proj_result r;

	if (why || !where_ok(rn->b, sc, NULL))
		return;
	proj_evaluate(rn->ctx, sc, &r);
	if (!r.valid || !where_ok(rn->b, sc, &r))
		return;
	if (r.tokens_per_s > h->best)
		h->best = r.tokens_per_s;
	if (r.fits && r.tokens_per_s > h->best_fit)
		h->best_fit = r.tokens_per_s;
}

static double half_tps(struct runner *rn, const cvc_proj_scenario *base)
{
	cvc_proj_scenario h = *base;
	struct half acc = {-1, -1};

	if (base->gpus < 2 || proj_fmod(base->gpus, 2) != 0)
		return NAN;
	h.gpus = base->gpus / 2;
	h.nodes = ceil(h.gpus / h.gpus_per_node);
	h.dp = 0;
	layouts(rn, &h, half_one, &acc);
	if (acc.best_fit > 0)
		return acc.best_fit;
	return acc.best > 0 ? acc.best : NAN;
}

struct emit_arg {
	double half;       /* for auto layouts: computed once per base point */
	int per_layout;    /* fixed layout: compute half per scenario */
};

/* Which upgrade pays: the step with each resource doubled, as a speed-up. */
static void gains(struct runner *rn, const cvc_proj_scenario *sc, cvc_proj_result *r)
{
	double *out[5] = {&r->gain_compute, &r->gain_hbm_bw, &r->gain_hbm_cap, &r->gain_intra_bw,
			  &r->gain_inter_bw};

	for (int i = 0; i < 5; i++) {
		cvc_proj_scenario c = *sc;
		cvc_proj_result g;
		double *f[5] = {&c.scale_compute, &c.scale_hbm_bw, &c.scale_hbm_cap, &c.scale_intra_bw,
				&c.scale_inter_bw};

		*f[i] *= 2;
		proj_evaluate(rn->ctx, &c, &g);
		*out[i] = g.valid && g.step_s > 0 ? r->step_s / g.step_s : NAN;
	}
}

static void emit_one(struct runner *rn, cvc_proj_scenario *sc, const char *why, void *arg)
{
	struct emit_arg *ea = arg;
	cvc_proj_result r;

	if (!why && !where_ok(rn->b, sc, NULL))
		return;
	if (why) {
		if (rn->flags & CVC_PROJ_VALID_ONLY)
			return;
		if (!where_ok(rn->b, sc, NULL))
			return;
		memset(&r, 0, sizeof r);
		r.reason = why;
		r.half_tokens_per_s = r.marginal_tokens_per_gpu = NAN;
		if (!where_ok(rn->b, sc, &r))
			return;
	} else {
		proj_evaluate(rn->ctx, sc, &r);
		if (!r.valid && (rn->flags & CVC_PROJ_VALID_ONLY))
			return;
		if (!where_ok(rn->b, sc, &r))
			return;
		if (r.valid && cvc_proj_ctx_intervals(rn->ctx))
			gains(rn, sc, &r);
		if (r.valid && !(rn->flags & CVC_PROJ_NO_MARGINAL)) {
			double half = ea->per_layout ? half_tps(rn, sc) : ea->half;

			r.half_tokens_per_s = half;
			r.marginal_tokens_per_gpu =
				(r.tokens_per_s - half) / (sc->gpus - sc->gpus / 2);
		}
	}
	sc->index = rn->count++;
	if (rn->cb(rn->user, sc, &r))
		rn->stopped = 1;
}

static void run_point(struct runner *rn, cvc_proj_scenario *sc)
{
	struct emit_arg ea = {NAN, 1};
	const char *why = proj_finalize(sc);
	int autos = sc->tp == PROJ_AUTO || sc->pp == PROJ_AUTO || sc->vpp == PROJ_AUTO;

	if (why) {
		cvc_proj_result r;

		if ((rn->flags & CVC_PROJ_VALID_ONLY))
			return;
		memset(&r, 0, sizeof r);
		r.reason = why;
		r.half_tokens_per_s = r.marginal_tokens_per_gpu = NAN;
		sc->index = rn->count++;
		if (rn->cb(rn->user, sc, &r))
			rn->stopped = 1;
		return;
	}
	if (!(sc->nvlink_domain >= 1)) {
		/* the output shows the domain the collectives were priced on */
		const struct proj_pricer *p = proj_ctx_pricer(rn->ctx, sc);

		sc->nvlink_domain = proj_domain_of(sc, p);
	}
	if (autos) {
		ea.per_layout = 0;
		if (!(rn->flags & CVC_PROJ_NO_MARGINAL))
			ea.half = half_tps(rn, sc);
	}
	layouts(rn, sc, emit_one, &ea);
}

/*
 * A study's gpu is a name a person wrote: it must be a catalog name or an
 * alias (of a GPU or a system: `perlmutter`), or the study fails naming the nearest (the pricer's forgiving
 * lookup, made for trace device names, took "A100-40" for the 80 GB A100).
 * *last caches the name checked last (the study's strings live as long as
 * it does).  CVC_ERR_FORMAT with st->errmsg set, or CVC_OK.
 */
static cvc_status check_gpu(cvc_proj_study *st, const cvc_proj_ctx *ctx, const char *gpu,
			    const char **last)
{
	const char *near[3];
	char at[64] = "";
	size_t k;
	int m;

	if (!ctx->cat || !gpu || gpu == *last || cvc_hw_catalog_find(ctx->cat, gpu, NULL)) {
		*last = gpu;
		return CVC_OK;
	}
	/* the strings are interned: the one the file wrote is this pointer */
	if ((m = proj_scn_gpu_mark(st, gpu)) >= 0)
		snprintf(at, sizeof at, " line %lu, column %lu:", st->gpu_at[m].line,
			 st->gpu_at[m].col);
	k = cvc_hw_catalog_nearest(ctx->cat, gpu, NULL, near, 3);
	snprintf(st->errmsg, sizeof st->errmsg,
		 "'%s':%s gpu '%.80s' is no GPU or system of the hardware catalog, by name or alias%s%s%s%s%s%s "
		 "(docs/MODELS.md; CVC_CATALOG adds one)", *st->file ? st->file : st->name, at, gpu,
		 k ? "; nearest: " : "", k ? near[0] : "", k > 1 ? ", " : "", k > 1 ? near[1] : "",
		 k > 2 ? ", " : "", k > 2 ? near[2] : "");
	return CVC_ERR_FORMAT;
}

cvc_status cvc_proj_study_run(cvc_proj_study *st, cvc_proj_ctx *ctx, int flags, cvc_proj_cb cb,
			      void *user, uint64_t *count)
{
	struct runner rn = {ctx, NULL, flags, cb, user, 0, 0};
	double walked = 0, size = cvc_proj_study_size(st);
	const char *checked = NULL;
	cvc_status gst;

	for (size_t bi = 0; bi < st->nblocks && !rn.stopped; bi++) {
		const struct block *b = &st->blocks[bi];
		size_t *idx = calloc(b->naxes + 1, sizeof *idx);

		if (!idx) {
			if (count)
				*count = rn.count;
			return CVC_ERR_NOMEM;
		}
		rn.b = b;
		for (;;) {
			cvc_proj_scenario sc = b->base;
			size_t i;

			for (i = 0; i < b->naxes; i++) {
				const struct alt *al = &b->axes[i].alts[idx[i]];

				for (int j = 0; j < al->n; j++)
					proj_assign(&sc, &al->a[j]);
			}
			if ((gst = check_gpu(st, ctx, sc.gpu, &checked))) {
				free(idx);
				if (count)
					*count = rn.count;
				return gst;
			}
			run_point(&rn, &sc);
			if (st->walk)
				st->walk(st->walk_user, ++walked, size);
			if (rn.stopped)
				break;
			/* odometer: the last axis turns fastest */
			for (i = b->naxes; i-- > 0;) {
				if (++idx[i] < b->axes[i].nalt)
					break;
				idx[i] = 0;
			}
			if (i == (size_t)-1)
				break;
		}
		free(idx);
	}
	if (count)
		*count = rn.count;
	return rn.stopped ? CVC_ERR_USAGE : CVC_OK;
}

void cvc_proj_study_on_walk(cvc_proj_study *st, cvc_proj_walk_cb fn, void *user)
{
	st->walk = fn;
	st->walk_user = user;
}
