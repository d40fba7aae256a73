/*
 * test_offload_modules.c - fine-grained activation offloading
 * (offload_modules, Megatron-Core's --offload-modules): each named
 * module's input leaves the GPU's count for the host's, the copies' wait
 * where they outlast the compute they run beside, what Megatron-Core
 * refuses, and validate reading Nemotron 3 Ultra's recipe
 * (projector/memory.c, offload.c, vrecipe.c).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "cvc/cvc_project.h"
#include "testutil.h"

/* Llama 3 70B in bf16 on 64 GPUs (Megatron-FSDP, pp 1: one micro-batch of
 * 8192 tokens in flight), offloading the modules named. */
static void llama70b(const char *gpu, const char *mods, cvc_proj_result *r)
{
	char yaml[1024];

	snprintf(yaml, sizeof yaml,
		 "model: {arch: llama3-70b, seq: 8192}\n"
		 "training: {global_batch: 64, micro_batch: 1, dtype: bf16, zero: 3,\n"
		 "           offload_modules: '%s'}\n"
		 "parallelism: {tp: 1, pp: 1}\nhardware: {gpu: %s, gpus: 64}\n",
		 mods, gpu);
	cr_assert_eq(tu_proj_first(yaml, NULL, r), 1, "%s", yaml);
	cr_assert(r->valid, "%s: %s", mods, r->reason);
}

/*
 * Claim: core_attn and attn_proj send their inputs to the host, by hand:
 * per token and layer the flash attention's Q, K and V (64 heads and 2 x 8
 * of 128, bf16: 20480 bytes) and the output projection's input (8192 x 2
 * bytes), x 8192 tokens x 80 layers; the GPU keeps the rest, and two
 * layers' worth in flight (one copied out, one reloaded ahead).
 */
Test(offload_modules, attention_inputs_by_hand)
{
	cvc_proj_result r0, r;
	double layer = 8192.0 * (2 * (8192 + 2 * 8 * 128) + 2 * 8192), want = 80 * layer;

	llama70b("GB200", "", &r0);
	llama70b("GB200", "core_attn attn_proj", &r);
	cr_log_info("offloaded %.3f GB (by hand %.3f); activations %.3f -> %.3f GB",
		    r.mem_offload_gb, want / 1e9, r0.mem_act_gb, r.mem_act_gb);
	cr_expect_eq(r0.mem_offload_gb, 0);
	cr_expect(fabs(r.mem_offload_gb - want / 1e9) < 1e-9 * want / 1e9);
	cr_expect(fabs(r.mem_act_gb - (r0.mem_act_gb - want / 1e9 + 2 * layer / 1e9)) <
		  1e-9 * r0.mem_act_gb);
	cr_expect(fabs((r0.mem_gb - r.mem_gb) - (want - 2 * layer) / 1e9) < 1e-9 * r0.mem_gb);
}

/* Qwen3-30B-A3B on 8 GPUs at EP 8, bf16, micro-batch 4, offloading mods
 * and recomputing rc (Megatron-Core's --recompute-modules; "" none). */
static void qwen(const char *gpu, const char *mods, const char *rc, cvc_proj_result *r)
{
	char yaml[1024];

	snprintf(yaml, sizeof yaml,
		 "model: {arch: qwen3-30b-a3b, seq: 4096}\n"
		 "training: {global_batch: 256, micro_batch: 4, dtype: bf16, recompute: %s,\n"
		 "           recompute_modules: '%s', offload_modules: '%s'}\n"
		 "parallelism: {tp: 1, pp: 1, ep: 8, etp: 1}\nhardware: {gpu: %s, gpus: 8}\n",
		 rc[0] ? "selective" : "none", rc, mods, gpu);
	cr_assert_eq(tu_proj_first(yaml, NULL, r), 1, "%s", yaml);
	cr_assert(r->valid, "%s: %s", mods, r->reason);
}

/*
 * Claim: fused_group_mlp sends all the routed experts' MLP keeps: with
 * moe_act recomputed (the activation's output not kept) exactly what
 * expert_fc1 and moe_act send between them, and without it the second
 * GEMM's input too.
 */
Test(offload_modules, the_fused_mlp_is_its_parts)
{
	cvc_proj_result fc1, act, fused, fused_all;

	qwen("GB200", "expert_fc1", "moe_act", &fc1);
	qwen("GB200", "moe_act", "moe_act", &act);
	qwen("GB200", "fused_group_mlp", "moe_act", &fused);
	qwen("GB200", "fused_group_mlp", "", &fused_all);
	cr_log_info("expert_fc1 %.4f + moe_act %.4f = fused %.4f GB; without recompute %.4f GB",
		    fc1.mem_offload_gb, act.mem_offload_gb, fused.mem_offload_gb,
		    fused_all.mem_offload_gb);
	cr_expect(fc1.mem_offload_gb > 0 && act.mem_offload_gb > 0);
	cr_expect(fabs(fused.mem_offload_gb - fc1.mem_offload_gb - act.mem_offload_gb) <
		  1e-9 * fused.mem_offload_gb);
	cr_expect_gt(fused_all.mem_offload_gb, fused.mem_offload_gb);
}

