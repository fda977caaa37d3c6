/*
 * family_glm4v_old.c — GLM-4V, the first one (GLM4VForCausalLM, model_type chatglm with a
 * vision_config, remote code: THUDM/glm-4v-9b), cut as vLLM's glm4v.py loads it (the
 * ChatGLMModel of chatglm.py with an EVA2CLIPModel under transformer.vision.; docs/format.md
 * section 2.7).
 *
 * Names are the checkpoint's: ChatGLMModel.load_weights loads every tensor under its own name
 * but for the adapter's gate_proj / dense_h_to_4h (merged, below); the
 * ChatGLMBaseModel mapper only drops ".word_embeddings" from the embedding's name, which
 * SHARDS.md keeps.
 *
 * - Language model: the chatglm family's rules (family_chatglm.h): query_key_value by heads into
 *   [q_r; k_r; v_r] (kv heads replicated when KV < T) with its add_qkv_bias bias, dense by
 *   columns, dense_h_to_4h ([gate; up]) into [gate_r; up_r], dense_4h_to_h by columns, the
 *   RMSNorms whole, word_embeddings / output_layer by padded vocabulary rows (output_layer
 *   dropped when tied), rotary_pos_emb.inv_freq dropped.
 * - EVA2CLIP tower (transformer.vision., vision_config; every Linear built with quant_config):
 *   patch_embedding.proj (Conv2d with bias), patch_embedding.cls_embedding [1, VE] and
 *   position_embedding [num_positions, VE] whole, never quantized; per block
 *   (transformer.layers.{i}.) attention.query_key_value [3 VE, VE] ([q; k; v]) and its bias by
 *   vision heads (QKVParallelLinear, KV = H) into [q_r; k_r; v_r], attention.dense by columns
 *   (RowParallelLinear, its bias whole), mlp.fc1 and its bias by rows (ColumnParallelLinear),
 *   mlp.fc2 by columns (its bias whole), the LayerNorms input_layernorm /
 *   post_attention_layernorm (weight and bias) whole.
 * - conv [hid, VE, 2, 2] (Conv2d kernel 2, stride 2, with bias) and boi / eoi [1, 1, hid] whole,
 *   never quantized.
 * - The GLU adapter linear_proj.: linear_proj.linear_proj [hid, hid] (ReplicatedLinear, no bias)
 *   whole on every rank but quantized (quant_config is passed), norm1 (LayerNorm, weight and
 *   bias) whole, gate_proj (part 0) and dense_h_to_4h (part 1), [ffn_hidden_size, hid] each,
 *   merged by rows into linear_proj.merged_proj ([gate_r; up_r], load_weights' stacked
 *   mapping), dense_4h_to_h by columns; no biases (bias=False).
 *
 * The loader (loader/config_glm4v_old.c) requires the vision_config keys vLLM reads without a
 * default and checks num_positions against the image grid.
 */
#include <inttypes.h>
#include <string.h>

#include "shardmap/family_chatglm.h"

#define GV_V "transformer.vision."
#define GV_B GV_V "transformer.layers.{i}."
#define GV_A GV_V "linear_proj."

#define GV_REPL(n, nd, d0, d1) SM_RULE(n, n, SM_K_REPL, 0, SM_U_NONE, SM_C_ALL, 0, nd, d0, d1)
/* A block's tensor: kind k by unit u over dims d0 x d1 (nd dims), quantized when q. */
#define GV_BLK(n, k, u, q, nd, d0, d1)                                                             \
	SM_RULE(GV_B n, GV_B n, k, 0, u, SM_C_ALL, (q) | SM_F_VIS, nd, d0, d1)
#define GV_BNORM(n)                                                                                \
	GV_BLK(n ".weight", SM_K_REPL, SM_U_NONE, 0, 1, SM_D_VE, SM_D_ANY),                        \
	    GV_BLK(n ".bias", SM_K_REPL, SM_U_NONE, 0, 1, SM_D_VE, SM_D_ANY)
#define GV_CONV(n, d0, d1, d2)                                                                     \
	{                                                                                          \
		n, n, SM_K_REPL, 0, SM_U_NONE, SM_C_ALL, 0, 4,                                     \
		{                                                                                  \
			d0, d1, d2, d2                                                             \
		}                                                                                  \
	}

