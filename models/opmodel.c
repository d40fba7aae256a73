/*
 * opmodel.c - building a cvc_modelset: everything a projection needs to
 * turn an operator into microseconds for one GPU or system.  A modelset is
 * built once (fits from the db, carried over from the closest GPU, or
 * spec-sheet defaults) and is then only read (opprice.c), so the predict
 * calls are a handful of floating-point operations each.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cvc/cvc_model.h"
#include "models/modelset_int.h"

/* Default fraction of HBM bandwidth per memory-bound class. */
static const double membound_eff[CVC_MODEL_NMEM] = {
	[CVC_MODEL_MEM_ELEMENTWISE] = 0.80, [CVC_MODEL_MEM_NORM] = 0.70,
	[CVC_MODEL_MEM_REDUCTION] = 0.70,   [CVC_MODEL_MEM_COPY] = 0.85,
	[CVC_MODEL_MEM_GATHER] = 0.50,      [CVC_MODEL_MEM_OPTIMIZER] = 0.75,
};

/* ---- modelset -------------------------------------------------------------------- */

void cvc_modelset_free(cvc_modelset *ms)
{
	free(ms);
}

const cvc_hw_spec *cvc_modelset_spec(const cvc_modelset *ms)
{
	return ms ? &ms->spec : NULL;
}

static double gap_for(const cvc_hw_spec *spec);

static cvc_modelset *ms_new(const cvc_hw_catalog *cat, const cvc_hw_spec *spec)
{
	cvc_modelset *ms = calloc(1, sizeof *ms);
	double eff;

	if (!ms)
		return NULL;
	ms->spec = *spec;
	eff = opm_gemm_default_efficiency(cat, spec);
	ms->def_carried = opm_gemm_default_carried(cat, spec);
	snprintf(ms->def_origin, sizeof ms->def_origin,
		 "spec-sheet roofline of %s, default efficiency %.2f (no fitted model)", spec->name,
		 eff);
	snprintf(ms->coll_def_origin, sizeof ms->coll_def_origin,
		 "spec-sheet links of %s%s, default alpha-beta (no fitted model)", spec->name,
		 spec->intra_mesh ? " (mesh node: k of its GPUs get (k-1)/(P-1) of the links)" : "");
	ms->attn_ref = opm_attn_ref_gpu(spec);
	ms->kernel_gap_us = gap_for(spec);
	/* the curves sustain what their card sustains at its power limit; a
	 * GPU of the generation at another limit sustains its own (ceiling.c) */
	ms->attn_factor = opm_burst_ratio_ref(ms->attn_ref) / opm_burst_ratio(spec);
	{
		/* the softmax's exponentials: the curves' card issued them at its
		 * own SFU rate, this GPU at its (attention_sfu_us()) */
		const cvc_hw_spec *rs = cat ? cvc_hw_catalog_lookup(cat, opm_attn_ref_name(ms->attn_ref))
					    : NULL;

		ms->attn_ref_sfu = rs ? rs->sfu_texp : 0;
	}
	if (strcmp(opm_attn_ref_name(ms->attn_ref), opm_gpu_of(spec)) == 0)
		snprintf(ms->attn_origin, sizeof ms->attn_origin,
			 "fused-attention curves measured on %s (attention-bench)", spec->name);
	else
		snprintf(ms->attn_origin, sizeof ms->attn_origin,
			 "fused-attention curves measured on %s (attention-bench), carried to %s "
			 "through the spec sheet", opm_attn_ref_name(ms->attn_ref), spec->name);
	if (fabs(ms->attn_factor - 1) > 5e-4) {
		size_t used = strlen(ms->attn_origin);

		snprintf(ms->attn_origin + used, sizeof ms->attn_origin - used,
			 " at its power limit (x%.3f)", ms->attn_factor);
	}
	if (ms->attn_ref_sfu > 0 && spec->sfu_texp > 0 && spec->sfu_texp != ms->attn_ref_sfu) {
		size_t used = strlen(ms->attn_origin);

		snprintf(ms->attn_origin + used, sizeof ms->attn_origin - used,
			 "; its softmax at %.3g TeraExp/s against the curves' %.3g", spec->sfu_texp,
			 ms->attn_ref_sfu);
	}
	snprintf(ms->attn_standin, sizeof ms->attn_standin,
		 "%s; no curve of this library, dtype or mask was measured on %s: the nearest "
		 "measured one stands in (cuDNN's, bf16's, then the other mask's)", ms->attn_origin,
		 opm_attn_ref_name(ms->attn_ref));
	snprintf(ms->attn_pastd, sizeof ms->attn_pastd,
		 "%s; no curve measures a head dim past %d: the largest measured head dim's "
		 "stands in", ms->attn_origin, OPM_ATTN_MAX_D);
	for (int d = 0; d < CVC_HW_NDTYPE; d++) {
		/* fp8 and fp4 at the share of their peaks that they sustain
		 * (ceiling.c) */
		ms->def_eff[d] = eff * (d == CVC_HW_FP8	  ? opm_fp8_share(spec)
					: d == CVC_HW_FP4 ? opm_fp4_share(spec)
							  : 1);
		opm_gemm_defaults(ms->gemm[d].def);
		ms->gemm[d].def[GP_CFLOP] = 1 / ms->def_eff[d];
		memcpy(ms->gemm[d].p, ms->gemm[d].def, sizeof ms->gemm[d].p);
		ms->gemm[d].sigma = SIG_GEMM_DEFAULT;
		ms->gemm[d].share_sigma = 0;
		if (d == CVC_HW_FP4)
			opm_fp4_share_of(&ms->spec, &ms->gemm[d].share_sigma, NULL);
		snprintf(ms->gemm[d].origin, sizeof ms->gemm[d].origin, "%s", ms->def_origin);
	}
	for (int c = 0; c < CVC_MODEL_NMEM; c++) {
		ms->mem[c].p[MP_FLOOR] = DEF_MEMBOUND_FLOOR_US;
		ms->mem[c].p[MP_EFF] = membound_eff[c];
		ms->mem[c].sigma = SIG_MEM_DEFAULT;
		snprintf(ms->mem[c].origin, sizeof ms->mem[c].origin, "%s", MEM_DEF_ORIGIN);
		memcpy(ms->mem[c].def, ms->mem[c].p, sizeof ms->mem[c].def);
	}
	return ms;
}

