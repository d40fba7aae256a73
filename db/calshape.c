/*
 * calshape.c - the calibration plan file (cvc_calshape.h): shape kinds and
 * their CSV columns, written by the planner (projector/calplan.c) and read
 * by the runner on a GPU; how an attention shape is measured as GEMMs.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cvc/cvc_base.h"
#include "cvc/cvc_calshape.h"
#include "cvc/cvc_csv.h"

#define PLAN_MAX 1000000u

const char *cvc_cal_kind_name(int kind)
{
	static const char *const n[CVC_CAL_NKIND] = {"gemm", "attention", "membound", "collective"};

	return kind >= 0 && kind < CVC_CAL_NKIND ? n[kind] : NULL;
}

int cvc_cal_shape_eq(const cvc_cal_shape *a, const cvc_cal_shape *b)
{
	return a->kind == b->kind && a->dtype == b->dtype && a->sub == b->sub && a->b == b->b &&
	       a->m == b->m && a->n == b->n && a->k == b->k && a->heads == b->heads &&
	       a->kv_heads == b->kv_heads && a->causal == b->causal &&
	       a->backward == b->backward && a->bytes == b->bytes && a->group == b->group &&
	       a->per_node == b->per_node;
}

void cvc_cal_attn_parts(const cvc_cal_shape *x, cvc_cal_shape gm[4], int *ngemm,
			int64_t *softmax_bytes)
{
	int64_t bh = (x->b > 0 ? x->b : 1) * (x->heads > 0 ? x->heads : 1);
	int64_t sq = x->m, skv = x->n > 0 ? x->n : x->m, D = x->k;
	/* {m, n, k}: forward S = QK^T, O = PV; backward dP = dO V^T,
	 * dV = P^T dO, dQ = dS K, dK = dS^T Q */
	static const int fwd[2][3] = {{0, 1, 2}, {0, 2, 1}};
	static const int bwd[4][3] = {{0, 1, 2}, {1, 2, 0}, {0, 2, 1}, {1, 2, 0}};
	int64_t dim[3] = {sq, skv, D};
	int n = x->backward ? 4 : 2;

	for (int i = 0; i < n; i++) {
		const int *ix = x->backward ? bwd[i] : fwd[i];

		memset(&gm[i], 0, sizeof gm[i]);
		gm[i].kind = CVC_CAL_GEMM;
		gm[i].dtype = x->dtype;
		gm[i].b = bh;
		gm[i].m = dim[ix[0]], gm[i].n = dim[ix[1]], gm[i].k = dim[ix[2]];
	}
	*ngemm = n;
	/* softmax reads S, writes P; backward reads P and dP, writes dS */
	*softmax_bytes = (x->backward ? 3 : 2) * (int64_t)cvc_hw_dtype_bytes((cvc_hw_dtype)x->dtype) *
			 bh * sq * skv;
}

/* ---- CSV ----------------------------------------------------------------------------- */

static const char *const cols[] = {"kind",     "dtype",   "sub",   "b",     "m",
				   "n",        "k",       "heads", "kv_heads", "causal",
				   "backward", "bytes",   "group", "per_node"};
#define NCOLS (sizeof cols / sizeof cols[0])

static const char *const mem_names[CVC_MODEL_NMEM] = {"elementwise", "norm", "reduction",
						      "copy",        "gather", "optimizer"};

static const char *sub_name(const cvc_cal_shape *s)
{
	if (s->kind == CVC_CAL_MEM)
		return s->sub >= 0 && s->sub < CVC_MODEL_NMEM ? mem_names[s->sub] : "";
	if (s->kind == CVC_CAL_COLL) {
		const char *n = cvc_model_coll_name((cvc_model_coll)s->sub);

		return n ? n : "";
	}
	if (s->kind == CVC_CAL_ATTN) {
		const char *n = cvc_model_attn_backend_name((cvc_model_attn_backend)s->sub);

		return n ? n : "";
	}
	/* a grouped GEMM (MoE experts, sub bit 2) is measured as its b GEMMs
	 * batched; the model prices the grouping on top
	 * (cvc_model_grouped_slowdown) */
	return s->kind == CVC_CAL_GEMM && (s->sub & 2) ? "grouped" : "";
}

void cvc_cal_shape_csv_header(FILE *f)
{
	for (size_t i = 0; i < NCOLS; i++)
		fprintf(f, "%s,", cols[i]);
}

