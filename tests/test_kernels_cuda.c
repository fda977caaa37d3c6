/* test_kernels_cuda.c — the CUDA quantizers against the CPU ones, bit for bit, for
 * every scheme and source dtype, dequantization to every float dtype, and the
 * NaN/Inf report. Skipped (with the reason) when the build has no CUDA or the
 * machine has no usable device. */
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
#include "kernels/kernels_cuda.h"

static const wt_quant all_schemes[] = {WT_QUANT_FP8_TENSOR, WT_QUANT_FP8_CHANNEL,
                                       WT_QUANT_FP8_BLOCK, WT_QUANT_INT8_CHANNEL,
                                       WT_QUANT_INT4_GROUP};
#define N_SCHEMES (sizeof all_schemes / sizeof all_schemes[0])

static uint64_t rng_state;
static double unif(void)
{
	rng_state = rng_state * 6364136223846793005ull + 1442695040888963407ull;
	return (double)(rng_state >> 11) / 9007199254740992.0;
}

/* Rows of magnitudes 1e-10 .. 1e3 (both scale floors hit), some zeros. */
static void gen(float *x, int64_t N, int64_t K, uint64_t seed)
{
	rng_state = seed;
	for (int64_t r = 0; r < N; r++) {
		double mag = pow(10.0, -10.0 + 13.0 * unif());
		for (int64_t c = 0; c < K; c++)
			x[r * K + c] = unif() < 0.02 ? 0.0f : (float)((2 * unif() - 1) * mag);
	}
}

static int skip_reason(void)
{
	if (kern_cuda_available())
		return 0;
	if (kern_cuda_built())
		printf("skipped: built with CUDA, but no usable CUDA device on this machine\n");
	else
		printf("skipped: built without nvcc (no CUDA kernels in this build)\n");
	return 1;
}

static void test_no_device_contract(void **state)
{
	(void)state;
	float x[8] = {0};
	uint8_t q[8];
	float s[1];
	int64_t bad;
	int rc = kern_cuda_quantize(WT_QUANT_FP8_TENSOR, x, WT_F32, 1, 8, 0, q, s, &bad);
	if (kern_cuda_available())
		assert_int_equal(rc, WT_OK);
	else
		assert_int_equal(rc, WT_EDEVICE);
}

static void compare(wt_quant sch, int64_t N, int64_t K, wt_dtype dt, uint64_t seed)
{
	int64_t g = sch == WT_QUANT_INT4_GROUP ? 64 : 0;
	size_t n = (size_t)(N * K);
	size_t nq = (size_t)kern_qbytes(sch, N, K), ns = (size_t)kern_scale_count(sch, N, K, g);
	float *x = malloc(n * 4), *sc = malloc(ns * 4), *sg = malloc(ns * 4);
	uint16_t *h = malloc(n * 2);
	uint8_t *qc = malloc(nq), *qg = malloc(nq);
	void *yc = malloc(n * 4), *yg = malloc(n * 4);
	assert_non_null(x && sc && sg && h && qc && qg && yc && yg);
	gen(x, N, K, seed);
	const void *src = x;
	if (dt != WT_F32) {
		for (size_t i = 0; i < n; i++)
			h[i] = dt == WT_BF16 ? kern_f32_to_bf16(x[i]) : kern_f32_to_f16(x[i]);
		src = h;
	}
	int64_t bad;
	assert_int_equal(kern_quantize(sch, src, dt, N, K, g, qc, sc, &bad), WT_OK);
	assert_int_equal(kern_cuda_quantize(sch, src, dt, N, K, g, qg, sg, &bad), WT_OK);
	if (memcmp(sc, sg, ns * 4) != 0 || memcmp(qc, qg, nq) != 0)
		printf("%s %s [%ld,%ld] seed %llu: GPU differs from CPU\n", wt_quant_name(sch),
		       wt_dtype_name(dt), (long)N, (long)K, (unsigned long long)seed);
	assert_memory_equal(sc, sg, ns * 4);
	assert_memory_equal(qc, qg, nq);
	const wt_dtype outs[] = {WT_F32, WT_BF16, WT_F16};
	for (int o = 0; o < 3; o++) {
		assert_int_equal(kern_dequantize(sch, qc, sc, N, K, g, yc, outs[o]), WT_OK);
		assert_int_equal(kern_cuda_dequantize(sch, qc, sc, N, K, g, yg, outs[o]), WT_OK);
		assert_memory_equal(yc, yg, n * wt_dtype_size(outs[o]));
	}
	free(x), free(sc), free(sg), free(h), free(qc), free(qg), free(yc), free(yg);
}

static void test_gpu_matches_cpu(void **state)
{
	(void)state;
	if (skip_reason()) {
		skip();
		return;
	}
	const uint64_t seed = 31337;
	printf("seed %llu\n", (unsigned long long)seed);
	const wt_dtype srcs[] = {WT_F32, WT_BF16, WT_F16};
	for (size_t k = 0; k < N_SCHEMES; k++)
		for (int d = 0; d < 3; d++) {
			compare(all_schemes[k], 300, 384 + 64, srcs[d], seed + k * 3 + (uint64_t)d);
			compare(all_schemes[k], 1000, 1536, srcs[d], seed + 100 + k);
		}
	compare(WT_QUANT_FP8_BLOCK, 129, 200, WT_BF16, seed + 200); /* partial edge tiles */
	compare(WT_QUANT_FP8_BLOCK, 5, 8, WT_F32, seed + 201);
}

static void test_gpu_nonfinite(void **state)
{
	(void)state;
	if (skip_reason()) {
		skip();
		return;
	}
	enum { N = 520, K = 512 };
	float *x = malloc((size_t)N * K * 4);
	uint8_t *q = malloc((size_t)N * K);
	float *s = malloc((size_t)N * K / 8 * 4);
	assert_non_null(x && q && s);
	gen(x, N, K, 8);
	x[300 * K + 500] = INFINITY;
	x[300 * K + 7] = NAN;
	x[511 * K + 1] = NAN;
	for (size_t k = 0; k < N_SCHEMES; k++) {
		int64_t bad = -1, cbad = -2;
		assert_int_equal(
		    kern_cuda_quantize(all_schemes[k], x, WT_F32, N, K, 128, q, s, &bad),
		    WT_ENONFINITE);
		assert_int_equal(kern_quantize(all_schemes[k], x, WT_F32, N, K, 128, q, s, &cbad),
		                 WT_ENONFINITE);
		assert_int_equal(bad, 300 * K + 7);
		assert_int_equal(bad, cbad);
	}
	free(x), free(q), free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_no_device_contract),
	    cmocka_unit_test(test_gpu_matches_cpu),
	    cmocka_unit_test(test_gpu_nonfinite),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
