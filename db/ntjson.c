/*
 * ntjson.c - the JSON file nccl-tests writes with -J FILE (2.17 and later,
 * its src/util.cu), read into the cvc_nt_log the text reader fills
 * (nccltab.c), so that `cvc import` and `cvc fit` take either.
 *
 * The file is one object: "version", "start_time", "args" (argv: the
 * binary first), "env" ("K=V" strings), "nccl_version" (NCCL's code,
 * 22703), "config" (nthreads, ngpus, byte range and iteration counts, and
 * "devices": the first device line of each process as an object), then
 * "results", one object per size (size, count, type, redop, root as
 * printed, "out_of_place" (null when only in-place ran) and "in_place"
 * with "time" or "cpu_time" in us, "alg_bw", "bus_bw" in GB/s, "nwrong" or
 * null), then the footer and "end_time".  Doubles are printed %lf, a NaN
 * as the string "nan".
 *
 * What the text reader infers, the file states: the rank count is the
 * device entries x threads x GPUs per thread (one entry per process, MPI
 * or not), the ranks per host the entries of each host name x the same.
 * The file is untrusted, so each value read is checked for its type and
 * range, and each result's bus bandwidth against the operation's factor at
 * that rank count: a device list that disagrees with the results is
 * refused, not fitted.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>
#include <zlib.h>

#include "cvc/cvc_base.h"
#include "cvc/cvc_nccltab.h"
#include "db/nccltab_int.h"

/* Bytes of JSON read at most: a sweep of CVC_NT_MAX_ROWS results of ~250
 * bytes, with room for per-iteration lists.  json-c holds the whole tree. */
#define NT_JSON_MAX ((size_t)256 << 20)
/* Nesting util.cu writes: object, results, result, per-iteration lists. */
#define NT_JSON_DEPTH 16

struct jr {
	const char *name;
	char *err;
	size_t errlen;
	char at[32];               /* "result N: " inside a result, else "" */
};

static cvc_status jfail(const struct jr *j, cvc_status st, const char *fmt, ...) CVC_PRINTF(3, 4);

static cvc_status jfail(const struct jr *j, cvc_status st, const char *fmt, ...)
{
	va_list ap;
	int n = snprintf(j->err, j->errlen, "'%s': %s", j->name, j->at);

	va_start(ap, fmt);
	if (n >= 0 && (size_t)n < j->errlen)
		vsnprintf(j->err + n, j->errlen - (size_t)n, fmt, ap);
	va_end(ap);
	return st;
}

/* What parent holds under key, for a message: the JSON, cut and escaped. */
static const char *got_text(json_object *parent, const char *key, char *buf, size_t cap)
{
	json_object *v = NULL;
	char raw[48];
	const char *s;

	if (!json_object_object_get_ex(parent, key, &v))
		return "nothing";
	switch (json_object_get_type(v)) {
	case json_type_null: return "null";
	case json_type_object: return "an object";
	case json_type_array: return "a list";
	default: break;
	}
	s = json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
	if (snprintf(raw, sizeof raw, "%s", s ? s : "?") >= (int)sizeof raw)
		memcpy(raw + sizeof raw - 4, "...", 4);
	return cvc_text_safe(raw, 0, buf, cap);
}

/* "field 'PREFIXkey': expected WANT, got ..." */
static cvc_status bad(const struct jr *j, json_object *parent, const char *prefix, const char *key,
		      const char *want)
{
	char got[160];

	return jfail(j, CVC_ERR_FORMAT, "field '%s%s': expected %s, got %s", prefix, key, want,
		     got_text(parent, key, got, sizeof got));
}

/* An integer member in [lo, hi] into *v, else a message saying want. */
static cvc_status get_int(const struct jr *j, json_object *o, const char *prefix, const char *key,
			  int64_t lo, int64_t hi, const char *want, int64_t *v)
{
	json_object *x = NULL;

	if (!json_object_object_get_ex(o, key, &x) || !json_object_is_type(x, json_type_int) ||
	    json_object_get_int64(x) < lo || json_object_get_int64(x) > hi)
		return bad(j, o, prefix, key, want);
	*v = json_object_get_int64(x);
	return CVC_OK;
}

/* A string member into *s (owned by o), else a message. */
static cvc_status get_str(const struct jr *j, json_object *o, const char *prefix, const char *key,
			  const char **s)
{
	json_object *x = NULL;

	if (!json_object_object_get_ex(o, key, &x) || !json_object_is_type(x, json_type_string))
		return bad(j, o, prefix, key, "a string");
	*s = json_object_get_string(x);
	return CVC_OK;
}

