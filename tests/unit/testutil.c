/* testutil.c - see testutil.h. */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <criterion/criterion.h>
#include <sqlite3.h>
#include <zlib.h>

#include "cvc/cvc_db.h"
#include "cvc/cvc_import.h"
#include "cvc/cvc_classify.h"
#include "cvc/cvc_profile.h"
#include "cvc/cvc_project.h"
#include "testutil.h"

const char *tu_shared(const char *rel)
{
	static char buf[4096];

	snprintf(buf, sizeof buf, "%s/%s", CVC_SHARED_DIR, rel);
	if (access(buf, R_OK) != 0)
		cr_skip_test("'%s' is absent: this test needs ../shared beside the repository",
			     buf);
	return buf;
}

/* The directories this test process made, removed when it exits: a run
 * of the suite once left 1.5 GB behind it, and every rerun as much again
 * (a 200 MB database among them), until the disk filled. */
static char *made[256];
static int nmade;

/* Removes path and everything below it, directories made writable first
 * (the read-only-folder tests leave some 0555); errors are ignored: this is
 * scratch space, and one file that will not go must not fail a test. */
static void remove_tree(const char *path)
{
	struct stat st;
	DIR *d;
	struct dirent *e;

	if (lstat(path, &st) != 0)
		return;
	if (!S_ISDIR(st.st_mode)) {
		unlink(path);
		return;
	}
	chmod(path, 0700);
	if ((d = opendir(path))) {
		while ((e = readdir(d))) {
			char sub[4200];
			int n;

			if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
				continue;
			n = snprintf(sub, sizeof sub, "%s/%s", path, e->d_name);
			if (n > 0 && (size_t)n < sizeof sub)
				remove_tree(sub);
		}
		closedir(d);
	}
	rmdir(path);
}

/* CVC_TEST_KEEP=1 keeps them, to look at what a test wrote. */
static void remove_made(void)
{
	const char *keep = getenv("CVC_TEST_KEEP");

	for (int i = 0; i < nmade; i++) {
		if (!keep || !*keep || strcmp(keep, "0") == 0)
			remove_tree(made[i]);
		free(made[i]);
	}
	nmade = 0;
}

const char *tu_tmpdir(void)
{
	static char buf[4096];
	const char *base = getenv("CVC_TEST_TMP");

	if (!base || !*base)
		base = "/tmp";
	mkdir(base, 0755);
	snprintf(buf, sizeof buf, "%s/cvc-test-XXXXXX", base);
	if (!mkdtemp(buf))
		cr_assert_fail("mkdtemp(%s): %s", buf, strerror(errno));
	if (nmade == 0)
		atexit(remove_made);
	if (nmade < (int)(sizeof made / sizeof made[0]) && (made[nmade] = strdup(buf)))
		nmade++;
	return buf;
}

const char *tu_path(const char *dir, const char *name)
{
	static char bufs[8][4096];
	static int next;
	char *b = bufs[next++ & 7];
	int n = snprintf(b, 4096, "%s/%s", dir, name);

	if (n < 0 || n >= 4096)
		cr_assert_fail("path too long: %s/%s", dir, name);
	return b;
}

struct cvc_spool *tu_spool_begin(char *spool, char *db)
{
	static const char *const strs[] = {"host", "run", "tool"};
	struct cvc_spool_proc proc = {0, 1, 4242, 1, 2, 3, 0};
	char dir[4096];
	cvc_spool *sp = NULL;

	snprintf(dir, sizeof dir, "%s", tu_tmpdir());
	snprintf(spool, 4200, "%s", tu_path(dir, "p.spool"));
	snprintf(db, 4200, "%s", tu_path(dir, "p.db"));
	cr_assert_eq(cvc_spool_open(spool, 1u << 16, &sp), CVC_OK);
	for (unsigned i = 0; i < sizeof strs / sizeof strs[0]; i++)
		cr_assert_eq(cvc_spool_put_str(sp, i + 1, strs[i], strlen(strs[i])), CVC_OK);
	cr_assert_eq(cvc_spool_put(sp, CVC_SPOOL_PROC, &proc, sizeof proc), CVC_OK);
	return sp;
}

