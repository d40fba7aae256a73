/*
 * test_validate_cells.c - `cvc validate` reads published tables as people
 * write them: the hostile-cell corpus (tests/data/validate-hostile-cells.csv,
 * one odd cell per row) and the ten misreads of issue 32
 * (tests/data/validate-misreads.csv) each give their row the reading or the
 * reason their `expect` column names, never a refused file; the file forms
 * (BOM, CRLF, ';' and tab separators, bad quoting, short, long and empty
 * rows) are read; the grammars behind them (vcell.c, vtext.c, vgpu.c,
 * vstack.c) are held to their cells, with the negations ("FSDP=0", "no
 * FSDP", "without sequence parallel").
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "cvc/cvc_model.h"
#include "cvc/cvc_project.h"
#include "projector/vrow.h"
#include "testutil.h"

/* Validates the file at path (strict as given); returns the output table. */
static char *validate_path(const char *path, int strict, cvc_proj_validation *v,
			   cvc_status want)
{
	cvc_proj_validate_opts o = {NULL, NULL, strict};

	return tu_validate(path, &o, v, want);
}

static char *validate_text(const char *text, size_t n, int strict, cvc_proj_validation *v,
			   cvc_status want)
{
	const char *path = tu_path(tu_tmpdir(), "t.csv");

	cr_assert_eq(tu_write(path, text, n), 0);
	return validate_path(path, strict, v, want);
}

/*
 * Checks every row of a validated corpus: its `expect` cell must occur in
 * "<model>|<measured>|<assumed>" of its output line.  Returns the rows.
 */
static int check_expect(char *out, int *not_projected)
{
	char *h[64], *f[64], *p = out;
	size_t nh = tu_record(&p, h, 64);
	int ce = tu_col(h, nh, "expect"), cm = tu_col(h, nh, "model");
	int cme = tu_col(h, nh, "measured_tokens_per_s_per_gpu"), ca = tu_col(h, nh, "assumed");
	int rows = 0;

	*not_projected = 0;
	for (size_t n; (n = tu_record(&p, f, 64)) > 0; rows++) {
		char hay[4096];

		cr_assert_eq(n, nh, "row %d has %zu cells", rows + 1, n);
		snprintf(hay, sizeof hay, "%s|%s|%s", f[cm], f[cme], f[ca]);
		cr_expect(strstr(hay, f[ce]) != NULL, "row %d: expected '%s' in: %s", rows + 1, f[ce],
			  hay);
		*not_projected += !strncmp(f[ca], "not projected", 13);
	}
	return rows;
}

Test(validate_cells, hostile_corpus_rows_read_or_explained)
{
	cvc_proj_validation v;
	char path[1024], *out;
	int rows, np;

	snprintf(path, sizeof path, "%s/tests/data/validate-hostile-cells.csv", CVC_SOURCE_DIR);
	out = validate_path(path, 0, &v, CVC_OK);
	rows = check_expect(out, &np);
	cr_assert_geq(rows, 40, "the corpus holds %d rows", rows);
	cr_expect_eq(v.all.rows, rows);
	cr_expect_eq(v.all.expressible + np, rows);
	/* every reason the corpus provokes is counted under its kind */
	cr_expect_gt(v.all.not_projected[CVC_PROJ_VWHY_CELL], 8);
	cr_expect_gt(v.all.not_projected[CVC_PROJ_VWHY_MISSING], 1);
	cr_expect_eq(v.all.not_projected[CVC_PROJ_VWHY_HARDWARE], 1);
	cr_expect_gt(v.all.not_projected[CVC_PROJ_VWHY_INVALID], 0);
	cr_log_info("hostile corpus: %d rows, %d projected, %d not", rows, v.all.expressible, np);
	free(out);
	cvc_proj_validation_release(&v);
}

/*
 * The ten misreads: each row says the reading its cell means.  The nvfp4 and
 * blockwise-fp8 rows are projected once the projector prices those dtypes,
 * and named as unpriced (not misread as another dtype) before.
 */
Test(validate_cells, the_ten_misreads_read_right)
{
	cvc_proj_validation v;
	char path[1024], *out, *p, *h[64], *f[64];
	int seen[11] = {0}, np;
	size_t nh;

	snprintf(path, sizeof path, "%s/tests/data/validate-misreads.csv", CVC_SOURCE_DIR);
	out = validate_path(path, 0, &v, CVC_OK);
	p = strdup(out); /* check_expect() cuts its copy into cells */
	cr_assert_not_null(p);
	check_expect(p, &np);
	free(p);
	p = out;
	nh = tu_record(&p, h, 64);
	for (size_t n; (n = tu_record(&p, f, 64)) > 0;) {
		int m = atoi(f[tu_col(h, nh, "misread")]);
		const char *a = f[tu_col(h, nh, "assumed")], *dt = f[tu_col(h, nh, "dtype")];

		cr_assert(m >= 1 && m <= 10);
		seen[m] = 1;
		if (!strncmp(a, "not projected", 13))
			cr_expect(strstr(a, "none cvc prices") &&
					  (strstr(dt, "nvfp4") || strstr(dt, "blockwise")),
				  "misread %d not projected: %s", m, a);
	}
	for (int m = 1; m <= 10; m++)
		cr_expect(seen[m], "misread %d has no row", m);
	free(out);
	cvc_proj_validation_release(&v);
}

/* The file forms spreadsheets and web pages write. */
Test(validate_cells, bom_crlf_semicolon_and_tab_files)
{
	static const char crlf[] = "\xEF\xBB\xBFlayers,hidden,heads,tp,pp,gpus,global_batch,gpu,dtype,"
				   "tokens_per_s_per_gpu\r\n32,4096,32,1,1,8,128,H100,bf16,9000\r\n";
	static const char semi[] = "Layers;Hidden;Heads;TP;PP;GPUs;Global Batch;GPU;dtype;"
				   "tokens_per_s_per_gpu;notes\n32;4096;32;1;1;8;128;H100;bf16;"
				   "9000,5;\"a; note\"\n";
	static const char tab[] = "layers\thidden\theads\ttp\tpp\tgpus\tglobal_batch\tgpu\tdtype\t"
				  "tokens_per_s_per_gpu\n32\t4096\t32\t1\t1\t8\t128\tH100\tbf16\t9000\n";
	cvc_proj_validation v;
	char *out;

	out = validate_text(crlf, sizeof crlf - 1, 0, &v, CVC_OK);
	cr_expect_eq(v.all.expressible, 1, "%s", out);
	cr_expect(strstr(out, "layers,hidden") == out, "the BOM is not a column's: %s", out);
	free(out);
	cvc_proj_validation_release(&v);
	out = validate_text(semi, sizeof semi - 1, 0, &v, CVC_OK);
	cr_expect_eq(v.all.expressible, 1, "%s", out);
	cr_expect(strstr(out, "measured tokens_per_s_per_gpu=9000.5 ('9000,5')"),
		  "a decimal comma in a ';' file: %s", out);
	free(out);
	cvc_proj_validation_release(&v);
	out = validate_text(tab, sizeof tab - 1, 0, &v, CVC_OK);
	cr_expect_eq(v.all.expressible, 1, "%s", out);
	free(out);
	cvc_proj_validation_release(&v);
}

/* Bad quoting costs its row only; short rows read as empty cells, long
 * ones and empty ones are explained. */
