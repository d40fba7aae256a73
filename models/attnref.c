/*
 * attnref.c - fused-attention efficiency measured, not assumed.  For each
 * GPU generation, kernel library (cuDNN, FlashAttention-2, FlashAttention-4),
 * dtype, pass (forward, backward) and mask (causal or not), the share of
 * the dense peak a fused attention kernel reaches at sequence length S:
 *
 *     eff(S) = emax * S / (S + s0)
 *
 * s0 is the length at which half of emax is reached: short sequences give
 * each CTA few key blocks and, causal, a large share of diagonal blocks.
 * The curves are fitted (attn_fit_file() below, the same code the unit test
 * runs) on the measured tables of ../shared/traces/attention-bench:
 * NVIDIA/cudnn-frontend's attention-training results (Llama-3.1 shapes
 * B=2, Hq=64, Hkv=8, d=128, S=2k-32k; Qwen3.5 d=256) on A100, H200 and
 * GB200, and its 2026-02 H200 / 2026-04 GB200 runs; ROCm's flash-attention
 * (CK) on MI300X at one sequence length (ROCm/flash-attention issue #142),
 * so that AMD GPUs are not priced by cuDNN's curves.  docs/MODELS.md
 * "Attention" has the table and the fit quality.  The benchmarks ran at
 * the boost clock, in bursts; the efficiencies are what a training step
 * sustains (taken against the peak times the generation's burst over
 * sustained matmul throughput, opm_burst_ratio_ref(): ceiling.c), since a
 * training step does not hold the boost clock at its power limit.
 */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cvc/cvc_csv.h"
#include "cvc/cvc_model.h"
#include "models/opmodel_int.h"

/* Reference GPUs the curves were measured on, one per generation and
 * vendor. */
static const struct {
	const char *gpu;      /* catalog name */
	double bf16, sms;     /* dense bf16 TFLOP/s, SMs or CUs (for the nearest) */
	const char *vendor;   /* another vendor's kernels are another library */
	double watts;         /* power limit of the card measured */
} ref_gpu[] = {
	{"A100-SXM-80GB", 312, 108, "NVIDIA", 300}, /* measured on an A100 80GB PCIe, peak 312 */
	{"H200-SXM", 989.4, 132, "NVIDIA", 700},
	{"GB200", 2500, 148, "NVIDIA", 1200},
	/* ROCm flash-attention (CK) at one sequence length: flat curves */
	{"MI300X", 1307.4, 304, "AMD", 750},
};
#define NREF (sizeof ref_gpu / sizeof ref_gpu[0])

/*
 * Fitted by attn_fit_file() from, per row: the file (in
 * ../shared/traces/attention-bench/), the pass and mask; efficiency relative
 * to the dense bf16 peak of the reference GPU (fp8 rows too, so an fp8 emax
 * near 1 means twice the bf16 rate).  models_attention.reference_curves_refit
 * recomputes every row from the files.
 */
