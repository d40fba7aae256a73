/*
 * test_columns.c - every column of every CSV cvc writes has an entry in
 * the column dictionary (docs/COLUMNS.md, generated from it: lint.columns):
 * the projector's CSV walked by its own writer's list, the report's tables
 * as `cvc report --csv-dir` writes them, and the tables the commands print
 * with --format csv, read from their headers.  A column written without an
 * entry fails here, naming it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>
#include <criterion/logging.h>

#include "cvc/cvc_calshape.h"
#include "cvc/cvc_project.h"
#include "cvc/cvc_report.h"
#include "projector/proj_internal.h"
#include "testutil.h"

static int proj_missing;

static void check_proj(void *arg, const char *name)
{
	const char *unit;
	char def[256];

	(void)arg;
	if (cvc_proj_column_doc(name, &unit, def, sizeof def) != CVC_OK || !*unit || !*def) {
		cr_log_error("project column '%s' has no entry in projector/coldoc.c", name);
		proj_missing++;
	}
}

/* The projector writes its CSV and JSON from one list: each has an entry. */
Test(columns, every_projector_column_has_an_entry)
{
	const char *unit;
	char def[256];

	proj_missing = 0;
	cvc_proj_columns_each(check_proj, NULL);
	cr_assert_eq(proj_missing, 0, "%d projector columns without an entry", proj_missing);
	/* types and interval ends resolve to their patterns */
	cr_assert_eq(cvc_proj_column_doc("exposed_fsdp_s", &unit, def, sizeof def), CVC_OK);
	cr_assert_str_eq(unit, "s");
	cr_assert_eq(cvc_proj_column_doc("comm_ep_s_hi", &unit, def, sizeof def), CVC_OK);
	cr_assert(strstr(def, "upper end of the 90% interval of comm_ep_s"), "%s", def);
	cr_assert_eq(cvc_proj_column_doc("comm_share", &unit, def, sizeof def), CVC_OK);
	cr_assert(strstr(def, "comm_s / step_s"), "%s", def);
	cr_assert_eq(cvc_proj_column_doc("no_such_column", &unit, def, sizeof def),
		     CVC_ERR_NOTFOUND);
}

/* The header line of a CSV file, or NULL. */
static char *header_of(const char *path)
{
	char *text = tu_read(path, NULL), *nl;

	if (!text)
		return NULL;
	nl = strchr(text, '\n');
	if (nl)
		*nl = '\0';
	return text;
}

/* Counts the columns of header (comma-separated, no quoting in cvc's
 * headers) that ok() does not know, logging each. */
static int unknown_columns(const char *what, char *header,
			   int (*ok)(const char *table, const char *col, void *arg), void *arg)
{
	int bad = 0;

	for (char *c = header, *comma; c; c = comma ? comma + 1 : NULL) {
		comma = strchr(c, ',');
		if (comma)
			*comma = '\0';
		if (*c && !ok(what, c, arg)) {
			cr_log_error("%s: column '%s' has no entry in the dictionary", what, c);
			bad++;
		}
	}
	return bad;
}

static int rep_ok(const char *table, const char *col, void *arg)
{
	const char *unit;
	char def[256];

	(void)arg;
	return cvc_rep_column_doc(table, col, &unit, def, sizeof def) == CVC_OK;
}

/* The report's tables, as written: a trace with sized collectives and a
 * fit (so collective_model and provenance_models exist) and the
 * projector's own output. */
