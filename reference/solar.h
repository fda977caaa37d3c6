/*
 * solar.h — Solar's block skip connections in the reference forward passes (solar.c; c->solar).
 */
#ifndef WT_REF_SOLAR_H
#define WT_REF_SOLAR_H

#include <stdint.h>

#include "reference/reference.h"

/* The Solar fields of c (solar set by the family map): the skip connections' layers and tv, read
 * by the loader's ckpt_config_solar (its refusals apply); Llama's RoPE and eps are the caller's. */
int ref_cfg_solar(ref_cfg *c, const char *json, size_t len, wt_errbuf *err);

/* The saved layer inputs of one forward pass; zero-initialize, free with ref_solar_free. */
typedef struct ref_solar {
	float *saved[2]; /* [n] each: bskcn_1's and bskcn_2's latest; owned */
} ref_solar;

/* At the input of layer l, on the residual stream x[0..n) (vLLM's hidden_states + residual, the
 * two mixed alike): save x for bskcn_1 then bskcn_2, then x = tv * saved + (1 - tv) * x for
 * bskcn_3 (bskcn_1's) then bskcn_4 (bskcn_2's), in float32 as vLLM computes it. A no-op for
 * other families. WT_ENOMEM, or WT_EINVAL when a mix finds nothing saved (the loader refuses
 * such configs). */
int ref_solar_skip(const ref_cfg *c, ref_solar *s, float *x, int64_t n, int64_t l, wt_errbuf *err);
void ref_solar_free(ref_solar *s); /* NULL-safe */

#endif
