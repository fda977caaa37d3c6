/*
 * loader_mistral.h — part of the loader's interface (loader.h is full): Mistral's native
 * checkpoint format (params.json + consolidated.safetensors, or consolidated-0000N-of-0000M
 * shards + consolidated.safetensors.index.json; docs/format.md "Mistral native format"),
 * which ckpt_open reads when a folder has no config.json. The checkpoint view it gives is
 * the transformers one: config.json's keys (ckpt_config_json returns the config.json text
 * made from params.json) and the tensors under transformers' names. Their bytes are the
 * file's: wq / wk rows stay in Meta's interleaved RoPE order, and whoever reads them for
 * their transformers meaning de-interleaves the rows of every head (ckpt_rope_heads).
 * config_mistral.c.
 */
#ifndef WT_LOADER_LOADER_MISTRAL_H
#define WT_LOADER_LOADER_MISTRAL_H

#include <stdbool.h>
#include <stdint.h>

#include "loader/loader.h"

/* Whether c was opened from Mistral's native format (params.json). */
bool ckpt_mistral_native(const ckpt *c);

/* Tensor i (name order) of c: its head count when its rows are a q / k projection stored in
 * Meta's interleaved RoPE order (Mistral's native wq / wk): within each of the returned
 * heads (shape[0] / heads rows each, an even count), rows 2j and 2j+1 are transformers'
 * rows j and head_dim/2 + j (kern_deinterleave_rows with half head_dim/2 turns them into
 * transformers' order). 0 for every other tensor and every other format. */
int64_t ckpt_rope_heads(const ckpt *c, size_t i);

#endif
