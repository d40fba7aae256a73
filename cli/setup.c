/*
 * setup.c - what commands do once their options are parsed: open their
 * database (closed by the dispatcher, cvc.c) and the projector's context.
 */
#include <assert.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "cvc/cvc_db.h"
#include "cvc/cvc_out.h"
#include "cvc/cvc_project.h"

int cli_db_open(struct cvc_ctx *ctx, const char *path, int flags, cvc_db **db)
{
	cvc_status st;

	assert((ctx->flags & CMD_DB) && !ctx->db);
	if (cvc_out_input(path))
		return cli_fail(CVC_ERR_NOMEM, "out of memory");
	st = cvc_db_open(path, flags, db);
	ctx->db = *db;
	/* recorded again once it exists: a database this command created */
	if (!st && cvc_out_input(path))
		return cli_fail(CVC_ERR_NOMEM, "out of memory");
	if (!st)
		return 0;
	/* No handle only when it could not be allocated. */
	cli_error("%s", cvc_db_errmsg(*db));
	if (st == CVC_ERR_DB && (ctx->flags & CMD_DB_BAD_IS_USAGE))
		return 2;
	return cvc_exit_code(st);
}

int cli_db_read_flags(const char *path)
{
	char dir[4096];
	const char *slash = strrchr(path, '/');

	if ((size_t)snprintf(dir, sizeof dir, "%.*s", slash ? (int)(slash - path + 1) : 1,
			     slash ? path : ".") >= sizeof dir)
		return CVC_DB_READONLY;
	return access(path, W_OK) == 0 && access(dir, W_OK) == 0 ? 0 : CVC_DB_READONLY;
}

int cli_proj_open(struct cvc_ctx *ctx, const char *db_path, int force, cvc_proj_ctx **out)
{
	cvc_db *db = NULL;
	cvc_status st;
	int rc;

	*out = NULL;
	if (db_path && (rc = cli_db_open(ctx, db_path, CVC_DB_READONLY, &db)))
		return rc;
	st = cvc_proj_ctx_new(db, out);
	if (st)
		return cli_fail(st, "%s", *out ? cvc_proj_ctx_errmsg(*out) : cvc_strerror(st));
	cvc_proj_ctx_set_force(*out, force);
	return 0;
}
