/*
 * price.c - the projector's side of the operator models: a ctx holding the
 * hardware catalog and, per (GPU, scale factors), two modelsets:
 *   ms_scaled: built on the spec with peak FLOP/s, HBM bandwidth and
 *              capacity multiplied by the scale factors; prices GEMMs and
 *              attention, whose models are efficiencies relative to the
 *              spec sheet, so a fitted A100/H100 efficiency carries over to
 *              a "4x compute" GPU;
 *   ms_base:   the catalog spec as is; prices collectives and memory-bound
 *              ops with the bytes divided by the link/HBM scale factor.  For
 *              latency + bytes/bandwidth models (what cvc_model fits) that
 *              is exactly "bandwidth x scale, latency unchanged", and it
 *              holds whether a fitted model reads the spec's link figures or
 *              carries its own measured bandwidth.
 * The division by the scale factors and the rounding to integer sizes
 * happen where project.c builds each operator (cvc_proj_op), so the sizes
 * priced here are the sizes cvc_proj_scenario_ops() lists.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cvc/cvc_db.h"
#include "cvc/cvc_model.h"
#include "proj_internal.h"
#include "ctx.h"

cvc_status cvc_proj_ctx_new(cvc_db *db, cvc_proj_ctx **out)
{
	cvc_proj_ctx *ctx = calloc(1, sizeof *ctx);
	cvc_status rc;

	*out = ctx;
	if (!ctx)
		return CVC_ERR_NOMEM;
	ctx->db = db;
	ctx->last = -1;
	rc = cvc_hw_catalog_new(&ctx->cat);
	if (rc)
		snprintf(ctx->errmsg, sizeof ctx->errmsg, "hardware catalog: %s",
			 ctx->cat ? cvc_hw_catalog_errmsg(ctx->cat) : cvc_strerror(rc));
	return rc;
}

/* Frees every pricer's modelsets and empties the slots; they are built
 * again on first use. */
static void drop_pricers(cvc_proj_ctx *ctx)
{
	for (int i = 0; i < ctx->nslots; i++) {
		cvc_modelset_free((cvc_modelset *)ctx->slot[i]->p.ms_scaled);
		cvc_modelset_free((cvc_modelset *)ctx->slot[i]->p.ms_base);
		free(ctx->slot[i]);
		ctx->slot[i] = NULL;
	}
	memset(ctx->index, 0, sizeof ctx->index);
	ctx->nslots = 0;
	ctx->last = -1;
	ctx->evict = 0;
	memset(&ctx->cc, 0, sizeof ctx->cc); /* keyed on the slots */
	proj_smemo_clear(ctx);
}

void cvc_proj_ctx_free(cvc_proj_ctx *ctx)
{
	if (!ctx)
		return;
	drop_pricers(ctx);
	cvc_hw_catalog_free(ctx->cat);
	free(ctx);
}

void cvc_proj_ctx_set_intervals(cvc_proj_ctx *ctx, int on)
{
	if (ctx && ctx->no_intervals != !on) {
		ctx->no_intervals = !on;
		memset(&ctx->cc, 0, sizeof ctx->cc); /* cached layers carry their prices */
		proj_smemo_clear(ctx);
	}
}

int cvc_proj_ctx_intervals(const cvc_proj_ctx *ctx)
{
	return ctx && !ctx->no_intervals;
}

void cvc_proj_ctx_set_force(cvc_proj_ctx *ctx, int on)
{
	if (!ctx || ctx->force == !!on)
		return;
	ctx->force = !!on;
	drop_pricers(ctx); /* built again, with or without the gated fits */
}

const char *cvc_proj_ctx_errmsg(const cvc_proj_ctx *ctx)
{
	return ctx ? ctx->errmsg : "";
}

struct proj_ccache *proj_ctx_ccache(cvc_proj_ctx *ctx)
{
	return &ctx->cc;
}

static int same_key(const struct proj_pricer *p, const char *gpu, const double sc[5])
{
	return strcmp(p->gpu, gpu) == 0 && memcmp(p->scale, sc, sizeof p->scale) == 0;
}

/* The entry of gpu in u->seen, added when new; -1 when the list is full. */
static int seen_slot(struct proj_used *u, const char *gpu)
{
	for (int i = 0; i < u->nseen; i++)
		if (strcmp(u->seen[i].gpu, gpu) == 0)
			return i;
	if (u->nseen == PROJ_SEEN_MAX) {
		u->seen_dropped = 1;
		return -1;
	}
	snprintf(u->seen[u->nseen].gpu, sizeof u->seen[0].gpu, "%s", gpu);
	u->seen[u->nseen].gemm = u->seen[u->nseen].attn = u->seen[u->nseen].mem = 0;
	return u->nseen++;
}

