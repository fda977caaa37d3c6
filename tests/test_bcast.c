/*
 * test_bcast.c — broadcast of a fetched rank to replicas (weights/bcast.h):
 * a root fetching from the in-process fake weightd (tests/util/fake_weightd.h)
 * through wt_bcast_root_sink and replicas on threads receiving over
 * tcp://127.0.0.1; a hostile root speaking the wire format (engine/bcast_int.h)
 * that flips a byte, dies, goes silent or sends frames out of order. Every
 * replica's sink is a counting wrapper around a host sink: its callbacks must
 * follow engine.h (abort exactly once on failure, never with end).
 * Shard bytes come from tu_fill() with FAKE_SEED (printed).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <nng/nng.h>
#include <pthread.h>

#include "common/common.h"
#include "engine/bcast_int.h"
#include "tests/test_bcast_util.h"
#include "weights/bcast.h"
#include "weights/client.h"
#include "weights/engine.h"

#define N_T FAKE_N_T

static fake *g_f;

static wt_client *open_client(void)
{
	const char *eps[] = {g_f->url};
	wt_client_opts o;
	wt_client_opts_init(&o);
	o.endpoints = eps;
	o.n_endpoints = 1;
	o.request_timeout_ms = 5000;
	o.backoff_initial_ms = 10;
	o.backoff_max_ms = 50;
	o.max_retries = 2;
	o.hash_refetch = 0;
	o.retry_budget_ms = 300;
	wt_client *c = NULL;
	wt_errbuf err;
	if (wt_client_open(&c, &o, &err) != WT_OK)
		fail_msg("wt_client_open: %s", err.msg);
	return c;
}

/* ---- a root over the fake ---- */

typedef struct root {
	wt_bcast_root *r;
	wt_host_sink *h;
	wt_client *c;
	wt_manifest *m;
} root;

static void root_open(root *x, uint32_t n_members, uint32_t join_ms, const char *group)
{
	memset(x, 0, sizeof(*x));
	x->c = open_client();
	x->m = fake_manifest(x->c);
	assert_int_equal(wt_host_sink_create(&x->h, NULL), WT_OK);
	wt_bcast_opts o;
	wt_bcast_opts_init(&o);
	o.url = "tcp://127.0.0.1:0";
	o.group = group;
	o.n_members = n_members;
	o.join_timeout_ms = join_ms;
	o.io_timeout_ms = 3000;
	wt_errbuf err;
	if (wt_bcast_root_create(&x->r, &o, wt_host_sink_sink(x->h), &err) != WT_OK)
		fail_msg("root: %s", err.msg);
	printf("root listens on %s for %u members\n", wt_bcast_root_url(x->r), n_members);
}

static int root_fetch(root *x, wt_errbuf *err)
{
	return wt_client_fetch(x->c, x->m, wt_bcast_root_sink(x->r), NULL, err);
}

static void root_close(root *x)
{
	wt_bcast_root_destroy(x->r);
	wt_host_sink_destroy(x->h);
	wt_manifest_free(x->m);
	wt_client_close(x->c);
}

/* Root + 3 replicas: every replica's host sink equals the fake's bytes (a
 * direct fetch: the root's own sink), each chunk a write after its check. */
