/* shardid.c — shard ids and layout keys (FROZEN: they are cache keys). */
#include <string.h>

#include "weightd/weightd_int.h"

/* Hash input: "weightd-shard" NUL model NUL revision NUL layout_text NUL
 * plan_version(u32 LE) [rank(u32 LE)]. Streaming, so nothing is truncated. */
static wt_hash128 hash_parts(const char *model, const char *revision, const char *layout_text,
                             const uint32_t *rank)
{
	common_hasher *h = common_hasher_new();
	WT_ASSERT(h != NULL); /* a few hundred bytes; out of memory here is fatal */
	static const char tag[] = "weightd-shard";
	common_hasher_update(h, tag, sizeof(tag));
	common_hasher_update(h, model, strlen(model) + 1);
	common_hasher_update(h, revision, strlen(revision) + 1);
	common_hasher_update(h, layout_text, strlen(layout_text) + 1);
	uint8_t le[4];
	uint32_t v = WD_PLAN_VERSION;
	for (int i = 0; i < 4; i++)
		le[i] = (uint8_t)(v >> (8 * i));
	common_hasher_update(h, le, 4);
	if (rank != NULL) {
		for (int i = 0; i < 4; i++)
			le[i] = (uint8_t)(*rank >> (8 * i));
		common_hasher_update(h, le, 4);
	}
	wt_hash128 d = common_hasher_digest(h);
	common_hasher_free(h);
	return d;
}

void wd_shard_id(const char *model, const char *revision, const char *layout_text, uint32_t rank,
                 uint8_t out[WD_SHARD_ID_BYTES])
{
	out[0] = WD_SHARD_ID_VERSION;
	common_hash128_to_bytes(hash_parts(model, revision, layout_text, &rank), out + 1);
}

wt_hash128 wd_layout_key(const char *model, const char *revision, const char *layout_text)
{
	return hash_parts(model, revision, layout_text, NULL);
}
