/* test_cache_verify.c — cache/: corruption found by verify_all and by reads, orphan gc. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <pthread.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "tests/test_cache_util.h"

static int setup(void **state)
{
	return tc_setup(state, "cachev");
}

static void closec(fx *f)
{
	cache_close(f->c);
	f->c = NULL;
}

static void put_shard(cache *c, const char *id, size_t n, uint64_t seed)
{
	wt_errbuf err;
	int rv = tc_put_shard(c, id, n, seed, &err);
	if (rv != WT_OK)
		fail_msg("put shard %s: %s", id, err.msg);
}

static wt_hash128 chunk_hash(size_t i, uint64_t seed)
{
	uint8_t buf[TC_CHUNK];
	tu_fill(buf, tc_chunk_len(i), seed + i);
	return common_hash128(buf, tc_chunk_len(i));
}

typedef struct seen {
	int chunks, manifests;
	uint8_t last[16];
} seen;

static void on_bad(void *ctx, cache_bad_kind kind, const void *id, size_t id_len)
{
	seen *s = ctx;
	if (kind == CACHE_BAD_CHUNK && id_len == 16) {
		s->chunks++;
		memcpy(s->last, id, 16);
	} else if (kind == CACHE_BAD_MANIFEST) {
		s->manifests++;
	}
}

/* A chunk value that no longer matches its key (written through raw RocksDB). */
static void test_verify_all(void **state)
{
	fx *f = *state;
	tc_reopen(f);
	put_shard(f->c, "A", 4, 10);
	put_shard(f->c, "B", 2, 10); /* shares A's chunks 0 and 1 */
	put_shard(f->c, "C", 3, 50);
	uint64_t bad = 9;
	wt_errbuf err;
	assert_int_equal(cache_verify_all(f->c, NULL, NULL, &bad, &err), WT_OK);
	assert_int_equal(bad, 0);
	closec(f);
	wt_hash128 victim = chunk_hash(0, 10);
	uint8_t junk[TC_CHUNK];
	tu_fill(junk, sizeof(junk), 777);
	assert_int_equal(tc_raw_put_chunk(f->dir, victim, junk, tc_chunk_len(0), false), 0);
	tc_reopen(f);
	seen s = {0};
	assert_int_equal(cache_verify_all(f->c, on_bad, &s, &bad, &err), WT_OK);
	assert_int_equal(bad, 1);
	assert_int_equal(s.chunks, 1);
	assert_int_equal(s.manifests, 0);
	uint8_t vb[16];
	common_hash128_to_bytes(victim, vb);
	assert_memory_equal(s.last, vb, 16);
	/* both shards listing it are gone, the other stays; the bad chunk is freed */
	assert_false(cache_has_shard(f->c, "A", 1));
	assert_false(cache_has_shard(f->c, "B", 1));
	assert_true(cache_has_shard(f->c, "C", 1));
	cache_stats st;
	cache_stats_get(f->c, &st);
	assert_int_equal(st.corruptions, 1);
	assert_int_equal(st.shards, 1);
	assert_int_equal(st.chunks, 3);
	assert_int_equal(cache_verify_all(f->c, on_bad, &s, &bad, &err), WT_OK);
	assert_int_equal(bad, 0);
	/* the producer rebuilds A: the chunk is written afresh */
	put_shard(f->c, "A", 4, 10);
	assert_int_equal(cache_verify_all(f->c, NULL, NULL, &bad, &err), WT_OK);
	assert_int_equal(bad, 0);
}

typedef struct verify_job {
	cache *c;
	int rv;
	uint64_t bad;
} verify_job;

static void *verify_thread(void *arg)
{
	verify_job *j = arg;
	wt_errbuf err;
	j->rv = cache_verify_all(j->c, NULL, NULL, &j->bad, &err);
	return NULL;
}

/* The RAM tier: a commit fills it; a verify empties it (capacity 0 while any
 * verify scans) and several verifies at once restore the configured capacity,
 * not each other's 0. */
