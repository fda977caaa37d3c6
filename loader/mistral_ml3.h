/*
 * mistral_ml3.h — Mistral-Large-3 in Mistral's native format (config_mistral_ml3.c), the part
 * config_mistral.c calls: params.json with multi-head latent attention read as vLLM's
 * configs/mistral.py reads it (a DeepSeek-V3 model, MistralLarge3ForCausalLM), and its names.
 */
#ifndef WT_LOADER_MISTRAL_ML3_H
#define WT_LOADER_MISTRAL_ML3_H

#include <jansson.h>
#include <stdbool.h>

#include "loader/ckpt_int.h"

/* Whether k is a key of the MLA + MoE params.json (moe, qk_nope_head_dim, llama_4_scaling, ...). */
bool ckpt_mistral_ml3_key(const char *k);

/* Whether params.json root describes multi-head latent attention (qk_nope_head_dim set). */
bool ckpt_mistral_ml3_wanted(json_t *root);

/* The MLA, MoE, llama_4_scaling and yarn keys of root added to o (the dense config.json
 * object config_mistral.c made), o made MistralLarge3ForCausalLM / deepseek_v3; d->ml3 and
 * d->experts set. A key out of range WT_ECORRUPT, one not read WT_EUNSUPPORTED, naming it. */
int ckpt_mistral_ml3_config(json_t *root, json_t *o, ckpt_mistral_dims *d, wt_errbuf *err);

/* The DeepSeek-V3 name of tensor `name` (layer i, suffix suf after "layers.{i}.") into buf;
 * an unknown suffix or an expert past moe.num_experts WT_EUNSUPPORTED naming the tensor. */
int ckpt_mistral_ml3_layer_name(const ckpt_mistral_dims *d, const char *name, int64_t i,
                                const char *suf, char *buf, size_t cap, wt_errbuf *err);

#endif
