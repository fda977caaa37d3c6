/* utf8.c — strict UTF-8 (RFC 3629) for strings that arrive from outside, and
 * for text this process sends whose pieces were cut by bytes. */
#include <string.h>

#include "common/common.h"

/* Length of the valid UTF-8 sequence at p (1-4 bytes), or 0 if none starts
 * there: a continuation byte, an overlong form, a surrogate, past U+10FFFF,
 * or cut short by end. NUL counts as a 1-byte sequence. */
static size_t seq_len(const unsigned char *p, const unsigned char *end)
{
	unsigned c = *p++;
	if (c < 0x80)
		return 1;
	size_t more;
	unsigned min, cp;
	if (c >= 0xc2 && c <= 0xdf)
		more = 1, min = 0x80, cp = c & 0x1f;
	else if (c >= 0xe0 && c <= 0xef)
		more = 2, min = 0x800, cp = c & 0x0f;
	else if (c >= 0xf0 && c <= 0xf4)
		more = 3, min = 0x10000, cp = c & 0x07;
	else
		return 0; /* continuation byte, overlong lead 0xc0/0xc1, or > U+10FFFF */
	if ((size_t)(end - p) < more)
		return 0;
	for (size_t i = 0; i < more; i++, p++) {
		if ((*p & 0xc0) != 0x80)
			return 0;
		cp = (cp << 6) | (*p & 0x3fu);
	}
	if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		return 0; /* overlong, out of range, or a UTF-16 surrogate */
	return more + 1;
}

bool common_utf8_valid(const void *data, size_t len, bool allow_nul)
{
	const unsigned char *p = data, *end = p + len;
	while (p < end) {
		size_t n = seq_len(p, end);
		if (n == 0 || (*p == 0 && !allow_nul))
			return false;
		p += n;
	}
	return true;
}

void common_utf8_scrub(char *s)
{
	unsigned char *p = (unsigned char *)s, *end = p + strlen(s);
	while (p < end) {
		size_t n = seq_len(p, end);
		if (n == 0)
			*p++ = '?';
		else
			p += n;
	}
}
