/*
 * predict_shapes.c - `cvc predict gemm --csv FILE`: a file of GEMM shapes,
 * each priced, with a time_us column added.  Every line is read, checked
 * and priced into memory first; only a file found good is printed (the
 * `model:` line on stderr, then the shapes), so that a bad row never
 * leaves half an output behind.
 */
#include <ctype.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "predict.h"
#include "cvc/cvc_base.h"
#include "cvc/cvc_report.h"

#define CSV_LINE_MAX 4096
/* shapes a --csv file may hold: a device or a pipe without end is refused */
#define CSV_BYTES_MAX (256 << 20)

/* Copies a header field, trimmed and lowercased, for column matching. */
static void norm_field(const char *s, char *out, size_t cap)
{
	size_t j = 0;

	while (*s == ' ' || *s == '"')
		s++;
	for (; *s && *s != '"' && j + 1 < cap; s++)
		out[j++] = (char)tolower((unsigned char)*s);
	while (j && out[j - 1] == ' ')
		j--;
	out[j] = '\0';
}

/*
 * The shapes of f (named path) with a time_us column added, as CSV to
 * out: each line as read, so the file's own columns pass through to the
 * byte.  With max_rows > 0, more shapes than that is an error (a table
 * held in memory).  *outside and *priced count the shapes the default
 * efficiency priced and all shapes.  Returns an exit code.
 */
static int price_lines(const cvc_modelset *ms, FILE *f, const char *path, cvc_hw_dtype dt,
		       FILE *out, long max_rows, long *outside, long *priced)
{
	char line[CSV_LINE_MAX], copy[CSV_LINE_MAX];
	int col[4] = {-1, -1, -1, -1}, lineno = 0, nh = 0;
	long rows = 0;
	long long total = 0;
	static const char *const names[4] = {"m", "n", "k", "b"};

	while (fgets(line, sizeof line, f)) {
		size_t len = strlen(line);
		int64_t v[4] = {0, 0, 0, 1};
		char *fld[64];
		int nf = 0;

		lineno++;
		/* a NUL byte ends the string before the line does: not text
		 * (/dev/zero was read without end) */
		if (len < sizeof line - 1 && !feof(f) && (len == 0 || line[len - 1] != '\n'))
			return cli_error("'%s': line %d: expected text, got a NUL byte", path, lineno);
		if ((total += (long long)len) > CSV_BYTES_MAX)
			return cli_error("'%s': line %d: expected at most %d MiB of shapes", path, lineno,
					 CSV_BYTES_MAX >> 20);
		if (len == sizeof line - 1 && line[len - 1] != '\n')
			return cli_error("'%s': line %d: expected a line under %d bytes", path, lineno,
					 CSV_LINE_MAX);
		while (len && (line[len - 1] == '\n' || line[len - 1] == '\r'))
			line[--len] = '\0';
		if (!len)
			continue;
		memcpy(copy, line, len + 1);
		for (char *p = copy; nf < 64;) {
			char *c = strchr(p, ',');

			fld[nf++] = p;
			if (!c)
				break;
			*c = '\0';
			p = c + 1;
		}
		if (col[0] < 0) {
			for (int i = 0; i < nf; i++) {
				char h[32];

				norm_field(fld[i], h, sizeof h);
				for (int c = 0; c < 4; c++)
					if (strcmp(h, names[c]) == 0 && col[c] < 0)
						col[c] = i;
			}
			if (col[0] < 0 || col[1] < 0 || col[2] < 0)
				return cli_error("'%s': line %d: expected a header with columns m, n, k "
						 "(and optionally b)", path, lineno);
			fprintf(out, "%s,time_us\n", line);
			nh = nf;
			continue;
		}
		/* every row as wide as the header: the time column follows it */
		if (nf != nh)
			return cli_error("'%s': line %d: expected %d fields, as the header has, got %d",
					 path, lineno, nh, nf);
		for (int c = 0; c < 4; c++) {
			if (col[c] < 0)
				continue;
			if (col[c] >= nf ||
			    cvc_parse_i64(fld[col[c]], c < 3, INT64_C(1) << 40, &v[c]) != CVC_OK)
				return cli_error("'%s': line %d: expected a positive integer %s, got '%.32s'",
						 path, lineno, names[c], col[c] < nf ? fld[col[c]] : "");
		}
		if (max_rows > 0 && ++rows > max_rows)
			return cli_error("'%s': line %d: more than %ld shapes to show as a table; "
					 "--format csv takes any number", path, lineno, max_rows);
		{
			cvc_model_price pr;

			cvc_model_gemm_price(ms, v[0], v[1], v[2], v[3], dt, &pr);
			*outside += pr.extrap > 1;
			++*priced;
			fprintf(out, "%s,%.3f\n", line, pr.us);
		}
	}
	if (ferror(f))
		return cli_fail(CVC_ERR_IO, "'%s': read error", path);
	if (col[0] < 0)
		return cli_error("'%s': line %d: expected a header with columns m, n, k", path,
				 lineno + 1);
	return 0;
}

/* The CSV text buf[0..len) of predictions, printed in format. */
static int print_as(const char *what, const char *buf, size_t len, const char *format)
{
	cvc_rep_table *t = NULL;
	char err[1024];
	cvc_status st;

	if (strcmp(format, "csv") == 0) {
		fwrite(buf, 1, len, stdout);
		return 0;
	}
	if ((st = cvc_rep_table_parse(what, buf, len, &t, err, sizeof err)))
		return cli_fail(st, "%s", err);
	cli_table_print(t, format);
	cvc_rep_table_free(t);
	return 0;
}

int cli_predict_shapes(const cvc_modelset *ms, const char *path, cvc_hw_dtype dt,
		       const char *format)
{
	FILE *f = fopen(path, "r"), *mem = NULL;
	char *buf = NULL;
	size_t len = 0;
	long outside = 0, priced = 0;
	struct stat sb;
	int rc;

	if (!f) {
		int e = errno;

		return cli_fail(cvc_open_status(e), "'%s': cannot open: %s", path, strerror(e));
	}
	/* a folder opens but does not read: the user's input, not the
	 * machine, is wrong (it read as "read error", exit 1) */
	if (fstat(fileno(f), &sb) == 0 && S_ISDIR(sb.st_mode)) {
		rc = cli_error("'%s': expected a file of shapes (m,n,k[,b]), got a folder", path);
		goto out;
	}
	if (!(mem = open_memstream(&buf, &len))) {
		rc = cli_fail(CVC_ERR_NOMEM, "predict: out of memory");
		goto out;
	}
	/* a table is held whole: its rows are capped; CSV's only by the
	 * file's bytes (CSV_BYTES_MAX) */
	rc = price_lines(ms, f, path, dt, mem, strcmp(format, "csv") ? CVC_REP_MAX_ROWS : 0,
			 &outside, &priced);
	if (fclose(mem) && !rc)
		rc = cli_fail(CVC_ERR_NOMEM, "predict: out of memory");
	if (rc)
		goto out;
	cli_say("model: %s\n", cvc_model_origin(ms, CVC_MODEL_GEMM, (int)dt, 0));
	rc = print_as(path, buf, len, format);
	if (!rc && outside)
		cli_say("note: %ld of %ld shapes lie outside the sizes the model measured: the "
			"default efficiency priced them, not the fit\n", outside, priced);
out:
	free(buf);
	fclose(f);
	return rc;
}
