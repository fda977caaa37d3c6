/*
 * bulk.c — encode/decode the bulk stream headers (format table in bulk.h).
 */
#include <string.h>

#include "proto/bulk.h"

static void put64(uint8_t *p, uint64_t v)
{
	for (int i = 7; i >= 0; i--, v >>= 8)
		p[i] = (uint8_t)v;
}

static void put32(uint8_t *p, uint32_t v)
{
	for (int i = 3; i >= 0; i--, v >>= 8)
		p[i] = (uint8_t)v;
}

static uint64_t get64(const uint8_t *p)
{
	uint64_t v = 0;
	for (int i = 0; i < 8; i++)
		v = v << 8 | p[i];
	return v;
}

static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

void bulk_open_encode(const uint8_t ticket[BULK_TICKET_BYTES], uint8_t *out)
{
	memcpy(out, BULK_MAGIC, 8);
	memcpy(out + 8, ticket, BULK_TICKET_BYTES);
}

int bulk_open_check(const uint8_t *in, const uint8_t ticket[BULK_TICKET_BYTES], wt_errbuf *err)
{
	if (memcmp(in, BULK_MAGIC, 8) != 0)
		return wt_seterr(err, WT_EPROTO,
		                 "bulk stream: the first 8 bytes are not \"" BULK_MAGIC
		                 "\" (not a weightd bulk client, or another version)");
	/* in constant time, as weightd/auth.c compares tokens (CRYPTO_memcmp):
	 * the ticket is as good as the token, and memcmp's early exit tells a
	 * peer how many leading bytes it guessed. A loop, not OpenSSL's, so the
	 * client library that shares this file needs no libcrypto. */
	volatile uint8_t diff = 0;
	for (size_t i = 0; i < BULK_TICKET_BYTES; i++)
		diff |= (uint8_t)(in[8 + i] ^ ticket[i]);
	if (diff != 0)
		return wt_seterr(err, WT_EPERM,
		                 "bulk stream: unknown ticket; use the stream_ticket of a Hello "
		                 "answered by this server instance");
	return WT_OK;
}

void bulk_req_encode(const bulk_req *r, uint8_t out[BULK_REQ_BYTES])
{
	put64(out, r->id);
	memcpy(out + 8, r->hash, 16);
	put64(out + 24, r->offset);
	put64(out + 32, r->nbytes);
	put32(out + 40, r->flags);
	put32(out + 44, r->shard_id_len);
}

uint64_t bulk_req_live_index(const bulk_req *r)
{
	return get64(r->hash);
}

void bulk_req_set_live(bulk_req *r, uint64_t index)
{
	memset(r->hash, 0, sizeof(r->hash));
	put64(r->hash, index);
	r->flags |= BULK_F_LIVE;
	r->offset = 0;
	r->nbytes = 0;
}

int bulk_req_decode(const uint8_t in[BULK_REQ_BYTES], bulk_req *r, wt_errbuf *err)
{
	bulk_req q;
	q.id = get64(in);
	memcpy(q.hash, in + 8, 16);
	q.offset = get64(in + 24);
	q.nbytes = get64(in + 32);
	q.flags = get32(in + 40);
	q.shard_id_len = get32(in + 44);
	static const uint8_t zero8[8];
	if ((q.flags & ~BULK_F_LIVE) != 0)
		return wt_seterr(err, WT_EPROTO,
		                 "bulk request %llu: flags 0x%x, but only 0x%x (live) is defined",
		                 (unsigned long long)q.id, q.flags, BULK_F_LIVE);
	if ((q.flags & BULK_F_LIVE) &&
	    (q.offset != 0 || q.nbytes != 0 || memcmp(q.hash + 8, zero8, 8) != 0))
		return wt_seterr(err, WT_EPROTO,
		                 "bulk request %llu: a live request names a whole chunk by index "
		                 "(offset and nbytes 0, hash[8..16) zero)",
		                 (unsigned long long)q.id);
	if (q.shard_id_len == 0 || q.shard_id_len > BULK_MAX_SHARD_ID)
		return wt_seterr(
		    err, WT_EPROTO,
		    "bulk request %llu: shard_id_len %u, must be 1..%u (the manifest's "
		    "shard_id)",
		    (unsigned long long)q.id, q.shard_id_len, BULK_MAX_SHARD_ID);
	*r = q;
	return WT_OK;
}

void bulk_reply_encode(const bulk_reply *r, uint8_t out[BULK_REPLY_BYTES])
{
	put64(out, r->id);
	put32(out + 8, r->code);
	put32(out + 12, r->msg_len);
	put64(out + 16, r->nbytes);
	memcpy(out + 24, r->chunk_hash, 16);
	memcpy(out + 40, r->tensor_hash, 16);
	put64(out + 56, r->offset);
}

int bulk_reply_decode(const uint8_t in[BULK_REPLY_BYTES], uint64_t max_nbytes, bulk_reply *r,
                      wt_errbuf *err)
{
	bulk_reply p;
	p.id = get64(in);
	p.code = get32(in + 8);
	p.msg_len = get32(in + 12);
	p.nbytes = get64(in + 16);
	memcpy(p.chunk_hash, in + 24, 16);
	memcpy(p.tensor_hash, in + 40, 16);
	p.offset = get64(in + 56);
	if (p.msg_len > BULK_MAX_MSG)
		return wt_seterr(err, WT_EPROTO,
		                 "bulk reply %llu: msg_len %u over the %u-byte limit",
		                 (unsigned long long)p.id, p.msg_len, BULK_MAX_MSG);
	if (p.code == WT_OK && p.msg_len != 0) /* the text would be taken for chunk bytes */
		return wt_seterr(err, WT_EPROTO,
		                 "bulk reply %llu: ok with msg_len %u (error text only comes with "
		                 "an error code)",
		                 (unsigned long long)p.id, p.msg_len);
	if (p.code != WT_OK && p.nbytes != 0)
		return wt_seterr(
		    err, WT_EPROTO,
		    "bulk reply %llu: error %u with %llu chunk bytes (an error carries "
		    "none)",
		    (unsigned long long)p.id, p.code, (unsigned long long)p.nbytes);
	if (p.nbytes > max_nbytes)
		return wt_seterr(err, WT_EPROTO,
		                 "bulk reply %llu: %llu chunk bytes, more than the %llu asked for",
		                 (unsigned long long)p.id, (unsigned long long)p.nbytes,
		                 (unsigned long long)max_nbytes);
	*r = p;
	return WT_OK;
}
