/*
 * mxfp4.c — OCP MX FP4 (E2M1 elements, E8M0 block scales) to F32, as GPT-OSS
 * checkpoints store their experts (docs/format.md section 4.6), and the row
 * de-interleaving of GPT-OSS's fused gate/up, and the per-expert transpose of GPT-OSS
 * experts saved dequantized.
 *
 *   block g: 16 bytes, 32 elements; byte b holds element 2b in its low nibble and
 *            element 2b+1 in its high nibble
 *   nibble:  E2M1, sign bit 3: 0, 0.5, 1, 1.5, 2, 3, 4, 6 (and their negatives)
 *   scale:   one byte per block, value 2^(s - 127); s = 255 is NaN (refused)
 *   value:   e2m1(nibble) * 2^(s - 127), computed exactly in float32 (ldexpf); also
 *            exactly in BF16 (half the memory of a dequantized expert stack)
 */
#include <math.h>
#include <string.h>

#include "kernels/kernels.h"

static const float e2m1[16] = {+0.0f, +0.5f, +1.0f, +1.5f, +2.0f, +3.0f, +4.0f, +6.0f,
                               -0.0f, -0.5f, -1.0f, -1.5f, -2.0f, -3.0f, -4.0f, -6.0f};

int64_t kern_dequant_mxfp4(float *dst, const uint8_t *blocks, const uint8_t *scales,
                           int64_t n_blocks)
{
	for (int64_t g = 0; g < n_blocks; g++) {
		if (scales[g] == 255)
			return g;
		int e = (int)scales[g] - 127;
		const uint8_t *b = blocks + g * 16;
		float *o = dst + g * 32;
		for (int k = 0; k < 16; k++) {
			o[2 * k] = ldexpf(e2m1[b[k] & 15], e);
			o[2 * k + 1] = ldexpf(e2m1[b[k] >> 4], e);
		}
	}
	return -1;
}

/* Every value has at most two significant bits (1.5 = 1.1b) and a float32 exponent
 * (2^-128 and 1.5 * 2^-127 are subnormal in both formats, on BF16's 2^-133 grid), so
 * its float32 bits end in 16 zero bits and their top half is the BF16 value, exactly. */
int64_t kern_dequant_mxfp4_bf16(uint16_t *dst, const uint8_t *blocks, const uint8_t *scales,
                                int64_t n_blocks)
{
	float f[32];
	for (int64_t g = 0; g < n_blocks; g++) {
		if (kern_dequant_mxfp4(f, blocks + g * 16, scales + g, 1) >= 0)
			return g;
		for (int k = 0; k < 32; k++) {
			uint32_t u;
			memcpy(&u, &f[k], 4);
			dst[g * 32 + k] = (uint16_t)(u >> 16);
		}
	}
	return -1;
}

void kern_deinterleave_rows(uint8_t *dst, const uint8_t *src, int64_t groups, int64_t half,
                            size_t row_bytes)
{
	size_t gb = (size_t)(2 * half) * row_bytes;
	for (int64_t g = 0; g < groups; g++) {
		const uint8_t *s = src + (size_t)g * gb;
		uint8_t *d = dst + (size_t)g * gb;
		for (int64_t k = 0; k < half; k++) {
			memcpy(d + (size_t)k * row_bytes, s + (size_t)(2 * k) * row_bytes,
			       row_bytes);
			memcpy(d + (size_t)(half + k) * row_bytes,
			       s + (size_t)(2 * k + 1) * row_bytes, row_bytes);
		}
	}
}

void kern_transpose_stack(uint8_t *dst, const uint8_t *src, int64_t groups, int64_t rows,
                          int64_t cols, size_t esz)
{
	size_t mb = (size_t)(rows * cols) * esz;
	for (int64_t g = 0; g < groups; g++)
		for (int64_t r = 0; r < rows; r++)
			for (int64_t c = 0; c < cols; c++)
				memcpy(dst + g * mb + (size_t)(c * rows + r) * esz,
				       src + g * mb + (size_t)(r * cols + c) * esz, esz);
}
