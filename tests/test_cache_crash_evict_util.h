/*
 * test_cache_crash_evict_util.h — tests/test_cache_crash_evict.c's store (test code only):
 * the scenarios' sizes, the shards A, B and C its prepared store holds (names, chunk seeds,
 * how a shard is put) and the checks of a store reopened after a kill: every shard wholly
 * there and byte-equal or wholly gone, the stats and the raw store's keys exactly the
 * visible shards', and a second reclaim giving the blob files' space back. Include after
 * cmocka.h.
 */
#ifndef WT_TEST_CACHE_CRASH_EVICT_UTIL_H
#define WT_TEST_CACHE_CRASH_EVICT_UTIL_H

#include <dirent.h>
#include <sys/stat.h>

#include "tests/test_cache_util.h"

#define RANKS       4
#define LAYERS      8
#define W_BYTES     (60u << 10)
#define N_BYTES     1024u
#define BLOB_FILE   (256u << 10)
#define C_CHUNKS    16
#define DAMAGE_SEED 777u
/* Budget scenario: exactly A and B (distinct bytes), so C's puts evict. */
#define BUDGET_BYTES ((uint64_t)RANKS * (2u * LAYERS * W_BYTES + LAYERS * N_BYTES))

enum { SC_EVICT = 1, SC_BUDGET, SC_RECLAIM, SC_DOOMED };

static const char *sc_name(int sc)
{
	return sc == SC_EVICT    ? "evict"
	       : sc == SC_BUDGET ? "budget"
	       : sc == SC_DOOMED ? "doomed"
	                         : "reclaim";
}

static cache_opts crash_opts(int sc)
{
	cache_opts o;
	cache_opts_init(&o);
	o.chunk_bytes = 64u << 10;
	o.max_bytes = sc == SC_BUDGET ? BUDGET_BYTES : 64u << 20;
	o.mem_bytes = 0; /* reads come from the files */
	o.blob_file_bytes = BLOB_FILE;
	o.reclaim_ratio = 0; /* no background run: every step is the child's own */
	return o;
}

static void shard_name(char *buf, size_t cap, int layout, int r)
{
	snprintf(buf, cap, "%c/rank%d", layout == 1 ? 'A' : 'B', r);
}

static uint64_t chunk_seed(int layout, int r, size_t i)
{
	int l = (int)(i / 2);
	return i % 2 == 0 ? (uint64_t)layout * 1000000u + (uint64_t)r * 1000u + (uint64_t)l
	                  : 500000u + (uint64_t)r * 1000u + (uint64_t)l;
}

static int put_shard(cache *c, const char *id, size_t n, int layout, int r, wt_errbuf *err)
{
	static uint8_t buf[W_BYTES];
	cache_writer *w = NULL;
	int rv = cache_begin_shard(c, id, strlen(id), &w, err);
	for (size_t i = 0; rv == WT_OK && i < n; i++) {
		size_t len = layout == 3 ? W_BYTES : i % 2 == 0 ? W_BYTES : N_BYTES;
		tu_fill(buf, len, layout == 3 ? 3000000u + i : chunk_seed(layout, r, i));
		rv = cache_put_chunk(w, buf, len, NULL, err);
	}
	if (rv != WT_OK) {
		cache_abort_shard(w);
		return rv;
	}
	return cache_commit_shard(w, id, strlen(id), err);
}

/* Every chunk of shard (layout, r) reads back verified and equal to what was
 * put; adds its chunks to *hs. Fails the test otherwise. */