Test(columns, every_report_column_has_an_entry, .timeout = 300)
{
	const char *trace = tu_shared("traces/hta-nccl-args-a100-w2/nccl_data.json.gz");
	const char *log = tu_shared("traces/nccl-scale/h100x8_1node_dgx_nvswitch_all_reduce_perf.txt");
	char dir[1024], args[16384], *err = NULL, *out = NULL;
	int bad = 0, tables = 0;

	snprintf(dir, sizeof dir, "%s", tu_tmpdir());
	snprintf(args, sizeof args, "import --db '%s/d.db' '%s' && '%s' fit --db '%s/d.db' '%s' "
		 "&& '%s' project --top 1 --db '%s/d.db' --csv '%s/p.csv' && '%s' report --db "
		 "'%s/d.db' -p '%s/p.csv' -o '%s/r.html' --csv-dir '%s/t' && ls '%s/t'",
		 dir, trace, CVC_TOOL, dir, log, CVC_TOOL, dir, dir, CVC_TOOL, dir, dir, dir, dir,
		 dir);
	cr_assert_eq(tu_cvc(args, &out, &err), 0, "%s", err);
	for (char *name = out, *nl; name && *name; name = nl ? nl + 1 : NULL) {
		char path[4400], table[96], *h;
		size_t n;

		nl = strchr(name, '\n');
		if (nl)
			*nl = '\0';
		n = strlen(name);
		if (n < 5 || strcmp(name + n - 4, ".csv") != 0)
			continue;
		snprintf(table, sizeof table, "%.*s", (int)(n - 4), name);
		snprintf(path, sizeof path, "%s/t/%s", dir, name);
		h = header_of(path);
		cr_assert(h, "%s", path);
		bad += unknown_columns(table, h, rep_ok, NULL);
		tables++;
		free(h);
	}
	cr_assert_geq(tables, 18, "%d tables", tables);
	cr_assert_eq(bad, 0, "%d report columns without an entry", bad);
	free(out);
	free(err);
}

/* The commands' section of the dictionary as "table\tcolumn" lines. */
static char *commands_dictionary(void)
{
	char *out = NULL, *err = NULL;

	cr_assert_eq(tu_cvc("help columns --format csv", &out, &err), 0, "%s", err);
	free(err);
	return out;
}

static int cmd_ok(const char *table, const char *col, void *arg)
{
	char line[256];

	snprintf(line, sizeof line, "commands,%s,%s,", table, col);
	if (strstr(arg, line))
		return 1;
	/* the columns of a user's file pass through as read */
	snprintf(line, sizeof line, "commands,%s,<input>,", table);
	return strstr(arg, line) && strcmp(col, "time_us") != 0 &&
	       strstr(col, "predicted_") == NULL && strcmp(col, "error_pct") != 0 &&
	       strcmp(col, "assumed") != 0;
}

/* What the commands print with --format csv (or as CSV): each header. */
Test(columns, every_command_column_has_an_entry, .timeout = 300)
{
	static const struct {
		const char *table, *cmd;
	} runs[] = {
		{"analyze", "analyze --db d.db --format csv"},
		{"analyze", "analyze --db d.db --by step --format csv"},
		{"analyze --classes", "analyze --db d.db --classes --format csv"},
		{"analyze --collectives", "analyze --db d.db --collectives --format csv"},
		{"analyze --idle", "analyze --db d.db --idle --format csv"},
		{"classify", "classify --db d.db --format csv"},
		{"classify --unknown", "classify --db d.db --unknown --format csv"},
		{"models", "models --db d.db --format csv"},
		{"validate", "validate v.csv"},
		{"predict --csv", "predict gemm --gpu H100 --csv shapes.csv"},
		{"calibrate --plan", "calibrate --plan --csv plan.csv >/dev/null && cat plan.csv"},
		{"project --models", "project --models"},
		{"predict gemm --format", "predict gemm --gpu H100 --m 64 --n 64 --k 64 --format csv"},
		{"predict <collective> --format",
		 "predict allreduce --bytes 1MiB --gpus 8 --system dgx-h100 --format csv"},
		{"predict attention --format",
		 "predict attention --gpu H100 --heads 8 --head-dim 128 --seq 1024 --format csv"},
		{"predict membound --format",
		 "predict membound --gpu H100 --class norm --bytes 1MiB --format csv"},
		{"help columns", "help columns --format csv"},
	};
	char dir[1024], args[16384], *dict = commands_dictionary(), *err = NULL, *out = NULL;
	const char *trace = tu_shared("traces/hta-nccl-args-a100-w2/nccl_data.json.gz");
	int bad = 0;

	snprintf(dir, sizeof dir, "%s", tu_tmpdir());
	snprintf(args, sizeof args, "import --db '%s/d.db' '%s' >/dev/null", dir, trace);
	cr_assert_eq(tu_cvc(args, NULL, &err), 0, "%s", err);
	free(err);
	cr_assert_eq(tu_write(tu_path(dir, "shapes.csv"), "m,n,k\n64,64,64\n", 15), 0);
	cr_assert_eq(tu_write(tu_path(dir, "v.csv"),
			      "model,params_b,layers,hidden,heads,seq,gpu,gpus,tp,pp,global_batch,"
			      "tokens_per_s_per_gpu\nx,7,32,4096,32,4096,H100,64,1,1,512,10000\n", 130),
		     0);
	for (size_t i = 0; i < sizeof runs / sizeof runs[0]; i++) {
		char *nl;

		snprintf(args, sizeof args, "cd '%s' && '%s' %s", dir, CVC_TOOL, runs[i].cmd);
		cr_assert_eq(tu_run(args, &out, &err), 0, "%s: %s", runs[i].cmd, err);
		nl = strchr(out, '\n');
		if (nl)
			*nl = '\0';
		cr_assert(*out, "%s printed nothing", runs[i].cmd);
		bad += unknown_columns(runs[i].table, out, cmd_ok, dict);
		free(out);
		free(err);
	}
	cr_assert_eq(bad, 0, "%d command columns without an entry", bad);
	free(dict);
}

