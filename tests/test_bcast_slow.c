/*
 * test_bcast_slow.c — a broadcast replica that says a valid hello and then
 * never reads (weights/bcast.h: "a replica that stops reading is dropped
 * after io_timeout_ms"). The shard must not fit in the socket buffers, so it
 * is built here: one U8 tensor of BIG_NBYTES in 64 KiB chunks (tu_fill bytes,
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
#include <unistd.h>

#include <cmocka.h>
#include <nng/nng.h>
#include <pthread.h>

#include "client/client.h"
#include "common/common.h"
#include "engine/bcast_int.h"
#include "proto/wire.h"
#include "tests/util/testutil.h"
#include "weights/bcast.h"
#include "weights/weights.h"

#define SEED        0x51077u
#define BIG_NBYTES  (4u << 20)
#define CHUNK_BYTES (64u << 10)
#define N_CHUNKS    (BIG_NBYTES / CHUNK_BYTES)
#define IO_MS       600u
#define N_DEAF      3

static uint8_t *g_data;

/* One tensor "big" (U8[BIG_NBYTES]) in N_CHUNKS chunks, as weightd would send it. */
static wt_manifest *big_manifest(void)
{
	static Weights__ChunkRef cr[N_CHUNKS], *crp[N_CHUNKS];
	static uint8_t ch[N_CHUNKS][16];
	uint8_t th[16];
	for (size_t i = 0; i < N_CHUNKS; i++) {
		weights__chunk_ref__init(&cr[i]);
		cr[i].offset = (uint64_t)i * CHUNK_BYTES;
		cr[i].nbytes = CHUNK_BYTES;
		common_hash128_to_bytes(common_hash128(g_data + cr[i].offset, CHUNK_BYTES), ch[i]);
		cr[i].hash.data = ch[i];
		cr[i].hash.len = 16;
		crp[i] = &cr[i];
	}
	common_hash128_to_bytes(common_hash128(g_data, BIG_NBYTES), th);
	int64_t shape = BIG_NBYTES;
	Weights__TensorEntry te = WEIGHTS__TENSOR_ENTRY__INIT, *tep = &te;
	te.name = "big";
	te.dtype = WT_U8;
	te.n_shape = 1;
	te.shape = &shape;
	te.nbytes = BIG_NBYTES;
	te.hash.data = th;
	te.hash.len = 16;
	te.chunks = crp;
	te.n_chunks = N_CHUNKS;
	Weights__Manifest pb = WEIGHTS__MANIFEST__INIT;
	pb.format_version = WT_FORMAT_VERSION;
	pb.model = "m";
	pb.revision = "r1";
	pb.layout_text = "tp=1";
	pb.shard_id.data = (uint8_t *)"sid";
	pb.shard_id.len = 3;
	pb.tensors = &tep;
	pb.n_tensors = 1;
	pb.total_bytes = BIG_NBYTES;
	wt_layout l;
	wt_layout_init(&l);
	wt_manifest *m = NULL;
	wt_errbuf err;
	if (client_manifest_from_pb(&pb, CHUNK_BYTES, "m", &l, &m, &err) != WT_OK)
		fail_msg("manifest: %s", err.msg);
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
	assert_int_equal(engine_bcast_dial(url, 2000, out, &err), WT_OK);
	assert_int_equal(engine_bcast_hello_send(*out, h, 2000, &err), WT_OK);
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
	wt_manifest *m = big_manifest();
	wt_host_sink *root_h;
	assert_int_equal(wt_host_sink_create(&root_h, NULL), WT_OK);
	char url[128];
	snprintf(url, sizeof(url), "ipc:///tmp/wt-test-bcast-slow-%d.ipc", (int)getpid());
	wt_bcast_opts o;
	wt_bcast_opts_init(&o);
	o.url = url;
	o.n_members = 3 + N_DEAF;
	o.join_timeout_ms = 5000;
	o.io_timeout_ms = IO_MS;
	wt_bcast_root *r = NULL;
	wt_errbuf err;
	if (wt_bcast_root_create(&r, &o, wt_host_sink_sink(root_h), &err) != WT_OK)
		fail_msg("root: %s", err.msg);
	nng_stream *deaf[N_DEAF];
	for (int i = 0; i < N_DEAF; i++)
		deaf_join(url, m, &deaf[i]);
	usleep(100 * 1000); /* accepted before the good ones dial */
	rep g[2];
	for (int i = 0; i < 2; i++) {
		memset(&g[i], 0, sizeof(g[i]));
		g[i].url = url;
		g[i].m = m;
		assert_int_equal(wt_host_sink_create(&g[i].h, NULL), WT_OK);
		assert_int_equal(pthread_create(&g[i].th, NULL, rep_main, &g[i]), 0);
	}
	uint64_t t0 = common_now_ns();
	int rv = drive(wt_bcast_root_sink(r), m, &err);
	double secs = (double)(common_now_ns() - t0) / 1e9;
	printf("root: %s in %.2f s %s\n", wt_errname(rv), secs, rv ? err.msg : "");
	assert_int_equal(rv, WT_OK);
	assert_true(secs < 5.0);
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
	uint32_t done = 0;
	rv = wt_bcast_root_result(r, &done, &err);
	printf("result: %s, %u done: %s\n", wt_errname(rv), done, err.msg);
	assert_int_equal(rv, WT_ETIMEDOUT);
	assert_int_equal(done, 2);
	assert_non_null(strstr(err.msg, "dropped"));
	assert_non_null(strstr(err.msg, "sending"));
	for (int i = 0; i < N_DEAF; i++)
		engine_bcast_close(deaf[i]);
	wt_bcast_root_destroy(r);
	wt_host_sink_destroy(root_h);
	wt_manifest_free(m);
}

int main(void)
{
	g_data = malloc(BIG_NBYTES);
	assert_non_null(g_data);
	tu_fill(g_data, BIG_NBYTES, SEED);
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_bcast_deaf_replica),
	};
	int rv = cmocka_run_group_tests(tests, NULL, NULL);
	free(g_data);
	return rv;
}
