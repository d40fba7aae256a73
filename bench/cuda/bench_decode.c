/*
 * bench_decode.c - CPU cost of the profiler's per-record path: decoding
 * CUPTI records (real CUDA 13 structs, packed as CUPTI delivers them) and
 * storing them in the spool file, on one core, for a million records.
 *
 * Baselines measured in the same run on the same bytes:
 *   memcpy  - copying the CUPTI buffers (the least any consumer must do)
 *   sqlite  - inserting the same rows straight into a cvc database
 *             (cvc_db_activity_add in one transaction), i.e. what the
 *             writer thread would pay without the spool
 * and the materialize step (spool -> cvc database), which runs after the
 * program has exited.
 *
 *   bench_decode [N_RECORDS] [DIR]     (defaults 1000000 and /tmp)
 * Exit status 1 when decode+spool exceeds 150 ns/record.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cupti.h>

#include "cvc/cvc_db.h"
#include "cvc/cvc_profile.h"
#include "decode.h"

#define BUF_BYTES (4u << 20) /* one pool buffer, as in libcvc_inject.so */
#define NNAMES 48

static double cpu_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

struct bufs {
	uint8_t **b;
	size_t *valid;
	size_t n;
	size_t records;
	size_t bytes;
};

static char names[NNAMES][160];

/* Record mix of a training step: kernels dominate, then NVTX, copies, ext ids. */
static void *next_slot(struct bufs *B, size_t sz)
{
	uint8_t *p;

	if (B->n == 0 || B->valid[B->n - 1] + sz > BUF_BYTES) {
		B->b[B->n] = aligned_alloc(8, BUF_BYTES);
		if (!B->b[B->n]) {
			fputs("error: out of memory\n", stderr);
			exit(1);
		}
		B->valid[B->n++] = 0;
	}
	p = B->b[B->n - 1] + B->valid[B->n - 1];
	B->valid[B->n - 1] += sz;
	B->bytes += sz;
	memset(p, 0, sz);
	return p;
}

static void build(struct bufs *B, size_t nrec)
{
	uint64_t t = 1763768000000000000ull;
	uint32_t corr = 1;

	B->b = calloc(nrec / 1000 + 16, sizeof *B->b);
	B->valid = calloc(nrec / 1000 + 16, sizeof *B->valid);
	for (int i = 0; i < NNAMES; i++)
		snprintf(names[i], sizeof names[i],
			 i == 0 ? "_Z39ncclDevKernel_AllReduce_Sum_bf16_RING_LL24ncclDevKernelArgsStorageILm4096EE"
				: "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x%dx64_warpgroupsize2x1x1_execute_segment_k_off_kernel__5x_cublas",
			 64 + i);
	for (size_t i = 0; i < nrec; i++, t += 1500) {
		unsigned r = (unsigned)(i % 20);

		if (r < 14) {
			CUpti_ActivityKernel10 *k = next_slot(B, sizeof *k);

			k->kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
			k->start = t;
			k->end = t + 1200;
			k->deviceId = (uint32_t)(i & 7);
			k->contextId = 1;
			k->streamId = 7 + (uint32_t)(i % 3);
			k->gridX = 132;
			k->gridY = k->gridZ = 1;
			k->blockX = 256;
			k->blockY = k->blockZ = 1;
			k->registersPerThread = 128;
			k->dynamicSharedMemory = 98304;
			k->correlationId = corr++;
			k->name = names[(i * 7) % NNAMES];
		} else if (r < 16) {
			CUpti_ActivityMarker2 *m = next_slot(B, sizeof *m);

			m->kind = CUPTI_ACTIVITY_KIND_MARKER;
			m->flags = r == 14 ? CUPTI_ACTIVITY_FLAG_MARKER_START : CUPTI_ACTIVITY_FLAG_MARKER_END;
			m->id = (uint32_t)(i / 20);
			m->timestamp = t;
			m->objectKind = CUPTI_ACTIVITY_OBJECT_THREAD;
			m->objectId.pt.threadId = 4001;
			m->name = r == 14 ? "ncclAllReduce" : NULL;
			m->domain = "NCCL";
		} else if (r < 18) {
			CUpti_ActivityMemcpy6 *m = next_slot(B, sizeof *m);

			m->kind = CUPTI_ACTIVITY_KIND_MEMCPY;
			m->copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_DTOD;
			m->bytes = 1u << 20;
			m->start = t;
			m->end = t + 900;
			m->streamId = 7;
			m->correlationId = corr++;
		} else if (r < 19) {
			CUpti_ActivityMemset4 *m = next_slot(B, sizeof *m);

			m->kind = CUPTI_ACTIVITY_KIND_MEMSET;
			m->bytes = 4096;
			m->start = t;
			m->end = t + 100;
			m->streamId = 7;
			m->correlationId = corr++;
		} else {
			CUpti_ActivityExternalCorrelation *e = next_slot(B, sizeof *e);

			e->kind = CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION;
			e->externalKind = CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0;
			e->externalId = i;
			e->correlationId = corr - 1;
		}
	}
	B->records = nrec;
}

