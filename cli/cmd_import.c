/*
 * cmd_import.c - `cvc import`: traces into a database, one run per call.
 */
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <sqlite3.h>

#include "cli.h"
#include "commands.h"
#include "cvc/cvc_base.h"
#include "cvc/cvc_classify.h"
#include "cvc/cvc_db.h"
#include "cvc/cvc_import.h"
#include "cvc/cvc_nccltab.h"

static const char synopsis[] =
	"[--db PATH] [--run NAME] [--rules FILE | --rules-only FILE] [-j N] FILE|DIR|-...";

struct progress {
	int on;
	double last;  /* monotonic seconds of the last line drawn; 0: none shown */
	int runs;     /* runs said (cvc_import_opts.on_run) */
};

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/*
 * Redraws one status line on the terminal, at most ten times a second.
 * Each draw clears the line's rest, so a shorter file name does not leave
 * the longer one's tail behind; the name is shown with its control
 * characters escaped, not acted on.
 */
static void show_progress(void *arg, const char *path, int64_t done, int64_t total)
{
	struct progress *p = arg;
	double t = now_s();
	const char *base = strrchr(path, '/');
	char safe[256];

	if (!p->on || t - p->last < 0.1)
		return;
	p->last = t;
	cvc_text_safe(base ? base + 1 : path, 0, safe, sizeof safe);
	if (total > 0)
		fprintf(stderr, "\rimporting %.60s: %3d%%\033[K", safe,
			(int)(100.0 * (double)done / (double)total));
	else
		fprintf(stderr, "\rimporting %.60s: %lld MiB\033[K", safe, (long long)(done >> 20));
	fflush(stderr);
}

/* Takes the status line off the terminal before a message is written there. */
static void clear_progress(struct progress *p)
{
	if (p->on && p->last > 0) {
		fputs("\r\033[K", stderr);
		p->last = 0;
	}
}

struct pathlist {
	char **v;
	int n;
	size_t cap;
};

static int push(struct pathlist *l, const char *s)
{
	if (cvc_grow(&l->v, &l->cap, (size_t)l->n + 1, sizeof *l->v, 16) != CVC_OK)
		return -1;
	l->v[l->n] = strdup(s);
	return l->v[l->n] ? (l->n++, 0) : -1;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* What a directory walk found and left out. */
struct walk {
	struct pathlist found;
	int skipped;
	char first_skipped[4096];
};

/* A file a directory walk takes: content an importer knows, and for an
 * nccl-tests log a run rather than a document quoting a row or two. */
static int is_trace(const char *path)
{
	cvc_format fmt;

	if (cvc_import_detect(path, &fmt, NULL, 0) != CVC_OK)
		return 0;
	if (fmt == CVC_FMT_NCCL_TESTS) {
		cvc_nt_log log;
		char err[512];
		cvc_status st = cvc_nt_read(path, path, &log, NULL, NULL, err, sizeof err);

		cvc_nt_log_release(&log);
		return st != CVC_ERR_NOTFOUND;
	}
	return 1;
}

#define WALK_DEPTH 16

static int walk_dir(const char *dir, int depth, struct walk *w)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int rc = 0;

	if (!d)
		return cli_error("'%s': cannot open directory: %s", dir, strerror(errno));
	while (!rc && (e = readdir(d))) {
		char path[4096];
		struct stat sb;

		if (e->d_name[0] == '.' || cvc_str_ends(e->d_name, "-wal") ||
		    cvc_str_ends(e->d_name, "-shm") || cvc_str_ends(e->d_name, "-journal"))
			continue;
		if ((size_t)snprintf(path, sizeof path, "%s/%s", dir, e->d_name) >= sizeof path)
			continue;
		/* lstat: a link to a directory is not followed (no cycles) */
		if (lstat(path, &sb) != 0)
			continue;
		if (S_ISDIR(sb.st_mode)) {
			if (depth < WALK_DEPTH)
				rc = walk_dir(path, depth + 1, w);
			continue;
		}
		if (S_ISLNK(sb.st_mode) && (stat(path, &sb) != 0 || !S_ISREG(sb.st_mode)))
			continue;
		if (!S_ISREG(sb.st_mode))
			continue;
		if (!is_trace(path)) {
			if (!w->skipped++)
				snprintf(w->first_skipped, sizeof w->first_skipped, "%s", path);
			continue;
		}
		if (push(&w->found, path))
			rc = cli_error("out of memory");
	}
	closedir(d);
	return rc;
}

/*
 * A directory stands for the traces in it and in its subdirectories (e.g.
 * the per-rank databases of `cvc profile -o DIR`, or a tree of traces): its
 * regular files whose content some importer knows, in path order.  SQLite's
 * side files are never traces; what was left out is said.
 */
