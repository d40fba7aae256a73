/*
 * project.c - one training step of one scenario: decomposition into
 * operators (per layer, per stage), pricing through the operator models,
 * the overlap model, and the summary figures (docs/SCENARIOS.md, "model").
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

/* Usable share of HBM: the rest goes to the CUDA context, NCCL buffers and
 * allocator fragmentation (PyTorch reserves 5-10% in practice). */
#define HBM_USABLE 0.9

struct shape {
	double b, s, h, a, g, f, V, E, k, t, c, e, et, T, dh, qkv, BA, ffw, Tm, gpn;
	int sp, moe, swiglu, dtype, recompute, unfused, attention, framework;
	int fp8, fp8_recipe, fp8_attn, ag_ovl, rs_ovl;
};

static void shape_of(const cvc_proj_scenario *sc, struct shape *x)
{
	x->b = sc->micro_batch;
	x->s = sc->seq;
	x->h = sc->hidden;
	x->a = sc->heads;
	x->g = sc->kv_heads;
	x->f = sc->ffn;
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
	x->dtype = sc->dtype;
	x->recompute = sc->recompute;
	x->unfused = sc->attention == CVC_PROJ_ATTN_UNFUSED;
	x->attention = sc->attention;
	x->framework = sc->framework;
	x->fp8 = sc->dtype == CVC_PROJ_FP8;
	x->fp8_recipe = sc->fp8_recipe;
	x->fp8_attn = x->fp8 && sc->fp8_attention;
	/* Megatron-Core overlaps TP collectives with GEMMs only with sequence
	 * parallelism (all-gather and reduce-scatter, not all-reduce) */
	x->ag_ovl = x->sp && (sc->tp_overlap_ag < 0 ? sc->tp_overlap : sc->tp_overlap_ag);
	x->rs_ovl = x->sp && (sc->tp_overlap_rs < 0 ? sc->tp_overlap : sc->tp_overlap_rs);
	x->T = x->b * x->s / x->c;             /* tokens per micro-batch per GPU */
	x->dh = x->h / x->a;
	x->qkv = (x->a + 2 * x->g) * x->dh;
	x->BA = sc->dtype == CVC_PROJ_FP32 ? 4 : 2; /* activations, grads, comm */
	x->ffw = (x->swiglu ? 3 : 2) * x->h * x->f; /* FFN weights of one expert */
	x->Tm = x->moe ? x->T * x->k : x->T;
	x->gpn = sc->gpus_per_node;
}

/*
 * Where the decomposition's operators go.  One decomposition (layer_ops(),
 * step_ops()) serves both the projector and cvc_proj_scenario_ops():
 *   pricing (p set):  every op_*() returns the seconds of one run of the
 *                     operator, and the decomposition combines them;
 *   listing (fn set): every operator goes to fn with how many times the
 *                     step runs it; op_*() return 0.
 * So the list `cvc calibrate --plan` measures cannot drift from what the
 * projector prices.  The counts are not used when pricing; the arithmetic
 * that consumes the prices must agree with them, which
 * tests/unit/test_calibrate.c checks by pricing the list.
 */
struct sink {
	const struct proj_pricer *p;
	cvc_proj_op_fn fn;
	void *user;
	size_t n;
	int stop;
	int dtype;          /* of the transformer layers' GEMMs */
	int attn_backend;   /* cvc_model_attn_backend of the fused attention */
	double kernels;     /* kernel launches priced since the last reset */
	double margin_s;    /* GEMM time lost to SMs held back for communication */
	double scale_hbm, scale_intra, scale_inter;
	struct proj_unc *unc; /* where prices are accounted (NULL: intervals off) */
};

static void sink_init(struct sink *k, const cvc_proj_scenario *sc, const struct proj_pricer *p,
		      cvc_proj_op_fn fn, void *user)
{
	k->p = p;
	k->fn = fn;
	k->user = user;
	k->n = 0;
	k->stop = 0;
	k->dtype = sc->dtype;
	k->kernels = 0;
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
	default: /* the framework's own choice on the GPU generation priced */
		k->attn_backend = sc->framework == CVC_PROJ_FW_PYTORCH ? CVC_ATTN_DEFAULT_TORCH
								       : CVC_ATTN_DEFAULT_TE;
	}
	/* equal to the pricer's: pricers are keyed by these scale factors */
	k->scale_hbm = sc->scale_hbm_bw;
	k->scale_intra = sc->scale_intra_bw;
	k->scale_inter = sc->scale_inter_bw;
}

static double put(struct sink *k, const cvc_proj_op *o)
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

static double op_gemm_dt(struct sink *k, int dtype, double m, double n, double kk,
			 double batch, double count, int stage)
{
	cvc_proj_op o;

	op_init(&o, CVC_PROJ_OP_GEMM, count, stage);
	o.dtype = dtype;
	o.m = i64(m), o.n = i64(n), o.k = i64(kk), o.b = i64(batch);
	return put(k, &o);
}

/* A GEMM of the transformer layers: in the scenario's dtype (fp8 too). */
static double op_gemm(struct sink *k, double m, double n, double kk, double batch, double count,
		      int stage)
{
	return op_gemm_dt(k, k->dtype, m, n, kk, batch, count, stage);
}

static double op_attn(struct sink *k, int dtype, double batch, double heads, double kv_heads, double sq,
		      double skv, double head_dim, int backward, double count)
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
static double op_mem(struct sink *k, int cls, double bytes, double count, int stage)
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
static double op_coll(struct sink *k, int kind, int comm, double bytes, double group,
		      double per_node, double count)
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
	op_init(&o, CVC_PROJ_OP_COLL, count, CVC_PROJ_STAGE_ALL);
	o.sub = kind;
	o.comm = comm;
	o.bytes = i64(bytes / scale);
	o.group = g;
	o.per_node = pn;
	return put(k, &o);
}

/* One GEMM forward and its two backward GEMMs (dgrad, wgrad), run cf and
 * cb times per step; the forward and the dgrad as split_f / split_b GEMMs
 * of m/split rows each when a TP collective is overlapped with them (the
 * chunks of Transformer Engine's ring-exchange and pipelined overlaps: the
 * smaller GEMMs' efficiency is what the overlap costs), the forward slow_f
 * times slower (SMs held back for the overlapped reduce-scatter).  Returns
 * the forward time; *dgrad and *wgrad get the backward ones. */
