/*
 * test_tpheld.c - Transformer Engine's TP overlap beside Megatron-Core's
 * 1F1B all-to-all overlap (projector/evaluate.c tp_overlap_held()): on
 * Hopper the two want different CUDA_DEVICE_MAX_CONNECTIONS and the stacks
 * that run the all-to-all overlap leave the TP collectives behind their
 * GEMMs; on Blackwell both run.
 */
#include <stdio.h>
#include <string.h>

#include <criterion/criterion.h>

#include "cvc/cvc_project.h"
#include "testutil.h"

/* Mixtral 8x7B's shape (mistralai/Mixtral-8x7B-v0.1 config.json) on two
 * boards: EP 8 spans them at TP 2. */
static void run(const char *gpu, int ep_overlap, int tp_overlap, cvc_proj_result *r)
{
	char yaml[1024];
	cvc_proj_scenario sc;

	snprintf(yaml, sizeof yaml,
		 "model: {layers: 32, hidden: 4096, heads: 32, kv_heads: 8, ffn: 14336,\n"
		 "        ffn_type: swiglu, vocab: 32000, seq: 4096, experts: 8, top_k: 2,\n"
		 "        tie_embeddings: false}\n"
		 "training: {global_batch: 256, micro_batch: 1, dtype: bf16, recompute: selective}\n"
		 "parallelism: {tp: 2, pp: 1, ep: 8, sp: true}\n"
		 "hardware: {gpu: %s, gpus: 16, gpus_per_node: 8}\n"
		 "comm: {ep_dispatcher: deepep, ep_overlap: %s, tp_overlap: %s}\n",
		 gpu, ep_overlap ? "true" : "false", tp_overlap ? "true" : "false");
	cr_assert_eq(tu_proj_first(yaml, &sc, r), 1, "%s", yaml);
	cr_assert(r->valid, "%s: %s", gpu, r->reason);
}

/* Claim: on H100 with both overlaps asked for, the TP collectives hide
 * nothing and the projection says why; without the all-to-all overlap, or
 * on B200, they hide as before. */
Test(tpheld, hopper_runs_one_overlap_of_the_two)
{
	cvc_proj_result both, tp_only, b200;

	run("H100-SXM", 1, 1, &both);
	run("H100-SXM", 0, 1, &tp_only);
	run("B200", 1, 1, &b200);
	cr_expect_eq(both.hidden_type_s[CVC_PROJ_COMM_TP], 0, "H100, both: %g s hidden",
		     both.hidden_type_s[CVC_PROJ_COMM_TP]);
	cr_expect_gt(both.exposed_type_s[CVC_PROJ_COMM_TP], 0);
	cr_expect(strstr(both.warnings, "tp_overlap: not priced"), "%s", both.warnings);
	cr_expect_gt(tp_only.hidden_type_s[CVC_PROJ_COMM_TP], 0);
	cr_expect_null(strstr(tp_only.warnings, "tp_overlap: not priced"), "%s",
		       tp_only.warnings);
	cr_expect_gt(b200.hidden_type_s[CVC_PROJ_COMM_TP], 0);
	cr_expect_null(strstr(b200.warnings, "tp_overlap: not priced"), "%s", b200.warnings);
}

/* Claim: held back, the TP overlap still costs its split GEMMs: the step
 * is at least as long as with tp_overlap off, compute included. */
Test(tpheld, the_split_gemms_stay)
{
	cvc_proj_result held, off;

	run("H100-SXM", 1, 1, &held);
	run("H100-SXM", 1, 0, &off);
	cr_expect_geq(held.compute_s, off.compute_s * (1 - 1e-9), "%g %g", held.compute_s,
		      off.compute_s);
	cr_expect_geq(held.step_s, off.step_s * (1 - 1e-9), "%g %g", held.step_s, off.step_s);
}

/*
 * Claim: a field the layout does not use is said, with the stack's reason,
 * and changes nothing: tp_overlap without sequence parallelism (Megatron-
 * LM's arguments.py asserts it: its GEMMs overlap the sequence-parallel
 * gather and scatter) and shard_group with nothing sharded (zero 0);
 * with sp, or with zero 1, neither is said.
 */
Test(tpheld, fields_the_layout_does_not_use_are_said)
{
	static const struct {
		const char *par, *train, *warn;
	} t[] = {
		{"tp: 2, sp: false", "", "tp_overlap: not applied, it needs sp"},
		{"tp: 2, sp: true", "", NULL},
		{"tp: 1", "zero: 0, shard_group: 4", "shard_group: not applied, zero is 0"},
		{"tp: 1", "zero: 1, shard_group: 4", NULL},
	};

	for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
		char yaml[1024];
		cvc_proj_result r;

		snprintf(yaml, sizeof yaml,
			 "model: {layers: 32, hidden: 4096, heads: 32, kv_heads: 8, ffn: 14336,\n"
			 "        ffn_type: swiglu, vocab: 32000, seq: 4096}\n"
			 "training: {global_batch: 256, micro_batch: 1, dtype: bf16%s%s}\n"
			 "parallelism: {pp: 1, %s}\n"
			 "hardware: {gpu: H100-SXM, gpus: 16, gpus_per_node: 8}\n"
			 "comm: {tp_overlap: true}\n",
			 *t[i].train ? ", " : "", t[i].train, t[i].par);
		cr_assert_eq(tu_proj_first(yaml, NULL, &r), 1, "%s", yaml);
		cr_assert(r.valid, "%s: %s", yaml, r.reason);
		if (t[i].warn)
			cr_expect(strstr(r.warnings, t[i].warn), "%s -> %s", yaml, r.warnings);
		else
			cr_expect(!strstr(r.warnings, "not applied"), "%s -> %s", yaml, r.warnings);
	}
}
