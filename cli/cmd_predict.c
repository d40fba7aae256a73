/*
 * cmd_predict.c - `cvc predict gemm|<collective>`: one prediction (or a
 * CSV of GEMM shapes) from the fitted models of a db, carried over from
 * the closest fitted GPU, or from the spec sheet; always says which.
 * --format table|csv|json prints a prediction, or the CSV of shapes, as a
 * table (cli_table_print); the CSV of shapes defaults to csv in a pipe and
 * table at a terminal, one prediction to a sentence.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <string.h>
#include <strings.h>

#include "cli.h"
#include "commands.h"
#include "cvc/cvc_base.h"
#include "cvc/cvc_db.h"
#include "cvc/cvc_model.h"
#include "cvc/cvc_report.h"

static const char synopsis[] =
	"gemm --m M --n N --k K [--b B] [--dtype DT] --gpu NAME [--db PATH] [--csv FILE] [--format FMT]\n"
	"   or: cvc predict allreduce|allgather|reducescatter|alltoall|broadcast|reduce|sendrecv\n"
	"       --bytes SIZE --gpus N [--per-node N] [--algo auto|ring|tree] --system NAME [--db PATH]\n"
	"       [--format FMT]";

#define CSV_LINE_MAX 4096
/* A fit prices only the FLOP range it measured (docs/MODELS.md "Fitting and
 * quality"); the default answers outside it, which the model line says
 * instead of naming the fit alone */
#define OUTSIDE_NOTE \
	"; this shape lies outside the sizes it measured: priced at the default efficiency"
/* shapes a --csv file may hold: a device or a pipe without end is refused */
#define CSV_BYTES_MAX (256 << 20)

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

/*
 * The shapes of path with a time_us column added, as CSV to out: each line
 * as read, so the file's own columns pass through to the byte.  With
 * max_rows > 0, more shapes than that is an error (a table held in memory).
 * Returns an exit code.
 */
static int predict_csv(const cvc_modelset *ms, const char *path, cvc_hw_dtype dt, FILE *out,
		       long max_rows)
{
	FILE *f = fopen(path, "r");
	char line[CSV_LINE_MAX], copy[CSV_LINE_MAX];
	int col[4] = {-1, -1, -1, -1}, lineno = 0, rc = 0, nh = 0;
	long rows = 0, outside = 0, priced = 0;
	long long total = 0;
	static const char *const names[4] = {"m", "n", "k", "b"};
	struct stat sb;

	if (!f) {
		int e = errno;

		return cli_fail(cvc_open_status(e), "'%s': cannot open: %s", path, strerror(e));
	}
	/* a folder opens but does not read: the user's input, not the
	 * machine, is wrong (it read as "read error", exit 1) */
	if (fstat(fileno(f), &sb) == 0 && S_ISDIR(sb.st_mode)) {
		rc = cli_error("'%s': expected a file of shapes (m,n,k[,b]), got a folder", path);
		goto out;
	}
	while (fgets(line, sizeof line, f)) {
		size_t len = strlen(line);
		int64_t v[4] = {0, 0, 0, 1};
		char *fld[64];
		int nf = 0;

		lineno++;
		/* a NUL byte ends the string before the line does: not text
		 * (/dev/zero was read without end) */
		if (len < sizeof line - 1 && !feof(f) && (len == 0 || line[len - 1] != '\n')) {
			rc = cli_error("'%s': line %d: expected text, got a NUL byte", path, lineno);
			goto out;
		}
		if ((total += (long long)len) > CSV_BYTES_MAX) {
			rc = cli_error("'%s': line %d: expected at most %d MiB of shapes", path, lineno,
				       CSV_BYTES_MAX >> 20);
			goto out;
		}
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
			fprintf(out, "%s,time_us\n", line);
			nh = nf;
			continue;
		}
		/* every row as wide as the header: the time column follows it */
		if (nf != nh) {
			rc = cli_error("'%s': line %d: expected %d fields, as the header has, got %d",
				       path, lineno, nh, nf);
			goto out;
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
		if (max_rows > 0 && ++rows > max_rows) {
			rc = cli_error("'%s': line %d: more than %ld shapes to show as a table; "
				       "--format csv streams any number", path, lineno, max_rows);
			goto out;
		}
		{
			cvc_model_price pr;

			cvc_model_gemm_price(ms, v[0], v[1], v[2], v[3], dt, &pr);
			outside += pr.extrap > 1;
			priced++;
			fprintf(out, "%s,%.3f\n", line, pr.us);
		}
	}
	if (ferror(f))
		rc = cli_fail(CVC_ERR_IO, "'%s': read error", path);
	else if (col[0] < 0)
		rc = cli_error("'%s': line %d: expected a header with columns m, n, k", path, lineno + 1);
	else if (outside)
		cli_say("note: %ld of %ld shapes lie outside the sizes the model measured: the "
			"default efficiency priced them, not the fit\n", outside, priced);
out:
	fclose(f);
	return rc;
}

