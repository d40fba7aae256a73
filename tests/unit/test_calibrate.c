/*
 * test_calibrate.c - calibration planning: the operator list agrees with
 * the projector (priced with the default models it reproduces the
 * projector's compute and communication times), buckets, the plan CSV
 * (no duplicates, every scenario operator covered, counts and the cost
 * factor recomputed here from the projector), the CSV reader's errors, and
 * `cvc calibrate` without a GPU.
 */
#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "cvc/cvc_calibrate.h"
#include "cvc/cvc_model.h"
#include "cvc/cvc_project.h"
#include "projector/proj_internal.h"
#include "testutil.h"

/* ---- pricing the operator list like the projector ---------------------------- */

struct mset {
	char gpu[64];
	double scale[5];
	cvc_modelset *scaled, *base;
};

struct price {
	cvc_hw_catalog *cat;
	struct mset ms[8];
	int nms;
	const struct mset *cur;
	double stage[3]; /* compute seconds per stage tag */
	double comm_s;
	double ends_comm; /* of comm_s: the first and last stages' own collectives */
	uint64_t nops;
	uint64_t checked, worst_i;
	double worst;
};

static const struct mset *mset_for(struct price *p, const cvc_proj_scenario *sc)
{
	double s[5] = {sc->scale_compute, sc->scale_hbm_bw, sc->scale_hbm_cap, sc->scale_intra_bw,
		       sc->scale_inter_bw};
	const cvc_hw_spec *spec;
	cvc_hw_spec x;
	struct mset *m;

	for (int i = 0; i < p->nms; i++)
		if (strcmp(p->ms[i].gpu, sc->gpu) == 0 && memcmp(p->ms[i].scale, s, sizeof s) == 0)
			return &p->ms[i];
	cr_assert_lt(p->nms, 8);
	m = &p->ms[p->nms++];
	snprintf(m->gpu, sizeof m->gpu, "%s", sc->gpu);
	memcpy(m->scale, s, sizeof s);
	spec = cvc_hw_catalog_lookup(p->cat, sc->gpu);
	cr_assert(spec, "%s", sc->gpu);
	x = *spec;
	{
		/* what each of the scale's five factors multiplies, after compute */
		double *const rest[4] = {&x.hbm_bw_gbps, &x.hbm_gb, &x.intra_bw_gbps,
					 &x.inter_bw_gbps};

		for (int d = 0; d < CVC_HW_NDTYPE; d++)
			x.peak_tflops[d] *= s[0];
		for (int k = 0; k < 4; k++)
			*rest[k] *= s[1 + k];
	}
	cr_assert_eq(cvc_modelset_new(NULL, p->cat, &x, &m->scaled), CVC_OK);
	cr_assert_eq(cvc_modelset_new(NULL, p->cat, spec, &m->base), CVC_OK);
	return m;
}

static int price_op(void *user, const cvc_cal_shape *s, double count, int stage)
{
	struct price *p = user;
	const struct mset *m = p->cur;
	double t = 0;

	p->nops++;
	switch (s->kind) {
	case CVC_CAL_GEMM:
		t = cvc_model_gemm_us(m->scaled, s->m, s->n, s->k, s->b, (cvc_hw_dtype)s->dtype) *
		    (s->sub & 2 ? cvc_model_grouped_slowdown((double)s->m, NULL) : 1);
		break;
	case CVC_CAL_ATTN: {
		cvc_model_attn a = {s->b, s->heads, s->kv_heads, s->m, s->n, s->k, s->causal,
				    s->backward, (cvc_hw_dtype)s->dtype, s->sub};

		t = cvc_model_attention_us(m->scaled, &a);
		break;
	}
	case CVC_CAL_MEM:
		t = cvc_model_membound_us(m->base, s->bytes, (cvc_model_mem)s->sub);
		break;
	case CVC_CAL_COLL:
		/* the model charges the span's latency itself */
		t = count * 1e-6 * cvc_model_collective_us(m->base, (cvc_model_coll)s->sub, s->bytes,
							   s->group, s->per_node, NULL);
		p->comm_s += t;
		if (stage)
			p->ends_comm += t;
		return 0;
	}
	p->stage[stage] += count * t * 1e-6;
	return 0;
}

static double rel(double a, double b)
{
	return fabs(a - b) / fmax(fabs(b), 1e-12);
}

/* The largest ratio, over the layer kinds, of the most layers of a kind
 * a pipeline stage holds to the fewest a stage holding any holds (1 when
 * every stage holding a kind holds as many); *mixed: some stage holds
 * layers of more than one kind. */
