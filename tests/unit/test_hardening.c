/*
 * test_hardening.c - no data lost to a neighbour's failure, no file
 * replaced that cvc did not create (issue 36 items 1-6), with real
 * processes running at once and real signals:
 *
 * 1. a first import that fails must not remove a database another import
 *    wrote into meanwhile;
 * 2. an output that names a device, FIFO or symbolic link is refused, and
 *    the device or link is left as it was;
 * 3. parallel first imports into one new database all succeed;
 * 4. an output that is one of the command's inputs, or another of its
 *    outputs, is refused and the input left byte for byte;
 * 5. a planted file or link where cvc once wrote its temporary file is
 *    never followed;
 * 6. SIGTERM, SIGINT or SIGHUP during report, project or a first import
 *    leaves no temporary file, no half output over a good earlier one, and
 *    no database the import created.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <criterion/criterion.h>
#include <sqlite3.h>

#include "cvc/cvc_db.h"
#include "testutil.h"

/* ---- processes ------------------------------------------------------------- */

/* Starts `cvc ARGS...` (NULL-terminated) with stdout and stderr into errpath. */
static pid_t start(const char *errpath, ...)
{
	char *argv[32];
	va_list ap;
	int n = 0;
	pid_t pid;

	argv[n++] = CVC_TOOL;
	va_start(ap, errpath);
	while (n < 31 && (argv[n] = va_arg(ap, char *)))
		n++;
	va_end(ap);
	argv[n] = NULL;
	pid = fork();
	cr_assert(pid >= 0, "fork: %s", strerror(errno));
	if (pid == 0) {
		int fd = open(errpath ? errpath : "/dev/null", O_WRONLY | O_CREAT | O_TRUNC, 0644);

		/* the signals the tests send act as they do in a shell's foreground */
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		signal(SIGHUP, SIG_DFL);

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

/* Exit code of pid, 128+signal when a signal ended it. */
static int reap(pid_t pid)
{
	int status = 0;
	pid_t r;

	do
		r = waitpid(pid, &status, 0);
	while (r < 0 && errno == EINTR);
	cr_assert_eq(r, pid, "waitpid: %s", strerror(errno));
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static void sleep_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};

	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* ---- folders --------------------------------------------------------------- */

/* A fresh folder (tu_tmpdir), copied into buf: tu_tmpdir's buffer is
 * reused by every tu_cvc call. */
static const char *fresh_dir(char buf[4096])
{
	snprintf(buf, 4096, "%s", tu_tmpdir());
	return buf;
}

/* The entries of dir ("." and ".." aside), sorted, one a line, into buf. */
static const char *listing(const char *dir, char *buf, size_t cap)
{
	char names[256][256];
	int n = 0;
	size_t off = 0;
	DIR *d = opendir(dir);
	struct dirent *e;

	cr_assert(d, "opendir %s", dir);
	while ((e = readdir(d)) && n < 256)
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			snprintf(names[n++], sizeof names[0], "%s", e->d_name);
	closedir(d);
	qsort(names, (size_t)n, sizeof names[0], (int (*)(const void *, const void *))strcmp);
	buf[0] = '\0';
	for (int i = 0; i < n; i++)
		off += (size_t)snprintf(buf + off, off < cap ? cap - off : 0, "%s\n", names[i]);
	return buf;
}

/* 1 when dir holds an entry whose name contains part. */
static int has_entry(const char *dir, const char *part)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int hit = 0;

	if (!d)
		return 0;
	while (!hit && (e = readdir(d)))
		hit = strstr(e->d_name, part) != NULL;
	closedir(d);
	return hit;
}

/* Waits (polling every millisecond, at most secs) until dir holds an entry
 * containing one of the parts, or pid has ended; 1 when one was seen. */
static int wait_entry(const char *dir, const char *const *parts, pid_t pid, double secs)
{
	double t0 = now_s();

	while (now_s() - t0 < secs) {
		for (int i = 0; parts[i]; i++)
			if (has_entry(dir, parts[i]))
				return 1;
		if (waitpid(pid, NULL, WNOHANG) == pid)
			cr_assert_fail("the command ended before it was interrupted");
		sleep_ms(1);
	}
	return 0;
}

static void expect_file(const char *path, const char *want)
{
	char *got = tu_read(path, NULL);

	cr_assert(got, "'%s' is gone", path);
	cr_expect_str_eq(got, want, "'%s' was replaced", path);
	free(got);
}

/* ---- inputs ---------------------------------------------------------------- */

static const char kineto[] =
	"{\"traceEvents\": [{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"gemm\", "
	"\"pid\": 0, \"tid\": 7, \"ts\": 1, \"dur\": 2, \"args\": {\"device\": 0}}, "
	"{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"ncclKernel_AllReduce\", "
	"\"pid\": 0, \"tid\": 8, \"ts\": 2, \"dur\": 4, \"args\": {\"device\": 0}}]}\n";

static const char nccl_log[] =
	"#       size         count      type   redop    root     time   algbw   busbw "
	"#wrong     time   algbw   busbw #wrong\n"
	"     1048576        262144     float     sum      -1    20.00   52.43   91.75"
	"      0    20.00   52.43   91.75      0\n"
	"     2097152        524288     float     sum      -1    30.00   69.91  122.34"
	"      0    30.00   69.91  122.34      0\n"
	"     4194304       1048576     float     sum      -1    50.00   83.89  146.80"
	"      0    50.00   83.89  146.80      0\n";

/* A Kineto trace of n kernels that is malformed at its very end, so that
 * its import fails after holding the write lock for a while. */
static void write_bad_trace(const char *path, int n)
{
	FILE *f = fopen(path, "w");

	cr_assert(f);
	fputs("{\"traceEvents\": [", f);
	for (int i = 0; i < n; i++)
		fprintf(f, "%s{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k%d\", \"pid\": 0, "
			   "\"tid\": 7, \"ts\": %d, \"dur\": 5, \"args\": {\"device\": 0}}",
			i ? ", " : "", i % 50, i * 10);
	fputs(",, ]}\n", f);
	cr_assert_eq(fclose(f), 0);
}

static long long db_count(const char *db, const char *sql)
{
	sqlite3 *sq = NULL;
	long long v;

	cr_assert_eq(sqlite3_open_v2(db, &sq, SQLITE_OPEN_READONLY, NULL), SQLITE_OK, "%s", db);
	v = tu_sq_int(sq, sql);
	sqlite3_close(sq);
	return v;
}

/* A database of one small Kineto run at dir/name. */
static const char *small_db(const char *dir, const char *name)
{
	static char db[4200];
	char trace[4200], args[9000];

	snprintf(trace, sizeof trace, "%s", tu_path(dir, "small.json"));
	cr_assert_eq(tu_write(trace, kineto, sizeof kineto - 1), 0);
	snprintf(db, sizeof db, "%s", tu_path(dir, name));
	snprintf(args, sizeof args, "import --db '%s' '%s'", db, trace);
	cr_assert_eq(tu_cvc(args, NULL, NULL), 0);
	return db;
}

/* ---- 1. a failed first import keeps what a neighbour wrote --------------------- */

/*
 * `cvc import --db n.db big-bad.json & sleep .3; cvc import --db n.db --run
 * precious log.txt`: the second waits for the first's lock; the first fails
 * and removes the database it made while it still holds the lock; the
 * second then finds its file gone and imports into the path anew.  Before,
 * the first removed n.db after the second had said "imported".
 */
Test(hardening, failed_first_import_keeps_a_neighbours_rows)
{
	char dirbuf[4096];
	const char *dir = fresh_dir(dirbuf);
	char bad[4200], log[4200], db[4200], errs[2][4200];
	const char *const wal[] = {"n.db-wal", NULL};
	pid_t a, b;
	int ra, rb;

	snprintf(bad, sizeof bad, "%s", tu_path(dir, "big-bad.json"));
	snprintf(log, sizeof log, "%s", tu_path(dir, "log.txt"));
	snprintf(db, sizeof db, "%s", tu_path(dir, "n.db"));
	snprintf(errs[0], sizeof errs[0], "%s", tu_path(dir, "a.err"));
	snprintf(errs[1], sizeof errs[1], "%s", tu_path(dir, "b.err"));
	write_bad_trace(bad, 200000);
	cr_assert_eq(tu_write(log, nccl_log, sizeof nccl_log - 1), 0);
	a = start(errs[0], "import", "--db", db, bad, NULL);
	/* the first holds its write lock once its log exists */
	cr_assert(wait_entry(dir, wal, a, 30), "the first import never began");
	b = start(errs[1], "import", "--db", db, "--run", "precious", log, NULL);
	ra = reap(a);
	rb = reap(b);
	cr_expect_eq(ra, 2, "the bad import: exit %d", ra);
	cr_assert_eq(rb, 0, "the good import: exit %d (%s)", rb, tu_read(errs[1], NULL));
	cr_assert_eq(access(db, F_OK), 0, "'%s' was removed after the good import", db);
	cr_expect_eq(db_count(db, "SELECT count(*) FROM runs WHERE name='precious'"), 1);
	cr_expect_eq(db_count(db, "SELECT count(*) FROM nccl_tests"), 6); /* in and out of place */
	cr_expect_eq(db_count(db, "SELECT count(*) FROM activities"), 0);
}

/*
 * The decision in the library: a handle that created a database removes it
 * on a failed first transaction only when no other connection has
 * committed to it since; otherwise it is kept with the other's rows.
 */
Test(hardening, created_database_is_removed_only_if_nobody_else_wrote)
{
	char dirbuf[4096];
	const char *dir = fresh_dir(dirbuf);
	char db[4200];
	cvc_db *a = NULL, *b = NULL;
	cvc_run_info ri = {.name = "neighbour"};
	int64_t id;

	snprintf(db, sizeof db, "%s", tu_path(dir, "d.db"));
	/* alone: the failed first transaction removes it, side files too */
	cr_assert_eq(cvc_db_open(db, CVC_DB_CREATE | CVC_DB_DISCARD, &a), CVC_OK);
	cr_assert_eq(cvc_db_begin(a), CVC_OK);
	cvc_db_rollback(a);
	cvc_db_close(a);
	cr_expect_neq(access(db, F_OK), 0, "'%s' stayed after a failed first import", db);
	cr_expect(!has_entry(dir, "d.db-"), "side files stayed");
	/* closed unused: removed too (cvc fit --db typo.db with no sources) */
	cr_assert_eq(cvc_db_open(db, CVC_DB_CREATE | CVC_DB_DISCARD, &a), CVC_OK);
	cvc_db_close(a);
	cr_expect_neq(access(db, F_OK), 0, "'%s' stayed after a command that wrote nothing", db);
	/* a neighbour committed before our first transaction: kept */
	cr_assert_eq(cvc_db_open(db, CVC_DB_CREATE | CVC_DB_DISCARD, &a), CVC_OK);
	cr_assert_eq(cvc_db_open(db, CVC_DB_CREATE | CVC_DB_DISCARD, &b), CVC_OK);
	cr_assert_eq(cvc_db_begin(b), CVC_OK);
	cr_assert_eq(cvc_db_run_new(b, &ri, &id), CVC_OK);
	cr_assert_eq(cvc_db_commit(b), CVC_OK);
	cvc_db_close(b);
	cr_assert_eq(cvc_db_begin(a), CVC_OK);
	cvc_db_rollback(a);
	cvc_db_close(a);
	cr_assert_eq(access(db, F_OK), 0, "'%s' was removed with a neighbour's run in it", db);
	cr_expect_eq(db_count(db, "SELECT count(*) FROM runs WHERE name='neighbour'"), 1);
	/* a file that was there before is never ours to remove */
	cr_assert_eq(cvc_db_open(db, CVC_DB_CREATE | CVC_DB_DISCARD, &a), CVC_OK);
	cr_assert_eq(cvc_db_begin(a), CVC_OK);
	cvc_db_rollback(a);
	cvc_db_close(a);
	cr_expect_eq(access(db, F_OK), 0);
}

/* ---- 2. devices and links are never replaced --------------------------------------- */

/*
 * Run as root, `cvc report -o /dev/null` replaced the system's /dev/null
 * with a regular file.  Checked on a private copy of the device (mknod,
 * root only) or on a FIFO otherwise, and on a symbolic link.
 */
Test(hardening, outputs_refuse_devices_fifos_and_links)
{
	char dirbuf[4096];
	const char *dir = fresh_dir(dirbuf);
	char dev[4200], link[4200], victim[4200], args[9000], *err = NULL;
	const char *db = small_db(dir, "a.db");
	struct stat sb;
	int is_dev;

	snprintf(dev, sizeof dev, "%s", tu_path(dir, "null"));
	is_dev = mknod(dev, S_IFCHR | 0666, makedev(1, 3)) == 0;
	if (!is_dev)
		cr_assert_eq(mkfifo(dev, 0666), 0, "mkfifo: %s", strerror(errno));
	snprintf(victim, sizeof victim, "%s", tu_path(dir, "victim"));
	snprintf(link, sizeof link, "%s", tu_path(dir, "out.html"));
	cr_assert_eq(tu_write(victim, "precious\n", 9), 0);
	cr_assert_eq(symlink(victim, link), 0);
	{
		const char *const cmds[] = {"report --db '%s' -o '%s'", "export --db '%s' --perfetto '%s'",
					    "report --db '%s' -o '%s' --csv-dir tabs"};

		for (size_t i = 0; i < 3; i++) {
			for (int t = 0; t < 2; t++) {
				snprintf(args, sizeof args, cmds[i], db, t ? link : dev);
				cr_expect_eq(tu_cvc(args, NULL, &err), 2, "%s: %s", args, err);
				cr_expect(err && strstr(err, t ? "symbolic link" : "not a regular file"),
					  "%s: %s", args, err);
				free(err);
				err = NULL;
			}
		}
	}
	snprintf(args, sizeof args, "project --csv '%s'", dev);
	cr_expect_eq(tu_cvc(args, NULL, NULL), 2, "%s", args);
	cr_assert_eq(lstat(dev, &sb), 0);
	cr_expect(is_dev ? S_ISCHR(sb.st_mode) : S_ISFIFO(sb.st_mode), "'%s' was replaced", dev);
	cr_assert_eq(lstat(link, &sb), 0);
	cr_expect(S_ISLNK(sb.st_mode), "'%s' is no longer a link", link);
	expect_file(victim, "precious\n");
}

/* ---- 3. parallel first imports ------------------------------------------------------- */

/* 34 of 90 parallel imports into a new database failed with "table runs
 * already exists": the schema was checked before the write lock.  Later,
 * under load, one importer in about four rounds failed with "database is
 * locked": switching the new file to WAL needs its exclusive lock, and
 * SQLite refuses that at once, busy timeout or not, while another importer
 * reads the header (db/dbfile.c journal_pragma() waits and retries). */
Test(hardening, parallel_first_imports_all_succeed)
{
	enum { N = 32 };
	char dirbuf[4096];
	const char *dir = fresh_dir(dirbuf);
	char log[4200], db[4200], run[N][16], errf[N][4200];
	pid_t pid[N];

	snprintf(log, sizeof log, "%s", tu_path(dir, "log.txt"));
	snprintf(db, sizeof db, "%s", tu_path(dir, "p.db"));
	cr_assert_eq(tu_write(log, nccl_log, sizeof nccl_log - 1), 0);
	for (int i = 0; i < N; i++) {
		snprintf(run[i], sizeof run[i], "r%d", i);
		snprintf(errf[i], sizeof errf[i], "%s/err%d", dir, i);
		pid[i] = start(errf[i], "import", "--db", db, "--run", run[i], log, NULL);
	}
	for (int i = 0; i < N; i++) {
		int rc = reap(pid[i]);

		cr_expect_eq(rc, 0, "import %d: exit %d: %s", i, rc, tu_read(errf[i], NULL));
	}
	cr_expect_eq(db_count(db, "SELECT count(*) FROM runs"), N);
	cr_expect_eq(db_count(db, "SELECT count(*) FROM nccl_tests"), 6 * N);
}

/* ---- 4. outputs never replace inputs ---------------------------------------------- */

/* Copies pattern into buf with each {x} of vals[i][0] replaced by vals[i][1]. */
static void subst(char *buf, size_t cap, const char *pattern, const char *const vals[4][2])
{
	size_t n = 0;

	for (const char *p = pattern; *p && n + 1 < cap;) {
		int hit = 0;

		for (int i = 0; i < 4 && !hit; i++) {
			size_t k = strlen(vals[i][0]);

			if (strncmp(p, vals[i][0], k) == 0) {
				n += (size_t)snprintf(buf + n, cap - n, "%s", vals[i][1]);
				p += k;
				hit = 1;
			}
		}
		if (!hit)
			buf[n++] = *p++;
	}
	buf[n < cap ? n : cap - 1] = '\0';
}

/* Each command line names an input as an output: exit 2, the input byte
 * for byte as it was. */
Test(hardening, outputs_never_replace_inputs)
{
	char dirbuf[4096];
	const char *dir = fresh_dir(dirbuf);
	char yaml[4200], csv[4200], tabs[4200], args[9000], *before = NULL, *err = NULL;
	const char *db = small_db(dir, "a.db");
	size_t len;
	static const char study[] =
		"model: {name: m, layers: 4, hidden: 512, heads: 8, vocab: 1000, seq: 512}\n"
		"hardware: {gpu: H100-SXM, gpus: [8, 16]}\n";

	snprintf(yaml, sizeof yaml, "%s", tu_path(dir, "s.yaml"));
	snprintf(csv, sizeof csv, "%s", tu_path(dir, "p.csv"));
	snprintf(tabs, sizeof tabs, "%s", tu_path(dir, "tabs"));
	cr_assert_eq(tu_write(yaml, study, sizeof study - 1), 0);
	snprintf(args, sizeof args, "project '%s' --csv '%s'", yaml, csv);
	cr_assert_eq(tu_cvc(args, NULL, NULL), 0);
	/* the projection inside the --csv-dir, named as the table it holds */
	cr_assert_eq(mkdir(tabs, 0755), 0);
	snprintf(args, sizeof args, "project '%s' --csv '%s/scenarios.csv'", yaml, tabs);
	cr_assert_eq(tu_cvc(args, NULL, NULL), 0);
	{
		/* {d} the database, {p} the projection, {s} the study, {t} the folder */
		const char *const cmds[][2] = {
			{"export --db {d} --perfetto {d}", "{d}"},
			{"report --db {d} -o {d}", "{d}"},
			{"report --db {d} --projection {p} -o {p}", "{p}"},
			{"report --db {d} --scenario {s} -o {s}", "{s}"},
			{"project {s} --csv {s}", "{s}"},
			{"project {s} --csv {p} --json {p}", "{p}"},
			{"project {s} --db {d} --json {d}", "{d}"},
			{"report --no-db --projection {t}/scenarios.csv -o {t}/r.html --csv-dir {t}",
			 "{t}/scenarios.csv"},
		};
		const char *const vals[4][2] = {{"{d}", db}, {"{p}", csv}, {"{s}", yaml}, {"{t}", tabs}};

		for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++) {
			char in[4200], *after;

			subst(in, sizeof in, cmds[i][1], vals);
			before = tu_read(in, &len);
			cr_assert(before, "%s", in);
			subst(args, sizeof args, cmds[i][0], vals);
			cr_expect_eq(tu_cvc(args, NULL, &err), 2, "%s: %s", args, err);
			cr_expect(err && (strstr(err, "one of this command's inputs") ||
					  strstr(err, "another output of this command")),
				  "%s: %s", args, err);
			after = tu_read(in, NULL);
			cr_expect(after && memcmp(before, after, len) == 0, "%s: '%s' changed", args, in);
			free(before);
			free(after);
			free(err);
			err = NULL;
		}
	}
	cr_expect(!has_entry(dir, ".cvc-"), "a temporary file stayed");
	cr_expect(!has_entry(tabs, ".cvc-"), "a temporary file stayed");
	cr_expect(!has_entry(tabs, "r.html"), "the refused report was written");
}

