/*
 * cvc_calibrate.h - calibration planning (projector/calplan.c): which
 * operators the scenarios of a study actually price, bucketed and
 * deduplicated into a short list of microbenchmarks, with the estimated GPU
 * time of measuring them next to the GPU time of profiling the full
 * workloads (docs/CALIBRATE.md).
 *
 * Flow: cvc_cal_plan_new() -> cvc_cal_plan_study() (or
 * cvc_cal_plan_add() per scenario) -> cvc_cal_plan_summary() /
 * cvc_cal_plan_write_csv().  The GPU side (profiler/calibrate/cuda/, built
 * only with the CUDA toolkit) reads the plan CSV back with
 * cvc_cal_plan_read_csv() (cvc_calshape.h) and writes tables `cvc fit`
 * reads.
 *
 * The decomposition is the projector's own (cvc_proj_scenario_ops() in
 * cvc_project.h, the code projector/project.c prices with);
 * cvc_cal_scenario_ops adapts its operators to cvc_cal_shape, so a plan
 * covers exactly the model queries a projection of the study makes.
 * A plan is not thread safe; the free functions are.
 */
#ifndef CVC_CALIBRATE_H
#define CVC_CALIBRATE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "cvc.h"
#include "cvc_calshape.h" /* shapes and the plan file */
#include "cvc_project.h"

/*
 * Calls fn once per operator of one optimizer step of sc, as the projector
 * prices it (sc as a study's run callback hands it: layout and dp derived):
 * cvc_proj_scenario_ops() with dtype mapped to the cvc_hw_dtype measured
 * (fp32 as tf32) and zero-byte collectives left out.
 * count is how many times the step runs the operator on the busiest GPU
 * (fractional for amortised collectives); stage is 0 for per-layer and
 * per-step operators, 1 for the first pipeline stage only (embedding), 2
 * for the last stage only (logits, loss).
 * Returns the number of calls; fn returning nonzero stops early.
 */
typedef int (*cvc_cal_op_fn)(void *user, const cvc_cal_shape *op, double count, int stage);
CVC_API size_t cvc_cal_scenario_ops(const cvc_proj_scenario *sc, cvc_cal_op_fn fn, void *user);

/* What can be measured where: the GPUs calibration runs on. */
typedef struct cvc_cal_opts {
	int gpus;           /* GPUs available in all (>= 1) */
	int gpus_per_node;  /* of those, per node (>= 1, <= gpus) */
	int warmup, reps;   /* per shape: untimed, timed runs */
	int steps;          /* training steps profiled per scenario (full cost) */
	const char *gpu;    /* catalog name of the GPU the estimate is for */
} cvc_cal_opts;

/* Defaults: 8 GPUs on one node, 5 warm-up + 20 timed runs, 10 steps, H100-SXM. */
CVC_API void cvc_cal_opts_default(cvc_cal_opts *o);

/*
 * Buckets one exact shape into the shape measured for it (docs/CALIBRATE.md,
 * "Buckets"): GEMM and attention sizes round up to a multiple of 128 (to a
 * power of two below 128), batch counts up to a power of two, bytes up to a
 * power of two, collective groups shrink to what opts can host on the same
 * topology level.  Returns NULL and fills *out, or a static reason when the
 * shape cannot be measured with opts (e.g. an inter-node collective on one
 * node); *out is then the exact shape.
 */
CVC_API const char *cvc_cal_bucket(const cvc_cal_shape *in, const cvc_cal_opts *opts,
				   cvc_cal_shape *out);

typedef struct cvc_cal_plan cvc_cal_plan;

/* *out owned by the caller (cvc_cal_plan_free).  opts copied; NULL = defaults. */
CVC_API cvc_status cvc_cal_plan_new(const cvc_cal_opts *opts, cvc_cal_plan **out);
/* Accepts NULL. */
CVC_API void cvc_cal_plan_free(cvc_cal_plan *p);
/* Message of the last failure; "" when none.  Never NULL (accepts NULL). */
CVC_API const char *cvc_cal_plan_errmsg(const cvc_cal_plan *p);

/*
 * Adds the operators of one valid scenario and, for the full-workload
 * cost, its step time (steps x step_s x sc->gpus GPU-seconds).  At most
 * 1 million distinct shapes (CVC_ERR_NOMEM beyond).
 */
CVC_API cvc_status cvc_cal_plan_add(cvc_cal_plan *p, const cvc_proj_scenario *sc,
				    double step_s);

/* Runs the study (valid scenarios, no marginal pass) into the plan. */
CVC_API cvc_status cvc_cal_plan_study(cvc_cal_plan *p, cvc_proj_study *st,
				      cvc_proj_ctx *ctx);

/* One planned measurement. */
typedef struct cvc_cal_item {
	cvc_cal_shape shape;     /* bucketed */
	uint64_t uses;           /* exact operator shapes of the study mapped here */
	uint64_t scenarios;      /* scenarios using it */
	double est_us;           /* one run, default roofline model on opts->gpu */
	double est_gpu_s;        /* (warmup + reps) x est_us x GPUs held */
} cvc_cal_item;

CVC_API size_t cvc_cal_plan_count(const cvc_cal_plan *p);
/* Borrowed; NULL past the end.  Items are in insertion order. */
CVC_API const cvc_cal_item *cvc_cal_plan_at(const cvc_cal_plan *p, size_t i);

typedef struct cvc_cal_summary {
	uint64_t scenarios;            /* valid scenarios added */
	uint64_t exact[CVC_CAL_NKIND]; /* distinct exact shapes per kind */
	uint64_t planned[CVC_CAL_NKIND]; /* distinct bucketed shapes per kind */
	uint64_t unmeasurable;         /* distinct exact shapes opts cannot host */
	double calib_gpu_s;            /* sum of est_gpu_s */
	double full_gpu_s;             /* sum over scenarios of steps x step_s x gpus */
	double factor;                 /* full_gpu_s / calib_gpu_s */
} cvc_cal_summary;

CVC_API void cvc_cal_plan_summary(const cvc_cal_plan *p, cvc_cal_summary *out);

/*
 * Plan CSV: header, then one row per item:
 * kind,dtype,sub,b,m,n,k,heads,kv_heads,causal,backward,bytes,group,per_node,
 * uses,scenarios,est_us,est_gpu_s  (dtype/sub as names, "" when unused).
 */
CVC_API void cvc_cal_plan_write_csv(const cvc_cal_plan *p, FILE *f);

#endif
