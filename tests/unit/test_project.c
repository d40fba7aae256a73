/*
 * test_project.c - the projector: scenario files (errors with positions,
 * expansion, ranges, filters, auto layouts), the step decomposition and
 * overlap model (the findings on studies are in test_findings.c).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "cvc/cvc_project.h"
#include "projector/proj_internal.h"
#include "testutil.h"

static cvc_proj_study *parse_ok(const char *text)
{
	cvc_proj_study *st = NULL;
	cvc_status rc = cvc_proj_study_parse("t.yaml", text, strlen(text), &st);

	cr_assert_eq(rc, CVC_OK, "%s", cvc_proj_study_errmsg(st));
	return st;
}

static void parse_bad(const char *text, const char *want)
{
	cvc_proj_study *st = NULL;
	cvc_status rc = cvc_proj_study_parse("t.yaml", text, strlen(text), &st);

	cr_assert_eq(rc, CVC_ERR_FORMAT, "accepted: %s", text);
	cr_assert(strstr(cvc_proj_study_errmsg(st), want), "message '%s' lacks '%s'",
		  cvc_proj_study_errmsg(st), want);
	cvc_proj_study_free(st);
}

Test(project, errors_name_file_line_and_column)
{
	parse_bad("model: {layers: 2\n", "'t.yaml': line 2, column 1: expected valid YAML");
	parse_bad("model:\n  layers: 2\n  hiden: 3\n",
		  "'t.yaml': line 3, column 3: unknown key 'hiden' in section 'model'");
	parse_bad("training:\n  dtype: fp12\n", "line 2, column 10: expected one of bf16|fp16");
	parse_bad("hardware:\n  gpus: {from: 8, to: 4, mul: 2}\n", "line 2, column 9: expected 0 <= from <= to");
	parse_bad("hardware:\n  gpus: {from: 8, to: 64}\n", "exactly one of 'mul' or 'step'");
	parse_bad("where: \"tp * * 2\"\n", "line 1, column 8: in where: column 6");
	parse_bad("where: \"tpp > 1\"\n", "unknown field or output column name");
	parse_bad("model: [1, 2]\n", "line 1, column 9: unknown model '1': expected a name from cvc's "
		  "catalog (`cvc project --models` lists them), {config: FILE} (a Hugging Face "
		  "config.json) or a mapping of 'model' keys");
	parse_bad("modle: {}\n", "unknown section 'modle'");
	parse_bad("- 1\n", "expected a mapping at the top level");
	parse_bad("parallelism: {tp: -2}\n", "expected a non-negative number for 'tp' or auto");
}

struct collect {
	int n, valid;
	cvc_proj_scenario sc[64];
	cvc_proj_result r[64];
	char model[64][32];   /* sc[i].model dies with the study */
};

static int collect_cb(void *user, const cvc_proj_scenario *sc, const cvc_proj_result *r)
{
	struct collect *c = user;

	if (c->n < 64) {
		c->sc[c->n] = *sc;
		c->r[c->n] = *r;
		snprintf(c->model[c->n], sizeof c->model[0], "%s", sc->model);
	}
	c->n++;
	c->valid += r->valid;
	return 0;
}

struct walk {
	double last, size;
	int calls, in_order;
};

static void walk_cb(void *user, double walked, double size)
{
	struct walk *w = user;

	w->in_order &= walked == w->last + 1;
	w->last = walked;
	w->size = size;
	w->calls++;
}

/* Runs text's study, every scenario into c and, with w, every point of its
 * walk into w; returns the ctx that priced it (the caller frees it). */
static cvc_proj_ctx *run_ctx(const char *text, struct collect *c, int flags, struct walk *w)
{
	cvc_proj_study *st = parse_ok(text);
	cvc_proj_ctx *ctx = NULL;
	uint64_t n = 0;

	memset(c, 0, sizeof *c);
	cr_assert_eq(cvc_proj_ctx_new(NULL, &ctx), CVC_OK);
	if (w) {
		memset(w, 0, sizeof *w);
		w->in_order = 1;
		cvc_proj_study_on_walk(st, walk_cb, w);
	}
	cr_assert_eq(cvc_proj_study_run(st, ctx, flags, collect_cb, c, &n), CVC_OK, "%s",
		     cvc_proj_study_errmsg(st));
	cr_assert_eq((int)n, c->n);
	cvc_proj_study_free(st);
	return ctx;
}

static void run(const char *text, struct collect *c, int flags)
{
	cvc_proj_ctx_free(run_ctx(text, c, flags, NULL));
}

Test(project, cross_product_ranges_lists_and_where)
{
	struct collect c;

	/* 2 models x 3 batch sizes x 4 GPU counts = 24, minus the filter */
	run("# comment\n"
	    "model: [{name: a, layers: 4, hidden: 512, heads: 8},\n"
	    "        {name: b, layers: 8, hidden: 1024, heads: 16, seq: [1024]}]\n"
	    "training: {global_batch: [64, 128, 256]}\n"
	    "hardware: {gpus: {from: 8, to: 64, mul: 2}}\n", &c, 0);
	cr_assert_eq(c.n, 24);
	cr_assert_eq(c.valid, 24);
	cr_assert_str_eq(c.model[0], "a");
	cr_assert_str_eq(c.model[12], "b");
	cr_assert_eq(c.sc[12].seq, 1024);
	cr_assert_eq(c.sc[0].seq, 2048, "model a keeps the default seq");
	/* the last axis turns fastest */
	cr_assert_eq(c.sc[0].gpus, 8);
	cr_assert_eq(c.sc[1].gpus, 16);
	cr_assert_eq(c.sc[3].gpus, 64);
	cr_assert_eq(c.sc[4].global_batch, 128);

	run("model: {layers: 4, hidden: 512, heads: 8}\n"
	    "training: {global_batch: [64, 128, 256]}\n"
	    "hardware: {gpus: {from: 8, to: 64, step: 8}}\n"
	    "where: [\"gpus * 2 <= global_batch\", \"gpu == 'A100-SXM-80GB'\"]\n", &c, 0);
	/* gpus 8..64 step 8; pairs with 2*gpus <= batch: 4 + 8 + 8 = 20 */
	cr_assert_eq(c.n, 20);
	for (int i = 0; i < c.n && i < 64; i++)
		cr_assert_leq(2 * c.sc[i].gpus, c.sc[i].global_batch);
}

Test(project, walk_reports_points_the_filter_drops)
{
	/* a filter that passes nothing over 24 points; one point whose 13
	 * auto layouts are called back (the test below) */
	static const struct {
		const char *text;
		uint64_t rows;
		int points;
	} cases[] = {
		{"model: {layers: 4, hidden: 512, heads: 8}\n"
		 "training: {global_batch: [64, 128, 256]}\n"
		 "hardware: {gpus: {from: 8, to: 64, step: 8}}\n"
		 "where: \"gpus > 1000\"\n", 0, 24},
		{"model: {layers: 8, hidden: 1024, heads: 16}\n"
		 "training: {global_batch: 64}\n"
		 "parallelism: auto\n"
		 "hardware: {gpus: 16}\n", 13, 1},
	};

	/* progress comes from the walk, not the rows */
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct collect c;
		struct walk w;

		cvc_proj_ctx_free(run_ctx(cases[i].text, &c, 0, &w));
		cr_assert_eq((uint64_t)c.n, cases[i].rows, "case %zu", i);
		cr_assert_eq(w.calls, cases[i].points, "case %zu", i);
		cr_assert(w.in_order, "case %zu", i);
		cr_assert_eq(w.last, cases[i].points, "case %zu", i);
		cr_assert_eq(w.size, cases[i].points, "case %zu", i);
	}
}

