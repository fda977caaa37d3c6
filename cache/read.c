/* read.c — pinned shard handles, verified chunk reads (copy and zero-copy). */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "cache/cache_int.h"

/* ---- where a chunk value came from: RocksDB's per-thread perf counters ---- */

/* One handle per thread on RocksDB's thread-local PerfContext (the C API's
 * rocksdb_perfcontext_create wraps the calling thread's), freed at thread
 * exit; counting only (kEnableCount: no timers). */
static pthread_key_t g_pc_key;
static pthread_once_t g_pc_once = PTHREAD_ONCE_INIT;
static bool g_pc_ok;

static void pc_free(void *p)
{
	rocksdb_perfcontext_destroy(p);
}

static void pc_key_init(void)
{
	g_pc_ok = pthread_key_create(&g_pc_key, pc_free) == 0;
}

/* This thread's perf context with counting on, or NULL (then nothing is
 * trusted: every value is hashed). */
static rocksdb_perfcontext_t *thread_pc(void)
{
	pthread_once(&g_pc_once, pc_key_init);
	if (!g_pc_ok)
		return NULL;
	rocksdb_perfcontext_t *pc = pthread_getspecific(g_pc_key);
	if (pc == NULL) {
		rocksdb_set_perf_level(2 /* kEnableCount */);
		if ((pc = rocksdb_perfcontext_create()) != NULL &&
		    pthread_setspecific(g_pc_key, pc) != 0) {
			rocksdb_perfcontext_destroy(pc);
			pc = NULL;
		}
	}
	return pc;
}

typedef struct blob_counts {
	uint64_t hits, reads;
} blob_counts;

static blob_counts blob_counts_now(rocksdb_perfcontext_t *pc)
{
	return (blob_counts){rocksdb_perfcontext_metric(pc, rocksdb_blob_cache_hit_count),
	                     rocksdb_perfcontext_metric(pc, rocksdb_blob_read_count)};
}

bool cache_trusts_ram(const cache *c)
{
	return c->blob_cache != NULL && !c->opts.chunk_wal && !c->opts.rehash_memory_hits;
}

/* One chunk read's view of where its value came from. */
typedef struct ram_probe {
	rocksdb_perfcontext_t *pc; /* NULL: nothing is trusted */
	blob_counts b0;            /* before the get */
	uint32_t w0;               /* the chunk's writes before the get */
	bool from_ram;             /* one blob cache hit, no blob file read */
	bool trusted;              /* from_ram, and that RAM copy was hashed before */
} ram_probe;

static void ram_probe_begin(cache *c, wt_hash128 h, bool trust_ram, ram_probe *p)
{
	*p = (ram_probe){.pc = trust_ram && cache_trusts_ram(c) ? thread_pc() : NULL};
	if (p->pc == NULL)
		return;
	pthread_mutex_lock(&c->lk);
	cache_chunk_ent *ce = cache_chunk_find(&c->chunks, h);
	if (ce == NULL)
		p->pc = NULL; /* not indexed: nothing to trust */
	else
		p->w0 = ce->writes;
	pthread_mutex_unlock(&c->lk);
	if (p->pc != NULL)
		p->b0 = blob_counts_now(p->pc);
}

/* After the get: a blob cache hit with no file read is the RAM copy made at
 * the chunk's flush, of what this process put; trusted once that copy was
 * hashed on an earlier hit and no write of the chunk came since. */
static void ram_probe_end(cache *c, wt_hash128 h, ram_probe *p)
{
	if (p->pc == NULL)
		return;
	blob_counts b1 = blob_counts_now(p->pc);
	p->from_ram = b1.hits == p->b0.hits + 1 && b1.reads == p->b0.reads;
	if (!p->from_ram)
		return;
	pthread_mutex_lock(&c->lk);
	cache_chunk_ent *ce = cache_chunk_find(&c->chunks, h);
	p->trusted = ce != NULL && ce->ram_ok && !ce->bad && ce->writes == p->w0;
	pthread_mutex_unlock(&c->lk);
}

/* The bytes of a RAM copy matched their hash (c->lk held): its later hits
 * are trusted. */
static void ram_probe_verified_locked(cache *c, wt_hash128 h, const ram_probe *p)
{
	if (!p->from_ram)
		return;
	cache_chunk_ent *ce = cache_chunk_find(&c->chunks, h);
	if (ce != NULL && !ce->bad && ce->writes == p->w0)
		ce->ram_ok = true;
}

/* Read and validate the record of shard e. On success *manifest is malloc'd
 * (caller frees). WT_ECORRUPT if missing or damaged. */
