/*
 * cvc_db.h - the trace database: schema, versioning, and the bulk writers
 * every importer (and the CUPTI profiler) goes through.
 *
 * One cvc_db handle wraps one SQLite connection.  A handle is not thread
 * safe: use one per thread.  Times are int64 nanoseconds everywhere inside
 * the library.  Every writer below must be called inside a transaction
 * opened with cvc_db_begin(); an import that fails calls cvc_db_rollback()
 * and leaves the file exactly as it was.
 *
 * Table ownership (see docs/ARCHITECTURE.md): db/ creates and migrates every
 * table; importers write runs/ranks/devices/sources/strings/activities/
 * collectives/ranges/nccl_tests/op_shapes through this header; the
 * classifier writes op_classes/name_class; the analyzer only reads.
 */
#ifndef CVC_DB_H
#define CVC_DB_H

#include <stddef.h>
#include <stdint.h>

#include "cvc.h"

typedef struct cvc_db cvc_db;
typedef struct sqlite3 sqlite3;

/* Schema version this build writes and reads (PRAGMA user_version). */
#define CVC_DB_SCHEMA_VERSION 4
/* PRAGMA application_id of every cvc database: "CVC1". */
#define CVC_DB_APP_ID 0x43564331

enum {
	CVC_DB_CREATE = 1 << 0,   /* create the file and schema when missing */
	CVC_DB_READONLY = 1 << 1, /* open read-only; never migrates, never writes */
	/* With CVC_DB_CREATE: a database this open creates is removed again
	 * when the handle ends (rollback or close) before any transaction of
	 * it committed, or is interrupted by a signal inside its first
	 * transaction (cvc_tmp_on_signals), provided that no other connection
	 * has written it meanwhile.  What a failed first import made holds
	 * nothing of value; what another process imported into it does. */
	CVC_DB_DISCARD = 1 << 2
};

/*
 * Opens (and with CVC_DB_CREATE creates or migrates) the database at path.
 * On success *out owns a handle to free with cvc_db_close().  On failure
 * *out is still set when a handle could be made, so the caller can read
 * cvc_db_errmsg(*out) and must close it; it is NULL only on CVC_ERR_NOMEM.
 * Returns CVC_ERR_VERSION for a newer schema or a file that is not a cvc
 * database (SQLite's "not a database" included; an empty SQLite file that
 * carries another application's application_id too), CVC_ERR_FORMAT for a
 * file SQLite finds corrupt while opening, CVC_ERR_NOTFOUND for a missing
 * file opened without CVC_DB_CREATE, CVC_ERR_DB for an unreadable one.
 *
 * A file is created with O_EXCL, so the handle knows whether it made it;
 * the schema is created inside a write transaction after checking again,
 * under the lock, that the file is still empty (parallel first imports
 * raced on it, issue 36 item 3).  Read-only, a database in a folder this
 * user cannot write, with no write-ahead log beside it, is opened as
 * immutable (SQLite cannot make the -shm file a WAL reader needs there).
 *
 * Every write transaction (cvc_db_begin) starts by checking, under the
 * write lock, that the path still names the file this handle opened; when
 * another process removed it meanwhile (a failed first import of its own),
 * the handle opens the path again, so nothing is written into a removed
 * file.
 */
CVC_API cvc_status cvc_db_open(const char *path, int flags, cvc_db **out);

/*
 * Deletes the database file at path and its -wal/-shm side files (scratch
 * shards, a database a failed first import created).  Missing files are
 * not an error.  The database must not be open.
 */
CVC_API void cvc_db_remove_files(const char *path);

/* Closes db; an open transaction is rolled back (CVC_DB_DISCARD: see
 * cvc_db_open).  Accepts NULL. */
CVC_API void cvc_db_close(cvc_db *db);

/* Detailed message of the last failure on db; "" when none.  Never NULL. */
CVC_API const char *cvc_db_errmsg(const cvc_db *db);

/*
 * Records a failure on db: formats the message, returns st unchanged so the
 * caller can write `return cvc_db_fail(db, CVC_ERR_FORMAT, ...)`.
 * Importers use it to report positions in their input files.
 */
CVC_API cvc_status cvc_db_fail(cvc_db *db, cvc_status st, const char *fmt, ...)
	CVC_PRINTF(3, 4);

/* The underlying connection, for read queries by other modules.  Borrowed. */
CVC_API sqlite3 *cvc_db_sqlite(cvc_db *db);