static void test_bcast_three_replicas(void **state)
{
	(void)state;
	printf("seed 0x%x\n", FAKE_SEED);
	root x;
	root_open(&x, 4, 5000, "job-7");
	rep r[3];
	for (int i = 0; i < 3; i++)
		rep_start(&r[i], x.c, wt_bcast_root_url(x.r), "job-7");
	wt_errbuf err;
	int rv = root_fetch(&x, &err);
	if (rv != WT_OK)
		fail_msg("root fetch: %s", err.msg);
	fake_check_sink(g_f, x.h);
	for (int i = 0; i < 3; i++) {
		rep_join(&r[i]);
		if (r[i].rv != WT_OK)
			fail_msg("replica %d: %s", i, r[i].err.msg);
		fake_check_sink(g_f, r[i].cs.h);
		assert_int_equal(r[i].cs.begins, 1);
		assert_int_equal(r[i].cs.tbegins, N_T);
		assert_int_equal(r[i].cs.writes, (int)wt_manifest_n_chunks(r[i].m));
		assert_int_equal(r[i].cs.tends, N_T);
		assert_int_equal(r[i].cs.ends, 1);
		assert_int_equal(r[i].cs.aborts, 0);
		rep_free(&r[i]);
	}
	uint32_t done = 0;
	assert_int_equal(wt_bcast_root_result(x.r, &done, &err), WT_OK);
	assert_int_equal(done, 3);
	for (uint32_t k = 0; k < 3; k++)
		assert_int_equal(wt_bcast_root_replica(x.r, k, &err), WT_OK);
	assert_int_equal(wt_bcast_root_replica(x.r, 3, &err), WT_EINVAL); /* 3 replicas */
	assert_non_null(strstr(err.msg, "no replica 3"));
	assert_int_equal(wt_bcast_root_replica(x.r, UINT32_MAX, &err), WT_EINVAL);

	/* a root for one replica whose sink fails: the root's fetch succeeds, the
	 * result counts no replica and names its error (or, when the replica closed
	 * before the root's last send, its going away) */
	wt_bcast_root_destroy(x.r);
	wt_bcast_opts o;
	wt_bcast_opts_init(&o);
	o.url = "tcp://127.0.0.1:0";
	o.n_members = 2;
	o.io_timeout_ms = 3000;
	assert_int_equal(wt_bcast_root_create(&x.r, &o, wt_host_sink_sink(x.h), &err), WT_OK);
	rep_start(&r[0], x.c, wt_bcast_root_url(x.r), NULL);
	r[0].cs.fail_write = 3;
	assert_int_equal(root_fetch(&x, &err), WT_OK);
	rep_join(&r[0]);
	assert_int_equal(r[0].rv, WT_EIO);
	assert_aborted_once(&r[0]);
	rv = wt_bcast_root_result(x.r, &done, &err);
	printf("root result: %s %s\n", wt_errname(rv), err.msg);
	assert_int_equal(done, 0);
	assert_true((rv == WT_EIO && strstr(err.msg, "write 3 fails") != NULL) ||
	            (rv == WT_ECLOSED && strstr(err.msg, "went away") != NULL));
	assert_non_null(strstr(err.msg, "replica 0"));
	wt_errbuf e0;
	assert_int_equal(wt_bcast_root_replica(x.r, 0, &e0), rv); /* its own result */
	assert_string_equal(e0.msg, err.msg);
	rep_free(&r[0]);
	root_close(&x);
}

/* Replicas of another revision or group are refused at hello, naming the
 * difference, and do not count: the root times out naming how many joined. */
static void test_bcast_refused_at_hello(void **state)
{
	(void)state;
	root x;
	root_open(&x, 3, 1500, "job-7");
	rep other_group, other_rev;
	rep_start(&other_group, x.c, wt_bcast_root_url(x.r), "job-8");
	g_f->revision = 2; /* the next manifest the fake gives names rev2 */
	rep_start(&other_rev, x.c, wt_bcast_root_url(x.r), "job-7");
	wt_errbuf err;
	double t0 = now_s();
	int rv = root_fetch(&x, &err);
	double secs = now_s() - t0;
	g_f->revision = 1;
	printf("root: %s (%.2f s) %s\n", wt_errname(rv), secs, err.msg);
	assert_int_equal(rv, WT_ETIMEDOUT);
	assert_non_null(strstr(err.msg, "0 of 2 replicas joined"));
	assert_true(secs < 10.0);
	assert_int_equal(wt_host_sink_n_tensors(x.h), 0);
	rep_join(&other_group);
	rep_join(&other_rev);
	assert_int_equal(other_group.rv, WT_EINVAL);
	assert_non_null(strstr(other_group.err.msg, "group 'job-8'"));
	assert_int_equal(other_rev.rv, WT_EVERSION);
	assert_non_null(strstr(other_rev.err.msg, "revision rev2"));
	assert_non_null(strstr(other_rev.err.msg, "broadcasts rev1"));
	for (int i = 0; i < 2; i++) { /* refused before begin: the sink was never called */
		rep *r = i ? &other_rev : &other_group;
		assert_int_equal(r->cs.begins + r->cs.aborts + r->cs.ends, 0);
		rep_free(r);
	}
	root_close(&x);
}

