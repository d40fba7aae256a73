/*
 * evaluate.c - one scenario's training step from its priced operators
 * (project.c): the per-layer cost cache, the slowest pipeline stage, the
 * overlap of each communication type with compute, the step's totals and
 * the summary figures (docs/SCENARIOS.md, "model").
 */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "cvc/cvc_base.h"
#include "cvc/cvc_model.h"
#include "ctx.h"
#include "proj_internal.h"

/* Hash of a compute-cache key: one multiply per entry, then a finalizer
 * (MurmurHash3's fmix64 constants) so the low bits the slot index takes
 * depend on every entry - a double's low mantissa bits are mostly zero. */
static uint64_t key_hash(const double *k, int n)
{
	uint64_t h = 1469598103934665603ull;

	for (int i = 0; i < n; i++) {
		uint64_t u;

		memcpy(&u, &k[i], sizeof u);
		h = (h ^ u) * 0x100000001b3ull;
	}
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdull;
	h ^= h >> 33;
	h *= 0xc4ceb9fe1a85ec53ull;
	return h ^ (h >> 33);
}

/* The calls of u's entries before a layer is priced, into before[]. */
static int notes_begin(const struct proj_used *u, double *before)
{
	for (int i = 0; u && i < u->n; i++)
		before[i] = u->e[i].calls;
	return u ? u->n : 0;
}

/* What pricing lc's layer added to u's counts, kept in lc; 0 when more
 * entries changed than lc can keep (the layer is then not cached). */
static int notes_record(const struct proj_used *u, const double *before, int n0,
			struct proj_layer_cost *lc)
{
	for (int i = 0; u && i < u->n; i++) {
		double d = u->e[i].calls - (i < n0 ? before[i] : 0);

		if (d <= 0)
			continue;
		if (lc->nnotes == PROJ_LC_NOTES)
			return 0;
		lc->notes[lc->nnotes].entry = i;
		lc->notes[lc->nnotes++].calls = d;
	}
	return 1;
}

/* A cache hit counts what pricing the layer counted. */
static void notes_replay(struct proj_used *u, const struct proj_layer_cost *lc)
{
	for (int i = 0; u && i < lc->nnotes; i++)
		u->e[lc->notes[i].entry].calls += lc->notes[i].calls;
}

/* Per-layer costs for a shape (k prices); cached in the ctx because a
 * sweep over GPU counts or batch sizes reuses the same layer shapes
 * thousands of times. */
static const struct proj_layer_cost *layer_cost(cvc_proj_ctx *ctx, struct proj_sink *k,
						const struct proj_shape *x)
{
	double key[PROJ_CC_KEY] = {1 + k->p->id + (k->unc ? 0.5 : 0), x->b, x->s, x->h, x->a,
				   x->g, x->f, x->fs, x->V, x->E,
				   x->k, x->t, x->c, x->e, x->et, x->gpn, x->sp, x->swiglu,
				   x->dtype, x->recompute, x->attention, x->framework,
				   x->fp8_recipe, x->fp8_attn, x->ag_ovl, x->rs_ovl,
				   x->tr, x->tc, x->td, x->ovl3, x->dh, x->rq, x->rkv, x->dr,
				   x->dv, x->disp, x->disp8, x->gtopk, x->mtp, x->rcm, x->kind,
				   x->win, x->wchunk, x->mh, x->mp, x->mn, x->mg, x->mk, x->mq,
				   x->gated, x->esms, x->imb, x->rfuse, x->pfuse, x->tdrop, x->eager,
				   x->fgm};
	struct proj_layer_cost *lc = &ctx->cc.e[key_hash(key, PROJ_CC_KEY) % PROJ_CC_SLOTS];
	struct proj_used *u = k->p->used;
	double before[PROJ_USED_MAX];
	int n0;

	if (memcmp(lc->key, key, sizeof key) == 0) {
		notes_replay(u, lc);
		return lc;
	}
	memset(lc, 0, sizeof *lc);
	n0 = notes_begin(u, before);
	{
		struct proj_unc *step = k->unc;

		/* one layer's prices, kept with it */
		if (step)
			k->unc = &lc->unc;
		proj_layer_ops(k, x, 1, 1, lc); /* counts: one layer's own */
		proj_ends_ops(k, x, 1, lc);
		k->unc = step;
	}
	if (notes_record(u, before, n0, lc))
		memcpy(lc->key, key, sizeof key);
	return lc;
}

static void add_comm(cvc_proj_result *r, int kind, double total, double hidden)
{
	if (hidden > total)
		hidden = total;
	if (hidden < 0)
		hidden = 0;
	r->comm_type_s[kind] += total;
	r->hidden_type_s[kind] += hidden;
	r->exposed_type_s[kind] += total - hidden;
}

static void invalid(cvc_proj_result *r, const char *why)
{
	r->valid = 0;
	r->reason = why;
}

/* One micro-batch through a stage of L layers (Ld of them dense layers
 * of an MoE model) plus extra seconds of stage-only work (embedding,
 * logits and loss); fwd_c, bwd_c: its layers' compute each way. */
struct mb_cost {
	double n[PROJ_NKIND]; /* the stage's layers by kind */
	double L, Ld, fwd_c, bwd_c, stage_c, gap_s, margin_s, tp_mb, tp_hid, ep_mb, ep_hid;
	double cp_mb, cp_hid, fsdp_mb, dp_rs_mb, fsdp_exp, t_mb;
	/* the wgrad GEMMs of the stage's layers (DualPipe's W); the compute
	 * the deepep / hybridep kernels' SMs take from the hidden dispatches
	 * (ep_sm: of ep_hid, what is priced so instead of by contention) */
	double wgrad_c, ep_margin, ep_sm;
	/* the host's launch work for the micro-batch (host_s), and what the
	 * GPU waits for it where the launches cannot run ahead (host_x) */
	double host_s, host_x;
};

/* The layers of a stage: n[k] of each kind k, priced in lc[k]; the kinds
 * it holds in the order they first appear in the model (ord, nord). */
