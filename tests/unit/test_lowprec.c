/*
 * test_lowprec.c - the next GPUs as they run: the layers' GEMMs in fp8
 * under each scaling recipe, NVFP4 and MXFP4, each pricing the quantize
 * work its source describes (projector/lowprec.c, docs/MODELS.md "FP4 and
 * the FP8 recipes"); and the NVLink domain apart from the host, a
 * communication group priced by which of its peers share the domain
 * (docs/SCENARIOS.md "hardware").
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <criterion/criterion.h>

#include "cvc/cvc_model.h"
#include "cvc/cvc_project.h"
#include "projector/ctx.h"
#include "projector/proj_internal.h"
#include "testutil.h"

/* One scenario of text, with its result and its operator list summed by
 * kind: memory-bound bytes per class (count x bytes), GEMMs by sub. */
struct one {
	cvc_proj_scenario sc;
	cvc_proj_result r;
	int n;
	double mem[CVC_MODEL_NMEM];   /* count x bytes per class */
	double mem_n[CVC_MODEL_NMEM]; /* count per class */
	double gemm_sub1, gemm_all;   /* GEMM runs with sub 1, all GEMM runs */
	int coll_n;                   /* collectives of comm type `want` */
	cvc_proj_op coll[16];
	int want;
};

static int list_cb(void *user, const cvc_proj_op *o)
{
	struct one *s = user;

	if (o->kind == CVC_PROJ_OP_MEM && o->sub >= 0 && o->sub < CVC_MODEL_NMEM) {
		s->mem[o->sub] += o->count * (double)o->bytes;
		s->mem_n[o->sub] += o->count;
	} else if (o->kind == CVC_PROJ_OP_GEMM) {
		s->gemm_all += o->count;
		s->gemm_sub1 += (o->sub & 1) ? o->count : 0;
	} else if (o->kind == CVC_PROJ_OP_COLL && o->comm == s->want && s->coll_n < 16) {
		s->coll[s->coll_n++] = *o;
	}
	return 0;
}

static int one_cb(void *user, const cvc_proj_scenario *sc, const cvc_proj_result *r)
{
	struct one *s = user;

	if (s->n++ == 0) {
		s->sc = *sc;
		s->r = *r;
		cvc_proj_scenario_ops(sc, list_cb, s);
	}
	return 0;
}

static void one(const char *text, int want, struct one *s)
{
	memset(s, 0, sizeof *s);
	s->want = want;
	tu_study_run("t.yaml", text, 0, one_cb, s);
	cr_assert_eq(s->n, 1);
	cr_assert(s->r.valid, "%s: %s", text, s->r.reason);
}

/* A Llama-like dense model on 8 GPUs of gpu in dtype/recipe; 128
 * micro-batches, so the layers' casts outweigh the weights' (once per step)
 * 10^3 to 1. */
static void dense(const char *gpu, const char *dtype, const char *recipe, struct one *s)
{
	char text[1024];

	snprintf(text, sizeof text,
		 "model: {layers: 8, hidden: 4096, heads: 32, kv_heads: 8, ffn: 14336, "
		 "ffn_type: swiglu, seq: 4096, vocab: 128256}\n"
		 "training: {global_batch: 1024, micro_batch: 1, dtype: %s, fp8_recipe: %s}\n"
		 "hardware: {gpu: %s, gpus: 8, host_launch_us: 0}\n",
		 dtype, recipe, gpu);
	one(text, -1, s);
}

/*
 * Each recipe's quantize work, against the figures of its source
 * (projector/lowprec.c): the cast reads the 16-bit tensor once (2 B) and
 * writes the rowwise and columnwise layouts with their scales; a
 * per-tensor scale reads it once more first (a reduction of its own).
 *   fp8 delayed: 1 B, one fp32 scale per tensor: 4 B, no amax pass;
 *   fp8 current: the same + an amax pass of 2 B;
 *   mxfp8: 1 B + an E8M0 scale per 32 elements: 2 + 2 (1 + 1/32);
 *   fp8 blockwise: 1 B + an fp32 scale per 1x128 block: 2 + 2 (1 + 4/128);
 *   NVFP4: 1/2 B + an E4M3 scale per 16: 2 + 2 (1/2 + 1/16), and the
 *     global amax pass (2 B), which also gives the Hadamard-transformed
 *     copy's amax;
 *   MXFP4: 1/2 B + an E8M0 scale per 32: 2 + 2 (1/2 + 1/32), no pass.
 * The layer's operands are those of fp8 delayed (the existing recipe,
 * 4 B per element), so each recipe's elementwise bytes over delayed's are
 * its cast's over 4, and its reduction bytes are the amax passes.
 */
