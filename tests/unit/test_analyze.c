/*
 * test_analyze.c - the analyzer on synthetic databases with hand-computed
 * answers, against a brute-force grid on random ones, and through the CLI.
 * The real traces against INDEX.md: test_analyze_reference.c.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>
#include <json-c/json.h>
#include <sqlite3.h>

#include "cvc/cvc_analyze.h"
#include "cvc/cvc_db.h"
#include "testutil.h"

/* ---- building synthetic databases -------------------------------------------- */

static cvc_db *syn_create(const char *path)
{
	cvc_db *db = NULL;
	cvc_status st = cvc_db_open(path, CVC_DB_CREATE, &db);

	cr_assert_eq(st, CVC_OK, "open %s: %s", path, cvc_db_errmsg(db));
	cr_assert_eq(cvc_db_begin(db), CVC_OK);
	return db;
}

static void syn_commit_close(cvc_db *db)
{
	cr_assert_eq(cvc_db_commit(db), CVC_OK, "%s", cvc_db_errmsg(db));
	cvc_db_close(db);
}

static int64_t syn_run(cvc_db *db, const char *name, int world)
{
	cvc_run_info ri = {.name = name, .format = "synthetic", .world_size = world};
	int64_t id = 0;

	cr_assert_eq(cvc_db_run_new(db, &ri, &id), CVC_OK, "%s", cvc_db_errmsg(db));
	return id;
}

/*
 * A fresh database <name>.db in a new directory (its path, tu_path's, into
 * *path), in a transaction, holding one run called name of world ranks (its
 * id into *run).
 */
static cvc_db *syn_start(const char *name, int world, const char **path, int64_t *run)
{
	char file[256];
	cvc_db *db;

	snprintf(file, sizeof file, "%s.db", name);
	*path = tu_path(tu_tmpdir(), file);
	db = syn_create(*path);
	*run = syn_run(db, name, world);
	return db;
}

static int64_t syn_name(cvc_db *db, const char *s)
{
	int64_t id = 0;

	cr_assert_eq(cvc_db_intern(db, s, strlen(s), &id), CVC_OK);
	return id;
}

static int64_t syn_act(cvc_db *db, int64_t run, int rank, int dev, cvc_act_kind kind,
		       const char *name, int64_t s, int64_t e, int64_t stream)
{
	cvc_activity a;
	int64_t id = 0;

	memset(&a, 0, sizeof a);
	a.run_id = run;
	a.rank = rank;
	a.device = dev;
	a.kind = kind;
	a.name_id = syn_name(db, name);
	a.start_ns = s;
	a.end_ns = e;
	a.stream = stream;
	a.context = 1;
	a.correlation = -1;
	a.external_id = -1;
	cr_assert_eq(cvc_db_activity_add(db, &a, &id), CVC_OK, "%s", cvc_db_errmsg(db));
	return id;
}

static void syn_range(cvc_db *db, int64_t run, int rank, int dev, cvc_range_kind kind,
		      const char *name, int64_t s, int64_t e)
{
	cvc_range r = {.run_id = run, .rank = rank, .device = dev, .kind = kind,
		       .name_id = syn_name(db, name), .start_ns = s, .end_ns = e, .tid = -1};

	cr_assert_eq(cvc_db_range_add(db, &r), CVC_OK, "%s", cvc_db_errmsg(db));
}

/* Labels a kernel name by hand (what the classifier would write). */
static void syn_label(cvc_db *db, const char *name, int class_id, const char *cls, int comm)
{
	char sql[512];

	snprintf(sql, sizeof sql,
		 "INSERT OR IGNORE INTO op_classes(id,name,is_comm) VALUES(%d,'%s',%d);"
		 "INSERT OR REPLACE INTO name_class(name_id,class_id) VALUES(%lld,%d);",
		 class_id, cls, comm, (long long)syn_name(db, name), class_id);
	cr_assert_eq(cvc_db_exec(db, sql), CVC_OK, "%s", cvc_db_errmsg(db));
}

#define NCCL_AR "ncclKernel_AllReduce_RING_LL_Sum_float(ncclWorkElem)"

/*
 * rank 0 / device 0 (ns):
 *   gemm_a  [0,100)   stream 7     compute
 *   nccl AR [50,200)  stream 14    comm
 *   gemm_b  [150,300) stream 7     compute
 *   gemm_a  [120,120) stream 7     zero-length: counted, adds no time
 *   memcpy  [400,450) stream 22    busy, neither compute nor comm
 * rank 1 / device 1: a memset [10,20) only.
 * compute = 100 + 150 = 250; comm = 150; busy = [0,300) + [400,450) = 350
 * (every activity, as HTA's idle time and TraceLens's busy_time count
 * copies); hidden = [50,100) + [150,200) = 100; exposed = 50; overlap
 * 66.667 %; span = 450 - 0; idle = 100.
 */
