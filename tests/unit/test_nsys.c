/* test_nsys.c - the Nsight Systems SQLite importer: both shared exports
 * (schema 2.9.1 and 3.13.2), a generated newer-style export, and broken
 * files that must leave the target database as it was. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <criterion/criterion.h>
#include <sqlite3.h>

#include "cvc/cvc_db.h"
#include "cvc/cvc_import.h"
#include "cvc/cvc_classify.h"
#include "nsys_fixture.h"
#include "testutil.h"

#define CLOVER "traces/pipit-nsys-sqlite-perlmutter/perlmutter-cloverleaf-cuda.sqlite.gz"
#define SAXPY "traces/pipit-nsys-sqlite-perlmutter/saxpy-mpi-cuda_nsys_perlmutter0.sqlite.gz"

static sqlite3 *open_plain(const char *path)
{
	sqlite3 *sq = NULL;

	cr_assert_eq(sqlite3_open_v2(path, &sq, SQLITE_OPEN_READONLY, NULL), SQLITE_OK, "%s",
		     path);
	return sq;
}

static cvc_status import_into(cvc_db *db, const char *path)
{
	const char *paths[1] = {path};

	return cvc_import_files(db, paths, 1, tu_classifying(), NULL, NULL);
}

/*
 * Imports the gzip'd export and checks the kernel count, the summed kernel
 * time and the memcpy count against the same SQL on the raw export.
 */
static void check_export(const char *rel, const char *device)
{
	const char *gz = tu_shared(rel), *dir = tu_tmpdir();
	const char *raw = tu_gunzip(gz, dir);
	sqlite3 *ex = open_plain(raw);
	cvc_db *db;
	sqlite3 *sq;
	char buf[256];
	int64_t nk, tk, nm, nhtod;

	nk = tu_sq_int(ex, "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL");
	tk = tu_sq_int(ex, "SELECT sum(\"end\"-start) FROM CUPTI_ACTIVITY_KIND_KERNEL");
	nm = tu_sq_int(ex, "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_MEMCPY");
	/* Nsight's memory kinds: 0 Pageable, 2 Device */
	nhtod = tu_sq_int(ex, "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_MEMCPY WHERE copyKind=1 "
			  "AND srcKind=0 AND dstKind=2");
	sqlite3_close(ex);
	cr_assert_gt(nk, 0);

	db = tu_import(gz, "t.db");
	sq = cvc_db_sqlite(db);
	cr_assert_eq(tu_sq_int(sq, "SELECT count(*) FROM activities WHERE kind=1"), nk);
	cr_assert_eq(tu_sq_int(sq, "SELECT sum(end_ns-start_ns) FROM activities WHERE kind=1"), tk);
	cr_assert_eq(tu_sq_int(sq, "SELECT count(*) FROM activities WHERE kind=2"), nm);
	/* copies named as Kineto and cvc's profiler name them */
	cr_assert_gt(nhtod, 0);
	cr_expect_eq(tu_sq_int(sq, "SELECT count(*) FROM activities a JOIN strings s ON "
			       "s.id=a.name_id WHERE s.value='Memcpy HtoD (Pageable -> Device)'"), nhtod);
	cr_assert_str_eq(tu_sq_text(sq, "SELECT name FROM devices", buf, sizeof buf), device);
	cr_assert_str_eq(tu_sq_text(sq, "SELECT gpu_model FROM runs", buf, sizeof buf), device);
	cr_assert_str_eq(tu_sq_text(sq, "SELECT format FROM runs", buf, sizeof buf), "nsys");
	cr_assert(strstr(tu_sq_text(sq, "SELECT tool_version FROM runs", buf, sizeof buf),
			 "nsys export schema "), "%s", buf);
	cr_assert_eq(tu_sq_int(sq, "SELECT count(*) FROM sources WHERE format='nsys'"), 1);
	cr_assert_eq(tu_sq_int(sq, "SELECT count(*) FROM ranks"), 1);
	cr_assert_gt(tu_sq_int(sq, "SELECT min(pid) FROM ranks"), 0);
	/* Every kernel name resolved through StringIds, none left unnamed. */
	cr_assert_eq(tu_sq_int(sq, "SELECT count(*) FROM activities a JOIN strings s ON "
			       "s.id=a.name_id WHERE a.kind=1 AND s.value='(unnamed kernel)'"), 0);
	cvc_db_close(db);
	unlink(raw);
}

Test(nsys, cloverleaf_schema_3_13)
{
	check_export(CLOVER, "NVIDIA A100-SXM4-80GB");
}

Test(nsys, saxpy_schema_2_9)
{
	check_export(SAXPY, "NVIDIA A100-SXM4-40GB");
}

