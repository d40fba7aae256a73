/* test_kineto.c - the Kineto / PyTorch profiler Chrome-trace importer: every
 * Kineto trace in ../shared/traces against INDEX.md's reference table, and
 * generated fixtures (exact fractional times, escapes, collective sizes
 * joined through record_param_comms, keys in any order, gzip) and broken
 * files that must fail with one positioned message and leave the database
 * as it was. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <criterion/criterion.h>
#include <sqlite3.h>
#include <zlib.h>

#include "cvc/cvc_db.h"
#include "cvc/cvc_import.h"
#include "cvc/cvc_classify.h"
#include "testutil.h"

static int64_t q_int(cvc_db *db, const char *sql)
{
	sqlite3 *sq = cvc_db_sqlite(db);
	sqlite3_stmt *st = NULL;
	int64_t n = -1;

	cr_assert(sqlite3_prepare_v2(sq, sql, -1, &st, NULL) == SQLITE_OK, "%s: %s", sql,
		  sqlite3_errmsg(sq));
	if (sqlite3_step(st) == SQLITE_ROW)
		n = sqlite3_column_type(st, 0) == SQLITE_NULL ? -999 : sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return n;
}

static const char *q_text(cvc_db *db, const char *sql)
{
	static char buf[4][1024];
	static int next;
	char *b = buf[next++ & 3];
	sqlite3 *sq = cvc_db_sqlite(db);
	sqlite3_stmt *st = NULL;

	b[0] = '\0';
	cr_assert(sqlite3_prepare_v2(sq, sql, -1, &st, NULL) == SQLITE_OK, "%s: %s", sql,
		  sqlite3_errmsg(sq));
	if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_text(st, 0))
		snprintf(b, 1024, "%s", (const char *)sqlite3_column_text(st, 0));
	sqlite3_finalize(st);
	return b;
}

static cvc_db *new_db(const char *dir)
{
	cvc_db *db = NULL;

	cr_assert_eq(cvc_db_open(tu_path(dir, "t.db"), CVC_DB_CREATE, &db), CVC_OK);
	return db;
}

static cvc_status import1(cvc_db *db, const char *path)
{
	const char *paths[1] = {path};

	return cvc_import_files(db, paths, 1, tu_classifying(), NULL, NULL);
}

/* ---- shared traces against INDEX.md ------------------------------------- */

struct ref {
	const char *rel;
	int rank, world, device;
	int64_t n_kern, sum_kern_ns;
	const char *gpu;
};

static void check_ref(cvc_db *db, const struct ref *r)
{
	char sql[512];

	snprintf(sql, sizeof sql,
		 "SELECT count(*) FROM activities WHERE kind=1 AND rank=%d AND device=%d",
		 r->rank, r->device);
	cr_assert_eq(q_int(db, sql), r->n_kern, "%s: kernels", r->rel);
	snprintf(sql, sizeof sql,
		 "SELECT sum(end_ns-start_ns) FROM activities WHERE kind=1 AND rank=%d", r->rank);
	cr_assert_eq(q_int(db, sql), r->sum_kern_ns, "%s: kernel time", r->rel);
	snprintf(sql, sizeof sql, "SELECT name FROM devices WHERE rank=%d AND device=%d",
		 r->rank, r->device);
	cr_assert_str_eq(q_text(db, sql), r->gpu, "%s", r->rel);
	snprintf(sql, sizeof sql, "SELECT count(*) FROM devices WHERE rank=%d", r->rank);
	cr_assert_eq(q_int(db, sql), 1, "%s: only the device the events ran on", r->rel);
	snprintf(sql, sizeof sql, "SELECT count(*) FROM ranks WHERE rank=%d", r->rank);
	cr_assert_eq(q_int(db, sql), 1);
	/* Every activity and range is well formed and on the file's rank. */
	cr_assert_eq(q_int(db, "SELECT count(*) FROM activities WHERE end_ns < start_ns"), 0);
	cr_assert_eq(q_int(db, "SELECT count(*) FROM ranges WHERE end_ns < start_ns"), 0);
}

static void check_single(const struct ref *r)
{
	const char *dir = tu_tmpdir();
	const char *path = tu_shared(r->rel);
	cvc_db *db = new_db(dir);
	cvc_import_stats st = {0};
	const char *paths[1] = {path};

	cr_assert_eq(cvc_import_files(db, paths, 1, tu_classifying(), NULL, &st), CVC_OK, "%s",
		     cvc_db_errmsg(db));
	check_ref(db, r);
	cr_assert_eq(q_int(db, "SELECT count(*) FROM ranks"), 1);
	if (r->world)
		cr_assert_eq(q_int(db, "SELECT world_size FROM runs"), r->world);
	else
		cr_assert_eq(q_int(db, "SELECT world_size FROM runs"), -999, "unknown = NULL");
	cr_assert_str_eq(q_text(db, "SELECT gpu_model FROM runs"), r->gpu);
	cr_assert_str_eq(q_text(db, "SELECT format FROM runs"), "kineto");
	cr_assert_eq(q_int(db, "SELECT count(*) FROM activities"), st.activities);
	cr_assert_eq(q_int(db, "SELECT count(*) FROM ranges"), st.ranges);
	cr_assert_eq(q_int(db, "SELECT events FROM sources"), st.events);
	cr_assert_gt(st.events, st.activities);
	cvc_db_close(db);
}

#define DDP "traces/hta-ddp-v100-2rank/df_index_resolver.json.gz"
#define NCCL_ARGS "traces/hta-nccl-args-a100-w2/nccl_data.json.gz"
#define QWEN "traces/tracelens-h100-qwen05b/Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz"