Test(lowprec, every_recipe_prices_its_quantize_work)
{
	static const struct {
		const char *dtype, *recipe;
		double cast, amax;
	} rc[] = {
		{"fp8", "current", 4, 2},
		{"fp8", "mxfp8", 2 + 2 * (1 + 1.0 / 32), 0},
		{"fp8", "blockwise", 2 + 2 * (1 + 4.0 / 128), 0},
		{"nvfp4", "delayed", 2 + 2 * (0.5 + 1.0 / 16), 2},
		{"mxfp4", "delayed", 2 + 2 * (0.5 + 1.0 / 32), 0},
	};
	struct one bf, d8, x;

	dense("GB200", "bf16", "delayed", &bf);
	dense("GB200", "fp8", "delayed", &d8);
	{
		/* delayed fp8's casts: the elementwise bytes it adds, no amax */
		double add = d8.mem[CVC_MODEL_MEM_ELEMENTWISE] - bf.mem[CVC_MODEL_MEM_ELEMENTWISE];

		cr_assert_gt(add, 0, "fp8 adds casts");
		cr_assert_float_eq(d8.mem[CVC_MODEL_MEM_REDUCTION], bf.mem[CVC_MODEL_MEM_REDUCTION],
				   1, "delayed scaling needs no amax pass");
		for (size_t i = 0; i < sizeof rc / sizeof rc[0]; i++) {
			double e, a;

			dense("GB200", rc[i].dtype, rc[i].recipe, &x);
			e = x.mem[CVC_MODEL_MEM_ELEMENTWISE] - bf.mem[CVC_MODEL_MEM_ELEMENTWISE];
			a = x.mem[CVC_MODEL_MEM_REDUCTION] - bf.mem[CVC_MODEL_MEM_REDUCTION];
			cr_log_info("%s/%s: casts %.4g B (delayed fp8 %.4g), amax %.4g B", rc[i].dtype,
				    rc[i].recipe, e, add, a);
			/* the layers' casts in proportion; the weights' differ
			 * (2D scales), a small part: within 0.2% */
			cr_expect(fabs(e / add - rc[i].cast / 4) < 2e-3 * rc[i].cast / 4,
				  "%s/%s: casts %.5g of delayed's, source says %.5g", rc[i].dtype,
				  rc[i].recipe, e / add, rc[i].cast / 4);
			cr_expect(fabs(a / add - rc[i].amax / 4) < 2e-3,
				  "%s/%s: amax passes %.5g of delayed's casts, source says %.5g",
				  rc[i].dtype, rc[i].recipe, a / add, rc[i].amax / 4);
		}
	}
}

/* Whether a scenario lists an elementwise operator of exactly `bytes`. */
struct find_mem {
	int64_t bytes;
	double count;
};

static int find_mem_cb(void *user, const cvc_proj_op *o)
{
	struct find_mem *f = user;

	if (o->kind == CVC_PROJ_OP_MEM && o->sub == CVC_MODEL_MEM_ELEMENTWISE &&
	    o->bytes == f->bytes)
		f->count += o->count;
	return 0;
}

static int find_mem_run(void *user, const cvc_proj_scenario *sc, const cvc_proj_result *r)
{
	cr_assert(r->valid, "%s", r->reason);
	cvc_proj_scenario_ops(sc, find_mem_cb, user);
	return 0;
}

/* Runs of the elementwise operator of `bytes` in text's one scenario. */
static double mem_runs(const char *text, double bytes)
{
	struct find_mem f = {(int64_t)bytes, 0};

	tu_study_run("t.yaml", text, 0, find_mem_run, &f);
	return f.count;
}

/*
 * Claim: the FFN's GEMM inputs that no norm makes are cast in kernels of
 * their own, forward, as Megatron-Core and Transformer Engine run them
 * (projector/lowprec.c proj_lowp_cast_ops(): the activation is Megatron's own
 * 16-bit bias-activation kernel, bias_activation_fusion on and
 * use_te_activation_func off in Megatron-Bridge's resolved performance
 * configs, and TE's Linear / GroupedLinear quantize their input).  By
 * hand, fp8 delayed (4 B per element cast), one micro-batch of T = 4096
 * tokens, tp 1, per layer and forward run:
 *   dense, 32 heads of 128 and an FFN of 14336: the attention output and
 *     the down projection's input, 4 x 4096 x (4096 + 14336) B;
 *   Qwen3-30B-A3B (h 2048, 32 heads of 128, experts of 768, top 8) on ep
 *     8, balanced: the attention output, the routed tokens' up and down
 *     projection inputs (32768 routed tokens),
 *     4 x (4096 x 4096 + 32768 x (2048 + 768)) B; with fp8 dispatches the
 *     up projection's input is cast once per token before the dispatch,
 *     4 x (4096 x 4096 + 4096 x 2048 + 32768 x 768) B.
 * Each op runs once per layer and micro-batch: 8 layers x 128 (dense, dp 8)
 * and 48 x 32 (MoE, global batch 256 over dp 8).
 */
