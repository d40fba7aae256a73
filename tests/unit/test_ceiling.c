/*
 * test_ceiling.c - the measured matmul ceilings of models/ceiling.c: the
 * sustained clock a training step runs at, fp8's share of its peak, and a
 * GEMM fit carried to another GPU, each checked against what was measured:
 * the carry on two GPU pairs measured with one harness on both GPUs
 * (vidur's H100 and A100 tables, XLA's sm_90 table in ../shared and its
 * sm_100 table in tests/data), fp8's share against XLA's own B200 rows.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "cvc/cvc_model.h"
#include "models/opmodel_int.h"
#include "testutil.h"

#define BIG_FLOPS 68719476736.0 /* 2^36: where the launch floor is noise */

static const cvc_hw_spec *spec_of(const cvc_hw_catalog *cat, const char *gpu)
{
	const cvc_hw_spec *s = cvc_hw_catalog_lookup(cat, gpu);

	cr_assert_not_null(s, "%s is not in the catalog", gpu);
	return s;
}

Test(ceiling, sustained_clock_follows_the_power_limit)
{
	cvc_hw_catalog *cat = NULL;
	double h100, a100p, a100s, b200, gb200, mi355;

	cr_assert_eq(cvc_hw_catalog_new(&cat), CVC_OK);
	h100 = opm_burst_ratio(spec_of(cat, "H100-SXM"));
	a100p = opm_burst_ratio(spec_of(cat, "A100-PCIE-80GB"));
	a100s = opm_burst_ratio(spec_of(cat, "A100-SXM-80GB"));
	b200 = opm_burst_ratio(spec_of(cat, "B200"));
	gb200 = opm_burst_ratio(spec_of(cat, "GB200"));
	mi355 = opm_burst_ratio(spec_of(cat, "MI355X"));
	/* the measured GPUs' own burst / sustained (ml-engineering's table):
	 * the H100 is the H200 SXM's die at its 700 W */
	cr_expect_float_eq(h100, 850.0 / 755, 1e-12, "H100 %.6f", h100);
	cr_expect_float_eq(a100p, 285.0 / 258, 1e-12, "A100 PCIe %.6f", a100p);
	cr_expect_float_eq(b200, 1737.0 / 1439, 1e-12, "B200 %.6f", b200);
	/* more power, nearer the burst: A100 SXM (400 W) against the 300 W
	 * PCIe card measured; not on Blackwell, where the B300 at 1100 W
	 * sustains less of its burst than the B200 at 1000 W: a GB200 (1200 W)
	 * keeps the B200's measured ratio */
	cr_expect(a100s > 1 && a100s < a100p, "A100 SXM %.4f, PCIe %.4f", a100s, a100p);
	cr_expect_float_eq(gb200, b200, 1e-12, "GB200 %.4f, B200 %.4f", gb200, b200);
	/* never faster than the burst (MI355X: 1400 W against the 750 W
	 * MI300X measured) */
	cr_expect_float_eq(mi355, 1.0, 1e-12, "MI355X %.4f", mi355);
	cr_log_info("burst / sustained: H100 %.3f, A100 PCIe %.3f, A100 SXM %.3f, B200 %.3f, "
		    "GB200 %.3f, MI355X %.3f", h100, a100p, a100s, b200, gb200, mi355);
	cvc_hw_catalog_free(cat);
}

