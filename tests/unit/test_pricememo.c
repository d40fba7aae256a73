/*
 * test_pricememo.c - the projector's shortcuts give what they stand for
 * (bench/README.md "Projector"): proj_fmod() is fmod() wherever the
 * projector asks it, and a pricer's memo of collective prices (struct
 * proj_cmemo) returns, for every collective asked again, what the
 * collective model itself returns, however the slots collide.
 */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include <criterion/criterion.h>

#include "cvc/cvc_model.h"
#include "cvc/cvc_project.h"
#include "projector/proj_internal.h"

Test(pricememo, fmod_same_as_libm)
{
	/* whole numbers both ways, fractions, zero, the 2^53 edge, non-finite */
	static const double v[] = {0,    1,     2,    3,      7,        8,    61,   126,  4096,
				   1e6,  0.5,   2.5,  1e-3,   -4,       -7.5, 9e15, 9.1e15,
				   0x1p53, 0x1p53 + 2, 1e300, INFINITY};
	size_t n = sizeof v / sizeof v[0];

	for (size_t i = 0; i < n; i++)
		for (size_t j = 0; j < n; j++) {
			double a = v[i], b = v[j], want = fmod(a, b), got = proj_fmod(a, b);

			if (isnan(want))
				cr_expect(isnan(got), "proj_fmod(%g, %g) = %g, fmod NaN", a, b, got);
			else
				cr_expect_eq(got, want, "proj_fmod(%.17g, %.17g) = %.17g, fmod %.17g",
					     a, b, got, want);
		}
}

struct grab {
	cvc_proj_ctx *ctx;
	const struct proj_pricer *p;
};

static int grab_cb(void *user, const cvc_proj_scenario *sc, const cvc_proj_result *r)
{
	struct grab *g = user;

	cr_assert(r->valid, "%s", r->reason);
	g->p = proj_ctx_pricer(g->ctx, sc);
	cr_assert_not_null(g->p);
	return 0;
}

/* The collective of kind c, size b, group and members per node. */
static cvc_proj_op coll(int c, int64_t b, int group, int per_node)
{
	cvc_proj_op o;

	memset(&o, 0, sizeof o);
	o.kind = CVC_PROJ_OP_COLL;
	o.sub = c;
	o.bytes = b;
	o.group = group;
	o.per_node = per_node;
	o.comm = CVC_PROJ_COMM_DP;
	o.count = 1;
	return o;
}

/*
 * Expected: 4 kinds x 40 sizes x 4 groups (640 collectives, more than the
 * memo's 256 slots, so entries are replaced and slots shared) priced three
 * times over in different orders, every price the model's own to the bit,
 * through both of the pricer's entry points.
 */
Test(pricememo, collective_memo_returns_the_models_price)
{
	static const int kinds[] = {CVC_MODEL_ALLREDUCE, CVC_MODEL_ALLGATHER,
				    CVC_MODEL_REDUCESCATTER, CVC_MODEL_ALLTOALL};
	static const int groups[][2] = {{8, 8}, {16, 8}, {64, 8}, {4, 4}};
	const char *text = "model: {layers: 2, hidden: 1024, heads: 8, ffn: 4096, seq: 1024}\n"
			   "training: {global_batch: 16}\n"
			   "hardware: {gpu: H100-SXM, gpus: 16}\n";
	cvc_proj_study *st = NULL;
	struct grab g = {NULL, NULL};
	int checked = 0;

	cr_assert_eq(cvc_proj_study_parse("t.yaml", text, strlen(text), &st), CVC_OK);
	cr_assert_eq(cvc_proj_ctx_new(NULL, &g.ctx), CVC_OK);
	cr_assert_eq(cvc_proj_study_run(st, g.ctx, CVC_PROJ_NO_MARGINAL, grab_cb, &g, NULL),
		     CVC_OK);
	cr_assert_not_null(g.p->cmemo, "the pricer has its memo");
	for (int pass = 0; pass < 3; pass++)
		for (int n = 0; n < 640; n++) {
			/* pass 1 walks backwards, pass 2 strides through */
			int i = pass == 0 ? n : pass == 1 ? 639 - n : (n * 257) % 640;
			int k = i % 4, s = (i / 4) % 40, gi = i / 160;
			int64_t bytes = (int64_t)1 << (10 + s / 2);
			cvc_proj_op o;
			cvc_model_price want;
			struct proj_unc u;
			double t;

			bytes += s % 2 ? bytes / 3 : 0;
			o = coll(kinds[k], bytes, groups[gi][0], groups[gi][1]);
			cvc_model_collective_price(g.p->ms_base, (cvc_model_coll)o.sub, o.bytes,
						   o.group, o.per_node, NULL, CVC_ALGO_AUTO, &want);
			memset(&u, 0, sizeof u);
			t = n % 2 ? proj_op_s(g.p, &o) : proj_op_price(g.p, &o, &u);
			cr_expect_eq(t, 1e-6 * want.us,
				     "pass %d: kind %d, %lld bytes, group %d/%d: %.17g s, model %.17g s",
				     pass, o.sub, (long long)o.bytes, o.group, o.per_node, t,
				     1e-6 * want.us);
			checked++;
		}
	cr_expect_eq(checked, 1920);
	cvc_proj_ctx_free(g.ctx);
	cvc_proj_study_free(st);
}
