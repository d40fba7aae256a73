/*
 * memory.c - memory per GPU of a scenario: weights, gradients and
 * optimizer states, the activations kept for backward, and buffers
 * (docs/SCENARIOS.md "Memory").
 */
#include <math.h>

#include "ctx.h"
#include "proj_internal.h"

/* Bytes a layer keeps into *a, or, its module named in x->ofm (fine-
 * grained offloading: that module's input), into *o. */
static void keep(double *a, double *o, double bytes, int module, const struct proj_shape *x)
{
	if (module && (x->ofm & module))
		*o += bytes;
	else
		*a += bytes;
}

/*
 * Activation bytes one layer keeps for its backward, per token of a
 * micro-batch on this rank (docs/SCENARIOS.md "Memory"), by tensor: the
 * inputs of the two norms, of the four GEMMs and of the activation, the
 * attention's saved state, the dropout masks.  With the 2022 GPT layer
 * (LayerNorm, GELU, dropout, unfused attention, no tp) this is Korthikanti
 * et al. 2022's 34 h + 5 a s bytes; sequence parallelism shards what the
 * norms and dropout touch by tp; Transformer Engine's fp8 and fp4 recipes
 * keep the GEMM inputs quantized (lowprec.c).  What fine-grained
 * offloading (offload_modules) sends to the host is counted into *o
 * instead: each named module's input (Megatron-Core's user guide, "Fine-
 * Grained Activation Offloading": "Each module offloads its input
 * activation to CPU during forward and reloads it before backward"); the
 * attention modules' on attention layers, the expert modules' on MoE
 * layers; fused_group_mlp everything the routed experts' MLP keeps.
 */
static double act_per_token(const cvc_proj_scenario *sc, const struct proj_shape *x, double *o)
{
	double t = x->t, sh = x->sp ? t : 1, B = x->BA, gin = B;
	double dq = x->a * x->dh / t, dkv = fmax(1, x->g / t) * x->dh;
	/* the rows the experts run per token: the rank's copies, gathered
	 * over the expert tensor-parallel group (proj_shape_of()) */
	double f_loc = x->f / (x->moe ? x->et : t), rows = x->moe ? x->Tm / x->T : 1;
	double drop = sc->dropout ? 1 : 0, a = 0;
	double nsub = (x->mixer != PROJ_MIX_NONE) + !x->noffn;
	int attn = x->mixer == PROJ_MIX_ATTN || x->mixer == PROJ_MIX_LOCAL;
	int fc1 = x->moe ? PROJ_OF_FC1 | PROJ_OF_FUSED : 0;
	int fact = x->moe ? PROJ_OF_ACT | PROJ_OF_FUSED : 0;
	/* selective recompute's modules (Megatron-Core's --recompute-modules):
	 * what they recompute is not kept; mlp and moe keep their input */
	int rc = x->rcm, norm = rc & PROJ_RC_NORM, up = x->mla && (rc & PROJ_RC_MLA_UP);
	int ffn = !x->noffn && (rc & (x->moe ? PROJ_RC_MOE : PROJ_RC_MLP));
	int act = ffn || (x->moe && (rc & PROJ_RC_MOE_ACT));
	int shared = rc & (PROJ_RC_MOE | PROJ_RC_SHARED);

	*o = 0;
	if (x->lowp) { /* GEMM inputs kept quantized, with their scales */
		struct proj_lowp c;

		proj_lowp_cast(x, &c);
		gin = c.saved;
	}

	/* the norm inputs, one per block */
	if (x->mixer != PROJ_MIX_NONE)
		keep(&a, o, B * x->h / sh, attn ? PROJ_OF_ATTN_NORM : 0, x);
	if (!x->noffn)
		keep(&a, o, B * x->h / sh, PROJ_OF_MLP_NORM, x);
	if (x->mixer == PROJ_MIX_MAMBA) {
		/* the Mamba-2 mixer (MambaMixer; mamba_chunk_scan_combined keeps
		 * x, dt, dA_cumsum, B, C, z and its output, not the chunk
		 * states): in_proj's input and output, conv1d's output, dt and
		 * its cumulative sum (fp32), the scan's output and out_proj's
		 * input (the gated norm's output) */
		if (!norm)
			a += gin * x->h / sh;
		a += B * (2 * x->di + 2 * x->mg * x->mn + x->mh) / t + B * x->cdim / t;
		a += 2 * 4 * x->mh / t + B * x->di / t + gin * x->di / t;
	} else if (x->mixer != PROJ_MIX_NONE) {
		if (!norm) /* QKV input (norm output) */
			keep(&a, o, gin * x->h / sh, PROJ_OF_QKV, x);
		if (x->unfused && (sc->recompute == CVC_PROJ_RECOMP_NONE ||
				   (sc->recompute == CVC_PROJ_RECOMP_SELECTIVE && !(rc & PROJ_RC_CORE)))) {
			double hl = x->a / t;

			keep(&a, o, B * (dq + 2 * dkv), PROJ_OF_CORE, x); /* Q, K, V */
			a += B * hl * x->s;               /* softmax output */
			a += drop * 3 * hl * x->s;        /* its dropout mask and output */
		} else if (x->unfused) {
			/* selective: the core is recomputed from Q, K, V */
			keep(&a, o, B * (dq + 2 * dkv), PROJ_OF_CORE, x);
		} else if (x->mla) {
			/* MLA: the latents (whole on every tp rank) and the up
			 * projections' inputs, then Q, K, V per local head (not with
			 * mla_up_proj: recomputed from the latents) */
			a += B * (x->rq + x->rkv + x->dr) + gin * (x->rq + x->rkv);
			if (!up)
				keep(&a, o, B * x->a / t * (2 * x->dqk + x->dv), PROJ_OF_CORE, x);
			a += 4 * x->a / t;                /* the fp32 log-sum-exp */
		} else {
			keep(&a, o, B * (dq + 2 * dkv), PROJ_OF_CORE, x); /* flash: Q, K, V */
			a += 4 * x->a / t;                /* its fp32 log-sum-exp */
		}
		/* attention output = projection input */
		keep(&a, o, gin * x->a * x->dv / t, PROJ_OF_PROJ, x);
	}
	a += drop * nsub * x->h / sh;         /* the residual dropout masks */
	if (x->noffn)
		return a;
	if (ffn) {
		/* mlp / moe: the FFN's input only (the norm's output unless
		 * layernorm recomputes that too) */
		a += norm ? 0 : B * x->h / sh;
		return a + (!shared ? (B * (x->gated ? 2 : 1) + gin) * x->fs / t : 0);
	}
	if (!(norm && !x->moe)) /* FC1 input (norm output, routed rows) */
		keep(&a, o, gin * x->hl * (x->moe ? rows : 1 / sh), fc1, x);
	if (x->lw > 0) /* LatentMoE: the projections' inputs (norm output, combined rows) */
		a += (gin * x->h + gin * x->hl) / sh;
	/* activation input (FC1 output) */
	keep(&a, o, B * rows * (x->gated ? 2 : 1) * f_loc, fact, x);
	if (!act) /* FC2 input (activation output) */
		keep(&a, o, gin * rows * f_loc, x->moe ? PROJ_OF_FUSED : 0, x);
	/* shared experts: their FC1 input is the routed experts' (kept once) */
	if (!shared)
		a += (B * (x->gated ? 2 : 1) + gin) * x->fs / t;
	if (x->moe)
		a += 4 * x->E;                    /* router logits (fp32) */
	return a;
}

