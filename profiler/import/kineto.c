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
#include "oplink.h"

/* Bounds that keep a corrupt file from eating memory. */
#define KIN_MAX_VALUE ((size_t)256 << 20)  /* one event or top-level value */
#define KIN_MAX_DEVICES 4096
#define KIN_MAX_DEVICE_INDEX 65535
#define KIN_MAX_RPC (1 << 22)
#define KIN_MAX_LAUNCH ((size_t)1 << 22)  /* runtime launches kept for nesting */
#define KIN_PROGRESS_STEP ((int64_t)4 << 20)

/* Nesting around an event: the document object and the traceEvents array. */
#define EV_DEPTH 2

struct devprop {
	int64_t id;
	char *name;
	int64_t sms, mem, cc_major, cc_minor;
};

/* Collective description as the trace gives it; strings are malloc'd. */
struct coll {
	char *name, *dtype, *pg_name, *pg_desc, *pg_ranks;
	int64_t in_nelems, out_nelems, group_size;
};

struct rpc {
	int64_t ext;
	size_t seq;  /* file order, so a repeated External id resolves to the last */
	struct coll c;
};

struct pending {
	int64_t act_id, ext;
};

struct meta {
	char *key, *value;
};

struct kin {
	cvc_db *db;
	int64_t run_id;
	const char *path;
	const cvc_import_opts *opts;
	js_src *src;

	int64_t nevents, nact, ncoll, nrange, nshape;
	int rank, rank_known, prov_rank, have_prov;
	int64_t world_size;
	char *nccl_version, *schema, *cupti, *cudart;
	int64_t act_id_floor, range_id_floor, shape_id_floor;  /* ids before this file */
	int64_t host_pid;
	int seen_events;

	struct devprop *props;
	size_t nprops;
	int *devs;  /* devices GPU events ran on, in order of first use */
	size_t ndevs;

	struct rpc *rpcs;
	size_t nrpc, caprpc;
	struct pending *pend;
	size_t npend, cappend;
	struct meta *metas;
	size_t nmeta, capmeta;

	/* ops kept with shapes and launch calls, linked by nesting at the end;
	 * kernels whose External id is their correlation id (older Kineto) vs
	 * not. */
	oplink link;
	int64_t n_ext_corr, n_ext_own, nlinked;

	char *tmp;  /* decode scratch, grown to the longest string */
	size_t tmpcap;
	int64_t next_progress;
};

/* ---- small helpers --------------------------------------------------------- */

static cvc_status nomem(struct kin *k)
{
	return cvc_db_fail(k->db, CVC_ERR_NOMEM, "'%s': out of memory", k->path);
}

static cvc_status src_fail(struct kin *k)
{
	return cvc_db_fail(k->db, js_status(k->src), "'%s': %s", k->path,
			   js_errmsg(k->src));
}

static cvc_status jc_report(struct kin *k, const jcur *c)
{
	return cvc_db_fail(k->db, CVC_ERR_FORMAT, "'%s': byte %lld: %s", k->path,
			   (long long)c->err_off, c->what);
}

/* A failure inside event number idx (0-based index into traceEvents). */
static cvc_status ev_fail(struct kin *k, int64_t off, const char *field,
			  const char *what)
{
	if (field)
		return cvc_db_fail(k->db, CVC_ERR_FORMAT,
				   "'%s': byte %lld: event %lld: field '%s': %s", k->path,
				   (long long)off, (long long)(k->nevents - 1), field, what);
	return cvc_db_fail(k->db, CVC_ERR_FORMAT, "'%s': byte %lld: event %lld: %s",
			   k->path, (long long)off, (long long)(k->nevents - 1), what);
}

/* Decodes string v into the scratch buffer (NUL-terminated); its length. */
static long decode_tmp(struct kin *k, const jval *v)
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
static char *dup_value(struct kin *k, const jval *v)
{
	if (v->type == J_STR) {
		long n = decode_tmp(k, v);

		return n < 0 ? NULL : strndup(k->tmp, (size_t)n);
	}
	return strndup(v->p, v->n);
}

