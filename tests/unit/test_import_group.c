/*
 * test_import_group.c - a folder of traces becomes the runs its files' own
 * metadata say (issue 35: a CloverLeaf and a saxpy export four months apart
 * were made ranks of one run): what each file says of itself, how files
 * are grouped, and what `cvc import --db DB DIR/` makes of a folder holding
 * two jobs.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <criterion/criterion.h>

#include "cvc/cvc_db.h"
#include "cvc/cvc_import.h"
#include "testutil.h"

/* A minimal Kineto trace of rank r of a job of size w whose first event is
 * at ts_us (microseconds since the epoch, as older PyTorch writes them). */
static void kineto(const char *dir, const char *name, int r, int w, double ts_us,
		   const char *gpu)
{
	char text[2048];
	int n = snprintf(text, sizeof text,
			 "{\"schemaVersion\": 1, \"deviceProperties\": [{\"id\": 0, \"name\": \"%s\"}],"
			 "\"distributedInfo\": {\"backend\": \"nccl\", \"rank\": %d, \"world_size\": %d},"
			 "\"traceEvents\": [{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"gemm_kernel\","
			 " \"pid\": 0, \"tid\": 7, \"ts\": %.0f, \"dur\": 10, \"args\": {\"device\": 0,"
			 " \"stream\": 7}}]}",
			 gpu, r, w, ts_us);

	cr_assert(n > 0 && (size_t)n < sizeof text);
	cr_assert_eq(tu_write(tu_path(dir, name), text, (size_t)n), 0);
}

static cvc_trace_ident ident(const char *dir, const char *name)
{
	cvc_trace_ident id;
	cvc_db *db = NULL;
	char err[512];

	cr_assert_eq(cvc_db_open(tu_path(dir, "scratch.db"), CVC_DB_CREATE, &db), CVC_OK);
	cr_assert_eq(cvc_import_identify(db, tu_path(dir, name), &id, err, sizeof err), CVC_OK,
		     "%s", err);
	cvc_db_close(db);
	return id;
}

Test(import_group, a_kineto_trace_says_its_rank_job_size_gpu_and_start)
{
	char dir[4096];
	cvc_trace_ident id;

	snprintf(dir, sizeof dir, "%s", tu_tmpdir());
	kineto(dir, "r3.json", 3, 8, 1694128201435418.0, "NVIDIA A100-SXM4-80GB");
	id = ident(dir, "r3.json");
	cr_assert_eq(id.fmt, CVC_FMT_KINETO);
	cr_assert_eq(id.rank, 3);
	cr_assert_eq(id.world, 8);
	cr_assert_str_eq(id.gpu, "NVIDIA A100-SXM4-80GB");
	/* microseconds as a double: exact to about a microsecond at this size */
	cr_assert_lt(llabs(id.start_ns - 1694128201435418000LL), 1000, "%lld", (long long)id.start_ns);
}

/* The rules, on identities alone. */
Test(import_group, identities_make_runs)
{
	cvc_trace_ident id[7];
	int g[7];
	char why[400];

	memset(id, 0, sizeof id);
	for (int i = 0; i < 7; i++) {
		id[i].fmt = CVC_FMT_KINETO;
		id[i].world = 2;
		id[i].rank = i % 2;
		id[i].start_ns = (int64_t)1700000000 * 1000000000LL + i * 1000000000LL;
	}
	/* files 2 and 3: the same shape a week later */
	id[2].start_ns = id[3].start_ns = id[0].start_ns + 7 * 86400LL * 1000000000LL;
	/* file 4: rank 0 again, at the first job's time: a third job */
	id[4].rank = 0;
	id[4].start_ns = id[0].start_ns;
	/* file 5: no distributedInfo: a job of its own */
	id[5].world = -1;
	id[5].rank = -1;
	/* file 6: an nccl-tests log */
	memset(&id[6], 0, sizeof id[6]);
	id[6].fmt = CVC_FMT_NCCL_TESTS;
	id[6].rank = id[6].world = -1;
	cr_assert_eq(cvc_import_group(id, 7, g), 5);
	cr_assert_eq(g[0], g[1]);
	cr_assert_eq(g[2], g[3]);
	cr_assert_neq(g[0], g[2]);
	cr_assert(g[4] != g[0] && g[4] != g[2]);
	cr_assert(g[5] != g[0] && g[5] != g[2] && g[5] != g[4]);
	cvc_import_group_why(id, g, 7, g[0], why, sizeof why);
	cr_assert(strstr(why, "2 Kineto traces, ranks 0-1 of world size 2, started 2023-11-14"),
		  "%s", why);
	cvc_import_group_why(id, g, 7, g[5], why, sizeof why);
	cr_assert(strstr(why, "without distributedInfo"), "%s", why);
}

 /* Two jobs of the same shape in one folder, a week apart, with the
 * ranks of their own each: two runs. */
Test(import_group, a_folder_of_two_jobs_imports_as_two_runs)
{
	char dir[4096], sub[4200], args[16384], *out = NULL, *err = NULL;
	cvc_db *db = NULL;

	snprintf(dir, sizeof dir, "%s", tu_tmpdir());
	snprintf(sub, sizeof sub, "%s/traces", dir);
	cr_assert_eq(mkdir(sub, 0755), 0);
	kineto(sub, "a0.json", 0, 2, 1694128201435418.0, "NVIDIA H100 80GB HBM3");
	kineto(sub, "a1.json", 1, 2, 1694128201435999.0, "NVIDIA H100 80GB HBM3");
	kineto(sub, "b0.json", 0, 2, 1694733001435418.0, "NVIDIA H100 80GB HBM3");
	kineto(sub, "b1.json", 1, 2, 1694733001436000.0, "NVIDIA H100 80GB HBM3");
	snprintf(args, sizeof args, "import --db '%s/d.db' '%s'", dir, sub);
	cr_assert_eq(tu_cvc(args, &out, &err), 0, "%s", err);
	cr_assert(strstr(out, "imported 4 files into 2 runs"), "%s", out);
	cr_assert(strstr(err, "note: run 1 'a0.json': 2 Kineto traces, ranks 0-1 of world size 2"),
		  "%s", err);
	cr_assert(strstr(err, "note: run 2 'b0.json': 2 Kineto traces, ranks 0-1"), "%s", err);
	free(out);
	free(err);
	cr_assert_eq(cvc_db_open(tu_path(dir, "d.db"), CVC_DB_READONLY, &db), CVC_OK);
	cr_assert_eq(tu_db_int(db, "SELECT count(*) FROM runs"), 2);
	cr_assert_eq(tu_db_int(db, "SELECT count(*) FROM ranks WHERE run_id = 1"), 2);
	cr_assert_eq(tu_db_int(db, "SELECT count(*) FROM ranks WHERE run_id = 2"), 2);
	cvc_db_close(db);
	/* named files, or --run: one run, as the user says */
	snprintf(args, sizeof args, "import --db '%s/e.db' --run all '%s/a0.json' '%s/a1.json'",
		 dir, sub, sub);
	cr_assert_eq(tu_cvc(args, &out, &err), 0, "%s", err);
	cr_assert(strstr(out, "imported 2 files into run 1"), "%s", out);
	free(out);
	free(err);
}
