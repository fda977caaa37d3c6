/*
 * copy.c — 2-D box copies: the slicing and fusing primitive of the planner
 * (row slices, column slices, concatenation into a fused tensor).
 */
#include <string.h>

#include "kernels/kernels.h"

void kern_copy2d(void *dst, size_t dst_stride, const void *src, size_t src_stride, size_t rows,
                 size_t row_bytes)
{
	if (rows == 0 || row_bytes == 0)
		return;
	if (dst_stride == row_bytes && src_stride == row_bytes) {
		memcpy(dst, src, rows * row_bytes); /* one contiguous run */
		return;
	}
	unsigned char *d = dst;
	const unsigned char *s = src;
	for (size_t r = 0; r < rows; r++)
		memcpy(d + r * dst_stride, s + r * src_stride, row_bytes);
}
