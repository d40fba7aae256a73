/*
 * classify.c - kernel name -> operator class by an ordered list of PCRE2
 * rules (format: analysis/rules/default.rules), and the labelling of a
 * database's kernel names with them.
 *
 * Every rule is compiled (and JIT-compiled where the platform allows) once
 * at load; a cvc_rules is immutable afterwards, so matching only needs its
 * own pcre2_match_data, created per call: that is what makes
 * cvc_rules_match() safe from several threads at once.
 */
#define PCRE2_CODE_UNIT_WIDTH 8

#include <ctype.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pcre2.h>
#include <sqlite3.h>

#include "cvc/cvc_base.h"
#include "cvc/cvc_classify.h"
#include "cvc/cvc_csv.h"

extern const char cvc_default_rules[];
extern const size_t cvc_default_rules_len;

/* Caps on a rule file: it is user input, so it cannot make us eat memory. */
#define RULES_MAX_BYTES (4u << 20)
#define RULES_MAX_LINE 8192
#define RULES_MAX_RULES 4096
/* Backtracking budget per rule and name: a pathological user regex on a
 * 10 kB template name gives up instead of spinning. */
#define RULES_MATCH_LIMIT 1000000u
#define RULES_DEPTH_LIMIT 10000u

static const char *const class_names[CVC_CLS_COUNT] = {
	[CVC_CLS_OTHER] = "other",
	[CVC_CLS_GEMM] = "gemm",
	[CVC_CLS_ATTENTION] = "attention",
	[CVC_CLS_CONV] = "conv",
	[CVC_CLS_NORM] = "norm",
	[CVC_CLS_SOFTMAX] = "softmax",
	[CVC_CLS_ELEMENTWISE] = "elementwise",
	[CVC_CLS_REDUCTION] = "reduction",
	[CVC_CLS_OPTIMIZER] = "optimizer",
	[CVC_CLS_EMBEDDING] = "embedding",
	[CVC_CLS_COPY] = "copy",
	[CVC_CLS_ALLREDUCE] = "allreduce",
	[CVC_CLS_ALLGATHER] = "allgather",
	[CVC_CLS_REDUCESCATTER] = "reducescatter",
	[CVC_CLS_BROADCAST] = "broadcast",
	[CVC_CLS_REDUCE] = "reduce",
	[CVC_CLS_SENDRECV] = "sendrecv",
	[CVC_CLS_ALLTOALL] = "alltoall",
	[CVC_CLS_OTHER_COMM] = "other-comm",
};

/* The captures a rule may fill, in cvc_class_match order. */
enum { F_COLL, F_ALGO, F_PROTO, F_DTYPE, F_COUNT };
static const char *const field_names[F_COUNT] = {"coll", "algo", "proto", "dtype"};
/* Groups per field a rule may name (coll, coll2, ... or duplicates). */
#define MAX_FIELD_GROUPS 8

struct rule {
	pcre2_code *re;
	cvc_op_class cls;
	int derive;   /* class `comm`: the class follows from the coll capture */
	int line;
	int shipped;  /* from the shipped default.rules (else the user's file) */
	int ngroups[F_COUNT];
	uint32_t groups[F_COUNT][MAX_FIELD_GROUPS];
};

struct cvc_rules {
	struct rule *v;
	size_t n, cap;
	char *path;     /* the user's rule file; NULL for the shipped rules alone */
	uint32_t ovec;  /* ovector pairs the widest rule needs */
	pcre2_match_context *mctx;
};

const char *cvc_class_name(cvc_op_class c)
{
	if ((int)c < 0 || c >= CVC_CLS_COUNT)
		return NULL;
	return class_names[c];
}

cvc_status cvc_class_parse(const char *name, cvc_op_class *out)
{
	for (int i = 0; i < CVC_CLS_COUNT; i++) {
		if (strcmp(name, class_names[i]) == 0) {
			*out = (cvc_op_class)i;
			return CVC_OK;
		}
	}
	return CVC_ERR_NOTFOUND;
}

int cvc_class_is_comm(cvc_op_class c)
{
	return c >= CVC_CLS_ALLREDUCE && c <= CVC_CLS_OTHER_COMM;
}

size_t cvc_rules_count(const cvc_rules *r)
{
	return r ? r->n : 0;
}

int cvc_rules_line(const cvc_rules *r, int i)
{
	if (!r || i < 0 || (size_t)i >= r->n)
		return 0;
	return r->v[i].line;
}