static void build_basic(const char *path, int label)
{
	cvc_db *db = syn_create(path);
	int64_t run = syn_run(db, "syn", 2);

	syn_act(db, run, 0, 0, CVC_ACT_KERNEL, "gemm_a", 0, 100, 7);
	syn_act(db, run, 0, 0, CVC_ACT_KERNEL, NCCL_AR, 50, 200, 14);
	syn_act(db, run, 0, 0, CVC_ACT_KERNEL, "gemm_b", 150, 300, 7);
	syn_act(db, run, 0, 0, CVC_ACT_KERNEL, "gemm_a", 120, 120, 7);
	syn_act(db, run, 0, 0, CVC_ACT_MEMCPY, "Memcpy HtoD (Pinned -> Device)", 400, 450, 22);
	syn_act(db, run, 1, 1, CVC_ACT_MEMSET, "Memset (Device)", 10, 20, 7);
	/* Steps: GPU windows on device 0; CPU ranges that must lose to them. */
	syn_range(db, run, 0, 0, CVC_RANGE_GPU, "ProfilerStep#3", 0, 160);
	syn_range(db, run, 0, 0, CVC_RANGE_GPU, "ProfilerStep#4", 160, 500);
	syn_range(db, run, 0, -1, CVC_RANGE_CPU, "ProfilerStep#3", -1000, -10);
	syn_range(db, run, 0, 0, CVC_RANGE_GPU, "Optimizer.step", 0, 500);
	if (label) {
		syn_label(db, "gemm_a", 1, "gemm", 0);
		syn_label(db, "gemm_b", 1, "gemm", 0);
		syn_label(db, NCCL_AR, 11, "allreduce", 1);
	}
	syn_commit_close(db);
}

static cvc_db *open_db(const char *path, int flags)
{
	cvc_db *db = NULL;

	cr_assert_eq(cvc_db_open(path, flags, &db), CVC_OK, "%s", cvc_db_errmsg(db));
	return db;
}

/* Analyzes db with o; asserts success and two rows. */
static void analyze_two(cvc_db *db, const cvc_analyze_opts *o, cvc_breakdown **rows, size_t *n)
{
	cr_assert_eq(cvc_analyze_run(db, o, rows, n), CVC_OK, "%s", cvc_db_errmsg(db));
	cr_assert_eq(*n, 2);
}

/*
 * Builds the basic database (labelled or not) as dbname in a fresh
 * directory, opens it with flags and analyzes it with o; asserts success
 * and the two rows (rank 0, rank 1).  Returns the open handle.
 */
static cvc_db *analyze_basic(const char *dbname, int label, int flags, const cvc_analyze_opts *o,
			     cvc_breakdown **rows, size_t *n)
{
	const char *path = tu_path(tu_tmpdir(), dbname);
	cvc_db *db;

	build_basic(path, label);
	db = open_db(path, flags);
	analyze_two(db, o, rows, n);
	return db;
}

static void expect_basic_rank0(const cvc_breakdown *b)
{
	cr_expect_str_eq(b->run, "syn");
	cr_expect_eq(b->rank, 0);
	cr_expect_eq(b->device, 0);
	cr_expect_eq(b->kernels, 4);
	cr_expect_eq(b->comm_kernels, 1);
	cr_expect_eq(b->busy_ns, 350);
	cr_expect_eq(b->compute_ns, 250);
	cr_expect_eq(b->comm_ns, 150);
	cr_expect_eq(b->hidden_ns, 100);
	cr_expect_eq(b->exposed_ns, 50);
	cr_expect(fabs(b->overlap_pct - 200.0 / 3.0) < 1e-9, "overlap %f", b->overlap_pct);
	cr_expect_eq(b->span_ns, 450);
	cr_expect_eq(b->idle_ns, 100);
	/* the shares have the projector's denominators: the step (here the
	 * span), and compute for comm_to_compute */
	cr_expect(fabs(b->shares.comm_share - 150.0 / 450.0) < 1e-12, "%f", b->shares.comm_share);
	cr_expect(fabs(b->shares.exposed_share - 50.0 / 450.0) < 1e-12, "%f",
		  b->shares.exposed_share);
	cr_expect(fabs(b->shares.comm_to_compute - 150.0 / 250.0) < 1e-12, "%f",
		  b->shares.comm_to_compute);
}

Test(analyze, hand_computed_by_rank)
{
	cvc_breakdown *rows = NULL;
	size_t n = 0;
	cvc_db *db = analyze_basic("a.db", 1, 0, NULL, &rows, &n);

	expect_basic_rank0(&rows[0]);
	cr_expect_eq(rows[0].step, -1);
	/* A device with only a memset: no kernels, span 10, busy all of it. */
	cr_expect_eq(rows[1].rank, 1);
	cr_expect_eq(rows[1].device, 1);
	cr_expect_eq(rows[1].kernels, 0);
	cr_expect_eq(rows[1].busy_ns, 10);
	cr_expect_eq(rows[1].compute_ns, 0);
	cr_expect_eq(rows[1].span_ns, 10);
	cr_expect_eq(rows[1].idle_ns, 0);
	cr_expect_eq(rows[1].overlap_pct, 0.0);
	cvc_breakdown_free(rows, n);
	cvc_db_close(db);
}

