/*
 * cache.h — the RocksDB shard store (module interface; not installed).
 *
 * A shard is one rank of one layout of one model revision. It is stored as
 *   - a manifest: opaque bytes to the cache (weightd stores a packed protobuf
 *     Manifest) plus the list of chunk hashes the caller put, and
 *   - chunks: the shard's tensor bytes cut by the caller (chunks never cross
 *     tensor boundaries), content-addressed by XXH3-128 of their bytes, so an
 *     identical chunk (replicated norms, unchanged tensors) is stored once.
 *
 * Writes: cache_begin_shard -> cache_put_chunk... -> cache_commit_shard (or
 * cache_abort_shard). The manifest becomes visible only after every chunk it
 * lists is durable; after a crash no shard with a missing chunk is visible and
 * chunks of uncommitted shards are swept at the next open.
 *
 * Reads: cache_shard_open pins a shard (it cannot be evicted while pinned) and
 * hands out its manifest bytes and chunk list; chunk reads re-hash the bytes. A
 * chunk whose bytes do not match its hash evicts every shard that lists it and
 * fails with WT_ECORRUPT (the producer then rebuilds the shard).
 *
 * Byte budget: the bytes of distinct chunks are kept under opts.max_bytes by
 * evicting least-recently-used unpinned shards. Pinned shards and open writers
 * can hold the store above the budget for as long as they are open; the store
 * comes back under it as they close.
 *
 * Threads: a cache may be used from any thread. Any number of threads may read
 * (cache_shard_open, cache_read_chunk, cache_chunk_view, ...) while others
 * write. A cache_writer is used by one thread at a time (one writer per shard
 * id: a second cache_begin_shard for the same id fails with WT_EBUSY). A
 * cache_shard and a cache_view may be used from any thread but closed once.
 * One mutex per cache guards the in-memory index (shards, chunk refcounts,
 * pins, LRU clock, stats); chunk bytes are read and written outside it.
 * Every handle must be closed before cache_close().
 */
#ifndef WT_CACHE_H
#define WT_CACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/common.h"
#include "weights/error.h"

typedef struct cache cache;               /* opaque store */
typedef struct cache_writer cache_writer; /* one shard being written */
typedef struct cache_shard cache_shard;   /* a pinned, committed shard */
typedef struct cache_view cache_view;     /* borrowed zero-copy chunk bytes */

#define CACHE_SHARD_ID_MAX      1024          /* bytes */
#define CACHE_CHUNK_BYTES_DEF   (4u << 20)    /* 4 MiB */
#define CACHE_CHUNK_BYTES_MIN   64u           /* tests use small chunks */
#define CACHE_CHUNK_BYTES_MAX   (256u << 20)  /* 256 MiB */
#define CACHE_MAX_BYTES_DEF     (64ull << 30) /* 64 GiB */
#define CACHE_MEM_BYTES_DEF     (1ull << 30)  /* 1 GiB of hot chunks in RAM */
#define CACHE_MANIFEST_MAX_DEF  (64u << 20)   /* 64 MiB */
#define CACHE_BLOB_FILE_DEF     (256u << 20)  /* 256 MiB RocksDB blob files */
#define CACHE_BLOB_FILE_MIN     (64u << 10)   /* tests use small blob files */
#define CACHE_RECLAIM_RATIO_DEF 1.5           /* disk / live bytes that triggers reclaim */

/* How chunk values are kept (see cache/README.md for the measurements). */
typedef enum {
	CACHE_STORE_BLOB = 0, /* RocksDB blob files (default: written once) */
	CACHE_STORE_SST = 1,  /* values inside SST files (compaction rewrites them) */
} cache_store_kind;

