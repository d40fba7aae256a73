/*
 * validate.c - projections against published end-to-end measurements: one
 * CSV row per measured run (Megatron-style GPT: heads, hidden, layers, tp,
 * pp, gpus, global_batch, ...), a measured tflops_per_gpu or iter_s, and
 * the projection's value and signed error next to it.
 *
 * The projected runs are configured as the measured ones were: Megatron-LM
 * 2021 (fp16, unfused attention, full activation recomputation by default,
 * data-parallel all-reduce after the pipeline flush, no TP overlap), since
 * that is what the published tables measured.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proj_internal.h"

#define MAX_LINE 4096
#define MAX_COLS 64

double cvc_proj_megatron_flops(double batch, double seq, double layers, double hidden,
			       double vocab)
{
	return 96.0 * batch * seq * layers * hidden * hidden *
	       (1 + seq / (6 * hidden) + vocab / (16 * layers * hidden));
}

enum col {
	C_HEADS, C_HIDDEN, C_LAYERS, C_TP, C_PP, C_GPUS, C_GB, C_SEQ, C_VOCAB, C_MB,
	C_RECOMP, C_SP, C_GPU, C_TFLOPS, C_ITER, C_NCOL
};

static const char *const col_names[C_NCOL] = {
	"heads", "hidden", "layers", "tp", "pp", "gpus", "global_batch", "seq", "vocab",
	"micro_batch", "recompute", "seq_parallel", "gpu", "tflops_per_gpu", "iter_s"
};

static char *trim(char *s)
{
	char *e;

	while (*s == ' ' || *s == '\t')
		s++;
	e = s + strlen(s);
	while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r' || e[-1] == '\n'))
		*--e = 0;
	return s;
}

/* Splits line in place at commas; returns the cell count or -1. */
static int split(char *line, char **cells, int max)
{
	int n = 0;
	char *p = line;

	for (;;) {
		char *comma = strchr(p, ',');

		if (n >= max)
			return -1;
		if (comma)
			*comma = 0;
		cells[n++] = trim(p);
		if (!comma)
			return n;
		p = comma + 1;
	}
}

static int cell_num(const char *s, double *out)
{
	char *end = NULL;

	errno = 0;
	*out = strtod(s, &end);
	return errno || end == s || *end || !isfinite(*out) ? -1 : 0;
}