const char *cvc_rules_source(const cvc_rules *r, int i)
{
	if (!r || i < 0 || (size_t)i >= r->n)
		return NULL;
	return r->v[i].shipped || !r->path ? "default.rules" : r->path;
}

void cvc_rules_free(cvc_rules *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->n; i++)
		pcre2_code_free(r->v[i].re);
	free(r->v);
	free(r->path);
	pcre2_match_context_free(r->mctx);
	free(r);
}

/*
 * Maps a collective as a name spells it (AllReduce, all_to_all, Send, ...)
 * to its class; norm receives the lowercase letters-and-digits form.
 */
static cvc_op_class coll_class(const char *s, size_t len, char *norm, size_t normlen)
{
	static const struct { const char *word; cvc_op_class cls; } map[] = {
		{"allreduce", CVC_CLS_ALLREDUCE},
		{"allgather", CVC_CLS_ALLGATHER},
		{"allgatherv", CVC_CLS_ALLGATHER},
		{"reducescatter", CVC_CLS_REDUCESCATTER},
		{"reducescatterv", CVC_CLS_REDUCESCATTER},
		{"broadcast", CVC_CLS_BROADCAST},
		{"bcast", CVC_CLS_BROADCAST},
		{"reduce", CVC_CLS_REDUCE},
		{"sendrecv", CVC_CLS_SENDRECV},
		{"send", CVC_CLS_SENDRECV},
		{"recv", CVC_CLS_SENDRECV},
		{"alltoall", CVC_CLS_ALLTOALL},
		{"alltoallv", CVC_CLS_ALLTOALL},
		{"all2all", CVC_CLS_ALLTOALL},
	};
	size_t n = 0;

	for (size_t i = 0; i < len && n + 1 < normlen; i++) {
		unsigned char c = (unsigned char)s[i];

		if (isalnum(c))
			norm[n++] = (char)tolower(c);
	}
	norm[n] = '\0';
	for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
		if (strcmp(norm, map[i].word) == 0)
			return map[i].cls;
	return CVC_CLS_OTHER_COMM;
}

/* Records which capture groups of r fill which match field. */
static void index_groups(struct rule *r)
{
	uint32_t count = 0, entry = 0;
	PCRE2_SPTR table = NULL;

	pcre2_pattern_info(r->re, PCRE2_INFO_NAMECOUNT, &count);
	if (count == 0)
		return;
	pcre2_pattern_info(r->re, PCRE2_INFO_NAMEENTRYSIZE, &entry);
	pcre2_pattern_info(r->re, PCRE2_INFO_NAMETABLE, &table);
	for (uint32_t i = 0; i < count; i++) {
		const unsigned char *e = table + (size_t)i * entry;
		uint32_t group = ((uint32_t)e[0] << 8) | e[1];
		const char *name = (const char *)e + 2;

		for (int f = 0; f < F_COUNT; f++) {
			size_t fl = strlen(field_names[f]);
			const char *rest = name + fl;

			if (strncmp(name, field_names[f], fl) != 0)
				continue;
			while (*rest >= '0' && *rest <= '9')
				rest++;
			if (*rest || r->ngroups[f] >= MAX_FIELD_GROUPS)
				continue;
			r->groups[f][r->ngroups[f]++] = group;
		}
	}
}

static int is_blank(char c)
{
	return c == ' ' || c == '\t';
}

/* The class names a rule may use, for error messages: other and comm last. */
static void class_list(char *buf, size_t len)
{
	size_t n = 0;

	buf[0] = '\0';
	for (int i = 1; i <= CVC_CLS_COUNT + 1; i++) {
		const char *name = i < CVC_CLS_COUNT ? class_names[i]
				   : i == CVC_CLS_COUNT ? class_names[CVC_CLS_OTHER] : "comm";
		int w = snprintf(buf + n, len - n, "%s%s", n ? ", " : "", name);

		if (w < 0 || (size_t)w >= len - n)
			return;
		n += (size_t)w;
	}
}

