/*
 * colltopo.c - collectives on the topology: the large-message level fitted
 * from one measured log, and NCCL's algorithms priced over N nodes from it
 * (docs/MODELS.md "Collectives").
 *
 * A log measured at one span (one node, or two) is carried to another
 * span, NIC count and rate by what bounds each algorithm there:
 *   ring: every rank's ring traffic f(n) S crosses its node's NICs once,
 *         so the bus bandwidth is min(NVLink level, node NIC bandwidth);
 *   tree (all-reduce only; NCCL's double binary tree across nodes, a chain
 *         inside): a node sends S through its NICs at two nodes, 2 S at
 *         three and more (interior in one tree, leaf in the other), so the
 *         algorithm bandwidth is min(NVLink level, NICs / k(N)).
 * The efficiency the fitted log reached against its own bound carries over;
 * the fill is carried as bytes (chunks in flight), and the latency grows by
 * NCCL's per-step network and NVLink latencies (src/graph/tuning.cc hwLat,
 * Simple protocol, NCCL 2.2x: network ring 14 us per inter-node step, tree
 * 14 us per tree level; NVLink ring 3.4 us per step).
 */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "models/opmodel_int.h"

/* Rows at or above this size fit the large-message level (NCCL's Simple
 * protocol carries them on every system in the shared logs). */
#define LEVEL_MIN_BYTES (8.0 * 1024 * 1024)

#define LAT_NET_RING_US 14.0
#define LAT_NET_TREE_US 14.0
#define LAT_NVL_RING_US 3.4

/* t = a + c S on (s[i], t[i]), weighted on relative error; a >= 0. */
static int ab_fit(const double *s, const double *t, size_t n, double *a, double *c)
{
	double s11 = 0, s12 = 0, s22 = 0, b1 = 0, b2 = 0, det;

	for (size_t i = 0; i < n; i++) {
		double w = 1.0 / (t[i] * t[i]);

		s11 += w, s12 += s[i] * w, s22 += s[i] * s[i] * w;
		b1 += t[i] * w, b2 += s[i] * t[i] * w;
	}
	det = s11 * s22 - s12 * s12;
	if (n >= 2 && det > 0) {
		*a = (b1 * s22 - b2 * s12) / det;
		*c = (s11 * b2 - s12 * b1) / det;
	} else {
		*a = -1;
	}
	if (*a < 0) {
		*a = 0;
		*c = s22 > 0 ? b2 / s22 : 0;
	}
	return *c > 0 ? 0 : -1;
}

static double ab_mape(const double *s, const double *t, size_t lo, size_t hi, double a, double c)
{
	double sum = 0;

	for (size_t i = lo; i < hi; i++)
		sum += fabs(a + c * s[i] - t[i]) / t[i];
	return hi > lo ? 100.0 * sum / (double)(hi - lo) : NAN;
}

void opm_level_fit(const double *s, const double *t, size_t n, double b_node_gbps,
		   const char *algo, cvc_model_coll_level *lv)
{
	size_t lo = 0, m;
	double a, c;

	memset(lv, 0, sizeof *lv);
	lv->extrap_mape = NAN;
	lv->mape = NAN;
	/* s is sorted; the large rows, or the largest three of 1 MiB and up */
	while (lo < n && s[lo] < LEVEL_MIN_BYTES)
		lo++;
	if (n - lo < 3) {
		lo = n >= 3 ? n - 3 : 0;
		if (n < 3 || s[lo] < LEVEL_MIN_BYTES / 8)
			return;
	}
	m = n - lo;
	if (ab_fit(s + lo, t + lo, m, &a, &c))
		return;
	lv->valid = 1;
	lv->algbw_gbps = 1.0 / c / 1e3;
	lv->fill_bytes = a / c;
	lv->min_bytes = s[lo];
	lv->mape = ab_mape(s, t, lo, n, a, c);
	lv->b_node_gbps = b_node_gbps;
	snprintf(lv->algo, sizeof lv->algo, "%s", algo ? algo : "");
	if (m >= 4) {
		double ah, ch;

		if (!ab_fit(s + lo, t + lo, m / 2, &ah, &ch))
			lv->extrap_mape = ab_mape(s, t, lo + m / 2, n, ah, ch);
	}
}

double opm_level_us(const cvc_model_coll_level *lv, int64_t bytes)
{
	return ((double)bytes + lv->fill_bytes) / (lv->algbw_gbps * 1e3);
}

const char *opm_algo_name(int algo)
{
	static const char *const names[OPM_NALGO] = {"ring", "tree"};

	return algo >= 0 && algo < OPM_NALGO ? names[algo] : "auto";
}

static int same_word(const char *a, const char *b)
{
	while (*a && *b && tolower((unsigned char)*a) == tolower((unsigned char)*b))
		a++, b++;
	return !*a && !*b;
}

int opm_algo_parse(const char *s)
{
	if (!s || !*s)
		return OPM_ALGO_AUTO;
	for (int a = 0; a < OPM_NALGO; a++)
		if (same_word(s, opm_algo_name(a)))
			return a;
	/* NCCL's NVLS tree and its tree alike cross nodes as a tree */
	if (same_word(s, "nvlstree") || same_word(s, "nvls_tree"))
		return OPM_TREE;
	return OPM_ALGO_AUTO;
}

