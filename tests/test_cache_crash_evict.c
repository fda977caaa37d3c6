/*
 * test_cache_crash_evict.c — a process evicting or reclaiming is killed with
 * SIGKILL at every step of the operation's crash ordering, and the store is
 * reopened and checked.
 *
 * Crash ordering (cache/evict.c, cache/reclaim.c; c->step_hook points):
 *   eviction: one write batch (WAL, not synced) deletes the record, the LRU
 *     entry and every chunk whose refcount reached 0 (value + index entry):
 *     EVICT_WRITE (built, not written) -> EVICT_DONE (written).
 *   eviction of a pinned shard (a chunk failed its hash): the batch deletes
 *     the record and LRU entry only (EVICT_*); the last unpin deletes the dead
 *     chunks in a second batch (cache_unref_locked: UNREF_WRITE -> UNREF_DONE).
 *     Between the two the chunks are orphans: swept by gc_at_open.
 *   reclaim: RECLAIM_BEGIN -> pass 1 (index compaction) -> RECLAIM_PASS1 ->
 *     blob GC on -> RECLAIM_GC_ON -> pass 2 (relocation) -> RECLAIM_PASS2 ->
 *     GC off -> RECLAIM_GC_OFF. Kills also land inside each compaction: at the
 *     creation of its first new .sst (pass 1) or .blob (pass 2) file, seen
 *     through inotify.
 *
 * The child (exec'd: RocksDB's thread pool does not survive a bare fork)
 * opens a copy of a prepared store, installs the hook, reports each step on a
 * pipe and raise(SIGKILL)s itself at step k; a dry run (no kill) records the
 * sequence, then k runs over every step. After each kill the parent reopens
 * the store and checks: every shard not being evicted reads back byte-equal
 * with verified hashes; each shard being evicted is wholly there (every chunk
 * reads back) or wholly gone, exactly as far as the sequence got; no record
 * was dropped as incomplete at open; cache_verify_all finds nothing; the
 * stats (bytes, chunks, shards) equal what the visible shards list, and the
 * raw store holds exactly those chunks, index entries, records and LRU
 * entries. After a killed reclaim, a second reclaim gives the space back (the
 * blob files in the directory, not only RocksDB's count).
 *
 * Data (fixed seeds, as in test_cache_reclaim.c): layout X (A = 1, B = 2),
 * rank r, layer l: a weight chunk tu_fill(X * 1000000 + r * 1000 + l) of
 * W_BYTES and a norm chunk tu_fill(500000 + r * 1000 + l) of N_BYTES shared
 * by both layouts (dedup: B's norms live in A's blob files). Shard C (budget
 * scenario): C_CHUNKS weights tu_fill(3000000 + i). Damage (doomed scenario):
 * A0's first weight chunk is overwritten with tu_fill(DAMAGE_SEED).
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
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/test_cache_util.h"

#define RANKS       4
#define LAYERS      8
#define W_BYTES     (60u << 10)
#define N_BYTES     1024u
#define BLOB_FILE   (256u << 10)
#define C_CHUNKS    16
#define MAX_STEPS   64
#define DAMAGE_SEED 777u
/* Budget scenario: exactly A and B (distinct bytes), so C's puts evict. */
#define BUDGET_BYTES ((uint64_t)RANKS * (2u * LAYERS * W_BYTES + LAYERS * N_BYTES))

enum { SC_EVICT = 1, SC_BUDGET, SC_RECLAIM, SC_DOOMED };
/* kill_at > 0: at that step; these: inside a compaction (first new file). */
enum { KILL_NONE = 0, KILL_IN_PASS1 = -1, KILL_IN_PASS2 = -2 };
#define MSG_FILE_KILL 'K' /* child to parent: killed at a new file (inotify) */

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

/* ---- the child ---- */

static int g_fd = -1, g_kill_at;
static int g_n_steps;
static const char *g_dir;
static atomic_int g_armed;       /* 1: kill at the next new file with g_suffix */
static unsigned long long g_max; /* file numbers at arming */
static const char *g_suffix;
static int g_ino = -1;

static void say(uint8_t b)
{
	if (write(g_fd, &b, 1) != 1)
		_exit(90);
}

