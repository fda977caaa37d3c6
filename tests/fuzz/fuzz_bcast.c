/*
 * fuzz_bcast.c — a broadcast replica's handling of what a root it does not
 * trust sends (engine_bcast_rx_drive, engine/bcast_int.h): the input is the
 * root's side of the stream after the replica was admitted (frames of 24
 * bytes, DATA followed by its bytes; the end of the input is the root going
 * away, WT_ECLOSED), checked against a fixed manifest built here: tensors "a"
 * (U8[12], chunks of 8 and 4 bytes), "b" (U8[0], no chunk), "c" (U8[5], one
 * chunk), revision "r1"; byte k of tensor t is tensor_byte(t, k).
 *
 * Input: byte 0 = flags: bits 0-3 = n, the sink fails (WT_EIO) its n-th
 * tensor_begin/write/tensor_end call (0: none), bit 4 its end() fails. The
 * rest is the stream.
 *
 * Contract (engine.h, checked by the sink): begin once first; tensors in
 * manifest order, each tensor_begin, writes contiguous from 0 tiling the
 * tensor with exactly the right bytes (they passed their chunk hash),
 * tensor_end; end once after every tensor; on a failure after begin, abort
 * exactly once and nothing after it; never end and abort. WT_OK exactly when
 * end() was called and succeeded; a sink failure is returned as its own code.
 */
#include <string.h>

#include "client/client.h"
#include "client/client_int.h"
#include "engine/bcast_int.h"
#include "proto/wire.h"
#include "tests/fuzz/fuzz.h"
#include "tests/util/pb_manifest.h"
#include "weights/weights.h"

#define N_T          3
#define CHUNK_NBYTES 8 /* "a" in chunks of 8 and 4 bytes, "c" in one of 5 */

static const uint64_t t_nbytes[N_T] = {12, 0, 5};
static wt_manifest *man;

static uint8_t tensor_byte(size_t t, uint64_t k)
{
	return (uint8_t)(t * 53 + k * 11 + 3);
}

static void cleanup(void)
{
	wt_manifest_free(man);
}

static void setup(void)
{
	uint8_t data[N_T][12];
	const char *names[N_T] = {"a", "b", "c"};
	pbm_tensor t[N_T];
	for (size_t i = 0; i < N_T; i++) {
		for (uint64_t k = 0; k < t_nbytes[i]; k++)
			data[i][k] = tensor_byte(i, k);
		t[i] = (pbm_tensor){names[i], WT_U8, data[i], t_nbytes[i]};
	}
	pbm b;
	pbm_build(&b, t, N_T, CHUNK_NBYTES, false);
	wt_errbuf err;
	if (pbm_to_manifest(&b, 1u << 20, &man, &err) != WT_OK) {
		fprintf(stderr, "fuzz_bcast: manifest: %s\n", err.msg);
		abort();
	}
	pbm_free(&b);
	atexit(cleanup);
}

/* The root's side of the stream. */
typedef struct src {
	const uint8_t *p;
	size_t left;
} src;

static int src_read(void *ctx, void *buf, size_t n, int frame_start, const char *what,
                    wt_errbuf *err)
{
	(void)frame_start;
	src *s = ctx;
	if (n > s->left) {
		s->left = 0;
		return wt_seterr(err, WT_ECLOSED, "broadcast: %s: the other side went away", what);
	}
	memcpy(buf, s->p, n);
	s->p += n;
	s->left -= n;
	return WT_OK;
}

/* A sink that checks engine.h's contract. */
typedef struct csink {
	wt_sink base;
	int begins, ends, aborts, calls, fail_call, fail_end;
	size_t next, cur; /* cur: tensor open, N_T if none */
	uint64_t written;
} csink;

static csink *cs(wt_sink *s)
{
	return (csink *)s;
}

static int fail_now(csink *c, wt_errbuf *err)
{
	if (++c->calls == c->fail_call)
		return wt_seterr(err, WT_EIO, "fuzz sink: call %d fails", c->calls);
	return WT_OK;
}

static int k_begin(wt_sink *s, const wt_manifest *m, wt_errbuf *err)
{
	(void)err;
	csink *c = cs(s);
	FUZZ_CHECK(m == man && c->begins == 0 && c->ends == 0 && c->aborts == 0);
	c->begins++;
	return WT_OK;
}

static int k_tbegin(wt_sink *s, size_t t, wt_errbuf *err)
{
	csink *c = cs(s);
	FUZZ_CHECK(c->begins == 1 && c->ends == 0 && c->aborts == 0);
	FUZZ_CHECK(c->cur == N_T && t == c->next);
	c->cur = t;
	c->written = 0;
	return fail_now(c, err);
}

static int k_write(wt_sink *s, size_t t, uint64_t off, const void *d, size_t len, wt_errbuf *err)
{
	csink *c = cs(s);
	FUZZ_CHECK(c->ends == 0 && c->aborts == 0 && t == c->cur && off == c->written);
	FUZZ_CHECK(len > 0 && len <= t_nbytes[t] - off);
	for (size_t k = 0; k < len; k++) /* they passed their chunk hash */
		FUZZ_CHECK(((const uint8_t *)d)[k] == tensor_byte(t, off + k));
	c->written += len;
	return fail_now(c, err);
}

static int k_tend(wt_sink *s, size_t t, wt_errbuf *err)
{
	csink *c = cs(s);
	FUZZ_CHECK(c->ends == 0 && c->aborts == 0 && t == c->cur && c->written == t_nbytes[t]);
	c->cur = N_T;
	c->next++;
	return fail_now(c, err);
}

static int k_end(wt_sink *s, wt_errbuf *err)
{
	csink *c = cs(s);
	FUZZ_CHECK(c->begins == 1 && c->ends == 0 && c->aborts == 0);
	FUZZ_CHECK(c->cur == N_T && c->next == N_T);
	c->ends++;
	return c->fail_end ? wt_seterr(err, WT_EIO, "fuzz sink: end fails") : WT_OK;
}

static void k_abort(wt_sink *s)
{
	csink *c = cs(s);
	FUZZ_CHECK(c->begins == 1 && c->ends == 0 && c->aborts == 0);
	c->aborts++;
}

static const wt_sink_ops k_ops = {.struct_size = sizeof(wt_sink_ops),
                                  .begin = k_begin,
                                  .tensor_begin = k_tbegin,
                                  .write = k_write,
                                  .tensor_end = k_tend,
                                  .end = k_end,
                                  .abort = k_abort};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (man == NULL)
		setup();
	if (size < 1)
		return 0;
	csink c = {.base = {.ops = &k_ops}, .cur = N_T};
	c.fail_call = data[0] & 0xf;
	c.fail_end = (data[0] >> 4) & 1;
	src s = {.p = data + 1, .left = size - 1};
	wt_errbuf err;
	int rv =
	    fuzz_note("rx_drive", engine_bcast_rx_drive(man, &c.base, src_read, &s, &err), &err);
	FUZZ_CHECK(c.begins == 1);
	FUZZ_CHECK(c.ends + c.aborts == 1);
	if (rv == WT_OK)
		FUZZ_CHECK(c.ends == 1 && c.next == N_T);
	else
		FUZZ_CHECK(err.code == rv && err.msg[0] != '\0');
	if (c.ends == 1 && rv != WT_OK) /* only the sink's own end() can fail it */
		FUZZ_CHECK(c.fail_end && rv == WT_EIO);
	if (c.fail_call > 0 && c.calls >= c.fail_call) /* the sink's error is the answer */
		FUZZ_CHECK(rv == WT_EIO && c.aborts == 1);
	return 0;
}
