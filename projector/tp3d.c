/*
 * tp3d.c - 3D tensor parallelism as a layout (AxoNN's 4D = 3D tensor x data
 * parallel; Singh, Singhania, Ranjan, Sating, Bhatele, "A 4D Hybrid
 * Algorithm to Scale Parallel Training to Thousands of GPUs", arXiv
 * 2305.13525): the checks of a grid, the operators of one layer and the
 * activation memory it keeps (docs/SCENARIOS.md "3D tensor parallelism").
 *
 * Each linear layer's weight (out x in) is split over a grid of
 * tp_row x tp_col x tp_depth GPUs.  Not transposed (QKV, FFN up): the input
 * features over the column axis, the output features over the row axis;
 * transposed (attention projection, FFN down): the two swapped, so that
 * each layer's output is already split the way the next layer's input must
 * be.  The depth axis splits the micro-batch's sequences and shards the
 * (row x column) block of the weight once more, gathered before use like
 * ZeRO-3 (axonn-ai/axonn axonn/intra_layer/fully_connected.py, AsyncLinear).
 * Per linear layer and micro-batch: the output all-reduced over the axis
 * that splits the input (forward, again under full recomputation), the
 * input gradient all-reduced over the axis that splits the output
 * (backward), the weight all-gathered over depth before the forward, the
 * recomputed forward and the backward, and its gradient reduce-scattered
 * over depth: the volumes of the authors' model (axonn-ai/Megatron-AxoNN
 * examples/comm_model.py), with the differences named in docs/SCENARIOS.md.
 * Rank order: column fastest, then row, depth, data (comm_model.py's
 * placement).
 */
#include <math.h>

#include "cvc/cvc_model.h"
#include "ctx.h"
#include "proj_internal.h"

int proj_is_3d(const cvc_proj_scenario *sc)
{
	return sc->tp_row > 0 || sc->tp_col > 0 || sc->tp_depth > 0;
}

void proj_grid_of(const cvc_proj_scenario *sc, double *tr, double *tc, double *td)
{
	int d3 = proj_is_3d(sc);

	*tr = d3 && sc->tp_row > 0 ? sc->tp_row : 1;
	*tc = d3 && sc->tp_col > 0 ? sc->tp_col : 1;
	*td = d3 && sc->tp_depth > 0 ? sc->tp_depth : 1;
}

static int whole(double x)
{
	return x >= 1 && x < 1e9 && x == floor(x);
}

const char *proj_grid_reason(cvc_proj_scenario *sc)
{
	double r, c, d, n;

	proj_grid_of(sc, &r, &c, &d);
	n = r * c * d;
	if (!whole(r) || !whole(c) || !whole(d))
		return "tp_row, tp_col and tp_depth must be positive integers";
	if (sc->tp != 1 && sc->tp != n)
		return "tp must equal tp_row*tp_col*tp_depth (or be left out)";
	/* AxoNN's 4D algorithm: no pipeline, sequence or context parallelism,
	 * dense models, its own sharding over depth instead of ZeRO */
	if (sc->sp)
		return "3D tensor parallelism has no sequence parallelism (sp)";
	if (sc->pp != 1)
		return "3D tensor parallelism runs without pipeline stages (pp 1)";
	if (sc->cp != 1)
		return "3D tensor parallelism runs without context parallelism (cp 1)";
	if (sc->experts > 1 || sc->kv_lora_rank > 0 || !proj_layers_uniform(sc) ||
	    proj_kind_of(sc, 0) != proj_main_kind(sc))
		return "3D tensor parallelism is priced for dense models with standard attention";
	if (sc->zero != 0)
		return "3D tensor parallelism shards over tp_depth itself (zero 0)";
	if (proj_lowp_dtype((int)sc->dtype) || sc->attention == CVC_PROJ_ATTN_UNFUSED)
		return "3D tensor parallelism is priced for bf16/fp16/fp32 with fused attention";
	if (proj_fmod(sc->heads, r) != 0 || proj_fmod(sc->kv_heads, r) != 0)
		return "heads and kv_heads not divisible by tp_row";
	if (proj_fmod(sc->hidden, r) != 0 || proj_fmod(sc->hidden, c) != 0)
		return "hidden not divisible by tp_row and tp_col";
	if (proj_fmod(sc->ffn, r) != 0 || proj_fmod(sc->ffn, c) != 0)
		return "ffn not divisible by tp_row and tp_col";
	if (proj_fmod(sc->micro_batch, d) != 0)
		return "micro_batch not divisible by tp_depth";
	sc->tp = n;
	return NULL;
}

/* Members of each axis's group inside one node: column fastest, then row,
 * then depth. */
