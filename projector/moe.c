/*
 * moe.c - the operators of an MoE layer's FFN as Megatron-Core runs them
 * (docs/SCENARIOS.md "What one step is made of", MoE): the router, the
 * routed experts' grouped GEMMs, the shared experts, the token permutation,
 * and the expert-parallel dispatch and combine of each token dispatcher.
 * project.c calls them for a layer whose shape has experts.
 */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "cvc/cvc_model.h"
#include "ctx.h"
#include "proj_internal.h"

/*
 * How far cvc's price of a whole MoE layer's compute is from the one MoE
 * layer ever measured: DeepSeek-V3's chunk pair (../shared/traces/
 * deepseek-train-h800-ep64, 4 MoE layers forward and backward on H800)
 * runs 124.4 ms of compute where cvc prices 110.1 ms for the same
 * scenario without the one figure taken from that trace, ln(124.4 /
 * 110.1) = 0.122 on log time.  With it (the blockwise weight gradients,
 * models/blockfp8.c) 117.9 ms, 0.053: an in-sample figure that
 * understates the error, so the held-out one is charged.  Each operator's own
 * model error does not see what the layer's pricing leaves out or gets
 * wrong as a whole (kernels nobody models one by one, the schedule of the
 * layer's streams), so this one measured error is charged to all of an
 * MoE layer's compute, a component of its own (interval.c).
 * moerun.deepseek_v3_chunk_pair_against_its_trace recomputes it (the
 * price without the trace's own factor) and fails when the pricing moves
 * it by more than half a point.
 */
#define MOE_LAYER_SIGMA 0.122

double proj_moe_layer_sigma(void)
{
	return MOE_LAYER_SIGMA;
}

/*
 * What the skew of the routing leaves unknown (moe_imbalance s > 1): the
 * operators it scales are charged ln(s) / 1.645 of relative error, so the
 * 90% interval reaches from the balanced price to as far past the skewed
 * one.  seconds: one run; count: runs per step.
 */
static void skew_unc(struct proj_sink *k, const struct proj_shape *x, int comp, double seconds,
		     double count)
{
	if (k->unc && x->imb > 1 && seconds > 0)
		k->unc->ts[comp] += 1e6 * seconds * count * log(x->imb) / 1.645;
}

/* One memory-bound kernel of the router or the permutation, bytes moved,
 * run count times; its seconds. */
static double kern(struct proj_sink *k, int cls, double bytes, double count)
{
	return proj_op_mem(k, cls, bytes, count, CVC_PROJ_STAGE_ALL);
}

/*
 * The router's kernels besides its GEMM, on the Te tokens' E scores (fp32), as
 * Megatron-Core's TopKRouter runs them (moe/router.py, moe/moe_utils.py:
 * topk_routing_with_score_function, compute_routing_scores_for_aux_loss,
 * switch_load_balancing_loss_func).  Unfused: the score function (softmax
 * or sigmoid: read and write 4 B per score), top-k (read 4, write 12 B per
 * chosen expert), the dense probabilities and routing map filled in (zero
 * and scatter: 5 B per score), and the auxiliary loss's scores, top-k,
 * per-expert counts and loss (4 + 4, 4, 1, 4 B per score): 9 kernels;
 * backward the loss's and the two score functions' gradients and the
 * scatter's (4 + 12 + 12 + 8 B per score): 4 kernels.  Fused (--moe-
 * router-fusion: Transformer Engine's fused_topk_with_score_function,
 * fused_compute_score_for_moe_aux_loss, fused_moe_aux_loss): 3 kernels of
 * 9, 9 and 4 B per score forward, 2 of 12 backward.  Returns the forward
 * seconds of one run; *bwd the backward's.
 */