static int read_record(cache *c, const cache_shard_ent *e, uint8_t **manifest, size_t *mlen,
                       wt_errbuf *err)
{
	size_t klen, vlen = 0;
	uint8_t *k = cache_key_manifest(e->id, e->id_len, &klen);
	if (k == NULL)
		return wt_seterr(err, WT_ENOMEM, "cache '%s': out of memory", c->dir);
	char *re = NULL;
	char *v = rocksdb_get_cf(c->db, c->ro_meta, c->cf[CACHE_CF_MANIFESTS], (const char *)k,
	                         klen, &vlen, &re);
	free(k);
	if (re != NULL)
		return cache_rocks_err(c, re, "read manifest", err);
	size_t n = 0, ml = 0;
	uint64_t nbytes = 0;
	const uint8_t *m = NULL;
	int rv = v == NULL ? WT_ECORRUPT
	                   : cache_record_parse((const uint8_t *)v, vlen, &n, &nbytes, &m, &ml);
	if (rv == WT_OK && (n != e->n_chunks || nbytes != e->nbytes))
		rv = WT_ECORRUPT;
	for (size_t i = 0; rv == WT_OK && i < n; i++)
		if (!common_hash128_eq(cache_record_chunk((const uint8_t *)v, i).hash,
		                       e->chunks[i].hash))
			rv = WT_ECORRUPT;
	if (rv != WT_OK) {
		rocksdb_free(v);
		return wt_seterr(err, WT_ECORRUPT,
		                 "cache '%s': shard record (%zu-byte id) is %s; the shard was "
		                 "evicted, produce it again",
		                 c->dir, e->id_len, v == NULL ? "missing" : "damaged");
	}
	*manifest = malloc(ml);
	if (*manifest == NULL) {
		rocksdb_free(v);
		return wt_seterr(err, WT_ENOMEM, "cache '%s': out of memory", c->dir);
	}
	memcpy(*manifest, m, ml);
	*mlen = ml;
	rocksdb_free(v);
	return WT_OK;
}

/* Drop one pin of e (a quiet one: an admin scan's); caller holds c->lk. */
static void unpin_locked(cache *c, cache_shard_ent *e, bool quiet)
{
	WT_ASSERT(e->pins > 0 && e->pins >= e->scans);
	if (quiet) {
		WT_ASSERT(e->scans > 0);
		e->scans--;
	}
	if (--e->pins > 0)
		return;
	c->n_pinned--;
	if (e->doomed) {
		for (cache_shard_ent **pp = &c->doomed; *pp != NULL; pp = &(*pp)->next) {
			if (*pp == e) {
				*pp = e->next;
				break;
			}
		}
		cache_unref_locked(c, e->chunks, e->n_chunks);
		cache_shard_ent_free(e);
		cache_reclaim_maybe_locked(c);
	} else if (c->bytes > c->opts.max_bytes) {
		cache_enforce_budget_locked(c);
	}
}

int cache_shard_open(cache *c, const void *id, size_t id_len, cache_shard **out, wt_errbuf *err)
{
	return cache_shard_open_int(c, id, id_len, true, out, err);
}

int cache_shard_open_quiet(cache *c, const void *id, size_t id_len, cache_shard **out,
                           wt_errbuf *err)
{
	return cache_shard_open_int(c, id, id_len, false, out, err);
}

