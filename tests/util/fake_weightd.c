/* fake_weightd.c — the in-process fake weightd of the client tests (fake_weightd.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <cmocka.h>
#include <netinet/in.h>
#include <nng/nng.h>
#include <nng/protocol/reqrep0/rep.h>
#include <sys/socket.h>

#include "common/common.h"
#include "proto/wire.h"
#include "tests/util/fake_weightd.h"
#include "tests/util/pb_manifest.h"
#include "tests/util/tcp_proxy.h"
#include "tests/util/testutil.h"
#include "weights/client.h"
#include "weights/weights.h"

const fake_tensor_def fake_shard_def[FAKE_N_T] = {
    {"a.weight", WT_F32, 2112}, /* 8448 bytes: 9 chunks */
    {"b.bias", WT_BF16, 0},
    {"c.weight", WT_BF16, 1000}, /* 2000 bytes: 2 chunks */
    {"d.scale", WT_F32, 1},      /* 4 bytes: 1 chunk */
};

static void note_pipe(uint32_t *v, int *n, uint32_t id)
{
	for (int i = 0; i < *n; i++)
		if (v[i] == id)
			return;
	if (*n < 32)
		v[(*n)++] = id;
}

static size_t global_chunk(const fake *f, size_t t, uint64_t off)
{
	size_t g = 0;
	for (size_t i = 0; i < t; i++)
		g += (size_t)((f->nbytes[i] + FAKE_CHUNK_BYTES - 1) / FAKE_CHUNK_BYTES);
	return g + (size_t)(off / FAKE_CHUNK_BYTES);
}

static void send_reply(fake *f, Weights__Reply *r, const uint8_t *tail, size_t tail_len,
                       int corrupt)
{
	size_t n = wire_framed_size(&r->base);
	nng_msg *m;
	assert_int_equal(nng_msg_alloc(&m, n + tail_len), 0);
	assert_int_equal(wire_frame(&r->base, nng_msg_body(m), n), n);
	if (tail_len)
		memcpy((uint8_t *)nng_msg_body(m) + n, tail, tail_len);
	if (corrupt)
		((uint8_t *)nng_msg_body(m))[n + tail_len / 2] ^= 0x40;
	if (nng_sendmsg(f->sock, m, 0) != 0)
		nng_msg_free(m);
}

static void send_error(fake *f, uint64_t id, int code, const char *msg)
{
	Weights__Reply r = WEIGHTS__REPLY__INIT;
	Weights__Error e = WEIGHTS__ERROR__INIT;
	e.code = (uint32_t)code;
	e.message = (char *)msg;
	r.id = id;
	r.body_case = WEIGHTS__REPLY__BODY_ERROR;
	r.error = &e;
	send_reply(f, &r, NULL, 0, 0);
}

/* Manifest of the fake shard, packed into one reply. */
static void send_manifest(fake *f, uint64_t id)
{
	pbm_tensor t[FAKE_N_T];
	for (size_t i = 0; i < FAKE_N_T; i++)
		t[i] = (pbm_tensor){fake_shard_def[i].name, fake_shard_def[i].dt, f->data[i],
		                    f->nbytes[i]};
	pbm b;
	pbm_build(&b, t, FAKE_N_T, FAKE_CHUNK_BYTES, false);
	if (f->bad_tensor_hash)
		b.th[2][0] ^= 1; /* c.weight */
	char rev[32];
	snprintf(rev, sizeof(rev), "rev%d", f->revision);
	b.m.model = "fake";
	b.m.revision = rev;
	b.m.layout_text = "tp=1,ep=1";
	b.m.shard_id.data = (uint8_t *)"shard-1";
	b.m.shard_id.len = 7;
	Weights__Reply r = WEIGHTS__REPLY__INIT;
	r.id = id;
	r.body_case = WEIGHTS__REPLY__BODY_MANIFEST;
	r.manifest = &b.m;
	send_reply(f, &r, NULL, 0, 0);
	pbm_free(&b);
}

