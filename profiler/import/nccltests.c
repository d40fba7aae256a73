/*
 * nccltests.c - nccl-tests (`*_perf`) stdout logs, plain, gzip, or pasted
 * into a markdown file.
 *
 * The operation name may be printed only after the table (the footer
 * "# Collective test concluded: <binary>"), so the file is read twice: a
 * first pass gathers the evidence (footer, command line, rank lines, table
 * header, bus/alg bandwidth ratio) and a second pass stores the rows.  Both
 * passes use one bounded line buffer.
 *
 * Table rows follow nccl-tests' printf: size, count, type, redop, root, then
 * time/algbw/busbw/#wrong out-of-place and again in-place.  The header line
 * names the columns; older versions without redop/root are read through it.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <zlib.h>

#include "cvc/cvc_import.h"
#include "import_int.h"

/* Log lines are short; prose in markdown may be longer but is skipped. */
#define NT_LINE_MAX (64 * 1024)
#define NT_MAX_TOKENS 32
#define NT_MAX_RANKS (1 << 20)

/* Operations nccl-tests ships, as in the binary names (<op>_perf). */
static const char *const nt_ops[] = {
	"all_reduce", "all_gather", "reduce_scatter", "alltoall", "broadcast",
	"reduce", "sendrecv", "scatter", "gather", "hypercube"
};
enum { NT_NOPS = sizeof nt_ops / sizeof nt_ops[0] };

/* Column roles; a table header maps positions to roles. */
enum nt_col {
	C_NONE, C_SIZE, C_COUNT, C_TYPE, C_REDOP, C_ROOT, C_TIME, C_ALGBW, C_BUSBW, C_WRONG
};

static const char *const col_names[] = {
	[C_NONE] = "?", [C_SIZE] = "size", [C_COUNT] = "count", [C_TYPE] = "type",
	[C_REDOP] = "redop", [C_ROOT] = "root", [C_TIME] = "time", [C_ALGBW] = "algbw",
	[C_BUSBW] = "busbw", [C_WRONG] = "#wrong"
};

struct nt_layout {
	enum nt_col col[NT_MAX_TOKENS];
	int ncols;
};

struct nt_reader {
	gzFile gz;
	char *buf;
	size_t cap;
	long long lineno;
	int too_long;          /* the last line was cut at the cap */
};

/* Evidence gathered by the first pass. */
struct nt_info {
	char op_footer[64], op_cmd[64];
	int nranks_lines;      /* "#  Rank N ..." lines */
	int max_rank;
	int nthread, ngpus;    /* from "# nThread" header */
	int cmd_g, cmd_t, cmd_np; /* -g / -t of the binary, mpirun -np */
	char gpu[128], tests_version[32], nccl_version[32];
	double ratio_sum;      /* busbw/algbw over rows with algbw >= 1 */
	int ratio_n;
	char first_redop[16];
	int first_root, have_first;
};

static cvc_status rd_line(cvc_db *db, const char *path, struct nt_reader *r, int *eof)
{
	size_t len;

	*eof = 0;
	if (!gzgets(r->gz, r->buf, (int)r->cap)) {
		int zerr;
		const char *m = gzerror(r->gz, &zerr);

		if (zerr != Z_OK && zerr != Z_BUF_ERROR)
			return cvc_db_fail(db, CVC_ERR_FORMAT, "'%s': line %lld: corrupt gzip data: %s",
					   path, r->lineno + 1, m);
		*eof = 1;
		return CVC_OK;
	}
	r->lineno++;
	len = strlen(r->buf);
	r->too_long = 0;
	if (len == r->cap - 1 && r->buf[len - 1] != '\n') {
		/* Drop the rest of an overlong line; only prose gets this long. */
		int c;

		r->too_long = 1;
		while ((c = gzgetc(r->gz)) != -1 && c != '\n')
			;
	}
	while (len && (r->buf[len - 1] == '\n' || r->buf[len - 1] == '\r'))
		r->buf[--len] = '\0';
	return CVC_OK;
}

/* Splits s in place at blanks; returns the token count (capped). */
static int tokenize(char *s, char **tok, int max)
{
	int n = 0;

	while (*s) {
		while (*s == ' ' || *s == '\t')
			s++;
		if (!*s)
			break;
		if (n == max)
			return n + 1;
		tok[n++] = s;
		while (*s && *s != ' ' && *s != '\t')
			s++;
		if (*s)
			*s++ = '\0';
	}
	return n;
}