static void check_shard(cache *c, const char *id, int layout, int r, size_t n, wt_hash128 *hs,
                        uint64_t *sizes, size_t *nh)
{
	static uint8_t got[W_BYTES], want[W_BYTES];
	wt_errbuf err;
	cache_shard *s = NULL;
	if (cache_shard_open(c, id, strlen(id), &s, &err) != WT_OK)
		fail_msg("shard %s: %s", id, err.msg);
	assert_int_equal(cache_shard_n_chunks(s), n);
	for (size_t i = 0; i < n; i++) {
		uint64_t nb;
		wt_hash128 h = cache_shard_chunk(s, i, &nb);
		size_t len = 0;
		tu_fill(want, nb, layout == 3 ? 3000000u + i : chunk_seed(layout, r, i));
		assert_true(common_hash128_eq(h, common_hash128(want, nb)));
		int rv = cache_read_chunk(c, h, got, sizeof(got), &len, &err);
		if (rv != WT_OK)
			fail_msg("shard %s chunk %zu: %s", id, i, err.msg);
		assert_int_equal(len, nb);
		assert_memory_equal(got, want, nb);
		hs[*nh] = h;
		sizes[(*nh)++] = nb;
	}
	cache_shard_close(s);
}

static void check_absent(cache *c, const char *id)
{
	wt_errbuf err;
	cache_shard *s = NULL;
	assert_false(cache_has_shard(c, id, strlen(id)));
	assert_int_equal(cache_shard_open(c, id, strlen(id), &s, &err), WT_ENOTFOUND);
}

/* Keys in the raw store: chunk values, chunk index entries, LRU entries,
 * records (one raw open: each writes a MANIFEST). */
typedef struct raw_counts {
	int64_t chunks, index, lru, records;
} raw_counts;

static int64_t count_prefix(rocksdb_t *db, rocksdb_column_family_handle_t *cf, char prefix)
{
	rocksdb_readoptions_t *ro = rocksdb_readoptions_create();
	rocksdb_iterator_t *it = rocksdb_create_iterator_cf(db, ro, cf);
	int64_t n = 0;
	for (rocksdb_iter_seek_to_first(it); rocksdb_iter_valid(it); rocksdb_iter_next(it)) {
		size_t kl;
		const char *k = rocksdb_iter_key(it, &kl);
		n += prefix == 0 || (kl > 0 && k[0] == prefix);
	}
	rocksdb_iter_destroy(it);
	rocksdb_readoptions_destroy(ro);
	return n;
}

static raw_counts raw_count(const char *dir)
{
	tc_raw raw;
	assert_int_equal(tc_raw_open(&raw, dir), 0);
	raw_counts n = {count_prefix(raw.db, raw.cf[CACHE_CF_CHUNKS], 0),
	                count_prefix(raw.db, raw.cf[CACHE_CF_META], 'k'),
	                count_prefix(raw.db, raw.cf[CACHE_CF_META], 'u'),
	                count_prefix(raw.db, raw.cf[CACHE_CF_MANIFESTS], 0)};
	tc_raw_close(&raw);
	return n;
}

/* Bytes of the blob files in dir (what the disk holds, referenced or not). */
static uint64_t dir_blob_bytes(const char *dir)
{
	uint64_t sum = 0;
	DIR *d = opendir(dir);
	struct dirent *de;
	while (d != NULL && (de = readdir(d)) != NULL) {
		size_t l = strlen(de->d_name);
		struct stat st;
		char *p = tu_path(dir, de->d_name);
		if (l > 5 && strcmp(de->d_name + l - 5, ".blob") == 0 && stat(p, &st) == 0)
			sum += (uint64_t)st.st_size;
		free(p);
	}
	if (d != NULL)
		closedir(d);
	return sum;
}

