/*
 * test_epcomm.c - the expert-parallel exchanges of DeepEP and HybridEP
 * (models/epcomm.c) against the bandwidths their authors published
 * (tests/data/deepep-bandwidths.csv), and the grouped-GEMM slowdown
 * against DeepGEMM's tables (tests/data/deepgemm-h800.csv); docs/MODELS.md
 * "Expert-parallel dispatchers" and "MoE layers".
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "cvc/cvc_model.h"
#include "testutil.h"

/* One row of deepep-bandwidths.csv. */
struct bwrow {
	char backend[16], gpu[16], kind[16], phase[16];
	int ranks, nodes, sms;
	double gbps;
};

/* The rows of the file, into r (at most max); their count. */
static int read_rows(struct bwrow *r, int max)
{
	char *text = tu_read(CVC_SOURCE_DIR "/tests/data/deepep-bandwidths.csv", NULL), *p, *l;
	int n = 0, header = 1;

	cr_assert(text);
	p = text;
	while ((l = tu_next_line(&p)) && n < max) {
		if (l[0] == '#' || !l[0])
			continue;
		if (header) {
			header = 0;
			continue;
		}
		cr_assert_eq(sscanf(l, "%15[^,],%15[^,],%15[^,],%d,%d,%d,%15[^,],%lf", r[n].backend,
				    r[n].gpu, r[n].kind, &r[n].ranks, &r[n].nodes, &r[n].sms,
				    r[n].phase, &r[n].gbps),
			     8, "%s", l);
		n++;
	}
	free(text);
	return n;
}

/* Expected distinct units a token's k experts (of E, E/u per unit) fall
 * on when the k are drawn among the experts of m of the u units (m = u:
 * no limit): u' (1 - C(E' - E/u, k) / C(E', k)), E' = E m / u. */
static double reached(double E, double k, double u, double m)
{
	double per = E / u, avail = per * m, none = 1;

	for (int i = 0; i < (int)k; i++)
		none *= (avail - per - i) / (avail - i);
	return m * (1 - none);
}

static int phase_of(const char *s)
{
	return !strcmp(s, "dispatch_fp8") ? CVC_EP_DISPATCH_FP8
	       : !strcmp(s, "dispatch_bf16") ? CVC_EP_DISPATCH_16 : CVC_EP_COMBINE;
}

/*
 * The bandwidth cvc implies for a row's benchmark: 4096 tokens of hidden
 * 7168, top-8 of 256 experts (DeepEP's README) or of 8 per rank
 * (HybridEP's document), top-4 groups across nodes, priced on the row's
 * GPU with its SMs; bytes counted as the row's source counts them.
 */
static double implied_gbps(cvc_hw_catalog *cat, const struct bwrow *r)
{
	double T = 4096, h = 7168, k = 8, E = strcmp(r->backend, "hybridep") ? 256 : 8.0 * r->ranks;
	double b = phase_of(r->phase) == CVC_EP_DISPATCH_FP8 ? 1 + 4.0 / 128 : 2;
	double N = r->nodes, g = r->ranks / N, lim = N > 4 ? 4 : N;
	double G = reached(E, k, r->ranks, lim * g), D = N > 1 ? reached(E, k, N, lim) : 1;
	cvc_modelset *ms = NULL;
	cvc_model_ep_call c = {0};
	cvc_model_price pr;

	cr_assert_eq(cvc_modelset_new(NULL, cat, cvc_hw_catalog_lookup(cat, r->gpu), &ms), CVC_OK);
	c.hidden = (int)h;
	c.backend = strcmp(r->backend, "hybridep") ? CVC_EP_DEEPEP : CVC_EP_HYBRIDEP;
	c.phase = phase_of(r->phase);
	c.nvl_bytes = (int64_t)(T * G * h * b);
	c.net_bytes = N > 1 ? (int64_t)(T * D * (N - 1) / N * h * b) : 0;
	c.ranks = r->ranks;
	c.domain = (int)g;
	c.sms = r->sms;
	cvc_model_ep_price(ms, &c, &pr);
	cvc_modelset_free(ms);
	cr_assert_gt(pr.us, 0);
	/* intranode: the tokens received; internode: DeepEP's logical bytes */
	return (N > 1 ? T * D * h * b : T * G * h * b) / (pr.us * 1e3);
}