/* A number: an integer, a double, or util.cu's "nan"; 0, else -1. */
static int num_of(json_object *x, double *v)
{
	if (json_object_is_type(x, json_type_double) || json_object_is_type(x, json_type_int)) {
		*v = json_object_get_double(x);
		return 0;
	}
	if (json_object_is_type(x, json_type_string) && strcmp(json_object_get_string(x), "nan") == 0) {
		*v = NAN;
		return 0;
	}
	return -1;
}

/* A finite number member, > 0 when positive else >= 0; else a message
 * saying want. */
static cvc_status get_num(const struct jr *j, json_object *o, const char *prefix, const char *key,
			  int positive, const char *want, double *v)
{
	json_object *x = NULL;

	if (!json_object_object_get_ex(o, key, &x) || num_of(x, v) || !isfinite(*v) ||
	    (positive ? !(*v > 0) : !(*v >= 0)))
		return bad(j, o, prefix, key, want);
	return CVC_OK;
}

/* One half of a result (out_of_place or in_place) into half h of r. */
static cvc_status read_half(const struct jr *j, json_object *res, const char *key, cvc_nt_row *r,
			    int h)
{
	json_object *o = NULL, *x = NULL;
	char prefix[24];
	const char *tkey;
	double wrong;
	cvc_status st;

	json_object_object_get_ex(res, key, &o);
	if (!json_object_is_type(o, json_type_object))
		return bad(j, res, "", key, "an object (time, alg_bw, bus_bw, nwrong)");
	snprintf(prefix, sizeof prefix, "%s.", key);
	/* cpu_time when the run was asked for host timing (-C 1) */
	tkey = json_object_object_get_ex(o, "time", NULL) ? "time" : "cpu_time";
	/* a collective takes time: 0 would make its bandwidth infinite */
	if ((st = get_num(j, o, prefix, tkey, 1, "a number > 0 (us)", &r->time[h])) ||
	    (st = get_num(j, o, prefix, "alg_bw", 0, "a number >= 0 (GB/s)", &r->algbw[h])) ||
	    (st = get_num(j, o, prefix, "bus_bw", 0, "a number >= 0 (GB/s)", &r->busbw[h])))
		return st;
	r->wrong[h] = -1;
	if (!json_object_object_get_ex(o, "nwrong", &x))
		return bad(j, o, prefix, "nwrong", "a count >= 0, or null when not checked");
	if (x) {
		/* past int64 the cast is undefined */
		if (num_of(x, &wrong) || !(wrong >= 0 && wrong < 9.2e18))
			return bad(j, o, prefix, "nwrong", "a count >= 0, or null when not checked");
		r->wrong[h] = (int64_t)wrong;
	}
	return CVC_OK;
}

/* Result number idx (1-based) into r. */
static cvc_status read_result(struct jr *j, json_object *res, long long idx, cvc_nt_row *r)
{
	const char *type, *redop, *root;
	json_object *oop = NULL;
	char safe[64];
	cvc_status st;

	memset(r, 0, sizeof *r);
	r->line = idx;
	r->wrong[0] = r->wrong[1] = -1;
	snprintf(j->at, sizeof j->at, "result %lld: ", idx);
	if (!json_object_is_type(res, json_type_object))
		return jfail(j, CVC_ERR_FORMAT, "expected an object (size, count, type, ...)");
	if ((st = get_int(j, res, "", "size", 1, INT64_MAX, "an integer > 0 (bytes)", &r->size)) ||
	    (st = get_int(j, res, "", "count", 0, INT64_MAX, "an integer >= 0", &r->count)) ||
	    (st = get_str(j, res, "", "type", &type)) ||
	    (st = get_str(j, res, "", "redop", &redop)) || (st = get_str(j, res, "", "root", &root)))
		return st;
	if (!nt_known_type(type))
		return jfail(j, CVC_ERR_FORMAT, "field 'type': expected an NCCL data type (int8 .. "
			     "double, bfloat16, f8e4m3, f8e5m2), got '%s'",
			     cvc_text_safe(type, 0, safe, 40));
	/* printed "%6i": blanks before the rank, -1 for none */
	if (cvc_parse_i64(root, -1, NT_MAX_RANKS, &r->root))
		return bad(j, res, "", "root", "a rank as a string (\"     0\", \"    -1\" for none)");
	snprintf(r->type, sizeof r->type, "%s", type);
	snprintf(r->redop, sizeof r->redop, "%s", redop);
	json_object_object_get_ex(res, "out_of_place", &oop);
	if (json_object_object_get_ex(res, "out_of_place", NULL) && !oop) {
		/* null: only in-place ran (trace replay) */
		r->nhalf = 1;
		r->in_place_only = 1;
		st = read_half(j, res, "in_place", r, 0);
	} else {
		r->nhalf = 2;
		if (!(st = read_half(j, res, "out_of_place", r, 0)))
			st = read_half(j, res, "in_place", r, 1);
	}
	return st;
}

