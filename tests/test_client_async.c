/*
 * test_client_async.c — asynchronous fetches (client/async.c,
 * include/weights/async.h) against the in-process fake weightd
 * (tests/util/fake_weightd.h), chunk replies slowed with chunk_delay_ms so a
 * fetch is still running when the test acts:
 *  - a fetch completes: wait gives WT_OK and the bytes equal the fake's; the
 *    done callback fires exactly once with the same result, before wait returns;
 *  - wait with a timeout while it runs is WT_ETIMEDOUT and poll says running;
 *  - cancel from another thread mid-fetch (at the 3rd chunk: the progress
 *    callback holds the fetch thread until the cancel was sent, so the outcome
 *    does not depend on scheduling): WT_ECANCELED naming wt_fetch_cancel,
 *    the sink aborted (nothing published), fewer chunks than the shard's;
 *  - cancel before the thread starts work and free of a running fetch;
 *  - the synchronous fetch's own flag (wt_fetch_opts.cancel) while it waits
 *    on a silent server, and set before the call;
 *  - 16 concurrent async fetches over one client, all correct;
 *  - bad arguments and a bad struct_size are refused before anything starts.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <pthread.h>

#include "tests/util/fake_weightd.h"
#include "weights/async.h"
#include "weights/client.h"
#include "weights/engine.h"

static wt_client *open_client_timeout(const char *url, uint32_t request_timeout_ms)
{
	const char *eps[] = {url};
	wt_client_opts o;
	wt_client_opts_init(&o);
	o.endpoints = eps;
	o.n_endpoints = 1;
	o.window = 2;
	o.request_timeout_ms = request_timeout_ms;
	wt_client *c = NULL;
	wt_errbuf err;
	if (wt_client_open(&c, &o, &err) != WT_OK)
		fail_msg("wt_client_open: %s", err.msg);
	return c;
}

static wt_client *open_client(const char *url)
{
	return open_client_timeout(url, 5000);
}

typedef struct done_rec {
	pthread_mutex_t lk;
	int calls, result;
	char msg[600];
	wt_fetch_handle *h;
} done_rec;

static void on_done(void *ctx, wt_fetch_handle *h, int result, const wt_errbuf *err)
{
	done_rec *d = ctx;
	pthread_mutex_lock(&d->lk);
	d->calls++;
	d->result = result;
	d->h = h;
	snprintf(d->msg, sizeof(d->msg), "%s", result == WT_OK ? "" : err->msg);
	pthread_mutex_unlock(&d->lk);
}

/* Async options whose completion callback is on_done into d. */
static void done_opts(wt_async_opts *ao, done_rec *d)
{
	wt_async_opts_init(ao);
	ao->done = on_done;
	ao->done_ctx = d;
}

static void test_complete_callback_timeout(void **state)
{
	(void)state;
	fake *f = fake_start();
	wt_client *c = open_client(f->url);
	wt_manifest *m = fake_manifest(c);
	f->chunk_delay_ms = 20;
	wt_host_sink *hs;
	assert_int_equal(wt_host_sink_create(&hs, NULL), WT_OK);
	done_rec d = {.lk = PTHREAD_MUTEX_INITIALIZER};
	wt_async_opts ao;
	done_opts(&ao, &d);
	wt_fetch_stats st;
	wt_fetch_opts fo;
	wt_fetch_opts_init(&fo);
	fo.stats = &st;
	wt_fetch_handle *h = NULL;
	wt_errbuf err;
	assert_int_equal(wt_client_fetch_start(c, m, wt_host_sink_sink(hs), &fo, &ao, &h, &err),
	                 WT_OK);
	/* still running: the shard has several chunks of 20 ms each */
	int result = -1;
	assert_int_equal(wt_fetch_poll(h), 0);
	assert_int_equal(wt_fetch_wait(h, 0, &result, &err), WT_ETIMEDOUT);
	assert_int_equal(wt_fetch_wait(h, 5, &result, &err), WT_ETIMEDOUT);
	assert_non_null(strstr(err.msg, "still running"));
	assert_int_equal(result, -1);
	assert_int_equal(wt_fetch_wait(h, -1, &result, &err), WT_OK);
	assert_int_equal(result, WT_OK);
	assert_int_equal(wt_fetch_poll(h), 1);
	/* the callback ran once, before waiters were released, with the same result */
	assert_int_equal(d.calls, 1);
	assert_int_equal(d.result, WT_OK);
	assert_ptr_equal(d.h, h);
	assert_int_equal(st.chunks, wt_manifest_n_chunks(m));
	fake_check_sink(f, hs);
	/* a second wait returns the same; cancel after the end changes nothing */
	wt_fetch_cancel(h);
	assert_int_equal(wt_fetch_wait(h, 10, &result, &err), WT_OK);
	assert_int_equal(result, WT_OK);
	wt_fetch_free(h);
	assert_int_equal(d.calls, 1);
	wt_host_sink_destroy(hs);
	wt_manifest_free(m);
	wt_client_close(c);
	fake_stop(f);
}

