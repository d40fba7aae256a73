/*
 * cvc.c - the cvc tool: a table of subcommands, one file each
 * (cli/cmd_<verb>.c), all with the same signature, and flags for the
 * set-up the dispatcher does for them (git's git.c).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "commands.h"
#include "cvc/cvc_db.h"
#include "cvc/cvc_out.h"

#define CVC_CMD_ENTRY(verb, flags, summary, examples) \
	{#verb, cmd_##verb, flags, summary, examples},
static const struct cvc_cmd commands[] = {CVC_COMMANDS(CVC_CMD_ENTRY)};
#undef CVC_CMD_ENTRY

const char *cli_cmd_examples(const char *cmd)
{
	size_t n = strcspn(cmd, " ");

	for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
		if (strlen(commands[i].name) == n && strncmp(commands[i].name, cmd, n) == 0)
			return commands[i].examples;
	return NULL;
}

int cmd_version(int argc, char **argv, struct cvc_ctx *ctx)
{
	static const struct cli_opt none[] = {{0}};
	int npos = 0, r;

	(void)ctx;
	/* `cvc --version` passes no arguments */
	if (argc > 0 && (r = cli_parse("version", "", none, argc, argv, &npos, NULL)))
		return r < 0 ? 0 : r;
	if (npos > 0)
		return cli_error("version: takes no arguments");
	printf("cvc %s\n", CVC_VERSION);
	return 0;
}

static void usage(FILE *f)
{
	fputs("usage: cvc <command> [options] [args]\n\ncommands:\n", f);
	for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
		fprintf(f, "  %-10s %s\n", commands[i].name, commands[i].summary);
	fputs("\n'cvc <command> --help' or 'cvc help <command>' describes each command;\n"
	      "'cvc help columns' what every column cvc writes means.\n", f);
}

/*
 * Data goes to stdout; a command whose data could not be written has
 * failed, whatever it did besides (issue 36 item 14: `cvc validate
 * >/dev/full` exited 0).  Returns rc, or 1 after saying why.  A command
 * that failed and said why in an error line (project names its own write
 * error) is not followed by a second line repeating it.
 */
static int check_stdout(int rc)
{
	int bad;

	errno = 0;
	bad = fflush(stdout) != 0;
	bad |= ferror(stdout) != 0;
	if (!bad || (rc && cli_errors_said()))
		return rc;
	if (errno)
		cli_say("error: cannot write to standard output: %s\n", strerror(errno));
	else
		fputs("error: cannot write to standard output\n", stderr);
	return rc ? rc : 1;
}

/* Runs the command argv[0] with its arguments; 2 for a name that is none. */
static int dispatch(int argc, char **argv, struct cvc_ctx *ctx)
{
	for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++) {
		if (strcmp(argv[0], commands[i].name) == 0) {
			int rc;

			ctx->cmd = commands[i].name;
			ctx->flags = commands[i].flags;
			if (ctx->flags & CMD_PROGRESS)
				ctx->progress = isatty(STDERR_FILENO);
			rc = commands[i].fn(argc, argv, ctx);
			/* CMD_DB: the database the command opened (cli_db_open). */
			cvc_db_close(ctx->db);
			ctx->db = NULL;
			return check_stdout(rc);
		}
	}
	cli_say("error: '%s' is not a cvc command (see 'cvc --help')\n", argv[0]);
	return 2;
}

int main(int argc, char **argv)
{
	struct cvc_ctx ctx = {0};

	/* an interrupted command leaves no temporary file, no half output and
	 * no database it created and did not fill (cvc_out.h) */
	cvc_tmp_on_signals();

	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	/* what every column cvc writes means (docs/COLUMNS.md) */
	if (strcmp(argv[1], "help") == 0 && argc >= 3 && strcmp(argv[2], "columns") == 0)
		return check_stdout(cli_help_columns(argc - 2, argv + 2));
	/* `cvc help CMD` is `cvc CMD --help`, as git's is */
	if (strcmp(argv[1], "help") == 0 && argc == 3) {
		char help[] = "--help", *args[3] = {argv[2], help, NULL};

		return dispatch(2, args, &ctx);
	}
	if (strcmp(argv[1], "help") == 0 && argc > 3) {
		cli_say("error: help: expected one command, got %d words\n", argc - 2);
		return 2;
	}
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
	    strcmp(argv[1], "help") == 0) {
		usage(stdout);
		return check_stdout(0);
	}
	if (strcmp(argv[1], "--version") == 0)
		return check_stdout(cmd_version(0, NULL, &ctx));
	return dispatch(argc - 1, argv + 1, &ctx);
}
