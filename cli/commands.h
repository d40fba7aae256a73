/*
 * commands.h - the subcommands, one cli/cmd_<verb>.c each, in the order
 * `cvc --help` lists them: X(verb, flags, summary, examples), flags from
 * enum cvc_cmd_flags, examples one command line a line (`cvc VERB --help`
 * ends with them: a reader copies an example before reading a flag list).
 * cvc.c builds its command table from this list and each entry point is
 * declared from it, so a new command is one line here.
 */
#ifndef CVC_COMMANDS_H
#define CVC_COMMANDS_H

#include "cli.h"

#define CVC_COMMANDS(X) \
	X(import, CMD_DB | CMD_PROGRESS, \
	  "import traces (Kineto JSON, Nsight Systems SQLite, nccl-tests logs, shard dbs)", \
	  "cvc import --db job.db rank*.json.gz\n" \
	  "cvc import --db job.db -j 4 traces/") \
	X(analyze, CMD_DB | CMD_DB_BAD_IS_USAGE, \
	  "compute vs communication, hidden vs exposed, per rank or step", \
	  "cvc analyze --db job.db\n" \
	  "cvc analyze --db job.db --by step --format csv") \
	X(classify, CMD_DB | CMD_DB_BAD_IS_USAGE, \
	  "label kernels with operator classes; --unknown lists the unmatched", \
	  "cvc classify --db job.db --unknown") \
	X(fit, 0, "fit operator performance models from tables, nccl-tests logs or the db", \
	  "cvc fit --db m.db all_reduce_perf.log\n" \
	  "cvc fit --db job.db") \
	X(models, CMD_DB | CMD_DB_BAD_IS_USAGE, "list or show fitted models", \
	  "cvc models --db m.db list") \
	X(predict, CMD_DB | CMD_DB_BAD_IS_USAGE, \
	  "predict gemm, attention, memory-bound or collective times from fitted models or " \
	  "spec sheets", \
	  "cvc predict gemm --gpu H100-SXM --m 4096 --n 4096 --k 4096 --dtype bf16\n" \
	  "cvc predict attention --gpu H100-SXM --heads 32 --kv-heads 8 --head-dim 128 --seq 8192 " \
	  "--causal\n" \
	  "cvc predict membound --gpu H100-SXM --class norm --bytes 256MiB\n" \
	  "cvc predict allreduce --bytes 64MiB --gpus 16 --system dgx-h100") \
	X(profile, 0, "run a CUDA program under CUPTI: one database per process (-- CMD ARGS)", \
	  "cvc profile -o prof -- torchrun --nproc-per-node 8 train.py") \
	X(report, CMD_DB, "HTML report (trace and projection) with CSV/JSON of its tables", \
	  "cvc report --db job.db --projection out.csv -o report.html --csv-dir tables") \
	X(export, CMD_DB, "export the timeline as Chrome trace JSON (--perfetto FILE)", \
	  "cvc export --db job.db --perfetto trace.json") \
	X(project, CMD_DB | CMD_PROGRESS, \
	  "project training steps of scenario files (YAML) to CSV/JSON", \
	  "cvc project --top 5 --csv best.csv      # the 5 best layouts per model, hardware, GPU count\n" \
	  "cvc project study.yaml --db m.db --top 1 --by mfu --per model,gpus\n" \
	  "cvc project --top 20 --by cost_usd --asc --per none") \
	X(validate, CMD_DB, "compare projections with published measurements (CSV)", \
	  "cvc validate --by gpu --flops megatron runs.csv > scored.csv") \
	X(calibrate, 0, "profile only the operators a study needs (--plan: what and how long)", \
	  "cvc calibrate --plan study.yaml\n" \
	  "cvc calibrate study.yaml --db cvc.db") \
	X(version, 0, "print the version", "cvc version")

#define CVC_DECLARE_CMD(verb, flags, summary, examples) \
	int cmd_##verb(int argc, char **argv, struct cvc_ctx *ctx);
CVC_COMMANDS(CVC_DECLARE_CMD)
#undef CVC_DECLARE_CMD

#endif
