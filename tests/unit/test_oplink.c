/*
 * test_oplink.c - linking framework ops to their kernels by CPU-time
 * nesting (profiler/import/oplink.c, table op_launches).
 *
 * Three checks, each against something computed independently:
 * - a small trace written here, whose links are known by construction;
 * - the qwen trace (newer Kineto), where kernels also carry the op's
 *   External id: both ways of linking must give the same pairs;
 * - the A100 trace-diff trace (older Kineto: a kernel's External id is its
 *   correlation id), where the links are recomputed here by brute force
 *   over the JSON read with json-c.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>
#include <json-c/json.h>
#include <sqlite3.h>

#include "cvc/cvc_db.h"
#include "cvc/cvc_model.h"
#include "testutil.h"

#define QWEN_TRACE "traces/tracelens-h100-qwen05b/Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz"
#define A100_TRACE "traces/hta-trace-diff-a100-w8/control.json.gz"

static int64_t q1(cvc_db *db, const char *sql)
{
	sqlite3_stmt *st = NULL;
	int64_t v;

	cr_assert_eq(sqlite3_prepare_v2(cvc_db_sqlite(db), sql, -1, &st, NULL), SQLITE_OK, "%s: %s",
		     sql, sqlite3_errmsg(cvc_db_sqlite(db)));
	cr_assert_eq(sqlite3_step(st), SQLITE_ROW);
	v = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return v;
}

/* ---- a small older-form trace ------------------------------------------------------- */

/*
 * Thread 7: linear [100,200] holds addmm [110,150] (launch corr 5 at 120)
 * and a launch of its own (corr 6 at 160); mm [300,320] launches corr 7 at
 * 310; corr 8 at 250 is outside every op.  Thread 9: a launch at 120 (corr
 * 9) lies inside the addmm's span but on another thread.  Kernels carry
 * External id = correlation, as older Kineto writes them.
 */
static const char old_trace[] =
	"{\"traceEvents\":[\n"
	"{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::linear\",\"pid\":1,\"tid\":7,\"ts\":100,"
	"\"dur\":100,\"args\":{\"External id\":1,\"Input Dims\":[[8,32],[16,32],[16]],"
	"\"Input type\":[\"float\",\"float\",\"float\"]}},\n"
	"{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::addmm\",\"pid\":1,\"tid\":7,\"ts\":110,"
	"\"dur\":40,\"args\":{\"External id\":2,\"Input Dims\":[[16],[8,32],[32,16],[],[]],"
	"\"Input type\":[\"float\",\"float\",\"float\",\"Scalar\",\"Scalar\"]}},\n"
	"{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::mm\",\"pid\":1,\"tid\":7,\"ts\":300,"
	"\"dur\":20,\"args\":{\"External id\":5,\"Input Dims\":[[64,64],[64,64]],"
	"\"Input type\":[\"float\",\"float\"]}},\n"
	"{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":1,\"tid\":7,"
	"\"ts\":120,\"dur\":3,\"args\":{\"External id\":5,\"correlation\":5}},\n"
	"{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaMemcpyAsync\",\"pid\":1,\"tid\":7,"
	"\"ts\":130,\"dur\":3,\"args\":{\"correlation\":10}},\n"
	"{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":1,\"tid\":7,"
	"\"ts\":160,\"dur\":3,\"args\":{\"correlation\":6}},\n"
	"{\"ph\":\"X\",\"cat\":\"cuda_driver\",\"name\":\"cuLaunchKernel\",\"pid\":1,\"tid\":7,"
	"\"ts\":310,\"dur\":3,\"args\":{\"correlation\":7}},\n"
	"{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":1,\"tid\":7,"
	"\"ts\":250,\"dur\":3,\"args\":{\"correlation\":8}},\n"
	"{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":1,\"tid\":9,"
	"\"ts\":120,\"dur\":3,\"args\":{\"correlation\":9}},\n"
	"{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"ampere_sgemm_32x32_sliced1x4_tn\",\"pid\":0,"
	"\"tid\":7,\"ts\":125,\"dur\":4,\"args\":{\"device\":0,\"stream\":7,\"correlation\":5,"
	"\"External id\":5}},\n"
	"{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"void at::native::vectorized_elementwise_kernel<4>\","
	"\"pid\":0,\"tid\":7,\"ts\":170,\"dur\":2,\"args\":{\"device\":0,\"stream\":7,\"correlation\":6,"
	"\"External id\":6}},\n"
	"{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"ampere_sgemm_64x64_nn\",\"pid\":0,\"tid\":7,"
	"\"ts\":315,\"dur\":6,\"args\":{\"device\":0,\"stream\":7,\"correlation\":7,"
	"\"External id\":7}}\n"
	"],\"deviceProperties\":[{\"id\":0,\"name\":\"NVIDIA A100-SXM4-80GB\"}]}\n";