/* A replica that never connects: the root's begin fails naming how many
 * joined; the one that joined is told so and its sink never begins. */
static void test_bcast_missing_replica(void **state)
{
	(void)state;
	root x;
	root_open(&x, 3, 800, NULL);
	rep r;
	rep_start(&r, x.c, wt_bcast_root_url(x.r), NULL);
	wt_errbuf err;
	int rv = root_fetch(&x, &err);
	printf("root: %s %s\n", wt_errname(rv), err.msg);
	assert_int_equal(rv, WT_ETIMEDOUT);
	assert_non_null(strstr(err.msg, "1 of 2 replicas joined within 800 ms"));
	rep_join(&r);
	assert_int_equal(r.rv, WT_ETIMEDOUT);
	assert_non_null(strstr(r.err.msg, "1 of 2 replicas joined"));
	assert_int_equal(r.cs.begins + r.cs.aborts, 0);
	for (uint32_t k = 0; k < 2; k++) { /* it did not begin: each says why */
		assert_int_equal(wt_bcast_root_replica(x.r, k, &err), WT_ETIMEDOUT);
		assert_non_null(strstr(err.msg, "1 of 2 replicas joined"));
	}
	rep_free(&r);
	root_close(&x);
}

/* The root's own fetch fails (a chunk always corrupt at the fake): its
 * replicas abort with WT_ECANCELED, once. */
static void test_bcast_root_aborts(void **state)
{
	(void)state;
	root x;
	root_open(&x, 3, 5000, NULL);
	rep r[2];
	for (int i = 0; i < 2; i++)
		rep_start(&r[i], x.c, wt_bcast_root_url(x.r), NULL);
	g_f->corrupt_chunk = 5;
	wt_errbuf err;
	int rv = root_fetch(&x, &err);
	g_f->corrupt_chunk = -1;
	assert_int_equal(rv, WT_EHASH);
	for (uint32_t k = 0; k < 2; k++) { /* both canceled with the root's fetch */
		assert_int_equal(wt_bcast_root_replica(x.r, k, &err), WT_ECANCELED);
		assert_non_null(strstr(err.msg, "aborted"));
	}
	for (int i = 0; i < 2; i++) {
		rep_join(&r[i]);
		assert_int_equal(r[i].rv, WT_ECANCELED);
		assert_non_null(strstr(r[i].err.msg, "root aborted"));
		assert_aborted_once(&r[i]);
		rep_free(&r[i]);
	}
	root_close(&x);
}

/* Connections that connect and say nothing (a port scanner, a stuck
 * process), opened before the replicas dial: the hellos are read
 * concurrently, so the broadcast begins at once, well under io_timeout_ms
 * (3000 ms here; the old join waited that long for each silent one). 40 of
 * them: more than the 32 hellos read at once, so the oldest are evicted. */