typedef struct cache_opts {
	uint64_t max_bytes;    /* budget for distinct chunk bytes; >= chunk_bytes */
	uint32_t chunk_bytes;  /* largest chunk cache_put_chunk accepts */
	uint32_t manifest_max; /* largest manifest accepted by cache_commit_shard */
	bool gc_at_open;       /* sweep orphaned chunks in cache_open (default true;
	                          when false they count against max_bytes until cache_gc) */
	/* Tuning knobs; measurements in cache/README.md (bench/bench_cache.c). */
	cache_store_kind store;   /* CACHE_STORE_BLOB (see cache/README.md) */
	bool chunk_wal;           /* chunks through the WAL (false: flush before commit) */
	bool rocks_verify;        /* RocksDB read checksums (false: we re-hash anyway) */
	bool mmap_reads;          /* read table files through mmap (default true) */
	uint64_t mem_bytes;       /* RAM cache of chunk values (RocksDB blob cache, LRU):
	                             a hit is pinned, not copied or read from disk. Chunks
	                             enter it when written (the flush at commit), not on
	                             read misses, so reads larger than it never churn it.
	                             0 = none; default CACHE_MEM_BYTES_DEF. Blob store only.
	                             A hit is not hashed again (the bytes are the ones
	                             put, hashed by the producer): every byte read from
	                             a file is (cache_read_chunk). */
	bool rehash_memory_hits;  /* hash mem_bytes hits again too (default false) */
	uint64_t blob_file_bytes; /* size RocksDB cuts blob files at (default
	                             CACHE_BLOB_FILE_DEF; >= CACHE_BLOB_FILE_MIN) */
	bool background_low_cpu;  /* RocksDB's flush and compaction threads run at the
	                             lowest CPU priority (nice 19), so writing to disk
	                             yields the CPU to reads and to the caller; the
	                             setting is RocksDB's default Env's, process-wide.
	                             Default true. */
	double reclaim_ratio;     /* cache_reclaim runs in the background after an eviction
	                             when the chunk files on disk exceed reclaim_ratio x the
	                             live chunk bytes and one blob file, and one blob file
	                             of chunks was deleted since the last run (0 = never
	                             automatically; else > 1.0; default
	                             CACHE_RECLAIM_RATIO_DEF). Blob store only. */
} cache_opts;

/* Fill with the defaults above. */
void cache_opts_init(cache_opts *o);

/*
 * Set glibc's M_MMAP_THRESHOLD and M_TRIM_THRESHOLD (process-wide, once, logged)
 * so RocksDB's two chunk-sized buffers per blob read are reused instead of
 * page-faulted (blob reads 4x faster, cache/README.md). For a program's main()
 * (weightd, the benchmarks): the cache itself never changes malloc settings.
 */
void cache_tune_malloc(uint32_t chunk_bytes);

/*
 * Open (creating if needed) the store in directory dir. opts NULL = defaults.
 * WT_ECONFIG if max_bytes < chunk_bytes or chunk_bytes is outside
 * [CACHE_CHUNK_BYTES_MIN, CACHE_CHUNK_BYTES_MAX]; WT_EIO if RocksDB cannot open
 * the directory (locked by another process, permissions); WT_EVERSION if the
 * store was written by an unknown format. On success *out is owned by the
 * caller: release with cache_close().
 */
int cache_open(cache **out, const char *dir, const cache_opts *opts, wt_errbuf *err);

/* Close the store. Every writer, shard and view must be closed first
 * (broken invariant otherwise). NULL is a no-op. */
void cache_close(cache *c);

/* ---- writing a shard ---- */

/*
 * Start writing shard `id` (id_len in 1..CACHE_SHARD_ID_MAX bytes, copied).
 * WT_EEXIST if the shard is already committed (cache_evict it first to
 * replace it); WT_EBUSY if another writer has the same id open. On success
 * *out is owned by the caller until cache_commit_shard or cache_abort_shard.
 */
int cache_begin_shard(cache *c, const void *id, size_t id_len, cache_writer **out, wt_errbuf *err);

