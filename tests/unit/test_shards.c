/* test_shards.c - merging cvc shard databases (cvc_import_cvcdb), the path
 * shared by per-node imports and `cvc import -j N`. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>
#include <sqlite3.h>

#include "cvc/cvc_db.h"
#include "cvc/cvc_import.h"
#include "cvc/cvc_classify.h"
#include "testutil.h"

/* First column of the first row as a malloc'd string ("" when NULL). */
static char *q_str(cvc_db *db, const char *sql)
{
	sqlite3_stmt *st = NULL;
	const char *v = NULL;
	char *out;

	cr_assert(sqlite3_prepare_v2(cvc_db_sqlite(db), sql, -1, &st, NULL) == SQLITE_OK,
		  "%s: %s", sql, sqlite3_errmsg(cvc_db_sqlite(db)));
	if (sqlite3_step(st) == SQLITE_ROW)
		v = (const char *)sqlite3_column_text(st, 0);
	out = strdup(v ? v : "");
	sqlite3_finalize(st);
	return out;
}

/* The first column of sql's first row is want. */
static void expect_text(cvc_db *db, const char *sql, const char *want)
{
	char *v = q_str(db, sql);

	cr_assert_str_eq(v, want, "%s: '%s', want '%s'", sql, v, want);
	free(v);
}

/*
 * What must survive a merge unchanged, each as one ordered text: ids and
 * string ids differ between databases, so everything is joined to values.
 */
static const char *const fingerprints[] = {
	/* per-rank, per-kind counts and summed durations */
	"SELECT group_concat(x, ';') FROM (SELECT rank||'/'||kind||'/'||count(*)||'/'||"
	"sum(end_ns-start_ns) x FROM activities GROUP BY rank, kind ORDER BY rank, kind)",
	/* every activity with its name */
	"SELECT group_concat(x, ';') FROM (SELECT a.rank||'/'||a.device||'/'||a.kind||'/'||"
	"a.start_ns||'/'||a.end_ns||'/'||coalesce(a.stream,'')||'/'||coalesce(a.correlation,'')"
	"||'/'||coalesce(a.external_id,'')||'/'||coalesce(a.grid_x,'')||'/'||coalesce(a.bytes,'')"
	"||'/'||s.value x FROM activities a JOIN strings s ON s.id=a.name_id "
	"ORDER BY a.rank, a.device, a.start_ns, a.end_ns, s.value, a.stream)",
	/* collectives, attached to the right activity */
	"SELECT group_concat(x, ';') FROM (SELECT a.rank||'/'||a.start_ns||'/'||s.value||'/'||"
	"coalesce(c.coll,'')||'/'||coalesce(c.dtype,'')||'/'||coalesce(c.in_nelems,'')||'/'||"
	"coalesce(c.out_nelems,'')||'/'||coalesce(c.bytes,'')||'/'||coalesce(c.group_size,'')||'/'"
	"||coalesce(c.pg_name,'')||'/'||coalesce(c.pg_ranks,'')||'/'||coalesce(c.root,'') x "
	"FROM collectives c JOIN activities a ON a.id=c.activity_id JOIN strings s ON "
	"s.id=a.name_id ORDER BY a.rank, a.start_ns, s.value, c.coll)",
	/* the names in use */
	"SELECT group_concat(v, char(10)) FROM (SELECT DISTINCT s.value v FROM strings s WHERE "
	"s.id IN (SELECT name_id FROM activities UNION SELECT name_id FROM ranges) ORDER BY 1)",
	"SELECT group_concat(x, ';') FROM (SELECT r.rank||'/'||r.device||'/'||r.kind||'/'||"
	"r.start_ns||'/'||r.end_ns||'/'||coalesce(r.tid,'')||'/'||coalesce(r.domain,'')||'/'||"
	"s.value x FROM ranges r JOIN strings s ON s.id=r.name_id "
	"ORDER BY r.rank, r.start_ns, r.end_ns, s.value, r.kind)",
	"SELECT group_concat(x, ';') FROM (SELECT rank||'/'||coalesce(host,'')||'/'||"
	"coalesce(pid,'')||'/'||clock_offset_ns x FROM ranks ORDER BY rank)",
	"SELECT group_concat(x, ';') FROM (SELECT rank||'/'||device||'/'||coalesce(name,'')||'/'||"
	"coalesce(sm_count,'')||'/'||coalesce(total_mem_bytes,'') x FROM devices ORDER BY rank, device)",
	"SELECT group_concat(x, ';') FROM (SELECT path||'/'||format||'/'||coalesce(rank,'')||'/'||"
	"events x FROM sources ORDER BY path)",
	"SELECT group_concat(x, ';') FROM (SELECT op||'/'||size_bytes||'/'||in_place||'/'||"
	"time_us||'/'||busbw_gbps x FROM nccl_tests ORDER BY op, size_bytes, in_place)",
	"SELECT coalesce(format,'')||'/'||coalesce(tool_version,'')||'/'||coalesce(gpu_model,'')||"
	"'/'||coalesce(world_size,'') FROM runs",
	/* GEMM-like ops with shapes, and the launches nested in each */
	"SELECT group_concat(x, ';') FROM (SELECT o.rank||'/'||o.external_id||'/'||s.value||'/'||"
	"o.dims||'/'||coalesce(o.types,'')||'/'||coalesce((SELECT group_concat(c, ',') FROM "
	"(SELECT l.correlation c FROM op_launches l WHERE l.shape_id=o.id AND l.rank=o.rank "
	"ORDER BY 1)),'') x FROM op_shapes o JOIN strings s ON s.id=o.name_id "
	"ORDER BY o.rank, o.external_id, s.value, o.dims, x)",
};

