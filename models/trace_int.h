/*
 * trace_int.h - what the trace fitting sources share inside models/: the
 * ops of op_shapes with the device activity they launched, and per-run
 * row sets (models/traceops.c).  Used by tracefit.c (GEMMs) and
 * tracemem.c (memory-bound ops).
 */
#ifndef CVC_TRACE_INT_H
#define CVC_TRACE_INT_H

#include <stdint.h>

#include "cvc/cvc_db.h"
#include "cvc/cvc_model.h"

/* One op of op_shapes and the activities it launched (text valid during
 * the callback only). */
struct tr_op {
	int64_t run_id;
	int rank;
	int64_t external_id;
	const char *op, *dims, *types, *gpu;
	double total_us;   /* all its activities: kernels, memcpys, memsets */
	double kernel_us;  /* its kernels */
	double copy_us;    /* its memcpys */
	double gemm_us;    /* its kernels classed gemm */
	int kernels, gemm_kernels;
	int tf32;          /* a gemm kernel's name says TF32 */
};

typedef cvc_status (*tr_fn)(const struct tr_op *op, void *ctx);

/*
 * Calls fn for every op of op_shapes (run_id < 0: every run) that launched
 * at least one activity, linked by External id or by op_launches, in run
 * then import order.  A non-zero return from fn stops and is returned.
 */
cvc_status tr_each_op(cvc_db *db, int64_t run_id, tr_fn fn, void *ctx);

/* Rows collected per run; the same row (every field but time) seen again
 * is one row with the mean time of its calls. */
struct tr_sets;

struct tr_sets *tr_sets_new(void);
cvc_status tr_sets_add(struct tr_sets *s, int64_t run_id, const cvc_model_row *r, double us);
/* One set per run with rows, named "run <name> (db:<path>)"; frees s. */
cvc_status tr_sets_take(cvc_db *db, struct tr_sets *s, cvc_model_rows **sets, size_t *nsets);
void tr_sets_free(struct tr_sets *s);

#endif
