/*
 * bench_validate.c - `cvc validate` throughput: a table of 10^4 measured
 * runs read, interpreted, projected and written back, on one core, next to
 * a named baseline in the same run:
 *
 *   baseline "read": the same file split into records by the CSV reader
 *   alone (cvc_csv_record), the floor any validator pays per row.
 *
 * The table is ../shared/published/modern-runs.csv repeated (its 258 rows
 * 39 times, then the first ones again up to N): real rows with free-text
 * cells, guesses, quoted notes, rows that cannot be projected.
 *
 * Usage: bench_validate [N] [MODERN_RUNS_CSV]   (default 10000,
 *        ../shared/published/modern-runs.csv)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cvc/cvc_csv.h"
#include "cvc/cvc_project.h"

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	size_t cap = 0;

	*len = 0;
	if (!f)
		return NULL;
	for (;;) {
		if (*len == cap) {
			char *nb = realloc(buf, cap = cap ? 2 * cap : 1 << 16);

			if (!nb) {
				free(buf);
				fclose(f);
				return NULL;
			}
			buf = nb;
		}
		size_t got = fread(buf + *len, 1, cap - *len, f);

		if (!got)
			break;
		*len += got;
	}
	fclose(f);
	return buf;
}

int main(int argc, char **argv)
{
	long want = argc > 1 ? strtol(argv[1], NULL, 10) : 10000;
	const char *src = argc > 2 ? argv[2] : "../shared/published/modern-runs.csv";
	char path[] = "/tmp/cvc-bench-validate-XXXXXX";
	size_t len = 0, hdr_end, pos;
	char *text = slurp(src, &len);
	long rows = 0, line = 1;
	double t0, t_read, t_val;
	cvc_proj_ctx *ctx = NULL;
	cvc_proj_validation v;
	char err[512] = "";
	FILE *f, *null;
	int fd;

	if (!text || want < 1) {
		fprintf(stderr, "bench_validate: cannot read '%s'\n", src);
		return 2;
	}
	hdr_end = (size_t)(strchr(text, '\n') - text) + 1;
	fd = mkstemp(path);
	if (fd < 0 || !(f = fdopen(fd, "w"))) {
		fprintf(stderr, "bench_validate: cannot write '%s'\n", path);
		return 1;
	}
	fwrite(text, 1, hdr_end, f);
	/* repeat whole records (a note may span lines inside quotes) */
	while (rows < want) {
		cvc_csv_rec rec = {0};

		pos = hdr_end;
		line = 2;
		while (pos < len && rows < want) {
			size_t start = pos;

			if (cvc_csv_record(src, text, len, &pos, &line, &rec, 256, 65536, err,
					   sizeof err)) {
				fprintf(stderr, "bench_validate: %s\n", err);
				return 2;
			}
			fwrite(text + start, 1, pos - start, f);
			rows++;
		}
		cvc_csv_rec_release(&rec);
	}
	fclose(f);
	free(text);

	/* baseline: records split, nothing else */
	t0 = now();
	text = slurp(path, &len);
	{
		cvc_csv_rec rec = {0};
		long n = 0;

		pos = 0;
		line = 1;
		while (pos < len && !cvc_csv_record(path, text, len, &pos, &line, &rec, 256, 65536,
						     err, sizeof err))
			n++;
		cvc_csv_rec_release(&rec);
		if (n != rows + 1)
			fprintf(stderr, "bench_validate: read %ld records, wrote %ld\n", n, rows + 1);
	}
	t_read = now() - t0;
	free(text);

	null = fopen("/dev/null", "w");
	if (!null || cvc_proj_ctx_new(NULL, &ctx)) {
		fprintf(stderr, "bench_validate: set-up failed\n");
		return 1;
	}
	t0 = now();
	if (cvc_proj_validate(path, ctx, NULL, null, &v, err, sizeof err)) {
		fprintf(stderr, "bench_validate: %s\n", err);
		return 1;
	}
	t_val = now() - t0;
	printf("rows                      %ld (%d projected)\n", rows, v.all.expressible);
	printf("validate                  %.3f s  (%.1f us/row)\n", t_val, 1e6 * t_val / rows);
	printf("baseline: CSV read alone  %.3f s  (%.1f us/row); validate = %.1f x read\n", t_read,
	       1e6 * t_read / rows, t_val / (t_read > 0 ? t_read : 1e-9));
	cvc_proj_validation_release(&v);
	cvc_proj_ctx_free(ctx);
	fclose(null);
	remove(path);
	return t_val < 1.0 ? 0 : 1;
}
