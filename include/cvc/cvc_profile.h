/*
 * cvc_profile.h - the profiler's spool: what the CUPTI injection library
 * writes while the program runs, and how a spool becomes a cvc database.
 *
 * Why a spool: inserting one activity row into SQLite costs microseconds,
 * which is far above what a profiler may spend per record inside the
 * profiled program.  So the writer thread of libcvc_inject.so only decodes
 * CUPTI records into the compact fixed rows below and appends them to a
 * per-process file (tens of ns per record).  cvc_profile_materialize() turns
 * a spool into an ordinary cvc database (runs, ranks, devices, activities,
 * ranges, run_meta) after the program is done: in `cvc profile` once the
 * child exited, or in the process itself at exit when no `cvc profile`
 * parent is there to do it (like Nsight Systems' .qdstrm -> report step).
 *
 * This header needs no CUDA: the rows are cvc's own, the CUPTI structs are
 * decoded in profiler/inject/ (the only code that includes cupti.h).
 *
 * File layout (little endian, host order): a 16-byte header "CVCSPOOL",
 * u32 version, u32 reserved; then records, each an 8-byte header {u32 type;
 * u32 len} followed by len payload bytes padded to a multiple of 8.
 */
#ifndef CVC_PROFILE_H
#define CVC_PROFILE_H

#include <stddef.h>
#include <stdint.h>

#include "cvc.h"

#define CVC_SPOOL_MAGIC "CVCSPOOL"
/*
 * Version 2 (issue 19 item 8) added the kernel's CUDA-graph node id to the
 * ACT record and the graph records (CVC_SPOOL_GNODE, CVC_SPOOL_GCLONE).
 * Version 1 spools (an ACT record CVC_SPOOL_ACT_V1_SIZE bytes long, no
 * graph records) still materialize, as they did.
 */
#define CVC_SPOOL_VERSION 2
/* No record is larger than this; a bigger len means a corrupt file. */
#define CVC_SPOOL_MAX_RECORD (1u << 20)

/* Environment the launcher (`cvc profile`) passes to the injection library. */
#define CVC_ENV_OUTDIR "CVC_PROFILE_DIR"          /* output directory */
#define CVC_ENV_ACTIVITIES "CVC_PROFILE_ACTIVITIES" /* comma list, see below */
#define CVC_ENV_DELAY "CVC_PROFILE_DELAY"         /* seconds before recording */
#define CVC_ENV_DURATION "CVC_PROFILE_DURATION"   /* seconds recorded, 0 = all */
#define CVC_ENV_RUN "CVC_PROFILE_RUN"             /* run name shared by ranks */
#define CVC_ENV_PARENT "CVC_PROFILE_PARENT"       /* pid of `cvc profile`: it
						     materializes the spools */
#define CVC_ENV_BUFFERS "CVC_PROFILE_BUFFERS"     /* pool: number of buffers */
#define CVC_ENV_BUFFER_MB "CVC_PROFILE_BUFFER_MB" /* pool: MiB per buffer */
#define CVC_ENV_FLUSH_MS "CVC_PROFILE_FLUSH_MS"   /* CUPTI and spool flush period,
						     ms (default 1000): what a
						     SIGKILL can lose */

/* Activities that can be asked for (--activities).  Default: all but API. */
enum {
	CVC_PROF_KERNEL = 1 << 0,
	CVC_PROF_MEMCPY = 1 << 1,
	CVC_PROF_MEMSET = 1 << 2,
	CVC_PROF_NVTX = 1 << 3,
	CVC_PROF_EXTCORR = 1 << 4,
	CVC_PROF_RUNTIME = 1 << 5,
	CVC_PROF_DRIVER = 1 << 6,
	CVC_PROF_DEFAULT = CVC_PROF_KERNEL | CVC_PROF_MEMCPY | CVC_PROF_MEMSET |
			   CVC_PROF_NVTX | CVC_PROF_EXTCORR
};

/*
 * Parses a comma list of kernel, memcpy, memset, nvtx, extcorr, runtime,
 * driver, api (= runtime,driver), default, all into a CVC_PROF_* mask.
 * Returns CVC_ERR_USAGE naming the bad word in err (may be NULL).
 */
CVC_API cvc_status cvc_profile_parse_activities(const char *list, unsigned *mask,
						char *err, size_t errlen);

/* ---- records ------------------------------------------------------------ */

