/*
 * test_bulk_hostile.c — the bulk data plane (proto/bulk.h) against hostile
 * peers:
 *   - libweights: an ok reply that announces error text (msg_len > 0) is a
 *     framing error that ends the stream, and the fetch goes on over messages
 *     (the client used to take the text for the chunk's first bytes: a
 *     WT_EHASH blamed on the chunk, then a stream out of step).
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

#include "common/common.h"
#include "proto/bulk.h"
#include "test_weightd_util.h"
#include "tests/util/hostile_weightd.h"
#include "weights/client.h"
#include "weights/engine.h"

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

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_ok_reply_with_text),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
