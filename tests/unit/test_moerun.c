/*
 * test_moerun.c - MoE layers as they run (docs/SCENARIOS.md "What one step
 * is made of", MoE and ep): each token dispatcher's traffic, the router's
 * and the permutation's kernels, the skew of the routing, the overlap the
 * schedule allows (Megatron-Core's combined 1F1B, DeepSeek's DualPipe),
 * and DeepSeek-V3's own chunk pair (../shared/traces/deepseek-train-h800-
 * ep64) projected as a scenario.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>
#include <sqlite3.h>

#include "cvc/cvc_analyze.h"
#include "cvc/cvc_db.h"
#include "cvc/cvc_model.h"
#include "cvc/cvc_project.h"
#include "projector/ctx.h"
#include "projector/proj_internal.h"
#include "testutil.h"

#define MAXS 16

struct got {
	int n;
	cvc_proj_scenario sc[MAXS];
	cvc_proj_result r[MAXS];
};

static int got_cb(void *user, const cvc_proj_scenario *sc, const cvc_proj_result *r)
{
	struct got *g = user;

	cr_assert_lt(g->n, MAXS);
	g->sc[g->n] = *sc;
	g->sc[g->n].model = "";
	g->sc[g->n].recompute_modules = "";
	g->r[g->n++] = *r;
	return 0;
}

/* Every scenario of text priced with the spec-sheet defaults; n expected,
 * valid ones unless invalid_ok. */
static void run_n(const char *text, struct got *g, int n, int invalid_ok)
{
	memset(g, 0, sizeof *g);
	tu_study_run("moerun.yaml", text, CVC_PROJ_NO_MARGINAL, got_cb, g);
	cr_assert_eq(g->n, n);
	for (int i = 0; i < n && !invalid_ok; i++)
		cr_assert(g->r[i].valid, "scenario %d: %s", i, g->r[i].reason);
}

struct ep_ops {
	int n;
	struct {
		int sub, backend, phase, group, per_node;
		int64_t bytes, net;
		double count;
	} o[16];
};

static int ep_op(void *user, const cvc_proj_op *o)
{
	struct ep_ops *s = user;

	if (o->kind == CVC_PROJ_OP_COLL && o->comm == CVC_PROJ_COMM_EP && s->n < 16) {
		s->o[s->n].sub = o->sub;
		s->o[s->n].backend = o->ep_backend;
		s->o[s->n].phase = o->ep_phase;
		s->o[s->n].group = o->group;
		s->o[s->n].per_node = o->per_node;
		s->o[s->n].bytes = o->bytes;
		s->o[s->n].net = o->net_bytes;
		s->o[s->n++].count = o->count;
	}
	return 0;
}

/* 1 - C(avail - per, k) / C(avail, k): a unit of per experts gets none of
 * a token's k experts drawn among avail */
static double none_of(double avail, double per, int k)
{
	double p = 1;

	for (int i = 0; i < k; i++)
		p *= (avail - per - i) / (avail - i);
	return p;
}

/*
 * Claim: each dispatcher moves what its kernels move (docs/SCENARIOS.md
 * "ep").  Setup: 64 experts of width 1024, top 8, ep 64 over 8 nodes of 8
 * (one expert per rank), micro-batches of T = 4096 tokens, h 2048.  By
 * hand: alltoall sends T k h 2 B per one-way (one copy per expert);
 * deepep one copy per rank reached, here k = 8 (one expert per rank), T 8
 * h 2 over NVLink, and across nodes T D 7/8 h 2 with D = 8 (1 - C(56, 8) /
 * C(64, 8)) nodes reached (4 (1 - C(24, 8) / C(32, 8)) with 4 nodes at
 * most); ep_dispatch_fp8 both dispatches at 1 + 4/128 B per element;
 * allgather all-gathers 64 T (h 2 + 64 x 5) B and reduce-scatters 64 T h
 * 2; hybridep moves deepep's bytes through HybridEP's kernels.  Exact to
 * the byte; deepep faster than alltoall over 8 nodes.
 */
