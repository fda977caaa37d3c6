/*
 * grok1.h — Grok-1's reference pieces (grok1.c; c->grok): its config fields, its checkpoint's
 * and shards' names under Mixtral's / Gemma 2's, the attention output multiplier and the
 * router soft-cap.
 */
#ifndef WT_REF_GROK1_H
#define WT_REF_GROK1_H

#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "reference/reference.h"

/* The Grok-1 fields of c (grok set by the family map): the multipliers, the soft-cap, RoPE,
 * gelu experts, renormalized top-k; arch is named in refusals. */
int ref_cfg_grok1(ref_cfg *c, const char *arch, const char *json, size_t len, wt_errbuf *err);
/* Whether set s holds Grok-1's own names (a checkpoint's or a rank's). */
bool ref_grok1_named(ref_set *s);
/* s's tensors into the empty set out under the names the decoder passes read. */
int ref_grok1_rename(const ref_cfg *c, ref_set *in, ref_set *out, wt_errbuf *err);

/* The attention output o[0..n) times attn_output_multiplier (Grok-1), else unchanged. */
static inline void ref_gk_attn_mult(const ref_cfg *c, float *o, int64_t n)
{
	for (int64_t i = 0; c->grok && i < n; i++)
		o[i] *= c->gk_attn_mult;
}

/* Grok-1's router logits rl[0..E) soft-capped 30 tanh(x / 30) (vLLM's Grok1MoE.forward). */
static inline void ref_gk_router_cap(const ref_cfg *c, float *rl, int64_t E)
{
	for (int64_t e = 0; c->grok && e < E; e++)
		rl[e] = 30.0f * tanhf(rl[e] / 30.0f);
}

#endif
