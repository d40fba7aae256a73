/*
 * opprice.c - predictions of a built cvc_modelset (opmodel.c): GEMMs,
 * grouped GEMMs, fused attention, memory-bound kernels and collectives,
 * each with its origin and uncertainty.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cvc/cvc_model.h"
#include "models/modelset_int.h"

/* ---- defaults (docs/MODELS.md "Default efficiencies") --------------------- */

#define DEF_COLL_INTRA_ALPHA_US 10.0
#define DEF_COLL_INTER_ALPHA_US 20.0
#define DEF_COLL_INTRA_EFF 0.75  /* busbw / unidirectional link bandwidth */
#define DEF_COLL_INTER_EFF 0.80

/* ---- predictions ------------------------------------------------------------------ */

/* Whether a GEMM of f FLOPs lies past a fitted model's sizes and inside
 * the built-in reference's it keeps beside it. */
static int in_ref(const struct gemm_slot *g, double f)
{
	return g->ref.dom_max > 0 && f >= g->ref.dom_min && f <= g->ref.dom_max;
}

/* A fit prices only the GEMM sizes it measured; outside them the default
 * (the large-GEMM efficiency of the reference table) answers. */
static const double *gemm_params(const cvc_modelset *ms, int64_t m, int64_t n, int64_t k,
				 int64_t b, cvc_hw_dtype dt)
{
	const struct gemm_slot *g = &ms->gemm[dt];
	double f = 2.0 * (double)(b > 0 ? b : 1) * (double)m * (double)n * (double)k;

	if (g->dom_max > 0 && (f < g->dom_min || f > g->dom_max))
		return in_ref(g, f) ? g->ref.p : g->def;
	return g->p;
}

double cvc_model_gemm_us(const cvc_modelset *ms, int64_t m, int64_t n, int64_t k, int64_t b,
			 cvc_hw_dtype dt)
{
	if (!ms || (unsigned)dt >= CVC_HW_NDTYPE)
		return NAN;
	return opm_gemm_us(gemm_params(ms, m, n, k, b, dt), &ms->spec, m, n, k, b, dt);
}

double cvc_model_grouped_gemm_us(const cvc_modelset *ms, const int64_t *m_per_group, int groups,
				 int64_t n, int64_t k, cvc_hw_dtype dt)
{
	const double *p;
	double P, sms, T, tn, tiles = 0, fpad = 0, bytes = 0, waves, tc, tmem, bw;

	if (!ms || (unsigned)dt >= CVC_HW_NDTYPE || groups < 0 || (groups && !m_per_group))
		return NAN;
	{
		int64_t mt = 0;

		for (int g = 0; g < groups; g++)
			mt += m_per_group[g] > 0 ? m_per_group[g] : 0;
		p = gemm_params(ms, mt, n, k, 1, dt); /* the fit's sizes: all groups */
	}
	if (n <= 0 || k <= 0 || groups == 0)
		return p[GP_T0];
	P = opm_peak_flops_us(&ms->spec, dt);
	sms = ms->spec.sm_count > 0 ? ms->spec.sm_count : 1;
	T = p[GP_TILE] > 0 ? p[GP_TILE] : 128;
	tn = ceil((double)n / T);
	for (int g = 0; g < groups; g++) {
		double mg = m_per_group[g] > 0 ? (double)m_per_group[g] : 0;
		double tm = ceil(mg / T);

		tiles += tm * tn;
		fpad += 2.0 * tm * T * tn * T * (double)k;
		/* every expert's weights are read even when few tokens reach it */
		bytes += cvc_hw_dtype_size(dt) * (mg * (double)k + (double)k * (double)n + mg * (double)n);
	}
	/* all groups' tiles share the waves of one launch */
	waves = ceil(tiles / sms);
	tc = p[GP_T0] + p[GP_WAVE] * waves + p[GP_CWAVE] * waves * 2.0 * T * T * (double)k / (P / sms) +
	     p[GP_CFLOP] * fpad / P;
	bw = ms->spec.hbm_bw_gbps > 0 ? ms->spec.hbm_bw_gbps * 1e3 : 1e3;
	tmem = p[GP_T0] + bytes / (bw * (p[GP_MEMEFF] > 0 ? p[GP_MEMEFF] : OPM_DEF_MEM_EFF));
	return tc > tmem ? tc : tmem;
}

