/*
 * ends.c - the operators of the first and the last pipeline stage beside
 * their layers: the embedding's lookup and gradient, and the final norm,
 * output layer, loss (and multi-token prediction's modules) of the last;
 * with tensor parallelism, the vocabulary-parallel collectives both run
 * (Megatron-Core's VocabParallelEmbedding, its ColumnParallelLinear output
 * layer and vocab_parallel_cross_entropy), tagged with their stage so
 * only the stage holding them pays them (evaluate.c).
 */
#include <math.h>

#include "cvc/cvc_model.h"
#include "ctx.h"
#include "proj_internal.h"

/*
 * A vocabulary-parallel layer's pair of collectives over the tv ranks the
 * vocabulary is split over (t in 1D, t / td on a 3D grid), n runs: with
 * sequence parallelism an all-gather one way and a reduce-scatter the
 * other, without it one all-reduce of the partial sums.  Tagged st.
 */
static double vocab_tp(struct proj_sink *k, const struct proj_shape *x, double n, int st)
{
	double msg = x->Td * x->h * x->BA, pn = fmin(x->tv, x->gpn);

	if (x->sp)
		return proj_op_coll_at(k, CVC_MODEL_ALLGATHER, CVC_PROJ_COMM_TP, msg, x->tv, pn, n, st) +
		       proj_op_coll_at(k, CVC_MODEL_REDUCESCATTER, CVC_PROJ_COMM_TP, msg, x->tv, pn, n,
				       st);
	return proj_op_coll_at(k, CVC_MODEL_ALLREDUCE, CVC_PROJ_COMM_TP, msg, x->tv, pn, n, st);
}

/* First stage: embedding lookup and its scatter-add gradient. */
static void first_stage_ops(struct proj_sink *k, const struct proj_shape *x, double M,
			    struct proj_layer_cost *lc)
{
	k->kernels = 0;
	lc->first_fwd_s = proj_op_mem(k, CVC_MODEL_MEM_GATHER, 2 * x->BA * x->Td * x->h, M,
				      CVC_PROJ_STAGE_FIRST);
	lc->first_bwd_s = proj_op_mem(k, CVC_MODEL_MEM_GATHER, 3 * x->BA * x->Td * x->h, M,
				      CVC_PROJ_STAGE_FIRST);
	lc->first_kernels = k->kernels;
	/* the vocabulary split over tp ranks (Megatron-Core's
	 * VocabParallelEmbedding, torchtitan's RowwiseParallel): each rank
	 * looks up its rows, the partial outputs reduce: an all-reduce, or
	 * with sequence parallelism a reduce-scatter whose backward gathers
	 * the gradient */
	lc->first_tp_s = x->tv > 1 ? vocab_tp(k, x, M, CVC_PROJ_STAGE_FIRST) : 0;
}

/*
 * The output layer's tensor-parallel collectives (Megatron-Core's
 * ColumnParallelLinear output_layer with the vocabulary split, and
 * vocab_parallel_cross_entropy): the hidden states gathered from their
 * sequence shards before the logits GEMM and the gradient reduce-scattered
 * back (sequence parallel), or the gradient all-reduced (without); the
 * loss's three all-reduces of one fp32 per token (the logits' max, the
 * target's logit, the sum of exponentials).  R runs of each.
 */
static double last_stage_tp(struct proj_sink *k, const struct proj_shape *x, double R)
{
	int st = CVC_PROJ_STAGE_LAST;

	if (!(x->tv > 1))
		return 0;
	return vocab_tp(k, x, R, st) +
	       3 * proj_op_coll_at(k, CVC_MODEL_ALLREDUCE, CVC_PROJ_COMM_TP, 4 * x->Td, x->tv,
				   fmin(x->tv, x->gpn), 3 * R, st);
}

/*
 * Last stage: final norm, logits GEMM (bf16 under fp8 and fp4 too:
 * Transformer Engine's recipes cover the transformer layers), softmax
 * cross-entropy.
 * Megatron-Core's fused vocab-parallel cross-entropy reads the logits and
 * keeps fp32 exponentials for backward (6 B per logit each way); eager
 * PyTorch under autocast casts them to fp32, runs log_softmax and
 * nll_loss, and backward nll_loss_backward, log_softmax_backward and the
 * cast back: 14 and 22 B per logit.
 */
static void last_stage_ops(struct proj_sink *k, const struct proj_shape *x, double M,
			   struct proj_layer_cost *lc)
{
	double Th = x->Td * x->h / (x->sp ? x->t : 1);
	double f, b, d, w, tv = x->Td * x->V / x->tv, f1, f2, b1, b2;
	int st = CVC_PROJ_STAGE_LAST, ldt = x->lowp ? CVC_PROJ_BF16 : x->dtype;
	int eager = x->framework != CVC_PROJ_FW_MEGATRON;
	double R = M * (1 + x->mtp); /* runs: again per prediction module */

	k->kernels = 0;
	f = proj_gemm3(k, ldt, x->Td, x->V / x->tv, x->h, R, R, st, 1, 1, 1, &d, &w);
	b = d + w;
	f1 = proj_op_mem(k, CVC_MODEL_MEM_NORM, 2 * x->BA * Th, R, st);
	f2 = proj_op_mem(k, CVC_MODEL_MEM_NORM, (eager ? 14 : x->BA + 4) * tv, R, st);
	f += f1 + f2;
	b1 = proj_op_mem(k, CVC_MODEL_MEM_NORM, 4 * x->BA * Th, R, st);
	b2 = proj_op_mem(k, CVC_MODEL_MEM_ELEMENTWISE, (eager ? 22 : 4 + x->BA) * tv, R, st);
	b += b1 + b2;
	if (x->mtp > 0) {
		/*
		 * Multi-token prediction (Megatron-Core's MultiTokenPredictionLayer;
		 * DeepSeek-V3 report sec. 2.2): per module the next tokens' embedding
		 * (the shared table), its norm and the hidden state's, their
		 * concatenation projected 2h -> h (column parallel), one more layer
		 * (counted with the stage's layers) and the final norm, logits and
		 * loss again, as above.
		 */
		double m = M * x->mtp, pf, pd, pw, k0 = k->kernels;

		pf = proj_gemm3(k, x->dtype, x->Td, x->h / x->tv, 2 * x->h, m, m, st, 1, 1, 1, &pd, &pw);
		pf += proj_op_mem(k, CVC_MODEL_MEM_GATHER, 2 * x->BA * x->Td * x->h, m, st) +
		      2 * proj_op_mem(k, CVC_MODEL_MEM_NORM, 2 * x->BA * Th, m, st);
		pd += pw + proj_op_mem(k, CVC_MODEL_MEM_GATHER, 3 * x->BA * x->Td * x->h, m, st) +
		      2 * proj_op_mem(k, CVC_MODEL_MEM_NORM, 4 * x->BA * Th, m, st);
		lc->mtp_fwd_s = x->mtp * pf;
		lc->mtp_bwd_s = x->mtp * pd;
		lc->mtp_kernels = k->kernels - k0;
		f += x->mtp * (pf + f);
		b += x->mtp * (pd + b);
	}
	lc->last_fwd_s = f;
	lc->last_bwd_s = b;
	lc->last_kernels = k->kernels;
	lc->last_tp_s = last_stage_tp(k, x, R);
}

void proj_ends_ops(struct proj_sink *k, const struct proj_shape *x, double M,
		   struct proj_layer_cost *lc)
{
	first_stage_ops(k, x, M, lc);
	last_stage_ops(k, x, M, lc);
}
