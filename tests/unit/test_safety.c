/*
 * test_safety.c - nothing is lost on a crash or bad input (issue 8).
 *
 * - an import killed with SIGKILL at several points leaves the database
 *   intact (integrity_check ok, every table's row count as before) and a
 *   new import still works;
 * - two imports into one database at once both succeed (the second waits);
 * - a corrupt, foreign or newer database fails through the CLI with exit 2
 *   and a message naming the file;
 * - a large Kineto trace streamed through a FIFO imports in bounded memory,
 *   and a 10^6-scenario study streams its CSV in bounded memory (peak RSS
 *   of the child from wait4(); not checked under ASan, whose shadow and
 *   quarantine are not the program's memory);
 * - a spool whose writer lost records reports them through `cvc analyze`.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <criterion/criterion.h>
#include <sqlite3.h>
#include <zlib.h>

#include "cvc/cvc_db.h"
#include "cvc/cvc_import.h"
#include "cvc/cvc_profile.h"
#include "testutil.h"

#define BIG_TRACE "traces/hta-ddp-v100-2rank/df_index_resolver.json.gz"
#define NCCL_LOG "traces/nccl-tests-logs/a100x8_sendrecv_perf.md"
#define SMALL_TRACE "traces/hta-nccl-args-a100-w2/nccl_data.json.gz"

/* ---- child processes ------------------------------------------------------------ */

/* Starts argv[0] with stdout and stderr sent to errpath (or /dev/null). */
static pid_t spawn(char *const argv[], const char *errpath)
{
	pid_t pid = fork();

	cr_assert(pid >= 0, "fork: %s", strerror(errno));
	if (pid == 0) {
		int fd = open(errpath ? errpath : "/dev/null", O_WRONLY | O_CREAT | O_TRUNC, 0644);

		if (fd >= 0) {
			dup2(fd, 1);
			dup2(fd, 2);
			close(fd);
		}
		execv(argv[0], argv);
		_exit(127);
	}
	return pid;
}

/* Waits for pid; returns its exit code (128+signal when killed), peak RSS in KiB. */
static int reap(pid_t pid, long *maxrss_kb)
{
	struct rusage ru;
	int status = 0;
	pid_t r;

	memset(&ru, 0, sizeof ru);
	do
		r = wait4(pid, &status, 0, &ru);
	while (r < 0 && errno == EINTR);
	cr_assert_eq(r, pid, "wait4: %s", strerror(errno));
	if (maxrss_kb)
		*maxrss_kb = ru.ru_maxrss;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static void sleep_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};

	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

/* ---- database state -------------------------------------------------------------- */

static const char *const tables[] = {"runs", "run_meta", "sources", "ranks", "devices",
				     "strings", "activities", "collectives", "ranges",
				     "nccl_tests", "op_classes", "name_class"};
#define NTABLES (sizeof tables / sizeof tables[0])

static sqlite3 *open_ro(const char *path)
{
	sqlite3 *sq = NULL;

	cr_assert_eq(sqlite3_open_v2(path, &sq, SQLITE_OPEN_READWRITE, NULL), SQLITE_OK,
		     "open %s", path);
	sqlite3_busy_timeout(sq, 30000);
	return sq;
}

static long long one_int(sqlite3 *sq, const char *sql)
{
	sqlite3_stmt *st = NULL;
	long long v;

	cr_assert_eq(sqlite3_prepare_v2(sq, sql, -1, &st, NULL), SQLITE_OK, "%s: %s", sql,
		     sqlite3_errmsg(sq));
	cr_assert_eq(sqlite3_step(st), SQLITE_ROW, "%s: %s", sql, sqlite3_errmsg(sq));
	v = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return v;
}

static void counts(const char *path, long long *n)
{
	sqlite3 *sq = open_ro(path);
	char sql[128];

	for (size_t i = 0; i < NTABLES; i++) {
		snprintf(sql, sizeof sql, "SELECT count(*) FROM %s", tables[i]);
		n[i] = one_int(sq, sql);
	}
	sqlite3_close(sq);
}

static void expect_integrity(const char *path)
{
	sqlite3 *sq = open_ro(path);
	sqlite3_stmt *st = NULL;

	cr_assert_eq(sqlite3_prepare_v2(sq, "PRAGMA integrity_check", -1, &st, NULL), SQLITE_OK);
	cr_assert_eq(sqlite3_step(st), SQLITE_ROW);
	cr_expect_str_eq((const char *)sqlite3_column_text(st, 0), "ok", "%s", path);
	sqlite3_finalize(st);
	cr_expect_eq(one_int(sq, "SELECT count(*) FROM pragma_foreign_key_check"), 0);
	sqlite3_close(sq);
}

static int import_cli(const char *db, const char *run, const char *file)
{
	char *argv[] = {CVC_TOOL, "import", "--db", (char *)db, "--run", (char *)run,
			(char *)file, NULL};

	return reap(spawn(argv, NULL), NULL);
}

/* ---- SIGKILL in the middle of an import ------------------------------------------ */

