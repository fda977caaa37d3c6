/*
 * test_cut_util.h — what tests/test_weightd_cut.c's cut-through tests share (test code
 * only): a gate on the producer's rank commits (its fault hooks hold commits and cache puts
 * back, fail them, or write a source file in place), fetchers on threads that record how
 * many commits had passed when they finished, and checks of the write-behind state.
 * Include after cmocka.h and test_weightd_util.h.
 */
#ifndef WT_TEST_CUT_UTIL_H
#define WT_TEST_CUT_UTIL_H

#include <fcntl.h>
#include <pthread.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cache/cache.h"
#include "common/common.h"
#include "weightd/server_int.h"
#include "weights/engine.h"

#define SEED 1313u

/* ---- a gate on the producer's rank commits ---- */

typedef struct gate {
	pthread_mutex_t lk;
	pthread_cond_t cv;
	int held;   /* commits wait while set (at most 20 s each) */
	int passed; /* commits let through */
	int forever;
	const char *change_dir; /* before_check: write the source in place once ... */
	int got_bytes;          /* ... once a fetch delivered bytes (progress callback) */
	int puts_held;          /* cache writes (before_put) wait while set (at most 20 s) */
	int puts;               /* cache writes let through */
	int put_fail_at;        /* the N-th cache write fails with WT_EIO; 0 = none */
	int put_fail_from;      /* every cache write from the N-th on fails; 0 = none */
	int put_fails;          /* cache writers that recorded a failure */
	int check_after_fail;   /* before_check waits for its production's writer to fail */
	int fails_consumed;     /* failures a before_check already waited for */
} gate;

static gate G = {
    PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0, 0, NULL, 0, 0, 0, 0, 0, 0, 0, 0};

static void gate_commit(void *ctx, uint32_t rank)
{
	gate *g = ctx;
	(void)rank;
	struct timespec dl;
	clock_gettime(CLOCK_REALTIME, &dl);
	dl.tv_sec += 20;
	pthread_mutex_lock(&g->lk);
	while (g->held && pthread_cond_timedwait(&g->cv, &g->lk, &dl) == 0)
		;
	g->passed++;
	pthread_mutex_unlock(&g->lk);
}

static int gate_put(void *ctx, uint32_t rank)
{
	gate *g = ctx;
	(void)rank;
	struct timespec dl;
	clock_gettime(CLOCK_REALTIME, &dl);
	dl.tv_sec += 20;
	pthread_mutex_lock(&g->lk);
	while (g->puts_held && pthread_cond_timedwait(&g->cv, &g->lk, &dl) == 0)
		;
	int n = ++g->puts;
	int fail = (g->put_fail_at != 0 && n == g->put_fail_at) ||
	           (g->put_fail_from != 0 && n >= g->put_fail_from);
	pthread_mutex_unlock(&g->lk);
	return fail ? WT_EIO : WT_OK;
}

/* The cache writer recorded its failure: the producer sees it from now on. */
static void gate_writer_failed(void *ctx)
{
	gate *g = ctx;
	pthread_mutex_lock(&g->lk);
	g->put_fails++;
	pthread_cond_broadcast(&g->cv);
	pthread_mutex_unlock(&g->lk);
}

static void write_in_place(const char *dir)
{
	char *p = tu_path(dir, "model.safetensors");
	struct stat st;
	if (stat(p, &st) != 0)
		abort();
	int fd = open(p, O_RDWR);
	uint8_t b;
	if (fd < 0 || pread(fd, &b, 1, st.st_size - 1) != 1)
		abort();
	b ^= 0xa5;
	if (pwrite(fd, &b, 1, st.st_size - 1) != 1)
		abort();
	close(fd);
	struct timespec ts[2] = {st.st_atim, st.st_mtim};
	utimensat(AT_FDCWD, p, ts, 0);
	free(p);
}

