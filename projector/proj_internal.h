/*
 * proj_internal.h - what the projector's files share and nobody else sees:
 * the scenario field table, the `where:` expression compiler, and the
 * pricing layer between the workload and the operator models.
 */
#ifndef CVC_PROJ_INTERNAL_H
#define CVC_PROJ_INTERNAL_H

#include <math.h>
#include <stddef.h>
#include <stdio.h>

#include "cvc/cvc_project.h"

/* ---- scenario fields ------------------------------------------------------ */

enum proj_ftype {
	PF_NUM,   /* double */
	PF_ENUM,  /* int, value is an index into names ("gelu|swiglu") */
	PF_FLAG,  /* int 0/1; YAML true/false/on/off/yes/no */
	PF_STR    /* const char *, borrowed from the study's string pool */
};

struct proj_field {
	const char *section;  /* model, training, parallelism, hardware, comm, cost */
	const char *key;      /* name in YAML and in `where:` */
	enum proj_ftype type;
	size_t offset;        /* into cvc_proj_scenario */
	const char *names;    /* PF_ENUM: "a|b|c" */
	int allow_auto;       /* `auto` accepted (stored as PROJ_AUTO) */
};

/*
 * fmod(a, b), the same value, fast where both are whole numbers: the
 * projector asks "does b divide a" of layer counts, ranks and batch sizes
 * several times per scenario, and glibc's fmod is a loop of about 100
 * instructions (about 7% of a sweep's, bench/README.md "Projector").
 * Below 2^53 a whole double converts to an integer exactly, and the
 * integer remainder is fmod's.
 */
static inline double proj_fmod(double a, double b)
{
	if (a >= 0 && b >= 1 && a < 9e15 && b < 9e15) {
		long long ia = (long long)a, ib = (long long)b;

		if ((double)ia == a && (double)ib == b)
			return (double)(ia % ib);
	}
	return fmod(a, b);
}

/*
 * The predicates below are asked a dozen times or more per evaluated
 * scenario, from every file of the projector: inline here, where a call
 * into another file would cost more than the test (bench/README.md
 * "Projector").
 */

/* Whether dtype runs the layers' GEMMs in fp8 or 4 bits. */
static inline int proj_lowp_dtype(int dtype)
{
	return dtype == CVC_PROJ_FP8 || dtype == CVC_PROJ_NVFP4 || dtype == CVC_PROJ_MXFP4;
}

/* Whether sc names a hybrid layer pattern (layer_pattern, layers.c). */
static inline int proj_pattern_on(const cvc_proj_scenario *sc)
{
	return sc->layer_pattern && sc->layer_pattern[0];
}

/* Whether sc's attention window is shorter than its sequence, so that
 * (some) layers attend locally (window, window_skip_freq; layers.c). */
static inline int proj_window_on(const cvc_proj_scenario *sc)
{
	return sc->window > 0 && sc->window < sc->seq;
}

/* Whether sc's layers are of two shapes (MoE with dense layers). */
static inline int proj_layers_mixed(const cvc_proj_scenario *sc)
{
	return sc->experts > 1 && (sc->moe_first_dense > 0 || sc->moe_layer_freq > 1);
}

/* Whether some first or last layers stay in bf16 under a low-precision
 * dtype (bf16_layers_first / _last, lowprec.c). */
static inline int proj_bf16_layers_on(const cvc_proj_scenario *sc)
{
	return proj_lowp_dtype(sc->dtype) && (sc->bf16_layers_first > 0 || sc->bf16_layers_last > 0);
}

/* Value stored in tp/pp/vpp when the file says `auto`. */
#define PROJ_AUTO (-1.0)

/*
 * The share of a GPU's nominal HBM a training step's tensors can hold, from
 * what PyTorch had allocated when a training step of a multi-GPU LLM run ran
 * out of memory: the published messages of tests/data/pytorch-oom-at-limit.csv
 * whose failed request was at most 2 GiB (so what was held and what was asked
 * for bracket the ceiling within 2.5% of an 80 GB GPU).  Each is net of what
 * CUDA keeps (the context, NCCL's buffers) and of the allocator's
 * fragmentation at the moment the run failed, which is why it is taken at
 * the failure and not from a run's allocated/reserved ratio off the limit
 * (0.52-0.79 in the memory events of ../shared's traces, memory to spare).
 * A layout fits below the lowest of those ceilings, where every one of the
 * runs still held its tensors: a ranking offers only what fits.  The median
 * is where a run would fail as often as not.  docs/SCENARIOS.md "Memory";
 * test_project_validate.c recomputes both from the file.
 */
#define PROJ_HBM_USABLE 0.901
#define PROJ_HBM_MEDIAN 0.9585

extern const struct proj_field proj_fields[];
extern const size_t proj_nfields;

/* Pricers ctx has built so far: a study reuses one per GPU and scale
 * factors until the cache's cap (PROJ_NPRICERS). */
long proj_ctx_builds(const cvc_proj_ctx *ctx);

/* Index of key (with '-' treated as '_') in section (NULL = any); -1 if none. */
int proj_field_find(const char *section, const char *key);
/* The i-th other spelling of a field (*alias) and the field's key (*key);
 * -1 past the last (docs/SCENARIOS.md lists them all: unit.defaults). */
int proj_field_alias(size_t i, const char **alias, const char **key);
/* Numeric view of any field (enum/flag as their int, str as 0). */
double proj_field_get(const cvc_proj_scenario *sc, int f);
void proj_field_set_num(cvc_proj_scenario *sc, int f, double v);
/* Enum name -> index, -1 when not one of the names. */
int proj_enum_index(const char *names, const char *word);
/* Writes the idx-th name of names into buf; "" when out of range. */
void proj_enum_name(const char *names, int idx, char *buf, size_t len);

/* An output column (cvc_proj_metric's names, fits, valid) by name: its
 * index, or -1; and its value in r. */
int proj_metric_find(const char *name);
double proj_metric_get(const cvc_proj_result *r, int idx);

/* ---- `where:` expressions ----------------------------------------------------- */

typedef struct proj_expr proj_expr;

/* Compiles text; on failure returns NULL and writes a message naming the
 * column (1-based, within text) into err. */
proj_expr *proj_expr_compile(const char *text, char *err, size_t errlen);
void proj_expr_free(proj_expr *e);
/* Evaluates against sc and its result r (NULL before evaluation: output
 * columns read as NaN); nonzero = true.  Division by zero yields NaN, and
 * comparisons with NaN are false, so a bad filter drops rows, never crashes. */
double proj_expr_eval(const proj_expr *e, const cvc_proj_scenario *sc, const cvc_proj_result *r);
/* Whether e reads an output column (then it can only hold after evaluation). */
int proj_expr_uses_result(const proj_expr *e);

