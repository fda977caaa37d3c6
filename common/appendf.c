/* appendf.c — snprintf that appends and counts what did not fit (canonical texts). */
#include <stdarg.h>
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