/*
 * Claim: priced from the figures they were taken from, DeepEP's README
 * rows come back (H800 intranode EP8 and internode EP32 / EP64 within 3%:
 * the network efficiency is the mean of two spans), and so do HybridEP's
 * GB200 rows (within 1%: an interpolation of them); the rows not used
 * (DeepEP EP16 over 2 nodes, which NVLink bounds; HybridEP on B200;
 * DeepEP on GB200 at 8 ranks from the B200 per-SM rates) come within 15%,
 * and their mean error is the 4.8% the price's uncertainty carries.
 * DeepEP on GB200 at 16 and 24 ranks is how the model learns its rank
 * penalty: exact too.
 */
Test(epcomm, published_bandwidths_come_back)
{
	struct bwrow r[128];
	int n = read_rows(r, 128), held = 0;
	double sum = 0;
	cvc_hw_catalog *cat = NULL;

	cr_assert_gt(n, 60);
	cr_assert_eq(cvc_hw_catalog_new(&cat), CVC_OK);
	for (int i = 0; i < n; i++) {
		double got = implied_gbps(cat, &r[i]), err = got / r[i].gbps - 1;
		int out = (!strcmp(r[i].backend, "deepep") && r[i].nodes == 2) ||
			  (!strcmp(r[i].gpu, "B200") && !strcmp(r[i].backend, "hybridep")) ||
			  (!strcmp(r[i].gpu, "GB200") && !strcmp(r[i].backend, "deepep") &&
			   r[i].ranks == 8);

		cr_log_info("%s %s %s ranks %d nodes %d sms %d %s: %.1f GB/s, cvc %.1f (%+.1f%%)%s",
			    r[i].backend, r[i].gpu, r[i].kind, r[i].ranks, r[i].nodes, r[i].sms,
			    r[i].phase, r[i].gbps, got, 100 * err, out ? " held out" : "");
		if (!strcmp(r[i].gpu, "B200") && !strcmp(r[i].backend, "deepep"))
			continue; /* the per-SM rates themselves: SM-bound, not the link */
		if (out) {
			held++;
			sum += fabs(err);
			cr_expect_lt(fabs(err), 0.15, "%s %s ranks %d %s: %+.1f%%", r[i].backend,
				     r[i].gpu, r[i].ranks, r[i].phase, 100 * err);
		} else if (!strcmp(r[i].backend, "deepep") && !strcmp(r[i].gpu, "GB200")) {
			/* the rank penalty is these rows' over the 8-rank row; the
			 * 8-rank row's own error (held out) carries */
			cr_expect_lt(fabs(err), 0.05, "DeepEP GB200 %d ranks %s: %+.1f%%",
				     r[i].ranks, r[i].phase, 100 * err);
		} else if (!strcmp(r[i].backend, "deepep") && !strcmp(r[i].gpu, "H800")) {
			cr_expect_lt(fabs(err), 0.03, "DeepEP EP%d %s: %+.1f%%", r[i].ranks,
				     r[i].phase, 100 * err);
		} else {
			cr_expect_lt(fabs(err), 0.01, "%s %s ranks %d sms %d %s: %+.1f%%",
				     r[i].backend, r[i].gpu, r[i].ranks, r[i].sms, r[i].phase,
				     100 * err);
		}
	}
	cr_assert_eq(held, 8);
	cr_log_info("held out: %d rows, mean |error| %.2f%%", held, 100 * sum / held);
	cr_expect_lt(fabs(sum / held - 0.042), 0.005, "the uncertainty's 4.2%%: %.2f%%",
		     100 * sum / held);
	cvc_hw_catalog_free(cat);
}

