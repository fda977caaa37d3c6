/*
 * test_bcast_slow.c — broadcast replicas that hold the root up: one that says
 * a valid hello and then never reads (weights/bcast.h: "a replica that stops
 * reading is dropped after io_timeout_ms"), one that reads slowly but
 * steadily (dropped when it is max_lag_bytes behind the fastest), ones that
 * read everything and never acknowledge (one io_timeout_ms for all). The shard must not fit in the
 * socket buffers, so it is built here: one U8 tensor of BIG_NBYTES in 64 KiB chunks (tu_fill bytes,
 * seed printed), served over ipc:// (a unix socket's send buffer does not
 * grow, unlike loopback TCP's). The root's sink is driven the way
 * wt_client_fetch drives it (engine.h order); the good replicas run
 * wt_bcast_receive on threads with the same io_timeout_ms as the root.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cmocka.h>
#include <nng/nng.h>
#include <pthread.h>

#include "client/client.h"
#include "common/common.h"
#include "engine/bcast_int.h"
#include "proto/wire.h"
#include "tests/util/pb_manifest.h"
#include "tests/util/testutil.h"
#include "weights/bcast.h"
#include "weights/weights.h"

#define SEED        0x51077u
#define BIG_NBYTES  (4u << 20)
#define CHUNK_BYTES (64u << 10)
#define N_CHUNKS    (BIG_NBYTES / CHUNK_BYTES)
#define IO_MS       600u
#define N_DEAF      3
#define SLOW_LAG    (1u << 20) /* max_lag_bytes of the slow-replica test */
#define SLOW_LAG_MS 300u       /* and its lag_timeout_ms */
#define SLOW_MS     30u        /* the slow replica's pause per 64 KiB frame */
#define N_MUTE      6
#define N_GONE      12

static uint8_t *g_data;
static uint64_t g_end_ns; /* when drive() called the root sink's end() */

/* One tensor "big" (U8[BIG_NBYTES]) in N_CHUNKS chunks, as weightd would send it. */
static wt_manifest *big_manifest(void)
{
	pbm b;
	pbm_build(&b, &(pbm_tensor){"big", WT_U8, g_data, BIG_NBYTES}, 1, CHUNK_BYTES, false);
	wt_manifest *m = NULL;
	wt_errbuf err;
	if (pbm_to_manifest(&b, CHUNK_BYTES, &m, &err) != WT_OK)
		fail_msg("manifest: %s", err.msg);
	pbm_free(&b);
	return m;
}

/* What wt_client_fetch does with a sink, chunk by chunk. */
static int drive(wt_sink *s, const wt_manifest *m, wt_errbuf *err)
{
	int rv = s->ops->begin(s, m, err);
	if (rv != WT_OK)
		return rv;
	rv = s->ops->tensor_begin(s, 0, err);
	for (size_t i = 0; rv == WT_OK && i < N_CHUNKS; i++)
		rv = s->ops->write(s, 0, (uint64_t)i * CHUNK_BYTES, g_data + i * CHUNK_BYTES,
		                   CHUNK_BYTES, err);
	if (rv == WT_OK)
		rv = s->ops->tensor_end(s, 0, err);
	g_end_ns = common_now_ns();
	if (rv == WT_OK)
		return s->ops->end(s, err);
	s->ops->abort(s);
	return rv;
}

typedef struct rep {
	const char *url;
	const wt_manifest *m;
	wt_host_sink *h;
	int rv;
	wt_errbuf err;
	pthread_t th;
} rep;

static void *rep_main(void *arg)
{
	rep *r = arg;
	wt_bcast_opts o;
	wt_bcast_opts_init(&o);
	o.url = r->url;
	o.io_timeout_ms = IO_MS;
	o.join_timeout_ms = 5000;
	r->rv = wt_bcast_receive(&o, r->m, wt_host_sink_sink(r->h), &r->err);
	return NULL;
}

/* The shard's manifest and a root over a host sink, on a fresh ipc:// URL. */
typedef struct fixture {
	wt_manifest *m;
	wt_host_sink *root_h;
	char url[128];
	wt_bcast_root *r;
} fixture;

/* A root for n_members, with IO_MS, max_lag_bytes max_lag and lag_timeout_ms
 * lag_ms (0: the defaults). */
