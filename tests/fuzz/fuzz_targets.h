/*
 * fuzz_targets.h - one input through one parser's library entry point.
 *
 * Shared by the libFuzzer harnesses (tests/fuzz/fuzz_<target>.c, built with
 * -DCVC_FUZZ=ON) and by the crash replay test (tests/unit/test_regress.c,
 * built in every configuration), so a crash found by fuzzing is replayed
 * through exactly the code that found it.  Everything here is static inline:
 * a file that includes it uses only some targets.
 *
 * The parsers take paths, so the input goes to one temporary file per
 * process ($TMPDIR or /tmp) that fz_write() rewrites in place.  Importers
 * run inside a transaction on an in-memory database that is rolled back,
 * so iterations do not see each other's rows.
 *
 * fz_run() returns the parser's status.  A failure must come with a message
 * that names the input (STYLE.md, "Messages"); fz_check() says whether the
 * pair (status, message) keeps that contract, and the harnesses abort()
 * when it does not so that libFuzzer records the input.
 */
#ifndef CVC_FUZZ_TARGETS_H
#define CVC_FUZZ_TARGETS_H

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sqlite3.h>

#include "../unit/nsys_fixture.h"
#include "cvc/cvc.h"
#include "cvc/cvc_analyze.h"
#include "cvc/cvc_classify.h"
#include "cvc/cvc_db.h"
#include "cvc/cvc_import.h"
#include "cvc/cvc_model.h"
#include "cvc/cvc_profile.h"
#include "cvc/cvc_project.h"
#include "cvc/cvc_report.h"
/* the report's trace tables, which cvc report builds before its page */
#include "reports/rep_proj.h"

enum fz_target {
	FZ_KINETO,
	FZ_NSYS,
	FZ_NCCLTESTS,
	FZ_CVCDB,
	FZ_CSVTAB,
	FZ_CATALOG,
	FZ_RULES,
	FZ_SCENARIO,
	FZ_SPOOL,
	FZ_STREAM,
	FZ_SQLCRAFT,
	FZ_VALIDATE,
	FZ_ANALYZE,
	FZ_HFCONFIG,
	FZ_NTARGETS
};

/* Directory names under tests/fuzz/regress/ and harness names (fuzz_<name>). */
static inline const char *fz_target_name(enum fz_target t)
{
	static const char *const names[FZ_NTARGETS] = {
		"kineto", "nsys", "nccltests", "cvcdb", "csvtab",
		"catalog", "rules", "scenario", "spool", "stream", "sqlcraft", "validate",
		"analyze", "hfconfig"};

	return (unsigned)t < FZ_NTARGETS ? names[t] : "?";
}

struct fz_state {
	char path[512];      /* the input file */
	char outdb[540];     /* spool target: a database path that must not exist */
	cvc_db *db;          /* in-memory database for the importers */
	int64_t run_id;
	char msg[2048];      /* message of the last failure */
};

static inline struct fz_state *fz_state(void)
{
	static struct fz_state s;

	return &s;
}

static inline void fz_fatal(const char *what)
{
	fprintf(stderr, "fuzz: %s\n", what);
	abort();
}

