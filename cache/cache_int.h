/*
 * cache_int.h — private to cache/: in-memory index, RocksDB handles, record format.
 *
 * On-disk layout (column families; format version CACHE_FORMAT = 1, FROZEN):
 *   manifests  key [CACHE_FORMAT][shard id]  value: shard record (below)
 *   chunks     key 16-byte XXH3-128 (big-endian)  value: the chunk bytes
 *   meta       key "version"                 value u32le CACHE_FORMAT
 *              key 'k' + 16-byte hash        value u64le chunk nbytes (chunk index,
 *                                            written through the WAL before the chunk)
 *              key 'u' + shard id            value u64le LRU clock of last use
 *              key 's' + name                value a note (note.c; weightd's
 *                                            source-object digests)
 *
 * Shard record (little-endian):
 *   off 0   u32  magic CACHE_REC_MAGIC
 *   off 4   u32  n_chunks
 *   off 8   u64  manifest_len
 *   off 16  u64  nbytes (sum of the listed chunk sizes)
 *   off 24  n_chunks x { 16-byte hash, u64 nbytes }
 *           manifest bytes
 *   end-16  XXH3-128 of every byte before it
 */
#ifndef WT_CACHE_INT_H
#define WT_CACHE_INT_H

#include <pthread.h>
#include <rocksdb/c.h>

#include "cache/cache.h"

#define CACHE_FORMAT      1
#define CACHE_REC_MAGIC   0x4d535457u /* "WTSM" */
#define CACHE_REC_HDR     24u
#define CACHE_REC_ENTRY   24u
#define CACHE_REC_TRAILER 16u

typedef struct cache_chunk_ref {
	wt_hash128 hash;
	uint64_t nbytes;
} cache_chunk_ref;

/* One distinct chunk. In c->chunks: refs counts every listing of it by a
 * committed shard, a doomed (evicted but pinned) shard or an open writer. In a
 * writer's own map: refs counts its listings in that writer. */
/* LRU clocks count shard opens from 1; a stored value above this (no cache
 * lives to 2^62 opens) is damage: it would wrap the clock at open. */
#define CACHE_CLOCK_MAX (UINT64_MAX >> 2)

typedef struct cache_chunk_ent {
	wt_hash128 hash;
	uint64_t nbytes;
	uint64_t refs;
	bool written; /* a put of its bytes has returned */
	bool bad;     /* failed its hash: the next put rewrites it */
	/* its bytes in RAM (the blob cache entry of its last write's flush) were
	 * hashed once on a hit: later hits are served without hashing again
	 * (cache_get_verified); cleared by each write of the chunk, which also
	 * counts in writes (a read that began before a write trusts nothing) */
	bool ram_ok;
	uint32_t writes;
	struct cache_chunk_ent *next;
} cache_chunk_ent;

typedef struct cache_chunk_map {
	cache_chunk_ent **b;
	size_t nb; /* power of two, or 0 */
	size_t count;
} cache_chunk_map;

typedef struct cache_shard_ent {
	uint8_t *id;
	size_t id_len;
	uint64_t id_hash;
	cache_chunk_ref *chunks; /* put order */
	size_t n_chunks;
	uint64_t nbytes;
	uint64_t last_use;
	uint32_t pins;
	uint32_t scans; /* of pins: quiet opens (admin scans); they never make it busy */
	bool doomed;    /* evicted while pinned: out of the map, freed at last unpin */
	struct cache_shard_ent *next;
} cache_shard_ent;

typedef struct cache_shard_map {
	cache_shard_ent **b;
	size_t nb;
	size_t count;
} cache_shard_map;

struct cache_writer {
	cache *c;
	uint8_t *id;
	size_t id_len;
	cache_chunk_ref *list; /* put order */
	size_t n_list, cap_list;
	uint64_t list_bytes;
	cache_chunk_map own; /* distinct chunks of this writer */
	uint64_t own_bytes;  /* their bytes */
	int failed;          /* sticky error from cache_put_chunk */
	struct cache_writer *next_w;
};

struct cache_shard {
	cache *c;
	cache_shard_ent *ent;
	uint8_t *manifest;
	size_t manifest_len;
	bool quiet; /* cache_shard_open_quiet: counted in ent->scans */
};

struct cache_view {
	rocksdb_pinnableslice_t *ps;
	const char *data;
	size_t len;
};

struct cache {
	char *dir;
	cache_opts opts;
	rocksdb_t *db;
	rocksdb_options_t *dbo;
	rocksdb_options_t *cfo[4];
	rocksdb_block_based_table_options_t *bbo;
	rocksdb_cache_t *blob_cache;           /* hot chunk values in RAM; NULL = none */
	rocksdb_env_t *env;                    /* opts.background_low_cpu; NULL = default */
	rocksdb_column_family_handle_t *cf[4]; /* default, manifests, chunks, meta */
	rocksdb_writeoptions_t *wo_sync;       /* WAL, fsync */
	rocksdb_writeoptions_t *wo;            /* WAL, no fsync */
	rocksdb_writeoptions_t *wo_chunk;      /* chunk values: WAL per opts.chunk_wal */
	rocksdb_readoptions_t *ro;             /* chunk reads */
	rocksdb_readoptions_t *ro_meta;
	rocksdb_flushoptions_t *fo;

