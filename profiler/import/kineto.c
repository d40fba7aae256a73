/*
 * kineto.c - the Kineto / PyTorch profiler Chrome-trace importer.
 *
 * The file is read once, as a stream (json_scan.h): top-level keys are
 * taken as they come, and traceEvents is walked one event at a time.  An
 * event is decoded only as far as needed to see that it is of no interest
 * (ph/cat usually come first), so the bulk of a trace - CPU ops, runtime
 * calls, flow arrows - costs little more than finding its closing brace.
 *
 * What the file says about itself (rank, devices, versions) may come after
 * the events, so those rows are written at the end: activities get a
 * provisional rank when distributedInfo has not been seen yet and are moved
 * once it is known.  Collective sizes found only on the CPU op
 * record_param_comms are joined to NCCL kernels by External id at the end,
 * since either may come first.  GEMM-like and memory-bound CPU ops
 * (is_shape_op) keep their "Input Dims" / "Input type" in op_shapes, linked
 * to their kernels by the same External id or by nesting (oplink.h) when
 * the models read them (models/tracefit.c, models/tracemem.c).
 *
 * This file reads the document and its top-level values; one event becomes
 * rows in kineto_event.c, what needed the whole file is kineto_finish.c.
 */
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "cvc/cvc_db.h"
#include "cvc/cvc_import.h"
#include "import_int.h"
#include "json_scan.h"
#include "kineto_int.h"

/* ---- small helpers --------------------------------------------------------- */

cvc_status kin_nomem(struct kin *k)
{
	return cvc_db_fail(k->db, CVC_ERR_NOMEM, "'%s': out of memory", k->path);
}

static cvc_status src_fail(struct kin *k)
{
	return cvc_db_fail(k->db, js_status(k->src), "'%s': %s", k->path,
			   js_errmsg(k->src));
}

cvc_status kin_jc_report(struct kin *k, const jcur *c)
{
	return cvc_db_fail(k->db, CVC_ERR_FORMAT, "'%s': byte %lld: %s", k->path,
			   (long long)c->err_off, c->what);
}

/* A failure inside event number idx (0-based index into traceEvents). */
cvc_status kin_ev_fail(struct kin *k, int64_t off, const char *field, const char *what)
{
	if (field)
		return cvc_db_fail(k->db, CVC_ERR_FORMAT,
				   "'%s': byte %lld: event %lld: field '%s': %s", k->path,
				   (long long)off, (long long)(k->n.events - 1), field, what);
	return cvc_db_fail(k->db, CVC_ERR_FORMAT, "'%s': byte %lld: event %lld: %s",
			   k->path, (long long)off, (long long)(k->n.events - 1), what);
}

/* Decodes string v into the scratch buffer (NUL-terminated); its length. */
long kin_decode_tmp(struct kin *k, const jval *v)
{
	long n;

	/* Decoding never lengthens: every escape is longer than its UTF-8. */
	if (v->n + 1 > k->tmpcap) {
		size_t cap = v->n + 1 < 256 ? 256 : v->n + 1;
		char *t = realloc(k->tmp, cap);

		if (!t)
			return -1;
		k->tmp = t;
		k->tmpcap = cap;
	}
	n = jv_decode(v, k->tmp, k->tmpcap - 1);
	if (n < 0)
		return -1;
	k->tmp[n] = '\0';
	return n;
}

/* String value as a malloc'd C string; other values as their JSON text. */
char *kin_dup_value(struct kin *k, const jval *v)
{
	if (v->type == J_STR) {
		long n = kin_decode_tmp(k, v);

		return n < 0 ? NULL : strndup(k->tmp, (size_t)n);
	}
	return strndup(v->p, v->n);
}

void kin_coll_free(struct coll *c)
{
	free(c->name);
	free(c->dtype);
	free(c->pg_name);
	free(c->pg_desc);
	free(c->pg_ranks);
	memset(c, 0, sizeof *c);
}

