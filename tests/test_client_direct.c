/* test_client_direct.c — receiving straight into the sink (wt_sink_ops
 * recv_buf, libweights 1.3) over the bulk stream of a real weightd: every
 * chunk the sink offers memory for lands there and reaches write() as that
 * very pointer, the others come through the slot buffers, and the bytes equal
 * a fetch over messages (which never asks); a damaged chunk received in place
 * is fetched again over it; a sink without recv_buf (an older table) still
 * works; and once the fetch calls abort() nothing is written into the sink's
 * memory any more, although chunks were still on their way. A client keeps
 * its bulk streams open from one fetch to the next, no more than its
 * connections. */
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

#include "client/client_int.h"
#include "common/common.h"
#include "test_weightd_util.h"
#include "weights/client.h"
#include "weights/engine.h"

#define SEED   0xd12ecull
#define POISON 0xa5

/* ---- a gate on the producer's cache writes (before_put) ---- */

static pthread_mutex_t g_lk = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_cv = PTHREAD_COND_INITIALIZER;
static int g_puts_held; /* cache writes wait while set (at most 20 s each) ... */
static int g_puts_free; /* ... once this many have passed */
static int g_puts;      /* cache writes let through */

static int gate_put(void *ctx, uint32_t rank)
{
	(void)ctx;
	(void)rank;
	struct timespec dl;
	clock_gettime(CLOCK_REALTIME, &dl);
	dl.tv_sec += 20;
	pthread_mutex_lock(&g_lk);
	while (g_puts_held && g_puts >= g_puts_free &&
	       pthread_cond_timedwait(&g_cv, &g_lk, &dl) == 0)
		;
	g_puts++;
	pthread_mutex_unlock(&g_lk);
	return WT_OK;
}

/* Hold the cache writes after the first `free` ones (held = 1), or let all go. */
static void gate_hold(int held, int free_puts)
{
	pthread_mutex_lock(&g_lk);
	g_puts_held = held;
	g_puts_free = free_puts;
	g_puts = 0;
	pthread_cond_broadcast(&g_cv);
	pthread_mutex_unlock(&g_lk);
}

/* ---- a sink that records how each chunk came ---- */

typedef struct rec_sink {
	wt_sink base;
	wt_sink_ops ops;
	const wt_manifest *m;
	uint8_t **buf; /* one per tensor, allocated at begin, freed by rec_free */
	uint64_t *nbytes;
	size_t n;
	int offer;           /* 0: recv_buf answers NULL; 1: always; 2: every other call */
	unsigned fail_write; /* write() refuses its call number fail_write (1-based; 0 none) */
	int release_in_abort;
	unsigned asked, granted, direct, copied, writes, aborts, ends;
	unsigned delivered; /* write() calls */
	unsigned early;     /* recv_buf calls before the first write() */
	wt_hash128 digest;  /* of every tensor's name and bytes, at end */
} rec_sink;

static rec_sink *rec_of(wt_sink *s)
{
	return (rec_sink *)s;
}

static void rec_drop(rec_sink *r)
{
	for (size_t i = 0; i < r->n; i++)
		free(r->buf[i]);
	free(r->buf);
	free(r->nbytes);
	r->buf = NULL;
	r->nbytes = NULL;
	r->n = 0;
}

static int rec_begin(wt_sink *s, const wt_manifest *m, wt_errbuf *err)
{
	(void)err;
	rec_sink *r = rec_of(s);
	rec_drop(r);
	r->m = m;
	r->n = wt_manifest_n_tensors(m);
	r->buf = calloc(r->n, sizeof(*r->buf));
	r->nbytes = calloc(r->n, sizeof(*r->nbytes));
	assert_non_null(r->buf);
	for (size_t i = 0; i < r->n; i++) {
		wt_tensor_info ti;
		assert_int_equal(wt_manifest_tensor(m, i, &ti), WT_OK);
		r->nbytes[i] = ti.nbytes;
		r->buf[i] = malloc(ti.nbytes + 1);
		assert_non_null(r->buf[i]);
	}
	return WT_OK;
}

static int rec_ok(wt_sink *s, size_t t, wt_errbuf *err)
{
	(void)err;
	assert_true(t < rec_of(s)->n);
	return WT_OK;
}