Test(analyze, by_step_clips_to_gpu_windows)
{
	cvc_analyze_opts o = {.by = CVC_BY_STEP};
	cvc_breakdown *rows = NULL;
	size_t n = 0;
	/* Device 1 has no step ranges at all: no rows for it. */
	cvc_db *db = analyze_basic("s.db", 1, 0, &o, &rows, &n);

	/* Step 3 = [0,160): comp [0,100)+[150,160) = 110, comm [50,160) = 110,
	 * busy 160, hidden [50,100)+[150,160) = 60, span 0..160. */
	cr_expect_eq(rows[0].step, 3);
	cr_expect_eq(rows[0].kernels, 4);
	cr_expect_eq(rows[0].comm_kernels, 1);
	cr_expect_eq(rows[0].busy_ns, 160);
	cr_expect_eq(rows[0].compute_ns, 110);
	cr_expect_eq(rows[0].comm_ns, 110);
	cr_expect_eq(rows[0].hidden_ns, 60);
	cr_expect_eq(rows[0].exposed_ns, 50);
	cr_expect_eq(rows[0].span_ns, 160);
	cr_expect_eq(rows[0].idle_ns, 0);
	/* Step 4 = [160,500): comp [160,300) = 140, comm [160,200) = 40 all hidden,
	 * memcpy [400,450) busy: span 160..450 = 290, busy 190, idle 100. */
	cr_expect_eq(rows[1].step, 4);
	cr_expect_eq(rows[1].kernels, 2);
	cr_expect_eq(rows[1].comm_kernels, 1);
	cr_expect_eq(rows[1].busy_ns, 190);
	cr_expect_eq(rows[1].compute_ns, 140);
	cr_expect_eq(rows[1].comm_ns, 40);
	cr_expect_eq(rows[1].hidden_ns, 40);
	cr_expect_eq(rows[1].exposed_ns, 0);
	cr_expect(fabs(rows[1].overlap_pct - 100.0) < 1e-9);
	cr_expect_eq(rows[1].span_ns, 290);
	cr_expect_eq(rows[1].idle_ns, 100);
	cvc_breakdown_free(rows, n);
	cvc_db_close(db);
}

Test(analyze, step_fallback_to_cpu_and_user_regex)
{
	const char *path;
	int64_t run;
	cvc_db *db = syn_start("cpu", 1, &path, &run);
	cvc_analyze_opts o = {.by = CVC_BY_STEP};
	cvc_breakdown *rows = NULL;
	size_t n = 0;

	syn_act(db, run, 0, 0, CVC_ACT_KERNEL, "k", 0, 1000, 7);
	syn_act(db, run, 0, 0, CVC_ACT_KERNEL, NCCL_AR, 500, 1500, 9);
	syn_range(db, run, 0, -1, CVC_RANGE_CPU, "ProfilerStep#10", 100, 600);
	/* Two windows of one step: the step is their union. */
	syn_range(db, run, 0, -1, CVC_RANGE_CPU, "ProfilerStep#11", 800, 900);
	syn_range(db, run, 0, -1, CVC_RANGE_CPU, "ProfilerStep#11", 1400, 2000);
	syn_range(db, run, 0, -1, CVC_RANGE_CPU, "iter_a", 0, 700);
	syn_range(db, run, 0, -1, CVC_RANGE_CPU, "iter_b", 700, 2000);
	syn_label(db, "k", 1, "gemm", 0);
	syn_label(db, NCCL_AR, 11, "allreduce", 1);
	syn_commit_close(db);

	db = open_db(path, 0);
	analyze_two(db, &o, &rows, &n);
	cr_expect_eq(rows[0].step, 10);
	cr_expect_eq(rows[0].busy_ns, 500);
	cr_expect_eq(rows[0].compute_ns, 500);
	cr_expect_eq(rows[0].comm_ns, 100);
	cr_expect_eq(rows[0].hidden_ns, 100);
	cr_expect_eq(rows[1].step, 11);
	/* [800,900): k and nccl both; [1400,1500): nccl only. */
	cr_expect_eq(rows[1].kernels, 2, "a kernel in two windows of a step counts once");
	cr_expect_eq(rows[1].busy_ns, 200);
	cr_expect_eq(rows[1].compute_ns, 100);
	cr_expect_eq(rows[1].comm_ns, 200);
	cr_expect_eq(rows[1].hidden_ns, 100);
	cr_expect_eq(rows[1].span_ns, 1500 - 800);
	cvc_breakdown_free(rows, n);

	/* No capture group: steps are numbered by position. */
	o.step_regex = "^iter_";
	analyze_two(db, &o, &rows, &n);
	cr_expect_eq(rows[0].step, 0);
	cr_expect_eq(rows[0].busy_ns, 700);
	cr_expect_eq(rows[1].step, 1);
	cr_expect_eq(rows[1].busy_ns, 800);
	cr_expect_eq(rows[1].comm_ns, 800);
	cvc_breakdown_free(rows, n);

	o.step_regex = "ProfilerStep#(";
	cr_expect_eq(cvc_analyze_run(db, &o, &rows, &n), CVC_ERR_USAGE);
	cr_expect(strstr(cvc_db_errmsg(db), "offset"), "%s", cvc_db_errmsg(db));
	cr_expect_null(rows);
	cvc_db_close(db);
}

