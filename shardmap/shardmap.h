/*
 * shardmap.h — module interface of shardmap/: model registry, weight mapper,
 * partition planner and quantization schemes (docs/format.md sections 1-5).
 *
 * A plan covers ALL ranks of a layout (the rank fields of the wt_layout given
 * to shardmap_plan are ignored), so production reads each source tensor once.
 * A plan is immutable after shardmap_plan() and may be shared by threads.
 */
#ifndef WT_SHARDMAP_H
#define WT_SHARDMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "loader/loader.h"
#include "weights/dtype.h"
#include "weights/error.h"
#include "weights/layout.h"

/* Roles, equal to the protobuf TensorRole values. FROZEN. */
typedef enum {
	SM_ROLE_WEIGHT = 0,
	SM_ROLE_SCALE = 1,
	SM_ROLE_BIAS = 2,
	SM_ROLE_INPUT_SCALE = 3,
} sm_role;

/* One runtime tensor of one rank, as the manifest describes it. */
typedef struct sm_out_info {
	const char *name; /* runtime name; borrowed from the plan */
	wt_dtype dtype;
	int ndim;
	int64_t shape[WT_MAX_DIMS];
	uint64_t nbytes;
	sm_role role;
	bool requantized; /* pre-quantized source dequantized + requantized (requant=allow) */
} sm_out_info;

typedef struct sm_plan sm_plan;

/*
 * Plan every rank of layout l for checkpoint c. Plan-time errors (docs/format.md
 * section 3, divisibility, exclusions) return WT_ELAYOUT (or WT_ENOTFOUND /
 * WT_EDUP / WT_ESHAPE / WT_EDTYPE / WT_EUNSUPPORTED for checkpoint problems)
 * with a message naming the tensor, the numbers and a layout that would work.
 */
int shardmap_plan(const ckpt *c, const wt_layout *l, sm_plan **out, wt_errbuf *err);
void shardmap_plan_free(sm_plan *p); /* NULL-safe */

uint32_t shardmap_n_ranks(const sm_plan *p); /* tp_size * ep_size */
size_t shardmap_rank_n_tensors(const sm_plan *p, uint32_t rank);
/* Tensors of a rank in name order. Borrowed; valid until shardmap_plan_free(). */
const sm_out_info *shardmap_rank_tensor(const sm_plan *p, uint32_t rank, size_t i);
uint64_t shardmap_rank_bytes(const sm_plan *p, uint32_t rank);
bool shardmap_tied_lm_head(const sm_plan *p);
/* Checkpoint tensors not emitted (rotary caches, MTP layers, tied lm_head). */
size_t shardmap_n_skipped(const sm_plan *p);
const char *shardmap_skipped(const sm_plan *p, size_t i);
/* Family name from the registry ("llama", "deepseek_v3", ...); "raw" for the plan of a
 * raw layout (l->raw: every checkpoint tensor, or the include names, unmodified, one
 * rank, any architecture). Borrowed. */
const char *shardmap_family(const sm_plan *p);
/* The family shardmap_plan picks for a checkpoint's config (architectures[0],
 * then model_type), without planning; NULL when none does. Borrowed, static. */
const char *shardmap_family_of(const ckpt_config *cfg);
/* Whether the LM head is the embedding: tie_word_embeddings when config.json
 * gives it, else the family's default (true for Gemma, false for the others,
 * as transformers loads them); false for an unknown architecture. */
bool shardmap_tied(const ckpt_config *cfg);

/* LFM2's MLP size (Lfm2MLP, transformers 4.57.1): with block_auto_adjust_ff_dim,
 * int(2 * intermediate_size / 3), then (block_ffn_dim_multiplier not null) int(multiplier
 * * that) rounded up to block_multiple_of; else intermediate_size. vLLM's lfm2.py rounds
 * up even with a null multiplier: *vllm gets its size (equal but then). */
int64_t shardmap_lfm2_ff_dim(const ckpt_config *c, int64_t *vllm);

/*
 * Called exactly once per (rank, tensor) produced (not for a tensor that
 * shardmap_produce_ex hands to emit_part in parts). `bytes` is borrowed for
 * the duration of the call. Return WT_OK to continue; any other code stops
 * production and is returned by shardmap_produce (with err as set by emit).
 * shardmap_produce calls it from its caller's thread, one call at a time;
 * shardmap_produce_ex from up to `threads` threads at once (never twice for
 * one rank and tensor).
 */
typedef int (*sm_emit_fn)(void *ctx, uint32_t rank, size_t tensor_index, const void *bytes,
                          uint64_t nbytes, wt_errbuf *err);

