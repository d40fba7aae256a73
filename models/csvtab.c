/*
 * csvtab.c - measured tables in, cvc_model_row out: XLA matmul/collective
 * perf tables, vidur network and compute (mlp.csv) profiles, nccl-tests
 * logs.  Each is recognised by its header row, read gz or plain through
 * zlib, and every field is checked: a bad row is one error naming the
 * file and line.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <zlib.h>

#include "cvc/cvc_base.h"
#include "cvc/cvc_csv.h"
#include "cvc/cvc_model.h"
#include "cvc/cvc_nccltab.h"
#include "cvc/cvc_out.h"

#define ROWS_MAX 10000000u /* bounded growth: 10 M rows is ~1.3 GB */
#define LINE_CAP 65536
/* a table's text at most (XLA's and vidur's are a few MB): past it a device
 * or a runaway file is refused, not scanned to its end */
#define TEXT_MAX ((int64_t)1 << 30)
#define MAX_COLS 128

void cvc_model_rows_release(cvc_model_rows *r)
{
	if (!r)
		return;
	free(r->v);
	memset(r, 0, sizeof *r);
}

static cvc_status push(cvc_model_rows *rows, const cvc_model_row *row)
{
	if (rows->n >= ROWS_MAX)
		return CVC_ERR_NOMEM;
	if (rows->n == rows->cap &&
	    cvc_grow(&rows->v, &rows->cap, rows->cap + 1, sizeof *rows->v, 256) != CVC_OK)
		return CVC_ERR_NOMEM;
	rows->v[rows->n++] = *row;
	return CVC_OK;
}

struct reader {
	gzFile gz;
	const char *path;
	cvc_status fail_st;	/* status of the last next_line() error */
	char *line;
	int lineno;
	char *err;
	size_t errlen;
	int64_t next_check;     /* uncompressed offset of the next inflate check */
	int64_t at;             /* uncompressed offset after the last line */
};

/* The reader's error for its current line: what (-1, with st set). */
static int line_fail(struct reader *r, cvc_status st, const char *what)
{
	snprintf(r->err, r->errlen, "'%s': line %d: %s", r->path, r->lineno, what);
	r->fail_st = st;
	return -1;
}

/* Next line without its newline; 1 = got one, 0 = EOF, -1 = error (set). */
static int next_line(struct reader *r)
{
	char m[256];
	int64_t now;
	size_t n;

	if (!gzgets(r->gz, r->line, LINE_CAP)) {
		if ((r->fail_st = cvc_gz_status(r->gz, m, sizeof m)) != CVC_OK) {
			snprintf(r->err, r->errlen, "'%s': line %d: %s", r->path, r->lineno + 1, m);
			return -1;
		}
		return 0;
	}
	r->lineno++;
	now = (int64_t)gztell(r->gz);
	if (now >= r->next_check) {
		cvc_status st = cvc_gz_inflate_check(r->gz, now, m, sizeof m);

		if (st)
			return line_fail(r, st, m);
		r->next_check = now + (1 << 20);
	}
	n = strlen(r->line);
	/* gzgets stops at a newline: fewer bytes in the string than it
	 * consumed is a NUL byte (a binary file, /dev/zero) */
	if (now >= 0 && now - r->at > (int64_t)n)
		return line_fail(r, CVC_ERR_FORMAT, "expected text, got a NUL byte");
	r->at = now;
	if (now > TEXT_MAX) {
		snprintf(m, sizeof m, "expected at most %lld MiB of text", (long long)(TEXT_MAX >> 20));
		return line_fail(r, CVC_ERR_FORMAT, m);
	}
	if (n == LINE_CAP - 1 && r->line[n - 1] != '\n') {
		snprintf(m, sizeof m, "expected a line under %d bytes", LINE_CAP);
		return line_fail(r, CVC_ERR_FORMAT, m);
	}
	while (n && (r->line[n - 1] == '\n' || r->line[n - 1] == '\r'))
		r->line[--n] = '\0';
	return 1;
}


