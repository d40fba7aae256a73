/*
 * inject_harness.c - stands in for the CUDA driver on a machine without
 * one: loads the injection library the way cuInit does (dlopen +
 * InitializeInjection), then leaves the way the test asks, so the library's
 * start, flush and exit paths (atexit, SIGTERM, SIGINT) run for real.
 *
 * "nccl" also plays NCCL: it drives the library's ncclProfiler_v5 with two
 * communicators, a group of three calls and two kernel launches;
 * "ncclsizes" with the collectives whose sizes scale with the group size,
 * all-to-alls of sends and receives, and groups of more than 32 calls.
 *
 * "feedkill N" plays CUPTI's buffer traffic: the harness defines
 * cuptiActivityRegisterCallbacks (exported, so the library's call binds
 * here; it forwards to libcupti), asks the library for a buffer, fills it
 * with N real CUpti_ActivityKernel10 records, hands it back as completed,
 * waits KILL_AFTER_MS and dies of SIGKILL: no atexit, no handler.
 *
 * HARNESS_SUBSCRIBE and HARNESS_ENABLE (below) play other CUPTI clients.
 *
 *   inject_harness LIB [exit|term|int|nccl|ncclsizes|fork|feedkill N]
 *   exit 3 on exit/nccl/ncclsizes/fork
 */
#define _GNU_SOURCE /* RTLD_NEXT */
#include <dlfcn.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cupti.h>

#include "nccl_profiler_v5.h"

#define KILL_AFTER_MS 2500

static CUpti_BuffersCallbackRequestFunc g_request;
static CUpti_BuffersCallbackCompleteFunc g_complete;

CUptiResult CUPTIAPI cuptiActivityRegisterCallbacks(CUpti_BuffersCallbackRequestFunc req,
						     CUpti_BuffersCallbackCompleteFunc done);

__attribute__((visibility("default"))) CUptiResult CUPTIAPI
cuptiActivityRegisterCallbacks(CUpti_BuffersCallbackRequestFunc req,
			       CUpti_BuffersCallbackCompleteFunc done)
{
	CUptiResult (*real)(CUpti_BuffersCallbackRequestFunc, CUpti_BuffersCallbackCompleteFunc);
	void *sym = dlsym(RTLD_NEXT, "cuptiActivityRegisterCallbacks");

	g_request = req;
	g_complete = done;
	if (!sym)
		return CUPTI_ERROR_UNKNOWN;
	memcpy(&real, &sym, sizeof real);
	return real(req, done);
}

/*
 * Other CUPTI clients, played through the environment: HARNESS_SUBSCRIBE=busy
 * answers cuptiSubscribe as CUPTI does when Nsight Systems or another
 * subscriber holds it, =incompatible as it does with a driver older than
 * the CUPTI, =ok as it does on a machine with a driver;
 * HARNESS_ENABLE=fail refuses every cuptiActivityEnable, =ok accepts each
 * (as a driver-backed CUPTI does), =log names each kind enabled on stderr
 * ("enable N").  Unset, both go to libcupti.
 */
__attribute__((visibility("default"))) CUptiResult CUPTIAPI
cuptiSubscribe(CUpti_SubscriberHandle *sub, CUpti_CallbackFunc cb, void *user)
{
	const char *how = getenv("HARNESS_SUBSCRIBE");
	CUptiResult (*real)(CUpti_SubscriberHandle *, CUpti_CallbackFunc, void *);
	void *sym;

	if (how && strcmp(how, "busy") == 0)
		return CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
	if (how && strcmp(how, "incompatible") == 0)
		return CUPTI_ERROR_NOT_COMPATIBLE;
	if (how && strcmp(how, "ok") == 0) {
		*sub = NULL;
		return CUPTI_SUCCESS;
	}
	if (!(sym = dlsym(RTLD_NEXT, "cuptiSubscribe")))
		return CUPTI_ERROR_UNKNOWN;
	memcpy(&real, &sym, sizeof real);
	return real(sub, cb, user);
}