Test(analyze, unknown_run_and_empty)
{
	const char *dir = tu_tmpdir();
	const char *path = tu_path(dir, "e.db");
	cvc_db *db = syn_create(path);
	cvc_analyze_opts o = {.run = "nope"};
	cvc_breakdown *rows = NULL;
	size_t n = 7;

	syn_run(db, "empty", 0);
	syn_commit_close(db);
	db = open_db(path, 0);
	cr_expect_eq(cvc_analyze_run(db, &o, &rows, &n), CVC_ERR_NOTFOUND);
	cr_expect(strstr(cvc_db_errmsg(db), "nope"), "%s", cvc_db_errmsg(db));
	o.run = "empty";
	cr_expect_eq(cvc_analyze_run(db, &o, &rows, &n), CVC_OK);
	cr_expect_eq(n, 0);
	cvc_breakdown_free(rows, n);
	cvc_db_close(db);
}

Test(analyze, readonly_falls_back_to_hta_rule)
{
	cvc_analyze_opts o = {.classes = 1};
	cvc_breakdown *rows = NULL;
	size_t n = 0;
	cvc_db *db = analyze_basic("r.db", 0, CVC_DB_READONLY, &o, &rows, &n);
	int seen_comm = 0, seen_comp = 0;

	expect_basic_rank0(&rows[0]);
	for (size_t i = 0; i < rows[0].nclasses; i++) {
		const cvc_class_time *c = &rows[0].classes[i];

		if (strcmp(c->name, "unclassified-comm") == 0) {
			seen_comm = 1;
			cr_expect_eq(c->kernels, 1);
			cr_expect_eq(c->union_ns, 150);
		} else if (strcmp(c->name, "unclassified") == 0) {
			seen_comp = 1;
			cr_expect_eq(c->kernels, 3);
			cr_expect_eq(c->sum_ns, 250);
		}
	}
	cr_expect(seen_comm && seen_comp, "unlabeled names land in the unclassified slots");
	cvc_breakdown_free(rows, n);
	cvc_db_close(db);
}

Test(analyze, unlabeled_names_are_classified_first)
{
	cvc_breakdown *rows = NULL;
	size_t n = 0;
	cvc_db *db = analyze_basic("u.db", 0, 0, NULL, &rows, &n);

	expect_basic_rank0(&rows[0]);
	cvc_breakdown_free(rows, n);
	/* The classifier wrote its labels into the file. */
	cr_expect_geq(tu_db_int(db, "SELECT count(*) FROM name_class"), 3,
		      "every kernel name is labeled now");
	cvc_db_close(db);
}

Test(analyze, classes_breakdown)
{
	cvc_analyze_opts o = {.classes = 1};
	cvc_breakdown *rows = NULL;
	size_t n = 0;
	cvc_db *db = analyze_basic("k.db", 1, 0, &o, &rows, &n);

	cr_assert_eq(rows[0].nclasses, 2);
	/* Slots in class-id order: gemm (1), allreduce (11). */
	cr_expect_str_eq(rows[0].classes[0].name, "gemm");
	cr_expect_eq(rows[0].classes[0].kernels, 3);
	cr_expect_eq(rows[0].classes[0].sum_ns, 250);
	cr_expect_eq(rows[0].classes[0].union_ns, 250);
	cr_expect_str_eq(rows[0].classes[1].name, "allreduce");
	cr_expect_eq(rows[0].classes[1].is_comm, 1);
	cr_expect_eq(rows[0].classes[1].union_ns, 150);
	cr_expect_eq(rows[1].nclasses, 0);
	cvc_breakdown_free(rows, n);
	cvc_db_close(db);
}

/* ---- random databases against a brute-force grid ---------------------------------- */

enum { GT = 4000 };

struct ract {
	int kind, comm;
	int64_t s, e;
};

