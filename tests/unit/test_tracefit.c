/*
 * test_tracefit.c - GEMM fitting rows from a Kineto trace recorded with
 * shapes: the op_shapes rows the importer keeps (checked against the trace
 * itself, read here with json-c), the M, N, K and kernel time per shape
 * (checked against TraceLens's reference GEMM.csv for the same trace), and
 * the fit made from them.  Every reference figure is read from the files
 * at test time.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>
#include <json-c/json.h>
#include <sqlite3.h>

#include "cvc/cvc_db.h"
#include "cvc/cvc_import.h"
#include "cvc/cvc_model.h"
#include "cvc/cvc_classify.h"
#include "testutil.h"

#define QWEN_DIR "traces/tracelens-h100-qwen05b/"
#define QWEN_TRACE QWEN_DIR "Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz"
#define QWEN_GEMM QWEN_DIR "reference_perf_report_csvs/GEMM.csv"
#define XLA_MATMUL "traces/xla-perf-tables/xla_matmul_perf_table.csv.gz"

/* In-sample MAPE bound of the qwen fit: measured 2.61% (4 shapes, form
 * p0 + p3 Fpad/P); two shapes of equal FLOPs differ by 10% in time, which
 * no smooth function of FLOPs with wave counts 5 vs 12 can fully follow,
 * so a bound a little above the measured figure guards against a
 * regression without pretending to more. */
#define QWEN_INSAMPLE_MAPE_MAX 5.0
/* Out-of-sample regression bound on XLA's H100 bf16 table: measured 12.0%
 * (the spec-sheet default gives 13.1%). */
#define QWEN_XLA_MAPE_MAX 20.0

static char *dup_path(const char *p)
{
	char *s = strdup(p);

	cr_assert_not_null(s);
	return s;
}

/* Imports the qwen trace into a fresh db; returns the open handle. */
static cvc_db *import_qwen(char **dbpath_out)
{
	char *trace = dup_path(tu_shared(QWEN_TRACE));
	char *dbpath = dup_path(tu_path(tu_tmpdir(), "q.db"));
	const char *paths[1] = {trace};
	cvc_db *db = NULL;
	int64_t run = 0;

	cr_assert_eq(cvc_db_open(dbpath, CVC_DB_CREATE, &db), CVC_OK);
	cr_assert_eq(cvc_import_files(db, paths, 1, tu_classifying(), &run, NULL), CVC_OK, "%s",
		     cvc_db_errmsg(db));
	free(trace);
	if (dbpath_out)
		*dbpath_out = dbpath;
	else
		free(dbpath);
	return db;
}

static int is_gemm_name(const char *s)
{
	static const char *const ops[] = {"aten::mm",     "aten::addmm",  "aten::bmm",
					  "aten::baddbmm", "aten::matmul", "aten::linear",
					  "aten::_scaled_mm"};

	for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
		if (strcmp(s, ops[i]) == 0)
			return 1;
	return 0;
}

/* Kept in op_shapes: the GEMM-like and memory-bound ops of the shape table. */
static int is_kept_name(const char *s)
{
	return cvc_db_shape_op(s, strlen(s)) != CVC_SHAPE_NONE;
}

/* ---- dims per op semantics ------------------------------------------------------ */

