/*
 * wire_check.c — refuse a request whose string fields are not clean text.
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

static int check_msg(const ProtobufCMessageDescriptor *d, const uint8_t *p, const uint8_t *end,
                     int depth, wt_errbuf *err)
{
	if (depth > WIRE_CHECK_DEPTH)
		return wt_seterr(err, WT_EPROTO, "request: messages nested deeper than %d",
		                 WIRE_CHECK_DEPTH);
	while (p < end) {
		uint64_t tag, len;
		if (!get_varint(&p, end, &tag))
			return wt_seterr(err, WT_EPROTO, "request: truncated field tag in %s",
			                 d->short_name);
		unsigned wt = (unsigned)(tag & 7);
		uint64_t skip = 0;
		switch (wt) {
		case 0:
			if (!get_varint(&p, end, &len))
				return wt_seterr(err, WT_EPROTO, "request: truncated varint in %s",
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
				return wt_seterr(err, WT_EPROTO, "request: truncated length in %s",
				                 d->short_name);
			break;
		default:
			return wt_seterr(err, WT_EPROTO,
			                 "request: wire type %u in %s is not supported", wt,
			                 d->short_name);
		}
		if (skip > (uint64_t)(end - p))
			return wt_seterr(err, WT_EPROTO, "request: field past the end of %s",
			                 d->short_name);
		const ProtobufCFieldDescriptor *f =
		    tag >> 3 <= UINT32_MAX
		        ? protobuf_c_message_descriptor_get_field(d, (unsigned)(tag >> 3))
		        : NULL;
		if (wt == 2 && f != NULL && f->type == PROTOBUF_C_TYPE_STRING &&
		    !common_utf8_valid(p, (size_t)skip, false))
			return wt_seterr(
			    err, WT_EINVAL,
			    "request: %s.%s holds a NUL byte or invalid UTF-8 (%llu bytes, "
			    "not shown); send UTF-8 text without NUL",
			    d->short_name, f->name, (unsigned long long)skip);
		if (wt == 2 && f != NULL && f->type == PROTOBUF_C_TYPE_MESSAGE) {
			int rv = check_msg(f->descriptor, p, p + skip, depth + 1, err);
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
	return check_msg(d, buf, buf + len, 0, err);
}
