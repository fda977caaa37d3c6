/*
 * family_decilm.c — DeciLM (DeciLMForCausalLM, model_type nemotron-nas, remote code: NVIDIA's
 * Llama-3_3-Nemotron-Super-49B-v1 / -v1_5, Llama-3_1-Nemotron-Ultra-253B-v1,
 * Llama-3.1-Nemotron-51B-Instruct), cut as vLLM's nemotron_nas.py loads it: Llama's names and
 * cuts (q_proj / k_proj / v_proj fused by heads into self_attn.qkv_proj with kv heads
 * replicated when a layer has fewer than T, o_proj by columns, gate_proj / up_proj merged into
 * gate_up_proj, down_proj by columns, embed_tokens / lm_head by padded vocabulary rows, norms
 * replicated), each layer sized by its own block_configs entry (the loader's
 * ckpt_config_decilm): its kv heads num_attention_heads / attention.n_heads_in_group, its MLP
 * width from ffn.ffn_mult; a layer whose attention is a no-op has no self_attn /
 * input_layernorm tensors, one whose ffn is a no-op no mlp / post_attention_layernorm (a
 * tensor there is refused naming the layer and its block_configs key; one missing where the
 * layer has the subblock is refused by name). No biases (the loader refuses the switches).
 */
#include <stdlib.h>

#include "loader/loader_decilm.h"
#include "shardmap/family_rules.h"

static const sm_rule decilm_rules[] = {
    SM_RULES_TOP,
    SM_RULE(SM_LAYER "input_layernorm.weight", SM_LAYER "input_layernorm.weight", SM_K_REPL, 0,
            SM_U_NONE, SM_C_LATT, 0, 1, SM_D_HID, SM_D_ANY),
    SM_RULE(SM_LAYER "post_attention_layernorm.weight", SM_LAYER "post_attention_layernorm.weight",
            SM_K_REPL, 0, SM_U_NONE, SM_C_LMLP, 0, 1, SM_D_HID, SM_D_ANY),
    SM_RULE(SM_LAYER "self_attn.q_proj.weight", SM_LAYER "self_attn.qkv_proj.weight", SM_K_QKV, 0,
            SM_U_HEADS, SM_C_LATT, SM_F_QUANT, 2, SM_D_Q, SM_D_HID),
    SM_RULE(SM_LAYER "self_attn.k_proj.weight", SM_LAYER "self_attn.qkv_proj.weight", SM_K_QKV, 1,
            SM_U_HEADS, SM_C_LATT, SM_F_QUANT, 2, SM_D_KV, SM_D_HID),
    SM_RULE(SM_LAYER "self_attn.v_proj.weight", SM_LAYER "self_attn.qkv_proj.weight", SM_K_QKV, 2,
            SM_U_HEADS, SM_C_LATT, SM_F_QUANT, 2, SM_D_KV, SM_D_HID),
    SM_RULE(SM_LAYER "self_attn.o_proj.weight", SM_LAYER "self_attn.o_proj.weight", SM_K_COLS, 0,
            SM_U_HEADS, SM_C_LATT, SM_F_QUANT, 2, SM_D_HID, SM_D_Q),
    SM_RULES_MLP_NOBIAS_IF(SM_C_LMLP),
};

/* Each layer's attention / MLP from config.json's block_configs. */
static int decilm_layer_dims(const ckpt *c, sm_layer_dims **out, wt_errbuf *err)
{
	size_t len;
	const char *json = ckpt_config_json(c, &len);
	const ckpt_config *cfg = ckpt_get_config(c);
	ckpt_decilm_block *b;
	*out = NULL;
	int rv = ckpt_config_decilm(json, len, cfg, &b, err);
	if (rv != WT_OK)
		return rv;
	sm_layer_dims *d = calloc((size_t)cfg->num_hidden_layers, sizeof(*d));
	if (d == NULL) {
		free(b);
		return wt_seterr(err, WT_ENOMEM, "plan: out of memory for the layers' dims");
	}
	for (int64_t i = 0; i < cfg->num_hidden_layers; i++)
		d[i] = (sm_layer_dims){b[i].attn, b[i].ffn, b[i].kv_heads, b[i].inter};
	free(b);
	*out = d;
	return WT_OK;
}

static const char *const decilm_archs[] = {"DeciLMForCausalLM", NULL};

const sm_family shardmap_family_nemotron_nas = {
    .name = "nemotron_nas",
    .archs = decilm_archs,
    .rules = decilm_rules,
    .n_rules = SM_NRULES(decilm_rules),
    .layer_prefix = "model.layers.",
    .layer_dims = decilm_layer_dims,
};