Test(lowprec, ffn_inputs_cast_in_kernels_of_their_own)
{
	static const char dense_y[] =
		"model: {layers: 8, hidden: 4096, heads: 32, kv_heads: 8, ffn: 14336, "
		"ffn_type: swiglu, seq: 4096, vocab: 128256}\n"
		"training: {global_batch: 1024, micro_batch: 1, dtype: fp8, fp8_recipe: delayed}\n"
		"hardware: {gpu: H100-SXM, gpus: 8}\n";
	char moe_y[512];
	const char *moe_fmt =
		"model: {arch: qwen3-30b-a3b, seq: 4096}\n"
		"training: {global_batch: 256, micro_batch: 1, dtype: fp8, fp8_recipe: delayed}\n"
		"parallelism: {ep: 8}\n"
		"comm: {ep_dispatch_fp8: %s}\n"
		"hardware: {gpu: H100-SXM, gpus: 8}\n";

	cr_expect_eq(mem_runs(dense_y, 4.0 * 4096 * (4096 + 14336)), 8 * 128);
	snprintf(moe_y, sizeof moe_y, moe_fmt, "false");
	cr_expect_eq(mem_runs(moe_y, 4.0 * (4096.0 * 4096 + 32768.0 * (2048 + 768))), 48 * 32);
	snprintf(moe_y, sizeof moe_y, moe_fmt, "true");
	cr_expect_eq(mem_runs(moe_y, 4.0 * (4096.0 * 4096 + 4096.0 * 2048 + 32768.0 * 768)),
		     48 * 32);
}

/* FP4 is priced at its own peak (4x bf16 on Blackwell) through the measured
 * share; the layers in 16 bits (attention, logits) are not; a GPU without
 * FP4 tensor cores cannot run it, and a format nobody measured is priced
 * as its sibling with a wider interval. */
Test(lowprec, fp4_runs_faster_where_the_tensor_cores_have_it)
{
	struct one bf, f8, nv, mx, h;

	dense("GB200", "bf16", "delayed", &bf);
	dense("GB200", "fp8", "delayed", &f8);
	dense("GB200", "nvfp4", "delayed", &nv);
	dense("GB200", "mxfp4", "delayed", &mx);
	cr_assert_lt(nv.r.step_s, f8.r.step_s);
	cr_assert_lt(f8.r.step_s, bf.r.step_s);
	/* MFU against the dtype's own peak: fp4's is 4x bf16's */
	cr_assert_lt(nv.r.mfu, f8.r.mfu);
	cr_assert_eq(nv.gemm_sub1, 0, "NVFP4's GEMMs were measured");
	cr_assert_gt(mx.gemm_sub1, 0, "MXFP4's were not: sub 1");
	cr_assert_lt(mx.gemm_sub1, mx.gemm_all, "the router and logits stay bf16");
	{
		/* fp8 with 1x128 block scales moves what MXFP8 moves (4.0625 B
		 * per cast element) and on Blackwell runs through MXFP8's GEMMs,
		 * but nobody measured it there: a wider interval */
		struct one bw, m8;

		dense("GB200", "fp8", "blockwise", &bw);
		dense("GB200", "fp8", "mxfp8", &m8);
		cr_assert_gt(bw.gemm_sub1, 0);
		cr_assert_eq(m8.gemm_sub1, 0);
		cr_assert_float_eq(bw.r.step_s, m8.r.step_s, 1e-3 * m8.r.step_s);
		cr_assert_gt(bw.r.sigma, m8.r.sigma * 1.05,
			     "blockwise's interval %g is not wider than MXFP8's %g", bw.r.sigma,
			     m8.r.sigma);
	}
	{
		cvc_proj_study *st = NULL;
		cvc_proj_ctx *ctx = NULL;
		const char *t = "model: {layers: 8, hidden: 4096, heads: 32}\n"
				"training: {global_batch: 64, dtype: nvfp4}\n"
				"hardware: {gpu: H100-SXM, gpus: 8}\n";

		memset(&h, 0, sizeof h);
		h.want = -1;
		cr_assert_eq(cvc_proj_study_parse("t.yaml", t, strlen(t), &st), CVC_OK);
		cr_assert_eq(cvc_proj_ctx_new(NULL, &ctx), CVC_OK);
		cr_assert_eq(cvc_proj_study_run(st, ctx, 0, one_cb, &h, NULL), CVC_OK);
		cr_assert_eq(h.r.valid, 0, "H100 has no FP4 tensor cores");
		cr_assert(strstr(h.r.reason, "tensor path"), "%s", h.r.reason);
		cvc_proj_ctx_free(ctx);
		cvc_proj_study_free(st);
	}
}

