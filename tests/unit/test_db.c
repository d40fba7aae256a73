/* test_db.c - the store: schema creation, versioning, transactions, writers. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <criterion/criterion.h>
#include <sqlite3.h>

#include "cvc/cvc_csv.h"
#include "cvc/cvc_db.h"
#include "cvc/cvc_vocab.h"
#include "cvc/cvc_model.h"
#include "testutil.h"

/* The version-1 schema, as released (db/schema.sql, compiled in). */
extern const char cvc_schema_sql[];

Test(db, creates_schema_and_reopens)
{
	const char *path = tu_path(tu_tmpdir(), "a.db");
	cvc_db *db = NULL;

	cr_assert_eq(cvc_db_open(path, 0, &db), CVC_ERR_NOTFOUND, "missing file without CREATE");
	cr_assert(strstr(cvc_db_errmsg(db), path), "%s", cvc_db_errmsg(db));
	cvc_db_close(db);
	cr_assert_eq(cvc_db_open(path, CVC_DB_CREATE, &db), CVC_OK, "%s", cvc_db_errmsg(db));
	cr_assert_eq(tu_db_int(db, "PRAGMA user_version"), CVC_DB_SCHEMA_VERSION);
	cr_assert_eq(tu_db_int(db, "PRAGMA application_id"), CVC_DB_APP_ID);
	cr_assert_eq(tu_db_int(db, "SELECT count(*) FROM sqlite_schema WHERE name='activities'"), 1);
	cvc_db_close(db);
	cr_assert_eq(cvc_db_open(path, CVC_DB_READONLY, &db), CVC_OK, "%s", cvc_db_errmsg(db));
	cvc_db_close(db);
}

/*
 * A database written by version 1 (schema.sql alone, user_version 1, one
 * op shape): read-only it opens as it is and trace GEMMs are still read;
 * opened for writing it is upgraded to the current version in place, with
 * its rows kept and op_launches added.
 */
Test(db, upgrades_version_1)
{
	const char *path = tu_path(tu_tmpdir(), "v1.db");
	char sql[128];
	sqlite3 *sq = NULL;
	cvc_db *db = NULL;
	cvc_model_trace_gemm *g = NULL;
	size_t n = 9;

	cr_assert_eq(sqlite3_open(path, &sq), SQLITE_OK);
	snprintf(sql, sizeof sql, "PRAGMA application_id=%d; PRAGMA user_version=1;",
		 (int)CVC_DB_APP_ID);
	cr_assert_eq(sqlite3_exec(sq, cvc_schema_sql, NULL, NULL, NULL), SQLITE_OK, "%s",
		     sqlite3_errmsg(sq));
	cr_assert_eq(sqlite3_exec(sq, sql, NULL, NULL, NULL), SQLITE_OK);
	cr_assert_eq(sqlite3_exec(sq,
				  "INSERT INTO runs(id,name) VALUES(1,'r');"
				  "INSERT INTO strings(id,value) VALUES(1,'aten::mm');"
				  "INSERT INTO op_shapes(run_id,rank,external_id,name_id,dims) "
				  "VALUES(1,0,5,1,'[[4,4],[4,4]]');",
				  NULL, NULL, NULL),
		     SQLITE_OK, "%s", sqlite3_errmsg(sq));
	sqlite3_close(sq);

	cr_assert_eq(cvc_db_open(path, CVC_DB_READONLY, &db), CVC_OK, "%s", cvc_db_errmsg(db));
	cr_expect_eq(tu_db_int(db, "PRAGMA user_version"), 1);
	cr_expect_eq(tu_db_int(db, "SELECT count(*) FROM sqlite_schema WHERE name='op_launches'"), 0);
	cr_expect_eq(cvc_model_trace_gemms(db, -1, &g, &n), CVC_OK, "%s", cvc_db_errmsg(db));
	cr_expect_eq(n, 0); /* no kernels: nothing linked, but the query ran */
	free(g);
	cvc_db_close(db);

	cr_assert_eq(cvc_db_open(path, CVC_DB_CREATE, &db), CVC_OK, "%s", cvc_db_errmsg(db));
	cr_expect_eq(tu_db_int(db, "PRAGMA user_version"), CVC_DB_SCHEMA_VERSION);
	cr_expect_eq(tu_db_int(db, "SELECT count(*) FROM sqlite_schema WHERE name='op_launches'"), 1);
	cr_expect_eq(tu_db_int(db, "SELECT count(*) FROM op_shapes WHERE external_id=5"), 1);
	cr_expect_eq(cvc_db_op_launch_add(db, 1, 1, 0, 77), CVC_OK, "%s", cvc_db_errmsg(db));
	cr_expect_eq(tu_db_int(db, "SELECT correlation FROM op_launches WHERE shape_id=1"), 77);
	cvc_db_close(db);
	/* and a second open has nothing left to do */
	cr_assert_eq(cvc_db_open(path, CVC_DB_CREATE, &db), CVC_OK, "%s", cvc_db_errmsg(db));
	cr_expect_eq(tu_db_int(db, "PRAGMA user_version"), CVC_DB_SCHEMA_VERSION);
	cvc_db_close(db);
}

