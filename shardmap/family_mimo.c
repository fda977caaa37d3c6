/*
 * family_mimo.c — Xiaomi MiMo (MiMoForCausalLM, remote code: XiaomiMiMo/MiMo-7B-Base, -RL, -SFT),
 * cut as vLLM's mimo.py loads it: MiMoForCausalLM over Qwen2's model (qwen2.py), so Qwen2's
 * table as vLLM builds it. q_proj / k_proj / v_proj fused by heads into self_attn.qkv_proj
 * [q_r; k_r; v_r] with their biases (Qwen2Attention's qkv_proj has bias=True: the biases are
 * required, as vLLM's loader fails on a parameter the checkpoint does not initialise); o_proj by
 * columns without a bias (bias=False: an o_proj.bias is unknown); gate_proj / up_proj merged into
 * gate_up_proj and down_proj by columns, no biases (Qwen2MLP); the norms replicated;
 * embed_tokens / lm_head by padded vocabulary rows, lm_head dropped when tied (MiMoConfig is a
 * Qwen2Config: untied by default).
 *
 * The release stores its multi-token-prediction layers beside the main model
 * (model.mtp_layers.{n}.*, n < num_nextn_predict_layers: token_layernorm, hidden_layernorm,
 * input_proj [hid, 2*hid], final_layernorm and a Qwen2 decoder layer's tensors). vLLM's
 * MiMoForCausalLM drops every name under "model.mtp_layers." (its WeightsMapper maps the prefix
 * to None; only the speculative-decoding draft, mimo_mtp.py, loads them), so they are dropped
 * here and listed as skipped, whatever their leaf name. Any other name outside the table
 * (model.mtp.*, a layer past num_hidden_layers) is refused as unknown, as vLLM fails on it.
 */
#include "shardmap/family_rules.h"

#define MIMO_QKV_B(x, part, d)                                                                     \
	SM_RULE(SM_LAYER "self_attn." x "_proj.bias", SM_LAYER "self_attn.qkv_proj.bias",          \
	        SM_K_QKV, part, SM_U_HEADS, SM_C_ALL, 0, 1, d, SM_D_ANY)

static const sm_rule mimo_rules[] = {
    SM_RULES_TOP,
    SM_RULES_LNORM,
    SM_QKV_W("q", 0, SM_D_Q),
    SM_QKV_W("k", 1, SM_D_KV),
    SM_QKV_W("v", 2, SM_D_KV),
    MIMO_QKV_B("q", 0, SM_D_Q),
    MIMO_QKV_B("k", 1, SM_D_KV),
    MIMO_QKV_B("v", 2, SM_D_KV),
    SM_RULE(SM_LAYER "self_attn.o_proj.weight", SM_LAYER "self_attn.o_proj.weight", SM_K_COLS, 0,
            SM_U_HEADS, SM_C_ALL, SM_F_QUANT, 2, SM_D_HID, SM_D_Q),
    SM_RULES_MLP_NOBIAS,
};

static const char *const mimo_archs[] = {"MiMoForCausalLM", NULL};

const sm_family shardmap_family_mimo = {
    .name = "mimo",
    .archs = mimo_archs,
    .rules = mimo_rules,
    .n_rules = SM_NRULES(mimo_rules),
    .layer_prefix = "model.layers.",
    .drop_prefix = "model.mtp_layers.",
};
