/*
 * ctx.h - the inside of a cvc_proj_ctx: catalog, a few pricers (one per
 * GPU and scale factors in use), and a small cache of per-layer compute
 * times, so a sweep over GPU counts prices each layer shape once.
 */
#ifndef CVC_PROJ_CTX_H
#define CVC_PROJ_CTX_H

#include <stddef.h>
#include <stdint.h>

#include "cvc/cvc_model.h"
#include "proj_internal.h"

struct cvc_db;
struct cvc_hw_catalog;

/* Pricers kept at most (one per GPU and scale factors; with intervals
 * each scenario uses its own and the five of its doubled factors): built
 * as a study needs them, each about 250 KB, round-robin past the cap. */
#define PROJ_NPRICERS 1024
/* their index's size: a power of two (probes wrap with a mask), at least
 * twice the pricers, so a probe always meets an empty entry */
#define PROJ_PRICER_INDEX 2048
_Static_assert((PROJ_PRICER_INDEX & (PROJ_PRICER_INDEX - 1)) == 0 &&
		       PROJ_PRICER_INDEX >= 2 * PROJ_NPRICERS,
	       "PROJ_PRICER_INDEX: a power of two, at least 2 x PROJ_NPRICERS");
#define PROJ_CC_SLOTS 256
#define PROJ_CC_KEY 64
#define PROJ_LC_NOTES 8

/* Everything in a stage's compute that does not depend on dp or pp. */
struct proj_layer_cost {
	double key[PROJ_CC_KEY]; /* shape key; key[0] = 0 marks an empty slot */
	double fwd_s;          /* one layer forward, compute only */
	double bwd_s;          /* one layer backward incl. recompute */
	double fwd_gemm_s;     /* GEMM part of fwd (TP overlap window) */
	double bwd_gemm_s;
	double attn_fwd_s, attn_bwd_s; /* CP overlap window */
	double tp_fwd_s, tp_bwd_s;     /* TP comm per layer (bwd incl. recompute) */
	double tp_hid_s;               /* of which hidden under split GEMMs (overlap) */
	double tp_margin_s;            /* GEMM time lost to SMs held for the overlap */
	double kernels;                /* kernel launches of one layer, fwd + bwd */
	double chunk_kernels;          /* of them, split GEMMs' chunks past the first
					* (struct proj_sink): no host work of their own */
	double first_kernels, last_kernels; /* of the first / last stage's extra work */
	double ep_fwd_s, ep_bwd_s;     /* MoE all-to-all per layer */
	/* of them: the forward dispatch and combine, the backward's dispatch
	 * (of the combine's gradient) and combine, and the forward ones again
	 * under recomputation (exposed) */
	double ep_df_s, ep_cf_s, ep_db_s, ep_cb_s, ep_rc_s;
	/* the FFN block of the layer (struct proj_layer_gemms mlp_*): forward,
	 * backward without wgrad, wgrad; and the layer's wgrad GEMMs in all */
	double mlp_fwd_s, mlp_bwd_s, mlp_wgrad_s, wgrad_s;
	/* of the layer's kernels, those a CUDA graph of the layer leaves out:
	 * an MoE layer's expert GEMMs and activation (their token counts vary)
	 * unless HybridEP's fixed buffers carry them */
	double ungraphed_kernels;
	struct proj_unc unc;           /* what one layer's prices rest on */
	double cp_fwd_s, cp_bwd_s;     /* CP KV exchange per layer */
	double d3_ag_s, d3_rs_s;       /* 3D: one layer's depth all-gathers (one
					* pass) and its reduce-scatters */
	double first_fwd_s, first_bwd_s; /* embedding (first stage) */
	double last_fwd_s, last_bwd_s;   /* logits + loss (last stage) */
	/* of last_*: the prediction modules' own work (the next tokens'
	 * embedding, the two norms, the 2h -> h projection), which runs on the
	 * rank of a layout's m layers when that is not the loss's rank */
	double mtp_fwd_s, mtp_bwd_s, mtp_kernels;
	/* their tensor-parallel collectives, forward and backward (exposed:
	 * no GEMM of theirs is split to hide them) */
	double first_tp_s, last_tp_s;
	/* the collectives pricing this layer counted in ctx->used (entry,
	 * times), added again on every cache hit: the provenance's "priced"
	 * counts are then what pricing without the cache would count */
	struct {
		int entry;
		double calls;
	} notes[PROJ_LC_NOTES];
	int nnotes;
};

