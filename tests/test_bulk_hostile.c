/*
 * test_bulk_hostile.c — the bulk data plane (proto/bulk.h) against hostile
 * peers:
 *   - weightd: streams whose peers closed are freed within a second, not
 *     only at the next accept;
 *   - weightd: a stream that trickles its opening message a byte at a time is
 *     closed hello_timeout_ms after it connected (each byte used to restart
 *     the timeout: 24 bytes held an unauthenticated stream 24 times as long);
 *   - libweights: an ok reply that announces error text (msg_len > 0) is a
 *     framing error that ends the stream, and the fetch goes on over messages
 *     (the client used to take the text for the chunk's first bytes: a
 *     WT_EHASH blamed on the chunk, then a stream out of step);
 *   - weightd: a peer that stops reading its replies has its stream ended
 *     after send_timeout_ms (it held the chunks it was sent for as long as it
 *     stayed connected: write-behind RAM that cut-through productions wait for);
 *   - weightd: a peer that stops reading its replies over messages (nng) has
 *     its connection closed after send_timeout_ms: its replies held every
 *     context, and no other client was served, for as long as it stayed
 *     connected.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>

#include <cmocka.h>

#include "common/common.h"
#include "proto/bulk.h"
#include "test_bulk_util.h"
#include "test_weightd_util.h"
#include "tests/util/hostile_weightd.h"
#include "weights/client.h"
#include "weights/engine.h"

#define SEED 0xb0057ull

static double now_s(void)
{
	return (double)common_now_ns() / 1e9;
}

/* One send or receive of up to n bytes within ms; the nng result. */
static int st_once(nng_stream *st, int send, void *buf, size_t n, nng_duration ms)
{
	nng_aio *aio;
	if (nng_aio_alloc(&aio, NULL, NULL) != 0)
		abort();
	nng_aio_set_timeout(aio, ms);
	nng_iov v = {.iov_buf = buf, .iov_len = n};
	nng_aio_set_iov(aio, 1, &v);
	if (send)
		nng_stream_send(st, aio);
	else
		nng_stream_recv(st, aio);
	nng_aio_wait(aio);
	int rv = nng_aio_result(aio);
	nng_aio_free(aio);
	return rv;
}

/* Request a chunk of shard "none" as id on open stream st: the server answers
 * WT_ENOTFOUND and the stream goes on (it serves). */
static void expect_notfound(nng_stream *st, uint64_t id)
{
	wt_errbuf err;
	bulk_req q = {.id = id, .shard_id_len = 4};
	uint8_t b[BULK_REQ_BYTES + 4];
	bulk_req_encode(&q, b);
	memcpy(b + BULK_REQ_BYTES, "none", 4);
	assert_int_equal(st_once(st, 1, b, sizeof(b), 1000), 0);
	uint8_t rh[BULK_REPLY_BYTES];
	assert_int_equal(st_io(st, 0, rh, sizeof(rh)), 0);
	bulk_reply rp;
	assert_int_equal(bulk_reply_decode(rh, 0, &rp, &err), WT_OK);
	assert_int_equal(rp.id, id);
	assert_int_equal(rp.code, WT_ENOTFOUND);
}

/* An in-process weightd with a bulk stream (hello_timeout_ms when not NULL),
 * the Hello of a connection s to it (*h, its stream_url and ticket) and the
 * opening message for its streams (o). */
static tw_env *stream_env(const char *tag, const char *hello_timeout_ms, nng_socket *s, tw_reply *h,
                          uint8_t o[BULK_OPEN_BYTES])
{
	tw_env *e = tw_env_new(tag, SEED);
	wt_errbuf err;
	assert_int_equal(wd_config_set(&e->cfg, "stream_listen", "tcp://127.0.0.1:0", "test", &err),
	                 WT_OK);
	if (hello_timeout_ms != NULL)
		assert_int_equal(
		    wd_config_set(&e->cfg, "hello_timeout_ms", hello_timeout_ms, "test", &err),
		    WT_OK);
	assert_int_equal(tw_start(e), WT_OK);
	*s = tw_dial(e->url);
	*h = tw_hello(*s, WEIGHTS__PROTOCOL_VERSION__PROTOCOL_VERSION, NULL);
	assert_int_equal(h->r->body_case, WEIGHTS__REPLY__BODY_HELLO);
	bulk_open_encode(h->r->hello->stream_ticket.data, o);
	return e;
}

/* The opening message a byte every 100 ms (never whole: 23 of its 24 bytes)
 * to a server with hello_timeout_ms 500: it closes the stream after about
 * 0.5 s, not 0.5 s after the last byte. */