/* ---- 5. planted temporaries ---------------------------------------------------------- */

/* cvc wrote `<path>.tmp` with fopen("w"): a link planted there made it
 * overwrite the link's target.  Now its temporary files have random names
 * and are made with O_EXCL|O_NOFOLLOW. */
Test(hardening, planted_temporary_links_are_not_followed)
{
	char dirbuf[4096];
	const char *dir = fresh_dir(dirbuf);
	char victim[4200], plant[4300], out[4200], args[9000];
	const char *db = small_db(dir, "a.db");
	const char *const targets[][2] = {{"report --db '%s' -o '%s'", "r.html"},
					  {"export --db '%s' --perfetto '%s'", "e.json"}};

	snprintf(victim, sizeof victim, "%s", tu_path(dir, "victim"));
	cr_assert_eq(tu_write(victim, "precious\n", 9), 0);
	for (size_t i = 0; i < 2; i++) {
		struct stat sb;

		snprintf(out, sizeof out, "%s", tu_path(dir, targets[i][1]));
		snprintf(plant, sizeof plant, "%s.tmp", out);
		cr_assert_eq(symlink(victim, plant), 0);
		snprintf(args, sizeof args, targets[i][0], db, out);
		cr_expect_eq(tu_cvc(args, NULL, NULL), 0, "%s", args);
		expect_file(victim, "precious\n");
		cr_expect(stat(out, &sb) == 0 && S_ISREG(sb.st_mode) && sb.st_size > 9, "%s", out);
	}
	cr_expect(!has_entry(dir, ".cvc-"), "a temporary file stayed");
}

