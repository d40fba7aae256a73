/*
 * hostcost.c - what launching one kernel costs the host, measured on the
 * shared Kineto traces: the launching threads' time from one runtime
 * launch call (cudaLaunchKernel, cudaLaunchKernelExC, cuLaunchKernel) to
 * the next, intervals of 1 ms or more left out as waits (the importer's
 * host_launch_ns / host_launch_gaps, profiler/import/kineto_finish.c).
 * That time is the framework's: Python, PyTorch's dispatch, the library
 * call and the launch itself, for every kernel an eager step launches.
 * A GPU that runs kernels faster than the host launches them waits for
 * the host (docs/MODELS.md "Host time per launch").
 * models_host.host_launch_from_traces recomputes each figure from its
 * trace.
 */
#include <math.h>
#include <stdlib.h>

#include "cvc/cvc_model.h"
#include "opmodel_int.h"

/*
 * Per trace: mean host time per launch, us.  The priced figure is the MoE
 * training trace's (DeepSeek-V3's own framework on H800, 2024: the stack
 * closest to Megatron-Core's Python-driven MoE layers, and the median of
 * the training traces); the inference trace is listed, not used.
 */
static const struct opm_host_ref host_refs[] = {
	{"deepseek-train-h800-ep64", 1, 45.4021},
	{"hta-trace-diff-a100-w8", 1, 39.4459},
	{"hta-a100-80g-w16-rank0", 1, 41.6232},
	{"hta-nccl-args-a100-w2", 1, 166.8211},
	{"hta-ddp-v100-2rank", 1, 86.1317},
	{"hta-trace-diff-v100-w2", 1, 55.2638},
	{"param-dlrm-8xv100", 1, 40.8852},
	{"tracelens-h100-qwen05b", 0, 31.6127},
};

const struct opm_host_ref *opm_host_refs(size_t *n)
{
	*n = sizeof host_refs / sizeof host_refs[0];
	return host_refs;
}

double cvc_model_host_launch_us(void)
{
	return host_refs[0].us;
}

/* The median of a handful (at most 16): sorted in place by insertion,
 * not qsort, as every scenario with intervals asks for it. */
static double median(double *v, size_t n)
{
	for (size_t i = 1; i < n; i++) {
		double x = v[i];
		size_t j = i;

		for (; j > 0 && v[j - 1] > x; j--)
			v[j] = v[j - 1];
		v[j] = x;
	}
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/*
 * The spread of the training traces' figures around the priced one, as a
 * relative standard error: 1.4826 times their median absolute deviation
 * over their median (0.194).  Robust because the traces differ in stack
 * and host, and one of them (a ResNet's cuDNN calls, 166.8 us) would set
 * a plain standard deviation alone.
 */
double cvc_model_host_launch_sigma(void)
{
	double v[16], d[16], med;
	size_t n = 0;

	for (size_t i = 0; i < sizeof host_refs / sizeof host_refs[0] && n < 16; i++)
		if (host_refs[i].training)
			v[n++] = host_refs[i].us;
	med = median(v, n);
	for (size_t i = 0; i < n; i++)
		d[i] = fabs(v[i] - med);
	return 1.4826 * median(d, n) / med;
}
