/*
 * stepops.c - what a step runs once per stage rather than per layer: the
 * parameters a pipeline stage holds, the ZeRO/FSDP shard group, and the
 * step-level operators (ZeRO-3 gathers and scatters, pipeline transfers,
 * the data-parallel gradient sync in buckets, the optimizer, fp8 weight
 * casts), listed or priced like a layer's (project.c).
 */
#include <math.h>
#include <string.h>

#include "cvc/cvc_model.h"
#include "proj_internal.h"

void proj_params_of(const cvc_proj_scenario *sc, const struct proj_shape *x, double L,
		    double Ld, struct proj_params *P)
{
	double t = sc->tp, e = sc->ep, common = 4 * x->h + x->rq + x->rkv;
	double ffw_d = (x->swiglu ? 3 : 2) * x->h * sc->ffn;
	double nd = sc->layers - proj_main_layers(sc, 0, sc->layers);

	P->p_dense = x->attw_t + (x->moe ? x->h * x->E + x->ffs : x->ffw) / t + common;
	P->p_exp = x->moe ? x->E / e * x->ffw / t : 0;
	P->p_layer = P->p_dense + P->p_exp;
	P->p_layer_d = x->attw_t + ffw_d / t + common;
	P->L = L;
	P->Ld = Ld;
	/* one pipeline stage holds both vocabulary matrices when there is
	 * one stage and they are not tied (pp > 1: the last stage keeps the
	 * output layer, or the tied copy Megatron-Core keeps there), and the
	 * last stage does when multi-token prediction embeds there too */
	P->p_vocab = x->V * x->h / t *
		     ((sc->pp == 1 || sc->mtp_layers > 0) && !sc->tie_embeddings ? 2 : 1);
	/* multi-token prediction: each module's 2h -> h projection (column
	 * parallel) and two norms; its layer is counted in L */
	P->p_mtp = sc->mtp_layers * (2 * x->h * x->h / t + 2 * x->h);
	P->p_stage = L * P->p_layer + P->p_vocab;
	P->p_total = (sc->layers - nd) * (x->attw + x->ffw * (x->moe ? x->E : 1) +
					  (x->moe ? x->h * x->E + x->ffs : 0) + common) +
		     x->V * x->h * (sc->tie_embeddings ? 1 : 2);
	if (Ld > 0)
		P->p_stage += Ld * P->p_layer_d;
	if (nd > 0)
		P->p_total += nd * (x->attw + ffw_d + common);
	if (sc->mtp_layers > 0) {
		P->p_stage += P->p_mtp;
		P->p_total += sc->mtp_layers * (x->attw + x->ffw * (x->moe ? x->E : 1) +
						(x->moe ? x->h * x->E + x->ffs : 0) + common +
						2 * x->h * x->h + 2 * x->h);
	}
	P->wb = sc->dtype == CVC_PROJ_FP32 ? 4 : 2;
	P->gbytes = x->BA;
	P->ob = sc->optimizer == CVC_PROJ_ADAM ? (sc->dtype == CVC_PROJ_FP32 ? 8 : 12)
					       : (sc->dtype == CVC_PROJ_FP32 ? 4 : 8);
}

/* ZeRO/FSDP shard group (hybrid sharding shards inside it and replicates
 * across the dp*cp / group copies); dp*cp when not hybrid. */
double proj_shard_of(const cvc_proj_scenario *sc)
{
	double dc = sc->dp * sc->cp;

	return sc->shard_group > 0 && sc->shard_group < dc ? sc->shard_group : dc;
}

/*
 * The gradient bucket in bytes: the scenario's bucket_mb, or with `auto`
 * (the default) the framework's own.  Megatron-Core's
 * DistributedDataParallelConfig.bucket_size: max(40M, 1M x dp) parameters,
 * "larger DP sizes need larger buckets to ensure collectives do not become
 * latency-bound" (its docstring; the group is dp*cp in Megatron Bridge's
 * get_model), at the gradients' bytes.  It is the first pipeline stage's
 * rule: later stages and later virtual chunks sync in one bucket, off the
 * critical path.  PyTorch DDP: bucket_cap_mb = 25 (MiB).
 */