Test(moerun, dispatchers_move_what_their_kernels_move)
{
	struct got g;
	struct ep_ops s[6];
	double T = 4096, k = 8, h = 2048, full = T * k * h * 2;
	double D8 = 8 * (1 - none_of(64, 8, 8)), D4 = 4 * (1 - none_of(32, 8, 8));

	run_n("model: {layers: 8, hidden: 2048, heads: 16, ffn: 1024, experts: 64, top_k: 8,\n"
	      "        seq: 4096}\n"
	      "training: {global_batch: 1024, recompute: none}\n"
	      "parallelism: {ep: 64}\nhardware: {gpu: H100-SXM, gpus: 64}\n"
	      "comm: [{ep_dispatcher: [alltoall, deepep, allgather, hybridep]},\n"
	      "       {ep_dispatcher: deepep, moe_router_group_topk: 4},\n"
	      "       {ep_dispatcher: deepep, ep_dispatch_fp8: true}]\n",
	      &g, 6, 0);
	for (int i = 0; i < 6; i++) {
		memset(&s[i], 0, sizeof s[i]);
		cvc_proj_scenario_ops(&g.sc[i], ep_op, &s[i]);
	}
	cr_assert_eq(s[0].n, 4, "dispatch and combine each way");
	for (int j = 0; j < 4; j++) {
		cr_expect_eq(s[0].o[j].bytes, (int64_t)full);
		cr_expect_eq(s[0].o[j].backend, CVC_EP_NCCL);
	}
	cr_assert_eq(s[1].n, 4);
	for (int j = 0; j < 4; j++) {
		cr_expect_eq(s[1].o[j].backend, CVC_EP_DEEPEP);
		cr_expect_eq(s[1].o[j].bytes, (int64_t)(T * 8 * h * 2));
		cr_expect_leq(llabs(s[1].o[j].net - llround(T * D8 * 7 / 8 * h * 2)), 1, "%lld",
			      (long long)s[1].o[j].net);
		cr_expect_eq(s[1].o[j].group, 64);
		cr_expect_eq(s[1].o[j].per_node, 8);
	}
	cr_assert_eq(s[2].n, 4);
	for (int j = 0; j < 4; j += 2) { /* forward, then the backward's */
		cr_expect_eq(s[2].o[j].sub, CVC_MODEL_ALLGATHER);
		cr_expect_eq(s[2].o[j].bytes, (int64_t)(64 * T * (h * 2 + 64 * 5)));
		cr_expect_eq(s[2].o[j + 1].sub, CVC_MODEL_REDUCESCATTER);
		cr_expect_eq(s[2].o[j + 1].bytes, (int64_t)(64 * T * h * 2));
	}
	cr_expect_eq(s[3].o[0].backend, CVC_EP_HYBRIDEP);
	cr_expect_eq(s[3].o[0].bytes, s[1].o[0].bytes);
	cr_expect_leq(llabs(s[4].o[0].net - llround(T * D4 * 7 / 8 * h * 2)), 1, "%lld",
		      (long long)s[4].o[0].net);
	cr_expect_eq(s[4].o[0].bytes, s[1].o[0].bytes, "one expert per rank: k ranks");
	cr_assert_eq(s[5].n, 4, "the fp8 dispatches and the 16-bit combines");
	for (int j = 0; j < 4; j++) {
		cr_expect_eq(s[5].o[j].phase, j % 2 ? CVC_EP_COMBINE : CVC_EP_DISPATCH_FP8, "%d", j);
		cr_expect_eq(s[5].o[j].bytes, (int64_t)(T * 8 * h * (j % 2 ? 2 : 1 + 4.0 / 128)));
	}
	cr_expect_float_eq(s[5].o[0].count, s[5].o[2].count, 1e-9, "forward and backward alike");
	cr_expect_lt(g.r[1].comm_type_s[CVC_PROJ_COMM_EP], g.r[0].comm_type_s[CVC_PROJ_COMM_EP]);
	cr_expect_lt(g.r[4].comm_type_s[CVC_PROJ_COMM_EP], g.r[1].comm_type_s[CVC_PROJ_COMM_EP]);
	cr_expect_lt(g.r[5].comm_type_s[CVC_PROJ_COMM_EP], g.r[1].comm_type_s[CVC_PROJ_COMM_EP]);
}

struct kscan {
	double mem_ops, gemm_groups, mg;
};

static int kscan_op(void *user, const cvc_proj_op *o)
{
	struct kscan *s = user;

	if (o->kind == CVC_PROJ_OP_MEM)
		s->mem_ops += o->count;
	if (o->kind == CVC_PROJ_OP_GEMM && (o->sub & 2) && s->mg == 0) {
		s->gemm_groups = (double)o->b;
		s->mg = (double)o->m;
	}
	return 0;
}

/* sc's operators counted into *s from zero. */
static void kscan_of(const cvc_proj_scenario *sc, struct kscan *s)
{
	memset(s, 0, sizeof *s);
	cvc_proj_scenario_ops(sc, kscan_op, s);
}

/*
 * Claim: the router and the permutation are priced as the kernels
 * Megatron-Core launches (docs/SCENARIOS.md "MoE"), per MoE layer and
 * micro-batch: unfused, the router's 9 kernels forward and 4 backward and
 * the permutation's 8 forward and 6 backward; fused (moe_router_fusion,
 * moe_permute_fusion) 3 and 2, 4 and 2; the alltoall dispatcher with more
 * than one local expert sorts the tokens received by expert and back, 2
 * forward and 2 backward, fused or not; HybridEP permutes inside its
 * exchanges: none.  Setup: 4 MoE layers, one micro-batch, no recompute, 16
 * experts on ep 8 (2 per rank; 8 on ep 8 for one per rank); the count of
 * memory-bound launches differs by exactly that times 4, and fusion makes
 * the step faster.
 */
Test(moerun, router_and_permutation_kernels)
{
	struct got g;
	struct kscan s[4];

	run_n("model: {layers: 4, hidden: 1024, heads: 8, ffn: 512, experts: 16, top_k: 4,\n"
	      "        seq: 2048}\n"
	      "training: {global_batch: 8, recompute: none}\n"
	      "parallelism: {ep: 8}\nhardware: {gpu: H100-SXM, gpus: 8}\n"
	      "training: [{moe_router_fusion: false, moe_permute_fusion: false},\n"
	      "           {moe_router_fusion: true, moe_permute_fusion: false},\n"
	      "           {moe_router_fusion: true, moe_permute_fusion: true}]\n"
	      "comm: [{ep_dispatcher: alltoall}, {ep_dispatcher: hybridep}]\n",
	      &g, 6, 0);
	for (int i = 0; i < 4; i++)
		kscan_of(&g.sc[2 * (i < 3 ? i : 0) + (i == 3)], &s[i]);
	cr_expect_float_eq(s[0].mem_ops - s[1].mem_ops, 4 * ((9 + 4) - (3 + 2)), 1e-9, "router: %g",
			   s[0].mem_ops - s[1].mem_ops);
	cr_expect_float_eq(s[1].mem_ops - s[2].mem_ops, 4 * ((8 + 6) - (4 + 2)), 1e-9,
			   "permutation: %g", s[1].mem_ops - s[2].mem_ops);
	cr_expect_float_eq(s[0].mem_ops - s[3].mem_ops, 4 * (8 + 6 + 2 + 2), 1e-9,
			   "hybridep permutes inside its kernels: %g", s[0].mem_ops - s[3].mem_ops);
	cr_expect_lt(g.r[4].step_s, g.r[0].step_s);
	cr_expect_eq(s[0].gemm_groups, 2, "16 experts over 8 ranks");
	cr_expect_float_eq(s[0].mg, 2048.0 * 4 / 2, 1e-9, "T k per expert: %g", s[0].mg);
	/* one expert per rank: nothing to sort */
	run_n("model: {layers: 4, hidden: 1024, heads: 8, ffn: 512, experts: 8, top_k: 4,\n"
	      "        seq: 2048}\n"
	      "training: {global_batch: 8, recompute: none}\n"
	      "parallelism: {ep: 8}\nhardware: {gpu: H100-SXM, gpus: 8}\n"
	      "comm: [{ep_dispatcher: alltoall}, {ep_dispatcher: hybridep}]\n",
	      &g, 2, 0);
	for (int i = 0; i < 2; i++)
		kscan_of(&g.sc[i], &s[i]);
	cr_expect_float_eq(s[0].mem_ops - s[1].mem_ops, 4 * (8 + 6), 1e-9,
			   "one local expert: %g", s[0].mem_ops - s[1].mem_ops);
}

