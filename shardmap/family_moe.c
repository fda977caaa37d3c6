/*
 * family_moe.c — MoE decoder families: Mixtral, Qwen2-MoE, Qwen3-MoE, OLMoE, GraniteMoE,
 * GraniteMoeShared, PhiMoE (tables + layer hook).
 */
#include "shardmap/family_rules.h"

static const sm_rule mixtral_rules[] = {
    SM_RULES_TOP,
    SM_RULES_LNORM,
    SM_RULES_ATTN,
    SM_RULE_ROUTER("block_sparse_moe.gate.weight", 2, SM_D_E, SM_D_HID),
    SM_RULES_EXPERTS("block_sparse_moe.experts.", "w1", "w3", "w2"),
};

static const sm_rule qwen2_moe_rules[] = {
    SM_RULES_TOP,
    SM_RULES_LNORM,
    SM_RULES_ATTN,
    SM_RULES_MLP("mlp.", SM_D_I, SM_U_I, SM_C_DENSE),
    SM_RULE_ROUTER("mlp.gate.weight", 2, SM_D_E, SM_D_HID),
    SM_RULES_EXPERTS("mlp.experts.", "gate_proj", "up_proj", "down_proj"),
    SM_RULES_MLP("mlp.shared_expert.", SM_D_ISH, SM_U_ISH, SM_C_SHARED),
    SM_RULE(SM_LAYER "mlp.shared_expert_gate.weight", SM_LAYER "mlp.shared_expert_gate.weight",
            SM_K_REPL, 0, SM_U_NONE, SM_C_SHARED, 0, 2, SM_D_ONE, SM_D_HID),
};

static const sm_rule qwen3_moe_rules[] = {
    SM_RULES_TOP,
    SM_RULES_LNORM,
    SM_RULES_ATTN,
    SM_RULES_QK_NORM,
    SM_RULES_MLP("mlp.", SM_D_I, SM_U_I, SM_C_DENSE),
    SM_RULE_ROUTER("mlp.gate.weight", 2, SM_D_E, SM_D_HID),
    SM_RULES_EXPERTS("mlp.experts.", "gate_proj", "up_proj", "down_proj"),
};

/* OLMoE (OlmoeForCausalLM, allenai/OLMoE-1B-7B): Llama's pre-norm decoder, OLMo 2's
 * q_norm / k_norm over all heads (replicated in full), every layer MoE: router
 * mlp.gate, Qwen-MoE's per-expert gate/up/down (intermediate_size is the expert size),
 * no shared expert; runtime names as Qwen3-MoE's. */
static const sm_rule olmoe_rules[] = {
    SM_RULES_TOP,
    SM_RULES_LNORM,
    SM_RULES_ATTN,
    SM_RULES_QK_NORM_FULL,
    SM_RULE_ROUTER("mlp.gate.weight", 2, SM_D_E, SM_D_HID),
    SM_RULES_EXPERTS("mlp.experts.", "gate_proj", "up_proj", "down_proj"),
};

/* FlexOlmo (FlexOlmoForCausalLM, allenai/FlexOlmo-7x7B-1T; vLLM's flex_olmo.py): OLMo 2's
 * decoder (no input_layernorm, post_attention_layernorm / post_feedforward_layernorm on
 * the block outputs, q_norm / k_norm over all heads replicated in full) with OLMoE's MoE
 * in every layer: router mlp.gate, per-expert gate/up/down of intermediate_size. */
static const sm_rule flex_olmo_rules[] = {
    SM_RULES_TOP,
    SM_RULES_POST_NORMS,
    SM_RULES_ATTN,
    SM_RULES_QK_NORM_FULL,
    SM_RULE_ROUTER("mlp.gate.weight", 2, SM_D_E, SM_D_HID),
    SM_RULES_EXPERTS("mlp.experts.", "gate_proj", "up_proj", "down_proj"),
};

/* GraniteMoE (IBM Granite 3.0/3.1 MoE): Llama's attention, every layer MoE with the
 * experts stacked in the checkpoint (block_sparse_moe.input_linear / output_linear); the
 * runtime names are Mixtral's, router included (block_sparse_moe.router.layer ->
 * block_sparse_moe.gate), as engines load it into Mixtral's modules. Its multipliers
 * are math, not layout. */
