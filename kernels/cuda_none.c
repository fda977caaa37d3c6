/*
 * cuda_none.c — the CUDA entry points of kernels_cuda.h in a build without nvcc:
 * no device, so every call reports WT_EDEVICE and callers use the CPU paths.
 */
#include "kernels/kernels_cuda.h"
#include "weights/error.h"

#ifndef WT_HAVE_CUDA
int kern_cuda_available(void)
{
	return 0;
}

int kern_cuda_built(void)
{
	return 0;
}

int kern_cuda_quantize(wt_quant scheme, const void *x, wt_dtype src_dt, int64_t N, int64_t K,
                       int64_t group, void *q, float *scale, int64_t *bad_index)
{
	(void)scheme, (void)x, (void)src_dt, (void)N, (void)K, (void)group, (void)q, (void)scale;
	(void)bad_index;
	return WT_EDEVICE;
}

int kern_cuda_dequantize(wt_quant scheme, const void *q, const float *scale, int64_t N, int64_t K,
                         int64_t group, void *dst, wt_dtype dst_dt)
{
	(void)scheme, (void)q, (void)scale, (void)N, (void)K, (void)group, (void)dst, (void)dst_dt;
	return WT_EDEVICE;
}
#else
typedef int kern_cuda_none_unused; /* ISO C: no empty translation unit */
#endif
