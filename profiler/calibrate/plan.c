/*
 * plan.c - calibration planning (cvc_calibrate.h): the operators a study's
 * scenarios price, bucketed and deduplicated, with the GPU time of
 * measuring them and of profiling the full workloads instead.
 *
 * cvc_cal_scenario_ops() follows projector/project.c (layer_cost() and
 * proj_evaluate()) and projector/price.c (the size each pricer passes to
 * the models: i64 rounding, bytes divided by the scale factors) through the
 * public cvc_proj_scenario only.  When project.c changes its operators,
 * this list must follow; tests/unit/test_calibrate.c prices the list with
 * the default models and compares with the projector's compute and
 * communication times, so a divergence fails the test.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cvc/cvc_calibrate.h"
#include "cvc/cvc_model.h"

#define PLAN_MAX 1000000u
#define MEM_MIN_BYTES 4096
#define MEM_MAX_BYTES (1LL << 34)  /* 16 GiB moved: 8 GiB in, 8 GiB out */
#define COLL_MIN_BYTES 1024
#define COLL_MAX_BYTES (1LL << 32) /* 4 GiB buffers: fit next to NCCL's */

const char *cvc_cal_kind_name(int kind)
{
	static const char *const n[CVC_CAL_NKIND] = {"gemm", "attention", "membound", "collective"};

	return kind >= 0 && kind < CVC_CAL_NKIND ? n[kind] : NULL;
}

void cvc_cal_opts_default(cvc_cal_opts *o)
{
	o->gpus = 8;
	o->gpus_per_node = 8;
	o->warmup = 5;
	o->reps = 20;
	o->steps = 10;
	o->gpu = "H100-SXM";
}

int cvc_cal_shape_eq(const cvc_cal_shape *a, const cvc_cal_shape *b)
{
	return a->kind == b->kind && a->dtype == b->dtype && a->sub == b->sub && a->b == b->b &&
	       a->m == b->m && a->n == b->n && a->k == b->k && a->heads == b->heads &&
	       a->kv_heads == b->kv_heads && a->causal == b->causal &&
	       a->backward == b->backward && a->bytes == b->bytes && a->group == b->group &&
	       a->per_node == b->per_node;
}

static uint64_t shape_hash(const cvc_cal_shape *s)
{
	int64_t v[14] = {s->kind,  s->dtype,    s->sub,    s->b,      s->m,
			 s->n,     s->k,        s->heads,  s->kv_heads, s->causal,
			 s->backward, s->bytes, s->group,  s->per_node};
	uint64_t h = 1469598103934665603ull;

	for (int i = 0; i < 14; i++) {
		h ^= (uint64_t)v[i];
		h *= 1099511628211ull;
		h ^= h >> 29;
	}
	return h;
}

/* ---- decomposition (mirrors projector/project.c) ---------------------------- */

/* price.c's rounding of a size handed to the models */
static int64_t i64(double x)
{
	if (!(x > 0))
		return 0;
	if (x > 9e18)
		return (int64_t)9e18;
	return (int64_t)llround(x);
}

struct emit {
	const cvc_proj_scenario *sc;
	cvc_cal_op_fn fn;
	void *user;
	size_t n;
	int stop;
	int hwdt;
};

static void put(struct emit *e, const cvc_cal_shape *s, double count, int stage)
{
	if (e->stop || !(count > 0))
		return;
	e->n++;
	if (e->fn(e->user, s, count, stage))
		e->stop = 1;
}

static void gemm(struct emit *e, double m, double n, double k, double b, double count, int stage)
{
	cvc_cal_shape s;

	memset(&s, 0, sizeof s);
	s.kind = CVC_CAL_GEMM;
	s.dtype = e->hwdt;
	s.m = i64(m), s.n = i64(n), s.k = i64(k), s.b = i64(b);
	put(e, &s, count, stage);
}

/* forward GEMM and its two backward GEMMs (dgrad, wgrad), as gemm3() */
static void gemm3(struct emit *e, double m, double n, double k, double cf, double cb, int stage)
{
	gemm(e, m, n, k, 1, cf, stage);
	gemm(e, m, k, n, 1, cb, stage);
	gemm(e, k, n, m, 1, cb, stage);
}

static void mem(struct emit *e, int cls, double bytes, double count, int stage)
{
	cvc_cal_shape s;

	memset(&s, 0, sizeof s);
	s.kind = CVC_CAL_MEM;
	s.sub = cls;
	s.bytes = i64(bytes / e->sc->scale_hbm_bw);
	put(e, &s, count, stage);
}

/* as proj_coll_s(): which link scales the bytes, and the degenerate groups */
static void coll(struct emit *e, int c, double bytes, double group, double per_node,
		 double count)
{
	cvc_cal_shape s;
	int g = group > 2e9 ? 2000000000 : (int)group;
	int pn = per_node < 1 ? 1 : (int)per_node;
	double scale;

	if (g <= 1 && c != CVC_MODEL_SENDRECV)
		return;
	if (c == CVC_MODEL_SENDRECV && g < 2)
		g = 2;
	scale = g <= pn ? e->sc->scale_intra_bw : e->sc->scale_inter_bw;
	memset(&s, 0, sizeof s);
	s.kind = CVC_CAL_COLL;
	s.sub = c;
	s.bytes = i64(bytes / scale);
	s.group = g;
	s.per_node = pn;
	if (s.bytes <= 0)
		return; /* the model answers 0 without a query */
	put(e, &s, count, 0);
}

