/*
 * inject_harness.c - stands in for the CUDA driver on a machine without
 * one: loads the injection library the way cuInit does (dlopen +
 * InitializeInjection), then leaves the way the test asks, so the library's
 * start, flush and exit paths (atexit, SIGTERM, SIGINT) run for real.
 *
 * "nccl" also plays NCCL: it drives the library's ncclProfiler_v5 with two
 * communicators, a group of three calls and two kernel launches.
 *
 *   inject_harness LIB [exit|term|int|nccl]    exit status 3 on exit/nccl
 */
#include <dlfcn.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "nccl_profiler_v5.h"

static int play_nccl(void *h)
{
	const cvc_nccl_profiler_v5 *p = dlsym(h, "ncclProfiler_v5");
	cvc_nccl_descr_v5 d;
	void *a = NULL, *b = NULL, *g = NULL, *e = NULL;
	int mask = 0;

	if (!p || p->init(&a, 111, &mask, "a", 1, 8, 0, NULL) ||
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
	d.collApi.datatype = "ncclInt8";
	d.collApi.root = 3;
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
	return 3;
}