/*
 * Whether any SQLite connection (a cvc database, a shard, an Nsight Systems
 * export) has a table or view called name: 1, 0, or -1 when its schema
 * cannot be read.  For tables added by later versions and optional ones.
 */
CVC_API int cvc_db_sqlite_has_table(sqlite3 *sq, const char *name);

/* The path the database was opened with.  Borrowed. */
CVC_API const char *cvc_db_path(const cvc_db *db);

/* Transactions.  begin is not nestable; rollback accepts no open txn.
 * begin takes the write lock (BEGIN IMMEDIATE, waiting up to 30 s). */
CVC_API cvc_status cvc_db_begin(cvc_db *db);
CVC_API cvc_status cvc_db_commit(cvc_db *db);
CVC_API void cvc_db_rollback(cvc_db *db);

/* Runs a statement list with no results (DDL, maintenance). */
CVC_API cvc_status cvc_db_exec(cvc_db *db, const char *sql);

/* ---- runs ------------------------------------------------------------ */

/* Fields left NULL / 0 are unknown and stored as NULL. */
typedef struct cvc_run_info {
	const char *name;         /* user-visible name; unique per database */
	const char *format;       /* kineto, nsys, nccl-tests, cupti, ... */
	const char *source;       /* first source path, informational */
	const char *tool_version; /* e.g. "pytorch-kineto schema 1", "nsys 2024.5.1" */
	const char *gpu_model;    /* e.g. "NVIDIA A100-SXM4-80GB" */
	const char *nccl_version;
	int world_size;           /* 0 = unknown */
} cvc_run_info;

/* Inserts a run; *run_id receives its id. */
CVC_API cvc_status cvc_db_run_new(cvc_db *db, const cvc_run_info *info,
				  int64_t *run_id);

/*
 * Fills the run's unknown (NULL) fields from info; known fields stay.  Lets
 * the files of one job, imported one after another, complete each other.
 */
CVC_API cvc_status cvc_db_run_merge(cvc_db *db, int64_t run_id,
				    const cvc_run_info *info);

/*
 * The names of the database's runs, in the order they were made, quoted
 * and comma-separated into buf ("'a', 'b'"; cut after a whole name with
 * ", ..." when buf is short), and *count their number.
 */
CVC_API cvc_status cvc_db_run_names(cvc_db *db, char *buf, size_t len, int *count);

/* Finds a run by name; CVC_ERR_NOTFOUND when there is none. */
CVC_API cvc_status cvc_db_run_find(cvc_db *db, const char *name,
				   int64_t *run_id);

/* Sets run metadata key=value (lost record counts, clock pairs, ...). */
CVC_API cvc_status cvc_db_run_meta_set(cvc_db *db, int64_t run_id,
				       const char *key, const char *value);

/* Adds n to an integer metadata counter (missing counts as 0). */
CVC_API cvc_status cvc_db_run_meta_add(cvc_db *db, int64_t run_id,
				       const char *key, int64_t n);

/* ---- ranks, devices, sources ------------------------------------------ */

typedef struct cvc_rank_info {
	int rank;
	const char *host;         /* NULL = unknown */
	int64_t pid;              /* 0 = unknown */
	int64_t clock_offset_ns;  /* added to this rank's times to align ranks */
} cvc_rank_info;

/* Inserts or completes the rank row (run_id, rank). */
CVC_API cvc_status cvc_db_rank_put(cvc_db *db, int64_t run_id,
				   const cvc_rank_info *info);

typedef struct cvc_device_info {
	int rank;
	int device;               /* device index as the trace names it */
	const char *name;         /* NULL = unknown */
	int sm_count;             /* 0 = unknown */
	int64_t total_mem_bytes;
	int cc_major, cc_minor;   /* -1 = unknown */
	double mem_bw_gbps;       /* 0 = unknown */
	int64_t clock_khz;
} cvc_device_info;

/* Inserts or completes the device row (run_id, rank, device). */
CVC_API cvc_status cvc_db_device_put(cvc_db *db, int64_t run_id,
				     const cvc_device_info *info);

/* Records one imported file; *source_id may be NULL. */
CVC_API cvc_status cvc_db_source_add(cvc_db *db, int64_t run_id,
				     const char *path, const char *format,
				     int rank, int64_t events,
				     int64_t *source_id);

/* ---- strings ----------------------------------------------------------- */

