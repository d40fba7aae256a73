/*
 * cvc_model.h - hardware catalog and operator performance models: GEMM,
 * grouped GEMM, attention, memory-bound ops and collectives, each written
 * relative to a spec sheet (peak FLOP/s, HBM bandwidth, SM count, link
 * bandwidths) so that an efficiency fitted on one GPU carries over to
 * another GPU through its spec sheet.
 *
 * Three layers:
 *   1. cvc_hw_catalog: GPU and system specs (shipped models/hw/catalog.csv
 *      compiled in, plus user files in the same format).
 *   2. cvc_model_fit: one fitted model (params, domain, data source,
 *      quality) and cvc_model_row: the measured rows it is fitted from.
 *      Fitting uses GSL; fits are stored in the database (models table).
 *   3. cvc_modelset: everything needed to predict for one GPU/system,
 *      loaded once (from a db, or defaults when db is NULL); the predict
 *      functions read it only: no allocation, no SQL, no locks, so they
 *      are safe to call from many threads at once on one modelset and cost
 *      well under 100 ns each.
 *
 * Units at this interface: times in microseconds (double), sizes in bytes
 * (int64_t), bandwidth in GB/s (1e9 bytes/s), throughput in TFLOP/s.
 */
#ifndef CVC_MODEL_H
#define CVC_MODEL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "cvc.h"
#include "cvc_db.h"
#include "cvc_vocab.h" /* dtypes, collectives, memory-bound classes */

/* ---- hardware catalog ---------------------------------------------------- */

#define CVC_HW_NAME_MAX 48
#define CVC_HW_SOURCE_MAX 200

/*
 * One GPU (kind "gpu") or one system built of a GPU (kind "system": a GPU
 * plus node shape and links, e.g. "dgx-h100", "a3-mega").  A system row
 * inherits every figure it leaves empty from its base GPU.  0 means unknown.
 */
typedef struct cvc_hw_spec {
	char name[CVC_HW_NAME_MAX];   /* canonical name, e.g. "H100-SXM" */
	char kind[8];                 /* "gpu" or "system" */
	char base[CVC_HW_NAME_MAX];   /* GPU of a system row; "" for a gpu row */
	char vendor[16];              /* "NVIDIA", "AMD" */
	double peak_tflops[CVC_HW_NDTYPE]; /* dense (no sparsity) peak per dtype */
	double hbm_bw_gbps;           /* HBM bandwidth */
	double hbm_gb;                /* HBM capacity, GB */
	int sm_count;                 /* SMs (NVIDIA) or CUs (AMD) */
	double intra_bw_gbps;         /* NVLink/xGMI per GPU, unidirectional */
	int gpus_per_node;            /* GPUs of one host (HGX board, GB200 compute
					 tray): its memory and NICs */
	int nvlink_domain;            /* GPUs one NVLink fabric joins (NVL72: 72
					 over 18 trays); 0 = gpus_per_node */
	int intra_mesh;               /* 1: no switch, each GPU's links split evenly
					 over the node's other GPUs (a group of k of
					 the node's P gets (k-1)/(P-1) of intra_bw) */
	double inter_bw_gbps;         /* typical NIC bandwidth per GPU, unidir. */
	double host_bw_gbps;          /* the link to the host's memory per GPU,
					 unidirectional (PCIe, NVLink-C2C); 0 unknown */
	double tdp_w;
	double sfu_texp;              /* exponentials per second the special function
					 units issue (MUFU.EX2, softmax), 1e12; 0 unknown */
	char source[CVC_HW_SOURCE_MAX]; /* where the figures come from */
} cvc_hw_spec;

typedef struct cvc_hw_catalog cvc_hw_catalog;

/* The GPUs of spec's NVLink domain: nvlink_domain, else its host's
 * gpus_per_node (an HGX or DGX board is its own domain); 0 unknown. */
CVC_API int cvc_hw_domain(const cvc_hw_spec *spec);

/*
 * The tensor path spec runs a GEMM of dt on, in *as: dt itself when the
 * catalog gives spec a peak for it, else the nearest 16- or 32-bit one
 * (bf16 and fp16 stand in for each other, then tf32; tf32 falls to fp32),
 * the path projector/price.c prices a layout's dtype on.  An 8- or 4-bit
 * format has none to fall to: Transformer Engine refuses fp8 below Hopper
 * and Ada.  Returns CVC_OK; CVC_ERR_NOTFOUND when spec has no path for dt
 * (fp8 on A100 or V100: the layout 'cvc project' marks impossible, *as
 * left as dt); CVC_ERR_USAGE for NULL or a dtype out of range.
 */
CVC_API cvc_status cvc_hw_dtype_path(const cvc_hw_spec *spec, cvc_hw_dtype dt, cvc_hw_dtype *as);

/*
 * Makes a catalog holding the shipped entries (models/hw/catalog.csv,
 * compiled in), then, when the environment variable CVC_CATALOG names a
 * file, that file's entries too (same format; an entry with the name of a
 * shipped one replaces it).  *out is owned by the caller: free with
 * cvc_hw_catalog_free().  On failure *out is still set when it could be
 * made (read cvc_hw_catalog_errmsg()); NULL only on CVC_ERR_NOMEM.
 * A loaded catalog is immutable and may be shared between threads.
 */
CVC_API cvc_status cvc_hw_catalog_new(cvc_hw_catalog **out);

/*
 * Adds the entries of a user catalog file (CSV, the shipped header; lines
 * starting with '#' are comments).  A malformed line fails with
 * CVC_ERR_FORMAT and "'<path>': line N: expected ..." in the errmsg; the
 * catalog then keeps the entries it had before the call.
 */
