/*
 * test_tp3d.c - 3D tensor parallelism (tp_row, tp_col, tp_depth; AxoNN's 4D
 * with data parallel, docs/SCENARIOS.md "3D tensor parallelism"): the bytes
 * cvc enumerates per collective (cvc_proj_scenario_ops()) against the
 * authors' per-layer model (axonn-ai/Megatron-AxoNN examples/comm_model.py),
 * a 1 x 1 x 1 grid against plain data parallel, and a row-only grid against
 * Megatron's 1D tensor parallelism.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <criterion/criterion.h>

#include "cvc/cvc_model.h"
#include "cvc/cvc_project.h"
#include "testutil.h"

/* The first scenario of a study text, as a study run hands it (finalized,
 * dp derived), and its result. */
struct first {
	cvc_proj_scenario sc;
	cvc_proj_result r;
};

static void run_one(const char *yaml, struct first *f)
{
	cr_assert_eq(tu_proj_first(yaml, &f->sc, &f->r), 1);
	cr_assert(f->r.valid, "invalid: %s", f->r.reason);
}

/* Per-GPU bytes each collective moves per step (the ring volume a model
 * like comm_model.py counts): all-reduce 2(g-1)/g of its buffer,
 * all-gather and reduce-scatter (g-1)/g of the full tensor; summed by
 * communication type and group size. */
struct vol {
	double by[CVC_PROJ_COMM_N][2048];
	double ag_depth, rs_depth; /* tp all-gathers / reduce-scatters */
	int ops;
};

static int vol_cb(void *user, const cvc_proj_op *o)
{
	struct vol *v = user;
	double g = o->group, f;

	v->ops++;
	/* comm_model.py counts the layers' linear layers: not the first and
	 * last stages' vocabulary-parallel embedding and output layer */
	if (o->kind != CVC_PROJ_OP_COLL || o->group >= 2048 || o->stage != CVC_PROJ_STAGE_ALL)
		return 0;
	f = o->sub == CVC_MODEL_ALLREDUCE ? 2 * (g - 1) / g : (g - 1) / g;
	v->by[o->comm][o->group] += f * (double)o->bytes * o->count;
	if (o->comm == CVC_PROJ_COMM_TP && o->sub == CVC_MODEL_ALLGATHER)
		v->ag_depth += f * (double)o->bytes * o->count;
	if (o->comm == CVC_PROJ_COMM_TP && o->sub == CVC_MODEL_REDUCESCATTER)
		v->rs_depth += f * (double)o->bytes * o->count;
	return 0;
}

#define GRID_YAML(recompute)                                                                     \
	"model: {layers: 2, hidden: 1024, heads: 16, ffn_type: gelu, vocab: 51200, seq: 512}\n"      \
	"training: {global_batch: 16, micro_batch: 8, recompute: " recompute ", zero: 0}\n"         \
	"parallelism: {tp_row: 2, tp_col: 4, tp_depth: 8}\n"                                       \
	"hardware: {gpu: perlmutter, gpus_per_node: 4, gpus: 128}\n"

/* comm_model.py's terms, bytes per linear layer per step (B global batch
 * in sequences, S seq, H hidden, weight K H x H, bf16, grad_acc 1). */
struct grid {
	double B, S, H, r, c, d, data;
};

static double cm_row(const struct grid *g, double K, int tr)
{
	double m = g->B / g->data / g->d * g->S;

	return tr ? 2 * 2 * (g->r - 1) / g->r * (m * K * g->H / g->c) * 2
		  : 2 * (g->r - 1) / g->r * (m * g->H / g->c) * 2;
}

static double cm_col(const struct grid *g, double K, int tr)
{
	double m = g->B / g->data / g->d * g->S;

	return tr ? 2 * (g->c - 1) / g->c * (m * g->H / g->r) * 2
		  : 2 * 2 * (g->c - 1) / g->c * (m * K * g->H / g->r) * 2;
}

