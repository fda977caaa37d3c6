/* test_kernels.c — the quantizers of docs/format.md section 4.3 against a reference written
 * literally from the spec in this file (codes and scales byte-exact), their error
 * bounds, scale shapes, INT4 packing, threading invariance and NaN/Inf reports. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <pthread.h>

#include "kernels/kernels.h"

static const wt_quant all_schemes[] = {WT_QUANT_FP8_TENSOR, WT_QUANT_FP8_CHANNEL,
                                       WT_QUANT_FP8_BLOCK, WT_QUANT_INT8_CHANNEL,
                                       WT_QUANT_INT4_GROUP};
#define N_SCHEMES (sizeof all_schemes / sizeof all_schemes[0])

/* ---- reference, from the spec text ---- */
static double ref_e4m3_val(unsigned c)
{
	unsigned e = (c >> 3) & 15, m = c & 7;
	return e == 0 ? ldexp(m / 8.0, -6) : ldexp(1.0 + m / 8.0, (int)e - 7);
}

/* e4m3(v) for v in [-448, 448]: the nearest code, ties to the even code, sign kept. */
static uint8_t ref_e4m3(float v)
{
	double a = fabs((double)v), best = INFINITY;
	unsigned bc = 0;
	for (unsigned c = 0; c <= 0x7e; c++) {
		double d = fabs(ref_e4m3_val(c) - a);
		if (d < best || (d == best && (c & 1) == 0)) {
			best = d;
			bc = c;
		}
	}
	return (uint8_t)(bc | (signbit(v) ? 0x80 : 0));
}

static float clampf(float v, float lo, float hi)
{
	return v < lo ? lo : v > hi ? hi : v;
}

/* Tile = rows [r0,r1) x cols [c0,c1): amax, then the scheme's scale and codes. */
static void ref_tile(wt_quant sch, const float *x, int64_t K, int64_t r0, int64_t r1, int64_t c0,
                     int64_t c1, void *q, float *scale_out)
{
	float amax = 0;
	for (int64_t r = r0; r < r1; r++)
		for (int64_t c = c0; c < c1; c++)
			amax = fmaxf(amax, fabsf(x[r * K + c]));
	float s;
	if (sch == WT_QUANT_INT8_CHANNEL)
		s = fmaxf(amax, 1e-8f) / 127.0f;
	else if (sch == WT_QUANT_INT4_GROUP)
		s = fmaxf(amax, 1e-8f) / 7.0f;
	else
		s = fmaxf(amax, 1e-4f) / 448.0f;
	*scale_out = s;
	for (int64_t r = r0; r < r1; r++)
		for (int64_t c = c0; c < c1; c++) {
			int64_t i = r * K + c;
			float v = x[i] / s;
			if (sch == WT_QUANT_INT8_CHANNEL) {
				((int8_t *)q)[i] = (int8_t)clampf(rintf(v), -127, 127);
			} else if (sch == WT_QUANT_INT4_GROUP) {
				int n = (int)clampf(rintf(v), -8, 7) + 8;
				uint8_t *w = (uint8_t *)q + (i / 8) * 4; /* little-endian int32 */
				uint32_t word = w[0] | (uint32_t)w[1] << 8 | (uint32_t)w[2] << 16 |
				                (uint32_t)w[3] << 24;
				word |= (uint32_t)n << (4 * (c % 8));
				for (int b = 0; b < 4; b++)
					w[b] = (uint8_t)(word >> (8 * b));
			} else {
				((uint8_t *)q)[i] = ref_e4m3(clampf(v, -448, 448));
			}
		}
}

static void ref_quantize(wt_quant sch, const float *x, int64_t N, int64_t K, int64_t group, void *q,
                         float *scale)
{
	memset(q, 0, (size_t)kern_qbytes(sch, N, K));
	switch (sch) {
	case WT_QUANT_FP8_TENSOR:
		ref_tile(sch, x, K, 0, N, 0, K, q, &scale[0]);
		break;
	case WT_QUANT_FP8_CHANNEL:
	case WT_QUANT_INT8_CHANNEL:
		for (int64_t r = 0; r < N; r++)
			ref_tile(sch, x, K, r, r + 1, 0, K, q, &scale[r]);
		break;
	case WT_QUANT_FP8_BLOCK: {
		int64_t nbk = (K + 127) / 128;
		for (int64_t r = 0; r < N; r += 128)
			for (int64_t c = 0; c < K; c += 128)
				ref_tile(sch, x, K, r, r + 128 < N ? r + 128 : N, c,
				         c + 128 < K ? c + 128 : K, q,
				         &scale[(r / 128) * nbk + c / 128]);
		break;
	}
	case WT_QUANT_INT4_GROUP:
		for (int64_t r = 0; r < N; r++)
			for (int64_t g = 0; g < K / group; g++)
				ref_tile(sch, x, K, r, r + 1, g * group, (g + 1) * group, q,
				         &scale[r * (K / group) + g]);
		break;
	default:
		fail();
	}
}