const char *opm_gpu_of(const cvc_hw_spec *s)
{
	return s->base[0] ? s->base : s->name;
}

/* Canonical GPU a fit's gpu field resolves to; the field itself if unknown. */
static const char *fit_gpu(const cvc_hw_catalog *cat, const cvc_model_fit *f)
{
	const cvc_hw_spec *s = cat ? cvc_hw_catalog_lookup(cat, f->gpu) : NULL;

	return s ? opm_gpu_of(s) : f->gpu;
}

/*
 * The quality gate (docs/MODELS.md "Fit quality"): a fit that does not
 * explain its own rows (R^2 < 0 on log time) or that misses the larger half
 * of its sizes by more than 30% when fitted on the smaller half does not
 * price anything: the default answers, and `cvc models` says why.
 */
#define GATE_EXTRAP_PCT 30.0

int cvc_model_level_usable(const cvc_model_fit *f, const char **why)
{
	static const char *const reasons[] = {"", "not a collective fit",
					      "fewer than 3 rows of 1 MiB and more",
					      "large-message error above 30%",
					      "large-message extrapolation error above 30%"};
	int r = 0;

	if (f->kind != CVC_MODEL_COLLECTIVE)
		r = 1;
	else if (!f->lvl.valid)
		r = 2;
	else if (isfinite(f->lvl.mape) && f->lvl.mape > GATE_EXTRAP_PCT)
		r = 3;
	else if (isfinite(f->lvl.extrap_mape) && f->lvl.extrap_mape > GATE_EXTRAP_PCT)
		r = 4;
	if (why)
		*why = reasons[r];
	return r == 0;
}

int cvc_model_fit_usable(const cvc_model_fit *f, const char **why)
{
	static const char *const reasons[] = {"", "R^2 below 0 on its own rows",
					      "extrapolation error above 30%"};
	int r = 0;

	if (isfinite(f->r2) && f->r2 < 0)
		r = 1;
	else if (isfinite(f->extrap_mape) && f->extrap_mape > GATE_EXTRAP_PCT)
		r = 2;
	if (why)
		*why = reasons[r];
	return r == 0;
}

/* Which fits a slot takes: arg is the dtype (GEMM) or the class (memory). */
typedef int (*fit_match)(const cvc_model_fit *f, int arg);

static int gemm_of(const cvc_model_fit *f, int dtype)
{
	return f->kind == CVC_MODEL_GEMM && (int)f->dtype == dtype && cvc_model_fit_usable(f, NULL);
}

