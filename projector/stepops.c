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

void proj_layer_params(const struct proj_shape *x, double *all, double *gpu, double *exp)
{
	double t = x->t, h = x->h, mix_all = 0, mix_gpu = 0, ffn_all = 0, ffn_gpu = 0;
	double nsub = (x->mixer != PROJ_MIX_NONE) + !x->noffn;
	/* the norms (two per attention + FFN layer), MLA's latent norms */
	double common = 2 * h * nsub + (x->mixer <= PROJ_MIX_LOCAL ? x->rq + x->rkv : 0);

	*exp = 0;
	if (x->mixer == PROJ_MIX_ATTN || x->mixer == PROJ_MIX_LOCAL) {
		mix_all = x->attw;
		mix_gpu = x->attw_t;
	} else if (x->mixer == PROJ_MIX_MAMBA) {
		/* in_proj (z, x, B, C, dt), conv1d with its bias, A, D, dt_bias,
		 * the gated norm and out_proj, all split by tp (MambaMixer) */
		mix_all = h * (2 * x->di + 2 * x->mg * x->mn + x->mh) + x->cdim * (x->mk + 1) +
			  3 * x->mh + x->di + x->di * h;
		mix_gpu = mix_all / t;
	}
	if (!x->noffn && x->moe) {
		/* router and shared experts split by tp; the routed experts by ep */
		ffn_all = x->ffw * x->E + h * x->E + x->ffs + x->lw;
		/* LatentMoE's two projections: whole on every tp rank */
		ffn_gpu = (h * x->E + x->ffs) / t + x->lw;
		*exp = x->E / x->e * x->ffw / x->et; /* an expert splits by etp */
	} else if (!x->noffn) {
		ffn_all = x->ffw;
		ffn_gpu = x->ffw / t;
	}
	*all = mix_all + ffn_all + common;
	*gpu = mix_gpu + ffn_gpu + common + *exp;
}

void proj_params_kinds(const cvc_proj_scenario *sc, const struct proj_shape *x,
		       const double n[PROJ_NKIND], struct proj_params *P)
{
	double N[PROJ_NKIND];

	proj_kinds_in(sc, 0, sc->layers, N);
	proj_params_kinds_n(sc, x, n, N, P);
}

void proj_params_kinds_n(const cvc_proj_scenario *sc, const struct proj_shape *x,
			 const double n[PROJ_NKIND], const double N[PROJ_NKIND],
			 struct proj_params *P)
{
	double t = sc->tp, all, gpu, exp;
	int main = proj_main_kind(sc);

