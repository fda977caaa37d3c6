/*
 * shard_int.h — the sharded reference pass's state (shard.c) and what its parts in other
 * files share: the vocabulary ends (shard_ends.c), the MoE block (shard_moe.c), the recurrent
 * mixers of the hybrid families (shard_mixers.c).
 */
#ifndef WT_REFERENCE_SHARD_INT_H
#define WT_REFERENCE_SHARD_INT_H

#include "reference/reference.h"
#include "reference/reference_int.h"

typedef struct shard {
	const ref_cfg *c;
	ref_set *ranks;
	uint32_t T, P, g; /* tp_size, ep_size, EP group whose TP ranks run the dense parts */
	int up_gate;
	int64_t Hl, KVl, Vl, n_tok;
	int64_t Vle; /* embed_tokens' rows a rank: Vl, or of Mllama's vocab_size + 8 */
	ref_bufs b;
	const int64_t *routes; /* [L][n_tok][topk] forced expert choices, or NULL */
	/* OLMo 2: the all-reduced mean squares of q and k per token (qk_mean_squares) */
	float ms_q[REF_MAX_TOKENS], ms_k[REF_MAX_TOKENS];
	wt_errbuf *err;
} shard;

static inline ref_set *rank_set(const shard *s, uint32_t tp_rank, uint32_t ep_rank)
{
	return &s->ranks[ep_rank * s->T + tp_rank];
}

/* b.h = norm(x) with rank rs's norm before the MLP (ref_mlp_norm; OLMo 2: x). */
static inline int shard_post_norm(shard *s, ref_set *rs, int64_t l)
{
	return ref_block_input(s->c, rs, s->b.h, s->b.x, s->n_tok, l, ref_mlp_norm(s->c), s->err);
}

static inline void add_into(float *acc, const float *x, int64_t n)
{
	for (int64_t i = 0; i < n; i++)
		acc[i] += x[i];
}

/* Layer l's recurrent mixer sharded as an engine runs it, the residual added
 * (shard_mixers.c): Granite 4.0 / Bamba's Mamba2, MiniMax's lightning attention, Jamba's
 * Mamba (v1). */
int ref_shard_g4_mamba(shard *s, int64_t l);
int ref_shard_mm_lightning(shard *s, int64_t l);
int ref_shard_jb_mamba(shard *s, int64_t l);
/* PLaMo 2's Mamba mixer of layer l, post_mixer_norm on the all-reduced output, the residual
 * added (shard_mixers.c). */
int ref_shard_p2_mamba(shard *s, int64_t l);
/* Gemma 2/3's post norm `leaf` of layer l on the all-reduced b.acc, in place: the mean of
 * every rank's replica applied (shard.c). */
int ref_shard_post_norm_mean(shard *s, int64_t l, const char *leaf);
/* Zamba2 (zamba2.c): *xin = layer l's input before its input_layernorm, every rank's: x,
 * or on a hybrid layer x + linear(the shared block run over the ranks) in s->b.y; layer 0
 * keeps the embeddings in s->b.sc. */
int ref_z2_input_sharded(shard *s, int64_t l, const float **xin);
/* TP-split gated MLP `m` (gate_up_proj [gate_r; up_r], down_proj columns) of rank rs on h
 * (T tokens) into y; n_inter is the full intermediate size (shard.c). */
int ref_shard_mlp_rank(shard *s, ref_set *rs, const char *m, int64_t n_inter, int64_t T,
                       const float *h, float *y);
/* Layer l's MoE block on b.h into b.acc, all-reduced over the ranks (shard_moe.c). */
int ref_shard_moe(shard *s, int64_t l);
/* Arctic's residual MLP of layer l on its ranks (its residual_layernorm of x + the attention
 * output held in b.sc), added into b.acc (arctic.c). */
int ref_arctic_shard_residual(shard *s, int64_t l);
/* LongCat-Flash's shortcut MoE of virtual layer l (even) into s->b.sc, each rank's experts
 * and the identity experts' part once (longcat.c). */
int ref_shard_lc_moe(shard *s, int64_t l);

/* The vocab-parallel embedding of tokens into s->b.x, and the LM head (or score head) over
 * s->b.x into logits (shard_ends.c). */
int ref_shard_embed(shard *s, const int64_t *tokens);
int ref_shard_lm_head(shard *s, float *logits);

#endif
