/*
 * cmd_validate.c - `cvc validate [--db PATH] FILE.csv`: projects every
 * measured run of a published table, prints the table back with the
 * projection, the measured figure, the signed error and what each row
 * assumed (stdout), and the accuracy against a naive predictor on stderr.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "commands.h"
#include "cvc/cvc_db.h"
#include "cvc/cvc_project.h"
#include "cvc/cvc_report.h"

static void print_stats(const char *what, const cvc_proj_vstats *s)
{
	int not = 0;
	char why[512] = "";

	for (int w = 0; w < CVC_PROJ_VWHY_N; w++) {
		size_t n = strlen(why);

		if (!s->not_projected[w])
			continue;
		not += s->not_projected[w];
		snprintf(why + n, sizeof why - n, "%s%d %s", n ? ", " : "", s->not_projected[w],
			 cvc_proj_vwhy_name(w));
	}
	cli_say("%s: %d rows read, %d with a measured figure; %d projected (%.1f%% of "
		"those), %d not projected%s%s%s\n",
		what, s->rows, s->measured, s->expressible,
		100.0 * s->expressible / (s->measured ? s->measured : 1), not, not ? " (" : "",
		why, not ? ")" : "");
	if (!s->expressible)
		return;
	cli_say(
		"%s: MAPE %.2f%%, median %.2f%%, within 10%%: %.1f%%, bias %+.2f%%; naive (40%% of "
		"bf16 peak) MAPE %.2f%%, skill %.1f%%\n",
		what, s->mape_pct, s->median_pct, s->within10_pct, s->bias_pct, s->naive_mape_pct,
		s->skill_pct);
	if (s->repeat_sets > 0)
		cli_say("%s: %d of the projected rows repeat %d scenarios (rows projected "
			"alike); their measurements' own spread leaves any projection from what the "
			"rows state at least %.2f%% MAPE\n",
			what, s->repeat_rows, s->repeat_sets, s->floor_pct);
	if (s->regressed_rows > 0 && isfinite(s->mape_unregressed_pct))
		cli_say("%s: %d of the projected rows were measured in a release their "
			"stack's own issue tracker records as regressed for that model and GPU (their "
			"notes say which); MAPE over the other %d: %.2f%%\n",
			what, s->regressed_rows, s->expressible - s->regressed_rows,
			s->mape_unregressed_pct);
	if (s->unfit_rows > 0)
		cli_say("%s: %d of the projected rows do not fit in memory by cvc's count, though "
			"each ran (up to %.0f%% over the usable HBM; their notes say how much)\n",
			what, s->unfit_rows, s->unfit_worst_pct);
	if (s->tflops_pairs > 0) {
		char agree[256] = "";

		for (int c = 0; cvc_proj_flops_convention(c); c++) {
			size_t n = strlen(agree);

			if (s->tflops_agree[c])
				snprintf(agree + n, sizeof agree - n, "%s %d, ",
					 cvc_proj_flops_convention(c), s->tflops_agree[c]);
		}
		cli_say("%s: %d of the projected rows print TFLOP/s beside the tokens/s or "
			"step time they were compared on; the FLOP count that gives those within 1%%: "
			"%snone %d\n",
			what, s->tflops_pairs, agree, s->tflops_agree_none);
	}
	if (isfinite(s->coverage_pct))
		cli_say("%s: 90%% intervals hold the measurement in %.1f%% of the rows; "
			"median half-width %.1f%%\n", what, s->coverage_pct, s->median_halfwidth_pct);
}

int cmd_validate(int argc, char **argv, struct cvc_ctx *cctx)
{
	const char *db_path = NULL, *flops = NULL, *by = NULL, *format = NULL;
	int npos = 0, origins = 0, force = 0, strict = 0, ret = 1, r;
	const struct cli_opt opts[] = {
		{"db", 0, CLI_PATH, &db_path, "PATH", "price with the fitted models of this database", NULL},
		{"flops", 0, CLI_STR, &flops, "NAME",
		 "FLOP convention of tflops_per_gpu / mfu_pct in rows that name none (megatron, "
		 "megatron-causal, megatron-2021, palm, cvc)", NULL},
		{"by", 0, CLI_STR, &by, "COLUMN[,COLUMN...]",
		 "also print the accuracy per value of COLUMN, or of up to four joined (stack: the "
		 "software stack and release each row's text names; moe: MoE or dense as each "
		 "row's model reads)",
		 NULL},
		{"origins", 0, CLI_FLAG, &origins, NULL, "print where the figures of each GPU the rows were priced on come from", NULL},
		{"force", 0, CLI_FLAG, &force, NULL,
		 "also price with fits the quality gate keeps out", NULL},
		{"format", 'f', CLI_CHOICE, &format, "FMT",
		 "the scored rows: table (default on a terminal), csv (default in a pipe) or json",
		 CLI_FORMATS},
		{"strict", 0, CLI_FLAG, &strict, NULL,
		 "project only what rows state: a default, a guess or a remark read leaves the "
		 "row unprojected", NULL},
		{0},
	};
	cvc_proj_validate_opts vo = {0};
	cvc_proj_validation v = {0};
	cvc_proj_ctx *ctx = NULL;
	cvc_rep_table *scored = NULL;
	char *text = NULL;
	size_t len = 0;
	cvc_status rc;
	char err[512] = "";

	r = cli_parse("validate", "[--db PATH] [--flops NAME] [--by COLUMN[,COLUMN...]] [--strict] [--format FMT] FILE.csv", opts, argc,
		      argv, &npos, NULL);
	if (r)
		return r < 0 ? 0 : r;
	if (npos != 1)
		return cli_error("validate: expected one measurements CSV file");
	if ((r = cli_proj_open(cctx, db_path, force, &ctx))) {
		ret = r;
		goto out;
	}
	vo.flops = flops;
	vo.by = by;
	vo.strict = strict;
	format = cli_format_default(format, "csv");
	if (strcmp(format, "csv") == 0) {
		rc = cvc_proj_validate(argv[1], ctx, &vo, stdout, &v, err, sizeof err);
	} else {
		/* the scored rows as a table or JSON: written as CSV, read back */
		FILE *mem = open_memstream(&text, &len);

		rc = mem ? cvc_proj_validate(argv[1], ctx, &vo, mem, &v, err, sizeof err)
			 : CVC_ERR_NOMEM;
		if (mem && fclose(mem) && !rc)
			rc = CVC_ERR_NOMEM;
		if (!rc && !(rc = cvc_rep_table_parse(argv[1], text, len, &scored, err,
						       sizeof err)))
			cli_table_print(scored, format);
	}
	if (rc) {
		ret = cli_fail(rc, "%s", err[0] ? err : cvc_strerror(rc));
		goto out;
	}
	if (origins) {
		const char *gpu;
		char buf[8192];

		/* each GPU the rows were priced on, not a fixed pair of them */
		for (size_t i = 0; (gpu = cvc_proj_ctx_gpu(ctx, i)); i++)
			if (cvc_proj_ctx_origin(ctx, gpu, 0, buf, sizeof buf) == CVC_OK)
				cli_say("models: %s\n", buf);
	}
	for (size_t g = 0; g < v.ngroups; g++) {
		char what[240];

		snprintf(what, sizeof what, "  %.60s=%.127s", by, v.groups[g].key);
		print_stats(what, &v.groups[g].st);
	}
	{
		char what[600];

		snprintf(what, sizeof what, "validate: '%s'", argv[1]);
		print_stats(what, &v.all);
	}
	ret = 0;
out:
	cvc_rep_table_free(scored);
	free(text);
	cvc_proj_validation_release(&v);
	cvc_proj_ctx_free(ctx);
	return ret;
}