static int all_digits(const char *s)
{
	if (!*s)
		return 0;
	for (; *s; s++)
		if (!isdigit((unsigned char)*s))
			return 0;
	return 1;
}

/*
 * A result row starts with two integers (size, count); prose that happens
 * to start with a number ("8 GPUs ...") is not one.
 */
static int is_row(char **tok, int n)
{
	return n >= 2 && all_digits(tok[0]) && all_digits(tok[1]);
}

static int parse_i64(const char *s, int64_t *v)
{
	char *end;
	long long x;

	errno = 0;
	x = strtoll(s, &end, 10);
	if (errno || end == s || *end)
		return -1;
	*v = x;
	return 0;
}

static int parse_num(const char *s, double *v)
{
	char *end;

	errno = 0;
	*v = strtod(s, &end);
	if (errno || end == s || *end || !isfinite(*v))
		return -1;
	return 0;
}

/* Strips markdown quoting ("> ") and blanks from the start of a line. */
static char *skip_prefix(char *s)
{
	for (;;) {
		while (*s == ' ' || *s == '\t')
			s++;
		if (*s != '>')
			return s;
		s++;
	}
}

/*
 * Finds "<op>_perf" in s as a word (path prefix allowed), copying the op.
 * Longest op name first so "reduce" does not shadow "reduce_scatter".
 */
static int find_op(const char *s, char *op, size_t cap)
{
	for (const char *p = strstr(s, "_perf"); p; p = strstr(p + 1, "_perf")) {
		char after = p[5];
		const char *b = p;
		size_t len;

		if (after && after != '_' && !isspace((unsigned char)after) && after != '`' &&
		    after != '"' && after != '\'')
			continue;
		while (b > s && (isalnum((unsigned char)b[-1]) || b[-1] == '_'))
			b--;
		len = (size_t)(p - b);
		for (int i = 0; i < NT_NOPS; i++) {
			if (strlen(nt_ops[i]) == len && memcmp(b, nt_ops[i], len) == 0) {
				snprintf(op, cap, "%s", nt_ops[i]);
				return 1;
			}
		}
	}
	return 0;
}

/* Value of a "-X N" / "--long N" option in a command line, or 0. */
static int cmd_opt(char **tok, int n, const char *shortf, const char *longf)
{
	for (int i = 0; i + 1 < n; i++) {
		if (strcmp(tok[i], shortf) == 0 || (longf && strcmp(tok[i], longf) == 0)) {
			int64_t v;

			if (parse_i64(tok[i + 1], &v) == 0 && v > 0 && v < NT_MAX_RANKS)
				return (int)v;
		}
	}
	return 0;
}

/* Reads "key value" pairs of the "# nThread 1 nGpus 1 ..." header. */
static int header_int(char **tok, int n, const char *key)
{
	for (int i = 0; i + 1 < n; i++) {
		int64_t v;

		if (strcmp(tok[i], key) == 0 && parse_i64(tok[i + 1], &v) == 0 && v > 0 &&
		    v < NT_MAX_RANKS)
			return (int)v;
	}
	return 0;
}

/*
 * A table header: "# size count type redop root time algbw busbw #wrong ...".
 * Returns 1 and fills the layout when tok is one.
 */
static int parse_header(char **tok, int n, struct nt_layout *lay)
{
	int t0 = 0, have_time = 0;

	if (n > 0 && strcmp(tok[0], "#") == 0)
		t0 = 1;
	if (n - t0 < 4 || strcmp(tok[t0], "size") != 0)
		return 0;
	lay->ncols = 0;
	for (int i = t0; i < n && lay->ncols < NT_MAX_TOKENS; i++) {
		const char *w = tok[i];
		enum nt_col c = C_NONE;

		if (!strcmp(w, "size")) c = C_SIZE;
		else if (!strcmp(w, "count")) c = C_COUNT;
		else if (!strcmp(w, "type")) c = C_TYPE;
		else if (!strcmp(w, "redop")) c = C_REDOP;
		else if (!strcmp(w, "root")) c = C_ROOT;
		else if (!strcmp(w, "time") || !strcmp(w, "cputime")) c = C_TIME;
		else if (!strcmp(w, "algbw")) c = C_ALGBW;
		else if (!strcmp(w, "busbw")) c = C_BUSBW;
		else if (!strcmp(w, "#wrong") || !strcmp(w, "error") || !strcmp(w, "#error"))
			c = C_WRONG;
		have_time |= c == C_TIME;
		lay->col[lay->ncols++] = c;
	}
	return have_time;
}