static void serve_chunk(fake *f, const Weights__Request *q)
{
	int k = __atomic_fetch_add(&f->chunk_reqs, 1, __ATOMIC_SEQ_CST);
	int delay_ms = atomic_load(&f->chunk_delay_ms);
	if (delay_ms > 0)
		usleep((useconds_t)delay_ms * 1000u);
	if (k == f->drop_req)
		return; /* lost reply: the client times out */
	if (f->forget_after >= 0 && k >= f->forget_after && !f->forgotten)
		f->forgotten = 1;
	if (f->forgotten) {
		send_error(f, q->id, WT_ENOTFOUND, "unknown shard (restarted)");
		return;
	}
	for (size_t i = 0; i < FAKE_N_T; i++)
		for (uint64_t off = 0; off < f->nbytes[i]; off += FAKE_CHUNK_BYTES) {
			uint64_t len = f->nbytes[i] - off < FAKE_CHUNK_BYTES ? f->nbytes[i] - off
			                                                     : FAKE_CHUNK_BYTES;
			uint8_t h[16];
			common_hash128_to_bytes(common_hash128(f->data[i] + off, len), h);
			if (q->chunk->hash.len != 16 || memcmp(h, q->chunk->hash.data, 16) != 0)
				continue;
			Weights__Reply r = WEIGHTS__REPLY__INIT;
			Weights__ChunkReply c = WEIGHTS__CHUNK_REPLY__INIT;
			c.hash.data = h;
			c.hash.len = 16;
			c.nbytes = len;
			r.id = q->id;
			r.body_case = WEIGHTS__REPLY__BODY_CHUNK;
			r.chunk = &c;
			int gc = (int)global_chunk(f, i, off);
			if (k == f->ecorrupt_req || gc == f->ecorrupt_chunk) {
				/* as weightd: the cache re-hash failed, the shard is evicted */
				f->forgotten = 1;
				send_error(f, q->id, WT_ECORRUPT,
				           "chunk failed its XXH3-128 on disk; shard evicted");
				return;
			}
			int bad = k == f->corrupt_req || gc == f->corrupt_chunk;
			send_reply(f, &r, f->data[i] + off, (size_t)len, bad);
			return;
		}
	send_error(f, q->id, WT_ENOTFOUND, "no such chunk");
}

static void *fake_main(void *arg)
{
	fake *f = arg;
	while (!__atomic_load_n(&f->stop, __ATOMIC_SEQ_CST)) {
		nng_msg *m;
		if (nng_recvmsg(f->sock, &m, 0) != 0)
			continue; /* receive timeout: check stop */
		Weights__Request *q = NULL;
		if (wire_parse_request(nng_msg_body(m), nng_msg_len(m), 1 << 20, &q, NULL) !=
		    WT_OK) {
			nng_msg_free(m);
			continue;
		}
		uint32_t pipe = (uint32_t)nng_pipe_id(nng_msg_get_pipe(m));
		nng_msg_free(m);
		if (__atomic_load_n(&f->down, __ATOMIC_SEQ_CST)) {
			wire_request_free(q); /* going down: dropped, as by a killed process */
			continue;
		}
		if ((f->stall_after_hellos > 0 && f->hellos >= f->stall_after_hellos) ||
		    (f->stall_after_chunks > 0 && f->chunk_reqs >= f->stall_after_chunks)) {
			wire_request_free(q); /* stopped (SIGSTOP): received, never answered */
			continue;
		}
		if (q->body_case == WEIGHTS__REQUEST__BODY_HELLO)
			note_pipe(f->hello_pipes, &f->n_hello_pipes, pipe);
		else if (q->body_case == WEIGHTS__REQUEST__BODY_CHUNK)
			note_pipe(f->chunk_pipes, &f->n_chunk_pipes, pipe);
		Weights__Reply r = WEIGHTS__REPLY__INIT;
		r.id = q->id;
		if (q->body_case == WEIGHTS__REQUEST__BODY_HELLO && ++f->hellos == f->drop_hello) {
			/* a Hello starved behind other work: no reply */
		} else if (q->body_case == WEIGHTS__REQUEST__BODY_HELLO) {
			Weights__HelloReply h = WEIGHTS__HELLO_REPLY__INIT;
			h.protocol_version = 1;
			h.server_id = "fake";
			h.max_chunk_bytes = FAKE_CHUNK_BYTES;
			r.body_case = WEIGHTS__REPLY__BODY_HELLO;
			r.hello = &h;
			send_reply(f, &r, NULL, 0, 0);
		} else if (q->body_case == WEIGHTS__REQUEST__BODY_MANIFEST) {
			f->manifests++;
			int code = atomic_load(&f->answer_manifest);
			if (code != 0) {
				send_error(f, q->id, code, "fake: its source failed");
				wire_request_free(q);
				continue;
			}
			if (f->forgotten && f->change_on_manifest) {
				f->change_on_manifest = 0;
				f->data[0][0] ^=
				    1; /* the source changed: new bytes, new revision */
				f->revision++;
			}
			f->forgotten = 0;
			f->forget_after = -1;
			send_manifest(f, q->id);
		} else if (q->body_case == WEIGHTS__REQUEST__BODY_CHUNK) {
			serve_chunk(f, q);
		} else if (q->body_case == WEIGHTS__REQUEST__BODY_ADMIN) {
			atomic_fetch_add(&f->admins, 1);
			int code = atomic_load(&f->answer_admin);
			send_error(f, q->id, code ? code : WT_EUNSUPPORTED,
			           code ? "fake: cannot save the registry" : "not in the fake");
		} else if (q->body_case == WEIGHTS__REQUEST__BODY_LIST_MODELS) {
			Weights__ModelList ml = WEIGHTS__MODEL_LIST__INIT;
			Weights__ModelInfo mi = WEIGHTS__MODEL_INFO__INIT, *mp = &mi;
			mi.name = "fake";
			mi.architecture = "LlamaForCausalLM";
			mi.n_tensors = 7;
			mi.available = 1;
			ml.n_models = 1;
			ml.models = &mp;
			r.body_case = WEIGHTS__REPLY__BODY_MODELS;
			r.models = &ml;
			send_reply(f, &r, NULL, 0, 0);
		} else if (q->body_case == WEIGHTS__REQUEST__BODY_WATCH && f->watch_revision) {
			Weights__WatchReply wr = WEIGHTS__WATCH_REPLY__INIT;
			wr.revision = (char *)f->watch_revision;
			wr.changed = f->watch_changed != 0;
			r.body_case = WEIGHTS__REPLY__BODY_WATCH;
			r.watch = &wr;
			send_reply(f, &r, NULL, 0, 0);
		} else {
			send_error(f, q->id, WT_EUNSUPPORTED, "not in the fake");
		}
		wire_request_free(q);
	}
	return NULL;
}

