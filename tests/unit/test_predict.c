/*
 * test_predict.c - `cvc predict` (cli/cmd_predict.c, predict_ops.c,
 * predict_shapes.c) against the library: the attention and memory-bound
 * operators a projection is made of, asked of predict with the sizes the
 * projector's decomposition lists, print the price and origin the model
 * set gives the projector for them.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "cvc/cvc_base.h"
#include "cvc/cvc_model.h"
#include "cvc/cvc_project.h"
#include "projector/proj_internal.h"
#include "testutil.h"

#define MAXOPS 64

struct ops {
	int n;
	cvc_proj_op op[MAXOPS];
};

/* Keeps each distinct attention and memory-bound operator. */
static int keep_op(void *user, const cvc_proj_op *o)
{
	struct ops *s = user;

	if (o->kind != CVC_PROJ_OP_ATTN && o->kind != CVC_PROJ_OP_MEM)
		return 0;
	for (int i = 0; i < s->n; i++) {
		const cvc_proj_op *p = &s->op[i];

		if (p->kind == o->kind && p->sub == o->sub && p->bytes == o->bytes && p->b == o->b &&
		    p->m == o->m && p->n == o->n && p->k == o->k && p->heads == o->heads &&
		    p->kv_heads == o->kv_heads && p->causal == o->causal && p->backward == o->backward)
			return 0;
	}
	if (s->n < MAXOPS)
		s->op[s->n++] = *o;
	return 0;
}

/* A 2-layer GQA model on one H100, bf16, Megatron-Core (Transformer
 * Engine's attention): the operators of its step. */
static void model_ops(struct ops *s)
{
	cvc_proj_scenario sc;

	cvc_proj_scenario_default(&sc);
	sc.layers = 2, sc.hidden = 4096, sc.heads = 32, sc.kv_heads = 8, sc.seq = 4096;
	sc.ffn = 14336, sc.vocab = 32000;
	sc.gpus = 1, sc.global_batch = 2;
	cr_assert_null(proj_finalize(&sc));
	sc.dp = 1;
	memset(s, 0, sizeof *s);
	cvc_proj_scenario_ops(&sc, keep_op, s);
}

/*
 * The data row of `cvc predict ... --format csv` (args after "predict"):
 * its time_us (column tcol) into us[0], the 90% interval that follows it
 * into us[1] and us[2], and its model (the last, quoted) into model.
 */
static void predict_csv(const char *args, int tcol, double *us, char *model, size_t len)
{
	char cmd[2048], *out = NULL, *err = NULL, *row, *p;

	snprintf(cmd, sizeof cmd, "predict %s --format csv", args);
	cr_assert_eq(tu_cvc(cmd, &out, &err), 0, "%s: %s", cmd, err);
	row = strchr(out, '\n');
	cr_assert(row && row[1], "%s: no row: %s", cmd, out);
	row++;
	p = row;
	for (int c = 0; c < tcol; c++) {
		p = strchr(p, ',');
		cr_assert_not_null(p, "%s: %s", cmd, row);
		p++;
	}
	for (int i = 0; i < 3; i++) {
		us[i] = strtod(p, &p);
		cr_assert(i == 2 || *p == ',', "%s: %s", cmd, row);
		p++;
	}
	p = strchr(row, '"');
	cr_assert_not_null(p, "%s: %s", cmd, row);
	snprintf(model, len, "%s", p + 1);
	if ((p = strrchr(model, '"')))
		*p = '\0';
	free(out);
	free(err);
}

/* The time and 90% interval predict printed (us[0..3)) are pr's, to the
 * 6 significant digits a CSV prints. */
static void expect_price(const char *args, const double *us, const cvc_model_price *pr)
{
	double want[3] = {pr->us, 0, 0};

	cvc_model_interval90(pr->us, pr->sigma, &want[1], &want[2]);
	cr_expect_gt(want[2], want[1], "%s: an interval", args);
	for (int i = 0; i < 3; i++)
		cr_expect(fabs(us[i] - want[i]) <= 5e-6 * want[i], "%s: column %d: %.9g, the "
			  "library's %.9g", args, i, us[i], want[i]);
}

