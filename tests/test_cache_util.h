/*
 * test_cache_util.h — helpers shared by the cache tests: deterministic shards and
 * raw RocksDB access to a closed store (to inject corruption and count keys the
 * way a disk fault or a crash would leave them, bypassing the cache API).
 */
#ifndef WT_TEST_CACHE_UTIL_H
#define WT_TEST_CACHE_UTIL_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rocksdb/c.h>

#include "cache/cache.h"
#include "cache/cache_int.h"
#include "tests/util/testutil.h"

#define TC_CHUNK 4096u

/* Per-test fixture: a temp dir and a store opened on it (tc_reopen). */
typedef struct fx {
	char *dir;
	cache *c;
	cache_opts o;
} fx;

/* cmocka setup: temp dir named after prefix, TC_CHUNK chunks, 1 MiB budget. */
static inline int tc_setup(void **state, const char *prefix)
{
	fx *f = calloc(1, sizeof(*f));
	if (f == NULL || (f->dir = tu_mkdtemp(prefix)) == NULL) {
		free(f);
		return -1;
	}
	cache_opts_init(&f->o);
	f->o.chunk_bytes = TC_CHUNK;
	f->o.max_bytes = 1u << 20;
	*state = f;
	return 0;
}

static inline int tc_teardown(void **state)
{
	fx *f = *state;
	cache_close(f->c);
	tu_rmrf(f->dir);
	free(f->dir);
	free(f);
	return 0;
}

/* Close (if open) and open the store again with f->o; fails the test on error. */
static inline void tc_reopen(fx *f)
{
	wt_errbuf err;
	cache_close(f->c);
	f->c = NULL;
	int rv = cache_open(&f->c, f->dir, &f->o, &err);
	if (rv != WT_OK)
		fail_msg("cache_open: %s", err.msg);
}

/* Chunk i of a shard with seed s: tu_fill(s + i), TC_CHUNK - i bytes. */
static inline size_t tc_chunk_len(size_t i)
{
	return TC_CHUNK - i;
}

/* Write shard `id` of n chunks; returns the commit result (err filled). */
static inline int tc_put_shard(cache *c, const char *id, size_t n, uint64_t seed, wt_errbuf *err)
{
	cache_writer *w = NULL;
	int rv = cache_begin_shard(c, id, strlen(id), &w, err);
	if (rv != WT_OK)
		return rv;
	uint8_t buf[TC_CHUNK];
	for (size_t i = 0; i < n; i++) {
		tu_fill(buf, tc_chunk_len(i), seed + i);
		rv = cache_put_chunk(w, buf, tc_chunk_len(i), NULL, err);
		if (rv != WT_OK) {
			wt_errbuf e2;
			int rc = cache_commit_shard(w, "m", 1, &e2);
			return rc != WT_OK ? rv
			                   : WT_EINVAL; /* commit after a failed put must fail */
		}
	}
	char man[128];
	int ml = snprintf(man, sizeof(man), "manifest of %s", id);
	return cache_commit_shard(w, man, (size_t)ml, err);
}

/* Open the store in dir with raw RocksDB (the cache must be closed). */
typedef struct tc_raw {
	rocksdb_t *db;
	rocksdb_options_t *o;
	rocksdb_column_family_handle_t *cf[4];
} tc_raw;

static inline int tc_raw_open(tc_raw *r, const char *dir)
{
	static const char *const names[4] = CACHE_CF_NAMES;
	const rocksdb_options_t *cfo[4];
	r->o = rocksdb_options_create();
	for (int i = 0; i < 4; i++)
		cfo[i] = r->o;
	char *e = NULL;
	r->db = rocksdb_open_column_families(r->o, dir, 4, names, cfo, r->cf, &e);
	if (e != NULL) {
		fprintf(stderr, "raw open: %s\n", e);
		free(e);
		rocksdb_options_destroy(r->o);
		return -1;
	}
	return 0;
}

static inline void tc_raw_close(tc_raw *r)
{
	for (int i = 0; i < 4; i++)
		rocksdb_column_family_handle_destroy(r->cf[i]);
	rocksdb_close(r->db);
	rocksdb_options_destroy(r->o);
}

/* Store `data` under chunk key h (optionally with a chunk-index entry). */
static inline int tc_raw_put_chunk(const char *dir, wt_hash128 h, const void *data, size_t len,
                                   bool index)
{
	tc_raw r;
	if (tc_raw_open(&r, dir) != 0)
		return -1;
	uint8_t k[17], v[8];
	k[0] = 'k';
	common_hash128_to_bytes(h, k + 1);
	cache_put_u64le(v, len);
	rocksdb_writeoptions_t *wo = rocksdb_writeoptions_create();
	rocksdb_writeoptions_set_sync(wo, 1);
	char *e = NULL;
	rocksdb_put_cf(r.db, wo, r.cf[CACHE_CF_CHUNKS], (const char *)k + 1, 16, data, len, &e);
	if (e == NULL && index)
		rocksdb_put_cf(r.db, wo, r.cf[CACHE_CF_META], (const char *)k, 17, (const char *)v,
		               8, &e);
	rocksdb_writeoptions_destroy(wo);
	tc_raw_close(&r);
	if (e != NULL) {
		free(e);
		return -1;
	}
	return 0;
}

/* Count the keys of one column family (full scan), -1 on error. */
static inline int64_t tc_raw_count(const char *dir, int cf)
{
	tc_raw r;
	if (tc_raw_open(&r, dir) != 0)
		return -1;
	rocksdb_readoptions_t *ro = rocksdb_readoptions_create();
	rocksdb_iterator_t *it = rocksdb_create_iterator_cf(r.db, ro, r.cf[cf]);
	int64_t n = 0;
	for (rocksdb_iter_seek_to_first(it); rocksdb_iter_valid(it); rocksdb_iter_next(it))
		n++;
	rocksdb_iter_destroy(it);
	rocksdb_readoptions_destroy(ro);
	tc_raw_close(&r);
	return n;
}

#endif