Test(validate_cells, broken_rows_cost_only_themselves)
{
	static const char text[] =
		"layers,hidden,heads,tp,pp,gpus,global_batch,gpu,dtype,tokens_per_s_per_gpu,notes\n"
		"32,4096,32,1,1,8,128,H100,bf16,9000,ok\n"
		"32,4096,32,1,1,8,128,H100,bf16,9000,a \"quoted\" word\n"
		"32,4096,32,1,1,8,128,H100,bf16,9000,\"never closed\n"
		"32,4096,32,1,1,8,128,H100,bf16,9000\n"
		"32,4096,32,1,1,8,128,H100,bf16,9000,x,extra\n"
		",,,,,,,,,,\n"
		"32,4096,32,1,1,8,128,H100,bf16,9000,\"last, and fine\"\n";
	cvc_proj_validation v;
	char *out = validate_text(text, sizeof text - 1, 0, &v, CVC_OK);

	cr_expect_eq(v.all.rows, 7, "%s", out);
	cr_expect_eq(v.all.expressible, 3, "%s", out);
	cr_expect_eq(v.all.not_projected[CVC_PROJ_VWHY_ROW], 4, "%s", out);
	/* (the output doubles the quotes of its own cells) */
	cr_expect(strstr(out, "not projected: line 3: expected '\"\"' only inside a quoted field"),
		  "%s", out);
	cr_expect(strstr(out, "not projected: line 4: expected ',' or a line end after a quoted "
			      "field (the row's first line skipped)"), "%s", out);
	cr_expect(strstr(out, "cells 11-11 empty (the line has 10 of the header's 11)"), "%s", out);
	cr_expect(strstr(out, "not projected: expected 11 cells, got 12"), "%s", out);
	cr_expect(strstr(out, "not projected: an empty row"), "%s", out);
	cr_expect(strstr(out, "\"last, and fine\""), "%s", out);
	free(out);
	cvc_proj_validation_release(&v);
}

/* What is not a table is still refused, with the file and where. */
Test(validate_cells, not_a_table_is_refused)
{
	static const char bin[] = "layers,hidden,heads,global_batch,tokens_per_s_per_gpu\n1,2\0,3";
	char dir[1024], args[2048], *out = NULL, *err = NULL;

	/* tu_cvc() makes scratch folders of its own: keep this one's name */
	snprintf(dir, sizeof dir, "%s", tu_tmpdir());
	cr_assert_eq(tu_write(tu_path(dir, "bin.csv"), bin, sizeof bin - 1), 0);
	cr_assert_eq(tu_write(tu_path(dir, "empty.csv"), "", 0), 0);
	cr_assert_eq(tu_write(tu_path(dir, "cols.csv"), "a,b\n1,2\n", 8), 0);
	snprintf(args, sizeof args, "validate '%s'", tu_path(dir, "bin.csv"));
	cr_expect_eq(tu_cvc(args, &out, &err), 2);
	cr_expect(strstr(err, "bin.csv': byte 57: expected a text table (CSV), found a NUL byte"),
		  "%s", err);
	free(out);
	free(err);
	snprintf(args, sizeof args, "validate '%s'", tu_path(dir, "empty.csv"));
	cr_expect_eq(tu_cvc(args, &out, &err), 2);
	cr_expect(strstr(err, "empty.csv': line 1: expected a header line"), "%s", err);
	free(out);
	free(err);
	snprintf(args, sizeof args, "validate '%s'", tu_path(dir, "cols.csv"));
	cr_expect_eq(tu_cvc(args, &out, &err), 2);
	cr_expect(strstr(err, "cols.csv': line 1: expected a header with column 'layers'"), "%s",
		  err);
	free(out);
	free(err);
}

/* --strict: a row that states everything is projected; one default,
 * guess or remark and the row says which instead. */
Test(validate_cells, strict_projects_only_what_rows_state)
{
	static const char text[] =
		"layers,hidden,heads,kv_heads,ffn,ffn_type,vocab,seq,global_batch,micro_batch,tp,pp,"
		"vpp,cp,sp,gpus,gpu,dtype,recompute,framework,zero_fsdp,tokens_per_s_per_gpu\n"
		"32,4096,32,8,14336,swiglu,128256,8192,128,1,1,1,1,1,0,8,H100-SXM,bf16,none,megatron,1,"
		"9000\n"
		"32,4096,32,8,14336,swiglu,128256,8192,128,1,1,1,1,1,0,8,H100-SXM,bf16,none,megatron,1,"
		"9000?\n"
		"32,4096,32,8,14336,swiglu,128256,,128,1,1,1,1,1,0,8,H100-SXM,bf16,none,megatron,1,"
		"9000\n";
	cvc_proj_validation v;
	char *out = validate_text(text, sizeof text - 1, 1, &v, CVC_OK);

	cr_expect_eq(v.all.expressible, 1, "%s", out);
	cr_expect_eq(v.all.not_projected[CVC_PROJ_VWHY_STRICT], 2, "%s", out);
	cr_expect(strstr(out, "not projected: --strict: the row does not state measured "
			      "tokens_per_s_per_gpu=9000 (guess)"), "%s", out);
	cr_expect(strstr(out, "not projected: --strict: the row does not state seq=2048 (default)"),
		  "%s", out);
	free(out);
	cvc_proj_validation_release(&v);
	/* the same rows without --strict: all three projected, what they
	 * did not state said */
	out = validate_text(text, sizeof text - 1, 0, &v, CVC_OK);
	cr_expect_eq(v.all.expressible, 3, "%s", out);
	cr_expect(strstr(out, "seq=2048 (default)"), "%s", out);
	free(out);
	cvc_proj_validation_release(&v);
}

/* ---- the grammars ---------------------------------------------------------- */

Test(validate_cells, numbers_with_remarks)
{
	struct vnum n;
	const char *what = NULL;

	cr_assert_eq(vcell_number("14336 per expert", 0, &n, &what), 0);
	cr_expect_eq(n.v, 14336);
	cr_expect_str_eq(n.remark, "per expert");
	cr_assert_eq(vcell_number("1024? (2M tokens)", 0, &n, &what), 0);
	cr_expect(n.v == 1024 && n.guess);
	cr_expect_str_eq(n.remark, "2M tokens");
	cr_assert_eq(vcell_number("3072->15360 (ramp over first 469B tokens)", 0, &n, &what), 0);
	cr_expect(n.v == 3072 && n.to == 15360);
	cr_assert_eq(vcell_number("3072 \xE2\x86\x92 15360", 0, &n, &what), 0);
	cr_expect_eq(n.to, 15360);
	cr_assert_eq(vcell_number("147 (up to)", 0, &n, &what), 0);
	cr_expect_str_eq(n.remark, "up to");
	cr_assert_eq(vcell_number("up to 147", 0, &n, &what), 0);
	cr_expect(n.v == 147 && n.bound == 1);
	cr_assert_eq(vcell_number("1,024,000", 0, &n, &what), 0);
	cr_expect(n.v == 1024000 && n.grouped);
	cr_assert_eq(vcell_number("7,5", 1, &n, &what), 0);
	cr_expect_eq(n.v, 7.5);
	cr_assert_eq(vcell_number("1,5", 0, &n, &what), 0);
	cr_expect(n.v == 1 && !strcmp(n.remark, ",5"), "not a thousands group: %g '%s'", n.v,
		  n.remark);
	cr_assert_eq(vcell_number("8K", 0, &n, &what), 0);
	cr_expect(n.v == 8 && n.unit == 'K');
	cr_assert_eq(vcell_number("256+1 shared", 0, &n, &what), 0);
	cr_expect(n.v == 256 && !strcmp(n.remark, "+1 shared"));
	cr_expect_eq(vcell_number("NaN", 0, &n, &what), -1);
	cr_expect_eq(vcell_number("inf", 0, &n, &what), -1);
	cr_expect_eq(vcell_number("-5", 0, &n, &what), -1);
	cr_expect_str_eq(what, "a number >= 0");
	cr_expect_eq(vcell_number("1e999", 0, &n, &what), -1);
	cr_expect_str_eq(what, "a finite number");
	cr_expect_eq(vcell_number("MLA", 0, &n, &what), -1);
}

