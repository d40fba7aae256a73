/*
 * import.c - format detection and the multi-file import driver: one run,
 * one transaction, classification of the new kernel names at the end.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sqlite3.h>
#include <zlib.h>

#include "cvc/cvc_base.h"
#include "cvc/cvc_import.h"
#include "cvc/cvc_nccltab.h"
#include "cvc/cvc_out.h"
#include "import_int.h"

const char *cvc_format_name(cvc_format f)
{
	switch (f) {
	case CVC_FMT_KINETO: return "kineto";
	case CVC_FMT_NSYS: return "nsys";
	case CVC_FMT_NCCL_TESTS: return "nccl-tests";
	case CVC_FMT_CVCDB: return "cvc-db";
	case CVC_FMT_UNKNOWN: break;
	}
	return "unknown";
}

int imp_is_gzip(const unsigned char *p, size_t n)
{
	return n >= 2 && p[0] == 0x1f && p[1] == 0x8b;
}

cvc_status imp_peek(const char *path, unsigned char *buf, size_t cap, size_t *n,
		    int *gzipped, char *err, size_t errlen)
{
	FILE *f = NULL;
	gzFile gz = NULL;
	unsigned char magic[2];
	size_t m;
	int got;
	cvc_status st = CVC_OK;

	*n = 0;
	f = fopen(path, "rb");
	if (!f) {
		int e = errno;

		snprintf(err, errlen, "'%s': cannot open: %s", path, strerror(e));
		return cvc_open_status(e);
	}
	m = fread(magic, 1, 2, f);
	*gzipped = imp_is_gzip(magic, m);
	if (!*gzipped) {
		rewind(f);
		*n = fread(buf, 1, cap, f);
		if (ferror(f)) {
			snprintf(err, errlen, "'%s': read error: %s", path, strerror(errno));
			st = CVC_ERR_IO;
		}
		goto out;
	}
	fclose(f);
	f = NULL;
	gz = gzopen(path, "rb");
	if (!gz) {
		int e = errno;

		snprintf(err, errlen, "'%s': cannot open: %s", path, strerror(e));
		return cvc_open_status(e);
	}
	got = gzread(gz, buf, (unsigned)cap);
	if (got < 0) {
		st = imp_gz_fail(gz, path, 0, err, errlen);
		goto out;
	}
	*n = (size_t)got;
out:
	if (f)
		fclose(f);
	if (gz)
		gzclose(gz);
	return st;
}

/* True when s[0..n) contains needle. */
static int contains(const unsigned char *s, size_t n, const char *needle)
{
	size_t k = strlen(needle);

	for (size_t i = 0; i + k <= n; i++)
		if (memcmp(s + i, needle, k) == 0)
			return 1;
	return 0;
}

cvc_status imp_detect_buf(const char *path, const unsigned char *buf, size_t n,
			  cvc_format *fmt, char *err, size_t errlen)
{
	static const char sqlite_magic[16] = "SQLite format 3";
	size_t i = 0;

	*fmt = CVC_FMT_UNKNOWN;
	if (n >= 100 && memcmp(buf, sqlite_magic, 16) == 0) {
		/* The header's application_id (offset 68, big endian) marks cvc dbs. */
		uint32_t app = (uint32_t)buf[68] << 24 | (uint32_t)buf[69] << 16 |
			       (uint32_t)buf[70] << 8 | buf[71];

		*fmt = app == CVC_DB_APP_ID ? CVC_FMT_CVCDB : CVC_FMT_NSYS;
		return CVC_OK;
	}
	while (i < n && (buf[i] == ' ' || buf[i] == '\t' || buf[i] == '\n' || buf[i] == '\r'))
		i++;
	if (i < n && buf[i] == '{') {
		/* nccl-tests' -J file is JSON too: told apart by its top-level keys */
		*fmt = cvc_nt_json_sniff(buf, n) ? CVC_FMT_NCCL_TESTS : CVC_FMT_KINETO;
		return CVC_OK;
	}
	if (contains(buf, n, "nccl-tests") ||
	    (contains(buf, n, "size") && contains(buf, n, "count") &&
	     contains(buf, n, "algbw") && contains(buf, n, "busbw"))) {
		*fmt = CVC_FMT_NCCL_TESTS;
		return CVC_OK;
	}
	if (n == 0)
		snprintf(err, errlen, "'%s': byte 0: empty file, expected a trace", path);
	else if (cvc_str_ends(path, ".nsys-rep") || cvc_str_ends(path, ".qdrep"))
		/* The content decided; the name only says what the user has in hand. */
		snprintf(err, errlen,
			 "'%s': byte 0: an Nsight Systems report, expected its SQLite export: "
			 "nsys export --type=sqlite -o report.sqlite '%s'", path, path);
	else
		snprintf(err, errlen,
			 "'%s': byte 0: unrecognised format, expected Kineto JSON, an Nsight "
			 "Systems SQLite export, an nccl-tests log or a cvc database", path);
	return CVC_ERR_FORMAT;
}

