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

/* One GEMM forward and its two backward GEMMs (dgrad, wgrad). */
static void gemm3(const struct proj_pricer *p, int dt, double m, double n, double k,
		  double *fwd, double *bwd)
{
	*fwd += proj_gemm_s(p, dt, m, n, k, 1);
	*bwd += proj_gemm_s(p, dt, m, k, n, 1) + proj_gemm_s(p, dt, k, n, m, 1);
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

/* Per-layer costs for a shape; cached in the ctx because a sweep over GPU
 * counts or batch sizes reuses the same layer shapes thousands of times. */
static const struct proj_layer_cost *layer_cost(cvc_proj_ctx *ctx, const struct proj_pricer *p,
						const struct shape *x)
{
	double key[20] = {1 + p->id, x->b, x->s, x->h, x->a, x->g, x->f, x->V, x->E, x->k,
			  x->t, x->c, x->e, x->gpn, x->sp, x->swiglu, x->dtype, x->recompute,
			  x->unfused, 0};
	struct proj_layer_cost *lc;
	int dt = x->dtype;
	double fwd = 0, bwd = 0, gf = 0, gb = 0, af = 0, ab = 0, mf = 0, mb = 0, rc_extra = 0;
	double Th = x->T * x->h / (x->sp ? x->t : 1);
	double pn_t = fmin(x->t, x->gpn);

	lc = &ctx->cc.e[key_hash(key, 20) % PROJ_CC_SLOTS];
	if (memcmp(lc->key, key, sizeof key) == 0)
		return lc;
	memset(lc, 0, sizeof *lc);

	/* GEMMs: QKV, attention output projection, FFN up(+gate), down */
	gemm3(p, dt, x->T, x->qkv / x->t, x->h, &gf, &gb);
	gemm3(p, dt, x->T, x->h, x->h / x->t, &gf, &gb);
	if (x->moe) {
		/* router, then the experts as one GEMM over the T*k routed
		 * tokens of this rank (balanced routing) */
		gemm3(p, dt, x->T, x->E, x->h, &gf, &gb);
	}
	gemm3(p, dt, x->Tm, (x->swiglu ? 2 : 1) * x->f / x->t, x->h, &gf, &gb);
	gemm3(p, dt, x->Tm, x->h, x->f / x->t, &gf, &gb);

	/* attention core */
	{
		double hl = x->a / x->t, gl = fmax(1, x->g / x->t), sq = x->s / x->c;

		if (x->unfused) {
			double bt = x->b * hl, el = bt * sq * x->s;

			af = proj_gemm_s(p, dt, sq, x->s, x->dh, bt) +
			     proj_gemm_s(p, dt, sq, x->dh, x->s, bt) +
			     proj_mem_s(p, PROJ_MEM_NORM, 2 * x->BA * el) +      /* scale-mask-softmax */
			     proj_mem_s(p, PROJ_MEM_ELEMENTWISE, (2 * x->BA + 1) * el); /* dropout */
			ab = 2 * proj_gemm_s(p, dt, sq, x->dh, x->s, bt) +
			     proj_gemm_s(p, dt, x->s, x->dh, sq, bt) +
			     proj_gemm_s(p, dt, sq, x->s, x->dh, bt) +
			     proj_mem_s(p, PROJ_MEM_NORM, 3 * x->BA * el) +
			     proj_mem_s(p, PROJ_MEM_ELEMENTWISE, (2 * x->BA + 1) * el);
		} else {
			af = proj_attn_s(p, dt, x->b, hl, gl, sq, x->s, x->dh, 0);
			ab = proj_attn_s(p, dt, x->b, hl, gl, sq, x->s, x->dh, 1);
		}
	}

	/* memory-bound: 2 norms, 2 bias-dropout-residual, activation, rope */
	mf = 2 * proj_mem_s(p, PROJ_MEM_NORM, 2 * x->BA * Th) +
	     2 * proj_mem_s(p, PROJ_MEM_ELEMENTWISE, (3 * x->BA + 1) * Th) +
	     proj_mem_s(p, PROJ_MEM_ELEMENTWISE,
			(x->swiglu ? 3 : 2) * x->BA * x->Tm * x->f / x->t);
	mb = 2 * proj_mem_s(p, PROJ_MEM_NORM, 4 * x->BA * Th) +
	     2 * proj_mem_s(p, PROJ_MEM_ELEMENTWISE, 2 * (3 * x->BA + 1) * Th) +
	     proj_mem_s(p, PROJ_MEM_ELEMENTWISE,
			2 * (x->swiglu ? 3 : 2) * x->BA * x->Tm * x->f / x->t);
	if (x->swiglu) { /* Llama family: rotary embedding on q and k */
		double rb = 2 * x->BA * x->T * (x->a + x->g) * x->dh / x->t;

		mf += proj_mem_s(p, PROJ_MEM_ELEMENTWISE, rb);
		mb += proj_mem_s(p, PROJ_MEM_ELEMENTWISE, rb);
	}

	fwd = gf + af + mf;
	if (x->recompute == CVC_PROJ_RECOMP_FULL)
		rc_extra = fwd;
	else if (x->recompute == CVC_PROJ_RECOMP_SELECTIVE && x->unfused)
		rc_extra = af; /* core attention only (Korthikanti et al. 2022) */
	bwd = gb + ab + mb + rc_extra;

	lc->fwd_s = fwd;
	lc->bwd_s = bwd;
	lc->fwd_gemm_s = gf;
	lc->bwd_gemm_s = gb + (x->recompute == CVC_PROJ_RECOMP_FULL ? gf : 0);
	lc->attn_fwd_s = af;
	lc->attn_bwd_s = ab;

	/* tensor parallel: 2 all-reduces per layer each way, or with sequence
	 * parallelism 2 all-gathers + 2 reduce-scatters of the same tensor */
	if (x->t > 1) {
		double msg = x->T * x->h * x->BA, one;

		if (x->sp)
			one = proj_coll_s(p, PROJ_AG, msg, x->t, pn_t) +
			      proj_coll_s(p, PROJ_RS, msg, x->t, pn_t);
		else
			one = proj_coll_s(p, PROJ_AR, msg, x->t, pn_t);
		lc->tp_fwd_s = 2 * one;
		lc->tp_bwd_s = 2 * one * (x->recompute == CVC_PROJ_RECOMP_FULL ? 2 : 1);
	}
	/* MoE: dispatch + combine all-to-all each way */
	if (x->moe && x->e > 1) {
		double pn = fmin(x->e, fmax(1, x->gpn / (x->t * x->c)));
		double one = proj_coll_s(p, PROJ_A2A, x->Tm * x->h * x->BA, x->e, pn);

		lc->ep_fwd_s = 2 * one;
		lc->ep_bwd_s = 2 * one * (x->recompute == CVC_PROJ_RECOMP_FULL ? 2 : 1);
	}
	/* context parallel: ring exchange of K and V blocks, c-1 steps */
	if (x->c > 1) {
		double kv = 2 * x->T * fmax(1, x->g / x->t) * x->dh * x->BA;
		double one = (x->c - 1) *
			     proj_coll_s(p, PROJ_P2P, kv, 2, x->t * x->c <= x->gpn ? 2 : 1);

		lc->cp_fwd_s = one;
		lc->cp_bwd_s = 2 * one + (x->recompute == CVC_PROJ_RECOMP_FULL ? one : 0);
	}
	/* first stage: embedding lookup and its scatter-add gradient */
	lc->first_fwd_s = proj_mem_s(p, PROJ_MEM_GATHER, 2 * x->BA * x->T * x->h);
	lc->first_bwd_s = proj_mem_s(p, PROJ_MEM_GATHER, 3 * x->BA * x->T * x->h);
	/* last stage: final norm, logits GEMM, softmax cross-entropy (fp32) */
	{
		double f = 0, b = 0, tv = x->T * x->V / x->t;

		gemm3(p, dt, x->T, x->V / x->t, x->h, &f, &b);
		f += proj_mem_s(p, PROJ_MEM_NORM, 2 * x->BA * Th) +
		     proj_mem_s(p, PROJ_MEM_NORM, (x->BA + 4) * tv);
		b += proj_mem_s(p, PROJ_MEM_NORM, 4 * x->BA * Th) +
		     proj_mem_s(p, PROJ_MEM_ELEMENTWISE, (4 + x->BA) * tv);
		lc->last_fwd_s = f;
		lc->last_bwd_s = b;
	}
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

/* Bucketed collective over bytes: (all buckets, the last bucket alone). */
static void bucketed(const struct proj_pricer *p, int kind, double bytes, double bucket,
		     double group, double pn, double *total, double *last)
{
	double nfull, rem;

	*total = *last = 0;
	if (bytes <= 0 || group <= 1)
		return;
	if (bucket <= 0 || bucket >= bytes) {
		*total = *last = proj_coll_s(p, kind, bytes, group, pn);
		return;
	}
	nfull = floor(bytes / bucket);
	rem = bytes - nfull * bucket;
	*last = proj_coll_s(p, kind, bucket, group, pn);
	*total = nfull * *last;
	if (rem > 0) {
		*last = proj_coll_s(p, kind, rem, group, pn);
		*total += *last;
	}
}

static void invalid(cvc_proj_result *r, const char *why)
{
	r->valid = 0;
	r->reason = why;
}

void proj_evaluate(cvc_proj_ctx *ctx, const cvc_proj_scenario *sc, cvc_proj_result *r)
{
	const struct proj_pricer *p;
	const struct proj_layer_cost *lc;
	struct shape x;
	double t, pp, v, d, c, e, m, L, gpn, dc, peak;
	double wb, gbytes, ob, p_dense, p_exp, p_layer, p_stage, p_total;
	double stage_c, tp_mb, tp_hid, ep_mb, cp_mb, cp_hid, fsdp_mb = 0, fsdp_exp = 0;
	double dp_rs_mb = 0, t_mb, hidden_total, exposed_mb;
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
	t = sc->tp, pp = sc->pp, v = sc->vpp, d = sc->dp, c = sc->cp, e = sc->ep;
	gpn = sc->gpus_per_node;
	dc = d * c;
	m = sc->global_batch / (d * sc->micro_batch);
	L = sc->layers / pp;

	lc = layer_cost(ctx, p, &x);

	/* ---- parameters per GPU (heaviest stage: layers + embedding) ---- */
	p_dense = (x.h * x.qkv + x.h * x.h + (x.moe ? x.h * x.E : x.ffw)) / t + 4 * x.h;
	p_exp = x.moe ? x.E / e * x.ffw / t : 0;
	p_layer = p_dense + p_exp;
	p_stage = L * p_layer + x.V * x.h / t;
	p_total = sc->layers * (x.h * x.qkv + x.h * x.h + x.ffw * (x.moe ? x.E : 1) +
				(x.moe ? x.h * x.E : 0) + 4 * x.h) + x.V * x.h;
	wb = sc->dtype == CVC_PROJ_FP32 ? 4 : 2;
	gbytes = x.BA;
	ob = sc->optimizer == CVC_PROJ_ADAM ? (sc->dtype == CVC_PROJ_FP32 ? 8 : 12)
					    : (sc->dtype == CVC_PROJ_FP32 ? 4 : 8);

	/* ---- one micro-batch through the heaviest stage ---- */
	stage_c = L * (lc->fwd_s + lc->bwd_s);
	stage_c += pp > 1 ? fmax(lc->first_fwd_s + lc->first_bwd_s,
				 lc->last_fwd_s + lc->last_bwd_s)
			  : lc->first_fwd_s + lc->first_bwd_s + lc->last_fwd_s + lc->last_bwd_s;
	tp_mb = L * (lc->tp_fwd_s + lc->tp_bwd_s);
	tp_hid = sc->tp_overlap ? fmin(tp_mb, L * (lc->fwd_gemm_s + lc->bwd_gemm_s)) : 0;
	ep_mb = L * (lc->ep_fwd_s + lc->ep_bwd_s);
	cp_mb = L * (lc->cp_fwd_s + lc->cp_bwd_s);
	cp_hid = fmin(cp_mb, L * (lc->attn_fwd_s + lc->attn_bwd_s));

	/* ZeRO-3 / FSDP: per layer all-gather of parameters before forward and
	 * backward (again for recompute), reduce-scatter of gradients after
	 * backward; prefetch hides layer i+1's gather under layer i */
	if (sc->zero >= 3 && dc > 1) {
		double pn = fmin(dc, fmax(1, gpn / t));
		double ag = proj_coll_s(p, PROJ_AG, p_layer * wb, dc, pn);
		double rs = proj_coll_s(p, PROJ_RS, p_layer * gbytes, dc, pn);
		double nag_b = sc->recompute == CVC_PROJ_RECOMP_FULL ? 2 : 1;
		double ef, eb, tot_b = nag_b * ag + rs;

		fsdp_mb = L * ag * (1 + nag_b);
		dp_rs_mb = L * rs;
		if (sc->dp_overlap) {
			ef = ag + (L - 1) * fmax(0, ag - lc->fwd_s);
			eb = tot_b + (L - 1) * fmax(0, tot_b - lc->bwd_s);
		} else {
			ef = L * ag;
			eb = L * tot_b;
		}
		fsdp_exp = ef + eb;
	}
	exposed_mb = (tp_mb - tp_hid) + ep_mb + (cp_mb - cp_hid) + fsdp_exp;
	t_mb = stage_c + exposed_mb;

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
		double msg = x.T * x.h * x.BA / (x.sp ? t : 1);
		double pn = t * c * d < gpn ? 2 : 1;
		double one = proj_coll_s(p, PROJ_P2P, msg, 2, pn);
		double total = 2 * v * m * one;
		/* fill and drain cross every stage boundary on the critical path;
		 * steady-state transfers run under other micro-batches */
		double exposed = fmin(total, 2 * (pp * v - 1) * one);

		add_comm(r, CVC_PROJ_COMM_PP, total, total - exposed);
	}

	/* ---- data parallel gradient sync (ZeRO 0-2), every H steps with
	 * local SGD in one cluster ---- */
	if (sc->zero < 3 && dc > 1) {
		double dcl = dc / C;  /* replicas inside one cluster */
		double pn = fmin(dcl, fmax(1, gpn / t));
		double pn_e = fmin(dcl / e, fmax(1, gpn / (t * e)));
		double bucket = sc->bucket_mb * 1e6;
		double tot = 0, last = 0, tt, ll, ag = 0, hid, win, amort;

		if (dcl > 1) {
			int kind = sc->zero >= 1 ? PROJ_RS : PROJ_AR;

			bucketed(p, kind, (p_stage - L * p_exp) * gbytes, bucket, dcl, pn, &tt, &ll);
			tot += tt;
			last = ll;
			if (p_exp > 0 && dcl / e > 1) {
				bucketed(p, kind, L * p_exp * gbytes, bucket, dcl / e, pn_e, &tt, &ll);
				tot += tt;
			}
			if (sc->zero >= 1) /* updated parameter shards gathered back */
				ag = proj_coll_s(p, PROJ_AG, p_stage * wb, dcl, pn);
		}
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
		double bytes = p_total * gbytes;
		double bw = sc->inter_cluster_gbps * 1e9;
		double xc = bw > 0 ? 2 * (C - 1) / C * bytes / bw / H : INFINITY;

		add_comm(r, CVC_PROJ_COMM_XC, xc, 0);
	}

	/* ---- totals ---- */
	{
		double shard = sc->zero >= 1 ? dc : 1;
		double opt = proj_mem_s(p, PROJ_MEM_OPTIMIZER,
					p_stage / shard *
					(sc->optimizer == CVC_PROJ_ADAM ? 30 : 20));

		hidden_total = 0;
		for (int k = 0; k < CVC_PROJ_COMM_N; k++) {
			r->comm_s += r->comm_type_s[k];
			r->hidden_s += r->hidden_type_s[k];
			r->exposed_s += r->exposed_type_s[k];
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
		mem = p_stage * (wb / sh_w + gbytes / sh_g + ob / sh_o);
		mem += L * act_stored * inflight;
		if (sc->recompute == CVC_PROJ_RECOMP_FULL)
			mem += act_layer; /* one layer re-materialised at a time */
		mem += 2 * 4 * x.T * x.V / t; /* fp32 logits and their gradient */
		if (sc->zero >= 3)
			mem += 2 * p_layer * wb; /* gathered layers in flight */
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