static const struct opm_attn_curve curves[] = {
	/* ref, backend (0 cuDNN, 1 FA2, 2 FA4), fp8, bwd, causal, head dim,
	 * emax, s0, MAPE %, rows */
	{0, 0, 0, 0, 1, 128, 0.5211, 281.8, 2.08, 5},
	{0, 0, 0, 1, 1, 128, 0.4247, 676.1, 0.96, 5},
	{0, 0, 0, 0, 0, 128, 0.5431, 0.0, 2.87, 5},
	{0, 0, 0, 1, 0, 128, 0.4243, 154.9, 0.97, 5},
	{0, 2, 0, 0, 1, 128, 0.5263, 141.3, 2.42, 5},
	{0, 2, 0, 0, 0, 128, 0.6015, 0.0, 3.73, 5},
	{0, 1, 0, 0, 1, 128, 0.6091, 275.4, 3.82, 5},
	{0, 1, 0, 1, 1, 128, 0.5344, 575.4, 1.72, 5},
	{0, 1, 0, 0, 0, 128, 0.6125, 0.0, 3.57, 5},
	{0, 1, 0, 1, 0, 128, 0.5247, 87.1, 0.85, 5},
	{0, 0, 0, 0, 1, 256, 0.2683, 169.8, 3.85, 5},
	{0, 2, 0, 0, 1, 256, 0.1047, 0.0, 2.83, 5},
	{0, 1, 0, 0, 1, 256, 0.5750, 631.0, 3.35, 5},
	{0, 1, 0, 1, 1, 256, 0.4157, 588.8, 2.28, 5},
	{1, 1, 0, 0, 0, 128, 0.3238, 0.0, 0.52, 5},
	{1, 1, 0, 1, 0, 128, 0.2951, 562.3, 0.69, 5},
	{1, 1, 0, 0, 1, 128, 0.3105, 676.1, 1.08, 5},
	{1, 1, 0, 1, 1, 128, 0.2969, 1479.1, 0.70, 5},
	{1, 0, 0, 0, 1, 128, 0.6122, 660.7, 3.80, 10},
	{1, 0, 0, 1, 1, 128, 0.5279, 1023.3, 3.51, 10},
	{1, 0, 0, 0, 0, 128, 0.6062, 60.3, 3.60, 10},
	{1, 0, 0, 1, 0, 128, 0.5218, 234.4, 3.37, 10},
	{1, 0, 1, 0, 1, 128, 0.9458, 955.0, 2.13, 10},
	{1, 0, 1, 1, 1, 128, 0.3387, 371.5, 10.73, 10},
	{1, 0, 1, 0, 0, 128, 0.9314, 309.0, 3.33, 10},
	{1, 0, 1, 1, 0, 128, 0.6359, 575.4, 3.86, 10},
	{1, 2, 0, 0, 1, 128, 0.6252, 616.6, 4.07, 5},
	{1, 2, 0, 1, 1, 128, 0.5840, 851.1, 3.76, 5},
	{1, 2, 0, 0, 0, 128, 0.6366, 52.5, 4.35, 5},
	{1, 2, 0, 1, 0, 128, 0.5777, 234.4, 3.44, 5},
	{1, 0, 0, 0, 1, 256, 0.6688, 1023.3, 4.03, 5},
	{1, 0, 0, 1, 1, 256, 0.3487, 691.8, 5.63, 5},
	{1, 2, 0, 0, 1, 256, 0.7306, 588.8, 3.72, 5},
	{1, 2, 0, 1, 1, 256, 0.3582, 831.8, 1.76, 5},
	{2, 0, 0, 0, 1, 128, 0.5778, 1230.3, 3.27, 10},
	{2, 0, 0, 1, 1, 128, 0.4523, 1071.5, 5.21, 10},
	{2, 0, 0, 0, 0, 128, 0.5531, 338.8, 4.04, 20},
	{2, 0, 0, 1, 0, 128, 0.4502, 346.7, 4.82, 20},
	{2, 0, 1, 0, 1, 128, 0.7684, 1258.9, 1.15, 10},
	{2, 0, 1, 1, 1, 128, 0.6128, 2630.3, 2.67, 10},
	{2, 0, 1, 0, 0, 128, 0.7521, 426.6, 1.90, 10},
	{2, 0, 1, 1, 0, 128, 0.6438, 1230.3, 3.37, 10},
	{2, 0, 0, 0, 1, 256, 0.6302, 1349.0, 2.98, 5},
	{2, 2, 0, 0, 1, 128, 0.5810, 1318.3, 2.66, 5},
	{2, 2, 0, 1, 1, 128, 0.4641, 1698.2, 5.33, 5},
	{2, 2, 0, 0, 0, 128, 0.5406, 316.2, 3.78, 5},
	{2, 2, 0, 1, 0, 128, 0.4533, 549.5, 4.82, 5},
	/* MI300X, ROCm flash-attention 2 (CK), S = 16384 only */
	{3, 1, 0, 0, 0, 128, 0.2507, 0.0, 4.80, 4},
	{3, 1, 0, 1, 0, 128, 0.1501, 0.0, 1.99, 4},
};
#define NCURVES (sizeof curves / sizeof curves[0])

const struct opm_attn_curve *opm_attn_curves(size_t *n)
{
	*n = NCURVES;
	return curves;
}

/* Head dims below 128: FlashAttention-4 forward on GB200, non-causal,
 * S >= 4096 (flash-attention PR #2605): d=64 reaches 0.668 of d=128's
 * rate, eff(d) = eff(128) (d/128)^0.582.  models_attention.head_dim_factor
 * recomputes it. */
