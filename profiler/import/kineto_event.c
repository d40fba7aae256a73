/*
 * kineto_event.c - one traceEvents entry of a Kineto trace into rows.
 *
 * An event is decoded only as far as needed to see that it is of no
 * interest (ph/cat usually come first): can_skip() is asked after every
 * member.  Kernels, copies and sets become activities, annotations ranges;
 * record_param_comms CPU ops keep collective sizes for NCCL kernels linked
 * later by External id (kineto_finish.c), shape ops their "Input Dims", and
 * launch calls their correlation id for linking by nesting (oplink.h).
 */
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cvc/cvc_db.h"
#include "cvc/cvc_vocab.h"
#include "import_int.h"
#include "kineto_int.h"

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

/*
 * PyTorch's profiler up to 1.8 wrote the step annotation as an operator
 * ({"cat": "Operator", "name": "ProfilerStep#2"}), where later versions
 * write a user_annotation: the same step range either way.
 */
static int legacy_step(const jval *cat, const jval *name)
{
	static const char step[] = "ProfilerStep#";

	return jv_eq(cat, "Operator") && name->type == J_STR && !name->esc &&
	       name->n > sizeof step - 1 && memcmp(name->p, step, sizeof step - 1) == 0;
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
		return kin_ev_fail(k, av->off, "args", "expected an object");
	jc_init(&c, av->p, av->n, av->off);
	c.p++;  /* '{', checked when the event was read */
	while ((r = jc_member(&c, &first, &key)) == 1) {
		if (jc_value(&c, &v, EV_DEPTH + 2, 0))
			return kin_jc_report(k, &c);
		slot = args_slot(a, &key);
		if (slot && slot->type == J_NONE)
			*slot = v;
	}
	if (r < 0)
		return kin_jc_report(k, &c);
	return CVC_OK;
}

/* Optional integer argument: absent leaves *out; wrong type fails. */
static cvc_status arg_int(struct kin *k, const jval *v, const char *field, int64_t *out)
{
	if (v->type == J_NONE)
		return CVC_OK;
	if (v->type != J_NUM || jv_int(v, out))
		return kin_ev_fail(k, v->off, field, "expected an integer");
	return CVC_OK;
}

static cvc_status arg_str(struct kin *k, const jval *v, const char *field, char **out)
{
	if (v->type == J_NONE)
		return CVC_OK;
	if (v->type != J_STR)
		return kin_ev_fail(k, v->off, field, "expected a string");
	if (!(*out = kin_dup_value(k, v)))
		return kin_nomem(k);
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
		return kin_ev_fail(k, v->off, field, "expected an array of 3 integers");
	jc_init(&c, v->p, v->n, v->off);
	c.p++;
	while ((r = jc_element(&c, &first)) == 1) {
		int64_t x;

		if (jc_value(&c, &e, 0, 0))
			return kin_jc_report(k, &c);
		if (i >= 3 || e.type != J_NUM || jv_int(&e, &x) || x < 0 || x > INT32_MAX)
			return kin_ev_fail(k, e.off, field, "expected an array of 3 integers");
		dst[i++] = (int32_t)x;
	}
	if (r < 0)
		return kin_jc_report(k, &c);
	if (i != 3)
		return kin_ev_fail(k, v->off, field, "expected an array of 3 integers");
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
	if (a->pg_ranks.type != J_NONE && !(c->pg_ranks = kin_dup_value(k, &a->pg_ranks))) {
		st = kin_nomem(k);
		goto fail;
	}
	if (!c->name && !(c->name = strdup(""))) {
		st = kin_nomem(k);
		goto fail;
	}
	return CVC_OK;
fail:
	kin_coll_free(c);
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

cvc_status kin_store_coll(struct kin *k, int64_t act_id, const struct coll *c)
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
		k->n.collectives++;
	return st;
}

/* CUPTI copy kind from "Memcpy HtoD (Pinned -> Device)". */
static int32_t copy_kind(const char *name)
{
	if (strncmp(name, "Memcpy ", 7) != 0)
		return 0;
	return (int32_t)cvc_copy_kind_of(name + 7, strcspn(name + 7, " "));
}

