/*
 * test_nvlinkref.c - the collectives cvc prices inside one NVLink domain
 * without a fit, against the measured tables they come from (XLA's
 * collective tables of one H100 node and one B200 node; models/opformula.c
 * nvlink_ref, docs/MODELS.md "Collectives in one NVLink domain").
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>

#include <criterion/criterion.h>

#include "cvc/cvc_model.h"
#include "models/modelset_int.h"
#include "testutil.h"

static const cvc_hw_spec *spec_or_die(const cvc_hw_catalog *cat, const char *name)
{
	const cvc_hw_spec *s = cvc_hw_catalog_lookup(cat, name);

	cr_assert_not_null(s, "%s not in the catalog", name);
	return s;
}

/*
 * Collectives in one NVLink domain without a fit: XLA's measured tables of
 * one H100 node and one B200 node (8 GPUs each), fitted here as the
 * all-reduce references are (largest third of the sizes, t = a + b S on
 * relative error), price what cvc's defaults price, (S + a/b) f(n) /
 * (eff x link), for the all-reduce, all-gather, reduce-scatter and
 * all-to-all of the GPUs on those links (H200 the H100's, GB200 the
 * B200's).  The fit holds every size from 32 MiB up within 16%.  Links
 * not measured (an A100's NVLink 3, an H800's cut NVLink 4, AMD's) keep
 * the spec-sheet default.
 */
Test(nvlinkref, refs_match_xla)
{
	static const cvc_model_coll colls[] = {CVC_MODEL_ALLREDUCE, CVC_MODEL_ALLGATHER,
					       CVC_MODEL_REDUCESCATTER, CVC_MODEL_ALLTOALL};
	static const struct {
		const char *table, *gpu;
	} gen[] = {{"H100", "H100"}, {"H100", "H200"}, {"B200", "B200"}, {"B200", "GB200"}};
	static const char *const dflt[] = {"A100", "H800", "MI300X"};
	cvc_hw_catalog *cat = NULL;
	cvc_model_rows rows = {0};
	cvc_modelset *ms = NULL;
	int64_t big = (int64_t)256 << 20;
	char err[512];

	cr_assert_eq(cvc_hw_catalog_new(&cat), CVC_OK);
	cr_assert_eq(cvc_model_rows_read(&rows,
					 tu_shared("traces/xla-perf-tables/xla_collective_perf_table.csv.gz"),
					 NULL, err, sizeof err),
		     CVC_OK, "%s", err);
	for (size_t g = 0; g < sizeof gen / sizeof gen[0]; g++) {
		const cvc_hw_spec *meas = spec_or_die(cat, gen[g].table), *spec = spec_or_die(cat, gen[g].gpu);

		cr_assert_eq(cvc_modelset_new(NULL, cat, spec, &ms), CVC_OK);
		for (size_t c = 0; c < sizeof colls / sizeof colls[0]; c++) {
			int64_t sz[64];
			double tm[64], a, b, f, eff, fill, want, got;
			size_t m = 0, top;

			for (size_t i = 0; i < rows.n && m < 64; i++)
				if (cvc_hw_catalog_lookup(cat, rows.v[i].gpu) == meas &&
				    rows.v[i].coll == colls[c] && rows.v[i].nranks == 8)
					sz[m] = rows.v[i].bytes, tm[m] = rows.v[i].time_us, m++;
			cr_assert_eq(m, 22, "%s coll %d: %zu rows of 8", gen[g].table, colls[c], m);
			tu_fit_largest_third(sz, tm, m, &a, &b);
			top = m - m / 3;
			f = cvc_model_busbw_factor(colls[c], 8);
			eff = f / b / 1e3 / meas->intra_bw_gbps;
			fill = a / b;
			for (size_t i = top; i < m; i++)
				cr_expect(fabs((a + b * (double)sz[i]) / tm[i] - 1) < 0.16,
					  "%s coll %d %lld B: %.1f vs %.1f us", gen[g].table, colls[c],
					  (long long)sz[i], a + b * (double)sz[i], tm[i]);
			want = ((double)big + fill) * f / (eff * spec->intra_bw_gbps * 1e3);
			got = cvc_model_collective_us(ms, colls[c], big, 8, 8, spec);
			cr_log_info("%s coll %d of 8 from the %s table: eff %.4f, fill %.2f MB; 256 MiB %.1f us",
				    gen[g].gpu, colls[c], gen[g].table, eff, fill / 1e6, got);
			cr_expect(fabs(got / want - 1) < 0.002, "%s coll %d: %.2f vs %.2f us", gen[g].gpu,
				  colls[c], got, want);
		}
		cvc_modelset_free(ms);
	}
	for (size_t g = 0; g < sizeof dflt / sizeof dflt[0]; g++) {
		const cvc_hw_spec *spec = spec_or_die(cat, dflt[g]);

		cr_assert_eq(cvc_modelset_new(NULL, cat, spec, &ms), CVC_OK);
		cr_expect(fabs(cvc_model_collective_us(ms, CVC_MODEL_ALLTOALL, big, 8, 8, spec) -
			       (10.0 + (double)big * 7 / 8 /
					       (0.75 * spec->intra_bw_gbps * 1e3 * opm_intra_share(spec, 8)))) <
				  1e-6,
			  "%s", dflt[g]);
		cvc_modelset_free(ms);
	}
	cvc_model_rows_release(&rows);
	cvc_hw_catalog_free(cat);
}