enum cvc_spool_type {
	CVC_SPOOL_STR = 1,     /* u32 id; bytes (len - 4), not NUL-terminated */
	CVC_SPOOL_ACT = 2,     /* struct cvc_spool_act */
	CVC_SPOOL_MARKER = 3,  /* struct cvc_spool_marker */
	CVC_SPOOL_EXTCORR = 4, /* struct cvc_spool_extcorr */
	CVC_SPOOL_API = 5,     /* struct cvc_spool_api */
	CVC_SPOOL_DEVICE = 6,  /* struct cvc_spool_device */
	CVC_SPOOL_META = 7,    /* struct cvc_spool_meta */
	CVC_SPOOL_PROC = 8,    /* struct cvc_spool_proc, first record */
	CVC_SPOOL_COLL = 9,    /* struct cvc_spool_coll */
	CVC_SPOOL_GNODE = 10,  /* struct cvc_spool_graph: node made by an NCCL launch (v2) */
	CVC_SPOOL_GCLONE = 11  /* struct cvc_spool_graph: node cloned from another (v2) */
};

/*
 * External-correlation kind that tags NCCL kernel launches: the injection
 * library, loaded by NCCL as its profiler plugin, pushes a launch id as
 * CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM2 around each NCCL kernel launch.
 */
#define CVC_EXTCORR_NCCL_LAUNCH 5

/* Kernel, memcpy or memset: the fields cvc_activity stores. */
struct cvc_spool_act {
	uint8_t kind;          /* cvc_act_kind */
	uint8_t copy_kind;     /* CUPTI copy kind numbering, 0 = unknown */
	uint16_t reserved;
	uint32_t device;
	int64_t start_ns, end_ns;
	uint32_t stream, context, correlation, name_sid;
	int32_t grid[3], block[3];
	int32_t registers;
	uint32_t reserved2;
	int64_t shared_mem_bytes;
	int64_t bytes;
	/* version 2 on: CUPTI's graphNodeId of a kernel launched by a CUDA
	 * graph (the executable graph's node), 0 otherwise */
	uint64_t graph_node_id;
};

/* Size of the ACT record in a version 1 spool (no graph_node_id). */
#define CVC_SPOOL_ACT_V1_SIZE 88

/*
 * A CUDA-graph node and what it came from: for CVC_SPOOL_GNODE, ref is the
 * NCCL launch id (struct cvc_spool_coll) whose kernel launch, made while a
 * stream was being captured, created node_id; for CVC_SPOOL_GCLONE, ref is
 * the node node_id was cloned from (cudaGraphInstantiate clones every node
 * into the executable graph, and replayed kernels carry the clone's id).
 */
struct cvc_spool_graph {
	uint64_t node_id;
	uint64_t ref;
};

enum {
	CVC_MARK_INSTANT = 1 << 0, /* CUPTI_ACTIVITY_FLAG_MARKER_INSTANTANEOUS */
	CVC_MARK_START = 1 << 1,   /* ..._START */
	CVC_MARK_END = 1 << 2      /* ..._END */
};

/* One NVTX marker event; a range is a START and an END with the same id. */
struct cvc_spool_marker {
	uint32_t flags;       /* CVC_MARK_* */
	uint32_t id;
	int64_t ts_ns;
	uint32_t name_sid;    /* 0 = none (END records) */
	uint32_t domain_sid;  /* 0 = default domain */
	int64_t tid;          /* host thread, -1 unknown */
};

/* externalId of CUPTI correlation id correlation. */
struct cvc_spool_extcorr {
	uint32_t correlation;
	uint32_t ext_kind;    /* CUpti_ExternalCorrelationKind */
	uint64_t external_id;
};

/* A CUDA runtime or driver call on a host thread. */
struct cvc_spool_api {
	uint32_t domain;      /* 1 driver, 2 runtime */
	uint32_t name_sid;
	int64_t start_ns, end_ns;
	int64_t tid;
	uint32_t correlation;
	uint32_t flags;       /* CVC_API_* (0 in spools before it) */
};

/* The call only places its kernels under the NVTX range it was made in (no
 * row: API rows were not asked for, only the external-id kinds on). */
#define CVC_API_LAUNCH_ONLY 1u

struct cvc_spool_device {
	uint32_t device;
	uint32_t sm_count;
	int64_t total_mem_bytes;
	int32_t cc_major, cc_minor;
	uint64_t mem_bw_kbps;  /* CUPTI globalMemoryBandwidth: KB/s */
	uint32_t clock_khz;
	uint32_t name_sid;
};

