/*
 * test_import_stream.c - `cvc import` from inputs that can be read once:
 * standard input ("-"), a pipe, a named FIFO (what `<(zcat t.json.gz)`
 * hands over).  Format detection used to read the head of such an input
 * and the importer then saw the rest, so a valid trace was refused as an
 * unrecognised format.  Each real trace is imported both from its file and
 * through a pipe and the stored rows must agree; bad input through a pipe
 * keeps the error contract (the name as given, a byte offset, exit 2, the
 * database as it was) and leaves no temporary copy behind.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>
#include <sqlite3.h>

#include "testutil.h"

#define KINETO "traces/hta-a100-80g-w16-rank0/rank0.json.gz"
#define NSYS "traces/pipit-nsys-sqlite-perlmutter/saxpy-mpi-cuda_nsys_perlmutter0.sqlite.gz"
#define NCCLT "traces/nccl-tests-logs/a100x8_sendrecv_perf.md"

/* Rows every importer may write, and the run's name, as one line. */
static char *summary(const char *db)
{
	static const char sql[] =
		"SELECT (SELECT group_concat(name) FROM runs)||' act='||(SELECT count(*) FROM "
		"activities)||' dur='||(SELECT total(end_ns-start_ns) FROM activities)||' rng='||"
		"(SELECT count(*) FROM ranges)||' coll='||(SELECT count(*) FROM collectives)||"
		"' shapes='||(SELECT count(*) FROM op_shapes)||' launches='||(SELECT count(*) "
		"FROM op_launches)||' nccl='||(SELECT count(*) FROM nccl_tests)||' dev='||"
		"(SELECT count(*) FROM devices)||' ranks='||(SELECT count(*) FROM ranks)";
	sqlite3 *sq = NULL;
	sqlite3_stmt *st = NULL;
	char *s;

	cr_assert_eq(sqlite3_open_v2(db, &sq, SQLITE_OPEN_READONLY, NULL), SQLITE_OK, "%s", db);
	cr_assert_eq(sqlite3_prepare_v2(sq, sql, -1, &st, NULL), SQLITE_OK, "%s",
		     sqlite3_errmsg(sq));
	cr_assert_eq(sqlite3_step(st), SQLITE_ROW);
	s = strdup((const char *)sqlite3_column_text(st, 0));
	sqlite3_finalize(st);
	sqlite3_close(sq);
	cr_assert(s);
	return s;
}

/* The summary of a run with its name (the text before the first blank) cut off. */
static const char *rows_of(const char *s)
{
	const char *sp = strchr(s, ' ');

	return sp ? sp : s;
}

/* A scratch directory of our own: tu_run() takes a new tu_tmpdir() per call. */
static const char *scratch(void)
{
	static char dirs[4][4096];
	static int next;
	char *d = dirs[next++ & 3];

	snprintf(d, 4096, "%s", tu_tmpdir());
	return d;
}

/* Runs a shell line with TMPDIR=dir/tmp; returns the exit status, stderr in *err. */
static int sh(const char *dir, const char *line, char **err)
{
	char cmd[16384];

	snprintf(cmd, sizeof cmd, "mkdir -p '%s/tmp' && TMPDIR='%s/tmp' CVC='%s'; export TMPDIR; %s",
		 dir, dir, CVC_TOOL, line);
	return tu_run(cmd, NULL, err);
}

/* Files left in dir/tmp: the importer's temporary copies must be gone. */
static int leftovers(const char *dir)
{
	char path[4200];
	DIR *d;
	struct dirent *e;
	int n = 0;

	snprintf(path, sizeof path, "%s/tmp", dir);
	d = opendir(path);
	cr_assert(d, "%s", path);
	while ((e = readdir(d)))
		n += e->d_name[0] != '.';
	closedir(d);
	return n;
}

/*
 * Imports trace from its file and through `how` (a shell fragment that
 * reads $F into `cvc import`); the rows must be the same.
 */
static void same_rows(const char *rel, const char *how, const char *want_run)
{
	const char *dir = scratch();
	char file[4096], line[8192], *err = NULL, *a, *b;
	int rc;

	snprintf(file, sizeof file, "%s", tu_shared(rel));
	snprintf(line, sizeof line, "\"$CVC\" import --db '%s/file.db' '%s'", dir, file);
	rc = sh(dir, line, &err);
	cr_assert_eq(rc, 0, "file import: %s", err);
	free(err);
	snprintf(line, sizeof line, "F='%s'; D='%s/pipe.db'; cd '%s' && %s", file, dir, dir, how);
	rc = sh(dir, line, &err);
	cr_assert_eq(rc, 0, "pipe import (%s): exit %d: %s", how, rc, err);
	free(err);
	a = summary(tu_path(dir, "file.db"));
	b = summary(tu_path(dir, "pipe.db"));
	cr_expect_str_eq(rows_of(b), rows_of(a), "%s through '%s'", rel, how);
	cr_expect(strncmp(b, want_run, strlen(want_run)) == 0 && b[strlen(want_run)] == ' ',
		  "run named '%s': %s", want_run, b);
	cr_expect_eq(leftovers(dir), 0, "temporary copies left in %s/tmp", dir);
	cr_log_info("%s via %s: %s", rel, how, b);
	free(a);
	free(b);
}

Test(import_stream, kineto_from_stdin_compressed_and_not)
{
	/* zlib reads both: the compressed bytes, and the JSON zcat made of them. */
	same_rows(KINETO, "cat \"$F\" | \"$CVC\" import --db \"$D\" -", "stdin");
	same_rows(KINETO, "zcat \"$F\" | \"$CVC\" import --db \"$D\" -", "stdin");
}