static cvc_status meta_put(struct kin *k, const char *key, const jval *v)
{
	char *val;

	for (size_t i = 0; i < k->nmeta; i++)
		if (strcmp(k->metas[i].key, key) == 0) {
			val = kin_dup_value(k, v);
			if (!val)
				return kin_nomem(k);
			free(k->metas[i].value);
			k->metas[i].value = val;
			return CVC_OK;
		}
	if (cvc_grow_bounded(&k->metas, &k->capmeta, k->nmeta + 1, sizeof *k->metas, 1024))
		return kin_nomem(k);
	k->metas[k->nmeta].key = strdup(key);
	k->metas[k->nmeta].value = kin_dup_value(k, v);
	if (!k->metas[k->nmeta].key || !k->metas[k->nmeta].value) {
		free(k->metas[k->nmeta].key);
		free(k->metas[k->nmeta].value);
		return kin_nomem(k);
	}
	k->nmeta++;
	return CVC_OK;
}

/* ---- top-level values ------------------------------------------------------ */

static int want_int(struct kin *k, jcur *c, const jval *v, const char *field,
		    int64_t *out)
{
	(void)k;
	if (v->type != J_NUM || jv_int(v, out)) {
		c->p = c->base + (v->off - c->base_off);
		return jc_fail(c, "field '%s': expected an integer", field);
	}
	return 0;
}

static cvc_status parse_device_props(struct kin *k, const char *p, size_t n, int64_t off)
{
	jcur c;
	jval v, key;
	int first = 1, r;

	jc_init(&c, p, n, off);
	if (jc_value(&c, &v, 1, 1))
		return kin_jc_report(k, &c);
	if (v.type != J_ARR) {
		c.p = c.base;
		jc_fail(&c, "field 'deviceProperties': expected an array");
		return kin_jc_report(k, &c);
	}
	while ((r = jc_element(&c, &first)) == 1) {
		struct devprop d = {.id = (int64_t)k->nprops, .cc_major = -1, .cc_minor = -1};
		int f2 = 1;

		if (jc_value(&c, &v, 2, 1))
			return kin_jc_report(k, &c);
		if (v.type != J_OBJ) {
			c.p = c.base + (v.off - c.base_off);
			jc_fail(&c, "field 'deviceProperties': expected an object per device");
			return kin_jc_report(k, &c);
		}
		while ((r = jc_member(&c, &f2, &key)) == 1) {
			if (jc_value(&c, &v, 3, 0))
				goto bad;
			if (jv_eq(&key, "id")) {
				if (want_int(k, &c, &v, "id", &d.id))
					goto bad;
			} else if (jv_eq(&key, "name")) {
				if (v.type != J_STR) {
					c.p = c.base + (v.off - c.base_off);
					jc_fail(&c, "field 'name': expected a string");
					goto bad;
				}
				free(d.name);
				if (!(d.name = kin_dup_value(k, &v)))
					return kin_nomem(k);
			} else if (jv_eq(&key, "numSms")) {
				if (want_int(k, &c, &v, "numSms", &d.sms))
					goto bad;
			} else if (jv_eq(&key, "totalGlobalMem")) {
				if (want_int(k, &c, &v, "totalGlobalMem", &d.mem))
					goto bad;
			} else if (jv_eq(&key, "computeMajor")) {
				if (want_int(k, &c, &v, "computeMajor", &d.cc_major))
					goto bad;
			} else if (jv_eq(&key, "computeMinor")) {
				if (want_int(k, &c, &v, "computeMinor", &d.cc_minor))
					goto bad;
			}
		}
		if (r < 0)
			goto bad;
		if (k->nprops >= KIN_MAX_DEVICES) {
			free(d.name);
			c.p = c.base + (v.off - c.base_off);
			jc_fail(&c, "more than %d devices in deviceProperties", KIN_MAX_DEVICES);
			return kin_jc_report(k, &c);
		}
		{
			void *np = realloc(k->props, (k->nprops + 1) * sizeof *k->props);

			if (!np) {
				free(d.name);
				return kin_nomem(k);
			}
			k->props = np;
		}
		k->props[k->nprops++] = d;
		continue;
bad:
		free(d.name);
		return kin_jc_report(k, &c);
	}
	if (r < 0)
		return kin_jc_report(k, &c);
	return CVC_OK;
}