/* bucketed(): full buckets and the remainder */
static void bucketed(struct emit *e, int c, double bytes, double bucket, double group,
		     double pn, double count)
{
	double nfull, rem;

	if (bytes <= 0 || group <= 1)
		return;
	if (bucket <= 0 || bucket >= bytes) {
		coll(e, c, bytes, group, pn, count);
		return;
	}
	nfull = floor(bytes / bucket);
	rem = bytes - nfull * bucket;
	coll(e, c, bucket, group, pn, count * nfull);
	if (rem > 0)
		coll(e, c, rem, group, pn, count);
}

size_t cvc_cal_scenario_ops(const cvc_proj_scenario *sc, cvc_cal_op_fn fn, void *user)
{
	static const int hw[4] = {CVC_HW_BF16, CVC_HW_FP16, CVC_HW_FP8, CVC_HW_TF32};
	struct emit e = {sc, fn, user, 0, 0, CVC_HW_BF16};
	double b = sc->micro_batch, s = sc->seq, h = sc->hidden, a = sc->heads;
	double g = sc->kv_heads, f = sc->ffn, V = sc->vocab, E = sc->experts, k = sc->top_k;
	double t = sc->tp, c = sc->cp, ep = sc->ep, pp = sc->pp, v = sc->vpp, d = sc->dp;
	double gpn = sc->gpus_per_node;
	int sp = sc->sp && t > 1, moe = E > 1, sw = sc->ffn_type == CVC_PROJ_FFN_SWIGLU;
	int full = sc->recompute == CVC_PROJ_RECOMP_FULL;
	int unfused = sc->attention == CVC_PROJ_ATTN_UNFUSED;
	double T = b * s / c, dh = h / a, qkv = (a + 2 * g) * dh;
	double BA = sc->dtype == CVC_PROJ_FP32 ? 4 : 2;
	double ffw = (sw ? 3 : 2) * h * f, Tm = moe ? T * k : T;
	double Th = T * h / (sp ? t : 1);
	double M = sc->global_batch / (d * b), L = sc->layers / pp, dc = d * c;
	double cf, cb, ca;

	if (sc->dtype >= 0 && sc->dtype < 4)
		e.hwdt = hw[sc->dtype];
	if (!(M > 0) || !(L > 0) || !(t >= 1))
		return 0;
	/* per step on the busiest stage: M micro-batches through L layers,
	 * the forward again under full recomputation */
	cf = M * L * (full ? 2 : 1);
	cb = M * L;

	/* GEMMs: QKV, attention output, (router), FFN up(+gate), down */
	gemm3(&e, T, qkv / t, h, cf, cb, 0);
	gemm3(&e, T, h, h / t, cf, cb, 0);
	if (moe)
		gemm3(&e, T, E, h, cf, cb, 0);
	gemm3(&e, Tm, (sw ? 2 : 1) * f / t, h, cf, cb, 0);
	gemm3(&e, Tm, h, f / t, cf, cb, 0);

	/* attention core */
	{
		double hl = a / t, gl = fmax(1, g / t), sq = s / c;

		/* selective recomputation re-runs the unfused core */
		ca = cf + (!full && sc->recompute == CVC_PROJ_RECOMP_SELECTIVE && unfused ? cb : 0);
		if (unfused) {
			double bt = b * hl, el = bt * sq * s;

			gemm(&e, sq, s, dh, bt, ca, 0);
			gemm(&e, sq, dh, s, bt, ca, 0);
			mem(&e, CVC_MODEL_MEM_NORM, 2 * BA * el, ca, 0);
			mem(&e, CVC_MODEL_MEM_ELEMENTWISE, (2 * BA + 1) * el, ca, 0);
			gemm(&e, sq, dh, s, bt, 2 * cb, 0);
			gemm(&e, s, dh, sq, bt, cb, 0);
			gemm(&e, sq, s, dh, bt, cb, 0);
			mem(&e, CVC_MODEL_MEM_NORM, 3 * BA * el, cb, 0);
			mem(&e, CVC_MODEL_MEM_ELEMENTWISE, (2 * BA + 1) * el, cb, 0);
		} else {
			cvc_cal_shape x;

			memset(&x, 0, sizeof x);
			x.kind = CVC_CAL_ATTN;
			x.dtype = e.hwdt;
			x.b = i64(b), x.heads = i64(hl), x.kv_heads = i64(gl);
			x.m = i64(sq), x.n = i64(s), x.k = i64(dh);
			x.causal = 1;
			put(&e, &x, cf, 0);
			x.backward = 1;
			put(&e, &x, cb, 0);
		}
	}

	/* memory-bound: norms, bias-dropout-residual, activation, rope */
	mem(&e, CVC_MODEL_MEM_NORM, 2 * BA * Th, 2 * cf, 0);
	mem(&e, CVC_MODEL_MEM_ELEMENTWISE, (3 * BA + 1) * Th, 2 * cf, 0);
	mem(&e, CVC_MODEL_MEM_ELEMENTWISE, (sw ? 3 : 2) * BA * Tm * f / t, cf, 0);
	mem(&e, CVC_MODEL_MEM_NORM, 4 * BA * Th, 2 * cb, 0);
	mem(&e, CVC_MODEL_MEM_ELEMENTWISE, 2 * (3 * BA + 1) * Th, 2 * cb, 0);
	mem(&e, CVC_MODEL_MEM_ELEMENTWISE, 2 * (sw ? 3 : 2) * BA * Tm * f / t, cb, 0);
	if (sw) {
		double rb = 2 * BA * T * (a + g) * dh / t;

		mem(&e, CVC_MODEL_MEM_ELEMENTWISE, rb, cf, 0);
		mem(&e, CVC_MODEL_MEM_ELEMENTWISE, rb, cb, 0);
	}

	/* per-layer communication: each "one" runs twice forward and twice
	 * backward (four times under full recomputation) */
	{
		double per = M * L * (2 + 2 * (full ? 2 : 1));

		if (t > 1) {
			double msg = T * h * BA, pn_t = fmin(t, gpn);

			if (sp) {
				coll(&e, CVC_MODEL_ALLGATHER, msg, t, pn_t, per);
				coll(&e, CVC_MODEL_REDUCESCATTER, msg, t, pn_t, per);
			} else {
				coll(&e, CVC_MODEL_ALLREDUCE, msg, t, pn_t, per);
			}
		}
		if (moe && ep > 1) {
			double pn = fmin(ep, fmax(1, gpn / (t * c)));

			coll(&e, CVC_MODEL_ALLTOALL, Tm * h * BA, ep, pn, per);
		}
		if (c > 1) {
			double kv = 2 * T * fmax(1, g / t) * dh * BA;

			coll(&e, CVC_MODEL_SENDRECV, kv, 2, t * c <= gpn ? 2 : 1,
			     M * L * (c - 1) * (3 + (full ? 1 : 0)));
		}
	}

	/* first stage: embedding; last stage: logits GEMM, norm, loss */
	mem(&e, CVC_MODEL_MEM_GATHER, 2 * BA * T * h, M, 1);
	mem(&e, CVC_MODEL_MEM_GATHER, 3 * BA * T * h, M, 1);
	{
		double tv = T * V / t;

		gemm3(&e, T, V / t, h, M, M, 2);
		mem(&e, CVC_MODEL_MEM_NORM, 2 * BA * Th, M, 2);
		mem(&e, CVC_MODEL_MEM_NORM, (BA + 4) * tv, M, 2);
		mem(&e, CVC_MODEL_MEM_NORM, 4 * BA * Th, M, 2);
		mem(&e, CVC_MODEL_MEM_ELEMENTWISE, (4 + BA) * tv, M, 2);
	}

	/* step-level: parameters per GPU as proj_evaluate() counts them */
	{
		double p_dense = (h * qkv + h * h + (moe ? h * E : ffw)) / t + 4 * h;
		double p_exp = moe ? E / ep * ffw / t : 0;
		double p_layer = p_dense + p_exp, p_stage = L * p_layer + V * h / t;
		double wb = sc->dtype == CVC_PROJ_FP32 ? 4 : 2, gbytes = BA;
		double H = sc->local_sgd_h >= 1 ? sc->local_sgd_h : 1;
		double C = sc->clusters >= 1 ? sc->clusters : 1;

		if (sc->zero >= 3 && dc > 1) {
			double pn = fmin(dc, fmax(1, gpn / t));

			coll(&e, CVC_MODEL_ALLGATHER, p_layer * wb, dc, pn, M * L * (1 + (full ? 2 : 1)));
			coll(&e, CVC_MODEL_REDUCESCATTER, p_layer * gbytes, dc, pn, M * L);
		}
		if (pp > 1) {
			double msg = T * h * BA / (sp ? t : 1);

			coll(&e, CVC_MODEL_SENDRECV, msg, 2, t * c * d < gpn ? 2 : 1, 2 * v * M);
		}
		if (sc->zero < 3 && dc > 1) {
			double dcl = dc / C, amort = C > 1 ? 1 : H;
			double pn = fmin(dcl, fmax(1, gpn / t));
			double pn_e = fmin(dcl / ep, fmax(1, gpn / (t * ep)));
			double bucket = sc->bucket_mb * 1e6;

			if (dcl > 1) {
				int kind = sc->zero >= 1 ? CVC_MODEL_REDUCESCATTER : CVC_MODEL_ALLREDUCE;

				bucketed(&e, kind, (p_stage - L * p_exp) * gbytes, bucket, dcl, pn,
					 1 / amort);
				if (p_exp > 0 && dcl / ep > 1)
					bucketed(&e, kind, L * p_exp * gbytes, bucket, dcl / ep, pn_e,
						 1 / amort);
				if (sc->zero >= 1)
					coll(&e, CVC_MODEL_ALLGATHER, p_stage * wb, dcl, pn, 1 / amort);
			}
		}
		mem(&e, CVC_MODEL_MEM_OPTIMIZER,
		    p_stage / (sc->zero >= 1 ? dc : 1) * (sc->optimizer == CVC_PROJ_ADAM ? 30 : 20), 1,
		    0);
	}
	return e.n;
}

