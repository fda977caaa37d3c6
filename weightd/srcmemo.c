/*
 * srcmemo.c — content digests of source objects remembered in the cache
 * (a ckpt_memo over cache notes), so opening a model after a restart, or
 * revalidating an unchanged one, reads no checkpoint bytes again.
 *
 * Note name: "srcdigest" NUL uri NUL key NUL size(decimal) NUL version.
 * Value: the 16-byte XXH3-128 of the object's bytes. A name that does not
 * fit a note is simply not remembered (the digest is computed each time).
 */
#include <stdio.h>
#include <string.h>

#include "weightd/server_int.h"

static size_t note_name(const char *uri, const store_obj *o, char *out, size_t cap)
{
	const char *parts[3] = {uri, o->key, NULL};
	char size[24];
	snprintf(size, sizeof(size), "%llu", (unsigned long long)o->nbytes);
	size_t n = 0;
	static const char tag[] = "srcdigest";
	const char *all[5] = {tag, parts[0], parts[1], size, o->version};
	for (int i = 0; i < 5; i++) {
		size_t k = strlen(all[i]) + (i < 4 ? 1 : 0); /* NUL separators */
		if (n + k > cap)
			return 0;
		memcpy(out + n, all[i], k);
		n += k;
	}
	return n;
}

static bool memo_get(void *ctx, const char *uri, const store_obj *o, wt_hash128 *out)
{
	char name[CACHE_NOTE_NAME_MAX];
	size_t n = note_name(uri, o, name, sizeof(name));
	uint8_t v[16];
	size_t vlen;
	if (n == 0 || cache_note_get(ctx, name, n, v, sizeof(v), &vlen, NULL) != WT_OK ||
	    vlen != sizeof(v))
		return false;
	*out = common_hash128_from_bytes(v);
	return true;
}

static void memo_put(void *ctx, const char *uri, const store_obj *o, wt_hash128 digest)
{
	char name[CACHE_NOTE_NAME_MAX];
	size_t n = note_name(uri, o, name, sizeof(name));
	uint8_t v[16];
	common_hash128_to_bytes(digest, v);
	wt_errbuf err;
	if (n != 0 && cache_note_put(ctx, name, n, v, sizeof(v), &err) != WT_OK)
		WT_LOG(WT_LOG_WARNING, "cannot remember the digest of '%s' in '%s': %s", o->key,
		       uri, err.msg);
}

void wd_srcmemo_init(ckpt_memo *memo, cache *c)
{
	memo->get = memo_get;
	memo->put = memo_put;
	memo->ctx = c;
}
