/*
 * gemm_allreduce.c - a small CUDA program to try `cvc profile` on: per step,
 * cuBLAS GEMMs of three shapes on every visible GPU, then an NCCL
 * all-reduce of a gradient-sized buffer across them, each phase inside an
 * NVTX range.  Single process, all GPUs (ncclCommInitAll).
 *
 *   gemm_allreduce [STEPS] [ALLREDUCE_MIB]      (defaults 5 and 64)
 *
 * Exit status: 0 ok, 1 CUDA/cuBLAS/NCCL failure (e.g. no GPU), 2 bad usage.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <nccl.h>
#include <nvtx3/nvToolsExt.h>

#define MAX_DEV 16

static const struct { int m, n, k; } shapes[] = {
	{4096, 4096, 4096},  /* square: attention projection */
	{8192, 1024, 4096},  /* tall: MLP up-projection slice */
	{1024, 8192, 8192},  /* wide: MLP down-projection slice */
};

#define CK_CUDA(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
	fprintf(stderr, "error: %s: %s\n", #x, cudaGetErrorString(e_)); goto out; } } while (0)
#define CK_BLAS(x) do { cublasStatus_t s_ = (x); if (s_ != CUBLAS_STATUS_SUCCESS) { \
	fprintf(stderr, "error: %s: cuBLAS status %d\n", #x, (int)s_); goto out; } } while (0)
#define CK_NCCL(x) do { ncclResult_t r_ = (x); if (r_ != ncclSuccess) { \
	fprintf(stderr, "error: %s: %s\n", #x, ncclGetErrorString(r_)); goto out; } } while (0)

static long arg_long(const char *s, long lo, long hi, int *bad)
{
	char *end = NULL;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < lo || v > hi)
		*bad = 1;
	return v;
}

int main(int argc, char **argv)
{
	int ndev = 0, bad = 0, rc = 1;
	long steps = 5, mib = 64;
	ncclComm_t comms[MAX_DEV] = {0};
	cublasHandle_t blas[MAX_DEV] = {0};
	cudaStream_t streams[MAX_DEV] = {0};
	float *a[MAX_DEV] = {0}, *b[MAX_DEV] = {0}, *c[MAX_DEV] = {0}, *grad[MAX_DEV] = {0};
	size_t maxel = 0, nred;
	const float one = 1.0f, zero = 0.0f;

	if (argc > 1)
		steps = arg_long(argv[1], 1, 1000000, &bad);
	if (argc > 2)
		mib = arg_long(argv[2], 1, 1 << 16, &bad);
	if (bad || argc > 3) {
		fprintf(stderr, "usage: %s [STEPS] [ALLREDUCE_MIB]\n", argv[0]);
		return 2;
	}
	nred = (size_t)mib * (1u << 20) / sizeof(float);
	CK_CUDA(cudaGetDeviceCount(&ndev));
	if (ndev > MAX_DEV)
		ndev = MAX_DEV;
	for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
		size_t mk = (size_t)shapes[i].m * shapes[i].k, kn = (size_t)shapes[i].k * shapes[i].n;
		size_t mn = (size_t)shapes[i].m * shapes[i].n;

		maxel = mk > maxel ? mk : maxel;
		maxel = kn > maxel ? kn : maxel;
		maxel = mn > maxel ? mn : maxel;
	}
	nvtxRangePushA("setup");
	for (int d = 0; d < ndev; d++) {
		CK_CUDA(cudaSetDevice(d));
		CK_CUDA(cudaStreamCreate(&streams[d]));
		CK_CUDA(cudaMalloc((void **)&a[d], maxel * sizeof(float)));
		CK_CUDA(cudaMalloc((void **)&b[d], maxel * sizeof(float)));
		CK_CUDA(cudaMalloc((void **)&c[d], maxel * sizeof(float)));
		CK_CUDA(cudaMalloc((void **)&grad[d], nred * sizeof(float)));
		CK_CUDA(cudaMemsetAsync(a[d], 0, maxel * sizeof(float), streams[d]));
		CK_CUDA(cudaMemsetAsync(b[d], 0, maxel * sizeof(float), streams[d]));
		CK_CUDA(cudaMemsetAsync(grad[d], 0, nred * sizeof(float), streams[d]));
		CK_BLAS(cublasCreate(&blas[d]));
		CK_BLAS(cublasSetStream(blas[d], streams[d]));
	}
	CK_NCCL(ncclCommInitAll(comms, ndev, NULL));
	nvtxRangePop();
	for (long s = 0; s < steps; s++) {
		nvtxRangePushA("step");
		nvtxRangePushA("gemms");
		for (int d = 0; d < ndev; d++) {
			CK_CUDA(cudaSetDevice(d));
			for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++)
				CK_BLAS(cublasSgemm(blas[d], CUBLAS_OP_N, CUBLAS_OP_N, shapes[i].m,
						    shapes[i].n, shapes[i].k, &one, a[d], shapes[i].m,
						    b[d], shapes[i].k, &zero, c[d], shapes[i].m));
		}
		nvtxRangePop();
		nvtxRangePushA("allreduce");
		CK_NCCL(ncclGroupStart());
		for (int d = 0; d < ndev; d++)
			CK_NCCL(ncclAllReduce(grad[d], grad[d], nred, ncclFloat, ncclSum, comms[d],
					      streams[d]));
		CK_NCCL(ncclGroupEnd());
		nvtxRangePop();
		for (int d = 0; d < ndev; d++) {
			CK_CUDA(cudaSetDevice(d));
			CK_CUDA(cudaStreamSynchronize(streams[d]));
		}
		nvtxRangePop();
	}
	printf("%d GPU(s), %ld steps, %zu GEMM shapes, all-reduce %ld MiB: ok\n", ndev, steps,
	       sizeof shapes / sizeof shapes[0], mib);
	rc = 0;
out:
	for (int d = 0; d < ndev; d++) {
		cudaSetDevice(d);
		if (comms[d])
			ncclCommDestroy(comms[d]);
		if (blas[d])
			cublasDestroy(blas[d]);
		cudaFree(a[d]);
		cudaFree(b[d]);
		cudaFree(c[d]);
		cudaFree(grad[d]);
		if (streams[d])
			cudaStreamDestroy(streams[d]);
	}
	return rc;
}
