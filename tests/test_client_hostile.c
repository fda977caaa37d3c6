/*
 * test_client_hostile.c — the client against a server that misbehaves on
 * purpose (tests/util/hostile_weightd.h):
 *   - a bulk-stream reply trickled a byte every 300 ms times out after
 *     request_timeout_ms for the whole reply (it used to time only the
 *     silence between two bytes: a 4 MiB chunk could take weeks), and the
 *     fetch goes on over messages;
 *   - wt_fetch_cancel ends a fetch stuck on such a stream, or on a server
 *     that never answers, within about one request timeout with
 *     WT_ECANCELED (it waited for every retry and fail-over: 18-24 s here,
 *     minutes with the default options, and ended WT_EUNAVAIL);
 *   - a chunk larger than the client's limit is WT_ETOOBIG with a
 *     max_message_bytes under 64 KiB too (the limit wrapped to none);
 *   - a live (cut-through) manifest the client did not ask for is WT_EPROTO
 *     (its hashes would have come from the server later).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/common.h"
#include "tests/util/hostile_weightd.h"
#include "weights/async.h"
#include "weights/client.h"
#include "weights/engine.h"

static double now_s(void)
{
	return (double)common_now_ns() / 1e9;
}

static wt_client *client(const hostile *h, bool stream, uint32_t timeout_ms, uint32_t retries,
                         uint64_t max_message_bytes)
{
	wt_client_opts o;
	wt_client_opts_init(&o);
	const char *eps[1] = {h->url};
	o.endpoints = eps;
	o.n_endpoints = 1;
	o.stream = stream;
	o.request_timeout_ms = timeout_ms;
	o.connect_timeout_ms = 1000;
	o.max_retries = retries;
	o.retry_budget_ms = 5000;
	o.backoff_initial_ms = 10;
	o.backoff_max_ms = 20;
	if (max_message_bytes > 0)
		o.max_message_bytes = max_message_bytes;
	wt_client *c = NULL;
	wt_errbuf err;
	if (wt_client_open(&c, &o, &err) != WT_OK)
		fail_msg("wt_client_open: %s", err.msg);
	return c;
}

static wt_manifest *manifest(wt_client *c)
{
	wt_layout l;
	wt_layout_init(&l);
	wt_manifest *m = NULL;
	wt_errbuf err;
	if (wt_client_get_manifest(c, "fake", &l, &m, &err) != WT_OK)
		fail_msg("manifest: %s", err.msg);
	return m;
}

/* The bulk reply of br: header and bytes, one byte every 300 ms (the header
 * too when all), until the test stops the server. */
static void trickle(hostile *h, nng_stream *st, const bulk_req *br, bool all)
{
	uint64_t off, len;
	bulk_reply rp;
	memset(&rp, 0, sizeof(rp));
	rp.id = br->id;
	if (!hw_find_chunk(h, br->hash, &off, &len))
		return;
	rp.nbytes = len;
	memcpy(rp.chunk_hash, br->hash, 16);
	uint8_t hd[BULK_REPLY_BYTES];
	bulk_reply_encode(&rp, hd);
	if (!all && hw_write(st, hd, sizeof(hd)) != 0)
		return;
	for (size_t i = 0; all && i < sizeof(hd) && !atomic_load(&h->stop); i++) {
		usleep(300 * 1000);
		if (hw_write(st, hd + i, 1) != 0)
			return;
	}
	for (uint64_t i = 0; i < len && !atomic_load(&h->stop); i++) {
		usleep(300 * 1000);
		if (hw_write(st, h->data + off + i, 1) != 0)
			return;
	}
}

static void trickle_bytes(hostile *h, nng_stream *st, const bulk_req *br)
{
	trickle(h, st, br, false);
}

static void trickle_all(hostile *h, nng_stream *st, const bulk_req *br)
{
	trickle(h, st, br, true);
}

static void test_stream_trickle(void **state)
{
	(void)state;
	hostile *h = hw_start(40, 4096, true);
	h->on_bulk = trickle_bytes;
	wt_client *c = client(h, true, 1000, 1, 0);
	wt_manifest *m = manifest(c);
	wt_host_sink *hs;
	wt_errbuf err;
	assert_int_equal(wt_host_sink_create(&hs, &err), WT_OK);
	double t0 = now_s();
	int rv = wt_client_fetch(c, m, wt_host_sink_sink(hs), NULL, &err);
	double dt = now_s() - t0;
	printf("40 bytes trickled at 300 ms each over the stream, request_timeout_ms 1000: %s "
	       "after %.1f s\n",
	       wt_errname(rv), dt);
	assert_int_equal(rv, WT_OK); /* over messages, once the stream timed out */
	assert_true(dt < 6.0);       /* not 40 x 300 ms */
	wt_host_sink_destroy(hs);
	wt_manifest_free(m);
	wt_client_close(c);
	hw_stop(h);
}