Test(nsys, saxpy_nvtx_ranges)
{
	const char *gz = tu_shared(SAXPY), *dir = tu_tmpdir();
	const char *raw = tu_gunzip(gz, dir);
	sqlite3 *ex = open_plain(raw), *sq;
	cvc_db *db;
	char buf[64];
	int64_t want;

	want = tu_sq_int(ex, "SELECT count(*) FROM NVTX_EVENTS WHERE eventType IN (59,60) AND "
			 "\"end\" IS NOT NULL");
	sqlite3_close(ex);
	cr_assert_gt(want, 0);
	db = tu_import(gz, "t.db");
	sq = cvc_db_sqlite(db);
	cr_assert_eq(tu_sq_int(sq, "SELECT count(*) FROM ranges WHERE kind=3 AND device=-1"), want);
	cr_assert_eq(tu_sq_int(sq, "SELECT count(*) FROM ranges r JOIN strings s ON s.id=r.name_id "
			       "WHERE s.value='saxpy'"), 5, "inline text");
	/* MPI_Send comes through textId and lives in the MPI domain. */
	cr_assert_str_eq(tu_sq_text(sq, "SELECT DISTINCT r.domain FROM ranges r JOIN strings s ON "
				    "s.id=r.name_id WHERE s.value='MPI_Send'", buf, sizeof buf),
			 "MPI");
	cr_assert_eq(tu_sq_int(sq, "SELECT count(*) FROM ranges WHERE end_ns < start_ns"), 0);
	/* The ranges hang on the rank of the process that ran the kernels. */
	cr_assert_eq(tu_sq_int(sq, "SELECT count(DISTINCT rank) FROM ranges"), 1);
	cr_assert_eq(tu_sq_int(sq, "SELECT count(*) FROM ranges r JOIN ranks k ON k.run_id=r.run_id "
			       "AND k.rank=r.rank AND k.pid=r.tid"), want, "main thread = pid");
	cvc_db_close(db);
	unlink(raw);
}

/* Writes the export the SQL statements build to path. */
static void write_export(const char *path, const char *sql)
{
	sqlite3 *sq = NULL;

	cr_assert_eq(sqlite3_open(path, &sq), SQLITE_OK);
	cr_assert_eq(sqlite3_exec(sq, sql, NULL, NULL, NULL), SQLITE_OK, "%s", sqlite3_errmsg(sq));
	sqlite3_close(sq);
}

/* NVTX_EVENTS as the 3.2x exports declare it. */
#define NVTX_TABLE_SQL                                                                           \
	"CREATE TABLE NVTX_EVENTS(start INT, end INT, eventType INT, rangeId INT, category INT,"  \
	" color INT, text TEXT, globalTid INT, endGlobalTid INT, textId INT, domainId INT);"

/* Builds a small export with the 3.2x layout: device map, two processes. */
static void make_newer_export(const char *path)
{
	/* globalPid = pid << 24; pids 100 and 50 so ordering is by globalPid. */
	static const char sql[] =
		TU_NSYS_HEAD_SQL ", someFutureColumn INT);"
		"INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES"
		" (1000,1500,0,1,NULL,7,11,1677721600,1,2,NULL,64,8,1,1,256,1,1,1024,2048,0),"
		" (2000,2600,0,1,NULL,7,12,1677721600,NULL,2,NULL,32,1,1,1,128,1,1,0,0,0),"
		" (3000,3900,0,1,NULL,7,13,838860800,4,NULL,NULL,32,1,1,1,128,1,1,0,0,0);"
		"CREATE TABLE TARGET_INFO_GPU(vmId INT, id INT, name TEXT, totalMemory INT,"
		" memoryBandwidth INT, clockRate INT, smCount INT, computeMajor INT, computeMinor INT);"
		"INSERT INTO TARGET_INFO_GPU VALUES(0,0,'wrong GPU',1,1,1,1,1,1),"
		" (0,5,'NVIDIA H100 80GB HBM3',85000000000,3350000000000,1980000000,132,9,0);"
		"CREATE TABLE TARGET_INFO_CUDA_DEVICE(gpuId INT, cudaId INT, pid INT, uuid TEXT,"
		" numMultiprocessors INT);"
		"INSERT INTO TARGET_INFO_CUDA_DEVICE VALUES(5,0,100,NULL,132),(5,0,50,NULL,132);"
		NVTX_TABLE_SQL
		"INSERT INTO NVTX_EVENTS VALUES(900,4000,60,1,NULL,NULL,NULL,1677721601,NULL,3,0),"
		" (950,NULL,59,NULL,NULL,NULL,'open',1677721601,NULL,NULL,0),"
		" (960,970,34,NULL,NULL,NULL,'mark',1677721601,NULL,NULL,0);";

	write_export(path, sql);
}

