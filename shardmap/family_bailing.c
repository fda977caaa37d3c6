/*
 * family_bailing.c — Ling's Bailing MoE (BailingMoeForCausalLM, model_type bailing_moe:
 * inclusionAI/Ling-lite, Ling-plus, Ling-Coder-lite; remote code), cut as the first vLLM
 * bailing_moe.py that defines the class loads it.
 *
 * Names are kept: model.word_embeddings (VocabParallelEmbedding) and lm_head (ParallelLMHead,
 * quantized) by padded vocabulary rows, model.norm and each layer's input_layernorm /
 * post_attention_layernorm replicated. attention.query_key_value [(H + 2*KV)*d, hid] holds
 * contiguous [q; k; v] rows; vLLM's default loader hands it whole to a QKVParallelLinear,
 * which cuts it into the rank's [q_r; k_r; v_r] by heads (SM_K_QKVC), its bias (use_qkv_bias)
 * alike; that vLLM asserts num_key_value_heads % tp_size == 0, so kv heads are never
 * replicated (kv_divides_tp). attention.dense by columns. Every layer is an MoE block:
 * mlp.gate [E, hid] a ReplicatedLinear built with quant_config None (replicated, never
 * quantized), mlp.experts.{j}.gate/up/down_proj stacked as FusedMoE's w13_weight / w2_weight,
 * mlp.shared_experts (num_shared_experts x moe_intermediate_size) merged into gate_up_proj
 * like a dense MLP. norm_head: that vLLM normalizes lm_head.weight's columns only inside
 * BailingMoeModel.load_weights, which never receives lm_head.weight (AutoWeightsLoader hands
 * it to the ParallelLMHead), so its parameter holds the checkpoint's rows unchanged, as here.
 * use_bias, a tied head, first_k_dense_replace > 0, q/k norms and hidden_act other than silu
 * are refused by the loader (loader/config_bailing.c).
 */
#include <inttypes.h>

#include "shardmap/family_rules.h"

static const sm_rule bailing_moe_rules[] = {
    SM_RULES_BAILING_BASE,
    SM_RULE_ROUTER("mlp.gate.weight", 2, SM_D_E, SM_D_HID),
    SM_RULES_EXPERTS("mlp.experts.", "gate_proj", "up_proj", "down_proj"),
    SM_RULES_MLP_NOBIAS_AT("mlp.shared_experts.", SM_D_ISH, SM_U_ISH, SM_C_SHARED),
};

/* BailingAttention: head_dim config.head_dim or hid / H; num_key_value_heads must be given
 * (BailingMoeConfig's default 0 builds no kv heads) and divide num_attention_heads. */
static int bailing_moe_check(const ckpt_config *c, wt_errbuf *err)
{
	if (c->num_key_value_heads <= 0 || c->num_attention_heads % c->num_key_value_heads != 0)
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: num_key_value_heads %" PRId64
		                 " does not divide num_attention_heads %" PRId64
		                 " (BailingMoeConfig's default is 0: give the checkpoint's value)",
		                 c->num_key_value_heads, c->num_attention_heads);
	if (c->num_experts <= 0)
		return wt_seterr(
		    err, WT_ECORRUPT,
		    "config.json: num_experts is 0; every BailingMoeBlock of vLLM's "
		    "bailing_moe.py is an MoE block: give the checkpoint's num_experts");
	return WT_OK;
}

static const char *const bailing_moe_archs[] = {"BailingMoeForCausalLM", NULL};

/* BailingMoeConfig does not tie (tie_word_embeddings false; true is refused by the loader) */
const sm_family shardmap_family_bailing_moe = {
    .name = "bailing_moe",
    .archs = bailing_moe_archs,
    .rules = bailing_moe_rules,
    .n_rules = SM_NRULES(bailing_moe_rules),
    .layer_is_moe = shardmap_moe_all,
    .layer_prefix = "model.layers.",
    .check = bailing_moe_check,
    .attn_bias_key = "use_qkv_bias",
    .kv_divides_tp = true,
};