struct stage_layers {
	const struct proj_layer_cost *lc[PROJ_NKIND];
	double n[PROJ_NKIND];
	int ord[PROJ_NKIND], nord;
};

/* Sums over the stage's layers of one per-layer figure (at offset off in
 * struct proj_layer_cost), or of two. */
static double sum_of(const struct stage_layers *S, size_t off)
{
	double t = 0;

	for (int i = 0; i < S->nord; i++) {
		int k = S->ord[i];

		if (S->n[k] > 0)
			t += S->n[k] * *(const double *)((const char *)S->lc[k] + off);
	}
	return t;
}

static double sum2_of(const struct stage_layers *S, size_t a, size_t b)
{
	double t = 0;

	for (int i = 0; i < S->nord; i++) {
		int k = S->ord[i];
		const char *c = (const char *)S->lc[k];

		if (S->n[k] > 0)
			t += S->n[k] * (*(const double *)(c + a) + *(const double *)(c + b));
	}
	return t;
}

#define SUM_OF(S, f) sum_of(S, offsetof(struct proj_layer_cost, f))
#define SUM2_OF(S, f, g) \
	sum2_of(S, offsetof(struct proj_layer_cost, f), offsetof(struct proj_layer_cost, g))

/* Exposed time of per-layer weight gathers (ag before each forward) and
 * backward traffic (tot_b: the backward's gathers and the gradient
 * reduce-scatter) over L layers: with prefetch (overlap), layer i+1's
 * traffic runs under layer i's compute and only the first layer's and the
 * excess show; without it, all of it. */
static double gathered_exposed(const struct proj_layer_cost *lc, double L, double ag,
			       double tot_b, int overlap)
{
	if (!overlap)
		return L * (ag + tot_b);
	return ag + (L - 1) * fmax(0, ag - lc->fwd_s) + tot_b +
	       (L - 1) * fmax(0, tot_b - lc->bwd_s);
}

/*
 * Share of the micro-batches whose MoE exchanges the schedule pairs with
 * another micro-batch's compute.  Megatron-Core's combined 1F1B
 * (ep_overlap): all but the warm-up forwards of the first stage, which run
 * alone (schedules.py: pp - 1 warm-up micro-batches, one more with the
 * overlap; interleaved: 2 (pp - 1) + (vpp - 1) pp + 1 virtual ones out of
 * m vpp).  DualPipe: the forward chunks its steps 4 and 5 overlap with a
 * backward chunk on the rank with the fewest, the first (deepseek-ai/
 * DualPipe dualpipe.py: m - 3 pp/2 + 1 of m).  Neither: none.
 */
static double ep_paired_share(const cvc_proj_scenario *sc)
{
	double m = sc->global_batch / (sc->dp * sc->micro_batch), pp = sc->pp, v = sc->vpp;
	double warm = v > 1 ? 2 * (pp - 1) + (v - 1) * pp + 1 : pp, n = m * (v > 1 ? v : 1);

	if (sc->pp_schedule == CVC_PROJ_PP_DUALPIPE)
		return m > 0 ? fmax(0, m - 1.5 * pp + 1) / m : 0;
	if (!sc->ep_overlap)
		return 0;
	return n > 0 ? fmax(0, n - warm) / n : 0;
}

/*
 * What of one layer's four exchanges stays exposed when a forward and a
 * backward micro-batch run the layer together, as Megatron-Core's combined
 * 1F1B schedules them (models/common/model_chunk_schedule_plan.py,
 * TransformerLayerSchedulePlan.run, after DualPipe's chunk pairs,
 * DeepSeek-V3 report Figure 4):
 *   comm: combine_bwd | dispatch_fwd -> dispatch_bwd           | combine_fwd
 *   comp: attn_fwd    | mlp_bwd -> mlp_bwd_dw -> mlp_fwd       | attn_bwd
 * combine_bwd is the combine's backward, a dispatch of gradients (ep_db),
 * dispatch_bwd the dispatch's, a combine (ep_cb).  mlp_fwd waits for
 * dispatch_fwd, dispatch_bwd for mlp_bwd; each window ends when both its
 * streams do.  The time past the compute is exposed.  DeepSeek's own
 * chunk pair (../shared/traces/deepseek-train-h800-ep64) runs its four
 * exchanges in these windows too.
 */
static double ep_pair_exposed(const struct proj_layer_cost *lc)
{
	double mf = lc->mlp_fwd_s, mb = lc->mlp_bwd_s, mw = lc->mlp_wgrad_s;
	double af = fmax(0, lc->fwd_s - mf), ab = fmax(0, lc->bwd_s - mb - mw);
	double w1 = fmax(lc->ep_db_s, af);
	double mf_end = fmax(mb + mw, lc->ep_df_s) + mf;
	double cb_end = fmax(lc->ep_df_s, mb) + lc->ep_cb_s;
	double w3 = fmax(lc->ep_cf_s, ab);

	return w1 + fmax(mf_end, cb_end) + w3 - (af + mf + mb + mw + ab);
}

/*
 * ZeRO-3 / FSDP over a stage with layers of several kinds: per layer
 * all-gather of parameters before forward and backward (again for
 * recompute), reduce-scatter of gradients after backward, each layer at
 * its own size.  Exposed: taken as one block of layers per kind, in the
 * order the kinds first appear (exact for first-k-dense patterns; an
 * alternating pattern's prefetch crosses kinds at every layer, which this
 * sees at the blocks' boundaries only).
 */
