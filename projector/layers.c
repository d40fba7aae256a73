/*
 * layers.c - what each layer of a model is: a sequence mixer (attention,
 * local attention, a Mamba-2 mixer, or none) and an FFN (dense, MoE, or
 * none), from the three patterns a scenario can carry: the hybrid layer
 * pattern (Megatron-Core's --hybrid-override-pattern: one character per
 * layer, each its own pre-norm residual block), the MoE layer pattern
 * (moe_first_dense, moe_layer_freq) and the local-attention pattern
 * (window, window_skip_freq).  The rest of the projector prices a layer of
 * each kind once and counts how many of each a stage holds
 * (docs/SCENARIOS.md "Layer kinds").
 */
#include <math.h>
#include <string.h>

#include "proj_internal.h"

/* The hybrid pattern's symbols (Megatron-Core
 * megatron/core/ssm/mamba_hybrid_layer_allocation.py, Symbols): Mamba,
 * attention, MLP, MoE. */
static int symbol_kind(char c)
{
	switch (c) {
	case 'M':
		return PROJ_KIND(PROJ_MIX_MAMBA, PROJ_FK_NONE);
	case '*':
		return PROJ_KIND(PROJ_MIX_ATTN, PROJ_FK_NONE);
	case '-':
		return PROJ_KIND(PROJ_MIX_NONE, PROJ_FK_DENSE);
	case 'E':
		return PROJ_KIND(PROJ_MIX_NONE, PROJ_FK_MOE);
	default:
		return -1;
	}
}

/* Whether layer i (0-based) attends locally: Megatron-Core's
 * is_layer_window_attention(), a layer_number (1-based) multiple of
 * window_skip_freq attends to everything. */
static int is_local(const cvc_proj_scenario *sc, double i)
{
	double f = sc->window_skip_freq;

	if (!(sc->window > 0) || sc->window >= sc->seq)
		return 0;
	return !(f >= 1 && proj_fmod(i + 1, f) == 0);
}

/* Whether layer i is kept in bf16 under a low-precision dtype: the first
 * bf16_layers_first and the last bf16_layers_last (Megatron-Core's
 * --num-layers-at-start-in-bf16 / --num-layers-at-end-in-bf16). */
static int in_bf16(const cvc_proj_scenario *sc, double i)
{
	if (!proj_lowp_dtype(sc->dtype))
		return 0;
	return i < sc->bf16_layers_first || i >= sc->layers - sc->bf16_layers_last;
}

/* The kind of layer i, the hybrid pattern (if any) n characters long:
 * the walks over every layer measure the pattern once, not per layer. */
static int kind_at(const cvc_proj_scenario *sc, double i, size_t n)
{
	int mix, ffn;

	if (proj_pattern_on(sc)) {
		int k = i >= 0 && i < (double)n ? symbol_kind(sc->layer_pattern[(size_t)i]) : -1;

		if (k < 0)
			return proj_main_kind(sc);
		if (PROJ_KIND_MIX(k) == PROJ_MIX_ATTN && is_local(sc, i))
			k = PROJ_KIND(PROJ_MIX_LOCAL, PROJ_KIND_FFN(k));
		return k + (in_bf16(sc, i) ? PROJ_KIND_BF16 : 0);
	}
	mix = is_local(sc, i) ? PROJ_MIX_LOCAL : PROJ_MIX_ATTN;
	ffn = sc->experts > 1 && proj_main_layers(sc, i, i + 1) > 0 ? PROJ_FK_MOE : PROJ_FK_DENSE;
	return PROJ_KIND(mix, ffn) + (in_bf16(sc, i) ? PROJ_KIND_BF16 : 0);
}

static size_t pattern_len(const cvc_proj_scenario *sc)
{
	return proj_pattern_on(sc) ? strlen(sc->layer_pattern) : 0;
}

int proj_kind_of(const cvc_proj_scenario *sc, double i)
{
	return kind_at(sc, i, pattern_len(sc));
}

void proj_kinds_in(const cvc_proj_scenario *sc, double lo, double hi, double n[PROJ_NKIND])
{
	size_t len;

	memset(n, 0, PROJ_NKIND * sizeof n[0]);
	if (!(hi > lo))
		return;
	if (proj_layers_uniform(sc)) {
		n[proj_kind_of(sc, lo)] = hi - lo;
		return;
	}
	if (!proj_pattern_on(sc) && !proj_window_on(sc) && !proj_bf16_layers_on(sc)) {
		/* the MoE pattern alone: counted in closed form */
		double moe = proj_main_layers(sc, lo, hi);

		n[PROJ_KIND(PROJ_MIX_ATTN, PROJ_FK_MOE)] = moe;
		n[PROJ_KIND(PROJ_MIX_ATTN, PROJ_FK_DENSE)] = hi - lo - moe;
		return;
	}
	/* a pattern is at most as long as a field holds; local attention's
	 * period crossed with the MoE pattern is counted layer by layer */
	len = pattern_len(sc);
	for (double i = ceil(lo); i < hi && i < lo + 1e7; i++)
		n[kind_at(sc, i, len)]++;
}