/*
 * A grouped GEMM over few tokens per group runs below a dense GEMM of the
 * same total rows: DeepGEMM's README (deepseek-ai/DeepGEMM, first release,
 * 2025-02, "Performance": H800, FP8 with 1x128 / 128x128 scales, NVCC
 * 12.8) times 4 groups of 256 rows at 932 and 815 TFLOPS where 1 group of
 * 1024 runs at 1233 and 925 (N x K = 4096 x 7168, 7168 x 2048), 2 of 512
 * at 1040 and 916; 8 groups of 4096 match a dense GEMM of 4096 rows (1288
 * against 1304, 1093 against 1025).  The slowdown over the dense GEMM,
 * geometric mean over the two shapes: 1.2254 at 256 rows, 1.0942 at 512,
 * 1 from 1024 (the reference itself), linear on log2 rows; under 256 the
 * line is extended to 64 rows (unmeasured, said by *extrap) and held.
 */
double cvc_model_grouped_slowdown(double m_per_group, int *extrap)
{
	static const double lm[] = {6, 8, 9, 10}, sd[] = {1.4878, 1.2254, 1.0942, 1.0};
	double l = m_per_group > 0 ? log2(m_per_group) : lm[0];

	if (extrap)
		*extrap = l < lm[1];
	if (l >= lm[3])
		return 1.0;
	if (l <= lm[0])
		return sd[0];
	for (int i = 1; i < 4; i++)
		if (l <= lm[i])
			return sd[i - 1] + (sd[i] - sd[i - 1]) * (l - lm[i - 1]) / (lm[i] - lm[i - 1]);
	return 1.0;
}

/* The attention's time; *exact (may be NULL) 0 when a stand-in curve
 * priced it (attnref.c pick: another library, dtype or mask). */
static double attn_us(const cvc_modelset *ms, const cvc_model_attn *a, int *exactp)
{
	double B, H, Hkv, Sq, Skv, D, flops, bytes, P, sms, tiles, util, eff, tc, tm, es;
	int fp8, exact = 1, be;

	if (!ms || !a || (unsigned)a->dtype >= CVC_HW_NDTYPE)
		return NAN;
	B = a->batch > 0 ? (double)a->batch : 1;
	H = a->heads > 0 ? (double)a->heads : 1;
	Hkv = a->kv_heads > 0 ? (double)a->kv_heads : H;
	Sq = a->seq_q > 0 ? (double)a->seq_q : 0;
	Skv = a->seq_kv > 0 ? (double)a->seq_kv : Sq;
	D = a->head_dim > 0 ? (double)a->head_dim : 0;
	if (Sq <= 0 || D <= 0)
		return DEF_MEMBOUND_FLOOR_US;
	/* QK^T and PV: 2 matmuls of 2 Sq Skv D FLOPs per head; the causal
	 * mask leaves half the (query, key) pairs, for a square block and for
	 * the load-balanced chunks context parallelism gives each rank */
	flops = 4.0 * B * H * Sq * Skv * D;
	if (a->causal)
		flops *= 0.5;
	es = cvc_hw_dtype_bytes(a->dtype);
	bytes = es * (2.0 * B * H * Sq * D + 2.0 * B * Hkv * Skv * D); /* Q, O, K, V */
	if (a->backward) {
		flops *= 2.5; /* dQ, dK, dV and the recomputed scores */
		bytes *= 2.5;
	}
	/* the measured curves are shares of the dense bf16 peak (fp8 ones
	 * too): price every dtype against it */
	fp8 = a->dtype == CVC_HW_FP8;
	P = opm_peak_flops_us(&ms->spec, CVC_HW_BF16);
	sms = ms->spec.sm_count > 0 ? ms->spec.sm_count : 1;
	/* one CTA per (batch, head, 128-row block of queries): the measured
	 * shapes fill every SM, a small batch x heads may not */
	tiles = B * H * ceil(Sq / 128.0);
	util = tiles / (ceil(tiles / sms) * sms);
	be = a->backend >= 0 ? a->backend
			     : opm_attn_default(ms->attn_ref, a->backend == CVC_ATTN_DEFAULT_TORCH);
	/* no FlashAttention-1 table exists: its successor's curves, slowed by
	 * the end-to-end ratio the FlashAttention-2 paper measured */
	if (be == CVC_ATTN_FA1)
		be = CVC_ATTN_FA2;
	eff = opm_attn_eff(ms->attn_ref, be, fp8, a->backward, a->causal, Skv, D, &exact);
	/* past the largest head dim measured the largest one's curve holds
	 * (opm_attn_eff): a stand-in of another kind, said apart */
	if (D > OPM_ATTN_MAX_D)
		exact = -1;
	if (exactp)
		*exactp = exact;
	if (!(eff > 0))
		eff = 0.5; /* no curve at all: cannot happen with the compiled-in set */
	if (a->backend == CVC_ATTN_FA1)
		eff /= OPM_FA1_SLOWDOWN;
	eff *= ms->attn_factor;
	eff *= util;
	tc = flops / (P * eff);
	/* a GPU whose special function units run the softmax's exponentials
	 * at another rate than the curves' card: the share of the kernel they
	 * leave unhidden moves with it (Blackwell Ultra: 10.7 against 5) */
	if (ms->attn_ref_sfu > 0 && ms->spec.sfu_texp > 0 && ms->spec.sfu_texp != ms->attn_ref_sfu) {
		double exps = B * H * Sq * Skv * (a->causal ? 0.5 : 1); /* one per score, each pass */

		tc -= opm_attn_sfu_coef(a->backward, fp8) * exps *
		      (1 / ms->attn_ref_sfu - 1 / ms->spec.sfu_texp) / 1e6 / util;
		tc = fmax(tc, flops / P); /* never past the tensor cores' peak */
	}
	tm = bytes / ((ms->spec.hbm_bw_gbps > 0 ? ms->spec.hbm_bw_gbps : 1) * 1e3 * OPM_DEF_MEM_EFF);
	return ms->gemm[a->dtype].p[GP_T0] + (tc > tm ? tc : tm);
}

