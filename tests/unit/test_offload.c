/*
 * test_offload.c - activations offloaded to the host (cpu_offload_layers):
 * the memory they leave, the copies' wait where their windows are too
 * short, what Megatron-Core refuses beside them, and validate reading the
 * Llama 3 presets that run them (projector/offload.c, memory.c, run.c,
 * vrecipe.c).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "cvc/cvc_model.h"
#include "cvc/cvc_project.h"
#include "testutil.h"

/* Megatron-Bridge's Llama 3 70B FSDP preset: 64 GPUs, FP8, micro-batch 2,
 * 8192 tokens, no recompute. */
static int llama70b(const char *gpu, double n, const char *extra, cvc_proj_scenario *sc,
		    cvc_proj_result *r)
{
	char yaml[1024];

	snprintf(yaml, sizeof yaml,
		 "model: {arch: llama3-70b, seq: 8192}\n"
		 "training: {global_batch: 128, micro_batch: 2, dtype: fp8, fp8_recipe: current,\n"
		 "           fp8_param_gather: true, zero: 3, cpu_offload_layers: %g%s}\n"
		 "parallelism: {tp: 1, pp: 1}\nhardware: {gpu: %s, gpus: 64}\n",
		 n, extra, gpu);
	return tu_proj_first(yaml, sc, r);
}

/* Claim: the first N of L layers' activations leave the GPU's count for
 * the host's, N/L of them, so the preset that ran fits where the whole
 * count did not. */
Test(offload, memory_moves_to_the_host)
{
	cvc_proj_scenario sc;
	cvc_proj_result r0, r40;

	cr_assert_eq(llama70b("GB200", 0, "", &sc, &r0), 1);
	cr_assert_eq(llama70b("GB200", 40, "", &sc, &r40), 1);
	cr_assert(r0.valid && r40.valid, "%s / %s", r0.reason, r40.reason);
	cr_expect_eq(r0.mem_offload_gb, 0);
	cr_expect(fabs(r40.mem_offload_gb - r0.mem_act_gb * 40 / 80) < 1e-9 * r0.mem_act_gb,
		  "offloaded %.6f of %.6f GB", r40.mem_offload_gb, r0.mem_act_gb);
	cr_expect(fabs(r40.mem_act_gb - r0.mem_act_gb / 2) < 1e-9 * r0.mem_act_gb);
	cr_expect(fabs((r0.mem_gb - r40.mem_gb) - r40.mem_offload_gb) < 1e-9 * r0.mem_gb);
	cr_expect(!r0.fits && r40.fits, "%.1f / %.1f GB of %.1f", r0.mem_gb, r40.mem_gb,
		  r40.hbm_gb);
}

/* Claim: on GB200's NVLink-C2C each copy (3.6 GB a layer) runs beside
 * the two layers' compute Transformer Engine's windows give it at 40 of
 * 80 layers, so the step is the one without offloading. */
Test(offload, copies_hidden_under_their_windows)
{
	cvc_proj_scenario sc;
	cvc_proj_result r0, r40;

	cr_assert_eq(llama70b("GB200", 0, "", &sc, &r0), 1);
	cr_assert_eq(llama70b("GB200", 40, "", &sc, &r40), 1);
	cr_expect_eq(r40.offload_s, 0);
	cr_expect_eq(r40.step_s, r0.step_s);
}

/* Claim: over an H100's PCIe Gen5 a copy outlasts one layer's forward:
 * at one-layer windows (N above L/2) every offloaded layer waits alike, so
 * the wait per layer is the same at 60 and 79 layers; at 40 (two-layer
 * windows) it is less; and the wait is all the step gains. */