#define ATTN_SMALL_D_EXP 0.582

int opm_attn_ref_gpu(const cvc_hw_spec *spec)
{
	double p = spec->peak_tflops[CVC_HW_BF16] > 0 ? spec->peak_tflops[CVC_HW_BF16]
						     : spec->peak_tflops[CVC_HW_FP16];
	double sms = spec->sm_count > 0 ? spec->sm_count : 100, best = INFINITY;
	int b = 0;

	if (!(p > 0))
		return 0;
	for (size_t i = 0; i < NREF; i++) {
		double d = fabs(log(p / ref_gpu[i].bf16)) + 0.5 * fabs(log(sms / ref_gpu[i].sms));

		if (spec->vendor[0] && strcasecmp(spec->vendor, ref_gpu[i].vendor))
			d += 10; /* cuDNN curves do not price ROCm kernels */

		if (d < best)
			best = d, b = (int)i;
	}
	return b;
}

double opm_attn_ref_watts(int ref)
{
	return ref >= 0 && (size_t)ref < NREF ? ref_gpu[ref].watts : 0;
}

const char *opm_attn_ref_name(int ref)
{
	return ref >= 0 && (size_t)ref < NREF ? ref_gpu[ref].gpu : "";
}

/* What each framework's attention runs on each reference generation
 * (Transformer Engine's backend selection; PyTorch SDPA's priority list). */
static const int stack_default[NREF][2] = {
	{CVC_ATTN_FA2, CVC_ATTN_FA2},     /* Ampere */
	{CVC_ATTN_CUDNN, CVC_ATTN_FA2},   /* Hopper */
	{CVC_ATTN_CUDNN, CVC_ATTN_CUDNN}, /* Blackwell */
	{CVC_ATTN_FA2, CVC_ATTN_FA2},     /* CDNA3: ROCm flash-attention (CK) */
};

int opm_attn_default(int ref, int torch)
{
	if (ref < 0 || (size_t)ref >= NREF)
		ref = 0;
	return stack_default[ref][torch ? 1 : 0];
}

static const struct opm_attn_curve *find(int ref, int backend, int fp8, int bwd, int causal,
					 int head_dim)
{
	for (size_t i = 0; i < NCURVES; i++) {
		const struct opm_attn_curve *c = &curves[i];

		if (c->ref == ref && c->backend == backend && c->fp8 == fp8 && c->bwd == bwd &&
		    c->causal == causal && c->head_dim == head_dim)
			return c;
	}
	return NULL;
}

/* The curve for a key, falling back (and saying so through *exact): the
 * same generation's cuDNN, then bf16 for fp8, then the other mask. */
static const struct opm_attn_curve *pick(int ref, int backend, int fp8, int bwd, int causal,
					 int head_dim, int *exact)
{
	const struct opm_attn_curve *c;

	*exact = 1;
	if ((c = find(ref, backend, fp8, bwd, causal, head_dim)))
		return c;
	*exact = 0;
	if ((c = find(ref, CVC_ATTN_CUDNN, fp8, bwd, causal, head_dim)))
		return c;
	if (fp8 && (c = pick(ref, backend, 0, bwd, causal, head_dim, exact))) {
		*exact = 0;
		return c;
	}
	if ((c = find(ref, backend, fp8, bwd, !causal, head_dim)) ||
	    (c = find(ref, CVC_ATTN_CUDNN, fp8, bwd, !causal, head_dim)))
		return c;
	return NULL;
}

static double curve_at(const struct opm_attn_curve *c, double S)
{
	return c->emax * S / (S + c->s0);
}

double opm_attn_eff(int ref, int backend, int fp8, int bwd, int causal, double S, double D,
		    int *exact)
{
	const struct opm_attn_curve *c128, *c256;
	int e128 = 0, e256 = 0;
	double e;

	*exact = 0;
	c128 = pick(ref, backend, fp8, bwd, causal, 128, &e128);
	if (!c128)
		return NAN;
	e = curve_at(c128, S);
	*exact = e128;
	if (D > 128) {
		/* between the d=128 and d=256 curves on log2 d (the backward
		 * loses with d, the forward gains: both measured) */
		c256 = pick(ref, backend, fp8, bwd, causal, 256, &e256);
		if (c256 && c256->head_dim == 256) {
			double w = fmin(1, log2(D / 128));

			e = (1 - w) * e + w * curve_at(c256, S);
			*exact = e128 && e256;
		}
	} else if (D < 128 && D > 0) {
		e *= pow(D / 128, ATTN_SMALL_D_EXP);
	}
	return e;
}