/* The rank rows of this file go to; picks a provisional one on first use. */
cvc_status kin_cur_rank(struct kin *k, int *rank)
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
		return kin_nomem(k);
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
		return kin_ev_fail(k, ev_off, NULL, "missing field 'pid', expected a device");
	if (v->type != J_NUM || jv_int(v, &d) || d < 0 || d > KIN_MAX_DEVICE_INDEX)
		return kin_ev_fail(k, v->off, field, "expected a device index (0..65535)");
	*dev = (int)d;
	return note_device(k, *dev);
}

static cvc_status ev_times(struct kin *k, const struct ev *e, int64_t ev_off,
			   int64_t *start, int64_t *end)
{
	int64_t dur;

	if (e->ts.type == J_NONE)
		return kin_ev_fail(k, ev_off, NULL, "missing field 'ts', expected a number");
	if (e->dur.type == J_NONE)
		return kin_ev_fail(k, ev_off, NULL, "missing field 'dur', expected a number");
	if (e->ts.type != J_NUM)
		return kin_ev_fail(k, e->ts.off, "ts", "expected a number");
	if (e->dur.type != J_NUM)
		return kin_ev_fail(k, e->dur.off, "dur", "expected a number");
	if (jv_us_to_ns(&e->ts, start))
		return kin_ev_fail(k, e->ts.off, "ts", "number out of range");
	if (jv_us_to_ns(&e->dur, &dur))
		return kin_ev_fail(k, e->dur.off, "dur", "number out of range");
	if (dur < 0)
		return kin_ev_fail(k, e->dur.off, "dur", "expected a non-negative number");
	if (*start > INT64_MAX - dur)
		return kin_ev_fail(k, e->dur.off, "dur", "number out of range");
	*end = *start + dur;
	return CVC_OK;
}

static cvc_status intern_name(struct kin *k, const struct ev *e, int64_t ev_off,
			      int64_t *id)
{
	long n;

	if (e->name.type == J_NONE)
		return kin_ev_fail(k, ev_off, NULL, "missing field 'name', expected a string");
	if (e->name.type != J_STR)
		return kin_ev_fail(k, e->name.off, "name", "expected a string");
	if ((n = kin_decode_tmp(k, &e->name)) < 0)
		return kin_nomem(k);
	if ((size_t)n > CVC_DB_NAME_MAX)
		return kin_ev_fail(k, e->name.off, "name", "expected a name of at most 1 MiB");
	return cvc_db_intern(k->db, k->tmp, (size_t)n, id);
}

static cvc_status add_pending(struct kin *k, int64_t act_id, int64_t ext)
{
	if (cvc_grow_bounded(&k->pend, &k->cappend, k->npend + 1, sizeof *k->pend, KIN_MAX_RPC))
		return kin_nomem(k);
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
	    (st = kin_cur_rank(k, &act.rank)))
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
		return kin_ev_fail(k, a.regs.off, "registers per thread", "expected a count");
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
	k->n.activities++;
	if (c.name) {
		st = kin_store_coll(k, act_id, &c);
	} else if (kind == EK_KERNEL && act.external_id >= 0) {
		long n = kin_decode_tmp(k, &e->name);

		if (n < 0)
			st = kin_nomem(k);
		else if (cvc_hta_is_comm(k->tmp))
			st = add_pending(k, act_id, act.external_id);
	}
