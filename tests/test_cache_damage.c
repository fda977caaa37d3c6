/*
 * test_cache_damage.c — damage the cache finds in its own files is handled as
 * damage (cache/README.md "Reads"), never as something else:
 *   - RocksDB's "Corruption: block checksum mismatch" is WT_ECORRUPT (its
 *     "block" once made it "open elsewhere", WT_EBUSY, which clients retry
 *     forever), and a chunk read that meets it evicts the shards listing it;
 *   - an indexed, listed chunk whose bytes are gone is WT_ECORRUPT and evicts
 *     them (it was WT_ENOTFOUND, the shard listed for good);
 *   - a chunk left by a crash before its shard committed (index entry through
 *     the WAL, bytes lost) is written again by the next put of the same bytes
 *     when gc_at_open is off (it was counted as stored: a committed shard
 *     with a chunk that could never be read);
 *   - a damaged chunk-index size (not checksummed) is taken from the shard's
 *     record (checksummed), instead of wiping the cache through the budget;
 *   - a damaged LRU clock cannot wrap the clock and invert the LRU order.
 * Damage is planted with raw RocksDB on the closed store.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <dirent.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "test_cache_util.h"

static int setup(void **state)
{
	return tc_setup(state, "cdamage");
}

/* Put (val != NULL) or delete key in column family cf of the closed store in dir. */
static void raw_write(const char *dir, int cf, const void *key, size_t klen, const void *val,
                      size_t vlen)
{
	tc_raw r;
	assert_int_equal(tc_raw_open(&r, dir), 0);
	rocksdb_writeoptions_t *wo = rocksdb_writeoptions_create();
	rocksdb_writeoptions_set_sync(wo, 1);
	char *e = NULL;
	if (val != NULL)
		rocksdb_put_cf(r.db, wo, r.cf[cf], key, klen, val, vlen, &e);
	else
		rocksdb_delete_cf(r.db, wo, r.cf[cf], key, klen, &e);
	rocksdb_writeoptions_destroy(wo);
	tc_raw_close(&r);
	assert_null(e);
}

/* Hashes of shard id's chunks (n of them). */
static void shard_hashes(cache *c, const char *id, size_t n, wt_hash128 *h)
{
	cache_shard *s = NULL;
	wt_errbuf err;
	assert_int_equal(cache_shard_open(c, id, strlen(id), &s, &err), WT_OK);
	assert_int_equal(cache_shard_n_chunks(s), n);
	for (size_t i = 0; i < n; i++)
		h[i] = cache_shard_chunk(s, i, NULL);
	cache_shard_close(s);
}

static void test_error_text(void **state)
{
	(void)state;
	static const struct {
		const char *text;
		int code;
	} cases[] = {
	    {"Corruption: block checksum mismatch: stored = 1, computed = 2  in /d/000012.sst "
	     "offset 0 size 4101",
	     WT_ECORRUPT},
	    {"Corruption: bad block contents", WT_ECORRUPT},
	    {"IO error: While lock file: /d/LOCK: Resource temporarily unavailable", WT_EBUSY},
	    {"IO error: lock hold by current process, acquire time 1 acquiring thread 2: /d/LOCK: "
	     "No locks available",
	     WT_EBUSY},
	    {"IO error: No space left on device", WT_ENOSPC},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		wt_errbuf err;
		int rv = cache_rocks_err(NULL, strdup(cases[i].text), "read", &err);
		printf("%s -> %s: %s\n", cases[i].text, wt_errname(rv), err.msg);
		assert_int_equal(rv, cases[i].code);
	}
}

/* One bit flipped in the chunk store's SST (values kept in SST files, RocksDB
 * verifying reads): the read that meets it is WT_ECORRUPT and the shard goes. */
