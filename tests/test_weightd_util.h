/*
 * test_weightd_util.h — helpers for the weightd server tests (test code only,
 * included by tests/test_weightd_*.c): tiny Llama checkpoints, an in-process
 * daemon on a free port, and a raw nng req0 client speaking proto/wire.
 */
#ifndef WT_TEST_WEIGHTD_UTIL_H
#define WT_TEST_WEIGHTD_UTIL_H

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <nng/nng.h>
#include <nng/protocol/reqrep0/req.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "proto/wire.h"
#include "util/testutil.h"
#include "weightd/server_int.h"
#include "weightd/weightd.h"

/* Llama with 8 heads / 8 KV heads so TP=8 is valid (hidden 128, head_dim 16). */
static const char tw_llama8_config[] =
    "{\"architectures\": [\"LlamaForCausalLM\"], \"model_type\": \"llama\", "
    "\"hidden_size\": 128, \"num_attention_heads\": 8, \"num_key_value_heads\": 8, "
    "\"intermediate_size\": 256, \"num_hidden_layers\": 2, \"vocab_size\": 256, "
    "\"tie_word_embeddings\": false, \"torch_dtype\": \"float32\"}";

#define TW_MAX_T 32

typedef struct tw_descs {
	st_desc d[TW_MAX_T];
	char names[TW_MAX_T][96];
	size_t n;
} tw_descs;

static __attribute__((unused)) void tw_add(tw_descs *t, const char *name, int ndim, int64_t a,
                                           int64_t b)
{
	snprintf(t->names[t->n], sizeof(t->names[0]), "%s", name);
	st_desc *d = &t->d[t->n++];
	d->name = t->names[t->n - 1];
	d->dtype = WT_F32;
	d->ndim = ndim;
	d->shape[0] = a;
	d->shape[1] = b;
}

/* The tensors of tw_llama8_config. F32 bytes from tu_fill: the planner copies
 * them (quant none), so any bit pattern is fine. */
static __attribute__((unused)) void tw_llama8_descs(tw_descs *t)
{
	memset(t, 0, sizeof(*t));
	tw_add(t, "model.embed_tokens.weight", 2, 256, 128);
	tw_add(t, "lm_head.weight", 2, 256, 128);
	tw_add(t, "model.norm.weight", 1, 128, 0);
	for (int i = 0; i < 2; i++) {
		static const struct {
			const char *leaf;
			int ndim;
			int64_t a, b;
		} L[] = {{"input_layernorm.weight", 1, 128, 0},
		         {"post_attention_layernorm.weight", 1, 128, 0},
		         {"self_attn.q_proj.weight", 2, 128, 128},
		         {"self_attn.k_proj.weight", 2, 128, 128},
		         {"self_attn.v_proj.weight", 2, 128, 128},
		         {"self_attn.o_proj.weight", 2, 128, 128},
		         {"mlp.gate_proj.weight", 2, 256, 128},
		         {"mlp.up_proj.weight", 2, 256, 128},
		         {"mlp.down_proj.weight", 2, 128, 256}};
		for (size_t k = 0; k < sizeof(L) / sizeof(L[0]); k++) {
			char name[96];
			snprintf(name, sizeof(name), "model.layers.%d.%s", i, L[k].leaf);
			tw_add(t, name, L[k].ndim, L[k].a, L[k].b);
		}
	}
}

static __attribute__((unused)) uint64_t tw_total_bytes(const tw_descs *t)
{
	uint64_t s = 0;
	for (size_t i = 0; i < t->n; i++)
		s += tu_desc_nbytes(&t->d[i]);
	return s;
}

/* Write the model into dir (created); 0 on success. */
static __attribute__((unused)) int tw_write_llama8(const char *dir, uint64_t seed)
{
	tw_descs t;
	tw_llama8_descs(&t);
	printf("tw_write_llama8 %s seed %llu\n", dir, (unsigned long long)seed);
	return tu_write_ckpt(dir, tw_llama8_config, t.d, t.n, 1, seed);
}

/* ---- raw client ---- */

static __attribute__((unused)) nng_socket tw_dial(const char *url)
{
	nng_socket s;
	if (nng_req0_open(&s) != 0)
		abort();
	nng_socket_set_ms(s, NNG_OPT_RECVTIMEO, 20000);
	nng_socket_set_ms(s, NNG_OPT_SENDTIMEO, 5000);
	nng_socket_set_size(s, NNG_OPT_RECVMAXSZ, 0);
	if (nng_dial(s, url, NULL, 0) != 0)
		abort();
	return s;
}

/* A received reply: parsed header + a copy of the tail. */
typedef struct tw_reply {
	Weights__Reply *r;
	uint8_t *tail;
	size_t tail_len;
	int rv; /* WT_OK, or the wire parse error / WT_ETIMEDOUT */
} tw_reply;

static __attribute__((unused)) void tw_reply_free(tw_reply *x)
{
	wire_reply_free(x->r);
	free(x->tail);
	memset(x, 0, sizeof(*x));
}

