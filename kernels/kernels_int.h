/*
 * kernels_int.h — private to kernels/: the element codecs and per-element
 * quantizer formulas of docs/format.md section 4.3, written once as inline functions
 * that compile both as C (CPU paths) and as CUDA device code (quant.cu), so
 * the two paths share every bit of arithmetic; plus the bulk load/store
 * helpers and the thread pool (C only).
 *
 * Exactness rules: float32 only, no contraction (the kernels are built with
 * -ffp-contract=off, nvcc with -fmad=false, and device code uses __fdiv_rn /
 * __fmul_rn / __fadd_rn), round-to-nearest-even everywhere.
 */
#ifndef WT_KERNELS_INT_H
#define WT_KERNELS_INT_H

#include <stdint.h>
#include <string.h>

#ifdef __CUDACC__
#define KERN_HD static inline __host__ __device__
#else
#define KERN_HD static inline
#endif

#ifdef __CUDA_ARCH__
#define KERN_DIV(a, b) __fdiv_rn((a), (b))
#define KERN_MUL(a, b) __fmul_rn((a), (b))
#define KERN_ADD(a, b) __fadd_rn((a), (b))
#else
#define KERN_DIV(a, b) ((a) / (b))
#define KERN_MUL(a, b) ((a) * (b))
#define KERN_ADD(a, b) ((a) + (b))
#endif

#define KERN_FP8_MAX      448.0f
#define KERN_FP8_FLOOR    1e-4f       /* s = max(amax, 1e-4f) / 448.0f */
#define KERN_INT_FLOOR    1e-8f       /* int8 / int4: s = max(amax, 1e-8f) / 127 or 7 */
#define KERN_BLOCK        128         /* fp8-block tile edge */
#define KERN_NONFINITE    0x7f800000u /* abs bits >= this: Inf or NaN */
#define KERN_THREE22      12582912.0f /* 1.5 * 2^23: same for |x| < 2^22 of either sign */
#define KERN_THREE22_BITS 0x4b400000u

/* ---- bit casts ---- */
KERN_HD uint32_t kern_f2u(float f)
{
	uint32_t u;
	memcpy(&u, &f, sizeof u);
	return u;
}

KERN_HD float kern_u2f(uint32_t u)
{
	float f;
	memcpy(&f, &u, sizeof f);
	return f;
}

/* ---- 16-bit floats ---- */
KERN_HD float kern_bf16_dec(uint16_t h)
{
	return kern_u2f((uint32_t)h << 16);
}

KERN_HD uint16_t kern_bf16_enc(float f)
{
	uint32_t u = kern_f2u(f);
	uint32_t rne = (u + 0x7fffu + ((u >> 16) & 1u)) >> 16;
	uint32_t nan = (u >> 16) | 0x40u; /* quiet, sign and top payload kept */
	return (uint16_t)((u & 0x7fffffffu) > KERN_NONFINITE ? nan : rne);
}

KERN_HD float kern_f16_dec(uint16_t h)
{
	uint32_t sign = ((uint32_t)h & 0x8000u) << 16;
	uint32_t em = (uint32_t)h & 0x7fffu;
	uint32_t normal = (em << 13) + (112u << 23);             /* rebias 15 -> 127 */
	uint32_t special = (em << 13) | KERN_NONFINITE;          /* Inf / NaN */
	float sub = KERN_MUL((float)em, 5.9604644775390625e-8f); /* em * 2^-24, exact */
	uint32_t mag = em >= 0x7c00u ? special : normal;
	mag = em < 0x400u ? kern_f2u(sub) : mag;
	return kern_u2f(sign | mag);
}

KERN_HD uint16_t kern_f16_enc(float f)
{
	uint32_t u = kern_f2u(f);
	uint32_t sign = (u >> 16) & 0x8000u;
	uint32_t a = u & 0x7fffffffu;
	/* a >= 65536: Inf (or NaN, kept quiet with its top payload bits) */
	uint32_t big = a > KERN_NONFINITE ? (0x7e00u | ((a >> 13) & 0x3ffu)) : 0x7c00u;
	/* a < 2^-14: the f16 subnormal quantum 2^-24 is half an ulp of 0.5f, so adding 0.5f
	 * rounds to it (RNE) and the low bits are the count of quanta */
	uint32_t sub = kern_f2u(KERN_ADD(kern_u2f(a), 0.5f)) - 0x3f000000u;
	/* normal: rebias 127 -> 15, round the 13 dropped bits to nearest even (may carry into
	 * the exponent, up to Inf) */
	uint32_t norm = (a + 0xc8000fffu + ((a >> 13) & 1u)) >> 13;
	uint32_t mag = a >= 0x47800000u ? big : norm;
	mag = a < 0x38800000u ? sub : mag;
	return (uint16_t)(sign | mag);
}