static void coll_free(struct coll *c)
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
			val = dup_value(k, v);
			if (!val)
				return nomem(k);
			free(k->metas[i].value);
			k->metas[i].value = val;
			return CVC_OK;
		}
	if (imp_grow((void **)&k->metas, &k->capmeta, k->nmeta + 1, sizeof *k->metas, 1024))
		return nomem(k);
	k->metas[k->nmeta].key = strdup(key);
	k->metas[k->nmeta].value = dup_value(k, v);
	if (!k->metas[k->nmeta].key || !k->metas[k->nmeta].value) {
		free(k->metas[k->nmeta].key);
		free(k->metas[k->nmeta].value);
		return nomem(k);
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
		return jc_report(k, &c);
	if (v.type != J_ARR) {
		c.p = c.base;
		jc_fail(&c, "field 'deviceProperties': expected an array");
		return jc_report(k, &c);
	}
	while ((r = jc_element(&c, &first)) == 1) {
		struct devprop d = {.id = (int64_t)k->nprops, .cc_major = -1, .cc_minor = -1};
		int f2 = 1;

		if (jc_value(&c, &v, 2, 1))
			return jc_report(k, &c);
		if (v.type != J_OBJ) {
			c.p = c.base + (v.off - c.base_off);
			jc_fail(&c, "field 'deviceProperties': expected an object per device");
			return jc_report(k, &c);
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
				if (!(d.name = dup_value(k, &v)))
					return nomem(k);
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
			return jc_report(k, &c);
		}
		{
			void *np = realloc(k->props, (k->nprops + 1) * sizeof *k->props);

			if (!np) {
				free(d.name);
				return nomem(k);
			}
			k->props = np;
		}
		k->props[k->nprops++] = d;
		continue;
bad:
		free(d.name);
		return jc_report(k, &c);
	}
	if (r < 0)
		return jc_report(k, &c);
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
		return jc_report(k, &c);
	if (v.type != J_OBJ) {
		c.p = c.base;
		jc_fail(&c, "field 'distributedInfo': expected an object");
		return jc_report(k, &c);
	}
	while ((r = jc_member(&c, &first, &key)) == 1) {
		if (jc_value(&c, &v, 2, 0))
			return jc_report(k, &c);
		if (jv_eq(&key, "rank")) {
			int64_t rk;

			if (want_int(k, &c, &v, "rank", &rk))
				return jc_report(k, &c);
			if (rk < 0 || rk > INT32_MAX / 2) {
				c.p = c.base + (v.off - c.base_off);
				jc_fail(&c, "field 'rank': expected a rank >= 0");
				return jc_report(k, &c);
			}
			k->rank = (int)rk;
			k->rank_known = 1;
		} else if (jv_eq(&key, "world_size")) {
			if (want_int(k, &c, &v, "world_size", &k->world_size))
				return jc_report(k, &c);
			if (k->world_size < 0 || k->world_size > INT32_MAX / 2) {
				c.p = c.base + (v.off - c.base_off);
				jc_fail(&c, "field 'world_size': expected a size >= 0");
				return jc_report(k, &c);
			}
		} else if (jv_eq(&key, "nccl_version")) {
			free(k->nccl_version);
			if (!(k->nccl_version = dup_value(k, &v)))
				return nomem(k);
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
		return jc_report(k, &c);
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
		return jc_report(k, &c);
	if (dst) {
		free(*dst);
		if (!(*dst = dup_value(k, &v)))
			return nomem(k);
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
		return jc_report(k, &c);
	return CVC_OK;
}

/* ---- events ----------------------------------------------------------------- */

struct ev {
	jval ph, cat, name, pid, tid, ts, dur, args;
};

struct args {
	jval device, stream, context, correlation, ext, regs, smem, grid, block, bytes;
	jval coll, in_n, out_n, group, dtype, pg_name, pg_desc, pg_ranks;
	jval dims, types;
};

enum evkind {
	EK_SKIP = 0, EK_KERNEL, EK_MEMCPY, EK_MEMSET, EK_GPU_RANGE, EK_CPU_RANGE, EK_RPC,
	EK_LAUNCH
};

/* Category of a complete ("X") event; legacy Kineto spelled some capitalised. */
static enum evkind cat_kind(const jval *cat)
{
	if (jv_eq(cat, "kernel") || jv_eq(cat, "Kernel"))
		return EK_KERNEL;
	if (jv_eq(cat, "gpu_memcpy") || jv_eq(cat, "Memcpy"))
		return EK_MEMCPY;
	if (jv_eq(cat, "gpu_memset") || jv_eq(cat, "Memset"))
		return EK_MEMSET;
	if (jv_eq(cat, "gpu_user_annotation"))
		return EK_GPU_RANGE;
	if (jv_eq(cat, "user_annotation"))
		return EK_CPU_RANGE;
	if (jv_eq(cat, "cpu_op") || jv_eq(cat, "Operator"))
		return EK_RPC;  /* only record_param_comms and ops kept with shapes */
	if (jv_eq(cat, "cuda_runtime") || jv_eq(cat, "cuda_driver") || jv_eq(cat, "Runtime"))
		return EK_LAUNCH;  /* only kernel launches */
	return EK_SKIP;
}

static jval *ev_slot(struct ev *e, const jval *key)
{
	if (key->esc || key->n > 4)
		return jv_eq(key, "args") ? &e->args : jv_eq(key, "name") ? &e->name
		       : jv_eq(key, "cat") ? &e->cat : jv_eq(key, "ph") ? &e->ph
		       : jv_eq(key, "pid") ? &e->pid : jv_eq(key, "tid") ? &e->tid
		       : jv_eq(key, "ts") ? &e->ts : jv_eq(key, "dur") ? &e->dur : NULL;
	switch (key->n) {
	case 2:
		if (key->p[0] == 'p' && key->p[1] == 'h')
			return &e->ph;
		if (key->p[0] == 't' && key->p[1] == 's')
			return &e->ts;
		return NULL;
	case 3:
		if (memcmp(key->p, "cat", 3) == 0)
			return &e->cat;
		if (memcmp(key->p, "pid", 3) == 0)
			return &e->pid;
		if (memcmp(key->p, "tid", 3) == 0)
			return &e->tid;
		if (memcmp(key->p, "dur", 3) == 0)
			return &e->dur;
		return NULL;
	case 4:
		if (memcmp(key->p, "name", 4) == 0)
			return &e->name;
		if (memcmp(key->p, "args", 4) == 0)
			return &e->args;
		return NULL;
	}
	return NULL;
}

static jval *args_slot(struct args *a, const jval *key)
{
#define ARG(name, field) {name, sizeof(name) - 1, offsetof(struct args, field)}
	static const struct {
		const char *name;
		size_t len, off;
	} tab[] = {
		ARG("device", device), ARG("stream", stream), ARG("context", context),
		ARG("correlation", correlation), ARG("External id", ext),
		ARG("registers per thread", regs), ARG("shared memory", smem),
		ARG("grid", grid), ARG("block", block), ARG("bytes", bytes),
		ARG("Collective name", coll), ARG("In msg nelems", in_n),
		ARG("Out msg nelems", out_n), ARG("Group size", group), ARG("dtype", dtype),
		ARG("Process Group Name", pg_name),
		ARG("Process Group Description", pg_desc),
		ARG("Process Group Ranks", pg_ranks),
		ARG("Input Dims", dims), ARG("Input type", types),
	};
#undef ARG

	for (size_t i = 0; i < sizeof tab / sizeof tab[0]; i++)
		if (jv_eqn(key, tab[i].name, tab[i].len))
			return (jval *)((char *)a + tab[i].off);
	return NULL;
}

static cvc_status parse_args(struct kin *k, const jval *av, struct args *a)
{
	jcur c;
	jval key, v, *slot;
	int first = 1, r;

	memset(a, 0, sizeof *a);
	if (av->type == J_NONE)
		return CVC_OK;
	if (av->type != J_OBJ)
		return ev_fail(k, av->off, "args", "expected an object");
	jc_init(&c, av->p, av->n, av->off);
	c.p++;  /* '{', checked when the event was read */
	while ((r = jc_member(&c, &first, &key)) == 1) {
		if (jc_value(&c, &v, EV_DEPTH + 2, 0))
			return jc_report(k, &c);
		slot = args_slot(a, &key);
		if (slot && slot->type == J_NONE)
			*slot = v;
	}
	if (r < 0)
		return jc_report(k, &c);
	return CVC_OK;
}

/* Optional integer argument: absent leaves *out; wrong type fails. */
static cvc_status arg_int(struct kin *k, const jval *v, const char *field, int64_t *out)
{
	if (v->type == J_NONE)
		return CVC_OK;
	if (v->type != J_NUM || jv_int(v, out))
		return ev_fail(k, v->off, field, "expected an integer");
	return CVC_OK;
}

static cvc_status arg_str(struct kin *k, const jval *v, const char *field, char **out)
{
	if (v->type == J_NONE)
		return CVC_OK;
	if (v->type != J_STR)
		return ev_fail(k, v->off, field, "expected a string");
	if (!(*out = dup_value(k, v)))
		return nomem(k);
	return CVC_OK;
}

/* [x, y, z] of integers into dst[3]. */
static cvc_status arg_dim3(struct kin *k, const jval *v, const char *field, int32_t *dst)
{
	jcur c;
	jval e;
	int first = 1, r, i = 0;

	if (v->type == J_NONE)
		return CVC_OK;
	if (v->type != J_ARR)
		return ev_fail(k, v->off, field, "expected an array of 3 integers");
	jc_init(&c, v->p, v->n, v->off);
	c.p++;
	while ((r = jc_element(&c, &first)) == 1) {
		int64_t x;

		if (jc_value(&c, &e, 0, 0))
			return jc_report(k, &c);
		if (i >= 3 || e.type != J_NUM || jv_int(&e, &x) || x < 0 || x > INT32_MAX)
			return ev_fail(k, e.off, field, "expected an array of 3 integers");
		dst[i++] = (int32_t)x;
	}
	if (r < 0)
		return jc_report(k, &c);
	if (i != 3)
		return ev_fail(k, v->off, field, "expected an array of 3 integers");
	return CVC_OK;
}

/* Collective fields of kernel or record_param_comms args; c->name NULL if none. */
static cvc_status arg_coll(struct kin *k, const struct args *a, struct coll *c)
{
	cvc_status st;

	memset(c, 0, sizeof *c);
	c->in_nelems = c->out_nelems = -1;
	if (a->coll.type == J_NONE && a->in_n.type == J_NONE && a->out_n.type == J_NONE)
		return CVC_OK;
	if ((st = arg_str(k, &a->coll, "Collective name", &c->name)) ||
	    (st = arg_str(k, &a->dtype, "dtype", &c->dtype)) ||
	    (st = arg_str(k, &a->pg_name, "Process Group Name", &c->pg_name)) ||
	    (st = arg_str(k, &a->pg_desc, "Process Group Description", &c->pg_desc)) ||
	    (st = arg_int(k, &a->in_n, "In msg nelems", &c->in_nelems)) ||
	    (st = arg_int(k, &a->out_n, "Out msg nelems", &c->out_nelems)) ||
	    (st = arg_int(k, &a->group, "Group size", &c->group_size)))
		goto fail;
	/* Ranks are a string in current traces; keep any other form as JSON. */
	if (a->pg_ranks.type != J_NONE && !(c->pg_ranks = dup_value(k, &a->pg_ranks))) {
		st = nomem(k);
		goto fail;
	}
	if (!c->name && !(c->name = strdup(""))) {
		st = nomem(k);
		goto fail;
	}
	return CVC_OK;
fail:
	coll_free(c);
	return st;
}

static int has_word(const char *s, const char *w)
{
	return s && strstr(s, w) != NULL;
}

/*
 * Per-rank message bytes in the nccl-tests convention: the larger buffer for
 * all-gather and reduce-scatter (nccl-tests' size is the gathered / the
 * scattered total), the input for everything else.  -1 when unknown.
 */
static int64_t coll_bytes(const struct coll *c)
{
	int64_t sz = cvc_dtype_size(c->dtype), nel;

	if (sz == 0)
		return -1;
	if (has_word(c->name, "allgather") || has_word(c->name, "all_gather") ||
	    has_word(c->name, "reduce_scatter") || has_word(c->name, "reducescatter"))
		nel = c->in_nelems > c->out_nelems ? c->in_nelems : c->out_nelems;
	else
		nel = c->in_nelems > 0 ? c->in_nelems : c->out_nelems;
	if (nel < 0 || nel > INT64_MAX / sz)
		return -1;
	return nel * sz;
}

static cvc_status store_coll(struct kin *k, int64_t act_id, const struct coll *c)
{
	cvc_collective row = {
		.activity_id = act_id,
		.coll = c->name && *c->name ? c->name : NULL,
		.dtype = c->dtype,
		.in_nelems = c->in_nelems,
		.out_nelems = c->out_nelems,
		.bytes = coll_bytes(c),
		.group_size = c->group_size > 0 && c->group_size <= INT32_MAX ? (int)c->group_size : 0,
		.pg_name = c->pg_name,
		.pg_desc = c->pg_desc,
		.pg_ranks = c->pg_ranks,
		.root = -1,
	};
	cvc_status st = cvc_db_collective_add(k->db, &row);

	if (!st)
		k->ncoll++;
	return st;
}

static int is_nccl_name(const char *s)
{
	return strncmp(s, "nccl", 4) == 0 || strstr(s, "ncclKernel") ||
	       strstr(s, "ncclDevKernel");
}

/* CUPTI copy kind from "Memcpy HtoD (Pinned -> Device)". */
static int32_t copy_kind(const char *name)
{
	static const char *const kinds[] = {"HtoD", "DtoH", "HtoA", "AtoH", "AtoA",
					    "AtoD", "DtoA", "DtoD", "HtoH", "PtoP"};

	if (strncmp(name, "Memcpy ", 7) != 0)
		return 0;
	for (int i = 0; i < 10; i++)
		if (strncmp(name + 7, kinds[i], 4) == 0 &&
		    (name[11] == '\0' || name[11] == ' '))
			return i + 1;
	return 0;
}

/* The rank rows of this file go to; picks a provisional one on first use. */
static cvc_status cur_rank(struct kin *k, int *rank)
{
	cvc_status st;

	if (k->rank_known) {
		*rank = k->rank;
		return CVC_OK;
	}
	if (!k->have_prov) {
		if ((st = imp_next_free_rank(k->db, k->run_id, &k->prov_rank)))
			return st;
		k->have_prov = 1;
	}
	*rank = k->prov_rank;
	return CVC_OK;
}

static cvc_status note_device(struct kin *k, int dev)
{
	for (size_t i = 0; i < k->ndevs; i++)
		if (k->devs[i] == dev)
			return CVC_OK;
	if (k->ndevs >= KIN_MAX_DEVICES)
		return cvc_db_fail(k->db, CVC_ERR_FORMAT,
				   "'%s': more than %d distinct devices, expected fewer",
				   k->path, KIN_MAX_DEVICES);
	int *nd = realloc(k->devs, (k->ndevs + 1) * sizeof *nd);

	if (!nd)
		return nomem(k);
	k->devs = nd;
	k->devs[k->ndevs++] = dev;
	return CVC_OK;
}

/* Device of a GPU event: args.device, else pid. */
static cvc_status gpu_device(struct kin *k, const struct ev *e, const struct args *a,
			     int64_t ev_off, int *dev)
{
	int64_t d;
	const jval *v = a->device.type != J_NONE ? &a->device : &e->pid;
	const char *field = a->device.type != J_NONE ? "device" : "pid";

	if (v->type == J_NONE)
		return ev_fail(k, ev_off, NULL, "missing field 'pid', expected a device");
	if (v->type != J_NUM || jv_int(v, &d) || d < 0 || d > KIN_MAX_DEVICE_INDEX)
		return ev_fail(k, v->off, field, "expected a device index (0..65535)");
	*dev = (int)d;
	return note_device(k, *dev);
}

static cvc_status ev_times(struct kin *k, const struct ev *e, int64_t ev_off,
			   int64_t *start, int64_t *end)
{
	int64_t dur;

	if (e->ts.type == J_NONE)
		return ev_fail(k, ev_off, NULL, "missing field 'ts', expected a number");
	if (e->dur.type == J_NONE)
		return ev_fail(k, ev_off, NULL, "missing field 'dur', expected a number");
	if (e->ts.type != J_NUM)
		return ev_fail(k, e->ts.off, "ts", "expected a number");
	if (e->dur.type != J_NUM)
		return ev_fail(k, e->dur.off, "dur", "expected a number");
	if (jv_us_to_ns(&e->ts, start))
		return ev_fail(k, e->ts.off, "ts", "number out of range");
	if (jv_us_to_ns(&e->dur, &dur))
		return ev_fail(k, e->dur.off, "dur", "number out of range");
	if (dur < 0)
		return ev_fail(k, e->dur.off, "dur", "expected a non-negative number");
	if (*start > INT64_MAX - dur)
		return ev_fail(k, e->dur.off, "dur", "number out of range");
	*end = *start + dur;
	return CVC_OK;
}

static cvc_status intern_name(struct kin *k, const struct ev *e, int64_t ev_off,
			      int64_t *id)
{
	long n;

	if (e->name.type == J_NONE)
		return ev_fail(k, ev_off, NULL, "missing field 'name', expected a string");
	if (e->name.type != J_STR)
		return ev_fail(k, e->name.off, "name", "expected a string");
	if ((n = decode_tmp(k, &e->name)) < 0)
		return nomem(k);
	if ((size_t)n > CVC_DB_NAME_MAX)
		return ev_fail(k, e->name.off, "name", "expected a name of at most 1 MiB");
	return cvc_db_intern(k->db, k->tmp, (size_t)n, id);
}

static cvc_status add_pending(struct kin *k, int64_t act_id, int64_t ext)
{
	if (imp_grow((void **)&k->pend, &k->cappend, k->npend + 1, sizeof *k->pend, KIN_MAX_RPC))
		return nomem(k);
	k->pend[k->npend].act_id = act_id;
	k->pend[k->npend].ext = ext;
	k->npend++;
	return CVC_OK;
}

static cvc_status do_activity(struct kin *k, enum evkind kind, const struct ev *e,
			      int64_t ev_off)
{
	struct args a;
	struct coll c = {0};
	cvc_activity act = {
		.run_id = k->run_id,
		.kind = kind == EK_KERNEL ? CVC_ACT_KERNEL
			: kind == EK_MEMCPY ? CVC_ACT_MEMCPY : CVC_ACT_MEMSET,
		.stream = -1, .context = -1, .correlation = -1, .external_id = -1,
	};
	int64_t regs = 0, smem = 0, bytes = 0, act_id = 0;
	cvc_status st;

	if ((st = ev_times(k, e, ev_off, &act.start_ns, &act.end_ns)) ||
	    (st = intern_name(k, e, ev_off, &act.name_id)) ||
	    (st = parse_args(k, &e->args, &a)) ||
	    (st = gpu_device(k, e, &a, ev_off, &act.device)) ||
	    (st = cur_rank(k, &act.rank)))
		return st;
	if (kind == EK_MEMCPY)
		act.copy_kind = copy_kind(k->tmp);
	if (a.stream.type != J_NONE) {
		if ((st = arg_int(k, &a.stream, "stream", &act.stream)))
			return st;
	} else if (e->tid.type == J_NUM) {
		(void)jv_int(&e->tid, &act.stream);
	}
	if ((st = arg_int(k, &a.context, "context", &act.context)) ||
	    (st = arg_int(k, &a.correlation, "correlation", &act.correlation)) ||
	    (st = arg_int(k, &a.ext, "External id", &act.external_id)) ||
	    (st = arg_int(k, &a.regs, "registers per thread", &regs)) ||
	    (st = arg_int(k, &a.smem, "shared memory", &smem)) ||
	    (st = arg_int(k, &a.bytes, "bytes", &bytes)) ||
	    (st = arg_dim3(k, &a.grid, "grid", act.grid)) ||
	    (st = arg_dim3(k, &a.block, "block", act.block)))
		return st;
	if (regs < 0 || regs > INT32_MAX)
		return ev_fail(k, a.regs.off, "registers per thread", "expected a count");
	act.registers = (int32_t)regs;
	act.shared_mem_bytes = smem;
	if (kind == EK_KERNEL && act.external_id >= 0 && act.correlation >= 0) {
		if (act.external_id == act.correlation)
			k->n_ext_corr++;
		else
			k->n_ext_own++;
	}
	act.bytes = bytes;
	if (kind == EK_KERNEL && (st = arg_coll(k, &a, &c)))
		return st;
	if ((st = cvc_db_activity_add(k->db, &act, &act_id)))
		goto out;
	k->nact++;
	if (c.name) {
		st = store_coll(k, act_id, &c);
	} else if (kind == EK_KERNEL && act.external_id >= 0) {
		long n = decode_tmp(k, &e->name);

		if (n < 0)
			st = nomem(k);
		else if (is_nccl_name(k->tmp))
			st = add_pending(k, act_id, act.external_id);
	}
out:
	coll_free(&c);
	return st;
}

static void note_host_pid(struct kin *k, const struct ev *e)
{
	int64_t pid;

	if (k->host_pid == 0 && e->pid.type == J_NUM && jv_int(&e->pid, &pid) == 0 && pid > 0)
		k->host_pid = pid;
}

static cvc_status do_range(struct kin *k, enum evkind kind, const struct ev *e,
			   int64_t ev_off)
{
	struct args a;
	cvc_range r = {.run_id = k->run_id, .tid = -1};
	cvc_status st;

	if ((st = ev_times(k, e, ev_off, &r.start_ns, &r.end_ns)) ||
	    (st = intern_name(k, e, ev_off, &r.name_id)) ||
	    (st = parse_args(k, &e->args, &a)) || (st = cur_rank(k, &r.rank)))
		return st;
	if (kind == EK_GPU_RANGE) {
		r.kind = CVC_RANGE_GPU;
		if ((st = gpu_device(k, e, &a, ev_off, &r.device)))
			return st;
		if (a.stream.type != J_NONE) {
			if ((st = arg_int(k, &a.stream, "stream", &r.tid)))
				return st;
		} else if (e->tid.type == J_NUM) {
			(void)jv_int(&e->tid, &r.tid);
		}
	} else {
		r.kind = CVC_RANGE_CPU;
		r.device = -1;
		if (e->tid.type == J_NUM)
			(void)jv_int(&e->tid, &r.tid);
		note_host_pid(k, e);
	}
	if ((st = cvc_db_range_add(k->db, &r)))
		return st;
	k->nrange++;
	return CVC_OK;
}

static cvc_status do_rpc(struct kin *k, const struct ev *e)
{
	struct args a;
	struct coll c;
	int64_t ext = -1;
	cvc_status st;

	if ((st = parse_args(k, &e->args, &a)) ||
	    (st = arg_int(k, &a.ext, "External id", &ext)) || (st = arg_coll(k, &a, &c)))
		return st;
	note_host_pid(k, e);
	if (!c.name || ext < 0)
		goto out;  /* no sizes (older PyTorch) or nothing to link by */
	if (imp_grow((void **)&k->rpcs, &k->caprpc, k->nrpc + 1, sizeof *k->rpcs, KIN_MAX_RPC)) {
		st = cvc_db_fail(k->db, CVC_ERR_NOMEM,
				 "'%s': too many record_param_comms events (limit %d)", k->path,
				 KIN_MAX_RPC);
		goto out;
	}
	k->rpcs[k->nrpc].ext = ext;
	k->rpcs[k->nrpc].seq = k->nrpc;
	k->rpcs[k->nrpc].c = c;
	k->nrpc++;
	return CVC_OK;
out:
	coll_free(&c);
	return st;
}

/* CPU process and thread of an event; -1 where not a number. */
static void thread_of(const struct ev *e, int64_t *pid, int64_t *tid)
{
	if (e->pid.type != J_NUM || jv_int(&e->pid, pid))
		*pid = -1;
	if (e->tid.type != J_NUM || jv_int(&e->tid, tid))
		*tid = -1;
}

/*
 * Runtime / driver calls that launch kernels: cudaLaunchKernel,
 * cudaLaunchKernelExC, cudaLaunchCooperativeKernel, cuLaunchKernel(Ex),
 * cudaGraphLaunch, ...  All and only these have "Launch" in the name.
 */
static int is_launch_name(const jval *name)
{
	if (name->type != J_STR)
		return 0;
	for (size_t i = 0; i + 6 <= name->n; i++)
		if (memcmp(name->p + i, "Launch", 6) == 0)
			return 1;
	return 0;
}

/*
 * CPU ops whose shapes are kept: GEMM-like and memory-bound ATen ops
 * (cvc_db_shape_op, docs/MODELS.md "Sources").  Composite ops (matmul,
 * linear) are kept too: their kernels carry the External id of the
 * innermost op, so a composite row only gets kernels when it launched them
 * itself.  Checked on every CPU op, so the common case (another name)
 * costs a prefix compare and a binary search.  An escaped name is compared
 * decoded.
 */
static int is_shape_op(struct kin *k, const jval *name)
{
	long n;

	if (name->type != J_STR)
		return 0;
	if (!name->esc)
		return cvc_db_shape_op(name->p, name->n) != CVC_SHAPE_NONE;
	if ((n = decode_tmp(k, name)) < 0)
		return 0;
	return cvc_db_shape_op(k->tmp, (size_t)n) != CVC_SHAPE_NONE;
}

/*
 * Appends JSON text v to the scratch buffer at *used without the white
 * space outside strings (traces are often pretty-printed: Input Dims of
 * one op can take 20 lines).  The text was checked by jc_value.
 */
static int compact_json(struct kin *k, const jval *v, size_t *used)
{
	int in_str = 0, esc = 0;

	if (*used + v->n + 1 > k->tmpcap) {
		size_t cap = *used + v->n + 1 < 256 ? 256 : *used + v->n + 1;
		char *t = realloc(k->tmp, cap);

		if (!t)
			return -1;
		k->tmp = t;
		k->tmpcap = cap;
	}
	for (size_t i = 0; i < v->n; i++) {
		char ch = v->p[i];

		if (in_str) {
			if (esc)
				esc = 0;
			else if (ch == '\\')
				esc = 1;
			else if (ch == '"')
				in_str = 0;
		} else if (ch == ' ' || ch == '\n' || ch == '\r' || ch == '\t') {
			continue;
		} else if (ch == '"') {
			in_str = 1;
		}
		k->tmp[(*used)++] = ch;
	}
	return 0;
}

/* Keeps an op's shapes; ops without dims or External id are left. */
static cvc_status do_shape(struct kin *k, const struct ev *e, int64_t ev_off)
{
	struct args a;
	cvc_op_shape row = {.run_id = k->run_id, .external_id = -1};
	struct oplink_op op = {.pid = -1, .tid = -1};
	int has_span = e->ts.type != J_NONE && e->dur.type != J_NONE;
	cvc_status st;

	if ((has_span && (st = ev_times(k, e, ev_off, &op.start_ns, &op.end_ns))) ||
	    (st = parse_args(k, &e->args, &a)) ||
	    (st = arg_int(k, &a.ext, "External id", &row.external_id)))
		return st;
	note_host_pid(k, e);
	if (a.dims.type == J_NONE || row.external_id < 0)
		return CVC_OK;  /* recorded without shapes, or nothing to link by */
	if (a.dims.type != J_ARR)
		return ev_fail(k, a.dims.off, "Input Dims", "expected an array");
	if (a.types.type != J_NONE && a.types.type != J_ARR)
		return ev_fail(k, a.types.off, "Input type", "expected an array");
	if ((st = intern_name(k, e, ev_off, &row.name_id)) || (st = cur_rank(k, &row.rank)))
		return st;
	/* JSON text as the trace has it, white space dropped: dims first,
	 * then types, in one scratch buffer. */
	{
		size_t used = 0, nd;

		if (compact_json(k, &a.dims, &used))
			return nomem(k);
		nd = used;
		if (a.types.type == J_ARR && compact_json(k, &a.types, &used))
			return nomem(k);
		row.dims = k->tmp;
		row.dims_len = nd;
		if (a.types.type == J_ARR) {
			row.types = k->tmp + nd;
			row.types_len = used - nd;
		}
	}
	if ((st = cvc_db_op_shape_add(k->db, &row, &op.shape_id)))
		return st;
	k->nshape++;
	if (!has_span)
		return CVC_OK;
	thread_of(e, &op.pid, &op.tid);
	return oplink_add_op(&k->link, &op) ? nomem(k) : CVC_OK;
}

/*
 * A runtime or driver call: kept when it launches kernels, for linking by
 * nesting (oplink.h).  Other calls were skipped by can_skip.
 */
static cvc_status do_launch(struct kin *k, const struct ev *e, int64_t ev_off)
{
	struct args a;
	struct oplink_launch la = {.pid = -1, .tid = -1, .correlation = -1};
	int64_t end;
	cvc_status st;

	if (e->ts.type == J_NONE || e->dur.type == J_NONE)
		return CVC_OK;  /* nothing to place it by; not needed for anything else */
	if ((st = ev_times(k, e, ev_off, &la.ts_ns, &end)) || (st = parse_args(k, &e->args, &a)) ||
	    (st = arg_int(k, &a.correlation, "correlation", &la.correlation)))
		return st;
	if (la.correlation < 0)
		return CVC_OK;
	thread_of(e, &la.pid, &la.tid);
	return oplink_add_launch(&k->link, &la) ? nomem(k) : CVC_OK;
}

/* Decides from what was read so far whether the rest can be skipped. */
static int can_skip(struct kin *k, const struct ev *e)
{
	if (e->ph.type != J_NONE && !jv_eq(&e->ph, "X"))
		return 1;
	if (e->cat.type != J_NONE) {
		enum evkind kd = cat_kind(&e->cat);

		if (kd == EK_SKIP)
			return 1;
		if (kd == EK_RPC && e->name.type != J_NONE &&
		    !jv_eq(&e->name, "record_param_comms") && !is_shape_op(k, &e->name))
			return 1;
		if (kd == EK_LAUNCH && e->name.type != J_NONE && !is_launch_name(&e->name))
			return 1;
	}
	return 0;
}

static cvc_status handle_event(struct kin *k, const char *p, size_t n, int64_t off)
{
	struct ev e;
	jcur c;
	jval key, v, *slot;
	int first = 1, r;
	enum evkind kind;

	memset(&e, 0, sizeof e);
	jc_init(&c, p, n, off);
	c.p++;  /* '{' */
	while ((r = jc_member(&c, &first, &key)) == 1) {
		if (jc_value(&c, &v, EV_DEPTH + 1, 0))
			return jc_report(k, &c);
		slot = ev_slot(&e, &key);
		if (!slot || slot->type != J_NONE)
			continue;  /* the first occurrence of a key counts */
		*slot = v;
		/* js_span already checked that the event's brackets balance. */
		if (can_skip(k, &e))
			return CVC_OK;
	}
	if (r < 0)
		return jc_report(k, &c);
	if (e.ph.type == J_NONE || e.cat.type == J_NONE)
		return CVC_OK;
	kind = cat_kind(&e.cat);
	switch (kind) {
	case EK_KERNEL:
	case EK_MEMCPY:
	case EK_MEMSET:
		return do_activity(k, kind, &e, off);
	case EK_GPU_RANGE:
	case EK_CPU_RANGE:
		return do_range(k, kind, &e, off);
	case EK_RPC:
		if (jv_eq(&e.name, "record_param_comms"))
			return do_rpc(k, &e);
		return is_shape_op(k, &e.name) ? do_shape(k, &e, off) : CVC_OK;
	case EK_LAUNCH:
		return is_launch_name(&e.name) ? do_launch(k, &e, off) : CVC_OK;
	case EK_SKIP:
		break;
	}
	return CVC_OK;
}

static cvc_status parse_events(struct kin *k)
{
	js_src *s = k->src;
	int ch, first = 1;
	const char *p;
	size_t n;
	int64_t off;
	cvc_status st;

	k->seen_events = 1;
	ch = js_peek(s);
	if (ch == -2)
		return src_fail(k);
	if (ch != '[')
		return cvc_db_fail(k->db, CVC_ERR_FORMAT,
				   "'%s': byte %lld: field 'traceEvents': expected an array",
				   k->path, (long long)js_offset(s));
	js_advance(s);
	for (;;) {
		ch = js_peek(s);
		if (ch == ']') {
			js_advance(s);
			return CVC_OK;
		}
		if (!first) {
			if (ch != ',')
				goto bad_sep;
			js_advance(s);
			ch = js_peek(s);
		}
		first = 0;
		if (ch != '{') {
			if (ch == -2)
				return src_fail(k);
			return cvc_db_fail(k->db, CVC_ERR_FORMAT,
					   "'%s': byte %lld: event %lld: %s", k->path,
					   (long long)js_offset(s), (long long)k->nevents,
					   ch == -1 ? "unexpected end of file, expected an event object"
						    : "expected an event object '{'");
		}
		if (js_span(s, EV_DEPTH, &p, &n, &off))
			return src_fail(k);
		k->nevents++;
		if ((st = handle_event(k, p, n, off)))
			return st;
		if (js_offset(s) >= k->next_progress) {
			imp_progress(k->opts, k->path, js_raw_offset(s), js_raw_size(s));
			k->next_progress = js_offset(s) + KIN_PROGRESS_STEP;
		}
	}
bad_sep:
	if (ch == -2)
		return src_fail(k);
	return cvc_db_fail(k->db, CVC_ERR_FORMAT, "'%s': byte %lld: %s", k->path,
			   (long long)js_offset(s),
			   ch == -1 ? "unexpected end of file, expected ',' or ']'"
				    : "expected ',' or ']'");
}

static cvc_status parse_document(struct kin *k)
{
	js_src *s = k->src;
	int ch, first = 1;
	const char *p;
	size_t n;
	int64_t off;
	char key[64];
	cvc_status st;

	ch = js_peek(s);
	if (ch == -2)
		return src_fail(k);
	if (ch != '{')
		return cvc_db_fail(k->db, CVC_ERR_FORMAT, "'%s': byte %lld: %s", k->path,
				   (long long)js_offset(s),
				   ch == -1 ? "empty file, expected a JSON object"
					    : "expected '{' to start a Kineto trace");
	js_advance(s);
	for (;;) {
		jcur c;
		jval kv;

		ch = js_peek(s);
		if (ch == '}') {
			js_advance(s);
			break;
		}
		if (!first) {
			if (ch != ',')
				goto bad_sep;
			js_advance(s);
			ch = js_peek(s);
		}
		first = 0;
		if (ch != '"') {
			if (ch == -2)
				return src_fail(k);
			return cvc_db_fail(k->db, CVC_ERR_FORMAT, "'%s': byte %lld: %s", k->path,
					   (long long)js_offset(s),
					   ch == -1 ? "unexpected end of file, expected a key"
						    : "expected a string key");
		}
		if (js_span(s, 1, &p, &n, &off))
			return src_fail(k);
		jc_init(&c, p, n, off);
		if (jc_value(&c, &kv, 1, 0))
			return jc_report(k, &c);
		{
			long m = jv_decode(&kv, key, sizeof key - 1);

			key[m < 0 ? 0 : m] = '\0';  /* too long: no key we know */
		}
		ch = js_peek(s);
		if (ch != ':') {
			if (ch == -2)
				return src_fail(k);
			return cvc_db_fail(k->db, CVC_ERR_FORMAT, "'%s': byte %lld: expected ':'",
					   k->path, (long long)js_offset(s));
		}
		js_advance(s);
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
	ch = js_peek(s);
	if (ch == -2)
		return src_fail(k);
	if (ch != -1)
		return cvc_db_fail(k->db, CVC_ERR_FORMAT,
				   "'%s': byte %lld: expected the end of file after the trace object",
				   k->path, (long long)js_offset(s));
	if (!k->seen_events)
		return cvc_db_fail(k->db, CVC_ERR_FORMAT,
				   "'%s': byte %lld: no traceEvents array, expected a Kineto trace",
				   k->path, (long long)js_offset(s));
	return CVC_OK;
bad_sep:
	if (ch == -2)
		return src_fail(k);
	return cvc_db_fail(k->db, CVC_ERR_FORMAT, "'%s': byte %lld: %s", k->path,
			   (long long)js_offset(s),
			   ch == -1 ? "unexpected end of file, expected ',' or '}'"
				    : "expected ',' or '}'");
}

/* ---- end of file: rows that needed the whole file ------------------------------ */

static int cmp_rpc(const void *a, const void *b)
{
	const struct rpc *x = a, *y = b;

	if (x->ext != y->ext)
		return (x->ext > y->ext) - (x->ext < y->ext);
	return (x->seq > y->seq) - (x->seq < y->seq);
}

static int cmp_rpc_ext(const void *a, const void *b)
{
	const struct rpc *x = a, *y = b;

	return (x->ext > y->ext) - (x->ext < y->ext);
}

static cvc_status link_pending(struct kin *k)
{
	cvc_status st;

	if (k->npend == 0 || k->nrpc == 0)
		return CVC_OK;
	qsort(k->rpcs, k->nrpc, sizeof *k->rpcs, cmp_rpc);
	for (size_t i = 0; i < k->npend; i++) {
		struct rpc key = {.ext = k->pend[i].ext};
		struct rpc *hit = bsearch(&key, k->rpcs, k->nrpc, sizeof *k->rpcs, cmp_rpc_ext);

		while (hit && hit + 1 < k->rpcs + k->nrpc && hit[1].ext == hit->ext)
			hit++;

		if (hit && (st = store_coll(k, k->pend[i].act_id, &hit->c)))
			return st;
	}
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

/* distributedInfo came after the events: move their rows to the real rank. */
static cvc_status move_rank(struct kin *k)
{
	static const char *const sql[3] = {
		"UPDATE activities SET rank=?1 WHERE run_id=?2 AND rank=?3 AND id>?4",
		"UPDATE ranges SET rank=?1 WHERE run_id=?2 AND rank=?3 AND id>?4",
		"UPDATE op_shapes SET rank=?1 WHERE run_id=?2 AND rank=?3 AND id>?4",
	};
	const int64_t floors[3] = {k->act_id_floor, k->range_id_floor, k->shape_id_floor};
	sqlite3 *sq = cvc_db_sqlite(k->db);

	for (int i = 0; i < 3; i++) {
		sqlite3_stmt *st = NULL;
		int rc;

		if (sqlite3_prepare_v2(sq, sql[i], -1, &st, NULL) != SQLITE_OK)
			return cvc_db_fail(k->db, CVC_ERR_DB, "'%s': %s", cvc_db_path(k->db),
					   sqlite3_errmsg(sq));
		sqlite3_bind_int(st, 1, k->rank);
		sqlite3_bind_int64(st, 2, k->run_id);
		sqlite3_bind_int(st, 3, k->prov_rank);
		sqlite3_bind_int64(st, 4, floors[i]);
		rc = sqlite3_step(st);
		sqlite3_finalize(st);
		if (rc != SQLITE_DONE)
			return cvc_db_fail(k->db, CVC_ERR_DB, "'%s': %s", cvc_db_path(k->db),
					   sqlite3_errmsg(sq));
	}
	return CVC_OK;
}

static cvc_status rank_meta(struct kin *k, int rank, const char *name, const char *val)
{
	char key[96];

	snprintf(key, sizeof key, "rank%d.import.%s", rank, name);
	return cvc_db_run_meta_set(k->db, k->run_id, key, val);
}

/*
 * Op -> kernel links by nesting.  When every kernel's External id is its
 * correlation id (older Kineto), the ops' own External ids name no kernel
 * and could only collide with a kernel's by chance, so they are cleared
 * (-1) and nesting is the only link.
 */
static cvc_status link_ops(struct kin *k, int rank)
{
	char sql[128], val[32];
	cvc_status st;

	if (k->nshape == 0)
		return CVC_OK;
	if (k->n_ext_corr > 0 && k->n_ext_own == 0) {
		snprintf(sql, sizeof sql, "UPDATE op_shapes SET external_id=-1 WHERE run_id=%lld AND id>%lld",
			 (long long)k->run_id, (long long)k->shape_id_floor);
		if ((st = cvc_db_exec(k->db, sql)))
			return st;
	}
	if ((st = oplink_write(&k->link, k->db, k->run_id, rank, &k->nlinked)))
		return st == CVC_ERR_NOMEM ? nomem(k) : st;
	snprintf(val, sizeof val, "%lld", (long long)k->nlinked);
	if ((st = rank_meta(k, rank, "op_launches", val)))
		return st;
	if (k->link.dropped) {
		snprintf(val, sizeof val, "%lld", (long long)k->link.dropped);
		if ((st = rank_meta(k, rank, "op_launches_not_kept", val)))
			return st;
	}
	return CVC_OK;
}

static const struct devprop *find_prop(const struct kin *k, int dev)
{
	for (size_t i = 0; i < k->nprops; i++)
		if (k->props[i].id == dev)
			return &k->props[i];
	return NULL;
}

/*
 * Two files that both say they are rank N of one run are two steps or two
 * jobs mixed up: merging them would double-count every kernel of that rank.
 */
static cvc_status check_rank_free(struct kin *k, int rank)
{
	sqlite3_stmt *st = NULL;
	int taken;

	if (sqlite3_prepare_v2(cvc_db_sqlite(k->db),
			       "SELECT 1 FROM ranks WHERE run_id=? AND rank=?", -1, &st,
			       NULL) != SQLITE_OK)
		return cvc_db_fail(k->db, CVC_ERR_DB, "'%s': %s", cvc_db_path(k->db),
				   sqlite3_errmsg(cvc_db_sqlite(k->db)));
	sqlite3_bind_int64(st, 1, k->run_id);
	sqlite3_bind_int(st, 2, rank);
	taken = sqlite3_step(st) == SQLITE_ROW;
	sqlite3_finalize(st);
	if (taken)
		return cvc_db_fail(k->db, CVC_ERR_FORMAT,
				   "'%s': rank %d is already in this run (import each job's "
				   "ranks once, or use --run to start another run)",
				   k->path, rank);
	return CVC_OK;
}

static cvc_status finish(struct kin *k)
{
	char tool[256] = "", key[128];
	const struct devprop *gpu = NULL;
	cvc_run_info ri = {0};
	cvc_rank_info rk = {0};
	cvc_status st;
	int rank;

	if (k->rank_known && k->have_prov && k->prov_rank != k->rank &&
	    (st = move_rank(k)))
		return st;
	if ((st = cur_rank(k, &rank)))
		return st;
	if ((st = link_pending(k)) || (st = link_ops(k, rank)))
		return st;
	for (size_t i = 0; i < k->ndevs; i++) {
		const struct devprop *d = find_prop(k, k->devs[i]);
		cvc_device_info di = {.rank = rank, .device = k->devs[i], .cc_major = -1,
				      .cc_minor = -1};

		if (d) {
			di.name = d->name;
			di.sm_count = d->sms > 0 && d->sms <= INT32_MAX ? (int)d->sms : 0;
			di.total_mem_bytes = d->mem > 0 ? d->mem : 0;
			di.cc_major = d->cc_major >= 0 && d->cc_major < 1000 ? (int)d->cc_major : -1;
			di.cc_minor = d->cc_minor >= 0 && d->cc_minor < 1000 ? (int)d->cc_minor : -1;
		}
		if ((st = cvc_db_device_put(k->db, k->run_id, &di)))
			return st;
	}
	if (k->rank_known && (st = check_rank_free(k, rank)))
		return st;
	/* A rank we numbered ourselves may be renumbered by a shard merge. */
	if (!k->rank_known &&
	    (st = cvc_db_run_meta_set(k->db, k->run_id, "import.auto_rank", "1")))
		return st;
	rk.rank = rank;
	rk.pid = k->host_pid;
	if ((st = cvc_db_rank_put(k->db, k->run_id, &rk)))
		return st;
	if (k->schema || k->cupti || k->cudart) {
		int m = snprintf(tool, sizeof tool, "kineto schema %s",
				 k->schema ? k->schema : "?");

		if (k->cupti && m > 0 && (size_t)m < sizeof tool)
			m += snprintf(tool + m, sizeof tool - (size_t)m, ", cupti %s", k->cupti);
		if (k->cudart && m > 0 && (size_t)m < sizeof tool)
			snprintf(tool + m, sizeof tool - (size_t)m, ", cuda runtime %s", k->cudart);
	}
	gpu = k->ndevs ? find_prop(k, k->devs[0]) : NULL;
	if (!gpu && k->nprops)
		gpu = &k->props[0];
	ri.format = "kineto";
	ri.source = k->path;
	ri.tool_version = tool[0] ? tool : NULL;
	ri.gpu_model = gpu ? gpu->name : NULL;
	ri.nccl_version = k->nccl_version;
	ri.world_size = (int)k->world_size;
	if ((st = cvc_db_run_merge(k->db, k->run_id, &ri)))
		return st;
	for (size_t i = 0; i < k->nmeta; i++) {
		snprintf(key, sizeof key, "rank%d.%s", rank, k->metas[i].key);
		if ((st = cvc_db_run_meta_set(k->db, k->run_id, key, k->metas[i].value)))
			return st;
	}
	return cvc_db_source_add(k->db, k->run_id, k->path, "kineto", rank, k->nevents, NULL);
}

static void kin_release(struct kin *k)
{
	js_close(k->src);
	for (size_t i = 0; i < k->nprops; i++)
		free(k->props[i].name);
	free(k->props);
	free(k->devs);
	for (size_t i = 0; i < k->nrpc; i++)
		coll_free(&k->rpcs[i].c);
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
	    (st = parse_document(&k)) || (st = finish(&k)))
		goto out;
	imp_progress(opts, path, js_raw_size(k.src), js_raw_size(k.src));
	if (stats) {
		stats->events += k.nevents;
		stats->activities += k.nact;
		stats->collectives += k.ncoll;
		stats->ranges += k.nrange;
		stats->op_shapes += k.nshape;
		stats->op_launches += k.nlinked;
	}
out:
	kin_release(&k);
	return st;
}