static void *rec_recv_buf(wt_sink *s, size_t t, uint64_t off, size_t len)
{
	rec_sink *r = rec_of(s);
	assert_true(t < r->n && off + len <= r->nbytes[t] && len > 0);
	r->early += r->delivered == 0;
	if (r->offer == 0 || (r->offer == 2 && r->asked++ % 2 == 1))
		return NULL;
	r->granted++;
	return r->buf[t] + off;
}

static int rec_write(wt_sink *s, size_t t, uint64_t off, const void *data, size_t len,
                     wt_errbuf *err)
{
	rec_sink *r = rec_of(s);
	assert_true(t < r->n && off + len <= r->nbytes[t]);
	r->delivered++;
	if (++r->writes == r->fail_write)
		return wt_seterr(err, WT_EINVAL, "test sink: write refused");
	if (data == r->buf[t] + off) {
		r->direct++;
	} else {
		memcpy(r->buf[t] + off, data, len);
		r->copied++;
	}
	return WT_OK;
}

static int rec_end(wt_sink *s, wt_errbuf *err)
{
	(void)err;
	rec_sink *r = rec_of(s);
	common_hasher *hs = common_hasher_new();
	for (size_t i = 0; i < r->n; i++) {
		wt_tensor_info ti;
		wt_manifest_tensor(r->m, i, &ti);
		common_hasher_update(hs, ti.name, strlen(ti.name));
		common_hasher_update(hs, r->buf[i], (size_t)r->nbytes[i]);
	}
	r->digest = common_hasher_digest(hs);
	common_hasher_free(hs);
	r->ends++;
	return WT_OK;
}

/* Every byte of the sink's memory is poisoned, then the server may go on:
 * a receiver still writing after this shows as bytes that are not POISON. */
static void rec_abort(wt_sink *s)
{
	rec_sink *r = rec_of(s);
	for (size_t i = 0; i < r->n; i++)
		memset(r->buf[i], POISON, (size_t)r->nbytes[i]);
	r->aborts++;
	if (r->release_in_abort)
		gate_hold(0, 0);
}

static void rec_init(rec_sink *r, int offer, int with_recv_buf)
{
	memset(r, 0, sizeof(*r));
	wt_sink_ops_init(&r->ops);
	if (!with_recv_buf) /* a 1.2 table: it ends at abort */
		r->ops.struct_size = offsetof(wt_sink_ops, abort) + sizeof(r->ops.abort);
	r->ops.begin = rec_begin;
	r->ops.tensor_begin = rec_ok;
	r->ops.write = rec_write;
	r->ops.tensor_end = rec_ok;
	r->ops.end = rec_end;
	r->ops.abort = rec_abort;
	if (with_recv_buf)
		r->ops.recv_buf = rec_recv_buf;
	r->base.ops = &r->ops;
	r->offer = offer;
}

/* ---- fetches ---- */

typedef struct fetch_cfg {
	int stream, cut_through;
	uint32_t refetch;
	wt_layout layout;
	wt_log_fn log; /* NULL = silent */
} fetch_cfg;

/* A client of url as fc says (window 6, 2 connections) and the manifest of
 * fc's layout of llama into *m; the error of either (the client is NULL then). */
static int open_client(const char *url, const fetch_cfg *fc, wt_client **c, wt_manifest **m,
                       wt_errbuf *err)
{
	wt_client_opts o;
	wt_client_opts_init(&o);
	const char *eps[] = {url};
	o.endpoints = eps;
	o.n_endpoints = 1;
	o.stream = fc->stream;
	o.cut_through = fc->cut_through;
	o.window = 6;
	o.hash_refetch = fc->refetch;
	o.log = fc->log;
	o.log_level = WT_CLIENT_LOG_INFO;
	*c = NULL;
	*m = NULL;
	int rv = wt_client_open(c, &o, err);
	if (rv == WT_OK)
		rv = wt_client_get_manifest(*c, "llama", &fc->layout, m, err);
	if (rv != WT_OK) {
		wt_client_close(*c);
		*c = NULL;
	}
	return rv;
}

