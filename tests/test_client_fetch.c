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
#include <nng/protocol/reqrep0/rep.h>
#include <pthread.h>

#include "client/client.h"
#include "common/common.h"
#include "loader/loader.h"
#include "proto/wire.h"
#include "tests/util/testutil.h"
#include "weights/client.h"
#include "weights/engine.h"

#define SEED        0x5eed1234u
#define CHUNK_BYTES 1024u
#define N_T         4

/* the fake shard: tensors in name order; b.bias is empty (no chunk) */
static const struct {
	const char *name;
	wt_dtype dt;
	int64_t n; /* elements, one dim */
} shard_def[N_T] = {
    {"a.weight", WT_F32, 2112}, /* 8448 bytes: 9 chunks */
    {"b.bias", WT_BF16, 0},
    {"c.weight", WT_BF16, 1000}, /* 2000 bytes: 2 chunks */
    {"d.scale", WT_F32, 1},      /* 4 bytes: 1 chunk */
};

typedef struct fake {
	nng_socket sock;
	pthread_t th;
	char url[64];
	uint8_t *data[N_T];
	uint64_t nbytes[N_T];
	int bad_tensor_hash; /* manifest lists a wrong hash for c.weight */
	/* faults, counted over chunk requests (0-based) */
	int corrupt_req;   /* corrupt the reply to this request; -1 none */
	int corrupt_chunk; /* corrupt every reply for this global chunk index; -1 none */
	int drop_req;      /* do not answer this request; -1 none */
	int forget_after;  /* after this many replies, ENOTFOUND until a manifest request */
	int forgotten;
	int chunk_reqs, manifests, stop;
	/* connections seen (nng pipe ids): those that said Hello, those asking chunks */
	uint32_t hello_pipes[32], chunk_pipes[32];
	int n_hello_pipes, n_chunk_pipes;
} fake;

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
		g += (size_t)((f->nbytes[i] + CHUNK_BYTES - 1) / CHUNK_BYTES);
	return g + (size_t)(off / CHUNK_BYTES);
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
	Weights__Manifest m = WEIGHTS__MANIFEST__INIT;
	Weights__TensorEntry te[N_T], *tp[N_T];
	Weights__ChunkRef cr[32], *cp[32];
	uint8_t th[N_T][16], ch[32][16];
	int64_t shape[N_T];
	size_t nc = 0;
	m.format_version = 1;
	m.model = "fake";
	m.revision = "rev1";
	m.layout_text = "tp=1,ep=1";
	m.shard_id.data = (uint8_t *)"shard-1";
	m.shard_id.len = 7;
	for (size_t i = 0; i < N_T; i++) {
		weights__tensor_entry__init(&te[i]);
		tp[i] = &te[i];
		te[i].name = (char *)shard_def[i].name;
		te[i].dtype = shard_def[i].dt;
		shape[i] = shard_def[i].n;
		te[i].n_shape = 1;
		te[i].shape = &shape[i];
		te[i].nbytes = f->nbytes[i];
		common_hash128_to_bytes(common_hash128(f->data[i], f->nbytes[i]), th[i]);
		if (f->bad_tensor_hash && i == 2)
			th[i][0] ^= 1;
		te[i].hash.data = th[i];
		te[i].hash.len = 16;
		te[i].chunks = &cp[nc];
		for (uint64_t off = 0; off < f->nbytes[i]; off += CHUNK_BYTES, nc++) {
			weights__chunk_ref__init(&cr[nc]);
			cp[nc] = &cr[nc];
			uint64_t len =
			    f->nbytes[i] - off < CHUNK_BYTES ? f->nbytes[i] - off : CHUNK_BYTES;
			common_hash128_to_bytes(common_hash128(f->data[i] + off, len), ch[nc]);
			cr[nc].hash.data = ch[nc];
			cr[nc].hash.len = 16;
			cr[nc].offset = off;
			cr[nc].nbytes = len;
			te[i].n_chunks++;
		}
		m.total_bytes += f->nbytes[i];
	}
	m.n_tensors = N_T;
	m.tensors = tp;
	Weights__Reply r = WEIGHTS__REPLY__INIT;
	r.id = id;
	r.body_case = WEIGHTS__REPLY__BODY_MANIFEST;
	r.manifest = &m;
	send_reply(f, &r, NULL, 0, 0);
}

