/* find.c — binary search by name over sorted records (manifests and sinks). */
#include <string.h>

#include "common/common.h"

int common_find_name(const void *base, size_t n, size_t stride, size_t name_off, const char *name,
                     size_t *idx)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const char *got;
		memcpy(&got, (const char *)base + mid * stride + name_off, sizeof(got));
		int c = strcmp(got, name);
		if (c == 0) {
			*idx = mid;
			return WT_OK;
		}
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return WT_ENOTFOUND;
}
