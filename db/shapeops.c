/*
 * shapeops.c - the framework ops whose shapes the importers keep
 * (op_shapes), and their family: see cvc_db_shape_op() in cvc_db.h.
 *
 * One table for the importer (which ops to keep) and models/ (how to price
 * them), so the two cannot drift apart.  Only ops that launch their own
 * kernels with operand shapes that fix the bytes moved; composites that
 * call one of these (layer_norm -> native_layer_norm, embedding ->
 * index_select on some versions) are kept when they can launch directly.
 * ATen names, as PyTorch's profiler writes them.
 */
#include <stdlib.h>
#include <string.h>

#include "cvc/cvc_db.h"

static const struct shape_op {
	const char *name;
	cvc_shape_kind kind;
} ops[] = {
	/* sorted by name (bsearch) */
	{"aten::_log_softmax", CVC_SHAPE_NORM},
	{"aten::_log_softmax_backward_data", CVC_SHAPE_NORM},
	{"aten::_scaled_mm", CVC_SHAPE_GEMM},
	{"aten::_softmax", CVC_SHAPE_NORM},
	{"aten::_softmax_backward_data", CVC_SHAPE_NORM},
	{"aten::add", CVC_SHAPE_ELEMENTWISE},
	{"aten::add_", CVC_SHAPE_ELEMENTWISE},
	{"aten::addcdiv_", CVC_SHAPE_ELEMENTWISE},
	{"aten::addcmul_", CVC_SHAPE_ELEMENTWISE},
	{"aten::addmm", CVC_SHAPE_GEMM},
	{"aten::baddbmm", CVC_SHAPE_GEMM},
	{"aten::bmm", CVC_SHAPE_GEMM},
	{"aten::copy_", CVC_SHAPE_COPY},
	{"aten::div", CVC_SHAPE_ELEMENTWISE},
	{"aten::div_", CVC_SHAPE_ELEMENTWISE},
	{"aten::embedding", CVC_SHAPE_GATHER},
	{"aten::exp", CVC_SHAPE_ELEMENTWISE},
	{"aten::gelu", CVC_SHAPE_ELEMENTWISE},
	{"aten::gelu_backward", CVC_SHAPE_ELEMENTWISE},
	{"aten::index_select", CVC_SHAPE_GATHER},
	{"aten::linear", CVC_SHAPE_GEMM},
	{"aten::matmul", CVC_SHAPE_GEMM},
	{"aten::mean", CVC_SHAPE_REDUCTION},
	{"aten::mm", CVC_SHAPE_GEMM},
	{"aten::mul", CVC_SHAPE_ELEMENTWISE},
	{"aten::mul_", CVC_SHAPE_ELEMENTWISE},
	{"aten::native_dropout", CVC_SHAPE_ELEMENTWISE},
	{"aten::native_dropout_backward", CVC_SHAPE_ELEMENTWISE},
	{"aten::native_layer_norm", CVC_SHAPE_NORM},
	{"aten::native_layer_norm_backward", CVC_SHAPE_NORM},
	{"aten::neg", CVC_SHAPE_ELEMENTWISE},
	{"aten::relu", CVC_SHAPE_ELEMENTWISE},
	{"aten::relu_", CVC_SHAPE_ELEMENTWISE},
	{"aten::rsqrt", CVC_SHAPE_ELEMENTWISE},
	{"aten::sigmoid", CVC_SHAPE_ELEMENTWISE},
	{"aten::sigmoid_backward", CVC_SHAPE_ELEMENTWISE},
	{"aten::silu", CVC_SHAPE_ELEMENTWISE},
	{"aten::silu_backward", CVC_SHAPE_ELEMENTWISE},
	{"aten::sub", CVC_SHAPE_ELEMENTWISE},
	{"aten::sub_", CVC_SHAPE_ELEMENTWISE},
	{"aten::sum", CVC_SHAPE_REDUCTION},
	{"aten::tanh", CVC_SHAPE_ELEMENTWISE},
	{"aten::tanh_backward", CVC_SHAPE_ELEMENTWISE},
	{"aten::threshold_backward", CVC_SHAPE_ELEMENTWISE},
};

struct key {
	const char *s;
	size_t n;
};

static int cmp(const void *k, const void *e)
{
	const struct key *key = k;
	const char *name = ((const struct shape_op *)e)->name;
	size_t len = strlen(name);
	int c = memcmp(key->s, name, key->n < len ? key->n : len);

	if (c)
		return c;
	return (key->n > len) - (key->n < len);
}

cvc_shape_kind cvc_db_shape_op(const char *name, size_t len)
{
	struct key k = {name, len};
	const struct shape_op *hit;

	if (!name || len < 8 || len > 40 || memcmp(name, "aten::", 6) != 0)
		return CVC_SHAPE_NONE;
	hit = bsearch(&k, ops, sizeof ops / sizeof ops[0], sizeof ops[0], cmp);
	return hit ? hit->kind : CVC_SHAPE_NONE;
}