typedef struct canceler {
	wt_fetch_handle *h;
	int chunks;      /* atomic: verified chunks seen by the caller's progress callback */
	int after;       /* cancel once this many chunks were seen */
	int cancel_sent; /* atomic: the other thread has called wt_fetch_cancel */
} canceler;

/* The caller's progress callback (still called under the async cancel check).
 * At chunk `after` it holds the fetch thread until the other thread has
 * canceled, so the cancel lands at that chunk however the threads are scheduled. */
static int count_chunks(void *ctx, uint64_t done, uint64_t total)
{
	(void)done, (void)total;
	canceler *k = ctx;
	int n = __atomic_add_fetch(&k->chunks, 1, __ATOMIC_ACQ_REL);
	for (int i = 0;
	     n == k->after && i < 10000 && !__atomic_load_n(&k->cancel_sent, __ATOMIC_ACQUIRE); i++)
		usleep(1000);
	return 0;
}

/* Another thread: wait until `after` chunks arrived, then cancel. */
static void *cancel_thread(void *arg)
{
	canceler *k = arg;
	while (__atomic_load_n(&k->chunks, __ATOMIC_ACQUIRE) < k->after && !wt_fetch_poll(k->h))
		usleep(1000);
	wt_fetch_cancel(k->h);
	__atomic_store_n(&k->cancel_sent, 1, __ATOMIC_RELEASE);
	return NULL;
}

static void test_cancel_other_thread(void **state)
{
	(void)state;
	fake *f = fake_start();
	wt_client *c = open_client(f->url);
	wt_manifest *m = fake_manifest(c);
	size_t n_chunks = wt_manifest_n_chunks(m);
	assert_true(n_chunks >= 4);
	f->chunk_delay_ms = 30;
	wt_host_sink *hs;
	assert_int_equal(wt_host_sink_create(&hs, NULL), WT_OK);
	done_rec d = {.lk = PTHREAD_MUTEX_INITIALIZER};
	wt_async_opts ao;
	done_opts(&ao, &d);
	wt_fetch_stats st;
	memset(&st, 0, sizeof(st));
	canceler k = {NULL, 0, 3, 0};
	wt_fetch_opts fo;
	wt_fetch_opts_init(&fo);
	fo.stats = &st;
	fo.progress = count_chunks;
	fo.progress_ctx = &k;
	wt_fetch_handle *h = NULL;
	wt_errbuf err;
	assert_int_equal(wt_client_fetch_start(c, m, wt_host_sink_sink(hs), &fo, &ao, &h, &err),
	                 WT_OK);
	k.h = h;
	pthread_t th;
	assert_int_equal(pthread_create(&th, NULL, cancel_thread, &k), 0);
	int result = -1;
	assert_int_equal(wt_fetch_wait(h, 20000, &result, &err), WT_OK);
	pthread_join(th, NULL);
	printf("canceled after %llu of %zu chunks: %s\n", (unsigned long long)st.chunks, n_chunks,
	       err.msg);
	assert_int_equal(result, WT_ECANCELED);
	assert_non_null(strstr(err.msg, "wt_fetch_cancel"));
	assert_int_equal(st.chunks, 3); /* canceled at the chunk the other thread saw */
	assert_true(st.chunks < n_chunks);
	assert_int_equal(k.chunks, (int)st.chunks);      /* the caller's callback saw every chunk */
	assert_int_equal(wt_host_sink_n_tensors(hs), 0); /* aborted: nothing published */
	assert_int_equal(d.calls, 1);
	assert_int_equal(d.result, WT_ECANCELED);
	wt_fetch_free(h);
	/* the client still works: a synchronous fetch afterwards succeeds */
	f->chunk_delay_ms = 0;
	assert_int_equal(wt_client_fetch(c, m, wt_host_sink_sink(hs), NULL, &err), WT_OK);
	fake_check_sink(f, hs);
	wt_host_sink_destroy(hs);
	wt_manifest_free(m);
	wt_client_close(c);
	fake_stop(f);
}