/* The blockwise fp8 table for a GPU of spec's generation, read the first
 * time one is asked for; NULL when spec is not of the generation measured
 * or its GPU is not in the catalog. */
static const struct cvc_model_blockfp8 *blockfp8_of(cvc_proj_ctx *ctx, const cvc_hw_spec *spec)
{
	const cvc_hw_spec *ref = cvc_hw_catalog_lookup(ctx->cat, cvc_model_blockfp8_gpu());

	if (!ref || !cvc_model_same_generation(ref, spec))
		return NULL;
	if (ctx->blockfp8_state == 0) {
		cvc_modelset *ms = NULL;

		/* against the defaults, as the table was read: a db's fits
		 * move the per-tensor price this factor multiplies */
		ctx->blockfp8_state = -1;
		if (cvc_modelset_new(NULL, ctx->cat, ref, &ms) == CVC_OK &&
		    cvc_model_blockfp8_fit(ms, &ctx->blockfp8) == CVC_OK)
			ctx->blockfp8_state = 1;
		cvc_modelset_free(ms);
	}
	return ctx->blockfp8_state > 0 ? &ctx->blockfp8 : NULL;
}

/* Builds slot contents; known = 0 when the GPU is not in the catalog. */
static int build(cvc_proj_ctx *ctx, struct proj_pricer *p, const char *gpu,
		 const double sc[5])
{
	static const int dt_map[CVC_PROJ_NDTYPE] = {CVC_HW_BF16, CVC_HW_FP16, CVC_HW_FP8,
						     CVC_HW_TF32, CVC_HW_FP4,  CVC_HW_FP4};
	const cvc_hw_spec *spec = ctx->cat ? cvc_hw_catalog_lookup(ctx->cat, gpu) : NULL;
	cvc_hw_spec scaled;
	cvc_modelset *a = NULL, *b = NULL;

	snprintf(p->gpu, sizeof p->gpu, "%s", gpu);
	memcpy(p->scale, sc, sizeof p->scale);
	p->known = 0;
	p->used = &ctx->used;
	p->seen = -1;
	if (!spec)
		return 0;
	p->seen = seen_slot(&ctx->used, gpu);
	scaled = *spec;
	for (int d = 0; d < CVC_HW_NDTYPE; d++)
		scaled.peak_tflops[d] *= sc[0];
	scaled.hbm_bw_gbps *= sc[1];
	scaled.hbm_gb *= sc[2];
	scaled.intra_bw_gbps *= sc[3];
	scaled.inter_bw_gbps *= sc[4];
	if (cvc_modelset_new_ex(ctx->db, ctx->cat, &scaled, ctx->force, &a) ||
	    cvc_modelset_new_ex(ctx->db, ctx->cat, spec, ctx->force, &b)) {
		cvc_modelset_free(a);
		cvc_modelset_free(b);
		snprintf(ctx->errmsg, sizeof ctx->errmsg, "cannot build the models for '%s'", gpu);
		return -1;
	}
	p->ms_scaled = a;
	p->ms_base = b;
	for (int d = 0; d < CVC_PROJ_NDTYPE; d++) {
		/* the GPU's path for the format (cvc_hw_dtype_path, which
		 * `cvc predict` takes too): V100's bf16 runs as fp16; fp8 or fp4
		 * on a GPU without those tensor cores has none, peak 0, the
		 * layout impossible */
		cvc_hw_dtype as;

		p->peak_flops[d] = cvc_hw_dtype_path(&scaled, (cvc_hw_dtype)dt_map[d], &as) == CVC_OK
					   ? scaled.peak_tflops[as] * 1e12
					   : 0;
		p->gemm_dt[d] = as;
	}
	/* device memory sizes are binary: an "80 GB" A100 or H100 reports
	 * 81920 / 81559 MiB; the catalog's hbm_gb are GiB */
	p->hbm_bytes = scaled.hbm_gb * 1073741824.0;
	p->power_w = spec->tdp_w;
	p->gpus_per_node = spec->gpus_per_node;
	p->nvlink_domain = cvc_hw_domain(spec);
	p->host_bw_gbps = spec->host_bw_gbps;
	p->blockfp8 = blockfp8_of(ctx, spec);
	p->known = 1;
	return 0;
}