/* A GEMM fit of either dtype packed in arg (dtype | sibling << 8). */
static int gemm_of2(const cvc_model_fit *f, int arg)
{
	return gemm_of(f, arg & 0xff) || gemm_of(f, arg >> 8);
}

static int mem_of(const cvc_model_fit *f, int cls)
{
	return f->kind == CVC_MODEL_MEMBOUND && (int)f->mem == cls && f->nparams == MP_N &&
	       cvc_model_fit_usable(f, NULL);
}

/* The first (newest) matching fit on GPU target; NULL when none. */
static const cvc_model_fit *pick_on(const cvc_hw_catalog *cat, const char *target,
				    const cvc_model_fit *fits, size_t n, fit_match ok, int arg)
{
	for (size_t i = 0; i < n; i++)
		if (ok(&fits[i], arg) && strcmp(fit_gpu(cat, &fits[i]), target) == 0)
			return &fits[i];
	return NULL;
}

/* The matching fit of the catalog GPU closest to spec (cvc_hw_closest,
 * among the first 64 matches); NULL when none or no catalog. */
static const cvc_model_fit *pick_closest(const cvc_hw_catalog *cat, const cvc_hw_spec *spec,
					 const cvc_model_fit *fits, size_t n, fit_match ok, int arg)
{
	const char *names[64];
	const cvc_model_fit *cand[64];
	size_t nc = 0;
	int best;

	if (!cat)
		return NULL;
	for (size_t i = 0; i < n && nc < 64; i++)
		if (ok(&fits[i], arg))
			names[nc] = fits[i].gpu, cand[nc++] = &fits[i];
	best = cvc_hw_closest(cat, spec, names, nc);
	return best >= 0 ? cand[best] : NULL;
}

/*
 * The reference GEMM fits every modelset starts from when no fit of its own
 * applies, fitted per datasheet clock as `cvc fit` fits the same files:
 * XLA's H100 bf16 table (xla_matmul_perf_table.csv.gz, 375 rows, m, n, k
 * 256..4096) and vidur's A100 Llama-2-7B operator timings
 * (a100__Llama-2-7b-hf__mlp.csv.gz, 4176 fp16 GEMM rows).  The one of the
 * closest GPU prices a GPU's GEMMs through its spec sheet inside the FLOPs
 * it measured; beyond them the default efficiency (XLA's large-GEMM end)
 * answers.  models_gemm.reference_fits_refit recomputes both.
 */
static const cvc_model_fit ref_gemm[] = {
	{.kind = CVC_MODEL_GEMM, .gpu = "H100-SXM", .dtype = CVC_HW_BF16, .nparams = GP_N,
	 .params = {5.0545075511085802, 0.74499272262461869, 0.1941691545850481,
		    1.1680640537787963, 0.80, 128},
	 .dom_min = 33554432, .dom_max = 549755813888.0,
	 .source = "xla_matmul_perf_table.csv.gz", .n_points = 375,
	 .r2 = 0.994931209908575, .mape = 4.80450087031124, .extrap_mape = 15.0701961159707},
	{.kind = CVC_MODEL_GEMM, .gpu = "A100-SXM-80GB", .dtype = CVC_HW_FP16, .nparams = GP_N,
	 .params = {4.5247767893364914, 0.66663691207201747, 0.15515680168127871,
		    1.2634465081809405, 0.80, 128},
	 .dom_min = 4194304, .dom_max = 738734374912.0,
	 .source = "a100__Llama-2-7b-hf__mlp.csv.gz", .n_points = 4176,
	 .r2 = 0.994381692919458, .mape = 6.60707958404745, .extrap_mape = 5.9101718068926},
};

const cvc_model_fit *opm_gemm_references(size_t *n)
{
	*n = sizeof ref_gemm / sizeof ref_gemm[0];
	return ref_gemm;
}

/* A fit's relative standard error from its in-sample MAPE, with a
 * carry-over's added in quadrature (carry = 0: none). */
static double fit_sigma(const cvc_model_fit *f, double carry)
{
	double m = isfinite(f->mape) && f->mape > 0 ? SIG_PER_MAPE * f->mape / 100 : 0;

	return sqrt(m * m + carry * carry);
}