/* ---- fitting (the curves above and models_attention's refit) ------------- */

/* eff = emax S/(S+s0), weighted on relative error: for a given s0 the best
 * emax is closed-form; s0 is searched on {0} and a log grid 10^1..10^5. */
static void fit_curve(const double *S, const double *e, int n, double *emax, double *s0,
		      double *mape)
{
	double best = INFINITY;
	int one_s = 1;

	*emax = *s0 = 0;
	for (int j = 1; j < n; j++)
		one_s &= S[j] == S[0];
	/* one sequence length cannot place s0: a flat curve (s0 = 0) */
	for (int i = 0; i < (one_s ? 1 : 400); i++) {
		double s = i == 0 ? 0 : pow(10, 1 + i * 0.01), num = 0, den = 0, err = 0, em;

		for (int j = 0; j < n; j++) {
			double w = S[j] / (S[j] + s);

			num += w / e[j];
			den += (w / e[j]) * (w / e[j]);
		}
		em = num / den;
		for (int j = 0; j < n; j++) {
			double r = (em * S[j] / (S[j] + s) - e[j]) / e[j];

			err += r * r;
		}
		if (err < best)
			best = err, *emax = em, *s0 = s;
	}
	*mape = 0;
	for (int j = 0; j < n; j++)
		*mape += fabs(*emax * S[j] / (S[j] + *s0) - e[j]) / e[j];
	*mape = n ? 100 * *mape / n : NAN;
}

static int col(const cvc_csv_rec *h, const char *name)
{
	for (size_t i = 0; i < h->n; i++)
		if (!strcmp(h->f[i], name))
			return (int)i;
	return -1;
}

static int backend_of(const char *s)
{
	if (!strcmp(s, "cudnn"))
		return CVC_ATTN_CUDNN;
	if (!strcmp(s, "flash_attention"))
		return CVC_ATTN_FA2;
	if (!strcmp(s, "flash_attention_4"))
		return CVC_ATTN_FA4;
	return -1; /* cudnn_oss and others: not a backend a framework picks */
}

#define FIT_MAX_PTS 64

struct group {
	struct opm_attn_curve key;
	double S[FIT_MAX_PTS], e[FIT_MAX_PTS];
	int n;
};

/*
 * Reads one measured value into its group; -1 with the message in err when
 * the table (path) holds more than max curves.
 */
static int add_point(struct group *g, int *ng, int max, const struct opm_attn_curve *key,
		     double S, double e, const char *path, char *err, size_t errlen)
{
	int i;

	for (i = 0; i < *ng; i++)
		if (g[i].key.backend == key->backend && g[i].key.fp8 == key->fp8 &&
		    g[i].key.bwd == key->bwd && g[i].key.causal == key->causal &&
		    g[i].key.head_dim == key->head_dim)
			break;
	if (i == *ng) {
		if (*ng >= max) {
			snprintf(err, errlen, "'%s': more than %d curves", path, max);
			return -1;
		}
		memset(&g[i], 0, sizeof g[i]);
		g[i].key = *key;
		(*ng)++;
	}
	if (g[i].n < FIT_MAX_PTS) {
		g[i].S[g[i].n] = S;
		g[i].e[g[i].n++] = e;
	}
	return 0;
}

/* Lower-case copy for matching column names that vary in case. */
static void lower_copy(const char *s, char *out, size_t len)
{
	size_t i;

	for (i = 0; s[i] && i + 1 < len; i++)
		out[i] = (char)tolower((unsigned char)s[i]);
	out[i] = 0;
}

/*
 * cudnn-frontend's 2024 benchmark_results.csv form ("Batch,Heads,Sequence
 * length,Head dim,Causal,Pytorch FWD (TFLOPs/s),..."): only its PyTorch SDPA
 * columns are read, the FlashAttention-2 backend SDPA ran then; its cuDNN
 * columns are an older cuDNN than the 2026 tables, which price cuDNN.
 */