/* The model set the projector prices an unscaled H100 with (price.c). */
static cvc_modelset *h100_set(cvc_hw_catalog **cat)
{
	const cvc_hw_spec *spec;
	cvc_modelset *ms = NULL;

	cr_assert_eq(cvc_hw_catalog_new(cat), CVC_OK);
	spec = cvc_hw_catalog_lookup(*cat, "H100-SXM");
	cr_assert_not_null(spec);
	cr_assert_eq(cvc_modelset_new_ex(NULL, *cat, spec, 0, &ms), CVC_OK);
	return ms;
}

/*
 * Claim: `cvc predict attention` prices an attention operator as the
 * projector does (cvc_model_attention_price on the GPU's model set, the
 * operator's batch, heads, key/value heads, sequence, head dimension,
 * causal mask, pass and the framework's default library), names the same
 * origin and prints the 90% interval of its uncertainty.  Setup: the forward and backward attention operators the
 * decomposition lists for a GQA model on an H100, each asked of predict
 * with those sizes.  Equal to the 6 significant digits a CSV prints.
 */
Test(predict, attention_is_the_projectors_price)
{
	cvc_hw_catalog *cat = NULL;
	cvc_modelset *ms = h100_set(&cat);
	struct ops s;
	int seen = 0;

	model_ops(&s);
	for (int i = 0; i < s.n; i++) {
		const cvc_proj_op *o = &s.op[i];
		cvc_model_attn a = {0};
		cvc_model_price pr;
		char args[512], model[1024];
		double us[3];

		if (o->kind != CVC_PROJ_OP_ATTN)
			continue;
		/* what price.c's attn_of hands the model set */
		cr_assert_eq(o->dtype, CVC_PROJ_BF16);
		cr_assert_eq(o->m, o->n, "square attention");
		cr_assert_eq(o->sub, CVC_ATTN_DEFAULT_TE, "Megatron-Core: Transformer Engine's");
		a.batch = o->b, a.heads = o->heads, a.kv_heads = o->kv_heads;
		a.seq_q = o->m, a.seq_kv = o->n, a.head_dim = o->k;
		a.causal = o->causal, a.backward = o->backward;
		a.dtype = CVC_HW_BF16, a.backend = o->sub;
		cvc_model_attention_price(ms, &a, &pr);
		snprintf(args, sizeof args,
			 "attention --gpu H100-SXM --b %lld --heads %lld --kv-heads %lld --head-dim %lld "
			 "--seq %lld%s%s",
			 (long long)o->b, (long long)o->heads, (long long)o->kv_heads, (long long)o->k,
			 (long long)o->m, o->causal ? " --causal" : "", o->backward ? " --backward" : "");
		predict_csv(args, 10, us, model, sizeof model);
		cr_log_info("%s: %.6g us, projector %.9g us", args, us[0], pr.us);
		expect_price(args, us, &pr);
		cr_expect_str_eq(model, pr.origin);
		seen |= 1 << o->backward;
	}
	cr_expect_eq(seen, 3, "forward and backward attention listed (%d)", seen);
	cvc_modelset_free(ms);
	cvc_hw_catalog_free(cat);
}

/*
 * Claim: `cvc predict membound` prices a memory-bound operator as the
 * projector does (cvc_model_membound_price of its class and bytes on the
 * GPU's model set), names the same origin and prints the 90% interval of
 * its uncertainty.  Setup: every distinct
 * memory-bound operator the decomposition lists for the model above.
 */
