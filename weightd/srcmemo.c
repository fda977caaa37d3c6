/*
 * srcmemo.c — content digests of source objects remembered in the cache
 * (a ckpt_memo over cache notes), so opening a model after a restart, or
 * revalidating an unchanged one, reads no checkpoint bytes again.
 *
 * Note name: "srcdigest" NUL uri NUL key NUL size(decimal) NUL version.
 * Value: the 16-byte XXH3-128 of the object's bytes, its block size (4 bytes,
 * big-endian), its head block's size (8 bytes, big-endian) and the 16-byte
 * XXH3-128 of each block (store_pin_set_blocks): at most 1 MiB + 44 bytes
 * (STORE_MAX_BLOCKS and the head). A name that does not fit a
 * note is simply not remembered (the digest is computed each time). A digest
 * that a read disproves under the same version is forgotten (memo_forget).
 */
#include <stdio.h>
#include <stdlib.h>
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

/* XXH3-128 of the object, block bytes (u32), head block bytes (u64), big-endian */
#define MEMO_HEAD 28u

static void put_be(uint8_t *p, uint64_t v, int n)
{
	for (int i = 0; i < n; i++)
		p[i] = (uint8_t)(v >> (8 * (n - 1 - i)));
}

static uint64_t get_be(const uint8_t *p, int n)
{
	uint64_t v = 0;
	for (int i = 0; i < n; i++)
		v = v << 8 | p[i];
	return v;
}

static bool memo_get(void *ctx, const char *uri, const store_obj *o, wt_hash128 *out, uint64_t head,
                     uint32_t block_bytes, wt_hash128 *blocks, size_t nb)
{
	char name[CACHE_NOTE_NAME_MAX];
	size_t n = note_name(uri, o, name, sizeof(name));
	size_t want = MEMO_HEAD + 16 * nb, vlen = 0;
	uint8_t *v = want <= CACHE_NOTE_VALUE_MAX ? malloc(want) : NULL;
	/* a digest noted without block digests (16 bytes), or with another
	 * geometry, is not known */
	bool ok = v != NULL && n != 0 &&
	          cache_note_get(ctx, name, n, v, want, &vlen, NULL) == WT_OK && vlen == want &&
	          get_be(v + 16, 4) == block_bytes && get_be(v + 20, 8) == head;
	if (ok) {
		*out = common_hash128_from_bytes(v);
		for (size_t i = 0; i < nb; i++)
			blocks[i] = common_hash128_from_bytes(v + MEMO_HEAD + 16 * i);
	}
	free(v);
	return ok;
}

static void memo_put(void *ctx, const char *uri, const store_obj *o, wt_hash128 digest,
                     uint64_t head, uint32_t block_bytes, const wt_hash128 *blocks, size_t nb)
{
	char name[CACHE_NOTE_NAME_MAX];
	size_t n = note_name(uri, o, name, sizeof(name));
	size_t len = MEMO_HEAD + 16 * nb;
	uint8_t *v = n != 0 && len <= CACHE_NOTE_VALUE_MAX ? malloc(len) : NULL;
	if (v == NULL)
		return; /* not remembered: computed again next time */
	common_hash128_to_bytes(digest, v);
	put_be(v + 16, block_bytes, 4);
	put_be(v + 20, head, 8);
	for (size_t i = 0; i < nb; i++)
		common_hash128_to_bytes(blocks[i], v + MEMO_HEAD + 16 * i);
	wt_errbuf err;
	if (cache_note_put(ctx, name, n, v, len, &err) != WT_OK)
		WT_LOG(WT_LOG_WARNING, "cannot remember the digest of '%s' in '%s': %s", o->key,
		       uri, err.msg);
	free(v);
}

static void memo_forget(void *ctx, const char *uri, const store_obj *o)
{
	char name[CACHE_NOTE_NAME_MAX];
	size_t n = note_name(uri, o, name, sizeof(name));
	wt_errbuf err;
	if (n != 0 && cache_note_delete(ctx, name, n, &err) != WT_OK)
		WT_LOG(WT_LOG_WARNING, "cannot forget the digest of '%s' in '%s': %s", o->key, uri,
		       err.msg);
	else if (n != 0)
		WT_LOG(WT_LOG_NOTICE,
		       "'%s' in '%s': its bytes changed under version '%s'; its digest is taken "
		       "again",
		       o->key, uri, o->version);
}

void wd_srcmemo_init(ckpt_memo *memo, cache *c)
{
	memo->get = memo_get;
	memo->put = memo_put;
	memo->forget = memo_forget;
	memo->ctx = c;
}