/* ---- buckets ------------------------------------------------------------------ */

static int64_t pow2_up(int64_t x)
{
	int64_t p = 1;

	while (p < x && p < (INT64_C(1) << 62))
		p <<= 1;
	return p;
}

/* GEMM/attention sizes: 128-multiples (the tile every cuBLASLt kernel on
 * sm_80+ quantises to), powers of two below one tile */
static int64_t dim_up(int64_t x)
{
	if (x <= 0)
		return 0;
	if (x <= 128)
		return pow2_up(x);
	return (x + 127) / 128 * 128;
}

static int64_t clamp_bytes(int64_t x, int64_t lo, int64_t hi)
{
	x = pow2_up(x < lo ? lo : x);
	return x > hi ? hi : x;
}

const char *cvc_cal_bucket(const cvc_cal_shape *in, const cvc_cal_opts *o, cvc_cal_shape *out)
{
	int G = o->gpus_per_node < 1 ? 1 : o->gpus_per_node;
	int N = o->gpus < G ? G : o->gpus;
	int nodes = N / G;

	*out = *in;
	switch (in->kind) {
	case CVC_CAL_GEMM:
		out->b = pow2_up(in->b < 1 ? 1 : in->b);
		out->m = dim_up(in->m), out->n = dim_up(in->n), out->k = dim_up(in->k);
		if (!out->m || !out->n || !out->k)
			return "empty GEMM";
		return NULL;
	case CVC_CAL_ATTN:
		out->b = pow2_up(in->b < 1 ? 1 : in->b);
		out->heads = pow2_up(in->heads < 1 ? 1 : in->heads);
		out->kv_heads = pow2_up(in->kv_heads < 1 ? 1 : in->kv_heads);
		if (out->kv_heads > out->heads)
			out->kv_heads = out->heads;
		out->m = dim_up(in->m), out->n = dim_up(in->n);
		if (!out->m || !out->n || in->k <= 0)
			return "empty attention";
		return NULL; /* head_dim as is: few values, and kernels specialise on it */
	case CVC_CAL_MEM:
		out->bytes = clamp_bytes(in->bytes, MEM_MIN_BYTES, MEM_MAX_BYTES);
		return NULL;
	case CVC_CAL_COLL: {
		int g = in->group, pn = in->per_node < 1 ? 1 : in->per_node;

		out->bytes = clamp_bytes(in->bytes, COLL_MIN_BYTES, COLL_MAX_BYTES);
		if (pn >= 2 && g <= pn) { /* one node */
			g = g < G ? g : G;
			if (g < 2) {
				*out = *in;
				return "needs 2 GPUs in a node";
			}
			out->group = g, out->per_node = g;
		} else if (pn <= 1) { /* one rank per node */
			g = g < nodes ? g : nodes;
			if (g < 2) {
				*out = *in;
				return "needs 2 nodes";
			}
			out->group = g, out->per_node = 1;
		} else { /* pn ranks per node over several nodes */
			int p = pn < G ? pn : G, need = (g + pn - 1) / pn;
			int nn = need < nodes ? need : nodes;

			if (nn < 2 || p < 2) {
				*out = *in;
				return "needs 2 nodes";
			}
			out->per_node = p;
			out->group = g < p * nn ? g : p * nn;
			if (out->group <= p) {
				*out = *in;
				return "needs 2 nodes";
			}
		}
		return NULL;
	}
	default:
		return "unknown kind";
	}
}

