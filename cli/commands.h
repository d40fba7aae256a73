/* commands.h - every subcommand's entry point; one cli/cmd_<verb>.c each. */
#ifndef CVC_COMMANDS_H
#define CVC_COMMANDS_H

#include "cli.h"

int cmd_import(int argc, char **argv, struct cvc_ctx *ctx);
int cmd_analyze(int argc, char **argv, struct cvc_ctx *ctx);
int cmd_classify(int argc, char **argv, struct cvc_ctx *ctx);
int cmd_version(int argc, char **argv, struct cvc_ctx *ctx);
int cmd_profile(int argc, char **argv, struct cvc_ctx *ctx);
/* Later commands declare themselves here, one line each. */
int cmd_fit(int argc, char **argv, struct cvc_ctx *ctx);
int cmd_models(int argc, char **argv, struct cvc_ctx *ctx);
int cmd_predict(int argc, char **argv, struct cvc_ctx *ctx);
int cmd_report(int argc, char **argv, struct cvc_ctx *ctx);
int cmd_export(int argc, char **argv, struct cvc_ctx *ctx);
int cmd_project(int argc, char **argv, struct cvc_ctx *ctx);
int cmd_validate(int argc, char **argv, struct cvc_ctx *ctx);
int cmd_calibrate(int argc, char **argv, struct cvc_ctx *ctx);
#endif
