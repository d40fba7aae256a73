/*
 * group.c - which traces of a folder are one run: what each file says of
 * itself (format, rank and world size, job, host, when it started), read
 * from its head or its metadata tables only, and the runs those identities
 * make.  A folder can hold unrelated jobs (a CloverLeaf and a saxpy export
 * four months apart were once made ranks of one run, 1.1 s of "skew"
 * apart); only files whose own metadata agree share a run.
 */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <sqlite3.h>

#include "cvc/cvc_base.h"
#include "cvc/cvc_import.h"
#include "cvc/cvc_out.h"
#include "import_int.h"

/* Files of one job start within this of each other; unrelated jobs in one
 * folder were hours to months apart in the shared traces.  A reading
 * choice, said in docs/PROFILER.md, not a measured figure. */
#define SAME_JOB_NS (600LL * 1000000000LL)
/* The head of a Kineto trace read for distributedInfo and the first event
 * (PyTorch writes both before the events: byte 3303 in the shared traces). */
#define KINETO_HEAD (256u << 10)

/* First occurrence of needle in s[0..n), or NULL. */
static const char *find(const char *s, size_t n, const char *needle)
{
	size_t k = strlen(needle);

	for (size_t i = 0; i + k <= n; i++)
		if (s[i] == needle[0] && memcmp(s + i, needle, k) == 0)
			return s + i;
	return NULL;
}

/* The number after "key": in s[0..n), from "at" on; NAN when absent. */
static double json_num_after(const char *s, size_t n, const char *at, const char *key)
{
	size_t kl = strlen(key);

	for (const char *p = at; p && p + kl + 2 < s + n; p++) {
		const char *q;
		char num[40];
		size_t k = 0;
		double v;

		if (*p != '"' || strncmp(p + 1, key, kl) != 0 || p[kl + 1] != '"')
			continue;
		q = p + kl + 2;
		while (q < s + n && (*q == ' ' || *q == '\t' || *q == '\n' || *q == '\r' || *q == ':'))
			q++;
		while (q + k < s + n && k + 1 < sizeof num &&
		       (isdigit((unsigned char)q[k]) || q[k] == '.' || q[k] == '-' || q[k] == 'e' ||
			q[k] == 'E' || q[k] == '+'))
			k++;
		memcpy(num, q, k);
		num[k] = '\0';
		return k && cvc_parse_f64(num, &v) == CVC_OK ? v : NAN;
	}
	return NAN;
}

/* The string after "key": in s[0..n) from at on, into out ("" when absent). */
static void json_str_after(const char *s, size_t n, const char *at, const char *key, char *out,
			   size_t len)
{
	char pat[64];
	const char *p, *q, *e;

	out[0] = '\0';
	snprintf(pat, sizeof pat, "\"%s\"", key);
	p = at ? find(at, n - (size_t)(at - s), pat) : NULL;
	if (!p)
		return;
	q = p + strlen(pat);
	while (q < s + n && (*q == ' ' || *q == '\t' || *q == '\n' || *q == '\r' || *q == ':'))
		q++;
	if (q >= s + n || *q != '"')
		return;
	e = memchr(q + 1, '"', (size_t)(s + n - q - 1));
	if (e)
		snprintf(out, len, "%.*s", (int)(e - q - 1), q + 1);
}

/* Kineto: distributedInfo's rank and world size, the first event's ts,
 * the first device's name. */
static cvc_status ident_kineto(const char *path, cvc_trace_ident *id, char *err, size_t errlen)
{
	char *buf = malloc(KINETO_HEAD + 1);
	const char *di, *ev, *end;
	size_t n = 0;
	int gz;
	cvc_status st;

	if (!buf)
		return cvc_errf(err, errlen, CVC_ERR_NOMEM, "out of memory");
	st = imp_peek(path, (unsigned char *)buf, KINETO_HEAD, &n, &gz, err, errlen);
	if (st)
		goto out;
	buf[n] = '\0';
	di = find(buf, n, "\"distributedInfo\"");
	ev = find(buf, n, "\"traceEvents\"");
	json_str_after(buf, n, find(buf, n, "\"deviceProperties\""), "name", id->gpu,
		       sizeof id->gpu);
	if (di) {
		end = memchr(di, '}', n - (size_t)(di - buf));
		if (end) {
			double r = json_num_after(buf, (size_t)(end - buf), di, "rank");
			double w = json_num_after(buf, (size_t)(end - buf), di, "world_size");

			id->rank = isfinite(r) && r >= 0 && r < 1e7 ? (int)r : -1;
			id->world = isfinite(w) && w >= 1 && w < 1e7 ? (int)w : -1;
		}
	}
	if (ev) {
		double ts = json_num_after(buf, n, ev, "ts");

		/* microseconds since the epoch (older PyTorch) compare across
		 * files; a relative clock (baseTimeNanoseconds at the end) does not */
		if (isfinite(ts) && ts > 1e15 && ts < 1e17)
			id->start_ns = (int64_t)(ts * 1e3);
	}
out:
	free(buf);
	return st;
}

