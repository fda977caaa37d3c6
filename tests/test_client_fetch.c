/*
 * test_client_fetch.c — wt_client_fetch against an in-process fake weightd
 * (nng rep0 speaking proto/weights.proto) that can corrupt, drop or forget:
 * verified delivery into the host and file sinks, one re-fetch then WT_EHASH,
 * retry after a lost reply, resume after a "restart", fail-over, cancel, an
 * older caller's smaller wt_fetch_opts.
 * Shard bytes come from tu_fill() with the seed printed below.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <nng/nng.h>
#include <pthread.h>

#include "client/client.h"
#include "client/client_int.h"
#include "common/common.h"
#include "loader/loader.h"
#include "proto/wire.h"
#include "tests/util/fake_weightd.h"
#include "tests/util/testutil.h"
#include "weights/client.h"
#include "weights/engine.h"

#define SEED      FAKE_SEED
#define N_T       FAKE_N_T
#define shard_def fake_shard_def
#define dead_url  fake_dead_url

static uint32_t g_refetch = 1; /* opts.hash_refetch of the next open_client() */
static uint32_t g_conns = 2;   /* opts.connections of the next open_client() */
static int g_cut;              /* wt_client_opts.cut_through of open_client */

static wt_client *open_client(const char *const *eps, size_t n, uint32_t window,
                              uint32_t timeout_ms)
{
	wt_client_opts o;
	wt_client_opts_init(&o);
	o.endpoints = eps;
	o.n_endpoints = n;
	o.window = window;
	o.request_timeout_ms = timeout_ms;
	o.backoff_initial_ms = 10;
	o.backoff_max_ms = 50;
	o.max_retries = 3;
	o.hash_refetch = g_refetch;
	o.connections = g_conns;
	o.cut_through = g_cut;
	o.retry_budget_ms = 300; /* dead endpoints fail in a test-sized time */
	wt_client *c = NULL;
	wt_errbuf err;
	int rv = wt_client_open(&c, &o, &err);
	if (rv != WT_OK)
		fail_msg("wt_client_open: %s", err.msg);
	return c;
}

/* open_client on the fake alone. */
static wt_client *open_fake(const fake *f, uint32_t window, uint32_t timeout_ms)
{
	const char *eps[] = {f->url};
	return open_client(eps, 1, window, timeout_ms);
}

/* fake_fetch of the fake shard's manifest; on success the stats count all of it. */
static int fetch_host(fake *f, wt_client *c, wt_fetch_stats *st, wt_errbuf *err)
{
	wt_manifest *m = fake_manifest(c);
	int rv = fake_fetch(f, c, m, st, err);
	if (rv == WT_OK) {
		assert_int_equal(st->chunks, wt_manifest_n_chunks(m));
		assert_int_equal(st->bytes, wt_manifest_total_bytes(m));
	}
	wt_manifest_free(m);
	return rv;
}

static void test_fetch_host(void **state)
{
	(void)state;
	printf("seed 0x%x\n", SEED);
	fake *f = fake_start();
	for (uint32_t w = 1; w <= 16; w *= 4) {
		wt_client *c = open_fake(f, w, 5000);
		wt_fetch_stats st;
		wt_errbuf err;
		int rv = fetch_host(f, c, &st, &err);
		if (rv != WT_OK)
			fail_msg("window %u: %s", w, err.msg);
		assert_int_equal(st.retries + st.refetches + st.failovers, 0);
		assert_string_equal(st.endpoint, f->url);
		wt_client_close(c);
	}
	fake_stop(f);
}

/* A fetch spreads its window over opts.connections connections, each of which
 * said Hello first (a token is checked per connection); out-of-range counts are
 * refused at open. */