/* Pipe notifications: the connections open on the fake's side of the proxy. */
static void pipe_cb(nng_pipe p, nng_pipe_ev ev, void *arg)
{
	fake *f = arg;
	pthread_mutex_lock(&f->pipes_lk);
	if (ev == NNG_PIPE_EV_ADD_POST && f->n_live < 64) {
		f->live[f->n_live++] = p;
	} else if (ev == NNG_PIPE_EV_REM_POST) {
		for (int i = 0; i < f->n_live; i++)
			if (nng_pipe_id(f->live[i]) == nng_pipe_id(p)) {
				f->live[i] = f->live[--f->n_live];
				break;
			}
	}
	pthread_mutex_unlock(&f->pipes_lk);
}

fake *fake_start(void)
{
	fake *f = calloc(1, sizeof(*f));
	assert_non_null(f);
	f->corrupt_req = f->corrupt_chunk = f->drop_req = f->forget_after = -1;
	f->ecorrupt_req = f->ecorrupt_chunk = -1;
	f->revision = 1;
	pthread_mutex_init(&f->pipes_lk, NULL);
	for (size_t i = 0; i < FAKE_N_T; i++) {
		f->nbytes[i] = (uint64_t)fake_shard_def[i].n * wt_dtype_size(fake_shard_def[i].dt);
		f->data[i] = malloc(f->nbytes[i] + 1);
		tu_fill(f->data[i], f->nbytes[i], FAKE_SEED + i);
	}
	int port = 0;
	nng_listener l;
	assert_int_equal(nng_rep0_open(&f->sock), 0);
	nng_socket_set_ms(f->sock, NNG_OPT_RECVTIMEO, 50);
	nng_socket_set_ms(f->sock, NNG_OPT_SENDTIMEO, 1000);
	assert_int_equal(nng_pipe_notify(f->sock, NNG_PIPE_EV_ADD_POST, pipe_cb, f), 0);
	assert_int_equal(nng_pipe_notify(f->sock, NNG_PIPE_EV_REM_POST, pipe_cb, f), 0);
	assert_int_equal(nng_listen(f->sock, "tcp://127.0.0.1:0", &l, 0), 0);
	assert_int_equal(nng_listener_get_int(l, NNG_OPT_TCP_BOUND_PORT, &port), 0);
	f->proxy = tcp_proxy_start(port); /* clients connect through it */
	snprintf(f->url, sizeof(f->url), "tcp://127.0.0.1:%d", tcp_proxy_port(f->proxy));
	assert_int_equal(pthread_create(&f->th, NULL, fake_main, f), 0);
	f->running = 1;
	return f;
}

/*
 * Going down is the proxy's job: it closes the listener and every client
 * connection as the kernel does for a killed process. nng never closes a pipe
 * or the socket here while traffic is in flight: nng 1.5's nng_close then can
 * hang (nng issues 1813, 2208), and a pipe closed with a request unread stayed
 * half open (its client's requests timed out), which made the restart tests
 * flaky. The receive loop drops what it still gets until the fake's side of
 * the relayed connections is gone, then stops.
 */
