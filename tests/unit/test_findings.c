/*
 * test_findings.c - the papers' findings as cvc computes them (docs/FINDINGS.md).
 *
 * Each test states the claim, the setup and the tolerance, and compares only
 * scenarios on equal footing: both layouts valid and fitting in memory, at the
 * same GPU count, hardware and global batch, unless the GPU count is what the
 * claim is about. projector/studies/scaling2023.yaml (the shipped study
 * until the shipped one asked about the next racks) carries the Pati et
 * al. style trends; projector/studies/fernandez2024.yaml the
 * FSDP-only vs model-parallel comparison set up as Fernandez et al. (2024) ran it.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "cvc/cvc_project.h"
#include "testutil.h"

#define MAXR 20000

struct row {
	char model[24], gpu[24];
	double scale, gpus, gb, tp, pp, zero, tps, tps_lo, tps_hi, comm_share, exposed_share;
	double comm_to_compute, bubble_share;
	double tr, tc, td, dp, mb, sp, step, step_lo, step_hi, seq, layers, hidden, vocab;
	int fits, recompute;
	/* local SGD: clusters, link, H, streamed outer exchange, token side */
	double clusters, gbps, H, tf, eff;
	int ovl;
};

struct rows {
	struct row *v;
	int n;
};

static int keep_cb(void *user, const cvc_proj_scenario *sc, const cvc_proj_result *r)
{
	struct rows *rs = user;
	struct row *w;

	/* invalid layouts never enter a comparison */
	if (!r->valid || rs->n >= MAXR)
		return 0;
	w = &rs->v[rs->n++];
	snprintf(w->model, sizeof w->model, "%s", sc->model);
	snprintf(w->gpu, sizeof w->gpu, "%s", sc->gpu);
	w->scale = sc->scale_compute;
	w->gpus = sc->gpus;
	w->gb = sc->global_batch;
	w->tp = sc->tp;
	w->pp = sc->pp;
	w->zero = sc->zero;
	w->recompute = sc->recompute;
	w->tps = r->tokens_per_s;
	w->tps_lo = r->tokens_per_s_lo;
	w->tps_hi = r->tokens_per_s_hi;
	w->comm_share = r->comm_share;
	w->exposed_share = r->exposed_share;
	w->comm_to_compute = r->comm_to_compute;
	w->bubble_share = r->bubble_s / r->step_s;
	w->fits = r->fits;
	w->clusters = sc->clusters;
	w->gbps = sc->inter_cluster_gbps;
	w->H = sc->local_sgd_h;
	w->ovl = sc->outer_overlap;
	w->tf = r->token_factor;
	w->eff = r->eff_tokens_per_s;
	w->tr = sc->tp_row, w->tc = sc->tp_col, w->td = sc->tp_depth;
	w->dp = sc->dp, w->mb = sc->micro_batch, w->sp = sc->sp;
	w->step = r->step_s, w->step_lo = r->step_s_lo, w->step_hi = r->step_s_hi;
	w->seq = sc->seq, w->layers = sc->layers, w->hidden = sc->hidden, w->vocab = sc->vocab;
	return 0;
}

/* Runs a study (NULL: the shipped one) into rows, intervals on; at least
 * min valid scenarios must come back (a study that shrank fails here). */
static void load(struct rows *rs, const char *path, int min)
{
	cvc_proj_study *st = NULL;
	cvc_proj_ctx *ctx = NULL;

	rs->v = calloc(MAXR, sizeof *rs->v);
	rs->n = 0;
	cr_assert_not_null(rs->v);
	if (path)
		cr_assert_eq(cvc_proj_study_load(path, &st), CVC_OK, "%s: %s", path,
			     cvc_proj_study_errmsg(st));
	else
		cr_assert_eq(cvc_proj_study_default(&st), CVC_OK, "%s", cvc_proj_study_errmsg(st));
	cr_assert_eq(cvc_proj_ctx_new(NULL, &ctx), CVC_OK);
	cr_assert_eq(cvc_proj_study_run(st, ctx, CVC_PROJ_NO_MARGINAL, keep_cb, rs, NULL), CVC_OK);
	cr_assert_geq(rs->n, min);
	cr_assert_lt(rs->n, MAXR);
	cvc_proj_ctx_free(ctx);
	cvc_proj_study_free(st);
}

/* the studies' rows, loaded by each test's .init and freed together */
static struct rows shipped, fern, pati, lsgd, axonn;

static void load_shipped(void)
{
	load(&shipped, CVC_SOURCE_DIR "/projector/studies/scaling2023.yaml", 1000);
}

