/*
 * materialize.c - a finished spool (spool.c) into a new cvc database
 * (cvc_profile_materialize in cvc_profile.h).
 *
 * The spool is mapped and walked three times: once to check framing and
 * size the tables, once to collect the correlation records and NCCL calls
 * (buffers arrive in any order), and once to write the rows in one
 * transaction.  `cvc profile` and the injection library's exit path both
 * call it.
 */
#include <errno.h>
#include <stddef.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cvc/cvc_base.h"
#include "cvc/cvc_db.h"
#include "cvc/cvc_profile.h"
#include "profiler/demangle.h"
#include "materialize_int.h"
#include "spool_int.h"

_Static_assert(offsetof(struct cvc_spool_act, graph_node_id) == CVC_SPOOL_ACT_V1_SIZE,
	       "a version 1 ACT record is the version 2 one without graph_node_id");

#define MAT_MAX_STRINGS (1u << 24)
#define MAT_MAX_MARKERS ((size_t)1 << 26)

cvc_status mat_fail(struct mat *m, cvc_status st, size_t off, const char *what)
{
	if (m->err)
		snprintf(m->err, m->errlen, "'%s': byte %zu: %s", m->spool, off, what);
	return st;
}

cvc_status mat_dbfail(struct mat *m, cvc_status st)
{
	if (m->err)
		snprintf(m->err, m->errlen, "%s", cvc_db_errmsg(m->db));
	return st;
}

/* Payload size of a record of type in a spool of version; 0 if not a type. */
static size_t rec_size(uint32_t type, uint32_t version)
{
	switch (type) {
	case CVC_SPOOL_ACT:
		return version < 2 ? CVC_SPOOL_ACT_V1_SIZE : sizeof(struct cvc_spool_act);
	case CVC_SPOOL_GNODE:
	case CVC_SPOOL_GCLONE:
		return version < 2 ? 0 : sizeof(struct cvc_spool_graph);
	case CVC_SPOOL_MARKER: return sizeof(struct cvc_spool_marker);
	case CVC_SPOOL_EXTCORR: return sizeof(struct cvc_spool_extcorr);
	case CVC_SPOOL_API: return sizeof(struct cvc_spool_api);
	case CVC_SPOOL_DEVICE: return sizeof(struct cvc_spool_device);
	case CVC_SPOOL_META: return sizeof(struct cvc_spool_meta);
	case CVC_SPOOL_PROC: return sizeof(struct cvc_spool_proc);
	case CVC_SPOOL_COLL: return sizeof(struct cvc_spool_coll);
	default: return 0;
	}
}

/*
 * Walks the records once to validate framing and sizes, count external
 * correlations and find the highest string id.  *end receives the offset
 * after the last whole record (less than the size for a cut-short spool).
 */
static cvc_status mat_scan(struct mat *m, size_t *end, size_t *next, size_t *ncoll,
			   uint32_t *maxsid)
{
	size_t off = sizeof(struct spool_hdr);

	*next = 0;
	*ncoll = 0;
	*maxsid = 0;
	m->ngnodes = m->nclones = 0;
	while (off + 8 <= m->size) {
		uint32_t type, len;
		size_t want;

		memcpy(&type, m->base + off, 4);
		memcpy(&len, m->base + off + 4, 4);
		if (len > CVC_SPOOL_MAX_RECORD)
			return mat_fail(m, CVC_ERR_FORMAT, off,
					"expected a record length of at most 1 MiB");
		if (off + 8 + spool_pad8(len) > m->size)
			break; /* cut short while writing: keep the whole records */
		if (type == CVC_SPOOL_STR) {
			uint32_t id;

			if (len < 4)
				return mat_fail(m, CVC_ERR_FORMAT, off,
						"expected a string record of at least 4 bytes");
			memcpy(&id, m->base + off + 8, 4);
			if (id == 0 || id >= MAT_MAX_STRINGS)
				return mat_fail(m, CVC_ERR_FORMAT, off + 8,
						"expected a string id in 1..16777215");
			if (id > *maxsid)
				*maxsid = id;
		} else {
			want = rec_size(type, m->version);
			if (!want)
				return mat_fail(m, CVC_ERR_FORMAT, off,
						m->version < 2 ? "expected a record type in 1..9"
							       : "expected a record type in 1..11");
			if (len != want)
				return mat_fail(m, CVC_ERR_FORMAT, off + 4,
						"expected the record length of its type");
			if (type == CVC_SPOOL_EXTCORR)
				(*next)++;
			if (type == CVC_SPOOL_COLL)
				(*ncoll)++;
			m->ngnodes += type == CVC_SPOOL_GNODE;
			m->nclones += type == CVC_SPOOL_GCLONE;
			m->napi += type == CVC_SPOOL_API;
		}
		off += 8 + spool_pad8(len);
	}
	*end = off;
	return CVC_OK;
}