/*
 * Claim: a skewed routing (moe_imbalance s) is priced on the busiest rank
 * and widens the interval: its experts' grouped GEMMs get s times the
 * rows, its exchanges s times the bytes, the step is slower, and the 90%
 * interval of the step widens by the skew's own size (the operators it
 * scales carry ln s / 1.645 more error); s = 1 is the balanced price, and
 * more than ep is refused.  Exact for the sizes.
 */
Test(moerun, imbalance_on_the_busiest_rank)
{
	struct got g;
	struct kscan k[2];
	struct ep_ops e[2];
	double w[2];

	run_n("model: {layers: 4, hidden: 2048, heads: 16, ffn: 1024, experts: 64, top_k: 8,\n"
	      "        seq: 4096, moe_imbalance: [1, 1.25, 9]}\n"
	      "training: {global_batch: 64}\n"
	      "parallelism: {ep: 8}\nhardware: {gpu: H100-SXM, gpus: 8, host_launch_us: 0}\n",
	      &g, 3, 1);
	cr_assert(g.r[0].valid && g.r[1].valid);
	cr_expect_not(g.r[2].valid);
	cr_expect(strstr(g.r[2].reason, "moe_imbalance"), "%s", g.r[2].reason);
	for (int i = 0; i < 2; i++) {
		kscan_of(&g.sc[i], &k[i]);
		memset(&e[i], 0, sizeof e[i]);
		cvc_proj_scenario_ops(&g.sc[i], ep_op, &e[i]);
		w[i] = (g.r[i].step_s_hi - g.r[i].step_s_lo) / g.r[i].step_s;
	}
	cr_expect_float_eq(k[1].mg, 1.25 * k[0].mg, 1e-9, "%g vs %g", k[1].mg, k[0].mg);
	cr_expect_leq(llabs(e[1].o[0].bytes - llround(1.25 * (double)e[0].o[0].bytes)), 1);
	cr_expect_gt(g.r[1].step_s, g.r[0].step_s);
	cr_expect_gt(w[1], w[0] * 1.01, "interval %.4f vs %.4f", w[1], w[0]);
}

/*
 * The exposed seconds of one layer pair run as Megatron-Core's combined
 * 1F1B windows it (models/common/model_chunk_schedule_plan.py), from the
 * layer's own prices: the reference the projector must follow.
 */
static double windows_exposed(const struct proj_layer_cost *lc)
{
	double af = lc->fwd_s - lc->mlp_fwd_s, mf = lc->mlp_fwd_s, mb = lc->mlp_bwd_s;
	double mw = lc->mlp_wgrad_s, ab = lc->bwd_s - mb - mw;
	double w1 = fmax(lc->ep_db_s, af), w3 = fmax(lc->ep_cf_s, ab);
	double w2 = fmax(fmax(mb + mw, lc->ep_df_s) + mf, fmax(lc->ep_df_s, mb) + lc->ep_cb_s);

	return w1 + w2 + w3 - (lc->fwd_s + lc->bwd_s);
}

/*
 * Claim: with ep_overlap the exchanges hide as the schedule's windows
 * allow, per exchange, never all-or-nothing.  Setup: DeepSeek-V3's layer
 * on 64 H100s, ep 64 over 8 nodes, one pipeline stage, 32 micro-batches,
 * DeepEP with fp8 dispatches: the layer's four exchanges total less than
 * its compute, yet some exceed their windows.  Expected, from the layer's own
 * prices (proj_layer_ops): hidden = (m - 1) / m x layers x (four -
 * window excess) (one warm-up micro-batch runs alone), and the EP time
 * still exposed is more than zero.  The former rule (hide min(all-to-alls,
 * compute) each way) would have hidden them all.  Exact but for rounding.
 */
