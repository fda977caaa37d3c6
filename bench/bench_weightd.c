/*
 * bench_weightd.c — the daemon end to end over tcp loopback: cold production
 * of a layout (source bytes/s), then chunk serving with 1 and 4 clients,
 * against a baseline measured in the same run: raw nng req/rep moving
 * messages of the same size (no cache, no hashing). Prints ratios.
 *
 *   build/bench/bench_weightd [SIZE_MB]     (default 128; needs build/wt-mkckpt)
 */
#include <nng/nng.h>
#include <nng/protocol/reqrep0/rep.h>
#include <nng/protocol/reqrep0/req.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/common.h"
#include "proto/wire.h"
#include "weightd/weightd.h"

#define CHUNK (4u << 20)

static double secs(uint64_t ns)
{
	return (double)ns / 1e9;
}

static Weights__Reply *call(nng_socket s, Weights__Request *rq, size_t *tail_len)
{
	size_t n = wire_framed_size(&rq->base);
	uint8_t *buf = malloc(n);
	wire_frame(&rq->base, buf, n);
	nng_msg *m;
	if (nng_send(s, buf, n, 0) != 0 || nng_recvmsg(s, &m, 0) != 0) {
		free(buf);
		return NULL;
	}
	free(buf);
	Weights__Reply *r = NULL;
	const uint8_t *tail;
	wire_parse_reply(nng_msg_body(m), nng_msg_len(m), WIRE_MAX_HEADER_BYTES, &r, &tail,
	                 tail_len, NULL);
	nng_msg_free(m);
	return r;
}

static nng_socket dial(const char *url)
{
	nng_socket s;
	nng_req0_open(&s);
	nng_socket_set_ms(s, NNG_OPT_RECVTIMEO, 60000);
	nng_socket_set_size(s, NNG_OPT_RECVMAXSZ, 0);
	if (nng_dial(s, url, NULL, 0) != 0) {
		fprintf(stderr, "dial %s failed\n", url);
		exit(1);
	}
	return s;
}

static Weights__Reply *manifest(nng_socket s, uint32_t tp, uint32_t rank)
{
	Weights__Layout l = WEIGHTS__LAYOUT__INIT;
	l.tp_size = tp;
	l.ep_size = 1;
	l.group_size = 128;
	l.vocab_pad = 64;
	Weights__ManifestRequest mr = WEIGHTS__MANIFEST_REQUEST__INIT;
	mr.model = "m";
	mr.layout = &l;
	mr.tp_rank = rank;
	Weights__Request rq = WEIGHTS__REQUEST__INIT;
	rq.body_case = WEIGHTS__REQUEST__BODY_MANIFEST;
	rq.manifest = &mr;
	size_t tl;
	Weights__Reply *r = call(s, &rq, &tl);
	if (r == NULL || r->body_case != WEIGHTS__REPLY__BODY_MANIFEST) {
		fprintf(stderr, "manifest failed: %s\n",
		        r && r->body_case == WEIGHTS__REPLY__BODY_ERROR ? r->error->message : "?");
		exit(1);
	}
	return r;
}

typedef struct fetcher {
	const char *url;
	const Weights__Manifest *m;
	uint64_t bytes;
} fetcher;

/* Fetch every chunk of m once (one request in flight). */
static void *fetch_main(void *p)
{
	fetcher *f = p;
	nng_socket s = dial(f->url);
	for (size_t i = 0; i < f->m->n_tensors; i++) {
		const Weights__TensorEntry *t = f->m->tensors[i];
		for (size_t c = 0; c < t->n_chunks; c++) {
			Weights__ChunkRequest cr = WEIGHTS__CHUNK_REQUEST__INIT;
			cr.shard_id = f->m->shard_id;
			cr.hash = t->chunks[c]->hash;
			Weights__Request rq = WEIGHTS__REQUEST__INIT;
			rq.body_case = WEIGHTS__REQUEST__BODY_CHUNK;
			rq.chunk = &cr;
			size_t tl = 0;
			Weights__Reply *r = call(s, &rq, &tl);
			if (r == NULL || r->body_case != WEIGHTS__REPLY__BODY_CHUNK)
				exit(1);
			f->bytes += tl;
			wire_reply_free(r);
		}
	}
	nng_close(s);
	return NULL;
}

