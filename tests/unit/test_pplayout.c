/*
 * test_pplayout.c - pipeline layouts as recipes write them (docs/SCENARIOS.md
 * "Pipeline layouts"): Megatron-Core's --pipeline-model-parallel-layout
 * strings (pp_layout), the balanced layout Megatron-Bridge writes for
 * DeepSeek-V3's 61 layers at every pp x vpp its runs used, and the
 * account-for-embedding/loss split that fits Qwen3-235B's 94.
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

struct got {
	int n;
	cvc_proj_scenario sc[MAXS];
	cvc_proj_result r[MAXS];
	char lay[MAXS][128];
};

static int got_cb(void *user, const cvc_proj_scenario *sc, const cvc_proj_result *r)
{
	struct got *g = user;

	cr_assert_lt(g->n, MAXS);
	g->sc[g->n] = *sc;
	snprintf(g->lay[g->n], sizeof g->lay[g->n], "%s", sc->pp_layout);
	g->sc[g->n].pp_layout = g->lay[g->n];
	g->sc[g->n].model = g->sc[g->n].recompute_modules = g->sc[g->n].layer_pattern = "";
	g->r[g->n++] = *r;
	return 0;
}

/* Every scenario of text, priced with the spec-sheet defaults. */
static void run(const char *text, struct got *g, int n)
{
	memset(g, 0, sizeof *g);
	tu_study_run("pp.yaml", text, CVC_PROJ_NO_MARGINAL, got_cb, g);
	cr_assert_eq(g->n, n);
}

/* run(), every scenario priced (valid). */
static void run_valid(const char *text, struct got *g, int n)
{
	run(text, g, n);
	for (int i = 0; i < n; i++)
		cr_assert(g->r[i].valid, "scenario %d: %s", i, g->r[i].reason);
}

/* Rank i's dense and MoE layers and its prediction layers, from the
 * finalized scenario sc (the layout's or the split's). */
static void rank_of(const cvc_proj_scenario *sc, double i, double *dense, double *moe)
{
	double fml[3], n[PROJ_NKIND];

	cr_assert_null(proj_stage_layers(sc, &fml[0], &fml[1], &fml[2]));
	proj_stage_kinds(sc, fml, i, n);
	*dense = n[PROJ_KIND(PROJ_MIX_ATTN, PROJ_FK_DENSE)];
	*moe = n[PROJ_KIND(PROJ_MIX_ATTN, PROJ_FK_MOE)];
}

#define DSV3 "model: {arch: deepseek-v3, seq: 4096}\ntraining: {global_batch: 8192}\n"

/*
 * Claim: Megatron-Core's layout string places the layers as it does: the
 * H100 DeepSeek-V3 layout of Megatron-Bridge's performance configs,
 * "Et|(tt|)*30mL" on pp 8, is 32 virtual stages (vpp 4), rank 0 running
 * stages 0, 8, 16, 24 (1 + 2 + 2 + 2 layers, layer 0 dense), rank 1 layers
 * 1-2 (dense: DeepSeek-V3's first three) and three more pairs, rank 7
 * three pairs, the prediction layer (an MoE layer) and the loss.  Exact.
 */
Test(pplayout, megatron_layout_string)
{
	struct got g;
	double d, m;

	run(DSV3 "parallelism: {tp: 2, pp: 8, ep: 64, pp_layout: \"Et|(tt|)*30mL\"}\n"
		 "hardware: {gpu: H100-SXM, gpus: 1024}\n", &g, 1);
	cr_assert(g.r[0].valid, "%s", g.r[0].reason);
	cr_expect_eq(g.sc[0].vpp, 4);
	rank_of(&g.sc[0], 0, &d, &m);
	cr_expect(d == 1 && m == 6, "rank 0: %g dense, %g MoE", d, m);
	rank_of(&g.sc[0], 1, &d, &m);
	cr_expect(d == 2 && m == 6, "rank 1: %g dense, %g MoE", d, m);
	rank_of(&g.sc[0], 4, &d, &m);
	cr_expect(d == 0 && m == 8, "rank 4: %g dense, %g MoE", d, m);
	rank_of(&g.sc[0], 7, &d, &m);
	cr_expect(d == 0 && m == 7, "rank 7: %g dense, %g MoE (6 and the MTP layer)", d, m);
	cr_expect_eq(proj_stage_max_layers(&g.sc[0]), 8);
}