long proj_ctx_builds(const cvc_proj_ctx *ctx)
{
	return ctx->builds;
}

/* FNV-1a over the GPU's name and the scale factors' bits. */
static unsigned key_hash_of(const char *gpu, const double sc[5])
{
	const unsigned char *b = (const unsigned char *)sc;
	unsigned h = 2166136261u;

	for (; *gpu; gpu++)
		h = (h ^ (unsigned char)*gpu) * 16777619u;
	for (size_t i = 0; i < 5 * sizeof sc[0]; i++)
		h = (h ^ b[i]) * 16777619u;
	return h;
}

/* The slot of the key, or -1; *at: where the index would take it. */
static int find_slot(const cvc_proj_ctx *ctx, const char *gpu, const double sc[5], int *at)
{
	const int mask = PROJ_PRICER_INDEX - 1;
	int i = (int)(key_hash_of(gpu, sc) & (unsigned)mask);

	for (; ctx->index[i]; i = (i + 1) & mask) {
		const struct proj_pricer *p = &ctx->slot[ctx->index[i] - 1]->p;

		if (same_key(p, gpu, sc))
			return ctx->index[i] - 1;
	}
	*at = i;
	return -1;
}

/* The index again from the slots (after one was replaced: rare). */
static void reindex(cvc_proj_ctx *ctx)
{
	memset(ctx->index, 0, sizeof ctx->index);
	for (int i = 0; i < ctx->nslots; i++) {
		int at;

		if (ctx->slot[i]->p.gpu[0] && find_slot(ctx, ctx->slot[i]->p.gpu,
							ctx->slot[i]->p.scale, &at) < 0)
			ctx->index[at] = i + 1;
	}
}

const struct proj_pricer *proj_ctx_pricer(cvc_proj_ctx *ctx, const cvc_proj_scenario *s)
{
	double sc[5] = {s->scale_compute, s->scale_hbm_bw, s->scale_hbm_cap,
			s->scale_intra_bw, s->scale_inter_bw};
	struct pslot *slot;
	int i, at = -1, fresh;

	if (ctx->last >= 0 && same_key(&ctx->slot[ctx->last]->p, s->gpu, sc))
		return &ctx->slot[ctx->last]->p;
	if ((i = find_slot(ctx, s->gpu, sc, &at)) >= 0) {
		ctx->last = i;
		return &ctx->slot[i]->p;
	}
	/* A study sweeping many GPUs or scale factors walks them in its
	 * innermost loop, over and over: every key it uses is kept, up to the
	 * cap (a round-robin over 48 slots missed on every scenario past 8
	 * scaled GPUs: 30x slower); past it, round-robin */
	fresh = ctx->nslots < PROJ_NPRICERS;
	if (fresh) {
		if (!(ctx->slot[ctx->nslots] = calloc(1, sizeof *ctx->slot[0])))
			return NULL;
		ctx->last = ctx->nslots++;
	} else {
		ctx->last = ctx->evict;
		ctx->evict = (ctx->evict + 1) % PROJ_NPRICERS;
		cvc_modelset_free((cvc_modelset *)ctx->slot[ctx->last]->p.ms_scaled);
		cvc_modelset_free((cvc_modelset *)ctx->slot[ctx->last]->p.ms_base);
		/* compute-cache entries keyed on this slot are now stale */
		memset(&ctx->cc, 0, sizeof ctx->cc);
	}
	slot = ctx->slot[ctx->last];
	memset(&slot->p, 0, sizeof slot->p);
	memset(&slot->cmemo, 0, sizeof slot->cmemo);
	slot->p.id = ctx->last;
	slot->p.cmemo = &slot->cmemo;
	ctx->builds++;
	if (build(ctx, &slot->p, s->gpu, sc) < 0) { /* build() freed what it made */
		memset(&slot->p, 0, sizeof slot->p);
		if (!fresh) {
			reindex(ctx); /* the replaced key is gone, the slot empty */
		} else {
			free(slot); /* drop the broken slot, the last one */
			ctx->slot[--ctx->nslots] = NULL;
		}
		ctx->last = -1;
		return NULL;
	}
	if (fresh)
		ctx->index[at] = ctx->last + 1;
	else
		reindex(ctx);
	return &slot->p;
}

double proj_domain_of(const cvc_proj_scenario *sc, const struct proj_pricer *p)
{
	if (sc->nvlink_domain >= 1)
		return sc->nvlink_domain;
	/* a domain wider than the catalog's host (NVL72 over trays of 4) is
	 * the rack's whatever the scenario calls a node */
	if (p && p->known && p->nvlink_domain > p->gpus_per_node && p->gpus_per_node > 0)
		return p->nvlink_domain;
	return sc->gpus_per_node >= 1 ? sc->gpus_per_node : 8;
}