Test(tracefit, dims_per_op)
{
	static const struct {
		const char *op, *dims;
		int64_t b, m, n, k;
	} ok[] = {
		{"aten::mm", "[[8944,1024],[1024,2816]]", 1, 8944, 2816, 1024},
		{"aten::_scaled_mm", "[[64,32],[32,16],[],[]]", 1, 64, 16, 32},
		{"aten::addmm", "[[1024],[8944,1024],[1024,1024],[],[]]", 1, 8944, 1024, 1024},
		{"aten::bmm", "[[1,32,1],[1,1,559]]", 1, 32, 559, 1},
		{"aten::baddbmm", "[[4,8,16],[4,8,3],[4,3,16],[],[]]", 4, 8, 16, 3},
		{"aten::linear", "[[16,559,1024],[2816,1024],[2816]]", 1, 16 * 559, 2816, 1024},
		{"aten::linear", "[[7,5],[3,5]]", 1, 7, 3, 5},
		{"aten::matmul", "[[16,559,1024],[1024,64]]", 1, 16 * 559, 64, 1024},
		{"aten::matmul", "[[2,3,4,5],[2,3,5,6]]", 6, 4, 6, 5},
		{"aten::matmul", "[[5],[5,6]]", 1, 1, 6, 5},
		{"aten::matmul", "[[4,5],[5]]", 1, 4, 1, 5},
	};
	static const struct {
		const char *op, *dims;
	} bad[] = {
		{"aten::mm", "[[8,4],[5,2]]"},           /* K disagrees */
		{"aten::mm", "[[8,4,1],[4,2]]"},         /* not 2-D */
		{"aten::mm", "[[8,0],[0,2]]"},           /* empty */
		{"aten::mm", "[[8,-4],[-4,2]]"},         /* negative */
		{"aten::mm", "[[8,1e3],[1e3,2]]"},       /* not integers */
		{"aten::mm", "[[8,4]]"},                 /* one operand */
		{"aten::mm", "[[8,4],[4,2]"},            /* not JSON */
		{"aten::mm", "{\"a\":1}"},               /* not an array */
		{"aten::bmm", "[[2,8,4],[3,4,2]]"},      /* batch disagrees */
		{"aten::addmm", "[[8,4],[4,2]]"},        /* no bias slot */
		{"aten::linear", "[[8,4],[4,3]]"},       /* weight is [N,K] */
		{"aten::mm", "[[1099511627776,4],[4,2]]"}, /* 2^40 */
	};
	int64_t b, m, n, k;

	for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
		cvc_status st = cvc_model_gemm_dims(ok[i].op, ok[i].dims, &b, &m, &n, &k);

		cr_expect_eq(st, CVC_OK, "%s %s: status %d", ok[i].op, ok[i].dims, (int)st);
		if (st == CVC_OK)
			cr_expect(b == ok[i].b && m == ok[i].m && n == ok[i].n && k == ok[i].k,
				  "%s %s: got b=%lld m=%lld n=%lld k=%lld", ok[i].op, ok[i].dims,
				  (long long)b, (long long)m, (long long)n, (long long)k);
	}
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
		cr_expect_eq(cvc_model_gemm_dims(bad[i].op, bad[i].dims, &b, &m, &n, &k),
			     CVC_ERR_FORMAT, "%s %s accepted", bad[i].op, bad[i].dims);
	cr_expect_eq(cvc_model_gemm_dims("aten::conv2d", "[[1,2],[2,3]]", &b, &m, &n, &k),
		     CVC_ERR_NOTFOUND);
}

Test(tracefit, dtype_per_op)
{
	cvc_hw_dtype d = CVC_HW_NDTYPE;

	cr_expect_eq(cvc_model_gemm_dtype("aten::mm", "[\"c10::BFloat16\",\"c10::BFloat16\"]", 0, &d),
		     CVC_OK);
	cr_expect_eq(d, CVC_HW_BF16);
	/* addmm: the bias (index 0) does not decide */
	cr_expect_eq(cvc_model_gemm_dtype("aten::addmm",
					  "[\"float\",\"c10::Half\",\"c10::Half\",\"Scalar\"]", 0, &d),
		     CVC_OK);
	cr_expect_eq(d, CVC_HW_FP16);
	cr_expect_eq(cvc_model_gemm_dtype("aten::bmm", "[\"float\",\"float\"]", 0, &d), CVC_OK);
	cr_expect_eq(d, CVC_HW_FP32);
	cr_expect_eq(cvc_model_gemm_dtype("aten::bmm", "[\"float\",\"float\"]", 1, &d), CVC_OK);
	cr_expect_eq(d, CVC_HW_TF32);
	cr_expect_eq(cvc_model_gemm_dtype("aten::_scaled_mm",
					  "[\"c10::Float8_e4m3fn\",\"c10::Float8_e4m3fn\"]", 0, &d),
		     CVC_OK);
	cr_expect_eq(d, CVC_HW_FP8);
	cr_expect_eq(cvc_model_gemm_dtype("aten::mm", "[\"double\",\"double\"]", 0, &d),
		     CVC_ERR_NOTFOUND);
	cr_expect_eq(cvc_model_gemm_dtype("aten::mm", NULL, 0, &d), CVC_ERR_NOTFOUND);
	cr_expect_eq(cvc_model_gemm_dtype("aten::mm", "[1,2", 0, &d), CVC_ERR_NOTFOUND);
}