/* Largest numbered file ("<n>.<ext>") in dir. */
static unsigned long long max_file_number(const char *dir)
{
	unsigned long long m = 0;
	DIR *d = opendir(dir);
	struct dirent *de;
	while (d != NULL && (de = readdir(d)) != NULL) {
		char *end;
		unsigned long long n = strtoull(de->d_name, &end, 10);
		if (end != de->d_name && *end == '.' && n > m)
			m = n;
	}
	if (d != NULL)
		closedir(d);
	return m;
}

static void *watch_main(void *arg)
{
	(void)arg;
	char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
	for (;;) {
		ssize_t n = read(g_ino, buf, sizeof(buf));
		if (n <= 0) {
			if (n < 0 && errno == EINTR)
				continue;
			return NULL;
		}
		for (char *p = buf; p < buf + n;) {
			const struct inotify_event *ev = (const struct inotify_event *)p;
			p += sizeof(*ev) + ev->len;
			if (!atomic_load(&g_armed) || ev->len == 0)
				continue;
			char *end;
			unsigned long long num = strtoull(ev->name, &end, 10);
			if (end != ev->name && strcmp(end, g_suffix) == 0 && num > g_max) {
				say(MSG_FILE_KILL);
				raise(SIGKILL);
			}
		}
	}
}

static void step_hook(void *ctx, int step)
{
	(void)ctx;
	g_n_steps++;
	say((uint8_t)step);
	if (g_kill_at > 0 && g_n_steps == g_kill_at)
		raise(SIGKILL);
	if ((g_kill_at == KILL_IN_PASS1 && step == CACHE_STEP_RECLAIM_BEGIN) ||
	    (g_kill_at == KILL_IN_PASS2 && step == CACHE_STEP_RECLAIM_GC_ON)) {
		g_suffix = g_kill_at == KILL_IN_PASS1 ? ".sst" : ".blob";
		g_max = max_file_number(g_dir);
		atomic_store(&g_armed, 1);
	}
}

static int child(int sc, const char *dir, int kill_at, int fd)
{
	wt_errbuf err;
	cache_opts o = crash_opts(sc);
	cache *c = NULL;
	g_fd = fd;
	g_kill_at = kill_at;
	g_dir = dir;
	if (kill_at < 0) {
		pthread_t t;
		if ((g_ino = inotify_init1(IN_CLOEXEC)) < 0 ||
		    inotify_add_watch(g_ino, dir, IN_CREATE) < 0 ||
		    pthread_create(&t, NULL, watch_main, NULL) != 0)
			return 2;
	}
	if (cache_open(&c, dir, &o, &err) != WT_OK) {
		fprintf(stderr, "child open: %s\n", err.msg);
		return 3;
	}
	c->step_ctx = NULL;
	c->step_hook = step_hook;
	if (sc == SC_EVICT) {
		for (int r = 0; r < RANKS; r++) {
			char id[32];
			shard_name(id, sizeof(id), 1, r);
			if (cache_evict(c, id, strlen(id), &err) != WT_OK) {
				fprintf(stderr, "child evict: %s\n", err.msg);
				return 4;
			}
		}
	} else if (sc == SC_DOOMED) {
		/* pinned, a chunk fails its hash: evicted (doomed), freed at unpin */
		static uint8_t buf[W_BYTES];
		cache_shard *s = NULL;
		size_t len;
		if (cache_shard_open(c, "A/rank0", 7, &s, &err) != WT_OK)
			return 7;
		wt_hash128 h = cache_shard_chunk(s, 0, NULL);
		if (cache_read_chunk(c, h, buf, sizeof(buf), &len, &err) != WT_ECORRUPT)
			return 8;
		cache_shard_close(s);
	} else if (sc == SC_BUDGET) {
		if (put_shard(c, "C", C_CHUNKS, 3, 0, &err) != WT_OK) {
			fprintf(stderr, "child put C: %s\n", err.msg);
			return 5;
		}
	} else {
		cache_reclaim_stats rs;
		if (cache_reclaim(c, &rs, &err) != WT_OK) {
			fprintf(stderr, "child reclaim: %s\n", err.msg);
			return 6;
		}
	}
	c->step_hook = NULL;
	cache_close(c);
	return 0;
}

/* ---- the parent ---- */

