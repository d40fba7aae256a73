/*
 * traceops.c - the ops of op_shapes joined to the activities they launched,
 * and per-run row sets: what tracefit.c (GEMMs) and tracemem.c
 * (memory-bound ops) share (trace_int.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "cvc/cvc_base.h"
#include "cvc/cvc_classify.h"
#include "trace_int.h"

#define TR_MAX_ROWS 10000000u

static cvc_status db_err(cvc_db *db, const char *what)
{
	return cvc_db_fail(db, CVC_ERR_DB, "trace ops: %s: %s", what,
			   sqlite3_errmsg(cvc_db_sqlite(db)));
}

static const char *col_text(sqlite3_stmt *st, int i)
{
	const unsigned char *t = sqlite3_column_text(st, i);

	return t ? (const char *)t : "";
}

/*
 * An op's activities: those with its External id, and those whose launch
 * ran inside it (op_launches, linked by nesting at import; the only link
 * for older Kineto, whose kernels carry the correlation id instead).  UNION
 * keeps an activity linked both ways once.  Both halves are driven from
 * activities into an index.  TF32: a 'tf32' kernel, or cuBLAS's CUTLASS
 * 's1688' tensor-op GEMMs (the m16n8k8 shape of TF32 mma with fp32
 * operands, sm80+).
 */
#define TR_BY_EXT                                                                             \
	"SELECT o.id AS sid, a.id AS aid FROM activities a "                                  \
	"JOIN op_shapes o ON o.run_id = a.run_id AND o.rank = a.rank "                        \
	"AND o.external_id = a.external_id "                                                  \
	"WHERE a.external_id IS NOT NULL AND a.external_id >= 0 AND (?1 < 0 OR a.run_id = ?1)"
#define TR_BY_LAUNCH                                                                          \
	" UNION SELECT l.shape_id, a.id FROM activities a "                                   \
	"JOIN op_launches l ON l.run_id = a.run_id AND l.rank = a.rank "                      \
	"AND l.correlation = a.correlation "                                                  \
	"WHERE a.correlation IS NOT NULL AND (?1 < 0 OR a.run_id = ?1)"
#define TR_SELECT                                                                             \
	") SELECT o.run_id, o.rank, o.external_id, s.value, o.dims, o.types, "                \
	"total(a.end_ns - a.start_ns), "                                                        \
	"total(CASE WHEN a.kind = 1 AND nc.class_id = ?2 THEN a.end_ns - a.start_ns ELSE 0 END), " \
	"sum(a.kind = 1 AND nc.class_id = ?2), "                                              \
	"max(a.kind = 1 AND nc.class_id = ?2 AND (instr(lower(ks.value), 'tf32') > 0 "         \
	"OR instr(ks.value, 'tensorop_s1688') > 0)), "                                        \
	"coalesce(max(d.name), max(r.gpu_model), ''), "                                       \
	"total(CASE WHEN a.kind = 1 THEN a.end_ns - a.start_ns ELSE 0 END), sum(a.kind = 1), " \
	"total(CASE WHEN a.kind = 2 THEN a.end_ns - a.start_ns ELSE 0 END) "                  \
	"FROM link JOIN op_shapes o ON o.id = link.sid JOIN activities a ON a.id = link.aid " \
	"JOIN strings s ON s.id = o.name_id "                                                 \
	"JOIN runs r ON r.id = o.run_id "                                                     \
	"LEFT JOIN strings ks ON ks.id = a.name_id "                                          \
	"LEFT JOIN name_class nc ON nc.name_id = a.name_id "                                  \
	"LEFT JOIN devices d ON d.run_id = a.run_id AND d.rank = a.rank "                     \
	"AND d.device = a.device "                                                            \
	"GROUP BY o.id ORDER BY o.run_id, o.id"

cvc_status tr_each_op(cvc_db *db, int64_t run_id, tr_fn fn, void *ctx)
{
	static const char sql_both[] = "WITH link(sid, aid) AS (" TR_BY_EXT TR_BY_LAUNCH TR_SELECT;
	/* a database opened read-only at schema 1 has no op_launches */
	static const char sql_ext[] = "WITH link(sid, aid) AS (" TR_BY_EXT TR_SELECT;
	sqlite3 *sq = cvc_db_sqlite(db);
	sqlite3_stmt *st = NULL;
	cvc_status rc = CVC_OK;
	int s;

	if (sqlite3_prepare_v2(sq, cvc_db_sqlite_has_table(sq, "op_launches") == 1 ? sql_both : sql_ext,
			       -1, &st, NULL) != SQLITE_OK)
		return db_err(db, "prepare");
	sqlite3_bind_int64(st, 1, run_id);
	sqlite3_bind_int(st, 2, CVC_CLS_GEMM);
	while ((s = sqlite3_step(st)) == SQLITE_ROW) {
		struct tr_op o = {
			.run_id = sqlite3_column_int64(st, 0),
			.rank = sqlite3_column_int(st, 1),
			.external_id = sqlite3_column_int64(st, 2),
			.op = col_text(st, 3),
			.dims = col_text(st, 4),
			.types = (const char *)sqlite3_column_text(st, 5),
			.total_us = sqlite3_column_double(st, 6) / 1000.0,
			.gemm_us = sqlite3_column_double(st, 7) / 1000.0,
			.gemm_kernels = sqlite3_column_int(st, 8),
			.tf32 = sqlite3_column_int(st, 9),
			.gpu = col_text(st, 10),
			.kernel_us = sqlite3_column_double(st, 11) / 1000.0,
			.kernels = sqlite3_column_int(st, 12),
			.copy_us = sqlite3_column_double(st, 13) / 1000.0,
		};

		if ((rc = fn(&o, ctx)))
			break;
	}
	if (!rc && s != SQLITE_DONE)
		rc = db_err(db, "read");
	sqlite3_finalize(st);
	return rc;
}