	/* Tests only (tests/test_admin_races.c), set before the cache is shared;
	 * NULL otherwise. Called with no lock held where a read race is decided:
	 * a chunk read that found no value (CACHE_RACE_GET_MISS); verify before
	 * each chunk read (CACHE_RACE_VERIFY_READ) and after one answered
	 * WT_ENOTFOUND (CACHE_RACE_VERIFY_MISS); a quiet open (an admin scan)
	 * before it returns its pinned handle (CACHE_RACE_SCAN_OPEN, h: the
	 * hash of the shard id). */
	void (*race_hook)(void *ctx, int where, wt_hash128 h);
	void *race_ctx;
	/* Tests only (tests/test_cache_crash_evict.c), set before the cache is
	 * shared; NULL otherwise. Called at each step of the crash ordering of an
	 * eviction (CACHE_STEP_EVICT_* and CACHE_STEP_UNREF_*, with c->lk held)
	 * and of a reclaim (CACHE_STEP_RECLAIM_*, with c->rc_run held and no
	 * other lock), where the test kills the process. */
	void (*step_hook)(void *ctx, int step);
	void *step_ctx;

	pthread_mutex_t lk; /* guards every field below */
	bool lk_init;
	cache_chunk_map chunks;
	cache_shard_map shards;
	unsigned verifying;      /* cache_verify_all scans running (RAM blob cache emptied) */
	cache_writer *writers;   /* open writers, linked by next_w */
	cache_shard_ent *doomed; /* evicted while pinned, linked by next */
	uint64_t clock;
	uint64_t bytes;
	uint64_t n_pinned;
	uint64_t n_writers;
	uint64_t hits, misses, evictions, corruptions, dedup_hits, chunk_reads, bytes_read;
	uint64_t ram_reads, ram_bytes; /* of chunk_reads: blob cache hits not hashed again */
	/* reclaim.c: runs are serialized by rc_run; the fields below are under lk. */
	pthread_mutex_t rc_run;
	bool rc_run_init;
	bool rc_armed;       /* cache_open finished: evictions may start a background run */
	bool rc_closing;     /* cache_close: start no more */
	bool rc_bg;          /* the background thread is working */
	bool rc_thread_live; /* rc_thread was started and is not joined yet */
	bool rc_active;      /* some cache_reclaim runs now */
	pthread_t rc_thread;
	uint64_t rc_freed; /* chunk bytes deleted since the last reclaim began */
	uint64_t reclaims, reclaimed;
};

/* Column family names, in CACHE_CF_* order (tests open the store raw with them). */
#define CACHE_CF_NAMES                                                                             \
	{                                                                                          \
		"default", "manifests", "chunks", "meta"                                           \
	}
enum { CACHE_CF_DEFAULT = 0, CACHE_CF_MANIFESTS = 1, CACHE_CF_CHUNKS = 2, CACHE_CF_META = 3 };

/* ---- map.c ---- */
cache_chunk_ent *cache_chunk_find(const cache_chunk_map *m, wt_hash128 h);
/* Inserts e (owned by the map afterwards); WT_ENOMEM if the table cannot grow. */
int cache_chunk_insert(cache_chunk_map *m, cache_chunk_ent *e);
/* Unlinks and returns e (caller frees), NULL if absent. */
cache_chunk_ent *cache_chunk_remove(cache_chunk_map *m, wt_hash128 h);
void cache_chunk_map_free(cache_chunk_map *m); /* frees every entry */

uint64_t cache_id_hash(const void *id, size_t len);
cache_shard_ent *cache_shard_find(const cache_shard_map *m, const void *id, size_t len);
int cache_shard_insert(cache_shard_map *m, cache_shard_ent *e);
void cache_shard_unlink(cache_shard_map *m, cache_shard_ent *e);
void cache_shard_ent_free(cache_shard_ent *e);
void cache_shard_map_free(cache_shard_map *m); /* frees every entry */

/* ---- db.c: RocksDB plumbing ---- */
int cache_db_open(cache *c, wt_errbuf *err);
void cache_db_close(cache *c);
/* Translate and free a RocksDB error string: sets err, returns the code. */
int cache_rocks_err(cache *c, char *errstr, const char *what, wt_errbuf *err);
#define CACHE_MEM_SHARD_CHUNKS 16
/* log2 of the RAM tier's LRU shards: as many as keep CACHE_MEM_SHARD_CHUNKS
 * chunks of chunk_bytes in each (at most 64 shards, at least 1). */
int cache_mem_shard_bits(uint64_t mem_bytes, uint32_t chunk_bytes);
/* Key builders; *len receives the key length. Return malloc'd keys (NULL on ENOMEM). */
uint8_t *cache_key_manifest(const void *id, size_t id_len, size_t *len);
uint8_t *cache_key_meta(char tag, const void *id, size_t id_len, size_t *len);
void cache_put_u64le(uint8_t *p, uint64_t v);
uint64_t cache_get_u64le(const uint8_t *p);