void cvc_cal_attn_parts(const cvc_cal_shape *x, cvc_cal_shape gm[4], int *ngemm,
			int64_t *softmax_bytes)
{
	int64_t bh = (x->b > 0 ? x->b : 1) * (x->heads > 0 ? x->heads : 1);
	int64_t sq = x->m, skv = x->n > 0 ? x->n : x->m, D = x->k;
	/* {m, n, k}: forward S = QK^T, O = PV; backward dP = dO V^T,
	 * dV = P^T dO, dQ = dS K, dK = dS^T Q */
	static const int fwd[2][3] = {{0, 1, 2}, {0, 2, 1}};
	static const int bwd[4][3] = {{0, 1, 2}, {1, 2, 0}, {0, 2, 1}, {1, 2, 0}};
	int64_t dim[3] = {sq, skv, D};
	int n = x->backward ? 4 : 2;

	for (int i = 0; i < n; i++) {
		const int *ix = x->backward ? bwd[i] : fwd[i];

		memset(&gm[i], 0, sizeof gm[i]);
		gm[i].kind = CVC_CAL_GEMM;
		gm[i].dtype = x->dtype;
		gm[i].b = bh;
		gm[i].m = dim[ix[0]], gm[i].n = dim[ix[1]], gm[i].k = dim[ix[2]];
	}
	*ngemm = n;
	/* softmax reads S, writes P; backward reads P and dP, writes dS */
	*softmax_bytes = (x->backward ? 3 : 2) * (int64_t)cvc_hw_dtype_bytes((cvc_hw_dtype)x->dtype) *
			 bh * sq * skv;
}

