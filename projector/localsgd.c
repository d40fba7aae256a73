/*
 * localsgd.c - what local SGD / DiLoCo costs in tokens (docs/MODELS.md
 * "Local SGD / DiLoCo token penalty").  Syncing every H steps saves
 * communication (priced in evaluate.c); it also changes the loss a token
 * budget buys.  This file owns the published laws that price that side:
 *
 *   * the loss penalty p(N, M, H) = L_M(N) / L_DP(N) - 1 from Charles et al.
 *     2025 (arXiv 2503.09799, "Scaling Laws for DiLoCo"), Table 7's power
 *     laws L(N) = A N^alpha fitted at H = 30 for M in {1, 2, 4, 8} replicas;
 *     past M = 8, Table 10's joint-law exponent beta on M; past H = 30, the
 *     slope in ln H of Douillard et al. 2023 (arXiv 2311.08105, section 3.3:
 *     perplexity +2.9% from H = 50 to H = 1000);
 *   * the token factor f = D'/D: the tokens a run with that penalty needs to
 *     reach the loss synchronous data parallel reaches with D, at fixed N,
 *     from Hoffmann et al. 2022's L(N, D) = E + A/N^a + B/D^b (arXiv
 *     2203.15556, eq. 10, Approach 3).
 *
 * H = 1 is synchronous data parallel: p = 0 and f = 1 exactly.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cvc/cvc_base.h"
#include "proj_internal.h"

/* Charles et al. 2025, Table 7: L(N) = A N^alpha, evaluation loss on C4 at
 * D = 20 N tokens, H = 30.  Row 0 data parallel, rows 1-4 DiLoCo M = 1, 2,
 * 4, 8. */
static const double law_a[5] = {18.129, 18.363, 18.768, 19.762, 21.051};
static const double law_alpha[5] = {-0.0953, -0.0961, -0.0969, -0.0992, -0.1018};
/* Charles et al. 2025, Table 10: the joint law A N^alpha M^beta's exponent
 * on M, used only to carry L_8 past M = 8 (outside the measured M). */
#define LAW_BETA_M 0.0116
/* Charles et al. 2025, section 5.1: every law above is at H = 30. */
#define LAW_H 30.0
/* Douillard et al. 2023, section 3.3 (150M model, 8 replicas): perplexity
 * +2.9% at H = 1000 over H = 50: ln(1.029) nats of loss per ln(1000/50). */
#define H_SLOPE (log(1.029) / log(1000.0 / 50.0))
/* Hoffmann et al. 2022, eq. 10 (Approach 3). */
#define CH_E 1.69
#define CH_A 406.4
#define CH_B 410.7
#define CH_ALPHA 0.34
#define CH_BETA 0.28
/* Charles et al. 2025, Table 11: leave-one-out residual |log L - log L~|
 * of the loss laws at N = 2.4B, average over M (independent and joint
 * fits both 0.012): the law's own stated error, applied to ln(1 + p). */
#define LAW_RESIDUAL 0.012
/* The law's domain: Table 4's 35M .. 2.4B measured, Table 5's 4B and 10B
 * validated; M in {1..8}; Douillard et al.'s H up to 2000; Charles et al.
 * section 5.2's overtraining up to 16x (D = 320 N). */
#define DOM_N_LO 35e6
#define DOM_N_HI 10e9
#define DOM_M_HI 8
#define DOM_H_HI 2000
#define DOM_D_PER_N 320

double proj_lsgd_loss_dp(double N)
{
	return law_a[0] * pow(N, law_alpha[0]);
}

double proj_lsgd_loss_m(double N, double M)
{
	double lg, w;
	int i;

	if (M <= 1)
		return law_a[1] * pow(N, law_alpha[1]);
	if (M >= 8) /* Table 10's beta past the measured M */
		return law_a[4] * pow(N, law_alpha[4]) * pow(M / 8, LAW_BETA_M);
	/* between measured M: linear in log M */
	lg = log2(M);
	i = (int)floor(lg);
	w = lg - i;
	return (1 - w) * law_a[1 + i] * pow(N, law_alpha[1 + i]) +
	       w * law_a[2 + i] * pow(N, law_alpha[2 + i]);
}

double proj_lsgd_penalty(double N, double M, double H)
{
	double ldp, p;

	if (!(H > 1))
		return 0; /* synchronous data parallel */
	ldp = proj_lsgd_loss_dp(N);
	p = proj_lsgd_loss_m(N, M) / ldp - 1;
	/* 1 < H <= 30 is priced at the H = 30 law: Charles et al.'s Fig. 9
	 * shows loss rising with H from H = 5 on, with no numbers below 30 */
	if (H > LAW_H)
		p += H_SLOPE * log(H / LAW_H) / ldp;
	return p;
}