static cvc_status parse_dist_info(struct kin *k, const char *p, size_t n, int64_t off)
{
	jcur c;
	jval v, key;
	int first = 1, r;
	cvc_status st;

	jc_init(&c, p, n, off);
	if (jc_value(&c, &v, 1, 1))
		return kin_jc_report(k, &c);
	if (v.type != J_OBJ) {
		c.p = c.base;
		jc_fail(&c, "field 'distributedInfo': expected an object");
		return kin_jc_report(k, &c);
	}
	while ((r = jc_member(&c, &first, &key)) == 1) {
		if (jc_value(&c, &v, 2, 0))
			return kin_jc_report(k, &c);
		if (jv_eq(&key, "rank")) {
			int64_t rk;

			if (want_int(k, &c, &v, "rank", &rk))
				return kin_jc_report(k, &c);
			if (rk < 0 || rk > INT32_MAX / 2) {
				c.p = c.base + (v.off - c.base_off);
				jc_fail(&c, "field 'rank': expected a rank 0..%d", INT32_MAX / 2);
				return kin_jc_report(k, &c);
			}
			k->rank = (int)rk;
			k->rank_known = 1;
		} else if (jv_eq(&key, "world_size")) {
			if (want_int(k, &c, &v, "world_size", &k->world_size))
				return kin_jc_report(k, &c);
			if (k->world_size < 0 || k->world_size > INT32_MAX / 2) {
				c.p = c.base + (v.off - c.base_off);
				jc_fail(&c, "field 'world_size': expected a size 0..%d", INT32_MAX / 2);
				return kin_jc_report(k, &c);
			}
		} else if (jv_eq(&key, "nccl_version")) {
			free(k->nccl_version);
			if (!(k->nccl_version = kin_dup_value(k, &v)))
				return kin_nomem(k);
		} else if (jv_eq(&key, "backend")) {
			if ((st = meta_put(k, "backend", &v)))
				return st;
		} else if (jv_eq(&key, "pg_config")) {
			if ((st = meta_put(k, "pg_config", &v)))
				return st;
		} else if (jv_eq(&key, "pg_count")) {
			if ((st = meta_put(k, "pg_count", &v)))
				return st;
		}
	}
	if (r < 0)
		return kin_jc_report(k, &c);
	return CVC_OK;
}

/* Scalar top-level values kept as text. */
static cvc_status top_scalar(struct kin *k, const char *key, const char *p, size_t n,
			     int64_t off, char **dst)
{
	jcur c;
	jval v;

	jc_init(&c, p, n, off);
	if (jc_value(&c, &v, 1, 0))
		return kin_jc_report(k, &c);
	if (dst) {
		free(*dst);
		if (!(*dst = kin_dup_value(k, &v)))
			return kin_nomem(k);
		return CVC_OK;
	}
	return meta_put(k, key, &v);
}

static cvc_status top_value(struct kin *k, const char *key, const char *p, size_t n,
			    int64_t off)
{
	jcur c;
	jval v;

	if (strcmp(key, "deviceProperties") == 0)
		return parse_device_props(k, p, n, off);
	if (strcmp(key, "distributedInfo") == 0)
		return parse_dist_info(k, p, n, off);
	if (strcmp(key, "schemaVersion") == 0)
		return top_scalar(k, key, p, n, off, &k->schema);
	if (strcmp(key, "cupti_version") == 0)
		return top_scalar(k, key, p, n, off, &k->cupti);
	if (strcmp(key, "cuda_runtime_version") == 0)
		return top_scalar(k, key, p, n, off, &k->cudart);
	if (strcmp(key, "baseTimeNanoseconds") == 0 || strcmp(key, "displayTimeUnit") == 0 ||
	    strcmp(key, "traceName") == 0)
		return top_scalar(k, key, p, n, off, NULL);
	/* Anything else is checked and ignored. */
	jc_init(&c, p, n, off);
	if (jc_value(&c, &v, 1, 0))
		return kin_jc_report(k, &c);
	return CVC_OK;
}