static double router_ops(struct proj_sink *k, const struct proj_shape *x, double cf, double cb,
			 double *bwd)
{
	double te = x->Te * x->E, tk = x->Tx, f = 0, b = 0;

	if (x->rfuse) {
		f = kern(k, CVC_MODEL_MEM_NORM, 9 * te, cf) + kern(k, CVC_MODEL_MEM_NORM, 9 * te, cf) +
		    kern(k, CVC_MODEL_MEM_REDUCTION, 4 * te, cf);
		b = 2 * kern(k, CVC_MODEL_MEM_ELEMENTWISE, 12 * te, 2 * cb);
	} else {
		static const double fw[] = {8, 4, 4, 1, 8, 4, 1, 4};
		static const int fc[] = {CVC_MODEL_MEM_NORM, CVC_MODEL_MEM_REDUCTION,
					 CVC_MODEL_MEM_COPY, CVC_MODEL_MEM_GATHER,
					 CVC_MODEL_MEM_NORM, CVC_MODEL_MEM_REDUCTION,
					 CVC_MODEL_MEM_REDUCTION, CVC_MODEL_MEM_REDUCTION};
		static const double bw[] = {4, 12, 12, 8};

		for (size_t i = 0; i < sizeof fw / sizeof fw[0]; i++)
			f += kern(k, fc[i], fw[i] * te, cf);
		f += kern(k, CVC_MODEL_MEM_GATHER, 12 * tk, cf); /* the top-k's output */
		for (size_t i = 0; i < sizeof bw / sizeof bw[0]; i++)
			b += kern(k, CVC_MODEL_MEM_ELEMENTWISE, bw[i] * te, cb);
	}
	*bwd = b;
	return f;
}

/*
 * Token permutation before the experts and its inverse after, each way, on
 * the copies Tr of the rank's own tokens (the busiest rank's), and the
 * alltoall dispatcher's sort on the rows its experts run.  Unfused, as Megatron-
 * Core's moe_utils.permute / unpermute run PyTorch ops: the routing map
 * transposed (2 B per score), its indices (8 B per copy, two kernels), the
 * tokens and their probabilities gathered; unpermuted: weighted by their
 * probabilities, a zeroed output, a scatter-add (reading and writing the
 * output).  Backward the same traffic the other way.  Fused (--moe-
 * permute-fusion: Transformer Engine's moe_permute_with_probs and
 * moe_unpermute): the row map (two kernels, 8 B per score), one kernel
 * each way reading a token once and writing its copies.  HybridEP permutes
 * inside its dispatch and combine: none.  Returns the forward seconds of
 * one run; *bwd the backward's.
 */
static double permute_ops(struct proj_sink *k, const struct proj_shape *x, double cf, double cb,
			  double *bwd)
{
	double Th = x->BA * x->Te * x->hl, Trh = x->BA * x->Tx * x->imb * x->hl, te = x->Te * x->E;
	double Tr = x->Tx * x->imb, Tmh = x->BA * x->Tm * x->imb * x->hl, f, b;

	*bwd = 0;
	if (x->disp == CVC_PROJ_DISPATCH_HYBRIDEP)
		return 0;
	if (x->pfuse) {
		f = 2 * kern(k, CVC_MODEL_MEM_GATHER, 4 * te, 2 * cf) +
		    kern(k, CVC_MODEL_MEM_GATHER, Th + Trh + 4 * Tr, cf) +
		    kern(k, CVC_MODEL_MEM_GATHER, Trh + 4 * Tr + Th, cf);
		b = kern(k, CVC_MODEL_MEM_GATHER, Trh + Th, cb) +
		    kern(k, CVC_MODEL_MEM_GATHER, Th + 2 * Trh + 4 * Tr, cb);
	} else {
		f = kern(k, CVC_MODEL_MEM_COPY, 2 * te, cf) +
		    2 * kern(k, CVC_MODEL_MEM_GATHER, 8 * Tr, 2 * cf) +
		    kern(k, CVC_MODEL_MEM_GATHER, 2 * Trh, cf) +
		    kern(k, CVC_MODEL_MEM_GATHER, 8 * Tr, cf) +
		    kern(k, CVC_MODEL_MEM_ELEMENTWISE, 2 * Trh + 4 * Tr, cf) +
		    kern(k, CVC_MODEL_MEM_COPY, Th, cf) +
		    kern(k, CVC_MODEL_MEM_GATHER, Trh + 8 * Tr + 2 * Th, cf);
		b = kern(k, CVC_MODEL_MEM_COPY, Th, cb) +
		    kern(k, CVC_MODEL_MEM_GATHER, Trh + 8 * Tr + 2 * Th, cb) +
		    kern(k, CVC_MODEL_MEM_GATHER, 8 * Tr, cb) +
		    kern(k, CVC_MODEL_MEM_GATHER, Th + Trh, cb) +
		    kern(k, CVC_MODEL_MEM_ELEMENTWISE, 3 * Trh, cb) +
		    kern(k, CVC_MODEL_MEM_REDUCTION, 2 * Trh + 4 * Tr, cb);
	}
	/* Megatron-Core's alltoall dispatcher with more than one local
	 * expert: the tokens received are sorted by local expert after the
	 * dispatch ("Permutation 2", sort_chunks_by_idxs; fused, Transformer
	 * Engine's moe_sort_chunks_by_index; with token drop a transposed
	 * copy) and back before the combine, each reading and writing the
	 * rank's routed copies; backward the two the other way
	 * (megatron/core/transformer/moe/token_dispatcher.py,
	 * MoEAlltoAllTokenDispatcher dispatch_postprocess and
	 * combine_preprocess).  The flex dispatchers' kernels hand each rank
	 * its tokens in the order its permutation above makes. */
	if (x->disp == CVC_PROJ_DISPATCH_ALLTOALL && x->e > 1 && x->E / x->e > 1) {
		f += 2 * kern(k, CVC_MODEL_MEM_GATHER, 2 * Tmh, 2 * cf);
		b += 2 * kern(k, CVC_MODEL_MEM_GATHER, 2 * Tmh, 2 * cb);
	}
	*bwd = b;
	return f;
}

