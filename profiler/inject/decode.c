/*
 * decode.c - CUPTI activity records -> spool rows; see decode.h.
 *
 * The hot path of the profiler: one switch per record, a pointer-keyed
 * cache for kernel names (CUPTI shares one name pointer across all records
 * of a kernel), a copy into a spool row.  Pairing NVTX markers and
 * resolving external correlation ids happens later, off the profiled
 * program (cvc_profile_materialize()).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cvc/cvc_base.h"
#include "cvc/cvc_vocab.h"
#include "decode.h"

/* cvc_profile's CUDA part is built only with CUDA 13.0 or newer
 * (profiler/inject/cuda_gate.cmake): the structs below come with 13.0. */
#if CUPTI_API_VERSION < 130000
#error "the CUPTI decoder reads CUDA 13.0 record structs (CUpti_ActivityKernel10): build with CUDA 13.0 or newer"
#endif

/* Every record CUPTI packs is a multiple of 8 bytes: the walk relies on it. */
_Static_assert(sizeof(CUpti_ActivityKernel10) % 8 == 0, "kernel record size");
_Static_assert(sizeof(CUpti_ActivityMemcpy6) % 8 == 0, "memcpy record size");
_Static_assert(sizeof(CUpti_ActivityMemcpyPtoP4) % 8 == 0, "memcpy2 record size");
_Static_assert(sizeof(CUpti_ActivityMemset4) % 8 == 0, "memset record size");
_Static_assert(sizeof(CUpti_ActivityMarker2) % 8 == 0, "marker record size");
_Static_assert(sizeof(CUpti_ActivityExternalCorrelation) % 8 == 0, "extcorr size");
_Static_assert(sizeof(CUpti_ActivityAPI) % 8 == 0, "api record size");
_Static_assert(sizeof(CUpti_ActivityDevice5) % 8 == 0, "device record size");
_Static_assert(sizeof(CUpti_ActivityContext3) % 8 == 0, "context record size");
_Static_assert(sizeof(CUpti_ActivityName) % 8 == 0, "name record size");

#define CVCI_PCACHE 4096          /* pointer cache slots (power of two) */
#define CVCI_MAX_STRINGS (1u << 22)

struct cvci_name_slot {
	const char *ptr;   /* CUPTI's pointer */
	const char *copy;  /* our copy, to notice a reused address */
	uint32_t sid;
};

struct cvci_str_slot {
	char *s;
	size_t len;
	uint64_t hash;
	uint32_t sid;
};

size_t cvci_record_size(uint32_t kind)
{
	switch (kind) {
	case CUPTI_ACTIVITY_KIND_KERNEL:
	case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
		return sizeof(CUpti_ActivityKernel10);
	case CUPTI_ACTIVITY_KIND_MEMCPY: return sizeof(CUpti_ActivityMemcpy6);
	case CUPTI_ACTIVITY_KIND_MEMCPY2: return sizeof(CUpti_ActivityMemcpyPtoP4);
	case CUPTI_ACTIVITY_KIND_MEMSET: return sizeof(CUpti_ActivityMemset4);
	case CUPTI_ACTIVITY_KIND_MARKER: return sizeof(CUpti_ActivityMarker2);
	case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION:
		return sizeof(CUpti_ActivityExternalCorrelation);
	case CUPTI_ACTIVITY_KIND_RUNTIME:
	case CUPTI_ACTIVITY_KIND_DRIVER:
		return sizeof(CUpti_ActivityAPI);
	case CUPTI_ACTIVITY_KIND_DEVICE: return sizeof(CUpti_ActivityDevice5);
	case CUPTI_ACTIVITY_KIND_CONTEXT: return sizeof(CUpti_ActivityContext3);
	case CUPTI_ACTIVITY_KIND_NAME: return sizeof(CUpti_ActivityName);
	default: return 0;
	}
}

cvc_status cvci_decoder_init(struct cvci_decoder *d, cvc_spool *sp)
{
	memset(d, 0, sizeof *d);
	d->sp = sp;
	d->next_sid = 1;
	d->pcache = calloc(CVCI_PCACHE, sizeof *d->pcache);
	d->strs = calloc(1024, sizeof *d->strs);
	if (!d->pcache || !d->strs) {
		cvci_decoder_release(d);
		return CVC_ERR_NOMEM;
	}
	d->str_mask = 1023;
	return CVC_OK;
}

