/*
 * s3_int.h — private to loader/: the S3 ListObjectsV2 reply parser used by
 * store_s3.c (kept apart so tests can feed it malformed XML directly).
 */
#ifndef WT_LOADER_S3_INT_H
#define WT_LOADER_S3_INT_H

#include <stdbool.h>
#include <stddef.h>

#include "loader/loader.h"

/* Ceiling on <Contents> entries in one page (S3 sends at most 1000). */
#define S3_MAX_PAGE_KEYS 100000u

typedef struct s3_page {
	store_obj *objs; /* full object keys, XML-unescaped; ETag quotes stripped; owned */
	size_t n;
	bool truncated;   /* <IsTruncated>true</IsTruncated> */
	char *next_token; /* <NextContinuationToken>, unescaped; NULL if absent; owned */
} s3_page;

/*
 * Parse one ListObjectsV2 reply (len bytes, need not be NUL-terminated).
 * Minimal and strict: a root other than <ListBucketResult>, a <Contents>
 * without <Key> or <Size>, a Size that is not a decimal u64, an unknown or
 * malformed entity, or a truncated reply without a continuation token is
 * WT_ECORRUPT naming `what` (the request URL) and the entry. out is zeroed on
 * entry and left empty on failure. Free with s3_page_clear().
 */
int s3_parse_list(const char *xml, size_t len, const char *what, s3_page *out, wt_errbuf *err);
void s3_page_clear(s3_page *p); /* NULL-safe */

#endif
