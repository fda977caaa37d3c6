/* test_kernels_codec.c — element codecs (e4m3 exhaustive, bf16/f16 RNE incl. every
 * midpoint), bulk conversion, 2-D copies and FP8 block dequantization. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "kernels/kernels.h"

static uint32_t f2u(float f)
{
	uint32_t u;
	memcpy(&u, &f, 4);
	return u;
}

static float u2f(uint32_t u)
{
	float f;
	memcpy(&f, &u, 4);
	return f;
}

/* e4m3fn value of a code from the definition: bias 7, 3 mantissa bits, exp 0 subnormal. */
static double ref_e4m3(unsigned c)
{
	unsigned e = (c >> 3) & 15, m = c & 7;
	double v = e == 0 ? ldexp(m / 8.0, -6) : ldexp(1.0 + m / 8.0, (int)e - 7);
	return (c & 0x80) ? -v : v;
}

/* f16 value of a code from the definition. */
static double ref_f16(unsigned c)
{
	unsigned e = (c >> 10) & 31, m = c & 1023;
	double v = e == 0 ? ldexp(m / 1024.0, -14) : ldexp(1.0 + m / 1024.0, (int)e - 15);
	if (e == 31)
		v = m ? NAN : INFINITY;
	return (c & 0x8000) ? -v : v;
}

static void test_e4m3_all_codes(void **state)
{
	(void)state;
	for (unsigned c = 0; c < 256; c++) {
		float f = kern_e4m3_to_f32((uint8_t)c);
		if ((c & 0x7f) == 0x7f) {
			assert_true(isnan(f));
			continue;
		}
		assert_true((double)f == ref_e4m3(c));
		assert_int_equal(signbit(f) != 0, (c & 0x80) != 0); /* -0 keeps its sign */
		assert_int_equal(kern_f32_to_e4m3(f), c);
	}
	assert_true(kern_e4m3_to_f32(0x7e) == 448.0f);
	assert_true(kern_e4m3_to_f32(0x01) == ldexpf(1.0f, -9));
}

static void test_e4m3_midpoints(void **state)
{
	(void)state;
	/* positive codes 0..0x7e are increasing; every midpoint ties to the even code */
	for (unsigned c = 0; c < 0x7e; c++) {
		float a = kern_e4m3_to_f32((uint8_t)c), b = kern_e4m3_to_f32((uint8_t)(c + 1));
		float mid = (a + b) / 2; /* exact: one more mantissa bit than e4m3 */
		assert_true((double)mid == (ref_e4m3(c) + ref_e4m3(c + 1)) / 2);
		unsigned even = (c & 1) ? c + 1 : c;
		assert_int_equal(kern_f32_to_e4m3(mid), even);
		assert_int_equal(kern_f32_to_e4m3(-mid), even | 0x80);
		assert_int_equal(kern_f32_to_e4m3(nextafterf(mid, 0)), c);
		assert_int_equal(kern_f32_to_e4m3(nextafterf(mid, 1000)), c + 1);
		assert_int_equal(kern_f32_to_e4m3(-nextafterf(mid, 1000)), (c + 1) | 0x80);
	}
}

static void test_e4m3_saturation_subnormals(void **state)
{
	(void)state;
	assert_int_equal(kern_f32_to_e4m3(448.0f), 0x7e);
	assert_int_equal(kern_f32_to_e4m3(464.0f), 0x7e); /* would round to 480 = NaN code */
	assert_int_equal(kern_f32_to_e4m3(1e30f), 0x7e);
	assert_int_equal(kern_f32_to_e4m3(INFINITY), 0x7e);
	assert_int_equal(kern_f32_to_e4m3(-INFINITY), 0xfe);
	assert_int_equal(kern_f32_to_e4m3(-500.0f), 0xfe);
	assert_int_equal(kern_f32_to_e4m3(NAN), 0x7f);
	/* subnormals: quantum 2^-9 */
	assert_int_equal(kern_f32_to_e4m3(ldexpf(1, -9)), 0x01);
	assert_int_equal(kern_f32_to_e4m3(ldexpf(1, -10)), 0x00);  /* tie -> even 0 */
	assert_int_equal(kern_f32_to_e4m3(ldexpf(3, -10)), 0x02);  /* tie 1|2 -> 2 */
	assert_int_equal(kern_f32_to_e4m3(ldexpf(15, -10)), 0x08); /* tie 7|8 -> 8 = 2^-6 */
	assert_int_equal(kern_f32_to_e4m3(ldexpf(1, -6)), 0x08);
	assert_int_equal(kern_f32_to_e4m3(-ldexpf(1, -11)), 0x80); /* -0 */
	assert_int_equal(kern_f32_to_e4m3(1e-30f), 0x00);
	assert_int_equal(kern_f32_to_e4m3(ldexpf(1, -140)), 0x00); /* f32 subnormal input */
}