/* The CSV text buf[0..len) of predictions, printed in format. */
static int print_as(const char *what, const char *buf, size_t len, const char *format)
{
	cvc_rep_table *t = NULL;
	char err[1024];
	cvc_status st = cvc_rep_table_parse(what, buf, len, &t, err, sizeof err);

	if (st)
		return cli_fail(st, "%s", err);
	cli_table_print(t, format);
	cvc_rep_table_free(t);
	return 0;
}

/* The shapes file's predictions: streamed as CSV, or held and printed as a
 * table or JSON. */
static int predict_shapes(const cvc_modelset *ms, const char *path, cvc_hw_dtype dt,
			  const char *format)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *mem;
	int rc;

	if (strcmp(format, "csv") == 0)
		return predict_csv(ms, path, dt, stdout, 0);
	if (!(mem = open_memstream(&buf, &len)))
		return cli_fail(CVC_ERR_NOMEM, "predict: out of memory");
	rc = predict_csv(ms, path, dt, mem, CVC_REP_MAX_ROWS);
	if (fclose(mem) && !rc)
		rc = cli_fail(CVC_ERR_NOMEM, "predict: out of memory");
	if (!rc)
		rc = print_as(path, buf, len, format);
	free(buf);
	return rc;
}

/*
 * One prediction as a one-row table in format: a GEMM (bmnk: b, m, n, k)
 * or a collective (bgp: bytes, gpus, per_node; 0 per_node: the system's).
 */
static int predict_one_row(const cvc_modelset *ms, const cvc_hw_spec *spec, int is_gemm,
			   cvc_model_coll coll, cvc_hw_dtype dt, const int64_t *bmnk,
			   const int64_t *bgp, int algo, const char *format)
{
	static const char *const gcols[] = {"gpu", "dtype", "b", "m", "n", "k", "time_us",
					    "tflops", "model"};
	static const char *const ccols[] = {"collective", "system", "bytes", "gpus", "per_node",
					    "time_us", "algbw_gbps", "busbw_gbps", "model"};
	cvc_rep_table *t = is_gemm ? cvc_rep_table_new("predict", NULL, 9, gcols)
				   : cvc_rep_table_new("predict", NULL, 9, ccols);
	long r = t ? cvc_rep_table_add_row(t) : -1;
	int bad = r < 0;

	if (!bad && is_gemm) {
		cvc_model_price pr;
		double us, fl = 2.0 * (double)bmnk[0] * (double)bmnk[1] * (double)bmnk[2] *
				(double)bmnk[3];
		char model[640];

		cvc_model_gemm_price(ms, bmnk[1], bmnk[2], bmnk[3], bmnk[0], dt, &pr);
		us = pr.us;
		snprintf(model, sizeof model, "%s%s", cvc_model_origin(ms, CVC_MODEL_GEMM, (int)dt, 0),
			 pr.extrap > 1 ? OUTSIDE_NOTE : "");
		bad = cvc_rep_table_set_str(t, 0, 0, spec->name) ||
		      cvc_rep_table_set_str(t, 0, 1, cvc_hw_dtype_name(dt)) ||
		      cvc_rep_table_set_str(t, 0, 8, model);
		for (size_t c = 0; c < 4; c++)
			cvc_rep_table_set_num(t, 0, 2 + c, (double)bmnk[c]);
		cvc_rep_table_set_num(t, 0, 6, us);
		cvc_rep_table_set_num(t, 0, 7, us > 0 ? fl / us / 1e6 : NAN);
	} else if (!bad) {
		int pn = bgp[2] > 0 ? (int)bgp[2] : cvc_hw_domain(spec);
		const char *origin = "";
		double us = cvc_model_collective_algo_us(ms, coll, bgp[0], (int)bgp[1], pn, NULL, algo,
							 &origin);
		double f = cvc_model_busbw_factor(coll, (int)bgp[1]);

		bad = cvc_rep_table_set_str(t, 0, 0, cvc_model_coll_name(coll)) ||
		      cvc_rep_table_set_str(t, 0, 1, spec->name) ||
		      cvc_rep_table_set_str(t, 0, 8, origin);
		cvc_rep_table_set_num(t, 0, 2, (double)bgp[0]);
		cvc_rep_table_set_num(t, 0, 3, (double)bgp[1]);
		cvc_rep_table_set_num(t, 0, 4, pn);
		cvc_rep_table_set_num(t, 0, 5, us);
		cvc_rep_table_set_num(t, 0, 6, us > 0 ? (double)bgp[0] / us / 1e3 : NAN);
		cvc_rep_table_set_num(t, 0, 7, us > 0 ? f * (double)bgp[0] / us / 1e3 : NAN);
	}
	if (!bad)
		cli_table_print(t, format);
	cvc_rep_table_free(t);
	return bad ? cli_fail(CVC_ERR_NOMEM, "predict: out of memory") : 0;
}

