/*
 * ouro.h — Ouro (OuroForCausalLM, remote code; ref_cfg.ouro_steps): its config and names as the
 * decoder passes read them, and the norm between its loop steps (ouro.c).
 */
#ifndef WT_REFERENCE_OURO_H
#define WT_REFERENCE_OURO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "reference/reference.h"

#define REF_OURO_MAX_STEPS 64 /* total_ut_steps the reference runs (the loader's bound) */

/* Does s hold Ouro's own norm names (model.layers.0.input_layernorm_2.weight)? */
bool ref_ouro_named(ref_set *s);
/* in under Gemma 2's sandwich names (ouro.c's table) into out. */
int ref_ouro_rename(const ref_cfg *c, ref_set *in, ref_set *out, wt_errbuf *err);
/* total_ut_steps (absent: 4) into c->ouro_steps, in [1, REF_OURO_MAX_STEPS] (else
 * WT_EUNSUPPORTED naming it), and the sandwich norms on. */
int ref_cfg_ouro(ref_cfg *c, const char *json, size_t len, wt_errbuf *err);
/* The passes over the layers: total_ut_steps for Ouro, else 1. */
int64_t ref_ouro_passes(const ref_cfg *c);
/* x [rows, hid] = model.norm(x) of set s: the norm that ends one loop step and starts the next
 * (vLLM's self.norm(hidden_states, residual) with the residual added). */
int ref_ouro_step_norm(const ref_cfg *c, ref_set *s, float *x, int64_t rows, wt_errbuf *err);
/* The same over the ranks of a sharded pass: each rank's replicated model.norm applied, the
 * results averaged (y scratch [rows, hid], acc too). */
int ref_ouro_step_norm_ranks(const ref_cfg *c, ref_set *ranks, uint32_t n_ranks, float *x, float *y,
                             float *acc, int64_t rows, wt_errbuf *err);

#endif