static double run_decode(const struct bufs *B, const char *spool, struct cvci_decoder *d)
{
	cvc_spool *sp = NULL;
	double t0, t1;
	size_t n = 0;

	unlink(spool);
	if (cvc_spool_open(spool, 1u << 20, &sp) || cvci_decoder_init(d, sp)) {
		fprintf(stderr, "error: '%s': cannot create spool: %s\n", spool, strerror(errno));
		exit(1);
	}
	cvci_put_proc(d, 0, 1, getpid(), "bench", "bench", "bench");
	t0 = cpu_s();
	for (size_t i = 0; i < B->n; i++)
		n += cvci_decode(d, B->b[i], B->valid[i]);
	cvc_spool_close(sp);
	t1 = cpu_s();
	if (n != B->records || d->undecodable) {
		fprintf(stderr, "error: decoded %zu of %zu records\n", n, B->records);
		exit(1);
	}
	return (t1 - t0) * 1e9 / (double)B->records;
}

static double run_memcpy(const struct bufs *B)
{
	uint8_t *dst = aligned_alloc(64, BUF_BYTES);
	volatile uint8_t sink = 0;
	double t0, t1;

	t0 = cpu_s();
	for (size_t i = 0; i < B->n; i++) {
		memcpy(dst, B->b[i], B->valid[i]);
		sink ^= dst[B->valid[i] / 2];
	}
	t1 = cpu_s();
	(void)sink;
	free(dst);
	return (t1 - t0) * 1e9 / (double)B->records;
}

/* Direct SQLite: the same activity rows, one transaction, prepared statement. */
static double run_sqlite(const char *path, size_t nrows)
{
	cvc_db *db = NULL;
	cvc_run_info ri = {.name = "bench", .format = "cupti"};
	int64_t run = 0, nid = 0;
	double t0, t1;

	unlink(path);
	if (cvc_db_open(path, CVC_DB_CREATE, &db) || cvc_db_begin(db) ||
	    cvc_db_run_new(db, &ri, &run) || cvc_db_intern(db, names[1], strlen(names[1]), &nid)) {
		fprintf(stderr, "error: %s\n", cvc_db_errmsg(db));
		exit(1);
	}
	t0 = cpu_s();
	for (size_t i = 0; i < nrows; i++) {
		cvc_activity a = {.run_id = run, .device = (int)(i & 7), .kind = CVC_ACT_KERNEL,
				  .name_id = nid, .start_ns = 1763768000000000000LL + (int64_t)i * 1500,
				  .end_ns = 1763768000000000000LL + (int64_t)i * 1500 + 1200,
				  .stream = 7, .context = 1, .correlation = (int64_t)i + 1,
				  .external_id = -1, .grid = {132, 1, 1}, .block = {256, 1, 1},
				  .registers = 128, .shared_mem_bytes = 98304};

		if (cvc_db_activity_add(db, &a, NULL)) {
			fprintf(stderr, "error: %s\n", cvc_db_errmsg(db));
			exit(1);
		}
	}
	cvc_db_commit(db);
	t1 = cpu_s();
	cvc_db_close(db);
	unlink(path);
	return (t1 - t0) * 1e9 / (double)nrows;
}

int main(int argc, char **argv)
{
	size_t nrec = 1000000;
	const char *dir = argc > 2 ? argv[2] : "/tmp";
	char spool[4096], db[4096], err[512];
	struct bufs B = {0};
	struct cvci_decoder d;
	double dec = 1e99, mc = 1e99, sq, mat, t0;
	cvc_materialize_stats ms;

	if (argc > 1) {
		char *end = NULL;

		nrec = strtoul(argv[1], &end, 10);
		if (!end || *end || nrec < 1000 || nrec > 100000000) {
			fputs("usage: bench_decode [N_RECORDS 1000..1e8] [DIR]\n", stderr);
			return 2;
		}
	}
	snprintf(spool, sizeof spool, "%s/bench_decode.%ld.spool", dir, (long)getpid());
	snprintf(db, sizeof db, "%s/bench_decode.%ld.db", dir, (long)getpid());
	build(&B, nrec);
	/* Best of three: the machine is shared; the minimum is the code's cost. */
	for (int rep = 0; rep < 3; rep++) {
		double x = run_decode(&B, spool, &d);

		if (rep < 2)
			cvci_decoder_release(&d);
		dec = x < dec ? x : dec;
		x = run_memcpy(&B);
		mc = x < mc ? x : mc;
	}
	sq = run_sqlite(db, nrec / 5);
	unlink(db);
	t0 = cpu_s();
	if (cvc_profile_materialize(spool, db, &ms, err, sizeof err)) {
		fprintf(stderr, "error: %s\n", err);
		return 1;
	}
	mat = (cpu_s() - t0) * 1e9 / (double)nrec;
	printf("records             %zu (%.1f MiB of CUPTI buffers, %zu distinct kernel names)\n",
	       nrec, (double)B.bytes / 1048576.0, (size_t)NNAMES);
	printf("decode+spool        %.1f ns/record   (limit 150)\n", dec);
	printf("baseline memcpy     %.1f ns/record   decode+spool / memcpy = %.1fx\n", mc, dec / mc);
	printf("baseline sqlite     %.1f ns/record   decode+spool / sqlite = %.3fx (%.1fx cheaper)\n",
	       sq, dec / sq, sq / dec);
	printf("materialize (after exit) %.1f ns/record, %lld activities, %lld ranges\n", mat,
	       (long long)ms.activities, (long long)ms.ranges);
	cvci_decoder_release(&d);
	unlink(spool);
	unlink(db);
	for (size_t i = 0; i < B.n; i++)
		free(B.b[i]);
	free(B.b);
	free(B.valid);
	return dec <= 150.0 ? 0 : 1;
}
