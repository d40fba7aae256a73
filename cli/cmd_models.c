/*
 * cmd_models.c - `cvc models [list|show ID]`: the fitted models of a
 * database, their provenance (source, rows, domain) and quality.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "commands.h"
#include "cvc/cvc_db.h"
#include "cvc/cvc_model.h"
#include "cvc/cvc_report.h"

/* A collective fit too small to measure how its regimes carry to larger
 * messages prices only up to its largest (opprice.c); said where it is used. */
#define UP_TO ", up to its largest size (too few rows to measure how it carries past it)"
/* A memory-bound fit prices from its smallest size up, or only its own
 * sizes when the carry up was not measured either (opprice.c mem_in). */
#define UP_TO_MEM " (too few rows to measure how it carries past them)"

static const char synopsis[] = "[list | show ID] [--db PATH] [--format table|csv|json]";

static void show(const cvc_model_fit *f)
{
	printf("id:            %lld\n", (long long)f->id);
	printf("kind:          %s\n", cvc_model_kind_name(f->kind));
	printf("gpu:           %s\n", f->gpu);
	if (f->kind == CVC_MODEL_COLLECTIVE) {
		printf("system:        %s\n", f->system[0] ? f->system : "-");
		printf("collective:    %s\n", cvc_model_fit_op(f));
		printf("ranks:         %d (%d per node)\n", f->nranks, f->gpus_per_node);
		printf("domain:        %.0f .. %.0f bytes\n", f->dom_min, f->dom_max);
		for (int r = 0; r < (int)f->params[0] && 1 + 5 * r + 4 < f->nparams; r++) {
			const double *q = f->params + 1 + 5 * r;

			/* a negative start marks the spec-sheet large-message regime,
			 * competing above the largest size measured */
			if (q[0] < 0)
				printf("regime %d:      large messages above %.0f bytes (spec-sheet Simple "
				       "protocol): alpha %.3f us, busbw %.2f GB/s\n", r + 1, -q[0], q[1],
				       q[2]);
			else
				printf("regime %d:      from %.0f bytes: alpha %.3f us, busbw %.2f GB/s at "
				       "%.0f bytes, exponent %.2f\n", r + 1, q[0], q[1], q[2], q[4], q[3]);
		}
		if (f->lvl.valid) {
			printf("level:         from %.0f bytes: algbw %.2f GB/s (busbw %.2f), fill %.0f "
			       "bytes; mape %.2f%%, extrap mape %.2f%%\n", f->lvl.min_bytes,
			       f->lvl.algbw_gbps,
			       f->lvl.algbw_gbps * cvc_model_busbw_factor(f->coll, f->nranks),
			       f->lvl.fill_bytes, f->lvl.mape, f->lvl.extrap_mape);
			printf("node NICs:     %.1f GB/s (catalog %s), algorithm %s\n",
			       f->lvl.b_node_gbps, f->system[0] ? f->system : f->gpu,
			       f->lvl.algo[0] ? f->lvl.algo : "NCCL's choice");
		} else {
			printf("level:         none (fewer than 3 rows of 1 MiB and more)\n");
		}
	} else if (f->kind == CVC_MODEL_MEMBOUND) {
		printf("class:         %s\n", cvc_model_fit_op(f));
		printf("domain:        %.0f .. %.0f bytes\n", f->dom_min, f->dom_max);
		if (f->nparams >= 2)
			printf("params:        floor %.3f us, HBM bandwidth efficiency %.3f\n",
			       f->params[0], f->params[1]);
	} else {
		printf("dtype:         %s\n", cvc_model_fit_op(f));
		printf("domain:        %.4g .. %.4g FLOP\n", f->dom_min, f->dom_max);
		if (f->nparams >= 6)
			printf("params:        floor %.3f us, %.3f us per wave, wave factor %.4f, "
			       "FLOP factor %.4f (efficiency %.3f), memory efficiency %.2f, tile %.0f\n",
			       f->params[0], f->params[1], f->params[2], f->params[3],
			       f->params[3] > 0 ? 1.0 / f->params[3] : 0.0, f->params[4], f->params[5]);
	}
	printf("source:        %s\n", f->source);
	printf("rows:          %d\n", f->n_points);
	printf("r2 (log time): %.4f\n", f->r2);
	printf("mape:          %.2f%%\n", f->mape);
	if (isfinite(f->extrap_mape))
		printf("extrap mape:   %.2f%% (fit on the smaller half of the sizes, predict the rest)\n",
		       f->extrap_mape);
	else
		printf("extrap mape:   n/a (too few rows)\n");
	{
		const char *why, *lwhy;
		int ok = cvc_model_fit_usable(f, &why);

		if (f->kind != CVC_MODEL_COLLECTIVE) {
			printf("used:          %s%s\n", ok ? "yes" : "no: ", ok ? "" : why);
		} else {
			int lok = cvc_model_level_usable(f, &lwhy);

			printf("used:          its own span: %s%s%s; other spans (level): %s%s\n",
			       ok ? "yes" : "no, ", ok ? "" : why, ok && !isfinite(f->extrap_mape) ? UP_TO : "",
			       lok ? "yes" : "no, ", lok ? "" : lwhy);
		}
	}
}

