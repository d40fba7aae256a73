/*
 * eager.c - a torchtitan block's memory-bound operators as eager PyTorch
 * runs them (`framework: torchtitan` with `compile: false`): every op of
 * the RMSNorm, the SwiGLU and the complex-number rope its own kernel,
 * reading and writing the whole tensor.  torch.compile (the default)
 * fuses each of them into one kernel, as Transformer Engine's fused
 * kernels do (project.c layer_mem_ops()); docs/MODELS.md "torchtitan".
 *
 * Bytes per element of each kernel, counted from the ops the module calls
 * at torchtitan 9dec370 (torchtitan/models/norms.py RMSNorm,
 * torchtitan/models/llama/model.py FeedForward and apply_rotary_emb) and,
 * backward, from the autograd formula of each (PyTorch's
 * tools/autograd/derivatives.yaml); a is the activations' bytes (2 at
 * bf16), fp32 intermediates 4.
 */
#include "cvc/cvc_model.h"
#include "proj_internal.h"

/* The kernels of one direction: bytes per element as c0 + ca * a. */
struct eager_kernel {
	double c0, ca;
};

/*
 * RMSNorm: x.float(), pow(2), mean(-1), x * rsqrt(...), type_as(x),
 * * weight (rsqrt of the per-row mean is per row: not counted).
 * Backward: * weight's two gradients (g * w; g * y then its sum over
 * tokens), type_as's cast back to fp32, the product's two (g * r; g * x
 * then its row sum), mean's expand, pow's grad * 2 * x^1 (three
 * kernels), the two gradients of x added, the cast back to 16 bit.
 */
static const struct eager_kernel norm_f[] = {
	{4, 1}, {8, 0}, {4, 0}, {8, 0}, {4, 1}, {0, 2},
};
static const struct eager_kernel norm_b[] = {
	{0, 2}, {0, 3}, {0, 1}, {4, 1}, {8, 0}, {12, 0}, {4, 0}, {4, 0},
	{8, 0}, {8, 0}, {12, 0}, {12, 0}, {4, 1},
};
/* SwiGLU per element of one of its two inputs: silu(w1 x), * w3 x;
 * backward the product's two gradients and silu_backward */
static const struct eager_kernel act_f[] = {{0, 2}, {0, 3}};
static const struct eager_kernel act_b[] = {{0, 3}, {0, 3}, {0, 3}};
/* rope on q and k as complex numbers: float(), * freqs_cis, type_as;
 * backward the same three (the product's gradient g * conj(freqs_cis)) */
static const struct eager_kernel rope_fb[] = {{4, 1}, {8, 0}, {4, 1}};

static double kernels(struct proj_sink *k, int cls, const struct eager_kernel *e, size_t n,
		      double a, double elts, double runs)
{
	double s = 0;

	for (size_t i = 0; i < n; i++)
		s += proj_op_mem(k, cls, (e[i].c0 + e[i].ca * a) * elts, runs, 0);
	return s;
}

#define KERNELS(k, cls, tab, a, elts, runs) \
	kernels(k, cls, tab, sizeof tab / sizeof tab[0], a, elts, runs)

double proj_eager_norm(struct proj_sink *k, const struct proj_shape *x, double elts, double runs,
		       int backward)
{
	return backward ? KERNELS(k, CVC_MODEL_MEM_ELEMENTWISE, norm_b, x->BA, elts, runs)
			: KERNELS(k, CVC_MODEL_MEM_ELEMENTWISE, norm_f, x->BA, elts, runs);
}

double proj_eager_act(struct proj_sink *k, const struct proj_shape *x, double elts, double runs,
		      int backward)
{
	return backward ? KERNELS(k, CVC_MODEL_MEM_ELEMENTWISE, act_b, x->BA, elts, runs)
			: KERNELS(k, CVC_MODEL_MEM_ELEMENTWISE, act_f, x->BA, elts, runs);
}

double proj_eager_rope(struct proj_sink *k, const struct proj_shape *x, double elts, double runs)
{
	return KERNELS(k, CVC_MODEL_MEM_ELEMENTWISE, rope_fb, x->BA, elts, runs);
}