/* ---- import: op_shapes against the trace itself ----------------------------------- */

Test(tracefit, import_keeps_gemm_op_shapes)
{
	char *gz = dup_path(tu_shared(QWEN_TRACE));
	const char *json = tu_gunzip(gz, tu_tmpdir());
	json_object *root = json_object_from_file(json), *evs = NULL;
	sqlite3_stmt *st = NULL;
	cvc_db *db;
	size_t want = 0, seen = 0, ngemm = 0;

	cr_assert_not_null(root, "json-c cannot read %s", json);
	cr_assert(json_object_object_get_ex(root, "traceEvents", &evs));
	db = import_qwen(NULL);
	st = tu_db_prepare(db, "SELECT o.dims, coalesce(o.types,''), s.value FROM op_shapes o "
			   "JOIN strings s ON s.id = o.name_id WHERE o.external_id = ?");
	for (size_t i = 0; i < json_object_array_length(evs); i++) {
		json_object *e = json_object_array_get_idx(evs, i), *v, *args, *dims, *types, *ext;
		const char *want_dims, *want_types;

		if (!json_object_object_get_ex(e, "cat", &v) ||
		    strcmp(json_object_get_string(v), "cpu_op") != 0 ||
		    !json_object_object_get_ex(e, "name", &v) ||
		    !is_kept_name(json_object_get_string(v)) ||
		    !json_object_object_get_ex(e, "args", &args) ||
		    !json_object_object_get_ex(args, "Input Dims", &dims) ||
		    !json_object_object_get_ex(args, "External id", &ext))
			continue;
		want++;
		ngemm += is_gemm_name(json_object_get_string(v));
		want_dims = json_object_to_json_string_ext(dims, JSON_C_TO_STRING_PLAIN);
		sqlite3_reset(st);
		sqlite3_bind_int64(st, 1, json_object_get_int64(ext));
		if (sqlite3_step(st) != SQLITE_ROW) {
			cr_expect_fail("External id %lld: no op_shapes row",
				       (long long)json_object_get_int64(ext));
			continue;
		}
		seen++;
		cr_expect_str_eq((const char *)sqlite3_column_text(st, 0), want_dims);
		cr_expect_str_eq((const char *)sqlite3_column_text(st, 2), json_object_get_string(v));
		if (json_object_object_get_ex(args, "Input type", &types)) {
			want_types = json_object_to_json_string_ext(types, JSON_C_TO_STRING_PLAIN);
			cr_expect_str_eq((const char *)sqlite3_column_text(st, 1), want_types);
		}
	}
	sqlite3_finalize(st);
	cr_assert_gt(want, 0, "the trace has no kept op with Input Dims");
	cr_expect_eq(seen, want);
	cr_expect_eq((size_t)tu_db_int(db, "SELECT count(*) FROM op_shapes"), want,
		     "op_shapes has rows the trace lacks");
	cr_expect_gt(ngemm, 0);
	cr_log_info("qwen: %zu ops with shapes kept, %zu of them GEMM-like", want, ngemm);
	cvc_db_close(db);
	json_object_put(root);
	free(gz);
}

/* A small trace: one GEMM op with shapes, its kernel, distributedInfo last. */
static const char small_trace[] =
	"{\"traceEvents\":[\n"
	"{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::addmm\",\"pid\":7,\"tid\":7,"
	"\"ts\":10,\"dur\":5,\"args\":{\"External id\":42,\"Input Dims\":%s,"
	"\"Input type\":[\"c10::Half\", \"c10::Half\", \"c10::Half\"]}},\n"
	"{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::relu\",\"pid\":7,\"tid\":7,"
	"\"ts\":20,\"dur\":5,\"args\":{\"External id\":43,\"Input Dims\":[[4,4]]}},\n"
	"{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"sm80_xmma_gemm_f16f16_f16f32\",\"pid\":0,"
	"\"tid\":7,\"ts\":12,\"dur\":3,\"args\":{\"device\":0,\"stream\":7,\"correlation\":1,"
	"\"External id\":42}}\n"
	"],\"distributedInfo\":{\"rank\":3,\"world_size\":4},"
	"\"deviceProperties\":[{\"id\":0,\"name\":\"NVIDIA H100 80GB HBM3\"}]}\n";