/* Parses one non-comment line into r->v[r->n]. */
static cvc_status parse_line(cvc_rules *rs, const char *path, int lineno,
			     const char *line, size_t len, char *err, size_t errlen)
{
	struct rule *r = &rs->v[rs->n];
	char cname[40];
	size_t i = 0, cstart, clen, rstart;
	uint32_t opts = PCRE2_DUPNAMES;
	int errcode = 0;
	PCRE2_SIZE erroff = 0;

	while (i < len && is_blank(line[i]))
		i++;
	cstart = i;
	while (i < len && !is_blank(line[i]))
		i++;
	clen = i - cstart;
	if (clen >= sizeof cname)
		return cvc_errf(err, errlen, CVC_ERR_FORMAT,
			    "'%s': line %d: unknown class '%.*s...' (class names are short words)",
			    path, lineno, 32, line + cstart);
	memcpy(cname, line + cstart, clen);
	cname[clen] = '\0';
	memset(r, 0, sizeof *r);
	r->line = lineno;
	if (strcmp(cname, "comm") == 0) {
		r->derive = 1;
		r->cls = CVC_CLS_OTHER_COMM;
	} else if (cvc_class_parse(cname, &r->cls) != CVC_OK) {
		char list[512];

		class_list(list, sizeof list);
		return cvc_errf(err, errlen, CVC_ERR_FORMAT,
			    "'%s': line %d: unknown class '%s' (expected one of %s)", path,
			    lineno, cname, list);
	}
	/* flags: key=value words before the regex */
	for (;;) {
		while (i < len && is_blank(line[i]))
			i++;
		if (len - i >= 6 && memcmp(line + i, "icase=", 6) == 0) {
			size_t v = i + 6;

			if (v + 1 <= len && (line[v] == '0' || line[v] == '1') &&
			    (v + 1 == len || is_blank(line[v + 1]))) {
				if (line[v] == '1')
					opts |= PCRE2_CASELESS;
				else
					opts &= ~(uint32_t)PCRE2_CASELESS;
				i = v + 1;
				continue;
			}
			return cvc_errf(err, errlen, CVC_ERR_FORMAT,
				    "'%s': line %d, column %zu: expected icase=0 or icase=1",
				    path, lineno, v + 1);
		}
		break;
	}
	rstart = i;
	if (rstart >= len)
		return cvc_errf(err, errlen, CVC_ERR_FORMAT,
			    "'%s': line %d, column %zu: expected a regex after class '%s'",
			    path, lineno, len + 1, cname);
	r->re = pcre2_compile((PCRE2_SPTR)(line + rstart), len - rstart, opts, &errcode,
			      &erroff, NULL);
	if (!r->re) {
		PCRE2_UCHAR msg[256];

		if (pcre2_get_error_message(errcode, msg, sizeof msg) < 0)
			snprintf((char *)msg, sizeof msg, "regex error %d", errcode);
		return cvc_errf(err, errlen, CVC_ERR_FORMAT, "'%s': line %d, column %zu: %s",
			    path, lineno, rstart + (size_t)erroff + 1, (const char *)msg);
	}
	/* JIT is an optimisation: where it is missing the interpreter runs. */
	(void)pcre2_jit_compile(r->re, PCRE2_JIT_COMPLETE);
	index_groups(r);
	{
		uint32_t c = 0;

		pcre2_pattern_info(r->re, PCRE2_INFO_CAPTURECOUNT, &c);
		if (c + 1 > rs->ovec)
			rs->ovec = c + 1;
	}
	rs->n++;
	return CVC_OK;
}

/* An empty rule set with its match limits; NULL on no memory. */
static cvc_rules *rules_new(void)
{
	cvc_rules *rs = calloc(1, sizeof *rs);

	if (!rs)
		return NULL;
	rs->ovec = 1;
	rs->mctx = pcre2_match_context_create(NULL);
	if (!rs->mctx) {
		free(rs);
		return NULL;
	}
	pcre2_set_match_limit(rs->mctx, RULES_MATCH_LIMIT);
	pcre2_set_depth_limit(rs->mctx, RULES_DEPTH_LIMIT);
	return rs;
}

/* Appends the rules of a whole text (need not be NUL-terminated) to rs,
 * marked shipped or not. */