/* On a terminal (a pseudo-terminal from util-linux's script(1)) `cvc
 * project` shows the walk of a study whose filter passes nothing; piped it
 * prints only its summary. */
Test(project, progress_on_a_terminal_only)
{
	static const char yaml[] = "model: {layers: 4, hidden: 512, heads: 8}\n"
				   "training: {global_batch: [64, 128]}\n"
				   "hardware: {gpus: {from: 8, to: 2048, step: 8}}\n"
				   "where: \"gpus > 100000\"\n";
	const char *dir = tu_tmpdir();
	char path[4200], cmd[8192], *out = NULL, *err = NULL;

	snprintf(path, sizeof path, "%s", tu_path(dir, "walk.yaml"));
	cr_assert_eq(tu_write(path, yaml, sizeof yaml - 1), 0);
	snprintf(cmd, sizeof cmd, "project '%s' --csv - >/dev/null", path);
	cr_assert_eq(tu_cvc(cmd, NULL, &err), 0, "%s", err);
	cr_expect_null(strstr(err, "projecting"), "piped: %s", err);
	/* the summary says the filter dropped every point */
	cr_expect(strstr(err, "0 scenarios (0 valid) from 512 points"), "%s", err);
	free(err);
	if (access("/usr/bin/script", X_OK) != 0)
		cr_skip_test("script(1) is missing (util-linux's bsdutils)");
	/* a sandbox without /dev/ptmx has no terminal to show progress on */
	if (tu_run("script -qec true /dev/null", NULL, &err) != 0)
		cr_skip_test("no pseudo-terminal here (script -qec true: %s)", err ? err : "");
	free(err);
	snprintf(cmd, sizeof cmd, "script -qec \"'%s' project '%s' --csv - >/dev/null\" /dev/null",
		 CVC_TOOL, path);
	cr_assert_eq(tu_run(cmd, &out, NULL), 0, "%s", out);
	/* the first draw comes at 256 of the 512 points */
	cr_expect(strstr(out, "projecting 'walk': 50.0% of 512 points, 0 scenarios"), "%s", out);
	free(out);
}

/* The "priced N times" counts of gpu's collectives after running text, in
 * origin order, into n[] (how many in *k). */
static void priced_counts(const char *text, double *n, int *k)
{
	struct collect c;
	cvc_proj_ctx *ctx = run_ctx(text, &c, 0, NULL);
	char buf[8192];
	const char *p;

	cr_assert_eq(cvc_proj_ctx_origin(ctx, "H100-SXM", 0, buf, sizeof buf), CVC_OK);
	for (*k = 0, p = buf; (p = strstr(p, "(priced ")) && *k < 16; p++)
		n[(*k)++] = strtod(p + 8, NULL);
	cvc_proj_ctx_free(ctx);
}

/* The provenance counts every pricing of a collective, the layer cache's
 * hits too: four copies of one scenario count four times what one does. */
Test(project, priced_counts_do_not_depend_on_the_cache)
{
	static const char one[] = "model: {layers: 8, hidden: 4096, heads: 32}\n"
				  "training: {global_batch: 64}\n"
				  "parallelism: {tp: 4, pp: 2}\n"
				  "hardware: {gpu: H100-SXM, gpus: 64}\n";
	static const char four[] = "model: {layers: 8, hidden: 4096, heads: 32}\n"
				   "training: {global_batch: 64}\n"
				   "parallelism: {tp: 4, pp: 2}\n"
				   "hardware: {gpu: H100-SXM, gpus: [64, 64, 64, 64]}\n";
	double a[16], b[16];
	int na, nb;

	priced_counts(one, a, &na);
	priced_counts(four, b, &nb);
	cr_assert_geq(na, 2, "TP and data-parallel collectives");
	cr_assert_eq(na, nb);
	for (int i = 0; i < na; i++)
		cr_expect_eq(b[i], 4 * a[i], "collective %d: %g, four times %g", i, b[i], a[i]);
}

Test(project, auto_layouts_are_valid_and_cover_tp_pp)
{
	struct collect c;
	int seen_tp8 = 0, seen_pp4 = 0;

	run("model: {layers: 8, hidden: 1024, heads: 16}\n"
	    "training: {global_batch: 64}\n"
	    "parallelism: auto\n"
	    "hardware: {gpus: 16}\n", &c, 0);
	/* tp in {1,2,4,8} x pp in {1,2,4,8} with tp*pp | 16: 4+4+3+2 */
	cr_assert_eq(c.n, 13, "got %d layouts", c.n);
	for (int i = 0; i < c.n; i++) {
		cr_assert(c.r[i].valid, "%s", c.r[i].reason);
		cr_assert_eq(c.sc[i].tp * c.sc[i].pp * c.sc[i].dp, 16);
		seen_tp8 |= c.sc[i].tp == 8;
		seen_pp4 |= c.sc[i].pp == 4;
	}
	cr_assert(seen_tp8 && seen_pp4);
	/* a fixed impossible layout is reported, not skipped */
	run("model: {layers: 6, hidden: 1024, heads: 16}\n"
	    "parallelism: {tp: 3, pp: 4}\nhardware: {gpus: 24}\n", &c, 0);
	cr_assert_eq(c.n, 1);
	cr_assert_eq(c.r[0].valid, 0);
	cr_assert(strstr(c.r[0].reason, "heads not divisible by tp"), "%s", c.r[0].reason);
	run("model: {layers: 6, hidden: 1024, heads: 16}\n"
	    "parallelism: {tp: 3, pp: 4}\nhardware: {gpus: 24}\n", &c, CVC_PROJ_VALID_ONLY);
	cr_assert_eq(c.n, 0);
}

static void eval(const char *extra, cvc_proj_result *r, cvc_proj_scenario *out)
{
	char text[2048];
	struct collect c;

	snprintf(text, sizeof text,
		 "model: {layers: 32, hidden: 4096, heads: 32, seq: 2048}\n"
		 "training: {global_batch: 512, micro_batch: 1}\n"
		 "hardware: {gpu: H100-SXM, gpus: 256, host_launch_us: 0}\n%s", extra);
	run(text, &c, 0);
	cr_assert_eq(c.n, 1);
	cr_assert(c.r[0].valid, "%s", c.r[0].reason);
	*r = c.r[0];
	if (out)
		*out = c.sc[0];
}

static void check_sums(const cvc_proj_result *r)
{
	double comm = 0, hid = 0, exp = 0;

	for (int k = 0; k < CVC_PROJ_COMM_N; k++) {
		cr_assert_float_eq(r->hidden_type_s[k] + r->exposed_type_s[k], r->comm_type_s[k],
				   1e-12 + 1e-9 * r->comm_type_s[k], "type %s",
				   cvc_proj_comm_name(k));
		cr_assert_geq(r->hidden_type_s[k], 0);
		comm += r->comm_type_s[k];
		hid += r->hidden_type_s[k];
		exp += r->exposed_type_s[k];
	}
	cr_assert_float_eq(comm, r->comm_s, 1e-9 * comm);
	cr_assert_float_eq(hid + exp, r->comm_s, 1e-9 * comm);
	cr_assert_float_eq(r->compute_s + r->exposed_s + r->bubble_s, r->step_s, 1e-9 * r->step_s);
}

