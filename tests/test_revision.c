/* test_revision.c — the revision digest (README "Revision digest"): as
 * documented, stable, the bytes and not the names or times; the files hashed
 * several at once; ckpt_open_quick (no digest); progress of a long digest. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <fcntl.h>
#include <openssl/evp.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <xxhash.h>

#include "common/common.h"
#include "loader/loader.h"
#include "tests/util/testutil.h"

#define SEED   777u
#define tiny   tu_tiny_llama
#define N_TINY TU_TINY_LLAMA_N

static void revision_of(const char *dir, char out[65])
{
	store *s;
	ckpt *c = NULL;
	wt_errbuf err;
	int rv = store_open(&s, dir, &err);
	if (rv == WT_OK)
		rv = ckpt_open(&c, s, &err);
	if (rv != WT_OK)
		print_error("%s\n", err.msg);
	assert_int_equal(rv, WT_OK);
	memcpy(out, ckpt_revision(c), 65);
	ckpt_close(c);
	store_close(s);
}

/* The digest as documented (README "Revision digest"), computed
 * independently: XXH3-128 of each whole file with libxxhash, SHA-256 with OpenSSL. */
static void expected_revision(const char *dir, const char *const *keys, size_t n, char out[65])
{
	EVP_MD_CTX *md = EVP_MD_CTX_new();
	EVP_DigestInit_ex(md, EVP_sha256(), NULL);
	EVP_DigestUpdate(md, "weightd-revision-2", sizeof("weightd-revision-2"));
	for (size_t i = 0; i < n; i++) {
		char *p = tu_path(dir, keys[i]);
		size_t len = 0;
		char *bytes = tu_read_file(p, &len);
		assert_non_null(bytes);
		free(p);
		XXH128_hash_t h = XXH3_128bits(bytes, len);
		free(bytes);
		char rec[256];
		int k = snprintf(rec, sizeof(rec), "%s%c%zu%c%016llx%016llx%c", keys[i], 0, len, 0,
		                 (unsigned long long)h.high64, (unsigned long long)h.low64, 0);
		EVP_DigestUpdate(md, rec, (size_t)k);
	}
	unsigned char dig[32];
	EVP_DigestFinal_ex(md, dig, NULL);
	EVP_MD_CTX_free(md);
	for (int i = 0; i < 32; i++)
		snprintf(out + 2 * i, 3, "%02x", dig[i]);
}

static void test_revision(void **state)
{
	(void)state;
	char *dir = tu_mkdtemp("ckr");
	assert_int_equal(tu_write_ckpt(dir, tu_llama_config, tiny, N_TINY, 2, SEED), 0);
	char r1[65], r2[65], want[65];
	revision_of(dir, r1);
	revision_of(dir, r2);
	assert_string_equal(r1, r2); /* stable */
	const char *keys[] = {"config.json", "model-00001-of-00002.safetensors",
	                      "model-00002-of-00002.safetensors", "model.safetensors.index.json"};
	expected_revision(dir, keys, 4, want);
	assert_string_equal(r1, want);

	/* touching a shard does not change it: the revision is the bytes */
	char *shard = tu_path(dir, "model-00002-of-00002.safetensors");
	assert_int_equal(tu_touch(shard, 1000), 0);
	revision_of(dir, r2);
	assert_string_equal(r1, r2);
	/* one byte of tensor data changed, same size, mtime put back: it changes */
	assert_int_equal(tu_flip_last_byte(shard, 0), 0);
	revision_of(dir, r2);
	assert_string_not_equal(r1, r2);
	/* editing config.json (same size, same mtime) changes it */
	char *cfgp = tu_path(dir, "config.json");
	struct stat st;
	assert_int_equal(stat(cfgp, &st), 0);
	char *edited = strdup(tu_llama_config);
	char *pos = strstr(edited, "\"vocab_size\": 128");
	pos[15] = '9'; /* 128 -> 129 */
	assert_int_equal(tu_write_file(dir, "config.json", edited, strlen(edited)), 0);
	struct timespec ts[2] = {st.st_atim, st.st_mtim};
	assert_int_equal(utimensat(AT_FDCWD, cfgp, ts, 0), 0);
	char r3[65];
	revision_of(dir, r3);
	assert_string_not_equal(r2, r3);
	/* restoring the content restores the digest */
	assert_int_equal(
	    tu_write_file(dir, "config.json", tu_llama_config, strlen(tu_llama_config)), 0);
	assert_int_equal(utimensat(AT_FDCWD, cfgp, ts, 0), 0);
	revision_of(dir, r3);
	assert_string_equal(r2, r3);
	free(edited);
	free(cfgp);
	free(shard);
	tu_rmrf(dir);
	free(dir);
}

