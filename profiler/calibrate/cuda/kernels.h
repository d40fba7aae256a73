/*
 * kernels.h - the CUDA kernels of cvc_calibrate_run (kernels.cu), behind a
 * C interface: fills, row softmax forward/backward over the attention
 * scores, and one memory-bound kernel per operator class.  Every launcher
 * returns the cudaError_t of its launch as an int (0 = cudaSuccess).
 */
#ifndef CVC_CAL_KERNELS_H
#define CVC_CAL_KERNELS_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* element storage of a buffer */
enum cal_elem { CAL_F32 = 0, CAL_F16 = 1, CAL_BF16 = 2, CAL_FP8 = 3 };

/* Fills n elements with finite values in [1, 2) (never zero: tensor cores
 * draw less power on zeros, which would flatter the timings). */
int cal_fill(void *buf, size_t n, int elem, uint32_t seed, void *stream);

/* rows x cols softmax (in place on 16-bit or fp32 storage). */
int cal_softmax_fwd(void *s, size_t rows, size_t cols, int elem, void *stream);
/* dS = P * (dP - rowsum(P * dP)), written over dP. */
int cal_softmax_bwd(const void *p, void *dp, size_t rows, size_t cols, int elem, void *stream);

/*
 * Memory-bound classes over fp32 buffers, each moving about `bytes`
 * (read + written) through `buf` (at least bytes long):
 *   elementwise: z = x + a*y      (3 streams)
 *   norm:        RMS norm of rows of 4096
 *   gather:      rows of 4096 gathered by pseudo-random index
 *   optimizer:   Adam on p, g, m, v (4 read, 3 written)
 *   copy / reduction: copy, and a sum of one stream
 */
int cal_membound(void *buf, size_t bytes, int cls, void *stream);

#ifdef __cplusplus
}
#endif

#endif
