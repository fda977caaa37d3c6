/*
 * test_bulk_util.h — blocking helpers over a raw nng_stream for the bulk data
 * plane tests (test code only: an aio per call, cmocka asserts).
 */
#ifndef WT_TEST_BULK_UTIL_H
#define WT_TEST_BULK_UTIL_H

#include <nng/nng.h>
#include <stdint.h>
#include <stdlib.h>

#include "client/client.h"
#include "common/common.h"

/* Blocking helpers over an nng_stream (test code): n bytes within 10 s. */
static __attribute__((unused)) int st_io(nng_stream *st, int send, void *buf, size_t n)
{
	return client_stream_io(st, send, buf, n, common_now_ns() + 10000000000ull, NULL, NULL);
}

static __attribute__((unused)) nng_stream *st_dial(const char *url)
{
	nng_stream_dialer *d;
	nng_aio *aio;
	assert_int_equal(nng_stream_dialer_alloc(&d, url), 0);
	assert_int_equal(nng_aio_alloc(&aio, NULL, NULL), 0);
	nng_stream_dialer_dial(d, aio);
	nng_aio_wait(aio);
	assert_int_equal(nng_aio_result(aio), 0);
	nng_stream *st = nng_aio_get_output(aio, 0);
	nng_aio_free(aio);
	nng_stream_dialer_free(d);
	return st;
}

#endif