static void test_trickled_open(void **state)
{
	(void)state;
	nng_socket s;
	tw_reply h;
	uint8_t o[BULK_OPEN_BYTES];
	tw_env *e = stream_env("bulk-hostile-open", "500", &s, &h, o);
	nng_stream *st = st_dial(h.r->hello->stream_url);
	double t0 = now_s(), closed = -1;
	for (size_t i = 0; i + 1 < sizeof(o) && closed < 0; i++) {
		uint8_t x;
		if (st_once(st, 1, o + i, 1, 1000) != 0 ||
		    st_once(st, 0, &x, 1, 100) != NNG_ETIMEDOUT)
			closed = now_s() - t0;
	}
	printf("opening message trickled a byte per 100 ms, hello_timeout_ms 500: %s\n",
	       closed < 0 ? "still open after 23 bytes" : "closed");
	if (closed >= 0)
		printf("closed after %.2f s\n", closed);
	assert_true(closed >= 0.4 && closed < 1.5);
	nng_stream_free(st);
	/* the daemon goes on: a stream that opens at once is served, also after
	 * idling past hello_timeout_ms (the deadline is the opening message's) */
	st = st_dial(h.r->hello->stream_url);
	assert_int_equal(st_once(st, 1, o, sizeof(o), 1000), 0);
	usleep(800 * 1000);
	expect_notfound(st, 1);
	nng_stream_free(st);
	tw_reply_free(&h);
	nng_close(s);
	tw_env_free(e);
}

/* Streams that end (8 opened and closed by their peers, as clients that
 * canceled their fetches and exited) are freed by weightd within a second,
 * with no other stream connecting: before, only the next accept freed them,
 * and their sockets and memory stayed held until then (reliability
 * `interrupt`: 16 sockets of canceled weightctl fetches still open 35 s
 * later). A new stream is then served. */
static void test_ended_streams_freed(void **state)
{
	(void)state;
	nng_socket s;
	tw_reply h;
	uint8_t o[BULK_OPEN_BYTES];
	tw_env *e = stream_env("bulk-hostile-reap", NULL, &s, &h, o);
	nng_stream *st[8];
	for (int i = 0; i < 8; i++) {
		st[i] = st_dial(h.r->hello->stream_url);
		assert_int_equal(st_once(st[i], 1, o, sizeof(o), 1000), 0);
	}
	double t0 = now_s();
	while (wd_bulk_held(e->srv) < 8 && now_s() - t0 < 5)
		usleep(1000);
	assert_int_equal(wd_bulk_held(e->srv), 8);
	for (int i = 0; i < 8; i++)
		nng_stream_free(st[i]); /* closes: the peer is gone */
	t0 = now_s();
	size_t held;
	while ((held = wd_bulk_held(e->srv)) > 0 && now_s() - t0 < 5)
		usleep(1000);
	printf("8 streams whose peers closed: %zu still held %.3f s later\n", held, now_s() - t0);
	assert_int_equal(held, 0);
	assert_true(now_s() - t0 < 1.0);
	/* the daemon goes on */
	nng_stream *n = st_dial(h.r->hello->stream_url);
	assert_int_equal(st_once(n, 1, o, sizeof(o), 1000), 0);
	expect_notfound(n, 7);
	nng_stream_free(n);
	tw_reply_free(&h);
	nng_close(s);
	tw_env_free(e);
}

/* An ok reply with 8 bytes of "error text" before the chunk's bytes. */
static void ok_with_text(hostile *h, nng_stream *st, const bulk_req *br)
{
	uint64_t off, len;
	if (!hw_find_chunk(h, br->hash, &off, &len))
		return;
	bulk_reply rp;
	memset(&rp, 0, sizeof(rp));
	rp.id = br->id;
	rp.msg_len = 8;
	rp.nbytes = len;
	memcpy(rp.chunk_hash, br->hash, 16);
	uint8_t hd[BULK_REPLY_BYTES + 8];
	bulk_reply_encode(&rp, hd);
	memcpy(hd + BULK_REPLY_BYTES, "all good", 8);
	if (hw_write(st, hd, sizeof(hd)) == 0)
		hw_write(st, h->data + off, len);
}

static void log_capture(void *ctx, int level, const char *msg)
{
	(void)level;
	char *log = ctx;
	if (strstr(msg, "msg_len") != NULL)
		snprintf(log, 512, "%s", msg);
}