Test(nsys, newer_schema_device_map_and_processes)
{
	const char *ex = tu_path(tu_tmpdir(), "new.sqlite");
	cvc_db *db;
	sqlite3 *sq;
	char buf[256];

	make_newer_export(ex);
	db = tu_import(ex, "t.db");
	sq = cvc_db_sqlite(db);
	/* Ranks by globalPid: pid 50 first. */
	cr_assert_eq(tu_sq_int(sq, "SELECT pid FROM ranks WHERE rank=0"), 50);
	cr_assert_eq(tu_sq_int(sq, "SELECT pid FROM ranks WHERE rank=1"), 100);
	cr_assert_eq(tu_sq_int(sq, "SELECT count(*) FROM activities WHERE rank=1"), 2);
	/* deviceId 0 maps to TARGET_INFO_GPU.id 5 through TARGET_INFO_CUDA_DEVICE. */
	cr_assert_str_eq(tu_sq_text(sq, "SELECT group_concat(DISTINCT name) FROM devices", buf,
				sizeof buf), "NVIDIA H100 80GB HBM3");
	cr_assert_eq(tu_sq_int(sq, "SELECT round(mem_bw_gbps) FROM devices LIMIT 1"), 3350);
	cr_assert_eq(tu_sq_int(sq, "SELECT clock_khz FROM devices LIMIT 1"), 1980000);
	cr_assert_eq(tu_sq_int(sq, "SELECT sm_count FROM devices LIMIT 1"), 132);
	/* demangled name, short name as fallback, shared memory summed. */
	cr_assert_str_eq(tu_sq_text(sq, "SELECT s.value FROM activities a JOIN strings s ON "
				    "s.id=a.name_id WHERE a.start_ns=2000", buf, sizeof buf), "gemm");
	cr_assert_eq(tu_sq_int(sq, "SELECT shared_mem_bytes FROM activities WHERE start_ns=1000"), 3072);
	cr_assert_eq(tu_sq_int(sq, "SELECT grid_x*block_x FROM activities WHERE start_ns=1000"), 2048);
	cr_assert_eq(tu_sq_int(sq, "SELECT correlation FROM activities WHERE start_ns=3000"), 13);
	/* Only the closed start/end range; it belongs to pid 100 (rank 1). */
	cr_assert_eq(tu_sq_int(sq, "SELECT count(*) FROM ranges"), 1);
	cr_assert_eq(tu_sq_int(sq, "SELECT rank FROM ranges"), 1);
	cr_assert_str_eq(tu_sq_text(sq, "SELECT s.value FROM ranges r JOIN strings s ON s.id=r.name_id",
				buf, sizeof buf), "step");
	cvc_db_close(db);
}

/* Counts of every table the importers write, to prove a failure changed nothing. */
static void snapshot(sqlite3 *sq, int64_t out[8])
{
	static const char *const t[8] = {"runs", "ranks", "devices", "sources", "strings",
					 "activities", "ranges", "run_meta"};
	char sql[64];

	for (int i = 0; i < 8; i++) {
		snprintf(sql, sizeof sql, "SELECT count(*) FROM %s", t[i]);
		out[i] = tu_sq_int(sq, sql);
	}
}

static void expect_broken(const char *bad, const char *needle)
{
	/* tu_cvc() makes its own scratch directory in tu_tmpdir()'s buffer: copy. */
	char dir[4096];
	const char *nccl;
	static const char log[] =
		"#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n"
		"        1024           256     float     sum      -1     10.0    0.10    0.10      0     10.0    0.10    0.10      0\n";
	int64_t before[8], after[8];
	cvc_db *db = NULL;
	char cmd[8192], *err = NULL;
	cvc_status st;
	int rc;

	snprintf(dir, sizeof dir, "%s", tu_tmpdir());
	nccl = tu_path(dir, "ok.log");
	cr_assert_eq(tu_write(nccl, log, sizeof log - 1), 0);
	cr_assert_eq(cvc_db_open(tu_path(dir, "t.db"), CVC_DB_CREATE, &db), CVC_OK);
	cr_assert_eq(import_into(db, nccl), CVC_OK, "%s", cvc_db_errmsg(db));
	snapshot(cvc_db_sqlite(db), before);
	st = import_into(db, bad);
	cr_assert_eq(st, CVC_ERR_FORMAT, "status %d: %s", st, cvc_db_errmsg(db));
	cr_assert_eq(cvc_exit_code(st), 2);
	cr_assert(strstr(cvc_db_errmsg(db), bad), "names the file: %s", cvc_db_errmsg(db));
	cr_assert(strstr(cvc_db_errmsg(db), needle), "%s", cvc_db_errmsg(db));
	snapshot(cvc_db_sqlite(db), after);
	cr_assert_arr_eq(before, after, sizeof before, "database changed by a failed import");
	cvc_db_close(db);

	/* The same through the tool: exit 2, one error line, database unchanged. */
	snprintf(cmd, sizeof cmd, "import --db '%s' '%s'", tu_path(dir, "t.db"), bad);
	rc = tu_cvc(cmd, NULL, &err);
	cr_assert_eq(rc, 2, "cvc %s: exit %d: %s", cmd, rc, err ? err : "");
	cr_assert(err && strstr(err, needle), "%s", err ? err : "");
	free(err);
	cr_assert_eq(cvc_db_open(tu_path(dir, "t.db"), 0, &db), CVC_OK, "%s", cvc_db_errmsg(db));
	snapshot(cvc_db_sqlite(db), after);
	cr_assert_arr_eq(before, after, sizeof before, "database changed by the tool");
	cvc_db_close(db);
}

