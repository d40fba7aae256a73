/*
 * calplan.c - calibration planning (cvc_calibrate.h): the operators a
 * study's scenarios price, bucketed and deduplicated, with the GPU time of
 * measuring them and of profiling the full workloads instead.  In the
 * projector since it is a client of the decomposition (issue 15); the plan
 * file's format is db/calshape.c's.
 *
 * cvc_cal_scenario_ops() adapts the projector's own operator list
 * (cvc_proj_scenario_ops(), the decomposition projector/project.c prices)
 * to calibration shapes: there is one decomposition, so a plan covers the
 * model queries a projection makes.  tests/unit/test_calibrate.c prices
 * the adapted list with the default models and compares with the
 * projector's compute and communication times.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cvc/cvc_base.h"
#include "cvc/cvc_calibrate.h"
#include "cvc/cvc_model.h"

#define PLAN_MAX 1000000u
#define MEM_MIN_BYTES 4096
#define MEM_MAX_BYTES (1LL << 34)  /* 16 GiB moved: 8 GiB in, 8 GiB out */
#define COLL_MIN_BYTES 1024
#define COLL_MAX_BYTES (1LL << 32) /* 4 GiB buffers: fit next to NCCL's */

void cvc_cal_opts_default(cvc_cal_opts *o)
{
	o->gpus = 8;
	o->gpus_per_node = 8;
	o->warmup = 5;
	o->reps = 20;
	o->steps = 10;
	o->gpu = "H100-SXM";
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

/* ---- decomposition: the projector's own (cvc_proj_scenario_ops) ------------- */

struct adapt {
	cvc_cal_op_fn fn;
	void *user;
	size_t n;
};

static int adapt_op(void *user, const cvc_proj_op *o)
{
	/* the GEMM dtype measured for a scenario dtype (fp32 runs as tf32;
	 * nvfp4 and mxfp4 are fp4, which the CUDA runner skips with a word) */
	static const int hw[CVC_PROJ_NDTYPE] = {CVC_HW_BF16, CVC_HW_FP16, CVC_HW_FP8,
						CVC_HW_TF32, CVC_HW_FP4,  CVC_HW_FP4};
	struct adapt *a = user;
	cvc_cal_shape s;

	memset(&s, 0, sizeof s);
	switch (o->kind) {
	case CVC_PROJ_OP_GEMM:
	case CVC_PROJ_OP_ATTN:
		s.kind = o->kind == CVC_PROJ_OP_GEMM ? CVC_CAL_GEMM : CVC_CAL_ATTN;
		s.dtype = o->dtype >= 0 && o->dtype < CVC_PROJ_NDTYPE ? hw[o->dtype] : CVC_HW_BF16;
		break;
	case CVC_PROJ_OP_MEM:
		s.kind = CVC_CAL_MEM;
		break;
	case CVC_PROJ_OP_COLL:
		if (o->bytes <= 0)
			return 0; /* the model answers 0 without a query: nothing to measure */
		/* DeepEP's and HybridEP's exchanges are priced from their
		 * authors' tables (models/epcomm.c); the runner measures NCCL */
		if (o->ep_backend != CVC_EP_NCCL)
			return 0;
		s.kind = CVC_CAL_COLL;
		break;
	default:
		return 0;
	}
	s.sub = o->sub;
	s.b = o->b, s.m = o->m, s.n = o->n, s.k = o->k;
	s.heads = o->heads, s.kv_heads = o->kv_heads;
	s.causal = o->causal, s.backward = o->backward;
	s.bytes = o->bytes;
	s.group = o->group, s.per_node = o->per_node;
	a->n++;
	return a->fn(a->user, &s, o->count, o->stage);
}

size_t cvc_cal_scenario_ops(const cvc_proj_scenario *sc, cvc_cal_op_fn fn, void *user)
{
	struct adapt a = {fn, user, 0};

	cvc_proj_scenario_ops(sc, adapt_op, &a);
	return a.n;
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
	uint64_t *last_scn;   /* per item: the last scenario that used it */
	size_t n, cap, caplast;
	struct set iset;
	cvc_cal_shape *exact; /* distinct exact shapes */
	size_t nexact, capexact;
	struct set eset;
	cvc_cal_summary sum;
	cvc_status st;
	char errmsg[512];
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
	/* as named or by an alias: a name that only starts like an entry is
	   another GPU, and is refused with the nearest ones */
	spec = cvc_hw_catalog_find(p->cat, p->o.gpu, "gpu");
	if (!spec) {
		const char *near[3];
		size_t k = cvc_hw_catalog_nearest(p->cat, p->o.gpu, "gpu", near, 3);
		char m[256];

		snprintf(m, sizeof m, "calibrate: GPU '%.60s' is not in the hardware catalog%s%s%s%s%s%s",
			 p->o.gpu, k ? "; nearest: " : "", k ? near[0] : "", k > 1 ? ", " : "",
			 k > 1 ? near[1] : "", k > 2 ? ", " : "", k > 2 ? near[2] : "");
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
		if (p->nexact >= PLAN_MAX ||
		    cvc_grow(&p->exact, &p->capexact, p->nexact + 1, sizeof *p->exact, 1024)) {
			fail(p, CVC_ERR_NOMEM, "calibrate: more than 1 million distinct shapes");
			return 1;
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

		if (cvc_grow_bounded(&p->items, &p->cap, p->n + 1, sizeof *p->items, PLAN_MAX)) {
			fail(p, CVC_ERR_NOMEM, "calibrate: more than 1 million planned shapes");
			return 1;
		}
		if (cvc_grow(&p->last_scn, &p->caplast, p->n + 1, sizeof *p->last_scn, 256)) {
			fail(p, CVC_ERR_NOMEM, "calibrate: out of memory");
			return 1;
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

void cvc_cal_plan_write_csv(const cvc_cal_plan *p, FILE *f)
{
	cvc_cal_shape_csv_header(f);
	fputs("uses,scenarios,est_us,est_gpu_s\n", f);
	for (size_t i = 0; i < p->n; i++) {
		const cvc_cal_item *it = &p->items[i];
		char a[48], b[48];

		cvc_cal_shape_csv(f, &it->shape);

		fprintf(f, "%llu,%llu,%s,%s\n", (unsigned long long)it->uses,
			(unsigned long long)it->scenarios, cvc_fmt_plain(it->est_us, 6, a, sizeof a),
			cvc_fmt_plain(it->est_gpu_s, 6, b, sizeof b));
	}
}