/* A server that stops answering (a stopped process: its connection stays up)
 * while the fetch waits for a chunk: wt_fetch_cancel ends the fetch within
 * 100 ms or so, its requests left in flight, instead of after the request
 * timeout (2 s here); wt_client_close then waits for their timeouts, no
 * longer. */
static void test_cancel_while_waiting(void **state)
{
	(void)state;
	fake *f = fake_start();
	wt_client *c = open_client_timeout(f->url, 2000);
	wt_manifest *m = fake_manifest(c);
	f->stall_after_chunks = 2; /* a chunk request or two, then silence */
	wt_host_sink *hs;
	assert_int_equal(wt_host_sink_create(&hs, NULL), WT_OK);
	wt_fetch_handle *h = NULL;
	wt_errbuf err;
	assert_int_equal(wt_client_fetch_start(c, m, wt_host_sink_sink(hs), NULL, NULL, &h, &err),
	                 WT_OK);
	usleep(300 * 1000);
	assert_int_equal(wt_fetch_poll(h), 0); /* still waiting */
	struct timespec t0, t1, t2;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	wt_fetch_cancel(h);
	int result = -1;
	assert_int_equal(wt_fetch_wait(h, 20000, &result, &err), WT_OK);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	double t = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	printf("canceled while waiting for a chunk: ended in %.2f s (%s)\n", t, err.msg);
	assert_int_equal(result, WT_ECANCELED);
	assert_non_null(strstr(err.msg, "wt_fetch_cancel"));
	assert_true(t < 1.0); /* 0.0-0.1 s; 1.7 s (the request timeout) before */
	assert_int_equal(wt_host_sink_n_tensors(hs), 0); /* aborted */
	wt_fetch_free(h);
	wt_host_sink_destroy(hs);
	wt_manifest_free(m);
	wt_client_close(c);
	clock_gettime(CLOCK_MONOTONIC, &t2);
	t = (double)(t2.tv_sec - t1.tv_sec) + (double)(t2.tv_nsec - t1.tv_nsec) / 1e9;
	printf("client closed in %.2f s\n", t);
	assert_true(t < 3.0);
	fake_stop(f);
}

typedef struct flag_setter {
	int *flag;
	unsigned after_ms;
	struct timespec at; /* when it was set */
} flag_setter;

static void *set_flag_later(void *arg)
{
	flag_setter *fs = arg;
	usleep(fs->after_ms * 1000u);
	clock_gettime(CLOCK_MONOTONIC, &fs->at);
	__atomic_store_n(fs->flag, 1, __ATOMIC_RELEASE);
	return NULL;
}

/* The synchronous fetch's own flag (wt_fetch_opts.cancel, 1.8): set from
 * another thread while wt_client_fetch waits on a server that stopped
 * answering, the call returns WT_ECANCELED naming it within about 100 ms, the
 * sink aborted; before, only the progress callback could stop it, at the next
 * chunk or retry: after the request timeout (2 s here). A flag set before
 * the call: WT_ECANCELED at once, the sink never begun. A caller built
 * against 1.7 (struct_size without the flag) is not canceled by it. */