int proj_nvidia(const struct proj_pricer *p)
{
	const cvc_hw_spec *s = p && p->ms_base ? cvc_modelset_spec(p->ms_base) : NULL;

	return s && !strcmp(s->vendor, "NVIDIA");
}

int proj_sm100(const struct proj_pricer *p)
{
	return proj_nvidia(p) && p->peak_flops[CVC_PROJ_NVFP4] > 0;
}

double proj_domain(const cvc_proj_scenario *sc)
{
	return proj_domain_of(sc, NULL);
}

cvc_status cvc_proj_ctx_origin(cvc_proj_ctx *ctx, const char *gpu, int dtype, char *buf,
			       size_t len)
{
	cvc_proj_scenario sc;
	const struct proj_pricer *p;
	int dt;

	cvc_proj_scenario_default(&sc);
	sc.gpu = gpu;
	p = proj_ctx_pricer(ctx, &sc);
	if (!p || !p->known) {
		snprintf(buf, len, "%s: not in the hardware catalog", gpu);
		return CVC_ERR_NOTFOUND;
	}
	dt = p->gemm_dt[dtype >= 0 && dtype < CVC_PROJ_NDTYPE ? dtype : 0];
	{
		int w = snprintf(buf, len, "%s (%s): gemm: %s; attention: %s; memory-bound: %s", gpu,
				 cvc_modelset_spec(p->ms_base)->name,
				 cvc_model_origin(p->ms_scaled, CVC_MODEL_GEMM, dt, 0),
				 cvc_model_origin(p->ms_scaled, CVC_MODEL_ATTENTION, dt, 0),
				 cvc_model_origin(p->ms_base, CVC_MODEL_MEMBOUND, 0, 0));
		size_t used = w < 0 ? 0 : (size_t)w < len ? (size_t)w : len - 1;
		int any = 0;

		/* the collectives the projections priced, each with its model */
		for (int i = 0; i < ctx->used.n && used + 1 < len; i++) {
			if (strcmp(ctx->used.e[i].gpu, gpu) != 0)
				continue;
			w = snprintf(buf + used, len - used, "; %s: %s (priced %.0f times)",
				     cvc_model_coll_name((cvc_model_coll)ctx->used.e[i].coll),
				     ctx->used.e[i].origin, ctx->used.e[i].calls);
			used = w < 0 ? used : used + (size_t)w < len ? used + (size_t)w : len - 1;
			any = 1;
		}
		if (!any)
			snprintf(buf + used, len - used, "; collectives: none priced");
	}
	return CVC_OK;
}

const char *cvc_proj_ctx_gpu(const cvc_proj_ctx *ctx, size_t i)
{
	return ctx && i < (size_t)ctx->used.nseen ? ctx->used.seen[i].gpu : NULL;
}

/* Counts one priced collective under the model that priced it. */
static void note_used(struct proj_used *u, const char *gpu, int coll, const char *origin,
		      double calls)
{
	int i = u->last;

	/* the last entry first: a study prices the same few in a row (the
	 * origin's address alone could be a freed modelset's, so the text) */
	if (i < u->n && u->e[i].coll == coll && strcmp(u->e[i].origin, origin) == 0 &&
	    strcmp(u->e[i].gpu, gpu) == 0) {
		u->e[i].calls += calls;
		return;
	}
	for (i = 0; i < u->n; i++)
		if (u->e[i].coll == coll && strcmp(u->e[i].gpu, gpu) == 0 &&
		    strcmp(u->e[i].origin, origin) == 0)
			break;
	if (i == u->n) {
		if (u->n == PROJ_USED_MAX) {
			u->dropped = 1;
			return;
		}
		u->n++;
		snprintf(u->e[i].gpu, sizeof u->e[i].gpu, "%s", gpu);
		snprintf(u->e[i].origin, sizeof u->e[i].origin, "%s", origin);
		u->e[i].coll = coll;
		u->e[i].calls = 0;
	}
	u->e[i].calls += calls;
	u->last = i;
}

/*
 * Marks what op was priced with on p's GPU (the dtype its GEMM or
 * attention ran in, the memory-bound class), for the provenance: one OR,
 * so the pricing paths can afford it on every call.
 */