CVC_API cvc_status cvc_hw_catalog_load(cvc_hw_catalog *cat, const char *path);

/* Same, from text in memory; name is used in messages. */
CVC_API cvc_status cvc_hw_catalog_load_text(cvc_hw_catalog *cat, const char *name,
					    const char *text, size_t len);

/* Accepts NULL. */
CVC_API void cvc_hw_catalog_free(cvc_hw_catalog *cat);

/* Message of the last failure; "" when none.  Never NULL. */
CVC_API const char *cvc_hw_catalog_errmsg(const cvc_hw_catalog *cat);

/*
 * Finds a spec by name, forgivingly: case, '-', '_' and ' ' are ignored,
 * canonical names, aliases and trace device names all resolve
 * ("H100", "h100-sxm", "NVIDIA H100 80GB HBM3" -> H100-SXM; "A100" ->
 * A100-SXM-80GB; "NVIDIA A100-SXM4-40GB", "NVIDIA A100-PG509-200" ->
 * A100-SXM-40GB; "Tesla V100-SXM2-32GB" -> V100-SXM2-32GB), and so do
 * XLA device keys ("sm_90" -> H100-SXM, "sm_100" -> B200).  Returns a
 * pointer borrowed from cat (valid until it is freed), or NULL.
 */
CVC_API const cvc_hw_spec *cvc_hw_catalog_lookup(const cvc_hw_catalog *cat,
						 const char *name);

/*
 * Finds a spec by a name a person typed (--gpu, --system, a scenario's
 * gpu): its canonical name or one of its aliases, with case, '-', '_',
 * ' ' and vendor words ("NVIDIA", "AMD Instinct") ignored; never a prefix
 * or a guess: "A100-40" is no A100, whatever cvc_hw_catalog_lookup, which
 * reads the device names traces carry, would make of it.  kind: "gpu",
 * "system", or NULL for either.  Returns a pointer borrowed from cat, or
 * NULL when nothing matches.
 */
CVC_API const cvc_hw_spec *cvc_hw_catalog_find(const cvc_hw_catalog *cat, const char *name,
					       const char *kind);

/*
 * For the error when cvc_hw_catalog_find() finds nothing: the canonical
 * names of kind (NULL: any) nearest to name, best first, into out[0..n)
 * (n at most 8; the strings are borrowed from cat): the entries sharing
 * the most of name's words ("A100-40": a100, 40 -> A100-SXM-40GB), then
 * the smallest edit distance to the entry's name or an alias; an entry
 * sharing no word and more than a third of the name's letters away is
 * none.  Returns how many were written.
 */
CVC_API size_t cvc_hw_catalog_nearest(const cvc_hw_catalog *cat, const char *name,
				      const char *kind, const char **out, size_t n);

/* Entries in catalog order, for listing; NULL past the end. */
CVC_API size_t cvc_hw_catalog_count(const cvc_hw_catalog *cat);
CVC_API const cvc_hw_spec *cvc_hw_catalog_at(const cvc_hw_catalog *cat, size_t i);

/*
 * The gpu entry most like target (a GPU whose fitted model can be carried
 * over), among the names in candidates[0..n): target's own GPU when it is
 * one of them (by name, or a system row's base GPU: a spec scaled for a
 * what-if keeps its silicon's measurements, rather than jump to another
 * GPU's where its scaled figures cross over), else by distance on log peak
 * bf16, log HBM bandwidth and log SM count (a catalog GPU's own, unscaled),
 * same vendor preferred.  Returns
 * the index in candidates, or -1 when none resolves.
 */
CVC_API int cvc_hw_closest(const cvc_hw_catalog *cat, const cvc_hw_spec *target,
			   const char *const *candidates, size_t n);

/* ---- fitted models --------------------------------------------------------- */

/* Stable values: the kind column of the models table holds the name. */
typedef enum cvc_model_kind {
	CVC_MODEL_GEMM = 1,       /* params: see models/opmodel_int.h GP_* */
	CVC_MODEL_COLLECTIVE = 2, /* params: regimes of latency + bytes/bw */
	CVC_MODEL_MEMBOUND = 3,
	CVC_MODEL_ATTENTION = 4
} cvc_model_kind;

/* "gemm", "collective", "membound", "attention"; NULL when out of range. */
CVC_API const char *cvc_model_kind_name(cvc_model_kind k);

#define CVC_MODEL_MAXPARAM 16

/*
 * A collective's large-message level (docs/MODELS.md "Collectives"): on
 * the rows of 8 MiB and more, t = (S + fill) / algbw, fitted on relative
 * error; with the NIC bandwidth of the fitted cluster it places the log on
 * the topology, so the projector can carry it to other node counts, NICs
 * and algorithms.
 */
typedef struct cvc_model_coll_level {
	int valid;                  /* 0: too few large rows */
	double fill_bytes;          /* pipeline fill, as bytes at algbw */
	double algbw_gbps;          /* large-message algorithm bandwidth */
	double min_bytes;           /* smallest row it was fitted on */
	double mape;                /* %, on its rows */
	double extrap_mape;         /* %, fitted on the smaller half, scored on
				       the larger; NaN when fewer than 4 rows */
	double b_node_gbps;         /* NIC bandwidth of one node of the fitted
				       cluster (catalog: per-GPU rate x GPUs per
				       node), one direction */
	char algo[16];              /* NCCL_ALGO the log forced, "" = NCCL's */
} cvc_model_coll_level;