/* Baseline: a rep echo-free server answering every request with a CHUNK-byte message. */
typedef struct base_srv {
	nng_socket s;
	volatile int stop;
} base_srv;

static void *base_main(void *p)
{
	base_srv *b = p;
	uint8_t *payload = calloc(1, CHUNK);
	while (!b->stop) {
		nng_msg *m;
		if (nng_recvmsg(b->s, &m, 0) != 0)
			break;
		nng_msg_realloc(m, CHUNK);
		memcpy(nng_msg_body(m), payload, CHUNK); /* the daemon copies once too */
		if (nng_sendmsg(b->s, m, 0) != 0)
			nng_msg_free(m);
	}
	free(payload);
	return NULL;
}

static double baseline_gbps(uint64_t total)
{
	base_srv b = {0};
	nng_rep0_open(&b.s);
	nng_listener l;
	nng_listen(b.s, "tcp://127.0.0.1:0", &l, 0);
	int port = 0;
	nng_listener_get_int(l, NNG_OPT_TCP_BOUND_PORT, &port);
	char url[64];
	snprintf(url, sizeof(url), "tcp://127.0.0.1:%d", port);
	pthread_t th;
	pthread_create(&th, NULL, base_main, &b);
	nng_socket c = dial(url);
	uint64_t t0 = common_now_ns(), got = 0;
	while (got < total) {
		nng_msg *m;
		uint8_t q[16] = {0};
		if (nng_send(c, q, sizeof(q), 0) != 0 || nng_recvmsg(c, &m, 0) != 0)
			exit(1);
		got += nng_msg_len(m);
		nng_msg_free(m);
	}
	double gbps = (double)got / 1e9 / secs(common_now_ns() - t0);
	b.stop = 1;
	nng_close(c);
	nng_close(b.s);
	pthread_join(th, NULL);
	return gbps;
}

/* weightd on an ephemeral loopback port over models / cachedir (4 MiB chunks, 4 workers),
 * its config in *cfg; NULL with the error printed. */
static wd_server *open_server(wd_config *cfg, char *models, char *cachedir)
{
	wd_config_init(cfg);
	char *av[] = {"weightd",
	              "--listen",
	              "tcp://127.0.0.1:0",
	              "--models-dir",
	              models,
	              "--cache-dir",
	              cachedir,
	              "--chunk-bytes",
	              "4M",
	              "--workers",
	              "4",
	              "--cache-max-bytes",
	              "16G",
	              "--log-level",
	              "info"};
	wt_errbuf err;
	wd_server *srv;
	if (wd_config_parse_args(cfg, (int)(sizeof(av) / sizeof(av[0])), av, &err) != WT_OK ||
	    wd_server_open(&srv, cfg, &err) != WT_OK) {
		fprintf(stderr, "%s\n", err.msg);
		return NULL;
	}
	return srv;
}

/* Four clients fetching the four ranks of manifests mr at once: GB/s, all together. */
static double fetch_four(const char *url, Weights__Reply *mr[4])
{
	fetcher f4[4];
	pthread_t th[4];
	uint64_t t0 = common_now_ns();
	for (int r = 0; r < 4; r++) {
		f4[r] = (fetcher){.url = url, .m = mr[r]->manifest};
		pthread_create(&th[r], NULL, fetch_main, &f4[r]);
	}
	uint64_t tot4 = 0;
	for (int r = 0; r < 4; r++) {
		pthread_join(th[r], NULL);
		tot4 += f4[r].bytes;
	}
	return (double)tot4 / 1e9 / secs(common_now_ns() - t0);
}