Test(offload, a_pcie_host_waits_for_one_layer_windows)
{
	cvc_proj_scenario sc;
	cvc_proj_result r0, r40, r60, r79;

	cr_assert_eq(llama70b("H100-SXM", 0, "", &sc, &r0), 1);
	cr_assert_eq(llama70b("H100-SXM", 40, "", &sc, &r40), 1);
	cr_assert_eq(llama70b("H100-SXM", 60, "", &sc, &r60), 1);
	cr_assert_eq(llama70b("H100-SXM", 79, "", &sc, &r79), 1);
	cr_assert(r79.offload_s > 0.1 * r0.step_s, "%.3f s of %.3f", r79.offload_s, r0.step_s);
	cr_expect(fabs(r79.offload_s / 79 - r60.offload_s / 60) < 1e-9 * r79.offload_s,
		  "%.6f / %.6f s a layer", r79.offload_s / 79, r60.offload_s / 60);
	cr_expect(r40.offload_s / 40 < r60.offload_s / 60);
	cr_expect(fabs(r79.step_s - r0.step_s - r79.offload_s) < 1e-9 * r79.step_s);
	cr_expect(fabs(r79.compute_s - r0.compute_s - r79.offload_s) < 1e-9 * r79.step_s);
	cr_expect(r79.tokens_per_s < r0.tokens_per_s);
	/* the wait says how sure it is: the copies' spread widens the step's
	 * interval, which still holds the step */
	cr_expect(r79.step_s_hi - r79.step_s_lo > r0.step_s_hi - r0.step_s_lo, "%.3f-%.3f / %.3f-%.3f",
		  r79.step_s_lo, r79.step_s_hi, r0.step_s_lo, r0.step_s_hi);
	cr_expect(r79.step_s_lo < r79.step_s && r79.step_s < r79.step_s_hi);
}

/* Claim: a GPU whose host link the catalog does not give prices no wait
 * and says so. */
Test(offload, an_unknown_host_link_is_said)
{
	cvc_proj_scenario sc;
	cvc_proj_result r;

	cr_assert_eq(llama70b("VR200", 79, "", &sc, &r), 1);
	cr_assert(r.valid, "%s", r.reason);
	cr_expect_eq(r.offload_s, 0);
	cr_expect(r.mem_offload_gb > 0);
	cr_expect(strstr(r.warnings, "cpu_offload_layers: the copies to the host not priced") !=
			  NULL,
		  "%s", r.warnings);
}

/* Claim: what Megatron-Core's TransformerConfig refuses beside CPU
 * offloading (pipeline parallelism, recompute, CUDA graphs, all the
 * layers), cvc refuses with a reason. */
Test(offload, megatron_core_refuses_what_cvc_refuses)
{
	static const struct {
		const char *extra;
		double n;
		const char *why;
	} c[] = {
		{", recompute: selective", 40, "recompute none"},
		{", cuda_graphs: true", 40, "cuda_graphs off"},
		{"", 80, "below layers"},
		{"", 2.5, "whole number"},
	};
	cvc_proj_scenario sc;
	cvc_proj_result r;
	char yaml[512];

	for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
		int n = llama70b("GB200", c[i].n, c[i].extra, &sc, &r);

		cr_expect(n == 0 || !r.valid, "case %zu ran", i);
		if (n == 1)
			cr_expect(strstr(r.reason, c[i].why) != NULL, "case %zu: %s", i, r.reason);
	}
	snprintf(yaml, sizeof yaml,
		 "model: {arch: llama3-70b, seq: 8192}\n"
		 "training: {global_batch: 128, dtype: bf16, cpu_offload_layers: 10}\n"
		 "parallelism: {tp: 1, pp: 2}\nhardware: {gpu: GB200, gpus: 64}\n");
	cr_assert_eq(tu_proj_first(yaml, &sc, &r), 1);
	cr_expect(!r.valid && strstr(r.reason, "needs pp 1"), "%s", r.reason);
}

/* Claim: validate takes the offloaded layers of the Megatron-Bridge preset
 * a row's layout is (Llama 3 70B, 64 GB200, FSDP, micro-batch 2, FP8: 40),
 * said with its source, and that row then fits; a layout that is not the
 * preset's (micro-batch 1) and another stack's row take none. */
