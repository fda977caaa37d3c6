/*
 * hash.c — XXH3-128 digests through libxxhash, on x86 by its runtime-dispatched
 * (AVX2/AVX-512) entry points: the same digests as the plain calls, about
 * 1.4x faster on this machine kind (docs/architecture.md section 6), on the client's verify path.
 */
#include <stdlib.h>
#include <string.h>

#define XXH_STATIC_LINKING_ONLY
#include <xxhash.h>
/* The runtime-dispatched entry points (AVX2/AVX-512 chosen at run time) exist on
 * x86 only: libxxhash builds xxh_x86dispatch.c for x86 alone. Every other target
 * (aarch64 Grace nodes: NEON is chosen at compile time) and a build with
 * -DWT_HASH_PORTABLE use the portable entry points; the digests are the same
 * (tests/integration/hash_portable.sh). */
#if (defined(__x86_64__) || defined(__i386__)) && !defined(WT_HASH_PORTABLE)
#define XXH_DISPATCH_DISABLE_REPLACE
#include <xxh_x86dispatch.h>
#define HASH128_ONESHOT XXH3_128bits_dispatch
#define HASH128_UPDATE  XXH3_128bits_update_dispatch
#else
#define HASH128_ONESHOT XXH3_128bits
#define HASH128_UPDATE  XXH3_128bits_update
#endif

#include "common/common.h"

#define HASH_PIECE (128u << 10) /* fits L2: hashed right after it is copied */

struct common_hasher {
	XXH3_state_t st;
};

wt_hash128 common_hash128(const void *data, size_t len)
{
	XXH128_hash_t h = HASH128_ONESHOT(data, len);
	return (wt_hash128){.hi = h.high64, .lo = h.low64};
}

wt_hash128 common_hash128_copy_also(void *dst, const void *src, size_t len, common_hasher *also)
{
	if (len <= HASH_PIECE && also == NULL) {
		memcpy(dst, src, len);
		return common_hash128(dst, len);
	}
	XXH3_state_t st;
	XXH3_128bits_reset(&st);
	for (size_t off = 0; off < len; off += HASH_PIECE) {
		size_t n = len - off < HASH_PIECE ? len - off : HASH_PIECE;
		memcpy((uint8_t *)dst + off, (const uint8_t *)src + off, n);
		HASH128_UPDATE(&st, (uint8_t *)dst + off, n);
		if (also != NULL)
			HASH128_UPDATE(&also->st, (uint8_t *)dst + off, n);
	}
	XXH128_hash_t h = XXH3_128bits_digest(&st);
	return (wt_hash128){.hi = h.high64, .lo = h.low64};
}

wt_hash128 common_hash128_copy(void *dst, const void *src, size_t len)
{
	return common_hash128_copy_also(dst, src, len, NULL);
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
	HASH128_UPDATE(&h->st, data, len);
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

void common_hasher_copy(common_hasher *dst, const common_hasher *src)
{
	XXH3_copyState(&dst->st, &src->st);
}

void common_hasher_free(common_hasher *h)
{
	free(h);
}