void cvci_decoder_release(struct cvci_decoder *d)
{
	if (d->strs)
		for (size_t i = 0; i <= d->str_mask; i++)
			free(d->strs[i].s);
	free(d->strs);
	free(d->pcache);
	d->strs = NULL;
	d->pcache = NULL;
}

static int str_grow(struct cvci_decoder *d)
{
	size_t n = (d->str_mask + 1) * 2;
	struct cvci_str_slot *ns = calloc(n, sizeof *ns);

	if (!ns)
		return -1;
	for (size_t i = 0; i <= d->str_mask; i++) {
		size_t j;

		if (!d->strs[i].s)
			continue;
		for (j = d->strs[i].hash & (n - 1); ns[j].s; j = (j + 1) & (n - 1))
			;
		ns[j] = d->strs[i];
	}
	free(d->strs);
	d->strs = ns;
	d->str_mask = n - 1;
	return 0;
}

/* Content table: the slot holding s, filled in (and spooled) when new. */
static struct cvci_str_slot *str_slot(struct cvci_decoder *d, const char *s, size_t len)
{
	uint64_t h = cvc_hash_fnv1a(s, len);
	size_t j;
	struct cvci_str_slot *sl;

	if ((d->str_used + 1) * 2 > d->str_mask + 1 && str_grow(d))
		return NULL;
	for (j = h & d->str_mask; d->strs[j].s; j = (j + 1) & d->str_mask) {
		sl = &d->strs[j];
		if (sl->hash == h && sl->len == len && memcmp(sl->s, s, len) == 0)
			return sl;
	}
	if (d->next_sid >= CVCI_MAX_STRINGS)
		return NULL;
	sl = &d->strs[j];
	sl->s = malloc(len + 1);
	if (!sl->s)
		return NULL;
	memcpy(sl->s, s, len);
	sl->s[len] = '\0';
	sl->len = len;
	sl->hash = h;
	sl->sid = d->next_sid;
	if (cvc_spool_put_str(d->sp, sl->sid, s, len)) {
		free(sl->s);
		sl->s = NULL;
		return NULL;
	}
	d->next_sid++;
	d->str_used++;
	return sl;
}

uint32_t cvci_intern(struct cvci_decoder *d, const char *s, size_t len)
{
	struct cvci_str_slot *sl = str_slot(d, s, len);

	return sl ? sl->sid : 0;
}

/*
 * Kernel names: CUPTI hands the same pointer for every record of a kernel,
 * so a pointer hit plus one strcmp against our copy (in case a module was
 * unloaded and the address reused) replaces hashing the text.
 */
static uint32_t name_sid(struct cvci_decoder *d, const char *name)
{
	struct cvci_name_slot *pc;
	struct cvci_str_slot *sl;

	if (!name)
		name = "<unknown>";
	pc = &d->pcache[((uintptr_t)name >> 3) & (CVCI_PCACHE - 1)];
	if (pc->ptr == name && strcmp(pc->copy, name) == 0)
		return pc->sid;
	sl = str_slot(d, name, strlen(name));
	if (!sl)
		return 0;
	pc->ptr = name;
	pc->copy = sl->s;
	pc->sid = sl->sid;
	return sl->sid;
}

void cvci_put_proc(struct cvci_decoder *d, int rank, int world_size, int64_t pid,
		   const char *host, const char *run, const char *tool)
{
	struct cvc_spool_proc p;

	memset(&p, 0, sizeof p);
	p.rank = rank;
	p.world_size = world_size;
	p.pid = pid;
	p.host_sid = cvci_intern(d, host, strlen(host));
	p.run_sid = cvci_intern(d, run, strlen(run));
	p.tool_sid = cvci_intern(d, tool, strlen(tool));
	cvc_spool_put(d->sp, CVC_SPOOL_PROC, &p, sizeof p);
}

void cvci_put_meta(struct cvci_decoder *d, const char *key, int64_t n)
{
	struct cvc_spool_meta m;

	memset(&m, 0, sizeof m);
	m.key_sid = cvci_intern(d, key, strlen(key));
	m.n = n;
	if (m.key_sid)
		cvc_spool_put(d->sp, CVC_SPOOL_META, &m, sizeof m);
}

