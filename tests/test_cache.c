/* test_cache.c — cache/: round trip, dedupe, LRU budget, pinning, gc, verify, corruption. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <dirent.h>
#include <pthread.h>

#include "tests/test_cache_util.h"

#define CHUNK TC_CHUNK

static int setup(void **state)
{
	return tc_setup(state, "cache");
}

static void put_shard(cache *c, const char *id, size_t n, uint64_t seed)
{
	wt_errbuf err;
	int rv = tc_put_shard(c, id, n, seed, &err);
	if (rv != WT_OK)
		fail_msg("put shard %s: %s", id, err.msg);
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
	tc_reopen(f);
	put_shard(f->c, "shard-a", 5, 100);
	check_shard(f->c, "shard-a", 5, 100);
	cache_stats st;
	cache_stats_get(f->c, &st);
	assert_int_equal(st.shards, 1);
	assert_int_equal(st.chunks, 5);
	assert_int_equal(st.hits, 1);
	assert_int_equal(st.pinned, 0);
	/* durable across reopen */
	tc_reopen(f);
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

/* Nice value of this process's thread named `comm`, or -100 if none. */
static int thread_nice(const char *comm)
{
	char path[300], name[64], stat[1024];
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	while (d != NULL && (e = readdir(d)) != NULL) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%s/comm", e->d_name);
		FILE *f = fopen(path, "r");
		if (f == NULL)
			continue;
		int named =
		    fgets(name, sizeof(name), f) != NULL && strncmp(name, comm, strlen(comm)) == 0;
		fclose(f);
		if (!named)
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%s/stat", e->d_name);
		if ((f = fopen(path, "r")) == NULL)
			continue;
		char *ok = fgets(stat, sizeof(stat), f);
		fclose(f);
		char *rp = ok != NULL ? strrchr(stat, ')') : NULL;
		int nice = -100;
		/* after ")": state ppid pgrp session tty tpgid flags minflt cminflt majflt
		 * cmajflt utime stime cutime cstime priority nice */
		if (rp != NULL && sscanf(rp + 2,
		                         "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u "
		                         "%*u %*d %*d %*d %d",
		                         &nice) == 1) {
			closedir(d);
			return nice;
		}
	}
	if (d != NULL)
		closedir(d);
	return -100;
}

/*
 * cache_put_chunk_hashed stores bytes under the caller's hash without hashing
 * them again; a wrong hash is caught at the first read (WT_ECORRUPT, the shard
 * evicted), never served. And with background_low_cpu (the default) RocksDB's
 * flush thread, which ran for the commit, has the lowest CPU priority.
 */
static void test_put_hashed(void **state)
{
	fx *f = *state;
	tc_reopen(f);
	wt_errbuf err;
	uint8_t a[CHUNK], b[CHUNK];
	tu_fill(a, sizeof(a), 11);
	tu_fill(b, sizeof(b), 12);
	cache_writer *w = NULL;
	assert_int_equal(cache_begin_shard(f->c, "ok", 2, &w, &err), WT_OK);
	assert_int_equal(
	    cache_put_chunk_hashed(w, a, sizeof(a), common_hash128(a, sizeof(a)), &err), WT_OK);
	assert_int_equal(cache_commit_shard(w, "m", 1, &err), WT_OK);
	uint8_t got[CHUNK];
	size_t n = 0;
	assert_int_equal(
	    cache_read_chunk(f->c, common_hash128(a, sizeof(a)), got, sizeof(got), &n, &err),
	    WT_OK);
	assert_int_equal(n, sizeof(a));
	assert_memory_equal(got, a, n);
	/* b stored under a hash that is not its own */
	wt_hash128 lie = common_hash128("not b", 5);
	assert_int_equal(cache_begin_shard(f->c, "bad", 3, &w, &err), WT_OK);
	assert_int_equal(cache_put_chunk_hashed(w, b, sizeof(b), lie, &err), WT_OK);
	assert_int_equal(cache_commit_shard(w, "m", 1, &err), WT_OK);
	assert_int_equal(cache_read_chunk(f->c, lie, got, sizeof(got), &n, &err), WT_ECORRUPT);
	printf("wrong hash: %s\n", err.msg);
	assert_false(cache_has_shard(f->c, "bad", 3));
	assert_true(cache_has_shard(f->c, "ok", 2));
	int nice = thread_nice("rocksdb:high");
	printf("rocksdb:high nice %d\n", nice);
	assert_int_equal(nice, 19);
}