/* ---- data ---- */
static uint64_t rng_state;
static double unif(void) /* [0, 1) */
{
	rng_state = rng_state * 6364136223846793005ull + 1442695040888963407ull;
	return (double)(rng_state >> 11) / 9007199254740992.0;
}

/* Rows of very different magnitudes (1e-10 .. 1e3: below both floors, around them, and
 * large), some exact zeros and whole zero rows. */
static void gen(float *x, int64_t N, int64_t K, uint64_t seed)
{
	rng_state = seed;
	for (int64_t r = 0; r < N; r++) {
		double mag = pow(10.0, -10.0 + 13.0 * unif());
		int zero_row = unif() < 0.03;
		for (int64_t c = 0; c < K; c++) {
			double u = unif();
			x[r * K + c] =
			    zero_row || u < 0.02 ? 0.0f : (float)((2 * unif() - 1) * mag);
		}
	}
}

static void to_bf16(uint16_t *h, float *x, size_t n) /* x becomes the bf16 value */
{
	for (size_t i = 0; i < n; i++) {
		h[i] = kern_f32_to_bf16(x[i]);
		x[i] = kern_bf16_to_f32(h[i]);
	}
}

static int64_t group_of(wt_quant s)
{
	return s == WT_QUANT_INT4_GROUP ? 64 : 0;
}

/* ---- tests ---- */
static void test_scale_shapes(void **state)
{
	(void)state;
	assert_int_equal(kern_scale_count(WT_QUANT_FP8_TENSOR, 300, 200, 0), 1);
	assert_int_equal(kern_scale_count(WT_QUANT_FP8_CHANNEL, 300, 200, 0), 300);
	assert_int_equal(kern_scale_count(WT_QUANT_FP8_BLOCK, 300, 200, 0), 3 * 2);
	assert_int_equal(kern_scale_count(WT_QUANT_FP8_BLOCK, 128, 128, 0), 1);
	assert_int_equal(kern_scale_count(WT_QUANT_FP8_BLOCK, 129, 1, 0), 2);
	assert_int_equal(kern_scale_count(WT_QUANT_FP8_BLOCK, 7168, 18432, 0), 56 * 144);
	assert_int_equal(kern_scale_count(WT_QUANT_INT8_CHANNEL, 300, 200, 0), 300);
	assert_int_equal(kern_scale_count(WT_QUANT_INT4_GROUP, 300, 256, 128), 600);
	assert_int_equal(kern_scale_count(WT_QUANT_INT4_GROUP, 300, 256, 96), 0); /* K % g */
	assert_int_equal(kern_scale_count(WT_QUANT_INT4_GROUP, 300, 24, 12), 0);  /* g % 8 */
	assert_int_equal(kern_scale_count(WT_QUANT_INT4_GROUP, 300, 256, 0), 0);
	assert_int_equal(kern_scale_count(WT_QUANT_NONE, 300, 256, 0), 0);
	assert_int_equal(kern_scale_count(WT_QUANT_FP8_CHANNEL, 0, 256, 0), 0);
	assert_int_equal(kern_qbytes(WT_QUANT_FP8_BLOCK, 300, 200), 60000);
	assert_int_equal(kern_qbytes(WT_QUANT_INT8_CHANNEL, 300, 200), 60000);
	assert_int_equal(kern_qbytes(WT_QUANT_INT4_GROUP, 300, 256), 300 * 256 / 2);
	assert_int_equal(kern_qbytes(WT_QUANT_INT4_GROUP, 300, 12), 0); /* K % 8 */
	assert_int_equal(kern_qbytes(WT_QUANT_NONE, 300, 256), 0);
	assert_int_equal(kern_qbytes(WT_QUANT_FP8_TENSOR, INT64_MAX / 2, 4), 0); /* overflow */
}