/* Rewrites the per-process input file with d[0..n). */
static inline const char *fz_write(const uint8_t *d, size_t n)
{
	struct fz_state *s = fz_state();
	size_t off = 0;
	int fd;

	if (!s->path[0]) {
		const char *dir = getenv("TMPDIR");

		if (!dir || !*dir)
			dir = "/tmp";
		if (snprintf(s->path, sizeof s->path, "%s/cvcfuzz-%ld.in", dir, (long)getpid()) >=
			    (int)sizeof s->path ||
		    snprintf(s->outdb, sizeof s->outdb, "%s.db", s->path) >= (int)sizeof s->outdb)
			fz_fatal("TMPDIR is too long");
	}
	fd = open(s->path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		fz_fatal("cannot create the input file");
	while (off < n) {
		ssize_t w = write(fd, d + off, n - off);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			fz_fatal("cannot write the input file");
		off += (size_t)w;
	}
	close(fd);
	return s->path;
}

static inline void fz_unlink_db(const char *path)
{
	static const char *const sfx[] = {"", "-wal", "-shm", "-journal"};
	char side[600];

	for (size_t i = 0; i < sizeof sfx / sizeof sfx[0]; i++)
		if (snprintf(side, sizeof side, "%s%s", path, sfx[i]) < (int)sizeof side)
			unlink(side);
}

/* The importers' database: in memory, one committed run, opened once. */
static inline cvc_db *fz_db(void)
{
	struct fz_state *s = fz_state();
	cvc_run_info ri = {0};

	if (s->db)
		return s->db;
	if (cvc_db_open(":memory:", CVC_DB_CREATE, &s->db) != CVC_OK)
		fz_fatal("cannot open an in-memory database");
	ri.name = "fuzz";
	if (cvc_db_begin(s->db) || cvc_db_run_new(s->db, &ri, &s->run_id) ||
	    cvc_db_commit(s->db))
		fz_fatal(cvc_db_errmsg(s->db));
	return s->db;
}

/* Closes what fz_db() opened and removes the temporary files. */
static inline void fz_cleanup(void)
{
	struct fz_state *s = fz_state();

	cvc_db_close(s->db);
	s->db = NULL;
	if (s->path[0]) {
		unlink(s->path);
		fz_unlink_db(s->outdb);
	}
}

/*
 * Defines LLVMFuzzerInitialize as every harness has it: the temporary
 * input file is removed at exit (an in-memory database goes with the
 * process).  A macro, not a function elsewhere: fz_cleanup must reach the
 * fz_state() of the harness's own source.  Use once, at file scope.
 */
#define FZ_DEFINE_INITIALIZE                                                                 \
	int LLVMFuzzerInitialize(int *argc, char ***argv);                                   \
	int LLVMFuzzerInitialize(int *argc, char ***argv)                                    \
	{                                                                                    \
		(void)argc;                                                                  \
		(void)argv;                                                                  \
		atexit(fz_cleanup);                                                          \
		return 0;                                                                    \
	}

static inline void fz_copy_msg(const char *m)
{
	struct fz_state *s = fz_state();

	snprintf(s->msg, sizeof s->msg, "%s", m ? m : "");
}

typedef cvc_status (*fz_import_fn)(cvc_db *, int64_t, const char *, const cvc_import_opts *,
				    cvc_import_stats *);

static inline cvc_status fz_import(fz_import_fn fn, const char *path)
{
	struct fz_state *s = fz_state();
	cvc_db *db = fz_db();
	cvc_import_opts opts = {0};
	cvc_import_stats stats = {0};
	cvc_status st;

	if (cvc_db_begin(db))
		fz_fatal(cvc_db_errmsg(db));
	st = fn(db, s->run_id, path, &opts, &stats);
	/* The classifier runs after every real import: give it the rows too. */
	if (st == CVC_OK)
		st = cvc_classify_db(db, NULL, 0);
	/* and `cvc fit` reads the kept op shapes (untrusted text) back */
	if (st == CVC_OK) {
		cvc_model_rows *sets = NULL;
		size_t nsets = 0;

		for (int kind = 0; st == CVC_OK && kind < 2; kind++) {
			st = kind ? cvc_model_membound_rows_from_traces(db, &sets, &nsets)
				  : cvc_model_rows_from_traces(db, &sets, &nsets);
			for (size_t i = 0; i < nsets; i++)
				cvc_model_rows_release(&sets[i]);
			free(sets);
			sets = NULL;
			nsets = 0;
		}
	}
	fz_copy_msg(cvc_db_errmsg(db));
	cvc_db_rollback(db);
	return st;
}

static inline cvc_status fz_csvtab(const char *path)
{
	cvc_model_rows rows = {0};
	cvc_status st;
	char err[1024] = "";

	st = cvc_model_rows_read(&rows, path, NULL, err, sizeof err);
	fz_copy_msg(err);
	cvc_model_rows_release(&rows);
	return st;
}

static inline cvc_status fz_catalog(const uint8_t *d, size_t n)
{
	cvc_hw_catalog *cat = NULL;
	cvc_status st;

	st = cvc_hw_catalog_new(&cat);
	if (st == CVC_OK) {
		st = cvc_hw_catalog_load_text(cat, "fuzz.csv", (const char *)d, n);
		/* Look-ups walk what was stored. */
		for (size_t i = 0; st == CVC_OK && i < cvc_hw_catalog_count(cat); i++)
			(void)cvc_hw_catalog_at(cat, i);
	}
	fz_copy_msg(cvc_hw_catalog_errmsg(cat));
	cvc_hw_catalog_free(cat);
	return st;
}

static inline cvc_status fz_rules(const char *path)
{
	static const char *const names[] = {
		"ncclKernel_AllReduce_RING_LL_Sum_float(ncclWorkElem)",
		"ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<4096ul>)",
		"void at::native::vectorized_elementwise_kernel<4, float>(...)",
		"sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64", "", "x"};
	cvc_rules *r = NULL;
	cvc_class_match m;
	cvc_status st;
	char err[1024] = "";

	st = cvc_rules_load(path, &r, err, sizeof err);
	fz_copy_msg(err);
	for (size_t i = 0; st == CVC_OK && i < sizeof names / sizeof names[0]; i++)
		st = cvc_rules_match(r, names[i], strlen(names[i]), &m);
	cvc_rules_free(r);
	return st;
}

static inline int fz_scenario_cb(void *user, const cvc_proj_scenario *sc, const cvc_proj_result *r)
{
	(void)sc;
	(void)r;
	return ++*(uint64_t *)user >= 64;  /* a few scenarios are enough */
}

/* Scenarios a fuzzed study may expand to and still be run (about 1 s under
 * the sanitizers when every one is filtered out). */
#define FZ_SCENARIO_WALK 1e5

static inline cvc_status fz_scenario(const uint8_t *d, size_t n)
{
	cvc_proj_study *st = NULL;
	cvc_proj_ctx *ctx = NULL;
	uint64_t seen = 0, count = 0;
	cvc_status rc;

	rc = cvc_proj_study_parse("fuzz.yaml", (const char *)d, n, &st);
	fz_copy_msg(cvc_proj_study_errmsg(st));
	if (rc == CVC_OK) {
		(void)cvc_proj_study_name(st);
		/* Run the first scenarios: `where:` expressions fail only at run time.
		 * Only a study of at most FZ_SCENARIO_WALK scenarios runs: the run
		 * walks the whole expansion when `where:` matches nothing (fuzz,
		 * 2026-11: 10^8 filtered scenarios, minutes), and the parser lets a
		 * user's study reach 10^10; that cost is linear, not a bug. */
		if (cvc_proj_study_size(st) <= FZ_SCENARIO_WALK &&
		    cvc_proj_ctx_new(NULL, &ctx) == CVC_OK) {
			rc = cvc_proj_study_run(st, ctx, CVC_PROJ_NO_MARGINAL, fz_scenario_cb,
						&seen, &count);
			if (rc == CVC_ERR_USAGE)  /* our callback stopped it */
				rc = CVC_OK;
			fz_copy_msg(cvc_proj_study_errmsg(st));
		}
		cvc_proj_ctx_free(ctx);
	}
	cvc_proj_study_free(st);
	return rc;
}

/* A Hugging Face config.json as a scenario file names it (`model: {config:
 * FILE}`): read by the study parser, the one scenario it makes run. */
static inline cvc_status fz_hfconfig(const char *path)
{
	char study[700];

	snprintf(study, sizeof study, "model: {config: '%s'}\nhardware: {gpus: 8}\n", path);
	return fz_scenario((const uint8_t *)study, strlen(study));
}

/* A published-runs table (cvc validate): every row read as a scenario and
 * projected, the scored table written and dropped.  Each flop convention
 * name the rows may carry is read; a row's cells may not crash it. */
static inline cvc_status fz_validate(const char *path)
{
	static cvc_proj_ctx *ctx;
	cvc_proj_validate_opts o = {"megatron", "gpu", 0};
	cvc_proj_validation v;
	char err[1024] = "";
	FILE *out;
	cvc_status st;

	if (!ctx && cvc_proj_ctx_new(NULL, &ctx) != CVC_OK)
		fz_fatal("cannot make a projector context");
	if (!(out = fopen("/dev/null", "w")))
		fz_fatal("cannot open /dev/null");
	memset(&v, 0, sizeof v);
	st = cvc_proj_validate(path, ctx, &o, out, &v, err, sizeof err);
	fclose(out);
	fz_copy_msg(err);
	cvc_proj_validation_release(&v);
	return st;
}

static inline cvc_status fz_spool(const char *path)
{
	struct fz_state *s = fz_state();
	cvc_materialize_stats ms;
	cvc_status st;
	char err[1024] = "";

	fz_unlink_db(s->outdb);
	st = cvc_profile_materialize(path, s->outdb, &ms, err, sizeof err);
	fz_copy_msg(err);
	fz_unlink_db(s->outdb);
	return st;
}

struct fz_feed {
	const uint8_t *d;
	size_t n;
	int fd;
};

/* Writes the input into the pipe, as `zcat trace.json.gz |` would. */
static inline void *fz_feeder(void *arg)
{
	struct fz_feed *f = arg;
	sigset_t pipe_only;
	size_t off = 0;

	/* A reader that stops early gives this thread EPIPE, not the process SIGPIPE. */
	sigemptyset(&pipe_only);
	sigaddset(&pipe_only, SIGPIPE);
	pthread_sigmask(SIG_BLOCK, &pipe_only, NULL);
	while (off < f->n) {
		ssize_t w = write(f->fd, f->d + off, f->n - off);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			break;
		off += (size_t)w;
	}
	close(f->fd);
	return NULL;
}

/*
 * The input through a pipe into cvc_import_files(): format detection by
 * content, the read-once hand-off (profiler/import/stream.c: Kineto
 * streamed after the detected head, other formats through a temporary
 * copy), then whichever importer the bytes chose.  A fresh in-memory
 * database per input, since the import commits.
 */
static inline cvc_status fz_stream(const uint8_t *d, size_t n)
{
	struct fz_feed f = {d, n, -1};
	char path[64];
	const char *paths[1] = {path};
	pthread_t th;
	cvc_db *db = NULL;
	int fds[2];
	cvc_status st;

	if (pipe(fds) != 0)
		fz_fatal("pipe");
	f.fd = fds[1];
	if (pthread_create(&th, NULL, fz_feeder, &f) != 0)
		fz_fatal("cannot start the pipe writer");
	snprintf(path, sizeof path, "/dev/fd/%d", fds[0]);
	if (cvc_db_open(":memory:", CVC_DB_CREATE, &db) != CVC_OK)
		fz_fatal("cannot open an in-memory database");
	{
		/* as `cvc import` composes it: the classifier in the transaction */
		cvc_import_opts o = {.after = cvc_classify_after_import};

		st = cvc_import_files(db, paths, 1, &o, NULL, NULL);
	}
	fz_copy_msg(cvc_db_errmsg(db));
	cvc_db_close(db);
	close(fds[0]); /* the writer, if still blocked, now gets EPIPE */
	pthread_join(th, NULL);
	return st;
}

/* ---- what the analyzer and the report make of an import (issue 36) ------- */

static inline int fz_unknown_cb(void *arg, const char *name, int64_t count, int64_t total_ns)
{
	(void)name;
	(void)count;
	(void)total_ns;
	return ++*(int *)arg > 1000;
}

/* Keeps the first failure's status, and its message from msg. */
static inline void fz_keep(cvc_status *st, cvc_status got, const char *msg)
{
#ifdef FZ_DEBUG
	fprintf(stderr, "fz_keep: %d %s\n", got, got ? msg : "");
#endif
	if (*st == CVC_OK && got != CVC_OK) {
		*st = got;
		fz_copy_msg(msg);
	}
}

/*
 * The input, whatever format detection makes of it, imported as `cvc
 * import` does (classifier in the transaction) into a fresh in-memory
 * database and committed; then every reading of it the tool makes: the
 * breakdowns per rank and per step with classes, the collectives, the
 * class summary and unknown names, the report's trace tables and the
 * Perfetto export.  The importers were fuzzed, but nothing read what they
 * stored: times the window accepted overflowed the analyzer's sums.
 */
static inline cvc_status fz_analyze(const char *path)
{
	cvc_import_opts io = {.after = cvc_classify_after_import};
	cvc_analyze_opts by_rank = {.classes = 1}, by_step = {.by = CVC_BY_STEP, .classes = 1};
	cvc_class_total tot[CVC_CLS_COUNT];
	struct rep_tables tables = {0};
	cvc_rep_perfetto_stats ps;
	cvc_breakdown *rows = NULL;
	cvc_coll_stat *cs = NULL;
	cvc_idle_stat *is = NULL;
	size_t n = 0;
	cvc_db *db = NULL;
	cvc_status st = CVC_OK, got;
	char err[1024] = "";
	int64_t all = 0;
	int seen = 0;
	FILE *out;

	if (cvc_db_open(":memory:", CVC_DB_CREATE, &db) != CVC_OK)
		fz_fatal("cannot open an in-memory database");
	got = cvc_import_files(db, &path, 1, &io, NULL, NULL);
	fz_copy_msg(cvc_db_errmsg(db));
	if (got != CVC_OK) {
		cvc_db_close(db);
		return got;
	}
	got = cvc_analyze_run(db, &by_rank, &rows, &n);
	cvc_breakdown_free(rows, n);
	fz_keep(&st, got, cvc_db_errmsg(db));
	got = cvc_analyze_run(db, &by_step, &rows, &n);
	cvc_breakdown_free(rows, n);
	fz_keep(&st, got, cvc_db_errmsg(db));
	got = cvc_analyze_collectives(db, NULL, &cs, &n);
	free(cs);
	fz_keep(&st, got, cvc_db_errmsg(db));
	got = cvc_analyze_idle(db, NULL, CVC_KERNEL_WAIT_NS_DEFAULT, &is, &n);
	/* the parts of idle time add up to it, whatever the times */
	for (size_t i = 0; got == CVC_OK && i < n; i++)
		if (is[i].host_wait_ns + is[i].kernel_wait_ns + is[i].other_ns != is[i].idle_ns ||
		    is[i].host_wait_ns < 0 || is[i].kernel_wait_ns < 0 || is[i].other_ns < 0)
			fz_fatal("idle breakdown does not add up to idle time");
	free(is);
	fz_keep(&st, got, cvc_db_errmsg(db));
	fz_keep(&st, cvc_classify_summary(db, -1, tot, &all), cvc_db_errmsg(db));
	fz_keep(&st, cvc_classify_unknown(db, NULL, -1, fz_unknown_cb, &seen), cvc_db_errmsg(db));
	got = rep_trace_tables(db, NULL, &tables, err, sizeof err);
	rep_tables_release(&tables);
	fz_keep(&st, got, err);
	if (!(out = fopen("/dev/null", "w")))
		fz_fatal("cannot open /dev/null");
	got = cvc_rep_perfetto(db, NULL, out, &ps);
	fclose(out);
	fz_keep(&st, got, cvc_db_errmsg(db));
	cvc_db_close(db);
	return st;
}

/* ---- crafted SQLite inputs (issue 14) ------------------------------------ */

/*
 * A small Nsight Systems export (3.2x layout: kernels, copies, sets, GPU and
 * device map, NVTX), the base the crafted inputs edit.  Mutating SQLite's
 * bytes rarely reaches a view, a trigger or a huge value; SQL does.
 */
static const char fz_nsys_base_sql[] =
	TU_NSYS_HEAD_SQL ");"
	"INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES"
	" (1000,1500,0,1,NULL,7,11,1677721600,1,2,NULL,64,8,1,1,256,1,1,1024,2048),"
	" (2000,2600,0,1,NULL,7,12,1677721600,NULL,2,NULL,32,1,1,1,128,1,1,0,0),"
	" (3000,3900,0,1,NULL,20,13,838860800,4,NULL,NULL,32,1,1,1,128,1,1,0,0);"
	"CREATE TABLE CUPTI_ACTIVITY_KIND_MEMCPY(start INT, end INT, deviceId INT, contextId INT,"
	" streamId INT, correlationId INT, globalPid INT, bytes INT, copyKind INT, srcKind INT,"
	" dstKind INT);"
	"INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY VALUES(500,800,0,1,7,10,1677721600,1048576,1,0,2);"
	"CREATE TABLE CUPTI_ACTIVITY_KIND_MEMSET(start INT, end INT, deviceId INT, contextId INT,"
	" streamId INT, correlationId INT, globalPid INT, bytes INT, value INT);"
	"INSERT INTO CUPTI_ACTIVITY_KIND_MEMSET VALUES(850,900,0,1,7,14,1677721600,4096,0);"
	"CREATE TABLE TARGET_INFO_GPU(vmId INT, id INT, name TEXT, totalMemory INT,"
	" memoryBandwidth INT, clockRate INT, smCount INT, computeMajor INT, computeMinor INT);"
	"INSERT INTO TARGET_INFO_GPU VALUES"
	" (0,5,'NVIDIA H100 80GB HBM3',85000000000,3350000000000,1980000000,132,9,0);"
	"CREATE TABLE TARGET_INFO_CUDA_DEVICE(gpuId INT, cudaId INT, pid INT, uuid TEXT,"
	" numMultiprocessors INT);"
	"INSERT INTO TARGET_INFO_CUDA_DEVICE VALUES(5,0,100,NULL,132),(5,0,50,NULL,132);"
	"CREATE TABLE ENUM_NSYS_EVENT_TYPE(id INT, name TEXT);"
	"INSERT INTO ENUM_NSYS_EVENT_TYPE VALUES(59,'NvtxPushPopRange'),(60,'NvtxStartEndRange'),"
	" (75,'NvtxDomainCreate');"
	"CREATE TABLE NVTX_EVENTS(start INT, end INT, eventType INT, rangeId INT, category INT,"
	" color INT, text TEXT, globalTid INT, endGlobalTid INT, textId INT, domainId INT);"
	"INSERT INTO NVTX_EVENTS VALUES(900,4000,60,1,NULL,NULL,NULL,1677721601,NULL,3,0),"
	" (950,1200,59,NULL,NULL,NULL,'fwd',1677721601,NULL,NULL,0);";

struct fz_craft {
	unsigned char *base[2]; /* serialized: [0] Nsight export, [1] cvc shard */
	sqlite3_int64 nbase[2];
};

static inline unsigned char *fz_read_all(const char *path, sqlite3_int64 *n)
{
	FILE *f = fopen(path, "rb");
	unsigned char *buf = NULL;
	long len;

	if (!f)
		return NULL;
	if (fseek(f, 0, SEEK_END) == 0 && (len = ftell(f)) > 0 && fseek(f, 0, SEEK_SET) == 0 &&
	    (buf = malloc((size_t)len)) && fread(buf, 1, (size_t)len, f) == (size_t)len)
		*n = len;
	else {
		free(buf);
		buf = NULL;
	}
	fclose(f);
	return buf;
}

/*
 * Builds the two bases once per process: the export from SQL, the shard by
 * importing that export into a fresh cvc database (rollback journal, so the
 * file is whole without its -wal).
 */
static inline struct fz_craft *fz_craft_bases(void)
{
	static struct fz_craft c;
	struct fz_state *s = fz_state();
	char shard[600];
	sqlite3 *sq = NULL;
	cvc_db *db = NULL;
	cvc_import_opts opts = {0};
	cvc_import_stats stats = {0};
	cvc_run_info ri = {0};
	int64_t run;

	if (c.base[0])
		return &c;
	if (sqlite3_open(":memory:", &sq) != SQLITE_OK ||
	    sqlite3_exec(sq, fz_nsys_base_sql, NULL, NULL, NULL) != SQLITE_OK ||
	    !(c.base[0] = sqlite3_serialize(sq, "main", &c.nbase[0], 0)))
		fz_fatal("cannot build the Nsight base");
	sqlite3_close(sq);
	fz_write(c.base[0], (size_t)c.nbase[0]);
	if (snprintf(shard, sizeof shard, "%s.shard", s->path) >= (int)sizeof shard)
		fz_fatal("TMPDIR is too long");
	fz_unlink_db(shard);
	ri.name = "base";
	if (cvc_db_open(shard, CVC_DB_CREATE, &db) != CVC_OK ||
	    cvc_db_exec(db, "PRAGMA journal_mode=DELETE;") || cvc_db_begin(db) ||
	    cvc_db_run_new(db, &ri, &run) || cvc_import_nsys(db, run, s->path, &opts, &stats) ||
	    cvc_classify_db(db, NULL, 0) || cvc_db_commit(db))
		fz_fatal(db ? cvc_db_errmsg(db) : "cannot build the shard base");
	cvc_db_close(db);
	c.base[1] = fz_read_all(shard, &c.nbase[1]);
	fz_unlink_db(shard);
	if (!c.base[1])
		fz_fatal("cannot read the shard base");
	return &c;
}

/* Whether s holds word w in any case (w lowercase). */
static inline int fz_has_word(const char *s, const char *w)
{
	size_t n = strlen(w);

	for (; *s; s++) {
		size_t i = 0;

		while (i < n && s[i] && (s[i] | 0x20) == w[i])
			i++;
		if (i == n)
			return 1;
	}
	return 0;
}

/* Ends a statement the crafting SQL runs away with (a recursive CTE). */
static inline int fz_craft_progress(void *arg)
{
	return ++*(long *)arg > 2000000;
}

/* Crafting may change the copy in memory only: no ATTACH (VACUUM INTO is
 * refused before SQL reaches here), no extensions. */
static inline int fz_craft_auth(void *arg, int op, const char *a, const char *b,
				const char *c, const char *d)
{
	(void)arg;
	(void)a;
	(void)b;
	(void)c;
	(void)d;
	return op == SQLITE_ATTACH || op == SQLITE_DETACH ? SQLITE_DENY : SQLITE_OK;
}

/*
 * The input is one byte choosing the base (even: Nsight export, odd: cvc
 * shard) and SQL run on a copy of it: views over tables, triggers, values
 * of every type and size (up to 32 MiB, past the importers' 16 MiB cap),
 * dropped and retyped columns.  The edited file is then imported.
 */
static inline cvc_status fz_sqlcraft(const uint8_t *d, size_t n)
{
	struct fz_craft *c = fz_craft_bases();
	int which = n ? d[0] & 1 : 0;
	char *sql = malloc(n + 1);
	unsigned char *copy = NULL, *out = NULL;
	sqlite3_int64 nout = 0;
	sqlite3 *sq = NULL;
	long steps = 0;
	const char *path;

	if (!sql)
		fz_fatal("out of memory");
	if (n > 1)
		memcpy(sql, d + 1, n - 1);
	sql[n > 1 ? n - 1 : 0] = '\0';
	if (fz_has_word(sql, "vacuum")) { /* VACUUM INTO writes a file */
		free(sql);
		sql = NULL;
	}
	copy = sqlite3_malloc64((sqlite3_uint64)c->nbase[which]);
	if (!copy || sqlite3_open(":memory:", &sq) != SQLITE_OK)
		fz_fatal("out of memory");
	memcpy(copy, c->base[which], (size_t)c->nbase[which]);
	if (sqlite3_deserialize(sq, "main", copy, c->nbase[which], c->nbase[which],
				SQLITE_DESERIALIZE_FREEONCLOSE | SQLITE_DESERIALIZE_RESIZEABLE) !=
	    SQLITE_OK)
		fz_fatal("cannot load a base");
	sqlite3_limit(sq, SQLITE_LIMIT_LENGTH, 32 << 20);
	sqlite3_limit(sq, SQLITE_LIMIT_ATTACHED, 0);
	sqlite3_set_authorizer(sq, fz_craft_auth, NULL);
	sqlite3_progress_handler(sq, 1000, fz_craft_progress, &steps);
	if (sql)
		sqlite3_exec(sq, sql, NULL, NULL, NULL); /* errors leave what ran */
	sqlite3_progress_handler(sq, 0, NULL, NULL);
	free(sql);
	out = sqlite3_serialize(sq, "main", &nout, 0);
	sqlite3_close(sq);
	if (!out)
		fz_fatal("cannot serialize the crafted file");
	path = fz_write(out, (size_t)nout);
	sqlite3_free(out);
	return fz_import(which ? cvc_import_cvcdb : cvc_import_nsys, path);
}

/* Runs one input through target t. */
static inline cvc_status fz_run(enum fz_target t, const uint8_t *d, size_t n)
{
	const char *path = NULL;

	fz_state()->msg[0] = '\0';
	if (t != FZ_CATALOG && t != FZ_SCENARIO && t != FZ_STREAM && t != FZ_SQLCRAFT)
		path = fz_write(d, n);
	switch (t) {
	case FZ_KINETO: return fz_import(cvc_import_kineto, path);
	case FZ_NSYS: return fz_import(cvc_import_nsys, path);
	case FZ_NCCLTESTS: return fz_import(cvc_import_nccl_tests, path);
	case FZ_CVCDB: return fz_import(cvc_import_cvcdb, path);
	case FZ_CSVTAB: return fz_csvtab(path);
	case FZ_CATALOG: return fz_catalog(d, n);
	case FZ_RULES: return fz_rules(path);
	case FZ_SCENARIO: return fz_scenario(d, n);
	case FZ_SPOOL: return fz_spool(path);
	case FZ_STREAM: return fz_stream(d, n);
	case FZ_SQLCRAFT: return fz_sqlcraft(d, n);
	case FZ_VALIDATE: return fz_validate(path);
	case FZ_ANALYZE: return fz_analyze(path);
	case FZ_HFCONFIG: return fz_hfconfig(path);
	case FZ_NTARGETS: break;
	}
	return CVC_ERR_INTERNAL;
}

/*
 * 1 when (st, fz_state()->msg) keeps the error contract: ok, or a failure
 * other than an internal error whose message is not empty.  Out of memory
 * is allowed: the bounded buffers report it for oversized input.
 */
static inline int fz_check(cvc_status st)
{
	const char *m = fz_state()->msg;

	if (st == CVC_OK)
		return 1;
	if (st == CVC_ERR_INTERNAL)
		return 0;
	return m[0] != '\0';
}

#endif