double proj_lsgd_chinchilla(double N, double D)
{
	return CH_E + CH_A / pow(N, CH_ALPHA) + CH_B / pow(D, CH_BETA);
}

double proj_lsgd_token_factor(double N, double D, double p)
{
	double target, rest;

	if (p == 0)
		return 1;
	/* L(N, D') (1 + p) = L(N, D): what D' buys back the penalty */
	target = proj_lsgd_chinchilla(N, D) / (1 + p);
	rest = target - CH_E - CH_A / pow(N, CH_ALPHA);
	if (!(rest > 0))
		return INFINITY; /* more data cannot buy that much loss */
	return pow(CH_B / rest, 1 / CH_BETA) / D;
}

double proj_lsgd_replicas(const cvc_proj_scenario *sc)
{
	double C = sc->clusters >= 1 ? sc->clusters : 1;

	/* many clusters: data parallel inside each every step, the outer
	 * exchange between them; one cluster: every dp*cp rank a replica */
	return C > 1 ? C : sc->dp * sc->cp;
}

/* Appends "local sgd: why" to r's warnings (whole items only). */
static void lsgd_warn(cvc_proj_result *r, const char *fmt, double x)
{
	char item[160];

	snprintf(item, sizeof item, fmt, x);
	proj_warn_add(r, item);
}

/* The same with x written positionally to 3 significant figures
 * (fmt takes it as %s): 405000000000, not 4.05e+11. */
static void lsgd_warn_plain(cvc_proj_result *r, const char *fmt, double x)
{
	char item[160], xs[48];

	snprintf(item, sizeof item, fmt, cvc_fmt_plain(x, 3, xs, sizeof xs));
	proj_warn_add(r, item);
}

void proj_lsgd_apply(const cvc_proj_scenario *sc, const struct proj_params *P, int warn,
		     cvc_proj_result *r)
{
	double H = sc->local_sgd_h >= 1 ? sc->local_sgd_h : 1;
	double N = P->p_total, M = proj_lsgd_replicas(sc);
	double D = sc->train_tokens > 0 ? sc->train_tokens : 20 * N;
	double p, lp, f;

	r->loss_penalty_pct = 0;
	r->token_factor = r->token_factor_lo = r->token_factor_hi = 1;
	r->eff_tokens_per_s = r->tokens_per_s;
	r->eff_tokens_per_s_lo = r->tokens_per_s_lo;
	r->eff_tokens_per_s_hi = r->tokens_per_s_hi;
	r->days_to_loss = r->train_days;
	if (!(H > 1))
		return;
	p = proj_lsgd_penalty(N, M, H);
	lp = log1p(p);
	f = proj_lsgd_token_factor(N, D, p);
	r->loss_penalty_pct = 100 * p;
	r->token_factor = f;
	r->token_factor_lo = proj_lsgd_token_factor(N, D, expm1(lp - LAW_RESIDUAL));
	r->token_factor_hi = proj_lsgd_token_factor(N, D, expm1(lp + LAW_RESIDUAL));
	r->eff_tokens_per_s = r->tokens_per_s / f;
	r->eff_tokens_per_s_lo = r->tokens_per_s_lo / r->token_factor_hi;
	r->eff_tokens_per_s_hi = r->tokens_per_s_hi / r->token_factor_lo;
	r->days_to_loss = r->train_days * f;
	if (!warn)
		return;
	if (isinf(f))
		lsgd_warn(r, "local sgd: loss penalty %.3g%% exceeds what more tokens buy "
			  "(Chinchilla law): no time to the same loss", 100 * p);
	if (N < DOM_N_LO || N > DOM_N_HI)
		lsgd_warn_plain(r, "local sgd: %s parameters outside the law's 35M-10B", N);
	if (M > DOM_M_HI)
		lsgd_warn(r, "local sgd: %.0f replicas past the law's 8 (Table 10 beta extrapolated)",
			  M);
	if (H > DOM_H_HI)
		lsgd_warn(r, "local sgd: H %.0f past the measured 2000", H);
	if (D > DOM_D_PER_N * N)
		lsgd_warn_plain(r, "local sgd: %s tokens per parameter past the law's 320", D / N);
	if (sc->clusters <= 1 && sc->zero >= 1 && M > 1)
		lsgd_warn(r, "local sgd: ZeRO %.0f shards across replicas that sync every H steps "
			  "(priced as if it could)", sc->zero);
}
