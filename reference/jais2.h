/*
 * jais2.h — Jais 2's configuration in the reference forward pass (jais2.c; c->jais2).
 */
#ifndef WT_REF_JAIS2_H
#define WT_REF_JAIS2_H

#include <stddef.h>

#include "reference/reference.h"

/* Jais 2's fields of c (jais2, nogate and layernorm set by the family map): relu2 (hidden_act
 * another value refused), layer_norm_eps (1e-5) for the three LayerNorms, rope_scaling /
 * rope_parameters through ref_cfg_rope (rope_theta: the loader's class default 500000),
 * interleaved_sliding_window into c->window / c->local_mask (entries of one window and null;
 * windows that differ refused), logit_scale (vLLM's LogitsProcessor scale) into
 * c->logit_mult. */
int ref_cfg_jais2(ref_cfg *c, const char *arch, const char *json, size_t len, wt_errbuf *err);

#endif
