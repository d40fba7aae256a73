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

_Static_assert(PROJ_FLOPS_N < CVC_PROJ_FLOPS_MAX, "cvc_proj_vstats.tflops_agree holds them");

static const char *const conv_names[PROJ_FLOPS_N] = {
	"megatron", "megatron-2021", "palm", "cvc", "megatron-causal",
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

const char *cvc_proj_flops_convention(int i)
{
	return i >= 0 && i < PROJ_FLOPS_N ? conv_names[i] : NULL;
}

const char *proj_flops_names(void)
{
	return "megatron, megatron-causal, megatron-2021, palm, cvc";
}

void proj_kind_flops(const struct proj_shape *x, double *w, double *wmix, double *core)
{
	double s = x->s, h = x->h, ffn = 0;

	*wmix = *core = 0;
	if (x->mixer == PROJ_MIX_ATTN || x->mixer == PROJ_MIX_LOCAL) {
		double keys = x->mixer == PROJ_MIX_LOCAL && x->win > 0 ? fmin(x->win, s) : s;

		*wmix = x->attw;
		*core = 2 * s * keys * x->a * (x->dqk + x->dv);
	} else if (x->mixer == PROJ_MIX_MAMBA) {
		/* in_proj and out_proj; the SSD per token: C B^T (Q N per group),
		 * the masked scores times x (Q P per head), the chunk states and
		 * the states to the output (N P per head each), 2 FLOPs a MAC */
		*wmix = h * (2 * x->di + 2 * x->mg * x->mn + x->mh) + x->di * h;
		*core = s * (2 * x->mq * x->mn * x->mg + 2 * x->mq * x->mp * x->mh +
			     4 * x->mn * x->mp * x->mh);
	}
	if (!x->noffn)
		ffn = x->ffw * (x->moe ? x->k : 1) + (x->moe ? h * x->E + x->ffs + x->lw : 0);
	*w = *wmix + ffn;
}

/* Whether the model has layers of other kinds than attention + FFN
 * (a hybrid pattern, local attention): their own counts below. */
static int varied(const cvc_proj_scenario *sc)
{
	return proj_pattern_on(sc) || proj_window_on(sc);
}

/*
 * One layer of a kind as Megatron-Bridge's hybrid count has it
 * (training/utils/flop_utils.py @0494433b, hybrid_flops and its
 * attn_layer_flops, mamba_layer_flops, mlp_layer_flops, moe_layer_flops),
 * x3 for training: a LatentMoE layer's routed experts at the latent width
 * l and its two projections, 4 s (l f k x 3/2 gated + h l) + the shared
 * experts' 4 s h f_shared (x 3/2).  x: the model's shape, xk: the kind's.
 */
static double megatron_kind(const struct proj_shape *x, const struct proj_shape *xk, int mix,
			    int ffn, double gated)
{
	double s = x->s, h = x->h, p = x->a * x->dh / h, r = 0;

	if (mix == PROJ_MIX_ATTN || mix == PROJ_MIX_LOCAL)
		r += 3 * 4 * s * h * p * (h + h * x->g / x->a + s / 2);
	else if (mix == PROJ_MIX_MAMBA)
		r += 3 * (2 * s * h * (4 * h + 2 * x->mg * x->mn + x->mh) + 7 * s * 2 * h * x->mn +
			  2 * s * 2 * h * h);
	if (ffn == PROJ_FK_DENSE)
		r += 3 * 4 * s * h * xk->f * gated;
	else if (ffn == PROJ_FK_MOE)
		r += 3 * (4 * s * (x->hl * x->f * x->k + h * x->fs) * gated + 2 * s * x->lw);
	return r;
}

/*
 * The FLOP conventions over layers of several kinds.  megatron: Megatron's
 * hybrid count (Megatron-Bridge training/utils/flop_utils.py hybrid_flops,
 * as NeMo reports hybrid models: attention 4 s h p (h + h g/a + s/2),
 * Mamba 2 s h (2 d + 2 G N + H) + 7 s d N + 2 s d h with d = 2 h, MLP
 * 4 (f/h) s h^2 (x 3/2 SwiGLU), MoE 4 s h (f k + f_shared) (x 3/2; LatentMoE:
 * megatron_kind() above), logits 2 s h V, each prediction module's layer and
 * logits again; all x 3) for a layer pattern, its transformer count otherwise
 * (local attention counted as full, as Megatron-LM does); palm: 6 N plus
 * each attention layer's 6 s a (dqk + dv) over the keys it sees; cvc: what
 * the projector's MFU counts (evaluate.c), kind by kind.
 */
static double varied_flops(int conv, const cvc_proj_scenario *sc)
{
	struct proj_shape x, xk;
	double s = sc->seq, h = sc->hidden, V = sc->vocab, N[PROJ_NKIND], r = 0;
	double mtp = sc->mtp_layers > 0 ? sc->mtp_layers : 0;
	double gated = sc->ffn_type == CVC_PROJ_FFN_SWIGLU ? 1.5 : 1;
	int ord[PROJ_NKIND], nord = proj_kinds_order(sc, ord);

	proj_shape_of(sc, &x);
	proj_kinds_in(sc, 0, sc->layers, N);
	for (int i = 0; i < nord; i++) {
		double w, wmix, core, n = N[ord[i]];
		int mix = PROJ_KIND_MIX(ord[i]), ffn = PROJ_KIND_FFN(ord[i]);

		proj_shape_kind(sc, &x, ord[i], &xk);
		proj_kind_flops(&xk, &w, &wmix, &core);
		if (conv == PROJ_FLOPS_PALM) {
			r += n * s * (6 * w + 3 * core / s);
		} else if (conv == PROJ_FLOPS_CVC) {
			r += n * 3 * (2 * s * w + core);
		} else { /* megatron, megatron-causal */
			r += n * megatron_kind(&x, &xk, mix, ffn, gated);
		}
	}
	if (mtp > 0) {
		/* each prediction module: one more layer of the main kind (as
		 * the projector runs it, stages.c), the logits again; palm and
		 * cvc count its 2h -> h projection too, as evaluate.c's MFU
		 * does, where Megatron-Bridge's hybrid count has none */
		int km = proj_main_kind(sc);
		double w, wmix, core;

		proj_shape_kind(sc, &x, km, &xk);
		proj_kind_flops(&xk, &w, &wmix, &core);
		if (conv == PROJ_FLOPS_PALM)
			r += mtp * s * (6 * (w + 2 * h * h) + 3 * core / s);
		else if (conv == PROJ_FLOPS_CVC)
			r += mtp * 3 * (2 * s * (w + 2 * h * h) + core + 2 * s * h * V);
		else
			r += mtp * (megatron_kind(&x, &xk, PROJ_KIND_MIX(km), PROJ_KIND_FFN(km), gated) +
				    3 * 2 * s * h * V);
	}
	return r + (conv == PROJ_FLOPS_PALM ? 0 : 3 * 2 * s * h * V);
}

double proj_flops_per_seq(int conv, const cvc_proj_scenario *sc)
{
	if (varied(sc) && conv != PROJ_FLOPS_MEGATRON_2021)
		return varied_flops(conv, sc);
	double s = sc->seq, h = sc->hidden, L = sc->layers, V = sc->vocab;
	double a = sc->heads, g = sc->kv_heads > 0 ? sc->kv_heads : sc->heads;
	double dh = sc->head_dim > 0 ? sc->head_dim : h / a;
	double gated = sc->ffn_type == CVC_PROJ_FFN_SWIGLU ? 1.5 : 1;
	double nmat = sc->ffn_type == CVC_PROJ_FFN_SWIGLU || sc->ffn_type == CVC_PROJ_FFN_GEGLU ? 3 : 2;
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
	/* LatentMoE: the routed experts at the latent width, and its two
	 * projections (Megatron-LM's count below keeps the hidden width) */
	double lat = proj_latent_width(sc), hr = lat > 0 ? lat : h;
	double moe_w = nmat * (hr * f * topk + h * fsh) + 2 * h * lat;
	double ffn_w = Ld > 0 ? ((L - Ld) * moe_w + Ld * nmat * h * sc->ffn) / L : moe_w;

	/* one MoE (main-shape) layer, for the multi-token prediction modules
	 * (Megatron-LM counts each as one more layer of the last layer's kind,
	 * plus 3 h + 2 h^2 for its norms and projection, and the logits again) */
	double ffn_m = moe_w;
	double mtp = sc->mtp_layers > 0 ? sc->mtp_layers : 0, r;

	switch (conv) {
	case PROJ_FLOPS_MEGATRON:
	case PROJ_FLOPS_MEGATRON_CAUSAL: {
		/* Megatron-LM megatron/training/training.py
		 * num_floating_point_operations (r0.8 and later; NeMo's and
		 * NVIDIA's DGX Cloud benchmarks report with it): 12 B s L h^2
		 * ((1 + g/a + s/h) a dh/h + f/h topk gated + V/(2 L h)),
		 * attention counted non-causal, no recomputation (a dh/h: its
		 * query_projection_to_hidden_size_ratio, 1 unless kv_channels is
		 * set).  MLA: the same count over MLA's projections, 6 s (weights)
		 * + 6 s^2 a (dqk + dv) per layer.  megatron-causal: the count as
		 * Megatron-LM has made it by mid-2025 ("causal mask (only half of
		 * the mask is non-zero)", @001b00c2): the scores and their product
		 * with V over half the s^2 pairs, s/h -> s/2h and MLA's s^2 term
		 * halved; the rest unchanged.  Megatron-MoE-ModelZoo's Qwen3-235B-
		 * A22B rows at main(1e057005) and moe_dev(f3e6c5) print it: 167
		 * TFLOP/s at 29.0 s and 245 at 19.7 s for 2048 x 4096 tokens on
		 * 256 GPUs are 1.478e11 and 1.473e11 FLOPs a token, the causal
		 * count 1.480e11, the non-causal 1.669e11 (test_mcore_ways). */
		double c = conv == PROJ_FLOPS_MEGATRON_CAUSAL ? 0.5 : 1;

		if (mla)
			r = 6 * s * (L * (attw + ffn_w) + h * V) + c * 6 * s * s * L * a * dqkv;
		else
			r = 12 * s * L * h * h *
			    ((1 + g / a + c * s / h) * (a * dh / h) + fl / h * gated +
			     V / (2 * L * h));
		if (mtp > 0)
			r += mtp * ((mla ? 6 * s * (attw + ffn_m) + c * 6 * s * s * a * dqkv
					 : 12 * s * h * h * ((1 + g / a + c * s / h) * (a * dh / h) +
							     (f * topk + fsh) / h * gated)) +
				    6 * s * (3 * h + 2 * h * h) + 6 * s * h * V);
		return r;
	}
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

double proj_flops_tokens_per_s(int conv, const cvc_proj_scenario *sc, double tflops)
{
	double per_tok = proj_flops_per_seq(conv, sc) / sc->seq;

	return per_tok > 0 ? tflops * 1e12 / per_tok : NAN;
}