/* ---- pricing --------------------------------------------------------------- */

struct cvc_modelset;
struct cvc_hw_spec;

/*
 * A pricer binds a scenario's hardware (after scale factors) and dtype to
 * the operator models.  Every price is in seconds.  Owned by the ctx cache:
 * valid until the ctx is freed.
 */
/* The collectives a ctx's projections priced, by GPU, collective and the
 * model that priced them (cvc_proj_ctx_origin() lists them), and the GPUs
 * priced with what they priced: the provenance a projection carries
 * (provenance.c) names exactly the models these point at. */
#define PROJ_USED_MAX 64
#define PROJ_SEEN_MAX 64
struct proj_used {
	struct {
		char gpu[64];
		int coll;
		char origin[256];
		double calls;       /* times priced */
	} e[PROJ_USED_MAX];
	int n, last;
	int dropped;            /* (gpu, collective, origin) past PROJ_USED_MAX */
	struct {
		char gpu[64];       /* as the scenarios name it */
		unsigned gemm;      /* bit per cvc_hw_dtype a GEMM was priced in */
		unsigned attn;      /* bit per cvc_hw_dtype of attention */
		unsigned attn_fa1;  /* the same, FlashAttention-1's */
		unsigned mem;       /* bit per cvc_model_mem class */
	} seen[PROJ_SEEN_MAX];
	int nseen;
	int seen_dropped;       /* GPUs past PROJ_SEEN_MAX */
};

struct proj_pricer {
	char gpu[64];                 /* as the scenario names it */
	struct proj_used *used;       /* the ctx's record of priced collectives */
	double scale[5];              /* compute, hbm_bw, hbm_cap, intra, inter */
	int known;                    /* 0: GPU not in the catalog */
	const struct cvc_modelset *ms_scaled; /* spec with scaled peaks/HBM */
	const struct cvc_modelset *ms_base;   /* unscaled spec (links, membound) */
	double peak_flops[CVC_PROJ_NDTYPE]; /* per cvc_proj_dtype, scaled; 0 = none */
	int gemm_dt[CVC_PROJ_NDTYPE]; /* cvc_hw_dtype used per cvc_proj_dtype */
	double hbm_bytes;             /* scaled capacity */
	double power_w;               /* catalog TDP */
	double gpus_per_node;         /* catalog: the host (board, tray) */
	double nvlink_domain;         /* catalog: the NVLink domain (cvc_hw_domain) */
	double host_bw_gbps;          /* catalog: the link to the host, unidir.; 0 unknown */
	int id;                       /* slot, part of the compute-cache key */
	int seen;                     /* its entry in used->seen; -1 when full */
	/* fp8 GEMMs with 1x128 block scales against per-tensor ones, measured
	 * on this GPU's generation (the ctx's table), or NULL: none measured */
	const struct cvc_model_blockfp8 *blockfp8;
	/* NCCL collectives already priced on this pricer (price.c), or NULL */
	struct proj_cmemo *cmemo;
};

/* The pricer for sc's GPU and scale factors (cached in ctx).  NULL only on
 * allocation failure; an unknown GPU gives known = 0. */
const struct proj_pricer *proj_ctx_pricer(cvc_proj_ctx *ctx, const cvc_proj_scenario *sc);

/* The NVLink domain sc's collectives are priced on: its nvlink_domain when
 * given; else the catalog's domain of its GPU (p) when that spans several
 * hosts (NVL72), else gpus_per_node (an HGX board is its own domain, and
 * a scenario that sets the node size sets the domain with it). */
double proj_domain_of(const cvc_proj_scenario *sc, const struct proj_pricer *p);
/* 1 for a GPU of NVIDIA's catalog entries, 0 for any other. */
int proj_nvidia(const struct proj_pricer *p);
/* 1 for an NVIDIA GPU of compute capability 10 or newer (Blackwell on),
 * told by its FP4 tensor cores, which the older ones lack; 0 for any
 * other GPU. */
int proj_sm100(const struct proj_pricer *p);
/* The domain of a scenario whose nvlink_domain is resolved (or, with no
 * catalog at hand, gpus_per_node). */
double proj_domain(const cvc_proj_scenario *sc);

/* Seconds of one run of op (a decomposition's operator, cvc_project.h) on
 * p's GPU: the model query at the op's sizes (for collectives including
 * the latency of the nodes the group spans). */
double proj_op_s(const struct proj_pricer *p, const cvc_proj_op *op);

/*
 * What the priced operators rest on (docs/MODELS.md "Uncertainty"), per
 * component: GEMMs, attention, memory-bound ops, and the collectives of
 * each communication type.  Weights are count x time.
 */
enum { PU_GEMM, PU_ATTN, PU_MEM, PU_COLL0, PU_N = PU_COLL0 + CVC_PROJ_COMM_N };
struct proj_unc {
	double t[PU_N];       /* sum of count x time */
	double ts[PU_N];      /* sum of count x time x sigma */
	double ext[PU_N];     /* largest extrapolation ratio past what was measured */
	double tdef[PU_N];    /* count x time priced with nothing measured */
	double tcarry[PU_N];  /* count x time carried from another GPU or system */
};

/* proj_op_s() that also adds the op's price to u (u may be NULL). */
double proj_op_price(const struct proj_pricer *p, const cvc_proj_op *op, struct proj_unc *u);


/* ---- the host's side (host.c) ------------------------------------------- */

/* The host's time per operator launch cvc prices, us: the time per kernel
 * launch (the scenario's host_launch_us, else the measured one,
 * cvc_model_host_launch_us()) times the kernels a step launches per priced
 * operator; and its relative error (0 for a stated time). */
double proj_host_us(const cvc_proj_scenario *sc);
double proj_host_sigma(const cvc_proj_scenario *sc);
/* Those kernels per priced operator launch (963 / 296). */
double proj_host_launches_per_op(void);
/* Whether each micro-batch holds a host synchronisation (a dropless MoE
 * layer's token counts): the GPU cannot run ahead of the host past it. */
int proj_host_syncs(const cvc_proj_scenario *sc);

/* ---- activations offloaded to the host (offload.c) ----------------------- */

/* The step's wait for the copies of the cpu_offload_layers layers'
 * activations, or of the offload_modules' inputs, to and from the host
 * (r->offload_s, added to compute_s and step_s): m micro-batches of a stage
 * of `layers` layers, n[k] of kind k, whose forward and backward compute
 * fwd_s and bwd_s, after proj_mem_of() (mem_offload_gb).  A GPU with no
 * host link figure gets none.  *copy_s: the copies' seconds the wait moves
 * with (its interval's base, proj_offload_sigma()). */