double cvc_model_fa1_slowdown(void)
{
	return OPM_FA1_SLOWDOWN;
}

cvc_model_attn_backend cvc_model_attn_default(const cvc_modelset *ms, int torch)
{
	return (cvc_model_attn_backend)opm_attn_default(ms ? ms->attn_ref : 0, torch);
}

void cvc_model_gemm_price(const cvc_modelset *ms, int64_t m, int64_t n, int64_t k, int64_t b,
			  cvc_hw_dtype dt, cvc_model_price *out)
{
	const struct gemm_slot *g;
	double f = 2.0 * (double)(b > 0 ? b : 1) * (double)m * (double)n * (double)k;

	memset(out, 0, sizeof *out);
	out->us = cvc_model_gemm_us(ms, m, n, k, b, dt);
	out->origin = "no model set";
	if (!ms || (unsigned)dt >= CVC_HW_NDTYPE)
		return;
	g = &ms->gemm[dt];
	out->origin = g->origin;
	if (g->dom_max > 0 && f >= g->dom_min && f <= g->dom_max) {
		out->sigma = g->sigma;
		out->extrap = 1;
		out->carried = g->carried;
	} else if (in_ref(g, f)) { /* measured by the reference */
		out->sigma = g->ref.sigma;
		out->extrap = 1;
		out->carried = g->ref.carried;
	} else {
		/* the default efficiency answers outside the fit's sizes: the
		 * large-GEMM end it was taken from, or smaller ones */
		out->sigma = f >= GEMM_LARGE_FLOPS ? SIG_GEMM_DEFAULT_LARGE : SIG_GEMM_DEFAULT;
		out->extrap = g->dom_max > 0 && f > 0 ? fmax(f / g->dom_max, g->dom_min / f) : 0;
		/* measured on an H100 and carried here through the ceilings:
		 * the carry's error, as a carried fit's (gemm_sigma()) */
		if (ms->def_carried) {
			out->sigma = fmax(out->sigma, SIG_GEMM_CARRY);
			out->carried = 1;
		}
	}
	/* fp4 from a bf16 efficiency: the measured share's own scatter */
	out->sigma = hypot(out->sigma, g->share_sigma);
}

/* the normal distribution's 95th percentile: 90% of it between -Z90 and Z90 */
#define Z90 1.6449

void cvc_model_interval90(double x, double sigma, double *lo, double *hi)
{
	*lo = x * exp(-Z90 * sigma);
	*hi = x * exp(Z90 * sigma);
}

double cvc_model_format_carry_sigma(void)
{
	return SIG_GEMM_CARRY;
}

double cvc_model_mxfp8_factor(double *sigma)
{
	return opm_mxfp8_factor(sigma);
}

double cvc_model_attention_us(const cvc_modelset *ms, const cvc_model_attn *a)
{
	return attn_us(ms, a, NULL);
}