/* The layout nccl-tests 2.x prints, for logs whose header was cut off. */
static void default_layout(struct nt_layout *lay)
{
	static const enum nt_col d[] = {
		C_SIZE, C_COUNT, C_TYPE, C_REDOP, C_ROOT, C_TIME, C_ALGBW, C_BUSBW, C_WRONG,
		C_TIME, C_ALGBW, C_BUSBW, C_WRONG
	};

	lay->ncols = (int)(sizeof d / sizeof d[0]);
	memcpy(lay->col, d, sizeof d);
}

struct nt_row {
	int64_t size, count;
	const char *type, *redop;
	int64_t root;
	int nhalf;               /* 1 or 2 blocks of time/algbw/busbw/wrong */
	double time[2], algbw[2], busbw[2];
	int64_t wrong[2];
};

/* Parses one data row against the layout; on error names the column. */
static cvc_status parse_row(cvc_db *db, const char *path, long long lineno, char **tok,
			    int n, const struct nt_layout *lay, struct nt_row *r)
{
	int half = -1;

	memset(r, 0, sizeof *r);
	r->root = -1;
	r->wrong[0] = r->wrong[1] = -1;
	if (n != lay->ncols)
		return cvc_db_fail(db, CVC_ERR_FORMAT,
				   "'%s': line %lld: expected %d columns, found %d", path, lineno,
				   lay->ncols, n);
	for (int i = 0; i < n; i++) {
		enum nt_col c = lay->col[i];
		const char *w = tok[i];
		int bad = 0;

		switch (c) {
		case C_SIZE: bad = parse_i64(w, &r->size) || r->size < 0; break;
		case C_COUNT: bad = parse_i64(w, &r->count) || r->count < 0; break;
		case C_TYPE: r->type = w; break;
		case C_REDOP: r->redop = w; break;
		case C_ROOT: bad = parse_i64(w, &r->root); break;
		case C_TIME:
			if (++half > 1)
				return cvc_db_fail(db, CVC_ERR_FORMAT,
						   "'%s': line %lld: more than two time columns",
						   path, lineno);
			bad = parse_num(w, &r->time[half]) || r->time[half] < 0;
			break;
		case C_ALGBW: bad = half < 0 || parse_num(w, &r->algbw[half]); break;
		case C_BUSBW: bad = half < 0 || parse_num(w, &r->busbw[half]); break;
		case C_WRONG:
			if (half < 0) {
				bad = 1;
			} else if (strcmp(w, "N/A") == 0) {
				r->wrong[half] = -1;
			} else {
				double x;

				/* Old versions print a max error like 0e+00 here. */
				/* ... and past int64 the cast is undefined (found by fuzzing) */
				bad = parse_num(w, &x) || x < 0 || x >= 9.2e18;
				r->wrong[half] = bad ? -1 : (int64_t)x;
			}
			break;
		case C_NONE: break;
		}
		if (bad)
			return cvc_db_fail(db, CVC_ERR_FORMAT,
					   "'%s': line %lld: column '%s': expected a number", path,
					   lineno, col_names[c]);
	}
	r->nhalf = half + 1;
	if (r->nhalf == 0)
		return cvc_db_fail(db, CVC_ERR_FORMAT, "'%s': line %lld: column 'time' missing",
				   path, lineno);
	return CVC_OK;
}

/* "nccl-library=21805" -> "2.18.5". */
static void nccl_code(const char *s, char *out, size_t cap)
{
	int64_t v;

	if (parse_i64(s, &v) || v <= 0)
		return;
	if (v >= 10000)
		snprintf(out, cap, "%lld.%lld.%lld", (long long)(v / 10000),
			 (long long)(v / 100 % 100), (long long)(v % 100));
	else
		snprintf(out, cap, "%lld.%lld.%lld", (long long)(v / 1000),
			 (long long)(v / 100 % 10), (long long)(v % 100));
}

/* Op of a "# Collective test concluded: <binary>" footer. */
static void footer_op(const char *s, char *op, size_t cap)
{
	const char *b = strstr(s, "concluded:") + 10, *e;

	if (find_op(b, op, cap))
		return;
	/* A binary outside our list: keep its name sans directory and _perf. */
	while (*b == ' ')
		b++;
	e = strrchr(b, '/');
	if (e)
		b = e + 1;
	e = strstr(b, "_perf");
	if (!e)
		e = b + strcspn(b, " \t");
	if (e > b)
		snprintf(op, cap, "%.*s", (int)(e - b), b);
}

