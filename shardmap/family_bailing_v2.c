/*
 * family_bailing_v2.c — Ling 2.0's Bailing MoE V2 (BailingMoeV2ForCausalLM, model_type
 * bailing_moe_v2: inclusionAI/Ling-mini-2.0, Ling-flash-2.0, Ling-1T, Ring 2.0; remote code),
 * cut as the later vLLM bailing_moe.py loads it (its BailingMoeV2ForCausalLM subclasses
 * BailingMoeForCausalLM unchanged: the V2 keys switch the modules).
 *
 * bailing_moe's names and attention cut (family_bailing.c): model.word_embeddings / lm_head by
 * padded vocabulary rows, norms replicated, attention.query_key_value [q; k; v] by heads into
 * [q_r; k_r; v_r] (its bias with use_qkv_bias), attention.dense by columns. Unlike the first
 * vLLM file, that one builds max(1, KV / tp_size) kv heads, so a kv head is replicated on tp /
 * KV ranks past the kv heads (QKVParallelLinear) as Llama's. With use_qk_norm,
 * attention.query_layernorm / key_layernorm [head_dim] (per-head RMSNorms) replicated. Layers
 * below first_k_dense_replace are BailingMLP (mlp.gate_proj / up_proj merged into gate_up_proj,
 * intermediate_size); the others BailingMoE: mlp.gate [E, hid] (an nn.Linear in router_dtype,
 * never quantized) and mlp.gate.expert_bias [E] (moe_router_enable_expert_bias, the sigmoid
 * router's correction bias) replicated, mlp.experts.{j} stacked as w13_weight / w2_weight,
 * mlp.shared_experts (num_shared_experts x moe_shared_expert_intermediate_size, else x
 * moe_intermediate_size; loader/config_bailing_v2.c) merged into gate_up_proj. The MTP layers
 * (num_nextn_predict_layers: model.layers.{L..}) are no parameter of the model, which vLLM's
 * load_weights skips: dropped. Refusals: loader/config_bailing_v2.c.
 */
#include <inttypes.h>

#include "shardmap/family_rules.h"

static const sm_rule bailing_moe_v2_rules[] = {
    SM_RULES_BAILING_BASE,
    SM_RULE(SM_BAILING_ATTN "query_layernorm.weight", SM_BAILING_ATTN "query_layernorm.weight",
            SM_K_REPL, 0, SM_U_NONE, SM_C_QKNORM, 0, 1, SM_D_HD, SM_D_ANY),
    SM_RULE(SM_BAILING_ATTN "key_layernorm.weight", SM_BAILING_ATTN "key_layernorm.weight",
            SM_K_REPL, 0, SM_U_NONE, SM_C_QKNORM, 0, 1, SM_D_HD, SM_D_ANY),
    SM_RULES_MLP_NOBIAS_IF(SM_C_DENSE),
    SM_RULE_ROUTER("mlp.gate.weight", 2, SM_D_E, SM_D_HID),
    SM_RULE_ROUTER("mlp.gate.expert_bias", 1, SM_D_E, SM_D_ANY),
    SM_RULES_EXPERTS("mlp.experts.", "gate_proj", "up_proj", "down_proj"),
    SM_RULES_MLP_NOBIAS_AT("mlp.shared_experts.", SM_D_ISH, SM_U_ISH, SM_C_SHARED),
};

/* BailingAttention: num_key_value_heads must be given (the class default 0 builds no kv heads)
 * and divide num_attention_heads; the MoE layers need experts. */
static int bailing_moe_v2_check(const ckpt_config *c, wt_errbuf *err)
{
	if (c->num_key_value_heads <= 0 || c->num_attention_heads % c->num_key_value_heads != 0)
		return wt_seterr(
		    err, WT_ECORRUPT,
		    "config.json: num_key_value_heads %" PRId64
		    " does not divide num_attention_heads %" PRId64
		    " (BailingMoeV2Config's default is 0: give the checkpoint's value)",
		    c->num_key_value_heads, c->num_attention_heads);
	if (c->num_experts <= 0 && c->first_k_dense_replace < c->num_hidden_layers)
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: num_experts is 0 but layers %" PRId64 "..%" PRId64
		                 " are BailingMoE blocks (first_k_dense_replace %" PRId64
		                 "): give the checkpoint's num_experts",
		                 c->first_k_dense_replace, c->num_hidden_layers - 1,
		                 c->first_k_dense_replace);
	return WT_OK;
}

static const char *const bailing_moe_v2_archs[] = {"BailingMoeV2ForCausalLM", NULL};

/* A tie is refused by the loader (no Ling 2.0 release ties). */
const sm_family shardmap_family_bailing_moe_v2 = {
    .name = "bailing_moe_v2",
    .archs = bailing_moe_v2_archs,
    .rules = bailing_moe_v2_rules,
    .n_rules = SM_NRULES(bailing_moe_v2_rules),
    .layer_is_moe = shardmap_moe_glm4,
    .drop_extra_layers = true,
    .layer_prefix = "model.layers.",
    .check = bailing_moe_v2_check,
    .attn_bias_key = "use_qkv_bias",
    .moe_keys = "first_k_dense_replace",
};