Test(moerun, overlap_follows_the_windows)
{
	struct got g;
	cvc_proj_ctx *ctx = NULL;
	const struct proj_pricer *p;
	struct proj_sink k;
	struct proj_shape x;
	struct proj_layer_cost lc;
	double four, exp1, m = 32, want;

	run_n("model: {name: deepseek-v3, layers: 8, hidden: 7168, heads: 128, ffn: 18432,\n"
	      "        ffn_type: swiglu, vocab: 129280, experts: 256, top_k: 8, moe_ffn: 2048,\n"
	      "        shared_ffn: 2048, tie_embeddings: false, q_lora_rank: 1536,\n"
	      "        kv_lora_rank: 512, qk_nope_head_dim: 128, qk_rope_head_dim: 64,\n"
	      "        v_head_dim: 128, seq: 4096}\n"
	      "training: {global_batch: 2048, dtype: fp8}\n"
	      "parallelism: {ep: 64}\nhardware: {gpu: H100-SXM, gpus: 64}\n"
	      "comm: {ep_overlap: true, ep_dispatcher: deepep, ep_dispatch_fp8: true}\n",
	      &g, 1, 0);
	cr_assert_eq(cvc_proj_ctx_new(NULL, &ctx), CVC_OK);
	g.sc[0].gpu = "H100-SXM"; /* the study's strings are gone */
	g.sc[0].study = "";
	p = proj_ctx_pricer(ctx, &g.sc[0]);
	cr_assert(p);
	proj_shape_of(&g.sc[0], &x);
	proj_sink_init(&k, &g.sc[0], p, NULL, NULL);
	memset(&lc, 0, sizeof lc);
	proj_layer_ops(&k, &x, 1, 1, &lc);
	four = lc.ep_df_s + lc.ep_cf_s + lc.ep_db_s + lc.ep_cb_s;
	exp1 = windows_exposed(&lc);
	cr_log_info("layer: compute %.2f ms, exchanges %.2f ms, past their windows %.2f ms",
		    1e3 * (lc.fwd_s + lc.bwd_s), 1e3 * four, 1e3 * exp1);
	cr_expect_lt(four, lc.fwd_s + lc.bwd_s, "the exchanges fit the layer's compute in all");
	cr_expect_gt(exp1, 0, "but not each its window");
	want = (m - 1) / m * 8 * (four - exp1) * m;
	cr_expect_float_eq(g.r[0].hidden_type_s[CVC_PROJ_COMM_EP], want, 1e-9 * want, "%g vs %g",
			   g.r[0].hidden_type_s[CVC_PROJ_COMM_EP], want);
	cr_expect_gt(g.r[0].exposed_type_s[CVC_PROJ_COMM_EP], 8 * m * exp1 * 0.99);
	cvc_proj_ctx_free(ctx);
}

/*
 * Claim: DualPipe (pp_schedule: dualpipe) is priced as DeepSeek-V3's
 * report and the DualPipe code give it: it needs an even pp, vpp 1 and an
 * even count of at least 2 pp micro-batches (dualpipe.py's assertions);
 * it holds two copies of the stage's parameters (Table 2: 2x) and pp + 1
 * micro-batches of activations; its bubble is (pp/2 - 1)(F&B + B - 3W),
 * smaller than 1F1B's (pp - 1)(F + B); and it pairs every forward chunk
 * of its steps 4 and 5 with a backward chunk (m - 3 pp/2 + 1 of m on the
 * first rank), so its exchanges hide without ep_overlap.
 */
Test(moerun, dualpipe_schedule)
{
	struct got g;
	static const char base[] =
		"model: {layers: 16, hidden: 2048, heads: 16, ffn: 1024, experts: 64, top_k: 8,\n"
		"        seq: 4096}\n"
		"training: {global_batch: %d}\n"
		"parallelism: {pp: %d, ep: 32, pp_schedule: %s}\n"
		"hardware: {gpu: H100-SXM, gpus: 128}\n";
	char y[512];

	snprintf(y, sizeof y, base, 512, 4, "[1f1b, dualpipe]");
	run_n(y, &g, 2, 0);
	cr_expect_float_eq(g.r[1].mem_params_gb, 2 * g.r[0].mem_params_gb,
			   1e-9 * g.r[0].mem_params_gb, "two copies");
	cr_expect_gt(g.r[1].mem_act_gb, g.r[0].mem_act_gb, "pp + 1 in flight");
	cr_expect_lt(g.r[1].bubble_s, g.r[0].bubble_s);
	cr_expect_gt(g.r[1].hidden_type_s[CVC_PROJ_COMM_EP], 0);
	cr_expect_eq(g.r[0].hidden_type_s[CVC_PROJ_COMM_EP], 0, "1F1B without ep_overlap");
	snprintf(y, sizeof y, base, 512, 2, "dualpipe");
	run_n(y, &g, 1, 0);
	cr_expect_eq(g.r[0].bubble_s, 0, "pp 2: (2/2 - 1) = 0");
	snprintf(y, sizeof y, base, 128, 8, "dualpipe"); /* 8 micro-batches < 2 pp */
	run_n(y, &g, 1, 1);
	cr_expect_not(g.r[0].valid);
	cr_expect(strstr(g.r[0].reason, "dualpipe"), "%s", g.r[0].reason);
}

/*
 * The scenario of DeepSeek-V3's chunk pair in ../shared/traces/
 * deepseek-train-h800-ep64/ (what it says is below, at the test against the
 * trace); the host-time test prices the same pair.
 */
static const char dsv3_chunk_pair[] =
	"model: {name: deepseek-v3, layers: 12, hidden: 7168, heads: 128, ffn: 18432,\n"
	"        ffn_type: swiglu, vocab: 129280, experts: 256, top_k: 8, moe_ffn: 2048,\n"
	"        shared_ffn: 2048, tie_embeddings: false, q_lora_rank: 1536,\n"
	"        kv_lora_rank: 512, qk_nope_head_dim: 128, qk_rope_head_dim: 64,\n"
	"        v_head_dim: 128, seq: 4096}\n"
	"training: {global_batch: 8192, micro_batch: 1, dtype: fp8, fp8_recipe: blockwise,\n"
	"           recompute: selective, recompute_modules: 'layernorm mla_up_proj',\n"
	"           distributed_optimizer: true, moe_permute_fusion: true}\n"
	"parallelism: {tp: 1, pp: 4, first_stage_layers: 2, last_stage_layers: 2, ep: 64,\n"
	"              pp_schedule: dualpipe}\n"
	"hardware: {gpu: H800, gpus: 256}\n"
	"comm: {ep_dispatcher: deepep, ep_dispatch_fp8: true}\n";

/* Seconds of the union of the trace's kernels whose name matches like1 or
 * like2 (SQL LIKE patterns; like2 may repeat like1). */