Test(oplink, small_older_trace_links_by_nesting)
{
	const char *path = tu_path(tu_tmpdir(), "old.json");
	cvc_db *db;
	cvc_model_trace_gemm *g = NULL;
	size_t n = 0;
	char *p = strdup(path);

	cr_assert_not_null(p);
	cr_assert_eq(tu_write(p, old_trace, sizeof old_trace - 1), 0);
	db = tu_import(p, "old.db");
	free(p);
	/* corr 5 -> addmm (innermost), 6 -> linear, 7 -> mm; 8 (no op), 9 (other
	 * thread) and 10 (not a launch) are not linked */
	cr_expect_eq(q1(db, "SELECT count(*) FROM op_launches"), 3);
	cr_expect_eq(q1(db, "SELECT count(*) FROM op_launches l JOIN op_shapes o ON o.id = l.shape_id "
			    "JOIN strings s ON s.id = o.name_id WHERE "
			    "(l.correlation = 5 AND s.value = 'aten::addmm') OR "
			    "(l.correlation = 6 AND s.value = 'aten::linear') OR "
			    "(l.correlation = 7 AND s.value = 'aten::mm')"),
		     3);
	/* older form: the ops' own ids name no kernel and are cleared */
	cr_expect_eq(q1(db, "SELECT count(*) FROM op_shapes WHERE external_id <> -1"), 0);
	cr_expect_eq(q1(db, "SELECT value FROM run_meta WHERE key = 'rank0.import.op_launches'"), 3);
	/* kernels 5 and 7 reach their ops; the linear's kernel is no GEMM */
	cr_assert_eq(cvc_model_trace_gemms(db, -1, &g, &n), CVC_OK, "%s", cvc_db_errmsg(db));
	cr_assert_eq(n, 3);
	for (size_t i = 0; i < n; i++) {
		if (strcmp(g[i].op, "aten::addmm") == 0)
			cr_expect(g[i].m == 8 && g[i].n == 16 && g[i].k == 32 && g[i].gemm_kernels == 1 &&
				  g[i].gemm_us > 3.99 && g[i].gemm_us < 4.01);
		else if (strcmp(g[i].op, "aten::mm") == 0)
			cr_expect(g[i].m == 64 && g[i].gemm_kernels == 1 && g[i].gemm_us > 5.99 &&
				  g[i].gemm_us < 6.01 && g[i].dtype == CVC_HW_FP32);
		else
			cr_expect(strcmp(g[i].op, "aten::linear") == 0 && g[i].gemm_kernels == 0 &&
				  g[i].total_us > 1.99 && g[i].total_us < 2.01);
	}
	free(g);
	cvc_db_close(db);
}

/* ---- newer Kineto: nesting agrees with External id -------------------------------- */

Test(oplink, qwen_nesting_agrees_with_external_id)
{
	cvc_db *db = tu_import(tu_shared(QWEN_TRACE), "q.db");
	int64_t by_ext, by_nest, both;

	/* (op, kernel) pairs each way; the qwen kernels carry the op's id */
	by_ext = q1(db, "SELECT count(*) FROM activities a JOIN op_shapes o ON o.run_id = a.run_id "
			"AND o.rank = a.rank AND o.external_id = a.external_id WHERE a.kind = 1");
	by_nest = q1(db, "SELECT count(*) FROM op_launches l JOIN activities a ON a.run_id = l.run_id "
			 "AND a.rank = l.rank AND a.correlation = l.correlation WHERE a.kind = 1");
	both = q1(db, "SELECT count(*) FROM op_launches l JOIN activities a ON a.run_id = l.run_id "
		      "AND a.rank = l.rank AND a.correlation = l.correlation "
		      "JOIN op_shapes o ON o.id = l.shape_id "
		      "WHERE a.kind = 1 AND a.external_id = o.external_id");
	cr_assert_gt(by_ext, 0);
	cr_expect_eq(by_nest, by_ext, "nesting links %lld kernels, External id %lld",
		     (long long)by_nest, (long long)by_ext);
	cr_expect_eq(both, by_ext, "%lld of %lld pairs agree", (long long)both, (long long)by_ext);
	cr_log_info("qwen: %lld (op, kernel) pairs by External id, %lld by nesting, %lld the same",
		    (long long)by_ext, (long long)by_nest, (long long)both);
	cvc_db_close(db);
}

/* ---- older Kineto: brute force over the JSON -------------------------------------- */

struct jop {
	int64_t pid, tid;
	double t0, t1;
	const char *name, *dims;
};

static const char *str_of(json_object *e, const char *key)
{
	json_object *v;

	return json_object_object_get_ex(e, key, &v) ? json_object_get_string(v) : NULL;
}

static double num_of(json_object *e, const char *key)
{
	json_object *v;

	return json_object_object_get_ex(e, key, &v) ? json_object_get_double(v) : -1;
}

