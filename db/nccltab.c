/*
 * nccltab.c - the one reader of nccl-tests logs (cvc_nccltab.h), shared by
 * the importer (profiler/import/nccltests.c) and `cvc fit` on files
 * (models/csvtab.c), so both see the same rows, rank count and GPUs per
 * node.
 *
 * One pass over the file keeps the rows (a sweep is tens of rows) and the
 * evidence the log prints around them; the rank count and the operation are
 * decided after the last line, since the footer and the bandwidth ratio
 * come after the table.  Table rows follow nccl-tests' printf: size,
 * count, type, redop, root, then time/algbw/busbw/#wrong out-of-place and
 * again in-place; the header line names the columns, so older versions
 * without redop/root are read through it.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <zlib.h>

#include "cvc/cvc_base.h"
#include "cvc/cvc_nccltab.h"
#include "db/nccltab_int.h"

/* Log lines are short; prose in markdown may be longer but is skipped. */
#define NT_LINE_MAX (64 * 1024)
#define NT_MAX_TOKENS 32

/* Operations nccl-tests ships, as in the binary names (<op>_perf). */
static const char *const nt_ops[] = {
	"all_reduce", "all_gather", "reduce_scatter", "alltoall", "broadcast",
	"reduce", "sendrecv", "scatter", "gather", "hypercube"
};
enum { NT_NOPS = sizeof nt_ops / sizeof nt_ops[0] };

enum nt_col {
	C_NONE, C_SIZE, C_COUNT, C_TYPE, C_REDOP, C_ROOT, C_TIME, C_ALGBW, C_BUSBW, C_WRONG
};

static const char *const col_names[] = {
	[C_NONE] = "?", [C_SIZE] = "size", [C_COUNT] = "count", [C_TYPE] = "type",
	[C_REDOP] = "redop", [C_ROOT] = "root", [C_TIME] = "time", [C_ALGBW] = "algbw",
	[C_BUSBW] = "busbw", [C_WRONG] = "#wrong"
};

struct layout {
	enum nt_col col[NT_MAX_TOKENS];
	int ncols;
};


struct reader {
	gzFile gz;
	char *buf;
	long long lineno;
	int too_long;
	const char *name;
	char *err;
	size_t errlen;
	int64_t next_check;    /* uncompressed offset of the next inflate check */
};

static cvc_status fail(struct reader *r, cvc_status st, const char *fmt, ...)
{
	va_list ap;
	int n = snprintf(r->err, r->errlen, "'%s': line %lld: ", r->name, r->lineno);

	va_start(ap, fmt);
	if (n >= 0 && (size_t)n < r->errlen)
		vsnprintf(r->err + n, r->errlen - (size_t)n, fmt, ap);
	va_end(ap);
	return st;
}