Test(analyze, random_against_grid)
{
	static unsigned char grid[GT];
	unsigned seed = 777;

	for (int round = 0; round < 12; round++) {
		const char *path;
		int64_t run;
		cvc_db *db = syn_start("rnd", 1, &path, &run);
		struct ract acts[300];
		size_t na = 50 + (size_t)(rand_r(&seed) % 250);
		int64_t win[4][2];
		int wstep[4];
		cvc_analyze_opts o = {0};
		cvc_breakdown *rows = NULL;
		size_t n = 0;

		syn_label(db, "comp", 1, "gemm", 0);
		syn_label(db, "comm", 11, "allreduce", 1);
		for (size_t i = 0; i < na; i++) {
			struct ract *a = &acts[i];
			int r = rand_r(&seed) % 10;

			a->kind = r < 7 ? CVC_ACT_KERNEL : r < 9 ? CVC_ACT_MEMCPY : CVC_ACT_MEMSET;
			a->comm = a->kind == CVC_ACT_KERNEL && rand_r(&seed) % 3 == 0;
			a->s = 100 + rand_r(&seed) % (GT - 400);
			a->e = a->s + (rand_r(&seed) % 6 == 0 ? 0 : rand_r(&seed) % 200);
			syn_act(db, run, 0, 0, (cvc_act_kind)a->kind,
				a->kind != CVC_ACT_KERNEL ? "Memcpy" : a->comm ? "comm" : "comp",
				a->s, a->e, rand_r(&seed) % 4);
		}
		/* Four windows, two steps; step 2 has two (maybe overlapping) windows. */
		for (int w = 0; w < 4; w++) {
			int64_t s = rand_r(&seed) % GT;

			win[w][0] = s;
			win[w][1] = s + rand_r(&seed) % 1500;
			wstep[w] = w == 0 ? 1 : 2;
			syn_range(db, run, 0, 0, CVC_RANGE_GPU,
				  wstep[w] == 1 ? "ProfilerStep#1" : "ProfilerStep#2", win[w][0],
				  win[w][1]);
		}
		syn_commit_close(db);

		db = open_db(path, 0);
		for (int mode = 0; mode < 3; mode++) {
			int step = mode; /* 0: whole device, 1 and 2: that step */
			int64_t busy = 0, comp = 0, comm = 0, hid = 0, first = INT64_MAX,
				last = INT64_MIN, kern = 0, ckern = 0;
			const cvc_breakdown *b = NULL;

			o.by = mode ? CVC_BY_STEP : CVC_BY_RANK;
			if (mode != 2) {
				cvc_breakdown_free(rows, n);
				rows = NULL;
				cr_assert_eq(cvc_analyze_run(db, &o, &rows, &n), CVC_OK, "%s",
					     cvc_db_errmsg(db));
			}
			for (size_t i = 0; i < n; i++)
				if (mode == 0 || rows[i].step == step)
					b = &rows[i];
			memset(grid, 0, sizeof grid);
			for (size_t i = 0; i < na; i++) {
				const struct ract *a = &acts[i];
				int in_any = 0;

				for (int w = 0; w < 4; w++) {
					int64_t ws = mode ? win[w][0] : INT64_MIN / 2;
					int64_t we = mode ? win[w][1] : INT64_MAX / 2;
					int64_t cs = a->s > ws ? a->s : ws, ce = a->e < we ? a->e : we;

					if (mode && wstep[w] != step)
						continue;
					if (!(cs < ce || (a->s == a->e && ws <= a->s && a->s < we)))
						continue;
					in_any = 1;
					if (ce < cs)
						ce = cs;
					first = cs < first ? cs : first;
					last = ce > last ? ce : last;
					/* a copy or memset: busy (4), neither compute nor comm */
					for (int64_t t = cs; t < ce; t++)
						grid[t] |= a->kind != CVC_ACT_KERNEL ? 4 : a->comm ? 2 : 1;
				}
				if (in_any && a->kind == CVC_ACT_KERNEL) {
					kern++;
					ckern += a->comm;
				}
			}
			for (int t = 0; t < GT; t++) {
				busy += grid[t] != 0;
				comp += (grid[t] & 1) != 0;
				comm += (grid[t] & 2) != 0;
				hid += (grid[t] & 3) == 3;
			}
			if (first == INT64_MAX) {
				/* Nothing in this step: a row of zeros. */
				first = last = 0;
			}
			cr_assert_not_null(b, "round %d mode %d: no row", round, mode);
			cr_expect_eq(b->kernels, kern, "round %d mode %d: kernels", round, mode);
			cr_expect_eq(b->comm_kernels, ckern, "round %d mode %d", round, mode);
			cr_expect_eq(b->busy_ns, busy, "round %d mode %d: busy %lld vs %lld", round,
				     mode, (long long)b->busy_ns, (long long)busy);
			cr_expect_eq(b->compute_ns, comp, "round %d mode %d: compute", round, mode);
			cr_expect_eq(b->comm_ns, comm, "round %d mode %d: comm", round, mode);
			cr_expect_eq(b->hidden_ns, hid, "round %d mode %d: hidden", round, mode);
			cr_expect_eq(b->exposed_ns, comm - hid);
			cr_expect_eq(b->span_ns, last - first, "round %d mode %d: span %lld vs %lld",
				     round, mode, (long long)b->span_ns, (long long)(last - first));
		}
		cvc_breakdown_free(rows, n);
		cvc_db_close(db);
	}
}

/* ---- collectives -------------------------------------------------------------------- */

