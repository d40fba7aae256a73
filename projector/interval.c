/*
 * interval.c - how sure a projected step is (docs/MODELS.md "Uncertainty").
 *
 * Every priced operator carries a relative standard error on log time
 * (cvc_model_price: its fit's residuals, the measured error of each
 * carry-over it went through, or the measured error of the defaults).
 * Errors of one component (all GEMMs, all attention, all memory-bound ops,
 * the collectives of one communication type) are taken as fully correlated,
 * since one model prices them all; components are independent of each
 * other.  The step is a sum of components on the critical path, so
 *
 *     var(step) = sum over components (time on the critical path x sigma)^2
 *
 * (a linearised sum, not sampling: cheap enough for millions of
 * scenarios), and the 90% interval is step x exp(-+1.645 sigma_step).
 * Metrics that follow the step (throughput, MFU, days, cost) follow its
 * interval; compute and communication get their own components' intervals.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cvc/cvc_base.h"
#include "cvc/cvc_model.h"
#include "proj_internal.h"

/* sigma of component c over the layers (weight lw) and the step's own ops */
static double comp_sigma(const struct proj_unc *lay, double lw, const struct proj_unc *st, int c)
{
	double t = lw * lay->t[c] + st->t[c];

	return t > 0 ? (lw * lay->ts[c] + st->ts[c]) / t : 0;
}

static void span(double x, double rel_sigma, double *lo, double *hi)
{
	cvc_model_interval90(x, rel_sigma, lo, hi);
}

/* item appended to buf after "; " (none first), whole or not at all: a
 * cut one would read as another warning. */
static void append(char *buf, size_t len, const char *item)
{
	size_t used = strlen(buf), n = strlen(item);

	if (used + (used ? 2 : 0) + n >= len)
		return;
	if (used) {
		memcpy(buf + used, "; ", 2);
		used += 2;
	}
	memcpy(buf + used, item, n + 1);
}

/* "gemm: defaults, no measurement (62%); allreduce comm: ..." parts
 * appended to buf: what, ": ", before, pct rounded to a whole number,
 * after.  Written for every scenario with intervals: no printf. */
static void warn(char *buf, size_t len, const char *what, const char *before, double pct,
		 const char *after)
{
	char item[128], num[48];
	const char *part[] = {what, ": ", before, cvc_fmt_whole(pct, num, sizeof num), after};
	size_t n = 0;

	for (size_t i = 0; i < sizeof part / sizeof part[0]; i++) {
		size_t k = strlen(part[i]);

		if (n + k >= sizeof item)
			return;
		memcpy(item + n, part[i], k);
		n += k;
	}
	item[n] = '\0';
	append(buf, len, item);
}

/*
 * Relative standard error of a share part / step_s, where part is the sum
 * of part_s[j] over the communication types (all of it, or its exposed
 * part): the same linearised sum as the step's, taken on log(part) -
 * log(step), so an error that lengthens both (a slower collective that is
 * exposed) moves the share less than either end.  Each component's term
 * is its weight in the part minus its weight in the step: S[c] seconds of
 * compute component c on the critical path, gapv the kernel gaps' sd in
 * seconds, exposed_type_s the types' seconds on the critical path.
 */
static double share_sigma(const double *S, const double *sg, double gapv,
			  const cvc_proj_result *r, const double *part_s, double part)
{
	double var = 0, g;

	if (!(part > 0) || !(r->step_s > 0))
		return 0;
	for (int c = 0; c < PU_COLL0; c++) {
		g = S[c] * sg[c] / r->step_s;
		var += g * g;
	}
	g = gapv / r->step_s;
	var += g * g;
	for (int j = 0; j < CVC_PROJ_COMM_N; j++) {
		double sj = sg[PU_COLL0 + j];

		g = part_s[j] * sj / part - r->exposed_type_s[j] * sj / r->step_s;
		var += g * g;
	}
	return sqrt(var);
}

/* A share's 90% interval: never past the whole step. */
static void share_span(double share, double rel_sigma, double cap, double *lo, double *hi)
{
	span(share, rel_sigma, lo, hi);
	*hi = fmin(cap, *hi);
}

/* A whole path's spread v (seconds: a host-bound step's launch work, the
 * MoE layers' compute, the offload copies) into the compute's variance and
 * the spread the shares see beside the kernel gaps'. */
