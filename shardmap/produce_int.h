/*
 * produce_int.h — shardmap's producer, between its two files: produce.c builds
 * the outputs of one source group for the selected ranks (sm_prod_group);
 * produce_run.c orders the groups, splits row-disjoint groups rank by rank and
 * runs them on one or more threads, each with a prod of its own.
 */
#ifndef WT_SHARDMAP_PRODUCE_INT_H
#define WT_SHARDMAP_PRODUCE_INT_H

#include <stdatomic.h>

#include "shardmap/quant_ct.h"

typedef struct buf {
	uint8_t *p;
	size_t cap;
} buf;

typedef struct loaded {
	const uint8_t *base; /* rows [r0, r1) of the source in dtype dt */
	int64_t r0, r1;
	int64_t cols;
	wt_dtype dt;
	bool ok;
	/* Read each piece straight into the output (row pieces that do not overlap,
	 * no conversion): every byte still read once, and no staging copy. */
	bool direct;
	const ckpt_tensor *t;
} loaded;

typedef struct prod {
	const ckpt *c;
	const sm_plan *p;
	int64_t only;
	buf *raw, *dq; /* per source slot */
	loaded *ld;
	size_t n_slots;
	buf out, q, sc;
	buf chunk;  /* streaming: one cache-sized chunk of source rows */
	buf *obufs; /* streaming: one output buffer per group member */
	size_t n_obufs;
	sm_emit_fn emit;
	void *ctx;
} prod;

/* Produce g's outputs for the selected ranks (pr->only: one rank, or < 0: all),
 * calling pr->emit for each; buffers in pr are reused across calls. */
int sm_prod_group(prod *pr, const sm_group *g, wt_errbuf *err);
/* Produce members m0, m0 + mstep, ... of g (in_parts: each member one rank,
 * one contiguous row range of a source) in parts of part_bytes, each rank's
 * next part in turn, calling part; stops with WT_ECANCELED between parts once
 * *stop is set (another thread failed). */
int sm_prod_parts(prod *pr, const sm_group *g, size_t m0, size_t mstep, sm_emit_part_fn part,
                  uint64_t part_bytes, const _Atomic bool *stop, wt_errbuf *err);
/* Free pr's buffers (pr is zeroed). */
void sm_prod_free(prod *pr);

#endif
