/*
 * test_cupti_decode.c - the profiler's record path without a GPU: real
 * CUPTI 13 record structs packed into buffers exactly as CUPTI delivers
 * them, through the decoder the live buffer-completed callback uses, into a
 * spool, materialized into a cvc database whose every field is checked.
 * Plus `cvc profile` on a CUDA program on this (driverless) machine.
 */
#include <dlfcn.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <criterion/criterion.h>
#include <cupti.h>
#include <sqlite3.h>

#include "cvc/cvc_db.h"
#include "cvc/cvc_profile.h"
#include "decode.h"
#include "testutil.h"

/* ---- building CUPTI buffers ----------------------------------------------------- */

struct cbuf {
	_Alignas(8) uint8_t b[1 << 16];
	size_t used;
};

static void *add(struct cbuf *c, size_t sz, CUpti_ActivityKind kind)
{
	void *p = c->b + c->used;

	cr_assert(c->used + sz <= sizeof c->b);
	memset(p, 0, sz);
	*(CUpti_ActivityKind *)p = kind;
	c->used += sz;
	return p;
}

static const char nccl_name[] =
	"_Z39ncclDevKernel_AllReduce_Sum_f32_RING_LL24ncclDevKernelArgsStorageILm4096EE";
static const char gemm_name[] =
	"sm90_xmma_gemm_f32f32_tf32f32_f32_nn_n_tilesize128x128x32_warpgroupsize1x1x1_"
	"execute_segment_k_off_kernel__5x_cublas";

#define T0 1763768000000000000LL /* ns, a realistic CLOCK_REALTIME */

static CUpti_ActivityKernel10 *kernel(struct cbuf *c, const char *name, uint64_t start,
				      uint64_t dur, uint32_t stream, uint32_t corr)
{
	CUpti_ActivityKernel10 *k = add(c, sizeof *k, CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);

	k->start = start;
	k->end = start + dur;
	k->completed = start + dur;
	k->deviceId = 1;
	k->contextId = 3;
	k->streamId = stream;
	k->gridX = 132;
	k->gridY = 2;
	k->gridZ = 1;
	k->blockX = 384;
	k->blockY = 1;
	k->blockZ = 1;
	k->registersPerThread = 168;
	k->staticSharedMemory = 1024;
	k->dynamicSharedMemory = 229376;
	k->correlationId = corr;
	k->gridId = 99;
	k->name = name;
	return k;
}

static void marker(struct cbuf *c, CUpti_ActivityFlag flag, uint32_t id, uint64_t ts,
		   const char *name, const char *domain, uint32_t tid)
{
	CUpti_ActivityMarker2 *m = add(c, sizeof *m, CUPTI_ACTIVITY_KIND_MARKER);

	m->flags = flag;
	m->id = id;
	m->timestamp = ts;
	m->objectKind = CUPTI_ACTIVITY_OBJECT_THREAD;
	m->objectId.pt.processId = 4000;
	m->objectId.pt.threadId = tid;
	m->name = name;
	m->domain = domain;
}

static void extcorr(struct cbuf *c, CUpti_ExternalCorrelationKind kind, uint64_t ext,
		    uint32_t corr)
{
	CUpti_ActivityExternalCorrelation *e =
		add(c, sizeof *e, CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION);

	e->externalKind = kind;
	e->externalId = ext;
	e->correlationId = corr;
}

/* Buffer 1: device, kernels, copies, markers, an API call. */
static void fill_main(struct cbuf *c, char *gemm_copy)
{
	CUpti_ActivityDevice5 *d = add(c, sizeof *d, CUPTI_ACTIVITY_KIND_DEVICE);
	CUpti_ActivityContext3 *ctx = add(c, sizeof *ctx, CUPTI_ACTIVITY_KIND_CONTEXT);
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
	mc = add(c, sizeof *mc, CUPTI_ACTIVITY_KIND_MEMCPY);
	mc->copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_HTOD;
	mc->srcKind = CUPTI_ACTIVITY_MEMORY_KIND_PINNED;
	mc->dstKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
	mc->bytes = 64ull << 20;
	mc->start = T0 + 2000000;
	mc->end = T0 + 4700000;
	mc->deviceId = 1;
	mc->contextId = 3;
	mc->streamId = 14;
	mc->correlationId = 105;
	ms = add(c, sizeof *ms, CUPTI_ACTIVITY_KIND_MEMSET);
	ms->value = 0;
	ms->bytes = 1u << 20;
	ms->start = T0 + 5000000;
	ms->end = T0 + 5004000;
	ms->deviceId = 1;
	ms->contextId = 3;
	ms->streamId = 7;
	ms->correlationId = 106;
	p2p = add(c, sizeof *p2p, CUPTI_ACTIVITY_KIND_MEMCPY2);
	p2p->copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_PTOP;
	p2p->bytes = 8u << 20;
	p2p->start = T0 + 6000000;
	p2p->end = T0 + 6100000;
	p2p->deviceId = 1;
	p2p->contextId = 3;
	p2p->streamId = 15;
	p2p->srcDeviceId = 1;
	p2p->dstDeviceId = 0;
	p2p->correlationId = 107;
	marker(c, CUPTI_ACTIVITY_FLAG_MARKER_START, 11, T0 + 100, "step", NULL, 4001);
	marker(c, CUPTI_ACTIVITY_FLAG_MARKER_START, 12, T0 + 290000, "ncclAllReduce", "NCCL", 4001);
	marker(c, CUPTI_ACTIVITY_FLAG_MARKER_END, 12, T0 + 299000, NULL, "NCCL", 4001);
	marker(c, CUPTI_ACTIVITY_FLAG_MARKER_INSTANTANEOUS, 13, T0 + 50, "checkpoint", NULL, 4001);
	api = add(c, sizeof *api, CUPTI_ACTIVITY_KIND_RUNTIME);
	api->cbid = 211;
	api->start = T0 + 500;
	api->end = T0 + 900;
	api->processId = 4000;
	api->threadId = 4001;
	api->correlationId = 101;
}