static cvc_status import_small(const char *dims, char *msg, size_t msglen, cvc_db **dbout)
{
	char text[2048], *path = dup_path(tu_path(tu_tmpdir(), "t.json"));
	char *dbpath = dup_path(tu_path(tu_tmpdir(), "t.db"));
	const char *paths[1] = {path};
	int len = snprintf(text, sizeof text, small_trace, dims);
	cvc_db *db = NULL;
	cvc_status st;

	cr_assert(len > 0 && (size_t)len < sizeof text);
	cr_assert_eq(tu_write(path, text, (size_t)len), 0);
	cr_assert_eq(cvc_db_open(dbpath, CVC_DB_CREATE, &db), CVC_OK);
	st = cvc_import_files(db, paths, 1, tu_classifying(), NULL, NULL);
	snprintf(msg, msglen, "%s", cvc_db_errmsg(db));
	*dbout = db;
	free(path);
	free(dbpath);
	return st;
}

Test(tracefit, import_small_trace_rank_and_link)
{
	char msg[512];
	cvc_db *db = NULL;
	cvc_model_trace_gemm *g = NULL;
	size_t n = 0;
	sqlite3_stmt *st = NULL;

	cr_assert_eq(import_small("[[16], [8, 32],\n [32, 16], [], []]", msg, sizeof msg, &db), CVC_OK,
		     "%s", msg);
	/* addmm and relu (memory-bound) are kept, moved to rank 3 */
	st = tu_db_prepare(db, "SELECT count(*), min(rank), max(rank), "
			   "max(CASE WHEN s.value = 'aten::addmm' THEN dims END) "
			   "FROM op_shapes o JOIN strings s ON s.id = o.name_id");
	cr_assert_eq(sqlite3_step(st), SQLITE_ROW);
	cr_expect_eq(sqlite3_column_int(st, 0), 2);
	cr_expect_eq(sqlite3_column_int(st, 1), 3);
	cr_expect_eq(sqlite3_column_int(st, 2), 3);
	cr_expect_str_eq((const char *)sqlite3_column_text(st, 3), "[[16],[8,32],[32,16],[],[]]");
	sqlite3_finalize(st);
	cr_assert_eq(cvc_model_trace_gemms(db, -1, &g, &n), CVC_OK, "%s", cvc_db_errmsg(db));
	cr_assert_eq(n, 1);
	cr_expect(g[0].rank == 3 && g[0].m == 8 && g[0].n == 16 && g[0].k == 32 && g[0].b == 1);
	cr_expect(g[0].has_dtype && g[0].dtype == CVC_HW_FP16);
	cr_expect_eq(g[0].gemm_kernels, 1);
	cr_expect(fabs(g[0].gemm_us - 3.0) < 1e-9 && fabs(g[0].total_us - 3.0) < 1e-9);
	cr_expect_str_eq(g[0].gpu, "NVIDIA H100 80GB HBM3");
	free(g);
	cvc_db_close(db);
}

Test(tracefit, import_bad_input_dims)
{
	char msg[512];
	cvc_db *db = NULL;

	cr_expect_eq(import_small("5", msg, sizeof msg, &db), CVC_ERR_FORMAT);
	cr_expect(strstr(msg, "t.json': byte ") && strstr(msg, "field 'Input Dims': expected an array"),
		  "%s", msg);
	cvc_db_close(db);
}

/* ---- TraceLens GEMM.csv ------------------------------------------------------------ */

/* Splits one CSV line (double-quoted fields may hold commas) in place. */
static int csv_split(char *line, char **f, int maxf)
{
	int n = 0;
	char *p = line;

	while (n < maxf) {
		char *w;

		if (*p == '"') {
			f[n++] = w = ++p;
			while (*p && !(*p == '"' && p[1] != '"'))
				*w++ = *p == '"' ? (p += 2, '"') : *p++;
			if (*p == '"')
				p++;
			*w = '\0';
		} else {
			f[n++] = p;
			while (*p && *p != ',' && *p != '\n' && *p != '\r')
				p++;
		}
		if (*p != ',') {
			*p = '\0';
			break;
		}
		*p++ = '\0';
	}
	return n;
}