/* ---- row sets -------------------------------------------------------------------- */

struct item {
	int64_t run_id;
	size_t seq;  /* first-seen order, kept in the output */
	cvc_model_row row;
	double us;
};

struct tr_sets {
	struct item *v;
	size_t n, cap;
};

struct tr_sets *tr_sets_new(void)
{
	return calloc(1, sizeof(struct tr_sets));
}

void tr_sets_free(struct tr_sets *s)
{
	if (s)
		free(s->v);
	free(s);
}

cvc_status tr_sets_add(struct tr_sets *s, int64_t run_id, const cvc_model_row *r, double us)
{
	if (s->n == TR_MAX_ROWS)
		return CVC_ERR_NOMEM;
	if (s->n == s->cap && cvc_grow(&s->v, &s->cap, s->cap + 1, sizeof *s->v, 256) != CVC_OK)
		return CVC_ERR_NOMEM;
	s->v[s->n].run_id = run_id;
	s->v[s->n].seq = s->n;
	s->v[s->n].row = *r;
	s->v[s->n].us = us;
	s->n++;
	return CVC_OK;
}

/* Every field that makes two rows the same shape (not the time). */
static int cmp_key(const struct item *x, const struct item *y)
{
	const cvc_model_row *a = &x->row, *b = &y->row;
	int c;

#define CMP(f) if (a->f != b->f) return a->f < b->f ? -1 : 1
	if (x->run_id != y->run_id)
		return x->run_id < y->run_id ? -1 : 1;
	CMP(kind);
	CMP(mem);
	CMP(dtype);
	CMP(b);
	CMP(m);
	CMP(n);
	CMP(k);
	CMP(bytes);
#undef CMP
	if ((c = strcmp(a->tag, b->tag)))
		return c;
	return strcmp(a->gpu, b->gpu);
}

static int cmp_item(const void *p, const void *q)
{
	const struct item *x = p, *y = q;
	int c = cmp_key(x, y);

	if (c)
		return c;
	return (x->seq > y->seq) - (x->seq < y->seq);
}

static int cmp_seq(const void *p, const void *q)
{
	const struct item *x = p, *y = q;

	if (x->run_id != y->run_id)
		return x->run_id < y->run_id ? -1 : 1;
	return (x->seq > y->seq) - (x->seq < y->seq);
}

static cvc_status set_source(cvc_db *db, int64_t run_id, cvc_model_rows *set)
{
	sqlite3_stmt *st = NULL;

	if (sqlite3_prepare_v2(cvc_db_sqlite(db), "SELECT coalesce(name, id) FROM runs WHERE id=?",
			       -1, &st, NULL) != SQLITE_OK)
		return db_err(db, "run name");
	sqlite3_bind_int64(st, 1, run_id);
	snprintf(set->source, sizeof set->source, "run %s (db:%s)",
		 sqlite3_step(st) == SQLITE_ROW ? col_text(st, 0) : "?", cvc_db_path(db));
	sqlite3_finalize(st);
	return CVC_OK;
}

cvc_status tr_sets_take(cvc_db *db, struct tr_sets *s, cvc_model_rows **sets, size_t *nsets)
{
	cvc_model_rows *out = NULL;
	size_t nout = 0, nu = 0;
	cvc_status rc = CVC_OK;

	*sets = NULL;
	*nsets = 0;
	/* same rows together: the mean lands on the first of them */
	if (s->n)
		qsort(s->v, s->n, sizeof *s->v, cmp_item);
	for (size_t i = 0; i < s->n;) {
		size_t j = i;
		double sum = 0;

		while (j < s->n && cmp_key(&s->v[i], &s->v[j]) == 0)
			sum += s->v[j++].us;
		s->v[nu] = s->v[i];
		s->v[nu].row.time_us = sum / (double)(j - i);
		nu++;
		i = j;
	}
	/* back to first-seen order, one set per run */
	if (nu)
		qsort(s->v, nu, sizeof *s->v, cmp_seq);
	for (size_t i = 0; i < nu;) {
		size_t j = i;
		cvc_model_rows *no;

		while (j < nu && s->v[j].run_id == s->v[i].run_id)
			j++;
		if (!(no = realloc(out, (nout + 1) * sizeof *out))) {
			rc = CVC_ERR_NOMEM;
			break;
		}
		out = no;
		memset(&out[nout], 0, sizeof out[nout]);
		if (!(out[nout].v = malloc((j - i) * sizeof *out[nout].v))) {
			rc = CVC_ERR_NOMEM;
			break;
		}
		out[nout].cap = out[nout].n = j - i;
		for (size_t k = i; k < j; k++)
			out[nout].v[k - i] = s->v[k].row;
		nout++;
		if ((rc = set_source(db, s->v[i].run_id, &out[nout - 1])))
			break;
		i = j;
	}
	tr_sets_free(s);
	if (rc) {
		for (size_t i = 0; i < nout; i++)
			cvc_model_rows_release(&out[i]);
		free(out);
		return rc;
	}
	*sets = out;
	*nsets = nout;
	return CVC_OK;
}