static int sdpa_table(const char *path, const char *text, size_t len, size_t *pos, long *line,
		      int ref, double peak, struct group *g, int *ng, int max, char *err,
		      size_t errlen)
{
	cvc_csv_rec hdr = {0}, rec = {0};
	int c_s = -1, c_d = -1, c_c = -1, c_f = -1, c_b = -1, rc = -1;

	if (cvc_csv_record(path, text, len, pos, line, &hdr, 64, 256, err, errlen))
		goto out;
	for (size_t i = 0; i < hdr.n; i++) {
		char k[128];

		lower_copy(hdr.f[i], k, sizeof k);
		if (!strcmp(k, "sequence length"))
			c_s = (int)i;
		else if (!strcmp(k, "head dim"))
			c_d = (int)i;
		else if (!strcmp(k, "causal"))
			c_c = (int)i;
		else if (strstr(k, "pytorch") && !strchr(k, '+') && strstr(k, "fwd"))
			c_f = (int)i;
		else if (strstr(k, "pytorch") && !strchr(k, '+') && strstr(k, "bwd"))
			c_b = (int)i;
	}
	if (c_s < 0 || c_d < 0 || c_c < 0 || c_f < 0 || c_b < 0) {
		snprintf(err, errlen, "'%s': line %ld: expected a cudnn-frontend benchmark header",
			 path, *line - 1);
		goto out;
	}
	while (*pos < len && text[*pos] != '\n' && text[*pos] != '#' && text[*pos] != 'B') {
		struct opm_attn_curve key;
		double S;

		if (cvc_csv_record(path, text, len, pos, line, &rec, 64, 256, err, errlen))
			goto out;
		if (rec.n != hdr.n)
			break;
		S = strtod(rec.f[c_s], NULL);
		if (!(S > 0))
			continue;
		memset(&key, 0, sizeof key);
		key.ref = ref;
		key.backend = CVC_ATTN_FA2;
		key.causal = !strcmp(rec.f[c_c], "True");
		key.head_dim = atoi(rec.f[c_d]);
		for (int pass = 0; pass < 2; pass++) {
			double tf = strtod(rec.f[pass ? c_b : c_f], NULL);

			key.bwd = pass;
			if (tf > 0 && add_point(g, ng, max, &key, S, tf / peak, path, err, errlen))
				goto out;
		}
	}
	rc = 0;
out:
	cvc_csv_rec_release(&hdr);
	cvc_csv_rec_release(&rec);
	return rc;
}

/* The line at *pos into buf (NUL-terminated, cut at len - 1); moves past it. */
static void take_line(const char *text, size_t len, size_t *pos, long *line, char *buf,
		      size_t blen)
{
	size_t n = 0;

	while (*pos < len && text[*pos] != '\n') {
		if (n + 1 < blen)
			buf[n++] = text[*pos];
		(*pos)++;
	}
	buf[n] = 0;
	*pos += *pos < len;
	(*line)++;
}

/*
 * flash-attention's benchmarks/benchmark_flash_attention.py printout: a
 * "### causal=False, headdim=128, batch_size=1, seqlen=16384 ###" line, then
 * one "NAME fwd: X TFLOPs/s, bwd: Y TFLOPs/s, ..." line per implementation;
 * its "Flash2" rows are FlashAttention-2 (the ROCm build: CK).  The script
 * counts 4 B S^2 H d forward (halved causal), 2.5x that backward: the
 * convention here.  Other names (its PyTorch rows) are not read.
 */