static int col_index(char **f, int nf, const char *name)
{
	for (int i = 0; i < nf; i++)
		if (strcmp(f[i], name) == 0)
			return i;
	return -1;
}

static int get_double(const char *s, double *out)
{
	char *end = NULL;

	errno = 0;
	*out = strtod(s, &end);
	return errno || end == s || *end || !isfinite(*out) ? -1 : 0;
}

static int get_int(const char *s, int64_t *out)
{
	char *end = NULL;
	long long v;

	errno = 0;
	v = strtoll(s, &end, 10);
	if (errno || end == s || *end)
		return -1;
	*out = v;
	return 0;
}

/* File name prefix before "__" ("a100_dgx__all_reduce.csv.gz" -> "a100_dgx"). */
static void name_prefix(const char *path, char *out, size_t cap)
{
	const char *base = strrchr(path, '/');
	const char *dd;
	size_t n;

	base = base ? base + 1 : path;
	dd = strstr(base, "__");
	n = dd ? (size_t)(dd - base) : 0;
	if (n >= cap)
		n = cap - 1;
	memcpy(out, base, n);
	out[n] = '\0';
}

static cvc_status bad(struct reader *r, const char *what, const char *got)
{
	snprintf(r->err, r->errlen, "'%s': line %d: expected %s, got '%.40s'", r->path,
		 r->lineno, what, got);
	return CVC_ERR_FORMAT;
}

/* The indexes in hdr of the columns need[0..n) into ci; a format error
 * naming the first missing one (expected what). */
static cvc_status need_cols(struct reader *r, char **hdr, int nh, const char *const *need, int n,
			    int *ci, const char *what)
{
	for (int i = 0; i < n; i++)
		if ((ci[i] = col_index(hdr, nh, need[i])) < 0)
			return bad(r, what, need[i]);
	return CVC_OK;
}

/* The next non-empty line split into f[0..nh): 1 = got one, 0 = EOF,
 * -1 = error (r->fail_st set), a line of another field count included. */
static int next_record(struct reader *r, char **f, int nh)
{
	int got;

	while ((got = next_line(r)) == 1) {
		int k;

		if (!r->line[0])
			continue;
		k = cvc_csv_split(r->line, f, MAX_COLS);
		if (k == nh)
			return 1;
		r->fail_st = bad(r, k < 0 ? "fields quoted as RFC 4180 quotes them"
					  : "as many fields as the header", r->line);
		return -1;
	}
	return got;
}

/* Appends row; a format error when the row cap is reached. */
static cvc_status add_row(struct reader *r, cvc_model_rows *rows, const cvc_model_row *row)
{
	return push(rows, row) ? bad(r, "fewer rows (row cap reached)", "") : CVC_OK;
}

/* ---- XLA tables ---------------------------------------------------------- */

/* One record of an XLA table (fields f, the needed columns at ci) into
 * row (zeroed); a format error through bad(). */
typedef cvc_status (*xla_record_fn)(struct reader *r, char **f, const int *ci,
				    cvc_model_row *row);

static cvc_status xla_matmul_record(struct reader *r, char **f, const int *ci, cvc_model_row *row)
{
	int64_t d[4];
	double flops;

	row->kind = CVC_MODEL_GEMM;
	row->bench = 1; /* XLA's perf table generator: isolated kernels */
	snprintf(row->gpu, sizeof row->gpu, "%s", f[ci[0]]);
	for (int i = 0; i < 4; i++)
		if (get_int(f[ci[1 + i]], &d[i]) || d[i] <= 0 || d[i] > (1 << 24))
			return bad(r, "a positive dimension", f[ci[1 + i]]);
	if (cvc_hw_dtype_parse(f[ci[5]], &row->dtype))
		return bad(r, "a dtype", f[ci[5]]);
	if (get_double(f[ci[6]], &flops) || flops <= 0)
		return bad(r, "a positive flops_per_sec", f[ci[6]]);
	row->b = d[0], row->m = d[1], row->n = d[2], row->k = d[3];
	row->time_us = 2.0 * (double)d[0] * (double)d[1] * (double)d[2] * (double)d[3] / flops * 1e6;
	return CVC_OK;
}