/*
 * Claim: the copies cost only what they take beyond the compute they run
 * beside.  A B200 board's host link (PCIe Gen5, 64 GB/s each way) waits
 * for the experts' fused MLP of Qwen3-30B-A3B; GB200's NVLink-C2C (225
 * GB/s a GPU each way) waits less; the wait is all the step and the
 * compute gain; and it widens the step's interval.
 */
Test(offload_modules, a_slower_host_link_waits_longer)
{
	cvc_proj_result b0, b, g0, g;

	qwen("B200", "", "", &b0);
	qwen("B200", "fused_group_mlp", "", &b);
	qwen("GB200", "", "", &g0);
	qwen("GB200", "fused_group_mlp", "", &g);
	cr_log_info("B200 waits %.3f s of %.3f; GB200 %.3f s of %.3f", b.offload_s, b.step_s,
		    g.offload_s, g.step_s);
	cr_assert_gt(b.offload_s, 0);
	cr_expect_lt(g.offload_s, b.offload_s);
	cr_expect(fabs(b.step_s - b0.step_s - b.offload_s) < 1e-9 * b.step_s);
	cr_expect(fabs(b.compute_s - b0.compute_s - b.offload_s) < 1e-9 * b.step_s);
	cr_expect(fabs(g.step_s - g0.step_s - g.offload_s) < 1e-9 * g.step_s);
	cr_expect(b.step_s_hi - b.step_s_lo > b0.step_s_hi - b0.step_s_lo);
}

/* Claim: what Megatron-Core and Megatron-Bridge refuse with fine-grained
 * offloading, cvc refuses with a reason; a module it does not know is an
 * error naming the file, line and column. */
Test(offload_modules, refused_as_megatron_core_refuses)
{
	static const struct {
		const char *model, *extra, *par, *why;
	} bad[] = {
		{"qwen3-30b-a3b", "offload_modules: attn_proj", "ep: 8", "attn_proj needs core_attn"},
		{"qwen3-30b-a3b", "offload_modules: 'fused_group_mlp moe_act'", "ep: 8",
		 "not beside expert_fc1 or moe_act"},
		{"llama3-8b", "offload_modules: expert_fc1", "tp: 1", "need experts"},
		{"qwen3-30b-a3b", "offload_modules: core_attn, cpu_offload_layers: 4", "ep: 8",
		 "not both"},
		{"llama3-8b", "offload_modules: core_attn", "tp_row: 2, tp_col: 2",
		 "3D tensor-parallel grid"},
	};
	static const char unknown[] = "model: {arch: qwen3-30b-a3b}\n"
				      "training: {offload_modules: 'core_attn expert_fc2'}\n"
				      "hardware: {gpu: H100-SXM, gpus: 8}\n";
	cvc_proj_study *st = NULL;

	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		char yaml[512];
		cvc_proj_result r;

		snprintf(yaml, sizeof yaml,
			 "model: {arch: %s, seq: 4096}\ntraining: {%s}\n"
			 "parallelism: {%s}\nhardware: {gpu: H100-SXM, gpus: 8}\n",
			 bad[i].model, bad[i].extra, bad[i].par);
		cr_assert_eq(tu_proj_first(yaml, NULL, &r), 1, "%s", yaml);
		cr_expect(!r.valid && strstr(r.reason, bad[i].why), "%s: %s", bad[i].extra,
			  r.reason);
	}
	cr_assert_eq(cvc_proj_study_parse("o.yaml", unknown, strlen(unknown), &st),
		     CVC_ERR_FORMAT);
	cr_expect(strstr(cvc_proj_study_errmsg(st), "'o.yaml': line 2, column 29:") &&
			  strstr(cvc_proj_study_errmsg(st), "'expert_fc2' is not one of"),
		  "%s", cvc_proj_study_errmsg(st));
	cvc_proj_study_free(st);
}

/* Claim: modules that keep no input of their own in the layout (full
 * recompute keeps only each layer's input) offload nothing, and the row
 * says why. */
