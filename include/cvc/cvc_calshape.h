/*
 * cvc_calshape.h - the calibration plan file, shared by the planner (the
 * projector's cvc_calibrate.h writes it) and the runner on a GPU
 * (profiler/calibrate/cuda/ reads it): operator shapes, their kinds, the
 * plan CSV's columns, and how an attention shape is measured as GEMMs.
 * In db/ beside the other shared words, so that the runner needs nothing
 * from the projector or the models (issue 15).
 */
#ifndef CVC_CALSHAPE_H
#define CVC_CALSHAPE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "cvc.h"
#include "cvc_vocab.h"

/* Stable values: they appear in the plan CSV as names. */
typedef enum cvc_cal_kind {
	CVC_CAL_GEMM = 0, /* cuBLASLt matmul, b batched m x n x k */
	CVC_CAL_ATTN = 1, /* attention core (measured as GEMMs + softmax) */
	CVC_CAL_MEM = 2,  /* memory-bound op of a class moving bytes */
	CVC_CAL_COLL = 3, /* NCCL collective */
	CVC_CAL_NKIND
} cvc_cal_kind;

/* "gemm", "attention", "membound", "collective"; NULL when out of range. */
CVC_API const char *cvc_cal_kind_name(int kind);

/*
 * One operator shape.  Unused fields are 0.
 *   gemm:       dtype (cvc_hw_dtype), b, m, n, k; sub bit 2 ("grouped" in the
 *               plan file): b groups of an MoE grouped GEMM, measured batched
 *   attention:  dtype, b (batch), heads, kv_heads, m (seq_q), n (seq_kv),
 *               k (head_dim), causal, backward
 *   membound:   sub (cvc_model_mem), bytes
 *   collective: sub (cvc_model_coll), bytes (nccl-tests size convention),
 *               group, per_node (group members per node)
 */
typedef struct cvc_cal_shape {
	int kind;
	int dtype, sub;
	int64_t b, m, n, k, heads, kv_heads;
	int causal, backward;
	int64_t bytes;
	int group, per_node;
} cvc_cal_shape;

/*
 * How an attention shape is measured without a fused kernel (cuDNN's
 * graph API is C++-only in practice): its GEMMs, batched over
 * batch x heads (forward: QK^T, PV; backward: dP, dV, dQ, dK), plus the
 * softmax (forward) or softmax backward as a memory-bound pass over the
 * score matrix.  Fills gemms[0..*ngemm) (at most 4) and *softmax_bytes.
 */
CVC_API void cvc_cal_attn_parts(const cvc_cal_shape *attn, cvc_cal_shape gemms[4], int *ngemm,
				int64_t *softmax_bytes);

/* Shapes equal in every field. */
CVC_API int cvc_cal_shape_eq(const cvc_cal_shape *a, const cvc_cal_shape *b);

/*
 * Reads a plan CSV (as written above; extra columns are ignored) into a
 * malloc'd array *out of *n shapes (caller frees).  At most 1 million rows.
 * CVC_ERR_IO, or CVC_ERR_FORMAT with "'path': line N: expected ..." in err.
 */
CVC_API cvc_status cvc_cal_plan_read_csv(const char *path, cvc_cal_shape **out, size_t *n,
					 char *err, size_t errlen);

/*
 * The plan CSV's shape columns: the header's first 14 names, and one
 * shape's 14 fields (kind, dtype and sub as names, "" when unused), each
 * followed by a comma; the planner adds its own columns after them.
 */
CVC_API void cvc_cal_shape_csv_header(FILE *f);
CVC_API void cvc_cal_shape_csv(FILE *f, const cvc_cal_shape *s);

/*
 * The header line (with its newline) of the result table the runner writes
 * for kind, <name>.r<rank>.csv in its --out folder: gemm (XLA's matmul
 * table columns, so cvc fit reads it as one), attention, membound; NULL
 * for a collective (an nccl-tests log) or a kind out of range.  Here, not
 * in the runner, so that the column dictionary (cvc help columns) is
 * checked against the columns the runner writes without a GPU.
 */
CVC_API const char *cvc_cal_result_header(int kind);

#endif