Test(kineto, hta_ddp_v100_2rank)
{
	struct ref r = {DDP, 1, 2, 1, 19370, 977859000, "Tesla V100-SXM2-32GB"};
	const char *dir = tu_tmpdir();
	cvc_db *db = new_db(dir);

	check_single(&r);
	/* Counts of INDEX's category census: 2020 AllReduce on stream 14,
	   2040 memcpy, 880 memset, 2035 user_annotation ranges. */
	cr_assert_eq(import1(db, tu_shared(DDP)), CVC_OK, "%s", cvc_db_errmsg(db));
	cr_assert_eq(q_int(db, "SELECT count(*) FROM activities a JOIN strings s ON "
			       "s.id=a.name_id WHERE s.value LIKE 'ncclKernel_AllReduce%' "
			       "AND a.stream=14"), 2020);
	cr_assert_eq(q_int(db, "SELECT count(*) FROM activities WHERE kind=2"), 2040);
	cr_assert_eq(q_int(db, "SELECT count(*) FROM activities WHERE kind=3"), 880);
	cr_assert_eq(q_int(db, "SELECT count(*) FROM ranges WHERE kind=1 AND device=-1"), 2035);
	cr_assert_eq(q_int(db, "SELECT events FROM sources"), 216092);
	cvc_db_close(db);
}

Test(kineto, hta_trace_diff_a100_w8)
{
	struct ref r = {"traces/hta-trace-diff-a100-w8/control.json.gz", 3, 8, 3, 8568,
			446813000, "NVIDIA A100-PG509-200"};

	check_single(&r);
}

Test(kineto, hta_trace_diff_v100_w2)
{
	struct ref r = {"traces/hta-trace-diff-v100-w2/test.json.gz", 1, 2, 1, 9876,
			801858000, "Tesla V100-SXM2-16GB"};

	check_single(&r);
}

Test(kineto, hta_a100_80g_w16_rank0)
{
	struct ref r = {"traces/hta-a100-80g-w16-rank0/rank0.json.gz", 0, 16, 0, 6080,
			401445000, "NVIDIA A100-SXM4-80GB"};

	check_single(&r);
}

/*
 * A trace with float timestamps: checked as check_single does, then
 * imported again for the caller's own checks (returned; caller closes).
 * INDEX.md's sum_kern for it, index_ns, came from (ts+dur)-ts in doubles:
 * it holds within 0.01% of the exact sum.
 */
static cvc_db *import_float_trace(const struct ref *r, int64_t index_ns)
{
	cvc_db *db = new_db(tu_tmpdir());
	int64_t sum;

	check_single(r);
	cr_assert_eq(import1(db, tu_shared(r->rel)), CVC_OK, "%s", cvc_db_errmsg(db));
	sum = q_int(db, "SELECT sum(end_ns-start_ns) FROM activities WHERE kind=1");
	cr_assert_lt(llabs(sum - index_ns) * 10000, index_ns,
		     "%s: INDEX figure %lld within 0.01%% of %lld", r->rel, (long long)index_ns,
		     (long long)sum);
	return db;
}

/*
 * The float traces are checked exactly in ns.  INDEX.md's sum_kern for them
 * (162532.335 and 45432.706 us) came from (ts+dur)-ts in doubles; summing the
 * decimal "dur" texts exactly gives 162532.340 and 45432.698 us.  Both are
 * asserted: exact against the decimal sum, and INDEX's within 0.01%.
 */
Test(kineto, hta_nccl_args_exact_and_collectives)
{
	struct ref r = {NCCL_ARGS, 0, 2, 0, 2700, 162532340, "NVIDIA A100-PG509-200"};
	cvc_db *db = import_float_trace(&r, 162532335);

	cr_assert_str_eq(q_text(db, "SELECT nccl_version FROM runs"), "2.17.1");
	cr_assert_eq(q_int(db, "SELECT count(*) FROM collectives"), 21);
	/* HTA's test_nccl_parser_config: the longest NCCL kernel. */
	cr_assert_eq(q_int(db, "SELECT max(a.end_ns-a.start_ns) FROM activities a JOIN "
			       "collectives c ON c.activity_id=a.id"), 5993392);
	{
		const char *q = "FROM collectives c JOIN activities a ON a.id=c.activity_id "
				"ORDER BY a.end_ns-a.start_ns DESC LIMIT 1";
		char sql[512];

		snprintf(sql, sizeof sql, "SELECT c.in_nelems %s", q);
		cr_assert_eq(q_int(db, sql), 2049000);
		snprintf(sql, sizeof sql, "SELECT c.out_nelems %s", q);
		cr_assert_eq(q_int(db, sql), 2049000);
		snprintf(sql, sizeof sql, "SELECT c.bytes %s", q);
		cr_assert_eq(q_int(db, sql), 8196000);
		snprintf(sql, sizeof sql, "SELECT c.group_size %s", q);
		cr_assert_eq(q_int(db, sql), 2);
		snprintf(sql, sizeof sql, "SELECT c.coll %s", q);
		cr_assert_str_eq(q_text(db, sql), "allreduce");
		snprintf(sql, sizeof sql, "SELECT c.pg_desc %s", q);
		cr_assert_str_eq(q_text(db, sql), "default_pg");
		snprintf(sql, sizeof sql, "SELECT c.pg_ranks %s", q);
		cr_assert_str_eq(q_text(db, sql), "[0, 1]");
		snprintf(sql, sizeof sql, "SELECT c.pg_name %s", q);
		cr_assert_str_eq(q_text(db, sql), "0");
	}
	/* INDEX: 15 AllReduce (float) + 6 Broadcast. */
	cr_assert_eq(q_int(db, "SELECT count(*) FROM collectives WHERE coll='allreduce'"), 15);
	cr_assert_eq(q_int(db, "SELECT count(*) FROM collectives WHERE coll='broadcast'"), 6);
	cr_assert_eq(q_int(db, "SELECT count(*) FROM collectives WHERE dtype='Long' AND "
			       "bytes=in_nelems*8"), 3);
	/* The sample kernel of INDEX.md, to the nanosecond. */
	cr_assert_eq(q_int(db, "SELECT count(*) FROM activities WHERE start_ns=4458677009853422 "
			       "AND end_ns=4458677009853422+2636669 AND correlation=60047 "
			       "AND external_id=12945 AND stream=40 AND grid_x=8 AND block_x=544 "
			       "AND registers=96 AND shared_mem_bytes=87568"), 1);
	cr_assert_str_eq(q_text(db, "SELECT value FROM run_meta WHERE key='rank0.baseTimeNanoseconds'"),
			 "1711964646000000000");
	cr_assert_str_eq(q_text(db, "SELECT value FROM run_meta WHERE key='rank0.displayTimeUnit'"),
			 "ms");
	cr_assert(strstr(q_text(db, "SELECT value FROM run_meta WHERE key='rank0.pg_config'"),
			 "\"default_pg\""));
	cvc_db_close(db);
}