cvc_status cvc_import_detect(const char *path, cvc_format *fmt, char *err,
			     size_t errlen)
{
	unsigned char *buf = NULL;
	size_t n = 0;
	int gz = 0;
	char dummy[8];
	cvc_status st;

	if (!err) {
		err = dummy;
		errlen = sizeof dummy;
	}
	*fmt = CVC_FMT_UNKNOWN;
	buf = malloc(65536);
	if (!buf)
		return CVC_ERR_NOMEM;
	if (!(st = imp_peek(path, buf, 65536, &n, &gz, err, errlen)))
		st = imp_detect_buf(path, buf, n, fmt, err, errlen);
	free(buf);
	return st;
}

cvc_status imp_gz_fail(gzFile gz, const char *path, int64_t off, char *err, size_t errlen)
{
	char msg[256];
	cvc_status st = cvc_gz_status(gz, msg, sizeof msg);

	snprintf(err, errlen, "'%s': byte %lld: %s", path, (long long)off, msg);
	return st ? st : CVC_ERR_IO;
}

/* Writes n bytes to fd, the private copy named name of path. */
static cvc_status write_all(int fd, const unsigned char *b, size_t n, const char *path,
			    const char *name, char *err, size_t errlen)
{
	for (size_t w = 0; w < n;) {
		ssize_t k = write(fd, b + w, n - w);

		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0) {
			snprintf(err, errlen, "'%s': writing its temporary copy '%s': %s", path,
				 name, k < 0 ? strerror(errno) : "disk full");
			return CVC_ERR_IO;
		}
		w += (size_t)k;
	}
	return CVC_OK;
}

cvc_status imp_temp_copy(gzFile gz, const unsigned char *pre, size_t npre, const char *path,
			 char **tmp, char *err, size_t errlen)
{
	const char *dir = getenv("TMPDIR");
	unsigned char *chunk = NULL;
	char *name = NULL;
	size_t cap;
	int64_t off = (int64_t)npre;
	int fd = -1, got, zerr = Z_OK;
	cvc_status st = CVC_OK;

	*tmp = NULL;
	if (!dir || !*dir)
		dir = "/tmp";
	cap = strlen(dir) + 32;
	name = malloc(cap);
	chunk = malloc(1 << 16);
	if (!name || !chunk) {
		snprintf(err, errlen, "out of memory");
		st = CVC_ERR_NOMEM;
		goto out;
	}
	snprintf(name, cap, "%s/cvc-import-XXXXXX", dir);
	/* lint-out: a private copy in $TMPDIR under a name mkstemp makes */
	fd = mkstemp(name);
	if (fd < 0) {
		snprintf(err, errlen, "'%s': cannot create a temporary copy in %s: %s", path, dir,
			 strerror(errno));
		st = CVC_ERR_IO;
		goto out;
	}
	cvc_tmp_add(name);
	if (npre && (st = write_all(fd, pre, npre, path, name, err, errlen)))
		goto out;
	while ((got = gzread(gz, chunk, 1 << 16)) > 0) {
		char msg[256];

		if ((st = write_all(fd, chunk, (size_t)got, path, name, err, errlen)))
			goto out;
		off += got;
		if ((st = cvc_gz_inflate_check(gz, off, msg, sizeof msg))) {
			snprintf(err, errlen, "'%s': byte %lld: %s", path, (long long)off, msg);
			goto out;
		}
	}
	/* zlib reports a cut gzip stream as a plain end of file with Z_BUF_ERROR. */
	if (got < 0 || (gzerror(gz, &zerr), zerr == Z_BUF_ERROR)) {
		st = imp_gz_fail(gz, path, off, err, errlen);
		goto out;
	}
	if (close(fd) != 0) {
		fd = -1;
		snprintf(err, errlen, "'%s': writing its temporary copy '%s': %s", path, name,
			 strerror(errno));
		st = CVC_ERR_IO;
		goto out;
	}
	fd = -1;
	*tmp = name;
	name = NULL;
out:
	if (fd >= 0)
		close(fd);
	if (name) {
		unlink(name);
		cvc_tmp_forget(name);
		free(name);
	}
	free(chunk);
	return st;
}

