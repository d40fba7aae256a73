/* test_nccltests.c - the nccl-tests log importer, on the shared logs and on
 * small logs written here. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <criterion/criterion.h>
#include <sqlite3.h>

#include "cvc/cvc_db.h"
#include "cvc/cvc_import.h"
#include "cvc/cvc_classify.h"
#include "testutil.h"

static cvc_db *import1(const char *dir, const char *file, cvc_status want)
{
	cvc_db *db = NULL;
	const char *paths[1] = {file};
	cvc_status st;

	cr_assert_eq(cvc_db_open(tu_path(dir, "t.db"), CVC_DB_CREATE, &db), CVC_OK);
	st = cvc_import_files(db, paths, 1, tu_classifying(), NULL, NULL);
	cr_assert_eq(st, want, "status %d (%s), want %d", st, cvc_db_errmsg(db), want);
	return db;
}

/*
 * Writes text (a log) to name in a fresh tu_tmpdir() and imports it as
 * import1 does; the log's path into *logp when logp is not NULL.
 */
static cvc_db *import_text(const char *name, const char *text, size_t len, cvc_status want,
			   const char **logp)
{
	const char *dir = tu_tmpdir(), *log = tu_path(dir, name);

	cr_assert_eq(tu_write(log, text, len), 0);
	if (logp)
		*logp = log;
	return import1(dir, log, want);
}

/* The ops stored, distinct and comma-separated, are want. */
static void expect_ops(cvc_db *db, const char *want)
{
	char buf[256];

	tu_db_text(db, "SELECT group_concat(DISTINCT op) FROM nccl_tests", buf, sizeof buf);
	cr_assert_str_eq(buf, want, "ops '%s', want '%s'", buf, want);
}

/* The run_meta value nccl_tests.<name>[FILE] contains want (and want2,
 * when not NULL). */
static void expect_meta(cvc_db *db, const char *name, const char *want, const char *want2)
{
	char sql[160], buf[256];

	snprintf(sql, sizeof sql, "SELECT value FROM run_meta WHERE key LIKE 'nccl_tests.%s[%%'",
		 name);
	tu_db_text(db, sql, buf, sizeof buf);
	cr_assert(strstr(buf, want) && (!want2 || strstr(buf, want2)),
		  "%s '%s', want '%s'%s%s in it", name, buf, want, want2 ? " and " : "",
		  want2 ? want2 : "");
}

/* The nccl_tests.op_evidence run_meta value says how the op was found (contains want). */
static void expect_op_evidence(cvc_db *db, const char *want)
{
	expect_meta(db, "op_evidence", want, NULL);
}

/*
 * Checks that busbw/algbw is the test's bus factor on every stored row,
 * allowing for the 2-decimal rounding of both printed numbers.
 */
static void check_factor(cvc_db *db, double factor)
{
	sqlite3_stmt *st = NULL;
	int rows = 0;

	st = tu_db_prepare(db, "SELECT size_bytes, in_place, algbw_gbps, busbw_gbps FROM nccl_tests");
	while (sqlite3_step(st) == SQLITE_ROW) {
		double alg = sqlite3_column_double(st, 2), bus = sqlite3_column_double(st, 3);
		double tol = 0.005 * (1 + factor) + 1e-9;

		cr_expect(fabs(bus - factor * alg) <= tol,
			  "size %lld in_place %d: busbw %.2f vs %.4f x algbw %.2f",
			  (long long)sqlite3_column_int64(st, 0), sqlite3_column_int(st, 1), bus,
			  factor, alg);
		rows++;
	}
	sqlite3_finalize(st);
	cr_assert_gt(rows, 0);
}