static double kinds_ratio(const cvc_proj_scenario *sc, const double fml[3], int *mixed)
{
	double hi[PROJ_NKIND] = {0}, lo[PROJ_NKIND], ratio = 1;

	*mixed = 0;
	for (int kd = 0; kd < PROJ_NKIND; kd++)
		lo[kd] = INFINITY;
	for (double i = 0; i < sc->pp; i++) {
		double k[PROJ_NKIND];
		int kinds = 0;

		proj_stage_kinds(sc, fml, i, k);
		for (int kd = 0; kd < PROJ_NKIND; kd++) {
			kinds += k[kd] > 0;
			hi[kd] = fmax(hi[kd], k[kd]);
			if (k[kd] > 0)
				lo[kd] = fmin(lo[kd], k[kd]);
		}
		*mixed |= kinds > 1;
	}
	for (int kd = 0; kd < PROJ_NKIND; kd++)
		if (hi[kd] > 0 && lo[kd] < hi[kd])
			ratio = fmax(ratio, hi[kd] / lo[kd]);
	return ratio;
}

/* With layers of several kinds the plan's stage (most parameters) may not
 * be the slowest (MoE layers cost more per parameter than dense first
 * layers): its compute is within ratio below the projector's slowest
 * stage and at most the ends' operators above it.  0 when so, else 1. */
static double mixed_compute_off(double comp, double proj, double ratio, double ends)
{
	return comp * ratio >= proj * (1 - 1e-9) && comp <= proj + ends ? 0 : 1;
}

static int check_scn(void *user, const cvc_proj_scenario *sc, const cvc_proj_result *r)
{
	struct price *p = user;
	double comp, e1, e2;

	if (!r->valid)
		return 0;
	p->cur = mset_for(p, sc);
	memset(p->stage, 0, sizeof p->stage);
	p->comm_s = p->ends_comm = 0;
	cvc_cal_scenario_ops(sc, price_op, p);
	comp = p->stage[0] + (sc->pp > 1 ? fmax(p->stage[1], p->stage[2])
					 : p->stage[1] + p->stage[2]);
	/* the gaps between kernels, the GPU waiting on the host and the SMs
	 * held back for TP overlap are booked apart (gaps_s, host_s,
	 * contention_s): not operators to measure */
	e1 = rel(comp, r->compute_s - r->contention_s - r->gaps_s - r->host_s);
	e2 = rel(p->comm_s, r->comm_s - r->comm_type_s[CVC_PROJ_COMM_XC]);
	/* the plan prices both ends' collectives (the vocabulary-parallel
	 * embedding's and output layer's), a pipeline's slowest stage at most
	 * one end's */
	if (sc->pp > 1) {
		double cm = r->comm_s - r->comm_type_s[CVC_PROJ_COMM_XC];

		e2 = cm <= p->comm_s * (1 + 1e-9) && p->comm_s - p->ends_comm <= cm * (1 + 1e-9)
			     ? 0 : rel(p->comm_s, cm);
	}
	if (fmax(e1, e2) > p->worst) {
		p->worst = fmax(e1, e2);
		p->worst_i = sc->index;
	}
	{
		double f, m, l, proj = r->compute_s - r->contention_s - r->gaps_s - r->host_s;
		double ends = fmax(p->stage[1], p->stage[2]) * (1 + 1e-9);

		if (!proj_stage_layers(sc, &f, &m, &l) && (f != m || l != m)) {
			/* uneven stages (Llama 3.1 405B's 126 layers on 8: the
			 * embedding and the loss count as a layer): the plan
			 * counts the heaviest stage's layers and both ends' own
			 * operators, so it bounds the slowest stage from above,
			 * by at most the larger end's operators */
			double cm = r->comm_s - r->comm_type_s[CVC_PROJ_COMM_XC];
			double most = fmax(f, fmax(m, l)), least = fmin(f, fmin(m, l));

			e1 = proj <= comp * (1 + 1e-9) && comp <= proj + ends ? 0 : 1;
			/* the per-layer collectives the same way: the heaviest
			 * stage's layers against the slowest stage's.  With
			 * layers of several kinds (DeepSeek-V3's dense first
			 * layers) the heaviest stage by parameters (the plan's)
			 * and the slowest by time (the projector's) may hold
			 * different counts of the kind that communicates most
			 * (MoE layers' all-to-alls): each within the extremes of
			 * that kind's count over the stages, so the two within
			 * their ratio of each other */
			double fml[3] = {f, m, l}, ratio;
			int mixed;

			ratio = fmax(most / least, kinds_ratio(sc, fml, &mixed));
			/* the compute too, with layers of several kinds */
			if (mixed)
				e1 = mixed_compute_off(comp, proj, ratio, ends);
			e2 = (!mixed ? cm <= p->comm_s * (1 + 1e-9)
				     : cm <= p->comm_s * ratio * (1 + 1e-9)) &&
					     p->comm_s - p->ends_comm <= cm * ratio * (1 + 1e-9)
				     ? 0
				     : 1;
		} else if (sc->pp > 1 && proj_pp_layout_on(sc)) {
			/* a pipeline layout's stages (DeepSeek-V3's 61 layers in
			 * the balanced layout): the same bound by kind */
			double cm = r->comm_s - r->comm_type_s[CVC_PROJ_COMM_XC], fml[3] = {0, 0, 0};
			int mixed;
			double ratio = kinds_ratio(sc, fml, &mixed);

			e2 = cm <= p->comm_s * ratio * (1 + 1e-9) &&
					     p->comm_s - p->ends_comm <= cm * ratio * (1 + 1e-9)
				     ? 0
				     : 1;
			/* the compute too, with layers of several kinds */
			if (mixed)
				e1 = mixed_compute_off(comp, proj, ratio, ends);
		}
		cr_expect_lt(e1, 1e-9, "scenario %llu (%s tp %g pp %g): compute %.9g vs projector %.9g",
			     (unsigned long long)sc->index, sc->model, sc->tp, sc->pp, comp, proj);
	}
	cr_expect_lt(e2, 1e-9, "scenario %llu (%s tp %g pp %g zero %g): comm %.9g vs projector %.9g",
		     (unsigned long long)sc->index, sc->model, sc->tp, sc->pp, sc->zero, p->comm_s,
		     r->comm_s);
	p->checked++;
	return 0;
}

