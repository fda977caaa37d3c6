/* test_weightd_bulk.c — the server's bulk data plane (weightd/bulk.c): Hello
 * offers the stream only with stream_listen set; every chunk of a shard read
 * over the stream, pipelined, is byte-identical to the message path's reply;
 * a chunk the shard lacks is an error reply and the stream goes on; a wrong
 * ticket closes the stream; fault injection corrupts the bytes sent.
 * Through libweights: wt_client_opts.stream fetches over the stream, the
 * same tensors as over messages; without an offer (stream_listen off) it
 * falls back to messages; a corrupted chunk on the stream is WT_EHASH. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <time.h>

#include <cmocka.h>

#include "common/common.h"
#include "proto/bulk.h"
#include "test_bulk_util.h"
#include "test_weightd_util.h"
#include "weights/client.h"
#include "weights/engine.h"

#define SEED 0xb01cull

static void send_req(nng_stream *st, uint64_t id, const ProtobufCBinaryData *sid,
                     const uint8_t *hash)
{
	bulk_req q = {.id = id, .shard_id_len = (uint32_t)sid->len};
	memcpy(q.hash, hash, 16);
	uint8_t b[BULK_REQ_BYTES];
	bulk_req_encode(&q, b);
	assert_int_equal(st_io(st, 1, b, sizeof(b)), 0);
	assert_int_equal(st_io(st, 1, sid->data, sid->len), 0);
}

/* Receive one reply; the bytes (or the error text) into *body (malloc'd). */
static bulk_reply recv_reply(nng_stream *st, uint8_t **body)
{
	uint8_t h[BULK_REPLY_BYTES];
	bulk_reply r;
	wt_errbuf err;
	assert_int_equal(st_io(st, 0, h, sizeof(h)), 0);
	assert_int_equal(bulk_reply_decode(h, 1u << 30, &r, &err), WT_OK);
	size_t n = r.code == WT_OK ? (size_t)r.nbytes : r.msg_len;
	*body = malloc(n + 1);
	assert_int_equal(st_io(st, 0, *body, n), 0);
	(*body)[n] = 0;
	return r;
}

/* A server with stream_listen set; s is a greeted control socket, *hello its reply. */
static tw_env *start_bulk(nng_socket *s, tw_reply *hello, const char *tag)
{
	tw_env *e = tw_env_new(tag, SEED);
	wt_errbuf err;
	assert_int_equal(wd_config_set(&e->cfg, "stream_listen", "tcp://127.0.0.1:0", "test", &err),
	                 WT_OK);
	assert_int_equal(tw_start(e), WT_OK);
	*s = tw_dial(e->url);
	*hello = tw_hello(*s, WEIGHTS__PROTOCOL_VERSION__PROTOCOL_VERSION, NULL);
	assert_int_equal(hello->r->body_case, WEIGHTS__REPLY__BODY_HELLO);
	assert_non_null(strstr(hello->r->hello->stream_url, "tcp://127.0.0.1:"));
	assert_string_not_equal(hello->r->hello->stream_url, "tcp://127.0.0.1:0");
	assert_int_equal(hello->r->hello->stream_ticket.len, 16);
	return e;
}

static nng_stream *open_stream(const Weights__HelloReply *h, const uint8_t *ticket)
{
	nng_stream *st = st_dial(h->stream_url);
	uint8_t o[BULK_OPEN_BYTES];
	bulk_open_encode(ticket, o);
	assert_int_equal(st_io(st, 1, o, sizeof(o)), 0);
	return st;
}

static void test_off_by_default(void **state)
{
	(void)state;
	tw_env *e = tw_env_new("wd-bulk-off", SEED);
	assert_int_equal(tw_start(e), WT_OK);
	nng_socket s = tw_dial(e->url);
	tw_reply h = tw_hello(s, WEIGHTS__PROTOCOL_VERSION__PROTOCOL_VERSION, NULL);
	assert_int_equal(h.r->body_case, WEIGHTS__REPLY__BODY_HELLO);
	assert_string_equal(h.r->hello->stream_url, ""); /* clients keep messages */
	assert_int_equal(h.r->hello->stream_ticket.len, 0);
	tw_reply_free(&h);
	nng_close(s);
	tw_env_free(e);
}