int proj_kinds_order(const cvc_proj_scenario *sc, int order[PROJ_NKIND])
{
	int seen[PROJ_NKIND] = {0}, n = 0;
	size_t len = pattern_len(sc);

	if (proj_layers_uniform(sc)) {
		order[0] = kind_at(sc, 0, len);
		return 1;
	}
	if (!proj_pattern_on(sc) && !proj_window_on(sc) && !proj_bf16_layers_on(sc)) {
		/* the MoE pattern alone: layer 0's kind, then the other one if
		 * any layer has it (of the first 1e7, as the walk over the
		 * other patterns looks), counted in closed form */
		double L = fmin(sc->layers, 1e7), moe = proj_main_layers(sc, 0, L);
		int k0 = kind_at(sc, 0, len), dense = PROJ_KIND(PROJ_MIX_ATTN, PROJ_FK_DENSE);
		int other = k0 == dense ? PROJ_KIND(PROJ_MIX_ATTN, PROJ_FK_MOE) : dense;

		if (L > 0) {
			order[n++] = k0;
			if ((other == dense ? L - moe : moe) > 0)
				order[n++] = other;
		}
		for (int i = 0; i < n; i++)
			seen[order[i]] = 1;
	} else {
		for (double i = 0; i < sc->layers && i < 1e7 && n < PROJ_NKIND; i++) {
			int k = kind_at(sc, i, len);

			if (!seen[k]) {
				seen[k] = 1;
				order[n++] = k;
			}
		}
	}
	/* the prediction modules' layers are of the main kind */
	if (sc->mtp_layers > 0 && !seen[proj_main_kind(sc)] && n < PROJ_NKIND)
		order[n++] = proj_main_kind(sc);
	return n;
}

void proj_shape_kind(const cvc_proj_scenario *sc, const struct proj_shape *x, int kind,
		     struct proj_shape *xk)
{
	int ffn = PROJ_KIND_FFN(kind), mix = PROJ_KIND_MIX(kind);

	if (ffn == PROJ_FK_DENSE && x->moe)
		proj_shape_dense(sc, x, xk);
	else
		*xk = *x;
	xk->kind = kind;
	if (PROJ_KIND_HP(kind)) { /* a layer the recipe keeps in bf16 */
		xk->dtype = CVC_PROJ_BF16;
		xk->lowp = xk->fp8_attn = xk->gemm_sub = 0;
	}
	xk->noffn = ffn == PROJ_FK_NONE;
	xk->mixer = mix;
	xk->win = mix == PROJ_MIX_LOCAL ? sc->window : 0;
	xk->wchunk = mix == PROJ_MIX_LOCAL && sc->window_chunked;
}

/* The Mamba mixers' sizes (Megatron-Core MambaMixer: d_inner = heads x
 * head_dim, heads from expand 2 when not given). */
static const char *mamba_finalize(cvc_proj_scenario *sc)
{
	double pd = sc->mamba_head_dim, g = sc->mamba_groups;

	if (!(pd >= 1) || pd != floor(pd) || !(sc->mamba_state >= 1) ||
	    sc->mamba_state != floor(sc->mamba_state) || !(g >= 1) || g != floor(g) ||
	    !(sc->mamba_conv >= 1) || !(sc->mamba_chunk >= 1))
		return "mamba_head_dim, mamba_state, mamba_groups, mamba_conv and mamba_chunk must "
		       "be positive integers";
	if (!(sc->mamba_heads > 0)) {
		if (proj_fmod(2 * sc->hidden, pd) != 0)
			return "2 hidden not divisible by mamba_head_dim (set mamba_heads)";
		sc->mamba_heads = 2 * sc->hidden / pd;
	}
	if (sc->mamba_heads != floor(sc->mamba_heads) || proj_fmod(sc->mamba_heads, g) != 0)
		return "mamba_heads must be a whole multiple of mamba_groups";
	return NULL;
}

const char *proj_layers_finalize(cvc_proj_scenario *sc)
{
	int mamba = 0, moe = 0;

	if (sc->window < 0 || sc->window != floor(sc->window) || sc->window_skip_freq < 0 ||
	    sc->window_skip_freq != floor(sc->window_skip_freq))
		return "window and window_skip_freq must be whole numbers";
	if (!proj_pattern_on(sc))
		return NULL;
	if ((double)strlen(sc->layer_pattern) != sc->layers)
		return "layer_pattern must have one character per layer (its length != layers)";
	for (const char *p = sc->layer_pattern; *p; p++) {
		int k = symbol_kind(*p);

		if (k < 0)
			return "layer_pattern: expected M, *, - or E for each layer";
		mamba |= PROJ_KIND_MIX(k) == PROJ_MIX_MAMBA;
		moe |= PROJ_KIND_FFN(k) == PROJ_FK_MOE;
	}
	if (moe && !(sc->experts > 1))
		return "layer_pattern has MoE layers (E) but experts is 1";
	if (!moe && sc->experts > 1)
		return "experts > 1 but layer_pattern has no MoE layer (E)";
	/* the pattern says which layers are MoE layers */
	sc->moe_first_dense = 0;
	sc->moe_layer_freq = 1;
	return mamba ? mamba_finalize(sc) : NULL;
}

int proj_has_kind(const cvc_proj_scenario *sc, int mixer)
{
	int order[PROJ_NKIND], n = proj_kinds_order(sc, order);

	for (int i = 0; i < n; i++)
		if (PROJ_KIND_MIX(order[i]) == mixer)
			return 1;
	return 0;
}