static void check_study(cvc_proj_study *st)
{
	struct price p;
	cvc_proj_ctx *ctx = NULL;

	memset(&p, 0, sizeof p);
	cr_assert_eq(cvc_hw_catalog_new(&p.cat), CVC_OK);
	cr_assert_eq(cvc_proj_ctx_new(NULL, &ctx), CVC_OK);
	cr_assert_eq(cvc_proj_study_run(st, ctx, CVC_PROJ_VALID_ONLY | CVC_PROJ_NO_MARGINAL,
					check_scn, &p, NULL),
		     CVC_OK);
	cr_assert_gt(p.checked, 0);
	cr_log_info("%llu scenarios, %llu operators, worst relative error %.2g (scenario %llu)",
		    (unsigned long long)p.checked, (unsigned long long)p.nops, p.worst,
		    (unsigned long long)p.worst_i);
	for (int i = 0; i < p.nms; i++) {
		cvc_modelset_free(p.ms[i].scaled);
		cvc_modelset_free(p.ms[i].base);
	}
	cvc_hw_catalog_free(p.cat);
	cvc_proj_ctx_free(ctx);
}

Test(calibrate, operators_reproduce_projector_default_study)
{
	cvc_proj_study *st = NULL;

	cr_assert_eq(cvc_proj_study_default(&st), CVC_OK);
	check_study(st);
	cvc_proj_study_free(st);
}

/* Everything the default study leaves out: unfused attention with
 * selective recompute, MoE with ep (routed experts of their own width,
 * shared experts), context and sequence parallelism,
 * interleaving, fp32/fp16, ZeRO 0 and 2, SGD, local SGD; layers of
 * several kinds (Mamba, attention-only, MLP-only and MoE-only blocks,
 * local attention sliding and chunked) on one pipeline stage. */
Test(calibrate, operators_reproduce_projector_other_features)
{
	static const char y[] =
		"name: features\n"
		"scenarios:\n"
		"  - model: {layers: 8, hidden: 1024, heads: 16, seq: 2048, vocab: 32000}\n"
		"    training: {global_batch: 64, micro_batch: [1, 2], dtype: [fp16, fp32],\n"
		"               attention: unfused, recompute: [none, selective, full],\n"
		"               zero: [0, 2], optimizer: [adam, sgd]}\n"
		"    parallelism: {tp: [1, 2], pp: [1, 2], vpp: [1, 2], sp: [false, true]}\n"
		"    hardware: {gpu: H100-SXM, gpus: 16, gpus_per_node: 4}\n"
		"    comm: {local_sgd_h: [1, 4], bucket_mb: 3}\n"
		"  - model: {layers: 4, hidden: 2048, heads: 16, kv_heads: 4, ffn_type: swiglu,\n"
		"            seq: 8192, experts: 8, top_k: 2, moe_ffn: [0, 1024],\n"
		"            shared_ffn: [0, 2048]}\n"
		"    training: {global_batch: 32, recompute: [selective, full]}\n"
		"    parallelism: {tp: 2, cp: [1, 2], ep: [1, 2, 4]}\n"
		"    hardware: {gpu: A100-SXM-80GB, gpus: 32, scale: {intra_bw: 2, inter_bw: 3}}\n"
		"    comm: {clusters: [1, 2]}\n"
		/* layers of several kinds: a hybrid pattern (Mamba, attention,
		 * MLP and MoE blocks), local attention, gated activations */
		"  - model: {layers: 8, hidden: 1024, heads: 16, kv_heads: 4, seq: 4096, vocab: 32000,\n"
		"            ffn_type: [relu2, geglu], layer_pattern: M-*EM-ME, experts: 4,\n"
		"            top_k: 2, mamba_heads: 32, mamba_groups: 4}\n"
		"    training: {global_batch: 32, recompute: [selective, full], dtype: [bf16, fp8],\n"
		"               zero: [0, 3]}\n"
		"    parallelism: {tp: [1, 2], sp: [false, true], ep: [1, 2]}\n"
		"    hardware: {gpu: H100-SXM, gpus: 16}\n"
		"  - model: {layers: 6, hidden: 1024, heads: 16, kv_heads: 4, seq: 4096, vocab: 32000,\n"
		"            ffn_type: swiglu, window: [128, 1024], window_skip_freq: [0, 2],\n"
		"            window_chunked: [false, true], experts: [1, 4], top_k: 2,\n"
		"            moe_first_dense: 1}\n"
		"    training: {global_batch: 32, recompute: [selective, full]}\n"
		"    parallelism: {tp: [1, 2], cp: [1, 2]}\n"
		"    hardware: {gpu: H100-SXM, gpus: 16}\n";
	cvc_proj_study *st = NULL;

	cr_assert_eq(cvc_proj_study_parse("f.yaml", y, strlen(y), &st), CVC_OK, "%s",
		     cvc_proj_study_errmsg(st));
	check_study(st);
	cvc_proj_study_free(st);
}

