/*
 * test_import_cli.c - `cvc import` on bad input, end to end through the
 * tool: one error line naming the file and a position, exit code 2, and the
 * database exactly as it was.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>
#include <sqlite3.h>
#include <zlib.h>

#include "testutil.h"

#define NCCL_ARGS "traces/hta-nccl-args-a100-w2/nccl_data.json.gz"
#define NSYS "traces/pipit-nsys-sqlite-perlmutter/saxpy-mpi-cuda_nsys_perlmutter0.sqlite.gz"

/* Row count and a content checksum of every table: equal means unchanged. */
static char *fingerprint(const char *db_path)
{
	sqlite3 *sq = NULL;
	sqlite3_stmt *tabs = NULL;
	size_t cap = 1 << 16, len = 0;
	char *out = malloc(cap);

	cr_assert(out);
	out[0] = '\0';
	cr_assert_eq(sqlite3_open_v2(db_path, &sq, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
	cr_assert_eq(sqlite3_prepare_v2(sq, "SELECT name FROM sqlite_schema WHERE type='table' "
					"ORDER BY name", -1, &tabs, NULL), SQLITE_OK);
	while (sqlite3_step(tabs) == SQLITE_ROW) {
		const char *t = (const char *)sqlite3_column_text(tabs, 0);
		char sql[512];
		sqlite3_stmt *st = NULL;

		/* Hash every row's text so a changed value shows, not just a count. */
		snprintf(sql, sizeof sql,
			 "SELECT count(*), total(length(quote(t.rowid)) + 0) FROM \"%s\" AS t", t);
		if (sqlite3_prepare_v2(sq, sql, -1, &st, NULL) != SQLITE_OK) {
			/* WITHOUT ROWID tables have no rowid: count only. */
			snprintf(sql, sizeof sql, "SELECT count(*), 0 FROM \"%s\"", t);
			cr_assert_eq(sqlite3_prepare_v2(sq, sql, -1, &st, NULL), SQLITE_OK, "%s", sql);
		}
		cr_assert_eq(sqlite3_step(st), SQLITE_ROW);
		len += (size_t)snprintf(out + len, cap - len, "%s=%lld/%.0f;", t,
					sqlite3_column_int64(st, 0), sqlite3_column_double(st, 1));
		cr_assert(len < cap);
		sqlite3_finalize(st);
	}
	sqlite3_finalize(tabs);
	sqlite3_close(sq);
	return out;
}

/* A database holding one real run, in a directory for the inputs a test writes. */
struct good {
	char dir[4096], db[4200];
	char *fp; /* the database's fingerprint (caller frees) */
};

/* Imports the real run into dir/good.db in a fresh directory. */
static void good_db(struct good *g)
{
	char args[8400];
	int rc;

	snprintf(g->dir, sizeof g->dir, "%s", tu_tmpdir());
	snprintf(g->db, sizeof g->db, "%s/good.db", g->dir);
	snprintf(args, sizeof args, "import --db '%s' '%s'", g->db, tu_shared(NCCL_ARGS));
	rc = tu_cvc(args, NULL, NULL);
	cr_assert_eq(rc, 0, "good import exits 0");
	g->fp = fingerprint(g->db);
}

/* Writes len bytes of text to the input dir/name; returns its path (tu_path's). */
static const char *good_input(const struct good *g, const char *name, const char *text,
			      size_t len)
{
	const char *path = tu_path(g->dir, name);

	cr_assert_eq(tu_write(path, text, len), 0, "%s", path);
	return path;
}

/*
 * Runs `cvc import` of file (with extra arguments) into the good database
 * and checks exit 2, one error line naming file, the database unchanged.
 */
static void expect_refused(const struct good *g, const char *extra, const char *file,
			   const char *want_in_msg)
{
	char args[16384];
	char *err = NULL, *after;
	int rc;

	snprintf(args, sizeof args, "import --db '%s' %s '%s'", g->db, extra ? extra : "", file);
	rc = tu_cvc(args, NULL, &err);
	cr_assert_eq(rc, 2, "exit code for %s: %d, stderr: %s", file, rc, err);
	cr_assert_eq(tu_count_lines(err), 1, "one line: %s", err);
	cr_assert(strncmp(err, "error: '", 8) == 0, "error prefix: %s", err);
	cr_assert(strstr(err, want_in_msg), "message has '%s': %s", want_in_msg, err);
	after = fingerprint(g->db);
	cr_assert_str_eq(after, g->fp, "%s: database unchanged", file);
	free(after);
	free(err);
}

/* The first n bytes of the decompressed real trace. */
static const char *truncated_trace(const char *dir, size_t n)
{
	static char path[4200];
	gzFile gz = gzopen(tu_shared(NCCL_ARGS), "rb");
	char *buf = malloc(n);
	int got;

	cr_assert(gz && buf);
	got = gzread(gz, buf, (unsigned)n);
	gzclose(gz);
	cr_assert_eq(got, (int)n);
	snprintf(path, sizeof path, "%s/truncated-%zu.json", dir, n);
	cr_assert_eq(tu_write(path, buf, n), 0);
	free(buf);
	return path;
}

Test(import_cli, truncated_trace_names_file_and_byte)
{
	struct good g;
	const size_t cuts[] = {1, 4096, 333333, 2000000};

	good_db(&g);
	for (size_t i = 0; i < sizeof cuts / sizeof cuts[0]; i++) {
		const char *f = truncated_trace(g.dir, cuts[i]);

		expect_refused(&g, NULL, f, "byte ");
		expect_refused(&g, NULL, f, f);
	}
	free(g.fp);
}

Test(import_cli, wrong_format_is_refused)
{
	static const char png_bytes[] = "\x89PNG\r\n\x1a\n\0\0\0\rIHDR";
	struct good g;

	good_db(&g);
	expect_refused(&g, NULL, good_input(&g, "picture.png", png_bytes, sizeof png_bytes),
		       "unrecognised format");
	expect_refused(&g, NULL, good_input(&g, "table.csv", "a,b,c\n1,2,3\n", 12), "byte 0");
	free(g.fp);
}

Test(import_cli, wrong_typed_field_is_refused)
{
	static const char text[] =
		"{\"traceEvents\": [\n"
		" {\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k\", \"pid\": 0, \"tid\": 7,"
		" \"ts\": 10, \"dur\": 5, \"args\": {\"device\": 0, \"stream\": 7}},\n"
		" {\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k\", \"pid\": 0, \"tid\": 7,"
		" \"ts\": \"soon\", \"dur\": 5, \"args\": {\"device\": 0}}\n]}\n";

	struct good g;

	good_db(&g);
	expect_refused(&g, NULL, good_input(&g, "badts.json", text, strlen(text)), "field 'ts'");
	free(g.fp);
}

Test(import_cli, bad_regex_in_rules_file_is_refused)
{
	static const char text[] = "# my rules\ngemm ^sm90_xmma\nattention (flash\n";
	struct good g;
	const char *rules;
	char extra[4300];
	char *err = NULL;

	good_db(&g);
	rules = good_input(&g, "bad.rules", text, strlen(text));
	snprintf(extra, sizeof extra, "--rules '%s'", rules);
	expect_refused(&g, extra, tu_shared(NCCL_ARGS), "line 3, column");
	/* The message names the rule file, not the trace. */
	{
		char args[16384];

		snprintf(args, sizeof args, "import --db '%s' %s '%s'", g.db, extra,
			 tu_shared(NCCL_ARGS));
		cr_assert_eq(tu_cvc(args, NULL, &err), 2);
		cr_assert(strstr(err, rules), "%s", err);
		free(err);
	}
	free(g.fp);
}

Test(import_cli, corrupt_gzip_and_truncated_sqlite_are_refused)
{
	struct good g;
	const char *gzp;
	size_t n = 0;
	char *raw = tu_read(tu_shared(NCCL_ARGS), &n);
	const char *nsys;
	char *sq;
	size_t sqn = 0;

	cr_assert(raw && n > 100000);
	good_db(&g);
	/* Keep the gzip header, scribble over the deflate stream. */
	for (size_t i = 5000; i < 5400; i++)
		raw[i] = (char)(raw[i] ^ 0x5a);
	gzp = good_input(&g, "broken.json.gz", raw, 60000);
	expect_refused(&g, NULL, gzp, "byte ");
	free(raw);

	nsys = tu_gunzip(tu_shared(NSYS), g.dir);
	sq = tu_read(nsys, &sqn);
	cr_assert(sq && sqn > 8192);
	cr_assert_eq(tu_write(nsys, sq, sqn / 3), 0);
	expect_refused(&g, NULL, nsys, nsys);
	free(sq);
	free(g.fp);
}

Test(import_cli, failed_first_import_leaves_no_database)
{
	const char *dir = tu_tmpdir();
	const char *db = tu_path(dir, "new.db");
	const char *f = truncated_trace(dir, 4096);
	char args[9000];
	FILE *probe;

	snprintf(args, sizeof args, "import --db '%s' '%s'", db, f);
	cr_assert_eq(tu_cvc(args, NULL, NULL), 2);
	probe = fopen(db, "rb");
	cr_assert_null(probe, "a database the failed call created is removed");
}

/*
 * On a terminal the status line is redrawn in place: each draw must clear
 * what a longer file name left behind, and a note said during the import
 * must start on a clean line.  util-linux's script(1) gives the import a
 * terminal and copies what it wrote.
 */
Test(import_cli, progress_line_is_cleared_on_a_terminal)
{
	const char *dir = tu_tmpdir(), *sub = tu_path(dir, "in");
	const char *first = tu_shared("traces/hta-trace-diff-a100-w8/control.json.gz");
	const char *second = tu_shared("traces/hta-trace-diff-v100-w2/test.json.gz");
	char cmd[20000], *out = NULL;
	int draws = 0, notes = 0;

	if (tu_run("command -v script", NULL, NULL) != 0)
		cr_skip_test("script(1) (util-linux) is not installed: no terminal to test on");
	/* the longer name is imported first, so the shorter one draws over it */
	snprintf(cmd, sizeof cmd, "mkdir '%s' && cp '%s' '%s/a-rather-long-name-for-a-trace.json.gz'"
		 " && cp '%s' '%s/b.json.gz' && script -qec \"'%s' import --db '%s/t.db' '%s'\" "
		 "/dev/null", sub, first, sub, second, sub, CVC_TOOL, dir, sub);
	cr_assert_eq(tu_run(cmd, &out, NULL), 0, "%s", out ? out : "");
	for (const char *p = out; (p = strstr(p, "\rimporting ")); p++, draws++) {
		size_t n = strcspn(p + 1, "\r\n");
		const char *clear = strstr(p, "\033[K");

		cr_expect(clear && clear < p + 1 + n, "a draw that clears the line's rest: %.*s",
			  (int)n, p + 1);
	}
	for (const char *p = out; (p = strstr(p, "note: ")); p++, notes++)
		cr_expect(p == out || p[-1] == '\n' || (p - out >= 3 && !memcmp(p - 3, "\033[K", 3)),
			  "a note on a line of its own: ...%.20s", p > out + 20 ? p - 20 : out);
	cr_expect_gt(draws, 1, "the status line was drawn on the terminal");
	cr_expect_gt(notes, 1, "the two jobs were said as two runs");
	free(out);
}

/* A name from outside is quoted with its control characters as escapes: a
 * terminal shows them instead of acting on them. */
Test(import_cli, control_characters_in_a_name_are_shown_escaped)
{
	char *err = NULL;

	cr_assert_eq(tu_cvc("import \"$(printf 'x\\033[2Jy.json')\"", NULL, &err), 2);
	cr_expect(strstr(err, "'x\\x1b[2Jy.json': cannot open"), "the escape shown: %s", err);
	cr_expect_null(strchr(err, '\033'), "no raw escape reaches the terminal: %s", err);
	free(err);
}