/* "yes", "level" (a collective priced only through its level), "no". */
static const char *use_word(const cvc_model_fit *f)
{
	if (cvc_model_fit_usable(f, NULL))
		return "yes";
	if (f->kind == CVC_MODEL_COLLECTIVE && cvc_model_level_usable(f, NULL))
		return "level";
	return "no";
}

/* The stored fits as a table: quality (R^2 on log time, MAPE, the
 * extrapolation MAPE the quality gate reads), domain, whether and why
 * not the projector uses each.  NULL on no memory. */
static cvc_rep_table *list_table(const cvc_model_fit *list, size_t n)
{
	static const char *const cols[] = {
		"id", "kind", "gpu", "system", "op", "ranks", "per_node", "rows", "r2", "mape_pct",
		"extrap_mape_pct", "domain_min", "domain_max", "domain_unit", "used", "why_not",
		"source"};
	cvc_rep_table *t = cvc_rep_table_new("models", NULL, sizeof cols / sizeof cols[0], cols);

	for (size_t i = 0; t && i < n; i++) {
		const cvc_model_fit *f = &list[i];
		const char *why = "";
		long r = cvc_rep_table_add_row(t);

		if (!cvc_model_fit_usable(f, &why) && f->kind == CVC_MODEL_COLLECTIVE &&
		    cvc_model_level_usable(f, NULL))
			why = "its own span kept out; its large-message level prices other spans";
		else if (f->kind == CVC_MODEL_COLLECTIVE && cvc_model_fit_usable(f, NULL) &&
			 !isfinite(f->extrap_mape))
			why = "its own span" UP_TO;
		else if (f->kind == CVC_MODEL_MEMBOUND && cvc_model_fit_usable(f, NULL))
			why = isfinite(f->extrap_mape) ? "from its smallest size up"
						       : "its own sizes only" UP_TO_MEM;
		if (r < 0 || cvc_rep_table_set_str(t, (size_t)r, 1, cvc_model_kind_name(f->kind)) ||
		    cvc_rep_table_set_str(t, (size_t)r, 2, f->gpu) ||
		    cvc_rep_table_set_str(t, (size_t)r, 3, f->system) ||
		    cvc_rep_table_set_str(t, (size_t)r, 4, cvc_model_fit_op(f)) ||
		    cvc_rep_table_set_str(t, (size_t)r, 13, f->kind == CVC_MODEL_GEMM ? "flop" : "bytes") ||
		    cvc_rep_table_set_str(t, (size_t)r, 14, use_word(f)) ||
		    cvc_rep_table_set_str(t, (size_t)r, 15, why) ||
		    cvc_rep_table_set_str(t, (size_t)r, 16, f->source)) {
			cvc_rep_table_free(t);
			return NULL;
		}
		cvc_rep_table_set_num(t, (size_t)r, 0, (double)f->id);
		cvc_rep_table_set_num(t, (size_t)r, 5, f->nranks);
		cvc_rep_table_set_num(t, (size_t)r, 6, f->gpus_per_node);
		cvc_rep_table_set_num(t, (size_t)r, 7, f->n_points);
		cvc_rep_table_set_num(t, (size_t)r, 8, f->r2);
		cvc_rep_table_set_num(t, (size_t)r, 9, f->mape);
		cvc_rep_table_set_num(t, (size_t)r, 10, f->extrap_mape);
		cvc_rep_table_set_num(t, (size_t)r, 11, f->dom_min);
		cvc_rep_table_set_num(t, (size_t)r, 12, f->dom_max);
	}
	return t;
}