/* ---- plan ------------------------------------------------------------------------ */

struct set {
	uint32_t *slot; /* index + 1; 0 = empty */
	size_t cap;
};

struct cvc_cal_plan {
	cvc_cal_opts o;
	cvc_modelset *ms;
	cvc_hw_catalog *cat;
	cvc_cal_item *items;
	uint64_t *last_scn;
	size_t n, cap;
	struct set iset;
	cvc_cal_shape *exact; /* distinct exact shapes */
	size_t nexact, capexact;
	struct set eset;
	cvc_cal_summary sum;
	cvc_status st;
	char errmsg[256];
};

static void fail(cvc_cal_plan *p, cvc_status st, const char *msg)
{
	p->st = st;
	snprintf(p->errmsg, sizeof p->errmsg, "%s", msg);
}

/* Finds s in the set over base (stride bytes apart); -1 when absent, with
 * *slot_out the empty slot where it goes. */
static long set_find(const struct set *set, const void *base, size_t stride,
		     const cvc_cal_shape *s, size_t *slot_out)
{
	size_t i = shape_hash(s) & (set->cap - 1);

	while (set->slot[i]) {
		const cvc_cal_shape *x =
			(const cvc_cal_shape *)((const char *)base + stride * (set->slot[i] - 1));

		if (cvc_cal_shape_eq(x, s))
			return (long)set->slot[i] - 1;
		i = (i + 1) & (set->cap - 1);
	}
	*slot_out = i;
	return -1;
}

/* Grows the set to hold n + 1 entries at load <= 1/2. */
static int set_reserve(struct set *set, const void *base, size_t stride, size_t n)
{
	struct set ns;

	if ((n + 1) * 2 <= set->cap)
		return 0;
	ns.cap = set->cap ? set->cap * 2 : 1024;
	ns.slot = calloc(ns.cap, sizeof *ns.slot);
	if (!ns.slot)
		return -1;
	for (size_t i = 0; i < set->cap; i++) {
		size_t j;

		if (!set->slot[i])
			continue;
		j = shape_hash((const cvc_cal_shape *)((const char *)base +
						       stride * (set->slot[i] - 1))) &
		    (ns.cap - 1);
		while (ns.slot[j])
			j = (j + 1) & (ns.cap - 1);
		ns.slot[j] = set->slot[i];
	}
	free(set->slot);
	*set = ns;
	return 0;
}

cvc_status cvc_cal_plan_new(const cvc_cal_opts *opts, cvc_cal_plan **out)
{
	cvc_cal_plan *p = calloc(1, sizeof *p);
	const cvc_hw_spec *spec;
	cvc_status st;

	*out = p;
	if (!p)
		return CVC_ERR_NOMEM;
	if (opts)
		p->o = *opts;
	else
		cvc_cal_opts_default(&p->o);
	if (p->o.gpus < 1 || p->o.gpus_per_node < 1 || p->o.gpus_per_node > p->o.gpus ||
	    p->o.warmup < 0 || p->o.reps < 1 || p->o.steps < 1 || !p->o.gpu) {
		fail(p, CVC_ERR_USAGE, "calibrate: expected gpus >= gpus_per_node >= 1, reps >= 1, "
		     "steps >= 1 and a GPU name");
		return p->st;
	}
	if ((st = cvc_hw_catalog_new(&p->cat))) {
		fail(p, st, p->cat ? cvc_hw_catalog_errmsg(p->cat) : cvc_strerror(st));
		return st;
	}
	spec = cvc_hw_catalog_lookup(p->cat, p->o.gpu);
	if (!spec) {
		char m[160];

		snprintf(m, sizeof m, "calibrate: GPU '%.60s' is not in the hardware catalog",
			 p->o.gpu);
		fail(p, CVC_ERR_NOTFOUND, m);
		return p->st;
	}
	if ((st = cvc_modelset_new(NULL, p->cat, spec, &p->ms))) {
		fail(p, st, "calibrate: cannot build the default models");
		return st;
	}
	return CVC_OK;
}

void cvc_cal_plan_free(cvc_cal_plan *p)
{
	if (!p)
		return;
	cvc_modelset_free(p->ms);
	cvc_hw_catalog_free(p->cat);
	free(p->items);
	free(p->last_scn);
	free(p->iset.slot);
	free(p->exact);
	free(p->eset.slot);
	free(p);
}

