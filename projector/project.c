/*
 * project.c - one training step of one scenario decomposed into operators
 * (per layer, per stage, per step), each priced through the operator
 * models or listed (docs/SCENARIOS.md, "model"); evaluate.c combines the
 * prices into the step, memory.c sizes its memory.
 *
 * Shapes follow Megatron-LM's layout (Narayanan et al. 2021; Korthikanti
 * et al. 2022 for sequence parallelism, selective recompute and activation
 * memory).  Rank order is tp fastest, then cp, dp, pp: a tp group sits in
 * one node, dp neighbours share a node when tp*cp < gpus per node, and
 * pipeline neighbours are on different nodes once tp*cp*dp >= gpus per node.
 */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "cvc/cvc_model.h"
#include "ctx.h"
#include "proj_internal.h"

double proj_attn_weights(const cvc_proj_scenario *sc, double tp, double *per_rank)
{
	double h = sc->hidden, a = sc->heads, g = sc->kv_heads > 0 ? sc->kv_heads : a;
	double dh = sc->head_dim > 0 ? sc->head_dim : h / a, split, whole = 0;

	if (sc->kv_lora_rank > 0) {
		/* Megatron-Core's MLASelfAttention: the down projections run
		 * whole on every tensor-parallel rank, the up projections and the
		 * output projection split by heads */
		double rq = sc->q_lora_rank, rkv = sc->kv_lora_rank, dr = sc->qk_rope_dim;
		double dv = sc->v_head_dim > 0 ? sc->v_head_dim : dh;

		whole = (rq > 0 ? h * rq : 0) + h * (rkv + dr);
		split = (rq > 0 ? rq : h) * a * (dh + dr) + rkv * a * (dh + dv) + a * dv * h;
	} else {
		split = h * (a + 2 * g) * dh + a * dh * h;
	}
	if (per_rank)
		*per_rank = whole + split / tp;
	return whole + split;
}

double proj_latent_width(const cvc_proj_scenario *sc)
{
	return sc->experts > 1 && sc->moe_latent > 0 ? sc->moe_latent : 0;
}

void proj_shape_of(const cvc_proj_scenario *sc, struct proj_shape *x)
{
	double lat = proj_latent_width(sc);

	x->b = sc->micro_batch;
	x->s = sc->seq;
	x->h = sc->hidden;
	x->a = sc->heads;
	x->g = sc->kv_heads;
	x->f = sc->experts > 1 && sc->moe_ffn > 0 ? sc->moe_ffn : sc->ffn;
	x->fs = sc->experts > 1 ? sc->shared_ffn : 0;
	x->hl = lat > 0 ? lat : sc->hidden;
	x->lw = 2 * sc->hidden * lat;
	x->V = sc->vocab;
	x->E = sc->experts;
	x->k = sc->top_k;
	x->t = sc->tp;
	x->c = sc->cp;
	x->e = sc->ep;
	x->et = sc->etp >= 1 ? sc->etp : sc->tp;
	x->sp = sc->sp && sc->tp > 1;
	x->moe = sc->experts > 1;
	x->swiglu = sc->ffn_type == CVC_PROJ_FFN_SWIGLU;
	/* gate, up and down matrices: SwiGLU and GeGLU alike */
	x->gated = x->swiglu || sc->ffn_type == CVC_PROJ_FFN_GEGLU;
	x->dtype = sc->dtype;
	x->recompute = sc->recompute;
	x->unfused = sc->attention == CVC_PROJ_ATTN_UNFUSED;
	x->dropout = sc->dropout;
	x->attention = sc->attention;
	x->framework = sc->framework;
	x->eager = sc->framework == CVC_PROJ_FW_TORCHTITAN && !sc->compile;
	x->lowp = proj_lowp_dtype(sc->dtype);
	x->fp8_recipe = sc->fp8_recipe;
	x->fp8_attn = x->lowp && sc->fp8_attention;
	x->gemm_sub = 0;
	if (x->lowp) {
		struct proj_lowp c;

		proj_lowp_cast(x, &c);
		x->gemm_sub = (c.unmeasured ? 1 : 0) | (c.block_scaled ? 4 : 0);
	}
	/* Megatron-Core overlaps TP collectives with GEMMs only with sequence
	 * parallelism (all-gather and reduce-scatter, not all-reduce) */
	x->ag_ovl = x->sp && (sc->tp_overlap_ag < 0 ? sc->tp_overlap : sc->tp_overlap_ag);
	x->rs_ovl = x->sp && (sc->tp_overlap_rs < 0 ? sc->tp_overlap : sc->tp_overlap_rs);
	x->T = x->b * x->s / x->c;             /* tokens per micro-batch per GPU */
	x->dh = sc->head_dim > 0 ? sc->head_dim : x->h / x->a;
	x->qkv = (x->a + 2 * x->g) * x->dh;
	x->mla = sc->kv_lora_rank > 0;
	x->rq = x->mla ? sc->q_lora_rank : 0;
	x->rkv = x->mla ? sc->kv_lora_rank : 0;
	x->dr = x->mla ? sc->qk_rope_dim : 0;
	x->dqk = x->dh + x->dr;
	x->dv = x->mla && sc->v_head_dim > 0 ? sc->v_head_dim : x->dh;
	x->attw = proj_attn_weights(sc, sc->tp, &x->attw_t);
	x->BA = sc->dtype == CVC_PROJ_FP32 ? 4 : 2; /* activations, grads, comm */
	x->ffw = (x->gated ? 3 : 2) * x->hl * x->f; /* FFN weights of one expert */
	x->ffs = (x->gated ? 3 : 2) * x->h * x->fs; /* of the shared experts */
	/* with sequence parallelism a rank routes its shard of the tokens,
	 * and the expert tensor-parallel group gathers the exchanged copies
	 * back (Megatron-Core's dispatchers: all-to-all over EP, then
	 * all-gather over the expert TP group); without it (tp 1, or the
	 * layout Megatron-Core refuses with EP) every rank routes them all */
	x->Te = x->moe && x->sp ? x->T / x->t : x->T;
	x->Tx = x->moe ? x->Te * x->k : x->T;
	x->etg = x->moe && (x->sp || x->t == 1) ? x->et : 1;
	x->Tm = x->Tx * x->etg;
	x->gpn = proj_domain(sc); /* collectives: the NVLink domain */
	x->d3 = proj_is_3d(sc);
	proj_grid_of(sc, &x->tr, &x->tc, &x->td);
	x->Td = x->T / x->td;
	x->tv = x->t / x->td;
	x->ovl3 = x->d3 && sc->tp_overlap;
	/* token drop at capacity factor 1: no rank past its share */
	x->tdrop = x->moe && sc->moe_token_drop;
	x->fgm = x->moe && sc->fused_grouped_mlp;
	x->imb = x->moe && !x->tdrop && sc->moe_imbalance > 1 ? sc->moe_imbalance : 1;
	x->rfuse = sc->moe_router_fusion;
	x->pfuse = sc->moe_permute_fusion;
	x->disp = sc->ep_dispatcher;
	x->disp8 = sc->ep_dispatch_fp8;
	x->gtopk = sc->moe_router_group_topk;
	x->esms = sc->ep_sms >= 0 ? sc->ep_sms
		  : cvc_model_ep_default_sms(sc->ep_dispatcher == CVC_PROJ_DISPATCH_HYBRIDEP
						 ? CVC_EP_HYBRIDEP
						 : sc->ep_dispatcher == CVC_PROJ_DISPATCH_DEEPEP ||
							   sc->ep_dispatcher == CVC_PROJ_DISPATCH_FLEX
						   ? CVC_EP_DEEPEP
						   : CVC_EP_NCCL);
	x->mtp = sc->mtp_layers;
	/* a plain layer; layers of other kinds: proj_shape_kind() */
	x->kind = proj_main_kind(sc);
	x->mixer = PROJ_MIX_ATTN;
	x->noffn = x->wchunk = 0;
	x->win = 0;
	x->mh = sc->mamba_heads;
	x->mp = sc->mamba_head_dim;
	x->mn = sc->mamba_state;
	x->mg = sc->mamba_groups;
	x->mk = sc->mamba_conv;
	x->mq = sc->mamba_chunk;
	x->di = x->mh * x->mp;
	x->cdim = x->di + 2 * x->mg * x->mn;
	x->rcm = 0;
	if (sc->recompute == CVC_PROJ_RECOMP_SELECTIVE) {
		char bad[80];

		if ((!sc->recompute_modules || !sc->recompute_modules[0]) &&
		    sc->framework == CVC_PROJ_FW_TORCHTITAN)
			/* torchtitan's selective "op" policy: the norms and the
			 * activation again, and every second matmul */
			x->rcm = PROJ_RC_NORM | PROJ_RC_ALTMM;
		else if (!sc->recompute_modules || !sc->recompute_modules[0])
			x->rcm = PROJ_RC_CORE;
		else if (proj_recompute_modules(sc->recompute_modules, &x->rcm, bad, sizeof bad))
			x->rcm = PROJ_RC_CORE; /* refused by proj_finalize() */
	}
	{
		char bad[80];

		if (proj_offload_modules(sc->offload_modules, &x->ofm, bad, sizeof bad))
			x->ofm = 0; /* refused by proj_finalize() */
	}
}