Test(kineto, tracelens_h100_qwen_exact)
{
	struct ref r = {QWEN, 0, 0, 0, 1465, 45432698, "NVIDIA H100 80GB HBM3"};
	cvc_db *db = import_float_trace(&r, 45432706);

	/* The ProfilerStep#6 GPU span that TraceLens clips to. */
	cr_assert_eq(q_int(db, "SELECT end_ns-start_ns FROM ranges r JOIN strings s ON "
			       "s.id=r.name_id WHERE r.kind=2 AND s.value='ProfilerStep#6'"),
		     34892421);
	/* INDEX says these kernels carry no External id; in fact 436 of the
	   1465 lack it (counted with Python's json module): stored as unknown. */
	cr_assert_eq(q_int(db, "SELECT count(*) FROM activities WHERE external_id IS NULL "
			       "AND kind=1"), 436);
	/* traceEvents comes before deviceProperties in this file. */
	cr_assert_eq(q_int(db, "SELECT sm_count FROM devices"), 132);
	cr_assert(strstr(q_text(db, "SELECT tool_version FROM runs"), "cupti"));
	cvc_db_close(db);
}

Test(kineto, param_dlrm_8_ranks_one_run)
{
	static const int64_t n_kern[8] = {245, 310, 246, 315, 251, 245, 246, 246};
	static const int64_t sum_us[8] = {6832, 12582, 4560, 11014, 7713, 7292, 4609, 2805};
	char *byrank[8], *paths[8];
	const char *dir = tu_tmpdir();
	cvc_db *db = new_db(dir);
	int64_t run_id = 0;

	/* Given in reverse: ranks come from distributedInfo, not file order. */
	tu_dlrm_paths(byrank);
	for (int i = 0; i < 8; i++)
		paths[i] = byrank[7 - i];
	cr_assert_eq(cvc_import_files(db, (const char *const *)paths, 8, tu_classifying(), &run_id, NULL),
		     CVC_OK, "%s", cvc_db_errmsg(db));
	cr_assert_eq(q_int(db, "SELECT count(*) FROM runs"), 1);
	cr_assert_eq(q_int(db, "SELECT count(*) FROM ranks"), 8);
	cr_assert_eq(q_int(db, "SELECT count(*) FROM sources"), 8);
	cr_assert_eq(q_int(db, "SELECT world_size FROM runs"), 8);
	for (int i = 0; i < 8; i++) {
		struct ref r = {tu_dlrm_files[i], i, 8, i, n_kern[i], sum_us[i] * 1000,
				"Tesla V100-SXM2-32GB"};

		check_ref(db, &r);
	}
	for (int i = 0; i < 8; i++)
		free(paths[i]);
	cvc_db_close(db);
}

/* ---- generated fixtures ---------------------------------------------------- */

#define HEAD                                                                          \
	"{\n \"schemaVersion\": 1,\n"                                                 \
	" \"deviceProperties\": [{\"id\": 0, \"name\": \"Fake GPU\", \"totalGlobalMem\": " \
	"1000, \"computeMajor\": 9, \"computeMinor\": 0, \"numSms\": 132}],\n"        \
	" \"distributedInfo\": {\"backend\": \"nccl\", \"rank\": 0, \"world_size\": 2},\n" \
	" \"traceEvents\": [\n"
#define CPU_OP                                                                        \
	"  {\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::mm\", \"pid\": 10, "  \
	"\"tid\": 11, \"ts\": 100, \"dur\": 50, \"args\": {\"External id\": 1}},\n"
#define KERNEL                                                                        \
	"  {\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"gemm\", \"pid\": 0, \"tid\": 7, " \
	"\"ts\": 4458677009853.422, \"dur\": 2636.669, \"args\": {\"External id\": 1, "   \
	"\"device\": 0, \"stream\": 7, \"correlation\": 5, \"grid\": [1, 2, 3], "       \
	"\"block\": [4, 5, 6], \"registers per thread\": 32, \"shared memory\": 1024}},\n"
#define REST                                                                          \
	"  {\"ph\": \"X\", \"cat\": \"gpu_memcpy\", \"name\": \"Memcpy DtoH (Device -> Pinned)\", " \
	"\"pid\": 0, \"tid\": 8, \"ts\": 200, \"dur\": 3, \"args\": {\"device\": 0, "   \
	"\"stream\": 8, \"bytes\": 4096}},\n"                                          \
	"  {\"ph\": \"X\", \"cat\": \"gpu_memset\", \"name\": \"Memset (Device)\", \"pid\": 0, " \
	"\"tid\": 7, \"ts\": 300, \"dur\": 1, \"args\": {\"bytes\": 128}},\n"           \
	"  {\"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": \"ProfilerStep#1\", " \
	"\"pid\": 10, \"tid\": 11, \"ts\": 90, \"dur\": 500},\n"                        \
	"  {\"ph\": \"X\", \"cat\": \"gpu_user_annotation\", \"name\": \"ProfilerStep#1\", " \
	"\"pid\": 0, \"tid\": 7, \"ts\": 95, \"dur\": 490},\n"                          \
	"  {\"ph\": \"f\", \"id\": 1, \"pid\": 0, \"tid\": 7, \"ts\": 100, \"cat\": \"ac2g\", " \
	"\"name\": \"ac2g\", \"bp\": \"e\"},\n"                                         \
	"  {\"name\": \"thread_name\", \"ph\": \"M\", \"pid\": 10, \"tid\": 11, "       \
	"\"args\": {\"name\": \"t\"}}\n"
#define TAIL " ],\n \"traceName\": \"fixture\"\n}\n"

static const char good_trace[] = HEAD CPU_OP KERNEL REST TAIL;

static const char *write_fixture(const char *dir, const char *name, const char *text,
				 size_t len)
{
	const char *p = tu_path(dir, name);

	cr_assert_eq(tu_write(p, text, len), 0, "%s", p);
	return p;
}

