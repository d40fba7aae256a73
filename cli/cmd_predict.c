/*
 * cmd_predict.c - `cvc predict gemm|attention|membound|<collective>`: one
 * prediction (or a CSV of GEMM shapes, predict_shapes.c) from the fitted
 * models of a db, carried over from the closest fitted GPU, or from the
 * spec sheet; always says which.  Attention and memory-bound operators are
 * priced in predict_ops.c.  --format table|csv|json prints a prediction,
 * or the CSV of shapes, as a table (cli_predict_row, cli_table_print); the
 * CSV of shapes defaults to csv in a pipe and table at a terminal, one
 * prediction to a sentence.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "commands.h"
#include "predict.h"
#include "cvc/cvc_base.h"
#include "cvc/cvc_db.h"
#include "cvc/cvc_model.h"

static const char synopsis[] =
	"gemm --m M --n N --k K [--b B] [--dtype DT] --gpu NAME [--db PATH] [--csv FILE] [--format FMT]\n"
	"   or: cvc predict attention --heads H [--kv-heads H] --head-dim D --seq S [--b B] [--causal]\n"
	"       [--backward] [--dtype DT] [--backend NAME] --gpu NAME [--db PATH] [--format FMT]\n"
	"   or: cvc predict membound --class NAME --bytes SIZE --gpu NAME [--db PATH] [--format FMT]\n"
	"   or: cvc predict allreduce|allgather|reducescatter|alltoall|broadcast|reduce|sendrecv\n"
	"       --bytes SIZE --gpus N [--per-node N] [--algo auto|ring|tree] --system NAME [--db PATH]\n"
	"       [--format FMT]";

/* The operator kinds predict prices, as bits: the options each one takes. */
enum { K_GEMM = 1, K_COLL = 2, K_ATTN = 4, K_MEM = 8 };

/* What the command line asked, as parsed. */
struct pargs {
	const char *dbpath, *gpu, *system, *dtype, *csv, *bytes_s, *catalog, *algo_s, *format;
	const char *backend_s, *class_s;
	long long m, n, k, b, gpus, per_node, bytes, heads, kv_heads, head_dim, seq;
	int force, causal, backward;
};

/*
 * Refuses an option given for another operator: a GEMM's shape prices no
 * collective, a collective's group and algorithm no GEMM, attention's
 * heads no memory-bound op; and a --csv file's rows are the shapes
 * (--m/--n/--k/--b would be dropped silently).  kind: the K_ bit asked;
 * seen: cli_parse_seen's bits.  Options not listed apply to every kind.
 * Returns 0 or 2.
 */
static int refuse_foreign(const char *cmd, const char *what, const struct cli_opt *opts,
			  uint64_t seen, unsigned kind, int with_csv)
{
	static const struct {
		const char *opt;
		unsigned kinds;
	} owned[] = {
		{"m", K_GEMM},        {"n", K_GEMM},          {"k", K_GEMM},
		{"csv", K_GEMM},      {"b", K_GEMM | K_ATTN}, {"dtype", K_GEMM | K_ATTN},
		{"bytes", K_COLL | K_MEM}, {"gpus", K_COLL},  {"per-node", K_COLL},
		{"algo", K_COLL},     {"system", K_COLL},     {"heads", K_ATTN},
		{"kv-heads", K_ATTN}, {"head-dim", K_ATTN},   {"seq", K_ATTN},
		{"causal", K_ATTN},   {"backward", K_ATTN},   {"backend", K_ATTN},
		{"class", K_MEM},
	};
	static const char *const owner[] = {"gemm's", "a collective's", "attention's",
					    "membound's"};
	static const char *const shape[] = {"m", "n", "k", "b", NULL};

	for (int i = 0; i < 64 && opts[i].lname; i++) {
		if (!(seen >> i & 1))
			continue;
		for (size_t o = 0; o < sizeof owned / sizeof owned[0]; o++) {
			char whose[96] = "";

			if (strcmp(opts[i].lname, owned[o].opt) != 0 || (owned[o].kinds & kind))
				continue;
			for (int j = 0; j < 4; j++)
				if (owned[o].kinds >> j & 1)
					snprintf(whose + strlen(whose), sizeof whose - strlen(whose),
						 "%s%s", whose[0] ? " and " : "", owner[j]);
			return cli_error("%s: --%s does not apply to %s (it is %s); see 'cvc %s "
					 "--help'", cmd, owned[o].opt, what, whose, cmd);
		}
		for (const char *const *o = shape; with_csv && *o; o++)
			if (strcmp(opts[i].lname, *o) == 0)
				return cli_error("%s: --%s does not apply with --csv (the file's rows "
						 "give the shapes)", cmd, *o);
	}
	return 0;
}