static void gate_check(void *ctx, uint32_t rank)
{
	gate *g = ctx;
	struct timespec dl;
	clock_gettime(CLOCK_REALTIME, &dl);
	dl.tv_sec += 20;
	pthread_mutex_lock(&g->lk);
	while (g->forever)
		pthread_cond_wait(&g->cv, &g->lk); /* until kill -9 */
	/* With check_after_fail a rank's source check (and so its last chunk)
	 * waits until its production's cache writer failed: a failure after those
	 * seen when it began (one lets through both ranks' checks waiting at once),
	 * unless the one failing write (put_fail_at) already happened. */
	int seen = g->fails_consumed;
	while (g->check_after_fail && g->put_fails == seen &&
	       !(g->put_fail_at != 0 && g->put_fails > 0) &&
	       pthread_cond_timedwait(&g->cv, &g->lk, &dl) == 0)
		;
	g->fails_consumed = g->put_fails;
	/* the source changes at the check of rank 0 (the one the test reads):
	 * another rank's check may run at the same time (production_threads) */
	const char *dir = rank == 0 ? g->change_dir : NULL;
	if (dir != NULL)
		g->change_dir = NULL;
	while (dir != NULL && !g->got_bytes && pthread_cond_timedwait(&g->cv, &g->lk, &dl) == 0)
		;
	pthread_mutex_unlock(&g->lk);
	if (dir != NULL)
		write_in_place(dir); /* the rank's source check now fails: WT_ECHANGED */
}

static int on_progress(void *ctx, uint64_t done, uint64_t total)
{
	(void)ctx;
	(void)total;
	pthread_mutex_lock(&G.lk);
	G.got_bytes = done > 0;
	pthread_cond_broadcast(&G.cv);
	pthread_mutex_unlock(&G.lk);
	return 0;
}

static void gate_set(int held)
{
	pthread_mutex_lock(&G.lk);
	G.held = held;
	G.passed = 0;
	G.got_bytes = 0;
	G.puts_held = 0;
	G.puts = 0;
	G.put_fail_at = 0;
	G.put_fail_from = 0;
	G.put_fails = 0;
	G.check_after_fail = 0;
	G.fails_consumed = 0;
	pthread_cond_broadcast(&G.cv);
	pthread_mutex_unlock(&G.lk);
}

/* A counter of G (G.passed, G.puts) read under its lock. */
static int gate_get(const int *n)
{
	pthread_mutex_lock(&G.lk);
	int v = *n;
	pthread_mutex_unlock(&G.lk);
	return v;
}

static void gate_hold_puts(int held, int fail_at, int fail_from, int check_after_fail)
{
	pthread_mutex_lock(&G.lk);
	G.puts_held = held;
	G.put_fail_at = fail_at;
	G.put_fail_from = fail_from;
	G.check_after_fail = check_after_fail;
	pthread_cond_broadcast(&G.cv);
	pthread_mutex_unlock(&G.lk);
}

static void install_gate(tw_env *e)
{
	e->faults.before_commit = gate_commit;
	e->faults.before_check = gate_check;
	e->faults.before_put = gate_put;
	e->faults.writer_failed = gate_writer_failed;
	e->faults.ctx = &G;
}

/* A started weightd whose producer passes the gate; key = value set first (key not NULL). */
static tw_env *gated_env(const char *tag, const char *key, const char *value)
{
	tw_env *e = tw_env_new(tag, SEED);
	wt_errbuf err;
	if (key != NULL)
		assert_int_equal(wd_config_set(&e->cfg, key, value, "test", &err), WT_OK);
	install_gate(e);
	assert_int_equal(tw_start(e), WT_OK);
	return e;
}

/* ---- a fetch of rank 0 of llama TP=2 ---- */

typedef struct fetcher {
	const char *url;
	int cut_through;
	int stream; /* wt_client_opts.stream: the bulk data plane when offered */
	uint32_t hash_refetch;
	wd_server *srv; /* to look at the cache when done (NULL: do not) */
	int rv;
	int live;
	int refused; /* live: fetch_tensors and fetch_update refused it (WT_EINVAL) */
	char err[WT_ERRMSG_MAX];
	wt_host_sink *hs;
	wt_fetch_stats st;
	int passed_at_done; /* commits let through when the fetch ended */
	int puts_at_done;   /* cache writes let through when the fetch ended */
	bool cached_at_done;
	uint64_t bytes;
	size_t n_tensors;
	wt_hash128 digest; /* of every tensor's name and bytes, manifest order */
} fetcher;

