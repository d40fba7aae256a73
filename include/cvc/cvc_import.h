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