struct proj_shape;
void proj_offload_apply(const cvc_proj_scenario *sc, const struct proj_pricer *p,
			const struct proj_shape *x, const double *n, double m,
			double layers, double fwd_s, double bwd_s, cvc_proj_result *r,
			double *copy_s);
/* The copies' relative standard error. */
double proj_offload_sigma(void);
/* The warning of an offloading scenario on such a GPU (after the
 * intervals, which write the warnings). */
void proj_offload_warn(const cvc_proj_scenario *sc, const struct proj_pricer *p,
		       cvc_proj_result *r);
/* Why Megatron-Core refuses sc's cpu_offload_layers beside the rest of its
 * layout (not a whole number below layers, pp > 1, recompute, CUDA
 * graphs) or its offload_modules (beside cpu_offload_layers, attn_proj
 * without core_attn, fused_group_mlp beside expert_fc1 or moe_act, an
 * expert module without experts); NULL when it runs them. */
const char *proj_offload_reason(const cvc_proj_scenario *sc);
/* stackfeat.c: why cuda_graphs full_iteration or fused_grouped_mlp cannot
 * run as the scenario gives them (Megatron-Core's prerequisites); NULL
 * when they can or are off. */
const char *proj_stack_reason(const cvc_proj_scenario *sc);

/* What proj_intervals() needs besides the result (interval.c). */
struct proj_interval_in {
	const struct proj_unc *layer; /* one layer's prices */
	double layer_w;               /* layers priced per step (micro-batches x layers) */
	const struct proj_unc *step;  /* the step's own operators */
	double bubble_f;              /* 1 + bubble / pipeline time */
	double step_compute_s;        /* the step's own compute (optimizer, casts) */
	double gap_sigma;             /* of the kernel gaps */
	/* a host-bound step: the host's launch work on the critical path,
	 * seconds (0 when the GPU sets the pace), and its sigma */
	double host_path_s, host_sigma;
	/* the MoE layers' compute on the critical path, seconds: its
	 * measured error (proj_moe_layer_sigma()) applies to all of it */
	double moe_path_s;
	/* activation copies to the host the GPU waits on (offload.c): the
	 * copies' seconds that move the wait, at proj_offload_sigma() */
	double offload_path_s;
};

/* Fills r's intervals (sigma, *_lo, *_hi) and warnings from its breakdown. */
void proj_intervals(const struct proj_interval_in *in, cvc_proj_result *r);
/* Sets them NaN / "" (intervals off, invalid layouts). */
void proj_intervals_off(cvc_proj_result *r);
/* Appends one "what: why" item to r's warnings ("; " between items), whole
 * or not at all. */
void proj_warn_add(cvc_proj_result *r, const char *item);

/* Compute-cache slot of a ctx: per-layer compute times keyed by shape. */
struct proj_ccache;
struct proj_ccache *proj_ctx_ccache(cvc_proj_ctx *ctx);

/* ---- selective recomputation's submodules (fields.c) --------------------- */

/* Megatron-Core's --recompute-modules, one bit each */
enum {
	PROJ_RC_CORE = 1, PROJ_RC_MOE_ACT = 2, PROJ_RC_NORM = 4, PROJ_RC_MLA_UP = 8,
	PROJ_RC_MLP = 16, PROJ_RC_MOE = 32, PROJ_RC_SHARED = 64,
	/* torchtitan's per-op selective checkpointing: every second matmul
	 * of a block forward again (project.c op_sac_gemms()) */
	PROJ_RC_ALTMM = 128
};
/* The modules named in text (words split by spaces, commas, brackets or
 * quotes; "" = core_attn, Megatron-Core's default) into *mask; NULL, or
 * the first word that names none. */
const char *proj_recompute_modules(const char *text, int *mask, char *bad, size_t badlen);

/* Megatron-Core's --offload-modules (fine-grained activation offloading),
 * one bit each: the module's input goes to the host */
enum {
	PROJ_OF_ATTN_NORM = 1, PROJ_OF_QKV = 2, PROJ_OF_CORE = 4, PROJ_OF_PROJ = 8,
	PROJ_OF_MLP_NORM = 16, PROJ_OF_FC1 = 32, PROJ_OF_ACT = 64,
	/* the routed experts' fused MLP (Transformer Engine's op fuser):
	 * everything it keeps */
	PROJ_OF_FUSED = 128
};
/* The modules named in text (split as proj_recompute_modules(); "" =
 * none) into *mask; NULL, or the first word that names none. */
const char *proj_offload_modules(const char *text, int *mask, char *bad, size_t badlen);
/* For a module-list field (recompute_modules, offload_modules): the first
 * word of text that names none of its modules (in bad), with the modules
 * it takes in *names; NULL when all do, and for any other key. */
const char *proj_modules_bad(const char *key, const char *text, char *bad, size_t badlen,
			     const char **names);

/* ---- FLOP conventions (flops.c) ------------------------------------------ */

enum proj_flops {
	PROJ_FLOPS_MEGATRON = 0,      /* Megatron-LM num_floating_point_operations */
	PROJ_FLOPS_MEGATRON_2021 = 1, /* Narayanan et al. 2021 eq. 3 (with recompute) */
	PROJ_FLOPS_PALM = 2,          /* Chowdhery et al. 2022: 6N + 12 L h s */
	PROJ_FLOPS_CVC = 3,           /* what cvc's mfu counts */
	PROJ_FLOPS_MEGATRON_CAUSAL = 4, /* the same count, attention causal (by mid-2025) */
	PROJ_FLOPS_N
};

/* Convention by name; -1 when unknown. */
int proj_flops_parse(const char *s);
const char *proj_flops_name(int conv);
/* "megatron, megatron-2021, ..." for messages. */
const char *proj_flops_names(void);
/* Model FLOPs of one training sequence of sc (finalized: ffn, kv_heads set). */
double proj_flops_per_seq(int conv, const cvc_proj_scenario *sc);
/* The tokens/s per GPU that tflops (TFLOP/s per GPU) are under conv over
 * sc (finalized); NaN when conv counts nothing. */
double proj_flops_tokens_per_s(int conv, const cvc_proj_scenario *sc, double tflops);

/* s as a JSON string literal, quotes included (NULL: ""). */
void proj_json_str(FILE *f, const char *s);

/* A number as scenario files write it: plain, or with K, M, G/B, T. */
int proj_parse_number(const char *s, double *out);
/* A flag word: true/yes/on/1 -> 1, false/no/off/0 -> 0 (as written);
 * returns 0, or -1 for any other text. */
int proj_parse_flag(const char *s, int *out);
/* cuda_graphs: a flag word, or Megatron-Core's --cuda-graph-impl value
 * (none -> 0; layers, transformer_engine, local -> 1; full, full_iteration,
 * 2 -> 2); returns 0, or -1 for any other text. */
