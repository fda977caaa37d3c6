/*
 * manifest_fixture.h — a valid two-tensor weights.Manifest that client tests
 * (test_client.c, test_client_update.c) then change one field at a time.
 * Header-only: each test binary gets its own copy of the static function.
 */
#ifndef WT_TESTS_MANIFEST_FIXTURE_H
#define WT_TESTS_MANIFEST_FIXTURE_H

#include <string.h>

#include "proto/wire.h"
#include "weights/dtype.h"
#include "weights/weights.h"

/* A valid two-tensor manifest the tests then break one field at a time. */
typedef struct mf {
	Weights__Manifest m;
	Weights__TensorEntry te[2];
	Weights__TensorEntry *tp[2];
	Weights__ChunkRef cr[3];
	Weights__ChunkRef *cp[3];
	int64_t shape[2][2];
	uint8_t hash[5][16];
} mf;

static __attribute__((unused)) void mf_init(mf *x)
{
	memset(x, 0, sizeof(*x));
	weights__manifest__init(&x->m);
	x->m.format_version = WT_FORMAT_VERSION;
	x->m.model = "m";
	x->m.revision = "r";
	x->m.layout_text = "tp=1";
	x->m.shard_id.data = (uint8_t *)"id";
	x->m.shard_id.len = 2;
	const char *names[2] = {"a.weight", "b.weight"};
	for (int i = 0; i < 2; i++) {
		weights__tensor_entry__init(&x->te[i]);
		x->tp[i] = &x->te[i];
		x->te[i].name = (char *)names[i];
		x->te[i].dtype = WT_BF16;
		x->shape[i][0] = 4;
		x->shape[i][1] = 8;
		x->te[i].shape = x->shape[i];
		x->te[i].n_shape = 2;
		x->te[i].nbytes = 64;
		x->te[i].hash.data = x->hash[i];
		x->te[i].hash.len = 16;
	}
	for (int k = 0; k < 3; k++) {
		weights__chunk_ref__init(&x->cr[k]);
		x->cp[k] = &x->cr[k];
		x->cr[k].hash.data = x->hash[2 + k];
		x->cr[k].hash.len = 16;
	}
	/* a: two chunks [0,40) [40,64); b: one chunk [0,64) */
	x->cr[0].offset = 0;
	x->cr[0].nbytes = 40;
	x->cr[1].offset = 40;
	x->cr[1].nbytes = 24;
	x->cr[2].offset = 0;
	x->cr[2].nbytes = 64;
	x->te[0].chunks = &x->cp[0];
	x->te[0].n_chunks = 2;
	x->te[1].chunks = &x->cp[2];
	x->te[1].n_chunks = 1;
	x->m.tensors = x->tp;
	x->m.n_tensors = 2;
	x->m.total_bytes = 128;
}

#endif