static void same_content(cvc_db *a, cvc_db *b)
{
	for (size_t i = 0; i < sizeof fingerprints / sizeof fingerprints[0]; i++) {
		char *x = q_str(a, fingerprints[i]), *y = q_str(b, fingerprints[i]);

		cr_expect(strcmp(x, y) == 0, "differs: %s\n--- a: %.600s\n--- b: %.600s",
			  fingerprints[i], x, y);
		free(x);
		free(y);
	}
}

static cvc_db *open_db(const char *path)
{
	cvc_db *db = NULL;

	cr_assert_eq(cvc_db_open(path, CVC_DB_CREATE, &db), CVC_OK, "%s", path);
	return db;
}

static cvc_status import(cvc_db *db, const char *const *paths, int n, int jobs)
{
	cvc_import_opts o = {.run_name = "job", .jobs = jobs, .after = cvc_classify_after_import};

	return cvc_import_files(db, paths, n, &o, NULL, NULL);
}

/*
 * A shard written with the store's writers: ranks r0 and r0+1, one kernel
 * each plus an NCCL kernel with its collective on r0, a range, a counter.
 * `order` changes the order strings are interned, so ids differ per shard.
 */
static void make_shard(const char *path, int r0, int order, int auto_rank)
{
	cvc_db *db = open_db(path);
	cvc_run_info ri = {.name = "node", .format = "kineto", .world_size = 4,
			   .gpu_model = "NVIDIA A100-SXM4-80GB"};
	const char *names[3] = {"gemm_kernel", "ncclDevKernel_AllReduce_Sum_f32_RING_LL",
				"elementwise_kernel"};
	int64_t run, id[3], aid;
	char src[64];

	cr_assert_eq(cvc_db_begin(db), CVC_OK);
	cr_assert_eq(cvc_db_run_new(db, &ri, &run), CVC_OK);
	for (int i = 0; i < 3; i++) {
		int k = order ? 2 - i : i;

		cr_assert_eq(cvc_db_intern(db, names[k], strlen(names[k]), &id[k]), CVC_OK);
	}
	if (auto_rank)
		cr_assert_eq(cvc_db_run_meta_set(db, run, "import.auto_rank", "1"), CVC_OK);
	cr_assert_eq(cvc_db_run_meta_add(db, run, "lost_records", 3 + r0), CVC_OK);
	for (int r = r0; r < r0 + 2; r++) {
		cvc_rank_info rk = {.rank = r, .host = "node", .pid = 1000 + r};
		cvc_device_info dv = {.rank = r, .device = r % 8, .name = "NVIDIA A100-SXM4-80GB",
				      .sm_count = 108, .cc_major = 8, .cc_minor = 0};
		cvc_activity a = {.run_id = run, .rank = r, .device = r % 8,
				  .kind = CVC_ACT_KERNEL, .name_id = id[0],
				  .start_ns = 1000 * r, .end_ns = 1000 * r + 500 + r,
				  .stream = 7, .context = 1, .correlation = 10 + r,
				  .external_id = -1, .grid = {4, 1, 1}, .block = {128, 1, 1}};
		cvc_range rg = {.run_id = run, .rank = r, .device = -1, .kind = CVC_RANGE_CPU,
				.name_id = id[2], .start_ns = 900 * r, .end_ns = 900 * r + 2000,
				.tid = 5, .domain = NULL};

		cr_assert_eq(cvc_db_rank_put(db, run, &rk), CVC_OK);
		cr_assert_eq(cvc_db_device_put(db, run, &dv), CVC_OK);
		cr_assert_eq(cvc_db_activity_add(db, &a, NULL), CVC_OK);
		cr_assert_eq(cvc_db_range_add(db, &rg), CVC_OK);
		snprintf(src, sizeof src, "rank%d.json", r);
		cr_assert_eq(cvc_db_source_add(db, run, src, "kineto", r, 42, NULL), CVC_OK);
	}
	{
		cvc_activity a = {.run_id = run, .rank = r0, .device = r0 % 8,
				  .kind = CVC_ACT_KERNEL, .name_id = id[1], .start_ns = 5000,
				  .end_ns = 9000 + r0, .stream = 20, .context = 1,
				  .correlation = 99, .external_id = 77};
		cvc_collective c = {.coll = "allreduce", .dtype = "Float", .in_nelems = 1024 * (r0 + 1),
				    .out_nelems = 1024 * (r0 + 1), .bytes = 4096 * (r0 + 1),
				    .group_size = 4, .pg_name = "0", .pg_ranks = "[0, 1, 2, 3]",
				    .root = -1};

		cr_assert_eq(cvc_db_activity_add(db, &a, &aid), CVC_OK);
		c.activity_id = aid;
		cr_assert_eq(cvc_db_collective_add(db, &c), CVC_OK);
	}
	cr_assert_eq(cvc_db_commit(db), CVC_OK);
	cvc_db_close(db);
}

