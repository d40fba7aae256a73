/*
 * test_rubin.c - Rubin (VR200), the generation after Blackwell Ultra, by its
 * preliminary datasheet figures only (models/hw/catalog.csv; docs/MODELS.md
 * "Rubin (VR200) by named figures only").  No kernel of it is measured in cvc, so
 * each of its operators is carried from a measured GPU; these tests pin
 * which one, that no table measured on another link is read as NVLink 6's,
 * and that --origins says so for the GPUs a study names.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "cvc/cvc_model.h"
#include "models/opmodel_int.h"
#include "testutil.h"

static const cvc_hw_spec *spec_of(const cvc_hw_catalog *cat, const char *gpu)
{
	const cvc_hw_spec *s = cvc_hw_catalog_lookup(cat, gpu);

	cr_assert_not_null(s, "%s is not in the catalog", gpu);
	return s;
}

/* The names the stacks print: Megatron-Bridge's "vr200" / "vrnvl72" and
 * its summary's "System: DGX-GB300", the compute capability sm_107. */
Test(rubin, names_resolve)
{
	static const struct { const char *q, *want; } cases[] = {
		{"VR200", "VR200"}, {"Rubin", "VR200"}, {"NVIDIA Rubin", "VR200"},
		{"sm_107", "VR200"}, {"VRNVL72", "vr200-nvl72"}, {"Vera Rubin NVL72", "vr200-nvl72"},
		{"DGX-VR200", "vr200-nvl72"}, {"DGX-GB300", "gb300-nvl72"},
		{"DGX-GB200", "gb200-nvl72"},
	};
	cvc_hw_catalog *cat = NULL;

	cr_assert_eq(cvc_hw_catalog_new(&cat), CVC_OK);
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		const cvc_hw_spec *s = cvc_hw_catalog_find(cat, cases[i].q, NULL);

		cr_expect(s && !strcmp(s->name, cases[i].want), "'%s' -> '%s', want '%s'",
			  cases[i].q, s ? s->name : "(none)", cases[i].want);
	}
	/* the rack takes its GPU's figures: the NVL72 tray of 4 in a domain
	 * of 72, NVLink 6 at 1.8 TB/s a direction, 1.6 Tb/s of NIC a GPU */
	{
		const cvc_hw_spec *r = spec_of(cat, "vr200-nvl72");

		cr_expect_eq(r->peak_tflops[CVC_HW_FP8], 17500);
		cr_expect_eq(r->gpus_per_node, 4);
		cr_expect_eq(cvc_hw_domain(r), 72);
		cr_expect_eq(r->intra_bw_gbps, 1800);
		cr_expect_eq(r->inter_bw_gbps, 200);
	}
	cvc_hw_catalog_free(cat);
}

/*
 * What Rubin is priced from.  Expected: the matmul ceiling and the
 * attention curves of the nearest measured GPU of its shape (GB200), the
 * sustained clock of Blackwell's measured row (B200), NVFP4 at the share
 * the B300 measured (its 5.8x bf16 peak is the nearest to Rubin's 8.75x),
 * and NVLink 6's collectives not from NVLink 5's table (only measured
 * links: the H100 table at NVLink 3 made Selene's all-reduces 20% slow),
 * which GB300 at NVLink 5 still reads.
 */
Test(rubin, carried_from_the_measured_gpus)
{
	cvc_hw_catalog *cat = NULL;
	const cvc_hw_spec *v, *b300;
	const char *from = NULL;
	double eff, fill, share;

	cr_assert_eq(cvc_hw_catalog_new(&cat), CVC_OK);
	v = spec_of(cat, "VR200");
	b300 = spec_of(cat, "B300");
	share = opm_ceiling_share(cat, v, &from);
	cr_expect_str_eq(from ? from : "", "GB200");
	cr_expect_float_eq(share, opm_ceiling_share_of("GB200"), 1e-12);
	cr_expect_str_eq(opm_attn_ref_name(opm_attn_ref_gpu(v)), "GB200");
	cr_expect_str_eq(opm_burst_ratio_gpu(v), "B200");
	cr_expect_float_eq(opm_fp4_share(v), opm_fp4_share(b300), 1e-12);
	cr_expect_lt(opm_fp4_share(v), opm_fp4_share(spec_of(cat, "GB200")));
	cr_expect_eq(opm_coll_nvlink_ref(v, CVC_MODEL_ALLREDUCE, &eff, &fill), 0,
		     "NVLink 6 priced from another generation's measured table");
	cr_expect_eq(opm_coll_nvlink_ref(spec_of(cat, "GB300"), CVC_MODEL_ALLREDUCE, &eff, &fill),
		     1);
	cvc_hw_catalog_free(cat);
}

/* --origins names the GPUs the study priced (it printed A100, H100 and B200
 * whatever a study named), each with where its figures come from. */
Test(rubin, origins_name_the_gpus_the_study_priced)
{
	static const char yaml[] =
		"name: rubin\n"
		"defaults:\n"
		"  training: {global_batch: 512, micro_batch: 4, dtype: fp8, recompute: none}\n"
		"  hardware: {gpus: 8}\n"
		"scenarios:\n"
		"  - model: {arch: qwen3-30b-a3b, seq: 4096}\n"
		"    parallelism: {tp: 1, pp: 1, ep: 8}\n"
		"    hardware: {gpu: [GB300, VR200]}\n";
	const char *path = tu_path(tu_tmpdir(), "rubin-origins.yaml");
	char args[1024], *out = NULL, *err = NULL;

	cr_assert_eq(tu_write(path, yaml, sizeof yaml - 1), 0);
	snprintf(args, sizeof args, "project --origins --intervals off '%s'", path);
	cr_assert_eq(tu_cvc(args, &out, &err), 0, "stderr: %s", err);
	cr_expect(strstr(err, "models: GB300 (GB300): gemm:"), "%s", err);
	cr_expect(strstr(err, "models: VR200 (VR200): gemm:"), "%s", err);
	cr_expect(strstr(err, "carried to VR200"), "%s", err);
	cr_expect(strstr(err, "its softmax at 15 TeraExp/s"), "%s", err);
	cr_expect_null(strstr(err, "models: A100"), "a GPU the study never named: %s", err);
	cr_expect_null(strstr(err, "models: B200"), "a GPU the study never named: %s", err);
	free(out);
	free(err);
}