static int cmp_dbl(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* Median of v[0..n) (sorts it). */
static double median(double *v, size_t n)
{
	qsort(v, n, sizeof *v, cmp_dbl);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/*
 * fp8's share of its peak over bf16's, sustained: H200 SXM 1354 / (2 x 755),
 * B200 2788 / (2 x 1439).  XLA measured the B200 in bursts with another
 * harness: on its rows of 2^36 FLOPs and more the same ratio comes out
 * within 2% of the sustained figure.
 */
Test(ceiling, fp8_share_of_its_peak)
{
	cvc_hw_catalog *cat = NULL;
	cvc_model_rows rows = {0};
	double *r, xla;
	size_t n = 0;
	char err[512] = "";

	cr_assert_eq(cvc_hw_catalog_new(&cat), CVC_OK);
	cr_expect_float_eq(opm_fp8_share(spec_of(cat, "H100-SXM")), 1354.0 / 1510, 1e-12);
	cr_expect_float_eq(opm_fp8_share(spec_of(cat, "B200")), 2788.0 / 2878, 1e-12);
	cr_expect_float_eq(opm_fp8_share(spec_of(cat, "A100-SXM-80GB")), 1.0, 0);
	cr_assert_eq(cvc_model_rows_read(&rows, CVC_SOURCE_DIR "/tests/data/xla-matmul-sm100.csv",
					 NULL, err, sizeof err), CVC_OK, "%s", err);
	r = calloc(rows.n + 1, sizeof *r);
	cr_assert_not_null(r);
	for (size_t i = 0; i < rows.n; i++) {
		const cvc_model_row *a = &rows.v[i];

		if (a->dtype != CVC_HW_BF16 ||
		    2.0 * (a->b > 0 ? a->b : 1) * a->m * a->n * a->k < BIG_FLOPS)
			continue;
		for (size_t j = 0; j < rows.n; j++) {
			const cvc_model_row *f = &rows.v[j];

			/* the same shape in fp8: half the time at the same share */
			if (f->dtype == CVC_HW_FP8 && f->b == a->b && f->m == a->m && f->n == a->n &&
			    f->k == a->k)
				r[n++] = a->time_us / (2 * f->time_us);
		}
	}
	cr_assert_eq(n, 34, "B200 bf16 / fp8 pairs of 2^36 FLOPs and more: %zu", n);
	xla = median(r, n);
	cr_log_info("fp8 share on B200: sustained %.3f (ml-engineering), XLA bursts %.3f",
		    opm_fp8_share(spec_of(cat, "B200")), xla);
	cr_expect_lt(fabs(xla / opm_fp8_share(spec_of(cat, "B200")) - 1), 0.02);
	free(r);
	cvc_model_rows_release(&rows);
	cvc_hw_catalog_free(cat);
}

/* One GPU pair measured with one harness: median measured / predicted and
 * MAPE on the target's rows of 2^36 FLOPs and more, for the fit carried
 * through the measured ceilings and through the spec sheet alone. */
struct carry {
	double med, mape, med_sheet, mape_sheet;
	size_t n;
};

static struct carry carry_on(const char *from_file, const char *from_gpu, const char *to_file,
			     const char *to_gpu, cvc_hw_dtype dt)
{
	cvc_hw_catalog *cat = NULL;
	cvc_model_rows src = {0}, dst = {0};
	cvc_model_row *sel;
	cvc_model_fit fit;
	cvc_modelset *ms = NULL;
	const cvc_hw_spec *a, *b;
	cvc_hw_spec sheet;
	double *q, *qs, sa = 0, ss = 0;
	struct carry c = {0};
	size_t n = 0;
	char err[512] = "";

	cr_assert_eq(cvc_hw_catalog_new(&cat), CVC_OK);
	a = spec_of(cat, from_gpu);
	b = spec_of(cat, to_gpu);
	cr_assert_eq(cvc_model_rows_read(&src, from_file, from_gpu, err, sizeof err), CVC_OK, "%s",
		     err);
	cr_assert_eq(cvc_model_rows_read(&dst, to_file, to_gpu, err, sizeof err), CVC_OK, "%s",
		     err);
	sel = calloc(src.n + 1, sizeof *sel);
	cr_assert_not_null(sel);
	for (size_t i = 0; i < src.n; i++)
		if (src.v[i].kind == CVC_MODEL_GEMM && src.v[i].dtype == dt)
			sel[n++] = src.v[i];
	cr_assert_eq(cvc_model_fit_gemm(sel, n, a, &fit, err, sizeof err), CVC_OK, "%s", err);
	fit.id = 1;
	fit.dom_min = 0, fit.dom_max = INFINITY; /* the fit's form at every size */
	cr_assert_eq(cvc_modelset_from_fits(cat, b, &fit, 1, &ms), CVC_OK);
	/* the spec sheet alone: the source's burst efficiency on the target's
	 * peak, as the fit's own quality figures compare (fit.c) */
	sheet = *b;
	for (int d = 0; d < CVC_HW_NDTYPE; d++)
		sheet.peak_tflops[d] *= opm_burst_ratio(a);
	q = calloc(dst.n + 1, sizeof *q);
	qs = calloc(dst.n + 1, sizeof *qs);
	cr_assert(q && qs);
	n = 0;
	for (size_t i = 0; i < dst.n; i++) {
		const cvc_model_row *r = &dst.v[i];
		double t, ts;

		if (r->kind != CVC_MODEL_GEMM || r->dtype != dt ||
		    2.0 * (r->b > 0 ? r->b : 1) * r->m * r->n * r->k < BIG_FLOPS)
			continue;
		/* the modelset prices a training step's sustained clock; the
		 * target's rows are bursts */
		t = cvc_model_gemm_us(ms, r->m, r->n, r->k, r->b, dt) / opm_burst_ratio(b);
		ts = cvc_model_fit_predict(&fit, &sheet, r);
		q[n] = r->time_us / t;
		qs[n] = r->time_us / ts;
		sa += fabs(t - r->time_us) / r->time_us;
		ss += fabs(ts - r->time_us) / r->time_us;
		n++;
	}
	cr_assert_gt(n, 10);
	c.n = n;
	c.mape = 100 * sa / (double)n;
	c.mape_sheet = 100 * ss / (double)n;
	c.med = median(q, n);
	c.med_sheet = median(qs, n);
	free(q);
	free(qs);
	free(sel);
	cvc_modelset_free(ms);
	cvc_model_rows_release(&src);
	cvc_model_rows_release(&dst);
	cvc_hw_catalog_free(cat);
	return c;
}

/*
 * A fit carried to another GPU goes through the two GPUs' measured burst
 * ceilings (ml-engineering: A100 PCIe 91% of peak, H200 86%, B200 77%).
 * Checked on the two pairs ../shared and tests/data hold, each measured with
 * one harness on both GPUs, on rows of 2^36 FLOPs and more: the A100 3%
 * slower than carried (spec sheet alone: 3% faster), the B200 6.6% slower
 * (spec sheet alone: 13.7%).  Held: the median within 7%, the MAPE no
 * worse than the spec sheet's.  docs/MODELS.md quotes these figures.
 */
Test(ceiling, carry_across_gpus_on_measured_pairs)
{
	char h100[1024], a100[1024], sm90[1024];
	struct carry v, x;

	/* tu_shared() returns one static buffer: copy each path */
	snprintf(h100, sizeof h100, "%s",
		 tu_shared("traces/vidur-profiling/compute/h100__Llama-2-7b-hf__mlp.csv.gz"));
	snprintf(a100, sizeof a100, "%s",
		 tu_shared("traces/vidur-profiling/compute/a100__Llama-2-7b-hf__mlp.csv.gz"));
	snprintf(sm90, sizeof sm90, "%s",
		 tu_shared("traces/xla-perf-tables/xla_matmul_perf_table.csv.gz"));
	v = carry_on(h100, "H100-SXM", a100, "A100-SXM-80GB", CVC_HW_FP16);
	x = carry_on(sm90, "H100-SXM", CVC_SOURCE_DIR "/tests/data/xla-matmul-sm100.csv", "B200",
		     CVC_HW_BF16);
	cr_log_info("vidur H100 -> A100, %zu rows: measured / predicted median %.3f, MAPE %.1f%% "
		    "(spec sheet alone: %.3f, %.1f%%)", v.n, v.med, v.mape, v.med_sheet,
		    v.mape_sheet);
	cr_log_info("XLA sm_90 -> sm_100, %zu rows: measured / predicted median %.3f, MAPE %.1f%% "
		    "(spec sheet alone: %.3f, %.1f%%)", x.n, x.med, x.mape, x.med_sheet, x.mape_sheet);
	cr_expect_lt(fabs(v.med - 1), 0.07, "vidur A100: median %.3f", v.med);
	cr_expect_lt(fabs(x.med - 1), 0.07, "XLA B200: median %.3f", x.med);
	cr_expect_leq(v.mape, v.mape_sheet, "vidur A100: %.1f%% against %.1f%%", v.mape,
		      v.mape_sheet);
	cr_expect_leq(x.mape, x.mape_sheet, "XLA B200: %.1f%% against %.1f%%", x.mape,
		      x.mape_sheet);
}

/*
 * The GB200's burst ceiling comes from the one harness that measured it
 * beside the B200 (ml-engineering's earlier MAMF table: bf16 1822.0 against
 * 1745.0), not from the B200's share of a datasheet peak 11% higher.
 * Expected: cvc's default bf16 GEMM throughput of the two, taken back to
 * the burst, stands in that measured ratio (1.044; the B200's share of
 * the GB200's peak gave 1.111), and a GPU measured by neither harness of
 * its shape takes the nearest: GB300 (the GB200's peak and SMs as the
 * B300) the GB200's.
 */
Test(ceiling, gb200_placed_by_one_harness)
{
	cvc_hw_catalog *cat = NULL;
	const cvc_hw_spec *b, *g;
	const char *from = NULL;
	double burst_b, burst_g;

	cr_assert_eq(cvc_hw_catalog_new(&cat), CVC_OK);
	b = spec_of(cat, "B200");
	g = spec_of(cat, "GB200");
	burst_b = opm_gemm_default_efficiency(cat, b) * opm_burst_ratio(b) *
		  b->peak_tflops[CVC_HW_BF16];
	burst_g = opm_gemm_default_efficiency(cat, g) * opm_burst_ratio(g) *
		  g->peak_tflops[CVC_HW_BF16];
	cr_log_info("burst bf16 GEMM ceiling GB200 / B200: %.4f (one harness: %.4f)",
		    burst_g / burst_b, 1822.0 / 1745.0);
	cr_expect_float_eq(burst_g / burst_b, 1822.0 / 1745.0, 1e-9);
	cr_expect_float_eq(opm_ceiling_share_of("GB200"), 1737.0 * 1822.0 / 1745.0 / 2500, 1e-12);
	/* the B300 beside the B200 in the same harness: 1769.0 against 1745.0 */
	cr_expect_float_eq(opm_ceiling_share_of("B300"), 1737.0 * 1769.0 / 1745.0 / 2250, 1e-12);
	cr_expect_float_eq(opm_ceiling_share(cat, spec_of(cat, "GB300"), &from),
			   opm_ceiling_share_of("GB200"), 1e-12);
	cr_expect_str_eq(from ? from : "", "GB200");
	cvc_hw_catalog_free(cat);
}