/*
 * The character ch (js_peek's) was not the one wanted: a read error as the
 * source tells it, else msg at the current byte (at_eof instead at the end
 * of the file, when not NULL).
 */
static cvc_status bad_char(struct kin *k, int ch, const char *msg, const char *at_eof)
{
	if (ch == -2)
		return src_fail(k);
	return cvc_db_fail(k->db, CVC_ERR_FORMAT, "'%s': byte %lld: %s", k->path,
			   (long long)js_offset(k->src), ch == -1 && at_eof ? at_eof : msg);
}

/*
 * Before the next item of the array or object being read (close: its
 * closing bracket): steps over the closing bracket (*end = 1) or, after the
 * first item, over the ',' before the next one, leaving in *ch the
 * character that starts it (js_peek's value).
 */
static cvc_status next_item(struct kin *k, int close, int *first, int *end, int *ch)
{
	js_src *s = k->src;

	*end = 0;
	*ch = js_peek(s);
	if (*ch == close) {
		js_advance(s);
		*end = 1;
		return CVC_OK;
	}
	if (!*first) {
		if (*ch == -2)
			return src_fail(k);
		if (*ch != ',')
			return cvc_db_fail(k->db, CVC_ERR_FORMAT,
					   "'%s': byte %lld: %sexpected ',' or '%c'", k->path,
					   (long long)js_offset(s),
					   *ch == -1 ? "unexpected end of file, " : "", close);
		js_advance(s);
		*ch = js_peek(s);
	}
	*first = 0;
	return CVC_OK;
}

static cvc_status parse_events(struct kin *k)
{
	js_src *s = k->src;
	int ch, first = 1, end;
	const char *p;
	size_t n;
	int64_t off;
	cvc_status st;

	k->seen_events = 1;
	if ((ch = js_peek(s)) != '[')
		return bad_char(k, ch, "field 'traceEvents': expected an array", NULL);
	js_advance(s);
	for (;;) {
		if ((st = next_item(k, ']', &first, &end, &ch)))
			return st;
		if (end)
			return CVC_OK;
		if (ch != '{') {
			if (ch == -2)
				return src_fail(k);
			return cvc_db_fail(k->db, CVC_ERR_FORMAT,
					   "'%s': byte %lld: event %lld: %s", k->path,
					   (long long)js_offset(s), (long long)k->n.events,
					   ch == -1 ? "unexpected end of file, expected an event object"
						    : "expected an event object '{'");
		}
		if (js_span(s, EV_DEPTH, &p, &n, &off))
			return src_fail(k);
		k->n.events++;
		if ((st = kin_handle_event(k, p, n, off)))
			return st;
		if (js_offset(s) >= k->next_progress) {
			imp_progress(k->opts, k->path, js_raw_offset(s), js_raw_size(s));
			k->next_progress = js_offset(s) + KIN_PROGRESS_STEP;
		}
	}
}

/* The key of a top-level member into key[keylen] ("" when too long: no key
 * we know), with the ':' after it read. */
static cvc_status read_key(struct kin *k, char *key, size_t keylen)
{
	js_src *s = k->src;
	const char *p;
	size_t n;
	int64_t off;
	jcur c;
	jval kv;
	long m;
	int ch;

	if (js_span(s, 1, &p, &n, &off))
		return src_fail(k);
	jc_init(&c, p, n, off);
	if (jc_value(&c, &kv, 1, 0))
		return kin_jc_report(k, &c);
	m = jv_decode(&kv, key, keylen - 1);
	key[m < 0 ? 0 : m] = '\0';
	if ((ch = js_peek(s)) != ':')
		return bad_char(k, ch, "expected ':'", NULL);
	js_advance(s);
	return CVC_OK;
}