struct proj_ccache {
	struct proj_layer_cost e[PROJ_CC_SLOTS];
};

/*
 * Collective prices a pricer has given, by operator: a sweep asks the same
 * data-parallel and tensor-parallel collectives of scenario after scenario
 * (and of each one's half-GPU twin), and a price is a walk through the
 * fitted levels.  Direct-mapped; a hit returns what the model returned.
 */
#define PROJ_CMEMO_SLOTS 256
struct proj_cmemo {
	struct {
		int64_t bytes;
		int sub, group, per_node, full;
		cvc_model_price pr;
	} e[PROJ_CMEMO_SLOTS];
};

/*
 * Scenarios evaluated lately (smemo.c), direct-mapped by a hash of what
 * they say: the key is the scenario with its position and its text fields
 * cleared, the text (study, model, layer_pattern, recompute_modules,
 * pp_layout, gpu) kept beside it; the result, and the collectives its
 * evaluation priced (ctx->used's entries and counts, added again on a hit).
 */
#define PROJ_SM_SLOTS 64
#define PROJ_SM_TEXT 1024
#define PROJ_SM_NOTES 16
#define PROJ_SM_NTEXT 7
struct proj_smemo_slot {
	int full, nnotes;
	uint64_t hash;
	cvc_proj_scenario key;
	char text[PROJ_SM_TEXT];
	cvc_proj_result r;
	struct {
		int entry;
		double calls;
	} notes[PROJ_SM_NOTES];
};

struct proj_smemo {
	struct proj_smemo_slot e[PROJ_SM_SLOTS];
};

/* The last scenario's stages (its plan and heaviest stage), kept by the
 * scenario without its hardware's scale factors (smemo.c). */
struct proj_stmemo {
	int full;
	cvc_proj_scenario key;
	char text[PROJ_SM_TEXT];
	struct proj_plan pl;
	double heavy[PROJ_NKIND];
};

/* One evaluation's look into the memo, kept for storing its result: the
 * scenario, its key and hash, and ctx->used's counts before it. */
struct proj_smemo_mark {
	const cvc_proj_scenario *sc;
	int n0, dropped;
	uint64_t hash;
	cvc_proj_scenario key;
	double before[PROJ_USED_MAX];
};
/* Whether sc was evaluated lately: then *r is that result (its
 * collectives counted again), else mk is ready for proj_smemo_keep(). */
int proj_smemo_find(cvc_proj_ctx *ctx, const cvc_proj_scenario *sc, struct proj_smemo_mark *mk,
		    cvc_proj_result *r);
/* Keeps r, the evaluation of mk's scenario, with the collectives it priced. */
void proj_smemo_keep(cvc_proj_ctx *ctx, const struct proj_smemo_mark *mk,
		     const cvc_proj_result *r);
/* Forgets every scenario (the prices they rest on change). */
void proj_smemo_clear(cvc_proj_ctx *ctx);
/* sc's plan (proj_plan_of()) and heaviest stage (proj_heaviest_stage() of
 * its shape x), kept from the scenario before when they differ only in
 * their hardware's scale factors. */
void proj_smemo_stages(cvc_proj_ctx *ctx, const cvc_proj_scenario *sc, const struct proj_shape *x,
		       struct proj_plan *pl, double heavy[PROJ_NKIND]);

struct pslot {
	struct proj_pricer p;
	struct proj_cmemo cmemo; /* p.cmemo */
};

struct cvc_proj_ctx {
	struct cvc_db *db;
	struct cvc_hw_catalog *cat;
	/* the pricers built (each its own allocation: a pricer handed out
	 * stays where it is while others are built), and an open-addressing
	 * index of them by key: slot number + 1, 0 empty */
	struct pslot *slot[PROJ_NPRICERS];
	int index[PROJ_PRICER_INDEX];
	int nslots, last, evict;
	long builds;            /* pricers built so far (proj_ctx_builds()) */
	struct proj_ccache cc;
	struct proj_smemo sm;
	struct proj_stmemo stm;
	struct proj_used used;
	int no_intervals;
	int force;              /* fits past the quality gate too */
	/* DeepGEMM's blockwise fp8 benchmark read against the default models
	 * of its GPU, once (blockfp8_state: 0 not yet, 1 read, -1 none) */
	struct cvc_model_blockfp8 blockfp8;
	int blockfp8_state;
	char errmsg[256];
};

#endif