/*
 * The FP4 GEMM default: the bf16 efficiency at the share of the fp4 peak
 * torchao measured on a B200 (pytorch/ao PR #2427: 8192^3 at 5370 TFLOP/s
 * of 9000 against bf16's 1420 of 2250, 6144^3 at 5500 against 1450, 4096^3
 * at 4460 against 1410; the median of the three shares).
 */
Test(lowprec, fp4_gemm_at_the_measured_share_of_its_peak)
{
	cvc_hw_catalog *cat = NULL;
	cvc_modelset *ms = NULL;
	const cvc_hw_spec *s;
	double shares[3] = {5370.0 / 9000 / (1420.0 / 2250), 5500.0 / 9000 / (1450.0 / 2250),
			    4460.0 / 9000 / (1410.0 / 2250)};
	double t16, t4, med = shares[0];

	cr_assert_eq(cvc_hw_catalog_new(&cat), CVC_OK);
	s = cvc_hw_catalog_lookup(cat, "GB200");
	cr_assert_not_null(s);
	cr_assert_float_eq(s->peak_tflops[CVC_HW_FP4], 10000, 1e-9, "NVL72 datasheet: 10 PF dense");
	cr_assert_float_eq(cvc_hw_catalog_lookup(cat, "B200")->peak_tflops[CVC_HW_FP4], 9000, 1e-9);
	cr_assert_float_eq(cvc_hw_catalog_lookup(cat, "GB300")->peak_tflops[CVC_HW_FP4], 15000, 1e-9);
	cr_assert_eq(cvc_hw_catalog_lookup(cat, "H100")->peak_tflops[CVC_HW_FP4], 0);
	cr_assert_eq(cvc_modelset_new(NULL, cat, s, &ms), CVC_OK);
	/* 32768^3: past every reference fit, the default efficiencies (and
	 * the launch's 4 us a ten-thousandth of the time) */
	t16 = cvc_model_gemm_us(ms, 32768, 32768, 32768, 1, CVC_HW_BF16);
	t4 = cvc_model_gemm_us(ms, 32768, 32768, 32768, 1, CVC_HW_FP4);
	cr_log_info("GB200 32768^3: bf16 %.1f us, fp4 %.1f us (x%.3f)", t16, t4, t16 / t4);
	cr_assert_float_eq(t16 / t4, 4 * med, 1e-3 * 4 * med,
			   "fp4 %.4gx bf16; the measured share gives %.4gx", t16 / t4, 4 * med);
	cr_assert_gt(shares[1], shares[0]);
	cr_assert_lt(shares[2], shares[0]);
	cvc_modelset_free(ms);
	cvc_hw_catalog_free(cat);
}

/*
 * Blackwell Ultra's FP4: its datasheet peak is 5.8-6x its bf16 peak (the
 * B200's 4x), but the one same-harness measurement of it found, Transformer
 * Engine's GEMM benchmark on a B300 (pre-quantized, a 5B model's layer: bf16
 * 13.102 ms, NVFP4 3.764 ms, against peaks of 2250 and 13125), has NVFP4 at
 * 3.48x bf16: 0.597 of bf16's share of peak.  Expected: GB300 (FP4 6x bf16)
 * prices a large NVFP4 GEMM at 6 x that share of its bf16 time, GB200 (4x)
 * still at torchao's B200 share; a B300 is priced from its own measurement.
 */
Test(lowprec, fp4_share_of_blackwell_ultra_measured_on_b300)
{
	cvc_hw_catalog *cat = NULL;
	const char *gpus[] = {"GB300", "B300", "GB200"};
	double b300 = (4.250 + 4.434 + 4.418) / (1.254 + 1.305 + 1.205) * 2250 / 13125;
	double want[] = {6 * b300, 13125.0 / 2250 * b300, 4 * 0.9446};

	cr_assert_eq(cvc_hw_catalog_new(&cat), CVC_OK);
	for (int i = 0; i < 3; i++) {
		cvc_modelset *ms = NULL;
		double t16, t4;

		cr_assert_eq(cvc_modelset_new(NULL, cat, cvc_hw_catalog_lookup(cat, gpus[i]), &ms),
			     CVC_OK);
		t16 = cvc_model_gemm_us(ms, 32768, 32768, 32768, 1, CVC_HW_BF16);
		t4 = cvc_model_gemm_us(ms, 32768, 32768, 32768, 1, CVC_HW_FP4);
		cr_log_info("%s 32768^3: NVFP4 %.3fx bf16 (expected %.3f)", gpus[i], t16 / t4,
			    want[i]);
		cr_expect_float_eq(t16 / t4, want[i], 2e-3 * want[i], "%s: %.4g against %.4g",
				   gpus[i], t16 / t4, want[i]);
		cvc_modelset_free(ms);
	}
	cvc_hw_catalog_free(cat);
}

/* Seconds of the layers' low-precision GEMMs of one scenario (runs x
 * price), priced by the projector's own pricer, and how many carry sub 4. */