out:
	kin_coll_free(&c);
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
	    (st = parse_args(k, &e->args, &a)) || (st = kin_cur_rank(k, &r.rank)))
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
	k->n.ranges++;
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
	if (cvc_grow_bounded(&k->rpcs, &k->caprpc, k->nrpc + 1, sizeof *k->rpcs, KIN_MAX_RPC)) {
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
	kin_coll_free(&c);
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

static int name_has(const jval *name, const char *word, size_t n)
{
	if (name->type != J_STR)
		return 0;
	for (size_t i = 0; i + n <= name->n; i++)
		if (memcmp(name->p + i, word, n) == 0)
			return 1;
	return 0;
}

/*
 * Runtime / driver calls that launch kernels: cudaLaunchKernel,
 * cudaLaunchKernelExC, cudaLaunchCooperativeKernel, cuLaunchKernel(Ex),
 * cudaGraphLaunch, ...  All and only these have "Launch" in the name.
 */
static int is_launch_name(const jval *name)
{
	return name_has(name, "Launch", 6);
}

/*
 * Calls that put work on the GPU: the launches, and the copies and sets
 * (cudaMemcpyAsync, cuMemsetD32Async, hipMemcpyAsync, ...), whose time
 * places their activity in a step (db/migrate_4.sql).  Only the launches
 * feed op links and the host's time per launch.
 */
static int is_gpu_call_name(const jval *name)
{
	return is_launch_name(name) || name_has(name, "Memcpy", 6) || name_has(name, "Memset", 6);
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
	if ((n = kin_decode_tmp(k, name)) < 0)
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
		return kin_ev_fail(k, a.dims.off, "Input Dims", "expected an array");
	if (a.types.type != J_NONE && a.types.type != J_ARR)
		return kin_ev_fail(k, a.types.off, "Input type", "expected an array");
	if ((st = intern_name(k, e, ev_off, &row.name_id)) || (st = kin_cur_rank(k, &row.rank)))
		return st;
	/* JSON text as the trace has it, white space dropped: dims first,
	 * then types, in one scratch buffer. */
	{
		size_t used = 0, nd;

		if (compact_json(k, &a.dims, &used))
			return kin_nomem(k);
		nd = used;
		if (a.types.type == J_ARR && compact_json(k, &a.types, &used))
			return kin_nomem(k);
		row.dims = k->tmp;
		row.dims_len = nd;
		if (a.types.type == J_ARR) {
			row.types = k->tmp + nd;
			row.types_len = used - nd;
		}
	}
	if ((st = cvc_db_op_shape_add(k->db, &row, &op.shape_id)))
		return st;
	k->n.op_shapes++;
	if (!has_span)
		return CVC_OK;
	thread_of(e, &op.pid, &op.tid);
	return oplink_add_op(&k->link, &op) ? kin_nomem(k) : CVC_OK;
}

/*
 * A runtime or driver call that puts work on the GPU: its time is kept for
 * the activity with its correlation id (the step it belongs to), and a
 * kernel launch is kept for linking by nesting (oplink.h).  Other calls
 * were skipped by can_skip.
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
	/* ROCm's roctracer traces give a HIP launch and its kernel one
	 * "External id" and no "correlation" (AMD-AGI/TraceLens's MI300X
	 * traces; their ac2g flows carry the same id): that id is the
	 * correlation, which kin_finish() gives the kernels too */
	if (la.correlation < 0 && a.ext.type != J_NONE && e->name.type == J_STR &&
	    e->name.n > 3 && memcmp(e->name.p, "hip", 3) == 0) {
		if ((st = arg_int(k, &a.ext, "External id", &la.correlation)))
			return st;
		k->n_hip_ext += la.correlation >= 0;
	}
	if (la.correlation < 0)
		return CVC_OK;
	if ((st = kin_launch_time_add(k, la.correlation, la.ts_ns)))
		return st;
	if (!is_launch_name(&e->name))
		return CVC_OK;
	thread_of(e, &la.pid, &la.tid);
	return oplink_add_launch(&k->link, &la) ? kin_nomem(k) : CVC_OK;
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
		    !jv_eq(&e->name, "record_param_comms") && !is_shape_op(k, &e->name) &&
		    !legacy_step(&e->cat, &e->name))
			return 1;
		if (kd == EK_LAUNCH && e->name.type != J_NONE && !is_gpu_call_name(&e->name))
			return 1;
	}
	return 0;
}

cvc_status kin_handle_event(struct kin *k, const char *p, size_t n, int64_t off)
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
			return kin_jc_report(k, &c);
		slot = ev_slot(&e, &key);
		if (!slot || slot->type != J_NONE)
			continue;  /* the first occurrence of a key counts */
		*slot = v;
		/* js_span already checked that the event's brackets balance. */
		if (can_skip(k, &e))
			return CVC_OK;
	}
	if (r < 0)
		return kin_jc_report(k, &c);
	if (e.ph.type == J_NONE || e.cat.type == J_NONE)
		return CVC_OK;
	kind = cat_kind(&e.cat);
	if (legacy_step(&e.cat, &e.name))
		kind = EK_CPU_RANGE;
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
		return is_gpu_call_name(&e.name) ? do_launch(k, &e, off) : CVC_OK;
	case EK_SKIP:
		break;
	}
	return CVC_OK;
}