cvc_status imp_gunzip_temp(cvc_db *db, const char *path, char **tmp)
{
	unsigned char magic[2];
	const char *file = imp_open_name(path);
	char err[1024];
	FILE *f;
	gzFile gz;
	size_t m;
	cvc_status st;

	*tmp = NULL;
	f = fopen(file, "rb");
	if (!f) {
		int e = errno;

		return cvc_db_fail(db, cvc_open_status(e), "'%s': cannot open: %s", path,
				   strerror(e));
	}
	m = fread(magic, 1, 2, f);
	fclose(f);
	if (!imp_is_gzip(magic, m))
		return CVC_OK;
	gz = gzopen(file, "rb");
	if (!gz)
		return cvc_db_fail(db, CVC_ERR_IO, "'%s': cannot open", path);
	st = imp_temp_copy(gz, NULL, 0, path, tmp, err, sizeof err);
	gzclose(gz);
	return st ? cvc_db_fail(db, st, "%s", err) : CVC_OK;
}

cvc_status imp_meta_per_file(cvc_db *db, int64_t run_id, const char *key, const char *path,
			     const char *value)
{
	const char *base = strrchr(path, '/');
	char k[512];

	snprintf(k, sizeof k, "%s[%s]", key, base ? base + 1 : path);
	return cvc_db_run_meta_set(db, run_id, k, value);
}

cvc_status imp_next_free_rank(cvc_db *db, int64_t run_id, int *rank)
{
	sqlite3_stmt *st = NULL;
	int r = 0, rc;

	if (sqlite3_prepare_v2(cvc_db_sqlite(db),
			       "SELECT rank FROM ranks WHERE run_id=? AND rank>=0 ORDER BY rank",
			       -1, &st, NULL) != SQLITE_OK)
		return cvc_db_fail(db, CVC_ERR_DB, "'%s': %s", cvc_db_path(db),
				   sqlite3_errmsg(cvc_db_sqlite(db)));
	sqlite3_bind_int64(st, 1, run_id);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (sqlite3_column_int(st, 0) != r)
			break;
		r++;
	}
	sqlite3_finalize(st);
	*rank = r;
	return CVC_OK;
}

void imp_progress(const cvc_import_opts *opts, const char *path, int64_t done,
		  int64_t total)
{
	if (opts && opts->progress)
		opts->progress(opts->progress_arg, path, done, total);
}

void imp_stats_add(cvc_import_stats *stats, const cvc_import_stats *add)
{
	if (!stats)
		return;
	stats->files += add->files;
	stats->events += add->events;
	stats->activities += add->activities;
	stats->collectives += add->collectives;
	stats->ranges += add->ranges;
	stats->nccl_rows += add->nccl_rows;
	stats->op_shapes += add->op_shapes;
	stats->op_launches += add->op_launches;
}