/* Send raw bytes, receive and parse one reply. */
static __attribute__((unused)) tw_reply tw_raw(nng_socket s, const void *buf, size_t len)
{
	tw_reply x = {0};
	if (nng_send(s, (void *)buf, len, 0) != 0) {
		x.rv = WT_EIO;
		return x;
	}
	nng_msg *m;
	if (nng_recvmsg(s, &m, 0) != 0) {
		x.rv = WT_ETIMEDOUT;
		return x;
	}
	const uint8_t *tail;
	wt_errbuf err;
	x.rv = wire_parse_reply(nng_msg_body(m), nng_msg_len(m), WIRE_MAX_HEADER_BYTES, &x.r, &tail,
	                        &x.tail_len, &err);
	if (x.rv == WT_OK && x.tail_len > 0) {
		x.tail = malloc(x.tail_len);
		memcpy(x.tail, tail, x.tail_len);
	}
	nng_msg_free(m);
	return x;
}

static __attribute__((unused)) tw_reply tw_call(nng_socket s, Weights__Request *rq)
{
	size_t n = wire_framed_size(&rq->base);
	uint8_t *buf = malloc(n);
	wire_frame(&rq->base, buf, n);
	tw_reply x = tw_raw(s, buf, n);
	free(buf);
	return x;
}

/* Error code of a reply, or -1 if it is not an Error. */
static __attribute__((unused)) int tw_errcode(const tw_reply *x)
{
	if (x->rv != WT_OK || x->r->body_case != WEIGHTS__REPLY__BODY_ERROR)
		return -1;
	return (int)x->r->error->code;
}

/* A ListModels request; the reply unchecked. */
static __attribute__((unused)) tw_reply tw_list_models(nng_socket s)
{
	Weights__ListModelsRequest lm = WEIGHTS__LIST_MODELS_REQUEST__INIT;
	Weights__Request rq = WEIGHTS__REQUEST__INIT;
	rq.id = 3;
	rq.body_case = WEIGHTS__REQUEST__BODY_LIST_MODELS;
	rq.list_models = &lm;
	return tw_call(s, &rq);
}

static __attribute__((unused)) tw_reply tw_hello(nng_socket s, uint32_t version, const char *token)
{
	Weights__Hello h = WEIGHTS__HELLO__INIT;
	h.protocol_version = version;
	h.client_id = "test";
	h.token = (char *)(token ? token : "");
	Weights__Request rq = WEIGHTS__REQUEST__INIT;
	rq.id = 1;
	rq.body_case = WEIGHTS__REQUEST__BODY_HELLO;
	rq.hello = &h;
	return tw_call(s, &rq);
}

/* Manifest of (tp_rank, ep_rank) for a layout given as a protobuf Layout. */
static __attribute__((unused)) tw_reply tw_manifest_l(nng_socket s, const char *model,
                                                      Weights__Layout *l, uint32_t tp_rank,
                                                      uint32_t ep_rank)
{
	Weights__ManifestRequest mr = WEIGHTS__MANIFEST_REQUEST__INIT;
	mr.model = (char *)model;
	mr.layout = l;
	mr.tp_rank = tp_rank;
	mr.ep_rank = ep_rank;
	Weights__Request rq = WEIGHTS__REQUEST__INIT;
	rq.id = 100 + tp_rank;
	rq.body_case = WEIGHTS__REQUEST__BODY_MANIFEST;
	rq.manifest = &mr;
	return tw_call(s, &rq);
}

static __attribute__((unused)) tw_reply tw_manifest(nng_socket s, const char *model, uint32_t tp,
                                                    uint32_t tp_rank)
{
	Weights__Layout l = WEIGHTS__LAYOUT__INIT;
	l.tp_size = tp;
	l.ep_size = 1;
	l.group_size = 128;
	l.vocab_pad = 64;
	return tw_manifest_l(s, model, &l, tp_rank, 0);
}

static __attribute__((unused)) tw_reply tw_chunk(nng_socket s, ProtobufCBinaryData shard_id,
                                                 ProtobufCBinaryData hash, uint64_t off, uint64_t n)
{
	Weights__ChunkRequest cr = WEIGHTS__CHUNK_REQUEST__INIT;
	cr.shard_id = shard_id;
	cr.hash = hash;
	cr.offset = off;
	cr.nbytes = n;
	Weights__Request rq = WEIGHTS__REQUEST__INIT;
	rq.id = 7;
	rq.body_case = WEIGHTS__REQUEST__BODY_CHUNK;
	rq.chunk = &cr;
	return tw_call(s, &rq);
}

static __attribute__((unused)) tw_reply tw_admin_uri(nng_socket s, Weights__AdminRequest__Op op,
                                                     const char *model, const char *uri,
                                                     uint32_t tp);

static __attribute__((unused)) tw_reply tw_admin(nng_socket s, Weights__AdminRequest__Op op,
                                                 const char *model, uint32_t tp)
{
	return tw_admin_uri(s, op, model, "", tp);
}