/* ---- the projector's public list: communication per type ---------------------------- */

struct bytype {
	struct price pr;
	double comm[CVC_PROJ_COMM_N];
	double ends[CVC_PROJ_COMM_N]; /* of comm: the first and last stages' own */
	uint64_t ops, colls, checked;
	int bad;
};

static int type_op(void *user, const cvc_proj_op *o)
{
	struct bytype *b = user;
	double t;

	b->ops++;
	if (!(o->count > 0) || o->stage < CVC_PROJ_STAGE_ALL || o->stage > CVC_PROJ_STAGE_LAST)
		b->bad++;
	if (o->kind != CVC_PROJ_OP_COLL) {
		if (o->comm != -1)
			b->bad++;
		return 0;
	}
	/* a stage's own collectives: the vocabulary-parallel embedding's and
	 * output layer's, tensor parallel */
	if (o->comm < 0 || o->comm >= CVC_PROJ_COMM_N || o->comm == CVC_PROJ_COMM_XC ||
	    (o->stage != CVC_PROJ_STAGE_ALL && o->comm != CVC_PROJ_COMM_TP))
		return b->bad++, 0;
	b->colls++;
	t = o->count * 1e-6 * cvc_model_collective_us(b->pr.cur->base, (cvc_model_coll)o->sub,
						      o->bytes, o->group, o->per_node, NULL);
	b->comm[o->comm] += t;
	if (o->stage != CVC_PROJ_STAGE_ALL)
		b->ends[o->comm] += t;
	return 0;
}

static int type_scn(void *user, const cvc_proj_scenario *sc, const cvc_proj_result *r)
{
	struct bytype *b = user;

	if (!r->valid)
		return 0;
	b->pr.cur = mset_for(&b->pr, sc);
	memset(b->comm, 0, sizeof b->comm);
	memset(b->ends, 0, sizeof b->ends);
	cr_assert_gt(cvc_proj_scenario_ops(sc, type_op, b), 0);
	for (int k = 0; k < CVC_PROJ_COMM_N; k++) {
		double want = k == CVC_PROJ_COMM_XC ? 0 : r->comm_type_s[k];

		/* a pipeline's slowest stage holds one end at most: the list
		 * holds both */
		if (sc->pp > 1 && want <= b->comm[k] * (1 + 1e-9) &&
		    b->comm[k] - b->ends[k] <= want * (1 + 1e-9))
			want = b->comm[k];
		cr_expect_lt(rel(b->comm[k], want), 1e-9,
			     "scenario %llu: %s comm %.9g vs projector %.9g",
			     (unsigned long long)sc->index, cvc_proj_comm_name(k), b->comm[k], want);
	}
	b->checked++;
	return 0;
}

static int stop_at_3(void *user, const cvc_proj_op *o)
{
	(void)o;
	return ++*(int *)user >= 3;
}

/* cvc_proj_scenario_ops() books every collective under the communication
 * type the projector reports it in: priced per type, the list reproduces
 * each comm_<type>_s; compute ops carry no type; fn can stop the list. */