/*
 * A GEMM fit's: what it misses on GEMMs timed by another harness, at least
 * (SIG_GEMM_HELDOUT), or its own in-sample error when larger.  The carry to
 * another GPU was measured together with that harness difference (vidur's
 * A100 from XLA's H100) and came out no larger than the harness alone on the
 * fit's own GPU, so it enters as the larger of the two, not a second term.
 */
static double gemm_sigma(const cvc_model_fit *f, int carried)
{
	double m = fit_sigma(f, 0), s = fmax(m, SIG_GEMM_HELDOUT);

	return carried ? fmax(s, SIG_GEMM_CARRY) : s;
}

/* Efficiency times f: the main-loop and FLOP terms (they carry the peak;
 * the launch floor and per-wave overhead are times of their own). */
static void scale_eff(double p[GP_N], double f)
{
	if (f > 0 && f != 1) {
		p[GP_CWAVE] /= f;
		p[GP_CFLOP] /= f;
	}
}

/*
 * What a fit of GPU `gpu` (dtype fitted) is worth on the modelset's GPU for
 * dtype d: the measured carry across GPUs (ceiling.c: burst ceilings and
 * sustained clocks) when it is another GPU, and an fp8 GEMM priced from a
 * bf16 fit at the share of the fp8 peak that fp8 sustains; *how (may be
 * NULL) says so, "" when neither applies.
 */
static double fit_factor(const cvc_modelset *ms, const cvc_hw_catalog *cat, const char *gpu,
			 int fitted, int d, int carried, char *how, size_t howlen)
{
	const cvc_hw_spec *src = cat ? cvc_hw_catalog_lookup(cat, gpu) : NULL;
	double f = 1, c = 1, s = 1;
	const char *a = NULL, *b = NULL;
	int n = 0;

	if (carried && src)
		c = opm_carry_factor(cat, src, &ms->spec, &a, &b);
	if (d == CVC_HW_FP8 && fitted != CVC_HW_FP8)
		s = opm_fp8_share(&ms->spec);
	else if (d == CVC_HW_FP4 && fitted != CVC_HW_FP4)
		s = opm_fp4_share(&ms->spec);
	f = c * s;
	if (how && howlen) {
		how[0] = '\0';
		if (c != 1 && a && b)
			n = snprintf(how, howlen, "; x%.3f through the measured matmul ceilings of %s and %s",
				     c, a, b);
		if (s != 1 && n >= 0 && (size_t)n < howlen && d == CVC_HW_FP8)
			snprintf(how + n, howlen - (size_t)n,
				 "; fp8 at %.3f of bf16's share of peak (sustained on %s)", s,
				 opm_burst_ratio_gpu(&ms->spec));
		else if (s != 1 && n >= 0 && (size_t)n < howlen) {
			const char *words = "";

			opm_fp4_share_of(&ms->spec, NULL, &words);
			snprintf(how + n, howlen - (size_t)n, "; fp4 at %.3f of bf16's share of peak (%s)",
				 s, words);
		}
	}
	return f;
}

/*
 * The built-in reference fit of the GPU closest to this one, for dtype d
 * (bf16 and fp16 stand in for each other, and for fp8 and fp4, as for
 * fitted models), carried here through the spec sheet, into *out, and in
 * desc what it is (brief: its table and GPU only).  Returns 0, or -1 where
 * no reference serves d.
 */
static int install_ref(const cvc_modelset *ms, const cvc_hw_catalog *cat, int d,
		       const char *target, int brief, struct gemm_ref *out, char *desc,
		       size_t desclen)
{
	const size_t nr = sizeof ref_gemm / sizeof ref_gemm[0];
	const char *names[sizeof ref_gemm / sizeof ref_gemm[0]];
	const cvc_model_fit *ref;
	char to[CVC_HW_NAME_MAX], how[160];
	int best;

	if (d != CVC_HW_BF16 && d != CVC_HW_FP16 && d != CVC_HW_FP8 && d != CVC_HW_FP4)
		return -1;
	for (size_t i = 0; i < nr; i++)
		names[i] = ref_gemm[i].gpu;
	best = cat ? cvc_hw_closest(cat, &ms->spec, names, nr) : 0;
	ref = &ref_gemm[best >= 0 ? best : 0];
	memcpy(out->p, ref->params, sizeof out->p);
	out->dom_min = ref->dom_min;
	out->dom_max = ref->dom_max;
	out->carried = strcmp(ref->gpu, target) != 0;
	out->sigma = gemm_sigma(ref, out->carried);
	scale_eff(out->p, fit_factor(ms, cat, ref->gpu, ref->dtype, d, out->carried, how,
				     sizeof how));
	snprintf(to, sizeof to, "%s", ms->spec.name);
	if (brief)
		snprintf(desc, desclen, "built-in reference fit (%.40s, %.20s %s)", ref->source,
			 ref->gpu, cvc_hw_dtype_name(ref->dtype));
	else
		snprintf(desc, desclen,
			 "built-in reference fit (%.40s, %.20s %s), carried to %.47s through the "
			 "spec sheet%s",
			 ref->source, ref->gpu, cvc_hw_dtype_name(ref->dtype), to, how);
	return 0;
}