static void fsdp_mixed(const cvc_proj_scenario *sc, const struct stage_layers *S,
		       const struct proj_step_cost *st, struct mb_cost *o)
{
	double nag_b = sc->recompute == CVC_PROJ_RECOMP_FULL ? 2 : 1;
	const struct proj_layer_cost *prev = NULL;

	o->fsdp_mb = o->dp_rs_mb = 0;
	for (int i = 0; i < S->nord; i++) {
		int k = S->ord[i];

		o->fsdp_mb += S->n[k] * st->fsdp_ag[k];
		o->dp_rs_mb += S->n[k] * st->fsdp_rs[k];
	}
	o->fsdp_mb *= 1 + nag_b;
	if (!sc->dp_overlap) {
		o->fsdp_exp = o->fsdp_mb + o->dp_rs_mb;
		return;
	}
	o->fsdp_exp = 0;
	for (int i = 0; i < S->nord; i++) {
		int k = S->ord[i];
		double ag = st->fsdp_ag[k], tb = nag_b * ag + st->fsdp_rs[k];

		if (!(S->n[k] > 0))
			continue;
		if (!prev)
			o->fsdp_exp += gathered_exposed(S->lc[k], S->n[k], ag, tb, 1);
		else /* the block's first layer's traffic under the last one of the block before */
			o->fsdp_exp += fmax(0, ag - prev->fwd_s) + fmax(0, tb - prev->bwd_s) +
				       (S->n[k] - 1) * (fmax(0, ag - S->lc[k]->fwd_s) +
							fmax(0, tb - S->lc[k]->bwd_s));
		prev = S->lc[k];
	}
}

/* The kind of the stage's layers when they are all of one; -1 when not. */
static int single_kind(const struct stage_layers *S)
{
	int one = -1;

	for (int i = 0; i < S->nord; i++)
		if (S->n[S->ord[i]] > 0) {
			if (one >= 0)
				return -1;
			one = S->ord[i];
		}
	return one;
}

/*
 * Whether Transformer Engine's TP overlap is asked for where Megatron-Core's
 * combined 1F1B all-to-all overlap keeps it from working: on Hopper and
 * older, the TP overlap needs CUDA_DEVICE_MAX_CONNECTIONS=1 ("to enforce
 * kernel queuing order from host to execution order on GPU ... Otherwise,
 * communication kernel will be pushed to the end of the GEMM kernel,
 * failing to overlap the kernels"), and the stacks that run the all-to-all
 * overlap do not set it (32 with DeepEP, 8 without: Megatron-Bridge's
 * PerfEnvPlugin._set_num_cuda_device_max_connections, src/megatron/bridge/
 * recipes/run_plugins.py @17a3836a; Megatron-MoE-ModelZoo's
 * sbatch_benchmarking.sh @38ce2ed2 exports 32 with A2A_OVERLAP=1, 1
 * without).  Blackwell queues the two with 32 connections, so there both
 * overlaps run.
 */
static int tp_overlap_held(const cvc_proj_scenario *sc, const struct proj_pricer *p)
{
	return sc->ep_overlap && sc->pp_schedule != CVC_PROJ_PP_DUALPIPE && sc->experts > 1 &&
	       sc->ep > 1 && sc->tp > 1 && sc->sp && (sc->tp_overlap_ag || sc->tp_overlap_rs) &&
	       p->known && proj_nvidia(p) && !proj_sm100(p);
}

/* extra_kernels: the launches of the stage-only work; gap_us: between two
 * back-to-back kernels (cvc_model_kernel_gap_us), charged per launch: the
 * time no operator model sees; host_us: the host's work per launch priced
 * (proj_host_us()). */
static void mb_cost_of(const cvc_proj_scenario *sc, const struct stage_layers *S,
		       const struct proj_step_cost *st, double extra, double extra_kernels,
		       double extra_tp, double gap_us, double host_us, double sm_share, int tp_held,
		       struct mb_cost *o)
{
	double ps = ep_paired_share(sc);
	double dc = sc->dp * sc->cp, L = 0;
	int one = single_kind(S);
	const struct proj_layer_cost *lc = S->lc[one >= 0 ? one : S->ord[0]];