static void fx_open(fixture *fx, uint32_t n_members, uint64_t max_lag, uint32_t lag_ms)
{
	static int seq;
	fx->m = big_manifest();
	assert_int_equal(wt_host_sink_create(&fx->root_h, NULL), WT_OK);
	snprintf(fx->url, sizeof(fx->url), "ipc:///tmp/wt-test-bcast-slow-%d-%d.ipc", (int)getpid(),
	         seq++);
	wt_bcast_opts o;
	wt_bcast_opts_init(&o);
	o.url = fx->url;
	o.n_members = n_members;
	o.join_timeout_ms = 5000;
	o.io_timeout_ms = IO_MS;
	o.max_lag_bytes = max_lag;
	o.lag_timeout_ms = lag_ms;
	wt_errbuf err;
	fx->r = NULL;
	if (wt_bcast_root_create(&fx->r, &o, wt_host_sink_sink(fx->root_h), &err) != WT_OK)
		fail_msg("root: %s", err.msg);
}

/* The root's result after its fetch: want, with the 2 good replicas done
 * (its message in err). */
static void fx_result(fixture *fx, int want, wt_errbuf *err)
{
	uint32_t done = 0;
	int rv = wt_bcast_root_result(fx->r, &done, err);
	printf("result: %s, %u done: %s\n", wt_errname(rv), done, rv ? err->msg : "");
	assert_int_equal(rv, want);
	assert_int_equal(done, 2);
}

static void fx_close(fixture *fx)
{
	wt_bcast_root_destroy(fx->r);
	wt_host_sink_destroy(fx->root_h);
	wt_manifest_free(fx->m);
}

/* Two good replicas (wt_bcast_receive) on threads. */
static void good_start(rep g[2], const char *url, const wt_manifest *m)
{
	for (int i = 0; i < 2; i++) {
		memset(&g[i], 0, sizeof(g[i]));
		g[i].url = url;
		g[i].m = m;
		assert_int_equal(wt_host_sink_create(&g[i].h, NULL), WT_OK);
		assert_int_equal(pthread_create(&g[i].th, NULL, rep_main, &g[i]), 0);
	}
}

/* Join them: each got every byte. */
static void good_join(rep g[2])
{
	for (int i = 0; i < 2; i++) {
		pthread_join(g[i].th, NULL);
		printf("replica %d: %s %s\n", i, wt_errname(g[i].rv), g[i].rv ? g[i].err.msg : "");
		assert_int_equal(g[i].rv, WT_OK);
		const void *d;
		uint64_t n;
		assert_int_equal(wt_host_sink_find(g[i].h, "big", &d, &n), WT_OK);
		assert_int_equal(n, BIG_NBYTES);
		assert_memory_equal(d, g_data, BIG_NBYTES);
		wt_host_sink_destroy(g[i].h);
	}
}

/* Hello for m, then nothing: never reads a byte. Caller closes *out. */
static void deaf_join(const char *url, const wt_manifest *m, nng_stream **out)
{
	engine_bcast_hello *h = calloc(1, sizeof(*h));
	assert_non_null(h);
	snprintf(h->revision, sizeof(h->revision), "%s", wt_manifest_revision(m));
	snprintf(h->layout, sizeof(h->layout), "%s", wt_manifest_layout_text(m));
	h->tp_rank = wt_manifest_tp_rank(m);
	h->ep_rank = wt_manifest_ep_rank(m);
	wt_errbuf err;
	assert_int_equal(engine_bcast_dial(url, 2000, NULL, out, &err), WT_OK);
	assert_int_equal(engine_bcast_hello_send(*out, NULL, h, 2000, &err), WT_OK);
	free(h);
}

/* Root + 2 good replicas + N_DEAF that never read (joined first, so a root
 * that sent one replica after another would meet them first in every send):
 * the root's fetch completes, the good replicas (with the root's
 * io_timeout_ms) get every byte, the result counts 2 and names a drop.
 * Sent one after another, the good replicas waited N_DEAF x io_timeout_ms
 * for a frame and timed out. */
