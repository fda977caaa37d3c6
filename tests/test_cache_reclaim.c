/*
 * test_cache_reclaim.c — disk space of blob files kept alive by a few live
 * chunks: the leak (layout A, then layout B whose norms dedup into A's blob
 * files, then A evicted), cache_reclaim giving it back, reclaim under
 * concurrent readers, the background trigger after evictions, close while a
 * reclaim runs.
 *
 * Data: every chunk is tu_fill(seed) with the seeds below (fixed, printed).
 * Layout X (A = 1, B = 2), rank r, layer l: a "weight" chunk of W_BYTES with
 * seed X * 1000000 + r * 1000 + l, then a "norm" chunk of N_BYTES with seed
 * 500000 + r * 1000 + l — identical in both layouts (same TP, different
 * quantization: norms stay BF16), so B's norms are stored in A's blob files.
 */
// clang-format off
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
// clang-format on
#include <pthread.h>
#include <time.h>

#include "tests/test_cache_util.h"

#define RANKS     4
#define LAYERS    16
#define W_BYTES   (60u << 10)
#define N_BYTES   1024u
#define BLOB_FILE (256u << 10)

static uint64_t w_seed(int layout, int r, int l)
{
	return (uint64_t)layout * 1000000u + (uint64_t)r * 1000u + (uint64_t)l;
}

static uint64_t n_seed(int r, int l)
{
	return 500000u + (uint64_t)r * 1000u + (uint64_t)l;
}

static void shard_id(char *buf, size_t cap, int layout, int r)
{
	snprintf(buf, cap, "%c/rank%d", layout == 1 ? 'A' : 'B', r);
}

static int setup(void **state)
{
	if (tc_setup(state, "cache_reclaim") != 0)
		return -1;
	fx *f = *state;
	f->o.chunk_bytes = 64u << 10;
	f->o.max_bytes = 64u << 20;
	f->o.mem_bytes = 0; /* reads come from the blob files */
	f->o.blob_file_bytes = BLOB_FILE;
	f->o.reclaim_ratio = 0; /* tests call cache_reclaim themselves unless they set it */
	print_message("seeds: weight = layout*1000000 + rank*1000 + layer, norm = 500000 + "
	              "rank*1000 + layer\n");
	return 0;
}

static void put_layout(cache *c, int layout)
{
	static uint8_t buf[W_BYTES];
	wt_errbuf err;
	for (int r = 0; r < RANKS; r++) {
		char id[32];
		shard_id(id, sizeof(id), layout, r);
		cache_writer *w = NULL;
		assert_int_equal(cache_begin_shard(c, id, strlen(id), &w, &err), WT_OK);
		for (int l = 0; l < LAYERS; l++) {
			tu_fill(buf, W_BYTES, w_seed(layout, r, l));
			assert_int_equal(cache_put_chunk(w, buf, W_BYTES, NULL, &err), WT_OK);
			tu_fill(buf, N_BYTES, n_seed(r, l));
			assert_int_equal(cache_put_chunk(w, buf, N_BYTES, NULL, &err), WT_OK);
		}
		assert_int_equal(cache_commit_shard(w, id, strlen(id), &err), WT_OK);
	}
}

static void evict_layout(cache *c, int layout)
{
	wt_errbuf err;
	for (int r = 0; r < RANKS; r++) {
		char id[32];
		shard_id(id, sizeof(id), layout, r);
		assert_int_equal(cache_evict(c, id, strlen(id), &err), WT_OK);
	}
}

/* Every chunk of every shard of `layout` reads back verified and equal to
 * what was put. Returns the number of mismatches (0 expected). */
static int check_layout(cache *c, int layout)
{
	static uint8_t got[W_BYTES], want[W_BYTES];
	int bad = 0;
	wt_errbuf err;
	for (int r = 0; r < RANKS; r++) {
		char id[32];
		shard_id(id, sizeof(id), layout, r);
		cache_shard *s = NULL;
		assert_int_equal(cache_shard_open(c, id, strlen(id), &s, &err), WT_OK);
		assert_int_equal(cache_shard_n_chunks(s), 2 * LAYERS);
		for (size_t i = 0; i < 2 * LAYERS; i++) {
			uint64_t nb;
			wt_hash128 h = cache_shard_chunk(s, i, &nb);
			size_t len = 0;
			int l = (int)(i / 2);
			uint64_t seed = i % 2 == 0 ? w_seed(layout, r, l) : n_seed(r, l);
			tu_fill(want, nb, seed);
			if (cache_read_chunk(c, h, got, sizeof(got), &len, &err) != WT_OK ||
			    len != nb || memcmp(got, want, nb) != 0)
				bad++;
		}
		cache_shard_close(s);
	}
	return bad;
}

