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

#include "cvc/cvc.h"
#include "cvc/cvc_classify.h"
#include "cvc/cvc_db.h"
#include "cvc/cvc_import.h"
#include "cvc/cvc_model.h"
#include "cvc/cvc_profile.h"
#include "cvc/cvc_project.h"

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
	FZ_NTARGETS
};

/* Directory names under tests/fuzz/regress/ and harness names (fuzz_<name>). */
static inline const char *fz_target_name(enum fz_target t)
{
	static const char *const names[FZ_NTARGETS] = {
		"kineto", "nsys", "nccltests", "cvcdb", "csvtab",
		"catalog", "rules", "scenario", "spool", "stream"};

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
		(void)cvc_proj_study_size(st);
		/* Run the first scenarios: `where:` expressions fail only at run time. */
		if (cvc_proj_ctx_new(NULL, &ctx) == CVC_OK) {
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
	st = cvc_import_files(db, paths, 1, NULL, NULL, NULL);
	fz_copy_msg(cvc_db_errmsg(db));
	cvc_db_close(db);
	close(fds[0]); /* the writer, if still blocked, now gets EPIPE */
	pthread_join(th, NULL);
	return st;
}

/* Runs one input through target t. */
static inline cvc_status fz_run(enum fz_target t, const uint8_t *d, size_t n)
{
	const char *path = NULL;

	fz_state()->msg[0] = '\0';
	if (t != FZ_CATALOG && t != FZ_SCENARIO && t != FZ_STREAM)
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
