/* write.c — writing a shard: chunks first (deduplicated), the manifest last and synced. */
#include <stdlib.h>
#include <string.h>

#include "cache/cache_int.h"

int cache_begin_shard(cache *c, const void *id, size_t id_len, cache_writer **out, wt_errbuf *err)
{
	if (id == NULL || id_len == 0 || id_len > CACHE_SHARD_ID_MAX)
		return wt_seterr(err, WT_EINVAL,
		                 "cache '%s': shard id of %zu bytes; ids are 1..%d bytes", c->dir,
		                 id_len, CACHE_SHARD_ID_MAX);
	cache_writer *w = calloc(1, sizeof(*w));
	if (w == NULL || (w->id = malloc(id_len)) == NULL) {
		free(w);
		return wt_seterr(err, WT_ENOMEM, "cache '%s': out of memory", c->dir);
	}
	memcpy(w->id, id, id_len);
	w->id_len = id_len;
	w->c = c;
	int rv = WT_OK;
	pthread_mutex_lock(&c->lk);
	if (cache_shard_find(&c->shards, id, id_len) != NULL)
		rv = wt_seterr(err, WT_EEXIST,
		               "cache '%s': shard (%zu-byte id) is already cached; evict it first "
		               "to replace it",
		               c->dir, id_len);
	for (cache_writer *o = c->writers; o != NULL && rv == WT_OK; o = o->next_w)
		if (o->id_len == id_len && memcmp(o->id, id, id_len) == 0)
			rv =
			    wt_seterr(err, WT_EBUSY,
			              "cache '%s': shard (%zu-byte id) is being written by another "
			              "writer; wait for it",
			              c->dir, id_len);
	if (rv == WT_OK) {
		w->next_w = c->writers;
		c->writers = w;
		c->n_writers++;
	}
	pthread_mutex_unlock(&c->lk);
	if (rv != WT_OK) {
		free(w->id);
		free(w);
		return rv;
	}
	*out = w;
	return WT_OK;
}

/* Unlink w from c->writers; caller holds c->lk. */
static void writer_unlink(cache *c, cache_writer *w)
{
	for (cache_writer **pp = &c->writers; *pp != NULL; pp = &(*pp)->next_w) {
		if (*pp == w) {
			*pp = w->next_w;
			c->n_writers--;
			return;
		}
	}
}

static void writer_free(cache_writer *w)
{
	cache_chunk_map_free(&w->own);
	free(w->list);
	free(w->id);
	free(w);
}

/* Account one listing of chunk h in w and the store; caller holds c->lk.
 * Sets *must_write when the bytes are not known to be stored. */
static int ref_chunk_locked(cache_writer *w, wt_hash128 h, uint64_t nbytes, bool *must_write)
{
	cache *c = w->c;
	if (w->n_list == w->cap_list) {
		size_t cap = w->cap_list ? w->cap_list * 2 : 64;
		cache_chunk_ref *l = realloc(w->list, cap * sizeof(*l));
		if (l == NULL)
			return WT_ENOMEM;
		w->list = l;
		w->cap_list = cap;
	}
	cache_chunk_ent *own = cache_chunk_find(&w->own, h);
	if (own == NULL) {
		own = calloc(1, sizeof(*own));
		if (own == NULL)
			return WT_ENOMEM;
		own->hash = h;
		own->nbytes = nbytes;
		if (cache_chunk_insert(&w->own, own) != WT_OK) {
			free(own);
			return WT_ENOMEM;
		}
		w->own_bytes += nbytes;
	}
	cache_chunk_ent *e = cache_chunk_find(&c->chunks, h);
	if (e == NULL) {
		e = calloc(1, sizeof(*e));
		if (e != NULL) {
			e->hash = h;
			e->nbytes = nbytes;
		}
		if (e == NULL || cache_chunk_insert(&c->chunks, e) != WT_OK) {
			free(e);
			if (own->refs == 0) {
				w->own_bytes -= nbytes;
				free(cache_chunk_remove(&w->own, h));
			}
			return WT_ENOMEM;
		}
		c->bytes += nbytes;
	} else if (e->written && !e->bad) {
		c->dedup_hits++;
	}
	if (e->refs == 0 && e->nbytes != nbytes) { /* an orphan's damaged index size */
		c->bytes = c->bytes - e->nbytes + nbytes;
		e->nbytes = nbytes;
	}
	*must_write = !e->written || e->bad;
	e->refs++;
	own->refs++;
	w->list[w->n_list++] = (cache_chunk_ref){h, nbytes};
	w->list_bytes += nbytes;
	return WT_OK;
}