static double cm_depth(const struct grid *g, double K)
{
	return 3 * (g->d - 1) / g->d * K * g->H * g->H / (g->c * g->r) * 2;
}

static double cm_dp(const struct grid *g, double K)
{
	return 4 * (g->data - 1) / g->data * K * g->H * g->H / (g->c * g->r * g->d) * 2;
}

static void near(double got, double want, const char *what)
{
	cr_expect(fabs(got / want - 1) < 1e-6, "%s: cvc %.6g bytes, formula %.6g", what, got, want);
}

/*
 * A 2 x 4 x 8 grid (row, column, depth), 2-way data parallel, 2 layers of
 * hidden 1024, 16 sequences of 512 in one micro-batch per replica.  With
 * full recomputation (AxoNN's runs) cvc's volumes per step are:
 *  - row (group 2) and column (group 4) all-reduces: comm_model.py's terms
 *    for QKV (K 3), the projection (K 1, transposed) and FFN up (K 4); for
 *    FFN down (K 4, transposed) cvc puts K on the column term (its backward
 *    all-reduce of the 4H-wide input gradient) and not on the row term (its
 *    forward all-reduce of the H-wide output): that layer's input is 4H and
 *    its output H, so comm_model.py's transposed formula, which keeps K on
 *    the row term, counts that layer's row traffic 4x and column traffic
 *    1/4x (docs/SCENARIOS.md);
 *  - depth (group 8): 4/3 of comm_model.py's 3 (g-1)/g K H^2/(Gc Gr): cvc
 *    gathers the weights again for the recomputed forward (AxoNN's
 *    AsyncLinear gathers in every forward unless weights are cached);
 *    with no recomputation the two agree exactly (next test);
 *  - data parallel (group 2, booked dp): half of comm_model.py's weight
 *    term (cvc all-reduces bf16 gradients as it does for every layout;
 *    comm_model.py's 4 x ... x 2 is fp32), plus the biases and norms (4H
 *    per layer) and the embedding (V H / tp).
 */
Test(tp3d, volumes_against_comm_model)
{
	static struct vol v;
	struct first f;
	struct grid g = {16, 512, 1024, 2, 4, 8, 2};
	double L = 2, row, col, dep = 0, dp = 0;

	run_one(GRID_YAML("full"), &f);
	cr_assert_eq(f.sc.tp, 64);
	cr_assert_eq(f.sc.dp, 2);
	memset(&v, 0, sizeof v);
	cvc_proj_scenario_ops(&f.sc, vol_cb, &v);
	cr_assert_gt(v.ops, 0);
	row = L * (cm_row(&g, 3, 0) + cm_row(&g, 1, 1) + cm_row(&g, 4, 0) + cm_row(&g, 1, 1));
	col = L * (cm_col(&g, 3, 0) + cm_col(&g, 1, 1) + cm_col(&g, 4, 0) + 4 * cm_col(&g, 1, 1));
	near(v.by[CVC_PROJ_COMM_TP][2], row, "row all-reduces");
	near(v.by[CVC_PROJ_COMM_TP][4], col, "column all-reduces");
	/* the FFN-down difference, stated: comm_model.py's own row + column
	 * terms for that layer against cvc's */
	cr_log_info("FFN down per step: comm_model.py row %.4g + column %.4g bytes, cvc row %.4g + "
		    "column %.4g", L * cm_row(&g, 4, 1), L * cm_col(&g, 4, 1), L * cm_row(&g, 1, 1),
		    L * 4 * cm_col(&g, 1, 1));
	cr_expect_gt(fabs(cm_row(&g, 4, 1) - cm_row(&g, 1, 1)), 0);
	for (int K = 0; K < 4; K++) {
		static const double Ks[] = {3, 1, 4, 4};

		dep += L * cm_depth(&g, Ks[K]);
		dp += L * cm_dp(&g, Ks[K]);
	}
	near(v.by[CVC_PROJ_COMM_TP][8], dep * 4 / 3, "depth all-gathers + reduce-scatters");
	near(v.ag_depth, dep, "depth all-gathers (forward, recomputed forward, backward)");
	near(v.rs_depth, dep / 3, "depth reduce-scatters");
	near(v.by[CVC_PROJ_COMM_DP][2],
	     dp / 2 + 2 * (g.data - 1) / g.data * 2 * (L * 4 * g.H + 51200 * g.H / 64),
	     "data-parallel all-reduce");
}