Test(validate_cells, sharding_words_and_their_negations)
{
	struct vshard s;

	cr_assert_eq(vtext_sharding("DDP (FSDP=0)", &s), 0);
	cr_expect(s.ddp && s.fsdp_off && s.stage == 0 && !s.torch_fsdp);
	cr_assert_eq(vtext_sharding("no FSDP", &s), 0);
	cr_expect(s.ddp && s.stage == 0);
	cr_assert_eq(vtext_sharding("without FSDP", &s), 0);
	cr_expect(s.stage == 0);
	cr_assert_eq(vtext_sharding("FSDP: false", &s), 0);
	cr_expect(s.stage == 0);
	cr_assert_eq(vtext_sharding("FSDP=1", &s), 0);
	cr_expect(s.stage == 3 && s.torch_fsdp);
	cr_assert_eq(vtext_sharding("FSDP (shard group 64/8)", &s), 0);
	cr_expect(s.stage == 3 && s.group == 64 && s.replicas == 8 && s.group_pair);
	cr_assert_eq(vtext_sharding("HSDP (shard 8, replicate 16)", &s), 0);
	cr_expect(s.stage == 3 && s.hybrid && s.group == 8 && s.replicas == 16);
	cr_assert_eq(vtext_sharding("ZeRO-1 DP", &s), 0);
	cr_expect(s.stage == 1 && !s.ddp);
	cr_assert_eq(vtext_sharding("DeepSpeed ZeRO stage 2", &s), 0);
	cr_expect_eq(s.stage, 2);
	cr_assert_eq(vtext_sharding("ZeRO++ (hpZ)", &s), 0);
	cr_expect(s.stage == 3 && s.hybrid);
	cr_assert_eq(vtext_sharding("distributed optimizer", &s), 0);
	cr_expect(s.stage == 1 && s.dist_opt);
	cr_assert_eq(vtext_sharding("SHARD_GRAD_OP", &s), 0);
	cr_expect_eq(s.stage, 2);
	cr_assert_eq(vtext_sharding("no distributed optimizer", &s), -1);
	cr_assert_eq(vtext_sharding("2", &s), 0);
	cr_expect_eq(s.stage, 2);
	cr_expect_eq(vtext_sharding("banana", &s), -1);
}

Test(validate_cells, dtypes_and_fp8_recipes)
{
	static const struct {
		const char *cell, *dtype, *recipe;
	} want[] = {
		{"bf16 (amp)", "bf16", NULL},         {"BF16", "bf16", NULL},
		{"fp8", "fp8", NULL},                 {"fp8 (hybrid)", "fp8", NULL},
		{"mxfp8", "fp8", "mxfp8"},            {"fp8-mx", "fp8", "mxfp8"},
		{"mxfp8 (32x32)", "fp8", "mxfp8"},    {"fp8-cs", "fp8", "current"},
		{"fp8 (current scaling)", "fp8", "current"},
		{"fp8-blockwise(128x128 w,1x128 act)", "fp8", "blockwise"},
		{"fp8 (fine-grained 1x128/128x128)", "fp8", "blockwise"},
		{"FP8 delayed", "fp8", "delayed"},    {"nvfp4", "nvfp4", NULL},
		{"MXFP4", "mxfp4", NULL},             {"fp4", "fp4", NULL},
		{"fp8 (bf16 first and last layers)", "fp8", NULL},
		{"float16", "fp16", NULL},            {"tf32", "fp32", NULL},
	};
	struct vdtype d;

	for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
		cr_assert_eq(vtext_dtype(want[i].cell, &d), 0, "%s", want[i].cell);
		cr_expect_str_eq(d.dtype, want[i].dtype, "%s", want[i].cell);
		if (want[i].recipe)
			cr_expect(d.recipe && !strcmp(d.recipe, want[i].recipe), "%s: %s", want[i].cell,
				  d.recipe ? d.recipe : "(none)");
		else
			cr_expect_null(d.recipe, "%s: %s", want[i].cell, d.recipe);
	}
	cr_expect_eq(vtext_dtype("int4", &d), -1);
}

Test(validate_cells, switches_in_text_and_their_negations)
{
	static const char *sp = "sequence parallel|sequence parallelism|sp";
	static const char *ub = "tp comm overlap|tp-comm-overlap";

	cr_expect_eq(vtext_switch("trained without sequence parallelism", sp), 0);
	cr_expect_eq(vtext_switch("no sequence parallel", sp), 0);
	cr_expect_eq(vtext_switch("SP=0", sp), 0);
	cr_expect_eq(vtext_switch("with sequence parallelism on", sp), 1);
	cr_expect_eq(vtext_switch("SP=1", sp), 1);
	cr_expect_eq(vtext_switch("the spine", sp), -1);
	/* a command line's flag, its dashes part of the word */
	cr_expect_eq(vtext_switch("Megatron-LM, without --tp-comm-overlap", ub), 0);
	cr_expect_eq(vtext_switch("no --tp-comm-overlap given", ub), 0);
	cr_expect_eq(vtext_switch("disabled --tp-comm-overlap", ub), 0);
	cr_expect_eq(vtext_switch("--tp-comm-overlap not set", ub), 0);
	cr_expect_eq(vtext_switch("run with --tp-comm-overlap", ub), 1);
}

Test(validate_cells, hardware_cells)
{
	cvc_hw_catalog *cat = NULL;
	struct vgpu g;

	cr_assert_eq(cvc_hw_catalog_new(&cat), CVC_OK);
	cr_assert_eq(vgpu_read(cat, "NVIDIA Ampere (A100 implied by the node type)", 8, &g), 0);
	cr_expect(g.in_paren && !strncmp(g.spec->name, "A100", 4));
	cr_assert_eq(vgpu_read(cat, "H800-SXM (8/node, NVLink 400GB/s, 8x400 Gb/s IB)", 8, &g), 0);
	cr_expect_str_eq(g.spec->name, "H800-SXM");
	cr_expect_eq(g.per_node, 8);
	cr_expect_float_eq(g.nvlink_gbps, 200, 1e-9);
	cr_expect_float_eq(g.nic_gbps, 50, 1e-9);
	cr_expect(!g.nic_assumed);
	cr_assert_eq(vgpu_read(cat, "H100 (RoCE 400Gbps)", 8, &g), 0);
	cr_expect_float_eq(g.nic_gbps, 50, 1e-9);
	cr_expect(g.nic_assumed);
	cr_assert_eq(vgpu_read(cat, "A100-40GB (1600 Gbps RoCE node-node)", 8, &g), 0);
	cr_expect_float_eq(g.nic_gbps, 25, 1e-9);
	cr_expect(!g.nic_assumed);
	cr_assert_eq(vgpu_read(cat, "H100 (3200 Gbps)", 8, &g), 0);
	cr_expect_float_eq(g.nic_gbps, 50, 1e-9, "more than one NIC carries: per node");
	cr_expect(g.nic_assumed);
	cr_assert_eq(vgpu_read(cat, "GB200 (NVL72)", 8, &g), 0);
	cr_expect_eq(g.domain, 72);
	cr_assert_eq(vgpu_read(cat, "GB200 NVL36x2", 8, &g), 0);
	cr_expect_eq(g.domain, 72);
	cr_assert_eq(vgpu_read(cat, "H100 (400 GB/s)", 8, &g), 0);
	cr_expect(g.nvlink_gbps == 0 && g.nic_gbps == 0 && g.ignored[0],
		  "a byte rate with no link named is not read");
	cr_expect_eq(vgpu_read(cat, "Z9000 (NVL72)", 8, &g), -1);
	cvc_hw_catalog_free(cat);
}

