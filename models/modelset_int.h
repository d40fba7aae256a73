/*
 * modelset_int.h - the inside of a cvc_modelset, shared by building one
 * (opmodel.c) and pricing with it (opprice.c), and the uncertainty figures
 * both attach.  Internal to models/.
 */
#ifndef CVC_MODELSET_INT_H
#define CVC_MODELSET_INT_H

#include "cvc/cvc_model.h"
#include "models/opmodel_int.h"

/* Floor of a memory-bound kernel at the defaults (docs/MODELS.md "Default
 * efficiencies"). */
#define DEF_MEMBOUND_FLOOR_US 2.5

/*
 * Uncertainty (docs/MODELS.md "Uncertainty"): relative standard errors, on
 * log time, of each kind of price.  A measured MAPE m becomes sigma =
 * m sqrt(pi/2) (normal errors: E|e| = sigma sqrt(2/pi)).  Each figure is a
 * measurement of the repository's own tests on ../shared data:
 *   GEMM fitted, on GEMMs another harness timed on the fit's GPU: XLA's
 *     H100 fit on vidur's H100 Llama-2-7B ops, up / down / qkv 9.35 /
 *     10.39 / 8.45% (test_models vidur_llama2_7b_ops, mean 9.40%);
 *   GEMM carried to another GPU: the same fit on vidur's A100 ops, 8.08 /
 *     7.12 / 8.87% (mean 8.02%), the carry and the harness together;
 *   GEMM at the default efficiency: the spec-sheet default on XLA's H100
 *     bf16 table, 13.1% (test_tracefit); on its 34 rows of 2^36 FLOPs and
 *     more, where the default comes from and where it answers past a fit's
 *     largest size, 3.8% (models_gemm.default_efficiency_from_xla);
 *   FlashAttention-1 as FlashAttention-2 times the paper's ratio: the
 *     ratio's own scatter over the four rows it comes from, 9.9%;
 *   attention on its measured generation: H200 cuDNN causal S = 8192
 *     within 8% of the measured kernels (test_attention); carried to
 *     another generation: plus the GEMM carry-over (no attention pair
 *     measured);
 *   memory-bound at the default efficiencies: Llama-2-70b norm 36.0%,
 *     elementwise 31.6% (test_memfit, mean 33.8%);
 *   kernel gaps: the spread of A100's three traces (2.73, 3.34, 4.58 us:
 *     sd / mean 0.266, test_models kernel_gaps_from_traces);
 *   collectives carried on the topology: the held-out 2-node H100 logs,
 *     11.3 / 6.1 / 9.5 / 41.6% (unit.colltopo, mean 17.1%);
 *   collectives at the defaults: the 20 shared nccl-tests logs whose
 *     network is stated, priced on their own links, rows of 64 MiB and up:
 *     mean MAPE 16.5% (colltopo.defaults_against_the_shared_logs recomputes
 *     it and fails when this figure drifts by more than a point; 22.7%
 *     while all-gather and reduce-scatter were priced a tree's network
 *     phase).
 */
#define SIG_PER_MAPE 1.2533
#define SIG_GEMM_HELDOUT (SIG_PER_MAPE * 0.094)
#define SIG_GEMM_CARRY (SIG_PER_MAPE * 0.080)
#define SIG_GEMM_DEFAULT (SIG_PER_MAPE * 0.131)
#define SIG_GEMM_DEFAULT_LARGE (SIG_PER_MAPE * 0.038)
#define GEMM_LARGE_FLOPS 68719476736.0 /* 2^36 */
#define SIG_ATTN (SIG_PER_MAPE * 0.08)
/* FlashAttention-1 through OPM_FA1_SLOWDOWN: the four rows it comes from
 * scatter around it by 9.9% (attention-weighted mean; test_attention) */
#define SIG_FA1 (SIG_PER_MAPE * 0.099)
#define SIG_MEM_DEFAULT (SIG_PER_MAPE * 0.338)
#define SIG_GAP 0.266
#define SIG_COLL_CARRY (SIG_PER_MAPE * 0.171)
#define SIG_COLL_DEFAULT (SIG_PER_MAPE * 0.165)
/* a one-domain level carried across domains (its NVLink phase fitted, its
 * network phase at the defaults' NIC efficiency) to all-gather and
 * reduce-scatter rings: the fitted one-node H100 level carried to the 4
 * shared 2-node all-gather logs, rows of 64 MiB and up
 * (colltopo.domain_level_carried_across_domains) */