static void test_connections(void **state)
{
	(void)state;
	const uint32_t conns[] = {1, 3, 4};
	for (size_t k = 0; k < 3; k++) {
		fake *f = fake_start();
		g_conns = conns[k];
		wt_client *c = open_fake(f, 6, 5000);
		wt_fetch_stats st;
		wt_errbuf err;
		if (fetch_host(f, c, &st, &err) != WT_OK)
			fail_msg("connections %u: %s", conns[k], err.msg);
		printf("connections %u: chunks over %d connections, %d said Hello\n", conns[k],
		       f->n_chunk_pipes, f->n_hello_pipes);
		assert_int_equal(f->n_chunk_pipes, conns[k]);
		for (int i = 0; i < f->n_chunk_pipes; i++) {
			int greeted = 0;
			for (int j = 0; j < f->n_hello_pipes; j++)
				greeted |= f->hello_pipes[j] == f->chunk_pipes[i];
			assert_true(greeted);
		}
		wt_client_close(c);
		fake_stop(f);
	}
	g_conns = 2;
	wt_client_opts o;
	wt_client_opts_init(&o);
	assert_int_equal(o.connections, 2);
	const char *eps[] = {"tcp://127.0.0.1:1"};
	o.endpoints = eps;
	o.n_endpoints = 1;
	wt_client *c = NULL;
	wt_errbuf err;
	o.connections = 0;
	assert_int_equal(wt_client_open(&c, &o, &err), WT_EINVAL);
	assert_non_null(strstr(err.msg, "connections 0"));
	o.connections = 17;
	assert_int_equal(wt_client_open(&c, &o, &err), WT_EINVAL);
	assert_null(c);
}

static void test_fetch_file(void **state)
{
	(void)state;
	fake *f = fake_start();
	wt_client *c = open_fake(f, 4, 5000);
	wt_manifest *m = fake_manifest(c);
	char *dir = tu_mkdtemp("client");
	char *path = tu_path(dir, "out.safetensors");
	wt_file_sink *fs;
	wt_errbuf err;
	assert_int_equal(wt_file_sink_create(&fs, path, 1, &err), WT_OK);
	int rv = wt_client_fetch(c, m, wt_file_sink_sink(fs), NULL, &err);
	if (rv != WT_OK)
		fail_msg("fetch: %s", err.msg);
	size_t len;
	char *buf = tu_read_file(path, &len);
	assert_non_null(buf);
	uint64_t hl = 0;
	for (int i = 7; i >= 0; i--)
		hl = (hl << 8) | (uint8_t)buf[i];
	st_file sf;
	assert_int_equal(st_parse_header(buf + 8, (size_t)hl, len, &sf, &err), WT_OK);
	assert_int_equal(sf.n_tensors, N_T);
	for (size_t i = 0; i < N_T; i++) {
		const st_tensor *t = st_find(&sf, shard_def[i].name);
		assert_non_null(t);
		assert_int_equal(t->nbytes, f->nbytes[i]);
		if (t->nbytes > 0)
			assert_memory_equal(buf + t->off, f->data[i], t->nbytes);
	}
	assert_string_equal(st_meta_get(&sf, "weightd.format"), "1");
	assert_string_equal(st_meta_get(&sf, "weightd.model"), "fake");
	assert_string_equal(st_meta_get(&sf, "weightd.revision"), "rev1");
	assert_string_equal(st_meta_get(&sf, "weightd.layout"), "tp=1,ep=1");
	assert_string_equal(st_meta_get(&sf, "weightd.rank"), "tp_rank=0,ep_rank=0");
	st_file_free(&sf);
	free(buf);
	/* a corrupt chunk (twice): WT_EHASH naming the chunk, no file, no temp file */
	char *path2 = tu_path(dir, "bad.safetensors");
	wt_file_sink *fs2;
	f->corrupt_chunk = 10; /* c.weight chunk 1 */
	assert_int_equal(wt_file_sink_create(&fs2, path2, 0, &err), WT_OK);
	rv = wt_client_fetch(c, m, wt_file_sink_sink(fs2), NULL, &err);
	assert_int_equal(rv, WT_EHASH);
	assert_non_null(strstr(err.msg, "tensor 'c.weight' chunk 1"));
	assert_non_null(strstr(err.msg, f->url));
	assert_int_not_equal(access(path2, F_OK), 0);
	char tmp[4096];
	snprintf(tmp, sizeof(tmp), "%s.tmp.%ld", path2, (long)getpid());
	assert_int_not_equal(access(tmp, F_OK), 0);
	wt_file_sink_destroy(fs2);
	wt_file_sink_destroy(fs);
	free(path2);
	free(path);
	tu_rmrf(dir);
	free(dir);
	wt_manifest_free(m);
	wt_client_close(c);
	fake_stop(f);
}