Test(analyze, busbw_and_dtype)
{
	cr_expect(fabs(cvc_busbw_factor("allreduce", 8) - 1.75) < 1e-12);
	cr_expect(fabs(cvc_busbw_factor("_allgather_base", 4) - 0.75) < 1e-12);
	cr_expect(fabs(cvc_busbw_factor("reduce_scatter_tensor", 2) - 0.5) < 1e-12);
	cr_expect(fabs(cvc_busbw_factor("all_to_all", 4) - 0.75) < 1e-12);
	cr_expect_eq(cvc_busbw_factor("broadcast", 0), 1.0);
	cr_expect_eq(cvc_busbw_factor("SendRecv", 0), 1.0);
	cr_expect_eq(cvc_busbw_factor("reduce", 16), 1.0);
	cr_expect(isnan(cvc_busbw_factor("allreduce", 0)));
	cr_expect(isnan(cvc_busbw_factor("barrier", 4)));
	/* nccl-tests' gather and scatter: (n-1)/n, a group size needed (was NaN) */
	cr_expect(fabs(cvc_busbw_factor("Gather", 8) - 0.875) < 1e-12);
	cr_expect(fabs(cvc_busbw_factor("scatter", 4) - 0.75) < 1e-12);
	cr_expect(isnan(cvc_busbw_factor("gather", 0)));
	cr_expect_eq(cvc_dtype_size("Float"), 4);
	cr_expect_eq(cvc_dtype_size("BFloat16"), 2);
	cr_expect_eq(cvc_dtype_size("Long"), 8);
	cr_expect_eq(cvc_dtype_size("Float8_e4m3fn"), 1);
	cr_expect_eq(cvc_dtype_size("mystery"), 0);
	cr_expect_eq(cvc_dtype_size(NULL), 0);
}

static void syn_coll(cvc_db *db, int64_t act, const char *coll, const char *dtype,
		     int64_t in, int64_t out, int64_t bytes, int group)
{
	cvc_collective c = {.activity_id = act, .coll = coll, .dtype = dtype,
			    .in_nelems = in, .out_nelems = out, .bytes = bytes,
			    .group_size = group, .root = -1};

	cr_assert_eq(cvc_db_collective_add(db, &c), CVC_OK, "%s", cvc_db_errmsg(db));
}

Test(analyze, collectives_stats)
{
	const char *path;
	int64_t run;
	cvc_db *db = syn_start("coll", 4, &path, &run);
	cvc_coll_stat *s = NULL;
	size_t n = 0;

	/* allreduce 1000 floats twice (1000 and 3000 ns): S = 4000 B, mean 2000 ns. */
	syn_coll(db, syn_act(db, run, 0, 0, CVC_ACT_KERNEL, NCCL_AR, 0, 1000, 9), "allreduce",
		 "Float", 1000, 1000, -1, 4);
	syn_coll(db, syn_act(db, run, 0, 0, CVC_ACT_KERNEL, NCCL_AR, 5000, 8000, 9),
		 "allreduce", "Float", 1000, 1000, -1, 4);
	/* allgather: 250 in, 1000 out bf16 -> S = total output 2000 B; group from run. */
	syn_coll(db, syn_act(db, run, 0, 0, CVC_ACT_KERNEL, "ncclDevKernel_AllGather_RING_LL",
			     9000, 9500, 9),
		 "_allgather_base", "BFloat16", 250, 1000, -1, 0);
	/* Unknown dtype: the stored bytes are S. */
	syn_coll(db, syn_act(db, run, 1, 1, CVC_ACT_KERNEL, "ncclKernel_Broadcast", 0, 100, 9),
		 "broadcast", "mystery", 10, 10, 640, 4);
	/* No size at all: left out. */
	syn_coll(db, syn_act(db, run, 1, 1, CVC_ACT_KERNEL, "ncclKernel_Broadcast", 200, 300, 9),
		 "broadcast", NULL, -1, -1, -1, 4);
	syn_commit_close(db);

	db = open_db(path, 0);
	cr_assert_eq(cvc_analyze_collectives(db, NULL, &s, &n), CVC_OK, "%s", cvc_db_errmsg(db));
	cr_assert_eq(n, 3);
	cr_expect_str_eq(s[0].coll, "allgather");
	cr_expect_eq(s[0].bytes, 2000);
	cr_expect_eq(s[0].group_size, 4);
	cr_expect(fabs(s[0].algbw_gbps - 4.0) < 1e-9, "%f", s[0].algbw_gbps);
	cr_expect(fabs(s[0].busbw_gbps - 3.0) < 1e-9);
	cr_expect_str_eq(s[1].coll, "allreduce");
	cr_expect_eq(s[1].count, 2);
	cr_expect_eq(s[1].bytes, 4000);
	cr_expect_eq(s[1].total_ns, 4000);
	cr_expect(fabs(s[1].mean_ns - 2000.0) < 1e-9);
	cr_expect(fabs(s[1].algbw_gbps - 2.0) < 1e-9);
	cr_expect(fabs(s[1].busbw_gbps - 3.0) < 1e-9, "2 x 2(4-1)/4 = 3, got %f",
		  s[1].busbw_gbps);
	cr_expect_eq(s[2].rank, 1);
	cr_expect_str_eq(s[2].coll, "broadcast");
	cr_expect_eq(s[2].bytes, 640);
	cr_expect(fabs(s[2].busbw_gbps - 6.4) < 1e-9);
	free(s);
	cvc_db_close(db);
}

