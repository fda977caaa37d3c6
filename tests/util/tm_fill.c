/*
 * tm_fill.c — the values of the planner tests' models (test_shardmap_builder.h tm_add): the
 * same bytes as the per-element loop it replaces, made one loop per dtype here at the library's
 * -O2 (test programs compile at -Og, where that loop was a fifth of test_shardmap_molmo's CPU:
 * its vision backbone is vLLM's fixed 23 blocks of width 1024, 0.6 GB of bf16).
 */
#include <string.h>

#include "kernels/kernels.h"
#include "tests/util/testutil.h"

/* The next draw as a float in [-1, 1). */
static inline float unit(uint64_t *s)
{
	return (float)((double)(tu_splitmix64(s) >> 11) / 9007199254740992.0 * 2.0 - 1.0);
}

/* kern_f32_to_bf16 of a finite float (round to nearest even), inlined: the call was 15% of
 * test_shardmap_molmo's CPU. unit()'s draws are finite, so the NaN case is never taken. */
static inline uint16_t bf16_finite(float v)
{
	uint32_t u;
	memcpy(&u, &v, 4);
	return (uint16_t)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}

void tu_fill_values(void *buf, wt_dtype dt, size_t es, uint64_t n, uint64_t *s)
{
	uint8_t *p = buf;
	switch (dt) {
	case WT_F32:
		for (uint64_t i = 0; i < n; i++) {
			float v = unit(s);
			memcpy(p + i * 4, &v, 4);
		}
		break;
	case WT_BF16:
		for (uint64_t i = 0; i < n; i++) {
			uint16_t h = bf16_finite(unit(s));
			memcpy(p + i * 2, &h, 2);
		}
		break;
	case WT_F16:
		for (uint64_t i = 0; i < n; i++) {
			uint16_t h = kern_f32_to_f16(unit(s));
			memcpy(p + i * 2, &h, 2);
		}
		break;
	case WT_F8_E4M3:
		for (uint64_t i = 0; i < n; i++)
			p[i] = kern_f32_to_e4m3(unit(s) * 200.0f);
		break;
	default:
		for (uint64_t i = 0; i < n; i++) {
			(void)tu_splitmix64(s);
			memcpy(p + i * es, s, es < 8 ? es : 8);
		}
		break;
	}
}
