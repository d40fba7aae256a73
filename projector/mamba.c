/*
 * mamba.c - the operators of a Mamba-2 mixer besides its two projections
 * (project.c prices in_proj and out_proj in the QKV and projection GEMMs'
 * places): the causal conv1d, the SSD scan and the gated RMSNorm, as
 * Megatron-Core's MambaMixer runs them through mamba_ssm's
 * MambaSplitConv1dScanCombinedFn (its use_mamba_mem_eff_path default): the
 * forward runs conv1d, the SSD's five Triton kernels and the norm; the
 * backward recomputes conv1d, the norm and the SSD's chunk states before
 * its own kernels (state-spaces/mamba mamba_ssm/ops/triton/ssd_combined.py,
 * _mamba_chunk_scan_combined_fwd / _bwd; docs/MODELS.md "Mamba-2").
 *
 * The SSD (Dao & Gu 2024, "Transformers are SSMs", arXiv 2405.21060,
 * sec. 6) cuts the sequence into chunks of Q tokens; per chunk its kernels
 * are batched matmuls of the head width P, the state size N and Q, priced
 * here through the GEMM models at those shapes (a kernel of b x chunks x
 * heads small matmuls runs at what such GEMMs run at), and the state
 * passing between chunks, memory-bound.  Sizes per tensor-parallel rank:
 * heads and groups split by tp (MambaMixer asserts both divide).
 */
#include <math.h>

#include "cvc/cvc_model.h"
#include "proj_internal.h"

/* One batched matmul of the SSD, m x n x k over `batch` blocks. */
static double bmm(struct proj_sink *k, int dt, double m, double n, double kk, double batch,
		  double count)
{
	return proj_op_gemm_dt(k, dt, m, n, kk, batch, count, 0);
}

void proj_mamba_scan_ops(struct proj_sink *k, const struct proj_shape *x, double cf, double cb,
			 double *af, double *ab)
{
	/* the kernels run in the activations' 16-bit type (fp8 covers the
	 * projections only) */
	int dt = x->lowp ? CVC_PROJ_BF16 : x->dtype;
	double Q = x->mq, N = x->mn, P = x->mp;
	double hl = x->mh / x->t, gl = fmax(1, x->mg / x->t);
	double bc = x->b * ceil(x->s / Q);          /* chunks of a micro-batch */
	double H = bc * hl, G = bc * gl;
	double st_bytes = (4 + x->BA) * H * P * N;  /* fp32 states in, 16-bit out */
	double cum_bytes = (x->BA + 8) * x->b * x->s * hl; /* dt in, dt and dA_cumsum out */
	double f, r;

	/* forward: _chunk_cumsum, _chunk_state (B^T x per chunk: P x N over
	 * Q), _state_passing, _bmm_chunk (C B^T: Q x Q over N, per group),
	 * _chunk_scan (the masked C B^T x: Q x P over Q; C states: Q x P over N) */
	f = proj_op_mem(k, CVC_MODEL_MEM_ELEMENTWISE, cum_bytes, cf, 0);
	f += bmm(k, dt, P, N, Q, H, cf);
	f += proj_op_mem(k, CVC_MODEL_MEM_ELEMENTWISE, st_bytes, cf, 0);
	f += bmm(k, dt, Q, Q, N, G, cf);
	f += bmm(k, dt, Q, P, Q, H, cf) + bmm(k, dt, Q, P, N, H, cf);
	*af = f;
	/* backward: the cumulative sum, C B^T, the chunk states and their
	 * passing again; _chunk_scan_bwd_dstates (P x N over Q),
	 * _state_passing_bwd, _chunk_scan_chunk_state_bwd_dx (Q x P over Q and
	 * over N), _chunk_state_bwd_db and _chunk_scan_bwd_dC (Q x N over P
	 * each), _chunk_scan_bwd_dcb (Q x Q over P), two _bmm_chunk_bwd (Q x N
	 * over Q, per group), _chunk_scan_bwd_ddAcs_stable (reads C B^T again)
	 * and _chunk_cumsum_bwd */
	r = proj_op_mem(k, CVC_MODEL_MEM_ELEMENTWISE, cum_bytes, cb, 0);
	r += bmm(k, dt, Q, Q, N, G, cb) + bmm(k, dt, P, N, Q, H, cb);
	r += proj_op_mem(k, CVC_MODEL_MEM_ELEMENTWISE, st_bytes, cb, 0);
	r += bmm(k, dt, P, N, Q, H, cb);
	r += proj_op_mem(k, CVC_MODEL_MEM_ELEMENTWISE, (4 + 2 * x->BA) * H * P * N, cb, 0);
	r += bmm(k, dt, Q, P, Q, H, cb) + bmm(k, dt, Q, P, N, H, cb);
	r += 2 * bmm(k, dt, Q, N, P, H, 2 * cb);
	r += bmm(k, dt, Q, Q, P, H, cb);
	r += 2 * bmm(k, dt, Q, N, Q, G, 2 * cb);
	r += proj_op_mem(k, CVC_MODEL_MEM_ELEMENTWISE, 4 * G * Q * Q + 2 * x->BA * H * Q * P, cb, 0);
	r += proj_op_mem(k, CVC_MODEL_MEM_ELEMENTWISE, 2 * cum_bytes, cb, 0);
	*ab = r;
}

void proj_mamba_mem_ops(struct proj_sink *k, const struct proj_shape *x, double cf, double cb,
			double *mf, double *mb)
{
	double T = x->T, c = x->cdim / x->t, di = x->di / x->t;

	/* the depthwise causal conv1d with its SiLU over x, B and C: read and
	 * write each channel; backward recomputes it, then reads the output
	 * gradient and the input and writes the input gradient */
	*mf += proj_op_mem(k, CVC_MODEL_MEM_ELEMENTWISE, 2 * x->BA * T * c, cf, 0);
	*mb += proj_op_mem(k, CVC_MODEL_MEM_ELEMENTWISE, (2 + 3) * x->BA * T * c, cb, 0);
	/* the gated RMSNorm (RMSNormGated, norm before out_proj, gated by z):
	 * reads y and z, writes; backward recomputes it for out_proj's wgrad,
	 * then reads the gradient, y and z and writes dy and dz */
	*mf += proj_op_mem(k, CVC_MODEL_MEM_NORM, 3 * x->BA * T * di, cf, 0);
	*mb += proj_op_mem(k, CVC_MODEL_MEM_NORM, (3 + 5) * x->BA * T * di, cb, 0);
}