static void test_identical_bytes(void **state)
{
	(void)state;
	nng_socket s;
	tw_reply h;
	tw_env *e = start_bulk(&s, &h, "wd-bulk-same");
	tw_reply m = tw_manifest(s, "llama", 1, 0);
	assert_int_equal(m.r->body_case, WEIGHTS__REPLY__BODY_MANIFEST);
	const Weights__Manifest *mf = m.r->manifest;
	nng_stream *st = open_stream(h.r->hello, h.r->hello->stream_ticket.data);
	/* pipeline every chunk of every tensor, then read the replies in order */
	size_t n = 0;
	for (size_t t = 0; t < mf->n_tensors; t++)
		for (size_t c = 0; c < mf->tensors[t]->n_chunks; c++)
			send_req(st, 1000 + n++, &mf->shard_id,
			         mf->tensors[t]->chunks[c]->hash.data);
	assert_true(n > 8);
	size_t k = 0;
	uint64_t bytes = 0;
	for (size_t t = 0; t < mf->n_tensors; t++) {
		for (size_t c = 0; c < mf->tensors[t]->n_chunks; c++, k++) {
			const Weights__ChunkRef *ref = mf->tensors[t]->chunks[c];
			uint8_t *body;
			bulk_reply r = recv_reply(st, &body);
			assert_int_equal(r.code, WT_OK);
			assert_true(r.id == 1000 + k);
			assert_true(r.nbytes == ref->nbytes);
			assert_memory_equal(r.chunk_hash, ref->hash.data, 16);
			wt_hash128 got = common_hash128(body, (size_t)r.nbytes);
			assert_true(
			    common_hash128_eq(got, common_hash128_from_bytes(ref->hash.data)));
			tw_reply msg =
			    tw_chunk(s, mf->shard_id, ref->hash, 0, 0); /* message path */
			assert_int_equal(msg.r->body_case, WEIGHTS__REPLY__BODY_CHUNK);
			assert_int_equal(msg.tail_len, r.nbytes);
			assert_memory_equal(msg.tail, body, msg.tail_len);
			bytes += r.nbytes;
			tw_reply_free(&msg);
			free(body);
		}
	}
	assert_true(bytes == mf->total_bytes);
	printf("%zu chunks, %llu bytes identical over the stream and messages\n", n,
	       (unsigned long long)bytes);
	nng_stream_free(st);
	tw_reply_free(&m);
	tw_reply_free(&h);
	nng_close(s);
	tw_env_free(e);
}

static void test_errors(void **state)
{
	(void)state;
	nng_socket s;
	tw_reply h;
	tw_env *e = start_bulk(&s, &h, "wd-bulk-err");
	tw_reply m = tw_manifest(s, "llama", 1, 0);
	const Weights__Manifest *mf = m.r->manifest;
	nng_stream *st = open_stream(h.r->hello, h.r->hello->stream_ticket.data);
	uint8_t bogus[16] = {1, 2, 3};
	send_req(st, 1, &mf->shard_id, bogus);
	send_req(st, 2, &mf->shard_id, mf->tensors[0]->chunks[0]->hash.data);
	uint8_t *body;
	bulk_reply r = recv_reply(st, &body);
	assert_int_equal(r.code, WT_ENOTFOUND);
	assert_non_null(strstr((char *)body, "not part of the shard"));
	free(body);
	r = recv_reply(st, &body); /* the stream goes on */
	assert_int_equal(r.code, WT_OK);
	assert_true(r.id == 2 && r.nbytes == mf->tensors[0]->chunks[0]->nbytes);
	free(body);
	nng_stream_free(st);
	/* a wrong ticket: the server closes the stream without a reply */
	uint8_t wrong[16];
	memcpy(wrong, h.r->hello->stream_ticket.data, 16);
	wrong[0] ^= 0xff;
	st = open_stream(h.r->hello, wrong);
	/* the server may close it before the request is even sent: no reply either way */
	bulk_req q = {.id = 3, .shard_id_len = (uint32_t)mf->shard_id.len};
	uint8_t qb[BULK_REQ_BYTES];
	bulk_req_encode(&q, qb);
	if (st_io(st, 1, qb, sizeof(qb)) == 0)
		(void)st_io(st, 1, mf->shard_id.data, mf->shard_id.len);
	uint8_t hb[BULK_REPLY_BYTES];
	assert_int_not_equal(st_io(st, 0, hb, sizeof(hb)), 0);
	nng_stream_free(st);
	tw_reply_free(&m);
	tw_reply_free(&h);
	nng_close(s);
	tw_env_free(e);
}