static void test_bcast_deaf_replica(void **state)
{
	(void)state;
	printf("seed 0x%x, %u bytes in %u chunks, io_timeout_ms %u\n", SEED, BIG_NBYTES, N_CHUNKS,
	       IO_MS);
	fixture fx;
	fx_open(&fx, 3 + N_DEAF, 0, 0);
	wt_errbuf err;
	nng_stream *deaf[N_DEAF];
	for (int i = 0; i < N_DEAF; i++)
		deaf_join(fx.url, fx.m, &deaf[i]);
	usleep(100 * 1000); /* accepted before the good ones dial */
	rep g[2];
	good_start(g, fx.url, fx.m);
	uint64_t t0 = common_now_ns();
	int rv = drive(wt_bcast_root_sink(fx.r), fx.m, &err);
	double secs = (double)(common_now_ns() - t0) / 1e9;
	printf("root: %s in %.2f s %s\n", wt_errname(rv), secs, rv ? err.msg : "");
	assert_int_equal(rv, WT_OK);
	assert_true(secs < 5.0);
	good_join(g);
	fx_result(&fx, WT_ETIMEDOUT, &err);
	assert_non_null(strstr(err.msg, "dropped"));
	assert_non_null(strstr(err.msg, "sending"));
	for (int i = 0; i < N_DEAF; i++)
		engine_bcast_close(deaf[i]);
	fx_close(&fx);
}

/* A replica played by hand: joins, then reads the root's frames, pausing
 * pause_ms after each DATA frame; at END it acknowledges (ack) or says
 * nothing and waits for the root to close. */
typedef struct raw_rep {
	const char *url;
	const wt_manifest *m;
	uint32_t pause_ms;
	int ack;
	uint64_t got; /* DATA bytes read */
	int end;      /* END read */
	int rv;       /* the read that ended it */
	nng_stream *st;
	pthread_t th;
} raw_rep;

static void *raw_main(void *arg)
{
	raw_rep *x = arg;
	int code = WT_OK;
	char msg[WT_ERRMSG_MAX];
	wt_errbuf err;
	x->rv = engine_bcast_reply_recv(x->st, NULL, &code, msg, sizeof(msg), 5000, &err);
	uint8_t buf[CHUNK_BYTES];
	while (x->rv == WT_OK && !x->end) {
		uint8_t hdr[ENGINE_BCAST_FRAME];
		engine_bcast_frame f;
		x->rv = engine_bcast_io(x->st, NULL, 0, hdr, sizeof(hdr), 5000, "frame", &err);
		if (x->rv != WT_OK)
			break;
		engine_bcast_frame_decode(hdr, &f);
		assert_true(f.len <= sizeof(buf));
		if (f.len > 0 && (x->rv = engine_bcast_io(x->st, NULL, 0, buf, f.len, 5000, "data",
		                                          &err)) != WT_OK)
			break;
		x->got += f.len;
		x->end = f.type == ENGINE_BCAST_F_END;
		if (f.type == ENGINE_BCAST_F_DATA && x->pause_ms > 0)
			usleep(x->pause_ms * 1000);
	}
	if (x->end && x->ack)
		x->rv = engine_bcast_reply_send(x->st, NULL, WT_OK, NULL, 5000, &err);
	else if (x->end) /* until the root closes */
		x->rv = engine_bcast_reply_recv(x->st, NULL, &code, msg, sizeof(msg), 5000, &err);
	return NULL;
}

static void raw_start(raw_rep *x, const char *url, const wt_manifest *m, uint32_t pause_ms, int ack)
{
	memset(x, 0, sizeof(*x));
	x->url = url;
	x->m = m;
	x->pause_ms = pause_ms;
	x->ack = ack;
	deaf_join(url, m, &x->st);
	assert_int_equal(pthread_create(&x->th, NULL, raw_main, x), 0);
}

static void raw_join(raw_rep *x)
{
	pthread_join(x->th, NULL);
	engine_bcast_close(x->st);
}

/* Root + 2 good replicas + 1 that reads every frame, steadily, SLOW_MS after
 * each 64 KiB (each well within io_timeout_ms; 2 s for the shard): with
 * max_lag_bytes SLOW_LAG it is a whole queue behind the fastest within about
 * 0.1 s, holds the root up SLOW_LAG_MS, and is dropped, naming the lag, before
 * it read the shard; the good ones and the root finish without it. Before the
 * queue, every frame waited for it: it read everything, acknowledged, and the
 * root reported all 3 done at its pace. */
