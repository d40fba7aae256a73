/*
 * epcomm.c - expert-parallel token exchange by the kernels MoE frameworks
 * run instead of NCCL's all-to-all: DeepEP's normal (high-throughput)
 * kernels and NVIDIA's HybridEP, priced from the bandwidths their authors
 * measured (docs/MODELS.md "Expert-parallel dispatchers").
 *
 * Both send a token once to every rank that holds one of its experts
 * (not once per expert), and across NVLink domains once per remote domain,
 * forwarded over NVLink inside it; the caller counts those bytes
 * (cvc_model_ep_call).  A call takes the slower of its NVLink phase and
 * its network phase: the two are pipelined inside the kernels.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cvc/cvc_model.h"
#include "models/modelset_int.h"

/*
 * DeepEP normal kernels, deepseek-ai/DeepEP README "Normal kernels with
 * NVLink and RDMA forwarding" (V1; kept in docs/legacy.md since V2): H800
 * (~160 GB/s NVLink), one CX7 400 Gb/s NIC per GPU (~50 GB/s), 4096
 * tokens, hidden 7168, top-4 groups, top-8 experts, FP8 dispatch, BF16
 * combine, 24 SMs (tests/test_internode.py num_sms).  Intranode EP8: 153
 * GB/s dispatch, 158 combine over NVLink.  Internode, "logical" RDMA
 * bandwidth (bytes = tokens x distinct nodes each reaches, its own node
 * included, x hidden; tests/test_internode.py num_rdma_token_sent): EP32
 * (4 nodes) 58 / 57, EP64 (8 nodes) 51 / 50.  On the wire a node sends
 * (N - 1) / N of that, so the NIC efficiency is logical (N - 1) / N / 50:
 * 0.870 / 0.855 at 4 nodes, 0.893 / 0.875 at 8; their means below.  The
 * link efficiency is the intranode figure over H800's 200 GB/s per
 * direction (the catalog's NVLink).  EP16 (2 nodes, 43 / 43) is left out:
 * NVLink bounds it, which test_epcomm checks.
 */
#define DEEPEP_NET_EFF_DISPATCH 0.8813
#define DEEPEP_NET_EFF_COMBINE 0.8656
#define DEEPEP_NVL_EFF_DISPATCH (153.0 / 200.0)
#define DEEPEP_NVL_EFF_COMBINE (158.0 / 200.0)
#define DEEPEP_NET_NODES_MAX 8 /* the largest span measured */

/* SMs the kernels hold by default: DeepEP 20 (DeepSeek-V3 Technical
 * Report sec. 3.2.2; Megatron-Core's moe_flex_dispatcher_num_sms for
 * DeepEP v1), HybridEP 16 (Megatron-Core's moe_hybridep_num_sms). */
#define DEEPEP_SMS 20
#define HYBRIDEP_SMS 16

/*
 * What DeepEP's intranode kernels reach per SM count, 8 ranks of a B200
 * (NVLink 900 GB/s per direction), through the Torch API: NVIDIA's
 * Hybrid-EP_Intra-node_Implementation.md (DeepEP hybrid-ep branch, the
 * copy at shifangx/DeepEP @1242eb4f), B200 table, GB/s.  Up to ~32 SMs the
 * kernels are bound by their SMs, not the link: these absolute rates carry
 * to another GPU, whose link bound min()s them.
 */
static const double deepep_sm_n[] = {16, 24, 28, 32, 36, 40, 44, 48};
static const double deepep_sm_bw[3][8] = {
	{246, 349, 397, 443, 482, 519, 544, 554}, /* dispatch, fp8 */
	{348, 494, 560, 619, 635, 629, 640, 646}, /* dispatch, bf16 */
	{302, 420, 477, 524, 549, 570, 577, 586}, /* combine */
};

/* The same document's GB200 DeepEP table at 24 SMs, over its 8-rank row:
 * how the intranode kernels slow with more ranks in one NVLink domain
 * (16 and 24 ranks; the 24-rank combine falls to 0.38). */