static void load_fern(void)
{
	load(&fern, CVC_SOURCE_DIR "/projector/studies/fernandez2024.yaml", 1000);
}

static void free_rows(void)
{
	struct rows *all[] = {&shipped, &fern, &pati, &lsgd, &axonn};

	for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) {
		free(all[i]->v);
		all[i]->v = NULL;
		all[i]->n = 0;
	}
}

static const struct row *find(const char *model, const char *gpu, double scale, double gpus,
			      double tp, double pp, double zero, int recompute)
{
	for (int i = 0; i < shipped.n; i++) {
		const struct row *w = &shipped.v[i];

		if (!strcmp(w->model, model) && !strcmp(w->gpu, gpu) && w->scale == scale &&
		    w->gpus == gpus && w->tp == tp && w->pp == pp && w->zero == zero &&
		    w->recompute == recompute)
			return w;
	}
	return NULL;
}

enum kind { ANY, FSDP_ONLY, MODEL_PARALLEL };

/* The fastest fitting layout of one cell (global batch gb, 0: any) of a kind:
 * FSDP-only is tp 1, pp 1, ZeRO-3; model parallel is tp * pp > 1. NULL: none. */
static const struct row *best(const struct rows *rs, const char *model, const char *gpu,
			      double scale, double gpus, double gb, enum kind kind)
{
	const struct row *b = NULL;

	for (int i = 0; i < rs->n; i++) {
		const struct row *w = &rs->v[i];
		int fsdp_only = w->tp == 1 && w->pp == 1 && w->zero == 3;

		if (strcmp(w->model, model) || strcmp(w->gpu, gpu) || w->scale != scale ||
		    w->gpus != gpus || (gb > 0 && w->gb != gb) || !w->fits)
			continue;
		if ((kind == FSDP_ONLY && !fsdp_only) ||
		    (kind == MODEL_PARALLEL && w->tp * w->pp <= 1))
			continue;
		if (!b || w->tps > b->tps)
			b = w;
	}
	return b;
}

/* Claim (Pati et al. 2023): communication's share of a step grows with scale.
 * Setup: one fixed layout per model on H100 that is valid and fits at every
 * count, 1K..16K GPUs at a fixed global batch (the GPU count is the claim).
 * 405B: 126 layers allow only pp 2 at power-of-two counts, and tp 8 pp 2
 * fits only with ZeRO-3 and full recompute.  What holds: communication
 * against compute (comm_to_compute) rises strictly for all three; its share
 * of the step (comm_share, comm / step) rises for GPT-3 175B only: with the
 * batch fixed, each replica runs fewer micro-batches, and for 70B and 405B
 * the pipeline bubble's share of the step grows faster than communication's
 * (docs/FINDINGS.md).  Tolerance: strictly monotone. */
Test(project_findings, comm_share_with_gpus, .init = load_shipped, .fini = free_rows)
{
	static const char *const models[] = {"llama2-70b", "gpt3-175b", "llama3-405b"};
	static const double pps[] = {8, 8, 2}, zeros[] = {1, 1, 3};
	static const int recs[] = {CVC_PROJ_RECOMP_NONE, CVC_PROJ_RECOMP_NONE, CVC_PROJ_RECOMP_FULL};
	static const int share_rises[] = {0, 1, 0};

	for (size_t m = 0; m < 3; m++) {
		const struct row *prev = NULL;

		for (double g = 1024; g <= 16384; g *= 2) {
			const struct row *w =
				find(models[m], "H100-SXM", 1, g, 8, pps[m], zeros[m], recs[m]);

			cr_assert_not_null(w, "%s at %g GPUs (tp 8, pp %g) missing", models[m], g,
					   pps[m]);
			cr_assert(w->fits, "%s at %g GPUs (tp 8, pp %g) does not fit", models[m], g,
				  pps[m]);
			cr_log_info("%s %g GPUs: comm/step %.3f, comm/compute %.3f, bubble/step %.3f",
				    models[m], g, w->comm_share, w->comm_to_compute, w->bubble_share);
			if (prev) {
				cr_expect_gt(w->comm_to_compute, prev->comm_to_compute,
					     "%s: comm/compute %.3f at %g GPUs not above %.3f", models[m],
					     w->comm_to_compute, g, prev->comm_to_compute);
				cr_expect_gt(w->bubble_share, prev->bubble_share, "%s at %g GPUs",
					     models[m], g);
				if (share_rises[m])
					cr_expect_gt(w->comm_share, prev->comm_share,
						     "%s: comm share %.3f at %g GPUs not above %.3f",
						     models[m], w->comm_share, g, prev->comm_share);
				else
					cr_expect_lt(w->comm_share, prev->comm_share,
						     "%s: comm share %.3f at %g GPUs not below %.3f",
						     models[m], w->comm_share, g, prev->comm_share);
			}
			prev = w;
		}
	}
}

