/*
 * quant.cu — CUDA quantizers and dequantizers (kernels_cuda.h), bit-identical to
 * the CPU paths: the per-element arithmetic is the shared inline code of
 * kernels_int.h (device side: __fdiv_rn / __fmul_rn / __fadd_rn; built with
 * -fmad=false), maxima are integer maxima of magnitude bits (order-free), and
 * the first non-finite element is an atomic minimum of flat indices.
 *
 * Every scheme is described by its scale tile: scale index of element (r, c) is
 * (r / tile_rows) * tiles_per_row + c / tile_cols. Three kernels: tile maxima,
 * scales, codes. Host buffers in and out; device buffers live for one call.
 */
#include <cuda_runtime.h>

#include "kernels/kernels.h"
#include "kernels/kernels_cuda.h"
#include "kernels/kernels_int.h"

namespace
{

struct tiling {
	int64_t N, K;
	int64_t tile_rows, tile_cols, tiles_per_row;
	int64_t group;
};

/* The scale tile of each scheme (docs/format.md section 4.2). */
bool tiling_of(wt_quant s, int64_t N, int64_t K, int64_t group, tiling *t)
{
	t->N = N;
	t->K = K;
	t->group = group;
	switch (s) {
	case WT_QUANT_FP8_TENSOR:
		t->tile_rows = N, t->tile_cols = K;
		break;
	case WT_QUANT_FP8_CHANNEL:
	case WT_QUANT_INT8_CHANNEL:
		t->tile_rows = 1, t->tile_cols = K;
		break;
	case WT_QUANT_FP8_BLOCK:
		t->tile_rows = KERN_BLOCK, t->tile_cols = KERN_BLOCK;
		break;
	case WT_QUANT_INT4_GROUP:
		t->tile_rows = 1, t->tile_cols = group;
		break;
	default:
		return false;
	}
	t->tiles_per_row = (K + t->tile_cols - 1) / t->tile_cols;
	return true;
}

__device__ __forceinline__ int64_t scale_index(const tiling &t, int64_t i)
{
	int64_t r = i / t.K, c = i % t.K;
	return (r / t.tile_rows) * t.tiles_per_row + c / t.tile_cols;
}

__device__ __forceinline__ float load_x(const void *x, wt_dtype dt, int64_t i)
{
	if (dt == WT_F32)
		return static_cast<const float *>(x)[i];
	if (dt == WT_BF16)
		return kern_bf16_dec(static_cast<const uint16_t *>(x)[i]);
	return kern_f16_dec(static_cast<const uint16_t *>(x)[i]);
}

__device__ __forceinline__ void store_y(void *dst, wt_dtype dt, int64_t i, float v)
{
	if (dt == WT_F32)
		static_cast<float *>(dst)[i] = v;
	else if (dt == WT_BF16)
		static_cast<uint16_t *>(dst)[i] = kern_bf16_enc(v);
	else
		static_cast<uint16_t *>(dst)[i] = kern_f16_enc(v);
}

/* grid (tiles, splits): block (b, y) scans rows y, y + splits, ... of tile b. */
__global__ void amax_kernel(const void *x, wt_dtype dt, tiling t, uint32_t *amax,
                            unsigned long long *bad)
{
	__shared__ uint32_t part[32];
	int64_t b = blockIdx.x;
	int64_t r0 = (b / t.tiles_per_row) * t.tile_rows;
	int64_t c0 = (b % t.tiles_per_row) * t.tile_cols;
	int64_t r1 = min(r0 + t.tile_rows, t.N), c1 = min(c0 + t.tile_cols, t.K);
	uint32_t m = 0;
	for (int64_t r = r0 + blockIdx.y; r < r1; r += gridDim.y)
		for (int64_t c = c0 + threadIdx.x; c < c1; c += blockDim.x) {
			int64_t i = r * t.K + c;
			uint32_t a = kern_f2u(load_x(x, dt, i)) & 0x7fffffffu;
			if (a >= KERN_NONFINITE)
				atomicMin(bad, (unsigned long long)i);
			m = a > m ? a : m;
		}
	for (int off = 16; off > 0; off >>= 1) {
		uint32_t o = __shfl_down_sync(0xffffffffu, m, off);
		m = o > m ? o : m;
	}
	if ((threadIdx.x & 31) == 0)
		part[threadIdx.x >> 5] = m;
	__syncthreads();
	if (threadIdx.x == 0) {
		for (unsigned w = 1; w < (blockDim.x + 31) / 32; w++)
			m = part[w] > m ? part[w] : m;
		atomicMax(&amax[b], m);
	}
}

__global__ void scale_kernel(wt_quant s, const uint32_t *amax, float *scale, int64_t n)
{
	for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
	     i += (int64_t)gridDim.x * blockDim.x) {
		if (s == WT_QUANT_INT8_CHANNEL)
			scale[i] = kern_int_scale(amax[i], 127.0f);
		else if (s == WT_QUANT_INT4_GROUP)
			scale[i] = kern_int_scale(amax[i], 7.0f);
		else
			scale[i] = kern_fp8_scale(amax[i]);
	}
}

