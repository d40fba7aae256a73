/*
 * rep_int.h - what the report files share: the table representation, the
 * one number formatter (so CSV, JSON and the page print the same digits),
 * the JSON and CSV escapers.  Private to reports/.
 */
#ifndef CVC_REP_INT_H
#define CVC_REP_INT_H

#include <stdio.h>

#include "cvc/cvc_base.h"
#include "cvc/cvc_report.h"

typedef struct rep_cell {
	char *s;        /* owned; CVC_REP_STR only */
	double v;       /* CVC_REP_NUM only */
	unsigned char kind;
} rep_cell;

struct cvc_rep_table {
	char name[48];    /* file stem of its CSV/JSON: [a-z0-9_] */
	char *title;      /* owned; shown above the table */
	size_t ncols;
	char **cols;      /* owned */
	size_t nrows, cap;/* rows allocated */
	rep_cell *cells;  /* nrows x ncols, row-major */
	char *comments;   /* owned; "" or text */
	char *provenance; /* owned; a JSON projection's "provenance" member as
			     JSON text (reports/provenance.c reads it); NULL if none */
};

/* The cell at (r, c), which must exist. */
const rep_cell *rep_cell_at(const cvc_rep_table *t, size_t r, size_t c);

/*
 * The number as every output prints it: integers without a fraction, else
 * the shortest of %.15g/%.16g/%.17g that reads back to the same double.
 * buf holds at least 32 bytes.
 */
const char *rep_fmt_num(double v, char *buf, size_t len);

/*
 * Writes s as a JSON string literal (with quotes).  Invalid UTF-8 bytes
 * become U+FFFD; with html, '<' '>' '&' and U+2028/2029 are \u-escaped
 * too, so the text can sit inside a <script> element.
 */
void rep_json_str(FILE *f, const char *s, int html);
/* Writes v[0..n) as JSON strings separated by commas (no brackets). */
void rep_json_strs(FILE *f, const char *const *v, size_t n, int html);
/* Writes one cell: a number, a JSON string, or null. */
void rep_json_cell(FILE *f, const rep_cell *x, int html);
/* Writes t as {"name":..,"title":..,"columns":[..],"rows":[[..],..]}. */
void rep_json_table(FILE *f, const cvc_rep_table *t, int html);
/* Its two halves: {"name":..,"title":..,"columns":[..] (the object left
 * open), then ,"rows":[..]} closing it; idx may be NULL, else per column
 * NULL (its cells written) or the index written for each row (-1: null). */
void rep_json_table_head(FILE *f, const cvc_rep_table *t, int html);
void rep_json_table_rows(FILE *f, const cvc_rep_table *t, int html, const long *const *idx);
/* rep_json_table() for the page's data island (island.c): a string column
 * whose values repeat goes once into "dict":{"col":[..]} and its cells are
 * indexes into it (null stays null); report.js expands them. */
void rep_json_table_island(FILE *f, const cvc_rep_table *t);

/* "out of memory" into err; returns CVC_ERR_NOMEM. */
cvc_status rep_nomem(char *err, size_t errlen);

#endif
