/*
 * predict_ops.c - `cvc predict attention|membound`: the operators the
 * projector prices beside GEMMs and collectives, priced by the same
 * model-set functions (cvc_model_attention_price, cvc_model_membound_price)
 * and printed as a sentence with its `model:` line, or as a one-row table;
 * and the one-row table every prediction prints with --format.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "predict.h"
#include "cvc/cvc_base.h"
#include "cvc/cvc_report.h"

double cli_predict_round(double v)
{
	char b[48];

	if (!isfinite(v))
		return v;
	return strtod(cvc_fmt_plain(v, 6, b, sizeof b), NULL);
}

int cli_predict_row(const char *const *cols, int n, const char *const *strs, const double *nums,
		    const char *format)
{
	cvc_rep_table *t = cvc_rep_table_new("predict", NULL, (size_t)n, cols);
	int bad = !t || cvc_rep_table_add_row(t) < 0;

	for (int c = 0; !bad && c < n; c++) {
		if (strs[c])
			bad = cvc_rep_table_set_str(t, 0, (size_t)c, strs[c]) != 0;
		else
			cvc_rep_table_set_num(t, 0, (size_t)c, cli_predict_round(nums[c]));
	}
	if (!bad)
		cli_table_print(t, format);
	cvc_rep_table_free(t);
	return bad ? cli_fail(CVC_ERR_NOMEM, "predict: out of memory") : 0;
}

void cli_predict_say_interval(const cvc_model_price *pr)
{
	double lo, hi;

	cvc_model_interval90(pr->us, pr->sigma, &lo, &hi);
	printf("uncertainty: 90%% interval %.3f to %.3f us (relative standard error %.1f%%)\n", lo,
	       hi, 100 * pr->sigma);
}

/* The library that runs a, a default resolved on ms's GPU generation. */
static const char *backend_of(const cvc_modelset *ms, const cvc_model_attn *a)
{
	int be = a->backend;

	if (be == CVC_ATTN_DEFAULT_TE || be == CVC_ATTN_DEFAULT_TORCH)
		be = cvc_model_attn_default(ms, be == CVC_ATTN_DEFAULT_TORCH);
	return cvc_model_attn_backend_name((cvc_model_attn_backend)be);
}

int cli_predict_attention(const cvc_modelset *ms, const cvc_hw_spec *spec,
			  const cvc_model_attn *a, const char *format)
{
	static const char *const cols[] = {"gpu",        "dtype",      "backend",  "pass",
					   "b",          "heads",      "kv_heads", "head_dim",
					   "seq",        "causal",     "time_us",  "time_us_lo",
					   "time_us_hi", "tflops",     "model"};
	cvc_model_price pr;
	/* FLOPs as the model counts them (cvc_model_attention_us): QK^T and
	 * PV, half the pairs under the causal mask, backward 2.5x */
	double fl = 4.0 * (double)a->batch * (double)a->heads * (double)a->seq_q *
		    (double)a->seq_kv * (double)a->head_dim * (a->causal ? 0.5 : 1) *
		    (a->backward ? 2.5 : 1);
	double tf;
	const char *be = backend_of(ms, a), *pass = a->backward ? "backward" : "forward";
	char model[1024];

	cvc_model_attention_price(ms, a, &pr);
	tf = pr.us > 0 ? fl / pr.us / 1e6 : NAN;
	/* FlashAttention-1 is its successor's curves slowed by a measured
	 * ratio: said as the projector's provenance says it */
	if (a->backend == CVC_ATTN_FA1)
		snprintf(model, sizeof model,
			 "FlashAttention-1: FlashAttention-2's time x %.2f (the FlashAttention-2 "
			 "paper's end-to-end table, Dao 2023); %s",
			 cvc_model_fa1_slowdown(), pr.origin);
	else
		snprintf(model, sizeof model, "%s", pr.origin);
	if (format) {
		const char *strs[15] = {spec->name, cvc_hw_dtype_name(a->dtype), be, pass};
		double nums[15] = {0};

		nums[4] = (double)a->batch, nums[5] = (double)a->heads;
		nums[6] = (double)a->kv_heads, nums[7] = (double)a->head_dim;
		nums[8] = (double)a->seq_q, nums[9] = a->causal, nums[10] = pr.us;
		cvc_model_interval90(pr.us, pr.sigma, &nums[11], &nums[12]);
		nums[13] = tf;
		strs[14] = model;
		return cli_predict_row(cols, 15, strs, nums, format);
	}
	printf("attention %s b=%lld heads=%lld kv_heads=%lld head_dim=%lld seq=%lld %s %s %s on "
	       "%s: %.3f us (%.1f TFLOP/s)\n",
	       pass, (long long)a->batch, (long long)a->heads, (long long)a->kv_heads,
	       (long long)a->head_dim, (long long)a->seq_q, a->causal ? "causal" : "full",
	       cvc_hw_dtype_name(a->dtype), be, spec->name, pr.us, tf);
	printf("model: %s\n", model);
	cli_predict_say_interval(&pr);
	return 0;
}

int cli_predict_membound(const cvc_modelset *ms, const cvc_hw_spec *spec, cvc_model_mem cls,
			 int64_t bytes, const char *format)
{
	static const char *const cols[] = {"gpu",        "class", "bytes", "time_us", "time_us_lo",
					   "time_us_hi", "gbps",  "model"};
	cvc_model_price pr;
	double gbps;
	char model[512];

	cvc_model_membound_price(ms, bytes, cls, &pr);
	gbps = pr.us > 0 ? (double)bytes / pr.us / 1e3 : NAN;
	/* past its largest row a fit prices only where the gate measured that
	 * carry (models/opprice.c mem_in): said, as the projector's warnings do */
	if (pr.extrap > 1)
		snprintf(model, sizeof model, "%s; %.3gx past the largest size it measured, "
			 "through a carry the quality gate measured", pr.origin, pr.extrap);
	else
		snprintf(model, sizeof model, "%s", pr.origin);
	if (format) {
		const char *strs[8] = {spec->name, cvc_model_mem_name(cls), NULL, NULL, NULL, NULL,
				       NULL, model};
		double nums[8] = {0, 0, (double)bytes, pr.us, 0, 0, gbps, 0};

		cvc_model_interval90(pr.us, pr.sigma, &nums[4], &nums[5]);
		return cli_predict_row(cols, 8, strs, nums, format);
	}
	printf("membound %s %lld bytes on %s: %.3f us (%.1f GB/s)\n", cvc_model_mem_name(cls),
	       (long long)bytes, spec->name, pr.us, gbps);
	printf("model: %s\n", model);
	cli_predict_say_interval(&pr);
	return 0;
}