/* Claim (Pati et al. 2023): communication hidden today is exposed on faster
 * compute with the same links. Setup: every valid, fitting layout on B200 vs
 * the same layout, GPU count and batch on B200 with 4x compute and HBM
 * bandwidth. Tolerance: strictly more exposed wherever anything is exposed. */
Test(project_findings, exposed_share_rises_with_4x_compute_same_links, .init = load_shipped,
     .fini = free_rows)
{
	int checked = 0;

	for (int i = 0; i < shipped.n; i++) {
		const struct row *a = &shipped.v[i], *b;

		if (strcmp(a->gpu, "B200") || a->scale != 1 || !a->fits)
			continue;
		b = find(a->model, "B200", 4, a->gpus, a->tp, a->pp, a->zero, a->recompute);
		cr_assert_not_null(b);
		if (a->exposed_share < 0.01)
			continue; /* nothing exposed to grow */
		cr_expect_gt(b->exposed_share, a->exposed_share,
			     "%s %g GPUs tp %g pp %g: exposed %.3f -> %.3f", a->model, a->gpus,
			     a->tp, a->pp, a->exposed_share, b->exposed_share);
		checked++;
	}
	cr_assert_gt(checked, 500);
}

/* Claim (Fernandez et al. 2024, diminishing returns): per-GPU throughput of
 * the best fitting layout falls as GPUs are added. Setup: the shipped study's
 * fixed global batch per model (strong scaling, which produces part of the
 * effect by itself: fewer sequences per replica). The GPU count is the claim.
 * One exception is allowed, and only where it is a memory edge: twice the
 * GPUs shard the optimizer states over twice the replicas, so a faster
 * layout that did not fit may fit; a rise is then accepted only if that
 * layout does not fit at the smaller count (logged).  The first count must
 * still beat the last. */
Test(project_findings, tokens_per_gpu_fall_as_gpus_grow, .init = load_shipped, .fini = free_rows)
{
	static const char *const models[] = {"llama2-7b", "llama2-70b", "gpt3-175b",
					     "llama3-405b", "gpt-1t"};
	static const char *const gpus[] = {"A100-SXM-80GB", "H100-SXM", "B200"};

	for (size_t m = 0; m < 5; m++)
		for (size_t k = 0; k < 3; k++) {
			double prev = INFINITY, first = 0, last = 0;

			for (double g = 1024; g <= 16384; g *= 2) {
				const struct row *b = best(&shipped, models[m], gpus[k], 1, g, 0, ANY);
				const struct row *there;
				double per = b ? b->tps / g : 0;

				if (per <= 0)
					continue; /* nothing fits at this size */
				if (first == 0)
					first = per;
				last = per;
				there = find(models[m], gpus[k], 1, g / 2, b->tp, b->pp, b->zero,
					     b->recompute);
				if (per > prev * (1 + 1e-9) && there && !there->fits)
					cr_log_info("%s on %s: %.1f tok/s/GPU at %g GPUs above %.1f: tp %g "
						    "pp %g fits only from %g GPUs", models[m], gpus[k], per,
						    g, prev, b->tp, b->pp, g);
				else
					cr_expect_leq(per, prev * (1 + 1e-9),
						      "%s on %s: %.1f tok/s/GPU at %g GPUs", models[m],
						      gpus[k], per, g);
				prev = per;
			}
			if (first > 0)
				cr_expect_lt(last, first, "%s on %s: no decline", models[m], gpus[k]);
		}
}

/* Claim: on a GPU with 4x B200's compute and B200's links, FSDP-only loses to
 * the best model-parallel layout wherever FSDP-only fits. Setup: the shipped
 * study, both kinds valid and fitting, same model, GPU count and batch. */
