/*
 * opmodel_int.h - the model formulas (opformula.c) shared by fitting
 * (fit.c) and prediction (opprice.c), so a fitted parameter means the same
 * thing in both.  Internal to models/.
 */
#ifndef CVC_OPMODEL_INT_H
#define CVC_OPMODEL_INT_H

#include "cvc/cvc_model.h"

/*
 * GEMM, form "wave4": p[0] launch floor us, p[1] us per wave, p[2] factor
 * on the wave-quantised main-loop time at peak, p[3] factor on padded
 * FLOPs / peak, p[4] fraction of HBM bandwidth reached when memory bound,
 * p[5] tile edge.  Time = max(p0 + p1 W + p2 W ck + p3 Fpad/P,
 *                             p0 + bytes/(p4 BW)).
 */
enum { GP_T0, GP_WAVE, GP_CWAVE, GP_CFLOP, GP_MEMEFF, GP_TILE, GP_N };

/* Collective, form "regimes": p[0] = number of regimes, then per regime
 * lo_bytes, alpha_us, busbw_gbps, exponent, s_ref (5 each).  A regime with
 * lo_bytes < 0 is a large-message regime (NCCL's Simple protocol): it is
 * not chosen by size but competes, for sizes above -lo_bytes (the largest
 * size fitted), with the fitted regime as min(fitted, large), the way
 * NCCL's tuner takes the fastest protocol.  At most one, always last. */
#define CP_PER 5
#define CP_MAXREG 3

/*
 * Large-message (Simple protocol) reference for a collective of n ranks in
 * one NVLink domain: eff = its bus bandwidth / the GPU's unidirectional
 * link bandwidth, sfill = its pipeline fill expressed in bytes
 * (t = (S + sfill) f(n) / (eff link)).  Fitted on XLA's sm_90 collective
 * table (docs/MODELS.md "Large messages").  Returns 0 when there is no
 * reference for c.
 */
int opm_coll_simple_ref(cvc_model_coll c, int n, double *eff, double *sfill);
/* A collective's efficiency of the link and fill (bytes) in one NVLink
 * domain where its NVLink generation was measured (XLA's H100 and B200
 * tables: all-reduce, all-gather, reduce-scatter, all-to-all); 0 for
 * other links, collectives and vendors (the spec-sheet default). */
int opm_coll_nvlink_ref(const cvc_hw_spec *spec, cvc_model_coll c, double *eff, double *sfill);

/* Peak FLOP/s of spec for dt in FLOP per us; falls back along
 * bf16 -> fp16 -> fp32 (and tf32 -> fp32) when the sheet has no figure. */
double opm_peak_flops_us(const cvc_hw_spec *spec, cvc_hw_dtype dt);

double opm_gemm_us(const double *p, const cvc_hw_spec *spec, int64_t m, int64_t n, int64_t k,
		   int64_t b, cvc_hw_dtype dt);

/* Features of the linear part: [1, W, W ck, Fpad/P]. */
void opm_gemm_features(const double *p, const cvc_hw_spec *spec, int64_t m, int64_t n,
		       int64_t k, int64_t b, cvc_hw_dtype dt, double x[4]);

double opm_coll_us(const double *p, int nparams, cvc_model_coll c, int64_t bytes, int nranks);

/*
 * The share of a GPU's NVLink (xGMI) bandwidth a group with k GPUs in one
 * node reaches: 1 behind a switch; on a mesh node (spec->intra_mesh: links
 * wired GPU to GPU, spread evenly over the node's P - 1 others) only the
 * links to its k - 1 fellow members carry its traffic, (k-1)/(P-1).
 */
double opm_intra_share(const cvc_hw_spec *spec, int k);

/* ---- collectives on the topology (colltopo.c) ------------------------------ */

/* NCCL's algorithms as cvc prices them across nodes. */
enum { OPM_ALGO_AUTO = -1, OPM_RING = 0, OPM_TREE = 1, OPM_NALGO };

/* One group's place on the topology. */
struct opm_span {
	int n, gpn, nodes;   /* ranks, ranks per NVLink domain, domains */
	double busbw_dom;    /* GB/s: the NVLink level's large-message bus bw */
	double b_node;       /* GB/s: one node's NICs together, one direction */
};

/* Fits lv on the rows (s sorted ascending, bytes; t us) of 8 MiB and up. */
void opm_level_fit(const double *s, const double *t, size_t n, double b_node_gbps,
		   const char *algo, cvc_model_coll_level *lv);