static const double deepep_rank_n[] = {8, 16, 24};
static const double deepep_rank_f[3][3] = {
	{1.0, 338.87 / 350.97, 351.05 / 350.97},
	{1.0, 442.47 / 512.72, 450.22 / 512.72},
	{1.0, 378.32 / 425.95, 163.62 / 425.95},
};

/*
 * HybridEP in one NVLink domain: the same document's GB200 table (4096
 * tokens, hidden 7168, top-8 of 8 experts per rank, uniform routing),
 * Torch API, GB/s at 16 and 32 SMs for 8 to 36 ranks, over GB200's 900
 * GB/s: the share of the link it reaches.
 */
static const double hyb_rank_n[] = {8, 16, 24, 32, 36};
static const double hyb_gbs[2][3][5] = {
	{/* 16 SMs */
	 {421.67, 397.33, 281.73, 236.33, 215.36},
	 {550.10, 472.84, 441.89, 485.50, 469.96},
	 {538.44, 474.48, 444.40, 423.19, 418.27}},
	{/* 32 SMs */
	 {455.35, 444.67, 403.20, 392.70, 361.13},
	 {545.71, 523.48, 507.32, 484.22, 479.02},
	 {568.94, 521.55, 483.76, 464.54, 447.89}},
};
#define HYB_LINK_GBS 900.0

/* y over x (ascending, n points) at v, linear, clamped to the ends; *out
 * (may be NULL) set when v lies outside. */
static double interp(const double *x, const double *y, int n, double v, int *out)
{
	if (v <= x[0] || v >= x[n - 1]) {
		if (out && (v < x[0] || v > x[n - 1]))
			*out = 1;
		return v <= x[0] ? y[0] : y[n - 1];
	}
	for (int i = 1; i < n; i++)
		if (v <= x[i])
			return y[i - 1] + (y[i] - y[i - 1]) * (v - x[i - 1]) / (x[i] - x[i - 1]);
	return y[n - 1];
}

/*
 * Smaller tokens: the tables above are measured at hidden 7168.  NVIDIA-
 * NeMo/Automodel docs/deepep_vs_hybridep_benchmark.md (@18007663, H100 SXM,
 * CX7 400 Gb/s, 4096 tokens per rank, top-8; tests/data/ep-h100-hidden.csv)
 * times both libraries' kernels at hidden 7168 (8 experts per rank) and
 * 2048 (16 per rank), at 8 and 24 SMs: at 2048 they reach these shares of
 * their 7168 bandwidth ("per-token fixed costs dominate"), NVLink inside
 * EP8 and RDMA across two nodes (DeepEP's RDMA at 24 SMs only; HybridEP's
 * at 7168 at 8 SMs only, where the NIC saturates).  Read as a fixed cost
 * per token, bandwidth ~ b / (b + b0) for b bytes a token: b0 from the
 * share, then any hidden size priced on that curve against 7168's.
 */
#define SHAPE_REF_HIDDEN 7168.0
#define SHAPE_LOW_HIDDEN 2048.0
#define SHAPE_NVL_GBPS 450.0 /* H100 SXM's NVLink, a direction */
#define SHAPE_NIC_GBPS 50.0  /* one CX7 400 Gb/s NIC */
static const double shape_sms[2] = {8, 24};
/* [DeepEP, HybridEP][NVLink, RDMA][phase][8 SMs, 24 SMs] */
static const double shape_share[2][2][3][2] = {
	{{{80.0 / 148, 210.0 / 323}, {139.0 / 168, 302.0 / 335}, {134.0 / 151, 287.0 / 326}},
	 {{36.2 / 79.5, 36.2 / 79.5}, {58.9 / 84.9, 58.9 / 84.9}, {59.1 / 68.2, 59.1 / 68.2}}},
	{{{205.0 / 352, 272.0 / 358}, {304.0 / 360, 325.0 / 367}, {188.0 / 344, 304.0 / 364}},
	 {{42.0 / 81.6, 61.4 / 81.6}, {65.3 / 85.7, 72.1 / 85.7}, {33.5 / 76.5, 49.3 / 76.5}}},
};
/* HybridEP's RDMA against DeepEP's at hidden 7168, the same document
 * (EP16, 2 nodes; DeepEP 24 SMs, HybridEP 8): where cvc priced HybridEP's
 * network phase at DeepEP's efficiency, none being published before */
