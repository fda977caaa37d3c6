/* test_kernels_mx.c — MXFP4 dequantization (every nibble, scale extremes, the NaN scale)
 * and GPT-OSS row de-interleaving (kernels/mxfp4.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "kernels/kernels.h"

/* E2M1 from the definition: sign bit 3, exponent bits 2..1 (bias 1), mantissa bit 0;
 * exponent 0 is subnormal (0 or 0.5). */
static double ref_e2m1(unsigned n)
{
	unsigned e = (n >> 1) & 3, m = n & 1;
	double v = e == 0 ? m * 0.5 : ldexp(1.0 + m / 2.0, (int)e - 1);
	return (n & 8) ? -v : v;
}

static void test_mxfp4_every_nibble(void **state)
{
	(void)state;
	/* 16 blocks: block g's byte b = (g << 4) | (b % 16), so every low/high pair occurs */
	uint8_t blocks[16 * 16], scales[16];
	float out[16 * 32];
	for (int g = 0; g < 16; g++) {
		scales[g] = (uint8_t)(120 + g); /* 2^-7 .. 2^8 */
		for (int b = 0; b < 16; b++)
			blocks[g * 16 + b] = (uint8_t)((g << 4) | b);
	}
	assert_int_equal(kern_dequant_mxfp4(out, blocks, scales, 16), -1);
	for (int g = 0; g < 16; g++)
		for (int b = 0; b < 16; b++) {
			double s = ldexp(1.0, 120 + g - 127);
			assert_true((double)out[g * 32 + 2 * b] == ref_e2m1((unsigned)b) * s);
			assert_true((double)out[g * 32 + 2 * b + 1] == ref_e2m1((unsigned)g) * s);
		}
	assert_true(signbit(out[1 * 32 + 2 * 8]) != 0); /* nibble 8 is -0 */
}

static void test_mxfp4_scale_range(void **state)
{
	(void)state;
	uint8_t blocks[2 * 16], scales[2] = {0, 254};
	float out[64];
	memset(blocks, 0x71, sizeof(blocks)); /* low 1 (0.5), high 7 (6.0) */
	assert_int_equal(kern_dequant_mxfp4(out, blocks, scales, 2), -1);
	assert_true(out[0] == ldexpf(0.5f, -127)); /* subnormal, exact */
	assert_true(out[1] == ldexpf(6.0f, -127));
	assert_true(out[32] == ldexpf(0.5f, 127));
	assert_true(isinf(out[33])); /* 6 * 2^127 overflows float32 */
	scales[1] = 255;
	assert_int_equal(kern_dequant_mxfp4(out, blocks, scales, 2), 1);
}

/* BF16 of every nibble pair at every scale 0..254 is the float32 value exactly (its
 * widening gives the same bits), NaN scale refused at the same block. */
static void test_mxfp4_bf16_exact(void **state)
{
	(void)state;
	enum { NB = 255 };
	static uint8_t blocks[NB * 16], scales[NB];
	static float f[NB * 32];
	static uint16_t h[NB * 32];
	for (int g = 0; g < NB; g++) {
		scales[g] = (uint8_t)g;
		for (int b = 0; b < 16; b++)
			blocks[g * 16 + b] = (uint8_t)((g * 7 + b * 17) & 0xff);
	}
	assert_int_equal(kern_dequant_mxfp4(f, blocks, scales, NB), -1);
	assert_int_equal(kern_dequant_mxfp4_bf16(h, blocks, scales, NB), -1);
	int pairs[256] = {0};
	for (int i = 0; i < NB * 32; i++) {
		uint32_t u = (uint32_t)h[i] << 16, v;
		memcpy(&v, &f[i], 4);
		assert_int_equal(u, v);
	}
	for (int g = 0; g < NB; g++)
		for (int b = 0; b < 16; b++)
			pairs[blocks[g * 16 + b]]++;
	for (int k = 0; k < 256; k++)
		assert_true(pairs[k] > 0); /* every byte, so every nibble at many scales */
	scales[3] = 255;
	assert_int_equal(kern_dequant_mxfp4_bf16(h, blocks, scales, NB), 3);
}

static void test_deinterleave(void **state)
{
	(void)state;
	/* 2 groups of 6 rows (half 3) of 2 bytes: rows g0 u0 g1 u1 g2 u2 */
	uint8_t src[24], dst[24];
	for (int k = 0; k < 24; k++)
		src[k] = (uint8_t)k;
	kern_deinterleave_rows(dst, src, 2, 3, 2);
	static const uint8_t want[24] = {0,  1,  4,  5,  8,  9,  2,  3,  6,  7,  10, 11,
	                                 12, 13, 16, 17, 20, 21, 14, 15, 18, 19, 22, 23};
	assert_memory_equal(dst, want, 24);
}

static void test_transpose_stack(void **state)
{
	(void)state;
	/* 2 matrices [2, 3] of 2-byte elements -> [3, 2] */
	uint16_t src[12], dst[12];
	for (int k = 0; k < 12; k++)
		src[k] = (uint16_t)k;
	kern_transpose_stack((uint8_t *)dst, (const uint8_t *)src, 2, 2, 3, 2);
	static const uint16_t want[12] = {0, 3, 1, 4, 2, 5, 6, 9, 7, 10, 8, 11};
	assert_memory_equal(dst, want, sizeof(want));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_mxfp4_every_nibble), cmocka_unit_test(test_mxfp4_scale_range),
	    cmocka_unit_test(test_mxfp4_bf16_exact),   cmocka_unit_test(test_deinterleave),
	    cmocka_unit_test(test_transpose_stack),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