__attribute__((visibility("default"))) CUptiResult CUPTIAPI
cuptiActivityEnable(CUpti_ActivityKind kind)
{
	const char *how = getenv("HARNESS_ENABLE");
	CUptiResult (*real)(CUpti_ActivityKind);
	void *sym;

	if (how && strcmp(how, "fail") == 0)
		return CUPTI_ERROR_NOT_COMPATIBLE;
	if (how && strcmp(how, "ok") == 0)
		return CUPTI_SUCCESS;
	if (how && strcmp(how, "log") == 0)
		fprintf(stderr, "enable %d\n", (int)kind);
	if (!(sym = dlsym(RTLD_NEXT, "cuptiActivityEnable")))
		return CUPTI_ERROR_UNKNOWN;
	memcpy(&real, &sym, sizeof real);
	return real(kind);
}

/* HARNESS_FLUSH=log names each cuptiActivityFlushAll on stderr ("flushall F"). */
__attribute__((visibility("default"))) CUptiResult CUPTIAPI cuptiActivityFlushAll(uint32_t flag)
{
	const char *how = getenv("HARNESS_FLUSH");
	CUptiResult (*real)(uint32_t);
	void *sym;

	if (how && strcmp(how, "log") == 0)
		fprintf(stderr, "flushall %u\n", (unsigned)flag);
	if (!(sym = dlsym(RTLD_NEXT, "cuptiActivityFlushAll")))
		return CUPTI_ERROR_UNKNOWN;
	memcpy(&real, &sym, sizeof real);
	return real(flag);
}

/* HARNESS_CUPTI_VERSION=N plays a libcupti of another version. */
__attribute__((visibility("default"))) CUptiResult CUPTIAPI cuptiGetVersion(uint32_t *version)
{
	const char *v = getenv("HARNESS_CUPTI_VERSION");
	CUptiResult (*real)(uint32_t *);
	void *sym;

	if (v && *v) {
		*version = (uint32_t)strtoul(v, NULL, 10);
		return CUPTI_SUCCESS;
	}
	if (!(sym = dlsym(RTLD_NEXT, "cuptiGetVersion")))
		return CUPTI_ERROR_UNKNOWN;
	memcpy(&real, &sym, sizeof real);
	return real(version);
}

static int feed_then_kill(int n)
{
	uint8_t *buf = NULL;
	size_t size = 0, maxrec = 0, used = 0;
	struct timespec ts = {KILL_AFTER_MS / 1000, (KILL_AFTER_MS % 1000) * 1000000L};

	if (!g_request || !g_complete)
		return 9;
	g_request(&buf, &size, &maxrec);
	if (!buf || n < 1 || size < (size_t)n * sizeof(CUpti_ActivityKernel10))
		return 9;
	for (int i = 0; i < n; i++) {
		CUpti_ActivityKernel10 *k = (CUpti_ActivityKernel10 *)(buf + used);

		memset(k, 0, sizeof *k);
		k->kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
		k->start = 1763768000000000000ull + (uint64_t)i * 10000;
		k->end = k->start + 5000;
		k->completed = k->end;
		k->deviceId = 0;
		k->contextId = 1;
		k->streamId = 7;
		k->gridX = k->gridY = k->gridZ = 1;
		k->blockX = 128;
		k->blockY = k->blockZ = 1;
		k->correlationId = (uint32_t)i + 1;
		k->name = "feed_kernel";
		used += sizeof *k;
	}
	g_complete(NULL, 0, buf, size, used);
	{
		uint32_t ver = 0;

		cuptiGetVersion(&ver);
		printf("fed %d kernels (CUPTI %u)\n", n, (unsigned)ver);
	}
	fflush(stdout);
	while (nanosleep(&ts, &ts) != 0)
		;
	raise(SIGKILL);
	return 9;
}