static const sm_rule glm4v_old_rules[] = {
    CG_RULES,
    GV_CONV(GV_V "patch_embedding.proj.weight", SM_D_VE, SM_D_VCH, SM_D_VP),
    GV_REPL(GV_V "patch_embedding.proj.bias", 1, SM_D_VE, SM_D_ANY),
    GV_REPL(GV_V "patch_embedding.cls_embedding", 2, SM_D_ONE, SM_D_VE),
    GV_REPL(GV_V "patch_embedding.position_embedding.weight", 2, SM_D_VNP, SM_D_VE),
    GV_BNORM("input_layernorm"),
    GV_BNORM("post_attention_layernorm"),
    GV_BLK("attention.query_key_value.weight", SM_K_QKVF, SM_U_VHEADS, SM_F_QUANT, 2, SM_D_V3E,
           SM_D_VE),
    GV_BLK("attention.query_key_value.bias", SM_K_QKVF, SM_U_VHEADS, 0, 1, SM_D_V3E, SM_D_ANY),
    GV_BLK("attention.dense.weight", SM_K_COLS, SM_U_VHEADS, SM_F_QUANT, 2, SM_D_VE, SM_D_VE),
    GV_BLK("attention.dense.bias", SM_K_REPL, SM_U_NONE, 0, 1, SM_D_VE, SM_D_ANY),
    GV_BLK("mlp.fc1.weight", SM_K_ROWS, SM_U_VI, SM_F_QUANT, 2, SM_D_VI, SM_D_VE),
    GV_BLK("mlp.fc1.bias", SM_K_ROWS, SM_U_VI, 0, 1, SM_D_VI, SM_D_ANY),
    GV_BLK("mlp.fc2.weight", SM_K_COLS, SM_U_VI, SM_F_QUANT, 2, SM_D_VE, SM_D_VI),
    GV_BLK("mlp.fc2.bias", SM_K_REPL, SM_U_NONE, 0, 1, SM_D_VE, SM_D_ANY),
    GV_CONV(GV_V "conv.weight", SM_D_HID, SM_D_VE, SM_D_VMS),
    GV_REPL(GV_V "conv.bias", 1, SM_D_HID, SM_D_ANY),
    SM_RULE3(GV_V "boi", GV_V "boi", SM_K_REPL, 0, SM_U_NONE, SM_C_ALL, 0, SM_D_ONE, SM_D_ONE,
             SM_D_HID),
    SM_RULE3(GV_V "eoi", GV_V "eoi", SM_K_REPL, 0, SM_U_NONE, SM_C_ALL, 0, SM_D_ONE, SM_D_ONE,
             SM_D_HID),
    SM_RULE(GV_A "linear_proj.weight", GV_A "linear_proj.weight", SM_K_REPL, 0, SM_U_NONE, SM_C_ALL,
            SM_F_QUANT, 2, SM_D_HID, SM_D_HID),
    GV_REPL(GV_A "norm1.weight", 1, SM_D_HID, SM_D_ANY),
    GV_REPL(GV_A "norm1.bias", 1, SM_D_HID, SM_D_ANY),
    SM_RULE(GV_A "gate_proj.weight", GV_A "merged_proj.weight", SM_K_ROWS, 0, SM_U_I, SM_C_ALL,
            SM_F_QUANT, 2, SM_D_I, SM_D_HID),
    SM_RULE(GV_A "dense_h_to_4h.weight", GV_A "merged_proj.weight", SM_K_ROWS, 1, SM_U_I, SM_C_ALL,
            SM_F_QUANT, 2, SM_D_I, SM_D_HID),
    SM_RULE(GV_A "dense_4h_to_h.weight", GV_A "dense_4h_to_h.weight", SM_K_COLS, 0, SM_U_I,
            SM_C_ALL, SM_F_QUANT, 2, SM_D_HID, SM_D_I),
};

/* The loader reads vision_config for GLM4VForCausalLM under model_type chatglm only; the tower's
 * heads split its width (EVA2CLIPAttention's head_dim = hidden_size // num_heads). */
static int glm4v_old_check(const ckpt_config *c, wt_errbuf *err)
{
	if (strcmp(c->model_type, "chatglm") != 0 || !c->has_vision)
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: %s needs model_type chatglm (ChatGLMConfig) with a "
		                 "vision_config object (EVA2CLIP's hidden_size, num_heads, ...); "
		                 "vLLM's glm4v.py reads them",
		                 c->architecture);
	if (c->v_num_heads <= 0 || c->v_hidden_size % c->v_num_heads != 0)
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: vision_config.num_heads %" PRId64
		                 " does not divide vision_config.hidden_size %" PRId64
		                 " (EVA2CLIPAttention's head size); fix vision_config",
		                 c->v_num_heads, c->v_hidden_size);
	return shardmap_chatglm_check(c, err);
}

static const char *const glm4v_old_archs[] = {"GLM4VForCausalLM", NULL};

/* ChatGLMConfig sets no tie_word_embeddings: PretrainedConfig's true when absent (glm-4v-9b
 * gives false). */
const sm_family shardmap_family_glm4v_old = {
    .name = "glm4v_old",
    .archs = glm4v_old_archs,
    .rules = glm4v_old_rules,
    .n_rules = SM_NRULES(glm4v_old_rules),
    .layer_prefix = "transformer.encoder.layers.",
    .check = glm4v_old_check,
    .attn_bias_key = "add_qkv_bias",
    .drop_suffixes = shardmap_chatglm_drops,
    .tie_default = true,
    .vision_gated = true,
    .vision_siglip = true,
    .clip = true,
    .depth_key = "vision_config.num_hidden_layers",
    .vis_heads_key = "vision_config.num_heads",
};