/* The SAXPY export's bytes, decompressed into a fresh directory (caller frees). */
struct export_bytes {
	char dir[4096];
	char *data;
	size_t len;
};

static void read_saxpy(struct export_bytes *x)
{
	snprintf(x->dir, sizeof x->dir, "%s", tu_tmpdir());
	x->data = tu_read(tu_gunzip(tu_shared(SAXPY), x->dir), &x->len);
	cr_assert(x->data && x->len > 8192);
}

/* Writes the first n bytes to dir/name, frees them, and expects that file broken. */
static void expect_broken_bytes(struct export_bytes *x, const char *name, size_t n,
				const char *needle)
{
	char bad[4200];

	snprintf(bad, sizeof bad, "%s/%s", x->dir, name);
	cr_assert_eq(tu_write(bad, x->data, n), 0);
	free(x->data);
	expect_broken(bad, needle);
}

Test(nsys, truncated_export_fails_cleanly)
{
	struct export_bytes x;

	read_saxpy(&x);
	expect_broken_bytes(&x, "cut.sqlite", x.len / 2, "truncated");
}

Test(nsys, corrupt_pages_fail_cleanly)
{
	struct export_bytes x;

	read_saxpy(&x);
	/* Keep the header, scribble over every page after the first. */
	for (size_t i = 4096; i < x.len; i++)
		x.data[i] = (char)(i * 131 + 7);
	expect_broken_bytes(&x, "scribbled.sqlite", x.len, "SQLite");
}