/* run_meta: value_sid != 0 sets key to that string, else adds n. */
struct cvc_spool_meta {
	uint32_t key_sid;
	uint32_t value_sid;
	int64_t n;
};

/*
 * The NCCL calls one kernel launch carries (NCCL profiler plugin: GroupApi,
 * CollApi/P2pApi and KernelLaunch events).  Joined to the kernel whose
 * correlation id has external id launch_id of kind CVC_EXTCORR_NCCL_LAUNCH.
 */
struct cvc_spool_coll {
	uint64_t launch_id;
	uint32_t func_sid;    /* NCCL's name: AllReduce, AllGather, Send, ...;
				 AlltoAll also for a group of sends and receives
				 (profiler/inject/nccl_plugin.c launch_class) */
	uint32_t dtype_sid;   /* ncclFloat32, ncclBfloat16, ... */
	int64_t count;        /* elements as NCCL's calls count them (per rank;
				 all-to-all of sends and receives: the sends'),
				 summed over the calls of the launch */
	int64_t bytes;        /* size in cvc's convention (cvc_analyze.h: the
				 all-gather's output, the reduce-scatter's input,
				 the all-to-all's send buffer, count x n), -1 unknown */
	int32_t root;         /* -1 none */
	int32_t nranks;       /* communicator size */
	uint32_t ncalls;      /* NCCL calls fused into this launch */
	uint32_t reserved;
};

struct cvc_spool_proc {
	int32_t rank;         /* -1 = unknown (stored as rank 0) */
	int32_t world_size;   /* 0 = unknown */
	int64_t pid;
	uint32_t host_sid, run_sid, tool_sid;
	uint32_t reserved;
};

/* ---- writing ----------------------------------------------------------------- */

typedef struct cvc_spool cvc_spool;

/*
 * Creates the spool file path (O_EXCL: an existing file is an error) with
 * a write buffer of buf_bytes (>= 64 KiB).  *out owns the handle; free
 * with cvc_spool_close().  Not thread safe: one writer thread owns it.
 */
CVC_API cvc_status cvc_spool_open(const char *path, size_t buf_bytes, cvc_spool **out);

/*
 * Appends one record (payload copied).  Records only reach the file in
 * whole buffers; when a write fails (disk full) the buffer's records are
 * dropped, counted in cvc_spool_lost(), and the file is cut back to its
 * last whole record, so the host program never stalls or dies for it.
 * Returns CVC_ERR_USAGE for len > CVC_SPOOL_MAX_RECORD, else CVC_OK.
 */
CVC_API cvc_status cvc_spool_put(cvc_spool *sp, uint32_t type, const void *payload,
				 uint32_t len);

/* Appends a STR record for s[0..len) under id (ids start at 1). */
CVC_API cvc_status cvc_spool_put_str(cvc_spool *sp, uint32_t id, const char *s,
				     size_t len);

/* Writes the buffered records out; returns CVC_ERR_IO if they were lost. */
CVC_API cvc_status cvc_spool_flush(cvc_spool *sp);

/* Records dropped so far because the file could not take them. */
CVC_API int64_t cvc_spool_lost(const cvc_spool *sp);

/* Flushes, closes; accepts NULL.  Returns the flush status. */
CVC_API cvc_status cvc_spool_close(cvc_spool *sp);

/* ---- materializing --------------------------------------------------------------- */

typedef struct cvc_materialize_stats {
	int64_t activities, ranges, devices, records;
	int64_t unmatched_markers;  /* START without END or END without START */
	int64_t lost_records;       /* sum of the spool's lost_records meta */
	int64_t collectives;        /* NCCL launches joined to their kernel */
	int64_t graph_replay_joined; /* of those, kernels replayed from a CUDA
					graph, joined through their graph node */
} cvc_materialize_stats;

/*
 * Turns the spool at spool_path into a new cvc database at db_path (which
 * must not exist): one run named after the spool's PROC record, its rank,
 * devices, activities (external ids resolved from EXTCORR records), NVTX
 * ranges, API ranges and run_meta, in one transaction.  A spool cut short
 * (process killed mid-write) keeps its whole records; the cut is noted in
 * run_meta "spool_truncated_bytes".  On failure the message, naming the
 * file and byte offset, is in err (may be NULL) and no database is left.
 * stats may be NULL.
 */
CVC_API cvc_status cvc_profile_materialize(const char *spool_path, const char *db_path,
					   cvc_materialize_stats *stats, char *err,
					   size_t errlen);

#endif