static void test_bcast_silent_connections(void **state)
{
	(void)state;
	root x;
	root_open(&x, 3, 20000, NULL);
	nng_stream *silent[40] = {NULL};
	wt_errbuf err;
	for (int i = 0; i < 40; i++)
		assert_int_equal(
		    engine_bcast_dial(wt_bcast_root_url(x.r), 2000, NULL, &silent[i], &err), WT_OK);
	rep r[2];
	for (int i = 0; i < 2; i++)
		rep_start(&r[i], x.c, wt_bcast_root_url(x.r), NULL);
	double t0 = now_s();
	int rv = root_fetch(&x, &err);
	double secs = now_s() - t0;
	printf("root: %s in %.2f s %s\n", wt_errname(rv), secs, rv ? err.msg : "");
	for (int i = 0; i < 2; i++)
		rep_join(&r[i]);
	assert_int_equal(rv, WT_OK);
	assert_true(secs < 1.5);
	for (int i = 0; i < 2; i++) {
		assert_int_equal(r[i].rv, WT_OK);
		fake_check_sink(g_f, r[i].cs.h);
		rep_free(&r[i]);
	}
	uint32_t done = 0;
	assert_int_equal(wt_bcast_root_result(x.r, &done, &err), WT_OK);
	assert_int_equal(done, 2);
	for (int i = 0; i < 40; i++)
		engine_bcast_close(silent[i]);
	root_close(&x);
}

/* ---- a hostile root speaking the wire format ---- */

enum { H_FLIP, H_TRUE, H_DIE, H_SILENT, H_OUT_OF_ORDER, H_TOO_LONG, H_MUTE };

typedef struct hroot {
	nng_stream_listener *l;
	char url[64];
	int mode;
	pthread_t th;
	_Atomic int stop;
	_Atomic int heard; /* the replica's hello was read */
} hroot;

static int hsend(nng_stream *st, uint32_t type, uint32_t t, uint64_t off, uint64_t len,
                 const void *data)
{
	engine_bcast_frame f = {.type = type, .tensor = t, .off = off, .len = len};
	int rv = engine_bcast_frame_send(st, &f, 3000, NULL);
	if (rv == WT_OK && data != NULL && len > 0)
		rv = engine_bcast_io(st, NULL, 1, (void *)data, (size_t)len, 3000, "test", NULL);
	return rv;
}

/* The fake's bytes in 700-byte frames (not the manifest's 1024-byte chunks:
 * the replica re-chunks), tensor 2's byte 1500 flipped in H_FLIP. */
static void hsend_all(hroot *h, nng_stream *st)
{
	for (uint32_t t = 0; t < N_T; t++) {
		if (h->mode == H_OUT_OF_ORDER && t == 0)
			t = 1;
		hsend(st, ENGINE_BCAST_F_TBEGIN, t, 0, 0, NULL);
		uint8_t *copy = malloc(g_f->nbytes[t] + 1);
		memcpy(copy, g_f->data[t], g_f->nbytes[t]);
		if (h->mode == H_FLIP && t == 2)
			copy[1500] ^= 0x10;
		if (h->mode == H_TOO_LONG) {
			hsend(st, ENGINE_BCAST_F_DATA, t, 0, g_f->nbytes[t] + 1, NULL);
			free(copy);
			return;
		}
		for (uint64_t off = 0; off < g_f->nbytes[t]; off += 700) {
			uint64_t n = g_f->nbytes[t] - off < 700 ? g_f->nbytes[t] - off : 700;
			hsend(st, ENGINE_BCAST_F_DATA, t, off, n, copy + off);
			if (h->mode == H_DIE && off >= 2800) {
				free(copy);
				return; /* closed by the caller: the root dies */
			}
		}
		free(copy);
		hsend(st, ENGINE_BCAST_F_TEND, t, 0, 0, NULL);
	}
	hsend(st, ENGINE_BCAST_F_END, 0, 0, 0, NULL);
}

static void *hroot_main(void *arg)
{
	hroot *h = arg;
	nng_aio *aio;
	nng_aio_alloc(&aio, NULL, NULL);
	nng_aio_set_timeout(aio, 10000);
	nng_stream_listener_accept(h->l, aio);
	nng_aio_wait(aio);
	nng_stream *st = nng_aio_result(aio) == 0 ? nng_aio_get_output(aio, 0) : NULL;
	nng_aio_free(aio);
	engine_bcast_hello *hello = malloc(sizeof(*hello));
	if (st != NULL && engine_bcast_hello_recv(st, hello, 3000, NULL) == WT_OK)
		h->heard = 1;
	while (h->mode == H_MUTE && !h->stop) /* never admits it */
		usleep(10000);
	if (h->heard && h->mode != H_MUTE &&
	    engine_bcast_reply_send(st, NULL, WT_OK, NULL, 3000, NULL) == WT_OK) {
		if (h->mode == H_SILENT) {
			hsend(st, ENGINE_BCAST_F_TBEGIN, 0, 0, 0, NULL);
			while (!h->stop)
				usleep(10000);
		} else {
			hsend_all(h, st);
		}
	}
	free(hello);
	engine_bcast_close(st);
	return NULL;
}