void cvc_model_attention_price(const cvc_modelset *ms, const cvc_model_attn *a,
			       cvc_model_price *out)
{
	int exact = 1;

	memset(out, 0, sizeof *out);
	out->us = attn_us(ms, a, &exact);
	out->origin = ms ? ms->attn_origin : "no model set";
	if (!ms)
		return;
	out->extrap = 1;
	/* curves measured on another generation carry over through the spec;
	 * a stand-in curve is carried from what was measured, and says so */
	out->carried = strcmp(opm_attn_ref_name(ms->attn_ref), opm_gpu_of(&ms->spec)) != 0 ||
		       exact != 1;
	if (exact == 0)
		out->origin = ms->attn_standin;
	else if (exact < 0)
		out->origin = ms->attn_pastd;
	out->sigma = out->carried ? sqrt(SIG_ATTN * SIG_ATTN + SIG_GEMM_CARRY * SIG_GEMM_CARRY)
				  : SIG_ATTN;
	if (a && a->backend == CVC_ATTN_FA1) {
		/* the ratio was measured on Ampere (the first reference
		 * generation); on another one it is carried as well */
		double s = ms->attn_ref == 0 ? SIG_FA1 : hypot(SIG_FA1, SIG_GEMM_CARRY);

		out->sigma = hypot(out->sigma, s);
	}
}

/*
 * A memory-bound fit prices the bytes its rows measured, and larger ones
 * where the gate measured how it carries up (fitted on the smaller half
 * of the rows, scored on the larger: 8 rows and up); elsewhere the
 * defaults do (a fit may only make projections better).  Its floor was
 * fitted on its smallest rows, so smaller operators are not its.  *past
 * (may be NULL): 0 inside or the defaults, else bytes over its largest.
 */
static int mem_in(const struct mem_slot *m, int64_t bytes, double *past)
{
	double b = (double)bytes;
	int fit = m->fitted && b >= m->dom_min && (b <= m->dom_max || m->carries_up);

	if (past)
		*past = fit && b > m->dom_max ? b / m->dom_max : 0;
	return fit;
}

/* floor + bytes over the GPU's HBM at efficiency p[MP_EFF] */
static double mem_us(const cvc_modelset *ms, const double *p, int64_t bytes)
{
	if (bytes <= 0)
		return p[MP_FLOOR];
	return p[MP_FLOOR] +
	       (double)bytes / ((ms->spec.hbm_bw_gbps > 0 ? ms->spec.hbm_bw_gbps : 1) * 1e3 * p[MP_EFF]);
}

void cvc_model_membound_price(const cvc_modelset *ms, int64_t bytes, cvc_model_mem cls,
			      cvc_model_price *out)
{
	const struct mem_slot *m;
	double past;

	memset(out, 0, sizeof *out);
	out->origin = "no model set";
	if (!ms || (unsigned)cls >= CVC_MODEL_NMEM) {
		out->us = NAN;
		return;
	}
	m = &ms->mem[cls];
	if (!mem_in(m, bytes, &past)) {
		out->us = mem_us(ms, m->def, bytes);
		out->origin = MEM_DEF_ORIGIN;
		out->sigma = SIG_MEM_DEFAULT;
		return;
	}
	out->us = mem_us(ms, m->p, bytes);
	out->origin = m->origin;
	out->sigma = m->sigma;
	out->extrap = past > 1 ? past : 1;
	out->carried = m->carried;
}

double cvc_model_membound_us(const cvc_modelset *ms, int64_t bytes, cvc_model_mem cls)
{
	if (!ms || (unsigned)cls >= CVC_MODEL_NMEM)
		return NAN;
	return mem_us(ms, mem_in(&ms->mem[cls], bytes, NULL) ? ms->mem[cls].p : ms->mem[cls].def,
		      bytes);
}

enum level { L_INTRA, L_INTER, L_HIER };

static enum level level_of(int n, int gpn)
{
	if (gpn <= 1)
		return L_INTER;
	return n <= gpn ? L_INTRA : L_HIER;
}

/* The fitted slot for (c, n, gpn): the same group size if fitted, else the
 * nearest group size on the same topology level. */
