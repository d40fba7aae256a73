/*
 * test_defaults.c - the default model figures that come from measured data,
 * recomputed here from the files they come from, so none of them is a
 * constant set by hand: the GEMM efficiency (XLA's H100 table), the gap
 * between back-to-back kernels and the host's time per launch (the shared
 * traces).
 */
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "cvc/cvc_db.h"
#include "cvc/cvc_model.h"
#include "models/opmodel_int.h"
#include "testutil.h"

static int cmp_dbl(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

Test(models_gemm, default_efficiency_from_xla)
{
	cvc_model_rows rows = {0};
	double *eff;
	size_t n = 0;
	char err[512] = "";

	cr_assert_eq(cvc_model_rows_read(&rows, tu_shared("traces/xla-perf-tables/"
							  "xla_matmul_perf_table.csv.gz"),
					 NULL, err, sizeof err), CVC_OK, "%s", err);
	eff = calloc(rows.n + 1, sizeof *eff);
	cr_assert_not_null(eff);
	for (size_t i = 0; i < rows.n; i++) {
		const cvc_model_row *r = &rows.v[i];
		double b = r->b > 0 ? (double)r->b : 1, flops, pad;

		if (r->kind != CVC_MODEL_GEMM || r->dtype != CVC_HW_BF16)
			continue;
		flops = 2 * b * (double)r->m * (double)r->n * (double)r->k;
		if (flops < 68719476736.0) /* 2^36: the compute-bound end of the table */
			continue;
		pad = 2 * b * ceil(r->m / 128.0) * 128 * ceil(r->n / 128.0) * 128 * (double)r->k;
		eff[n++] = pad / (r->time_us * 1e-6) / 989.4e12;
	}
	cr_assert_eq(n, 34, "rows of 2^36 FLOPs and more: %zu", n);
	qsort(eff, n, sizeof *eff, cmp_dbl);
	{
		double med = (eff[n / 2 - 1] + eff[n / 2]) / 2;
		cvc_hw_catalog *cat = NULL;
		const cvc_hw_spec *h100;
		double def;

		cr_assert_eq(cvc_hw_catalog_new(&cat), CVC_OK);
		h100 = cvc_hw_catalog_lookup(cat, "H100-SXM");
		def = opm_gemm_default_efficiency(cat, h100);
		cr_expect_float_eq(med, 0.757, 0.001, "median %.4f", med);
		/* on the H100 it was measured on: the burst median at the
		 * sustained clock (H200 SXM: the same die, ceiling.c) */
		cr_expect_float_eq(def, med / opm_burst_ratio(h100), 5e-5,
				   "default %.4f, table median / burst ratio %.4f", def,
				   med / opm_burst_ratio(h100));
		cvc_hw_catalog_free(cat);
	}
	free(eff);
	cvc_model_rows_release(&rows);
}

/* Mean of the gaps under 20 us between consecutive kernels of the stream
 * with the most non-NCCL kernels. */
static double mean_gap_us(cvc_db *db)
{
	sqlite3 *sq = cvc_db_sqlite(db);
	sqlite3_stmt *st = NULL;
	long long stream = -1, prev_end = -1;
	double sum = 0;
	long n = 0;

	cr_assert_eq(sqlite3_prepare_v2(sq,
					"SELECT a.stream FROM activities a JOIN strings s ON s.id = "
					"a.name_id WHERE a.kind = 1 AND s.value NOT LIKE '%nccl%' "
					"GROUP BY a.stream ORDER BY count(*) DESC LIMIT 1",
					-1, &st, NULL), SQLITE_OK, "%s", sqlite3_errmsg(sq));
	cr_assert_eq(sqlite3_step(st), SQLITE_ROW);
	stream = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	cr_assert_eq(sqlite3_prepare_v2(sq,
					"SELECT start_ns, end_ns FROM activities WHERE kind = 1 AND "
					"stream = ? ORDER BY start_ns",
					-1, &st, NULL), SQLITE_OK);
	sqlite3_bind_int64(st, 1, stream);
	while (sqlite3_step(st) == SQLITE_ROW) {
		long long s = sqlite3_column_int64(st, 0), e = sqlite3_column_int64(st, 1);

		if (prev_end >= 0 && s - prev_end >= 0 && s - prev_end < 20000) {
			sum += (double)(s - prev_end);
			n++;
		}
		prev_end = e;
	}
	sqlite3_finalize(st);
	cr_assert_gt(n, 100);
	return sum / (double)n / 1e3;
}

Test(models_gap, kernel_gaps_from_traces)
{
	static const struct {
		const char *trace, *file;
	} files[] = {
		{"hta-ddp-v100-2rank", "df_index_resolver.json.gz"},
		{"hta-trace-diff-v100-w2", "test.json.gz"},
		{"hta-trace-diff-a100-w8", "control.json.gz"},
		{"hta-nccl-args-a100-w2", "nccl_data.json.gz"},
		{"hta-a100-80g-w16-rank0", "rank0.json.gz"},
		{"tracelens-h100-qwen05b", "Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz"},
	};
	size_t nref = 0;
	const struct opm_gap_ref *ref = opm_gap_refs(&nref);

	cr_assert_eq(nref, sizeof files / sizeof files[0]);
	for (size_t i = 0; i < nref; i++) {
		char rel[512];
		cvc_db *db;
		double g;

		cr_assert_str_eq(ref[i].trace, files[i].trace);
		snprintf(rel, sizeof rel, "traces/%s/%s", files[i].trace, files[i].file);
		db = tu_import(tu_shared(rel), "g.db");
		g = mean_gap_us(db);
		cr_expect_float_eq(g, ref[i].gap_us, 0.0005, "%s: measured %.4f us, compiled %.4f us",
				   ref[i].trace, g, ref[i].gap_us);
		cvc_db_close(db);
	}
}

Test(models_gap, modelset_takes_its_generation)
{
	cvc_hw_catalog *cat = NULL;
	cvc_modelset *a = NULL, *h = NULL, *b = NULL;

	cr_assert_eq(cvc_hw_catalog_new(&cat), CVC_OK);
	cr_assert_eq(cvc_modelset_new(NULL, cat, cvc_hw_catalog_lookup(cat, "A100"), &a), CVC_OK);
	cr_assert_eq(cvc_modelset_new(NULL, cat, cvc_hw_catalog_lookup(cat, "H100"), &h), CVC_OK);
	cr_assert_eq(cvc_modelset_new(NULL, cat, cvc_hw_catalog_lookup(cat, "B200"), &b), CVC_OK);
	/* A100: the median of its three traces; H100 and later: the H100's */
	cr_expect_float_eq(cvc_model_kernel_gap_us(a), 3.336, 1e-9);
	cr_expect_float_eq(cvc_model_kernel_gap_us(h), 1.936, 1e-9);
	cr_expect_float_eq(cvc_model_kernel_gap_us(b), 1.936, 1e-9);
	cvc_modelset_free(a);
	cvc_modelset_free(h);
	cvc_modelset_free(b);
	cvc_hw_catalog_free(cat);
}

/* The built-in reference GEMM fits are what `cvc fit` makes of their files. */
Test(models_gemm, reference_fits_refit)
{
	size_t nref = 0;
	const cvc_model_fit *ref = opm_gemm_references(&nref);
	cvc_hw_catalog *cat = NULL;
	static const char *const files[] = {
		"traces/xla-perf-tables/xla_matmul_perf_table.csv.gz",
		"traces/vidur-profiling/compute/a100__Llama-2-7b-hf__mlp.csv.gz",
	};

	cr_assert_eq(nref, 2);
	cr_assert_eq(cvc_hw_catalog_new(&cat), CVC_OK);
	for (size_t i = 0; i < nref; i++) {
		cvc_model_rows rows = {0};
		cvc_model_row *sel;
		cvc_model_fit fit;
		size_t n = 0;
		char err[512] = "";
		const cvc_hw_spec *spec = cvc_hw_catalog_lookup(cat, ref[i].gpu);

		cr_assert_not_null(spec);
		cr_assert_eq(cvc_model_rows_read(&rows, tu_shared(files[i]), ref[i].gpu, err,
						 sizeof err), CVC_OK, "%s", err);
		sel = calloc(rows.n + 1, sizeof *sel);
		cr_assert_not_null(sel);
		for (size_t j = 0; j < rows.n; j++)
			if (rows.v[j].kind == CVC_MODEL_GEMM && rows.v[j].dtype == ref[i].dtype)
				sel[n++] = rows.v[j];
		cr_assert_eq((int)n, ref[i].n_points, "%s: %zu rows", files[i], n);
		cr_assert_eq(cvc_model_fit_gemm(sel, n, spec, &fit, err, sizeof err), CVC_OK, "%s",
			     err);
		for (int p = 0; p < GP_N; p++)
			cr_expect_float_eq(fit.params[p], ref[i].params[p],
					   1e-9 * fmax(1, fabs(ref[i].params[p])),
					   "%s param %d: refit %.17g, built in %.17g", files[i], p,
					   fit.params[p], ref[i].params[p]);
		cr_expect_float_eq(fit.dom_min, ref[i].dom_min, 1);
		cr_expect_float_eq(fit.dom_max, ref[i].dom_max, 1);
		cr_expect_float_eq(fit.extrap_mape, ref[i].extrap_mape, 1e-6);
		free(sel);
		cvc_model_rows_release(&rows);
	}
	cvc_hw_catalog_free(cat);
}

/* The host's time per launch in the database of the trace(s) at paths
 * (space-separated, shell-quoted), imported by the CLI: the launching
 * threads' time between launches over the intervals counted, every rank. */
static double host_us(const char *paths, const char *dbname)
{
	const char *db_path = tu_path(tu_tmpdir(), dbname);
	char args[4096], *out = NULL, *err = NULL;
	cvc_db *db = NULL;
	int64_t ns, gaps;
	int rc;

	snprintf(args, sizeof args, "import --db '%s' %s", db_path, paths);
	rc = tu_cvc(args, &out, &err);
	cr_assert_eq(rc, 0, "%s: exit %d: %s", paths, rc, err);
	free(out);
	free(err);
	cr_assert_eq(cvc_db_open(db_path, 0, &db), CVC_OK);
	ns = tu_db_int(db, "SELECT sum(CAST(value AS INTEGER)) FROM run_meta WHERE key LIKE "
			   "'rank%.import.host_launch_ns'");
	gaps = tu_db_int(db, "SELECT sum(CAST(value AS INTEGER)) FROM run_meta WHERE key LIKE "
			     "'rank%.import.host_launch_gaps'");
	cvc_db_close(db);
	cr_assert_gt(gaps, 100, "%s: %lld intervals", paths, (long long)gaps);
	return (double)ns / (double)gaps / 1e3;
}

/*
 * Claim (docs/MODELS.md "Host time per launch"): each trace's host time per
 * kernel launch is what its launch calls show, the priced figure the MoE
 * training trace's, its spread the training traces' robust spread.
 */
Test(models_host, host_launch_from_traces)
{
	static const char *const one[] = {
		"deepseek-train-h800-ep64/train.json.gz",
		"hta-trace-diff-a100-w8/control.json.gz",
		"hta-a100-80g-w16-rank0/rank0.json.gz",
		"hta-nccl-args-a100-w2/nccl_data.json.gz",
		"hta-ddp-v100-2rank/df_index_resolver.json.gz",
		"hta-trace-diff-v100-w2/test.json.gz",
		NULL, /* the 8 DLRM workers */
		"tracelens-h100-qwen05b/Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz",
	};
	size_t nref = 0;
	const struct opm_host_ref *ref = opm_host_refs(&nref);

	cr_assert_eq(nref, sizeof one / sizeof one[0]);
	for (size_t i = 0; i < nref; i++) {
		char paths[3000] = "", rel[512], db[32];
		double us;

		if (one[i]) {
			snprintf(rel, sizeof rel, "traces/%s", one[i]);
			snprintf(paths, sizeof paths, "'%s'", tu_shared(rel));
		} else {
			char *p[8];
			size_t n = 0;

			tu_dlrm_paths(p);
			for (int r = 0; r < 8; r++) {
				int k = snprintf(paths + n, sizeof paths - n, "'%s' ", p[r]);

				cr_assert(k > 0 && (size_t)k < sizeof paths - n);
				n += (size_t)k;
				free(p[r]);
			}
		}
		cr_assert(strncmp(one[i] ? one[i] : &TU_DLRM_DIR[7], ref[i].trace,
				  strlen(ref[i].trace)) == 0, "%s", ref[i].trace);
		snprintf(db, sizeof db, "h%zu.db", i);
		us = host_us(paths, db);
		cr_expect_float_eq(us, ref[i].us, 0.0001, "%s: measured %.4f us, compiled %.4f us",
				   ref[i].trace, us, ref[i].us);
	}
	cr_expect_float_eq(cvc_model_host_launch_us(), 45.4021, 1e-9);
	cr_expect_float_eq(cvc_model_host_launch_sigma(), 1.4826 * 5.9562 / 45.4021, 1e-4,
			   "%.4f", cvc_model_host_launch_sigma());
}