/* ckpt_open_quick: the same validation and table, no tensor byte read, no
 * revision; a full open of the same store then reads every byte. */
static void test_open_quick(void **state)
{
	(void)state;
	char *dir = tu_mkdtemp("ckq");
	assert_int_equal(tu_write_ckpt(dir, tu_llama_config, tiny, N_TINY, 2, SEED), 0);
	store *s;
	ckpt *c;
	wt_errbuf err;
	assert_int_equal(store_open(&s, dir, &err), WT_OK);
	assert_int_equal(ckpt_open_quick(&c, s, &err), WT_OK);
	uint64_t quick = store_bytes_read(s), total = ckpt_total_bytes(c);
	assert_int_equal(ckpt_n_tensors(c), N_TINY);
	assert_string_equal(ckpt_revision(c), "");
	ckpt_close(c);
	assert_int_equal(ckpt_open(&c, s, &err), WT_OK);
	uint64_t full = store_bytes_read(s) - quick;
	printf("quick open read %llu bytes, full open %llu; tensors %llu bytes\n",
	       (unsigned long long)quick, (unsigned long long)full, (unsigned long long)total);
	assert_true(quick < total / 4);
	assert_true(full >= total + quick);
	assert_int_equal(strlen(ckpt_revision(c)), 64);
	ckpt_close(c);
	store_close(s);
	tu_rmrf(dir);
	free(dir);
}

/* ---- digests of several objects at once ---- */

typedef struct log_cap {
	pthread_mutex_t lk;
	int progress, last;
	double prev_pct; /* percent read in the previous progress line */
	bool monotonic;
	char last_line[300];
} log_cap;

static void cap_log(void *ctx, int level, const char *msg)
{
	log_cap *c = ctx;
	double pct = 0;
	pthread_mutex_lock(&c->lk);
	if (level == WT_LOG_NOTICE && strstr(msg, "content digest (revision):") != NULL &&
	    sscanf(strstr(msg, "revision):") + 10, " %lf%% read", &pct) == 1) {
		c->progress++;
		c->monotonic = c->monotonic && pct >= c->prev_pct && pct <= 100.0;
		c->prev_pct = pct;
	} else if (level == WT_LOG_NOTICE &&
	           strstr(msg, "content digest (revision) done") != NULL) {
		c->last++;
		snprintf(c->last_line, sizeof(c->last_line), "%s", msg);
	}
	pthread_mutex_unlock(&c->lk);
}

/* A digest longer than the progress interval says how far it got, in order,
 * then that it is done; a short one says nothing. */
static void test_digest_progress(void **state)
{
	(void)state;
	char *dir = tu_mkdtemp("ckg");
	assert_int_equal(tu_write_ckpt(dir, tu_llama_config, tiny, N_TINY, 8, SEED), 0);
	log_cap cap = {.monotonic = true};
	pthread_mutex_init(&cap.lk, NULL);
	common_log_set(cap_log, &cap, WT_LOG_NOTICE);
	ckpt_digest_progress_ns(1); /* every block after the first moment */
	char r1[65], r2[65];
	revision_of(dir, r1);
	printf("interval 1 ns: %d progress lines (last at %.1f%%), %d last line: %s\n",
	       cap.progress, cap.prev_pct, cap.last, cap.last_line);
	assert_true(cap.progress >= 1);
	assert_true(cap.monotonic);
	assert_int_equal(cap.last, 1);
	assert_non_null(strstr(cap.last_line, dir));
	cap.progress = cap.last = 0;
	ckpt_digest_progress_ns(30000000000ull); /* the default: a tiny model says nothing */
	revision_of(dir, r2);
	assert_int_equal(cap.progress + cap.last, 0);
	assert_string_equal(r1, r2);
	common_log_set(NULL, NULL, WT_LOG_NOTICE);
	pthread_mutex_destroy(&cap.lk);
	tu_rmrf(dir);
	free(dir);
}

/* A memo that knows nothing. get: the first caller waits (up to 5 s) for a
 * caller on another thread, so a digest that hashes one object at a time is
 * seen as such; or, in truncate mode, cuts the object named victim to half
 * its size (through the folder) before the pinned read starts. */