static double kernels_union_s(cvc_db *db, const char *like1, const char *like2)
{
	sqlite3_stmt *st;
	double t = 0;
	int64_t cs = -1, ce = -1;

	cr_assert_eq(sqlite3_prepare_v2(cvc_db_sqlite(db),
					"SELECT a.start_ns, a.end_ns FROM activities a JOIN strings s "
					"ON s.id = a.name_id WHERE s.value LIKE ?1 OR s.value LIKE ?2 "
					"ORDER BY a.start_ns", -1, &st, NULL), SQLITE_OK);
	sqlite3_bind_text(st, 1, like1, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, like2, -1, SQLITE_STATIC);
	while (sqlite3_step(st) == SQLITE_ROW) {
		int64_t s = sqlite3_column_int64(st, 0), e = sqlite3_column_int64(st, 1);

		if (cs < 0 || s > ce) {
			t += cs < 0 ? 0 : (double)(ce - cs);
			cs = s, ce = e;
		} else if (e > ce) {
			ce = e;
		}
	}
	t += cs < 0 ? 0 : (double)(ce - cs);
	sqlite3_finalize(st);
	return 1e-9 * t;
}

/* The blockwise fp8 GEMMs of a scenario, priced: weight gradients (sub 8)
 * and the rest, seconds per step. */
struct bw_gemms {
	cvc_proj_ctx *ctx;
	const struct proj_pricer *p;
	double w, fd, moved;
	int nw;
};

static int bw_op(void *user, const cvc_proj_op *o)
{
	struct bw_gemms *g = user;

	if (o->kind != CVC_PROJ_OP_GEMM || o->dtype != CVC_PROJ_FP8 || !(o->sub & 1))
		return 0;
	if (o->sub & 8) {
		cvc_proj_op plain = *o;

		plain.sub &= ~8;
		g->w += o->count * proj_op_s(g->p, o), g->nw++;
		g->moved += fabs(proj_op_s(g->p, o) / proj_op_s(g->p, &plain) - 1);
	} else
		g->fd += o->count * proj_op_s(g->p, o);
	return 0;
}

static int bw_cb(void *user, const cvc_proj_scenario *sc, const cvc_proj_result *r)
{
	struct bw_gemms *g = user;

	cr_assert(r->valid, "%s", r->reason);
	g->p = proj_ctx_pricer(g->ctx, sc);
	cr_assert_not_null(g->p);
	cvc_proj_scenario_ops(sc, bw_op, g);
	return 0;
}

/* The chunk pair's scenario on gpu, its blockwise GEMMs priced into *g. */
static void bw_run(const char *gpu, struct bw_gemms *g)
{
	char y[sizeof dsv3_chunk_pair + 16], *at;
	cvc_proj_study *st = NULL;

	memcpy(y, dsv3_chunk_pair, sizeof dsv3_chunk_pair);
	at = strstr(y, "gpu: H800");
	cr_assert_not_null(at);
	memcpy(at + 5, gpu, 4); /* "H800", "B200" */
	memset(g, 0, sizeof *g);
	cr_assert_eq(cvc_proj_study_parse("w.yaml", y, strlen(y), &st), CVC_OK, "%s",
		     cvc_proj_study_errmsg(st));
	cr_assert_eq(cvc_proj_ctx_new(NULL, &g->ctx), CVC_OK);
	cr_assert_eq(cvc_proj_study_run(st, g->ctx, CVC_PROJ_NO_MARGINAL, bw_cb, g, NULL), CVC_OK);
	cvc_proj_study_free(st);
	cvc_proj_ctx_free(g->ctx);
}

/*
 * Claim (issue 34): DeepSeek-V3's own chunk pair, measured with cvc's
 * importer and analyzer, is what cvc projects for a scenario of it.  The
 * trace (deepseek-ai/profile-data train.json: a forward and a backward
 * chunk of 4 MoE layers overlapped by DualPipe, EP64 TP1 on H800, 4K
 * sequences, balanced routing, DeepEP with 20 SMs, FP8 with online
 * fine-grained scaling) gives the chunk pair's compute, its DeepEP
 * dispatch and combine kernels (the alltoall class) and the share of its
 * communication hidden under compute.  The scenario says what the trace
 * says: DeepSeek-V3's layer shape, 4 MoE layers on a middle stage of a
 * 4-stage DualPipe (2 on each end), 128 micro-batches of one 4096-token
 * sequence (the steady state a chunk pair is in), EP64 over 8 H800 nodes,
 * the deepep dispatcher with fp8 dispatches, fp8 with 1x128 / 128x128
 * block scales (blockwise: the report's sec. 3.3.2), the norms and MLA's
 * up projections recomputed (sec. 3.5.1), DeepSeek's fused permutation;
 * per micro-batch against the pair.  Bars (the issue's): dispatch and
 * combine within 15%, hidden share within 10 points, compute within 15%
 * (-6%: the blockwise GEMMs at DeepGEMM's measured rate on H800 and their
 * weight gradients at the ratio this trace measures, models/blockfp8.c;
 * -12% before the latter, -17% as per-tensor fp8).
 */
