/*
 * cmd_validate.c - `cvc validate [--db PATH] FILE.csv`: projects every
 * measured run of a published table and prints the table back with
 * `predicted` and `error_pct` columns (stdout), and the mean absolute
 * percentage error on stderr.
 */
#include <stdio.h>

#include "cli.h"
#include "commands.h"
#include "cvc/cvc_db.h"
#include "cvc/cvc_project.h"

int cmd_validate(int argc, char **argv, struct cvc_ctx *cctx)
{
	const char *db_path = NULL;
	int npos = 0, rows = 0, origins = 0, ret = 1, r;
	const struct cli_opt opts[] = {
		{"db", 0, CLI_STR, &db_path, "PATH", "price with the fitted models of this database", NULL},
		{"origins", 0, CLI_FLAG, &origins, NULL, "print where the A100 model figures come from", NULL},
		{0},
	};
	cvc_proj_ctx *ctx = NULL;
	cvc_db *db = NULL;
	cvc_status rc;
	double mape = 0;
	char err[512] = "";

	(void)cctx;
	r = cli_parse("validate", "[--db PATH] FILE.csv", opts, argc, argv, &npos, NULL);
	if (r)
		return r < 0 ? 0 : r;
	if (npos != 1)
		return cli_error("validate: expected one measurements CSV file");
	if (db_path) {
		rc = cvc_db_open(db_path, CVC_DB_READONLY, &db);
		if (rc) {
			ret = db ? cli_fail(rc, "%s", cvc_db_errmsg(db))
				 : cli_fail(rc, "'%s': %s", db_path, cvc_strerror(rc));
			goto out;
		}
	}
	rc = cvc_proj_ctx_new(db, &ctx);
	if (rc) {
		ret = cli_fail(rc, "%s", ctx ? cvc_proj_ctx_errmsg(ctx) : cvc_strerror(rc));
		goto out;
	}
	rc = cvc_proj_validate(argv[1], ctx, stdout, &mape, &rows, err, sizeof err);
	if (rc) {
		ret = cli_fail(rc, "%s", err[0] ? err : cvc_strerror(rc));
		goto out;
	}
	if (origins) {
		char buf[1024];

		if (cvc_proj_ctx_origin(ctx, "A100-SXM-80GB", 1, buf, sizeof buf) == CVC_OK)
			fprintf(stderr, "models: %s\n", buf);
	}
	fprintf(stderr, "validate: '%s': %d rows, mean absolute error %.2f%%\n", argv[1], rows,
		mape);
	ret = 0;
out:
	cvc_proj_ctx_free(ctx);
	cvc_db_close(db);
	return ret;
}