struct lowgemm {
	cvc_proj_ctx *ctx;
	const struct proj_pricer *p;
	int dtype;
	double s, flagged, all;
};

static int lowgemm_op(void *user, const cvc_proj_op *o)
{
	struct lowgemm *g = user;

	if (o->kind == CVC_PROJ_OP_GEMM && o->dtype == g->dtype) {
		g->s += o->count * proj_op_s(g->p, o);
		g->all += o->count;
		g->flagged += (o->sub & 4) ? o->count : 0;
	}
	return 0;
}

static int lowgemm_cb(void *user, const cvc_proj_scenario *sc, const cvc_proj_result *r)
{
	struct lowgemm *g = user;

	cr_assert(r->valid, "%s", r->reason);
	g->p = proj_ctx_pricer(g->ctx, sc);
	cr_assert_not_null(g->p);
	g->dtype = sc->dtype;
	cvc_proj_scenario_ops(sc, lowgemm_op, g);
	return 0;
}

static void lowgemm(const char *gpu, const char *recipe, struct lowgemm *g)
{
	cvc_proj_study *st = NULL;
	char text[1024];

	memset(g, 0, sizeof *g);
	snprintf(text, sizeof text,
		 "model: {layers: 8, hidden: 4096, heads: 32, kv_heads: 8, ffn: 14336, "
		 "ffn_type: swiglu, seq: 4096, vocab: 128256}\n"
		 "training: {global_batch: 64, micro_batch: 1, dtype: fp8, fp8_recipe: %s}\n"
		 "hardware: {gpu: %s, gpus: 8}\n",
		 recipe, gpu);
	cr_assert_eq(cvc_proj_study_parse("t.yaml", text, strlen(text), &st), CVC_OK, "%s",
		     cvc_proj_study_errmsg(st));
	cr_assert_eq(cvc_proj_ctx_new(NULL, &g->ctx), CVC_OK);
	cr_assert_eq(cvc_proj_study_run(st, g->ctx, CVC_PROJ_NO_MARGINAL, lowgemm_cb, g, NULL),
		     CVC_OK);
	cvc_proj_ctx_free(g->ctx);
	cvc_proj_study_free(st);
}

/*
 * MXFP8's GEMMs read an E8M0 scale per 32 elements; Transformer Engine's
 * GEMM benchmark measured them against per-tensor fp8 GEMMs of the same
 * shapes on one Blackwell GPU, inputs quantized beforehand (B300, a 5B
 * model's 12 GEMMs per layer, ms: fprop 2.158 / 2.365, dgrad 2.329 /
 * 2.397, wgrad 2.325 / 2.400).  Expected: every layer GEMM of an MXFP8
 * scenario flagged (sub 4) and none of fp8 delayed's, and the layers' fp8
 * GEMMs of the MXFP8 scenario priced at exactly the measured ratio of the
 * sums (1.051) times delayed's; its uncertainty the three passes' scatter.
 * fp8 with 1x128 / 128x128 block scales runs through MXFP8 on Blackwell
 * (Transformer Engine's docs) and natively on Hopper: priced as MXFP8 on
 * GB200, as per-tensor fp8 on H100.
 */
Test(lowprec, mxfp8_gemms_at_their_measured_cost)
{
	struct lowgemm d, m, b, hd, hb;
	double want = (2.365 + 2.397 + 2.400) / (2.158 + 2.329 + 2.325), sd = 0;
	double l[3] = {log(2.365 / 2.158), log(2.397 / 2.329), log(2.400 / 2.325)};
	double mean = (l[0] + l[1] + l[2]) / 3, ss = 0;

	for (int i = 0; i < 3; i++)
		ss += (l[i] - mean) * (l[i] - mean);
	cr_assert_float_eq(cvc_model_mxfp8_factor(&sd), want, 1e-12);
	cr_assert_float_eq(sd, sqrt(ss / 2), 1e-12);
	lowgemm("GB200", "delayed", &d);
	lowgemm("GB200", "mxfp8", &m);
	lowgemm("GB200", "blockwise", &b);
	lowgemm("H100-SXM", "delayed", &hd);
	lowgemm("H100-SXM", "blockwise", &hb);
	cr_log_info("layers' fp8 GEMMs: delayed %.4f s, mxfp8 %.4f s (x%.4f; measured %.4f)", d.s,
		    m.s, m.s / d.s, want);
	cr_assert_gt(d.all, 0);
	cr_assert_eq(d.flagged, 0);
	cr_assert_eq(m.flagged, m.all);
	cr_assert_float_eq(m.all, d.all, 0);
	cr_assert_float_eq(m.s / d.s, want, 1e-9);
	cr_assert_float_eq(b.s, m.s, 1e-9 * m.s, "blockwise on GB200 %g, MXFP8 %g", b.s, m.s);
	/* on Hopper at DeepGEMM's measured rate (the next test): slower than
	 * per-tensor fp8, by no more than the slowest K the benchmark ran */
	cr_assert_gt(hb.s, hd.s * 1.01, "blockwise on H100 %g, delayed %g", hb.s, hd.s);
	cr_assert_lt(hb.s, hd.s / 0.6, "blockwise on H100 %g, delayed %g", hb.s, hd.s);
}