void cvci_put_meta_str(struct cvci_decoder *d, const char *key, const char *text)
{
	struct cvc_spool_meta m;

	memset(&m, 0, sizeof m);
	m.key_sid = cvci_intern(d, key, strlen(key));
	m.value_sid = cvci_intern(d, text, strlen(text));
	if (m.key_sid && m.value_sid)
		cvc_spool_put(d->sp, CVC_SPOOL_META, &m, sizeof m);
}

static int out_of_window(const struct cvci_decoder *d, uint64_t t)
{
	return (d->win_start_ns && (int64_t)t < d->win_start_ns) ||
	       (d->win_end_ns && (int64_t)t > d->win_end_ns);
}

/* A device record CUPTI could not time (it leaves start = end = 0). */
static int untimed(struct cvci_decoder *d, uint64_t start, uint64_t end)
{
	if (start && end && end >= start)
		return 0;
	d->untimed++;
	return 1;
}

static void put(struct cvci_decoder *d, uint32_t type, const void *p, uint32_t len)
{
	cvc_spool_put(d->sp, type, p, len);
	d->records++;
}

/*
 * The fields every activity record has, into *a.  0 when the record is
 * kept; 1 when it is dropped: untimed, or outside the window (counted).
 */
static int act_begin(struct cvci_decoder *d, struct cvc_spool_act *a, uint8_t kind,
		     uint32_t device, uint64_t start, uint64_t end, uint32_t stream,
		     uint32_t ctx, uint32_t corr)
{
	if (untimed(d, start, end))
		return 1;
	if (out_of_window(d, start)) {
		d->filtered++;
		return 1;
	}
	memset(a, 0, sizeof *a);
	a->kind = kind;
	a->device = device;
	a->start_ns = (int64_t)start;
	a->end_ns = (int64_t)end;
	a->stream = stream;
	a->context = ctx;
	a->correlation = corr;
	return 0;
}

static void dec_kernel(struct cvci_decoder *d, const CUpti_ActivityKernel10 *k)
{
	struct cvc_spool_act a;

	if (act_begin(d, &a, 1 /* CVC_ACT_KERNEL */, k->deviceId, k->start, k->end, k->streamId,
		      k->contextId, k->correlationId))
		return;
	a.name_sid = name_sid(d, k->name);
	a.grid[0] = k->gridX;
	a.grid[1] = k->gridY;
	a.grid[2] = k->gridZ;
	a.block[0] = k->blockX;
	a.block[1] = k->blockY;
	a.block[2] = k->blockZ;
	a.registers = k->registersPerThread;
	a.shared_mem_bytes = (int64_t)k->staticSharedMemory + k->dynamicSharedMemory;
	/* a graph replay's kernel: its size comes through this node (issue 19 item 8) */
	a.graph_node_id = k->graphNodeId;
	put(d, CVC_SPOOL_ACT, &a, sizeof a);
}

/*
 * Memcpy and memset carry no name: they get the ones torch.profiler (Kineto)
 * gives them, "Memcpy HtoD (Pageable -> Device)", "Memset (Device)", so the
 * same copy has one name whichever recorded it (the Kineto traces in
 * ../shared/traces hold these forms), and a pageable copy, the one that
 * stalls its stream, reads as such (memory kinds: cvc_mem_kind_name()).
 */
static void dec_copy(struct cvci_decoder *d, uint32_t device, uint8_t copy_kind,
		     uint8_t src, uint8_t dst, uint64_t bytes, uint64_t start, uint64_t end,
		     uint32_t stream, uint32_t ctx, uint32_t corr)
{
	struct cvc_spool_act a;
	const char *nm = cvc_copy_kind_word(copy_kind);
	char full[64];

	if (act_begin(d, &a, 2 /* CVC_ACT_MEMCPY */, device, start, end, stream, ctx, corr))
		return;
	snprintf(full, sizeof full, "Memcpy %s (%s -> %s)", nm ? nm : "Unknown",
		 cvc_mem_kind_name(src), cvc_mem_kind_name(dst));
	a.copy_kind = copy_kind;
	a.name_sid = name_sid(d, full);
	a.bytes = (int64_t)bytes;
	put(d, CVC_SPOOL_ACT, &a, sizeof a);
}