static const double hyb_net_over_deepep[3] = {81.6 / 79.5, 85.7 / 84.9, 76.5 / 68.2};

/* The bandwidth of a call of hidden h over that of the tables' 7168, on
 * link (0 NVLink, 1 RDMA), at most 1; *out set outside 2048..7168. */
static double shape_factor(int backend, int link, int ph, double sms, double h, int *out)
{
	const double *r = shape_share[backend == CVC_EP_HYBRIDEP][link][ph];
	double share = interp(shape_sms, r, 2, sms, NULL);
	double w = ph == CVC_EP_DISPATCH_FP8 ? 1 : 2; /* bytes an element */
	/* share = (L / (L + b0)) / (R / (R + b0)), L and R the two token sizes */
	double L = SHAPE_LOW_HIDDEN * w, R = SHAPE_REF_HIDDEN * w;
	double b0 = L * R * (1 - share) / (share * R - L), b = h * w;

	if (!(h > 0) || h >= SHAPE_REF_HIDDEN)
		return 1;
	if (out && h < SHAPE_LOW_HIDDEN)
		*out = 1;
	return (b / (b + b0)) / (R / (R + b0));
}

/*
 * Relative standard error of these prices: the held-out checks of
 * test_epcomm (DeepEP EP16 over 2 nodes against its README, +8.7 / +12.3%;
 * HybridEP's B200 8-rank row against the GB200-derived shares, +2.9 /
 * +2.6 / +1.4%; DeepEP's GB200 8-rank row at 24 SMs against the B200
 * per-SM rates, -0.6 / -3.7 / -1.4%), mean |error| 4.2%.
 */
#define SIG_EP (SIG_PER_MAPE * 0.042)

int cvc_model_ep_default_sms(int backend)
{
	return backend == CVC_EP_HYBRIDEP ? HYBRIDEP_SMS : backend == CVC_EP_DEEPEP ? DEEPEP_SMS : 0;
}

/* Bytes per us one rank moves over NVLink inside its domain. */
static double nvl_rate(const cvc_hw_spec *s, const cvc_model_ep_call *c, double sms, int *out)
{
	double link = s->intra_bw_gbps > 0 ? s->intra_bw_gbps * 1e3 : 1e3;
	double g = c->domain > 1 ? c->domain : 1;
	int ph = c->phase >= 0 && c->phase < 3 ? c->phase : CVC_EP_COMBINE;

	if (c->backend == CVC_EP_HYBRIDEP) {
		double a = interp(hyb_rank_n, hyb_gbs[0][ph], 5, g, out);
		double b = interp(hyb_rank_n, hyb_gbs[1][ph], 5, g, out);
		double f = sms <= 16 ? 0 : sms >= 32 ? 1 : (sms - 16) / 16;

		if (out && (sms < 16 || sms > 32))
			*out = 1;
		return link * (a + (b - a) * f) / HYB_LINK_GBS *
		       shape_factor(c->backend, 0, ph, sms, c->hidden, out);
	}
	{
		/* the dispatch figure is fp8's; a 16-bit dispatch moves what a
		 * combine moves */
		double eff = ph == CVC_EP_DISPATCH_FP8 ? DEEPEP_NVL_EFF_DISPATCH : DEEPEP_NVL_EFF_COMBINE;
		double bound = interp(deepep_sm_n, deepep_sm_bw[ph], 8, sms, out) * 1e3;

		if (g > 8)
			bound *= interp(deepep_rank_n, deepep_rank_f[ph], 3, g, out);
		return fmin(eff * link, bound) * shape_factor(c->backend, 0, ph, sms, c->hidden, out);
	}
}

/* Where a price comes from: [DeepEP, HybridEP][one domain, across
 * domains][hidden 7168 or unknown, smaller]. */
#define SMALLER_TOKENS "; a token under hidden 7168 at the share H100 measured at 2048 " \
		       "(NeMo Automodel's DeepEP vs HybridEP benchmark)"
