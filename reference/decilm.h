/*
 * decilm.h — DeciLM's per-layer blocks in the reference forward passes (decilm.c; c->decilm).
 */
#ifndef WT_REF_DECILM_H
#define WT_REF_DECILM_H

#include <stdbool.h>
#include <stdint.h>

#include "reference/reference.h"

/* The DeciLM fields of c from config.json text (len bytes) whose loader view is cc: each
 * layer's block as the loader's ckpt_config_decilm reads it (its refusals apply), KV and I
 * the largest (what the passes' buffers hold); more than 256 layers WT_EUNSUPPORTED. */
struct ckpt_config; /* loader/loader.h */
int ref_dl_layers(const struct ckpt_config *cc, const char *json, size_t len, ref_cfg *c,
                  wt_errbuf *err);

/* Whether layer l has attention / an MLP (every layer of another family has both). */
bool ref_dl_attn(const ref_cfg *c, int64_t l);
bool ref_dl_ffn(const ref_cfg *c, int64_t l);

/* c as layer l is sized: a copy in *tmp with the layer's kv heads and MLP width as KV and I
 * (DeciLM), else c itself. */
const ref_cfg *ref_dl_layer(const ref_cfg *c, int64_t l, ref_cfg *tmp);

#endif
