/*
 * predict.h - what the files of `cvc predict` share (cli/ only): the
 * shapes file (predict_shapes.c), the operators beside GEMMs and
 * collectives (predict_ops.c), and the one-row table every prediction
 * prints with --format (predict_ops.c).  Each function prints its own
 * messages and returns an exit code: 0 ok, 1 failure, 2 bad input.
 */
#ifndef CVC_CLI_PREDICT_H
#define CVC_CLI_PREDICT_H

#include <stdint.h>

#include "cvc/cvc_model.h"

/* A fit prices only the FLOP range it measured (docs/MODELS.md "Fitting and
 * quality"); the default answers outside it, which the model line says
 * instead of naming the fit alone */
#define CLI_PREDICT_OUTSIDE_NOTE \
	"; this shape lies outside the sizes it measured: priced at the default efficiency"

/*
 * v at the 6 significant digits every CSV and JSON number of `cvc project`
 * and `cvc validate` has (cvc_fmt_plain): a one-row table printed as CSV
 * or JSON matches them, where the table's exact doubles printed 17 digits.
 * Integers keep all their digits; NaN and the infinities are returned as
 * they are.
 */
double cli_predict_round(double v);

/*
 * One prediction as a one-row table in format (table, csv or json): n
 * columns named cols, column i the text strs[i] when strs[i] is not NULL,
 * else the number nums[i] (cli_predict_round; NaN: empty).
 */
int cli_predict_row(const char *const *cols, int n, const char *const *strs, const double *nums,
		    const char *format);

/*
 * The uncertainty line of a sentence: pr's 90% interval and its relative
 * standard error on log time (cvc_model_interval90, as `cvc project`'s
 * intervals), on stdout.
 */
void cli_predict_say_interval(const cvc_model_price *pr);

/*
 * The GEMM shapes of the file at path (a header with columns m, n, k and
 * optionally b; other columns pass through) priced in dt on ms, with a
 * time_us column added, printed as format (csv: each line as read, its
 * columns passed through to the byte; table; json).  The whole file is
 * read, checked and priced before anything is printed, the `model:` line on
 * stderr included, so that a bad row leaves no half-written output.
 */
int cli_predict_shapes(const cvc_modelset *ms, const char *path, cvc_hw_dtype dt,
		       const char *format);

/*
 * Fused attention a on ms (spec: its GPU) priced by
 * cvc_model_attention_price(), as the projector prices it: a sentence and
 * its `model:` line, or with format a one-row table.
 */
int cli_predict_attention(const cvc_modelset *ms, const cvc_hw_spec *spec,
			  const cvc_model_attn *a, const char *format);

/*
 * A memory-bound operator of class cls moving bytes (read + written) on ms
 * priced by cvc_model_membound_price(), as the projector prices it: a
 * sentence and its `model:` line, or with format a one-row table.
 */
int cli_predict_membound(const cvc_modelset *ms, const cvc_hw_spec *spec, cvc_model_mem cls,
			 int64_t bytes, const char *format);

#endif