static void test_bf16(void **state)
{
	(void)state;
	assert_int_equal(kern_f32_to_bf16(1.0f), 0x3f80);
	assert_int_equal(kern_f32_to_bf16(1.0f + ldexpf(1, -8)), 0x3f80);     /* tie -> even */
	assert_int_equal(kern_f32_to_bf16(1.0f + 3 * ldexpf(1, -8)), 0x3f82); /* tie -> even */
	assert_int_equal(kern_f32_to_bf16(nextafterf(1.0f + ldexpf(1, -8), 2)), 0x3f81);
	assert_int_equal(kern_f32_to_bf16(-1.0f), 0xbf80);
	assert_int_equal(kern_f32_to_bf16(INFINITY), 0x7f80);
	assert_int_equal(kern_f32_to_bf16(u2f(0x7f7fffff)), 0x7f80); /* FLT_MAX rounds up */
	uint16_t n = kern_f32_to_bf16(NAN);
	assert_true((n & 0x7f80) == 0x7f80 && (n & 0x7f) != 0);
	assert_true(isnan(kern_bf16_to_f32(kern_f32_to_bf16(u2f(0x7f800001)))));
	/* every bf16 code round-trips; every midpoint of adjacent positive codes ties even */
	for (uint32_t c = 0; c < 0x7f80; c++) {
		float a = kern_bf16_to_f32((uint16_t)c);
		assert_int_equal(f2u(a), c << 16);
		assert_int_equal(kern_f32_to_bf16(a), c);
		assert_int_equal(kern_f32_to_bf16(-a), c | 0x8000);
		float mid = u2f((c << 16) | 0x8000);
		assert_int_equal(kern_f32_to_bf16(mid), (c & 1) ? c + 1 : c);
		assert_int_equal(kern_f32_to_bf16(u2f((c << 16) | 0x7fff)), c);
		assert_int_equal(kern_f32_to_bf16(u2f((c << 16) | 0x8001)), c + 1);
	}
}

static void test_f16(void **state)
{
	(void)state;
	for (unsigned c = 0; c < 0x10000; c++) {
		float f = kern_f16_to_f32((uint16_t)c);
		double r = ref_f16(c);
		if (isnan(r)) {
			assert_true(isnan(f));
			assert_true((kern_f32_to_f16(f) & 0x7fff) > 0x7c00);
			continue;
		}
		assert_true((double)f == r);
		assert_int_equal(kern_f32_to_f16(f), c);
	}
	for (unsigned c = 0; c < 0x7bff; c++) { /* midpoints of adjacent finite values */
		double a = ref_f16(c), b = ref_f16(c + 1);
		float mid = (float)((a + b) / 2); /* exact in f32 */
		assert_true((double)mid == (a + b) / 2);
		assert_int_equal(kern_f32_to_f16(mid), (c & 1) ? c + 1 : c);
		assert_int_equal(kern_f32_to_f16(-mid), ((c & 1) ? c + 1 : c) | 0x8000);
		assert_int_equal(kern_f32_to_f16(nextafterf(mid, 0)), c);
		assert_int_equal(kern_f32_to_f16(nextafterf(mid, 1e9f)), c + 1);
	}
	assert_int_equal(kern_f32_to_f16(65504.0f), 0x7bff);
	assert_int_equal(kern_f32_to_f16(nextafterf(65520.0f, 0)), 0x7bff);
	assert_int_equal(kern_f32_to_f16(65520.0f), 0x7c00); /* tie -> even = overflow -> inf */
	assert_int_equal(kern_f32_to_f16(1e10f), 0x7c00);
	assert_int_equal(kern_f32_to_f16(-INFINITY), 0xfc00);
	assert_int_equal(kern_f32_to_f16(ldexpf(1, -25)), 0x0000); /* tie 0|min sub -> 0 */
	assert_int_equal(kern_f32_to_f16(ldexpf(3, -25)), 0x0002);
	assert_int_equal(kern_f32_to_f16(ldexpf(1, -140)), 0x0000);
	/* e5m2 is the top byte of an f16 */
	assert_true(kern_e5m2_to_f32(0x3c) == 1.0f);
	assert_true(kern_e5m2_to_f32(0x7b) == 57344.0f);
	assert_true(isinf(kern_e5m2_to_f32(0x7c)));
	assert_true(kern_e5m2_to_f32(0x01) == ldexpf(1, -16));
}