/*
 * Every half's bus bandwidth is its algorithm bandwidth times the op's
 * factor at the log's rank count.  util.cu prints six decimals; the margin
 * is that of figures rounded as the text log prints them (two decimals
 * below 1000 GB/s, fewer above), so a log copied from the text passes.
 */
static cvc_status check_bus(struct jr *j, const cvc_nt_log *log)
{
	double f = nt_bus_factor(log->op, log->nranks);

	if (f < 0)
		return CVC_OK;
	for (size_t i = 0; i < log->nrows; i++) {
		const cvc_nt_row *r = &log->rows[i];

		for (int h = 0; h < r->nhalf; h++) {
			double want = f * r->algbw[h];

			if (fabs(r->busbw[h] - want) <= 0.005 * (1 + f) + 1e-4 * r->busbw[h])
				continue;
			snprintf(j->at, sizeof j->at, "result %lld: ", r->line);
			return jfail(j, CVC_ERR_FORMAT, "field '%s.bus_bw': expected alg_bw %f x %.4f "
				     "= %f, the %s bus factor of %d ranks (%s), got %f",
				     r->nhalf == 2 && h == 0 ? "out_of_place" : "in_place",
				     r->algbw[h], f, want, log->op, log->nranks, log->nranks_evidence,
				     r->busbw[h]);
		}
	}
	return CVC_OK;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/*
 * config: the rank count, the ranks per host and the GPU.  Each device
 * entry is one process (MPI), or the only one (without MPI), driving
 * nthreads x ngpus ranks.
 */
static cvc_status read_config(struct jr *j, json_object *root, cvc_nt_log *log)
{
	json_object *cfg = NULL, *devs = NULL;
	const char **hosts = NULL;
	int64_t nthreads, ngpus;
	size_t n, nhosts = 0, lo = SIZE_MAX, hi = 0;
	cvc_status st;

	json_object_object_get_ex(root, "config", &cfg);
	if (!json_object_is_type(cfg, json_type_object))
		return bad(j, root, "", "config", "an object (nthreads, ngpus, devices, ...)");
	if ((st = get_int(j, cfg, "config.", "nthreads", 1, NT_MAX_RANKS, "an integer >= 1",
			  &nthreads)) ||
	    (st = get_int(j, cfg, "config.", "ngpus", 1, NT_MAX_RANKS, "an integer >= 1", &ngpus)))
		return st;
	json_object_object_get_ex(cfg, "devices", &devs);
	n = json_object_is_type(devs, json_type_array) ? json_object_array_length(devs) : 0;
	if (n == 0)
		return bad(j, cfg, "config.", "devices", "a list of one entry per process");
	if ((int64_t)n > NT_MAX_RANKS / nthreads / ngpus)
		return jfail(j, CVC_ERR_FORMAT, "field 'config.devices': expected at most %d ranks "
			     "(entries x nthreads x ngpus), got %zu x %lld x %lld", NT_MAX_RANKS, n,
			     (long long)nthreads, (long long)ngpus);
	if (!(hosts = malloc(n * sizeof *hosts)))
		return jfail(j, CVC_ERR_NOMEM, "out of memory");
	for (size_t i = 0; i < n; i++) {
		json_object *d = json_object_array_get_idx(devs, i);
		const char *info;
		char prefix[48];

		snprintf(prefix, sizeof prefix, "config.devices[%zu].", i);
		if (!json_object_is_type(d, json_type_object)) {
			st = jfail(j, CVC_ERR_FORMAT, "field 'config.devices[%zu]': expected an object "
				   "(rank, hostname, device_info, ...)", i);
			goto out;
		}
		if ((st = get_str(j, d, prefix, "hostname", &hosts[i])) ||
		    (st = get_str(j, d, prefix, "device_info", &info)))
			goto out;
		/* the first entry names the GPU, as the first device line does */
		if (i == 0)
			snprintf(log->gpu, sizeof log->gpu, "%s", info);
	}
	log->nranks = (int)((int64_t)n * nthreads * ngpus);
	snprintf(log->nranks_evidence, sizeof log->nranks_evidence,
		 "-J file: %zu device entr%s x %lld thread%s x %lld GPU%s", n, n == 1 ? "y" : "ies",
		 (long long)nthreads, nthreads == 1 ? "" : "s", (long long)ngpus,
		 ngpus == 1 ? "" : "s");
	qsort(hosts, n, sizeof *hosts, cmp_str);
	for (size_t i = 0, run = 1; i < n; i++, run++) {
		if (i + 1 < n && strcmp(hosts[i], hosts[i + 1]) == 0)
			continue;
		nhosts++;
		lo = run < lo ? run : lo;
		hi = run > hi ? run : hi;
		run = 0;
	}
	if (lo == hi) {
		log->gpus_per_node = (int)((int64_t)lo * nthreads * ngpus);
		snprintf(log->pn_evidence, sizeof log->pn_evidence,
			 "-J file: %zu host%s in the device entries, %zu entr%s each", nhosts,
			 nhosts == 1 ? "" : "s", lo, lo == 1 ? "y" : "ies");
	} else {
		snprintf(log->pn_evidence, sizeof log->pn_evidence,
			 "unknown: the %zu hosts of the device entries hold %zu to %zu entries", nhosts,
			 lo, hi);
	}
out:
	free(hosts);
	return st;
}

/* A list of strings member (may be absent: *list NULL), else a message. */
static cvc_status get_strings(const struct jr *j, json_object *o, const char *key,
			      json_object **list)
{
	json_object *x = NULL;

	*list = NULL;
	if (!json_object_object_get_ex(o, key, &x))
		return CVC_OK;
	if (!json_object_is_type(x, json_type_array))
		return bad(j, o, "", key, "a list of strings");
	for (size_t i = 0; i < json_object_array_length(x); i++)
		if (!json_object_is_type(json_object_array_get_idx(x, i), json_type_string))
			return jfail(j, CVC_ERR_FORMAT, "field '%s[%zu]': expected a string", key, i);
	*list = x;
	return CVC_OK;
}

/*
 * What the run says of itself: the format version, NCCL's version,
 * NCCL_ALGO from the environment (else the arguments), and the binary
 * (args[0]) into binary.
 */
static cvc_status read_run(const struct jr *j, json_object *root, cvc_nt_log *log, char *binary,
			   size_t cap)
{
	json_object *args, *env;
	int64_t v;
	cvc_status st;

	if ((json_object_object_get_ex(root, "version", NULL) &&
	     (st = get_int(j, root, "", "version", 1, INT32_MAX, "an integer >= 1", &v))) ||
	    (st = get_strings(j, root, "args", &args)) || (st = get_strings(j, root, "env", &env)))
		return st;
	if (json_object_object_get_ex(root, "nccl_version", NULL)) {
		if ((st = get_int(j, root, "", "nccl_version", 0, INT32_MAX,
				  "an integer (NCCL's version code, 22703)", &v)))
			return st;
		nt_nccl_code(v, log->nccl_version, sizeof log->nccl_version);
	}
	for (size_t i = 0; env && i < json_object_array_length(env) && !log->algo[0]; i++) {
		const char *e = json_object_get_string(json_object_array_get_idx(env, i));

		if (strncmp(e, "NCCL_ALGO=", 10) == 0)
			nt_algo_of(e, log->algo, sizeof log->algo);
	}
	for (size_t i = 1; args && i < json_object_array_length(args) && !log->algo[0]; i++)
		nt_algo_of(json_object_get_string(json_object_array_get_idx(args, i)), log->algo,
			   sizeof log->algo);
	binary[0] = '\0';
	if (args && json_object_array_length(args) > 0)
		snprintf(binary, cap, "%s", json_object_get_string(json_object_array_get_idx(args, 0)));
	return CVC_OK;
}

/* The operation: the binary's name, else the columns as the text reader
 * reads them where no line names it. */
static void decide_op(const char *binary, cvc_nt_log *log)
{
	struct nt_info *in;
	char safe[160];
	int named = nt_find_op(binary, log->op, sizeof log->op);

	/* a test cvc does not list (alltoallv_perf) keeps its own name */
	if (!named && strstr(binary, "_perf")) {
		nt_banner_op(binary, log->op, sizeof log->op);
		named = log->op[0] != '\0';
	}
	if (named) {
		snprintf(log->op_evidence, sizeof log->op_evidence, "binary name in the -J file's args "
			 "('%s')", cvc_text_safe(binary, 0, safe, sizeof safe));
		return;
	}
	if (!(in = calloc(1, sizeof *in))) {
		snprintf(log->op, sizeof log->op, "unknown");
		snprintf(log->op_evidence, sizeof log->op_evidence, "no evidence (out of memory)");
		return;
	}
	for (size_t i = 0; i < log->nrows; i++) {
		const cvc_nt_row *r = &log->rows[i];

		if (!in->have_first) {
			snprintf(in->first_redop, sizeof in->first_redop, "%s",
				 r->redop[0] ? r->redop : "none");
			in->first_root = (int)r->root;
			in->have_first = 1;
		}
		for (int h = 0; h < r->nhalf; h++)
			if (r->algbw[h] >= 1.0) {
				in->busbw_sum += r->busbw[h];
				in->algbw_sum += r->algbw[h];
				in->ratio_rows++;
			}
	}
	nt_infer_op(in, log);
	free(in);
}

/* The whole file, inflated, into *b (at most NT_JSON_MAX bytes). */
static cvc_status read_all(const struct jr *j, gzFile gz, cvc_buf *b)
{
	char chunk[1 << 16], m[256];
	int64_t next_check = 1 << 20;

	for (;;) {
		int got = gzread(gz, chunk, sizeof chunk);
		cvc_status st;

		if (got < 0) {
			int zerr;

			/* a file cut mid-stream still has its bytes: the cut reads as the end */
			gzerror(gz, &zerr);
			if (zerr == Z_BUF_ERROR)
				return CVC_OK;
			st = cvc_gz_status(gz, m, sizeof m);
			return jfail(j, st ? st : CVC_ERR_IO, "byte %zu: %s", b->len, m);
		}
		if (got == 0)
			return CVC_OK;
		if ((st = cvc_buf_add(b, chunk, (size_t)got)))
			return st == CVC_ERR_NOMEM ? jfail(j, st, "out of memory")
						   : jfail(j, st, "byte %zu: expected at most %zu MiB of "
							   "JSON", b->len, NT_JSON_MAX >> 20);
		if ((int64_t)b->len >= next_check) {
			if ((st = cvc_gz_inflate_check(gz, (int64_t)b->len, m, sizeof m)))
				return jfail(j, st, "byte %zu: %s", b->len, m);
			next_check = (int64_t)b->len + (1 << 20);
		}
	}
}

/*
 * Parses text[0..len) into *root.  A file cut short (json-c: "continue"
 * at its end) is parsed up to its last whole result, the results list and
 * the object closed there, and log->incomplete says so.
 */
static cvc_status parse(const struct jr *j, const char *text, size_t len,
			const struct nt_json_scan *sc, cvc_nt_log *log, json_object **root)
{
	json_tokener *tok = json_tokener_new_ex(NT_JSON_DEPTH);
	enum json_tokener_error je;
	char *whole = NULL;
	size_t at;
	cvc_status st = CVC_OK;

	*root = NULL;
	if (!tok)
		return jfail(j, CVC_ERR_NOMEM, "out of memory");
	/* trailing bytes are named below, with their offset */
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_ALLOW_TRAILING_CHARS);
	*root = json_tokener_parse_ex(tok, text, (int)len);
	je = json_tokener_get_error(tok);
	at = json_tokener_get_parse_end(tok);
	if (je == json_tokener_continue && sc->cut) {
		const char *close = sc->results_closed ? "}" : "]}";

		if (!(whole = malloc(sc->cut + 3))) {
			st = jfail(j, CVC_ERR_NOMEM, "out of memory");
			goto out;
		}
		memcpy(whole, text, sc->cut);
		memcpy(whole + sc->cut, close, strlen(close) + 1);
		json_tokener_reset(tok);
		*root = json_tokener_parse_ex(tok, whole, (int)strlen(whole));
		if (json_tokener_get_error(tok) != json_tokener_success) {
			st = jfail(j, CVC_ERR_FORMAT, "byte %zu: expected JSON (%s)", sc->cut,
				   json_tokener_error_desc(json_tokener_get_error(tok)));
			goto out;
		}
		if (!sc->results_closed)
			snprintf(log->incomplete, sizeof log->incomplete,
				 "the -J file ends at byte %zu inside its results (no closing brace): "
				 "the run may have stopped before the end of its sweep; %lld whole "
				 "results read", len, sc->nresults);
	} else if (je == json_tokener_continue) {
		st = jfail(j, CVC_ERR_FORMAT, "byte %zu: the file ends before its first whole "
			   "result: the run stopped early, or the file was cut", len);
	} else if (je != json_tokener_success) {
		st = jfail(j, CVC_ERR_FORMAT, "byte %zu: expected JSON (%s)", at,
			   json_tokener_error_desc(je));
	} else {
		for (; at < len; at++)
			if (!strchr(" \t\r\n", text[at])) {
				st = jfail(j, CVC_ERR_FORMAT, "byte %zu: expected the end of the file", at);
				break;
			}
	}
out:
	if (st && *root) {
		json_object_put(*root);
		*root = NULL;
	}
	free(whole);
	json_tokener_free(tok);
	return st;
}