static void note_op(const struct proj_pricer *p, const cvc_proj_op *o)
{
	if (!p->used || p->seen < 0)
		return;
	if (o->kind == CVC_PROJ_OP_GEMM)
		p->used->seen[p->seen].gemm |= 1u << p->gemm_dt[o->dtype];
	else if (o->kind == CVC_PROJ_OP_ATTN && o->sub == CVC_ATTN_FA1)
		p->used->seen[p->seen].attn_fa1 |= 1u << p->gemm_dt[o->dtype];
	else if (o->kind == CVC_PROJ_OP_ATTN)
		p->used->seen[p->seen].attn |= 1u << p->gemm_dt[o->dtype];
	else if (o->kind == CVC_PROJ_OP_MEM && o->sub >= 0 && o->sub < 32)
		p->used->seen[p->seen].mem |= 1u << o->sub;
}

/* The attention call an operator stands for. */
static void attn_of(const struct proj_pricer *p, const cvc_proj_op *o, cvc_model_attn *a)
{
	a->batch = o->b;
	a->heads = o->heads;
	a->kv_heads = o->kv_heads;
	a->seq_q = o->m;
	a->seq_kv = o->n;
	a->head_dim = o->k;
	a->causal = o->causal;
	a->backward = o->backward;
	a->dtype = (cvc_hw_dtype)p->gemm_dt[o->dtype];
	a->backend = o->sub;
}

/* An expert-parallel exchange by DeepEP or HybridEP (o->ep_backend). */
static void ep_price(const struct proj_pricer *p, const cvc_proj_op *o, cvc_model_price *pr)
{
	cvc_model_ep_call c;

	c.backend = o->ep_backend;
	c.phase = o->ep_phase;
	c.nvl_bytes = o->bytes;
	c.net_bytes = o->net_bytes;
	c.ranks = o->group;
	c.domain = o->per_node;
	c.sms = o->sms;
	c.hidden = o->k > 0 && o->k < 1000000000 ? (int)o->k : 0;
	cvc_model_ep_price(p->ms_base, &c, pr);
}

/*
 * The factor of a GEMM that reads MXFP8 block scales (1 for any other),
 * *sd (may be NULL) its uncertainty: the MXFP8 recipe's GEMMs (sub 4), and
 * fp8 with 1x128 / 128x128 block scales (sub 1 on an fp8 GEMM) on NVIDIA
 * GPUs whose tensor cores take block scales, those with FP4 (Blackwell):
 * Transformer Engine runs that recipe there through MXFP8 ("On Blackwell
 * (SM100+), FP8 Block is emulated via MXFP8", its docs/examples/
 * gemm_profiling).
 */
static double block_scaled(const struct proj_pricer *p, const cvc_proj_op *o, double *sd)
{
	int emulated = (o->sub & 1) && o->dtype == CVC_PROJ_FP8 && proj_sm100(p);

	if (sd)
		*sd = 0;
	/* 1x128 block scales on Hopper: DeepGEMM's measured kernels, a
	 * weight gradient's (sub 8) as DeepSeek's trace measures it */
	if ((o->sub & 1) && o->dtype == CVC_PROJ_FP8 && p->blockfp8) {
		double f = cvc_model_blockfp8_factor(p->blockfp8, o->k, sd), ws;

		if (o->sub & 8) {
			f *= cvc_model_blockfp8_wgrad_factor(&ws);
			if (sd)
				*sd = hypot(*sd, ws);
		}
		return f;
	}
	return (o->sub & 4) || emulated ? cvc_model_mxfp8_factor(sd) : 1;
}

/* An NCCL collective's price on p's GPU, from p's memo when it was asked
 * before (struct proj_cmemo). */
static void coll_price(const struct proj_pricer *p, const cvc_proj_op *o, cvc_model_price *pr)
{
	uint64_t h = (uint64_t)o->bytes * 0x9e3779b97f4a7c15ull ^
		     ((uint64_t)o->group << 20) ^ ((uint64_t)o->per_node << 8) ^ (uint64_t)o->sub;
	struct proj_cmemo *m = p->cmemo;
	int i = (int)((h ^ (h >> 29)) % PROJ_CMEMO_SLOTS);

	if (m && m->e[i].full && m->e[i].bytes == o->bytes && m->e[i].sub == o->sub &&
	    m->e[i].group == o->group && m->e[i].per_node == o->per_node) {
		*pr = m->e[i].pr;
		return;
	}
	cvc_model_collective_price(p->ms_base, (cvc_model_coll)o->sub, o->bytes, o->group,
				   o->per_node, NULL, CVC_ALGO_AUTO, pr);
	if (m) {
		m->e[i].bytes = o->bytes;
		m->e[i].sub = o->sub, m->e[i].group = o->group, m->e[i].per_node = o->per_node;
		m->e[i].pr = *pr;
		m->e[i].full = 1;
	}
}