/* The leak pattern; returns (chunk disk bytes, live bytes) after it. */
static void make_leak(fx *f, uint64_t *disk, uint64_t *live)
{
	put_layout(f->c, 1);
	put_layout(f->c, 2);
	evict_layout(f->c, 1);
	cache_stats st;
	cache_stats_get(f->c, &st);
	*disk = cache_chunk_disk_bytes(f->c);
	*live = st.bytes;
}

static void test_leak_then_reclaim(void **state)
{
	fx *f = *state;
	tc_reopen(f);
	uint64_t disk, live;
	make_leak(f, &disk, &live);
	print_message("leak: chunk files on disk %llu bytes, live chunks %llu bytes (%.2fx)\n",
	              (unsigned long long)disk, (unsigned long long)live,
	              (double)disk / (double)live);
	assert_true(disk > live * 3 / 2);
	/* Not just tombstones waiting for a compaction: after a full one (what
	 * RocksDB does on its own sooner or later) A's weights are still on disk,
	 * because every one of A's blob files holds norms that B lists. */
	rocksdb_compactoptions_t *co = rocksdb_compactoptions_create();
	rocksdb_compactoptions_set_bottommost_level_compaction(co, 2 /* kForce */);
	rocksdb_compact_range_cf_opt(f->c->db, f->c->cf[CACHE_CF_CHUNKS], co, NULL, 0, NULL, 0);
	rocksdb_compactoptions_destroy(co);
	disk = cache_chunk_disk_bytes(f->c);
	print_message("leak after a full compaction: %llu bytes on disk, %.2fx live\n",
	              (unsigned long long)disk, (double)disk / (double)live);
	assert_true(disk > live * 3 / 2);
	cache_stats st;
	cache_stats_get(f->c, &st);
	assert_int_equal(st.reclaims, 0); /* reclaim_ratio 0: never automatically */
	assert_true(st.disk_bytes >= disk);

	cache_reclaim_stats rs;
	wt_errbuf err;
	assert_int_equal(cache_reclaim(f->c, &rs, &err), WT_OK);
	print_message("reclaim: %llu -> %llu bytes on disk, live %llu, rewritten %llu (%.2fx "
	              "live), relocated %d, %.1f ms\n",
	              (unsigned long long)rs.disk_before, (unsigned long long)rs.disk_after,
	              (unsigned long long)rs.live_bytes, (unsigned long long)rs.rewritten_bytes,
	              (double)rs.rewritten_bytes / (double)rs.live_bytes, rs.relocated,
	              (double)rs.elapsed_ns / 1e6);
	assert_true(rs.relocated);
	assert_true(rs.disk_before >= disk && rs.disk_before <= disk + (64u << 10));
	assert_int_equal(rs.live_bytes, live);
	/* Blob records carry a key and a header (~50 bytes per chunk), the index a
	 * few KiB of SST: within 10% of the live bytes. */
	assert_true(rs.disk_after <= live + live / 10);
	assert_true(rs.rewritten_bytes >= live && rs.rewritten_bytes <= live + live / 10);
	assert_int_equal(check_layout(f->c, 2), 0);
	cache_stats_get(f->c, &st);
	assert_int_equal(st.reclaims, 1);
	assert_int_equal(st.reclaimed, rs.disk_before - rs.disk_after);
	assert_false(st.reclaiming);

	/* Nothing left to gain: the next run compacts the index only. */
	assert_int_equal(cache_reclaim(f->c, &rs, &err), WT_OK);
	assert_false(rs.relocated);
	assert_int_equal(rs.rewritten_bytes, 0);

	/* After a restart GC is off again (options come from cache_open) and the
	 * shards are all there. */
	tc_reopen(f);
	assert_int_equal(check_layout(f->c, 2), 0);
	assert_true(cache_chunk_disk_bytes(f->c) <= live + live / 10);
}