static cvc_status import_one(cvc_db *db, int64_t run_id, const char *path,
			     const cvc_import_opts *opts, cvc_import_stats *stats)
{
	char err[1024];
	cvc_format fmt;
	cvc_status st;

	struct imp_stream *in = NULL;

	if (imp_is_stream(path)) {
		/* Read once: detection's bytes go on to the importer (stream.c). */
		if ((st = imp_stream_open(path, &in, err, sizeof err)) ||
		    (st = imp_detect_buf(path, in->pre, in->npre, &fmt, err, sizeof err)) ||
		    (fmt != CVC_FMT_KINETO && (st = imp_stream_spill(in, err, sizeof err)))) {
			imp_stream_free(in);
			return cvc_db_fail(db, st, "%s", err);
		}
		imp_stream_set_current(in);
	} else if ((st = cvc_import_detect(path, &fmt, err, sizeof err))) {
		return cvc_db_fail(db, st, "%s", err);
	}
	switch (fmt) {
	case CVC_FMT_KINETO: st = cvc_import_kineto(db, run_id, path, opts, stats); break;
	case CVC_FMT_NSYS: st = cvc_import_nsys(db, run_id, path, opts, stats); break;
	case CVC_FMT_NCCL_TESTS: st = cvc_import_nccl_tests(db, run_id, path, opts, stats); break;
	case CVC_FMT_CVCDB: st = cvc_import_cvcdb(db, run_id, path, opts, stats); break;
	case CVC_FMT_UNKNOWN:
		st = cvc_db_fail(db, CVC_ERR_FORMAT, "'%s': unrecognised format", path);
		break;
	}
	imp_stream_free(in);
	return st;
}

/* Run name when none is given: the first file's name without directories. */
static const char *default_run_name(const char *path)
{
	const char *b = strrchr(path, '/');

	if (strcmp(path, "-") == 0)
		return "stdin";
	/* Process substitution, <(cmd): the descriptor number names nothing. */
	if (strncmp(path, "/dev/fd/", 8) == 0 || strncmp(path, "/proc/self/fd/", 14) == 0)
		return "pipe";

	return b ? b + 1 : path;
}

/* Picks or creates the run, making the name unique with a numeric suffix;
 * its name into name[512]. */
static cvc_status open_run(cvc_db *db, const char *path, const cvc_import_opts *opts,
			   int64_t *run_id, char *name)
{
	cvc_run_info ri = {0};
	cvc_status st;

	if (opts && opts->run_name) {
		snprintf(name, 512, "%s", opts->run_name);
		st = cvc_db_run_find(db, opts->run_name, run_id);
		if (st != CVC_ERR_NOTFOUND)
			return st;
		ri.name = opts->run_name;
		return cvc_db_run_new(db, &ri, run_id);
	}
	snprintf(name, 512, "%s", default_run_name(path));
	for (int i = 2; cvc_db_run_find(db, name, run_id) == CVC_OK; i++) {
		if (i > 100000)
			return cvc_db_fail(db, CVC_ERR_INTERNAL, "too many runs named '%s'",
					   default_run_name(path));
		snprintf(name, 512, "%s#%d", default_run_name(path), i);
	}
	ri.name = name;
	return cvc_db_run_new(db, &ri, run_id);
}

/* ---- parallel parsing: each worker imports into a private shard db ---- */

struct job {
	const char *path;
	char shard[4200];
	const cvc_import_opts *opts;
	cvc_import_stats stats;
	cvc_status st;
	char err[1024];
};

struct pool {
	struct job *jobs;
	int n;
	int next;
	pthread_mutex_t mu;
};

static void run_job(struct job *j)
{
	cvc_db *sh = NULL;
	int64_t rid;
	cvc_run_info ri = {.name = "shard"};
	cvc_import_opts o = *j->opts;

	o.progress = NULL;
	j->st = cvc_db_open(j->shard, CVC_DB_CREATE, &sh);
	/* A shard lives for one merge and is deleted after: durability buys nothing. */
	if (!j->st)
		j->st = cvc_db_exec(sh, "PRAGMA synchronous=OFF; PRAGMA journal_mode=MEMORY;");
	if (!j->st && !(j->st = cvc_db_begin(sh)) && !(j->st = cvc_db_run_new(sh, &ri, &rid)) &&
	    !(j->st = import_one(sh, rid, j->path, &o, &j->stats)))
		j->st = cvc_db_commit(sh);
	if (j->st)
		snprintf(j->err, sizeof j->err, "%s", cvc_db_errmsg(sh));
	cvc_db_close(sh);
}