static void hroot_start(hroot *h, int mode)
{
	memset(h, 0, sizeof(*h));
	h->mode = mode;
	assert_int_equal(nng_stream_listener_alloc(&h->l, "tcp://127.0.0.1:0"), 0);
	assert_int_equal(nng_stream_listener_listen(h->l), 0);
	int port = 0;
	assert_int_equal(nng_stream_listener_get_int(h->l, NNG_OPT_TCP_BOUND_PORT, &port), 0);
	snprintf(h->url, sizeof(h->url), "tcp://127.0.0.1:%d", port);
	assert_int_equal(pthread_create(&h->th, NULL, hroot_main, h), 0);
}

static void hroot_stop(hroot *h)
{
	h->stop = 1;
	pthread_join(h->th, NULL);
	nng_stream_listener_close(h->l);
	nng_stream_listener_free(h->l);
}

/* One replica against a hostile root in mode; returns it joined (caller frees). */
static void against(rep *r, int mode, uint32_t io_ms)
{
	wt_client *c = open_client();
	hroot h;
	hroot_start(&h, mode);
	memset(r, 0, sizeof(*r));
	snprintf(r->url, sizeof(r->url), "%s", h.url);
	r->io_ms = io_ms;
	r->m = fake_manifest(c);
	csink_init(&r->cs);
	assert_int_equal(pthread_create(&r->th, NULL, rep_main, r), 0);
	rep_join(r);
	hroot_stop(&h);
	wt_client_close(c);
}

/* A flipped byte: the chunk's hash fails, WT_EHASH naming the tensor and the
 * chunk, before the sink saw a byte of that chunk. */
static void test_bcast_corrupt_byte(void **state)
{
	(void)state;
	rep r;
	against(&r, H_FLIP, 3000);
	assert_int_equal(r.rv, WT_EHASH);
	assert_non_null(strstr(r.err.msg, "tensor 'c.weight' chunk at 1024"));
	assert_aborted_once(&r);
	assert_int_equal(r.cs.writes, 9 + 1); /* a.weight's 9 chunks, c.weight's first */
	rep_free(&r);
}

/* Right bytes but the replica's manifest lists another tensor hash (as if the
 * root had sent bytes of another revision that hash chunk by chunk): the
 * tensor's XXH3-128 fails before tensor_end. */
static void test_bcast_tensor_hash(void **state)
{
	(void)state;
	g_f->bad_tensor_hash = 1;
	rep r;
	against(&r, H_TRUE, 3000);
	g_f->bad_tensor_hash = 0;
	assert_int_equal(r.rv, WT_EHASH);
	assert_non_null(strstr(r.err.msg, "tensor 'c.weight' (2000 bytes) hashes to"));
	assert_aborted_once(&r);
	assert_int_equal(r.cs.tends, 2); /* a.weight, b.bias; not c.weight */
	rep_free(&r);
}

/* The root dies mid-tensor: WT_ECLOSED at once (well within io_timeout). */
static void test_bcast_root_dies(void **state)
{
	(void)state;
	rep r;
	against(&r, H_DIE, 20000);
	assert_int_equal(r.rv, WT_ECLOSED);
	assert_non_null(strstr(r.err.msg, "went away"));
	assert_true(r.secs < 10.0);
	assert_aborted_once(&r);
	rep_free(&r);
}

/* The root goes silent: WT_ETIMEDOUT after twice io_timeout_ms (between
 * frames the root may spend io_timeout_ms on a stuck replica), no hang. */