/*
 * Claim: the prices follow the links they run on and say where they come
 * from: a GB200 domain of 8 prices HybridEP at its 900 GB/s NVLink, an
 * H100 node at 450 (half the bandwidth: twice the time),
 * more SMs only help, across nodes the NIC bounds DeepEP, and a group of
 * one moves nothing.  Exact but for rounding.
 */
Test(epcomm, prices_follow_the_links)
{
	cvc_hw_catalog *cat = NULL;
	cvc_modelset *gb = NULL, *h = NULL;
	cvc_model_ep_call c = {CVC_EP_HYBRIDEP, CVC_EP_COMBINE, 400000000, 0, 8, 8, 16, 0};
	cvc_model_price a, b, d;

	cr_assert_eq(cvc_hw_catalog_new(&cat), CVC_OK);
	cr_assert_eq(cvc_modelset_new(NULL, cat, cvc_hw_catalog_lookup(cat, "GB200"), &gb), CVC_OK);
	cr_assert_eq(cvc_modelset_new(NULL, cat, cvc_hw_catalog_lookup(cat, "H100"), &h), CVC_OK);
	cvc_model_ep_price(gb, &c, &a);
	cvc_model_ep_price(h, &c, &b);
	cr_expect_float_eq(b.us / a.us, 2.0, 1e-9, "%g / %g", b.us, a.us);
	cr_expect(strstr(a.origin, "HybridEP"), "%s", a.origin);
	c.sms = 32;
	cvc_model_ep_price(gb, &c, &d);
	cr_expect_lt(d.us, a.us);
	c.backend = CVC_EP_DEEPEP;
	c.ranks = 64;
	c.net_bytes = 100000000;
	cvc_model_ep_price(h, &c, &d);
	cr_expect_float_eq(d.us, 100000000 / (0.8656 * 50e3), 1e-6, "%g", d.us);
	cr_expect(strstr(d.origin, "RDMA"), "%s", d.origin);
	c.ranks = 1;
	cvc_model_ep_price(h, &c, &d);
	cr_expect_eq(d.us, 0);
	cr_expect_eq(cvc_model_ep_default_sms(CVC_EP_DEEPEP), 20);
	cr_expect_eq(cvc_model_ep_default_sms(CVC_EP_HYBRIDEP), 16);
	cvc_modelset_free(gb);
	cvc_modelset_free(h);
	cvc_hw_catalog_free(cat);
}

/*
 * Claim: the grouped-GEMM slowdown is DeepGEMM's measured one: from its
 * table, the time of G groups of m rows over one group of G m rows, the
 * geometric mean over its two shapes, is 1.2254 at 256 rows and 1.0942 at
 * 512; 8 groups of 4096 run as fast as a dense GEMM (within 3%: no
 * slowdown from 1024 up).  And priced with it, DeepGEMM's grouped rows
 * come closer on H800: the 4 x 256 rows, 21% and 16% fast without it,
 * are within 7%.
 */