/* Cancel a running asynchronous fetch after 0.5 s; its result and time. */
static int cancel_after(wt_client *c, wt_manifest *m, double *dt, wt_errbuf *err)
{
	wt_host_sink *hs;
	assert_int_equal(wt_host_sink_create(&hs, err), WT_OK);
	wt_fetch_handle *fh = NULL;
	double t0 = now_s();
	assert_int_equal(wt_client_fetch_start(c, m, wt_host_sink_sink(hs), NULL, NULL, &fh, err),
	                 WT_OK);
	usleep(500 * 1000);
	wt_fetch_cancel(fh);
	int rv = WT_OK;
	assert_int_equal(wt_fetch_wait(fh, -1, &rv, err), WT_OK);
	*dt = now_s() - t0;
	wt_fetch_free(fh);
	wt_host_sink_destroy(hs);
	return rv;
}

static void test_cancel_trickled_stream(void **state)
{
	(void)state;
	hostile *h = hw_start(16, 4096, true);
	h->on_bulk = trickle_all;
	wt_client *c = client(h, true, 1000, 1, 0);
	wt_manifest *m = manifest(c);
	double dt;
	wt_errbuf err;
	int rv = cancel_after(c, m, &dt, &err);
	printf("canceled at 0.5 s on a trickled stream: %s after %.1f s: %s\n", wt_errname(rv), dt,
	       err.msg);
	assert_int_equal(rv, WT_ECANCELED);
	assert_true(dt < 4.0);
	wt_manifest_free(m);
	wt_client_close(c);
	hw_stop(h);
}

static void no_answer(hostile *h, const Weights__Request *q)
{
	(void)h;
	(void)q;
}

static void test_cancel_while_retrying(void **state)
{
	(void)state;
	hostile *h = hw_start(64, 64, false);
	h->on_chunk = no_answer;
	wt_client *c = client(h, false, 1000, 5, 0);
	wt_manifest *m = manifest(c);
	double dt;
	wt_errbuf err;
	int rv = cancel_after(c, m, &dt, &err);
	printf("canceled at 0.5 s, chunk requests never answered, 5 retries: %s after %.1f s: "
	       "%s\n",
	       wt_errname(rv), dt, err.msg);
	assert_int_equal(rv, WT_ECANCELED);
	assert_true(dt < 4.0);
	wt_manifest_free(m);
	wt_client_close(c);
	hw_stop(h);
}

static void test_small_message_limit(void **state)
{
	(void)state;
	hostile *h = hw_start(4u << 20, 4u << 20, false);
	for (int k = 0; k < 2; k++) {
		uint64_t mmb = k == 0 ? 73728 : 8192;
		wt_client *c = client(h, false, 2000, 1, mmb);
		wt_layout l;
		wt_layout_init(&l);
		wt_manifest *m = NULL;
		wt_errbuf err;
		int rv = wt_client_get_manifest(c, "fake", &l, &m, &err);
		printf("max_message_bytes %llu, a 4 MiB chunk: %s: %s\n", (unsigned long long)mmb,
		       wt_errname(rv), err.msg);
		assert_int_equal(rv, WT_ETOOBIG);
		wt_client_close(c);
	}
	hw_stop(h);
}

static void live_manifest(hostile *h, uint64_t id)
{
	hw_manifest(h, id, true);
}

static void test_unasked_live_manifest(void **state)
{
	(void)state;
	hostile *h = hw_start(64, 64, false);
	h->on_manifest = live_manifest;
	wt_client *c = client(h, false, 2000, 1, 0); /* cut_through off */
	wt_layout l;
	wt_layout_init(&l);
	wt_manifest *m = NULL;
	wt_errbuf err;
	int rv = wt_client_get_manifest(c, "fake", &l, &m, &err);
	printf("a live manifest to a client that did not accept one: %s: %s\n", wt_errname(rv),
	       err.msg);
	assert_int_equal(rv, WT_EPROTO);
	assert_null(m);
	assert_non_null(strstr(err.msg, "did not accept"));
	wt_client_close(c);
	hw_stop(h);
}

/* Text a hostile server puts in an error, a model list or an admin reply
 * reaches the caller with its control bytes escaped (weightctl prints it to a
 * terminal: ESC sequences could retitle it, move the cursor, hide output). */
#define EVIL                                                                                       \
	"red\x1b[31m\rbell\x07\xc2\x9b"                                                            \
	"2J"
#define EVIL_ESCAPED "red\\x1b[31m\\rbell\\x07\\xc2\\x9b2J"

static void evil_chunk(hostile *h, const Weights__Request *q)
{
	Weights__Reply r = WEIGHTS__REPLY__INIT;
	Weights__Error er = WEIGHTS__ERROR__INIT;
	er.code = WT_EINVAL; /* not retried */
	er.message = EVIL;
	r.id = q->id;
	r.body_case = WEIGHTS__REPLY__BODY_ERROR;
	r.error = &er;
	hw_send(h, &r, NULL, 0);
}