Test(offload_modules, said_where_nothing_is_offloaded)
{
	static const char yaml[] = "model: {arch: qwen3-30b-a3b, seq: 4096}\n"
				   "training: {recompute: full, offload_modules: core_attn}\n"
				   "parallelism: {ep: 8}\nhardware: {gpu: H100-SXM, gpus: 8}\n";
	cvc_proj_result r;

	cr_assert_eq(tu_proj_first(yaml, NULL, &r), 1);
	cr_assert(r.valid, "%s", r.reason);
	cr_expect_eq(r.mem_offload_gb, 0);
	cr_expect_eq(r.offload_s, 0);
	cr_expect(strstr(r.warnings, "offload_modules: not applied") != NULL, "%s", r.warnings);
}

/*
 * Claim: validate takes Nemotron 3 Ultra's recipe offloading (Megatron-
 * Bridge's nemotron_3_ultra_pretrain_config: fused_group_mlp) for a
 * Megatron-Bridge row that does not say, and says so; a row's own
 * offload_modules cell wins; and offloading moves the row's projection
 * only by the wait it prices.
 */
Test(offload_modules, validate_reads_the_ultra_recipe)
{
	cvc_proj_validation v;
	char *out = tu_validate_text(
		"model,layers,hidden,heads,seq,tp,pp,ep,zero_fsdp,micro_batch,global_batch,gpus,gpu,"
		"dtype,recompute,recompute_modules,offload_modules,tokens_per_s_per_gpu,source\n"
		"Nemotron-3-Ultra-550B-A55B,,,,8192,1,1,64,FSDP,1,256,256,GB300 (NVL72),mxfp8,"
		"selective,moe_act,,3552,Megatron-Bridge performance summary 26.08\n"
		"Nemotron-3-Ultra-550B-A55B,,,,8192,1,1,64,FSDP,1,256,256,GB300 (NVL72),mxfp8,"
		"selective,moe_act,core_attn,3552,Megatron-Bridge performance summary 26.08\n",
		NULL, &v, CVC_OK);
	char line[8192];

	cr_assert_eq(v.all.expressible, 2);
	cr_assert(tu_line_with(out, ",moe_act,,3552,", line, sizeof line));
	cr_expect(strstr(line, "offload_modules=fused_group_mlp (Megatron-Bridge's recipe for "
			       "nemotron-3-ultra-550b-a55b") != NULL,
		  "%s", line);
	cr_assert(tu_line_with(out, ",moe_act,core_attn,3552,", line, sizeof line));
	cr_expect(strstr(line, "offload_modules=fused_group_mlp") == NULL, "%s", line);
	free(out);
	cvc_proj_validation_release(&v);
}

struct ultra {
	int n[2];
	int fits[2][8];
	double wait[2][8], step[2][8];
	char mods[2][8][48];
};

static int ultra_cb(void *user, const cvc_proj_scenario *sc, const cvc_proj_result *r)
{
	struct ultra *u = user;
	int g = !strcmp(sc->gpu, "GB200") ? 0 : 1, i;

	if (!(sc->experts > 1)) /* the cpu_offload_layers part (test_offload.c) */
		return 0;
	cr_assert(r->valid, "%s: %s", sc->gpu, r->reason);
	i = u->n[g]++;
	cr_assert_lt(i, 8);
	u->fits[g][i] = r->fits, u->wait[g][i] = r->offload_s, u->step[g][i] = r->step_s;
	snprintf(u->mods[g][i], sizeof u->mods[g][i], "%s", sc->offload_modules);
	return 0;
}

/*
 * Claim (examples/offload.yaml, its Nemotron 3 Ultra part): on 256 GPUs
 * neither a GB200 nor a B200 holds the model's activations unless the
 * experts' fused MLP goes to the host (the attention's inputs or the
 * activation's alone are not enough), as Megatron-Bridge's recipe does;
 * over GB200's NVLink-C2C the copies cost nothing, over a B200 board's
 * PCIe they cost over a fifth of the step.
 */
Test(offload_modules, the_example_study)
{
	struct ultra u;

	memset(&u, 0, sizeof u);
	tu_study_file_run(CVC_SOURCE_DIR "/examples/offload.yaml", CVC_PROJ_NO_MARGINAL, ultra_cb,
			  &u);
	for (int g = 0; g < 2; g++) {
		cr_assert_eq(u.n[g], 4, "%d scenarios", u.n[g]);
		for (int i = 0; i < 4; i++) {
			int fused = !strcmp(u.mods[g][i], "fused_group_mlp");

			cr_log_info("%s %-20s fits %d, waits %.2f s of %.2f", g ? "B200" : "GB200",
				    u.mods[g][i], u.fits[g][i], u.wait[g][i], u.step[g][i]);
			cr_expect_eq(u.fits[g][i], fused, "%s", u.mods[g][i]);
			if (fused && g == 0)
				cr_expect_eq(u.wait[g][i], 0);
			if (fused && g == 1)
				cr_expect_gt(u.wait[g][i], 0.2 * u.step[g][i]);
		}
	}
}
