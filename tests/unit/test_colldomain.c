/*
 * test_colldomain.c - where a collective fit prices: inside the sizes it
 * measured, and past them only through a carry-over whose error was
 * measured (docs/MODELS.md "Fit quality").
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <criterion/criterion.h>
#include <criterion/logging.h>

#include "cvc/cvc_model.h"
#include "testutil.h"

static char rel[256];

static const char *shared(const char *file)
{
	snprintf(rel, sizeof rel, "traces/%s", file);
	return tu_shared(rel);
}

/* The fit of one shared log on its own GPU, as a model set (8 per node). */
static cvc_modelset *fitted_set(const cvc_hw_catalog *cat, const char *file, const char *gpu,
				cvc_model_fit *fit)
{
	const char *path = shared(file);
	cvc_model_rows rows = {0};
	cvc_hw_spec spec = *cvc_hw_catalog_lookup(cat, gpu);
	cvc_modelset *ms = NULL;
	char err[512];

	cr_assert_eq(cvc_model_rows_read(&rows, path, gpu, err, sizeof err), CVC_OK, "%s", err);
	cr_assert_eq(cvc_model_fit_collective(rows.v, rows.n, &spec, fit, err, sizeof err), CVC_OK,
		     "%s: %s", file, err);
	cvc_model_rows_release(&rows);
	spec.gpus_per_node = 8;
	cr_assert_eq(cvc_modelset_from_fits(cat, &spec, fit, 1, &ms), CVC_OK);
	return ms;
}

/*
 * A fit of fewer than 8 rows cannot be split into a half to fit and a half
 * to score, so how its size regimes carry past its largest message was
 * never measured: they price its own sizes, and past them its
 * large-message level (whose carry was measured) answers.  OCI's H200
 * log has 5 rows, 1 to 16 GiB.  A log of 8 rows and up (an H100 IB 400G
 * pair's, 14 rows of 1 MiB to 8 GiB, 10.4% off when fitted on its smaller
 * half) keeps its regimes past its sizes: the gate measured that carry.
 */
Test(colldomain, an_unmeasured_fit_prices_only_its_own_sizes)
{
	cvc_hw_catalog *cat = NULL;
	cvc_model_fit few, many;
	cvc_modelset *ms;
	cvc_model_price in, past;

	cr_assert_eq(cvc_hw_catalog_new(&cat), CVC_OK);
	ms = fitted_set(cat, "nccl-scale/h200x16_2node_oci_roce_all_reduce_perf.txt", "H200", &few);
	cr_assert_eq(few.n_points, 5);
	cr_assert(!isfinite(few.extrap_mape));
	cvc_model_collective_price(ms, CVC_MODEL_ALLREDUCE, (int64_t)16 << 30, 16, 8, NULL,
				   CVC_ALGO_AUTO, &in);
	cvc_model_collective_price(ms, CVC_MODEL_ALLREDUCE, (int64_t)64 << 30, 16, 8, NULL,
				   CVC_ALGO_AUTO, &past);
	cr_log_info("OCI H200, 16 GiB: %s; 64 GiB: %s", in.origin, past.origin);
	cr_expect(strncmp(in.origin, "fitted model", 12) == 0, "%s", in.origin);
	cr_expect_eq(in.extrap, 1.0);
	cr_expect(strncmp(past.origin, "fitted model", 12) != 0, "%s", past.origin);
	cr_expect(strstr(past.origin, "large-message level"), "%s", past.origin);
	cvc_modelset_free(ms);

	ms = fitted_set(cat, "nccl-scale/h100x16_2node_ib400_all_reduce_perf.txt", "H100-SXM",
			&many);
	cr_assert_geq(many.n_points, 8);
	cr_assert(isfinite(many.extrap_mape));
	cvc_model_collective_price(ms, CVC_MODEL_ALLREDUCE, (int64_t)(4 * many.dom_max), 16, 8, NULL,
				   CVC_ALGO_AUTO, &past);
	cr_expect(strncmp(past.origin, "fitted model", 12) == 0, "%s", past.origin);
	cr_expect_float_eq(past.extrap, 4.0, 1e-9);
	cvc_modelset_free(ms);
	cvc_hw_catalog_free(cat);
}
