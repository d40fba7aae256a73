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

/* MoE FFN: router (bf16), then each rank's E/ep experts as one grouped
 * GEMM over the T*k routed tokens it receives (balanced routing: T*k/(E/ep)
 * per expert), expert tensor parallel etp; and the token permutation
 * around them, added to *mf / *mb. */
void proj_moe_ffn_ops(struct proj_sink *k, const struct proj_shape *x,
			const struct proj_layer_runs *n, struct proj_layer_gemms *G, double *mf, double *mb)
{
	double cf = proj_fwd_runs(x, n, PROJ_RC_MOE), cb = n->cb, perm;
	double groups = fmax(1, x->E / x->e);
	double ffn_l = x->f / x->et;
	double up_f, up_d, up_w, dn_f, dn_d, dn_w, r_f, r_d, r_w;

	r_f = proj_gemm3(k, x->lowp ? CVC_PROJ_BF16 : x->dtype, x->T, x->E, x->h, cf, cb, 0, 1, 1, 1,
		    &r_d, &r_w);
	up_f = proj_op_gemm_dt(k, k->dtype, x->Tm / groups, (x->gated ? 2 : 1) * ffn_l, x->h,
			       groups, cf, 0);
	up_d = proj_op_gemm_dt(k, k->dtype, x->Tm / groups, x->h, (x->gated ? 2 : 1) * ffn_l,
			       groups, cb, 0);
	up_w = proj_op_gemm_dt(k, k->dtype, x->h, (x->gated ? 2 : 1) * ffn_l, x->Tm / groups,
			       groups, cb, 0);
	dn_f = proj_op_gemm_dt(k, k->dtype, x->Tm / groups, x->h, ffn_l, groups, cf, 0);
	dn_d = proj_op_gemm_dt(k, k->dtype, x->Tm / groups, ffn_l, x->h, groups, cb, 0);
	dn_w = proj_op_gemm_dt(k, k->dtype, ffn_l, x->h, x->Tm / groups, groups, cb, 0);
	G->up_f = up_f + r_f, G->up_d = up_d + r_d, G->up_w = up_w + r_w;
	G->dn_f = dn_f, G->dn_d = dn_d, G->dn_w = dn_w;
	if (x->fs > 0) {
		/* shared experts (Megatron-Core's SharedExpertMLP): one dense
		 * FFN of their total width over every token, tensor parallel
		 * as the dense FFN is; not overlapped with the all-to-all
		 * (--moe-shared-expert-overlap is off by default) */
		struct proj_layer_gemms s;

		proj_dense_ffn_gemms(k, x, x->fs, proj_fwd_runs(x, n, PROJ_RC_MOE | PROJ_RC_SHARED), cb, 1,
				1, 1, &s);
		G->up_f += s.up_f, G->up_d += s.up_d, G->up_w += s.up_w;
		G->dn_f += s.dn_f, G->dn_d += s.dn_d, G->dn_w += s.dn_w;
		if (x->rcm & (PROJ_RC_MOE | PROJ_RC_SHARED))
			G->rc_gemm += s.up_f + s.dn_f;
	}
	/* token permutation before the experts and its inverse after, each
	 * way (Megatron-Core's permute / unpermute: read and write the routed
	 * copies of the tokens) */
	perm = 2 * proj_op_mem(k, CVC_MODEL_MEM_GATHER, 2 * x->BA * x->Tm * x->h, 2 * cf, 0);
	*mf += perm;
	*mb += 2 * proj_op_mem(k, CVC_MODEL_MEM_GATHER, 2 * x->BA * x->Tm * x->h, 2 * cb, 0);
	if (x->rcm & PROJ_RC_MOE) { /* the whole MoE layer forward again */
		G->rc_gemm += r_f + up_f + dn_f;
		G->rc_mem += perm;
	}
}

/*
 * Expected nodes a token's k experts land on, of N nodes (at most M with
 * node-limited routing), with the experts drawn evenly among them: the
 * balanced routing the load-balancing losses aim at.
 */
static double nodes_reached(double k, double N, double M)
{
	double n = M >= 1 && M < N ? M : N;

	return n * (1 - pow(1 - 1 / n, k));
}

/*
 * MoE: dispatch + combine all-to-all each way, over the EP group: inside
 * the NVLink domain while ep x etp ranks fit in it.  Across nodes the flex
 * dispatcher (DeepEP, HybridEP) sends a token once to each node holding
 * one of its experts and forwards it over NVLink there (DeepSeek-AI,
 * "DeepSeek-V3 Technical Report", arXiv 2412.19437, sec. 3.2.2): the
 * network carries the distinct remote nodes' copies instead of k, the
 * NVLink domain every copy, the two pipelined (the slower one counts).
 * With ep_dispatch_fp8 the forward dispatch moves 1 B per element plus a
 * 4 B scale per 128 (the report's sec. 3.3), the combine stays 16-bit.
 */
static double ep_one_way(struct proj_sink *k, const struct proj_shape *x, double bytes,
			 double count)
{
	double pn = fmin(x->e, fmax(1, x->gpn / (x->et * x->c))), N = ceil(x->e / pn);
	double t = proj_op_coll(k, CVC_MODEL_ALLTOALL, CVC_PROJ_COMM_EP,
			       x->flex && N > 1 ? bytes * nodes_reached(x->k, N, x->gtopk) / x->k
						: bytes, x->e, pn, count);

	if (x->flex && N > 1 && pn > 1) /* the forward inside each node */
		t = fmax(t, proj_op_coll(k, CVC_MODEL_ALLTOALL, CVC_PROJ_COMM_EP, bytes, pn, pn,
					 count));
	return t;
}

void proj_ep_comm_ops(struct proj_sink *k, const struct proj_shape *x,
			const struct proj_layer_runs *n, struct proj_layer_cost *lc)
{
	double bytes = x->Tm * x->h * x->BA;
	/* every forward pass dispatches once: again under full recompute, and
	 * when selective recompute names the moe module */
	double rc = x->rcm & PROJ_RC_MOE ? 2 * n->cb : 0, fwds = proj_fwd_runs(x, n, PROJ_RC_MOE);
	double one = ep_one_way(k, x, bytes, x->disp8 ? n->per + rc - fwds : n->per + rc);
	double disp = x->disp8 ? ep_one_way(k, x, bytes / x->BA * (1 + 4.0 / 128), fwds) : one;

	lc->ep_fwd_s = disp + one;
	lc->ep_bwd_s = x->disp8 ? 2 * one + (n->full ? disp + one : 0)
				: 2 * one * (n->full ? 2 : 1);
	if (rc > 0)
		lc->ep_bwd_s += disp + one;
}