Test(validate_cells, stacks_and_their_dates)
{
	static const struct {
		const char *text;
		int family, year, month;
	} want[] = {
		{"bloom-176b (bigscience), megatron-deepspeed, 2022", VS_MEGATRON_DS, 2022, 0},
		{"nvidia-nemo/megatron-bridge performance summary, release 26.06 nemo container",
		 VS_BRIDGE, 2026, 6},
		{"nvidia/nemo performance_summary.md (nemo 24.07)", VS_NEMO, 2024, 7},
		{"nvidia/nemo performance_long_sequence.md (nemo24.03.01.framework)", VS_NEMO, 2024, 3},
		{"megatron-lm, arxiv 2104.04473", VS_MEGATRON_LM, 2021, 4},
		{"mosaicml/llm-foundry readme (tables from pr #838 jan 2024)", VS_FOUNDRY, 2024, 1},
		{"nvidia/dgxc-benchmarking (releases v25.02,v25.02.01)", VS_UNKNOWN, 2025, 2},
		{"maxtext on tpu", VS_JAX, 0, 0},
	};
	struct vstack st;

	for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
		vstack_read(want[i].text, &st);
		cr_expect_eq(st.family, want[i].family, "%s: family %d", want[i].text, st.family);
		cr_expect(st.year == want[i].year && st.month == want[i].month, "%s: %d-%d",
			  want[i].text, st.year, st.month);
	}
	vstack_read("megatron-lm, arxiv 2104.04473", &st);
	cr_expect(vstack_before(&st, 2022, 5));
	vstack_read("nemo 24.07", &st);
	cr_expect(!vstack_before(&st, 2023, 1));
}

/*
 * Claim: a row that names a model of cvc's catalog (projector/archs.yaml)
 * gets each field of the model's published configuration it leaves blank,
 * said with the source; the cells it gives win; a row whose text says the
 * run went without MTP keeps none; a name the catalog lacks is still a
 * shape not given.  Setup: the Megatron-Bridge DeepSeek-V3 row (MLA with no
 * ranks, 61 layers on 16 stages), a Nemotron-3-Nano row with no shape, a
 * Qwen3-30B-A3B row whose 24 layers are not the model's 48, the same
 * DeepSeek-V3 row "w/o MTP", and an unknown model.
 */
Test(validate_cells, rows_name_models_of_the_catalog)
{
	static const char text[] =
		"model,layers,hidden,ffn,heads,kv_heads,vocab,seq,moe_experts,moe_topk,tp,pp,vpp,"
		"ep,micro_batch,global_batch,gpus,gpu,dtype,tokens_per_s_per_gpu,notes\n"
		"DeepSeek-V3,61,7168,18432 dense/2048 per expert,128,MLA,129280,4096,256+1 shared,8,"
		"1,16,1,8,1,4096,256,B200,bf16,2800,\n"
		"Nemotron-3-Nano,,,,,,,8192,,,1,1,,8,2,512,8,GB200 (NVL72),bf16,30000,\n"
		"Qwen3-30B-A3B,24,,,,,,4096,,,1,1,,8,1,512,8,H100-SXM,bf16,20000,\n"
		"DeepSeek-V3,61,7168,18432 dense/2048 per expert,128,MLA,129280,4096,256+1 shared,8,"
		"1,16,1,8,1,4096,256,B200,bf16,2800,DeepSeekV3 (w/o MTP)\n"
		"Mystery-30B,,,,,,,4096,,,1,1,,8,1,512,8,H100-SXM,bf16,20000,\n";
	static const struct {
		const char *want, *not;
	} rows[] = {
		{"q_lora_rank=1536, kv_lora_rank=512, qk_rope_dim=64, v_head_dim=128, ffn_type=swiglu, "
		 "tie_embeddings=0, moe_first_dense=3, mtp_layers=1, moe_router_group_topk=4 "
		 "(deepseek-v3 in cvc's catalog: https://huggingface.co/deepseek-ai/DeepSeek-V3/", "layers=61"},
		{"layers=52, hidden=2688, heads=32, kv_heads=2, head_dim=128, ffn=1856, ffn_type=relu2",
		 "not projected"},
		{"hidden=2048, heads=32, kv_heads=4, head_dim=128", "layers=48"},
		{"mtp_layers=0 (the row's text says the run had none)", "mtp_layers=1"},
		{"not projected: the model's shape not given (layers)", "catalog"},
	};
	cvc_proj_validation v;
	char *out = validate_text(text, sizeof text - 1, 0, &v, CVC_OK), *p = out, *h[64], *f[64];
	size_t nh = tu_record(&p, h, 64);
	int ca = tu_col(h, nh, "assumed"), cp = tu_col(h, nh, "predicted_tokens_per_s_per_gpu");

	for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
		tu_next_row(&p, f, nh, i);
		tu_expect_said(f[ca], i, rows[i].want, rows[i].not);
		cr_expect((f[cp][0] != 0) == (i < 4), "row %zu: predicted '%s' (%s)", i + 1, f[cp],
			  f[ca]);
	}
	cr_expect_eq(v.all.expressible, 4);
	free(out);
	cvc_proj_validation_release(&v);
}

/*
 * Claim: a NeMo or Megatron-Bridge row in NVFP4 runs without TP
 * communication overlap, as their performance scripts set it
 * (`tp_comm_overlap = False if precision == "nvfp4"`), and says so; the
 * same row in MXFP8 keeps Megatron-Core's overlap; a row whose text turns
 * the overlap on wins.  Setup: one Llama 3 70B layout on 64 GB200 (TP 2),
 * nvfp4, mxfp8, and nvfp4 with "tp comm overlap" in its notes.
 */
Test(validate_cells, nvfp4_rows_without_tp_overlap)
{
	static const char text[] =
		"model,layers,hidden,ffn,heads,kv_heads,vocab,seq,tp,pp,vpp,micro_batch,global_batch,"
		"gpus,gpu,dtype,tokens_per_s_per_gpu,source,notes\n"
		"Llama3-70B,,,,,,,8192,2,4,5,1,256,64,GB200 (NVL72),nvfp4,4800,Megatron-Bridge "
		"performance summary,\n"
		"Llama3-70B,,,,,,,8192,2,4,5,1,256,64,GB200 (NVL72),mxfp8,3800,Megatron-Bridge "
		"performance summary,\n"
		"Llama3-70B,,,,,,,8192,2,4,5,1,256,64,GB200 (NVL72),nvfp4,4800,Megatron-Bridge "
		"performance summary,with tp comm overlap\n";
	static const char *const want[] = {
		"tp_overlap=0 (Megatron-Bridge's performance scripts turn it off for nvfp4)",
		"tp_overlap=1 (Megatron-Bridge's performance recipes set comm_overlap's "
		"tp_comm_overlap)",
		"tp_overlap=1 (the row's text says so)",
	};
	cvc_proj_validation v;
	char *out = validate_text(text, sizeof text - 1, 0, &v, CVC_OK), *p = out, *h[64], *f[64];
	size_t nh = tu_record(&p, h, 64);
	int ca = tu_col(h, nh, "assumed");

	for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
		tu_next_row(&p, f, nh, i);
		tu_expect_said(f[ca], i, want[i], NULL);
	}
	cr_expect_eq(v.all.expressible, 3);
	free(out);
	cvc_proj_validation_release(&v);
}