/*
 * Store one chunk (nbytes in 1..chunk_bytes; the bytes are copied) and append
 * it to the shard's chunk list. *hash_out (may be NULL) receives its XXH3-128.
 * A chunk already in the store is not written again. WT_ETOOBIG if nbytes >
 * chunk_bytes; WT_ENOSPC if the shard's distinct chunk bytes exceed max_bytes.
 * WT_ENOSPC or a RocksDB write error fails the writer: later puts and the
 * commit fail with that code (the commit aborts the shard). Argument errors
 * (WT_EINVAL, WT_ETOOBIG) and WT_ENOMEM leave it usable.
 */
int cache_put_chunk(cache_writer *w, const void *data, size_t nbytes, wt_hash128 *hash_out,
                    wt_errbuf *err);
/*
 * cache_put_chunk for bytes whose XXH3-128 the caller computed itself, in this
 * process, from these very bytes (weightd's producer hashes each chunk as it
 * copies it): the put does not hash them again. A wrong hash is never served:
 * every read re-hashes, and a mismatch evicts the shards that list the chunk
 * (WT_ECORRUPT), as for damage on disk.
 */
int cache_put_chunk_hashed(cache_writer *w, const void *data, size_t nbytes, wt_hash128 hash,
                           wt_errbuf *err);

/*
 * Make the shard visible with `manifest` (manifest_len in 1..manifest_max
 * bytes, copied): flushes its chunks, then writes the manifest with the WAL
 * synced. Always consumes w (on error the shard is aborted). WT_ENOSPC if the
 * shard alone is larger than max_bytes. Less-recently-used unpinned shards are
 * evicted to stay within the budget.
 */
int cache_commit_shard(cache_writer *w, const void *manifest, size_t manifest_len, wt_errbuf *err);

/* Drop an uncommitted shard and the chunks only it referenced. NULL is a no-op. */
void cache_abort_shard(cache_writer *w);

/* ---- disk room ---- */

#define CACHE_DISK_RESERVE (32ull << 20) /* kept free for RocksDB's WAL, manifest, flushes */

/* WT_OK if the cache's file system has need + CACHE_DISK_RESERVE bytes free;
 * WT_ENOSPC naming the figures otherwise. Call before writing a shard: RocksDB
 * must not meet a full disk (disk.c says why). */
int cache_disk_room(cache *c, uint64_t need, wt_errbuf *err);

/* ---- notes: small named values beside the shards ---- */

#define CACHE_NOTE_NAME_MAX 4096u
/* a source object's digest with its block digests (weightd/srcmemo.c) fits */
#define CACHE_NOTE_VALUE_MAX ((1u << 20) + 64u)

/* Store value (1..CACHE_NOTE_VALUE_MAX bytes) under name (1..CACHE_NOTE_NAME_MAX
 * bytes), replacing any earlier one; both copied. Written through the WAL,
 * not synced. Notes survive restarts; eviction and verify leave them alone. */
int cache_note_put(cache *c, const void *name, size_t name_len, const void *val, size_t val_len,
                   wt_errbuf *err);
/* Remove the note `name` (none: WT_OK). */
int cache_note_delete(cache *c, const void *name, size_t name_len, wt_errbuf *err);
/* Copy the note `name` into val (cap bytes): WT_ENOTFOUND if none, WT_ETOOBIG
 * if larger than cap. */
int cache_note_get(cache *c, const void *name, size_t name_len, void *val, size_t cap,
                   size_t *val_len, wt_errbuf *err);

/* ---- reading ---- */

/*
 * Pin committed shard `id` and read its manifest (verified against the
 * record's own XXH3-128). WT_ENOTFOUND if absent (counts a miss); WT_ECORRUPT
 * if its record is damaged (the shard is evicted). Marks the shard used (LRU).
 * On success *out is owned by the caller: release with cache_shard_close().
 */
int cache_shard_open(cache *c, const void *id, size_t id_len, cache_shard **out, wt_errbuf *err);

/* cache_shard_open without the use: the LRU clock and the hit/miss counters
 * are left alone (admin scans that read every shard's manifest must not make
 * every shard look just used), and its pin never makes the shard busy:
 * cache_evict drops the shard meanwhile (one EVICT's scan is no reader to
 * another EVICT); the handle stays valid until closed. */