Test(nccltests, h100x16_all_reduce)
{
	const char *log = tu_shared("traces/nccl-tests-logs/h100x16_2node_a3mega_all_reduce_perf.txt");
	cvc_db *db = import1(tu_tmpdir(), log, CVC_OK);
	char buf[256];
	int64_t n;

	cr_assert_eq(tu_db_int(db, "SELECT count(DISTINCT size_bytes) FROM nccl_tests"), 31);
	cr_assert_eq(tu_db_int(db, "SELECT count(*) FROM nccl_tests WHERE in_place=0"), 31);
	cr_assert_eq(tu_db_int(db, "SELECT count(*) FROM nccl_tests WHERE in_place=1"), 31);
	expect_ops(db, "all_reduce");
	n = tu_db_int(db, "SELECT min(nranks) FROM nccl_tests");
	cr_assert_eq(n, 16);
	cr_assert_eq(tu_db_int(db, "SELECT max(nranks) FROM nccl_tests"), 16);
	/* Peak bus bandwidth: where and how much, read back from the rows. */
	cr_assert_eq(tu_db_int(db, "SELECT size_bytes FROM nccl_tests ORDER BY busbw_gbps DESC LIMIT 1"),
		     8589934592LL);
	cr_assert_eq(tu_db_int(db, "SELECT in_place FROM nccl_tests ORDER BY busbw_gbps DESC LIMIT 1"), 0);
	cr_assert_eq(tu_db_int(db, "SELECT round(max(busbw_gbps)*100) FROM nccl_tests"), 33882);
	check_factor(db, 2.0 * (n - 1) / n);
	cr_assert_str_eq(tu_db_text(db, "SELECT gpu_model FROM runs", buf, sizeof buf),
			 "NVIDIA H100 80GB HBM3");
	cr_assert_str_eq(tu_db_text(db, "SELECT format FROM runs", buf, sizeof buf), "nccl-tests");
	cr_assert_eq(tu_db_int(db, "SELECT count(*) FROM sources WHERE format='nccl-tests'"), 1);
	expect_op_evidence(db, "command line");
	cvc_db_close(db);
}

Test(nccltests, a100x8_sendrecv_in_markdown)
{
	const char *log = tu_shared("traces/nccl-tests-logs/a100x8_sendrecv_perf.md");
	cvc_db *db = import1(tu_tmpdir(), log, CVC_OK);

	expect_ops(db, "sendrecv");
	cr_assert_eq(tu_db_int(db, "SELECT count(*) FROM nccl_tests"), 8);
	cr_assert_eq(tu_db_int(db, "SELECT count(*) FROM nccl_tests WHERE wrong IS NULL"), 4,
		     "in-place #wrong is N/A");
	cr_assert_eq(tu_db_int(db, "SELECT min(nranks) FROM nccl_tests"), 8, "from -g 8");
	check_factor(db, 1.0);
	cvc_db_close(db);
}

/* A log with no op name anywhere: the op comes from the bandwidth factor. */
Test(nccltests, infers_op_without_name)
{
	static const char text[] =
		"# nThread 1 nGpus 8 minBytes 1024 maxBytes 4096 step: 2(factor)\n"
		"#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n"
		"        1024           256     float    none      -1     10.0   10.24    8.96      0     10.0   10.24    8.96      0\n"
		"        2048           512     float    none      -1     10.0   20.48   17.92      0     10.0   20.48   17.92      0\n";
	cvc_db *db = import_text("noname.log", text, sizeof text - 1, CVC_OK, NULL);

	expect_ops(db, "all_gather"); /* busbw/algbw 7/8 without redop */
	cr_assert_eq(tu_db_int(db, "SELECT min(nranks) FROM nccl_tests"), 8);
	expect_op_evidence(db, "inferred");
	cvc_db_close(db);
}

/* The footer names the op even when the command line names another binary. */
Test(nccltests, footer_wins)
{
	static const char text[] =
		"$ mpirun -np 2 ./build/all_reduce_perf -g 1\n"
		"#  Rank  0 Group  0 Pid 1 on h device  0 [0x01] NVIDIA A100\n"
		"#  Rank  1 Group  0 Pid 2 on h device  1 [0x02] NVIDIA A100\n"
		"#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n"
		"     1048576        262144     float     sum       0     50.0   20.97   20.97    N/A     50.0   20.97   20.97    N/A\n"
		"# Collective test concluded: reduce_perf\n";
	cvc_db *db = import_text("f.log", text, sizeof text - 1, CVC_OK, NULL);

	expect_ops(db, "reduce");
	cr_assert_eq(tu_db_int(db, "SELECT min(nranks) FROM nccl_tests"), 2);
	cr_assert_eq(tu_db_int(db, "SELECT min(root) FROM nccl_tests"), 0);
	cvc_db_close(db);
}

Test(nccltests, malformed_time_names_line_and_column)
{
	static const char text[] =
		"# nccl-tests all_reduce_perf\n"
		"#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n"
		"           8             2     float     sum      -1    135.8    0.00    0.00      0    123.5    0.00    0.00      0\n"
		"          16             4     float     sum      -1    12x.2    0.00    0.00      0    122.3    0.00    0.00      0\n";
	const char *log;
	cvc_db *db = import_text("bad.log", text, sizeof text - 1, CVC_ERR_FORMAT, &log);

	tu_expect_rolled_back(db, log, "line 4: column 'time': expected a number",
			      "nccl_tests runs");
	cvc_db_close(db);
}