struct ref {
	char op[32];
	int64_t b, m, n, k;
	double mean_us;
	long count;
	int bf16;
};

/* The GEMM.csv columns read, and their headers. */
enum { C_NAME, C_B, C_M, C_N, C_K, C_T, C_CNT, C_DT, NCOL };
static const char *const gemm_cols[NCOL] = {
	[C_NAME] = "name",         [C_B] = "param: B", [C_M] = "param: M",
	[C_N] = "param: N",        [C_K] = "param: K", [C_T] = "Kernel Time (\xc2\xb5s)_mean",
	[C_CNT] = "name_count",    [C_DT] = "param: dtype_A_B",
};

/* Reads GEMM.csv rows into refs; returns how many. */
static size_t read_gemm_csv(struct ref *refs, size_t max)
{
	char *text = tu_read(tu_shared(QWEN_GEMM), NULL), *line, *cur = text;
	char *f[64];
	int col[NCOL], nf;
	size_t n = 0;

	cr_assert_not_null(text);
	line = tu_next_line(&cur);
	cr_assert_not_null(line);
	nf = csv_split(line, f, 64);
	for (int c = 0; c < NCOL; c++) {
		col[c] = -1;
		for (int i = 0; i < nf; i++)
			if (strcmp(f[i], gemm_cols[c]) == 0)
				col[c] = i;
		cr_assert(col[c] >= 0, "GEMM.csv: column '%s' not found", gemm_cols[c]);
	}
	while ((line = tu_next_line(&cur)) && n < max) {
		if (!*line)
			continue;
		struct ref *r = &refs[n];

		nf = csv_split(line, f, 64);
		cr_assert_gt(nf, col[C_T], "GEMM.csv: short row");
		snprintf(r->op, sizeof r->op, "%s", f[col[C_NAME]]);
		r->b = strtoll(f[col[C_B]], NULL, 10);
		r->m = strtoll(f[col[C_M]], NULL, 10);
		r->n = strtoll(f[col[C_N]], NULL, 10);
		r->k = strtoll(f[col[C_K]], NULL, 10);
		r->mean_us = strtod(f[col[C_T]], NULL);
		r->count = strtol(f[col[C_CNT]], NULL, 10);
		r->bf16 = strstr(f[col[C_DT]], "BFloat16") != NULL;
		n++;
	}
	free(text);
	return n;
}

Test(tracefit, shapes_and_times_match_tracelens)
{
	struct ref refs[64];
	size_t nref = read_gemm_csv(refs, 64), n = 0, ngroups = 0;
	cvc_model_trace_gemm *g = NULL;
	cvc_db *db = import_qwen(NULL);
	char *used;

	cr_assert_gt(nref, 0);
	cr_assert_eq(cvc_model_trace_gemms(db, -1, &g, &n), CVC_OK, "%s", cvc_db_errmsg(db));
	used = calloc(n ? n : 1, 1);
	cr_assert_not_null(used);
	for (size_t r = 0; r < nref; r++) {
		double sum = 0;
		long cnt = 0;

		for (size_t i = 0; i < n; i++) {
			if (strcmp(g[i].op, refs[r].op) || g[i].b != refs[r].b || g[i].m != refs[r].m ||
			    g[i].n != refs[r].n || g[i].k != refs[r].k)
				continue;
			sum += g[i].total_us;
			cnt++;
			used[i] = 1;
			/* the GEMM kernels are the op's time but for memsets */
			cr_expect(g[i].gemm_us > 0 && g[i].gemm_us <= g[i].total_us,
				  "op %lld: gemm %.3f us, total %.3f us", (long long)g[i].external_id,
				  g[i].gemm_us, g[i].total_us);
		}
		cr_expect_eq(cnt, refs[r].count, "%s %lld,%lld,%lld,%lld: %ld calls, TraceLens %ld",
			     refs[r].op, (long long)refs[r].b, (long long)refs[r].m,
			     (long long)refs[r].n, (long long)refs[r].k, cnt, refs[r].count);
		if (cnt) {
			double mean = sum / (double)cnt, rel = fabs(mean - refs[r].mean_us) / refs[r].mean_us;

			cr_expect_lt(rel, 1e-4, "%s M=%lld N=%lld K=%lld: cvc %.6f us, TraceLens %.6f us",
				     refs[r].op, (long long)refs[r].m, (long long)refs[r].n,
				     (long long)refs[r].k, mean, refs[r].mean_us);
			cr_log_info("%-12s B=%lld M=%lld N=%lld K=%lld calls %ld: cvc %.4f us, TraceLens "
				    "%.4f us (rel %.1e)", refs[r].op, (long long)refs[r].b,
				    (long long)refs[r].m, (long long)refs[r].n, (long long)refs[r].k,
				    cnt, mean, refs[r].mean_us, rel);
			ngroups++;
		}
	}
	cr_expect_eq(ngroups, nref);
	/* no op with kernels that TraceLens does not list */
	for (size_t i = 0; i < n; i++)
		cr_expect(used[i], "op %s %lld,%lld,%lld (ext %lld) is not in GEMM.csv", g[i].op,
			  (long long)g[i].m, (long long)g[i].n, (long long)g[i].k,
			  (long long)g[i].external_id);
	free(used);
	free(g);
	cvc_db_close(db);
}