static int write_chunk(cache *c, wt_hash128 h, const void *data, size_t nbytes, wt_errbuf *err)
{
	uint8_t k[17];
	uint8_t v[8];
	k[0] = 'k';
	common_hash128_to_bytes(h, k + 1);
	cache_put_u64le(v, nbytes);
	char *e = NULL;
	/* Index entry first (WAL): a chunk value on disk is always findable by gc. */
	rocksdb_put_cf(c->db, c->wo, c->cf[CACHE_CF_META], (const char *)k, 17, (const char *)v, 8,
	               &e);
	if (e == NULL)
		rocksdb_put_cf(c->db, c->wo_chunk, c->cf[CACHE_CF_CHUNKS], (const char *)k + 1, 16,
		               data, nbytes, &e);
	if (e != NULL)
		return cache_rocks_err(c, e, "write chunk", err);
	return WT_OK;
}

static int put_chunk(cache_writer *w, const void *data, size_t nbytes, const wt_hash128 *known,
                     wt_hash128 *hash_out, wt_errbuf *err)
{
	cache *c = w->c;
	if (w->failed != WT_OK)
		return wt_seterr(err, w->failed,
		                 "cache '%s': shard writer already failed (%s); abort it", c->dir,
		                 wt_errname(w->failed));
	if (data == NULL || nbytes == 0)
		return wt_seterr(err, WT_EINVAL, "cache '%s': empty chunk; chunks are 1..%u bytes",
		                 c->dir, c->opts.chunk_bytes);
	if (nbytes > c->opts.chunk_bytes)
		return wt_seterr(err, WT_ETOOBIG,
		                 "cache '%s': chunk of %zu bytes > chunk_bytes %u; cut tensors "
		                 "into chunks of at most chunk_bytes",
		                 c->dir, nbytes, c->opts.chunk_bytes);
	wt_hash128 h = known != NULL ? *known : common_hash128(data, nbytes);
	bool must_write = false;
	int rv;
	pthread_mutex_lock(&c->lk);
	rv = ref_chunk_locked(w, h, nbytes, &must_write);
	if (rv == WT_OK && w->own_bytes > c->opts.max_bytes)
		rv = WT_ENOSPC;
	pthread_mutex_unlock(&c->lk);
	if (rv == WT_ENOMEM)
		return wt_seterr(err, WT_ENOMEM, "cache '%s': out of memory", c->dir);
	if (rv == WT_ENOSPC) {
		w->failed = WT_ENOSPC;
		return wt_seterr(err, WT_ENOSPC,
		                 "cache '%s': shard needs more than max_bytes %llu of distinct "
		                 "chunks (%llu so far); raise cache max_bytes above the shard size",
		                 c->dir, (unsigned long long)c->opts.max_bytes,
		                 (unsigned long long)w->own_bytes);
	}
	if (must_write) {
		rv = write_chunk(c, h, data, nbytes, err);
		if (rv != WT_OK) {
			w->failed = rv;
			return rv;
		}
		pthread_mutex_lock(&c->lk);
		cache_chunk_ent *e = cache_chunk_find(&c->chunks, h);
		e->written = true;
		e->bad = false;
		e->ram_ok = false; /* a new flush, a new RAM copy: hashed at its first hit */
		e->writes++;
		pthread_mutex_unlock(&c->lk);
	}
	pthread_mutex_lock(&c->lk);
	if (c->bytes > c->opts.max_bytes)
		cache_enforce_budget_locked(c);
	pthread_mutex_unlock(&c->lk);
	if (hash_out != NULL)
		*hash_out = h;
	return WT_OK;
}

int cache_put_chunk(cache_writer *w, const void *data, size_t nbytes, wt_hash128 *hash_out,
                    wt_errbuf *err)
{
	return put_chunk(w, data, nbytes, NULL, hash_out, err);
}

int cache_put_chunk_hashed(cache_writer *w, const void *data, size_t nbytes, wt_hash128 hash,
                           wt_errbuf *err)
{
	return put_chunk(w, data, nbytes, &hash, NULL, err);
}

void cache_abort_shard(cache_writer *w)
{
	if (w == NULL)
		return;
	cache *c = w->c;
	pthread_mutex_lock(&c->lk);
	writer_unlink(c, w);
	cache_unref_locked(c, w->list, w->n_list);
	pthread_mutex_unlock(&c->lk);
	writer_free(w);
}

