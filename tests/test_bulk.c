/* test_bulk.c — the bulk stream headers (proto/bulk.h): byte layout pinned
 * against hand-written bytes, round trips, and every validation error. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "proto/bulk.h"

static void test_open(void **state)
{
	(void)state;
	uint8_t t[16], o[BULK_OPEN_BYTES];
	for (int i = 0; i < 16; i++)
		t[i] = (uint8_t)(0xa0 + i);
	bulk_open_encode(t, o);
	assert_memory_equal(o, "WTBULK01", 8);
	assert_memory_equal(o + 8, t, 16);
	wt_errbuf err;
	assert_int_equal(bulk_open_check(o, t, &err), WT_OK);
	uint8_t other[16];
	memcpy(other, t, 16);
	other[15] ^= 1;
	assert_int_equal(bulk_open_check(o, other, &err), WT_EPERM);
	assert_non_null(strstr(err.msg, "ticket"));
	o[7] = '2'; /* another version */
	assert_int_equal(bulk_open_check(o, t, &err), WT_EPROTO);
	assert_non_null(strstr(err.msg, "WTBULK01"));
}

static void test_req_layout(void **state)
{
	(void)state;
	bulk_req r = {.id = 0x0102030405060708ull,
	              .offset = 0x10,
	              .nbytes = 0x2000,
	              .flags = 0,
	              .shard_id_len = 32};
	for (int i = 0; i < 16; i++)
		r.hash[i] = (uint8_t)i;
	uint8_t b[BULK_REQ_BYTES];
	bulk_req_encode(&r, b);
	static const uint8_t want_head[8] = {1, 2, 3, 4, 5, 6, 7, 8};
	assert_memory_equal(b, want_head, 8); /* big-endian id */
	assert_int_equal(b[8 + 15], 15);      /* hash at 8 */
	assert_int_equal(b[24 + 7], 0x10);    /* offset at 24 */
	assert_int_equal(b[32 + 6], 0x20);    /* nbytes at 32 */
	assert_int_equal(b[44 + 3], 32);      /* shard_id_len at 44 */
	bulk_req d;
	wt_errbuf err;
	assert_int_equal(bulk_req_decode(b, &d, &err), WT_OK);
	assert_true(d.id == r.id && d.offset == r.offset && d.nbytes == r.nbytes);
	assert_int_equal(d.shard_id_len, 32);
	assert_memory_equal(d.hash, r.hash, 16);
}

static void test_req_invalid(void **state)
{
	(void)state;
	bulk_req r = {.id = 9, .shard_id_len = 0};
	uint8_t b[BULK_REQ_BYTES];
	bulk_req d = {.id = 77};
	wt_errbuf err;
	bulk_req_encode(&r, b);
	assert_int_equal(bulk_req_decode(b, &d, &err), WT_EPROTO);
	assert_non_null(strstr(err.msg, "shard_id_len 0"));
	assert_true(d.id == 77); /* untouched on failure */
	r.shard_id_len = BULK_MAX_SHARD_ID + 1;
	bulk_req_encode(&r, b);
	assert_int_equal(bulk_req_decode(b, &d, &err), WT_EPROTO);
	r.shard_id_len = BULK_MAX_SHARD_ID;
	bulk_req_encode(&r, b);
	assert_int_equal(bulk_req_decode(b, &d, &err), WT_OK);
	r.flags = 2; /* undefined */
	bulk_req_encode(&r, b);
	assert_int_equal(bulk_req_decode(b, &d, &err), WT_EPROTO);
	assert_non_null(strstr(err.msg, "flags"));
	/* a live request: a whole chunk by index, the rest of the hash zero */
	r.flags = 0;
	bulk_req_set_live(&r, 123456789012ull);
	bulk_req_encode(&r, b);
	assert_int_equal(bulk_req_decode(b, &d, &err), WT_OK);
	assert_int_equal(d.flags, BULK_F_LIVE);
	assert_true(bulk_req_live_index(&d) == 123456789012ull);
	bulk_req bad = r;
	bad.offset = 5;
	bulk_req_encode(&bad, b);
	assert_int_equal(bulk_req_decode(b, &d, &err), WT_EPROTO);
	assert_non_null(strstr(err.msg, "live"));
	bad = r;
	bad.hash[15] = 1;
	bulk_req_encode(&bad, b);
	assert_int_equal(bulk_req_decode(b, &d, &err), WT_EPROTO);
}

static void test_reply(void **state)
{
	(void)state;
	bulk_reply r = {.id = 5, .code = 0, .msg_len = 0, .nbytes = 4096, .offset = 0};
	memset(r.chunk_hash, 0x11, 16);
	memset(r.tensor_hash, 0x22, 16);
	uint8_t b[BULK_REPLY_BYTES];
	bulk_reply_encode(&r, b);
	assert_int_equal(b[16 + 6], 0x10); /* nbytes 4096 at 16 */
	assert_int_equal(b[24], 0x11);
	assert_int_equal(b[40], 0x22);
	bulk_reply d;
	wt_errbuf err;
	assert_int_equal(bulk_reply_decode(b, 4096, &d, &err), WT_OK);
	assert_true(d.id == 5 && d.nbytes == 4096);
	assert_memory_equal(d.tensor_hash, r.tensor_hash, 16);
	/* more bytes than asked for */
	assert_int_equal(bulk_reply_decode(b, 4095, &d, &err), WT_EPROTO);
	assert_non_null(strstr(err.msg, "more than"));
	/* an error with bytes */
	r.code = WT_ENOTFOUND;
	bulk_reply_encode(&r, b);
	assert_int_equal(bulk_reply_decode(b, 1u << 30, &d, &err), WT_EPROTO);
	r.nbytes = 0;
	r.msg_len = BULK_MAX_MSG;
	bulk_reply_encode(&r, b);
	assert_int_equal(bulk_reply_decode(b, 0, &d, &err), WT_OK);
	assert_int_equal(d.code, WT_ENOTFOUND);
	r.msg_len = BULK_MAX_MSG + 1;
	bulk_reply_encode(&r, b);
	assert_int_equal(bulk_reply_decode(b, 0, &d, &err), WT_EPROTO);
	assert_non_null(strstr(err.msg, "msg_len"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_open),
	    cmocka_unit_test(test_req_layout),
	    cmocka_unit_test(test_req_invalid),
	    cmocka_unit_test(test_reply),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
