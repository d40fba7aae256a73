/*
 * cuda_exit7.c - the smallest CUDA runtime program: initialises CUDA (which
 * fails without a driver) and exits 7 either way, so the profile test can
 * check that `cvc profile` passes the program's own status through.
 */
#include <stdio.h>

#include <cuda_runtime.h>

int main(void)
{
	cudaError_t e = cudaFree(0);

	printf("cudaFree(0): %s\n", cudaGetErrorString(e));
	return 7;
}