/* ---- 6. interrupts ---------------------------------------------------------------------- */

/* A projection of about rows scenarios at dir/name.csv (its study beside it). */
static void write_projection(const char *dir, const char *name, int rows)
{
	char yaml[4200], args[9000], text[1024];
	int n = snprintf(text, sizeof text,
			 "name: %s\nmodel: {name: m, layers: 32, hidden: 4096, heads: 32, "
			 "vocab: 32000, seq: 4096}\n"
			 "training: {global_batch: {from: 1, to: %d, step: 1}}\n"
			 "hardware: {gpu: H100-SXM, gpus: {from: 8, to: 8000, step: 8}}\n",
			 name, rows / 1000);

	snprintf(yaml, sizeof yaml, "%s/%s.yaml", dir, name);
	cr_assert_eq(tu_write(yaml, text, (size_t)n), 0);
	snprintf(args, sizeof args, "project '%s' --csv '%s/%s.csv'", yaml, dir, name);
	cr_assert_eq(tu_cvc(args, NULL, NULL), 0, "%s", args);
}

/* Fills dir/good.* with what an earlier run wrote. */
static void earlier_outputs(const char *dir, const char *const *names)
{
	for (int i = 0; names[i]; i++)
		cr_assert_eq(tu_write(tu_path(dir, names[i]), "good\n", 5), 0);
}