	memset(o, 0, sizeof *o);
	memcpy(o->n, S->n, sizeof o->n);
	for (int i = 0; i < S->nord; i++) {
		int k = S->ord[i];

		L += S->n[k];
		/* the layers of another kind than the model's plain one */
		if (k != proj_main_kind(sc))
			o->Ld += S->n[k];
		/* combined 1F1B or DualPipe: each paired layer hides what its
		 * windows allow; the recomputed forward's exchanges stay exposed
		 * (Megatron-Core runs them outside the overlap) */
		o->ep_mb += S->n[k] * (S->lc[k]->ep_fwd_s + S->lc[k]->ep_bwd_s);
		if (ps > 0 && S->lc[k]->ep_fwd_s + S->lc[k]->ep_bwd_s > 0) {
			const struct proj_layer_cost *c = S->lc[k];
			double four = c->ep_df_s + c->ep_cf_s + c->ep_db_s + c->ep_cb_s;

			o->ep_hid += ps * S->n[k] * fmax(0, four - ep_pair_exposed(c));
		}
	}
	/* the deepep / hybridep kernels hold their SMs while they run: the
	 * compute under them runs on the rest (sm_share: their share of the
	 * GPU), priced so instead of by the contention factor */
	if (sm_share > 0) {
		o->ep_sm = o->ep_hid;
		o->ep_margin = o->ep_hid * sm_share;
	}
	o->L = L;
	o->wgrad_c = SUM_OF(S, wgrad_s);
	o->fwd_c = SUM_OF(S, fwd_s);
	o->bwd_c = SUM_OF(S, bwd_s);
	o->stage_c = SUM2_OF(S, fwd_s, bwd_s) + extra;
	/* CUDA graphs launch the layers' kernels without the gap and without
	 * the host's work per kernel, but for the kernels they leave out (a
	 * dropless MoE layer's routed experts and permutation); a graph of the
	 * whole forward and backward (cuda_graphs 2) leaves none out, the
	 * embedding, logits and loss of the end stages included.  Each kernel
	 * has its gap; a split GEMM's chunks past the first cost the host
	 * nothing of their own (one call launches them all). */
	{
		double gpu_launches = sc->cuda_graphs == 2 ? 0
				      : (sc->cuda_graphs ? SUM_OF(S, ungraphed_kernels)
							 : SUM_OF(S, kernels)) + extra_kernels;
		double host_launches = gpu_launches - (sc->cuda_graphs ? 0 : SUM_OF(S, chunk_kernels));

		o->gap_s = 1e-6 * gap_us * gpu_launches;
		o->host_s = 1e-6 * host_us * host_launches;
	}
	o->margin_s = SUM_OF(S, tp_margin_s);
	o->tp_mb = SUM2_OF(S, tp_fwd_s, tp_bwd_s) + extra_tp;
	/* held back (tp_overlap_held()): the GEMMs still run split for the
	 * overlap, their collectives after them */
	o->tp_hid = tp_held ? 0 : fmin(o->tp_mb, SUM_OF(S, tp_hid_s));
	o->cp_mb = SUM2_OF(S, cp_fwd_s, cp_bwd_s);
	o->cp_hid = fmin(o->cp_mb, SUM2_OF(S, attn_fwd_s, attn_bwd_s));
	/* ZeRO-3 / FSDP: per layer all-gather of parameters before forward and
	 * backward (again for recompute), reduce-scatter of gradients after
	 * backward; prefetch hides layer i+1's gather under layer i */
	if (sc->zero >= 3 && dc > 1 && one < 0) {
		fsdp_mixed(sc, S, st, o);
	} else if (sc->zero >= 3 && dc > 1 && L > 0) {
		double ag = st->fsdp_ag[one], rs = st->fsdp_rs[one];
		double nag_b = sc->recompute == CVC_PROJ_RECOMP_FULL ? 2 : 1;
		double tot_b = nag_b * ag + rs;

		o->fsdp_mb = L * ag * (1 + nag_b);
		o->dp_rs_mb = L * rs;
		o->fsdp_exp = gathered_exposed(lc, L, ag, tot_b, sc->dp_overlap);
	}
	/* 3D tensor parallelism: the depth all-gathers and reduce-scatters of
	 * each layer, prefetched and deferred like FSDP's above when AxoNN
	 * overlaps them (tp_overlap); booked as tensor parallel */
	if (lc->d3_ag_s + lc->d3_rs_s > 0 && L > 0) {
		double ag = lc->d3_ag_s, rs = lc->d3_rs_s;
		double nag_b = sc->recompute == CVC_PROJ_RECOMP_FULL ? 2 : 1;
		double tot_b = nag_b * ag + rs, tot = L * (ag + tot_b);

		o->tp_mb += tot;
		o->tp_hid += tot - gathered_exposed(lc, L, ag, tot_b, sc->tp_overlap);
	}
	o->t_mb = o->stage_c + o->gap_s + o->margin_s + o->ep_margin + (o->tp_mb - o->tp_hid) +
		  (o->ep_mb - o->ep_hid) +
		  (o->cp_mb - o->cp_hid) + o->fsdp_exp;
	/* a host synchronisation in the micro-batch (proj_host_syncs()): the
	 * GPU cannot be ahead of the host past it, so a host slower than the
	 * GPU sets the micro-batch's pace; against the GPU's time with the
	 * contention its hidden communication costs (step_totals() books it),
	 * which a GPU waiting on the host absorbs */
	if (proj_host_syncs(sc)) {
		double hid = o->tp_hid + o->ep_hid - o->ep_sm + o->cp_hid +
			     (o->fsdp_mb + o->dp_rs_mb - o->fsdp_exp);

		o->host_x = fmax(0, o->host_s - o->t_mb - sc->contention * fmax(0, hid));
		/* the pace the pipeline's bubble and the stage choice see: the
		 * host's whole launch work, not less of it where contention
		 * (booked apart) takes the GPU's share (more contention would
		 * shrink the bubble) */
		o->t_mb = fmax(o->t_mb, o->host_s);
	}
}

/* A valid result with nothing priced yet, intervals off. */
static void result_init(cvc_proj_result *r)
{
	memset(r, 0, sizeof *r);
	r->valid = 1;
	r->reason = "";
	r->half_tokens_per_s = NAN;
	r->marginal_tokens_per_gpu = NAN;
	proj_intervals_off(r);
}

/* The pricer for sc when it can price sc's dtype; NULL with r marked
 * invalid (and why) when not. */
static const struct proj_pricer *usable_pricer(cvc_proj_ctx *ctx, const cvc_proj_scenario *sc,
					       cvc_proj_result *r)
{
	const struct proj_pricer *p = proj_ctx_pricer(ctx, sc);

	if (!p) {
		invalid(r, "models could not be built");
		return NULL;
	}
	if (!p->known) {
		invalid(r, "gpu not in the hardware catalog");
		return NULL;
	}
	if (!(p->peak_flops[sc->dtype] > 0)) {
		invalid(r, sc->dtype == CVC_PROJ_NVFP4 || sc->dtype == CVC_PROJ_MXFP4
				   ? "gpu has no tensor path for the dtype (no FP4 tensor cores for "
				     "nvfp4 or mxfp4)"
				   : sc->dtype == CVC_PROJ_FP8
				   ? "gpu has no tensor path for the dtype (no FP8 tensor cores)"
				   : "gpu has no tensor path for the dtype");
		return NULL;
	}
	/* MXFP8 scales blocks of 32 in the tensor cores' own instructions:
	 * the GPUs with block-scaled (microscaling) tensor cores, those with
	 * FP4 (Transformer Engine's support matrix: MXFP8 from Blackwell,
	 * compute capability 10.0, not on Hopper's 9.0) */
	if (sc->dtype == CVC_PROJ_FP8 && sc->fp8_recipe == CVC_PROJ_FP8_MXFP8 &&
	    !(p->peak_flops[CVC_PROJ_NVFP4] > 0 || p->peak_flops[CVC_PROJ_MXFP4] > 0)) {
		invalid(r, "gpu has no block-scaled tensor cores for mxfp8 (Blackwell on)");
		return NULL;
	}
	/* the fused grouped MLP's kernels are CuTe DSL's for block-scaled
	 * tensor cores (Transformer Engine's fused op checks compute
	 * capability 10) */
	if (sc->fused_grouped_mlp && !proj_sm100(p)) {
		invalid(r, "gpu has no block-scaled tensor cores for fused_grouped_mlp's kernels "
			   "(Blackwell on)");
		return NULL;
	}
	return p;
}