/* The shape-op table (db/shapeops.c) is searched by bisection: every family
 * is reachable, first and last names included, and near misses are not. */
Test(db, shape_op_table)
{
	static const struct {
		const char *name;
		cvc_shape_kind kind;
	} cases[] = {
		{"aten::_log_softmax", CVC_SHAPE_NORM},           /* first */
		{"aten::threshold_backward", CVC_SHAPE_ELEMENTWISE}, /* last */
		{"aten::mm", CVC_SHAPE_GEMM},
		{"aten::addmm", CVC_SHAPE_GEMM},
		{"aten::native_layer_norm", CVC_SHAPE_NORM},
		{"aten::native_layer_norm_backward", CVC_SHAPE_NORM},
		{"aten::add_", CVC_SHAPE_ELEMENTWISE},
		{"aten::sum", CVC_SHAPE_REDUCTION},
		{"aten::copy_", CVC_SHAPE_COPY},
		{"aten::embedding", CVC_SHAPE_GATHER},
		{"aten::add__", CVC_SHAPE_NONE},
		{"aten::m", CVC_SHAPE_NONE},
		{"aten::layer_norm", CVC_SHAPE_NONE},  /* composite: native_layer_norm launches */
		{"aten::zzz", CVC_SHAPE_NONE},
		{"aten::", CVC_SHAPE_NONE},
		{"c10::mm", CVC_SHAPE_NONE},
	};

	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
		cr_expect_eq(cvc_db_shape_op(cases[i].name, strlen(cases[i].name)), cases[i].kind,
			     "%s", cases[i].name);
	/* a name given by length, not NUL */
	cr_expect_eq(cvc_db_shape_op("aten::mmXYZ", 8), CVC_SHAPE_GEMM);
	cr_expect_eq(cvc_db_shape_op(NULL, 8), CVC_SHAPE_NONE);
}

Test(db, refuses_newer_and_foreign_databases)
{
	const char *dir = tu_tmpdir();
	const char *newer = tu_path(dir, "newer.db"), *foreign = tu_path(dir, "foreign.db");
	sqlite3 *sq = NULL;
	cvc_db *db = NULL;

	cr_assert_eq(cvc_db_open(newer, CVC_DB_CREATE, &db), CVC_OK);
	cr_assert_eq(cvc_db_exec(db, "PRAGMA user_version=99"), CVC_OK);
	cvc_db_close(db);
	cr_assert_eq(cvc_db_open(newer, CVC_DB_CREATE, &db), CVC_ERR_VERSION);
	cr_assert(strstr(cvc_db_errmsg(db), "newer"), "%s", cvc_db_errmsg(db));
	cr_assert(strstr(cvc_db_errmsg(db), newer), "message names the file: %s",
		  cvc_db_errmsg(db));
	cvc_db_close(db);

	cr_assert_eq(sqlite3_open(foreign, &sq), SQLITE_OK);
	cr_assert_eq(sqlite3_exec(sq, "CREATE TABLE StringIds(id INTEGER, value TEXT)", NULL,
				  NULL, NULL), SQLITE_OK);
	sqlite3_close(sq);
	cr_assert_eq(cvc_db_open(foreign, CVC_DB_CREATE, &db), CVC_ERR_VERSION);
	cr_assert(strstr(cvc_db_errmsg(db), "not a cvc database"), "%s", cvc_db_errmsg(db));
	cvc_db_close(db);
	/* The foreign file was not written into. */
	cr_assert_eq(sqlite3_open(foreign, &sq), SQLITE_OK);
	{
		sqlite3_stmt *st;
		cr_assert_eq(sqlite3_prepare_v2(sq, "SELECT count(*) FROM sqlite_schema", -1,
						&st, NULL), SQLITE_OK);
		cr_assert_eq(sqlite3_step(st), SQLITE_ROW);
		cr_assert_eq(sqlite3_column_int(st, 0), 1);
		sqlite3_finalize(st);
	}
	sqlite3_close(sq);
}