/*
 * The dense layers of an MoE model whose layer pattern has them
 * (moe_first_dense, moe_layer_freq): x's shape with one FFN of width ffn,
 * split by tp like a dense model's, no router, no experts.
 */
void proj_shape_dense(const cvc_proj_scenario *sc, const struct proj_shape *x,
		      struct proj_shape *xd)
{
	*xd = *x;
	xd->moe = 0;
	xd->E = xd->k = 1;
	xd->f = sc->ffn;
	xd->fs = xd->ffs = 0;
	xd->hl = x->h, xd->lw = 0;
	xd->et = x->t;
	xd->ffw = (x->gated ? 3 : 2) * x->h * xd->f;
	xd->Tm = xd->Tx = xd->Te = x->T;
	xd->etg = 1;
	xd->imb = 1;
}

void proj_sink_init(struct proj_sink *k, const cvc_proj_scenario *sc, const struct proj_pricer *p,
		    cvc_proj_op_fn fn, void *user)
{
	k->p = p;
	k->fn = fn;
	k->user = user;
	k->n = 0;
	k->stop = 0;
	k->dtype = sc->dtype;
	k->gemm_sub = 0;
	if (proj_lowp_dtype(sc->dtype)) {
		struct proj_shape x;

		proj_shape_of(sc, &x);
		k->gemm_sub = x.gemm_sub;
	}
	k->kernels = 0;
	k->chunk_kernels = 0;
	k->margin_s = 0;
	k->unc = NULL;
	switch (sc->attention) {
	case CVC_PROJ_ATTN_CUDNN:
		k->attn_backend = CVC_ATTN_CUDNN;
		break;
	case CVC_PROJ_ATTN_FA2:
		k->attn_backend = CVC_ATTN_FA2;
		break;
	case CVC_PROJ_ATTN_FA4:
		k->attn_backend = CVC_ATTN_FA4;
		break;
	case CVC_PROJ_ATTN_FA1:
		k->attn_backend = CVC_ATTN_FA1;
		break;
	default: /* the framework's own choice on the GPU generation priced */
		k->attn_backend = sc->framework != CVC_PROJ_FW_MEGATRON ? CVC_ATTN_DEFAULT_TORCH
								       : CVC_ATTN_DEFAULT_TE;
	}
	/* equal to the pricer's: pricers are keyed by these scale factors */
	k->scale_hbm = sc->scale_hbm_bw;
	k->scale_intra = sc->scale_intra_bw;
	k->scale_inter = sc->scale_inter_bw;
}

static double put(struct proj_sink *k, const cvc_proj_op *o)
{
	if (k->p) {
		/* every operator is one kernel launch: with the gap between
		 * back-to-back kernels that no operator model sees */
		if (o->kind != CVC_PROJ_OP_COLL)
			k->kernels += o->count;
		return proj_op_price(k->p, o, k->unc);
	}
	if (!k->stop && o->count > 0) {
		k->n++;
		if (k->fn(k->user, o))
			k->stop = 1;
	}
	return 0;
}

/* The models take integer sizes. */
static int64_t i64(double x)
{
	if (!(x > 0))
		return 0;
	if (x > 9e18)
		return (int64_t)9e18;
	return (int64_t)llround(x);
}

