/*
 * cvc_import.h - bring existing traces into a cvc database.
 *
 * Formats are recognised by content, never by file name: Kineto/PyTorch
 * profiler Chrome-trace JSON (plain or gzip), Nsight Systems SQLite exports
 * (plain or gzip), nccl-tests text logs, and cvc databases themselves (shard
 * databases written per node, merged into one run).
 *
 * Every importer writes through cvc_db.h inside the caller's transaction;
 * cvc_import_files() opens and closes that transaction, so a failure in any
 * file leaves the database exactly as it was.  Not thread safe per db handle.
 */
#ifndef CVC_IMPORT_H
#define CVC_IMPORT_H

#include <stddef.h>
#include <stdint.h>

#include "cvc.h"
#include "cvc_db.h"

typedef enum cvc_format {
	CVC_FMT_UNKNOWN = 0,
	CVC_FMT_KINETO = 1,      /* Chrome-trace JSON from the PyTorch profiler */
	CVC_FMT_NSYS = 2,        /* Nsight Systems SQLite export */
	CVC_FMT_NCCL_TESTS = 3,  /* nccl-tests *_perf stdout */
	CVC_FMT_CVCDB = 4        /* a cvc database (shard) */
} cvc_format;

/* "kineto", "nsys", "nccl-tests", "cvc-db", "unknown". */
CVC_API const char *cvc_format_name(cvc_format f);

/*
 * Sniffs the first bytes of path (through gzip when compressed).  Returns
 * CVC_ERR_IO when unreadable and CVC_ERR_FORMAT when no importer knows the
 * content; the message goes to err (may be NULL).  On a pipe the bytes read
 * are gone: cvc_import_files() detects pipes itself without losing them.
 */
CVC_API cvc_status cvc_import_detect(const char *path, cvc_format *fmt,
				     char *err, size_t errlen);

/* Called as work advances; bytes_total may be 0 when unknown. */
typedef void (*cvc_progress_fn)(void *arg, const char *path, int64_t bytes_done,
				int64_t bytes_total);

typedef struct cvc_import_opts {
	const char *run_name;  /* run to add to (created if missing); NULL: named
				  after the first file */
	int jobs;              /* files parsed in parallel; <= 1 sequential */
	/*
	 * Run inside the import's transaction after every file is stored and
	 * before the commit (NULL: none): the caller composes what follows an
	 * import, e.g. the classifier (cvc_classify_after_import in
	 * cvc_classify.h), so that a failure there also leaves the database
	 * as it was.  The importers themselves call nothing above db/.
	 */
	cvc_status (*after)(cvc_db *db, int64_t run_id, void *arg);
	void *after_arg;
	cvc_progress_fn progress;
	void *progress_arg;
	/*
	 * 1: the files are a folder's, and each makes a run with the files its
	 * own metadata say are the same job (cvc_import_group), instead of all
	 * in one run; run_name must be NULL.  on_run (may be NULL) hears of each
	 * run after the commit: its id, name, files and how they were grouped.
	 */
	int group;
	void (*on_run)(void *arg, int64_t run_id, const char *name, int nfiles, const char *why);
	void *on_run_arg;
} cvc_import_opts;

typedef struct cvc_import_stats {
	int64_t files;
	int64_t events;        /* trace events read (every JSON event, SQL row, log row) */
	int64_t activities;    /* kernels + memcpy + memset stored */
	int64_t collectives;   /* collective size records stored */
	int64_t ranges;
	int64_t nccl_rows;
	int64_t op_shapes;     /* framework ops kept with their shapes (op_shapes) */
	int64_t op_launches;   /* kernel launches found inside them (op_launches) */
} cvc_import_stats;

/*
 * Imports n files into one run, all in one transaction.  A path may be a
 * pipe or FIFO (`<(zcat trace.json.gz)`) or "-" for standard input: each is
 * read once (Kineto JSON streamed, other formats through a private
 * temporary copy) and messages still name it as given.  *run_id (may be
 * NULL) receives the run; stats (may be NULL) is filled.  After the data is
 * stored opts->after runs (the CLI classifies kernel names there).  On
 * failure the database is unchanged and cvc_db_errmsg(db) names the file
 * and position.
 */
CVC_API cvc_status cvc_import_files(cvc_db *db, const char *const *paths, int n,
				    const cvc_import_opts *opts, int64_t *run_id,
				    cvc_import_stats *stats);

/*
 * What a trace says of itself, for telling the jobs of a folder apart: read
 * from a Kineto trace's head (distributedInfo, the first event's time when
 * it is wall-clock), an Nsight Systems export's session and system tables
 * (start, host, and the launcher's rank, size and job id in its recorded
 * environment), a cvc shard's run (the profile's run name, world size,
 * host, start).  Unknown: rank and world -1, strings "", start 0.
 */
typedef struct cvc_trace_ident {
	cvc_format fmt;
	int rank, world;
	char job[64];     /* SLURM/PMI/PBS/LSF job id, or a shard's profile run name */
	char host[64];
	char gpu[64];     /* the first device's name as the file gives it */
	int64_t start_ns; /* wall clock, ns since the epoch; 0 unknown */
} cvc_trace_ident;

/*
 * Fills *id for the file at path (not a pipe).  A gzip SQLite file is read
 * through a private temporary copy, made with db's temporary-file rules.
 * Returns CVC_ERR_FORMAT for content no importer knows (message in err).
 */
CVC_API cvc_status cvc_import_identify(cvc_db *db, const char *path, cvc_trace_ident *id,
				       char *err, size_t errlen);

/*
 * Groups n identified files into runs: group[i] receives file i's run, 0 ..
 * the count returned (-1 on no memory), in order of first appearance.
 * Files share a run when they are of one format and: nccl-tests logs
 * always (benchmark rows); Kineto traces with the same distributedInfo
 * world size; Nsight Systems exports and cvc shards with the same job id
 * (or run name) and world size; and in every case the same GPU (when both
 * name one), no rank twice, at most world size files, and, unless a job id
 * or run name says they are one job, starts within 10 minutes (both known)
 * or both unknown.
 * A Kineto trace without distributedInfo is a run of its own.
 */
CVC_API int cvc_import_group(const cvc_trace_ident *id, int n, int *group);

/* "8 Kineto traces, ranks 0-7 of world size 8, started ...": how run g of
 * cvc_import_group was made, into buf. */
CVC_API void cvc_import_group_why(const cvc_trace_ident *id, const int *group, int n, int g,
				  char *buf, size_t len);

/*
 * One file of a known format, into an existing run, inside the caller's
 * transaction.  The per-format entry points; exposed for tests and tools.
 */
CVC_API cvc_status cvc_import_kineto(cvc_db *db, int64_t run_id, const char *path,
				     const cvc_import_opts *opts, cvc_import_stats *stats);
CVC_API cvc_status cvc_import_nsys(cvc_db *db, int64_t run_id, const char *path,
				   const cvc_import_opts *opts, cvc_import_stats *stats);
CVC_API cvc_status cvc_import_nccl_tests(cvc_db *db, int64_t run_id, const char *path,
					 const cvc_import_opts *opts,
					 cvc_import_stats *stats);
/* Copies every run of the cvc database at path into run_id (shard merge). */
CVC_API cvc_status cvc_import_cvcdb(cvc_db *db, int64_t run_id, const char *path,
				    const cvc_import_opts *opts, cvc_import_stats *stats);

#endif