static void test_bcast_slow_steady(void **state)
{
	(void)state;
	fixture fx;
	fx_open(&fx, 4, SLOW_LAG, SLOW_LAG_MS);
	raw_rep slow;
	raw_start(&slow, fx.url, fx.m, SLOW_MS, 1);
	usleep(100 * 1000); /* dials first (usually admitted as replica 0) */
	rep g[2];
	good_start(g, fx.url, fx.m);
	wt_errbuf err;
	uint64_t t0 = common_now_ns();
	int rv = drive(wt_bcast_root_sink(fx.r), fx.m, &err);
	printf("root: %s in %.2f s %s\n", wt_errname(rv), (double)(common_now_ns() - t0) / 1e9,
	       rv ? err.msg : "");
	assert_int_equal(rv, WT_OK);
	good_join(g);
	raw_join(&slow);
	printf("slow replica: %s after %llu of %u bytes\n", wt_errname(slow.rv),
	       (unsigned long long)slow.got, BIG_NBYTES);
	fx_result(&fx, WT_ETIMEDOUT, &err);
	assert_non_null(strstr(err.msg, "behind the fastest"));
	assert_non_null(strstr(err.msg, "300 ms (lag_timeout_ms)"));
	/* exactly one replica dropped, the slow one, whichever number the root admitted it as:
	 * hellos are read concurrently, so under load a good one's may be read first (a CI
	 * emulation beside two helper builds dropped "replica 1") */
	int dropped = 0;
	for (uint32_t k = 0; k < 3; k++) {
		wt_errbuf e;
		int rk = wt_bcast_root_replica(fx.r, k, &e);
		if (rk == WT_OK)
			continue;
		dropped++;
		assert_int_equal(rk, WT_ETIMEDOUT);
		assert_non_null(strstr(e.msg, "behind the fastest"));
	}
	assert_int_equal(dropped, 1);
	assert_false(slow.end);
	assert_true(slow.got < BIG_NBYTES);
	fx_close(&fx);
}

/* Root + 2 good replicas + N_MUTE that read everything and never
 * acknowledge: the root waits one io_timeout_ms for all the acks (they are
 * collected against one deadline), not one per replica; the result counts 2
 * and names the missing ack. Bound: the root's end() (the queue drained,
 * then the acks) within 3 x io_timeout_ms; one deadline per ack would take
 * N_MUTE x io_timeout_ms. */
static void test_bcast_ack_deadline(void **state)
{
	(void)state;
	fixture fx;
	fx_open(&fx, 3 + N_MUTE, 0, 0);
	raw_rep mute[N_MUTE];
	for (int i = 0; i < N_MUTE; i++)
		raw_start(&mute[i], fx.url, fx.m, 0, 0);
	rep g[2];
	good_start(g, fx.url, fx.m);
	wt_errbuf err;
	int rv = drive(wt_bcast_root_sink(fx.r), fx.m, &err);
	double secs = (double)(common_now_ns() - g_end_ns) / 1e9;
	printf("root: %s, end() took %.2f s (io_timeout_ms %u, %d mute) %s\n", wt_errname(rv), secs,
	       IO_MS, N_MUTE, rv ? err.msg : "");
	assert_int_equal(rv, WT_OK);
	assert_true(secs < 3.0 * IO_MS / 1000.0);
	good_join(g);
	for (int i = 0; i < N_MUTE; i++) {
		raw_join(&mute[i]);
		assert_true(mute[i].end);
		assert_int_equal(mute[i].got, BIG_NBYTES);
		assert_int_equal(mute[i].rv, WT_ECLOSED); /* closed by the root */
	}
	fx_result(&fx, WT_ETIMEDOUT, &err);
	assert_non_null(strstr(err.msg, "dropped"));
	fx_close(&fx);
}

/* A replica on a plain unix socket: a valid hello for m, then it stops
 * reading (shutdown SHUT_RD) and never writes or closes: the root's sends
 * fail at once (EPIPE: the replica went away) and a read of its last error
 * would wait the whole 200 ms. Returns the socket (caller closes). */
