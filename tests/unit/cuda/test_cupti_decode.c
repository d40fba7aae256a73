/*
 * test_cupti_decode.c - the profiler's record path without a GPU: real
 * CUPTI 13 record structs packed into buffers exactly as CUPTI delivers
 * them, through the decoder the live buffer-completed callback uses, into a
 * spool, materialized into a cvc database whose every field is checked;
 * damaged spools and a full disk.  The injection library and `cvc profile`:
 * test_cupti_inject.c (linked into the same test program).
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <criterion/criterion.h>
#include <cupti.h>
#include <sqlite3.h>

#include "cvc/cvc_db.h"
#include "cvc/cvc_profile.h"
#include "decode.h"
#include "test_cupti_int.h"
#include "testutil.h"

/* ---- building CUPTI buffers ----------------------------------------------------- */

void *ct_add(struct ct_buf *c, size_t sz, CUpti_ActivityKind kind)
{
	void *p = c->b + c->used;

	cr_assert(c->used + sz <= sizeof c->b);
	memset(p, 0, sz);
	*(CUpti_ActivityKind *)p = kind;
	c->used += sz;
	return p;
}

/*
 * The fields every timed device record (kernel, copy, set) has, whatever its
 * struct: times, stream and correlation, on device 1 in context 3.
 */
#define ON_STREAM(r, t0, t1, stream, corr)                                                   \
	((r)->start = (t0), (r)->end = (t1), (r)->deviceId = 1, (r)->contextId = 3,          \
	 (r)->streamId = (stream), (r)->correlationId = (corr))

/* The launch every test kernel has (an H100 GEMM's), with no kind or times yet. */
static const CUpti_ActivityKernel10 launch = {
	.gridX = 132, .gridY = 2, .gridZ = 1,
	.blockX = 384, .blockY = 1, .blockZ = 1,
	.registersPerThread = 168, .staticSharedMemory = 1024, .dynamicSharedMemory = 229376,
	.gridId = 99,
};

static CUpti_ActivityKernel10 *kernel(struct ct_buf *c, const char *name, uint64_t start,
				      uint64_t dur, uint32_t stream, uint32_t corr)
{
	CUpti_ActivityKernel10 *k = ct_add(c, sizeof *k, CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);

	*k = launch;
	k->kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
	ON_STREAM(k, start, start + dur, stream, corr);
	k->completed = start + dur;
	k->name = name;
	return k;
}

static void marker(struct ct_buf *c, CUpti_ActivityFlag flag, uint32_t id, uint64_t ts,
		   const char *name, const char *domain, uint32_t tid)
{
	CUpti_ActivityMarker2 *m = ct_add(c, sizeof *m, CUPTI_ACTIVITY_KIND_MARKER);

	m->flags = flag;
	m->id = id;
	m->timestamp = ts;
	m->objectKind = CUPTI_ACTIVITY_OBJECT_THREAD;
	m->objectId.pt.processId = 4000;
	m->objectId.pt.threadId = tid;
	m->name = name;
	m->domain = domain;
}

static void extcorr(struct ct_buf *c, CUpti_ExternalCorrelationKind kind, uint64_t ext,
		    uint32_t corr)
{
	CUpti_ActivityExternalCorrelation *e =
		ct_add(c, sizeof *e, CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION);

	e->externalKind = kind;
	e->externalId = ext;
	e->correlationId = corr;
}