int proj_parse_graphs(const char *s, int *out);
/* A PF_FLAG field's value: proj_parse_graphs() for cuda_graphs, else
 * proj_parse_flag(). */
int proj_parse_field_flag(const struct proj_field *fd, const char *s, int *out);

/* ---- layer kinds (layers.c) ----------------------------------------------- */

struct proj_shape;

/* A layer's sequence mixer and its FFN; a kind is the pair. */
enum proj_mixer { PROJ_MIX_ATTN = 0, PROJ_MIX_LOCAL = 1, PROJ_MIX_MAMBA = 2, PROJ_MIX_NONE = 3 };
enum proj_ffn_kind { PROJ_FK_DENSE = 0, PROJ_FK_MOE = 1, PROJ_FK_NONE = 2 };
/* a kind plus PROJ_KIND_BF16: the same layer kept in bf16 under a
 * low-precision dtype (bf16_layers_first / _last, lowprec.c) */
#define PROJ_KIND_BF16 12
#define PROJ_NKIND 24
#define PROJ_KIND(mix, ffn) ((mix) * 3 + (ffn))
#define PROJ_KIND_MIX(k) ((k) % PROJ_KIND_BF16 / 3)
#define PROJ_KIND_FFN(k) ((k) % 3)
#define PROJ_KIND_HP(k) ((k) >= PROJ_KIND_BF16)

/* The kind of a plain layer (attention and the model's FFN): every layer
 * of a uniform model, and the prediction modules' layers. */
static inline int proj_main_kind(const cvc_proj_scenario *sc)
{
	return PROJ_KIND(PROJ_MIX_ATTN, sc->experts > 1 ? PROJ_FK_MOE : PROJ_FK_DENSE);
}

/* Whether every layer is of one kind (no hybrid, MoE, bf16 first/last or
 * local-attention pattern crossing layers; local attention on every layer
 * is uniform too, of another kind). */
static inline int proj_layers_uniform(const cvc_proj_scenario *sc)
{
	if (proj_pattern_on(sc) || proj_layers_mixed(sc) || proj_bf16_layers_on(sc))
		return 0;
	return !(proj_window_on(sc) && sc->window_skip_freq >= 1);
}
/* The kind of layer i (0-based). */
int proj_kind_of(const cvc_proj_scenario *sc, double i);
/* n[k]: layers of kind k among the model's layers lo..hi-1. */
void proj_kinds_in(const cvc_proj_scenario *sc, double lo, double hi, double n[PROJ_NKIND]);
/* The kinds the model has (its layers, then the prediction modules'), by
 * first appearance, into order; returns how many. */
int proj_kinds_order(const cvc_proj_scenario *sc, int order[PROJ_NKIND]);
/* Whether any layer has the mixer (enum proj_mixer). */
int proj_has_kind(const cvc_proj_scenario *sc, int mixer);
/* x (the scenario's shape) as a layer of the kind. */
void proj_shape_kind(const cvc_proj_scenario *sc, const struct proj_shape *x, int kind,
		     struct proj_shape *xk);
/* proj_finalize()'s part for the layer patterns and the Mamba sizes; NULL
 * or why the model cannot be priced. */
const char *proj_layers_finalize(cvc_proj_scenario *sc);

/* ---- models by name (archs.c, hfconfig.c) ------------------------------------ */

/* One field of a model's published configuration, as a scenario value. */
struct proj_arch_kv {
	int field;       /* index in proj_fields */
	double num;      /* PF_NUM, PF_ENUM, PF_FLAG */
	const char *str; /* PF_STR */
};

#define PROJ_ARCH_MAX_KV 48

/* A model of the catalog (projector/archs.yaml) or read from a config.json:
 * its name and aliases, where the configuration is published (source) and
 * where its values were read (read), and the fields they set. */
struct proj_arch {
	const char *name, *source, *read;
	const char **aliases;
	size_t naliases;
	struct proj_arch_kv kv[PROJ_ARCH_MAX_KV];
	int nkv;
};

/* A set of models and the strings they point to. */
typedef struct proj_archs proj_archs;

/* An empty set (NULL when out of memory); proj_archs_free() accepts NULL. */
proj_archs *proj_archs_new(void);
void proj_archs_free(proj_archs *a);
/* The shipped catalog into *out (the caller frees it); CVC_ERR_NOMEM, or
 * CVC_ERR_INTERNAL with a message when the compiled-in file is malformed. */
cvc_status proj_archs_load(proj_archs **out, char *err, size_t errlen);
/* The model a name names (its name or an alias, in any case, punctuation
 * and parenthesised remarks ignored, with or without the "org/" of a
 * Hugging Face name); NULL when none. */
const struct proj_arch *proj_archs_find(proj_archs *a, const char *name);
size_t proj_archs_count(const proj_archs *a);
const struct proj_arch *proj_archs_at(const proj_archs *a, size_t i);
/* A copy of s kept as long as a (NULL when out of memory). */
const char *proj_archs_keep(proj_archs *a, const char *s);
/* Sets e's field key (any field name or alias) to the text val, checked
 * by the field's type; CVC_ERR_FORMAT with why, CVC_ERR_NOMEM. */
cvc_status proj_arch_set(proj_archs *a, struct proj_arch *e, const char *key, const char *val,
			 char *why, size_t whylen);
/* Writes e's fields into sc (strings borrowed from e's set). */
void proj_arch_apply(const struct proj_arch *e, cvc_proj_scenario *sc);
/* A Hugging Face config.json at path read as a model into *e, its strings
 * kept in pool.  CVC_ERR_FORMAT with "'path': ..." in err when the file is
 * not a config.json cvc can read (not JSON, a key of the wrong type, no
 * layers, hidden size, heads or vocabulary); the file's open and read
 * errors as cvc_file_read() gives them. */
cvc_status proj_hf_config_load(const char *path, proj_archs *pool, struct proj_arch *e, char *err,
			       size_t errlen);

/* ---- the step's decomposition (project.c) ---------------------------------- */

struct proj_layer_cost; /* ctx.h */