Test(safety, sigkill_mid_import_leaves_the_database_intact)
{
	const char *dir = tu_tmpdir();
	char db[1024], ref[1024], big[1024], small[1024], log[1024], errf[1024];
	long long before[NTABLES], after[NTABLES], full[NTABLES];
	static const long delays_ms[] = {20, 60, 150, 400};
	int killed_mid = 0;

	snprintf(big, sizeof big, "%s", tu_shared(BIG_TRACE));
	snprintf(small, sizeof small, "%s", tu_shared(SMALL_TRACE));
	snprintf(log, sizeof log, "%s", tu_shared(NCCL_LOG));
	snprintf(db, sizeof db, "%s", tu_path(dir, "kill.db"));
	snprintf(ref, sizeof ref, "%s", tu_path(dir, "ref.db"));
	snprintf(errf, sizeof errf, "%s", tu_path(dir, "kill.err"));
	/* What one whole import of the big trace adds, measured, not typed in. */
	cr_assert_eq(import_cli(ref, "ref", big), 0);
	counts(ref, full);
	cr_assert_eq(import_cli(db, "before", small), 0);
	cr_assert_eq(import_cli(db, "log", log), 0);
	counts(db, before);
	cr_assert_gt(before[6], 1000, "the first import stored %lld activities", before[6]);

	for (size_t i = 0; i < sizeof delays_ms / sizeof delays_ms[0]; i++) {
		char run[32];
		char *argv[] = {CVC_TOOL, "import", "--db", db, "--run", run, big, NULL};
		pid_t pid;
		int rc;

		snprintf(run, sizeof run, "killed%zu", i);
		pid = spawn(argv, errf);
		/* ASan runs the import several times slower: stretch the delays. */
		sleep_ms(delays_ms[i] * (UNDER_ASAN ? 4 : 1));
		kill(pid, SIGKILL);
		rc = reap(pid, NULL);
		if (rc != 128 + SIGKILL)
			cr_assert_eq(rc, 0, "import after %ld ms: exit %d", delays_ms[i], rc);
		expect_integrity(db);
		counts(db, after);
		/*
		 * All or nothing: either the database is exactly as before, or the
		 * kill (or the end of the process) came after the commit and the
		 * whole import is there -- never a part of it.
		 */
		if (after[6] == before[6]) {
			for (size_t t = 0; t < NTABLES; t++)
				cr_expect_eq(after[t], before[t],
					     "killed after %ld ms: %s has %lld rows, had %lld",
					     delays_ms[i], tables[t], after[t], before[t]);
			killed_mid += rc == 128 + SIGKILL;
		} else {
			cr_log_info("import committed within %ld ms (exit %d)", delays_ms[i], rc);
			cr_expect_eq(after[6], before[6] + full[6],
				     "after %ld ms: %lld activities, want none or all %lld new",
				     delays_ms[i], after[6], full[6]);
			cr_expect_eq(after[0], before[0] + 1, "runs %lld", after[0]);
			memcpy(before, after, sizeof before);
		}
	}
	/* At least the early kills landed inside the import (it takes ~250 ms). */
	cr_expect_geq(killed_mid, 2, "only %d of the kills interrupted an import", killed_mid);

	/* The database still takes a new import, which adds to it. */
	cr_assert_eq(import_cli(db, "after", small), 0);
	expect_integrity(db);
	counts(db, after);
	cr_expect_eq(after[0], before[0] + 1, "runs %lld", after[0]);
	cr_expect_gt(after[6], before[6], "activities %lld, before %lld", after[6], before[6]);
}

/* ---- two importers at once --------------------------------------------------------- */

Test(safety, concurrent_imports_both_succeed)
{
	const char *dir = tu_tmpdir();
	char db[1024], big[1024], small[1024];
	long long n[NTABLES], one_big, one_small;
	pid_t a, b;
	int ra, rb;

	snprintf(big, sizeof big, "%s", tu_shared(BIG_TRACE));
	snprintf(small, sizeof small, "%s", tu_shared(SMALL_TRACE));
	/* Reference: each file alone. */
	snprintf(db, sizeof db, "%s", tu_path(dir, "ref_big.db"));
	cr_assert_eq(import_cli(db, "x", big), 0);
	counts(db, n);
	one_big = n[6];
	snprintf(db, sizeof db, "%s", tu_path(dir, "ref_small.db"));
	cr_assert_eq(import_cli(db, "x", small), 0);
	counts(db, n);
	one_small = n[6];

	snprintf(db, sizeof db, "%s", tu_path(dir, "both.db"));
	/* Create it first so both processes open the same existing file. */
	cr_assert_eq(import_cli(db, "seed", small), 0);
	for (int round = 0; round < 3; round++) {
		char ra_name[32], rb_name[32];
		char *argv_a[] = {CVC_TOOL, "import", "--db", db, "--run", ra_name, big, NULL};
		char *argv_b[] = {CVC_TOOL, "import", "--db", db, "--run", rb_name, small, NULL};

		snprintf(ra_name, sizeof ra_name, "a%d", round);
		snprintf(rb_name, sizeof rb_name, "b%d", round);
		a = spawn(argv_a, NULL);
		b = spawn(argv_b, NULL);
		ra = reap(a, NULL);
		rb = reap(b, NULL);
		cr_expect_eq(ra, 0, "round %d: first import exit %d", round, ra);
		cr_expect_eq(rb, 0, "round %d: second import exit %d", round, rb);
	}
	expect_integrity(db);
	counts(db, n);
	cr_expect_eq(n[0], 7, "runs: %lld", n[0]);
	cr_expect_eq(n[6], 3 * one_big + 4 * one_small, "activities %lld, expected %lld", n[6],
		     3 * one_big + 4 * one_small);
}

/* ---- corrupt and foreign databases --------------------------------------------------- */

static void expect_cli_db_error(const char *args, const char *path, const char *what)
{
	char *out = NULL, *err = NULL;
	int rc = tu_cvc(args, &out, &err);

	cr_expect_eq(rc, 2, "%s: cvc %s: exit %d, stderr: %s", what, args, rc, err);
	cr_expect(err && strstr(err, path), "%s: stderr does not name '%s': %s", what, path, err);
	cr_expect(err && strncmp(err, "error: ", 7) == 0, "%s: stderr: %s", what, err);
	cr_expect(err && tu_count_lines(err) == 1, "%s: want one line: %s", what, err);
	free(out);
	free(err);
}