/* Two shards in a fresh directory, and both their paths in import order. */
struct two_shards {
	char dir[4096], s1[4200], s2[4200];
	const char *paths[2];
};

/* Imports the n files at paths into a new dir/name with `jobs` jobs; asserts the status. */
static cvc_db *import_into(const char *dir, const char *name, const char *const *paths, int n,
			   int jobs, cvc_status want)
{
	cvc_db *db = open_db(tu_path(dir, name));
	cvc_status st = import(db, paths, n, jobs);

	cr_assert_eq(st, want, "%s: status %d, want %d: %s", name, st, want, cvc_db_errmsg(db));
	return db;
}

/* Merges the two files at paths into a new dir/name, one job; asserts the status. */
static cvc_db *merge_into(const char *dir, const char *name, const char *const *paths,
			  cvc_status want)
{
	return import_into(dir, name, paths, 2, 1, want);
}

/*
 * Writes dir/s1.db with ranks 0 and 1 and dir/s2.db with ranks r0 and r0+1,
 * its strings interned in `order` (auto_rank marks both as numbered by the
 * importer), and merges them into dir/all.db; asserts the status.
 */
static cvc_db *merge_two(struct two_shards *t, int r0, int order, int auto_rank,
			 cvc_status want)
{
	snprintf(t->dir, sizeof t->dir, "%s", tu_tmpdir());
	snprintf(t->s1, sizeof t->s1, "%s/s1.db", t->dir);
	snprintf(t->s2, sizeof t->s2, "%s/s2.db", t->dir);
	t->paths[0] = t->s1;
	t->paths[1] = t->s2;
	make_shard(t->s1, 0, 0, auto_rank);
	make_shard(t->s2, r0, order, auto_rank);
	return merge_into(t->dir, "all.db", t->paths, want);
}