static cvc_status rules_parse(cvc_rules *rs, const char *text, size_t len, const char *path,
			      int shipped, char *err, size_t errlen)
{
	size_t pos = 0;
	int lineno = 0;
	cvc_status st;

	while (pos < len) {
		const char *line = text + pos;
		const char *nl = memchr(line, '\n', len - pos);
		size_t ll = nl ? (size_t)(nl - line) : len - pos;
		const char *nul;
		size_t k = 0;

		pos += ll + (nl ? 1 : 0);
		lineno++;
		if (ll > RULES_MAX_LINE)
			return cvc_errf(err, errlen, CVC_ERR_FORMAT,
					"'%s': line %d: longer than %d bytes", path, lineno,
					RULES_MAX_LINE);
		nul = memchr(line, '\0', ll);
		if (nul)
			return cvc_errf(err, errlen, CVC_ERR_FORMAT,
					"'%s': line %d, column %zu: unexpected NUL byte", path,
					lineno, (size_t)(nul - line) + 1);
		/* trailing blanks and a CR of CRLF files are not part of the regex */
		while (ll > 0 && (is_blank(line[ll - 1]) || line[ll - 1] == '\r'))
			ll--;
		while (k < ll && is_blank(line[k]))
			k++;
		if (k == ll || line[k] == '#')
			continue;
		if (rs->n == rs->cap) {
			if (rs->cap >= 2 * RULES_MAX_RULES) /* a user's file, then the shipped */
				return cvc_errf(err, errlen, CVC_ERR_FORMAT,
						"'%s': line %d: more than %d rules", path, lineno,
						RULES_MAX_RULES);
			if (cvc_grow(&rs->v, &rs->cap, rs->cap + 1, sizeof *rs->v, 64) != CVC_OK)
				return cvc_errf(err, errlen, CVC_ERR_NOMEM, "out of memory");
		}
		if ((st = parse_line(rs, path, lineno, line, ll, err, errlen)))
			return st;
		rs->v[rs->n - 1].shipped = shipped;
		if (!shipped && rs->n > RULES_MAX_RULES)
			return cvc_errf(err, errlen, CVC_ERR_FORMAT,
					"'%s': line %d: more than %d rules", path, lineno,
					RULES_MAX_RULES);
	}
	return CVC_OK;
}

/* The rules of the user's file at path (unless NULL), then, with shipped,
 * the shipped ones. */
static cvc_status rules_make(const char *path, int shipped, cvc_rules **out, char *err,
			     size_t errlen)
{
	cvc_rules *rs = rules_new();
	char *buf = NULL;
	size_t n = 0;
	cvc_status st = CVC_OK;

	*out = NULL;
	if (!rs)
		return cvc_errf(err, errlen, CVC_ERR_NOMEM, "out of memory");
	if (path) {
		rs->path = strdup(path);
		if (!rs->path)
			st = cvc_errf(err, errlen, CVC_ERR_NOMEM, "out of memory");
		if (!st)
			st = cvc_file_read(path, RULES_MAX_BYTES, &buf, &n, err, errlen);
		if (!st)
			st = rules_parse(rs, buf, n, path, 0, err, errlen);
	}
	if (!st && shipped) {
		st = rules_parse(rs, cvc_default_rules, cvc_default_rules_len, "default.rules", 1,
				 err, errlen);
		/* the shipped file is tested: failing to load it is our bug */
		if (st == CVC_ERR_FORMAT)
			st = CVC_ERR_INTERNAL;
	}
	free(buf);
	if (st)
		cvc_rules_free(rs);
	else
		*out = rs;
	return st;
}

cvc_status cvc_rules_default(cvc_rules **out, char *err, size_t errlen)
{
	return rules_make(NULL, 1, out, err, errlen);
}

cvc_status cvc_rules_load(const char *path, cvc_rules **out, char *err, size_t errlen)
{
	return rules_make(path, 0, out, err, errlen);
}

cvc_status cvc_rules_load_over_default(const char *path, cvc_rules **out, char *err,
				       size_t errlen)
{
	return rules_make(path, 1, out, err, errlen);
}

/* Copies group text into dst (truncating); returns 1 if the group was set. */
static int copy_group(const PCRE2_SIZE *ov, const char *name, uint32_t g, char *dst,
		      size_t dlen)
{
	PCRE2_SIZE s = ov[2 * g], e = ov[2 * g + 1];
	size_t n;

	if (s == PCRE2_UNSET || e < s)
		return 0;
	n = e - s;
	if (n >= dlen)
		n = dlen - 1;
	memcpy(dst, name + s, n);
	dst[n] = '\0';
	return 1;
}