/* Appends text to a GPU's GEMM origin, as much of it as fits. */
static void origin_add(struct gemm_slot *g, const char *text)
{
	size_t n = strlen(g->origin);

	if (n + 1 < sizeof g->origin)
		snprintf(g->origin + n, sizeof g->origin - n, "%s", text);
}

static void install_gemm(cvc_modelset *ms, const cvc_hw_catalog *cat, const cvc_model_fit *fits,
			 size_t n)
{
	const char *target = opm_gpu_of(&ms->spec);

	for (int d = 0; d < CVC_HW_NDTYPE; d++) {
		const cvc_model_fit *pick = NULL;
		int same = 0;
		cvc_hw_dtype want[2] = {(cvc_hw_dtype)d, (cvc_hw_dtype)d};
		char how[160], ref_how[GEMM_ORIGIN_MAX], def[64];

		/* fp16 and bf16 run on the same tensor cores: each may stand in
		 * for the other.  Order: this GPU (this dtype, then its sibling),
		 * then the closest fitted GPU (same order there).  Fits are
		 * newest first, so the first match wins. */
		/* fp8 without an fp8 fit: the bf16 one, at the share of the fp8
		 * peak that fp8 sustains (ceiling.c; XLA's H100 fp8 rows above
		 * 2^34 FLOPs exceed the fp8 peak and fit nothing) */
		if (d == CVC_HW_BF16 || d == CVC_HW_FP8 || d == CVC_HW_FP4)
			want[1] = d == CVC_HW_BF16 ? CVC_HW_FP16 : CVC_HW_BF16;
		else if (d == CVC_HW_FP16)
			want[1] = CVC_HW_BF16;
		for (int w = 0; w < 2 && !pick; w++)
			same = (pick = pick_on(cat, target, fits, n, gemm_of, (int)want[w])) != NULL;
		/* else the closest GPU with a fit of either: a far GPU's dtype
		 * does not beat the sibling measured on a GPU like this one;
		 * that GPU's own dtype first */
		if (!pick && (pick = pick_closest(cat, &ms->spec, fits, n, gemm_of2,
						  (int)want[0] | (int)want[1] << 8)) != NULL)
			for (int w = 0; w < 2; w++) {
				const cvc_model_fit *p =
					pick_on(cat, fit_gpu(cat, pick), fits, n, gemm_of, (int)want[w]);

				if (p) {
					pick = p;
					break;
				}
			}
		if (!pick) {
			struct gemm_ref r;

			if (install_ref(ms, cat, d, target, 0, &r, ms->gemm[d].origin,
					sizeof ms->gemm[d].origin))
				continue;
			memcpy(ms->gemm[d].p, r.p, sizeof ms->gemm[d].p);
			ms->gemm[d].dom_min = r.dom_min;
			ms->gemm[d].dom_max = r.dom_max;
			ms->gemm[d].sigma = r.sigma;
			ms->gemm[d].carried = r.carried;
			ms->gemm[d].share_sigma = 0;
			if (d == CVC_HW_FP4)
				opm_fp4_share_of(&ms->spec, &ms->gemm[d].share_sigma, NULL);
			snprintf(def, sizeof def, "; default efficiency %.2f beyond its sizes",
				 ms->def_eff[d]);
			origin_add(&ms->gemm[d], def);
			continue;
		}
		/* beyond the fit's sizes the reference still answers where it
		 * measured: a user's fit of small GEMMs must not hand large ones
		 * to the default efficiency the reference improves on */
		if (install_ref(ms, cat, d, target, 1, &ms->gemm[d].ref, ref_how, sizeof ref_how) ||
		    !(ms->gemm[d].ref.dom_min < pick->dom_min ||
		      ms->gemm[d].ref.dom_max > pick->dom_max))
			ms->gemm[d].ref.dom_max = 0; /* none, or it measured nothing the fit did not */
		memcpy(ms->gemm[d].p, pick->params, sizeof ms->gemm[d].p);
		ms->gemm[d].dom_min = pick->dom_min;
		ms->gemm[d].dom_max = pick->dom_max;
		ms->gemm[d].carried = !same;
		ms->gemm[d].sigma = gemm_sigma(pick, !same);
		ms->gemm[d].share_sigma = 0;
		if (d == CVC_HW_FP4 && pick->dtype != CVC_HW_FP4)
			opm_fp4_share_of(&ms->spec, &ms->gemm[d].share_sigma, NULL);
		scale_eff(ms->gemm[d].p,
			  fit_factor(ms, cat, pick->gpu, pick->dtype, d, !same, how, sizeof how));
		if (same)
			snprintf(ms->gemm[d].origin, sizeof ms->gemm[d].origin,
				 "fitted model %lld (%.47s %s, %.60s)%s", (long long)pick->id, pick->gpu,
				 cvc_hw_dtype_name(pick->dtype), pick->source, how);
		else {
			char from[CVC_HW_NAME_MAX], to[CVC_HW_NAME_MAX];

			/* copies: the formatter may not read from the object it writes */
			snprintf(from, sizeof from, "%s", fit_gpu(cat, pick));
			snprintf(to, sizeof to, "%s", ms->spec.name);
			snprintf(ms->gemm[d].origin, sizeof ms->gemm[d].origin,
				 "model %lld fitted on %.47s %s, carried over to %.47s through the "
				 "spec sheet%s",
				 (long long)pick->id, from, cvc_hw_dtype_name(pick->dtype), to, how);
		}
		if (ms->gemm[d].ref.dom_max > 0) {
			origin_add(&ms->gemm[d], "; beyond its sizes the ");
			origin_add(&ms->gemm[d], ref_how);
		}
	}
}