typedef struct par_memo {
	pthread_mutex_t lk;
	pthread_cond_t cv;
	const char *dir, *victim; /* victim: NULL = barrier mode */
	pthread_t first;
	int gets, puts;
	bool have_first, overlapped, waited_out;
} par_memo;

static bool par_get(void *ctx, const char *uri, const store_obj *o, wt_hash128 *out, uint64_t head,
                    uint32_t bb, wt_hash128 *blocks, size_t nb)
{
	(void)bb;
	(void)head;
	(void)blocks;
	(void)nb;
	(void)uri;
	(void)out;
	par_memo *m = ctx;
	pthread_mutex_lock(&m->lk);
	m->gets++;
	if (m->victim != NULL) {
		if (strcmp(o->key, m->victim) == 0) {
			char *p = tu_path(m->dir, o->key);
			assert_int_equal(truncate(p, (off_t)(o->nbytes / 2)), 0);
			free(p);
		}
	} else if (!m->have_first) {
		m->have_first = true;
		m->first = pthread_self();
		struct timespec dl;
		clock_gettime(CLOCK_REALTIME, &dl);
		dl.tv_sec += 5;
		while (!m->overlapped && pthread_cond_timedwait(&m->cv, &m->lk, &dl) == 0) {
		}
		m->waited_out = !m->overlapped;
	} else if (!pthread_equal(pthread_self(), m->first) && !m->overlapped) {
		m->overlapped = true;
		pthread_cond_broadcast(&m->cv);
	}
	pthread_mutex_unlock(&m->lk);
	return false;
}

static void par_put(void *ctx, const char *uri, const store_obj *o, wt_hash128 d, uint64_t head,
                    uint32_t bb, const wt_hash128 *blocks, size_t nb)
{
	(void)bb;
	(void)head;
	(void)blocks;
	(void)nb;
	(void)uri;
	(void)o;
	(void)d;
	par_memo *m = ctx;
	pthread_mutex_lock(&m->lk);
	m->puts++;
	pthread_mutex_unlock(&m->lk);
}

/* Eight shards (one tensor each): hashed several at a time (a second thread hashes while the
 * first is inside its object), each digest in its object's place (the
 * revision as documented), every digest remembered once; then one shard cut
 * short while it is hashed: the open fails naming that shard, whatever the
 * other threads were doing. */
static void test_revision_parallel(void **state)
{
	(void)state;
	char *dir = tu_mkdtemp("ckp");
	assert_int_equal(tu_write_ckpt(dir, tu_llama_config, tiny, N_TINY, 8, SEED), 0);
	char keys[10][64];
	const char *kp[10];
	snprintf(keys[0], sizeof(keys[0]), "config.json");
	for (size_t k = 1; k <= 8; k++)
		tu_shard_name(keys[k], sizeof(keys[k]), k, 8);
	snprintf(keys[9], sizeof(keys[9]), "model.safetensors.index.json");
	for (int i = 0; i < 10; i++)
		kp[i] = keys[i];
	char want[65];
	expected_revision(dir, kp, 10, want);

	par_memo m = {.dir = dir};
	pthread_mutex_init(&m.lk, NULL);
	pthread_cond_init(&m.cv, NULL);
	ckpt_memo memo = {.get = par_get, .put = par_put, .ctx = &m};
	store *s;
	ckpt *c;
	wt_errbuf err;
	assert_int_equal(store_open(&s, dir, &err), WT_OK);
	int rv = ckpt_open_memo(&c, s, &memo, &err);
	if (rv != WT_OK)
		print_error("%s\n", err.msg);
	assert_int_equal(rv, WT_OK);
	assert_string_equal(ckpt_revision(c), want);
	printf("8 shards: %d lookups, %d digests remembered, overlapped %d\n", m.gets, m.puts,
	       m.overlapped);
	assert_true(m.overlapped && !m.waited_out);
	assert_int_equal(m.gets, 8);
	assert_int_equal(m.puts, 8);
	ckpt_close(c);

	m.victim = keys[3];
	m.gets = m.puts = 0;
	rv = ckpt_open_memo(&c, s, &memo, &err);
	printf("shard 3 cut short: %s\n", err.msg);
	assert_int_not_equal(rv, WT_OK);
	assert_null(c);
	assert_non_null(strstr(err.msg, keys[3]));
	assert_true(m.puts < 8);
	store_close(s);
	pthread_cond_destroy(&m.cv);
	pthread_mutex_destroy(&m.lk);
	tu_rmrf(dir);
	free(dir);
}