static int64_t map_get(const struct ext_slot *map, size_t mask, uint32_t corr)
{
	size_t j;

	if (!map || corr == 0)
		return -1;
	for (j = (corr * 2654435761u) & mask; map[j].corr; j = (j + 1) & mask)
		if (map[j].corr == corr)
			return (int64_t)map[j].ext;
	return -1;
}

/*
 * One correlation may carry several external ids (Kineto pushes an op id as
 * CUSTOM0 and an annotation as CUSTOM1): the lowest kind wins, whatever the
 * order the buffers arrived in.
 */
static void map_put(struct ext_slot *map, size_t mask, const struct cvc_spool_extcorr *e)
{
	size_t j;

	if (e->correlation == 0)
		return;
	for (j = (e->correlation * 2654435761u) & mask; map[j].corr; j = (j + 1) & mask) {
		if (map[j].corr == e->correlation) {
			if (e->ext_kind < map[j].kind) {
				map[j].kind = e->ext_kind;
				map[j].ext = e->external_id;
			}
			return;
		}
	}
	map[j].corr = e->correlation;
	map[j].kind = e->ext_kind;
	map[j].ext = e->external_id;
}

/*
 * The runtime and driver calls by correlation id: an activity's launch time
 * (activities.launch_ns, what `cvc analyze --by step` places it by).  A
 * runtime call and the driver call it made may share an id: the earlier is
 * the launch.
 */
static void call_put(struct ext_slot *map, size_t mask, uint32_t corr, int64_t t)
{
	size_t j;

	if (corr == 0)
		return;
	for (j = (corr * 2654435761u) & mask; map[j].corr; j = (j + 1) & mask) {
		if (map[j].corr == corr) {
			if (t < (int64_t)map[j].ext)
				map[j].ext = (uint64_t)t;
			return;
		}
	}
	map[j].corr = corr;
	map[j].ext = (uint64_t)t;
}

static int call_get(const struct ext_slot *map, size_t mask, uint32_t corr, int64_t *t)
{
	if (!map || corr == 0)
		return 0;
	for (size_t j = (corr * 2654435761u) & mask; map[j].corr; j = (j + 1) & mask)
		if (map[j].corr == corr) {
			*t = (int64_t)map[j].ext;
			return 1;
		}
	return 0;
}

static cvc_status mat_sid(struct mat *m, size_t off, uint32_t sid, int64_t *id)
{
	if (sid == 0 || sid > m->nsid || !m->sid2id[sid])
		return mat_fail(m, CVC_ERR_FORMAT, off, "expected a defined string id");
	*id = m->sid2id[sid];
	return CVC_OK;
}

/*
 * Interns a spool string: a mangled C++ symbol (a kernel's name as CUPTI
 * reports it) under its demangled text, as Kineto and Nsight Systems store
 * it (profiler/demangle.c); anything else as it is.
 */
static cvc_status mat_intern(struct mat *m, const char *s, size_t len, int64_t *id)
{
	char *d = NULL;
	cvc_status st;

	if (prof_demangle_new(s, len, &d))
		return mat_dbfail(m, CVC_ERR_NOMEM);
	st = d ? cvc_db_intern(m->db, d, strlen(d), id) : cvc_db_intern(m->db, s, len, id);
	free(d);
	return st ? mat_dbfail(m, st) : CVC_OK;
}

/* Borrowed NUL-less bytes of a string, for keys and short text. */
int mat_str(const struct mat *m, uint32_t sid, char *buf, size_t cap)
{
	uint32_t len;

	if (sid == 0 || sid > m->nsid || !m->sid2str[sid])
		return -1;
	len = m->sid2len[sid];
	if (len >= cap)
		len = (uint32_t)cap - 1;
	memcpy(buf, m->sid2str[sid], len);
	buf[len] = '\0';
	return 0;
}