/* Writes len bytes of text to dir/name and imports that file into db; asserts success. */
static void import_fixture(cvc_db *db, const char *dir, const char *name, const char *text,
			   size_t len)
{
	cr_assert_eq(import1(db, write_fixture(dir, name, text, len)), CVC_OK, "%s: %s", name,
		     cvc_db_errmsg(db));
}

static void write_gz(const char *path, const char *text, size_t len)
{
	gzFile gz = gzopen(path, "wb");

	cr_assert(gz, "%s", path);
	cr_assert_eq(gzwrite(gz, text, (unsigned)len), (int)len);
	cr_assert_eq(gzclose(gz), Z_OK);
}

Test(kineto, fixture_fields_exact)
{
	const char *dir = tu_tmpdir();
	const char *p = write_fixture(dir, "good.json", good_trace, strlen(good_trace));
	cvc_db *db = new_db(dir);
	cvc_import_stats st = {0};
	const char *paths[1] = {p};

	cr_assert_eq(cvc_import_files(db, paths, 1, tu_classifying(), NULL, &st), CVC_OK, "%s",
		     cvc_db_errmsg(db));
	cr_assert_eq(st.events, 8);
	cr_assert_eq(st.activities, 3);
	cr_assert_eq(st.ranges, 2);
	cr_assert_eq(q_int(db, "SELECT count(*) FROM activities WHERE kind=1 AND "
			       "start_ns=4458677009853422 AND end_ns=4458677012490091 AND "
			       "device=0 AND stream=7 AND correlation=5 AND external_id=1 AND "
			       "grid_x=1 AND grid_y=2 AND grid_z=3 AND block_x=4 AND block_y=5 AND "
			       "block_z=6 AND registers=32 AND shared_mem_bytes=1024"), 1);
	cr_assert_eq(q_int(db, "SELECT copy_kind FROM activities WHERE kind=2"), 2, "DtoH");
	cr_assert_eq(q_int(db, "SELECT bytes FROM activities WHERE kind=2"), 4096);
	cr_assert_eq(q_int(db, "SELECT bytes FROM activities WHERE kind=3"), 128);
	cr_assert_eq(q_int(db, "SELECT stream FROM activities WHERE kind=3"), 7, "tid");
	cr_assert_eq(q_int(db, "SELECT count(*) FROM ranges WHERE kind=1 AND device=-1 AND "
			       "tid=11 AND start_ns=90000 AND end_ns=590000"), 1);
	cr_assert_eq(q_int(db, "SELECT count(*) FROM ranges WHERE kind=2 AND device=0 AND "
			       "start_ns=95000 AND end_ns=585000"), 1);
	cr_assert_eq(q_int(db, "SELECT pid FROM ranks"), 10);
	cr_assert_str_eq(q_text(db, "SELECT value FROM run_meta WHERE key='rank0.traceName'"),
			 "fixture");
	cr_assert_str_eq(q_text(db, "SELECT name FROM devices"), "Fake GPU");
	cr_assert_eq(q_int(db, "SELECT cc_major FROM devices"), 9);
	cvc_db_close(db);
}

/* Decimal microseconds to ns: rounding past 3 digits, exponents, negatives. */
Test(kineto, fixture_time_conversion)
{
	static const struct {
		const char *ts, *dur;
		int64_t start, end;
	} cases[] = {
		{"1.0005", "0", 1001, 1001},
		{"1.00049", "0.0004", 1000, 1000},
		{"1.5e3", "2E0", 1500000, 1502000},
		{"-1.5", "1", -1500, -500},
		{"1669783687929439", "15", 1669783687929439000, 1669783687929454000},
		{"4458676604108.052", "35.68", 4458676604108052, 4458676604143732},
		{"0.0000001e10", "1.23456789", 1000000, 1001235},
	};
	const char *dir = tu_tmpdir();
	cvc_db *db = new_db(dir);
	char text[8192], sql[256];
	int n = snprintf(text, sizeof text, "{\"traceEvents\": [");

	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
		n += snprintf(text + n, sizeof text - (size_t)n,
			      "%s{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k%zu\",\"pid\":0,"
			      "\"tid\":7,\"ts\":%s,\"dur\":%s}",
			      i ? "," : "", i, cases[i].ts, cases[i].dur);
	n += snprintf(text + n, sizeof text - (size_t)n, "]}");
	import_fixture(db, dir, "t.json", text, (size_t)n);
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		snprintf(sql, sizeof sql,
			 "SELECT start_ns FROM activities a JOIN strings s ON s.id=a.name_id "
			 "WHERE s.value='k%zu'", i);
		cr_assert_eq(q_int(db, sql), cases[i].start, "ts %s", cases[i].ts);
		snprintf(sql, sizeof sql,
			 "SELECT end_ns FROM activities a JOIN strings s ON s.id=a.name_id "
			 "WHERE s.value='k%zu'", i);
		cr_assert_eq(q_int(db, sql), cases[i].end, "ts %s dur %s", cases[i].ts,
			     cases[i].dur);
	}
	/* No distributedInfo: the lowest free rank, and a pid-derived device. */
	cr_assert_eq(q_int(db, "SELECT rank FROM ranks"), 0);
	cvc_db_close(db);
}

Test(kineto, fixture_escapes_decode)
{
	/* a"b\c, e-acute, U+1F600 as a surrogate pair, \/ and \n. */
	static const char text[] =
		"{\"traceEvents\":[{\"ph\":\"X\",\"cat\":\"kernel\",\"pid\":0,\"tid\":1,"
		"\"ts\":1,\"dur\":1,\"name\":\"a\\\"b\\\\c\\u00e9\\ud83d\\ude00\\/\\n\"},"
		"{\"ph\":\"X\",\"c\\u0061t\":\"kernel\",\"pid\":0,\"tid\":1,\"ts\":2,\"dur\":1,"
		"\"name\":\"lone\\ud800x\"}]}";
	const char *dir = tu_tmpdir();
	cvc_db *db = new_db(dir);

	import_fixture(db, dir, "e.json", text, sizeof text - 1);
	cr_assert_str_eq(q_text(db, "SELECT hex(s.value) FROM activities a JOIN strings s ON "
				    "s.id=a.name_id WHERE a.start_ns=1000"),
			 "6122625C63C3A9F09F98802F0A");
	/* An escaped key still names the field; a lone surrogate is U+FFFD. */
	cr_assert_str_eq(q_text(db, "SELECT hex(s.value) FROM activities a JOIN strings s ON "
				    "s.id=a.name_id WHERE a.start_ns=2000"),
			 "6C6F6E65EFBFBD78");
	cvc_db_close(db);
}