static void test_sync_cancel_flag(void **state)
{
	(void)state;
	fake *f = fake_start();
	wt_client *c = open_client_timeout(f->url, 2000);
	wt_manifest *m = fake_manifest(c);
	wt_host_sink *hs;
	assert_int_equal(wt_host_sink_create(&hs, NULL), WT_OK);
	int flag = 1;
	wt_fetch_opts fo;
	wt_fetch_opts_init(&fo);
	assert_null(fo.cancel);
	fo.cancel = &flag;
	wt_errbuf err;
	assert_int_equal(wt_client_fetch(c, m, wt_host_sink_sink(hs), &fo, &err), WT_ECANCELED);
	assert_non_null(strstr(err.msg, "wt_fetch_opts.cancel before it began"));
	/* a 1.7-sized struct: the flag is past its end, unread: the fetch runs */
	fo.struct_size = offsetof(wt_fetch_opts, cancel);
	assert_int_equal(wt_client_fetch(c, m, wt_host_sink_sink(hs), &fo, &err), WT_OK);
	fake_check_sink(f, hs);
	wt_host_sink_destroy(hs);
	assert_int_equal(wt_host_sink_create(&hs, NULL), WT_OK);
	fo.struct_size = sizeof(fo);
	flag = 0;
	f->stall_after_chunks = 2; /* a chunk request or two, then silence */
	flag_setter fs = {.flag = &flag, .after_ms = 300};
	pthread_t th;
	assert_int_equal(pthread_create(&th, NULL, set_flag_later, &fs), 0);
	int rv = wt_client_fetch(c, m, wt_host_sink_sink(hs), &fo, &err);
	struct timespec t1;
	clock_gettime(CLOCK_MONOTONIC, &t1);
	pthread_join(th, NULL);
	double t = (double)(t1.tv_sec - fs.at.tv_sec) + (double)(t1.tv_nsec - fs.at.tv_nsec) / 1e9;
	printf("sync fetch: flag set while waiting for a chunk: ended %.2f s later (%s)\n", t,
	       err.msg);
	assert_int_equal(rv, WT_ECANCELED);
	assert_non_null(strstr(err.msg, "wt_fetch_opts.cancel"));
	assert_true(t < 1.0);                            /* 0.0-0.1 s */
	assert_int_equal(wt_host_sink_n_tensors(hs), 0); /* aborted */
	wt_host_sink_destroy(hs);
	/* and while chunks keep coming (one each 30 ms): at the next chunk, not
	 * at the end of the shard (the wait alone never saw it: weightctl fetches
	 * interrupted under load ran to their end) */
	f->stall_after_chunks = 0;
	f->chunk_delay_ms = 30;
	assert_int_equal(wt_host_sink_create(&hs, NULL), WT_OK);
	flag = 0;
	fs = (flag_setter){.flag = &flag, .after_ms = 200};
	wt_fetch_stats st;
	fo.stats = &st;
	assert_int_equal(pthread_create(&th, NULL, set_flag_later, &fs), 0);
	rv = wt_client_fetch(c, m, wt_host_sink_sink(hs), &fo, &err);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	pthread_join(th, NULL);
	t = (double)(t1.tv_sec - fs.at.tv_sec) + (double)(t1.tv_nsec - fs.at.tv_nsec) / 1e9;
	printf("sync fetch: flag set while chunks flow: ended %.2f s later after %llu of %zu "
	       "chunks (%s)\n",
	       t, (unsigned long long)st.chunks, wt_manifest_n_chunks(m), err.msg);
	assert_int_equal(rv, WT_ECANCELED);
	assert_non_null(strstr(err.msg, "wt_fetch_opts.cancel"));
	assert_true(t < 0.5);
	assert_true(st.chunks < wt_manifest_n_chunks(m));
	assert_int_equal(wt_host_sink_n_tensors(hs), 0);
	wt_host_sink_destroy(hs);
	wt_manifest_free(m);
	wt_client_close(c);
	fake_stop(f);
}