static const struct coll_slot *find_slot(const cvc_modelset *ms, cvc_model_coll c, int n,
					 int gpn)
{
	const struct coll_slot *best = NULL;
	enum level lv = level_of(n, gpn);
	int best_d = 1 << 30;

	for (int i = 0; i < ms->ncoll; i++) {
		const struct coll_slot *s = &ms->coll[i];
		int d;

		if (s->c != c || !s->regimes_ok ||
		    level_of(s->nranks, s->gpn > 0 ? s->gpn : gpn) != lv)
			continue;
		/* across nodes, a fit prices only the node count it measured:
		 * latency and congestion grow with the span, not the group */
		if (lv != L_INTRA && s->gpn > 0 &&
		    (s->nranks + s->gpn - 1) / s->gpn != (n + gpn - 1) / gpn)
			continue;
		d = abs(s->nranks - n) * 4 + (s->gpn != gpn);
		if (d < best_d)
			best_d = d, best = s;
	}
	return best;
}

static double coll_default(const cvc_hw_spec *sys, cvc_model_coll c, int64_t bytes, int n,
			   int gpn, int algo)
{
	double S = (double)bytes, intra, inter, f, eff = DEF_COLL_INTRA_EFF, fill = 0;
	double alpha = DEF_COLL_INTRA_ALPHA_US;

	/* over NVLink of a measured generation: its measured efficiency, the
	 * fill standing in for the latency (opformula.c nvlink_ref) */
	if (opm_coll_nvlink_ref(sys, c, &eff, &fill))
		alpha = 0;
	intra = (sys->intra_bw_gbps > 0 ? sys->intra_bw_gbps : 16) * 1e3 * eff *
		opm_intra_share(sys, gpn < n ? gpn : n);
	inter = (sys->inter_bw_gbps > 0 ? sys->inter_bw_gbps : 12.5) * 1e3 * DEF_COLL_INTER_EFF;
	f = cvc_model_busbw_factor(c, n);
	switch (level_of(n, gpn)) {
	case L_INTRA:
		return alpha + (S + fill) * f / intra;
	case L_INTER:
		return DEF_COLL_INTER_ALPHA_US + S * f / inter;
	default: {
		/* Hierarchical: NCCL pipelines the node-local and the network
		 * phases, so the slower one sets the bandwidth.  Over the
		 * network each GPU carries its 1/gpn share of the node's data
		 * (all NICs busy), except all-to-all and point to point.  An
		 * all-reduce's tree sends the node's share once through its
		 * NICs at two nodes and twice past them (an interior node
		 * takes its children's and sends its parent's), the tree bound
		 * of the fitted levels (colltopo.c): H100 IB 400G nodes measure
		 * 167 and 163 GB/s at 4 and 8 nodes, where f(nodes) said 1.5
		 * and 1.75 (docs/MODELS.md "Default efficiencies").  Forced
		 * onto NCCL's ring (algo) it moves f(n), as the fitted levels'
		 * ring bound does.  All-gather and reduce-scatter have only
		 * rings (NCCL builds its trees for all-reduce), so f(n) too:
		 * charged f(nodes), the 2-node all-gather logs ran 13-70%
		 * slower than priced (docs/MODELS.md "Default efficiencies").
		 * The other collectives span the nodes, f(nodes). */
		int nodes = (n + gpn - 1) / gpn;
		double f_in = cvc_model_busbw_factor(c, gpn), f_out;
		double t_in, t_out;

		if (c == CVC_MODEL_ALLTOALL)
			f_out = (double)(n - gpn) / n;
		else if (c == CVC_MODEL_SENDRECV || c == CVC_MODEL_BROADCAST || c == CVC_MODEL_REDUCE)
			f_out = 1.0 / gpn;
		else if (algo == OPM_RING || c == CVC_MODEL_ALLGATHER ||
			 c == CVC_MODEL_REDUCESCATTER)
			f_out = f / gpn;
		else if (c == CVC_MODEL_ALLREDUCE)
			f_out = (nodes <= 2 ? 1.0 : 2.0) / gpn;
		else
			f_out = cvc_model_busbw_factor(c, nodes) / gpn;
		t_in = (S + fill) * f_in / intra;
		t_out = S * f_out / inter;
		return DEF_COLL_INTRA_ALPHA_US + DEF_COLL_INTER_ALPHA_US + (t_in > t_out ? t_in : t_out);
	}
	}
}

/*
 * Latency of a default-priced group past the two nodes the defaults'
 * alpha covers: NCCL's latency model (colltopo.c: per inter-node ring step
 * and NVLink step, per tree level), the same growth a fitted level gets.
 */