static void test_corrupt_once_refetched(void **state)
{
	(void)state;
	fake *f = fake_start();
	f->corrupt_req = 2;
	wt_client *c = open_fake(f, 4, 5000);
	wt_fetch_stats st;
	wt_errbuf err;
	int rv = fetch_host(f, c, &st, &err);
	if (rv != WT_OK)
		fail_msg("%s", err.msg);
	assert_int_equal(st.refetches, 1);
	wt_client_close(c);
	/* default (hash_refetch 0): the first mismatch is the error */
	g_refetch = 0;
	f->corrupt_req = f->chunk_reqs + 1;
	c = open_fake(f, 4, 5000);
	g_refetch = 1;
	assert_int_equal(fetch_host(f, c, &st, &err), WT_EHASH);
	assert_int_equal(st.refetches, 0);
	assert_non_null(strstr(err.msg, "chunk"));
	wt_client_close(c);
	fake_stop(f);
}

static void test_corrupt_always_ehash(void **state)
{
	(void)state;
	fake *f = fake_start();
	f->corrupt_chunk = 3; /* a.weight chunk 3 */
	wt_client *c = open_fake(f, 8, 5000);
	wt_fetch_stats st;
	wt_errbuf err;
	assert_int_equal(fetch_host(f, c, &st, &err), WT_EHASH);
	assert_non_null(strstr(err.msg, "tensor 'a.weight' chunk 3"));
	assert_int_equal(st.refetches, 1); /* one re-fetch, then the error: no loop */
	wt_client_close(c);
	fake_stop(f);
}

static void test_tensor_hash_mismatch(void **state)
{
	(void)state;
	fake *f = fake_start();
	f->bad_tensor_hash = 1; /* chunks fine, whole-tensor hash wrong */
	wt_client *c = open_fake(f, 4, 5000);
	wt_fetch_stats st;
	wt_errbuf err;
	assert_int_equal(fetch_host(f, c, &st, &err), WT_EHASH);
	assert_non_null(strstr(err.msg, "tensor 'c.weight'"));
	wt_client_close(c);
	fake_stop(f);
}

static void test_lost_reply_retried(void **state)
{
	(void)state;
	fake *f = fake_start();
	f->drop_req = 1;
	wt_client *c = open_fake(f, 4, 300);
	wt_fetch_stats st;
	wt_errbuf err;
	int rv = fetch_host(f, c, &st, &err);
	if (rv != WT_OK)
		fail_msg("%s", err.msg);
	assert_true(st.retries >= 1);
	assert_int_equal(st.failovers, 0);
	wt_client_close(c);
	fake_stop(f);
}

static void test_restart_resumes(void **state)
{
	(void)state;
	fake *f = fake_start();
	wt_client *c = open_fake(f, 2, 5000);
	wt_manifest *m = fake_manifest(c);
	f->forget_after = 5; /* the server "restarts" after 5 chunks */
	wt_host_sink *h;
	assert_int_equal(wt_host_sink_create(&h, NULL), WT_OK);
	wt_fetch_stats st;
	wt_fetch_opts fo;
	wt_fetch_opts_init(&fo);
	fo.stats = &st;
	wt_errbuf err;
	int rv = wt_client_fetch(c, m, wt_host_sink_sink(h), &fo, &err);
	if (rv != WT_OK)
		fail_msg("%s", err.msg);
	assert_int_equal(st.reconnects, 1);
	assert_int_equal(f->manifests, 2);
	/* resumed, not restarted: at most the window was asked twice */
	assert_true(f->chunk_reqs <= (int)wt_manifest_n_chunks(m) + 2 + 2);
	const void *d;
	uint64_t n;
	assert_int_equal(wt_host_sink_find(h, "a.weight", &d, &n), WT_OK);
	assert_memory_equal(d, f->data[0], n);
	wt_host_sink_destroy(h);
	wt_manifest_free(m);
	wt_client_close(c);
	fake_stop(f);
}