#define GRANITEMOE_RULES                                                                           \
	SM_RULES_TOP, SM_RULES_LNORM, SM_RULES_ATTN,                                               \
	    SM_RULE(SM_LAYER "block_sparse_moe.router.layer.weight",                               \
	            SM_LAYER "block_sparse_moe.gate.weight", SM_K_REPL, 0, SM_U_NONE, SM_C_MOE, 0, \
	            2, SM_D_E, SM_D_HID),                                                          \
	    SM_RULES_EXPERTS_STACKED("block_sparse_moe.")

static const sm_rule granitemoe_rules[] = {GRANITEMOE_RULES};

/* GraniteMoeShared: + a shared MLP when shared_intermediate_size > 0, gate/up fused in
 * the checkpoint ([gate; up] rows) and kept under its names, as Phi-3's gate_up_proj. */
static const sm_rule granitemoeshared_rules[] = {
    GRANITEMOE_RULES,
    SM_RULE(SM_LAYER "shared_mlp.input_linear.weight", SM_LAYER "shared_mlp.input_linear.weight",
            SM_K_ROWS2, 0, SM_U_ISH, SM_C_SHARED, SM_F_QUANT, 2, SM_D_ISH2, SM_D_HID),
    SM_RULE(SM_LAYER "shared_mlp.output_linear.weight", SM_LAYER "shared_mlp.output_linear.weight",
            SM_K_COLS, 0, SM_U_ISH, SM_C_SHARED, SM_F_QUANT, 2, SM_D_HID, SM_D_ISH),
};

/* PhiMoE (PhiMoEForCausalLM, Phi-3.5-MoE): LayerNorms with biases (as StarCoder2's,
 * replicated), Llama's attention (q/k/v/o biases when attention_bias), Mixtral's router
 * and w1/w3/w2 experts in every layer; lm_head.bias [V] when lm_head_bias: vocab parallel
 * as lm_head's rows (zero padding rows), never quantized, and kept when the embeddings
 * are tied (it is no part of the tie). */
#define PHIMOE_NORM_BIAS(x)                                                                        \
	SM_RULE(x ".bias", x ".bias", SM_K_REPL, 0, SM_U_NONE, SM_C_ALL, 0, 1, SM_D_HID, SM_D_ANY)
static const sm_rule phimoe_rules[] = {
    SM_RULES_TOP,
    PHIMOE_NORM_BIAS("model.norm"),
    SM_RULE("lm_head.bias", "lm_head.bias", SM_K_VOCAB, 0, SM_U_NONE, SM_C_LMBIAS, 0, 1, SM_D_V,
            SM_D_ANY),
    SM_RULES_LNORM,
    PHIMOE_NORM_BIAS(SM_LAYER "input_layernorm"),
    PHIMOE_NORM_BIAS(SM_LAYER "post_attention_layernorm"),
    SM_RULES_ATTN,
    SM_RULE_ROUTER("block_sparse_moe.gate.weight", 2, SM_D_E, SM_D_HID),
    SM_RULES_EXPERTS("block_sparse_moe.experts.", "w1", "w3", "w2"),
};

bool shardmap_moe_all(const ckpt_config *cfg, int64_t i)
{
	(void)i;
	return cfg->num_experts > 0;
}

/* Qwen-MoE: MoE unless listed in mlp_only_layers, every decoder_sparse_step-th layer. */
bool shardmap_moe_qwen(const ckpt_config *cfg, int64_t i)
{
	if (cfg->num_experts <= 0)
		return false;
	for (size_t k = 0; k < cfg->n_mlp_only_layers; k++)
		if (cfg->mlp_only_layers[k] == i)
			return false;
	int64_t step = cfg->decoder_sparse_step > 0 ? cfg->decoder_sparse_step : 1;
	return (i + 1) % step == 0;
}

/* Families whose layers are all MoE: a config without experts (transformers would
 * default the count: GraniteMoE's num_local_experts to 8, OLMoE's num_experts to 64) is
 * refused rather than read as a model without MLPs. */
static int all_moe_check(const ckpt_config *cfg, const char *key, const char *fam, wt_errbuf *err)
{
	if (cfg->num_experts > 0)
		return WT_OK;
	return wt_seterr(err, WT_ECORRUPT,
	                 "config.json: %s needs %s > 0 (every layer is MoE); "
	                 "write the model's expert count into config.json",
	                 cfg->architecture ? cfg->architecture : fam, key);
}