Test(import_stream, kineto_through_a_named_fifo)
{
	/* What bash's <(zcat F) is: a FIFO-like path; a named one shows its name. */
	same_rows(KINETO, "mkfifo trace.fifo && (zcat \"$F\" > trace.fifo &) && "
			  "\"$CVC\" import --db \"$D\" trace.fifo", "trace.fifo");
}

Test(import_stream, nsys_export_through_a_pipe)
{
	/* SQLite needs to seek: the pipe goes through a private copy. */
	same_rows(NSYS, "cat \"$F\" | \"$CVC\" import --db \"$D\" -", "stdin");
	same_rows(NSYS, "mkfifo n.fifo && (zcat \"$F\" > n.fifo &) && "
			"\"$CVC\" import --db \"$D\" n.fifo", "n.fifo");
}

Test(import_stream, nccl_tests_log_and_cvc_database_through_a_pipe)
{
	const char *dir;
	char line[8192], *err = NULL, *a, *b;

	same_rows(NCCLT, "cat \"$F\" | \"$CVC\" import --db \"$D\" -", "stdin");
	/* A cvc database (a shard from another node) piped in merges like the file. */
	dir = scratch();
	snprintf(line, sizeof line,
		 "cd '%s' && \"$CVC\" import --db shard.db --run r '%s' && "
		 "\"$CVC\" import --db a.db shard.db && cat shard.db | \"$CVC\" import --db b.db -",
		 dir, tu_shared(KINETO));
	cr_assert_eq(sh(dir, line, &err), 0, "%s", err);
	free(err);
	a = summary(tu_path(dir, "a.db"));
	b = summary(tu_path(dir, "b.db"));
	cr_expect_str_eq(rows_of(b), rows_of(a));
	cr_expect_eq(leftovers(dir), 0);
	free(a);
	free(b);
}

Test(import_stream, two_pipes_in_parallel)
{
	const char *dir = scratch();
	char kin[4096], line[8192], *err = NULL, *s;

	snprintf(kin, sizeof kin, "%s", tu_shared(KINETO)); /* tu_shared's buffer is reused */
	snprintf(line, sizeof line,
		 "cd '%s' && mkfifo a.fifo b.fifo && (zcat '%s' > a.fifo &) && (cat '%s' > b.fifo &)"
		 " && \"$CVC\" import --db j.db -j 2 --run both a.fifo b.fifo",
		 dir, kin, tu_shared(NCCLT));
	cr_assert_eq(sh(dir, line, &err), 0, "%s", err);
	free(err);
	s = summary(tu_path(dir, "j.db"));
	/* The Kineto trace's rows (as its file import gives) plus the log's 8 rows. */
	cr_expect(strstr(s, " act=7747 ") && strstr(s, " nccl=8 "), "%s", s);
	cr_expect_eq(leftovers(dir), 0);
	free(s);
}

/* `cvc import` of what `feed` pipes in must fail with msg, leaving db as it was. */
static void refused(const char *dir, const char *feed, const char *arg, const char *msg)
{
	char line[8192], *err = NULL, *before, *after;
	int rc;

	before = summary(tu_path(dir, "keep.db"));
	snprintf(line, sizeof line, "cd '%s' && %s \"$CVC\" import --db keep.db %s", dir, feed, arg);
	rc = sh(dir, line, &err);
	cr_expect_eq(rc, 2, "%s: exit %d", line, rc);
	cr_expect_eq(tu_count_lines(err), 1, "one line: %s", err);
	cr_expect(strstr(err, msg), "want '%s' in: %s", msg, err);
	after = summary(tu_path(dir, "keep.db"));
	cr_expect_str_eq(after, before, "database unchanged");
	cr_expect_eq(leftovers(dir), 0, "temporary copies left after: %s", line);
	free(before);
	free(after);
	free(err);
}

Test(import_stream, bad_input_through_a_pipe_keeps_the_contract)
{
	const char *dir = scratch();
	char line[8192], feed[8192], *err = NULL;

	snprintf(line, sizeof line, "cd '%s' && \"$CVC\" import --db keep.db '%s'", dir,
		 tu_shared(NCCLT));
	cr_assert_eq(sh(dir, line, &err), 0, "%s", err);
	free(err);
	refused(dir, "echo hello |", "-", "'-': byte 0: unrecognised format");
	refused(dir, "", "- < /dev/null", "'-': byte 0: empty file, expected a trace");
	/* A gzip stream cut short: the offset is in the decompressed stream. */
	snprintf(feed, sizeof feed, "head -c 3000 '%s' |", tu_shared(KINETO));
	refused(dir, feed, "-", "'-': byte ");
	refused(dir, feed, "-", "truncated gzip data");
	/* The same cut on a format that goes through a private copy. */
	snprintf(feed, sizeof feed, "head -c 100000 '%s' |", tu_shared(NSYS));
	refused(dir, feed, "-", "truncated gzip data, expected more compressed input");
	/* An SQLite export cut short is found in its private copy, named as given. */
	snprintf(feed, sizeof feed, "mkfifo cut.fifo && (zcat '%s' | head -c 200000 > cut.fifo &) &&",
		 tu_shared(NSYS));
	refused(dir, feed, "cut.fifo", "'cut.fifo': byte 200000: truncated SQLite file");
	/* Valid JSON that is not a trace, streamed: the importer's own message. */
	refused(dir, "printf '{\"traceEvents\": 7}' |", "-", "'-': byte ");
}