Test(db, corrupt_file_is_an_error_not_a_crash)
{
	const char *path = tu_path(tu_tmpdir(), "garbage.db");
	char junk[8192];
	cvc_db *db = NULL;
	cvc_status st;

	memcpy(junk, "SQLite format 3", 16);
	for (size_t i = 16; i < sizeof junk; i++)
		junk[i] = (char)(i * 131 + 7);
	cr_assert_eq(tu_write(path, junk, sizeof junk), 0);
	st = cvc_db_open(path, CVC_DB_CREATE, &db);
	cr_assert_neq(st, CVC_OK);
	cr_assert(strstr(cvc_db_errmsg(db), path), "%s", cvc_db_errmsg(db));
	cvc_db_close(db);
}

Test(db, rollback_restores_and_forgets_interned_ids)
{
	const char *path = tu_path(tu_tmpdir(), "t.db");
	cvc_db *db = NULL;
	cvc_run_info ri = {.name = "r", .format = "test"};
	int64_t run, id1, id2, again;

	cr_assert_eq(cvc_db_open(path, CVC_DB_CREATE, &db), CVC_OK);
	cr_assert_eq(cvc_db_begin(db), CVC_OK);
	cr_assert_eq(cvc_db_run_new(db, &ri, &run), CVC_OK);
	cr_assert_eq(cvc_db_intern(db, "kernelA", 7, &id1), CVC_OK);
	cr_assert_eq(cvc_db_intern(db, "kernelA-and-more", 7, &again), CVC_OK);
	cr_assert_eq(id1, again, "length-delimited names intern by their bytes");
	cvc_db_rollback(db);
	cr_assert_eq(tu_db_int(db, "SELECT count(*) FROM runs"), 0);
	cr_assert_eq(tu_db_int(db, "SELECT count(*) FROM strings"), 0);

	/* After the rollback the cache must not hand out the vanished id. */
	cr_assert_eq(cvc_db_begin(db), CVC_OK);
	cr_assert_eq(cvc_db_intern(db, "other", 5, &id2), CVC_OK);
	cr_assert_eq(cvc_db_intern(db, "kernelA", 7, &id1), CVC_OK);
	cr_assert_eq(cvc_db_commit(db), CVC_OK);
	cr_assert_eq(tu_db_int(db, "SELECT count(*) FROM strings"), 2);
	cr_assert_neq(id1, id2);
	cvc_db_close(db);
}