void fake_down(fake *f)
{
	if (!f->running)
		return;
	__atomic_store_n(&f->down, 1, __ATOMIC_SEQ_CST);
	tcp_proxy_down(f->proxy);
	for (int i = 0; i < 500; i++) {
		pthread_mutex_lock(&f->pipes_lk);
		int n = f->n_live;
		pthread_mutex_unlock(&f->pipes_lk);
		if (n == 0)
			break;
		usleep(10000);
	}
	__atomic_store_n(&f->stop, 1, __ATOMIC_SEQ_CST);
	pthread_join(f->th, NULL);
	f->running = 0;
}

void fake_up(fake *f)
{
	assert_false(f->running);
	f->stop = 0;
	f->forgotten = 1; /* a restarted daemon does not know the shard yet */
	__atomic_store_n(&f->down, 0, __ATOMIC_SEQ_CST);
	assert_int_equal(pthread_create(&f->th, NULL, fake_main, f), 0);
	f->running = 1;
	tcp_proxy_up(f->proxy);
}

static void *restart_main(void *arg)
{
	fake *f = arg;
	while (__atomic_load_n(&f->chunk_reqs, __ATOMIC_SEQ_CST) < f->restart_after)
		usleep(1000);
	fake_down(f);
	usleep((useconds_t)f->down_ms * 1000u);
	fake_up(f);
	return NULL;
}

void fake_restart_async(fake *f, int down_ms, int after_chunk_reqs)
{
	f->down_ms = down_ms;
	f->restart_after = after_chunk_reqs;
	assert_int_equal(pthread_create(&f->restarter, NULL, restart_main, f), 0);
}

void fake_restart_join(fake *f)
{
	pthread_join(f->restarter, NULL);
}

void fake_stop(fake *f)
{
	fake_down(f);
	tcp_proxy_stop(f->proxy);
	nng_close(f->sock); /* quiet now: every connection is closed */
	pthread_mutex_destroy(&f->pipes_lk);
	for (size_t i = 0; i < FAKE_N_T; i++)
		free(f->data[i]);
	free(f);
}

int fake_silent_listen(char *url, size_t n)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_true(fd >= 0);
	struct sockaddr_in a;
	memset(&a, 0, sizeof(a));
	a.sin_family = AF_INET;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(listen(fd, 64),
	                 0); /* never accept(): the kernel completes the handshake */
	socklen_t len = sizeof(a);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&a, &len), 0);
	snprintf(url, n, "tcp://127.0.0.1:%d", (int)ntohs(a.sin_port));
	return fd;
}

/* A URL nobody listens on: tcp on a port just bound and released, or (k > 0) an
 * ipc path that does not exist, different for every k (the kernel may hand the
 * same free port back each time, so tcp alone cannot give distinct URLs). */
void fake_dead_url(char *buf, size_t n, int k)
{
	if (k > 0) {
		snprintf(buf, n, "ipc:///tmp/wt-test-dead-%d-%d.ipc", (int)getpid(), k);
		return;
	}
	nng_socket s;
	nng_listener l;
	int port = 0;
	assert_int_equal(nng_rep0_open(&s), 0);
	assert_int_equal(nng_listen(s, "tcp://127.0.0.1:0", &l, 0), 0);
	nng_listener_get_int(l, NNG_OPT_TCP_BOUND_PORT, &port);
	nng_close(s);
	snprintf(buf, n, "tcp://127.0.0.1:%d", port);
}

wt_manifest *fake_manifest(wt_client *c)
{
	wt_layout l;
	wt_layout_init(&l);
	wt_manifest *m = NULL;
	wt_errbuf err;
	if (wt_client_get_manifest(c, "fake", &l, &m, &err) != WT_OK)
		fail_msg("get_manifest: %s", err.msg);
	return m;
}

void fake_check_sink(const fake *f, const wt_host_sink *h)
{
	assert_int_equal(wt_host_sink_n_tensors(h), FAKE_N_T);
	for (size_t i = 0; i < FAKE_N_T; i++) {
		const void *d;
		uint64_t n;
		assert_int_equal(wt_host_sink_find(h, fake_shard_def[i].name, &d, &n), WT_OK);
		assert_int_equal(n, f->nbytes[i]);
		if (n > 0)
			assert_memory_equal(d, f->data[i], n);
	}
}

int fake_fetch(const fake *f, wt_client *c, const wt_manifest *m, wt_fetch_stats *st,
               wt_errbuf *err)
{
	wt_host_sink *h;
	assert_int_equal(wt_host_sink_create(&h, NULL), WT_OK);
	wt_fetch_opts fo;
	wt_fetch_opts_init(&fo);
	fo.stats = st;
	int rv = wt_client_fetch(c, m, wt_host_sink_sink(h), &fo, err);
	if (rv == WT_OK)
		fake_check_sink(f, h);
	else
		assert_int_equal(wt_host_sink_n_tensors(h), 0);
	wt_host_sink_destroy(h);
	return rv;
}