static void op_init(cvc_proj_op *o, int kind, double count, int stage)
{
	memset(o, 0, sizeof *o);
	o->kind = kind;
	o->comm = -1;
	o->count = count;
	o->stage = stage;
}

/* One GEMM operator; grouped: batch GEMMs of m rows in one launch (MoE
 * experts); wgrad: a weight-gradient GEMM, whose K is the tokens. */
static double gemm_op(struct proj_sink *k, int dtype, double m, double n, double kk,
		      double batch, double count, int stage, int grouped, int wgrad)
{
	cvc_proj_op o;

	op_init(&o, CVC_PROJ_OP_GEMM, count, stage);
	o.dtype = dtype;
	/* the layers' GEMMs in a format nobody measured (lowprec.c) */
	o.sub = (dtype == k->dtype ? k->gemm_sub : 0) | (grouped ? 2 : 0);
	/* fp8 with 1x128 block scales: a wgrad scales both operands along
	 * K, a kernel of its own (cvc_model_blockfp8_wgrad_factor()) */
	if (wgrad && (o.sub & 1) && dtype == CVC_PROJ_FP8)
		o.sub |= 8;
	o.m = i64(m), o.n = i64(n), o.k = i64(kk), o.b = i64(batch);
	return put(k, &o);
}

double proj_op_gemm_dt(struct proj_sink *k, int dtype, double m, double n, double kk,
		       double batch, double count, int stage)
{
	return gemm_op(k, dtype, m, n, kk, batch, count, stage, 0, 0);
}

double proj_op_wgrad_dt(struct proj_sink *k, int dtype, double m, double n, double kk,
			double batch, double count, int stage)
{
	return gemm_op(k, dtype, m, n, kk, batch, count, stage, 0, 1);
}

double proj_op_ggemm(struct proj_sink *k, int dtype, double m, double n, double kk,
		     double groups, double count)
{
	return gemm_op(k, dtype, m, n, kk, groups, count, CVC_PROJ_STAGE_ALL, 1, 0);
}

double proj_op_wggemm(struct proj_sink *k, int dtype, double m, double n, double kk,
		      double groups, double count)
{
	return gemm_op(k, dtype, m, n, kk, groups, count, CVC_PROJ_STAGE_ALL, 1, 1);
}

double proj_op_attn(struct proj_sink *k, int dtype, double batch, double heads, double kv_heads,
		    double sq, double skv, double head_dim, int backward, double count)
{
	cvc_proj_op o;

	op_init(&o, CVC_PROJ_OP_ATTN, count, CVC_PROJ_STAGE_ALL);
	o.dtype = dtype;
	o.sub = k->attn_backend;
	o.b = i64(batch), o.heads = i64(heads), o.kv_heads = i64(kv_heads);
	o.m = i64(sq), o.n = i64(skv), o.k = i64(head_dim);
	o.causal = 1;
	o.backward = backward;
	return put(k, &o);
}

/* HBM traffic scales with the hbm_bw factor: bytes / scale at the base
 * spec's bandwidth is the scaled GPU's time (price.c). */
double proj_op_mem(struct proj_sink *k, int cls, double bytes, double count, int stage)
{
	cvc_proj_op o;

	op_init(&o, CVC_PROJ_OP_MEM, count, stage);
	o.sub = cls;
	o.bytes = i64(bytes / k->scale_hbm);
	return put(k, &o);
}

/* bytes = the nccl-tests size (AR: buffer; AG: gathered output; RS: input;
 * A2A: per-rank total; P2P: message); per_node = group members per node.
 * A group of one moves nothing (no op); p2p always has two ends. */
double proj_op_coll_at(struct proj_sink *k, int kind, int comm, double bytes, double group,
		      double per_node, double count, int st)
{
	cvc_proj_op o;
	int g = group > 2e9 ? 2000000000 : (int)group;
	int pn = per_node < 1 ? 1 : (int)per_node;
	double scale;

	if (g <= 1 && kind != CVC_MODEL_SENDRECV)
		return 0;
	if (kind == CVC_MODEL_SENDRECV && g < 2)
		g = 2;
	/* which link carries it: intra-node when the group fits in a node */
	scale = g <= pn ? k->scale_intra : k->scale_inter;
	op_init(&o, CVC_PROJ_OP_COLL, count, st);
	o.sub = kind;
	o.comm = comm;
	o.bytes = i64(bytes / scale);
	o.group = g;
	o.per_node = pn;
	return put(k, &o);
}

double proj_op_coll(struct proj_sink *k, int kind, int comm, double bytes, double group,
		    double per_node, double count)
{
	return proj_op_coll_at(k, kind, comm, bytes, group, per_node, count, CVC_PROJ_STAGE_ALL);
}

double proj_op_ep(struct proj_sink *k, int backend, int phase, double nvl_bytes,
		  double net_bytes, double group, double per_node, double sms, double hidden,
		  double count)
{
	cvc_proj_op o;

	if (!(group > 1))
		return 0;
	op_init(&o, CVC_PROJ_OP_COLL, count, CVC_PROJ_STAGE_ALL);
	o.sub = CVC_MODEL_ALLTOALL;
	o.comm = CVC_PROJ_COMM_EP;
	o.ep_backend = backend;
	o.ep_phase = phase;
	o.sms = sms > 0 ? (int)sms : 0;
	o.k = hidden > 0 ? i64(hidden) : 0; /* a token's elements: its fixed cost */
	/* each phase on its own link's scale factor */
	o.bytes = i64(nvl_bytes / k->scale_intra);
	o.net_bytes = i64(net_bytes / k->scale_inter);
	o.group = group > 2e9 ? 2000000000 : (int)group;
	o.per_node = per_node < 1 ? 1 : (int)per_node;
	return put(k, &o);
}

/* One GEMM forward and its two backward GEMMs (dgrad, wgrad), run cf and
 * cb times per step; the forward and the dgrad as split_f / split_b GEMMs
 * of m/split rows each when a TP collective is overlapped with them (the
 * chunks of Transformer Engine's ring-exchange and pipelined overlaps: the
 * smaller GEMMs' efficiency is what the overlap costs), the forward slow_f
 * times slower (SMs held back for the overlapped reduce-scatter).  Returns
 * the forward time; *dgrad and *wgrad get the backward ones. */