int cache_shard_open_int(cache *c, const void *id, size_t id_len, bool touch, cache_shard **out,
                         wt_errbuf *err)
{
	cache_shard *s = calloc(1, sizeof(*s));
	if (s == NULL)
		return wt_seterr(err, WT_ENOMEM, "cache '%s': out of memory", c->dir);
	pthread_mutex_lock(&c->lk);
	cache_shard_ent *e = cache_shard_find(&c->shards, id, id_len);
	if (e == NULL) {
		c->misses += touch;
		pthread_mutex_unlock(&c->lk);
		free(s);
		return wt_seterr(err, WT_ENOTFOUND, "cache '%s': shard (%zu-byte id) not cached",
		                 c->dir, id_len);
	}
	c->hits += touch;
	if (e->pins++ == 0)
		c->n_pinned++;
	e->scans += !touch;
	if (touch)
		e->last_use = c->clock++;
	uint64_t use = e->last_use;
	pthread_mutex_unlock(&c->lk);

	int rv = read_record(c, e, &s->manifest, &s->manifest_len, err);
	if (rv == WT_OK && touch) {
		size_t ulen;
		uint8_t *u = cache_key_meta('u', id, id_len, &ulen);
		uint8_t v[8];
		cache_put_u64le(v, use);
		char *re = NULL;
		if (u != NULL)
			rocksdb_put_cf(c->db, c->wo, c->cf[CACHE_CF_META], (const char *)u, ulen,
			               (const char *)v, 8, &re);
		if (re != NULL) {
			wt_errbuf le;
			cache_rocks_err(c, re, "record last use", &le);
			WT_LOG(WT_LOG_WARNING, "%s (LRU order may be stale after restart)", le.msg);
		}
		free(u);
	}
	pthread_mutex_lock(&c->lk);
	if (rv == WT_ECORRUPT) {
		c->corruptions++;
		if (!e->doomed)
			cache_evict_locked(c, e, "its record is damaged");
	}
	if (rv != WT_OK)
		unpin_locked(c, e, !touch);
	pthread_mutex_unlock(&c->lk);
	if (rv != WT_OK) {
		if (rv == WT_ECORRUPT)
			WT_LOG(WT_LOG_ERR, "%s", err != NULL ? err->msg : "cache: damaged record");
		free(s);
		return rv;
	}
	s->c = c;
	s->ent = e;
	s->quiet = !touch;
	if (!touch && c->race_hook != NULL)
		c->race_hook(c->race_ctx, CACHE_RACE_SCAN_OPEN, common_hash128(id, id_len));
	*out = s;
	return WT_OK;
}

void cache_shard_close(cache_shard *s)
{
	if (s == NULL)
		return;
	pthread_mutex_lock(&s->c->lk);
	unpin_locked(s->c, s->ent, s->quiet);
	pthread_mutex_unlock(&s->c->lk);
	free(s->manifest);
	free(s);
}

const void *cache_shard_manifest(const cache_shard *s, size_t *len)
{
	*len = s->manifest_len;
	return s->manifest;
}

size_t cache_shard_n_chunks(const cache_shard *s)
{
	return s->ent->n_chunks;
}

wt_hash128 cache_shard_chunk(const cache_shard *s, size_t i, uint64_t *nbytes)
{
	WT_ASSERT(i < s->ent->n_chunks);
	if (nbytes != NULL)
		*nbytes = s->ent->chunks[i].nbytes;
	return s->ent->chunks[i].hash;
}

uint64_t cache_shard_nbytes(const cache_shard *s)
{
	return s->ent->nbytes;
}

/* Chunk h (key k, hex its id) was not found by the first read: damage when
 * the index says it is stored and listed (WT_ECORRUPT, handled), else
 * WT_ENOTFOUND; WT_OK with *ps when a read under the lock found it after all.
 * Only a miss seen under c->lk is damage: since the first read its last
 * shard may have been evicted (value deleted) and a writer may have put the
 * same bytes again (written, listed), which is no damage. Under the lock no
 * chunk is dropped, and `written` is set only once the value is in. */
static int read_miss(cache *c, wt_hash128 h, const uint8_t *k, const char *hex,
                     rocksdb_pinnableslice_t **ps, wt_errbuf *err)
{
	char *re = NULL;
	if (c->race_hook != NULL)
		c->race_hook(c->race_ctx, CACHE_RACE_GET_MISS, h);
	pthread_mutex_lock(&c->lk);
	cache_chunk_ent *ce = cache_chunk_find(&c->chunks, h);
	bool lost = ce != NULL && ce->written && ce->refs > 0 && !ce->bad;
	if (lost) {
		*ps = rocksdb_get_pinned_cf(c->db, c->ro, c->cf[CACHE_CF_CHUNKS], (const char *)k,
		                            16, &re);
		if (re != NULL) {
			int rv = cache_rocks_err(c, re, "read chunk", err);
			if (rv == WT_ECORRUPT)
				cache_chunk_corrupt_locked(c, h, "failed RocksDB's checksum");
			pthread_mutex_unlock(&c->lk);
			return rv;
		}
		lost = *ps == NULL;
	}
	if (lost)
		cache_chunk_corrupt_locked(c, h, "is missing from the store");
	pthread_mutex_unlock(&c->lk);
	if (lost)
		return wt_seterr(err, WT_ECORRUPT,
		                 "cache '%s': chunk %s is indexed but its bytes are missing; "
		                 "the shards that list it were evicted (they are rebuilt)",
		                 c->dir, hex);
	if (*ps == NULL)
		return wt_seterr(err, WT_ENOTFOUND, "cache '%s': chunk %s not cached", c->dir, hex);
	return WT_OK;
}