/* A collective's size, group and algorithm into a and *algo; 0 or 2. */
static int check_coll(const char *cmd, const char *what, cvc_model_coll coll, struct pargs *a,
		      int *algo)
{
	int rc;

	if (!a->bytes_s)
		return cli_error("%s: %s needs --bytes SIZE", cmd, what);
	if ((rc = cli_parse_bytes("bytes", a->bytes_s, &a->bytes)))
		return rc;
	if (a->gpus < 1 || a->gpus > 1 << 20)
		return cli_error("%s: %s needs --gpus N (1 to 1048576), got %lld", cmd, what, a->gpus);
	/* 0 is the default: the system's own */
	if (a->per_node < 0 || a->per_node > 1 << 20)
		return cli_error("%s: --per-node: expected 1 to 1048576, got %lld", cmd, a->per_node);
	if (!a->algo_s || strcmp(a->algo_s, "auto") == 0)
		*algo = CVC_ALGO_AUTO;
	else if (strcmp(a->algo_s, "ring") == 0)
		*algo = CVC_ALGO_RING;
	else if (strcmp(a->algo_s, "tree") == 0)
		*algo = CVC_ALGO_TREE;
	else
		return cli_error("%s: --algo: expected auto, ring or tree, got '%s'", cmd, a->algo_s);
	/* NCCL builds trees only for all-reduce */
	if (*algo == CVC_ALGO_TREE && coll != CVC_MODEL_ALLREDUCE)
		return cli_error("%s: --algo tree: NCCL runs %s as a ring only (trees are "
				 "all-reduce's); give ring or auto", cmd, what);
	return 0;
}

/*
 * The attention call the flags describe into *at (its dtype is set once
 * the GPU's path for it is known); 0 or 2.  Causal and seq_kv = seq_q, as
 * the projector prices a layer's attention.
 */
static int check_attn(const char *cmd, const struct pargs *a, cvc_hw_dtype dt,
		      cvc_model_attn *at)
{
	cvc_model_attn_backend be = CVC_ATTN_DEFAULT_TE;

	if (a->heads <= 0 || a->head_dim <= 0 || a->seq <= 0 || a->b <= 0)
		return cli_error("%s: attention needs positive --heads, --head-dim and --seq (and "
				 "--b, default 1)", cmd);
	/* grouped-query attention: every key/value head serves as many
	 * query heads */
	if (a->kv_heads < 0 || a->kv_heads > a->heads || (a->kv_heads && a->heads % a->kv_heads))
		return cli_error("%s: --kv-heads: expected a divisor of --heads %lld, got %lld", cmd,
				 a->heads, a->kv_heads);
	/* the curves are bf16, fp16 and fp8 kernels; tf32 is what a tf32
	 * scenario prices on them, fp4 training runs attention in bf16 */
	if (dt == CVC_HW_FP32 || dt == CVC_HW_FP4)
		return cli_error("%s: --dtype %s: fused attention runs in bf16, fp16, fp8 or tf32 "
				 "(an fp4 recipe's attention runs in bf16, as 'cvc project' prices it)",
				 cmd, cvc_hw_dtype_name(dt));
	if (a->backend_s && cvc_model_attn_backend_parse(a->backend_s, &be))
		return cli_error("%s: --backend: expected te-default, torch-default, cudnn, fa2, fa4 "
				 "or fa1, got '%s'", cmd, a->backend_s);
	memset(at, 0, sizeof *at);
	at->batch = a->b;
	at->heads = a->heads;
	at->kv_heads = a->kv_heads ? a->kv_heads : a->heads;
	at->seq_q = at->seq_kv = a->seq;
	at->head_dim = a->head_dim;
	at->causal = a->causal;
	at->backward = a->backward;
	at->dtype = dt;
	at->backend = be;
	return 0;
}