Test(epcomm, grouped_slowdown_from_deepgemm)
{
	char *text = tu_read(CVC_SOURCE_DIR "/tests/data/deepgemm-h800.csv", NULL), *p, *l;
	double ref[2] = {0, 0}, s256 = 1, s512 = 1, s4096 = 1;
	cvc_hw_catalog *cat = NULL;
	cvc_modelset *ms = NULL;
	int header = 1;

	cr_assert(text);
	cr_assert_eq(cvc_hw_catalog_new(&cat), CVC_OK);
	cr_assert_eq(cvc_modelset_new(NULL, cat, cvc_hw_catalog_lookup(cat, "H800"), &ms), CVC_OK);
	/* the dense references first: one group of 1024 (masked) and of 4096 */
	p = text;
	while ((l = tu_next_line(&p))) {
		char lay[16];
		int g, m, n, k;
		double tf;

		if (l[0] == '#' || header) {
			header = header && l[0] == '#';
			continue;
		}
		cr_assert_eq(sscanf(l, "%15[^,],%d,%d,%d,%d,%lf", lay, &g, &m, &n, &k, &tf), 6, "%s", l);
		if (g == 1 && m == 1024)
			ref[n == 4096] = tf;
	}
	free(text);
	text = tu_read(CVC_SOURCE_DIR "/tests/data/deepgemm-h800.csv", NULL);
	p = text;
	header = 1;
	while ((l = tu_next_line(&p))) {
		char lay[16];
		int g, m, n, k;
		double tf, us, cvc_tf;

		if (l[0] == '#' || header) {
			header = header && l[0] == '#';
			continue;
		}
		sscanf(l, "%15[^,],%d,%d,%d,%d,%lf", lay, &g, &m, &n, &k, &tf);
		if (m == 256)
			s256 *= ref[n == 4096] / tf;
		if (m == 512)
			s512 *= ref[n == 4096] / tf;
		if (g == 8)
			s4096 *= (n == 4096 ? 1304.0 : 1025.0) / tf;
		if (g > 1 && m == 256) {
			us = cvc_model_gemm_us(ms, m, n, k, g, CVC_HW_FP8);
			cvc_tf = 2.0 * g * m * n * k / us / 1e6;
			cr_log_info("%d x %d x %d x %d: %.0f TFLOPS measured, cvc %.0f batched, %.0f "
				    "grouped", g, m, n, k, tf, cvc_tf,
				    cvc_tf / cvc_model_grouped_slowdown(m, NULL));
			cr_expect_lt(fabs(cvc_tf / cvc_model_grouped_slowdown(m, NULL) / tf - 1), 0.07);
			cr_expect_gt(cvc_tf / tf - 1, 0.15, "the batched price alone is fast");
		}
	}
	free(text);
	cr_expect_float_eq(sqrt(s256), cvc_model_grouped_slowdown(256, NULL), 5e-4, "%g", sqrt(s256));
	cr_expect_float_eq(sqrt(s512), cvc_model_grouped_slowdown(512, NULL), 5e-4, "%g", sqrt(s512));
	cr_expect_lt(fabs(sqrt(s4096) - 1), 0.03, "%g", sqrt(s4096));
	cr_expect_eq(cvc_model_grouped_slowdown(4096, NULL), 1.0);
	{
		int ex = 0;

		cr_expect_gt(cvc_model_grouped_slowdown(128, &ex), 1.2254);
		cr_expect(ex, "under 256 rows is past the table");
	}
	cvc_modelset_free(ms);
	cvc_hw_catalog_free(cat);
}

/*
 * Claim: the kernels' bandwidth at smaller tokens is the H100 benchmark's
 * (tests/data/ep-h100-hidden.csv, NeMo Automodel's DeepEP vs HybridEP
 * document): for each row at hidden 2048, the price of the same bytes at
 * 2048 over 7168 on H100 is the 7168 row's bandwidth over the 2048 row's,
 * on NVLink (EP8) and on RDMA (EP16, 2 nodes), at the row's SMs, and the
 * price says so (carried on links other than H100's).  Exact but for rounding: the shares are these rows'.  And a call of unknown
 * width (0) or of 7168 and wider is priced as the tables were measured.
 */