static int commit_record(cache_writer *w, const void *manifest, size_t manifest_len, uint64_t clock,
                         wt_errbuf *err)
{
	cache *c = w->c;
	char *e = NULL;
	if (!c->opts.chunk_wal) {
		/* Chunks went around the WAL: make them durable before the manifest. */
		rocksdb_flush_cf(c->db, c->fo, c->cf[CACHE_CF_CHUNKS], &e);
		if (e != NULL)
			return cache_rocks_err(c, e, "flush chunks before the manifest", err);
	}
	size_t rlen, klen, ulen;
	uint8_t *rec =
	    cache_record_build(w->list, w->n_list, w->list_bytes, manifest, manifest_len, &rlen);
	uint8_t *k = cache_key_manifest(w->id, w->id_len, &klen);
	uint8_t *u = cache_key_meta('u', w->id, w->id_len, &ulen);
	rocksdb_writebatch_t *wb = rocksdb_writebatch_create();
	int rv = WT_OK;
	if (rec == NULL || k == NULL || u == NULL || wb == NULL) {
		rv = wt_seterr(err, WT_ENOMEM, "cache '%s': out of memory building a record",
		               c->dir);
	} else {
		uint8_t v[8];
		cache_put_u64le(v, clock);
		rocksdb_writebatch_put_cf(wb, c->cf[CACHE_CF_MANIFESTS], (const char *)k, klen,
		                          (const char *)rec, rlen);
		rocksdb_writebatch_put_cf(wb, c->cf[CACHE_CF_META], (const char *)u, ulen,
		                          (const char *)v, 8);
		rocksdb_write(c->db, c->wo_sync, wb, &e);
		if (e != NULL)
			rv = cache_rocks_err(c, e, "commit manifest", err);
	}
	if (wb != NULL)
		rocksdb_writebatch_destroy(wb);
	free(rec);
	free(k);
	free(u);
	return rv;
}

int cache_commit_shard(cache_writer *w, const void *manifest, size_t manifest_len, wt_errbuf *err)
{
	cache *c = w->c;
	int rv = w->failed;
	if (rv != WT_OK)
		wt_seterr(err, rv, "cache '%s': shard writer failed earlier (%s); shard aborted",
		          c->dir, wt_errname(rv));
	else if (manifest == NULL || manifest_len == 0 || manifest_len > c->opts.manifest_max)
		rv = wt_seterr(err, manifest_len ? WT_ETOOBIG : WT_EINVAL,
		               "cache '%s': manifest of %zu bytes; manifests are 1..%u bytes "
		               "(cache manifest_max)",
		               c->dir, manifest_len, c->opts.manifest_max);
	else if (w->own_bytes > c->opts.max_bytes)
		rv = wt_seterr(err, WT_ENOSPC,
		               "cache '%s': shard of %llu distinct bytes > max_bytes %llu; raise "
		               "cache max_bytes",
		               c->dir, (unsigned long long)w->own_bytes,
		               (unsigned long long)c->opts.max_bytes);
	cache_shard_ent *se = NULL;
	if (rv == WT_OK) {
		se = calloc(1, sizeof(*se));
		if (se == NULL)
			rv = wt_seterr(err, WT_ENOMEM, "cache '%s': out of memory", c->dir);
	}
	uint64_t clock = 0;
	if (rv == WT_OK) {
		pthread_mutex_lock(&c->lk);
		clock = c->clock++;
		pthread_mutex_unlock(&c->lk);
		rv = commit_record(w, manifest, manifest_len, clock, err);
	}
	if (rv != WT_OK) {
		free(se);
		cache_abort_shard(w);
		return rv;
	}
	/* Hand the writer's id, list and references over to the shard entry. Only
	 * once w is off c->writers: until then cache_begin_shard compares w->id and
	 * cache_gc marks w->list, both under c->lk, from other threads. */
	pthread_mutex_lock(&c->lk);
	writer_unlink(c, w);
	se->id = w->id;
	se->id_len = w->id_len;
	se->chunks = w->list;
	se->n_chunks = w->n_list;
	se->nbytes = w->list_bytes;
	se->last_use = clock;
	w->id = NULL;
	w->list = NULL;
	if (cache_shard_insert(&c->shards, se) != WT_OK) {
		/* The record is durable; the index could not grow. Drop the shard again. */
		se->id_hash = cache_id_hash(se->id, se->id_len);
		cache_evict_locked(c, se, "out of memory indexing it");
		rv =
		    wt_seterr(err, WT_ENOMEM, "cache '%s': out of memory indexing a shard", c->dir);
	} else {
		se->pins++; /* never evict the shard just written to make room for itself */
		cache_enforce_budget_locked(c);
		se->pins--;
	}
	pthread_mutex_unlock(&c->lk);
	writer_free(w);
	return rv;
}