/*
 * Refuses an option given for the other operator: a GEMM's shape and dtype
 * price no collective, a collective's size, group and algorithm no GEMM,
 * and a --csv file's rows are the shapes (--m/--n/--k/--b would be dropped
 * silently).  seen: cli_parse_seen's bits.  Returns 0 or 2.
 */
static int refuse_foreign(const char *cmd, const char *what, const struct cli_opt *opts,
			  uint64_t seen, int is_gemm, int with_csv)
{
	static const char *const gemm_only[] = {"m", "n", "k", "b", "dtype", "csv", NULL};
	static const char *const coll_only[] = {"bytes", "gpus", "per-node", "algo", "system", NULL};
	static const char *const shape[] = {"m", "n", "k", "b", NULL};

	for (int i = 0; i < 64 && opts[i].lname; i++) {
		if (!(seen >> i & 1))
			continue;
		for (const char *const *o = is_gemm ? coll_only : gemm_only; *o; o++)
			if (strcmp(opts[i].lname, *o) == 0)
				return cli_error("%s: --%s does not apply to %s (it is %s's); see "
						 "'cvc %s --help'", cmd, *o, what,
						 is_gemm ? "a collective" : "gemm", cmd);
		for (const char *const *o = shape; with_csv && *o; o++)
			if (strcmp(opts[i].lname, *o) == 0)
				return cli_error("%s: --%s does not apply with --csv (the file's rows "
						 "give the shapes)", cmd, *o);
	}
	return 0;
}

/*
 * The dtype a GEMM of dt runs as on spec, in *as, or 2 with the reason when
 * the GPU has no tensor path for it (fp8 on A100 or V100): the layout
 * 'cvc project' marks impossible, never priced on another path.
 */
static int dtype_path(const char *cmd, const cvc_hw_spec *spec, cvc_hw_dtype dt, cvc_hw_dtype *as)
{
	if (cvc_hw_dtype_path(spec, dt, as) == CVC_OK)
		return 0;
	return cli_error("%s: --dtype %s: %s has no %s tensor cores (its catalog entry gives no %s "
			 "peak): no GEMM runs there in %s, as 'cvc project' marks such a layout "
			 "impossible", cmd, cvc_hw_dtype_name(dt), spec->name,
			 dt == CVC_HW_FP4 ? "FP4" : dt == CVC_HW_FP8 ? "FP8" : cvc_hw_dtype_name(dt),
			 cvc_hw_dtype_name(dt), cvc_hw_dtype_name(dt));
}