/* Bytes a parameter's optimizer moments hold: Adam's two or SGD's
 * momentum, each fp32 or bf16 (optimizer_moments). */
double proj_moments_bytes(const cvc_proj_scenario *sc)
{
	return (sc->optimizer == CVC_PROJ_ADAM ? 2 : 1) * (sc->optimizer_moments ? 2 : 4);
}

/* Bytes a parameter keeps of its weight, gradient and optimizer states,
 * each divided by the shard group sh from the ZeRO stage that shards it. */
static double state_bytes(const cvc_proj_scenario *sc, double wb, double gb, double ob,
			  double sh)
{
	return wb / (sc->zero >= 3 ? sh : 1) + gb / (sc->zero >= 2 ? sh : 1) +
	       ob / (sc->zero >= 1 ? sh : 1);
}

double proj_offload_mb_bytes(const cvc_proj_scenario *sc, const struct proj_shape *x,
			     const double n[PROJ_NKIND])
{
	double r = 0;

	if (!x->ofm)
		return 0;
	for (int k = 0; k < PROJ_NKIND; k++) {
		struct proj_shape xk;
		double o;

		if (!(n[k] > 0))
			continue;
		proj_shape_kind(sc, x, k, &xk);
		act_per_token(sc, &xk, &o);
		r += n[k] * o * x->T;
	}
	return r;
}