static void test_failover(void **state)
{
	(void)state;
	fake *f = fake_start();
	char dead[64];
	const char *eps[2];
	/* pick a dead URL that rendezvous hashing puts first for this shard */
	wt_layout l;
	wt_layout_init(&l);
	uint8_t key[16];
	client_route_key("fake", &l, key);
	size_t order[2];
	/* the live URL's weight is uniform, so n candidates all lose to it with
	 * probability 1/(n+1): 64 failed about one run in 65, 1 << 16 one in 65537 */
	for (int tries = 0;; tries++) {
		assert_true(tries < (1 << 16));
		dead_url(dead, sizeof(dead), tries);
		eps[0] = f->url;
		eps[1] = dead;
		client_rendezvous_order(key, eps, 2, order);
		if (order[0] == 1)
			break;
	}
	wt_client *c = open_client(eps, 2, 4, 2000);
	wt_fetch_stats st;
	wt_errbuf err;
	/* the manifest fails over; the fetch starts where the manifest came from */
	int rv = fetch_host(f, c, &st, &err);
	if (rv != WT_OK)
		fail_msg("%s", err.msg);
	assert_int_equal(st.failovers, 0);
	assert_string_equal(st.endpoint, f->url);
	/* a manifest that does not say where it came from: rendezvous order, fail-over */
	wt_manifest *m = fake_manifest(c);
	free(m->served_by);
	m->served_by = NULL;
	wt_host_sink *h;
	assert_int_equal(wt_host_sink_create(&h, NULL), WT_OK);
	wt_fetch_opts fo;
	wt_fetch_opts_init(&fo);
	fo.stats = &st;
	if (wt_client_fetch(c, m, wt_host_sink_sink(h), &fo, &err) != WT_OK)
		fail_msg("%s", err.msg);
	assert_int_equal(st.failovers, 1);
	assert_string_equal(st.endpoint, f->url);
	wt_host_sink_destroy(h);
	wt_manifest_free(m);
	wt_client_close(c);
	/* only dead endpoints: WT_EUNAVAIL naming them */
	const char *only_dead[] = {dead};
	c = open_client(only_dead, 1, 4, 500);
	m = NULL;
	assert_int_equal(wt_client_get_manifest(c, "fake", &l, &m, &err), WT_EUNAVAIL);
	assert_non_null(strstr(err.msg, dead));
	assert_null(m);
	wt_client_close(c);
	fake_stop(f);
}

typedef struct par_job {
	fake *f;
	wt_client *c;
	int rv;
	wt_fetch_stats st;
	wt_errbuf err;
} par_job;

static void *par_fetch(void *arg)
{
	par_job *j = arg;
	j->rv = fetch_host(j->f, j->c, &j->st, &j->err);
	return NULL;
}

/* "several calls may run at once on one client": four concurrent fetches */
static void test_concurrent_fetches(void **state)
{
	(void)state;
	fake *f = fake_start();
	wt_client *c = open_fake(f, 3, 5000);
	par_job j[4];
	pthread_t th[4];
	for (int i = 0; i < 4; i++) {
		j[i] = (par_job){.f = f, .c = c};
		assert_int_equal(pthread_create(&th[i], NULL, par_fetch, &j[i]), 0);
	}
	for (int i = 0; i < 4; i++) {
		pthread_join(th[i], NULL);
		if (j[i].rv != WT_OK)
			fail_msg("fetch %d: %s", i, j[i].err.msg);
		assert_int_equal(j[i].st.retries, 0);
	}
	wt_client_close(c);
	fake_stop(f);
}

static int cancel_at_half(void *ctx, uint64_t done, uint64_t total)
{
	(void)ctx;
	return done * 2 >= total;
}