const char *cvc_cal_plan_errmsg(const cvc_cal_plan *p)
{
	return p ? p->errmsg : "";
}

/* One run of a planned shape on the estimate GPU, default models (us). */
static double est_us(const cvc_cal_plan *p, const cvc_cal_shape *s)
{
	switch (s->kind) {
	case CVC_CAL_GEMM:
		return cvc_model_gemm_us(p->ms, s->m, s->n, s->k, s->b, (cvc_hw_dtype)s->dtype);
	case CVC_CAL_ATTN: {
		cvc_cal_shape gm[4];
		int ng;
		int64_t sb;
		double t;

		cvc_cal_attn_parts(s, gm, &ng, &sb);
		t = cvc_model_membound_us(p->ms, sb, CVC_MODEL_MEM_NORM);
		for (int i = 0; i < ng; i++)
			t += cvc_model_gemm_us(p->ms, gm[i].m, gm[i].n, gm[i].k, gm[i].b,
					       (cvc_hw_dtype)gm[i].dtype);
		return t;
	}
	case CVC_CAL_MEM:
		return cvc_model_membound_us(p->ms, s->bytes, (cvc_model_mem)s->sub);
	case CVC_CAL_COLL:
		return cvc_model_collective_us(p->ms, (cvc_model_coll)s->sub, s->bytes, s->group,
					       s->per_node, NULL);
	}
	return 0;
}

struct add_ctx {
	cvc_cal_plan *p;
	uint64_t scn;
};

static int add_op(void *user, const cvc_cal_shape *op, double count, int stage)
{
	struct add_ctx *a = user;
	cvc_cal_plan *p = a->p;
	cvc_cal_shape bk;
	const char *why;
	size_t slot;
	long i;

	(void)count;
	(void)stage;
	why = cvc_cal_bucket(op, &p->o, &bk);
	/* distinct exact shapes */
	if (set_reserve(&p->eset, p->exact, sizeof *p->exact, p->nexact)) {
		fail(p, CVC_ERR_NOMEM, "calibrate: out of memory");
		return 1;
	}
	if (set_find(&p->eset, p->exact, sizeof *p->exact, op, &slot) < 0) {
		if (p->nexact == p->capexact) {
			size_t nc = p->capexact ? p->capexact * 2 : 1024;
			cvc_cal_shape *nv;

			if (p->nexact >= PLAN_MAX || !(nv = realloc(p->exact, nc * sizeof *nv))) {
				fail(p, CVC_ERR_NOMEM, "calibrate: more than 1 million distinct shapes");
				return 1;
			}
			p->exact = nv, p->capexact = nc;
		}
		p->exact[p->nexact++] = *op;
		p->eset.slot[slot] = (uint32_t)p->nexact;
		p->sum.exact[op->kind]++;
		if (why)
			p->sum.unmeasurable++;
	}
	if (why)
		return 0;
	if (set_reserve(&p->iset, p->items, sizeof *p->items, p->n)) {
		fail(p, CVC_ERR_NOMEM, "calibrate: out of memory");
		return 1;
	}
	i = set_find(&p->iset, p->items, sizeof *p->items, &bk, &slot);
	if (i < 0) {
		cvc_cal_item *it;

		if (p->n == p->cap) {
			size_t nc = p->cap ? p->cap * 2 : 256;
			cvc_cal_item *nv;
			uint64_t *nl;

			if (p->n >= PLAN_MAX || !(nv = realloc(p->items, nc * sizeof *nv))) {
				fail(p, CVC_ERR_NOMEM, "calibrate: more than 1 million planned shapes");
				return 1;
			}
			p->items = nv;
			if (!(nl = realloc(p->last_scn, nc * sizeof *nl))) {
				fail(p, CVC_ERR_NOMEM, "calibrate: out of memory");
				return 1;
			}
			p->last_scn = nl, p->cap = nc;
		}
		i = (long)p->n++;
		it = &p->items[i];
		memset(it, 0, sizeof *it);
		it->shape = bk;
		it->est_us = est_us(p, &bk);
		it->est_gpu_s = (p->o.warmup + p->o.reps) * it->est_us * 1e-6 *
				(bk.kind == CVC_CAL_COLL ? p->o.gpus : 1);
		p->last_scn[i] = 0;
		p->iset.slot[slot] = (uint32_t)p->n;
		p->sum.planned[bk.kind]++;
		p->sum.calib_gpu_s += it->est_gpu_s;
	}
	p->items[i].uses++;
	if (p->last_scn[i] != a->scn) {
		p->last_scn[i] = a->scn;
		p->items[i].scenarios++;
	}
	return 0;
}

cvc_status cvc_cal_plan_add(cvc_cal_plan *p, const cvc_proj_scenario *sc, double step_s)
{
	struct add_ctx a;

	if (!p || !sc)
		return CVC_ERR_USAGE;
	if (p->st)
		return p->st;
	a.p = p;
	a.scn = ++p->sum.scenarios;
	cvc_cal_scenario_ops(sc, add_op, &a);
	if (p->st)
		return p->st;
	if (step_s > 0 && isfinite(step_s))
		p->sum.full_gpu_s += p->o.steps * step_s * sc->gpus;
	return CVC_OK;
}