int cache_shard_open_quiet(cache *c, const void *id, size_t id_len, cache_shard **out,
                           wt_errbuf *err);

/* Unpin. NULL is a no-op. */
void cache_shard_close(cache_shard *s);

/* Manifest bytes. Borrowed; valid until cache_shard_close(s). */
const void *cache_shard_manifest(const cache_shard *s, size_t *len);
/* Chunk list in put order (a chunk put twice appears twice). */
size_t cache_shard_n_chunks(const cache_shard *s);
wt_hash128 cache_shard_chunk(const cache_shard *s, size_t i, uint64_t *nbytes);
/* Sum of the list's chunk sizes (duplicates counted each time). */
uint64_t cache_shard_nbytes(const cache_shard *s);

/* True if shard `id` is committed (no pin, no LRU touch, no hit/miss count). */
bool cache_has_shard(cache *c, const void *id, size_t id_len);

/* True if shard `id` is committed and lists chunk `h` (no pin, no LRU touch, no
 * hit/miss count); *nbytes (if not NULL) = its size. Servers use it so a chunk is
 * only served to a request for a shard that contains it. Cost: a scan of the
 * shard's chunk list. */
bool cache_shard_has_chunk(cache *c, const void *id, size_t id_len, wt_hash128 h, uint64_t *nbytes);

/*
 * Copy chunk `hash` into buf (cap bytes); *len_out = its size. The bytes are
 * re-hashed: WT_ECORRUPT on mismatch (every shard listing the chunk is evicted,
 * the chunk id is logged). WT_ENOTFOUND if absent; WT_ETOOBIG if cap is too
 * small (*len_out still set).
 */
int cache_read_chunk(cache *c, wt_hash128 hash, void *buf, size_t cap, size_t *len_out,
                     wt_errbuf *err);

/*
 * Zero-copy read of chunk `hash` (RocksDB pinned value), verified like
 * cache_read_chunk. On success *out is owned by the caller: release with
 * cache_view_release().
 */
int cache_chunk_view(cache *c, wt_hash128 hash, cache_view **out, wt_errbuf *err);
/* Borrowed; valid until cache_view_release(v). */
const void *cache_view_data(const cache_view *v, size_t *len);
void cache_view_release(cache_view *v); /* NULL is a no-op */

/* ---- maintenance ---- */

/* Remove shard `id` and the chunks no other shard uses. WT_ENOTFOUND if
 * absent; WT_EBUSY if pinned by cache_shard_open (a reader; pins of
 * cache_shard_open_quiet do not count) or being written. */
int cache_evict(cache *c, const void *id, size_t id_len, wt_errbuf *err);

/*
 * Mark and sweep: delete every stored chunk that no committed shard and no
 * open writer lists (crash leftovers, failed deletes). *freed_bytes (may be
 * NULL) receives the bytes deleted. Also runs in cache_open (opts.gc_at_open).
 */
int cache_gc(cache *c, uint64_t *freed_bytes, wt_errbuf *err);

/* What one cache_reclaim did. */
typedef struct cache_reclaim_stats {
	uint64_t disk_before;     /* cache files on disk (cache_stats.disk_bytes) before */
	uint64_t disk_after;      /* ... and after */
	uint64_t live_bytes;      /* distinct live chunk bytes (cache_stats.bytes) at the end */
	uint64_t rewritten_bytes; /* blob bytes the relocation pass wrote (0 if it did not
	                             run; includes blob files flushed meanwhile by writers) */
	bool relocated;           /* the relocation pass (blob GC) ran */
	uint64_t elapsed_ns;
} cache_reclaim_stats;