Test(calibrate, projector_ops_reproduce_comm_per_type)
{
	static const char y[] =
		"name: types\n"
		"scenarios:\n"
		"  - model: {layers: 8, hidden: 2048, heads: 16, kv_heads: 4, ffn_type: swiglu,\n"
		"            seq: 4096, vocab: 32000, experts: [1, 8], top_k: 2}\n"
		"    training: {global_batch: 64, zero: [0, 1, 3], recompute: [none, full]}\n"
		"    parallelism: {tp: [1, 4], pp: [1, 2], vpp: [1, 2], cp: [1, 2], ep: [1, 2],\n"
		"                  sp: [false, true]}\n"
		"    hardware: {gpu: H100-SXM, gpus: [64, 4096], scale: {inter_bw: [1, 2]}}\n"
		"    comm: {bucket_mb: [0, 25], local_sgd_h: [1, 4], clusters: [1, 2]}\n";
	cvc_proj_study *st = NULL;
	cvc_proj_ctx *ctx = NULL;
	cvc_proj_scenario sc;
	struct bytype b;
	int calls = 0;

	memset(&b, 0, sizeof b);
	cr_assert_eq(cvc_hw_catalog_new(&b.pr.cat), CVC_OK);
	cr_assert_eq(cvc_proj_ctx_new(NULL, &ctx), CVC_OK);
	cr_assert_eq(cvc_proj_study_parse("t.yaml", y, strlen(y), &st), CVC_OK, "%s",
		     cvc_proj_study_errmsg(st));
	cr_assert_eq(cvc_proj_study_run(st, ctx, CVC_PROJ_VALID_ONLY | CVC_PROJ_NO_MARGINAL,
					type_scn, &b, NULL),
		     CVC_OK);
	cr_assert_gt(b.checked, 100);
	cr_assert_gt(b.colls, 0);
	cr_assert_eq(b.bad, 0, "%d operators with a bad count, stage or comm type", b.bad);
	cr_log_info("%llu scenarios, %llu operators, %llu collectives",
		    (unsigned long long)b.checked, (unsigned long long)b.ops,
		    (unsigned long long)b.colls);

	cvc_proj_scenario_default(&sc);
	cr_assert_eq(cvc_proj_scenario_ops(&sc, stop_at_3, &calls), 3);
	cr_assert_eq(calls, 3);
	sc.global_batch = 0; /* no micro-batches: nothing runs */
	cr_assert_eq(cvc_proj_scenario_ops(&sc, stop_at_3, &calls), 0);

	for (int i = 0; i < b.pr.nms; i++) {
		cvc_modelset_free(b.pr.ms[i].scaled);
		cvc_modelset_free(b.pr.ms[i].base);
	}
	cvc_hw_catalog_free(b.pr.cat);
	cvc_proj_study_free(st);
	cvc_proj_ctx_free(ctx);
}

/* ---- buckets ------------------------------------------------------------------------ */

static int is_pow2(int64_t x)
{
	return x > 0 && (x & (x - 1)) == 0;
}

Test(calibrate, buckets)
{
	cvc_cal_opts o;
	cvc_cal_shape in, out;

	cvc_cal_opts_default(&o);
	/* every GEMM dim: the smallest 128-multiple >= it (power of 2 <= 128) */
	for (int64_t d = 1; d < 2000; d += 7) {
		memset(&in, 0, sizeof in);
		in.kind = CVC_CAL_GEMM;
		in.b = d % 5 + 1, in.m = d, in.n = 3 * d + 1, in.k = 128;
		cr_assert_null(cvc_cal_bucket(&in, &o, &out));
		for (int i = 0; i < 2; i++) {
			int64_t x = i ? in.n : in.m, y = i ? out.n : out.m;

			cr_assert_geq(y, x);
			if (x > 128)
				cr_assert(y % 128 == 0 && y - x < 128, "%lld -> %lld", (long long)x,
					  (long long)y);
			else
				cr_assert(is_pow2(y) && y < 2 * x, "%lld -> %lld", (long long)x,
					  (long long)y);
		}
		cr_assert_eq(out.k, 128);
		cr_assert(is_pow2(out.b) && out.b >= in.b && out.b < 2 * in.b);
	}
	/* collectives: one node of 8 hosts intra-node groups up to 8 */
	memset(&in, 0, sizeof in);
	in.kind = CVC_CAL_COLL;
	in.sub = CVC_MODEL_ALLREDUCE;
	in.bytes = 3000000;
	in.group = 8, in.per_node = 8;
	cr_assert_null(cvc_cal_bucket(&in, &o, &out));
	cr_assert_eq(out.bytes, 4194304);
	cr_assert_eq(out.group, 8);
	/* one rank per node or several nodes: not on one node */
	in.group = 64, in.per_node = 1;
	cr_assert_not_null(cvc_cal_bucket(&in, &o, &out));
	in.per_node = 8;
	cr_assert_not_null(cvc_cal_bucket(&in, &o, &out));
	/* 4 nodes of 8: a 64-rank hierarchical group shrinks to 32 on 4 nodes */
	o.gpus = 32;
	cr_assert_null(cvc_cal_bucket(&in, &o, &out));
	cr_assert_eq(out.group, 32);
	cr_assert_eq(out.per_node, 8);
	in.per_node = 1;
	cr_assert_null(cvc_cal_bucket(&in, &o, &out));
	cr_assert_eq(out.group, 4);
	cr_assert_eq(out.per_node, 1);
	/* 8-rank group on 4-GPU nodes stays hierarchical at 2 nodes x 4 */
	o.gpus_per_node = 4;
	in.group = 8, in.per_node = 8;
	cr_assert_null(cvc_cal_bucket(&in, &o, &out));
	cr_assert_eq(out.group, 4); /* fits a 4-GPU node */
	cr_assert_eq(out.per_node, 4);
}

/* ---- the plan CSV against the study ------------------------------------------------ */

struct csvrow {
	char key[256];
	double est_gpu_s;
	long long uses;
};

static int cmp_row(const void *a, const void *b)
{
	return strcmp(((const struct csvrow *)a)->key, ((const struct csvrow *)b)->key);
}

