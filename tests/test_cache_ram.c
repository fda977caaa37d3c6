/* test_cache_ram.c — cache/: the RAM tier (mem_bytes, RocksDB's blob cache):
 * which reads are hashed, and chunks large enough to fill a whole LRU shard. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <cmocka.h>

#include "tests/test_cache_util.h"

static int setup(void **state)
{
	return tc_setup(state, "cacher");
}

static void put_shard(cache *c, const char *id, size_t n, uint64_t seed)
{
	wt_errbuf err;
	if (tc_put_shard(c, id, n, seed, &err) != WT_OK)
		fail_msg("put shard %s: %s", id, err.msg);
}

static wt_hash128 chunk_hash(size_t i, uint64_t seed)
{
	uint8_t buf[TC_CHUNK];
	tu_fill(buf, tc_chunk_len(i), seed + i);
	return common_hash128(buf, tc_chunk_len(i));
}

/* Read chunk i of shard seed `seed` through cache_read_chunk (copy) or
 * cache_chunk_view (pinned) and check its bytes. */
static void read_check(cache *c, size_t i, uint64_t seed, bool view)
{
	uint8_t want[TC_CHUNK], buf[TC_CHUNK];
	tu_fill(want, tc_chunk_len(i), seed + i);
	wt_errbuf err;
	size_t got = 0;
	const void *p = buf;
	cache_view *v = NULL;
	int rv = view ? cache_chunk_view(c, chunk_hash(i, seed), &v, &err)
	              : cache_read_chunk(c, chunk_hash(i, seed), buf, sizeof(buf), &got, &err);
	if (rv != WT_OK)
		fail_msg("read chunk %zu: %s", i, err.msg);
	if (view)
		p = cache_view_data(v, &got);
	assert_int_equal(got, tc_chunk_len(i));
	assert_memory_equal(p, want, got);
	cache_view_release(v);
}

static uint64_t ram_reads(cache *c)
{
	cache_stats st;
	cache_stats_get(c, &st);
	return st.ram_reads;
}

/* Each chunk's RAM copy is hashed at its first read, not at the later ones
 * (ram_reads counts those); after a reopen the tier is empty and reads come
 * from disk: all hashed. */
static void test_ram_copy_hashed_once(void **state)
{
	fx *f = *state;
	f->o.mem_bytes = 64u << 20;
	tc_reopen(f);
	put_shard(f->c, "A", 4, 10);
	uint64_t bytes = 0;
	for (size_t i = 0; i < 4; i++)
		bytes += tc_chunk_len(i);
	for (int pass = 0; pass < 3; pass++)
		for (size_t i = 0; i < 4; i++)
			read_check(f->c, i, 10, pass == 1);
	cache_stats st;
	cache_stats_get(f->c, &st);
	printf("3 reads of 4 chunks from RAM: %llu reads, %llu not hashed again (%llu bytes)\n",
	       (unsigned long long)st.chunk_reads, (unsigned long long)st.ram_reads,
	       (unsigned long long)st.ram_bytes);
	assert_int_equal(st.chunk_reads, 12);
	assert_int_equal(st.ram_reads, 8);
	assert_int_equal(st.ram_bytes, 2 * bytes);
	tc_reopen(f);
	for (int pass = 0; pass < 2; pass++)
		for (size_t i = 0; i < 4; i++)
			read_check(f->c, i, 10, pass == 1);
	assert_int_equal(ram_reads(f->c), 0);
}

/* Bytes put under a hash that is not theirs are in RAM after the commit: the
 * first read of that RAM copy hashes it and finds them (WT_ECORRUPT, the
 * shard evicted), as a read from disk would. */
static void test_ram_first_read_catches_wrong_hash(void **state)
{
	fx *f = *state;
	f->o.mem_bytes = 64u << 20;
	tc_reopen(f);
	uint8_t junk[TC_CHUNK], buf[TC_CHUNK];
	tu_fill(junk, 100, 999);
	wt_hash128 lie = chunk_hash(0, 4242);
	cache_writer *w = NULL;
	wt_errbuf err;
	assert_int_equal(cache_begin_shard(f->c, "W", 1, &w, &err), WT_OK);
	assert_int_equal(cache_put_chunk_hashed(w, junk, 100, lie, &err), WT_OK);
	assert_int_equal(cache_commit_shard(w, "m", 1, &err), WT_OK);
	cache_stats st;
	cache_stats_get(f->c, &st);
	assert_true(st.mem_used >= 100);
	size_t got = 0;
	assert_int_equal(cache_read_chunk(f->c, lie, buf, sizeof(buf), &got, &err), WT_ECORRUPT);
	printf("wrong hash, first read from RAM: %s\n", err.msg);
	assert_false(cache_has_shard(f->c, "W", 1));
	assert_int_equal(ram_reads(f->c), 0);
}