static double default_hops_us(cvc_model_coll c, int n, int gpn, int algo)
{
	int nodes = (n + gpn - 1) / gpn;
	struct opm_span to = {n, gpn, nodes, 0, 0}, two = {2 * gpn, gpn, 2, 0, 0};

	if (nodes <= 2)
		return 0;
	if (c != CVC_MODEL_ALLGATHER && c != CVC_MODEL_REDUCESCATTER && c != CVC_MODEL_ALLREDUCE)
		return 0;
	/* NCCL's latency model past the two nodes the defaults' alpha covers,
	 * the cheaper algorithm or the forced one (the same growth the fitted
	 * levels get) */
	return opm_span_lat_us(c, c, &two, &to, algo);
}

/* The newest slot of c whose large-message level passed the gate and that
 * spans more than one NVLink domain (multi = 1) or one domain (multi = 0). */
static const struct coll_slot *level_slot(const cvc_modelset *ms, cvc_model_coll c, int multi)
{
	for (int i = 0; i < ms->ncoll; i++) {
		const struct coll_slot *s = &ms->coll[i];

		if (s->c == c && s->level_ok && s->gpn > 0 && (s->nranks > s->gpn) == multi)
			return s;
	}
	return NULL;
}

/* The NVLink level's large-message bus bandwidth (GB/s) with all of a
 * node's links: a fitted one-node level of c (else of all-reduce: the same
 * links), else the spec's link times the default efficiency.  A group of k
 * GPUs of a mesh node reaches opm_intra_share(sys, k) of it; a fit of a
 * smaller group measured its own share. */
static double dom_busbw(const cvc_modelset *ms, cvc_model_coll c, const cvc_hw_spec *sys,
			const struct coll_slot **from)
{
	const struct coll_slot *s = level_slot(ms, c, 0);

	if (!s)
		s = level_slot(ms, CVC_MODEL_ALLREDUCE, 0);
	*from = s;
	if (s)
		return s->lvl.algbw_gbps * cvc_model_busbw_factor(s->c, s->nranks) /
		       opm_intra_share(sys, s->nranks);
	return (sys->intra_bw_gbps > 0 ? sys->intra_bw_gbps : 16) * DEF_COLL_INTRA_EFF;
}

static double node_nics(const cvc_hw_spec *sys, int gpn)
{
	return (sys->inter_bw_gbps > 0 ? sys->inter_bw_gbps : 12.5) * gpn;
}

/*
 * A group over several NVLink domains when only one domain was measured
 * (a one-node, one-rack log): each algorithm's bound on the topology
 * (colltopo.c) with the NVLink phase at the fitted level's bus bandwidth
 * and the network phase at the defaults' efficiency of the NICs (0.80),
 * the fitted fill carried as bytes, NCCL's latency grown from one domain
 * to this span; the fastest (or forced) algorithm wins.  Its error is the
 * measured carry of the shared one-node logs to their 2-node logs
 * (docs/MODELS.md "Across domains from one domain").  Only for the rings
 * of all-gather and reduce-scatter: there it measured better than the
 * defaults (8.7% against 10.8% on the 4 all-gather logs); an all-reduce
 * carried so measured worse (19.4% against 16.8% on 9 logs: a one-node
 * all-reduce's NVLink SHARP does not cross nodes), and no other
 * collective was measured across nodes (a carry may only make prices
 * better).  0 otherwise, or when c has no one-domain level (nor
 * all-reduce one).
 */
static int across_domains(const cvc_modelset *ms, cvc_model_coll c, int64_t bytes, int n, int gpn,
			  const cvc_hw_spec *sys, int algo, cvc_model_price *out)
{
	const struct coll_slot *s;
	struct opm_span to, one;
	double busbw = dom_busbw(ms, c, sys, &s), best = INFINITY;
	int used = OPM_RING;

	if (!s || (c != CVC_MODEL_ALLGATHER && c != CVC_MODEL_REDUCESCATTER))
		return 0;
	to.n = n;
	to.gpn = gpn;
	to.nodes = (n + gpn - 1) / gpn;
	to.busbw_dom = busbw * opm_intra_share(sys, gpn);
	to.b_node = node_nics(sys, gpn) * DEF_COLL_INTER_EFF;
	one.n = one.gpn = s->nranks;
	one.nodes = 1;
	one.busbw_dom = busbw * opm_intra_share(sys, s->nranks);
	one.b_node = 0;
	for (int a = 0; a < OPM_NALGO; a++) {
		double bw, t;

		if (!opm_algo_allowed(c, a) || (algo != OPM_ALGO_AUTO && a != algo))
			continue;
		bw = opm_algo_algbw(c, a, &to) * 1e3; /* bytes per us */
		t = ((double)bytes + s->lvl.fill_bytes) / bw +
		    fmax(0.0, opm_algo_lat_us(c, a, &to) - opm_algo_lat_us(s->c, OPM_RING, &one));
		if (t < best)
			best = t, used = a;
	}
	if (!isfinite(best))
		return 0;
	out->us = best;
	out->origin = s->across_origin[used];
	{
		double lv = SIG_PER_MAPE * (isfinite(s->lvl.mape) ? s->lvl.mape : 0) / 100;

		out->sigma = hypot(lv, SIG_COLL_ACROSS);
	}
	out->extrap = to.nodes;
	out->carried = 1;
	return 1;
}