double proj_gemm3(struct proj_sink *k, int dtype, double m, double n, double kk, double cf,
		    double cb, int stage, double split_f, double split_b, double slow_f,
		    double *dgrad, double *wgrad)
{
	double fwd;

	split_f = split_f > 1 ? split_f : 1;
	split_b = split_b > 1 ? split_b : 1;
	fwd = split_f * proj_op_gemm_dt(k, dtype, m / split_f, n, kk, 1, cf * split_f, stage);
	*dgrad = split_b * proj_op_gemm_dt(k, dtype, m / split_b, kk, n, 1, cb * split_b, stage);
	if (k->p) /* one call launches the chunks (struct proj_sink chunk_kernels) */
		k->chunk_kernels += cf * (split_f - 1) + cb * (split_b - 1);
	*wgrad = proj_op_wgrad_dt(k, dtype, kk, n, m, 1, cb, stage);
	/* booked apart (struct proj_sink margin_s): the operator itself is the one
	 * measured and listed */
	if (slow_f > 1)
		k->margin_s += fwd * (slow_f - 1);
	return fwd;
}

/*
 * Transformer Engine's TP overlap as NeMo / Megatron-Bridge configure it
 * (userbuffers_bf16_h100_h8192_tp4_mbs1_seqlen8192 and its siblings): the
 * all-gathers before QKV and FC1 forward and before the projection and FC2
 * dgrad are ring exchanges (tp chunks, copy engines); the reduce-scatters
 * after the projection and FC2 forward are pipelined in 4 chunks with 16-24
 * SMs held back from the GEMM (set_sm_margin; 20 here); the backward
 * re-gather of QKV/FC1 inputs and their dgrad reduce-scatter run in bulk
 * beside the dgrad and wgrad GEMMs.
 */
#define TP_RS_SPLITS 4
#define TP_RS_SMS 20

/*
 * Low precision (Transformer Engine's fp8 recipes, NVFP4, MXFP4): the
 * quantize kernels a format adds per layer (lowprec.c: bytes per element).
 * Inputs made by a LayerNorm or an activation are cast inside that kernel;
 * the attention output is cast on its own, and in backward the gradient of
 * every GEMM output is cast (both layouts, for dgrad and wgrad).  Weights
 * are cast once per step (proj_step_ops()).
 */

/* Forward runs of a submodule's operators: again in the backward when
 * selective recompute names it (bit of x->rcm). */
double proj_fwd_runs(const struct proj_shape *x, const struct proj_layer_runs *n, int bit)
{
	return n->cf + (x->rcm & bit ? n->cb : 0);
}

/* How often a layer's operators run per step (struct proj_layer_runs): cf
 * forward (again under full recomputation), cb backward; per for each
 * per-layer collective (twice forward and twice backward, the backward pair
 * again under full recomputation). */

/* A dense FFN of width w split by tp (FC1 with its gate, FC2) into G's up
 * and down GEMMs; split_ag / split_rs / slow: the chunks and SM margin of
 * TP overlap (proj_gemm3()), 1 / 1 / 1 without it. */
void proj_dense_ffn_gemms(struct proj_sink *k, const struct proj_shape *x, double w, double cf,
			    double cb, double split_ag, double split_rs, double slow,
			    struct proj_layer_gemms *G)
{
	G->up_f = proj_gemm3(k, x->dtype, x->T, (x->gated ? 2 : 1) * w / x->t, x->h, cf, cb, 0,
			split_ag, 1, 1, &G->up_d, &G->up_w);
	G->dn_f = proj_gemm3(k, x->dtype, x->T, x->h, w / x->t, cf, cb, 0, split_rs, split_ag, slow,
			&G->dn_d, &G->dn_w);
	G->mlp_f = G->up_f + G->dn_f;
	G->mlp_d = G->up_d + G->dn_d;
	G->mlp_w = G->up_w + G->dn_w;
}

/* Multi-latent attention's projections in place of QKV (Megatron-Core's
 * MLASelfAttention; DeepSeek-V2 2024, section 2.1): the query latent (or
 * the query directly), its up projection to the heads' nope and rope
 * parts, the kv latent with the shared rope key, its up projection to keys
 * and values.  The down projections are whole on every tensor-parallel
 * rank. */
static double mla_gemm_ops(struct proj_sink *k, const struct proj_shape *x, double cf, double cb,
			   double *dgrad, double *wgrad, double *rc_up)
{
	double hl = x->a / x->t, f = 0, d, w;
	/* (out, in) of each projection; no query latent: one fewer */
	const double nk[4][2] = {
		{x->rq, x->h},                                  /* query down */
		{hl * x->dqk, x->rq > 0 ? x->rq : x->h},        /* query up */
		{x->rkv + x->dr, x->h},                         /* kv down, rope key */
		{hl * (x->dh + x->dv), x->rkv},                 /* kv up */
	};

	*dgrad = *wgrad = 0;
	for (int i = x->rq > 0 ? 0 : 1; i < 4; i++) {
		/* mla_up_proj recomputes the two up projections (i = 1, 3) */
		int up = (i == 1 || i == 3) && (x->rcm & PROJ_RC_MLA_UP);
		double fi = proj_gemm3(k, x->dtype, x->T, nk[i][0], nk[i][1], cf + (up ? cb : 0), cb, 0, 1,
				  1, 1, &d, &w);

		f += fi;
		*dgrad += d, *wgrad += w;
		if (up)
			*rc_up += fi;
	}
	return f;
}

/*
 * torchtitan's selective activation checkpointing, option "op"
 * (torchtitan/parallelisms/parallelize_llama.py @9dec370, the commit of
 * its 2024-12 H100 benchmarks; torchtitan/distributed/
 * activation_checkpoint.py later): a block saves the outputs of SDPA, of
 * reduce-scatters and of every odd matmul and recomputes all the rest in
 * backward, its matmuls counted in call order.  A Llama block calls wq,
 * wk, wv, wo, w1, w3, w2: wk, wo and w3 (the up projection's gate half)
 * run forward again; the norms and the activation too (layer_mem_ops()).
 * Other blocks (MLA, Mamba, MoE) call theirs in an order cvc does not
 * follow: only a plain attention block's are priced.
 */