static cvc_status mat_proc(struct mat *m, size_t off, const struct cvc_spool_proc *p)
{
	char run[256], host[256], tool[256];
	cvc_run_info ri = {0};
	cvc_rank_info rk = {0};
	cvc_status st;

	if (m->have_proc)
		return mat_fail(m, CVC_ERR_FORMAT, off, "expected one process record");
	if (mat_str(m, p->run_sid, run, sizeof run) || mat_str(m, p->host_sid, host, sizeof host) ||
	    mat_str(m, p->tool_sid, tool, sizeof tool))
		return mat_fail(m, CVC_ERR_FORMAT, off, "expected defined run, host and tool strings");
	ri.name = run;
	ri.format = "cupti";
	ri.source = m->spool;
	ri.tool_version = tool;
	ri.world_size = p->world_size > 0 ? p->world_size : 0;
	if ((st = cvc_db_run_new(m->db, &ri, &m->run_id)))
		return mat_dbfail(m, st);
	m->rank = p->rank >= 0 ? p->rank : 0;
	rk.rank = m->rank;
	rk.host = host;
	rk.pid = p->pid;
	if ((st = cvc_db_rank_put(m->db, m->run_id, &rk)))
		return mat_dbfail(m, st);
	/* a process without a rank is rank 0 here, numbered afresh when
	 * `cvc import` merges it (two such processes once collided at 0) */
	if (p->rank < 0 && (st = cvc_db_run_meta_set(m->db, m->run_id, "import.auto_rank", "1")))
		return mat_dbfail(m, st);
	m->have_proc = 1;
	return CVC_OK;
}

/*
 * The element counts of a collectives row as Kineto gives them (in: the
 * rank's input, out: its output) from NCCL's per-rank count and the size
 * the plugin recorded in cvc's convention (cvc_analyze.h): the all-gather's
 * output, the reduce-scatter's input, the all-to-all's buffers, the
 * gather's output and the scatter's input at the root are that size; so
 * `cvc analyze`, which takes max(in, out) x the element size, and `cvc
 * fit`, which takes bytes, read the same size.
 */
static void mat_nelems(const char *func, const char *dtype, int64_t count, int64_t bytes,
		       int64_t *in, int64_t *out)
{
	/* NCCL's type names are "nccl" + the usual ones (ncclBfloat16) */
	int esz = cvc_dtype_size(strncmp(dtype, "nccl", 4) == 0 ? dtype + 4 : dtype);
	int64_t whole = esz > 0 && bytes >= 0 && bytes % esz == 0 ? bytes / esz : -1;

	*in = count;
	*out = -1;
	if (strcmp(func, "AllGather") == 0 || strcmp(func, "Gather") == 0) {
		*out = whole;
	} else if (strcmp(func, "ReduceScatter") == 0 || strcmp(func, "Scatter") == 0) {
		*in = whole;
		*out = count;
	} else if (strcmp(func, "AlltoAll") == 0) {
		*in = *out = whole;
	}
}

cvc_status mat_coll(struct mat *m, size_t off, int64_t activity_id, int64_t launch_id,
		    int *joined)
{
	char func[64], dtype[64];
	cvc_collective c;
	size_t lo = 0, hi = m->ncolls;
	cvc_status st;

	*joined = 0;
	if (launch_id < 0)
		return CVC_OK;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (m->colls[mid].launch_id < (uint64_t)launch_id)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == m->ncolls || m->colls[lo].launch_id != (uint64_t)launch_id)
		return CVC_OK;
	if (mat_str(m, m->colls[lo].func_sid, func, sizeof func) ||
	    mat_str(m, m->colls[lo].dtype_sid, dtype, sizeof dtype))
		return mat_fail(m, CVC_ERR_FORMAT, off, "expected defined NCCL call strings");
	memset(&c, 0, sizeof c);
	c.activity_id = activity_id;
	c.coll = func;
	c.dtype = dtype;
	c.bytes = m->colls[lo].bytes;
	mat_nelems(func, dtype, m->colls[lo].count, c.bytes, &c.in_nelems, &c.out_nelems);
	c.group_size = m->colls[lo].nranks > 0 ? m->colls[lo].nranks : 0;
	c.root = m->colls[lo].root;
	if ((st = cvc_db_collective_add(m->db, &c)))
		return mat_dbfail(m, st);
	m->coll_used[lo] = 1;
	m->stats->collectives++;
	*joined = 1;
	return CVC_OK;
}