static void install_coll(cvc_modelset *ms, const cvc_hw_catalog *cat, const cvc_model_fit *fits,
			 size_t n)
{
	/* Fits of this system (or, for a GPU spec, of any system built of this
	 * GPU); the newest of each (collective, group size, node size). */
	for (int pass = 0; pass < 2; pass++) {
		for (size_t i = 0; i < n && ms->ncoll < MS_COLL_MAX; i++) {
			const cvc_model_fit *f = &fits[i];
			const cvc_hw_spec *fs;
			int match = 0, dup = 0;

			if (f->kind != CVC_MODEL_COLLECTIVE || f->nparams < 1 + CP_PER ||
			    (!cvc_model_fit_usable(f, NULL) && !cvc_model_level_usable(f, NULL)))
				continue;
			fs = cat && f->system[0] ? cvc_hw_catalog_lookup(cat, f->system) : NULL;
			if (pass == 0)
				match = (fs && strcmp(fs->name, ms->spec.name) == 0) ||
					strcmp(f->system, ms->spec.name) == 0;
			else
				match = strcmp(fit_gpu(cat, f), opm_gpu_of(&ms->spec)) == 0;
			if (!match)
				continue;
			for (int j = 0; j < ms->ncoll; j++)
				dup |= ms->coll[j].c == f->coll && ms->coll[j].nranks == f->nranks &&
				       ms->coll[j].gpn == f->gpus_per_node;
			if (dup)
				continue;
			{
				struct coll_slot *s = &ms->coll[ms->ncoll++];

				s->c = f->coll;
				s->nranks = f->nranks;
				s->gpn = f->gpus_per_node;
				s->nparams = f->nparams;
				memcpy(s->p, f->params, sizeof s->p);
				s->regimes_ok = cvc_model_fit_usable(f, NULL);
				s->carries_up = s->regimes_ok && isfinite(f->extrap_mape);
				s->level_ok = cvc_model_level_usable(f, NULL);
				s->id = f->id;
				s->lvl = f->lvl;
				s->sigma = fit_sigma(f, 0);
				s->dom_max = f->dom_max > 0 ? f->dom_max : 1;
				s->dom_min = f->dom_min > 0 ? f->dom_min : 1;
				snprintf(s->label, sizeof s->label, "model %lld (%.40s, %d ranks, %d per node)",
					 (long long)f->id, f->system[0] ? f->system : f->gpu, f->nranks,
					 f->gpus_per_node);
				/* a copy: the formatter may not read from the object it
				 * writes */
				char label[sizeof s->label];

				memcpy(label, s->label, sizeof label);
				snprintf(s->small_origin, sizeof s->small_origin,
					 "size regimes of %s, measured at this size, carried over the "
					 "span's latency", label);
				for (int a = 0; a < OPM_NALGO; a++) {
					snprintf(s->across_origin[a], sizeof s->across_origin[a],
						 "one-domain level of %s carried across domains, %s: "
						 "NVLink phase as fitted, network phase at the "
						 "defaults' 0.80 of the NICs",
						 label, opm_algo_name(a));
					snprintf(s->topo_origin[a], sizeof s->topo_origin[a],
						 "large-message level of %s carried over the span and "
						 "NICs, %s, on the fitted NVLink level",
						 label, opm_algo_name(a));
					snprintf(s->topo_def_origin[a], sizeof s->topo_def_origin[a],
						 "large-message level of %s carried over the span and "
						 "NICs, %s, on the spec's NVLink level",
						 label, opm_algo_name(a));
				}
				snprintf(s->origin, sizeof s->origin,
					 "fitted model %lld (%.47s %s, %d ranks, %d per node, %.60s)",
					 (long long)f->id, f->system[0] ? f->system : f->gpu,
					 cvc_model_coll_name(f->coll), f->nranks, f->gpus_per_node,
					 f->source);
			}
		}
		if (ms->ncoll)
			break; /* system fits found: GPU-wide ones would only blur them */
	}
}

