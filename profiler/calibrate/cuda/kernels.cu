/*
 * kernels.cu - the few kernels cuBLASLt and NCCL do not provide: fills,
 * the attention softmax (forward and backward) and one memory-bound kernel
 * per operator class (cvc_model_mem).  Grid-stride loops, 256 threads.
 */
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <cuda_runtime.h>

#include "kernels.h"

#define THREADS 256
#define NORM_ROW 4096

static unsigned blocks_for(size_t n)
{
	size_t b = (n + THREADS - 1) / THREADS;

	return (unsigned)(b > 65535 * 8 ? 65535 * 8 : (b ? b : 1));
}

__device__ static uint32_t hash32(uint32_t x)
{
	x ^= x >> 16;
	x *= 0x7feb352dU;
	x ^= x >> 15;
	x *= 0x846ca68bU;
	x ^= x >> 16;
	return x;
}

/*
 * Standard normal values, as torch.randn fills a test tensor and as
 * weights and activations roughly are (Box-Muller over two hashed
 * uniforms; fp8 e4m3 saturates at 448, far beyond N(0,1)'s reach).  The
 * values matter: a fill of [1, 2) alone (fixed sign and exponent bits) ran
 * bf16 GEMMs on an H200 9% faster at 4096^3 and 15% faster over the
 * pati2023 study's shapes than this fill (fewer bits toggling, less power,
 * higher clocks; docs/GPU-VALIDATION.md), so calibration overstated what
 * training sees.
 */
__global__ static void fill_k(void *buf, size_t n, int elem, uint32_t seed)
{
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
	     i += (size_t)gridDim.x * blockDim.x) {
		uint32_t h1 = hash32((uint32_t)i ^ seed), h2 = hash32(h1 ^ 0x9e3779b9u);
		float u1 = ((h1 >> 8) + 1) * (1.0f / 16777216.0f); /* (0, 1] */
		float u2 = (h2 >> 8) * (1.0f / 16777216.0f);       /* [0, 1) */
		float z = sqrtf(-2.0f * logf(u1)) * cospif(2.0f * u2);

		switch (elem) {
		case CAL_F32:
			((float *)buf)[i] = z;
			break;
		case CAL_F16:
			((__half *)buf)[i] = __float2half(z);
			break;
		case CAL_BF16:
			((__nv_bfloat16 *)buf)[i] = __float2bfloat16(z);
			break;
		default:
			((__nv_fp8_e4m3 *)buf)[i] = __nv_fp8_e4m3(z);
			break;
		}
	}
}

extern "C" int cal_fill(void *buf, size_t n, int elem, uint32_t seed, void *stream)
{
	fill_k<<<blocks_for(n), THREADS, 0, (cudaStream_t)stream>>>(buf, n, elem, seed);
	return (int)cudaGetLastError();
}

template <typename T> __device__ static float ld(const T *p, size_t i);
template <> __device__ float ld<float>(const float *p, size_t i) { return p[i]; }
template <> __device__ float ld<__half>(const __half *p, size_t i) { return __half2float(p[i]); }
template <> __device__ float ld<__nv_bfloat16>(const __nv_bfloat16 *p, size_t i)
{
	return __bfloat162float(p[i]);
}
template <typename T> __device__ static void st(T *p, size_t i, float v);
template <> __device__ void st<float>(float *p, size_t i, float v) { p[i] = v; }
template <> __device__ void st<__half>(__half *p, size_t i, float v) { p[i] = __float2half(v); }
template <> __device__ void st<__nv_bfloat16>(__nv_bfloat16 *p, size_t i, float v)
{
	p[i] = __float2bfloat16(v);
}

