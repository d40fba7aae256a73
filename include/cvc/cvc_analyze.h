/*
 * cvc_analyze.h - compute vs communication time per run, rank (device) and
 * step: how much of the device was busy, how much of it was communication,
 * and how much of that communication was hidden under compute.
 *
 * Definitions (one device; all kernels of all its streams together):
 *   busy     = |union of all kernel, memcpy and memset intervals|
 *   compute  = |union of non-communication kernels|
 *   comm     = |union of communication kernels|
 *   hidden   = |comm-union INTERSECT compute-union|
 *   exposed  = comm - hidden
 *   overlap% = 100 * hidden / comm (0 when comm is 0)
 *   span     = last end - first start over kernels, memcpys and memsets
 *   idle     = span - busy
 * Memcpy and memset activities are neither compute nor communication; they
 * keep the device busy (as HTA's idle time and TraceLens's busy time count
 * them) and extend the span.  A kernel is communication when its name's class
 * (name_class -> op_classes.is_comm, written by the classifier) says so;
 * names with no class fall back to HTA's rule (name starts with "nccl" or
 * contains "ncclKernel" / "ncclDevKernel").
 *
 * Intervals are half-open [start, end) in int64 nanoseconds.  Activities are
 * read per (run, rank, device) in start order through the
 * activities_by_device index and swept once, so the cost is one index scan
 * plus O(1) work per activity (O(n log n) counting SQLite's ordered read)
 * and the memory does not grow with the number of kernels.  The sweep uses
 * |A INTERSECT B| = |A| + |B| - |A UNION B| with A UNION B = busy, which is
 * exact in integer nanoseconds.
 *
 * Steps (by = CVC_BY_STEP): the windows are ranges whose name matches
 * step_regex (default ^ProfilerStep#(\d+)$).  GPU-timeline ranges (kind 2:
 * Kineto's gpu_user_annotation, or an NVTX range `cvc profile` projected
 * onto the device through its launches) are preferred; when the device has
 * none, NVTX ranges (kind 3) of the rank are used, then CPU ranges (kind 1).
 * The step number is the regex's first capture group when it is a decimal
 * number, else the window's 0-based position in start order.  Ranges with
 * the same step number are merged into one step (union of their windows).
 * Which activities a step holds (cvc_breakdown.step_rule says which rule):
 *  - GPU-timeline windows (CVC_STEP_BY_GPU_CLIP): every activity is clipped
 *    to the step's windows, which already lie on the device's clock; a
 *    kernel counts in a step when its clipped interval is non-empty (or,
 *    zero-length, when it lies in the window); span is last clipped end -
 *    first clipped start.
 *  - host windows (NVTX or CPU) on a device where activities carry the host
 *    time of their launching call (activities.launch_ns, schema 4; HTA's
 *    iteration of a kernel) (CVC_STEP_BY_LAUNCH): each activity belongs,
 *    whole, to the step whose window holds its launch time (of several, the
 *    one that started last), or to none; compute, comm, hidden, exposed and
 *    idle are over the step's own activities, its span from the first one's
 *    start to the last one's end (the GPU may run far behind the CPU, and a
 *    step's span may overlap the next one's).  Activities without a launch
 *    time there belong to no step: their call is not in the trace (queued
 *    before the host trace began).
 *  - host windows on a device with no launch time at all (a database made
 *    before schema 4, a trace without runtime records)
 *    (CVC_STEP_BY_HOST_CLIP): clipped, as for GPU windows.
 *
 * Handles are not thread safe (one cvc_db per thread).
 */
#ifndef CVC_ANALYZE_H
#define CVC_ANALYZE_H

#include <stddef.h>
#include <stdint.h>

#include "cvc.h"
#include "cvc_base.h"
#include "cvc_db.h"

/* ---- interval arithmetic ---------------------------------------------- */

/* A half-open interval [start_ns, end_ns); end < start is treated as empty. */
typedef struct cvc_ival {
	int64_t start_ns, end_ns;
} cvc_ival;

/*
 * Sorts iv by start and merges overlapping and touching intervals in place;
 * empty (zero-length or inverted) intervals are dropped.  Returns the new
 * count; iv[0..ret) is then sorted, disjoint and non-touching.
 * O(n log n).  iv may be NULL when n is 0.
 */
CVC_API size_t cvc_ivals_normalize(cvc_ival *iv, size_t n);

/* Total length of the union of iv[0..n).  Reorders iv (normalizes it).
 * Exact for any int64 times whose union is at most INT64_MAX long (always
 * within the accepted window, CVC_TIME_LIMIT_NS); INT64_MAX beyond. */
CVC_API int64_t cvc_ivals_union_ns(cvc_ival *iv, size_t n);

/*
 * Length of the intersection of two normalized lists (as left by
 * cvc_ivals_normalize).  O(na + nb) two-pointer walk.  Bounded like
 * cvc_ivals_union_ns.
 */
