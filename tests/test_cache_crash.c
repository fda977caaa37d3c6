/*
 * test_cache_crash.c — a writer process is killed with SIGKILL at random points
 * (fixed, printed seeds); after each kill the store is reopened and every
 * visible shard must be complete: each listed chunk present, matching its hash
 * and the bytes the manifest says it holds; no orphaned chunk survives the
 * sweep at open. The child is exec'd (RocksDB's thread pool does not survive
 * a bare fork).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "tests/test_cache_util.h"

#define N_KILLS   24
#define BASE_SEED 0x5eed0000ull
#define POOL      16 /* shared chunk contents (dedupe across shards) */

static cache_opts crash_opts(void)
{
	cache_opts o;
	cache_opts_init(&o);
	o.chunk_bytes = TC_CHUNK;
	o.max_bytes = 256u << 10; /* small: the child also evicts */
	return o;
}

/* Manifest text: "<n>;<content seed>,<len>;..." — enough to regenerate every chunk. */
static int child(const char *dir, uint64_t seed, int ready_fd)
{
	wt_errbuf err;
	cache_opts o = crash_opts();
	cache *c = NULL;
	if (cache_open(&c, dir, &o, &err) != WT_OK) {
		fprintf(stderr, "child open: %s\n", err.msg);
		return 2;
	}
	if (write(ready_fd, "r", 1) != 1)
		return 3;
	uint64_t r = seed;
	uint8_t buf[TC_CHUNK];
	for (uint64_t k = 0;; k++) {
		char id[64], man[1024];
		snprintf(id, sizeof(id), "s%llx-%llu", (unsigned long long)seed,
		         (unsigned long long)k);
		size_t n = 1 + tu_splitmix64(&r) % 8;
		int ml = snprintf(man, sizeof(man), "%zu", n);
		cache_writer *w = NULL;
		if (cache_begin_shard(c, id, strlen(id), &w, &err) != WT_OK)
			return 4;
		for (size_t i = 0; i < n; i++) {
			uint64_t cs, len;
			if (tu_splitmix64(&r) % 2) {
				cs = tu_splitmix64(&r) % POOL;
				len = 512 + cs * 200;
			} else {
				cs = tu_splitmix64(&r);
				len = 1 + tu_splitmix64(&r) % TC_CHUNK;
			}
			tu_fill(buf, len, cs);
			if (cache_put_chunk(w, buf, len, NULL, &err) != WT_OK) {
				fprintf(stderr, "child put: %s\n", err.msg);
				return 5;
			}
			ml += snprintf(man + ml, sizeof(man) - (size_t)ml, ";%llu,%llu",
			               (unsigned long long)cs, (unsigned long long)len);
		}
		uint64_t what = tu_splitmix64(&r) % 10;
		if (what == 0) {
			cache_abort_shard(w);
		} else if (cache_commit_shard(w, man, (size_t)ml, &err) != WT_OK) {
			fprintf(stderr, "child commit: %s\n", err.msg);
			return 6;
		}
		if (what == 1 && k > 0) {
			snprintf(id, sizeof(id), "s%llx-%llu", (unsigned long long)seed,
			         (unsigned long long)(tu_splitmix64(&r) % k));
			(void)cache_evict(c, id, strlen(id), &err); /* may be gone already */
		}
	}
}

typedef struct ids {
	char **v;
	size_t n;
} ids;

static void collect(void *ctx, const cache_shard_info *info)
{
	ids *l = ctx;
	char *s = malloc(info->id_len + 1);
	char **v = realloc(l->v, (l->n + 1) * sizeof(*v));
	if (s == NULL || v == NULL) {
		free(s);
		return;
	}
	memcpy(s, info->id, info->id_len);
	s[info->id_len] = '\0';
	l->v = v;
	l->v[l->n++] = s;
}