static cvc_status mat_act(struct mat *m, size_t off, const struct cvc_spool_act *s)
{
	cvc_activity a;
	cvc_status st;
	int64_t id = 0;
	int joined = 0;

	if (s->kind < CVC_ACT_KERNEL || s->kind > CVC_ACT_MEMSET)
		return mat_fail(m, CVC_ERR_FORMAT, off, "expected activity kind 1, 2 or 3");
	memset(&a, 0, sizeof a);
	a.run_id = m->run_id;
	a.rank = m->rank;
	a.device = (int)s->device;
	a.kind = (cvc_act_kind)s->kind;
	if ((st = mat_sid(m, off, s->name_sid, &a.name_id)))
		return st;
	a.start_ns = s->start_ns;
	a.end_ns = s->end_ns < s->start_ns ? s->start_ns : s->end_ns;
	/* a record no GPU produced (a corrupt buffer): dropped and counted,
	 * not the whole run */
	if (!cvc_db_span_ok(a.start_ns, a.end_ns, (int64_t)s->device, 0)) {
		m->out_of_range++;
		return CVC_OK;
	}
	a.stream = s->stream;
	a.context = s->context;
	a.correlation = s->correlation ? (int64_t)s->correlation : -1;
	a.external_id = map_get(m->ext, m->next_mask, s->correlation);
	memcpy(a.grid, s->grid, sizeof a.grid);
	memcpy(a.block, s->block, sizeof a.block);
	a.registers = s->registers;
	a.shared_mem_bytes = s->shared_mem_bytes;
	a.bytes = s->bytes;
	a.copy_kind = s->copy_kind;
	a.has_launch = call_get(m->calls, m->calls_mask, s->correlation, &a.launch_ns) &&
		       cvc_db_span_ok(a.launch_ns, a.launch_ns, -1, 1);
	if ((st = cvc_db_activity_add(m->db, &a, &id)))
		return mat_dbfail(m, st);
	if ((st = mat_proj_span(m, s->correlation, a.device, a.start_ns, a.end_ns)))
		return st;
	m->stats->activities++;
	if (a.kind != CVC_ACT_KERNEL)
		return CVC_OK;
	if (m->launch &&
	    (st = mat_coll(m, off, id, map_get(m->launch, m->launch_mask, s->correlation),
			   &joined)))
		return st;
	/* a graph replay carries the graph launch's correlation: its NCCL
	 * call comes through the node the captured launch created */
	if (!joined && s->graph_node_id)
		return mat_graph_join(m, off, id, s);
	return CVC_OK;
}

static cvc_status mat_api(struct mat *m, size_t off, const struct cvc_spool_api *s)
{
	cvc_range r = {0};
	cvc_status st;

	if ((st = mat_proj_launch(m, s->correlation, s->start_ns, s->tid)))
		return st;
	if (s->flags & CVC_API_LAUNCH_ONLY)
		return CVC_OK; /* no row asked for */
	r.run_id = m->run_id;
	r.rank = m->rank;
	r.device = -1;
	r.kind = CVC_RANGE_CPU;
	if ((st = mat_sid(m, off, s->name_sid, &r.name_id)))
		return st;
	r.start_ns = s->start_ns;
	r.end_ns = s->end_ns < s->start_ns ? s->start_ns : s->end_ns;
	if (!cvc_db_span_ok(r.start_ns, r.end_ns, -1, 1)) {
		m->out_of_range++;
		return CVC_OK;
	}
	r.tid = s->tid;
	r.domain = s->domain == 1 ? "cuda-driver" : "cuda-runtime";
	if ((st = cvc_db_range_add(m->db, &r)))
		return mat_dbfail(m, st);
	m->stats->ranges++;
	return CVC_OK;
}

static cvc_status mat_device(struct mat *m, size_t off, const struct cvc_spool_device *s)
{
	char name[256];
	cvc_device_info d = {0};
	cvc_run_info ri = {0};
	cvc_status st;

	if (mat_str(m, s->name_sid, name, sizeof name))
		return mat_fail(m, CVC_ERR_FORMAT, off, "expected a defined device name");
	d.rank = m->rank;
	d.device = (int)s->device;
	d.name = name;
	d.sm_count = (int)s->sm_count;
	d.total_mem_bytes = s->total_mem_bytes;
	d.cc_major = s->cc_major;
	d.cc_minor = s->cc_minor;
	d.mem_bw_gbps = (double)s->mem_bw_kbps * 1e3 / 1e9;
	d.clock_khz = s->clock_khz;
	if ((st = cvc_db_device_put(m->db, m->run_id, &d)))
		return mat_dbfail(m, st);
	ri.gpu_model = name;
	if ((st = cvc_db_run_merge(m->db, m->run_id, &ri)))
		return mat_dbfail(m, st);
	m->stats->devices++;
	return CVC_OK;
}