struct grid_pn {
	double c, r, d;
};

static void grid_pn_of(const struct proj_shape *x, struct grid_pn *pn)
{
	pn->c = fmin(x->tc, x->gpn);
	pn->r = fmin(x->tr, fmax(1, x->gpn / x->tc));
	pn->d = fmin(x->td, fmax(1, x->gpn / (x->tc * x->tr)));
}

/* One linear layer's prices: forward, dgrad and wgrad GEMMs; its forward
 * and backward all-reduce, its depth all-gather and reduce-scatter (one
 * run each). */
struct lin3d {
	double f, d, w, ar_f, ar_b, ag, rs;
};

/* A linear layer of in_f x out_f features, transposed or not (file
 * comment), for one micro-batch of m = tokens / tp_depth rows. */
static void linear3d(struct proj_sink *k, const struct proj_shape *x,
		     const struct proj_layer_runs *n, const struct grid_pn *pn, double in_f,
		     double out_f, int transposed, struct lin3d *o)
{
	double si = transposed ? x->tr : x->tc, so = transposed ? x->tc : x->tr;
	double pi = transposed ? pn->r : pn->c, po = transposed ? pn->c : pn->r;
	double m = x->T / x->td, kk = in_f / si, nn = out_f / so;
	double nag = n->M * n->L * (1 + (n->full ? 2 : 1));

	o->f = proj_op_gemm_dt(k, x->dtype, m, nn, kk, 1, n->cf, 0);
	o->d = proj_op_gemm_dt(k, x->dtype, m, kk, nn, 1, n->cb, 0);
	o->w = proj_op_wgrad_dt(k, x->dtype, kk, nn, m, 1, n->cb, 0);
	/* partial outputs summed over the axis that splits the input; input
	 * gradients summed over the axis that splits the output */
	o->ar_f = proj_op_coll(k, CVC_MODEL_ALLREDUCE, CVC_PROJ_COMM_TP, m * nn * x->BA, si, pi,
			       n->cf);
	o->ar_b = proj_op_coll(k, CVC_MODEL_ALLREDUCE, CVC_PROJ_COMM_TP, m * kk * x->BA, so, po,
			       n->cb);
	/* the (row x column) block gathered over depth before each use, its
	 * gradient scattered back */
	o->ag = proj_op_coll(k, CVC_MODEL_ALLGATHER, CVC_PROJ_COMM_TP, kk * nn * x->BA, x->td,
			     pn->d, nag);
	o->rs = proj_op_coll(k, CVC_MODEL_REDUCESCATTER, CVC_PROJ_COMM_TP, kk * nn * x->BA, x->td,
			     pn->d, n->cb);
}

/* Memory-bound operators: the norms and bias-dropout-residuals on the
 * layer's stream (tokens / depth x hidden / column, as the transposed
 * layers leave it), the activation on FFN up's output (ffn / row), rotary
 * embedding on q and k (heads / row); forward into *mf, backward into *mb.
 * The byte counts are project.c's layer_mem_ops()'s on the 3D shards. */
static void mem3d(struct proj_sink *k, const struct proj_shape *x, const struct proj_layer_runs *n,
		  double *mf, double *mb)
{
	double cf = n->cf, cb = n->cb, T = x->T / x->td, Th = T * x->h / x->tc;
	double act = (x->gated ? 3 : 2) * x->BA * T * x->f / x->tr;

	*mf += 2 * proj_op_mem(k, CVC_MODEL_MEM_NORM, 2 * x->BA * Th, 2 * cf, 0);
	*mf += 2 * proj_op_mem(k, CVC_MODEL_MEM_ELEMENTWISE, (3 * x->BA + 1) * Th, 2 * cf, 0);
	*mf += proj_op_mem(k, CVC_MODEL_MEM_ELEMENTWISE, act, cf, 0);
	*mb += 2 * proj_op_mem(k, CVC_MODEL_MEM_NORM, 4 * x->BA * Th, 2 * cb, 0);
	*mb += 2 * proj_op_mem(k, CVC_MODEL_MEM_ELEMENTWISE, 2 * (3 * x->BA + 1) * Th, 2 * cb, 0);
	*mb += proj_op_mem(k, CVC_MODEL_MEM_ELEMENTWISE, 2 * act, cb, 0);
	if (x->gated) {
		double rb = 2 * x->BA * T * (x->a + x->g) * x->dh / x->tr;

		*mf += proj_op_mem(k, CVC_MODEL_MEM_ELEMENTWISE, rb, cf, 0);
		*mb += proj_op_mem(k, CVC_MODEL_MEM_ELEMENTWISE, rb, cb, 0);
	}
}