Test(offload, validate_reads_the_llama3_gb200_preset)
{
	static const char text[] =
		"model,layers,hidden,heads,seq,tp,pp,cp,zero_fsdp,micro_batch,global_batch,gpus,"
		"gpu,dtype,tokens_per_s_per_gpu,source,notes\n"
		"Llama3-70B,80,8192,64,8192,1,1,1,FSDP (shard group 64),2,256,64,GB200 (NVL72),"
		"fp8,4224,NVIDIA-NeMo/Megatron-Bridge performance-summary-archive @067f987d "
		"(Megatron Bridge performance summary),Release 26.04.01 NeMo container\n"
		"Llama3-70B,80,8192,64,8192,1,1,1,FSDP (shard group 64),1,256,64,GB200 (NVL72),"
		"fp8,4224,NVIDIA-NeMo/Megatron-Bridge performance-summary-archive @067f987d "
		"(Megatron Bridge performance summary),Release 26.04.01 NeMo container\n"
		"Llama3-70B,80,8192,64,8192,1,1,1,FSDP (shard group 64),2,256,64,GB200 (NVL72),"
		"fp8,4224,Megatron-LM,\n";
	static const char *const want[][3] = {
		{"cpu_offload_layers=40 (Megatron-Bridge's performance recipe for llama3-70b on "
		 "GB200: NVIDIA-NeMo/Megatron-Bridge scripts/performance/configs/llama/"
		 "llama3_workload_base_configs.py @3dafb00a",
		 "!memory:", NULL},
		{"!cpu_offload_layers", NULL, NULL},
		{"!cpu_offload_layers", NULL, NULL},
	};

	tu_rows_said(text, want, sizeof want / sizeof want[0], NULL);
}

/* Claim: the shipped catalog gives each GPU's host link as its datasheet
 * reads (H100: PCIe Gen5 x16, 64 GB/s each way; GB200: NVLink-C2C's 900
 * GB/s bidirectional per superchip of two GPUs, 225), a system row takes
 * its GPU's, and a catalog written before the column loads with the link
 * unknown. */
Test(offload, the_catalog_gives_the_host_link)
{
	static const char old[] =
		"name,kind,base,vendor,aliases,fp32_tflops,tf32_tflops,bf16_tflops,fp16_tflops,"
		"fp8_tflops,hbm_bw_gbps,hbm_gb,sm_count,intra_bw_gbps,gpus_per_node,"
		"inter_bw_gbps,tdp_w,source\n"
		"OLD-GPU,gpu,,NVIDIA,,10,100,200,200,400,2000,80,100,300,8,50,500,test\n";
	cvc_hw_catalog *cat = NULL;
	const cvc_hw_spec *s;

	cr_assert_eq(cvc_hw_catalog_new(&cat), CVC_OK);
	cr_assert(s = cvc_hw_catalog_lookup(cat, "H100-SXM"));
	cr_expect_eq(s->host_bw_gbps, 64);
	cr_assert(s = cvc_hw_catalog_lookup(cat, "GB200"));
	cr_expect_eq(s->host_bw_gbps, 225);
	cr_assert(s = cvc_hw_catalog_lookup(cat, "gb200-nvl72"));
	cr_expect_eq(s->host_bw_gbps, 225);
	cr_assert_eq(cvc_hw_catalog_load_text(cat, "old.csv", old, sizeof old - 1), CVC_OK, "%s",
		     cvc_hw_catalog_errmsg(cat));
	cr_assert(s = cvc_hw_catalog_lookup(cat, "OLD-GPU"));
	cr_expect_eq(s->host_bw_gbps, 0);
	cvc_hw_catalog_free(cat);
}

/* Claim: on ../shared/published/blackwell-moe-runs.csv no Llama 3 row of
 * an offloading preset is counted over its HBM any more (they were, up to
 * 80%: docs/MODELS.md "Known gaps"), and the rows counted over are at
 * most 12 and at most 31% over. */