/* The longest name a database takes: C++ template kernel names reach tens
 * of KiB; a megabyte is input that was not meant as a name. */
#define CVC_DB_NAME_MAX ((size_t)1 << 20)

/*
 * Interns s[0..len) (need not be NUL-terminated) and returns its id.  Kernel
 * names repeat thousands of times; a hash in front of the table keeps the
 * cost one lookup per event.  A name longer than CVC_DB_NAME_MAX is
 * CVC_ERR_FORMAT; importers check first so that their error names the place.
 */
CVC_API cvc_status cvc_db_intern(cvc_db *db, const char *s, size_t len,
				 int64_t *id);

/* ---- device activities --------------------------------------------------- */

typedef enum cvc_act_kind {
	CVC_ACT_KERNEL = 1,
	CVC_ACT_MEMCPY = 2,
	CVC_ACT_MEMSET = 3
} cvc_act_kind;

/* Unknown integers are -1 (ids) or 0 (sizes); NULL in the table. */
typedef struct cvc_activity {
	int64_t run_id;
	int rank;
	int device;
	cvc_act_kind kind;
	int64_t name_id;          /* cvc_db_intern() id */
	int64_t start_ns, end_ns; /* end >= start */
	int64_t stream;
	int64_t context;
	int64_t correlation;      /* CUPTI correlation id, -1 = unknown */
	int64_t external_id;      /* framework op id (Kineto External id), -1 */
	int32_t grid[3], block[3];/* 0 = unknown */
	int32_t registers;
	int64_t shared_mem_bytes;
	int64_t bytes;            /* memcpy/memset size */
	int32_t copy_kind;        /* CUPTI copy kind numbering, 0 = unknown */
	int has_launch;           /* launch_ns is known (0: stored as NULL) */
	int64_t launch_ns;        /* host time of the launching call, in the
				     clock of the rank's host ranges */
} cvc_activity;

/* Inserts one activity; *id (may be NULL) receives its row id. */
CVC_API cvc_status cvc_db_activity_add(cvc_db *db, const cvc_activity *a,
				       int64_t *id);

/* ---- collectives --------------------------------------------------------- */

/* Sizes of a collective kernel, where the trace knows them.  -1 = unknown. */
typedef struct cvc_collective {
	int64_t activity_id;
	const char *coll;         /* allreduce, allgather, ... (trace's words) */
	const char *dtype;        /* Float, BFloat16, float, ... */
	int64_t in_nelems, out_nelems;
	int64_t bytes;            /* message bytes per rank, -1 if unknown */
	int group_size;           /* 0 = unknown */
	const char *pg_name, *pg_desc, *pg_ranks;
	const char *algo, *proto; /* RING/TREE/NVLS..., LL/LL128/SIMPLE */
	int root;                 /* -1 = none */
} cvc_collective;

CVC_API cvc_status cvc_db_collective_add(cvc_db *db, const cvc_collective *c);

/* ---- host and device ranges ------------------------------------------------ */

typedef enum cvc_range_kind {
	CVC_RANGE_CPU = 1,  /* user_annotation, CPU-timeline NVTX push/pop */
	CVC_RANGE_GPU = 2,  /* gpu_user_annotation: a span on the device timeline */
	CVC_RANGE_NVTX = 3  /* NVTX range from Nsight Systems or CUPTI markers */
} cvc_range_kind;

typedef struct cvc_range {
	int64_t run_id;
	int rank;
	int device;          /* -1 for host ranges */
	cvc_range_kind kind;
	int64_t name_id;
	int64_t start_ns, end_ns;
	int64_t tid;         /* host thread or stream; -1 unknown */
	const char *domain;  /* NVTX domain, NULL if none */
} cvc_range;

CVC_API cvc_status cvc_db_range_add(cvc_db *db, const cvc_range *r);

/*
 * The accepted time window: every time on a timeline (activities, ranges)
 * and every rank's clock offset is within +-CVC_TIME_LIMIT_NS, 2^62 - 1 ns
 * (146 years either side of the trace's epoch; Kineto's epoch nanoseconds
 * are 1.7e18).  Derived from what 64-bit arithmetic holds (issue 36 item
 * 7): the length of an interval between two accepted times, and so the
 * length of any union of such intervals, is below 2^63; a time with its
 * rank's offset added stays within +-(2^63 - 2).  What can grow past that
 * (a sum of many kernels' durations) is summed in 128 bits and checked.
 */