static cvc_status xla_coll_record(struct reader *r, char **f, const int *ci, cvc_model_row *row)
{
	int64_t bytes, ndev;
	double thr;

	row->kind = CVC_MODEL_COLLECTIVE;
	snprintf(row->gpu, sizeof row->gpu, "%s", f[ci[0]]);
	snprintf(row->system, sizeof row->system, "%s", f[ci[0]]);
	if (cvc_model_coll_parse(f[ci[1]], &row->coll))
		return bad(r, "a collective opcode", f[ci[1]]);
	if (get_int(f[ci[2]], &bytes) || bytes <= 0)
		return bad(r, "a positive tensor size", f[ci[2]]);
	/* collective-permute rows leave the group empty: point to point */
	if (!*f[ci[3]] && row->coll == CVC_MODEL_SENDRECV)
		ndev = 2;
	else if (get_int(f[ci[3]], &ndev) || ndev < 1 || ndev > 1 << 20)
		return bad(r, "a device count", f[ci[3]]);
	if (get_double(f[ci[4]], &thr) || thr <= 0)
		return bad(r, "a positive throughput", f[ci[4]]);
	row->bytes = bytes;
	row->nranks = (int)ndev;
	/* XLA's tables were generated on one 8-GPU host. */
	row->gpus_per_node = 8;
	row->time_us = (double)bytes / thr * 1e6;
	row->b = 1;
	return CVC_OK;
}

/* The two XLA perf tables: their columns and how a record reads. */
static const struct xla_table {
	const char *what; /* for "expected <what> <column>" */
	int ncols;
	const char *cols[7];
	xla_record_fn record;
} xla_matmul = {"an XLA matmul header with column", 7,
		{"device_key", "b", "m", "n", "k", "dtype", "flops_per_sec"}, xla_matmul_record},
  xla_coll = {"an XLA collective header with column", 5,
	      {"device_key", "opcode", "tensor_size_bytes(xla_gen)", "num_devices_per_group",
	       "network_throughput_bytes_per_sec"},
	      xla_coll_record};

static cvc_status read_xla(struct reader *r, cvc_model_rows *rows, char **hdr, int nh,
			   const struct xla_table *t)
{
	int ci[7];
	char *f[MAX_COLS];
	int got;

	if (need_cols(r, hdr, nh, t->cols, t->ncols, ci, t->what))
		return CVC_ERR_FORMAT;
	while ((got = next_record(r, f, nh)) == 1) {
		cvc_model_row row;

		memset(&row, 0, sizeof row);
		if (t->record(r, f, ci, &row) || add_row(r, rows, &row))
			return CVC_ERR_FORMAT;
	}
	return got < 0 ? r->fail_st : CVC_OK;
}

/* ---- vidur ------------------------------------------------------------------ */

