/* wire.c — framing and parsing of weightd messages (see wire.h). */
#include <string.h>

#include "proto/wire.h"
#include "weights/layout.h"

static uint32_t get_be32(const uint8_t *p)
{
	return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | p[3];
}

size_t wire_framed_size(const ProtobufCMessage *msg)
{
	return WIRE_PREFIX_BYTES + protobuf_c_message_get_packed_size(msg);
}

size_t wire_frame(const ProtobufCMessage *msg, uint8_t *buf, size_t cap)
{
	size_t n = protobuf_c_message_get_packed_size(msg);
	if (n > UINT32_MAX || cap < WIRE_PREFIX_BYTES + n)
		return 0;
	buf[0] = (uint8_t)(n >> 24);
	buf[1] = (uint8_t)(n >> 16);
	buf[2] = (uint8_t)(n >> 8);
	buf[3] = (uint8_t)n;
	size_t w = protobuf_c_message_pack(msg, buf + WIRE_PREFIX_BYTES);
	return w == n ? WIRE_PREFIX_BYTES + n : 0;
}

static int split_frame(const uint8_t *buf, size_t len, size_t max_header, const char *what,
                       size_t *hdr_len, wt_errbuf *err)
{
	if (len < WIRE_PREFIX_BYTES)
		return wt_seterr(err, WT_EPROTO,
		                 "%s: message of %zu bytes is shorter than its "
		                 "4-byte length prefix",
		                 what, len);
	uint32_t n = get_be32(buf);
	if (n > max_header)
		return wt_seterr(err, WT_EPROTO, "%s: header length %u over the limit %zu", what, n,
		                 max_header);
	if ((size_t)n > len - WIRE_PREFIX_BYTES)
		return wt_seterr(err, WT_EPROTO,
		                 "%s: header length %u past the end of a %zu-byte message", what, n,
		                 len);
	*hdr_len = n;
	return WT_OK;
}

int wire_parse_request(const uint8_t *buf, size_t len, size_t max_header, Weights__Request **out,
                       wt_errbuf *err)
{
	size_t n;
	int rv = split_frame(buf, len, max_header, "request", &n, err);
	if (rv != WT_OK)
		return rv;
	if (WIRE_PREFIX_BYTES + n != len)
		return wt_seterr(err, WT_EPROTO, "request: %zu unexpected bytes after the header",
		                 len - WIRE_PREFIX_BYTES - n);
	Weights__Request *r = weights__request__unpack(NULL, n, buf + WIRE_PREFIX_BYTES);
	if (r == NULL)
		return wt_seterr(err, WT_EPROTO,
		                 "request: %zu header bytes are not a valid "
		                 "weights.Request",
		                 n);
	if ((rv = wire_check_strings(&weights__request__descriptor, buf + WIRE_PREFIX_BYTES, n,
	                             err)) != WT_OK) {
		weights__request__free_unpacked(r, NULL);
		return rv;
	}
	*out = r;
	return WT_OK;
}

void wire_request_free(Weights__Request *r)
{
	if (r != NULL)
		weights__request__free_unpacked(r, NULL);
}

int wire_parse_reply(const uint8_t *buf, size_t len, size_t max_header, Weights__Reply **out,
                     const uint8_t **tail, size_t *tail_len, wt_errbuf *err)
{
	size_t n;
	int rv = split_frame(buf, len, max_header, "reply", &n, err);
	if (rv != WT_OK)
		return rv;
	/* before unpacking: clean strings, and a bounded unpacked size */
	if ((rv = wire_check_reply(&weights__reply__descriptor, buf + WIRE_PREFIX_BYTES, n, err)) !=
	    WT_OK)
		return rv;
	Weights__Reply *r = weights__reply__unpack(NULL, n, buf + WIRE_PREFIX_BYTES);
	if (r == NULL)
		return wt_seterr(err, WT_EPROTO,
		                 "reply: %zu header bytes are not a valid "
		                 "weights.Reply",
		                 n);
	size_t rest = len - WIRE_PREFIX_BYTES - n;
	if (r->body_case == WEIGHTS__REPLY__BODY_CHUNK) {
		uint64_t said = r->chunk->nbytes; /* read before r is freed */
		if (said != rest) {
			weights__reply__free_unpacked(r, NULL);
			return wt_seterr(err, WT_EPROTO,
			                 "chunk reply: header says %llu bytes, %zu follow",
			                 (unsigned long long)said, rest);
		}
	} else if (rest != 0) {
		weights__reply__free_unpacked(r, NULL);
		return wt_seterr(err, WT_EPROTO, "reply: %zu unexpected bytes after the header",
		                 rest);
	}
	*out = r;
	*tail = buf + WIRE_PREFIX_BYTES + n;
	*tail_len = rest;
	return WT_OK;
}

