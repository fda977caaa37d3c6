/*
 * s3_xml.c — a minimal, strict reader for S3 ListObjectsV2 replies.
 *
 * Only what the store needs is read:
 *
 *   <ListBucketResult ...>                       root; anything else is an error
 *     <IsTruncated>true|false</IsTruncated>
 *     <NextContinuationToken>T</NextContinuationToken>   required when truncated
 *     <Contents>                                 one per object
 *       <Key>K</Key>                             required, text, entity-escaped
 *       <Size>N</Size>                           required, decimal u64
 *       <ETag>"E"</ETag>                         optional; quotes stripped
 *     </Contents>
 *   </ListBucketResult>
 *
 * Text may contain the five predefined entities and &#N; / &#xH; character
 * references (encoded as UTF-8); a raw '<' inside text, an unknown entity or
 * a reference to NUL or beyond U+10FFFF is WT_ECORRUPT. The reply is copied
 * and NUL-terminated first, so no search runs past its end.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/common.h"
#include "loader/s3_int.h"

void s3_page_clear(s3_page *p)
{
	if (p == NULL)
		return;
	for (size_t i = 0; i < p->n; i++)
		store_obj_clear(&p->objs[i]);
	free(p->objs);
	free(p->next_token);
	memset(p, 0, sizeof(*p));
}

/* Append code point cp as UTF-8. */
static size_t put_utf8(char *o, uint32_t cp)
{
	if (cp < 0x80) {
		o[0] = (char)cp;
		return 1;
	}
	if (cp < 0x800) {
		o[0] = (char)(0xC0 | (cp >> 6));
		o[1] = (char)(0x80 | (cp & 0x3F));
		return 2;
	}
	if (cp < 0x10000) {
		o[0] = (char)(0xE0 | (cp >> 12));
		o[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
		o[2] = (char)(0x80 | (cp & 0x3F));
		return 3;
	}
	o[0] = (char)(0xF0 | (cp >> 18));
	o[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
	o[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
	o[3] = (char)(0x80 | (cp & 0x3F));
	return 4;
}

/* Unescape text [a, b) into a malloc'd string. NULL + *bad on malformed text. */
static char *unescape(const char *a, const char *b, bool *bad)
{
	*bad = false;
	/* every entity is at least as long as its UTF-8 expansion */
	char *o = malloc((size_t)(b - a) + 1), *p = o;
	if (o == NULL)
		return NULL;
	static const struct {
		const char *name;
		char ch;
	} ents[] = {{"amp;", '&'}, {"lt;", '<'}, {"gt;", '>'}, {"quot;", '"'}, {"apos;", '\''}};
	while (a < b) {
		if (*a == '<' || *a == '\0')
			goto bad;
		if (*a != '&') {
			*p++ = *a++;
			continue;
		}
		a++;
		size_t i;
		for (i = 0; i < sizeof(ents) / sizeof(ents[0]); i++) {
			size_t n = strlen(ents[i].name);
			if ((size_t)(b - a) >= n && memcmp(a, ents[i].name, n) == 0) {
				*p++ = ents[i].ch;
				a += n;
				break;
			}
		}
		if (i < sizeof(ents) / sizeof(ents[0]))
			continue;
		if (a >= b || *a != '#')
			goto bad;
		a++;
		int base = 10;
		if (a < b && *a == 'x') {
			base = 16;
			a++;
		}
		uint32_t cp = 0;
		int digits = 0;
		for (; a < b && *a != ';'; a++, digits++) {
			int d = *a >= '0' && *a <= '9'   ? *a - '0'
			        : *a >= 'a' && *a <= 'f' ? *a - 'a' + 10
			        : *a >= 'A' && *a <= 'F' ? *a - 'A' + 10
			                                 : 99;
			if (d >= base || digits >= 8)
				goto bad;
			cp = cp * (uint32_t)base + (uint32_t)d;
		}
		if (a >= b || digits == 0 || cp == 0 || cp > 0x10FFFF ||
		    (cp >= 0xD800 && cp <= 0xDFFF))
			goto bad;
		a++; /* ';' */
		p += put_utf8(p, cp);
	}
	*p = '\0';
	return o;
bad:
	free(o);
	*bad = true;
	return NULL;
}

/* Text of the first <tag>...</tag> in [from, to), or NULL (not found: *found = false). */
static int element(const char *from, const char *to, const char *tag, char **out, bool *found,
                   const char *what, wt_errbuf *err)
{
	char open[48], close[48];
	snprintf(open, sizeof(open), "<%s>", tag);
	snprintf(close, sizeof(close), "</%s>", tag);
	*out = NULL;
	*found = false;
	const char *a = strstr(from, open);
	if (a == NULL || a >= to)
		return WT_OK;
	a += strlen(open);
	const char *b = strstr(a, close);
	if (b == NULL || b > to)
		return wt_seterr(err, WT_ECORRUPT,
		                 "ListObjectsV2 reply from %s: <%s> is not closed", what, tag);
	bool bad;
	if ((*out = unescape(a, b, &bad)) == NULL)
		return bad ? wt_seterr(err, WT_ECORRUPT,
		                       "ListObjectsV2 reply from %s: bad text in <%s>: '%.*s'",
		                       what, tag, (int)(b - a > 80 ? 80 : b - a), a)
		           : wt_seterr(err, WT_ENOMEM, "out of memory parsing %s", what);
	*found = true;
	return WT_OK;
}

static int parse_entry(const char *a, const char *b, size_t idx, const char *what, store_obj *o,
                       wt_errbuf *err)
{
	char *size = NULL, *etag = NULL;
	bool found;
	int rv = element(a, b, "Key", &o->key, &found, what, err);
	if (rv == WT_OK && (!found || o->key[0] == '\0'))
		rv = wt_seterr(err, WT_ECORRUPT,
		               "ListObjectsV2 reply from %s: <Contents> #%zu has no <Key>", what,
		               idx);
	if (rv == WT_OK)
		rv = element(a, b, "Size", &size, &found, what, err);
	if (rv == WT_OK && !found)
		rv = wt_seterr(err, WT_ECORRUPT,
		               "ListObjectsV2 reply from %s: object '%s' has no <Size>", what,
		               o->key);
	if (rv == WT_OK) {
		uint64_t v = 0;
		const char *p = size;
		for (; *p >= '0' && *p <= '9'; p++)
			if (!wt_mul_u64(v, 10, &v) || !wt_add_u64(v, (uint64_t)(*p - '0'), &v))
				break;
		if (p == size || *p != '\0' || v > (uint64_t)INT64_MAX)
			rv =
			    wt_seterr(err, WT_ECORRUPT,
			              "ListObjectsV2 reply from %s: object '%s': <Size> '%.40s' is "
			              "not a byte count",
			              what, o->key, size);
		o->nbytes = v;
	}
	if (rv == WT_OK)
		rv = element(a, b, "ETag", &etag, &found, what, err);
	if (rv == WT_OK) {
		const char *e = etag ? etag : "";
		size_t n = strlen(e);
		if (n >= 2 && e[0] == '"' && e[n - 1] == '"') {
			e++;
			n -= 2;
		}
		if ((o->version = strndup(e, n)) == NULL)
			rv = wt_seterr(err, WT_ENOMEM, "out of memory parsing %s", what);
	}
	free(size);
	free(etag);
	return rv;
}

static int parse(const char *x, const char *what, s3_page *out, wt_errbuf *err)
{
	const char *root = strstr(x, "<ListBucketResult");
	if (root == NULL) {
		const char *code = strstr(x, "<Code>");
		return wt_seterr(err, WT_ECORRUPT,
		                 "ListObjectsV2 reply from %s is not a <ListBucketResult>%s%.60s",
		                 what, code ? ": " : "", code ? code : "");
	}
	const char *end = strstr(root, "</ListBucketResult>");
	if (end == NULL)
		return wt_seterr(
		    err, WT_ECORRUPT,
		    "ListObjectsV2 reply from %s is cut short (no </ListBucketResult>)", what);
	size_t cap = 0;
	const char *p = root;
	int rv = WT_OK;
	while (rv == WT_OK) {
		const char *a = strstr(p, "<Contents>");
		if (a == NULL || a > end)
			break;
		const char *b = strstr(a, "</Contents>");
		if (b == NULL || b > end)
			return wt_seterr(
			    err, WT_ECORRUPT,
			    "ListObjectsV2 reply from %s: <Contents> #%zu is not closed", what,
			    out->n);
		if (out->n == S3_MAX_PAGE_KEYS)
			return wt_seterr(err, WT_ETOOBIG,
			                 "ListObjectsV2 reply from %s: over %u objects in one page",
			                 what, S3_MAX_PAGE_KEYS);
		if (out->n == cap) {
			size_t ncap = cap ? 2 * cap : 64;
			store_obj *no = realloc(out->objs, ncap * sizeof(*no));
			if (no == NULL)
				return wt_seterr(err, WT_ENOMEM, "out of memory parsing %s", what);
			out->objs = no;
			cap = ncap;
		}
		store_obj *o = &out->objs[out->n++];
		memset(o, 0, sizeof(*o));
		/* bound the searches to this entry: x is our own copy */
		char *bm = (char *)b;
		*bm = '\0';
		rv = parse_entry(a, b, out->n - 1, what, o, err);
		*bm = '<';
		p = b + strlen("</Contents>");
	}
	if (rv != WT_OK)
		return rv;
	/* page-level fields live outside every <Contents> */
	char *trunc = NULL;
	bool found;
	if ((rv = element(root, end, "IsTruncated", &trunc, &found, what, err)) != WT_OK)
		return rv;
	if (found && strcmp(trunc, "true") != 0 && strcmp(trunc, "false") != 0) {
		rv = wt_seterr(err, WT_ECORRUPT,
		               "ListObjectsV2 reply from %s: <IsTruncated> is '%.20s', want true "
		               "or false",
		               what, trunc);
		free(trunc);
		return rv;
	}
	out->truncated = found && strcmp(trunc, "true") == 0;
	free(trunc);
	rv = element(root, end, "NextContinuationToken", &out->next_token, &found, what, err);
	if (rv == WT_OK && out->truncated && (!found || out->next_token[0] == '\0'))
		rv = wt_seterr(err, WT_ECORRUPT,
		               "ListObjectsV2 reply from %s is truncated but has no "
		               "<NextContinuationToken>",
		               what);
	return rv;
}

int s3_parse_list(const char *xml, size_t len, const char *what, s3_page *out, wt_errbuf *err)
{
	memset(out, 0, sizeof(*out));
	if (memchr(xml, '\0', len) != NULL)
		return wt_seterr(err, WT_ECORRUPT,
		                 "ListObjectsV2 reply from %s contains a NUL byte", what);
	char *x = strndup(xml, len);
	if (x == NULL)
		return wt_seterr(err, WT_ENOMEM, "out of memory parsing %s", what);
	int rv = parse(x, what, out, err);
	free(x);
	if (rv != WT_OK)
		s3_page_clear(out);
	return rv;
}
