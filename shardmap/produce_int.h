/*
 * produce_int.h — shardmap's producer, between its files: produce.c builds
 * the outputs of one source group for the selected ranks (sm_prod_group);
 * produce_load.c reads a source (sm_prod_load_src); produce_emit.c emits
 * (scales checked), quantizes and emits in parts; produce_stack.c loads
 * expert stacks expert by expert (only the experts the selected ranks
 * need); produce_run.c orders the groups, splits row-disjoint
 * groups rank by rank (stacks EP group by EP group) and runs them on one or
 * more threads, each with a prod of its own.
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
	int64_t only;   /* the first selected rank, or < 0: every rank */
	int64_t n_only; /* ranks selected from `only` on (< 1: one) */
	buf *raw, *dq;  /* per source slot */
	loaded *ld;
	size_t n_slots;
	buf out, q, sc;
	buf chunk;  /* streaming: one cache-sized chunk of source rows */
	buf *obufs; /* streaming, stack batches: one output buffer per group member */
	size_t n_obufs;
	/* ceiling on a stack's experts transformed at once (0: SM_STACK_BATCH_BYTES) */
	uint64_t batch_bytes;
	sm_emit_fn emit;
	/* optional (shardmap_produce_ex): a large expert stack's outputs are emitted in
	 * parts of part_bytes as its batches come (sm_prod_batched) */
	sm_emit_part_fn emit_part;
	uint64_t part_bytes;
	void *ctx;
} prod;

/* Grow b to at least n bytes (its contents are lost when it grows). */
int sm_prod_reserve(buf *b, size_t n);
/* At least n output buffers in pr->obufs. */
int sm_prod_obufs(prod *pr, size_t n, wt_errbuf *err);
/* Whether the work item takes rank's outputs (pr->only, pr->n_only). */
bool sm_prod_selected(const prod *pr, uint32_t rank);
/* Read (and dequantize) scanned source s of g when it is needed and not read directly
 * (ld->ok, !ld->direct): ld->base, dt, cols set. */
int sm_prod_load_src(prod *pr, const sm_group *g, uint32_t s, wt_errbuf *err);
/* n elements from src (dtype sd) to dst (dtype dd): a copy or kern_convert. */
int sm_prod_conv(void *dst, wt_dtype dd, const void *src, wt_dtype sd, size_t n);
/* Emit output ix of rank (scales checked first). */
int sm_prod_emit(prod *pr, uint32_t rank, size_t ix, const void *data, uint64_t n, wt_errbuf *err);
/* Emit bytes [off, off + n) of output ix of rank through pr->emit_part (scales checked
 * first; off a multiple of 4). */
int sm_prod_emit_part(prod *pr, uint32_t rank, size_t ix, uint64_t off, const void *data,
                      uint64_t n, wt_errbuf *err);
/* Quantize units [u0, u1) of SM_O_QUANT output o of rank (their rows in `in`, in
 * o->work) into q (their codes from q[0]) and sc (every unit's scales: unit u's at
 * its place); a NaN or Inf is WT_ENONFINITE naming the element. */
int sm_prod_quant_units(const prod *pr, uint32_t rank, const sm_out *o, const uint8_t *in,
                        int64_t u0, int64_t u1, uint8_t *q, float *sc, wt_errbuf *err);
/* Quantize SM_O_QUANT output o of rank from `in` (its pieces assembled in o->work, o->rows
 * x o->cols; borrowed) unit by unit and emit its scales, then it. */
int sm_prod_quant(prod *pr, uint32_t rank, const sm_out *o, const uint8_t *in, wt_errbuf *err);
/* Produce g's outputs for the selected ranks (pr->only, pr->n_only: ranks
 * [only, only + n_only), or only < 0: all), calling pr->emit for each; buffers in
 * pr are reused across calls. */
int sm_prod_group(prod *pr, const sm_group *g, wt_errbuf *err);
/* Produce members m0, m0 + mstep, ... of g (in_parts: each member one rank,
 * one contiguous row range of a source) in parts of part_bytes, each rank's
 * next part in turn, calling part; stops with WT_ECANCELED between parts once
 * *stop is set (another thread failed). */