Test(safety, corrupt_or_foreign_database_is_a_clear_error)
{
	const char *dir = tu_tmpdir();
	char db[1024], args[2300], good[1024], log[1024];
	char junk[8192];
	size_t len = 0;
	char *img;

	snprintf(log, sizeof log, "%s", tu_shared(NCCL_LOG));
	snprintf(good, sizeof good, "%s", tu_path(dir, "good.db"));
	cr_assert_eq(import_cli(good, "r", log), 0);

	/* Random bytes where a database should be. */
	for (size_t i = 0; i < sizeof junk; i++)
		junk[i] = (char)(i * 131u + 7u);
	snprintf(db, sizeof db, "%s", tu_path(dir, "junk.db"));
	cr_assert_eq(tu_write(db, junk, sizeof junk), 0);
	snprintf(args, sizeof args, "analyze --db %s", db);
	expect_cli_db_error(args, db, "junk, analyze");
	snprintf(args, sizeof args, "import --db %s %s", db, log);
	expect_cli_db_error(args, db, "junk, import");

	/* A real cvc database with its header page damaged. */
	img = tu_read(good, &len);
	cr_assert(img && len > 4096);
	memset(img + 100, 0xA5, 3000);  /* the schema table's first page */
	snprintf(db, sizeof db, "%s", tu_path(dir, "damaged.db"));
	cr_assert_eq(tu_write(db, img, len), 0);
	free(img);
	snprintf(args, sizeof args, "analyze --db %s", db);
	expect_cli_db_error(args, db, "damaged, analyze");
	snprintf(args, sizeof args, "classify --unknown --db %s", db);
	expect_cli_db_error(args, db, "damaged, classify");

	/* A newer schema version. */
	{
		sqlite3 *sq = NULL;

		snprintf(db, sizeof db, "%s", tu_path(dir, "newer.db"));
		img = tu_read(good, &len);
		cr_assert(img);
		cr_assert_eq(tu_write(db, img, len), 0);
		free(img);
		cr_assert_eq(sqlite3_open(db, &sq), SQLITE_OK);
		cr_assert_eq(sqlite3_exec(sq, "PRAGMA user_version=99", NULL, NULL, NULL), SQLITE_OK);
		sqlite3_close(sq);
		snprintf(args, sizeof args, "analyze --db %s", db);
		expect_cli_db_error(args, db, "newer, analyze");
		snprintf(args, sizeof args, "import --db %s %s", db, log);
		expect_cli_db_error(args, db, "newer, import");
	}
	/* A foreign SQLite database (not a cvc one). */
	{
		sqlite3 *sq = NULL;

		snprintf(db, sizeof db, "%s", tu_path(dir, "foreign.db"));
		cr_assert_eq(sqlite3_open(db, &sq), SQLITE_OK);
		cr_assert_eq(sqlite3_exec(sq, "CREATE TABLE t(x); INSERT INTO t VALUES(1)", NULL,
					  NULL, NULL), SQLITE_OK);
		sqlite3_close(sq);
		snprintf(args, sizeof args, "import --db %s %s", db, log);
		expect_cli_db_error(args, db, "foreign, import");
	}
}

/* ---- memory bounds ------------------------------------------------------------------ */

/* Writes a synthetic Kineto trace of about `bytes` bytes to fd. */
static long long write_kineto(int fd, long long bytes)
{
	static const char head[] =
		"{\n  \"schemaVersion\": 1,\n  \"deviceProperties\": [{\"id\": 0, \"name\": "
		"\"NVIDIA H100 80GB HBM3\", \"totalGlobalMem\": 85520809984, \"computeMajor\": 9, "
		"\"computeMinor\": 0, \"numSms\": 132}],\n  \"distributedInfo\": {\"backend\": "
		"\"nccl\", \"rank\": 0, \"world_size\": 8},\n  \"traceEvents\": [\n";
	FILE *f = fdopen(fd, "w");
	long long written = 0, ev = 0;
	long long ts = 1700000000000000LL;

	cr_assert(f);
	written += fprintf(f, "%s", head);
	while (written < bytes) {
		int k = (int)(ev % 64);

		if (ev % 4 == 3)
			written += fprintf(f,
				"  {\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::op_%d\", "
				"\"pid\": 1, \"tid\": 2, \"ts\": %lld, \"dur\": 3, \"args\": "
				"{\"External id\": %lld}},\n", k, ts, ev);
		else
			written += fprintf(f,
				"  {\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"%s_%d\", \"pid\": 0, "
				"\"tid\": %d, \"ts\": %lld, \"dur\": 2, \"args\": {\"External id\": %lld, "
				"\"device\": 0, \"stream\": %d, \"correlation\": %lld, \"grid\": [8, 1, 1], "
				"\"block\": [256, 1, 1], \"registers per thread\": 64}},\n",
				k < 8 ? "ncclDevKernel_AllReduce_Sum_f32_RING_LL" : "sm90_gemm_kernel", k,
				k < 8 ? 20 : 7, ts, ev, k < 8 ? 20 : 7, ev);
		ts += 3;
		ev++;
	}
	written += fprintf(f, "  {\"ph\": \"i\", \"name\": \"end\", \"pid\": 1, \"tid\": 2, "
			   "\"ts\": %lld, \"s\": \"t\"}\n  ]\n}\n", ts);
	cr_assert_eq(fclose(f), 0, "writing the FIFO: %s", strerror(errno));
	return ev;
}

