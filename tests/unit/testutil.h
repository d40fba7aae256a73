/*
 * testutil.h - helpers shared by the Criterion tests: paths into ../shared
 * (skipping when it is absent), scratch directories, running the cvc tool.
 */
#ifndef CVC_TESTUTIL_H
#define CVC_TESTUTIL_H

#include <stddef.h>
#include <stdint.h>

/* UNDER_ASAN: 1 in the sanitizer build, where tests scale their loads and
 * timings down (gcc says so by a macro, clang by __has_feature). */
#if defined(__SANITIZE_ADDRESS__)
#define UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define UNDER_ASAN 1
#endif
#endif
#ifndef UNDER_ASAN
#define UNDER_ASAN 0
#endif

struct cvc_db;
struct sqlite3;
struct cvc_proj_scenario;
struct cvc_proj_result;
struct cvc_proj_validate_opts;
struct cvc_proj_validation;

/*
 * Full path of ../shared/<rel>.  When the file is missing the test is
 * skipped with a message naming it (CI always has ../shared).  Returns a
 * static buffer overwritten by the next call.
 */
const char *tu_shared(const char *rel);

/* Sorts n (size, time) pairs by size and fits t = a + b S on the largest
 * third of the sizes, weighted on relative error: how models/opformula.c's
 * large-message references were fitted from XLA's collective tables. */
void tu_fit_largest_third(int64_t *sz, double *tm, size_t n, double *a, double *b);

/* A fresh empty directory under $CVC_TEST_TMP (or /tmp); static buffer.
 * Removed with all it holds when the test process exits, unless
 * CVC_TEST_KEEP=1. */
const char *tu_tmpdir(void);

/* Joins dir and name into a static rotating buffer (8 slots). */
const char *tu_path(const char *dir, const char *name);

/*
 * Runs a shell command line; stdout and stderr are captured into malloc'd
 * strings (caller frees; either pointer may be NULL to discard).  Returns the
 * exit status, or 128+signal.
 */
int tu_run(const char *cmdline, char **out, char **err);

/* Runs `cvc <args>` (the built tool) the same way. */
int tu_cvc(const char *args, char **out, char **err);

/* Decompresses a .gz file into dir; returns the new path (static buffer). */
const char *tu_gunzip(const char *gz, const char *dir);

/*
 * Validates the table at path with spec-sheet models (opts may be NULL),
 * asserting the status is want; returns the output table (malloc'd).
 */
char *tu_validate(const char *path, const struct cvc_proj_validate_opts *opts,
		  struct cvc_proj_validation *v, int want);

/* The same for a table given as text (written to a fresh temporary file). */
char *tu_validate_text(const char *text, const struct cvc_proj_validate_opts *opts,
		       struct cvc_proj_validation *v, int want);

/* Copies the line of text starting at p into line (at most len - 1 bytes,
 * NUL-terminated); returns line. */
const char *tu_copy_line(const char *p, char *line, size_t len);

/* The first line of out after its header that holds key, copied into line
 * as tu_copy_line does; NULL when none does. */
const char *tu_line_with(const char *out, const char *key, char *line, size_t len);

/* The n-th (from 0) comma-separated field of a CSV line as a number; the
 * line must hold no quoted comma before it (asserted to have n + 1 fields). */
double tu_csv_num(const char *line, int n);

/* Writes text to a file; returns 0 on success. */
int tu_write(const char *path, const char *text, size_t len);

/* Reads a whole file (malloc'd, NUL-terminated); NULL on error. */
char *tu_read(const char *path, size_t *len);

/*
 * Cuts the next line off *p, NUL-terminating it in place, and moves *p past
 * it; NULL at the end of the text.
 */
char *tu_next_line(char **p);

/*
 * The first column of sql's first row: as an integer (-1 when there is no
 * row), or as text copied into buf ("" when there is no row or it is NULL;
 * returns buf).  A statement that does not prepare fails the test.  The
 * _db_ forms query a cvc database, the _sq_ forms any SQLite handle.
 */
int64_t tu_sq_int(struct sqlite3 *sq, const char *sql);
char *tu_sq_text(struct sqlite3 *sq, const char *sql, char *buf, size_t cap);
int64_t tu_db_int(struct cvc_db *db, const char *sql);
char *tu_db_text(struct cvc_db *db, const char *sql, char *buf, size_t cap);