/* Hostile streams are bounded as pipes are: a stream that never sends its
 * opening message is closed after hello_timeout_ms, and streams beyond
 * max_connections are closed at connect while the others keep serving. */
static void test_unauth_limits(void **state)
{
	(void)state;
	tw_env *e = tw_env_new("wd-bulk-limits", SEED);
	wt_errbuf err;
	assert_int_equal(wd_config_set(&e->cfg, "stream_listen", "tcp://127.0.0.1:0", "test", &err),
	                 WT_OK);
	assert_int_equal(wd_config_set(&e->cfg, "hello_timeout_ms", "300", "test", &err), WT_OK);
	assert_int_equal(wd_config_set(&e->cfg, "max_connections", "2", "test", &err), WT_OK);
	assert_int_equal(tw_start(e), WT_OK);
	nng_socket s = tw_dial(e->url);
	tw_reply h = tw_hello(s, WEIGHTS__PROTOCOL_VERSION__PROTOCOL_VERSION, NULL);
	tw_reply m = tw_manifest(s, "llama", 1, 0);
	const Weights__Manifest *mf = m.r->manifest;
	const uint8_t *hash = mf->tensors[0]->chunks[0]->hash.data;
	uint8_t b1;
	/* silent: closed by the server (the read ends) well before st_io's own 10 s */
	nng_stream *silent = st_dial(h.r->hello->stream_url);
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	assert_int_not_equal(st_io(silent, 0, &b1, 1), 0);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	double waited = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	printf("a stream that never opened was closed after %.2f s (hello_timeout_ms 300)\n",
	       waited);
	assert_true(waited < 8.0);
	nng_stream_free(silent);
	/* two open streams fill max_connections = 2; a third is closed at connect */
	nng_stream *a = open_stream(h.r->hello, h.r->hello->stream_ticket.data);
	nng_stream *b = open_stream(h.r->hello, h.r->hello->stream_ticket.data);
	send_req(a, 1, &mf->shard_id, hash); /* a is served before c connects */
	uint8_t *body;
	bulk_reply r = recv_reply(a, &body);
	assert_int_equal(r.code, WT_OK);
	free(body);
	nng_stream *c = st_dial(h.r->hello->stream_url);
	uint8_t o[BULK_OPEN_BYTES];
	bulk_open_encode(h.r->hello->stream_ticket.data, o);
	(void)st_io(c, 1, o, sizeof(o)); /* may already fail: closed at connect */
	assert_int_not_equal(st_io(c, 0, &b1, 1), 0);
	nng_stream_free(c);
	/* the refused stream is freed now, not when the next stream connects */
	clock_gettime(CLOCK_MONOTONIC, &t0);
	size_t held;
	do {
		held = wd_bulk_held(e->srv);
		clock_gettime(CLOCK_MONOTONIC, &t1);
	} while (held > 2 && t1.tv_sec - t0.tv_sec < 5 && usleep(1000) == 0);
	printf("streams held after one was refused: %zu (2 open)\n", held);
	assert_int_equal(held, 2);
	send_req(b, 2, &mf->shard_id, hash); /* the open ones keep serving */
	r = recv_reply(b, &body);
	assert_int_equal(r.code, WT_OK);
	assert_int_equal(r.id, 2);
	free(body);
	nng_stream_free(a);
	nng_stream_free(b);
	tw_reply_free(&m);
	tw_reply_free(&h);
	nng_close(s);
	tw_env_free(e);
}

