/*
 * tracefit.c - GEMM fitting rows from Kineto traces recorded with shapes:
 * the importer keeps each GEMM-like ATen op's "Input Dims" / "Input type"
 * (op_shapes); here they become B, M, N, K and a dtype, joined to the
 * kernels the op launched (by External id, or by the launches nested in the
 * op: op_launches), and averaged per shape.
 *
 * The shape text comes from a trace, so it is parsed as untrusted: an op
 * whose dims do not have the form its name implies is left out, never
 * guessed at.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>
#include <sqlite3.h>

#include "cvc/cvc_classify.h"
#include "cvc/cvc_model.h"

#define TF_MAX_DIM ((int64_t)1 << 40)
#define TF_MAX_ND 8
#define TF_MAX_OPS 10000000u

/* ---- dims -------------------------------------------------------------------- */

struct shape {
	int nd;
	int64_t d[TF_MAX_ND];
};

/* Operand i of dims as a shape; -1 when it is not an array of positive ints. */
static int get_shape(json_object *arr, size_t i, struct shape *s)
{
	json_object *o;
	size_t nd;

	if (i >= json_object_array_length(arr))
		return -1;
	o = json_object_array_get_idx(arr, i);
	if (!json_object_is_type(o, json_type_array))
		return -1;
	nd = json_object_array_length(o);
	if (nd > TF_MAX_ND)
		return -1;
	s->nd = (int)nd;
	for (size_t j = 0; j < nd; j++) {
		json_object *v = json_object_array_get_idx(o, j);
		int64_t x;

		if (!json_object_is_type(v, json_type_int))
			return -1;
		x = json_object_get_int64(v);
		if (x <= 0 || x >= TF_MAX_DIM)
			return -1;
		s->d[j] = x;
	}
	return 0;
}

/* Product of s->d[0..upto); -1 when it would pass TF_MAX_DIM. */
static int64_t lead_prod(const struct shape *s, int upto)
{
	int64_t p = 1;

	for (int i = 0; i < upto; i++) {
		if (s->d[i] > TF_MAX_DIM / p)
			return -1;
		p *= s->d[i];
	}
	return p;
}

enum gop { G_MM, G_ADDMM, G_BMM, G_BADDBMM, G_MATMUL, G_LINEAR, G_SCALED_MM, G_NONE };

static enum gop gop_of(const char *op)
{
	static const char *const names[] = {"aten::mm", "aten::addmm", "aten::bmm",
					    "aten::baddbmm", "aten::matmul", "aten::linear",
					    "aten::_scaled_mm"};

	for (int i = 0; i < G_NONE; i++)
		if (strcmp(op, names[i]) == 0)
			return (enum gop)i;
	return G_NONE;
}

static int dims_of(enum gop g, json_object *arr, int64_t *b, int64_t *m, int64_t *n, int64_t *k)
{
	struct shape x, y;
	int64_t k2;

	*b = 1;
	switch (g) {
	case G_MM:
	case G_SCALED_MM:
	case G_ADDMM:
		/* addmm: the bias comes first */
		if (get_shape(arr, g == G_ADDMM, &x) || get_shape(arr, g == G_ADDMM ? 2 : 1, &y) ||
		    x.nd != 2 || y.nd != 2)
			return -1;
		*m = x.d[0], *k = x.d[1], k2 = y.d[0], *n = y.d[1];
		break;
	case G_BMM:
	case G_BADDBMM:
		if (get_shape(arr, g == G_BADDBMM, &x) ||
		    get_shape(arr, g == G_BADDBMM ? 2 : 1, &y) || x.nd != 3 || y.nd != 3 ||
		    x.d[0] != y.d[0])
			return -1;
		*b = x.d[0], *m = x.d[1], *k = x.d[2], k2 = y.d[1], *n = y.d[2];
		break;
	case G_LINEAR:
		/* weight is [N, K]: y = x W^T */
		if (get_shape(arr, 0, &x) || get_shape(arr, 1, &y) || x.nd < 1 || y.nd != 2)
			return -1;
		*m = lead_prod(&x, x.nd - 1), *k = x.d[x.nd - 1], *n = y.d[0], k2 = y.d[1];
		break;
	case G_MATMUL:
		if (get_shape(arr, 0, &x) || get_shape(arr, 1, &y) || x.nd < 1 || y.nd < 1)
			return -1;
		*k = x.d[x.nd - 1];
		k2 = y.nd == 1 ? y.d[0] : y.d[y.nd - 2];
		*n = y.nd == 1 ? 1 : y.d[y.nd - 1];
		if (y.nd <= 2) {
			/* torch folds A's leading dims into M and calls mm */
			*m = lead_prod(&x, x.nd - 1);
		} else {
			int64_t pa = x.nd > 2 ? lead_prod(&x, x.nd - 2) : 1;
			int64_t pb = lead_prod(&y, y.nd - 2);

			*m = x.nd == 1 ? 1 : x.d[x.nd - 2];
			if (pa < 0 || pb < 0)
				return -1;
			*b = pa > pb ? pa : pb; /* broadcast: one side is 1 or both agree */
		}
		break;
	case G_NONE:
	default:
		return -1;
	}
	if (*m <= 0 || *n <= 0 || *k <= 0 || *k != k2)
		return -1;
	return 0;
}