/* The results list into log->rows (at most CVC_NT_MAX_ROWS). */
static cvc_status read_results(struct jr *j, json_object *root, cvc_nt_log *log)
{
	json_object *res = NULL;
	size_t n;
	cvc_status st;

	json_object_object_get_ex(root, "results", &res);
	if (!json_object_is_type(res, json_type_array))
		return bad(j, root, "", "results", "a list of results");
	n = json_object_array_length(res);
	if (n == 0)
		return jfail(j, CVC_ERR_FORMAT, "field 'results': expected at least one result, got "
			     "none");
	if (n > CVC_NT_MAX_ROWS)
		return jfail(j, CVC_ERR_FORMAT, "field 'results': expected at most %d results, got %zu",
			     CVC_NT_MAX_ROWS, n);
	if (cvc_grow(&log->rows, &log->cap, n, sizeof *log->rows, 64) != CVC_OK)
		return jfail(j, CVC_ERR_NOMEM, "out of memory");
	for (size_t i = 0; i < n; i++) {
		if ((st = read_result(j, json_object_array_get_idx(res, i), (long long)i + 1,
				      &log->rows[i])))
			return st;
		log->nrows++;
	}
	j->at[0] = '\0';
	return CVC_OK;
}

cvc_status nt_json_read(gzFile gz, const char *name, cvc_nt_log *log,
			void (*progress)(void *arg, long long bytes), void *arg, char *err,
			size_t errlen)
{
	struct jr j = {name, err, errlen, ""};
	cvc_buf text = CVC_BUF_INIT(NT_JSON_MAX);
	struct nt_json_scan sc;
	json_object *root = NULL;
	char binary[512];
	cvc_status st;

	if ((st = read_all(&j, gz, &text)))
		goto out;
	if (progress)
		progress(arg, (long long)text.len);
	nt_json_scan(cvc_buf_str(&text), text.len, &sc);
	/* nccl-tests' keys; util.cu's first two tell a file cut before its results */
	if (!sc.object || sc.has_trace_events ||
	    !((sc.has_config && sc.has_results) || sc.header == 2)) {
		st = jfail(&j, CVC_ERR_NOTFOUND, "byte 0: expected an nccl-tests log, or the JSON of "
			   "its -J option (top-level \"config\" and \"results\")");
		goto out;
	}
	log->json = 1;
	log->nlines = text.len > 0;
	for (size_t i = 0; i + 1 < text.len; i++)
		log->nlines += text.p[i] == '\n';
	if ((st = parse(&j, cvc_buf_str(&text), text.len, &sc, log, &root)))
		goto out;
	if (!json_object_is_type(root, json_type_object)) {
		st = jfail(&j, CVC_ERR_FORMAT, "byte 0: expected a JSON object");
		goto out;
	}
	if ((st = read_run(&j, root, log, binary, sizeof binary)) ||
	    (st = read_config(&j, root, log)) || (st = read_results(&j, root, log)))
		goto out;
	decide_op(binary, log);
	st = check_bus(&j, log);
out:
	if (root)
		json_object_put(root);
	cvc_buf_free(&text);
	return st;
}
