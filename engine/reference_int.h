/*
 * reference_int.h — private to engine/reference*.c: the activation buffers
 * both forward paths share.
 */
#ifndef WT_ENGINE_REFERENCE_INT_H
#define WT_ENGINE_REFERENCE_INT_H

#include "engine/reference.h"

#define ENGINE_REF_MAX_TOKENS 64  /* attention keeps one row of scores on the stack */
#define ENGINE_REF_MAX_HEADS  256 /* kv map of one layer on the stack */

/* Activations for n_tok tokens; all owned. */
typedef struct engine_ref_bufs {
	float *x; /* [T, hid] residual stream */
	float *h; /* [T, hid] normed input of a block */
	float *q, *k, *v, *att;
	float *o;       /* [T, hid] block output / per-rank partial */
	float *acc;     /* [T, hid] all-reduce accumulator */
	float *part;    /* [T, hid] EP all-reduce of one TP rank */
	float *y;       /* [T, hid] one expert's output */
	float *scratch; /* 6 * T * max(I, Ie, Is) */
} engine_ref_bufs;

/* Check tokens against V and n_tok against ENGINE_REF_MAX_TOKENS, then allocate. */
int engine_ref_bufs_alloc(engine_ref_bufs *b, const engine_ref_cfg *c, size_t n_tok,
                          const int64_t *tokens, wt_errbuf *err);
void engine_ref_bufs_free(engine_ref_bufs *b); /* NULL-safe */

#endif
