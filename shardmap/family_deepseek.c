/*
 * family_deepseek.c — DeepSeek-V3 and DeepSeek-V2: MLA attention, dense-then-MoE
 * MLP; V3's MTP layers (index >= num_hidden_layers) dropped. V2 (V2, V2.5,
 * V2-Lite, Coder-V2) has the same tensors without V3's
 * gate.e_score_correction_bias, and no MTP layers (a layer past the config is
 * an error there, as for the other families). GLM-4.5 / 4.6 (Glm4MoeForCausalLM):
 * V3's MoE rows and MTP drop under Llama's attention. dots.llm1 (Dots1ForCausalLM): V3's
 * MoE rows under Qwen3's attention, no MTP. DeepSeek-MoE (DeepseekForCausalLM, model_type
 * deepseek): V2's MoE rows under Llama's attention, no MTP.
 */
#include <inttypes.h>

#include "shardmap/family_rules.h"

#define SM_ATT SM_LAYER "self_attn."

/* Every DeepSeek row but V3's e_score_correction_bias. */
#define DEEPSEEK_RULES_COMMON                                                                      \
	SM_RULES_TOP, SM_RULES_LNORM, SM_RULES_MLA("self_attn."), DEEPSEEK_RULES_MOE

static const sm_rule deepseek_rules[] = {
    DEEPSEEK_RULES_COMMON,
    SM_RULE_ROUTER("mlp.gate.e_score_correction_bias", 1, SM_D_E, SM_D_ANY),
};

/* DeepSeek-V3.2 (DeepseekV32ForCausalLM, model_type deepseek_v32), as vLLM's deepseek_v2.py
 * loads it (its DeepseekV3ForCausalLM with is_v32: index_topk in the config): V3's rows, and in
 * every layer's attention the lightning indexer, each tensor a ReplicatedLinear / LayerNorm
 * served whole to every rank: wq_b [index_n_heads x index_head_dim, q_lora_rank] and wk
 * [index_head_dim, hidden] quantized as q_a_proj is (wq_b built with the quant_config, wk too
 * in the first V3.2 Indexer, as the FP8 releases store it; the stored deepseek_v2.py fuses wk
 * into its BF16 wk_weights_proj, dequantizing an FP8 wk with its block or per-channel scale on
 * load), weights_proj [index_n_heads, hidden] (built
 * without the quant_config: never quantized, BF16 in the FP8 releases) and k_norm's LayerNorm
 * weight and bias [index_head_dim] kept. The index sizes are the loader's checks
 * (config_deepseek_v32.c); the planner checks the extents it can derive (q_lora_rank, hid). */
#define SM_IDX SM_ATT "indexer."
#define DSV32_IDX(x, flags, nd, d0, d1)                                                            \
	SM_RULE(SM_IDX x, SM_IDX x, SM_K_REPL, 0, SM_U_NONE, SM_C_ALL, flags, nd, d0, d1)
static const sm_rule deepseek_v32_rules[] = {
    DEEPSEEK_RULES_COMMON,
    SM_RULE_ROUTER("mlp.gate.e_score_correction_bias", 1, SM_D_E, SM_D_ANY),
    DSV32_IDX("wq_b.weight", SM_F_QUANT, 2, SM_D_ANY, SM_D_QLORA),
    DSV32_IDX("wk.weight", SM_F_QUANT, 2, SM_D_ANY, SM_D_HID),
    DSV32_IDX("k_norm.weight", 0, 1, SM_D_ANY, SM_D_ANY),
    DSV32_IDX("k_norm.bias", 0, 1, SM_D_ANY, SM_D_ANY),
    DSV32_IDX("weights_proj.weight", 0, 2, SM_D_ANY, SM_D_HID),
};

static const sm_rule deepseek_v2_rules[] = {
    DEEPSEEK_RULES_COMMON,
};

/* GLM-4.5 / 4.6 (modeling_glm4_moe.py, vLLM glm4_moe.py): q/k/v (+ biases with
 * attention_bias) fused, o_proj by columns, per-head q_norm / k_norm [head_dim]
 * replicated when use_qk_norm (and only then); V3's MoE rows, correction bias
 * included. */
static const sm_rule glm4_moe_rules[] = {
    SM_RULES_TOP,
    SM_RULES_LNORM,
    SM_RULES_ATTN,
    SM_RULE(SM_ATT "q_norm.weight", SM_ATT "q_norm.weight", SM_K_REPL, 0, SM_U_NONE, SM_C_QKNORM, 0,
            1, SM_D_HD, SM_D_ANY),
    SM_RULE(SM_ATT "k_norm.weight", SM_ATT "k_norm.weight", SM_K_REPL, 0, SM_U_NONE, SM_C_QKNORM, 0,
            1, SM_D_HD, SM_D_ANY),
    DEEPSEEK_RULES_MOE,
    SM_RULE_ROUTER("mlp.gate.e_score_correction_bias", 1, SM_D_E, SM_D_ANY),
};