/* A scenario's sizes as the decomposition uses them (per GPU where split). */
struct proj_shape {
	/* f: the FFN width (each routed expert's in MoE); fs, ffs: the shared
	 * experts' total width and weights (MoE only, else 0) */
	double b, s, h, a, g, f, fs, V, E, k, t, c, e, et, T, dh, qkv, BA, ffw, ffs, Tm, gpn;
	/* hl: the width the routed experts take in and give back, and their
	 * tokens are permuted and exchanged in (LatentMoE's moe_latent; else
	 * h); lw: the two latent projections' weights (0 without them) */
	double hl, lw;
	/* MoE (Megatron-Core's token dispatchers, moe/token_dispatcher.py:
	 * "num_local_tokens: S/TP*B"): Te the tokens a rank's MoE layer routes
	 * (its sequence shard with sequence parallelism), Tx their routed
	 * copies it exchanges, etg the expert tensor-parallel ranks the
	 * exchanged copies are all-gathered over (1: none), so that Tm, the
	 * rows the rank's experts run, is Tx * etg */
	double Te, Tx, etg;
	/* multi-latent attention (mla set): query and kv latents rq, rkv, the
	 * rope part dr of the query/key heads; dqk, dv: query/key and value
	 * head widths (dh, dh without MLA); attw, attw_t: the attention
	 * block's GEMM weights, whole and on one tensor-parallel rank */
	double rq, rkv, dr, dqk, dv, attw, attw_t;
	int mla;
	int sp, moe, swiglu, dtype, recompute, unfused, attention, framework;
	int dropout; /* attention and residual dropout (a kernel of its own unfused) */
	int eager; /* torchtitan without torch.compile: eager.c */
	/* lowp: the layers' GEMMs in fp8 or 4 bits (the router, attention
	 * core, logits and activations stay 16-bit); gemm_sub: their ops'
	 * sub (1: efficiency not measured for the format, lowprec.c) */
	int lowp, gemm_sub, fp8_recipe, fp8_attn, ag_ovl, rs_ovl;
	/* MoE dispatch: the dispatcher (cvc_proj_dispatcher), both dispatches
	 * in fp8, NVLink domains a token may reach (0 = any), SMs the
	 * deepep / hybridep kernels hold (resolved from auto) */
	int disp, disp8;
	double gtopk, esms;
	/* the busiest EP rank's routed tokens over the mean (>= 1); router and
	 * permutation fused (Megatron-Core's --moe-router-fusion,
	 * --moe-permute-fusion) */
	double imb;
	int rfuse, pfuse;
	/* token drop padded to capacity (static shapes: no host sync per MoE
	 * layer, the experts CUDA-graphable) */
	int tdrop;
	/* the routed experts' fused grouped MLP (fused_grouped_mlp: their
	 * activation and its quantization in the GEMMs' epilogues) */
	int fgm;
	double mtp; /* multi-token prediction modules on the last stage */
	int rcm;    /* selective recompute's modules (PROJ_RC_*); 0 otherwise */
	int ofm;    /* fine-grained offloading's modules (PROJ_OF_*); 0: none */
	/* 3D tensor parallelism (tp3d.c): d3 set, grid tr x tc x td (1 x 1 x
	 * 1 in 1D); Td = tokens of a micro-batch per GPU outside the layers
	 * (T / td), tv = ranks the vocabulary is split over (t / td); ovl3 =
	 * AxoNN's overlap of its collectives (tp_overlap) */
	double tr, tc, td, Td, tv;
	int d3, ovl3;
	/* the layer's kind (layers.c): its mixer (enum proj_mixer) and no FFN
	 * (noffn); local attention's window (0: none) and whether in aligned
	 * chunks; the Mamba-2 mixer's heads, head width, state, groups, conv
	 * kernel and chunk, its inner width mh x mp and conv channels */
	int kind, mixer, noffn, wchunk, gated;
	double win, mh, mp, mn, mg, mk, mq, di, cdim;
};

/*
 * Where the decomposition's operators go.  One decomposition
 * (proj_layer_ops(), proj_step_ops()) serves both the projector and
 * cvc_proj_scenario_ops():
 *   pricing (p set):  every op_*() returns the seconds of one run of the
 *                     operator, and the decomposition combines them;
 *   listing (fn set): every operator goes to fn with how many times the
 *                     step runs it; op_*() return 0.
 * So the list `cvc calibrate --plan` measures cannot drift from what the
 * projector prices.  The counts are not used when pricing; the arithmetic
 * that consumes the prices must agree with them, which
 * tests/unit/test_calibrate.c checks by pricing the list.
 */
struct proj_sink {
	const struct proj_pricer *p;
	cvc_proj_op_fn fn;
	void *user;
	size_t n;
	int stop;
	int dtype;          /* of the transformer layers' GEMMs */
	int gemm_sub;       /* their ops' sub (struct proj_shape) */
	int attn_backend;   /* cvc_model_attn_backend of the fused attention */
	double kernels;     /* kernel launches priced since the last reset */
	/* of them, the chunks a split GEMM launches past its first: Transformer
	 * Engine's TP overlap splits the GEMM inside one call, its C++ loop
	 * launching the chunks, so they cost the host no work of an operator's
	 * own (proj_gemm3()) */
	double chunk_kernels;
	double margin_s;    /* GEMM time lost to SMs held back for communication */
	double scale_hbm, scale_intra, scale_inter;
	struct proj_unc *unc; /* where prices are accounted (NULL: intervals off) */
};

/* Parameters per GPU on the heaviest stage (layers + embedding), and the
 * bytes a parameter's weight and gradient move in the data-parallel
 * collectives (memory.c counts the bytes each keeps, by framework). */
struct proj_params {
	double p_dense, p_exp, p_layer, p_stage, p_total, wb, gbytes;
	/* bytes a layer's weight moves in a parameter gather: wb, or with
	 * fp8_param_gather its fp8 bytes in the quantized layers */
	double wag;
	double p_vocab; /* of p_stage: the embedding and, untied, the output layer */
	double p_layer_d; /* a dense layer's (MoE models' dense layers) */
	double p_mtp;     /* of p_stage: the prediction modules' own (not their layers) */
	double L, Ld;     /* the stage's layers of the main shape, and dense ones */
	/* by layer kind: the stage's layers, one layer's parameters per GPU
	 * (experts included), and the MoE layers' count */
	double n[PROJ_NKIND], p_kind[PROJ_NKIND], L_moe;
	double p_mtp_all; /* of p_total: the prediction modules' */
	/* of p_total: the routed experts' weights a token does not run (E - k
	 * of E per MoE layer), so p_total - p_mtp_all - p_idle is what one
	 * token activates (the "active" parameters published beside totals) */
	double p_idle;
};

/* Step-level operators: their prices, each for one run. */
struct proj_step_cost {
	/* ZeRO-3: one layer's gather / scatter, by layer kind */
	double fsdp_ag[PROJ_NKIND], fsdp_rs[PROJ_NKIND];
	double pp_one;             /* one pipeline activation transfer */
	double dp_tot, dp_last;    /* ZeRO 0-2 gradient sync: all buckets, last one */
	double dp_ag;              /* ZeRO 1-2: updated parameters gathered back */
	double hsdp_tot, hsdp_last; /* hybrid ZeRO-3: shard all-reduce across groups */
	double opt;                /* optimizer update */
	double wcast;              /* fp8: every weight cast (and transposed) once */
};