int tu_write(const char *path, const char *text, size_t len)
{
	FILE *f = fopen(path, "wb");
	int ok;

	if (!f)
		return -1;
	ok = fwrite(text, 1, len, f) == len;
	return (fclose(f) == 0 && ok) ? 0 : -1;
}

char *tu_read(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	long size;
	size_t n = 0;

	if (!f)
		return NULL;
	/* Test inputs are regular files: their size is known before reading. */
	if (fseek(f, 0, SEEK_END) == 0 && (size = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0 &&
	    (buf = malloc((size_t)size + 1)) != NULL)
		n = fread(buf, 1, (size_t)size, f);
	fclose(f);
	if (!buf)
		return NULL;
	buf[n] = '\0';
	if (len)
		*len = n;
	return buf;
}

int tu_run(const char *cmdline, char **out, char **err)
{
	const char *dir = tu_tmpdir();
	char cmd[16384];
	char ofile[4200], efile[4200];
	int rc;

	snprintf(ofile, sizeof ofile, "%s/stdout", dir);
	snprintf(efile, sizeof efile, "%s/stderr", dir);
	snprintf(cmd, sizeof cmd, "(%s) >'%s' 2>'%s' </dev/null", cmdline, ofile, efile);
	rc = system(cmd);
	if (out)
		*out = tu_read(ofile, NULL);
	if (err)
		*err = tu_read(efile, NULL);
	if (rc == -1)
		return -1;
	if (WIFEXITED(rc))
		return WEXITSTATUS(rc);
	return 128 + WTERMSIG(rc);
}

int tu_cvc(const char *args, char **out, char **err)
{
	char cmd[16384];

	snprintf(cmd, sizeof cmd, "'%s' %s", CVC_TOOL, args);
	return tu_run(cmd, out, err);
}

const char *tu_gunzip(const char *gz, const char *dir)
{
	static char buf[4096];
	const char *base = strrchr(gz, '/');
	gzFile in;
	FILE *out;
	char chunk[65536];
	int n;

	base = base ? base + 1 : gz;
	snprintf(buf, sizeof buf, "%s/%s", dir, base);
	if (strlen(buf) > 3 && strcmp(buf + strlen(buf) - 3, ".gz") == 0)
		buf[strlen(buf) - 3] = '\0';
	in = gzopen(gz, "rb");
	cr_assert(in, "gzopen %s", gz);
	out = fopen(buf, "wb");
	cr_assert(out, "fopen %s", buf);
	while ((n = gzread(in, chunk, sizeof chunk)) > 0)
		cr_assert(fwrite(chunk, 1, (size_t)n, out) == (size_t)n);
	gzclose(in);
	cr_assert(fclose(out) == 0);
	return buf;
}

char *tu_next_line(char **p)
{
	char *s = *p, *nl;

	if (!s || !*s)
		return NULL;
	nl = strchr(s, '\n');
	if (nl) {
		*nl = '\0';
		*p = nl + 1;
	} else {
		*p = s + strlen(s);
	}
	return s;
}

int64_t tu_sq_int(sqlite3 *sq, const char *sql)
{
	sqlite3_stmt *st = NULL;
	int64_t n = -1;

	cr_assert(sqlite3_prepare_v2(sq, sql, -1, &st, NULL) == SQLITE_OK, "%s: %s", sql,
		  sqlite3_errmsg(sq));
	if (sqlite3_step(st) == SQLITE_ROW)
		n = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return n;
}

char *tu_sq_text(sqlite3 *sq, const char *sql, char *buf, size_t cap)
{
	sqlite3_stmt *st = NULL;

	buf[0] = '\0';
	cr_assert(sqlite3_prepare_v2(sq, sql, -1, &st, NULL) == SQLITE_OK, "%s: %s", sql,
		  sqlite3_errmsg(sq));
	if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_text(st, 0))
		snprintf(buf, cap, "%s", (const char *)sqlite3_column_text(st, 0));
	sqlite3_finalize(st);
	return buf;
}

int64_t tu_db_int(cvc_db *db, const char *sql)
{
	return tu_sq_int(cvc_db_sqlite(db), sql);
}