int sm_prod_parts(prod *pr, const sm_group *g, size_t m0, size_t mstep, sm_emit_part_fn part,
                  uint64_t part_bytes, const _Atomic bool *stop, wt_errbuf *err);
/* Free pr's buffers (pr is zeroed). */
void sm_prod_free(prod *pr);

/* ---- expert stacks (produce_stack.c) ---- */

/* Default ceiling on the bytes of a stack's experts read and transformed at once
 * (more experts than that are produced in batches; one expert at least). */
#define SM_STACK_BATCH_BYTES ((uint64_t)256 << 20)

/* A source that is loaded transformed expert by expert (SM_SRC_TRANS,
 * SM_SRC_DQ_TRANS, SM_SRC_DQ_MX, SM_SRC_DEINT, SM_SRC_COLVEC) with an expert-major
 * view: the rows its pieces index are experts' rows, vrows each. */
typedef struct sm_stack {
	int64_t experts; /* the tensor's leading dimension */
	int64_t vrows;   /* view rows of one expert */
	uint64_t ebytes; /* stored bytes of one expert */
} sm_stack;
/* Whether src (tensor t) is such a stack; *st its geometry. false: read whole. */
bool sm_stack_of(const sm_src *src, const ckpt_tensor *t, sm_stack *st);
/* Experts [*e0, *e1) that hold view rows [r0, r1). */
void sm_stack_span(const sm_stack *st, int64_t r0, int64_t r1, int64_t *e0, int64_t *e1);
/* Load source s of those modes, needed rows [ld->r0, ld->r1) of its view: a stack's
 * experts holding them alone (ld->r0, ld->r1 widened to whole experts), anything
 * else whole; read, then transposed, dequantized or de-interleaved into
 * pr->raw[s] / pr->dq[s] (ld->base, dt, cols set). */
int sm_prod_load_stack(prod *pr, const sm_group *g, uint32_t s, wt_errbuf *err);
/* Ranks per work item when g can be produced one EP group (tp_size consecutive
 * ranks) at a time: its sources are stacks (sm_stack_of) cut in row pieces, its
 * outputs plain or quantized copies, and no two EP groups read the same expert
 * (on a remote store, each reads at least its read hint). 0 otherwise. */
uint32_t sm_stack_block(const ckpt *c, const sm_plan *p, const sm_group *g);
/* ---- batches (produce_batch.c) ---- */

/* Experts per batch when the stacks the selected ranks need of g (scanned into pr->ld),
 * transformed at once, would hold more than pr->batch_bytes: the sources are all
 * stacks, the outputs plain or quantized copies. 0: load them at once. *streamed:
 * the outputs can be emitted in parts as the batches come (pr->emit_part set, each
 * output's rows come in order, batch after batch, quantized ones in whole units). */
int64_t sm_stack_batch(const prod *pr, const sm_group *g, bool *streamed);
/* Produce g's selected outputs from its stacks `per` experts at a time. Streamed:
 * each output's rows (quantized: its units' codes) are emitted in parts as the
 * batches come, a part's worth and one batch's rows held per output; else each
 * output is assembled across the batches in its own buffer (pr->obufs), then
 * emitted (quantized). Every byte is still read once. */
int sm_prod_batched(prod *pr, const sm_group *g, int64_t per, bool streamed, wt_errbuf *err);
/* Experts stored one tensor each (Mixtral's, DeepSeek's: every source of g read by the
 * pieces of one output unit alone), their sources needing more than pr->batch_bytes at
 * once, and the outputs taken in parts (pr->emit_part) with their units' rows in order:
 * produced a few units at a time as sm_prod_batched streams a stack, each batch's
 * sources freed before the next is read; *done true. Else *done false, nothing done. */
int sm_prod_units(prod *pr, const sm_group *g, bool *done, wt_errbuf *err);

#endif