/* Buffer 2, delivered later: the END of "step" and the external ids. */
static void fill_late(struct cbuf *c)
{
	marker(c, CUPTI_ACTIVITY_FLAG_MARKER_END, 11, T0 + 8000000, NULL, NULL, 4001);
	extcorr(c, CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM1, 555, 101);
	extcorr(c, CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, 777, 101);
	extcorr(c, CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, 778, 102);
}

/* ---- the record walk agrees with libcupti's ------------------------------------------ */

Test(cupti_decode, walk_matches_libcupti)
{
	static struct cbuf c, late;
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

struct run_out {
	char db[4096];
	struct cvci_decoder dec;
	cvc_materialize_stats st;
};

static void decode_rank_to_db(const char *dir, const char *base, int rank, struct run_out *o,
			      int64_t win_start, int64_t win_end)
{
	static struct cbuf c, late;
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
	decode_rank_to_db(dir, "cvc-test-1-r3", 3, o, win_start, win_end);
}

static sqlite3 *open_ro(const char *path)
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

static void expect(sqlite3 *sq, const char *sql, const char *want)
{
	char *got = query1(sq, sql);

	cr_expect_str_eq(got, want, "%s", sql);
	free(got);
}

Test(cupti_decode, every_field_stored)
{
	const char *dir = tu_tmpdir();
	struct run_out o;
	sqlite3 *sq;

	decode_to_db(dir, &o, 0, 0);
	cr_expect_eq(o.st.activities, 7);
	cr_expect_eq(o.st.ranges, 4); /* step, ncclAllReduce, checkpoint, the API call */
	cr_expect_eq(o.st.devices, 1);
	cr_expect_eq(o.st.unmatched_markers, 0);
	cr_expect_eq(o.st.lost_records, 5);
	cr_expect_eq(o.dec.skipped, 1); /* the context record */
	sq = open_ro(o.db);
	expect(sq, "SELECT name||'|'||format||'|'||tool_version||'|'||world_size||'|'||gpu_model "
		   "FROM runs", "myrun|cupti|cvc test, CUPTI 130001|8|NVIDIA H100 80GB HBM3");
	/* offset = mean of (realtime - cupti) over the two pairs = (1500 + 2500) / 2 */
	expect(sq, "SELECT rank||'|'||host||'|'||pid||'|'||clock_offset_ns FROM ranks",
	       "3|node07|4003|2000");
	expect(sq, "SELECT rank||'|'||device||'|'||name||'|'||sm_count||'|'||total_mem_bytes||'|'"
		   "||cc_major||'.'||cc_minor||'|'||printf('%.2f',mem_bw_gbps)||'|'||clock_khz "
		   "FROM devices",
	       "3|1|NVIDIA H100 80GB HBM3|132|85020983296|9.0|3352.32|1980000");
	/* The first GEMM: every column, external id resolved from a later buffer. */
	expect(sq, "SELECT a.rank||'|'||device||'|'||kind||'|'||s.value||'|'||start_ns||'|'||end_ns"
		   "||'|'||stream||'|'||context||'|'||correlation||'|'||external_id||'|'||grid_x||'x'"
		   "||grid_y||'x'||grid_z||'|'||block_x||'x'||block_y||'x'||block_z||'|'||registers"
		   "||'|'||shared_mem_bytes||'|'||coalesce(bytes,'NULL')||'|'||coalesce(copy_kind,"
		   "'NULL') FROM activities a JOIN strings s ON s.id=a.name_id WHERE correlation=101",
	       "3|1|1|" "sm90_xmma_gemm_f32f32_tf32f32_f32_nn_n_tilesize128x128x32_warpgroupsize1x1x1_"
	       "execute_segment_k_off_kernel__5x_cublas" "|1763768000000001000|1763768000000251000|"
	       "7|3|101|777|132x2x1|384x1x1|168|230400|NULL|NULL");
	expect(sq, "SELECT s.value||'|'||stream||'|'||external_id||'|'||(end_ns-start_ns) FROM "
		   "activities a JOIN strings s ON s.id=a.name_id WHERE correlation=102",
	       "_Z39ncclDevKernel_AllReduce_Sum_f32_RING_LL24ncclDevKernelArgsStorageILm4096EE"
	       "|13|778|1200000");
	/* Three GEMMs (two pointers) share one interned name; no external id for 103/104. */
	expect(sq, "SELECT count(DISTINCT name_id)||'|'||count(*)||'|'||count(external_id) FROM "
		   "activities WHERE stream=7 AND kind=1", "1|3|1");
	expect(sq, "SELECT kind||'|'||s.value||'|'||bytes||'|'||copy_kind||'|'||stream||'|'||"
		   "(end_ns-start_ns)||'|'||coalesce(grid_x,'NULL') FROM activities a JOIN strings s "
		   "ON s.id=a.name_id WHERE correlation=105",
	       "2|Memcpy HtoD|67108864|1|14|2700000|NULL");
	expect(sq, "SELECT kind||'|'||s.value||'|'||bytes||'|'||stream||'|'||(end_ns-start_ns) "
		   "FROM activities a JOIN strings s ON s.id=a.name_id WHERE correlation=106",
	       "3|Memset|1048576|7|4000");
	expect(sq, "SELECT kind||'|'||s.value||'|'||bytes||'|'||copy_kind FROM activities a JOIN "
		   "strings s ON s.id=a.name_id WHERE correlation=107", "2|Memcpy PtoP|8388608|10");
	/* NVTX: a range paired across buffers, NCCL's domain, an instant marker. */
	expect(sq, "SELECT group_concat(x, ';') FROM (SELECT s.value||'|'||coalesce(domain,'-')||'|'"
		   "||(start_ns-1763768000000000000)||'|'||(end_ns-1763768000000000000)||'|'||tid||'|'"
		   "||device AS x FROM ranges r JOIN strings s ON s.id=r.name_id WHERE kind=3 "
		   "ORDER BY start_ns)",
	       "checkpoint|-|50|50|4001|-1;step|-|100|8000000|4001|-1;"
	       "ncclAllReduce|NCCL|290000|299000|4001|-1");
	expect(sq, "SELECT s.value||'|'||domain||'|'||(end_ns-start_ns)||'|'||tid FROM ranges r "
		   "JOIN strings s ON s.id=r.name_id WHERE kind=1", "runtime cbid 211|cuda-runtime|400|4001");
	expect(sq, "SELECT value FROM run_meta WHERE key='lost_records'", "5");
	expect(sq, "SELECT value FROM run_meta WHERE key='clock_end_cupti_ns'", "1763768000009000000");
	expect(sq, "SELECT (path LIKE '%cvc-test-1-r3.spool')||'|'||format||'|'||rank||'|'||events "
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
	sq = open_ro(o.db);
	expect(sq, "SELECT group_concat(correlation, ',') FROM (SELECT correlation FROM activities "
		   "ORDER BY correlation)", "102,103,104");
	cr_expect_eq(o.dec.filtered, 8);
	/* "step" lost its START to the window: an END alone is counted, not stored. */
	cr_expect_eq(o.st.unmatched_markers, 0);
	expect(sq, "SELECT count(*) FROM ranges", "1");
	sqlite3_close(sq);
}

/*
 * Records CUPTI could not time (start = end = 0; issue 19 item 7) are
 * skipped and counted, not stored at t = 0 where they would stretch every
 * breakdown back to the epoch.
 */
Test(cupti_decode, untimed_records_are_counted_not_stored)
{
	static struct cbuf c;
	const char *dir = tu_tmpdir();
	char spool[4096], db[4096], err[512];
	struct cvci_decoder d;
	cvc_materialize_stats st;
	cvc_spool *sp = NULL;
	sqlite3 *sq;

	c.used = 0;
	kernel(&c, gemm_name, T0 + 1000, 500, 7, 1);
	kernel(&c, gemm_name, 0, 0, 7, 2);                /* not timed */
	kernel(&c, nccl_name, T0 + 3000, 0, 20, 3)->end = T0 + 2000; /* end before start */
	snprintf(spool, sizeof spool, "%s/u.spool", dir);
	snprintf(db, sizeof db, "%s/u.db", dir);
	cr_assert_eq(cvc_spool_open(spool, 1u << 16, &sp), CVC_OK);
	cr_assert_eq(cvci_decoder_init(&d, sp), CVC_OK);
	cvci_put_proc(&d, 0, 1, 4000, "node07", "untimed", "cvc test");
	cvci_decode(&d, c.b, c.used);
	cr_expect_eq(d.untimed, 2);
	cr_expect_eq(d.records, 1);
	cr_assert_eq(cvc_spool_close(sp), CVC_OK);
	cvci_decoder_release(&d);
	cr_assert_eq(cvc_profile_materialize(spool, db, &st, err, sizeof err), CVC_OK, "%s", err);
	sq = open_ro(db);
	expect(sq, "SELECT count(*) || '|' || min(start_ns) FROM activities", "1|1763768000000001000");
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
	static struct cbuf c;
	const char *dir = tu_tmpdir();
	char spool[4096], cmd[8192], want[64], *err = NULL;
	struct cvci_decoder d;
	cvc_spool *sp = NULL;
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
	c.used = 0;
	api = add(&c, sizeof *api, CUPTI_ACTIVITY_KIND_DRIVER);
	api->start = T0 + 100;
	api->end = T0 + 200;
	api->correlationId = 7;
	extcorr(&c, CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM2, 42, 7);
	kernel(&c, nccl_name, T0 + 1000, 500, 20, 7);
	snprintf(spool, sizeof spool, "%s/a.spool", dir);
	cr_assert_eq(cvc_spool_open(spool, 1u << 16, &sp), CVC_OK);
	cr_assert_eq(cvci_decoder_init(&d, sp), CVC_OK);
	d.api_drop = 3;
	cvci_put_proc(&d, 0, 1, 4000, "node07", "api", "cvc test");
	cr_expect_eq(cvci_decode(&d, c.b, c.used), 3);
	cr_expect_eq(d.records, 2, "the external id and the kernel");
	cr_expect_eq(d.skipped, 1, "the API record");
	cr_assert_eq(cvc_spool_close(sp), CVC_OK);
	cvci_decoder_release(&d);
}

Test(cupti_decode, unknown_kind_stops_walk)
{
	const char *dir = tu_tmpdir();
	static struct cbuf c;
	struct cvci_decoder d;
	cvc_spool *sp = NULL;
	char spool[4096];

	c.used = 0;
	kernel(&c, nccl_name, T0, 10, 1, 1);
	add(&c, 64, CUPTI_ACTIVITY_KIND_PC_SAMPLING); /* a kind we never enable */
	kernel(&c, nccl_name, T0 + 20, 10, 1, 2);
	snprintf(spool, sizeof spool, "%s/x.spool", dir);
	cr_assert_eq(cvc_spool_open(spool, 1u << 16, &sp), CVC_OK);
	cr_assert_eq(cvci_decoder_init(&d, sp), CVC_OK);
	cr_expect_eq(cvci_decode(&d, c.b, c.used), 1);
	cr_expect_eq(d.undecodable, 1);
	/* A record cut by valid size is not read past the end either. */
	cr_expect_eq(cvci_decode(&d, c.b, sizeof(CUpti_ActivityKernel10) - 8), 0);
	cr_expect_eq(d.undecodable, 2);
	cvci_decoder_release(&d);
	cvc_spool_close(sp);
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
	const char *dir = tu_tmpdir();
	static struct cbuf c;
	struct cvci_decoder d;
	cvc_spool *sp = NULL;
	char spool[4096];
	CUpti_ActivityOverhead3 *o;

	c.used = 0;
	kernel(&c, nccl_name, T0, 10, 1, 1);
	o = add(&c, sizeof *o, CUPTI_ACTIVITY_KIND_OVERHEAD);
	o->overheadKind = CUPTI_ACTIVITY_OVERHEAD_CUPTI_BUFFER_FLUSH;
	o->start = T0 + 5;
	o->end = T0 + 6;
	kernel(&c, gemm_name, T0 + 20, 10, 7, 2);
	snprintf(spool, sizeof spool, "%s/o.spool", dir);
	cr_assert_eq(cvc_spool_open(spool, 1u << 16, &sp), CVC_OK);
	cr_assert_eq(cvci_decoder_init(&d, sp), CVC_OK);
	cr_expect_eq(cvci_decode(&d, c.b, c.used), 3);
	cr_expect_eq(d.records, 2, "both kernels");
	cr_expect_eq(d.skipped, 1, "the overhead record");
	cr_expect_eq(d.undecodable, 0);
	cvci_decoder_release(&d);
	cvc_spool_close(sp);
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
		static struct cbuf c;
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
		sqlite3 *sq = open_ro(db2);

		expect(sq, "SELECT CAST(value AS INTEGER) > 0 FROM run_meta WHERE "
			   "key='spool_truncated_bytes'", "1");
		expect(sq, "SELECT rank FROM ranks", "0"); /* unknown rank stored as 0 */
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

/* ---- the injection library and `cvc profile` --------------------------------------------- */

Test(cupti_decode, inject_exports_only_entry_points)
{
	void *h = dlopen(CVC_INJECT_LIB, RTLD_NOW | RTLD_LOCAL);

	cr_assert(h, "dlopen: %s", dlerror());
	cr_expect(dlsym(h, "InitializeInjection"));
	cr_expect_null(dlsym(h, "cvc_db_open"), "libcvc symbols leak from the injection library");
	cr_expect_null(dlsym(h, "cvci_decode"));
	dlclose(h);
}

Test(cupti_decode, profile_without_driver_passes_status)
{
	char dir[2048], args[8192], *out = NULL, *err = NULL;
	void *drv = dlopen("libcuda.so.1", RTLD_LAZY);
	int rc;

	snprintf(dir, sizeof dir, "%s", tu_tmpdir());
	snprintf(args, sizeof args, "profile -o '%s/out' -- '%s'", dir, CVC_CUDA_EXIT7);
	rc = tu_cvc(args, &out, &err);
	cr_expect_eq(rc, 7, "exit %d, stderr: %s", rc, err);
	if (!drv) {
		cr_expect_str_eq(err, "cvc: no CUDA driver: libcuda.so.1 not found; nothing recorded\n");
	} else {
		/* With a driver the program is profiled: one database, no spool left. */
		dlclose(drv);
		cr_expect(strstr(err, "cvc: 1 process(es) recorded"), "%s", err);
	}
	cr_expect(strstr(out, "cudaFree(0)"), "%s", out);
	free(out);
	free(err);
	/* A program that cannot be started: 127, like a shell. */
	snprintf(args, sizeof args, "profile -o '%s/out2' -- '%s/no-such-program'", dir, dir);
	rc = tu_cvc(args, NULL, &err);
	cr_expect_eq(rc, 127);
	cr_expect(strstr(err, "cannot run"), "%s", err);
	free(err);
}

/* ---- the injection library's own life: start, flush at exit or signal --------------- */

/* The one .db in dir (asserts there is exactly one and no spool left). */
static const char *only_db(const char *dir, const char *must_contain)
{
	static char path[8192];
	char cmd[4600], *out = NULL;

	snprintf(cmd, sizeof cmd, "ls '%s'", dir);
	cr_assert_eq(tu_run(cmd, &out, NULL), 0);
	cr_assert_eq(tu_count_lines(out), 1, "want one file, got:\n%s", out);
	cr_assert(strstr(out, ".db\n") && strstr(out, must_contain), "%s", out);
	out[strlen(out) - 1] = '\0';
	snprintf(path, sizeof path, "%s/%s", dir, out);
	free(out);
	return path;
}

static void harness(const char *how, int want_rc)
{
	char dir[2048];
	char cmd[8192], *err = NULL;
	sqlite3 *sq;
	int rc;

	snprintf(dir, sizeof dir, "%s", tu_tmpdir()); /* tu_run reuses tu_tmpdir's buffer */
	snprintf(cmd, sizeof cmd,
		 "env -u CVC_PROFILE_PARENT CVC_PROFILE_DIR='%s' RANK=5 '%s' '%s' %s", dir,
		 CVC_INJECT_HARNESS, CVC_INJECT_LIB, how);
	rc = tu_run(cmd, NULL, &err);
	cr_expect_eq(rc, want_rc, "exit %d: %s", rc, err);
	sq = open_ro(only_db(dir, "-r5.db"));
	expect(sq, "SELECT format||'|'||name FROM runs", "cupti|profile");
	expect(sq, "SELECT rank FROM ranks", "5");
	expect(sq, "SELECT value FROM run_meta WHERE key='lost_records'", "0");
	/* Clock pairs at start and end, the end after the start. */
	expect(sq, "SELECT (SELECT CAST(value AS INTEGER) FROM run_meta WHERE key='clock_end_cupti_ns')"
		   " > (SELECT CAST(value AS INTEGER) FROM run_meta WHERE key='clock_start_cupti_ns')",
	       "1");
	sqlite3_close(sq);
	free(err);
}

Test(cupti_decode, inject_flushes_at_exit)
{
	harness("exit", 3);
}

Test(cupti_decode, inject_flushes_on_sigterm_then_dies_of_it)
{
	harness("term", 128 + 15);
}

Test(cupti_decode, inject_flushes_on_sigint_then_dies_of_it)
{
	harness("int", 128 + 2);
}

/*
 * A rank killed outright (SIGKILL: no atexit, no handler) after CUPTI handed
 * over N kernels keeps them: the writer flushes its spool after a flush
 * period of idleness, and `cvc profile --materialize` turns the leftover
 * spool into a database with all N (issue 19 item 3; before, the records
 * sat in the 1 MiB spool buffer and the spool held only its header).
 */
Test(cupti_decode, sigkill_keeps_records_older_than_the_flush_period)
{
	char dir[2048], cmd[8192], *err = NULL, *out = NULL;
	sqlite3 *sq;
	int rc;

	snprintf(dir, sizeof dir, "%s", tu_tmpdir());
	snprintf(cmd, sizeof cmd,
		 "env -u CVC_PROFILE_PARENT CVC_PROFILE_DIR='%s' CVC_PROFILE_FLUSH_MS=500 RANK=5 "
		 "'%s' '%s' feedkill 64", dir, CVC_INJECT_HARNESS, CVC_INJECT_LIB);
	rc = tu_run(cmd, &out, &err);
	cr_assert_eq(rc, 128 + SIGKILL, "exit %d: %s", rc, err);
	cr_assert(strstr(out, "fed 64 kernels"), "%s", out);
	free(out);
	free(err);
	snprintf(cmd, sizeof cmd, "profile --materialize '%s'", dir);
	rc = tu_cvc(cmd, NULL, &err);
	cr_assert_eq(rc, 0, "materialize: exit %d: %s", rc, err);
	free(err);
	sq = open_ro(only_db(dir, "-r5.db"));
	expect(sq, "SELECT count(*) FROM activities WHERE kind = 1", "64");
	expect(sq, "SELECT value FROM run_meta WHERE key = 'flush_period_ms'", "500");
	sqlite3_close(sq);
}

/* Runs the harness with env prefix pre; returns the database; stderr in *err. */
static const char *harness_env(const char *pre, const char *how, int want_rc, char **err)
{
	static char dir[2048];
	char cmd[8192];
	int rc;

	snprintf(dir, sizeof dir, "%s", tu_tmpdir());
	snprintf(cmd, sizeof cmd, "env -u CVC_PROFILE_PARENT %s CVC_PROFILE_DIR='%s' RANK=5 "
		 "'%s' '%s' %s", pre, dir, CVC_INJECT_HARNESS, CVC_INJECT_LIB, how);
	rc = tu_run(cmd, NULL, err);
	cr_expect_eq(rc, want_rc, "exit %d: %s", rc, *err);
	return only_db(dir, "-r5.db");
}

/*
 * Another CUPTI client (issue 19 item 2): CUPTI's answer to cuptiSubscribe
 * when Nsight Systems or a profiler that subscribed first holds it, and
 * activity kinds CUPTI refuses, are said once on stderr, stored in run_meta,
 * and `cvc analyze` warns about the run.  (Played by the harness's own
 * cuptiSubscribe / cuptiActivityEnable; without a driver the real ones
 * cannot say MULTIPLE_SUBSCRIBERS.)  Before, cvc never subscribed and
 * ignored every enable: an empty database and "0 lost records".
 */
Test(cupti_decode, another_cupti_client_is_said_and_recorded)
{
	char *err = NULL, *aerr = NULL, cmd[9000], db[8192];
	sqlite3 *sq;

	snprintf(db, sizeof db, "%s", harness_env("HARNESS_SUBSCRIBE=busy", "exit", 3, &err));
	cr_expect(strstr(err, "another CUPTI client is attached"), "%s", err);
	sq = open_ro(db);
	expect(sq, "SELECT value FROM run_meta WHERE key='cupti_subscribe_result'", "39");
	expect(sq, "SELECT count(*) FROM activities", "0");
	sqlite3_close(sq);
	snprintf(cmd, sizeof cmd, "analyze --db '%s'", db);
	tu_cvc(cmd, NULL, &aerr);
	cr_expect(strstr(aerr, "another CUPTI client held CUPTI"), "%s", aerr);
	free(err);
	free(aerr);

	snprintf(db, sizeof db, "%s",
		 harness_env("HARNESS_SUBSCRIBE=ok HARNESS_ENABLE=fail", "exit", 3, &err));
	cr_expect(strstr(err, "CUPTI refused activity kind"), "%s", err);
	cr_expect_eq(tu_count_lines(err), 1, "said once: %s", err);
	sq = open_ro(db);
	expect(sq, "SELECT CAST(value AS INTEGER) > 0 FROM run_meta "
		   "WHERE key='activity_enable_failures'", "1");
	sqlite3_close(sq);
	snprintf(cmd, sizeof cmd, "analyze --db '%s'", db);
	tu_cvc(cmd, NULL, &aerr);
	cr_expect(strstr(aerr, "activity kind(s): their records are missing"), "%s", aerr);
	free(err);
	free(aerr);
}

/*
 * Forked children (issue 19 item 6) inherit the library but not its
 * threads: one leaving through exit() and one through SIGTERM must neither
 * hang (the handler once waited 10 s for a finisher the child does not
 * have; atexit joined a writer thread that is not there) nor write into the
 * parent's spool.  The parent's database comes out whole.
 */
Test(cupti_decode, forked_children_leave_the_parent_spool_alone, .timeout = 60)
{
	char *err = NULL, *out = NULL, dir[2048], cmd[8192];
	struct timespec t0, t1;
	double secs;
	sqlite3 *sq;
	int rc;

	snprintf(dir, sizeof dir, "%s", tu_tmpdir());
	snprintf(cmd, sizeof cmd, "env -u CVC_PROFILE_PARENT CVC_PROFILE_DIR='%s' RANK=5 '%s' '%s' fork",
		 dir, CVC_INJECT_HARNESS, CVC_INJECT_LIB);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	rc = tu_run(cmd, &out, &err);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	secs = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	cr_expect_eq(rc, 3, "exit %d: %s", rc, err);
	cr_expect(strstr(out, "children 0 143"), "%s", out);
	cr_expect_lt(secs, 5.0, "took %.1f s: a child waited for threads it does not have", secs);
	sq = open_ro(only_db(dir, "-r5.db"));
	expect(sq, "SELECT value FROM run_meta WHERE key='lost_records'", "0");
	expect(sq, "SELECT count(*) FROM ranks", "1");
	sqlite3_close(sq);
	free(out);
	free(err);
}

/*
 * The libcupti in the process must have the major.minor the records are
 * cast for (issue 19 item 4): a 13.2 (record layouts changed) is refused in
 * one line, the program's exit status kept; a patch level (13.0.9) is not.
 */
Test(cupti_decode, libcupti_of_another_minor_version_is_refused)
{
	char dir[2048], cmd[8192], *err = NULL;
	int rc;

	snprintf(dir, sizeof dir, "%s", tu_tmpdir());
	snprintf(cmd, sizeof cmd, "env -u CVC_PROFILE_PARENT HARNESS_CUPTI_VERSION=%u "
		 "CVC_PROFILE_DIR='%s' '%s' '%s' exit", (unsigned)(CUPTI_API_VERSION / 100 + 2) * 100,
		 dir, CVC_INJECT_HARNESS, CVC_INJECT_LIB);
	rc = tu_run(cmd, NULL, &err);
	cr_expect_eq(rc, 3, "exit %d: %s", rc, err);
	cr_expect(strstr(err, "record layouts differ, nothing recorded"), "%s", err);
	cr_expect_eq(tu_count_lines(err), 1, "%s", err);
	free(err);
	snprintf(cmd, sizeof cmd, "env -u CVC_PROFILE_PARENT HARNESS_CUPTI_VERSION=%u "
		 "CVC_PROFILE_DIR='%s' RANK=5 '%s' '%s' exit", (unsigned)(CUPTI_API_VERSION / 100) * 100 + 9,
		 dir, CVC_INJECT_HARNESS, CVC_INJECT_LIB);
	rc = tu_run(cmd, NULL, &err);
	cr_expect_eq(rc, 3, "exit %d: %s", rc, err);
	cr_expect(!strstr(err, "record layouts differ"), "a patch level was refused: %s", err);
	free(err);
	only_db(dir, "-r5.db");
}

/*
 * Ranks at import (issue 19 item 5): two processes run without a rank
 * (numbered afresh, no longer both rank 0), two that inherited RANK=5 (the
 * second, whose rank only the environment gave, is renumbered and counted),
 * and one whose NCCL communicator says rank 3 of 8 while its environment
 * says 5 (NCCL's wins).  Before: "rank 0 is already in run" / "rank 5 ...".
 */
Test(cupti_decode, ranks_from_nccl_env_or_none_do_not_collide)
{
	char dir[2048], cmd[8192], db[4200], *err = NULL;
	static const char *const runs[] = {"", "", "RANK=5", "RANK=5"};
	sqlite3 *sq;
	int rc;

	snprintf(dir, sizeof dir, "%s", tu_tmpdir());
	for (size_t i = 0; i < sizeof runs / sizeof runs[0]; i++) {
		snprintf(cmd, sizeof cmd, "env -u CVC_PROFILE_PARENT -u RANK %s CVC_PROFILE_DIR='%s' "
			 "'%s' '%s' exit", runs[i], dir, CVC_INJECT_HARNESS, CVC_INJECT_LIB);
		cr_assert_eq(tu_run(cmd, NULL, NULL), 3);
	}
	snprintf(cmd, sizeof cmd, "env -u CVC_PROFILE_PARENT RANK=5 CVC_PROFILE_DIR='%s' "
		 "'%s' '%s' nccl", dir, CVC_INJECT_HARNESS, CVC_INJECT_LIB);
	cr_assert_eq(tu_run(cmd, NULL, NULL), 3);
	snprintf(db, sizeof db, "%s/merged.sqlite3", tu_tmpdir());
	snprintf(cmd, sizeof cmd, "import --db '%s' --run job '%s'", db, dir);
	rc = tu_cvc(cmd, NULL, &err);
	cr_assert_eq(rc, 0, "import: exit %d: %s", rc, err);
	free(err);
	sq = open_ro(db);
	expect(sq, "SELECT count(*) FROM ranks", "5");
	expect(sq, "SELECT count(*) FROM ranks WHERE rank IN (3, 5)", "2");
	expect(sq, "SELECT value FROM run_meta WHERE key='import.ranks_renumbered'", "1");
	expect(sq, "SELECT count(*) FROM run_meta WHERE key LIKE 'rank.%'", "0");
	sqlite3_close(sq);
}

/*
 * NVTX_INJECTION64_PATH is the libcupti the injection library loads where
 * the program runs (issue 19 item 8): with LD_LIBRARY_PATH pointing at
 * another copy (as on a machine whose toolkit is not where cvc was built),
 * the profiled program is told that copy, not the build machine's path.
 */
Test(cupti_decode, nvtx_injection_is_the_libcupti_the_library_loads)
{
	char dir[2048], cmd[8192], want[4200], *out = NULL;
	uint32_t ver = 0;

	snprintf(dir, sizeof dir, "%s", tu_tmpdir());
	cr_assert_eq(cuptiGetVersion(&ver), CUPTI_SUCCESS);
	/* this libcupti again, by its soname, in a directory of its own */
	snprintf(cmd, sizeof cmd, "ln -s \"$(ldd '%s' | awk '/libcupti/ {print $3}')\" '%s/' && "
		 "ls '%s' | grep '^libcupti'", CVC_INJECT_LIB, dir, dir);
	cr_assert_eq(tu_run(cmd, &out, NULL), 0, "cannot copy libcupti");
	out[strcspn(out, "\n")] = '\0';
	snprintf(want, sizeof want, "NVTX=%s/%s\n", dir, out);
	free(out);
	snprintf(cmd, sizeof cmd, "LD_LIBRARY_PATH='%s' CVC_INJECT_LIB='%s' '%s' profile -o '%s/out' "
		 "-- sh -c 'echo \"NVTX=$NVTX_INJECTION64_PATH\"'", dir, CVC_INJECT_LIB, CVC_TOOL,
		 dir);
	cr_assert_eq(tu_run(cmd, &out, NULL), 0);
	cr_expect_str_eq(out, want);
	free(out);
}

/* `cvc profile` materializes its descendants' spools: children are profiled too. */
Test(cupti_decode, profile_materializes_children)
{
	char dir[2048], args[8192], *err = NULL, *out = NULL;
	int rc;

	snprintf(dir, sizeof dir, "%s", tu_tmpdir());
	snprintf(args, sizeof args,
		 "profile -o '%s/out' --run job1 -- sh -c \"'%s' '%s' && exit 9 || '%s' '%s'\"",
		 dir, CVC_INJECT_HARNESS, CVC_INJECT_LIB, CVC_INJECT_HARNESS, CVC_INJECT_LIB);
	{
		char cmd[9000];

		snprintf(cmd, sizeof cmd, "CVC_INJECT_LIB='%s' '%s' %s", CVC_INJECT_LIB, CVC_TOOL, args);
		rc = tu_run(cmd, &out, &err);
	}
	/* The first harness exits 3, so the shell runs the second, whose 3 is passed through. */
	cr_expect_eq(rc, 3, "exit %d: %s", rc, err);
	cr_expect(strstr(err, "cvc: 2 process(es) recorded: 0 activities"), "%s", err);
	cr_expect_eq(tu_count_lines(err), 1, "%s", err);
	snprintf(args, sizeof args, "ls '%s/out' | grep -c '^cvc-.*-r-\\.db$'", dir);
	free(out);
	rc = tu_run(args, &out, NULL);
	cr_expect_str_eq(out, "2\n");
	free(out);
	free(err);
}

/* ---- `cvc analyze` reads a profiled run like an imported one ------------------------ */

static char *first_line(char *s)
{
	char *nl = s ? strchr(s, '\n') : NULL;

	if (nl)
		*nl = '\0';
	return s;
}

Test(cupti_decode, profiled_db_analyzes_like_imported_traces)
{
	char dir[2048], cmd[8192], *out = NULL, *err = NULL, *kin = NULL;
	const char *trace = tu_shared("traces/hta-trace-diff-v100-w2/test.json.gz");
	char tracebuf[4096];
	struct run_out o;
	int rc;

	snprintf(tracebuf, sizeof tracebuf, "%s", trace);
	snprintf(dir, sizeof dir, "%s", tu_tmpdir());
	snprintf(cmd, sizeof cmd, "%s/out", dir);
	cr_assert_eq(mkdir(cmd, 0755), 0);
	decode_rank_to_db(cmd, "cvc-node07-4000-r0", 0, &o, 0, 0);
	decode_rank_to_db(cmd, "cvc-node07-4001-r1", 1, &o, 0, 0);
	/* The per-rank databases merge into one run with `cvc import DIR`. */
	snprintf(cmd, sizeof cmd, "import --db '%s/p.db' --run prof '%s/out'", dir, dir);
	rc = tu_cvc(cmd, NULL, &err);
	cr_assert_eq(rc, 0, "import: %s", err);
	free(err);
	snprintf(cmd, sizeof cmd, "analyze --db '%s/p.db' --format csv", dir);
	rc = tu_cvc(cmd, &out, &err);
	cr_assert_eq(rc, 0, "analyze: %s", err);
	cr_expect_eq(tu_count_lines(out), 3, "header + one row per rank:\n%s", out);
	free(err);
	snprintf(cmd, sizeof cmd, "import --db '%s/k.db' '%s'", dir, tracebuf);
	rc = tu_cvc(cmd, NULL, &err);
	cr_assert_eq(rc, 0, "import kineto: %s", err);
	free(err);
	snprintf(cmd, sizeof cmd, "analyze --db '%s/k.db' --format csv", dir);
	rc = tu_cvc(cmd, &kin, &err);
	cr_assert_eq(rc, 0, "analyze kineto: %s", err);
	cr_expect_str_eq(first_line(out), first_line(kin));
	free(out);
	free(kin);
	free(err);
}

/* ---- NCCL profiler plugin: sizes of the calls a kernel launch carries ---------------- */

/* Appends one raw spool record (the writer's framing) to the file at path. */
static void append_rec(const char *path, uint32_t type, const void *p, uint32_t len)
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

Test(cupti_decode, nccl_plugin_sizes_join_kernels)
{
	char dir[2048], cmd[8192], spool[4096], db[4200], err[512], *out = NULL;
	cvc_materialize_stats st;
	int rc;

	snprintf(dir, sizeof dir, "%s", tu_tmpdir());
	/* A parent is named, so the process leaves its spool for us to extend. */
	snprintf(cmd, sizeof cmd, "CVC_PROFILE_PARENT=42 CVC_PROFILE_DIR='%s' RANK=0 '%s' '%s' nccl",
		 dir, CVC_INJECT_HARNESS, CVC_INJECT_LIB);
	rc = tu_run(cmd, &out, NULL);
	cr_assert_eq(rc, 3, "%s", out);
	cr_expect(strstr(out, "mask 0xf00"), "%s", out);
	free(out);
	snprintf(cmd, sizeof cmd, "ls '%s'/*.p42.spool", dir);
	cr_assert_eq(tu_run(cmd, &out, NULL), 0);
	out[strcspn(out, "\n")] = '\0';
	snprintf(spool, sizeof spool, "%s", out);
	free(out);
	/*
	 * What CUPTI would add on a GPU: the two NCCL kernels, and the launch ids
	 * (1 and 2, in launch order) the plugin pushed as CUSTOM2 around them.
	 */
	{
		struct cvc_spool_act k;
		struct cvc_spool_extcorr e;
		uint32_t sid = 1000;
		char str[4 + sizeof nccl_name];

		memcpy(str, &sid, 4);
		memcpy(str + 4, nccl_name, sizeof nccl_name - 1);
		append_rec(spool, CVC_SPOOL_STR, str, (uint32_t)(4 + sizeof nccl_name - 1));
		for (uint32_t i = 0; i < 2; i++) {
			memset(&k, 0, sizeof k);
			k.kind = 1;
			k.start_ns = T0 + 1000 * i;
			k.end_ns = T0 + 1000 * i + 500;
			k.stream = 13;
			k.correlation = 500 + i;
			k.name_sid = sid;
			append_rec(spool, CVC_SPOOL_ACT, &k, sizeof k);
			e.correlation = 500 + i;
			e.ext_kind = CVC_EXTCORR_NCCL_LAUNCH;
			e.external_id = 1 + i;
			append_rec(spool, CVC_SPOOL_EXTCORR, &e, sizeof e);
		}
	}
	snprintf(db, sizeof db, "%s/nccl.db", dir);
	cr_assert_eq(cvc_profile_materialize(spool, db, &st, err, sizeof err), CVC_OK, "%s", err);
	cr_expect_eq(st.collectives, 2);
	{
		sqlite3 *sq = open_ro(db);

		/* comm a: 1048576 f32 + 1024 bf16 fused in one launch; comm b: a
		 * broadcast of uint8, which NCCL names "Unknown" (issue 19 item 8:
		 * once -1 bytes) */
		expect(sq, "SELECT group_concat(x, ';') FROM (SELECT a.correlation||'|'||coll||'|'||"
			   "dtype||'|'||in_nelems||'|'||c.bytes||'|'||group_size||'|'||coalesce(root,'-')"
			   " AS x FROM collectives c JOIN activities a ON a.id=c.activity_id "
			   "ORDER BY a.correlation)",
		       "500|AllReduce|ncclFloat32|1049600|4196352|8|-;"
		       "501|Broadcast|ncclUint8|4096|4096|8|3");
		expect(sq, "SELECT value FROM run_meta WHERE key='nccl_launches_unjoined'", "0");
		expect(sq, "SELECT value FROM run_meta WHERE key='lost_records'", "0");
		/* the broadcast was captured into a CUDA graph: its replays
		 * would carry no size, and analyze says so (issue 19 item 8) */
		expect(sq, "SELECT value FROM run_meta WHERE key='nccl_graph_captured_calls'", "1");
		sqlite3_close(sq);
	}
	{
		char args[4300], *aerr = NULL;

		snprintf(args, sizeof args, "analyze --db '%s'", db);
		tu_cvc(args, NULL, &aerr);
		cr_expect(strstr(aerr, "1 NCCL call(s) were captured into CUDA graphs: replays carry no sizes"), "%s", aerr);
		free(aerr);
	}
}

/* ---- a full disk costs records, never the program ------------------------------------ */

Test(cupti_decode, disk_full_drops_whole_buffers)
{
	char dir[2048], spool[4096], db[4200], err[512];
	static struct cbuf c;
	struct cvci_decoder d;
	struct rlimit old, lim;
	cvc_spool *sp = NULL;
	cvc_materialize_stats st;
	struct stat sb;
	int64_t lost;

	snprintf(dir, sizeof dir, "%s", tu_tmpdir());
	snprintf(spool, sizeof spool, "%s/full.spool", dir);
	snprintf(db, sizeof db, "%s/full.db", dir);
	c.used = 0;
	for (int i = 0; i < 200; i++)
		kernel(&c, nccl_name, T0 + 1000 * (uint64_t)i, 500, 13, 1 + (uint32_t)i);
	/* A file size limit plays the full disk: writes past it fail (EFBIG). */
	signal(SIGXFSZ, SIG_IGN);
	cr_assert_eq(getrlimit(RLIMIT_FSIZE, &old), 0);
	lim = old;
	lim.rlim_cur = 64 << 10;
	cr_assert_eq(setrlimit(RLIMIT_FSIZE, &lim), 0);
	cr_assert_eq(cvc_spool_open(spool, 64 << 10, &sp), CVC_OK);
	cr_assert_eq(cvci_decoder_init(&d, sp), CVC_OK);
	cvci_put_proc(&d, 0, 1, 1, "h", "r", "t");
	for (int rep = 0; rep < 20; rep++)
		cr_assert_eq(cvci_decode(&d, c.b, c.used), 200);
	lost = cvc_spool_lost(sp);
	cr_expect_eq(cvc_spool_close(sp), CVC_ERR_IO); /* the last flush failed too */
	cvci_decoder_release(&d);
	cr_assert_eq(setrlimit(RLIMIT_FSIZE, &old), 0);
	cr_expect_gt(lost, 0);
	cr_assert_eq(stat(spool, &sb), 0);
	cr_expect_leq(sb.st_size, 64 << 10);
	/* What was kept ends on a whole record: nothing truncated, no error. */
	cr_assert_eq(cvc_profile_materialize(spool, db, &st, err, sizeof err), CVC_OK, "%s", err);
	cr_expect_gt(st.activities, 0);
	cr_expect_lt(st.activities, 4000);
	{
		sqlite3 *sq = open_ro(db);

		expect(sq, "SELECT count(*) FROM run_meta WHERE key='spool_truncated_bytes'", "0");
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
	const char *dir = tu_tmpdir();
	static struct cbuf c;
	struct cvci_decoder d;
	cvc_spool *sp = NULL;
	cvc_materialize_stats st;
	char spool[4096], db[4200], err[512];

	c.used = 0;
	marker(&c, CUPTI_ACTIVITY_FLAG_MARKER_START, 21, T0 + 10, NULL, NULL, 4001);
	marker(&c, CUPTI_ACTIVITY_FLAG_MARKER_END, 21, T0 + 30, NULL, NULL, 4001);
	marker(&c, CUPTI_ACTIVITY_FLAG_MARKER_START, 22, T0 + 40, NULL, "NCCL", 4001);
	marker(&c, CUPTI_ACTIVITY_FLAG_MARKER_END, 22, T0 + 90, "named at the end", NULL, 4001);
	marker(&c, CUPTI_ACTIVITY_FLAG_MARKER_INSTANTANEOUS, 23, T0 + 95, NULL, NULL, 4001);
	snprintf(spool, sizeof spool, "%s/nameless.spool", dir);
	snprintf(db, sizeof db, "%s/nameless.db", dir);
	cr_assert_eq(cvc_spool_open(spool, 1u << 16, &sp), CVC_OK);
	cr_assert_eq(cvci_decoder_init(&d, sp), CVC_OK);
	cvci_put_proc(&d, 0, 1, 4000, "node07", "myrun", "t");
	cr_assert_eq(cvci_decode(&d, c.b, c.used), 5);
	cr_assert_eq(cvc_spool_close(sp), CVC_OK);
	cvci_decoder_release(&d);
	cr_assert_eq(cvc_profile_materialize(spool, db, &st, err, sizeof err), CVC_OK, "%s", err);
	cr_expect_eq(st.ranges, 3);
	cr_expect_eq(st.unmatched_markers, 0);
	{
		sqlite3 *sq = open_ro(db);

		expect(sq, "SELECT group_concat(x, ';') FROM (SELECT s.value||'|'||coalesce(domain,'-')"
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

		data = tu_read(spool, &len);
		cr_assert(data);
		memset(&mk, 0, sizeof mk);
		mk.flags = CVC_MARK_START;
		mk.id = 30;
		mk.ts_ns = T0;
		mk.domain_sid = 999;
		append_rec(spool, CVC_SPOOL_MARKER, &mk, sizeof mk);
		unlink(db);
		cr_expect_eq(cvc_profile_materialize(spool, db, &st, err, sizeof err), CVC_ERR_FORMAT);
		snprintf(want, sizeof want, "byte %zu: expected a defined NVTX domain string",
			 len + 8 + offsetof(struct cvc_spool_marker, domain_sid));
		cr_expect(strstr(err, want), "want '%s' in: %s", want, err);
		cr_expect_neq(access(db, F_OK), 0);
		free(data);
	}
}