int cmd_models(int argc, char **argv, struct cvc_ctx *ctx)
{
	const char *dbpath = CVC_DEFAULT_DB, *format = "table";
	int npos = 0, rc;
	const struct cli_opt opts[] = {
		{"db", 0, CLI_PATH, &dbpath, "PATH", "database (default " CVC_DEFAULT_DB ")", NULL},
		{"format", 'f', CLI_CHOICE, &format, "FMT", "list's output format", CLI_FORMATS},
		{0},
	};
	cvc_rep_table *t = NULL;
	cvc_db *db = NULL;
	cvc_model_fit *list = NULL, one;
	size_t n = 0;
	cvc_status st;
	const char *verb;
	uint64_t seen;

	rc = cli_parse_seen(ctx->cmd, synopsis, opts, argc, argv, &npos, NULL, &seen);
	if (rc)
		return rc < 0 ? 0 : rc;
	verb = npos ? argv[1] : "list";
	if (strcmp(verb, "list") == 0 ? npos > 1 : (strcmp(verb, "show") != 0 || npos != 2))
		return cli_error("%s: expected 'list' or 'show ID' (see 'cvc %s --help')", ctx->cmd,
				 ctx->cmd);
	/* show prints one model as lines: a format asked of it was dropped
	 * without a word (opts[1] is --format) */
	if (strcmp(verb, "show") == 0 && (seen >> 1 & 1))
		return cli_error("%s: --format does not apply to show (it formats list)", ctx->cmd);
	if ((rc = cli_db_open(ctx, dbpath, CVC_DB_READONLY, &db)))
		goto out;
	if (strcmp(verb, "show") == 0) {
		char *end = NULL;
		long long id;

		errno = 0;
		id = strtoll(argv[2], &end, 10);
		if (errno || end == argv[2] || *end || id <= 0) {
			rc = cli_error("%s: show: expected a model id, got '%s'", ctx->cmd, argv[2]);
			goto out;
		}
		if ((st = cvc_model_fit_get(db, id, &one))) {
			rc = cli_fail(st, "%s", cvc_db_errmsg(db));
			goto out;
		}
		show(&one);
		rc = 0;
		goto out;
	}
	if ((st = cvc_model_fit_list(db, &list, &n))) {
		rc = cli_fail(st, "%s", cvc_db_errmsg(db));
		goto out;
	}
	if (!(t = list_table(list, n))) {
		rc = cli_fail(CVC_ERR_NOMEM, "%s: out of memory", ctx->cmd);
		goto out;
	}
	cli_table_print(t, format);
	if (n && strcmp(format, "table") == 0)
		cli_say("note: used = no: stored but the quality gate keeps it out (why_not; "
			"'cvc models show ID'); level: a collective priced only through its "
			"large-message level\n");
	if (!n)
		cli_say("note: '%s' has no fitted models (see 'cvc fit --help')\n", dbpath);
	rc = 0;
out:
	cvc_rep_table_free(t);
	free(list);
	return rc;
}
