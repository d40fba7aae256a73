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
	double b, s, h, a, g, f, V, E, k, t, c, e, T, dh, qkv, BA, ffw, Tm, gpn;
	int sp, moe, swiglu, dtype, recompute, unfused;
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
	x->sp = sc->sp && sc->tp > 1;
	x->moe = sc->experts > 1;
	x->swiglu = sc->ffn_type == CVC_PROJ_FFN_SWIGLU;
	x->dtype = sc->dtype;
	x->recompute = sc->recompute;
	x->unfused = sc->attention == CVC_PROJ_ATTN_UNFUSED;
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
	int dtype;
	double scale_hbm, scale_intra, scale_inter;
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
	/* equal to the pricer's: pricers are keyed by these scale factors */
	k->scale_hbm = sc->scale_hbm_bw;
	k->scale_intra = sc->scale_intra_bw;
	k->scale_inter = sc->scale_inter_bw;
}

static double put(struct sink *k, const cvc_proj_op *o)
{
	if (k->p)
		return proj_op_s(k->p, o);
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

static double op_gemm(struct sink *k, double m, double n, double kk, double batch, double count,
		      int stage)
{
	cvc_proj_op o;

	op_init(&o, CVC_PROJ_OP_GEMM, count, stage);
	o.dtype = k->dtype;
	o.m = i64(m), o.n = i64(n), o.k = i64(kk), o.b = i64(batch);
	return put(k, &o);
}

static double op_attn(struct sink *k, double batch, double heads, double kv_heads, double sq,
		      double skv, double head_dim, int backward, double count)
{
	cvc_proj_op o;

	op_init(&o, CVC_PROJ_OP_ATTN, count, CVC_PROJ_STAGE_ALL);
	o.dtype = k->dtype;
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
 * cb times per step. */
static void gemm3(struct sink *k, double m, double n, double kk, double cf, double cb, int stage,
		  double *fwd, double *bwd)
{
	double dgrad, wgrad;

	*fwd += op_gemm(k, m, n, kk, 1, cf, stage);
	dgrad = op_gemm(k, m, kk, n, 1, cb, stage);
	wgrad = op_gemm(k, kk, n, m, 1, cb, stage);
	*bwd += dgrad + wgrad;
}

/*
 * The operators of one layer (and of the first and last stage) for shape
 * x, priced into lc.  M micro-batches run through L layers of the busiest
 * stage per step; they only set the listed counts.
 */
static void layer_ops(struct sink *k, const struct shape *x, double M, double L,
		      struct proj_layer_cost *lc)
{
	int full = x->recompute == CVC_PROJ_RECOMP_FULL;
	/* forward again under full recomputation */
	double cf = M * L * (full ? 2 : 1), cb = M * L;
	/* each per-layer collective runs twice forward and twice backward,
	 * the backward pair again under full recomputation */
	double per = M * L * (2 + 2 * (full ? 2 : 1));
	double fwd = 0, bwd = 0, gf = 0, gb = 0, af = 0, ab = 0, mf = 0, mb = 0, rc_extra = 0;
	double Th = x->T * x->h / (x->sp ? x->t : 1);
	double pn_t = fmin(x->t, x->gpn);

	/* GEMMs: QKV, attention output projection, FFN up(+gate), down */
	gemm3(k, x->T, x->qkv / x->t, x->h, cf, cb, 0, &gf, &gb);
	gemm3(k, x->T, x->h, x->h / x->t, cf, cb, 0, &gf, &gb);
	if (x->moe) {
		/* router, then the experts as one GEMM over the T*k routed
		 * tokens of this rank (balanced routing) */
		gemm3(k, x->T, x->E, x->h, cf, cb, 0, &gf, &gb);
	}
	gemm3(k, x->Tm, (x->swiglu ? 2 : 1) * x->f / x->t, x->h, cf, cb, 0, &gf, &gb);
	gemm3(k, x->Tm, x->h, x->f / x->t, cf, cb, 0, &gf, &gb);

	/* attention core */
	{
		double hl = x->a / x->t, gl = fmax(1, x->g / x->t), sq = x->s / x->c;

		if (x->unfused) {
			double bt = x->b * hl, el = bt * sq * x->s;
			/* selective recomputation re-runs the unfused core */
			double ca = cf + (x->recompute == CVC_PROJ_RECOMP_SELECTIVE ? cb : 0);
			double f1, f2, f3, f4, b1, b2, b3, b4, b5;

			f1 = op_gemm(k, sq, x->s, x->dh, bt, ca, 0);
			f2 = op_gemm(k, sq, x->dh, x->s, bt, ca, 0);
			f3 = op_mem(k, CVC_MODEL_MEM_NORM, 2 * x->BA * el, ca, 0); /* scale-mask-softmax */
			f4 = op_mem(k, CVC_MODEL_MEM_ELEMENTWISE, (2 * x->BA + 1) * el, ca, 0); /* dropout */
			af = f1 + f2 + f3 + f4;
			b1 = op_gemm(k, sq, x->dh, x->s, bt, 2 * cb, 0);
			b2 = op_gemm(k, x->s, x->dh, sq, bt, cb, 0);
			b3 = op_gemm(k, sq, x->s, x->dh, bt, cb, 0);
			b4 = op_mem(k, CVC_MODEL_MEM_NORM, 3 * x->BA * el, cb, 0);
			b5 = op_mem(k, CVC_MODEL_MEM_ELEMENTWISE, (2 * x->BA + 1) * el, cb, 0);
			ab = 2 * b1 + b2 + b3 + b4 + b5;
		} else {
			af = op_attn(k, x->b, hl, gl, sq, x->s, x->dh, 0, cf);
			ab = op_attn(k, x->b, hl, gl, sq, x->s, x->dh, 1, cb);
		}
	}

	/* memory-bound: 2 norms, 2 bias-dropout-residual, activation, rope */
	{
		double f1, f2, f3, b1, b2, b3;

		f1 = op_mem(k, CVC_MODEL_MEM_NORM, 2 * x->BA * Th, 2 * cf, 0);
		f2 = op_mem(k, CVC_MODEL_MEM_ELEMENTWISE, (3 * x->BA + 1) * Th, 2 * cf, 0);
		f3 = op_mem(k, CVC_MODEL_MEM_ELEMENTWISE,
			    (x->swiglu ? 3 : 2) * x->BA * x->Tm * x->f / x->t, cf, 0);
		mf = 2 * f1 + 2 * f2 + f3;
		b1 = op_mem(k, CVC_MODEL_MEM_NORM, 4 * x->BA * Th, 2 * cb, 0);
		b2 = op_mem(k, CVC_MODEL_MEM_ELEMENTWISE, 2 * (3 * x->BA + 1) * Th, 2 * cb, 0);
		b3 = op_mem(k, CVC_MODEL_MEM_ELEMENTWISE,
			    2 * (x->swiglu ? 3 : 2) * x->BA * x->Tm * x->f / x->t, cb, 0);
		mb = 2 * b1 + 2 * b2 + b3;
	}
	if (x->swiglu) { /* Llama family: rotary embedding on q and k */
		double rb = 2 * x->BA * x->T * (x->a + x->g) * x->dh / x->t;

		mf += op_mem(k, CVC_MODEL_MEM_ELEMENTWISE, rb, cf, 0);
		mb += op_mem(k, CVC_MODEL_MEM_ELEMENTWISE, rb, cb, 0);
	}

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

	/* tensor parallel: 2 all-reduces per layer each way, or with sequence
	 * parallelism 2 all-gathers + 2 reduce-scatters of the same tensor */
	if (x->t > 1) {
		double msg = x->T * x->h * x->BA, one;

		if (x->sp) {
			double ag = op_coll(k, CVC_MODEL_ALLGATHER, CVC_PROJ_COMM_TP, msg, x->t, pn_t,
					    per);
			double rs = op_coll(k, CVC_MODEL_REDUCESCATTER, CVC_PROJ_COMM_TP, msg, x->t,
					    pn_t, per);

			one = ag + rs;
		} else {
			one = op_coll(k, CVC_MODEL_ALLREDUCE, CVC_PROJ_COMM_TP, msg, x->t, pn_t, per);
		}
		lc->tp_fwd_s = 2 * one;
		lc->tp_bwd_s = 2 * one * (full ? 2 : 1);
	}
	/* MoE: dispatch + combine all-to-all each way */
	if (x->moe && x->e > 1) {
		double pn = fmin(x->e, fmax(1, x->gpn / (x->t * x->c)));
		double one = op_coll(k, CVC_MODEL_ALLTOALL, CVC_PROJ_COMM_EP, x->Tm * x->h * x->BA,
				     x->e, pn, per);

		lc->ep_fwd_s = 2 * one;
		lc->ep_bwd_s = 2 * one * (full ? 2 : 1);
	}
	/* context parallel: ring exchange of K and V blocks, c-1 steps forward,
	 * twice that backward, again under full recomputation */
	if (x->c > 1) {
		double kv = 2 * x->T * fmax(1, x->g / x->t) * x->dh * x->BA;
		double one = (x->c - 1) *
			     op_coll(k, CVC_MODEL_SENDRECV, CVC_PROJ_COMM_CP, kv, 2,
				     x->t * x->c <= x->gpn ? 2 : 1,
				     M * L * (x->c - 1) * (3 + (full ? 1 : 0)));

		lc->cp_fwd_s = one;
		lc->cp_bwd_s = 2 * one + (full ? one : 0);
	}
	/* first stage: embedding lookup and its scatter-add gradient */
	lc->first_fwd_s = op_mem(k, CVC_MODEL_MEM_GATHER, 2 * x->BA * x->T * x->h, M,
				 CVC_PROJ_STAGE_FIRST);
	lc->first_bwd_s = op_mem(k, CVC_MODEL_MEM_GATHER, 3 * x->BA * x->T * x->h, M,
				 CVC_PROJ_STAGE_FIRST);
	/* last stage: final norm, logits GEMM, softmax cross-entropy (fp32) */
	{
		double f = 0, b = 0, tv = x->T * x->V / x->t, f1, f2, b1, b2;
		int st = CVC_PROJ_STAGE_LAST;

		gemm3(k, x->T, x->V / x->t, x->h, M, M, st, &f, &b);
		f1 = op_mem(k, CVC_MODEL_MEM_NORM, 2 * x->BA * Th, M, st);
		f2 = op_mem(k, CVC_MODEL_MEM_NORM, (x->BA + 4) * tv, M, st);
		f += f1 + f2;
		b1 = op_mem(k, CVC_MODEL_MEM_NORM, 4 * x->BA * Th, M, st);
		b2 = op_mem(k, CVC_MODEL_MEM_ELEMENTWISE, (4 + x->BA) * tv, M, st);
		b += b1 + b2;
		lc->last_fwd_s = f;
		lc->last_bwd_s = b;
	}
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
	double key[20] = {1 + k->p->id, x->b, x->s, x->h, x->a, x->g, x->f, x->V, x->E, x->k,
			  x->t, x->c, x->e, x->gpn, x->sp, x->swiglu, x->dtype, x->recompute,
			  x->unfused, 0};
	struct proj_layer_cost *lc;

	lc = &ctx->cc.e[key_hash(key, 20) % PROJ_CC_SLOTS];
	if (memcmp(lc->key, key, sizeof key) == 0)
		return lc;
	memset(lc, 0, sizeof *lc);
	layer_ops(k, x, 1, 1, lc); /* counts unused when pricing */
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
	double opt;                /* optimizer update */
};

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
	 * backward (again for recompute), reduce-scatter of gradients */
	if (sc->zero >= 3 && dc > 1) {
		double pn = fmin(dc, fmax(1, gpn / t));
		double nag_b = sc->recompute == CVC_PROJ_RECOMP_FULL ? 2 : 1;

		st->fsdp_ag = op_coll(k, CVC_MODEL_ALLGATHER, CVC_PROJ_COMM_FSDP, P->p_layer * P->wb,
				      dc, pn, M * L * (1 + nag_b));
		st->fsdp_rs = op_coll(k, CVC_MODEL_REDUCESCATTER, CVC_PROJ_COMM_DP,
				      P->p_layer * P->gbytes, dc, pn, M * L);
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
		double tt, ll;

		if (dcl > 1) {
			int kind = sc->zero >= 1 ? CVC_MODEL_REDUCESCATTER : CVC_MODEL_ALLREDUCE;

			bucketed(k, kind, (P->p_stage - L * P->p_exp) * P->gbytes, bucket, dcl, pn,
				 count, &tt, &ll);
			st->dp_tot += tt;
			st->dp_last = ll;
			if (P->p_exp > 0 && dcl / e > 1) {
				bucketed(k, kind, L * P->p_exp * P->gbytes, bucket, dcl / e, pn_e,
					 count, &tt, &ll);
				st->dp_tot += tt;
			}
			if (sc->zero >= 1) /* updated parameter shards gathered back */
				st->dp_ag = op_coll(k, CVC_MODEL_ALLGATHER, CVC_PROJ_COMM_DP,
						    P->p_stage * P->wb, dcl, pn, count);
		}
	}
	/* optimizer: weights, gradients and states read and written */
	{
		double shard = sc->zero >= 1 ? dc : 1;

		st->opt = op_mem(k, CVC_MODEL_MEM_OPTIMIZER,
				 P->p_stage / shard * (sc->optimizer == CVC_PROJ_ADAM ? 30 : 20), 1,
				 CVC_PROJ_STAGE_ALL);
	}
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
	double L, stage_c, tp_mb, tp_hid, ep_mb, cp_mb, cp_hid;
	double fsdp_mb, dp_rs_mb, fsdp_exp, t_mb;
};

static void mb_cost_of(const cvc_proj_scenario *sc, const struct proj_layer_cost *lc,
		       const struct step_cost *st, double L, double extra, struct mb_cost *o)
{
	double dc = sc->dp * sc->cp;

	memset(o, 0, sizeof *o);
	o->L = L;
	o->stage_c = L * (lc->fwd_s + lc->bwd_s) + extra;
	o->tp_mb = L * (lc->tp_fwd_s + lc->tp_bwd_s);
	o->tp_hid = sc->tp_overlap ? fmin(o->tp_mb, L * (lc->fwd_gemm_s + lc->bwd_gemm_s)) : 0;
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
	o->t_mb = o->stage_c + (o->tp_mb - o->tp_hid) + o->ep_mb + (o->cp_mb - o->cp_hid) +
		  o->fsdp_exp;
}

void proj_evaluate(cvc_proj_ctx *ctx, const cvc_proj_scenario *sc, cvc_proj_result *r)
{
	const struct proj_pricer *p;
	const struct proj_layer_cost *lc;
	struct sink k;
	struct shape x;
	struct params P;
	struct step_cost st;
	double t, pp, v, d, c, m, L, dc, peak;
	double stage_c, tp_mb, tp_hid, ep_mb, cp_mb, cp_hid, fsdp_mb, fsdp_exp;
	double dp_rs_mb, t_mb, hidden_total;
	double H = sc->local_sgd_h >= 1 ? sc->local_sgd_h : 1;
	double C = sc->clusters >= 1 ? sc->clusters : 1;

	memset(r, 0, sizeof *r);
	r->valid = 1;
	r->reason = "";
	r->half_tokens_per_s = NAN;
	r->marginal_tokens_per_gpu = NAN;

	p = proj_ctx_pricer(ctx, sc);
	if (!p) {
		invalid(r, "models could not be built");
		return;
	}
	if (!p->known) {
		invalid(r, "gpu not in the hardware catalog");
		return;
	}
	peak = p->peak_flops[sc->dtype];
	if (!(peak > 0)) {
		invalid(r, "gpu has no tensor path for the dtype");
		return;
	}
	shape_of(sc, &x);
	t = sc->tp, pp = sc->pp, v = sc->vpp, d = sc->dp, c = sc->cp;
	dc = d * c;
	m = sc->global_batch / (d * sc->micro_batch);
	L = stage_max_layers(sc);

	/* the operators, priced: per layer (cached) and per step */
	sink_init(&k, sc, p, NULL, NULL);
	lc = layer_cost(ctx, &k, &x);
	params_of(sc, &x, L, &P);
	step_ops(&k, sc, &x, &P, m, L, &st);

	/* ---- one micro-batch through each stage: the slowest sets the pace ---- */
	{
		double Ls[3], ext[3], first, mid, last;
		int ns = 0;
		struct mb_cost best, one;

		if (proj_stage_layers(sc, &first, &mid, &last)) {
			invalid(r, "pipeline stages cannot be split");
			return;
		}
		if (pp > 1) {
			Ls[ns] = first, ext[ns++] = lc->first_fwd_s + lc->first_bwd_s;
			if (pp > 2)
				Ls[ns] = mid, ext[ns++] = 0;
			Ls[ns] = last, ext[ns++] = lc->last_fwd_s + lc->last_bwd_s;
		} else {
			Ls[ns] = first, ext[ns++] = lc->first_fwd_s + lc->first_bwd_s +
						     lc->last_fwd_s + lc->last_bwd_s;
		}
		memset(&best, 0, sizeof best);
		for (int i = 0; i < ns; i++) {
			mb_cost_of(sc, lc, &st, Ls[i], ext[i], &one);
			if (i == 0 || one.t_mb > best.t_mb)
				best = one;
		}
		stage_c = best.stage_c;
		tp_mb = best.tp_mb, tp_hid = best.tp_hid, ep_mb = best.ep_mb;
		cp_mb = best.cp_mb, cp_hid = best.cp_hid;
		fsdp_mb = best.fsdp_mb, dp_rs_mb = best.dp_rs_mb, fsdp_exp = best.fsdp_exp;
		t_mb = best.t_mb;
		L = best.L;
	}

	add_comm(r, CVC_PROJ_COMM_TP, m * tp_mb, m * tp_hid);
	add_comm(r, CVC_PROJ_COMM_EP, m * ep_mb, 0);
	add_comm(r, CVC_PROJ_COMM_CP, m * cp_mb, m * cp_hid);
	if (fsdp_mb + dp_rs_mb > 0) {
		/* split the exposed part between the gathers and the scatters in
		 * proportion to their time */
		double tot = fsdp_mb + dp_rs_mb, hid = tot - fsdp_exp;

		add_comm(r, CVC_PROJ_COMM_FSDP, m * fsdp_mb, m * hid * fsdp_mb / tot);
		add_comm(r, CVC_PROJ_COMM_DP, m * dp_rs_mb, m * hid * dp_rs_mb / tot);
	}

	/* ---- pipeline: 1F1B, interleaved with v chunks per stage ---- */
	r->bubble_s = pp > 1 ? (pp - 1) / v * t_mb : 0;
	if (pp > 1) {
		double one = st.pp_one;
		double total = 2 * v * m * one;
		/* fill and drain cross every stage boundary on the critical path;
		 * steady-state transfers run under other micro-batches */
		double exposed = fmin(total, 2 * (pp * v - 1) * one);

		add_comm(r, CVC_PROJ_COMM_PP, total, total - exposed);
	}

	/* ---- data parallel gradient sync (ZeRO 0-2), every H steps with
	 * local SGD in one cluster ---- */
	if (sc->zero < 3 && dc > 1) {
		double tot = st.dp_tot, last = st.dp_last, ag = st.dp_ag, hid, win, amort;

		/* buckets reduce while the last micro-batch's backward still runs;
		 * the last bucket is ready only at the end */
		win = L * lc->bwd_s;
		hid = sc->dp_overlap ? fmin(fmax(0, tot - last), win) : 0;
		if (sc->dp_overlap) /* parameter gather under the next forward */
			hid += fmin(ag, L * lc->fwd_s);
		amort = C > 1 ? 1 : H;
		add_comm(r, CVC_PROJ_COMM_DP, (tot + ag) / amort, hid / amort);
	}
	/* multi-cluster: clusters exchange full gradients over the slow link,
	 * every H steps (local SGD); not overlapped */
	if (C > 1) {
		double bytes = P.p_total * P.gbytes;
		double bw = sc->inter_cluster_gbps * 1e9;
		double xc = bw > 0 ? 2 * (C - 1) / C * bytes / bw / H : INFINITY;

		add_comm(r, CVC_PROJ_COMM_XC, xc, 0);
	}

	/* ---- totals ---- */
	{
		double opt = st.opt;

		hidden_total = 0;
		for (int j = 0; j < CVC_PROJ_COMM_N; j++) {
			r->comm_s += r->comm_type_s[j];
			r->hidden_s += r->hidden_type_s[j];
			r->exposed_s += r->exposed_type_s[j];
		}
		hidden_total = r->hidden_s;
		r->contention_s = sc->contention * hidden_total;
		r->compute_s = m * stage_c + opt + r->contention_s;
		/* exposed per micro-batch sits inside t_mb: the step is the
		 * pipeline (m t_mb + bubble) plus what follows it */
		r->step_s = r->compute_s + r->exposed_s + r->bubble_s;
	}

	/* ---- memory per GPU ---- */
	{
		double sh_w = sc->zero >= 3 ? dc : 1, sh_g = sc->zero >= 2 ? dc : 1,
		       sh_o = sc->zero >= 1 ? dc : 1;
		double sl = x.s / c, base = sl * x.b * x.h;
		double mlpf = x.f * (x.swiglu ? 1.5 : 1) * (x.moe ? x.k : 1) / (4 * x.h);
		double attn_sq = 5 * x.a * sl * x.s / x.h;
		double act_layer, act_stored, inflight, mem;

		if (sc->recompute != CVC_PROJ_RECOMP_NONE || !x.unfused)
			attn_sq = 0;
		act_layer = base * ((x.sp ? 10 / t : 10) + (8 + 16 * mlpf) / t + attn_sq / t);
		act_stored = sc->recompute == CVC_PROJ_RECOMP_FULL
				     ? 2 * base / (x.sp ? t : 1)
				     : act_layer;
		inflight = fmin(m, pp) * (v > 1 ? 1 + (pp - 1) / (pp * v) : 1);
		mem = P.p_stage * (P.wb / sh_w + P.gbytes / sh_g + P.ob / sh_o);
		mem += L * act_stored * inflight;
		if (sc->recompute == CVC_PROJ_RECOMP_FULL)
			mem += act_layer; /* one layer re-materialised at a time */
		mem += 2 * 4 * x.T * x.V / t; /* fp32 logits and their gradient */
		if (sc->zero >= 3)
			mem += 2 * P.p_layer * P.wb; /* gathered layers in flight */
		r->mem_gb = mem / 1e9;
		r->hbm_gb = p->hbm_bytes * HBM_USABLE / 1e9;
		r->fits = r->mem_gb <= r->hbm_gb;
	}

	/* ---- FLOPs, MFU, throughput, economics ---- */
	{
		double s = x.s, h = x.h, lay = sc->layers;
		double ffn_act = x.ffw * (x.moe ? x.k : 1) + (x.moe ? h * x.E : 0);
		double gemm_l = 2 * s * (h * x.qkv + h * h + ffn_act);
		double attn_l = 4 * s * s * h;
		double logits = 2 * s * h * x.V;
		double per_seq = 3 * (lay * (gemm_l + attn_l) + logits);
		double extra = sc->recompute == CVC_PROJ_RECOMP_FULL ? lay * (gemm_l + attn_l)
			     : (sc->recompute == CVC_PROJ_RECOMP_SELECTIVE && x.unfused)
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
}