static int granitemoe_check(const ckpt_config *cfg, wt_errbuf *err)
{
	return all_moe_check(cfg, "num_local_experts", "GraniteMoE", err);
}

static int olmoe_check(const ckpt_config *cfg, wt_errbuf *err)
{
	return all_moe_check(cfg, "num_experts", "OLMoE", err);
}

static int flex_olmo_check(const ckpt_config *cfg, wt_errbuf *err)
{
	return all_moe_check(cfg, "num_experts", "FlexOlmo", err);
}

static int phimoe_check(const ckpt_config *cfg, wt_errbuf *err)
{
	return all_moe_check(cfg, "num_local_experts", "PhiMoE", err);
}

static const char *const mixtral_archs[] = {"MixtralForCausalLM", NULL};
static const char *const qwen2_moe_archs[] = {"Qwen2MoeForCausalLM", NULL};
static const char *const qwen3_moe_archs[] = {"Qwen3MoeForCausalLM", NULL};

const sm_family shardmap_family_mixtral = {
    "mixtral",        mixtral_archs, mixtral_rules,  SM_NRULES(mixtral_rules),
    shardmap_moe_all, false,         "model.layers."};
const sm_family shardmap_family_qwen2_moe = {
    "qwen2_moe",       qwen2_moe_archs, qwen2_moe_rules, SM_NRULES(qwen2_moe_rules),
    shardmap_moe_qwen, false,           "model.layers."};
const sm_family shardmap_family_qwen3_moe = {
    "qwen3_moe",       qwen3_moe_archs, qwen3_moe_rules, SM_NRULES(qwen3_moe_rules),
    shardmap_moe_qwen, false,           "model.layers."};

static const char *const olmoe_archs[] = {"OlmoeForCausalLM", NULL};

/* OLMoE's config class leaves tie_word_embeddings false, as Llama's */
const sm_family shardmap_family_olmoe = {
    .name = "olmoe",
    .archs = olmoe_archs,
    .rules = olmoe_rules,
    .n_rules = SM_NRULES(olmoe_rules),
    .layer_is_moe = shardmap_moe_all,
    .layer_prefix = "model.layers.",
    .check = olmoe_check,
};

static const char *const granitemoe_archs[] = {"GraniteMoeForCausalLM", NULL};
static const char *const granitemoeshared_archs[] = {"GraniteMoeSharedForCausalLM", NULL};

const sm_family shardmap_family_granitemoe = {
    .name = "granitemoe",
    .archs = granitemoe_archs,
    .rules = granitemoe_rules,
    .n_rules = SM_NRULES(granitemoe_rules),
    .layer_is_moe = shardmap_moe_all,
    .layer_prefix = "model.layers.",
    .check = granitemoe_check,
};
const sm_family shardmap_family_granitemoeshared = {
    .name = "granitemoeshared",
    .archs = granitemoeshared_archs,
    .rules = granitemoeshared_rules,
    .n_rules = SM_NRULES(granitemoeshared_rules),
    .layer_is_moe = shardmap_moe_all,
    .layer_prefix = "model.layers.",
    .check = granitemoe_check,
};

/* PhiMoEForCausalLM: the released checkpoints (remote code); PhimoeForCausalLM: transformers'
 * own class (4.46+), what its save_pretrained writes */
static const char *const phimoe_archs[] = {"PhiMoEForCausalLM", "PhimoeForCausalLM", NULL};

/* PhimoeConfig leaves tie_word_embeddings false */
const sm_family shardmap_family_phimoe = {
    .name = "phimoe",
    .archs = phimoe_archs,
    .rules = phimoe_rules,
    .n_rules = SM_NRULES(phimoe_rules),
    .layer_is_moe = shardmap_moe_all,
    .layer_prefix = "model.layers.",
    .check = phimoe_check,
};

static const char *const flex_olmo_archs[] = {"FlexOlmoForCausalLM", NULL};

/* FlexOlmoConfig (transformers 4.57.1) leaves tie_word_embeddings false; its clip_qkv is
 * deleted (no clipping) */
const sm_family shardmap_family_flex_olmo = {
    .name = "flex_olmo",
    .archs = flex_olmo_archs,
    .rules = flex_olmo_rules,
    .n_rules = SM_NRULES(flex_olmo_rules),
    .layer_is_moe = shardmap_moe_all,
    .layer_prefix = "model.layers.",
    .check = flex_olmo_check,
};