/*
 * Give back disk space held by dead chunks (blob store; a no-op for SST).
 * Pass 1 compacts the chunk index (tombstones meet their entries, SST only: a
 * few bytes per chunk), which deletes every blob file whose chunks are all dead.
 * If the files left still exceed the live bytes by reclaim_ratio (or
 * CACHE_RECLAIM_RATIO_DEF when it is 0) and by one blob file, pass 2 compacts
 * again with RocksDB's blob GC on: every live chunk is rewritten into new blob
 * files and the old ones are deleted (cost: the live bytes, written once). GC
 * is switched off again afterwards (a restart also starts with it off).
 * Concurrent reads, views and writes are safe (RocksDB keeps a file until no
 * read or pinned value uses it); crash-safe (compaction is atomic). Runs are
 * serialized with the background one. *out (may be NULL) receives what it did.
 * WT_EIO if RocksDB refuses the option change.
 */
int cache_reclaim(cache *c, cache_reclaim_stats *out, wt_errbuf *err);

/* What cache_verify_all found wrong. */
typedef enum {
	CACHE_BAD_CHUNK = 1,    /* id = 16-byte chunk hash: bytes do not match, or missing */
	CACHE_BAD_MANIFEST = 2, /* id = shard id: record damaged or lists a missing chunk */
} cache_bad_kind;

/* Called once per bad object, outside the cache lock; must not call back into
 * the cache. id is borrowed for the call only. */
typedef void (*cache_verify_fn)(void *ctx, cache_bad_kind kind, const void *id, size_t id_len);

/*
 * Re-read and re-hash every chunk and manifest record. Each bad one is
 * reported to cb (may be NULL) and the shards it affects are evicted (pinned
 * ones as soon as they are unpinned). *n_bad (may be NULL) = number of bad
 * objects. Returns WT_OK even if objects were bad; an error only if the scan
 * itself failed.
 */
int cache_verify_all(cache *c, cache_verify_fn cb, void *ctx, uint64_t *n_bad, wt_errbuf *err);

typedef struct cache_stats {
	uint64_t bytes;        /* distinct chunk bytes held (committed + being written) */
	uint64_t max_bytes;    /* the budget */
	uint64_t shards;       /* committed shards */
	uint64_t chunks;       /* distinct chunks held */
	uint64_t pinned;       /* shards pinned now */
	uint64_t writers;      /* writers open now */
	uint64_t hits;         /* cache_shard_open found */
	uint64_t misses;       /* cache_shard_open WT_ENOTFOUND */
	uint64_t evictions;    /* shards evicted (budget, cache_evict, corruption) */
	uint64_t corruptions;  /* chunks or records that failed their hash */
	uint64_t dedup_hits;   /* cache_put_chunk calls that found the chunk stored */
	uint64_t chunk_reads;  /* verified chunk reads */
	uint64_t bytes_read;   /* bytes of verified chunk reads */
	uint64_t ram_reads;    /* of chunk_reads: RAM cache hits, not hashed again */
	uint64_t ram_bytes;    /* their bytes */
	uint64_t mem_capacity; /* RAM cache capacity now (0 while a verify scans) */
	uint64_t mem_used;     /* RAM cache bytes held */
	uint64_t disk_bytes;   /* RocksDB table and blob files of every column family */
	uint64_t reclaims;     /* cache_reclaim runs finished (background and on request) */
	uint64_t reclaimed;    /* disk bytes those runs gave back */
	bool reclaiming;       /* a reclaim runs now */
} cache_stats;

void cache_stats_get(cache *c, cache_stats *out);

/* One committed shard, for listings (admin "cache ls"). id borrowed for the call. */
typedef struct cache_shard_info {
	const void *id;
	size_t id_len;
	uint64_t nbytes; /* sum of its chunk sizes */
	uint64_t n_chunks;
	uint64_t last_use; /* LRU clock value (larger = more recent) */
	uint32_t pins;
} cache_shard_info;

/* Calls cb for each committed shard, under the cache lock: cb must not call
 * back into the cache. Returns the number of shards listed. */
uint64_t cache_list(cache *c, void (*cb)(void *ctx, const cache_shard_info *info), void *ctx);

#endif