typedef struct cvc_model_fit {
	int64_t id;                 /* models.id; 0 when not stored */
	cvc_model_kind kind;
	char gpu[CVC_HW_NAME_MAX];  /* canonical catalog GPU name */
	char system[CVC_HW_NAME_MAX]; /* collectives: system name ("" = any) */
	cvc_hw_dtype dtype;         /* gemm/attention */
	cvc_model_coll coll;        /* collectives */
	int nranks;                 /* collectives: group size fitted (0 = any) */
	int gpus_per_node;          /* collectives: 0 = unknown */
	int nparams;
	double params[CVC_MODEL_MAXPARAM];
	double dom_min, dom_max;    /* domain: FLOPs (gemm) or bytes (collective) */
	char source[256];           /* file(s) or table the rows came from */
	int n_points;
	double r2;                  /* on log time */
	double mape;                /* %, in-sample */
	double extrap_mape;         /* %, fit on the smaller half, predict the
				       larger half; NaN when too few points */
	cvc_model_mem mem;          /* membound: the operator class fitted */
	cvc_model_coll_level lvl;   /* collectives */
	int64_t replaced;           /* cvc_model_fit_rows: the id of the fit of the same
				       input this one replaced; 0 none */
} cvc_model_fit;

/*
 * One measured row.  Gemm rows use b,m,n,k (b = 1 when not batched);
 * collective rows use bytes (nccl-tests' printed size: the whole buffer
 * for allreduce/broadcast/sendrecv, the total output of allgather, the
 * total input of reducescatter), nranks and gpus_per_node.  tag is a
 * short label of the row's origin inside its file (e.g. "mlp_up_proj",
 * "tp=2"), "" when none.
 */
typedef struct cvc_model_row {
	cvc_model_kind kind;
	char gpu[CVC_HW_NAME_MAX];    /* as the file names it (resolve via catalog) */
	char system[CVC_HW_NAME_MAX]; /* collectives: e.g. "a100_dgx", "" */
	cvc_hw_dtype dtype;
	cvc_model_coll coll;
	char tag[24];
	int64_t b, m, n, k;
	int64_t bytes;
	int nranks, gpus_per_node;
	double time_us;
	cvc_model_mem mem;            /* membound rows: operator class; bytes
					 = bytes read + written, m = tokens */
	int bench;                    /* timed alone in a kernel benchmark, at the
					 boost clock (tables), not inside a job */
} cvc_model_row;

/* A growable array of rows read from files (bounded: see cvc_model_rows_read). */
typedef struct cvc_model_rows {
	cvc_model_row *v;
	size_t n, cap;
	char source[256];  /* files read, comma separated (truncated) */
} cvc_model_rows;

/* Releases r->v and zeroes r.  Accepts NULL. */
CVC_API void cvc_model_rows_release(cvc_model_rows *r);

/*
 * Reads one measured table and appends its rows to *rows: recognised by its
 * header row (gz or plain): XLA matmul and collective perf tables, vidur
 * network (all_reduce / send_recv) and compute (mlp.csv: GEMM rows for
 * attn_pre_proj, attn_post_proj, mlp_up_proj, mlp_down_proj with shapes
 * derived from the model dims; its memory-bound columns are not read:
 * docs/MODELS.md "Memory-bound fits"), and nccl-tests text logs.  gpu_hint names
 * the GPU when the file does not (may be NULL; vidur file names
 * "<gpu>__..." and nccl-tests device lines are used otherwise).  At most
 * 10 million rows in all.  Malformed input: CVC_ERR_FORMAT with
 * "'<path>': line N: expected ..." in err.  Unknown header:
 * CVC_ERR_FORMAT "'<path>': line 1: expected a known table header".
 */
CVC_API cvc_status cvc_model_rows_read(cvc_model_rows *rows, const char *path,
				       const char *gpu_hint, char *err, size_t errlen);

/*
 * Appends the db's measured collectives (collectives table with known bytes
 * and group size, joined to activity durations and the run's GPU) and
 * nccl_tests rows (out-of-place time) to *rows.
 */
CVC_API cvc_status cvc_model_rows_from_db(cvc_model_rows *rows, cvc_db *db);

/*
 * Fits a GEMM efficiency model to rows[0..n) (all of one GPU and dtype)
 * against spec.  Weighted on relative error, robust to outliers (iterated
 * bisquare reweighting); fills *out including domain and quality (the
 * extrapolation MAPE refits on the smaller half of the sizes).  Rows timed
 * in kernel benchmarks (bench) are fitted against the peak at the
 * benchmark's boost clock, so the model's efficiency is per datasheet clock
 * (docs/MODELS.md "Clocks").  A fit faster than the dense peak at the
 * datasheet clock (an 8192^3 GEMM above peak) is refused: the rows are not
 * consistent with the spec sheet.  CVC_ERR_USAGE when fewer than 6 rows or
 * refused.  err gets a message on failure.
 */
CVC_API cvc_status cvc_model_fit_gemm(const cvc_model_row *rows, size_t n,
				      const cvc_hw_spec *spec, cvc_model_fit *out,
				      char *err, size_t errlen);

/*
 * cvc_model_fit_gemm() with another minimum row count, at least 4 (the
 * two-term form p0 + p3 Fpad/P then keeps two residual degrees of
 * freedom; smaller forms are tried first only when the rows allow them).
 * For traces, whose few distinct shapes are each the mean of many calls.
 * CVC_ERR_USAGE when n < min_rows or min_rows < 4.
 */
CVC_API cvc_status cvc_model_fit_gemm_min(const cvc_model_row *rows, size_t n, size_t min_rows,
					  const cvc_hw_spec *spec, cvc_model_fit *out,
					  char *err, size_t errlen);