static void test_dedupe(void **state)
{
	fx *f = *state;
	tc_reopen(f);
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

static void test_shard_has_chunk(void **state)
{
	fx *f = *state;
	tc_reopen(f);
	put_shard(f->c, "a", 8, 7);
	put_shard(f->c, "b", 3, 100);
	uint8_t buf[TC_CHUNK];
	tu_fill(buf, tc_chunk_len(5), 7 + 5); /* chunk 5 of "a" */
	wt_hash128 a5 = common_hash128(buf, tc_chunk_len(5));
	tu_fill(buf, tc_chunk_len(2), 100 + 2); /* chunk 2 of "b" */
	wt_hash128 b2 = common_hash128(buf, tc_chunk_len(2));
	assert_true(cache_shard_has_chunk(f->c, "a", 1, a5, NULL));
	uint64_t len = 0;
	assert_true(cache_shard_has_chunk(f->c, "b", 1, b2, &len));
	assert_int_equal(len, tc_chunk_len(2));
	assert_false(cache_shard_has_chunk(f->c, "b", 1, a5, NULL)); /* stored, but not b's */
	assert_false(cache_shard_has_chunk(f->c, "a", 1, b2, NULL));
	assert_false(cache_shard_has_chunk(f->c, "zz", 2, a5, NULL)); /* no such shard */
	wt_errbuf err;
	assert_int_equal(cache_evict(f->c, "a", 1, &err), WT_OK);
	assert_false(cache_shard_has_chunk(f->c, "a", 1, a5, NULL));
}

static void put_named(cache *c, int k)
{
	char id[16];
	snprintf(id, sizeof(id), "s%d", k);
	put_shard(c, id, 3, 1000u * (uint64_t)(k + 1));
}

static bool has_named(cache *c, int k)
{
	char id[16];
	snprintf(id, sizeof(id), "s%d", k);
	return cache_has_shard(c, id, strlen(id));
}

static void touch_named(cache *c, int k)
{
	char id[16];
	snprintf(id, sizeof(id), "s%d", k);
	cache_shard *s = NULL;
	wt_errbuf err;
	assert_int_equal(cache_shard_open(c, id, strlen(id), &s, &err), WT_OK);
	cache_shard_close(s);
}

/* Budget of 40 KiB holds three 3-chunk shards (12285 bytes each), not four. */
static void test_lru_budget(void **state)
{
	fx *f = *state;
	f->o.max_bytes = 40u << 10;
	tc_reopen(f);
	for (int k = 0; k < 6; k++)
		put_named(f->c, k);
	for (int k = 0; k < 6; k++)
		assert_int_equal(has_named(f->c, k), k >= 3);
	cache_stats st;
	cache_stats_get(f->c, &st);
	assert_int_equal(st.evictions, 3);
	assert_true(st.bytes <= st.max_bytes);
	assert_int_equal(st.chunks, 9);
	touch_named(f->c, 3); /* s3 becomes most recent: s4 is now the oldest */
	put_named(f->c, 6);
	assert_true(has_named(f->c, 3));
	assert_false(has_named(f->c, 4));
	assert_true(has_named(f->c, 5));
	/* the LRU order survives a restart: s5 < s3 < s6 */
	tc_reopen(f);
	put_named(f->c, 7);
	assert_false(has_named(f->c, 5));
	assert_true(has_named(f->c, 3));
	assert_true(has_named(f->c, 6));
	assert_true(has_named(f->c, 7));
	check_shard(f->c, "s3", 3, 4000);
	/* a smaller budget at open evicts down to it */
	f->o.max_bytes = 13u << 10;
	tc_reopen(f);
	cache_stats_get(f->c, &st);
	assert_int_equal(st.shards, 1);
	assert_true(has_named(f->c, 7) || has_named(f->c, 3));
}

static void test_pinning(void **state)
{
	fx *f = *state;
	f->o.max_bytes = 40u << 10;
	tc_reopen(f);
	wt_errbuf err;
	put_named(f->c, 0);
	cache_shard *s0 = NULL;
	assert_int_equal(cache_shard_open(f->c, "s0", 2, &s0, &err), WT_OK);
	for (int k = 1; k < 5; k++)
		put_named(f->c, k);
	/* s0 is the least recently used but pinned: s1 and s2 went instead */
	assert_true(has_named(f->c, 0));
	assert_false(has_named(f->c, 1));
	assert_false(has_named(f->c, 2));
	assert_int_equal(cache_evict(f->c, "s0", 2, &err), WT_EBUSY);
	cache_stats st;
	cache_stats_get(f->c, &st);
	assert_int_equal(st.pinned, 1);
	/* the pinned shard's chunks still read */
	uint8_t buf[CHUNK];
	size_t got;
	assert_int_equal(
	    cache_read_chunk(f->c, cache_shard_chunk(s0, 2, NULL), buf, sizeof(buf), &got, &err),
	    WT_OK);
	cache_shard_close(s0);
	put_named(f->c, 5); /* now s0 is evictable and the oldest */
	assert_false(has_named(f->c, 0));
	assert_true(has_named(f->c, 3) && has_named(f->c, 4) && has_named(f->c, 5));
}

static void test_budget_errors(void **state)
{
	fx *f = *state;
	wt_errbuf err;
	cache *c = NULL;
	cache_opts o = f->o;
	o.max_bytes = CHUNK - 1;
	assert_int_equal(cache_open(&c, f->dir, &o, &err), WT_ECONFIG);
	assert_non_null(strstr(err.msg, "max_bytes"));
	o = f->o;
	o.chunk_bytes = 10;
	assert_int_equal(cache_open(&c, f->dir, &o, &err), WT_ECONFIG);
	assert_int_equal(cache_open(&c, "", &f->o, &err), WT_EINVAL);
	/* a shard of 5 distinct chunks does not fit 16 KiB: ENOSPC, nothing left behind */
	f->o.max_bytes = 16u << 10;
	tc_reopen(f);
	assert_int_equal(tc_put_shard(f->c, "big", 5, 1, &err), WT_ENOSPC);
	assert_non_null(strstr(err.msg, "max_bytes"));
	cache_stats st;
	cache_stats_get(f->c, &st);
	assert_int_equal(st.bytes, 0);
	assert_int_equal(st.writers, 0);
	assert_false(cache_has_shard(f->c, "big", 3));
	/* duplicates count once: 8 copies of one chunk fit */
	cache_writer *w = NULL;
	uint8_t buf[CHUNK];
	tu_fill(buf, CHUNK, 5);
	assert_int_equal(cache_begin_shard(f->c, "dups", 4, &w, &err), WT_OK);
	for (int i = 0; i < 8; i++)
		assert_int_equal(cache_put_chunk(w, buf, CHUNK, NULL, &err), WT_OK);
	assert_int_equal(cache_commit_shard(w, "m", 1, &err), WT_OK);
	cache_stats_get(f->c, &st);
	assert_int_equal(st.bytes, CHUNK);
	assert_int_equal(st.chunks, 1);
	/* empty and oversized manifests */
	assert_int_equal(cache_begin_shard(f->c, "x", 1, &w, &err), WT_OK);
	assert_int_equal(cache_commit_shard(w, "", 0, &err), WT_EINVAL);
	assert_int_equal(cache_begin_shard(f->c, NULL, 0, &w, &err), WT_EINVAL);
	cache_stats_get(f->c, &st);
	assert_int_equal(st.writers, 0);
}

/* Two writers and two readers at once under a budget that forces evictions. */
typedef struct conc {
	cache *c;
	int who;
	int errors;
	wt_errbuf first; /* the first error: code and message */
} conc;

static void conc_err(conc *k, int rv, const wt_errbuf *err)
{
	if (k->errors++ == 0) {
		k->first = *err;
		k->first.code = rv;
	}
}

/* After every thread is joined: fail with thread `what`'s first error. */
static void conc_check(const conc *k, const char *what)
{
	if (k->errors != 0)
		fail_msg("%s %d: %d errors, first %s: %s", what, k->who, k->errors,
		         wt_errname(k->first.code), k->first.msg);
}

static void *conc_writer(void *arg)
{
	conc *k = arg;
	wt_errbuf err;
	for (int i = 0; i < 40; i++) {
		char id[32];
		snprintf(id, sizeof(id), "w%d-%d", k->who, i);
		/* seeds overlap between the writers: shared chunks, racing dedupe */
		int rv = tc_put_shard(k->c, id, 4, (uint64_t)(i % 7) * 10, &err);
		if (rv != WT_OK)
			conc_err(k, rv, &err);
	}
	return NULL;
}

static void *conc_reader(void *arg)
{
	conc *k = arg;
	wt_errbuf err;
	uint8_t buf[CHUNK];
	for (int i = 0; i < 400; i++) {
		char id[32];
		snprintf(id, sizeof(id), "w%d-%d", i % 2, (i / 2) % 40);
		cache_shard *s = NULL;
		int rv = cache_shard_open(k->c, id, strlen(id), &s, &err);
		if (rv == WT_ENOTFOUND)
			continue;
		if (rv != WT_OK) {
			conc_err(k, rv, &err);
			continue;
		}
		for (size_t j = 0; j < cache_shard_n_chunks(s); j++) {
			size_t got;
			rv = cache_read_chunk(k->c, cache_shard_chunk(s, j, NULL), buf, sizeof(buf),
			                      &got, &err);
			if (rv != WT_OK)
				conc_err(k, rv, &err);
		}
		cache_shard_close(s);
	}
	return NULL;
}

static void test_concurrent(void **state)
{
	fx *f = *state;
	f->o.max_bytes = 64u << 10;
	tc_reopen(f);
	pthread_t t[4];
	conc k[4];
	for (int i = 0; i < 4; i++) {
		k[i] = (conc){.c = f->c, .who = i % 2};
		assert_int_equal(
		    pthread_create(&t[i], NULL, i < 2 ? conc_writer : conc_reader, &k[i]), 0);
	}
	/* Join all before any assert: a failed assert must not leave threads
	 * running on a cache that teardown closes. */
	for (int i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	for (int i = 0; i < 4; i++)
		conc_check(&k[i], i < 2 ? "writer" : "reader");
	uint64_t bad = 99;
	wt_errbuf err;
	assert_int_equal(cache_verify_all(f->c, NULL, NULL, &bad, &err), WT_OK);
	assert_int_equal(bad, 0);
	cache_stats st;
	cache_stats_get(f->c, &st);
	assert_true(st.bytes <= st.max_bytes);
	assert_true(st.evictions > 0);
	uint64_t freed = 1;
	assert_int_equal(cache_gc(f->c, &freed, &err), WT_OK);
	assert_int_equal(freed, 0); /* refcounts were exact: nothing left to sweep */
}

/* Commits racing the two walks of c->writers made under c->lk by other
 * threads: cache_begin_shard comparing ids (same length, so memcmp runs) and
 * cache_gc marking writer lists. The prober and gc keep c->lk busy until the
 * committers finish, so a commit often waits for the lock. A commit must leave
 * c->writers before its id and list move to the shard entry; handing them over
 * first (while still listed) crashed here. */
typedef struct cwalk {
	conc r; /* r.who 0, 1: committers; 2: begin/abort prober; 3: gc */
	int *stop;
	uint64_t loops;
	uint64_t freed; /* gc: bytes swept (refcounts exact: must stay 0) */
} cwalk;

enum { CWALK_ROUNDS = 50 };

static void cwalk_commit(cwalk *k, int i)
{
	wt_errbuf err;
	uint8_t buf[64];
	char id[16];
	snprintf(id, sizeof(id), "%c-%05d", "ab"[k->r.who], i);
	cache_writer *w = NULL;
	int rv = cache_begin_shard(k->r.c, id, strlen(id), &w, &err);
	if (rv != WT_OK) {
		conc_err(&k->r, rv, &err);
		return;
	}
	for (int j = 0; j < 2; j++) {
		tu_fill(buf, sizeof(buf), (uint64_t)(k->r.who * 100000 + i * 2 + j));
		rv = cache_put_chunk(w, buf, sizeof(buf), NULL, &err);
		if (rv != WT_OK)
			conc_err(&k->r, rv, &err);
	}
	rv = cache_commit_shard(w, "m", 1, &err);
	if (rv != WT_OK)
		conc_err(&k->r, rv, &err);
}

static void *cwalk_main(void *arg)
{
	cwalk *k = arg;
	wt_errbuf err;
	if (k->r.who < 2) {
		for (int i = 0; i < CWALK_ROUNDS; i++)
			cwalk_commit(k, i);
		return NULL;
	}
	while (!__atomic_load_n(k->stop, __ATOMIC_ACQUIRE)) {
		k->loops++;
		int rv;
		if (k->r.who == 3) {
			uint64_t fr = 0;
			rv = cache_gc(k->r.c, &fr, &err);
			if (rv != WT_OK)
				conc_err(&k->r, rv, &err);
			k->freed += fr;
			continue;
		}
		/* never committed, same length as the committers' ids */
		cache_writer *w = NULL;
		rv = cache_begin_shard(k->r.c, "p-00000", 7, &w, &err);
		if (rv != WT_OK)
			conc_err(&k->r, rv, &err);
		else
			cache_abort_shard(w);
	}
	return NULL;
}

static void test_commit_vs_writer_walks(void **state)
{
	fx *f = *state;
	tc_reopen(f);
	int stop = 0;
	pthread_t t[4];
	cwalk k[4];
	for (int i = 0; i < 4; i++) {
		k[i] = (cwalk){.r = {.c = f->c, .who = i}, .stop = &stop};
		assert_int_equal(pthread_create(&t[i], NULL, cwalk_main, &k[i]), 0);
	}
	pthread_join(t[0], NULL);
	pthread_join(t[1], NULL);
	__atomic_store_n(&stop, 1, __ATOMIC_RELEASE);
	pthread_join(t[2], NULL);
	pthread_join(t[3], NULL);
	for (int i = 0; i < 4; i++)
		conc_check(&k[i].r, i < 2 ? "committer" : i == 2 ? "prober" : "gc");
	assert_true(k[2].loops > 0 && k[3].loops > 0);
	assert_int_equal(k[3].freed, 0);
	/* every committed shard is indexed under its own id, with both chunks */
	wt_errbuf err;
	for (int who = 0; who < 2; who++) {
		for (int i = 0; i < CWALK_ROUNDS; i++) {
			char id[16];
			snprintf(id, sizeof(id), "%c-%05d", "ab"[who], i);
			cache_shard *s = NULL;
			assert_int_equal(cache_shard_open(f->c, id, strlen(id), &s, &err), WT_OK);
			assert_int_equal(cache_shard_n_chunks(s), 2);
			cache_shard_close(s);
		}
	}
	cache_stats st;
	cache_stats_get(f->c, &st);
	assert_int_equal(st.shards, 2 * CWALK_ROUNDS);
	assert_int_equal(st.chunks, 4 * CWALK_ROUNDS);
	assert_int_equal(st.writers, 0);
	uint64_t freed = 1;
	assert_int_equal(cache_gc(f->c, &freed, &err), WT_OK);
	assert_int_equal(freed, 0);
}

/* RocksDB failures come back as wt_err codes with a message, never raw. */
static void test_open_errors(void **state)
{
	fx *f = *state;
	tc_reopen(f);
	wt_errbuf err;
	cache *c2 = NULL;
	/* the same directory twice: RocksDB's LOCK */
	assert_int_equal(cache_open(&c2, f->dir, &f->o, &err), WT_EBUSY);
	assert_non_null(strstr(err.msg, "open elsewhere"));
	assert_null(c2);
	/* a path below a regular file cannot be created */
	char *file = tu_path(f->dir, "plain");
	assert_int_equal(tu_write_file(f->dir, "plain", "x", 1), 0);
	char *below = tu_path(file, "db");
	assert_int_equal(cache_open(&c2, below, &f->o, &err), WT_EIO);
	assert_non_null(strstr(err.msg, below));
	free(below);
	free(file);
}

/* The in-memory maps grow (rehash) from 64 buckets to thousands: every entry
 * is found again after each growth, removals and unlinks keep the rest. */
static void test_map_growth(void **state)
{
	(void)state;
	enum { N = 5000 };
	cache_chunk_map cm = {0};
	cache_shard_map sm = {0};
	for (uint64_t i = 0; i < N; i++) {
		cache_chunk_ent *e = calloc(1, sizeof(*e));
		assert_non_null(e);
		e->hash = (wt_hash128){.lo = i * 0x9e3779b97f4a7c15ull, .hi = ~i};
		assert_int_equal(cache_chunk_insert(&cm, e), WT_OK);
		cache_shard_ent *s = calloc(1, sizeof(*s));
		assert_non_null(s);
		s->id_len = sizeof(i);
		s->id = malloc(s->id_len);
		assert_non_null(s->id);
		memcpy(s->id, &i, sizeof(i));
		s->id_hash = cache_id_hash(s->id, s->id_len);
		assert_int_equal(cache_shard_insert(&sm, s), WT_OK);
	}
	assert_true(cm.nb >= N && sm.nb >= N);
	for (uint64_t i = 0; i < N; i++) {
		wt_hash128 h = {.lo = i * 0x9e3779b97f4a7c15ull, .hi = ~i};
		cache_chunk_ent *e = cache_chunk_find(&cm, h);
		assert_non_null(e);
		assert_true(common_hash128_eq(e->hash, h));
		cache_shard_ent *s = cache_shard_find(&sm, &i, sizeof(i));
		assert_non_null(s);
		assert_memory_equal(s->id, &i, sizeof(i));
		if (i % 2) {
			free(cache_chunk_remove(&cm, h));
			cache_shard_unlink(&sm, s);
			cache_shard_ent_free(s);
		}
	}
	for (uint64_t i = 0; i < N; i++) {
		wt_hash128 h = {.lo = i * 0x9e3779b97f4a7c15ull, .hi = ~i};
		assert_int_equal(cache_chunk_find(&cm, h) != NULL, i % 2 == 0);
		assert_int_equal(cache_shard_find(&sm, &i, sizeof(i)) != NULL, i % 2 == 0);
	}
	cache_chunk_map_free(&cm);
	cache_shard_map_free(&sm);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_map_growth),
	    cmocka_unit_test_setup_teardown(test_round_trip, setup, tc_teardown),
	    cmocka_unit_test_setup_teardown(test_put_hashed, setup, tc_teardown),
	    cmocka_unit_test_setup_teardown(test_dedupe, setup, tc_teardown),
	    cmocka_unit_test_setup_teardown(test_shard_has_chunk, setup, tc_teardown),
	    cmocka_unit_test_setup_teardown(test_lru_budget, setup, tc_teardown),
	    cmocka_unit_test_setup_teardown(test_pinning, setup, tc_teardown),
	    cmocka_unit_test_setup_teardown(test_budget_errors, setup, tc_teardown),
	    cmocka_unit_test_setup_teardown(test_concurrent, setup, tc_teardown),
	    cmocka_unit_test_setup_teardown(test_commit_vs_writer_walks, setup, tc_teardown),
	    cmocka_unit_test_setup_teardown(test_open_errors, setup, tc_teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