static void path_spread(double v, double *var_c, double *gapv)
{
	*var_c += v * v;
	*gapv = sqrt(*gapv * *gapv + v * v);
}

void proj_intervals(const struct proj_interval_in *in, cvc_proj_result *r)
{
	static const char *const comp[PU_COLL0] = {"gemm", "attention", "memory-bound"};
	const struct proj_unc *lay = in->layer, *st = in->step;
	double lw = in->layer_w;
	double sg[PU_N], S[PU_N], tot[PU_N];
	double compute_core, var_c = 0, var_e = 0, var_comm = 0, var_hid = 0, var_step, s_step;
	double lay_c = lay->t[PU_GEMM] + lay->t[PU_ATTN] + lay->t[PU_MEM];
	double gap_s = r->gaps_s * in->bubble_f, gapv;

	for (int c = 0; c < PU_N; c++) {
		sg[c] = comp_sigma(lay, lw, st, c);
		tot[c] = lw * lay->t[c] + st->t[c];
	}
	/* compute on the critical path, split as one layer's operators split,
	 * the pipeline bubble scaling with it; the step's own memory-bound
	 * work (optimizer, casts) as priced */
	compute_core = fmax(0, r->compute_s - r->gaps_s - r->host_s - r->contention_s -
				 r->offload_s - in->step_compute_s);
	for (int c = 0; c < PU_COLL0; c++)
		S[c] = lay_c > 0 ? compute_core * in->bubble_f * lay->t[c] / lay_c : 0;
	S[PU_MEM] += in->step_compute_s;
	gapv = gap_s * in->gap_sigma;
	for (int c = 0; c < PU_COLL0; c++)
		var_c += S[c] * sg[c] * S[c] * sg[c];
	var_c += gapv * gapv;
	/* a host-bound step runs at the host's pace: its launch work's spread */
	path_spread(in->host_path_s * in->host_sigma, &var_c, &gapv);
	/* an MoE layer's compute as a whole: the measured error of its price
	 * (proj_moe_layer_sigma()), apart from its operators' own */
	path_spread(in->moe_path_s * proj_moe_layer_sigma(), &var_c, &gapv);
	/* the wait for activation copies to the host moves with the copies */
	path_spread(in->offload_path_s * proj_offload_sigma(), &var_c, &gapv);
	for (int j = 0; j < CVC_PROJ_COMM_N; j++) {
		double sj = sg[PU_COLL0 + j], e = r->exposed_type_s[j] * sj;
		double a = r->comm_type_s[j] * sj, h = r->hidden_type_s[j] * sj;

		var_e += e * e;
		var_comm += a * a;
		var_hid += h * h;
		span(r->comm_type_s[j], sj, &r->comm_type_lo_s[j], &r->comm_type_hi_s[j]);
	}
	var_step = var_c + var_e;
	s_step = r->step_s > 0 ? sqrt(var_step) / r->step_s : 0;
	r->sigma = s_step;
	span(r->step_s, s_step, &r->step_s_lo, &r->step_s_hi);
	span(r->compute_s, r->compute_s > 0 ? sqrt(var_c) / r->compute_s : 0, &r->compute_s_lo,
	     &r->compute_s_hi);
	span(r->comm_s, r->comm_s > 0 ? sqrt(var_comm) / r->comm_s : 0, &r->comm_s_lo,
	     &r->comm_s_hi);
	span(r->exposed_s, r->exposed_s > 0 ? sqrt(var_e) / r->exposed_s : 0, &r->exposed_s_lo,
	     &r->exposed_s_hi);
	span(r->hidden_s, r->hidden_s > 0 ? sqrt(var_hid) / r->hidden_s : 0, &r->hidden_s_lo,
	     &r->hidden_s_hi);
	/* communication of several kinds at once (TP under one compute, PP
	 * on its own stream) can add up past the step, but each kind runs on
	 * its own links within the step: no kind past the whole step, even at
	 * its interval's top against the step's bottom.  The exposed part is
	 * bounded by the step itself. */
	{
		double cap = 0;

		for (int j = 0; j < CVC_PROJ_COMM_N; j++)
			if (r->comm_type_s[j] > 0 && r->step_s_lo > 0)
				cap += fmin(1, r->comm_type_hi_s[j] / r->step_s_lo);
		share_span(r->comm_share, share_sigma(S, sg, gapv, r, r->comm_type_s, r->comm_s),
			   fmax(r->comm_share, cap), &r->comm_share_lo, &r->comm_share_hi);
	}
	share_span(r->exposed_share,
		   share_sigma(S, sg, gapv, r, r->exposed_type_s, r->exposed_s), 1,
		   &r->exposed_share_lo, &r->exposed_share_hi);
	/* throughput-like metrics invert the step's interval */
	{
		double up = r->step_s / r->step_s_lo, down = r->step_s / r->step_s_hi;

		r->tokens_per_s_lo = r->tokens_per_s * down;
		r->tokens_per_s_hi = r->tokens_per_s * up;
		r->tokens_per_s_per_gpu_lo = r->tokens_per_s_per_gpu * down;
		r->tokens_per_s_per_gpu_hi = r->tokens_per_s_per_gpu * up;
		r->mfu_lo = r->mfu * down;
		r->mfu_hi = r->mfu * up;
		r->train_days_lo = r->train_days / up;
		r->train_days_hi = r->train_days / down;
		r->cost_usd_lo = r->cost_usd / up;
		r->cost_usd_hi = r->cost_usd / down;
	}
	/* warnings: components of more than 1% of their kind's time priced
	 * with nothing measured, past what was measured, or carried over */
	r->warnings[0] = '\0';
	for (int c = 0; c < PU_N; c++) {
		char name[32];

		if (!(tot[c] > 0))
			continue;
		{
			double def = (lw * lay->tdef[c] + st->tdef[c]) / tot[c];
			double car = (lw * lay->tcarry[c] + st->tcarry[c]) / tot[c];
			double ext = fmax(lw > 0 ? lay->ext[c] : 0, st->ext[c]);

			if (!(def > 0.01 || ext > 1.5 || (car > 0.01 && c >= PU_COLL0)))
				continue; /* most: nothing to say, no name to write */
			name[0] = '\0';
			strncat(name, c < PU_COLL0 ? comp[c] : cvc_proj_comm_name(c - PU_COLL0),
				sizeof name - 6);
			if (c >= PU_COLL0)
				strcat(name, " comm");

			if (def > 0.01)
				warn(r->warnings, sizeof r->warnings, name, "defaults, no measurement (",
				     100 * def, "%)");
			if (ext > 1.5) {
				/* positional (1020x, not 1.02e+03x): read on the page and
				 * by the report's warning table */
				char item[128], xs[40];

				snprintf(item, sizeof item, "%s: %sx past the measured range", name,
					 cvc_fmt_plain(ext, 3, xs, sizeof xs));
				append(r->warnings, sizeof r->warnings, item);
			}
			if (car > 0.01 && c >= PU_COLL0)
				warn(r->warnings, sizeof r->warnings, name,
				     "carried to another span or link (", 100 * car, "%)");
		}
	}
	if (r->step_s > 0 && in->moe_path_s > 0.01 * r->step_s)
		warn(r->warnings, sizeof r->warnings, "moe layers", "",
		     100 * proj_moe_layer_sigma(), "% off the one MoE layer traced");
}