Test(epcomm, smaller_tokens_cost_their_measured_share)
{
	struct { char be[16], kind[16], shape[16], phase[16]; int ranks, nodes, hidden, sms;
		 double gbps; } r[64];
	char *text = tu_read(CVC_SOURCE_DIR "/tests/data/ep-h100-hidden.csv", NULL), *p, *l;
	double ref[2][2][3][33] = {{{{0}}}};
	int n = 0, header = 1, checked = 0;
	cvc_hw_catalog *cat = NULL;
	cvc_modelset *h = NULL;

	cr_assert(text);
	for (p = text; (l = tu_next_line(&p)) && n < 64;) {
		if (l[0] == '#' || !l[0] || (header && !(header = 0)))
			continue;
		cr_assert_eq(sscanf(l, "%15[^,],%15[^,],%d,%d,%15[^,],%d,%d,%15[^,],%lf", r[n].be,
				    r[n].kind, &r[n].ranks, &r[n].nodes, r[n].shape, &r[n].hidden,
				    &r[n].sms, r[n].phase, &r[n].gbps),
			     9, "%s", l);
		cr_assert(r[n].sms > 0 && r[n].sms <= 32, "%s", l);
		if (r[n].hidden == 7168)
			ref[!strcmp(r[n].be, "hybridep")][r[n].nodes > 1][phase_of(r[n].phase)]
			   [r[n].sms] = r[n].gbps;
		n++;
	}
	free(text);
	cr_assert_eq(n, 51);
	cr_assert_eq(cvc_hw_catalog_new(&cat), CVC_OK);
	cr_assert_eq(cvc_modelset_new(NULL, cat, cvc_hw_catalog_lookup(cat, "H100"), &h), CVC_OK);
	for (int i = 0; i < n; i++) {
		int b = !strcmp(r[i].be, "hybridep"), net = r[i].nodes > 1, ph = phase_of(r[i].phase);
		/* HybridEP's RDMA at 7168 was measured at 8 SMs only, where the
		 * NIC already saturates */
		double want = ref[b][net][ph][r[i].sms] > 0 ? ref[b][net][ph][r[i].sms]
							    : ref[b][net][ph][8];
		cvc_model_ep_call c = {b ? CVC_EP_HYBRIDEP : CVC_EP_DEEPEP, ph, 0, 0, r[i].ranks, 8,
				       r[i].sms, 2048};
		cvc_model_price lo, hi;

		if (r[i].hidden != 2048)
			continue;
		if (net)
			c.net_bytes = 100000000;
		else
			c.nvl_bytes = 100000000;
		cvc_model_ep_price(h, &c, &lo);
		c.hidden = 7168;
		cvc_model_ep_price(h, &c, &hi);
		cr_assert_gt(want, 0, "%s %s %d SMs %s", r[i].be, r[i].kind, r[i].sms, r[i].phase);
		cr_log_info("%s %s %d SMs %s: %.3f of 7168's, cvc %.3f", r[i].be, r[i].kind, r[i].sms,
			    r[i].phase, r[i].gbps / want, hi.us / lo.us);
		cr_expect_float_eq(hi.us / lo.us, r[i].gbps / want, 1e-9, "%s %s %d SMs %s",
				   r[i].be, r[i].kind, r[i].sms, r[i].phase);
		cr_expect(strstr(lo.origin, "measured at 2048") && !strstr(hi.origin, "2048"),
			  "%s / %s", lo.origin, hi.origin);
		checked++;
	}
	cr_expect_eq(checked, 21);
	{
		cvc_model_ep_call c = {CVC_EP_HYBRIDEP, CVC_EP_COMBINE, 100000000, 0, 8, 8, 16, 0};
		cvc_model_price a, b;
		cvc_modelset *gb = NULL;

		cvc_model_ep_price(h, &c, &a);
		c.hidden = 16384;
		cvc_model_ep_price(h, &c, &b);
		cr_expect_eq(a.us, b.us);
		c.hidden = 4096;
		cvc_model_ep_price(h, &c, &b);
		cr_expect_gt(b.us, a.us);
		/* measured on H100's links; GB200's are another: carried */
		cr_expect_eq(b.carried, 0);
		cr_assert_eq(cvc_modelset_new(NULL, cat, cvc_hw_catalog_lookup(cat, "GB200"), &gb),
			     CVC_OK);
		cvc_model_ep_price(gb, &c, &b);
		cr_expect_eq(b.carried, 1);
		c.hidden = 7168;
		cvc_model_ep_price(gb, &c, &b);
		cr_expect_eq(b.carried, 0);
		cvc_modelset_free(gb);
	}
	cvc_modelset_free(h);
	cvc_hw_catalog_free(cat);
}