/* rehash_memory_hits: every read from RAM is hashed. */
static void test_rehash_memory_hits(void **state)
{
	fx *f = *state;
	f->o.mem_bytes = 64u << 20;
	f->o.rehash_memory_hits = true;
	tc_reopen(f);
	put_shard(f->c, "B", 3, 70);
	for (int pass = 0; pass < 3; pass++)
		for (size_t i = 0; i < 3; i++)
			read_check(f->c, i, 70, pass == 1);
	cache_stats st;
	cache_stats_get(f->c, &st);
	assert_true(st.mem_used > 0);
	assert_int_equal(st.chunk_reads, 9);
	assert_int_equal(st.ram_reads, 0);
}

/* Write chunk i (nbytes, seed) into w; its hash out. */
static wt_hash128 put_big(cache_writer *w, uint8_t *buf, size_t nbytes, uint64_t seed)
{
	tu_fill(buf, nbytes, seed);
	wt_hash128 h;
	wt_errbuf err;
	if (cache_put_chunk(w, buf, nbytes, &h, &err) != WT_OK)
		fail_msg("put: %s", err.msg);
	return h;
}

/* RocksDB's LRU cache splits its capacity into up to 64 shards by key hash; a
 * value larger than its shard is dropped once released. An 8 MiB tier of
 * 1 MiB chunks was 16 shards of 512 KiB and held none of them; it is sized
 * now so that each shard holds 16 chunks (cache_mem_shard_bits). */
static void test_ram_tier_holds_large_chunks(void **state)
{
	fx *f = *state;
	assert_int_equal(cache_mem_shard_bits(1ull << 30, 4u << 20), 4);
	assert_int_equal(cache_mem_shard_bits(64ull << 30, 4u << 20), 6);
	assert_int_equal(cache_mem_shard_bits(8u << 20, 1u << 20), 0);
	assert_int_equal(cache_mem_shard_bits(1ull << 30, 256u << 20), 0);
	f->o.chunk_bytes = 1u << 20;
	f->o.max_bytes = 64u << 20;
	f->o.mem_bytes = 8u << 20;
	tc_reopen(f);
	size_t n = 4, len = (1u << 20) - 64;
	uint8_t *buf = malloc(1u << 20);
	assert_non_null(buf);
	wt_hash128 hs[4];
	cache_writer *w = NULL;
	wt_errbuf err;
	assert_int_equal(cache_begin_shard(f->c, "L", 1, &w, &err), WT_OK);
	for (size_t i = 0; i < n; i++)
		hs[i] = put_big(w, buf, len, 500 + i);
	assert_int_equal(cache_commit_shard(w, "m", 1, &err), WT_OK);
	cache_stats st;
	cache_stats_get(f->c, &st);
	printf("8 MiB RAM tier after a commit of 4 chunks of 1 MiB: %llu bytes held\n",
	       (unsigned long long)st.mem_used);
	assert_true(st.mem_used >= n * len);
	for (int pass = 0; pass < 2; pass++)
		for (size_t i = 0; i < n; i++) {
			size_t got = 0;
			assert_int_equal(cache_read_chunk(f->c, hs[i], buf, 1u << 20, &got, &err),
			                 WT_OK);
			assert_int_equal(got, len);
		}
	assert_int_equal(ram_reads(f->c), n);
	free(buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_ram_copy_hashed_once, setup, tc_teardown),
	    cmocka_unit_test_setup_teardown(test_ram_first_read_catches_wrong_hash, setup,
	                                    tc_teardown),
	    cmocka_unit_test_setup_teardown(test_rehash_memory_hits, setup, tc_teardown),
	    cmocka_unit_test_setup_teardown(test_ram_tier_holds_large_chunks, setup, tc_teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