/* Only all-dead blob files: the index compaction frees them, nothing is rewritten. */
static void test_dead_files_need_no_rewrite(void **state)
{
	fx *f = *state;
	tc_reopen(f);
	put_layout(f->c, 1);
	put_layout(f->c, 2);
	evict_layout(f->c, 2); /* B's weights only sit in B's own files */
	uint64_t live = f->c->bytes;
	cache_reclaim_stats rs;
	wt_errbuf err;
	assert_int_equal(cache_reclaim(f->c, &rs, &err), WT_OK);
	print_message("dead files: %llu -> %llu bytes, live %llu, relocated %d\n",
	              (unsigned long long)rs.disk_before, (unsigned long long)rs.disk_after,
	              (unsigned long long)live, rs.relocated);
	assert_false(rs.relocated);
	assert_int_equal(rs.rewritten_bytes, 0);
	assert_true(rs.disk_before > live * 3 / 2);
	/* A's files are whole again; at most B's first file (shared with nothing,
	 * but cut at a flush boundary) could remain: one blob file of slack. */
	assert_true(rs.disk_after <= live + live / 10 + BLOB_FILE);
	assert_int_equal(check_layout(f->c, 1), 0);
}

typedef struct reader_arg {
	cache *c;
	wt_hash128 h[RANKS * 2 * LAYERS];
	uint64_t nb[RANKS * 2 * LAYERS];
	size_t n;
	volatile int stop;
	int errors;
	uint64_t reads;
} reader_arg;

static void *reader_main(void *p)
{
	reader_arg *a = p;
	static __thread uint8_t buf[W_BYTES];
	wt_errbuf err;
	for (size_t i = 0; !__atomic_load_n(&a->stop, __ATOMIC_ACQUIRE); i++) {
		size_t k = i % a->n, len = 0;
		int rv;
		if (i % 3 == 0) {
			cache_view *v = NULL;
			rv = cache_chunk_view(a->c, a->h[k], &v, &err);
			if (rv == WT_OK) {
				const void *d = cache_view_data(v, &len);
				rv = common_hash128_eq(common_hash128(d, len), a->h[k])
				         ? WT_OK
				         : WT_ECORRUPT;
				cache_view_release(v);
			}
		} else {
			rv = cache_read_chunk(a->c, a->h[k], buf, sizeof(buf), &len, &err);
		}
		if (rv != WT_OK || len != a->nb[k])
			__atomic_add_fetch(&a->errors, 1, __ATOMIC_RELAXED);
		__atomic_add_fetch(&a->reads, 1, __ATOMIC_RELAXED);
	}
	return NULL;
}

/* Shard `id` written by tc_put_shard(n, seed) reads back equal; mismatches. */
static int check_plain(cache *c, const char *id, size_t n, uint64_t seed)
{
	uint8_t got[TC_CHUNK], want[TC_CHUNK];
	wt_errbuf err;
	cache_shard *s = NULL;
	assert_int_equal(cache_shard_open(c, id, strlen(id), &s, &err), WT_OK);
	assert_int_equal(cache_shard_n_chunks(s), n);
	int bad = 0;
	for (size_t i = 0; i < n; i++) {
		size_t len = 0;
		tu_fill(want, tc_chunk_len(i), seed + i);
		if (cache_read_chunk(c, cache_shard_chunk(s, i, NULL), got, sizeof(got), &len,
		                     &err) != WT_OK ||
		    len != tc_chunk_len(i) || memcmp(got, want, len) != 0)
			bad++;
	}
	cache_shard_close(s);
	return bad;
}

static void collect_layout(cache *c, int layout, reader_arg *a)
{
	wt_errbuf err;
	for (int r = 0; r < RANKS; r++) {
		char id[32];
		shard_id(id, sizeof(id), layout, r);
		cache_shard *s = NULL;
		assert_int_equal(cache_shard_open(c, id, strlen(id), &s, &err), WT_OK);
		for (size_t i = 0; i < cache_shard_n_chunks(s); i++) {
			a->h[a->n] = cache_shard_chunk(s, i, &a->nb[a->n]);
			a->n++;
		}
		cache_shard_close(s);
	}
}

/* Readers (copies and zero-copy views) run while reclaim rewrites every live
 * chunk; views taken before it stay valid after the old files are deleted. */