/* A memo that knows every object (any digest), and sets cancel on its
 * n-th lookup when cancel_at > 0. */
typedef struct know_memo {
	ckpt_progress *p;
	_Atomic int gets;
	int cancel_at;
} know_memo;

static bool know_get(void *ctx, const char *uri, const store_obj *o, wt_hash128 *out, uint64_t head,
                     uint32_t bb, wt_hash128 *blocks, size_t nb)
{
	(void)bb;
	(void)head;
	(void)blocks;
	(void)nb;
	(void)uri;
	(void)o;
	know_memo *m = ctx;
	int n = atomic_fetch_add(&m->gets, 1) + 1;
	if (m->cancel_at > 0) {
		if (n == m->cancel_at)
			atomic_store(&m->p->cancel, true);
		return false;
	}
	*out = (wt_hash128){0};
	memset(blocks, 0, nb * sizeof(*blocks));
	return true;
}

static void know_put(void *ctx, const char *uri, const store_obj *o, wt_hash128 d, uint64_t head,
                     uint32_t bb, const wt_hash128 *blocks, size_t nb)
{
	(void)bb;
	(void)head;
	(void)blocks;
	(void)nb;
	(void)ctx;
	(void)uri;
	(void)o;
	(void)d;
}

/* ckpt_open_progress: total is the safetensors bytes and done reaches it,
 * whether read or known to the memo; a cancel before or during the open
 * fails it with WT_ECANCELED and no ckpt. */
static void test_open_progress(void **state)
{
	(void)state;
	char *dir = tu_mkdtemp("ckr");
	assert_int_equal(tu_write_ckpt(dir, tu_llama_config, tiny, N_TINY, 8, SEED), 0);
	uint64_t want = 0;
	for (size_t k = 1; k <= 8; k++) {
		char key[64];
		tu_shard_name(key, sizeof(key), k, 8);
		char *p = tu_path(dir, key);
		struct stat sb;
		assert_int_equal(stat(p, &sb), 0);
		want += (uint64_t)sb.st_size;
		free(p);
	}
	store *s;
	ckpt *c = NULL;
	wt_errbuf err;
	assert_int_equal(store_open(&s, dir, &err), WT_OK);
	ckpt_progress p = {0};
	assert_int_equal(ckpt_open_progress(&c, s, NULL, &p, &err), WT_OK);
	printf("read: %llu of %llu bytes (files %llu)\n", (unsigned long long)atomic_load(&p.done),
	       (unsigned long long)atomic_load(&p.total), (unsigned long long)want);
	assert_int_equal(atomic_load(&p.total), want);
	assert_int_equal(atomic_load(&p.done), want);
	ckpt_close(c);

	know_memo km = {.p = &p};
	ckpt_memo memo = {.get = know_get, .put = know_put, .ctx = &km};
	p = (ckpt_progress){0};
	assert_int_equal(ckpt_open_progress(&c, s, &memo, &p, &err), WT_OK);
	assert_int_equal(atomic_load(&km.gets), 8);
	assert_int_equal(atomic_load(&p.done), want); /* known counts as read */
	ckpt_close(c);

	p = (ckpt_progress){0};
	atomic_store(&p.cancel, true);
	int rv = ckpt_open_progress(&c, s, NULL, &p, &err);
	printf("canceled before: %s\n", err.msg);
	assert_int_equal(rv, WT_ECANCELED);
	assert_null(c);
	assert_non_null(strstr(err.msg, "canceled"));

	p = (ckpt_progress){0};
	km = (know_memo){.p = &p, .cancel_at = 3};
	rv = ckpt_open_progress(&c, s, &memo, &p, &err);
	printf("canceled at the 3rd object: %s (%llu of %llu read)\n", err.msg,
	       (unsigned long long)atomic_load(&p.done), (unsigned long long)want);
	assert_int_equal(rv, WT_ECANCELED);
	assert_null(c);
	assert_true(atomic_load(&p.done) < want);
	store_close(s);
	tu_rmrf(dir);
	free(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_revision),        cmocka_unit_test(test_revision_parallel),
	    cmocka_unit_test(test_open_quick),      cmocka_unit_test(test_open_progress),
	    cmocka_unit_test(test_digest_progress),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
