/*
 * pb_manifest.h — a weights.Manifest built by hand, as weightd would send it,
 * for the tests and fuzz targets that play a server or feed the client one
 * (test code only; no cmocka, so the fuzz targets link it too). Every tensor
 * is one-dimensional ([nbytes / dtype size]) and cut into chunks of one size
 * (the last one shorter, none for an empty tensor); every chunk and tensor
 * lists the XXH3-128 of its bytes, or no hash at all in a live manifest.
 */
#ifndef WT_TESTS_PB_MANIFEST_H
#define WT_TESTS_PB_MANIFEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proto/wire.h"
#include "weights/client.h"
#include "weights/dtype.h"
#include "weights/weights.h"

/* One tensor of the manifest. */
typedef struct pbm_tensor {
	const char *name;    /* borrowed: must outlive the pbm */
	wt_dtype dtype;      /* nbytes is a multiple of its size */
	const uint8_t *data; /* nbytes bytes; borrowed, read (hashed) only by pbm_build */
	uint64_t nbytes;
} pbm_tensor;

typedef struct pbm {
	/* model "m", revision "r1", layout_text "tp=1", shard_id "sid",
	 * total_bytes the tensors' sum; the caller may change any field */
	Weights__Manifest m;
	uint8_t (*th)[16]; /* tensor t's hash [n_tensors], computed even when live */
	uint8_t (*ch)[16]; /* chunk k's hash [n_chunks], tensors in order */
	size_t n_chunks;
	/* private: what m points into */
	Weights__TensorEntry *te, **tp;
	Weights__ChunkRef *cr, **cp;
	int64_t *shape;
} pbm;

/* Build b from n tensors in chunks of chunk_nbytes (> 0) bytes; live: m.live
 * set and no hash listed. Aborts when out of memory. Free with pbm_free. */
void pbm_build(pbm *b, const pbm_tensor *t, size_t n, uint64_t chunk_nbytes, bool live);
/* Frees what pbm_build allocated (not the borrowed names and data). */
void pbm_free(pbm *b);
/* b->m as the client takes it (client_manifest_from_pb for model b->m.model,
 * layout tp=1, chunks up to max_chunk_bytes): WT_OK and *out (the caller
 * wt_manifest_free's it), or the client's error in err. */
int pbm_to_manifest(const pbm *b, uint64_t max_chunk_bytes, wt_manifest **out, wt_errbuf *err);

#endif