void proj_shape_of(const cvc_proj_scenario *sc, struct proj_shape *x);
/* LatentMoE's width of sc's routed experts (moe_latent of an MoE model),
 * 0 without it: the one test the shape and the FLOP count share. */
double proj_latent_width(const cvc_proj_scenario *sc);
/* The dense layers of an MoE model with a layer pattern (moe_first_dense,
 * moe_layer_freq): x as a dense layer of width ffn. */
void proj_shape_dense(const cvc_proj_scenario *sc, const struct proj_shape *x,
		      struct proj_shape *xd);
/* Layers of the main shape (MoE layers of an MoE model, all of a dense
 * one) among the model's layers lo..hi-1 (0-based). */
double proj_main_layers(const cvc_proj_scenario *sc, double lo, double hi);
/* Stage i's layers and, of them, the main shape's, given the first, each
 * middle and the last stage's layers (fml, from proj_stage_layers()). */
void proj_stage_mix(const cvc_proj_scenario *sc, const double fml[3], double i, double *layers,
		    double *nmain);
/* Stage i's layers by kind (n[k]), the prediction modules' on the last. */
void proj_stage_kinds(const cvc_proj_scenario *sc, const double fml[3], double i,
		      double n[PROJ_NKIND]);
/* Megatron-Core's --moe-layer-freq as a list ("([0]*3+[1]*58)",
 * "[0, 1, 0, 1]", 1 = MoE layer) as cvc's pattern: *first_dense dense
 * layers, then an MoE layer every *freq-th; *n layers in all.  NULL, or
 * what is wrong: *other_shape set when the list is well written but of
 * another shape (unevenly spaced, no MoE layer). */
const char *proj_parse_layer_pattern(const char *text, double *first_dense, double *freq,
				     double *n, int *other_shape);
/* The stages whose pace and memory are looked at: with every layer alike
 * the first, a middle one and the last (the middle ones are alike); with
 * a layer pattern every stage.  Sets *n to their number and returns the
 * index of the i-th. */
double proj_stage_pick(const cvc_proj_scenario *sc, int i, int *n);
/*
 * What a scenario's pipeline stages hold, worked out once for an
 * evaluation: the heaviest stage, the slowest one, memory and the
 * parameters each ask it of every stage they look at (stages.c).  A model
 * whose layers are all alike, with no layout, has its stages counted in a
 * compare, and stages past PROJ_PLAN_STAGES are asked per stage: neither
 * is kept.
 */
#define PROJ_PLAN_STAGES 64
struct proj_plan {
	const char *why;           /* proj_stage_layers()'s reason, or NULL */
	double fml[3];             /* its first, middle and last stage's layers
				    * (layers / pp each where it gave a reason) */
	double N[PROJ_NKIND];      /* the model's layers by kind */
	int ord[PROJ_NKIND], nord; /* proj_kinds_order() */
	int nst;                   /* stages kept in st (0: none) */
	double st[PROJ_PLAN_STAGES][PROJ_NKIND]; /* stage i's layers by kind */
};
void proj_plan_of(const cvc_proj_scenario *sc, struct proj_plan *pl);
/* Stage i's layers by kind (proj_stage_kinds()), as the plan keeps them. */
void proj_plan_stage(const cvc_proj_scenario *sc, const struct proj_plan *pl, double i,
		     double n[PROJ_NKIND]);
/* The stage holding the most parameters: its layers by kind. */
void proj_heaviest_stage(const cvc_proj_scenario *sc, const struct proj_shape *x,
			 const struct proj_plan *pl, double n[PROJ_NKIND]);
/* The layers' GEMMs in a low-precision format (lowprec.c): what its
 * quantize kernels move and its quantized tensors occupy, per element. */
struct proj_lowp {
	double cast, amax;     /* an activation or gradient: the cast (read 16-bit,
				* write both layouts with their scales) and the amax
				* pass before it (0: none) */
	double wcast, wamax;   /* the same for a weight, once per step */
	double saved;          /* a GEMM input kept for backward */
	double wcache;         /* a cached weight, both layouts */
	int unmeasured;        /* GEMM efficiency carried from another format */
	int block_scaled;      /* fp8 GEMMs reading MXFP8 block scales: the
				* measured cost over per-tensor fp8 (ceiling.c) */
};
/* The share of sc's layers in the low-precision format (the rest kept in
 * bf16 by bf16_layers_first / _last): what their weights' casts and
 * cached copies are counted over, a stage taken as the model's average. */
double proj_lowp_share(const cvc_proj_scenario *sc);
/* Whether the quantized layers' weights are held only in fp8
 * (fp8_param_gather where Megatron-Core applies it). */
int proj_fp8_params(const cvc_proj_scenario *sc);
/* Bytes a parameter's optimizer moments hold: Adam's two or SGD's
 * momentum, each fp32 or bf16 (optimizer_moments; memory.c). */
double proj_moments_bytes(const cvc_proj_scenario *sc);
/* Warnings for the fields sc sets that its layout does not use (unused.c). */
void proj_unused_warn(const cvc_proj_scenario *sc, cvc_proj_result *r);
/* x's format and recipe (x->lowp set). */
void proj_lowp_cast(const struct proj_shape *x, struct proj_lowp *c);
/* The quantize kernels of one layer (forward runs cf, backward cb), their
 * seconds added to *mf / *mb. */
void proj_lowp_cast_ops(struct proj_sink *k, const struct proj_shape *x, double cf, double cb,
			double *mf, double *mb);
/* The attention block's GEMM weights of a finalized scenario (QKV or MLA's
 * projections, the output projection), whole; *per_rank (may be NULL):
 * on one of tp ranks (MLA's down projections are not split). */
double proj_attn_weights(const cvc_proj_scenario *sc, double tp, double *per_rank);
/* k set to price with p (fn NULL) or to list to fn (p NULL). */
void proj_sink_init(struct proj_sink *k, const cvc_proj_scenario *sc, const struct proj_pricer *p,
		    cvc_proj_op_fn fn, void *user);
/* The operators of one layer, into lc; of the first and the last stage
 * (embedding, logits and loss), into lc's first_* and last_*. */
void proj_layer_ops(struct proj_sink *k, const struct proj_shape *x, double M, double L,
		    struct proj_layer_cost *lc);
void proj_ends_ops(struct proj_sink *k, const struct proj_shape *x, double M,
		   struct proj_layer_cost *lc);
/* Parameters of a stage of L layers of shape x and Ld dense ones. */
void proj_params_of(const cvc_proj_scenario *sc, const struct proj_shape *x, double L,
		    double Ld, struct proj_params *P);
/* Parameters of a stage holding n[k] layers of each kind. */
void proj_params_kinds(const cvc_proj_scenario *sc, const struct proj_shape *x,
		       const double n[PROJ_NKIND], struct proj_params *P);