static cvc_status mat_meta(struct mat *m, size_t off, const struct cvc_spool_meta *s)
{
	static const char *const clocks[4] = {"clock_start_cupti_ns", "clock_start_realtime_ns",
					      "clock_end_cupti_ns", "clock_end_realtime_ns"};
	char key[128], val[1024];
	cvc_status st;

	if (mat_str(m, s->key_sid, key, sizeof key))
		return mat_fail(m, CVC_ERR_FORMAT, off, "expected a defined metadata key");
	if (s->value_sid) {
		if (mat_str(m, s->value_sid, val, sizeof val))
			return mat_fail(m, CVC_ERR_FORMAT, off, "expected a defined metadata value");
		st = cvc_db_run_meta_set(m->db, m->run_id, key, val);
	} else {
		st = cvc_db_run_meta_add(m->db, m->run_id, key, s->n);
		for (int i = 0; i < 4; i++) {
			if (strcmp(key, clocks[i]) == 0) {
				m->clock[i] = s->n;
				m->have_clock[i] = 1;
			}
		}
		if (strcmp(key, "lost_records") == 0)
			m->stats->lost_records += s->n;
	}
	return st ? mat_dbfail(m, st) : CVC_OK;
}

static cvc_status mat_marker(struct mat *m, size_t off, const struct cvc_spool_marker *s)
{
	/*
	 * Strings are checked here, where the record's offset is known: the
	 * markers are paired only after the walk, when an error could no
	 * longer say where the bad record was.
	 */
	if (s->name_sid && (s->name_sid > m->nsid || !m->sid2id[s->name_sid]))
		return mat_fail(m, CVC_ERR_FORMAT, off + 8 + offsetof(struct cvc_spool_marker, name_sid),
				"expected a defined NVTX name string");
	if (s->domain_sid && (s->domain_sid > m->nsid || !m->sid2str[s->domain_sid]))
		return mat_fail(m, CVC_ERR_FORMAT, off + 8 + offsetof(struct cvc_spool_marker, domain_sid),
				"expected a defined NVTX domain string");
	if (m->nmarks >= MAT_MAX_MARKERS)
		return mat_fail(m, CVC_ERR_NOMEM, off, "more than 2^26 NVTX markers");
	if (cvc_grow(&m->marks, &m->capmarks, m->nmarks + 1, sizeof *m->marks, 1024) != CVC_OK)
		return mat_fail(m, CVC_ERR_NOMEM, off, "out of memory for NVTX markers");
	m->marks[m->nmarks++] = *s;
	return CVC_OK;
}

static int marker_cmp(const void *a, const void *b)
{
	const struct cvc_spool_marker *x = a, *y = b;

	if (x->id != y->id)
		return x->id < y->id ? -1 : 1;
	/* START (2) sorts before END (4) for one id. */
	return (x->flags > y->flags) - (x->flags < y->flags);
}

#define UNNAMED_RANGE "(unnamed range)"

/* Range from marker s (START or instant) to end_ns, named name_sid (0: none). */
static cvc_status mat_range(struct mat *m, const struct cvc_spool_marker *s, uint32_t name_sid,
			    int64_t end_ns)
{
	char dom[256];
	cvc_range r = {0};
	cvc_status st;

	r.run_id = m->run_id;
	r.rank = m->rank;
	r.device = -1;
	r.kind = CVC_RANGE_NVTX;
	/*
	 * mat_marker() checked both ids.  A range pushed with a non-ASCII
	 * message comes with no name: it is kept, under the name the Nsight
	 * Systems importer gives such ranges, rather than dropped.
	 */
	if (name_sid)
		r.name_id = m->sid2id[name_sid];
	else if ((st = cvc_db_intern(m->db, UNNAMED_RANGE, strlen(UNNAMED_RANGE), &r.name_id)))
		return mat_dbfail(m, st);
	r.start_ns = s->ts_ns;
	r.end_ns = end_ns < s->ts_ns ? s->ts_ns : end_ns;
	if (!cvc_db_span_ok(r.start_ns, r.end_ns, r.device, 1)) {
		m->out_of_range++;
		return CVC_OK;
	}
	r.tid = s->tid;
	if (s->domain_sid) {
		(void)mat_str(m, s->domain_sid, dom, sizeof dom);
		r.domain = dom;
	}
	if ((st = cvc_db_range_add(m->db, &r)))
		return mat_dbfail(m, st);
	m->stats->ranges++;
	/* and where its launches ran on the GPU (materialize_project.c) */
	return r.end_ns > r.start_ns ? mat_proj_range(m, &r) : CVC_OK;
}