static void test_ram_tier_and_verify(void **state)
{
	fx *f = *state;
	f->o.mem_bytes = 64u << 20;
	tc_reopen(f);
	cache_stats st;
	cache_stats_get(f->c, &st);
	assert_int_equal(st.mem_capacity, 64u << 20);
	assert_int_equal(st.mem_used, 0);
	put_shard(f->c, "A", 6, 10);
	cache_stats_get(f->c, &st);
	printf("RAM tier after one commit: %llu bytes\n", (unsigned long long)st.mem_used);
	assert_true(st.mem_used >= 6 * tc_chunk_len(5));
	for (int round = 0; round < 20; round++) {
		verify_job j[3];
		pthread_t th[3];
		for (int i = 0; i < 3; i++) {
			j[i] = (verify_job){.c = f->c, .rv = -1};
			assert_int_equal(pthread_create(&th[i], NULL, verify_thread, &j[i]), 0);
		}
		for (int i = 0; i < 3; i++) {
			pthread_join(th[i], NULL);
			assert_int_equal(j[i].rv, WT_OK);
			assert_int_equal(j[i].bad, 0);
		}
		cache_stats_get(f->c, &st);
		assert_int_equal(st.mem_capacity, 64u << 20);
		assert_int_equal(st.mem_used, 0);
	}
	/* reads still work (from disk) and a new commit fills the tier again */
	uint8_t buf[TC_CHUNK];
	size_t got;
	wt_errbuf err;
	assert_int_equal(cache_read_chunk(f->c, chunk_hash(3, 10), buf, sizeof(buf), &got, &err),
	                 WT_OK);
	put_shard(f->c, "B", 2, 70);
	cache_stats_get(f->c, &st);
	assert_true(st.mem_used > 0);
	f->o.mem_bytes = 0;
	tc_reopen(f);
	cache_stats_get(f->c, &st);
	assert_int_equal(st.mem_capacity, 0);
	assert_int_equal(st.mem_used, 0);
}

/* A damaged shard record is found at open, by verify_all and by cache_shard_open. */
static void test_damaged_record(void **state)
{
	fx *f = *state;
	tc_reopen(f);
	put_shard(f->c, "A", 2, 1);
	put_shard(f->c, "B", 2, 5);
	closec(f);
	tc_raw r;
	assert_int_equal(tc_raw_open(&r, f->dir), 0);
	rocksdb_writeoptions_t *wo = rocksdb_writeoptions_create();
	char *e = NULL;
	const char key[2] = {CACHE_FORMAT, 'A'};
	rocksdb_put_cf(r.db, wo, r.cf[CACHE_CF_MANIFESTS], key, 2, "garbage-record-bytes-xxxxxx-y",
	               29, &e);
	assert_null(e);
	rocksdb_writeoptions_destroy(wo);
	tc_raw_close(&r);
	tc_reopen(f); /* the load drops the damaged record */
	assert_false(cache_has_shard(f->c, "A", 1));
	assert_true(cache_has_shard(f->c, "B", 1));
	cache_stats st;
	cache_stats_get(f->c, &st);
	assert_int_equal(st.corruptions, 1);
	assert_int_equal(st.chunks, 2); /* A's chunks were orphans: swept at open */
}

/* A corrupt chunk read fails with WT_ECORRUPT and evicts the shard, even pinned. */
static void test_corrupt_read(void **state)
{
	fx *f = *state;
	tc_reopen(f);
	put_shard(f->c, "A", 3, 20);
	closec(f);
	wt_hash128 victim = chunk_hash(1, 20);
	uint8_t junk[TC_CHUNK];
	tu_fill(junk, sizeof(junk), 778);
	assert_int_equal(tc_raw_put_chunk(f->dir, victim, junk, 100, false), 0);
	tc_reopen(f);
	wt_errbuf err;
	cache_shard *s = NULL;
	assert_int_equal(cache_shard_open(f->c, "A", 1, &s, &err), WT_OK);
	uint8_t buf[TC_CHUNK];
	size_t got = 0;
	assert_int_equal(
	    cache_read_chunk(f->c, cache_shard_chunk(s, 0, NULL), buf, sizeof(buf), &got, &err),
	    WT_OK);
	assert_int_equal(cache_read_chunk(f->c, victim, buf, sizeof(buf), &got, &err), WT_ECORRUPT);
	char hex[WT_HASH_HEX_LEN + 1];
	common_hash128_hex(victim, hex);
	assert_non_null(strstr(err.msg, hex));
	cache_view *v = NULL;
	assert_int_equal(cache_chunk_view(f->c, victim, &v, &err), WT_ECORRUPT);
	assert_false(cache_has_shard(f->c, "A", 1));
	cache_stats st;
	cache_stats_get(f->c, &st);
	assert_int_equal(st.corruptions, 2);
	assert_int_equal(st.shards, 0);
	/* the producer rebuilds while the old handle is still open: the bad chunk is rewritten */
	put_shard(f->c, "A", 3, 20);
	assert_int_equal(cache_read_chunk(f->c, victim, buf, sizeof(buf), &got, &err), WT_OK);
	cache_shard_close(s);
	cache_stats_get(f->c, &st);
	assert_int_equal(st.chunks, 3);
	assert_int_equal(st.pinned, 0);
	uint64_t bad = 9;
	assert_int_equal(cache_verify_all(f->c, NULL, NULL, &bad, &err), WT_OK);
	assert_int_equal(bad, 0);
	/* read API errors */
	assert_int_equal(cache_read_chunk(f->c, victim, buf, 10, &got, &err), WT_ETOOBIG);
	assert_int_equal(got, tc_chunk_len(1));
	assert_int_equal(cache_read_chunk(f->c, chunk_hash(0, 999), buf, sizeof(buf), &got, &err),
	                 WT_ENOTFOUND);
}