#define COLL_ACROSS_MAPE 0.087
#define SIG_COLL_ACROSS (SIG_PER_MAPE * COLL_ACROSS_MAPE)

#define MS_COLL_MAX 96
#define ORIGIN_MAX 256
/* a GEMM's origin also says how it was carried (opmodel.c fit_factor()) */
#define GEMM_ORIGIN_MAX 448

/* A built-in reference fit as installed on a GPU (opmodel.c install_ref). */
struct gemm_ref {
	double p[GP_N];
	double dom_min, dom_max; /* FLOPs it measured; dom_max 0 = none */
	double sigma;
	int carried;             /* measured on another GPU */
};

struct gemm_slot {
	double p[GP_N];
	double def[GP_N];        /* the defaults, outside a fit's sizes */
	double dom_min, dom_max; /* FLOPs the fit measured; 0 = defaults */
	double sigma;            /* of the fit inside its sizes (docs/MODELS.md
				    "Uncertainty"); the default's outside */
	int carried;             /* fitted on another GPU */
	double share_sigma;      /* fp4 priced from bf16 through the measured share:
				    that share's scatter (ceiling.c), else 0 */
	/* under a fitted model: the built-in reference fit, which still
	 * answers inside its own sizes beyond the fitted ones (a fit may only
	 * make projections better); ref.dom_max 0 = none */
	struct gemm_ref ref;
	char origin[GEMM_ORIGIN_MAX];
};

struct coll_slot {
	cvc_model_coll c;
	int nranks, gpn; /* as fitted */
	int nparams;
	double p[CVC_MODEL_MAXPARAM];
	char origin[ORIGIN_MAX];
	int regimes_ok;  /* the regime fit passed the gate: prices its own span */
	int carries_up;  /* ...and sizes past its rows: its extrapolation was
			    measured (fit on the smaller half, scored on the
			    larger; 8 rows and up) and passed */
	int level_ok;    /* the large-message level passed: carried over spans */
	int64_t id;
	double sigma, dom_min, dom_max;  /* of the size regimes */
	cvc_model_coll_level lvl;
	char label[96];  /* "model 3 (H100-SXM, 16 ranks, 8 per node)" */
	/* how the level prices other spans, per algorithm: with a fitted
	 * NVLink level, and with the spec's */
	char topo_origin[OPM_NALGO][ORIGIN_MAX];
	char topo_def_origin[OPM_NALGO][ORIGIN_MAX];
	char small_origin[ORIGIN_MAX]; /* its regimes below the level's sizes */
	/* a one-domain level carried across domains, per algorithm */
	char across_origin[OPM_NALGO][ORIGIN_MAX];
};

struct mem_slot {
	double p[MP_N];
	double sigma;
	int fitted, carried;
	char origin[ORIGIN_MAX];
	/* a fit prices the bytes it measured, and more only where the gate
	 * measured that carry (carries_up); elsewhere the defaults answer */
	double dom_min, dom_max;
	int carries_up;
	double def[MP_N];
};

/* What prices a memory-bound operator no fit answers for. */
#define MEM_DEF_ORIGIN "spec-sheet HBM bandwidth, default per-class efficiency"

struct cvc_modelset {
	cvc_hw_spec spec;
	struct gemm_slot gemm[CVC_HW_NDTYPE];
	struct mem_slot mem[CVC_MODEL_NMEM];
	struct coll_slot coll[MS_COLL_MAX];
	int ncoll;
	double def_eff[CVC_HW_NDTYPE]; /* default GEMM efficiency, sustained */
	int def_carried;           /* the default measured on another GPU */
	char def_origin[GEMM_ORIGIN_MAX];
	char coll_def_origin[ORIGIN_MAX];
	char attn_origin[ORIGIN_MAX];
	char attn_standin[ORIGIN_MAX + 192]; /* the same, a stand-in curve pricing */
	char attn_pastd[ORIGIN_MAX + 160];   /* the same, past the measured head dims */
	int attn_ref;              /* reference GPU of the attention curves */
	double attn_factor;        /* their efficiency on this GPU's power limit
				    * (the card measured may have another) */
	double attn_ref_sfu;       /* the SFU rate of the curves' card, TeraExp/s
				    * (0: not published) */
	double kernel_gap_us;      /* between back-to-back kernels */
};

/* Canonical GPU name of a spec (a system's base GPU). */
const char *opm_gpu_of(const cvc_hw_spec *s);

#endif