static int fa_printout(const char *path, const char *text, size_t len, size_t *pos, long *line,
		       int ref, double peak, struct group *g, int *ng, int max, char *err,
		       size_t errlen)
{
	char buf[256], causal[8];
	int d, b, S;
	struct opm_attn_curve key;

	take_line(text, len, pos, line, buf, sizeof buf);
	if (sscanf(buf, "### causal=%7[^,], headdim=%d, batch_size=%d, seqlen=%d", causal, &d, &b,
		   &S) != 4 || S <= 0 || d <= 0) {
		snprintf(err, errlen, "'%s': line %ld: expected '### causal=..., headdim=N, "
			 "batch_size=N, seqlen=N ###'", path, *line - 1);
		return -1;
	}
	memset(&key, 0, sizeof key);
	key.ref = ref;
	key.backend = CVC_ATTN_FA2;
	key.causal = !strcmp(causal, "True");
	key.head_dim = d;
	while (*pos < len && text[*pos] != '#' && text[*pos] != '`') {
		double f, bw;

		take_line(text, len, pos, line, buf, sizeof buf);
		if (sscanf(buf, "Flash2 fwd: %lf TFLOPs/s, bwd: %lf TFLOPs/s", &f, &bw) != 2)
			continue;
		key.bwd = 0;
		if (f > 0 && add_point(g, ng, max, &key, S, f / peak, path, err, errlen))
			return -1;
		key.bwd = 1;
		if (bw > 0 && add_point(g, ng, max, &key, S, bw / peak, path, err, errlen))
			return -1;
	}
	return 0;
}

static int add_file(const char *path, double peak_tflops, int ref, struct group *g, int *ngp,
		    int max, char *err, size_t errlen)
{
	char *text = NULL;
	size_t len = 0, pos = 0;
	long line = 1;
	cvc_csv_rec hdr = {0}, rec = {0};
	int ng = *ngp, rc = -1;

	/* The tables are a few hundred kB; 16 MiB bounds what a wrong path costs. */
	if (cvc_file_read(path, (size_t)16 << 20, &text, &len, err, errlen) != CVC_OK)
		return -1;
	/* every "config_name,..." header starts a table; other lines are the
	 * #SOURCE notes and the runner's log */
	while (pos < len) {
		int c_be, c_dt, c_mask, c_sq, c_skv, c_d, c_pass, c_det, c_t, c_tf, c_tb, c_ok, c_sw;

		if (len - pos >= 11 && memcmp(text + pos, "### causal=", 11) == 0) {
			if (fa_printout(path, text, len, &pos, &line, ref, peak_tflops, g, &ng,
					max, err, errlen))
				goto out;
			continue;
		}
		if (len - pos >= 6 && memcmp(text + pos, "Batch,", 6) == 0) {
			if (sdpa_table(path, text, len, &pos, &line, ref, peak_tflops, g, &ng, max,
				       err, errlen))
				goto out;
			continue;
		}
		if (len - pos < 12 || memcmp(text + pos, "config_name,", 12) != 0) {
			while (pos < len && text[pos] != '\n')
				pos++;
			pos += pos < len;
			line++;
			continue;
		}
		if (cvc_csv_record(path, text, len, &pos, &line, &hdr, 64, 256, err, errlen))
			goto out;
		c_be = col(&hdr, "backend"), c_dt = col(&hdr, "data_type");
		c_mask = col(&hdr, "attn_mask"), c_sq = col(&hdr, "q_seqlen");
		c_skv = col(&hdr, "kv_seqlen"), c_d = col(&hdr, "head_dim_qk");
		c_pass = col(&hdr, "profile_pass"), c_det = col(&hdr, "deterministic_bwd");
		c_t = col(&hdr, "tflops"), c_tf = col(&hdr, "fwd_tflops");
		c_tb = col(&hdr, "bwd_tflops"), c_ok = col(&hdr, "success");
		c_sw = col(&hdr, "sliding_window_size");
		if (c_be < 0 || c_dt < 0 || c_mask < 0 || c_sq < 0 || c_skv < 0 || c_d < 0 ||
		    c_pass < 0 || c_ok < 0 || (c_t < 0 && (c_tf < 0 || c_tb < 0))) {
			snprintf(err, errlen, "'%s': line %ld: expected a cudnn-frontend results header",
				 path, line - 1);
			goto out;
		}
		while (pos < len && (size_t)(len - pos) > 0 && text[pos] != '\n' &&
		       !(len - pos >= 12 && memcmp(text + pos, "config_name,", 12) == 0)) {
			long first = line;
			struct opm_attn_curve key;
			double S, Skv;

			if (cvc_csv_record(path, text, len, &pos, &line, &rec, 64, 4096, err, errlen))
				goto out;
			if (rec.n != hdr.n)
				break; /* the table ended: free text follows */
			(void)first;
			if (strcmp(rec.f[c_ok], "True") || (c_det >= 0 && !strcmp(rec.f[c_det], "True")) ||
			    (c_sw >= 0 && rec.f[c_sw][0] && strcmp(rec.f[c_sw], "0")))
				continue;
			S = strtod(rec.f[c_sq], NULL);
			Skv = strtod(rec.f[c_skv], NULL);
			if (!(S > 0) || S != Skv)
				continue;
			memset(&key, 0, sizeof key);
			key.ref = ref;
			key.backend = backend_of(rec.f[c_be]);
			if (key.backend < 0)
				continue;
			if (!strcmp(rec.f[c_dt], "bfloat16"))
				key.fp8 = 0;
			else if (!strcmp(rec.f[c_dt], "fp8"))
				key.fp8 = 1;
			else
				continue; /* mxfp8 and others */
			if (!strcmp(rec.f[c_mask], "top_left"))
				key.causal = 1;
			else if (!strcmp(rec.f[c_mask], "no_mask"))
				key.causal = 0;
			else
				continue;
			key.head_dim = atoi(rec.f[c_d]);
			for (int pass = 0; pass < 2; pass++) {
				const char *pn = pass ? "bwd" : "fwd";
				const char *v = NULL;
				double tf;

				if (!strcmp(rec.f[c_pass], pn) && c_t >= 0)
					v = rec.f[c_t];
				else if (!strcmp(rec.f[c_pass], "both"))
					v = pass ? rec.f[c_tb] : rec.f[c_tf];
				if (!v || !*v)
					continue;
				tf = strtod(v, NULL);
				if (!(tf > 0))
					continue;
				key.bwd = pass;
				if (add_point(g, &ng, max, &key, S, tf / peak_tflops, path, err,
					      errlen))
					goto out;
			}
		}
	}
	*ngp = ng;
	rc = 0;
out:
	cvc_csv_rec_release(&hdr);
	cvc_csv_rec_release(&rec);
	free(text);
	return rc;
}