Test(project, decomposition_and_overlap)
{
	cvc_proj_result a, b, c2;
	cvc_proj_scenario sa;

	/* DP overlap hides part of the gradient all-reduce under backward */
	eval("comm: {dp_overlap: false}\n", &a, &sa);
	eval("comm: {dp_overlap: true}\n", &b, NULL);
	check_sums(&a);
	check_sums(&b);
	cr_assert_eq(sa.dp, 256);
	cr_assert_gt(a.comm_type_s[CVC_PROJ_COMM_DP], 0);
	cr_assert_eq(a.hidden_type_s[CVC_PROJ_COMM_DP], 0);
	cr_assert_gt(b.hidden_type_s[CVC_PROJ_COMM_DP], 0);
	cr_assert_lt(b.step_s, a.step_s);
	/* contention: hidden communication slows the compute under it */
	cr_assert_float_eq(b.contention_s, 0.1 * b.hidden_s, 1e-12);

	/* local SGD amortises the sync over H steps */
	eval("comm: {dp_overlap: false, local_sgd_h: 4}\n", &c2, NULL);
	cr_assert_float_eq(c2.comm_type_s[CVC_PROJ_COMM_DP], a.comm_type_s[CVC_PROJ_COMM_DP] / 4,
			   1e-12);

	/* pipeline bubble: (pp-1)/v of a micro-batch; interleaving shrinks it */
	eval("parallelism: {tp: 2, pp: 4}\n", &a, &sa);
	eval("parallelism: {tp: 2, pp: 4, vpp: 2}\n", &b, NULL);
	check_sums(&a);
	cr_assert_gt(a.bubble_s, 0);
	cr_assert_float_eq(b.bubble_s, a.bubble_s / 2, 1e-9, "bubble %g vs %g", b.bubble_s,
			   a.bubble_s);
	cr_assert_gt(a.comm_type_s[CVC_PROJ_COMM_PP], 0);
	/* 1F1B waits on every exchange; interleaved hides all but 2(pp v - 1) of 2 v m */
	cr_assert_eq(a.hidden_type_s[CVC_PROJ_COMM_PP], 0);
	cr_assert_float_eq(b.hidden_type_s[CVC_PROJ_COMM_PP], b.comm_type_s[CVC_PROJ_COMM_PP] * 50 / 64,
			   1e-9 * b.comm_type_s[CVC_PROJ_COMM_PP]);
	cr_assert_gt(a.comm_type_s[CVC_PROJ_COMM_TP], 0);
	/* m = 512/(32*1) = 16 micro-batches: bubble = 3/16 of the pipeline */
	cr_assert_float_eq(a.bubble_s / (a.step_s - a.bubble_s), 3.0 / 16, 0.03);

	/* sequence parallelism: forward RS+AG, backward 2 AGs more (wgrad's
	 * inputs): 5/4 of the AR path's bytes, at each one's measured NVLink
	 * share (XLA H100: AR 0.892, AG 0.775, RS 0.724); TP overlap hides part. */
	eval("parallelism: {tp: 8}\n", &a, NULL);
	eval("parallelism: {tp: 8, sp: true}\n", &b, NULL);
	eval("parallelism: {tp: 8, sp: true}\ncomm: {tp_overlap: true}\n", &c2, NULL);
	cr_assert(b.comm_type_s[CVC_PROJ_COMM_TP] / a.comm_type_s[CVC_PROJ_COMM_TP] >= 1.25 &&
		  b.comm_type_s[CVC_PROJ_COMM_TP] / a.comm_type_s[CVC_PROJ_COMM_TP] <= 1.25 * 0.892 / 0.724,
		  "sp %g, all-reduce %g", b.comm_type_s[CVC_PROJ_COMM_TP], a.comm_type_s[CVC_PROJ_COMM_TP]);
	cr_assert_lt(b.mem_gb, a.mem_gb, "sp shards activations");
	cr_assert_eq(a.hidden_type_s[CVC_PROJ_COMM_TP], 0);
	cr_assert_gt(c2.hidden_type_s[CVC_PROJ_COMM_TP], 0);

	/* ZeRO-3/FSDP: per-layer gathers, less memory */
	eval("training: {zero: 0}\n", &a, NULL);
	eval("training: {fsdp: true}\n", &b, NULL);
	check_sums(&b);
	cr_assert_eq(a.comm_type_s[CVC_PROJ_COMM_FSDP], 0);
	cr_assert_gt(b.comm_type_s[CVC_PROJ_COMM_FSDP], 0);
	cr_assert_gt(b.hidden_type_s[CVC_PROJ_COMM_FSDP], 0);
	cr_assert_lt(b.mem_gb, a.mem_gb / 2);

	/* MoE all-to-all only with expert parallelism; multi-cluster sync */
	eval("model: {experts: 8, top_k: 2}\nparallelism: {ep: 8}\n", &a, NULL);
	cr_assert_gt(a.comm_type_s[CVC_PROJ_COMM_EP], 0);
	eval("comm: {clusters: 2, inter_cluster_gbps: 50, local_sgd_h: 1}\n", &a, NULL);
	eval("comm: {clusters: 2, inter_cluster_gbps: 50, local_sgd_h: 8}\n", &b, NULL);
	cr_assert_gt(a.comm_type_s[CVC_PROJ_COMM_XC], 0);
	cr_assert_float_eq(b.comm_type_s[CVC_PROJ_COMM_XC], a.comm_type_s[CVC_PROJ_COMM_XC] / 8,
			   1e-12);

	/* faster links shorten communication, faster compute shortens compute */
	eval("training: {zero: 0}\ncomm: {dp_overlap: false}\n", &a, NULL);
	eval("training: {zero: 0}\ncomm: {dp_overlap: false}\n"
	     "hardware: {scale: {inter_bw: 2}}\n", &b, NULL);
	eval("training: {zero: 0}\ncomm: {dp_overlap: false}\n"
	     "hardware: {scale: {compute: 2}}\n", &c2, NULL);
	cr_assert_lt(b.comm_type_s[CVC_PROJ_COMM_DP], a.comm_type_s[CVC_PROJ_COMM_DP]);
	cr_assert_lt(c2.compute_s, a.compute_s);
	cr_assert_float_eq(c2.comm_type_s[CVC_PROJ_COMM_DP], a.comm_type_s[CVC_PROJ_COMM_DP], 1e-12);

	/* MFU against the FLOPs: 6 N D-like count, HFU counts recompute */
	eval("training: {recompute: full}\n", &a, NULL);
	cr_assert_gt(a.hfu, a.mfu);
	cr_assert_float_eq(a.tokens_per_s, 512.0 * 2048 / a.step_s, 1e-6 * a.tokens_per_s);
	cr_assert_float_eq(a.gpu_hours, 256 * 1e12 / a.tokens_per_s / 3600, 1e-6 * a.gpu_hours);
}

Test(project, megatron_formula)
{
	/* eq. 3 of Narayanan et al. 2021 for GPT-3 175B, B = 1536 */
	double f = cvc_proj_megatron_flops(1536, 2048, 96, 12288, 51200);

	cr_assert_float_eq(f, 96.0 * 1536 * 2048 * 96 * 12288.0 * 12288 *
				      (1 + 2048 / (6.0 * 12288) + 51200 / (16.0 * 96 * 12288)),
			   1);
}

