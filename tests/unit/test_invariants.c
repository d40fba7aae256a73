/*
 * test_invariants.c - what must hold of any projected step whatever its
 * numbers: more of a resource, or less of a cost, never makes it slower,
 * and a part never exceeds what bounds it.  Each case is a scenario a
 * random sweep of valid layouts (33,000 rows, checked against these
 * invariants) found breaking one, reduced to its smallest form.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <criterion/criterion.h>

#include "cvc/cvc_project.h"
#include "testutil.h"

/* The first scenario of yaml, which must be valid. */
static cvc_proj_result step_of(const char *yaml)
{
	cvc_proj_result r;

	cr_assert_eq(tu_proj_first(yaml, NULL, &r), 1, "%s", yaml);
	cr_assert(r.valid, "%s: %s", yaml, r.reason);
	return r;
}

/*
 * Claim: the host that sets a step is the stage's whose host has the most
 * to launch, not the stage whose GPU is slowest.  Qwen3-8B's 36 layers in
 * NVFP4 over 8 stages hold 5 layers a stage and 1 on the last, beside the
 * logits: the last stage's GPU is slowest, the others' hosts launch five
 * layers' kernels.  Priced on the last stage's host, doubling the GPU's
 * FLOP/s (which moves the slowest GPU to a five-layer stage) made the step
 * 4.1x slower (0.350 -> 1.437 s).  Now the two are one step, the host's.
 */
Test(invariants, more_flops_never_slower_with_uneven_stages)
{
	static const char *const yaml[] = {
		"model: {arch: qwen3-8b, seq: 1024}\n"
		"training: {global_batch: 64, micro_batch: 1, dtype: nvfp4}\n"
		"parallelism: {tp: 1, pp: 8}\nhardware: {gpu: B200, gpus: 8, scale_compute: 1}\n",
		"model: {arch: qwen3-8b, seq: 1024}\n"
		"training: {global_batch: 64, micro_batch: 1, dtype: nvfp4}\n"
		"parallelism: {tp: 1, pp: 8}\nhardware: {gpu: B200, gpus: 8, scale_compute: 2}\n",
	};
	cvc_proj_result a = step_of(yaml[0]), b = step_of(yaml[1]);

	cr_expect_leq(b.step_s, a.step_s * (1 + 1e-9), "2x FLOP/s: %g s against %g s", b.step_s,
		      a.step_s);
	cr_expect_gt(a.host_s, 0, "the five-layer stages' host sets the step");
}

/*
 * Claim: contention (hidden communication slowing the compute it hides
 * under) never shortens a step.  A dropless MoE micro-batch waits on its
 * host; the host's excess over the GPU shrank as contention grew, and
 * with it the pipeline's bubble: Mixtral on 4 B200 at PP 2, contention 0
 * to 1, 0.344 -> 0.288 s.
 */
Test(invariants, contention_never_shortens_a_step)
{
	double last = 0;

	for (int i = 0; i < 4; i++) {
		static const double c[] = {0, 0.1, 0.5, 1};
		char yaml[512];
		cvc_proj_result r;

		snprintf(yaml, sizeof yaml,
			 "model: {arch: mixtral-8x7b, seq: 2048}\n"
			 "training: {global_batch: 2, zero: 3}\n"
			 "parallelism: {pp: 2, ep: 2}\nhardware: {gpu: B200, gpus: 4}\n"
			 "comm: {contention: %g}\n", c[i]);
		r = step_of(yaml);
		cr_expect_geq(r.step_s, last * (1 - 1e-9), "contention %g: %g s after %g s", c[i],
			      r.step_s, last);
		last = r.step_s;
	}
}

/*
 * Claim: pipeline transfers hide under the stage's compute, no more of
 * them than it lasts; and a share's 90% interval holds the share.  Six
 * layers over PP 2 x VPP 4 chunks send more than they compute: 0.82 s of
 * transfers were booked hidden under 0.47 s of compute (comm_share 1.59,
 * its interval 1.04-1.00).
 */