cvc_status cvc_model_gemm_dims(const char *op, const char *dims, int64_t *b, int64_t *m,
			       int64_t *n, int64_t *k)
{
	enum gop g;
	json_object *arr;
	int bad;

	if (!op || !dims || !b || !m || !n || !k)
		return CVC_ERR_USAGE;
	if ((g = gop_of(op)) == G_NONE)
		return CVC_ERR_NOTFOUND;
	arr = json_tokener_parse(dims);
	bad = !arr || !json_object_is_type(arr, json_type_array) ||
	      dims_of(g, arr, b, m, n, k) != 0;
	json_object_put(arr);
	return bad ? CVC_ERR_FORMAT : CVC_OK;
}

cvc_status cvc_model_gemm_dtype(const char *op, const char *types, int tf32_kernel,
				cvc_hw_dtype *out)
{
	json_object *arr, *v;
	const char *t;
	enum gop g;
	cvc_status st = CVC_ERR_NOTFOUND;

	if (!op || !out)
		return CVC_ERR_USAGE;
	if (!types || (g = gop_of(op)) == G_NONE)
		return CVC_ERR_NOTFOUND;
	arr = json_tokener_parse(types);
	if (!arr || !json_object_is_type(arr, json_type_array))
		goto out;
	v = json_object_array_get_idx(arr, g == G_ADDMM || g == G_BADDBMM ? 1 : 0);
	if (!v || !json_object_is_type(v, json_type_string))
		goto out;
	t = json_object_get_string(v);
	if (strncmp(t, "c10::", 5) == 0)
		t += 5;
	if (strcmp(t, "BFloat16") == 0)
		*out = CVC_HW_BF16, st = CVC_OK;
	else if (strcmp(t, "Half") == 0)
		*out = CVC_HW_FP16, st = CVC_OK;
	else if (strcmp(t, "Float") == 0 || strcmp(t, "float") == 0)
		*out = tf32_kernel ? CVC_HW_TF32 : CVC_HW_FP32, st = CVC_OK;
	else if (strncmp(t, "Float8_", 7) == 0)
		*out = CVC_HW_FP8, st = CVC_OK;
out:
	json_object_put(arr);
	return st;
}

/* ---- ops joined to their kernels ------------------------------------------------ */

static int has_table(cvc_db *db, const char *name)
{
	sqlite3_stmt *st = NULL;
	int yes = 0;

	if (sqlite3_prepare_v2(cvc_db_sqlite(db),
			       "SELECT 1 FROM sqlite_master WHERE type='table' AND name=?", -1, &st,
			       NULL) != SQLITE_OK)
		return 0;
	sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
	yes = sqlite3_step(st) == SQLITE_ROW;
	sqlite3_finalize(st);
	return yes;
}

static cvc_status db_err(cvc_db *db, const char *what)
{
	return cvc_db_fail(db, CVC_ERR_DB, "trace gemms: %s: %s", what,
			   sqlite3_errmsg(cvc_db_sqlite(db)));
}

static const char *col_text(sqlite3_stmt *st, int i)
{
	const unsigned char *t = sqlite3_column_text(st, i);

	return t ? (const char *)t : "";
}