Test(project, streaming_stops_when_asked)
{
	cvc_proj_study *st = parse_ok("hardware: {gpus: {from: 1, to: 1000, step: 1}}\n");
	cvc_proj_ctx *ctx = NULL;
	uint64_t n = 0;
	struct collect c = {0};

	cr_assert_eq(cvc_proj_ctx_new(NULL, &ctx), CVC_OK);
	cr_assert_float_eq(cvc_proj_study_size(st), 1000, 0);
	cr_assert_eq(cvc_proj_study_run(st, ctx, 0, collect_cb, &c, &n), CVC_OK);
	cr_assert_eq(n, 1000);
	cvc_proj_ctx_free(ctx);
	cvc_proj_study_free(st);
}

/* ---- layouts of today's runs ----------------------------------------------- */

/* Llama 3 405B as Meta ran it (Dubey et al. 2024, section 3.3): 126 layers,
 * TP 8, PP 16, seq 8192, 16K H100s, the first and the last pipeline stage
 * one layer fewer (embedding and loss counted as stage work). */
Test(project, llama3_405b_as_meta_ran_it)
{
	struct collect c;

	run("model: {name: llama3-405b, layers: 126, hidden: 16384, heads: 128, kv_heads: 8,\n"
	    "        ffn: 53248, ffn_type: swiglu, vocab: 128256, seq: 8192}\n"
	    "training: {global_batch: 2048, micro_batch: 1, recompute: none, distributed_optimizer: "
	    "true}\n"
	    "parallelism: {tp: 8, pp: 16, sp: true}\n"
	    "hardware: {gpu: H100, gpus: 16384}\n", &c, 0);
	cr_assert_eq(c.n, 1);
	cr_assert(c.r[0].valid, "%s", c.r[0].reason);
	cr_assert_eq(c.sc[0].dp, 128);
	cr_assert_eq(c.sc[0].zero, 1);
	/* the same with the stages given, and a split that cannot hold */
	run("model: {layers: 126, hidden: 16384, heads: 128, kv_heads: 8, ffn: 53248,\n"
	    "        ffn_type: swiglu, vocab: 128256, seq: 8192}\n"
	    "training: {global_batch: 2048}\n"
	    "parallelism: [{tp: 8, pp: 16, first_stage_layers: 7, last_stage_layers: 7},\n"
	    "              {tp: 8, pp: 16, first_stage_layers: 5, last_stage_layers: 6},\n"
	    "              {tp: 8, pp: 16, vpp: 3}]\n"
	    "hardware: {gpu: H100, gpus: 16384}\n", &c, 0);
	cr_assert_eq(c.n, 3);
	cr_assert(c.r[0].valid, "%s", c.r[0].reason);
	cr_assert_eq(c.r[1].valid, 0);
	cr_assert(strstr(c.r[1].reason, "do not divide evenly"), "%s", c.r[1].reason);
	cr_assert_eq(c.r[2].valid, 0);
	cr_assert(strstr(c.r[2].reason, "first_stage_layers"), "%s", c.r[2].reason);
}

/* An uneven split: the slowest stage sets the pace.  30 layers on 4
 * stages run as 7, 8, 8, 7 with the logits beside the last 7: slower than
 * 28 even layers (7 + logits), faster than 32 (8 + logits). */
Test(project, uneven_stages_price_the_slowest)
{
	cvc_proj_result a, b, c2;

	eval("parallelism: {pp: 4}\nmodel: {layers: 30}\n", &a, NULL);
	eval("parallelism: {pp: 4}\nmodel: {layers: 32}\n", &b, NULL);
	eval("parallelism: {pp: 4}\nmodel: {layers: 28}\n", &c2, NULL);
	cr_assert_lt(a.step_s, b.step_s, "30: %g, 32: %g", a.step_s, b.step_s);
	cr_assert_gt(a.step_s, c2.step_s, "30: %g, 28: %g", a.step_s, c2.step_s);
}

/* TP overlap, per collective: the reduce-scatters and all-gathers hide
 * under the GEMMs they feed, and the overlap costs the pipelined GEMMs the
 * SMs held back (contention); without sp there is nothing to overlap. */
Test(project, tp_overlap_per_collective)
{
	cvc_proj_result none, ag, all, ar;

	eval("parallelism: {tp: 8, sp: true}\n", &none, NULL);
	eval("parallelism: {tp: 8, sp: true}\ncomm: {tp_overlap_ag: true}\n", &ag, NULL);
	eval("parallelism: {tp: 8, sp: true}\ncomm: {tp_overlap: true}\n", &all, NULL);
	eval("parallelism: {tp: 8}\ncomm: {tp_overlap: true}\n", &ar, NULL);
	check_sums(&ag);
	check_sums(&all);
	cr_assert_eq(none.hidden_type_s[CVC_PROJ_COMM_TP], 0);
	cr_assert_gt(ag.hidden_type_s[CVC_PROJ_COMM_TP], 0);
	cr_assert_gt(all.hidden_type_s[CVC_PROJ_COMM_TP], ag.hidden_type_s[CVC_PROJ_COMM_TP]);
	cr_assert_lt(all.hidden_type_s[CVC_PROJ_COMM_TP], all.comm_type_s[CVC_PROJ_COMM_TP],
		     "the last chunks stay exposed");
	cr_assert_gt(all.contention_s, ag.contention_s, "SMs held back for the reduce-scatter");
	cr_assert_lt(all.step_s, none.step_s);
	cr_assert_eq(ar.hidden_type_s[CVC_PROJ_COMM_TP], 0);
}

/* FP8, no recompute: GEMMs at the fp8 rate, attention and logits in bf16,
 * the casts each recipe adds; the step gains far less than 2x. */
Test(project, fp8_recipes)
{
	cvc_proj_result bf, delayed, current, fp8attn;

	eval("training: {dtype: bf16, recompute: none}\n", &bf, NULL);
	eval("training: {dtype: fp8, recompute: none}\n", &delayed, NULL);
	eval("training: {dtype: fp8, fp8_recipe: current, recompute: none}\n", &current, NULL);
	eval("training: {dtype: fp8, fp8_attention: true, recompute: none}\n", &fp8attn, NULL);
	cr_assert_lt(delayed.step_s, bf.step_s);
	cr_assert_gt(delayed.step_s, bf.step_s / 2 * 1.15, "bf16 %g fp8 %g", bf.step_s,
		     delayed.step_s);
	cr_assert_gt(current.step_s, delayed.step_s, "current scaling reads each tensor once more");
	/* fp8 attention is priced by cuDNN's fp8 curves: on Hopper its causal
	 * backward is slower than the bf16 one (h200 tables, 0.38 vs 0.59) */
	cr_assert_gt(fp8attn.step_s, delayed.step_s);
}

/* MoE as Megatron-Core runs it: grouped expert GEMMs, token permutation,
 * the all-to-all inside the NVLink domain or across it, expert TP. */