/* Next line into r->buf without its line end; *eof at the end. */
static cvc_status next_line(struct reader *r, int *eof)
{
	size_t len;

	*eof = 0;
	if (!gzgets(r->gz, r->buf, NT_LINE_MAX)) {
		char m[256];
		int zerr;

		/* a log cut mid-stream still has its complete lines: the cut
		 * (Z_BUF_ERROR) reads as the end */
		gzerror(r->gz, &zerr);
		if (zerr == Z_OK || zerr == Z_BUF_ERROR) {
			*eof = 1;
			return CVC_OK;
		}
		r->lineno++;
		return fail(r, cvc_gz_status(r->gz, m, sizeof m), "%s", m);
	}
	r->lineno++;
	if ((int64_t)gztell(r->gz) >= r->next_check) {
		char m[256];
		cvc_status st = cvc_gz_inflate_check(r->gz, (int64_t)gztell(r->gz), m, sizeof m);

		if (st)
			return fail(r, st, "%s", m);
		r->next_check = (int64_t)gztell(r->gz) + (1 << 20);
	}
	len = strlen(r->buf);
	r->too_long = 0;
	if (len == NT_LINE_MAX - 1 && r->buf[len - 1] != '\n') {
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

/* Splits s in place at blanks; returns the token count, max + 1 when more. */
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

/* The log's words hold no blanks: cvc_base.h's strict parsers over all of one word. */
static int parse_i64(const char *s, int64_t *v)
{
	return cvc_parse_i64(s, INT64_MIN, INT64_MAX, v) == CVC_OK ? 0 : -1;
}

static int parse_num(const char *s, double *v)
{
	return cvc_parse_f64(s, v) == CVC_OK ? 0 : -1;
}

/*
 * Skips what launchers and documents put before a log line: blanks,
 * markdown quoting ("> "), "(head, rank=0, pid=1) " (SkyPilot), "[1,0]
 * <stdout>:" (mpirun --tag-output), "0: " (srun -l), and "host: " when a
 * '#' line follows it (pdsh).  Rows behind other prefixes are found by
 * their last columns (row_at()).
 */
static char *skip_prefix(char *s)
{
	for (;;) {
		char *p;

		while (*s == ' ' || *s == '\t' || *s == '>')
			s++;
		if (*s == '(' && (p = strchr(s, ')')) && (p[1] == ' ' || p[1] == '[' || !p[1])) {
			s = p + 1;
			continue;
		}
		if (*s == '[' && (p = strchr(s, ']'))) {
			char *q = p + 1;

			if (strncmp(q, "<stdout>", 8) == 0 || strncmp(q, "<stderr>", 8) == 0)
				q += 8;
			if (*q == ':') {
				s = q + 1;
				continue;
			}
		}
		if (isdigit((unsigned char)*s)) {
			p = s;
			while (isdigit((unsigned char)*p))
				p++;
			if (*p == ':' && (p[1] == ' ' || p[1] == '\t' || p[1] == '#' || !p[1])) {
				s = p + 1;
				continue;
			}
		}
		if (*s && *s != '#' && (p = strchr(s, ':')) && p - s < 64) {
			char *q = p + 1;
			const char *c = s;

			while (c < p && *c != ' ' && *c != '\t')
				c++;
			while (*q == ' ' || *q == '\t')
				q++;
			if (c == p && *q == '#') {
				s = q;
				continue;
			}
		}
		return s;
	}
}

/*
 * Finds "<op>_perf" in s as a word (path prefix allowed), copying the op.
 * Longest op name first so "reduce" does not shadow "reduce_scatter".
 */
int nt_find_op(const char *s, char *op, size_t cap)
{
	for (const char *p = strstr(s, "_perf"); p; p = strstr(p + 1, "_perf")) {
		char after = p[5];
		const char *b = p;
		size_t len;

		if (after && after != '_' && !isspace((unsigned char)after) && after != '`' &&
		    after != '"' && after != '\'' && after != ';')
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

/* A positive count below NT_MAX_RANKS, or 0. */
static int count_of(const char *s)
{
	int64_t v;

	return parse_i64(s, &v) == 0 && v > 0 && v < NT_MAX_RANKS ? (int)v : 0;
}

/* Value of "-X N", "--long N" or "--long=N" in a command line, or 0. */
static int cmd_opt(char **tok, int n, const char *shortf, const char *longf)
{
	size_t ll = longf ? strlen(longf) : 0;

	for (int i = 0; i < n; i++) {
		if (longf && strncmp(tok[i], longf, ll) == 0 && tok[i][ll] == '=')
			return count_of(tok[i] + ll + 1);
		if (i + 1 < n && (strcmp(tok[i], shortf) == 0 || (longf && strcmp(tok[i], longf) == 0)))
			return count_of(tok[i + 1]);
	}
	return 0;
}

/* Reads "key value" pairs of the "# nThread 1 nGpus 1 ..." header. */
static int header_int(char **tok, int n, const char *key)
{
	for (int i = 0; i + 1 < n; i++)
		if (strcmp(tok[i], key) == 0)
			return count_of(tok[i + 1]);
	return 0;
}

/* A table header "# size count type redop root time algbw busbw #wrong ...". */
static int parse_header(char **tok, int n, struct layout *lay)
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
static void default_layout(struct layout *lay)
{
	static const enum nt_col d[] = {
		C_SIZE, C_COUNT, C_TYPE, C_REDOP, C_ROOT, C_TIME, C_ALGBW, C_BUSBW, C_WRONG,
		C_TIME, C_ALGBW, C_BUSBW, C_WRONG
	};

	lay->ncols = (int)(sizeof d / sizeof d[0]);
	memcpy(lay->col, d, sizeof d);
}

/*
 * The data types nccl-tests prints (src/common.cu test_typenames: NCCL 1's
 * char and int; NCCL 2's int8 .. double, bfloat16 from NCCL 2.10, the fp8
 * ones from 2.24): a word outside them is a damaged row, not a type.
 */
int nt_known_type(const char *w)
{
	static const char *const types[] = {
		"int8",  "uint8", "int32",  "uint32",   "int64",  "uint64", "half",
		"float", "double", "bfloat16", "f8e4m3", "f8e5m2", "char",   "int",
	};

	for (size_t i = 0; i < sizeof types / sizeof types[0]; i++)
		if (strcmp(w, types[i]) == 0)
			return 1;
	return 0;
}

/* Parses one data row against the layout; on error names the column. */
static cvc_status parse_row(struct reader *rd, char **tok, int n, const struct layout *lay,
			    cvc_nt_row *r)
{
	int half = -1;

	memset(r, 0, sizeof *r);
	r->root = -1;
	r->wrong[0] = r->wrong[1] = -1;
	r->line = rd->lineno;
	if (n != lay->ncols)
		return fail(rd, CVC_ERR_FORMAT, "expected %d columns, found %d", lay->ncols, n);
	for (int i = 0; i < n; i++) {
		enum nt_col c = lay->col[i];
		const char *w = tok[i];
		int bad = 0, neg = 0;

		switch (c) {
		case C_SIZE:
			bad = parse_i64(w, &r->size);
			neg = !bad && r->size < 0;
			break;
		case C_COUNT:
			bad = parse_i64(w, &r->count);
			neg = !bad && r->count < 0;
			break;
		case C_TYPE:
			if (!nt_known_type(w))
				return fail(rd, CVC_ERR_FORMAT, "column 'type': expected an NCCL data "
					    "type (int8 .. double, bfloat16, f8e4m3, f8e5m2), got '%.32s'",
					    w);
			snprintf(r->type, sizeof r->type, "%s", w);
			break;
		case C_REDOP: snprintf(r->redop, sizeof r->redop, "%s", w); break;
		case C_ROOT: bad = parse_i64(w, &r->root); break;
		case C_TIME:
			if (++half > 1)
				return fail(rd, CVC_ERR_FORMAT, "expected at most two time columns");
			bad = parse_num(w, &r->time[half]);
			/* a collective takes time: 0 would make its bandwidth infinite */
			if (!bad && !(r->time[half] > 0))
				return fail(rd, CVC_ERR_FORMAT, "column 'time': expected a number > 0");
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

				/* Old versions print a max error like 0e+00 here; past
				 * int64 the cast is undefined (found by fuzzing). */
				bad = parse_num(w, &x) || x < 0 || x >= 9.2e18;
				r->wrong[half] = bad ? -1 : (int64_t)x;
			}
			break;
		case C_NONE: break;
		}
		if (bad || neg)
			return fail(rd, CVC_ERR_FORMAT, "column '%s': expected a number%s",
				    col_names[c], neg ? " >= 0" : "");
	}
	r->nhalf = half + 1;
	if (r->nhalf == 0)
		return fail(rd, CVC_ERR_FORMAT, "expected a 'time' column");
	return CVC_OK;
}

/* A row's leading integer, signed too: parse_row() then names a negative
 * one, which read as prose was dropped without a word. */
static int int_word(const char *s)
{
	return all_digits(s) || ((*s == '-' || *s == '+') && all_digits(s + 1));
}

/*
 * Where a result row starts in tok[0..n): 0 when the line starts with two
 * integers (size, count); else the start of its last ncols tokens when
 * those do (a row behind a prefix of words, "host: 1024 16 float ...");
 * -1 for prose ("8 GPUs ..." has no second integer).
 */
static int row_at(char **tok, int n, int ncols)
{
	if (n >= 2 && int_word(tok[0]) && int_word(tok[1]))
		return 0;
	if (n > ncols && ncols >= 2 && int_word(tok[n - ncols]) && int_word(tok[n - ncols + 1]))
		return n - ncols;
	return -1;
}

/* 21805 -> "2.18.5" (NCCL_VERSION_CODE; before 2.9, 2903 -> "2.9.3"). */
void nt_nccl_code(int64_t v, char *out, size_t cap)
{
	if (v <= 0)
		return;
	if (v >= 10000)
		snprintf(out, cap, "%lld.%lld.%lld", (long long)(v / 10000),
			 (long long)(v / 100 % 100), (long long)(v % 100));
	else
		snprintf(out, cap, "%lld.%lld.%lld", (long long)(v / 1000),
			 (long long)(v / 100 % 10), (long long)(v % 100));
}

/* Op of a "# Collective test concluded|starting: <binary>" line. */
void nt_banner_op(const char *b, char *op, size_t cap)
{
	const char *e;

	if (nt_find_op(b, op, cap))
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

/* Slots of "-H a:8,b:8" / "--host a:8,b:8": the per-host count when all agree. */
static int host_slots(char **tok, int n, int *nodes)
{
	for (int i = 0; i + 1 < n; i++) {
		const char *s = tok[i + 1];
		int per = 0, hosts = 0;

		if (strcmp(tok[i], "-H") != 0 && strcmp(tok[i], "--host") != 0)
			continue;
		while (*s) {
			const char *c = strchr(s, ':'), *e = strchr(s, ',');
			int v;

			if (!e)
				e = s + strlen(s);
			if (!c || c > e)
				return 0;
			v = atoi(c + 1);
			if (v <= 0 || (per && v != per))
				return 0;
			per = v;
			hosts++;
			s = *e ? e + 1 : e;
		}
		*nodes = hosts;
		return per;
	}
	return 0;
}

/* NCCL_ALGO forced by an environment setting or NCCL's INFO line. */
void nt_algo_of(const char *s, char *algo, size_t cap)
{
	const char *p = strstr(s, "NCCL_ALGO=");
	size_t n;

	if (p)
		p += 10;
	else if ((p = strstr(s, "NCCL_ALGO set by environment to ")))
		p += 32;
	else
		return;
	n = strcspn(p, " \t\"',;");
	if (n && n < cap)
		snprintf(algo, cap, "%.*s", (int)n, p);
}

/* Launcher options and the binary of a command line. */
static void command_line(char *s, struct nt_info *in, cvc_nt_log *log)
{
	char *tok[NT_MAX_TOKENS + 1];
	int mpi = strstr(s, "mpirun") || strstr(s, "mpiexec");
	int srun = strstr(s, "srun") != NULL;
	int binary = !in->op_cmd[0] && nt_find_op(s, in->op_cmd, sizeof in->op_cmd);
	int n, nodes = 0, per;

	if (!log->algo[0])
		nt_algo_of(s, log->algo, sizeof log->algo);
	n = tokenize(s, tok, NT_MAX_TOKENS);
	if (n > NT_MAX_TOKENS)
		n = NT_MAX_TOKENS;
	if (binary) {
		in->cmd_g = cmd_opt(tok, n, "-g", "--ngpus");
		in->cmd_t = cmd_opt(tok, n, "-t", "--nthreads");
	}
	if (!mpi && !srun)
		return;
	if (!in->cmd_np)
		in->cmd_np = mpi ? cmd_opt(tok, n, "-np", "--np") : cmd_opt(tok, n, "-n", "--ntasks");
	if (!in->cmd_np && mpi)
		in->cmd_np = cmd_opt(tok, n, "-n", "--n");
	if (!in->cmd_pernode) {
		/* -N is ranks per node to Open MPI, nodes to Slurm */
		in->cmd_pernode = mpi ? cmd_opt(tok, n, "-N", "--npernode") : 0;
		if (!in->cmd_pernode)
			in->cmd_pernode = cmd_opt(tok, n, "-npernode", "--ntasks-per-node");
		if (!in->cmd_pernode && (per = host_slots(tok, n, &nodes)) > 0) {
			in->cmd_pernode = per;
			if (!in->cmd_nodes)
				in->cmd_nodes = nodes;
		}
	}
	if (!in->cmd_nodes && srun)
		in->cmd_nodes = cmd_opt(tok, n, "-N", "--nodes");
}

/* "#  Rank  0 Group  0 Pid 6899 on host device  0 [0000:04:00] NAME". */
static void rank_line(char **tok, int n, struct nt_info *in, cvc_nt_log *log)
{
	int64_t r;

	if (parse_i64(tok[2], &r) == 0 && r >= 0 && r < NT_MAX_RANKS) {
		in->nranks_lines++;
		if (r > in->max_rank)
			in->max_rank = (int)r;
	}
	for (int i = 3; i + 1 < n; i++) {
		int known = 0;

		if (strcmp(tok[i], "on") != 0)
			continue;
		for (int h = 0; h < in->nhosts && !known; h++)
			known = strcmp(in->hosts[h], tok[i + 1]) == 0;
		if (!known) {
			if (in->nhosts < NT_MAX_HOSTS)
				snprintf(in->hosts[in->nhosts++], sizeof in->hosts[0], "%s", tok[i + 1]);
			else
				in->hosts_full = 1;
		}
		break;
	}
	/* The device name follows the "[bus id]" token. */
	for (int i = 3; i + 1 < n && !log->gpu[0]; i++) {
		size_t len = 0;

		if (tok[i][0] != '[')
			continue;
		for (int k = i + 1; k < n; k++) {
			int w = snprintf(log->gpu + len, sizeof log->gpu - len, "%s%s",
					 k > i + 1 ? " " : "", tok[k]);

			if (w < 0 || (size_t)w >= sizeof log->gpu - len)
				break;
			len += (size_t)w;
		}
	}
}

static cvc_status push_row(struct reader *rd, cvc_nt_log *log, const cvc_nt_row *r)
{
	if (log->nrows >= CVC_NT_MAX_ROWS)
		return fail(rd, CVC_ERR_FORMAT, "expected at most %d result rows", CVC_NT_MAX_ROWS);
	if (cvc_grow(&log->rows, &log->cap, log->nrows + 1, sizeof *log->rows, 64) != CVC_OK) {
		snprintf(rd->err, rd->errlen, "out of memory");
		return CVC_ERR_NOMEM;
	}
	log->rows[log->nrows++] = *r;
	return CVC_OK;
}

/* One line: evidence or a row. */
static cvc_status take_line(struct reader *rd, struct nt_info *in, struct layout *lay,
			    int *in_table, cvc_nt_log *log)
{
	char *tok[NT_MAX_TOKENS + 1], *s = skip_prefix(rd->buf), *p;
	int n, at;
	cvc_nt_row r;
	cvc_status st;

	if (rd->too_long || !*s)
		return CVC_OK;
	if ((p = strstr(s, "Collective test concluded:"))) {
		if (!in->op_footer[0])
			nt_banner_op(p + 26, in->op_footer, sizeof in->op_footer);
		in->banner = 1;
		in->footer = 1;
		return CVC_OK;
	}
	if ((p = strstr(s, "Collective test starting:"))) {
		if (!in->op_footer[0])
			nt_banner_op(p + 25, in->op_footer, sizeof in->op_footer);
		in->banner = 1;
		return CVC_OK;
	}
	if (*s != '#') {
		/* NCCL's own banner: "NCCL version 2.18.5+cuda12.2". */
		const char *v = strstr(s, "NCCL version ");

		if (v && !log->nccl_version[0]) {
			v += 13;
			snprintf(log->nccl_version, sizeof log->nccl_version, "%.*s",
				 (int)strcspn(v, "+ \t"), v);
		}
		if (!isdigit((unsigned char)*s))
			in->prose++;
		if (!isdigit((unsigned char)*s) || !*in_table) {
			char copy[4096];

			/* a copy: the row test below tokenizes s itself */
			snprintf(copy, sizeof copy, "%s", s);
			command_line(copy, in, log);
		}
	}
	n = tokenize(s, tok, NT_MAX_TOKENS);
	if (n == 0)
		return CVC_OK;
	if (strcmp(tok[0], "#") == 0) {
		if (n > NT_MAX_TOKENS)
			n = NT_MAX_TOKENS;
		if (n >= 2 && strcmp(tok[1], "nThread") == 0) {
			in->nthread = header_int(tok, n, "nThread");
			in->ngpus = header_int(tok, n, "nGpus");
			for (int i = 1; i + 1 < n; i++)
				if (!strcmp(tok[i], "maxBytes"))
					(void)parse_i64(tok[i + 1], &in->max_bytes);
			in->banner = 1;
		} else if (n >= 3 && ((strcmp(tok[1], "Avg") == 0 && strcmp(tok[2], "bus") == 0) ||
				      (strcmp(tok[1], "Out") == 0 && strcmp(tok[2], "of") == 0))) {
			in->footer = 1;
		} else if (n >= 3 && strcmp(tok[1], "Rank") == 0) {
			rank_line(tok, n, in, log);
			in->banner = 1;
		} else if (n >= 4 && strcmp(tok[1], "nccl-tests") == 0 &&
			   strcmp(tok[2], "version") == 0) {
			int64_t code;

			in->banner = 1;
			snprintf(log->tests_version, sizeof log->tests_version, "%s", tok[3]);
			for (int i = 4; i < n; i++)
				if (strncmp(tok[i], "nccl-library=", 13) == 0 &&
				    parse_i64(tok[i] + 13, &code) == 0)
					nt_nccl_code(code, log->nccl_version,
						     sizeof log->nccl_version);
		} else if (parse_header(tok, n, lay)) {
			*in_table = 1;
		}
		return CVC_OK;
	}
	if (!*in_table)
		return CVC_OK;
	if (n > NT_MAX_TOKENS) {
		if (int_word(tok[0]) && int_word(tok[1]))
			return fail(rd, CVC_ERR_FORMAT, "expected %d columns, found more than %d",
				    lay->ncols, NT_MAX_TOKENS);
		return CVC_OK;
	}
	if ((at = row_at(tok, n, lay->ncols)) < 0)
		return CVC_OK;
	if ((st = parse_row(rd, tok + at, n - at, lay, &r)))
		return st;
	if (!in->have_first) {
		snprintf(in->first_redop, sizeof in->first_redop, "%s", r.redop[0] ? r.redop : "none");
		in->first_root = (int)r.root;
		in->have_first = 1;
	}
	for (int h = 0; h < r.nhalf; h++)
		if (r.algbw[h] >= 1.0) {
			in->busbw_sum += r.busbw[h];
			in->algbw_sum += r.algbw[h];
			in->ratio_rows++;
		}
	return push_row(rd, log, &r);
}

void cvc_nt_log_release(cvc_nt_log *log)
{
	if (!log)
		return;
	free(log->rows);
	memset(log, 0, sizeof *log);
}

/*
 * Whether the file's first byte that is not blank is '{': nccl-tests' -J
 * file then, a log otherwise.  The stream is put back at its start.  A
 * megabyte of blanks is left to the log reader.
 */
static cvc_status first_brace(struct reader *rd, int *brace)
{
	int c, n = 0;

	while ((c = gzgetc(rd->gz)) == ' ' || c == '\t' || c == '\n' || c == '\r')
		if (++n > (1 << 20))
			break;
	*brace = c == '{';
	if (c == -1) {
		char m[256];
		int zerr;

		/* zlib's own failure (out of memory inflating) is the answer; a
		 * cut stream is read as far as it goes, as next_line() does */
		gzerror(rd->gz, &zerr);
		if (zerr != Z_OK && zerr != Z_BUF_ERROR) {
			rd->lineno = 1;
			return fail(rd, cvc_gz_status(rd->gz, m, sizeof m), "%s", m);
		}
	}
	if (gzrewind(rd->gz) != 0)
		return cvc_errf(rd->err, rd->errlen, CVC_ERR_IO,
				"'%s': cannot read it again from its start", rd->name);
	return CVC_OK;
}

cvc_status cvc_nt_read(const char *open_path, const char *name, cvc_nt_log *out,
		       void (*progress)(void *arg, long long lines), void *arg, char *err,
		       size_t errlen)
{
	struct reader rd = {0};
	struct nt_info *in = NULL;
	struct layout lay;
	int in_table = 0, eof = 0, brace = 0;
	cvc_status st = CVC_OK;

	if (!open_path || !out || !err || !errlen)
		return CVC_ERR_USAGE;
	memset(out, 0, sizeof *out);
	err[0] = '\0';
	rd.name = name ? name : open_path;
	rd.err = err;
	rd.errlen = errlen;
	rd.buf = malloc(NT_LINE_MAX);
	in = calloc(1, sizeof *in);
	if (!rd.buf || !in) {
		snprintf(err, errlen, "out of memory");
		st = CVC_ERR_NOMEM;
		goto out;
	}
	in->max_rank = -1;
	default_layout(&lay);
	errno = 0;
	rd.gz = gzopen(open_path, "rb");
	if (!rd.gz) {
		int e = errno;

		snprintf(err, errlen, "'%s': cannot open: %s", rd.name,
			 e ? strerror(e) : "out of memory");
		st = e ? cvc_open_status(e) : CVC_ERR_NOMEM;
		goto out;
	}
	gzbuffer(rd.gz, 1 << 16);
	if ((st = first_brace(&rd, &brace)))
		goto out;
	if (brace) {
		st = nt_json_read(rd.gz, rd.name, out, progress, arg, err, errlen);
		goto out;
	}
	while (!(st = next_line(&rd, &eof)) && !eof) {
		if ((st = take_line(&rd, in, &lay, &in_table, out)))
			goto out;
		if (progress && rd.lineno % 4096 == 0)
			progress(arg, (long long)gztell(rd.gz));
	}
	if (st)
		goto out;
	out->nlines = rd.lineno;
	/* A document that quotes a row or two of somebody's table amid its prose
	 * (an index, a README) is not a run: without a line only nccl-tests
	 * prints, a sweep of at least 3 sizes is asked for there (issue 14). */
	if (out->nrows > 0 && out->nrows < 3 && !in->banner && in->prose > 10) {
		st = fail(&rd, CVC_ERR_NOTFOUND,
			  "expected an nccl-tests log: its banner (# nThread, #  Rank, # Collective "
			  "test) or a table of at least 3 sizes, found %zu row%s quoted in a document",
			  out->nrows, out->nrows == 1 ? "" : "s");
		goto out;
	}
	if (out->nrows == 0) {
		/* no table header at all: not an nccl-tests log */
		st = fail(&rd, in_table ? CVC_ERR_FORMAT : CVC_ERR_NOTFOUND,
			  "expected an nccl-tests result table (a '# size count type ...' header "
			  "followed by rows)");
		goto out;
	}
	if (in->op_footer[0]) {
		snprintf(out->op, sizeof out->op, "%s", in->op_footer);
		snprintf(out->op_evidence, sizeof out->op_evidence, "banner 'Collective test'");
	} else if (in->op_cmd[0]) {
		snprintf(out->op, sizeof out->op, "%s", in->op_cmd);
		snprintf(out->op_evidence, sizeof out->op_evidence, "binary name on the command line");
	} else {
		nt_infer_op(in, out);
	}
	nt_decide_ranks(in, out);
	nt_decide_per_node(in, out);
	/* nccl-tests ends a finished sweep with its average bus bandwidth; a
	 * log of a run that stopped (NVIDIA/nccl-tests #322: 1024 ranks, the
	 * last rows then 38 lines of failures) has none, and rows past the
	 * header's maxBytes were not printed by that run */
	{
		int64_t top = 0;

		for (size_t i = 0; i < out->nrows; i++)
			top = out->rows[i].size > top ? out->rows[i].size : top;
		if (in->banner && !in->footer)
			snprintf(out->incomplete, sizeof out->incomplete,
				 "no footer ('# Out of bounds values', '# Avg bus bandwidth'): the run "
				 "may have stopped before the end of its sweep");
		else if (in->max_bytes > 0 && top > in->max_bytes)
			snprintf(out->incomplete, sizeof out->incomplete,
				 "rows up to %lld bytes past the header's maxBytes %lld: the table "
				 "is not one run's", (long long)top, (long long)in->max_bytes);
	}
out:
	if (rd.gz)
		gzclose(rd.gz);
	free(rd.buf);
	free(in);
	return st;
}