static int expand_dir(const char *dir, struct pathlist *out)
{
	struct walk w = {0};
	int rc = walk_dir(dir, 0, &w);

	qsort(w.found.v, (size_t)w.found.n, sizeof *w.found.v, cmp_str);
	for (int i = 0; i < w.found.n; i++) {
		if (!rc && push(out, w.found.v[i]))
			rc = cli_error("out of memory");
		free(w.found.v[i]);
	}
	free(w.found.v);
	if (!rc && w.skipped)
		cli_say("note: '%s': %d file%s that no importer reads left out (first: "
			"'%s')\n", dir, w.skipped, w.skipped == 1 ? "" : "s", w.first_skipped);
	if (!rc && w.found.n == 0)
		rc = cli_error("'%s': no traces in this directory or below it", dir);
	return rc;
}

/*
 * Without --db, a database given as an input is a forgotten --db (`cvc
 * import y.db trace.json.gz` made ./cvc.db and imported y.db as a trace of
 * it): a name ending in .db, or a cvc database by content.  An Nsight
 * Systems export (SQLite too) is a trace, and stays one.
 */
static int db_given_as_input(const char *cmd, const char *path)
{
	cvc_format fmt = CVC_FMT_UNKNOWN;

	if (strcmp(path, "-") != 0 && !cvc_str_ends(path, ".db") &&
	    (cvc_import_detect(path, &fmt, NULL, 0) != CVC_OK || fmt != CVC_FMT_CVCDB))
		return 0;
	return cli_error("%s: '%s' is a database, and no --db names the one to import into: "
			 "give it with --db ('cvc import --db %s FILES...'), or, to merge it as a "
			 "shard, name the target with --db", cmd, path, path);
}

/* The largest run id the database holds before an import (0: none). */
static int64_t max_run_id(cvc_db *db)
{
	sqlite3_stmt *st = NULL;
	int64_t id = 0;

	if (sqlite3_prepare_v2(cvc_db_sqlite(db), "SELECT coalesce(max(id), 0) FROM runs", -1, &st,
			       NULL) == SQLITE_OK &&
	    sqlite3_step(st) == SQLITE_ROW)
		id = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return id;
}

/*
 * The files of this import that hold less than they seem to: nccl-tests
 * logs whose sweep may not have finished (nccl_tests.incomplete[FILE]),
 * Nsight Systems exports of CUDA graphs traced whole (nsys.incomplete
 * [FILE]), warned of; and what an import left out of a file for good
 * reason, noted: an export's activity rows written twice
 * (nsys.duplicates[FILE]).  Runs past floor, and run (a --run the files
 * were added to).
 */
static void warn_incomplete(cvc_db *db, int64_t floor, int64_t run)
{
	sqlite3_stmt *st = NULL;

	if (sqlite3_prepare_v2(cvc_db_sqlite(db),
			       "SELECT substr(key, instr(key, '[') + 1, length(key) - instr(key, "
			       "'[') - 1), value, key LIKE 'nsys.duplicates[%' FROM run_meta WHERE "
			       "(key LIKE 'nccl_tests.incomplete[%' OR key LIKE 'nsys.incomplete[%' "
			       "OR key LIKE 'nsys.duplicates[%') AND (run_id > ?1 OR run_id = ?2) "
			       "ORDER BY key",
			       -1, &st, NULL) != SQLITE_OK)
		return;
	sqlite3_bind_int64(st, 1, floor);
	sqlite3_bind_int64(st, 2, run);
	while (sqlite3_step(st) == SQLITE_ROW)
		cli_say("%s: '%s': %s\n", sqlite3_column_int(st, 2) ? "note" : "warning",
			(const char *)sqlite3_column_text(st, 0),
			(const char *)sqlite3_column_text(st, 1));
	sqlite3_finalize(st);
}

/* How a folder's files became runs (cvc_import_opts.on_run); arg is the
 * progress line, which counts them. */
static void said_run(void *arg, int64_t run_id, const char *name, int nfiles, const char *why)
{
	struct progress *p = arg;

	(void)nfiles;
	p->runs++;
	clear_progress(p);
	cli_say("note: run %lld '%s': %s\n", (long long)run_id, name, why);
}

