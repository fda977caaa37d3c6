/*
 * test_bulk_util.h — blocking helpers over a raw nng_stream for the bulk data
 * plane tests (test code only: an aio per call, cmocka asserts).
 */
#ifndef WT_TEST_BULK_UTIL_H
#define WT_TEST_BULK_UTIL_H

#include <nng/nng.h>
#include <stdint.h>
#include <stdlib.h>

/* Blocking helpers over an nng_stream (test code: an aio per call). */
static __attribute__((unused)) int st_io(nng_stream *st, int send, void *buf, size_t n)
{
	nng_aio *aio;
	if (nng_aio_alloc(&aio, NULL, NULL) != 0)
		abort();
	nng_aio_set_timeout(aio, 10000);
	size_t done = 0;
	int rv = 0;
	while (rv == 0 && done < n) {
		nng_iov v = {.iov_buf = (uint8_t *)buf + done, .iov_len = n - done};
		nng_aio_set_iov(aio, 1, &v);
		if (send)
			nng_stream_send(st, aio);
		else
			nng_stream_recv(st, aio);
		nng_aio_wait(aio);
		rv = nng_aio_result(aio);
		done += nng_aio_count(aio);
	}
	nng_aio_free(aio);
	return rv;
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