/* Digest of the names and bytes of m's tensors as the host sink holds them. */
static int digest_tensors(fetcher *f, const wt_manifest *m)
{
	common_hasher *h = common_hasher_new();
	if (h == NULL)
		return WT_ENOMEM;
	int rv = WT_OK;
	for (size_t i = 0; i < wt_manifest_n_tensors(m) && rv == WT_OK; i++) {
		wt_tensor_info ti;
		const void *p;
		uint64_t n;
		if ((rv = wt_manifest_tensor(m, i, &ti)) == WT_OK)
			rv = wt_host_sink_find(f->hs, ti.name, &p, &n);
		if (rv == WT_OK && n != ti.nbytes)
			rv = WT_ECORRUPT;
		if (rv == WT_OK) {
			common_hasher_update(h, ti.name, strlen(ti.name) + 1);
			common_hasher_update(h, p, (size_t)n);
		}
	}
	f->n_tensors = wt_manifest_n_tensors(m);
	f->digest = common_hasher_digest(h);
	common_hasher_free(h);
	return rv;
}

static void *fetch_main(void *arg)
{
	fetcher *f = arg;
	wt_errbuf err;
	wt_client_opts o;
	wt_client_opts_init(&o);
	o.endpoints = &f->url;
	o.n_endpoints = 1;
	o.cut_through = f->cut_through;
	o.stream = f->stream;
	o.hash_refetch = f->hash_refetch;
	o.request_timeout_ms = 30000;
	wt_client *c = NULL;
	wt_manifest *m = NULL;
	wt_layout l;
	wt_layout_init(&l);
	l.tp_size = 2;
	f->rv = wt_client_open(&c, &o, &err);
	if (f->rv == WT_OK)
		f->rv = wt_client_get_manifest(c, "llama", &l, &m, &err);
	if (f->rv == WT_OK) {
		f->live = wt_manifest_live(m);
		f->rv = wt_host_sink_create(&f->hs, &err);
	}
	if (f->rv == WT_OK && f->live) {
		/* no hashes to compare or subset by: only a whole fetch takes it */
		unsigned char sel[64] = {1};
		wt_errbuf e2;
		f->refused = wt_client_fetch_tensors(c, m, sel, wt_host_sink_sink(f->hs), NULL,
		                                     &e2) == WT_EINVAL &&
		             wt_client_fetch_update(c, m, m, wt_host_sink_update_sink(f->hs), NULL,
		                                    NULL, &e2) == WT_EINVAL;
	}
	if (f->rv == WT_OK) {
		wt_fetch_opts fo;
		wt_fetch_opts_init(&fo);
		fo.stats = &f->st;
		fo.progress = on_progress;
		f->rv = wt_client_fetch(c, m, wt_host_sink_sink(f->hs), &fo, &err);
	}
	f->passed_at_done = gate_get(&G.passed);
	f->puts_at_done = gate_get(&G.puts);
	if (f->rv == WT_OK && f->srv != NULL) {
		uint8_t id[WD_SHARD_ID_BYTES];
		wd_shard_id("llama", wt_manifest_revision(m), wt_manifest_layout_text(m), 0, id);
		f->cached_at_done = cache_has_shard(f->srv->cache, id, sizeof(id));
	}
	if (f->rv == WT_OK) {
		f->bytes = wt_manifest_total_bytes(m);
		f->rv = digest_tensors(f, m);
	}
	if (f->rv != WT_OK)
		snprintf(f->err, sizeof(f->err), "%s", err.msg);
	printf("fetch (cut_through %d): %s live %d, %llu bytes, %u refetches, commits passed "
	       "%d%s%s\n",
	       f->cut_through, wt_errname(f->rv), f->live, (unsigned long long)f->st.bytes,
	       f->st.refetches, f->passed_at_done, f->rv ? ": " : "", f->rv ? f->err : "");
	wt_manifest_free(m);
	wt_client_close(c);
	return NULL;
}

static void run_fetch(fetcher *f)
{
	pthread_t t;
	assert_int_equal(pthread_create(&t, NULL, fetch_main, f), 0);
	pthread_join(t, NULL);
}

/* Both fetches delivered the same tensors (names and bytes, manifest order). */
static void assert_same_tensors(const fetcher *a, const fetcher *b)
{
	assert_true(a->n_tensors > 0);
	assert_int_equal(a->n_tensors, b->n_tensors);
	assert_true(common_hash128_eq(a->digest, b->digest));
}

static void fetcher_free(fetcher *f)
{
	wt_host_sink_destroy(f->hs);
	f->hs = NULL;
}

/* Bytes of write-behind buffers in use (and their peak into *peak, if not NULL). */
static uint64_t wb_used(tw_env *e, uint64_t *peak)
{
	wd_wbudget_stats st;
	wd_wbudget_get(e->srv->wbudget, &st);
	if (peak != NULL)
		*peak = st.peak;
	return st.used;
}