/* The pricer of a one-scenario study on gpu, and one GEMM of m x n x k in
 * fp8 with 1x128 block scales (sub 1: the format's flag) priced by it. */
static double blockwise_gemm_s(const char *gpu, double m, double n, double k)
{
	struct lowgemm g;
	cvc_proj_study *st = NULL;
	cvc_proj_op o;
	char text[512];
	double s;

	memset(&g, 0, sizeof g);
	snprintf(text, sizeof text,
		 "model: {layers: 2, hidden: 1024, heads: 8, ffn: 4096, seq: 1024, vocab: 32000}\n"
		 "training: {global_batch: 8, dtype: fp8, fp8_recipe: blockwise}\n"
		 "hardware: {gpu: %s, gpus: 8}\n", gpu);
	cr_assert_eq(cvc_proj_study_parse("t.yaml", text, strlen(text), &st), CVC_OK);
	cr_assert_eq(cvc_proj_ctx_new(NULL, &g.ctx), CVC_OK);
	cr_assert_eq(cvc_proj_study_run(st, g.ctx, CVC_PROJ_NO_MARGINAL, lowgemm_cb, &g, NULL),
		     CVC_OK);
	memset(&o, 0, sizeof o);
	o.kind = CVC_PROJ_OP_GEMM;
	o.dtype = CVC_PROJ_FP8;
	o.sub = 1;
	o.b = 1;
	o.m = (int64_t)m, o.n = (int64_t)n, o.k = (int64_t)k;
	o.count = 1;
	s = proj_op_s(g.p, &o);
	cvc_proj_ctx_free(g.ctx);
	cvc_proj_study_free(st);
	return s;
}

/*
 * fp8 GEMMs with 1x128 / 128x128 block scales on Hopper promote each
 * 128-wide slice of K on the CUDA cores; DeepGEMM's first release measured
 * such kernels on an H800 (README "Performance", NVCC 12.8; TFLOP/s in
 * bursts).  Expected: a GEMM of the one row measured at its K is priced
 * at that row's rate moved to the sustained clock (x 755 / 850, the
 * H200's MSMF / MAMF: ceiling.c), 4096 x 7168 x 16384 at 1358 and
 * 4096 x 32768 x 512 at 590 TFLOP/s; an H100 (the same die) the same; a
 * K between two measured ones between their prices' factors; and a GB200
 * not at all (its blockwise GEMMs run as MXFP8: the test above).
 */
Test(lowprec, blockwise_fp8_on_hopper_at_deepgemms_measured_rate)
{
	double sust = 755.0 / 850.0;
	double big = 2.0 * 4096 * 7168 * 16384, small = 2.0 * 4096 * 32768 * 512;
	double t_big = blockwise_gemm_s("H800-SXM", 4096, 7168, 16384);
	double t_small = blockwise_gemm_s("H800-SXM", 4096, 32768, 512);
	double h_big = blockwise_gemm_s("H100-SXM", 4096, 7168, 16384);

	cr_log_info("blockwise fp8 on H800: %.0f and %.0f TFLOP/s sustained", big / t_big / 1e12,
		    small / t_small / 1e12);
	cr_assert_float_eq(big / t_big / 1e12, 1358 * sust, 1e-6 * 1358);
	cr_assert_float_eq(small / t_small / 1e12, 590 * sust, 1e-6 * 590);
	cr_assert_float_eq(h_big, t_big, 1e-9 * t_big, "H100 %g, H800 %g", h_big, t_big);
	{
		cvc_model_blockfp8 t;
		double lo, hi, mid, sd;

		memset(&t, 0, sizeof t);
		t.n = 2;
		t.log2k[0] = 11, t.log2k[1] = 13;
		t.log_ratio[0] = log(1.2), t.log_ratio[1] = log(1.1);
		t.sigma = 0.05;
		lo = cvc_model_blockfp8_factor(&t, 1024, &sd);
		hi = cvc_model_blockfp8_factor(&t, 1 << 14, NULL);
		mid = cvc_model_blockfp8_factor(&t, 4096, NULL);
		cr_assert_float_eq(lo, 1.2, 1e-12, "held below the first K");
		cr_assert_float_eq(hi, 1.1, 1e-12, "held past the last K");
		cr_assert_float_eq(mid, sqrt(1.2 * 1.1), 1e-12, "linear on log2 K, on log time");
		cr_assert_float_eq(sd, 0.05, 1e-12);
		cr_assert_float_eq(cvc_model_blockfp8_factor(NULL, 4096, &sd), 1.0, 0);
		cr_assert_float_eq(sd, 0, 0);
	}
}