cvc_status cvc_model_trace_gemms(cvc_db *db, int64_t run_id, cvc_model_trace_gemm **out,
				 size_t *n)
{
	/*
	 * An op's kernels: those with its External id, and those whose launch
	 * ran inside it (op_launches, linked by nesting at import; the only
	 * link for older Kineto, whose kernels carry the correlation id
	 * instead).  UNION keeps a kernel linked both ways once.  Both halves
	 * are driven from activities into an index.  TF32: a 'tf32' kernel, or
	 * cuBLAS's CUTLASS 's1688' tensor-op GEMMs (the m16n8k8 shape of TF32
	 * mma with fp32 operands, sm80+).
	 */
#define TF_BY_EXT                                                                             \
	"SELECT o.id AS sid, a.id AS aid FROM activities a "                                  \
	"JOIN op_shapes o ON o.run_id = a.run_id AND o.rank = a.rank "                        \
	"AND o.external_id = a.external_id "                                                  \
	"WHERE a.external_id IS NOT NULL AND a.external_id >= 0 AND (?1 < 0 OR a.run_id = ?1)"
#define TF_BY_LAUNCH                                                                          \
	" UNION SELECT l.shape_id, a.id FROM activities a "                                   \
	"JOIN op_launches l ON l.run_id = a.run_id AND l.rank = a.rank "                      \
	"AND l.correlation = a.correlation "                                                  \
	"WHERE a.correlation IS NOT NULL AND (?1 < 0 OR a.run_id = ?1)"
#define TF_SELECT                                                                             \
	") SELECT o.run_id, o.rank, o.external_id, s.value, o.dims, o.types, "                \
	"sum(a.end_ns - a.start_ns), "                                                        \
	"sum(CASE WHEN a.kind = 1 AND nc.class_id = ?2 THEN a.end_ns - a.start_ns ELSE 0 END), " \
	"sum(a.kind = 1 AND nc.class_id = ?2), "                                              \
	"max(a.kind = 1 AND nc.class_id = ?2 AND (instr(lower(ks.value), 'tf32') > 0 "         \
	"OR instr(ks.value, 'tensorop_s1688') > 0)), "                                        \
	"coalesce(max(d.name), max(r.gpu_model), '') "                                        \
	"FROM link JOIN op_shapes o ON o.id = link.sid JOIN activities a ON a.id = link.aid " \
	"JOIN strings s ON s.id = o.name_id "                                                 \
	"JOIN runs r ON r.id = o.run_id "                                                     \
	"LEFT JOIN strings ks ON ks.id = a.name_id "                                          \
	"LEFT JOIN name_class nc ON nc.name_id = a.name_id "                                  \
	"LEFT JOIN devices d ON d.run_id = a.run_id AND d.rank = a.rank "                     \
	"AND d.device = a.device "                                                            \
	"GROUP BY o.id ORDER BY o.run_id, o.id"
	static const char sql_both[] = "WITH link(sid, aid) AS (" TF_BY_EXT TF_BY_LAUNCH TF_SELECT;
	/* a database opened read-only at schema 1 has no op_launches */
	static const char sql_ext[] = "WITH link(sid, aid) AS (" TF_BY_EXT TF_SELECT;
	const char *sql = has_table(db, "op_launches") ? sql_both : sql_ext;
	sqlite3_stmt *st = NULL;
	cvc_model_trace_gemm *v = NULL;
	size_t cnt = 0, cap = 0;
	cvc_status rc = CVC_OK;
	int s;

	if (!db || !out || !n)
		return CVC_ERR_USAGE;
	*out = NULL;
	*n = 0;
	if (sqlite3_prepare_v2(cvc_db_sqlite(db), sql, -1, &st, NULL) != SQLITE_OK)
		return db_err(db, "prepare");
	sqlite3_bind_int64(st, 1, run_id);
	sqlite3_bind_int(st, 2, CVC_CLS_GEMM);
	while ((s = sqlite3_step(st)) == SQLITE_ROW) {
		cvc_model_trace_gemm g;

		memset(&g, 0, sizeof g);
		g.run_id = sqlite3_column_int64(st, 0);
		g.rank = sqlite3_column_int(st, 1);
		g.external_id = sqlite3_column_int64(st, 2);
		snprintf(g.op, sizeof g.op, "%s", col_text(st, 3));
		if (cvc_model_gemm_dims(g.op, col_text(st, 4), &g.b, &g.m, &g.n, &g.k))
			continue; /* not the form its name implies: left out */
		g.has_dtype = cvc_model_gemm_dtype(g.op, (const char *)sqlite3_column_text(st, 5),
						   sqlite3_column_int(st, 9), &g.dtype) == CVC_OK;
		g.total_us = (double)sqlite3_column_int64(st, 6) / 1000.0;
		g.gemm_us = (double)sqlite3_column_int64(st, 7) / 1000.0;
		g.gemm_kernels = sqlite3_column_int(st, 8);
		snprintf(g.gpu, sizeof g.gpu, "%s", col_text(st, 10));
		if (cnt == cap) {
			size_t ncap = cap ? cap * 2 : 64;
			cvc_model_trace_gemm *nv;

			if (ncap > TF_MAX_OPS || !(nv = realloc(v, ncap * sizeof *nv))) {
				rc = CVC_ERR_NOMEM;
				goto out;
			}
			v = nv, cap = ncap;
		}
		v[cnt++] = g;
	}
	if (s != SQLITE_DONE)
		rc = db_err(db, "read");
out:
	sqlite3_finalize(st);
	if (rc) {
		free(v);
		return rc;
	}
	*out = v;
	*n = cnt;
	return CVC_OK;
}