char *tu_db_text(cvc_db *db, const char *sql, char *buf, size_t cap)
{
	return tu_sq_text(cvc_db_sqlite(db), sql, buf, cap);
}

void tu_expect_rolled_back(cvc_db *db, const char *path, const char *want, const char *tables)
{
	char full[8400], t[64], sql[128];
	const char *errmsg = cvc_db_errmsg(db);

	snprintf(full, sizeof full, "'%s': %s", path, want);
	cr_assert_str_eq(errmsg, full, "message '%s', want '%s'", errmsg, full);
	for (const char *p = tables; *p;) {
		size_t n = strcspn(p, " ");

		cr_assert(n > 0 && n < sizeof t, "bad table list '%s'", tables);
		memcpy(t, p, n);
		t[n] = '\0';
		snprintf(sql, sizeof sql, "SELECT count(*) FROM %s", t);
		cr_assert_eq(tu_db_int(db, sql), 0, "%s: rolled back", t);
		p += n + strspn(p + n, " ");
	}
}

const char *const tu_dlrm_files[8] = {
	"worker0_step_12.1694128201545.pt.trace.json.gz",
	"worker1_step_12.1694128201556.pt.trace.json.gz",
	"worker2_step_12.1694128201554.pt.trace.json.gz",
	"worker3_step_12.1694128201557.pt.trace.json.gz",
	"worker4_step_12.1694128201547.pt.trace.json.gz",
	"worker5_step_12.1694128201549.pt.trace.json.gz",
	"worker6_step_12.1694128201553.pt.trace.json.gz",
	"worker7_step_12.1694128201553.pt.trace.json.gz",
};

void tu_dlrm_paths(char *paths[8])
{
	char rel[256];

	for (int i = 0; i < 8; i++) {
		snprintf(rel, sizeof rel, TU_DLRM_DIR "%s", tu_dlrm_files[i]);
		paths[i] = strdup(tu_shared(rel));
		cr_assert(paths[i]);
	}
}

sqlite3_stmt *tu_db_prepare(cvc_db *db, const char *sql)
{
	sqlite3_stmt *st = NULL;

	cr_assert_eq(sqlite3_prepare_v2(cvc_db_sqlite(db), sql, -1, &st, NULL), SQLITE_OK,
		     "%s: %s", sql, sqlite3_errmsg(cvc_db_sqlite(db)));
	return st;
}

size_t tu_count_lines(const char *s)
{
	size_t n = 0;

	for (; s && *s; s++)
		n += *s == '\n';
	return n;
}

const struct cvc_import_opts *tu_classifying(void)
{
	static cvc_import_opts o = {.after = cvc_classify_after_import};

	return &o;
}

cvc_db *tu_import(const char *path, const char *dbname)
{
	char *t = strdup(path), *dbpath = strdup(tu_path(tu_tmpdir(), dbname));
	const char *paths[1] = {t};
	cvc_db *db = NULL;

	cr_assert(t && dbpath);
	cr_assert_eq(cvc_db_open(dbpath, CVC_DB_CREATE, &db), CVC_OK);
	cr_assert_eq(cvc_import_files(db, paths, 1, tu_classifying(), NULL, NULL), CVC_OK, "%s",
		     cvc_db_errmsg(db));
	free(t);
	free(dbpath);
	return db;
}

void tu_scenario(struct cvc_proj_scenario *sc, const char *gpu, int gpus, int tp, int pp)
{
	cvc_proj_scenario_default(sc);
	sc->gpu = gpu;
	sc->gpus = gpus;
	sc->tp = tp;
	sc->pp = pp;
}

struct first_of {
	cvc_proj_scenario sc;
	cvc_proj_result r;
	int n;
};

static int first_cb(void *user, const cvc_proj_scenario *sc, const cvc_proj_result *r)
{
	struct first_of *f = user;

	if (f->n++ == 0) {
		f->sc = *sc;
		f->r = *r;
	}
	return 0;
}

/* Runs the parsed or loaded study st with the spec-sheet models, then
 * frees it. */