Test(project_findings, fsdp_only_loses_on_4x_compute_same_links, .init = load_shipped,
     .fini = free_rows)
{
	int compared = 0;

	for (double g = 1024; g <= 16384; g *= 2) {
		const struct row *f = best(&shipped, "llama2-70b", "B200", 4, g, 0, FSDP_ONLY);
		const struct row *t = best(&shipped, "llama2-70b", "B200", 4, g, 0, MODEL_PARALLEL);

		if (!f)
			continue; /* FSDP-only is invalid (dp > batch) or does not fit */
		cr_assert_not_null(t, "B200x4 %g GPUs: no model-parallel layout fits", g);
		cr_expect_lt(f->tps, t->tps, "B200x4 %g GPUs: FSDP-only %.0f vs model parallel %.0f",
			     g, f->tps, t->tps);
		compared++;
	}
	cr_assert_gt(compared, 0, "FSDP-only never valid and fitting: nothing compared");
}

/* Ratio best model parallel / best FSDP-only of one cell; 0 when either kind
 * has no valid, fitting layout there. *fo and *mo receive the two rows. */
static double mp_over_fsdp(const char *model, const char *gpu, double g, double gb,
			   const struct row **fo, const struct row **mo)
{
	*fo = best(&fern, model, gpu, 1, g, gb, FSDP_ONLY);
	*mo = best(&fern, model, gpu, 1, g, gb, MODEL_PARALLEL);
	return *fo && *mo ? (*mo)->tps / (*fo)->tps : 0;
}

/* The smallest GPU count from which model parallel beats FSDP-only at every
 * larger count of the study (0: none), logged with both intervals. */
static double crossover(const char *model, const char *gpu, double gb)
{
	double cross = 0;

	for (double g = 64; g <= 2048; g *= 2) {
		const struct row *f, *m;
		double q = mp_over_fsdp(model, gpu, g, gb, &f, &m);

		cr_assert_gt(q, 0, "%s on %s, %g GPUs, batch %g: a kind has no valid fitting layout",
			     model, gpu, g, gb);
		cr_log_info("%s %s %4g GPUs batch %g: FSDP-only %.0f [%.0f, %.0f], model parallel "
			    "(tp %g pp %g zero %g) %.0f [%.0f, %.0f] tokens/s, ratio %.3f",
			    model, gpu, g, gb, f->tps, f->tps_lo, f->tps_hi, m->tp, m->pp, m->zero,
			    m->tps, m->tps_lo, m->tps_hi, q);
		if (q > 1 && cross == 0)
			cross = g;
		else if (q <= 1)
			cross = 0;
	}
	return cross;
}

/*
 * Claim (Fernandez et al. 2024): beyond some scale FSDP-only's communication
 * makes model-parallel layouts preferable, and faster hardware reaches that
 * scale sooner. Setup: projector/studies/fernandez2024.yaml (Llama-2 shapes,
 * 64..2048 GPUs, 8 per node, PyTorch, bf16, global batch 2048 sequences of
 * 4096: the batch at which FSDP-only stays valid at 2048 GPUs), each side
 * the fastest valid and fitting layout at the same GPU count and batch.
 * What cvc finds and this test holds it to:
 *  - 7B and 13B on H100: FSDP-only wins at 64 GPUs, model parallel wins from
 *    a crossover at or below 1024 GPUs on; at 2048 by >= 1.2x, and for 7B the
 *    two 90% intervals no longer overlap;
 *  - 7B on A100 and V100 (slower compute, catalog links): no crossover up to
 *    2048 GPUs; FSDP-only stays ahead, or level within 1% (64 A100s: 1.002,
 *    since all-gathers and reduce-scatters across nodes are priced as
 *    NCCL's rings);
 *  - 70B: FSDP-only fits only with full recompute, so model parallel wins at
 *    every count on H100 and A100 (no crossover to find: it is never
 *    behind); on V100 up to 1024 GPUs, and the two are level (within 3%)
 *    at 2048, where FSDP-only's larger full-recompute GEMMs run at the
 *    V100's default efficiency and model parallel's tp 8 ones at the
 *    A100 fit's (docs/FINDINGS.md).
 */