/* Pairs START and END markers by id (they may arrive in any buffer order). */
static cvc_status mat_pair_markers(struct mat *m)
{
	cvc_status st;
	size_t i = 0;

	if (m->nmarks)
		qsort(m->marks, m->nmarks, sizeof *m->marks, marker_cmp);
	while (i < m->nmarks) {
		const struct cvc_spool_marker *a = &m->marks[i];

		if (a->flags & CVC_MARK_INSTANT) {
			if ((st = mat_range(m, a, a->name_sid, a->ts_ns)))
				return st;
			i++;
		} else if ((a->flags & CVC_MARK_START) && i + 1 < m->nmarks &&
			   m->marks[i + 1].id == a->id && (m->marks[i + 1].flags & CVC_MARK_END)) {
			const struct cvc_spool_marker *b = &m->marks[i + 1];

			/* CUPTI names the START; an END that carries one names a nameless START. */
			if ((st = mat_range(m, a, a->name_sid ? a->name_sid : b->name_sid, b->ts_ns)))
				return st;
			i += 2;
		} else {
			m->stats->unmatched_markers++;
			i++;
		}
	}
	return CVC_OK;
}

/* A fixed-size record, copied out of the map to be aligned. */
union mat_rec {
	struct cvc_spool_proc proc;
	struct cvc_spool_act act;
	struct cvc_spool_marker marker;
	struct cvc_spool_api api;
	struct cvc_spool_device device;
	struct cvc_spool_meta meta;
};

static cvc_status mat_records(struct mat *m, size_t end)
{
	size_t off = sizeof(struct spool_hdr);
	cvc_status st = CVC_OK;

	while (off < end) {
		uint32_t type, len;
		const unsigned char *p;
		union mat_rec r;

		memcpy(&type, m->base + off, 4);
		memcpy(&len, m->base + off + 4, 4);
		p = m->base + off + 8;
		if (type != CVC_SPOOL_STR && type != CVC_SPOOL_PROC && !m->have_proc)
			return mat_fail(m, CVC_ERR_FORMAT, off, "expected the process record first");
		m->stats->records++;
		/* mat_scan checked that a fixed-size record's len is its type's size. */
		if (type != CVC_SPOOL_STR && len <= sizeof r)
			memcpy(&r, p, len);
		/* a version 1 ACT record is shorter: no graph node (0) */
		if (type == CVC_SPOOL_ACT && len < sizeof r.act)
			memset((unsigned char *)&r.act + len, 0, sizeof r.act - len);
		switch (type) {
		case CVC_SPOOL_STR: {
			uint32_t sid;

			memcpy(&sid, p, 4);
			if ((st = mat_intern(m, (const char *)p + 4, len - 4, &m->sid2id[sid])))
				return st;
			m->sid2str[sid] = (const char *)p + 4;
			m->sid2len[sid] = len - 4;
			m->stats->records--;
			break;
		}
		case CVC_SPOOL_PROC:
			st = mat_proc(m, off, &r.proc);
			break;
		case CVC_SPOOL_ACT:
			st = mat_act(m, off, &r.act);
			break;
		case CVC_SPOOL_MARKER:
			st = mat_marker(m, off, &r.marker);
			break;
		case CVC_SPOOL_EXTCORR:
		case CVC_SPOOL_COLL:
		case CVC_SPOOL_GNODE:
		case CVC_SPOOL_GCLONE:
			break; /* collected up front */
		case CVC_SPOOL_API:
			st = mat_api(m, off, &r.api);
			break;
		case CVC_SPOOL_DEVICE:
			st = mat_device(m, off, &r.device);
			break;
		case CVC_SPOOL_META:
			st = mat_meta(m, off, &r.meta);
			break;
		}
		if (st)
			return st;
		off += 8 + spool_pad8(len);
	}
	return CVC_OK;
}

static int coll_cmp(const void *a, const void *b)
{
	const struct cvc_spool_coll *x = a, *y = b;

	return (x->launch_id > y->launch_id) - (x->launch_id < y->launch_id);
}

/*
 * Fills the correlation tables from every EXTCORR record and collects the
 * NCCL launch records: buffers arrive in any order, so activities are
 * joined only once everything has been read.
 */
