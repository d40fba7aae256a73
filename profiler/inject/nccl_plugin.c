/*
 * nccl_plugin.c - libcvc_inject.so is also an NCCL profiler plugin
 * (NCCL >= 2.28, interface v5), loaded with NCCL_PROFILER_PLUGIN=<this .so>,
 * so that collectives get their sizes.  Same file as the CUDA injection, so
 * the same instance: NCCL's dlopen finds the one the driver loaded.
 *
 * How a kernel gets its NCCL calls: NCCL reports each API call (CollApi,
 * P2pApi: function, count, datatype, root) under its GroupApi event, and
 * brackets the actual cuLaunchKernel with a KernelLaunch event under the
 * same GroupApi.  At KernelLaunch start we take the calls of that group on
 * that communicator, give them a launch id, and push the id as a CUPTI
 * external correlation (CUSTOM2) around the launch; CUPTI then ties the
 * launch's correlation id, hence the kernel record, to the id.  The join
 * itself happens when the spool is materialized.  NCCL older than 2.28 does
 * not find ncclProfiler_v5 and loads nothing: kernels keep their names only.
 *
 * The interface structs are in nccl_profiler_v5.h (declared from NCCL's
 * source: the plugin headers do not ship with the toolkit).
 */
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include <cupti.h>

#include "cvc/cvc.h"
#include "inject_int.h"

#include "nccl_profiler_v5.h"

/* ---- our state ------------------------------------------------------------------ */

struct comm_ctx {
	uint64_t comm_id;
	int nranks, rank;
};

#define GROUP_CALLS 32   /* calls remembered per group; more are summed into the last */
#define NSLOTS 4096      /* event handles, reused round robin: events are short */

struct call {
	const struct comm_ctx *ctx;
	const char *func, *dtype;  /* NCCL's static strings */
	int64_t count;
	int root;
	int taken;
};

struct slot {
	uint64_t type;
	struct comm_ctx *ctx;
	int ncalls;
	int pushed;                /* KernelLaunch: an external id is pushed */
	struct call calls[GROUP_CALLS];
};

static struct slot slots[NSLOTS];
static atomic_uint next_slot;
static atomic_ullong next_launch = 1;

/*
 * The launch id pushed on this thread around NCCL's kernel launch, 0 when
 * none: a CUDA-graph node created inside the launch (stream capture) is
 * that launch's (cvci_nccl_current_launch, issue 19 item 8).  NCCL starts
 * and stops the KernelLaunch event on the thread that launches.
 */
static _Thread_local uint64_t cur_launch;

uint64_t cvci_nccl_current_launch(void)
{
	return cur_launch;
}

static struct slot *slot_new(uint64_t type, struct comm_ctx *ctx)
{
	struct slot *s = &slots[atomic_fetch_add(&next_slot, 1) % NSLOTS];

	s->type = type;
	s->ctx = ctx;
	s->ncalls = 0;
	s->pushed = 0;
	return s;
}

/* Element size from NCCL's datatype name: the first number is the bit width. */
static int64_t dtype_bytes(const char *dt)
{
	long bits = 0;

	if (!dt)
		return -1;
	for (; *dt && (*dt < '0' || *dt > '9'); dt++)
		;
	for (; *dt >= '0' && *dt <= '9' && bits < 1024; dt++)
		bits = bits * 10 + (*dt - '0');
	return bits >= 8 ? bits / 8 : -1;
}

static void group_add(struct slot *g, struct comm_ctx *ctx, const char *func, const char *dtype,
		      size_t count, int root)
{
	struct call *c;

	if (!g || g->type != NCCL_PROFILE_GROUP_API)
		return;
	if (g->ncalls < GROUP_CALLS)
		c = &g->calls[g->ncalls++];
	else
		c = &g->calls[GROUP_CALLS - 1]; /* summed into the last: bounded */
	c->ctx = ctx;
	c->func = func ? func : "unknown";
	/* NCCL's ncclDatatypeToString (src/collectives.cc, 2.2x) has a name
	 * for every type but ncclUint8, which it calls "Unknown"; NCCL refuses
	 * a call with a type it does not know before any profiler event */
	c->dtype = !dtype ? "unknown" : strcmp(dtype, "Unknown") == 0 ? "ncclUint8" : dtype;
	c->count = (int64_t)count;
	c->root = root;
	c->taken = 0;
}