static void evil_other(hostile *h, const Weights__Request *q)
{
	Weights__Reply r = WEIGHTS__REPLY__INIT;
	r.id = q->id;
	Weights__ModelInfo mi = WEIGHTS__MODEL_INFO__INIT, *mp = &mi;
	Weights__ModelList ml = WEIGHTS__MODEL_LIST__INIT;
	Weights__AdminReply ar = WEIGHTS__ADMIN_REPLY__INIT;
	if (q->body_case == WEIGHTS__REQUEST__BODY_LIST_MODELS) {
		mi.name = "m" EVIL;
		mi.uri = "file:///x" EVIL;
		mi.error = EVIL;
		mi.config_override = "{\"a\":\"" EVIL "\"}";
		ml.n_models = 1;
		ml.models = &mp;
		r.body_case = WEIGHTS__REPLY__BODY_MODELS;
		r.models = &ml;
	} else {
		ar.text = "line 1\nline 2 " EVIL;
		r.body_case = WEIGHTS__REPLY__BODY_ADMIN;
		r.admin = &ar;
	}
	hw_send(h, &r, NULL, 0);
}

static bool has_control(const char *s, bool newline_ok)
{
	for (; *s; s++)
		if (((unsigned char)*s < 0x20 && !(newline_ok && *s == '\n')) || *s == 0x7f ||
		    ((unsigned char)s[0] == 0xc2 && (unsigned char)s[1] >= 0x80 &&
		     (unsigned char)s[1] < 0xa0))
			return true;
	return false;
}

static char logged[4096];

static void log_append(void *ctx, int level, const char *msg)
{
	(void)ctx, (void)level;
	size_t n = strlen(logged);
	snprintf(logged + n, sizeof(logged) - n, "%s\n", msg);
}

static void test_server_text_escaped(void **state)
{
	(void)state;
	hostile *h = hw_start(64, 64, false);
	h->on_chunk = evil_chunk;
	h->on_other = evil_other;
	h->server_id = "srv" EVIL;
	wt_client_opts o;
	wt_client_opts_init(&o);
	const char *eps[1] = {h->url};
	o.endpoints = eps;
	o.n_endpoints = 1;
	o.log = log_append;
	o.log_level = WT_CLIENT_LOG_INFO; /* "connected to ... (server ID ...)" */
	wt_client *c = NULL;
	wt_errbuf err;
	assert_int_equal(wt_client_open(&c, &o, &err), WT_OK);
	wt_manifest *m = manifest(c);
	wt_host_sink *hs;
	assert_int_equal(wt_host_sink_create(&hs, &err), WT_OK);
	int rv = wt_client_fetch(c, m, wt_host_sink_sink(hs), NULL, &err);
	printf("error reply: %s: %s\n", wt_errname(rv), err.msg);
	assert_int_equal(rv, WT_EINVAL);
	assert_non_null(strstr(err.msg, EVIL_ESCAPED));
	assert_false(has_control(err.msg, false));
	wt_model_info *list = NULL;
	size_t n = 0;
	assert_int_equal(wt_client_list_models(c, &list, &n, &err), WT_OK);
	assert_int_equal(n, 1);
	printf("model list: %s %s %s\n", list[0].name, list[0].uri, list[0].error);
	assert_string_equal(list[0].name, "m" EVIL_ESCAPED);
	assert_string_equal(list[0].uri, "file:///x" EVIL_ESCAPED);
	assert_string_equal(list[0].error, EVIL_ESCAPED);
	assert_string_equal(wt_model_list_override(list, n, 0), "{\"a\":\"" EVIL_ESCAPED "\"}");
	assert_null(wt_model_list_override(list, n, 1));
	wt_model_list_free(list, n);
	wt_admin_result res = {0};
	assert_int_equal(wt_client_admin(c, WT_ADMIN_STATS, NULL, NULL, &res, &err), WT_OK);
	printf("admin text: %s\n", res.text);
	assert_string_equal(res.text, "line 1\nline 2 " EVIL_ESCAPED); /* its line break kept */
	assert_false(has_control(res.text, true));
	wt_admin_result_clear(&res);
	printf("client log:\n%s", logged);
	assert_non_null(strstr(logged, "server srv" EVIL_ESCAPED)); /* the Hello's server_id */
	assert_false(has_control(logged, true));
	wt_host_sink_destroy(hs);
	wt_manifest_free(m);
	wt_client_close(c);
	hw_stop(h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_stream_trickle),
	    cmocka_unit_test(test_cancel_trickled_stream),
	    cmocka_unit_test(test_cancel_while_retrying),
	    cmocka_unit_test(test_small_message_limit),
	    cmocka_unit_test(test_unasked_live_manifest),
	    cmocka_unit_test(test_server_text_escaped),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
