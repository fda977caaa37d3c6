/*
 * loader_mimo_v2.h — part of the loader's interface (loader.h is full): MiMo-V2-Flash's
 * per-layer attention (model_type mimo_v2_flash, MiMoV2FlashForCausalLM: Xiaomi's
 * MiMo-V2-Flash), as vLLM's mimo_v2_flash.py builds each layer's MiMoV2Attention from
 * hybrid_layer_pattern. config_mimo_v2.c.
 */
#ifndef WT_LOADER_LOADER_MIMO_V2_H
#define WT_LOADER_LOADER_MIMO_V2_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "loader/loader.h"

/* One decoder layer's attention as vLLM's MiMoV2FlashDecoderLayer builds it. */
typedef struct ckpt_mimo_v2_layer {
	bool swa;           /* hybrid_layer_pattern[i] == 1: the sliding-window attention */
	bool sinks;         /* swa and add_swa_attention_sink_bias: attention_sink_bias [heads] */
	int64_t heads;      /* num_attention_heads, or swa_num_attention_heads */
	int64_t kv_heads;   /* num_key_value_heads, or swa_num_key_value_heads */
	int64_t head_dim;   /* head_dim, or swa_head_dim (q and k rows a head) */
	int64_t v_head_dim; /* v_head_dim, or swa_v_head_dim; the layer's head_dim when absent */
} ckpt_mimo_v2_layer;

/* The layers of config.json text (len bytes) whose keys cfg holds (as ckpt_config_parse gives
 * them): *out = cfg->num_hidden_layers layers, owned by the caller (free()). A missing or
 * malformed hybrid_layer_pattern, a missing swa_* key where a layer is SWA, a head count or
 * dim below 1, kv heads not dividing the heads: WT_ECORRUPT naming the key; *out is NULL on
 * error. */
int ckpt_config_mimo_v2(const char *json, size_t len, const ckpt_config *cfg,
                        ckpt_mimo_v2_layer **out, wt_errbuf *err);

#endif