static int play_nccl(void *h)
{
	const cvc_nccl_profiler_v5 *p = dlsym(h, "ncclProfiler_v5");
	cvc_nccl_descr_v5 d;
	void *a = NULL, *b = NULL, *g = NULL, *e = NULL;
	int mask = 0;

	if (!p || p->init(&a, 111, &mask, "a", 1, 8, 3, NULL) ||
	    p->init(&b, 222, &mask, "b", 1, 8, 1, NULL))
		return 9;
	memset(&d, 0, sizeof d);
	d.type = 1 << 8; /* GroupApi */
	p->startEvent(a, &g, &d);
	memset(&d, 0, sizeof d);
	d.type = 1 << 9; /* CollApi */
	d.parentObj = g;
	d.collApi.func = "AllReduce";
	d.collApi.count = 1048576;
	d.collApi.datatype = "ncclFloat32";
	d.collApi.root = -1;
	p->startEvent(a, &e, &d);
	p->stopEvent(e);
	d.collApi.count = 1024;
	d.collApi.datatype = "ncclBfloat16";
	p->startEvent(a, &e, &d);
	p->stopEvent(e);
	memset(&d, 0, sizeof d);
	d.type = 1 << 9;
	d.parentObj = g;
	d.collApi.func = "Broadcast";
	d.collApi.count = 4096;
	d.collApi.datatype = "Unknown"; /* what NCCL names ncclUint8 */
	d.collApi.root = 3;
	d.collApi.graphCaptured = 1; /* captured into a CUDA graph */
	p->startEvent(b, &e, &d);
	p->stopEvent(e);
	memset(&d, 0, sizeof d);
	d.type = 1 << 11; /* KernelLaunch: comm a, then comm b */
	d.parentObj = g;
	p->startEvent(a, &e, &d);
	p->stopEvent(e);
	p->startEvent(b, &e, &d);
	p->stopEvent(e);
	p->stopEvent(g);
	p->finalize(a);
	p->finalize(b);
	printf("mask 0x%x\n", (unsigned)mask);
	return 3;
}

/* One NCCL call (CollApi, or P2pApi for Send/Recv) under group g. */
static void nccl_call(const cvc_nccl_profiler_v5 *p, void *ctx, void *g, const char *func,
		      size_t count, const char *dtype)
{
	cvc_nccl_descr_v5 d;
	void *e = NULL;
	int p2p = strcmp(func, "Send") == 0 || strcmp(func, "Recv") == 0;

	memset(&d, 0, sizeof d);
	d.parentObj = g;
	if (p2p) {
		d.type = 1 << 10; /* P2pApi */
		d.p2pApi.func = func;
		d.p2pApi.count = count;
		d.p2pApi.datatype = dtype;
	} else {
		d.type = 1 << 9; /* CollApi */
		d.collApi.func = func;
		d.collApi.count = count;
		d.collApi.datatype = dtype;
		/* the rooted ones at rank 0, the others none (nccl-tests' -1) */
		d.collApi.root = strcmp(func, "Gather") == 0 || strcmp(func, "Scatter") == 0 ? 0 : -1;
	}
	p->startEvent(ctx, &e, &d);
	p->stopEvent(e);
}

/* GroupApi start, or KernelLaunch + GroupApi stop when g is given. */
static void *nccl_group(const cvc_nccl_profiler_v5 *p, void *ctx, void *g)
{
	cvc_nccl_descr_v5 d;
	void *e = NULL;

	memset(&d, 0, sizeof d);
	if (!g) {
		d.type = 1 << 8; /* GroupApi */
		p->startEvent(ctx, &e, &d);
		return e;
	}
	d.type = 1 << 11; /* KernelLaunch */
	d.parentObj = g;
	p->startEvent(ctx, &e, &d);
	p->stopEvent(e);
	p->stopEvent(g);
	return NULL;
}

/*
 * "ncclsizes": eight launches on one communicator of 8 ranks, as NCCL 2.28
 * reports them: an all-gather (sendcount 1024 bf16), a reduce-scatter
 * (recvcount 1024 f32), an all-to-all of 8 sends and 8 receives of 512
 * bf16 (ncclGroupStart; ncclSend/ncclRecv per peer; ncclGroupEnd), one
 * send and one receive of 100 f32, 40 all-reduces of 10 f32 in one group
 * (more calls than the plugin has slots), an all-to-all of 64 sends and 64
 * receives of 16 f32, a gather (count 256 f32 from each rank) and a
 * scatter (count 128 bf16 to each rank).
 */
