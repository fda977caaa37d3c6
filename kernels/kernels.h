/*
 * kernels.h — module interface of kernels/: element conversion, slicing and
 * fusing copies, and the quantizers of docs/format.md section 4 (CPU). CUDA
 * variants live in kernels_cuda.h and must match these bit for bit.
 *
 * All arithmetic is IEEE float32 exactly as docs/format.md section 4.3 spells it;
 * rounding is round-to-nearest-even. Functions are thread-safe (no state) unless
 * noted. Element counts are int64_t/size_t, never int.
 */
#ifndef WT_KERNELS_H
#define WT_KERNELS_H

#include <stddef.h>
#include <stdint.h>

#include "weights/dtype.h"
#include "weights/error.h"
#include "weights/layout.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- scalar codecs ---- */
float kern_bf16_to_f32(uint16_t h);
uint16_t kern_f32_to_bf16(float f); /* RNE; NaN stays NaN */
float kern_f16_to_f32(uint16_t h);
uint16_t kern_f32_to_f16(float f); /* RNE; overflow -> inf */
float kern_e4m3_to_f32(uint8_t q); /* e4m3fn: no inf; 0x7f/0xff NaN */
uint8_t kern_f32_to_e4m3(float f); /* RNE, saturating to +-448, subnormals kept; NaN -> 0x7f */
float kern_e5m2_to_f32(uint8_t q);

/* ---- bulk conversion ----
 * Convert n elements from src_dt to dst_dt. Supported src: F32 F16 BF16 F64 (and
 * F8_E4M3/F8_E5M2 raw decode, no scale). Supported dst: F32 F16 BF16.
 * Buffers are aligned to their element size (else WT_EINVAL; malloc'd buffers are).
 * Same dtype is a memcpy. F64 is read as float32 (RNE) first, like every source
 * (docs/format.md section 4.1), so F64 -> BF16/F16 rounds twice. Returns WT_EDTYPE for an
 * unsupported pair. Large inputs run on the pool (kern_set_threads). */
int kern_convert(void *dst, wt_dtype dst_dt, const void *src, wt_dtype src_dt, size_t n);

/* Dequantize FP8 e4m3 with scales to dst_dt (F32/F16/BF16): x = f32(q) * scale, then RNE.
 * Block scales: scale[ceil(N/bn), ceil(K/bk)] for a [N,K] tensor (bn=bk=128 typical).
 * Per-tensor: pass bn = N, bk = K and one scale. */
int kern_dequant_fp8_block(void *dst, wt_dtype dst_dt, const uint8_t *q, int64_t N, int64_t K,
                           const float *scale, int64_t bn, int64_t bk);

/* MXFP4 (GPT-OSS, docs/format.md 4.6): n_blocks blocks of 16 bytes (32 E2M1 elements, element
 * 2b in the low nibble of byte b) with one E8M0 scale byte each, to F32 dst[n_blocks * 32]:
 * e2m1 * 2^(scale - 127), exact. Returns -1, or the first block whose scale is 255 (NaN;
 * dst is then partly written). */
int64_t kern_dequant_mxfp4(float *dst, const uint8_t *blocks, const uint8_t *scales,
                           int64_t n_blocks);
/* The same to BF16 dst[n_blocks * 32] (raw bits): every MXFP4 value is exact in BF16. */
int64_t kern_dequant_mxfp4_bf16(uint16_t *dst, const uint8_t *blocks, const uint8_t *scales,
                                int64_t n_blocks);
/* De-interleave rows: in each of `groups` runs of 2*half rows (row_bytes each), rows 2k go
 * to k and rows 2k+1 to half+k (GPT-OSS gate/up: [g0, u0, g1, u1, ...] -> [g...; u...]).
 * dst and src must not overlap. */
void kern_deinterleave_rows(uint8_t *dst, const uint8_t *src, int64_t groups, int64_t half,
                            size_t row_bytes);
/* Transpose each of `groups` [rows, cols] matrices of esz-byte elements into [cols, rows]
 * (GPT-OSS experts saved as [E, K, N] -> [E, N, K]). dst and src must not overlap. */
void kern_transpose_stack(uint8_t *dst, const uint8_t *src, int64_t groups, int64_t rows,
                          int64_t cols, size_t esz);

/* Copy a 2-D box: rows x row_bytes from src (row stride src_stride bytes) into dst
 * (row stride dst_stride bytes). Used for row/column slices and fusing. */
void kern_copy2d(void *dst, size_t dst_stride, const void *src, size_t src_stride, size_t rows,
                 size_t row_bytes);

/* ---- quantizers (docs/format.md section 4) ----
 * Input: `x` is a [N,K] row-major tensor of dtype src_dt (F32, F16 or BF16),
 * read as float32. x and scale aligned to their element size (else WT_EINVAL).
 * Output q and scale buffers are caller-allocated with the
 * shapes of the table:
 *   fp8-tensor   q u8 [N*K]          scale [1]
 *   fp8-channel  q u8 [N*K]          scale [N]
 *   fp8-block    q u8 [N*K]          scale [ceil(N/128) * ceil(K/128)]
 *   int8-channel q i8 [N*K]          scale [N]
 *   int4-group   q i32 [N * K/8]     scale [N * K/group]   (K % group == 0, K % 8 == 0)
 * A NaN or Inf input returns WT_ENONFINITE with *bad_index (if non-NULL) set to
 * the flat index of the first bad element; q/scale contents are then undefined.
 * `group` is only used by int4-group. */
int kern_quantize(wt_quant scheme, const void *x, wt_dtype src_dt, int64_t N, int64_t K,
                  int64_t group, void *q, float *scale, int64_t *bad_index);

/* Inverse: dst_dt (F32/F16/BF16) [N,K] from q + scale of `scheme`. */
int kern_dequantize(wt_quant scheme, const void *q, const float *scale, int64_t N, int64_t K,
                    int64_t group, void *dst, wt_dtype dst_dt);

/* Scale element count and quantized byte count for a [N,K] tensor (0 on bad args). */
int64_t kern_scale_count(wt_quant scheme, int64_t N, int64_t K, int64_t group);
int64_t kern_qbytes(wt_quant scheme, int64_t N, int64_t K);

/* Requantize e4m3 codes by ratio (merge of per-tensor scales):
 * q' = e4m3(clamp(f32(q) * ratio, -448, 448)). */
void kern_fp8_rescale(uint8_t *q, size_t n, float ratio);

/* Threads used for large tensors (a small fixed pool sized to the cores).
 * 0 = auto (online CPUs). Process-wide; call before heavy use. */
void kern_set_threads(int n);

#ifdef __cplusplus
}
#endif

#endif