/*
 * Claim: without a layout, 61 layers fit every pp x vpp DeepSeek-V3's
 * published runs used (Megatron-Bridge's recipe layouts for 4, 8, 16
 * virtual stages; its H100 layout for 32): the last virtual stage holds
 * 61 - (S-1) ceil(61/S) layers with the prediction layer and the loss, or
 * only those when that is below zero; each split prices as the layout
 * string written out.  Setup: pp 4 (16, 16, 16, 13 + MTP), pp 16 (4 each,
 * the last 1 + MTP), pp 8 x vpp 4 against "Et|(tt|)*30mL" (step time and
 * memory equal).
 */
Test(pplayout, balanced_when_no_split_fits)
{
	struct got g;
	double d, m;

	run_valid(DSV3 "parallelism: [{pp: 4, ep: 64}, {pp: 16, ep: 8}, {tp: 2, pp: 8, vpp: 4, ep: 64},\n"
		 "              {tp: 2, pp: 8, ep: 64, pp_layout: \"Et|(tt|)*30mL\"},\n"
		 "              {pp: 4, vpp: 4, ep: 64}, {pp: 8, vpp: 2, ep: 32}]\n"
		 "hardware: {gpu: B200, gpus: 1024}\n", &g, 6);
	rank_of(&g.sc[0], 0, &d, &m);
	cr_expect(d == 3 && m == 13, "pp 4, rank 0: %g dense, %g MoE", d, m);
	rank_of(&g.sc[0], 3, &d, &m);
	cr_expect(d == 0 && m == 14, "pp 4, rank 3: %g MoE (13 and the MTP layer)", m);
	rank_of(&g.sc[1], 15, &d, &m);
	cr_expect(d == 0 && m == 2, "pp 16, rank 15: %g MoE (1 and the MTP layer)", m);
	rank_of(&g.sc[1], 7, &d, &m);
	cr_expect(m == 4, "pp 16, rank 7: %g MoE", m);
	cr_expect(fabs(g.r[2].step_s - g.r[3].step_s) < 1e-12 * g.r[3].step_s, "%g vs %g",
		  g.r[2].step_s, g.r[3].step_s);
	cr_expect(fabs(g.r[2].mem_gb - g.r[3].mem_gb) < 1e-9 * g.r[3].mem_gb);
	/* 16 virtual stages as pp 4 x vpp 4 and pp 8 x vpp 2 */
	rank_of(&g.sc[4], 0, &d, &m);
	cr_expect(d == 3 && m == 13, "pp 4 vpp 4, rank 0: %g dense, %g MoE", d, m);
	rank_of(&g.sc[4], 3, &d, &m);
	cr_expect(d + m == 14, "pp 4 vpp 4, rank 3: %g (4 + 4 + 4 + 1 and the MTP layer)", d + m);
	rank_of(&g.sc[5], 7, &d, &m);
	cr_expect(d + m == 6, "pp 8 vpp 2, rank 7: %g (4 + 1 and the MTP layer)", d + m);
	cr_expect_eq(proj_stage_max_layers(&g.sc[4]), 16);
}

/*
 * Claim: Qwen3-235B-A22B's 94 layers fit the layouts its recipes run
 * (Megatron-Bridge's qwen3_235b_a22b_pretrain_config counts the embedding
 * and the loss as a layer each: 96 over pp x vpp), and a layout given as a
 * string weighs on the step: 94 layers piled on one of 4 ranks are slower
 * than spread.
 */