/* The level's time for bytes at the span it was measured on. */
double opm_level_us(const cvc_model_coll_level *lv, int64_t bytes);
const char *opm_algo_name(int algo);
/* "ring", "tree" (also NVLS tree), else OPM_ALGO_AUTO. */
int opm_algo_parse(const char *s);
int opm_algo_allowed(cvc_model_coll c, int algo);
/* Algorithm bandwidth bound (GB/s) of algo for c on sp. */
double opm_algo_algbw(cvc_model_coll c, int algo, const struct opm_span *sp);
/* NCCL's latency model of algo on sp (us). */
double opm_algo_lat_us(cvc_model_coll c, int algo, const struct opm_span *sp);
/* The allowed algorithm with the highest bandwidth bound on sp. */
int opm_algo_best_bw(cvc_model_coll c, const struct opm_span *sp);
/*
 * lv measured for fit_c at span fit, carried to c at span to: the
 * efficiency it reached against its algorithm's bound (the forced one,
 * else the best) applied to each algorithm's bound at to, the fill as
 * bytes, the latency grown by NCCL's per-step figures; the fastest (or
 * force) wins, *algo_used says which.  fit_c != c carries an all-reduce
 * level to the other ring collectives (docs/MODELS.md "Collectives").
 */
double opm_topo_us(const cvc_model_coll_level *lv, cvc_model_coll fit_c, cvc_model_coll c,
		   const struct opm_span *fit, const struct opm_span *to, int64_t bytes, int force,
		   int *algo_used);
/* The latency going from span fit (collective fit_c) to span to adds in
 * NCCL's model: the cheapest allowed (or forced) algorithm's, at least 0. */
double opm_span_lat_us(cvc_model_coll fit_c, cvc_model_coll c, const struct opm_span *fit,
		       const struct opm_span *to, int force);

/* Memory-bound, form "membound": p[0] floor us, p[1] fraction of HBM
 * bandwidth.  Time = p0 + bytes / (p1 BW). */
enum { MP_FLOOR, MP_EFF, MP_N };

/*
 * FlashAttention-1 over FlashAttention-2, time for the same work: what
 * Dao (2023, arXiv 2307.08691) Table 1 measured end to end (GPT3-1.3B and
 * -2.7B at 2k and 8k on 8x A100 80GB SXM, the same stack with either
 * kernel), with cvc's FlashAttention-2 price of those layers as the
 * attention time: the step time the older kernel adds, over that time,
 * least squares over the four rows (tests/data/flash2-paper-table1.csv;
 * recomputed by models_attention.fa1_slowdown_from_the_paper).
 */
#define OPM_FA1_SLOWDOWN 1.79

/* Default fraction of HBM bandwidth when memory bound (docs/MODELS.md
 * "Default efficiencies"). */
#define OPM_DEF_MEM_EFF 0.80

double opm_membound_us(const double *p, const cvc_hw_spec *spec, int64_t bytes);

/*
 * Measured matmul ceilings (ceiling.c, docs/MODELS.md "Clocks: benchmarks
 * vs training").  Kernel tables are measured in bursts at the boost clock;
 * a training step runs at the power limit.  opm_burst_ratio() is the burst
 * over the sustained matmul throughput of spec's generation (H200 SXM
 * 850 / 755), moved to spec's power limit; efficiencies measured in bursts
 * are divided by it.
 * opm_burst_ratio_gpu() names the GPU it was measured on.
 */
double opm_burst_ratio(const cvc_hw_spec *spec);
const char *opm_burst_ratio_gpu(const cvc_hw_spec *spec);
/* The same for the card the attention tables of reference generation ref
 * (opm_attn_ref_gpu()) were measured on. */
double opm_burst_ratio_ref(int ref);
/* A sustained fp8 GEMM's share of the fp8 peak over a bf16 GEMM's share of
 * the bf16 peak, on spec's generation (H200 0.897, B200 0.969); 1 where
 * the generation has no fp8. */
double opm_fp8_share(const cvc_hw_spec *spec);
/* The same for fp4 (NVFP4) over bf16, measured on one B200 in one harness
 * (ceiling.c: the median of torchao's rows of 2^36 FLOPs and more, 0.945);
 * *sd_log (may be NULL) gets the rows' scatter around it on log scale.
 * opm_fp4_share_of(): that figure for NVIDIA GPUs whose FP4 peak is 4x
 * their bf16 peak (Blackwell), the B300's (Transformer Engine's GEMM
 * benchmark, 0.597) for those nearer its 5.8x (Blackwell Ultra), the fp8
 * share for other vendors (no 4-bit measurement of theirs); *sd_log and
 * *src (each may be NULL) the scatter and the measurement's words.
 * opm_fp4_share(): the same without them. */
double opm_fp4_share_measured(double *sd_log);
double opm_fp4_share_of(const cvc_hw_spec *spec, double *sd_log, const char **src);
double opm_fp4_share(const cvc_hw_spec *spec);
/* An MXFP8 GEMM's time over a per-tensor fp8 GEMM's of the same shape,
 * measured on a Blackwell GPU in one harness (ceiling.c: Transformer
 * Engine's GEMM benchmark, pre-quantized, a layer's 12 GEMMs: 1.051);
 * *sd_log (may be NULL) gets the scatter of its three passes on log
 * scale. */
double opm_mxfp8_factor(double *sd_log);
/* Burst matmul ceiling of spec (measured, else of the closest measured GPU
 * of the catalog, same vendor first) as a share of its own dense bf16
 * peak; *from (may be NULL) names the GPU measured.  NaN when none
 * (no catalog to find the closest). */