static void test_bcast_root_silent(void **state)
{
	(void)state;
	rep r;
	against(&r, H_SILENT, 400);
	assert_int_equal(r.rv, WT_ETIMEDOUT);
	assert_non_null(strstr(r.err.msg, "800 ms"));
	assert_true(r.secs >= 0.75 && r.secs < 10.0);
	assert_aborted_once(&r);
	rep_free(&r);
}

/* ---- wt_bcast_cancel ---- */

/* Replica r for url with a cancellation and timeouts (30 s) far beyond the
 * test: only the cancellation ends it early (else WT_ETIMEDOUT, 30-60 s). */
static void rep_cancelable(rep *r, wt_client *c, const char *url)
{
	rep_init(r, c, url, NULL);
	r->io_ms = r->join_ms = 30000;
	assert_int_equal(wt_bcast_cancel_create(&r->cancel, NULL), WT_OK);
}

static void rep_canceled(rep *r)
{
	rep_join(r);
	assert_int_equal(r->rv, WT_ECANCELED);
	assert_non_null(strstr(r->err.msg, "wt_bcast_cancel_fire"));
	wt_bcast_cancel_destroy(r->cancel);
}

static void wait_flag(_Atomic int *flag)
{
	for (int i = 0; i < 2000 && !*flag; i++) /* at most 20 s */
		usleep(10000);
	assert_true(*flag);
}

/* Fired before the call, while dialing a root that does not listen, while
 * waiting to be admitted (the root read the hello and never answers) and
 * mid-broadcast, the root silent (while blocked on the next frame, and from
 * the sink's tensor_begin: before the next receive starts): each
 * wt_bcast_receive returns WT_ECANCELED; the sink is never begun before
 * admission, and is aborted exactly once after. */
static void test_bcast_cancel(void **state)
{
	(void)state;
	wt_client *c = open_client();
	nng_stream_listener *l; /* a port nobody listens on any more */
	int port = 0;
	assert_int_equal(nng_stream_listener_alloc(&l, "tcp://127.0.0.1:0"), 0);
	assert_int_equal(nng_stream_listener_listen(l), 0);
	assert_int_equal(nng_stream_listener_get_int(l, NNG_OPT_TCP_BOUND_PORT, &port), 0);
	nng_stream_listener_free(l);
	char nobody[64];
	snprintf(nobody, sizeof(nobody), "tcp://127.0.0.1:%d", port);
	rep r;
	for (int early = 1; early >= 0; early--) {
		rep_cancelable(&r, c, nobody);
		if (early)
			wt_bcast_cancel_fire(r.cancel);
		assert_int_equal(pthread_create(&r.th, NULL, rep_main, &r), 0);
		usleep(200000); /* dialing (when not fired before) */
		wt_bcast_cancel_fire(r.cancel);
		wt_bcast_cancel_fire(r.cancel); /* idempotent */
		rep_canceled(&r);
		assert_int_equal(r.cs.begins, 0);
		rep_free(&r);
	}
	for (int k = 0; k < 3; k++) {
		int mode = k == 0 ? H_MUTE : H_SILENT;
		hroot h;
		hroot_start(&h, mode);
		rep_cancelable(&r, c, h.url);
		if (k == 2)
			r.cs.cancel = r.cancel;
		assert_int_equal(pthread_create(&r.th, NULL, rep_main, &r), 0);
		wait_flag(mode == H_MUTE ? &h.heard : &r.cs.began);
		wt_bcast_cancel_fire(r.cancel);
		rep_canceled(&r);
		if (mode == H_MUTE)
			assert_int_equal(r.cs.begins, 0);
		else
			assert_aborted_once(&r);
		hroot_stop(&h);
		rep_free(&r);
	}
	/* a 1.5 struct (it ends before cancel) never reads what lies beyond */
	rep_init(&r, c, nobody, NULL);
	wt_bcast_opts o;
	wt_bcast_opts_init(&o);
	o.struct_size = offsetof(wt_bcast_opts, cancel);
	o.url = nobody;
	o.join_timeout_ms = 300;
	assert_int_equal(wt_bcast_cancel_create(&o.cancel, NULL), WT_OK);
	wt_bcast_cancel_fire(o.cancel);
	assert_int_equal(wt_bcast_receive(&o, r.m, &r.cs.base, &r.err), WT_ETIMEDOUT);
	wt_bcast_cancel_destroy(o.cancel);
	rep_free(&r);
	wt_client_close(c);
}