static cvc_status match_with(const cvc_rules *r, pcre2_match_data *md,
			     const char *name, size_t len, cvc_class_match *m)
{
	memset(m, 0, sizeof *m);
	m->cls = CVC_CLS_OTHER;
	m->rule = -1;
	for (size_t i = 0; i < r->n; i++) {
		const struct rule *ru = &r->v[i];
		const PCRE2_SIZE *ov;
		char *dst[F_COUNT] = {m->coll, m->algo, m->proto, m->dtype};
		size_t dlen[F_COUNT] = {sizeof m->coll, sizeof m->algo, sizeof m->proto,
					sizeof m->dtype};
		char raw[64] = "";
		int rc = pcre2_match(ru->re, (PCRE2_SPTR)name, len, 0, 0, md, r->mctx);

		if (rc == PCRE2_ERROR_NOMATCH)
			continue;
		if (rc < 0) {
			/* match/depth limit or similar: this rule does not apply */
			if (rc == PCRE2_ERROR_NOMEMORY)
				return CVC_ERR_NOMEM;
			continue;
		}
		ov = pcre2_get_ovector_pointer(md);
		m->rule = (int)i;
		m->cls = ru->cls;
		for (int f = 0; f < F_COUNT; f++) {
			for (int k = 0; k < ru->ngroups[f]; k++) {
				char *d = f == F_COLL ? raw : dst[f];
				size_t dl = f == F_COLL ? sizeof raw : dlen[f];

				if ((uint32_t)rc > ru->groups[f][k] &&
				    copy_group(ov, name, ru->groups[f][k], d, dl))
					break;
			}
		}
		if (raw[0]) {
			cvc_op_class c = coll_class(raw, strlen(raw), m->coll, sizeof m->coll);

			if (ru->derive)
				m->cls = c;
		} else if (cvc_class_is_comm(m->cls) && m->cls != CVC_CLS_OTHER_COMM) {
			snprintf(m->coll, sizeof m->coll, "%s", class_names[m->cls]);
		}
		return CVC_OK;
	}
	return CVC_OK;
}

cvc_status cvc_rules_match(const cvc_rules *r, const char *name, size_t len,
			   cvc_class_match *m)
{
	pcre2_match_data *md;
	cvc_status st;

	if (!r || !name || !m)
		return CVC_ERR_USAGE;
	/* one match data per call: the rules stay read-only, so threads share them */
	md = pcre2_match_data_create(r->ovec, NULL);
	if (!md)
		return CVC_ERR_NOMEM;
	st = match_with(r, md, name, len, m);
	pcre2_match_data_free(md);
	return st;
}

/* ---- the database side ----------------------------------------------------- */

/* The shipped rule set, compiled once per process on first use. */
static pthread_once_t default_once = PTHREAD_ONCE_INIT;
static cvc_rules *default_rules;
static cvc_status default_st;
static char default_err[256];

static void load_default(void)
{
	default_st = cvc_rules_default(&default_rules, default_err, sizeof default_err);
}

static cvc_status resolve_rules(cvc_db *db, const cvc_rules *rules, const cvc_rules **out)
{
	if (rules) {
		*out = rules;
		return CVC_OK;
	}
	pthread_once(&default_once, load_default);
	if (default_st)
		return cvc_db_fail(db, default_st, "default rules: %s", default_err);
	*out = default_rules;
	return CVC_OK;
}

static cvc_status sq_fail(cvc_db *db, const char *what)
{
	return cvc_db_fail(db, CVC_ERR_DB, "classify: %s: %s", what,
			   sqlite3_errmsg(cvc_db_sqlite(db)));
}

static cvc_status prepare(cvc_db *db, const char *sql, sqlite3_stmt **st)
{
	if (sqlite3_prepare_v2(cvc_db_sqlite(db), sql, -1, st, NULL) != SQLITE_OK)
		return sq_fail(db, "preparing a statement");
	return CVC_OK;
}

/* prepare() for a statement over run ?1, or over every run when run_id < 0. */
static cvc_status prepare_run(cvc_db *db, const char *sql, int64_t run_id, sqlite3_stmt **st)
{
	cvc_status rc = prepare(db, sql, st);

	if (!rc)
		sqlite3_bind_int64(*st, 1, run_id);
	return rc;
}

static void bind_opt_text(sqlite3_stmt *st, int i, const char *s)
{
	if (s && *s)
		sqlite3_bind_text(st, i, s, -1, SQLITE_TRANSIENT);
	else
		sqlite3_bind_null(st, i);
}

/* A name to label: its id only; the text is read back one at a time, so
 * memory does not grow with the names' lengths (issue 14). */
struct name_item {
	int64_t id;
	int kernel;   /* referenced by at least one kernel activity */
};

/* Reads the distinct activity names to label into *items. */
static cvc_status collect_names(cvc_db *db, int all, struct name_item **items, size_t *n)
{
	static const char sql_all[] =
		"SELECT a.name_id, MIN(a.kind) FROM activities a GROUP BY a.name_id";
	static const char sql_new[] =
		"SELECT a.name_id, MIN(a.kind) FROM activities a WHERE NOT EXISTS "
		"(SELECT 1 FROM name_class nc WHERE nc.name_id = a.name_id) "
		"GROUP BY a.name_id";
	sqlite3_stmt *q = NULL;
	struct name_item *v = NULL;
	size_t cnt = 0, cap = 0;
	cvc_status st;
	int rc;

	if ((st = prepare(db, all ? sql_all : sql_new, &q)))
		goto out;
	while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
		if (cnt == cap && cvc_grow(&v, &cap, cap + 1, sizeof *v, 256) != CVC_OK) {
			st = cvc_db_fail(db, CVC_ERR_NOMEM, "out of memory");
			goto out;
		}
		v[cnt].id = sqlite3_column_int64(q, 0);
		v[cnt].kernel = sqlite3_column_int(q, 1) == CVC_ACT_KERNEL;
		cnt++;
	}
	if (rc != SQLITE_DONE)
		st = sq_fail(db, "reading kernel names");