int cmd_predict(int argc, char **argv, struct cvc_ctx *ctx)
{
	const char *dbpath = NULL, *gpu = NULL, *system = NULL, *dtype = "bf16", *csv = NULL;
	const char *bytes_s = NULL, *catalog = NULL, *algo_s = NULL, *format = NULL;
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
		{"dtype", 0, CLI_STR, &dtype, "DT", "fp32, tf32, bf16 (default), fp16, fp8, fp4", NULL},
		{"csv", 0, CLI_PATH, &csv, "FILE", "gemm shapes m,n,k[,b] to predict, one per row", NULL},
		{"bytes", 0, CLI_STR, &bytes_s, "SIZE", "collective size (nccl-tests convention), e.g. 64MiB", NULL},
		{"gpus", 0, CLI_INT, &gpus, "N", "collective group size", NULL},
		{"per-node", 0, CLI_INT, &per_node, "N", "GPUs per node (default: the system's)", NULL},
		{"force", 0, CLI_FLAG, &force, NULL,
		 "also use fits the quality gate keeps out (see 'cvc models show ID')", NULL},
		{"algo", 0, CLI_STR, &algo_s, "NAME",
		 "NCCL algorithm across nodes: auto (default, the fastest), ring, tree", NULL},
		{"format", 'f', CLI_CHOICE, &format, "FMT",
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
	uint64_t seen;
	cvc_status st;
	int is_gemm, algo = CVC_ALGO_AUTO;

	rc = cli_parse_seen(ctx->cmd, synopsis, opts, argc, argv, &npos, NULL, &seen);
	if (rc)
		return rc < 0 ? 0 : rc;
	if (npos != 1)
		return cli_error("%s: expected what to predict: gemm or a collective (see 'cvc %s --help')",
				 ctx->cmd, ctx->cmd);
	what = argv[1];
	is_gemm = strcmp(what, "gemm") == 0;
	if (!is_gemm && cvc_model_coll_parse(what, &coll))
		return cli_error("%s: '%s' is neither gemm nor a collective", ctx->cmd, what);
	if ((rc = refuse_foreign(ctx->cmd, what, opts, seen, is_gemm, csv != NULL)))
		return rc;
	name = is_gemm ? gpu : (system ? system : gpu);
	if (!name)
		return cli_error("%s: %s needs --%s NAME", ctx->cmd, what, is_gemm ? "gpu" : "system");
	if (cvc_hw_dtype_parse(dtype, &dt))
		return cli_error("%s: --dtype: unknown dtype '%s' (fp32, tf32, bf16, fp16, fp8, fp4)",
				 ctx->cmd, dtype);
	if (is_gemm && !csv && (m <= 0 || n <= 0 || k <= 0 || b <= 0))
		return cli_error("%s: gemm needs positive --m, --n and --k (or --csv FILE)", ctx->cmd);
	if (!is_gemm) {
		if (!bytes_s)
			return cli_error("%s: %s needs --bytes SIZE", ctx->cmd, what);
		if ((rc = cli_parse_bytes("bytes", bytes_s, &bytes)))
			return rc;
		if (gpus < 1 || gpus > 1 << 20)
			return cli_error("%s: %s needs --gpus N (1 to 1048576), got %lld", ctx->cmd, what,
					 gpus);
		/* 0 is the default: the system's own */
		if (per_node < 0 || per_node > 1 << 20)
			return cli_error("%s: --per-node: expected 1 to 1048576, got %lld", ctx->cmd,
					 per_node);
		if (algo_s && strcmp(algo_s, "auto") == 0)
			algo = CVC_ALGO_AUTO;
		else if (algo_s && strcmp(algo_s, "ring") == 0)
			algo = CVC_ALGO_RING;
		else if (algo_s && strcmp(algo_s, "tree") == 0)
			algo = CVC_ALGO_TREE;
		else if (algo_s)
			return cli_error("%s: --algo: expected auto, ring or tree, got '%s'", ctx->cmd,
					 algo_s);
		/* NCCL builds trees only for all-reduce */
		if (algo == CVC_ALGO_TREE && coll != CVC_MODEL_ALLREDUCE)
			return cli_error("%s: --algo tree: NCCL runs %s as a ring only (trees are "
					 "all-reduce's); give ring or auto", ctx->cmd, what);
	}
	if ((st = cvc_hw_catalog_new(&cat)) || (catalog && (st = cvc_hw_catalog_load(cat, catalog)))) {
		rc = cli_fail(st, "%s", cvc_hw_catalog_errmsg(cat));
		goto out;
	}
	/* as named or by an alias: never the entry a name merely starts like */
	if ((rc = cli_hw_find(ctx->cmd, cat, name == system ? "--system" : "--gpu", name,
			      name == system ? "system" : "gpu", &spec)))
		goto out;
	if (is_gemm && (rc = dtype_path(ctx->cmd, spec, dt, &as)))
		goto out;
	/* bf16 on V100 runs as fp16, tf32 as fp32: priced as 'cvc project'
	 * prices it, and said */
	if (is_gemm && as != dt)
		cli_say("note: %s has no %s tensor path: priced on its %s one, as 'cvc project' does\n",
			spec->name, cvc_hw_dtype_name(dt), cvc_hw_dtype_name(as));
	if (dbpath && (rc = cli_db_open(ctx, dbpath, CVC_DB_READONLY, &db)))
		goto out;
	if ((st = cvc_modelset_new_ex(db, cat, spec, force, &ms))) {
		rc = cli_fail(st, "%s", db ? cvc_db_errmsg(db) : cvc_strerror(st));
		goto out;
	}
	if (is_gemm && csv) {
		cli_say("model: %s\n", cvc_model_origin(ms, CVC_MODEL_GEMM, (int)dt, 0));
		rc = predict_shapes(ms, csv, dt, cli_format_default(format, "csv"));
		goto out;
	}
	if (format) {
		rc = predict_one_row(ms, spec, is_gemm, coll, dt, (int64_t[]){b, m, n, k},
				     (int64_t[]){bytes, gpus, per_node}, algo, format);
		goto out;
	}
	if (is_gemm) {
		double fl = 2.0 * (double)b * (double)m * (double)n * (double)k;
		cvc_model_price pr;

		cvc_model_gemm_price(ms, m, n, k, b, dt, &pr);
		printf("gemm b=%lld m=%lld n=%lld k=%lld %s on %s: %.3f us (%.1f TFLOP/s)\n", b, m, n, k,
		       cvc_hw_dtype_name(dt), spec->name, pr.us, fl / pr.us / 1e6);
		printf("model: %s%s\n", cvc_model_origin(ms, CVC_MODEL_GEMM, (int)dt, 0),
		       pr.extrap > 1 ? OUTSIDE_NOTE : "");
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