static int fetch_into(const char *url, const fetch_cfg *fc, wt_sink *sink, wt_fetch_stats *st,
                      size_t *n_chunks)
{
	wt_client *c = NULL;
	wt_manifest *m = NULL;
	wt_errbuf err;
	wt_fetch_opts fo;
	wt_fetch_opts_init(&fo);
	fo.stats = st;
	int rv = open_client(url, fc, &c, &m, &err);
	if (rv == WT_OK && n_chunks != NULL)
		*n_chunks = wt_manifest_n_chunks(m);
	if (rv == WT_OK)
		rv = wt_client_fetch(c, m, sink, &fo, &err);
	if (rv != WT_OK)
		printf("fetch (stream %d, cut-through %d): %s\n", fc->stream, fc->cut_through,
		       err.msg);
	wt_manifest_free(m);
	wt_client_close(c);
	return rv;
}

static tw_env *stream_env(const char *tag, const char *writeback_bytes)
{
	tw_env *e = tw_env_new(tag, SEED);
	wt_errbuf err;
	assert_int_equal(wd_config_set(&e->cfg, "stream_listen", "tcp://127.0.0.1:0", "test", &err),
	                 WT_OK);
	/* one producer: the chunks come in serving order (the first is the first
	 * asked), not two at once racing for writeback_bytes */
	if (writeback_bytes != NULL)
		assert_true(
		    wd_config_set(&e->cfg, "writeback_bytes", writeback_bytes, "test", &err) ==
		        WT_OK &&
		    wd_config_set(&e->cfg, "production_threads", "1", "test", &err) == WT_OK);
	e->faults.before_put = gate_put;
	assert_int_equal(tw_start(e), WT_OK);
	return e;
}

static fetch_cfg cfg_tp2(int stream)
{
	fetch_cfg fc = {.stream = stream};
	wt_layout_init(&fc.layout);
	fc.layout.tp_size = 2;
	fc.layout.tp_rank = 1;
	return fc;
}

/* Every chunk the sink offers memory for is received there; the others and
 * every chunk over messages are copied by write(); the bytes agree. */
static void test_direct_receive(void **state)
{
	(void)state;
	tw_env *e = stream_env("wd-direct", NULL);
	fetch_cfg msg = cfg_tp2(0), str = cfg_tp2(1);
	size_t nc = 0;
	wt_fetch_stats st;
	rec_sink a, b, h, old;
	rec_init(&a, 1, 1);
	assert_int_equal(fetch_into(e->url, &msg, &a.base, &st, &nc), WT_OK);
	printf("messages: %u granted, %u copied of %zu chunks\n", a.granted, a.copied, nc);
	assert_int_equal(a.granted, 0); /* only the bulk stream asks */
	assert_int_equal(a.copied, nc);
	assert_true(nc > 8);

	rec_init(&b, 1, 1);
	assert_int_equal(fetch_into(e->url, &str, &b.base, &st, NULL), WT_OK);
	printf("stream: %u granted, %u direct, %u copied\n", b.granted, b.direct, b.copied);
	assert_int_equal(b.granted, nc);
	assert_int_equal(b.direct, nc);
	assert_int_equal(b.copied, 0);
	/* the first chunk is asked alone; the window opens once it is in */
	assert_int_equal(b.early, 1);
	assert_true(common_hash128_eq(a.digest, b.digest));

	rec_init(&h, 2, 1); /* every other chunk offered */
	assert_int_equal(fetch_into(e->url, &str, &h.base, &st, NULL), WT_OK);
	printf("stream, half offered: %u direct, %u copied\n", h.direct, h.copied);
	assert_true(h.direct == h.granted && h.direct + h.copied == nc);
	assert_true(h.direct >= nc / 2 - 1 && h.copied >= nc / 2 - 1);
	assert_true(common_hash128_eq(a.digest, h.digest));

	rec_init(&old, 1, 0); /* a table of libweights 1.2: no recv_buf */
	assert_int_equal(fetch_into(e->url, &str, &old.base, &st, NULL), WT_OK);
	assert_int_equal(old.copied, nc);
	assert_true(common_hash128_eq(a.digest, old.digest));
	rec_drop(&a);
	rec_drop(&b);
	rec_drop(&h);
	rec_drop(&old);
	tw_env_free(e);
}