double opm_ceiling_share(const cvc_hw_catalog *cat, const cvc_hw_spec *spec, const char **from);
/* The burst ceiling share of a GPU of the table by its catalog name; NaN
 * when it is not measured. */
double opm_ceiling_share_of(const char *gpu);
/* What a GEMM efficiency measured on GPU `from` (a fit, sustained there)
 * becomes on spec: the ratio of their burst ceilings and of their
 * burst/sustained ratios; 1 when either ceiling is unknown.  *gpu_a and
 * *gpu_b (may be NULL) name the GPUs whose ceilings were used. */
double opm_carry_factor(const cvc_hw_catalog *cat, const cvc_hw_spec *from,
			const cvc_hw_spec *spec, const char **gpu_a, const char **gpu_b);

/* ---- fused attention (attnref.c) ---------------------------------------- */

/* One measured efficiency curve eff(S) = emax S / (S + s0) of the dense
 * bf16 peak of reference GPU ref. */
struct opm_attn_curve {
	int ref;           /* index of the reference GPU (opm_attn_ref_name) */
	int backend;       /* cvc_model_attn_backend */
	int fp8, bwd, causal, head_dim;
	double emax, s0;
	double mape;       /* % over the rows fitted */
	int n;             /* rows fitted */
};

/* The compiled-in curves. */
const struct opm_attn_curve *opm_attn_curves(size_t *n);
/* The reference GPU whose curves price spec: nearest on log bf16 peak and
 * SM count. */
int opm_attn_ref_gpu(const cvc_hw_spec *spec);
const char *opm_attn_ref_name(int ref);
/* The power limit of the card reference ref's tables were measured on. */
double opm_attn_ref_watts(int ref);
/* The default backend of a framework (torch: PyTorch SDPA, else
 * Transformer Engine) on reference generation ref. */
int opm_attn_default(int ref, int torch);
/* The share of the softmax's exponential time a fused kernel leaves
 * unhidden (seconds per exponential at the SFU rate), measured on GB200
 * against GB300 (attnref.c). */
double opm_attn_sfu_coef(int bwd, int fp8);
/* Efficiency (share of the dense bf16 peak) of a fused attention pass;
 * *exact = 0 when a fallback curve was used.  NaN when none.  Past
 * OPM_ATTN_MAX_D, the largest head dim the curves measure, that one's
 * curve holds. */
double opm_attn_eff(int ref, int backend, int fp8, int bwd, int causal, double S, double D,
		    int *exact);
#define OPM_ATTN_MAX_D 256
/* Fits the curves of cudnn-frontend attention results tables (the
 * "config_name,..." CSV blocks of the given files, together) measured on a
 * GPU of peak_tflops dense bf16, in bursts that ran `clock` times faster
 * than the same GPU sustains (opm_burst_ratio_ref()); fills out[0..max) and
 * returns the count, or -1 with err set. */
int opm_attn_fit_files(const char *const *paths, size_t npaths, double peak_tflops,
		       double clock, int ref, struct opm_attn_curve *out, int max, char *err,
		       size_t errlen);

/* ---- between kernels (opmodel.c) ------------------------------------------ */

/* One trace's measured gap between back-to-back kernels. */
struct opm_gap_ref {
	const char *gpu;   /* catalog name of the trace's GPU */
	double bf16;       /* its dense bf16 (or fp16) TFLOP/s, for the nearest */
	double gap_us;     /* mean of the gaps under 20 us */
	const char *trace; /* ../shared/traces/<dir> */
};

const struct opm_gap_ref *opm_gap_refs(size_t *n);

/* ---- the host's time per launch (hostcost.c) ------------------------------- */

/* One trace's measured host time per kernel launch. */
struct opm_host_ref {
	const char *trace; /* ../shared/traces/<dir> */
	int training;      /* a training step (1), or inference (0: listed only) */
	double us;         /* mean time between two launches of a thread, < 1 ms */
};

const struct opm_host_ref *opm_host_refs(size_t *n);

/* The built-in reference GEMM fits (XLA's H100 bf16 table, vidur's A100
 * Llama-2-7B timings). */
const cvc_model_fit *opm_gemm_references(size_t *n);

/* The default GEMM efficiency on spec, sustained (docs/MODELS.md "Default
 * efficiencies"): XLA's H100 burst through the ceilings of ceiling.c; cat
 * finds the closest measured GPU (may be NULL). */
double opm_gemm_default_efficiency(const cvc_hw_catalog *cat, const cvc_hw_spec *spec);
/* 1 when the default efficiency reaches spec through the matmul ceilings
 * from the GPU it was measured on (its GEMMs then carry SIG_GEMM_CARRY) */
int opm_gemm_default_carried(const cvc_hw_catalog *cat, const cvc_hw_spec *spec);

/* Default GEMM parameters at the burst efficiency (no fit; the starting
 * point of a fit): docs/MODELS.md "defaults". */
void opm_gemm_defaults(double p[GP_N]);

#endif