Test(kineto, fixture_device_from_args_and_late_metadata)
{
	/* Events before deviceProperties and distributedInfo; args.device wins
	   over pid. */
	static const char text[] =
		"{\"traceEvents\":[{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k\",\"pid\":0,"
		"\"tid\":7,\"ts\":1,\"dur\":1,\"args\":{\"device\":2,\"stream\":9}},"
		"{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"ProfilerStep#3\",\"pid\":5,"
		"\"tid\":6,\"ts\":0,\"dur\":4}],"
		"\"deviceProperties\":[{\"id\":0,\"name\":\"G0\"},{\"id\":2,\"name\":\"G2\","
		"\"numSms\":7}],"
		"\"distributedInfo\":{\"rank\":5,\"world_size\":6}}";
	const char *dir = tu_tmpdir();
	cvc_db *db = new_db(dir);
	int64_t before;

	/* A first file takes rank 0, so the provisional rank would be 1. */
	import_fixture(db, dir, "g.json", good_trace, strlen(good_trace));
	before = q_int(db, "SELECT count(*) FROM activities WHERE rank=0");
	{
		const char *paths[2] = {tu_path(dir, "g.json"),
					write_fixture(dir, "late.json", text, sizeof text - 1)};

		cr_assert_eq(cvc_import_files(db, paths, 2, tu_classifying(), NULL, NULL), CVC_OK, "%s",
			     cvc_db_errmsg(db));
	}
	cr_assert_eq(q_int(db, "SELECT count(*) FROM activities WHERE rank=5 AND device=2 AND "
			       "stream=9"), 1);
	cr_assert_eq(q_int(db, "SELECT count(*) FROM ranges WHERE rank=5"), 1);
	cr_assert_eq(q_int(db, "SELECT count(*) FROM activities WHERE rank NOT IN (0, 5)"), 0);
	cr_assert_eq(q_int(db, "SELECT count(*) FROM activities WHERE rank=0"), 2 * before);
	cr_assert_str_eq(q_text(db, "SELECT name FROM devices WHERE rank=5 AND device=2"), "G2");
	cr_assert_eq(q_int(db, "SELECT sm_count FROM devices WHERE rank=5 AND device=2"), 7);
	cr_assert_eq(q_int(db, "SELECT count(*) FROM devices WHERE rank=5"), 1);
	cr_assert_eq(q_int(db, "SELECT count(*) FROM ranks WHERE rank NOT IN (0, 5)"), 0);
	cvc_db_close(db);
}

Test(kineto, fixture_record_param_comms_link)
{
	/* Sizes only on record_param_comms; one kernel before its op, one after;
	   a non-NCCL kernel and an op without sizes get nothing. */
	static const char text[] =
		"{\"traceEvents\":["
		"{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"ncclKernel_AllReduce_RING_LL_Sum_float"
		"(ncclWorkElem)\",\"pid\":0,\"tid\":14,\"ts\":10,\"dur\":5,"
		"\"args\":{\"External id\":7}},"
		"{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"gemm\",\"pid\":0,\"tid\":7,\"ts\":10,"
		"\"dur\":5,\"args\":{\"External id\":7}},"
		"{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"record_param_comms\",\"pid\":1,"
		"\"tid\":2,\"ts\":1,\"dur\":1,\"args\":{\"External id\":7,"
		"\"Collective name\":\"allreduce\",\"In msg nelems\":1000,\"Out msg nelems\":1000,"
		"\"Group size\":4,\"dtype\":\"Float\",\"Process Group Name\":\"0\","
		"\"Process Group Description\":\"default_pg\",\"Process Group Ranks\":\"[0, 1, 2, 3]\"}},"
		"{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"record_param_comms\",\"pid\":1,"
		"\"tid\":2,\"ts\":20,\"dur\":1,\"args\":{\"External id\":8,"
		"\"Collective name\":\"_allgather_base\",\"In msg nelems\":100,"
		"\"Out msg nelems\":400,\"Group size\":4,\"dtype\":\"BFloat16\"}},"
		"{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"record_param_comms\",\"pid\":1,"
		"\"tid\":2,\"ts\":30,\"dur\":1,\"args\":{\"External id\":9}},"
		"{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"ncclDevKernel_AllGather_RING_LL"
		"(ncclDevKernelArgsStorage<4096ul>)\",\"pid\":0,\"tid\":14,\"ts\":25,\"dur\":5,"
		"\"args\":{\"External id\":8}},"
		"{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"ncclKernel_SendRecv\",\"pid\":0,"
		"\"tid\":14,\"ts\":35,\"dur\":5,\"args\":{\"External id\":9}}]}";
	const char *dir = tu_tmpdir();
	cvc_db *db = new_db(dir);
	cvc_import_stats st = {0};
	const char *paths[1] = {write_fixture(dir, "r.json", text, sizeof text - 1)};

	cr_assert_eq(cvc_import_files(db, paths, 1, tu_classifying(), NULL, &st), CVC_OK, "%s",
		     cvc_db_errmsg(db));
	cr_assert_eq(st.collectives, 2);
	cr_assert_eq(q_int(db, "SELECT count(*) FROM collectives"), 2);
	cr_assert_eq(q_int(db, "SELECT c.bytes FROM collectives c JOIN activities a ON "
			       "a.id=c.activity_id WHERE a.start_ns=10000"), 4000);
	cr_assert_str_eq(q_text(db, "SELECT pg_ranks FROM collectives WHERE coll='allreduce'"),
			 "[0, 1, 2, 3]");
	cr_assert_eq(q_int(db, "SELECT group_size FROM collectives WHERE coll='allreduce'"), 4);
	/* All-gather: nccl-tests size is the gathered buffer, 400 x 2 bytes. */
	cr_assert_eq(q_int(db, "SELECT c.bytes FROM collectives c JOIN activities a ON "
			       "a.id=c.activity_id WHERE a.start_ns=25000"), 800);
	cr_assert_eq(q_int(db, "SELECT in_nelems FROM collectives WHERE coll='_allgather_base'"),
		     100);
	cvc_db_close(db);
}