/* ---- the CLI ---------------------------------------------------------------------- */

#define MAIN_HDR                                                                        \
	"run,rank,device,kernels,comm_kernels,busy_us,compute_us,comm_us,hidden_comm_us,"  \
	"exposed_comm_us,overlap_pct,idle_us,span_us,comm_share,exposed_share,skew_us"

Test(analyze_cli, csv_exact)
{
	const char *path = tu_path(tu_tmpdir(), "cli.db");
	char args[4200], *out = NULL, *err = NULL;
	int rc;

	build_basic(path, 1);
	snprintf(args, sizeof args, "analyze --db '%s' --format csv", path);
	rc = tu_cvc(args, &out, &err);
	cr_assert_eq(rc, 0, "exit %d: %s", rc, err);
	cr_expect_str_eq(out, MAIN_HDR "\n"
			 "syn,0,0,4,1,0.350,0.250,0.150,0.100,0.050,66.667,0.100,0.450,0.333333,"
			 "0.111111,0.430\n"
			 "syn,1,1,0,0,0.010,0.000,0.000,0.000,0.000,0.000,0.000,0.010,0,0,0.000\n");
	free(out);
	free(err);

	snprintf(args, sizeof args, "analyze --db '%s' --format csv --by step", path);
	rc = tu_cvc(args, &out, &err);
	cr_assert_eq(rc, 0, "exit %d: %s", rc, err);
	cr_expect(strncmp(out, "run,rank,device,step,kernels,", 29) == 0, "%s", out);
	cr_expect(strstr(out, "\nsyn,0,0,4,2,1,0.190,0.140,0.040,0.040,0.000,100.000,0.100,0.290,"
			     "0.137931,0\n"),
		  "%s", out);
	free(out);
	free(err);
}

Test(analyze_cli, json_numbers_and_table)
{
	const char *path = tu_path(tu_tmpdir(), "cli.db");
	char args[4200], *out = NULL, *err = NULL;
	json_object *arr, *o, *v;
	int rc;

	build_basic(path, 1);
	snprintf(args, sizeof args, "analyze --db '%s' --format json", path);
	rc = tu_cvc(args, &out, &err);
	cr_assert_eq(rc, 0, "exit %d: %s", rc, err);
	arr = json_tokener_parse(out);
	cr_assert_not_null(arr, "not json: %s", out);
	cr_assert(json_object_is_type(arr, json_type_array));
	cr_assert_eq(json_object_array_length(arr), 2);
	o = json_object_array_get_idx(arr, 0);
	cr_assert(json_object_object_get_ex(o, "busy_us", &v));
	cr_expect(json_object_is_type(v, json_type_double));
	cr_expect(fabs(json_object_get_double(v) - 0.35) < 1e-12);
	cr_assert(json_object_object_get_ex(o, "kernels", &v));
	cr_expect(json_object_is_type(v, json_type_int));
	cr_expect_eq(json_object_get_int64(v), 4);
	cr_assert(json_object_object_get_ex(o, "run", &v));
	cr_expect_str_eq(json_object_get_string(v), "syn");
	json_object_put(arr);
	free(out);
	free(err);

	snprintf(args, sizeof args, "analyze --db '%s'", path);
	rc = tu_cvc(args, &out, &err);
	cr_assert_eq(rc, 0, "exit %d: %s", rc, err);
	cr_expect(strstr(out, "hidden_comm_us"), "%s", out);
	cr_expect(strstr(out, "66.667"), "%s", out);
	free(out);
	free(err);

	snprintf(args, sizeof args, "analyze --db '%s' --classes --format csv", path);
	rc = tu_cvc(args, &out, &err);
	cr_assert_eq(rc, 0, "exit %d: %s", rc, err);
	cr_expect(strstr(out, "run,rank,device,class,kernels,sum_us,union_us,busy_pct\n"), "%s",
		  out);
	cr_expect(strstr(out, "syn,0,0,gemm,3,0.250,0.250,71.429\n"), "%s", out);
	cr_expect(strstr(out, "syn,0,0,allreduce,1,0.150,0.150,42.857\n"), "%s", out);
	free(out);
	free(err);
}