Test(project_findings, fsdp_vs_model_parallel_at_equal_footing, .init = load_fern,
     .fini = free_rows)
{
	static const char *const mid[] = {"llama2-7b", "llama2-13b"};
	static const char *const older[] = {"A100-SXM-80GB", "V100-SXM2-32GB"};
	static const char *const gens[] = {"H100-SXM", "A100-SXM-80GB", "V100-SXM2-32GB"};
	const double gb = 2048;
	const struct row *f, *m;

	for (size_t i = 0; i < 2; i++) {
		double cross = crossover(mid[i], "H100-SXM", gb);

		cr_expect_leq(mp_over_fsdp(mid[i], "H100-SXM", 64, gb, &f, &m), 1.02,
			      "%s H100 64 GPUs: model parallel already ahead", mid[i]);
		cr_expect(cross > 64 && cross <= 1024, "%s H100: crossover at %g GPUs", mid[i],
			  cross);
		cr_expect_geq(mp_over_fsdp(mid[i], "H100-SXM", 2048, gb, &f, &m), 1.2,
			      "%s H100 2048 GPUs: model parallel not 1.2x ahead", mid[i]);
		cr_log_info("%s H100: model parallel ahead from %g GPUs", mid[i], cross);
	}
	mp_over_fsdp("llama2-7b", "H100-SXM", 2048, gb, &f, &m);
	cr_expect_gt(m->tps_lo, f->tps_hi, "7B H100 2048: intervals overlap");
	for (size_t k = 0; k < 2; k++) {
		cr_expect_eq(crossover("llama2-7b", older[k], gb), 0, "7B %s: crossover found",
			     older[k]);
		for (double g = 64; g <= 2048; g *= 2)
			cr_expect_lt(mp_over_fsdp("llama2-7b", older[k], g, gb, &f, &m), 1.01,
				     "7B %s %g GPUs: model parallel ahead", older[k], g);
	}
	for (size_t k = 0; k < 3; k++)
		for (double g = 64; g <= 2048; g *= 2) {
			double q = mp_over_fsdp("llama2-70b", gens[k], g, gb, &f, &m);

			if (k == 2 && g == 2048)
				cr_expect_lt(fabs(q - 1), 0.03, "70B V100 2048 GPUs: ratio %.3f", q);
			else
				cr_expect_gt(q, 1, "70B %s %g GPUs: FSDP-only ahead (%.3f)", gens[k],
					     g, q);
			cr_expect_eq(f->recompute, CVC_PROJ_RECOMP_FULL,
				     "70B %s %g GPUs: FSDP-only fits without full recompute",
				     gens[k], g);
		}
}

/* Setup check: with Llama 2's own 4M-token batch (1024 sequences) FSDP-only
 * has dp = 2048 > 1024 sequences at 2048 GPUs: no such row may be compared. */
Test(project_findings, fsdp_only_invalid_past_the_batch_is_never_compared, .init = load_fern,
     .fini = free_rows)
{
	const struct row *f, *m;

	cr_expect_null(best(&fern, "llama2-7b", "H100-SXM", 1, 2048, 1024, FSDP_ONLY));
	cr_expect_not_null(best(&fern, "llama2-7b", "H100-SXM", 1, 2048, 1024, MODEL_PARALLEL));
	cr_expect_eq(mp_over_fsdp("llama2-7b", "H100-SXM", 2048, 1024, &f, &m), 0);
	cr_expect_gt(mp_over_fsdp("llama2-7b", "H100-SXM", 1024, 1024, &f, &m), 0);
}

static void load_pati(void)
{
	load(&pati, CVC_SOURCE_DIR "/projector/studies/pati2023.yaml", 36);
}

static const struct row *pati_row(const char *model, double scale, double gpus)
{
	for (int i = 0; i < pati.n; i++)
		if (!strcmp(pati.v[i].model, model) && pati.v[i].scale == scale &&
		    pati.v[i].gpus == gpus && pati.v[i].fits)
			return &pati.v[i];
	return NULL;
}

/*
 * Claim (Pati et al. 2023): communication becomes 40-75% of runtime as models
 * and hardware evolve. Setup: projector/studies/pati2023.yaml, one fixed
 * layout per model (tp 8, pp over nodes, ZeRO-1), A100 with 1x, 2x, 4x
 * compute and HBM bandwidth and the same links. What cvc finds, and holds:
 *  - along the hardware axis (same model, GPU count, layout) the comm share
 *    rises strictly with compute;
 *  - today's hardware stays below 40% everywhere; 4x compute reaches the band
 *    (>= 0.40) for GPT-3 175B from 4096 GPUs on (0.398 at 2048);
 *  - along model size (GPT-3 175B vs the 1T GPT, same GPU count and hardware)
 *    the share falls: with tp fixed, compute grows as h^2 per token and TP
 *    traffic as h (the paper's own algorithmic edge of compute), so the
 *    paper's "hidden becomes exposed in larger models" is not reproduced.
 */
