/*
 * test_wire.c — replies are checked before protobuf-c unpacks them
 * (proto/wire_check.c): a manifest of a million empty tensor entries (2 bytes
 * each on the wire, over 100 unpacked: a hostile server made a client
 * allocate about 5 GB for a 66 MB reply) is WT_EPROTO without unpacking, a
 * real-sized manifest passes with room to spare, and a tensor name that is
 * not UTF-8 is WT_EPROTO naming the field (a file sink reported it as out of
 * memory).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "common/common.h"
#include "proto/wire.h"

/* Frame a Reply carrying manifest m into a malloc'd buffer. */
static uint8_t *frame_manifest(Weights__Manifest *m, size_t *len)
{
	Weights__Reply r = WEIGHTS__REPLY__INIT;
	r.id = 1;
	r.body_case = WEIGHTS__REPLY__BODY_MANIFEST;
	r.manifest = m;
	*len = wire_framed_size(&r.base);
	uint8_t *buf = malloc(*len);
	assert_non_null(buf);
	assert_int_equal(wire_frame(&r.base, buf, *len), *len);
	return buf;
}

/* A manifest of NT tensors of NC chunks each, as weightd writes them: its
 * unpacked size is within WIRE_UNPACK_RATIO of its bytes. */
static void test_real_manifest(void **state)
{
	(void)state;
	enum { NT = 12000, NC = 8 }; /* 3.7 MB: over WIRE_UNPACK_SLACK, the ratio counts */
	Weights__Manifest m = WEIGHTS__MANIFEST__INIT;
	m.format_version = 1;
	m.model = "llama";
	m.revision = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
	m.n_tensors = NT;
	m.tensors = calloc(NT, sizeof(*m.tensors));
	Weights__TensorEntry *te = calloc(NT, sizeof(*te));
	Weights__ChunkRef *cr = calloc((size_t)NT * NC, sizeof(*cr));
	Weights__ChunkRef **crp = calloc((size_t)NT * NC, sizeof(*crp));
	char(*names)[64] = calloc(NT, 64);
	int64_t shape[2] = {4096, 4096};
	static uint8_t h[16] = {1, 2, 3};
	for (size_t i = 0; i < NT; i++) {
		weights__tensor_entry__init(&te[i]);
		snprintf(names[i], 64, "model.layers.%zu.mlp.gate_up_proj.weight", i);
		te[i].name = names[i];
		te[i].dtype = 3;
		te[i].n_shape = 2;
		te[i].shape = shape;
		te[i].nbytes = 4096ull * 4096 * 2;
		te[i].hash = (ProtobufCBinaryData){16, h};
		te[i].n_chunks = NC;
		te[i].chunks = &crp[i * NC];
		for (size_t k = 0; k < NC; k++) {
			Weights__ChunkRef *c = &cr[i * NC + k];
			weights__chunk_ref__init(c);
			c->hash = (ProtobufCBinaryData){16, h};
			c->offset = k * (4u << 20);
			c->nbytes = 4u << 20;
			crp[i * NC + k] = c;
		}
		m.tensors[i] = &te[i];
	}
	size_t len;
	uint8_t *buf = frame_manifest(&m, &len);
	Weights__Reply *r = NULL;
	const uint8_t *tail;
	size_t tail_len;
	wt_errbuf err;
	int rv = wire_parse_reply(buf, len, WIRE_MAX_HEADER_BYTES, &r, &tail, &tail_len, &err);
	if (rv != WT_OK)
		fail_msg("%s", err.msg);
	assert_int_equal(r->manifest->n_tensors, NT);
	printf("a manifest of %d tensors x %d chunks: %zu bytes, parsed\n", NT, NC, len);
	wire_reply_free(r);
	free(buf);
	free(names);
	free(crp);
	free(cr);
	free(te);
	free(m.tensors);
}

static void test_amplification(void **state)
{
	(void)state;
	/* a Reply (field 3 = manifest, by hand) holding n empty TensorEntry (field 9) */
	size_t n = 1000000, body = 2 * n;
	size_t len = 4 + 2 + 6 + body; /* prefix, reply id, manifest tag + length */
	uint8_t *buf = malloc(len);
	assert_non_null(buf);
	Weights__Reply probe = WEIGHTS__REPLY__INIT;
	(void)probe;
	const ProtobufCFieldDescriptor *fm = protobuf_c_message_descriptor_get_field_by_name(
	    &weights__reply__descriptor, "manifest");
	assert_non_null(fm);
	size_t p = 4;
	buf[p++] = 0x08; /* id = 1 */
	buf[p++] = 0x01;
	buf[p++] = (uint8_t)(fm->id << 3 | 2);
	uint64_t v = body; /* varint length */
	for (int i = 0; i < 5; i++) {
		buf[p++] = (uint8_t)((v & 0x7f) | (i < 4 ? 0x80 : 0));
		v >>= 7;
	}
	for (size_t i = 0; i < n; i++) {
		buf[p++] = 9 << 3 | 2;
		buf[p++] = 0;
	}
	len = p;
	uint32_t hl = (uint32_t)(len - 4);
	buf[0] = (uint8_t)(hl >> 24);
	buf[1] = (uint8_t)(hl >> 16);
	buf[2] = (uint8_t)(hl >> 8);
	buf[3] = (uint8_t)hl;
	Weights__Reply *r = NULL;
	const uint8_t *tail;
	size_t tail_len;
	wt_errbuf err;
	uint64_t t0 = common_now_ns();
	int rv = wire_parse_reply(buf, len, WIRE_MAX_HEADER_BYTES, &r, &tail, &tail_len, &err);
	printf("%zu empty tensor entries (%zu bytes): %s in %.3f s: %s\n", n, len, wt_errname(rv),
	       (double)(common_now_ns() - t0) / 1e9, err.msg);
	assert_int_equal(rv, WT_EPROTO);
	assert_null(r);
	assert_non_null(strstr(err.msg, "refused before unpacking"));
	free(buf);
}

static void test_bad_text(void **state)
{
	(void)state;
	Weights__Manifest m = WEIGHTS__MANIFEST__INIT;
	m.model = "llama";
	Weights__TensorEntry te = WEIGHTS__TENSOR_ENTRY__INIT;
	Weights__TensorEntry *tp = &te;
	te.name = "b.\xff\xfe";
	m.n_tensors = 1;
	m.tensors = &tp;
	size_t len;
	uint8_t *buf = frame_manifest(&m, &len);
	Weights__Reply *r = NULL;
	const uint8_t *tail;
	size_t tail_len;
	wt_errbuf err;
	int rv = wire_parse_reply(buf, len, WIRE_MAX_HEADER_BYTES, &r, &tail, &tail_len, &err);
	printf("a tensor name that is not UTF-8: %s: %s\n", wt_errname(rv), err.msg);
	assert_int_equal(rv, WT_EPROTO);
	assert_non_null(strstr(err.msg, "TensorEntry.name"));
	free(buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_real_manifest),
	    cmocka_unit_test(test_amplification),
	    cmocka_unit_test(test_bad_text),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