void cvc_cal_shape_csv(FILE *f, const cvc_cal_shape *s)
{
	int hasdt = s->kind == CVC_CAL_GEMM || s->kind == CVC_CAL_ATTN;
	const char *dt = hasdt ? cvc_hw_dtype_name((cvc_hw_dtype)s->dtype) : "";

	fprintf(f, "%s,%s,%s,%lld,%lld,%lld,%lld,%lld,%lld,%d,%d,%lld,%d,%d,",
		cvc_cal_kind_name(s->kind), dt ? dt : "", sub_name(s), (long long)s->b,
		(long long)s->m, (long long)s->n, (long long)s->k, (long long)s->heads,
		(long long)s->kv_heads, s->causal, s->backward, (long long)s->bytes, s->group,
		s->per_node);
}

const char *cvc_cal_result_header(int kind)
{
	switch (kind) {
	case CVC_CAL_GEMM:
		return "device_key,b,m,n,k,dtype,flops_per_sec,time_us,origin\n";
	case CVC_CAL_ATTN:
		return "device_key,dtype,batch,heads,kv_heads,seq_q,seq_kv,head_dim,causal,"
		       "backward,time_us,softmax_us,method\n";
	case CVC_CAL_MEM:
		return "device_key,class,bytes,time_us,gbps\n";
	default:
		return NULL;
	}
}

#define CSV_LINE_CAP 4096
#define PLAN_MAX_FIELDS 64

/* What a refused line should have been: the text after "expected " in
 * why[cap]; returns -1 so callers can `return expect(...)`. */
static int expect(char *why, size_t cap, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, cap, fmt, ap);
	va_end(ap);
	return -1;
}

/* The field index of every column the plan needs. */
static int read_header(char **fld, int nf, int ci[NCOLS], char *why, size_t cap)
{
	for (size_t i = 0; i < NCOLS; i++) {
		ci[i] = -1;
		for (int j = 0; j < nf; j++)
			if (strcmp(fld[j], cols[i]) == 0)
				ci[i] = j;
		if (ci[i] < 0)
			return expect(why, cap, "a calibration plan header with column '%s'",
				      cols[i]);
	}
	return 0;
}

/* dtype for GEMMs and attention, the attention backend, and their sizes. */
static int parse_compute(cvc_cal_shape *s, const char *dtype, const char *sub, char *why,
			 size_t cap)
{
	cvc_hw_dtype dt;

	if (cvc_hw_dtype_parse(dtype, &dt))
		return expect(why, cap, "a dtype, got '%.32s'", dtype);
	s->dtype = (int)dt;
	if (s->kind == CVC_CAL_ATTN) {
		cvc_model_attn_backend be = CVC_ATTN_DEFAULT_TE;

		/* plans written before the backends: empty */
		if (sub[0] && cvc_model_attn_backend_parse(sub, &be))
			return expect(why, cap,
				      "an attention backend (cudnn, fa2, fa4, fa1, te-default, "
				      "torch-default), got '%.32s'",
				      sub);
		s->sub = (int)be;
	} else if (s->kind == CVC_CAL_GEMM && sub[0]) {
		if (strcmp(sub, "grouped") != 0)
			return expect(why, cap, "an empty sub or 'grouped' for a gemm, got '%.32s'",
				      sub);
		s->sub = 2;
	}
	if (s->m < 1 || s->n < 1 || s->k < 1 || s->b < 1 || s->m > 1 << 24 || s->n > 1 << 24 ||
	    s->k > 1 << 24 || s->b > 1 << 24 ||
	    (s->kind == CVC_CAL_ATTN && (s->heads < 1 || s->heads > 1 << 16)))
		return expect(why, cap, "sizes 1..2^24");
	return 0;
}

/* The memory-bound class or the collective in column sub, and its sizes. */
static int parse_traffic(cvc_cal_shape *s, const char *sub, char *why, size_t cap)
{
	if (s->kind == CVC_CAL_MEM) {
		int cls = -1;

		for (int k = 0; k < CVC_MODEL_NMEM; k++)
			if (strcmp(sub, mem_names[k]) == 0)
				cls = k;
		if (cls < 0)
			return expect(why, cap, "a memory-bound class, got '%.32s'", sub);
		s->sub = cls;
		if (s->bytes < 1)
			return expect(why, cap, "bytes >= 1");
	} else {
		cvc_model_coll cl;

		if (cvc_model_coll_parse(sub, &cl))
			return expect(why, cap, "a collective, got '%.32s'", sub);
		s->sub = (int)cl;
		if (s->bytes < 1 || s->group < 2 || s->per_node < 1)
			return expect(why, cap, "bytes >= 1, group >= 2 and per_node >= 1");
	}
	return 0;
}