void cvc_model_collective_price(const cvc_modelset *ms, cvc_model_coll c, int64_t bytes,
				int group_size, int gpus_per_node, const cvc_hw_spec *sys, int algo,
				cvc_model_price *out)
{
	const struct coll_slot *s, *net, *dom;
	int nodes;

	memset(out, 0, sizeof *out);
	out->origin = ms ? ms->coll_def_origin : "no model set";
	out->sigma = SIG_COLL_DEFAULT;
	if (!ms || (unsigned)c >= CVC_MODEL_NCOLL) {
		out->us = NAN;
		return;
	}
	if (group_size <= 1 || bytes <= 0) {
		out->sigma = 0, out->extrap = 1;
		return;
	}
	if (!sys)
		sys = &ms->spec;
	if (gpus_per_node <= 0)
		gpus_per_node = cvc_hw_domain(sys) > 0 ? cvc_hw_domain(sys) : 8;
	if (gpus_per_node > group_size)
		gpus_per_node = group_size;
	nodes = (group_size + gpus_per_node - 1) / gpus_per_node;
	/* a multi-node level of this collective; an all-reduce level carried
	 * to the rings of all-gather and reduce-scatter measured no better
	 * than the defaults (11.0% against 10.8% on the 4 all-gather logs,
	 * docs/MODELS.md "Default efficiencies"), so none is borrowed
	 * (colltopo.ring_carry_against_the_defaults) */
	net = nodes > 1 ? level_slot(ms, c, 1) : NULL;
	s = find_slot(ms, c, group_size, gpus_per_node);
	/* a fit's regimes price the sizes it measured and larger ones (the
	 * bandwidth carries), not smaller ones: their latency was fitted on
	 * large messages (a one-rack log of 512 MiB and up has a 600 us
	 * intercept), as a GEMM fit prices only its own FLOPs */
	if (s && (double)bytes < s->dom_min)
		s = NULL;
	/* and larger ones only where the gate measured how the fit carries
	 * up: fewer than 8 rows cannot be split into a half to fit and a half
	 * to score, and an unmeasured carry-over may not price (a fit may only
	 * make projections better); past its rows the level or the defaults
	 * answer */
	if (s && (double)bytes > s->dom_max && !s->carries_up)
		s = NULL;
	/* a regime fit prices its own span, on its own cluster's NICs */
	if (s && algo == OPM_ALGO_AUTO &&
	    (nodes == 1 || !s->level_ok || !net ||
	     fabs(s->lvl.b_node_gbps - node_nics(sys, gpus_per_node)) <= 0.01 * s->lvl.b_node_gbps)) {
		/* on a mesh node a fit of another group size measured another
		 * share of the links: its bytes take that much longer or
		 * shorter to move, the latency stays */
		double r = nodes == 1 ? opm_intra_share(sys, s->nranks) / opm_intra_share(sys, group_size)
				      : 1;

		out->origin = s->origin;
		out->us = opm_coll_us(s->p, s->nparams, c, (int64_t)llround((double)bytes * r),
				      group_size);
		out->sigma = r != 1 ? hypot(s->sigma, SIG_COLL_CARRY) : s->sigma;
		out->carried = r != 1;
		/* the nearest fitted group size, or sizes past the fitted ones */
		out->extrap = fmax((double)bytes / s->dom_max, 1.0) *
			      fmax((double)group_size / s->nranks, (double)s->nranks / group_size);
		return;
	}
	if (net) {
		struct opm_span fit, to;
		double busbw = dom_busbw(ms, c, sys, &dom);
		int used;

		fit.n = net->nranks;
		fit.gpn = net->gpn;
		fit.nodes = (net->nranks + net->gpn - 1) / net->gpn;
		fit.busbw_dom = busbw * opm_intra_share(sys, net->gpn);
		fit.b_node = net->lvl.b_node_gbps > 0 ? net->lvl.b_node_gbps
						      : node_nics(sys, net->gpn);
		to.n = group_size;
		to.gpn = gpus_per_node;
		to.nodes = nodes;
		to.busbw_dom = busbw * opm_intra_share(sys, gpus_per_node);
		to.b_node = node_nics(sys, gpus_per_node);
		out->us = opm_topo_us(&net->lvl, net->c, c, &fit, &to, bytes, algo, &used);
		out->origin = dom ? net->topo_origin[used] : net->topo_def_origin[used];
		/* below the level's sizes, inside the fit's: the fit's own
		 * regimes measured them (latency-bound sizes the large-message
		 * line overprices), carried by the span's latency */
		if ((double)bytes < net->lvl.min_bytes && (double)bytes >= net->dom_min) {
			double ts = opm_coll_us(net->p, net->nparams, c, bytes, net->nranks) +
				    opm_span_lat_us(net->c, c, &fit, &to, algo);

			if (ts < out->us) {
				out->us = ts;
				out->origin = net->small_origin;
			}
		}
		{
			double lv = SIG_PER_MAPE * (isfinite(net->lvl.mape) ? net->lvl.mape : 0) / 100;
			double carry = nodes != fit.nodes || fabs(to.b_node - fit.b_node) > 0.01 * fit.b_node
					       ? SIG_COLL_CARRY : 0;

			out->sigma = hypot(lv, carry);
		}
		out->extrap = fmax((double)nodes / fit.nodes, 1.0);
		out->carried = nodes != fit.nodes;
		return;
	}
	if (nodes > 1 && across_domains(ms, c, bytes, group_size, gpus_per_node, sys, algo, out))
		return;
	out->us = coll_default(sys, c, bytes, group_size, gpus_per_node, algo) +
		  default_hops_us(c, group_size, gpus_per_node, algo);
}