static void test_fault_corrupts_copy(void **state)
{
	(void)state;
	nng_socket s;
	tw_reply h;
	tw_env *e = start_bulk(&s, &h, "wd-bulk-fault");
	tw_reply m = tw_manifest(s, "llama", 1, 0);
	const Weights__Manifest *mf = m.r->manifest;
	const Weights__ChunkRef *ref = mf->tensors[0]->chunks[0];
	e->faults.corrupt_chunk = 2; /* the second chunk reply of the server */
	nng_stream *st = open_stream(h.r->hello, h.r->hello->stream_ticket.data);
	for (uint64_t i = 0; i < 3; i++)
		send_req(st, 10 + i, &mf->shard_id, ref->hash.data);
	wt_hash128 want = common_hash128_from_bytes(ref->hash.data);
	int bad = 0;
	for (int i = 0; i < 3; i++) {
		uint8_t *body;
		bulk_reply r = recv_reply(st, &body);
		assert_int_equal(r.code, WT_OK);
		assert_true(r.id == 10 + (uint64_t)i); /* replies in request order */
		bad += !common_hash128_eq(common_hash128(body, (size_t)r.nbytes), want);
		free(body);
	}
	/* the server's 2nd prepared reply is corrupted (requests 1 and 2 are prepared
	 * side by side, so it is one of them); the cache's value is not */
	assert_int_equal(bad, 1);
	nng_stream_free(st);
	tw_reply_free(&m);
	tw_reply_free(&h);
	nng_close(s);
	tw_env_free(e);
}

/* Fetch llama TP=2 rank 1 with stream on/off over conns connections (a chunk
 * hash mismatch fetched once more with refetch); tensor bytes into digest. */
static uint32_t g_request_timeout_ms; /* 0: the default */

static int fetch_digest_opts(const char *url, int stream, uint32_t conns, uint32_t refetch,
                             wt_hash128 *digest, size_t *n_tensors, uint32_t *refetches)
{
	wt_client_opts o;
	wt_client_opts_init(&o);
	if (g_request_timeout_ms > 0)
		o.request_timeout_ms = g_request_timeout_ms;
	const char *eps[] = {url};
	o.endpoints = eps;
	o.n_endpoints = 1;
	o.stream = stream;
	o.connections = conns;
	o.window = 6;
	o.hash_refetch = refetch;
	wt_client *c = NULL;
	wt_manifest *m = NULL;
	wt_host_sink *h = NULL;
	wt_errbuf err;
	wt_layout l;
	wt_layout_init(&l);
	l.tp_size = 2;
	l.tp_rank = 1;
	int rv = wt_client_open(&c, &o, &err);
	if (rv == WT_OK)
		rv = wt_client_get_manifest(c, "llama", &l, &m, &err);
	if (rv == WT_OK)
		rv = wt_host_sink_create(&h, &err);
	wt_fetch_stats st;
	memset(&st, 0, sizeof(st));
	wt_fetch_opts fo;
	wt_fetch_opts_init(&fo);
	fo.stats = &st;
	if (rv == WT_OK)
		rv = wt_client_fetch(c, m, wt_host_sink_sink(h), &fo, &err);
	if (refetches != NULL)
		*refetches = st.refetches;
	if (rv != WT_OK)
		printf("fetch (stream %d): %s\n", stream, err.msg);
	common_hasher *hs = common_hasher_new();
	for (size_t i = 0; rv == WT_OK && i < wt_manifest_n_tensors(m); i++) {
		wt_tensor_info ti;
		wt_manifest_tensor(m, i, &ti);
		const void *d;
		size_t n;
		assert_int_equal(wt_host_sink_find(h, ti.name, &d, &n), WT_OK);
		common_hasher_update(hs, ti.name, strlen(ti.name));
		common_hasher_update(hs, d, n);
		*n_tensors = i + 1;
	}
	*digest = common_hasher_digest(hs);
	common_hasher_free(hs);
	wt_host_sink_destroy(h);
	wt_manifest_free(m);
	wt_client_close(c);
	return rv;
}