/* The calls of group g on ctx become one launch record; returns its id. */
static uint64_t launch(struct slot *g, struct comm_ctx *ctx)
{
	struct cvc_spool_coll rec;
	const char *func = NULL, *dtype = NULL;
	int64_t esz;

	memset(&rec, 0, sizeof rec);
	rec.launch_id = atomic_fetch_add(&next_launch, 1);
	rec.root = -1;
	rec.nranks = ctx ? ctx->nranks : 0;
	if (g && g->type == NCCL_PROFILE_GROUP_API) {
		for (int i = 0; i < g->ncalls; i++) {
			struct call *c = &g->calls[i];

			if (c->taken || c->ctx != ctx)
				continue;
			c->taken = 1;
			if (!func) {
				func = c->func;
				dtype = c->dtype;
				rec.root = c->root;
			}
			rec.count += c->count;
			esz = dtype_bytes(c->dtype);
			rec.bytes = (esz < 0 || rec.bytes < 0) ? -1 : rec.bytes + c->count * esz;
			rec.ncalls++;
		}
	}
	if (rec.ncalls)
		cvci_queue_coll(&rec, func, dtype);
	return rec.launch_id;
}

static cvc_nccl_result p_init(void **context, uint64_t commId, int *mask, const char *commName,
			      int nNodes, int nranks, int rank, cvc_nccl_logger logfn)
{
	struct comm_ctx *c = calloc(1, sizeof *c);

	(void)commName;
	(void)nNodes;
	(void)logfn;
	if (!c)
		return 1; /* non-success: NCCL runs without this plugin */
	c->comm_id = commId;
	c->nranks = nranks;
	c->rank = rank;
	cvci_note_comm(nranks, rank);
	*context = c;
	*mask = NCCL_PROFILE_GROUP_API | NCCL_PROFILE_COLL_API | NCCL_PROFILE_P2P_API |
		NCCL_PROFILE_KERNEL_LAUNCH;
	return 0;
}

static cvc_nccl_result p_start(void *context, void **handle, cvc_nccl_descr_v5 *d)
{
	struct comm_ctx *ctx = context;
	struct slot *s;

	*handle = NULL;
	switch (d->type) {
	case NCCL_PROFILE_GROUP_API:
		*handle = slot_new(d->type, ctx);
		break;
	case NCCL_PROFILE_COLL_API:
		group_add(d->parentObj, ctx, d->collApi.func, d->collApi.datatype,
			  d->collApi.count, d->collApi.root);
		if (d->collApi.graphCaptured)
			cvci_note_graph_call();
		break;
	case NCCL_PROFILE_P2P_API:
		group_add(d->parentObj, ctx, d->p2pApi.func, d->p2pApi.datatype,
			  d->p2pApi.count, -1);
		if (d->p2pApi.graphCaptured)
			cvci_note_graph_call();
		break;
	case NCCL_PROFILE_KERNEL_LAUNCH: {
		uint64_t id = launch(d->parentObj, ctx);

		s = slot_new(d->type, ctx);
		s->pushed = cuptiActivityPushExternalCorrelationId(
				    CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM2, id) == CUPTI_SUCCESS;
		if (s->pushed)
			cur_launch = id;
		*handle = s;
		break;
	}
	default:
		break;
	}
	return 0;
}

static cvc_nccl_result p_stop(void *handle)
{
	struct slot *s = handle;
	uint64_t last = 0;

	if (s && s->type == NCCL_PROFILE_KERNEL_LAUNCH && s->pushed) {
		cuptiActivityPopExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM2, &last);
		s->pushed = 0;
		cur_launch = 0;
	}
	return 0;
}

static cvc_nccl_result p_state(void *handle, cvc_nccl_state st, void *args)
{
	(void)handle;
	(void)st;
	(void)args;
	return 0;
}

static cvc_nccl_result p_finalize(void *context)
{
	free(context);
	return 0;
}

CVC_API extern const cvc_nccl_profiler_v5 ncclProfiler_v5;
CVC_API const cvc_nccl_profiler_v5 ncclProfiler_v5 = {
	"cvc", p_init, p_start, p_stop, p_state, p_finalize,
};