/* Buffer 1: device, kernels, copies, markers, an API call. */
static void fill_main(struct ct_buf *c, char *gemm_copy)
{
	CUpti_ActivityDevice5 *d = ct_add(c, sizeof *d, CUPTI_ACTIVITY_KIND_DEVICE);
	CUpti_ActivityContext3 *ctx = ct_add(c, sizeof *ctx, CUPTI_ACTIVITY_KIND_CONTEXT);
	CUpti_ActivityMemcpy6 *mc;
	CUpti_ActivityMemset4 *ms;
	CUpti_ActivityMemcpyPtoP4 *p2p;
	CUpti_ActivityAPI *api;

	d->id = 1;
	d->name = "NVIDIA H100 80GB HBM3";
	d->numMultiprocessors = 132;
	d->globalMemorySize = 85020983296ull;
	d->globalMemoryBandwidth = 3352320000ull; /* KB/s */
	d->coreClockRate = 1980000;
	d->computeCapabilityMajor = 9;
	d->computeCapabilityMinor = 0;
	ctx->contextId = 3;
	ctx->deviceId = 1;
	kernel(c, gemm_name, T0 + 1000, 250000, 7, 101);
	kernel(c, nccl_name, T0 + 300000, 1200000, 13, 102);
	kernel(c, gemm_name, T0 + 260000, 250000, 7, 103); /* pointer cache hit */
	kernel(c, gemm_copy, T0 + 520000, 250000, 7, 104); /* same text, other pointer */
	mc = ct_add(c, sizeof *mc, CUPTI_ACTIVITY_KIND_MEMCPY);
	mc->copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_HTOD;
	mc->srcKind = CUPTI_ACTIVITY_MEMORY_KIND_PINNED;
	mc->dstKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
	mc->bytes = 64ull << 20;
	ON_STREAM(mc, T0 + 2000000, T0 + 4700000, 14, 105);
	ms = ct_add(c, sizeof *ms, CUPTI_ACTIVITY_KIND_MEMSET);
	ms->value = 0;
	ms->bytes = 1u << 20;
	ms->memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
	ON_STREAM(ms, T0 + 5000000, T0 + 5004000, 7, 106);
	p2p = ct_add(c, sizeof *p2p, CUPTI_ACTIVITY_KIND_MEMCPY2);
	p2p->copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_PTOP;
	p2p->bytes = 8u << 20;
	p2p->srcKind = p2p->dstKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
	ON_STREAM(p2p, T0 + 6000000, T0 + 6100000, 15, 107);
	p2p->srcDeviceId = 1;
	p2p->dstDeviceId = 0;
	marker(c, CUPTI_ACTIVITY_FLAG_MARKER_START, 11, T0 + 100, "step", NULL, 4001);
	marker(c, CUPTI_ACTIVITY_FLAG_MARKER_START, 12, T0 + 290000, "ncclAllReduce", "NCCL", 4001);
	marker(c, CUPTI_ACTIVITY_FLAG_MARKER_END, 12, T0 + 299000, NULL, "NCCL", 4001);
	marker(c, CUPTI_ACTIVITY_FLAG_MARKER_INSTANTANEOUS, 13, T0 + 50, "checkpoint", NULL, 4001);
	api = ct_add(c, sizeof *api, CUPTI_ACTIVITY_KIND_RUNTIME);
	api->cbid = 211;
	api->start = T0 + 500;
	api->end = T0 + 900;
	api->processId = 4000;
	api->threadId = 4001;
	api->correlationId = 101;
}

/* Buffer 2, delivered later: the END of "step" and the external ids. */
static void fill_late(struct ct_buf *c)
{
	marker(c, CUPTI_ACTIVITY_FLAG_MARKER_END, 11, T0 + 8000000, NULL, NULL, 4001);
	extcorr(c, CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM1, 555, 101);
	extcorr(c, CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, 777, 101);
	extcorr(c, CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, 778, 102);
}

/*
 * One decoding of a hand-built buffer: the buffer, a decoder writing
 * dir/<base>.spool, and dir/<base>.db to materialize it into.
 */
struct rig {
	struct ct_buf c;
	struct cvci_decoder d;
	cvc_spool *sp;
	char dir[2048], spool[4096], db[4200], err[512];
	cvc_materialize_stats st;
};

/*
 * An empty buffer and the paths in a fresh tu_tmpdir(); nothing opened.
 * Static: the buffer is too big for the stack (each test is its own process).
 */
static struct rig *rig_new(const char *base)
{
	static struct rig r;

	memset(&r, 0, sizeof r);
	snprintf(r.dir, sizeof r.dir, "%s", tu_tmpdir());
	snprintf(r.spool, sizeof r.spool, "%s/%s.spool", r.dir, base);
	snprintf(r.db, sizeof r.db, "%s/%s.db", r.dir, base);
	return &r;
}

/* Opens the spool (flushing every cap bytes) and the decoder on it; asserts both. */
static void rig_open(struct rig *r, size_t cap)
{
	cr_assert_eq(cvc_spool_open(r->spool, cap, &r->sp), CVC_OK);
	cr_assert_eq(cvci_decoder_init(&r->d, r->sp), CVC_OK);
}

/* Releases the decoder and closes the spool; returns the close's status. */
static cvc_status rig_close(struct rig *r)
{
	cvci_decoder_release(&r->d);
	return cvc_spool_close(r->sp);
}

/* Closes as rig_close, then materializes the spool into the db; asserts both. */
static void rig_finish(struct rig *r)
{
	cr_assert_eq(rig_close(r), CVC_OK);
	cr_assert_eq(cvc_profile_materialize(r->spool, r->db, &r->st, r->err, sizeof r->err),
		     CVC_OK, "%s", r->err);
}

/* ---- the record walk agrees with libcupti's ------------------------------------------ */