static int on_scn(void *user, const cvc_proj_scenario *sc, const cvc_proj_result *r)
{
	cvc_cal_plan *p = user;

	if (!r->valid)
		return 0;
	return cvc_cal_plan_add(p, sc, r->step_s) != CVC_OK;
}

cvc_status cvc_cal_plan_study(cvc_cal_plan *p, cvc_proj_study *st, cvc_proj_ctx *ctx)
{
	cvc_status rc;

	if (!p || !st || !ctx)
		return CVC_ERR_USAGE;
	rc = cvc_proj_study_run(st, ctx, CVC_PROJ_VALID_ONLY | CVC_PROJ_NO_MARGINAL, on_scn, p,
				NULL);
	if (p->st)
		return p->st; /* the callback stopped the run */
	if (rc)
		fail(p, rc, cvc_proj_study_errmsg(st));
	return rc;
}

size_t cvc_cal_plan_count(const cvc_cal_plan *p)
{
	return p ? p->n : 0;
}

const cvc_cal_item *cvc_cal_plan_at(const cvc_cal_plan *p, size_t i)
{
	return p && i < p->n ? &p->items[i] : NULL;
}

void cvc_cal_plan_summary(const cvc_cal_plan *p, cvc_cal_summary *out)
{
	*out = p->sum;
	out->factor = out->calib_gpu_s > 0 ? out->full_gpu_s / out->calib_gpu_s : 0;
}

/* ---- CSV ----------------------------------------------------------------------------- */

static const char *const cols[] = {"kind",     "dtype",   "sub",   "b",     "m",
				   "n",        "k",       "heads", "kv_heads", "causal",
				   "backward", "bytes",   "group", "per_node"};
#define NCOLS (sizeof cols / sizeof cols[0])

static const char *sub_name(const cvc_cal_shape *s)
{
	if (s->kind == CVC_CAL_MEM) {
		static const char *const m[CVC_MODEL_NMEM] = {"elementwise", "norm", "reduction",
							      "copy", "gather", "optimizer"};

		return s->sub >= 0 && s->sub < CVC_MODEL_NMEM ? m[s->sub] : "";
	}
	if (s->kind == CVC_CAL_COLL) {
		const char *n = cvc_model_coll_name((cvc_model_coll)s->sub);

		return n ? n : "";
	}
	return "";
}

void cvc_cal_plan_write_csv(const cvc_cal_plan *p, FILE *f)
{
	for (size_t i = 0; i < NCOLS; i++)
		fprintf(f, "%s,", cols[i]);
	fputs("uses,scenarios,est_us,est_gpu_s\n", f);
	for (size_t i = 0; i < p->n; i++) {
		const cvc_cal_item *it = &p->items[i];
		const cvc_cal_shape *s = &it->shape;
		int hasdt = s->kind == CVC_CAL_GEMM || s->kind == CVC_CAL_ATTN;
		const char *dt = hasdt ? cvc_hw_dtype_name((cvc_hw_dtype)s->dtype) : "";

		fprintf(f, "%s,%s,%s,%lld,%lld,%lld,%lld,%lld,%lld,%d,%d,%lld,%d,%d,%llu,%llu,%.6g,%.6g\n",
			cvc_cal_kind_name(s->kind), dt ? dt : "", sub_name(s), (long long)s->b,
			(long long)s->m, (long long)s->n, (long long)s->k, (long long)s->heads,
			(long long)s->kv_heads, s->causal, s->backward, (long long)s->bytes,
			s->group, s->per_node, (unsigned long long)it->uses,
			(unsigned long long)it->scenarios, it->est_us, it->est_gpu_s);
	}
}

static int parse_i64(const char *s, int64_t lo, int64_t hi, int64_t *out)
{
	char *end = NULL;
	long long v;

	errno = 0;
	v = strtoll(s, &end, 10);
	if (errno || end == s || *end || v < lo || v > hi)
		return -1;
	*out = v;
	return 0;
}

#define CSV_LINE_CAP 4096