int cache_get_verified(cache *c, wt_hash128 h, void *buf, size_t cap, size_t *len_out,
                       rocksdb_pinnableslice_t **out, bool trust_ram, wt_errbuf *err)
{
	uint8_t k[16];
	char hex[WT_HASH_HEX_LEN + 1];
	common_hash128_to_bytes(h, k);
	char *re = NULL;
	ram_probe rp;
	ram_probe_begin(c, h, trust_ram, &rp);
	rocksdb_pinnableslice_t *ps =
	    rocksdb_get_pinned_cf(c->db, c->ro, c->cf[CACHE_CF_CHUNKS], (const char *)k, 16, &re);
	ram_probe_end(c, h, &rp);
	bool trusted = rp.trusted;
	if (re != NULL) {
		int rv = cache_rocks_err(c, re, "read chunk", err);
		if (rv == WT_ECORRUPT) {
			pthread_mutex_lock(&c->lk);
			cache_chunk_corrupt_locked(c, h, "failed RocksDB's checksum");
			pthread_mutex_unlock(&c->lk);
		}
		return rv;
	}
	common_hash128_hex(h, hex);
	int rv = ps == NULL ? read_miss(c, h, k, hex, &ps, err) : WT_OK;
	if (rv != WT_OK)
		return rv;
	size_t len = 0;
	const char *v = rocksdb_pinnableslice_value(ps, &len);
	if (len_out != NULL)
		*len_out = len;
	if (buf != NULL && len > cap) {
		rocksdb_pinnableslice_destroy(ps);
		return wt_seterr(
		    err, WT_ETOOBIG,
		    "cache '%s': chunk %s of %zu bytes does not fit a %zu-byte buffer; "
		    "pass a buffer of chunk_bytes",
		    c->dir, hex, len, cap);
	}
	/* Copy and hash in one pass over the bytes when the caller wants a copy;
	 * a trusted RAM copy is copied only. */
	wt_hash128 got = h;
	if (trusted && buf != NULL)
		memcpy(buf, v, len);
	else if (!trusted)
		got = buf != NULL ? common_hash128_copy(buf, v, len) : common_hash128(v, len);
	if (buf != NULL)
		rocksdb_pinnableslice_destroy(ps);
	if (!common_hash128_eq(got, h)) {
		if (buf == NULL)
			rocksdb_pinnableslice_destroy(ps);
		pthread_mutex_lock(&c->lk);
		cache_chunk_corrupt_locked(c, h, "does not match its XXH3-128");
		pthread_mutex_unlock(&c->lk);
		return wt_seterr(err, WT_ECORRUPT,
		                 "cache '%s': chunk %s (%zu bytes) does not match its XXH3-128; "
		                 "the shards listing it were evicted, produce them again",
		                 c->dir, hex, len);
	}
	pthread_mutex_lock(&c->lk);
	c->chunk_reads++;
	c->bytes_read += len;
	if (trusted) {
		c->ram_reads++;
		c->ram_bytes += len;
	} else {
		ram_probe_verified_locked(c, h, &rp);
	}
	pthread_mutex_unlock(&c->lk);
	if (out != NULL)
		*out = buf != NULL ? NULL : ps;
	else if (buf == NULL)
		rocksdb_pinnableslice_destroy(ps);
	return WT_OK;
}

int cache_read_chunk(cache *c, wt_hash128 hash, void *buf, size_t cap, size_t *len_out,
                     wt_errbuf *err)
{
	if (buf == NULL)
		return wt_seterr(err, WT_EINVAL, "cache '%s': NULL read buffer", c->dir);
	return cache_get_verified(c, hash, buf, cap, len_out, NULL, true, err);
}

int cache_chunk_view(cache *c, wt_hash128 hash, cache_view **out, wt_errbuf *err)
{
	cache_view *v = calloc(1, sizeof(*v));
	if (v == NULL)
		return wt_seterr(err, WT_ENOMEM, "cache '%s': out of memory", c->dir);
	int rv = cache_get_verified(c, hash, NULL, 0, NULL, &v->ps, true, err);
	if (rv != WT_OK) {
		free(v);
		return rv;
	}
	v->data = rocksdb_pinnableslice_value(v->ps, &v->len);
	*out = v;
	return WT_OK;
}

const void *cache_view_data(const cache_view *v, size_t *len)
{
	*len = v->len;
	return v->data;
}

void cache_view_release(cache_view *v)
{
	if (v == NULL)
		return;
	rocksdb_pinnableslice_destroy(v->ps);
	free(v);
}