static void mat_prefill(struct mat *m, size_t end)
{
	size_t off = sizeof(struct spool_hdr), nc = 0;

	while (off < end) {
		uint32_t type, len;

		memcpy(&type, m->base + off, 4);
		memcpy(&len, m->base + off + 4, 4);
		if (type == CVC_SPOOL_EXTCORR) {
			struct cvc_spool_extcorr e;

			memcpy(&e, m->base + off + 8, sizeof e);
			/* No launch table without NCCL call records: nothing to join
			 * (a NULL table was written through; found by fuzzing). */
			if (e.ext_kind == CVC_EXTCORR_NCCL_LAUNCH) {
				if (m->launch)
					map_put(m->launch, m->launch_mask, &e);
			} else
				map_put(m->ext, m->next_mask, &e);
		} else if (type == CVC_SPOOL_API && m->calls) {
			struct cvc_spool_api a;

			memcpy(&a, m->base + off + 8, sizeof a);
			call_put(m->calls, m->calls_mask, a.correlation, a.start_ns);
		} else if (type == CVC_SPOOL_COLL && nc < m->ncolls) {
			memcpy(&m->colls[nc++], m->base + off + 8, sizeof *m->colls);
		} else if (type == CVC_SPOOL_GNODE || type == CVC_SPOOL_GCLONE) {
			struct cvc_spool_graph g;

			memcpy(&g, m->base + off + 8, sizeof g);
			mat_graph_collect(m, type, &g);
		}
		off += 8 + spool_pad8(len);
	}
	if (m->ncolls) /* qsort's pointer must not be NULL, even for 0 items */
		qsort(m->colls, m->ncolls, sizeof *m->colls, coll_cmp);
	mat_graph_sort(m);
}

static cvc_status mat_finish(struct mat *m, size_t end, const char *spool_path)
{
	cvc_rank_info rk = {0};
	cvc_status st;
	int64_t off_sum = 0;
	int npairs = 0;

	if (!m->have_proc)
		return mat_fail(m, CVC_ERR_FORMAT, end, "expected a process record");
	mat_proj_sort(m);
	if ((st = mat_pair_markers(m)))
		return st;
	for (int i = 0; i < 4; i += 2) {
		int64_t d;

		if (!m->have_clock[i] || !m->have_clock[i + 1])
			continue;
		/* clocks come from the file: their difference may not fit */
		if (__builtin_sub_overflow(m->clock[i + 1], m->clock[i], &d) ||
		    __builtin_add_overflow(off_sum, d, &off_sum))
			return mat_fail(m, CVC_ERR_FORMAT, end,
					"expected clock pairs less than 2^63 ns apart");
		npairs++;
	}
	rk.rank = m->rank;
	rk.clock_offset_ns = npairs ? off_sum / npairs : 0;
	if ((st = cvc_db_rank_put(m->db, m->run_id, &rk)))
		return mat_dbfail(m, st);
	if (end < m->size &&
	    (st = cvc_db_run_meta_add(m->db, m->run_id, "spool_truncated_bytes",
				      (int64_t)(m->size - end))))
		return mat_dbfail(m, st);
	{
		int64_t unjoined = 0;

		for (size_t i = 0; i < m->ncolls; i++)
			unjoined += !m->coll_used[i];
		if (m->ncolls && (st = cvc_db_run_meta_add(m->db, m->run_id,
							   "nccl_launches_unjoined", unjoined)))
			return mat_dbfail(m, st);
	}
	if ((st = mat_graph_finish(m)))
		return st;
	if (m->stats->unmatched_markers &&
	    (st = cvc_db_run_meta_add(m->db, m->run_id, "unmatched_nvtx_markers",
				      m->stats->unmatched_markers)))
		return mat_dbfail(m, st);
	if (m->projected &&
	    (st = cvc_db_run_meta_add(m->db, m->run_id, "nvtx_ranges_on_gpu", m->projected)))
		return mat_dbfail(m, st);
	if (m->out_of_range &&
	    (st = cvc_db_run_meta_add(m->db, m->run_id, "records_out_of_range", m->out_of_range)))
		return mat_dbfail(m, st);
	if ((st = cvc_db_source_add(m->db, m->run_id, spool_path, "cupti", m->rank,
				    m->stats->records, NULL)))
		return mat_dbfail(m, st);
	return CVC_OK;
}

