/*
 * import_int.h - what the importers share inside the library: file
 * helpers and the rank choice for files that do not name their rank.
 */
#ifndef CVC_IMPORT_INT_H
#define CVC_IMPORT_INT_H

#include <stddef.h>
#include <stdint.h>

#include <zlib.h>

#include "cvc/cvc_base.h"
#include "cvc/cvc_import.h"

/* True when the first bytes are the gzip magic. */
int imp_is_gzip(const unsigned char *p, size_t n);

/*
 * Reads up to cap bytes from the start of path, through gzip when the file
 * is compressed.  *n receives the count.  Returns CVC_ERR_IO on failure with
 * a message in err.
 */
cvc_status imp_peek(const char *path, unsigned char *buf, size_t cap, size_t *n,
		    int *gzipped, char *err, size_t errlen);

/*
 * Message (naming path, at decompressed offset off) and status of the
 * failure gz just reported: a read error, a cut or a corrupt gzip stream.
 */
cvc_status imp_gz_fail(gzFile gz, const char *path, int64_t off, char *err, size_t errlen);

/*
 * Writes pre[0..npre) and then the rest of gz into a new private file under
 * $TMPDIR and returns its malloc'd name in *tmp (caller removes and frees).
 * Messages (err) name path, the input as the user gave it, with the offset
 * in the decompressed stream of a read, gzip or write failure.
 */
cvc_status imp_temp_copy(gzFile gz, const unsigned char *pre, size_t npre, const char *path,
			 char **tmp, char *err, size_t errlen);

/*
 * For formats that need a seekable file (SQLite): when path is gzip,
 * inflates it into a private temporary file and returns its malloc'd path in
 * *tmp (caller unlinks and frees); else *tmp is NULL and path is used as is.
 */
cvc_status imp_gunzip_temp(cvc_db *db, const char *path, char **tmp);

/*
 * The rank to give a file that does not say which rank it is: the lowest
 * rank number not yet present in the run (so files of one job imported
 * together become ranks 0, 1, 2, ...).
 */
cvc_status imp_next_free_rank(cvc_db *db, int64_t run_id, int *rank);

/*
 * The rank, world size and job id a launcher left in an environment
 * written "A=1;KEY=v;..." (nsys's DeviceEnvironment): Open MPI's, PMI's,
 * Slurm's or torchrun's; the fields of id it finds are set where they are
 * still unknown (rank and world -1, job "").
 */
void imp_launcher_env(const char *env, cvc_trace_ident *id);

/* Whether rank has no row in the run yet. */
int imp_rank_free(cvc_db *db, int64_t run_id, int rank);

struct sqlite3;

/* One integer of a query's first row on sq (0 when none or on error). */
int64_t imp_sq_int(struct sqlite3 *sq, const char *sql);
/* One text of a query's first row on sq, into out ("" when none). */
void imp_sq_text(struct sqlite3 *sq, const char *sql, char *out, size_t len);

/* An Nsight Systems export's session (nsys_session.c). */
struct imp_nsys_session {
	int64_t clock_offset;   /* its start (ns since the epoch), added to its times; 0 when
				   they are already since the epoch or the start is unknown */
	char host[64];          /* TARGET_INFO_SYSTEM_ENV Hostname, "" */
	cvc_trace_ident env;    /* the launcher's rank and world size (-1 unknown), job */
};

void imp_nsys_session(struct sqlite3 *src, int have_kernels, struct imp_nsys_session *out);

/*
 * Fills the temporary table temp.cvc_nsys_launch(proc, corr, ts) on the
 * export's connection src with the runtime and driver calls
 * (CUPTI_ACTIVITY_KIND_RUNTIME, _DRIVER where present) by process
 * (globalTid with the thread bits cleared, as activities' globalPid) and
 * correlation id: the host time each activity was launched at.  *have: the
 * table holds rows.  Returns 0, or -1 on an SQLite error (sqlite3_errmsg).
 */
int imp_nsys_launch_table(struct sqlite3 *src, int *have);