/* A damaged chunk received in place fails its hash and is fetched once more
 * into the same memory: the bytes end right, at every position of the first
 * chunks; without a re-fetch it is WT_EHASH with the sink aborted. */
static void test_direct_refetch(void **state)
{
	(void)state;
	tw_env *e = stream_env("wd-direct-refetch", NULL);
	fetch_cfg msg = cfg_tp2(0), str = cfg_tp2(1);
	wt_fetch_stats st;
	rec_sink a;
	rec_init(&a, 1, 1);
	assert_int_equal(fetch_into(e->url, &msg, &a.base, &st, NULL), WT_OK);
	str.refetch = 1;
	for (uint64_t k = 1; k <= 6; k++) {
		rec_sink b;
		rec_init(&b, 1, 1);
		e->faults.corrupt_chunk = tw_settled_replies(e) + k;
		assert_int_equal(fetch_into(e->url, &str, &b.base, &st, NULL), WT_OK);
		assert_int_equal(st.refetches, 1);
		assert_true(b.direct > 8 && b.copied == 0);
		assert_true(common_hash128_eq(a.digest, b.digest));
		rec_drop(&b);
	}
	str.refetch = 0;
	rec_sink c;
	rec_init(&c, 1, 1);
	e->faults.corrupt_chunk = tw_settled_replies(e) + 2;
	assert_int_equal(fetch_into(e->url, &str, &c.base, &st, NULL), WT_EHASH);
	assert_true(c.aborts == 1 && c.ends == 0);
	rec_drop(&a);
	rec_drop(&c);
	tw_env_free(e);
}

static bool all_poison(const rec_sink *r)
{
	for (size_t i = 0; i < r->n; i++)
		for (uint64_t k = 0; k < r->nbytes[i]; k++)
			if (r->buf[i][k] != POISON)
				return false;
	return true;
}

/*
 * Nothing lands in the sink's memory once abort() is called. A live layout
 * is read over the stream while the producer is held after its second chunk
 * (writeback_bytes 1: one chunk in RAM; the first cache write passes, the
 * second is held): the client gets chunks 0 and 1, and its other requests
 * (the window opens after the first chunk) wait at the server for chunks not
 * produced yet, their memory granted. The sink refuses the second chunk; its
 * abort() poisons all of its memory and lets the producer go on, so those
 * chunks are sent at once.
 * The fetch must have stopped its receivers before: the poison stays. And
 * the server frees what the closed streams held: the production finishes.
 */
static void test_direct_abort_quiet(void **state)
{
	(void)state;
	tw_env *e = stream_env("wd-direct-abort", "1");
	fetch_cfg fc = {.stream = 1, .cut_through = 1};
	wt_layout_init(&fc.layout);
	rec_sink r;
	rec_init(&r, 1, 1);
	r.fail_write = 2;
	r.release_in_abort = 1;
	wt_fetch_stats st;
	gate_hold(1, 1);
	assert_int_equal(fetch_into(e->url, &fc, &r.base, &st, NULL), WT_EINVAL);
	gate_hold(0, 0);
	printf("abort: %u granted, %u aborts\n", r.granted, r.aborts);
	assert_int_equal(r.aborts, 1);
	assert_int_equal(r.ends, 0);
	assert_true(r.granted > 2); /* more chunks than the two delivered were asked for */
	usleep(300 * 1000);         /* time for any late write to land */
	assert_true(all_poison(&r));
	/* the server let go of what the client's dead streams held: the production
	 * ends and its write-behind memory returns (a dead stream's pinned chunk
	 * once held the one-chunk budget, the production and shutdown with it) */
	wd_wbudget_stats wb = {0};
	for (int i = 0; i < 1000; i++) {
		wd_wbudget_get(e->srv->wbudget, &wb);
		if (wd_lives_producing(e->srv->lives, NULL) == 0 && wb.used == 0)
			break;
		usleep(10 * 1000);
	}
	printf("after the abort: %zu productions, %llu write-behind bytes in use\n",
	       wd_lives_producing(e->srv->lives, NULL), (unsigned long long)wb.used);
	assert_true(wd_lives_producing(e->srv->lives, NULL) == 0 && wb.used == 0);
	rec_drop(&r);
	tw_env_free(e);
}