Test(moerun, deepseek_v3_chunk_pair_against_its_trace)
{
	const char *gz = tu_shared("traces/deepseek-train-h800-ep64/train.json.gz");
	cvc_db *db;
	cvc_breakdown *rows = NULL;
	size_t n = 0;
	cvc_analyze_opts o = {NULL, CVC_BY_RANK, NULL, 1};
	double t_comp, t_a2a = 0, t_hid, m = 128, p_comp, p_ep, p_hid;
	struct got g;

	db = tu_import(gz, "dsv3.db");
	cr_assert_eq(cvc_analyze_run(db, &o, &rows, &n), CVC_OK, "%s", cvc_db_errmsg(db));
	cr_assert_eq(n, 1);
	for (size_t i = 0; i < rows[0].nclasses; i++)
		if (!strcmp(rows[0].classes[i].name, "alltoall"))
			t_a2a = rows[0].classes[i].union_ns * 1e-9;
	t_comp = rows[0].compute_ns * 1e-9;
	t_hid = (double)rows[0].hidden_ns / (double)rows[0].comm_ns;
	cvc_breakdown_free(rows, n);
	cvc_db_close(db);
	run_n(dsv3_chunk_pair, &g, 1, 0);
	p_comp = g.r[0].compute_s / m;
	p_ep = g.r[0].comm_type_s[CVC_PROJ_COMM_EP] / m;
	p_hid = g.r[0].hidden_type_s[CVC_PROJ_COMM_EP] / g.r[0].comm_type_s[CVC_PROJ_COMM_EP];
	cr_log_info("compute %.1f ms vs %.1f (%+.1f%%); dispatch+combine %.1f ms vs %.1f "
		    "(%+.1f%%); hidden %.1f%% vs %.1f%%", 1e3 * p_comp, 1e3 * t_comp,
		    100 * (p_comp / t_comp - 1), 1e3 * p_ep, 1e3 * t_a2a, 100 * (p_ep / t_a2a - 1),
		    100 * p_hid, 100 * t_hid);
	cr_expect_float_eq(t_a2a, 80.452e-3, 1e-6, "the trace's dispatch and combine kernels");
	cr_expect_lt(fabs(p_ep / t_a2a - 1), 0.15);
	cr_expect_lt(fabs(p_hid - t_hid), 0.10);
	cr_expect_lt(fabs(p_comp / t_comp - 1), 0.15);
	/* the MoE layer's measured error its intervals carry (moe.c) is this
	 * one as it was before a figure was taken from this trace (the
	 * blockwise wgrad factor, models/blockfp8.c): the price without it,
	 * within half a point */
	{
		struct bw_gemms w;
		double f = cvc_model_blockfp8_wgrad_factor(NULL), held;

		bw_run("H800", &w);
		held = p_comp - w.w / m * (1 - 1 / f);
		cr_log_info("held out: compute %.1f ms (%+.1f%%), ln %.4f; with the trace's "
			    "wgrad factor ln %.4f", 1e3 * held, 100 * (held / t_comp - 1),
			    log(t_comp / held), log(t_comp / p_comp));
		cr_expect_lt(fabs(log(t_comp / held) - proj_moe_layer_sigma()), 0.005,
			     "MOE_LAYER_SIGMA %.3f, measured %.4f", proj_moe_layer_sigma(),
			     log(t_comp / held));
	}
}

/*
 * Claim: a weight-gradient GEMM of fp8 with 1x128 block scales on Hopper
 * is priced as DeepSeek-V3's own trace measures it against the forward
 * and dgrad GEMMs of the same layers (models/blockfp8.c): the ratio of
 * cvc's wgrad seconds to its forward-and-dgrad seconds, for the chunk
 * pair's scenario, is the trace's ratio of its fp8_dptp128c_acc kernels'
 * time to its fp8_ptp128c and m_grouped_fp8_ptp128c kernels' (unions),
 * within 1%; every wgrad of the recipe is flagged (7 dense and 2 grouped
 * per layer); on a Blackwell GPU (MXFP8's kernels) none is.
 */
Test(moerun, blockwise_wgrad_against_the_trace)
{
	const char *gz = tu_shared("traces/deepseek-train-h800-ep64/train.json.gz");
	cvc_db *db;
	struct bw_gemms g;
	double tw, tfd;

	db = tu_import(gz, "dsv3w.db");
	tw = kernels_union_s(db, "%fp8_dptp128c_acc%", "%fp8_dptp128c_acc%");
	tfd = kernels_union_s(db, "%grouped_gemm::cuda::fp8_ptp128c::%", "%m_grouped_fp8_ptp128c%");
	cvc_db_close(db);
	bw_run("H800", &g);
	cr_log_info("trace: wgrad %.2f ms, forward and dgrad %.2f ms (%.4f); cvc %.4f, "
		    "unfactored %.4f; %d wgrad ops", 1e3 * tw, 1e3 * tfd, tw / tfd, g.w / g.fd,
		    g.w / g.fd / cvc_model_blockfp8_wgrad_factor(NULL), g.nw);
	cr_expect_float_eq(tw, 27.494e-3, 1e-6, "the trace's 60 wgrad kernels");
	cr_expect_lt(fabs((g.w / g.fd) / (tw / tfd) - 1), 0.01);
	cr_expect_gt(g.moved, 0);
	/* B200: 1x128 block scales run as MXFP8 there, the factor stays off */
	bw_run("B200", &g);
	cr_expect_gt(g.nw, 0, "the wgrads are flagged on any GPU");
	cr_expect_eq(g.moved, 0);
}

/*
 * Claim: an MoE layer's compute carries the measured error of its price on
 * the one MoE layer traced (proj_moe_layer_sigma(), docs/MODELS.md
 * "Uncertainty"), apart from its operators' own, and says so among the
 * warnings; a dense model of the same stack does not.  Qwen3-30B-A3B is
 * MoE in every layer: with one pipeline stage its layers are all but the
 * logits of the step's compute, so the compute interval is at least the
 * measured error times that share; Qwen3-8B's, its operators' errors
 * alone, is below it.
 */