/*
 * Fits a memory-bound model t = floor + bytes / (eff x HBM bandwidth) to
 * rows[0..n) (kind CVC_MODEL_MEMBOUND, all of one GPU and class) against
 * spec: params[0] floor (us), params[1] eff.  Weighted on relative error,
 * robust (bisquare); when the free floor comes out negative the floor is
 * pinned to 0.  A fitted efficiency above 1 (faster than HBM: the rows'
 * data sat in a cache) is refused with CVC_ERR_USAGE, since the form does
 * not describe them.  Fills quality; the extrapolation MAPE refits on the rows
 * of the smaller half of the token counts (m; bytes when m is 0) and
 * predicts the larger half.  CVC_ERR_USAGE when fewer than 4 rows or a
 * row is not a membound row of rows[0]'s class with positive bytes and
 * time.
 */
CVC_API cvc_status cvc_model_fit_membound(const cvc_model_row *rows, size_t n,
					  const cvc_hw_spec *spec, cvc_model_fit *out,
					  char *err, size_t errlen);

/* ---- GEMMs from traces recorded with shapes (models/tracefit.c) ----------------- */

/*
 * Batch, M, N, K of a GEMM-like ATen op from its "Input Dims" JSON text
 * (op_shapes.dims), per op (docs/MODELS.md "Sources"): aten::mm and
 * aten::_scaled_mm [M,K],[K,N]; aten::addmm bias,[M,K],[K,N]; aten::bmm
 * [B,M,K],[B,K,N]; aten::baddbmm bias,[B,M,K],[B,K,N]; aten::linear input
 * [...,K], weight [N,K] (M = product of the input's leading dims, B = 1);
 * aten::matmul A [...,M,K] x B [...,K,N] (a 1-D operand is a vector; with
 * a 1- or 2-D B the leading dims of A fold into M, else B = the larger
 * product of leading dims).  CVC_ERR_NOTFOUND for another op;
 * CVC_ERR_FORMAT when dims is not of that form, a dimension is not a
 * positive integer below 2^40, or the inner dimensions disagree.
 */
CVC_API cvc_status cvc_model_gemm_dims(const char *op, const char *dims, int64_t *b,
				       int64_t *m, int64_t *n, int64_t *k);

/*
 * dtype of a GEMM-like op from its "Input type" JSON text: the first
 * matrix operand's (index 1 for addmm / baddbmm, else 0), "c10::" dropped:
 * BFloat16 bf16, Half fp16, Float/float fp32 (tf32 when tf32_kernel: the
 * op's GEMM kernel names say tf32), Float8_* fp8.  CVC_ERR_NOTFOUND for
 * anything else (Double, integers, no types).
 */
CVC_API cvc_status cvc_model_gemm_dtype(const char *op, const char *types, int tf32_kernel,
					cvc_hw_dtype *out);

/* One GEMM-like op of a trace with the device activities it launched. */
typedef struct cvc_model_trace_gemm {
	int64_t run_id;
	int rank;
	int64_t external_id;
	char op[32];                /* "aten::mm", ... */
	char gpu[CVC_HW_NAME_MAX];  /* device name of its kernels ("" unknown) */
	int has_dtype;              /* 0: types absent or not a GEMM dtype */
	cvc_hw_dtype dtype;
	int64_t b, m, n, k;
	double gemm_us;             /* its kernels classed gemm (name_class) */
	double total_us;            /* all its kernels, memsets and memcpys */
	int gemm_kernels;           /* how many kernels classed gemm */
} cvc_model_trace_gemm;

/*
 * The ops of op_shapes (run_id < 0: every run) that launched at least one
 * device activity (same run, rank and External id, or a correlation id in
 * the op's op_launches) and whose dims parse
 * (cvc_model_gemm_dims), by run then import order, into a malloc'd *out of *n
 * entries (caller frees).  Ops whose kernels carry the External id of an
 * inner op (linear -> addmm) have none of their own and are left out, so
 * no kernel is counted twice.  Read only.
 */
CVC_API cvc_status cvc_model_trace_gemms(cvc_db *db, int64_t run_id,
					 cvc_model_trace_gemm **out, size_t *n);

/*
 * GEMM fitting rows from traces: one row set per run that has GEMM ops
 * with gemm-class kernel time and a known dtype, one row per distinct
 * (op, GPU, dtype, B, M, N, K) with the mean gemm_us over its calls (tag =
 * the op name without "aten::"); source "run <name> (db:<path>)".  *sets
 * is a malloc'd array of *nsets sets; the caller releases each with
 * cvc_model_rows_release() and frees the array.  Read only.
 */
CVC_API cvc_status cvc_model_rows_from_traces(cvc_db *db, cvc_model_rows **sets,
					      size_t *nsets);

/*
 * Bytes a memory-bound op of a trace must read and write, from its "Input
 * Dims" / "Input type" JSON text (docs/MODELS.md "Memory-bound fits"), and
 * its class.  CVC_ERR_NOTFOUND when op is not one of the memory-bound ops
 * of cvc_db_shape_op(); CVC_ERR_FORMAT when the operands give no count (no
 * types, no tensor operand, malformed or out-of-range dims).
 */
CVC_API cvc_status cvc_model_op_bytes(const char *op, const char *dims, const char *types,
				      cvc_model_mem *cls, int64_t *bytes);

/*
 * Memory-bound fitting rows from traces: one set per run with memory-bound
 * ops (with a byte count of at least 64 MiB: smaller operands can sit in
 * L2) that launched kernels, one row per distinct (op,
 * class, GPU, bytes) with the mean time of its calls' kernels (memcpys too
 * for copy_): kind CVC_MODEL_MEMBOUND, tag = op name without "aten::".
 * Same ownership as cvc_model_rows_from_traces.  Read only.
 */
