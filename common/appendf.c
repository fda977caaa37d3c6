/* appendf.c — snprintf that appends and counts what did not fit (canonical
 * texts); progress as people read it. */
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>

#include "common/common.h"

void common_appendf(char *buf, size_t cap, size_t *len, const char *fmt, ...)
{
	char tmp[1];
	va_list ap;
	va_start(ap, fmt);
	int k = vsnprintf(*len < cap ? buf + *len : tmp, *len < cap ? cap - *len : 0, fmt, ap);
	va_end(ap);
	if (k > 0)
		*len += (size_t)k;
}

const char *common_fmt_progress(char *buf, size_t cap, uint64_t done, uint64_t total)
{
	if (total == 0) {
		snprintf(buf, cap, "size not known yet");
		return buf;
	}
	bool gib = total >= (1ull << 30);
	double unit = gib ? 1073741824.0 : 1048576.0;
	snprintf(buf, cap, "%.2f of %.2f %s (%.0f%%)", (double)done / unit, (double)total / unit,
	         gib ? "GiB" : "MiB", 100.0 * (double)done / (double)total);
	return buf;
}
