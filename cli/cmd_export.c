/*
 * cmd_export.c - `cvc export --perfetto FILE`: the database's timeline as
 * Chrome trace JSON for Perfetto and chrome://tracing.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "commands.h"
#include "cvc/cvc_db.h"
#include "cvc/cvc_out.h"
#include "cvc/cvc_report.h"

static const char synopsis[] = "--perfetto FILE [--db PATH] [--run NAME]";

int cmd_export(int argc, char **argv, struct cvc_ctx *ctx)
{
	const char *db_path = CVC_DEFAULT_DB, *run = NULL, *path = NULL;
	const struct cli_opt opts[] = {
		{"perfetto", 0, CLI_OUT, &path, "FILE", "Chrome trace JSON to write ('-' = stdout)", NULL},
		{"db", 0, CLI_PATH, &db_path, "PATH", "trace database (default cvc.db)", NULL},
		{"run", 0, CLI_STR, &run, "NAME", "the run to export (needed when the database holds several)", NULL},
		{0},
	};
	cvc_rep_perfetto_stats stats = {0};
	char err[1024];
	cvc_db *db = NULL;
	cvc_out *out = NULL;
	int npos, rc, to_stdout;
	cvc_status st;

	rc = cli_parse(ctx->cmd, synopsis, opts, argc, argv, &npos, NULL);
	if (rc)
		return rc < 0 ? 0 : rc;
	if (npos || !path)
		return cli_usage_error(ctx->cmd, synopsis, opts);
	if (access(db_path, F_OK) != 0)
		return cli_error("'%s': cannot open: %s", db_path, strerror(errno));
	if ((rc = cli_db_open(ctx, db_path, CVC_DB_READONLY, &db)))
		return rc;
	if (!run) {
		char names[400];
		int nruns = 0;

		if ((st = cvc_db_run_names(db, names, sizeof names, &nruns)))
			return cli_fail(st, "%s", cvc_db_errmsg(db));
		/* runs keep their own clocks (imports years apart): one timeline of
		   all of them is no trace of anything */
		if (nruns > 1)
			return cli_error("export: '%s' holds %d runs, each on its own clock: name one "
					 "with --run (%s)", db_path, nruns, names);
	}
	to_stdout = strcmp(path, "-") == 0;
	/* written aside and renamed: a failed export leaves no half file */
	if ((st = cvc_out_open(path, &out, err, sizeof err)))
		return cli_fail(st, "%s", err);
	st = cvc_rep_perfetto(db, run, cvc_out_file(out), &stats);
	if (st) {
		cvc_out_abort(out);
		return cli_fail(st, "%s", cvc_db_errmsg(db));
	}
	if ((st = cvc_out_commit(out, err, sizeof err)))
		rc = cli_fail(st, "%s", err);
	if (rc)
		return rc;
	fprintf(to_stdout ? stderr : stdout,
		"wrote %lld events (%lld processes, %lld threads) to %s\n",
		(long long)stats.events, (long long)stats.processes, (long long)stats.threads,
		to_stdout ? "stdout" : path);
	return 0;
}
