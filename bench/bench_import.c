/*
 * bench_import.c - speed and memory of the Kineto importer against named
 * baselines measured in the same run:
 *   (a) zlib inflate alone of the same file (the floor any reader pays),
 *   (b) json-c json_tokener_parse of the whole decompressed text (a DOM
 *       parser: what the streaming scanner avoids).
 *
 *   bench_import FILE [--db PATH] [--repeat N]
 *
 * The import is timed twice: cvc_import_kineto alone (parse + store, inside
 * one transaction, as the driver runs it) and the whole cvc_import_files
 * (which also classifies the new kernel names and commits).  The best of N
 * repeats is reported.  Peak RSS is read with getrusage after the imports
 * and before the baselines, which need more memory.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <json-c/json.h>
#include <zlib.h>

#include "cvc/cvc_analyze.h"
#include "cvc/cvc_db.h"
#include "cvc/cvc_classify.h"
#include "cvc/cvc_import.h"

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* CPU time of this process: less disturbed than wall time on a busy host. */
static double cpu_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static double peak_rss_mb(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return (double)ru.ru_maxrss / 1024.0;  /* ru_maxrss is KiB on Linux */
}

/* Inflates the whole file; returns bytes, or -1.  *text (may be NULL) keeps it. */
static long long inflate_all(const char *path, char **text)
{
	gzFile gz = gzopen(path, "rb");
	size_t cap = (size_t)4 << 20, len = 0;
	char *buf = malloc(cap + 1);
	int n = 0;

	if (!gz || !buf) {
		if (gz)
			gzclose(gz);
		free(buf);
		return -1;
	}
	gzbuffer(gz, 1 << 18);
	for (;;) {
		if (text && cap - len < ((size_t)1 << 20)) {
			char *nb = realloc(buf, cap * 2 + 1);

			if (!nb)
				break;
			buf = nb;
			cap *= 2;
		}
		n = gzread(gz, text ? buf + len : buf, (unsigned)(text ? cap - len : cap));
		if (n <= 0)
			break;
		len += (size_t)n;
	}
	gzclose(gz);
	if (n < 0) {
		free(buf);
		return -1;
	}
	buf[text ? len : 0] = '\0';
	if (text)
		*text = buf;
	else
		free(buf);
	return (long long)len;
}

struct run {
	double secs, cpu;
	cvc_import_stats stats;
};

/* One import into a fresh database; whole = cvc_import_files, else kineto only. */
static int import_once(const char *file, const char *dbpath, int whole, struct run *r)
{
	cvc_db *db = NULL;
	int64_t run_id;
	cvc_run_info ri = {.name = "bench"};
	cvc_status st;
	double t0, c0;

	cvc_db_remove_files(dbpath);
	memset(r, 0, sizeof *r);
	if ((st = cvc_db_open(dbpath, CVC_DB_CREATE, &db))) {
		fprintf(stderr, "error: %s\n", cvc_db_errmsg(db));
		cvc_db_close(db);
		return -1;
	}
	t0 = now_s();
	c0 = cpu_s();
	if (whole) {
		/* the whole of `cvc import`: the classifier runs in the transaction */
		cvc_import_opts o = {.after = cvc_classify_after_import};

		st = cvc_import_files(db, &file, 1, &o, &run_id, &r->stats);
	} else if (!(st = cvc_db_begin(db)) && !(st = cvc_db_run_new(db, &ri, &run_id)) &&
		   !(st = cvc_import_kineto(db, run_id, file, NULL, &r->stats))) {
		st = cvc_db_commit(db);
	}
	r->secs = now_s() - t0;
	r->cpu = cpu_s() - c0;
	if (st)
		fprintf(stderr, "error: %s\n", cvc_db_errmsg(db));
	cvc_db_close(db);
	return st ? -1 : 0;
}

/*
 * Best-of-N time of the analyzer over the database the last whole import
 * left: the second half of "import and analyze throughput".
 */
static int analyze_best(const char *dbpath, int repeat, double *wall, double *cpu,
			int64_t *kernels, double *idle_wall)
{
	cvc_analyze_opts o = {.run = NULL, .by = CVC_BY_RANK};
	cvc_db *db = NULL;
	cvc_status st;

	*wall = *cpu = *idle_wall = 1e30;
	*kernels = 0;
	if ((st = cvc_db_open(dbpath, CVC_DB_READONLY, &db))) {
		fprintf(stderr, "error: %s\n", cvc_db_errmsg(db));
		cvc_db_close(db);
		return -1;
	}
	for (int i = 0; i < repeat; i++) {
		cvc_breakdown *rows = NULL;
		size_t n = 0;
		double t0 = now_s(), c0 = cpu_s();

		if ((st = cvc_analyze_run(db, &o, &rows, &n))) {
			fprintf(stderr, "error: %s\n", cvc_db_errmsg(db));
			cvc_db_close(db);
			return -1;
		}
		if (now_s() - t0 < *wall)
			*wall = now_s() - t0;
		if (cpu_s() - c0 < *cpu)
			*cpu = cpu_s() - c0;
		*kernels = 0;
		for (size_t r = 0; r < n; r++)
			*kernels += rows[r].kernels;
		cvc_breakdown_free(rows, n);
		/* the idle breakdown: one more ordered scan of the same rows */
		{
			cvc_idle_stat *is = NULL;

			t0 = now_s();
			if ((st = cvc_analyze_idle(db, &o, CVC_KERNEL_WAIT_NS_DEFAULT, &is, &n))) {
				fprintf(stderr, "error: %s\n", cvc_db_errmsg(db));
				cvc_db_close(db);
				return -1;
			}
			if (now_s() - t0 < *idle_wall)
				*idle_wall = now_s() - t0;
			free(is);
		}
	}
	cvc_db_close(db);
	return 0;
}