static void op_sac_gemms(struct proj_sink *k, const struct proj_shape *x,
			 const struct proj_layer_runs *n, struct proj_layer_gemms *G)
{
	double d, w;

	if ((x->mixer != PROJ_MIX_ATTN && x->mixer != PROJ_MIX_LOCAL) || x->mla)
		return;
	G->rc_gemm += proj_gemm3(k, x->dtype, x->T, x->g * x->dh / x->t, x->h, n->cb, 0, 0, 1, 1,
				 1, &d, &w);
	G->rc_gemm += proj_gemm3(k, x->dtype, x->T, x->h, x->a * x->dv / x->t, n->cb, 0, 0, 1, 1,
				 1, &d, &w);
	if (!x->moe && !x->noffn)
		G->rc_gemm += proj_gemm3(k, x->dtype, x->T, x->f / x->t, x->h, n->cb, 0, 0, 1, 1, 1,
					 &d, &w);
}

/* GEMMs: QKV, attention output projection, FFN up(+gate), down.  TP
 * overlap splits the GEMMs next to the overlapped collective. */
static void layer_gemm_ops(struct proj_sink *k, const struct proj_shape *x,
			   const struct proj_layer_runs *n, struct proj_layer_gemms *G, double *mf,
			   double *mb)
{
	double cf = n->cf, cb = n->cb, tsplit = x->t, rs_slow = 1;

	if (x->rs_ovl && k->p) {
		double sms = cvc_modelset_spec(k->p->ms_scaled)->sm_count;

		if (sms > 2 * TP_RS_SMS)
			rs_slow = sms / (sms - TP_RS_SMS);
	}
	memset(G, 0, sizeof *G);
	if (x->mixer == PROJ_MIX_MAMBA) {
		/* in_proj in QKV's place, out_proj in the projection's: the same
		 * TP layout and overlap (MambaMixer's tp_comm_buffer fc1/fc2) */
		G->qkv_f = proj_gemm3(k, x->dtype, x->T,
				      (2 * x->di + 2 * x->mg * x->mn + x->mh) / x->t, x->h, cf, cb, 0,
				      x->ag_ovl ? tsplit : 1, 1, 1, &G->qkv_d, &G->qkv_w);
		G->pr_f = proj_gemm3(k, x->dtype, x->T, x->h, x->di / x->t, cf, cb, 0,
				     x->rs_ovl ? TP_RS_SPLITS : 1, x->ag_ovl ? tsplit : 1, rs_slow,
				     &G->pr_d, &G->pr_w);
	} else if (x->mixer != PROJ_MIX_NONE) {
		if (x->mla)
			G->qkv_f = mla_gemm_ops(k, x, cf, cb, &G->qkv_d, &G->qkv_w, &G->rc_gemm);
		else
			G->qkv_f = proj_gemm3(k, x->dtype, x->T, x->qkv / x->t, x->h, cf, cb, 0,
					      x->ag_ovl ? tsplit : 1, 1, 1, &G->qkv_d, &G->qkv_w);
		G->pr_f = proj_gemm3(k, x->dtype, x->T, x->h, x->a * x->dv / x->t, cf, cb, 0,
				     x->rs_ovl ? TP_RS_SPLITS : 1, x->ag_ovl ? tsplit : 1, rs_slow,
				     &G->pr_d, &G->pr_w);
	}
	if (x->rcm & PROJ_RC_ALTMM)
		op_sac_gemms(k, x, n, G);
	if (x->noffn)
		return;
	if (x->moe) {
		proj_moe_ffn_ops(k, x, n, G, mf, mb);
	} else {
		proj_dense_ffn_gemms(k, x, x->f, proj_fwd_runs(x, n, PROJ_RC_MLP), cb, x->ag_ovl ? tsplit : 1,
				x->rs_ovl ? TP_RS_SPLITS : 1, rs_slow, G);
		if (x->rcm & PROJ_RC_MLP) /* the dense MLP forward again */
			G->rc_gemm += G->up_f + G->dn_f;
	}
}

/*
 * Local attention (docs/SCENARIOS.md "Layer kinds"): each query sees the
 * window tokens before it (sliding: Mistral, Gemma 2/3, GPT-OSS), or the
 * tokens of its aligned chunk (chunked: Llama 4).  A fused kernel runs
 * only the key blocks inside the band, so the layer is priced as causal
 * attention blocks of min(2 w, s) tokens (each query block then meets about
 * w keys, as in the band), as many as give the band's exact (query, key)
 * pairs: w (w + 1) / 2 + (s - w) w sliding, s (w + 1) / 2 chunked (s a
 * multiple of w), at the s^2 / 2 pairs the attention model counts causal.
 * With cp the rank holds 1/c of the pairs.  FlashAttention and cuDNN take
 * the window as (left, 0) (Megatron-Core's window_size).
 */
static void local_attn_ops(struct proj_sink *k, const struct proj_shape *x, int adt, double cf,
			   double cb, double *af, double *ab)
{
	double hl = x->a / x->t, gl = fmax(1, x->g / x->t), s = x->s, w = x->win;
	double d = x->mla ? (x->dqk + x->dv) / 2 : x->dh;
	double blk = x->wchunk ? w : fmin(2 * w, s);
	double pairs = x->wchunk ? s * (w + 1) / 2 : w * (w + 1) / 2 + (s - w) * w;
	/* the blocks of one sequence, on this rank (a causal block of blk
	 * tokens is priced as blk^2 / 2 pairs) */
	double nb = pairs / (blk * blk / 2) / x->c;

	*af = nb * proj_op_attn(k, adt, x->b, hl, x->mla ? hl : gl, blk, blk, d, 0, cf * nb);
	*ab = nb * proj_op_attn(k, adt, x->b, hl, x->mla ? hl : gl, blk, blk, d, 1, cb * nb);
}

/* Attention core, forward into *af and backward into *ab; low-precision
 * training keeps it in bf16 unless fp8_attention (then fp8). */