/* fp8 and int8: one code per element; int4: one byte (elements 2j, 2j+1) per step. */
__global__ void encode_kernel(wt_quant s, const void *x, wt_dtype dt, tiling t, const float *scale,
                              uint8_t *q, int64_t n_out)
{
	for (int64_t j = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; j < n_out;
	     j += (int64_t)gridDim.x * blockDim.x) {
		if (s == WT_QUANT_INT4_GROUP) {
			float sc = scale[scale_index(t, 2 * j)];
			uint32_t lo = (uint32_t)(kern_int_q(load_x(x, dt, 2 * j), sc, -8, 7) + 8);
			uint32_t hi =
			    (uint32_t)(kern_int_q(load_x(x, dt, 2 * j + 1), sc, -8, 7) + 8);
			q[j] = (uint8_t)(lo | (hi << 4));
		} else if (s == WT_QUANT_INT8_CHANNEL) {
			q[j] = (uint8_t)(int8_t)kern_int_q(load_x(x, dt, j),
			                                   scale[scale_index(t, j)], -127, 127);
		} else {
			q[j] = kern_fp8_q(load_x(x, dt, j), scale[scale_index(t, j)]);
		}
	}
}

__global__ void decode_kernel(wt_quant s, const uint8_t *q, tiling t, const float *scale, void *dst,
                              wt_dtype dt, int64_t n)
{
	for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
	     i += (int64_t)gridDim.x * blockDim.x) {
		float sc = scale[scale_index(t, i)];
		float v;
		if (s == WT_QUANT_INT4_GROUP)
			v = KERN_MUL((float)((int32_t)((q[i / 2] >> (4 * (i & 1))) & 15u) - 8), sc);
		else if (s == WT_QUANT_INT8_CHANNEL)
			v = KERN_MUL((float)(int8_t)q[i], sc);
		else
			v = KERN_MUL(kern_e4m3_dec(q[i]), sc);
		store_y(dst, dt, i, v);
	}
}

/* F32 F16 BF16 only (checked by the callers). */
size_t elem_bytes(wt_dtype dt)
{
	return dt == WT_F32 ? 4 : 2;
}

unsigned grid_for(int64_t n)
{
	int64_t b = (n + 255) / 256;
	return (unsigned)(b < 65536 ? (b > 0 ? b : 1) : 65536);
}

/* Device buffers of one call; freed by the destructor on every path. */
struct dev_bufs {
	void *x = nullptr, *q = nullptr;
	float *scale = nullptr;
	uint32_t *amax = nullptr;
	unsigned long long *bad = nullptr;
	~dev_bufs()
	{
		cudaFree(x);
		cudaFree(q);
		cudaFree(scale);
		cudaFree(amax);
		cudaFree(bad);
	}
};

bool ok(cudaError_t e)
{
	return e == cudaSuccess;
}

int device_probe()
{
	int n = 0;
	/* Any error (no driver: 35, stub libcuda: 34, ...) means no device (docs/architecture.md
	 * section 6). */
	if (cudaGetDeviceCount(&n) != cudaSuccess) {
		cudaGetLastError(); /* reset the runtime's last-error slot */
		return 0;
	}
	return n > 0 ? 1 : 0;
}

} /* namespace */

extern "C" int kern_cuda_available(void)
{
	static const int avail = device_probe(); /* thread-safe one-time init (C++11) */
	return avail;
}

extern "C" int kern_cuda_built(void)
{
	return 1;
}