/* No recomputation: the depth volume is comm_model.py's exactly, and the
 * forward all-reduces run once (comm_model.py's factor 2 on them is the
 * recomputed forward): the column term of QKV and FFN up halves. */
Test(tp3d, volumes_without_recompute)
{
	static struct vol v;
	struct first f;
	struct grid g = {16, 512, 1024, 2, 4, 8, 2};
	double L = 2, dep = 0, col;

	run_one(GRID_YAML("none"), &f);
	memset(&v, 0, sizeof v);
	cvc_proj_scenario_ops(&f.sc, vol_cb, &v);
	dep = L * (cm_depth(&g, 3) + cm_depth(&g, 1) + cm_depth(&g, 4) + cm_depth(&g, 4));
	near(v.by[CVC_PROJ_COMM_TP][8], dep, "depth all-gathers + reduce-scatters");
	col = L * (cm_col(&g, 3, 0) / 2 + cm_col(&g, 1, 1) + cm_col(&g, 4, 0) / 2 +
		   4 * cm_col(&g, 1, 1));
	near(v.by[CVC_PROJ_COMM_TP][4], col, "column all-reduces");
}

/* Collectives of a scenario, for comparing two lists. */
struct colls {
	cvc_proj_op op[256];
	int n, other;
};

static int colls_cb(void *user, const cvc_proj_op *o)
{
	struct colls *c = user;

	if (o->kind != CVC_PROJ_OP_COLL) {
		c->other++;
		return 0;
	}
	if (c->n < 256)
		c->op[c->n++] = *o;
	return 0;
}

#define SMALL_YAML(par, overlap)                                                                 \
	"model: {layers: 4, hidden: 2048, heads: 16, ffn_type: gelu, vocab: 51200, seq: 2048}\n"     \
	"training: {global_batch: 64, micro_batch: 2, recompute: full, zero: 0}\n"                 \
	"parallelism: " par "\n"                                                                     \
	"comm: {tp_overlap: " overlap "}\n"                                                          \
	"hardware: {gpu: A100-SXM-80GB, gpus_per_node: 8, gpus: 16, host_launch_us: 0}\n"

static void same_step(const struct first *a, const struct first *b, const char *what)
{
	cr_expect(fabs(a->r.step_s / b->r.step_s - 1) < 1e-9, "%s: step %.9g vs %.9g", what,
		  a->r.step_s, b->r.step_s);
	cr_expect(fabs(a->r.compute_s / b->r.compute_s - 1) < 1e-9, "%s: compute", what);
	cr_expect(fabs(a->r.comm_s - b->r.comm_s) <= 1e-9 * a->r.step_s, "%s: comm", what);
	cr_expect(fabs(a->r.mem_gb / b->r.mem_gb - 1) < 1e-9, "%s: memory %.6g vs %.6g", what,
		  a->r.mem_gb, b->r.mem_gb);
}

/* A 1 x 1 x 1 grid (tp_row 1 given) is plain data parallel: the same
 * operators, the same collectives (the gradient all-reduce only), the same
 * step and memory. */