/*
 * Claim: an MoE row whose expert parallelism spans NVLink domains, on
 * Megatron-Bridge in a layout whose recipe runs DeepEP with the 1F1B
 * all-to-all overlap (vrecipe.c), runs so and says so; a dispatcher the
 * text names wins over the recipe's (its overlap stays); inside one domain
 * (EP 64 in an NVL72 rack) or on another stack no dispatcher is assumed; a
 * row naming DualPipe runs that schedule on DeepSeek's node-limited
 * all-to-all.  Setup: DeepSeek-V3 at EP 32 on 256 B200
 * (Megatron-Bridge, then "alltoall dispatcher" in its notes, then Megatron-LM),
 * at EP 64 on 256 GB200 NVL72, and at EP 64 on 2048 H800 with "DualPipe".
 */
Test(validate_cells, moe_dispatch_across_domains)
{
	static const char text[] =
		"model,layers,hidden,ffn,heads,kv_heads,vocab,seq,moe_experts,moe_topk,tp,pp,vpp,ep,"
		"micro_batch,global_batch,gpus,gpu,dtype,tokens_per_s_per_gpu,source,notes\n"
		"DeepSeek-V3,,,,,,,4096,,,1,8,2,32,1,4096,256,B200,mxfp8,3300,Megatron-Bridge "
		"performance summary,\n"
		"DeepSeek-V3,,,,,,,4096,,,1,8,2,32,1,4096,256,B200,mxfp8,3300,Megatron-Bridge "
		"performance summary,alltoall dispatcher\n"
		"DeepSeek-V3,,,,,,,4096,,,1,8,2,32,1,4096,256,B200,mxfp8,3300,Megatron-LM,\n"
		"DeepSeek-V3,,,,,,,4096,,,1,4,4,64,1,4096,256,GB200 (NVL72),mxfp8,4900,"
		"Megatron-Bridge performance summary,\n"
		"DeepSeek-V3,,,,,,,4096,,,1,16,1,64,1,15360,2048,H800,fp8,1500,DeepSeek-V3 report,"
		"DualPipe PP=16\n";
	static const struct {
		const char *want, *not;
	} rows[] = {
		{"ep_dispatcher=deepep (EP 32 over NVLink domains of 8: the same recipe: "
		 "moe_flex_dispatcher_backend=\"deepep\"", "alltoall"},
		{"ep_dispatcher=alltoall (named in the row's text)", "deepep"},
		{"framework=megatron", "ep_dispatcher"},
		{"nvlink_domain=72", "ep_dispatcher"},
		{"pp_schedule=dualpipe (named in the row's text); ep_dispatcher=deepep (DualPipe",
		 "ep_overlap"},
	};
	cvc_proj_validation v;
	char *out = validate_text(text, sizeof text - 1, 0, &v, CVC_OK), *p = out, *h[64], *f[64];
	size_t nh = tu_record(&p, h, 64);
	int ca = tu_col(h, nh, "assumed"), cp = tu_col(h, nh, "predicted_tokens_per_s_per_gpu");
	double pred[5];

	for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
		tu_next_row(&p, f, nh, i);
		tu_expect_said(f[ca], i, rows[i].want, rows[i].not);
		cr_expect((strstr(f[ca], "ep_overlap=1 (moe_a2a_overlap in the same recipe") != NULL) ==
				  (i < 2),
			  "row %zu: %s", i + 1, f[ca]);
		pred[i] = strtod(f[cp], NULL);
		cr_expect(pred[i] > 0, "row %zu: predicted '%s' (%s)", i + 1, f[cp], f[ca]);
	}
	/* DeepEP's one copy per node against the all-to-all's one copy per
	 * expert, both in the 1F1B pairs */
	cr_expect_gt(pred[0], 1.5 * pred[1], "%g vs %g", pred[0], pred[1]);
	cr_expect_eq(v.all.expressible, 5);
	free(out);
	cvc_proj_validation_release(&v);
}

/*
 * Claim: a benchmark row labelled "(tokendrop)" (NeMo's and Megatron-Bridge's
 * token-drop variants: capacity factor 1, inputs padded to capacity) is
 * priced with moe_token_drop and says so; the summaries' footnote "token-drop
 * vs dropless as labelled" alone names neither, and a dense row has no
 * experts to drop tokens of.  Setup: Qwen3-30B-A3B on 8 B200 with the label,
 * with the footnote only, and Llama3-8B with the label.
 */
Test(validate_cells, token_drop_named_in_the_label)
{
	static const char text[] =
		"model,layers,hidden,ffn,heads,kv_heads,vocab,seq,moe_experts,moe_topk,tp,pp,vpp,ep,"
		"micro_batch,global_batch,gpus,gpu,dtype,tokens_per_s_per_gpu,source,notes\n"
		"Qwen3-30B-A3B,,,,,,,4096,,,1,1,,8,1,512,8,B200,fp8,18000,Megatron-Bridge performance "
		"summary,token-drop vs dropless as labelled in model name. label: Qwen3_30B_a3B "
		"(tokendrop)\n"
		"Qwen3-30B-A3B,,,,,,,4096,,,1,1,,8,1,512,8,B200,fp8,9300,Megatron-Bridge performance "
		"summary,token-drop vs dropless as labelled in model name.\n"
		"Llama3-8B,,,,,,,8192,,,1,1,,1,1,128,8,B200,fp8,30000,Megatron-Bridge performance "
		"summary,label: LLAMA3_8B (tokendrop)\n";
	cvc_proj_validation v;
	char *out = validate_text(text, sizeof text - 1, 0, &v, CVC_OK), *p = out, *h[64], *f[64];
	size_t nh = tu_record(&p, h, 64);
	int ca = tu_col(h, nh, "assumed");

	tu_next_row(&p, f, nh, 0);
	tu_expect_said(f[ca], 0, "moe_token_drop=1 (the row's text says so)", NULL);
	tu_next_row(&p, f, nh, 1);
	tu_expect_said(f[ca], 1, "framework=megatron", "moe_token_drop");
	tu_next_row(&p, f, nh, 2);
	tu_expect_said(f[ca], 2, "framework=megatron", "moe_token_drop");
	cr_expect_eq(v.all.expressible, 3);
	free(out);
	cvc_proj_validation_release(&v);
}

/*
 * Claim: a Megatron-Bridge row of a model whose performance recipe cvc
 * knows (projector/vrecipe.c) takes the recipe's recompute and FP8
 * scaling where its cells are silent, and says which recipe: Nemotron-3-
 * Nano on 16 H100 in fp8 recomputes the MoE layer, the norms, the core
 * attention and the experts' activation, with current scaling
 * (perf_recipes/nemotronh/h100/nemotronh.py @d861fb2f), and runs slower
 * for it; on B200 it recomputes nothing.  A cell that states the recompute
 * (full; fp8 delayed) or the FP8 recipe wins, and a row of another stack keeps Megatron-Core's
 * defaults.  Setup: the published layout (TP 1, EP 8, micro-batch 1, 1024
 * sequences of 8192) five ways.
 */
