/*
 * kernels_cuda.h — CUDA variants of the quantizers of kernels.h. Same arguments
 * and results as kern_quantize / kern_dequantize (bit for bit), taking HOST
 * buffers: each call copies in, runs on the current device, copies out.
 *
 * Built from kernels/quant.cu when nvcc exists (WT_HAVE_CUDA); without it, and
 * on machines with no usable device, kern_cuda_available() is 0 and the others
 * return WT_EDEVICE. Any CUDA error from device discovery counts as "no device".
 * Thread-safe; calls serialise on the device's default stream.
 */
#ifndef WT_KERNELS_CUDA_H
#define WT_KERNELS_CUDA_H

#include <stdint.h>

#include "weights/dtype.h"
#include "weights/layout.h"

#ifdef __cplusplus
extern "C" {
#endif

/* 1 if this build has CUDA kernels and a device is usable, else 0. */
int kern_cuda_available(void);

/* 1 if this build has CUDA kernels (nvcc was found), whether or not a device exists. */
int kern_cuda_built(void);

/* As kern_quantize; WT_EDEVICE if no device or a CUDA call fails. */
int kern_cuda_quantize(wt_quant scheme, const void *x, wt_dtype src_dt, int64_t N, int64_t K,
                       int64_t group, void *q, float *scale, int64_t *bad_index);

/* As kern_dequantize; WT_EDEVICE if no device or a CUDA call fails. */
int kern_cuda_dequantize(wt_quant scheme, const void *q, const float *scale, int64_t N, int64_t K,
                         int64_t group, void *dst, wt_dtype dst_dt);

#ifdef __cplusplus
}
#endif

#endif