/*
 * A client keeps its bulk streams open between fetches: three fetches on one
 * client (2 connections) open 2 streams, not 6, with the right bytes each
 * time. A fetch that fails (its sink refuses a chunk) closes them: replies
 * may still be on the wire; the next fetch dials new ones.
 */
static int g_hellos;          /* "connected to" lines the client logged */
static int g_stream_failures; /* "... going on over messages" lines */

static void count_hellos(void *ctx, int level, const char *msg)
{
	(void)ctx;
	(void)level;
	g_hellos += strncmp(msg, "connected to ", 13) == 0;
	g_stream_failures += strstr(msg, "going on over messages") != NULL;
}

/* Let e's next starts listen where it listens now (url and its stream URL):
 * once (a list key set twice from one source grows). */
static void pin_addresses(tw_env *e, const char *url)
{
	char surl[256];
	wt_errbuf err;
	assert_true(wd_bulk_offer(e->srv, 0, surl, sizeof(surl), &(const uint8_t *){NULL}));
	assert_int_equal(wd_config_set(&e->cfg, "listen", url, "test", &err), WT_OK);
	assert_int_equal(wd_config_set(&e->cfg, "stream_listen", surl, "test", &err), WT_OK);
}

/* The daemon of e stopped and started again on its pinned addresses:
 * another instance, another stream ticket. */
static void restart_same_addresses(tw_env *e)
{
	tw_stop(e);
	/* the client's nng redials the port meanwhile; a redial on loopback can
	 * connect to itself (TCP simultaneous open) and hold the port until the
	 * handshake fails: try again for a while */
	int rv = WT_EIO;
	for (int i = 0; i < 50 && (rv = tw_start(e)) != WT_OK; i++)
		usleep(100 * 1000);
	assert_int_equal(rv, WT_OK);
}

/* Two fetches of m, each with every chunk on the stream and a's bytes. */
static void two_fetches_on_stream(tw_env *e, wt_client *c, const wt_manifest *m, const rec_sink *a,
                                  const char *when)
{
	for (int i = 0; i < 2; i++) {
		rec_sink r;
		rec_init(&r, 1, 1);
		wt_errbuf err;
		uint64_t before = atomic_load(&e->srv->bulk_replies);
		int rv = wt_client_fetch(c, m, &r.base, NULL, &err);
		printf("%s, fetch %d: %s; %llu of %zu chunks on the stream\n", when, i,
		       rv == WT_OK ? "ok" : err.msg,
		       (unsigned long long)(atomic_load(&e->srv->bulk_replies) - before),
		       wt_manifest_n_chunks(m));
		assert_int_equal(rv, WT_OK);
		assert_true(common_hash128_eq(a->digest, r.digest));
		assert_int_equal(atomic_load(&e->srv->bulk_replies) - before,
		                 wt_manifest_n_chunks(m));
		rec_drop(&r);
	}
}

static void test_streams_kept_open(void **state)
{
	(void)state;
	tw_env *e = stream_env("wd-direct-keep", NULL);
	g_hellos = 0;
	wt_client *c;
	wt_manifest *m;
	wt_errbuf err;
	fetch_cfg fc = cfg_tp2(1);
	fc.log = count_hellos;
	assert_int_equal(open_client(e->url, &fc, &c, &m, &err), WT_OK);
	rec_sink first;
	rec_init(&first, 1, 1);
	assert_int_equal(wt_client_fetch(c, m, &first.base, NULL, &err), WT_OK);
	for (int i = 0; i < 2; i++) {
		rec_sink r;
		rec_init(&r, 1, 1);
		uint64_t before = atomic_load(&e->srv->bulk_replies);
		assert_int_equal(wt_client_fetch(c, m, &r.base, NULL, &err), WT_OK);
		assert_true(common_hash128_eq(first.digest, r.digest));
		assert_int_equal(atomic_load(&e->srv->bulk_replies) - before,
		                 wt_manifest_n_chunks(m)); /* all on the kept streams */
		rec_drop(&r);
	}
	printf("3 fetches: %llu bulk streams accepted\n",
	       (unsigned long long)atomic_load(&e->srv->bulk_streams));
	assert_int_equal(atomic_load(&e->srv->bulk_streams), 2);
	assert_int_equal(g_hellos, 2); /* one per connection: no needless Hello again */
	rec_sink bad;
	rec_init(&bad, 1, 1);
	bad.fail_write = 1;
	assert_int_equal(wt_client_fetch(c, m, &bad.base, NULL, &err), WT_EINVAL);
	assert_int_equal(atomic_load(&e->srv->bulk_streams), 2); /* it took the kept ones */
	rec_sink again;
	rec_init(&again, 1, 1);
	assert_int_equal(wt_client_fetch(c, m, &again.base, NULL, &err), WT_OK);
	assert_true(common_hash128_eq(first.digest, again.digest));
	assert_int_equal(atomic_load(&e->srv->bulk_streams), 4); /* dialed anew */
	rec_drop(&first);
	rec_drop(&bad);
	rec_drop(&again);
	wt_manifest_free(m);
	wt_client_close(c);
	tw_env_free(e);
}