Test(invariants, hidden_transfers_bounded_by_compute)
{
	cvc_proj_result r = step_of(
		"model: {name: h, layers: 6, hidden: 4096, heads: 16, kv_heads: 2, ffn: 4096,\n"
		"        ffn_type: relu2, vocab: 32000, tie_embeddings: false, head_dim: 128,\n"
		"        layer_pattern: \"*--*M*\", seq: 8192}\n"
		"training: {global_batch: 256, micro_batch: 2, dtype: mxfp4, recompute: selective}\n"
		"parallelism: {tp: 2, pp: 2, vpp: 4}\nhardware: {gpu: B200, gpus: 16}\n"
		"comm: {dp_overlap: false}\n");

	cr_expect_leq(r.hidden_type_s[CVC_PROJ_COMM_PP], r.compute_s, "%g s hidden under %g s",
		      r.hidden_type_s[CVC_PROJ_COMM_PP], r.compute_s);
	cr_expect(r.comm_share_lo <= r.comm_share && r.comm_share <= r.comm_share_hi,
		  "comm_share %g in [%g, %g]", r.comm_share, r.comm_share_lo, r.comm_share_hi);
	cr_expect(r.exposed_share_lo <= r.exposed_share && r.exposed_share <= r.exposed_share_hi &&
		  r.exposed_share_hi <= 1, "exposed_share %g in [%g, %g]", r.exposed_share,
		  r.exposed_share_lo, r.exposed_share_hi);
	cr_expect_geq(r.step_s, r.comm_type_s[CVC_PROJ_COMM_PP] - r.hidden_type_s[CVC_PROJ_COMM_PP]);
}

/*
 * Claim: the share of the step spent communicating may pass 1 only by
 * kinds running at once on their own links, each within the step: its
 * interval's top is at most the sum over kinds of min(1, the kind's top /
 * the step's bottom).  Qwen2-57B-A14B at EP 16 on H100, the all-to-all
 * 82% of the step and TP and DP 8% more, read "90% (65-125%) of the step".
 */
Test(invariants, comm_share_interval_within_its_kinds)
{
	cvc_proj_result r = step_of(
		"model: {name: qwen2-57b-a14b, layers: 28, hidden: 3584, heads: 28, kv_heads: 4,\n"
		"        ffn: 18944, moe_ffn: 2560, shared_ffn: 20480, ffn_type: swiglu,\n"
		"        vocab: 151936, seq: 4096, experts: 64, top_k: 8, tie_embeddings: false}\n"
		"training: {global_batch: 4096, micro_batch: 1, dtype: bf16, recompute: none,\n"
		"           distributed_optimizer: true}\n"
		"parallelism: {tp: 2, pp: 1, ep: 16}\nhardware: {gpu: H100-SXM, gpus: 1024}\n"
		"comm: {ep_overlap: true}\n");
	double cap = 0;

	for (int j = 0; j < CVC_PROJ_COMM_N; j++)
		if (r.comm_type_s[j] > 0)
			cap += fmin(1, r.comm_type_hi_s[j] / r.step_s_lo);
	cr_expect(r.comm_share_lo <= r.comm_share && r.comm_share <= r.comm_share_hi,
		  "comm_share %g in [%g, %g]", r.comm_share, r.comm_share_lo, r.comm_share_hi);
	cr_expect_leq(r.comm_share_hi, fmax(cap, r.comm_share) * (1 + 1e-12),
		      "comm_share's top %g past its kinds' %g", r.comm_share_hi, cap);
	cr_expect_lt(cap, 1.2, "the case has one kind near the whole step: %g", cap);
}

/*
 * Claim: Transformer Engine's TP overlap splits a GEMM inside one call, its
 * C++ loop launching the chunks: each chunk has its kernel gap, none of
 * them the host work of an operator.  Priced as operators of their own,
 * the chunks made a small TP 4 layout host-bound and the overlap 28%
 * slower (0.0399 -> 0.0510 s; 371 of 627 random layouts slower, up to 68%).
 */
Test(invariants, tp_overlap_chunks_cost_the_host_no_operator)
{
	static const char base[] =
		"model: {layers: 8, hidden: 4096, heads: 8, seq: 2048}\n"
		"training: {global_batch: 16}\nparallelism: {tp: 4, sp: true}\n"
		"hardware: {gpu: H200-SXM, gpus: 64}\n";
	char on[512];
	cvc_proj_result off, ovl;

	snprintf(on, sizeof on, "%scomm: {tp_overlap: true}\n", base);
	off = step_of(base);
	ovl = step_of(on);
	cr_expect_leq(ovl.host_s, off.host_s + 1e-12, "host wait %g s against %g s", ovl.host_s,
		      off.host_s);
	cr_expect_lt(ovl.step_s, off.step_s, "the overlap hides TP: %g s against %g s", ovl.step_s,
		     off.step_s);
	cr_expect_gt(ovl.gaps_s, off.gaps_s, "every chunk keeps its kernel gap");
}