/*
 * The NVLink domain apart from the host: an expert-parallel group of 64 on
 * GB200 NVL72 is priced on NVLink, one of 144 crosses the network between
 * its two domains, and the same scenario on 8-GPU HGX B200 boards crosses
 * it between its 8 (docs/SCENARIOS.md "hardware").
 */
static void moe(const char *gpu, double ep, double gpus, struct one *s)
{
	char text[1024];

	snprintf(text, sizeof text,
		 "model: {layers: 4, hidden: 7168, heads: 56, ffn: 2048, ffn_type: swiglu,\n"
		 "        experts: 576, top_k: 8, seq: 4096}\n"
		 "training: {global_batch: %g, micro_batch: 1}\n"
		 "parallelism: {ep: %g}\n"
		 "hardware: {gpu: %s, gpus: %g}\n",
		 gpus, ep, gpu, gpus);
	one(text, CVC_PROJ_COMM_EP, s);
}

Test(lowprec, expert_parallel_groups_by_domain)
{
	struct one g64, g144, b64;
	cvc_hw_catalog *cat = NULL;
	cvc_modelset *ms = NULL;

	moe("GB200", 64, 128, &g64);
	moe("GB200", 144, 144, &g144);
	moe("B200", 64, 128, &b64);
	cr_assert_eq(g64.sc.nvlink_domain, 72, "GB200's domain from the catalog: %g",
		     g64.sc.nvlink_domain);
	cr_assert_eq(g64.sc.gpus_per_node, 8, "gpus_per_node keeps its own meaning");
	cr_assert_eq(b64.sc.nvlink_domain, 8, "an HGX board is its own domain: %g",
		     b64.sc.nvlink_domain);
	cr_assert_gt(g64.coll_n, 0);
	for (int i = 0; i < g64.coll_n; i++) {
		cr_assert_eq(g64.coll[i].group, 64);
		cr_assert_eq(g64.coll[i].per_node, 64, "all 64 in one NVLink domain");
	}
	for (int i = 0; i < g144.coll_n; i++) {
		cr_assert_eq(g144.coll[i].group, 144);
		cr_assert_eq(g144.coll[i].per_node, 72, "144 ranks: 72 in each of 2 domains");
	}
	for (int i = 0; i < b64.coll_n; i++)
		cr_assert_eq(b64.coll[i].per_node, 8, "64 ranks over 8 HGX boards");
	cr_log_info("EP all-to-all per step: GB200 ep 64 %.4g s, ep 144 %.4g s; B200 ep 64 %.4g s",
		    g64.r.comm_type_s[CVC_PROJ_COMM_EP], g144.r.comm_type_s[CVC_PROJ_COMM_EP],
		    b64.r.comm_type_s[CVC_PROJ_COMM_EP]);
	/* NVLink (900 GB/s per GPU) against 50 GB/s NICs */
	cr_assert_lt(g64.r.comm_type_s[CVC_PROJ_COMM_EP] * 4, b64.r.comm_type_s[CVC_PROJ_COMM_EP]);
	cr_assert_gt(g144.r.comm_type_s[CVC_PROJ_COMM_EP], g64.r.comm_type_s[CVC_PROJ_COMM_EP]);
	/* the 144 group's network phase: each rank sends the half of its
	 * buffer bound for the other domain through its own NIC once */
	cr_assert_eq(cvc_hw_catalog_new(&cat), CVC_OK);
	cr_assert_eq(cvc_modelset_new(NULL, cat, cvc_hw_catalog_lookup(cat, "GB200"), &ms), CVC_OK);
	{
		const cvc_proj_op *o = &g144.coll[0];
		double t = cvc_model_collective_us(ms, CVC_MODEL_ALLTOALL, o->bytes, 144, 72, NULL);
		double t1 = cvc_model_collective_us(ms, CVC_MODEL_ALLTOALL, o->bytes, 144, 144, NULL);
		double net = 0.5 * (double)o->bytes / (50e3 * 0.80); /* us: 50 GB/s NIC, 0.80 */

		cr_log_info("144 ranks, %lld B: %.1f us over 2 domains, %.1f us if one, network "
			    "half at the NIC rate %.1f us",
			    (long long)o->bytes, t, t1, net);
		cr_assert_gt(t, 3 * t1, "crossing the network costs more than NVLink alone");
		cr_assert_float_eq(t, net + 30, 0.05 * net, "the network phase prices it: %g vs %g",
				   t, net + 30);
	}
	cvc_modelset_free(ms);
	cvc_hw_catalog_free(cat);
}

/* The domain is a field of its own: set, it overrides the catalog; the
 * host size no longer moves it on an NVL72 rack; on an HGX board a node
 * size set by the scenario is the domain, as before the field existed. */