/*
 * Fills the temporary table temp.cvc_nsys_dup(rid) on the export's
 * connection src with the rowids of the rows of activity table `table`
 * that repeat an earlier row's start, end, deviceId, streamId and
 * correlationId (and globalPid) (nsys_notes.c): the rows to leave out;
 * *n: how many.  A table without those columns has none.  Returns 0, or
 * -1 on an SQLite error (sqlite3_errmsg).
 */
int imp_nsys_dup_rows(struct sqlite3 *src, const char *table, int64_t *n);

/*
 * The first row of activity table `table` (which has a globalPid column)
 * whose globalPid is neither an integer nor NULL (nsys_notes.c): its rowid
 * in *rowid and its SQLite type ("text", "blob", "real") in type.  Returns
 * 1 when there is one, 0 when none, -1 on an SQLite error.
 */
int imp_nsys_bad_gpid(struct sqlite3 *src, const char *table, int64_t *rowid, char *type,
		      size_t len);

/*
 * What an export holds other than it seems, as run_meta notes of path
 * (nsys_notes.c): nsys.incomplete[FILE] for CUDA graphs traced whole,
 * nsys.duplicates[FILE] when dups[0..3) kernel, memcpy and memset rows
 * were left out as repeats.
 */
cvc_status imp_nsys_notes(cvc_db *db, int64_t run_id, const char *path, struct sqlite3 *src,
			  const int64_t *dups);

/* run_meta key per file ("key[base name]"), so the files of one run keep
 * theirs (import.c; the nccl-tests and Nsight Systems importers' notes). */
cvc_status imp_meta_per_file(cvc_db *db, int64_t run_id, const char *key, const char *path,
			     const char *value);


/*
 * An input that can be read only once (stream.c): a pipe, a FIFO, a
 * terminal, or "-" for standard input.  Detection's bytes are kept in pre
 * and handed on instead of being read again.
 */
struct imp_stream {
	const char *path;       /* as the user gave it (borrowed): messages name it */
	gzFile gz;              /* the input, after pre; NULL once taken or spilled */
	unsigned char *pre;     /* the first npre bytes, already decompressed */
	size_t npre;
	char *tmp;              /* private copy (imp_stream_spill), removed on free */
};

/* True when path is "-" or names something that is neither a file nor a directory. */
int imp_is_stream(const char *path);

/* Opens path ("-": standard input) and reads its first 64 KiB into pre. */
cvc_status imp_stream_open(const char *path, struct imp_stream **out, char *err,
			   size_t errlen);

/* Copies the whole input, pre included, into s->tmp, for importers that seek. */
cvc_status imp_stream_spill(struct imp_stream *s, char *err, size_t errlen);

/* Closes, unlinks the copy, frees; accepts NULL. */
void imp_stream_free(struct imp_stream *s);

/* Makes s the stream this thread is importing (NULL: none). */
void imp_stream_set_current(struct imp_stream *s);

/* The stream this thread is importing under the name path, or NULL. */
struct imp_stream *imp_stream_current(const char *path);

/* Before reading a foreign SQLite file (an Nsight export, a shard): no
 * views (a recursive one never ends), generated columns and virtual tables
 * (computed on every read), strings and blobs of at most 16 MiB.
 * CVC_ERR_FORMAT naming path otherwise. */
struct sqlite3;
cvc_status imp_foreign_check(cvc_db *db, struct sqlite3 *src, const char *path);

/* What to open for path: the private copy of a spilled stream, else path. */
const char *imp_open_name(const char *path);

/*
 * Format of the first n bytes of path's content (already decompressed):
 * detection proper, shared by cvc_import_detect() and streams.
 */
cvc_status imp_detect_buf(const char *path, const unsigned char *buf, size_t n,
			  cvc_format *fmt, char *err, size_t errlen);

/* Progress callback helper: calls opts->progress when set. */
void imp_progress(const cvc_import_opts *opts, const char *path, int64_t done,
		  int64_t total);

/* Adds an importer's counts (files included) to *stats; stats may be NULL. */
void imp_stats_add(cvc_import_stats *stats, const cvc_import_stats *add);

#endif
