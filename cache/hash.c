/*
 * hash.c — chunk hashing on the cache's hot paths. Same digest as common_hash128
 * (XXH3-128, seed 0), through libxxhash's runtime-dispatched (AVX2/AVX-512)
 * entry points, and a copy fused with the hash so a chunk read from the page
 * cache crosses memory once.
 */
#include <string.h>

#define XXH_STATIC_LINKING_ONLY
#include <xxhash.h>
#define XXH_DISPATCH_DISABLE_REPLACE
#include <xxh_x86dispatch.h>

#include "cache/cache_int.h"

#define PIECE (128u << 10) /* fits L2: hashed right after it is copied */

wt_hash128 cache_hash(const void *data, size_t len)
{
	XXH128_hash_t h = XXH3_128bits_dispatch(data, len);
	return (wt_hash128){.hi = h.high64, .lo = h.low64};
}

wt_hash128 cache_hash_copy(void *dst, const void *src, size_t len)
{
	if (len <= PIECE) {
		memcpy(dst, src, len);
		return cache_hash(dst, len);
	}
	XXH3_state_t st;
	XXH3_128bits_reset(&st);
	for (size_t off = 0; off < len; off += PIECE) {
		size_t n = len - off < PIECE ? len - off : PIECE;
		memcpy((uint8_t *)dst + off, (const uint8_t *)src + off, n);
		XXH3_128bits_update_dispatch(&st, (uint8_t *)dst + off, n);
	}
	XXH128_hash_t h = XXH3_128bits_digest(&st);
	return (wt_hash128){.hi = h.high64, .lo = h.low64};
}
