/*
 * wire.h — framing of weightd messages (see proto/weights.proto).
 *
 * Every nng message body is:
 *     [u32 big-endian header_len][protobuf Request or Reply: header_len bytes][tail]
 * The tail is empty except after a ChunkReply, where it holds the raw chunk
 * bytes (ChunkReply.nbytes of them). This module only frames and parses; it
 * knows nothing about sockets (callers put the bytes into nng messages).
 */
#ifndef WT_PROTO_WIRE_H
#define WT_PROTO_WIRE_H

#include <stddef.h>
#include <stdint.h>

#include "proto/weights.pb-c.h"
#include "weights/error.h"
#include "weights/layout.h"

#define WIRE_PREFIX_BYTES 4
/* Ceiling on a protobuf header (manifests of large models included). */
#define WIRE_MAX_HEADER_BYTES (64u * 1024u * 1024u)

/* Bytes needed to frame msg (prefix + packed header), without the tail. */
size_t wire_framed_size(const ProtobufCMessage *msg);

/* Write prefix + packed msg into buf (capacity cap >= wire_framed_size(msg)).
 * Returns bytes written, or 0 if cap is too small. */
size_t wire_frame(const ProtobufCMessage *msg, uint8_t *buf, size_t cap);

/*
 * Parse a framed Request. Unknown fields are ignored by protobuf; a short buffer,
 * a header_len past the end or over max_header, or bytes protobuf cannot parse
 * -> WT_EPROTO with a message; a non-empty tail on a request -> WT_EPROTO.
 * A string field (at any depth) with a NUL byte or invalid UTF-8 -> WT_EINVAL
 * (wire_check_strings; the bytes are not copied into the message).
 * On success *out must be freed with wire_request_free().
 */
/* Check every `string` field of the packed message buf[0..len) of type d
 * (nested messages too) against its wire length: strict UTF-8, no NUL byte
 * (protobuf-c truncates at a NUL and does not check UTF-8). WT_EINVAL naming
 * the field, never echoing its bytes; WT_EPROTO for a malformed encoding. */
int wire_check_strings(const ProtobufCMessageDescriptor *d, const uint8_t *buf, size_t len,
                       wt_errbuf *err);
/* The same for a reply (WT_EPROTO), and also: what protobuf-c would allocate
 * to unpack it, estimated field by field (a nested message's struct, a
 * string's copy), must stay under WIRE_UNPACK_RATIO times its bytes plus
 * WIRE_UNPACK_SLACK (an empty repeated entry is 2 bytes on the wire and over
 * 100 unpacked: a hostile server could make a client allocate gigabytes). */
#define WIRE_UNPACK_RATIO 8
#define WIRE_UNPACK_SLACK (1u << 20)
int wire_check_reply(const ProtobufCMessageDescriptor *d, const uint8_t *buf, size_t len,
                     wt_errbuf *err);

int wire_parse_request(const uint8_t *buf, size_t len, size_t max_header, Weights__Request **out,
                       wt_errbuf *err);
void wire_request_free(Weights__Request *r); /* NULL-safe */

/*
 * Parse a framed Reply; *tail / *tail_len point into buf (borrowed) at the bytes
 * after the header. For a ChunkReply, tail_len must equal chunk->nbytes, else
 * WT_EPROTO. For other replies the tail must be empty.
 * On success *out must be freed with wire_reply_free().
 */
int wire_parse_reply(const uint8_t *buf, size_t len, size_t max_header, Weights__Reply **out,
                     const uint8_t **tail, size_t *tail_len, wt_errbuf *err);
void wire_reply_free(Weights__Reply *r); /* NULL-safe */

/* Layout <-> protobuf Layout. wire_layout_to_pb fills pb (initialised by the
 * caller with WEIGHTS__LAYOUT__INIT) and borrows the exclude strings from l;
 * wire_layout_from_pb validates codes and copies (l must be initialised). */
void wire_layout_to_pb(const wt_layout *l, Weights__Layout *pb, char **exclude_storage);
int wire_layout_from_pb(const Weights__Layout *pb, wt_layout *l, wt_errbuf *err);

#endif