/* Same formatting the test applies to shapes it buckets itself. */
static void key_of(const cvc_cal_shape *s, char *buf, size_t cap)
{
	static const char *const mem[] = {"elementwise", "norm", "reduction", "copy", "gather",
					  "optimizer"};
	const char *dt = s->kind <= CVC_CAL_ATTN ? cvc_hw_dtype_name((cvc_hw_dtype)s->dtype) : "";
	const char *sub = s->kind == CVC_CAL_MEM    ? mem[s->sub]
			  : s->kind == CVC_CAL_COLL ? cvc_model_coll_name((cvc_model_coll)s->sub)
			  : s->kind == CVC_CAL_ATTN
				  ? cvc_model_attn_backend_name((cvc_model_attn_backend)s->sub)
			  : (s->sub & 2) ? "grouped" /* MoE experts' GEMMs (db/calshape.c) */
					 : "";

	snprintf(buf, cap, "%s,%s,%s,%lld,%lld,%lld,%lld,%lld,%lld,%d,%d,%lld,%d,%d",
		 cvc_cal_kind_name(s->kind), dt, sub, (long long)s->b, (long long)s->m,
		 (long long)s->n, (long long)s->k, (long long)s->heads, (long long)s->kv_heads,
		 s->causal, s->backward, (long long)s->bytes, s->group, s->per_node);
}

struct cover {
	struct csvrow *rows;
	size_t n;
	cvc_cal_opts o;
	uint64_t missing, ops, unmeasurable;
	double full_gpu_s;
	uint64_t scenarios;
	/* distinct exact shapes, as keys */
	char (*exact)[256];
	size_t nexact, capexact;
};

static int cover_op(void *user, const cvc_cal_shape *s, double count, int stage)
{
	struct cover *c = user;
	struct csvrow key;
	cvc_cal_shape b;

	(void)count;
	(void)stage;
	c->ops++;
	if (c->nexact == c->capexact) {
		c->capexact = c->capexact ? 2 * c->capexact : 4096;
		c->exact = realloc(c->exact, c->capexact * sizeof *c->exact);
		cr_assert(c->exact);
	}
	key_of(s, c->exact[c->nexact++], 256);
	if (cvc_cal_bucket(s, &c->o, &b)) {
		c->unmeasurable++;
		cr_assert_eq(s->kind, CVC_CAL_COLL, "only collectives may be unmeasurable");
		return 0;
	}
	key_of(&b, key.key, sizeof key.key);
	if (!bsearch(&key, c->rows, c->n, sizeof *c->rows, cmp_row)) {
		c->missing++;
		cr_log_error("operator %s (bucket %s) is not in the plan", c->exact[c->nexact - 1],
			     key.key);
	}
	return 0;
}

static int cover_scn(void *user, const cvc_proj_scenario *sc, const cvc_proj_result *r)
{
	struct cover *c = user;

	if (!r->valid)
		return 0;
	c->scenarios++;
	c->full_gpu_s += 10 * r->step_s * sc->gpus;
	cvc_cal_scenario_ops(sc, cover_op, c);
	return 0;
}

static int cmp_key(const void *a, const void *b)
{
	return strcmp(a, b);
}

/* "gemm   221   217" -> the two numbers */
static void summary_line(const char *out, const char *kind, long long *exact, long long *planned)
{
	char pat[32];
	const char *p;

	snprintf(pat, sizeof pat, "\n%s ", kind);
	p = strstr(out, pat);
	cr_assert(p, "summary lacks '%s'", kind);
	cr_assert_eq(sscanf(p + strlen(pat), "%lld %lld", exact, planned), 2);
}