Test(safety, large_trace_through_a_fifo_imports_in_bounded_memory)
{
	const char *dir = tu_tmpdir();
	char fifo[1024], db[1024];
	/* 400 MB (release) is 8x the largest real trace here; ASan: 40 MB. */
	long long bytes = UNDER_ASAN ? 40LL << 20 : 400LL << 20;
	long long events, nact;
	long maxrss = 0;
	pid_t pid;
	int fd, rc;

	snprintf(fifo, sizeof fifo, "%s", tu_path(dir, "trace.fifo"));
	snprintf(db, sizeof db, "%s", tu_path(dir, "big.db"));
	cr_assert_eq(mkfifo(fifo, 0600), 0, "mkfifo: %s", strerror(errno));
	pid = fork();
	cr_assert(pid >= 0);
	if (pid == 0) {
		/*
		 * `cvc import` itself: format detection reads the FIFO's head
		 * and hands it on (profiler/import/stream.c), so what is
		 * measured is the whole command a user runs on a pipe.
		 */
		int null = open("/dev/null", O_WRONLY);

		if (null >= 0)
			dup2(null, STDOUT_FILENO);
		execl(CVC_TOOL, "cvc", "import", "--db", db, "--run", "fifo", fifo, (char *)NULL);
		_exit(127);
	}
	fd = open(fifo, O_WRONLY);
	cr_assert(fd >= 0, "open fifo: %s", strerror(errno));
	events = write_kineto(fd, bytes);
	rc = reap(pid, &maxrss);
	cr_assert_eq(rc, 0, "import through the FIFO: exit %d", rc);
	{
		sqlite3 *sq = open_ro(db);

		nact = one_int(sq, "SELECT count(*) FROM activities");
		sqlite3_close(sq);
	}
	/* Three events in four are kernels. */
	cr_expect_eq(nact, events - events / 4, "activities %lld of %lld events", nact, events);
	cr_log_info("fifo import: %lld MB, %lld events, peak RSS %ld MB", bytes >> 20, events,
		    maxrss >> 10);
	if (!UNDER_ASAN)
		cr_expect_lt(maxrss, 128L * 1024, "peak RSS %ld KiB for a %lld MiB trace", maxrss,
			     bytes >> 20);
}

/* Writes a Kineto trace of n kernels, each with its own name of about 1 MiB. */
static void write_long_names(int fd, int n)
{
	FILE *f = fdopen(fd, "w");
	size_t len = (1u << 20) - 64;
	char *pad = malloc(len + 1);

	cr_assert(f && pad);
	memset(pad, 'x', len);
	pad[len] = '\0';
	fprintf(f, "{\"traceEvents\": [\n");
	for (int i = 0; i < n; i++)
		fprintf(f, "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k%05d_%s\", \"pid\": 0, "
			"\"tid\": 7, \"ts\": %d, \"dur\": 5, \"args\": {\"device\": 0, "
			"\"stream\": 7, \"correlation\": %d}}%s\n", i, pad, 10 * i, i + 1,
			i + 1 < n ? "," : "");
	fprintf(f, "]}\n");
	free(pad);
	cr_assert_eq(fclose(f), 0, "writing the FIFO: %s", strerror(errno));
}

/*
 * Memory must not grow with the number of distinct kernel names (issue 14
 * item 3): 96 names of 1 MiB once peaked at 110 MB in `cvc import` (the
 * suspect-communication check grouped rows carrying whole names) and at
 * 220 MB in `cvc report` (top kernels ranked the same way).
 */
Test(safety, distinct_long_names_stay_in_bounded_memory)
{
	const char *dir = tu_tmpdir();
	char fifo[1024], db[1024], html[1024];
	int n = UNDER_ASAN ? 8 : 96;
	long rss[3] = {0, 0, 0};
	pid_t pid;
	int fd, rc;

	snprintf(fifo, sizeof fifo, "%s", tu_path(dir, "names.fifo"));
	snprintf(db, sizeof db, "%s", tu_path(dir, "names.db"));
	snprintf(html, sizeof html, "%s", tu_path(dir, "names.html"));
	cr_assert_eq(mkfifo(fifo, 0600), 0, "mkfifo: %s", strerror(errno));
	{
		char *argv[] = {CVC_TOOL, "import", "--db", db, fifo, NULL};

		pid = spawn(argv, NULL);
	}
	fd = open(fifo, O_WRONLY);
	cr_assert(fd >= 0, "open fifo: %s", strerror(errno));
	write_long_names(fd, n);
	rc = reap(pid, &rss[0]);
	cr_assert_eq(rc, 0, "import of %d long names: exit %d", n, rc);
	{
		sqlite3 *sq = open_ro(db);

		cr_expect_eq(one_int(sq, "SELECT count(DISTINCT name_id) FROM activities"), n);
		sqlite3_close(sq);
	}
	{
		char *argv[] = {CVC_TOOL, "classify", "--unknown", "--db", db, NULL};

		rc = reap(spawn(argv, NULL), &rss[1]);
		cr_assert_eq(rc, 0, "classify --unknown: exit %d", rc);
	}
	{
		char *argv[] = {CVC_TOOL, "report", "--db", db, "-o", html, NULL};

		rc = reap(spawn(argv, NULL), &rss[2]);
		cr_assert_eq(rc, 0, "report: exit %d", rc);
	}
	cr_log_info("%d distinct 1 MiB names: peak RSS import %ld MB, classify --unknown %ld MB, "
		    "report %ld MB", n, rss[0] >> 10, rss[1] >> 10, rss[2] >> 10);
	if (!UNDER_ASAN)
		for (int i = 0; i < 3; i++)
			cr_expect_lt(rss[i], 64L * 1024, "%s: peak RSS %ld KiB for %d names",
				     (const char *[]){"import", "classify --unknown", "report"}[i],
				     rss[i], n);
}

