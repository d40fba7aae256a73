/*
 * tracemem.c - memory-bound fitting rows from traces recorded with shapes:
 * the elementwise, norm, reduction, copy and gather ops of op_shapes
 * (cvc_db_shape_op), each with the bytes its operands say it moves and the
 * time of the kernels it launched, averaged per shape and run.
 *
 * Bytes are what the op must read and write at least, from "Input Dims"
 * and "Input type" (docs/MODELS.md "Memory-bound fits"): the measured
 * efficiency is then the fraction of HBM bandwidth the framework's kernel
 * reaches on that minimum, which is what the projector charges its own
 * byte counts against.  The shapes come from a trace, so they are parsed
 * as untrusted: an op whose operands do not give a byte count is left out.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "cvc/cvc_model.h"
#include "trace_int.h"

#define TM_MAX_DIM ((int64_t)1 << 40)
#define TM_MAX_BYTES ((int64_t)1 << 50)
#define TM_MAX_OPERANDS 64
/*
 * Rows below this many bytes are left out: operands that small can stay in
 * L2 between the ops of a training step (40 MB on the A100, 50 MB on the
 * H100), and then the op runs faster than HBM allows.  On the A100 trace
 * (hta-trace-diff-a100-w8) elementwise ops of 32-56 MB reach up to 1.10x
 * the HBM bandwidth, those of 64 MiB and more 0.77-0.99x.
 */
#define TM_MIN_BYTES ((int64_t)64 << 20)

struct operand {
	int64_t numel;  /* 0: not a tensor with a known dtype */
	int size;       /* bytes per element */
	int64_t dim0;   /* first dimension */
};

/* Operand i: a tensor when its dims are a non-empty array of positive
 * integers and its type a dtype cvc_dtype_size knows; -1 when malformed. */
static int operand(json_object *dims, json_object *types, size_t i, struct operand *o)
{
	json_object *d = json_object_array_get_idx(dims, i);
	json_object *t = types ? json_object_array_get_idx(types, i) : NULL;
	size_t nd;

	memset(o, 0, sizeof *o);
	if (!d || !json_object_is_type(d, json_type_array))
		return 0;  /* scalar, list or none: not a tensor */
	nd = json_object_array_length(d);
	if (nd == 0 || !t || !json_object_is_type(t, json_type_string))
		return 0;
	o->numel = 1;
	for (size_t j = 0; j < nd; j++) {
		json_object *v = json_object_array_get_idx(d, j);
		int64_t x;

		if (!json_object_is_type(v, json_type_int))
			return json_object_is_type(v, json_type_array) ? (o->numel = 0) : -1;
		x = json_object_get_int64(v);
		if (x <= 0 || x >= TM_MAX_DIM || o->numel > TM_MAX_DIM / x)
			return -1;
		if (j == 0)
			o->dim0 = x;
		o->numel *= x;
	}
	if ((o->size = cvc_dtype_size(json_object_get_string(t))) <= 0)
		o->numel = 0;
	return 0;
}

static int is_op(const char *op, const char *name)
{
	return strcmp(op, name) == 0;
}

/*
 * Operands of the functional form of ops that also have an out= variant
 * (ATen schemas, native_functions.yaml): the profiler lists the out tensor
 * as one more operand ("aten::mul" with dims [[4,N],[],[4,N]] is mul.out
 * with a Scalar), and it is written, not read.  Ops not listed have no
 * out= form the profiler shows (in-place "_" ops, dropout, layer norm).
 */
static size_t functional_arity(const char *op)
{
	static const struct {
		const char *name;
		size_t n;
	} t[] = {
		{"aten::add", 3}, {"aten::sub", 3}, {"aten::mul", 2}, {"aten::div", 2},
		{"aten::gelu", 2}, {"aten::silu", 1}, {"aten::relu", 1}, {"aten::sigmoid", 1},
		{"aten::tanh", 1}, {"aten::neg", 1}, {"aten::exp", 1}, {"aten::rsqrt", 1},
		{"aten::gelu_backward", 3}, {"aten::silu_backward", 2},
		{"aten::sigmoid_backward", 2}, {"aten::tanh_backward", 2},
		{"aten::threshold_backward", 3}, {"aten::_softmax", 3},
		{"aten::_softmax_backward_data", 4}, {"aten::_log_softmax", 3},
		{"aten::_log_softmax_backward_data", 4},
	};

	for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
		if (strcmp(op, t[i].name) == 0)
			return t[i].n;
	return TM_MAX_OPERANDS;
}

/* The row's dtype, for the record (the fit is per class, any dtype). */
static cvc_hw_dtype dtype_of(const char *type)
{
	if (strstr(type, "BFloat16"))
		return CVC_HW_BF16;
	if (strstr(type, "Half"))
		return CVC_HW_FP16;
	if (strstr(type, "Float8"))
		return CVC_HW_FP8;
	return CVC_HW_FP32;
}