double proj_op_price(const struct proj_pricer *p, const cvc_proj_op *o, struct proj_unc *u)
{
	cvc_model_price pr;
	int c;
	double w;

	if (!u)
		return proj_op_s(p, o);
	note_op(p, o);
	switch (o->kind) {
	case CVC_PROJ_OP_GEMM:
		cvc_model_gemm_price(p->ms_scaled, o->m, o->n, o->k, o->b,
				     (cvc_hw_dtype)p->gemm_dt[o->dtype], &pr);
		/* a format whose GEMMs nobody measured (MXFP4, fp8 with block
		 * scales) is priced as its measured sibling: that carry widens
		 * the interval (lowprec.c) */
		if (o->sub & 1)
			pr.sigma = hypot(pr.sigma, cvc_model_format_carry_sigma());
		{ /* MXFP8: its block scales' measured cost */
			double sd;

			pr.us *= block_scaled(p, o, &sd);
			pr.sigma = hypot(pr.sigma, sd);
		}
		if (o->sub & 2) { /* grouped: few rows per group run slower */
			int ex = 0;

			pr.us *= cvc_model_grouped_slowdown((double)o->m, &ex);
			if (ex && pr.extrap > 0 && o->m > 0)
				pr.extrap = fmax(pr.extrap, 256.0 / (double)o->m);
		}
		c = PU_GEMM;
		break;
	case CVC_PROJ_OP_ATTN: {
		cvc_model_attn a;

		attn_of(p, o, &a);
		cvc_model_attention_price(p->ms_scaled, &a, &pr);
		c = PU_ATTN;
		break;
	}
	case CVC_PROJ_OP_MEM:
		cvc_model_membound_price(p->ms_base, o->bytes, (cvc_model_mem)o->sub, &pr);
		c = PU_MEM;
		break;
	case CVC_PROJ_OP_COLL:
		if (o->ep_backend != CVC_EP_NCCL)
			ep_price(p, o, &pr);
		else
			coll_price(p, o, &pr);
		if (p->used)
			note_used(p->used, p->gpu, o->sub, pr.origin, 1);
		c = o->comm >= 0 && o->comm < CVC_PROJ_COMM_N ? PU_COLL0 + o->comm : PU_COLL0;
		break;
	default:
		return 0;
	}
	if (!isfinite(pr.us))
		return pr.us;
	w = (o->count > 0 ? o->count : 0) * pr.us;
	u->t[c] += w;
	u->ts[c] += w * pr.sigma;
	if (pr.extrap == 0)
		u->tdef[c] += w;
	else if (w > 0 && pr.extrap > u->ext[c])
		u->ext[c] = pr.extrap;
	if (pr.carried)
		u->tcarry[c] += w;
	return 1e-6 * pr.us;
}

double proj_op_s(const struct proj_pricer *p, const cvc_proj_op *o)
{
	note_op(p, o);
	switch (o->kind) {
	case CVC_PROJ_OP_GEMM:
		return 1e-6 * cvc_model_gemm_us(p->ms_scaled, o->m, o->n, o->k, o->b,
						(cvc_hw_dtype)p->gemm_dt[o->dtype]) *
		       (o->sub & 2 ? cvc_model_grouped_slowdown((double)o->m, NULL) : 1) *
		       block_scaled(p, o, NULL);
	case CVC_PROJ_OP_ATTN: {
		cvc_model_attn a;

		attn_of(p, o, &a);
		return 1e-6 * cvc_model_attention_us(p->ms_scaled, &a);
	}
	case CVC_PROJ_OP_MEM:
		return 1e-6 * cvc_model_membound_us(p->ms_base, o->bytes, (cvc_model_mem)o->sub);
	case CVC_PROJ_OP_COLL: {
		/* the model charges the latency of the span too */
		const char *origin;
		double t;

		cvc_model_price pr;

		if (o->ep_backend != CVC_EP_NCCL)
			ep_price(p, o, &pr);
		else
			coll_price(p, o, &pr);
		t = pr.us;
		origin = pr.origin;
		if (p->used)
			note_used(p->used, p->gpu, o->sub, origin, 1);
		return 1e-6 * t;
	}
	default:
		return 0;
	}
}