Test(validate_cells, bridge_recipe_of_a_named_model)
{
	static const char text[] =
		"model,layers,hidden,heads,seq,tp,pp,ep,micro_batch,global_batch,gpus,gpu,dtype,recompute,"
		"tokens_per_s_per_gpu,source,notes\n"
		"Nemotron-3-Nano,,,,8192,1,1,8,1,1024,16,H100-SXM-80GB (DGX H100),fp8,,14336,"
		"Megatron-Bridge performance summary,\n"
		"Nemotron-3-Nano,,,,8192,1,1,8,2,512,8,B200 (DGX B200),mxfp8,,32768,"
		"Megatron-Bridge performance summary,\n"
		"Nemotron-3-Nano,,,,8192,1,1,8,1,1024,16,H100-SXM-80GB (DGX H100),fp8 delayed,full,"
		"14336,Megatron-Bridge performance summary,\n"
		"Nemotron-3-Nano,,,,8192,1,1,8,1,1024,16,H100-SXM-80GB (DGX H100),fp8,,14336,"
		"NeMo performance summary,\n";
	static const char *const want[][3] = {
		{"recompute=selective, recompute_modules=moe,layernorm,core_attn,moe_act "
		 "(Megatron-Bridge's performance recipe for nemotron-3-nano-30b-a3b on H100-SXM",
		 "fp8_recipe=current (the same recipe)", NULL},
		{"recompute=none (Megatron-Bridge's performance recipe for nemotron-3-nano-30b-a3b "
		 "on B200", "fp8_recipe=mxfp8 ('mxfp8')", NULL},
		{"framework=megatron (Megatron-Bridge", "fp8_recipe=delayed ('fp8 delayed')",
		 "!performance recipe"},
		{"recompute=none (Megatron-Core's default", "fp8_recipe=delayed (no recipe named",
		 "!performance recipe"},
	};
	double pred[4];

	tu_rows_said(text, want, 4, pred);
	/* the recomputed MoE layers cost the H100 row time */
	cr_expect(pred[0] > 0 && pred[0] < 0.9 * pred[3], "recipe %g, Megatron-Core's defaults %g",
		  pred[0], pred[3]);
}

/*
 * Claim: a Megatron-Bridge DeepSeek-V3 row in a layout its performance
 * recipes publish recomputes what that recipe recomputes (PP 16 / EP 8 on
 * B200: the MLA up projections; PP 8 / EP 32 on B200 and TP 2 / PP 8 / EP
 * 64 on H100: those and the dense layers' MLP) with current-scaling FP8
 * where the row names no format, and on H100 its gradient reduce-scatter
 * after the backward; GB200, whose recipes changed it between releases (a
 * row its text does not date), and a layout no recipe has keep Megatron-
 * Core's defaults: no recompute.
 */
Test(validate_cells, deepseek_v3_recipes_by_layout)
{
	static const char text[] =
		"model,layers,hidden,heads,seq,tp,pp,vpp,ep,micro_batch,global_batch,gpus,gpu,dtype,tokens_per_s_per_gpu,"
		"source\n"
		"DeepSeek-V3,61,,,4096,1,16,1,8,1,4096,256,B200 (DGX B200),fp8,2800,Megatron-Bridge\n"
		"DeepSeek-V3,61,,,4096,1,8,2,32,1,4096,256,B200 (DGX B200),mxfp8,3300,Megatron-Bridge\n"
		"DeepSeek-V3,61,,,4096,2,8,4,64,1,8192,1024,H100-SXM-80GB,fp8,1300,Megatron-Bridge\n"
		"DeepSeek-V3,61,,,4096,1,4,4,64,1,4096,256,GB200 (NVL72),mxfp8,4900,Megatron-Bridge\n"
		"DeepSeek-V3,61,,,4096,1,4,4,8,1,4096,256,B200 (DGX B200),mxfp8,3000,Megatron-Bridge\n";
	static const char *const want[][3] = {
		{"recompute=selective, recompute_modules=mla_up_proj (Megatron-Bridge's performance "
		 "recipe for deepseek-v3 on B200", "fp8_recipe=current (the same recipe)",
		 "!dp_overlap="},
		{"recompute_modules=mla_up_proj,mlp (Megatron-Bridge's performance recipe for "
		 "deepseek-v3 on B200", "fp8_recipe=mxfp8 ('mxfp8')", "!dp_overlap="},
		{"recompute_modules=mla_up_proj,mlp (Megatron-Bridge's performance recipe for "
		 "deepseek-v3 on H100-SXM", "fp8_recipe=current (the same recipe)",
		 "dp_overlap=0 (overlap_grad_reduce in the same recipe)"},
		{"recompute=none (Megatron-Core's default", "fp8_recipe=mxfp8 ('mxfp8')",
		 "!performance recipe"},
		{"recompute=none (Megatron-Core's default", "fp8_recipe=mxfp8 ('mxfp8')",
		 "!performance recipe"},
	};

	tu_rows_said(text, want, 5, NULL);
}

/*
 * Claim: Qwen3-30B-A3B on 16 H100 at EP 16 takes its recipe's settings
 * (recipes/qwen/h100/qwen3_moe.py: no recompute, the FP8_CS preset,
 * moe_a2a_overlap off), so the overlap that validate's rule takes for EP
 * across NVLink domains is not assumed there; the older PP 2 / EP 8
 * layout takes what every Qwen3 preset sets (no recompute, an unnamed FP8
 * as current scaling: set_qwen3_common_configs) and no overlap.
 */
Test(validate_cells, qwen3_recipe_turns_the_a2a_overlap_off)
{
	static const char text[] =
		"model,layers,hidden,heads,seq,tp,pp,ep,micro_batch,global_batch,gpus,gpu,dtype,tokens_per_s_per_gpu,"
		"source\n"
		"Qwen3-30B-A3B,,,,4096,1,1,16,1,1024,16,H100-SXM-80GB (DGX H100),fp8,8900,"
		"Megatron-Bridge performance summary\n"
		"Qwen3-30B-A3B,,,,4096,1,2,8,1,1024,16,H100-SXM-80GB (DGX H100),fp8,9000,"
		"Megatron-Bridge performance summary\n";
	static const char *const want[][3] = {
		{"recompute=none (Megatron-Bridge's performance recipe for qwen3-30b-a3b on H100-SXM",
		 "fp8_recipe=current (the same recipe)",
		 "ep_overlap=0 (moe_a2a_overlap in the same recipe)"},
		{"recompute=none (Megatron-Bridge's performance recipe for qwen3-30b-a3b on H100-SXM: "
		 "NVIDIA-NeMo/Megatron-Bridge scripts/performance/configs/qwen/qwen3_llm_pretrain.py",
		 "fp8_recipe=current (the same recipe)", "!ep_overlap=1"},
	};

	tu_rows_said(text, want, 2, NULL);
}

/*
 * Claim: a NeMo row dated before August 2024 ran FlashAttention-2 (the
 * launcher's NVTE_FUSED_ATTN: 0) and is priced so, slower on H100 than the
 * same row of a later release on cuDNN; a later NeMo row, a Megatron-LM
 * row of the same month and a row naming its attention keep theirs.  (The
 * Megatron-LM row states 16-bit gradients and the NeMo 24.09 row fp8
 * weights with a 16-bit copy, so only the attention differs.)
 */