static int cmp_idx_hash(const void *a, const void *b)
{
	const wt_hash128 *x = a, *y = b;
	if (x->hi != y->hi)
		return x->hi < y->hi ? -1 : 1;
	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* Distinct chunks among hs (sorted in place with their sizes). */
static void distinct(wt_hash128 *hs, uint64_t *sizes, size_t nh, uint64_t *n, uint64_t *bytes)
{
	/* sort pairs: pack into one array of structs */
	struct pair {
		wt_hash128 h;
		uint64_t nb;
	} *p = malloc((nh ? nh : 1) * sizeof(*p));
	assert_non_null(p);
	for (size_t i = 0; i < nh; i++)
		p[i] = (struct pair){hs[i], sizes[i]};
	qsort(p, nh, sizeof(*p), cmp_idx_hash); /* h is the first member */
	*n = 0;
	*bytes = 0;
	for (size_t i = 0; i < nh; i++)
		if (i == 0 || !common_hash128_eq(p[i].h, p[i - 1].h)) {
			(*n)++;
			*bytes += p[i].nb;
		}
	free(p);
}

/*
 * Reopen dir after a child ran the scenario up to the steps in res, and check
 * it (see the top of the file). evicted: how many LRU-first A shards must be
 * gone; c_there: shard C must be there. Returns the live bytes.
 */
static uint64_t check_store(const char *dir, int sc, int evicted, bool c_there)
{
	wt_errbuf err;
	cache_opts o = crash_opts(sc);
	cache *c = NULL;
	if (cache_open(&c, dir, &o, &err) != WT_OK)
		fail_msg("reopen after kill: %s", err.msg);
	cache_stats st;
	cache_stats_get(c, &st);
	/* a record dropped at open (lists a missing chunk: half a shard) counts here */
	assert_int_equal(st.corruptions, 0);
	static wt_hash128 hs[3 * RANKS * 2 * LAYERS + C_CHUNKS];
	static uint64_t sizes[3 * RANKS * 2 * LAYERS + C_CHUNKS];
	size_t nh = 0;
	uint64_t visible = 0;
	for (int layout = 1; layout <= 2; layout++)
		for (int r = 0; r < RANKS; r++) {
			char id[32];
			shard_name(id, sizeof(id), layout, r);
			if (layout == 1 && r < evicted) {
				check_absent(c, id);
				continue;
			}
			check_shard(c, id, layout, r, 2 * LAYERS, hs, sizes, &nh);
			visible++;
		}
	if (c_there) {
		check_shard(c, "C", 3, 0, C_CHUNKS, hs, sizes, &nh);
		visible++;
	} else {
		check_absent(c, "C");
	}
	uint64_t n_distinct, live;
	distinct(hs, sizes, nh, &n_distinct, &live);
	cache_stats_get(c, &st);
	assert_int_equal(st.shards, visible);
	assert_int_equal(st.chunks, n_distinct);
	assert_int_equal(st.bytes, live);
	uint64_t bad = 9;
	assert_int_equal(cache_verify_all(c, NULL, NULL, &bad, &err), WT_OK);
	assert_int_equal(bad, 0);
	cache_close(c);
	/* the raw store holds exactly that: no chunk, index entry, record or LRU
	 * entry of an evicted shard is left behind */
	raw_counts rc = raw_count(dir);
	assert_int_equal(rc.chunks, n_distinct);
	assert_int_equal(rc.index, n_distinct);
	assert_int_equal(rc.lru, visible);
	assert_int_equal(rc.records, visible);
	return live;
}

/* After the check: a reclaim run now completes and the blob files on disk
 * come down to the live bytes (+10%: blob record headers, as in
 * test_cache_reclaim.c), the shards still intact. */
static void reclaim_after(const char *dir, int sc, int evicted, bool c_there, uint64_t live)
{
	wt_errbuf err;
	cache_opts o = crash_opts(sc);
	cache *c = NULL;
	assert_int_equal(cache_open(&c, dir, &o, &err), WT_OK);
	cache_reclaim_stats rs;
	assert_int_equal(cache_reclaim(c, &rs, &err), WT_OK);
	assert_int_equal(rs.live_bytes, live);
	assert_true(cache_chunk_disk_bytes(c) <= live + live / 10);
	cache_close(c);
	uint64_t on_disk = dir_blob_bytes(dir);
	if (on_disk > live + live / 10)
		fail_msg("after the second reclaim: %llu bytes of blob files in %s for %llu live",
		         (unsigned long long)on_disk, dir, (unsigned long long)live);
	check_store(dir, sc, evicted, c_there);
}

#endif