/* The prepared store: A and B committed (A0..A3 then B0..B3: LRU order);
 * for the reclaim scenario A is evicted again (its weights are garbage in
 * blob files that hold B's norms). */
static void build_base(const char *dir, int sc)
{
	wt_errbuf err;
	cache_opts o = crash_opts(SC_EVICT);
	cache *c = NULL;
	assert_int_equal(cache_open(&c, dir, &o, &err), WT_OK);
	for (int layout = 1; layout <= 2; layout++)
		for (int r = 0; r < RANKS; r++) {
			char id[32];
			shard_name(id, sizeof(id), layout, r);
			if (put_shard(c, id, 2 * LAYERS, layout, r, &err) != WT_OK)
				fail_msg("base %s: %s", id, err.msg);
		}
	if (sc == SC_RECLAIM)
		for (int r = 0; r < RANKS; r++) {
			char id[32];
			shard_name(id, sizeof(id), 1, r);
			assert_int_equal(cache_evict(c, id, strlen(id), &err), WT_OK);
		}
	cache_stats st;
	cache_stats_get(c, &st);
	if (sc != SC_RECLAIM)
		assert_int_equal(st.bytes, BUDGET_BYTES);
	cache_close(c);
	if (sc == SC_DOOMED) { /* damage on disk, under the chunk's own key */
		static uint8_t buf[W_BYTES];
		tu_fill(buf, W_BYTES, chunk_seed(1, 0, 0));
		wt_hash128 h = common_hash128(buf, W_BYTES);
		tu_fill(buf, W_BYTES, DAMAGE_SEED);
		assert_int_equal(tc_raw_put_chunk(dir, h, buf, W_BYTES, false), 0);
	}
}

/* Doomed scenario killed before the eviction was written: A0 is there with
 * its damaged chunk, as before the run; a verify finds it (1 bad chunk) and
 * evicts A0, and the store is then checked like the others. */
static void verify_finds_damage(const char *dir, int sc)
{
	wt_errbuf err;
	cache_opts o = crash_opts(sc);
	cache *c = NULL;
	assert_int_equal(cache_open(&c, dir, &o, &err), WT_OK);
	assert_true(cache_has_shard(c, "A/rank0", 7));
	uint64_t bad = 0;
	assert_int_equal(cache_verify_all(c, NULL, NULL, &bad, &err), WT_OK);
	assert_int_equal(bad, 1);
	assert_false(cache_has_shard(c, "A/rank0", 7));
	cache_close(c);
}

