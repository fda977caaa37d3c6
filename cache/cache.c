/* cache.c — open (load the index from RocksDB), close, garbage collection, stats, listing. */
#include <malloc.h>
#include <stdlib.h>
#include <string.h>

#include "cache/cache_int.h"

void cache_opts_init(cache_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->max_bytes = CACHE_MAX_BYTES_DEF;
	o->chunk_bytes = CACHE_CHUNK_BYTES_DEF;
	o->manifest_max = CACHE_MANIFEST_MAX_DEF;
	o->gc_at_open = true;
	o->store = CACHE_STORE_BLOB;
	o->chunk_wal = false;
	o->rocks_verify = false;
	o->mmap_reads = true;
	o->mem_bytes = CACHE_MEM_BYTES_DEF;
	o->blob_file_bytes = CACHE_BLOB_FILE_DEF;
	o->reclaim_ratio = CACHE_RECLAIM_RATIO_DEF;
	o->background_low_cpu = true;
}

static int check_opts(const cache_opts *o, const char *dir, wt_errbuf *err)
{
	if (o->chunk_bytes < CACHE_CHUNK_BYTES_MIN || o->chunk_bytes > CACHE_CHUNK_BYTES_MAX)
		return wt_seterr(err, WT_ECONFIG,
		                 "cache '%s': chunk_bytes %u outside [%u, %u]; use the default %u",
		                 dir, o->chunk_bytes, CACHE_CHUNK_BYTES_MIN, CACHE_CHUNK_BYTES_MAX,
		                 CACHE_CHUNK_BYTES_DEF);
	if (o->max_bytes < o->chunk_bytes)
		return wt_seterr(err, WT_ECONFIG,
		                 "cache '%s': max_bytes %llu is below one chunk (%u bytes); raise "
		                 "max_bytes to at least the largest shard",
		                 dir, (unsigned long long)o->max_bytes, o->chunk_bytes);
	if (o->manifest_max == 0)
		return wt_seterr(err, WT_ECONFIG, "cache '%s': manifest_max is 0; use %u", dir,
		                 CACHE_MANIFEST_MAX_DEF);
	if (o->store != CACHE_STORE_BLOB && o->store != CACHE_STORE_SST)
		return wt_seterr(err, WT_ECONFIG, "cache '%s': unknown store kind %d", dir,
		                 (int)o->store);
	if (o->blob_file_bytes < CACHE_BLOB_FILE_MIN)
		return wt_seterr(err, WT_ECONFIG,
		                 "cache '%s': blob_file_bytes %llu is below %u; use the default %u",
		                 dir, (unsigned long long)o->blob_file_bytes, CACHE_BLOB_FILE_MIN,
		                 CACHE_BLOB_FILE_DEF);
	if (!(o->reclaim_ratio == 0 || (o->reclaim_ratio > 1.0 && o->reclaim_ratio <= 1000.0)))
		return wt_seterr(err, WT_ECONFIG,
		                 "cache '%s': reclaim_ratio %g must be 0 (off) or in (1, 1000]; "
		                 "use %g",
		                 dir, o->reclaim_ratio, CACHE_RECLAIM_RATIO_DEF);
	return WT_OK;
}

static int load_version(cache *c, wt_errbuf *err)
{
	char *e = NULL;
	size_t vlen = 0;
	char *v = rocksdb_get_cf(c->db, c->ro_meta, c->cf[CACHE_CF_META], "version", 7, &vlen, &e);
	if (e != NULL)
		return cache_rocks_err(c, e, "read format version", err);
	if (v == NULL) {
		uint8_t b[8];
		cache_put_u64le(b, CACHE_FORMAT);
		rocksdb_put_cf(c->db, c->wo_sync, c->cf[CACHE_CF_META], "version", 7, (char *)b, 4,
		               &e);
		return e != NULL ? cache_rocks_err(c, e, "write format version", err) : WT_OK;
	}
	uint64_t ver = vlen == 4 ? (uint64_t)(uint8_t)v[0] | (uint64_t)(uint8_t)v[1] << 8 : 0;
	rocksdb_free(v);
	if (vlen != 4 || ver != CACHE_FORMAT)
		return wt_seterr(err, WT_EVERSION,
		                 "cache '%s': store format %llu, this build reads %d; delete the "
		                 "cache dir (it is rebuilt from the source)",
		                 c->dir, (unsigned long long)ver, CACHE_FORMAT);
	return WT_OK;
}