	memset(P, 0, sizeof *P);
	/* one pipeline stage holds both vocabulary matrices when there is
	 * one stage and they are not tied (pp > 1: the last stage keeps the
	 * output layer, or the tied copy Megatron-Core keeps there), and the
	 * last stage does when multi-token prediction embeds there too */
	P->p_vocab = x->V * x->h / t *
		     ((sc->pp == 1 || sc->mtp_layers > 0) && !sc->tie_embeddings ? 2 : 1);
	/* multi-token prediction: each module's 2h -> h projection (column
	 * parallel) and two norms; its layer is counted in the stage's */
	P->p_mtp = sc->mtp_layers * (2 * x->h * x->h / t + 2 * x->h);
	/* the main kind first (a uniform model's only one), then the others */
	for (int i = -1; i < PROJ_NKIND; i++) {
		int k = i < 0 ? main : i;
		struct proj_shape xk;

		if (i == main || (i >= 0 && !(n[k] > 0) && !(N[k] > 0)))
			continue;
		proj_shape_kind(sc, x, k, &xk);
		proj_layer_params(&xk, &all, &gpu, &exp);
		P->n[k] = n[k];
		P->p_kind[k] = gpu;
		P->p_stage += n[k] * gpu;
		P->p_total += N[k] * all;
		if (PROJ_KIND_FFN(k) == PROJ_FK_MOE) {
			if (xk.moe && xk.E > xk.k)
				P->p_idle += N[k] * (xk.E - xk.k) * xk.ffw;
			P->L_moe += n[k];
			P->p_exp = exp;
		}
		if (k == main) {
			P->p_layer = gpu;
			P->p_dense = gpu - exp;
			P->L = n[k];
			P->p_stage += P->p_vocab;
			P->p_total += x->V * x->h * (sc->tie_embeddings ? 1 : 2);
			/* the prediction modules' layers and their own */
			P->p_mtp_all = sc->mtp_layers * (all + 2 * x->h * x->h + 2 * x->h);
		} else if (k == PROJ_KIND(PROJ_MIX_ATTN, PROJ_FK_DENSE)) {
			P->p_layer_d = gpu;
			P->Ld = n[k];
		}
	}
	P->p_stage += P->p_mtp;
	P->p_total += P->p_mtp_all;
	P->wb = sc->dtype == CVC_PROJ_FP32 ? 4 : 2;
	P->wag = P->wb;
	/* per-tensor scaled fp8 weights are gathered as they are (each rank
	 * transposes its own copy); MXFP8's are gathered in 16 bits into the
	 * gradient buffer and quantized there, as the column-wise blocks
	 * cannot be made from the row-wise ones (Megatron-Core's
	 * reuse_grad_buf_for_mxfp8_param_ag, param_and_grad_buffer.py) */
	if (proj_fp8_params(sc) && sc->fp8_recipe != CVC_PROJ_FP8_MXFP8) {
		struct proj_lowp lp;
		double share = proj_lowp_share(sc);

		proj_lowp_cast(x, &lp); /* its weight in one layout: wcache / 2 */
		P->wag = share * lp.wcache / 2 + (1 - share) * P->wb;
	}
	P->gbytes = sc->grad_reduce_fp32 > 0 ? 4 : x->BA;
}

void proj_params_of(const cvc_proj_scenario *sc, const struct proj_shape *x, double L,
		    double Ld, struct proj_params *P)
{
	double n[PROJ_NKIND] = {0};

	n[proj_main_kind(sc)] = L;
	n[PROJ_KIND(PROJ_MIX_ATTN, PROJ_FK_DENSE)] += Ld;
	proj_params_kinds(sc, x, n, P);
}

/* ZeRO/FSDP shard group (hybrid sharding shards inside it and replicates
 * across the dp*cp / group copies); dp*cp when not hybrid. */
double proj_shard_of(const cvc_proj_scenario *sc)
{
	double dc = sc->dp * sc->cp;

	return sc->shard_group > 0 && sc->shard_group < dc ? sc->shard_group : dc;
}

/*
 * The expert data-parallel group of a data-parallel group of `group` ranks
 * (dp*cp, one cluster's, or the ZeRO shard group), over which expert
 * parameters' gradients are reduced and their optimizer states sharded:
 * Megatron-Core carves ep x etp expert ranks out of tp x dp x cp and keeps
 * the expert parameters' gradient buffers apart, on that group
 * (DistributedDataParallel's expert_parallel_buffers on intra_expt_dp_group,
 * NVIDIA/Megatron-LM megatron/core/distributed/distributed_data_parallel.py
 * @00119989), so a layout with ep < dp*cp shards them over
 * group*tp / (ep*etp), not group.
 */
