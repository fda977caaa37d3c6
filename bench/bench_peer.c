/*
 * bench_peer.c — the peer tier: time to get a cold layout into a node's cache
 * by a peer fill (node B asks warm node A: manifests, verified chunks over tcp
 * loopback, re-hash into RocksDB) against the baseline measured in the same
 * run: node C producing the same layout from the object store (a local
 * folder, in the page cache). In-process daemons; prints the ratio.
 *
 *   build/bench/bench_peer [SIZE_MB] [QUANT]   (default 256 fp8-block; needs build/wt-mkckpt)
 */
#include <nng/nng.h>
#include <nng/protocol/reqrep0/req.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/util/benchutil.h"
#include "common/common.h"
#include "proto/wire.h"
#include "weightd/weightd.h"
#include "weights/layout.h"

typedef struct node {
	wd_config cfg;
	wd_server *srv;
} node;

static int node_start(node *n, const char *tag, const char *peer)
{
	char models[1024], cache[1024];
	snprintf(models, sizeof(models), "%s/models", bench_tmp());
	snprintf(cache, sizeof(cache), "%s/cache-%s", bench_tmp(), tag);
	char *argv[] = {"weightd",      "--listen",  "tcp://127.0.0.1:0",
	                "--models-dir", models,      "--cache-dir",
	                cache,          "--workers", "2",
	                "--log-level",  "notice",    "--peer",
	                (char *)peer};
	int argc = peer != NULL ? 13 : 11;
	wt_errbuf err;
	wd_config_init(&n->cfg);
	if (wd_config_parse_args(&n->cfg, argc, argv, &err) != WT_OK ||
	    wd_server_open(&n->srv, &n->cfg, &err) != WT_OK) {
		fprintf(stderr, "node %s: %s\n", tag, err.msg);
		return -1;
	}
	return 0;
}

static void node_stop(node *n)
{
	wd_server_close(n->srv);
	wd_config_free(&n->cfg);
}

/* Ask url for rank 0 of layout (every rank gets cached); ns it took, 0 on error. */
static uint64_t cold_manifest(const char *url, const wt_layout *l)
{
	nng_socket s;
	nng_req0_open(&s);
	nng_socket_set_ms(s, NNG_OPT_RECVTIMEO, 600000);
	nng_socket_set_size(s, NNG_OPT_RECVMAXSZ, 0);
	if (nng_dial(s, url, NULL, 0) != 0)
		return 0;
	char *excl[WT_MAX_EXCLUDE];
	Weights__Layout pl = WEIGHTS__LAYOUT__INIT;
	wire_layout_to_pb(l, &pl, excl);
	Weights__ManifestRequest mr = WEIGHTS__MANIFEST_REQUEST__INIT;
	mr.model = "big";
	mr.layout = &pl;
	Weights__Request rq = WEIGHTS__REQUEST__INIT;
	rq.id = 1;
	rq.body_case = WEIGHTS__REQUEST__BODY_MANIFEST;
	rq.manifest = &mr;
	size_t n = wire_framed_size(&rq.base);
	uint8_t *buf = malloc(n);
	wire_frame(&rq.base, buf, n);
	uint64_t t0 = common_now_ns(), dt = 0;
	nng_msg *m;
	if (nng_send(s, buf, n, 0) == 0 && nng_recvmsg(s, &m, 0) == 0) {
		Weights__Reply *r = NULL;
		const uint8_t *tail;
		size_t tail_len;
		if (wire_parse_reply(nng_msg_body(m), nng_msg_len(m), WIRE_MAX_HEADER_BYTES, &r,
		                     &tail, &tail_len, NULL) == WT_OK &&
		    r->body_case == WEIGHTS__REPLY__BODY_MANIFEST)
			dt = common_now_ns() - t0;
		else if (r != NULL && r->body_case == WEIGHTS__REPLY__BODY_ERROR)
			fprintf(stderr, "manifest: %s\n", r->error->message);
		wire_reply_free(r);
		nng_msg_free(m);
	}
	free(buf);
	nng_close(s);
	return dt;
}

int main(int argc, char **argv)
{
	const char *size = argc > 1 ? argv[1] : "256";
	const char *quant = argc > 2 ? argv[2] : "fp8-block";
	if (bench_init(argv[0], "peer") != 0 || bench_make_llama("big", size) != 0) {
		fprintf(stderr, "bench_peer: set-up failed (is build/wt-mkckpt built?)\n");
		return 1;
	}
	wt_layout l;
	wt_layout_init(&l);
	wt_errbuf err;
	l.tp_size = 2;
	if (wt_quant_from_name(quant, &l.quant, &err) != WT_OK) {
		fprintf(stderr, "bench_peer: %s\n", err.msg);
		bench_finish(0);
		return 2;
	}
	node a = {0}, b = {0}, c = {0};
	int rc = 1;
	if (node_start(&a, "a", NULL) != 0)
		goto out;
	const char *ua = wd_server_url(a.srv, 0);
	uint64_t t_a = cold_manifest(ua, &l); /* warms A; also pulls the source into RAM */
	if (node_start(&b, "b", ua) != 0 || node_start(&c, "c", NULL) != 0)
		goto out;
	uint64_t t_c = cold_manifest(wd_server_url(c.srv, 0), &l);
	uint64_t t_b = cold_manifest(wd_server_url(b.srv, 0), &l);
	if (t_a == 0 || t_b == 0 || t_c == 0) {
		fprintf(stderr, "bench_peer: a manifest request failed\n");
		goto out;
	}
	printf("llama %s MiB, layout TP=2 %s, all ranks into the cache:\n", size, quant);
	printf("  produce from source (A, first):  %8.1f ms\n", (double)t_a / 1e6);
	printf("  produce from source (C, base):   %8.1f ms\n", (double)t_c / 1e6);
	printf("  fill from peer A (B):            %8.1f ms\n", (double)t_b / 1e6);
	printf("  ratio fill / produce: %.2f (peer fill %.1fx faster)\n", (double)t_b / (double)t_c,
	       (double)t_c / (double)t_b);
	rc = 0;
out:
	if (b.srv != NULL)
		node_stop(&b);
	if (c.srv != NULL)
		node_stop(&c);
	if (a.srv != NULL)
		node_stop(&a);
	wt_layout_clear(&l);
	bench_finish(0);
	return rc;
}
