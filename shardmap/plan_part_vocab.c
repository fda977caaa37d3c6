/*
 * plan_part_vocab.c — the vocabulary-parallel rule of docs/format.md section 2.3 (SM_K_VOCAB,
 * dispatched from plan_part.c): a rank's rows of the vocabulary padded with zero rows. A
 * vocabulary fused of parts (Molmo's wte.embedding and wte.new_embedding, which vLLM
 * concatenates into one VocabParallelEmbedding) is their rows in part order, padded as one.
 */
#include <inttypes.h>

#include "shardmap/plan_part_int.h"

static int64_t gcd64(int64_t a, int64_t b)
{
	while (b) {
		int64_t t = a % b;
		a = b;
		b = t;
	}
	return a;
}

/* Vocab parallel (section 2.3): rows of the vocabulary (its parts' rows concatenated)
 * padded with zero rows. */
int shardmap_part_vocab(const part_req *req)
{
	int64_t tp = req->tp_size, vocab = 0;
	/* parts: vocab_size rows (checked against config.json) and Molmo's 128 (molmo_extra) */
	for (size_t k = 0; k < req->n_parts; k++)
		vocab += sm_trows(&req->ctx->ents[req->first + k].view);
	int64_t pad = req->ctx->l->vocab_pad ? req->ctx->l->vocab_pad : 1;
	/* The padded vocabulary must be a multiple of vocab_pad (what engines expect) and
	 * split evenly over tp_size ranks: a multiple of step = lcm(vocab_pad, tp_size),
	 * computed as pad / gcd * tp so the product never overflows before the division. */
	int64_t step = pad / gcd64(pad, tp) * tp;
	int64_t padded = (vocab + step - 1) / step * step, per_rank = padded / tp;
	int64_t lo = req->tp_rank * per_rank, hi = lo + per_rank;
	/* A large step (vocab_pad 4096 on a small model) could pad far past the vocabulary. */
	if (step > SM_VOCAB_FREE_MULTIPLE && padded - vocab > vocab)
		return wt_seterr(req->err, WT_ELAYOUT,
		                 "tensor '%s': vocab_pad %" PRId64 " with tp_size %" PRId64
		                 " pads %" PRId64 " rows to %" PRId64 " (a multiple of %" PRId64
		                 "), more padding than vocabulary; use a vocab_pad of 64..1024",
		                 req->rt, pad, tp, vocab, padded, step);
	/* a 1-D source (PhiMoE's lm_head.bias [V]) stays 1-D: [Vl] */
	shardmap_geo_2d(req->geom, per_rank, sm_tcols(req->src), req->src->ndim == 1 ? 1 : 2);
	/* Real rows [lo, min(hi, vocab)) part by part (part k's rows from vocabulary row at),
	 * then zero rows [max(lo, vocab), hi). */
	int rv = WT_OK;
	int64_t at = 0;
	for (size_t k = 0; k < req->n_parts && rv == WT_OK; k++) {
		int64_t n = sm_trows(&req->ctx->ents[req->first + k].view);
		int64_t a = lo > at ? lo : at, b = hi < at + n ? hi : at + n;
		if (a < b)
			rv = shardmap_part_push(req,
			                        shardmap_rows_piece((uint32_t)k, a - at, b - a, 0));
		at += n;
	}
	if (rv == WT_OK && hi > vocab)
		rv = shardmap_part_push(
		    req, shardmap_rows_piece(SM_ZERO, 0, hi - (lo > vocab ? lo : vocab), 0));
	return rv;
}