double proj_expert_group(const cvc_proj_scenario *sc, double group)
{
	double t = sc->tp >= 1 ? sc->tp : 1, e = sc->ep >= 1 ? sc->ep : 1;
	double et = sc->etp >= 1 ? sc->etp : t;

	return fmax(1, group * t / (e * et));
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
	if (sc->framework != CVC_PROJ_FW_MEGATRON)
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
	double t = sc->tp, pp = sc->pp, v = sc->vpp, d = sc->dp, c = sc->cp, e = sc->ep;
	double gpn = proj_domain(sc), dc = d * c; /* collectives: the NVLink domain */
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

		/* each kind of layer the stage holds at its own size */
		for (int i = -1; sh > 1 && i < PROJ_NKIND; i++) {
			int kd = i < 0 ? proj_main_kind(sc) : i;

			if (i == proj_main_kind(sc) || (i >= 0 && !(P->n[kd] > 0)))
				continue;
			st->fsdp_ag[kd] = proj_op_coll(k, CVC_MODEL_ALLGATHER, CVC_PROJ_COMM_FSDP,
						       P->p_kind[kd] * P->wag, sh, pn,
						       M * P->n[kd] * (1 + nag_b));
			st->fsdp_rs[kd] = proj_op_coll(k, CVC_MODEL_REDUCESCATTER, CVC_PROJ_COMM_DP,
						       P->p_kind[kd] * P->gbytes, sh, pn,
						       M * P->n[kd]);
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
		double et = sc->etp >= 1 ? sc->etp : t, edp = proj_expert_group(sc, dcl);
		double pn_e = fmin(edp, fmax(1, gpn / (et * e)));
		double p_e = P->L_moe * P->p_exp, p_d = P->p_stage - p_e;
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
			bucketed(k, kind, p_d * P->gbytes, bucket, grp,
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
			/* the experts' own buffers, on the expert data-parallel group */
			if (p_e > 0 && edp > 1) {
				bucketed(k, kind, p_e * P->gbytes, bucket, edp, pn_e, count, &tt, &ll);
				st->dp_tot += tt;
			}
			if (sc->zero >= 1 && sh > 1) { /* updated parameter shards gathered back */
				/* the embedding and output layer in 16 bits */
				double ag = (p_d - P->p_vocab) * P->wag + P->p_vocab * P->wb;

				st->dp_ag = proj_op_coll(k, CVC_MODEL_ALLGATHER, CVC_PROJ_COMM_DP,
							 ag, sh, pn_s, count);
				if (p_e > 0 && edp > 1)
					st->dp_ag += proj_op_coll(k, CVC_MODEL_ALLGATHER,
								  CVC_PROJ_COMM_DP, p_e * P->wag,
								  proj_expert_group(sc, sh), pn_e, count);
			}
		}
	}
	/* optimizer: weights, gradients and states read and written */
	{
		double shard = sc->zero >= 1 ? proj_shard_of(sc) : 1;
		double shard_e = sc->zero >= 1 ? proj_expert_group(sc, shard) : 1;
		double p_e = P->L_moe * P->p_exp;
		/* the weights and gradients (Adam 14 B, SGD 12), and the moments
		 * read and written */
		double bytes = (sc->optimizer == CVC_PROJ_ADAM ? 14 : 12) +
			       2 * proj_moments_bytes(sc);

		st->opt = proj_op_mem(k, CVC_MODEL_MEM_OPTIMIZER,
				      ((P->p_stage - p_e) / shard + p_e / shard_e) * bytes, 1,
				      CVC_PROJ_STAGE_ALL);
	}
	/* low precision: Transformer Engine casts every weight of the
	 * transformer layers (both layouts) once per step, cached across
	 * micro-batches; per-tensor scales read it once more (lowprec.c) */
	if (x->lowp && proj_lowp_share(sc) > 0) {
		struct proj_lowp lp;
		double w = (P->p_stage - P->p_vocab) * proj_lowp_share(sc);

		proj_lowp_cast(x, &lp);
		st->wcast = proj_op_mem(k, CVC_MODEL_MEM_ELEMENTWISE, lp.wcast * w, 1,
					CVC_PROJ_STAGE_ALL);
		if (lp.wamax > 0)
			st->wcast += proj_op_mem(k, CVC_MODEL_MEM_REDUCTION, lp.wamax * w, 1,
						 CVC_PROJ_STAGE_ALL);
	}
}