/* KEY's value in nsys's DeviceEnvironment ("A=1;KEY=v;..."), into out. */
static int env_get(const char *env, const char *key, char *out, size_t len)
{
	size_t kl = strlen(key);

	for (const char *p = env; p && *p;) {
		const char *semi = strchr(p, ';');
		size_t l = semi ? (size_t)(semi - p) : strlen(p);

		if (l > kl && strncmp(p, key, kl) == 0 && p[kl] == '=') {
			snprintf(out, len, "%.*s", (int)(l - kl - 1), p + kl + 1);
			return 1;
		}
		p = semi ? semi + 1 : NULL;
	}
	return 0;
}

/* The rank, world size and job id the launcher left in the environment. */
void imp_launcher_env(const char *env, cvc_trace_ident *id)
{
	static const char *const ranks[] = {"OMPI_COMM_WORLD_RANK", "PMI_RANK", "SLURM_PROCID",
					    "RANK"};
	static const char *const worlds[] = {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "SLURM_NTASKS",
					     "WORLD_SIZE"};
	static const char *const jobs[] = {"SLURM_JOB_ID", "PMI_JOBID", "PBS_JOBID", "LSB_JOBID"};
	char v[64];
	int64_t x;

	for (size_t i = 0; i < 4; i++)
		if (id->rank < 0 && env_get(env, ranks[i], v, sizeof v) &&
		    cvc_parse_i64(v, 0, 1 << 24, &x) == CVC_OK)
			id->rank = (int)x;
	for (size_t i = 0; i < 4; i++)
		if (id->world < 0 && env_get(env, worlds[i], v, sizeof v) &&
		    cvc_parse_i64(v, 1, 1 << 24, &x) == CVC_OK)
			id->world = (int)x;
	for (size_t i = 0; i < 4 && !id->job[0]; i++)
		if (env_get(env, jobs[i], v, sizeof v))
			snprintf(id->job, sizeof id->job, "%s", v);
}

/* An SQLite file (an Nsight Systems export or a cvc shard) opened read-only;
 * a gzip one through a private temporary copy, named in *tmp. */