/*
 * good_trace written to a fresh directory twice, as p.json (path into
 * *plain) and gzipped as p.json.gz (*gz); returns a new database there.
 */
static cvc_db *good_plain_and_gz(const char **plain, const char **gz)
{
	const char *dir = tu_tmpdir();

	*plain = write_fixture(dir, "p.json", good_trace, strlen(good_trace));
	*gz = tu_path(dir, "p.json.gz");
	write_gz(*gz, good_trace, strlen(good_trace));
	return new_db(dir);
}

Test(kineto, fixture_gzip_same_as_plain)
{
	const char *plain, *gz;
	cvc_db *db = good_plain_and_gz(&plain, &gz);
	cvc_import_opts o1 = {.run_name = "plain", .after = cvc_classify_after_import},
			o2 = {.run_name = "gz", .after = cvc_classify_after_import};

	cr_assert_eq(cvc_import_files(db, &plain, 1, &o1, NULL, NULL), CVC_OK, "%s",
		     cvc_db_errmsg(db));
	cr_assert_eq(cvc_import_files(db, &gz, 1, &o2, NULL, NULL), CVC_OK, "%s",
		     cvc_db_errmsg(db));
	/* Same rows in both runs, checked pairwise. */
	cr_assert_eq(q_int(db, "SELECT count(*) FROM sources"), 2);
	cr_assert_eq(q_int(db, "SELECT count(*) FROM activities"), 6);
	cr_assert_eq(q_int(db, "SELECT count(*) FROM (SELECT kind, name_id, start_ns, end_ns, "
			       "count(DISTINCT run_id) AS n FROM activities GROUP BY 1,2,3,4) "
			       "WHERE n <> 2"), 0);
	cvc_db_close(db);
}

Test(kineto, same_rank_twice_in_one_run_is_refused)
{
	const char *paths[2];
	cvc_db *db = good_plain_and_gz(&paths[0], &paths[1]);
	const char *gz = paths[1];

	cr_assert_eq(cvc_import_files(db, paths, 2, tu_classifying(), NULL, NULL), CVC_ERR_FORMAT);
	cr_assert(strstr(cvc_db_errmsg(db), "is already in this run"), "%s", cvc_db_errmsg(db));
	cr_assert(strstr(cvc_db_errmsg(db), gz), "names the second file: %s", cvc_db_errmsg(db));
	cr_assert_eq(q_int(db, "SELECT count(*) FROM activities"), 0, "rolled back");
	cvc_db_close(db);
}

struct prog {
	int calls;
	int64_t last_done, last_total;
};

static void on_progress(void *arg, const char *path, int64_t done, int64_t total)
{
	struct prog *p = arg;

	(void)path;
	p->calls++;
	p->last_done = done;
	p->last_total = total;
}

Test(kineto, progress_reported)
{
	const char *dir = tu_tmpdir();
	cvc_db *db = new_db(dir);
	struct prog pr = {0};
	cvc_import_opts o = {.progress = on_progress, .progress_arg = &pr,
			     .after = cvc_classify_after_import};
	const char *paths[1] = {tu_shared(DDP)};

	cr_assert_eq(cvc_import_files(db, paths, 1, &o, NULL, NULL), CVC_OK, "%s",
		     cvc_db_errmsg(db));
	/* 53.7 MB at one call per 4 MiB, plus the last one. */
	cr_assert_geq(pr.calls, 10);
	cr_assert_leq(pr.calls, 20);
	cr_assert_eq(pr.last_done, pr.last_total);
	cr_assert_gt(pr.last_total, 0);
	cvc_db_close(db);
}

/* ---- broken input ------------------------------------------------------------ */

static void counts(cvc_db *db, int64_t out[6])
{
	static const char *const q[6] = {
		"SELECT count(*) FROM runs", "SELECT count(*) FROM activities",
		"SELECT count(*) FROM ranges", "SELECT count(*) FROM sources",
		"SELECT count(*) FROM ranks", "SELECT count(*) FROM strings",
	};

	for (int i = 0; i < 6; i++)
		out[i] = q_int(db, q[i]);
}

/*
 * Imports a good file, then the bad one: the bad import must fail with st,
 * name the file and a byte offset, contain want (when not NULL), and leave
 * every table as it was.
 */
static void expect_bad(const char *dir, const char *bad, cvc_status st, const char *want)
{
	cvc_db *db = new_db(dir);
	int64_t before[6], after[6];
	char prefix[4200];
	const char *msg;

	cr_assert_eq(import1(db, tu_path(dir, "good.json")), CVC_OK, "%s", cvc_db_errmsg(db));
	counts(db, before);
	cr_assert_gt(before[1], 0);
	cr_assert_eq(import1(db, bad), st, "%s: %s", bad, cvc_db_errmsg(db));
	msg = cvc_db_errmsg(db);
	snprintf(prefix, sizeof prefix, "'%s': byte ", bad);
	cr_assert(strncmp(msg, prefix, strlen(prefix)) == 0, "message '%s'", msg);
	cr_assert(!strchr(msg, '\n'), "one line: '%s'", msg);
	if (want)
		cr_assert(strstr(msg, want), "message '%s' lacks '%s'", msg, want);
	counts(db, after);
	for (int i = 0; i < 6; i++)
		cr_assert_eq(after[i], before[i], "table %d changed: '%s'", i, msg);
	cvc_db_close(db);
	unlink(tu_path(dir, "t.db"));
}

static const char *bad_fixture(const char *dir, const char *text)
{
	write_fixture(dir, "good.json", good_trace, strlen(good_trace));
	return write_fixture(dir, "bad.json", text, strlen(text));
}