static void test_sst_checksum(void **state)
{
	fx *f = *state;
	f->o.store = CACHE_STORE_SST;
	f->o.rocks_verify = true;
	f->o.mem_bytes = 0;
	tc_reopen(f);
	wt_errbuf err;
	assert_int_equal(tc_put_shard(f->c, "S", 4, 11, &err), WT_OK);
	wt_hash128 h[4];
	shard_hashes(f->c, "S", 4, h);
	cache_close(f->c);
	f->c = NULL;
	/* the largest .sst holds the chunks */
	DIR *d = opendir(f->dir);
	assert_non_null(d);
	char big[1200] = "";
	off_t bigsz = 0;
	struct dirent *de;
	while ((de = readdir(d)) != NULL) {
		size_t l = strlen(de->d_name);
		char p[1200];
		struct stat st;
		snprintf(p, sizeof(p), "%s/%s", f->dir, de->d_name);
		if (l > 4 && strcmp(de->d_name + l - 4, ".sst") == 0 && stat(p, &st) == 0 &&
		    st.st_size > bigsz) {
			bigsz = st.st_size;
			snprintf(big, sizeof(big), "%s", p);
		}
	}
	closedir(d);
	assert_true(bigsz > 4 * 4000);
	FILE *fp = fopen(big, "r+b");
	assert_non_null(fp);
	assert_int_equal(fseek(fp, 100, SEEK_SET), 0);
	int ch = fgetc(fp);
	assert_int_equal(fseek(fp, 100, SEEK_SET), 0);
	fputc(ch ^ 1, fp);
	fclose(fp);
	tc_reopen(f);
	int corrupt = 0, busy = 0;
	uint8_t buf[TC_CHUNK];
	for (int i = 0; i < 4; i++) {
		size_t got;
		int rv = cache_read_chunk(f->c, h[i], buf, sizeof(buf), &got, &err);
		printf("chunk %d: %s%s%s\n", i, wt_errname(rv), rv ? ": " : "", rv ? err.msg : "");
		corrupt += rv == WT_ECORRUPT;
		busy += rv == WT_EBUSY;
	}
	cache_stats s;
	cache_stats_get(f->c, &s);
	assert_int_equal(busy, 0);
	assert_true(corrupt >= 1);
	assert_false(cache_has_shard(f->c, "S", 1));
	assert_true(s.corruptions >= 1);
}

/* A listed chunk whose bytes are gone from the store. */
static void test_missing_bytes(void **state)
{
	fx *f = *state;
	tc_reopen(f);
	wt_errbuf err;
	assert_int_equal(tc_put_shard(f->c, "S", 2, 21, &err), WT_OK);
	wt_hash128 h[2];
	shard_hashes(f->c, "S", 2, h);
	cache_close(f->c);
	f->c = NULL;
	uint8_t k[16];
	common_hash128_to_bytes(h[0], k);
	raw_write(f->dir, CACHE_CF_CHUNKS, k, 16, NULL, 0);
	tc_reopen(f);
	assert_true(cache_has_shard(f->c, "S", 1));
	uint8_t buf[TC_CHUNK];
	size_t got;
	int rv = cache_read_chunk(f->c, h[0], buf, sizeof(buf), &got, &err);
	printf("read of a listed chunk without its bytes: %s: %s\n", wt_errname(rv), err.msg);
	assert_int_equal(rv, WT_ECORRUPT);
	assert_false(cache_has_shard(f->c, "S", 1));
	/* the next writer of those bytes stores them again */
	assert_int_equal(tc_put_shard(f->c, "S", 2, 21, &err), WT_OK);
	assert_int_equal(cache_read_chunk(f->c, h[0], buf, sizeof(buf), &got, &err), WT_OK);
}

/* A crash after a chunk's index entry (WAL) but before its bytes (no WAL)
 * reached the disk; gc_at_open off, so the entry stays. */
static void test_crash_orphan_no_gc(void **state)
{
	fx *f = *state;
	pid_t p = fork();
	assert_true(p >= 0);
	if (p == 0) {
		cache *c = NULL;
		wt_errbuf err;
		cache_writer *w = NULL;
		uint8_t buf[TC_CHUNK];
		tu_fill(buf, tc_chunk_len(0), 31);
		if (cache_open(&c, f->dir, &f->o, &err) != WT_OK ||
		    cache_begin_shard(c, "dead", 4, &w, &err) != WT_OK ||
		    cache_put_chunk(w, buf, tc_chunk_len(0), NULL, &err) != WT_OK)
			_exit(1);
		_exit(0); /* no close, no commit: a crash */
	}
	int st;
	assert_int_equal(waitpid(p, &st, 0), p);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	f->o.gc_at_open = false;
	tc_reopen(f);
	wt_errbuf err;
	assert_int_equal(tc_put_shard(f->c, "S", 1, 31, &err), WT_OK);
	wt_hash128 h;
	shard_hashes(f->c, "S", 1, &h);
	uint8_t buf[TC_CHUNK], want[TC_CHUNK];
	size_t got;
	int rv = cache_read_chunk(f->c, h, buf, sizeof(buf), &got, &err);
	printf("a shard committed over a crash's orphan chunk: read %s%s%s\n", wt_errname(rv),
	       rv ? ": " : "", rv ? err.msg : "");
	assert_int_equal(rv, WT_OK);
	tu_fill(want, tc_chunk_len(0), 31);
	assert_int_equal(got, tc_chunk_len(0));
	assert_memory_equal(buf, want, got);
}