Test(project, moe_expert_layouts)
{
	struct collect c;

	run("model: {layers: 16, hidden: 4096, heads: 32, kv_heads: 8, ffn: 14336, ffn_type: swiglu,\n"
	    "        experts: 8, top_k: 2}\n"
	    "training: {global_batch: 256}\n"
	    "parallelism: [{ep: 8}, {ep: 8, tp: 2, etp: 1, sp: true}, {ep: 8, etp: 3}, {ep: 16}]\n"
	    "hardware: {gpu: H100, gpus: [16, 64]}\n", &c, 0);
	cr_assert_eq(c.n, 8);
	cr_assert(c.r[0].valid && c.r[1].valid, "%s / %s", c.r[0].reason, c.r[1].reason);
	cr_assert_gt(c.r[0].comm_type_s[CVC_PROJ_COMM_EP], 0);
	/* 8 experts over ep 8: inside one node; with etp 1 and tp 2 the
	 * ep x etp ranks still fit */
	cr_assert(c.r[2].valid);
	cr_assert_eq(c.r[4].valid, 0, "etp 3 does not divide ffn");
	cr_assert(strstr(c.r[4].reason, "etp"), "%s", c.r[4].reason);
	cr_assert_eq(c.r[6].valid, 0, "16 experts needed for ep 16");
	/* ep 8 at 16 or 64 GPUs (16 or 4 micro-batches): the same all-to-all
	 * per micro-batch, inside a node */
	cr_assert_float_eq(c.r[1].comm_type_s[CVC_PROJ_COMM_EP] * 4,
			   c.r[0].comm_type_s[CVC_PROJ_COMM_EP],
			   1e-9 * c.r[0].comm_type_s[CVC_PROJ_COMM_EP],
			   "per-step all-to-all %g (64 GPUs) vs %g (16)",
			   c.r[1].comm_type_s[CVC_PROJ_COMM_EP], c.r[0].comm_type_s[CVC_PROJ_COMM_EP]);
}

/* NVL72: a 72-GPU NVLink domain keeps TP and EP traffic off the network. */
Test(project, nvl72_domain)
{
	struct collect c;

	run("model: {layers: 16, hidden: 8192, heads: 64, kv_heads: 8, ffn: 28672, ffn_type: swiglu,\n"
	    "        experts: 64, top_k: 8}\n"
	    "training: {global_batch: 1152}\n"
	    "parallelism: {ep: 64}\n"
	    "hardware: [{gpu: B200, gpus: 576}, {gpu: GB200, gpus: 576, gpus_per_node: 72},\n"
	    "           {gpu: GB200, gpus: 576, nvlink_domain: 72}]\n", &c, 0);
	cr_assert_eq(c.n, 3);
	for (int i = 0; i < 3; i++)
		cr_assert(c.r[i].valid, "%d: %s", i, c.r[i].reason);
	cr_assert_lt(c.r[1].comm_type_s[CVC_PROJ_COMM_EP], c.r[0].comm_type_s[CVC_PROJ_COMM_EP] / 2,
		     "all-to-all of 64 inside one NVL72 domain %g vs across 8 nodes %g",
		     c.r[1].comm_type_s[CVC_PROJ_COMM_EP], c.r[0].comm_type_s[CVC_PROJ_COMM_EP]);
	cr_assert_float_eq(c.r[2].step_s, c.r[1].step_s, 1e-12 * c.r[1].step_s);
}

/* Hybrid sharding: ZeRO-3 inside a node, replicas across; more memory than
 * full sharding, gathers inside NVLink, one all-reduce of the shards. */
Test(project, hybrid_sharding)
{
	cvc_proj_result full, hybrid;

	eval("training: {fsdp: true}\n", &full, NULL);
	eval("training: {fsdp: true, shard_group: 8}\n", &hybrid, NULL);
	check_sums(&hybrid);
	cr_assert_gt(hybrid.mem_gb, full.mem_gb);
	cr_assert_gt(hybrid.comm_type_s[CVC_PROJ_COMM_DP], 0);
	cr_assert_lt(hybrid.comm_type_s[CVC_PROJ_COMM_FSDP], full.comm_type_s[CVC_PROJ_COMM_FSDP]);
}

/*
 * Gradient buckets: `auto` (the default) is the framework's own, Megatron-
 * Core's max(40M, 1M x dp) parameters at the gradients' 2 bytes, PyTorch
 * DDP's 25 MiB; a number is taken as given.  At dp 256 Megatron's bucket
 * is 512 MB, and the reduce-scatter in 25 MB buckets, each paying the
 * ring's latency over 32 nodes, costs more.
 */
Test(project, gradient_buckets_follow_the_framework)
{
	cvc_proj_result a, m, small, ta, tm;
	cvc_proj_scenario sc;

	eval("training: {zero: 1}\n", &a, &sc);
	cr_assert_eq(sc.bucket_mb, -1, "auto stays auto in the output: %g", sc.bucket_mb);
	eval("training: {zero: 1}\ncomm: {bucket_mb: 512}\n", &m, NULL);
	eval("training: {zero: 1}\ncomm: {bucket_mb: 25}\n", &small, NULL);
	cr_assert_float_eq(a.comm_type_s[CVC_PROJ_COMM_DP], m.comm_type_s[CVC_PROJ_COMM_DP], 1e-12,
			   "auto %g s, 512 MB %g s", a.comm_type_s[CVC_PROJ_COMM_DP],
			   m.comm_type_s[CVC_PROJ_COMM_DP]);
	cr_assert_gt(small.comm_type_s[CVC_PROJ_COMM_DP], 1.5 * a.comm_type_s[CVC_PROJ_COMM_DP],
		     "25 MB %g s, 512 MB %g s", small.comm_type_s[CVC_PROJ_COMM_DP],
		     a.comm_type_s[CVC_PROJ_COMM_DP]);
	eval("training: {framework: pytorch}\n", &ta, NULL);
	eval("training: {framework: pytorch}\ncomm: {bucket_mb: 26.2144}\n", &tm, NULL);
	cr_assert_float_eq(ta.comm_type_s[CVC_PROJ_COMM_DP], tm.comm_type_s[CVC_PROJ_COMM_DP],
			   1e-12, "PyTorch auto %g s, 25 MiB %g s", ta.comm_type_s[CVC_PROJ_COMM_DP],
			   tm.comm_type_s[CVC_PROJ_COMM_DP]);
}

/* validate's column names are scenario fields too. */
Test(project, published_column_names_are_fields)
{
	struct collect c;

	run("model: {layers: 8, hidden: 1024, heads: 16, moe_experts: 8, moe_topk: 2}\n"
	    "training: {zero_fsdp: 3, framework: pytorch, attention: fa2}\n"
	    "parallelism: {seq_parallel: true, tp: 2, ep: 2}\n"
	    "hardware: {gpus: 16}\n", &c, 0);
	cr_assert_eq(c.n, 1);
	cr_assert(c.r[0].valid, "%s", c.r[0].reason);
	cr_assert_eq(c.sc[0].experts, 8);
	cr_assert_eq(c.sc[0].top_k, 2);
	cr_assert_eq(c.sc[0].zero, 3);
	cr_assert_eq(c.sc[0].sp, 1);
	cr_assert_eq(c.sc[0].framework, CVC_PROJ_FW_PYTORCH);
}

/* Rankings offer only what runs: --top leaves out layouts that do not fit
 * (unless --include-unfit), and where: filters on output columns. */