/*
 * SIGTERM while `cvc report` writes: it left X.html.tmp, and a --csv-dir
 * with some tables new and some old.  The signal lands once a temporary
 * file of the page (or a first new table) shows up.
 */
Test(hardening, sigterm_during_report_leaves_the_old_report)
{
	char dirbuf[4096];
	const char *dir = fresh_dir(dirbuf);
	char out[4200], tabs[4200], proj[4200], before[8192], after[8192], tb[8192], ta[8192];
	const char *const earlier[] = {"out.html", NULL};
	const char *const tmps[] = {"out.html.tmp", ".out.html.cvc-", NULL};
	pid_t pid;
	int rc;

	write_projection(dir, "big", 20000);
	snprintf(out, sizeof out, "%s", tu_path(dir, "out.html"));
	snprintf(tabs, sizeof tabs, "%s", tu_path(dir, "tabs"));
	snprintf(proj, sizeof proj, "%s", tu_path(dir, "big.csv"));
	earlier_outputs(dir, earlier);
	cr_assert_eq(mkdir(tabs, 0755), 0);
	cr_assert_eq(tu_write(tu_path(tabs, "scenarios.csv"), "good\n", 5), 0);
	listing(dir, before, sizeof before);
	listing(tabs, tb, sizeof tb);
	pid = start(NULL, "report", "--no-db", "--projection", proj, "-o", out, "--csv-dir", tabs,
		    NULL);
	cr_assert(wait_entry(dir, tmps, pid, 60), "no temporary file of the page appeared");
	kill(pid, SIGTERM);
	rc = reap(pid);
	cr_expect_eq(rc, 128 + SIGTERM, "exit %d", rc);
	cr_expect_str_eq(listing(dir, after, sizeof after), before, "left behind");
	cr_expect_str_eq(listing(tabs, ta, sizeof ta), tb, "--csv-dir changed");
	expect_file(out, "good\n");
	expect_file(tu_path(tabs, "scenarios.csv"), "good\n");
}

