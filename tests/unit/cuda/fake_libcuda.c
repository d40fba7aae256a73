/*
 * fake_libcuda.c - a "libcuda.so.1" whose cuInit answers what the real
 * driver answered on an H200 with CUDA_VISIBLE_DEVICES empty or naming no
 * device: CUDA_ERROR_NO_DEVICE (100).  Preloaded into the injection
 * harness, it lets the no-device line of nobuffers.c be tested without a
 * GPU.  Built in a folder of its own so no other program finds it.
 */
int cuInit(unsigned int flags);

__attribute__((visibility("default"))) int cuInit(unsigned int flags)
{
	(void)flags;
	return 100;
}