static cvc_status sq_open(cvc_db *db, const char *path, sqlite3 **sq, char **tmp, char *err,
			  size_t errlen)
{
	cvc_status st = imp_gunzip_temp(db, path, tmp);

	*sq = NULL;
	if (st)
		return cvc_errf(err, errlen, st, "%s", cvc_db_errmsg(db));
	if (sqlite3_open_v2(*tmp ? *tmp : path, sq, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK)
		return cvc_errf(err, errlen, CVC_ERR_FORMAT, "'%s': corrupt or unreadable SQLite file",
				path);
	sqlite3_limit(*sq, SQLITE_LIMIT_LENGTH, 16 << 20);
	return CVC_OK;
}

static void sq_close(sqlite3 *sq, char *tmp)
{
	sqlite3_close(sq);
	if (tmp) {
		unlink(tmp);
		cvc_tmp_forget(tmp);
		free(tmp);
	}
}

/* nsys: session start, host, and what the launcher's environment says. */
static cvc_status ident_nsys(cvc_db *db, const char *path, cvc_trace_ident *id, char *err,
			     size_t errlen)
{
	sqlite3 *sq = NULL;
	char *tmp = NULL, v[64], *env = NULL;
	sqlite3_stmt *st = NULL;
	cvc_status rc = sq_open(db, path, &sq, &tmp, err, errlen);
	int64_t x;

	if (rc)
		goto out;
	imp_sq_text(sq, "SELECT utcEpochNs FROM TARGET_INFO_SESSION_START_TIME", v, sizeof v);
	if (cvc_parse_i64(v, 1, INT64_MAX, &x) == CVC_OK)
		id->start_ns = x;
	imp_sq_text(sq, "SELECT value FROM TARGET_INFO_SYSTEM_ENV WHERE name = 'Hostname'", id->host,
		sizeof id->host);
	imp_sq_text(sq, "SELECT name FROM TARGET_INFO_GPU ORDER BY id LIMIT 1", id->gpu, sizeof id->gpu);
	if (sqlite3_prepare_v2(sq, "SELECT value FROM TARGET_INFO_SYSTEM_ENV WHERE name = "
			       "'DeviceEnvironment'", -1, &st, NULL) == SQLITE_OK &&
	    sqlite3_step(st) == SQLITE_ROW && sqlite3_column_text(st, 0)) {
		env = strdup((const char *)sqlite3_column_text(st, 0));
		if (env)
			imp_launcher_env(env, id);
	}
out:
	free(env);
	sqlite3_finalize(st);
	sq_close(sq, tmp);
	return rc;
}

/* A cvc shard: the profile's run name (the job), world size, host, start. */
static cvc_status ident_cvcdb(cvc_db *db, const char *path, cvc_trace_ident *id, char *err,
			      size_t errlen)
{
	sqlite3 *sq = NULL;
	char *tmp = NULL, v[64];
	cvc_status rc = sq_open(db, path, &sq, &tmp, err, errlen);
	int64_t x;

	if (rc)
		goto out;
	imp_sq_text(sq, "SELECT name FROM runs ORDER BY id LIMIT 1", id->job, sizeof id->job);
	imp_sq_text(sq, "SELECT world_size FROM runs ORDER BY id LIMIT 1", v, sizeof v);
	if (cvc_parse_i64(v, 1, 1 << 24, &x) == CVC_OK)
		id->world = (int)x;
	imp_sq_text(sq, "SELECT host FROM ranks ORDER BY rank LIMIT 1", id->host, sizeof id->host);
	imp_sq_text(sq, "SELECT gpu_model FROM runs ORDER BY id LIMIT 1", id->gpu, sizeof id->gpu);
	imp_sq_text(sq, "SELECT value FROM run_meta WHERE key = 'clock_start_realtime_ns' LIMIT 1", v,
		sizeof v);
	if (cvc_parse_i64(v, 1, INT64_MAX, &x) == CVC_OK)
		id->start_ns = x;
out:
	sq_close(sq, tmp);
	return rc;
}

cvc_status cvc_import_identify(cvc_db *db, const char *path, cvc_trace_ident *id, char *err,
			       size_t errlen)
{
	cvc_status st;

	memset(id, 0, sizeof *id);
	id->rank = id->world = -1;
	if ((st = cvc_import_detect(path, &id->fmt, err, errlen)))
		return st;
	switch (id->fmt) {
	case CVC_FMT_KINETO: return ident_kineto(path, id, err, errlen);
	case CVC_FMT_NSYS: return ident_nsys(db, path, id, err, errlen);
	case CVC_FMT_CVCDB: return ident_cvcdb(db, path, id, err, errlen);
	case CVC_FMT_NCCL_TESTS:
	case CVC_FMT_UNKNOWN: break;
	}
	return CVC_OK;
}

/* Whether two starts are of one job: a file with a wall-clock start and one
 * without come from different tools (or versions) and so jobs; two without
 * say nothing against it. */
static int close_in_time(const cvc_trace_ident *a, const cvc_trace_ident *b)
{
	if (!a->start_ns || !b->start_ns)
		return !a->start_ns && !b->start_ns;
	return llabs(a->start_ns - b->start_ns) <= SAME_JOB_NS;
}

/* Whether file j may join the run whose files so far are those i with
 * group[i] == g (first: its first file). */
static int joins(const cvc_trace_ident *id, const int *group, int n, int g, int first, int j)
{
	const cvc_trace_ident *a = &id[first], *b = &id[j];
	int size = 0;

	if (a->fmt != b->fmt)
		return 0;
	switch (b->fmt) {
	case CVC_FMT_NCCL_TESTS:
		return 1; /* benchmark logs: rows of a table, no timeline to confuse */
	case CVC_FMT_KINETO:
		/* one process's trace without distributedInfo is a job of its own */
		if (a->world < 1 || b->world != a->world)
			return 0;
		break;
	case CVC_FMT_NSYS:
	case CVC_FMT_CVCDB:
		if (strcmp(a->job, b->job) != 0 || a->world != b->world)
			return 0;
		break;
	case CVC_FMT_UNKNOWN:
		return 0;
	}
	if (a->gpu[0] && b->gpu[0] && strcmp(a->gpu, b->gpu) != 0)
		return 0;
	/* a job id or a profile's run name says it; else the clocks must agree
	   (a profile's processes may start far apart: a late evaluation job) */
	if (!(a->job[0] && b->fmt != CVC_FMT_KINETO) && !close_in_time(a, b))
		return 0;
	for (int i = 0; i < n; i++) {
		if (group[i] != g)
			continue;
		size++;
		if (b->rank >= 0 && id[i].rank == b->rank)
			return 0; /* a rank twice: another job of the same shape */
	}
	return b->world < 1 || size < b->world;
}

int cvc_import_group(const cvc_trace_ident *id, int n, int *group)
{
	int ng = 0, *first = malloc((size_t)(n > 0 ? n : 1) * sizeof *first);

	if (!first)
		return -1;
	for (int j = 0; j < n; j++) {
		int g;

		group[j] = -1;
		for (g = 0; g < ng && !joins(id, group, j, g, first[g], j); g++)
			;
		if (g == ng)
			first[ng++] = j;
		group[j] = g;
	}
	free(first);
	return ng;
}

/* "2023-10-04 04:13:59 UTC" */
static void utc(int64_t ns, char *buf, size_t len)
{
	time_t t = (time_t)(ns / 1000000000LL);
	struct tm tm;

	if (!gmtime_r(&t, &tm) || !strftime(buf, len, "%Y-%m-%d %H:%M:%S UTC", &tm))
		snprintf(buf, len, "%lld ns", (long long)ns);
}

void cvc_import_group_why(const cvc_trace_ident *id, const int *group, int n, int g, char *buf,
			  size_t len)
{
	int k = 0, first = -1, lo = -1, hi = -1;
	char when[48] = "", more[300] = "";
	size_t m = 0;

	for (int i = 0; i < n; i++) {
		if (group[i] != g)
			continue;
		if (first < 0)
			first = i;
		k++;
		if (id[i].rank >= 0) {
			lo = lo < 0 || id[i].rank < lo ? id[i].rank : lo;
			hi = id[i].rank > hi ? id[i].rank : hi;
		}
	}
	if (first < 0) {
		snprintf(buf, len, "no files");
		return;
	}
	if (id[first].start_ns)
		utc(id[first].start_ns, when, sizeof when);
#define MORE(...)                                                                     \
	do {                                                                          \
		int w_ = snprintf(more + m, sizeof more - m, __VA_ARGS__);           \
		if (w_ > 0 && (size_t)w_ < sizeof more - m)                           \
			m += (size_t)w_;                                              \
	} while (0)
	if (lo >= 0)
		MORE(lo == hi ? ", rank %d" : ", ranks %d-%d", lo, hi);
	if (id[first].world > 0)
		MORE(" of world size %d", id[first].world);
	if (id[first].job[0])
		MORE(", %s '%s'", id[first].fmt == CVC_FMT_CVCDB ? "profile run" : "job",
		     id[first].job);
	if (id[first].gpu[0])
		MORE(", %s", id[first].gpu);
	if (id[first].host[0])
		MORE(", host %s", id[first].host);
	if (*when)
		MORE(", started %s", when);
#undef MORE
	switch (id[first].fmt) {
	case CVC_FMT_NCCL_TESTS:
		snprintf(buf, len, "%d nccl-tests log%s (benchmarks: one run)", k, k == 1 ? "" : "s");
		break;
	case CVC_FMT_KINETO:
		if (id[first].world < 1)
			snprintf(buf, len, "1 Kineto trace without distributedInfo (a job of its "
				 "own)%s", more);
		else
			snprintf(buf, len, "%d Kineto trace%s%s", k, k == 1 ? "" : "s", more);
		break;
	case CVC_FMT_NSYS:
		snprintf(buf, len, "%d Nsight Systems export%s%s", k, k == 1 ? "" : "s", more);
		break;
	case CVC_FMT_CVCDB:
		snprintf(buf, len, "%d cvc database%s%s", k, k == 1 ? "" : "s", more);
		break;
	case CVC_FMT_UNKNOWN:
		snprintf(buf, len, "%d file%s", k, k == 1 ? "" : "s");
		break;
	}
}