/*
 * An import refused as a whole: the database's message is exactly
 * "'<path>': <want>", and every table in tables (space-separated) is empty
 * again (rolled back).
 */
void tu_expect_rolled_back(struct cvc_db *db, const char *path, const char *want,
			   const char *tables);

/* The PARAM DLRM run on 8 V100s under ../shared: the worker traces' names, by rank. */
#define TU_DLRM_DIR "traces/param-dlrm-8xv100/"
extern const char *const tu_dlrm_files[8];

/* Full paths of the 8 DLRM traces by rank, each malloc'd (caller frees); tu_shared's skip. */
void tu_dlrm_paths(char *paths[8]);

/* A prepared statement on a cvc database (caller finalizes); one that does
 * not prepare fails the test, naming the statement. */
struct sqlite3_stmt *tu_db_prepare(struct cvc_db *db, const char *sql);

/* Number of lines in s. */
size_t tu_count_lines(const char *s);

/*
 * Import options that label kernel names after the import, in its
 * transaction, as `cvc import` does (cvc_classify_after_import); static.
 */
const struct cvc_import_opts *tu_classifying(void);

/*
 * A new profiler spool p.spool in a fresh tu_tmpdir(), its database-to-be
 * p.db beside it (both paths into spool and db, 4200 bytes each), opened
 * with strings 1-3 "host", "run", "tool" and the process record naming
 * them (rank 0 of 1, pid 4242): what every materializer test starts from;
 * a test's own strings begin at 4.  Asserts success; the caller closes.
 */
struct cvc_spool *tu_spool_begin(char *spool, char *db);

/* Imports the trace at path into a fresh database dbname in a new
 * tu_tmpdir(); asserts success and returns the open handle (caller closes). */
struct cvc_db *tu_import(const char *path, const char *dbname);

/*
 * The default scenario (cvc_proj_scenario_default) on gpus of gpu with
 * tensor parallelism tp and pipeline parallelism pp: the layout the
 * library-level projection tests price.
 */
void tu_scenario(struct cvc_proj_scenario *sc, const char *gpu, int gpus, int tp, int pp);

/*
 * Parses yaml as if read from file name and runs it with flags and the
 * spec-sheet models, cb called per scenario; a study that does not parse or
 * run fails the test with the study's message.
 */
void tu_study_run(const char *name, const char *yaml, int flags,
		  int (*cb)(void *, const struct cvc_proj_scenario *, const struct cvc_proj_result *),
		  void *user);
/* The same for the study file at path (an example, a shipped study). */
void tu_study_file_run(const char *path, int flags,
		       int (*cb)(void *, const struct cvc_proj_scenario *,
				 const struct cvc_proj_result *),
		       void *user);

/*
 * Runs a study given as YAML text (no marginal half-GPU runs, spec-sheet
 * models) and copies its first scenario, as a study run hands it (dp and
 * defaults derived), and that scenario's result; either may be NULL.  A
 * study that does not parse or run fails the test.  Returns the number of
 * scenarios the study called back.
 */
int tu_proj_first(const char *yaml, struct cvc_proj_scenario *sc, struct cvc_proj_result *r);

/* The first scenario of fmt with a, and of fmt with b, in its one %s:
 * r[0] and r[1], each asserted valid (a pair that differs in one field). */
void tu_proj_pair(const char *fmt, const char *a, const char *b, struct cvc_proj_result *r);

/* The headless Chromium the report tests drive; NULL when none is installed. */
const char *tu_chromium(void);

/* ---- validate's output table ------------------------------------------- */

/* The cells of one CSV record of text (validate's output), in place:
 * f[0..max), returns the count; *p moves past the record. */
size_t tu_record(char **p, char **f, size_t max);
/* The index of column name in the header h[0..n) (asserts it is there). */
int tu_col(char **h, size_t n, const char *name);
/* The next output row's cells into f, which must be as many as the
 * header's nh (row is 0-based, for the message). */
void tu_next_row(char **p, char **f, size_t nh, size_t row);
/* The assumed cell of a row (0-based) holds want and, when not is given,
 * does not hold it. */
void tu_expect_said(const char *assumed, size_t row, const char *want, const char *not);
/* Validates text's n rows, all of them projected: the assumed cell of row
 * i holds each of want[i] (up to 3, NULL-ended), or does not where the
 * phrase starts with '!'; pred (may be NULL) gets each row's projection. */
void tu_rows_said(const char *text, const char *const (*want)[3], size_t n, double *pred);

#endif