CVC_API cvc_status cvc_model_membound_rows_from_traces(cvc_db *db, cvc_model_rows **sets,
						       size_t *nsets);

/*
 * Fits a collective model to rows[0..n) (one collective, one system, one
 * group size): up to 3 regimes (small/medium/large message), each
 * latency + bytes*busbw_factor/bw, breakpoints chosen by the fit.
 * CVC_ERR_USAGE when fewer than 3 rows.
 */
CVC_API cvc_status cvc_model_fit_collective(const cvc_model_row *rows, size_t n,
					    const cvc_hw_spec *spec, cvc_model_fit *out,
					    char *err, size_t errlen);

/*
 * Whether a stored fit may price operators (the quality gate, docs/MODELS.md
 * "Fit quality"): R^2 >= 0 and an extrapolation MAPE of at most 30%.  *why
 * (may be NULL) gets the reason when not, "" otherwise (static).
 */
CVC_API int cvc_model_fit_usable(const cvc_model_fit *f, const char **why);

/*
 * Predicts one row with one fit (no carry-over): the time in us.  spec is
 * the GPU the row runs on (for gemm, the fit's efficiency is applied to
 * this spec, which is how a fit carries over).  NaN when kinds differ.
 */
CVC_API double cvc_model_fit_predict(const cvc_model_fit *fit, const cvc_hw_spec *spec,
				     const cvc_model_row *row);

/*
 * Removes the stored fits of the same input as fit (kind, GPU, system,
 * operator, group size, GPUs per node and source), with their points:
 * fitting a file again replaces its fits instead of adding copies.
 * *replaced (may be NULL) gets the newest id removed, 0 when none.  Call
 * inside cvc_db_begin()/commit.
 */
CVC_API cvc_status cvc_model_fit_replace(cvc_db *db, const cvc_model_fit *fit,
					 int64_t *replaced);

/*
 * Stores fit in the models table (and its rows in model_points when rows
 * is not NULL), setting fit->id.  Call inside cvc_db_begin()/commit.
 */
CVC_API cvc_status cvc_model_fit_store(cvc_db *db, cvc_model_fit *fit,
				       const cvc_model_row *rows, size_t n);

/*
 * Loads the stored fits (all of them, newest first) into a malloc'd array
 * *out of *n entries; caller frees *out with free().
 */
CVC_API cvc_status cvc_model_fit_list(cvc_db *db, cvc_model_fit **out, size_t *n);

/* Loads fit id; CVC_ERR_NOTFOUND when absent. */
CVC_API cvc_status cvc_model_fit_get(cvc_db *db, int64_t id, cvc_model_fit *out);

/* What a fit is of, as the models table's op column names it: the dtype
 * (gemm, attention), the class (membound) or the collective; "?" when out
 * of range.  Static; never NULL. */
CVC_API const char *cvc_model_fit_op(const cvc_model_fit *fit);

/* ---- fitting a row set (models/fitrows.c) -------------------------------------- */

/*
 * What cvc_model_fit_rows reports, in order, as it goes: fit (borrowed for
 * the call) for each fit stored, else warning (a line without the
 * "warning: " prefix) for rows it skipped.  Exactly one is not NULL.
 */
typedef void (*cvc_model_fit_cb)(void *arg, const cvc_model_fit *fit, const char *warning);

/*
 * Fits every group of rows (GEMMs per GPU and dtype, memory-bound ops per
 * GPU and class, collectives per system, collective, group size and node
 * size; GPU and system resolved through cat) with its fitter and stores each
 * fit with its rows (cvc_model_fit_store, so call inside
 * cvc_db_begin()/commit), naming rows->source as the fit's source, each
 * replacing the fits of the same input (cvc_model_fit_replace; the fit's
 * replaced names it); *nfit is incremented per fit stored.  gemm_min: the fewest rows a GEMM fit
 * takes (traces give few distinct shapes, each a mean of many calls; see
 * cvc_model_fit_gemm_min).  Rows whose GPU the catalog does not know and
 * groups a fitter declines (CVC_ERR_USAGE: too few rows, no model form
 * fits) are skipped with a warning through cb (may be NULL).  Another
 * error stops it, with its message in err.  Not thread-safe on one db.
 */
CVC_API cvc_status cvc_model_fit_rows(cvc_db *db, const cvc_hw_catalog *cat,
				      const cvc_model_rows *rows, size_t gemm_min,
				      cvc_model_fit_cb cb, void *arg, int *nfit, char *err,
				      size_t errlen);

/* The table of stored fits `cvc fit` prints: its header line, and fit's
 * line, ending with whether the quality gate lets the fit price anything
 * and why not ("yes", "level only: ...", "no: R^2 below 0 ..."). */
CVC_API void cvc_model_fit_table_header(FILE *f);
CVC_API void cvc_model_fit_table_row(FILE *f, const cvc_model_fit *fit);

/* One row set for cvc_model_fit_sets and the fewest rows a GEMM fit of it
 * takes (6 for tables; traces give few distinct shapes, each a mean of
 * many calls: 4). */
typedef struct cvc_model_fit_set {
	const cvc_model_rows *rows; /* borrowed */
	size_t gemm_min;
} cvc_model_fit_set;

/*
 * Fits sets[0..n) into db in one transaction (cvc_model_fit_rows on each,
 * in order; rolled back on error): the fit table is written to table (may
 * be NULL), its header once the transaction is open and a line per fit
 * stored; warn (may be NULL) gets each warning.  *nfit counts the fits
 * stored.  On error, the message is in err.
 */
