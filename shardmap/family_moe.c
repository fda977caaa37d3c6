/* family_moe.c — MoE decoder families: Mixtral, Qwen2-MoE, Qwen3-MoE (tables + layer hook). */
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

static bool all_moe(const ckpt_config *cfg, int64_t i)
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

static const char *const mixtral_archs[] = {"MixtralForCausalLM", NULL};
static const char *const qwen2_moe_archs[] = {"Qwen2MoeForCausalLM", NULL};
static const char *const qwen3_moe_archs[] = {"Qwen3MoeForCausalLM", NULL};

const sm_family shardmap_family_mixtral = {
    "mixtral", mixtral_archs, mixtral_rules,  SM_NRULES(mixtral_rules),
    all_moe,   false,         "model.layers."};
const sm_family shardmap_family_qwen2_moe = {
    "qwen2_moe",       qwen2_moe_archs, qwen2_moe_rules, SM_NRULES(qwen2_moe_rules),
    shardmap_moe_qwen, false,           "model.layers."};
const sm_family shardmap_family_qwen3_moe = {
    "qwen3_moe",       qwen3_moe_archs, qwen3_moe_rules, SM_NRULES(qwen3_moe_rules),
    shardmap_moe_qwen, false,           "model.layers."};
