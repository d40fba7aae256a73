/*
 * test_memfit.c - memory-bound models fitted on vidur's per-operator
 * profiles (mlp.csv): fitted on one model's shapes (Llama-2-7B, H100),
 * checked on another's (Llama-2-70B, H100), stored and read back, and
 * picked up by the modelset and the projector.
 */
#include <criterion/criterion.h>
#include <criterion/logging.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cvc/cvc_db.h"
#include "cvc/cvc_model.h"
#include "cvc/cvc_project.h"
#include "testutil.h"

#define MLP7 "traces/vidur-profiling/compute/h100__Llama-2-7b-hf__mlp.csv.gz"
#define MLP70 "traces/vidur-profiling/compute/h100__Llama-2-70b-hf__mlp.csv.gz"

static void read_or_die(cvc_model_rows *rows, const char *path)
{
	char err[512];
	cvc_status st = cvc_model_rows_read(rows, path, NULL, err, sizeof err);

	cr_assert_eq(st, CVC_OK, "%s", err);
}

/* Membound rows of class c (and of op tag when not NULL), malloc'd. */
static size_t select_rows(const cvc_model_rows *v, cvc_model_mem c, const char *tag,
			  cvc_model_row **out)
{
	size_t n = 0;

	*out = calloc(v->n + 1, sizeof **out);
	cr_assert_not_null(*out);
	for (size_t i = 0; i < v->n; i++)
		if (v->v[i].kind == CVC_MODEL_MEMBOUND && v->v[i].mem == c &&
		    (!tag || strcmp(v->v[i].tag, tag) == 0))
			(*out)[n++] = v->v[i];
	return n;
}

static double mape_of(const cvc_model_fit *f, const cvc_hw_spec *s, const cvc_model_row *r,
		      size_t n)
{
	double sum = 0;

	for (size_t i = 0; i < n; i++)
		sum += fabs(cvc_model_fit_predict(f, s, &r[i]) - r[i].time_us) / r[i].time_us;
	return n ? 100.0 * sum / (double)n : NAN;
}

/* The bytes each op is charged (docs/MODELS.md "Memory-bound fits"), from
 * the first Llama-2-7B row: 4096 tokens, tp 1, n_embd 4096, ffn 11008,
 * gated, 32 heads = 32 kv heads. */
Test(memfit, vidur_bytes_follow_model_dims)
{
	cvc_model_rows v = {0};
	int seen = 0;

	read_or_die(&v, tu_shared(MLP7));
	for (size_t i = 0; i < v.n && seen < 5; i++) {
		const cvc_model_row *r = &v.v[i];
		double T = (double)r->m, want = -1;
		cvc_model_mem cls = CVC_MODEL_MEM_ELEMENTWISE;

		if (r->kind != CVC_MODEL_MEMBOUND || r->m != 4096 || r->nranks != 1)
			continue;
		if (strcmp(r->tag, "input_layernorm") == 0 ||
		    strcmp(r->tag, "post_attn_layernorm") == 0)
			want = 2 * (2 * T * 4096 + 4096), cls = CVC_MODEL_MEM_NORM;
		else if (strcmp(r->tag, "mlp_act") == 0)
			want = 2 * 3 * T * 11008;
		else if (strcmp(r->tag, "add") == 0)
			want = 2 * 3 * T * 4096;
		else if (strcmp(r->tag, "attn_rope") == 0)
			want = 2 * 2 * T * (32 + 32) * 128;
		cr_expect_eq(r->mem, cls, "%s: class %d", r->tag, (int)r->mem);
		cr_expect_eq((double)r->bytes, want, "%s: %lld bytes, want %.0f", r->tag,
			     (long long)r->bytes, want);
		seen++;
	}
	cr_expect_eq(seen, 5);
	cvc_model_rows_release(&v);
}