Test(predict, membound_is_the_projectors_price)
{
	cvc_hw_catalog *cat = NULL;
	cvc_modelset *ms = h100_set(&cat);
	struct ops s;
	unsigned classes = 0;

	model_ops(&s);
	for (int i = 0; i < s.n; i++) {
		const cvc_proj_op *o = &s.op[i];
		cvc_model_price pr;
		char args[512], model[1024];
		double us[3];

		if (o->kind != CVC_PROJ_OP_MEM || o->bytes < 1)
			continue;
		cvc_model_membound_price(ms, o->bytes, (cvc_model_mem)o->sub, &pr);
		snprintf(args, sizeof args, "membound --gpu H100-SXM --class %s --bytes %lld",
			 cvc_model_mem_name((cvc_model_mem)o->sub), (long long)o->bytes);
		predict_csv(args, 3, us, model, sizeof model);
		expect_price(args, us, &pr);
		cr_expect_str_eq(model, pr.origin);
		classes |= 1u << o->sub;
	}
	cr_log_info("memory-bound classes checked: 0x%x", classes);
	cr_expect(classes & (1u << CVC_MODEL_MEM_NORM), "a norm listed");
	cr_expect(classes & (1u << CVC_MODEL_MEM_ELEMENTWISE), "an elementwise op listed");
	cvc_modelset_free(ms);
	cvc_hw_catalog_free(cat);
}

/* Whether each number of a CSV data row or a JSON object (a field that
 * reads whole as one) is printed as cvc_fmt_plain(v, 6) prints it. */
static int numbers_at_six(const char *line)
{
	char buf[4096], *p = buf, *end, plain[64];
	int bad = 0;

	snprintf(buf, sizeof buf, "%s", line);
	for (char *q = buf; *q; q++)
		if (*q == ':' || *q == '{' || *q == '}')
			*q = ',';
	while (*p) {
		size_t n = strcspn(p, ",");
		char save = p[n];
		double v;

		p[n] = '\0';
		v = strtod(p, &end);
		if (end != p && *end == '\0' && strcmp(cvc_fmt_plain(v, 6, plain, sizeof plain), p)) {
			cr_log_error("'%s' is not '%s'", p, plain);
			bad++;
		}
		p[n] = save;
		p += n + (save != '\0');
	}
	return bad;
}

/*
 * Claim: one prediction printed as CSV or JSON carries its numbers as
 * every CSV and JSON number of `cvc project` and `cvc validate` is
 * printed, at 6 significant digits (cvc_fmt_plain), integers whole; the
 * table's exact doubles printed 17 (201.08707588472976).  Setup: one
 * prediction of each kind, both formats; every number of the data row.
 */
Test(predict, one_row_numbers_have_six_significant_digits)
{
	static const char *const asks[] = {
		"gemm --gpu H100 --m 4096 --n 4096 --k 4096",
		"allreduce --bytes 64MiB --gpus 16 --system dgx-h100",
		"attention --gpu H100 --heads 32 --kv-heads 8 --head-dim 128 --seq 8192 --causal",
		"membound --gpu H100 --class norm --bytes 1GiB",
	};
	static const char *const formats[] = {"csv", "json"};

	for (size_t i = 0; i < sizeof asks / sizeof asks[0]; i++)
		for (int f = 0; f < 2; f++) {
			char cmd[512], *out = NULL, *err = NULL, *row;

			snprintf(cmd, sizeof cmd, "predict %s --format %s", asks[i], formats[f]);
			cr_assert_eq(tu_cvc(cmd, &out, &err), 0, "%s: %s", cmd, err);
			row = strchr(out, '\n');
			cr_assert(row && row[1], "%s: %s", cmd, out);
			cr_expect_eq(numbers_at_six(row + 1), 0, "%s: %s", cmd, row + 1);
			cr_expect(strstr(row + 1, "201.087") || i != 0, "%s: %s", cmd, row + 1);
			free(out);
			free(err);
		}
}

