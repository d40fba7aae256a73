/*
 * textout.c - a table as the commands print it: for a person at a
 * terminal (columns aligned, numbers to 3 significant figures with
 * thousands separators, never an exponent) or as JSON for a script (an
 * array of objects, numbers exact).  The CSV writer is table.c's.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "rep_int.h"

/* Display width of UTF-8 text: one column per code point. */
static size_t width(const char *s)
{
	size_t n = 0;

	for (; *s; s++)
		n += ((unsigned char)*s & 0xc0) != 0x80;
	return n;
}

/* Cell (r, c) as the terminal shows it, into buf. */
static const char *cell_text(const cvc_rep_table *t, size_t r, size_t c, char *buf,
			     size_t len)
{
	const rep_cell *x = rep_cell_at(t, r, c);

	if (x->kind == CVC_REP_STR)
		return x->s;
	if (x->kind == CVC_REP_NUM)
		return cvc_fmt_readable(x->v, buf, len);
	return "-";
}

void cvc_rep_table_write_text(FILE *f, const cvc_rep_table *t)
{
	size_t *w = calloc(t->ncols ? t->ncols : 1, sizeof *w);
	char buf[64];

	if (!w)
		return;
	for (size_t c = 0; c < t->ncols; c++) {
		w[c] = width(t->cols[c]);
		for (size_t r = 0; r < t->nrows; r++) {
			size_t k = width(cell_text(t, r, c, buf, sizeof buf));

			if (k > w[c])
				w[c] = k;
		}
	}
	for (size_t r = 0; r <= t->nrows; r++) {
		for (size_t c = 0; c < t->ncols; c++) {
			const char *s = r ? cell_text(t, r - 1, c, buf, sizeof buf) : t->cols[c];
			int num = r && rep_cell_at(t, r - 1, c)->kind == CVC_REP_NUM;
			size_t pad = w[c] - width(s);

			if (c)
				fputs("  ", f);
			/* numbers right-aligned, text left; no trailing blanks */
			if (num)
				fprintf(f, "%*s", (int)pad, "");
			fputs(s, f);
			if (!num && c + 1 < t->ncols)
				fprintf(f, "%*s", (int)pad, "");
		}
		fputc('\n', f);
	}
	free(w);
}

void cvc_rep_table_write_json(FILE *f, const cvc_rep_table *t)
{
	fputc('[', f);
	for (size_t r = 0; r < t->nrows; r++) {
		fputs(r ? ",\n{" : "\n{", f);
		for (size_t c = 0; c < t->ncols; c++) {
			if (c)
				fputc(',', f);
			rep_json_str(f, t->cols[c], 0);
			fputc(':', f);
			rep_json_cell(f, rep_cell_at(t, r, c), 0);
		}
		fputc('}', f);
	}
	fputs(t->nrows ? "\n]\n" : "]\n", f);
}

void cvc_rep_json_string(FILE *f, const char *s)
{
	rep_json_str(f, s, 0);
}
