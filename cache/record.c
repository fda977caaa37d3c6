/* record.c — the shard record (chunk list + manifest bytes + XXH3-128); format in cache_int.h. */
#include <stdlib.h>
#include <string.h>

#include "cache/cache_int.h"

static void put_u32le(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static uint32_t get_u32le(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

void cache_put_u64le(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

uint64_t cache_get_u64le(const uint8_t *p)
{
	uint64_t v = 0;
	for (int i = 7; i >= 0; i--)
		v = (v << 8) | p[i];
	return v;
}

uint8_t *cache_record_build(const cache_chunk_ref *chunks, size_t n, uint64_t nbytes,
                            const void *manifest, size_t manifest_len, size_t *len)
{
	uint64_t total, list;
	if (n > UINT32_MAX || !wt_mul_u64(n, CACHE_REC_ENTRY, &list) ||
	    !wt_add_u64(list, CACHE_REC_HDR + CACHE_REC_TRAILER, &total) ||
	    !wt_add_u64(total, manifest_len, &total) || total > SIZE_MAX)
		return NULL;
	uint8_t *r = malloc((size_t)total);
	if (r == NULL)
		return NULL;
	put_u32le(r, CACHE_REC_MAGIC);
	put_u32le(r + 4, (uint32_t)n);
	cache_put_u64le(r + 8, manifest_len);
	cache_put_u64le(r + 16, nbytes);
	uint8_t *p = r + CACHE_REC_HDR;
	for (size_t i = 0; i < n; i++, p += CACHE_REC_ENTRY) {
		common_hash128_to_bytes(chunks[i].hash, p);
		cache_put_u64le(p + 16, chunks[i].nbytes);
	}
	memcpy(p, manifest, manifest_len);
	p += manifest_len;
	common_hash128_to_bytes(common_hash128(r, (size_t)(p - r)), p);
	*len = (size_t)total;
	return r;
}

int cache_record_parse(const uint8_t *rec, size_t len, size_t *n_chunks, uint64_t *nbytes,
                       const uint8_t **manifest, size_t *manifest_len)
{
	if (len < CACHE_REC_HDR + CACHE_REC_TRAILER || get_u32le(rec) != CACHE_REC_MAGIC)
		return WT_ECORRUPT;
	uint64_t n = get_u32le(rec + 4), mlen = cache_get_u64le(rec + 8), list, total;
	if (!wt_mul_u64(n, CACHE_REC_ENTRY, &list) ||
	    !wt_add_u64(list, CACHE_REC_HDR + CACHE_REC_TRAILER, &total) ||
	    !wt_add_u64(total, mlen, &total) || total != len)
		return WT_ECORRUPT;
	wt_hash128 want = common_hash128_from_bytes(rec + len - CACHE_REC_TRAILER);
	if (!common_hash128_eq(common_hash128(rec, len - CACHE_REC_TRAILER), want))
		return WT_ECORRUPT;
	uint64_t sum = 0;
	for (uint64_t i = 0; i < n; i++) {
		uint64_t nb = cache_get_u64le(rec + CACHE_REC_HDR + i * CACHE_REC_ENTRY + 16);
		if (nb == 0 || !wt_add_u64(sum, nb, &sum))
			return WT_ECORRUPT;
	}
	if (sum != cache_get_u64le(rec + 16))
		return WT_ECORRUPT;
	*n_chunks = (size_t)n;
	*nbytes = sum;
	*manifest = rec + CACHE_REC_HDR + list;
	*manifest_len = (size_t)mlen;
	return WT_OK;
}

cache_chunk_ref cache_record_chunk(const uint8_t *rec, size_t i)
{
	const uint8_t *p = rec + CACHE_REC_HDR + i * CACHE_REC_ENTRY;
	return (cache_chunk_ref){.hash = common_hash128_from_bytes(p),
	                         .nbytes = cache_get_u64le(p + 16)};
}
