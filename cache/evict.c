/* evict.c — refcounts, LRU eviction under the byte budget, corruption handling, mark and sweep. */
#include <stdlib.h>
#include <string.h>

#include "cache/cache_int.h"

static void log_write_err(cache *c, char *e, const char *what)
{
	wt_errbuf err;
	cache_rocks_err(c, e, what, &err);
	WT_LOG(WT_LOG_ERR, "%s (the next gc retries)", err.msg);
}

/* Queue the deletion of chunk e's value and index entry, and forget it. */
static void drop_chunk(cache *c, cache_chunk_ent *e, rocksdb_writebatch_t *wb)
{
	uint8_t k[17];
	k[0] = 'k';
	common_hash128_to_bytes(e->hash, k + 1);
	rocksdb_writebatch_delete_cf(wb, c->cf[CACHE_CF_CHUNKS], (const char *)k + 1, 16);
	rocksdb_writebatch_delete_cf(wb, c->cf[CACHE_CF_META], (const char *)k, 17);
	cache_chunk_remove(&c->chunks, e->hash);
	c->bytes -= e->nbytes;
	c->rc_freed += e->nbytes;
	free(e);
}

static void unref_into(cache *c, const cache_chunk_ref *list, size_t n, rocksdb_writebatch_t *wb)
{
	for (size_t i = 0; i < n; i++) {
		cache_chunk_ent *e = cache_chunk_find(&c->chunks, list[i].hash);
		WT_ASSERT(e != NULL && e->refs > 0);
		if (--e->refs == 0)
			drop_chunk(c, e, wb);
	}
}

void cache_unref_locked(cache *c, const cache_chunk_ref *list, size_t n)
{
	rocksdb_writebatch_t *wb = rocksdb_writebatch_create();
	WT_ASSERT(wb != NULL);
	unref_into(c, list, n, wb);
	if (rocksdb_writebatch_count(wb) > 0) {
		char *e = NULL;
		if (c->step_hook != NULL)
			c->step_hook(c->step_ctx, CACHE_STEP_UNREF_WRITE);
		rocksdb_write(c->db, c->wo, wb, &e);
		if (e != NULL)
			log_write_err(c, e, "delete unreferenced chunks");
		if (c->step_hook != NULL)
			c->step_hook(c->step_ctx, CACHE_STEP_UNREF_DONE);
	}
	rocksdb_writebatch_destroy(wb);
}

void cache_evict_locked(cache *c, cache_shard_ent *e, const char *why)
{
	/* Keys on the stack: eviction must not fail for want of memory. */
	uint8_t k[CACHE_SHARD_ID_MAX + 1], u[CACHE_SHARD_ID_MAX + 1];
	WT_ASSERT(e->id_len <= CACHE_SHARD_ID_MAX);
	size_t klen = e->id_len + 1, ulen = e->id_len + 1;
	k[0] = CACHE_FORMAT;
	u[0] = 'u';
	memcpy(k + 1, e->id, e->id_len);
	memcpy(u + 1, e->id, e->id_len);
	rocksdb_writebatch_t *wb = rocksdb_writebatch_create();
	WT_ASSERT(wb != NULL); /* C++ new: aborts rather than returning NULL */
	rocksdb_writebatch_delete_cf(wb, c->cf[CACHE_CF_MANIFESTS], (const char *)k, klen);
	rocksdb_writebatch_delete_cf(wb, c->cf[CACHE_CF_META], (const char *)u, ulen);
	cache_shard_unlink(&c->shards, e);
	c->evictions++;
	if (e->pins > 0) {
		e->doomed = true;
		e->next = c->doomed;
		c->doomed = e;
	} else {
		unref_into(c, e->chunks, e->n_chunks, wb);
	}
	char *err = NULL;
	if (c->step_hook != NULL)
		c->step_hook(c->step_ctx, CACHE_STEP_EVICT_WRITE);
	rocksdb_write(c->db, c->wo, wb, &err);
	if (err != NULL)
		log_write_err(c, err, "evict shard");
	if (c->step_hook != NULL)
		c->step_hook(c->step_ctx, CACHE_STEP_EVICT_DONE);
	char hex[WT_HASH_HEX_LEN + 1];
	common_hash128_hex(common_hash128(e->id, e->id_len), hex);
	WT_LOG(WT_LOG_INFO, "cache '%s': evicted shard (id hash %s, %llu bytes): %s", c->dir, hex,
	       (unsigned long long)e->nbytes, why);
	rocksdb_writebatch_destroy(wb);
	if (!e->doomed) {
		cache_shard_ent_free(e);
		cache_reclaim_maybe_locked(c);
	}
}

void cache_enforce_budget_locked(cache *c)
{
	while (c->bytes > c->opts.max_bytes) {
		cache_shard_ent *victim = NULL;
		for (size_t i = 0; i < c->shards.nb; i++)
			for (cache_shard_ent *e = c->shards.b[i]; e != NULL; e = e->next)
				if (e->pins == 0 &&
				    (victim == NULL || e->last_use < victim->last_use))
					victim = e;
		if (victim == NULL)
			return; /* pinned shards and writers hold the rest */
		cache_evict_locked(c, victim, "over the byte budget (least recently used)");
	}
}

static bool lists(const cache_shard_ent *e, wt_hash128 h)
{
	for (size_t i = 0; i < e->n_chunks; i++)
		if (common_hash128_eq(e->chunks[i].hash, h))
			return true;
	return false;
}