/*
 * Claim: a step without dropout launches no dropout kernel.  Unfused
 * attention charged its probabilities' dropout whatever `dropout` said:
 * off and on priced alike (1.04169 s), only the masks' memory moved.
 */
Test(invariants, no_dropout_kernels_without_dropout)
{
	static const char base[] =
		"model: {layers: 8, hidden: 2048, heads: 16, seq: 2048}\n"
		"training: {global_batch: 64, attention: unfused, dropout: %s}\n"
		"hardware: {gpu: A100-SXM-80GB, gpus: 8, host_launch_us: 0}\n";
	cvc_proj_result r[2];

	tu_proj_pair(base, "false", "true", r);
	cr_expect_lt(r[0].compute_s, r[1].compute_s, "without dropout %g s, with %g s",
		     r[0].compute_s, r[1].compute_s);
	cr_expect_lt(r[0].mem_act_gb, r[1].mem_act_gb, "the masks only with dropout");
}

/*
 * Claim: a GPU without the format's tensor cores cannot run it, fp8 as
 * fp4: fp8 on an A100 or a V100 is an impossible layout with its reason,
 * never priced silently as bf16 with fp8's casts on top (it was: valid,
 * 8.14 s against bf16's 7.96 s).
 */
Test(invariants, fp8_needs_fp8_tensor_cores)
{
	static const char *const gpu[] = {"A100-SXM-80GB", "V100-SXM2-32GB"};

	for (int i = 0; i < 2; i++) {
		char yaml[400];
		cvc_proj_result r;

		snprintf(yaml, sizeof yaml,
			 "model: {arch: llama3.1-8b, seq: 4096}\n"
			 "training: {global_batch: 64, micro_batch: 1, dtype: fp8}\n"
			 "parallelism: {tp: 1}\nhardware: {gpu: %s, gpus: 8}\n", gpu[i]);
		cr_assert_eq(tu_proj_first(yaml, NULL, &r), 1);
		cr_expect(!r.valid, "%s: fp8 priced", gpu[i]);
		cr_expect(r.reason && strstr(r.reason, "no FP8 tensor cores"), "%s: %s", gpu[i],
			  r.reason);
	}
}

/*
 * Claim: a stage with tensor parallelism pays tensor-parallel traffic,
 * the ends' too.  Gemma 3 4B's 34 layers and its 262k-entry vocabulary over
 * 8 stages leave the last stage the logits alone, and it sets the pace at
 * 16k tokens: with TP 4 and sequence parallelism its output layer gathers
 * the hidden states from their sequence shards and its loss all-reduces
 * over the vocabulary's ranks, where cvc priced no TP traffic at all.
 */
Test(invariants, the_logits_stage_pays_its_tp_collectives)
{
	cvc_proj_result r = step_of(
		"model: {arch: gemma3-4b, seq: 16384}\n"
		"training: {global_batch: 128, micro_batch: 4, dtype: fp8, recompute: none}\n"
		"parallelism: {tp: 4, pp: 8, sp: true}\nhardware: {gpu: GB300, gpus: 128}\n");

	cr_expect_gt(r.comm_type_s[CVC_PROJ_COMM_TP], 0, "tp 4, and no TP traffic");
}

/*
 * Claim: a what-if GPU with more FLOP/s or more HBM bandwidth is never
 * slower.  Scaling an H100's figures made the measured references its
 * GEMMs are carried through switch to another GPU's where the scaled
 * figures crossed over (cvc_hw_closest() measured the scaled spec): one
 * GPU, no communication, and the step jumped 2-8% (Llama 3 70B, HBM x1.45
 * -> x1.5: 13.24 -> 14.34 s).  Now a catalog GPU keeps its own.
 */
