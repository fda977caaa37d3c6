/*
 * quant_int.c — the integer schemes of docs/format.md section 4.3:
 *   int8-channel: s = max(amax_row, 1e-8f) / 127.0f, q = clamp(rint(x / s), -127, 127)
 *   int4-group:   s = max(amax_group, 1e-8f) / 7.0f, q = clamp(rint(x / s), -8, 7), stored
 *                 as q + 8 in 4 bits; element k of each run of 8 at bits 4*(k%8) of a
 *                 little-endian int32, i.e. byte k/2 of the row holds elements k (low
 *                 nibble) and k+1 (high nibble) for even k.
 */
#include "common/common.h"
#include "kernels/kernels.h"
#include "kernels/kernels_int.h"

#define INT8_QMAX 127.0f
#define INT4_QMAX 7.0f

/* ---- loops ---- */
KERN_VEC static void int8_encode(int8_t *restrict q, const float *restrict x, size_t n, float s)
{
	for (size_t i = 0; i < n; i++)
		q[i] = (int8_t)kern_int_q(x[i], s, -127, 127);
}

KERN_VEC static void int8_encode_bf16(int8_t *restrict q, const uint16_t *restrict x, size_t n,
                                      float s)
{
	for (size_t i = 0; i < n; i++)
		q[i] = (int8_t)kern_int_q(kern_bf16_dec(x[i]), s, -127, 127);
}

KERN_VEC static void int8_decode(float *restrict d, const int8_t *restrict q, size_t n, float s)
{
	for (size_t i = 0; i < n; i++)
		d[i] = KERN_MUL((float)q[i], s);
}

/* n even: nibbles of x[0..n) into n/2 bytes */
KERN_VEC static void int4_encode(uint8_t *restrict q, const float *restrict x, size_t n, float s)
{
	uint8_t nib[KERN_CHUNK];
	for (size_t i = 0; i < n; i++)
		nib[i] = (uint8_t)(kern_int_q(x[i], s, -8, 7) + 8);
	for (size_t j = 0; j < n / 2; j++)
		q[j] = (uint8_t)(nib[2 * j] | (nib[2 * j + 1] << 4));
}

KERN_VEC static void int4_decode(float *restrict d, const uint8_t *restrict q, size_t n, float s)
{
	for (size_t j = 0; j < n / 2; j++) {
		d[2 * j] = KERN_MUL((float)((int32_t)(q[j] & 15u) - 8), s);
		d[2 * j + 1] = KERN_MUL((float)((int32_t)(q[j] >> 4) - 8), s);
	}
}

/* ---- int8-channel ---- */
static void int8_quant_rows(kq_args *a, int64_t r0, int64_t r1)
{
	float tmp[KERN_CHUNK];
	size_t K = (size_t)a->K;
	for (int64_t r = r0; r < r1; r++) {
		size_t off = (size_t)r * K;
		uint32_t m = kern_amax_bits(a->x, a->src_dt, off, K);
		if (m >= KERN_NONFINITE && kern_report_bad_row(a, r))
			return; /* later rows only hold later indices */
		float s = kern_int_scale(m, INT8_QMAX);
		a->scale[r] = s;
		if (a->src_dt == WT_BF16) {
			int8_encode_bf16((int8_t *)a->q + off, (const uint16_t *)a->x + off, K, s);
			continue;
		}
		for (size_t c = 0; c < K; c += KERN_CHUNK) {
			size_t len = K - c < KERN_CHUNK ? K - c : KERN_CHUNK;
			int8_encode((int8_t *)a->q + off + c,
			            kern_view_f32(tmp, a->x, a->src_dt, off + c, len), len, s);
		}
	}
}

static void int8_dequant_rows(kq_args *a, int64_t r0, int64_t r1)
{
	float tmp[KERN_CHUNK];
	size_t K = (size_t)a->K;
	for (int64_t r = r0; r < r1; r++) {
		size_t off = (size_t)r * K;
		for (size_t c = 0; c < K; c += KERN_CHUNK) {
			size_t len = K - c < KERN_CHUNK ? K - c : KERN_CHUNK;
			int8_decode(tmp, (const int8_t *)a->q + off + c, len, a->scale[r]);
			kern_store_f32(a->dst, a->dst_dt, off + c, tmp, len);
		}
	}
}

