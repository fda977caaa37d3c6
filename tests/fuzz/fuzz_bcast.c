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
#include "common/common.h"
#include "engine/bcast_int.h"
#include "proto/wire.h"
#include "tests/fuzz/fuzz.h"
#include "weights/weights.h"

#define N_T 3

static const uint64_t t_nbytes[N_T] = {12, 0, 5};
static const uint64_t t_chunks[N_T][2] = {{8, 4}, {0, 0}, {5, 0}};
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
	Weights__ChunkRef cr[3], *crp[3];
	Weights__TensorEntry te[N_T], *tep[N_T];
	uint8_t ch[3][16], th[N_T][16], data[12];
	int64_t shape[N_T];
	const char *names[N_T] = {"a", "b", "c"};
	size_t nc = 0;
	for (size_t t = 0; t < N_T; t++) {
		for (uint64_t k = 0; k < t_nbytes[t]; k++)
			data[k] = tensor_byte(t, k);
		common_hash128_to_bytes(common_hash128(data, t_nbytes[t]), th[t]);
		shape[t] = (int64_t)t_nbytes[t];
		weights__tensor_entry__init(&te[t]);
		te[t].name = (char *)names[t];
		te[t].dtype = WT_U8;
		te[t].n_shape = 1;
		te[t].shape = &shape[t];
		te[t].nbytes = t_nbytes[t];
		te[t].hash.len = 16;
		te[t].hash.data = th[t];
		te[t].chunks = &crp[nc];
		uint64_t off = 0;
		for (size_t k = 0; k < 2 && t_chunks[t][k] > 0; k++, nc++) {
			weights__chunk_ref__init(&cr[nc]);
			cr[nc].offset = off;
			cr[nc].nbytes = t_chunks[t][k];
			common_hash128_to_bytes(common_hash128(data + off, t_chunks[t][k]), ch[nc]);
			cr[nc].hash.len = 16;
			cr[nc].hash.data = ch[nc];
			crp[nc] = &cr[nc];
			off += t_chunks[t][k];
			te[t].n_chunks++;
		}
		tep[t] = &te[t];
	}
	Weights__Manifest pb = WEIGHTS__MANIFEST__INIT;
	pb.format_version = WT_FORMAT_VERSION;
	pb.model = "m";
	pb.revision = "r1";
	pb.layout_text = "tp=1";
	pb.shard_id.data = (uint8_t *)"sid";
	pb.shard_id.len = 3;
	pb.tensors = tep;
	pb.n_tensors = N_T;
	pb.total_bytes = 17;
	wt_layout l;
	wt_layout_init(&l);
	wt_errbuf err;
	if (client_manifest_from_pb(&pb, 1u << 20, "m", &l, &man, &err) != WT_OK) {
		fprintf(stderr, "fuzz_bcast: manifest: %s\n", err.msg);
		abort();
	}
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
