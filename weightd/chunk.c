/*
 * chunk.c — Chunk requests: the bytes of one chunk (or a sub-range, for
 * resume) straight from the cache, which re-hashes the whole chunk on every
 * read. The reply is one nng message: [u32 len][Reply{ChunkReply}][bytes];
 * the bytes are copied once, from RocksDB's pinned value into the message.
 */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "weightd/weightd_int.h"

nng_msg *wd_chunk_reply(wd_server *s, uint64_t id, const Weights__ChunkRequest *c)
{
	char msg[300];
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
	if (!cache_shard_has_chunk(s->cache, c->shard_id.data, c->shard_id.len, h))
		return wd_reply_error(id, WT_ENOTFOUND,
		                      "chunk request: that chunk hash is not part of the shard; "
		                      "use a hash from this shard's manifest");
	cache_view *v = NULL;
	wt_errbuf err;
	int rv = cache_chunk_view(s->cache, h, &v, &err);
	if (rv != WT_OK) {
		if (rv == WT_ECORRUPT)
			WT_LOG(WT_LOG_WARNING, "chunk request %llu: %s", (unsigned long long)id,
			       err.msg);
		return wd_reply_error(id, rv, err.msg);
	}
	size_t len;
	const uint8_t *data = cache_view_data(v, &len);
	uint64_t off = c->offset, n = c->nbytes, end;
	if (off > len || (n == 0 && (n = len - off) == 0 && len != 0) ||
	    !wt_add_u64(off, n, &end) || end > len) {
		snprintf(msg, sizeof(msg),
		         "chunk request: range offset %llu + %llu bytes is past the chunk's %zu "
		         "bytes",
		         (unsigned long long)c->offset, (unsigned long long)c->nbytes, len);
		cache_view_release(v);
		return wd_reply_error(id, WT_EINVAL, msg);
	}
	Weights__ChunkReply cr = WEIGHTS__CHUNK_REPLY__INIT;
	cr.hash = c->hash;
	cr.offset = off;
	cr.nbytes = n;
	Weights__Reply rp = WEIGHTS__REPLY__INIT;
	rp.id = id;
	rp.body_case = WEIGHTS__REPLY__BODY_CHUNK;
	rp.chunk = &cr;
	size_t hdr = wire_framed_size(&rp.base);
	nng_msg *m = NULL;
	if (nng_msg_alloc(&m, hdr + (size_t)n) != 0) {
		cache_view_release(v);
		return wd_reply_error(id, WT_ENOMEM, "out of memory for a chunk reply");
	}
	uint8_t *body = nng_msg_body(m);
	wire_frame(&rp.base, body, hdr);
	memcpy(body + hdr, data + off, (size_t)n);
	cache_view_release(v);
	uint64_t seq = atomic_fetch_add(&s->chunk_replies, 1) + 1;
	atomic_fetch_add(&s->chunk_bytes_out, n);
	if (s->cfg->test_corrupt_chunk != 0 && seq == s->cfg->test_corrupt_chunk && n > 0) {
		body[hdr + n / 2] ^= 0x5a; /* test hook: after the cache verified the bytes */
		WT_LOG(WT_LOG_NOTICE, "test hook: corrupted chunk reply #%llu (request %llu)",
		       (unsigned long long)seq, (unsigned long long)id);
	}
	return m;
}