cvc_status cvc_profile_materialize(const char *spool_path, const char *db_path,
				   cvc_materialize_stats *stats, char *err, size_t errlen)
{
	struct mat m;
	cvc_materialize_stats local = {0};
	struct stat sb;
	int fd = -1;
	size_t end = 0, next = 0, ncoll = 0;
	uint32_t maxsid = 0;
	cvc_status st = CVC_OK;
	void *map = MAP_FAILED;

	memset(&m, 0, sizeof m);
	m.spool = spool_path;
	m.stats = stats ? stats : &local;
	memset(m.stats, 0, sizeof *m.stats);
	m.err = err;
	m.errlen = errlen;
	if (err && errlen)
		err[0] = '\0';
	/* O_NONBLOCK: a FIFO named like a spool must not hang us (issue 36) */
	fd = open(spool_path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0 || fstat(fd, &sb) != 0) {
		if (err)
			snprintf(err, errlen, "'%s': %s", spool_path, strerror(errno));
		st = fd < 0 ? cvc_open_status(errno) : CVC_ERR_IO;
		goto out;
	}
	if (!S_ISREG(sb.st_mode)) {
		if (err)
			snprintf(err, errlen, "'%s': not a regular file, expected a spool", spool_path);
		st = CVC_ERR_FORMAT;
		goto out;
	}
	m.size = (size_t)sb.st_size;
	if (m.size < sizeof(struct spool_hdr)) {
		st = mat_fail(&m, CVC_ERR_FORMAT, 0, "expected a 16-byte CVCSPOOL header");
		goto out;
	}
	map = mmap(NULL, m.size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (map == MAP_FAILED) {
		if (err)
			snprintf(err, errlen, "'%s': mmap: %s", spool_path, strerror(errno));
		st = CVC_ERR_IO;
		goto out;
	}
	m.base = map;
	{
		struct spool_hdr h;

		memcpy(&h, m.base, sizeof h);
		if (memcmp(h.magic, CVC_SPOOL_MAGIC, 8) != 0) {
			st = mat_fail(&m, CVC_ERR_FORMAT, 0, "expected the magic 'CVCSPOOL'");
			goto out;
		}
		if (h.version < 1 || h.version > CVC_SPOOL_VERSION) {
			st = mat_fail(&m, CVC_ERR_FORMAT, 8, "expected spool version 1 or 2");
			goto out;
		}
		m.version = h.version;
	}
	if ((st = mat_scan(&m, &end, &next, &ncoll, &maxsid)))
		goto out;
	m.nsid = maxsid;
	m.sid2id = calloc((size_t)maxsid + 1, sizeof *m.sid2id);
	m.sid2str = calloc((size_t)maxsid + 1, sizeof *m.sid2str);
	m.sid2len = calloc((size_t)maxsid + 1, sizeof *m.sid2len);
	if (!m.sid2id || !m.sid2str || !m.sid2len) {
		st = mat_fail(&m, CVC_ERR_NOMEM, 0, "out of memory for the string table");
		goto out;
	}
	if (next) {
		size_t n = 16;

		while (n < next * 2)
			n *= 2;
		/* Both tables sized for all records: either kind may be all of them. */
		m.ext = calloc(n, sizeof *m.ext);
		m.launch = ncoll ? calloc(n, sizeof *m.launch) : NULL;
		if (!m.ext || (ncoll && !m.launch)) {
			st = mat_fail(&m, CVC_ERR_NOMEM, 0, "out of memory for correlations");
			goto out;
		}
		m.next_mask = m.launch_mask = n - 1;
	}
	if (m.napi) {
		size_t n = 16;

		while (n < m.napi * 2)
			n *= 2;
		m.calls = calloc(n, sizeof *m.calls);
		if (!m.calls) {
			st = mat_fail(&m, CVC_ERR_NOMEM, 0, "out of memory for API calls");
			goto out;
		}
		m.calls_mask = n - 1;
	}
	if (ncoll) {
		m.colls = calloc(ncoll, sizeof *m.colls);
		m.coll_used = calloc(ncoll, 1);
		if (!m.colls || !m.coll_used) {
			st = mat_fail(&m, CVC_ERR_NOMEM, 0, "out of memory for NCCL calls");
			goto out;
		}
		m.ncolls = ncoll;
	}
	if ((st = mat_graph_alloc(&m)))
		goto out;
	mat_prefill(&m, end);
	if (access(db_path, F_OK) == 0) {
		if (err)
			snprintf(err, errlen, "'%s': already exists; not overwriting it", db_path);
		st = CVC_ERR_IO;
		goto out;
	}
	/* removed again on failure only while ours alone (cvc_db.h) */
	st = cvc_db_open(db_path, CVC_DB_CREATE | CVC_DB_DISCARD, &m.db);
	if (st) {
		if (m.db)
			mat_dbfail(&m, st);
		goto out;
	}
	if ((st = cvc_db_begin(m.db))) {
		mat_dbfail(&m, st);
		goto out;
	}
	if ((st = mat_records(&m, end)) || (st = mat_finish(&m, end, spool_path)))
		goto out;
	if ((st = cvc_db_commit(m.db)))
		mat_dbfail(&m, st);
out:
	if (m.db)
		cvc_db_close(m.db);
	if (map != MAP_FAILED)
		munmap(map, m.size);
	if (fd >= 0)
		close(fd);
	free(m.sid2id);
	free(m.sid2str);
	free(m.sid2len);
	free(m.ext);
	free(m.calls);
	free(m.launch);
	free(m.colls);
	free(m.coll_used);
	free(m.marks);
	mat_graph_free(&m);
	mat_proj_free(&m);
	return st;
}