static uint64_t rng_state;
static uint32_t rnd(void)
{
	rng_state = rng_state * 6364136223846793005ull + 1442695040888963407ull;
	return (uint32_t)(rng_state >> 32);
}

static void test_convert(void **state)
{
	(void)state;
	enum { N = 70001 }; /* over several parallel units, odd tail */
	rng_state = 0x5eed1234u;
	printf("seed 0x5eed1234\n");
	float *f = malloc(N * sizeof(float));
	uint16_t *h = malloc(N * 2), *b = malloc(N * 2);
	float *back = malloc(N * sizeof(float));
	double *d = malloc(N * sizeof(double));
	uint8_t *q = malloc(N);
	assert_non_null(f && h && b && back && d && q);
	for (size_t i = 0; i < N; i++) {
		f[i] = u2f(rnd() & 0xbfffffffu); /* random bits, |x| < 2 or subnormal-ish */
		d[i] = (double)(int32_t)rnd() / 7.0;
		q[i] = (uint8_t)rnd();
	}
	assert_int_equal(kern_convert(h, WT_F16, f, WT_F32, N), WT_OK);
	assert_int_equal(kern_convert(b, WT_BF16, f, WT_F32, N), WT_OK);
	for (size_t i = 0; i < N; i++) {
		assert_int_equal(h[i], kern_f32_to_f16(f[i]));
		assert_int_equal(b[i], kern_f32_to_bf16(f[i]));
	}
	assert_int_equal(kern_convert(back, WT_F32, h, WT_F16, N), WT_OK);
	for (size_t i = 0; i < N; i++)
		assert_int_equal(f2u(back[i]), f2u(kern_f16_to_f32(h[i])));
	assert_int_equal(kern_convert(h, WT_F16, b, WT_BF16, N), WT_OK); /* via f32, exact */
	for (size_t i = 0; i < N; i++)
		assert_int_equal(h[i], kern_f32_to_f16(kern_bf16_to_f32(b[i])));
	assert_int_equal(kern_convert(back, WT_F32, d, WT_F64, N), WT_OK);
	for (size_t i = 0; i < N; i++)
		assert_true(back[i] == (float)d[i]);
	assert_int_equal(kern_convert(b, WT_BF16, q, WT_F8_E4M3, N), WT_OK);
	for (size_t i = 0; i < N; i++)
		if ((q[i] & 0x7f) != 0x7f)
			assert_int_equal(b[i], kern_f32_to_bf16(kern_e4m3_to_f32(q[i])));
	assert_int_equal(kern_convert(back, WT_F32, q, WT_F8_E5M2, N), WT_OK);
	for (size_t i = 0; i < N; i++)
		assert_int_equal(f2u(back[i]), f2u(kern_e5m2_to_f32(q[i])));
	/* same dtype: bytes copied; unsupported pairs: WT_EDTYPE */
	uint8_t q2[16];
	assert_int_equal(kern_convert(q2, WT_I8, q, WT_I8, 16), WT_OK);
	assert_memory_equal(q2, q, 16);
	assert_int_equal(kern_convert(q2, WT_F8_E4M3, f, WT_F32, 4), WT_EDTYPE);
	assert_int_equal(kern_convert(back, WT_F32, q, WT_I8, 4), WT_EDTYPE);
	assert_int_equal(kern_convert(back, WT_F32, q, WT_DTYPE_INVALID, 4), WT_EDTYPE);
	free(f), free(h), free(b), free(back), free(d), free(q);
}

