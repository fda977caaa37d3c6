/* test_cache.c — cache/: round trip, dedupe, LRU budget, pinning, gc, verify, corruption. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <rocksdb/c.h>

#include "cache/cache.h"
#include "cache/cache_int.h"
#include "tests/util/testutil.h"

#define CHUNK 4096u

typedef struct fx {
	char *dir;
	cache *c;
	cache_opts o;
} fx;

static int setup(void **state)
{
	fx *f = calloc(1, sizeof(*f));
	if (f == NULL || (f->dir = tu_mkdtemp("cache")) == NULL)
		return -1;
	cache_opts_init(&f->o);
	f->o.chunk_bytes = CHUNK;
	f->o.max_bytes = 1u << 20;
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	fx *f = *state;
	cache_close(f->c);
	tu_rmrf(f->dir);
	free(f->dir);
	free(f);
	return 0;
}

static void reopen(fx *f)
{
	wt_errbuf err;
	cache_close(f->c);
	f->c = NULL;
	int rv = cache_open(&f->c, f->dir, &f->o, &err);
	if (rv != WT_OK)
		fail_msg("cache_open: %s", err.msg);
}

/* Write shard `id` of n chunks; chunk i holds tu_fill(seed + i) (size CHUNK - i). */
static void put_shard(cache *c, const char *id, size_t n, uint64_t seed)
{
	wt_errbuf err;
	cache_writer *w = NULL;
	assert_int_equal(cache_begin_shard(c, id, strlen(id), &w, &err), WT_OK);
	uint8_t buf[CHUNK];
	for (size_t i = 0; i < n; i++) {
		tu_fill(buf, CHUNK - i, seed + i);
		wt_hash128 h;
		int rv = cache_put_chunk(w, buf, CHUNK - i, &h, &err);
		if (rv != WT_OK)
			fail_msg("put_chunk: %s", err.msg);
		assert_true(common_hash128_eq(h, common_hash128(buf, CHUNK - i)));
	}
	char man[64];
	int ml = snprintf(man, sizeof(man), "manifest of %s", id);
	int rv = cache_commit_shard(w, man, (size_t)ml, &err);
	if (rv != WT_OK)
		fail_msg("commit: %s", err.msg);
}

/* Check shard `id` is complete and its chunks read back as put_shard wrote them. */
static void check_shard(cache *c, const char *id, size_t n, uint64_t seed)
{
	wt_errbuf err;
	cache_shard *s = NULL;
	int rv = cache_shard_open(c, id, strlen(id), &s, &err);
	if (rv != WT_OK)
		fail_msg("shard_open %s: %s", id, err.msg);
	size_t ml;
	const char *m = cache_shard_manifest(s, &ml);
	char want[64];
	int wl = snprintf(want, sizeof(want), "manifest of %s", id);
	assert_int_equal(ml, (size_t)wl);
	assert_memory_equal(m, want, ml);
	assert_int_equal(cache_shard_n_chunks(s), n);
	uint8_t buf[CHUNK], exp[CHUNK];
	for (size_t i = 0; i < n; i++) {
		uint64_t nb;
		wt_hash128 h = cache_shard_chunk(s, i, &nb);
		assert_int_equal(nb, CHUNK - i);
		size_t got = 0;
		assert_int_equal(cache_read_chunk(c, h, buf, sizeof(buf), &got, &err), WT_OK);
		tu_fill(exp, CHUNK - i, seed + i);
		assert_int_equal(got, CHUNK - i);
		assert_memory_equal(buf, exp, got);
		cache_view *v = NULL;
		assert_int_equal(cache_chunk_view(c, h, &v, &err), WT_OK);
		size_t vl;
		const void *vd = cache_view_data(v, &vl);
		assert_int_equal(vl, got);
		assert_memory_equal(vd, exp, vl);
		cache_view_release(v);
	}
	cache_shard_close(s);
}

static void test_round_trip(void **state)
{
	fx *f = *state;
	reopen(f);
	put_shard(f->c, "shard-a", 5, 100);
	check_shard(f->c, "shard-a", 5, 100);
	cache_stats st;
	cache_stats_get(f->c, &st);
	assert_int_equal(st.shards, 1);
	assert_int_equal(st.chunks, 5);
	assert_int_equal(st.hits, 1);
	assert_int_equal(st.pinned, 0);
	/* durable across reopen */
	reopen(f);
	check_shard(f->c, "shard-a", 5, 100);
	wt_errbuf err;
	cache_shard *s = NULL;
	assert_int_equal(cache_shard_open(f->c, "nope", 4, &s, &err), WT_ENOTFOUND);
	cache_stats_get(f->c, &st);
	assert_int_equal(st.misses, 1);
	/* a second writer on the same id, and a committed id, are refused */
	cache_writer *w = NULL, *w2 = NULL;
	assert_int_equal(cache_begin_shard(f->c, "shard-a", 7, &w, &err), WT_EEXIST);
	assert_int_equal(cache_begin_shard(f->c, "b", 1, &w, &err), WT_OK);
	assert_int_equal(cache_begin_shard(f->c, "b", 1, &w2, &err), WT_EBUSY);
	uint8_t big[CHUNK + 1] = {0};
	assert_int_equal(cache_put_chunk(w, big, sizeof(big), NULL, &err), WT_ETOOBIG);
	assert_int_equal(cache_put_chunk(w, big, 0, NULL, &err), WT_EINVAL);
	cache_abort_shard(w);
	assert_false(cache_has_shard(f->c, "b", 1));
	assert_true(cache_has_shard(f->c, "shard-a", 7));
}

static void test_dedupe(void **state)
{
	fx *f = *state;
	reopen(f);
	put_shard(f->c, "rank0", 8, 7);
	cache_stats st;
	cache_stats_get(f->c, &st);
	uint64_t bytes1 = st.bytes;
	/* rank1 shares chunks 0..7 (same seed), so nothing new is stored */
	put_shard(f->c, "rank1", 8, 7);
	cache_stats_get(f->c, &st);
	assert_int_equal(st.chunks, 8);
	assert_int_equal(st.bytes, bytes1);
	assert_int_equal(st.dedup_hits, 8);
	/* evicting one keeps the shared chunks for the other */
	wt_errbuf err;
	assert_int_equal(cache_evict(f->c, "rank0", 5, &err), WT_OK);
	assert_int_equal(cache_evict(f->c, "rank0", 5, &err), WT_ENOTFOUND);
	check_shard(f->c, "rank1", 8, 7);
	assert_int_equal(cache_evict(f->c, "rank1", 5, &err), WT_OK);
	cache_stats_get(f->c, &st);
	assert_int_equal(st.chunks, 0);
	assert_int_equal(st.bytes, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_round_trip, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_dedupe, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