out:
	sqlite3_finalize(q);
	if (st) {
		free(v);
		v = NULL;
		cnt = 0;
	}
	*items = v;
	*n = cnt;
	return st;
}

static cvc_status step_reset(cvc_db *db, sqlite3_stmt *st, const char *what)
{
	int rc = sqlite3_step(st);

	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
	return rc == SQLITE_DONE ? CVC_OK : sq_fail(db, what);
}

cvc_status cvc_classify_after_import(cvc_db *db, int64_t run_id, void *rules)
{
	(void)run_id;
	return cvc_classify_db(db, rules, 0);
}

cvc_status cvc_classify_db(cvc_db *db, const cvc_rules *rules, int all)
{
	const cvc_rules *rs = NULL;
	sqlite3_stmt *cls = NULL, *ins = NULL, *txt = NULL;
	struct name_item *items = NULL;
	pcre2_match_data *md = NULL;
	size_t n = 0;
	cvc_status st;

	if (!db)
		return CVC_ERR_USAGE;
	if (sqlite3_get_autocommit(cvc_db_sqlite(db)))
		return cvc_db_fail(db, CVC_ERR_USAGE,
				   "classify: no open transaction (call cvc_db_begin first)");
	if ((st = resolve_rules(db, rules, &rs)))
		return st;
	if ((st = prepare(db, "INSERT INTO op_classes(id,name,is_comm) VALUES(?,?,?) "
			  "ON CONFLICT(id) DO UPDATE SET name=excluded.name,"
			  "is_comm=excluded.is_comm", &cls)))
		goto out;
	for (int c = 0; c < CVC_CLS_COUNT; c++) {
		sqlite3_bind_int(cls, 1, c);
		sqlite3_bind_text(cls, 2, class_names[c], -1, SQLITE_STATIC);
		sqlite3_bind_int(cls, 3, cvc_class_is_comm((cvc_op_class)c));
		if ((st = step_reset(db, cls, "writing op_classes")))
			goto out;
	}
	if (all && (st = cvc_db_exec(db, "DELETE FROM name_class")))
		goto out;
	if ((st = collect_names(db, all, &items, &n)))
		goto out;
	if ((st = prepare(db, "INSERT OR REPLACE INTO name_class(name_id,class_id,rule,"
			  "coll,algo,proto,dtype) VALUES(?,?,?,?,?,?,?)", &ins)))
		goto out;
	md = pcre2_match_data_create(rs->ovec, NULL);
	if (!md) {
		st = cvc_db_fail(db, CVC_ERR_NOMEM, "out of memory");
		goto out;
	}
	if ((st = prepare(db, "SELECT value FROM strings WHERE id = ?", &txt)))
		goto out;
	for (size_t i = 0; i < n; i++) {
		cvc_class_match m;

		if (items[i].kernel) {
			const char *name = "";
			size_t len = 0;

			sqlite3_bind_int64(txt, 1, items[i].id);
			if (sqlite3_step(txt) == SQLITE_ROW && sqlite3_column_text(txt, 0)) {
				name = (const char *)sqlite3_column_text(txt, 0);
				len = (size_t)sqlite3_column_bytes(txt, 0);
			}
			st = match_with(rs, md, name, len, &m);
			sqlite3_reset(txt);
			if (st) {
				cvc_db_fail(db, st, "classify: out of memory");
				goto out;
			}
		} else {
			/* memcpy/memset records: copies whatever the name says */
			memset(&m, 0, sizeof m);
			m.cls = CVC_CLS_COPY;
			m.rule = -1;
		}
		sqlite3_bind_int64(ins, 1, items[i].id);
		sqlite3_bind_int(ins, 2, (int)m.cls);
		if (m.rule >= 0)
			sqlite3_bind_int(ins, 3, m.rule);
		else
			sqlite3_bind_null(ins, 3);
		bind_opt_text(ins, 4, m.coll);
		bind_opt_text(ins, 5, m.algo);
		bind_opt_text(ins, 6, m.proto);
		bind_opt_text(ins, 7, m.dtype);
		if ((st = step_reset(db, ins, "writing name_class")))
			goto out;
	}
out:
	pcre2_match_data_free(md);
	free(items);
	sqlite3_finalize(cls);
	sqlite3_finalize(ins);
	sqlite3_finalize(txt);
	return st;
}