static void test_copy2d(void **state)
{
	(void)state;
	uint16_t src[6][10], dst[6][4], fused[12][4];
	for (int r = 0; r < 6; r++)
		for (int c = 0; c < 10; c++)
			src[r][c] = (uint16_t)(r * 100 + c);
	/* column slice [3, 7) of a [6,10] bf16 tensor */
	kern_copy2d(dst, sizeof dst[0], &src[0][3], sizeof src[0], 6, 4 * 2);
	for (int r = 0; r < 6; r++)
		for (int c = 0; c < 4; c++)
			assert_int_equal(dst[r][c], r * 100 + c + 3);
	/* fuse two [6,4] parts along rows; the contiguous case */
	kern_copy2d(fused, 8, dst, 8, 6, 8);
	kern_copy2d(fused[6], 8, dst, 8, 6, 8);
	assert_memory_equal(fused[6], dst, sizeof dst);
	assert_memory_equal(fused[0], dst, sizeof dst);
	kern_copy2d(NULL, 0, NULL, 0, 0, 8); /* nothing to do */
}

static void test_dequant_fp8_block(void **state)
{
	(void)state;
	enum { N = 130, K = 260 }; /* edge tiles of 2 rows and 4 columns */
	static uint8_t q[N * K];
	static uint16_t out[N * K];
	static float f32[N * K];
	float scale[2 * 3];
	rng_state = 77;
	printf("seed 77\n");
	for (size_t i = 0; i < N * K; i++) {
		q[i] = (uint8_t)rnd();
		if ((q[i] & 0x7f) == 0x7f)
			q[i] = 0x42;
	}
	for (int i = 0; i < 6; i++)
		scale[i] = (float)(i + 1) * 0.37f;
	assert_int_equal(kern_dequant_fp8_block(out, WT_BF16, q, N, K, scale, 128, 128), WT_OK);
	assert_int_equal(kern_dequant_fp8_block(f32, WT_F32, q, N, K, scale, 128, 128), WT_OK);
	for (int r = 0; r < N; r++)
		for (int c = 0; c < K; c++) {
			float x = kern_e4m3_to_f32(q[r * K + c]) * scale[(r / 128) * 3 + c / 128];
			assert_int_equal(out[r * K + c], kern_f32_to_bf16(x));
			assert_int_equal(f2u(f32[r * K + c]), f2u(x));
		}
	/* per-tensor: one scale, bn = N, bk = K */
	assert_int_equal(kern_dequant_fp8_block(out, WT_F16, q, N, K, scale + 4, N, K), WT_OK);
	for (int i = 0; i < N * K; i++)
		assert_int_equal(out[i], kern_f32_to_f16(kern_e4m3_to_f32(q[i]) * scale[4]));
	assert_int_equal(kern_dequant_fp8_block(out, WT_I8, q, N, K, scale, 128, 128), WT_EDTYPE);
	assert_int_equal(kern_dequant_fp8_block(out, WT_F32, q, N, K, scale, 0, 128), WT_EINVAL);
}

static void test_fp8_rescale(void **state)
{
	(void)state;
	uint8_t q[256], r[256];
	for (int i = 0; i < 256; i++)
		q[i] = r[i] = (uint8_t)i;
	float ratio = 0.3f / 0.7f;
	kern_fp8_rescale(r, 256, ratio);
	for (int i = 0; i < 256; i++) {
		if ((i & 0x7f) == 0x7f)
			continue;
		double want = ref_e4m3((unsigned)i) * (double)ratio; /* exact product of floats */
		float v = kern_e4m3_to_f32(q[i]) * ratio;
		assert_true((double)v == (double)(float)want);
		assert_int_equal(r[i], kern_f32_to_e4m3(v));
	}
	assert_int_equal(r[0x7e], kern_f32_to_e4m3(448.0f * ratio));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_e4m3_all_codes),
	    cmocka_unit_test(test_e4m3_midpoints),
	    cmocka_unit_test(test_e4m3_saturation_subnormals),
	    cmocka_unit_test(test_bf16),
	    cmocka_unit_test(test_f16),
	    cmocka_unit_test(test_convert),
	    cmocka_unit_test(test_copy2d),
	    cmocka_unit_test(test_dequant_fp8_block),
	    cmocka_unit_test(test_fp8_rescale),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