double proj_bucket_bytes(const cvc_proj_scenario *sc, double gbytes)
{
	if (sc->bucket_mb >= 0)
		return sc->bucket_mb * 1e6;
	if (sc->framework == CVC_PROJ_FW_PYTORCH)
		return 25.0 * 1024 * 1024;
	return fmax(40e6, 1e6 * sc->dp * sc->cp) * gbytes;
}

/* Bucketed collective over bytes: (all buckets, the last bucket alone). */
static void bucketed(struct proj_sink *k, int kind, double bytes, double bucket, double group,
		     double pn, double count, double *total, double *last)
{
	double nfull, rem;

	*total = *last = 0;
	if (bytes <= 0 || group <= 1)
		return;
	if (bucket <= 0 || bucket >= bytes) {
		*total = *last = proj_op_coll(k, kind, CVC_PROJ_COMM_DP, bytes, group, pn, count);
		return;
	}
	nfull = floor(bytes / bucket);
	rem = bytes - nfull * bucket;
	*last = proj_op_coll(k, kind, CVC_PROJ_COMM_DP, bucket, group, pn, count * nfull);
	*total = nfull * *last;
	if (rem > 0) {
		*last = proj_op_coll(k, kind, CVC_PROJ_COMM_DP, rem, group, pn, count);
		*total += *last;
	}
}