static void test_ok_reply_with_text(void **state)
{
	(void)state;
	/* the decoder: an ok reply carries no text */
	bulk_reply rp = {.id = 7, .msg_len = 1, .nbytes = 4};
	uint8_t hd[BULK_REPLY_BYTES];
	bulk_reply_encode(&rp, hd);
	wt_errbuf err;
	assert_int_equal(bulk_reply_decode(hd, 4, &rp, &err), WT_EPROTO);
	printf("decode: %s\n", err.msg);
	/* the client: the stream fails, messages fetch the tensor */
	hostile *h = hw_start(64 << 10, 16 << 10, true);
	h->on_bulk = ok_with_text;
	char log[512] = "";
	wt_client_opts o;
	wt_client_opts_init(&o);
	const char *eps[1] = {h->url};
	o.endpoints = eps;
	o.n_endpoints = 1;
	o.stream = 1;
	o.hash_refetch = 0; /* a mismatch blamed on the chunk is final */
	o.request_timeout_ms = 2000;
	o.log = log_capture;
	o.log_ctx = log;
	wt_client *c = NULL;
	assert_int_equal(wt_client_open(&c, &o, &err), WT_OK);
	wt_layout l;
	wt_layout_init(&l);
	wt_manifest *m = NULL;
	assert_int_equal(wt_client_get_manifest(c, "fake", &l, &m, &err), WT_OK);
	wt_host_sink *hs;
	assert_int_equal(wt_host_sink_create(&hs, &err), WT_OK);
	int rv = wt_client_fetch(c, m, wt_host_sink_sink(hs), NULL, &err);
	printf("ok reply with 8 bytes of text: %s%s%s\nlog: %s\n", wt_errname(rv),
	       rv != WT_OK ? ": " : "", rv != WT_OK ? err.msg : "", log);
	assert_int_equal(rv, WT_OK);
	assert_non_null(strstr(log, "msg_len 8"));
	const void *p = NULL;
	uint64_t n = 0;
	assert_int_equal(wt_host_sink_find(hs, "w", &p, &n), WT_OK);
	assert_int_equal(n, 64 << 10);
	assert_memory_equal(p, h->data, n);
	wt_host_sink_destroy(hs);
	wt_manifest_free(m);
	wt_client_close(c);
	hw_stop(h);
}

/* A llama with 4 MiB chunks (embed and lm_head 8 MiB each), F32. */
static const char wide_config[] =
    "{\"architectures\": [\"LlamaForCausalLM\"], \"model_type\": \"llama\", "
    "\"hidden_size\": 512, \"num_attention_heads\": 8, \"num_key_value_heads\": 8, "
    "\"intermediate_size\": 512, \"num_hidden_layers\": 1, \"vocab_size\": 4096, "
    "\"tie_word_embeddings\": false, \"torch_dtype\": \"float32\"}";

static void write_wide(const char *models)
{
	static const char *const sq[] = {"self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj",
	                                 "self_attn.o_proj", "mlp.gate_proj",    "mlp.up_proj",
	                                 "mlp.down_proj"};
	tw_descs t;
	memset(&t, 0, sizeof(t));
	tw_add(&t, "model.embed_tokens.weight", 2, 4096, 512);
	tw_add(&t, "lm_head.weight", 2, 4096, 512);
	tw_add(&t, "model.norm.weight", 1, 512, 0);
	tw_add(&t, "model.layers.0.input_layernorm.weight", 1, 512, 0);
	tw_add(&t, "model.layers.0.post_attention_layernorm.weight", 1, 512, 0);
	for (size_t i = 0; i < sizeof(sq) / sizeof(sq[0]); i++) {
		char name[96];
		snprintf(name, sizeof(name), "model.layers.0.%s.weight", sq[i]);
		tw_add(&t, name, 2, 512, 512);
	}
	char *dir = tu_path(models, "wide");
	assert_int_equal(tu_write_ckpt(dir, wide_config, t.d, t.n, 1, SEED), 0);
	free(dir);
}

/* A plain TCP connection to the stream URL with a tiny receive buffer (set
 * before connecting, so the window stays small): a reader that stops. */
