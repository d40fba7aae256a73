/*
 * cmd_predict.c - `cvc predict gemm|<collective>`: one prediction (or a
 * CSV of GEMM shapes) from the fitted models of a db, carried over from
 * the closest fitted GPU, or from the spec sheet; always says which.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cli.h"
#include "commands.h"
#include "cvc/cvc_base.h"
#include "cvc/cvc_db.h"
#include "cvc/cvc_model.h"

static const char synopsis[] =
	"gemm --m M --n N --k K [--b B] [--dtype DT] --gpu NAME [--db PATH] [--csv FILE]\n"
	"   or: cvc predict allreduce|allgather|reducescatter|alltoall|broadcast|reduce|sendrecv\n"
	"       --bytes SIZE --gpus N [--per-node N] [--algo auto|ring|tree] --system NAME [--db PATH]";

#define CSV_LINE_MAX 4096

/* Copies a header field, trimmed and lowercased, for column matching. */
static void norm_field(const char *s, char *out, size_t cap)
{
	size_t j = 0;

	while (*s == ' ' || *s == '"')
		s++;
	for (; *s && *s != '"' && j + 1 < cap; s++)
		out[j++] = (char)tolower((unsigned char)*s);
	while (j && out[j - 1] == ' ')
		j--;
	out[j] = '\0';
}

static int predict_csv(const cvc_modelset *ms, const char *path, cvc_hw_dtype dt)
{
	FILE *f = fopen(path, "r");
	char line[CSV_LINE_MAX], copy[CSV_LINE_MAX];
	int col[4] = {-1, -1, -1, -1}, lineno = 0, rc = 0;
	static const char *const names[4] = {"m", "n", "k", "b"};

	if (!f) {
		int e = errno;

		return cli_fail(cvc_open_status(e), "'%s': cannot open: %s", path, strerror(e));
	}
	while (fgets(line, sizeof line, f)) {
		size_t len = strlen(line);
		int64_t v[4] = {0, 0, 0, 1};
		char *fld[64];
		int nf = 0;

		lineno++;
		if (len == sizeof line - 1 && line[len - 1] != '\n') {
			rc = cli_error("'%s': line %d: expected a line under %d bytes", path, lineno,
				       CSV_LINE_MAX);
			goto out;
		}
		while (len && (line[len - 1] == '\n' || line[len - 1] == '\r'))
			line[--len] = '\0';
		if (!len)
			continue;
		memcpy(copy, line, len + 1);
		for (char *p = copy; nf < 64;) {
			char *c = strchr(p, ',');

			fld[nf++] = p;
			if (!c)
				break;
			*c = '\0';
			p = c + 1;
		}
		if (col[0] < 0) {
			for (int i = 0; i < nf; i++) {
				char h[32];

				norm_field(fld[i], h, sizeof h);
				for (int c = 0; c < 4; c++)
					if (strcmp(h, names[c]) == 0 && col[c] < 0)
						col[c] = i;
			}
			if (col[0] < 0 || col[1] < 0 || col[2] < 0) {
				rc = cli_error("'%s': line %d: expected a header with columns m, n, k "
					       "(and optionally b)", path, lineno);
				goto out;
			}
			printf("%s,time_us\n", line);
			continue;
		}
		for (int c = 0; c < 4; c++) {
			if (col[c] < 0)
				continue;
			if (col[c] >= nf ||
			    cvc_parse_i64(fld[col[c]], c < 3, INT64_C(1) << 40, &v[c]) != CVC_OK) {
				rc = cli_error("'%s': line %d: expected a positive integer %s, got '%.32s'",
					       path, lineno, names[c], col[c] < nf ? fld[col[c]] : "");
				goto out;
			}
		}
		printf("%s,%.3f\n", line, cvc_model_gemm_us(ms, v[0], v[1], v[2], v[3], dt));
	}
	if (ferror(f))
		rc = cli_fail(CVC_ERR_IO, "'%s': read error", path);
	else if (col[0] < 0)
		rc = cli_error("'%s': line %d: expected a header with columns m, n, k", path, lineno + 1);
out:
	fclose(f);
	return rc;
}