static void study_run(cvc_proj_study *st, int flags, cvc_proj_cb cb, void *user)
{
	cvc_proj_ctx *ctx = NULL;

	cr_assert_eq(cvc_proj_ctx_new(NULL, &ctx), CVC_OK);
	cr_assert_eq(cvc_proj_study_run(st, ctx, flags, cb, user, NULL), CVC_OK, "%s",
		     cvc_proj_study_errmsg(st));
	cvc_proj_ctx_free(ctx);
	cvc_proj_study_free(st);
}

void tu_study_run(const char *name, const char *yaml, int flags, cvc_proj_cb cb, void *user)
{
	cvc_proj_study *st = NULL;

	cr_assert_eq(cvc_proj_study_parse(name, yaml, strlen(yaml), &st), CVC_OK, "%s",
		     cvc_proj_study_errmsg(st));
	study_run(st, flags, cb, user);
}

void tu_study_file_run(const char *path, int flags, cvc_proj_cb cb, void *user)
{
	cvc_proj_study *st = NULL;

	cr_assert_eq(cvc_proj_study_load(path, &st), CVC_OK, "%s: %s", path,
		     cvc_proj_study_errmsg(st));
	study_run(st, flags, cb, user);
}

int tu_proj_first(const char *yaml, struct cvc_proj_scenario *sc, struct cvc_proj_result *r)
{
	struct first_of f;

	memset(&f, 0, sizeof f);
	tu_study_run("t.yaml", yaml, CVC_PROJ_NO_MARGINAL, first_cb, &f);
	if (sc)
		*sc = f.sc;
	if (r)
		*r = f.r;
	return f.n;
}

void tu_proj_pair(const char *fmt, const char *a, const char *b, struct cvc_proj_result *r)
{
	for (int i = 0; i < 2; i++) {
		char y[4096];

		cr_assert_lt(snprintf(y, sizeof y, fmt, i ? b : a), (int)sizeof y);
		cr_assert_eq(tu_proj_first(y, NULL, &r[i]), 1, "%s", y);
		cr_assert(r[i].valid, "%s: %s", y, r[i].reason);
	}
}

const char *tu_chromium(void)
{
	static const char *const cands[] = {"/usr/bin/chromium", "/usr/bin/chromium-browser",
					    "/usr/bin/google-chrome"};

	for (size_t i = 0; i < sizeof cands / sizeof cands[0]; i++)
		if (access(cands[i], X_OK) == 0)
			return cands[i];
	return NULL;
}

char *tu_validate(const char *path, const struct cvc_proj_validate_opts *opts,
		  struct cvc_proj_validation *v, int want)
{
	cvc_proj_ctx *ctx = NULL;
	char err[512] = "";
	char *buf = NULL;
	size_t len = 0;
	FILE *mem = open_memstream(&buf, &len);

	cr_assert_not_null(mem);
	cr_assert_eq(cvc_proj_ctx_new(NULL, &ctx), CVC_OK);
	cr_assert_eq((int)cvc_proj_validate(path, ctx, opts, mem, v, err, sizeof err), want, "%s: %s",
		     path, err);
	fclose(mem);
	cvc_proj_ctx_free(ctx);
	return buf;
}

const char *tu_copy_line(const char *p, char *line, size_t len)
{
	const char *e = strchr(p, '\n');
	size_t l = e ? (size_t)(e - p) : strlen(p);

	if (l >= len)
		l = len - 1;
	memcpy(line, p, l);
	line[l] = 0;
	return line;
}

const char *tu_line_with(const char *out, const char *key, char *line, size_t len)
{
	for (const char *p = strchr(out, '\n'); p && p[1]; p = strchr(p + 1, '\n'))
		if (strstr(tu_copy_line(p + 1, line, len), key))
			return line;
	return NULL;
}

double tu_csv_num(const char *line, int n)
{
	for (int i = 0; i < n && line; i++) {
		line = strchr(line, ',');
		line = line ? line + 1 : NULL;
	}
	cr_assert(line, "fewer than %d fields", n + 1);
	return strtod(line, NULL);
}

char *tu_validate_text(const char *text, const struct cvc_proj_validate_opts *opts,
		       struct cvc_proj_validation *v, int want)
{
	const char *path = tu_path(tu_tmpdir(), "m.csv");

	cr_assert_eq(tu_write(path, text, strlen(text)), 0);
	return tu_validate(path, opts, v, want);
}

