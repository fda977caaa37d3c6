/*
 * fuzz_reply.c — what a client reads from a server it does not trust: a
 * reply message through client_parse_reply (framing, the unpack-size check,
 * id echo, Error replies), a Manifest body through client_manifest_from_pb
 * (the complete manifest validation), and the bulk stream's fixed reply and
 * request headers (bulk_reply_decode, bulk_req_decode).
 *
 * Input: byte 0 selects the body kind the client waits for (its value modulo
 * 9: a Weights__Reply__BodyCase); the rest is the nng message body (u32
 * length, protobuf Reply, tail) of the reply to request id 1. The first
 * BULK_REPLY_BYTES / BULK_REQ_BYTES bytes after byte 0 also go to the bulk
 * decoders. An accepted manifest must keep its promises: tensors sorted by
 * name, chunks tiling each tensor in order, within the chunk limit.
 */
#include <nng/nng.h>
#include <string.h>

#include "client/client.h"
#include "client/client_int.h"
#include "proto/bulk.h"
#include "proto/wire.h"
#include "tests/fuzz/fuzz.h"

#define MAX_CHUNK (1u << 20)

static wt_client *cli;

static void cleanup(void)
{
	wt_client_close(cli);
}

static void setup(void)
{
	cli = fuzz_client_open();
	atexit(cleanup);
}

static void check_manifest(const wt_manifest *m)
{
	size_t ci = 0;
	for (size_t t = 0; t < m->n_tensors; t++) {
		const client_tensor *ct = &m->tensors[t];
		if (t > 0)
			FUZZ_CHECK(strcmp(m->tensors[t - 1].name, ct->name) < 0);
		size_t idx;
		FUZZ_CHECK(wt_manifest_find(m, ct->name, &idx) == WT_OK && idx == t);
		wt_tensor_info ti;
		FUZZ_CHECK(wt_manifest_tensor(m, t, &ti) == WT_OK);
		uint64_t off = 0;
		for (; ci < m->n_chunks && m->chunks[ci].tensor == t; ci++) {
			FUZZ_CHECK(m->chunks[ci].off == off && m->chunks[ci].nbytes <= MAX_CHUNK);
			off += m->chunks[ci].nbytes;
		}
		FUZZ_CHECK(off == ti.nbytes);
	}
	FUZZ_CHECK(ci == m->n_chunks);
}

static void reply(Weights__Reply__BodyCase want, const uint8_t *data, size_t size)
{
	nng_msg *msg;
	if (nng_msg_alloc(&msg, 0) != 0 || nng_msg_append(msg, data, size) != 0)
		abort();
	Weights__Reply *r = NULL;
	const uint8_t *tail;
	size_t tail_len;
	bool answered = false;
	wt_errbuf err;
	int rv = client_parse_reply(cli, 0, msg, 1, want, &r, &tail, &tail_len, &answered, &err);
	fuzz_note("client_parse_reply", rv, &err);
	if (rv != WT_OK) {
		FUZZ_CHECK(r == NULL && err.msg[0] != '\0');
		nng_msg_free(msg);
		return;
	}
	FUZZ_CHECK(r->id == 1 && r->body_case == want);
	FUZZ_CHECK(tail >= (const uint8_t *)nng_msg_body(msg) &&
	           tail_len <= size - (size_t)(tail - (const uint8_t *)nng_msg_body(msg)));
	if (want == WEIGHTS__REPLY__BODY_MANIFEST) {
		wt_layout l;
		wt_layout_init(&l);
		wt_manifest *m = NULL;
		rv = client_manifest_from_pb(r->manifest, MAX_CHUNK, "m", &l, &m, &err);
		if (fuzz_note("client_manifest_from_pb", rv, &err) == WT_OK) {
			check_manifest(m);
			wt_manifest_free(m);
		} else {
			FUZZ_CHECK(m == NULL && err.msg[0] != '\0');
		}
	}
	if (want == WEIGHTS__REPLY__BODY_CHUNK)
		FUZZ_CHECK(tail_len == r->chunk->nbytes);
	wire_reply_free(r);
	nng_msg_free(msg);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (cli == NULL)
		setup();
	if (size < 1)
		return 0;
	Weights__Reply__BodyCase want = (Weights__Reply__BodyCase)(data[0] % 9);
	data++;
	size--;
	reply(want, data, size);
	wt_errbuf err;
	if (size >= BULK_REPLY_BYTES) {
		bulk_reply br;
		if (fuzz_note("bulk_reply_decode", bulk_reply_decode(data, MAX_CHUNK, &br, &err),
		              &err) == WT_OK)
			FUZZ_CHECK(br.nbytes <= MAX_CHUNK);
	}
	if (size >= BULK_REQ_BYTES) {
		bulk_req bq;
		if (fuzz_note("bulk_req_decode", bulk_req_decode(data, &bq, &err), &err) == WT_OK)
			FUZZ_CHECK(bq.shard_id_len >= 1);
	}
	return 0;
}
