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
 * A0's first weight chunk is overwritten with tu_fill(DAMAGE_SEED). The data and the checks
 * of a reopened store: test_cache_crash_evict_util.h.
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
#include "tests/test_cache_crash_evict_util.h"

#define MAX_STEPS 64
/* kill_at > 0: at that step; these: inside a compaction (first new file). */
enum { KILL_NONE = 0, KILL_IN_PASS1 = -1, KILL_IN_PASS2 = -2 };
#define MSG_FILE_KILL 'K' /* child to parent: killed at a new file (inotify) */

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