Test(pplayout, qwen3_235b_fits_and_a_layout_prices)
{
	struct got g;

	run("model: {arch: qwen3-235b-a22b, seq: 4096}\ntraining: {global_batch: 1024}\n"
	    "parallelism: [{tp: 4, pp: 8, vpp: 4, ep: 8}, {tp: 4, pp: 16, ep: 8},\n"
	    "              {tp: 4, pp: 4, ep: 8, pp_layout: \"Et*47|t*47|t*0|L\"},\n"
	    "              {tp: 4, pp: 4, ep: 8, pp_layout: \"Et*23|t*24|t*24|t*23L\"}]\n"
	    "hardware: {gpu: B200, gpus: 512}\n", &g, 4);
	for (int i = 0; i < 4; i++)
		cr_assert(g.r[i].valid, "scenario %d: %s", i, g.r[i].reason);
	cr_expect_gt(g.r[2].step_s, 1.5 * g.r[3].step_s, "%g vs %g", g.r[2].step_s,
		     g.r[3].step_s);
	cr_expect_eq(proj_stage_max_layers(&g.sc[2]), 47);
}

/*
 * Claim: a layout Megatron-Core would refuse is refused with its reason:
 * decoder layers other than the model's, no embedding first or loss last,
 * stages that do not divide by pp, a vpp that disagrees, first/last stage
 * layers as well, malformed repetitions.  A character outside the grammar
 * is an error of the file, with its line.
 */
Test(pplayout, layouts_refused)
{
	static const struct { const char *par, *why; } cases[] = {
		{"{pp: 4, pp_layout: \"Et*15|t*16|t*16|t*13mL\"}", "decoder layers (t) differ"},
		{"{pp: 4, pp_layout: \"t*16|Et*16|t*16|t*13mL\"}", "must start with E"},
		{"{pp: 4, pp_layout: \"Et*16|t*16|t*16|t*13m\"}", "must start with E"},
		{"{pp: 4, pp_layout: \"Et*16|t*16|t*16|t*12|tmL\"}", "do not divide by pp"},
		{"{pp: 4, vpp: 2, pp_layout: \"Et*16|t*16|t*16|t*13mL\"}", "vpp differs"},
		{"{pp: 4, first_stage_layers: 16, pp_layout: \"Et*16|t*16|t*16|t*13mL\"}",
		 "not both"},
		{"{pp: 4, pp_layout: \"Et*16|t*16|(t*16|t*13mL\"}", "'(' without"},
		{"{pp: 4, pp_layout: \"Et*16|t*16|(t*16)|t*13mL\"}", "expected '*N' after ')'"},
		{"{pp: 4, pp_layout: \"Et*16|t*16|t*16|t*13t*m*L\"}", "expected a count"},
	};
	char text[512];
	struct got g;

	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		snprintf(text, sizeof text, DSV3 "parallelism: %s\nhardware: {gpu: B200, gpus: 256}\n",
			 cases[i].par);
		run(text, &g, 1);
		cr_expect_eq(g.r[0].valid, 0, "%s", cases[i].par);
		cr_expect(strstr(g.r[0].reason, cases[i].why) != NULL, "%s: %s", cases[i].par,
			  g.r[0].reason);
	}
	{
		cvc_proj_study *st = NULL;
		const char *bad = "parallelism: {pp: 4, pp_layout: \"Et | L\"}\n";

		cr_assert_eq(cvc_proj_study_parse("b.yaml", bad, strlen(bad), &st), CVC_ERR_FORMAT);
		cr_expect(strstr(cvc_proj_study_errmsg(st), "'b.yaml': line 1, column 33: pp_layout: "
						      "expected E, t, m, L") != NULL, "%s",
			  cvc_proj_study_errmsg(st));
		cvc_proj_study_free(st);
	}
}