/*
 * MoE FFN: the router (its GEMM in bf16, its score, top-k and auxiliary-
 * loss kernels) on the rank's Te tokens, then each rank's E/ep experts as
 * grouped GEMMs over the Tm rows it receives (Te*k copies, times etp when
 * the expert tensor-parallel group gathers them; balanced routing: Tm/(E/ep) per expert;
 * times moe_imbalance on the busiest rank, which sets the pace), expert
 * tensor parallel etp; the shared experts; and the token permutation
 * around the experts.  Forward and backward memory-bound seconds are added
 * to *mf / *mb.
 */
void proj_moe_ffn_ops(struct proj_sink *k, const struct proj_shape *x,
		      const struct proj_layer_runs *n, struct proj_layer_gemms *G, double *mf,
		      double *mb)
{
	double cf = proj_fwd_runs(x, n, PROJ_RC_MOE), cb = n->cb, perm, permb, rt, rtb;
	double groups = fmax(1, x->E / x->e), mg = x->Tm * x->imb / groups;
	double ffn_l = x->f / x->et, w1 = (x->gated ? 2 : 1) * ffn_l;
	double up_f, up_d, up_w, dn_f, dn_d, dn_w, r_f, r_d, r_w, k0;
	int dt = x->dtype; /* the layer's: bf16 in a layer kept in bf16 */

	r_f = proj_gemm3(k, x->lowp ? CVC_PROJ_BF16 : x->dtype, x->Te, x->E, x->h, cf, cb, 0, 1, 1, 1,
			 &r_d, &r_w);
	/* LatentMoE: the rank's tokens projected to the latent width after
	 * the router and back after the combine (Megatron-Core's moe_layer.py
	 * fc1_latent_proj / fc2_latent_proj: TELinear, duplicated over tp) */
	if (x->lw > 0) {
		double l_d, l_w, u_d, u_w;
		double l_f = proj_gemm3(k, dt, x->Te, x->hl, x->h, cf, cb, 0, 1, 1, 1, &l_d, &l_w);
		double u_f = proj_gemm3(k, dt, x->Te, x->h, x->hl, cf, cb, 0, 1, 1, 1, &u_d, &u_w);

		r_f += l_f + u_f, r_d += l_d + u_d, r_w += l_w + u_w;
	}
	up_f = proj_op_ggemm(k, dt, mg, w1, x->hl, groups, cf);
	up_d = proj_op_ggemm(k, dt, mg, x->hl, w1, groups, cb);
	up_w = proj_op_wggemm(k, dt, x->hl, w1, mg, groups, cb);
	dn_f = proj_op_ggemm(k, dt, mg, x->hl, ffn_l, groups, cf);
	dn_d = proj_op_ggemm(k, dt, mg, ffn_l, x->hl, groups, cb);
	dn_w = proj_op_wggemm(k, dt, ffn_l, x->hl, mg, groups, cb);
	/* the expert GEMMs' and their activation's launches: outside the CUDA
	 * graphs of a dropless layer (Megatron-Core's graph scopes: attention,
	 * router, dispatch preprocessing and shared experts; the routed experts
	 * only with token drop, their shapes then static); the fused grouped
	 * MLP launches its six GEMMs and no activation */
	if (!x->tdrop)
		G->exp_kernels = 2 * cf + 4 * cb +
				 (x->fgm ? 0 : proj_fwd_runs(x, n, PROJ_RC_MOE_ACT | PROJ_RC_MOE) + cb);
	skew_unc(k, x, PU_GEMM, up_f + dn_f, cf);
	skew_unc(k, x, PU_GEMM, up_d + up_w + dn_d + dn_w, cb);
	G->up_f = up_f + r_f, G->up_d = up_d + r_d, G->up_w = up_w + r_w;
	G->dn_f = dn_f, G->dn_d = dn_d, G->dn_w = dn_w;
	/* the mlp node: the experts (the router runs in the attention node) */
	G->mlp_f = up_f + dn_f, G->mlp_d = up_d + dn_d, G->mlp_w = up_w + dn_w;
	if (x->fs > 0) {
		/* shared experts (Megatron-Core's SharedExpertMLP): one dense
		 * FFN of their total width over every token, tensor parallel
		 * as the dense FFN is; not overlapped with the all-to-all
		 * (--moe-shared-expert-overlap is off by default) */
		struct proj_layer_gemms s;

		proj_dense_ffn_gemms(k, x, x->fs, proj_fwd_runs(x, n, PROJ_RC_MOE | PROJ_RC_SHARED),
				     cb, 1, 1, 1, &s);
		G->up_f += s.up_f, G->up_d += s.up_d, G->up_w += s.up_w;
		G->dn_f += s.dn_f, G->dn_d += s.dn_d, G->dn_w += s.dn_w;
		G->mlp_f += s.mlp_f, G->mlp_d += s.mlp_d, G->mlp_w += s.mlp_w;
		if (x->rcm & (PROJ_RC_MOE | PROJ_RC_SHARED))
			G->rc_gemm += s.up_f + s.dn_f;
	}
	rt = router_ops(k, x, cf, cb, &rtb);
	k0 = k->kernels;
	perm = permute_ops(k, x, cf, cb, &permb);
	if (!x->tdrop) /* the permutation: dynamic shapes too */
		G->exp_kernels += k->kernels - k0;
	*mf += rt + perm;
	*mb += rtb + permb;
	if (x->rcm & PROJ_RC_MOE) { /* the whole MoE layer forward again */
		G->rc_gemm += r_f + up_f + dn_f;
		G->rc_mem += rt + perm;
	}
}