/* What the flags ask for besides the GPU, checked before anything prints:
 * the shape, the collective, the attention call, the class.  0 or 2. */
static int check_args(const char *cmd, const char *what, unsigned kind, cvc_model_coll coll,
		      struct pargs *a, cvc_hw_dtype *dt, int *algo, cvc_model_attn *at,
		      cvc_model_mem *cls)
{
	int rc;

	if (cvc_hw_dtype_parse(a->dtype, dt))
		return cli_error("%s: --dtype: unknown dtype '%s' (fp32, tf32, bf16, fp16, fp8, fp4)",
				 cmd, a->dtype);
	if (kind == K_GEMM && !a->csv && (a->m <= 0 || a->n <= 0 || a->k <= 0 || a->b <= 0))
		return cli_error("%s: gemm needs positive --m, --n and --k (or --csv FILE)", cmd);
	if (kind == K_COLL)
		return check_coll(cmd, what, coll, a, algo);
	if (kind == K_ATTN)
		return check_attn(cmd, a, *dt, at);
	if (kind != K_MEM)
		return 0;
	if (!a->class_s || cvc_model_mem_parse(a->class_s, cls))
		return cli_error("%s: membound needs --class NAME: elementwise, norm, reduction, copy, "
				 "gather or optimizer%s%s%s", cmd, a->class_s ? " (got '" : "",
				 a->class_s ? a->class_s : "", a->class_s ? "')" : "");
	if (!a->bytes_s)
		return cli_error("%s: membound needs --bytes SIZE (read and written)", cmd);
	if ((rc = cli_parse_bytes("bytes", a->bytes_s, &a->bytes)))
		return rc;
	if (a->bytes < 1)
		return cli_error("%s: --bytes: expected at least 1 byte moved, got %lld", cmd, a->bytes);
	return 0;
}

/*
 * The dtype an operator of dt (a GEMM, or attention: what) runs as on
 * spec, in *as, or 2 with the reason when the GPU has no tensor path for
 * it (fp8 on A100 or V100): the layout 'cvc project' marks impossible,
 * never priced on another path.
 */
static int dtype_path(const char *cmd, const cvc_hw_spec *spec, cvc_hw_dtype dt, const char *what,
		      cvc_hw_dtype *as)
{
	if (cvc_hw_dtype_path(spec, dt, as) == CVC_OK)
		return 0;
	return cli_error("%s: --dtype %s: %s has no %s tensor cores (its catalog entry gives no %s "
			 "peak): no %s runs there in %s, as 'cvc project' marks such a layout "
			 "impossible", cmd, cvc_hw_dtype_name(dt), spec->name,
			 dt == CVC_HW_FP4 ? "FP4" : dt == CVC_HW_FP8 ? "FP8" : cvc_hw_dtype_name(dt),
			 cvc_hw_dtype_name(dt), what, cvc_hw_dtype_name(dt));
}

