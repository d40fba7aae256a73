/*
 * flops.c - model FLOPs per training sequence under the conventions
 * published runs count them with.  Sources count differently (causal or
 * non-causal attention, recomputation or not, embedding parameters or not),
 * so a measured TFLOP/s or MFU is only comparable with the convention it was
 * computed under: validate converts it back to tokens/s with that one.
 */
#include <math.h>
#include <string.h>

#include "proj_internal.h"

static const char *const conv_names[PROJ_FLOPS_N] = {
	"megatron", "megatron-2021", "palm", "cvc",
};

int proj_flops_parse(const char *s)
{
	for (int i = 0; i < PROJ_FLOPS_N; i++)
		if (strcmp(s, conv_names[i]) == 0)
			return i;
	/* the names the sources themselves use */
	if (strcmp(s, "nemo") == 0 || strcmp(s, "megatron-core") == 0 ||
	    strcmp(s, "mcore") == 0)
		return PROJ_FLOPS_MEGATRON;
	if (strcmp(s, "narayanan2021") == 0 || strcmp(s, "megatron2021") == 0)
		return PROJ_FLOPS_MEGATRON_2021;
	return -1;
}

const char *proj_flops_name(int conv)
{
	return conv >= 0 && conv < PROJ_FLOPS_N ? conv_names[conv] : "";
}

const char *proj_flops_names(void)
{
	return "megatron, megatron-2021, palm, cvc";
}

double proj_flops_per_seq(int conv, const cvc_proj_scenario *sc)
{
	double s = sc->seq, h = sc->hidden, L = sc->layers, V = sc->vocab;
	double a = sc->heads, g = sc->kv_heads > 0 ? sc->kv_heads : sc->heads;
	double dh = sc->head_dim > 0 ? sc->head_dim : h / a;
	double gated = sc->ffn_type == CVC_PROJ_FFN_SWIGLU ? 1.5 : 1;
	double topk = sc->experts > 1 ? sc->top_k : 1;
	/* MoE: the routed experts' width (x top_k) and the shared experts' */
	double f = sc->experts > 1 && sc->moe_ffn > 0 ? sc->moe_ffn : sc->ffn;
	double fsh = sc->experts > 1 && sc->shared_ffn > 0 ? sc->shared_ffn : 0;
	/* the attention block's GEMM weights, and the query/key plus value
	 * head widths the core multiplies by (MLA: dh + rope, v_head_dim) */
	double attw = proj_attn_weights(sc, 1, NULL);
	int mla = sc->kv_lora_rank > 0;
	double dqkv = mla ? dh + sc->qk_rope_dim + (sc->v_head_dim > 0 ? sc->v_head_dim : dh)
			  : 2 * dh;
	/* per layer on average: an MoE model's dense layers (its layer
	 * pattern) run one FFN of width ffn, as Megatron-LM counts them */
	double Ld = L - proj_main_layers(sc, 0, L);
	double fl = Ld > 0 ? ((L - Ld) * (f * topk + fsh) + Ld * sc->ffn) / L : f * topk + fsh;
	double ffn_w = (sc->ffn_type == CVC_PROJ_FFN_SWIGLU ? 3 : 2) * h * fl;

	/* one MoE (main-shape) layer, for the multi-token prediction modules
	 * (Megatron-LM counts each as one more layer of the last layer's kind,
	 * plus 3 h + 2 h^2 for its norms and projection, and the logits again) */
	double ffn_m = (sc->ffn_type == CVC_PROJ_FFN_SWIGLU ? 3 : 2) * h * (f * topk + fsh);
	double mtp = sc->mtp_layers > 0 ? sc->mtp_layers : 0, r;

	switch (conv) {
	case PROJ_FLOPS_MEGATRON:
		/* Megatron-LM megatron/training/training.py
		 * num_floating_point_operations (r0.8 and later; NeMo's and
		 * NVIDIA's DGX Cloud benchmarks report with it): 12 B s L h^2
		 * ((1 + g/a + s/h) a dh/h + f/h topk gated + V/(2 L h)),
		 * attention counted non-causal, no recomputation (a dh/h: its
		 * query_projection_to_hidden_size_ratio, 1 unless kv_channels is
		 * set).  MLA: the same count over MLA's projections, 6 s (weights)
		 * + 6 s^2 a (dqk + dv) per layer. */
		if (mla)
			r = 6 * s * (L * (attw + ffn_w) + h * V) + 6 * s * s * L * a * dqkv;
		else
			r = 12 * s * L * h * h *
			    ((1 + g / a + s / h) * (a * dh / h) + fl / h * gated + V / (2 * L * h));
		if (mtp > 0)
			r += mtp * ((mla ? 6 * s * (attw + ffn_m) + 6 * s * s * a * dqkv
					 : 12 * s * h * h * ((1 + g / a + s / h) * (a * dh / h) +
							     (f * topk + fsh) / h * gated)) +
				    6 * s * (3 * h + 2 * h * h) + 6 * s * h * V);
		return r;
	case PROJ_FLOPS_MEGATRON_2021:
		/* Narayanan et al. 2021, eq. 3: GPT with MHA, 4h GELU FFN,
		 * full recomputation counted (96 = 4 passes x 24) */
		return 96 * s * L * h * h * (1 + s / (6 * h) + V / (16 * L * h));
	case PROJ_FLOPS_PALM:
		/* Chowdhery et al. 2022, appendix B: 6 N + 12 L h s per token,
		 * N the non-embedding parameters (12 L h s = 6 L s a (dqk + dv)
		 * for any head widths) */
		r = s * (6 * L * (attw + ffn_w) + 6 * L * s * a * dqkv);
		if (mtp > 0)
			r += s * mtp * (6 * (attw + ffn_m + 2 * h * h) + 6 * s * a * dqkv);
		return r;
	case PROJ_FLOPS_CVC:
	default: {
		/* what cvc's MFU counts (evaluate.c): the GEMMs, attention
		 * non-causal 2 s^2 a (dqk + dv) per layer forward, logits; x3 */
		/* the router, in the MoE layers only */
		double E = sc->experts > 1 ? (Ld > 0 ? sc->experts * (L - Ld) / L : sc->experts) : 0;
		double gemm_l = 2 * s * (attw + ffn_w + h * E);

		r = 3 * (L * (gemm_l + 2 * s * s * a * dqkv) + 2 * s * h * V);
		if (mtp > 0)
			r += 3 * mtp * (2 * s * (attw + ffn_m + h * (sc->experts > 1 ? sc->experts : 0)) +
					2 * s * s * a * dqkv + 2 * s * 2 * h * h + 2 * s * h * V);
		return r;
	}
	}
}