static int load_chunk_index(cache *c, wt_errbuf *err)
{
	rocksdb_iterator_t *it =
	    rocksdb_create_iterator_cf(c->db, c->ro_meta, c->cf[CACHE_CF_META]);
	int rv = WT_OK;
	for (rocksdb_iter_seek(it, "k", 1); rocksdb_iter_valid(it); rocksdb_iter_next(it)) {
		size_t klen, vlen;
		const char *k = rocksdb_iter_key(it, &klen);
		const char *v = rocksdb_iter_value(it, &vlen);
		if (klen == 0 || k[0] != 'k')
			break;
		if (klen != 17 || vlen != 8)
			continue; /* not ours; swept by nobody, harmless */
		cache_chunk_ent *ce = calloc(1, sizeof(*ce));
		if (ce == NULL) {
			rv = wt_seterr(err, WT_ENOMEM, "cache '%s': out of memory", c->dir);
			break;
		}
		ce->hash = common_hash128_from_bytes((const uint8_t *)k + 1);
		/* not checksummed by the cache: a size outside 1..CACHE_CHUNK_BYTES_MAX
		 * is damage (0 here; a record that lists the chunk sets it, load_one) */
		uint64_t nb = cache_get_u64le((const uint8_t *)v);
		ce->nbytes = nb >= 1 && nb <= CACHE_CHUNK_BYTES_MAX ? nb : 0;
		ce->written = true;
		if (cache_chunk_insert(&c->chunks, ce) != WT_OK) {
			free(ce);
			rv = wt_seterr(err, WT_ENOMEM, "cache '%s': out of memory", c->dir);
			break;
		}
	}
	char *e = NULL;
	rocksdb_iter_get_error(it, &e);
	rocksdb_iter_destroy(it);
	if (e != NULL)
		return cache_rocks_err(c, e, "scan chunk index", err);
	return rv;
}

/* The chunk sizes of a record (checksummed) against the index's (not): a
 * chunk no other record listed yet takes the record's size, and its index
 * entry is rewritten in wb; WT_ECORRUPT for a record that disagrees with an
 * earlier one, or lists a chunk the index does not have. */
static int check_sizes(cache *c, rocksdb_writebatch_t *wb, const uint8_t *rec, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		cache_chunk_ref r = cache_record_chunk(rec, i);
		cache_chunk_ent *ce = cache_chunk_find(&c->chunks, r.hash);
		if (ce == NULL || r.nbytes < 1 || r.nbytes > CACHE_CHUNK_BYTES_MAX ||
		    (ce->refs > 0 && ce->nbytes != r.nbytes))
			return WT_ECORRUPT;
		if (ce->nbytes == r.nbytes)
			continue;
		char hex[WT_HASH_HEX_LEN + 1];
		common_hash128_hex(r.hash, hex);
		WT_LOG(WT_LOG_WARNING,
		       "cache '%s': chunk %s: index size %llu damaged; %llu as its shard's "
		       "record says",
		       c->dir, hex, (unsigned long long)ce->nbytes, (unsigned long long)r.nbytes);
		c->corruptions++;
		ce->nbytes = r.nbytes;
		uint8_t k[17], v[8];
		k[0] = 'k';
		common_hash128_to_bytes(r.hash, k + 1);
		cache_put_u64le(v, r.nbytes);
		rocksdb_writebatch_put_cf(wb, c->cf[CACHE_CF_META], (const char *)k, 17,
		                          (const char *)v, 8);
	}
	return WT_OK;
}

/* Builds the in-memory entry of one record; WT_ECORRUPT if it lists a chunk
 * the index does not have (or sizes that cannot be: check_sizes). */