/*
 * Claim (a guard, held out): the Megatron-Core MoE report's Table 7
 * (arXiv 2603.07685v2 sec. 4.2.2: HybridEP's dispatch and combine in us at
 * hidden 7168, 4096 tokens a rank, 256 experts, EP 8 to 64, on GB200 in one
 * NVL72 domain and on H100 nodes of 8) against cvc's HybridEP prices, the
 * bytes counted as above (a token once per rank its top-8 reach, and once
 * per other node), the dispatch in bf16 and 16 SMs (Megatron-Core's
 * default; the report states neither).  cvc prices GB200 1.40-1.64x the
 * table's latencies, where it reproduces HybridEP's own GB200 document
 * within 1% (published_bandwidths_come_back).  Counted so, the table moves
 * 790 GB/s at GB200 EP 8 (88% of the link) and 495 GB/s in its H100 EP 8
 * combine, over H100's 450: it times fewer bytes (a rank's copies to
 * itself stay off NVLink), more SMs or the kernels alone, none of which
 * it states (docs/MODELS.md "Expert-parallel dispatchers").  H100 ranges
 * -16..+85%.  A guard, not a target.
 */
Test(epcomm, megatron_core_report_table7)
{
	static const struct { const char *gpu; int ep; double disp, comb; } t7[] = {
		{"GB200", 8, 391, 353},   {"GB200", 16, 578, 527}, {"GB200", 32, 612, 646},
		{"GB200", 64, 675, 744},  {"H100", 8, 661, 624},   {"H100", 16, 1485, 1688},
		{"H100", 32, 3064, 3088}, {"H100", 64, 4626, 4398},
	};
	cvc_hw_catalog *cat = NULL;

	cr_assert_eq(cvc_hw_catalog_new(&cat), CVC_OK);
	for (size_t i = 0; i < sizeof t7 / sizeof t7[0]; i++) {
		int gb = !strcmp(t7[i].gpu, "GB200");
		double T = 4096, h = 7168, k = 8, E = 256, R = t7[i].ep, g = gb ? R : 8, N = R / g;
		double rd, rc, lo = gb ? 1.35 : 0.65, hi = gb ? 1.7 : 1.9;
		cvc_modelset *ms = NULL;
		cvc_model_ep_call c = {0};
		cvc_model_price d, cb;

		cr_assert_eq(cvc_modelset_new(NULL, cat, cvc_hw_catalog_lookup(cat, t7[i].gpu), &ms),
			     CVC_OK);
		c.backend = CVC_EP_HYBRIDEP;
		c.hidden = (int)h;
		c.ranks = (int)R;
		c.domain = (int)g;
		c.sms = 16;
		c.nvl_bytes = (int64_t)(T * reached(E, k, R, R) * h * 2);
		c.net_bytes = N > 1 ? (int64_t)(T * reached(E, k, N, N) * (N - 1) / N * h * 2) : 0;
		c.phase = CVC_EP_DISPATCH_16;
		cvc_model_ep_price(ms, &c, &d);
		c.phase = CVC_EP_COMBINE;
		cvc_model_ep_price(ms, &c, &cb);
		rd = d.us / t7[i].disp, rc = cb.us / t7[i].comb;
		cr_log_info("%s EP%d: dispatch %.0f us, cvc %.0f (%+.1f%%); combine %.0f, cvc %.0f "
			    "(%+.1f%%)",
			    t7[i].gpu, t7[i].ep, t7[i].disp, d.us, 100 * (rd - 1), t7[i].comb, cb.us,
			    100 * (rc - 1));
		cr_expect(rd > lo && rd < hi && rc > lo && rc < hi, "%s EP%d: x%.2f, x%.2f",
			  t7[i].gpu, t7[i].ep, rd, rc);
		cvc_modelset_free(ms);
	}
	cvc_hw_catalog_free(cat);
}