Test(moerun, moe_layers_carry_their_measured_error)
{
	static const char y[] =
		"defaults:\n"
		"  training: {global_batch: 256, micro_batch: 2, dtype: bf16, recompute: none}\n"
		"  hardware: {gpu: H100-SXM, gpus: 8}\n"
		"scenarios:\n"
		"  - model: {arch: qwen3-30b-a3b, seq: 4096}\n"
		"    parallelism: {ep: 8}\n"
		"  - model: {arch: qwen3-8b, seq: 4096}\n";
	struct got g;
	double sc[2];
	char want[96];

	run_n(y, &g, 2, 0);
	for (int i = 0; i < 2; i++)
		sc[i] = log(g.r[i].compute_s_hi / g.r[i].compute_s) / 1.6449;
	cr_log_info("compute sigma: MoE %.4f, dense %.4f", sc[0], sc[1]);
	cr_expect_geq(sc[0], 0.9 * proj_moe_layer_sigma());
	cr_expect_lt(sc[1], 0.9 * proj_moe_layer_sigma());
	snprintf(want, sizeof want, "moe layers: %.0f%% off the one MoE layer traced",
		 100 * proj_moe_layer_sigma());
	cr_expect(strstr(g.r[0].warnings, want) != NULL, "%s", g.r[0].warnings);
	cr_expect(strstr(g.r[1].warnings, "moe layers") == NULL, "%s", g.r[1].warnings);
}

/*
 * Claim: CUDA graphs (cuda_graphs) remove the gap between back-to-back
 * kernels of the graphed layers (docs/SCENARIOS.md "Kernel gaps"): a
 * dense model keeps only its stage's own launches' gaps (embedding,
 * logits, loss); a dropless MoE layer keeps its routed experts' (their
 * grouped GEMMs and activation: 2 + 4 GEMM launches and 1 + 1 activation
 * per layer and micro-batch, without recompute) and its permutation's
 * (unfused: 8 launches forward, 6 backward, and the alltoall dispatcher's
 * sort by local expert, 2 and 2), whose token counts vary
 * (Megatron-LM docs/discussions/deepseek-v3-gb200-optimization, sec. 2.3:
 * the "moe" graph scope "only supports token-drop MoE"); with token drop
 * padded to capacity the whole layer is graphed: the dense model's gaps.
 * Exact: the gaps' seconds are the launches left times the GPU's measured
 * gap.
 */
Test(moerun, cuda_graphs_remove_the_layers_gaps)
{
	struct got g;
	cvc_hw_catalog *cat = NULL;
	cvc_modelset *ms = NULL;
	double gap, m = 8, L = 4, on[2] = {0, 0}, dense[2] = {0, 0};

	cr_assert_eq(cvc_hw_catalog_new(&cat), CVC_OK);
	cr_assert_eq(cvc_modelset_new(NULL, cat, cvc_hw_catalog_lookup(cat, "H100-SXM"), &ms), CVC_OK);
	gap = 1e-6 * cvc_model_kernel_gap_us(ms);
	run_n("model: [{layers: 4, hidden: 1024, heads: 8, ffn: 4096, seq: 2048},\n"
	      "        {layers: 4, hidden: 1024, heads: 8, ffn: 512, experts: 16, top_k: 4,\n"
	      "         seq: 2048}]\n"
	      "training: {global_batch: 64, recompute: none, cuda_graphs: [false, true],\n"
	      "           moe_token_drop: [false, true]}\n"
	      "parallelism: {ep: [1, 8]}\nhardware: {gpu: H100-SXM, gpus: 8}\n"
	      "where: '(experts > 1 && ep == 8) || (experts == 1 && ep == 1 && moe_token_drop == 0)'\n",
	      &g, 6, 0);
	for (int i = 0; i < g.n; i++) {
		if (g.sc[i].experts == 1)
			dense[g.sc[i].cuda_graphs] = g.r[i].gaps_s;
		if (g.sc[i].experts > 1 && g.sc[i].cuda_graphs)
			on[g.sc[i].moe_token_drop] = g.r[i].gaps_s;
	}
	cr_expect_gt(dense[1], 0, "the stage's own launches keep theirs");
	cr_expect_lt(dense[1], 0.1 * dense[0], "%g vs %g", dense[1], dense[0]);
	cr_expect_float_eq(on[1], dense[1], 1e-15, "token drop: the whole layer graphed");
	cr_expect_float_eq(on[0] - on[1], m * L * (2 + 4 + 1 + 1 + 8 + 6 + 2 + 2) * gap, 1e-12,
			   "the experts' and the permutation's launches: %g vs %g", on[0] - on[1],
			   m * L * 26 * gap);
	cvc_modelset_free(ms);
	cvc_hw_catalog_free(cat);
}

/*
 * Claim (docs/MODELS.md "Host time per launch"): the kernels an eager step
 * launches per operator cvc prices come from DeepSeek-V3's chunk pair: the
 * trace launches 963 kernels (its kernel activities) for the 4 layers
 * forward and backward that cvc prices as 296 launches, so the host's time
 * per priced launch is 963 / 296 times the trace's host time per launch;
 * priced so, the pair's host work is the trace's launching threads' busy
 * time within 2% (its 13 waits and thread ends are not counted there).
 * The pair itself is GPU-bound (102.7 ms of compute): no host time.
 */
Test(moerun, host_time_of_the_chunk_pair)
{
	const char *gz = tu_shared("traces/deepseek-train-h800-ep64/train.json.gz");
	cvc_db *db;
	cvc_hw_catalog *cat = NULL;
	cvc_modelset *ms = NULL;
	double kernels, busy_ns, gaps, launches, gap, m = 128;
	struct got g;

	db = tu_import(gz, "dsv3h.db");
	kernels = (double)tu_db_int(db, "SELECT count(*) FROM activities WHERE kind = 1");
	busy_ns = (double)tu_db_int(db, "SELECT CAST(value AS INTEGER) FROM run_meta WHERE key = "
					"'rank0.import.host_launch_ns'");
	gaps = (double)tu_db_int(db, "SELECT CAST(value AS INTEGER) FROM run_meta WHERE key = "
				     "'rank0.import.host_launch_gaps'");
	cvc_db_close(db);
	cr_assert_eq(cvc_hw_catalog_new(&cat), CVC_OK);
	cr_assert_eq(cvc_modelset_new(NULL, cat, cvc_hw_catalog_lookup(cat, "H800"), &ms), CVC_OK);
	gap = 1e-6 * cvc_model_kernel_gap_us(ms);
	run_n(dsv3_chunk_pair, &g, 1, 0);
	launches = g.r[0].gaps_s / (m * gap);
	cr_log_info("trace: %g kernels, host %.2f ms over %g launch intervals (%.4f us each); "
		    "cvc: %.3f launches priced per chunk pair", kernels, busy_ns / 1e6, gaps,
		    busy_ns / gaps / 1e3, launches);
	cr_expect_eq(kernels, 963);
	cr_expect_float_eq(launches, 296, 1e-6);
	cr_expect_float_eq(proj_host_launches_per_op(), kernels / launches, 1e-9);
	cr_expect_float_eq(busy_ns / gaps / 1e3, cvc_model_host_launch_us(), 1e-4);
	cr_expect_lt(fabs(launches * proj_host_us(&g.sc[0]) * 1e3 / busy_ns - 1), 0.02);
	cr_expect_eq(g.r[0].host_s, 0, "GPU-bound: %g", g.r[0].host_s);
	cvc_modelset_free(ms);
	cvc_hw_catalog_free(cat);
}