/* Launcher options of a command line (possibly continued over lines). */
static void command_line(char *s, struct nt_info *in)
{
	char *tok[NT_MAX_TOKENS + 1];
	int launcher = strstr(s, "mpirun") || strstr(s, "mpiexec") || strstr(s, "srun");
	int binary = !in->op_cmd[0] && find_op(s, in->op_cmd, sizeof in->op_cmd);
	int n = tokenize(s, tok, NT_MAX_TOKENS);

	if (n > NT_MAX_TOKENS)
		n = NT_MAX_TOKENS;
	if (binary) {
		in->cmd_g = cmd_opt(tok, n, "-g", "--ngpus");
		in->cmd_t = cmd_opt(tok, n, "-t", "--nthreads");
	}
	if (!in->cmd_np) {
		in->cmd_np = cmd_opt(tok, n, "-np", "--np");
		if (!in->cmd_np && launcher) {
			in->cmd_np = cmd_opt(tok, n, "-n", "--ntasks");
		}
	}
}

/* A "#  Rank  0 Group  0 Pid 6899 on host device  0 [0000:04:00] NAME" line. */
static void rank_line(char **tok, int n, struct nt_info *in)
{
	int64_t r;

	if (parse_i64(tok[2], &r) == 0 && r >= 0 && r < NT_MAX_RANKS) {
		in->nranks_lines++;
		if (r > in->max_rank)
			in->max_rank = (int)r;
	}
	/* The device name follows the "[bus id]" token. */
	for (int i = 3; i + 1 < n && !in->gpu[0]; i++) {
		size_t len = 0;

		if (tok[i][0] != '[')
			continue;
		for (int k = i + 1; k < n; k++) {
			int w = snprintf(in->gpu + len, sizeof in->gpu - len, "%s%s",
					 k > i + 1 ? " " : "", tok[k]);

			if (w < 0 || (size_t)w >= sizeof in->gpu - len)
				break;
			len += (size_t)w;
		}
	}
}

/* First pass: everything but the rows. */
static cvc_status scan(cvc_db *db, const char *path, struct nt_reader *rd,
		       struct nt_info *in)
{
	struct nt_layout lay;
	int in_table = 0, eof = 0;
	cvc_status st;

	default_layout(&lay);
	while (!(st = rd_line(db, path, rd, &eof)) && !eof) {
		char *tok[NT_MAX_TOKENS + 1];
		char *s = skip_prefix(rd->buf);
		int n;

		if (rd->too_long || !*s)
			continue;
		if (strstr(s, "Collective test concluded:")) {
			if (!in->op_footer[0])
				footer_op(s, in->op_footer, sizeof in->op_footer);
			continue;
		}
		if (*s != '#' && !isdigit((unsigned char)*s)) {
			if (!in->nccl_version[0]) {
				/* NCCL's own banner: "NCCL version 2.18.5+cuda12.2". */
				const char *v = strstr(s, "NCCL version ");

				if (v) {
					v += 13;
					snprintf(in->nccl_version, sizeof in->nccl_version, "%.*s",
						 (int)strcspn(v, "+ \t"), v);
				}
			}
			command_line(s, in);
			continue;
		}
		n = tokenize(s, tok, NT_MAX_TOKENS);
		if (n > NT_MAX_TOKENS)
			n = NT_MAX_TOKENS;
		if (n == 0)
			continue;
		if (strcmp(tok[0], "#") == 0 && n >= 2) {
			if (strcmp(tok[1], "nThread") == 0) {
				in->nthread = header_int(tok, n, "nThread");
				in->ngpus = header_int(tok, n, "nGpus");
			} else if (strcmp(tok[1], "Rank") == 0 && n >= 3) {
				rank_line(tok, n, in);
			} else if (strcmp(tok[1], "nccl-tests") == 0 && n >= 4 &&
				   strcmp(tok[2], "version") == 0) {
				snprintf(in->tests_version, sizeof in->tests_version, "%s", tok[3]);
				for (int i = 4; i < n; i++)
					if (strncmp(tok[i], "nccl-library=", 13) == 0)
						nccl_code(tok[i] + 13, in->nccl_version,
							  sizeof in->nccl_version);
			} else if (parse_header(tok, n, &lay)) {
				in_table = 1;
			}
			continue;
		}
		if (in_table && is_row(tok, n)) {
			struct nt_row r;

			/* Errors are reported by the second pass, in file order. */
			if (parse_row(NULL, path, rd->lineno, tok, n, &lay, &r))
				continue;
			if (!in->have_first) {
				snprintf(in->first_redop, sizeof in->first_redop, "%s",
					 r.redop ? r.redop : "none");
				in->first_root = (int)r.root;
				in->have_first = 1;
			}
			for (int h = 0; h < r.nhalf; h++)
				if (r.algbw[h] >= 1.0) {
					in->ratio_sum += r.busbw[h] / r.algbw[h];
					in->ratio_n++;
				}
		}
	}
	return st;
}

