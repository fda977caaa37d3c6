/* utf8.c — strict UTF-8 (RFC 3629) for strings that arrive from outside, for
 * text this process sends whose pieces were cut by bytes, and escaping for
 * text that reaches a log or a terminal. */
#include <stdlib.h>
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

bool common_text_has_control(const char *s)
{
	for (const unsigned char *p = (const unsigned char *)s; *p != '\0'; p++)
		if (*p < 0x20 || *p == 0x7f || (p[0] == 0xc2 && p[1] >= 0x80 && p[1] < 0xa0))
			return true;
	return false;
}

bool common_text_needs_escape(const char *s)
{
	for (const unsigned char *p = (const unsigned char *)s; *p != '\0'; p++)
		if (*p < 0x20 || *p >= 0x7f)
			return true;
	return false;
}

void common_text_escape(const char *s, char *out, size_t cap, bool keep_newlines)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *p = (const unsigned char *)s, *end = p + strlen(s);
	size_t o = 0;
	while (p < end && o + 5 <= cap) {
		size_t n = *p >= 0x80 ? seq_len(p, end) : 0;
		/* a C1 control: some terminals take U+009B as an escape introducer */
		if (n == 2 && p[0] == 0xc2 && p[1] < 0xa0)
			n = 0;
		if (n > 0) {
			memcpy(out + o, p, n);
			o += n;
			p += n;
			continue;
		}
		unsigned char c = *p++;
		if ((c >= 0x20 && c < 0x7f) || (keep_newlines && c == '\n')) {
			out[o++] = (char)c;
		} else if (c == '\n' || c == '\r' || c == '\t') {
			out[o++] = '\\';
			out[o++] = c == '\n' ? 'n' : c == '\r' ? 'r' : 't';
		} else {
			out[o++] = '\\';
			out[o++] = 'x';
			out[o++] = hex[c >> 4];
			out[o++] = hex[c & 15];
		}
	}
	out[o] = '\0';
}

char *common_text_escape_dup(const char *s, bool keep_newlines)
{
	size_t cap = 4 * strlen(s) + 1;
	char *out = malloc(cap);
	if (out != NULL)
		common_text_escape(s, out, cap, keep_newlines);
	return out;
}