/* One GEMM (bmnk: b, m, n, k) as a sentence, or a one-row table in format. */
static int predict_gemm(const cvc_modelset *ms, const cvc_hw_spec *spec, cvc_hw_dtype dt,
			const int64_t *bmnk, const char *format)
{
	static const char *const cols[] = {"gpu", "dtype", "b", "m", "n", "k", "time_us", "time_us_lo",
					   "time_us_hi", "tflops", "model"};
	double fl = 2.0 * (double)bmnk[0] * (double)bmnk[1] * (double)bmnk[2] * (double)bmnk[3];
	const char *origin = cvc_model_origin(ms, CVC_MODEL_GEMM, (int)dt, 0);
	cvc_model_price pr;
	char model[640];

	cvc_model_gemm_price(ms, bmnk[1], bmnk[2], bmnk[3], bmnk[0], dt, &pr);
	snprintf(model, sizeof model, "%s%s", origin, pr.extrap > 1 ? CLI_PREDICT_OUTSIDE_NOTE : "");
	if (format) {
		const char *strs[11] = {spec->name, cvc_hw_dtype_name(dt), NULL, NULL, NULL, NULL,
					NULL,       NULL,                  NULL, NULL, model};
		double nums[11] = {0, 0, (double)bmnk[0], (double)bmnk[1], (double)bmnk[2],
				   (double)bmnk[3], pr.us, 0, 0, pr.us > 0 ? fl / pr.us / 1e6 : NAN, 0};

		cvc_model_interval90(pr.us, pr.sigma, &nums[7], &nums[8]);
		return cli_predict_row(cols, 11, strs, nums, format);
	}
	printf("gemm b=%lld m=%lld n=%lld k=%lld %s on %s: %.3f us (%.1f TFLOP/s)\n",
	       (long long)bmnk[0], (long long)bmnk[1], (long long)bmnk[2], (long long)bmnk[3],
	       cvc_hw_dtype_name(dt), spec->name, pr.us, fl / pr.us / 1e6);
	printf("model: %s\n", model);
	cli_predict_say_interval(&pr);
	return 0;
}

/* One collective (bgp: bytes, gpus, per_node; 0 per_node: the system's)
 * as a sentence, or a one-row table in format. */
static int predict_coll(const cvc_modelset *ms, const cvc_hw_spec *spec, cvc_model_coll coll,
			const int64_t *bgp, int algo, const char *format)
{
	static const char *const cols[] = {"collective", "system",     "bytes",      "gpus",
					   "per_node",   "time_us",    "time_us_lo", "time_us_hi",
					   "algbw_gbps", "busbw_gbps", "model"};
	int pn = bgp[2] > 0 ? (int)bgp[2] : cvc_hw_domain(spec);
	cvc_model_price pr;
	const char *origin;
	double us, f = cvc_model_busbw_factor(coll, (int)bgp[1]);

	cvc_model_collective_price(ms, coll, bgp[0], (int)bgp[1], pn, NULL, algo, &pr);
	us = pr.us, origin = pr.origin;
	/* one GPU sends nothing: no model priced it (the price is 0) */
	if (bgp[1] <= 1)
		origin = "none: a group of one GPU sends nothing";
	if (format) {
		const char *strs[11] = {cvc_model_coll_name(coll), spec->name, NULL, NULL, NULL, NULL,
					NULL, NULL, NULL, NULL, origin};
		double nums[11] = {0, 0, (double)bgp[0], (double)bgp[1], pn, us, 0, 0,
				   us > 0 ? (double)bgp[0] / us / 1e3 : NAN,
				   us > 0 ? f * (double)bgp[0] / us / 1e3 : NAN, 0};

		cvc_model_interval90(us, pr.sigma, &nums[6], &nums[7]);
		return cli_predict_row(cols, 11, strs, nums, format);
	}
	/* the group's span: within one node, or over nodes of pn */
	if (bgp[1] <= pn)
		printf("%s %lld bytes over %lld GPU%s (one node of %d) on %s: %.3f us",
		       cvc_model_coll_name(coll), (long long)bgp[0], (long long)bgp[1],
		       bgp[1] == 1 ? "" : "s", pn, spec->name, us);
	else
		printf("%s %lld bytes over %lld GPUs (%d per node) on %s: %.3f us",
		       cvc_model_coll_name(coll), (long long)bgp[0], (long long)bgp[1], pn,
		       spec->name, us);
	if (us > 0)
		printf(" (algbw %.2f GB/s, busbw %.2f GB/s)", (double)bgp[0] / us / 1e3,
		       f * (double)bgp[0] / us / 1e3);
	printf("\nmodel: %s\n", origin);
	cli_predict_say_interval(&pr);
	return 0;
}

