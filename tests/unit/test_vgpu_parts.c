/*
 * test_vgpu_parts.c - which catalog part a published row's gpu cell names
 * when the cell says more than the GPU's name: the memory (a part sold
 * with more than one) and the power limit (projector/vgpu.c; docs/
 * SCENARIOS.md "The hardware cell").
 */
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "cvc/cvc_model.h"
#include "cvc/cvc_project.h"
#include "projector/vrow.h"
#include "testutil.h"

/*
 * Claim: the memory a cell states picks the catalog's part with it (was:
 * the name alone, so torchtitan's H100 96GB HBM2e at 500 W was priced as
 * the 80 GB HBM3 SXM at 700 W); a rate in GB/s is no memory; a size the
 * part already has, or one the catalog has no part for, changes nothing.
 */
Test(vgpu_parts, the_stated_memory_picks_the_part)
{
	cvc_hw_catalog *cat = NULL;
	struct vgpu g;

	cr_assert_eq(cvc_hw_catalog_new(&cat), CVC_OK);
	cr_assert_eq(vgpu_read(cat, "H100-SXM (96GB HBM2e 500W)", 8, &g), 0);
	cr_expect_str_eq(g.spec->name, "H100-SXM-96GB");
	cr_expect_str_eq(g.variant_of, "H100-SXM");
	cr_expect_float_eq(g.power_w, 500, 1e-9);
	cr_expect_float_eq(g.spec->hbm_bw_gbps, 2400, 1e-9);
	cr_assert_eq(vgpu_read(cat, "A100 (40 GB, 400 W)", 8, &g), 0);
	cr_expect_str_eq(g.spec->name, "A100-SXM-40GB");
	cr_expect_float_eq(g.power_w, 400, 1e-9);
	cr_assert_eq(vgpu_read(cat, "A100-SXM-80GB", 8, &g), 0);
	cr_expect_str_eq(g.spec->name, "A100-SXM-80GB");
	cr_expect_eq(g.variant_of[0], 0);
	cr_assert_eq(vgpu_read(cat, "H200 (141GB HBM3e)", 8, &g), 0);
	cr_expect_str_eq(g.spec->name, "H200-SXM");
	cr_expect_eq(g.variant_of[0], 0);
	cr_assert_eq(vgpu_read(cat, "H100 (94GB)", 8, &g), 0);
	cr_expect_str_eq(g.spec->name, "H100-SXM");
	cr_assert_eq(vgpu_read(cat, "H800-SXM (NVLink 400GB/s)", 8, &g), 0);
	cr_expect_eq(g.mem_gb, 0, "a rate is no memory size: %g", g.mem_gb);
	cr_expect_eq(g.power_w, 0);
	cr_assert_eq(vgpu_read(cat, "GB200 (NVL72)", 8, &g), 0);
	cr_expect_eq(g.mem_gb, 0, "GB200's digits are its name: %g", g.mem_gb);
	cvc_hw_catalog_free(cat);
}

/*
 * Claim: a power limit the gpu cell states is either the part's catalog
 * figure (nothing said) or said not to be priced, never dropped unsaid.
 */
Test(vgpu_parts, a_stated_power_limit_is_priced_or_said)
{
	static const char text[] =
		"model,layers,hidden,ffn,heads,kv_heads,vocab,seq,tp,pp,micro_batch,global_batch,"
		"gpus,gpu,dtype,tokens_per_s_per_gpu,source\n"
		"Llama3.1-8B,,,,,,,8192,1,1,2,16,8,H100-SXM (500W),bf16,6000,torchtitan\n"
		"Llama3.1-8B,,,,,,,8192,1,1,2,16,8,H100-SXM (96GB HBM2e 500W),bf16,6000,"
		"torchtitan\n";
	cvc_proj_validation v;
	char *out = tu_validate_text(text, NULL, &v, CVC_OK), *p = out, *h[64], *f[64];
	size_t nh = tu_record(&p, h, 64);
	int ca = tu_col(h, nh, "assumed");

	tu_next_row(&p, f, nh, 0);
	cr_expect(strstr(f[ca], "power 500 W ('H100-SXM (500W)') not priced: H100-SXM at its "
		  "catalog 700 W"), "%s", f[ca]);
	tu_next_row(&p, f, nh, 1);
	cr_expect(strstr(f[ca], "gpu=H100-SXM-96GB ('H100-SXM (96GB HBM2e 500W)': H100-SXM with "
		  "the 96 GB the cell states)"), "%s", f[ca]);
	cr_expect_null(strstr(f[ca], "not priced"), "%s", f[ca]);
	free(out);
	cvc_proj_validation_release(&v);
}