static int gone_join(const char *url, const wt_manifest *m)
{
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	const char *path = url + strlen("ipc://");
	assert_true(strlen(path) < sizeof(a.sun_path));
	memcpy(a.sun_path, path, strlen(path) + 1);
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);
	assert_true(fd >= 0);
	assert_int_equal(connect(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	const char *rev = wt_manifest_revision(m), *lay = wt_manifest_layout_text(m);
	uint8_t h[ENGINE_BCAST_HELLO + 256] = {0};
	uint32_t w[4] = {ENGINE_BCAST_MAGIC, ENGINE_BCAST_VERSION, wt_manifest_tp_rank(m),
	                 wt_manifest_ep_rank(m)};
	for (int i = 0; i < 16; i++)
		h[i] = (uint8_t)(w[i / 4] >> (8 * (i % 4)));
	size_t lr = strlen(rev), ll = strlen(lay);
	assert_true(lr + ll <= 256);
	h[18] = (uint8_t)lr, h[19] = (uint8_t)(lr >> 8); /* group "" */
	h[20] = (uint8_t)ll, h[21] = (uint8_t)(ll >> 8);
	memcpy(h + ENGINE_BCAST_HELLO, rev, lr);
	memcpy(h + ENGINE_BCAST_HELLO + lr, lay, ll);
	size_t n = ENGINE_BCAST_HELLO + lr + ll;
	assert_int_equal(write(fd, h, n), (ssize_t)n);
	assert_int_equal(shutdown(fd, SHUT_RD), 0);
	return fd;
}

/* Root + 2 good replicas + N_GONE that went away without a word (their
 * reads shut, their sockets still open): each is dropped as gone; the root
 * reads a dropped replica's last error only for the first failure of a
 * broadcast, so the N_GONE cost at most one 200 ms wait, not one each
 * (N_GONE x 200 ms = 1.6 s). Bound: the whole fetch under N_GONE x 100 ms. */
static void test_bcast_gone_replicas(void **state)
{
	(void)state;
	fixture fx;
	fx_open(&fx, 3 + N_GONE, 0, 0);
	int gone[N_GONE];
	for (int i = 0; i < N_GONE; i++)
		gone[i] = gone_join(fx.url, fx.m);
	rep g[2];
	good_start(g, fx.url, fx.m);
	wt_errbuf err;
	uint64_t t0 = common_now_ns();
	int rv = drive(wt_bcast_root_sink(fx.r), fx.m, &err);
	double secs = (double)(common_now_ns() - t0) / 1e9;
	printf("root: %s in %.2f s (%d gone) %s\n", wt_errname(rv), secs, N_GONE,
	       rv ? err.msg : "");
	assert_int_equal(rv, WT_OK);
	assert_true(secs < N_GONE * 0.1);
	good_join(g);
	fx_result(&fx, WT_ECLOSED, &err);
	assert_non_null(strstr(err.msg, "went away"));
	/* each replica's own result: the 2 good ones OK, every gone one named
	 * (wt_bcast_root_result tells only the first) */
	int ok = 0, named = 0;
	for (uint32_t k = 0; k < 2 + N_GONE; k++) {
		char want[32];
		snprintf(want, sizeof(want), "replica %u ", k);
		int rk = wt_bcast_root_replica(fx.r, k, &err);
		ok += rk == WT_OK;
		named += rk == WT_ECLOSED && strstr(err.msg, want) != NULL;
	}
	assert_int_equal(ok, 2);
	assert_int_equal(named, N_GONE);
	for (int i = 0; i < N_GONE; i++)
		close(gone[i]);
	fx_close(&fx);
}

int main(void)
{
	g_data = malloc(BIG_NBYTES);
	assert_non_null(g_data);
	tu_fill(g_data, BIG_NBYTES, SEED);
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_bcast_deaf_replica),
	    cmocka_unit_test(test_bcast_slow_steady),
	    cmocka_unit_test(test_bcast_ack_deadline),
	    cmocka_unit_test(test_bcast_gone_replicas),
	};
	int rv = cmocka_run_group_tests(tests, NULL, NULL);
	free(g_data);
	return rv;
}