/* SIGINT while `cvc project` streams: it left a cut CSV and an unfinished
 * JSON at the final paths, over good files of an earlier run. */
Test(hardening, sigint_during_project_keeps_the_earlier_files)
{
	char dirbuf[4096];
	const char *dir = fresh_dir(dirbuf);
	char yaml[4200], csv[4200], json[4200], before[8192], after[8192];
	const char *const earlier[] = {"x.csv", "x.json", "x.provenance.json", NULL};
	static const char study[] =
		"name: slow\nmodel: {name: m, layers: 32, hidden: 4096, heads: 32, vocab: 32000, "
		"seq: 4096}\ntraining: {global_batch: {from: 1, to: 400, step: 1}}\n"
		"hardware: {gpu: H100-SXM, gpus: {from: 8, to: 8000, step: 8}}\n";
	pid_t pid;
	int rc;

	snprintf(yaml, sizeof yaml, "%s", tu_path(dir, "slow.yaml"));
	snprintf(csv, sizeof csv, "%s", tu_path(dir, "x.csv"));
	snprintf(json, sizeof json, "%s", tu_path(dir, "x.json"));
	cr_assert_eq(tu_write(yaml, study, sizeof study - 1), 0);
	earlier_outputs(dir, earlier);
	listing(dir, before, sizeof before);
	pid = start(NULL, "project", yaml, "--csv", csv, "--json", json, NULL);
	/* some rows written: the old code's CSV has grown past "good\n" by then */
	for (double t0 = now_s(); now_s() - t0 < 60;) {
		struct stat sb;
		DIR *d = opendir(dir);
		struct dirent *e;
		long long grown = 0;

		while (d && (e = readdir(d)))
			if (stat(tu_path(dir, e->d_name), &sb) == 0 && S_ISREG(sb.st_mode) &&
			    sb.st_size > 100000)
				grown = 1;
		if (d)
			closedir(d);
		if (grown)
			break;
		cr_assert_eq(waitpid(pid, NULL, WNOHANG), 0, "the projection ended too soon");
		sleep_ms(2);
	}
	kill(pid, SIGINT);
	rc = reap(pid);
	cr_expect_eq(rc, 128 + SIGINT, "exit %d", rc);
	cr_expect_str_eq(listing(dir, after, sizeof after), before, "left behind");
	for (int i = 0; earlier[i]; i++)
		expect_file(tu_path(dir, earlier[i]), "good\n");
}