Test(project_findings, comm_share_on_future_hardware, .init = load_pati, .fini = free_rows)
{
	static const double scales[] = {1, 2, 4};

	for (double g = 1024; g <= 8192; g *= 2) {
		for (size_t k = 0; k < 3; k++) {
			const struct row *a = pati_row("gpt3-175b", scales[k], g);
			const struct row *b = pati_row("gpt-1t", scales[k], g);

			cr_assert(a && b, "%g GPUs x%g: a fixed layout does not fit", g, scales[k]);
			cr_expect_lt(b->comm_share, a->comm_share, "%g GPUs x%g: 1T %.3f vs 175B %.3f",
				     g, scales[k], b->comm_share, a->comm_share);
			if (k == 0)
				cr_expect_lt(a->comm_share, 0.40, "175B %g GPUs A100: %.3f", g,
					     a->comm_share);
			else
				cr_expect_gt(a->comm_share, pati_row("gpt3-175b", scales[k - 1], g)->comm_share,
					     "175B %g GPUs: comm share not rising with compute", g);
			cr_log_info("%g GPUs x%g: comm share 175B %.3f, 1T %.3f", g, scales[k],
				    a->comm_share, b->comm_share);
		}
		if (g >= 4096)
			cr_expect_geq(pati_row("gpt3-175b", 4, g)->comm_share, 0.40,
				      "175B %g GPUs 4x compute below 40%%", g);
	}
}

/* ---- local SGD / DiLoCo (projector/studies/localsgd2024.yaml) ------------------ */

static void load_lsgd(void)
{
	load(&lsgd, CVC_SOURCE_DIR "/projector/studies/localsgd2024.yaml", 300);
}

/* The fastest fitting row of a model with C clusters over gbps, H and
 * streaming ovl (-1: either; gbps < 0: any link), by tokens/s. */
static const struct row *lsgd_best(const char *model, double C, double gbps, double H, int ovl)
{
	const struct row *b = NULL;

	for (int i = 0; i < lsgd.n; i++) {
		const struct row *w = &lsgd.v[i];

		if (strcmp(w->model, model) || !w->fits || w->clusters != C || w->H != H ||
		    (gbps >= 0 && w->gbps != gbps) || (ovl >= 0 && w->ovl != ovl))
			continue;
		if (!b || w->tps > b->tps)
			b = w;
	}
	return b;
}

static void load_axonn(void)
{
	load(&axonn, CVC_SOURCE_DIR "/projector/studies/axonn2024.yaml", 500);
}

/* The fastest valid, fitting layout of the AxoNN study at global batch gb:
 * 4D (a tp_row/tp_col/tp_depth grid) or Megatron's 1D, the latter with
 * recompute `rec` (-1: any). */
static const struct row *axonn_best(double gb, int grid, int rec)
{
	const struct row *b = NULL;

	for (int i = 0; i < axonn.n; i++) {
		const struct row *w = &axonn.v[i];
		int is3d = w->tr > 0 || w->tc > 0 || w->td > 0;

		if (w->gb != gb || !w->fits || is3d != grid || (rec >= 0 && w->recompute != rec))
			continue;
		if (!b || w->step < b->step)
			b = w;
	}
	return b;
}

static const char *const lsgd_models[] = {"diloco-2.4b", "diloco-4b", "diloco-10b"};

/* Claim (He et al. 2024; Charles et al. 2025, Fig. 6): across clusters on a
 * slow link, synchronous data parallel collapses and local SGD / DiLoCo
 * recovers the single-cluster rate.  Setup: 2.4B, 4B and 10B on 256 H100s,
 * one cluster (fastest synchronous layout) vs 4 clusters of 64 at 10 Gb/s
 * (1.25 GB/s), the fastest fitting layout of each.  Tolerance: synchronous
 * across clusters below 10% of the single cluster; H = 100 blocking on the
 * outer exchange above 80%; streamed (outer_overlap) at H = 30 above 95%.
 * (cvc: 5-7%, 89-91%, 99-100%.) */