/* Per class: the newest fit on this GPU, else the newest on the closest
 * fitted GPU (its efficiency then applies to this GPU's HBM bandwidth;
 * the floor, a launch cost, is kept as fitted). */
static void install_mem(cvc_modelset *ms, const cvc_hw_catalog *cat, const cvc_model_fit *fits,
			size_t n)
{
	const char *target = opm_gpu_of(&ms->spec);

	for (int c = 0; c < CVC_MODEL_NMEM; c++) {
		const cvc_model_fit *pick = pick_on(cat, target, fits, n, mem_of, c);
		int same = pick != NULL;

		if (!pick)
			pick = pick_closest(cat, &ms->spec, fits, n, mem_of, c);
		if (!pick || !(pick->params[MP_EFF] > 0) || !(pick->params[MP_FLOOR] >= 0))
			continue;
		memcpy(ms->mem[c].p, pick->params, sizeof ms->mem[c].p);
		ms->mem[c].fitted = 1;
		ms->mem[c].dom_min = pick->dom_min;
		ms->mem[c].dom_max = pick->dom_max > 0 ? pick->dom_max : INFINITY;
		ms->mem[c].carries_up = isfinite(pick->extrap_mape);
		ms->mem[c].carried = !same;
		ms->mem[c].sigma = fit_sigma(pick, same ? 0 : SIG_GEMM_CARRY);
		if (same)
			snprintf(ms->mem[c].origin, sizeof ms->mem[c].origin,
				 "fitted membound model %lld (%.47s %s: floor %.2f us, eff %.2f, %.60s)",
				 (long long)pick->id, pick->gpu, cvc_model_mem_name((cvc_model_mem)c), pick->params[MP_FLOOR],
				 pick->params[MP_EFF], pick->source);
		else {
			char from[CVC_HW_NAME_MAX], to[CVC_HW_NAME_MAX];

			snprintf(from, sizeof from, "%s", fit_gpu(cat, pick));
			snprintf(to, sizeof to, "%s", ms->spec.name);
			snprintf(ms->mem[c].origin, sizeof ms->mem[c].origin,
				 "membound model %lld fitted on %.47s %s (eff %.2f), carried over to %.47s "
				 "through the HBM bandwidth",
				 (long long)pick->id, from, cvc_model_mem_name((cvc_model_mem)c), pick->params[MP_EFF], to);
		}
	}
}

cvc_status cvc_modelset_from_fits(const cvc_hw_catalog *cat, const cvc_hw_spec *spec,
				  const cvc_model_fit *fits, size_t n, cvc_modelset **out)
{
	cvc_modelset *ms;

	if (!spec || !out || (n && !fits))
		return CVC_ERR_USAGE;
	*out = NULL;
	ms = ms_new(cat, spec);
	if (!ms)
		return CVC_ERR_NOMEM;
	install_gemm(ms, cat, fits, n);
	install_coll(ms, cat, fits, n);
	install_mem(ms, cat, fits, n);
	*out = ms;
	return CVC_OK;
}