extern "C" int kern_cuda_quantize(wt_quant scheme, const void *x, wt_dtype src_dt, int64_t N,
                                  int64_t K, int64_t group, void *q, float *scale,
                                  int64_t *bad_index)
{
	tiling t;
	int64_t ns = kern_scale_count(scheme, N, K, group), nq = kern_qbytes(scheme, N, K);
	if (ns == 0 || nq == 0 || !tiling_of(scheme, N, K, group, &t))
		return WT_EINVAL; /* also an unknown scheme or a bad group */
	if (src_dt != WT_F32 && src_dt != WT_F16 && src_dt != WT_BF16)
		return WT_EDTYPE;
	if (!x || !q || !scale)
		return WT_EINVAL;
	if (ns > INT32_MAX)
		return WT_ETOOBIG; /* one CUDA block per scale */
	if (!kern_cuda_available())
		return WT_EDEVICE;
	size_t xbytes = (size_t)(N * K) * elem_bytes(src_dt);
	dev_bufs d;
	if (!ok(cudaMalloc(&d.x, xbytes)) || !ok(cudaMalloc(&d.q, (size_t)nq)) ||
	    !ok(cudaMalloc((void **)&d.scale, (size_t)ns * sizeof(float))) ||
	    !ok(cudaMalloc((void **)&d.amax, (size_t)ns * sizeof(uint32_t))) ||
	    !ok(cudaMalloc((void **)&d.bad, sizeof(unsigned long long))) ||
	    !ok(cudaMemcpy(d.x, x, xbytes, cudaMemcpyHostToDevice)) ||
	    !ok(cudaMemset(d.amax, 0, (size_t)ns * sizeof(uint32_t))) ||
	    !ok(cudaMemset(d.bad, 0xff, sizeof(unsigned long long))))
		return WT_EDEVICE;
	int64_t splits = t.tile_rows < 4096 ? t.tile_rows : 4096;
	if (splits > N)
		splits = N;
	amax_kernel<<<dim3((unsigned)ns, (unsigned)splits), 256>>>(d.x, src_dt, t, d.amax, d.bad);
	unsigned long long bad = 0;
	if (!ok(cudaGetLastError()) ||
	    !ok(cudaMemcpy(&bad, d.bad, sizeof bad, cudaMemcpyDeviceToHost)))
		return WT_EDEVICE;
	if (bad != ~0ull) {
		if (bad_index)
			*bad_index = (int64_t)bad;
		return WT_ENONFINITE;
	}
	int64_t n_out = scheme == WT_QUANT_INT4_GROUP ? N * K / 2 : N * K;
	scale_kernel<<<grid_for(ns), 256>>>(scheme, d.amax, d.scale, ns);
	encode_kernel<<<grid_for(n_out), 256>>>(scheme, d.x, src_dt, t, d.scale,
	                                        static_cast<uint8_t *>(d.q), n_out);
	if (!ok(cudaGetLastError()) ||
	    !ok(cudaMemcpy(q, d.q, (size_t)nq, cudaMemcpyDeviceToHost)) ||
	    !ok(cudaMemcpy(scale, d.scale, (size_t)ns * sizeof(float), cudaMemcpyDeviceToHost)))
		return WT_EDEVICE;
	return WT_OK;
}

extern "C" int kern_cuda_dequantize(wt_quant scheme, const void *q, const float *scale, int64_t N,
                                    int64_t K, int64_t group, void *dst, wt_dtype dst_dt)
{
	tiling t;
	int64_t ns = kern_scale_count(scheme, N, K, group), nq = kern_qbytes(scheme, N, K);
	if (ns == 0 || nq == 0 || !tiling_of(scheme, N, K, group, &t))
		return WT_EINVAL;
	if (dst_dt != WT_F32 && dst_dt != WT_F16 && dst_dt != WT_BF16)
		return WT_EDTYPE;
	if (!q || !scale || !dst)
		return WT_EINVAL;
	if (!kern_cuda_available())
		return WT_EDEVICE;
	size_t ybytes = (size_t)(N * K) * elem_bytes(dst_dt);
	dev_bufs d;
	if (!ok(cudaMalloc(&d.x, ybytes)) || !ok(cudaMalloc(&d.q, (size_t)nq)) ||
	    !ok(cudaMalloc((void **)&d.scale, (size_t)ns * sizeof(float))) ||
	    !ok(cudaMemcpy(d.q, q, (size_t)nq, cudaMemcpyHostToDevice)) ||
	    !ok(cudaMemcpy(d.scale, scale, (size_t)ns * sizeof(float), cudaMemcpyHostToDevice)))
		return WT_EDEVICE;
	decode_kernel<<<grid_for(N * K), 256>>>(scheme, static_cast<const uint8_t *>(d.q), t,
	                                        d.scale, d.x, dst_dt, N * K);
	if (!ok(cudaGetLastError()) || !ok(cudaMemcpy(dst, d.x, ybytes, cudaMemcpyDeviceToHost)))
		return WT_EDEVICE;
	return WT_OK;
}