/* u += w a: the prices of a stage's layers of several kinds. */
static void unc_add(struct proj_unc *u, const struct proj_unc *a, double w)
{
	for (int c = 0; c < PU_N; c++) {
		u->t[c] += w * a->t[c];
		u->ts[c] += w * a->ts[c];
		u->tdef[c] += w * a->tdef[c];
		u->tcarry[c] += w * a->tcarry[c];
		u->ext[c] = fmax(u->ext[c], w > 0 ? a->ext[c] : 0);
	}
}

/* One micro-batch through each stage: the slowest sets the pace (*best).
 * K: the model's layer kinds, priced (its first/last stage work from the
 * first kind's).  Returns -1 when the pipeline stages cannot be split. */
static int slowest_stage(const cvc_proj_scenario *sc, const struct proj_pricer *p,
			 const struct stage_layers *K, const struct proj_step_cost *st,
			 const struct proj_plan *pl, struct mb_cost *best)
{
	const struct proj_layer_cost *lc = K->lc[K->ord[0]];
	double pp = sc->pp, first_e = lc->first_fwd_s + lc->first_bwd_s;
	double last_e = lc->last_fwd_s + lc->last_bwd_s, mr = proj_pp_mtp_rank(sc);
	double gap = cvc_model_kernel_gap_us(p->ms_base), host = proj_host_us(sc);
	double sms = cvc_modelset_spec(p->ms_scaled)->sm_count, esm = 0;
	int held = tp_overlap_held(sc, p);
	struct mb_cost one;
	int n = 1;
	double host_max = 0;

	if (pl->why)
		return -1;
	if (sc->experts > 1 && sc->ep > 1 &&
	    (sc->ep_dispatcher == CVC_PROJ_DISPATCH_DEEPEP ||
	     sc->ep_dispatcher == CVC_PROJ_DISPATCH_FLEX ||
	     sc->ep_dispatcher == CVC_PROJ_DISPATCH_HYBRIDEP) && sms > 0) {
		struct proj_shape x;

		proj_shape_of(sc, &x);
		esm = fmin(x.esms, sms) / sms;
	}
	memset(best, 0, sizeof *best);
	for (int i = 0; i < n; i++) {
		double at = proj_stage_pick(sc, i, &n), ext = 0, extk = 0, extt = 0;
		struct stage_layers S = *K;

		proj_plan_stage(sc, pl, at, S.n);
		if (!(pp > 1)) { /* one stage: embedding, logits and loss */
			ext = lc->first_fwd_s + lc->first_bwd_s + lc->last_fwd_s + lc->last_bwd_s;
			extk = lc->first_kernels + lc->last_kernels;
			extt = lc->first_tp_s + lc->last_tp_s;
		} else if (at == 0) {
			ext = first_e;
			extk = lc->first_kernels;
			extt = lc->first_tp_s;
		} else if (at == pp - 1) {
			ext = last_e;
			extk = lc->last_kernels;
			extt = lc->last_tp_s;
		}
		/* a standalone prediction stage: the modules' own work on its
		 * rank, their logits and loss on the last (proj_pp_mtp_rank()) */
		if (pp > 1 && mr != pp - 1) {
			double mw = lc->mtp_fwd_s + lc->mtp_bwd_s;

			if (at == pp - 1)
				ext -= mw, extk -= lc->mtp_kernels;
			if (at == mr)
				ext += mw, extk += lc->mtp_kernels;
		}
		mb_cost_of(sc, &S, st, ext, extk, extt, gap, host, esm, held, &one);
		if (i == 0 || one.t_mb > best->t_mb)
			*best = one;
		host_max = fmax(host_max, one.host_s);
	}
	/* each stage's host launches its own kernels: without a host
	 * synchronisation it runs ahead through the whole step, so the stage
	 * whose host has the most to launch, not the one whose GPU is
	 * slowest, says whether the host sets the step (step_totals());
	 * with one, each stage's t_mb holds its own host already */
	if (!proj_host_syncs(sc))
		best->host_s = host_max;
	return 0;
}

/* The communication inside each of the m micro-batches' passes (b). */
static void microbatch_comm(cvc_proj_result *r, double m, const struct mb_cost *b)
{
	add_comm(r, CVC_PROJ_COMM_TP, m * b->tp_mb, m * b->tp_hid);
	add_comm(r, CVC_PROJ_COMM_EP, m * b->ep_mb, m * b->ep_hid);
	add_comm(r, CVC_PROJ_COMM_CP, m * b->cp_mb, m * b->cp_hid);
	if (b->fsdp_mb + b->dp_rs_mb > 0) {
		/* split the exposed part between the gathers and the scatters in
		 * proportion to their time */
		double tot = b->fsdp_mb + b->dp_rs_mb, hid = tot - b->fsdp_exp;

		add_comm(r, CVC_PROJ_COMM_FSDP, m * b->fsdp_mb, m * hid * b->fsdp_mb / tot);
		add_comm(r, CVC_PROJ_COMM_DP, m * b->dp_rs_mb, m * hid * b->dp_rs_mb / tot);
	}
}

/* Pipeline: 1F1B, interleaved with v chunks per stage, or DualPipe: the
 * bubble and the activation transfers.  DualPipe's bubble is (pp/2 - 1)
 * (F&B + B - 3W) (DeepSeek-V3 report, Table 2): F&B a forward and a
 * backward chunk overlapped (one micro-batch's pace, t_mb), B a backward
 * chunk, W its weight gradients. */