/* The same, the model's layers by kind (N, proj_kinds_in() of them all) given. */
void proj_params_kinds_n(const cvc_proj_scenario *sc, const struct proj_shape *x,
			 const double n[PROJ_NKIND], const double N[PROJ_NKIND],
			 struct proj_params *P);
/* One layer of shape x's parameters, whole (*all) and per GPU (*gpu:
 * tensor-parallel and, of the experts, expert-parallel shares); *exp: of
 * *gpu, the experts'. */
void proj_layer_params(const struct proj_shape *x, double *all, double *gpu, double *exp);
/* The step-level operators (ZeRO/FSDP, pipeline, data parallel sync,
 * optimizer, fp8 weight casts), into st. */
void proj_step_ops(struct proj_sink *k, const cvc_proj_scenario *sc, const struct proj_shape *x,
		   const struct proj_params *P, double M, struct proj_step_cost *st);
/* Whether sc asks for 3D tensor parallelism (any of tp_row, tp_col,
 * tp_depth set). */
int proj_is_3d(const cvc_proj_scenario *sc);
/* The grid of a 3D layout: each axis, 1 where not given. */
void proj_grid_of(const cvc_proj_scenario *sc, double *tr, double *tc, double *td);

/* The decomposition's operator makers (project.c), shared with tp3d.c:
 * each lists the operator (count runs per step) or returns the seconds of
 * one run. */
double proj_op_gemm_dt(struct proj_sink *k, int dtype, double m, double n, double kk,
		       double batch, double count, int stage);
/* A weight-gradient GEMM (K: the tokens), flagged for its recipe. */
double proj_op_wgrad_dt(struct proj_sink *k, int dtype, double m, double n, double kk,
			double batch, double count, int stage);
/* A grouped GEMM: groups GEMMs of m x n x kk in one launch (MoE experts);
 * _wggemm: their weight gradients. */
double proj_op_ggemm(struct proj_sink *k, int dtype, double m, double n, double kk,
		     double groups, double count);
double proj_op_wggemm(struct proj_sink *k, int dtype, double m, double n, double kk,
		      double groups, double count);
double proj_op_attn(struct proj_sink *k, int dtype, double batch, double heads, double kv_heads,
		    double sq, double skv, double head_dim, int backward, double count);
double proj_op_mem(struct proj_sink *k, int cls, double bytes, double count, int stage);
/* torchtitan's RMSNorm, SwiGLU (per element of one input) and rope (per
 * element of q and k) as eager PyTorch runs them, over elts elements
 * (eager.c); the time of one run, runs counted */
double proj_eager_norm(struct proj_sink *k, const struct proj_shape *x, double elts, double runs,
		       int backward);
double proj_eager_act(struct proj_sink *k, const struct proj_shape *x, double elts, double runs,
		      int backward);
double proj_eager_rope(struct proj_sink *k, const struct proj_shape *x, double elts, double runs);
double proj_op_coll(struct proj_sink *k, int kind, int comm, double bytes, double group,
		    double per_node, double count);
/* proj_op_coll() of one stage's own operators (st: enum cvc_proj_stage). */
double proj_op_coll_at(struct proj_sink *k, int kind, int comm, double bytes, double group,
		       double per_node, double count, int st);
/* An expert-parallel exchange by DeepEP or HybridEP (cvc_model_ep_call):
 * nvl_bytes to the distinct ranks reached, net_bytes leaving the domain. */
double proj_op_ep(struct proj_sink *k, int backend, int phase, double nvl_bytes,
		  double net_bytes, double group, double per_node, double sms, double hidden,
		  double count);

/* mamba.c: a Mamba-2 mixer's SSD scan, forward into *af and backward into
 * *ab (cf, cb runs), and its conv1d and gated norm, added to *mf / *mb. */
void proj_mamba_scan_ops(struct proj_sink *k, const struct proj_shape *x, double cf, double cb,
			 double *af, double *ab);
void proj_mamba_mem_ops(struct proj_sink *k, const struct proj_shape *x, double cf, double cb,
			double *mf, double *mb);

/* flops.c: one layer of shape x per token: the GEMM weights a token runs
 * through (*w; of them the sequence mixer's, *wmix) and, per sequence,
 * the forward FLOPs of its mixer's core (*core: attention's QK^T and PV
 * over the pairs MFU counts, the SSD's matmuls). */
void proj_kind_flops(const struct proj_shape *x, double *w, double *wmix, double *core);

/* How often a layer's operators run per step (project.c). */
struct proj_layer_runs {
	int full;
	double M, L, cf, cb, per;
};

/* The forward, dgrad and wgrad times of a layer's four GEMMs (for MoE,
 * the router rides with up and the experts' grouped GEMMs stand for up and
 * down). */
struct proj_layer_gemms {
	double qkv_f, qkv_d, qkv_w, pr_f, pr_d, pr_w, up_f, up_d, up_w, dn_f, dn_d, dn_w;
	/* the FFN block as Megatron-Core's combined 1F1B schedules it (its
	 * "mlp" node: the experts or the dense FFN, the shared experts, the
	 * activation; not the router or the permutation): forward, dgrad
	 * with the activation's backward, wgrad */
	double mlp_f, mlp_d, mlp_w;
	/* selective recompute's modules (x->rcm) run forward again in the
	 * backward: their GEMMs' and their other operators' forward seconds */
	double rc_gemm, rc_mem;
	/* kernel launches of the experts (their grouped GEMMs and activation)
	 * per layer, fwd + bwd: what a CUDA graph of the layer leaves out */
	double exp_kernels;
};

/* project.c: one GEMM forward and its dgrad and wgrad, run cf and cb times
 * per step (split and slowed by TP overlap, 1 / 1 / 1 without it); returns
 * the forward time, *dgrad and *wgrad the backward ones. */
double proj_gemm3(struct proj_sink *k, int dtype, double m, double n, double kk, double cf,
		  double cb, int stage, double split_f, double split_b, double slow_f,
		  double *dgrad, double *wgrad);
/* project.c: forward runs of a submodule's operators, again in the
 * backward when selective recompute names it (bit of x->rcm). */
double proj_fwd_runs(const struct proj_shape *x, const struct proj_layer_runs *n, int bit);
/* project.c: a dense FFN of width w split by tp into G's up and down GEMMs. */
void proj_dense_ffn_gemms(struct proj_sink *k, const struct proj_shape *x, double w, double cf,
			  double cb, double split_ag, double split_rs, double slow,
			  struct proj_layer_gemms *G);
/* Relative error of an MoE layer's compute as cvc prices it, measured on
 * the one MoE layer traced (moe.c). */
double proj_moe_layer_sigma(void);
/* moe.c: an MoE layer's FFN (router, experts, shared experts, permutation)
 * into G's up and down GEMMs and *mf / *mb. */