/* The tables the calibration runner writes on a GPU (gemm.rR.csv, ...):
 * their headers are the library's (cvc_cal_result_header), so each column
 * is checked here without a GPU. */
Test(columns, every_calibration_result_column_has_an_entry)
{
	char *dict = commands_dictionary(), table[64], header[512];
	int bad = 0, tables = 0;

	for (int k = 0; k < CVC_CAL_NKIND; k++) {
		const char *h = cvc_cal_result_header(k);
		char *nl;

		if (!h)
			continue;
		snprintf(table, sizeof table, "calibrate %s.rR.csv", cvc_cal_kind_name(k));
		snprintf(header, sizeof header, "%s", h);
		nl = strchr(header, '\n');
		cr_assert(nl && nl[1] == '\0', "%s: one header line", table);
		*nl = '\0';
		bad += unknown_columns(table, header, cmd_ok, dict);
		tables++;
	}
	cr_assert_eq(tables, 3, "%d result tables", tables);
	cr_assert_eq(bad, 0, "%d calibration result columns without an entry", bad);
	free(dict);
}

/*
 * Every scenario field and every other spelling the scenario files accept
 * is in docs/SCENARIOS.md, between backticks: 27 accepted names (seq_length,
 * zero_stage, nvl_domain, ...) were written nowhere a user could find them.
 */
Test(columns, every_scenario_field_and_alias_is_documented)
{
	char *doc = tu_read(CVC_SOURCE_DIR "/docs/SCENARIOS.md", NULL);
	const char *alias, *key;
	char want[96];
	int missing = 0;

	cr_assert_not_null(doc);
	for (size_t i = 0; i < proj_nfields; i++) {
		snprintf(want, sizeof want, "`%s`", proj_fields[i].key);
		if (!strstr(doc, want)) {
			cr_log_error("scenario field '%s' is not in docs/SCENARIOS.md", proj_fields[i].key);
			missing++;
		}
	}
	for (size_t i = 0; proj_field_alias(i, &alias, &key) == 0; i++) {
		snprintf(want, sizeof want, "`%s`", alias);
		if (!strstr(doc, want)) {
			cr_log_error("'%s' (another name of '%s') is not in docs/SCENARIOS.md", alias,
				     key);
			missing++;
		}
	}
	cr_expect_eq(missing, 0, "%d names undocumented (the log names them)", missing);
	free(doc);
}