cvc_status cvc_classify_summary(cvc_db *db, int64_t run_id,
				cvc_class_total out[CVC_CLS_COUNT], int64_t *all_ns)
{
	sqlite3_stmt *q = NULL;
	double total = 0, per[CVC_CLS_COUNT] = {0};
	cvc_status st;
	int rc;

	memset(out, 0, CVC_CLS_COUNT * sizeof *out);
	/* total(), a double: SQL's sum() of int64 durations fails on overflow,
	 * and durations within the window may add up past 2^63 (issue 36) */
	if ((st = prepare_run(db, "SELECT coalesce(nc.class_id,0), COUNT(*), "
			      "total(a.end_ns - a.start_ns) FROM activities a "
			      "LEFT JOIN name_class nc ON nc.name_id = a.name_id "
			      "WHERE ?1 < 0 OR a.run_id = ?1 GROUP BY 1", run_id, &q)))
		goto out;
	while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
		int64_t c = sqlite3_column_int64(q, 0);

		/* an id this build does not know (newer rules) counts as other */
		if (c < 0 || c >= CVC_CLS_COUNT)
			c = CVC_CLS_OTHER;
		out[c].count += sqlite3_column_int64(q, 1);
		per[c] += sqlite3_column_double(q, 2);
		total += sqlite3_column_double(q, 2);
	}
	if (rc != SQLITE_DONE) {
		st = sq_fail(db, "summing classes");
		goto out;
	}
	if (total >= 0x1p63) {
		st = cvc_db_fail(db, CVC_ERR_FORMAT,
				 "'%s': the kernels last 2^63 ns or more in all (292 years): not a "
				 "trace's times", cvc_db_path(db));
		goto out;
	}
	for (int c = 0; c < CVC_CLS_COUNT; c++)
		out[c].total_ns = (int64_t)per[c];
out:
	sqlite3_finalize(q);
	if (all_ns)
		*all_ns = st ? 0 : (int64_t)total;
	return st;
}

cvc_status cvc_classify_unknown(cvc_db *db, const cvc_rules *rules, int64_t run_id,
				cvc_unknown_fn fn, void *arg)
{
	const cvc_rules *rs = NULL;
	sqlite3_stmt *q = NULL, *qn = NULL;
	pcre2_match_data *md = NULL;
	cvc_status st;
	int rc;

	if ((st = resolve_rules(db, rules, &rs)))
		return st;
	/* The sort carries name ids and a bounded prefix, and each name is read
	 * after it: sorting rows that carry whole names would hold every
	 * distinct name in memory at once (issue 14 item 3). */
	if ((st = prepare_run(db, "SELECT g.id, g.n, g.t FROM ("
			      " SELECT a.name_id AS id, COUNT(*) AS n, total(a.end_ns - a.start_ns) AS t"
			      " FROM activities a WHERE a.kind = 1 AND (?1 < 0 OR a.run_id = ?1)"
			      " GROUP BY a.name_id) g JOIN strings s ON s.id = g.id "
			      "ORDER BY g.t DESC, substr(s.value, 1, 256), g.id", run_id, &q)) ||
	    (st = prepare(db, "SELECT value FROM strings WHERE id = ?1", &qn)))
		goto out;
	md = pcre2_match_data_create(rs->ovec, NULL);
	if (!md) {
		st = cvc_db_fail(db, CVC_ERR_NOMEM, "out of memory");
		goto out;
	}
	while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
		const char *name;
		size_t len;
		cvc_class_match m;

		sqlite3_bind_int64(qn, 1, sqlite3_column_int64(q, 0));
		if (sqlite3_step(qn) != SQLITE_ROW) {
			st = sq_fail(db, "reading kernel names");
			goto out;
		}
		name = (const char *)sqlite3_column_text(qn, 0);
		len = (size_t)sqlite3_column_bytes(qn, 0);
		if ((st = match_with(rs, md, name ? name : "", len, &m))) {
			cvc_db_fail(db, st, "classify: out of memory");
			goto out;
		}
		if (sqlite3_column_double(q, 2) >= 0x1p63) {
			st = cvc_db_fail(db, CVC_ERR_FORMAT,
					 "'%s': the kernels of one name last 2^63 ns or more in all "
					 "(292 years): not a trace's times", cvc_db_path(db));
			goto out;
		}
		if (m.rule < 0 && fn(arg, name ? name : "", sqlite3_column_int64(q, 1),
				     (int64_t)sqlite3_column_double(q, 2)))
			goto out;
		sqlite3_reset(qn);
	}
	if (rc != SQLITE_DONE)
		st = sq_fail(db, "reading kernel names");