/* cvc_model_op_bytes, and the first operand's dtype when dtype is not NULL. */
static cvc_status op_measure(const char *op, const char *dims, const char *types,
			     cvc_model_mem *cls, int64_t *bytes, cvc_hw_dtype *dtype)
{
	struct operand o[TM_MAX_OPERANDS];
	json_object *d = NULL, *t = NULL;
	cvc_shape_kind kind;
	size_t n = 0, big = 0, nin;
	int64_t in = 0, outb = 0;
	cvc_status st = CVC_ERR_FORMAT;

	if (!op || !dims || !cls || !bytes)
		return CVC_ERR_USAGE;
	kind = cvc_db_shape_op(op, strlen(op));
	switch (kind) {
	case CVC_SHAPE_ELEMENTWISE: *cls = CVC_MODEL_MEM_ELEMENTWISE; break;
	case CVC_SHAPE_NORM: *cls = CVC_MODEL_MEM_NORM; break;
	case CVC_SHAPE_REDUCTION: *cls = CVC_MODEL_MEM_REDUCTION; break;
	case CVC_SHAPE_COPY: *cls = CVC_MODEL_MEM_COPY; break;
	case CVC_SHAPE_GATHER: *cls = CVC_MODEL_MEM_GATHER; break;
	default: return CVC_ERR_NOTFOUND;
	}
	if (!types)
		return CVC_ERR_FORMAT;  /* no dtypes: no bytes */
	d = json_tokener_parse(dims);
	t = json_tokener_parse(types);
	if (!d || !t || !json_object_is_type(d, json_type_array) ||
	    !json_object_is_type(t, json_type_array))
		goto out;
	n = json_object_array_length(d);
	if (n == 0 || n > TM_MAX_OPERANDS)
		goto out;
	nin = functional_arity(op) < n ? functional_arity(op) : n;
	for (size_t i = 0; i < n; i++) {
		if (operand(d, t, i, &o[i]))
			goto out;
		if (o[i].numel && o[i].numel > o[big].numel)
			big = i;
		if (o[i].numel && i < nin && (in += o[i].numel * o[i].size) > TM_MAX_BYTES)
			goto out;
		if (o[i].numel && i >= nin && (outb += o[i].numel * o[i].size) > TM_MAX_BYTES)
			goto out;
	}
	if (!o[big].numel)
		goto out;  /* no tensor operand */
	switch (*cls) {
	case CVC_MODEL_MEM_REDUCTION:
		/* sum / mean: read the input; the output is small */
		*bytes = o[0].numel * o[0].size;
		break;
	case CVC_MODEL_MEM_COPY:
		/* copy_(self, src): read src, write self (self is not read) */
		if (n < 2 || !o[0].numel || !o[1].numel)
			goto out;
		*bytes = o[1].numel * o[1].size + o[0].numel * o[0].size;
		break;
	case CVC_MODEL_MEM_GATHER: {
		/* embedding(weight, indices) / index_select(self, dim, index):
		 * read the selected rows and the indices, write the rows */
		size_t w = 0, ix = is_op(op, "aten::embedding") ? 1 : 2;
		int64_t row;

		if (n <= ix || !o[w].numel || !o[ix].numel || !o[w].dim0)
			goto out;
		row = o[w].numel / o[w].dim0;
		if (o[ix].numel > TM_MAX_BYTES / (row ? row : 1) / 16)
			goto out;
		*bytes = 2 * o[ix].numel * row * o[w].size + o[ix].numel * o[ix].size;
		break;
	}
	default:
		/* elementwise and norms: read every tensor input, write the out=
		 * tensors, or else one output of the largest operand's size (in
		 * place: self is read and written); dropout also writes its mask
		 * (1 byte) */
		*bytes = in + (outb ? outb : o[big].numel * o[big].size);
		if (is_op(op, "aten::native_dropout"))
			*bytes += o[big].numel;
		break;
	}
	st = *bytes > 0 ? CVC_OK : CVC_ERR_FORMAT;
	if (st == CVC_OK && dtype) {
		json_object *v = json_object_array_get_idx(t, 0);

		*dtype = dtype_of(v && json_object_is_type(v, json_type_string)
					  ? json_object_get_string(v)
					  : "");
	}
out:
	json_object_put(d);
	json_object_put(t);
	return st;
}

cvc_status cvc_model_op_bytes(const char *op, const char *dims, const char *types,
			      cvc_model_mem *cls, int64_t *bytes)
{
	return op_measure(op, dims, types, cls, bytes, NULL);
}

/* One op's row into the run's set (ctx: struct tr_sets). */
static cvc_status take_mem(const struct tr_op *o, void *ctx)
{
	cvc_model_row r;
	cvc_model_mem cls;
	int64_t bytes;
	double us;

	memset(&r, 0, sizeof r);
	if (op_measure(o->op, o->dims, o->types, &cls, &bytes, &r.dtype) || bytes < TM_MIN_BYTES)
		return CVC_OK;  /* GEMM-like, no byte count, or L2-sized: left out */
	/* its kernels; a copy may be a memcpy instead */
	us = o->kernel_us + (cls == CVC_MODEL_MEM_COPY ? o->copy_us : 0);
	if (!(us > 0))
		return CVC_OK;
	r.kind = CVC_MODEL_MEMBOUND;
	r.mem = cls;
	r.bytes = bytes;
	r.b = 1;
	snprintf(r.gpu, sizeof r.gpu, "%s", o->gpu);
	snprintf(r.tag, sizeof r.tag, "%.*s", (int)sizeof r.tag - 1,
		 strncmp(o->op, "aten::", 6) == 0 ? o->op + 6 : o->op);
	return tr_sets_add(ctx, o->run_id, &r, us);
}

cvc_status cvc_model_membound_rows_from_traces(cvc_db *db, cvc_model_rows **sets, size_t *nsets)
{
	struct tr_sets *ts;
	cvc_status rc;

	if (!db || !sets || !nsets)
		return CVC_ERR_USAGE;
	*sets = NULL;
	*nsets = 0;
	if (!(ts = tr_sets_new()))
		return CVC_ERR_NOMEM;
	if ((rc = tr_each_op(db, -1, take_mem, ts))) {
		tr_sets_free(ts);
		return rc;
	}
	return tr_sets_take(db, ts, sets, nsets);
}