Test(project_findings, localsgd_recovers_rate_on_slow_link, .init = load_lsgd,
     .fini = free_rows)
{
	for (size_t m = 0; m < 3; m++) {
		const struct row *ref = lsgd_best(lsgd_models[m], 1, -1, 1, -1);
		const struct row *dp = lsgd_best(lsgd_models[m], 4, 1.25, 1, 0);
		const struct row *h100 = lsgd_best(lsgd_models[m], 4, 1.25, 100, 0);
		const struct row *s30 = lsgd_best(lsgd_models[m], 4, 1.25, 30, 1);

		cr_assert(ref && dp && h100 && s30, "%s: a row does not fit", lsgd_models[m]);
		cr_expect_lt(dp->tps / ref->tps, 0.10, "%s sync: %.3f", lsgd_models[m],
			     dp->tps / ref->tps);
		cr_expect_gt(h100->tps / ref->tps, 0.80, "%s H=100: %.3f", lsgd_models[m],
			     h100->tps / ref->tps);
		cr_expect_gt(s30->tps / ref->tps, 0.95, "%s H=30 streamed: %.3f", lsgd_models[m],
			     s30->tps / ref->tps);
		cr_log_info("%s: single %.3g tok/s; 4 clusters at 10 Gb/s: sync %.3f, H=100 %.3f "
			    "(x%.3f tokens), H=30 streamed %.3f", lsgd_models[m], ref->tps,
			    dp->tps / ref->tps, h100->tps / ref->tps, h100->tf, s30->tps / ref->tps);
	}
}

/* Claim: H is priced on both sides, so the longest interval does not win.
 * Setup: the same models over 2, 4 and 8 clusters at 10, 100 and 400 Gb/s,
 * blocking and streamed; H = 30, 100, 500.  Tolerance: strictly, for every
 * cell, tokens/s never falls as H grows (less communication) and the token
 * factor rises from H = 100 to 500 (Douillard et al.'s ln H term); where the
 * exchange is streamed or the link is 100 Gb/s or more, the effective
 * tokens/s at H = 500 is below the best of H = 30 and 100.  Not claimed at
 * 10 Gb/s blocking: there the 2.4B model over 4 and 8 clusters still gains
 * from H = 500 (exposed exchange outweighs ~15% more tokens; logged). */
Test(project_findings, localsgd_h_priced_on_both_sides, .init = load_lsgd, .fini = free_rows)
{
	static const double Cs[] = {2, 4, 8}, bws[] = {1.25, 12.5, 50};
	int checked = 0;

	for (size_t m = 0; m < 3; m++)
		for (size_t c = 0; c < 3; c++)
			for (size_t b = 0; b < 3; b++)
				for (int ovl = 0; ovl <= 1; ovl++) {
					const struct row *a = lsgd_best(lsgd_models[m], Cs[c], bws[b], 30, ovl);
					const struct row *h = lsgd_best(lsgd_models[m], Cs[c], bws[b], 100, ovl);
					const struct row *z = lsgd_best(lsgd_models[m], Cs[c], bws[b], 500, ovl);

					if (!a || !h || !z)
						continue;
					cr_expect_geq(h->tps, a->tps);
					cr_expect_geq(z->tps, h->tps);
					cr_expect_gt(z->tf, h->tf);
					if (ovl || bws[b] >= 12.5)
						cr_expect_lt(z->eff, fmax(a->eff, h->eff),
							     "%s C%g %g GB/s ovl %d", lsgd_models[m],
							     Cs[c], bws[b], ovl);
					else if (z->eff >= fmax(a->eff, h->eff))
						cr_log_info("%s C%g at 10 Gb/s blocking: H=500 wins "
							    "(%.3g vs %.3g effective tok/s)",
							    lsgd_models[m], Cs[c], z->eff,
							    fmax(a->eff, h->eff));
					checked++;
				}
	cr_assert_geq(checked, 50);
}

/* FLOP/s of a row under Narayanan et al. 2021's count (eq. 3, full
 * recomputation counted), the count Megatron-AxoNN's training.py
 * get_flops() prints; at step time t. */
static double pflops(const struct row *w, double t)
{
	return cvc_proj_megatron_flops(w->gb, w->seq, w->layers, w->hidden, w->vocab) / t / 1e15;
}

/*
 * Claim (Singh et al. 2023/2024, arXiv 2305.13525, abstract): AxoNN trains an
 * 80B GPT on 1024 A100s of Perlmutter at 57% of peak, 182 PFLOP/s.
 * Setup: projector/studies/axonn2024.yaml (42 layers, hidden 12288, 96 heads,
 * seq 2048, bf16, flash attention, full recompute, 4 A100-40GB per node; every
 * power-of-two grid of >= 64 GPUs x data parallel, one micro-batch per
 * step, AxoNN's overlap on; shipped default models). The check projects cvc's
 * fastest valid fitting 4D layout (at 2048 sequences tp_depth 128 x data 8,
 * level with tp_depth 64 x data 16, which AxoNN's own comm_model.py ranks in
 * its top five), counted
 * with the megatron-2021 convention. The run's global batch is not published:
 * 1024, 2048 and 4096 sequences are projected.
 * Tolerance: |cvc / 182 - 1| <= 0.15 at 1024 sequences.  At 2048 and 4096
 * cvc is 19% and 23% above (outside the tolerance): held to 1.0-1.3 and
 * stated as such in docs/FINDINGS.md.  (Before the GEMMs were priced at
 * the measured sustained clock and through the measured matmul ceilings,
 * ceiling.c, 2048 was within: the A100's large GEMMs, beyond vidur's
 * sizes, moved from 0.70 to 0.75 of peak.)
 */