static int load_one(cache *c, rocksdb_writebatch_t *wb, const uint8_t *key, size_t klen,
                    const uint8_t *rec, size_t len)
{
	size_t n, mlen;
	uint64_t nbytes;
	const uint8_t *m;
	if (klen - 1 > CACHE_SHARD_ID_MAX ||
	    cache_record_parse(rec, len, &n, &nbytes, &m, &mlen) != WT_OK ||
	    check_sizes(c, wb, rec, n) != WT_OK)
		return WT_ECORRUPT;
	cache_shard_ent *se = calloc(1, sizeof(*se));
	if (se == NULL)
		return WT_ENOMEM;
	se->id_len = klen - 1;
	se->id = malloc(se->id_len);
	se->chunks = malloc((n ? n : 1) * sizeof(*se->chunks));
	if (se->id == NULL || se->chunks == NULL) {
		cache_shard_ent_free(se);
		return WT_ENOMEM;
	}
	memcpy(se->id, key + 1, se->id_len);
	se->n_chunks = n;
	se->nbytes = nbytes;
	for (size_t i = 0; i < n; i++) {
		se->chunks[i] = cache_record_chunk(rec, i);
		cache_chunk_find(&c->chunks, se->chunks[i].hash)->refs++;
	}
	if (cache_shard_insert(&c->shards, se) != WT_OK) {
		for (size_t i = 0; i < n; i++)
			cache_chunk_find(&c->chunks, se->chunks[i].hash)->refs--;
		cache_shard_ent_free(se);
		return WT_ENOMEM;
	}
	return WT_OK;
}

static int load_manifests(cache *c, rocksdb_writebatch_t *wb, wt_errbuf *err)
{
	rocksdb_iterator_t *it =
	    rocksdb_create_iterator_cf(c->db, c->ro_meta, c->cf[CACHE_CF_MANIFESTS]);
	int rv = WT_OK;
	for (rocksdb_iter_seek_to_first(it); rocksdb_iter_valid(it); rocksdb_iter_next(it)) {
		size_t klen, vlen;
		const uint8_t *k = (const uint8_t *)rocksdb_iter_key(it, &klen);
		const uint8_t *v = (const uint8_t *)rocksdb_iter_value(it, &vlen);
		if (klen < 2 || k[0] != CACHE_FORMAT) {
			rv = wt_seterr(err, WT_EVERSION,
			               "cache '%s': manifest key with format byte %u (this build "
			               "writes %d); delete the cache dir",
			               c->dir, klen ? k[0] : 0, CACHE_FORMAT);
			break;
		}
		int r = load_one(c, wb, k, klen, v, vlen);
		if (r == WT_ENOMEM) {
			rv = wt_seterr(err, WT_ENOMEM, "cache '%s': out of memory", c->dir);
			break;
		}
		if (r != WT_OK) {
			char hex[WT_HASH_HEX_LEN + 1];
			common_hash128_hex(common_hash128(k + 1, klen - 1), hex);
			WT_LOG(WT_LOG_WARNING,
			       "cache '%s': shard (id hash %s) record damaged or incomplete; "
			       "dropped, it will be rebuilt",
			       c->dir, hex);
			c->corruptions++;
			rocksdb_writebatch_delete_cf(wb, c->cf[CACHE_CF_MANIFESTS], (const char *)k,
			                             klen);
		}
	}
	char *e = NULL;
	rocksdb_iter_get_error(it, &e);
	rocksdb_iter_destroy(it);
	if (e != NULL)
		return cache_rocks_err(c, e, "scan manifests", err);
	return rv;
}

static int load_lru(cache *c, rocksdb_writebatch_t *wb, wt_errbuf *err)
{
	rocksdb_iterator_t *it =
	    rocksdb_create_iterator_cf(c->db, c->ro_meta, c->cf[CACHE_CF_META]);
	for (rocksdb_iter_seek(it, "u", 1); rocksdb_iter_valid(it); rocksdb_iter_next(it)) {
		size_t klen, vlen;
		const char *k = rocksdb_iter_key(it, &klen);
		const char *v = rocksdb_iter_value(it, &vlen);
		if (klen == 0 || k[0] != 'u')
			break;
		cache_shard_ent *se = cache_shard_find(&c->shards, k + 1, klen - 1);
		if (se == NULL || vlen != 8) {
			rocksdb_writebatch_delete_cf(wb, c->cf[CACHE_CF_META], k, klen);
			continue;
		}
		se->last_use = cache_get_u64le((const uint8_t *)v);
		if (se->last_use > CACHE_CLOCK_MAX) { /* damaged: would wrap the clock */
			se->last_use = 0;
			rocksdb_writebatch_delete_cf(wb, c->cf[CACHE_CF_META], k, klen);
			continue;
		}
		if (se->last_use >= c->clock)
			c->clock = se->last_use + 1;
	}
	char *e = NULL;
	rocksdb_iter_get_error(it, &e);
	rocksdb_iter_destroy(it);
	return e != NULL ? cache_rocks_err(c, e, "scan LRU clocks", err) : WT_OK;
}