static void serve_chunk(fake *f, const Weights__Request *q)
{
	int k = f->chunk_reqs++;
	if (k == f->drop_req)
		return; /* lost reply: the client times out */
	if (f->forget_after >= 0 && k >= f->forget_after && !f->forgotten)
		f->forgotten = 1;
	if (f->forgotten) {
		send_error(f, q->id, WT_ENOTFOUND, "unknown shard (restarted)");
		return;
	}
	for (size_t i = 0; i < N_T; i++)
		for (uint64_t off = 0; off < f->nbytes[i]; off += CHUNK_BYTES) {
			uint64_t len =
			    f->nbytes[i] - off < CHUNK_BYTES ? f->nbytes[i] - off : CHUNK_BYTES;
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
			int bad =
			    k == f->corrupt_req || (int)global_chunk(f, i, off) == f->corrupt_chunk;
			send_reply(f, &r, f->data[i] + off, (size_t)len, bad);
			return;
		}
	send_error(f, q->id, WT_ENOTFOUND, "no such chunk");
}

static void *fake_main(void *arg)
{
	fake *f = arg;
	while (!f->stop) {
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
		if (q->body_case == WEIGHTS__REQUEST__BODY_HELLO)
			note_pipe(f->hello_pipes, &f->n_hello_pipes, pipe);
		else if (q->body_case == WEIGHTS__REQUEST__BODY_CHUNK)
			note_pipe(f->chunk_pipes, &f->n_chunk_pipes, pipe);
		Weights__Reply r = WEIGHTS__REPLY__INIT;
		r.id = q->id;
		if (q->body_case == WEIGHTS__REQUEST__BODY_HELLO) {
			Weights__HelloReply h = WEIGHTS__HELLO_REPLY__INIT;
			h.protocol_version = 1;
			h.server_id = "fake";
			h.max_chunk_bytes = CHUNK_BYTES;
			r.body_case = WEIGHTS__REPLY__BODY_HELLO;
			r.hello = &h;
			send_reply(f, &r, NULL, 0, 0);
		} else if (q->body_case == WEIGHTS__REQUEST__BODY_MANIFEST) {
			f->manifests++;
			f->forgotten = 0;
			f->forget_after = -1;
			send_manifest(f, q->id);
		} else if (q->body_case == WEIGHTS__REQUEST__BODY_CHUNK) {
			serve_chunk(f, q);
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
		} else {
			send_error(f, q->id, WT_EUNSUPPORTED, "not in the fake");
		}
		wire_request_free(q);
	}
	return NULL;
}

static fake *fake_start(void)
{
	fake *f = calloc(1, sizeof(*f));
	assert_non_null(f);
	f->corrupt_req = f->corrupt_chunk = f->drop_req = f->forget_after = -1;
	for (size_t i = 0; i < N_T; i++) {
		f->nbytes[i] = (uint64_t)shard_def[i].n * wt_dtype_size(shard_def[i].dt);
		f->data[i] = malloc(f->nbytes[i] + 1);
		tu_fill(f->data[i], f->nbytes[i], SEED + i);
	}
	nng_listener l;
	int port = 0;
	assert_int_equal(nng_rep0_open(&f->sock), 0);
	nng_socket_set_ms(f->sock, NNG_OPT_RECVTIMEO, 50);
	assert_int_equal(nng_listen(f->sock, "tcp://127.0.0.1:0", &l, 0), 0);
	assert_int_equal(nng_listener_get_int(l, NNG_OPT_TCP_BOUND_PORT, &port), 0);
	snprintf(f->url, sizeof(f->url), "tcp://127.0.0.1:%d", port);
	assert_int_equal(pthread_create(&f->th, NULL, fake_main, f), 0);
	return f;
}

static void fake_stop(fake *f)
{
	f->stop = 1;
	pthread_join(f->th, NULL);
	nng_close(f->sock);
	for (size_t i = 0; i < N_T; i++)
		free(f->data[i]);
	free(f);
}

/* A URL nobody listens on: tcp on a port just bound and released, or (k > 0) an
 * ipc path that does not exist, different for every k (the kernel may hand the
 * same free port back each time, so tcp alone cannot give distinct URLs). */
static void dead_url(char *buf, size_t n, int k)
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

