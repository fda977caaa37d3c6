/* st_read.c — read and validate a safetensors header from an object store. */
#include <stdlib.h>
#include <string.h>

#include "common/common.h"
#include "loader/loader.h"

int st_read_pinned(store_pin *p, st_file *out, wt_errbuf *err)
{
	memset(out, 0, sizeof(*out));
	const char *key = store_pin_obj(p)->key;
	uint64_t size = store_pin_obj(p)->nbytes;
	if (size < 8)
		return wt_seterr(err, WT_ECORRUPT,
		                 "'%s': %llu bytes, shorter than the 8-byte header length", key,
		                 (unsigned long long)size);
	unsigned char prefix[8];
	int rv = store_pin_read(p, 0, prefix, sizeof(prefix), err);
	if (rv != WT_OK)
		return rv;
	uint64_t hlen;
	if ((rv = st_check_prefix(prefix, size, &hlen, err)) != WT_OK)
		return wt_errprefix(err, "'%s'", key);
	char *hdr = malloc(hlen ? (size_t)hlen : 1);
	if (hdr == NULL)
		return wt_seterr(err, WT_ENOMEM, "'%s': out of memory for a %llu-byte header", key,
		                 (unsigned long long)hlen);
	rv = store_pin_read(p, 8, hdr, (size_t)hlen, err);
	if (rv == WT_OK && (rv = st_parse_header(hdr, (size_t)hlen, size, out, err)) != WT_OK)
		wt_errprefix(err, "'%s'", key);
	common_hasher *h = rv == WT_OK ? common_hasher_new() : NULL;
	if (rv == WT_OK && h == NULL)
		rv = wt_seterr(err, WT_ENOMEM, "'%s': out of memory", key);
	if (h != NULL) { /* what was parsed: the content digest's head block must match it */
		common_hasher_update(h, prefix, sizeof(prefix));
		common_hasher_update(h, hdr, (size_t)hlen);
		out->head_digest = common_hasher_digest(h);
		common_hasher_free(h);
	}
	free(hdr);
	return rv;
}

int st_read_file(store *s, const char *key, st_file *out, wt_errbuf *err)
{
	memset(out, 0, sizeof(*out));
	store_pin *p = NULL;
	int rv = store_pin_open(s, key, &p, err);
	if (rv == WT_OK)
		rv = st_read_pinned(p, out, err);
	store_pin_close(p);
	return rv;
}