static int play_nccl_sizes(void *h)
{
	const cvc_nccl_profiler_v5 *p = dlsym(h, "ncclProfiler_v5");
	void *c = NULL, *g;
	int mask = 0;

	if (!p || p->init(&c, 333, &mask, "c", 1, 8, 2, NULL))
		return 9;
	g = nccl_group(p, c, NULL);
	nccl_call(p, c, g, "AllGather", 1024, "ncclBfloat16");
	nccl_group(p, c, g);
	g = nccl_group(p, c, NULL);
	nccl_call(p, c, g, "ReduceScatter", 1024, "ncclFloat32");
	nccl_group(p, c, g);
	g = nccl_group(p, c, NULL);
	for (int i = 0; i < 8; i++) {
		nccl_call(p, c, g, "Send", 512, "ncclBfloat16");
		nccl_call(p, c, g, "Recv", 512, "ncclBfloat16");
	}
	nccl_group(p, c, g);
	g = nccl_group(p, c, NULL);
	nccl_call(p, c, g, "Send", 100, "ncclFloat32");
	nccl_call(p, c, g, "Recv", 100, "ncclFloat32");
	nccl_group(p, c, g);
	g = nccl_group(p, c, NULL);
	for (int i = 0; i < 40; i++)
		nccl_call(p, c, g, "AllReduce", 10, "ncclFloat32");
	nccl_group(p, c, g);
	g = nccl_group(p, c, NULL);
	for (int i = 0; i < 64; i++) {
		nccl_call(p, c, g, "Send", 16, "ncclFloat32");
		nccl_call(p, c, g, "Recv", 16, "ncclFloat32");
	}
	nccl_group(p, c, g);
	g = nccl_group(p, c, NULL);
	nccl_call(p, c, g, "Gather", 256, "ncclFloat32");
	nccl_group(p, c, g);
	g = nccl_group(p, c, NULL);
	nccl_call(p, c, g, "Scatter", 128, "ncclBfloat16");
	nccl_group(p, c, g);
	p->finalize(c);
	return 3;
}

/* Exit status of pid as a shell reports it. */
static int status_of(pid_t pid)
{
	int st = 0;

	if (waitpid(pid, &st, 0) != pid)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/*
 * "fork": two forked children as DataLoader workers are, one leaving
 * through exit() (atexit runs), one through SIGTERM (the library's handler
 * runs); then the parent exits normally.
 */
static int fork_children(void)
{
	pid_t a, b;

	fflush(stdout);
	if ((a = fork()) == 0)
		exit(0);
	if ((b = fork()) == 0) {
		raise(SIGTERM);
		_exit(1);
	}
	if (a < 0 || b < 0)
		return 9;
	printf("children %d %d\n", status_of(a), status_of(b));
	return 3;
}

int main(int argc, char **argv)
{
	void *h;
	int (*init)(void);
	void *sym;

	if (argc < 2) {
		fputs("usage: inject_harness LIB [exit|term|int]\n", stderr);
		return 2;
	}
	h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		fprintf(stderr, "error: %s\n", dlerror());
		return 9;
	}
	sym = dlsym(h, "InitializeInjection");
	if (!sym) {
		fputs("error: no InitializeInjection\n", stderr);
		return 9;
	}
	memcpy(&init, &sym, sizeof init); /* object -> function pointer, as dlsym needs */
	printf("InitializeInjection: %d\n", init());
	fflush(stdout);
	if (argc > 2 && strcmp(argv[2], "term") == 0)
		raise(SIGTERM);
	if (argc > 2 && strcmp(argv[2], "int") == 0)
		raise(SIGINT);
	if (argc > 2 && strcmp(argv[2], "nccl") == 0)
		return play_nccl(h);
	if (argc > 2 && strcmp(argv[2], "ncclsizes") == 0)
		return play_nccl_sizes(h);
	if (argc > 2 && strcmp(argv[2], "fork") == 0)
		return fork_children();
	if (argc > 3 && strcmp(argv[2], "feedkill") == 0)
		return feed_then_kill(atoi(argv[3]));
	return 3;
}
