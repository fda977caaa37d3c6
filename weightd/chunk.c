/*
 * chunk.c — Chunk requests: the bytes of one chunk (or a sub-range, for
 * resume) straight from the cache, which re-hashes the whole chunk on every
 * read. The reply is one nng message: [u32 len][Reply{ChunkReply}][bytes];
 * a whole chunk is copied once, from RocksDB's pinned value (the RAM blob cache
 * on a hit) into the message, and hashed during that copy. A chunk of a
 * layout being produced may come from its write-behind buffer instead
 * (wback.c): RAM this process filled and hashed itself, not yet in the cache.
 */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "weightd/server_int.h"

nng_msg *wd_chunk_reply(wd_server *s, uint64_t id, const Weights__ChunkRequest *c)
{
	if (c->shard_id.len == 0 || c->shard_id.len > CACHE_SHARD_ID_MAX)
		return wd_reply_error(id, WT_EPROTO,
		                      "chunk request: shard_id must be the manifest's shard_id");
	if (c->hash.len != 16)
		return wd_reply_error(id, WT_EPROTO,
		                      "chunk request: hash must be the 16-byte XXH3-128 of a chunk "
		                      "from the manifest");
	wt_hash128 h = common_hash128_from_bytes(c->hash.data);
	if (!cache_has_shard(s->cache, c->shard_id.data, c->shard_id.len))
		return wd_reply_error(id, WT_ENOTFOUND,
		                      "shard is not in the cache (evicted, corrupted or of an old "
		                      "revision); request the manifest again");
	uint64_t clen = 0;
	if (!cache_shard_has_chunk(s->cache, c->shard_id.data, c->shard_id.len, h, &clen))
		return wd_reply_error(id, WT_ENOTFOUND,
		                      "chunk request: that chunk hash is not part of the shard; "
		                      "use a hash from this shard's manifest");
	return wd_chunk_send(s, id, h, clen, c->offset, c->nbytes, NULL, NULL);
}

nng_msg *wd_chunk_send(wd_server *s, uint64_t id, wt_hash128 h, uint64_t clen, uint64_t off,
                       uint64_t n, const uint8_t *tensor_hash, const uint8_t *mem)
{
	char msg[300];
	uint64_t end;
	uint64_t req_off = off, req_n = n;
	if (off > clen || (n == 0 && (n = clen - off) == 0 && clen != 0) ||
	    !wt_add_u64(off, n, &end) || end > clen) {
		snprintf(msg, sizeof(msg),
		         "chunk request: range offset %llu + %llu bytes is past the chunk's %llu "
		         "bytes",
		         (unsigned long long)req_off, (unsigned long long)req_n,
		         (unsigned long long)clen);
		return wd_reply_error(id, WT_EINVAL, msg);
	}
	uint8_t hb[16];
	common_hash128_to_bytes(h, hb);
	Weights__ChunkReply cr = WEIGHTS__CHUNK_REPLY__INIT;
	cr.hash.data = hb;
	cr.hash.len = 16;
	if (tensor_hash != NULL) {
		cr.tensor_hash.data = (uint8_t *)tensor_hash;
		cr.tensor_hash.len = 16;
	}
	cr.offset = off;
	cr.nbytes = n;
	Weights__Reply rp = WEIGHTS__REPLY__INIT;
	rp.id = id;
	rp.body_case = WEIGHTS__REPLY__BODY_CHUNK;
	rp.chunk = &cr;
	size_t hdr = wire_framed_size(&rp.base);
	nng_msg *m = NULL;
	if (nng_msg_alloc(&m, hdr + (size_t)n) != 0)
		return wd_reply_error(id, WT_ENOMEM, "out of memory for a chunk reply");
	uint8_t *body = nng_msg_body(m);
	wire_frame(&rp.base, body, hdr);
	wt_errbuf err;
	int rv;
	size_t got = 0;
	if (mem != NULL) {
		/* A write-behind buffer: hashed by this process as it was filled. */
		memcpy(body + hdr, mem + off, (size_t)n);
		rv = WT_OK;
	} else if (n == clen) {
		/* The whole chunk: copied and hashed in one pass straight into the reply. */
		rv = cache_read_chunk(s->cache, h, body + hdr, (size_t)n, &got, &err);
		if (rv == WT_OK && got != n)
			rv = wt_seterr(&err, WT_ECORRUPT,
			               "chunk request %llu: the cache holds %zu bytes for a "
			               "%llu-byte chunk",
			               (unsigned long long)id, got, (unsigned long long)n);
	} else {
		/* A range (resume): the whole chunk is verified, the range is sent. */
		cache_view *v = NULL;
		rv = cache_chunk_view(s->cache, h, &v, &err);
		const uint8_t *data = rv == WT_OK ? cache_view_data(v, &got) : NULL;
		if (rv == WT_OK && got != clen)
			rv = wt_seterr(&err, WT_ECORRUPT,
			               "chunk request %llu: the cache holds %zu bytes for a "
			               "%llu-byte chunk",
			               (unsigned long long)id, got, (unsigned long long)clen);
		if (rv == WT_OK)
			memcpy(body + hdr, data + off, (size_t)n);
		cache_view_release(v);
	}
	if (rv != WT_OK) {
		nng_msg_free(m);
		if (rv == WT_ECORRUPT)
			WT_LOG(WT_LOG_WARNING, "chunk request %llu: %s", (unsigned long long)id,
			       err.msg);
		return wd_reply_error(id, rv, err.msg);
	}
	uint64_t seq = atomic_fetch_add(&s->chunk_replies, 1) + 1;
	atomic_fetch_add(&s->chunk_bytes_out, n);
	const wd_faults *f = atomic_load(&s->faults);
	if (f != NULL && f->corrupt_chunk == seq && n > 0) {
		body[hdr + n / 2] ^= 0x5a; /* after the cache verified the bytes */
		WT_LOG(WT_LOG_NOTICE, "fault injection: corrupted chunk reply #%llu (request %llu)",
		       (unsigned long long)seq, (unsigned long long)id);
	}
	return m;
}