Test(lowprec, nvlink_domain_overrides_and_defaults)
{
	struct one a, b, c, d;

	moe("GB200", 64, 128, &a);
	one("model: {layers: 4, hidden: 7168, heads: 56, ffn: 2048, ffn_type: swiglu,\n"
	    "        experts: 576, top_k: 8, seq: 4096}\n"
	    "training: {global_batch: 128}\nparallelism: {ep: 64}\n"
	    "hardware: {gpu: GB200, gpus: 128, nvlink_domain: 36}\n",
	    CVC_PROJ_COMM_EP, &b);
	one("model: {layers: 4, hidden: 7168, heads: 56, ffn: 2048, ffn_type: swiglu,\n"
	    "        experts: 576, top_k: 8, seq: 4096}\n"
	    "training: {global_batch: 128}\nparallelism: {ep: 64}\n"
	    "hardware: {gpu: gb200-nvl36, gpus: 128}\n",
	    CVC_PROJ_COMM_EP, &c);
	one("model: {layers: 4, hidden: 4096, heads: 32}\n"
	    "training: {global_batch: 64}\nparallelism: {tp: 4}\n"
	    "hardware: {gpu: H100-SXM, gpus: 64, gpus_per_node: 4}\n",
	    CVC_PROJ_COMM_DP, &d);
	cr_assert_eq(b.sc.nvlink_domain, 36);
	cr_assert_eq(c.sc.nvlink_domain, 36, "the NVL36 row's domain: %g", c.sc.nvlink_domain);
	cr_assert_eq(b.coll[0].per_node, 36, "64 ranks, 36 per domain: %d", b.coll[0].per_node);
	cr_assert_float_eq(b.r.step_s, c.r.step_s, 1e-12 * b.r.step_s);
	cr_assert_gt(b.r.comm_type_s[CVC_PROJ_COMM_EP], a.r.comm_type_s[CVC_PROJ_COMM_EP]);
	cr_assert_eq(d.sc.nvlink_domain, 4, "an H100 node of 4 is a domain of 4: %g",
		     d.sc.nvlink_domain);
	cr_assert_eq(d.coll[0].per_node, 1, "dp neighbours tp = 4 apart: one per node");
}

/*
 * Layers the recipe keeps in bf16 (Megatron-Core's --first-last-layers-bf16
 * with --num-layers-at-start-in-bf16 / --num-layers-at-end-in-bf16; the
 * NVFP4 paper keeps the last layers so, Megatron-Bridge's Llama 3 8B
 * low-precision recipe the last 4): those layers price as bf16 on the
 * stages that hold them; every layer so is bf16 exactly.
 */
Test(lowprec, layers_kept_in_bf16)
{
	struct one bf, nv, last4, all, alias;
	const char *fmt = "model: {layers: 16, hidden: 4096, heads: 32, kv_heads: 8, ffn: 14336, "
			  "ffn_type: swiglu, seq: 4096}\n"
			  "training: {global_batch: 64, dtype: %s, %s}\n"
			  "parallelism: {pp: 2}\n"
			  "hardware: {gpu: GB200, gpus: 8, host_launch_us: 0}\n";
	char t[1024];

	snprintf(t, sizeof t, fmt, "bf16", "bf16_layers_last: 0");
	one(t, -1, &bf);
	snprintf(t, sizeof t, fmt, "nvfp4", "bf16_layers_last: 0");
	one(t, -1, &nv);
	snprintf(t, sizeof t, fmt, "nvfp4", "bf16_layers_last: 4");
	one(t, -1, &last4);
	snprintf(t, sizeof t, fmt, "nvfp4", "bf16_layers_first: 6, bf16_layers_last: 10");
	one(t, -1, &all);
	snprintf(t, sizeof t, fmt, "nvfp4", "num_layers_at_end_in_bf16: 4");
	one(t, -1, &alias);
	cr_log_info("step: bf16 %.4g, nvfp4 %.4g, last 4 in bf16 %.4g, all in bf16 %.4g",
		    bf.r.step_s, nv.r.step_s, last4.r.step_s, all.r.step_s);
	/* the last of 2 stages holds the 4 layers (half its 8): it sets the
	 * pace, between an nvfp4 and a bf16 stage */
	cr_assert_lt(nv.r.step_s, last4.r.step_s);
	cr_assert_lt(last4.r.step_s, bf.r.step_s);
	cr_assert_float_eq(all.r.step_s, bf.r.step_s, 1e-9 * bf.r.step_s);
	cr_assert_float_eq(all.r.mem_gb, bf.r.mem_gb, 1e-9 * bf.r.mem_gb);
	cr_assert_float_eq(alias.r.step_s, last4.r.step_s, 1e-12 * last4.r.step_s);
	cr_assert_eq(alias.sc.bf16_layers_last, 4);
}