Test(analyze_cli, errors)
{
	const char *dir = tu_tmpdir();
	const char *path = tu_path(dir, "cli.db");
	char args[4200], *out = NULL, *err = NULL;
	int rc;

	snprintf(args, sizeof args, "analyze --db '%s/missing.db'", dir);
	rc = tu_cvc(args, &out, &err);
	cr_expect_eq(rc, 2);
	cr_expect(strncmp(err, "error: '", 8) == 0 && strstr(err, "missing.db"), "%s", err);
	free(out);
	free(err);

	build_basic(path, 1);
	snprintf(args, sizeof args, "analyze --db '%s' --run nope", path);
	rc = tu_cvc(args, &out, &err);
	cr_expect_eq(rc, 2);
	cr_expect(strstr(err, "error: ") && strstr(err, "nope"), "%s", err);
	free(out);
	free(err);

	snprintf(args, sizeof args, "analyze --db '%s' --classes --collectives", path);
	rc = tu_cvc(args, &out, &err);
	cr_expect_eq(rc, 2);
	free(out);
	free(err);

	snprintf(args, sizeof args, "analyze --db '%s' --by step --step-regex '(' ", path);
	rc = tu_cvc(args, &out, &err);
	cr_expect_eq(rc, 2, "bad regex is bad usage");
	cr_expect(strstr(err, "error: "), "%s", err);
	free(out);
	free(err);

	/* Not a database at all. */
	snprintf(args, sizeof args, "analyze --db '%s'", tu_path(dir, "junk"));
	tu_write(tu_path(dir, "junk"), "this is not sqlite\n", 19);
	rc = tu_cvc(args, &out, &err);
	cr_expect_eq(rc, 2, "exit %d: %s", rc, err);
	cr_expect(strncmp(err, "error: '", 8) == 0, "%s", err);
	free(out);
	free(err);
}

Test(analyze_cli, empty_run_prints_header)
{
	const char *path = tu_path(tu_tmpdir(), "empty.db");
	cvc_db *db = syn_create(path);
	char args[4200], *out = NULL, *err = NULL;
	int rc;

	syn_run(db, "nothing", 0);
	syn_commit_close(db);
	snprintf(args, sizeof args, "analyze --db '%s' --format csv --run nothing", path);
	rc = tu_cvc(args, &out, &err);
	cr_expect_eq(rc, 0);
	cr_expect_str_eq(out, MAIN_HDR "\n");
	cr_expect(strstr(err, "no device activities"), "%s", err);
	free(out);
	free(err);
}

Test(analyze, corrupt_times_are_format_errors)
{
	const char *path;
	int64_t run;
	cvc_db *db = syn_start("bad", 1, &path, &run);
	cvc_breakdown *rows = NULL;
	size_t n = 0;

	syn_label(db, "k", 1, "gemm", 0);
	syn_act(db, run, 0, 0, CVC_ACT_KERNEL, "k", 0, 10, 7);
	syn_act(db, run, 0, 0, CVC_ACT_KERNEL, "k", 5, 20, 7);
	syn_commit_close(db);
	{
		/* the writers refuse such a span (issue 14): a file edited or
		 * damaged after the fact still holds one */
		sqlite3 *sq = NULL;

		cr_assert_eq(sqlite3_open(path, &sq), SQLITE_OK);
		cr_assert_eq(sqlite3_exec(sq, "UPDATE activities SET end_ns=9223372036854775807 "
					  "WHERE start_ns=5", NULL, NULL, NULL), SQLITE_OK);
		sqlite3_close(sq);
	}
	db = open_db(path, 0);
	cr_expect_eq(cvc_analyze_run(db, NULL, &rows, &n), CVC_ERR_FORMAT);
	cr_expect(strstr(cvc_db_errmsg(db), "bad.db") && strstr(cvc_db_errmsg(db), "out of range"),
		  "%s", cvc_db_errmsg(db));
	cr_expect_null(rows);
	cvc_db_close(db);
}

/*
 * Under torch.autograd.profiler.emit_nvtx, Nsight Systems' step range
 * carries the op's sequence number after the step ("ProfilerStep#4,
 * op_id = 17"): it is step 4 by the default pattern; a name that only
 * starts like one is not.
 */
Test(analyze, emit_nvtx_step_names)
{
	cvc_analyze_opts o = {.by = CVC_BY_STEP};
	cvc_breakdown *rows = NULL;
	size_t n = 0;
	const char *path;
	int64_t run;
	cvc_db *db = syn_start("nvtx", 1, &path, &run);

	syn_label(db, "gemm_a", 1, "gemm", 0);
	syn_act(db, run, 0, 0, CVC_ACT_KERNEL, "gemm_a", 100, 200, 7);
	syn_act(db, run, 0, 0, CVC_ACT_KERNEL, "gemm_a", 600, 700, 7);
	syn_range(db, run, 0, 0, CVC_RANGE_CPU, "ProfilerStep#4, op_id = 17", 0, 500);
	syn_range(db, run, 0, 0, CVC_RANGE_CPU, "ProfilerStep#5x", 500, 1000);
	syn_commit_close(db);
	db = open_db(path, 0);
	cr_assert_eq(cvc_analyze_run(db, &o, &rows, &n), CVC_OK, "%s", cvc_db_errmsg(db));
	cr_assert_eq(n, 1);
	cr_expect_eq(rows[0].step, 4);
	cr_expect_eq(rows[0].busy_ns, 100);
	cvc_breakdown_free(rows, n);
	cvc_db_close(db);
}