/* ---- fit ----------------------------------------------------------------------------- */

Test(tracefit, fit_from_trace_and_predict_xla)
{
	struct ref refs[64];
	size_t nref = read_gemm_csv(refs, 64), nbf16 = 0, nsets = 0, nx = 0;
	char *dbpath = NULL, *xla = dup_path(tu_shared(XLA_MATMUL)), err[512], args[1024], *out = NULL;
	cvc_db *db = import_qwen(&dbpath);
	cvc_model_rows *sets = NULL, xrows = {0};
	cvc_model_row *bf = NULL;
	cvc_hw_catalog *cat = NULL;
	const cvc_hw_spec *spec;
	cvc_model_fit fit;
	double sum = 0, sum_def = 0;
	cvc_model_fit def;
	cvc_modelset *ms = NULL;

	for (size_t r = 0; r < nref; r++)
		nbf16 += (size_t)refs[r].bf16;
	cr_assert_eq(cvc_model_rows_from_traces(db, &sets, &nsets), CVC_OK, "%s",
		     cvc_db_errmsg(db));
	cr_assert_eq(nsets, 1);
	cr_expect(strstr(sets[0].source, "run Qwen_Qwen1.5-0.5B-Chat__1016005") != NULL, "source '%s'",
		  sets[0].source);
	bf = calloc(sets[0].n, sizeof *bf);
	cr_assert_not_null(bf);
	{
		size_t nb = 0;

		for (size_t i = 0; i < sets[0].n; i++)
			if (sets[0].v[i].dtype == CVC_HW_BF16)
				bf[nb++] = sets[0].v[i];
		/* one row per distinct shape TraceLens lists in bf16 */
		cr_assert_eq(nb, nbf16, "bf16 rows %zu, TraceLens bf16 shapes %zu", nb, nbf16);
	}
	cr_assert_eq(cvc_hw_catalog_new(&cat), CVC_OK);
	spec = cvc_hw_catalog_lookup(cat, bf[0].gpu);
	cr_assert_not_null(spec, "GPU '%s' not in the catalog", bf[0].gpu);
	cr_expect_str_eq(spec->name, "H100-SXM");
	cr_assert_eq(cvc_model_fit_gemm_min(bf, nbf16, 4, spec, &fit, err, sizeof err), CVC_OK, "%s",
		     err);
	cr_expect_eq(fit.n_points, (int)nbf16);
	cr_expect_lt(fit.mape, QWEN_INSAMPLE_MAPE_MAX, "in-sample MAPE %.2f%%", fit.mape);
	/* the default minimum still refuses so few rows */
	cr_expect_eq(cvc_model_fit_gemm(bf, nbf16, spec, &def, err, sizeof err), CVC_ERR_USAGE);

	/* Out of sample: XLA's measured H100 bf16 table (256..4096 per dim,
	 * b 1..4), far smaller shapes than the trace's M = 8944. */
	cr_assert_eq(cvc_model_rows_read(&xrows, xla, NULL, err, sizeof err), CVC_OK, "%s", err);
	cr_assert_eq(cvc_modelset_new(NULL, cat, spec, &ms), CVC_OK);
	for (size_t i = 0; i < xrows.n; i++) {
		const cvc_model_row *r = &xrows.v[i];
		double t;

		if (r->kind != CVC_MODEL_GEMM || r->dtype != CVC_HW_BF16)
			continue;
		t = cvc_model_fit_predict(&fit, spec, r);
		sum += fabs(t - r->time_us) / r->time_us;
		t = cvc_model_gemm_us(ms, r->m, r->n, r->k, r->b, r->dtype);
		sum_def += fabs(t - r->time_us) / r->time_us;
		nx++;
	}
	cvc_modelset_free(ms);
	cr_assert_gt(nx, 0);
	cr_log_info("qwen trace fit: %d bf16 shapes, in-sample MAPE %.2f%%, params p0 %.3f us "
		    "p3 %.4f; XLA H100 bf16 (%zu rows) MAPE %.1f%% (spec-sheet default: %.1f%%)",
		    fit.n_points, fit.mape, fit.params[0], fit.params[3], nx, 100.0 * sum / (double)nx,
		    100.0 * sum_def / (double)nx);
	cr_expect_lt(100.0 * sum / (double)nx, QWEN_XLA_MAPE_MAX);

	/* the CLI stores it, named after the run */
	cvc_db_close(db);
	db = NULL;
	snprintf(args, sizeof args, "fit --db '%s'", dbpath);
	cr_assert_eq(tu_cvc(args, &out, NULL), 0);
	cr_expect(strstr(out, "bf16") != NULL, "%s", out);
	free(out);
	out = NULL;
	cr_assert_eq(cvc_db_open(dbpath, 0, &db), CVC_OK);
	{
		cvc_model_fit *fits = NULL;
		size_t nf = 0, found = 0;

		cr_assert_eq(cvc_model_fit_list(db, &fits, &nf), CVC_OK);
		for (size_t i = 0; i < nf; i++)
			if (fits[i].kind == CVC_MODEL_GEMM && fits[i].dtype == CVC_HW_BF16 &&
			    strstr(fits[i].source, "run Qwen") && fits[i].n_points == (int)nbf16 &&
			    fabs(fits[i].mape - fit.mape) < 1e-6)
				found++;
		cr_expect_eq(found, 1, "stored trace fit not found");
		free(fits);
	}
	cvc_db_close(db);
	cvc_model_rows_release(&xrows);
	for (size_t i = 0; i < nsets; i++)
		cvc_model_rows_release(&sets[i]);
	free(sets);
	free(bf);
	cvc_hw_catalog_free(cat);
	free(xla);
	free(dbpath);
}