static void dec_memset(struct cvci_decoder *d, const CUpti_ActivityMemset4 *m)
{
	struct cvc_spool_act a;
	char full[32];

	if (act_begin(d, &a, 3 /* CVC_ACT_MEMSET */, m->deviceId, m->start, m->end, m->streamId,
		      m->contextId, m->correlationId))
		return;
	snprintf(full, sizeof full, "Memset (%s)", cvc_mem_kind_name(m->memoryKind));
	a.name_sid = name_sid(d, full);
	a.bytes = (int64_t)m->bytes;
	put(d, CVC_SPOOL_ACT, &a, sizeof a);
}

static void dec_marker(struct cvci_decoder *d, const CUpti_ActivityMarker2 *m)
{
	struct cvc_spool_marker r;

	if (out_of_window(d, m->timestamp)) {
		d->filtered++;
		return;
	}
	memset(&r, 0, sizeof r);
	if (m->flags & CUPTI_ACTIVITY_FLAG_MARKER_INSTANTANEOUS)
		r.flags = CVC_MARK_INSTANT;
	else if (m->flags & CUPTI_ACTIVITY_FLAG_MARKER_START)
		r.flags = CVC_MARK_START;
	else if (m->flags & CUPTI_ACTIVITY_FLAG_MARKER_END)
		r.flags = CVC_MARK_END;
	else {
		d->skipped++; /* sync acquire/release markers */
		return;
	}
	r.id = m->id;
	r.ts_ns = (int64_t)m->timestamp;
	r.name_sid = m->name ? cvci_intern(d, m->name, strlen(m->name)) : 0;
	r.domain_sid = m->domain ? cvci_intern(d, m->domain, strlen(m->domain)) : 0;
	r.tid = (m->objectKind == CUPTI_ACTIVITY_OBJECT_THREAD ||
		 m->objectKind == CUPTI_ACTIVITY_OBJECT_PROCESS)
			? (int64_t)m->objectId.pt.threadId : -1;
	put(d, CVC_SPOOL_MARKER, &r, sizeof r);
}

static void dec_api(struct cvci_decoder *d, const CUpti_ActivityAPI *a)
{
	struct cvc_spool_api r;
	uint32_t domain = a->kind == CUPTI_ACTIVITY_KIND_DRIVER ? 1 : 2;
	const char *nm;
	char buf[48];

	if (out_of_window(d, a->start)) {
		d->filtered++;
		return;
	}
	memset(&r, 0, sizeof r);
	/* Not asked for as rows: kept, nameless, for the NVTX range its
	 * kernels ran under (materialize_project.c), and counted as skipped. */
	if (d->api_drop & (domain == 1 ? 1u : 2u)) {
		d->skipped++;
		r.flags = CVC_API_LAUNCH_ONLY;
	} else {
		nm = d->cbname ? d->cbname(domain, a->cbid) : NULL;
		if (!nm) {
			snprintf(buf, sizeof buf, "%s cbid %u",
				 domain == 1 ? "driver" : "runtime", (unsigned)a->cbid);
			nm = buf;
		}
		r.name_sid = cvci_intern(d, nm, strlen(nm));
	}
	r.domain = domain;
	r.start_ns = (int64_t)a->start;
	r.end_ns = (int64_t)a->end;
	r.tid = a->threadId;
	r.correlation = a->correlationId;
	put(d, CVC_SPOOL_API, &r, sizeof r);
}

static void dec_device(struct cvci_decoder *d, const CUpti_ActivityDevice5 *v)
{
	struct cvc_spool_device r;
	const char *nm = v->name ? v->name : "<unknown GPU>";

	memset(&r, 0, sizeof r);
	r.device = v->id;
	r.sm_count = v->numMultiprocessors;
	r.total_mem_bytes = (int64_t)v->globalMemorySize;
	r.cc_major = (int32_t)v->computeCapabilityMajor;
	r.cc_minor = (int32_t)v->computeCapabilityMinor;
	r.mem_bw_kbps = v->globalMemoryBandwidth;
	r.clock_khz = v->coreClockRate;
	r.name_sid = cvci_intern(d, nm, strlen(nm));
	put(d, CVC_SPOOL_DEVICE, &r, sizeof r);
}