static uint32_t g_refetch = 1; /* opts.hash_refetch of the next open_client() */
static uint32_t g_conns = 2;   /* opts.connections of the next open_client() */

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
	wt_client *c = NULL;
	wt_errbuf err;
	int rv = wt_client_open(&c, &o, &err);
	if (rv != WT_OK)
		fail_msg("wt_client_open: %s", err.msg);
	return c;
}

static wt_manifest *get_manifest(wt_client *c)
{
	wt_layout l;
	wt_layout_init(&l);
	wt_manifest *m = NULL;
	wt_errbuf err;
	int rv = wt_client_get_manifest(c, "fake", &l, &m, &err);
	if (rv != WT_OK)
		fail_msg("get_manifest: %s", err.msg);
	return m;
}

/* Fetch into a host sink and check every tensor's bytes. Returns the fetch result. */
static int fetch_host(fake *f, wt_client *c, wt_fetch_stats *st, wt_errbuf *err)
{
	wt_manifest *m = get_manifest(c);
	wt_host_sink *h;
	assert_int_equal(wt_host_sink_create(&h, NULL), WT_OK);
	wt_fetch_opts fo;
	wt_fetch_opts_init(&fo);
	fo.stats = st;
	int rv = wt_client_fetch(c, m, wt_host_sink_sink(h), &fo, err);
	if (rv == WT_OK) {
		assert_int_equal(wt_host_sink_n_tensors(h), N_T);
		for (size_t i = 0; i < N_T; i++) {
			const void *d;
			uint64_t n;
			assert_int_equal(wt_host_sink_find(h, shard_def[i].name, &d, &n), WT_OK);
			assert_int_equal(n, f->nbytes[i]);
			if (n > 0)
				assert_memory_equal(d, f->data[i], n);
		}
		assert_int_equal(st->chunks, wt_manifest_n_chunks(m));
		assert_int_equal(st->bytes, wt_manifest_total_bytes(m));
	} else {
		assert_int_equal(wt_host_sink_n_tensors(h), 0); /* nothing unverified shown */
	}
	wt_host_sink_destroy(h);
	wt_manifest_free(m);
	return rv;
}

static void test_fetch_host(void **state)
{
	(void)state;
	printf("seed 0x%x\n", SEED);
	fake *f = fake_start();
	const char *eps[] = {f->url};
	for (uint32_t w = 1; w <= 16; w *= 4) {
		wt_client *c = open_client(eps, 1, w, 5000);
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
		const char *eps[] = {f->url};
		g_conns = conns[k];
		wt_client *c = open_client(eps, 1, 6, 5000);
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
	const char *eps[] = {f->url};
	wt_client *c = open_client(eps, 1, 4, 5000);
	wt_manifest *m = get_manifest(c);
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
	const char *eps[] = {f->url};
	wt_client *c = open_client(eps, 1, 4, 5000);
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
	c = open_client(eps, 1, 4, 5000);
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
	const char *eps[] = {f->url};
	wt_client *c = open_client(eps, 1, 8, 5000);
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
	const char *eps[] = {f->url};
	wt_client *c = open_client(eps, 1, 4, 5000);
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
	const char *eps[] = {f->url};
	wt_client *c = open_client(eps, 1, 4, 300);
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
	const char *eps[] = {f->url};
	wt_client *c = open_client(eps, 1, 2, 5000);
	wt_manifest *m = get_manifest(c);
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
	for (int tries = 0;; tries++) {
		assert_true(tries < 64);
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
	int rv = fetch_host(f, c, &st, &err);
	if (rv != WT_OK)
		fail_msg("%s", err.msg);
	assert_int_equal(st.failovers, 1);
	assert_string_equal(st.endpoint, f->url);
	wt_client_close(c);
	/* only dead endpoints: WT_EUNAVAIL naming them */
	const char *only_dead[] = {dead};
	c = open_client(only_dead, 1, 4, 500);
	wt_manifest *m = NULL;
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
	const char *eps[] = {f->url};
	wt_client *c = open_client(eps, 1, 3, 5000);
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
	const char *eps[] = {f->url};
	wt_client *c = open_client(eps, 1, 4, 5000);
	wt_manifest *m = get_manifest(c);
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
	const char *eps[] = {f->url};
	wt_client *c = open_client(eps, 1, 4, 5000);
	wt_manifest *m = get_manifest(c);
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
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