/*
 * Wait (at most 30 s) for the end of the server's productions, n of them done
 * well, and assert it: no live entry, no write-behind RAM left. A fetch of
 * rank 0 of the committed layout ends once rank 0 is committed, while the
 * writer may still put and commit rank 1 (a synced write: slow on a busy disk).
 */
static void assert_ended(tw_env *e, uint64_t n)
{
	for (int i = 0;
	     i < 3000 && !(atomic_load(&e->srv->productions) >= n &&
	                   wd_lives_producing(e->srv->lives, NULL) == 0 && wb_used(e, NULL) == 0);
	     i++)
		usleep(10000);
	assert_true(atomic_load(&e->srv->productions) >= n);
	assert_int_equal(wd_lives_producing(e->srv->lives, NULL), 0);
	assert_int_equal(wb_used(e, NULL), 0);
}

/* A fetch of the committed layout (it waits for rank 0's commit) delivers the
 * same tensors as fetch a; then the production ends (assert_ended). */
static void assert_committed_same(tw_env *e, const fetcher *a)
{
	fetcher b = {.url = e->url, .cut_through = 0, .srv = e->srv};
	run_fetch(&b);
	assert_int_equal(b.rv, WT_OK);
	assert_int_equal(b.live, 0);
	assert_true(b.cached_at_done);
	assert_same_tensors(a, &b);
	fetcher_free(&b);
	assert_ended(e, 1);
}

/* Evict both ranks once the production ended: the next fetch is live again. */
static void evict_layout(tw_env *e)
{
	wt_errbuf err;
	uint8_t id[WD_SHARD_ID_BYTES];
	char text[WD_LAYOUT_TEXT_MAX];
	wt_layout l;
	wt_layout_init(&l);
	l.tp_size = 2;
	wt_layout_format(&l, text, sizeof(text));
	assert_ended(e, 1);
	wd_snap *snap;
	assert_int_equal(wd_models_get(e->srv->models, "llama", false, &snap, &err), WT_OK);
	for (uint32_t r = 0; r < 2; r++) {
		wd_shard_id("llama", snap->revision, text, r, id);
		assert_int_equal(cache_evict(e->srv->cache, id, sizeof(id), &err), WT_OK);
	}
	wd_snap_release(snap);
}

/* Wait (at most 30 s) until a fetch delivered bytes. */
static bool wait_bytes(void)
{
	struct timespec dl;
	clock_gettime(CLOCK_REALTIME, &dl);
	dl.tv_sec += 30;
	pthread_mutex_lock(&G.lk);
	while (!G.got_bytes && pthread_cond_timedwait(&G.cv, &G.lk, &dl) == 0)
		;
	bool got = G.got_bytes;
	pthread_mutex_unlock(&G.lk);
	return got;
}

/* A free port of 127.0.0.1 below the kernel's ephemeral range, or 0. A reader
 * redialing a killed daemon's port from that range may get it as its source
 * and connect to itself: that socket, closed, keeps the restarted daemon from
 * listening there for a minute. connect() never takes a port below it. */
static int port_below_ephemeral(void)
{
	int lo = 0, hi = 0;
	FILE *f = fopen("/proc/sys/net/ipv4/ip_local_port_range", "r");
	if (f == NULL || fscanf(f, "%d %d", &lo, &hi) != 2)
		lo = 0;
	if (f != NULL)
		fclose(f);
	for (int i = 0; i < 64 && lo > 2048; i++) {
		int port = lo - 1 - (int)(((unsigned)getpid() * 31u + (unsigned)i) % 1024u);
		struct sockaddr_in sa = {.sin_family = AF_INET,
		                         .sin_port = htons((uint16_t)port),
		                         .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
		int fd = socket(AF_INET, SOCK_STREAM, 0);
		bool free_port = fd >= 0 && bind(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0;
		if (fd >= 0)
			close(fd);
		if (free_port)
			return port;
	}
	return 0;
}

/* The one URL weightd listens on becomes url (tw_env_new's has port 0). */
static void set_listen(tw_env *e, const char *url)
{
	assert_int_equal(e->cfg.listen.n, 1);
	free(e->cfg.listen.v[0]);
	assert_non_null(e->cfg.listen.v[0] = strdup(url));
}

#endif