/*
 * Expected distinct units (ranks, or NVLink domains) a token's k experts
 * fall on: u units of E/u experts each, the k experts drawn without
 * replacement among those of the m units node-limited routing allows (0 or
 * m >= u: all u).  Every expert equally likely: the balanced routing the
 * load-balancing losses aim at and NeMo's forced-balanced benchmarks run.
 */
static double units_reached(double E, double k, double u, double m)
{
	double per = E / u, avail = E, none = 1;

	if (!(u > 1))
		return 1;
	if (m >= 1 && m < u) {
		avail = per * m;
		u = m;
	}
	for (int i = 0; i < (int)k; i++) {
		double f = (avail - per - i) / (avail - i);

		none *= f > 0 ? f : 0;
	}
	return u * (1 - none);
}

/*
 * One exchange of one pass over the EP group (phase: cvc_model_ep_phase;
 * the group's ranks lie pn to an NVLink domain while ep x etp ranks fit
 * in it), listed count times; its seconds.
 *   alltoall: NCCL all-to-all of one copy per routed expert (Megatron-Core's
 *     MoEAlltoAllTokenDispatcher permutes before sending);
 *   allgather: MoEAllGatherTokenDispatcher: every rank's tokens, routing map
 *     (1 B per expert) and probabilities (4 B) all-gathered, the expert
 *     outputs reduce-scattered back (the backward the other way round);
 *   deepep (and flex, its default backend), hybridep: one copy per rank a
 *     token reaches and, across NVLink domains, one per remote domain,
 *     forwarded over NVLink there (DeepSeek-V3 Technical Report, arXiv
 *     2412.19437, sec. 3.2.2; DeepEP's internode kernels), at the
 *     bandwidths their authors measured (models/epcomm.c).
 * Each rank exchanges the copies of its own Te tokens (its sequence shard
 * with sequence parallelism).  fp8 moves 1 B per element and a 4 B scale
 * per 128 (the report's sec. 3.3).  With a skewed routing (moe_imbalance)
 * the busiest rank receives and sends back that much more, and the
 * exchange waits for it.
 * Where the ranks lie: Megatron-Core builds the expert groups with their
 * own rank generator, tp = etp, ep, dp = the expert data-parallel size and
 * cp = 1 (parallel_state.py initialize_model_parallel,
 * expert_decoder_rank_generator: MoE parallel folding), so an EP group is
 * ep consecutive blocks of etp ranks whatever the attention's cp; the
 * expert data-parallel group (stepops.c) is placed the same way.
 */
