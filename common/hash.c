/* hash.c — XXH3-128 digests through libxxhash. */
#include <stdlib.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "common/common.h"

struct common_hasher {
	XXH3_state_t st;
};

wt_hash128 common_hash128(const void *data, size_t len)
{
	XXH128_hash_t h = XXH3_128bits(data, len);
	return (wt_hash128){.hi = h.high64, .lo = h.low64};
}

void common_hash128_to_bytes(wt_hash128 h, uint8_t out[16])
{
	for (int i = 0; i < 8; i++) {
		out[i] = (uint8_t)(h.hi >> (56 - 8 * i));
		out[8 + i] = (uint8_t)(h.lo >> (56 - 8 * i));
	}
}

wt_hash128 common_hash128_from_bytes(const uint8_t in[16])
{
	wt_hash128 h = {0, 0};
	for (int i = 0; i < 8; i++) {
		h.hi = (h.hi << 8) | in[i];
		h.lo = (h.lo << 8) | in[8 + i];
	}
	return h;
}

void common_hash128_hex(wt_hash128 h, char out[WT_HASH_HEX_LEN + 1])
{
	static const char hex[] = "0123456789abcdef";
	uint8_t b[16];
	common_hash128_to_bytes(h, b);
	for (int i = 0; i < 16; i++) {
		out[2 * i] = hex[b[i] >> 4];
		out[2 * i + 1] = hex[b[i] & 15];
	}
	out[WT_HASH_HEX_LEN] = '\0';
}

common_hasher *common_hasher_new(void)
{
	common_hasher *h = aligned_alloc(64, (sizeof(*h) + 63) / 64 * 64);
	if (h != NULL)
		XXH3_128bits_reset(&h->st);
	return h;
}

void common_hasher_update(common_hasher *h, const void *data, size_t len)
{
	XXH3_128bits_update(&h->st, data, len);
}

wt_hash128 common_hasher_digest(const common_hasher *h)
{
	XXH128_hash_t d = XXH3_128bits_digest(&h->st);
	return (wt_hash128){.hi = d.high64, .lo = d.low64};
}

void common_hasher_reset(common_hasher *h)
{
	XXH3_128bits_reset(&h->st);
}

void common_hasher_free(common_hasher *h)
{
	free(h);
}