void proj_step_ops(struct proj_sink *k, const cvc_proj_scenario *sc, const struct proj_shape *x,
		   const struct proj_params *P, double M, struct proj_step_cost *st)
{
	double L = P->L; /* the stage's layers of the main shape */
	double t = sc->tp, pp = sc->pp, v = sc->vpp, d = sc->dp, c = sc->cp, e = sc->ep;
	double gpn = sc->gpus_per_node, dc = d * c;
	double H = sc->local_sgd_h >= 1 ? sc->local_sgd_h : 1;
	double C = sc->clusters >= 1 ? sc->clusters : 1;

	memset(st, 0, sizeof *st);
	/* ZeRO-3 / FSDP: per layer all-gather of parameters before forward and
	 * backward (again for recompute), reduce-scatter of gradients, inside
	 * the shard group; with hybrid sharding the gradient shards are then
	 * all-reduced across the replicas, once per step */
	if (sc->zero >= 3 && dc > 1) {
		double sh = proj_shard_of(sc), rep = dc / sh;
		double pn = fmin(sh, fmax(1, gpn / t));
		double nag_b = sc->recompute == CVC_PROJ_RECOMP_FULL ? 2 : 1;

		if (sh > 1) {
			st->fsdp_ag = proj_op_coll(k, CVC_MODEL_ALLGATHER, CVC_PROJ_COMM_FSDP,
						   P->p_layer * P->wb, sh, pn, M * L * (1 + nag_b));
			st->fsdp_rs = proj_op_coll(k, CVC_MODEL_REDUCESCATTER, CVC_PROJ_COMM_DP,
						   P->p_layer * P->gbytes, sh, pn, M * L);
		}
		if (sh > 1 && P->Ld > 0) { /* the dense layers' own */
			st->fsdp_ag_d = proj_op_coll(k, CVC_MODEL_ALLGATHER, CVC_PROJ_COMM_FSDP,
						     P->p_layer_d * P->wb, sh, pn,
						     M * P->Ld * (1 + nag_b));
			st->fsdp_rs_d = proj_op_coll(k, CVC_MODEL_REDUCESCATTER, CVC_PROJ_COMM_DP,
						     P->p_layer_d * P->gbytes, sh, pn, M * P->Ld);
		}
		if (rep > 1)
			bucketed(k, CVC_MODEL_ALLREDUCE, P->p_stage / sh * P->gbytes,
				 proj_bucket_bytes(sc, P->gbytes), rep,
				 fmin(rep, fmax(1, gpn / (t * sh))), 1, &st->hsdp_tot, &st->hsdp_last);
	}
	/* pipeline: each micro-batch's activations forward and gradients back
	 * across each of the v chunk boundaries */
	if (pp > 1) {
		double msg = x->T * x->h * x->BA / (x->sp ? t : 1);
		double pn = t * c * d < gpn ? 2 : 1;

		st->pp_one = proj_op_coll(k, CVC_MODEL_SENDRECV, CVC_PROJ_COMM_PP, msg, 2, pn, 2 * v * M);
	}
	/* data parallel gradient sync (ZeRO 0-2), every H steps with local SGD
	 * in one cluster */
	if (sc->zero < 3 && dc > 1) {
		double dcl = dc / C; /* replicas inside one cluster */
		double pn = fmin(dcl, fmax(1, gpn / t));
		double pn_e = fmin(dcl / e, fmax(1, gpn / (t * e)));
		double bucket = proj_bucket_bytes(sc, P->gbytes);
		double count = 1 / (C > 1 ? 1 : H);
		double sh = sc->zero >= 1 ? fmin(proj_shard_of(sc), dcl) : dcl, rep = dcl / sh;
		double pn_s = fmin(sh, fmax(1, gpn / t));
		double tt, ll;

		if (dcl > 1) {
			int kind = sc->zero >= 1 && sh > 1 ? CVC_MODEL_REDUCESCATTER
							   : CVC_MODEL_ALLREDUCE;
			double grp = sc->zero >= 1 && sh > 1 ? sh : dcl;

			/* ZeRO 1-2 reduce-scatter in the shard group (all of dp*cp
			 * unless sharded hybrid), else all-reduce */
			bucketed(k, kind, (P->p_stage - L * P->p_exp) * P->gbytes, bucket, grp,
				 sc->zero >= 1 && sh > 1 ? pn_s : pn, count, &tt, &ll);
			st->dp_tot += tt;
			st->dp_last = ll;
			if (sc->zero >= 1 && sh > 1 && rep > 1) {
				/* the shards' all-reduce across replicas */
				bucketed(k, CVC_MODEL_ALLREDUCE, P->p_stage / sh * P->gbytes, bucket,
					 rep, fmin(rep, fmax(1, gpn / (t * sh))), count, &tt, &ll);
				st->dp_tot += tt;
				st->dp_last = ll;
			}
			if (P->p_exp > 0 && dcl / e > 1) {
				bucketed(k, kind, L * P->p_exp * P->gbytes, bucket, dcl / e, pn_e,
					 count, &tt, &ll);
				st->dp_tot += tt;
			}
			if (sc->zero >= 1 && sh > 1) /* updated parameter shards gathered back */
				st->dp_ag = proj_op_coll(k, CVC_MODEL_ALLGATHER, CVC_PROJ_COMM_DP,
							 P->p_stage * P->wb, sh, pn_s, count);
		}
	}
	/* optimizer: weights, gradients and states read and written */
	{
		double shard = sc->zero >= 1 ? proj_shard_of(sc) : 1;

		st->opt = proj_op_mem(k, CVC_MODEL_MEM_OPTIMIZER,
				      P->p_stage / shard * (sc->optimizer == CVC_PROJ_ADAM ? 30 : 20), 1,
				      CVC_PROJ_STAGE_ALL);
	}
	/* fp8: Transformer Engine casts every weight of the transformer layers
	 * to fp8 (and its transpose) once per step, cached across micro-batches
	 * (proj_fp8_cast_bytes() per element) */
	if (x->fp8)
		st->wcast = proj_op_mem(k, CVC_MODEL_MEM_ELEMENTWISE,
					proj_fp8_cast_bytes(x) * (P->p_stage - P->p_vocab), 1,
					CVC_PROJ_STAGE_ALL);
}