/* block-wide reduction of one float (max or sum) */
__device__ static float block_reduce(float v, bool is_max)
{
	__shared__ float sh[THREADS / 32];
	int lane = threadIdx.x & 31, w = threadIdx.x >> 5;

	for (int o = 16; o > 0; o >>= 1) {
		float x = __shfl_xor_sync(0xffffffffu, v, o);

		v = is_max ? fmaxf(v, x) : v + x;
	}
	if (lane == 0)
		sh[w] = v;
	__syncthreads();
	if (w == 0) {
		v = lane < THREADS / 32 ? sh[lane] : (is_max ? -INFINITY : 0.f);
		for (int o = 16; o > 0; o >>= 1) {
			float x = __shfl_xor_sync(0xffffffffu, v, o);

			v = is_max ? fmaxf(v, x) : v + x;
		}
		if (lane == 0)
			sh[0] = v;
	}
	__syncthreads();
	v = sh[0];
	__syncthreads();
	return v;
}

template <typename T> __global__ static void softmax_fwd_k(T *s, size_t rows, size_t cols)
{
	for (size_t r = blockIdx.x; r < rows; r += gridDim.x) {
		T *row = s + r * cols;
		float mx = -INFINITY, sum = 0.f;

		for (size_t c = threadIdx.x; c < cols; c += blockDim.x)
			mx = fmaxf(mx, ld(row, c));
		mx = block_reduce(mx, true);
		for (size_t c = threadIdx.x; c < cols; c += blockDim.x)
			sum += __expf(ld(row, c) - mx);
		sum = block_reduce(sum, false);
		for (size_t c = threadIdx.x; c < cols; c += blockDim.x)
			st(row, c, __expf(ld(row, c) - mx) / sum);
	}
}

template <typename T>
__global__ static void softmax_bwd_k(const T *p, T *dp, size_t rows, size_t cols)
{
	for (size_t r = blockIdx.x; r < rows; r += gridDim.x) {
		const T *pr = p + r * cols;
		T *dr = dp + r * cols;
		float dot = 0.f;

		for (size_t c = threadIdx.x; c < cols; c += blockDim.x)
			dot += ld(pr, c) * ld(dr, c);
		dot = block_reduce(dot, false);
		for (size_t c = threadIdx.x; c < cols; c += blockDim.x)
			st(dr, c, ld(pr, c) * (ld(dr, c) - dot));
	}
}

static unsigned row_blocks(size_t rows)
{
	return (unsigned)(rows > 65535 * 16 ? 65535 * 16 : (rows ? rows : 1));
}

extern "C" int cal_softmax_fwd(void *s, size_t rows, size_t cols, int elem, void *stream)
{
	cudaStream_t q = (cudaStream_t)stream;

	if (elem == CAL_F32)
		softmax_fwd_k<float><<<row_blocks(rows), THREADS, 0, q>>>((float *)s, rows, cols);
	else if (elem == CAL_F16)
		softmax_fwd_k<__half><<<row_blocks(rows), THREADS, 0, q>>>((__half *)s, rows, cols);
	else
		softmax_fwd_k<__nv_bfloat16>
			<<<row_blocks(rows), THREADS, 0, q>>>((__nv_bfloat16 *)s, rows, cols);
	return (int)cudaGetLastError();
}

extern "C" int cal_softmax_bwd(const void *p, void *dp, size_t rows, size_t cols, int elem,
			       void *stream)
{
	cudaStream_t q = (cudaStream_t)stream;

	if (elem == CAL_F32)
		softmax_bwd_k<float><<<row_blocks(rows), THREADS, 0, q>>>((const float *)p,
									   (float *)dp, rows, cols);
	else if (elem == CAL_F16)
		softmax_bwd_k<__half><<<row_blocks(rows), THREADS, 0, q>>>((const __half *)p,
									    (__half *)dp, rows, cols);
	else
		softmax_bwd_k<__nv_bfloat16><<<row_blocks(rows), THREADS, 0, q>>>(
			(const __nv_bfloat16 *)p, (__nv_bfloat16 *)dp, rows, cols);
	return (int)cudaGetLastError();
}