/* Writes text gzip-compressed to path. */
static void write_gz(const char *path, const char *text)
{
	gzFile gz = gzopen(path, "wb");

	cr_assert(gz, "gzopen %s", path);
	cr_assert_eq(gzputs(gz, text), (int)strlen(text));
	cr_assert_eq(gzclose(gz), Z_OK);
}

/* Runs `TOOL ARGS` with a shell prefix; asserts the exit code and that
 * stderr holds want (and not refuse, when given). */
static void expect_tool_error(const char *tool, const char *prefix, const char *args, int code,
			      const char *want, const char *refuse)
{
	char cmd[8192];
	char *err = NULL;
	int rc;

	snprintf(cmd, sizeof cmd, "%s '%s' %s", prefix, tool, args);
	rc = tu_run(cmd, NULL, &err);
	cr_expect_eq(rc, code, "%s: exit %d, want %d (stderr: %s)", args, rc, code, err);
	cr_expect(err && strstr(err, want), "%s: stderr lacks '%s': %s", args, want, err);
	if (refuse)
		cr_expect(!err || !strstr(err, refuse), "%s: stderr says '%s': %s", args, refuse,
			  err);
	free(err);
}

static void expect_cvc_error(const char *prefix, const char *args, int code, const char *want,
			     const char *refuse)
{
	expect_tool_error(CVC_TOOL, prefix, args, code, want, refuse);
}

/*
 * A folder another user can reach whatever folder the project was cloned
 * into (issue 36 item 12: under `git clone` into `$(mktemp -d)`, mode 0700,
 * `nobody` got "Permission denied" on the path of the build's test folder
 * instead of the answer the test asked for): a fresh folder under /tmp,
 * mode 0777, with a copy of the tool in it, which nobody may also not
 * reach in the build.  Returns the folder; *tool receives the copy's path.
 */
static void public_dir(char *dir, size_t cap, char *tool, size_t tcap)
{
	char cmd[9000];

	snprintf(dir, cap, "/tmp/cvc-public-XXXXXX");
	cr_assert(mkdtemp(dir), "mkdtemp %s: %s", dir, strerror(errno));
	cr_assert_eq(chmod(dir, 0777), 0);
	snprintf(tool, tcap, "%s/cvc", dir);
	snprintf(cmd, sizeof cmd, "cp '%s' '%s' && chmod 0755 '%s'", CVC_TOOL, tool, tool);
	cr_assert_eq(tu_run(cmd, NULL, NULL), 0, "%s", cmd);
}

/*
 * The exit contract holds for failures that are not the input's contents
 * (issue 14 item 11): zlib running out of memory while inflating is exit 1
 * and says so (it was "corrupt gzip data", exit 2), and a trace the user
 * cannot read is exit 2 like a missing one (it was exit 1).
 */
Test(safety, unreadable_or_uninflatable_inputs_keep_the_exit_contract)
{
	char dir[1024], trace[1024], log[1024], db[1024], locked[1024], args[4096], pre[2048];
	static const char kineto[] =
		"{\"traceEvents\": [{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k\", "
		"\"pid\": 0, \"tid\": 7, \"ts\": 1, \"dur\": 2, \"args\": {\"device\": 0}}]}\n";
	static const char nccl[] =
		"#       size         count      type   redop    root     time   algbw   busbw "
		"#wrong     time   algbw   busbw #wrong\n"
		"     1048576        262144     float     sum      -1    20.00   52.43   91.75"
		"      0    20.00   52.43   91.75      0\n";

	snprintf(dir, sizeof dir, "%s", tu_tmpdir());
	snprintf(trace, sizeof trace, "%s", tu_path(dir, "trace.json.gz"));
	snprintf(log, sizeof log, "%s", tu_path(dir, "log.txt.gz"));
	snprintf(db, sizeof db, "%s", tu_path(dir, "t.db"));
	write_gz(trace, kineto);
	write_gz(log, nccl);

	/* zlib out of memory: an LD_PRELOAD module fails its inflate set-up;
	 * ASan must be told that it is not the first library */
	snprintf(pre, sizeof pre,
		 "LD_PRELOAD='%s' ASAN_OPTIONS=\"${ASAN_OPTIONS:+$ASAN_OPTIONS:}"
		 "verify_asan_link_order=0\"", CVC_ZLIB_NOMEM);
	snprintf(args, sizeof args, "import --db '%s' '%s'", db, trace);
	expect_cvc_error(pre, args, 1, "out of memory while inflating", "corrupt");
	snprintf(args, sizeof args, "fit --db '%s' '%s'", db, log);
	expect_cvc_error(pre, args, 1, "out of memory while inflating", "corrupt");

	/* unreadable: mode 000, read by a user who is not root (root reads
	 * anything: the command then runs as nobody, in a folder and with a
	 * copy of the tool nobody can reach wherever the project is) */
	{
		char udir[1024], tool[1100];

		public_dir(udir, sizeof udir, tool, sizeof tool);
		snprintf(locked, sizeof locked, "%s", tu_path(udir, "locked.json"));
		cr_assert_eq(tu_write(locked, kineto, sizeof kineto - 1), 0);
		cr_assert_eq(chmod(locked, 0), 0);
		snprintf(db, sizeof db, "%s", tu_path(udir, "u.db"));
		snprintf(pre, sizeof pre, "%s",
			 geteuid() == 0 ? "setpriv --reuid=65534 --regid=65534 --clear-groups" : "");
		snprintf(args, sizeof args, "import --db '%s' '%s'", db, locked);
		expect_tool_error(tool, pre, args, 2, "Permission denied", NULL);
		snprintf(args, sizeof args, "fit --db '%s' '%s'", db, locked);
		expect_tool_error(tool, pre, args, 2, "Permission denied", NULL);
		snprintf(args, sizeof args, "import --db '%s' '%s'", db, tu_path(udir, "missing.json"));
		expect_tool_error(tool, pre, args, 2, "No such file", NULL);
		snprintf(args, sizeof args, "rm -rf '%s'", udir);
		cr_expect_eq(tu_run(args, NULL, NULL), 0);
	}
}