void proj_warn_add(cvc_proj_result *r, const char *item)
{
	append(r->warnings, sizeof r->warnings, item);
}

void proj_intervals_off(cvc_proj_result *r)
{
	double *lo[] = {&r->sigma, &r->step_s_lo, &r->step_s_hi, &r->compute_s_lo, &r->compute_s_hi,
			&r->comm_s_lo, &r->comm_s_hi, &r->hidden_s_lo, &r->hidden_s_hi,
			&r->exposed_s_lo, &r->exposed_s_hi, &r->comm_share_lo, &r->comm_share_hi,
			&r->exposed_share_lo, &r->exposed_share_hi, &r->mfu_lo, &r->mfu_hi,
			&r->tokens_per_s_lo, &r->tokens_per_s_hi, &r->tokens_per_s_per_gpu_lo,
			&r->tokens_per_s_per_gpu_hi, &r->train_days_lo, &r->train_days_hi,
			&r->cost_usd_lo, &r->cost_usd_hi, &r->gain_compute, &r->gain_hbm_bw,
			&r->gain_hbm_cap, &r->gain_intra_bw, &r->gain_inter_bw};

	for (size_t i = 0; i < sizeof lo / sizeof lo[0]; i++)
		*lo[i] = NAN;
	for (int j = 0; j < CVC_PROJ_COMM_N; j++)
		r->comm_type_lo_s[j] = r->comm_type_hi_s[j] = NAN;
	r->warnings[0] = '\0';
}