cvc_status cvc_modelset_new_ex(cvc_db *db, const cvc_hw_catalog *cat, const cvc_hw_spec *spec,
			       int force, cvc_modelset **out)
{
	cvc_model_fit *fits = NULL;
	size_t n = 0;
	cvc_status st;

	if (!spec || !out)
		return CVC_ERR_USAGE;
	*out = NULL;
	if (db && (st = cvc_model_fit_list(db, &fits, &n)))
		return st;
	/* forced: the gate's figures are not consulted, GEMM and memory-bound
	 * fits price every size and collective fits every size from their
	 * smallest up; the origins say so */
	for (size_t i = 0; force && i < n; i++) {
		cvc_model_fit *f = &fits[i];
		char src[sizeof f->source];

		f->r2 = NAN;
		f->extrap_mape = NAN;
		if (f->kind == CVC_MODEL_GEMM || f->kind == CVC_MODEL_MEMBOUND)
			f->dom_min = 0, f->dom_max = INFINITY;
		if (f->kind == CVC_MODEL_COLLECTIVE)
			f->dom_max = INFINITY;
		if (f->kind == CVC_MODEL_COLLECTIVE && f->lvl.algbw_gbps > 0)
			f->lvl.valid = 1, f->lvl.mape = NAN, f->lvl.extrap_mape = NAN;
		memcpy(src, f->source, sizeof src);
		snprintf(f->source, sizeof f->source, "forced past the gate: %.200s", src);
	}
	st = cvc_modelset_from_fits(cat, spec, fits, n, out);
	free(fits);
	return st;
}

cvc_status cvc_modelset_new(cvc_db *db, const cvc_hw_catalog *cat, const cvc_hw_spec *spec,
			    cvc_modelset **out)
{
	return cvc_modelset_new_ex(db, cat, spec, 0, out);
}

/*
 * The gap between back-to-back kernels, per trace: the mean of the gaps
 * shorter than 20 us (longer ones are host stalls, synchronisations, the
 * data loader) between consecutive kernels of the stream with the most
 * non-NCCL kernels.  Per GPU generation the median of its traces.
 * models_gap.kernel_gaps_from_traces recomputes each from its trace.
 */
static const struct opm_gap_ref gap_refs[] = {
	{"V100-SXM2-32GB", 125, 2.907, "hta-ddp-v100-2rank"},
	{"V100-SXM2-32GB", 125, 4.059, "hta-trace-diff-v100-w2"},
	{"A100-SXM-80GB", 312, 3.336, "hta-trace-diff-a100-w8"},
	{"A100-SXM-80GB", 312, 2.725, "hta-nccl-args-a100-w2"},
	{"A100-SXM-80GB", 312, 4.581, "hta-a100-80g-w16-rank0"},
	{"H100-SXM", 989.4, 1.936, "tracelens-h100-qwen05b"},
};

const struct opm_gap_ref *opm_gap_refs(size_t *n)
{
	*n = sizeof gap_refs / sizeof gap_refs[0];
	return gap_refs;
}

static int cmp_dbl(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* Median gap of the traces of the generation nearest spec (log peak). */
static double gap_for(const cvc_hw_spec *spec)
{
	double p = spec->peak_tflops[CVC_HW_BF16] > 0 ? spec->peak_tflops[CVC_HW_BF16]
						     : spec->peak_tflops[CVC_HW_FP16];
	double best = INFINITY, bf = 0, v[16];
	size_t n = 0;

	if (!(p > 0))
		p = 312;
	for (size_t i = 0; i < sizeof gap_refs / sizeof gap_refs[0]; i++)
		if (fabs(log(p / gap_refs[i].bf16)) < best)
			best = fabs(log(p / gap_refs[i].bf16)), bf = gap_refs[i].bf16;
	for (size_t i = 0; i < sizeof gap_refs / sizeof gap_refs[0] && n < 16; i++)
		if (gap_refs[i].bf16 == bf)
			v[n++] = gap_refs[i].gap_us;
	qsort(v, n, sizeof v[0], cmp_dbl);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

double cvc_model_kernel_gap_us(const cvc_modelset *ms)
{
	return ms ? ms->kernel_gap_us : NAN;
}

double cvc_model_kernel_gap_sigma(const cvc_modelset *ms)
{
	return ms ? SIG_GAP : NAN;
}