void cache_chunk_corrupt_locked(cache *c, wt_hash128 h, const char *what)
{
	char hex[WT_HASH_HEX_LEN + 1];
	common_hash128_hex(h, hex);
	c->corruptions++;
	cache_chunk_ent *ce = cache_chunk_find(&c->chunks, h);
	if (ce != NULL)
		ce->bad = true;
	WT_LOG(WT_LOG_ERR,
	       "cache '%s': chunk %s %s; evicting every shard that lists it (they are rebuilt)",
	       c->dir, hex, what);
	for (size_t i = 0; i < c->shards.nb; i++) {
		cache_shard_ent *e = c->shards.b[i];
		while (e != NULL) {
			cache_shard_ent *next = e->next;
			if (lists(e, h))
				cache_evict_locked(c, e, "lists a corrupt chunk");
			e = next;
		}
	}
}

static void mark(cache *c, const cache_chunk_ref *list, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		cache_chunk_ent *e = cache_chunk_find(&c->chunks, list[i].hash);
		WT_ASSERT(e != NULL);
		e->refs++;
	}
}

int cache_gc_locked(cache *c, uint64_t *freed, wt_errbuf *err)
{
	/* Mark: recount every reference from live shards, doomed shards and writers. */
	for (size_t i = 0; i < c->chunks.nb; i++)
		for (cache_chunk_ent *e = c->chunks.b[i]; e != NULL; e = e->next)
			e->refs = 0;
	for (size_t i = 0; i < c->shards.nb; i++)
		for (cache_shard_ent *e = c->shards.b[i]; e != NULL; e = e->next)
			mark(c, e->chunks, e->n_chunks);
	for (cache_shard_ent *e = c->doomed; e != NULL; e = e->next)
		mark(c, e->chunks, e->n_chunks);
	for (cache_writer *w = c->writers; w != NULL; w = w->next_w)
		mark(c, w->list, w->n_list);

	/* Sweep: index entries memory does not know, then unreferenced chunks in memory. */
	rocksdb_writebatch_t *wb = rocksdb_writebatch_create();
	if (wb == NULL)
		return wt_seterr(err, WT_ENOMEM, "cache '%s': out of memory in gc", c->dir);
	uint64_t n = 0;
	rocksdb_iterator_t *it =
	    rocksdb_create_iterator_cf(c->db, c->ro_meta, c->cf[CACHE_CF_META]);
	for (rocksdb_iter_seek(it, "k", 1); rocksdb_iter_valid(it); rocksdb_iter_next(it)) {
		size_t klen, vlen;
		const char *k = rocksdb_iter_key(it, &klen);
		const char *v = rocksdb_iter_value(it, &vlen);
		if (klen == 0 || k[0] != 'k')
			break;
		if (klen == 17 &&
		    cache_chunk_find(&c->chunks,
		                     common_hash128_from_bytes((const uint8_t *)k + 1)) == NULL) {
			rocksdb_writebatch_delete_cf(wb, c->cf[CACHE_CF_CHUNKS], k + 1, 16);
			rocksdb_writebatch_delete_cf(wb, c->cf[CACHE_CF_META], k, klen);
			if (vlen == 8)
				n += cache_get_u64le((const uint8_t *)v);
		}
	}
	char *e = NULL;
	rocksdb_iter_get_error(it, &e);
	rocksdb_iter_destroy(it);
	for (size_t i = 0; i < c->chunks.nb; i++) {
		cache_chunk_ent *ce = c->chunks.b[i];
		while (ce != NULL) {
			cache_chunk_ent *next = ce->next;
			if (ce->refs == 0) {
				n += ce->nbytes;
				drop_chunk(c, ce, wb);
			}
			ce = next;
		}
	}
	int rv = WT_OK;
	if (e != NULL)
		rv = cache_rocks_err(c, e, "gc scan of the chunk index", err);
	if (rocksdb_writebatch_count(wb) > 0) {
		rocksdb_write(c->db, c->wo, wb, &e);
		if (e != NULL && rv == WT_OK)
			rv = cache_rocks_err(c, e, "gc delete", err);
		else if (e != NULL)
			free(e);
	}
	rocksdb_writebatch_destroy(wb);
	if (rv == WT_OK && freed != NULL)
		*freed = n;
	return rv;
}

int cache_gc(cache *c, uint64_t *freed_bytes, wt_errbuf *err)
{
	pthread_mutex_lock(&c->lk);
	int rv = cache_gc_locked(c, freed_bytes, err);
	pthread_mutex_unlock(&c->lk);
	return rv;
}

int cache_evict(cache *c, const void *id, size_t id_len, wt_errbuf *err)
{
	int rv = WT_OK;
	pthread_mutex_lock(&c->lk);
	cache_shard_ent *e = cache_shard_find(&c->shards, id, id_len);
	if (e == NULL)
		rv = wt_seterr(err, WT_ENOTFOUND, "cache '%s': shard (%zu-byte id) not cached",
		               c->dir, id_len);
	else if (e->pins > e->scans) /* a scan's pin: evicted, its handle stays valid */
		rv = wt_seterr(err, WT_EBUSY,
		               "cache '%s': shard (%zu-byte id) is pinned by %u reader(s); retry "
		               "after they close it",
		               c->dir, id_len, e->pins - e->scans);
	else
		cache_evict_locked(c, e, "evicted on request");
	pthread_mutex_unlock(&c->lk);
	return rv;
}