static int load_index(cache *c, wt_errbuf *err)
{
	int rv;
	if ((rv = load_version(c, err)) != WT_OK || (rv = load_chunk_index(c, err)) != WT_OK)
		return rv;
	rocksdb_writebatch_t *wb = rocksdb_writebatch_create();
	if (wb == NULL)
		return wt_seterr(err, WT_ENOMEM, "cache '%s': out of memory", c->dir);
	if ((rv = load_manifests(c, wb, err)) == WT_OK)
		rv = load_lru(c, wb, err);
	/* the byte total from the sizes as checked; a chunk no record lists (its
	 * shard never committed: a crash) may have lost its bytes, which were
	 * written without the WAL: a put of the same bytes writes them again
	 * instead of counting on them (gc_at_open deletes such chunks anyway) */
	c->bytes = 0;
	for (size_t i = 0; rv == WT_OK && i < c->chunks.nb; i++)
		for (cache_chunk_ent *ce = c->chunks.b[i]; ce != NULL; ce = ce->next) {
			c->bytes += ce->nbytes; /* each at most CACHE_CHUNK_BYTES_MAX */
			if (ce->refs == 0)
				ce->written = false;
		}
	if (rv == WT_OK && rocksdb_writebatch_count(wb) > 0) {
		char *e = NULL;
		rocksdb_write(c->db, c->wo_sync, wb, &e);
		if (e != NULL)
			rv = cache_rocks_err(c, e, "drop damaged records", err);
	}
	rocksdb_writebatch_destroy(wb);
	return rv;
}

/* RocksDB 7.8 allocates two chunk-sized buffers per blob read. glibc's dynamic
 * thresholds hand them fresh mmap'd pages or trim them back to the OS after
 * every read (page faults: reads at ~1 GB/s instead of ~4, cache/README.md).
 * Keep chunk-sized blocks on the heap and stop trimming below 512 MiB. */
void cache_tune_malloc(uint32_t chunk_bytes)
{
	static pthread_mutex_t once = PTHREAD_MUTEX_INITIALIZER;
	static bool done;
	pthread_mutex_lock(&once);
	if (!done) {
		uint64_t mmap_min = 2ull * chunk_bytes + (1u << 20);
		if (mmap_min > (32u << 20))
			mmap_min = 32u << 20; /* glibc's ceiling for M_MMAP_THRESHOLD */
		int ok = mallopt(M_MMAP_THRESHOLD, (int)mmap_min) &&
		         mallopt(M_TRIM_THRESHOLD, 512 << 20);
		WT_LOG(WT_LOG_INFO, "cache: malloc mmap threshold %llu, trim threshold 512 MiB%s",
		       (unsigned long long)mmap_min, ok ? "" : " (refused by the allocator)");
		done = true;
	}
	pthread_mutex_unlock(&once);
}

int cache_open(cache **out, const char *dir, const cache_opts *opts, wt_errbuf *err)
{
	cache_opts def;
	if (opts == NULL) {
		cache_opts_init(&def);
		opts = &def;
	}
	if (dir == NULL || dir[0] == '\0')
		return wt_seterr(err, WT_EINVAL, "cache: empty directory; set cache_dir");
	int rv = check_opts(opts, dir, err);
	if (rv != WT_OK)
		return rv;
	cache *c = calloc(1, sizeof(*c));
	if (c == NULL || (c->dir = strdup(dir)) == NULL) {
		free(c);
		return wt_seterr(err, WT_ENOMEM, "cache '%s': out of memory", dir);
	}
	c->opts = *opts;
	c->clock = 1;
	if (pthread_mutex_init(&c->lk, NULL) != 0) {
		rv = wt_seterr(err, WT_ENOMEM, "cache '%s': cannot create mutex", dir);
		goto fail;
	}
	c->lk_init = true;
	if (pthread_mutex_init(&c->rc_run, NULL) != 0) {
		rv = wt_seterr(err, WT_ENOMEM, "cache '%s': cannot create mutex", dir);
		goto fail;
	}
	c->rc_run_init = true;
	if ((rv = cache_db_open(c, err)) != WT_OK || (rv = load_index(c, err)) != WT_OK)
		goto fail;
	pthread_mutex_lock(&c->lk);
	if (c->opts.gc_at_open) {
		uint64_t freed = 0;
		rv = cache_gc_locked(c, &freed, err);
		if (rv == WT_OK && freed > 0)
			WT_LOG(WT_LOG_NOTICE, "cache '%s': swept %llu orphaned chunk bytes", dir,
			       (unsigned long long)freed);
	}
	if (rv == WT_OK)
		cache_enforce_budget_locked(c);
	c->rc_armed = true;
	pthread_mutex_unlock(&c->lk);
	if (rv != WT_OK)
		goto fail;
	*out = c;
	return WT_OK;
fail:
	cache_close(c);
	return rv;
}