static __attribute__((unused)) tw_reply tw_admin_uri(nng_socket s, Weights__AdminRequest__Op op,
                                                     const char *model, const char *uri,
                                                     uint32_t tp)
{
	Weights__Layout l = WEIGHTS__LAYOUT__INIT;
	l.tp_size = tp;
	l.ep_size = 1;
	l.group_size = 128;
	l.vocab_pad = 64;
	Weights__AdminRequest ar = WEIGHTS__ADMIN_REQUEST__INIT;
	ar.op = op;
	ar.model = (char *)(model ? model : "");
	ar.uri = (char *)(uri ? uri : "");
	ar.layout = tp ? &l : NULL;
	Weights__Request rq = WEIGHTS__REQUEST__INIT;
	rq.id = 9;
	rq.body_case = WEIGHTS__REQUEST__BODY_ADMIN;
	rq.admin = &ar;
	return tw_call(s, &rq);
}

/* A raw TCP connection that sends the SP header of a req0 peer and nothing
 * more (no Hello); receives time out after 400 ms. Aborts the test program
 * when the daemon cannot be reached. */
static __attribute__((unused)) int tw_raw_connect(const char *url)
{
	int port = (int)strtol(strrchr(url, ':') + 1, NULL, 10);
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in sa = {.sin_family = AF_INET,
	                         .sin_port = htons((uint16_t)port),
	                         .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	static const uint8_t hdr[8] = {0, 'S', 'P', 0, 0, 0x30, 0, 0}; /* req0 */
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0 ||
	    send(fd, hdr, 8, 0) != 8) {
		printf("tw_raw_connect %s: %s\n", url, strerror(errno));
		abort();
	}
	struct timeval tv = {.tv_sec = 0, .tv_usec = 400 * 1000};
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	return fd;
}

/* 1: the server closed the connection within ms; 0: still open after it. */
static __attribute__((unused)) int tw_closed_within(int fd, int ms)
{
	uint8_t b[16];
	for (int waited = 0; waited <= ms; waited += 400) {
		ssize_t n = recv(fd, b, sizeof(b), 0);
		if (n == 0)
			return 1;
		if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK)
			return 1;
	}
	return 0;
}

/* ---- in-process daemon ---- */

typedef struct tw_env {
	char *dir;    /* temp root */
	char *models; /* dir/models */
	char *cache;  /* dir/cache */
	wd_config cfg;
	wd_faults faults; /* installed by tw_start (fault injection) */
	wd_server *srv;
	const char *url;
} tw_env;

/* Temp tree with models/llama (seed) and defaults suited to tests; the caller
 * may adjust env->cfg before tw_start. */
static __attribute__((unused)) tw_env *tw_env_new(const char *tag, uint64_t seed)
{
	tw_env *e = calloc(1, sizeof(*e));
	e->dir = tu_mkdtemp(tag);
	e->models = tu_path(e->dir, "models");
	e->cache = tu_path(e->dir, "cache");
	char *llama = tu_path(e->models, "llama");
	if (tw_write_llama8(llama, seed) != 0)
		abort();
	free(llama);
	wd_config_init(&e->cfg);
	wt_errbuf err;
	char *argv[] = {"weightd",
	                "--listen",
	                "tcp://127.0.0.1:0",
	                "--models-dir",
	                e->models,
	                "--cache-dir",
	                e->cache,
	                "--chunk-bytes",
	                "16K",
	                "--workers",
	                "4",
	                "--cache-max-bytes",
	                "64M",
	                "--log-level",
	                "warning",
	                "--register-roots",
	                e->dir};
	if (wd_config_parse_args(&e->cfg, (int)(sizeof(argv) / sizeof(argv[0])), argv, &err) !=
	    WT_OK) {
		printf("%s\n", err.msg);
		abort();
	}
	return e;
}

static __attribute__((unused)) int tw_start(tw_env *e)
{
	wt_errbuf err;
	int rv = wd_server_open(&e->srv, &e->cfg, &err);
	if (rv != WT_OK) {
		printf("wd_server_open: %s\n", err.msg);
		return rv;
	}
	wd_server_set_faults(e->srv, &e->faults);
	e->url = wd_server_url(e->srv, 0);
	return WT_OK;
}

static __attribute__((unused)) void tw_stop(tw_env *e)
{
	wd_server_close(e->srv);
	e->srv = NULL;
	e->url = NULL;
}

/* The server's chunk reply count once it stops moving: a fetch that failed
 * (WT_EHASH) leaves requests pipelined on its stream, which the server still
 * answers (and counts) after the client has gone; a fault aimed at "the k-th
 * reply from now" must not land on one of those. */
static __attribute__((unused)) uint64_t tw_settled_replies(tw_env *e)
{
	uint64_t n = atomic_load(&e->srv->chunk_replies);
	for (int quiet = 0; quiet < 5;) {
		usleep(20 * 1000);
		uint64_t m = atomic_load(&e->srv->chunk_replies);
		quiet = m == n ? quiet + 1 : 0;
		n = m;
	}
	return n;
}

static __attribute__((unused)) void tw_env_free(tw_env *e)
{
	if (e == NULL)
		return;
	tw_stop(e);
	wd_config_free(&e->cfg);
	tu_rmrf(e->dir);
	free(e->dir);
	free(e->models);
	free(e->cache);
	free(e);
}

#endif
