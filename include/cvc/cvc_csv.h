/*
 * cvc_csv.h - CSV the same way in every table cvc reads or prints
 * (analyze, classify, project, validate, report): RFC 4180 quoting.
 */
#ifndef CVC_CSV_H
#define CVC_CSV_H

#include <stddef.h>
#include <stdio.h>

#include "cvc.h"

/*
 * Writes s as one CSV field: as is when it needs no quoting, else in double
 * quotes with inner quotes doubled.  Quoted when it holds a comma, a quote,
 * CR or LF, or starts or ends with a space (which spreadsheets would trim).
 * Text a spreadsheet would evaluate (starting with = + - @, tab or CR and
 * not a number) is written quoted behind an apostrophe: "'=A1".  NULL
 * writes an empty field.
 */
CVC_API void cvc_csv_field(FILE *f, const char *s);

/* Whether cvc_csv_field() writes s as it is (n: strlen(s)): 1, or 0 when it
 * quotes it.  For writers that gather a record before writing it. */
CVC_API int cvc_csv_verbatim(const char *s, size_t n);

/*
 * One record read by cvc_csv_record(): f[0..n) are NUL-terminated fields
 * owned by the record (quotes removed, doubled quotes undone).  Zero it
 * before first use; cvc_csv_rec_release() frees it (accepts NULL).
 */
typedef struct cvc_csv_rec {
	char **f;
	size_t n, cap;
} cvc_csv_rec;

CVC_API void cvc_csv_rec_release(cvc_csv_rec *rec);

/*
 * Parses the RFC 4180 record starting at s[*pos] (s need not be
 * NUL-terminated) into rec, replacing what it held.  A quoted field may
 * hold commas, doubled quotes and line ends.  On success *pos is past the
 * record's line end and *line (1-based, of *pos) counts the lines it
 * spanned.  Bounded: at most max_fields fields of at most max_cell bytes.
 * Returns CVC_OK; CVC_ERR_FORMAT with "'name': line N: expected ..." in err
 * (N the record's first line) for an unclosed quote, text after a closing
 * quote, a quote inside an unquoted field, or a bound passed;
 * CVC_ERR_NOMEM.
 */
CVC_API cvc_status cvc_csv_record(const char *name, const char *s, size_t len, size_t *pos,
				  long *line, cvc_csv_rec *rec, size_t max_fields,
				  size_t max_cell, char *err, size_t errlen);

/*
 * cvc_csv_record() with sep instead of the comma between fields: the
 * ';'-separated files spreadsheets write where the comma is the decimal
 * mark.  sep must not be '"', CR or LF.
 */
CVC_API cvc_status cvc_csv_record_sep(const char *name, const char *s, size_t len, size_t *pos,
				      long *line, char sep, cvc_csv_rec *rec, size_t max_fields,
				      size_t max_cell, char *err, size_t errlen);

/*
 * Splits one line in place into f[0..maxf) by the grammar of
 * cvc_csv_record() on a single line: commas, "quoted, fields" with "" for a
 * quote.  Returns the field count (maxf at most: fields past it are
 * dropped, so maxf + 1 slots tell a line with too many), or -1 when the
 * quoting is malformed (no closing quote, text after one, a quote inside
 * an unquoted field).  For the line-oriented tables (the hardware catalog,
 * measured tables, the calibration plan), whose fields never span lines.
 */
CVC_API int cvc_csv_split(char *line, char **f, int maxf);

/*
 * The first column name of a header f[0..n) given twice, or NULL: *a and
 * *b (may be NULL) receive the two 0-based indexes.  Empty names are not
 * compared.  Every reader of a header refuses one (issue 36 item 16: the
 * first or the last of two equal columns was read, silently).  O(n^2):
 * headers have at most a few hundred columns.
 */
CVC_API const char *cvc_csv_dup_name(char *const *f, size_t n, size_t *a, size_t *b);

/*
 * Reads the file at path whole into *out (NUL-terminated, caller frees;
 * *len excludes the NUL), for the table readers (validate, report).
 * Returns CVC_OK; CVC_ERR_IO with "'path': cannot open: ..." or "read
 * error"; CVC_ERR_FORMAT with "'path': byte N: expected at most MAX bytes"
 * for a file larger than max; CVC_ERR_NOMEM.  On error *out is NULL.
 */
CVC_API cvc_status cvc_file_read(const char *path, size_t max, char **out, size_t *len,
				 char *err, size_t errlen);

#endif
