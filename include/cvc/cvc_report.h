/*
 * cvc_report.h - reports for capacity planning: one self-contained HTML page
 * (Chart.js inlined, no network at view time), CSV and JSON of every table
 * the page shows, and the trace timeline as Chrome-trace JSON for Perfetto.
 *
 * The report reads two things and nothing else: the trace database (through
 * the analyzer, cvc_analyze.h, and the models table, cvc_model.h) and the
 * projector's output file as written by `cvc project --csv/--json` (with
 * the provenance it carries, or the side file beside a CSV), parsed
 * generically by column name (cvc_rep_table below), so new projector
 * columns never break a report.  Every figure the page shows comes from one
 * set of tables; the same tables are written as CSV/JSON (docs/REPORTS.md
 * documents their columns), so the files and the page always agree.
 *
 * Strings from traces (kernel names) reach the page only inside a JSON
 * island (<script type="application/json">, '<' '>' '&' escaped as \uXXXX)
 * and are put into the page by textContent, never as markup.
 *
 * Nothing here is thread safe per object; separate objects may be used from
 * separate threads.
 */
#ifndef CVC_REPORT_H
#define CVC_REPORT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "cvc.h"
#include "cvc_db.h"

/* ---- generic tables --------------------------------------------------------- */

/*
 * A table of named columns; each cell is empty (NULL), a number, or a
 * string.  Tables read from files are bounded: at most CVC_REP_MAX_COLS
 * columns, CVC_REP_MAX_ROWS rows, cells of CVC_REP_MAX_CELL bytes and
 * files of CVC_REP_MAX_FILE bytes.
 */
typedef struct cvc_rep_table cvc_rep_table;

#define CVC_REP_MAX_COLS 512
#define CVC_REP_MAX_ROWS 1000000
#define CVC_REP_MAX_CELL 65536
#define CVC_REP_MAX_FILE ((size_t)256 << 20)

typedef enum cvc_rep_cell_kind {
	CVC_REP_NULL = 0,
	CVC_REP_NUM = 1,
	CVC_REP_STR = 2
} cvc_rep_cell_kind;

/*
 * Reads a projection (or any) table: CSV with a header row (RFC 4180
 * quoting, CRLF tolerated, whole lines starting with '#' before the header
 * are kept as comments), or JSON, chosen by the first non-blank byte ('['
 * or '{').  JSON is an array of flat objects, or an object whose
 * "scenarios" (else "rows") member is that array; its other string
 * members ("scenario_file", "assumptions", ...) are kept as comments, and
 * a "provenance" object (cvc_proj_provenance_write) is kept for the
 * report's provenance tables.
 * Columns are the union of the objects' keys in first-seen order.  A cell
 * that parses completely as a finite number is a number; "", "nan", "inf"
 * and JSON null are empty.  *out is owned by the caller: cvc_rep_table_free.
 * Malformed input: CVC_ERR_FORMAT with "'<path>': line N: expected ..."
 * (CSV) or "'<path>': byte N: expected ..." (JSON) in err.
 */
CVC_API cvc_status cvc_rep_table_read(const char *path, cvc_rep_table **out,
				      char *err, size_t errlen);
/* The same from text s[0..len) already in memory, named path in messages. */
CVC_API cvc_status cvc_rep_table_parse(const char *path, const char *s, size_t len,
				       cvc_rep_table **out, char *err, size_t errlen);

/* Accepts NULL. */
CVC_API void cvc_rep_table_free(cvc_rep_table *t);

CVC_API size_t cvc_rep_table_ncols(const cvc_rep_table *t);
CVC_API size_t cvc_rep_table_nrows(const cvc_rep_table *t);
/* Column name (borrowed); NULL past the end. */
CVC_API const char *cvc_rep_table_col(const cvc_rep_table *t, size_t c);
/* Index of the column named name (case-insensitive), or -1. */
CVC_API long cvc_rep_table_find(const cvc_rep_table *t, const char *name);
/* The cell's kind; CVC_REP_NULL past the end. */
CVC_API cvc_rep_cell_kind cvc_rep_table_kind(const cvc_rep_table *t, size_t r, size_t c);
/* Number of a cell; NaN unless it is a number. */
CVC_API double cvc_rep_table_num(const cvc_rep_table *t, size_t r, size_t c);
/* String of a cell (borrowed); NULL unless it is a string. */
CVC_API const char *cvc_rep_table_str(const cvc_rep_table *t, size_t r, size_t c);
/* Comment text kept by cvc_rep_table_read (borrowed); "" when none. */
CVC_API const char *cvc_rep_table_comments(const cvc_rep_table *t);

/*
 * Building a table, for reports and for the tool's own tables (cvc
 * analyze).  cvc_rep_table_new returns a new empty table with ncols named
 * columns (names copied; name is the file stem of its CSV/JSON, title is
 * shown above it), owned by the caller (cvc_rep_table_free), or NULL on no
 * memory.
 */
CVC_API cvc_rep_table *cvc_rep_table_new(const char *name, const char *title, size_t ncols,
					 const char *const *cols);
/* Appends an all-empty row; returns its index, or -1 on no memory or past
 * CVC_REP_MAX_ROWS rows. */
CVC_API long cvc_rep_table_add_row(cvc_rep_table *t);
/* Sets a cell (r and c must exist) to a number; NaN or infinite: empty. */
CVC_API void cvc_rep_table_set_num(cvc_rep_table *t, size_t r, size_t c, double v);
/* Sets a cell (r and c must exist) to a copy of s (NULL: ""), each invalid
 * UTF-8 byte replaced by U+FFFD so the CSV and the JSON carry the same
 * text.  Returns 0, or -1 on no memory (the cell is left as it was). */