/* A chunk-index size of 2^63 (the index is not checksummed; records are). */
static void test_index_size(void **state)
{
	fx *f = *state;
	tc_reopen(f);
	wt_errbuf err;
	char id[16];
	uint64_t want = 0;
	for (int i = 0; i < 8; i++) {
		snprintf(id, sizeof(id), "S%d", i);
		assert_int_equal(tc_put_shard(f->c, id, 4, 100 + 10 * (uint64_t)i, &err), WT_OK);
		for (size_t k = 0; k < 4; k++)
			want += tc_chunk_len(k);
	}
	wt_hash128 h[4];
	shard_hashes(f->c, "S7", 4, h);
	cache_close(f->c);
	f->c = NULL;
	uint8_t k[17], v[8];
	k[0] = 'k';
	common_hash128_to_bytes(h[0], k + 1);
	cache_put_u64le(v, 1ull << 63);
	raw_write(f->dir, CACHE_CF_META, k, 17, v, 8);
	tc_reopen(f);
	cache_stats s;
	cache_stats_get(f->c, &s);
	printf("index size 2^63 planted: %llu shards, %llu bytes (want %llu), %llu evictions, "
	       "%llu corruptions\n",
	       (unsigned long long)s.shards, (unsigned long long)s.bytes, (unsigned long long)want,
	       (unsigned long long)s.evictions, (unsigned long long)s.corruptions);
	assert_int_equal(s.shards, 8);
	assert_int_equal(s.bytes, want);
	assert_int_equal(s.evictions, 0);
	assert_int_equal(s.corruptions, 1);
	/* the corrected size was written back: a second open finds nothing wrong */
	tc_reopen(f);
	cache_stats_get(f->c, &s);
	assert_int_equal(s.bytes, want);
	assert_int_equal(s.corruptions, 0);
}

/* An LRU clock of UINT64_MAX on the oldest shard. */
static void test_lru_clock(void **state)
{
	fx *f = *state;
	f->o.max_bytes = 64u << 10; /* four shards of four chunks */
	f->o.mem_bytes = 0;
	tc_reopen(f);
	wt_errbuf err;
	assert_int_equal(tc_put_shard(f->c, "OLD", 4, 200, &err), WT_OK);
	assert_int_equal(tc_put_shard(f->c, "MID", 4, 210, &err), WT_OK);
	cache_close(f->c);
	f->c = NULL;
	uint8_t v[8];
	cache_put_u64le(v, UINT64_MAX);
	raw_write(f->dir, CACHE_CF_META, "uOLD", 4, v, 8);
	tc_reopen(f);
	char id[16];
	for (int i = 0; i < 4; i++) {
		snprintf(id, sizeof(id), "N%d", i);
		assert_int_equal(tc_put_shard(f->c, id, 4, 300 + 10 * (uint64_t)i, &err), WT_OK);
	}
	printf("after 4 new shards in a budget of 4: OLD %d MID %d N0 %d N1 %d N2 %d N3 %d\n",
	       cache_has_shard(f->c, "OLD", 3), cache_has_shard(f->c, "MID", 3),
	       cache_has_shard(f->c, "N0", 2), cache_has_shard(f->c, "N1", 2),
	       cache_has_shard(f->c, "N2", 2), cache_has_shard(f->c, "N3", 2));
	for (int i = 0; i < 4; i++) {
		snprintf(id, sizeof(id), "N%d", i);
		assert_true(cache_has_shard(f->c, id, 2));
	}
	assert_false(cache_has_shard(f->c, "OLD", 3));
	assert_false(cache_has_shard(f->c, "MID", 3));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_error_text),
	    cmocka_unit_test_setup_teardown(test_sst_checksum, setup, tc_teardown),
	    cmocka_unit_test_setup_teardown(test_missing_bytes, setup, tc_teardown),
	    cmocka_unit_test_setup_teardown(test_crash_orphan_no_gc, setup, tc_teardown),
	    cmocka_unit_test_setup_teardown(test_index_size, setup, tc_teardown),
	    cmocka_unit_test_setup_teardown(test_lru_clock, setup, tc_teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