Test(project, rankings_offer_what_fits)
{
	const char *dir = tu_tmpdir(), *y = tu_path(dir, "s.yaml");
	const char *text =
		"model: {layers: 105, hidden: 20480, heads: 128, seq: 2048}\n"
		"training: {global_batch: 2240, recompute: [none, full], attention: unfused, "
		"dropout: true}\n"
		"parallelism: auto\n"
		"hardware: {gpu: A100, gpus: 2240}\n";
	char args[4096], *out = NULL, *err = NULL;
	int fits_col = -1, rows = 0, col = 0;
	struct collect c;

	cr_assert_eq(tu_write(y, text, strlen(text)), 0);
	snprintf(args, sizeof args, "project '%s' --top 5 --by tokens_per_s --no-marginal", y);
	cr_assert_eq(tu_cvc(args, &out, &err), 0, "%s", err);
	/* the fits column of the header */
	for (const char *p = out; *p && *p != '\n'; p++) {
		if (p == out || p[-1] == ',') {
			if (!strncmp(p, "fits,", 5))
				fits_col = col;
			col++;
		}
	}
	cr_assert_geq(fits_col, 0);
	for (char *line = strchr(out, '\n'); line && line[1]; line = strchr(line + 1, '\n')) {
		const char *q = line + 1;

		for (int i = 0; i < fits_col; i++)
			q = strchr(q, ',') + 1;
		cr_expect_eq(*q, '1', "a row that does not fit: %.120s", line + 1);
		rows++;
	}
	/* 530B on 2240 A100s: only tp 8 x pp 35 with full recompute fits */
	cr_expect_eq(rows, 1);
	free(out), free(err);
	snprintf(args, sizeof args, "project '%s' --top 5 --include-unfit --no-marginal", y);
	cr_assert_eq(tu_cvc(args, &out, &err), 0, "%s", err);
	cr_expect_eq(tu_count_lines(out), 6, "%s", out);
	free(out), free(err);
	/* where: over output columns, after evaluation */
	run("model: {layers: 24, hidden: 2048, heads: 16}\n"
	    "training: {global_batch: 512, micro_batch: [1, 64]}\n"
	    "hardware: {gpu: A100, gpus: 8}\n"
	    "where: \"fits == 1 && mfu > 0.3\"\n", &c, 0);
	cr_assert_eq(c.n, 1, "micro-batch 64 of a 1.3B model does not fit in 80 GB: %d", c.n);
	cr_assert(c.r[0].fits && c.r[0].mfu > 0.3);
	cr_assert_eq(c.sc[0].micro_batch, 1);
}

/* ---- memory (docs/SCENARIOS.md "Memory") ------------------------------------ */

/* A layout between the lowest published out-of-memory ceiling and their
 * median does not fit, and says it may; one under the lowest fits and says
 * nothing about memory; one over the median does not fit and says nothing.
 * Llama 2 70B with tp 8 on A100 80GB: fp32 gradients, ZeRO-1 over dp 256
 * and selective recompute keeps 82.1 GB (95.5% of the 80 GiB); full recompute, less;
 * two sequences per micro-batch, more. */
Test(project, memory_between_the_published_ceilings_may_fit)
{
	static const char *const rc[] = {"selective", "full", "selective"};
	struct collect c;
	char y[1024];

	for (int i = 0; i < 3; i++) {
		double share;
		const char *w;

		snprintf(y, sizeof y,
			 "model: {layers: 80, hidden: 8192, heads: 64, kv_heads: 8, ffn: 28672,\n"
			 "        ffn_type: swiglu, vocab: 32000, seq: 4096}\n"
			 "training: {global_batch: 4096, micro_batch: %d, recompute: %s, zero: 1,\n"
			 "           grad_reduce_fp32: true}\n"
			 "parallelism: {tp: 8, pp: 1}\n"
			 "hardware: {gpu: A100-SXM-80GB, gpus: 2048}\n", i == 2 ? 2 : 1, rc[i]);
		run(y, &c, 0);
		cr_assert_eq(c.n, 1);
		cr_assert(c.r[0].valid, "%s", c.r[0].reason);
		share = c.r[0].mem_gb * 1e9 / (80 * 1073741824.0);
		w = strstr(c.r[0].warnings, "may fit");
		cr_expect_eq(c.r[0].fits, share <= PROJ_HBM_USABLE, "%s: %.3f", rc[i], share);
		cr_expect_eq(w != NULL, share > PROJ_HBM_USABLE && share <= PROJ_HBM_MEDIAN,
			     "%s: %.3f of HBM: %s", rc[i], share, c.r[0].warnings);
		if (i == 0)
			cr_expect(share > PROJ_HBM_USABLE && share <= PROJ_HBM_MEDIAN && w,
				  "the case this test is for: %.3f", share);
		else if (i == 1)
			cr_expect(c.r[0].fits, "full recompute: %.3f", share);
		else
			cr_expect(share > PROJ_HBM_MEDIAN && !c.r[0].fits, "micro-batch 2: %.3f", share);
	}
}

/* One layer's activations per s*b*h, from a one-layer, one-stage scenario. */
static double act_sbh(const char *extra, int h, int a, int s, int t)
{
	char text[2048];
	struct collect c;

	snprintf(text, sizeof text,
		 "model: {layers: 1, hidden: %d, heads: %d, seq: %d, vocab: 128}\n"
		 "training: {global_batch: %d, micro_batch: 1, attention: unfused, dropout: true, "
		 "dtype: fp16}\n"
		 "parallelism: {tp: %d}\nhardware: {gpu: A100, gpus: %d}\n%s",
		 h, a, s, t, t, t, extra);
	run(text, &c, 0);
	cr_assert_eq(c.n, 1);
	cr_assert(c.r[0].valid, "%s", c.r[0].reason);
	return c.r[0].mem_act_gb * 1e9 / ((double)s * h);
}

/* Korthikanti et al. 2022, Table 2: activation memory per layer of the GPT
 * layer (LayerNorm, GELU 4h, dropout, unfused attention), in bytes per
 * s*b*h: 34 + 5as/h without parallelism; 10 + 24/t + 5as/(ht) with tensor
 * parallelism; 34/t + 5as/(ht) with sequence parallelism; 10 + 24/t with
 * selective recomputation; 34/t with both; 2 (/t with sp) with full
 * recomputation (the stored input; the one layer re-materialised in
 * backward is counted once more). */
Test(project, korthikanti_table2_activation_memory)
{
	const int h = 12288, a = 96, s = 2048, t = 8;
	double as_h = 5.0 * a * s / h;

	cr_expect_float_eq(act_sbh("training: {recompute: none}\n", h, a, s, 1), 34 + as_h,
			   0.01 * (34 + as_h));
	cr_expect_float_eq(act_sbh("training: {recompute: none}\n", h, a, s, t),
			   10 + 24.0 / t + as_h / t, 0.01 * (10 + 24.0 / t + as_h / t));
	cr_expect_float_eq(act_sbh("training: {recompute: none}\nparallelism: {sp: true}\n", h, a,
				   s, t),
			   (34 + as_h) / t, 0.01 * (34 + as_h) / t);
	cr_expect_float_eq(act_sbh("training: {recompute: selective}\n", h, a, s, t),
			   10 + 24.0 / t, 0.01 * (10 + 24.0 / t));
	cr_expect_float_eq(act_sbh("training: {recompute: selective}\nparallelism: {sp: true}\n",
				   h, a, s, t),
			   34.0 / t, 0.01 * 34 / t);
}