static void copy_dir(const char *from, const char *to)
{
	DIR *d = opendir(from);
	assert_non_null(d);
	struct dirent *de;
	static uint8_t buf[1u << 16];
	while ((de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.')
			continue;
		char *src = tu_path(from, de->d_name), *dst = tu_path(to, de->d_name);
		int in = open(src, O_RDONLY), out = open(dst, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		assert_true(in >= 0 && out >= 0);
		ssize_t n;
		while ((n = read(in, buf, sizeof(buf))) > 0)
			assert_int_equal(write(out, buf, (size_t)n), n);
		assert_int_equal(n, 0);
		close(in);
		close(out);
		free(src);
		free(dst);
	}
	closedir(d);
}

typedef struct run_result {
	uint8_t steps[MAX_STEPS];
	int n_steps;
	bool file_kill; /* killed inside a compaction, at a new file */
	bool killed;    /* died of SIGKILL (else exited 0) */
} run_result;

static void run_child(int sc, const char *dir, int kill_at, run_result *res)
{
	int pfd[2];
	assert_int_equal(pipe(pfd), 0);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		char s_sc[16], s_k[16], s_fd[16];
		snprintf(s_sc, sizeof(s_sc), "%d", sc);
		snprintf(s_k, sizeof(s_k), "%d", kill_at);
		snprintf(s_fd, sizeof(s_fd), "%d", pfd[1]);
		close(pfd[0]);
		execl("/proc/self/exe", "test_cache_crash_evict", "--child", s_sc, dir, s_k, s_fd,
		      (char *)NULL);
		_exit(127);
	}
	close(pfd[1]);
	memset(res, 0, sizeof(*res));
	uint8_t b;
	while (read(pfd[0], &b, 1) == 1) {
		if (b == MSG_FILE_KILL) {
			res->file_kill = true;
			continue;
		}
		assert_true(res->n_steps < MAX_STEPS);
		res->steps[res->n_steps++] = b;
	}
	close(pfd[0]);
	int st = 0;
	assert_int_equal(waitpid(pid, &st, 0), pid);
	if (WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL)
		res->killed = true;
	else if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
		fail_msg("%s child (kill_at %d) ended with status 0x%x before any kill",
		         sc_name(sc), kill_at, st);
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

/* The chunks column family's enable_blob_garbage_collection in the newest
 * OPTIONS file (RocksDB writes one at every open and SetOptions): 1 true,
 * 0 false, -1 not found. */
static int gc_in_options(const char *dir)
{
	unsigned long long best = 0;
	char name[300] = "";
	DIR *d = opendir(dir);
	struct dirent *de;
	while (d != NULL && (de = readdir(d)) != NULL) {
		char *end;
		if (strncmp(de->d_name, "OPTIONS-", 8) != 0)
			continue;
		unsigned long long n = strtoull(de->d_name + 8, &end, 10);
		if (*end == '\0' && n >= best) {
			best = n;
			snprintf(name, sizeof(name), "%s", de->d_name);
		}
	}
	if (d != NULL)
		closedir(d);
	char *p = tu_path(dir, name);
	size_t len = 0;
	char *text = name[0] != '\0' ? tu_read_file(p, &len) : NULL;
	free(p);
	if (text == NULL)
		return -1;
	int r = -1;
	char *sec = strstr(text, "[CFOptions \"chunks\"]");
	if (sec != NULL) {
		char *next = strchr(sec + 1, '[');
		if (next != NULL)
			*next = '\0';
		char *kv = strstr(sec, "enable_blob_garbage_collection=");
		if (kv != NULL)
			r = strncmp(kv + 31, "true", 4) == 0 ? 1 : 0;
	}
	free(text);
	return r;
}

static int count_steps(const run_result *r, int n, int what)
{
	int k = 0;
	for (int i = 0; i < n; i++)
		k += r->steps[i] == what;
	return k;
}

static void expect_sequence(const run_result *dry, const int *want, int n)
{
	if (dry->n_steps != n)
		fail_msg("dry run: %d steps, expected %d", dry->n_steps, n);
	for (int i = 0; i < n; i++)
		assert_int_equal(dry->steps[i], want[i]);
}

/* Runs the scenario killed at every step (and inside each compaction for the
 * reclaim), checking the store after each. */
static void kill_everywhere(int sc, const int *want, int n_want)
{
	char *base = tu_mkdtemp("crashevict-base");
	char *work = tu_mkdtemp("crashevict");
	assert_non_null(base);
	assert_non_null(work);
	build_base(base, sc);

	/* dry run: the sequence of steps, and the finished operation checked */
	run_result dry;
	copy_dir(base, work);
	run_child(sc, work, KILL_NONE, &dry);
	assert_false(dry.killed);
	expect_sequence(&dry, want, n_want);
	int done_evictions = count_steps(&dry, dry.n_steps, CACHE_STEP_EVICT_DONE);
	uint64_t live =
	    check_store(work, sc, sc == SC_RECLAIM ? RANKS : done_evictions, sc == SC_BUDGET);
	print_message("%s: dry run %d steps, %d evictions, %llu live bytes\n", sc_name(sc),
	              dry.n_steps, done_evictions, (unsigned long long)live);
	if (sc == SC_EVICT) /* every A shard gone: a reclaim gives their space back */
		reclaim_after(work, sc, done_evictions, false, live);

	int extra = sc == SC_RECLAIM ? 2 : 0;
	for (int k = 1; k <= dry.n_steps + extra; k++) {
		int kill_at = k <= dry.n_steps       ? k
		              : k == dry.n_steps + 1 ? KILL_IN_PASS1
		                                     : KILL_IN_PASS2;
		tu_rmrf(work);
		assert_int_equal(mkdir(work, 0755), 0);
		copy_dir(base, work);
		run_result res;
		run_child(sc, work, kill_at, &res);
		if (!res.killed)
			fail_msg("%s: child (kill_at %d) finished without being killed",
			         sc_name(sc), kill_at);
		if (kill_at < 0 && !res.file_kill)
			fail_msg("%s: child (kill_at %d) killed but not inside the compaction",
			         sc_name(sc), kill_at);
		/* an eviction is durable from EVICT_DONE on (its batch is in the WAL) */
		int evicted = sc == SC_RECLAIM
		                  ? RANKS
		                  : count_steps(&res, res.n_steps, CACHE_STEP_EVICT_DONE);
		if (sc == SC_RECLAIM && res.n_steps > 0) {
			/* killed with GC on: the newest OPTIONS file (SetOptions') says so */
			int last = res.steps[res.n_steps - 1];
			bool on =
			    last == CACHE_STEP_RECLAIM_GC_ON || last == CACHE_STEP_RECLAIM_PASS2;
			assert_int_equal(gc_in_options(work), on ? 1 : 0);
		}
		if (sc == SC_DOOMED && evicted == 0) {
			verify_finds_damage(work, sc);
			evicted = 1;
		}
		uint64_t l = check_store(work, sc, evicted, false);
		print_message("%s: killed %s%d (after step %d of %d): %d A shards gone, %llu "
		              "live bytes, all shards whole\n",
		              sc_name(sc), kill_at > 0 ? "at step " : "inside compaction ",
		              kill_at > 0 ? kill_at : -kill_at, res.n_steps, dry.n_steps, evicted,
		              (unsigned long long)l);
		if (sc == SC_RECLAIM) {
			/* killed with GC on: the reopen had it off (options come from
			 * cache_open, not from the OPTIONS file SetOptions wrote) */
			assert_int_equal(gc_in_options(work), 0);
			assert_int_equal(l, live);
			reclaim_after(work, sc, evicted, false, l);
		}
	}
	tu_rmrf(work);
	tu_rmrf(base);
	free(work);
	free(base);
}

/* cache_evict of A0..A3 (each shares its norms with B's rank). */
static void test_kill_evict(void **state)
{
	(void)state;
	int want[2 * RANKS];
	for (int i = 0; i < 2 * RANKS; i++)
		want[i] = i % 2 == 0 ? CACHE_STEP_EVICT_WRITE : CACHE_STEP_EVICT_DONE;
	kill_everywhere(SC_EVICT, want, 2 * RANKS);
}

/* The byte budget: shard C's puts push the store over max_bytes and evict the
 * least recently used shards (A0 at C's first put, A1 at its ninth). */
static void test_kill_budget_evict(void **state)
{
	(void)state;
	const int want[] = {CACHE_STEP_EVICT_WRITE, CACHE_STEP_EVICT_DONE, CACHE_STEP_EVICT_WRITE,
	                    CACHE_STEP_EVICT_DONE};
	kill_everywhere(SC_BUDGET, want, 4);
}

/* A pinned shard evicted for a damaged chunk, its chunks freed at unpin. */
static void test_kill_doomed_evict(void **state)
{
	(void)state;
	const int want[] = {CACHE_STEP_EVICT_WRITE, CACHE_STEP_EVICT_DONE, CACHE_STEP_UNREF_WRITE,
	                    CACHE_STEP_UNREF_DONE};
	kill_everywhere(SC_DOOMED, want, 4);
}

/* cache_reclaim after A's eviction: both passes run. */
static void test_kill_reclaim(void **state)
{
	(void)state;
	const int want[] = {CACHE_STEP_RECLAIM_BEGIN, CACHE_STEP_RECLAIM_PASS1,
	                    CACHE_STEP_RECLAIM_GC_ON, CACHE_STEP_RECLAIM_PASS2,
	                    CACHE_STEP_RECLAIM_GC_OFF};
	kill_everywhere(SC_RECLAIM, want, 5);
}

int main(int argc, char **argv)
{
	if (argc == 6 && strcmp(argv[1], "--child") == 0)
		return child((int)strtol(argv[2], NULL, 10), argv[3],
		             (int)strtol(argv[4], NULL, 10), (int)strtol(argv[5], NULL, 10));
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_kill_evict),
	    cmocka_unit_test(test_kill_budget_evict),
	    cmocka_unit_test(test_kill_doomed_evict),
	    cmocka_unit_test(test_kill_reclaim),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