Test(calibrate, plan_csv_dedup_coverage_and_cost_factor)
{
	const char *dir = tu_tmpdir(), *csv = tu_path(dir, "plan.csv");
	char cmd[1024], *out = NULL, *err = NULL, *text, *line, *save = NULL;
	struct cover c;
	cvc_proj_study *st = NULL;
	cvc_proj_ctx *ctx = NULL;
	size_t len;
	double calib = 0, factor;
	long long ex, pl, tot_pl = 0, tot_ex_printed = 0;
	const char *p;

	memset(&c, 0, sizeof c);
	snprintf(cmd, sizeof cmd, "calibrate --plan --csv '%s'", csv);
	cr_assert_eq(tu_cvc(cmd, &out, &err), 0, "%s", err);
	text = tu_read(csv, &len);
	cr_assert(text);
	c.rows = calloc(tu_count_lines(text) + 1, sizeof *c.rows);
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *f = line;
		int commas = 0;

		if (strncmp(line, "kind,", 5) == 0)
			continue;
		/* the first 14 columns are the shape; then uses,scenarios,est_us,est_gpu_s */
		while (*f && commas < 14)
			commas += *f++ == ',';
		cr_assert_eq(commas, 14, "%s", line);
		snprintf(c.rows[c.n].key, sizeof c.rows[c.n].key, "%.*s", (int)(f - line - 1), line);
		cr_assert_eq(sscanf(f, "%lld,%*d,%*g,%lg", &c.rows[c.n].uses, &c.rows[c.n].est_gpu_s), 2,
			     "%s", f);
		calib += c.rows[c.n].est_gpu_s;
		c.n++;
	}
	cr_assert_gt(c.n, 0);
	qsort(c.rows, c.n, sizeof *c.rows, cmp_row);
	for (size_t i = 1; i < c.n; i++)
		cr_assert_neq(strcmp(c.rows[i - 1].key, c.rows[i].key), 0, "duplicate row %s",
			      c.rows[i].key);

	/* every operator of every valid scenario maps to a planned row */
	cvc_cal_opts_default(&c.o);
	cr_assert_eq(cvc_proj_study_default(&st), CVC_OK);
	cr_assert_eq(cvc_proj_ctx_new(NULL, &ctx), CVC_OK);
	cr_assert_eq(cvc_proj_study_run(st, ctx, CVC_PROJ_VALID_ONLY | CVC_PROJ_NO_MARGINAL,
					cover_scn, &c, NULL),
		     CVC_OK);
	cr_assert_eq(c.missing, 0);
	cr_assert_gt(c.ops, c.n, "dedup: %llu operators, %zu rows", (unsigned long long)c.ops, c.n);

	/* the printed counts: planned = rows of each kind, exact = distinct
	 * exact shapes counted here */
	qsort(c.exact, c.nexact, sizeof *c.exact, cmp_key);
	for (int k = 0; k < CVC_CAL_NKIND; k++) {
		const char *kn = cvc_cal_kind_name(k);
		long long rows = 0, distinct = 0;
		size_t kl = strlen(kn);

		for (size_t i = 0; i < c.n; i++)
			rows += strncmp(c.rows[i].key, kn, kl) == 0 && c.rows[i].key[kl] == ',';
		for (size_t i = 0; i < c.nexact; i++)
			if (strncmp(c.exact[i], kn, kl) == 0 && c.exact[i][kl] == ',' &&
			    (i == 0 || strcmp(c.exact[i], c.exact[i - 1]) != 0))
				distinct++;
		summary_line(out, kn, &ex, &pl);
		cr_expect_eq(pl, rows, "%s planned: printed %lld, csv %lld", kn, pl, rows);
		cr_expect_eq(ex, distinct, "%s exact: printed %lld, counted %lld", kn, ex, distinct);
		tot_pl += pl;
		tot_ex_printed += ex;
	}
	cr_assert_eq((size_t)tot_pl, c.n);
	cr_assert_lt(tot_pl, tot_ex_printed, "bucketing merges nothing");

	/* scenarios and the cost factor, from the projector's step times */
	p = strstr(out, "study 'default': ");
	cr_assert(p);
	cr_assert_eq(strtoull(p + 17, NULL, 10), c.scenarios);
	p = strstr(out, "profiling cost reduction: ");
	cr_assert(p, "%s", out);
	factor = strtod(p + 26, NULL);
	cr_assert_lt(rel(factor, c.full_gpu_s / calib), 1e-4, "printed %g, recomputed %g / %g",
		     factor, c.full_gpu_s, calib);
	cr_assert_gt(factor, 1);
	cr_log_info("%zu planned shapes for %llu operators of %llu scenarios; factor %.3g",
		    c.n, (unsigned long long)c.ops, (unsigned long long)c.scenarios, factor);

	cvc_proj_ctx_free(ctx);
	cvc_proj_study_free(st);
	free(c.exact);
	free(c.rows);
	free(text);
	free(out);
	free(err);
}

/* More GPUs make more collectives measurable, never fewer. */
Test(calibrate, more_nodes_measure_more_collectives)
{
	cvc_proj_study *st = NULL;
	cvc_proj_ctx *ctx = NULL;
	uint64_t prev_unm = UINT64_MAX, prev_coll = 0, first_unm = 0;

	cr_assert_eq(cvc_proj_study_default(&st), CVC_OK);
	cr_assert_eq(cvc_proj_ctx_new(NULL, &ctx), CVC_OK);
	for (int g = 8; g <= 128; g *= 4) {
		cvc_cal_opts o;
		cvc_cal_plan *p = NULL;
		cvc_cal_summary s;

		cvc_cal_opts_default(&o);
		o.gpus = g;
		cr_assert_eq(cvc_cal_plan_new(&o, &p), CVC_OK);
		cr_assert_eq(cvc_cal_plan_study(p, st, ctx), CVC_OK, "%s", cvc_cal_plan_errmsg(p));
		cvc_cal_plan_summary(p, &s);
		cr_assert_leq(s.unmeasurable, prev_unm);
		cr_assert_geq(s.planned[CVC_CAL_COLL], prev_coll);
		if (g == 8)
			first_unm = s.unmeasurable;
		prev_unm = s.unmeasurable;
		prev_coll = s.planned[CVC_CAL_COLL];
		cvc_cal_plan_free(p);
	}
	cr_assert_gt(first_unm, 0, "one node cannot host the inter-node collectives");
	cr_assert_lt(prev_unm, first_unm);
	cvc_proj_ctx_free(ctx);
	cvc_proj_study_free(st);
}