/* MT-NLG 530B (105 layers, h 20480, 128 heads, s 2048) with tp 32 x pp 35,
 * unfused attention, no recompute: per layer sbh (10 + 24/32 + 5as/(32h))
 * = 534.8 MB (Korthikanti's Table 2), 3 layers x 35 micro-batches in flight
 * on the first stage: 56.2 GB (docs/SCENARIOS.md).  (The activation term
 * once counted s twice: 18,154 GB for a 530B tp 32 layout.) */
Test(project, mt_nlg_530b_tp32_activations)
{
	struct collect c;
	double per_layer = 2048.0 * 20480 * (10 + 24.0 / 32 + 5.0 * 128 * 2048 / (20480 * 32));

	run("model: {layers: 105, hidden: 20480, heads: 128, seq: 2048, vocab: 51200}\n"
	    "training: {global_batch: 2240, recompute: none, attention: unfused, dropout: true, "
	    "dtype: fp16}\n"
	    "parallelism: {tp: 32, pp: 35}\nhardware: {gpu: A100, gpus: 2240}\n", &c, 0);
	cr_assert_eq(c.n, 1);
	cr_assert(c.r[0].valid, "%s", c.r[0].reason);
	cr_expect_float_eq(c.r[0].mem_act_gb, 105 * per_layer / 1e9, 0.01 * 105 * per_layer / 1e9,
			   "%g GB", c.r[0].mem_act_gb);
	cr_expect_lt(c.r[0].mem_gb, 80, "%g GB", c.r[0].mem_gb);
}

/* Llama 3 405B as Meta ran it (Dubey et al. 2024 3.3: tp 8, pp 16, seq
 * 8192, no activation checkpointing, FSDP for dp without resharding after
 * forward: ZeRO-2) fits its 80 GB H100s.  Hand-derived (docs/SCENARIOS.md):
 * 65,088 B per token per layer (norm inputs 8192, QKV input 4096, Q/K/V
 * 4608, LSE 64, attention output 4096, FC1 input 4096, SwiGLU input
 * 26,624, FC2 input 13,312), 8 layers x 15 micro-batches x 8192 tokens on
 * the second stage: 63.98 GB. */
Test(project, llama3_405b_memory_as_meta_ran_it)
{
	struct collect c;

	run("model: {layers: 126, hidden: 16384, heads: 128, kv_heads: 8, ffn: 53248,\n"
	    "        ffn_type: swiglu, vocab: 128256, seq: 8192}\n"
	    "training: {global_batch: 2048, micro_batch: 1, recompute: none, zero: 2}\n"
	    "parallelism: {tp: 8, pp: 16, sp: true}\nhardware: {gpu: H100, gpus: 16384}\n", &c, 0);
	cr_assert_eq(c.n, 1);
	cr_assert(c.r[0].valid, "%s", c.r[0].reason);
	cr_expect_float_eq(c.r[0].mem_act_gb, 8 * 15 * 8192.0 * 65088 / 1e9, 0.005 * 64,
			   "%g GB", c.r[0].mem_act_gb);
	cr_expect(c.r[0].fits, "%.1f GB of %.1f", c.r[0].mem_gb, c.r[0].hbm_gb);
}

/* Claim: an untied output layer (Llama's --untie-embeddings-and-output-
 * weights) is a second vocabulary matrix on the GPU when one pipeline stage
 * holds both ends, and only then.  Setup: Llama 3 8B (vocab 128256, h
 * 4096), ZeRO 0, tp 1, fp32 gradients: 18 bytes per parameter (bf16
 * weight, fp32 gradient, master and two moments).  Exact: pp 1 untied holds 128256 x 4096 x 18 B
 * = 9.456 GB more than tied; pp 2 the same either way (the last stage keeps
 * the output layer or Megatron-Core's tied copy). */
Test(project, untied_output_layer_memory)
{
	struct collect c;
	int valid = 0;

	run("model: {layers: 32, hidden: 4096, heads: 32, kv_heads: 8, ffn: 14336,\n"
	    "        ffn_type: swiglu, vocab: 128256, seq: 8192, tie_embeddings: [true, false]}\n"
	    "training: {global_batch: 64, zero: 0, grad_reduce_fp32: true}\n"
	    "parallelism: {pp: [1, 2]}\nhardware: {gpu: H100, gpus: 16}\n", &c, 0);
	for (int i = 0; i < c.n; i++)
		valid += c.r[i].valid;
	cr_assert_eq(valid, 4, "%d of %d valid", valid, c.n);
	cr_expect_float_eq(c.r[2].mem_params_gb - c.r[0].mem_params_gb, 128256.0 * 4096 * 18 / 1e9,
			   1e-9, "pp 1: %g GB more", c.r[2].mem_params_gb - c.r[0].mem_params_gb);
	cr_expect_eq(c.r[3].mem_params_gb, c.r[1].mem_params_gb);
	cr_expect_gt(c.r[2].comm_type_s[CVC_PROJ_COMM_DP], c.r[0].comm_type_s[CVC_PROJ_COMM_DP]);
}

/* A small file cannot expand past what can run or fit in memory (issue 14,
 * item 4): nine range axes, each within the old per-axis limit. */
Test(project, expansion_is_capped_over_the_whole_file)
{
	static const char yaml[] =
		"name: bomb\n"
		"model: {layers: {from: 1, to: 200000, step: 1}, hidden: {from: 64, to: 200000, step: 1},\n"
		"        heads: 1, seq: {from: 1, to: 200000, step: 1}, vocab: {from: 1, to: 200000, step: 1}}\n"
		"training: {global_batch: {from: 1, to: 200000, step: 1}, micro_batch: 1}\n"
		"hardware: {gpu: H100-SXM, gpus: {from: 1, to: 200000, step: 1}}\n";
	static const char cross[] =
		"name: cross\n"
		"model: {layers: {from: 1, to: 1000, step: 1}, hidden: {from: 64, to: 64000, step: 64},\n"
		"        heads: 1, seq: {from: 1, to: 1000, step: 1}, vocab: {from: 1, to: 1000, step: 1}}\n"
		"hardware: {gpu: H100-SXM, gpus: 8}\n";
	cvc_proj_study *st = NULL;

	cr_assert_eq(cvc_proj_study_parse("bomb.yaml", yaml, sizeof yaml - 1, &st), CVC_ERR_FORMAT);
	cr_expect(strstr(cvc_proj_study_errmsg(st), "'bomb.yaml'") &&
		  strstr(cvc_proj_study_errmsg(st), "too many alternatives"), "%s",
		  cvc_proj_study_errmsg(st));
	cvc_proj_study_free(st);
	cr_assert_eq(cvc_proj_study_parse("cross.yaml", cross, sizeof cross - 1, &st), CVC_ERR_FORMAT);
	cr_expect(strstr(cvc_proj_study_errmsg(st), "'cross.yaml'") &&
		  strstr(cvc_proj_study_errmsg(st), "expands to 1e+12 scenarios"), "%s",
		  cvc_proj_study_errmsg(st));
	cvc_proj_study_free(st);
}