double cvc_model_collective_algo_us(const cvc_modelset *ms, cvc_model_coll c, int64_t bytes,
				    int group_size, int gpus_per_node, const cvc_hw_spec *sys,
				    int algo, const char **origin)
{
	cvc_model_price pr;

	cvc_model_collective_price(ms, c, bytes, group_size, gpus_per_node, sys, algo, &pr);
	if (origin)
		*origin = pr.origin;
	return pr.us;
}

double cvc_model_collective_us(const cvc_modelset *ms, cvc_model_coll c, int64_t bytes,
			       int group_size, int gpus_per_node, const cvc_hw_spec *sys)
{
	return cvc_model_collective_algo_us(ms, c, bytes, group_size, gpus_per_node, sys,
					    OPM_ALGO_AUTO, NULL);
}

const char *cvc_model_collective_origin(const cvc_modelset *ms, cvc_model_coll c, int group_size,
					int gpus_per_node)
{
	const char *o;

	/* the algorithm NCCL picks depends on the size: named at 256 MiB, a
	 * gradient bucket's order of magnitude */
	cvc_model_collective_algo_us(ms, c, 256 << 20, group_size, gpus_per_node, NULL,
				     OPM_ALGO_AUTO, &o);
	return o;
}

const char *cvc_model_origin(const cvc_modelset *ms, cvc_model_kind kind, int sub, int group_size)
{
	if (!ms)
		return "no model set";
	switch (kind) {
	case CVC_MODEL_GEMM:
		return (unsigned)sub < CVC_HW_NDTYPE ? ms->gemm[sub].origin : ms->def_origin;
	case CVC_MODEL_COLLECTIVE:
		return (unsigned)sub < CVC_MODEL_NCOLL
			       ? cvc_model_collective_origin(ms, (cvc_model_coll)sub, group_size, 0)
			       : ms->coll_def_origin;
	case CVC_MODEL_ATTENTION:
		return ms->attn_origin;
	case CVC_MODEL_MEMBOUND:
		return (unsigned)sub < CVC_MODEL_NMEM
			       ? ms->mem[sub].origin
			       : MEM_DEF_ORIGIN;
	}
	return "unknown model kind";
}