#define CVC_TIME_LIMIT_NS (INT64_MAX / 2)

/*
 * The bounds cvc_db_activity_add() and cvc_db_range_add() hold every span
 * to (a writer that would rather drop a record than fail asks first): times
 * within +-CVC_TIME_LIMIT_NS, end not before start, device 0..65535 (-1 too
 * when host_ok, for host ranges).
 */
CVC_API int cvc_db_span_ok(int64_t start, int64_t end, int64_t device, int host_ok);

/*
 * Bytes per element of a dtype as traces spell it (c10 names "Float",
 * "BFloat16", "Float8_e4m3fn", NCCL/short names "f32", "bf16", ...; case
 * and punctuation ignored); 0 when unknown or NULL.  Here, in the first
 * module, because importers and the analyzer both turn element counts into
 * bytes.
 */
CVC_API int cvc_dtype_size(const char *dtype);

/* ---- nccl-tests results ------------------------------------------------------ */

typedef struct cvc_nccltest_row {
	int64_t run_id;
	const char *op;        /* all_reduce, all_gather, ... (binary name sans _perf) */
	int nranks;            /* 0 = unknown */
	int64_t size_bytes;
	int64_t count;
	const char *dtype;
	const char *redop;
	int root;
	int in_place;          /* 0 out-of-place, 1 in-place */
	double time_us, algbw_gbps, busbw_gbps;
	int64_t wrong;         /* -1 = N/A */
	int gpus_per_node;     /* ranks per host; 0 = unknown (schema 3) */
	const char *algo;      /* NCCL_ALGO forced, NULL/"" = NCCL's choice */
} cvc_nccltest_row;

CVC_API cvc_status cvc_db_nccltest_add(cvc_db *db, const cvc_nccltest_row *r);

/* ---- shapes of GEMM-like framework ops ------------------------------------------ */

/*
 * One CPU op of a trace recorded with shapes (op_shapes table): the GEMM-like
 * and memory-bound ATen ops of cvc_db_shape_op().
 * dims / types are JSON text as the trace gives it ("Input Dims", "Input
 * type"), dims[0..dims_len), types[0..types_len); need not be
 * NUL-terminated; types NULL = absent.  The op's kernels are the
 * activities of the same run, rank and external_id, and those whose
 * correlation is in op_launches for the op; external_id is -1 when the
 * trace's kernels do not carry op ids (older Kineto).
 */
typedef struct cvc_op_shape {
	int64_t run_id;
	int rank;
	int64_t external_id;
	int64_t name_id;          /* cvc_db_intern() id of the op name */
	const char *dims;
	size_t dims_len;
	const char *types;
	size_t types_len;
} cvc_op_shape;

/* Families of framework ops whose shapes are kept (db/shapeops.c). */
typedef enum cvc_shape_kind {
	CVC_SHAPE_NONE = 0,
	CVC_SHAPE_GEMM,         /* mm, addmm, bmm, baddbmm, matmul, linear, _scaled_mm */
	CVC_SHAPE_ELEMENTWISE,  /* add, mul, gelu, dropout, ... and their backwards */
	CVC_SHAPE_NORM,         /* native_layer_norm, _softmax, ... and backwards */
	CVC_SHAPE_REDUCTION,    /* sum, mean */
	CVC_SHAPE_COPY,         /* copy_ */
	CVC_SHAPE_GATHER        /* embedding, index_select */
} cvc_shape_kind;

/*
 * The family of the ATen op name[0..len) ("aten::native_layer_norm") when
 * its shapes are kept in op_shapes, else CVC_SHAPE_NONE.  Exact names; one
 * table for the importers and models/.
 */
CVC_API cvc_shape_kind cvc_db_shape_op(const char *name, size_t len);

/* Inserts one op shape (text copied), its row id in *id (id may be NULL).
 * CVC_ERR_USAGE when dims is NULL. */
CVC_API cvc_status cvc_db_op_shape_add(cvc_db *db, const cvc_op_shape *s, int64_t *id);

/*
 * Records that op shape shape_id made the launch with this correlation id
 * (op_launches: found by CPU-time nesting, profiler/import/oplink.c).  A
 * pair already there is left as it is.
 */
CVC_API cvc_status cvc_db_op_launch_add(cvc_db *db, int64_t shape_id, int64_t run_id, int rank,
					int64_t correlation);

#endif