/*
 * Claim: a standalone prediction stage (the m layer on a rank before the
 * loss's, as Megatron-Core's mtp_standalone runs it) is priced where it
 * runs.  "Et*3|(tt|)*29m|L" on pp 8 (the Megatron-Core MoE report's
 * DeepSeek-V3 H100 layout) puts stage 30, the MTP layer (an MoE layer), on
 * rank 6 beside its six MoE layers; rank 7 keeps six; the doc example
 * "Et*3|(tt|)*29,m|L" on pp 16 is rank 14's.  On pp 2 x vpp 2 the module
 * moves the pace with it: on rank 0 ("Et*20|t*21|t*20m|L") that rank's 40
 * layers and the module outrun "...t*20|mL", where rank 0 has 40 and no
 * module; on a lighter rank 0 ("Et*5|t*51|t*5m|L") the loss's rank, with 51
 * layers and the two heads' logits, beats "...t*5|mL", where it runs the
 * module too.  And what the module costs of its own (the next tokens'
 * embedding, norms, 2h -> h projection) stays on its rank: moving the m
 * layer onto the loss's rank adds that rank's compute more than a plain
 * layer does (layouts without MTP, 51 against 50 layers there), by the
 * module's work, about an eighth of a layer; charged to the loss's rank
 * either way, the two would be one layer apart alike.  Exact counts,
 * ordered steps and compute.
 */
Test(pplayout, standalone_prediction_stage)
{
	struct got g;
	double d, m;

	run_valid(DSV3 "parallelism:\n"
		 "  - {tp: 2, pp: 8, ep: 64, pp_layout: \"Et*3|(tt|)*29m|L\"}\n"
		 "  - {tp: 2, pp: 16, ep: 32, pp_layout: \"Et*3|(tt|)*29,m|L\"}\n"
		 "hardware: {gpu: H100-SXM, gpus: 1024}\n", &g, 2);
	cr_expect_eq(g.sc[0].vpp, 4);
	cr_expect_eq(proj_pp_mtp_rank(&g.sc[0]), 6);
	rank_of(&g.sc[0], 6, &d, &m);
	cr_expect_eq(m, 7, "rank 6: %g MoE layers", m);
	rank_of(&g.sc[0], 7, &d, &m);
	cr_expect_eq(m, 6, "rank 7: %g MoE layers", m);
	cr_expect_eq(proj_pp_mtp_rank(&g.sc[1]), 14);

	run_valid(DSV3 "parallelism:\n"
		 "  - {pp: 2, ep: 64, pp_layout: \"Et*20|t*21|t*20m|L\"}\n"
		 "  - {pp: 2, ep: 64, pp_layout: \"Et*20|t*21|t*20|mL\"}\n"
		 "  - {pp: 2, ep: 64, pp_layout: \"Et*5|t*51|t*5m|L\"}\n"
		 "  - {pp: 2, ep: 64, pp_layout: \"Et*5|t*51|t*5|mL\"}\n"
		 "hardware: {gpu: B200, gpus: 256}\n", &g, 4);
	cr_expect_eq(proj_pp_mtp_rank(&g.sc[0]), 0);
	cr_expect_gt(g.r[0].step_s, g.r[1].step_s, "%g vs %g", g.r[0].step_s, g.r[1].step_s);
	cr_expect_lt(g.r[2].step_s, g.r[3].step_s, "%g vs %g", g.r[2].step_s, g.r[3].step_s);
	{
		double moved = g.r[3].compute_s - g.r[2].compute_s, layer;
		struct got n;

		run_valid("model: {arch: deepseek-v3, seq: 4096, mtp_layers: 0}\n"
		    "training: {global_batch: 8192}\nparallelism:\n"
		    "  - {pp: 2, ep: 64, pp_layout: \"Et*5|t*51|t*5|L\"}\n"
		    "  - {pp: 2, ep: 64, pp_layout: \"Et*5|t*50|t*6|L\"}\n"
		    "hardware: {gpu: B200, gpus: 256}\n", &n, 2);
		layer = n.r[0].compute_s - n.r[1].compute_s;
		cr_expect_gt(layer, 0);
		cr_expect_gt(moved, 1.05 * layer, "the m layer and module %g s, a layer %g s", moved,
			     layer);
		cr_expect_lt(moved, 1.5 * layer, "the m layer and module %g s, a layer %g s", moved,
			     layer);
	}
}