Test(db, writers_store_every_field)
{
	const char *path = tu_path(tu_tmpdir(), "w.db");
	cvc_db *db = NULL;
	cvc_run_info ri = {.name = "job", .format = "kineto", .world_size = 8};
	cvc_run_info more = {.gpu_model = "NVIDIA H100", .world_size = 16};
	cvc_device_info dev = {.rank = 3, .device = 1, .name = "NVIDIA H100", .sm_count = 132,
			       .total_mem_bytes = 85899345920LL, .cc_major = 9, .cc_minor = 0};
	cvc_activity a = {.rank = 3, .device = 1, .kind = CVC_ACT_KERNEL, .start_ns = 1000,
			  .end_ns = 2500, .stream = 7, .context = 1, .correlation = 42,
			  .external_id = -1, .grid = {132, 1, 1}, .block = {384, 1, 1},
			  .registers = 168, .shared_mem_bytes = 231424};
	cvc_collective c = {.coll = "allreduce", .dtype = "Float", .in_nelems = 2049000,
			    .out_nelems = 2049000, .bytes = 8196000, .group_size = 2,
			    .root = -1};
	int64_t run, aid, found;
	sqlite3_stmt *st;

	cr_assert_eq(cvc_db_open(path, CVC_DB_CREATE, &db), CVC_OK);
	cr_assert_eq(cvc_db_begin(db), CVC_OK);
	cr_assert_eq(cvc_db_run_new(db, &ri, &run), CVC_OK);
	cr_assert_eq(cvc_db_run_merge(db, run, &more), CVC_OK);
	cr_assert_eq(cvc_db_run_find(db, "job", &found), CVC_OK);
	cr_assert_eq(found, run);
	cr_assert_eq(cvc_db_run_find(db, "nope", &found), CVC_ERR_NOTFOUND);
	cr_assert_eq(cvc_db_device_put(db, run, &dev), CVC_OK);
	a.run_id = run;
	cr_assert_eq(cvc_db_intern(db, "sm90_xmma_gemm", 14, &a.name_id), CVC_OK);
	cr_assert_eq(cvc_db_activity_add(db, &a, &aid), CVC_OK);
	c.activity_id = aid;
	cr_assert_eq(cvc_db_collective_add(db, &c), CVC_OK);
	cr_assert_eq(cvc_db_run_meta_add(db, run, "lost_records", 5), CVC_OK);
	cr_assert_eq(cvc_db_run_meta_add(db, run, "lost_records", 7), CVC_OK);
	cr_assert_eq(cvc_db_commit(db), CVC_OK);

	cr_assert_eq(tu_db_int(db, "SELECT world_size FROM runs"), 8, "merge keeps known fields");
	cr_assert_eq(tu_db_int(db, "SELECT count(*) FROM runs WHERE gpu_model='NVIDIA H100'"), 1);
	cr_assert_eq(tu_db_int(db, "SELECT value FROM run_meta WHERE key='lost_records'"), 12);
	st = tu_db_prepare(db, "SELECT rank,device,kind,start_ns,end_ns,stream,context,correlation,"
			   "external_id,grid_x,block_x,registers,shared_mem_bytes,bytes FROM activities");
	cr_assert_eq(sqlite3_step(st), SQLITE_ROW);
	cr_assert_eq(sqlite3_column_int(st, 0), 3);
	cr_assert_eq(sqlite3_column_int(st, 1), 1);
	cr_assert_eq(sqlite3_column_int(st, 2), CVC_ACT_KERNEL);
	cr_assert_eq(sqlite3_column_int64(st, 3), 1000);
	cr_assert_eq(sqlite3_column_int64(st, 4), 2500);
	cr_assert_eq(sqlite3_column_int64(st, 5), 7);
	cr_assert_eq(sqlite3_column_int64(st, 6), 1);
	cr_assert_eq(sqlite3_column_int64(st, 7), 42);
	cr_assert_eq(sqlite3_column_type(st, 8), SQLITE_NULL, "unknown external id is NULL");
	cr_assert_eq(sqlite3_column_int(st, 9), 132);
	cr_assert_eq(sqlite3_column_int(st, 10), 384);
	cr_assert_eq(sqlite3_column_int(st, 11), 168);
	cr_assert_eq(sqlite3_column_int64(st, 12), 231424);
	cr_assert_eq(sqlite3_column_type(st, 13), SQLITE_NULL, "kernels have no byte count");
	sqlite3_finalize(st);
	cr_assert_eq(tu_db_int(db, "SELECT bytes FROM collectives"), 8196000);
	cr_assert_eq(tu_db_int(db, "SELECT sm_count FROM devices WHERE rank=3 AND device=1"), 132);
	cvc_db_close(db);
}

/* Somebody else's SQLite file named with --db is left byte for byte as it
 * was: no switch to WAL, no side files (issue 14, item 5). */