static int near(double x, double want)
{
	return fabs(x - want) <= 0.02 * want;
}

/*
 * The op when no name was printed: the bus bandwidth factor of each test
 * (notes (e)) against the measured busbw/algbw, then redop/root.  Writes
 * the reasoning into why.
 */
static const char *infer_op(const struct nt_info *in, int nranks, char *why, size_t cap)
{
	double ratio = in->ratio_n ? in->ratio_sum / in->ratio_n : 0;
	int reducing = in->have_first && strcmp(in->first_redop, "none") != 0;
	int rooted = in->have_first && in->first_root >= 0;
	const char *op = NULL;

	if (in->ratio_n && nranks > 2 && near(ratio, 2.0 * (nranks - 1) / nranks))
		op = "all_reduce";
	else if (in->ratio_n && nranks > 1 && nranks != 2 && near(ratio, (double)(nranks - 1) / nranks))
		op = reducing ? "reduce_scatter" : "all_gather";
	else if (in->ratio_n && near(ratio, 1.0))
		op = rooted ? (reducing ? "reduce" : "broadcast") : (nranks == 2 && reducing ? "all_reduce" : "sendrecv");
	else if (rooted)
		op = reducing ? "reduce" : "broadcast";
	else if (in->have_first)
		op = reducing ? "all_reduce" : "all_gather";
	if (!op) {
		snprintf(why, cap, "no evidence");
		return "unknown";
	}
	snprintf(why, cap, "inferred from columns: busbw/algbw %.3f over %d ranks, redop %s, root %d",
		 ratio, nranks, in->have_first ? in->first_redop : "?", in->have_first ? in->first_root : -1);
	return op;
}

static cvc_status store_rows(cvc_db *db, int64_t run_id, const char *path,
			     struct nt_reader *rd, const char *op, int nranks,
			     const cvc_import_opts *opts, long long total_lines,
			     int64_t *nrows, int64_t *nlines)
{
	struct nt_layout lay;
	int in_table = 0, eof = 0;
	cvc_status st;

	default_layout(&lay);
	while (!(st = rd_line(db, path, rd, &eof)) && !eof) {
		char *tok[NT_MAX_TOKENS + 1];
		char *s = skip_prefix(rd->buf);
		struct nt_row r;
		int n;

		if (rd->too_long || (*s != '#' && !isdigit((unsigned char)*s)))
			continue;
		n = tokenize(s, tok, NT_MAX_TOKENS);
		if (n == 0)
			continue;
		if (strcmp(tok[0], "#") == 0) {
			if (n <= NT_MAX_TOKENS && parse_header(tok, n, &lay))
				in_table = 1;
			continue;
		}
		if (!in_table || !is_row(tok, n))
			continue;
		if (n > NT_MAX_TOKENS)
			return cvc_db_fail(db, CVC_ERR_FORMAT,
					   "'%s': line %lld: expected %d columns, found more than %d",
					   path, rd->lineno, lay.ncols, NT_MAX_TOKENS);
		if ((st = parse_row(db, path, rd->lineno, tok, n, &lay, &r)))
			return st;
		(*nlines)++;
		for (int h = 0; h < r.nhalf; h++) {
			cvc_nccltest_row row = {
				.run_id = run_id, .op = op, .nranks = nranks, .size_bytes = r.size,
				.count = r.count, .dtype = r.type, .redop = r.redop, .root = (int)r.root,
				.in_place = h, .time_us = r.time[h], .algbw_gbps = r.algbw[h],
				.busbw_gbps = r.busbw[h], .wrong = r.wrong[h]
			};

			if ((st = cvc_db_nccltest_add(db, &row)))
				return st;
			(*nrows)++;
		}
		imp_progress(opts, path, rd->lineno, total_lines);
	}
	return st;
}