static void test_reclaim_with_readers(void **state)
{
	fx *f = *state;
	f->o.mem_bytes = 1u << 20; /* some reads pinned in the RAM cache, most from disk */
	tc_reopen(f);
	uint64_t disk, live;
	make_leak(f, &disk, &live);
	reader_arg *a = calloc(1, sizeof(*a));
	assert_non_null(a);
	a->c = f->c;
	collect_layout(f->c, 2, a);
	wt_errbuf err;
	cache_view *held[8];
	for (int i = 0; i < 8; i++)
		assert_int_equal(cache_chunk_view(f->c, a->h[i * 7], &held[i], &err), WT_OK);
	pthread_t th[3];
	for (int i = 0; i < 3; i++)
		assert_int_equal(pthread_create(&th[i], NULL, reader_main, a), 0);
	/* A writer too: a new shard committed during the reclaim. */
	cache_reclaim_stats rs;
	int rv = cache_reclaim(f->c, &rs, &err);
	assert_int_equal(tc_put_shard(f->c, "during", 8, 777, &err), WT_OK);
	__atomic_store_n(&a->stop, 1, __ATOMIC_RELEASE);
	for (int i = 0; i < 3; i++)
		pthread_join(th[i], NULL);
	print_message("readers: %llu reads during reclaim (%.1f ms), %d errors\n",
	              (unsigned long long)a->reads, (double)rs.elapsed_ns / 1e6, a->errors);
	assert_int_equal(rv, WT_OK);
	assert_true(rs.relocated);
	assert_int_equal(a->errors, 0);
	assert_true(a->reads > 0);
	for (int i = 0; i < 8; i++) {
		size_t len;
		const void *d = cache_view_data(held[i], &len);
		assert_int_equal(len, a->nb[i * 7]);
		assert_true(common_hash128_eq(common_hash128(d, len), a->h[i * 7]));
		cache_view_release(held[i]);
	}
	assert_int_equal(check_layout(f->c, 2), 0);
	assert_int_equal(check_plain(f->c, "during", 8, 777), 0);
	free(a);
}

/* Wait (bounded) until a background reclaim has finished; false on timeout. */
static bool wait_reclaims(cache *c, uint64_t n)
{
	for (int i = 0; i < 2000; i++) { /* 20 s at most */
		cache_stats st;
		cache_stats_get(c, &st);
		if (st.reclaims >= n && !st.reclaiming)
			return true;
		nanosleep(&(struct timespec){0, 10 * 1000 * 1000}, NULL);
	}
	return false;
}

static void test_auto_after_eviction(void **state)
{
	fx *f = *state;
	f->o.reclaim_ratio = 1.5;
	tc_reopen(f);
	put_layout(f->c, 1);
	put_layout(f->c, 2);
	cache_stats st;
	cache_stats_get(f->c, &st);
	assert_int_equal(st.reclaims, 0); /* no eviction yet */
	evict_layout(f->c, 1);
	assert_true(wait_reclaims(f->c, 1));
	cache_stats_get(f->c, &st);
	uint64_t disk = cache_chunk_disk_bytes(f->c);
	print_message("auto: %llu reclaims, chunk files %llu bytes, live %llu, %llu reclaimed\n",
	              (unsigned long long)st.reclaims, (unsigned long long)disk,
	              (unsigned long long)st.bytes, (unsigned long long)st.reclaimed);
	assert_true(disk <= st.bytes + st.bytes / 10);
	assert_true(st.reclaimed > 0);
	assert_int_equal(check_layout(f->c, 2), 0);
}

/* Garbage left from before (evicted with automatic reclaim off) is not
 * enough: a background run needs one blob file of chunks deleted since the
 * last run, so a run that cannot help is not repeated at every eviction. */
static void test_auto_needs_new_garbage(void **state)
{
	fx *f = *state;
	tc_reopen(f);
	wt_errbuf err;
	assert_int_equal(tc_put_shard(f->c, "small", 8, 99, &err), WT_OK);
	put_layout(f->c, 1);
	put_layout(f->c, 2);
	evict_layout(f->c, 1); /* reclaim_ratio 0: garbage stays */
	f->o.reclaim_ratio = 1.5;
	tc_reopen(f);
	uint64_t disk = cache_chunk_disk_bytes(f->c);
	assert_true(disk > f->c->bytes * 3 / 2 && disk - f->c->bytes > BLOB_FILE);
	assert_int_equal(cache_evict(f->c, "small", 5, &err), WT_OK); /* 32 KiB freed */
	cache_stats st;
	cache_stats_get(f->c, &st);
	assert_int_equal(st.reclaims, 0);
	assert_false(f->c->rc_thread_live);
	char id[32];
	shard_id(id, sizeof(id), 2, 0);
	assert_int_equal(cache_evict(f->c, id, strlen(id), &err), WT_OK); /* 976 KiB freed */
	assert_true(wait_reclaims(f->c, 1));
	disk = cache_chunk_disk_bytes(f->c);
	print_message("new garbage: chunk files %llu bytes, live %llu\n", (unsigned long long)disk,
	              (unsigned long long)f->c->bytes);
	assert_true(disk <= f->c->bytes + f->c->bytes / 10);
}