/*
 * The test above must not depend on where the project was cloned (issue 36
 * item 12): run again from this binary with its scratch folders under a
 * folder of mode 0700, as a checkout in `$(mktemp -d)` or /root has them.
 * It used the scratch folder, which nobody could not enter, and failed
 * with "Permission denied" where "No such file" was asked for.
 */
Test(safety, exit_contract_test_runs_from_a_private_checkout)
{
	char self[4096], priv[64], cmd[9000], *out = NULL;
	ssize_t n;
	int rc;

	if (geteuid() != 0)
		cr_skip_test("only root runs part of the test as another user");
	n = readlink("/proc/self/exe", self, sizeof self - 1);
	cr_assert(n > 0);
	self[n] = '\0';
	snprintf(priv, sizeof priv, "/tmp/cvc-private-XXXXXX");
	cr_assert(mkdtemp(priv));
	cr_assert_eq(chmod(priv, 0700), 0);
	snprintf(cmd, sizeof cmd,
		 "env -i PATH=\"$PATH\" ASAN_OPTIONS=\"${ASAN_OPTIONS-}\" "
		 "LSAN_OPTIONS=\"${LSAN_OPTIONS-}\" UBSAN_OPTIONS=\"${UBSAN_OPTIONS-}\" "
		 "CVC_TEST_TMP='%s/testtmp' '%s' --jobs=1 "
		 "--filter 'safety/unreadable_or_uninflatable_inputs_keep_the_exit_contract' 2>&1",
		 priv, self);
	rc = tu_run(cmd, &out, NULL);
	cr_expect_eq(rc, 0, "exit %d:\n%s", rc, out);
	cr_expect(out && strstr(out, "Passing: 1"), "%s", out);
	free(out);
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", priv);
	cr_expect_eq(tu_run(cmd, NULL, NULL), 0);
}

/* ---- interrupted imports leave no temporary files (issue 14 item 7) ---------------- */