/* SIGHUP or SIGTERM during a first import: the new database and its side
 * files stayed.  The import reads a FIFO, so the signal lands while it
 * holds its write transaction open. */
Test(hardening, interrupted_first_import_leaves_no_database)
{
	static const int sigs[] = {SIGHUP, SIGTERM, SIGINT};

	for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) {
		char dirbuf[4096];
	const char *dir = fresh_dir(dirbuf);
		char fifo[4200], db[4200], before[8192], after[8192];
		const char *const wal[] = {"n.db-wal", NULL};
		pid_t pid;
		int rc, fd;

		snprintf(fifo, sizeof fifo, "%s", tu_path(dir, "trace.fifo"));
		snprintf(db, sizeof db, "%s", tu_path(dir, "n.db"));
		cr_assert_eq(mkfifo(fifo, 0600), 0);
		listing(dir, before, sizeof before);
		pid = start(NULL, "import", "--db", db, fifo, NULL);
		fd = open(fifo, O_WRONLY);
		cr_assert(fd >= 0);
		cr_assert_eq(write(fd, "{\"traceEvents\": [", 17), 17);
		cr_assert(wait_entry(dir, wal, pid, 30), "the import never began");
		sleep_ms(50);
		kill(pid, sigs[i]);
		rc = reap(pid);
		close(fd);
		cr_expect_eq(rc, 128 + sigs[i], "exit %d", rc);
		cr_expect_str_eq(listing(dir, after, sizeof after), before, "signal %d left files",
				 sigs[i]);
	}
}