void proj_moe_ffn_ops(struct proj_sink *k, const struct proj_shape *x,
		      const struct proj_layer_runs *n, struct proj_layer_gemms *G, double *mf,
		      double *mb);
/* moe.c: the expert-parallel dispatch and combine of one layer into lc. */
void proj_ep_comm_ops(struct proj_sink *k, const struct proj_shape *x,
		      const struct proj_layer_runs *n, struct proj_layer_cost *lc);

/* tp3d.c: the operators of one layer under 3D tensor parallelism, into lc
 * (compute, the row/column all-reduces and the depth all-gathers and
 * reduce-scatters). */
void proj_layer3d_ops(struct proj_sink *k, const struct proj_shape *x,
		      const struct proj_layer_runs *n, struct proj_layer_cost *lc);
/* tp3d.c: the layout checks of a 3D grid; sets sc->tp to the grid's size.
 * NULL, or why the layout is impossible. */
const char *proj_grid_reason(cvc_proj_scenario *sc);
/* tp3d.c: activation bytes per GPU kept by one layer for its backward, per
 * micro-batch (full recompute: the layer's input), and the working set of
 * one layer re-materialised. */
void proj_act3d(const cvc_proj_scenario *sc, const struct proj_shape *x, double *input,
		double *working);

/* ZeRO/FSDP shard group of sc. */
double proj_shard_of(const cvc_proj_scenario *sc);
/* The expert data-parallel group of a data-parallel group of `group` ranks
 * (stepops.c). */
double proj_expert_group(const cvc_proj_scenario *sc, double group);
/* The data-parallel gradient bucket in bytes: bucket_mb, or the
 * framework's own when it is auto (stepops.c). */
double proj_bucket_bytes(const cvc_proj_scenario *sc, double gbytes);

/* project.c: layers on the first, each middle and the last pipeline stage
 * (all equal with pp = 1); NULL, or why the layout cannot be split. */
const char *proj_stage_layers(const cvc_proj_scenario *sc, double *first, double *mid,
			      double *last);
/* Layers of the stage that holds the most. */
double proj_stage_max_layers(const cvc_proj_scenario *sc);

/* pplayout.c: pipeline layouts.  Whether sc's stages come from a layout:
 * pp_layout (Megatron-Core's --pipeline-model-parallel-layout), or the
 * balanced layout when neither the even split, Megatron-Core's
 * account-for-embedding/loss split nor first/last_stage_layers apply. */
static inline int proj_pp_layout_on(const cvc_proj_scenario *sc)
{
	double pp = sc->pp, S = pp * (sc->vpp >= 1 ? sc->vpp : 1), L = sc->layers;

	if (!(pp > 1))
		return 0;
	if (sc->pp_layout && sc->pp_layout[0])
		return 1;
	if (sc->first_stage_layers > 0 || sc->last_stage_layers > 0)
		return 0;
	/* neither the even split nor the account-for-embedding/loss ones */
	return proj_fmod(L, S) != 0 && !(proj_fmod(L + 2, S) == 0 && (L + 2) / S >= 1) &&
	       proj_fmod(L + 1, S) != 0;
}
/* pp_layout checked against layers, mtp_layers and pp as Megatron-Core
 * checks it; *vpp its virtual stages per rank.  NULL or why not. */
const char *proj_pp_layout_check(const cvc_proj_scenario *sc, double *vpp);
/* The balanced layout: NULL, or why the layers fill no pp*vpp stages. */
const char *proj_pp_balanced_check(const cvc_proj_scenario *sc);
/* Rank i's decoder layers by kind (n) and prediction layers (*mtp). */
void proj_pp_layout_rank(const cvc_proj_scenario *sc, double i, double n[PROJ_NKIND], double *mtp);
/* The pipeline rank of the prediction modules (their m layers): a layout's,
 * else the last (with the loss). */
double proj_pp_mtp_rank(const cvc_proj_scenario *sc);

/* memory.c: r's memory figures (mem_*_gb, hbm_gb, fits); m micro-batches,
 * the stages as pl has them. */
/* The bytes one micro-batch's layers of a stage (n[k] of kind k) send to
 * the host under fine-grained offloading (x->ofm; 0 without). */
double proj_offload_mb_bytes(const cvc_proj_scenario *sc, const struct proj_shape *x,
			     const double n[PROJ_NKIND]);
void proj_mem_of(const cvc_proj_scenario *sc, const struct proj_shape *x,
		 const struct proj_params *P, const struct proj_pricer *p, double m,
		 const struct proj_plan *pl, cvc_proj_result *r);

/* ---- local SGD / DiLoCo: the token side (localsgd.c) ----------------------- */

/* Evaluation loss of synchronous data parallel at N parameters, and of
 * DiLoCo with M replicas at H = 30 (Charles et al. 2025, Table 7; between
 * measured M linear in log M, past 8 Table 10's M^0.0116). */
double proj_lsgd_loss_dp(double N);
double proj_lsgd_loss_m(double N, double M);
/* Relative loss penalty p = L / L_DP - 1 of M replicas syncing every H
 * steps (0 at H = 1); past H = 30 plus Douillard et al. 2023's ln H term. */
double proj_lsgd_penalty(double N, double M, double H);
/* Hoffmann et al. 2022's L(N, D) (eq. 10). */
double proj_lsgd_chinchilla(double N, double D);
/* D'/D with L(N, D')(1 + p) = L(N, D); INFINITY when no D' exists. */
double proj_lsgd_token_factor(double N, double D, double p);
/* Replicas of the outer exchange: clusters, or dp*cp in one cluster. */
double proj_lsgd_replicas(const cvc_proj_scenario *sc);
/* r's loss_penalty_pct, token_factor(_lo/_hi), eff_tokens_per_s(_lo/_hi)
 * and days_to_loss from its throughput (after flops_and_costs); warn:
 * append out-of-domain warnings. */
void proj_lsgd_apply(const cvc_proj_scenario *sc, const struct proj_params *P, int warn,
		     cvc_proj_result *r);

/* run.c: derives gpus/nodes/dp/kv_heads/ffn; returns NULL or a reason. */
const char *proj_finalize(cvc_proj_scenario *sc);
/* sc's model's parameters in billions as published totals count them
 * (multi-token-prediction modules left out; its layout ignored) and, in
 * *active_b when not NULL, what one token runs; NaN when the model does
 * not finalize. */
double proj_params_total_b(const cvc_proj_scenario *sc, double *active_b);
/* evaluate.c: evaluation with the ctx (finalize already done). */
void proj_evaluate(cvc_proj_ctx *ctx, const cvc_proj_scenario *sc, cvc_proj_result *r);

#endif