/* write() that waits (up to 5 s), on each sink's first call, until three
 * fetches are there: each holds its bulk streams meanwhile. */
static pthread_mutex_t meet_lk = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t meet_cv = PTHREAD_COND_INITIALIZER;
static int meet_n;

static int meet_write(wt_sink *s, size_t t, uint64_t off, const void *d, size_t n, wt_errbuf *err)
{
	rec_sink *r = rec_of(s);
	if (r->delivered == 0) {
		struct timespec dl;
		clock_gettime(CLOCK_REALTIME, &dl);
		dl.tv_sec += 5;
		pthread_mutex_lock(&meet_lk);
		meet_n++;
		pthread_cond_broadcast(&meet_cv);
		while (meet_n < 3 && pthread_cond_timedwait(&meet_cv, &meet_lk, &dl) == 0) {
		}
		pthread_mutex_unlock(&meet_lk);
	}
	return rec_write(s, t, off, d, n, err);
}

typedef struct meet_fetch {
	wt_client *c;
	wt_manifest *m;
	rec_sink r;
	int rv;
} meet_fetch;

static void *meet_main(void *p)
{
	meet_fetch *mf = p;
	wt_errbuf err;
	mf->rv = wt_client_fetch(mf->c, mf->m, &mf->r.base, NULL, &err);
	return NULL;
}

/* Three fetches at once on one client (2 connections) hold 6 bulk streams;
 * once they end, the client keeps 2 of them open, not 6: each kept stream
 * counts against the server's max_connections and never expires. */
static void test_kept_streams_capped(void **state)
{
	(void)state;
	tw_env *e = stream_env("wd-direct-cap", NULL);
	wt_client *c;
	wt_manifest *m;
	wt_errbuf err;
	fetch_cfg fc = cfg_tp2(1);
	assert_int_equal(open_client(e->url, &fc, &c, &m, &err), WT_OK);
	meet_fetch mf[3];
	pthread_t th[3];
	meet_n = 0;
	for (int i = 0; i < 3; i++) {
		mf[i].c = c;
		mf[i].m = m;
		rec_init(&mf[i].r, 0, 1);
		mf[i].r.ops.write = meet_write;
		assert_int_equal(pthread_create(&th[i], NULL, meet_main, &mf[i]), 0);
	}
	for (int i = 0; i < 3; i++)
		pthread_join(th[i], NULL);
	for (int i = 0; i < 3; i++)
		assert_int_equal(mf[i].rv, WT_OK);
	pthread_mutex_lock(&c->lk);
	size_t kept = c->eps[0].n_idle;
	pthread_mutex_unlock(&c->lk);
	printf("3 fetches at once (met %d): %llu bulk streams accepted, %zu kept open after\n",
	       meet_n, (unsigned long long)atomic_load(&e->srv->bulk_streams), kept);
	assert_int_equal(meet_n, 3);
	assert_int_equal(atomic_load(&e->srv->bulk_streams), 6);
	assert_int_equal(kept, 2);
	for (int i = 0; i < 3; i++)
		rec_drop(&mf[i].r);
	wt_manifest_free(m);
	wt_client_close(c);
	tw_env_free(e);
}