static void pipeline_comm(cvc_proj_result *r, const cvc_proj_scenario *sc,
			  const struct proj_step_cost *st, double m, const struct mb_cost *b)
{
	double pp = sc->pp, v = sc->vpp, t_mb = b->t_mb;

	if (sc->pp_schedule == CVC_PROJ_PP_DUALPIPE)
		r->bubble_s = pp > 1 ? fmax(0, (pp / 2 - 1) * (t_mb + b->bwd_c - 3 * b->wgrad_c)) : 0;
	else
		r->bubble_s = pp > 1 ? (pp - 1) / v * t_mb : 0;
	if (pp > 1) {
		double one = st->pp_one;
		double total = 2 * v * m * one;
		/* fill and drain cross every stage boundary on the critical path;
		 * steady-state transfers run under other micro-batches, but only
		 * where the schedule lets them: Megatron-Core's non-interleaved
		 * 1F1B waits on each exchange (send_forward_recv_backward returns
		 * with the gradient, and forward_backward_pipelining_without_
		 * interleaving refuses overlap_p2p_comm: NVIDIA/Megatron-LM
		 * megatron/core/pipeline_parallel/schedules.py @00611e6e), so
		 * there every transfer is on the critical path */
		double exposed = fmin(total, 2 * (pp * v - 1) * one);

		if (v <= 1 && sc->pp_schedule == CVC_PROJ_PP_1F1B && sc->framework == CVC_PROJ_FW_MEGATRON)
			exposed = total;
		/* hidden under the stage's compute, so no more of it than that:
		 * chunks of under a layer (6 layers over pp 2, vpp 4) send longer
		 * than they compute */
		add_comm(r, CVC_PROJ_COMM_PP, total, fmin(total - exposed, m * b->stage_c));
	}
}

/* Of the outer exchange of local SGD / DiLoCo (per step: its total over H
 * steps / H), the part hidden: none when it blocks at the sync step (it
 * needs the H-th step's updated parameters, so no backward can hide it);
 * streamed under the next H inner steps (Douillard et al. 2025, Streaming
 * DiLoCo, arXiv 2501.18512; Kale et al. 2025, eager updates, arXiv
 * 2502.12996), up to their compute (cstep per step). */
static double outer_hidden(const cvc_proj_scenario *sc, double per_step, double cstep)
{
	return sc->outer_overlap ? fmin(per_step, cstep) : 0;
}

/* Once per step (or every H steps): the gradient sync of ZeRO 0-2 and of
 * hybrid ZeRO-3, and the exchange between clusters.  b: one micro-batch
 * through the slowest stage (its layers' compute each way); cstep: the
 * step's compute (m micro-batches + optimizer). */
static void gradient_comm(cvc_proj_result *r, const cvc_proj_scenario *sc,
			  const struct mb_cost *b, const struct proj_step_cost *st,
			  const struct proj_params *P, double cstep)
{
	double dc = sc->dp * sc->cp;
	double H = sc->local_sgd_h >= 1 ? sc->local_sgd_h : 1;
	double C = sc->clusters >= 1 ? sc->clusters : 1;
	/* the last micro-batch's backward and the next forward as they last:
	 * their compute, and their share of the GPU's waits on the host
	 * (host_x), under which the buckets' collectives run as well (a
	 * faster GPU waiting longer hid less and ran slower) */
	double fb = b->fwd_c + b->bwd_c;
	double win_b = b->bwd_c + (fb > 0 ? b->host_x * b->bwd_c / fb : 0);
	double win_f = b->fwd_c + (fb > 0 ? b->host_x * b->fwd_c / fb : 0);

	/* data parallel gradient sync (ZeRO 0-2), every H steps with local
	 * SGD in one cluster */
	if (sc->zero < 3 && dc > 1) {
		double tot = st->dp_tot, last = st->dp_last, ag = st->dp_ag, hid = 0;
		double amort = C > 1 ? 1 : H, per = (tot + ag) / amort;

		if (amort > 1) { /* local SGD in one cluster: the outer exchange */
			hid = outer_hidden(sc, per, cstep);
		} else if (sc->dp_overlap) {
			/* buckets reduce while the last micro-batch's backward still
			 * runs (the last bucket is ready only at the end); the
			 * parameter gather runs under the next forward */
			hid = fmin(fmax(0, tot - last), win_b) + fmin(ag, win_f);
		}
		add_comm(r, CVC_PROJ_COMM_DP, per, hid);
	}
	/* hybrid ZeRO-3: the gradient shards all-reduced across the replicas
	 * while the last micro-batch's backward runs */
	if (st->hsdp_tot > 0) {
		double hid = sc->dp_overlap ? fmin(fmax(0, st->hsdp_tot - st->hsdp_last),
						   win_b) : 0;

		add_comm(r, CVC_PROJ_COMM_DP, st->hsdp_tot, hid);
	}
	/* multi-cluster: clusters exchange full gradients over the slow link,
	 * every H steps (local SGD: the outer gradient, parameter-sized) */
	if (C > 1) {
		double bytes = P->p_total * P->gbytes;
		double bw = sc->inter_cluster_gbps * 1e9;
		double xc = bw > 0 ? 2 * (C - 1) / C * bytes / bw / H : INFINITY;

		add_comm(r, CVC_PROJ_COMM_XC, xc, H > 1 ? outer_hidden(sc, xc, cstep) : 0);
	}
}

/* Totals of the step from its communication (r) and the slowest stage's
 * micro-batch (b), m of them. */
static void step_totals(cvc_proj_result *r, const cvc_proj_scenario *sc,
			const struct proj_step_cost *st, double m, const struct mb_cost *b)
{
	double opt = st->opt + st->wcast, hidden_total;

	for (int j = 0; j < CVC_PROJ_COMM_N; j++) {
		r->comm_s += r->comm_type_s[j];
		r->hidden_s += r->hidden_type_s[j];
		r->exposed_s += r->exposed_type_s[j];
	}
	/* the dispatches whose SMs are priced (ep_margin) are not charged the
	 * contention factor again */
	hidden_total = fmax(0, r->hidden_s - m * b->ep_sm);
	r->contention_s = sc->contention * hidden_total + m * (b->margin_s + b->ep_margin);
	r->gaps_s = m * b->gap_s;
	r->host_s = m * b->host_x;
	r->compute_s = m * (b->stage_c + b->gap_s + b->host_x) + opt + r->contention_s;
	/* exposed per micro-batch sits inside t_mb: the step is the pipeline
	 * (m t_mb + bubble) plus what follows it */
	r->step_s = r->compute_s + r->exposed_s + r->bubble_s;
	/* no synchronisation: the host runs ahead through the whole step (the
	 * bubbles, the exposed communication), so only a host slower than the
	 * step sets it */
	if (!proj_host_syncs(sc) && m * b->host_s > r->step_s) {
		double x = m * b->host_s - r->step_s;

		r->host_s += x;
		r->compute_s += x;
		r->step_s += x;
	}
}

