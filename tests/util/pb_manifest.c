/* pb_manifest.c — see pb_manifest.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client/client.h"
#include "common/common.h"
#include "tests/util/pb_manifest.h"

static void *pbm_calloc(size_t n, size_t size)
{
	void *p = calloc(n > 0 ? n : 1, size);
	if (p == NULL) {
		fprintf(stderr, "pb_manifest: out of memory\n");
		abort();
	}
	return p;
}

/* Tensor t's entry and its chunks from b->cr[*nc] on; advances *nc. */
static void pbm_tensor_fill(pbm *b, size_t i, const pbm_tensor *t, uint64_t chunk_nbytes, bool live,
                            size_t *nc)
{
	Weights__TensorEntry *te = &b->te[i];
	weights__tensor_entry__init(te);
	b->tp[i] = te;
	te->name = (char *)t->name;
	te->dtype = t->dtype;
	b->shape[i] = (int64_t)(t->nbytes / wt_dtype_size(t->dtype));
	te->shape = &b->shape[i];
	te->n_shape = 1;
	te->nbytes = t->nbytes;
	common_hash128_to_bytes(common_hash128(t->data, t->nbytes), b->th[i]);
	te->hash.data = b->th[i];
	te->hash.len = live ? 0 : 16;
	te->chunks = &b->cp[*nc];
	for (uint64_t off = 0; off < t->nbytes; off += chunk_nbytes, (*nc)++) {
		Weights__ChunkRef *cr = &b->cr[*nc];
		weights__chunk_ref__init(cr);
		b->cp[*nc] = cr;
		cr->offset = off;
		cr->nbytes = t->nbytes - off < chunk_nbytes ? t->nbytes - off : chunk_nbytes;
		common_hash128_to_bytes(common_hash128(t->data + off, cr->nbytes), b->ch[*nc]);
		cr->hash.data = b->ch[*nc];
		cr->hash.len = live ? 0 : 16;
		te->n_chunks++;
	}
}

void pbm_build(pbm *b, const pbm_tensor *t, size_t n, uint64_t chunk_nbytes, bool live)
{
	memset(b, 0, sizeof(*b));
	for (size_t i = 0; i < n; i++)
		b->n_chunks += (size_t)((t[i].nbytes + chunk_nbytes - 1) / chunk_nbytes);
	b->te = pbm_calloc(n, sizeof(*b->te));
	b->tp = pbm_calloc(n, sizeof(*b->tp));
	b->shape = pbm_calloc(n, sizeof(*b->shape));
	b->th = pbm_calloc(n, sizeof(*b->th));
	b->cr = pbm_calloc(b->n_chunks, sizeof(*b->cr));
	b->cp = pbm_calloc(b->n_chunks, sizeof(*b->cp));
	b->ch = pbm_calloc(b->n_chunks, sizeof(*b->ch));
	weights__manifest__init(&b->m);
	b->m.format_version = WT_FORMAT_VERSION;
	b->m.model = "m";
	b->m.revision = "r1";
	b->m.layout_text = "tp=1";
	b->m.shard_id.data = (uint8_t *)"sid";
	b->m.shard_id.len = 3;
	b->m.live = live;
	size_t nc = 0;
	for (size_t i = 0; i < n; i++) {
		pbm_tensor_fill(b, i, &t[i], chunk_nbytes, live, &nc);
		b->m.total_bytes += t[i].nbytes;
	}
	b->m.tensors = b->tp;
	b->m.n_tensors = n;
}

void pbm_free(pbm *b)
{
	free(b->te);
	free(b->tp);
	free(b->shape);
	free(b->th);
	free(b->cr);
	free(b->cp);
	free(b->ch);
	memset(b, 0, sizeof(*b));
}

int pbm_to_manifest(const pbm *b, uint64_t max_chunk_bytes, wt_manifest **out, wt_errbuf *err)
{
	wt_layout l;
	wt_layout_init(&l);
	return client_manifest_from_pb(&b->m, max_chunk_bytes, b->m.model, &l, out, err);
}