static void test_bad_args(void **state)
{
	(void)state;
	float x[64] = {0}, s[8];
	uint8_t q[64];
	int64_t bad = -5;
	assert_int_equal(kern_quantize(WT_QUANT_NONE, x, WT_F32, 8, 8, 0, q, s, &bad), WT_EINVAL);
	assert_int_equal(kern_quantize(WT_QUANT_COUNT_, x, WT_F32, 8, 8, 0, q, s, &bad), WT_EINVAL);
	assert_int_equal(kern_quantize(WT_QUANT_FP8_BLOCK, x, WT_I8, 8, 8, 0, q, s, &bad),
	                 WT_EDTYPE);
	assert_int_equal(kern_quantize(WT_QUANT_INT4_GROUP, x, WT_F32, 4, 16, 12, q, s, &bad),
	                 WT_EINVAL);
	assert_int_equal(kern_quantize(WT_QUANT_FP8_BLOCK, x, WT_F32, 0, 8, 0, q, s, &bad),
	                 WT_EINVAL);
	assert_int_equal(kern_dequantize(WT_QUANT_FP8_BLOCK, q, s, 8, 8, 0, x, WT_I8), WT_EDTYPE);
	assert_int_equal(kern_dequantize(WT_QUANT_NONE, q, s, 8, 8, 0, x, WT_F32), WT_EINVAL);
	/* misaligned source or scale buffers are refused, not read through a bad pointer */
	assert_int_equal(
	    kern_quantize(WT_QUANT_FP8_CHANNEL, (char *)x + 2, WT_F32, 4, 8, 0, q, s, &bad),
	    WT_EINVAL);
	assert_int_equal(kern_quantize(WT_QUANT_FP8_CHANNEL, x, WT_F32, 4, 8, 0, q,
	                               (float *)((char *)s + 1), &bad),
	                 WT_EINVAL);
	assert_int_equal(
	    kern_dequantize(WT_QUANT_INT8_CHANNEL, q, s, 4, 8, 0, (char *)x + 1, WT_BF16),
	    WT_EINVAL);
	assert_int_equal(kern_convert((char *)x + 2, WT_F32, q, WT_F8_E4M3, 4), WT_EINVAL);
	assert_int_equal(bad, -5); /* untouched when not a NaN report */
}

/* Codes and scales byte-identical to the literal reference, for F32 and BF16 sources,
 * on shapes with partial fp8-block edge tiles; then the dequantization error bound. */
static void check_scheme(wt_quant sch, int64_t N, int64_t K, int64_t group, wt_dtype dt,
                         uint64_t seed)
{
	size_t n = (size_t)(N * K);
	int64_t ns = kern_scale_count(sch, N, K, group), nq = kern_qbytes(sch, N, K);
	assert_true(ns > 0 && nq > 0);
	float *x = malloc(n * sizeof(float)), *back = malloc(n * sizeof(float));
	uint16_t *h = malloc(n * 2);
	uint8_t *q = malloc((size_t)nq), *rq = malloc((size_t)nq);
	float *s = malloc((size_t)ns * sizeof(float)), *rs = malloc((size_t)ns * sizeof(float));
	assert_non_null(x && back && h && q && rq && s && rs);
	gen(x, N, K, seed);
	if (dt == WT_BF16)
		to_bf16(h, x, n);
	int64_t bad = -1;
	assert_int_equal(
	    kern_quantize(sch, dt == WT_BF16 ? (void *)h : (void *)x, dt, N, K, group, q, s, &bad),
	    WT_OK);
	ref_quantize(sch, x, N, K, group, rq, rs);
	assert_memory_equal(s, rs, (size_t)ns * sizeof(float));
	assert_memory_equal(q, rq, (size_t)nq);

	/* error bound vs float64, per element:
	 *   fp8:  |x - deq| <= |x| * 2^-4 + s * 2^-10  (half an e4m3 ulp: 3 mantissa bits;
	 *         below 2^-6 * s the subnormal quantum s * 2^-9)
	 *   int8, int4: |x - deq| <= s / 2
	 * each with a 1e-5 relative allowance for the float32 divide and multiply. */
	assert_int_equal(kern_dequantize(sch, q, s, N, K, group, back, WT_F32), WT_OK);
	int64_t nbk = (K + 127) / 128;
	for (int64_t r = 0; r < N; r++)
		for (int64_t c = 0; c < K; c++) {
			int64_t i = r * K + c;
			float sc = sch == WT_QUANT_FP8_TENSOR   ? s[0]
			           : sch == WT_QUANT_FP8_BLOCK  ? s[(r / 128) * nbk + c / 128]
			           : sch == WT_QUANT_INT4_GROUP ? s[r * (K / group) + c / group]
			                                        : s[r];
			double err = fabs((double)x[i] - (double)back[i]), ax = fabs((double)x[i]);
			double bound = sch == WT_QUANT_INT8_CHANNEL || sch == WT_QUANT_INT4_GROUP
			                   ? sc * 0.5
			                   : ax * 0.0625 + sc * ldexp(1, -10);
			if (err > bound * (1 + 1e-5) + ax * 1e-6) {
				printf("%s [%ld,%ld]: x=%.9g deq=%.9g s=%.9g err=%.3g > %.3g\n",
				       wt_quant_name(sch), (long)r, (long)c, x[i], back[i], sc, err,
				       bound);
				fail();
			}
		}
	/* bf16 dequantization = RNE of the f32 value */
	assert_int_equal(kern_dequantize(sch, q, s, N, K, group, h, WT_BF16), WT_OK);
	for (size_t i = 0; i < n; i++)
		assert_int_equal(h[i], kern_f32_to_bf16(back[i]));
	free(x), free(back), free(h), free(q), free(rq), free(s), free(rs);
}