/*
 * A layout that does not fit by the lowest ceiling at which a published
 * training run ran out of memory (PROJ_HBM_USABLE) but is under their
 * median: it may run; a planner with --include-unfit should know which.
 */
static void mem_edge_warn(cvc_proj_result *r, const struct proj_pricer *p)
{
	char item[200];
	double share = r->mem_gb * 1e9 / p->hbm_bytes;

	if (r->fits || !(share <= PROJ_HBM_MEDIAN))
		return;
	snprintf(item, sizeof item, "memory: %.1f%% of HBM, over the %.1f%% every published "
		 "training run held before it ran out, under their median %.1f%%: may fit",
		 100 * share, 100 * PROJ_HBM_USABLE, 100 * PROJ_HBM_MEDIAN);
	proj_warn_add(r, item);
}

/* FLOPs, MFU, throughput and economics of a priced step (peak: the GPU's
 * dense peak for the dtype). */
static void flops_and_costs(cvc_proj_result *r, const cvc_proj_scenario *sc,
			    const struct proj_shape *x, const struct proj_pricer *p,
			    const struct proj_plan *pl, double peak)
{
	double s = x->s, h = x->h;
	const double *N = pl->N;
	double logits = 2 * s * h * x->V;
	double per_seq = 0, extra = 0, gemm_m = 0, attn_m = 0, n_mla = 0, n_moe = 0, mlp = 0;
	const int *ord = pl->ord, nord = pl->nord;

	/* per layer of each kind: its GEMMs (2 s x the weights a token runs
	 * through) and its sequence mixer's core (attention: QK^T and PV over
	 * every (query, key) pair, non-causal as MFU counts; local attention:
	 * each query's window; Mamba: the SSD's matmuls); x3 for training */
	for (int i = 0; i < nord; i++) {
		struct proj_shape xk;
		double w, core, wmix;
		int kd = ord[i];

		proj_shape_kind(sc, x, kd, &xk);
		proj_kind_flops(&xk, &w, &wmix, &core);
		if (kd == proj_main_kind(sc))
			gemm_m = 2 * s * w, attn_m = core;
		if (!(N[kd] > 0))
			continue;
		per_seq += N[kd] * (2 * s * w + core);
		if (sc->recompute == CVC_PROJ_RECOMP_FULL)
			extra += N[kd] * (2 * s * w + core);
		else if ((x->rcm & PROJ_RC_CORE) &&
			 (xk.mixer == PROJ_MIX_ATTN || xk.mixer == PROJ_MIX_LOCAL))
			extra += N[kd] * core; /* core attention, fused or not (project.c) */
		n_mla += xk.mixer <= PROJ_MIX_LOCAL ? N[kd] : 0;
		n_moe += PROJ_KIND_FFN(kd) == PROJ_FK_MOE ? N[kd] : 0;
		if (PROJ_KIND_FFN(kd) == PROJ_FK_DENSE)
			mlp += x->moe ? N[kd] * (2 * s * w - 2 * s * wmix) : N[kd] * 2 * s * xk.ffw;
		if ((x->rcm & PROJ_RC_ALTMM) && !xk.mla &&
		    (xk.mixer == PROJ_MIX_ATTN || xk.mixer == PROJ_MIX_LOCAL))
			/* torchtitan's op policy: wk and wo again (project.c op_sac_gemms()) */
			extra += N[kd] * 2 * s * h * (xk.g * xk.dh + xk.a * xk.dv);
		if ((x->rcm & PROJ_RC_ALTMM) && PROJ_KIND_FFN(kd) == PROJ_FK_DENSE && !xk.moe)
			extra += N[kd] * 2 * s * h * xk.f; /* w3, the gate's half */
	}
	if (sc->recompute == CVC_PROJ_RECOMP_SELECTIVE && (x->rcm & ~PROJ_RC_CORE)) {
		/* the GEMMs of the other modules selective recompute names */
		double up = (x->rq > 0 ? x->rq : h) * x->a * x->dqk + x->rkv * x->a * (x->dh + x->dv);

		if (x->mla && (x->rcm & PROJ_RC_MLA_UP))
			extra += n_mla * 2 * s * up;
		if (x->moe && (x->rcm & PROJ_RC_MOE))
			extra += n_moe * 2 * s * (x->ffw * x->k + h * x->E + x->ffs);
		else if (x->moe && (x->rcm & PROJ_RC_SHARED))
			extra += n_moe * 2 * s * x->ffs;
		if (x->rcm & PROJ_RC_MLP)
			extra += mlp;
	}
	per_seq = 3 * (per_seq + logits);
	/* multi-token prediction: per module one more layer of the main kind,
	 * the 2h -> h projection and the logits again */
	if (x->mtp > 0) {
		per_seq += 3 * x->mtp * (gemm_m + attn_m + 2 * s * 2 * h * h + logits);
		if (sc->recompute == CVC_PROJ_RECOMP_FULL)
			extra += x->mtp * (gemm_m + attn_m);
		else if (x->rcm & PROJ_RC_CORE)
			extra += x->mtp * attn_m;
	}
	double tokens = sc->global_batch * s;
	double power = sc->gpu_power_w > 0 ? sc->gpu_power_w : p->power_w;
	double secs;
	cvc_shares sh;

	r->model_flops = sc->global_batch * per_seq;
	r->hw_flops = sc->global_batch * (per_seq + extra);
	r->mfu = r->model_flops / (r->step_s * sc->gpus * peak);
	r->hfu = r->hw_flops / (r->step_s * sc->gpus * peak);
	r->tokens_per_s = tokens / r->step_s;
	r->tokens_per_s_per_gpu = r->tokens_per_s / sc->gpus;
	secs = sc->train_tokens / r->tokens_per_s;
	r->train_days = secs / 86400;
	r->gpu_hours = sc->gpus * secs / 3600;
	r->energy_mwh = sc->gpus * power * secs * sc->pue / 3.6e9;
	r->cost_usd = r->gpu_hours * sc->usd_per_gpu_hour;
	/* One denominator for both shares, the step, as every cvc output
	 * takes it (cvc_shares_of; docs/SCENARIOS.md). */
	cvc_shares_of(r->step_s, r->compute_s, r->comm_s, r->exposed_s, &sh);
	r->comm_share = sh.comm_share;
	r->exposed_share = sh.exposed_share;
	r->comm_to_compute = sh.comm_to_compute;
}