/* "13.0" for 130001; "API version 24 (CUDA 12.9 or older)" before 13. */
static void cupti_version_str(uint32_t v, char *out, size_t cap)
{
	if (v == 0)
		snprintf(out, cap, "of a version it does not say");
	else if (v >= 10000)
		snprintf(out, cap, "%u.%u", (unsigned)(v / 10000), (unsigned)(v / 100 % 100));
	else
		snprintf(out, cap, "API version %u (CUDA 12.9 or older)", (unsigned)v);
}

int cvci_cupti_layout_ok(uint32_t runtime, uint32_t built, char *why, size_t cap)
{
	char a[64], b[64];

	if (runtime >= 10000 && built >= 10000 && runtime / 100 == built / 100)
		return 1;
	cupti_version_str(runtime, a, sizeof a);
	cupti_version_str(built, b, sizeof b);
	snprintf(why, cap, "the libcupti in this process is %s, cvc was built for %s", a, b);
	return 0;
}

size_t cvci_decode(struct cvci_decoder *d, const uint8_t *buf, size_t valid)
{
	CUpti_Activity *rec = NULL;
	const uint8_t *done = buf; /* end of the last record of a known size */
	size_t n = 0;

	/*
	 * libcupti walks its own buffers: it knows the size of every kind it
	 * writes, including kinds cvc does not decode, so one of those no
	 * longer ends the buffer (issue 19 item 4).  The casts below match
	 * its layout because the injection library refuses a libcupti whose
	 * major.minor differs from the headers it was built with.
	 */
	if (!buf || valid == 0)
		return 0;
	for (;;) {
		CUptiResult res = cuptiActivityGetNextRecord((uint8_t *)(uintptr_t)buf, valid, &rec);
		size_t sz;

		if (res == CUPTI_ERROR_MAX_LIMIT_REACHED) {
			/* libcupti ends quietly at a record cut by the valid size:
			 * bytes left after the last whole record are one */
			if (done && done < buf + valid)
				d->undecodable++;
			break;
		}
		if (res != CUPTI_SUCCESS || !rec) {
			d->undecodable++; /* a kind libcupti does not know, or a cut record */
			break;
		}
		sz = cvci_record_size((uint32_t)rec->kind);
		if (sz && (const uint8_t *)rec + sz > buf + valid) {
			d->undecodable++;
			break;
		}
		done = sz ? (const uint8_t *)rec + sz : NULL;
		switch (rec->kind) {
		case CUPTI_ACTIVITY_KIND_KERNEL:
		case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
			dec_kernel(d, (const CUpti_ActivityKernel10 *)(const void *)rec);
			break;
		case CUPTI_ACTIVITY_KIND_MEMCPY: {
			const CUpti_ActivityMemcpy6 *m = (const void *)rec;

			dec_copy(d, m->deviceId, m->copyKind, m->srcKind, m->dstKind, m->bytes,
				 m->start, m->end, m->streamId, m->contextId, m->correlationId);
			break;
		}
		case CUPTI_ACTIVITY_KIND_MEMCPY2: {
			const CUpti_ActivityMemcpyPtoP4 *m = (const void *)rec;

			dec_copy(d, m->deviceId, m->copyKind, m->srcKind, m->dstKind, m->bytes,
				 m->start, m->end, m->streamId, m->contextId, m->correlationId);
			break;
		}
		case CUPTI_ACTIVITY_KIND_MEMSET:
			dec_memset(d, (const CUpti_ActivityMemset4 *)(const void *)rec);
			break;
		case CUPTI_ACTIVITY_KIND_MARKER:
			dec_marker(d, (const CUpti_ActivityMarker2 *)(const void *)rec);
			break;
		case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION: {
			const CUpti_ActivityExternalCorrelation *e = (const void *)rec;
			struct cvc_spool_extcorr r = {e->correlationId, (uint32_t)e->externalKind,
						      e->externalId};

			put(d, CVC_SPOOL_EXTCORR, &r, sizeof r);
			break;
		}
		case CUPTI_ACTIVITY_KIND_RUNTIME:
		case CUPTI_ACTIVITY_KIND_DRIVER:
			dec_api(d, (const CUpti_ActivityAPI *)(const void *)rec);
			break;
		case CUPTI_ACTIVITY_KIND_DEVICE:
			dec_device(d, (const CUpti_ActivityDevice5 *)(const void *)rec);
			break;
		default:
			d->skipped++; /* context, name, overhead...: nothing we store */
			break;
		}
		n++;
	}
	return n;
}