static cvc_status read_vidur_net(struct reader *r, cvc_model_rows *rows, char **hdr, int nh,
				 const char *op, const char *gpu_hint)
{
	char col[64], sys[CVC_HW_NAME_MAX], *f[MAX_COLS];
	int ct, cw, cs, cd, got;
	cvc_model_coll coll;

	snprintf(col, sizeof col, "time_stats.%s.median", op);
	if (cvc_model_coll_parse(op, &coll))
		return bad(r, "a known collective in the vidur header", op);
	if ((ct = col_index(hdr, nh, col)) < 0 || (cw = col_index(hdr, nh, "num_workers")) < 0 ||
	    (cs = col_index(hdr, nh, "size")) < 0 || (cd = col_index(hdr, nh, "devices_per_node")) < 0)
		return bad(r, "a vidur network header (median, num_workers, size, devices_per_node)",
			   hdr[0]);
	name_prefix(r->path, sys, sizeof sys);
	while ((got = next_record(r, f, nh)) == 1) {
		cvc_model_row row;
		int64_t w, s, d;
		double ms;

		memset(&row, 0, sizeof row);
		row.kind = CVC_MODEL_COLLECTIVE;
		row.coll = coll;
		if (get_double(f[ct], &ms) || ms <= 0)
			return bad(r, "a positive median time (ms)", f[ct]);
		if (get_int(f[cw], &w) || w < 1 || w > 1 << 20)
			return bad(r, "a worker count", f[cw]);
		if (get_int(f[cs], &s) || s <= 0)
			return bad(r, "a positive size", f[cs]);
		if (get_int(f[cd], &d) || d < 1 || d > 1 << 20)
			return bad(r, "devices_per_node", f[cd]);
		snprintf(row.system, sizeof row.system, "%s", sys);
		snprintf(row.gpu, sizeof row.gpu, "%s", gpu_hint ? gpu_hint : sys);
		row.bytes = s;
		row.nranks = (int)w;
		row.gpus_per_node = (int)d;
		row.time_us = ms * 1000.0;
		row.b = 1;
		if (add_row(r, rows, &row))
			return CVC_ERR_FORMAT;
	}
	return got < 0 ? r->fail_st : CVC_OK;
}

/* The four GEMMs of a transformer layer in vidur's mlp.csv. */
enum { OP_PRE, OP_POST, OP_UP, OP_DOWN, OP_N };
static const char *const vidur_ops[OP_N] = {"attn_pre_proj", "attn_post_proj", "mlp_up_proj",
					    "mlp_down_proj"};

static cvc_status read_vidur_mlp(struct reader *r, cvc_model_rows *rows, char **hdr, int nh,
				 const char *gpu_hint)
{
	static const char *const dims[8] = {"n_head", "n_kv_head", "n_embd", "n_expanded_embd",
					    "use_gated_mlp", "num_tokens",
					    "num_tensor_parallel_workers", "vocab_size"};
	int cd[8], ct[OP_N], got;
	char gpu[CVC_HW_NAME_MAX], *f[MAX_COLS];

	if (need_cols(r, hdr, nh, dims, 8, cd, "a vidur mlp.csv header with column"))
		return CVC_ERR_FORMAT;
	for (int o = 0; o < OP_N; o++) {
		char col[64];

		snprintf(col, sizeof col, "time_stats.%s.median", vidur_ops[o]);
		if ((ct[o] = col_index(hdr, nh, col)) < 0)
			return bad(r, "a vidur mlp.csv header with column", col);
	}
	if (gpu_hint)
		snprintf(gpu, sizeof gpu, "%s", gpu_hint);
	else
		name_prefix(r->path, gpu, sizeof gpu);
	while ((got = next_record(r, f, nh)) == 1) {
		int64_t h, kvh, e, x, tok, tp, hd;
		int gated;

		if (get_int(f[cd[0]], &h) || h < 1 || get_int(f[cd[1]], &kvh) || kvh < 1 ||
		    get_int(f[cd[2]], &e) || e < 1 || get_int(f[cd[3]], &x) || x < 1 ||
		    get_int(f[cd[5]], &tok) || tok < 1 || get_int(f[cd[6]], &tp) || tp < 1 ||
		    e > 1 << 20 || x > 1 << 22 || tok > 1 << 24 || tp > 1024 || h > e)
			return bad(r, "positive model dims, tokens and tp", r->line);
		if (strcmp(f[cd[4]], "True") == 0 || strcmp(f[cd[4]], "true") == 0 ||
		    strcmp(f[cd[4]], "1") == 0)
			gated = 1;
		else if (strcmp(f[cd[4]], "False") == 0 || strcmp(f[cd[4]], "false") == 0 ||
			 strcmp(f[cd[4]], "0") == 0)
			gated = 0;
		else
			return bad(r, "use_gated_mlp True or False", f[cd[4]]);
		hd = e / h;
		for (int o = 0; o < OP_N; o++) {
			cvc_model_row row;
			double ms;

			if (!*f[ct[o]])
				continue; /* op not profiled in this row */
			if (get_double(f[ct[o]], &ms) || ms <= 0)
				return bad(r, "a positive median time (ms)", f[ct[o]]);
			memset(&row, 0, sizeof row);
			row.kind = CVC_MODEL_GEMM;
			row.bench = 1; /* vidur's profiler: each op alone, in a loop */
			row.dtype = CVC_HW_FP16; /* vidur profiles in fp16 */
			snprintf(row.gpu, sizeof row.gpu, "%s", gpu);
			snprintf(row.tag, sizeof row.tag, "%s", vidur_ops[o]);
			row.b = 1;
			row.m = tok;
			/* Column-parallel layers split n by tp, row-parallel split k. */
			switch (o) {
			case OP_PRE: /* fused q,k,v */
				row.n = (h + 2 * kvh) * hd / tp, row.k = e;
				break;
			case OP_POST:
				row.n = e, row.k = h * hd / tp;
				break;
			case OP_UP: /* gate and up fused when gated */
				row.n = (gated ? 2 : 1) * x / tp, row.k = e;
				break;
			default:
				row.n = e, row.k = x / tp;
				break;
			}
			if (row.n < 1 || row.k < 1)
				return bad(r, "dims divisible by tp", r->line);
			row.nranks = (int)tp; /* tp, for grouping vidur rows */
			row.time_us = ms * 1000.0;
			if (add_row(r, rows, &row))
				return CVC_ERR_FORMAT;
		}
	}
	return got < 0 ? r->fail_st : CVC_OK;
}

