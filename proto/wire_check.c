/*
 * wire_check.c — refuse a message whose string fields are not clean text, or
 * (replies) whose unpacked form would take far more memory than its bytes.
 *
 * protobuf-c 1.4.1 neither checks UTF-8 nor keeps a string's length: a
 * `string` field is unpacked into a NUL-terminated C string, so "llama\0evil"
 * arrives as "llama" and invalid UTF-8 arrives unchanged. This walks the raw
 * protobuf bytes once more, guided by the message descriptors, and checks
 * every `string` field (in every nested message) against its wire length:
 *
 *     tag (varint: field << 3 | wire type)
 *       0 varint | 1 fixed64 | 5 fixed32   skipped
 *       2 length-delimited                 string: strict UTF-8, no NUL
 *                                          message: checked recursively
 *                                          bytes / packed / unknown: skipped
 *       3, 4 (groups), 6, 7                refused (protobuf-c refuses them too)
 */
#include <stdio.h>

#include "common/common.h"
#include "proto/wire.h"

#define WIRE_CHECK_DEPTH 16

static bool get_varint(const uint8_t **p, const uint8_t *end, uint64_t *out)
{
	uint64_t v = 0;
	for (unsigned shift = 0; shift < 64 && *p < end; shift += 7) {
		uint8_t b = *(*p)++;
		v |= (uint64_t)(b & 0x7f) << shift;
		if ((b & 0x80) == 0) {
			*out = v;
			return true;
		}
	}
	return false;
}

/* What protobuf-c allocates for one occurrence of field f, of wire length n
 * when length-delimited (an estimate with malloc's overhead): a message's
 * struct, a string's or bytes' copy, and a repeated field's array slot; a
 * scalar lives in its message's struct unless repeated (packed: at most one
 * 8-byte element per wire byte). */
static uint64_t field_cost(const ProtobufCFieldDescriptor *f, unsigned wt, uint64_t n)
{
	bool rep = f->label == PROTOBUF_C_LABEL_REPEATED;
	switch (f->type) {
	case PROTOBUF_C_TYPE_MESSAGE:
		return (rep ? sizeof(void *) : 0) +
		       ((const ProtobufCMessageDescriptor *)f->descriptor)->sizeof_message + 16;
	case PROTOBUF_C_TYPE_STRING:
		return (rep ? sizeof(char *) : 0) + n + 17;
	case PROTOBUF_C_TYPE_BYTES:
		return (rep ? sizeof(ProtobufCBinaryData) : 0) + n + 16;
	default:
		return !rep ? 0 : wt == 2 ? 8 * n : 8;
	}
}

static int check_msg(const ProtobufCMessageDescriptor *d, const uint8_t *p, const uint8_t *end,
                     int depth, const char *what, uint64_t *cost, wt_errbuf *err)
{
	if (depth > WIRE_CHECK_DEPTH)
		return wt_seterr(err, WT_EPROTO, "%s: messages nested deeper than %d", what,
		                 WIRE_CHECK_DEPTH);
	while (p < end) {
		uint64_t tag, len;
		if (!get_varint(&p, end, &tag))
			return wt_seterr(err, WT_EPROTO, "%s: truncated field tag in %s", what,
			                 d->short_name);
		unsigned wt = (unsigned)(tag & 7);
		uint64_t skip = 0;
		switch (wt) {
		case 0:
			if (!get_varint(&p, end, &len))
				return wt_seterr(err, WT_EPROTO, "%s: truncated varint in %s", what,
				                 d->short_name);
			continue;
		case 1:
			skip = 8;
			break;
		case 5:
			skip = 4;
			break;
		case 2:
			if (!get_varint(&p, end, &skip))
				return wt_seterr(err, WT_EPROTO, "%s: truncated length in %s", what,
				                 d->short_name);
			break;
		default:
			return wt_seterr(err, WT_EPROTO, "%s: wire type %u in %s is not supported",
			                 what, wt, d->short_name);
		}
		if (skip > (uint64_t)(end - p))
			return wt_seterr(err, WT_EPROTO, "%s: field past the end of %s", what,
			                 d->short_name);
		const ProtobufCFieldDescriptor *f =
		    tag >> 3 <= UINT32_MAX
		        ? protobuf_c_message_descriptor_get_field(d, (unsigned)(tag >> 3))
		        : NULL;
		if (wt == 2 && f != NULL && f->type == PROTOBUF_C_TYPE_STRING &&
		    !common_utf8_valid(p, (size_t)skip, false))
			return wt_seterr(err, WT_EINVAL,
			                 "%s: %s.%s holds a NUL byte or invalid UTF-8 (%llu bytes, "
			                 "not shown); send UTF-8 text without NUL",
			                 what, d->short_name, f->name, (unsigned long long)skip);
		if (f != NULL)
			*cost += field_cost(f, wt, wt == 2 ? skip : 0);
		if (wt == 2 && f != NULL && f->type == PROTOBUF_C_TYPE_MESSAGE) {
			int rv = check_msg(f->descriptor, p, p + skip, depth + 1, what, cost, err);
			if (rv != WT_OK)
				return rv;
		}
		p += skip;
	}
	return WT_OK;
}

int wire_check_strings(const ProtobufCMessageDescriptor *d, const uint8_t *buf, size_t len,
                       wt_errbuf *err)
{
	uint64_t cost = 0;
	return check_msg(d, buf, buf + len, 0, "request", &cost, err);
}

int wire_check_reply(const ProtobufCMessageDescriptor *d, const uint8_t *buf, size_t len,
                     wt_errbuf *err)
{
	uint64_t cost = d->sizeof_message;
	int rv = check_msg(d, buf, buf + len, 0, "reply", &cost, err);
	if (rv == WT_EINVAL) { /* bad text from the server: a protocol error, not ours */
		rv = WT_EPROTO;
		if (err != NULL)
			err->code = WT_EPROTO;
	}
	uint64_t budget = WIRE_UNPACK_RATIO * (uint64_t)len + WIRE_UNPACK_SLACK;
	if (rv == WT_OK && cost > budget)
		rv = wt_seterr(err, WT_EPROTO,
		               "reply: %zu header bytes would unpack into about %llu bytes (over "
		               "%d times their size): empty or repeated entries meant to exhaust "
		               "memory; refused before unpacking",
		               len, (unsigned long long)cost, WIRE_UNPACK_RATIO);
	return rv;
}