/* ---- float8 e4m3fn (bias 7, no Inf, 0x7f/0xff NaN, max 448, subnormals 2^-9) ---- */
KERN_HD float kern_e4m3_dec(uint8_t q)
{
	uint32_t sign = ((uint32_t)q & 0x80u) << 24;
	uint32_t em = (uint32_t)q & 0x7fu;
	uint32_t normal = (em << 20) + (120u << 23);          /* rebias 7 -> 127 */
	float sub = KERN_MUL((float)(em & 7u), 0.001953125f); /* m * 2^-9, exact */
	uint32_t mag = em < 8u ? kern_f2u(sub) : normal;
	mag = em == 0x7fu ? 0x7fc00000u : mag;
	return kern_u2f(sign | mag);
}

/* e4m3 code (without sign) of a magnitude given as float bits, a <= 448.0f's bits, RNE.
 * With e = the exponent of a (at least -6, the smallest normal exponent), c = 2^(e + 20)
 * has an ulp of 2^(e - 3), the e4m3 quantum at e, so the float sum a + c rounds a to
 * e4m3 (ties to even) and its low bits count quanta above c: 0..16. The code is then
 * ((e + 6) << 3) + count, which also covers subnormals (e = -6, count 0..8) and a
 * carry into the next binade (count 16). */
KERN_HD uint32_t kern_e4m3_enc_mag(uint32_t a)
{
	uint32_t e = a >> 23; /* biased exponent */
	e = e < 121u ? 121u : e;
	uint32_t c = (e + 20u) << 23;
	uint32_t count = kern_f2u(KERN_ADD(kern_u2f(a), kern_u2f(c))) - c;
	return ((e - 121u) << 3) + count;
}

#define KERN_FP8_MAX_BITS 0x43e00000u /* 448.0f */

/* e4m3 of a value already clamped to [-448, 448] (not NaN), RNE. */
KERN_HD uint8_t kern_e4m3_enc_clamped(float v)
{
	uint32_t u = kern_f2u(v);
	return (uint8_t)(((u >> 24) & 0x80u) | kern_e4m3_enc_mag(u & 0x7fffffffu));
}

/* ---- the formulas of docs/format.md section 4.3, per element ---- */
KERN_HD float kern_fp8_scale(uint32_t amax_bits)
{
	float a = kern_u2f(amax_bits);
	return KERN_DIV(a > KERN_FP8_FLOOR ? a : KERN_FP8_FLOOR, KERN_FP8_MAX);
}

KERN_HD float kern_int_scale(uint32_t amax_bits, float qmax)
{
	float a = kern_u2f(amax_bits);
	return KERN_DIV(a > KERN_INT_FLOOR ? a : KERN_INT_FLOOR, qmax);
}

/* q = e4m3(clamp(x / s, -448, 448)); x finite. The clamp is done on the magnitude's
 * bits (for non-NaN floats |v| <= 448 iff bits(|v|) <= bits(448)), the same value. */
KERN_HD uint8_t kern_fp8_q(float x, float s)
{
	uint32_t u = kern_f2u(KERN_DIV(x, s));
	uint32_t a = u & 0x7fffffffu;
	a = a > KERN_FP8_MAX_BITS ? KERN_FP8_MAX_BITS : a;
	return (uint8_t)(((u >> 24) & 0x80u) | kern_e4m3_enc_mag(a));
}

/* rint (half to even) of |v| < 2^22. */
KERN_HD int32_t kern_rint_small(float v)
{
	return (int32_t)(kern_f2u(KERN_ADD(v, KERN_THREE22)) - KERN_THREE22_BITS);
}

/* q = clamp(rint(x / s), lo, hi); |x / s| stays near qmax because s >= amax / qmax. */
KERN_HD int32_t kern_int_q(float x, float s, int32_t lo, int32_t hi)
{
	int32_t r = kern_rint_small(KERN_DIV(x, s));
	r = r < lo ? lo : r;
	return r > hi ? hi : r;
}

#ifndef __CUDACC__
#include <stdatomic.h>

/* Hot loops get AVX-512 and AVX2 clones picked at load time (GCC on x86-64); the
 * arithmetic is the same IEEE float32 in every clone (no FMA contraction), so the
 * bytes do not depend on the CPU. The sanitizer builds (make asan, make tsan) leave
 * the clones out, so the suite runs the baseline-ISA loops there and the widest clone
 * here, both against the same reference (ThreadSanitizer would also crash in the
 * clones' resolvers, which run at load, before its runtime). */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__) &&       \
    !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
#define KERN_VEC __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define KERN_VEC
#endif
#include <stddef.h>

#include "weights/dtype.h"
#include "weights/layout.h"

/* ---- bulk helpers (codec.c) ---- */
#define KERN_CHUNK 256 /* elements per stack buffer in the row loops */

/* 1 if p is aligned for elements of dt (the loops read and write whole elements). */
static inline int kern_aligned(const void *p, wt_dtype dt)
{
	size_t a = wt_dtype_size(dt);
	return a == 0 || ((uintptr_t)p & (a - 1)) == 0;
}