cvc_status cvc_cal_plan_read_csv(const char *path, cvc_cal_shape **out, size_t *n, char *err,
				 size_t errlen)
{
	FILE *f = NULL;
	char line[CSV_LINE_CAP];
	int ci[NCOLS], lineno = 0, nh = 0;
	cvc_cal_shape *v = NULL;
	size_t nv = 0, cap = 0;
	cvc_status st = CVC_OK;

	*out = NULL;
	*n = 0;
	err[0] = '\0';
	if (!(f = fopen(path, "r"))) {
		snprintf(err, errlen, "'%s': %s", path, strerror(errno));
		return CVC_ERR_IO;
	}
#define BAD(...)                                                                   \
	do {                                                                       \
		int o_ = snprintf(err, errlen, "'%s': line %d: expected ", path, lineno); \
		if (o_ > 0 && (size_t)o_ < errlen)                                 \
			snprintf(err + o_, errlen - (size_t)o_, __VA_ARGS__);       \
		st = CVC_ERR_FORMAT;                                               \
		goto out;                                                          \
	} while (0)
	while (fgets(line, sizeof line, f)) {
		char *fld[64], *q = line;
		size_t len = strlen(line);
		int nf = 0;

		lineno++;
		if (len == sizeof line - 1 && line[len - 1] != '\n')
			BAD("a line under %d bytes", CSV_LINE_CAP);
		while (len && (line[len - 1] == '\n' || line[len - 1] == '\r'))
			line[--len] = '\0';
		if (!len)
			continue;
		while (nf < 64) {
			char *c = strchr(q, ',');

			fld[nf++] = q;
			if (!c)
				break;
			*c = '\0';
			q = c + 1;
		}
		if (!nh) {
			for (size_t i = 0; i < NCOLS; i++) {
				ci[i] = -1;
				for (int j = 0; j < nf; j++)
					if (strcmp(fld[j], cols[i]) == 0)
						ci[i] = j;
				if (ci[i] < 0)
					BAD("a calibration plan header with column '%s'", cols[i]);
			}
			nh = nf;
			continue;
		}
		if (nf != nh)
			BAD("%d fields as in the header, got %d", nh, nf);
		{
			cvc_cal_shape s;
			int64_t x[NCOLS];
			int kind = -1;

			memset(&s, 0, sizeof s);
			for (int k = 0; k < CVC_CAL_NKIND; k++)
				if (strcmp(fld[ci[0]], cvc_cal_kind_name(k)) == 0)
					kind = k;
			if (kind < 0)
				BAD("a kind (gemm, attention, membound, collective), got '%.32s'",
				    fld[ci[0]]);
			s.kind = kind;
			for (size_t i = 3; i < NCOLS; i++)
				if (parse_i64(fld[ci[i]], 0, INT64_C(1) << 40, &x[i]))
					BAD("a count 0..2^40 in column '%s', got '%.32s'", cols[i],
					    fld[ci[i]]);
			s.b = x[3], s.m = x[4], s.n = x[5], s.k = x[6], s.heads = x[7];
			s.kv_heads = x[8];
			s.causal = x[9] != 0, s.backward = x[10] != 0;
			s.bytes = x[11];
			if (x[12] > 1 << 20 || x[13] > 1 << 20)
				BAD("a group size under 2^20");
			s.group = (int)x[12], s.per_node = (int)x[13];
			if (kind == CVC_CAL_GEMM || kind == CVC_CAL_ATTN) {
				cvc_hw_dtype dt;

				if (cvc_hw_dtype_parse(fld[ci[1]], &dt))
					BAD("a dtype, got '%.32s'", fld[ci[1]]);
				s.dtype = (int)dt;
				if (s.m < 1 || s.n < 1 || s.k < 1 || s.b < 1 || s.m > 1 << 24 ||
				    s.n > 1 << 24 || s.k > 1 << 24 || s.b > 1 << 24 ||
				    (kind == CVC_CAL_ATTN && (s.heads < 1 || s.heads > 1 << 16)))
					BAD("sizes 1..2^24");
			} else if (kind == CVC_CAL_MEM) {
				int cls = -1;
				static const char *const m[CVC_MODEL_NMEM] = {
					"elementwise", "norm", "reduction", "copy", "gather",
					"optimizer"};

				for (int k = 0; k < CVC_MODEL_NMEM; k++)
					if (strcmp(fld[ci[2]], m[k]) == 0)
						cls = k;
				if (cls < 0)
					BAD("a memory-bound class, got '%.32s'", fld[ci[2]]);
				s.sub = cls;
				if (s.bytes < 1)
					BAD("bytes >= 1");
			} else {
				cvc_model_coll cl;

				if (cvc_model_coll_parse(fld[ci[2]], &cl))
					BAD("a collective, got '%.32s'", fld[ci[2]]);
				s.sub = (int)cl;
				if (s.bytes < 1 || s.group < 2 || s.per_node < 1)
					BAD("bytes >= 1, group >= 2 and per_node >= 1");
			}
			if (nv == cap) {
				size_t nc = cap ? cap * 2 : 256;
				cvc_cal_shape *nvv;

				if (nv >= PLAN_MAX)
					BAD("at most %u rows", PLAN_MAX);
				if (!(nvv = realloc(v, nc * sizeof *nvv))) {
					st = CVC_ERR_NOMEM;
					snprintf(err, errlen, "out of memory");
					goto out;
				}
				v = nvv, cap = nc;
			}
			v[nv++] = s;
		}
	}
	if (ferror(f)) {
		snprintf(err, errlen, "'%s': read error", path);
		st = CVC_ERR_IO;
		goto out;
	}
	if (!nh) {
		lineno = 1;
		BAD("a calibration plan header, got an empty file");
	}
#undef BAD
out:
	fclose(f);
	if (st) {
		free(v);
		return st;
	}
	*out = v;
	*n = nv;
	return CVC_OK;
}