Test(tp3d, unit_grid_is_data_parallel)
{
	static struct colls a, b;
	struct first g3, dp;

	run_one(SMALL_YAML("{tp_row: 1}", "true"), &g3);
	run_one(SMALL_YAML("{tp: 1}", "true"), &dp);
	cr_assert_eq(g3.sc.dp, 16);
	memset(&a, 0, sizeof a);
	memset(&b, 0, sizeof b);
	cvc_proj_scenario_ops(&g3.sc, colls_cb, &a);
	cvc_proj_scenario_ops(&dp.sc, colls_cb, &b);
	cr_assert_eq(a.n, b.n);
	cr_assert_eq(a.other, b.other);
	for (int i = 0; i < a.n; i++)
		cr_expect(a.op[i].sub == b.op[i].sub && a.op[i].bytes == b.op[i].bytes &&
			  a.op[i].group == b.op[i].group && a.op[i].count == b.op[i].count &&
			  a.op[i].comm == CVC_PROJ_COMM_DP, "collective %d differs", i);
	same_step(&g3, &dp, "1x1x1 vs dp");
}

/*
 * A row-only grid (tp_row 4, tp_col = tp_depth = 1) is Megatron's 1D tensor
 * parallelism: QKV and FFN up split their outputs over the row axis
 * (column-parallel), the projection and FFN down their inputs
 * (row-parallel), the forward all-reduces follow the projection and FFN
 * down and the backward ones QKV's and FFN up's input gradients, each of
 * tokens x hidden: the same operators as tp 4 without sequence
 * parallelism.  They differ only in overlap: AxoNN runs each backward
 * all-reduce beside its layer's weight-gradient GEMM (tp_overlap), which
 * cvc's 1D layout does not price without sequence parallelism; with
 * tp_overlap off both price the same step.
 */
Test(tp3d, row_grid_is_megatron_1d)
{
	struct first g3, t1, g3o;

	run_one(SMALL_YAML("{tp_row: 4}", "false"), &g3);
	run_one(SMALL_YAML("{tp: 4, sp: false}", "false"), &t1);
	cr_assert_eq(g3.sc.tp, 4);
	same_step(&g3, &t1, "row grid vs 1D tp");
	cr_expect(fabs(g3.r.comm_type_s[CVC_PROJ_COMM_TP] / t1.r.comm_type_s[CVC_PROJ_COMM_TP] - 1) <
		  1e-9);
	run_one(SMALL_YAML("{tp_row: 4}", "true"), &g3o);
	cr_expect_gt(g3o.r.hidden_type_s[CVC_PROJ_COMM_TP], 0);
	cr_expect_lt(g3o.r.step_s, g3.r.step_s);
	cr_log_info("tp 4: step %.4f s; 3D row 4: %.4f s, with AxoNN's overlap %.4f s (%.4f s of "
		    "tp comm hidden)", t1.r.step_s, g3.r.step_s, g3o.r.step_s,
		    g3o.r.hidden_type_s[CVC_PROJ_COMM_TP]);
}

/* The grid's checks name what is wrong. */
Test(tp3d, invalid_grids_say_why)
{
	static const struct {
		const char *par, *why;
	} cases[] = {
		{"{tp_row: 2, tp_col: 2, tp: 8}", "tp must equal"},
		{"{tp_row: 2, sp: true}", "sequence parallelism"},
		{"{tp_row: 2, pp: 2}", "pipeline"},
		{"{tp_depth: 4}", "micro_batch not divisible by tp_depth"},
		{"{tp_row: 32}", "heads"},
	};

	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char yaml[1024];
		struct first f;

		snprintf(yaml, sizeof yaml,
			 "model: {layers: 4, hidden: 2048, heads: 16, seq: 2048}\n"
			 "training: {global_batch: 64, micro_batch: 2}\n"
			 "parallelism: %s\nhardware: {gpu: A100-SXM-80GB, gpus: 64}\n",
			 cases[i].par);
		cr_assert_eq(tu_proj_first(yaml, &f.sc, &f.r), 1);
		cr_expect(!f.r.valid && strstr(f.r.reason, cases[i].why), "%s: '%s'", cases[i].par,
			  f.r.reason ? f.r.reason : "");
	}
}