/* dots.llm1 (modeling_dots1.py, transformers 4.57.1): Qwen3's attention
 * (q/k/v/o, their biases exactly when attention_bias, per-head q_norm / k_norm [head_dim] on
 * every layer, replicated) over GLM-4.5's MoE rows: V3's dense MLP below
 * first_k_dense_replace, router and correction bias replicated, routed experts,
 * n_shared_experts shared experts. */
static const sm_rule dots1_rules[] = {
    SM_RULES_TOP,           SM_RULES_LNORM,
    SM_RULES_ATTN_SWITCHED, SM_RULES_QK_NORM,
    DEEPSEEK_RULES_MOE,     SM_RULE_ROUTER("mlp.gate.e_score_correction_bias", 1, SM_D_E, SM_D_ANY),
};

/* DeepSeek-MoE (DeepseekForCausalLM, model_type deepseek: deepseek-ai/deepseek-moe-16b-base,
 * -chat; remote code), cut as vLLM's deepseek_v2.py loads it (its DeepseekForCausalLM is
 * DeepseekV2ForCausalLM, whose layers take DeepseekAttention for model_type deepseek):
 * q_proj / k_proj / v_proj fused by heads into qkv_proj (QKVParallelLinear without bias: a bias
 * tensor is unknown, attention_bias true refused by the loader), o_proj by columns; V2's MoE
 * rows: the dense MLP below first_k_dense_replace and off moe_layer_freq, router mlp.gate
 * replicated, routed experts stacked, n_shared_experts shared experts merged. */
static const sm_rule deepseek_moe_rules[] = {
    SM_RULES_TOP,
    SM_RULES_LNORM,
    SM_RULES_ATTN_SWITCHED,
    DEEPSEEK_RULES_MOE,
};

/* MoE from first_k_dense_replace on, every moe_layer_freq-th layer. */
bool shardmap_moe_deepseek(const ckpt_config *cfg, int64_t i)
{
	if (cfg->num_experts <= 0)
		return false;
	int64_t freq = cfg->moe_layer_freq > 0 ? cfg->moe_layer_freq : 1;
	return i >= cfg->first_k_dense_replace && i % freq == 0;
}

/* Glm4MoeDecoderLayer, Dots1DecoderLayer, Glm4vMoeTextDecoderLayer: MoE from
 * first_k_dense_replace on (no moe_layer_freq). */
bool shardmap_moe_glm4(const ckpt_config *cfg, int64_t i)
{
	return cfg->num_experts > 0 && i >= cfg->first_k_dense_replace;
}

/* Dots1Config leaves n_routed_experts and n_shared_experts None: a config.json without
 * them builds no MoE layer in transformers (Dots1MoE multiplies by None), so it is refused
 * instead of read as a dense model whose MoE tensors would then be unknown. */
static int dots1_check(const ckpt_config *c, wt_errbuf *err)
{
	if (c->first_k_dense_replace >= c->num_hidden_layers)
		return WT_OK; /* every layer dense: Dots1MLP only */
	if (c->num_experts <= 0)
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: dots1 layers %" PRId64 "..%" PRId64
		                 " are MoE (first_k_dense_replace %" PRId64
		                 ") but n_routed_experts is missing or 0 (Dots1Config's default is "
		                 "None); give n_routed_experts",
		                 c->first_k_dense_replace, c->num_hidden_layers - 1,
		                 c->first_k_dense_replace);
	if (c->n_shared_experts <= 0)
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: dots1's MoE layers have n_shared_experts shared "
		                 "experts, but n_shared_experts is missing or 0 (Dots1Config's "
		                 "default is None); give n_shared_experts (dots.llm1: 2)");
	return WT_OK;
}

/* vLLM's DeepseekAttention builds its heads hidden_size / num_attention_heads wide whatever
 * head_dim says (DeepseekConfig has no head_dim). */
static int deepseek_moe_check(const ckpt_config *c, wt_errbuf *err)
{
	return shardmap_check_head_quotient(c, "hidden_size", "num_attention_heads", "head_dim",
	                                    err);
}