static void *worker(void *arg)
{
	struct pool *p = arg;

	for (;;) {
		int i;

		pthread_mutex_lock(&p->mu);
		i = p->next++;
		pthread_mutex_unlock(&p->mu);
		if (i >= p->n)
			return NULL;
		run_job(&p->jobs[i]);
	}
}

/*
 * With -j N, files are parsed by N threads, each into its own shard database
 * under $TMPDIR; the main thread then merges the shards in file order.  The
 * shard path is the one already used for per-node imports, so parallel and
 * distributed imports share their merge code.
 */
static cvc_status import_parallel(cvc_db *db, int64_t run_id, const char *const *paths,
				  int n, const cvc_import_opts *opts,
				  cvc_import_stats *stats)
{
	struct pool p = {0};
	pthread_t th[64];
	int nth = opts->jobs > 64 ? 64 : opts->jobs, started = 0;
	const char *dir = getenv("TMPDIR");
	cvc_status st = CVC_OK;

	if (!dir || !*dir)
		dir = "/tmp";
	p.jobs = calloc((size_t)n, sizeof *p.jobs);
	if (!p.jobs)
		return cvc_db_fail(db, CVC_ERR_NOMEM, "out of memory");
	p.n = n;
	pthread_mutex_init(&p.mu, NULL);
	for (int i = 0; i < n; i++) {
		int fd;

		p.jobs[i].path = paths[i];
		p.jobs[i].opts = opts;
		snprintf(p.jobs[i].shard, sizeof p.jobs[i].shard, "%s/cvc-shard-XXXXXX", dir);
		/* lint-out: a private shard in $TMPDIR, a name mkstemp makes */
		fd = mkstemp(p.jobs[i].shard);
		if (fd >= 0)
			cvc_tmp_add(p.jobs[i].shard);
		if (fd < 0) {
			st = cvc_db_fail(db, CVC_ERR_IO, "'%s': cannot create temporary file: %s",
					 p.jobs[i].shard, strerror(errno));
			p.jobs[i].shard[0] = '\0';
			n = i;
			goto out;
		}
		close(fd);
	}
	for (int i = 0; i < nth && i < n; i++)
		if (pthread_create(&th[i], NULL, worker, &p) == 0)
			started++;
	if (started == 0)
		worker(&p);
	for (int i = 0; i < started; i++)
		pthread_join(th[i], NULL);
	for (int i = 0; i < n; i++) {
		struct job *j = &p.jobs[i];
		cvc_import_stats ms = {0};

		if (j->st) {
			st = cvc_db_fail(db, j->st, "%s", j->err);
			goto out;
		}
		if ((st = cvc_import_cvcdb(db, run_id, j->shard, opts, &ms))) {
			/* the shard is ours, the file is the user's: name the file */
			const char *m = cvc_db_errmsg(db), *hit = strstr(m, j->shard);

			if (hit) {
				char msg[2048];

				snprintf(msg, sizeof msg, "%.*s%s%s", (int)(hit - m), m, j->path,
					 hit + strlen(j->shard));
				cvc_db_fail(db, st, "%s", msg);
			}
			goto out;
		}
		imp_stats_add(stats, &j->stats);
		imp_progress(opts, j->path, i + 1, n);
	}
out:
	for (int i = 0; i < n; i++)
		if (p.jobs[i].shard[0]) {
			cvc_db_remove_files(p.jobs[i].shard);
			cvc_tmp_forget(p.jobs[i].shard);
		}
	pthread_mutex_destroy(&p.mu);
	free(p.jobs);
	return st;
}