CVC_API cvc_status cvc_model_fit_sets(cvc_db *db, const cvc_hw_catalog *cat,
				      const cvc_model_fit_set *sets, size_t n, FILE *table,
				      void (*warn)(void *arg, const char *warning), void *arg,
				      int *nfit, char *err, size_t errlen);

/* ---- model sets: what the projector predicts with ------------------------------ */

typedef struct cvc_modelset cvc_modelset;

/*
 * Builds the models for one GPU or system (spec, borrowed for the call and
 * copied).  With db, the newest fit of each (kind, dtype / collective,
 * group size) is used: fitted on this GPU when there is one, else fitted
 * on the closest catalog GPU that has one (efficiencies carried over
 * through the spec sheet; cvc_model_origin() names it); with db NULL or no
 * fit at all, spec-sheet roofline with the documented default efficiencies
 * (docs/MODELS.md).  cat is needed for carrying over (may be NULL: then
 * no carry-over).  *out owned by the caller: cvc_modelset_free().
 * Immutable after creation; thread safe for predicting.
 */
CVC_API cvc_status cvc_modelset_new(cvc_db *db, const cvc_hw_catalog *cat,
				    const cvc_hw_spec *spec, cvc_modelset **out);

/*
 * cvc_modelset_new() with force = 1: fits the quality gate would keep out
 * (docs/MODELS.md "Fitting and quality") are used too, and GEMM fits price
 * sizes outside the FLOPs they measured; their origins say "forced past
 * the gate".  force = 0 is cvc_modelset_new().
 */
CVC_API cvc_status cvc_modelset_new_ex(cvc_db *db, const cvc_hw_catalog *cat,
				       const cvc_hw_spec *spec, int force, cvc_modelset **out);

/*
 * Makes a modelset from explicit fits (tests, tools): like
 * cvc_modelset_new() with db NULL, then each fits[i] is installed as if it
 * were the newest in the db (fits of another GPU are carried over).
 */
CVC_API cvc_status cvc_modelset_from_fits(const cvc_hw_catalog *cat,
					  const cvc_hw_spec *spec,
					  const cvc_model_fit *fits, size_t n,
					  cvc_modelset **out);

/* Accepts NULL. */
CVC_API void cvc_modelset_free(cvc_modelset *ms);

/* The spec the set predicts for (borrowed). */
CVC_API const cvc_hw_spec *cvc_modelset_spec(const cvc_modelset *ms);

/*
 * Dense GEMM C[b][m][n] = A[b][m][k] B[b][k][n]: time in us.
 * max(FLOPs / (peak * eff(shape)), bytes / HBM bw) + launch floor, where
 * eff has the wave quantisation of 128x128 tiles over the SMs and a fitted
 * function of size.  b <= 0 counts as 1; m,n,k <= 0 give the floor.
 */
CVC_API double cvc_model_gemm_us(const cvc_modelset *ms, int64_t m, int64_t n,
				 int64_t k, int64_t b, cvc_hw_dtype dt);

/*
 * Grouped GEMM (MoE experts): groups GEMMs of m_per_group[i] x n x k in
 * one launch: tiles of every group share the waves; one floor.
 */
CVC_API double cvc_model_grouped_gemm_us(const cvc_modelset *ms, const int64_t *m_per_group,
					 int groups, int64_t n, int64_t k, cvc_hw_dtype dt);

/*
 * How much slower a grouped GEMM of m_per_group rows per group runs than a
 * dense GEMM of all its rows (>= 1; 1 from 1024 rows), from DeepGEMM's
 * measured grouped and dense tables (docs/MODELS.md "MoE layers").
 * *extrap (may be NULL) set when m_per_group is below the measured 256.
 */
CVC_API double cvc_model_grouped_slowdown(double m_per_group, int *extrap);

/* FlashAttention-1's time over FlashAttention-2's for the same attention
 * (docs/MODELS.md "Attention": Dao 2023, Table 1). */
CVC_API double cvc_model_fa1_slowdown(void);

typedef struct cvc_model_attn {
	int64_t batch, heads, kv_heads;  /* kv_heads 0 = heads (MHA) */
	int64_t seq_q, seq_kv;           /* seq_kv 0 = seq_q */
	int64_t head_dim;
	int causal;                      /* halves the score FLOPs (seq_q==seq_kv) */
	int backward;                    /* 1: backward pass (2.5x fwd FLOPs) */
	cvc_hw_dtype dtype;
	int backend;                     /* cvc_model_attn_backend (0 = cuDNN;
					    the defaults resolve by GPU) */
} cvc_model_attn;

/*
 * Fused attention: time in us.  FLOPs as FlashAttention counts them (the
 * causal mask halves the score work: square and load-balanced context-
 * parallel chunks alike; backward 2.5x), at the efficiency the backend
 * reaches on the reference GPU closest to ms's spec at that sequence length
 * and head dim (curves measured in attention-bench, docs/MODELS.md
 * "Attention"), against this spec's dense bf16 peak.
 */
CVC_API double cvc_model_attention_us(const cvc_modelset *ms, const cvc_model_attn *a);

/*
 * The attention library a framework runs by default on ms's GPU generation:
 * torch = 0, Transformer Engine (Megatron-Core, NeMo): FlashAttention-2 on
 * Ampere, cuDNN from Hopper on; torch = 1, PyTorch SDPA: FlashAttention-2,
 * cuDNN from Blackwell on.
 */
CVC_API cvc_model_attn_backend cvc_model_attn_default(const cvc_modelset *ms, int torch);