static int64_t int8_scales(int64_t N, int64_t K, int64_t group)
{
	(void)group;
	return N > 0 && K > 0 ? N : 0;
}

static int64_t int8_codes(int64_t N, int64_t K)
{
	uint64_t n;
	if (N <= 0 || K <= 0 || !wt_mul_u64((uint64_t)N, (uint64_t)K, &n) || n > INT64_MAX)
		return 0;
	return (int64_t)n;
}

/* ---- int4-group ---- */
static void int4_quant_rows(kq_args *a, int64_t r0, int64_t r1)
{
	float tmp[KERN_CHUNK];
	size_t K = (size_t)a->K, G = (size_t)a->group, ng = K / G;
	uint8_t *q = a->q;
	for (int64_t r = r0; r < r1; r++) {
		size_t row = (size_t)r * K;
		for (size_t g = 0; g < ng; g++) {
			size_t off = row + g * G;
			uint32_t m = kern_amax_bits(a->x, a->src_dt, off, G);
			if (m >= KERN_NONFINITE && kern_report_bad_row(a, r))
				return;
			float s = kern_int_scale(m, INT4_QMAX);
			a->scale[(size_t)r * ng + g] = s;
			for (size_t c = 0; c < G; c += KERN_CHUNK) {
				size_t len = G - c < KERN_CHUNK ? G - c : KERN_CHUNK;
				int4_encode(q + (off + c) / 2,
				            kern_view_f32(tmp, a->x, a->src_dt, off + c, len), len,
				            s);
			}
		}
	}
}

static void int4_dequant_rows(kq_args *a, int64_t r0, int64_t r1)
{
	float tmp[KERN_CHUNK];
	size_t K = (size_t)a->K, G = (size_t)a->group, ng = K / G;
	const uint8_t *q = a->q;
	for (int64_t r = r0; r < r1; r++) {
		for (size_t g = 0; g < ng; g++) {
			size_t off = (size_t)r * K + g * G;
			float s = a->scale[(size_t)r * ng + g];
			for (size_t c = 0; c < G; c += KERN_CHUNK) {
				size_t len = G - c < KERN_CHUNK ? G - c : KERN_CHUNK;
				int4_decode(tmp, q + (off + c) / 2, len, s);
				kern_store_f32(a->dst, a->dst_dt, off + c, tmp, len);
			}
		}
	}
}

/* group must be a positive multiple of 8 dividing K (so K % 8 == 0 too). */
static int64_t int4_scales(int64_t N, int64_t K, int64_t group)
{
	uint64_t n;
	if (N <= 0 || K <= 0 || group <= 0 || group % 8 != 0 || K % group != 0 ||
	    !wt_mul_u64((uint64_t)N, (uint64_t)(K / group), &n) || n > INT64_MAX)
		return 0;
	return (int64_t)n;
}

static int64_t int4_codes(int64_t N, int64_t K)
{
	uint64_t n;
	if (N <= 0 || K <= 0 || K % 8 != 0 || !wt_mul_u64((uint64_t)N, (uint64_t)(K / 2), &n) ||
	    n > INT64_MAX)
		return 0;
	return (int64_t)n;
}

const kq_scheme kern_scheme_int8_channel = {.id = WT_QUANT_INT8_CHANNEL,
                                            .unit_rows = 1,
                                            .scale_count = int8_scales,
                                            .qbytes = int8_codes,
                                            .prepare = NULL,
                                            .quant_rows = int8_quant_rows,
                                            .dequant_rows = int8_dequant_rows};
const kq_scheme kern_scheme_int4_group = {.id = WT_QUANT_INT4_GROUP,
                                          .unit_rows = 1,
                                          .scale_count = int4_scales,
                                          .qbytes = int4_codes,
                                          .prepare = NULL,
                                          .quant_rows = int4_quant_rows,
                                          .dequant_rows = int4_dequant_rows};