/*
 * Read the sources and produce the runtime tensors. only_rank < 0 produces
 * every rank in one pass over the source (each source tensor read once);
 * otherwise just that rank (reading only what it needs). Order of calls: by
 * source group; within a rank, not necessarily name order.
 */
int shardmap_produce(const ckpt *c, const sm_plan *p, int64_t only_rank, sm_emit_fn emit, void *ctx,
                     wt_errbuf *err);

/*
 * Bytes [off, off + n) of a tensor (shardmap_produce_ex with emit_part). A
 * tensor's parts come in order, from one thread; every part but the last is
 * part_bytes long; the last ends at the tensor's nbytes.
 */
typedef int (*sm_emit_part_fn)(void *ctx, uint32_t rank, size_t tensor_index, uint64_t off,
                               const void *bytes, uint64_t n, wt_errbuf *err);

#define SM_PRODUCE_MAX_THREADS 16

typedef struct sm_produce_opts {
	int64_t only_rank; /* as shardmap_produce's */
	/* the caller's thread and up to threads - 1 more (0 and 1: the caller's
	 * alone; at most SM_PRODUCE_MAX_THREADS); with more than one, emit and
	 * emit_part must be thread-safe */
	unsigned threads;
	sm_emit_fn emit;
	/* optional: a group whose ranks each take one contiguous row range of one
	 * source as it is, then perhaps zero rows (lm_head, a vocab-parallel
	 * embedding, padded or not) is read
	 * in parts of part_bytes (a whole number of its rows, else not) taken from
	 * each rank in turn, its ranks dealt out over the threads (with two, one
	 * takes ranks 0, 2, ... and the other 1, 3, ...), so that every rank's
	 * first part comes early; and an expert stack produced in batches
	 * (stack_batch_bytes) has its outputs emitted in parts as the batches come,
	 * not assembled whole (part_bytes a multiple of 16; produce_batch.c) */
	sm_emit_part_fn emit_part;
	uint64_t part_bytes;
	void *ctx;
	/* ceiling on the bytes of an expert stack read and transformed at once, per
	 * thread (0: 256 MiB; with emit_part the batch's output rows count too); a
	 * stack's experts beyond it are produced in batches of experts (one at least),
	 * the bytes unchanged */
	uint64_t stack_batch_bytes;
} sm_produce_opts;

/*
 * shardmap_produce with options. Work items (a source group, one rank of a
 * group whose ranks read disjoint rows, or such a group in parts: one item a
 * thread) are taken
 * in serving order by every thread, so the tensors a reader asks for first
 * still come first; each thread holds its own buffers. After an error the
 * other threads stop at their next item and the first error is returned. The
 * bytes of every tensor are the same whatever the options.
 */
int shardmap_produce_ex(const ckpt *c, const sm_plan *p, const sm_produce_opts *o, wt_errbuf *err);

/* The supported architectures (config.json architectures[0] values) into buf,
 * comma-separated, as many as fit in cap bytes with " and N more (docs/format.md 2.7)"
 * after them when not all fit; how many it names. */
size_t shardmap_architectures_text(char *buf, size_t cap);

/* The name the family's rules use for checkpoint tensor `name` of c: itself, or,
 * for a checkpoint in an alternative name layout (Qwen2-VL under transformers
 * 5.x: "model.language_model.*", "model.visual.*"), its 4.x form written into
 * buf. NULL if it does not fit in cap. */
const char *shardmap_canonical_name(const ckpt *c, const char *name, char *buf, size_t cap);

/* Checkpoint tensor i dequantized when it is a compressed-tensors quantized weight
 * (docs/format.md 4.5): *out receives malloc'd F32 [shape[0], shape[1]] (caller frees) and
 * name its weight name ("X.weight" for "X.weight_packed"); *out is NULL (WT_OK) for any other
 * tensor. For oracles (verify-forward's full path). */
int shardmap_ct_weight_f32(const ckpt *c, size_t i, char *name, size_t cap, float **out,
                           int64_t shape[2], wt_errbuf *err);

/* A compressed-tensors checkpoint's weight scheme in words, for messages ("int4 per group of
 * 128 with zero points (symmetric false)"), written into buf (cap bytes, truncated). */
void shardmap_ct_describe(const ckpt_config *cfg, char *buf, size_t cap);
/* Whether an output layout can keep a compressed-tensors checkpoint's codes (symmetric int8
 * per channel or int4 per group, no g_idx); zero points, g_idx and int8 groups are always
 * dequantized. False for other checkpoints. */
bool shardmap_ct_keepable(const ckpt_config *cfg);

#endif