/*
 * The gap between two back-to-back kernels of one stream on ms's GPU
 * generation, in us: the mean of the gaps under 20 us between consecutive
 * kernels of the busiest compute stream of the shared traces recorded on
 * the closest reference GPU (docs/MODELS.md "Between kernels").  The
 * projector charges it per kernel launch.
 */
CVC_API double cvc_model_kernel_gap_us(const cvc_modelset *ms);

/* Memory-bound op moving bytes (read + written): bytes / eff. bw + floor.
 * floor and eff per class: fitted (cvc_model_fit_membound; the newest fit
 * of the class on this GPU, else on the closest fitted GPU, its
 * efficiency applied to this GPU's HBM bandwidth) or the defaults. */
CVC_API double cvc_model_membound_us(const cvc_modelset *ms, int64_t bytes,
				     cvc_model_mem cls);

/*
 * Collective of bytes (nccl-tests size convention, see cvc_model_row) over
 * group_size ranks with gpus_per_node per node (0 = the spec's).  Level:
 * intra-node when group_size <= gpus_per_node, inter-node when
 * gpus_per_node == 1, hierarchical otherwise.  sys: the system whose links
 * are used (NULL = the set's spec).  Time in us; 0 for group_size <= 1.
 */
CVC_API double cvc_model_collective_us(const cvc_modelset *ms, cvc_model_coll c,
				       int64_t bytes, int group_size, int gpus_per_node,
				       const cvc_hw_spec *sys);

/* NCCL algorithms a collective can be priced with across nodes. */
#define CVC_ALGO_AUTO (-1) /* the fastest the model knows, as NCCL's tuner */
#define CVC_ALGO_RING 0
#define CVC_ALGO_TREE 1    /* all-reduce only (tree, NVLS tree) */

/*
 * cvc_model_collective_us() with the algorithm forced (CVC_ALGO_*; a
 * forced algorithm the collective has not is ignored) and *origin (may be
 * NULL) set to where the time came from (borrowed from ms, never NULL):
 * a regime fit of this span and NICs; the large-message level of the
 * newest multi-node fit carried to this span, NIC bandwidth and algorithm
 * (docs/MODELS.md "Collectives"), named with the algorithm that priced it;
 * or the defaults.
 */
CVC_API double cvc_model_collective_algo_us(const cvc_modelset *ms, cvc_model_coll c,
					    int64_t bytes, int group_size, int gpus_per_node,
					    const cvc_hw_spec *sys, int algo, const char **origin);

/*
 * What a price rests on (docs/MODELS.md "Uncertainty"): the time, its
 * relative standard error on log time (from the fit's residuals, the
 * measured error of each carry-over it went through, or the measured error
 * of the defaults), how far it reaches past what was measured (1 inside;
 * > 1 the ratio beyond it: FLOPs past the fit's largest, nodes past the
 * fitted span; 0 nothing measured: defaults), whether it was carried from
 * another GPU or system, and the origin string (borrowed, never NULL).
 */
typedef struct cvc_model_price {
	double us;
	double sigma;
	double extrap;
	int carried;
	const char *origin;
} cvc_model_price;

CVC_API void cvc_model_collective_price(const cvc_modelset *ms, cvc_model_coll c, int64_t bytes,
					int group_size, int gpus_per_node, const cvc_hw_spec *sys,
					int algo, cvc_model_price *out);
CVC_API void cvc_model_gemm_price(const cvc_modelset *ms, int64_t m, int64_t n, int64_t k,
				  int64_t b, cvc_hw_dtype dt, cvc_model_price *out);
CVC_API void cvc_model_attention_price(const cvc_modelset *ms, const cvc_model_attn *a,
				       cvc_model_price *out);
CVC_API void cvc_model_membound_price(const cvc_modelset *ms, int64_t bytes, cvc_model_mem cls,
				      cvc_model_price *out);
/*
 * The 90% interval of a time x whose relative standard error on log time
 * is sigma (a price's, or a step's): x exp(-1.645 sigma) to x exp(1.645
 * sigma) into *lo and *hi, in x's unit (docs/MODELS.md "Uncertainty").
 */
CVC_API void cvc_model_interval90(double x, double sigma, double *lo, double *hi);
/* The error added to a GEMM priced in a format whose efficiency nobody
 * measured (MXFP4, fp8 with 1x128 block scales) from its sibling's
 * (NVFP4, per-tensor fp8): the measured error of carrying a GEMM fit
 * across a harness and a GPU (docs/MODELS.md "Uncertainty"). */
CVC_API double cvc_model_format_carry_sigma(void);
/* How much longer an fp8 GEMM takes with MXFP8 block scales (an E8M0
 * scale per 32 elements) than with per-tensor scales, measured on
 * Blackwell in one harness (docs/MODELS.md "FP4 and the FP8 recipes");
 * *sigma (may be NULL) gets its relative uncertainty. */
CVC_API double cvc_model_mxfp8_factor(double *sigma);
/*
 * fp8 GEMMs with 1x128 / 128x128 block scales on Hopper, against the
 * per-tensor fp8 price: DeepGEMM's published benchmark on an H800
 * (models/blockfp8.c, docs/MODELS.md "FP4 and the FP8 recipes").
 * cvc_model_blockfp8_fit() reads it against ref, the default modelset of
 * cvc_model_blockfp8_gpu() (db NULL), into a table of log time ratios by
 * log2 K; cvc_model_blockfp8_factor() gives the time factor at K (1 for
 * an empty table) and *sigma (may be NULL) the rows' scatter.  The factor
 * holds on the benchmark GPU's generation (cvc_model_same_generation()).
 */