/* The files of one run into it, in parallel shards with opts->jobs > 1. */
static cvc_status import_run(cvc_db *db, int64_t rid, const char *const *paths, int n,
			     const cvc_import_opts *opts, cvc_import_stats *stats)
{
	cvc_status st = CVC_OK;

	if (opts->jobs > 1 && n > 1)
		return import_parallel(db, rid, paths, n, opts, stats);
	for (int i = 0; i < n && !st; i++)
		st = import_one(db, rid, paths[i], opts, stats);
	return st;
}

/* The runs a folder's files make (cvc_import_group): ids[g], names[g]
 * (512 bytes each) and why[g] (400 bytes each) filled; all in the caller's
 * transaction. */
struct groups {
	cvc_trace_ident *id;
	int *group, ng;
	const char **sub;     /* one run's paths, in the order given */
	int64_t *rid;
	char (*name)[512], (*why)[400];
};

static void groups_free(struct groups *g)
{
	free(g->id);
	free(g->group);
	free(g->sub);
	free(g->rid);
	free(g->name);
	free(g->why);
}

static cvc_status groups_make(cvc_db *db, const char *const *paths, int n, struct groups *g)
{
	char err[1024];
	cvc_status st;

	g->id = calloc((size_t)n, sizeof *g->id);
	g->group = calloc((size_t)n, sizeof *g->group);
	g->sub = calloc((size_t)n, sizeof *g->sub);
	g->rid = calloc((size_t)n, sizeof *g->rid);
	g->name = calloc((size_t)n, sizeof *g->name);
	g->why = calloc((size_t)n, sizeof *g->why);
	if (!g->id || !g->group || !g->sub || !g->rid || !g->name || !g->why)
		return cvc_db_fail(db, CVC_ERR_NOMEM, "out of memory");
	for (int i = 0; i < n; i++)
		if ((st = cvc_import_identify(db, paths[i], &g->id[i], err, sizeof err)))
			return cvc_db_fail(db, st, "%s", err);
	g->ng = cvc_import_group(g->id, n, g->group);
	if (g->ng < 0)
		return cvc_db_fail(db, CVC_ERR_NOMEM, "out of memory");
	for (int k = 0; k < g->ng; k++)
		cvc_import_group_why(g->id, g->group, n, k, g->why[k], sizeof g->why[k]);
	return CVC_OK;
}

cvc_status cvc_import_files(cvc_db *db, const char *const *paths, int n,
			    const cvc_import_opts *opts, int64_t *run_id,
			    cvc_import_stats *stats)
{
	cvc_import_opts dflt = {0};
	cvc_import_stats local = {0};
	struct groups g = {0};
	int64_t one = 0;
	char one_name[512];
	cvc_status st;

	if (!opts)
		opts = &dflt;
	if (!stats)
		stats = &local;
	memset(stats, 0, sizeof *stats);
	if (n <= 0)
		return cvc_db_fail(db, CVC_ERR_USAGE, "no files to import");
	if (opts->group && opts->run_name)
		return cvc_db_fail(db, CVC_ERR_USAGE, "a run name and grouping by metadata exclude "
				   "each other");
	/* identities first: a file that cannot be read leaves the database as it was */
	if (opts->group && (st = groups_make(db, paths, n, &g)))
		goto done;
	if ((st = cvc_db_begin(db)))
		goto done;
	if (!opts->group) {
		if ((st = open_run(db, paths[0], opts, &one, one_name)) ||
		    (st = import_run(db, one, paths, n, opts, stats)))
			goto fail;
	}
	for (int k = 0; k < g.ng; k++) {
		int m = 0;

		for (int i = 0; i < n; i++)
			if (g.group[i] == k)
				g.sub[m++] = paths[i];
		if ((st = open_run(db, g.sub[0], opts, &g.rid[k], g.name[k])) ||
		    (st = import_run(db, g.rid[k], g.sub, m, opts, stats)))
			goto fail;
	}
	stats->files = n;
	if (opts->after && (st = opts->after(db, opts->group ? g.rid[0] : one, opts->after_arg)))
		goto fail;
	if ((st = cvc_db_commit(db)))
		goto fail;
	if (run_id)
		*run_id = opts->group ? g.rid[0] : one;
	for (int k = 0; opts->on_run && k < g.ng; k++) {
		int m = 0;

		for (int i = 0; i < n; i++)
			m += g.group[i] == k;
		opts->on_run(opts->on_run_arg, g.rid[k], g.name[k], m, g.why[k]);
	}
	goto done;
fail:
	cvc_db_rollback(db);
done:
	groups_free(&g);
	return st;
}