/*
 * Claim: a shapes file with a bad row prints nothing but the error: no
 * `model:` line, no header, no row priced before the bad one, in any
 * format (CSV was streamed, and the model line came first, so an error
 * left half an output); a good file prints its model line, then every
 * shape.  Setup: two good rows, then a bad one.
 */
Test(predict, a_bad_shape_prints_nothing_but_the_error)
{
	static const char *const formats[] = {"csv", "table", "json"};
	const char *dir = tu_tmpdir(), *bad = tu_path(dir, "bad.csv"), *good;
	static const char text[] = "name,m,n,k\nqkv,4096,12288,4096\nsmall,16,16,16\nx,64,-1,64\n";

	cr_assert_eq(tu_write(bad, text, sizeof text - 1), 0);
	for (int f = 0; f < 3; f++) {
		char cmd[2048], *out = NULL, *err = NULL;

		snprintf(cmd, sizeof cmd, "predict gemm --gpu H100 --csv '%s' --format %s", bad,
			 formats[f]);
		cr_expect_eq(tu_cvc(cmd, &out, &err), 2, "%s", cmd);
		cr_expect_str_eq(out, "", "%s: printed %s", formats[f], out);
		cr_expect(strstr(err, "line 4: expected a positive integer n") != NULL, "%s", err);
		cr_expect_null(strstr(err, "model:"), "%s: %s", formats[f], err);
		free(out);
		free(err);
	}
	good = tu_path(dir, "good.csv");
	cr_assert_eq(tu_write(good, text, 46), 0);
	{
		char cmd[2048], *out = NULL, *err = NULL;

		snprintf(cmd, sizeof cmd, "predict gemm --gpu H100 --csv '%s' --format csv", good);
		cr_assert_eq(tu_cvc(cmd, &out, &err), 0, "%s: %s", cmd, err);
		cr_expect(strncmp(out, "name,m,n,k,time_us\nqkv,4096,12288,4096,", 39) == 0, "%s", out);
		cr_expect(strstr(out, "\nsmall,16,16,16,") != NULL, "%s", out);
		cr_expect(strncmp(err, "model: ", 7) == 0, "%s", err);
		free(out);
		free(err);
	}
}

/*
 * Claim: a GEMM and a collective print the 90% interval of their price's
 * uncertainty as attention and memory-bound operators do: the time the
 * sentence gives, and the interval of cvc_model_gemm_price's and
 * cvc_model_collective_price's sigma (cvc_model_interval90).  Setup: a
 * 4096^3 bf16 GEMM on an H100 (the reference fit's sizes) and a 64 MiB
 * all-reduce over two DGX H100 nodes (defaults).
 */
Test(predict, gemm_and_collective_intervals)
{
	cvc_hw_catalog *cat = NULL;
	cvc_modelset *ms = h100_set(&cat);
	const cvc_hw_spec *sys = cvc_hw_catalog_lookup(cat, "dgx-h100");
	cvc_modelset *mc = NULL;
	cvc_model_price g, c;
	char model[1024];
	double us[3];

	cr_assert_not_null(sys);
	cr_assert_eq(cvc_modelset_new_ex(NULL, cat, sys, 0, &mc), CVC_OK);
	cvc_model_gemm_price(ms, 4096, 4096, 4096, 1, CVC_HW_BF16, &g);
	predict_csv("gemm --gpu H100-SXM --m 4096 --n 4096 --k 4096", 6, us, model, sizeof model);
	expect_price("gemm", us, &g);
	cvc_model_collective_price(mc, CVC_MODEL_ALLREDUCE, 64 << 20, 16, 8, NULL, CVC_ALGO_AUTO, &c);
	predict_csv("allreduce --bytes 64MiB --gpus 16 --system dgx-h100", 5, us, model,
		    sizeof model);
	expect_price("allreduce", us, &c);
	cr_expect_str_eq(model, c.origin);
	cvc_modelset_free(mc);
	cvc_modelset_free(ms);
	cvc_hw_catalog_free(cat);
}