Test(invariants, scaled_figures_never_slower)
{
	static const double s[] = {1.9, 2, 2.05, 2.1, 2.2};
	double last_c = INFINITY, last_h = INFINITY;

	for (int i = 0; i < 5; i++) {
		char yaml[400];
		cvc_proj_result c, h;

		snprintf(yaml, sizeof yaml,
			 "model: {arch: llama3.1-8b, seq: 4096}\ntraining: {global_batch: 1}\n"
			 "hardware: {gpu: H100-SXM, gpus: 1, scale_compute: %g}\n", s[i]);
		c = step_of(yaml);
		snprintf(yaml, sizeof yaml,
			 "model: {arch: llama3-70b, seq: 4096}\ntraining: {global_batch: 8}\n"
			 "hardware: {gpu: H100-SXM, gpus: 1, scale_compute: 2, scale_hbm_bw: %g}\n",
			 s[i] - 0.5);
		h = step_of(yaml);
		cr_expect_leq(c.step_s, last_c * (1 + 1e-9), "FLOP/s x%g: %g s after %g s", s[i],
			      c.step_s, last_c);
		cr_expect_leq(h.step_s, last_h * (1 + 1e-9), "HBM x%g: %g s after %g s", s[i] - 0.5,
			      h.step_s, last_h);
		last_c = c.step_s;
		last_h = h.step_s;
	}
}

/*
 * Claim: a faster GPU never makes a host-bound MoE step slower.  Its
 * dropless layers wait on the host; the gradient buckets reduce under the
 * last backward as it lasts, the host wait included.  Hidden only under
 * the backward's compute, they hid less on a B200 than on an H100 (more
 * wait, less compute): 0.0194 s on the H100, 0.0210 s on the B200.
 */
Test(invariants, faster_gpu_never_slower_when_host_bound)
{
	static const char *const gpu[] = {"H100-SXM", "B200"};
	cvc_proj_result r[2];

	for (int i = 0; i < 2; i++) {
		char yaml[400];

		snprintf(yaml, sizeof yaml,
			 "model: {name: m, layers: 2, hidden: 4096, heads: 8, experts: 16, top_k: 2,\n"
			 "        moe_ffn: 864, seq: 768}\n"
			 "training: {global_batch: 128, micro_batch: 4, zero: 2}\n"
			 "hardware: {gpu: %s, gpus: 32}\ncomm: {dp_overlap: true}\n", gpu[i]);
		r[i] = step_of(yaml);
	}
	cr_expect_gt(r[1].host_s, 0, "the B200 waits on its host");
	cr_expect_leq(r[1].step_s, r[0].step_s * (1 + 1e-9), "B200 %g s, H100 %g s", r[1].step_s,
		      r[0].step_s);
}

/*
 * Claim: a value no run can have is an impossible layout with its reason,
 * never rounded or replaced in silence.  Each was priced: a fraction of a
 * rank made 1 (cp, ep) or tp (etp), 2.5 experts a token or GPUs a node,
 * more key/value heads than query heads, a PUE under 1 (energy below the
 * IT load's), EP kernels on no SM, nodes the GPUs contradict, MXFP8 on
 * Hopper (no block-scaled tensor cores: Transformer Engine's support
 * matrix lists it from Blackwell).
 */
Test(invariants, impossible_values_are_invalid_with_reasons)
{
	static const struct {
		const char *set, *why;
	} bad[] = {
		{"parallelism: {cp: 0.5}", "positive integers"},
		{"parallelism: {ep: 0.5}", "positive integers"},
		{"parallelism: {ep: 2, etp: 0.5}", "etp"},
		{"model: {top_k: 2.5}", "top_k"},
		{"hardware: {gpus_per_node: 2.5}", "gpus_per_node"},
		{"model: {kv_heads: 12}", "kv_heads"},
		{"model: {kv_heads: 64}", "kv_heads"},
		{"cost: {pue: 0.5}", "pue"},
		{"comm: {ep_sms: 0, ep_dispatcher: deepep}", "ep_sms"},
		{"comm: {local_sgd_h: 2.5}", "local_sgd_h"},
		{"comm: {moe_router_group_topk: 1.5}", "moe_router_group_topk"},
		{"hardware: {nodes: 3}", "nodes"},
		{"training: {dtype: fp8, fp8_recipe: mxfp8}", "mxfp8"},
	};

	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		char y[1024];
		cvc_proj_result r;

		snprintf(y, sizeof y,
			 "model: {layers: 4, hidden: 2048, heads: 32, seq: 2048, experts: 8}\n"
			 "parallelism: {tp: 1, ep: 1}\nhardware: {gpu: H100-SXM, gpus: 64}\n"
			 "%s\n", bad[i].set);
		cr_assert_eq(tu_proj_first(y, NULL, &r), 1, "%s", y);
		cr_expect_not(r.valid, "'%s' priced", bad[i].set);
		cr_expect(r.reason && strstr(r.reason, bad[i].why), "'%s': %s", bad[i].set,
			  r.reason ? r.reason : "(no reason)");
	}
}
