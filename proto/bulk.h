/*
 * bulk.h — the bulk data plane's binary headers (docs/architecture.md 4.2,
 * proto/weights.proto "Bulk stream"). Chunk bytes travel on an nng_stream
 * (tcp/ipc/tls byte stream) negotiated in Hello; these fixed-size headers
 * frame them. Pure functions: no sockets, no allocation.
 *
 * All integers big-endian. FROZEN: sizes, offsets and the magic; a change is
 * a new magic ("WTBULK02").
 *
 *   open     (24 bytes, client -> server, once)
 *     0  u8[8]  magic "WTBULK01"
 *     8  u8[16] ticket (HelloReply.stream_ticket of a Hello on the control channel)
 *
 *   request  (48 bytes + shard_id_len, client -> server, pipelined)
 *     0  u64    id            request id (64-bit, never reused)
 *     8  u8[16] hash          XXH3-128 of the chunk, from the manifest
 *    24  u64    offset        byte range within the chunk
 *    32  u64    nbytes        0 = to the end of the chunk
 *    40  u32    flags         0, or BULK_F_LIVE (1): a cut-through request: the chunk
 *                            is named by its index in the live manifest, carried in
 *                            hash[0..8) (u64), hash[8..16) zero; offset and nbytes 0
 *                            (the whole chunk). The server waits until it is
 *                            produced; only to a server whose HelloReply set
 *                            stream_live. Other bits: reserved, must be 0.
 *    44  u32    shard_id_len  1..BULK_MAX_SHARD_ID
 *    48  u8[]   shard_id
 *
 *   reply    (64 bytes + msg_len + nbytes, server -> client, in request order)
 *     0  u64    id            echoes the request
 *     8  u32    code          wt_err; 0 = ok
 *    12  u32    msg_len       error text bytes that follow (0 when ok), <= BULK_MAX_MSG;
 *                            UTF-8 without NUL (a client refuses other text, as it
 *                            does a message reply's strings: proto/wire_check.c)
 *    16  u64    nbytes        chunk bytes that follow the text (0 on error)
 *    24  u8[16] chunk_hash    XXH3-128 of the whole chunk (learned by a live request)
 *    40  u8[16] tensor_hash   zero when none; a live reply on a tensor's last chunk
 *                            carries the tensor's XXH3-128
 *    56  u64    offset        echoes the range start
 *    64  msg, then bytes
 */
#ifndef WT_PROTO_BULK_H
#define WT_PROTO_BULK_H

#include <stddef.h>
#include <stdint.h>

#include "weights/error.h"

#define BULK_MAGIC        "WTBULK01"
#define BULK_OPEN_BYTES   24u
#define BULK_TICKET_BYTES 16u
#define BULK_REQ_BYTES    48u  /* without the shard id */
#define BULK_REPLY_BYTES  64u  /* without the message and the bytes */
#define BULK_MAX_SHARD_ID 256u /* as CACHE_SHARD_ID_MAX / CLIENT_MAX_SHARD_ID */
#define BULK_MAX_MSG      1024u
#define BULK_F_LIVE       1u /* request flags: a cut-through request by index */

typedef struct bulk_req {
	uint64_t id;
	uint8_t hash[16];
	uint64_t offset;
	uint64_t nbytes;
	uint32_t flags;
	uint32_t shard_id_len; /* the shard id bytes follow the header on the stream */
} bulk_req;

typedef struct bulk_reply {
	uint64_t id;
	uint32_t code;
	uint32_t msg_len;
	uint64_t nbytes;
	uint8_t chunk_hash[16];
	uint8_t tensor_hash[16];
	uint64_t offset;
} bulk_reply;

/* out[BULK_OPEN_BYTES] = magic + ticket. */
void bulk_open_encode(const uint8_t ticket[BULK_TICKET_BYTES], uint8_t *out);

/* Check an open header against the expected ticket: WT_EPROTO (not a bulk
 * stream, or another version) or WT_EPERM (wrong ticket), with a message. */
int bulk_open_check(const uint8_t *in, const uint8_t ticket[BULK_TICKET_BYTES], wt_errbuf *err);

void bulk_req_encode(const bulk_req *r, uint8_t out[BULK_REQ_BYTES]);

/* The chunk index of a BULK_F_LIVE request (hash[0..8)), and setting it. */
uint64_t bulk_req_live_index(const bulk_req *r);
void bulk_req_set_live(bulk_req *r, uint64_t index);

/* Decode and validate (flags 0 or BULK_F_LIVE with its fields as above,
 * shard_id_len 1..BULK_MAX_SHARD_ID):
 * WT_EPROTO with a message naming the field. *r is written only on success. */
int bulk_req_decode(const uint8_t in[BULK_REQ_BYTES], bulk_req *r, wt_errbuf *err);

void bulk_reply_encode(const bulk_reply *r, uint8_t out[BULK_REPLY_BYTES]);

/* Decode and validate (msg_len <= BULK_MAX_MSG and 0 when ok, an error carries no bytes,
 * nbytes <= max_nbytes): WT_EPROTO naming the field. */
int bulk_reply_decode(const uint8_t in[BULK_REPLY_BYTES], uint64_t max_nbytes, bulk_reply *r,
                      wt_errbuf *err);

#endif