static void attn_core_ops(struct proj_sink *k, const struct proj_shape *x,
			  const struct proj_layer_runs *n, double *af, double *ab)
{
	double cf = n->cf, cb = n->cb;
	double hl = x->a / x->t, gl = fmax(1, x->g / x->t), sq = x->s / x->c;
	int adt = x->fp8_attn ? CVC_PROJ_FP8 : (x->lowp ? CVC_PROJ_BF16 : x->dtype);

	*af = *ab = 0;
	if (x->mixer == PROJ_MIX_MAMBA) {
		proj_mamba_scan_ops(k, x, cf, cb, af, ab);
		return;
	}
	if (x->mixer == PROJ_MIX_NONE)
		return;
	if (x->win > 0 && x->win < x->s && !x->unfused) {
		local_attn_ops(k, x, adt, proj_fwd_runs(x, n, PROJ_RC_CORE), cb, af, ab);
		return;
	}
	if (x->unfused) {
		double bt = x->b * hl, el = bt * sq * x->s;
		/* selective recomputation re-runs the unfused core */
		double ca = proj_fwd_runs(x, n, PROJ_RC_CORE);
		double f1, f2, f3, f4 = 0, b1, b2, b3, b4, b5 = 0;

		f1 = proj_op_gemm_dt(k, adt, sq, x->s, x->dh, bt, ca, 0);
		f2 = proj_op_gemm_dt(k, adt, sq, x->dh, x->s, bt, ca, 0);
		f3 = proj_op_mem(k, CVC_MODEL_MEM_NORM, 2 * x->BA * el, ca, 0); /* scale-mask-softmax */
		/* the probabilities' dropout: a kernel of its own (PyTorch returns
		 * its input untouched at probability 0: no kernel) */
		if (x->dropout)
			f4 = proj_op_mem(k, CVC_MODEL_MEM_ELEMENTWISE, (2 * x->BA + 1) * el, ca, 0);
		*af = f1 + f2 + f3 + f4;
		b1 = proj_op_gemm_dt(k, adt, sq, x->dh, x->s, bt, 2 * cb, 0);
		b2 = proj_op_gemm_dt(k, adt, x->s, x->dh, sq, bt, cb, 0);
		b3 = proj_op_gemm_dt(k, adt, sq, x->s, x->dh, bt, cb, 0);
		b4 = proj_op_mem(k, CVC_MODEL_MEM_NORM, 3 * x->BA * el, cb, 0);
		if (x->dropout)
			b5 = proj_op_mem(k, CVC_MODEL_MEM_ELEMENTWISE, (2 * x->BA + 1) * el, cb, 0);
		*ab = 2 * b1 + b2 + b3 + b4 + b5;
	} else {
		/* with context parallelism, c ring steps of s/c queries
		 * against s/c keys: together the rank's half of the causal
		 * pairs of s/c queries x s keys (load-balanced chunks) */
		/* MLA: query/key heads of dh + dr, value heads of dv: the
		 * kernel's FLOPs are those of heads of their mean width */
		double d = x->mla ? (x->dqk + x->dv) / 2 : x->dh;

		if (x->mla)
			gl = hl; /* keys and values per head after the up projection */
		*af = x->c * proj_op_attn(k, adt, x->b, hl, gl, sq, sq, d, 0,
					  proj_fwd_runs(x, n, PROJ_RC_CORE) * x->c);
		*ab = x->c * proj_op_attn(k, adt, x->b, hl, gl, sq, sq, d, 1, cb * x->c);
	}
}

/* Memory-bound operators of a layer, added to *mf / *mb: a norm and a
 * bias-dropout-residual per block (2 in an attention + FFN layer), the
 * activation, rope, a Mamba mixer's own (mamba.c), and the low-precision casts. */
static void layer_mem_ops(struct proj_sink *k, const struct proj_shape *x,
			  const struct proj_layer_runs *n, struct proj_layer_gemms *G, double *mf,
			  double *mb)
{
	double cf = n->cf, cb = n->cb;
	double Th = x->T * x->h / (x->sp ? x->t : 1);
	double nsub = (x->mixer != PROJ_MIX_NONE) + !x->noffn;
	double f1, f2, f3 = 0, b1, b2, b3 = 0;
	/* the activation is recomputed with moe_act or moe (MoE), mlp (dense) */
	int act = x->moe ? PROJ_RC_MOE_ACT | PROJ_RC_MOE : PROJ_RC_MLP | PROJ_RC_ALTMM;
	int attn = x->mixer == PROJ_MIX_ATTN || x->mixer == PROJ_MIX_LOCAL;

	/* eager torchtitan: each op of the norm and the SwiGLU a kernel (eager.c) */
	double fe = x->Tm * x->imb * x->f / (x->moe ? x->et : x->t);
	int eact = x->eager && x->gated;
	/* the fused grouped MLP runs the routed experts' activation in its
	 * first GEMM's epilogue and its backward in the second's dgrad */
	int ffn_act = !x->noffn && !x->fgm;

	f1 = x->eager ? proj_eager_norm(k, x, Th, nsub * proj_fwd_runs(x, n, PROJ_RC_NORM), 0)
		      : proj_op_mem(k, CVC_MODEL_MEM_NORM, 2 * x->BA * Th,
				    nsub * proj_fwd_runs(x, n, PROJ_RC_NORM), 0);
	f2 = proj_op_mem(k, CVC_MODEL_MEM_ELEMENTWISE, (3 * x->BA + 1) * Th, nsub * cf, 0);
	if (ffn_act)
		f3 = eact ? proj_eager_act(k, x, fe, proj_fwd_runs(x, n, act), 0)
			  : proj_op_mem(k, CVC_MODEL_MEM_ELEMENTWISE, (x->gated ? 3 : 2) * x->BA * fe,
					proj_fwd_runs(x, n, act), 0);
	*mf += nsub * f1 + nsub * f2 + f3;
	G->mlp_f += f3;
	if (x->rcm & PROJ_RC_NORM) /* input_layernorm and pre_mlp_layernorm */
		G->rc_mem += nsub * f1;
	if ((x->rcm & act) && ffn_act)
		G->rc_mem += f3;
	b1 = x->eager ? proj_eager_norm(k, x, Th, nsub * cb, 1)
		      : proj_op_mem(k, CVC_MODEL_MEM_NORM, 4 * x->BA * Th, nsub * cb, 0);
	b2 = proj_op_mem(k, CVC_MODEL_MEM_ELEMENTWISE, 2 * (3 * x->BA + 1) * Th, nsub * cb, 0);
	if (ffn_act)
		b3 = eact ? proj_eager_act(k, x, fe, cb, 1)
			  : proj_op_mem(k, CVC_MODEL_MEM_ELEMENTWISE,
					2 * (x->gated ? 3 : 2) * x->BA * fe, cb, 0);
	*mb += nsub * b1 + nsub * b2 + b3;
	G->mlp_d += b3;
	if (x->fs > 0 && !x->noffn) { /* the shared experts' activation */
		double sb = (x->gated ? 3 : 2) * x->BA * x->T * x->fs / x->t;
		double sf = proj_op_mem(k, CVC_MODEL_MEM_ELEMENTWISE, sb,
					proj_fwd_runs(x, n, PROJ_RC_MOE | PROJ_RC_SHARED), 0);
		double sbw = proj_op_mem(k, CVC_MODEL_MEM_ELEMENTWISE, 2 * sb, cb, 0);

		*mf += sf;
		*mb += sbw;
		G->mlp_f += sf;
		G->mlp_d += sbw;
		if (x->rcm & (PROJ_RC_MOE | PROJ_RC_SHARED))
			G->rc_mem += sf;
	}
	if (x->mixer == PROJ_MIX_MAMBA) {
		proj_mamba_mem_ops(k, x, cf, cb, mf, mb);
	} else if (x->mla && attn) {
		/* the RMSNorms of the query and kv latents; rope on the heads'
		 * query part and the one shared key part */
		double nb = 2 * x->BA * x->T * (x->rq + x->rkv);
		double rb = 2 * x->BA * x->T * (x->a / x->t + 1) * x->dr;

		*mf += proj_op_mem(k, CVC_MODEL_MEM_NORM, nb, cf, 0);
		*mb += proj_op_mem(k, CVC_MODEL_MEM_NORM, 2 * nb, cb, 0);
		if (rb > 0) {
			double rf = proj_op_mem(k, CVC_MODEL_MEM_ELEMENTWISE, rb,
						proj_fwd_runs(x, n, PROJ_RC_MLA_UP), 0);

			*mf += rf;
			*mb += proj_op_mem(k, CVC_MODEL_MEM_ELEMENTWISE, rb, cb, 0);
			if (x->rcm & PROJ_RC_MLA_UP) /* mla_up_proj: rope again too */
				G->rc_mem += rf;
		}
	} else if (x->gated && attn) { /* Llama family: rotary embedding on q and k */
		double re = x->T * (x->a + x->g) * x->dh / x->t;

		*mf += x->eager ? proj_eager_rope(k, x, re, cf)
				: proj_op_mem(k, CVC_MODEL_MEM_ELEMENTWISE, 2 * x->BA * re, cf, 0);
		*mb += x->eager ? proj_eager_rope(k, x, re, cb)
				: proj_op_mem(k, CVC_MODEL_MEM_ELEMENTWISE, 2 * x->BA * re, cb, 0);
	}
	if (x->lowp)
		proj_lowp_cast_ops(k, x, cf, cb, mf, mb);
}