static void test_reference_exact(void **state)
{
	(void)state;
	const uint64_t seed = 20261129;
	printf("seed %llu\n", (unsigned long long)seed);
	for (size_t k = 0; k < N_SCHEMES; k++) {
		wt_quant sch = all_schemes[k];
		int64_t g = group_of(sch);
		check_scheme(sch, 300, 200 + (g ? 56 : 0), g, WT_F32, seed + k);
		check_scheme(sch, 37, 128, g, WT_BF16, seed + 10 + k);
	}
	check_scheme(WT_QUANT_FP8_BLOCK, 129, 385, 0, WT_BF16, seed + 20); /* 1-row, 1-col edges */
	check_scheme(WT_QUANT_FP8_BLOCK, 5, 7, 0, WT_F32, seed + 21);      /* one partial tile */
	check_scheme(WT_QUANT_INT4_GROUP, 9, 1024, 1024, WT_F32, seed + 22); /* group > chunk */
	check_scheme(WT_QUANT_INT4_GROUP, 9, 64, 8, WT_BF16, seed + 23);
}

static void test_f16_source(void **state)
{
	(void)state;
	enum { N = 20, K = 256 };
	float x[N * K];
	uint16_t h[N * K];
	uint8_t q[N * K], rq[N * K];
	float s[N * 4], rs[N * 4];
	gen(x, N, K, 99);
	printf("seed 99\n");
	for (int i = 0; i < N * K; i++) {
		h[i] = kern_f32_to_f16(x[i]);
		x[i] = kern_f16_to_f32(h[i]);
	}
	for (size_t k = 0; k < N_SCHEMES; k++) {
		wt_quant sch = all_schemes[k];
		int64_t bad;
		assert_int_equal(kern_quantize(sch, h, WT_F16, N, K, group_of(sch), q, s, &bad),
		                 WT_OK);
		ref_quantize(sch, x, N, K, group_of(sch), rq, rs);
		assert_memory_equal(q, rq, (size_t)kern_qbytes(sch, N, K));
		assert_memory_equal(s, rs, (size_t)kern_scale_count(sch, N, K, group_of(sch)) * 4);
	}
}