void wire_reply_free(Weights__Reply *r)
{
	if (r != NULL)
		weights__reply__free_unpacked(r, NULL);
}

/* Layout.quant, Layout.dtype and TensorEntry.dtype carry the wt_quant /
 * wt_dtype codes by value (weights.proto); the codes are FROZEN (docs/format.md
 * section 6.1): renumbering one breaks every peer and client. New codes go at
 * the end. */
_Static_assert(WT_QUANT_NONE == 0 && WT_QUANT_FP8_TENSOR == 1 && WT_QUANT_FP8_CHANNEL == 2 &&
                   WT_QUANT_FP8_BLOCK == 3 && WT_QUANT_INT8_CHANNEL == 4 &&
                   WT_QUANT_INT4_GROUP == 5,
               "wt_quant codes are frozen");
_Static_assert(WT_DTYPE_INVALID == 0 && WT_F64 == 1 && WT_F32 == 2 && WT_F16 == 3 && WT_BF16 == 4 &&
                   WT_F8_E4M3 == 5 && WT_F8_E5M2 == 6 && WT_I64 == 7 && WT_I32 == 8 &&
                   WT_I16 == 9 && WT_I8 == 10 && WT_U8 == 11 && WT_BOOL == 12,
               "wt_dtype codes are frozen");

void wire_layout_to_pb(const wt_layout *l, Weights__Layout *pb, char **exclude_storage)
{
	pb->tp_size = l->tp_size;
	pb->ep_size = l->ep_size;
	pb->quant = (uint32_t)l->quant;
	pb->dtype = (uint32_t)l->dtype;
	pb->group_size = l->group_size;
	pb->vocab_pad = l->vocab_pad;
	pb->w13_up_gate = l->w13_up_gate != 0;
	pb->requant_allow = l->requant_allow != 0;
	for (uint32_t i = 0; i < l->n_exclude; i++)
		exclude_storage[i] = l->exclude[i];
	pb->n_exclude = l->n_exclude;
	pb->exclude = l->n_exclude ? exclude_storage : NULL;
	pb->raw = l->raw != 0;
	pb->n_include = l->n_include;
	pb->include = l->n_include ? l->include : NULL;
}

int wire_layout_from_pb(const Weights__Layout *pb, wt_layout *l, wt_errbuf *err)
{
	wt_layout_clear(l);
	if (pb == NULL)
		return wt_seterr(err, WT_EPROTO, "request has no layout");
	if (pb->quant >= WT_QUANT_COUNT_)
		return wt_seterr(err, WT_EPROTO, "layout: unknown quant code %u", pb->quant);
	if (pb->dtype >= WT_DTYPE_COUNT_)
		return wt_seterr(err, WT_EPROTO, "layout: unknown dtype code %u", pb->dtype);
	if (pb->n_exclude > WT_MAX_EXCLUDE)
		return wt_seterr(err, WT_ETOOBIG, "layout: %zu exclude patterns (max %d)",
		                 pb->n_exclude, WT_MAX_EXCLUDE);
	l->tp_size = pb->tp_size;
	l->ep_size = pb->ep_size;
	l->quant = (wt_quant)pb->quant;
	l->dtype = (wt_dtype)pb->dtype;
	l->group_size = pb->group_size;
	l->vocab_pad = pb->vocab_pad;
	l->w13_up_gate = pb->w13_up_gate;
	l->requant_allow = pb->requant_allow;
	if (pb->n_include > WT_MAX_INCLUDE)
		return wt_seterr(err, WT_ETOOBIG, "layout: %zu include names (max %d)",
		                 pb->n_include, WT_MAX_INCLUDE);
	for (size_t i = 0; i < pb->n_exclude; i++) {
		int rv = wt_layout_add_exclude(l, pb->exclude[i], err);
		if (rv != WT_OK) {
			wt_layout_clear(l);
			return rv;
		}
	}
	l->raw = pb->raw;
	for (size_t i = 0; i < pb->n_include; i++) {
		int rv = wt_layout_add_include(l, pb->include[i], err);
		if (rv != WT_OK) {
			wt_layout_clear(l);
			return rv;
		}
	}
	int rv = wt_layout_check(l, err);
	if (rv != WT_OK)
		wt_layout_clear(l);
	return rv;
}