void tu_fit_largest_third(int64_t *sz, double *tm, size_t n, double *a, double *b)
{
	double sw = 0, sx = 0, sy = 0, sxx = 0, sxy = 0;

	/* insertion sort: a few dozen rows */
	for (size_t i = 1; i < n; i++)
		for (size_t j = i; j > 0 && sz[j - 1] > sz[j]; j--) {
			int64_t ts = sz[j];
			double tt = tm[j];

			sz[j] = sz[j - 1], tm[j] = tm[j - 1], sz[j - 1] = ts, tm[j - 1] = tt;
		}
	for (size_t i = n - n / 3; i < n; i++) {
		double w = 1.0 / (tm[i] * tm[i]), x = (double)sz[i];

		sw += w, sx += w * x, sy += w * tm[i], sxx += w * x * x, sxy += w * x * tm[i];
	}
	*b = (sw * sxy - sx * sy) / (sw * sxx - sx * sx);
	*a = (sy - *b * sx) / sw;
}

/* The cells of one CSV record of text (validate's output), in place:
 * f[0..max), returns the count; *p moves past the record. */
size_t tu_record(char **p, char **f, size_t max)
{
	size_t n = 0;
	char *s = *p, *w;

	if (!*s)
		return 0;
	while (n < max) {
		f[n++] = w = s;
		if (*s == '"') {
			for (s++;; s++) {
				if (!*s)
					break;
				if (*s == '"' && s[1] == '"') {
					*w++ = '"';
					s++;
				} else if (*s == '"') {
					s++;
					break;
				} else {
					*w++ = *s;
				}
			}
		} else {
			while (*s && *s != ',' && *s != '\n')
				*w++ = *s++;
		}
		if (*s == ',') {
			*w = 0;
			s++;
			continue;
		}
		if (*s == '\n')
			s++;
		*w = 0;
		break;
	}
	*p = s;
	return n;
}

int tu_col(char **h, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(h[i], name))
			return (int)i;
	cr_assert_fail("no column %s", name);
	return -1;
}

/* The next output row's cells into f, which must be as many as the
 * header's nh (row is 0-based, for the message). */
void tu_next_row(char **p, char **f, size_t nh, size_t row)
{
	size_t n = tu_record(p, f, 64);

	cr_assert_eq(n, nh, "row %zu", row + 1);
}

/* The assumed cell of a row (0-based) holds want and, when not is given,
 * does not hold it. */
void tu_expect_said(const char *assumed, size_t row, const char *want, const char *not)
{
	cr_expect(strstr(assumed, want) != NULL, "row %zu: want '%s' in: %s", row + 1, want,
		  assumed);
	if (not)
		cr_expect(strstr(assumed, not) == NULL, "row %zu: '%s' in: %s", row + 1, not,
			  assumed);
}

/*
 * Validates text's n rows, all of them projected: the assumed cell of row
 * i holds each of want[i] (up to 3, NULL-ended), or does not where the
 * phrase starts with '!'; pred (may be NULL) gets each row's projection.
 */
void tu_rows_said(const char *text, const char *const (*want)[3], size_t n,
		      double *pred)
{
	cvc_proj_validation v;
	char *out = tu_validate_text(text, NULL, &v, CVC_OK), *p = out, *h[64], *f[64];
	size_t nh = tu_record(&p, h, 64);
	int ca = tu_col(h, nh, "assumed"), cp = tu_col(h, nh, "predicted_tokens_per_s_per_gpu");

	for (size_t i = 0; i < n; i++) {
		tu_next_row(&p, f, nh, i);
		for (int k = 0; k < 3 && want[i][k]; k++)
			if (want[i][k][0] == '!')
				cr_expect(strstr(f[ca], want[i][k] + 1) == NULL, "row %zu: '%s' in: %s",
					  i + 1, want[i][k] + 1, f[ca]);
			else
				tu_expect_said(f[ca], i, want[i][k], NULL);
		if (pred)
			pred[i] = strtod(f[cp], NULL);
	}
	cr_expect_eq(v.all.expressible, (int)n);
	free(out);
	cvc_proj_validation_release(&v);
}