/* ---- record.c ---- */
/* Builds a shard record. Returns malloc'd bytes (*len set) or NULL (ENOMEM/overflow). */
uint8_t *cache_record_build(const cache_chunk_ref *chunks, size_t n, uint64_t nbytes,
                            const void *manifest, size_t manifest_len, size_t *len);
/* Validates a record completely. On success sets the out pointers into rec
 * (borrowed) and n_chunks; chunk refs are decoded with cache_record_chunk. */
int cache_record_parse(const uint8_t *rec, size_t len, size_t *n_chunks, uint64_t *nbytes,
                       const uint8_t **manifest, size_t *manifest_len);
cache_chunk_ref cache_record_chunk(const uint8_t *rec, size_t i);

/* ---- evict.c (all *_locked: caller holds c->lk) ---- */
/* Removes shard e: deletes its record; drops its chunk refs now, or at the last
 * unpin if it is pinned. */
void cache_evict_locked(cache *c, cache_shard_ent *e, const char *why);
/* Drops the chunk refs of a shard or writer list; deletes chunks reaching zero. */
void cache_unref_locked(cache *c, const cache_chunk_ref *list, size_t n);
enum {
	CACHE_RACE_GET_MISS = 1,
	CACHE_RACE_VERIFY_READ,
	CACHE_RACE_VERIFY_MISS,
	CACHE_RACE_SCAN_OPEN
};
/* c->step_hook points, in the order they run. */
enum {
	CACHE_STEP_EVICT_WRITE = 1, /* shard out of memory, batch built, not written */
	CACHE_STEP_EVICT_DONE,      /* batch written (record, LRU, dead chunks) */
	CACHE_STEP_UNREF_WRITE,     /* cache_unref_locked: deletes built, not written */
	CACHE_STEP_UNREF_DONE,      /* ... written */
	CACHE_STEP_RECLAIM_BEGIN,   /* before pass 1 (index compaction) */
	CACHE_STEP_RECLAIM_PASS1,   /* pass 1 done, all-dead blob files deleted */
	CACHE_STEP_RECLAIM_GC_ON,   /* blob GC switched on, pass 2 not started */
	CACHE_STEP_RECLAIM_PASS2,   /* pass 2 done (live chunks relocated), GC still on */
	CACHE_STEP_RECLAIM_GC_OFF,  /* GC switched off again */
};

/* Evicts LRU unpinned shards until c->bytes <= max_bytes or none is left. */
void cache_enforce_budget_locked(cache *c);
/* A chunk failed its hash: mark it bad, evict every shard that lists it, log. */
void cache_chunk_corrupt_locked(cache *c, wt_hash128 h, const char *what);

/* Mark and sweep (see cache_gc); caller holds c->lk. */
int cache_gc_locked(cache *c, uint64_t *freed, wt_errbuf *err);

/* ---- reclaim.c ---- */
/* Chunk files on disk (blob + SST of the chunks column family). */
uint64_t cache_chunk_disk_bytes(cache *c);
/* Every RocksDB table and blob file (cache_stats.disk_bytes). */
uint64_t cache_disk_bytes(cache *c);
/* After evictions: start the background reclaim if opts.reclaim_ratio says so. */
void cache_reclaim_maybe_locked(cache *c);
/* cache_close: stop starting runs, cut a running one short, join the thread. */
void cache_reclaim_stop(cache *c);

/* ---- read.c ---- */
/* cache_shard_open; touch = false leaves the LRU clock and hit/miss counters alone. */
int cache_shard_open_int(cache *c, const void *id, size_t id_len, bool touch, cache_shard **out,
                         wt_errbuf *err);
/* Reads chunk h and verifies it: with buf, copies it there (cap bytes; the
 * pinned value is released); without, hands the pinned value to *out (may be
 * NULL: verify only). *len_out (may be NULL) = chunk size. WT_ENOTFOUND,
 * WT_ETOOBIG, WT_ECORRUPT (handled: shards evicted, chunk logged).
 * trust_ram: a value RocksDB found in the blob cache (RAM this process filled
 * from its own writes, never from a disk read: cache_trusts_ram) is hashed on
 * its first hit only (cache_chunk_ent.ram_ok); every byte read from a file is
 * hashed, and so is every hit with opts.rehash_memory_hits. cache_verify
 * passes false. */
int cache_get_verified(cache *c, wt_hash128 h, void *buf, size_t cap, size_t *len_out,
                       rocksdb_pinnableslice_t **out, bool trust_ram, wt_errbuf *err);
/* Whether blob cache hits can be served without hashing them again: a blob
 * cache, filled only at flushes (prepopulate; reads never fill it) of a
 * memtable only this process's puts filled (no chunk WAL to replay at open),
 * and opts.rehash_memory_hits off. */
bool cache_trusts_ram(const cache *c);

#endif
