/* utf8.c — strict UTF-8 validation (RFC 3629) for strings that arrive from outside. */
#include "common/common.h"

bool common_utf8_valid(const void *data, size_t len, bool allow_nul)
{
	const unsigned char *p = data, *end = p + len;
	while (p < end) {
		unsigned c = *p++;
		if (c < 0x80) {
			if (c == 0 && !allow_nul)
				return false;
			continue;
		}
		size_t more;
		unsigned min, cp;
		if (c >= 0xc2 && c <= 0xdf) {
			more = 1, min = 0x80, cp = c & 0x1f;
		} else if (c >= 0xe0 && c <= 0xef) {
			more = 2, min = 0x800, cp = c & 0x0f;
		} else if (c >= 0xf0 && c <= 0xf4) {
			more = 3, min = 0x10000, cp = c & 0x07;
		} else {
			return false; /* continuation byte, overlong lead 0xc0/0xc1, or > U+10FFFF
			               */
		}
		if ((size_t)(end - p) < more)
			return false;
		for (size_t i = 0; i < more; i++, p++) {
			if ((*p & 0xc0) != 0x80)
				return false;
			cp = (cp << 6) | (*p & 0x3fu);
		}
		if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
			return false; /* overlong, out of range, or a UTF-16 surrogate */
	}
	return true;
}