/*
 * Imports the n files at paths with one job and, through shard databases,
 * with two: both succeed and hold the same content.  Returns the parallel
 * import for more checks (caller closes).
 */
static cvc_db *parallel_equals_sequential(const char *const *paths, int n)
{
	const char *dir = tu_tmpdir();
	cvc_db *seq = import_into(dir, "seq.db", paths, n, 1, CVC_OK);
	cvc_db *par = import_into(dir, "par.db", paths, n, 2, CVC_OK);

	same_content(seq, par);
	cvc_db_close(seq);
	return par;
}

Test(shards, merges_written_shards)
{
	struct two_shards t;
	cvc_db *db = merge_two(&t, 2, 1, 0, CVC_OK);

	cr_assert_eq(tu_db_int(db, "SELECT count(*) FROM runs"), 1);
	cr_assert_eq(tu_db_int(db, "SELECT count(*) FROM ranks"), 4);
	cr_assert_eq(tu_db_int(db, "SELECT count(*) FROM activities"), 6);
	cr_assert_eq(tu_db_int(db, "SELECT count(*) FROM ranges"), 4);
	cr_assert_eq(tu_db_int(db, "SELECT count(*) FROM sources"), 4);
	cr_assert_eq(tu_db_int(db, "SELECT count(*) FROM devices"), 4);
	/* Each kernel keeps its rank and duration: 500 + r ns. */
	cr_assert_eq(tu_db_int(db, "SELECT count(*) FROM activities a JOIN strings s ON "
			       "s.id=a.name_id WHERE s.value='gemm_kernel' AND "
			       "end_ns-start_ns=500+rank"), 4);
	/* Names were remapped by value: the shards interned them in other orders. */
	cr_assert_eq(tu_db_int(db, "SELECT count(*) FROM strings WHERE value IN ('gemm_kernel',"
			       "'elementwise_kernel','ncclDevKernel_AllReduce_Sum_f32_RING_LL')"), 3);
	cr_assert_eq(tu_db_int(db, "SELECT count(*) FROM ranges r JOIN strings s ON s.id=r.name_id "
			       "WHERE s.value='elementwise_kernel'"), 4);
	/* Collectives follow their activity's new id. */
	cr_assert_eq(tu_db_int(db, "SELECT count(*) FROM collectives"), 2);
	cr_assert_eq(tu_db_int(db, "SELECT count(*) FROM collectives c JOIN activities a ON "
			       "a.id=c.activity_id JOIN strings s ON s.id=a.name_id WHERE "
			       "s.value LIKE 'nccl%' AND c.bytes=4096*(a.rank+1) AND "
			       "a.external_id=77"), 2);
	/* Integer counters of both nodes add up; run fields merged. */
	expect_text(db, "SELECT value FROM run_meta WHERE key='lost_records'", "8");
	expect_text(db, "SELECT format||' '||gpu_model||' '||world_size FROM runs",
		    "kineto NVIDIA A100-SXM4-80GB 4");
	cvc_db_close(db);
}

/* A shard compressed for the trip between nodes merges like the plain one. */
Test(shards, compressed_shard_merges_like_plain)
{
	struct two_shards t;
	char gz2[4300], cmd[9000];
	const char *packed[2] = {t.s1, gz2};
	cvc_db *a, *b;

	a = merge_two(&t, 2, 1, 0, CVC_OK);
	snprintf(gz2, sizeof gz2, "%s.gz", t.s2);
	snprintf(cmd, sizeof cmd, "gzip -c '%s' > '%s'", t.s2, gz2);
	cr_assert_eq(tu_run(cmd, NULL, NULL), 0);
	b = merge_into(t.dir, "packed.db", packed, CVC_OK);
	cr_assert_eq(tu_db_int(b, "SELECT count(*) FROM ranks"), 4);
	same_content(a, b);
	cvc_db_close(a);
	cvc_db_close(b);
}