/* Child of test_gc_orphans, run through exec (RocksDB's thread pool does not
 * survive a bare fork): puts 5 chunks of a shard it never commits, commits
 * another shard, and dies with the writer open. */
static int orphan_child(const char *dir)
{
	wt_errbuf err;
	cache_opts o;
	cache_opts_init(&o);
	o.chunk_bytes = TC_CHUNK;
	o.max_bytes = 1u << 20;
	cache *c = NULL;
	if (cache_open(&c, dir, &o, &err) != WT_OK)
		return 2;
	cache_writer *w = NULL;
	if (cache_begin_shard(c, "orphan", 6, &w, &err) != WT_OK)
		return 3;
	uint8_t buf[TC_CHUNK];
	for (int i = 0; i < 5; i++) {
		tu_fill(buf, TC_CHUNK, 300 + (uint64_t)i);
		if (cache_put_chunk(w, buf, TC_CHUNK, NULL, &err) != WT_OK)
			return 4;
	}
	/* the commit's flush makes the orphans' bytes durable too */
	if (tc_put_shard(c, "kept", 2, 900, &err) != WT_OK)
		return 5;
	_exit(0); /* no abort, no close */
}

/* Chunks of a shard that was never committed (the writer died) are swept. */
static void test_gc_orphans(void **state)
{
	fx *f = *state;
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		execl("/proc/self/exe", "test_cache_verify", "--orphan-child", f->dir,
		      (char *)NULL);
		_exit(127);
	}
	int st = 0;
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
	assert_int_equal(tc_raw_count(f->dir, CACHE_CF_CHUNKS), 7);
	f->o.gc_at_open = false;
	tc_reopen(f);
	cache_stats cs;
	cache_stats_get(f->c, &cs);
	assert_int_equal(cs.chunks, 7);
	assert_int_equal(cs.shards, 1);
	uint64_t freed = 0;
	wt_errbuf err;
	assert_int_equal(cache_gc(f->c, &freed, &err), WT_OK);
	assert_int_equal(freed, 5 * TC_CHUNK);
	cache_stats_get(f->c, &cs);
	assert_int_equal(cs.chunks, 2);
	assert_int_equal(cs.bytes, tc_chunk_len(0) + tc_chunk_len(1));
	closec(f);
	assert_int_equal(tc_raw_count(f->dir, CACHE_CF_CHUNKS), 2);

	/* an index entry memory does not know (a raw write) is swept by gc at open */
	uint8_t junk[64];
	tu_fill(junk, sizeof(junk), 5);
	assert_int_equal(tc_raw_put_chunk(f->dir, common_hash128(junk, 64), junk, 64, true), 0);
	assert_int_equal(tc_raw_count(f->dir, CACHE_CF_CHUNKS), 3);
	f->o.gc_at_open = true;
	tc_reopen(f);
	cache_stats_get(f->c, &cs);
	assert_int_equal(cs.chunks, 2);
	closec(f);
	assert_int_equal(tc_raw_count(f->dir, CACHE_CF_CHUNKS), 2);
	tc_reopen(f);
	assert_true(cache_has_shard(f->c, "kept", 4));
}

int main(int argc, char **argv)
{
	if (argc == 3 && strcmp(argv[1], "--orphan-child") == 0)
		return orphan_child(argv[2]);
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_verify_all, setup, tc_teardown),
	    cmocka_unit_test_setup_teardown(test_ram_tier_and_verify, setup, tc_teardown),
	    cmocka_unit_test_setup_teardown(test_damaged_record, setup, tc_teardown),
	    cmocka_unit_test_setup_teardown(test_corrupt_read, setup, tc_teardown),
	    cmocka_unit_test_setup_teardown(test_gc_orphans, setup, tc_teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
