/* verify.c — cache_verify_all: re-read and re-hash every chunk and every shard record. */
#include <stdlib.h>
#include <string.h>

#include "cache/cache_int.h"

/* Snapshot of the written chunk hashes; caller holds c->lk. NULL on ENOMEM. */
static wt_hash128 *snapshot_chunks(cache *c, size_t *n)
{
	wt_hash128 *a = malloc((c->chunks.count ? c->chunks.count : 1) * sizeof(*a));
	if (a == NULL)
		return NULL;
	size_t k = 0;
	for (size_t i = 0; i < c->chunks.nb; i++)
		for (cache_chunk_ent *e = c->chunks.b[i]; e != NULL; e = e->next)
			if (e->written)
				a[k++] = e->hash;
	*n = k;
	return a;
}

static int verify_chunks(cache *c, cache_verify_fn cb, void *ctx, uint64_t *n_bad, wt_errbuf *err)
{
	size_t n = 0;
	pthread_mutex_lock(&c->lk);
	wt_hash128 *hs = snapshot_chunks(c, &n);
	pthread_mutex_unlock(&c->lk);
	if (hs == NULL)
		return wt_seterr(err, WT_ENOMEM, "cache '%s': out of memory in verify", c->dir);
	/* Check what is on disk, not the RAM copies: the blob cache has capacity 0
	 * while any verify scans (it drops its entries and keeps none); the
	 * configured capacity comes back when the last concurrent verify ends. */
	pthread_mutex_lock(&c->lk);
	if (c->blob_cache != NULL && c->verifying++ == 0)
		rocksdb_cache_set_capacity(c->blob_cache, 0);
	pthread_mutex_unlock(&c->lk);
	int rv = WT_OK;
	for (size_t i = 0; i < n; i++) {
		wt_errbuf e1;
		if (c->race_hook != NULL)
			c->race_hook(c->race_ctx, CACHE_RACE_VERIFY_READ, hs[i]);
		int r = cache_get_verified(c, hs[i], NULL, 0, NULL, NULL, false, &e1);
		if (r == WT_OK)
			continue;
		if (r == WT_ENOTFOUND) {
			/* Evicted while we scanned (or marked bad, reported already): a
			 * listed chunk without its bytes is WT_ECORRUPT, decided under the
			 * cache lock. Looking again now would take the same bytes written
			 * since by a production for damage, and evict its shard. */
			if (c->race_hook != NULL)
				c->race_hook(c->race_ctx, CACHE_RACE_VERIFY_MISS, hs[i]);
			continue;
		}
		if (r != WT_ECORRUPT) {
			rv = r;
			if (err != NULL)
				*err = e1;
			break;
		}
		uint8_t id[16];
		common_hash128_to_bytes(hs[i], id);
		(*n_bad)++;
		if (cb != NULL)
			cb(ctx, CACHE_BAD_CHUNK, id, 16);
	}
	free(hs);
	pthread_mutex_lock(&c->lk);
	if (c->blob_cache != NULL && --c->verifying == 0)
		rocksdb_cache_set_capacity(c->blob_cache, (size_t)c->opts.mem_bytes);
	pthread_mutex_unlock(&c->lk);
	return rv;
}

typedef struct shard_id {
	uint8_t *id;
	size_t len;
} shard_id;

static void free_ids(shard_id *ids, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(ids[i].id);
	free(ids);
}

static int verify_records(cache *c, cache_verify_fn cb, void *ctx, uint64_t *n_bad, wt_errbuf *err)
{
	pthread_mutex_lock(&c->lk);
	size_t n = 0;
	shard_id *ids = calloc(c->shards.count ? c->shards.count : 1, sizeof(*ids));
	for (size_t i = 0; ids != NULL && i < c->shards.nb; i++) {
		for (cache_shard_ent *e = c->shards.b[i]; e != NULL; e = e->next) {
			ids[n].id = malloc(e->id_len);
			if (ids[n].id == NULL) {
				free_ids(ids, n);
				ids = NULL;
				break;
			}
			memcpy(ids[n].id, e->id, e->id_len);
			ids[n++].len = e->id_len;
		}
	}
	pthread_mutex_unlock(&c->lk);
	if (ids == NULL)
		return wt_seterr(err, WT_ENOMEM, "cache '%s': out of memory in verify", c->dir);
	int rv = WT_OK;
	for (size_t i = 0; i < n; i++) {
		cache_shard *s = NULL;
		wt_errbuf e1;
		int r = cache_shard_open_int(c, ids[i].id, ids[i].len, false, &s, &e1);
		if (r == WT_OK) {
			cache_shard_close(s);
			continue;
		}
		if (r == WT_ENOTFOUND)
			continue; /* evicted while we scanned */
		if (r != WT_ECORRUPT) {
			rv = r;
			if (err != NULL)
				*err = e1;
			break;
		}
		(*n_bad)++;
		if (cb != NULL)
			cb(ctx, CACHE_BAD_MANIFEST, ids[i].id, ids[i].len);
	}
	free_ids(ids, n);
	return rv;
}

int cache_verify_all(cache *c, cache_verify_fn cb, void *ctx, uint64_t *n_bad, wt_errbuf *err)
{
	uint64_t bad = 0;
	int rv = verify_chunks(c, cb, ctx, &bad, err);
	if (rv == WT_OK)
		rv = verify_records(c, cb, ctx, &bad, err);
	if (n_bad != NULL)
		*n_bad = bad;
	return rv;
}