int cmd_predict(int argc, char **argv, struct cvc_ctx *ctx)
{
	const char *dbpath = NULL, *gpu = NULL, *system = NULL, *dtype = "bf16", *csv = NULL;
	const char *bytes_s = NULL, *catalog = NULL, *algo_s = NULL;
	long long m = 0, n = 0, k = 0, b = 1, gpus = 0, per_node = 0, bytes = 0;
	int force = 0;
	int npos = 0, rc;
	const struct cli_opt opts[] = {
		{"db", 0, CLI_PATH, &dbpath, "PATH", "fitted models (default: none, spec sheet only)", NULL},
		{"gpu", 0, CLI_STR, &gpu, "NAME", "GPU (catalog name, alias or device name)", NULL},
		{"system", 0, CLI_STR, &system, "NAME", "system for collectives (or --gpu)", NULL},
		{"catalog", 0, CLI_PATH, &catalog, "FILE", "extra hardware catalog entries (CSV)", NULL},
		{"m", 0, CLI_INT, &m, "M", "gemm rows", NULL},
		{"n", 0, CLI_INT, &n, "N", "gemm columns", NULL},
		{"k", 0, CLI_INT, &k, "K", "gemm inner dimension", NULL},
		{"b", 0, CLI_INT, &b, "B", "gemm batch (default 1)", NULL},
		{"dtype", 0, CLI_STR, &dtype, "DT", "fp32, tf32, bf16 (default), fp16, fp8", NULL},
		{"csv", 0, CLI_PATH, &csv, "FILE", "gemm shapes m,n,k[,b] to predict, one per row", NULL},
		{"bytes", 0, CLI_STR, &bytes_s, "SIZE", "collective size (nccl-tests convention), e.g. 64MiB", NULL},
		{"gpus", 0, CLI_INT, &gpus, "N", "collective group size", NULL},
		{"per-node", 0, CLI_INT, &per_node, "N", "GPUs per node (default: the system's)", NULL},
		{"force", 0, CLI_FLAG, &force, NULL,
		 "also use fits the quality gate keeps out (see 'cvc models show ID')", NULL},
		{"algo", 0, CLI_STR, &algo_s, "NAME",
		 "NCCL algorithm across nodes: auto (default, the fastest), ring, tree", NULL},
		{0},
	};
	cvc_hw_catalog *cat = NULL;
	cvc_db *db = NULL;
	cvc_modelset *ms = NULL;
	const cvc_hw_spec *spec;
	const char *what, *name;
	cvc_hw_dtype dt;
	cvc_model_coll coll = CVC_MODEL_ALLREDUCE;
	cvc_status st;
	int is_gemm, algo = CVC_ALGO_AUTO;

	rc = cli_parse(ctx->cmd, synopsis, opts, argc, argv, &npos, NULL);
	if (rc)
		return rc < 0 ? 0 : rc;
	if (npos != 1)
		return cli_error("%s: expected what to predict: gemm or a collective (see 'cvc %s --help')",
				 ctx->cmd, ctx->cmd);
	what = argv[1];
	is_gemm = strcmp(what, "gemm") == 0;
	if (!is_gemm && cvc_model_coll_parse(what, &coll))
		return cli_error("%s: '%s' is neither gemm nor a collective", ctx->cmd, what);
	name = is_gemm ? gpu : (system ? system : gpu);
	if (!name)
		return cli_error("%s: %s needs --%s NAME", ctx->cmd, what, is_gemm ? "gpu" : "system");
	if (cvc_hw_dtype_parse(dtype, &dt))
		return cli_error("%s: --dtype: unknown dtype '%s' (fp32, tf32, bf16, fp16, fp8)", ctx->cmd,
				 dtype);
	if (is_gemm && !csv && (m <= 0 || n <= 0 || k <= 0 || b <= 0))
		return cli_error("%s: gemm needs positive --m, --n and --k (or --csv FILE)", ctx->cmd);
	if (!is_gemm) {
		if (!bytes_s)
			return cli_error("%s: %s needs --bytes SIZE", ctx->cmd, what);
		if ((rc = cli_parse_bytes("bytes", bytes_s, &bytes)))
			return rc;
		if (gpus < 1 || gpus > 1 << 20 || per_node < 0 || per_node > 1 << 20)
			return cli_error("%s: %s needs --gpus N (1 or more)", ctx->cmd, what);
		if (algo_s && strcmp(algo_s, "auto") == 0)
			algo = CVC_ALGO_AUTO;
		else if (algo_s && strcmp(algo_s, "ring") == 0)
			algo = CVC_ALGO_RING;
		else if (algo_s && strcmp(algo_s, "tree") == 0)
			algo = CVC_ALGO_TREE;
		else if (algo_s)
			return cli_error("%s: --algo: expected auto, ring or tree, got '%s'", ctx->cmd,
					 algo_s);
	}
	if ((st = cvc_hw_catalog_new(&cat)) || (catalog && (st = cvc_hw_catalog_load(cat, catalog)))) {
		rc = cli_fail(st, "%s", cvc_hw_catalog_errmsg(cat));
		goto out;
	}
	/* as named or by an alias: never the entry a name merely starts like */
	if ((rc = cli_hw_find(ctx->cmd, cat, name == system ? "--system" : "--gpu", name,
			      name == system ? "system" : "gpu", &spec)))
		goto out;
	if (dbpath && (rc = cli_db_open(ctx, dbpath, CVC_DB_READONLY, &db)))
		goto out;
	if ((st = cvc_modelset_new_ex(db, cat, spec, force, &ms))) {
		rc = cli_fail(st, "%s", db ? cvc_db_errmsg(db) : cvc_strerror(st));
		goto out;
	}
	if (is_gemm && csv) {
		fprintf(stderr, "model: %s\n", cvc_model_origin(ms, CVC_MODEL_GEMM, (int)dt, 0));
		rc = predict_csv(ms, csv, dt);
		goto out;
	}
	if (is_gemm) {
		double t = cvc_model_gemm_us(ms, m, n, k, b, dt);
		double fl = 2.0 * (double)b * (double)m * (double)n * (double)k;

		printf("gemm b=%lld m=%lld n=%lld k=%lld %s on %s: %.3f us (%.1f TFLOP/s)\n", b, m, n, k,
		       cvc_hw_dtype_name(dt), spec->name, t, fl / t / 1e6);
		printf("model: %s\n", cvc_model_origin(ms, CVC_MODEL_GEMM, (int)dt, 0));
	} else {
		int pn = per_node > 0 ? (int)per_node : cvc_hw_domain(spec);
		const char *origin;
		double t = cvc_model_collective_algo_us(ms, coll, bytes, (int)gpus, pn, NULL, algo,
							&origin);
		double f = cvc_model_busbw_factor(coll, (int)gpus);

		printf("%s %lld bytes over %lld GPUs (%d per node) on %s: %.3f us", cvc_model_coll_name(coll),
		       bytes, gpus, pn, spec->name, t);
		if (t > 0)
			printf(" (algbw %.2f GB/s, busbw %.2f GB/s)", (double)bytes / t / 1e3,
			       f * (double)bytes / t / 1e3);
		printf("\nmodel: %s\n", origin);
	}
	rc = 0;
out:
	cvc_modelset_free(ms);
	cvc_hw_catalog_free(cat);
	return rc;
}