static cvc_status parse_document(struct kin *k)
{
	js_src *s = k->src;
	int ch, first = 1, end;
	const char *p;
	size_t n;
	int64_t off;
	char key[64];
	cvc_status st;

	if ((ch = js_peek(s)) != '{')
		return bad_char(k, ch, "expected '{' to start a Kineto trace",
				"empty file, expected a JSON object");
	js_advance(s);
	for (;;) {
		if ((st = next_item(k, '}', &first, &end, &ch)))
			return st;
		if (end)
			break;
		if (ch != '"')
			return bad_char(k, ch, "expected a string key",
					"unexpected end of file, expected a key");
		if ((st = read_key(k, key, sizeof key)))
			return st;
		if (strcmp(key, "traceEvents") == 0) {
			if ((st = parse_events(k)))
				return st;
			continue;
		}
		if (js_span(s, 1, &p, &n, &off))
			return src_fail(k);
		if ((st = top_value(k, key, p, n, off)))
			return st;
	}
	if ((ch = js_peek(s)) != -1)
		return bad_char(k, ch, "expected the end of file after the trace object", NULL);
	if (!k->seen_events)
		return cvc_db_fail(k->db, CVC_ERR_FORMAT,
				   "'%s': byte %lld: no traceEvents array, expected a Kineto trace",
				   k->path, (long long)js_offset(s));
	return CVC_OK;
}

static cvc_status max_id(struct kin *k, const char *sql, int64_t *out)
{
	sqlite3_stmt *st = NULL;
	sqlite3 *sq = cvc_db_sqlite(k->db);

	*out = 0;
	if (sqlite3_prepare_v2(sq, sql, -1, &st, NULL) != SQLITE_OK)
		return cvc_db_fail(k->db, CVC_ERR_DB, "'%s': %s", cvc_db_path(k->db),
				   sqlite3_errmsg(sq));
	if (sqlite3_step(st) == SQLITE_ROW)
		*out = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return CVC_OK;
}

static void kin_release(struct kin *k)
{
	js_close(k->src);
	for (size_t i = 0; i < k->nprops; i++)
		free(k->props[i].name);
	free(k->props);
	free(k->devs);
	for (size_t i = 0; i < k->nrpc; i++)
		kin_coll_free(&k->rpcs[i].c);
	free(k->rpcs);
	free(k->pend);
	for (size_t i = 0; i < k->nmeta; i++) {
		free(k->metas[i].key);
		free(k->metas[i].value);
	}
	free(k->metas);
	free(k->nccl_version);
	free(k->schema);
	free(k->cupti);
	free(k->cudart);
	free(k->tmp);
	oplink_release(&k->link);
	kin_launch_times_release(k);
}

cvc_status cvc_import_kineto(cvc_db *db, int64_t run_id, const char *path,
			     const cvc_import_opts *opts, cvc_import_stats *stats)
{
	struct kin k = {.db = db, .run_id = run_id, .path = path, .opts = opts};
	struct imp_stream *in = imp_stream_current(path);
	char err[1024];
	cvc_status st;

	if (in) {
		/* A pipe: continue after the bytes format detection read. */
		st = js_open_gz(in->gz, in->pre, in->npre, KIN_MAX_VALUE, &k.src, err, sizeof err);
		in->gz = NULL;
	} else {
		st = js_open(path, KIN_MAX_VALUE, &k.src, err, sizeof err);
	}
	if (st) {
		cvc_db_fail(db, st, "%s", err);
		goto out;
	}
	k.next_progress = KIN_PROGRESS_STEP;
	k.link.max_launches = KIN_MAX_LAUNCH;
	if ((st = max_id(&k, "SELECT max(id) FROM activities", &k.act_id_floor)) ||
	    (st = max_id(&k, "SELECT max(id) FROM ranges", &k.range_id_floor)) ||
	    (st = max_id(&k, "SELECT max(id) FROM op_shapes", &k.shape_id_floor)) ||
	    (st = parse_document(&k)) || (st = kin_finish(&k)))
		goto out;
	imp_progress(opts, path, js_raw_size(k.src), js_raw_size(k.src));
	imp_stats_add(stats, &k.n);
out:
	kin_release(&k);
	return st;
}