/*
 * The layer: QKV (not transposed), attention core, projection
 * (transposed), FFN up (not transposed), FFN down (transposed).  The
 * attention core runs on the heads of the row shard (QKV's output is split
 * over the row axis, whole heads as Megatron lays QKV out) and on the
 * sequences of the depth shard; the column ranks each hold the all-reduced
 * QKV output and so each compute the same heads (the core is replicated
 * over tp_col, as the non-linear operators are).  Overlap (AxoNN's
 * --overlap-axonn-comm): each backward all-reduce of an input gradient
 * runs beside that layer's weight-gradient GEMM (AsyncLinear.backward);
 * the depth traffic's overlap is evaluate.c's.
 */
void proj_layer3d_ops(struct proj_sink *k, const struct proj_shape *x,
		      const struct proj_layer_runs *n, struct proj_layer_cost *lc)
{
	struct grid_pn pn;
	struct lin3d q, p, u, d;
	struct lin3d *all[4] = {&q, &p, &u, &d};
	double mf = 0, mb = 0, af, ab, gf = 0, gb = 0, fwd, hid = 0;
	double sq = x->s, bl = x->b / x->td;

	grid_pn_of(x, &pn);
	linear3d(k, x, n, &pn, x->h, x->qkv, 0, &q);
	linear3d(k, x, n, &pn, x->a * x->dh, x->h, 1, &p);
	linear3d(k, x, n, &pn, x->h, (x->gated ? 2 : 1) * x->f, 0, &u);
	linear3d(k, x, n, &pn, x->f, x->h, 1, &d);
	af = proj_op_attn(k, x->dtype, bl, x->a / x->tr, fmax(1, x->g / x->tr), sq, sq, x->dh, 0,
			  n->cf);
	ab = proj_op_attn(k, x->dtype, bl, x->a / x->tr, fmax(1, x->g / x->tr), sq, sq, x->dh, 1,
			  n->cb);
	mem3d(k, x, n, &mf, &mb);
	lc->tp_fwd_s = lc->tp_bwd_s = lc->d3_ag_s = lc->d3_rs_s = 0;
	for (int i = 0; i < 4; i++) {
		gf += all[i]->f;
		gb += all[i]->d + all[i]->w;
		lc->tp_fwd_s += all[i]->ar_f;
		lc->tp_bwd_s += all[i]->ar_b;
		lc->d3_ag_s += all[i]->ag;
		lc->d3_rs_s += all[i]->rs;
		if (x->ovl3)
			hid += fmin(all[i]->ar_b, all[i]->w);
	}
	fwd = gf + af + mf;
	lc->fwd_s = fwd;
	lc->bwd_s = gb + ab + mb + (n->full ? fwd : 0);
	lc->fwd_gemm_s = gf;
	lc->bwd_gemm_s = gb + (n->full ? gf : 0);
	lc->attn_fwd_s = af;
	lc->attn_bwd_s = ab;
	lc->kernels = k->kernels;
	lc->chunk_kernels = k->chunk_kernels;
	lc->tp_margin_s = 0;
	/* the forward all-reduces run again in the recomputed forward, on
	 * the critical path like the first */
	if (n->full)
		lc->tp_bwd_s += lc->tp_fwd_s;
	lc->tp_hid_s = hid;
}

/*
 * Activation memory per micro-batch (docs/SCENARIOS.md "Memory"): with full
 * recomputation each layer keeps its input, tokens / depth x hidden /
 * column (the stream as the transposed FFN down leaves it); working is one
 * layer's saved tensors, act_per_token()'s terms (memory.c) on the 3D
 * shards: norm inputs, QKV input, Q K V, flash attention's fp32
 * log-sum-exp, the attention output, dropout masks, FFN inputs and the
 * activation's input.
 */
void proj_act3d(const cvc_proj_scenario *sc, const struct proj_shape *x, double *input,
		double *working)
{
	double T = x->T / x->td, B = x->BA, hc = x->h / x->tc, a = 0;
	double drop = sc->dropout ? 1 : 0;

	*input = B * T * hc;
	a += 2 * B * hc;                      /* the two norm inputs */
	a += B * hc;                          /* QKV input */
	a += B * x->qkv / x->tr;              /* Q, K, V */
	a += 4 * x->a / x->tr;                /* log-sum-exp (fp32) */
	a += B * x->a * x->dh / x->tr;        /* attention output */
	a += drop * 2 * hc;                   /* residual dropout masks */
	a += B * hc;                          /* FFN up input */
	a += B * (x->gated ? 2 : 1) * x->f / x->tr; /* activation input */
	a += B * x->f / x->tr;                /* FFN down input */
	*working = a * T;
}