/*
 * Fit on Llama-2-7B (H100), predict Llama-2-70B (H100): n_embd 8192, ffn
 * 28672, 8 kv heads, so every op moves other byte counts at each token
 * count.  Bounds, from the measured figures (logged) with headroom:
 * norm is one kernel and its fit carries over within 20% (measured 11.6%
 * in sample on 7B, 16.8% on 70B); elementwise lumps three kernels whose
 * bandwidth differs 2x at large sizes (residual add ~1.0 of HBM peak: its
 * operands sit in L2 in a profiling loop; SiLU-gate ~0.5; rotary ~0.45),
 * so one class efficiency cannot beat ~30% MAPE (measured 32.4% on 7B,
 * 32.2% on 70B): the bound 40% catches a broken fit or byte count, not
 * the class's spread.  Extrapolation (smaller half of the token counts ->
 * larger half) measured 18.3% (norm) and 33.5% (elementwise).
 */
Test(memfit, fit_llama2_7b_predicts_llama2_70b, .timeout = 60)
{
	static const struct {
		cvc_model_mem c;
		double bound_in, bound_cross, bound_extrap;
	} cls[] = {
		{CVC_MODEL_MEM_NORM, 20.0, 20.0, 25.0},
		{CVC_MODEL_MEM_ELEMENTWISE, 40.0, 40.0, 45.0},
	};
	static const char *const ops[] = {"input_layernorm", "post_attn_layernorm", "mlp_act",
					  "add", "attn_rope"};
	cvc_hw_catalog *cat = NULL;
	const cvc_hw_spec *h100;
	cvc_model_rows v7 = {0}, v70 = {0};
	cvc_model_fit fits[2];
	char err[512];

	cr_assert_eq(cvc_hw_catalog_new(&cat), CVC_OK);
	h100 = cvc_hw_catalog_lookup(cat, "H100");
	cr_assert_not_null(h100);
	read_or_die(&v7, tu_shared(MLP7));
	read_or_die(&v70, tu_shared(MLP70));
	for (size_t k = 0; k < 2; k++) {
		cvc_model_row *a, *b;
		size_t na = select_rows(&v7, cls[k].c, NULL, &a);
		size_t nb = select_rows(&v70, cls[k].c, NULL, &b);
		double cross;

		cr_assert_gt(na, 1000, "%zu rows", na);
		cr_assert_gt(nb, 1000, "%zu rows", nb);
		cr_assert_eq(cvc_model_fit_membound(a, na, h100, &fits[k], err, sizeof err), CVC_OK,
			     "%s", err);
		cross = mape_of(&fits[k], h100, b, nb);
		cr_log_info("membound %s H100: fit on Llama-2-7b %zu rows: floor %.2f us, eff %.3f, "
			    "R2 %.4f, MAPE %.2f%%, extrap MAPE %.2f%%; Llama-2-70b %zu rows: MAPE %.2f%%",
			    cvc_model_mem_name(cls[k].c), na, fits[k].params[0], fits[k].params[1],
			    fits[k].r2, fits[k].mape, fits[k].extrap_mape, nb, cross);
		cr_expect_eq(fits[k].kind, CVC_MODEL_MEMBOUND);
		cr_expect_eq(fits[k].mem, cls[k].c);
		cr_expect_eq(fits[k].n_points, (int)na);
		cr_expect(fits[k].params[1] > 0.1 && fits[k].params[1] <= 1.1, "eff %g",
			  fits[k].params[1]);
		cr_expect(fits[k].params[0] >= 0 && fits[k].params[0] < 10, "floor %g",
			  fits[k].params[0]);
		cr_expect_leq(fits[k].mape, cls[k].bound_in);
		cr_expect_leq(cross, cls[k].bound_cross, "%s cross-model MAPE %.2f%%",
			      cvc_model_mem_name(cls[k].c), cross);
		cr_expect(isfinite(fits[k].extrap_mape) && fits[k].extrap_mape <= cls[k].bound_extrap,
			  "extrap %g", fits[k].extrap_mape);
		/* On data it never saw, the norm fit must beat the spec-sheet
		 * default clearly (measured 16.8% vs 36.0%).  The elementwise
		 * class only matches it (32.2% vs 31.6%): its three kernels
		 * are 2x apart, so no one efficiency does better; the bound
		 * is the default's MAPE plus 3 points. */
		{
			cvc_modelset *def = NULL;
			double sum = 0;

			cr_assert_eq(cvc_modelset_new(NULL, cat, h100, &def), CVC_OK);
			for (size_t i = 0; i < nb; i++)
				sum += fabs(cvc_model_membound_us(def, b[i].bytes, cls[k].c) - b[i].time_us) /
				       b[i].time_us;
			cr_log_info("membound %s H100 Llama-2-70b with the default efficiency: MAPE %.2f%%",
				    cvc_model_mem_name(cls[k].c), 100.0 * sum / (double)nb);
			if (cls[k].c == CVC_MODEL_MEM_NORM)
				cr_expect_lt(cross, 0.6 * 100.0 * sum / (double)nb);
			else
				cr_expect_lt(cross, 100.0 * sum / (double)nb + 3.0);
			cvc_modelset_free(def);
		}
		free(a);
		free(b);
	}
	/* per op, for the docs: which kernels the class figure fits */
	for (size_t o = 0; o < sizeof ops / sizeof ops[0]; o++) {
		cvc_model_row *b;
		size_t nb = select_rows(&v70, o < 2 ? CVC_MODEL_MEM_NORM : CVC_MODEL_MEM_ELEMENTWISE,
					ops[o], &b);

		cr_expect_gt(nb, 500);
		cr_log_info("membound H100 Llama-2-70b %s: %zu rows, MAPE %.2f%%", ops[o], nb,
			    mape_of(&fits[o < 2 ? 0 : 1], h100, b, nb));
		free(b);
	}
	cvc_model_rows_release(&v7);
	cvc_model_rows_release(&v70);
	cvc_hw_catalog_free(cat);
}