/*
 * --gpu names the GPU of imported rows whose run names none the catalog
 * knows (a GB200 or a ROCm trace prints a name cvc's catalog lacks), as
 * `fit --help` says, and as it does for source files.
 */
Test(tracefit, gpu_flag_names_the_imported_rows)
{
	char *dbpath = NULL, args[1024], *out = NULL, *err = NULL;
	cvc_db *db = import_qwen(&dbpath);
	cvc_model_fit *fits = NULL;
	size_t nf = 0, named = 0;

	cr_assert_eq(cvc_db_exec(db, "UPDATE runs SET gpu_model = 'NVIDIA Graphics Device'; "
					 "UPDATE devices SET name = 'NVIDIA Graphics Device'"),
		     CVC_OK);
	cvc_db_close(db);
	snprintf(args, sizeof args, "fit --db '%s'", dbpath);
	cr_expect_eq(tu_cvc(args, &out, &err), 2, "%s", err);
	cr_expect(err && strstr(err, "name it with --gpu"), "%s", err);
	free(out);
	free(err);
	snprintf(args, sizeof args, "fit --db '%s' --gpu H100-SXM", dbpath);
	cr_assert_eq(tu_cvc(args, &out, &err), 0, "%s", err);
	free(out);
	free(err);
	cr_assert_eq(cvc_db_open(dbpath, 0, &db), CVC_OK);
	cr_assert_eq(cvc_model_fit_list(db, &fits, &nf), CVC_OK);
	for (size_t i = 0; i < nf; i++)
		named += fits[i].kind == CVC_MODEL_GEMM && strcmp(fits[i].gpu, "H100-SXM") == 0 &&
			 strstr(fits[i].source, "run Qwen") != NULL;
	cr_expect_gt(named, 0, "no GEMM fit of the trace named H100-SXM");
	free(fits);
	cvc_db_close(db);
	free(dbpath);
}