static int fetch_digest(const char *url, int stream, wt_hash128 *digest, size_t *n_tensors)
{
	return fetch_digest_opts(url, stream, 2, 0, digest, n_tensors, NULL);
}

static void test_client_stream(void **state)
{
	(void)state;
	nng_socket s;
	tw_reply h;
	tw_env *e = start_bulk(&s, &h, "wd-bulk-client");
	wt_hash128 a, b;
	size_t na = 0, nb = 0;
	assert_int_equal(fetch_digest(e->url, 0, &a, &na), WT_OK);
	assert_true(atomic_load(&e->srv->bulk_replies) == 0); /* stream 0: messages only */
	uint64_t before = atomic_load(&e->srv->chunk_replies);
	assert_int_equal(fetch_digest(e->url, 1, &b, &nb), WT_OK);
	uint64_t bulk = atomic_load(&e->srv->bulk_replies);
	printf("%zu tensors; %llu of %llu chunk replies on the bulk stream\n", nb,
	       (unsigned long long)bulk,
	       (unsigned long long)(atomic_load(&e->srv->chunk_replies) - before));
	assert_true(bulk > 8 && bulk == atomic_load(&e->srv->chunk_replies) - before);
	assert_true(na == nb && na > 0);
	assert_true(common_hash128_eq(a, b));
	/* a corrupted chunk on the stream is caught by the client */
	e->faults.corrupt_chunk = tw_settled_replies(e) + 3;
	assert_int_equal(fetch_digest(e->url, 1, &b, &nb), WT_EHASH);
	/* Fetched once more, the damaged chunk breaks the stream's run of its
	 * tensor (hashed as it arrived): the tensor is then hashed at delivery,
	 * and must still verify. Every position of the first chunks, in order
	 * on one stream: first, middle and last chunks of multi-chunk tensors. */
	for (uint64_t k = 1; k <= 8; k++) {
		uint32_t refetches = 0;
		e->faults.corrupt_chunk = tw_settled_replies(e) + k;
		assert_int_equal(fetch_digest_opts(e->url, 1, 1, 1, &b, &nb, &refetches), WT_OK);
		assert_int_equal(refetches, 1);
		assert_true(common_hash128_eq(a, b));
	}
	tw_reply_free(&h);
	nng_close(s);
	tw_env_free(e);
}

static void slow_receiver(void)
{
	usleep(200000);
}

/*
 * A fetch that fails (WT_EHASH on the stream) closes its bulk streams while a
 * receiver may have taken a request and not yet started receiving its reply.
 * A receive started on a closed nng 1.5 stream waits for its whole timeout:
 * the failed fetch then ended after request_timeout_ms (30 s stalls of
 * test_client_stream under ASan in CI). With the receiver held 200 ms in that
 * window (client_bulk_test_hook), the fetch ends at once: no I/O starts on a
 * stream once the fetch is closing (client/fetch_bulk.c conn_io_enter).
 */
static void test_close_race(void **state)
{
	(void)state;
	nng_socket s;
	tw_reply h;
	tw_env *e = start_bulk(&s, &h, "wd-bulk-race");
	wt_hash128 a;
	size_t na = 0;
	assert_int_equal(fetch_digest(e->url, 1, &a, &na), WT_OK); /* warm */
	g_request_timeout_ms = 5000;
	client_bulk_test_hook = slow_receiver;
	e->faults.corrupt_chunk = tw_settled_replies(e) + 2;
	uint64_t t0 = common_now_ns();
	int rv = fetch_digest(e->url, 1, &a, &na);
	double secs = (double)(common_now_ns() - t0) / 1e9;
	client_bulk_test_hook = NULL;
	g_request_timeout_ms = 0;
	printf("fetch failed (%s) in %.2f s with request_timeout_ms 5000\n", wt_errname(rv), secs);
	assert_int_equal(rv, WT_EHASH);
	assert_true(secs < 4.0); /* before: >= 5 s, a receive waited out its timeout */
	tw_reply_free(&h);
	nng_close(s);
	tw_env_free(e);
}