Test(memfit, rejects_bad_rows)
{
	cvc_hw_catalog *cat = NULL;
	cvc_model_row r[6];
	cvc_model_fit f;
	char err[256];

	cr_assert_eq(cvc_hw_catalog_new(&cat), CVC_OK);
	memset(r, 0, sizeof r);
	for (int i = 0; i < 6; i++) {
		r[i].kind = CVC_MODEL_MEMBOUND;
		r[i].mem = CVC_MODEL_MEM_NORM;
		r[i].bytes = (int64_t)1 << (20 + i);
		r[i].time_us = 3.0 + (double)r[i].bytes / 1e6;
	}
	cr_expect_eq(cvc_model_fit_membound(r, 3, cvc_hw_catalog_lookup(cat, "H100"), &f, err,
					    sizeof err), CVC_ERR_USAGE);
	r[4].time_us = -1;
	cr_expect_eq(cvc_model_fit_membound(r, 6, cvc_hw_catalog_lookup(cat, "H100"), &f, err,
					    sizeof err), CVC_ERR_USAGE);
	cr_expect(strstr(err, "row 4") != NULL, "%s", err);
	r[4].time_us = 3.0 + (double)r[4].bytes / 1e6;
	r[2].mem = CVC_MODEL_MEM_COPY;
	cr_expect_eq(cvc_model_fit_membound(r, 6, cvc_hw_catalog_lookup(cat, "H100"), &f, err,
					    sizeof err), CVC_ERR_USAGE);
	r[2].mem = CVC_MODEL_MEM_NORM;
	/* exact synthetic rows: 3 us floor, 1 MB/us on H100's 3350 GB/s */
	cr_assert_eq(cvc_model_fit_membound(r, 6, cvc_hw_catalog_lookup(cat, "H100"), &f, err,
					    sizeof err), CVC_OK, "%s", err);
	cr_expect(fabs(f.params[0] - 3.0) < 1e-6, "floor %g", f.params[0]);
	cr_expect(fabs(f.params[1] * cvc_hw_catalog_lookup(cat, "H100")->hbm_bw_gbps * 1e3 - 1e6) <
		  1e-3, "eff %g", f.params[1]);
	cvc_hw_catalog_free(cat);
}

/* `cvc fit` stores the membound fits next to the GEMM one; they read back,
 * the modelset uses them (this GPU: fitted; another: carried over through
 * the HBM bandwidth) and the projector names them. */