int opm_algo_allowed(cvc_model_coll c, int algo)
{
	return algo == OPM_RING || (algo == OPM_TREE && c == CVC_MODEL_ALLREDUCE);
}

/*
 * The two bounds of algo for c on sp (GB/s of algorithm bandwidth): the
 * NVLink domain's (*dom) and the node's NICs' (*net, infinite inside one
 * domain).  The algorithm's bound is the smaller.
 */
static void algo_terms(cvc_model_coll c, int algo, const struct opm_span *sp, double *dom,
		       double *net)
{
	double f = cvc_model_busbw_factor(c, sp->n);

	if (algo == OPM_TREE) {
		int k = sp->nodes <= 2 ? 1 : 2;

		*dom = sp->busbw_dom / cvc_model_busbw_factor(c, sp->gpn > 1 ? sp->gpn : 2);
		*net = sp->b_node / k;
		return;
	}
	if (c == CVC_MODEL_ALLTOALL) {
		/* each rank sends (n - gpn)/n of its buffer off the node */
		double off = (double)(sp->n - sp->gpn) / sp->n;

		*net = off > 0 ? sp->b_node / (sp->gpn * off) : INFINITY;
		*dom = sp->busbw_dom / f;
		return;
	}
	/* rooted and point-to-point tests have f = 1: bus = alg */
	*dom = sp->busbw_dom / (f > 0 ? f : 1);
	*net = sp->nodes > 1 ? sp->b_node / (f > 0 ? f : 1) : INFINITY;
}

double opm_algo_algbw(cvc_model_coll c, int algo, const struct opm_span *sp)
{
	double dom, net;

	algo_terms(c, algo, sp, &dom, &net);
	return dom < net ? dom : net;
}

double opm_algo_lat_us(cvc_model_coll c, int algo, const struct opm_span *sp)
{
	int reduce2 = c == CVC_MODEL_ALLREDUCE ? 2 : 1;

	if (algo == OPM_TREE)
		return 2.0 * log2((double)(sp->nodes > 1 ? sp->nodes : 1)) * LAT_NET_TREE_US;
	{
		double steps = reduce2 * (sp->n - 1.0), inter = reduce2 * (sp->nodes - 1.0);

		return inter * LAT_NET_RING_US + (steps - inter) * LAT_NVL_RING_US;
	}
}

int opm_algo_best_bw(cvc_model_coll c, const struct opm_span *sp)
{
	int best = OPM_RING;

	for (int a = 0; a < OPM_NALGO; a++)
		if (opm_algo_allowed(c, a) &&
		    opm_algo_algbw(c, a, sp) > opm_algo_algbw(c, best, sp) * 1.0001)
			best = a;
	return best;
}

double opm_topo_us(const cvc_model_coll_level *lv, cvc_model_coll fit_c, cvc_model_coll c,
		   const struct opm_span *fit, const struct opm_span *to, int64_t bytes, int force,
		   int *algo_used)
{
	int fa = opm_algo_parse(lv->algo);
	double eff, best = INFINITY;

	double fdom, fnet;
	int dom_bound;

	if (fa == OPM_ALGO_AUTO || !opm_algo_allowed(fit_c, fa))
		fa = opm_algo_best_bw(fit_c, fit);
	algo_terms(fit_c, fa, fit, &fdom, &fnet);
	dom_bound = fdom <= fnet;
	eff = lv->algbw_gbps / (dom_bound ? fdom : fnet);
	*algo_used = fa;
	for (int a = 0; a < OPM_NALGO; a++) {
		double bw, t, tdom, tnet;

		if (!opm_algo_allowed(c, a) || (force != OPM_ALGO_AUTO && a != force))
			continue;
		/* the efficiency measured is the binding bound's, and it
		 * carries to the other bound only up to that bound's line
		 * rate: a 2-node all-reduce whose tree the NVLink bound holds
		 * measures past that bound (eff 1.24 on 8 x 400G H100 nodes),
		 * and carried as one factor it made the NICs of 4 and 8 nodes
		 * 24% faster than they can send */
		algo_terms(c, a, to, &tdom, &tnet);
		bw = dom_bound ? fmin(eff * tdom, fmin(eff, 1) * tnet)
			       : fmin(fmin(eff, 1) * tdom, eff * tnet);
		bw *= 1e3; /* bytes per us */
		t = ((double)bytes + lv->fill_bytes) / bw +
		    fmax(0.0, opm_algo_lat_us(c, a, to) - opm_algo_lat_us(fit_c, a, fit));
		if (t < best) {
			best = t;
			*algo_used = a;
		}
	}
	return best;
}

double opm_span_lat_us(cvc_model_coll fit_c, cvc_model_coll c, const struct opm_span *fit,
		       const struct opm_span *to, int force)
{
	double best = INFINITY;

	for (int a = 0; a < OPM_NALGO; a++) {
		double d;

		if (!opm_algo_allowed(c, a) || (force != OPM_ALGO_AUTO && a != force))
			continue;
		d = opm_algo_lat_us(c, a, to) - opm_algo_lat_us(fit_c, a, fit);
		best = d < best ? d : best;
	}
	return best > 0 && isfinite(best) ? best : 0;
}