/* Number of entries in dir, "." and ".." aside. */
static int count_entries(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	cr_assert(d, "opendir %s: %s", dir, strerror(errno));
	while ((e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			n++;
	closedir(d);
	return n;
}

/* Polls until dir holds at least want entries (10 s at most). */
static int wait_entries(const char *dir, int want)
{
	for (int i = 0; i < 1000; i++) {
		int n = count_entries(dir);

		if (n >= want)
			return n;
		sleep_ms(10);
	}
	return count_entries(dir);
}

/* Starts `cvc import ARGS` with TMPDIR=tmp, stdin from fd_in (or unchanged
 * when -1), output discarded. */
static pid_t spawn_import(const char *tmp, int fd_in, int fd_close, char *const argv[])
{
	pid_t pid = fork();

	cr_assert(pid >= 0, "fork: %s", strerror(errno));
	if (pid == 0) {
		int null = open("/dev/null", O_WRONLY);

		if (fd_in >= 0)
			dup2(fd_in, STDIN_FILENO);
		if (fd_close >= 0)
			close(fd_close);
		if (null >= 0) {
			dup2(null, STDOUT_FILENO);
			dup2(null, STDERR_FILENO);
		}
		setenv("TMPDIR", tmp, 1);
		execv(CVC_TOOL, argv);
		_exit(127);
	}
	return pid;
}

static void write_fully(int fd, const void *buf, size_t n)
{
	const char *p = buf;

	while (n) {
		ssize_t w = write(fd, p, n);

		if (w < 0 && errno == EINTR)
			continue;
		cr_assert(w > 0, "write: %s", strerror(errno));
		p += w;
		n -= (size_t)w;
	}
}

/*
 * SIGTERM while an import holds temporary files: a SQLite export read from
 * stdin (spilled to a private copy) and a `-j 2` import of two FIFOs (one
 * shard each), both stopped mid-input.  Before the fix the copy and both
 * shards stayed in $TMPDIR.
 */
Test(safety, interrupted_imports_leave_no_temporary_files)
{
	char dir[1024], tmp[1024], db[1024], src[1024], fa[1024], fb[1024];
	char *sqlbuf = NULL, *kin = NULL;
	size_t sqllen = 0, kinlen = 0, kincap = 200000;
	int pfd[2], rc, n;
	pid_t pid;

	snprintf(dir, sizeof dir, "%s", tu_tmpdir());
	snprintf(tmp, sizeof tmp, "%s", tu_path(dir, "tmp"));
	snprintf(db, sizeof db, "%s", tu_path(dir, "x.db"));
	snprintf(src, sizeof src, "%s", tu_path(dir, "export.sqlite"));
	snprintf(fa, sizeof fa, "%s", tu_path(dir, "a.json"));
	snprintf(fb, sizeof fb, "%s", tu_path(dir, "b.json"));
	cr_assert_eq(mkdir(tmp, 0700), 0);
	{
		/* any SQLite file larger than what detection reads ahead */
		sqlite3 *sq = NULL;

		cr_assert_eq(sqlite3_open(src, &sq), SQLITE_OK);
		cr_assert_eq(sqlite3_exec(sq, "CREATE TABLE t(x); WITH RECURSIVE c(i) AS "
					  "(SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < 600) "
					  "INSERT INTO t SELECT randomblob(1000) FROM c", NULL, NULL,
					  NULL), SQLITE_OK);
		sqlite3_close(sq);
		sqlbuf = tu_read(src, &sqllen);
		cr_assert(sqlbuf && sqllen > 400000, "export of %zu bytes", sqllen);
	}

	/* stdin: the first 400 kB (past what detection and zlib read ahead), then
	 * nothing until the signal */
	cr_assert_eq(pipe(pfd), 0);
	{
		char *argv[] = {CVC_TOOL, "import", "--db", db, "-", NULL};

		pid = spawn_import(tmp, pfd[0], pfd[1], argv);
	}
	close(pfd[0]);
	write_fully(pfd[1], sqlbuf, 400000);
	n = wait_entries(tmp, 1);
	cr_expect_geq(n, 1, "no temporary copy appeared: the test did not reach its point");
	kill(pid, SIGTERM);
	rc = reap(pid, NULL);
	close(pfd[1]);
	cr_expect_eq(rc, 128 + SIGTERM, "stdin import: exit %d", rc);
	cr_expect_eq(count_entries(tmp), 0, "stdin import left %d temporary files",
		     count_entries(tmp));

	/* -j 2 over two FIFOs: each job's shard exists while it waits */
	kin = malloc(kincap);
	cr_assert(kin);
	kinlen = (size_t)snprintf(kin, kincap, "{\"traceEvents\": [\n");
	for (int i = 0; kinlen + 300 < kincap; i++)
		kinlen += (size_t)snprintf(kin + kinlen, kincap - kinlen,
			"{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k%d\", \"pid\": 0, "
			"\"tid\": 7, \"ts\": %d, \"dur\": 2, \"args\": {\"device\": 0, "
			"\"stream\": 7, \"correlation\": %d}},\n", i % 7, 3 * i, i + 1);
	cr_assert_eq(mkfifo(fa, 0600), 0);
	cr_assert_eq(mkfifo(fb, 0600), 0);
	{
		char *argv[] = {CVC_TOOL, "import", "-j", "2", "--db", db, fa, fb, NULL};
		int wa, wb;

		pid = spawn_import(tmp, -1, -1, argv);
		wa = open(fa, O_WRONLY);
		wb = open(fb, O_WRONLY);
		cr_assert(wa >= 0 && wb >= 0, "open fifos: %s", strerror(errno));
		write_fully(wa, kin, kinlen);
		write_fully(wb, kin, kinlen);
		n = wait_entries(tmp, 2);
		cr_expect_geq(n, 2, "%d shards appeared: the test did not reach its point", n);
		kill(pid, SIGTERM);
		rc = reap(pid, NULL);
		close(wa);
		close(wb);
	}
	cr_expect_eq(rc, 128 + SIGTERM, "-j 2 import: exit %d", rc);
	cr_expect_eq(count_entries(tmp), 0, "-j 2 import left %d temporary files",
		     count_entries(tmp));
	free(kin);
	free(sqlbuf);
}

Test(safety, million_scenarios_stream_in_bounded_memory)
{
	const char *dir = tu_tmpdir();
	char yaml[1024], csv[1024];
	/* 10^6 rows (release); ASan: 10^5. */
	int batches = UNDER_ASAN ? 100 : 1000;
	char text[1024];
	long maxrss = 0;
	size_t len = 0;
	char *out;
	int rc, n;

	snprintf(yaml, sizeof yaml, "%s", tu_path(dir, "big.yaml"));
	snprintf(csv, sizeof csv, "%s", tu_path(dir, "big.csv"));
	n = snprintf(text, sizeof text,
		     "name: big\nscenarios:\n"
		     "  - model: {name: m, layers: 32, hidden: 4096, heads: 32, kv_heads: 32, "
		     "ffn: 11008, ffn_type: swiglu, vocab: 32000, seq: 4096}\n"
		     "    training: {global_batch: {from: 1, to: %d, step: 1}, micro_batch: 1}\n"
		     "    parallelism: {tp: 1, pp: 1}\n"
		     "    hardware: {gpu: H100-SXM, gpus_per_node: 8, "
		     "gpus: {from: 8, to: 8000, step: 8}}\n",
		     batches);
	cr_assert(n > 0 && (size_t)n < sizeof text);
	cr_assert_eq(tu_write(yaml, text, (size_t)n), 0);
	{
		/* Peak RSS with stdout sent to /dev/null: the projector's own memory. */
		char *argv[] = {CVC_TOOL, "project", yaml, "--csv", "-", NULL};

		rc = reap(spawn(argv, NULL), &maxrss);
		cr_assert_eq(rc, 0, "cvc project: exit %d", rc);
	}
	cr_log_info("%d scenarios: peak RSS %ld KiB", batches * 1000, maxrss);
	if (!UNDER_ASAN)
		cr_expect_lt(maxrss, 64L * 1024, "peak RSS %ld KiB for %d rows", maxrss, batches * 1000);
	/* A smaller copy to a file proves the rows are all there. */
	if (UNDER_ASAN || batches > 10) {
		char *argv[] = {CVC_TOOL, "project", yaml, "--csv", csv, NULL};

		n = snprintf(text, sizeof text,
			     "name: big\nscenarios:\n"
			     "  - model: {name: m, layers: 32, hidden: 4096, heads: 32, kv_heads: 32, "
			     "ffn: 11008, ffn_type: swiglu, vocab: 32000, seq: 4096}\n"
			     "    training: {global_batch: {from: 1, to: 10, step: 1}, micro_batch: 1}\n"
			     "    parallelism: {tp: 1, pp: 1}\n"
			     "    hardware: {gpu: H100-SXM, gpus_per_node: 8, "
			     "gpus: {from: 8, to: 8000, step: 8}}\n");
		cr_assert_eq(tu_write(yaml, text, (size_t)n), 0);
		rc = reap(spawn(argv, NULL), NULL);
		cr_assert_eq(rc, 0);
		out = tu_read(csv, &len);
		cr_assert(out);
		cr_expect_eq(tu_count_lines(out), 10 * 1000 + 1);
		free(out);
	}
}

/* ---- profiler: a full disk loses records, counts them, and says so ------------------ */

#define SP_RECORDS 20000

/* The spool writer as the injection library drives it, in a child whose
 * file size limit (RLIMIT_FSIZE, SIGXFSZ ignored) plays a full disk. */
static void spool_child(const char *spool, const char *lostfile)
{
	struct cvc_spool_proc proc = {0, 1, 77, 1, 2, 3, 0};
	struct cvc_spool_act a;
	struct cvc_spool_meta meta = {4, 0, 0};
	struct rlimit rl, full;
	cvc_spool *sp = NULL;
	static const char *const strs[] = {"host", "fullrun", "test_safety", "lost_records",
					   "sm90_gemm_kernel"};
	char num[32];
	int64_t lost;

	if (cvc_spool_open(spool, 1u << 16, &sp))
		_exit(20);
	for (unsigned i = 0; i < 5; i++)
		cvc_spool_put_str(sp, i + 1, strs[i], strlen(strs[i]));
	cvc_spool_put(sp, CVC_SPOOL_PROC, &proc, sizeof proc);
	if (cvc_spool_flush(sp))
		_exit(21);
	/* The disk fills up: nothing more than 128 KiB in all fits. */
	signal(SIGXFSZ, SIG_IGN);
	getrlimit(RLIMIT_FSIZE, &rl);
	full = rl;
	full.rlim_cur = 128 << 10;
	if (setrlimit(RLIMIT_FSIZE, &full))
		_exit(22);
	memset(&a, 0, sizeof a);
	a.kind = CVC_ACT_KERNEL;
	a.name_sid = 5;
	a.stream = 7;
	for (int i = 0; i < SP_RECORDS; i++) {
		a.start_ns = 1000 + 10LL * i;
		a.end_ns = a.start_ns + 5;
		a.correlation = (uint32_t)i + 1;
		cvc_spool_put(sp, CVC_SPOOL_ACT, &a, sizeof a);
	}
	(void)cvc_spool_flush(sp);  /* fails: counted in lost */
	lost = cvc_spool_lost(sp);
	/* Space comes back before exit: the count itself reaches the file. */
	setrlimit(RLIMIT_FSIZE, &rl);
	meta.n = lost;
	cvc_spool_put(sp, CVC_SPOOL_META, &meta, sizeof meta);
	if (cvc_spool_close(sp))
		_exit(23);
	snprintf(num, sizeof num, "%lld", (long long)lost);
	_exit(tu_write(lostfile, num, strlen(num)) ? 24 : 0);
}

Test(safety, full_disk_loses_records_counts_them_and_analyze_warns)
{
	const char *dir = tu_tmpdir();
	char spool[1024], db[1024], lostfile[1024], args[2200], want[128];
	cvc_materialize_stats ms;
	char err[512] = "";
	char *text, *out = NULL, *serr = NULL;
	long long lost, nact;
	pid_t pid;
	int rc;

	snprintf(spool, sizeof spool, "%s", tu_path(dir, "full.spool"));
	snprintf(db, sizeof db, "%s", tu_path(dir, "full.db"));
	snprintf(lostfile, sizeof lostfile, "%s", tu_path(dir, "lost.txt"));
	pid = fork();
	cr_assert(pid >= 0);
	if (pid == 0)
		spool_child(spool, lostfile);
	rc = reap(pid, NULL);
	/* The program survives the full disk. */
	cr_assert_eq(rc, 0, "writer child: exit %d", rc);
	text = tu_read(lostfile, NULL);
	cr_assert(text);
	lost = strtoll(text, NULL, 10);
	free(text);
	cr_assert(lost > 0 && lost < SP_RECORDS, "lost %lld of %d", lost, SP_RECORDS);

	memset(&ms, 0, sizeof ms);
	cr_assert_eq(cvc_profile_materialize(spool, db, &ms, err, sizeof err), CVC_OK, "%s", err);
	cr_expect_eq(ms.lost_records, lost);
	{
		sqlite3 *sq = open_ro(db);

		nact = one_int(sq, "SELECT count(*) FROM activities");
		sqlite3_close(sq);
	}
	/* Every record is either in the database or counted as lost. */
	cr_expect_eq(nact + lost, SP_RECORDS, "stored %lld + lost %lld", nact, lost);
	expect_integrity(db);

	snprintf(args, sizeof args, "analyze --db %s", db);
	rc = tu_cvc(args, &out, &serr);
	cr_expect_eq(rc, 0, "analyze: exit %d: %s", rc, serr);
	snprintf(want, sizeof want, "warning: run 'fullrun': %lld records were lost while profiling",
		 lost);
	cr_expect(serr && strstr(serr, want), "stderr: %s", serr);
	free(out);
	free(serr);
}