static double gemm3(struct sink *k, int dtype, double m, double n, double kk, double cf,
		    double cb, int stage, double split_f, double split_b, double slow_f,
		    double *dgrad, double *wgrad)
{
	double fwd;

	split_f = split_f > 1 ? split_f : 1;
	split_b = split_b > 1 ? split_b : 1;
	fwd = split_f * op_gemm_dt(k, dtype, m / split_f, n, kk, 1, cf * split_f, stage);
	*dgrad = split_b * op_gemm_dt(k, dtype, m / split_b, kk, n, 1, cb * split_b, stage);
	*wgrad = op_gemm_dt(k, dtype, kk, n, m, 1, cb, stage);
	/* booked apart (struct sink margin_s): the operator itself is the one
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
 * FP8 (Transformer Engine): the quantize kernels a recipe adds per layer.
 * Inputs made by a LayerNorm or an activation are cast inside that kernel;
 * the attention output is cast on its own, and in backward the gradient of
 * every GEMM output is cast with its transpose for dgrad and wgrad.  Delayed
 * scaling reads bf16 and writes fp8 twice (both layouts): 4 bytes per
 * element; current scaling first reads the tensor for its amax (+2); MXFP8
 * writes both layouts and a 1-byte scale per 32 elements.  Weights are
 * cast once per step (step_ops()).
 */
static double fp8_cast_bytes(const struct shape *x)
{
	if (x->fp8_recipe == CVC_PROJ_FP8_CURRENT)
		return 6;
	if (x->fp8_recipe == CVC_PROJ_FP8_MXFP8)
		return 4 + 2.0 / 32;
	return 4;
}

/* The forward, dgrad and wgrad times of a layer's four GEMMs (for MoE,
 * the router rides with up and the experts' grouped GEMMs stand for up and
 * down). */
struct layer_gemms {
	double qkv_f, qkv_d, qkv_w, pr_f, pr_d, pr_w, up_f, up_d, up_w, dn_f, dn_d, dn_w;
};

/* How often a layer's operators run per step: cf forward (again under full
 * recomputation), cb backward; per for each per-layer collective (twice
 * forward and twice backward, the backward pair again under full
 * recomputation). */
struct layer_runs {
	int full;
	double M, L, cf, cb, per;
};

/* MoE FFN: router (bf16), then each rank's E/ep experts as one grouped
 * GEMM over the T*k routed tokens it receives (balanced routing: T*k/(E/ep)
 * per expert), expert tensor parallel etp; and the token permutation
 * around them, added to *mf / *mb. */
static void moe_ffn_ops(struct sink *k, const struct shape *x, const struct layer_runs *n,
			struct layer_gemms *G, double *mf, double *mb)
{
	double cf = n->cf, cb = n->cb;
	double groups = fmax(1, x->E / x->e);
	double ffn_l = x->f / x->et;
	double up_f, up_d, up_w, dn_f, dn_d, dn_w, r_f, r_d, r_w;

	r_f = gemm3(k, x->fp8 ? CVC_PROJ_BF16 : x->dtype, x->T, x->E, x->h, cf, cb, 0, 1, 1, 1,
		    &r_d, &r_w);
	up_f = op_gemm(k, x->Tm / groups, (x->swiglu ? 2 : 1) * ffn_l, x->h, groups, cf, 0);
	up_d = op_gemm(k, x->Tm / groups, x->h, (x->swiglu ? 2 : 1) * ffn_l, groups, cb, 0);
	up_w = op_gemm(k, x->h, (x->swiglu ? 2 : 1) * ffn_l, x->Tm / groups, groups, cb, 0);
	dn_f = op_gemm(k, x->Tm / groups, x->h, ffn_l, groups, cf, 0);
	dn_d = op_gemm(k, x->Tm / groups, ffn_l, x->h, groups, cb, 0);
	dn_w = op_gemm(k, ffn_l, x->h, x->Tm / groups, groups, cb, 0);
	G->up_f = up_f + r_f, G->up_d = up_d + r_d, G->up_w = up_w + r_w;
	G->dn_f = dn_f, G->dn_d = dn_d, G->dn_w = dn_w;
	/* token permutation before the experts and its inverse after, each
	 * way (Megatron-Core's permute / unpermute: read and write the routed
	 * copies of the tokens) */
	*mf += 2 * op_mem(k, CVC_MODEL_MEM_GATHER, 2 * x->BA * x->Tm * x->h, 2 * cf, 0);
	*mb += 2 * op_mem(k, CVC_MODEL_MEM_GATHER, 2 * x->BA * x->Tm * x->h, 2 * cb, 0);
}

/* GEMMs: QKV, attention output projection, FFN up(+gate), down.  TP
 * overlap splits the GEMMs next to the overlapped collective. */
static void layer_gemm_ops(struct sink *k, const struct shape *x, const struct layer_runs *n,
			   struct layer_gemms *G, double *mf, double *mb)
{
	double cf = n->cf, cb = n->cb, tsplit = x->t, rs_slow = 1;

	if (x->rs_ovl && k->p) {
		double sms = cvc_modelset_spec(k->p->ms_scaled)->sm_count;

		if (sms > 2 * TP_RS_SMS)
			rs_slow = sms / (sms - TP_RS_SMS);
	}
	G->qkv_f = gemm3(k, x->dtype, x->T, x->qkv / x->t, x->h, cf, cb, 0,
			 x->ag_ovl ? tsplit : 1, 1, 1, &G->qkv_d, &G->qkv_w);
	G->pr_f = gemm3(k, x->dtype, x->T, x->h, x->a * x->dh / x->t, cf, cb, 0,
			x->rs_ovl ? TP_RS_SPLITS : 1, x->ag_ovl ? tsplit : 1, rs_slow, &G->pr_d,
			&G->pr_w);
	if (x->moe) {
		moe_ffn_ops(k, x, n, G, mf, mb);
	} else {
		G->up_f = gemm3(k, x->dtype, x->T, (x->swiglu ? 2 : 1) * x->f / x->t, x->h, cf, cb,
				0, x->ag_ovl ? tsplit : 1, 1, 1, &G->up_d, &G->up_w);
		G->dn_f = gemm3(k, x->dtype, x->T, x->h, x->f / x->t, cf, cb, 0,
				x->rs_ovl ? TP_RS_SPLITS : 1, x->ag_ovl ? tsplit : 1, rs_slow,
				&G->dn_d, &G->dn_w);
	}
}

/* Attention core, forward into *af and backward into *ab; fp8 training
 * keeps it in bf16 unless fp8_attention. */
static void attn_core_ops(struct sink *k, const struct shape *x, const struct layer_runs *n,
			  double *af, double *ab)
{
	double cf = n->cf, cb = n->cb;
	double hl = x->a / x->t, gl = fmax(1, x->g / x->t), sq = x->s / x->c;
	int adt = x->fp8_attn ? CVC_PROJ_FP8 : (x->fp8 ? CVC_PROJ_BF16 : x->dtype);

	if (x->unfused) {
		double bt = x->b * hl, el = bt * sq * x->s;
		/* selective recomputation re-runs the unfused core */
		double ca = cf + (x->recompute == CVC_PROJ_RECOMP_SELECTIVE ? cb : 0);
		double f1, f2, f3, f4, b1, b2, b3, b4, b5;

		f1 = op_gemm_dt(k, adt, sq, x->s, x->dh, bt, ca, 0);
		f2 = op_gemm_dt(k, adt, sq, x->dh, x->s, bt, ca, 0);
		f3 = op_mem(k, CVC_MODEL_MEM_NORM, 2 * x->BA * el, ca, 0); /* scale-mask-softmax */
		f4 = op_mem(k, CVC_MODEL_MEM_ELEMENTWISE, (2 * x->BA + 1) * el, ca, 0); /* dropout */
		*af = f1 + f2 + f3 + f4;
		b1 = op_gemm_dt(k, adt, sq, x->dh, x->s, bt, 2 * cb, 0);
		b2 = op_gemm_dt(k, adt, x->s, x->dh, sq, bt, cb, 0);
		b3 = op_gemm_dt(k, adt, sq, x->s, x->dh, bt, cb, 0);
		b4 = op_mem(k, CVC_MODEL_MEM_NORM, 3 * x->BA * el, cb, 0);
		b5 = op_mem(k, CVC_MODEL_MEM_ELEMENTWISE, (2 * x->BA + 1) * el, cb, 0);
		*ab = 2 * b1 + b2 + b3 + b4 + b5;
	} else {
		/* with context parallelism, c ring steps of s/c queries
		 * against s/c keys: together the rank's half of the causal
		 * pairs of s/c queries x s keys (load-balanced chunks) */
		*af = x->c * op_attn(k, adt, x->b, hl, gl, sq, sq, x->dh, 0, cf * x->c);
		*ab = x->c * op_attn(k, adt, x->b, hl, gl, sq, sq, x->dh, 1, cb * x->c);
	}
}

/* Memory-bound operators of a layer, added to *mf / *mb: 2 norms, 2
 * bias-dropout-residual, activation, rope, and the fp8 casts. */
static void layer_mem_ops(struct sink *k, const struct shape *x, const struct layer_runs *n,
			  double *mf, double *mb)
{
	double cf = n->cf, cb = n->cb;
	double Th = x->T * x->h / (x->sp ? x->t : 1);
	double f1, f2, f3, b1, b2, b3;

	f1 = op_mem(k, CVC_MODEL_MEM_NORM, 2 * x->BA * Th, 2 * cf, 0);
	f2 = op_mem(k, CVC_MODEL_MEM_ELEMENTWISE, (3 * x->BA + 1) * Th, 2 * cf, 0);
	f3 = op_mem(k, CVC_MODEL_MEM_ELEMENTWISE,
		    (x->swiglu ? 3 : 2) * x->BA * x->Tm * x->f / (x->moe ? x->et : x->t), cf, 0);
	*mf += 2 * f1 + 2 * f2 + f3;
	b1 = op_mem(k, CVC_MODEL_MEM_NORM, 4 * x->BA * Th, 2 * cb, 0);
	b2 = op_mem(k, CVC_MODEL_MEM_ELEMENTWISE, 2 * (3 * x->BA + 1) * Th, 2 * cb, 0);
	b3 = op_mem(k, CVC_MODEL_MEM_ELEMENTWISE,
		    2 * (x->swiglu ? 3 : 2) * x->BA * x->Tm * x->f / (x->moe ? x->et : x->t), cb,
		    0);
	*mb += 2 * b1 + 2 * b2 + b3;
	if (x->swiglu) { /* Llama family: rotary embedding on q and k */
		double rb = 2 * x->BA * x->T * (x->a + x->g) * x->dh / x->t;

		*mf += op_mem(k, CVC_MODEL_MEM_ELEMENTWISE, rb, cf, 0);
		*mb += op_mem(k, CVC_MODEL_MEM_ELEMENTWISE, rb, cb, 0);
	}
	if (x->fp8) {
		double cb_bytes = fp8_cast_bytes(x);
		double outs = x->qkv / x->t + x->h + (x->swiglu ? 2 : 1) * x->Tm / x->T * x->f /
			      (x->moe ? x->et : x->t) + x->h;

		*mf += op_mem(k, CVC_MODEL_MEM_ELEMENTWISE, cb_bytes * x->T * x->a * x->dh / x->t,
			      cf, 0);
		*mb += op_mem(k, CVC_MODEL_MEM_ELEMENTWISE, cb_bytes * x->T * outs, cb, 0);
	}
}

/*
 * Tensor parallel: 2 all-reduces per layer each way, or with sequence
 * parallelism 2 all-gathers + 2 reduce-scatters forward and, backward, the
 * 2 gradient all-gathers for the row-parallel dgrads, the 2 reduce-scatters
 * of the column-parallel dgrads and the 2 re-gathers of their inputs for
 * wgrad.  Hidden under the GEMMs they overlap with (gemm3() above): a ring
 * exchange all but its last chunk's GEMM, a pipelined reduce-scatter all
 * but its last chunk, bulk up to the GEMM's time.
 */
static void tp_comm_ops(struct sink *k, const struct shape *x, const struct layer_runs *n,
			const struct layer_gemms *G, struct proj_layer_cost *lc)
{
	double M = n->M, L = n->L, msg = x->T * x->h * x->BA, pn_t = fmin(x->t, x->gpn);
	int full = n->full;

	if (x->sp) {
		double nag = M * L * (2 + 4 + (full ? 2 : 0));
		double nrs = M * L * (2 + 2 + (full ? 2 : 0));
		double ag = op_coll(k, CVC_MODEL_ALLGATHER, CVC_PROJ_COMM_TP, msg, x->t, pn_t, nag);
		double rs = op_coll(k, CVC_MODEL_REDUCESCATTER, CVC_PROJ_COMM_TP, msg, x->t, pn_t,
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
		lc->tp_fwd_s = 2 * (ag + rs);
		lc->tp_bwd_s = 4 * ag + 2 * rs + (full ? lc->tp_fwd_s : 0);
		lc->tp_hid_s = hf * (full ? 2 : 1) + hb;
	} else {
		double one = op_coll(k, CVC_MODEL_ALLREDUCE, CVC_PROJ_COMM_TP, msg, x->t, pn_t,
				     n->per);

		lc->tp_fwd_s = 2 * one;
		lc->tp_bwd_s = 2 * one * (full ? 2 : 1);
	}
}

/* MoE: dispatch + combine all-to-all each way, over the EP group: inside
 * the NVLink domain while ep x etp ranks fit in it. */
static void ep_comm_ops(struct sink *k, const struct shape *x, const struct layer_runs *n,
			struct proj_layer_cost *lc)
{
	double pn = fmin(x->e, fmax(1, x->gpn / (x->et * x->c)));
	double one = op_coll(k, CVC_MODEL_ALLTOALL, CVC_PROJ_COMM_EP, x->Tm * x->h * x->BA, x->e,
			     pn, n->per);

	lc->ep_fwd_s = 2 * one;
	lc->ep_bwd_s = 2 * one * (n->full ? 2 : 1);
}

/* Context parallel: ring exchange of K and V blocks, c-1 steps forward,
 * twice that backward, again under full recomputation. */
static void cp_comm_ops(struct sink *k, const struct shape *x, const struct layer_runs *n,
			struct proj_layer_cost *lc)
{
	int full = n->full;
	double kv = 2 * x->T * fmax(1, x->g / x->t) * x->dh * x->BA;
	double one = (x->c - 1) * op_coll(k, CVC_MODEL_SENDRECV, CVC_PROJ_COMM_CP, kv, 2,
					  x->t * x->c <= x->gpn ? 2 : 1,
					  n->M * n->L * (x->c - 1) * (3 + (full ? 1 : 0)));

	lc->cp_fwd_s = one;
	lc->cp_bwd_s = 2 * one + (full ? one : 0);
}

/* First stage: embedding lookup and its scatter-add gradient. */
static void first_stage_ops(struct sink *k, const struct shape *x, double M,
			    struct proj_layer_cost *lc)
{
	k->kernels = 0;
	lc->first_fwd_s = op_mem(k, CVC_MODEL_MEM_GATHER, 2 * x->BA * x->T * x->h, M,
				 CVC_PROJ_STAGE_FIRST);
	lc->first_bwd_s = op_mem(k, CVC_MODEL_MEM_GATHER, 3 * x->BA * x->T * x->h, M,
				 CVC_PROJ_STAGE_FIRST);
	lc->first_kernels = k->kernels;
}

/*
 * Last stage: final norm, logits GEMM (bf16 under fp8 too: Transformer
 * Engine's fp8 covers the transformer layers), softmax cross-entropy.
 * Megatron-Core's fused vocab-parallel cross-entropy reads the logits and
 * keeps fp32 exponentials for backward (6 B per logit each way); eager
 * PyTorch under autocast casts them to fp32, runs log_softmax and
 * nll_loss, and backward nll_loss_backward, log_softmax_backward and the
 * cast back: 14 and 22 B per logit.
 */
static void last_stage_ops(struct sink *k, const struct shape *x, double M,
			   struct proj_layer_cost *lc)
{
	double Th = x->T * x->h / (x->sp ? x->t : 1);
	double f, b, d, w, tv = x->T * x->V / x->t, f1, f2, b1, b2;
	int st = CVC_PROJ_STAGE_LAST, ldt = x->fp8 ? CVC_PROJ_BF16 : x->dtype;
	int eager = x->framework == CVC_PROJ_FW_PYTORCH;

	k->kernels = 0;
	f = gemm3(k, ldt, x->T, x->V / x->t, x->h, M, M, st, 1, 1, 1, &d, &w);
	b = d + w;
	f1 = op_mem(k, CVC_MODEL_MEM_NORM, 2 * x->BA * Th, M, st);
	f2 = op_mem(k, CVC_MODEL_MEM_NORM, (eager ? 14 : x->BA + 4) * tv, M, st);
	f += f1 + f2;
	b1 = op_mem(k, CVC_MODEL_MEM_NORM, 4 * x->BA * Th, M, st);
	b2 = op_mem(k, CVC_MODEL_MEM_ELEMENTWISE, (eager ? 22 : 4 + x->BA) * tv, M, st);
	b += b1 + b2;
	lc->last_fwd_s = f;
	lc->last_bwd_s = b;
	lc->last_kernels = k->kernels;
}

/*
 * The operators of one layer (and of the first and last stage) for shape
 * x, priced into lc.  M micro-batches run through L layers of the busiest
 * stage per step; they only set the listed counts.
 */
static void layer_ops(struct sink *k, const struct shape *x, double M, double L,
		      struct proj_layer_cost *lc)
{
	struct layer_runs n;
	struct layer_gemms G;
	double fwd = 0, bwd = 0, gf = 0, gb = 0, af = 0, ab = 0, mf = 0, mb = 0, rc_extra = 0;
	int full = x->recompute == CVC_PROJ_RECOMP_FULL;

	n.full = full;
	n.M = M;
	n.L = L;
	n.cf = M * L * (full ? 2 : 1);
	n.cb = M * L;
	n.per = M * L * (2 + 2 * (full ? 2 : 1));
	k->kernels = 0;
	k->margin_s = 0;
	layer_gemm_ops(k, x, &n, &G, &mf, &mb);
	gf = G.qkv_f + G.pr_f + G.up_f + G.dn_f;
	gb = G.qkv_d + G.qkv_w + G.pr_d + G.pr_w + G.up_d + G.up_w + G.dn_d + G.dn_w;
	attn_core_ops(k, x, &n, &af, &ab);
	layer_mem_ops(k, x, &n, &mf, &mb);
	fwd = gf + af + mf;
	if (full)
		rc_extra = fwd;
	else if (x->recompute == CVC_PROJ_RECOMP_SELECTIVE && x->unfused)
		rc_extra = af; /* core attention only (Korthikanti et al. 2022) */
	bwd = gb + ab + mb + rc_extra;

	lc->fwd_s = fwd;
	lc->bwd_s = bwd;
	lc->fwd_gemm_s = gf;
	lc->bwd_gemm_s = gb + (full ? gf : 0);
	lc->attn_fwd_s = af;
	lc->attn_bwd_s = ab;
	lc->kernels = k->kernels;
	lc->tp_margin_s = k->margin_s * (full ? 2 : 1);

	if (x->t > 1)
		tp_comm_ops(k, x, &n, &G, lc);
	if (x->moe && x->e > 1)
		ep_comm_ops(k, x, &n, lc);
	if (x->c > 1)
		cp_comm_ops(k, x, &n, lc);
	first_stage_ops(k, x, M, lc);
	last_stage_ops(k, x, M, lc);
}

static uint64_t key_hash(const double *k, int n)
{
	uint64_t h = 1469598103934665603ull;

	for (int i = 0; i < n; i++) {
		uint64_t u;

		memcpy(&u, &k[i], sizeof u);
		h ^= u + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
	}
	return h;
}

/* Per-layer costs for a shape (k prices); cached in the ctx because a
 * sweep over GPU counts or batch sizes reuses the same layer shapes
 * thousands of times. */
static const struct proj_layer_cost *layer_cost(cvc_proj_ctx *ctx, struct sink *k,
						const struct shape *x)
{
	double key[PROJ_CC_KEY] = {1 + k->p->id + (k->unc ? 0.5 : 0), x->b, x->s, x->h, x->a,
				   x->g, x->f, x->V, x->E,
				   x->k, x->t, x->c, x->e, x->et, x->gpn, x->sp, x->swiglu,
				   x->dtype, x->recompute, x->attention, x->framework,
				   x->fp8_recipe, x->fp8_attn, x->ag_ovl, x->rs_ovl};
	struct proj_layer_cost *lc;

	lc = &ctx->cc.e[key_hash(key, PROJ_CC_KEY) % PROJ_CC_SLOTS];
	if (memcmp(lc->key, key, sizeof key) == 0)
		return lc;
	memset(lc, 0, sizeof *lc);
	{
		struct proj_unc *step = k->unc;

		/* one layer's prices, kept with it */
		if (step)
			k->unc = &lc->unc;
		layer_ops(k, x, 1, 1, lc); /* counts: one layer's own */
		k->unc = step;
	}
	memcpy(lc->key, key, sizeof key);
	return lc;
}

/* Parameters per GPU on the heaviest stage (layers + embedding), and the
 * bytes per parameter of weights, gradients and optimizer state. */
struct params {
	double p_dense, p_exp, p_layer, p_stage, p_total, wb, gbytes, ob;
};

static void params_of(const cvc_proj_scenario *sc, const struct shape *x, double L,
		      struct params *P)
{
	double t = sc->tp, e = sc->ep;

	P->p_dense = (x->h * x->qkv + x->h * x->h + (x->moe ? x->h * x->E : x->ffw)) / t + 4 * x->h;
	P->p_exp = x->moe ? x->E / e * x->ffw / t : 0;
	P->p_layer = P->p_dense + P->p_exp;
	P->p_stage = L * P->p_layer + x->V * x->h / t;
	P->p_total = sc->layers * (x->h * x->qkv + x->h * x->h + x->ffw * (x->moe ? x->E : 1) +
				   (x->moe ? x->h * x->E : 0) + 4 * x->h) + x->V * x->h;
	P->wb = sc->dtype == CVC_PROJ_FP32 ? 4 : 2;
	P->gbytes = x->BA;
	P->ob = sc->optimizer == CVC_PROJ_ADAM ? (sc->dtype == CVC_PROJ_FP32 ? 8 : 12)
					       : (sc->dtype == CVC_PROJ_FP32 ? 4 : 8);
}

/* Step-level operators: their prices, each for one run. */
struct step_cost {
	double fsdp_ag, fsdp_rs;   /* ZeRO-3: one layer's gather / scatter */
	double pp_one;             /* one pipeline activation transfer */
	double dp_tot, dp_last;    /* ZeRO 0-2 gradient sync: all buckets, last one */
	double dp_ag;              /* ZeRO 1-2: updated parameters gathered back */
	double hsdp_tot, hsdp_last; /* hybrid ZeRO-3: shard all-reduce across groups */
	double opt;                /* optimizer update */
	double wcast;              /* fp8: every weight cast (and transposed) once */
};

/* ZeRO/FSDP shard group (hybrid sharding shards inside it and replicates
 * across the dp*cp / group copies); dp*cp when not hybrid. */
static double shard_of(const cvc_proj_scenario *sc)
{
	double dc = sc->dp * sc->cp;

	return sc->shard_group > 0 && sc->shard_group < dc ? sc->shard_group : dc;
}

/* Bucketed collective over bytes: (all buckets, the last bucket alone). */
static void bucketed(struct sink *k, int kind, double bytes, double bucket, double group,
		     double pn, double count, double *total, double *last)
{
	double nfull, rem;

	*total = *last = 0;
	if (bytes <= 0 || group <= 1)
		return;
	if (bucket <= 0 || bucket >= bytes) {
		*total = *last = op_coll(k, kind, CVC_PROJ_COMM_DP, bytes, group, pn, count);
		return;
	}
	nfull = floor(bytes / bucket);
	rem = bytes - nfull * bucket;
	*last = op_coll(k, kind, CVC_PROJ_COMM_DP, bucket, group, pn, count * nfull);
	*total = nfull * *last;
	if (rem > 0) {
		*last = op_coll(k, kind, CVC_PROJ_COMM_DP, rem, group, pn, count);
		*total += *last;
	}
}

static void step_ops(struct sink *k, const cvc_proj_scenario *sc, const struct shape *x,
		     const struct params *P, double M, double L, struct step_cost *st)
{
	double t = sc->tp, pp = sc->pp, v = sc->vpp, d = sc->dp, c = sc->cp, e = sc->ep;
	double gpn = sc->gpus_per_node, dc = d * c;
	double H = sc->local_sgd_h >= 1 ? sc->local_sgd_h : 1;
	double C = sc->clusters >= 1 ? sc->clusters : 1;

	memset(st, 0, sizeof *st);
	/* ZeRO-3 / FSDP: per layer all-gather of parameters before forward and
	 * backward (again for recompute), reduce-scatter of gradients, inside
	 * the shard group; with hybrid sharding the gradient shards are then
	 * all-reduced across the replicas, once per step */
	if (sc->zero >= 3 && dc > 1) {
		double sh = shard_of(sc), rep = dc / sh;
		double pn = fmin(sh, fmax(1, gpn / t));
		double nag_b = sc->recompute == CVC_PROJ_RECOMP_FULL ? 2 : 1;

		if (sh > 1) {
			st->fsdp_ag = op_coll(k, CVC_MODEL_ALLGATHER, CVC_PROJ_COMM_FSDP,
					      P->p_layer * P->wb, sh, pn, M * L * (1 + nag_b));
			st->fsdp_rs = op_coll(k, CVC_MODEL_REDUCESCATTER, CVC_PROJ_COMM_DP,
					      P->p_layer * P->gbytes, sh, pn, M * L);
		}
		if (rep > 1)
			bucketed(k, CVC_MODEL_ALLREDUCE, P->p_stage / sh * P->gbytes,
				 sc->bucket_mb * 1e6, rep, fmin(rep, fmax(1, gpn / (t * sh))), 1,
				 &st->hsdp_tot, &st->hsdp_last);
	}
	/* pipeline: each micro-batch's activations forward and gradients back
	 * across each of the v chunk boundaries */
	if (pp > 1) {
		double msg = x->T * x->h * x->BA / (x->sp ? t : 1);
		double pn = t * c * d < gpn ? 2 : 1;

		st->pp_one = op_coll(k, CVC_MODEL_SENDRECV, CVC_PROJ_COMM_PP, msg, 2, pn, 2 * v * M);
	}
	/* data parallel gradient sync (ZeRO 0-2), every H steps with local SGD
	 * in one cluster */
	if (sc->zero < 3 && dc > 1) {
		double dcl = dc / C; /* replicas inside one cluster */
		double pn = fmin(dcl, fmax(1, gpn / t));
		double pn_e = fmin(dcl / e, fmax(1, gpn / (t * e)));
		double bucket = sc->bucket_mb * 1e6;
		double count = 1 / (C > 1 ? 1 : H);
		double sh = sc->zero >= 1 ? fmin(shard_of(sc), dcl) : dcl, rep = dcl / sh;
		double pn_s = fmin(sh, fmax(1, gpn / t));
		double tt, ll;

		if (dcl > 1) {
			int kind = sc->zero >= 1 && sh > 1 ? CVC_MODEL_REDUCESCATTER
							   : CVC_MODEL_ALLREDUCE;
			double grp = sc->zero >= 1 && sh > 1 ? sh : dcl;

			/* ZeRO 1-2 reduce-scatter in the shard group (all of dp*cp
			 * unless sharded hybrid), else all-reduce */
			bucketed(k, kind, (P->p_stage - L * P->p_exp) * P->gbytes, bucket, grp,
				 sc->zero >= 1 && sh > 1 ? pn_s : pn, count, &tt, &ll);
			st->dp_tot += tt;
			st->dp_last = ll;
			if (sc->zero >= 1 && sh > 1 && rep > 1) {
				/* the shards' all-reduce across replicas */
				bucketed(k, CVC_MODEL_ALLREDUCE, P->p_stage / sh * P->gbytes, bucket,
					 rep, fmin(rep, fmax(1, gpn / (t * sh))), count, &tt, &ll);
				st->dp_tot += tt;
				st->dp_last = ll;
			}
			if (P->p_exp > 0 && dcl / e > 1) {
				bucketed(k, kind, L * P->p_exp * P->gbytes, bucket, dcl / e, pn_e,
					 count, &tt, &ll);
				st->dp_tot += tt;
			}
			if (sc->zero >= 1 && sh > 1) /* updated parameter shards gathered back */
				st->dp_ag = op_coll(k, CVC_MODEL_ALLGATHER, CVC_PROJ_COMM_DP,
						    P->p_stage * P->wb, sh, pn_s, count);
		}
	}
	/* optimizer: weights, gradients and states read and written */
	{
		double shard = sc->zero >= 1 ? shard_of(sc) : 1;

		st->opt = op_mem(k, CVC_MODEL_MEM_OPTIMIZER,
				 P->p_stage / shard * (sc->optimizer == CVC_PROJ_ADAM ? 30 : 20), 1,
				 CVC_PROJ_STAGE_ALL);
	}
	/* fp8: Transformer Engine casts every weight of the transformer layers
	 * to fp8 (and its transpose) once per step, cached across micro-batches
	 * (fp8_cast_bytes() per element) */
	if (x->fp8)
		st->wcast = op_mem(k, CVC_MODEL_MEM_ELEMENTWISE,
				   fp8_cast_bytes(x) * (P->p_stage - x->V * x->h / t), 1,
				   CVC_PROJ_STAGE_ALL);
}

/*
 * Layers per pipeline stage (docs/SCENARIOS.md, "uneven pipeline stages"):
 * first_stage_layers / last_stage_layers as given (Megatron-Core's
 * --decoder-first/last-pipeline-num-layers), the other stages sharing the
 * rest evenly; or, when neither is given and layers do not divide by pp*vpp,
 * Megatron-Core's account-for-embedding / account-for-loss split, which
 * counts the embedding and the loss as one layer each of the first and the
 * last virtual stage (Llama 3 405B: 126 layers on 8 x 8 virtual stages, the
 * first and the last stage one layer fewer).  Returns NULL or why not.
 */
const char *proj_stage_layers(const cvc_proj_scenario *sc, double *first, double *mid,
			      double *last)
{
	double pp = sc->pp, v = sc->vpp >= 1 ? sc->vpp : 1, L = sc->layers;
	double f = sc->first_stage_layers, l = sc->last_stage_layers;

	*first = *mid = *last = L / (pp >= 1 ? pp : 1);
	if (!(pp > 1)) {
		if (f > 0 || l > 0)
			return "first/last_stage_layers need pp > 1";
		return NULL;
	}
	if (f <= 0 && l <= 0) {
		double chunks = pp * v;

		if (fmod(L, chunks) == 0)
			return NULL;
		if (fmod(L + 2, chunks) == 0 && (L + 2) / chunks >= 1) {
			*mid = (L + 2) / pp;
			*first = *last = *mid - 1;
			return NULL;
		}
		if (fmod(L + 1, chunks) == 0) {
			*first = *mid = (L + 1) / pp;
			*last = *mid - 1;
			return NULL;
		}
		return "layers not divisible by pp*vpp (set first_stage_layers, last_stage_layers)";
	}
	if (f != floor(f) || l != floor(l) || f < 0 || l < 0)
		return "first/last_stage_layers must be whole numbers";
	{
		double given = (f > 0) + (l > 0), rest = L - (f > 0 ? f : 0) - (l > 0 ? l : 0);
		double others = pp - given, each;

		if (rest < 0)
			return "first + last stage layers exceed layers";
		if (others <= 0) {
			if (rest != 0)
				return "first + last stage layers must equal layers with pp = 2";
			each = 0;
		} else {
			each = rest / others;
			if (each != floor(each) || each < 1)
				return "layers left for the other stages do not divide evenly";
		}
		*first = f > 0 ? f : each;
		*last = l > 0 ? l : each;
		*mid = pp > 2 ? each : fmax(*first, *last);
	}
	return NULL;
}

static double stage_max_layers(const cvc_proj_scenario *sc)
{
	double f, m, l;

	if (proj_stage_layers(sc, &f, &m, &l))
		return sc->layers / sc->pp;
	return fmax(f, fmax(m, l));
}

size_t cvc_proj_scenario_ops(const cvc_proj_scenario *sc, cvc_proj_op_fn fn, void *user)
{
	struct sink k;
	struct shape x;
	struct proj_layer_cost lc;
	struct params P;
	struct step_cost st;
	double M = sc->global_batch / (sc->dp * sc->micro_batch), L = stage_max_layers(sc);

	if (!(M > 0) || !(L > 0) || !(sc->tp >= 1))
		return 0;
	sink_init(&k, sc, NULL, fn, user);
	shape_of(sc, &x);
	memset(&lc, 0, sizeof lc);
	layer_ops(&k, &x, M, L, &lc);
	params_of(sc, &x, L, &P);
	step_ops(&k, sc, &x, &P, M, L, &st);
	return k.n;
}

/*
 * Activation bytes one layer keeps for its backward, per token of a
 * micro-batch on this rank (docs/SCENARIOS.md "Memory"), by tensor: the
 * inputs of the two norms, of the four GEMMs and of the activation, the
 * attention's saved state, the dropout masks.  With the 2022 GPT layer
 * (LayerNorm, GELU, dropout, unfused attention, no tp) this is Korthikanti
 * et al. 2022's 34 h + 5 a s bytes; sequence parallelism shards what the
 * norms and dropout touch by tp; Transformer Engine's fp8 keeps the GEMM
 * inputs as fp8.
 */
static double act_per_token(const cvc_proj_scenario *sc, const struct shape *x)
{
	double t = x->t, sh = x->sp ? t : 1, B = x->BA, gin = x->fp8 ? 1 : B;
	double dq = x->a * x->dh / t, dkv = fmax(1, x->g / t) * x->dh;
	double f_loc = x->f / (x->moe ? x->et : t), ffk = x->moe ? x->k : 1;
	double drop = sc->dropout ? 1 : 0, a = 0;

	a += 2 * B * x->h / sh;               /* the two norm inputs */
	a += gin * x->h / sh;                 /* QKV input (norm output) */
	if (x->unfused && sc->recompute == CVC_PROJ_RECOMP_NONE) {
		double hl = x->a / t;

		a += B * (dq + 2 * dkv);          /* Q, K, V */
		a += B * hl * x->s;               /* softmax output */
		a += drop * 3 * hl * x->s;        /* its dropout mask and output */
	} else if (x->unfused) {
		a += B * (dq + 2 * dkv);          /* selective: the core is recomputed */
	} else {
		a += B * (dq + 2 * dkv);          /* flash: Q, K, V */
		a += 4 * x->a / t;                /* its fp32 log-sum-exp */
	}
	a += gin * dq;                        /* attention output = projection input */
	a += drop * 2 * x->h / sh;            /* the two residual dropout masks */
	a += gin * ffk * x->h / sh;           /* FC1 input (norm output, routed copies) */
	a += B * ffk * (x->swiglu ? 2 : 1) * f_loc; /* activation input (FC1 output) */
	a += gin * ffk * f_loc;               /* FC2 input (activation output) */
	if (x->moe)
		a += 4 * x->E;                    /* router logits (fp32) */
	return a;
}

/*
 * Memory per GPU on the stage that holds the most: weights, gradients and
 * optimizer states (by framework, dtype and ZeRO stage), activations of
 * the micro-batches in flight, and buffers.  Bytes per parameter: bf16
 * weights; Megatron-Core accumulates gradients in fp32 (its DDP buffer)
 * and Adam keeps an fp32 master copy and two moments (4 + 4 + 4);
 * PyTorch mixed precision (FSDP, DDP) keeps fp32 parameters as the
 * master, fp32 gradients and two moments (4 + 4 + 8) and casts to bf16 per
 * layer; Transformer Engine's fp8 caches an fp8 weight and its transpose
 * (2).  Buffers: the last micro-batch's fp32 logits (4 B each, the
 * gradient written into them).  Activations: act_per_token() x tokens x layers x micro-batches in
 * flight on the stage (1F1B: pp - i on stage i; interleaved:
 * x (1 + (pp-1)/(pp vpp)) on the first, Narayanan et al. 2021).
 */
static void mem_of(const cvc_proj_scenario *sc, const struct shape *x, const struct params *P,
		   const struct proj_pricer *p, double m, cvc_proj_result *r)
{
	double t = sc->tp, pp = sc->pp, v = sc->vpp >= 1 ? sc->vpp : 1, sh = shard_of(sc);
	double sh_w = sc->zero >= 3 ? sh : 1, sh_g = sc->zero >= 2 ? sh : 1;
	double sh_o = sc->zero >= 1 ? sh : 1, fp32 = sc->dtype == CVC_PROJ_FP32;
	int torch = sc->framework == CVC_PROJ_FW_PYTORCH;
	double wb, gb, ob, first, mid, last, act_tok, act = 0, params, buf;

	if (torch) { /* the fp32 parameter is the master copy */
		wb = 4, gb = 4, ob = sc->optimizer == CVC_PROJ_ADAM ? 8 : 4;
	} else {
		wb = fp32 ? 4 : 2, gb = 4;
		ob = sc->optimizer == CVC_PROJ_ADAM ? (fp32 ? 8 : 12) : (fp32 ? 4 : 8);
	}
	if (proj_stage_layers(sc, &first, &mid, &last))
		first = mid = last = sc->layers / pp;
	act_tok = act_per_token(sc, x) * x->T;
	/* the stage holding the most activations, its extra on the first */
	for (int i = 0; i < (pp > 2 ? 3 : (int)pp); i++) {
		double Li = i == 0 ? first : (i == 1 && pp > 2 ? mid : last);
		double stage = i == 0 ? 0 : (i == 1 && pp > 2 ? 1 : pp - 1);
		double inflight = fmin(m, pp - stage) * (v > 1 && i == 0 ? 1 + (pp - 1) / (pp * v)
									 : 1);
		double a;

		if (sc->recompute == CVC_PROJ_RECOMP_FULL)
			/* each layer keeps its input; one layer is re-materialised */
			a = Li * inflight * x->BA * x->h / (x->sp ? t : 1) * x->T + act_tok;
		else
			a = Li * inflight * act_tok;
		act = fmax(act, a);
	}
	params = P->p_stage * (wb / sh_w + gb / sh_g + ob / sh_o);
	if (torch && sc->zero >= 3)
		params += 2 * P->p_layer * 2; /* bf16 copies of the gathered units in flight */
	else if (sc->zero >= 3)
		params += 2 * P->p_layer * wb;
	if (x->fp8)
		params += 2 * (P->p_stage - x->V * x->h / t); /* fp8 weights + transposes */
	/* the logits of the last micro-batch: Megatron-Core's vocab-parallel
	 * cross-entropy keeps fp32 exponentials and writes the gradient into
	 * them, as fused cross-entropy kernels (flash-attn's, Liger's) do */
	buf = 4 * x->T * x->V / t;
	r->mem_params_gb = params / 1e9;
	r->mem_act_gb = act / 1e9;
	r->mem_buf_gb = buf / 1e9;
	r->mem_gb = (params + act + buf) / 1e9;
	r->hbm_gb = p->hbm_bytes * HBM_USABLE / 1e9;
	r->fits = r->mem_gb <= r->hbm_gb;
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

/* One micro-batch through a stage of L layers plus extra seconds of
 * stage-only work (embedding, logits and loss). */
struct mb_cost {
	double L, stage_c, gap_s, margin_s, tp_mb, tp_hid, ep_mb, cp_mb, cp_hid;
	double fsdp_mb, dp_rs_mb, fsdp_exp, t_mb;
};

/* extra_kernels: the launches of the stage-only work; gap_us: between two
 * back-to-back kernels (cvc_model_kernel_gap_us), charged per launch: the
 * time no operator model sees. */
static void mb_cost_of(const cvc_proj_scenario *sc, const struct proj_layer_cost *lc,
		       const struct step_cost *st, double L, double extra, double extra_kernels,
		       double gap_us, struct mb_cost *o)
{
	double dc = sc->dp * sc->cp;

	memset(o, 0, sizeof *o);
	o->L = L;
	o->stage_c = L * (lc->fwd_s + lc->bwd_s) + extra;
	o->gap_s = 1e-6 * gap_us * (L * lc->kernels + extra_kernels);
	o->margin_s = L * lc->tp_margin_s;
	o->tp_mb = L * (lc->tp_fwd_s + lc->tp_bwd_s);
	o->tp_hid = fmin(o->tp_mb, L * lc->tp_hid_s);
	o->ep_mb = L * (lc->ep_fwd_s + lc->ep_bwd_s);
	o->cp_mb = L * (lc->cp_fwd_s + lc->cp_bwd_s);
	o->cp_hid = fmin(o->cp_mb, L * (lc->attn_fwd_s + lc->attn_bwd_s));
	/* ZeRO-3 / FSDP: per layer all-gather of parameters before forward and
	 * backward (again for recompute), reduce-scatter of gradients after
	 * backward; prefetch hides layer i+1's gather under layer i */
	if (sc->zero >= 3 && dc > 1 && L > 0) {
		double ag = st->fsdp_ag, rs = st->fsdp_rs;
		double nag_b = sc->recompute == CVC_PROJ_RECOMP_FULL ? 2 : 1;
		double ef, eb, tot_b = nag_b * ag + rs;

		o->fsdp_mb = L * ag * (1 + nag_b);
		o->dp_rs_mb = L * rs;
		if (sc->dp_overlap) {
			ef = ag + (L - 1) * fmax(0, ag - lc->fwd_s);
			eb = tot_b + (L - 1) * fmax(0, tot_b - lc->bwd_s);
		} else {
			ef = L * ag;
			eb = L * tot_b;
		}
		o->fsdp_exp = ef + eb;
	}
	o->t_mb = o->stage_c + o->gap_s + o->margin_s + (o->tp_mb - o->tp_hid) + o->ep_mb +
		  (o->cp_mb - o->cp_hid) + o->fsdp_exp;
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
		invalid(r, "gpu has no tensor path for the dtype");
		return NULL;
	}
	return p;
}

/* One micro-batch through each stage: the slowest sets the pace (*best).
 * Returns -1 when the pipeline stages cannot be split. */
static int slowest_stage(const cvc_proj_scenario *sc, const struct proj_pricer *p,
			 const struct proj_layer_cost *lc, const struct step_cost *st,
			 struct mb_cost *best)
{
	double Ls[3], ext[3], extk[3], first, mid, last, pp = sc->pp;
	double gap = cvc_model_kernel_gap_us(p->ms_base);
	int ns = 0;
	struct mb_cost one;

	if (proj_stage_layers(sc, &first, &mid, &last))
		return -1;
	if (pp > 1) {
		Ls[ns] = first, extk[ns] = lc->first_kernels;
		ext[ns++] = lc->first_fwd_s + lc->first_bwd_s;
		if (pp > 2)
			Ls[ns] = mid, extk[ns] = 0, ext[ns++] = 0;
		Ls[ns] = last, extk[ns] = lc->last_kernels;
		ext[ns++] = lc->last_fwd_s + lc->last_bwd_s;
	} else {
		Ls[ns] = first, extk[ns] = lc->first_kernels + lc->last_kernels;
		ext[ns++] = lc->first_fwd_s + lc->first_bwd_s + lc->last_fwd_s + lc->last_bwd_s;
	}
	memset(best, 0, sizeof *best);
	for (int i = 0; i < ns; i++) {
		mb_cost_of(sc, lc, st, Ls[i], ext[i], extk[i], gap, &one);
		if (i == 0 || one.t_mb > best->t_mb)
			*best = one;
	}
	return 0;
}

/* The communication inside each of the m micro-batches' passes (b). */
static void microbatch_comm(cvc_proj_result *r, double m, const struct mb_cost *b)
{
	add_comm(r, CVC_PROJ_COMM_TP, m * b->tp_mb, m * b->tp_hid);
	add_comm(r, CVC_PROJ_COMM_EP, m * b->ep_mb, 0);
	add_comm(r, CVC_PROJ_COMM_CP, m * b->cp_mb, m * b->cp_hid);
	if (b->fsdp_mb + b->dp_rs_mb > 0) {
		/* split the exposed part between the gathers and the scatters in
		 * proportion to their time */
		double tot = b->fsdp_mb + b->dp_rs_mb, hid = tot - b->fsdp_exp;

		add_comm(r, CVC_PROJ_COMM_FSDP, m * b->fsdp_mb, m * hid * b->fsdp_mb / tot);
		add_comm(r, CVC_PROJ_COMM_DP, m * b->dp_rs_mb, m * hid * b->dp_rs_mb / tot);
	}
}

/* Pipeline: 1F1B, interleaved with v chunks per stage: the bubble and the
 * activation transfers. */
static void pipeline_comm(cvc_proj_result *r, const cvc_proj_scenario *sc,
			  const struct step_cost *st, double m, double t_mb)
{
	double pp = sc->pp, v = sc->vpp;

	r->bubble_s = pp > 1 ? (pp - 1) / v * t_mb : 0;
	if (pp > 1) {
		double one = st->pp_one;
		double total = 2 * v * m * one;
		/* fill and drain cross every stage boundary on the critical path;
		 * steady-state transfers run under other micro-batches */
		double exposed = fmin(total, 2 * (pp * v - 1) * one);

		add_comm(r, CVC_PROJ_COMM_PP, total, total - exposed);
	}
}

/* Once per step (or every H steps): the gradient sync of ZeRO 0-2 and of
 * hybrid ZeRO-3, and the exchange between clusters.  L: layers of the
 * slowest stage. */
static void gradient_comm(cvc_proj_result *r, const cvc_proj_scenario *sc,
			  const struct proj_layer_cost *lc, const struct step_cost *st,
			  const struct params *P, double L)
{
	double dc = sc->dp * sc->cp;
	double H = sc->local_sgd_h >= 1 ? sc->local_sgd_h : 1;
	double C = sc->clusters >= 1 ? sc->clusters : 1;

	/* data parallel gradient sync (ZeRO 0-2), every H steps with local
	 * SGD in one cluster */
	if (sc->zero < 3 && dc > 1) {
		double tot = st->dp_tot, last = st->dp_last, ag = st->dp_ag, hid, win, amort;

		/* buckets reduce while the last micro-batch's backward still runs;
		 * the last bucket is ready only at the end */
		win = L * lc->bwd_s;
		hid = sc->dp_overlap ? fmin(fmax(0, tot - last), win) : 0;
		if (sc->dp_overlap) /* parameter gather under the next forward */
			hid += fmin(ag, L * lc->fwd_s);
		amort = C > 1 ? 1 : H;
		add_comm(r, CVC_PROJ_COMM_DP, (tot + ag) / amort, hid / amort);
	}
	/* hybrid ZeRO-3: the gradient shards all-reduced across the replicas
	 * while the last micro-batch's backward runs */
	if (st->hsdp_tot > 0) {
		double hid = sc->dp_overlap ? fmin(fmax(0, st->hsdp_tot - st->hsdp_last),
						   L * lc->bwd_s) : 0;

		add_comm(r, CVC_PROJ_COMM_DP, st->hsdp_tot, hid);
	}
	/* multi-cluster: clusters exchange full gradients over the slow link,
	 * every H steps (local SGD); not overlapped */
	if (C > 1) {
		double bytes = P->p_total * P->gbytes;
		double bw = sc->inter_cluster_gbps * 1e9;
		double xc = bw > 0 ? 2 * (C - 1) / C * bytes / bw / H : INFINITY;

		add_comm(r, CVC_PROJ_COMM_XC, xc, 0);
	}
}

/* Totals of the step from its communication (r) and the slowest stage's
 * micro-batch (b), m of them. */
static void step_totals(cvc_proj_result *r, const cvc_proj_scenario *sc,
			const struct step_cost *st, double m, const struct mb_cost *b)
{
	double opt = st->opt + st->wcast, hidden_total;

	for (int j = 0; j < CVC_PROJ_COMM_N; j++) {
		r->comm_s += r->comm_type_s[j];
		r->hidden_s += r->hidden_type_s[j];
		r->exposed_s += r->exposed_type_s[j];
	}
	hidden_total = r->hidden_s;
	r->contention_s = sc->contention * hidden_total + m * b->margin_s;
	r->gaps_s = m * b->gap_s;
	r->compute_s = m * (b->stage_c + b->gap_s) + opt + r->contention_s;
	/* exposed per micro-batch sits inside t_mb: the step is the pipeline
	 * (m t_mb + bubble) plus what follows it */
	r->step_s = r->compute_s + r->exposed_s + r->bubble_s;
}

/* FLOPs, MFU, throughput and economics of a priced step (peak: the GPU's
 * dense peak for the dtype). */
static void flops_and_costs(cvc_proj_result *r, const cvc_proj_scenario *sc,
			    const struct shape *x, const struct proj_pricer *p, double peak)
{
	double s = x->s, h = x->h, lay = sc->layers;
	double ffn_act = x->ffw * (x->moe ? x->k : 1) + (x->moe ? h * x->E : 0);
	double gemm_l = 2 * s * (h * x->qkv + h * h + ffn_act);
	double attn_l = 4 * s * s * h;
	double logits = 2 * s * h * x->V;
	double per_seq = 3 * (lay * (gemm_l + attn_l) + logits);
	double extra = sc->recompute == CVC_PROJ_RECOMP_FULL ? lay * (gemm_l + attn_l)
		     : (sc->recompute == CVC_PROJ_RECOMP_SELECTIVE && x->unfused)
			     ? lay * attn_l : 0;
	double tokens = sc->global_batch * s;
	double power = sc->gpu_power_w > 0 ? sc->gpu_power_w : p->power_w;
	double secs;

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
	r->comm_share = r->comm_s / (r->compute_s + r->comm_s);
	r->exposed_share = r->exposed_s / r->step_s;
}

void proj_evaluate(cvc_proj_ctx *ctx, const cvc_proj_scenario *sc, cvc_proj_result *r)
{
	const struct proj_pricer *p;
	const struct proj_layer_cost *lc;
	struct sink k;
	struct shape x;
	struct params P;
	struct step_cost st;
	struct mb_cost best;
	double m, L;
	struct proj_unc su;

	result_init(r);
	memset(&su, 0, sizeof su);
	if (!(p = usable_pricer(ctx, sc, r)))
		return;
	shape_of(sc, &x);
	m = sc->global_batch / (sc->dp * sc->micro_batch);
	L = stage_max_layers(sc);

	/* the operators, priced: per layer (cached) and per step */
	sink_init(&k, sc, p, NULL, NULL);
	if (!ctx->no_intervals)
		k.unc = &su;
	lc = layer_cost(ctx, &k, &x);
	params_of(sc, &x, L, &P);
	step_ops(&k, sc, &x, &P, m, L, &st);

	if (slowest_stage(sc, p, lc, &st, &best)) {
		invalid(r, "pipeline stages cannot be split");
		return;
	}
	L = best.L;
	microbatch_comm(r, m, &best);
	pipeline_comm(r, sc, &st, m, best.t_mb);
	gradient_comm(r, sc, lc, &st, &P, L);
	step_totals(r, sc, &st, m, &best);
	mem_of(sc, &x, &P, p, m, r);
	flops_and_costs(r, sc, &x, p, p->peak_flops[sc->dtype]);

	/* how sure: intervals and warnings */
	if (k.unc) {
		struct proj_interval_in in;

		in.layer = &lc->unc;
		in.layer_w = m * L;
		in.step = &su;
		in.bubble_f = m * best.t_mb > 0 ? 1 + r->bubble_s / (m * best.t_mb) : 1;
		in.step_compute_s = st.opt + st.wcast;
		in.gap_sigma = cvc_model_kernel_gap_sigma(p->ms_base);
		proj_intervals(&in, r);
	}
}
