/*
 * loader_decilm.h — part of the loader's interface (loader.h is full): DeciLM's per-layer
 * block_configs (model_type nemotron-nas, DeciLMForCausalLM: NVIDIA's Llama-Nemotron Super /
 * Ultra / 51B), as vLLM's nemotron_nas.py builds each layer from them. config_decilm.c.
 */
#ifndef WT_LOADER_LOADER_DECILM_H
#define WT_LOADER_LOADER_DECILM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "loader/loader.h"

/* One decoder layer as vLLM's DeciLMDecoderLayer builds it. */
typedef struct ckpt_decilm_block {
	bool attn;        /* attention.no_op false: self_attn + input_layernorm */
	bool ffn;         /* ffn.no_op false: mlp + post_attention_layernorm */
	int64_t kv_heads; /* num_attention_heads / attention.n_heads_in_group (0 without attn) */
	int64_t inter;    /* the MLP's width (0 without ffn): _ffn_mult_to_intermediate_size(
	                     ffn.ffn_mult, hidden_size), else ffn.intermediate_size */
} ckpt_decilm_block;

/* The blocks of config.json text (len bytes) whose language-model keys cfg holds (its
 * class defaults applied, as ckpt_config_parse gives them): *out = cfg->num_hidden_layers
 * blocks, owned by the caller (free()). Every refusal of the loader's check applies
 * (WT_ECORRUPT / WT_EUNSUPPORTED naming block_configs[i] and the key); *out is NULL on
 * error. */
int ckpt_config_decilm(const char *json, size_t len, const ckpt_config *cfg,
                       ckpt_decilm_block **out, wt_errbuf *err);

/* MLP width of ffn_mult m at hidden size hid, as vLLM's _ffn_mult_to_intermediate_size (after
 * the remote FFNConfig's round(m, 6)): int(2 * m * hid / 3) rounded up to a multiple of 256;
 * -1 when m is not a positive finite number or the width is past 2^31. */
int64_t ckpt_decilm_ffn_width(double m, int64_t hid);

#endif