/* free of a running fetch cancels it and waits; the callback still fires once */
static void test_free_running(void **state)
{
	(void)state;
	fake *f = fake_start();
	wt_client *c = open_client(f->url);
	wt_manifest *m = fake_manifest(c);
	f->chunk_delay_ms = 30;
	wt_host_sink *hs;
	assert_int_equal(wt_host_sink_create(&hs, NULL), WT_OK);
	done_rec d = {.lk = PTHREAD_MUTEX_INITIALIZER};
	wt_async_opts ao;
	done_opts(&ao, &d);
	wt_fetch_handle *h = NULL;
	wt_errbuf err;
	assert_int_equal(wt_client_fetch_start(c, m, wt_host_sink_sink(hs), NULL, &ao, &h, &err),
	                 WT_OK);
	wt_fetch_cancel(h); /* possibly before the thread began: sink never called */
	wt_fetch_free(h);
	assert_int_equal(d.calls, 1);
	assert_int_equal(d.result, WT_ECANCELED);
	assert_non_null(strstr(d.msg, "wt_fetch_cancel"));
	assert_int_equal(wt_host_sink_n_tensors(hs), 0);
	wt_fetch_free(NULL);
	wt_host_sink_destroy(hs);
	wt_manifest_free(m);
	wt_client_close(c);
	fake_stop(f);
}

#define N_CONC 16

static void test_many_concurrent(void **state)
{
	(void)state;
	fake *f = fake_start();
	wt_client *c = open_client(f->url);
	wt_manifest *m = fake_manifest(c);
	f->chunk_delay_ms = 2;
	wt_host_sink *hs[N_CONC];
	wt_fetch_handle *h[N_CONC];
	done_rec d[N_CONC];
	wt_errbuf err;
	for (int i = 0; i < N_CONC; i++) {
		assert_int_equal(wt_host_sink_create(&hs[i], NULL), WT_OK);
		memset(&d[i], 0, sizeof(d[i]));
		pthread_mutex_init(&d[i].lk, NULL);
		wt_async_opts ao;
		done_opts(&ao, &d[i]);
		assert_int_equal(
		    wt_client_fetch_start(c, m, wt_host_sink_sink(hs[i]), NULL, &ao, &h[i], &err),
		    WT_OK);
	}
	for (int i = 0; i < N_CONC; i++) {
		int result = -1;
		assert_int_equal(wt_fetch_wait(h[i], 60000, &result, &err), WT_OK);
		if (result != WT_OK)
			fail_msg("fetch %d: %s", i, err.msg);
		assert_int_equal(d[i].calls, 1);
		fake_check_sink(f, hs[i]);
		wt_fetch_free(h[i]);
		wt_host_sink_destroy(hs[i]);
		pthread_mutex_destroy(&d[i].lk);
	}
	wt_manifest_free(m);
	wt_client_close(c);
	fake_stop(f);
}

static void test_bad_arguments(void **state)
{
	(void)state;
	fake *f = fake_start();
	wt_client *c = open_client(f->url);
	wt_manifest *m = fake_manifest(c);
	wt_host_sink *hs;
	assert_int_equal(wt_host_sink_create(&hs, NULL), WT_OK);
	wt_fetch_handle *h = NULL;
	wt_errbuf err;
	assert_int_equal(wt_client_fetch_start(c, m, NULL, NULL, NULL, &h, &err), WT_EINVAL);
	assert_null(h);
	wt_async_opts ao;
	wt_async_opts_init(&ao);
	ao.struct_size = 3;
	assert_int_equal(wt_client_fetch_start(c, m, wt_host_sink_sink(hs), NULL, &ao, &h, &err),
	                 WT_EVERSION);
	assert_non_null(strstr(err.msg, "wt_async_opts_init"));
	wt_fetch_opts fo;
	wt_fetch_opts_init(&fo);
	fo.struct_size = 0;
	assert_int_equal(wt_client_fetch_start(c, m, wt_host_sink_sink(hs), &fo, NULL, &h, &err),
	                 WT_EVERSION);
	assert_null(h);
	assert_int_equal(f->chunk_reqs, 0); /* nothing started */
	wt_host_sink_destroy(hs);
	wt_manifest_free(m);
	wt_client_close(c);
	fake_stop(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_complete_callback_timeout),
	    cmocka_unit_test(test_cancel_other_thread),
	    cmocka_unit_test(test_cancel_while_waiting),
	    cmocka_unit_test(test_sync_cancel_flag),
	    cmocka_unit_test(test_free_running),
	    cmocka_unit_test(test_many_concurrent),
	    cmocka_unit_test(test_bad_arguments),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