/*
 * Kept streams of a server that restarted (same address, new ticket): every
 * chunk of the next fetches goes on new streams, right after the restart
 * (the stale kept ones fail first) and once nng reconnected (the Hello on
 * the new connection renews the offer: no stream fails).
 */
static void test_kept_streams_restart(void **state)
{
	(void)state;
	tw_env *e = stream_env("wd-direct-restart", NULL);
	char url[256];
	snprintf(url, sizeof(url), "%s", e->url);
	wt_errbuf err;
	wt_client *c;
	wt_manifest *m;
	fetch_cfg fc = cfg_tp2(1);
	fc.log = count_hellos;
	assert_int_equal(open_client(url, &fc, &c, &m, &err), WT_OK);
	rec_sink a;
	rec_init(&a, 1, 1);
	assert_int_equal(wt_client_fetch(c, m, &a.base, NULL, &err), WT_OK);
	assert_int_equal(atomic_load(&e->srv->bulk_streams), 2);
	/* fetched at once: nng may not have reconnected yet, the kept streams
	 * are the old daemon's; the first that fails renews them */
	pin_addresses(e, url);
	restart_same_addresses(e);
	two_fetches_on_stream(e, c, m, &a, "right after a restart");
	/* fetched once nng reconnected (it retries every 50-500 ms): the Hello
	 * said again on the new connection brings the new ticket before any
	 * stream is used, so none fails */
	restart_same_addresses(e);
	usleep(1000 * 1000);
	g_hellos = g_stream_failures = 0;
	two_fetches_on_stream(e, c, m, &a, "a second after a restart");
	printf("a second after a restart: %d Hellos, %d stream failures\n", g_hellos,
	       g_stream_failures);
	assert_true(g_hellos >= 1);
	assert_int_equal(g_stream_failures, 0);
	rec_drop(&a);
	wt_manifest_free(m);
	wt_client_close(c);
	tw_env_free(e);
}

/* The host sink offers its tensors' memory: a fetch over the stream gives the
 * bytes of a fetch over messages, also when one chunk is fetched again. */
static void test_host_sink_direct(void **state)
{
	(void)state;
	tw_env *e = stream_env("wd-direct-host", NULL);
	wt_hash128 d[3];
	for (int k = 0; k < 3; k++) {
		fetch_cfg fc = cfg_tp2(k > 0);
		fc.refetch = k == 2;
		if (k == 2)
			e->faults.corrupt_chunk = tw_settled_replies(e) + 4;
		wt_host_sink *h;
		wt_errbuf err;
		wt_fetch_stats st;
		size_t nc = 0;
		assert_int_equal(wt_host_sink_create(&h, &err), WT_OK);
		assert_int_equal(fetch_into(e->url, &fc, wt_host_sink_sink(h), &st, &nc), WT_OK);
		assert_int_equal(st.refetches, k == 2 ? 1 : 0);
		common_hasher *hs = common_hasher_new();
		size_t n = wt_host_sink_n_tensors(h);
		assert_true(n > 8);
		wt_client *c;
		wt_manifest *m;
		assert_int_equal(open_client(e->url, &fc, &c, &m, &err), WT_OK);
		for (size_t i = 0; i < n; i++) {
			wt_tensor_info ti;
			const void *data;
			uint64_t nb;
			wt_manifest_tensor(m, i, &ti);
			assert_int_equal(wt_host_sink_find(h, ti.name, &data, &nb), WT_OK);
			common_hasher_update(hs, data, (size_t)nb);
		}
		d[k] = common_hasher_digest(hs);
		common_hasher_free(hs);
		wt_manifest_free(m);
		wt_client_close(c);
		wt_host_sink_destroy(h);
	}
	assert_true(common_hash128_eq(d[0], d[1]) && common_hash128_eq(d[0], d[2]));
	tw_env_free(e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_direct_receive),      cmocka_unit_test(test_direct_refetch),
	    cmocka_unit_test(test_direct_abort_quiet),  cmocka_unit_test(test_host_sink_direct),
	    cmocka_unit_test(test_streams_kept_open),   cmocka_unit_test(test_kept_streams_restart),
	    cmocka_unit_test(test_kept_streams_capped),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