/* Frames that do not fit the replica's manifest: a tensor out of order, a
 * length past the tensor's end (refused before a byte of it is read). */
static void test_bcast_bad_frames(void **state)
{
	(void)state;
	rep r;
	against(&r, H_OUT_OF_ORDER, 3000);
	assert_int_equal(r.rv, WT_EPROTO);
	assert_non_null(strstr(r.err.msg, "began tensor 1; expected 0"));
	assert_aborted_once(&r);
	assert_int_equal(r.cs.tbegins, 0);
	rep_free(&r);
	against(&r, H_TOO_LONG, 3000);
	assert_int_equal(r.rv, WT_EPROTO);
	assert_non_null(strstr(r.err.msg, "sent 8449 bytes at 0 of tensor 0"));
	assert_aborted_once(&r);
	rep_free(&r);
}

/* Bad options name the field. */
static void test_bcast_opts(void **state)
{
	(void)state;
	wt_host_sink *h;
	assert_int_equal(wt_host_sink_create(&h, NULL), WT_OK);
	wt_bcast_opts o;
	wt_bcast_opts_init(&o);
	wt_bcast_root *r = NULL;
	wt_errbuf err;
	assert_int_equal(wt_bcast_root_create(&r, &o, wt_host_sink_sink(h), &err), WT_EINVAL);
	assert_non_null(strstr(err.msg, "url not set"));
	o.url = "tcp://127.0.0.1:0";
	o.n_members = 0;
	assert_int_equal(wt_bcast_root_create(&r, &o, wt_host_sink_sink(h), &err), WT_EINVAL);
	assert_non_null(strstr(err.msg, "n_members 0"));
	o.n_members = 2;
	o.max_lag_bytes = 1000; /* under 64 KiB: no room for a chunk */
	assert_int_equal(wt_bcast_root_create(&r, &o, wt_host_sink_sink(h), &err), WT_EINVAL);
	assert_non_null(strstr(err.msg, "max_lag_bytes 1000"));
	o.struct_size = offsetof(wt_bcast_opts, max_lag_bytes); /* a 1.5 caller: not read */
	o.url = "tcp://127.0.0.1:0";
	assert_int_equal(wt_bcast_root_create(&r, &o, wt_host_sink_sink(h), &err), WT_OK);
	wt_bcast_root_destroy(r);
	r = NULL;
	wt_bcast_opts_init(&o);
	o.n_members = 2;
	o.url = "bogus://x";
	assert_int_not_equal(wt_bcast_root_create(&r, &o, wt_host_sink_sink(h), &err), WT_OK);
	assert_non_null(strstr(err.msg, "cannot listen on bogus://x"));
	assert_null(r);
	wt_host_sink_destroy(h);
}

static int setup(void **state)
{
	(void)state;
	g_f = fake_start();
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	fake_stop(g_f);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_bcast_three_replicas),
	    cmocka_unit_test(test_bcast_refused_at_hello),
	    cmocka_unit_test(test_bcast_missing_replica),
	    cmocka_unit_test(test_bcast_root_aborts),
	    cmocka_unit_test(test_bcast_silent_connections),
	    cmocka_unit_test(test_bcast_corrupt_byte),
	    cmocka_unit_test(test_bcast_tensor_hash),
	    cmocka_unit_test(test_bcast_root_dies),
	    cmocka_unit_test(test_bcast_root_silent),
	    cmocka_unit_test(test_bcast_bad_frames),
	    cmocka_unit_test(test_bcast_cancel),
	    cmocka_unit_test(test_bcast_opts),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