Test(shards, same_rank_twice_is_a_conflict)
{
	struct two_shards t;
	cvc_db *db = merge_two(&t, 1, 0, 0, CVC_ERR_FORMAT); /* ranks 1 and 2: 1 in both */

	tu_expect_rolled_back(db, t.s2, "rank 1 is already in run 'job'", "runs activities");
	cvc_db_close(db);
}

Test(shards, importer_numbered_ranks_are_renumbered)
{
	struct two_shards t;
	cvc_db *db = merge_two(&t, 0, 1, 1, CVC_OK);

	expect_text(db, "SELECT group_concat(rank||':'||pid) FROM (SELECT rank, pid FROM ranks "
		    "ORDER BY rank)", "0:1000,1:1001,2:1000,3:1001");
	/* Data follows its rank: the second shard's rank 0 is now 2. */
	cr_assert_eq(tu_db_int(db, "SELECT count(*) FROM collectives c JOIN activities a ON "
			       "a.id=c.activity_id WHERE a.rank IN (0, 2)"), 2);
	cr_assert_eq(tu_db_int(db, "SELECT count(*) FROM sources WHERE rank=3"), 1);
	cvc_db_close(db);
}

Test(shards, refuses_newer_and_foreign_files)
{
	const char *dir = tu_tmpdir();
	char s1[4200];
	const char *paths[1] = {s1};
	sqlite3 *sq = NULL;
	cvc_db *db;

	snprintf(s1, sizeof s1, "%s/s1.db", dir);
	make_shard(s1, 0, 0, 0);
	cr_assert_eq(sqlite3_open(s1, &sq), SQLITE_OK);
	cr_assert_eq(sqlite3_exec(sq, "PRAGMA user_version=99", NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(sq);
	db = open_db(tu_path(dir, "all.db"));
	cr_assert_eq(import(db, paths, 1, 1), CVC_ERR_VERSION);
	cr_assert(strstr(cvc_db_errmsg(db), "schema version 99 is newer"), "%s",
		  cvc_db_errmsg(db));
	cr_assert(strstr(cvc_db_errmsg(db), s1), "%s", cvc_db_errmsg(db));
	cr_assert_eq(cvc_exit_code(CVC_ERR_VERSION), 2);
	cr_assert_eq(tu_db_int(db, "SELECT count(*) FROM runs"), 0);
	cvc_db_close(db);
}

/* -j 2 goes through shard databases: same content as a sequential import. */
Test(shards, parallel_nsys_equals_sequential)
{
	char *a = strdup(tu_shared("traces/pipit-nsys-sqlite-perlmutter/"
				   "perlmutter-cloverleaf-cuda.sqlite.gz"));
	char *b = strdup(tu_shared("traces/pipit-nsys-sqlite-perlmutter/"
				   "saxpy-mpi-cuda_nsys_perlmutter0.sqlite.gz"));
	const char *paths[2] = {a, b};
	cvc_db *par = parallel_equals_sequential(paths, 2);

	cr_assert_eq(tu_db_int(par, "SELECT count(*) FROM ranks"), 2);
	cr_assert_gt(tu_db_int(par, "SELECT count(*) FROM activities"), 1000);
	cvc_db_close(par);
	free(a);
	free(b);
}

/*
 * The 8 DLRM ranks imported as two per-node shards of 4 files, then merged,
 * equal the same 8 files imported directly (needs the Kineto importer).
 */
Test(shards, dlrm_two_shards_equal_direct_import)
{
	const char *dir = tu_tmpdir();
	char *p[8], s1[4200], s2[4200];
	const char *shards[2] = {s1, s2};
	cvc_db *merged, *direct;

	snprintf(s1, sizeof s1, "%s/node0.db", dir);
	snprintf(s2, sizeof s2, "%s/node1.db", dir);
	tu_dlrm_paths(p);
	cvc_db_close(import_into(dir, "node0.db", (const char *const *)p, 4, 1, CVC_OK));
	cvc_db_close(import_into(dir, "node1.db", (const char *const *)p + 4, 4, 1, CVC_OK));
	merged = merge_into(dir, "merged.db", shards, CVC_OK);
	direct = import_into(dir, "direct.db", (const char *const *)p, 8, 1, CVC_OK);
	cr_assert_eq(tu_db_int(direct, "SELECT count(DISTINCT rank) FROM activities"), 8);
	/* These traces predate PyTorch's collective args: NCCL kernels, no sizes. */
	cr_assert_gt(tu_db_int(direct, "SELECT count(*) FROM activities a JOIN strings s ON "
				   "s.id=a.name_id WHERE s.value LIKE 'ncclKernel%'"), 0);
	same_content(direct, merged);
	cvc_db_close(merged);
	cvc_db_close(direct);
	for (int i = 0; i < 8; i++)
		free(p[i]);
}

Test(shards, dlrm_parallel_equals_sequential)
{
	char *p[8];
	cvc_db *par;

	tu_dlrm_paths(p);
	par = parallel_equals_sequential((const char *const *)p, 8);
	cr_assert_eq(tu_db_int(par, "SELECT count(DISTINCT rank) FROM activities"), 8);
	cvc_db_close(par);
	for (int i = 0; i < 8; i++)
		free(p[i]);
}

/* Called directly (the detector sends plain SQLite files to the nsys importer). */
Test(shards, direct_call_refuses_foreign_sqlite)
{
	const char *dir = tu_tmpdir();
	char other[4200];
	sqlite3 *sq = NULL;
	cvc_run_info ri = {.name = "x"};
	cvc_db *db;
	int64_t run;

	snprintf(other, sizeof other, "%s/other.sqlite", dir);
	cr_assert_eq(sqlite3_open(other, &sq), SQLITE_OK);
	cr_assert_eq(sqlite3_exec(sq, "CREATE TABLE runs(id INTEGER PRIMARY KEY)", NULL, NULL,
				  NULL), SQLITE_OK);
	sqlite3_close(sq);
	db = open_db(tu_path(dir, "all.db"));
	cr_assert_eq(cvc_db_begin(db), CVC_OK);
	cr_assert_eq(cvc_db_run_new(db, &ri, &run), CVC_OK);
	cr_assert_eq(cvc_import_cvcdb(db, run, other, NULL, NULL), CVC_ERR_VERSION);
	cr_assert(strstr(cvc_db_errmsg(db), "not a cvc database"), "%s", cvc_db_errmsg(db));
	cr_assert(strstr(cvc_db_errmsg(db), other), "%s", cvc_db_errmsg(db));
	cvc_db_rollback(db);
	cvc_db_close(db);
}

/* A shard whose pages were damaged after the header fails as bad input. */
Test(shards, corrupt_shard_fails_cleanly)
{
	const char *dir = tu_tmpdir();
	char s1[4200], *data;
	const char *paths[1] = {s1};
	size_t len;
	cvc_db *db;

	snprintf(s1, sizeof s1, "%s/s1.db", dir);
	make_shard(s1, 0, 0, 0);
	data = tu_read(s1, &len);
	cr_assert(data && len > 8192);
	for (size_t i = 4096; i < len; i++)
		data[i] = (char)(i * 31 + 1);
	cr_assert_eq(tu_write(s1, data, len), 0);
	free(data);
	db = open_db(tu_path(dir, "all.db"));
	cr_assert_eq(import(db, paths, 1, 1), CVC_ERR_FORMAT, "%s", cvc_db_errmsg(db));
	cr_assert(strstr(cvc_db_errmsg(db), s1), "%s", cvc_db_errmsg(db));
	cr_assert_eq(tu_db_int(db, "SELECT count(*) FROM runs"), 0, "rolled back");
	cvc_db_close(db);
}