static double ep_xfer(struct proj_sink *k, const struct proj_shape *x, int phase, double count)
{
	double pn = fmin(x->e, fmax(1, x->gpn / x->et)), N = ceil(x->e / pn);
	double B = (phase == CVC_EP_DISPATCH_FP8 ? 1 + 4.0 / 128 : x->BA) * x->imb;
	double t;

	if (x->disp == CVC_PROJ_DISPATCH_ALLGATHER) {
		/* every rank gathers all tokens of the expert tensor- and
		 * expert-parallel group (its tp_ep_group): the skew does not
		 * change it */
		double grp = x->e * x->etg, tok = x->Te * x->hl * x->BA * grp;
		double pg = fmin(grp, x->gpn);

		if (phase == CVC_EP_COMBINE)
			return proj_op_coll(k, CVC_MODEL_REDUCESCATTER, CVC_PROJ_COMM_EP, tok, grp, pg,
					    count);
		return proj_op_coll(k, CVC_MODEL_ALLGATHER, CVC_PROJ_COMM_EP,
				    tok + x->Te * x->E * 5 * grp, grp, pg, count);
	}
	if (x->disp == CVC_PROJ_DISPATCH_ALLTOALL) {
		t = proj_op_coll(k, CVC_MODEL_ALLTOALL, CVC_PROJ_COMM_EP, x->Tx * x->hl * B, x->e, pn,
				 count);
	} else {
		double mr = x->gtopk >= 1 && x->gtopk < N ? x->gtopk * pn : 0;
		double G = units_reached(x->E, x->k, x->e, mr);
		double D = units_reached(x->E, x->k, N, x->gtopk);
		double nvl = x->Te * G * x->hl * B, net = N > 1 ? x->Te * D * (N - 1) / N * x->hl * B : 0;

		t = proj_op_ep(k, x->disp == CVC_PROJ_DISPATCH_HYBRIDEP ? CVC_EP_HYBRIDEP
									: CVC_EP_DEEPEP,
			       phase, nvl, net, x->e, pn, x->esms, x->hl, count);
	}
	/* the expert tensor-parallel group gathers the exchanged copies
	 * (dispatch_postprocess) and reduce-scatters the experts' outputs
	 * before the combine (combine_preprocess); the flex dispatchers send
	 * each copy to the group's ranks themselves, the same bytes */
	if (x->etg > 1) {
		double pe = fmin(x->etg, x->gpn);

		t += proj_op_coll(k, phase == CVC_EP_COMBINE ? CVC_MODEL_REDUCESCATTER
							     : CVC_MODEL_ALLGATHER,
				  CVC_PROJ_COMM_EP, x->Tm * x->hl * B, x->etg, pe, count);
	}
	skew_unc(k, x, PU_COLL0 + CVC_PROJ_COMM_EP, t, count);
	return t;
}

/*
 * MoE: per layer a dispatch and a combine forward, and backward the
 * combine's gradient dispatched and the dispatch's combined; every forward
 * pass again under full recomputation or selective recompute of the moe
 * module.  With ep_dispatch_fp8 both dispatches move fp8 (DeepSeek-V3
 * report sec. 3.3.2: the activation before the up projection and the
 * gradient before the down projection), the combines 16-bit.
 */
void proj_ep_comm_ops(struct proj_sink *k, const struct proj_shape *x,
		      const struct proj_layer_runs *n, struct proj_layer_cost *lc)
{
	double fw = proj_fwd_runs(x, n, PROJ_RC_MOE);
	int dph = x->disp8 ? CVC_EP_DISPATCH_FP8 : CVC_EP_DISPATCH_16;

	lc->ep_df_s = ep_xfer(k, x, dph, fw);
	lc->ep_cf_s = ep_xfer(k, x, CVC_EP_COMBINE, fw);
	lc->ep_db_s = ep_xfer(k, x, dph, n->cb);
	lc->ep_cb_s = ep_xfer(k, x, CVC_EP_COMBINE, n->cb);
	lc->ep_rc_s = n->full || (x->rcm & PROJ_RC_MOE) ? lc->ep_df_s + lc->ep_cf_s : 0;
	lc->ep_fwd_s = lc->ep_df_s + lc->ep_cf_s;
	lc->ep_bwd_s = lc->ep_db_s + lc->ep_cb_s + lc->ep_rc_s;
}