/*
 * Tensor parallel: 2 all-reduces per layer each way, or with sequence
 * parallelism 2 all-gathers + 2 reduce-scatters forward and, backward, the
 * 2 gradient all-gathers for the row-parallel dgrads, the 2 reduce-scatters
 * of the column-parallel dgrads and the 2 re-gathers of their inputs for
 * wgrad.  Hidden under the GEMMs they overlap with (proj_gemm3() above): a ring
 * exchange all but its last chunk's GEMM, a pipelined reduce-scatter all
 * but its last chunk, bulk up to the GEMM's time.
 */
static void tp_comm_ops(struct proj_sink *k, const struct proj_shape *x,
			const struct proj_layer_runs *n, const struct proj_layer_gemms *G,
			struct proj_layer_cost *lc)
{
	double M = n->M, L = n->L, msg = x->T * x->h * x->BA, pn_t = fmin(x->t, x->gpn);
	/* one of each per block: 2 in an attention + FFN layer */
	double ns = (x->mixer != PROJ_MIX_NONE) + !x->noffn;
	int full = n->full;
	/* selective recompute of the FFN (mlp, moe) runs its half of the
	 * forward collectives again */
	int ffn_rc = !x->noffn && (x->rcm & (x->moe ? PROJ_RC_MOE : PROJ_RC_MLP));

	if (x->sp) {
		double nag = M * L * (ns + 2 * ns + (full ? ns : 0) + (ffn_rc ? 1 : 0));
		double nrs = M * L * (ns + ns + (full ? ns : 0) + (ffn_rc ? 1 : 0));
		double ag = proj_op_coll(k, CVC_MODEL_ALLGATHER, CVC_PROJ_COMM_TP, msg, x->t, pn_t, nag);
		double rs = proj_op_coll(k, CVC_MODEL_REDUCESCATTER, CVC_PROJ_COMM_TP, msg, x->t, pn_t,
					 nrs);
		double ring = 1 - 1 / x->t, pipe = 1 - 1.0 / TP_RS_SPLITS, hf = 0, hb = 0;

		if (x->ag_ovl) {
			hf += fmin(ag, G->qkv_f * ring) + fmin(ag, G->up_f * ring);
			hb += fmin(ag, G->pr_d * ring) + fmin(ag, G->dn_d * ring);
			hb += fmin(ag, G->qkv_d) + fmin(ag, G->up_d);
		}
		if (x->rs_ovl) {
			hf += fmin(rs * pipe, G->pr_f) + fmin(rs * pipe, G->dn_f);
			hb += fmin(rs, G->qkv_w) + fmin(rs, G->up_w);
		}
		lc->tp_fwd_s = ns * (ag + rs);
		lc->tp_bwd_s = 2 * ns * ag + ns * rs + (full ? lc->tp_fwd_s : 0);
		lc->tp_hid_s = hf * (full ? 2 : 1) + hb;
		if (ffn_rc) {
			lc->tp_bwd_s += ag + rs;
			lc->tp_hid_s += (x->ag_ovl ? fmin(ag, G->up_f * ring) : 0) +
					(x->rs_ovl ? fmin(rs * pipe, G->dn_f) : 0);
		}
	} else {
		double one = proj_op_coll(k, CVC_MODEL_ALLREDUCE, CVC_PROJ_COMM_TP, msg, x->t, pn_t,
					  n->per * ns / 2 + (ffn_rc ? M * L : 0));

		lc->tp_fwd_s = ns * one;
		lc->tp_bwd_s = ns * one * (full ? 2 : 1) + (ffn_rc ? one : 0);
	}
}