int main(int argc, char **argv)
{
	long size_mb = argc > 1 ? strtol(argv[1], NULL, 10) : 128;
	if (size_mb < 8 || size_mb > 8192) {
		fprintf(stderr, "usage: bench_weightd [SIZE_MB 8..8192]\n");
		return 2;
	}
	const char *b = getenv("WT_BUILD");
	char dir[] = "/tmp/wt-bench-wd-XXXXXX";
	if (mkdtemp(dir) == NULL)
		return 1;
	char cmd[1024], models[256], cachedir[256];
	snprintf(models, sizeof(models), "%s/models", dir);
	snprintf(cachedir, sizeof(cachedir), "%s/cache", dir);
	snprintf(cmd, sizeof(cmd),
	         "%s/wt-mkckpt --family llama --size-mb %ld --out %s/m >/dev/null", b ? b : "build",
	         size_mb, models);
	if (system(cmd) != 0) {
		fprintf(stderr, "wt-mkckpt failed (build it with make)\n");
		return 1;
	}
	common_log_set(NULL, NULL, WT_LOG_INFO);
	wd_config cfg;
	wd_server *srv = open_server(&cfg, models, cachedir);
	if (srv == NULL)
		return 1;
	const char *url = wd_server_url(srv, 0);
	nng_socket s = dial(url);

	/* cold production of TP=4 (all four ranks, one pass) */
	uint64_t t0 = common_now_ns();
	Weights__Reply *m4 = manifest(s, 4, 0);
	double t_prod4 = secs(common_now_ns() - t0);
	uint64_t ck = m4->manifest->checkpoint_bytes;
	t0 = common_now_ns();
	Weights__Reply *m1 = manifest(s, 1, 0);
	double t_prod1 = secs(common_now_ns() - t0);
	/* warm manifest (cache hit) */
	t0 = common_now_ns();
	for (int i = 0; i < 50; i++)
		wire_reply_free(manifest(s, 4, (uint32_t)(i % 4)));
	double t_hit = secs(common_now_ns() - t0) / 50;

	/* serving: one client fetches the TP=1 shard; four clients fetch the four TP=4 ranks */
	fetcher f1 = {.url = url, .m = m1->manifest};
	t0 = common_now_ns();
	fetch_main(&f1);
	double g1 = (double)f1.bytes / 1e9 / secs(common_now_ns() - t0);
	Weights__Reply *mr[4] = {m4, NULL, NULL, NULL};
	for (uint32_t r = 1; r < 4; r++)
		mr[r] = manifest(s, 4, r);
	double g4 = fetch_four(url, mr);
	double base = baseline_gbps(f1.bytes);

	printf("model: llama %.0f MiB checkpoint, chunks 4 MiB, 4 workers, tcp loopback\n",
	       (double)ck / 1048576.0);
	printf("production TP=4 (cold, all ranks, one pass): %.2f s = %.2f GB/s of source\n",
	       t_prod4, (double)ck / 1e9 / t_prod4);
	printf("production TP=1 (cold):                      %.2f s = %.2f GB/s of source\n",
	       t_prod1, (double)ck / 1e9 / t_prod1);
	printf("manifest cache hit: %.0f us\n", t_hit * 1e6);
	printf("baseline raw nng req/rep, 4 MiB replies, 1 client: %.2f GB/s\n", base);
	printf("chunk serving, 1 client:  %.2f GB/s = %.2fx baseline\n", g1, g1 / base);
	printf("chunk serving, 4 clients: %.2f GB/s = %.2fx baseline (1 client)\n", g4, g4 / base);

	wire_reply_free(m1);
	for (int r = 0; r < 4; r++)
		wire_reply_free(mr[r]);
	nng_close(s);
	wd_server_close(srv);
	wd_config_free(&cfg);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	return system(cmd) == 0 ? 0 : 1;
}