int cmd_import(int argc, char **argv, struct cvc_ctx *ctx)
{
	const char *db_path = NULL, *run = NULL, *rules_path = NULL, *rules_only = NULL;
	long long jobs = 1;
	double max_inflate = CVC_GZ_MAX_INFLATE;
	const struct cli_opt opts[] = {
		{"db", 0, CLI_PATH, &db_path, "PATH", "database to import into (created if missing; default cvc.db)", NULL},
		{"run", 0, CLI_STR, &run, "NAME", "run to add every file to (created if missing; default: a folder's files are grouped into runs by their own metadata, the first file's name each)", NULL},
		{"jobs", 'j', CLI_INT, &jobs, "N", "parse N files in parallel", NULL},
		{"rules", 0, CLI_PATH, &rules_path, "FILE", "classify kernels with this rule file tried before the shipped rules", NULL},
		{"rules-only", 0, CLI_PATH, &rules_only, "FILE", "classify kernels with this rule file alone", NULL},
		{"max-inflate", 0, CLI_DOUBLE, &max_inflate, "N",
		 "refuse gzip input that expands more than N times (default 100; 0: no limit)", NULL},
		{0},
	};
	struct pathlist files = {0};
	struct progress prog = {0};
	cvc_import_opts io = {0};
	cvc_import_stats stats = {0};
	cvc_db *db = NULL;
	cvc_rules *rules = NULL;
	struct stat sb;
	int64_t run_id = 0, floor = 0;
	int npos, rc = 0, dirs = 0;
	cvc_status st;

	rc = cli_parse(ctx->cmd, synopsis, opts, argc, argv, &npos, NULL);
	if (rc)
		return rc < 0 ? 0 : rc;
	if (npos == 0)
		return cli_usage_error(ctx->cmd, synopsis, opts);
	if (jobs < 1 || jobs > 64)
		return cli_error("import: --jobs must be between 1 and 64, got %lld", jobs);
	if (max_inflate < 0)
		return cli_error("import: --max-inflate: expected 0 (no limit) or more, got %g",
				 max_inflate);
	cvc_gz_set_max_inflate(max_inflate);
	for (int i = 1; i <= npos && !rc; i++) {
		if (strcmp(argv[i], "-") == 0) /* standard input: the library reads it once */
			rc = push(&files, argv[i]) ? cli_error("out of memory") : 0;
		else if (!db_path && cvc_str_ends(argv[i], ".db") &&
			 (rc = db_given_as_input(ctx->cmd, argv[i])))
			;
		else if (stat(argv[i], &sb) != 0)
			rc = cli_error("'%s': cannot open: %s", argv[i], strerror(errno));
		else if (S_ISDIR(sb.st_mode))
			rc = (dirs++, expand_dir(argv[i], &files));
		else if (!db_path && (rc = db_given_as_input(ctx->cmd, argv[i])))
			;
		else if (push(&files, argv[i]))
			rc = cli_error("out of memory");
	}
	if (rc)
		goto out;
	if (!db_path)
		db_path = CVC_DEFAULT_DB;
	/* Rules first: a bad rule file must not leave even an empty database. */
	if ((rc = cli_rules_load(ctx->cmd, rules_path, rules_only, 0, &rules)))
		goto out;
	/* A database this import creates and fails (or is interrupted) to fill
	 * is removed again, unless another process wrote into it meanwhile. */
	if ((rc = cli_db_open(ctx, db_path, CVC_DB_CREATE | CVC_DB_DISCARD, &db)))
		goto out;
	prog.on = ctx->progress;
	io.run_name = run;
	io.jobs = (int)jobs;
	/* import, then classify, in one transaction */
	io.after = cvc_classify_after_import;
	io.after_arg = rules;
	io.progress = show_progress;
	io.progress_arg = &prog;
	/* a folder can hold unrelated jobs: its files make the runs their own
	   metadata say, unless --run puts them in one */
	io.group = dirs && !run && files.n > 1;
	io.on_run = said_run;
	io.on_run_arg = &prog;
	floor = max_run_id(db);
	st = cvc_import_files(db, (const char *const *)files.v, files.n, &io, &run_id, &stats);
	clear_progress(&prog);
	if (st) {
		rc = cli_fail(st, "%s", cvc_db_errmsg(db));
		goto out;
	}
	if (prog.runs > 1) {
		cli_say("note: the files are %d jobs by their own metadata, so %d runs "
			"(--run NAME puts every file in one)\n", prog.runs, prog.runs);
		printf("imported %lld files into %d runs of '%s': ", (long long)stats.files, prog.runs,
		       db_path);
	} else {
		printf("imported %lld file%s into run %lld of '%s': ", (long long)stats.files,
		       stats.files == 1 ? "" : "s", (long long)run_id, db_path);
	}
	printf("%lld events, %lld activities, "
	       "%lld collectives, %lld ranges, %lld nccl-tests rows",
	       (long long)stats.events, (long long)stats.activities,
	       (long long)stats.collectives, (long long)stats.ranges,
	       (long long)stats.nccl_rows);
	/* what `cvc fit` can fit from (docs/MODELS.md "Sources") */
	if (stats.op_shapes)
		printf(", %lld ops with shapes (%lld kernel launches inside them)",
		       (long long)stats.op_shapes, (long long)stats.op_launches);
	putchar('\n');
	warn_incomplete(db, floor, run_id);
	cli_warn_suspects(db, run_id);
out:
	cvc_rules_free(rules);
	for (int i = 0; i < files.n; i++)
		free(files.v[i]);
	free(files.v);
	return rc;
}