static int cmp_hash(const void *a, const void *b)
{
	const wt_hash128 *x = a, *y = b;
	if (x->hi != y->hi)
		return x->hi < y->hi ? -1 : 1;
	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* Check one visible shard against its manifest; appends its chunk hashes to hs. */
static void check_shard(cache *c, const char *id, wt_hash128 **hs, size_t *nh)
{
	wt_errbuf err;
	cache_shard *s = NULL;
	int rv = cache_shard_open(c, id, strlen(id), &s, &err);
	if (rv != WT_OK)
		fail_msg("shard %s listed but does not open: %s", id, err.msg);
	size_t ml;
	const char *m = cache_shard_manifest(s, &ml);
	char text[1024];
	assert_true(ml < sizeof(text));
	memcpy(text, m, ml);
	text[ml] = '\0';
	char *p = text;
	size_t n = strtoull(p, &p, 10);
	assert_int_equal(cache_shard_n_chunks(s), n);
	uint8_t want[TC_CHUNK], got[TC_CHUNK];
	for (size_t i = 0; i < n; i++) {
		assert_int_equal(*p, ';');
		uint64_t cs = strtoull(p + 1, &p, 10);
		assert_int_equal(*p, ',');
		uint64_t len = strtoull(p + 1, &p, 10);
		tu_fill(want, len, cs);
		uint64_t nb;
		wt_hash128 h = cache_shard_chunk(s, i, &nb);
		assert_int_equal(nb, len);
		assert_true(common_hash128_eq(h, common_hash128(want, len)));
		size_t gl = 0;
		rv = cache_read_chunk(c, h, got, sizeof(got), &gl, &err);
		if (rv != WT_OK)
			fail_msg("shard %s chunk %zu: %s", id, i, err.msg);
		assert_int_equal(gl, len);
		assert_memory_equal(got, want, len);
		wt_hash128 *nv = realloc(*hs, (*nh + 1) * sizeof(*nv));
		assert_non_null(nv);
		*hs = nv;
		(*hs)[(*nh)++] = h;
	}
	cache_shard_close(s);
}

static uint64_t check_store(const char *dir)
{
	wt_errbuf err;
	cache_opts o = crash_opts();
	cache *c = NULL;
	int rv = cache_open(&c, dir, &o, &err);
	if (rv != WT_OK)
		fail_msg("reopen after kill: %s", err.msg);
	ids l = {0};
	cache_list(c, collect, &l);
	wt_hash128 *hs = NULL;
	size_t nh = 0;
	for (size_t i = 0; i < l.n; i++)
		check_shard(c, l.v[i], &hs, &nh);
	/* orphans swept: the store holds exactly the distinct listed chunks */
	size_t distinct = 0;
	if (nh > 0) {
		qsort(hs, nh, sizeof(*hs), cmp_hash);
		distinct = 1;
		for (size_t i = 1; i < nh; i++)
			distinct += !common_hash128_eq(hs[i], hs[i - 1]);
	}
	cache_stats st;
	cache_stats_get(c, &st);
	assert_int_equal(st.chunks, distinct);
	assert_int_equal(st.shards, l.n);
	uint64_t bad = 9;
	assert_int_equal(cache_verify_all(c, NULL, NULL, &bad, &err), WT_OK);
	assert_int_equal(bad, 0);
	cache_close(c);
	for (size_t i = 0; i < l.n; i++)
		free(l.v[i]);
	free(l.v);
	free(hs);
	return l.n;
}

static void test_kill_writer(void **state)
{
	(void)state;
	char *dir = tu_mkdtemp("cachecrash");
	assert_non_null(dir);
	uint64_t r = BASE_SEED, seen = 0;
	printf("crash test: base seed 0x%llx, %d kills\n", (unsigned long long)BASE_SEED, N_KILLS);
	for (int i = 0; i < N_KILLS; i++) {
		uint64_t seed = BASE_SEED + (uint64_t)i;
		int pfd[2];
		assert_int_equal(pipe(pfd), 0);
		pid_t pid = fork();
		assert_true(pid >= 0);
		if (pid == 0) {
			char s_seed[32], s_fd[16];
			snprintf(s_seed, sizeof(s_seed), "%llu", (unsigned long long)seed);
			snprintf(s_fd, sizeof(s_fd), "%d", pfd[1]);
			close(pfd[0]);
			execl("/proc/self/exe", "test_cache_crash", "--child", dir, s_seed, s_fd,
			      (char *)NULL);
			_exit(127);
		}
		close(pfd[1]);
		/* every 6th kill lands during open/recovery; the others mid-writing */
		bool early = i % 6 == 5;
		char b;
		if (!early && read(pfd[0], &b, 1) != 1)
			fail_msg("child (seed %llu) died before it was ready",
			         (unsigned long long)seed);
		uint64_t delay_us =
		    early ? tu_splitmix64(&r) % 20000 : 2000 + tu_splitmix64(&r) % 60000;
		usleep((useconds_t)delay_us);
		kill(pid, SIGKILL);
		int st = 0;
		assert_int_equal(waitpid(pid, &st, 0), pid);
		close(pfd[0]);
		if (!WIFSIGNALED(st))
			fail_msg("child (seed %llu) exited with %d before the kill",
			         (unsigned long long)seed, WEXITSTATUS(st));
		uint64_t n = check_store(dir);
		printf("kill %2d: seed %llu after %llu us: %llu shards visible, all complete\n", i,
		       (unsigned long long)seed, (unsigned long long)delay_us,
		       (unsigned long long)n);
		seen += n;
	}
	assert_true(seen > 0); /* the children did commit shards */
	tu_rmrf(dir);
	free(dir);
}

int main(int argc, char **argv)
{
	if (argc == 5 && strcmp(argv[1], "--child") == 0)
		return child(argv[2], strtoull(argv[3], NULL, 10), (int)strtol(argv[4], NULL, 10));
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_kill_writer),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