Test(offload, the_shared_llama_presets_fit)
{
	cvc_proj_validation v;
	char *out = tu_validate(tu_shared("published/blackwell-moe-runs.csv"), NULL, &v, CVC_OK);
	char *p = out, *h[64], *f[64];
	size_t nh = tu_record(&p, h, 64), row = 0, rows = 0;
	int ca = tu_col(h, nh, "assumed");

	cr_assert(ca >= 0);
	while (*p) {
		tu_next_row(&p, f, nh, row++);
		if (strstr(f[ca], "cpu_offload_layers=")) {
			rows++;
			cr_expect(strstr(f[ca], "yet the run fit") == NULL, "%s", f[ca]);
		}
	}
	cr_expect_geq(rows, 7, "%zu rows offload", rows);
	cr_expect_leq(v.all.unfit_rows, 12, "%d rows over", v.all.unfit_rows);
	cr_expect_leq(v.all.unfit_worst_pct, 32, "%g%% over", v.all.unfit_worst_pct);
	free(out);
	cvc_proj_validation_release(&v);
}

struct sweep {
	double n[3][16], fits[3][16], mem[3][16], host[3][16], wait[3][16], step[3][16];
	int count[3];
};

static int sweep_cb(void *user, const cvc_proj_scenario *sc, const cvc_proj_result *r)
{
	struct sweep *s = user;
	int g = !strcmp(sc->gpu, "GB200") ? 0 : !strcmp(sc->gpu, "B200") ? 1 : 2, i;

	if (sc->experts > 1) /* the fine-grained part (test_offload_modules.c) */
		return 0;
	i = s->count[g]++;
	cr_assert(r->valid, "%s: %s", sc->gpu, r->reason);
	cr_assert_lt(i, 16);
	s->n[g][i] = sc->cpu_offload_layers, s->fits[g][i] = r->fits;
	s->mem[g][i] = r->mem_gb, s->host[g][i] = r->mem_offload_gb;
	s->wait[g][i] = r->offload_s, s->step[g][i] = r->step_s;
	return 0;
}

/* Claim (examples/offload.yaml): each layer offloaded takes its share off
 * the GPU and onto the host; of the sweep, Megatron-Bridge's own 40 layers
 * are the fewest that fit on GB200, with no wait; the B200 and H100 boards
 * need more (their HBM: 180 and 80 GB) and, over PCIe, wait on the copies
 * for over a fifth of the step at the fewest that fit. */
Test(offload, the_example_study)
{
	static const char *const gpu[3] = {"GB200", "B200", "H100-SXM"};
	struct sweep s;

	memset(&s, 0, sizeof s);
	tu_study_file_run(CVC_SOURCE_DIR "/examples/offload.yaml", CVC_PROJ_NO_MARGINAL, sweep_cb,
			  &s);
	for (int g = 0; g < 3; g++) {
		int first = -1;

		cr_assert_eq(s.count[g], 9, "%s: %d scenarios", gpu[g], s.count[g]);
		for (int i = 1; i < s.count[g]; i++) {
			cr_expect_lt(s.mem[g][i], s.mem[g][i - 1], "%s", gpu[g]);
			cr_expect_gt(s.host[g][i], s.host[g][i - 1], "%s", gpu[g]);
		}
		for (int i = 0; i < s.count[g] && first < 0; i++)
			if (s.fits[g][i])
				first = i;
		cr_assert_geq(first, 0, "%s: no count fits", gpu[g]);
		cr_log_info("%s: fits from %g layers, waiting %.2f s of %.2f", gpu[g], s.n[g][first],
			    s.wait[g][first], s.step[g][first]);
		if (g == 0) {
			cr_expect_eq(s.n[g][first], 40);
			cr_expect_eq(s.wait[g][first], 0);
		} else {
			cr_expect_gt(s.n[g][first], 40, "%s", gpu[g]);
			cr_expect_gt(s.wait[g][first], 0.2 * s.step[g][first], "%s", gpu[g]);
		}
	}
}