static void test_cancel_and_models(void **state)
{
	(void)state;
	fake *f = fake_start();
	wt_client *c = open_fake(f, 4, 5000);
	wt_manifest *m = fake_manifest(c);
	wt_host_sink *h;
	assert_int_equal(wt_host_sink_create(&h, NULL), WT_OK);
	wt_fetch_opts fo;
	wt_fetch_opts_init(&fo);
	fo.progress = cancel_at_half;
	wt_errbuf err;
	assert_int_equal(wt_client_fetch(c, m, wt_host_sink_sink(h), &fo, &err), WT_ECANCELED);
	assert_int_equal(wt_host_sink_n_tensors(h), 0);
	wt_model_info *list = NULL;
	size_t n = 0;
	assert_int_equal(wt_client_list_models(c, &list, &n, &err), WT_OK);
	assert_int_equal(n, 1);
	assert_string_equal(list[0].name, "fake");
	assert_int_equal(list[0].n_tensors, 7);
	assert_int_equal(list[0].available, 1);
	assert_string_equal(list[0].error, "");
	/* a server that sends no override (as one older than 1.10): "" */
	assert_string_equal(wt_model_list_override(list, n, 0), "");
	assert_null(wt_model_list_override(list, n, 1));
	assert_null(wt_model_list_override(NULL, 0, 0));
	wt_model_list_free(list, n);
	wt_admin_result ar;
	assert_int_equal(wt_client_admin(c, WT_ADMIN_STATS, NULL, NULL, &ar, &err),
	                 WT_EUNSUPPORTED); /* the server's code comes through */
	assert_non_null(strstr(err.msg, f->url));
	wt_host_sink_destroy(h);
	wt_manifest_free(m);
	wt_client_close(c);
	fake_stop(f);
}

/* A caller built against an older wt_fetch_opts: the members past its struct_size
 * (here garbage: a wild stats pointer, a cancelling progress callback) are not read. */
static void test_old_fetch_opts(void **state)
{
	(void)state;
	fake *f = fake_start();
	wt_client *c = open_fake(f, 4, 5000);
	wt_manifest *m = fake_manifest(c);
	wt_host_sink *h;
	assert_int_equal(wt_host_sink_create(&h, NULL), WT_OK);
	wt_fetch_opts fo;
	memset(&fo, 0xa5, sizeof(fo));
	fo.struct_size = offsetof(wt_fetch_opts, progress_ctx) + sizeof(fo.progress_ctx);
	fo.progress = NULL;
	fo.progress_ctx = NULL;
	wt_errbuf err;
	if (wt_client_fetch(c, m, wt_host_sink_sink(h), &fo, &err) != WT_OK)
		fail_msg("old wt_fetch_opts: %s", err.msg);
	assert_int_equal(wt_host_sink_n_tensors(h), N_T);
	fo.struct_size = sizeof(fo.struct_size); /* progress is past it: never called */
	fo.progress = cancel_at_half;
	if (wt_client_fetch(c, m, wt_host_sink_sink(h), &fo, &err) != WT_OK)
		fail_msg("oldest wt_fetch_opts: %s", err.msg);
	wt_host_sink_destroy(h);
	wt_manifest_free(m);
	wt_client_close(c);
	fake_stop(f);
}

/* cut_through against a server from before 1.1 (the fake ignores live_ok): the
 * committed manifest, fetched as always. */
static void test_cut_through_old_server(void **state)
{
	(void)state;
	fake *f = fake_start();
	g_cut = 1;
	wt_client *c = open_fake(f, 4, 5000);
	wt_manifest *m = fake_manifest(c);
	assert_int_equal(wt_manifest_live(m), 0);
	wt_manifest_free(m);
	wt_fetch_stats st;
	wt_errbuf err;
	int rv = fetch_host(f, c, &st, &err);
	if (rv != WT_OK)
		fail_msg("cut_through against an old server: %s", err.msg);
	g_cut = 0;
	wt_client_close(c);
	fake_stop(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_fetch_host),
	    cmocka_unit_test(test_connections),
	    cmocka_unit_test(test_fetch_file),
	    cmocka_unit_test(test_corrupt_once_refetched),
	    cmocka_unit_test(test_corrupt_always_ehash),
	    cmocka_unit_test(test_tensor_hash_mismatch),
	    cmocka_unit_test(test_lost_reply_retried),
	    cmocka_unit_test(test_restart_resumes),
	    cmocka_unit_test(test_failover),
	    cmocka_unit_test(test_cancel_and_models),
	    cmocka_unit_test(test_concurrent_fetches),
	    cmocka_unit_test(test_old_fetch_opts),
	    cmocka_unit_test(test_cut_through_old_server),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
