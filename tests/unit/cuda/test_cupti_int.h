/*
 * test_cupti_int.h - what the CUPTI tests share (test_cupti_decode.c, which
 * defines it, and test_cupti_inject.c, linked into one test_cupti_decode):
 * the record names and clock they are built from, one decoded rank as a
 * database, raw spool records, and read-only queries on a result.
 */
#ifndef CVC_TEST_CUPTI_INT_H
#define CVC_TEST_CUPTI_INT_H

#include <stdint.h>

#include <sqlite3.h>

#include "cvc/cvc_profile.h"
#include "decode.h"

static const char nccl_name[] =
	"_Z39ncclDevKernel_AllReduce_Sum_f32_RING_LL24ncclDevKernelArgsStorageILm4096EE";
static const char gemm_name[] =
	"sm90_xmma_gemm_f32f32_tf32f32_f32_nn_n_tilesize128x128x32_warpgroupsize1x1x1_"
	"execute_segment_k_off_kernel__5x_cublas";

#define T0 1763768000000000000LL /* ns, a realistic CLOCK_REALTIME */

struct run_out {
	char db[4096];
	struct cvci_decoder dec;
	cvc_materialize_stats st;
};

/*
 * Decodes the two test buffers (every record kind cvc stores) as rank
 * `rank` into dir/base.spool, keeping what starts in [win_start, win_end]
 * (0, 0: everything), and materializes dir/base.db; asserts each step.
 */
void ct_decode_rank_to_db(const char *dir, const char *base, int rank, struct run_out *o,
			  int64_t win_start, int64_t win_end);

/* A CUPTI activity buffer being built, 8-byte aligned as CUPTI's are. */
struct ct_buf {
	_Alignas(8) uint8_t b[1 << 16];
	size_t used;
};

/* Appends a zeroed record of sz bytes and kind to c (asserts it fits). */
void *ct_add(struct ct_buf *c, size_t sz, CUpti_ActivityKind kind);

/* Appends one raw spool record (the writer's framing) to the file at path. */
void ct_append_rec(const char *path, uint32_t type, const void *p, uint32_t len);

/* Opens a database read-only (asserts). */
sqlite3 *ct_open_ro(const char *path);

/* Expects the first column of sql's first row, as text ("NULL" for NULL). */
void ct_expect(sqlite3 *sq, const char *sql, const char *want);

#endif