Test(kineto, bad_truncated_everywhere)
{
	const char *dir = tu_tmpdir();
	size_t len = strlen(good_trace);
	size_t cuts[] = {1, 2, 10, 30, len / 3, len / 2, len - 40, len - 3, len - 2};

	for (size_t i = 0; i < sizeof cuts / sizeof cuts[0]; i++) {
		write_fixture(dir, "good.json", good_trace, len);
		expect_bad(dir, write_fixture(dir, "bad.json", good_trace, cuts[i]),
			   CVC_ERR_FORMAT, "expected");
	}
	/* A trailing-newline-only cut is still a complete document. */
	{
		cvc_db *db = new_db(dir);

		import_fixture(db, dir, "ok.json", good_trace, len - 1);
		cvc_db_close(db);
	}
}

/* The kernel event with one field replaced. */
static const char *kernel_with(const char *dir, const char *from, const char *to)
{
	static char text[8192];
	const char *at = strstr(good_trace, from);
	size_t n = (size_t)(at - good_trace);

	cr_assert(at, "%s", from);
	snprintf(text, sizeof text, "%.*s%s%s", (int)n, good_trace, to, at + strlen(from));
	return bad_fixture(dir, text);
}

Test(kineto, bad_field_types)
{
	static const struct {
		const char *from, *to, *want;
	} cases[] = {
		{"\"ts\": 4458677009853.422", "\"ts\": \"abc\"", "field 'ts': expected a number"},
		{"\"dur\": 2636.669", "\"dur\": -5", "field 'dur': expected a non-negative number"},
		{"\"args\": {\"External id\": 1, ", "\"args\": 3, \"x\": {",
		 "field 'args': expected an object"},
		{"\"name\": \"gemm\"", "\"name\": 7", "field 'name': expected a string"},
		{"\"ts\": 4458677009853.422, ", "", "missing field 'ts'"},
		{"\"dur\": 2636.669, ", "", "missing field 'dur'"},
		{"\"grid\": [1, 2, 3]", "\"grid\": [1, 2]", "field 'grid'"},
		{"\"stream\": 7", "\"stream\": \"7\"", "field 'stream': expected an integer"},
		{"\"device\": 0", "\"device\": -3", "field 'device'"},
		{"\"ts\": 4458677009853.422", "\"ts\": 99999999999999999999", "out of range"},
		{"\"ts\": 4458677009853.422", "\"ts\": 1.", "expected a digit"},
		{"\"ts\": 4458677009853.422", "\"ts\": tru", "expected a value"},
		{"\"name\": \"gemm\"", "\"name\": \"ge\\xmm\"", "bad escape"},
		{"\"name\": \"gemm\"", "\"name\": \"ge\\u12g4\"", "bad \\u escape"},
		{"\"name\": \"gemm\"", "\"name\" \"gemm\"", "expected ':'"},
		{"\"name\": \"gemm\", ", "\"name\": \"gemm\" ", "expected ',' or '}'"},
	};
	const char *dir = tu_tmpdir();

	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
		expect_bad(dir, kernel_with(dir, cases[i].from, cases[i].to), CVC_ERR_FORMAT,
			   cases[i].want);
}

Test(kineto, bad_event_index_and_offset)
{
	const char *dir = tu_tmpdir();
	const char *p = kernel_with(dir, "\"ts\": 4458677009853.422", "\"ts\": \"abc\"");
	cvc_db *db = new_db(dir);
	char want[128];
	size_t off = (size_t)(strstr(good_trace, "\"ts\": 4458677009853.422") - good_trace) + 6;

	cr_assert_eq(import1(db, p), CVC_ERR_FORMAT);
	/* The kernel is the second event (index 1); the offset is its ts value. */
	snprintf(want, sizeof want, "byte %zu: event 1: field 'ts'", off);
	cr_assert(strstr(cvc_db_errmsg(db), want), "'%s' lacks '%s'", cvc_db_errmsg(db), want);
	cvc_db_close(db);
}

Test(kineto, bad_documents)
{
	static const struct {
		const char *text, *want;
		cvc_status st;
	} cases[] = {
		{"{\"schemaVersion\": 1}", "no traceEvents array", CVC_ERR_FORMAT},
		{"{\"traceEvents\": {}}", "field 'traceEvents': expected an array", CVC_ERR_FORMAT},
		{"{\"traceEvents\": [1]}", "expected an event object", CVC_ERR_FORMAT},
		{"{\"traceEvents\": []} x", "expected the end of file", CVC_ERR_FORMAT},
		{"{\"traceEvents\": [{\"ph\": \"X\"} {}]}", "expected ',' or ']'", CVC_ERR_FORMAT},
		{"{\"traceEvents\": [{\"ph\": \"X\"]}", "expected '}'", CVC_ERR_FORMAT},
		{"{\"traceEvents\": [], \"distributedInfo\": {\"rank\": \"one\"}}",
		 "field 'rank': expected an integer", CVC_ERR_FORMAT},
		{"{\"traceEvents\": [], \"deviceProperties\": 5}",
		 "field 'deviceProperties': expected an array", CVC_ERR_FORMAT},
		{"{\"traceEvents\": [], \"x\": [1, 2,]}", "expected a value", CVC_ERR_FORMAT},
		{"{traceEvents: []}", "expected a string key", CVC_ERR_FORMAT},
		{"", "empty file", CVC_ERR_FORMAT},
		{"   \n", NULL, CVC_ERR_FORMAT},
	};
	const char *dir = tu_tmpdir();

	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
		expect_bad(dir, bad_fixture(dir, cases[i].text), cases[i].st, cases[i].want);
}