/* ---- nccl-tests ------------------------------------------------------------- */

/*
 * An nccl-tests log through the one reader the importer uses too
 * (db/nccltab.c): out-of-place rows (in-place when a row has only those),
 * the rank count and GPUs per node as the log shows them (0 = unknown: the
 * fit takes the catalog's node size).  CVC_ERR_NOTFOUND when the file has
 * no nccl-tests table at all.
 */
static cvc_status read_nccl_tests(const char *open_path, const char *path, cvc_model_rows *rows,
				  const char *gpu_hint, char *err, size_t errlen)
{
	cvc_nt_log log;
	cvc_model_coll coll;
	cvc_status st = cvc_nt_read(open_path, path, &log, NULL, NULL, err, errlen);

	if (st)
		goto out;
	if (cvc_model_coll_parse(log.op, &coll)) {
		snprintf(err, errlen, "'%s': line %lld: expected a collective the models cover "
			 "(all_reduce, all_gather, reduce_scatter, alltoall, broadcast, reduce, "
			 "sendrecv), got '%s' (%s)", path, log.nlines, log.op, log.op_evidence);
		st = CVC_ERR_FORMAT;
		goto out;
	}
	if (log.nranks < 2) {
		snprintf(err, errlen, "'%s': line %lld: expected the rank count in the log (device "
			 "lines, launcher or bandwidth columns), got %s", path, log.nlines,
			 log.nranks_evidence);
		st = CVC_ERR_FORMAT;
		goto out;
	}
	for (size_t i = 0; i < log.nrows; i++) {
		const cvc_nt_row *t = &log.rows[i];
		cvc_model_row row;

		if (t->size <= 0 || t->nhalf < 1 || !(t->time[0] > 0))
			continue;
		memset(&row, 0, sizeof row);
		row.kind = CVC_MODEL_COLLECTIVE;
		row.coll = coll;
		row.b = 1;
		snprintf(row.gpu, sizeof row.gpu, "%.*s", (int)sizeof row.gpu - 1,
			 log.gpu[0] ? log.gpu : (gpu_hint ? gpu_hint : ""));
		snprintf(row.tag, sizeof row.tag, "%.*s", (int)sizeof row.tag - 1, log.algo);
		row.bytes = t->size;
		row.time_us = t->time[0];
		row.nranks = log.nranks;
		row.gpus_per_node = log.gpus_per_node;
		if (push(rows, &row)) {
			snprintf(err, errlen, "'%s': %s %lld: expected fewer rows (row cap reached)",
				 path, log.json ? "result" : "line", t->line);
			st = CVC_ERR_FORMAT;
			goto out;
		}
	}
out:
	cvc_nt_log_release(&log);
	return st;
}