Test(validate_cells, early_nemo_runs_flash_attention_2)
{
	static const char text[] =
		"model,layers,hidden,heads,seq,tp,pp,cp,micro_batch,global_batch,gpus,gpu,dtype,"
		"attention,tokens_per_s_per_gpu,source,grad_reduce_fp32,fp8_param_gather\n"
		"Llama2-7B,,,,32768,2,1,2,1,128,32,H100-SXM-80GB,fp8,,6700,NVIDIA/NeMo (NeMo24.03.01),,\n"
		"Llama2-7B,,,,32768,2,1,2,1,128,32,H100-SXM-80GB,fp8,,6700,NVIDIA/NeMo (NeMo 24.09),,0\n"
		"Llama2-7B,,,,32768,2,1,2,1,128,32,H100-SXM-80GB,fp8,,6700,Megatron-LM 2024-03,0,\n"
		"Llama2-7B,,,,32768,2,1,2,1,128,32,H100-SXM-80GB,fp8,cuDNN,6700,NeMo 24.07,,\n";
	static const char *const want[][3] = {
		{"attention=fa2 (NeMo dated by the text before 2024-08: NeMo-Framework-Launcher's",
		 NULL, NULL},
		{"!attention=fa2", NULL, NULL},
		{"!attention=fa2", NULL, NULL},
		{"!attention=fa2", NULL, NULL},
	};
	double pred[4];

	tu_rows_said(text, want, 4, pred);
	/* FlashAttention-2 runs H100's attention well below cuDNN's rate */
	cr_expect(pred[0] > 0 && pred[0] < 0.85 * pred[1], "FA2 %g, cuDNN %g", pred[0], pred[1]);
	cr_expect_float_eq(pred[1], pred[2], 1e-9 * pred[1]);
	cr_expect_float_eq(pred[1], pred[3], 1e-9 * pred[1]);
}

/*
 * Claim: a Megatron-Bridge MXFP8 row of a release whose recipe is dated to
 * have run what validate does not assume (full-iteration CUDA graphs, the
 * all-to-all overlap and the fused grouped MLP from 26.06 on GB200;
 * HybridEP with CUDA graphs before) says so, naming the source, and is
 * projected as it was: the same layout of an earlier release, another
 * micro-batch than the preset's, or bf16 says nothing of it.
 */
Test(validate_cells, releases_say_what_they_ran)
{
	static const char text[] =
		"model,layers,hidden,heads,seq,tp,pp,vpp,ep,micro_batch,global_batch,gpus,gpu,dtype,tokens_per_s_per_gpu,"
		"source,notes\n"
		"Qwen3-30B-A3B,,,,4096,1,1,,8,4,512,8,GB200 (NVL72),mxfp8,40706,"
		"Megatron Bridge performance summary,Release 26.06 NeMo container\n"
		"Qwen3-30B-A3B,,,,4096,1,1,,8,4,512,8,GB200 (NVL72),mxfp8,26032,"
		"Megatron Bridge performance summary,Release 26.04 NeMo container\n"
		"Qwen3-30B-A3B,,,,4096,1,1,,8,4,512,8,GB200 (NVL72),mxfp8,26084,"
		"Megatron Bridge performance summary,Release 26.02 NeMo container\n"
		"Qwen3-30B-A3B,,,,4096,1,1,,8,4,512,8,B200 (DGX B200),mxfp8,26859,"
		"Megatron Bridge performance summary,Release 26.04 NeMo container\n"
		"Qwen3-30B-A3B,,,,4096,1,1,,8,1,512,8,B200 (DGX B200),mxfp8,9691,"
		"Megatron Bridge performance summary,Release 26.04 NeMo container\n"
		"DeepSeek-V3,,,,4096,1,4,4,64,1,4096,256,GB200 (NVL72),mxfp8,4969,"
		"Megatron Bridge performance summary,Release 26.06 NeMo container\n"
		"Qwen3-30B-A3B,,,,4096,1,1,,8,4,512,8,GB200 (NVL72),bf16,30000,"
		"Megatron Bridge performance summary,Release 26.06 NeMo container\n";
	static const char *const want[][3] = {
		{"ran, not assumed (the row does not say it): full-iteration CUDA graphs",
		 "Megatron-Bridge PR #4249", NULL},
		{"ran, not assumed (the row does not say it): HybridEP on the flex dispatcher",
		 "PR #2499 (2026-02-23): GB200's preset", NULL},
		{"!ran, not assumed", NULL, NULL},
		{"ran, not assumed", "logged in the 26.04.01 container by issue #4439", NULL},
		{"!ran, not assumed", NULL, NULL},
		{"ran, not assumed", "Megatron-Bridge PR #4226", NULL},
		{"!ran, not assumed", NULL, NULL},
	};
	double pred[7];

	tu_rows_said(text, want, 7, pred);
	/* said, not assumed: the releases' rows are projected alike */
	cr_expect_float_eq(pred[0], pred[1], 1e-9 * pred[0]);
	cr_expect_float_eq(pred[0], pred[2], 1e-9 * pred[0]);
}

/*
 * Claim: a row of Megatron-LM in bf16 (or fp8: bf16 weights) takes its
 * command line's rule, gradients accumulated and reduced in fp32, and says
 * so; rows of NeMo and Megatron-Bridge keep the projector's 16-bit default
 * (their performance recipes set grad_reduce_in_fp32 off), fp16 weights
 * reduce in fp16, and a row whose text names the setting keeps it.  The
 * fp32 rows' data-parallel sync moves twice the gradient bytes, so the same
 * layout projects slower where the sync is exposed: one micro-batch per
 * replica (64 GPUs, global batch 64), whose backward is all it can hide
 * under.
 */
Test(validate_cells, gradients_reduce_in_fp32_where_the_stack_does)
{
	static const char text[] =
		"model,layers,hidden,heads,seq,tp,pp,cp,micro_batch,global_batch,gpus,gpu,dtype,"
		"tokens_per_s_per_gpu,source,notes\n"
		"Llama2-7B,,,,4096,1,1,1,1,64,64,H100-SXM-80GB,bf16,6700,Megatron-LM 2024-03,\n"
		"Llama2-7B,,,,4096,1,1,1,1,64,64,H100-SXM-80GB,bf16,6700,NVIDIA/NeMo 24.09,\n"
		"Llama2-7B,,,,4096,1,1,1,1,64,64,H100-SXM-80GB,fp8,6700,Megatron-LM 2024-03,\n"
		"Llama2-7B,,,,4096,1,1,1,1,64,64,H100-SXM-80GB,fp16,6700,Megatron-LM 2024-03,\n"
		"Llama2-7B,,,,4096,1,1,1,1,64,64,H100-SXM-80GB,bf16,6700,Megatron-Bridge 25.11,\n"
		"Llama2-7B,,,,4096,1,1,1,1,64,64,H100-SXM-80GB,bf16,6700,NVIDIA/NeMo 24.09,"
		"grad_reduce_in_fp32 on\n";
	static const char *const want[][3] = {
		{"grad_reduce_fp32=1 (Megatron-LM's arguments.py", NULL, NULL},
		{"!grad_reduce_fp32", NULL, NULL},
		{"grad_reduce_fp32=1 (Megatron-LM's arguments.py", NULL, NULL},
		{"!grad_reduce_fp32", NULL, NULL},
		{"!grad_reduce_fp32", NULL, NULL},
		{"grad_reduce_fp32=1 (the row's text says so)", NULL, NULL},
	};
	double pred[6];

	tu_rows_said(text, want, 6, pred);
	cr_expect(pred[0] < pred[1], "fp32 gradients %g, bf16 %g", pred[0], pred[1]);
	cr_expect_float_eq(pred[0], pred[5], 1e-9 * pred[0]);
	cr_expect_float_eq(pred[1], pred[4], 1e-9 * pred[1]);
}