Test(kineto, bad_deep_nesting)
{
	const char *dir = tu_tmpdir();
	char text[1024];
	int n = snprintf(text, sizeof text,
			 "{\"traceEvents\": [{\"ph\": \"X\", \"cat\": \"cpu_op\", \"args\": ");

	for (int i = 0; i < 70; i++)
		text[n++] = '[';
	for (int i = 0; i < 70; i++)
		text[n++] = ']';
	snprintf(text + n, sizeof text - (size_t)n, "}]}");
	expect_bad(dir, bad_fixture(dir, text), CVC_ERR_FORMAT, "nesting deeper than 64");
	/* 40 levels is fine, even on an event that is skipped. */
	n = snprintf(text, sizeof text, "{\"traceEvents\": [{\"ph\": \"X\", \"args\": ");
	for (int i = 0; i < 40; i++)
		text[n++] = '[';
	for (int i = 0; i < 40; i++)
		text[n++] = ']';
	snprintf(text + n, sizeof text - (size_t)n, "}]}");
	{
		cvc_db *db = new_db(dir);

		import_fixture(db, dir, "d.json", text, strlen(text));
		cvc_db_close(db);
	}
}

Test(kineto, bad_gzip)
{
	const char *dir = tu_tmpdir();
	const char *gz = tu_path(dir, "bad.json.gz");
	char *data;
	size_t len;

	write_fixture(dir, "good.json", good_trace, strlen(good_trace));
	/* Corrupt: flip bytes in the middle of the deflate stream. */
	write_gz(gz, good_trace, strlen(good_trace));
	data = tu_read(gz, &len);
	cr_assert(data && len > 40);
	for (size_t i = len / 2; i < len / 2 + 8; i++)
		data[i] ^= 0x5a;
	cr_assert_eq(tu_write(gz, data, len), 0);
	expect_bad(dir, gz, CVC_ERR_FORMAT, NULL);
	/* Truncated: the last third of the compressed bytes gone. */
	write_gz(gz, good_trace, strlen(good_trace));
	free(data);
	data = tu_read(gz, &len);
	cr_assert_eq(tu_write(gz, data, len * 2 / 3), 0);
	expect_bad(dir, gz, CVC_ERR_FORMAT, NULL);
	free(data);
}

Test(kineto, missing_file_is_not_found)
{
	const char *dir = tu_tmpdir();
	cvc_db *db = new_db(dir);

	/* exit 2 like a malformed file: the input's fault (issue 14) */
	cr_assert_eq(cvc_import_kineto(db, 1, tu_path(dir, "nope.json"), NULL, NULL),
		     CVC_ERR_NOTFOUND);
	cr_assert(strstr(cvc_db_errmsg(db), "nope.json"));
	cvc_db_close(db);
}

/*
 * PyTorch's profiler up to 1.8 wrote ProfilerStep#N as an "Operator" event
 * (pytorch/kineto tb_plugin/test's v1.8 traces): a step range like a later
 * user_annotation, so `analyze --by step` finds the step.
 */
Test(kineto, legacy_operator_step_is_a_step)
{
	static const char text[] =
		"{\"schemaVersion\": 1, \"traceEvents\": [\n"
		"{\"ph\": \"X\", \"cat\": \"Operator\", \"name\": \"ProfilerStep#2\", \"pid\": 24572, "
		"\"tid\": \"24572\", \"ts\": 1621401187223358, \"dur\": 13410, "
		"\"args\": {\"Device\": 24572, \"External id\": 4}},\n"
		"{\"ph\": \"X\", \"cat\": \"Operator\", \"name\": \"aten::add\", \"pid\": 24572, "
		"\"tid\": \"24572\", \"ts\": 1621401187223400, \"dur\": 10},\n"
		"{\"ph\": \"X\", \"cat\": \"Kernel\", \"name\": \"volta_sgemm_128x32_nt\", \"pid\": 0, "
		"\"tid\": \"stream 7\", \"ts\": 1621401187231100, \"dur\": 3, \"args\": {\"device\": 0, "
		"\"context\": 1, \"stream\": 7, \"correlation\": 482, \"external id\": 107}}\n"
		"]}\n";
	const char *dir = tu_tmpdir();
	cvc_db *db = new_db(dir);

	import_fixture(db, dir, "pt18.json", text, sizeof text - 1);
	cr_assert_eq(q_int(db, "SELECT count(*) FROM ranges r JOIN strings s ON s.id = r.name_id "
			       "WHERE s.value = 'ProfilerStep#2' AND r.end_ns - r.start_ns = 13410000"),
		     1);
	cr_assert_eq(q_int(db, "SELECT count(*) FROM ranges"), 1, "aten::add is not a range");
	cvc_db_close(db);
}

/*
 * ROCm's roctracer traces give a HIP launch and its kernel one "External
 * id" and no "correlation" (AMD-AGI/TraceLens's MI300X GEMM traces): the
 * launch inside aten::mm links the op to the kernel by that id, as a CUDA
 * launch does by its correlation id.  Before, the launch was dropped and
 * the op's shape had no kernel: nothing to fit.
 */
Test(kineto, rocm_launch_links_by_external_id)
{
	static const char text[] =
		"{\"schemaVersion\": 1, \"record_shapes\": 1, \"traceEvents\": [\n"
		"{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::mm\", \"pid\": 1979, "
		"\"tid\": 1979, \"ts\": 1771536568903147, \"dur\": 26, \"args\": {\"External id\": 513, "
		"\"Input type\": [\"c10::BFloat16\", \"c10::BFloat16\"], "
		"\"Input Dims\": [[256, 131072], [131072, 512]]}},\n"
		"{\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"hipExtModuleLaunchKernel\", "
		"\"pid\": 1979, \"tid\": 1979, \"ts\": 1771536568903163, \"dur\": 5, "
		"\"args\": {\"External id\": 25, \"stream\": \"0x0\"}},\n"
		"{\"ph\": \"X\", \"cat\": \"kernel\", "
		"\"name\": \"Cijk_Ailk_Bljk_BBS_BH_MT256x128x64_MI16x16x16x1_SN_1LDSB0\", \"pid\": 2, "
		"\"tid\": 0, \"ts\": 1771536568903177, \"dur\": 1085, \"args\": {\"External id\": 25}}\n"
		"]}\n";
	const char *dir = tu_tmpdir();
	cvc_db *db = new_db(dir);

	import_fixture(db, dir, "rocm.json", text, sizeof text - 1);
	cr_assert_eq(q_int(db, "SELECT count(*) FROM op_launches WHERE correlation = 25"), 1);
	cr_assert_eq(q_int(db, "SELECT correlation FROM activities WHERE kind = 1"), 25);
	cvc_db_close(db);
}