void cache_close(cache *c)
{
	if (c == NULL)
		return;
	WT_ASSERT(c->writers == NULL && c->n_pinned == 0 && c->doomed == NULL);
	if (c->lk_init)
		cache_reclaim_stop(c);
	cache_db_close(c);
	cache_shard_map_free(&c->shards);
	cache_chunk_map_free(&c->chunks);
	if (c->lk_init)
		pthread_mutex_destroy(&c->lk);
	if (c->rc_run_init)
		pthread_mutex_destroy(&c->rc_run);
	free(c->dir);
	free(c);
}

bool cache_has_shard(cache *c, const void *id, size_t id_len)
{
	pthread_mutex_lock(&c->lk);
	bool r = cache_shard_find(&c->shards, id, id_len) != NULL;
	pthread_mutex_unlock(&c->lk);
	return r;
}

bool cache_shard_has_chunk(cache *c, const void *id, size_t id_len, wt_hash128 h, uint64_t *nbytes)
{
	bool r = false;
	pthread_mutex_lock(&c->lk);
	const cache_shard_ent *e = cache_shard_find(&c->shards, id, id_len);
	for (size_t i = 0; e != NULL && !r && i < e->n_chunks; i++) {
		r = common_hash128_eq(e->chunks[i].hash, h);
		if (r && nbytes != NULL)
			*nbytes = e->chunks[i].nbytes;
	}
	pthread_mutex_unlock(&c->lk);
	return r;
}

void cache_stats_get(cache *c, cache_stats *out)
{
	pthread_mutex_lock(&c->lk);
	*out = (cache_stats){
	    .bytes = c->bytes,
	    .max_bytes = c->opts.max_bytes,
	    .shards = c->shards.count,
	    .chunks = c->chunks.count,
	    .pinned = c->n_pinned,
	    .writers = c->n_writers,
	    .hits = c->hits,
	    .misses = c->misses,
	    .evictions = c->evictions,
	    .corruptions = c->corruptions,
	    .dedup_hits = c->dedup_hits,
	    .chunk_reads = c->chunk_reads,
	    .bytes_read = c->bytes_read,
	    .ram_reads = c->ram_reads,
	    .ram_bytes = c->ram_bytes,
	    .reclaims = c->reclaims,
	    .reclaimed = c->reclaimed,
	    .reclaiming = c->rc_active,
	};
	if (c->blob_cache != NULL) {
		out->mem_capacity = rocksdb_cache_get_capacity(c->blob_cache);
		out->mem_used = rocksdb_cache_get_usage(c->blob_cache);
	}
	pthread_mutex_unlock(&c->lk);
	out->disk_bytes = cache_disk_bytes(c); /* RocksDB properties: outside our lock */
}

uint64_t cache_list(cache *c, void (*cb)(void *ctx, const cache_shard_info *info), void *ctx)
{
	uint64_t n = 0;
	pthread_mutex_lock(&c->lk);
	for (size_t i = 0; i < c->shards.nb; i++) {
		for (cache_shard_ent *e = c->shards.b[i]; e != NULL; e = e->next, n++) {
			cache_shard_info info = {e->id,       e->id_len,   e->nbytes,
			                         e->n_chunks, e->last_use, e->pins};
			if (cb != NULL)
				cb(ctx, &info);
		}
	}
	pthread_mutex_unlock(&c->lk);
	return n;
}
