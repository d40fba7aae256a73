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

/* Log lines are short; prose in markdown may be longer but is skipped. */
#define NT_LINE_MAX (64 * 1024)
#define NT_MAX_TOKENS 32
#define NT_MAX_RANKS (1 << 20)
#define NT_MAX_HOSTS 256

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

/* Evidence seen on the way. */
struct info {
	char op_footer[64], op_cmd[64];
	int nranks_lines, max_rank;
	int nthread, ngpus;          /* "# nThread 1 nGpus 1 ..." */
	int cmd_g, cmd_t, cmd_np;    /* -g / -t of the binary, launcher -np */
	int cmd_pernode, cmd_nodes;  /* launcher ranks per node, nodes */
	char hosts[NT_MAX_HOSTS][64];
	int nhosts, hosts_full;
	double busbw_sum, algbw_sum; /* rows with algbw >= 1 */
	int ratio_rows;
	char first_redop[16];
	int first_root, have_first;
	int banner;                  /* a line only nccl-tests prints */
	int footer;                  /* "# Avg bus bandwidth" and its kin: the sweep ended */
	int64_t max_bytes;           /* the header's maxBytes, 0 unknown */
	long long prose;             /* text lines that are neither '#' nor rows */
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
static int find_op(const char *s, char *op, size_t cap)
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
		case C_TYPE: snprintf(r->type, sizeof r->type, "%s", w); break;
		case C_REDOP: snprintf(r->redop, sizeof r->redop, "%s", w); break;
		case C_ROOT: bad = parse_i64(w, &r->root); break;
		case C_TIME:
			if (++half > 1)
				return fail(rd, CVC_ERR_FORMAT, "expected at most two time columns");
			bad = parse_num(w, &r->time[half]);
			neg = !bad && r->time[half] < 0;
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

/* Op of a "# Collective test concluded|starting: <binary>" line. */
static void banner_op(const char *b, char *op, size_t cap)
{
	const char *e;

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
static void algo_of(const char *s, char *algo, size_t cap)
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
static void command_line(char *s, struct info *in, cvc_nt_log *log)
{
	char *tok[NT_MAX_TOKENS + 1];
	int mpi = strstr(s, "mpirun") || strstr(s, "mpiexec");
	int srun = strstr(s, "srun") != NULL;
	int binary = !in->op_cmd[0] && find_op(s, in->op_cmd, sizeof in->op_cmd);
	int n, nodes = 0, per;

	if (!log->algo[0])
		algo_of(s, log->algo, sizeof log->algo);
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
static void rank_line(char **tok, int n, struct info *in, cvc_nt_log *log)
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
static cvc_status take_line(struct reader *rd, struct info *in, struct layout *lay,
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
			banner_op(p + 26, in->op_footer, sizeof in->op_footer);
		in->banner = 1;
		in->footer = 1;
		return CVC_OK;
	}
	if ((p = strstr(s, "Collective test starting:"))) {
		if (!in->op_footer[0])
			banner_op(p + 25, in->op_footer, sizeof in->op_footer);
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
			in->banner = 1;
			snprintf(log->tests_version, sizeof log->tests_version, "%s", tok[3]);
			for (int i = 4; i < n; i++)
				if (strncmp(tok[i], "nccl-library=", 13) == 0)
					nccl_code(tok[i] + 13, log->nccl_version,
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

static double factor(const char *op, int n)
{
	if (strcmp(op, "all_reduce") == 0)
		return 2.0 * (n - 1) / n;
	if (!strcmp(op, "all_gather") || !strcmp(op, "reduce_scatter") || !strcmp(op, "alltoall"))
		return (double)(n - 1) / n;
	return 0;
}

int cvc_nt_ranks_from_ratio(const char *op, double ratio, double rel_tol)
{
	double est;
	int found = 0, lo, hi;

	if (!op || !(ratio > 0) || !(rel_tol >= 0) || factor(op, 2) == 0)
		return 0;
	if (strcmp(op, "all_reduce") == 0)
		est = ratio < 2 ? 2.0 / (2.0 - ratio) : NT_MAX_RANKS;
	else
		est = ratio < 1 ? 1.0 / (1.0 - ratio) : NT_MAX_RANKS;
	if (est < 1.5 || est > NT_MAX_RANKS)
		return 0;
	lo = (int)floor(est) - 2;
	hi = (int)ceil(est) + 2;
	if (lo < 2)
		lo = 2;
	if (hi >= NT_MAX_RANKS)
		hi = NT_MAX_RANKS - 1;
	for (int n = lo; n <= hi; n++) {
		if (fabs(factor(op, n) - ratio) <= rel_tol * ratio) {
			if (found)
				return 0; /* the ratio does not tell n from n + 1 */
			found = n;
		}
	}
	return found;
}

/*
 * How far a log's busbw/algbw may sit from a test's bus factor through
 * printing alone, relative: each printed bandwidth is rounded to 0.01, and
 * the ratio is of the sums over the rows with algbw >= 1.
 */
static double ratio_tol(const struct info *in)
{
	return in->ratio_rows ? 0.01 * in->ratio_rows / in->algbw_sum + 1e-9 : 0;
}

/*
 * The op when no name was printed: the bus bandwidth factor of each test
 * against the measured busbw/algbw (above 1 only all-reduce; below 1
 * all-gather, reduce-scatter, all-to-all; 1 within print rounding the
 * rooted and point-to-point tests), then redop and root.  The gather
 * family's (n - 1)/n is above 0.98 from 50 ranks on, so "near 1" is the
 * rounding's width, not a fixed band.
 */
static void infer_op(const struct info *in, cvc_nt_log *log)
{
	double ratio = in->ratio_rows ? in->busbw_sum / in->algbw_sum : 0;
	double one = 2 * ratio_tol(in);
	int reducing = in->have_first && strcmp(in->first_redop, "none") != 0;
	int rooted = in->have_first && in->first_root >= 0;
	const char *op = NULL;

	if (in->ratio_rows && ratio > 1 + one)
		op = "all_reduce";
	else if (in->ratio_rows && ratio > 0.45 && ratio < 1 - one)
		op = reducing ? "reduce_scatter" : "all_gather";
	else if (in->ratio_rows)
		op = rooted ? (reducing ? "reduce" : "broadcast") : "sendrecv";
	else if (rooted)
		op = reducing ? "reduce" : "broadcast";
	else if (in->have_first)
		op = reducing ? "all_reduce" : "all_gather";
	if (!op) {
		snprintf(log->op, sizeof log->op, "unknown");
		snprintf(log->op_evidence, sizeof log->op_evidence, "no evidence");
		return;
	}
	snprintf(log->op, sizeof log->op, "%s", op);
	snprintf(log->op_evidence, sizeof log->op_evidence,
		 "inferred from columns: busbw/algbw %.4f, redop %s, root %d", ratio,
		 in->have_first ? in->first_redop : "?", in->have_first ? in->first_root : -1);
}

/*
 * Whether n ranks could print the log's busbw/algbw: yes where the op has
 * no rank-dependent factor or no row gives a ratio.
 */
static int ratio_admits(const char *op, double ratio, double tol, int ratio_rows, int n)
{
	if (!ratio_rows || factor(op, 2) == 0)
		return 1;
	return fabs(factor(op, n) - ratio) <= tol * ratio;
}

/*
 * The rank count: the printed bandwidth ratio where it names one count;
 * else the device lines or the launcher, whichever the ratio admits.  A
 * pasted log may keep only the first device lines, so a launcher that
 * asked for more ranks (-np) than the lines list wins when the ratio
 * admits it; and "# nThread 1 nGpus 1" without a launcher is one process'
 * GPUs, not the run's, so it counts only where the ratio admits it.
 */
static void decide_ranks(const struct info *in, cvc_nt_log *log)
{
	double ratio = in->ratio_rows ? in->busbw_sum / in->algbw_sum : 0;
	double tol = ratio_tol(in);
	int n_ratio = in->ratio_rows ? cvc_nt_ranks_from_ratio(log->op, ratio, tol) : 0;
	int n_lines = 0, n_launch = 0, lines_ok, launch_ok;
	char launch_why[96] = "", lines_why[64] = "no device lines";

	if (in->nranks_lines > 0) {
		n_lines = in->max_rank + 1 > in->nranks_lines ? in->max_rank + 1 : in->nranks_lines;
		snprintf(lines_why, sizeof lines_why, "%d device lines up to rank %d",
			 in->nranks_lines, in->max_rank);
	}
	if (in->ngpus > 0 || in->cmd_g > 0 || in->cmd_np > 0) {
		int g = in->ngpus > 0 ? in->ngpus : (in->cmd_g > 0 ? in->cmd_g : 1);
		int t = in->nthread > 0 ? in->nthread : (in->cmd_t > 0 ? in->cmd_t : 1);
		int procs = in->cmd_np > 0 ? in->cmd_np : 1;

		n_launch = g * t * procs;
		snprintf(launch_why, sizeof launch_why, "%d GPUs x %d threads x %d processes", g, t,
			 procs);
	}
	lines_ok = n_lines > 0 && ratio_admits(log->op, ratio, tol, in->ratio_rows, n_lines);
	launch_ok = n_launch > 0 && ratio_admits(log->op, ratio, tol, in->ratio_rows, n_launch);
	if (n_ratio) {
		log->nranks = n_ratio;
		if (n_lines == n_ratio)
			snprintf(log->nranks_evidence, sizeof log->nranks_evidence,
				 "%s; busbw/algbw %.4f agrees", lines_why, ratio);
		else
			snprintf(log->nranks_evidence, sizeof log->nranks_evidence,
				 "busbw/algbw %.4f is the %.20s factor of %d ranks (%s, launcher "
				 "%.80s)", ratio, log->op, n_ratio, lines_why,
				 launch_why[0] ? launch_why : "not printed");
	} else if (launch_ok && (!lines_ok || (in->cmd_np > 0 && n_launch > n_lines))) {
		log->nranks = n_launch;
		if (n_lines)
			snprintf(log->nranks_evidence, sizeof log->nranks_evidence,
				 "launcher: %s; the %s are a part of them", launch_why, lines_why);
		else
			snprintf(log->nranks_evidence, sizeof log->nranks_evidence,
				 "launcher: %s", launch_why);
	} else if (lines_ok) {
		log->nranks = n_lines;
		snprintf(log->nranks_evidence, sizeof log->nranks_evidence, "%s", lines_why);
	} else if (n_lines && n_launch) {
		snprintf(log->nranks_evidence, sizeof log->nranks_evidence,
			 "unknown: busbw/algbw %.4f fits neither the %s nor the launcher's %.80s",
			 ratio, lines_why, launch_why);
	} else if (n_lines) {
		snprintf(log->nranks_evidence, sizeof log->nranks_evidence,
			 "unknown: busbw/algbw %.4f does not fit the %s", ratio, lines_why);
	} else if (n_launch) {
		snprintf(log->nranks_evidence, sizeof log->nranks_evidence,
			 "unknown: busbw/algbw %.4f does not fit %.80s%s", ratio, launch_why,
			 in->cmd_np > 0 ? "" : " (no launcher printed: one process assumed)");
	} else {
		snprintf(log->nranks_evidence, sizeof log->nranks_evidence, "unknown");
	}
}

/* Ranks per host: host names of complete device lines, else the launcher. */
static void decide_per_node(const struct info *in, cvc_nt_log *log)
{
	int n = log->nranks;

	if (n <= 0)
		return;
	if (in->nranks_lines == n && in->nhosts > 0 && !in->hosts_full && n % in->nhosts == 0) {
		log->gpus_per_node = n / in->nhosts;
		snprintf(log->pn_evidence, sizeof log->pn_evidence, "%d hosts in the device lines",
			 in->nhosts);
	} else if (in->cmd_pernode > 0 && in->cmd_pernode <= n && n % in->cmd_pernode == 0) {
		log->gpus_per_node = in->cmd_pernode;
		snprintf(log->pn_evidence, sizeof log->pn_evidence, "launcher: %d ranks per node",
			 in->cmd_pernode);
	} else if (in->cmd_nodes > 0 && n % in->cmd_nodes == 0) {
		log->gpus_per_node = n / in->cmd_nodes;
		snprintf(log->pn_evidence, sizeof log->pn_evidence, "launcher: %d nodes",
			 in->cmd_nodes);
	} else if (in->cmd_np == 0 && in->nranks_lines == 0 &&
		   (in->ngpus > 0 ? in->ngpus : in->cmd_g) *
				   (in->nthread > 0 ? in->nthread : (in->cmd_t > 0 ? in->cmd_t : 1)) == n) {
		log->gpus_per_node = n;
		snprintf(log->pn_evidence, sizeof log->pn_evidence,
			 "one process drives all %d GPUs", n);
	} else {
		snprintf(log->pn_evidence, sizeof log->pn_evidence, "unknown");
	}
}

void cvc_nt_log_release(cvc_nt_log *log)
{
	if (!log)
		return;
	free(log->rows);
	memset(log, 0, sizeof *log);
}

cvc_status cvc_nt_read(const char *open_path, const char *name, cvc_nt_log *out,
		       void (*progress)(void *arg, long long lines), void *arg, char *err,
		       size_t errlen)
{
	struct reader rd = {0};
	struct info *in = NULL;
	struct layout lay;
	int in_table = 0, eof = 0;
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
		infer_op(in, out);
	}
	decide_ranks(in, out);
	decide_per_node(in, out);
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