CVC_API int64_t cvc_ivals_intersect_ns(const cvc_ival *a, size_t na,
				       const cvc_ival *b, size_t nb);

/*
 * Streaming union: feed intervals in non-decreasing start order; total_ns
 * is the union length so far plus the open run.  O(1) memory.  Initialise
 * with cvc_merger_init(); read with cvc_merger_total().
 */
typedef struct cvc_merger {
	uint64_t closed_ns;        /* length of finished merged runs (unsigned:
				      a union between int64 times never wraps) */
	int64_t cur_start, cur_end;/* the open merged run */
	int open;
} cvc_merger;

CVC_API void cvc_merger_init(cvc_merger *m);
/*
 * Adds [s, e).  Returns CVC_ERR_USAGE (and ignores the interval) when s is
 * before the start of a previous interval: callers feed sorted input.
 */
CVC_API cvc_status cvc_merger_add(cvc_merger *m, int64_t s, int64_t e);
/* The union's length; INT64_MAX when it is longer (outside the window). */
CVC_API int64_t cvc_merger_total(const cvc_merger *m);

/* ---- the analysis ---------------------------------------------------------- */

typedef enum cvc_analyze_by {
	CVC_BY_RANK = 0,  /* one row per run, rank and device */
	CVC_BY_STEP = 1   /* one row per run, rank, device and step */
} cvc_analyze_by;

typedef struct cvc_analyze_opts {
	const char *run;        /* run name; NULL = every run in the database */
	cvc_analyze_by by;
	const char *step_regex; /* PCRE2 pattern; NULL = ^ProfilerStep#(\d+)$ */
	int classes;            /* fill cvc_breakdown.classes */
} cvc_analyze_opts;

/* Per-class figures of one breakdown row (only with opts.classes). */
typedef struct cvc_class_time {
	char name[32];          /* op_classes.name, or "unclassified" */
	int is_comm;
	int64_t kernels;
	int64_t sum_ns;         /* plain sum of kernel durations (summed in 128
				   bits; a sum past INT64_MAX is an error) */
	int64_t union_ns;       /* length of the union of this class's kernels */
} cvc_class_time;

/* How a step row's activities were chosen (see "Steps" above). */
typedef enum cvc_step_rule {
	CVC_STEP_NONE = 0,         /* a CVC_BY_RANK row */
	CVC_STEP_BY_GPU_CLIP = 1,  /* clipped to GPU-timeline step windows */
	CVC_STEP_BY_LAUNCH = 2,    /* whole, by the host time of their launch */
	CVC_STEP_BY_HOST_CLIP = 3  /* clipped to host windows: no launch times */
} cvc_step_rule;

/* One row: a (run, rank, device) or a (run, rank, device, step). */
typedef struct cvc_breakdown {
	char run[128];          /* run name (truncated past 127 bytes) */
	int64_t run_id;
	int rank;
	int device;
	int64_t step;           /* -1 in CVC_BY_RANK rows */
	cvc_step_rule step_rule;
	int64_t kernels, comm_kernels;
	int64_t busy_ns, compute_ns, comm_ns, hidden_ns, exposed_ns, idle_ns, span_ns;
	int64_t first_ns;       /* start of the span (clock of the trace) */
	int64_t clock_offset_ns;/* ranks.clock_offset_ns: add to align ranks */
	double overlap_pct;
	/* comm and exposed as parts of the span, the step a trace shows
	 * (cvc_shares_of: the definitions the projector and report use) */
	cvc_shares shares;
	cvc_class_time *classes;/* owned by the row array; NULL unless asked */
	size_t nclasses;        /* classes with at least one kernel, by class id */
} cvc_breakdown;

/*
 * Analyses one run (opts->run) or every run.  On success *rows (owned by the
 * caller, free with cvc_breakdown_free) holds *nrows rows ordered by run id,
 * rank, device (and step).  A run without activities, or with no step ranges
 * under CVC_BY_STEP, contributes no rows.  Errors: CVC_ERR_NOTFOUND for an
 * unknown run name, CVC_ERR_USAGE for a step_regex PCRE2 rejects, CVC_ERR_DB;
 * the message is in cvc_db_errmsg(db).  opts may be NULL (every run, by rank).
 *
 * Kernel names with no name_class row (a database written by an older cvc)
 * are classified first with cvc_classify_db(db, NULL, 0) in a transaction of
 * its own; on a read-only database HTA's name rule is used instead.  So the
 * call may write to db, and must not be made inside an open transaction.
 */
CVC_API cvc_status cvc_analyze_run(cvc_db *db, const cvc_analyze_opts *opts,
				   cvc_breakdown **rows, size_t *nrows);

