/*
 * seed_spool.c - writes a small spool holding one record of every type
 * through the spool writer (cvc_profile.h), the seed of the spool fuzzer.
 * Usage: seed_spool PATH (PATH must not exist).
 */
#include <stdio.h>
#include <string.h>

#include "cvc/cvc_db.h"
#include "cvc/cvc_profile.h"

int main(int argc, char **argv)
{
	cvc_spool *sp = NULL;
	struct cvc_spool_proc proc = {0, 2, 4242, 1, 2, 3, 0};
	struct cvc_spool_device dev = {0, 132, 85899345920LL, 9, 0, 3350000000ULL, 1980000, 4};
	struct cvc_spool_act k = {.kind = CVC_ACT_KERNEL, .start_ns = 1000, .end_ns = 5000,
				  .stream = 7, .context = 1, .correlation = 100, .name_sid = 5,
				  .grid = {128, 1, 1}, .block = {128, 1, 1}, .registers = 96};
	struct cvc_spool_act cp = {.kind = CVC_ACT_MEMCPY, .copy_kind = 1, .start_ns = 6000,
				   .end_ns = 7000, .stream = 8, .correlation = 101, .bytes = 4096};
	struct cvc_spool_marker m1 = {CVC_MARK_START, 7, 1000, 6, 0, 11};
	struct cvc_spool_marker m2 = {CVC_MARK_END, 7, 9000, 0, 0, 11};
	struct cvc_spool_extcorr ec = {100, CVC_EXTCORR_NCCL_LAUNCH, 55};
	struct cvc_spool_api api = {2, 7, 900, 1100, 11, 100, 0};
	struct cvc_spool_meta meta = {8, 0, 3};
	struct cvc_spool_coll coll = {55, 9, 10, 1 << 20, 4 << 20, -1, 2, 1, 0};
	static const char *const strs[] = {
		"seedhost", "seedrun", "seed_spool", "NVIDIA H100 80GB HBM3",
		"ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)",
		"ProfilerStep#1", "cudaLaunchKernel", "lost_records", "AllReduce", "ncclFloat32"};

	if (argc != 2) {
		fputs("usage: seed_spool PATH\n", stderr);
		return 2;
	}
	if (cvc_spool_open(argv[1], 1u << 16, &sp) != CVC_OK) {
		fprintf(stderr, "error: '%s': cannot create spool\n", argv[1]);
		return 1;
	}
	/* Strings first: the PROC record refers to them (as cvci_put_proc writes it). */
	for (unsigned i = 0; i < sizeof strs / sizeof strs[0]; i++)
		cvc_spool_put_str(sp, i + 1, strs[i], strlen(strs[i]));
	cvc_spool_put(sp, CVC_SPOOL_PROC, &proc, sizeof proc);
	cvc_spool_put(sp, CVC_SPOOL_DEVICE, &dev, sizeof dev);
	cvc_spool_put(sp, CVC_SPOOL_ACT, &k, sizeof k);
	cvc_spool_put(sp, CVC_SPOOL_ACT, &cp, sizeof cp);
	cvc_spool_put(sp, CVC_SPOOL_MARKER, &m1, sizeof m1);
	cvc_spool_put(sp, CVC_SPOOL_MARKER, &m2, sizeof m2);
	cvc_spool_put(sp, CVC_SPOOL_EXTCORR, &ec, sizeof ec);
	cvc_spool_put(sp, CVC_SPOOL_API, &api, sizeof api);
	cvc_spool_put(sp, CVC_SPOOL_META, &meta, sizeof meta);
	cvc_spool_put(sp, CVC_SPOOL_COLL, &coll, sizeof coll);
	return cvc_spool_close(sp) == CVC_OK ? 0 : 1;
}