Test(cupti_decode, walk_matches_libcupti)
{
	static struct ct_buf c, late;
	static char copy[sizeof gemm_name];
	CUpti_Activity *rec = NULL;
	size_t off = 0, n = 0;

	memcpy(copy, gemm_name, sizeof gemm_name);
	fill_main(&c, copy);
	fill_late(&late);
	memcpy(c.b + c.used, late.b, late.used);
	c.used += late.used;
	/* cuptiActivityGetNextRecord works on hand-built buffers without a driver. */
	while (cuptiActivityGetNextRecord(c.b, c.used, &rec) == CUPTI_SUCCESS) {
		size_t sz = cvci_record_size((uint32_t)rec->kind);

		cr_assert_eq((uint8_t *)rec - c.b, (ptrdiff_t)off,
			     "record %zu (kind %d): libcupti at %td, ours at %zu", n,
			     (int)rec->kind, (uint8_t *)rec - c.b, off);
		cr_assert(sz > 0, "kind %d has no size", (int)rec->kind);
		off += sz;
		n++;
	}
	cr_assert_eq(off, c.used);
	cr_assert_eq(n, 18, "libcupti walked %zu records, %zu of %zu bytes", n, off, c.used);
}

/* ---- decode -> spool -> database ---------------------------------------------------- */

void ct_decode_rank_to_db(const char *dir, const char *base, int rank, struct run_out *o,
			  int64_t win_start, int64_t win_end)
{
	static struct ct_buf c, late;
	static char copy[sizeof gemm_name];
	char spool[4096], err[512];
	cvc_spool *sp = NULL;
	size_t n;

	c.used = late.used = 0;
	memcpy(copy, gemm_name, sizeof gemm_name);
	fill_main(&c, copy);
	fill_late(&late);
	snprintf(spool, sizeof spool, "%s/%s.spool", dir, base);
	snprintf(o->db, sizeof o->db, "%s/%s.db", dir, base);
	cr_assert_eq(cvc_spool_open(spool, 1u << 16, &sp), CVC_OK);
	cr_assert_eq(cvci_decoder_init(&o->dec, sp), CVC_OK);
	o->dec.win_start_ns = win_start;
	o->dec.win_end_ns = win_end;
	cvci_put_proc(&o->dec, rank, 8, 4000 + rank, "node07", "myrun", "cvc test, CUPTI 130001");
	cvci_put_meta(&o->dec, "clock_start_cupti_ns", T0);
	cvci_put_meta(&o->dec, "clock_start_realtime_ns", T0 + 1500);
	n = cvci_decode(&o->dec, c.b, c.used);
	cr_assert_eq(n, 14, "decoded %zu, undecodable %lld", n, (long long)o->dec.undecodable);
	n = cvci_decode(&o->dec, late.b, late.used);
	cr_assert_eq(n, 4);
	cvci_put_meta(&o->dec, "clock_end_cupti_ns", T0 + 9000000);
	cvci_put_meta(&o->dec, "clock_end_realtime_ns", T0 + 9002500);
	cvci_put_meta(&o->dec, "lost_records", 5);
	cr_assert_eq(cvc_spool_close(sp), CVC_OK);
	cvci_decoder_release(&o->dec);
	cr_assert_eq(cvc_profile_materialize(spool, o->db, &o->st, err, sizeof err), CVC_OK, "%s",
		     err);
}

static void decode_to_db(const char *dir, struct run_out *o, int64_t win_start, int64_t win_end)
{
	ct_decode_rank_to_db(dir, "cvc-test-1-r3", 3, o, win_start, win_end);
}