#define CVC_MODEL_BLOCKFP8_MAXK 8
typedef struct cvc_model_blockfp8 {
	int n;
	double log2k[CVC_MODEL_BLOCKFP8_MAXK], log_ratio[CVC_MODEL_BLOCKFP8_MAXK];
	double sigma;
} cvc_model_blockfp8;
CVC_API const char *cvc_model_blockfp8_gpu(void);
CVC_API cvc_status cvc_model_blockfp8_fit(const cvc_modelset *ref, cvc_model_blockfp8 *out);
CVC_API double cvc_model_blockfp8_factor(const cvc_model_blockfp8 *t, int64_t k, double *sigma);
/* A weight-gradient GEMM of that recipe (both operands 1x128-scaled along
 * K, the tokens; the output accumulated in fp32) over the price of the
 * same shape's forward kind: measured in DeepSeek-V3's training trace on
 * an H800 (models/blockfp8.c); *sigma (may be NULL) its scatter. */
CVC_API double cvc_model_blockfp8_wgrad_factor(double *sigma);
/* Whether two GPUs are of one generation as cvc's measured references
 * group them (Ampere, Hopper, Blackwell, CDNA3). */
CVC_API int cvc_model_same_generation(const cvc_hw_spec *a, const cvc_hw_spec *b);
/*
 * Expert-parallel token exchange by kernels other than NCCL's all-to-all
 * (docs/MODELS.md "Expert-parallel dispatchers"): DeepEP's normal kernels
 * and NVIDIA's HybridEP, each sending a token once to every rank holding
 * one of its experts and, across NVLink domains, once per remote domain.
 */
typedef enum cvc_model_ep_backend {
	CVC_EP_NCCL = 0,     /* NCCL all-to-all: priced as a collective */
	CVC_EP_DEEPEP = 1,   /* DeepEP normal kernels */
	CVC_EP_HYBRIDEP = 2  /* HybridEP (DeepEP's hybrid-ep branch) */
} cvc_model_ep_backend;

typedef enum cvc_model_ep_phase {
	CVC_EP_DISPATCH_FP8 = 0, /* dispatch of fp8 tokens with their scales */
	CVC_EP_DISPATCH_16 = 1,  /* dispatch of 16-bit tokens */
	CVC_EP_COMBINE = 2       /* combine (16-bit) */
} cvc_model_ep_phase;

typedef struct cvc_model_ep_call {
	int backend;         /* cvc_model_ep_backend, DEEPEP or HYBRIDEP */
	int phase;           /* cvc_model_ep_phase */
	int64_t nvl_bytes;   /* one rank's bytes to the distinct ranks its tokens
			      * reach (one copy per rank), over NVLink */
	int64_t net_bytes;   /* one rank's bytes leaving its NVLink domain (one
			      * copy per remote domain a token reaches) */
	int ranks;           /* EP group */
	int domain;          /* group members per NVLink domain */
	int sms;             /* SMs the kernels run on; 0 = the backend's default */
	int hidden;          /* elements per token; 0 = 7168, the shape the
			      * bandwidth tables were measured at */
} cvc_model_ep_call;

/* One dispatch or combine of c on ms's links: the slower of the NVLink and
 * the network phase, at the efficiencies their authors measured, plus the
 * launch of a collective; with its origin and uncertainty.  0 us for a
 * group of one or another backend. */
CVC_API void cvc_model_ep_price(const cvc_modelset *ms, const cvc_model_ep_call *c,
				cvc_model_price *out);
/* SMs a backend's kernels hold when the scenario does not say: DeepEP 20,
 * HybridEP 16, NCCL 0 (not modelled). */
CVC_API int cvc_model_ep_default_sms(int backend);

/* Relative standard error of cvc_model_kernel_gap_us(). */
CVC_API double cvc_model_kernel_gap_sigma(const cvc_modelset *ms);

/*
 * What one kernel launch costs the host in an eager training step, in us:
 * the mean time between two launch calls of a launching thread (waits of
 * 1 ms or more left out) in the shared MoE training trace (docs/MODELS.md
 * "Host time per launch").  The host, not the GPU: the same on every GPU.
 */
CVC_API double cvc_model_host_launch_us(void);

/* Relative standard error of cvc_model_host_launch_us(): the spread of the
 * shared training traces' figures (robust: 1.4826 MAD / median). */
CVC_API double cvc_model_host_launch_sigma(void);

/*
 * Whether a collective fit's large-message level may carry the fit to
 * other spans (R^2-free gate of docs/MODELS.md "Fit quality": its error on
 * its rows and its extrapolation error at most 30%); *why as
 * cvc_model_fit_usable().
 */
CVC_API int cvc_model_level_usable(const cvc_model_fit *f, const char **why);

/*
 * Where the figures for a kind come from, for printing: e.g.
 * "fitted model 3 (H100-SXM bf16, xla_matmul_perf_table.csv.gz)",
 * "model 3 fitted on H100-SXM, carried over through the spec sheet",
 * "spec-sheet roofline, default efficiency".  For gemm/attention pass the
 * dtype as sub; for collectives the cvc_model_coll and group_size; for
 * membound the cvc_model_mem.
 * Borrowed from ms (or static).  Never NULL.
 */
CVC_API const char *cvc_model_origin(const cvc_modelset *ms, cvc_model_kind kind,
				     int sub, int group_size);

/* Same for one collective call, with its node size (as passed to
 * cvc_model_collective_us; 0 = the spec's).  Never NULL. */
CVC_API const char *cvc_model_collective_origin(const cvc_modelset *ms, cvc_model_coll c,
						int group_size, int gpus_per_node);

#endif
