/*
 * cmd_report.c - `cvc report`: the self-contained HTML report (trace and
 * projection sections) and, with --csv-dir, CSV and JSON of its tables.
 */
#include <errno.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "commands.h"
#include "cvc/cvc_db.h"
#include "cvc/cvc_report.h"

static const char synopsis[] =
	"[--db PATH | --no-db] [--run NAME] [--projection FILE] [--scenario FILE] -o report.html "
	"[--csv-dir DIR] [--title T]";

int cmd_report(int argc, char **argv, struct cvc_ctx *ctx)
{
	const char *db_path = NULL, *out = NULL;
	cvc_rep_opts ro = {0};
	int no_db = 0, db_default = 0; /* db_default: nobody named the database */
	const struct cli_opt opts[] = {
		{"db", 0, CLI_PATH, &db_path, "PATH", "trace database (default cvc.db when it exists)", NULL},
		{"no-db", 0, CLI_FLAG, &no_db, NULL, "projection only: do not read cvc.db", NULL},
		{"run", 0, CLI_STR, &ro.run, "NAME", "trace section for this run only (default: every run)", NULL},
		{"projection", 'p', CLI_PATH, &ro.projection, "FILE", "output of `cvc project --csv/--json`", NULL},
		{"scenario", 0, CLI_PATH, &ro.scenario, "FILE", "scenario file to echo under the assumptions", NULL},
		{"output", 'o', CLI_OUT, &out, "FILE", "HTML file to write", NULL},
		{"csv-dir", 0, CLI_OUT, &ro.csv_dir, "DIR", "also write <table>.csv and <table>.json here", NULL},
		{"title", 0, CLI_STR, &ro.title, "T", "page title (default \"cvc report\")", NULL},
		{0},
	};
	cvc_db *db = NULL;
	struct stat sb;
	char err[1024] = "";
	int npos, rc;
	cvc_status st;

	rc = cli_parse(ctx->cmd, synopsis, opts, argc, argv, &npos, NULL);
	if (rc)
		return rc < 0 ? 0 : rc;
	if (npos)
		return cli_error("report: unexpected argument '%s': the projection is given with "
				 "--projection FILE, the database with --db PATH", argv[1]);
	if (!out) {
		cli_error("report: -o FILE is needed: the HTML page to write");
		return cli_usage_error(ctx->cmd, synopsis, opts);
	}
	if (no_db && db_path)
		return cli_error("report: --db and --no-db exclude each other");
	/* The default database is optional for a projection-only report. */
	if (!db_path && !no_db && (!ro.projection || stat(CVC_DEFAULT_DB, &sb) == 0)) {
		db_path = CVC_DEFAULT_DB;
		db_default = 1;
	}
	if (db_path) {
		/* the default is used when it exists: say what is missing, not
		   that a file nobody named cannot be opened */
		if (stat(db_path, &sb) != 0 && db_default &&
		    !ro.projection)
			return cli_error("report: nothing to report: no --projection, and no "
					 "database ('%s' does not exist here; --db PATH names one)",
					 CVC_DEFAULT_DB);
		if (stat(db_path, &sb) != 0)
			return cli_error("'%s': cannot open: %s", db_path, strerror(errno));
		if ((rc = cli_db_open(ctx, db_path, cli_db_read_flags(db_path), &db)))
			return rc;
	}
	if (!db && !ro.projection)
		return cli_error("report: nothing to report: give a database (--db) or a projection (--projection)");
	st = cvc_rep_write(db, &ro, out, err, sizeof err);
	if (st)
		return cli_fail(st, "%s", err);
	printf("wrote %s\n", out);
	if (ro.csv_dir)
		printf("wrote tables to %s/\n", ro.csv_dir);
	return 0;
}