/*
 * A table known by its header line (the first that is not blank or '#'),
 * else whatever nccl-tests log the file holds.  hdr_copy: LINE_CAP bytes.
 */
static cvc_status read_by_header(struct reader *r, char *hdr_copy, const char *open_path,
				 cvc_model_rows *rows, const char *gpu_hint)
{
	char *hdr[MAX_COLS];
	const char *path = r->path;
	char *err = r->err;
	size_t errlen = r->errlen;
	int nh, got;
	cvc_status st;

	/* blank lines and '#' lines (a table's provenance) before the header */
	do
		got = next_line(r);
	while (got == 1 && (!r->line[0] || r->line[0] == '#'));
	if (got <= 0) {
		if (got == 0)
			snprintf(err, errlen, "'%s': line 1: expected a known table header, got an empty file",
				 path);
		return got == 0 ? CVC_ERR_FORMAT : r->fail_st;
	}
	memcpy(hdr_copy, r->line, strlen(r->line) + 1);
	/* A first line that is no CSV (a log's text) names none of the tables. */
	nh = cvc_csv_split(hdr_copy, hdr, MAX_COLS);
	if (nh < 0)
		nh = 0;
	{
		size_t a, b;
		const char *dup = cvc_csv_dup_name(hdr, (size_t)nh, &a, &b);

		/* a log's prose is no header: only a table's named columns count */
		if (dup && (col_index(hdr, nh, "flops_per_sec") >= 0 ||
			    col_index(hdr, nh, "network_throughput_bytes_per_sec") >= 0 ||
			    col_index(hdr, nh, "time_stats.all_reduce.median") >= 0 ||
			    col_index(hdr, nh, "time_stats.send_recv.median") >= 0 ||
			    col_index(hdr, nh, "time_stats.mlp_up_proj.median") >= 0)) {
			snprintf(err, errlen, "'%s': line %d: column '%.64s' given twice (columns %zu "
				 "and %zu)", path, r->lineno, dup, a + 1, b + 1);
			return CVC_ERR_FORMAT;
		}
	}
	if (col_index(hdr, nh, "flops_per_sec") >= 0 && col_index(hdr, nh, "device_key") >= 0)
		return read_xla(r, rows, hdr, nh, &xla_matmul);
	if (col_index(hdr, nh, "network_throughput_bytes_per_sec") >= 0)
		return read_xla(r, rows, hdr, nh, &xla_coll);
	if (col_index(hdr, nh, "time_stats.all_reduce.median") >= 0)
		return read_vidur_net(r, rows, hdr, nh, "all_reduce", gpu_hint);
	if (col_index(hdr, nh, "time_stats.send_recv.median") >= 0)
		return read_vidur_net(r, rows, hdr, nh, "send_recv", gpu_hint);
	if (col_index(hdr, nh, "time_stats.mlp_up_proj.median") >= 0)
		return read_vidur_mlp(r, rows, hdr, nh, gpu_hint);
	/* anything else may be an nccl-tests log with text before its table */
	st = read_nccl_tests(open_path, path, rows, gpu_hint, err, errlen);
	if (st == CVC_ERR_NOTFOUND) {
		snprintf(err, errlen, "'%s': line 1: expected a known table header (XLA perf "
			 "table, vidur profile, nccl-tests log)", path);
		st = CVC_ERR_FORMAT;
	}
	return st;
}