static void test_int4_packing(void **state)
{
	(void)state;
	/* group 1: amax 7 -> s = 1, q = x. group 2: amax 14 -> s = 2, x/s has exact .5 ties */
	const float x[16] = {1, -2, 3, -4, 5, -6, 7, 0, 1, 3, 5, -1, -3, 14, 0, -5};
	uint8_t q[8];
	float s[2];
	int64_t bad;
	assert_int_equal(kern_quantize(WT_QUANT_INT4_GROUP, x, WT_F32, 1, 16, 8, q, s, &bad),
	                 WT_OK);
	assert_true(s[0] == 1.0f && s[1] == 2.0f);
	/* nibbles q+8: 9 6 11 4 13 2 15 8 -> int32 0x8F2D4B69 */
	const uint8_t want0[4] = {0x69, 0x4b, 0x2d, 0x8f};
	/* x/s = .5 1.5 2.5 -.5 -1.5 7 0 -2.5 -> rint 0 2 2 -0 -2 7 0 -2 -> 8 10 10 8 6 15 8 6 */
	const uint8_t want1[4] = {0xa8, 0x8a, 0xf6, 0x68};
	assert_memory_equal(q, want0, 4);
	assert_memory_equal(q + 4, want1, 4);
	float back[16];
	assert_int_equal(kern_dequantize(WT_QUANT_INT4_GROUP, q, s, 1, 16, 8, back, WT_F32), WT_OK);
	const float want_back[16] = {1, -2, 3, -4, 5, -6, 7, 0, 0, 4, 4, 0, -4, 14, 0, -4};
	for (int i = 0; i < 16; i++)
		assert_true(back[i] == want_back[i]);
	/* int8 on the same row: s = 14/127, ties of rint are half-to-even */
	int8_t q8[16];
	float s8;
	assert_int_equal(kern_quantize(WT_QUANT_INT8_CHANNEL, x, WT_F32, 1, 16, 0, q8, &s8, &bad),
	                 WT_OK);
	assert_true(s8 == 14.0f / 127.0f);
	assert_int_equal(q8[13], 127);
	assert_int_equal(q8[11], (int8_t)rintf(-1.0f / s8));
}

static void quantize_all(wt_quant sch, const void *x, wt_dtype dt, int64_t N, int64_t K, uint8_t *q,
                         float *s)
{
	int64_t bad;
	assert_int_equal(kern_quantize(sch, x, dt, N, K, 128, q, s, &bad), WT_OK);
}

static void test_threads_identical(void **state)
{
	(void)state;
	enum { N = 1000, K = 1536 }; /* N not a multiple of 128 */
	size_t n = (size_t)N * K;
	float *x = malloc(n * 4);
	uint16_t *h = malloc(n * 2), *c1 = malloc(n * 2), *c4 = malloc(n * 2);
	uint8_t *q1 = malloc(n), *q4 = malloc(n);
	float *s1 = malloc(N * 12 * 4), *s4 = malloc(N * 12 * 4);
	assert_non_null(x && h && c1 && c4 && q1 && q4 && s1 && s4);
	gen(x, N, K, 4242);
	printf("seed 4242\n");
	to_bf16(h, x, n);
	for (size_t k = 0; k < N_SCHEMES; k++) {
		wt_quant sch = all_schemes[k];
		size_t nq = (size_t)kern_qbytes(sch, N, K);
		size_t ns = (size_t)kern_scale_count(sch, N, K, 128);
		kern_set_threads(1);
		quantize_all(sch, h, WT_BF16, N, K, q1, s1);
		assert_int_equal(kern_dequantize(sch, q1, s1, N, K, 128, c1, WT_F16), WT_OK);
		kern_set_threads(4);
		memset(q4, 0xaa, n);
		quantize_all(sch, h, WT_BF16, N, K, q4, s4);
		assert_int_equal(kern_dequantize(sch, q4, s4, N, K, 128, c4, WT_F16), WT_OK);
		assert_memory_equal(q1, q4, nq);
		assert_memory_equal(s1, s4, ns * 4);
		assert_memory_equal(c1, c4, n * 2);
	}
	kern_set_threads(1);
	assert_int_equal(kern_convert(c1, WT_F16, x, WT_F32, n), WT_OK);
	kern_set_threads(3);
	assert_int_equal(kern_convert(c4, WT_F16, x, WT_F32, n), WT_OK);
	assert_memory_equal(c1, c4, n * 2);
	kern_set_threads(0);
	free(x), free(h), free(c1), free(c4), free(q1), free(q4), free(s1), free(s4);
}

/* Several threads quantize at once through the one pool: each gets the bytes of a
 * single-threaded run (jobs from different callers never mix). */
typedef struct caller {
	const uint16_t *x;
	wt_quant sch;
	uint8_t *q;
	float *s;
	int rc;
} caller;

enum { CN = 512, CK = 1024, CALLERS = 4 };

static void *caller_main(void *arg)
{
	caller *c = arg;
	int64_t bad;
	for (int rep = 0; rep < 3 && c->rc == WT_OK; rep++)
		c->rc = kern_quantize(c->sch, c->x, WT_BF16, CN, CK, 128, c->q, c->s, &bad);
	return NULL;
}