/* stream_listen on the any-address is offered as the address the client
 * reached (not 0.0.0.0, which no client can dial), and the stream works. */
static void test_wildcard_host(void **state)
{
	(void)state;
	tw_env *e = tw_env_new("wd-bulk-any", SEED);
	wt_errbuf err;
	assert_int_equal(wd_config_set(&e->cfg, "stream_listen", "tcp://0.0.0.0:0", "test", &err),
	                 WT_OK);
	assert_int_equal(tw_start(e), WT_OK);
	nng_socket s = tw_dial(e->url); /* tcp://127.0.0.1:PORT */
	tw_reply h = tw_hello(s, WEIGHTS__PROTOCOL_VERSION__PROTOCOL_VERSION, NULL);
	assert_int_equal(h.r->body_case, WEIGHTS__REPLY__BODY_HELLO);
	printf("stream_listen tcp://0.0.0.0:0 offered as %s\n", h.r->hello->stream_url);
	assert_non_null(strstr(h.r->hello->stream_url, "tcp://127.0.0.1:"));
	assert_string_not_equal(h.r->hello->stream_url, "tcp://127.0.0.1:0");
	wt_hash128 a, b;
	size_t na = 0, nb = 0;
	assert_int_equal(fetch_digest(e->url, 0, &a, &na), WT_OK);
	assert_int_equal(fetch_digest(e->url, 1, &b, &nb), WT_OK);
	assert_true(atomic_load(&e->srv->bulk_replies) > 0); /* the offered URL was dialed */
	assert_true(na == nb && na > 0 && common_hash128_eq(a, b));
	tw_reply_free(&h);
	nng_close(s);
	tw_env_free(e);
}

static void test_client_fallback(void **state)
{
	(void)state;
	tw_env *e = tw_env_new("wd-bulk-fallback", SEED); /* stream_listen off */
	assert_int_equal(tw_start(e), WT_OK);
	wt_hash128 a, b;
	size_t na = 0, nb = 0;
	assert_int_equal(fetch_digest(e->url, 1, &b, &nb), WT_OK); /* asked, not offered */
	assert_int_equal(fetch_digest(e->url, 0, &a, &na), WT_OK);
	assert_true(atomic_load(&e->srv->bulk_replies) == 0);
	assert_true(na == nb && na > 0 && common_hash128_eq(a, b));
	tw_env_free(e);
}

/* The stream is offered but cannot be dialed (its ipc socket file is gone):
 * the fetch goes over messages, same bytes, and no stream reply is sent. */
static void test_client_dial_fails(void **state)
{
	(void)state;
	tw_env *e = tw_env_new("wd-bulk-nodial", SEED);
	char *sock = tu_path(e->dir, "bulk.sock");
	char url[600];
	snprintf(url, sizeof(url), "ipc://%s", sock);
	wt_errbuf err;
	assert_int_equal(wd_config_set(&e->cfg, "stream_listen", url, "test", &err), WT_OK);
	assert_int_equal(tw_start(e), WT_OK);
	assert_int_equal(unlink(sock), 0);
	wt_hash128 a, b;
	size_t na = 0, nb = 0;
	assert_int_equal(fetch_digest(e->url, 1, &b, &nb), WT_OK); /* offered, not reachable */
	assert_int_equal(fetch_digest(e->url, 0, &a, &na), WT_OK);
	assert_true(atomic_load(&e->srv->bulk_replies) == 0);
	assert_true(na == nb && na > 0 && common_hash128_eq(a, b));
	free(sock);
	tw_env_free(e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_off_by_default),  cmocka_unit_test(test_identical_bytes),
	    cmocka_unit_test(test_errors),          cmocka_unit_test(test_fault_corrupts_copy),
	    cmocka_unit_test(test_client_stream),   cmocka_unit_test(test_close_race),
	    cmocka_unit_test(test_client_fallback), cmocka_unit_test(test_wildcard_host),
	    cmocka_unit_test(test_unauth_limits),   cmocka_unit_test(test_client_dial_fails),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