/* ---- memory-bound classes (cvc_model_mem order) ------------------------------- */

__global__ static void triad_k(float *z, const float *x, const float *y, size_t n)
{
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
	     i += (size_t)gridDim.x * blockDim.x)
		z[i] = x[i] + 0.5f * y[i];
}

__global__ static void rmsnorm_k(float *out, const float *in, size_t rows)
{
	for (size_t r = blockIdx.x; r < rows; r += gridDim.x) {
		const float *x = in + r * NORM_ROW;
		float ss = 0.f, scale;

		for (int c = threadIdx.x; c < NORM_ROW; c += blockDim.x)
			ss += x[c] * x[c];
		scale = rsqrtf(block_reduce(ss, false) / NORM_ROW + 1e-6f);
		for (int c = threadIdx.x; c < NORM_ROW; c += blockDim.x)
			out[r * NORM_ROW + c] = x[c] * scale;
	}
}

__global__ static void gather_k(float *out, const float *table, size_t rows, size_t trows)
{
	for (size_t r = blockIdx.x; r < rows; r += gridDim.x) {
		size_t src = hash32((uint32_t)r) % trows;

		for (int c = threadIdx.x; c < NORM_ROW; c += blockDim.x)
			out[r * NORM_ROW + c] = table[src * NORM_ROW + c];
	}
}

__global__ static void adam_k(float *p, const float *g, float *m, float *v, size_t n)
{
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
	     i += (size_t)gridDim.x * blockDim.x) {
		/* |v|: the signed fill would make a second moment negative */
		float gi = g[i], mi = 0.9f * m[i] + 0.1f * gi;
		float vi = 0.999f * fabsf(v[i]) + 0.001f * gi * gi;

		m[i] = mi;
		v[i] = vi;
		p[i] -= 1e-4f * mi / (sqrtf(vi) + 1e-8f);
	}
}

__global__ static void sum_k(float *out, const float *x, size_t n)
{
	float s = 0.f;

	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
	     i += (size_t)gridDim.x * blockDim.x)
		s += x[i];
	s = block_reduce(s, false);
	if (threadIdx.x == 0)
		atomicAdd(out, s);
}

extern "C" int cal_membound(void *buf, size_t bytes, int cls, void *stream)
{
	cudaStream_t q = (cudaStream_t)stream;
	float *f = (float *)buf;
	size_t nf = bytes / sizeof(float);

	switch (cls) {
	case 1: { /* norm: read a row, write it */
		size_t rows = nf / 2 / NORM_ROW;

		rows = rows ? rows : 1;
		rmsnorm_k<<<row_blocks(rows), THREADS, 0, q>>>(f + rows * NORM_ROW, f, rows);
		break;
	}
	case 2: { /* reduction: read one stream */
		sum_k<<<blocks_for(nf - 1), THREADS, 0, q>>>(f, f + 1, nf - 1);
		break;
	}
	case 3: /* copy */
		return (int)cudaMemcpyAsync(f + nf / 2, f, nf / 2 * sizeof(float),
					    cudaMemcpyDeviceToDevice, q);
	case 4: { /* gather: half the bytes read from the table, half written */
		size_t rows = nf / 2 / NORM_ROW;

		rows = rows ? rows : 1;
		gather_k<<<row_blocks(rows), THREADS, 0, q>>>(f + rows * NORM_ROW, f, rows, rows);
		break;
	}
	case 5: { /* optimizer: 7 streams */
		size_t n = nf / 7;

		adam_k<<<blocks_for(n), THREADS, 0, q>>>(f, f + n, f + 2 * n, f + 3 * n, n);
		break;
	}
	default: { /* elementwise */
		size_t n = nf / 3;

		triad_k<<<blocks_for(n), THREADS, 0, q>>>(f + 2 * n, f, f + n, n);
		break;
	}
	}
	return (int)cudaGetLastError();
}