/* One data row (fields fld, columns at ci) into *s. */
static int parse_row(char **fld, const int ci[NCOLS], cvc_cal_shape *s, char *why, size_t cap)
{
	int64_t x[NCOLS];
	int kind = -1;

	memset(s, 0, sizeof *s);
	for (int k = 0; k < CVC_CAL_NKIND; k++)
		if (strcmp(fld[ci[0]], cvc_cal_kind_name(k)) == 0)
			kind = k;
	if (kind < 0)
		return expect(why, cap,
			      "a kind (gemm, attention, membound, collective), got '%.32s'",
			      fld[ci[0]]);
	s->kind = kind;
	for (size_t i = 3; i < NCOLS; i++)
		if (cvc_parse_i64(fld[ci[i]], 0, INT64_C(1) << 40, &x[i]) != CVC_OK)
			return expect(why, cap, "a count 0..2^40 in column '%s', got '%.32s'",
				      cols[i], fld[ci[i]]);
	s->b = x[3], s->m = x[4], s->n = x[5], s->k = x[6], s->heads = x[7];
	s->kv_heads = x[8];
	s->causal = x[9] != 0, s->backward = x[10] != 0;
	s->bytes = x[11];
	if (x[12] > 1 << 20 || x[13] > 1 << 20)
		return expect(why, cap, "a group size under 2^20");
	s->group = (int)x[12], s->per_node = (int)x[13];
	if (kind == CVC_CAL_GEMM || kind == CVC_CAL_ATTN)
		return parse_compute(s, fld[ci[1]], fld[ci[2]], why, cap);
	return parse_traffic(s, fld[ci[2]], why, cap);
}

cvc_status cvc_cal_plan_read_csv(const char *path, cvc_cal_shape **out, size_t *n, char *err,
				 size_t errlen)
{
	FILE *f = NULL;
	char line[CSV_LINE_CAP], why[256];
	int ci[NCOLS], lineno = 0, nh = 0;
	cvc_cal_shape *v = NULL;
	size_t nv = 0, cap = 0;
	cvc_status st = CVC_OK;

	*out = NULL;
	*n = 0;
	err[0] = '\0';
	if (!(f = fopen(path, "r"))) {
		int e = errno;

		snprintf(err, errlen, "'%s': cannot open: %s", path, strerror(e));
		return cvc_open_status(e);
	}
#define BAD(...)                                                                   \
	do {                                                                       \
		expect(why, sizeof why, __VA_ARGS__);                              \
		goto bad;                                                          \
	} while (0)
	while (fgets(line, sizeof line, f)) {
		char *fld[PLAN_MAX_FIELDS];
		cvc_cal_shape s;
		size_t len = strlen(line);
		int nf;

		lineno++;
		if (len == sizeof line - 1 && line[len - 1] != '\n')
			BAD("a line under %d bytes", CSV_LINE_CAP);
		while (len && (line[len - 1] == '\n' || line[len - 1] == '\r'))
			line[--len] = '\0';
		if (!len)
			continue;
		nf = cvc_csv_split(line, fld, PLAN_MAX_FIELDS);
		if (nf < 0)
			BAD("fields quoted as RFC 4180 quotes them");
		if (!nh) {
			if (read_header(fld, nf, ci, why, sizeof why))
				goto bad;
			nh = nf;
			continue;
		}
		if (nf != nh)
			BAD("%d fields as in the header, got %d", nh, nf);
		if (parse_row(fld, ci, &s, why, sizeof why))
			goto bad;
		if (nv == cap) {
			if (nv >= PLAN_MAX)
				BAD("at most %u rows", PLAN_MAX);
			if (cvc_grow(&v, &cap, cap + 1, sizeof *v, 256) != CVC_OK) {
				st = CVC_ERR_NOMEM;
				snprintf(err, errlen, "out of memory");
				goto out;
			}
		}
		v[nv++] = s;
	}
	if (ferror(f)) {
		snprintf(err, errlen, "'%s': read error", path);
		st = CVC_ERR_IO;
		goto out;
	}
	if (!nh) {
		lineno = 1;
		BAD("a calibration plan header, got an empty file");
	}
#undef BAD
	goto out;
bad:
	snprintf(err, errlen, "'%s': line %d: expected %s", path, lineno, why);
	st = CVC_ERR_FORMAT;
out:
	fclose(f);
	if (st) {
		free(v);
		return st;
	}
	*out = v;
	*n = nv;
	return CVC_OK;
}