/* The kind `what` names (gemm, attention, membound, a collective into
 * *coll), or 0 for none. */
static unsigned kind_of(const char *what, cvc_model_coll *coll)
{
	if (strcmp(what, "gemm") == 0)
		return K_GEMM;
	if (strcmp(what, "attention") == 0)
		return K_ATTN;
	if (strcmp(what, "membound") == 0)
		return K_MEM;
	return cvc_model_coll_parse(what, coll) == CVC_OK ? K_COLL : 0;
}

int cmd_predict(int argc, char **argv, struct cvc_ctx *ctx)
{
	struct pargs a = {.dtype = "bf16", .b = 1};
	int npos = 0, rc;
	const struct cli_opt opts[] = {
		{"db", 0, CLI_PATH, &a.dbpath, "PATH", "fitted models (default: none, spec sheet only)", NULL},
		{"gpu", 0, CLI_STR, &a.gpu, "NAME", "GPU (catalog name, alias or device name)", NULL},
		{"system", 0, CLI_STR, &a.system, "NAME", "system for collectives (or --gpu)", NULL},
		{"catalog", 0, CLI_PATH, &a.catalog, "FILE", "extra hardware catalog entries (CSV)", NULL},
		{"m", 0, CLI_INT, &a.m, "M", "gemm rows", NULL},
		{"n", 0, CLI_INT, &a.n, "N", "gemm columns", NULL},
		{"k", 0, CLI_INT, &a.k, "K", "gemm inner dimension", NULL},
		{"b", 0, CLI_INT, &a.b, "B", "gemm or attention batch (default 1)", NULL},
		{"dtype", 0, CLI_STR, &a.dtype, "DT", "fp32, tf32, bf16 (default), fp16, fp8, fp4", NULL},
		{"csv", 0, CLI_PATH, &a.csv, "FILE", "gemm shapes m,n,k[,b] to predict, one per row", NULL},
		{"heads", 0, CLI_INT, &a.heads, "H", "attention query heads", NULL},
		{"kv-heads", 0, CLI_INT, &a.kv_heads, "H", "attention key/value heads (default: --heads)", NULL},
		{"head-dim", 0, CLI_INT, &a.head_dim, "D", "attention dimension per head", NULL},
		{"seq", 0, CLI_INT, &a.seq, "S", "attention sequence length (queries and keys)", NULL},
		{"causal", 0, CLI_FLAG, &a.causal, NULL, "attention under a causal mask", NULL},
		{"backward", 0, CLI_FLAG, &a.backward, NULL, "attention's backward pass (default: forward)", NULL},
		{"backend", 0, CLI_STR, &a.backend_s, "NAME",
		 "attention library: te-default (default: Transformer Engine's on the GPU), "
		 "torch-default, cudnn, fa2, fa4, fa1", NULL},
		{"class", 0, CLI_STR, &a.class_s, "NAME",
		 "membound class: elementwise, norm, reduction, copy, gather, optimizer", NULL},
		{"bytes", 0, CLI_STR, &a.bytes_s, "SIZE",
		 "collective size (nccl-tests convention) or bytes a membound op moves, e.g. 64MiB", NULL},
		{"gpus", 0, CLI_INT, &a.gpus, "N", "collective group size", NULL},
		{"per-node", 0, CLI_INT, &a.per_node, "N", "GPUs per node (default: the system's)", NULL},
		{"force", 0, CLI_FLAG, &a.force, NULL,
		 "also use fits the quality gate keeps out (see 'cvc models show ID')", NULL},
		{"algo", 0, CLI_STR, &a.algo_s, "NAME",
		 "NCCL algorithm across nodes: auto (default, the fastest), ring, tree", NULL},
		{"format", 'f', CLI_CHOICE, &a.format, "FMT",
		 "a table (--csv: default at a terminal), csv (--csv: default in a pipe) or json; "
		 "one prediction without it: a sentence", CLI_FORMATS},
		{0},
	};
	cvc_hw_catalog *cat = NULL;
	cvc_db *db = NULL;
	cvc_modelset *ms = NULL;
	const cvc_hw_spec *spec;
	const char *what, *name;
	cvc_hw_dtype dt, as;
	cvc_model_coll coll = CVC_MODEL_ALLREDUCE;
	cvc_model_attn at;
	cvc_model_mem cls = CVC_MODEL_MEM_ELEMENTWISE;
	uint64_t seen;
	cvc_status st;
	unsigned kind;
	int algo = CVC_ALGO_AUTO;

	rc = cli_parse_seen(ctx->cmd, synopsis, opts, argc, argv, &npos, NULL, &seen);
	if (rc)
		return rc < 0 ? 0 : rc;
	if (npos != 1)
		return cli_error("%s: expected what to predict: gemm, attention, membound or a "
				 "collective (see 'cvc %s --help')", ctx->cmd, ctx->cmd);
	what = argv[1];
	if (!(kind = kind_of(what, &coll)))
		return cli_error("%s: '%s' is neither gemm, attention, membound nor a collective",
				 ctx->cmd, what);
	if ((rc = refuse_foreign(ctx->cmd, what, opts, seen, kind, a.csv != NULL)))
		return rc;
	name = kind != K_COLL ? a.gpu : (a.system ? a.system : a.gpu);
	if (!name)
		return cli_error("%s: %s needs --%s NAME", ctx->cmd, what,
				 kind != K_COLL ? "gpu" : "system");
	if ((rc = check_args(ctx->cmd, what, kind, coll, &a, &dt, &algo, &at, &cls)))
		return rc;
	if ((st = cvc_hw_catalog_new(&cat)) ||
	    (a.catalog && (st = cvc_hw_catalog_load(cat, a.catalog)))) {
		rc = cli_fail(st, "%s", cvc_hw_catalog_errmsg(cat));
		goto out;
	}
	/* as named or by an alias: never the entry a name merely starts like */
	if ((rc = cli_hw_find(ctx->cmd, cat, name == a.system ? "--system" : "--gpu", name,
			      name == a.system ? "system" : "gpu", &spec)))
		goto out;
	if ((kind == K_GEMM || kind == K_ATTN) &&
	    (rc = dtype_path(ctx->cmd, spec, dt, kind == K_GEMM ? "GEMM" : "attention kernel", &as)))
		goto out;
	/* bf16 on V100 runs as fp16, tf32 as fp32: priced as 'cvc project'
	 * prices it, and said */
	if ((kind == K_GEMM || kind == K_ATTN) && as != dt)
		cli_say("note: %s has no %s tensor path: priced on its %s one, as 'cvc project' does\n",
			spec->name, cvc_hw_dtype_name(dt), cvc_hw_dtype_name(as));
	if (a.dbpath && (rc = cli_db_open(ctx, a.dbpath, CVC_DB_READONLY, &db)))
		goto out;
	if ((st = cvc_modelset_new_ex(db, cat, spec, a.force, &ms))) {
		rc = cli_fail(st, "%s", db ? cvc_db_errmsg(db) : cvc_strerror(st));
		goto out;
	}
	if (kind == K_GEMM && a.csv)
		rc = cli_predict_shapes(ms, a.csv, dt, cli_format_default(a.format, "csv"));
	else if (kind == K_GEMM)
		rc = predict_gemm(ms, spec, dt, (int64_t[]){a.b, a.m, a.n, a.k}, a.format);
	else if (kind == K_ATTN) {
		/* priced on the GPU's path for the dtype, as the projector's
		 * pricer maps a scenario's dtype (price.c) */
		at.dtype = as;
		rc = cli_predict_attention(ms, spec, &at, a.format);
	} else if (kind == K_MEM)
		rc = cli_predict_membound(ms, spec, cls, a.bytes, a.format);
	else
		rc = predict_coll(ms, spec, coll, (int64_t[]){a.bytes, a.gpus, a.per_node}, algo,
				  a.format);
out:
	cvc_modelset_free(ms);
	cvc_hw_catalog_free(cat);
	return rc;
}