Test(nsys, unrelated_sqlite_is_not_an_export)
{
	const char *dir = tu_tmpdir();
	char bad[4200];
	sqlite3 *sq = NULL;

	snprintf(bad, sizeof bad, "%s/other.sqlite", dir);
	cr_assert_eq(sqlite3_open(bad, &sq), SQLITE_OK);
	cr_assert_eq(sqlite3_exec(sq, "CREATE TABLE recipes(name TEXT); INSERT INTO recipes "
				      "VALUES('soup');", NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(sq);
	expect_broken(bad, "not an Nsight Systems export: table CUPTI_ACTIVITY_KIND_KERNEL");
}

/* A crafted copy of the saxpy export: one SQL statement on its kernel table. */
static void crafted(const char *name, const char *sql, char *out, size_t cap)
{
	const char *dir = tu_tmpdir();
	const char *raw = tu_gunzip(tu_shared(SAXPY), dir);
	sqlite3 *sq = NULL;
	char *data;
	size_t len;

	data = tu_read(raw, &len);
	cr_assert(data);
	snprintf(out, cap, "%s/%s", dir, name);
	cr_assert_eq(tu_write(out, data, len), 0);
	free(data);
	cr_assert_eq(sqlite3_open(out, &sq), SQLITE_OK);
	cr_assert_eq(sqlite3_exec(sq, sql, NULL, NULL, NULL), SQLITE_OK, "%s", sqlite3_errmsg(sq));
	sqlite3_close(sq);
}

/*
 * An export with NVTX ranges and no GPU work (the kernel, memcpy and memset
 * tables empty): no process has a rank, so every range is left out, and
 * the import neither fails nor hands bsearch() the absent process list
 * (found by fuzz.nsys; the sanitizer build reported it as undefined).
 */
Test(nsys, ranges_without_gpu_work)
{
	char path[4200];
	cvc_db *db;
	sqlite3 *sq;

	crafted("nogpu.sqlite", "DELETE FROM CUPTI_ACTIVITY_KIND_KERNEL;"
		"DELETE FROM CUPTI_ACTIVITY_KIND_MEMCPY; DELETE FROM CUPTI_ACTIVITY_KIND_MEMSET;",
		path, sizeof path);
	sq = open_plain(path);
	cr_assert_gt(tu_sq_int(sq, "SELECT count(*) FROM NVTX_EVENTS WHERE eventType IN (59,60) AND "
			       "\"end\" IS NOT NULL"), 0);
	sqlite3_close(sq);
	db = tu_import(path, "nogpu.db");
	sq = cvc_db_sqlite(db);
	cr_expect_eq(tu_sq_int(sq, "SELECT count(*) FROM activities"), 0);
	cr_expect_eq(tu_sq_int(sq, "SELECT count(*) FROM ranges"), 0);
	cvc_db_close(db);
}

/*
 * Values an export can hold that no GPU produced (issue 14, item 1): a
 * kernel ending at INT64_MAX, a start that is text, a device past 2^32.
 * Each is refused with the file, table and row, the database unchanged,
 * instead of importing and breaking every later analysis.
 */
Test(nsys, impossible_values_are_refused)
{
	static const char *const cases[][2] = {
		{"UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET \"end\"=9223372036854775807",
		 "expected start <= end within +-(2^62 - 1) ns"},
		{"UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET start='abc'", "expected integer start <= end"},
		{"UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET deviceId=4294967296",
		 "expected a device index 0..65535"},
		{"UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET deviceId=-1",
		 "expected a device index 0..65535"},
	};

	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char bad[4200], name[32];

		snprintf(name, sizeof name, "crafted%zu.sqlite", i);
		crafted(name, cases[i][0], bad, sizeof bad);
		expect_broken(bad, cases[i][1]);
	}
}

/*
 * A refused row is named by its rowid, which a user can look up in the
 * export (SELECT * FROM t WHERE rowid = N).  Was: the count of rows read,
 * which the duplicates left out (rowids 6 and 7 repeat 1 and 2) pulled
 * below the rowid ("row 6" for rowid 8), and for NVTX_EVENTS the count
 * over every table read before it.
 */
Test(nsys, a_refused_row_is_named_by_its_rowid)
{
	char bad[4200];

	crafted("rowid-kernel.sqlite",
		"INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL SELECT * FROM CUPTI_ACTIVITY_KIND_KERNEL"
		" WHERE rowid IN (1, 2) ORDER BY rowid;"
		"INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL SELECT * FROM CUPTI_ACTIVITY_KIND_KERNEL"
		" WHERE rowid = 3;"
		"UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET deviceId = -1, correlationId = 987654"
		" WHERE rowid = 8;",
		bad, sizeof bad);
	expect_broken(bad, "table CUPTI_ACTIVITY_KIND_KERNEL, rowid 8: expected a device index");
	crafted("rowid-nvtx.sqlite",
		"UPDATE NVTX_EVENTS SET \"end\" = start - 1 WHERE rowid = 24", bad, sizeof bad);
	expect_broken(bad, "table NVTX_EVENTS, rowid 24: expected start <= end");
}

/* A table replaced by a recursive view would be read forever (issue 14,
 * item 2): refused before any row, naming the file. */
Test(nsys, views_are_refused)
{
	char bad[4200];

	crafted("view.sqlite",
		"ALTER TABLE CUPTI_ACTIVITY_KIND_KERNEL RENAME TO k0;"
		"CREATE VIEW CUPTI_ACTIVITY_KIND_KERNEL AS WITH RECURSIVE r(x) AS "
		"(SELECT 1 UNION ALL SELECT x + 1 FROM r) SELECT k0.* FROM k0, r",
		bad, sizeof bad);
	expect_broken(bad, "holds a view ('CUPTI_ACTIVITY_KIND_KERNEL')");
	crafted("bigstrings.sqlite",
		"ALTER TABLE StringIds RENAME TO s0;"
		"CREATE VIEW StringIds AS SELECT id, value || zeroblob(900000000) AS value FROM s0",
		bad, sizeof bad);
	expect_broken(bad, "holds a view ('StringIds')");
}

/* A generated column is computed on every read, as a view is: 20k kernels
 * over a virtual StringIds.value took 79 s to import, holding the write
 * lock (issue 36 item 8).  Refused before any row, naming the column. */
Test(nsys, generated_columns_are_refused)
{
	static const char *const kinds[] = {"VIRTUAL", "STORED"};
	char bad[4200], sql[1024], name[64];

	for (int i = 0; i < 2; i++) {
		snprintf(sql, sizeof sql,
			 "ALTER TABLE StringIds RENAME TO s0;"
			 "CREATE TABLE StringIds(id INTEGER PRIMARY KEY, raw TEXT,"
			 " value TEXT GENERATED ALWAYS AS (raw) %s);"
			 "INSERT INTO StringIds(id, raw) SELECT id, value FROM s0; DROP TABLE s0;",
			 kinds[i]);
		snprintf(name, sizeof name, "generated%d.sqlite", i);
		crafted(name, sql, bad, sizeof bad);
		expect_broken(bad, "holds a generated column ('StringIds.value')");
	}
}

/*
 * One export per rank (srun nsys profile -o r%q{SLURM_PROCID}): each
 * counts its times from its own session's start, so each rank is given
 * that start as its clock offset, and the rank its launcher gave it.
 * Setup: rank 1's session started 0.8 s after rank 0's and is imported
 * first; both ran their kernel at the same wall time.  Before, rank 1 was
 * numbered 0 (file order) and the two were 800 ms apart.
 */
static void rank_export(const char *path, int procid, int64_t session, int64_t start)
{
	char sql[4096];

	snprintf(sql, sizeof sql,
		 TU_NSYS_HEAD_SQL ");"
		 "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (%lld,%lld,0,1,NULL,7,11,%lld,1,2,"
		 "NULL,64,8,1,1,256,1,1,0,0);"
		 "CREATE TABLE TARGET_INFO_SESSION_START_TIME(utcEpochNs INT, utcTime TEXT,"
		 " localTime TEXT);"
		 "INSERT INTO TARGET_INFO_SESSION_START_TIME VALUES(%lld,NULL,NULL);"
		 "CREATE TABLE TARGET_INFO_SYSTEM_ENV(globalVid INT, devStateName TEXT, name TEXT,"
		 " nameEnum INT, value TEXT);"
		 "INSERT INTO TARGET_INFO_SYSTEM_ENV VALUES(0,NULL,'Hostname',NULL,'node%d'),"
		 " (0,NULL,'DeviceEnvironment',NULL,'SLURM_JOB_ID=7;SLURM_PROCID=%d;SLURM_NTASKS=2');",
		 (long long)start, (long long)start + 1000000, (long long)(100 + procid) << 24,
		 (long long)session, procid, procid);
	write_export(path, sql);
}

Test(nsys, per_rank_exports_line_up)
{
	const char *dir = tu_tmpdir();
	char a[512], b[512], dbp[512], args[1200], *out = NULL, *err = NULL;
	const char *paths[2] = {a, b};
	const int64_t t0 = 1700000000000000000LL;
	cvc_db *db = NULL;
	sqlite3 *sq;

	snprintf(a, sizeof a, "%s/r1.sqlite", dir);
	snprintf(b, sizeof b, "%s/r0.sqlite", dir);
	snprintf(dbp, sizeof dbp, "%s/pr.db", dir);
	rank_export(a, 1, t0 + 800000000, 1000);
	rank_export(b, 0, t0, 800001000);
	cr_assert_eq(cvc_db_open(dbp, CVC_DB_CREATE, &db), CVC_OK);
	cr_assert_eq(cvc_import_files(db, paths, 2, tu_classifying(), NULL, NULL), CVC_OK, "%s",
		     cvc_db_errmsg(db));
	sq = cvc_db_sqlite(db);
	cr_expect_eq(tu_sq_int(sq, "SELECT pid FROM ranks WHERE rank=1"), 101, "SLURM_PROCID 1");
	cr_expect_eq(tu_sq_int(sq, "SELECT pid FROM ranks WHERE rank=0"), 100);
	cr_expect_eq(tu_sq_int(sq, "SELECT clock_offset_ns FROM ranks WHERE rank=1") -
			     tu_sq_int(sq, "SELECT clock_offset_ns FROM ranks WHERE rank=0"),
		     800000000);
	cr_expect_eq(tu_sq_int(sq, "SELECT count(*) FROM ranks WHERE host LIKE 'node_'"), 2);
	cr_expect_eq(tu_sq_int(sq, "SELECT max(world_size) FROM runs"), 2);
	cvc_db_close(db);
	snprintf(args, sizeof args, "analyze --db '%s' --format csv", dbp);
	cr_assert_eq(tu_cvc(args, &out, &err), 0, "%s", err);
	/* both ranks went quiet at the same wall time */
	cr_expect(strstr(out, ",0,0,1,0,1000.000,") && strstr(out, ",1,0,1,0,1000.000,"), "%s",
		  out);
	cr_expect(!strstr(out, "800000.000"), "%s", out);
	free(out);
	free(err);
}

/*
 * CUDA graphs traced whole (nsys's --cuda-graph-trace=graph): a row per
 * graph launch and none of its kernels; the import says so rather than
 * leave their time to read as idle.
 */
Test(nsys, graphs_traced_whole_are_said)
{
	const char *dir = tu_tmpdir();
	char path[512], args[1200], *out = NULL, *err = NULL;
	static const char sql[] =
		TU_NSYS_HEAD_SQL ");"
		"INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (1000,1050,0,1,NULL,7,11,1677721600,1,2,"
		"NULL,64,8,1,1,256,1,1,0,0);"
		"CREATE TABLE CUPTI_ACTIVITY_KIND_GRAPH_TRACE(start INT, end INT, deviceId INT,"
		" contextId INT, greenContextId INT, streamId INT, correlationId INT, globalPid INT,"
		" graphId INT, graphExecId INT);"
		"INSERT INTO CUPTI_ACTIVITY_KIND_GRAPH_TRACE VALUES"
		" (2000,2800,0,1,NULL,7,12,1677721600,1,1),(3000,3800,0,1,NULL,7,13,1677721600,1,1);";

	snprintf(path, sizeof path, "%s/graphs.sqlite", dir);
	write_export(path, sql);
	snprintf(args, sizeof args, "import --db '%s/g.db' '%s'", dir, path);
	cr_assert_eq(tu_cvc(args, &out, &err), 0, "%s", err);
	cr_expect(err && strstr(err, "warning: 'graphs.sqlite': 2 CUDA graph launches traced "
				     "whole"), "%s", err);
	free(out);
	free(err);
}

/* An NVTX range whose text is '' beside a textId (an export of the era
 * that wrote every field, defaults for missing ones) is named by its
 * textId, not left nameless. */
Test(nsys, empty_text_beside_a_text_id)
{
	const char *ex = tu_path(tu_tmpdir(), "empty.sqlite");
	cvc_db *db;
	char buf[64];
	static const char sql[] =
		TU_NSYS_HEAD_SQL ");"
		"INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (1000,1500,0,1,NULL,7,11,1677721600,1,2,"
		"NULL,64,8,1,1,256,1,1,0,0);"
		NVTX_TABLE_SQL
		"INSERT INTO NVTX_EVENTS VALUES(900,4000,59,0,0,0,'',1677721600,0,3,0);";

	write_export(ex, sql);
	db = tu_import(ex, "e.db");
	cr_expect_str_eq(tu_sq_text(cvc_db_sqlite(db), "SELECT s.value FROM ranges r JOIN strings s "
				    "ON s.id=r.name_id", buf, sizeof buf), "step");
	cvc_db_close(db);
}

/* A kernel CUPTI could not time (start = end = 0) is skipped and counted,
 * as cvc's own profiler does: stored, it stretched the rank's span back to
 * t = 0 and read as seconds of idle time. */
Test(nsys, untimed_rows_are_skipped_and_counted)
{
	const char *ex = tu_path(tu_tmpdir(), "untimed.sqlite");
	cvc_db *db;
	sqlite3 *sq;
	static const char sql[] =
		TU_NSYS_HEAD_SQL ");"
		"INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (5000000000,5000000100,0,1,NULL,7,11,"
		"1677721600,1,2,NULL,64,8,1,1,256,1,1,0,0),"
		" (0,0,0,1,NULL,7,12,1677721600,1,2,NULL,64,8,1,1,256,1,1,0,0);";

	write_export(ex, sql);
	db = tu_import(ex, "u.db");
	sq = cvc_db_sqlite(db);
	cr_expect_eq(tu_sq_int(sq, "SELECT count(*) FROM activities"), 1);
	cr_expect_eq(tu_sq_int(sq, "SELECT min(start_ns) FROM activities"), 5000000000LL);
	cr_expect_eq(tu_sq_int(sq, "SELECT CAST(value AS INT) FROM run_meta WHERE "
			       "key='untimed_records'"), 1);
	cvc_db_close(db);
}

/*
 * Claim: rows of an activity table that repeat an earlier row's start,
 * end, deviceId, streamId and correlationId (one stream runs one kernel,
 * copy or memset at a time: one activity written twice) are imported
 * once, the first in table order, for kernels, copies and memsets alike;
 * the import notes how many it dropped, naming the file.  Rows that differ
 * in one of those, or belong to another process, are all kept.  Setup: a
 * kernel written twice (the repeat under another name), one at the same
 * times on another stream, one with another correlation id, one in
 * another process; a copy written three times; a memset twice, and
 * another once.
 */
Test(nsys, repeated_rows_are_imported_once_and_said)
{
	const char *dir = tu_tmpdir();
	char path[512], args[1200], buf[512], *out = NULL, *err = NULL;
	cvc_db *db;
	sqlite3 *sq;
	static const char sql[] =
		TU_NSYS_HEAD_SQL ");"
		"INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES"
		" (1000,1050,0,1,NULL,7,11,1677721600,1,2,NULL,64,8,1,1,256,1,1,0,0),"
		" (2000,2400,0,1,NULL,7,12,1677721600,1,2,NULL,64,8,1,1,256,1,1,0,0),"
		" (1000,1050,0,1,NULL,7,11,1677721600,4,4,NULL,64,8,1,1,256,1,1,0,0),"
		" (1000,1050,0,1,NULL,8,11,1677721600,1,2,NULL,64,8,1,1,256,1,1,0,0),"
		" (1000,1050,0,1,NULL,7,13,1677721600,1,2,NULL,64,8,1,1,256,1,1,0,0),"
		" (1000,1050,0,1,NULL,7,11,1694498816,1,2,NULL,64,8,1,1,256,1,1,0,0);"
		"CREATE TABLE CUPTI_ACTIVITY_KIND_MEMCPY(start INT, end INT, deviceId INT,"
		" contextId INT, greenContextId INT, streamId INT, correlationId INT, globalPid INT,"
		" bytes INT, copyKind INT, srcKind INT, dstKind INT);"
		"INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY VALUES"
		" (3000,3100,0,1,NULL,7,14,1677721600,4096,1,0,2),"
		" (3000,3100,0,1,NULL,7,14,1677721600,4096,1,0,2),"
		" (3000,3100,0,1,NULL,7,14,1677721600,4096,1,0,2);"
		"CREATE TABLE CUPTI_ACTIVITY_KIND_MEMSET(start INT, end INT, deviceId INT,"
		" contextId INT, greenContextId INT, streamId INT, correlationId INT, globalPid INT,"
		" value INT, bytes INT, memKind INT);"
		"INSERT INTO CUPTI_ACTIVITY_KIND_MEMSET VALUES (4000,4010,0,1,NULL,7,15,1677721600,0,64,2),"
		" (4000,4010,0,1,NULL,7,15,1677721600,0,64,2), (5000,5010,0,1,NULL,7,16,1677721600,0,64,2);";

	snprintf(path, sizeof path, "%s/dups.sqlite", dir);
	write_export(path, sql);
	db = tu_import(path, "d.db");
	sq = cvc_db_sqlite(db);
	cr_expect_eq(tu_sq_int(sq, "SELECT count(*) FROM activities WHERE kind=1"), 5);
	cr_expect_eq(tu_sq_int(sq, "SELECT sum(end_ns-start_ns) FROM activities WHERE kind=1"),
		     4 * 50 + 400);
	cr_expect_eq(tu_sq_int(sq, "SELECT count(*) FROM activities WHERE kind=2"), 1);
	cr_expect_eq(tu_sq_int(sq, "SELECT count(*) FROM activities WHERE kind=3"), 2);
	/* the first of the two: its name, not the repeat's */
	cr_expect_eq(tu_sq_int(sq, "SELECT count(*) FROM activities a JOIN strings s ON "
			       "s.id=a.name_id WHERE s.value LIKE 'ncclDevKernel%'"), 0);
	cr_expect_str_eq(tu_sq_text(sq, "SELECT value FROM run_meta WHERE "
				    "key='nsys.duplicates[dups.sqlite]'", buf, sizeof buf),
			 "1 kernel row, 2 memcpy rows and 1 memset row repeat an earlier row's "
			 "start, end, device, stream and correlation id (one activity written "
			 "twice): the first imported, 4 dropped");
	cvc_db_close(db);
	/* the command says it, one line naming the file */
	snprintf(args, sizeof args, "import --db '%s/c.db' '%s'", dir, path);
	cr_assert_eq(tu_cvc(args, &out, &err), 0, "%s", err);
	cr_expect(err && strstr(err, "note: 'dups.sqlite': 1 kernel row, 2 memcpy rows and 1 "
				     "memset row repeat an earlier row's"), "%s", err);
	free(out);
	free(err);
}

/* An export without repeats says nothing of them. */
Test(nsys, no_repeats_no_note)
{
	const char *ex = tu_path(tu_tmpdir(), "once.sqlite");
	cvc_db *db;
	static const char sql[] =
		TU_NSYS_HEAD_SQL ");"
		"INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (1000,1050,0,1,NULL,7,11,1677721600,1,2,"
		"NULL,64,8,1,1,256,1,1,0,0),(1050,1100,0,1,NULL,7,12,1677721600,1,2,"
		"NULL,64,8,1,1,256,1,1,0,0);";

	write_export(ex, sql);
	db = tu_import(ex, "o.db");
	cr_expect_eq(tu_sq_int(cvc_db_sqlite(db), "SELECT count(*) FROM activities"), 2);
	cr_expect_eq(tu_sq_int(cvc_db_sqlite(db), "SELECT count(*) FROM run_meta WHERE key LIKE "
			       "'nsys.duplicates%'"), 0);
	cvc_db_close(db);
}