/* A row whose size is negative is a broken row, not prose: it was skipped
 * without a word and the sweep lost a size (exit 0, one row fewer). */
Test(nccltests, negative_size_row_is_an_error)
{
	static const char text[] =
		"#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n"
		"           8             2     float     sum      -1    135.8    0.00    0.00      0    123.5    0.00    0.00      0\n"
		"         -16             4     float     sum      -1    123.2    0.00    0.00      0    122.3    0.00    0.00      0\n"
		"          32             8     float     sum      -1    123.3    0.00    0.00      0    122.7    0.00    0.00      0\n";
	const char *log;
	cvc_db *db = import_text("neg.log", text, sizeof text - 1, CVC_ERR_FORMAT, &log);

	tu_expect_rolled_back(db, log, "line 3: column 'size': expected a number >= 0",
			      "nccl_tests runs");
	cvc_db_close(db);
}

/* A type nccl-tests never prints (src/common.cu test_typenames) is a
 * damaged row, and a time of 0 would give an infinite bandwidth: each is
 * an error naming its line and column, the database as it was. */
Test(nccltests, unknown_type_or_zero_time_is_an_error)
{
	static const char bad_type[] =
		"#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n"
		"           8             2     float     sum      -1    135.8    0.00    0.00      0    123.5    0.00    0.00      0\n"
		"          16             4     flaot     sum      -1    123.2    0.00    0.00      0    122.3    0.00    0.00      0\n";
	static const char zero_time[] =
		"#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n"
		"           8             2  bfloat16     sum      -1    135.8    0.00    0.00      0    123.5    0.00    0.00      0\n"
		"          16             4  bfloat16     sum      -1     0.00    0.00    0.00      0    122.3    0.00    0.00      0\n";
	const char *log;
	cvc_db *db = import_text("type.log", bad_type, sizeof bad_type - 1, CVC_ERR_FORMAT, &log);

	tu_expect_rolled_back(db, log,
			      "line 3: column 'type': expected an NCCL data type (int8 .. double, "
			      "bfloat16, f8e4m3, f8e5m2), got 'flaot'",
			      "nccl_tests runs");
	cvc_db_close(db);
	db = import_text("zero.log", zero_time, sizeof zero_time - 1, CVC_ERR_FORMAT, &log);
	tu_expect_rolled_back(db, log, "line 3: column 'time': expected a number > 0",
			      "nccl_tests runs");
	cvc_db_close(db);
}

Test(nccltests, short_row_is_an_error)
{
	static const char text[] =
		"#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n"
		"           8             2     float     sum      -1    135.8    0.00\n";
	cvc_db *db = import_text("short.log", text, sizeof text - 1, CVC_ERR_FORMAT, NULL);

	cr_assert(strstr(cvc_db_errmsg(db), "line 2: expected 13 columns, found 7"), "%s",
		  cvc_db_errmsg(db));
	cvc_db_close(db);
}

/* Rows of an all-reduce over 1024 ranks: busbw/algbw 2 x 1023/1024 = 1.99805,
 * which the printed digits cannot tell from 1023 ranks. */
#define AR1024_ROWS                                                                                \
	"#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n" \
	"  1073741824     268435456     float     sum      -1  10737.4  100.00  199.80      0  10737.4  100.00  199.80      0\n" \
	"  2147483648     536870912     float     sum      -1  10737.4  200.00  399.61      0  10737.4  200.00  399.61      0\n"

/*
 * A pasted log often keeps only the first device lines: the launcher's
 * -np counts the run's ranks where the lines list fewer and the bandwidth
 * ratio admits the launcher's count, not the lines' (3 ranks would print
 * 1.333).
 */