Test(db, foreign_file_left_byte_for_byte)
{
	const char *dir = tu_tmpdir();
	char foreign[4096], wal[4200];
	char *before, *after;
	size_t nb, na;
	sqlite3 *sq = NULL;
	cvc_db *db = NULL;

	snprintf(foreign, sizeof foreign, "%s", tu_path(dir, "theirs.sqlite"));
	snprintf(wal, sizeof wal, "%s-wal", foreign);
	cr_assert_eq(sqlite3_open(foreign, &sq), SQLITE_OK);
	cr_assert_eq(sqlite3_exec(sq, "CREATE TABLE t(x); INSERT INTO t VALUES(1)", NULL, NULL,
				  NULL), SQLITE_OK);
	sqlite3_close(sq);
	before = tu_read(foreign, &nb);
	cr_assert_not_null(before);
	for (int mode = 0; mode < 2; mode++) {
		cr_assert_eq(cvc_db_open(foreign, mode ? CVC_DB_CREATE : 0, &db), CVC_ERR_VERSION);
		cvc_db_close(db);
	}
	after = tu_read(foreign, &na);
	cr_assert_not_null(after);
	cr_expect_eq(na, nb);
	cr_expect(memcmp(before, after, nb < na ? nb : na) == 0, "header or pages changed");
	cr_expect_eq(after[18], 1, "file format write version %d (2 = WAL)", after[18]);
	cr_expect(access(wal, F_OK) != 0, "a -wal file was left beside it");
	free(before);
	free(after);
}

static char *field(const char *s)
{
	char *out = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&out, &n);

	cvc_csv_field(f, s);
	fclose(f);
	return out;
}

/* CSV cells from traces and scenario files never run as spreadsheet
 * formulas; numbers stay numbers (issue 14, item 6). */
Test(db, csv_cells_are_not_formulas)
{
	static const char *const cases[][2] = {
		{"=HYPERLINK(\"http://x\")", "\"'=HYPERLINK(\"\"http://x\"\")\""},
		{"+cmd|' /C calc'!A0", "\"'+cmd|' /C calc'!A0\""},
		{"-x", "\"'-x\""},
		{"@SUM(A1)", "\"'@SUM(A1)\""},
		{"\tTAB", "\"'\tTAB\""},
		{"-1.5", "-1.5"},
		{"+7.68", "+7.68"},
		{"-inf", "-inf"},
		{"void kernel<-1>", "void kernel<-1>"},
		{"", ""},
	};

	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char *got = field(cases[i][0]);

		cr_expect_str_eq(got, cases[i][1], "'%s' -> %s", cases[i][0], got);
		free(got);
	}
}

/*
 * Claim: one vocabulary names copies for the profiler, the Nsight Systems
 * importer and the Kineto reader (db/vocab.c): CUPTI's copy kinds 1-10
 * as the words in "Memcpy HtoD (...)", read back to the same kind; 0,
 * Nsight's unified kinds 11-13 and anything else have no word, and a
 * word that only starts like one is none.  The memory kinds: CUPTI's
 * 0-7, "Unknown" past them.
 */
Test(db, copy_and_memory_kind_words)
{
	static const char *const want[] = {NULL,   "HtoD", "DtoH", "HtoA", "AtoH", "AtoA",
					   "AtoD", "DtoA", "DtoD", "HtoH", "PtoP"};

	for (unsigned k = 0; k < 14; k++) {
		const char *w = cvc_copy_kind_word(k);

		if (k < 11 && want[k]) {
			cr_assert_str_eq(w, want[k]);
			cr_expect_eq(cvc_copy_kind_of(w, strlen(w)), k);
		} else {
			cr_expect_null(w, "kind %u: %s", k, w);
		}
	}
	cr_expect_eq(cvc_copy_kind_of("HtoDx", 5), 0);
	cr_expect_eq(cvc_copy_kind_of("HtoD (Pinned", 4), 1);
	cr_expect_eq(cvc_copy_kind_of(NULL, 0), 0);
	cr_expect_str_eq(cvc_mem_kind_name(1), "Pageable");
	cr_expect_str_eq(cvc_mem_kind_name(7), "Managed Static");
	cr_expect_str_eq(cvc_mem_kind_name(8), "Unknown");
}
