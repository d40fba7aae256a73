/*
 * test_moetokens.c - the tokens an MoE layer routes per rank under tensor
 * and sequence parallelism, as Megatron-Core's token dispatchers hold them
 * (megatron/core/transformer/moe/token_dispatcher.py: "num_local_tokens:
 * S/TP*B"; the alltoall dispatcher's "permute -> A2A(EP) -> AG(TP) ->
 * sort_chunk", TP there the expert tensor-parallel group): each rank
 * exchanges the copies of its own sequence shard, and the expert
 * tensor-parallel group gathers them before its experts run.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <criterion/criterion.h>

#include "cvc/cvc_model.h"
#include "cvc/cvc_project.h"
#include "testutil.h"

struct scan {
	int64_t up_m, up_n, up_b;  /* the routed experts' forward up projection */
	int64_t a2a_bytes, ag_bytes, router_m;
	int a2a_n, ag_n;
};

/* Qwen3-30B-A3B's MoE shape: h 2048, 128 experts of 768, top 8. */
#define N_UP(etp) (2 * 768 / (etp))

static int scan_ops(void *user, const cvc_proj_op *o)
{
	struct scan *s = user;

	if (o->kind == CVC_PROJ_OP_GEMM && !o->backward && o->b == 16 && o->k == 2048 &&
	    (o->n == N_UP(1) || o->n == N_UP(2)) && !s->up_m)
		s->up_m = o->m, s->up_n = o->n, s->up_b = o->b;
	if (o->kind == CVC_PROJ_OP_GEMM && o->n == 128 && o->k == 2048 && !s->router_m)
		s->router_m = o->m;
	if (o->kind == CVC_PROJ_OP_COLL && o->comm == CVC_PROJ_COMM_EP) {
		if (o->sub == CVC_MODEL_ALLTOALL && !s->a2a_n++)
			s->a2a_bytes = o->bytes;
		if (o->sub == CVC_MODEL_ALLGATHER && !s->ag_n++)
			s->ag_bytes = o->bytes;
	}
	return 0;
}

static void scan_layout(int etp, cvc_proj_scenario *sc, struct scan *s)
{
	char yaml[512];
	cvc_proj_result r;

	snprintf(yaml, sizeof yaml,
		 "model: {arch: qwen3-30b-a3b, seq: 4096}\n"
		 "training: {global_batch: 64, micro_batch: 1, dtype: bf16}\n"
		 "parallelism: {tp: 2, sp: true, ep: 8, etp: %d}\n"
		 "comm: {ep_dispatcher: alltoall}\n"
		 "hardware: {gpu: H100-SXM, gpus: 16}\n", etp);
	cr_assert_eq(tu_proj_first(yaml, sc, &r), 1);
	cr_assert(r.valid, "etp %d: %s", etp, r.reason);
	memset(s, 0, sizeof *s);
	cvc_proj_scenario_ops(sc, scan_ops, s);
}

/*
 * Claim: at tp 2 with sequence parallelism a rank routes its 2048 tokens
 * of a 4096-token micro-batch: the router's GEMM has 2048 rows, and the
 * all-to-all moves their 2048 x 8 copies of 2048 bf16 values (67 108 864
 * B) whatever the expert tensor parallelism.  With etp 1 its 16 local
 * experts (128 / EP 8) run those 16384 copies, 1024 rows each, at full
 * width, and nothing is gathered; with etp 2 the expert tensor-parallel
 * pair all-gathers them (134 217 728 B out) and each expert runs 2048 rows
 * at half width: the same FLOPs.  Exact, from the operators cvc prices.
 * Before: every rank routed the whole 4096 tokens, so etp 1 ran twice the
 * experts' FLOPs and the all-to-all moved twice the bytes.
 */
Test(moetokens, a_rank_routes_its_sequence_shard)
{
	cvc_proj_scenario sc;
	struct scan s1, s2;

	scan_layout(1, &sc, &s1);
	cr_expect_eq(s1.router_m, 2048, "router rows %lld", (long long)s1.router_m);
	cr_expect_eq(s1.a2a_bytes, (int64_t)2048 * 8 * 2048 * 2, "%lld B",
		     (long long)s1.a2a_bytes);
	cr_expect_eq(s1.up_b, 16);
	cr_expect_eq(s1.up_m, 1024, "etp 1: %lld rows an expert", (long long)s1.up_m);
	cr_expect_eq(s1.up_n, N_UP(1));
	cr_expect_eq(s1.ag_n, 0, "etp 1: %d expert all-gathers", s1.ag_n);

	scan_layout(2, &sc, &s2);
	cr_expect_eq(s2.router_m, 2048);
	cr_expect_eq(s2.a2a_bytes, s1.a2a_bytes, "%lld B", (long long)s2.a2a_bytes);
	cr_expect_eq(s2.up_m, 2048, "etp 2: %lld rows an expert", (long long)s2.up_m);
	cr_expect_eq(s2.up_n, N_UP(2));
	cr_expect_eq(s2.ag_bytes, (int64_t)2 * 2048 * 8 * 2048 * 2, "%lld B",
		     (long long)s2.ag_bytes);
	cr_expect_eq(s1.up_m * s1.up_n, s2.up_m * s2.up_n, "the same FLOPs");
}
