/*
 * cvc.c - the cvc tool: a table of subcommands, one file each
 * (cli/cmd_<verb>.c), all with the same signature (git's git.c).
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "commands.h"

static const struct cvc_cmd commands[] = {
	{"import", cmd_import, "import traces (Kineto JSON, Nsight Systems SQLite, nccl-tests logs, shard dbs)"},
	{"analyze", cmd_analyze, "compute vs communication, hidden vs exposed, per rank or step"},
	{"classify", cmd_classify, "label kernels with operator classes; --unknown lists the unmatched"},
	{"fit", cmd_fit, "fit operator performance models from tables, nccl-tests logs or the db"},
	{"models", cmd_models, "list or show fitted models"},
	{"predict", cmd_predict, "predict gemm or collective times from fitted models or spec sheets"},
	{"profile", cmd_profile, "run a CUDA program under CUPTI: one database per process (-- CMD ARGS)"},
	{"report", cmd_report, "HTML report (trace and projection) with CSV/JSON of its tables"},
	{"export", cmd_export, "export the timeline as Chrome trace JSON (--perfetto FILE)"},
	{"project", cmd_project, "project training steps of scenario files (YAML) to CSV/JSON"},
	{"validate", cmd_validate, "compare projections with published measurements (CSV)"},
	{"calibrate", cmd_calibrate, "profile only the operators a study needs (--plan: what and how long)"},
	{"version", cmd_version, "print the version"},
};

int cmd_version(int argc, char **argv, struct cvc_ctx *ctx)
{
	(void)argc;
	(void)argv;
	(void)ctx;
	printf("cvc %s\n", CVC_VERSION);
	return 0;
}

static void usage(FILE *f)
{
	fputs("usage: cvc <command> [options] [args]\n\ncommands:\n", f);
	for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
		fprintf(f, "  %-10s %s\n", commands[i].name, commands[i].summary);
	fputs("\n'cvc <command> --help' describes each command.\n", f);
}

int main(int argc, char **argv)
{
	struct cvc_ctx ctx = {0};

	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
	    strcmp(argv[1], "help") == 0) {
		usage(stdout);
		return 0;
	}
	if (strcmp(argv[1], "--version") == 0)
		return cmd_version(0, NULL, &ctx);
	for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++) {
		if (strcmp(argv[1], commands[i].name) == 0) {
			ctx.cmd = commands[i].name;
			ctx.progress = isatty(STDERR_FILENO);
			return commands[i].fn(argc - 1, argv + 1, &ctx);
		}
	}
	fprintf(stderr, "error: '%s' is not a cvc command (see 'cvc --help')\n", argv[1]);
	return 2;
}