static void test_concurrent_callers(void **state)
{
	(void)state;
	size_t n = (size_t)CN * CK;
	float *x = malloc(n * 4);
	uint16_t *h = malloc(n * 2);
	assert_non_null(x && h);
	gen(x, CN, CK, 777);
	printf("seed 777\n");
	to_bf16(h, x, n);
	caller c[CALLERS];
	uint8_t *want[CALLERS];
	float *wants[CALLERS];
	kern_set_threads(1);
	for (int i = 0; i < CALLERS; i++) {
		wt_quant sch = all_schemes[i % N_SCHEMES];
		c[i] = (caller){h, sch, malloc(n), malloc(n / 8 * 4), WT_OK};
		want[i] = malloc(n);
		wants[i] = malloc(n / 8 * 4);
		assert_non_null(c[i].q && c[i].s && want[i] && wants[i]);
		quantize_all(sch, h, WT_BF16, CN, CK, want[i], wants[i]);
	}
	kern_set_threads(3);
	pthread_t th[CALLERS];
	for (int i = 0; i < CALLERS; i++)
		assert_int_equal(pthread_create(&th[i], NULL, caller_main, &c[i]), 0);
	for (int i = 0; i < CALLERS; i++) {
		pthread_join(th[i], NULL);
		assert_int_equal(c[i].rc, WT_OK);
		assert_memory_equal(c[i].q, want[i], (size_t)kern_qbytes(c[i].sch, CN, CK));
		assert_memory_equal(c[i].s, wants[i],
		                    (size_t)kern_scale_count(c[i].sch, CN, CK, 128) * 4);
		free(c[i].q), free(c[i].s), free(want[i]), free(wants[i]);
	}
	kern_set_threads(0);
	free(x), free(h);
}

/* Put bad values at (r, c) positions; each scheme must report the lowest flat index. */
static void expect_bad(const void *x, wt_dtype dt, int64_t N, int64_t K, int64_t want)
{
	uint8_t *q = malloc((size_t)(N * K));
	float *s = malloc((size_t)N * (size_t)(K / 8 + 1) * 4 + 64 * 4);
	assert_non_null(q && s);
	for (size_t k = 0; k < N_SCHEMES; k++) {
		int64_t bad = -1;
		int rc = kern_quantize(all_schemes[k], x, dt, N, K, 128, q, s, &bad);
		assert_int_equal(rc, WT_ENONFINITE);
		if (bad != want)
			printf("%s: bad index %ld, want %ld\n", wt_quant_name(all_schemes[k]),
			       (long)bad, (long)want);
		assert_int_equal(bad, want);
	}
	free(q), free(s);
}

static void test_nonfinite(void **state)
{
	(void)state;
	enum { N = 260, K = 256 };
	static float x[N * K];
	static uint16_t h[N * K];
	gen(x, N, K, 5);
	x[200 * K + 10] = INFINITY;
	x[130 * K + 200] = NAN; /* same fp8-block band, later column tile, earlier row */
	expect_bad(x, WT_F32, N, K, 130 * K + 200);
	x[5 * K + 255] = -INFINITY;
	expect_bad(x, WT_F32, N, K, 5 * K + 255);
	x[0] = NAN;
	expect_bad(x, WT_F32, N, K, 0);
	/* bf16 NaN and f16 Inf */
	gen(x, N, K, 6);
	to_bf16(h, x, N * K);
	h[259 * K + 255] = 0x7fc0;
	expect_bad(h, WT_BF16, N, K, 259 * K + 255);
	for (int i = 0; i < N * K; i++)
		h[i] = kern_f32_to_f16(x[i] > 60000 ? 1 : x[i]);
	h[77 * K + 3] = 0xfc00;
	expect_bad(h, WT_F16, N, K, 77 * K + 3);
	/* large enough to be split across threads: the lowest index wins whatever finishes first */
	enum { BN = 2048, BK = 512 };
	float *big = malloc((size_t)BN * BK * 4);
	assert_non_null(big);
	gen(big, BN, BK, 7);
	big[(size_t)1900 * BK + 1] = NAN;
	big[(size_t)1500 * BK + 300] = INFINITY;
	big[(size_t)1500 * BK + 400] = NAN;
	kern_set_threads(4);
	expect_bad(big, WT_F32, BN, BK, 1500 * BK + 300);
	kern_set_threads(0);
	free(big);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_scale_shapes),       cmocka_unit_test(test_bad_args),
	    cmocka_unit_test(test_reference_exact),    cmocka_unit_test(test_f16_source),
	    cmocka_unit_test(test_int4_packing),       cmocka_unit_test(test_threads_identical),
	    cmocka_unit_test(test_concurrent_callers), cmocka_unit_test(test_nonfinite),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
