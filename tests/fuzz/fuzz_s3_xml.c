/*
 * fuzz_s3_xml.c — the S3 ListObjectsV2 reply parser (loader/s3_xml.c,
 * s3_parse_list): what a hostile or broken S3 endpoint sends as a listing
 * page, or as an error body (<Error><Code>...) in its place.
 *
 * Input: the reply body, as it comes off the wire (not NUL-terminated).
 * A refused page is an error with a message and an empty s3_page. An accepted
 * one: every object has a non-empty key without a NUL byte, a size that fits
 * an int64 and that the input writes in decimal, an ETag; no string is longer
 * than the input; <Key> and <Size> text of each entry occurs in the input (raw
 * when it holds no '&'); a truncated page has a non-empty continuation token.
 */
#include <stdbool.h>
#include <string.h>

#include "loader/s3_int.h"
#include "tests/fuzz/fuzz.h"

/* s is a NUL-terminated string of at most max bytes, none of them NUL. */
static void check_str(const char *s, size_t max)
{
	FUZZ_CHECK(s != NULL);
	FUZZ_CHECK(strnlen(s, max + 1) <= max);
}

/* needle occurs in [h, h + n). */
static bool occurs(const uint8_t *h, size_t n, const char *needle, size_t nl)
{
	if (nl == 0)
		return true;
	for (size_t i = 0; i + nl <= n; i++)
		if (h[i] == (uint8_t)needle[0] && memcmp(h + i, needle, nl) == 0)
			return true;
	return false;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	s3_page pg;
	wt_errbuf err;
	err.msg[0] = '\0';
	int rv = s3_parse_list((const char *)data, size, "https://s3.example/bucket?list-type=2",
	                       &pg, &err);
	if (fuzz_note("s3_parse_list", rv, &err) != WT_OK) {
		FUZZ_CHECK(err.msg[0] != '\0');
		FUZZ_CHECK(pg.objs == NULL && pg.n == 0 && pg.next_token == NULL && !pg.truncated);
		return 0;
	}
	FUZZ_CHECK(pg.n <= S3_MAX_PAGE_KEYS && (pg.n == 0 || pg.objs != NULL));
	for (size_t i = 0; i < pg.n; i++) {
		const store_obj *o = &pg.objs[i];
		check_str(o->key, size);
		check_str(o->version, size);
		FUZZ_CHECK(o->key[0] != '\0');
		FUZZ_CHECK(o->nbytes <= (uint64_t)INT64_MAX);
		/* without entities, the text parsed is the text sent */
		if (!occurs(data, size, "&", 1)) {
			char num[32];
			int nl = snprintf(num, sizeof(num), "<Size>%llu<",
			                  (unsigned long long)o->nbytes);
			FUZZ_CHECK(occurs(data, size, num, (size_t)nl) ||
			           occurs(data, size, "<Size>0", 7)); /* leading zeros */
			FUZZ_CHECK(occurs(data, size, o->key, strlen(o->key)));
		}
	}
	if (pg.next_token != NULL)
		check_str(pg.next_token, size);
	if (pg.truncated)
		FUZZ_CHECK(pg.next_token != NULL && pg.next_token[0] != '\0');
	s3_page_clear(&pg);
	FUZZ_CHECK(pg.objs == NULL && pg.n == 0);
	return 0;
}