static const char *const origins[2][2][2] = {
	{{"DeepEP normal kernels: NVLink efficiency of its README (H800), per-SM rates measured "
	  "on B200",
	  "DeepEP normal kernels: NVLink efficiency of its README (H800), per-SM rates measured "
	  "on B200" SMALLER_TOKENS},
	 {"DeepEP normal kernels: NVLink and RDMA efficiency of its README (H800, CX7), per-SM "
	  "rates measured on B200",
	  "DeepEP normal kernels: NVLink and RDMA efficiency of its README (H800, CX7), per-SM "
	  "rates measured on B200" SMALLER_TOKENS}},
	{{"HybridEP's measured NVLink shares (GB200, Hybrid-EP_Intra-node_Implementation.md)",
	  "HybridEP's measured NVLink shares (GB200, Hybrid-EP_Intra-node_Implementation.md)"
	  SMALLER_TOKENS},
	 {"HybridEP's measured NVLink shares (GB200, Hybrid-EP_Intra-node_Implementation.md), "
	  "its RDMA against DeepEP's (H100, NeMo Automodel's DeepEP vs HybridEP benchmark)",
	  "HybridEP's measured NVLink shares (GB200, Hybrid-EP_Intra-node_Implementation.md), "
	  "its RDMA against DeepEP's (H100, NeMo Automodel's DeepEP vs HybridEP benchmark)"
	  SMALLER_TOKENS}},
};

void cvc_model_ep_price(const cvc_modelset *ms, const cvc_model_ep_call *c, cvc_model_price *out)
{
	const cvc_hw_spec *s;
	double sms, t_nvl = 0, t_net = 0, nodes;
	int outside = 0, ph;

	memset(out, 0, sizeof *out);
	out->origin = "";
	if (!ms || !c || c->ranks <= 1 || (c->backend != CVC_EP_DEEPEP && c->backend != CVC_EP_HYBRIDEP)) {
		out->us = 0;
		out->extrap = 1;
		return;
	}
	s = cvc_modelset_spec(ms);
	ph = c->phase >= 0 && c->phase < 3 ? c->phase : CVC_EP_COMBINE;
	sms = c->sms > 0 ? c->sms : cvc_model_ep_default_sms(c->backend);
	nodes = ceil((double)c->ranks / (c->domain > 0 ? c->domain : 1));
	if (c->nvl_bytes > 0)
		t_nvl = (double)c->nvl_bytes / nvl_rate(s, c, sms, &outside);
	if (nodes > 1 && c->net_bytes > 0) {
		/* HybridEP's network phase: DeepEP's efficiency times what
		 * HybridEP measured against it on the same nodes */
		double eff = ph == CVC_EP_DISPATCH_FP8 ? DEEPEP_NET_EFF_DISPATCH : DEEPEP_NET_EFF_COMBINE;
		double nic = s->inter_bw_gbps > 0 ? s->inter_bw_gbps * 1e3 : 1e3;

		if (c->backend == CVC_EP_HYBRIDEP)
			eff = fmin(1, eff * hyb_net_over_deepep[ph]);
		eff *= shape_factor(c->backend, 1, ph, sms, c->hidden, &outside);

		t_net = (double)c->net_bytes / (eff * nic);
		if (nodes > DEEPEP_NET_NODES_MAX)
			outside = 1;
	}
	/* the measured bandwidths are the Torch API's at 4096 tokens: they
	 * hold each call's launch and its notify; no floor of its own is
	 * published for the normal kernels, so none is added */
	out->us = fmax(t_nvl, t_net);
	out->sigma = SIG_EP;
	out->extrap = outside ? 2 : 1;
	/* the shares at smaller tokens were measured on H100's links (NVLink
	 * 450 GB/s a direction, a 400 Gb/s NIC): on other links they are
	 * carried, and the price says so */
	out->carried = c->hidden > 0 && c->hidden < SHAPE_REF_HIDDEN &&
		       (t_nvl >= t_net ? s->intra_bw_gbps != SHAPE_NVL_GBPS
				       : s->inter_bw_gbps != SHAPE_NIC_GBPS);
	out->origin = origins[c->backend == CVC_EP_HYBRIDEP][nodes > 1]
			     [c->hidden > 0 && c->hidden < SHAPE_REF_HIDDEN];
}
