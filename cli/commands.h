/*
 * commands.h - the subcommands, one cli/cmd_<verb>.c each, in the order
 * `cvc --help` lists them: X(verb, flags, summary), flags from enum
 * cvc_cmd_flags.  cvc.c builds its command table from this list and each
 * entry point is declared from it, so a new command is one line here.
 */
#ifndef CVC_COMMANDS_H
#define CVC_COMMANDS_H

#include "cli.h"

#define CVC_COMMANDS(X) \
	X(import, CMD_DB | CMD_PROGRESS, \
	  "import traces (Kineto JSON, Nsight Systems SQLite, nccl-tests logs, shard dbs)") \
	X(analyze, CMD_DB | CMD_DB_BAD_IS_USAGE, \
	  "compute vs communication, hidden vs exposed, per rank or step") \
	X(classify, CMD_DB | CMD_DB_BAD_IS_USAGE, \
	  "label kernels with operator classes; --unknown lists the unmatched") \
	X(fit, 0, "fit operator performance models from tables, nccl-tests logs or the db") \
	X(models, CMD_DB | CMD_DB_BAD_IS_USAGE, "list or show fitted models") \
	X(predict, CMD_DB | CMD_DB_BAD_IS_USAGE, \
	  "predict gemm or collective times from fitted models or spec sheets") \
	X(profile, 0, "run a CUDA program under CUPTI: one database per process (-- CMD ARGS)") \
	X(report, CMD_DB, "HTML report (trace and projection) with CSV/JSON of its tables") \
	X(export, CMD_DB, "export the timeline as Chrome trace JSON (--perfetto FILE)") \
	X(project, CMD_DB | CMD_PROGRESS, \
	  "project training steps of scenario files (YAML) to CSV/JSON") \
	X(validate, CMD_DB, "compare projections with published measurements (CSV)") \
	X(calibrate, 0, "profile only the operators a study needs (--plan: what and how long)") \
	X(version, 0, "print the version")

#define CVC_DECLARE_CMD(verb, flags, summary) \
	int cmd_##verb(int argc, char **argv, struct cvc_ctx *ctx);
CVC_COMMANDS(CVC_DECLARE_CMD)
#undef CVC_DECLARE_CMD

#endif