/* Context parallel: ring exchange of K and V blocks, c-1 steps forward,
 * twice that backward, again under full recomputation. */
static void cp_comm_ops(struct proj_sink *k, const struct proj_shape *x,
			const struct proj_layer_runs *n, struct proj_layer_cost *lc)
{
	int full = n->full;
	/* K and V of the local heads (MLA: every head's, after the up
	 * projection) */
	double kv = x->mla ? x->T * x->a / x->t * (x->dqk + x->dv) * x->BA
			   : 2 * x->T * fmax(1, x->g / x->t) * x->dh * x->BA;
	double one = (x->c - 1) * proj_op_coll(k, CVC_MODEL_SENDRECV, CVC_PROJ_COMM_CP, kv, 2,
					       x->t * x->c <= x->gpn ? 2 : 1,
					       n->M * n->L * (x->c - 1) * (3 + (full ? 1 : 0)));

	lc->cp_fwd_s = one;
	lc->cp_bwd_s = 2 * one + (full ? one : 0);
}

/*
 * The operators of one layer for shape x, priced into lc.  M micro-batches
 * run through L layers of the busiest stage per step; they only set the
 * listed counts.  proj_ends_ops(): the first and the last stage's own.
 */
void proj_layer_ops(struct proj_sink *k, const struct proj_shape *x, double M, double L,
		    struct proj_layer_cost *lc)
{
	struct proj_layer_runs n;
	struct proj_layer_gemms G;
	double fwd = 0, bwd = 0, gf = 0, gb = 0, af = 0, ab = 0, mf = 0, mb = 0, rc_extra = 0;
	int full = x->recompute == CVC_PROJ_RECOMP_FULL;

	n.full = full;
	n.M = M;
	n.L = L;
	n.cf = M * L * (full ? 2 : 1);
	n.cb = M * L;
	n.per = M * L * (2 + 2 * (full ? 2 : 1));
	k->kernels = 0;
	k->chunk_kernels = 0;
	k->margin_s = 0;
	if (x->d3) { /* 3D tensor parallelism: its own layer (tp3d.c) */
		proj_layer3d_ops(k, x, &n, lc);
		return;
	}
	layer_gemm_ops(k, x, &n, &G, &mf, &mb);
	gf = G.qkv_f + G.pr_f + G.up_f + G.dn_f;
	gb = G.qkv_d + G.qkv_w + G.pr_d + G.pr_w + G.up_d + G.up_w + G.dn_d + G.dn_w;
	attn_core_ops(k, x, &n, &af, &ab);
	layer_mem_ops(k, x, &n, &G, &mf, &mb);
	fwd = gf + af + mf;
	if (full)
		rc_extra = fwd;
	else if ((x->rcm & PROJ_RC_CORE) &&
		 (x->mixer == PROJ_MIX_ATTN || x->mixer == PROJ_MIX_LOCAL))
		/* core attention (Korthikanti et al. 2022), fused or not:
		 * Megatron-Core checkpoints it whatever the backend runs it
		 * (checkpoint_core_attention, transformer/attention.py
		 * _checkpointed_attention_forward), so its forward runs again
		 * before the backward's */
		rc_extra = af;
	if (!full && x->rcm & ~PROJ_RC_CORE) /* the other modules selective recompute names */
		rc_extra += G.rc_gemm + G.rc_mem;
	bwd = gb + ab + mb + rc_extra;

	lc->fwd_s = fwd;
	lc->bwd_s = bwd;
	lc->fwd_gemm_s = gf;
	lc->bwd_gemm_s = gb + (full ? gf : 0) + (full ? 0 : G.rc_gemm);
	lc->attn_fwd_s = af;
	lc->attn_bwd_s = ab;
	lc->kernels = k->kernels;
	lc->chunk_kernels = k->chunk_kernels;
	lc->tp_margin_s = k->margin_s * (full ? 2 : 1);
	lc->mlp_fwd_s = G.mlp_f;
	lc->mlp_bwd_s = G.mlp_d;
	lc->mlp_wgrad_s = G.mlp_w;
	lc->wgrad_s = G.qkv_w + G.pr_w + G.up_w + G.dn_w;
	lc->ungraphed_kernels = G.exp_kernels;

	if (x->t > 1)
		tp_comm_ops(k, x, &n, &G, lc);
	if (x->moe && !x->noffn && x->e > 1)
		proj_ep_comm_ops(k, x, &n, lc);
	if (x->c > 1 && (x->mixer == PROJ_MIX_ATTN || x->mixer == PROJ_MIX_LOCAL))
		cp_comm_ops(k, x, &n, lc);
}

size_t cvc_proj_scenario_ops(const cvc_proj_scenario *sc, cvc_proj_op_fn fn, void *user)
{
	struct proj_sink k;
	struct proj_shape x;
	struct proj_layer_cost lc;
	struct proj_params P;
	struct proj_step_cost st;
	struct proj_plan pl;
	double M = sc->global_batch / (sc->dp * sc->micro_batch), n[PROJ_NKIND], L = 0;

	if (!(M > 0) || !(sc->tp >= 1))
		return 0;
	proj_shape_of(sc, &x);
	proj_plan_of(sc, &pl);
	proj_heaviest_stage(sc, &x, &pl, n);
	for (int i = 0; i < PROJ_NKIND; i++)
		L += n[i];
	if (!(L > 0))
		return 0;
	proj_sink_init(&k, sc, NULL, fn, user);
	memset(&lc, 0, sizeof lc);
	/* the stage's layers of each kind, the main kind first */
	for (int i = -1; i < PROJ_NKIND; i++) {
		int kd = i < 0 ? proj_main_kind(sc) : i;
		struct proj_shape xk;

		if (i == proj_main_kind(sc) || !(n[kd] > 0))
			continue;
		proj_shape_kind(sc, &x, kd, &xk);
		proj_layer_ops(&k, &xk, M, n[kd], &lc);
	}
	proj_ends_ops(&k, &x, M, &lc);
	proj_params_kinds(sc, &x, n, &P);
	proj_step_ops(&k, sc, &x, &P, M, &st);
	return k.n;
}
