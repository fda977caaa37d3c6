/*
 * codec.c — scalar element codecs (kernels.h) and the bulk load/store loops
 * the converters and quantizers run on (kernels_int.h). The per-element
 * arithmetic is the shared inline code of kernels_int.h; the loops here are
 * plain loops over contiguous arrays so the compiler vectorises them.
 */
#include <math.h>
#include <string.h>

#include "kernels/kernels.h"
#include "kernels/kernels_int.h"

/* ---- scalar codecs ---- */
float kern_bf16_to_f32(uint16_t h)
{
	return kern_bf16_dec(h);
}

uint16_t kern_f32_to_bf16(float f)
{
	return kern_bf16_enc(f);
}

float kern_f16_to_f32(uint16_t h)
{
	return kern_f16_dec(h);
}

uint16_t kern_f32_to_f16(float f)
{
	return kern_f16_enc(f);
}

float kern_e4m3_to_f32(uint8_t q)
{
	return kern_e4m3_dec(q);
}

uint8_t kern_f32_to_e4m3(float f)
{
	if (isnan(f))
		return 0x7f;
	if (f > KERN_FP8_MAX)
		f = KERN_FP8_MAX;
	if (f < -KERN_FP8_MAX)
		f = -KERN_FP8_MAX;
	return kern_e4m3_enc_clamped(f);
}

float kern_e5m2_to_f32(uint8_t q)
{
	return kern_f16_dec((uint16_t)((uint16_t)q << 8)); /* e5m2 is the top byte of an f16 */
}

/* ---- dtype classes ---- */
int kern_is_qsrc(wt_dtype dt)
{
	return dt == WT_F32 || dt == WT_F16 || dt == WT_BF16;
}

int kern_is_fdst(wt_dtype dt)
{
	return dt == WT_F32 || dt == WT_F16 || dt == WT_BF16;
}

static int is_csrc(wt_dtype dt)
{
	return kern_is_qsrc(dt) || dt == WT_F64 || dt == WT_F8_E4M3 || dt == WT_F8_E5M2;
}

/* ---- bulk loops ---- */
KERN_VEC static void load_bf16(float *restrict d, const uint16_t *restrict s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		d[i] = kern_bf16_dec(s[i]);
}

KERN_VEC static void load_f16(float *restrict d, const uint16_t *restrict s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		d[i] = kern_f16_dec(s[i]);
}

KERN_VEC static void load_f64(float *restrict d, const double *restrict s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		d[i] = (float)s[i];
}

KERN_VEC static void load_e4m3(float *restrict d, const uint8_t *restrict s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		d[i] = kern_e4m3_dec(s[i]);
}

KERN_VEC static void load_e5m2(float *restrict d, const uint8_t *restrict s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		d[i] = kern_f16_dec((uint16_t)((uint16_t)s[i] << 8));
}

void kern_load_f32(float *dst, const void *src, wt_dtype src_dt, size_t off, size_t n)
{
	switch (src_dt) {
	case WT_F32:
		memcpy(dst, (const float *)src + off, n * sizeof(float));
		break;
	case WT_BF16:
		load_bf16(dst, (const uint16_t *)src + off, n);
		break;
	case WT_F16:
		load_f16(dst, (const uint16_t *)src + off, n);
		break;
	case WT_F64:
		load_f64(dst, (const double *)src + off, n);
		break;
	case WT_F8_E4M3:
		load_e4m3(dst, (const uint8_t *)src + off, n);
		break;
	case WT_F8_E5M2:
		load_e5m2(dst, (const uint8_t *)src + off, n);
		break;
	default:
		break;
	}
}

const float *kern_view_f32(float *tmp, const void *src, wt_dtype src_dt, size_t off, size_t n)
{
	if (src_dt == WT_F32)
		return (const float *)src + off;
	kern_load_f32(tmp, src, src_dt, off, n);
	return tmp;
}

KERN_VEC static void store_bf16(uint16_t *restrict d, const float *restrict s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		d[i] = kern_bf16_enc(s[i]);
}

KERN_VEC static void store_f16(uint16_t *restrict d, const float *restrict s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		d[i] = kern_f16_enc(s[i]);
}

void kern_store_f32(void *dst, wt_dtype dst_dt, size_t off, const float *src, size_t n)
{
	switch (dst_dt) {
	case WT_F32:
		memcpy((float *)dst + off, src, n * sizeof(float));
		break;
	case WT_BF16:
		store_bf16((uint16_t *)dst + off, src, n);
		break;
	case WT_F16:
		store_f16((uint16_t *)dst + off, src, n);
		break;
	default:
		break;
	}
}

/* Max of the masked magnitude bits: for non-negative IEEE values the bit patterns
 * order like the values, and Inf/NaN sort above every finite value. */
static inline uint32_t amax32_inl(const uint32_t *restrict s, size_t n)
{
	uint32_t m = 0;
	for (size_t i = 0; i < n; i++) {
		uint32_t a = s[i] & 0x7fffffffu;
		m = a > m ? a : m;
	}
	return m;
}