/*
 * A generated column is computed whenever a row is read, as a view is: 20k
 * kernels over a virtual StringIds.value took 79 s to import, holding the
 * write lock (issue 36 item 8).  Nsight Systems exports and cvc databases
 * have none, and no virtual tables: both are refused, as views are.
 */
static cvc_status imp_foreign_columns(cvc_db *db, sqlite3 *src, const char *path)
{
	static const char sql[] =
		"SELECT m.name, x.name, m.sql LIKE 'CREATE VIRTUAL TABLE%' FROM sqlite_master m "
		"LEFT JOIN pragma_table_xinfo(m.name) x ON x.hidden IN (2, 3) "
		"WHERE m.type = 'table' AND (x.name IS NOT NULL OR m.sql LIKE 'CREATE VIRTUAL TABLE%') "
		"LIMIT 1";
	sqlite3_stmt *st = NULL;
	cvc_status ret = CVC_OK;
	int rc;

	if (sqlite3_prepare_v2(src, sql, -1, &st, NULL) != SQLITE_OK)
		return cvc_db_fail(db, CVC_ERR_FORMAT, "'%s': corrupt or unreadable SQLite file: %s",
				   path, sqlite3_errmsg(src));
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW && sqlite3_column_int(st, 2))
		ret = cvc_db_fail(db, CVC_ERR_FORMAT,
				  "'%s': holds a virtual table ('%.64s'): Nsight Systems exports and "
				  "cvc databases have none", path,
				  (const char *)sqlite3_column_text(st, 0));
	else if (rc == SQLITE_ROW)
		ret = cvc_db_fail(db, CVC_ERR_FORMAT,
				  "'%s': holds a generated column ('%.64s.%.64s'): Nsight Systems "
				  "exports and cvc databases have none, and cvc does not compute a "
				  "file's columns", path, (const char *)sqlite3_column_text(st, 0),
				  (const char *)sqlite3_column_text(st, 1));
	else if (rc != SQLITE_DONE)
		ret = cvc_db_fail(db, CVC_ERR_FORMAT, "'%s': corrupt or unreadable SQLite file: %s",
				  path, sqlite3_errmsg(src));
	sqlite3_finalize(st);
	return ret;
}

cvc_status imp_foreign_check(cvc_db *db, sqlite3 *src, const char *path)
{
	sqlite3_stmt *st = NULL;
	cvc_status ret = CVC_OK;
	int rc;

	/* no string or blob larger than 16 MiB (a crafted view or table of
	 * 900 MB strings is refused, not read into memory) */
	sqlite3_limit(src, SQLITE_LIMIT_LENGTH, 16 << 20);
	if (sqlite3_prepare_v2(src, "SELECT name FROM sqlite_master WHERE type = 'view' LIMIT 1",
			       -1, &st, NULL) != SQLITE_OK)
		return cvc_db_fail(db, CVC_ERR_FORMAT, "'%s': corrupt or unreadable SQLite file: %s", path,
				   sqlite3_errmsg(src));
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		ret = cvc_db_fail(db, CVC_ERR_FORMAT,
				  "'%s': holds a view ('%.64s'): Nsight Systems exports and cvc "
				  "databases have none, and cvc does not run a file's views", path,
				  (const char *)sqlite3_column_text(st, 0));
	else if (rc != SQLITE_DONE)
		ret = cvc_db_fail(db, CVC_ERR_FORMAT, "'%s': corrupt or unreadable SQLite file: %s", path,
				  sqlite3_errmsg(src));
	sqlite3_finalize(st);
	return ret ? ret : imp_foreign_columns(db, src, path);
}
