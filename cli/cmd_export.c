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
#include "cvc/cvc_report.h"

static const char synopsis[] = "--perfetto FILE [--db PATH] [--run NAME]";

int cmd_export(int argc, char **argv, struct cvc_ctx *ctx)
{
	const char *db_path = CVC_DEFAULT_DB, *run = NULL, *path = NULL;
	const struct cli_opt opts[] = {
		{"perfetto", 0, CLI_STR, &path, "FILE", "Chrome trace JSON to write ('-' = stdout)", NULL},
		{"db", 0, CLI_STR, &db_path, "PATH", "trace database (default cvc.db)", NULL},
		{"run", 0, CLI_STR, &run, "NAME", "export this run only (default: every run)", NULL},
		{0},
	};
	cvc_rep_perfetto_stats stats = {0};
	char tmp[4200];
	cvc_db *db = NULL;
	FILE *f = NULL;
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
	to_stdout = strcmp(path, "-") == 0;
	if (to_stdout) {
		f = stdout;
	} else {
		/* Written aside and renamed: a failed export leaves no half file. */
		if ((size_t)snprintf(tmp, sizeof tmp, "%s.tmp", path) >= sizeof tmp)
			return cli_error("'%s': path too long", path);
		f = fopen(tmp, "w");
		if (!f)
			return cli_fail(CVC_ERR_IO, "'%s': cannot write: %s", tmp, strerror(errno));
	}
	st = cvc_rep_perfetto(db, run, f, &stats);
	if (st)
		rc = cli_fail(st, "%s", cvc_db_errmsg(db));
	if (!to_stdout) {
		if (fclose(f) != 0 && !st)
			rc = cli_fail(st = CVC_ERR_IO, "'%s': write failed", tmp);
		if (st || rename(tmp, path) != 0) {
			if (!st)
				rc = cli_fail(CVC_ERR_IO, "'%s': cannot rename: %s", path, strerror(errno));
			unlink(tmp);
		}
	}
	if (rc)
		return rc;
	fprintf(to_stdout ? stderr : stdout,
		"wrote %lld events (%lld processes, %lld threads) to %s\n",
		(long long)stats.events, (long long)stats.processes, (long long)stats.threads,
		to_stdout ? "stdout" : path);
	return 0;
}