static inline uint16_t amax16_inl(const uint16_t *restrict s, size_t n)
{
	uint16_t m = 0;
	for (size_t i = 0; i < n; i++) {
		uint16_t a = (uint16_t)(s[i] & 0x7fffu);
		m = a > m ? a : m;
	}
	return m;
}

KERN_VEC static uint32_t amax_u32(const uint32_t *restrict s, size_t n)
{
	return amax32_inl(s, n);
}

KERN_VEC static uint32_t amax_u16(const uint16_t *restrict s, size_t n)
{
	return amax16_inl(s, n);
}

/* One call per row for fp8-block: the per-tile loop stays inside the clone. */
KERN_VEC static void amax_tiles_u32(const uint32_t *restrict s, size_t n, size_t tile,
                                    uint32_t *restrict am)
{
	for (size_t t = 0; t * tile < n; t++) {
		size_t len = n - t * tile < tile ? n - t * tile : tile;
		uint32_t m = amax32_inl(s + t * tile, len);
		am[t] = m > am[t] ? m : am[t];
	}
}

KERN_VEC static void amax_tiles_u16(const uint16_t *restrict s, size_t n, size_t tile,
                                    uint32_t *restrict am)
{
	for (size_t t = 0; t * tile < n; t++) {
		size_t len = n - t * tile < tile ? n - t * tile : tile;
		uint32_t m = (uint32_t)amax16_inl(s + t * tile, len) << 16;
		am[t] = m > am[t] ? m : am[t];
	}
}

void kern_amax_tiles(const void *src, wt_dtype src_dt, size_t off, size_t n, size_t tile,
                     uint32_t *am)
{
	if (src_dt == WT_F32) {
		amax_tiles_u32((const uint32_t *)src + off, n, tile, am);
	} else if (src_dt == WT_BF16) {
		amax_tiles_u16((const uint16_t *)src + off, n, tile, am);
	} else {
		for (size_t t = 0; t * tile < n; t++) {
			size_t len = n - t * tile < tile ? n - t * tile : tile;
			uint32_t m = kern_amax_bits(src, src_dt, off + t * tile, len);
			am[t] = m > am[t] ? m : am[t];
		}
	}
}

uint32_t kern_amax_bits(const void *src, wt_dtype src_dt, size_t off, size_t n)
{
	switch (src_dt) {
	case WT_F32:
		return amax_u32((const uint32_t *)src + off, n);
	case WT_BF16:
		return amax_u16((const uint16_t *)src + off, n) << 16;
	case WT_F16: /* f16 -> f32 is monotonic on magnitudes and keeps Inf/NaN */
		return kern_f2u(kern_f16_dec((uint16_t)amax_u16((const uint16_t *)src + off, n)));
	default:
		return 0;
	}
}

int64_t kern_find_nonfinite(const void *src, wt_dtype src_dt, size_t off, size_t n)
{
	float tmp[KERN_CHUNK];
	for (size_t c = 0; c < n; c += KERN_CHUNK) {
		size_t len = n - c < KERN_CHUNK ? n - c : KERN_CHUNK;
		const float *x = kern_view_f32(tmp, src, src_dt, off + c, len);
		for (size_t i = 0; i < len; i++)
			if (!isfinite(x[i]))
				return (int64_t)(c + i);
	}
	return -1;
}

/* ---- kern_convert ---- */
typedef struct conv_job {
	void *dst;
	wt_dtype dst_dt;
	const void *src;
	wt_dtype src_dt;
	size_t n;
} conv_job;

#define CONV_UNIT 16384 /* elements per parallel unit */

static void conv_range(void *ctx, int64_t begin, int64_t end)
{
	const conv_job *j = ctx;
	float tmp[KERN_CHUNK];
	size_t lo = (size_t)begin * CONV_UNIT;
	size_t hi = (size_t)end * CONV_UNIT;
	if (hi > j->n)
		hi = j->n;
	for (size_t c = lo; c < hi; c += KERN_CHUNK) {
		size_t len = hi - c < KERN_CHUNK ? hi - c : KERN_CHUNK;
		if (j->dst_dt == WT_F32) {
			kern_load_f32((float *)j->dst + c, j->src, j->src_dt, c, len);
		} else {
			const float *x = kern_view_f32(tmp, j->src, j->src_dt, c, len);
			kern_store_f32(j->dst, j->dst_dt, c, x, len);
		}
	}
}

int kern_convert(void *dst, wt_dtype dst_dt, const void *src, wt_dtype src_dt, size_t n)
{
	if (dst_dt == src_dt && wt_dtype_size(src_dt) > 0) {
		if (n > 0)
			memcpy(dst, src, n * wt_dtype_size(src_dt));
		return WT_OK;
	}
	if (!is_csrc(src_dt) || !kern_is_fdst(dst_dt))
		return WT_EDTYPE;
	if (n == 0)
		return WT_OK;
	if (!kern_aligned(src, src_dt) || !kern_aligned(dst, dst_dt))
		return WT_EINVAL;
	conv_job j = {dst, dst_dt, src, src_dt, n};
	kern_pool_for((int64_t)((n + CONV_UNIT - 1) / CONV_UNIT), CONV_UNIT, conv_range, &j);
	return WT_OK;
}