sqlite3 *ct_open_ro(const char *path)
{
	sqlite3 *sq = NULL;

	cr_assert_eq(sqlite3_open_v2(path, &sq, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
	return sq;
}

static char *query1(sqlite3 *sq, const char *sql)
{
	sqlite3_stmt *st = NULL;
	char *r = NULL;

	cr_assert_eq(sqlite3_prepare_v2(sq, sql, -1, &st, NULL), SQLITE_OK, "%s: %s", sql,
		     sqlite3_errmsg(sq));
	if (sqlite3_step(st) == SQLITE_ROW) {
		const unsigned char *t = sqlite3_column_text(st, 0);

		r = strdup(t ? (const char *)t : "NULL");
	}
	sqlite3_finalize(st);
	cr_assert(r, "no row: %s", sql);
	return r;
}

void ct_expect(sqlite3 *sq, const char *sql, const char *want)
{
	char *got = query1(sq, sql);

	cr_expect_str_eq(got, want, "%s", sql);
	free(got);
}

/* Appends one raw spool record (the writer's framing) to the file at path. */
void ct_append_rec(const char *path, uint32_t type, const void *p, uint32_t len)
{
	FILE *f = fopen(path, "ab");
	uint64_t zero = 0;

	cr_assert(f);
	cr_assert_eq(fwrite(&type, 4, 1, f), 1);
	cr_assert_eq(fwrite(&len, 4, 1, f), 1);
	cr_assert_eq(fwrite(p, len, 1, f), 1);
	if (len % 8)
		cr_assert_eq(fwrite(&zero, 8 - len % 8, 1, f), 1);
	cr_assert_eq(fclose(f), 0);
}

Test(cupti_decode, every_field_stored)
{
	const char *dir = tu_tmpdir();
	struct run_out o;
	sqlite3 *sq;

	decode_to_db(dir, &o, 0, 0);
	cr_expect_eq(o.st.activities, 7);
	/* step, ncclAllReduce, checkpoint, the API call, and step on the GPU */
	cr_expect_eq(o.st.ranges, 5);
	cr_expect_eq(o.st.devices, 1);
	cr_expect_eq(o.st.unmatched_markers, 0);
	cr_expect_eq(o.st.lost_records, 5);
	cr_expect_eq(o.dec.skipped, 1); /* the context record */
	sq = ct_open_ro(o.db);
	ct_expect(sq, "SELECT name||'|'||format||'|'||tool_version||'|'||world_size||'|'||gpu_model "
		   "FROM runs", "myrun|cupti|cvc test, CUPTI 130001|8|NVIDIA H100 80GB HBM3");
	/* offset = mean of (realtime - cupti) over the two pairs = (1500 + 2500) / 2 */
	ct_expect(sq, "SELECT rank||'|'||host||'|'||pid||'|'||clock_offset_ns FROM ranks",
	       "3|node07|4003|2000");
	ct_expect(sq, "SELECT rank||'|'||device||'|'||name||'|'||sm_count||'|'||total_mem_bytes||'|'"
		   "||cc_major||'.'||cc_minor||'|'||printf('%.2f',mem_bw_gbps)||'|'||clock_khz "
		   "FROM devices",
	       "3|1|NVIDIA H100 80GB HBM3|132|85020983296|9.0|3352.32|1980000");
	/* The first GEMM: every column, external id resolved from a later buffer. */
	ct_expect(sq, "SELECT a.rank||'|'||device||'|'||kind||'|'||s.value||'|'||start_ns||'|'||end_ns"
		   "||'|'||stream||'|'||context||'|'||correlation||'|'||external_id||'|'||grid_x||'x'"
		   "||grid_y||'x'||grid_z||'|'||block_x||'x'||block_y||'x'||block_z||'|'||registers"
		   "||'|'||shared_mem_bytes||'|'||coalesce(bytes,'NULL')||'|'||coalesce(copy_kind,"
		   "'NULL') FROM activities a JOIN strings s ON s.id=a.name_id WHERE correlation=101",
	       "3|1|1|" "sm90_xmma_gemm_f32f32_tf32f32_f32_nn_n_tilesize128x128x32_warpgroupsize1x1x1_"
	       "execute_segment_k_off_kernel__5x_cublas" "|1763768000000001000|1763768000000251000|"
	       "7|3|101|777|132x2x1|384x1x1|168|230400|NULL|NULL");
	ct_expect(sq, "SELECT s.value||'|'||stream||'|'||external_id||'|'||(end_ns-start_ns) FROM "
		   "activities a JOIN strings s ON s.id=a.name_id WHERE correlation=102",
	       /* CUPTI's _Z39ncclDevKernel_..., stored demangled as Kineto has it */
	       "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)"
	       "|13|778|1200000");
	/* Three GEMMs (two pointers) share one interned name; no external id for 103/104. */
	ct_expect(sq, "SELECT count(DISTINCT name_id)||'|'||count(*)||'|'||count(external_id) FROM "
		   "activities WHERE stream=7 AND kind=1", "1|3|1");
	ct_expect(sq, "SELECT kind||'|'||s.value||'|'||bytes||'|'||copy_kind||'|'||stream||'|'||"
		   "(end_ns-start_ns)||'|'||coalesce(grid_x,'NULL') FROM activities a JOIN strings s "
		   "ON s.id=a.name_id WHERE correlation=105",
	       "2|Memcpy HtoD (Pinned -> Device)|67108864|1|14|2700000|NULL");
	ct_expect(sq, "SELECT kind||'|'||s.value||'|'||bytes||'|'||stream||'|'||(end_ns-start_ns) "
		   "FROM activities a JOIN strings s ON s.id=a.name_id WHERE correlation=106",
	       "3|Memset (Device)|1048576|7|4000");
	ct_expect(sq, "SELECT kind||'|'||s.value||'|'||bytes||'|'||copy_kind FROM activities a JOIN "
		   "strings s ON s.id=a.name_id WHERE correlation=107", "2|Memcpy PtoP (Device -> Device)|8388608|10");
	/* NVTX: a range paired across buffers, NCCL's domain, an instant marker. */
	ct_expect(sq, "SELECT group_concat(x, ';') FROM (SELECT s.value||'|'||coalesce(domain,'-')||'|'"
		   "||(start_ns-1763768000000000000)||'|'||(end_ns-1763768000000000000)||'|'||tid||'|'"
		   "||device AS x FROM ranges r JOIN strings s ON s.id=r.name_id WHERE kind=3 "
		   "ORDER BY start_ns)",
	       "checkpoint|-|50|50|4001|-1;step|-|100|8000000|4001|-1;"
	       "ncclAllReduce|NCCL|290000|299000|4001|-1");
	/* "step" on the GPU: from its one launch (runtime call 101 at 500 on its
	 * thread) to that kernel's end, on the kernel's device */
	ct_expect(sq, "SELECT group_concat(x, ';') FROM (SELECT s.value||'|'||(start_ns-"
		   "1763768000000000000)||'|'||(end_ns-1763768000000000000)||'|'||tid||'|'||device "
		   "AS x FROM ranges r JOIN strings s ON s.id=r.name_id WHERE kind=2)",
		   "step|1000|251000|4001|1");
	ct_expect(sq, "SELECT value FROM run_meta WHERE key='nvtx_ranges_on_gpu'", "1");
	ct_expect(sq, "SELECT s.value||'|'||domain||'|'||(end_ns-start_ns)||'|'||tid FROM ranges r "
		   "JOIN strings s ON s.id=r.name_id WHERE kind=1", "runtime cbid 211|cuda-runtime|400|4001");
	ct_expect(sq, "SELECT value FROM run_meta WHERE key='lost_records'", "5");
	ct_expect(sq, "SELECT value FROM run_meta WHERE key='clock_end_cupti_ns'", "1763768000009000000");
	ct_expect(sq, "SELECT (path LIKE '%cvc-test-1-r3.spool')||'|'||format||'|'||rank||'|'||events "
		   "FROM sources", "1|cupti|3|23");
	sqlite3_close(sq);
}

Test(cupti_decode, window_filters_records)
{
	const char *dir = tu_tmpdir();
	struct run_out o;
	sqlite3 *sq;

	/* Keep what starts in [T0+200us, T0+1ms]: the NCCL kernel, GEMMs 103 and 104, the NCCL range. */
	decode_to_db(dir, &o, T0 + 200000, T0 + 1000000);
	sq = ct_open_ro(o.db);
	ct_expect(sq, "SELECT group_concat(correlation, ',') FROM (SELECT correlation FROM activities "
		   "ORDER BY correlation)", "102,103,104");
	cr_expect_eq(o.dec.filtered, 8);
	/* "step" lost its START to the window: an END alone is counted, not stored. */
	cr_expect_eq(o.st.unmatched_markers, 0);
	ct_expect(sq, "SELECT count(*) FROM ranges", "1");
	sqlite3_close(sq);
}

/*
 * Records CUPTI could not time (start = end = 0; issue 19 item 7) are
 * skipped and counted, not stored at t = 0 where they would stretch every
 * breakdown back to the epoch.
 */
Test(cupti_decode, untimed_records_are_counted_not_stored)
{
	struct rig *r = rig_new("u");
	sqlite3 *sq;

	kernel(&r->c, gemm_name, T0 + 1000, 500, 7, 1);
	kernel(&r->c, gemm_name, 0, 0, 7, 2);                /* not timed */
	kernel(&r->c, nccl_name, T0 + 3000, 0, 20, 3)->end = T0 + 2000; /* end before start */
	rig_open(r, 1u << 16);
	cvci_put_proc(&r->d, 0, 1, 4000, "node07", "untimed", "cvc test");
	cvci_decode(&r->d, r->c.b, r->c.used);
	cr_expect_eq(r->d.untimed, 2);
	cr_expect_eq(r->d.records, 1);
	rig_finish(r);
	sq = ct_open_ro(r->db);
	ct_expect(sq, "SELECT count(*) || '|' || min(start_ns) FROM activities", "1|1763768000000001000");
	sqlite3_close(sq);
}

/*
 * NCCL sizes join their kernels only through external-correlation records,
 * which CUPTI writes only for API records made inside the region (issue 19
 * item 1): with external ids on, the driver and runtime kinds are enabled
 * too, and their rows are dropped unless asked for.
 */
Test(cupti_decode, external_ids_enable_the_api_kinds_and_drop_their_rows)
{
	struct rig *r = rig_new("a");
	const char *dir = r->dir;
	char cmd[8192], want[64], *err = NULL;
	CUpti_ActivityAPI *api;

	/* what the library enables (the harness logs each cuptiActivityEnable) */
	snprintf(cmd, sizeof cmd, "env -u CVC_PROFILE_PARENT HARNESS_ENABLE=log CVC_PROFILE_DIR='%s' "
		 "'%s' '%s' exit", dir, CVC_INJECT_HARNESS, CVC_INJECT_LIB);
	cr_assert_eq(tu_run(cmd, NULL, &err), 3, "%s", err);
	snprintf(want, sizeof want, "enable %d\n", (int)CUPTI_ACTIVITY_KIND_DRIVER);
	cr_expect(strstr(err, want), "default activities: no driver API kind:\n%s", err);
	snprintf(want, sizeof want, "enable %d\n", (int)CUPTI_ACTIVITY_KIND_RUNTIME);
	cr_expect(strstr(err, want), "default activities: no runtime API kind:\n%s", err);
	free(err);
	snprintf(cmd, sizeof cmd, "env -u CVC_PROFILE_PARENT HARNESS_ENABLE=log CVC_PROFILE_DIR='%s' "
		 "CVC_PROFILE_ACTIVITIES=kernel '%s' '%s' exit", tu_tmpdir(), CVC_INJECT_HARNESS,
		 CVC_INJECT_LIB);
	cr_assert_eq(tu_run(cmd, NULL, &err), 3, "%s", err);
	snprintf(want, sizeof want, "enable %d\n", (int)CUPTI_ACTIVITY_KIND_DRIVER);
	cr_expect(!strstr(err, want), "kernels only: the driver kind is on:\n%s", err);
	free(err);

	/* the rows: API records dropped and counted, the correlation kept */
	api = ct_add(&r->c, sizeof *api, CUPTI_ACTIVITY_KIND_DRIVER);
	api->start = T0 + 100;
	api->end = T0 + 200;
	api->correlationId = 7;
	extcorr(&r->c, CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM2, 42, 7);
	kernel(&r->c, nccl_name, T0 + 1000, 500, 20, 7);
	rig_open(r, 1u << 16);
	r->d.api_drop = 3;
	cvci_put_proc(&r->d, 0, 1, 4000, "node07", "api", "cvc test");
	cr_expect_eq(cvci_decode(&r->d, r->c.b, r->c.used), 3);
	cr_expect_eq(r->d.records, 3, "the API call (launch only), the external id, the kernel");
	cr_expect_eq(r->d.skipped, 1, "the API record's row");
	cr_assert_eq(rig_close(r), CVC_OK);
}

Test(cupti_decode, unknown_kind_stops_walk)
{
	struct rig *r = rig_new("x");

	kernel(&r->c, nccl_name, T0, 10, 1, 1);
	ct_add(&r->c, 64, CUPTI_ACTIVITY_KIND_PC_SAMPLING); /* a kind we never enable */
	kernel(&r->c, nccl_name, T0 + 20, 10, 1, 2);
	rig_open(r, 1u << 16);
	cr_expect_eq(cvci_decode(&r->d, r->c.b, r->c.used), 1);
	cr_expect_eq(r->d.undecodable, 1);
	/* A record cut by valid size is not read past the end either. */
	cr_expect_eq(cvci_decode(&r->d, r->c.b, sizeof(CUpti_ActivityKernel10) - 8), 0);
	cr_expect_eq(r->d.undecodable, 2);
	rig_close(r);
}

/*
 * A record of a kind cvc does not decode but libcupti writes (overhead
 * records, here in the 13.0 layout) between two kernels: the walk is
 * libcupti's (issue 19 item 4), so it steps over it and the second kernel
 * is kept.  Walking by cvc's own table of sizes stopped there and lost the
 * rest of the buffer.
 */
Test(cupti_decode, libcupti_walks_past_kinds_cvc_does_not_decode)
{
	struct rig *r = rig_new("o");
	CUpti_ActivityOverhead3 *o;

	kernel(&r->c, nccl_name, T0, 10, 1, 1);
	o = ct_add(&r->c, sizeof *o, CUPTI_ACTIVITY_KIND_OVERHEAD);
	o->overheadKind = CUPTI_ACTIVITY_OVERHEAD_CUPTI_BUFFER_FLUSH;
	o->start = T0 + 5;
	o->end = T0 + 6;
	kernel(&r->c, gemm_name, T0 + 20, 10, 7, 2);
	rig_open(r, 1u << 16);
	cr_expect_eq(cvci_decode(&r->d, r->c.b, r->c.used), 3);
	cr_expect_eq(r->d.records, 2, "both kernels");
	cr_expect_eq(r->d.skipped, 1, "the overhead record");
	cr_expect_eq(r->d.undecodable, 0);
	rig_close(r);
}

/* ---- damaged spools ---------------------------------------------------------------- */

Test(cupti_decode, cut_spool_keeps_whole_records)
{
	const char *dir = tu_tmpdir();
	struct run_out o;
	char spool[4096], db2[4096], err[512];
	char *data;
	size_t len;
	cvc_materialize_stats st;

	decode_to_db(dir, &o, 0, 0);
	/* Rebuild the spool and cut it mid-record, as a killed process leaves it. */
	snprintf(spool, sizeof spool, "%s/cvc-test-1-r3.spool", dir);
	unlink(o.db);
	{
		static struct ct_buf c;
		static char copy[sizeof gemm_name];
		struct cvci_decoder d;
		cvc_spool *sp = NULL;

		unlink(spool);
		memcpy(copy, gemm_name, sizeof gemm_name);
		fill_main(&c, copy);
		cr_assert_eq(cvc_spool_open(spool, 1u << 16, &sp), CVC_OK);
		cr_assert_eq(cvci_decoder_init(&d, sp), CVC_OK);
		cvci_put_proc(&d, -1, 0, 4000, "node07", "myrun", "t");
		cvci_decode(&d, c.b, c.used);
		cvc_spool_close(sp);
		cvci_decoder_release(&d);
	}
	data = tu_read(spool, &len);
	cr_assert(data);
	cr_assert_eq(tu_write(spool, data, len - 20), 0);
	snprintf(db2, sizeof db2, "%s/cut.db", dir);
	cr_assert_eq(cvc_profile_materialize(spool, db2, &st, err, sizeof err), CVC_OK, "%s", err);
	{
		sqlite3 *sq = ct_open_ro(db2);

		ct_expect(sq, "SELECT CAST(value AS INTEGER) > 0 FROM run_meta WHERE "
			   "key='spool_truncated_bytes'", "1");
		ct_expect(sq, "SELECT rank FROM ranks", "0"); /* unknown rank stored as 0 */
		sqlite3_close(sq);
	}
	/* A corrupt length is malformed input: one message with the byte offset, no db. */
	data[16 + 4] = (char)0xff;
	data[16 + 7] = (char)0x7f;
	cr_assert_eq(tu_write(spool, data, len), 0);
	snprintf(db2, sizeof db2, "%s/bad.db", dir);
	cr_expect_eq(cvc_profile_materialize(spool, db2, &st, err, sizeof err), CVC_ERR_FORMAT);
	cr_expect(strstr(err, "byte 16: expected a record length"), "%s", err);
	cr_expect_neq(access(db2, F_OK), 0);
	/* Not a spool at all. */
	cr_assert_eq(tu_write(spool, "SQLite format 3\0", 16), 0);
	cr_expect_eq(cvc_profile_materialize(spool, db2, &st, err, sizeof err), CVC_ERR_FORMAT);
	cr_expect(strstr(err, "byte 0: expected the magic 'CVCSPOOL'"), "%s", err);
	free(data);
}

/* ---- a full disk costs records, never the program ------------------------------------ */

Test(cupti_decode, disk_full_drops_whole_buffers)
{
	struct rig *r = rig_new("full");
	struct rlimit old, lim;
	struct stat sb;
	int64_t lost;

	for (int i = 0; i < 200; i++)
		kernel(&r->c, nccl_name, T0 + 1000 * (uint64_t)i, 500, 13, 1 + (uint32_t)i);
	/* A file size limit plays the full disk: writes past it fail (EFBIG). */
	signal(SIGXFSZ, SIG_IGN);
	cr_assert_eq(getrlimit(RLIMIT_FSIZE, &old), 0);
	lim = old;
	lim.rlim_cur = 64 << 10;
	cr_assert_eq(setrlimit(RLIMIT_FSIZE, &lim), 0);
	rig_open(r, 64 << 10);
	cvci_put_proc(&r->d, 0, 1, 1, "h", "r", "t");
	for (int rep = 0; rep < 20; rep++)
		cr_assert_eq(cvci_decode(&r->d, r->c.b, r->c.used), 200);
	lost = cvc_spool_lost(r->sp);
	cr_expect_eq(rig_close(r), CVC_ERR_IO); /* the last flush failed too */
	cr_assert_eq(setrlimit(RLIMIT_FSIZE, &old), 0);
	cr_expect_gt(lost, 0);
	cr_assert_eq(stat(r->spool, &sb), 0);
	cr_expect_leq(sb.st_size, 64 << 10);
	/* What was kept ends on a whole record: nothing truncated, no error. */
	cr_assert_eq(cvc_profile_materialize(r->spool, r->db, &r->st, r->err, sizeof r->err),
		     CVC_OK, "%s", r->err);
	cr_expect_gt(r->st.activities, 0);
	cr_expect_lt(r->st.activities, 4000);
	{
		sqlite3 *sq = ct_open_ro(r->db);

		ct_expect(sq, "SELECT count(*) FROM run_meta WHERE key='spool_truncated_bytes'", "0");
		sqlite3_close(sq);
	}
}

/* ---- NVTX markers CUPTI hands over without a name ------------------------------------ */

/*
 * A range pushed with a non-ASCII (Unicode or registered) message can reach
 * the decoder with name NULL on its START record.  The fuzzer found that
 * such a pair made a spool the decoder itself wrote fail to materialize
 * (tests/fuzz/regress/cupti/start-marker-without-name).  The range is
 * kept, named as the Nsight Systems importer names nameless ranges.
 */
Test(cupti_decode, nameless_markers_are_kept_as_unnamed_ranges)
{
	struct rig *r = rig_new("nameless");
	struct ct_buf *c = &r->c;

	marker(c, CUPTI_ACTIVITY_FLAG_MARKER_START, 21, T0 + 10, NULL, NULL, 4001);
	marker(c, CUPTI_ACTIVITY_FLAG_MARKER_END, 21, T0 + 30, NULL, NULL, 4001);
	marker(c, CUPTI_ACTIVITY_FLAG_MARKER_START, 22, T0 + 40, NULL, "NCCL", 4001);
	marker(c, CUPTI_ACTIVITY_FLAG_MARKER_END, 22, T0 + 90, "named at the end", NULL, 4001);
	marker(c, CUPTI_ACTIVITY_FLAG_MARKER_INSTANTANEOUS, 23, T0 + 95, NULL, NULL, 4001);
	rig_open(r, 1u << 16);
	cvci_put_proc(&r->d, 0, 1, 4000, "node07", "myrun", "t");
	cr_assert_eq(cvci_decode(&r->d, c->b, c->used), 5);
	rig_finish(r);
	cr_expect_eq(r->st.ranges, 3);
	cr_expect_eq(r->st.unmatched_markers, 0);
	{
		sqlite3 *sq = ct_open_ro(r->db);

		ct_expect(sq, "SELECT group_concat(x, ';') FROM (SELECT s.value||'|'||coalesce(domain,'-')"
			   "||'|'||(start_ns-1763768000000000000)||'|'||(end_ns-1763768000000000000) AS x"
			   " FROM ranges r JOIN strings s ON s.id=r.name_id ORDER BY start_ns)",
		       "(unnamed range)|-|10|30;named at the end|NCCL|40|90;(unnamed range)|-|95|95");
		sqlite3_close(sq);
	}
	/*
	 * A marker naming a string id the spool never defined is malformed: the
	 * message points at the field, not at byte 0 (markers are paired after
	 * the walk, where the offset used to be lost).
	 */
	{
		struct cvc_spool_marker mk;
		char *data;
		size_t len;
		char want[64];

		data = tu_read(r->spool, &len);
		cr_assert(data);
		memset(&mk, 0, sizeof mk);
		mk.flags = CVC_MARK_START;
		mk.id = 30;
		mk.ts_ns = T0;
		mk.domain_sid = 999;
		ct_append_rec(r->spool, CVC_SPOOL_MARKER, &mk, sizeof mk);
		unlink(r->db);
		cr_expect_eq(cvc_profile_materialize(r->spool, r->db, &r->st, r->err, sizeof r->err),
			     CVC_ERR_FORMAT);
		snprintf(want, sizeof want, "byte %zu: expected a defined NVTX domain string",
			 len + 8 + offsetof(struct cvc_spool_marker, domain_sid));
		cr_expect(strstr(r->err, want), "want '%s' in: %s", want, r->err);
		cr_expect_neq(access(r->db, F_OK), 0);
		free(data);
	}
}