static void evaluate(cvc_proj_ctx *ctx, const cvc_proj_scenario *sc, cvc_proj_result *r)
{
	const struct proj_pricer *p;
	struct proj_layer_cost own[PROJ_NKIND];
	int moe_kind[PROJ_NKIND] = {0};
	struct stage_layers K;
	struct proj_sink k;
	struct proj_shape x;
	struct proj_params P;
	struct proj_step_cost st;
	struct mb_cost best;
	double m, n[PROJ_NKIND], copy_s;
	struct proj_unc su, lu;
	struct proj_plan pl;
	cvc_proj_scenario resolved;

	result_init(r);
	memset(&su, 0, sizeof su);
	if (!(p = usable_pricer(ctx, sc, r)))
		return;
	if (!(sc->nvlink_domain >= 1)) { /* the catalog's NVLink domain */
		resolved = *sc;
		resolved.nvlink_domain = proj_domain_of(sc, p);
		sc = &resolved;
	}
	proj_shape_of(sc, &x);
	m = sc->global_batch / (sc->dp * sc->micro_batch);
	proj_smemo_stages(ctx, sc, &x, &pl, n);

	/* the operators, priced: per layer of each kind (cached) and per step */
	proj_sink_init(&k, sc, p, NULL, NULL);
	if (!ctx->no_intervals)
		k.unc = &su;
	memset(&K, 0, sizeof K);
	K.nord = pl.nord;
	memcpy(K.ord, pl.ord, sizeof K.ord);
	for (int i = 0; i < K.nord; i++) {
		struct proj_shape xk;

		proj_shape_kind(sc, &x, K.ord[i], &xk);
		/* a copy: two kinds may share a cache slot */
		own[i] = *layer_cost(ctx, &k, &xk);
		K.lc[K.ord[i]] = &own[i];
		moe_kind[K.ord[i]] = xk.moe;
	}
	proj_params_kinds_n(sc, &x, n, pl.N, &P);
	r->params_b = (P.p_total - P.p_mtp_all) / 1e9;
	r->active_params_b = r->params_b - P.p_idle / 1e9;
	proj_step_ops(&k, sc, &x, &P, m, &st);

	if (slowest_stage(sc, p, &K, &st, &pl, &best)) {
		invalid(r, "pipeline stages cannot be split");
		return;
	}
	microbatch_comm(r, m, &best);
	pipeline_comm(r, sc, &st, m, &best);
	gradient_comm(r, sc, &best, &st, &P, m * (best.stage_c + best.gap_s) + st.opt + st.wcast);
	step_totals(r, sc, &st, m, &best);
	proj_mem_of(sc, &x, &P, p, m, &pl, r);
	proj_offload_apply(sc, p, &x, best.n, m, best.L, best.fwd_c, best.bwd_c, r, &copy_s);
	flops_and_costs(r, sc, &x, p, &pl, p->peak_flops[sc->dtype]);

	/* how sure: intervals and warnings */
	if (k.unc) {
		struct proj_interval_in in;
		int kinds = 0, one = K.ord[0];

		for (int i = 0; i < K.nord; i++)
			if (best.n[K.ord[i]] > 0)
				kinds++, one = K.ord[i];
		in.layer = &K.lc[one]->unc;
		in.layer_w = m * best.L;
		if (kinds > 1) { /* the slowest stage's layers of each kind */
			memset(&lu, 0, sizeof lu);
			for (int i = 0; i < K.nord; i++)
				unc_add(&lu, &K.lc[K.ord[i]]->unc, best.n[K.ord[i]]);
			in.layer = &lu;
			in.layer_w = m;
		}
		in.step = &su;
		in.bubble_f = m * best.t_mb > 0 ? 1 + r->bubble_s / (m * best.t_mb) : 1;
		in.step_compute_s = st.opt + st.wcast;
		in.gap_sigma = cvc_model_kernel_gap_sigma(p->ms_base);
		in.host_path_s = r->host_s > 0 ? m * best.host_s *
				 (proj_host_syncs(sc) ? in.bubble_f : 1) : 0;
		in.host_sigma = proj_host_sigma(sc);
		in.moe_path_s = 0;
		in.offload_path_s = copy_s;
		for (int i = 0; i < K.nord; i++)
			if (moe_kind[K.ord[i]])
				in.moe_path_s += m * in.bubble_f * best.n[K.ord[i]] *
						 (K.lc[K.ord[i]]->fwd_s + K.lc[K.ord[i]]->bwd_s);
		proj_intervals(&in, r);
		mem_edge_warn(r, p);
		proj_offload_warn(sc, p, r);
		if (tp_overlap_held(sc, p))
			proj_warn_add(r, "tp_overlap: not priced, the ep_overlap of this GPU "
					 "generation keeps it from running (docs/MODELS.md "
					 "\"TP overlap beside the all-to-all overlap\")");
		proj_unused_warn(sc, r);
	}
	/* the token side of local SGD (after the intervals: it reads them) */
	proj_lsgd_apply(sc, &P, k.unc != NULL, r);
}

void proj_evaluate(cvc_proj_ctx *ctx, const cvc_proj_scenario *sc, cvc_proj_result *r)
{
	struct proj_smemo_mark mk;

	if (proj_smemo_find(ctx, sc, &mk, r))
		return;
	evaluate(ctx, sc, r);
	proj_smemo_keep(ctx, &mk, r);
}