/* 1 if dt is a quantizer input (F32 F16 BF16). */
int kern_is_qsrc(wt_dtype dt);
/* 1 if dt is a conversion output (F32 F16 BF16). */
int kern_is_fdst(wt_dtype dt);
/* dst[i] = float(src[off + i]) for i < n; src_dt as in kern_convert. */
void kern_load_f32(float *dst, const void *src, wt_dtype src_dt, size_t off, size_t n);
/* Pointer to n floats of src starting at element off: src itself for F32, else decoded
 * into tmp (>= n floats). */
const float *kern_view_f32(float *tmp, const void *src, wt_dtype src_dt, size_t off, size_t n);
/* dst[off + i] = RNE(src[i]) in dst_dt (F32 F16 BF16). */
void kern_store_f32(void *dst, wt_dtype dst_dt, size_t off, const float *src, size_t n);
/* Max of |x| as float32 bits over src[off, off+n); >= KERN_NONFINITE if any Inf/NaN. */
uint32_t kern_amax_bits(const void *src, wt_dtype src_dt, size_t off, size_t n);
/* am[t] = max(am[t], amax bits of tile t) for the tiles of `tile` elements (the last
 * one partial) of src[off, off+n). */
void kern_amax_tiles(const void *src, wt_dtype src_dt, size_t off, size_t n, size_t tile,
                     uint32_t *am);
/* Flat index (from off) of the first Inf/NaN in src[off, off+n), or -1. */
int64_t kern_find_nonfinite(const void *src, wt_dtype src_dt, size_t off, size_t n);

/* ---- thread pool (pool.c) ----
 * fn(ctx, begin, end) runs over contiguous ranges that cover [0, n_units) exactly
 * once, on the pool and on the calling thread; returns when all have finished.
 * `unit_elems` (elements per unit) decides whether splitting is worth it. Ranges
 * never depend on timing, and callers write disjoint outputs per unit, so the
 * results are the same for any thread count. Safe to call from several threads. */
typedef void (*kern_task_fn)(void *ctx, int64_t begin, int64_t end);
void kern_pool_for(int64_t n_units, int64_t unit_elems, kern_task_fn fn, void *ctx);
int kern_pool_threads(void);

/* ---- quantization schemes (quant.c drives them, quant_fp8.c / quant_int.c fill them) ----
 * One job's arguments. Row functions write only their own rows' outputs (and their
 * own scale elements), so any split of the rows gives the same bytes. */
typedef struct kq_args {
	const void *x; /* quantize: [N,K] source of src_dt */
	wt_dtype src_dt;
	int64_t N, K, group;
	void *q;      /* quantize: output codes; dequantize: input codes */
	float *scale; /* quantize: output scales; dequantize: input scales */
	void *dst;    /* dequantize: [N,K] output of dst_dt */
	wt_dtype dst_dt;
	int64_t bn, bk;     /* fp8 dequantize: scale tile (rows, cols) */
	uint32_t amax_bits; /* fp8-tensor: whole-tensor max, set by prepare */
	_Atomic uint32_t amax_acc;
	_Atomic int64_t bad; /* first non-finite flat index; INT64_MAX if none */
} kq_args;

typedef struct kq_scheme {
	wt_quant id;
	int64_t unit_rows;    /* rows per parallel unit */
	int64_t dq_bn, dq_bk; /* fp8 schemes: scale tile for dequantization, 0 = whole dim */
	int64_t (*scale_count)(int64_t N, int64_t K, int64_t group); /* 0 = bad args */
	int64_t (*qbytes)(int64_t N, int64_t K);                     /* 0 = bad args */
	void (*prepare)(kq_args *a); /* optional whole-tensor step before quant_rows */
	void (*quant_rows)(kq_args *a, int64_t r0, int64_t r1);
	void (*dequant_rows)(kq_args *a, int64_t r0, int64_t r1);
} kq_scheme;

extern const kq_scheme kern_scheme_fp8_tensor;
extern const kq_scheme kern_scheme_fp8_channel;
extern const kq_scheme kern_scheme_fp8_block;
extern const kq_scheme kern_scheme_int8_channel;
extern const kq_scheme kern_scheme_int4_group;

/* Row functions shared by the fp8 schemes. */
void kern_fp8_dequant_rows(kq_args *a, int64_t r0, int64_t r1);
/* Records the first non-finite element of row r (if any) into a->bad; returns 1 if found. */
int kern_report_bad_row(kq_args *a, int64_t r);
int64_t kern_nblocks(int64_t n, int64_t b); /* ceil(n / b) */

/* *slot = min(*slot, v), atomically (first-bad-element reports). */
static inline void kern_atomic_min(_Atomic int64_t *slot, int64_t v)
{
	int64_t cur = atomic_load(slot);
	while (v < cur && !atomic_compare_exchange_weak(slot, &cur, v))
		;
}
#endif

#endif