Test(oplink, a100_older_trace_matches_brute_force)
{
	const char *json = tu_gunzip(tu_shared(A100_TRACE), tu_tmpdir());
	json_object *root = json_object_from_file(json), *evs = NULL;
	struct jop *ops;
	size_t nev, nops = 0, nlaunch = 0, want = 0, agree = 0;
	sqlite3_stmt *st = NULL;
	cvc_db *db;

	cr_assert_not_null(root, "json-c cannot read %s", json);
	cr_assert(json_object_object_get_ex(root, "traceEvents", &evs));
	nev = json_object_array_length(evs);
	ops = calloc(nev, sizeof *ops);
	cr_assert_not_null(ops);
	for (size_t i = 0; i < nev; i++) {
		json_object *e = json_object_array_get_idx(evs, i), *args, *dims;
		const char *cat = str_of(e, "cat"), *name = str_of(e, "name");

		if (!cat || !name || strcmp(cat, "cpu_op") ||
		    cvc_db_shape_op(name, strlen(name)) == CVC_SHAPE_NONE ||
		    !json_object_object_get_ex(e, "args", &args) ||
		    !json_object_object_get_ex(args, "Input Dims", &dims))
			continue;
		ops[nops].pid = (int64_t)num_of(e, "pid");
		ops[nops].tid = (int64_t)num_of(e, "tid");
		ops[nops].t0 = num_of(e, "ts");
		ops[nops].t1 = ops[nops].t0 + num_of(e, "dur");
		ops[nops].name = name;
		ops[nops].dims = json_object_to_json_string_ext(dims, JSON_C_TO_STRING_PLAIN);
		nops++;
	}
	cr_assert_gt(nops, 100, "the trace has %zu kept ops with shapes", nops);
	db = tu_import(tu_shared(A100_TRACE), "a.db");
	cr_expect_eq(q1(db, "SELECT count(*) FROM op_shapes WHERE external_id <> -1"), 0,
		     "the older form was not recognised");
	st = tu_db_prepare(db, "SELECT s.value, o.dims FROM op_launches l "
			   "JOIN op_shapes o ON o.id = l.shape_id "
			   "JOIN strings s ON s.id = o.name_id WHERE l.correlation = ?");
	/* every launch: the innermost kept op (latest start) on its thread */
	for (size_t i = 0; i < nev; i++) {
		json_object *e = json_object_array_get_idx(evs, i), *args;
		const char *cat = str_of(e, "cat"), *name = str_of(e, "name");
		const struct jop *best = NULL;
		int64_t pid, tid, corr;
		double ts;

		if (!cat || !name || (strcmp(cat, "cuda_runtime") && strcmp(cat, "cuda_driver")) ||
		    !strstr(name, "Launch") || !json_object_object_get_ex(e, "args", &args))
			continue;
		nlaunch++;
		pid = (int64_t)num_of(e, "pid");
		tid = (int64_t)num_of(e, "tid");
		ts = num_of(e, "ts");
		corr = (int64_t)num_of(args, "correlation");
		for (size_t j = 0; j < nops; j++)
			if (ops[j].pid == pid && ops[j].tid == tid && ops[j].t0 <= ts &&
			    ts <= ops[j].t1 && (!best || ops[j].t0 > best->t0))
				best = &ops[j];
		sqlite3_reset(st);
		sqlite3_bind_int64(st, 1, corr);
		if (!best) {
			cr_expect_neq(sqlite3_step(st), SQLITE_ROW, "launch %lld linked to no op here",
				      (long long)corr);
			continue;
		}
		want++;
		if (sqlite3_step(st) != SQLITE_ROW) {
			cr_expect_fail("launch %lld (in %s) not linked", (long long)corr, best->name);
			continue;
		}
		if (strcmp((const char *)sqlite3_column_text(st, 0), best->name) == 0 &&
		    strcmp((const char *)sqlite3_column_text(st, 1), best->dims) == 0)
			agree++;
		else
			cr_expect_fail("launch %lld: cvc %s %s, brute force %s %s", (long long)corr,
				       sqlite3_column_text(st, 0), sqlite3_column_text(st, 1),
				       best->name, best->dims);
	}
	sqlite3_finalize(st);
	cr_assert_gt(want, 100);
	cr_expect_eq(agree, want);
	cr_expect_eq(q1(db, "SELECT count(*) FROM op_launches"), (int64_t)want);
	cr_log_info("A100 trace-diff: %zu ops with shapes kept, %zu launches, %zu inside one, "
		    "%zu linked alike", nops, nlaunch, want, agree);
	{
		/* and they become fitting rows: TF32 GEMMs of the A100 */
		cvc_model_rows *sets = NULL;
		size_t nsets = 0, ntf32 = 0;

		cr_assert_eq(cvc_model_rows_from_traces(db, &sets, &nsets), CVC_OK, "%s",
			     cvc_db_errmsg(db));
		for (size_t s = 0; s < nsets; s++) {
			for (size_t r = 0; r < sets[s].n; r++)
				ntf32 += sets[s].v[r].dtype == CVC_HW_TF32;
			cvc_model_rows_release(&sets[s]);
		}
		free(sets);
		cr_expect_gt(ntf32, 50, "%zu TF32 shapes", ntf32);
		cr_log_info("A100 trace-diff: %zu distinct TF32 GEMM shapes for fitting", ntf32);
	}
	cvc_db_close(db);
	free(ops);
	json_object_put(root);
}