/* Values that used to become defaults without a word (issue 14, item 11). */
Test(project, zero_duplicates_and_impossible_values_are_errors)
{
	static const char *const bad[][2] = {
		{"model: {layers: 2, hidden: 256, heads: 4, kv_heads: 0, vocab: 100, seq: 64}\n"
		 "hardware: {gpu: H100-SXM, gpus: 8}\n", "at least 1 for 'kv_heads'"},
		{"model: {layers: 2, hidden: 256, heads: 4, vocab: 100, seq: 64}\n"
		 "training: {global_batch: 8, micro_batch: 0}\nhardware: {gpu: H100-SXM, gpus: 8}\n",
		 "at least 1 for 'micro_batch'"},
		{"model: {layers: 2, hidden: 256, heads: 4, vocab: 100, seq: 64}\n"
		 "hardware: {gpu: H100-SXM, gpus: 8, gpus_per_node: 0}\n",
		 "at least 1 for 'gpus_per_node'"},
		{"model: {layers: 2, hidden: 256, heads: 4, vocab: 100, seq: 64}\n"
		 "hardware: {gpu: H100-SXM, gpus: 8}\ncomm: {local_sgd_h: 0}\n",
		 "at least 1 for 'local_sgd_h'"},
		{"model: {layers: 2, hidden: 256, heads: 4, vocab: 100, seq: 64, layers: 4}\n"
		 "hardware: {gpu: H100-SXM, gpus: 8}\n", "key 'layers' given twice"},
		{"model: {layers: 2, hidden: 256, heads: 4, vocab: 100, seq: {from: 64, to: 256, "
		 "mul: 2, to: 512}}\nhardware: {gpu: H100-SXM, gpus: 8}\n", "key 'to' given twice"},
	};
	static const char *const invalid[][2] = {
		{"model: {layers: 2, hidden: 256, heads: 4, vocab: 100, seq: 64, experts: 4, top_k: 8}\n"
		 "hardware: {gpu: H100-SXM, gpus: 8}\n", "top_k larger than experts"},
		{"model: {layers: 2, hidden: 256, heads: 4, vocab: 100, seq: 64}\n"
		 "hardware: {gpu: H100-SXM, gpus: 16}\ncomm: {clusters: 2, inter_cluster_gbps: 0}\n",
		 "clusters > 1 need inter_cluster_gbps > 0"},
	};
	cvc_proj_study *st = NULL;

	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		cr_expect_eq(cvc_proj_study_parse("z.yaml", bad[i][0], strlen(bad[i][0]), &st),
			     CVC_ERR_FORMAT, "case %zu parsed", i);
		cr_expect(strstr(cvc_proj_study_errmsg(st), bad[i][1]) &&
			  strstr(cvc_proj_study_errmsg(st), "'z.yaml': line"), "case %zu: %s", i,
			  cvc_proj_study_errmsg(st));
		cvc_proj_study_free(st);
	}
	for (size_t i = 0; i < sizeof invalid / sizeof invalid[0]; i++) {
		cvc_proj_result r;

		cr_expect(tu_proj_first(invalid[i][0], NULL, &r) > 0 && !r.valid, "case %zu valid",
			  i);
		cr_expect_str_eq(r.reason ? r.reason : "", invalid[i][1]);
	}
}

/* The side file a CSV projection's provenance goes to, which `cvc report`
 * looks for beside it: the extension of the file name only. */
Test(project, provenance_side_file_name)
{
	static const char *const cases[][2] = {
		{"study.csv", "study.provenance.json"},
		{"out/study.json", "out/study.provenance.json"},
		{"study.tsv", "study.tsv.provenance.json"},
		{"./out.d/study", "./out.d/study.provenance.json"},
		{"dir.csv/x", "dir.csv/x.provenance.json"},
	};
	char buf[64], tiny[8];

	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		cr_assert_eq(cvc_proj_provenance_path(cases[i][0], buf, sizeof buf), CVC_OK);
		cr_assert_str_eq(buf, cases[i][1]);
	}
	cr_assert_eq(cvc_proj_provenance_path("study.csv", tiny, sizeof tiny), CVC_ERR_USAGE);
}

/* A ctx without a database records that it priced with spec-sheet
 * defaults, each GPU it priced and no fitted model. */
Test(project, provenance_without_database)
{
	cvc_proj_ctx *ctx = NULL;
	cvc_proj_scenario sc;
	cvc_proj_result r;
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	cr_assert(f);
	cr_assert_eq(cvc_proj_ctx_new(NULL, &ctx), CVC_OK);
	tu_scenario(&sc, "H100-SXM", 64, 8, 1);
	cvc_proj_evaluate(ctx, &sc, &r);
	cr_assert(r.valid, "%s", r.reason);
	cr_assert_eq(cvc_proj_provenance_write(ctx, f), CVC_OK);
	cr_assert_eq(fclose(f), 0);
	cr_assert(strstr(text, "\"database\":null"), "%s", text);
	cr_assert(strstr(text, "\"models_from\":\"none: spec-sheet defaults\""), "%s", text);
	cr_assert(strstr(text, "\"fits_when\":\"memory at most 90.1% of the nominal HBM"), "%s", text);
	cr_assert(strstr(text, "{\"gpu\":\"H100-SXM\",\"kind\":\"gemm\",\"op\":\"bf16\",\"model_id\":null"),
		  "%s", text);
	cr_assert(strstr(text, "\"kind\":\"collective\",\"op\":\"allreduce\""), "%s", text);
	cr_assert(strstr(text, "\"models\":[]"), "%s", text);
	cr_assert(strstr(text, "{\"name\":\"H100-SXM\",\"kind\":\"gpu\""), "%s", text);
	cr_assert(!strstr(text, "A100"), "only the GPU priced: %s", text);
	free(text);
	cvc_proj_ctx_free(ctx);
}

/* A scenario priced with FlashAttention-1 says so where its numbers came
 * from: the provenance's attention origin names the ratio and its source
 * beside the FlashAttention-2 curves it scales; FlashAttention-2's own
 * origin does not. */
Test(project, fa1_attention_says_where_it_came_from)
{
	const char *dir = tu_tmpdir();
	char y[1024], csv[1024], prov[1100], args[4096], *out = NULL, *err = NULL, *text;
	const char *study =
		"name: fa1\n"
		"scenarios:\n"
		"  - model: {layers: 24, hidden: 2048, heads: 16, seq: 32768}\n"
		"    parallelism: {tp: 1, pp: 1}\n"
		"    training: {attention: [fa1, fa2], framework: pytorch, global_batch: 32}\n"
		"    hardware: {gpu: A100-SXM-80GB, gpus: 8}\n";
	const char *p;
	int n = 0;

	snprintf(y, sizeof y, "%s", tu_path(dir, "fa1.yaml"));
	snprintf(csv, sizeof csv, "%s", tu_path(dir, "fa1.csv"));
	snprintf(prov, sizeof prov, "%s", tu_path(dir, "fa1.provenance.json"));
	cr_assert_eq(tu_write(y, study, strlen(study)), 0);
	snprintf(args, sizeof args, "project '%s' --csv '%s'", y, csv);
	cr_assert_eq(tu_cvc(args, &out, &err), 0, "%s", err);
	text = tu_read(prov, NULL);
	cr_assert_not_null(text);
	for (p = text; (p = strstr(p, "\"kind\":\"attention\"")); p++)
		n++;
	cr_expect_eq(n, 2, "%s", text);
	cr_expect(strstr(text, "FlashAttention-1: FlashAttention-2's time x 1.79 (the "
			       "FlashAttention-2 paper's end-to-end table, Dao 2023)"),
		  "%s", text);
	free(text);
	free(out), free(err);
}