int main(int argc, char **argv)
{
	const char *file = NULL, *dbpath = NULL;
	char dbbuf[4096];
	int repeat = 3;
	struct run best_k = {0}, best_w = {0}, r;
	double rss_import, t0, c0, t_inflate = 1e9, c_inflate = 1e9, t_json, t_an, c_an, t_idle;
	int64_t an_kernels;
	long long raw = -1;
	char *text = NULL;
	json_object *doc;

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--db") == 0 && i + 1 < argc)
			dbpath = argv[++i];
		else if (strcmp(argv[i], "--repeat") == 0 && i + 1 < argc)
			repeat = (int)strtol(argv[++i], NULL, 10);
		else if (!file && argv[i][0] != '-')
			file = argv[i];
		else {
			fprintf(stderr, "usage: bench_import FILE [--db PATH] [--repeat N]\n");
			return 2;
		}
	}
	if (!file) {
		fprintf(stderr, "usage: bench_import FILE [--db PATH] [--repeat N]\n");
		return 2;
	}
	if (repeat < 1)
		repeat = 1;
	if (!dbpath) {
		snprintf(dbbuf, sizeof dbbuf, "/tmp/bench_import-%ld.db", (long)getpid());
		dbpath = dbbuf;
	}
	printf("# bench_import: Kineto import vs zlib inflate and json-c DOM parse\n");
	printf("# reproduce: %s %s --db %s --repeat %d\n", argv[0], file, dbpath, repeat);
	printf("# (built by cmake as <build>/bench_import; the --db file is deleted after)\n");

	for (int i = 0; i < repeat; i++) {
		if (import_once(file, dbpath, 0, &r))
			return 1;
		if (i == 0 || r.secs < best_k.secs)
			best_k = r;
		if (import_once(file, dbpath, 1, &r))
			return 1;
		if (i == 0 || r.secs < best_w.secs)
			best_w = r;
	}
	rss_import = peak_rss_mb();
	if (analyze_best(dbpath, repeat, &t_an, &c_an, &an_kernels, &t_idle))
		return 1;
	cvc_db_remove_files(dbpath);

	for (int i = 0; i < repeat; i++) {
		t0 = now_s();
		c0 = cpu_s();
		raw = inflate_all(file, NULL);
		if (now_s() - t0 < t_inflate)
			t_inflate = now_s() - t0;
		if (cpu_s() - c0 < c_inflate)
			c_inflate = cpu_s() - c0;
	}
	if (raw < 0) {
		fprintf(stderr, "error: '%s': cannot inflate\n", file);
		return 1;
	}

	printf("file                 %s\n", file);
	printf("uncompressed         %.1f MiB (%lld bytes)\n", (double)raw / 1048576.0, raw);
	printf("events               %lld  (activities %lld, ranges %lld, collectives %lld)\n",
	       (long long)best_k.stats.events, (long long)best_k.stats.activities,
	       (long long)best_k.stats.ranges, (long long)best_k.stats.collectives);
	printf("import (kineto only) wall %.3f s  %.2f M events/s  %.0f MB/s; cpu %.3f s  "
	       "%.2f M events/s\n", best_k.secs,
	       (double)best_k.stats.events / best_k.secs / 1e6, (double)raw / best_k.secs / 1e6,
	       best_k.cpu, (double)best_k.stats.events / best_k.cpu / 1e6);
	printf("import (whole: +classify+commit) wall %.3f s  %.2f M events/s; cpu %.3f s  "
	       "%.2f M events/s\n", best_w.secs,
	       (double)best_w.stats.events / best_w.secs / 1e6, best_w.cpu,
	       (double)best_w.stats.events / best_w.cpu / 1e6);
	printf("peak RSS after imports %.1f MiB = %.2f x uncompressed size\n", rss_import,
	       rss_import * 1048576.0 / (double)raw);
	printf("analyze (cvc_analyze_run, by rank) wall %.4f s  %.2f M kernels/s  %.2f M trace "
	       "events/s; cpu %.4f s\n", t_an, (double)an_kernels / t_an / 1e6,
	       (double)best_w.stats.events / t_an / 1e6, c_an);
	printf("analyze --idle (cvc_analyze_idle) wall %.4f s = %.2f x the breakdown by rank\n",
	       t_idle, t_idle / t_an);
	printf("baseline (a) zlib inflate alone  wall %.3f s  %.0f MB/s, cpu %.3f s; "
	       "import/inflate = %.2f x (wall), %.2f x (cpu)\n",
	       t_inflate, (double)raw / t_inflate / 1e6, c_inflate, best_k.secs / t_inflate,
	       best_k.cpu / c_inflate);

	if (inflate_all(file, &text) < 0) {
		fprintf(stderr, "error: '%s': cannot inflate\n", file);
		return 1;
	}
	t0 = now_s();
	doc = json_tokener_parse(text);
	t_json = now_s() - t0;
	printf("baseline (b) json-c json_tokener_parse  %.3f s (%s); import/json-c time = %.2f x; "
	       "peak RSS with DOM %.1f MiB = %.2f x the import's\n",
	       t_json, doc ? "parsed" : "FAILED", best_k.secs / t_json, peak_rss_mb(),
	       peak_rss_mb() / rss_import);
	json_object_put(doc);
	free(text);
	return 0;
}