/*
 * Claim (docs/MODELS.md "Host time per launch"): a step whose host
 * launches its kernels slower than the GPU runs them runs at the host's
 * pace.  Without a host synchronisation (a dense model) the host runs
 * ahead through the whole step: the step is the host's work exactly (its
 * launches, gaps_s / gap, times the host time per priced launch), the same
 * on a GPU with twice the compute, its interval at least the host time's
 * spread.  A dropless MoE layer synchronises each micro-batch: the pipeline
 * moves at the host's pace per micro-batch, the bubble (pp - 1) micro-
 * batches of host work, slower than the same model with token drop, whose
 * static shapes let the host run ahead.  host_launch_us 0 takes the host
 * out.  Exact where stated.
 */
Test(moerun, host_bound_steps)
{
	struct got g;
	cvc_hw_catalog *cat = NULL;
	cvc_modelset *ms = NULL;
	double gap, m, host_mb, hw;
	int dense = -1, dense2 = -1, nohost = -1, drop = -1, tdrop = -1;

	cr_assert_eq(cvc_hw_catalog_new(&cat), CVC_OK);
	cr_assert_eq(cvc_modelset_new(NULL, cat, cvc_hw_catalog_lookup(cat, "H100-SXM"), &ms), CVC_OK);
	gap = 1e-6 * cvc_model_kernel_gap_us(ms);
	run_n("scenarios:\n"
	      "  - model: {layers: 4, hidden: 1024, heads: 8, seq: 1024}\n"
	      "    training: {global_batch: 64}\n"
	      "    hardware: {gpu: H100-SXM, gpus: 8, host_launch_us: [auto, 0],\n"
	      "               scale_compute: [1, 2]}\n"
	      "    where: 'host_launch_us != 0 || scale_compute == 1'\n"
	      "  - model: {layers: 4, hidden: 1024, heads: 8, ffn: 512, experts: 16, top_k: 4,\n"
	      "           seq: 1024}\n"
	      "    training: {global_batch: 64, moe_token_drop: [false, true]}\n"
	      "    parallelism: {pp: 2, ep: 4}\n"
	      "    hardware: {gpu: H100-SXM, gpus: 8}\n",
	      &g, 5, 0);
	for (int i = 0; i < g.n; i++) {
		const cvc_proj_scenario *s = &g.sc[i];

		if (s->experts == 1 && s->host_launch_us == 0)
			nohost = i;
		else if (s->experts == 1)
			*(s->scale_compute == 1 ? &dense : &dense2) = i;
		else
			*(s->moe_token_drop ? &tdrop : &drop) = i;
	}
	cr_assert(dense >= 0 && dense2 >= 0 && nohost >= 0 && drop >= 0 && tdrop >= 0);
	/* dense: the step is the host's launches' work */
	m = g.sc[dense].global_batch / (g.sc[dense].dp * g.sc[dense].micro_batch);
	host_mb = g.r[dense].gaps_s / (m * gap) * 1e-6 * proj_host_us(&g.sc[dense]);
	cr_expect_gt(g.r[dense].host_s, 0.5 * g.r[dense].step_s, "host-bound");
	cr_expect_float_eq(g.r[dense].step_s, m * host_mb, 1e-9 * g.r[dense].step_s);
	cr_expect_float_eq(g.r[dense2].step_s, g.r[dense].step_s, 1e-9 * g.r[dense].step_s,
			   "a faster GPU waits longer: %g vs %g", g.r[dense2].step_s,
			   g.r[dense].step_s);
	hw = (g.r[dense].step_s_hi - g.r[dense].step_s) / g.r[dense].step_s;
	cr_expect_geq(hw, 1.6448 * cvc_model_host_launch_sigma() * (1 - 1e-9), "half-width %g", hw);
	cr_expect_eq(g.r[nohost].host_s, 0);
	cr_expect_lt(g.r[nohost].step_s, 0.5 * g.r[dense].step_s);
	/* dropless MoE, pp 2: the micro-batch and the bubble at the host's pace */
	m = g.sc[drop].global_batch / (g.sc[drop].dp * g.sc[drop].micro_batch);
	host_mb = g.r[drop].gaps_s / (m * gap) * 1e-6 * proj_host_us(&g.sc[drop]);
	cr_expect_gt(g.r[drop].host_s, 0);
	cr_expect_float_eq(g.r[drop].bubble_s, (g.sc[drop].pp - 1) * host_mb, 1e-9 * host_mb,
			   "bubble %g vs %g", g.r[drop].bubble_s, host_mb);
	cr_expect_lt(g.r[tdrop].step_s, g.r[drop].step_s, "token drop: %g vs %g",
		     g.r[tdrop].step_s, g.r[drop].step_s);
	cvc_modelset_free(ms);
	cvc_hw_catalog_free(cat);
}