/*
 * Claim: a row of a release the stack's tracker records as regressed for
 * its model and GPU (Megatron-Bridge issue #1998: dropless Qwen3-30B-A3B on
 * H100 and B200, 25.11 to 26.02) says so and is counted apart, keeping its
 * projection: the same layout of 25.09, of the patch release 26.02.01, in
 * token drop, or on GB200 says nothing.  The summary counts every row and
 * gives the MAPE over the unflagged ones.
 */
Test(validate_cells, regressed_releases_said_and_counted_apart)
{
	static const char text[] =
		"model,layers,hidden,heads,seq,tp,pp,ep,vpp,micro_batch,global_batch,gpus,gpu,dtype,tokens_per_s_per_gpu,"
		"source,notes\n"
		"Qwen3-30B-A3B,,,,4096,1,2,8,12,1,1024,16,H100-SXM-80GB,fp8,5000,Megatron-Bridge,"
		"Release 25.11 NeMo container\n"
		"Qwen3-30B-A3B,,,,4096,1,2,8,12,1,1024,16,H100-SXM-80GB,fp8,5000,Megatron-Bridge,"
		"Release 26.02 NeMo container\n"
		"Qwen3-30B-A3B,,,,4096,1,2,8,12,1,1024,16,H100-SXM-80GB,fp8,5000,Megatron-Bridge,"
		"Release 26.02.01 NeMo container\n"
		"Qwen3-30B-A3B,,,,4096,1,2,8,12,1,1024,16,H100-SXM-80GB,fp8,5000,Megatron-Bridge,"
		"Release 25.09 NeMo container\n"
		"Qwen3-30B-A3B,,,,4096,1,2,8,12,1,1024,16,H100-SXM-80GB,fp8,5000,Megatron-Bridge,"
		"Release 25.11 NeMo container (tokendrop)\n"
		"Qwen3-30B-A3B,,,,4096,1,1,8,1,1,512,8,GB200,fp8,5000,Megatron-Bridge,"
		"Release 25.11 NeMo container\n";
	static const char *const want[][3] = {
		{"regressed release: dropless Qwen3-30B-A3B 2x slower", "issue #1998", NULL},
		{"regressed release: dropless Qwen3-30B-A3B 2x slower", NULL, NULL},
		{"!regressed release", NULL, NULL},
		{"!regressed release", NULL, NULL},
		{"!regressed release", NULL, NULL},
		{"!regressed release", NULL, NULL},
	};
	double pred[6];
	cvc_proj_validation v;
	char *out;

	tu_rows_said(text, want, 6, pred);
	cr_expect_float_eq(pred[0], pred[2], 1e-9 * pred[0], "the flag moves no projection");
	out = validate_text(text, sizeof text - 1, 0, &v, CVC_OK);
	cr_expect_eq(v.all.expressible, 6);
	cr_expect_eq(v.all.regressed_rows, 2);
	{
		double sum = 0;

		for (int i = 2; i < 6; i++)
			sum += fabs(100 * (pred[i] - 5000) / 5000);
		/* the projections as written: 6 significant digits */
		cr_expect_float_eq(v.all.mape_unregressed_pct, sum / 4, 1e-4 * sum, "%g vs %g",
				   v.all.mape_unregressed_pct, sum / 4);
	}
	free(out);
	cvc_proj_validation_release(&v);
}

/*
 * Claim: what a row's own words say of its run is read, from the notes
 * before the source: a source path's folder ("distributed/deepep/")
 * does not overrule notes that name the all-to-all or say "no DeepEP";
 * Megatron-MoE-ModelZoo's recompute words ("norm, act, shared_expert")
 * are Megatron-Core's modules; "run with CUDA Graphs enabled" turns cvc's
 * layer graphs on; "(tokendrop)" in the model cell and "token drop" in
 * prose are token drop, but not the footnote "token-drop vs dropless";
 * a model whose layers cvc does not price (Qwen3-Next's gated DeltaNet)
 * is refused by name, never priced as softmax attention.
 */
Test(validate_cells, a_rows_words_of_its_run)
{
	static const char text[] =
		"model,layers,hidden,heads,seq,tp,pp,dp,ep,micro_batch,global_batch,gpus,gpu,dtype,recompute,"
		"tokens_per_s_per_gpu,source,notes\n"
		"Qwen3-30B-A3B,,,,4096,1,1,8,8,1,64,8,B200,bf16,full,9930,pytorch/torchtitan "
		"torchtitan/distributed/deepep/README.md,torchtitan (all-to-all dispatcher)\n"
		"Qwen3-30B-A3B,,,,4096,1,1,8,8,1,64,8,B200,bf16,full,9930,pytorch/torchtitan "
		"torchtitan/distributed/deepep/README.md,torchtitan without DeepEP\n"
		"Qwen3-235B-A22B,,,,4096,2,8,16,32,1,2048,256,H100,bf16,\"norm, act, shared_expert\","
		"1660,Megatron-LM,\n"
		"Qwen3-235B-A22B,,,,4096,2,8,16,32,1,2048,256,H100,bf16,act,1660,Megatron-LM,\n"
		"Qwen3-235B-A22B,,,,4096,2,8,16,32,1,2048,256,H100,fp8,,1660,NeMo 25.04,"
		"run with CUDA Graphs enabled\n"
		"Qwen3-235B-A22B (tokendrop),,,,4096,2,8,16,32,1,2048,256,H100,bf16,,1660,"
		"Megatron-Bridge performance summary,\n"
		"Qwen3-235B-A22B,,,,4096,2,8,16,32,1,2048,256,H100,bf16,,1660,"
		"Megatron-Bridge performance summary,release 25.09; token drop\n"
		"Qwen3-235B-A22B,,,,4096,2,8,16,32,1,2048,256,H100,bf16,,1660,"
		"Megatron-Bridge performance summary,token-drop vs dropless as labelled\n";
	static const char *const want[][3] = {
		{"ep_dispatcher=alltoall (named in the row's text)", "!deepep"},
		{"!ep_dispatcher=deepep"},
		{"recompute_modules=layernorm,moe_act,shared_experts ('norm, act, shared_expert')"},
		{"recompute_modules=moe_act ('act')"},
		{"cuda_graphs=1 (the row's text says so)"},
		{"moe_token_drop=1 (the row's text says so)"},
		{"moe_token_drop=1 (the row's text says so)"},
		{"!moe_token_drop"},
	};
	static const char refused[] =
		"model,layers,hidden,heads,kv_heads,vocab,ffn,moe_experts,moe_topk,seq,tp,pp,dp,ep,"
		"micro_batch,global_batch,gpus,gpu,dtype,iter_s,source,notes\n"
		"Qwen3-Next-80B-A3B,48,2048,16,2,151936,512,512,10,4096,1,4,32,32,1,256,128,H100,"
		"bf16,2.2,Megatron-LM,\n";
	cvc_proj_validation v;
	char *out;

	tu_rows_said(text, want, sizeof want / sizeof want[0], NULL);
	out = tu_validate_text(refused, NULL, &v, CVC_OK);
	cr_expect(strstr(out, "not projected: gated DeltaNet (linear attention) layers are none "
			 "cvc prices") != NULL, "%s", out);
	cr_expect_eq(v.all.not_projected[CVC_PROJ_VWHY_UNMODELLED], 1);
	free(out);
	cvc_proj_validation_release(&v);
}