int opm_attn_fit_files(const char *const *paths, size_t npaths, double peak_tflops,
		       double clock, int ref, struct opm_attn_curve *out, int max, char *err,
		       size_t errlen)
{
	struct group *g = calloc((size_t)(max > 0 ? max : 1), sizeof *g);
	int ng = 0;

	if (!g) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	for (size_t i = 0; i < npaths; i++)
		/* efficiency per datasheet clock: against the peak at the
		 * benchmark's clock */
		if (add_file(paths[i], peak_tflops * clock, ref, g, &ng, max, err, errlen)) {
			free(g);
			return -1;
		}
	for (int i = 0; i < ng; i++) {
		out[i] = g[i].key;
		out[i].n = g[i].n;
		fit_curve(g[i].S, g[i].e, g[i].n, &out[i].emax, &out[i].s0, &out[i].mape);
	}
	free(g);
	return ng;
}

/*
 * The softmax's exponentials a fused-attention kernel leaves unhidden, in
 * seconds per exponential at the SFU rate (one exponential per score, each
 * pass): the same cuDNN kernels timed on a GB200 (5 TeraExp/s) and on a
 * GB300 (10.7, the same tensor-core peak), in one harness on one day
 * (NVIDIA/cudnn-frontend benchmark/attention_training, llama3.1 config:
 * ../shared/traces/attention-bench/gb200_cudnn-fa4-bf16-fp8-mxfp8_...,
 * tests/data/gb300-cudnn-attention-llama31.csv); per row (t_GB200 -
 * t_GB300) / (E/5e12 - E/10.7e12), the median over the rows of 8K-32K
 * tokens, both masks (models_attention.sfu_coefficients_from_gb200_and_gb300
 * recomputes them).  Forward about 0.6 of the exponentials' time shows,
 * backward (which recomputes the scores) about 1.1; fp8 more (its MMAs
 * take half the time to hide them under).
 */
double opm_attn_sfu_coef(int bwd, int fp8)
{
	static const double coef[2][2] = {{0.5921, 1.0659}, /* bf16 fwd, bwd */
					  {0.6742, 1.3522}}; /* fp8 */

	return coef[fp8 ? 1 : 0][bwd ? 1 : 0];
}