out:
	pcre2_match_data_free(md);
	sqlite3_finalize(qn);
	sqlite3_finalize(q);
	return st;
}

/*
 * Whether a kernel name looks like communication a rule set does not know:
 * the words collective libraries use (case-insensitive), send/recv only as
 * words (not "descend").
 */
static int looks_like_comm(const char *name)
{
	static const char *const words[] = {
		"dispatch", "combine", "all_to_all", "alltoall", "all2all", "allreduce",
		"all_reduce", "allgather", "all_gather", "reduce_scatter", "reducescatter",
		"sendrecv", "send_recv", "barrier", "nvshmem"};
	char low[512];
	size_t n = 0;

	for (; name[n] && n + 1 < sizeof low; n++)
		low[n] = (char)tolower((unsigned char)name[n]);
	low[n] = '\0';
	for (size_t i = 0; i < sizeof words / sizeof words[0]; i++)
		if (strstr(low, words[i]))
			return 1;
	for (const char *w = low; (w = strpbrk(w, "sr")); w++)
		if ((!strncmp(w, "send", 4) || !strncmp(w, "recv", 4)) &&
		    (w == low || !isalpha((unsigned char)w[-1])) && !isalpha((unsigned char)w[4]))
			return 1;
	return 0;
}

/*
 * Whether an unlabelled name (no name_class row: a database no import
 * classified, such as one `cvc profile` materialized, opened read-only or
 * read by `analyze --collectives`) counts as other: the shipped rules say
 * what import would have labelled it.  *rules is loaded on first use.
 */
static int unlabelled_is_other(cvc_rules **rules, int *failed, const char *name)
{
	cvc_class_match m;
	char err[256];

	if (!*rules && !*failed && cvc_rules_default(rules, err, sizeof err) != CVC_OK)
		*failed = 1;
	if (*failed || cvc_rules_match(*rules, name, strlen(name), &m) != CVC_OK)
		return 1;
	return m.rule < 0 || !cvc_class_is_comm(m.cls);
}

cvc_status cvc_classify_suspects(cvc_db *db, int64_t run_id, double *share, char *example,
				 size_t len)
{
	sqlite3_stmt *q = NULL;
	cvc_rules *rules = NULL;
	cvc_status st;
	double total = 0, sus = 0, best = 0;
	int rc, rules_failed = 0;

	if (!db || !share)
		return CVC_ERR_USAGE;
	*share = 0;
	if (example && len)
		example[0] = '\0';
	/* Sums per name id first and reads each name after: grouping rows that
	 * carry the names would make SQLite's sorter hold every distinct name at
	 * once (300 distinct 1 MiB names: 300 MB; issue 14 item 3). */
	if ((st = prepare_run(db, "SELECT s.value, g.t, coalesce(oc.name, 'other'), "
			      "nc.name_id IS NULL FROM ("
			      " SELECT a.name_id AS id, total(a.end_ns - a.start_ns) AS t "
			      " FROM activities a WHERE a.kind = 1 AND (?1 < 0 OR a.run_id = ?1) "
			      " GROUP BY a.name_id) g "
			      "JOIN strings s ON s.id = g.id "
			      "LEFT JOIN name_class nc ON nc.name_id = g.id "
			      "LEFT JOIN op_classes oc ON oc.id = nc.class_id", run_id, &q)))
		return st;
	while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
		const char *name = (const char *)sqlite3_column_text(q, 0);
		double t = sqlite3_column_double(q, 1);
		const char *cls = (const char *)sqlite3_column_text(q, 2);

		total += t;
		if (name && cls && strcmp(cls, "other") == 0 && looks_like_comm(name) &&
		    (!sqlite3_column_int(q, 3) || unlabelled_is_other(&rules, &rules_failed, name))) {
			sus += t;
			if (t > best && example && len) {
				best = t;
				snprintf(example, len, "%s", name);
			}
		}
	}
	if (rc != SQLITE_DONE)
		st = sq_fail(db, "reading kernel names");
	sqlite3_finalize(q);
	cvc_rules_free(rules);
	*share = total > 0 ? sus / total : 0;
	return st;
}