Test(nccltests, partial_device_list_yields_to_the_launcher)
{
	static const char text[] =
		"$ mpirun -np 1024 -N 8 ./build/all_reduce_perf -b 1G -e 2G -f 2 -g 1\n"
		"# nThread 1 nGpus 1 minBytes 1073741824 maxBytes 2147483648 step: 2(factor)\n"
		"#  Rank  0 Group  0 Pid 1 on h0 device  0 [0x18] NVIDIA H100 80GB HBM3\n"
		"#  Rank  1 Group  0 Pid 2 on h0 device  1 [0x2a] NVIDIA H100 80GB HBM3\n"
		"#  Rank  2 Group  0 Pid 3 on h0 device  2 [0x3a] NVIDIA H100 80GB HBM3\n"
		AR1024_ROWS;
	cvc_db *db = import_text("np1024.log", text, sizeof text - 1, CVC_OK, NULL);

	cr_assert_eq(tu_db_int(db, "SELECT min(nranks) FROM nccl_tests"), 1024);
	cr_assert_eq(tu_db_int(db, "SELECT max(nranks) FROM nccl_tests"), 1024);
	expect_meta(db, "nranks_evidence", "launcher", "3 device lines");
	cvc_db_close(db);
}

/*
 * "# nThread 1 nGpus 1" is one process' GPUs: with no launcher and no
 * device lines, and a ratio no single rank prints, the rank count is
 * unknown, not 1.
 */
Test(nccltests, one_process_header_is_not_the_rank_count)
{
	static const char text[] =
		"# nThread 1 nGpus 1 minBytes 1073741824 maxBytes 2147483648 step: 2(factor)\n"
		AR1024_ROWS;
	cvc_db *db = import_text("hdr.log", text, sizeof text - 1, CVC_OK, NULL);

	cr_assert_eq(tu_db_int(db, "SELECT count(*) FROM nccl_tests WHERE nranks IS NOT NULL"), 0);
	expect_meta(db, "nranks_evidence", "unknown", "one process assumed");
	cvc_db_close(db);
}

/*
 * The gather family's (n - 1)/n is above 0.98 from 50 ranks on: a ratio
 * of 127/128 that the printed digits hold apart from 1 is an all-gather
 * (no redop), not a point-to-point test.
 */
Test(nccltests, wide_gather_is_not_sendrecv)
{
	static const char text[] =
		"#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n"
		"  1073741824       2097152     float    none      -1  10737.4  100.00   99.22      0  10737.4  100.00   99.22      0\n"
		"  2147483648       4194304     float    none      -1  10737.4  200.00  198.44      0  10737.4  200.00  198.44      0\n";
	cvc_db *db = import_text("a2a.log", text, sizeof text - 1, CVC_OK, NULL);

	expect_ops(db, "all_gather");
	expect_op_evidence(db, "inferred");
	cvc_db_close(db);
}

/*
 * A sweep that stopped (no '# Out of bounds values' or '# Avg bus
 * bandwidth' after the table: NVIDIA/nccl-tests #322's 1024-rank run,
 * whose last rows were followed by failures) is imported, and said: its
 * largest sizes are missing.  A finished one is not.
 */
Test(nccltests, a_sweep_that_stopped_is_said)
{
	static const char stopped[] =
		"$ mpirun -np 1024 ./build/all_reduce_perf -b 1G -e 64G -f 2 -g 1\n"
		"# nThread 1 nGpus 1 minBytes 1073741824 maxBytes 68719476736 step: 2(factor)\n"
		AR1024_ROWS
		"NCCL WARN Cuda failure 'out of memory'\n";
	static const char done[] =
		"$ mpirun -np 1024 ./build/all_reduce_perf -b 1G -e 2G -f 2 -g 1\n"
		"# nThread 1 nGpus 1 minBytes 1073741824 maxBytes 2147483648 step: 2(factor)\n"
		AR1024_ROWS
		"# Out of bounds values : 0 OK\n"
		"# Avg bus bandwidth    : 299.7\n";
	const char *log = NULL;
	char args[1024], *out = NULL, *err = NULL;
	cvc_db *db = import_text("stopped.log", stopped, sizeof stopped - 1, CVC_OK, &log);

	expect_meta(db, "incomplete", "stopped before the end of its sweep", NULL);
	cvc_db_close(db);
	db = import_text("done.log", done, sizeof done - 1, CVC_OK, NULL);
	cr_expect_eq(tu_db_int(db, "SELECT count(*) FROM run_meta WHERE key LIKE "
				   "'nccl_tests.incomplete%'"),
		     0);
	cvc_db_close(db);
	snprintf(args, sizeof args, "import --db '%s/w.db' '%s'", tu_tmpdir(), log);
	cr_assert_eq(tu_cvc(args, &out, &err), 0, "%s", err);
	cr_expect(err && strstr(err, "warning: 'stopped.log': no footer"), "%s", err);
	free(out);
	free(err);
}