Test(project_findings, axonn_80b_against_182_pflops, .init = load_axonn, .fini = free_rows)
{
	static const double gbs[] = {1024, 2048, 4096};

	for (size_t i = 0; i < 3; i++) {
		const struct row *w = axonn_best(gbs[i], 1, -1);
		double pf, q;

		cr_assert_not_null(w, "batch %g: no valid fitting 4D layout", gbs[i]);
		pf = pflops(w, w->step);
		q = pf / 182;
		cr_log_info("AxoNN 80B, batch %g: row %g col %g depth %g data %g micro-batch %g: "
			    "%.1f PFLOP/s [%.1f, %.1f], %.3f x published", gbs[i], w->tr, w->tc,
			    w->td, w->dp, w->mb, pf, pflops(w, w->step_hi), pflops(w, w->step_lo), q);
		if (gbs[i] <= 1024)
			cr_expect_leq(fabs(q - 1), 0.15, "batch %g: %.1f PFLOP/s vs 182", gbs[i], pf);
		else
			cr_expect(q > 1 && q < 1.3, "batch %g: %.3f x published", gbs[i], q);
	}
}

/*
 * Claim (same paper): on that run AxoNN's 4D surpasses Megatron-LM by 26%.
 * Setup: the same study; Megatron-LM's side is every 1D layout (tp 1-8, pp
 * any divisor, sequence parallel or not, full or no recompute,
 * ZeRO-1 or not, micro-batch 1-4), each side its fastest valid fitting
 * layout at the same global batch; both sides reduce their gradients in
 * fp32, as Megatron-LM's command line does for bf16. What cvc finds, and
 * holds:
 *  - against Megatron-LM with full recompute (as AxoNN runs), the 4D layout
 *    is ahead at every batch, by >= 10% (30%, 40%, 35% at 1024/2048/4096);
 *  - against Megatron-LM's fastest layout, which in cvc recomputes
 *    nothing (tp 8, pp 2, sequence parallel), the 4D layout is ahead by
 *    10-30% (17%, 26%, 22%: the paper's 26% at 2048), and their 90%
 *    intervals overlap: cvc cannot order them.  (6%, 13%, 8% while the
 *    sequence-parallel all-gathers and reduce-scatters of its tp 8, which
 *    spans two 4-GPU nodes, were priced a tree's network phase, not
 *    NCCL's rings: docs/FINDINGS.md.)
 */
Test(project_findings, axonn_vs_megatron_lm, .init = load_axonn, .fini = free_rows)
{
	static const double gbs[] = {1024, 2048, 4096};

	for (size_t i = 0; i < 3; i++) {
		const struct row *a = axonn_best(gbs[i], 1, -1);
		const struct row *mf = axonn_best(gbs[i], 0, CVC_PROJ_RECOMP_FULL);
		const struct row *m = axonn_best(gbs[i], 0, -1);

		cr_assert(a && mf && m, "batch %g: a side has no valid fitting layout", gbs[i]);
		cr_log_info("batch %g: 4D %.2f s [%.2f, %.2f]; Megatron full recompute %.2f s (tp %g "
			    "pp %g) -> 4D ahead %.3fx; Megatron best %.2f s [%.2f, %.2f] (tp %g pp %g "
			    "sp %g recompute %d) -> %.3fx", gbs[i], a->step, a->step_lo, a->step_hi,
			    mf->step, mf->tp, mf->pp, mf->step / a->step, m->step, m->step_lo,
			    m->step_hi, m->tp, m->pp, m->sp, m->recompute, m->step / a->step);
		cr_expect_geq(mf->step / a->step, 1.10, "batch %g: 4D vs Megatron full recompute",
			      gbs[i]);
		cr_expect(m->step / a->step > 1.1 && m->step / a->step < 1.3,
			  "batch %g: 4D ahead of Megatron's best by %.3fx", gbs[i], m->step / a->step);
		cr_expect(m->step_lo < a->step_hi && a->step_lo < m->step_hi,
			  "batch %g: the intervals do not overlap", gbs[i]);
	}
}