static int raw_dial_small(const char *url)
{
	int port = 0;
	assert_int_equal(sscanf(url, "tcp://127.0.0.1:%d", &port), 1);
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	assert_true(fd >= 0);
	int sz = 4096;
	assert_int_equal(setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &sz, sizeof(sz)), 0);
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(connect(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	return fd;
}

/* The largest chunk of mf: a whole 4 MiB one (chunk_bytes 4M, the "wide" model). */
static const Weights__ChunkRef *biggest_chunk(const Weights__Manifest *mf)
{
	const Weights__ChunkRef *big = NULL;
	for (size_t i = 0; i < mf->n_tensors; i++)
		for (size_t k = 0; k < mf->tensors[i]->n_chunks; k++)
			if (big == NULL || mf->tensors[i]->chunks[k]->nbytes > big->nbytes)
				big = mf->tensors[i]->chunks[k];
	assert_non_null(big);
	assert_int_equal(big->nbytes, 4u << 20);
	return big;
}

/* A client that asks for two 4 MiB chunks on its stream and stops reading:
 * with send_timeout_ms 500 weightd ends the stream (the replies it held are
 * let go) instead of holding them for as long as the peer stays connected.
 * Read afterwards, the stream ends before the 8 MiB asked for. */
static void test_stalled_reader(void **state)
{
	(void)state;
	tw_env *e = tw_env_new("bulk-hostile-stall", SEED);
	write_wide(e->models);
	wt_errbuf err;
	assert_int_equal(wd_config_set(&e->cfg, "stream_listen", "tcp://127.0.0.1:0", "test", &err),
	                 WT_OK);
	assert_int_equal(wd_config_set(&e->cfg, "chunk_bytes", "4M", "test", &err), WT_OK);
	assert_int_equal(wd_config_set(&e->cfg, "send_timeout_ms", "500", "test", &err), WT_OK);
	assert_int_equal(tw_start(e), WT_OK);
	nng_socket s = tw_dial(e->url);
	tw_reply h = tw_hello(s, WEIGHTS__PROTOCOL_VERSION__PROTOCOL_VERSION, NULL);
	assert_int_equal(h.r->body_case, WEIGHTS__REPLY__BODY_HELLO);
	tw_reply m = tw_manifest(s, "wide", 1, 0); /* produced and committed */
	assert_int_equal(m.r->body_case, WEIGHTS__REPLY__BODY_MANIFEST);
	const Weights__Manifest *mf = m.r->manifest;
	const Weights__ChunkRef *big = biggest_chunk(mf);
	int fd = raw_dial_small(h.r->hello->stream_url);
	uint8_t o[BULK_OPEN_BYTES];
	bulk_open_encode(h.r->hello->stream_ticket.data, o);
	assert_int_equal(write(fd, o, sizeof(o)), (ssize_t)sizeof(o));
	for (uint64_t id = 1; id <= 2; id++) {
		bulk_req q = {.id = id, .shard_id_len = (uint32_t)mf->shard_id.len};
		memcpy(q.hash, big->hash.data, 16);
		uint8_t b[BULK_REQ_BYTES + BULK_MAX_SHARD_ID];
		bulk_req_encode(&q, b);
		memcpy(b + BULK_REQ_BYTES, mf->shard_id.data, mf->shard_id.len);
		size_t n = BULK_REQ_BYTES + mf->shard_id.len;
		assert_int_equal(write(fd, b, n), (ssize_t)n);
	}
	usleep(2000 * 1000); /* not reading: the replies stop moving */
	uint64_t want = 2 * (BULK_REPLY_BYTES + (4u << 20)), got = 0;
	static uint8_t buf[1 << 16];
	struct timeval tv = {.tv_sec = 5};
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	for (ssize_t r; got < want && (r = read(fd, buf, sizeof(buf))) > 0;)
		got += (uint64_t)r;
	printf("a reader that stopped for 2 s, send_timeout_ms 500: %llu of %llu bytes, then %s\n",
	       (unsigned long long)got, (unsigned long long)want,
	       got < want ? "the stream ended" : "all of it (still open)");
	assert_true(got < want);
	assert_int_equal(atomic_load(&e->srv->stalled_closed),
	                 1); /* weightd_stalled_closed_total */
	close(fd);
	/* the daemon goes on serving */
	tw_reply x = tw_list_models(s);
	assert_int_equal(x.rv, WT_OK);
	tw_reply_free(&x);
	tw_reply_free(&m);
	tw_reply_free(&h);
	nng_close(s);
	tw_env_free(e);
}

/* One framed Chunk request for chunk ref of shard mf, as a req0 peer sends it
 * on TCP: 8-byte big-endian length, 4-byte request id (high bit set), body. */
static void raw_send_chunk(int fd, const Weights__Manifest *mf, const Weights__ChunkRef *ref,
                           uint32_t id)
{
	Weights__ChunkRequest cr = WEIGHTS__CHUNK_REQUEST__INIT;
	cr.shard_id = mf->shard_id;
	cr.hash = ref->hash;
	Weights__Request rq = WEIGHTS__REQUEST__INIT;
	rq.id = id;
	rq.body_case = WEIGHTS__REQUEST__BODY_CHUNK;
	rq.chunk = &cr;
	size_t n = wire_framed_size(&rq.base);
	uint8_t *b = malloc(12 + n);
	assert_non_null(b);
	uint64_t len = 4 + n;
	for (int i = 0; i < 8; i++)
		b[i] = (uint8_t)(len >> (56 - 8 * i));
	uint32_t rid = 0x80000000u | id;
	for (int i = 0; i < 4; i++)
		b[8 + i] = (uint8_t)(rid >> (24 - 8 * i));
	assert_int_equal(wire_frame(&rq.base, b + 12, n), n);
	assert_int_equal(write(fd, b, 12 + n), (ssize_t)(12 + n));
	free(b);
}

/* A req0 peer with a tiny receive buffer asks for more 4 MiB chunks over
 * messages than weightd has contexts, and stops reading (a SIGSTOPped
 * client). Its replies wait behind the one stuck on its connection, each
 * holding a context: before, every context stayed so for as long as the peer
 * stayed connected and no other client was answered. With send_timeout_ms
 * 500 a reply that waited that long closes the connection (its replies are
 * let go): another client is answered, and the stopped peer's connection
 * ends before the replies it asked for. */
static void test_stalled_msg_reader(void **state)
{
	(void)state;
	enum { CONTEXTS = 4, ASKED = CONTEXTS + 2 };
	tw_env *e = tw_env_new("bulk-hostile-msg-stall", SEED);
	write_wide(e->models);
	wt_errbuf err;
	assert_int_equal(wd_config_set(&e->cfg, "chunk_bytes", "4M", "test", &err), WT_OK);
	assert_int_equal(wd_config_set(&e->cfg, "contexts", "4", "test", &err), WT_OK);
	assert_int_equal(wd_config_set(&e->cfg, "max_watchers", "1", "test", &err), WT_OK);
	assert_int_equal(wd_config_set(&e->cfg, "send_timeout_ms", "500", "test", &err), WT_OK);
	assert_int_equal(tw_start(e), WT_OK);
	nng_socket s = tw_dial(e->url);
	tw_reply m = tw_manifest(s, "wide", 1, 0); /* produced and committed */
	if (m.rv != WT_OK)
		fail_msg("manifest: %s", wt_strerror(m.rv));
	assert_int_equal(m.r->body_case, WEIGHTS__REPLY__BODY_MANIFEST);
	const Weights__Manifest *mf = m.r->manifest;
	const Weights__ChunkRef *big = biggest_chunk(mf);
	int fd = raw_dial_small(e->url);
	static const uint8_t hdr[8] = {0, 'S', 'P', 0, 0, 0x30, 0, 0}; /* req0 */
	assert_int_equal(write(fd, hdr, sizeof(hdr)), (ssize_t)sizeof(hdr));
	for (uint32_t id = 1; id <= ASKED; id++)
		raw_send_chunk(fd, mf, big, id);
	usleep(1500 * 1000); /* not reading: the replies stop moving */
	nng_socket_set_ms(s, NNG_OPT_RECVTIMEO, 5000);
	tw_reply x = tw_list_models(s); /* another client */
	printf("a message reader that stopped with %d chunks asked, %d contexts, send_timeout_ms "
	       "500: another client %s\n",
	       ASKED, CONTEXTS, x.rv == WT_OK ? "answered" : "not answered");
	assert_int_equal(x.rv, WT_OK);
	tw_reply_free(&x);
	uint64_t want = (uint64_t)ASKED * (4u << 20), got = 0;
	static uint8_t buf[1 << 16];
	struct timeval tv = {.tv_sec = 5};
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	for (ssize_t r; got < want && (r = read(fd, buf, sizeof(buf))) > 0;)
		got += (uint64_t)r;
	printf("then read: %llu of %llu bytes asked, %s\n", (unsigned long long)got,
	       (unsigned long long)want, got < want ? "the connection ended" : "all of it");
	assert_true(got < want);
	assert_int_equal(atomic_load(&e->srv->stalled_closed),
	                 1); /* weightd_stalled_closed_total */
	close(fd);
	tw_reply_free(&m);
	nng_close(s);
	tw_env_free(e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_trickled_open),      cmocka_unit_test(test_ended_streams_freed),
	    cmocka_unit_test(test_ok_reply_with_text), cmocka_unit_test(test_stalled_reader),
	    cmocka_unit_test(test_stalled_msg_reader),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
