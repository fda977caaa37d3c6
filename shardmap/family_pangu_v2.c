/*
 * family_pangu_v2.c — openPangu-Pro-MoE-V2 (PanguProMoEV2ForCausalLM, model_type
 * PanguProMoEV2; remote code), cut as vLLM's openpangu.py loads it: OpenPanguMoEModel whose
 * OpenPanguDecoderLayer builds the sink attention OpenPanguSinkAttention (param_sink_number > 0,
 * no MLA keys: loader/config_pangu_v2.c) and OpenPanguMoE above first_k_dense_replace.
 *
 * - self_attn: q_proj / k_proj / v_proj fused by load_weights into the MergedColumnParallelLinear
 *   qkv_proj [q; k; v] of H x d, KV x d and KV x v_channels rows (d = qk_nope_dim +
 *   qk_rope_dim, laid onto head_dim by the loader; v_channels onto v_head_dim): rank r's
 *   [q_r; k_r; v_r] by heads as SM_K_QKV's with v heads of v_channels rows (qkv_v_head_dim);
 *   vLLM refuses kv heads fewer than tp_size (no kv head replicated: kv_divides_tp). Their
 *   biases with `attention_bias or bias` / qkv_bias; o_proj by columns (H x v_channels), its bias
 *   whole with `attention_bias or bias`. k_layernorm [d] (an RMSNorm over each kv head's key)
 *   replicated. param_sink_key [S, KV, d] and param_sink_value [S, KV, v_channels] (S =
 *   param_sink_number; sharded_weight_loader(1)) by the rank's kv heads on dim 1 (SM_K_SINKKV),
 *   never quantized.
 * - layers below first_k_dense_replace OpenPanguMLP (gate_up_proj / down_proj), the others
 *   OpenPanguMoE as DeepSeek-V3's (family_deepseek.c's rows): the router mlp.gate whole and
 *   unquantized, the experts stacked as FusedMoE's w13 / w2, the shared experts merged; with
 *   router_enable_expert_bias the checkpoint's mlp.e_score_correction_bias [E] (load_weights
 *   renames it to mlp.gate.e_score_correction_bias) whole.
 * - input_layernorm / post_attention_layernorm, and with sandwich_norm pre_mlp_layernorm /
 *   post_mlp_layernorm, replicated. Layers past num_hidden_layers (MTP) dropped.
 */

#include "shardmap/family_rules.h"

#define PV2_ATT SM_LAYER "self_attn."
#define PV2_NORM(x)                                                                                \
	SM_RULE(SM_LAYER x ".weight", SM_LAYER x ".weight", SM_K_REPL, 0, SM_U_NONE,               \
	        SM_C_SANDWICH, 0, 1, SM_D_HID, SM_D_ANY)

static const sm_rule pangu_v2_rules[] = {
    SM_RULES_TOP,
    SM_RULES_LNORM,
    PV2_NORM("pre_mlp_layernorm"),
    PV2_NORM("post_mlp_layernorm"),
    SM_QKV_W("q", 0, SM_D_Q),
    SM_QKV_W("k", 1, SM_D_KV),
    SM_QKV_W("v", 2, SM_D_KVV),
    SM_QKV_BS("q", 0, SM_D_Q),
    SM_QKV_BS("k", 1, SM_D_KV),
    SM_QKV_BS("v", 2, SM_D_KVV),
    SM_RULE(PV2_ATT "o_proj.weight", PV2_ATT "o_proj.weight", SM_K_COLS, 0, SM_U_HEADS, SM_C_ALL,
            SM_F_QUANT, 2, SM_D_HID, SM_D_OV),
    SM_RULE(PV2_ATT "o_proj.bias", PV2_ATT "o_proj.bias", SM_K_REPL, 0, SM_U_NONE, SM_C_OUTBIAS, 0,
            1, SM_D_HID, SM_D_ANY),
    SM_RULE(PV2_ATT "k_layernorm.weight", PV2_ATT "k_layernorm.weight", SM_K_REPL, 0, SM_U_NONE,
            SM_C_ALL, 0, 1, SM_D_HD, SM_D_ANY),
    SM_RULE3(PV2_ATT "param_sink_key", PV2_ATT "param_sink_key", SM_K_SINKKV, 0, SM_U_NONE,
             SM_C_ALL, 0, SM_D_SINKS, SM_D_KVH, SM_D_HD),
    SM_RULE3(PV2_ATT "param_sink_value", PV2_ATT "param_sink_value", SM_K_SINKKV, 0, SM_U_NONE,
             SM_C_ALL, 0, SM_D_SINKS, SM_D_KVH, SM_D_VHD),
    DEEPSEEK_RULES_MOE,
    SM_RULE(SM_LAYER "mlp.e_score_correction_bias", SM_LAYER "mlp.gate.e_score_correction_bias",
            SM_K_REPL, 0, SM_U_NONE, SM_C_RBIAS, 0, 1, SM_D_E, SM_D_ANY),
};

/* OpenPanguMoEModel raises "No MOE layer found" without one. */
static int pangu_v2_check(const ckpt_config *c, wt_errbuf *err)
{
	return shardmap_pangu_moe_layers(c, "openPangu-Pro-MoE-V2", err);
}

static const char *const pangu_v2_archs[] = {"PanguProMoEV2ForCausalLM", NULL};

const sm_family shardmap_family_pangu_pro_moe_v2 = {
    .name = "pangu_pro_moe_v2",
    .archs = pangu_v2_archs,
    .rules = pangu_v2_rules,
    .n_rules = SM_NRULES(pangu_v2_rules),
    .layer_is_moe = shardmap_moe_glm4,
    .drop_extra_layers = true,
    .layer_prefix = "model.layers.",
    .check = pangu_v2_check,
    .moe_keys = "first_k_dense_replace",
    .attn_bias_key = "bias",
    .out_bias_key = "bias",
    .qkv_v_head_dim = true,
    .kv_divides_tp = true,
    .vllm_py = "openpangu",
};