/* ---- rows per run and shape --------------------------------------------------------- */

struct acc {
	cvc_model_row row;
	double sum_us;
	int64_t calls;
};

static int same_shape(const cvc_model_row *a, const cvc_model_row *b)
{
	return a->dtype == b->dtype && a->b == b->b && a->m == b->m && a->n == b->n &&
	       a->k == b->k && strcmp(a->tag, b->tag) == 0 && strcmp(a->gpu, b->gpu) == 0;
}

/* Rows of one run's ops g[0..n) into set; the set's source names the run. */
static cvc_status run_rows(cvc_db *db, const cvc_model_trace_gemm *g, size_t n,
			   cvc_model_rows *set)
{
	struct acc *acc = NULL;
	size_t na = 0;
	sqlite3_stmt *st = NULL;
	cvc_status rc = CVC_OK;

	acc = calloc(n ? n : 1, sizeof *acc);
	if (!acc)
		return CVC_ERR_NOMEM;
	for (size_t i = 0; i < n; i++) {
		cvc_model_row r;
		size_t j;

		if (!g[i].has_dtype || g[i].gemm_kernels == 0 || !(g[i].gemm_us > 0))
			continue;
		memset(&r, 0, sizeof r);
		r.kind = CVC_MODEL_GEMM;
		snprintf(r.gpu, sizeof r.gpu, "%s", g[i].gpu);
		r.dtype = g[i].dtype;
		snprintf(r.tag, sizeof r.tag, "%s",
			 strncmp(g[i].op, "aten::", 6) == 0 ? g[i].op + 6 : g[i].op);
		r.b = g[i].b, r.m = g[i].m, r.n = g[i].n, r.k = g[i].k;
		/* distinct shapes are few: a linear search is enough */
		for (j = 0; j < na && !same_shape(&acc[j].row, &r); j++)
			;
		if (j == na)
			acc[na++].row = r;
		acc[j].sum_us += g[i].gemm_us;
		acc[j].calls++;
	}
	if (na) {
		set->v = malloc(na * sizeof *set->v);
		if (!set->v) {
			rc = CVC_ERR_NOMEM;
			goto out;
		}
		set->cap = na;
		for (size_t j = 0; j < na; j++) {
			set->v[j] = acc[j].row;
			set->v[j].time_us = acc[j].sum_us / (double)acc[j].calls;
		}
		set->n = na;
	}
	if (sqlite3_prepare_v2(cvc_db_sqlite(db), "SELECT coalesce(name, id) FROM runs WHERE id=?",
			       -1, &st, NULL) != SQLITE_OK) {
		rc = db_err(db, "run name");
		goto out;
	}
	sqlite3_bind_int64(st, 1, n ? g[0].run_id : 0);
	snprintf(set->source, sizeof set->source, "run %s (db:%s)",
		 sqlite3_step(st) == SQLITE_ROW ? col_text(st, 0) : "?", cvc_db_path(db));
out:
	sqlite3_finalize(st);
	free(acc);
	return rc;
}

cvc_status cvc_model_rows_from_traces(cvc_db *db, cvc_model_rows **sets, size_t *nsets)
{
	cvc_model_trace_gemm *g = NULL;
	cvc_model_rows *v = NULL;
	size_t n = 0, nv = 0;
	cvc_status rc;

	if (!db || !sets || !nsets)
		return CVC_ERR_USAGE;
	*sets = NULL;
	*nsets = 0;
	if ((rc = cvc_model_trace_gemms(db, -1, &g, &n)))
		return rc;
	/* g is ordered by run, so each run's ops are contiguous */
	for (size_t i = 0; i < n;) {
		size_t j = i;
		cvc_model_rows *nsv;

		while (j < n && g[j].run_id == g[i].run_id)
			j++;
		nsv = realloc(v, (nv + 1) * sizeof *v);
		if (!nsv) {
			rc = CVC_ERR_NOMEM;
			goto out;
		}
		v = nsv;
		memset(&v[nv], 0, sizeof v[nv]);
		if ((rc = run_rows(db, g + i, j - i, &v[nv]))) {
			cvc_model_rows_release(&v[nv]);
			goto out;
		}
		if (v[nv].n)
			nv++;
		else
			cvc_model_rows_release(&v[nv]);
		i = j;
	}
out:
	free(g);
	if (rc) {
		for (size_t i = 0; i < nv; i++)
			cvc_model_rows_release(&v[i]);
		free(v);
		return rc;
	}
	*sets = v;
	*nsets = nv;
	return CVC_OK;
}