Test(memfit, cli_fit_store_modelset_projector, .timeout = 90)
{
	char args[4096], *out = NULL, *err = NULL, org[4096];
	const char *db = tu_path(tu_tmpdir(), "memfit.db");
	cvc_db *h = NULL;
	cvc_model_fit *fits = NULL;
	size_t n = 0, nmem = 0;
	cvc_hw_catalog *cat = NULL;
	cvc_modelset *ms = NULL, *ma = NULL;
	cvc_proj_ctx *ctx = NULL;
	const cvc_model_fit *norm = NULL;

	snprintf(args, sizeof args, "fit --db '%s' '%s'", db, tu_shared(MLP7));
	cr_assert_eq(tu_cvc(args, &out, &err), 0, "%s", err);
	cr_expect(strstr(out, "membound") && strstr(out, "norm") && strstr(out, "elementwise") &&
		  strstr(out, "gemm"), "%s", out);
	free(out);
	free(err);
	cr_assert_eq(cvc_db_open(db, 0, &h), CVC_OK);
	cr_assert_eq(cvc_model_fit_list(h, &fits, &n), CVC_OK);
	for (size_t i = 0; i < n; i++)
		if (fits[i].kind == CVC_MODEL_MEMBOUND) {
			nmem++;
			cr_expect(strstr(fits[i].source, "Llama-2-7b") != NULL, "%s", fits[i].source);
			cr_expect(isfinite(fits[i].r2) && isfinite(fits[i].extrap_mape));
			if (fits[i].mem == CVC_MODEL_MEM_NORM)
				norm = &fits[i];
		}
	cr_expect_eq(nmem, 2);
	cr_assert_not_null(norm);
	cr_assert_eq(cvc_hw_catalog_new(&cat), CVC_OK);
	cr_assert_eq(cvc_modelset_new(h, cat, cvc_hw_catalog_lookup(cat, "H100"), &ms), CVC_OK);
	cr_assert_eq(cvc_modelset_new(h, cat, cvc_hw_catalog_lookup(cat, "A100"), &ma), CVC_OK);
	{
		int64_t bytes = 64 << 20;
		double want = norm->params[0] +
			      (double)bytes / (cvc_hw_catalog_lookup(cat, "H100")->hbm_bw_gbps * 1e3 *
					       norm->params[1]);
		double got = cvc_model_membound_us(ms, bytes, CVC_MODEL_MEM_NORM);
		double wa = norm->params[0] +
			    (double)bytes / (cvc_hw_catalog_lookup(cat, "A100")->hbm_bw_gbps * 1e3 *
					     norm->params[1]);

		cr_expect(fabs(got - want) < 1e-9 * want, "%g vs %g", got, want);
		cr_expect(fabs(cvc_model_membound_us(ma, bytes, CVC_MODEL_MEM_NORM) - wa) < 1e-9 * wa);
	}
	cr_expect(strstr(cvc_model_origin(ms, CVC_MODEL_MEMBOUND, CVC_MODEL_MEM_NORM, 0),
			 "fitted membound model"), "%s",
		  cvc_model_origin(ms, CVC_MODEL_MEMBOUND, CVC_MODEL_MEM_NORM, 0));
	cr_expect(strstr(cvc_model_origin(ma, CVC_MODEL_MEMBOUND, CVC_MODEL_MEM_NORM, 0),
			 "carried over"), "%s",
		  cvc_model_origin(ma, CVC_MODEL_MEMBOUND, CVC_MODEL_MEM_NORM, 0));
	/* a class nothing was fitted for keeps the default */
	cr_expect(strstr(cvc_model_origin(ms, CVC_MODEL_MEMBOUND, CVC_MODEL_MEM_OPTIMIZER, 0),
			 "default"));
	cr_assert_eq(cvc_proj_ctx_new(h, &ctx), CVC_OK);
	cr_assert_eq(cvc_proj_ctx_origin(ctx, "H100", 0, org, sizeof org), CVC_OK);
	cr_log_info("projector origins: %s", org);
	cr_expect(strstr(org, "memory-bound: fitted membound model") != NULL, "%s", org);
	cvc_proj_ctx_free(ctx);
	cvc_modelset_free(ms);
	cvc_modelset_free(ma);
	cvc_hw_catalog_free(cat);
	free(fits);
	cvc_db_close(h);
}