CVC_API int cvc_rep_table_set_str(cvc_rep_table *t, size_t r, size_t c, const char *s);
/* Writes t to f as CSV: a header row, then one line per row, numbers in
 * the report's format, strings quoted as RFC 4180 (and spreadsheet
 * formulas neutralised), empty cells empty. */
CVC_API void cvc_rep_table_write_csv(FILE *f, const cvc_rep_table *t);
/* Writes t for a person at a terminal: a header row, columns aligned
 * (numbers right, text left), numbers to 3 significant figures with
 * thousands separators (cvc_fmt_readable), "-" for an empty cell. */
CVC_API void cvc_rep_table_write_text(FILE *f, const cvc_rep_table *t);
/* Writes t as a JSON array of objects keyed by column, numbers exact
 * (as in the CSV), null for an empty cell. */
CVC_API void cvc_rep_table_write_json(FILE *f, const cvc_rep_table *t);
/* Writes s as a JSON string literal (invalid UTF-8 as U+FFFD), for the
 * tables a command streams instead of holding (cvc classify --unknown). */
CVC_API void cvc_rep_json_string(FILE *f, const char *s);

/*
 * What column name of the report's table means (reports/coldoc.c; the
 * `scenarios` table is the projection's: cvc_proj_column_doc): *unit
 * (static) and the definition into def; "*" entries hold for every table.
 * CVC_ERR_NOTFOUND when it has none.
 */
CVC_API cvc_status cvc_rep_column_doc(const char *table, const char *name, const char **unit,
				      char *def, size_t len);
/* Calls cb for every entry of that dictionary, in order (patterns: <t> a
 * communication type, <N> a number). */
CVC_API void cvc_rep_columns_each(void (*cb)(void *arg, const char *table, const char *name,
					     const char *unit, const char *def),
				  void *arg);

/* ---- the report --------------------------------------------------------------- */

typedef struct cvc_rep_opts {
	const char *title;      /* page title; NULL = "cvc report" */
	const char *run;        /* run name for the trace section; NULL = every run */
	const char *projection; /* projector output (CSV or JSON); NULL = none */
	const char *scenario;   /* scenario file echoed as the assumptions; NULL = none */
	const char *csv_dir;    /* write <table>.csv and <table>.json here; NULL = none */
} cvc_rep_opts;

/*
 * Writes the HTML report to html_path (and the tables to opts->csv_dir,
 * created if missing).  db may be NULL (no trace section); opts->projection
 * may be NULL (no projection section); at least one is required
 * (CVC_ERR_USAGE).  The trace section calls cvc_analyze_run(), which may
 * classify unclassified kernel names (a write) unless db is read-only.
 * Every file goes through cvc_out (cvc_out.h): written aside and renamed
 * only once the page and every table are complete, so a failed or
 * interrupted call leaves no half page and no half-replaced --csv-dir; a
 * target that is one of the report's inputs (the database, the projection
 * and its provenance file, the scenario file) is refused, CVC_ERR_USAGE.  On failure err holds one line naming the file and
 * position where relevant.  Returns CVC_ERR_FORMAT for a malformed
 * projection or scenario file, CVC_ERR_IO, CVC_ERR_DB, CVC_ERR_NOTFOUND
 * (unknown run).
 */
CVC_API cvc_status cvc_rep_write(cvc_db *db, const cvc_rep_opts *opts,
				 const char *html_path, char *err, size_t errlen);

/* ---- what a profile is missing ------------------------------------------------------ */

/*
 * The gaps of run's profile (NULL = every run) that its figures do not
 * show: dropped records (full buffers, full disk), CUPTI held by another
 * client (Nsight Systems, a profiler that subscribed first), activity
 * kinds CUPTI refused, NCCL calls captured into CUDA graphs (whose replays
 * carry no sizes).  *out (owned by the caller, cvc_rep_table_free) has
 * the columns run and gap, one row per gap, a lowercase sentence without
 * a final period, in run order.  A database without run metadata has no
 * gaps.  Returns CVC_ERR_NOMEM (and *out NULL) on no memory.
 */
CVC_API cvc_status cvc_rep_profile_gaps(cvc_db *db, const char *run, cvc_rep_table **out);

/* ---- Perfetto / chrome://tracing ---------------------------------------------------- */

typedef struct cvc_rep_perfetto_stats {
	int64_t events;    /* "X" events written */
	int64_t processes; /* (run, rank, device) pairs: one pid each */
	int64_t threads;   /* (pid, stream) pairs: one tid each */
} cvc_rep_perfetto_stats;

/*
 * Streams the timeline of run (NULL = every run) as Chrome trace JSON to
 * out: {"displayTimeUnit":"ns","traceEvents":[...]} with one "X" event per
 * kernel, memcpy, memset and GPU range; pid = one per (run, rank, device),
 * tid = stream; ts/dur in microseconds with 3 decimals, relative to the
 * earliest activity (so doubles keep ns precision); args carry class,
 * correlation, external id and collective sizes; "M" events name the
 * processes and threads; cname is a Chrome reserved color chosen by
 * operator class.  Memory stays constant in the number of events.
 * stats may be NULL.  Errors (CVC_ERR_NOTFOUND, CVC_ERR_DB, CVC_ERR_IO) are
 * described in cvc_db_errmsg(db).
 */
CVC_API cvc_status cvc_rep_perfetto(cvc_db *db, const char *run, FILE *out,
				    cvc_rep_perfetto_stats *stats);

#endif