/*
 * Memory per GPU on the stage that holds the most: weights, gradients and
 * optimizer states (by framework, dtype and ZeRO stage), activations of
 * the micro-batches in flight, and buffers.  Bytes per parameter: bf16
 * weights; Megatron-Core accumulates gradients in fp32 (its DDP buffer;
 * 16-bit with grad_reduce_fp32 off, the optimizer then copying its shard's
 * to fp32) and Adam keeps an fp32 master copy and two moments (4 + 4 + 4);
 * PyTorch mixed precision (FSDP, DDP) keeps fp32 parameters as the
 * master, fp32 gradients and two moments (4 + 4 + 8) and casts to bf16 per
 * layer; Transformer Engine's fp8 caches an fp8 weight and its transpose
 * (2; fp4 and block scales: lowprec.c).  Buffers: the last micro-batch's fp32 logits (4 B each, the
 * gradient written into them).  Activations: act_per_token() x tokens x layers x micro-batches in
 * flight on the stage (1F1B: pp - i on stage i; interleaved:
 * x (1 + (pp-1)/(pp vpp)) on the first, Narayanan et al. 2021), less those
 * of the layers offloaded to the host (cpu_offload_layers) or of the
 * modules whose inputs go there (offload_modules): mem_offload_gb.
 */
void proj_mem_of(const cvc_proj_scenario *sc, const struct proj_shape *x,
		 const struct proj_params *P, const struct proj_pricer *p, double m,
		 const struct proj_plan *pl, cvc_proj_result *r)
{
	double t = sc->tp, pp = sc->pp, v = sc->vpp >= 1 ? sc->vpp : 1, sh = proj_shard_of(sc);
	double fp32 = sc->dtype == CVC_PROJ_FP32, p_e = P->L_moe * P->p_exp;
	int torch = sc->framework != CVC_PROJ_FW_MEGATRON;
	double wb, gb, ob, act = 0, params, buf, in3 = 0, p_unit = 0, act_max = 0, off = 0;
	double mom = proj_moments_bytes(sc), off_max = 0;
	double act_k[PROJ_NKIND] = {0}, off_k[PROJ_NKIND] = {0};
	const int *ord = pl->ord, nord = pl->nord;

	if (torch) { /* the fp32 parameter is the master copy */
		wb = 4, gb = 4, ob = mom;
	} else {
		/* 16-bit gradients (grad_reduce_fp32 0): the optimizer keeps an
		 * fp32 copy of its shard's, so 2 + 16/d where fp32 ones take
		 * 6 + 12/d (the Megatron Core guide's table, "float16 param,
		 * float16 grads") */
		int g16 = !fp32 && !(sc->grad_reduce_fp32 > 0);

		wb = fp32 ? 4 : 2, gb = g16 ? 2 : 4;
		ob = (fp32 ? 0 : 4) + mom + (g16 ? 4 : 0); /* the fp32 master, unless the weights are */
	}
	/* per token of a micro-batch, one layer of each kind the model has */
	for (int i = 0; i < nord; i++) {
		struct proj_shape xk;

		proj_shape_kind(sc, x, ord[i], &xk);
		act_k[ord[i]] = act_per_token(sc, &xk, &off_k[ord[i]]) * x->T;
		off_k[ord[i]] *= x->T;
		act_max = fmax(act_max, act_k[ord[i]] + off_k[ord[i]]);
		off_max = fmax(off_max, off_k[ord[i]]);
		p_unit = fmax(p_unit, P->p_kind[ord[i]]);
	}
	if (x->d3) { /* 3D tensor parallelism: its shards (tp3d.c); dense models only */
		proj_act3d(sc, x, &in3, &act_max);
		act_k[ord[0]] = act_max;
	}
	/* the stage holding the most activations, its extra on the first */
	for (int i = 0, n = 1; i < n; i++) {
		double stage = proj_stage_pick(sc, i, &n), Li = 0, nk[PROJ_NKIND];
		/* DualPipe: pp + 1 on every rank (DeepSeek-V3 report, Table 2) */
		double inflight = sc->pp_schedule == CVC_PROJ_PP_DUALPIPE
					  ? fmin(m, pp + 1)
					  : fmin(m, pp - stage) * (v > 1 && stage == 0
								   ? 1 + (pp - 1) / (pp * v) : 1);
		double a = 0, o = 0;

		proj_plan_stage(sc, pl, stage, nk);
		for (int j = 0; j < nord; j++)
			Li += nk[ord[j]];
		if (sc->recompute == CVC_PROJ_RECOMP_FULL && x->d3)
			/* the rebuilt layer's input is its checkpoint (below) */
			a = Li * inflight * in3 + fmax(0, act_max - in3);
		else if (sc->recompute == CVC_PROJ_RECOMP_FULL) {
			/* each layer keeps its input; one layer is re-materialised,
			 * from that input: its first norm's input is the checkpoint
			 * already counted, not a second copy */
			double in = x->BA * x->h / (x->sp ? t : 1) * x->T;

			a = Li * inflight * in + fmax(0, act_max - in);
		}
		else {
			for (int j = 0; j < nord; j++) {
				a += nk[ord[j]] * inflight * act_k[ord[j]];
				o += nk[ord[j]] * inflight * off_k[ord[j]];
			}
			/* fine-grained offloading: on the GPU still, one layer's
			 * tensors being copied out and one layer's reloaded
			 * ahead of its backward */
			if (o > 0)
				a += 2 * off_max;
		}
		/* CPU offloading (pp 1, one micro-batch in flight): the first
		 * layers' activations wait in host memory from their forward to
		 * their backward, at the stage's mean per layer (a hybrid's
		 * first layers are of its mix) */
		if (sc->cpu_offload_layers > 0 && Li > 0) {
			o = a * fmin(sc->cpu_offload_layers, Li) / Li;
			a -= o;
		}
		if (a > act)
			off = o;
		act = fmax(act, a);
	}
	/* expert parameters shard over the expert data-parallel group */
	params = (P->p_stage - p_e) * state_bytes(sc, wb, gb, ob, sh) +
		 p_e * state_bytes(sc, wb, gb, ob, proj_expert_group(sc, sh));
	if (proj_fp8_params(sc)) {
		/* the quantized layers' weights are the fp8 tensors counted
		 * below: no 16-bit copy of them */
		double share = proj_lowp_share(sc), q_e = p_e * share;
		double q_d = (P->p_stage - P->p_vocab) * share - q_e;

		params -= q_d * state_bytes(sc, wb, 0, 0, sh) +
			  q_e * state_bytes(sc, wb, 0, 0, proj_expert_group(sc, sh));
	}
	if (sc->pp_schedule == CVC_PROJ_PP_DUALPIPE)
		params *= 2; /* a chunk of each direction's copy (Table 2: 2x) */
	if (sc->framework == CVC_PROJ_FW_TORCHTITAN && sc->zero >= 3 && pp > 1)
		/* torchtitan keeps a pipeline stage's blocks gathered from their
		 * forward to their backward, across its micro-batches
		 * (apply_fsdp: reshard_after_forward = not pp_enabled,
		 * torchtitan/models/llama3/infra/parallelize.py @018740b7) */
		params += P->p_stage * 2;
	else if (torch && sc->zero >= 3)
		params += 2 * p_unit * 2; /* bf16 copies of the gathered units in flight */
	else if (sc->zero >= 3 && !proj_fp8_params(sc))
		params += 2 * p_unit * wb; /* with fp8 weights: the gathered fp8 units below */
	if (x->lowp) { /* the quantized weights, both layouts */
		struct proj_lowp c;
		double q = P->p_stage - P->p_vocab;

		proj_lowp_cast(x, &c);
		/* sharded with ZeRO-3 / FSDP: torchao's Float8 under FSDP2 casts
		 * each gathered unit as it is used (the two in flight); Megatron
		 * keeps its shard's and gathers the units' */
		if (sc->zero >= 3)
			q = (torch ? 0 : q / sh) + 2 * p_unit;
		params += c.wcache * q * proj_lowp_share(sc);
	}
	if (sc->local_sgd_h > 1) {
		/* local SGD / DiLoCo's outer optimizer: the global parameters of
		 * the last sync and the outer Nesterov momentum, fp32 (Douillard et
		 * al. 2023, Algorithm 1), sharded as the optimizer states are, the
		 * ZeRO group no wider than one cluster */
		double C = sc->clusters >= 1 ? sc->clusters : 1;
		double sh_out = sc->zero >= 1 ? fmin(sh, fmax(1, sc->dp * sc->cp / C)) : 1;

		params += P->p_stage * 8 / sh_out;
	}
	if (x->d3 && x->td > 1) /* 3D: the layer in use and the prefetched one, gathered */
		params += 2 * P->p_layer * x->td * wb;
	/* the logits of the last micro-batch: Megatron-Core's vocab-parallel
	 * cross-entropy keeps fp32 exponentials and writes the gradient into
	 * them, as fused cross-entropy kernels (flash-attn's, Liger's) do */
	buf = 4 * x->T * x->V / t * (1 + x->mtp); /* and each prediction module's */
	r->mem_params_gb = params / 1e9;
	r->mem_act_gb = act / 1e9;
	r->mem_buf_gb = buf / 1e9;
	r->mem_offload_gb = off / 1e9;
	r->mem_gb = (params + act + buf) / 1e9;
	r->hbm_gb = p->hbm_bytes * PROJ_HBM_USABLE / 1e9;
	r->fits = r->mem_gb <= r->hbm_gb;
}