/* Frees rows from cvc_analyze_run (and their classes).  Accepts NULL. */
CVC_API void cvc_breakdown_free(cvc_breakdown *rows, size_t nrows);

/* ---- collectives ------------------------------------------------------------ */

/*
 * Statistics of the collective kernels whose sizes the trace gave
 * (collectives table joined to activities), one row per (run, rank,
 * collective type, size, group size).
 *
 * Size S follows the nccl-tests convention (its printed "size" column, which
 * is max(send bytes, receive bytes) per rank): S = max(in_nelems, out_nelems)
 * x sizeof(dtype).  So all_reduce, broadcast, reduce, sendrecv: the per-rank
 * buffer; all_gather: the total output (per-rank input x n); reduce_scatter:
 * the total input (per-rank output x n); all_to_all: the whole per-rank send
 * buffer; gather and scatter: the root's whole buffer (per-rank x n).  When nelems or the dtype is unknown, collectives.bytes is used as
 * S as stored.  algbw = S / mean time (bytes per ns = GB/s, 1 GB = 1e9 B);
 * busbw = algbw x factor: allreduce 2(n-1)/n; allgather, reducescatter,
 * alltoall, gather, scatter (n-1)/n; broadcast, reduce, sendrecv 1.  n is the collective's
 * group size, else the run's world size; busbw is NaN when n is needed but
 * unknown, or the type is not one of those.
 */
typedef struct cvc_coll_stat {
	char run[128];
	int64_t run_id;
	int rank;
	char coll[32];          /* allreduce, allgather, reducescatter, alltoall,
				   broadcast, reduce, sendrecv, gather, scatter,
				   or the trace's
				   own word (lowercased) when none of those */
	int64_t bytes;          /* S above */
	int group_size;         /* 0 = unknown */
	int64_t count;
	int64_t total_ns;
	double mean_ns;
	double algbw_gbps;
	double busbw_gbps;      /* NaN when it cannot be computed */
} cvc_coll_stat;

/*
 * Fills *rows (caller frees with free()) with the statistics of opts->run
 * (NULL: every run), ordered by run, rank, collective, size.  opts->by and
 * classes are ignored.  Errors as for cvc_analyze_run.
 */
CVC_API cvc_status cvc_analyze_collectives(cvc_db *db, const cvc_analyze_opts *opts,
					   cvc_coll_stat **rows, size_t *nrows);

/* ---- idle time ------------------------------------------------------------- */

/*
 * Where a device's idle time goes: HTA's idle time breakdown, taken on the
 * device rather than per stream so that the parts add up to the idle_ns of
 * cvc_analyze_run's rank row (span - busy).  Each gap in the union of the
 * device's kernels, copies and sets is one of:
 *  - host wait: every activity that ends the gap was launched
 *    (activities.launch_ns) after the gap began; nothing was queued, so the
 *    GPU waited for the host (HTA: the runtime call after the previous
 *    kernel's end);
 *  - kernel wait: not a host wait, and shorter than kernel_wait_ns: the
 *    latency between back-to-back work (HTA's consecutive_kernel_delay);
 *  - other: the rest: a stream waiting on another's event, a
 *    synchronisation, work queued behind something not in the trace.
 * A gap none of whose ending activities has a launch time cannot be told a
 * host wait from the trace: it is counted in unlaunched_gaps and goes to
 * kernel wait or other by its length.
 */
typedef struct cvc_idle_stat {
	char run[128];          /* run name (truncated past 127 bytes) */
	int64_t run_id;
	int rank;
	int device;
	int64_t gaps;           /* idle gaps between the first start and the last end */
	int64_t unlaunched_gaps;/* of those, ended by activities without launch times */
	int64_t idle_ns, host_wait_ns, kernel_wait_ns, other_ns;
} cvc_idle_stat;

/*
 * The idle breakdown of every (run, rank, device) of opts->run (NULL: every
 * run), ordered so; opts->by, step_regex and classes are ignored.
 * kernel_wait_ns <= 0: no gap is a kernel wait.  *rows is malloc'd (caller
 * frees with free()).  Errors as for cvc_analyze_run.
 */
CVC_API cvc_status cvc_analyze_idle(cvc_db *db, const cvc_analyze_opts *opts,
				    int64_t kernel_wait_ns, cvc_idle_stat **rows, size_t *nrows);

/* The default kernel_wait_ns of `cvc analyze --idle` and the report: 20 us,
 * the bound under which docs/MODELS.md "Kernel gaps" counts a gap between
 * consecutive kernels as launch latency, longer ones being host stalls. */
#define CVC_KERNEL_WAIT_NS_DEFAULT 20000

/* nccl-tests bus-bandwidth factor of coll for n ranks; NaN when unknown. */
CVC_API double cvc_busbw_factor(const char *coll, int n);

/* cvc_dtype_size() (bytes per element of a trace's dtype) is in cvc_db.h. */

#endif