/*
 * 1 when the file is nccl-tests' -J JSON (its first bytes, into buf of
 * LINE_CAP), 0 when not, -1 with the message set when it cannot be read
 * again from its start.  The JSON is one line as long as its environment
 * and device list make it: it goes to the nccl-tests reader whole, never
 * through next_line()'s line bound.
 */
static int nt_json_first(struct reader *r, char *buf)
{
	int got = gzread(r->gz, buf, LINE_CAP);
	int json = got > 0 && cvc_nt_json_sniff(buf, (size_t)got);
	char m[256];

	/* zlib's own failure (out of memory inflating, corrupt data) is the answer */
	if (got < 0 && (r->fail_st = cvc_gz_status(r->gz, m, sizeof m)) != CVC_OK &&
	    r->fail_st != CVC_ERR_FORMAT) {
		snprintf(r->err, r->errlen, "'%s': line 1: %s", r->path, m);
		return -1;
	}
	if (gzrewind(r->gz) != 0) {
		snprintf(r->err, r->errlen, "'%s': cannot read it again from its start", r->path);
		r->fail_st = CVC_ERR_IO;
		return -1;
	}
	return json;
}

cvc_status cvc_model_rows_read(cvc_model_rows *rows, const char *path, const char *gpu_hint,
			       char *err, size_t errlen)
{
	struct reader r = {0};
	char *hdr_copy = NULL, *spill = NULL;
	size_t before;
	int json;
	cvc_status st = CVC_OK;

	if (!rows || !path || !err || !errlen)
		return CVC_ERR_USAGE;
	err[0] = '\0';
	before = rows->n;
	r.path = path;
	r.err = err;
	r.errlen = errlen;
	r.line = malloc(LINE_CAP);
	hdr_copy = malloc(LINE_CAP);
	if (!r.line || !hdr_copy) {
		st = CVC_ERR_NOMEM;
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	/* read twice (the header, then from the start): a pipe or FIFO is
	 * copied once first (issue 36 item 10: a FIFO hung, a pipe gave
	 * "expected a known table header") */
	if ((st = cvc_tmp_spill(path, &spill, err, errlen)))
		goto out;
	r.gz = gzopen(spill ? spill : path, "rb");
	if (!r.gz) {
		int e = errno;

		snprintf(err, errlen, "'%s': cannot open: %s", path,
			 e ? strerror(e) : "out of memory");
		st = e ? cvc_open_status(e) : CVC_ERR_NOMEM;
		goto out;
	}
	gzbuffer(r.gz, 1 << 16);
	if ((json = nt_json_first(&r, hdr_copy)) < 0) {
		st = r.fail_st;
		goto out;
	}
	if (json) {
		st = read_nccl_tests(spill ? spill : path, path, rows, gpu_hint, err, errlen);
		st = st == CVC_ERR_NOTFOUND ? CVC_ERR_FORMAT : st;
	} else {
		st = read_by_header(&r, hdr_copy, spill ? spill : path, rows, gpu_hint);
	}
	if (!st && rows->n == before) {
		snprintf(err, errlen, "'%s': line %d: expected at least one data row", path, r.lineno);
		st = CVC_ERR_FORMAT;
	}
	if (!st) {
		const char *base = strrchr(path, '/');
		size_t used = strlen(rows->source);

		base = base ? base + 1 : path;
		snprintf(rows->source + used, sizeof rows->source - used, "%s%s", used ? "," : "", base);
	}
out:
	if (st && rows)
		rows->n = before; /* all or nothing per file */
	if (r.gz)
		gzclose(r.gz);
	cvc_tmp_unspill(spill);
	free(r.line);
	free(hdr_copy);
	return st;
}
