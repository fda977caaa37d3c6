/*
 * record.c — the cached-manifest record: the packed weights.Manifest a shard
 * is committed with. Production (produce.c) and peer fill (peer.c) both end
 * here, so a peer-filled shard's record is byte for byte the one this node
 * would have produced: format version, model name, and each tensor's chunk
 * list as this node cut and stored it (offsets consecutive from 0).
 */
#include <stdlib.h>
#include <string.h>

#include "weightd/server_int.h"
#include "weights/weights.h"

uint8_t *wd_record_pack(Weights__Manifest *mf, const char *model, wd_chunks_fn chunks_of, void *ctx,
                        size_t *len)
{
	size_t n = mf->n_tensors, total = 0;
	for (size_t i = 0; i < n; i++) {
		size_t nc;
		chunks_of(ctx, i, &nc);
		total += nc;
	}
	Weights__ChunkRef *cref = calloc(total ? total : 1, sizeof(*cref));
	Weights__ChunkRef **cptr = calloc(total ? total : 1, sizeof(*cptr));
	uint8_t(*ch)[16] = calloc(total ? total : 1, 16);
	Weights__ChunkRef ***saved = calloc(n ? n : 1, sizeof(*saved));
	size_t *saved_n = calloc(n ? n : 1, sizeof(*saved_n));
	uint8_t *buf = NULL;
	if (!cref || !cptr || !ch || !saved || !saved_n)
		goto out;
	size_t j = 0;
	for (size_t i = 0; i < n; i++) {
		Weights__TensorEntry *te = mf->tensors[i];
		size_t nc;
		const wd_chunk *c = chunks_of(ctx, i, &nc);
		saved[i] = te->chunks;
		saved_n[i] = te->n_chunks;
		te->chunks = &cptr[j];
		te->n_chunks = nc;
		uint64_t off = 0;
		for (size_t k = 0; k < nc; k++, j++) {
			Weights__ChunkRef init = WEIGHTS__CHUNK_REF__INIT;
			cref[j] = init;
			if (!mf->live) {
				common_hash128_to_bytes(c[k].hash, ch[j]);
				cref[j].hash.data = ch[j];
				cref[j].hash.len = 16;
			}
			cref[j].offset = off;
			cref[j].nbytes = c[k].nbytes;
			off += c[k].nbytes;
			cptr[j] = &cref[j];
		}
	}
	char *saved_model = mf->model;
	uint32_t saved_version = mf->format_version;
	mf->model = (char *)model;
	mf->format_version = WT_FORMAT_VERSION;
	*len = weights__manifest__get_packed_size(mf);
	if ((buf = malloc(*len ? *len : 1)) != NULL)
		weights__manifest__pack(mf, buf);
	mf->model = saved_model;
	mf->format_version = saved_version;
	for (size_t i = 0; i < n; i++) {
		mf->tensors[i]->chunks = saved[i];
		mf->tensors[i]->n_chunks = saved_n[i];
	}
out:
	free(cref);
	free(cptr);
	free(ch);
	free(saved);
	free(saved_n);
	return buf;
}

int wd_record_commit(cache_writer *w, Weights__Manifest *mf, const char *model,
                     wd_chunks_fn chunks_of, void *ctx, wt_errbuf *err)
{
	size_t len = 0;
	uint8_t *buf = wd_record_pack(mf, model, chunks_of, ctx, &len);
	if (buf == NULL) {
		cache_abort_shard(w);
		return wt_seterr(err, WT_ENOMEM, "out of memory building the manifest");
	}
	int rv = cache_commit_shard(w, buf, len, err);
	free(buf);
	return rv;
}