cvc_status cvc_proj_validate(const char *path, cvc_proj_ctx *ctx, FILE *out, double *mape_pct,
			     int *rows, char *err, size_t errlen)
{
	FILE *f = fopen(path, "r");
	char *line = NULL, *copy = NULL;
	size_t cap = 0;
	ssize_t len;
	int idx[C_NCOL], have_header = 0, lineno = 0, n = 0, ncols = 0;
	double sum_abs = 0;
	cvc_status rc = CVC_OK;

	*rows = 0;
	*mape_pct = NAN;
	if (!f) {
		snprintf(err, errlen, "'%s': cannot open: %s", path, strerror(errno));
		return CVC_ERR_IO;
	}
	copy = malloc(MAX_LINE + 1);
	if (!copy) {
		rc = CVC_ERR_NOMEM;
		goto out;
	}
	while ((len = getline(&line, &cap, f)) >= 0) {
		char *cells[MAX_COLS], *s;
		int nc;

		lineno++;
		if ((size_t)len > MAX_LINE) {
			snprintf(err, errlen, "'%s': line %d: expected a line under %d bytes",
				 path, lineno, MAX_LINE);
			rc = CVC_ERR_FORMAT;
			goto out;
		}
		s = trim(line);
		if (!*s || *s == '#')
			continue;
		if (strchr(s, '"')) {
			snprintf(err, errlen, "'%s': line %d: expected unquoted cells", path,
				 lineno);
			rc = CVC_ERR_FORMAT;
			goto out;
		}
		snprintf(copy, MAX_LINE + 1, "%s", s);
		nc = split(s, cells, MAX_COLS);
		if (nc < 0) {
			snprintf(err, errlen, "'%s': line %d: expected at most %d columns", path,
				 lineno, MAX_COLS);
			rc = CVC_ERR_FORMAT;
			goto out;
		}
		if (!have_header) {
			for (int c = 0; c < C_NCOL; c++) {
				idx[c] = -1;
				for (int j = 0; j < nc; j++)
					if (strcmp(cells[j], col_names[c]) == 0)
						idx[c] = j;
			}
			for (int c = 0; c <= C_GB; c++)
				if (idx[c] < 0) {
					snprintf(err, errlen,
						 "'%s': line %d: expected a header with column '%s'",
						 path, lineno, col_names[c]);
					rc = CVC_ERR_FORMAT;
					goto out;
				}
			if (idx[C_TFLOPS] < 0 && idx[C_ITER] < 0) {
				snprintf(err, errlen,
					 "'%s': line %d: expected a tflops_per_gpu or iter_s column",
					 path, lineno);
				rc = CVC_ERR_FORMAT;
				goto out;
			}
			ncols = nc;
			have_header = 1;
			fprintf(out, "%s,predicted,error_pct\n", copy);
			continue;
		}
		if (nc != ncols) {
			snprintf(err, errlen, "'%s': line %d: expected %d columns, got %d", path,
				 lineno, ncols, nc);
			rc = CVC_ERR_FORMAT;
			goto out;
		}
		{
			cvc_proj_scenario sc;
			cvc_proj_result r;
			double v[C_NCOL], measured, predicted;
			int use_tflops;

			cvc_proj_scenario_default(&sc);
			v[C_SEQ] = 2048;
			v[C_VOCAB] = 51200;
			v[C_MB] = 1;
			v[C_SP] = 0;
			for (int c = 0; c < C_NCOL; c++) {
				const char *cell;

				if (c == C_RECOMP || c == C_GPU || idx[c] < 0)
					continue;
				cell = cells[idx[c]];
				if (!*cell && c >= C_SEQ) {
					v[c] = NAN;
					if (c < C_TFLOPS) /* empty optional: its default */
						v[c] = c == C_SEQ ? 2048 : c == C_VOCAB ? 51200
						     : c == C_MB ? 1 : 0;
					continue;
				}
				if (cell_num(cell, &v[c]) || v[c] < 0) {
					snprintf(err, errlen,
						 "'%s': line %d: expected a number in column '%s'",
						 path, lineno, col_names[c]);
					rc = CVC_ERR_FORMAT;
					goto out;
				}
			}
			if (idx[C_TFLOPS] < 0)
				v[C_TFLOPS] = NAN;
			if (idx[C_ITER] < 0)
				v[C_ITER] = NAN;
			use_tflops = !isnan(v[C_TFLOPS]) && v[C_TFLOPS] > 0;
			if (!use_tflops && !(v[C_ITER] > 0)) {
				snprintf(err, errlen,
					 "'%s': line %d: expected a measured tflops_per_gpu or iter_s",
					 path, lineno);
				rc = CVC_ERR_FORMAT;
				goto out;
			}
			sc.study = "validate";
			sc.model = "";
			sc.heads = v[C_HEADS];
			sc.hidden = v[C_HIDDEN];
			sc.layers = v[C_LAYERS];
			sc.tp = v[C_TP];
			sc.pp = v[C_PP];
			sc.gpus = v[C_GPUS];
			sc.global_batch = v[C_GB];
			sc.seq = v[C_SEQ];
			sc.vocab = v[C_VOCAB];
			sc.micro_batch = v[C_MB];
			sc.sp = v[C_SP] != 0;
			sc.dtype = CVC_PROJ_FP16;
			sc.attention = CVC_PROJ_ATTN_UNFUSED;
			sc.recompute = CVC_PROJ_RECOMP_FULL;
			sc.dp_overlap = 0;
			sc.tp_overlap = 0;
			sc.gpu = "A100-SXM-80GB";
			if (idx[C_RECOMP] >= 0 && *cells[idx[C_RECOMP]]) {
				int k = proj_enum_index("none|selective|full", cells[idx[C_RECOMP]]);

				if (k < 0) {
					snprintf(err, errlen,
						 "'%s': line %d: expected none, selective or full "
						 "in column 'recompute'", path, lineno);
					rc = CVC_ERR_FORMAT;
					goto out;
				}
				sc.recompute = k;
			}
			if (idx[C_GPU] >= 0 && *cells[idx[C_GPU]])
				sc.gpu = cells[idx[C_GPU]];
			cvc_proj_evaluate(ctx, &sc, &r);
			if (!r.valid) {
				snprintf(err, errlen, "'%s': line %d: cannot project this run: %s",
					 path, lineno, r.reason);
				rc = CVC_ERR_FORMAT;
				goto out;
			}
			if (use_tflops) {
				measured = v[C_TFLOPS];
				predicted = cvc_proj_megatron_flops(sc.global_batch, sc.seq,
								    sc.layers, sc.hidden,
								    sc.vocab) /
					    (r.step_s * sc.gpus) / 1e12;
			} else {
				measured = v[C_ITER];
				predicted = r.step_s;
			}
			fprintf(out, "%s,%.4g,%+.2f\n", copy, predicted,
				100 * (predicted - measured) / measured);
			sum_abs += fabs(100 * (predicted - measured) / measured);
			n++;
		}
	}
	if (ferror(f)) {
		snprintf(err, errlen, "'%s': read error", path);
		rc = CVC_ERR_IO;
		goto out;
	}
	if (!have_header) {
		snprintf(err, errlen, "'%s': line %d: expected a header line", path, lineno + 1);
		rc = CVC_ERR_FORMAT;
		goto out;
	}
	*rows = n;
	*mape_pct = n ? sum_abs / n : NAN;
out:
	free(line);
	free(copy);
	fclose(f);
	return rc;
}
