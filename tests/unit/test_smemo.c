/*
 * test_smemo.c - the ctx's memo of scenarios evaluated lately
 * (projector/smemo.c): what it hands back is what evaluating again gives.
 */
#include <string.h>

#include <criterion/criterion.h>

#include "cvc/cvc_project.h"
#include "testutil.h"

/* A scenario evaluated again comes from the ctx's memo of recent ones
 * (projector/smemo.c) as its first evaluation gave it, and the memo reads
 * a scenario's text by what it says, not where it is: the same buffer
 * holding another pipeline layout is another scenario, priced as a fresh
 * ctx prices it. */
Test(smemo, a_scenario_evaluated_again_is_its_first_evaluation)
{
	cvc_proj_ctx *ctx = NULL, *fresh = NULL;
	cvc_proj_scenario sc;
	cvc_proj_result a, b, c, d;
	char layout[32] = "Etttt|ttttL";

	cr_assert_eq(cvc_proj_ctx_new(NULL, &ctx), CVC_OK);
	cr_assert_eq(cvc_proj_ctx_new(NULL, &fresh), CVC_OK);
	tu_scenario(&sc, "H100-SXM", 16, 1, 2);
	sc.layers = 8;
	sc.pp_layout = layout;
	cvc_proj_evaluate(ctx, &sc, &a);
	cr_assert(a.valid, "%s", a.reason);
	cvc_proj_evaluate(ctx, &sc, &b);
	cr_expect_eq(b.step_s, a.step_s);
	cr_expect_eq(b.step_s_hi, a.step_s_hi);
	cr_expect_eq(b.mem_gb, a.mem_gb);
	cr_expect_eq(b.comm_s, a.comm_s);
	cr_expect_str_eq(b.warnings, a.warnings);
	/* the same buffer, now the layers 2 | 6 */
	strcpy(layout, "Ett|ttttttL");
	cvc_proj_evaluate(ctx, &sc, &c);
	cvc_proj_evaluate(fresh, &sc, &d);
	cr_assert(c.valid && d.valid, "%s / %s", c.reason, d.reason);
	cr_expect_gt(c.step_s, a.step_s * 1.1, "six layers on a stage: %g s against %g s",
		     c.step_s, a.step_s);
	cr_expect_eq(c.step_s, d.step_s, "%g s from the memo's ctx, %g s fresh", c.step_s,
		     d.step_s);
	cvc_proj_ctx_free(fresh);
	cvc_proj_ctx_free(ctx);
}

/* The stages of a scenario are kept for its copies with their hardware
 * scaled (the upgrade gains' five evaluations), and only for those: the
 * same scenario doubled in compute, then with its dense first layers on
 * another count (only its stages change), then on twice the pipeline
 * stages, each priced as a fresh ctx prices it. */
Test(smemo, stages_kept_across_scale_factors_only)
{
	cvc_proj_ctx *ctx = NULL;
	cvc_proj_scenario sc;
	cvc_proj_result a, b;
	static const double scale[] = {1, 2, 2, 2};
	static const int pp[] = {2, 2, 2, 4}, dense[] = {3, 3, 7, 7};

	cr_assert_eq(cvc_proj_ctx_new(NULL, &ctx), CVC_OK);
	tu_scenario(&sc, "H100-SXM", 64, 2, 2);
	sc.layers = 30; /* not a multiple of 4: uneven stages at pp 4 */
	sc.experts = 8;
	for (int i = 0; i < 4; i++) {
		cvc_proj_ctx *fresh = NULL;

		sc.scale_compute = scale[i];
		sc.pp = pp[i];
		sc.moe_first_dense = dense[i];
		cvc_proj_evaluate(ctx, &sc, &a);
		cr_assert_eq(cvc_proj_ctx_new(NULL, &fresh), CVC_OK);
		cvc_proj_evaluate(fresh, &sc, &b);
		cvc_proj_ctx_free(fresh);
		cr_assert(a.valid && b.valid, "%s / %s", a.reason, b.reason);
		cr_expect_eq(a.step_s, b.step_s, "case %d: %g s, fresh %g s", i, a.step_s, b.step_s);
		cr_expect_eq(a.mem_gb, b.mem_gb, "case %d: %g GB, fresh %g GB", i, a.mem_gb, b.mem_gb);
		cr_expect_eq(a.params_b, b.params_b);
	}
	cvc_proj_ctx_free(ctx);
}