cvc_status cvc_import_nccl_tests(cvc_db *db, int64_t run_id, const char *path,
				 const cvc_import_opts *opts, cvc_import_stats *stats)
{
	struct nt_reader rd = {.cap = NT_LINE_MAX};
	struct nt_info in = {.max_rank = -1};
	char why[256], nr_why[128], key[300], tool[64];
	const char *op, *base = strrchr(path, '/');
	int nranks = 0;
	long long total;
	int64_t nrows = 0, nlines = 0;
	cvc_run_info ri = {0};
	cvc_status st;

	base = base ? base + 1 : path;
	rd.buf = malloc(rd.cap);
	if (!rd.buf)
		return cvc_db_fail(db, CVC_ERR_NOMEM, "out of memory");
	rd.gz = gzopen(imp_open_name(path), "rb"); /* a pipe: its copy */
	if (!rd.gz) {
		st = cvc_db_fail(db, CVC_ERR_IO, "'%s': cannot open: %s", path, strerror(errno));
		goto out;
	}
	if ((st = scan(db, path, &rd, &in)))
		goto out;

	if (in.nranks_lines > 0) {
		nranks = in.max_rank + 1 > in.nranks_lines ? in.max_rank + 1 : in.nranks_lines;
		snprintf(nr_why, sizeof nr_why, "%d rank lines", in.nranks_lines);
	} else if (in.ngpus > 0) {
		int procs = in.cmd_np > 0 ? in.cmd_np : 1;

		nranks = in.ngpus * (in.nthread > 0 ? in.nthread : 1) * procs;
		snprintf(nr_why, sizeof nr_why, "nGpus %d x nThread %d x %d processes", in.ngpus,
			 in.nthread > 0 ? in.nthread : 1, procs);
	} else if (in.cmd_g > 0 || in.cmd_np > 0) {
		int g = in.cmd_g > 0 ? in.cmd_g : 1, t = in.cmd_t > 0 ? in.cmd_t : 1;
		int procs = in.cmd_np > 0 ? in.cmd_np : 1;

		nranks = g * t * procs;
		snprintf(nr_why, sizeof nr_why, "command line: -g %d -t %d, %d processes", g, t,
			 procs);
	} else {
		snprintf(nr_why, sizeof nr_why, "unknown");
	}

	if (in.op_footer[0]) {
		op = in.op_footer;
		snprintf(why, sizeof why, "footer 'Collective test concluded'");
	} else if (in.op_cmd[0]) {
		op = in.op_cmd;
		snprintf(why, sizeof why, "binary name on the command line");
	} else {
		op = infer_op(&in, nranks, why, sizeof why);
	}

	if (gzrewind(rd.gz) != 0) {
		st = cvc_db_fail(db, CVC_ERR_IO, "'%s': cannot rewind", path);
		goto out;
	}
	total = rd.lineno;
	rd.lineno = 0;
	if ((st = store_rows(db, run_id, path, &rd, op, nranks, opts, total, &nrows, &nlines)))
		goto out;
	if (nrows == 0) {
		st = cvc_db_fail(db, CVC_ERR_FORMAT,
				 "'%s': line %lld: no nccl-tests result rows found (expected a "
				 "'# size count type ...' header followed by rows)",
				 path, rd.lineno);
		goto out;
	}

	ri.format = "nccl-tests";
	ri.source = path;
	if (in.tests_version[0]) {
		snprintf(tool, sizeof tool, "nccl-tests %s", in.tests_version);
		ri.tool_version = tool;
	} else {
		ri.tool_version = "nccl-tests";
	}
	ri.gpu_model = in.gpu[0] ? in.gpu : NULL;
	ri.nccl_version = in.nccl_version[0] ? in.nccl_version : NULL;
	if ((st = cvc_db_run_merge(db, run_id, &ri)))
		goto out;
	snprintf(key, sizeof key, "nccl_tests.op[%s]", base);
	if ((st = cvc_db_run_meta_set(db, run_id, key, op)))
		goto out;
	snprintf(key, sizeof key, "nccl_tests.op_evidence[%s]", base);
	if ((st = cvc_db_run_meta_set(db, run_id, key, why)))
		goto out;
	snprintf(key, sizeof key, "nccl_tests.nranks_evidence[%s]", base);
	if ((st = cvc_db_run_meta_set(db, run_id, key, nr_why)))
		goto out;
	if ((st = cvc_db_source_add(db, run_id, path, "nccl-tests", -1, nlines, NULL)))
		goto out;
	if (stats) {
		stats->events += nlines;
		stats->nccl_rows += nrows;
	}
out:
	if (rd.gz)
		gzclose(rd.gz);
	free(rd.buf);
	return st;
}
