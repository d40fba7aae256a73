/*
 * island.c - a table as the page's data island holds it.  A string column
 * whose values repeat is stored once, in the table's "dict", and its cells
 * become indexes into it: the shipped study's 10,140 scenario rows carry
 * only 1,157 distinct warning texts, 2.6 of the page's 7 MB when written
 * out in every row.  report.js expands the indexes back before anything
 * reads the table, so the page shows and sorts the same strings; the
 * report.json and CSV files beside the page are written whole.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "rep_int.h"
#include "cvc/cvc_base.h"

/* A column is packed when it has this many rows and at most a quarter of
 * them are distinct: below that the dictionary saves little. */
#define PACK_MIN_ROWS 64

struct packed {
	long *idx;           /* per row: index into dict, -1 for null */
	const char **dict;   /* distinct strings, first-seen order (borrowed) */
	size_t n;
};

static void packed_free(struct packed *p)
{
	free(p->idx);
	free(p->dict);
	memset(p, 0, sizeof *p);
}

/*
 * Packs column c of t into p; 0 when it is packed, 1 when the column does
 * not qualify (a number in it, too few rows, too many distinct values) or
 * memory runs out (the caller then writes the column whole).
 */
static int pack_column(const cvc_rep_table *t, size_t c, struct packed *p)
{
	size_t nr = t->nrows, cap = 1, *slot = NULL;

	memset(p, 0, sizeof *p);
	if (nr < PACK_MIN_ROWS)
		return 1;
	while (cap < 2 * nr)
		cap <<= 1;
	p->idx = malloc(nr * sizeof *p->idx);
	p->dict = malloc((nr / 4 + 1) * sizeof *p->dict);
	slot = calloc(cap, sizeof *slot); /* dict index + 1; 0 = empty */
	if (!p->idx || !p->dict || !slot)
		goto no;
	for (size_t r = 0; r < nr; r++) {
		const rep_cell *x = rep_cell_at(t, r, c);
		size_t h;

		if (x->kind == CVC_REP_NUM)
			goto no;
		if (x->kind != CVC_REP_STR) {
			p->idx[r] = -1;
			continue;
		}
		h = (size_t)cvc_hash_fnv1a(x->s, strlen(x->s)) & (cap - 1);
		while (slot[h] && strcmp(p->dict[slot[h] - 1], x->s) != 0)
			h = (h + 1) & (cap - 1);
		if (!slot[h]) {
			if (p->n == nr / 4 + 1)
				goto no; /* too many distinct values */
			p->dict[p->n++] = x->s;
			slot[h] = p->n;
		}
		p->idx[r] = (long)slot[h] - 1;
	}
	free(slot);
	return p->n > 0 ? 0 : (packed_free(p), 1);
no:
	free(slot);
	packed_free(p);
	return 1;
}

void rep_json_table_island(FILE *f, const cvc_rep_table *t)
{
	struct packed *pk = calloc(t->ncols ? t->ncols : 1, sizeof *pk);
	const long **idx = calloc(t->ncols ? t->ncols : 1, sizeof *idx);
	int any = 0;

	if (!pk || !idx) { /* no memory for the dictionary: the table whole */
		free(pk);
		free(idx);
		rep_json_table(f, t, 1);
		return;
	}
	rep_json_table_head(f, t, 1);
	for (size_t c = 0; c < t->ncols; c++) {
		if (pack_column(t, c, &pk[c]))
			continue;
		idx[c] = pk[c].idx;
		fputs(any++ ? "," : ",\"dict\":{", f);
		rep_json_str(f, t->cols[c], 1);
		fputs(":[", f);
		rep_json_strs(f, pk[c].dict, pk[c].n, 1);
		putc(']', f);
	}
	if (any)
		putc('}', f);
	rep_json_table_rows(f, t, 1, idx);
	for (size_t c = 0; c < t->ncols; c++)
		packed_free(&pk[c]);
	free(pk);
	free(idx);
}