/* ---- plan CSV reader ----------------------------------------------------------------- */

Test(calibrate, csv_round_trip)
{
	const char *dir = tu_tmpdir(), *path = tu_path(dir, "p.csv");
	cvc_proj_study *st = NULL;
	cvc_proj_ctx *ctx = NULL;
	cvc_cal_plan *p = NULL;
	cvc_cal_shape *v = NULL;
	size_t n = 0;
	char err[256];
	FILE *f;

	cr_assert_eq(cvc_proj_study_default(&st), CVC_OK);
	cr_assert_eq(cvc_proj_ctx_new(NULL, &ctx), CVC_OK);
	cr_assert_eq(cvc_cal_plan_new(NULL, &p), CVC_OK);
	cr_assert_eq(cvc_cal_plan_study(p, st, ctx), CVC_OK);
	f = fopen(path, "w");
	cr_assert(f);
	cvc_cal_plan_write_csv(p, f);
	fclose(f);
	cr_assert_eq(cvc_cal_plan_read_csv(path, &v, &n, err, sizeof err), CVC_OK, "%s", err);
	cr_assert_eq(n, cvc_cal_plan_count(p));
	for (size_t i = 0; i < n; i++)
		cr_assert(cvc_cal_shape_eq(&v[i], &cvc_cal_plan_at(p, i)->shape), "row %zu", i);
	free(v);
	cvc_cal_plan_free(p);
	cvc_proj_ctx_free(ctx);
	cvc_proj_study_free(st);
}

static void read_bad(const char *text, const char *want)
{
	const char *dir = tu_tmpdir(), *path = tu_path(dir, "bad.csv");
	cvc_cal_shape *v = NULL;
	size_t n = 0;
	char err[512];

	cr_assert_eq(tu_write(path, text, strlen(text)), 0);
	cr_assert_eq(cvc_cal_plan_read_csv(path, &v, &n, err, sizeof err), CVC_ERR_FORMAT,
		     "accepted: %s", text);
	cr_assert_null(v);
	cr_assert(strstr(err, want), "message '%s' lacks '%s'", err, want);
	cr_assert(strstr(err, "bad.csv"), "message '%s' does not name the file", err);
}

#define HDR "kind,dtype,sub,b,m,n,k,heads,kv_heads,causal,backward,bytes,group,per_node\n"

Test(calibrate, csv_reader_rejects_bad_rows)
{
	read_bad("", "line 1: expected a calibration plan header");
	read_bad("kind,dtype\n", "line 1: expected a calibration plan header with column 'sub'");
	read_bad(HDR "gemm,bf16,,1,128,128,128,0,0,0,0,0,0,0\nconv,bf16,,1,1,1,1,0,0,0,0,0,0,0\n",
		 "line 3: expected a kind");
	read_bad(HDR "gemm,bf16,,1,128,x,128,0,0,0,0,0,0,0\n", "line 2: expected a count");
	read_bad(HDR "gemm,bf17,,1,128,128,128,0,0,0,0,0,0,0\n", "line 2: expected a dtype");
	read_bad(HDR "gemm,bf16,,1,0,128,128,0,0,0,0,0,0,0\n", "line 2: expected sizes");
	read_bad(HDR "gemm,bf16,,1,128,128\n", "line 2: expected 14 fields");
	read_bad(HDR "membound,,blur,0,0,0,0,0,0,0,0,4096,0,0\n", "expected a memory-bound class");
	read_bad(HDR "collective,,allreduce,0,0,0,0,0,0,0,0,4096,1,1\n", "group >= 2");
	read_bad(HDR "collective,,allreduce,0,0,0,0,0,0,0,0,-5,8,8\n", "expected a count");
	read_bad(HDR "collective,,allreduce,0,0,0,0,0,0,0,0,99999999999999999999,8,8\n",
		 "expected a count");
}

/* ---- no GPU ---------------------------------------------------------------------------- */

static int have_gpu(void)
{
	typedef int (*init_fn)(unsigned);
	void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
	init_fn cu_init;
	int ok;

	if (!h)
		return 0;
	*(void **)&cu_init = dlsym(h, "cuInit");
	ok = cu_init && cu_init(0) == 0;
	dlclose(h);
	return ok;
}

Test(calibrate, without_gpu_one_line_exit_2)
{
	char *out = NULL, *err = NULL;
	int rc;

	if (have_gpu())
		cr_skip_test("a GPU is present: the no-GPU path cannot be exercised");
	rc = tu_cvc("calibrate", &out, &err);
	cr_assert_eq(rc, 2, "exit %d: %s", rc, err);
	cr_assert_eq(tu_count_lines(err), 1, "%s", err);
	cr_assert(strstr(err, "error: calibrate: no GPU here"), "%s", err);
	cr_assert_str_empty(out);
	free(out);
	free(err);
}