/* cache_close while the background reclaim runs: joined, store intact. */
static void test_close_while_reclaiming(void **state)
{
	fx *f = *state;
	f->o.reclaim_ratio = 1.5;
	tc_reopen(f);
	put_layout(f->c, 1);
	put_layout(f->c, 2);
	evict_layout(f->c, 1); /* starts the background run */
	pthread_mutex_lock(&f->c->lk);
	bool started = f->c->rc_thread_live;
	pthread_mutex_unlock(&f->c->lk);
	assert_true(started);
	cache_stats st;
	cache_stats_get(f->c, &st);
	print_message("closing with reclaiming=%d reclaims=%llu\n", st.reclaiming,
	              (unsigned long long)st.reclaims);
	cache_close(f->c); /* joins the thread */
	f->c = NULL;
	f->o.reclaim_ratio = 0;
	tc_reopen(f);
	assert_int_equal(check_layout(f->c, 2), 0);
	for (int r = 0; r < RANKS; r++) {
		char id[32];
		shard_id(id, sizeof(id), 1, r);
		assert_false(cache_has_shard(f->c, id, strlen(id)));
	}
}

static void test_reclaim_empty(void **state)
{
	fx *f = *state;
	tc_reopen(f);
	cache_reclaim_stats rs;
	wt_errbuf err;
	assert_int_equal(cache_reclaim(f->c, &rs, &err), WT_OK);
	assert_false(rs.relocated);
	assert_int_equal(rs.live_bytes, 0);
	assert_int_equal(rs.rewritten_bytes, 0);
	assert_true(rs.disk_after <= rs.disk_before);
	cache_stats st;
	cache_stats_get(f->c, &st);
	assert_int_equal(st.reclaims, 1);
}

/* SST store: values are rewritten by normal compaction; reclaim relocates nothing. */
static void test_reclaim_sst_store(void **state)
{
	fx *f = *state;
	f->o.store = CACHE_STORE_SST;
	tc_reopen(f);
	wt_errbuf err;
	assert_int_equal(tc_put_shard(f->c, "s", 16, 5, &err), WT_OK);
	cache_reclaim_stats rs;
	assert_int_equal(cache_reclaim(f->c, &rs, &err), WT_OK);
	assert_false(rs.relocated);
	assert_int_equal(check_plain(f->c, "s", 16, 5), 0);
}

static void test_opts_checked(void **state)
{
	fx *f = *state;
	wt_errbuf err;
	cache *c = NULL;
	f->o.reclaim_ratio = 0.9; /* would reclaim forever */
	assert_int_equal(cache_open(&c, f->dir, &f->o, &err), WT_ECONFIG);
	assert_non_null(strstr(err.msg, "reclaim_ratio"));
	f->o.reclaim_ratio = 1.5;
	f->o.blob_file_bytes = 4096;
	assert_int_equal(cache_open(&c, f->dir, &f->o, &err), WT_ECONFIG);
	assert_non_null(strstr(err.msg, "blob_file_bytes"));
	assert_null(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_leak_then_reclaim, setup, tc_teardown),
	    cmocka_unit_test_setup_teardown(test_dead_files_need_no_rewrite, setup, tc_teardown),
	    cmocka_unit_test_setup_teardown(test_reclaim_with_readers, setup, tc_teardown),
	    cmocka_unit_test_setup_teardown(test_auto_after_eviction, setup, tc_teardown),
	    cmocka_unit_test_setup_teardown(test_auto_needs_new_garbage, setup, tc_teardown),
	    cmocka_unit_test_setup_teardown(test_close_while_reclaiming, setup, tc_teardown),
	    cmocka_unit_test_setup_teardown(test_reclaim_empty, setup, tc_teardown),
	    cmocka_unit_test_setup_teardown(test_reclaim_sst_store, setup, tc_teardown),
	    cmocka_unit_test_setup_teardown(test_opts_checked, setup, tc_teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