/*
 * A failed first import removes the database it made and that database's
 * -wal and -shm, never a -journal by that name: a database cvc creates is
 * in WAL mode from its first write, so a journal beside it belongs to some
 * other writer (one that created a file at the path after ours was
 * removed, or another program).  Before, the removal unlinked it too.
 */
Test(hardening, failed_first_import_leaves_a_journal_it_did_not_write)
{
	char dirbuf[4096];
	const char *dir = fresh_dir(dirbuf);
	char fifo[4200], db[4200], journal[4200], err[4200], after[8192];
	const char *const wal[] = {"n.db-wal", NULL};
	static const char events[] =
		"{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k\", \"pid\": 0, \"tid\": 7, "
		"\"ts\": 1, \"dur\": 2, \"args\": {\"device\": 0}},, ]}\n";
	pid_t pid;
	int rc, fd;

	snprintf(fifo, sizeof fifo, "%s", tu_path(dir, "trace.fifo"));
	snprintf(db, sizeof db, "%s", tu_path(dir, "n.db"));
	snprintf(journal, sizeof journal, "%s", tu_path(dir, "n.db-journal"));
	snprintf(err, sizeof err, "%s", tu_path(dir, "import.err"));
	cr_assert_eq(mkfifo(fifo, 0600), 0);
	pid = start(err, "import", "--db", db, fifo, NULL);
	fd = open(fifo, O_WRONLY);
	cr_assert(fd >= 0);
	cr_assert_eq(write(fd, "{\"traceEvents\": [", 17), 17);
	cr_assert(wait_entry(dir, wal, pid, 30), "the import never began");
	sleep_ms(50);
	cr_assert_eq(tu_write(journal, "not cvc's\n", 11), 0);
	cr_assert_eq(write(fd, events, sizeof events - 1), (ssize_t)(sizeof events - 1));
	close(fd);
	rc = reap(pid);
	cr_expect_eq(rc, 2, "exit %d (%s)", rc, tu_read(err, NULL));
	cr_expect_neq(access(db, F_OK), 0, "the failed import's database stayed");
	expect_file(journal, "not cvc's\n");
	unlink(err);
	cr_expect_str_eq(listing(dir, after, sizeof after), "n.db-journal\ntrace.fifo\n",
			 "files left");
}
