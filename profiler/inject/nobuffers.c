/*
 * nobuffers.c - why a subscribed, enabled cvc got no activity buffer, said
 * in one line at exit: the driver had no device to run on, or another
 * CUPTI client took the records.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

#include "decode.h"
#include "inject_int.h"

/*
 * cuInit's answer in this process, 0 when it succeeded or cannot be asked.
 * The driver loads us during cuInit even when it then finds no device
 * (CUDA_VISIBLE_DEVICES empty or naming none: CUDA_ERROR_NO_DEVICE, 100,
 * seen on an H200, docs/GPU-VALIDATION.md), and CUPTI subscribes fine: only
 * the driver can tell that case from a client that took the buffers.
 */
static int cuda_init_result(void)
{
	void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD); /* never a second driver */
	int (*cu_init)(unsigned) = NULL;
	int rc = 0;

	if (!h)
		return 0;
	*(void **)&cu_init = dlsym(h, "cuInit");
	if (cu_init)
		rc = cu_init(0); /* returns its first answer again */
	dlclose(h);
	return rc;
}

/*
 * The driver loads us (cuInit), so in a profiled process it is there; a
 * process without one (the test harness, CUPTI failing every call with
 * CUPTI_ERROR_UNKNOWN) has nothing to say about CUPTI's answers.
 */
int cvci_driver_loaded(void)
{
	void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);

	if (h)
		dlclose(h);
	return h != NULL;
}

void cvci_say_no_buffers(struct cvci_decoder *dec)
{
	const char *vis = getenv("CUDA_VISIBLE_DEVICES");
	int rc = cuda_init_result();

	if (!rc) {
		fprintf(stderr, "cvc-inject: CUPTI delivered no activity buffers: if another "
			"CUPTI client (torch.profiler/Kineto) started after cvc, it took the "
			"records; see docs/PROFILER.md\n");
		return;
	}
	cvci_put_meta(dec, "cuda_init_result", rc);
	fprintf(stderr, "cvc-inject: the CUDA driver found no usable GPU (cuInit failed with "
		"CUDA error %d%s%s%s): nothing to record\n", rc,
		vis ? ", CUDA_VISIBLE_DEVICES='" : "", vis ? vis : "", vis ? "'" : "");
}