static const char *const deepseek_archs[] = {"DeepseekV3ForCausalLM", NULL};
static const char *const deepseek_v32_archs[] = {"DeepseekV32ForCausalLM", NULL};
static const char *const glm4_moe_archs[] = {"Glm4MoeForCausalLM", NULL};
static const char *const deepseek_v2_archs[] = {"DeepseekV2ForCausalLM", NULL};
static const char *const dots1_archs[] = {"Dots1ForCausalLM", NULL};
static const char *const deepseek_moe_archs[] = {"DeepseekForCausalLM", NULL};
static const char *const mistral_large3_archs[] = {"MistralLarge3ForCausalLM", NULL};

const sm_family shardmap_family_deepseek_v3 = {
    "deepseek_v3",         deepseek_archs, deepseek_rules, SM_NRULES(deepseek_rules),
    shardmap_moe_deepseek, true,           "model.layers."};
/* vLLM's Indexer projects q_a_proj's output (wq_b over q_lora_rank): a V3.2 without
 * q_lora_rank cannot be built. */
static int deepseek_v32_check(const ckpt_config *c, wt_errbuf *err)
{
	if (c->q_lora_rank <= 0)
		return wt_seterr(
		    err, WT_ECORRUPT,
		    "config.json: DeepSeek-V3.2's indexer reads q_a_proj's output "
		    "(vLLM's Indexer builds wq_b over q_lora_rank), but q_lora_rank is "
		    "missing or null; give q_lora_rank (DeepSeek-V3.2: 1536)");
	return WT_OK;
}

/* V3.2's MTP layer (model.layers.61.* in DeepSeek-V3.2-Exp), its indexer included, is dropped
 * as V3's. */
const sm_family shardmap_family_deepseek_v32 = {
    .name = "deepseek_v32",
    .archs = deepseek_v32_archs,
    .rules = deepseek_v32_rules,
    .n_rules = SM_NRULES(deepseek_v32_rules),
    .layer_is_moe = shardmap_moe_deepseek,
    .drop_extra_layers = true,
    .layer_prefix = "model.layers.",
    .check = deepseek_v32_check,
};
const sm_family shardmap_family_deepseek_v2 = {
    .name = "deepseek_v2",
    .archs = deepseek_v2_archs,
    .rules = deepseek_v2_rules,
    .n_rules = SM_NRULES(deepseek_v2_rules),
    .layer_is_moe = shardmap_moe_deepseek,
    .layer_prefix = "model.layers.",
};
/* GLM-4.5's MTP layers (num_nextn_predict_layers; model.layers.92.* in GLM-4.5,
 * .46.* in GLM-4.5-Air) are dropped as V3's. */
const sm_family shardmap_family_glm4_moe = {
    .name = "glm4_moe",
    .archs = glm4_moe_archs,
    .rules = glm4_moe_rules,
    .n_rules = SM_NRULES(glm4_moe_rules),
    .layer_is_moe = shardmap_moe_glm4,
    .drop_extra_layers = true,
    .layer_prefix = "model.layers.",
};
/* dots.llm1 has no MTP layer: a layer past num_hidden_layers is an error. */
const sm_family shardmap_family_dots1 = {
    .name = "dots1",
    .archs = dots1_archs,
    .rules = dots1_rules,
    .n_rules = SM_NRULES(dots1_rules),
    .layer_is_moe = shardmap_moe_glm4,
    .layer_prefix = "model.layers.",
    .check = dots1_check,
    .moe_keys = "first_k_dense_replace",
};
/* DeepSeek-MoE has no MTP layer (DeepseekConfig has no num_nextn_predict_layers): a layer past
 * num_hidden_layers is an error. DeepseekConfig unties (the loader refuses a tie: vLLM's head
 * is always lm_head.weight). */
const sm_family shardmap_family_deepseek = {
    .name = "deepseek",
    .archs = deepseek_moe_archs,
    .rules = deepseek_moe_rules,
    .n_rules = SM_NRULES(deepseek_moe_rules),
    .layer_is_moe = shardmap_moe_deepseek,
    .layer_prefix = "model.layers.",
    .check = deepseek_moe_check,
    .moe_keys = "first_k_dense_replace, moe_layer_freq",
};
/* Mistral-Large-3 (MistralLarge3ForCausalLM: vLLM's mistral_large_3.py, its DeepseekV3ForCausalLM
 * over Mistral's native names, which the loader renames: config_mistral_ml3.c): V3's MLA and MoE
 * rows without gate.e_score_correction_bias (configs/mistral.py sets topk_method None, so
 * DeepseekV2MoE builds no correction bias) and no MTP layer (a layer past n_layers is an error). */
const sm_family shardmap_family_mistral_large3 = {
    .name = "mistral_large3",
    .archs = mistral_large3_archs,
    .rules = deepseek_v2_rules,
    .n_rules = SM_NRULES(deepseek_v2_rules),
    .layer_is_moe = shardmap_moe_deepseek,
    .layer_prefix = "model.layers.",
};
