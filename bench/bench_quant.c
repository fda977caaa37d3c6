/*
 * bench_quant.c — quantizer throughput against memcpy, measured in the same run.
 *
 * Input: a [2048, 4096] BF16 tensor (16 MiB). Baseline: single-thread memcpy of the
 * same bytes into a reused buffer. For each scheme: BF16 bytes in per second on one
 * thread, and the ratio to the baseline (target for fp8-block: >= 0.25); then the same
 * with the pool at all cores. Best of a few repetitions; a few seconds in all.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/common.h"
#include "kernels/kernels.h"
#include "kernels/kernels_cuda.h"

enum { N = 2048, K = 4096, REPS = 15, GROUP = 128 };

static double best_seconds(int (*fn)(void *), void *arg)
{
	double best = 1e30;
	for (int r = 0; r < REPS; r++) {
		uint64_t t0 = common_now_ns();
		if (fn(arg) != 0)
			return -1;
		double s = (double)(common_now_ns() - t0) / 1e9;
		best = s < best ? s : best;
	}
	return best;
}

typedef struct bench {
	uint16_t *x;
	void *dst;
	uint8_t *q;
	float *s;
	wt_quant scheme;
} bench;

static int run_memcpy(void *arg)
{
	bench *b = arg;
	memcpy(b->dst, b->x, (size_t)N * K * 2);
	__asm__ volatile("" ::: "memory"); /* keep the copy */
	return 0;
}

static int run_quant(void *arg)
{
	bench *b = arg;
	int64_t bad;
	return kern_quantize(b->scheme, b->x, WT_BF16, N, K, GROUP, b->q, b->s, &bad);
}

static int run_cuda_quant(void *arg)
{
	bench *b = arg;
	int64_t bad;
	return kern_cuda_quantize(b->scheme, b->x, WT_BF16, N, K, GROUP, b->q, b->s, &bad);
}

int main(void)
{
	size_t n = (size_t)N * K, bytes = n * 2;
	bench b = {malloc(bytes), malloc(bytes), malloc(n), malloc(n * sizeof(float)), 0};
	if (!b.x || !b.dst || !b.q || !b.s) {
		fprintf(stderr, "bench_quant: out of memory for a %zu-byte tensor\n", bytes);
		return 1;
	}
	uint64_t st = 12345;
	printf("bench_quant: [%d,%d] BF16 (%.1f MiB), seed %llu, best of %d\n", N, K,
	       (double)bytes / (1 << 20), (unsigned long long)st, REPS);
	for (size_t i = 0; i < n; i++) {
		st = st * 6364136223846793005ull + 1442695040888963407ull;
		float v = (float)((double)(st >> 11) / 9007199254740992.0 - 0.5) * 0.05f;
		b.x[i] = kern_f32_to_bf16(v);
	}
	memset(b.dst, 1, bytes);
	memset(b.q, 1, n);
	double t_mem = best_seconds(run_memcpy, &b);
	double gb_mem = (double)bytes / t_mem / 1e9;
	printf("baseline memcpy (1 thread, reused buffer): %.2f GB/s\n", gb_mem);
	const wt_quant schemes[] = {WT_QUANT_FP8_BLOCK, WT_QUANT_FP8_TENSOR, WT_QUANT_FP8_CHANNEL,
	                            WT_QUANT_INT8_CHANNEL, WT_QUANT_INT4_GROUP};
	const size_t n_schemes = sizeof schemes / sizeof schemes[0];
	double gb_pool[sizeof schemes / sizeof schemes[0]] = {0};
	int threads[2] = {1, 0};
	for (int t = 0; t < 2; t++) {
		kern_set_threads(threads[t]);
		for (size_t k = 0; k < n_schemes; k++) {
			b.scheme = schemes[k];
			double sec = best_seconds(run_quant, &b);
			if (sec < 0) {
				fprintf(stderr, "bench_quant: %s failed\n",
				        wt_quant_name(b.scheme));
				return 1;
			}
			double gb = (double)bytes / sec / 1e9;
			if (threads[t] == 0)
				gb_pool[k] = gb;
			printf("%-13s threads=%-2s %6.2f GB/s bf16 in   ratio vs memcpy %.3f%s\n",
			       wt_quant_name(b.scheme), threads[t] ? "1" : "all", gb, gb / gb_mem,
			       b.scheme == WT_QUANT_FP8_BLOCK && threads[t] == 1
			           ? "  (target >= 0.25)"
			           : "");
		}
	}
	if (!kern_cuda_available()) {
		printf("cuda: %s\n", kern_cuda_built() ? "built, but no usable device here"
		                                       : "not built (no nvcc)");
	} else {
		b.scheme = WT_QUANT_FP8_BLOCK;
		if (run_cuda_quant(&b) != 0) /* warm-up: context creation */
			return 1;
		for (size_t k = 0; k < n_schemes; k++) {
			b.scheme = schemes[k];
			double sec = best_seconds(run_cuda_quant, &b);
			if (sec < 0) {
				fprintf(stderr, "bench_quant: cuda %s failed\n",
				        wt_quant_name(b.scheme));
				return 1;
			}
			double gb = (double)bytes / sec / 1e9;
			printf("%-13s cuda        %6.2f GB/s bf16 in   ratio vs CPU pool %.3f "
			       "(host copies included)\n",
			       wt_quant_name(b.scheme), gb, gb / gb_pool[k]);
		}
	}
	free(b.x), free(b.dst), free(b.q), free(b.s);
	return 0;
}
