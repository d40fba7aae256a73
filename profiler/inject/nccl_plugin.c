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
#include "cvc/cvc_base.h"
#include "inject_int.h"

#include "nccl_profiler_v5.h"

/* ---- our state ------------------------------------------------------------------ */

struct comm_ctx {
	uint64_t comm_id;
	int nranks, rank;
};

#define GROUP_CALLS 32   /* call slots per group; later calls fold into one (group_add) */
#define NSLOTS 4096      /* event handles, reused round robin: events are short */

/*
 * What calls add up to, per direction: collectives (CollApi), sends and
 * receives (P2pApi).  Bytes are in cvc's convention (include/cvc/
 * cvc_analyze.h, nccl-tests' printed size), -1 once any is unknown.
 */
struct tally {
	int ncoll, nsend, nrecv;
	int64_t coll_count, coll_bytes;
	int64_t send_count, send_bytes;
	int64_t recv_count, recv_bytes;
};

struct call {
	const struct comm_ctx *ctx;
	const char *func, *dtype;  /* NCCL's static strings, the slot's first call's */
	int root;
	int is_coll;               /* the first call was a CollApi */
	int taken;
	struct tally t;            /* this call, or the calls folded into it */
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

/* a += b, -1 (unknown) sticky and on overflow */
static void add_known(int64_t *a, int64_t b)
{
	if (*a < 0 || b < 0 || __builtin_add_overflow(*a, b, a))
		*a = -1;
}

static void tally_add(struct tally *a, const struct tally *b)
{
	a->ncoll += b->ncoll;
	a->nsend += b->nsend;
	a->nrecv += b->nrecv;
	add_known(&a->coll_count, b->coll_count);
	add_known(&a->coll_bytes, b->coll_bytes);
	add_known(&a->send_count, b->send_count);
	add_known(&a->send_bytes, b->send_bytes);
	add_known(&a->recv_count, b->recv_count);
	add_known(&a->recv_bytes, b->recv_bytes);
}

/*
 * One call's size in cvc's convention (include/cvc/cvc_analyze.h, which is
 * nccl-tests' printed size): NCCL's count is per rank (ncclAllGather's
 * sendcount, ncclReduceScatter's recvcount, ncclAlltoAll's count per peer,
 * ncclGather's count each rank sends, ncclScatter's count each rank
 * receives: nccl.h, 2.28), nccl-tests' size is the gathered output, the
 * scattered input, the whole send buffer: count x n.  -1 when the group
 * size or the element size is unknown.
 */
static int64_t call_bytes(const char *func, int64_t count, int64_t esz, int nranks)
{
	int64_t b;

	if (esz < 0 || __builtin_mul_overflow(count, esz, &b))
		return -1;
	if (!cvc_str_in_list("AllGather|ReduceScatter|AlltoAll|Gather|Scatter", func))
		return b;
	if (nranks <= 0 || __builtin_mul_overflow(b, (int64_t)nranks, &b))
		return -1;
	return b;
}

static void group_add(struct slot *g, struct comm_ctx *ctx, const char *func, const char *dtype,
		      size_t count, int root, int is_coll)
{
	struct tally t;
	struct call *c = NULL;
	int64_t n = count > (size_t)INT64_MAX ? -1 : (int64_t)count;
	int64_t b;

	if (!g || g->type != NCCL_PROFILE_GROUP_API)
		return;
	func = func ? func : "unknown";
	/* NCCL's ncclDatatypeToString (src/collectives.cc, 2.2x) has a name
	 * for every type but ncclUint8, which it calls "Unknown"; NCCL refuses
	 * a call with a type it does not know before any profiler event */
	dtype = !dtype ? "unknown" : strcmp(dtype, "Unknown") == 0 ? "ncclUint8" : dtype;
	b = n < 0 ? -1 : call_bytes(func, n, dtype_bytes(dtype), ctx ? ctx->nranks : 0);
	memset(&t, 0, sizeof t);
	if (is_coll) {
		t.ncoll = 1;
		t.coll_count = n;
		t.coll_bytes = b;
	} else if (strcmp(func, "Recv") == 0) {
		t.nrecv = 1;
		t.recv_count = n;
		t.recv_bytes = b;
	} else {
		t.nsend = 1;
		t.send_count = n;
		t.send_bytes = b;
	}
	if (g->ncalls < GROUP_CALLS) {
		c = &g->calls[g->ncalls++];
		memset(c, 0, sizeof *c);
		c->ctx = ctx;
		c->func = func;
		c->dtype = dtype;
		c->root = root;
		c->is_coll = is_coll;
		c->t = t;
		return;
	}
	/* Full (an all-to-all over 64 ranks is 128 calls): the call is summed
	 * into the latest slot of its communicator, whose tallies keep the
	 * sends, receives and collectives apart; bounded memory, no call lost
	 * unless none of the 32 is of its communicator. */
	for (int i = GROUP_CALLS - 1; i >= 0 && !c; i--)
		if (g->calls[i].ctx == ctx && !g->calls[i].taken)
			c = &g->calls[i];
	if (c)
		tally_add(&c->t, &t);
}

/*
 * The launch record of a group's calls on one communicator: its class,
 * NCCL's element count and its size in cvc's convention.  Collectives keep
 * the first one's name.  Sends and receives only: an all-to-all when the
 * group has at least two of each (ncclGroupStart; ncclSend/ncclRecv to
 * every peer; ncclGroupEnd: nccl-tests' alltoall, torch's all_to_all and
 * batch_isend_irecv over NCCL), a send/receive otherwise; NCCL's P2pApi
 * event names no peer, so the calls stand for the peers.  Their size is
 * the send side (the input, as Kineto's record_param_comms gives it,
 * profiler/import/kineto_event.c coll_bytes), the receive side when the
 * group only receives: one direction, never both added.
 */
static void launch_class(const struct tally *t, const struct call *first_coll,
			 const struct call *first, struct cvc_spool_coll *rec, const char **func,
			 const char **dtype)
{
	if (t->ncoll) {
		*func = first_coll->func;
		*dtype = first_coll->dtype;
		rec->root = first_coll->root;
		rec->count = t->coll_count;
		rec->bytes = t->coll_bytes;
		return;
	}
	*func = t->nsend >= 2 && t->nrecv >= 2 ? "AlltoAll" : first->func;
	*dtype = first->dtype;
	rec->count = t->nsend ? t->send_count : t->recv_count;
	rec->bytes = t->nsend ? t->send_bytes : t->recv_bytes;
}

/* The calls of group g on ctx become one launch record; returns its id. */
static uint64_t launch(struct slot *g, struct comm_ctx *ctx)
{
	struct cvc_spool_coll rec;
	const struct call *first = NULL, *first_coll = NULL;
	const char *func = NULL, *dtype = NULL;
	struct tally sum;

	memset(&rec, 0, sizeof rec);
	memset(&sum, 0, sizeof sum);
	rec.launch_id = atomic_fetch_add(&next_launch, 1);
	rec.root = -1;
	rec.nranks = ctx ? ctx->nranks : 0;
	if (g && g->type == NCCL_PROFILE_GROUP_API) {
		for (int i = 0; i < g->ncalls; i++) {
			struct call *c = &g->calls[i];

			if (c->taken || c->ctx != ctx)
				continue;
			c->taken = 1;
			if (!first)
				first = c;
			if (c->is_coll && !first_coll)
				first_coll = c;
			tally_add(&sum, &c->t);
		}
	}
	rec.ncalls = (uint32_t)(sum.ncoll + sum.nsend + sum.nrecv);
	if (rec.ncalls) {
		launch_class(&sum, first_coll, first, &rec, &func, &dtype);
		cvci_queue_coll(&rec, func, dtype);
	}
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
			  d->collApi.count, d->collApi.root, 1);
		if (d->collApi.graphCaptured)
			cvci_note_graph_call();
		break;
	case NCCL_PROFILE_P2P_API:
		group_add(d->parentObj, ctx, d->p2pApi.func, d->p2pApi.datatype,
			  d->p2pApi.count, -1, 0);
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
