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

#include "cvc/cvc_base.h"
#include "cvc/cvc_model.h"
#include "trace_int.h"

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

struct gemm_list {
	cvc_model_trace_gemm *v;
	size_t n, cap;
};

static cvc_status take_gemm(const struct tr_op *o, void *ctx)
{
	struct gemm_list *l = ctx;
	cvc_model_trace_gemm g;

	memset(&g, 0, sizeof g);
	g.run_id = o->run_id;
	g.rank = o->rank;
	g.external_id = o->external_id;
	snprintf(g.op, sizeof g.op, "%s", o->op);
	if (cvc_model_gemm_dims(g.op, o->dims, &g.b, &g.m, &g.n, &g.k))
		return CVC_OK; /* not GEMM-like, or not the form its name implies: left out */
	g.has_dtype = cvc_model_gemm_dtype(g.op, o->types, o->tf32, &g.dtype) == CVC_OK;
	g.total_us = o->total_us;
	g.gemm_us = o->gemm_us;
	g.gemm_kernels = o->gemm_kernels;
	snprintf(g.gpu, sizeof g.gpu, "%s", o->gpu);
	if (l->n == TF_MAX_OPS)
		return CVC_ERR_NOMEM;
	if (l->n == l->cap && cvc_grow(&l->v, &l->cap, l->cap + 1, sizeof *l->v, 64) != CVC_OK)
		return CVC_ERR_NOMEM;
	l->v[l->n++] = g;
	return CVC_OK;
}

cvc_status cvc_model_trace_gemms(cvc_db *db, int64_t run_id, cvc_model_trace_gemm **out,
				 size_t *n)
{
	struct gemm_list l = {0};
	cvc_status rc;

	if (!db || !out || !n)
		return CVC_ERR_USAGE;
	*out = NULL;
	*n = 0;
	if ((rc = tr_each_op(db, run_id, take_gemm, &l))) {
		free(l.v);
		return rc;
	}
	*out = l.v;
	*n = l.n;
	return CVC_OK;
}

/* ---- rows per run and shape --------------------------------------------------------- */

cvc_status cvc_model_rows_from_traces(cvc_db *db, cvc_model_rows **sets, size_t *nsets)
{
	cvc_model_trace_gemm *g = NULL;
	struct tr_sets *ts = NULL;
	size_t n = 0;
	cvc_status rc;

	if (!db || !sets || !nsets)
		return CVC_ERR_USAGE;
	*sets = NULL;
	*nsets = 0;
	if ((rc = cvc_model_trace_gemms(db, -1, &g, &n)))
		return rc;
	if (!(ts = tr_sets_new())) {
		free(g);
		return CVC_ERR_NOMEM;
	}
	for (size_t i = 0; i < n; i++) {
		cvc_model_row r;

		if (!g[i].has_dtype || g[i].gemm_kernels == 0 || !(g[i].gemm_us > 0))
			continue;
		memset(&r, 0, sizeof r);
		r.kind = CVC_MODEL_GEMM;
		snprintf(r.gpu, sizeof r.gpu, "%s", g[i].gpu);
		r.dtype = g[i].dtype;
		snprintf(r.tag, sizeof r.tag, "%.*s", (int)sizeof r.tag - 1,
			 strncmp(g[i].op, "aten::", 6) == 0 ? g[i].op + 6 : g[i].op);
		r.b = g[i].b, r.m = g[i].m, r.n = g[i].n, r.k = g[i].k;
		if ((rc = tr_sets_add(ts, g[i].run_id, &r, g[i].gemm_us))) {
			tr_sets_free(ts);
			free(g);
			return rc;
		}
	}
	free(g);
	return tr_sets_take(db, ts, sets, nsets);
}
