/*
 * family_cohere.c — Cohere Command R / R+ (CohereForCausalLM, cohere) and Command R7B /
 * Command A (Cohere2ForCausalLM, cohere2), as transformers 4.57.1 names the tensors:
 * one input_layernorm per layer feeding attention and the MLP in parallel (no
 * post_attention_layernorm), LayerNorm weights without biases, Llama's q/k/v/o (biases
 * when attention_bias) and gate/up/down, tied embeddings unless config.json says
 * otherwise (both config classes default tie_word_embeddings to true).
 *
 * Command R+ (use_qk_norm true) adds per-head LayerNorm weights self_attn.q_norm [H, d]
 * and self_attn.k_norm [KV, d]. They are split by heads as q_proj and k_proj are: rank r
 * holds q heads [r*H/T, (r+1)*H/T) of q_norm (SM_K_ROWS over heads) and the rows of the
 * k heads its k_proj slice holds (SM_K_KVH: KV/T heads, or the one head it shares with
 * T/KV - 1 other ranks when KV < T).
 */
#include <inttypes.h>

#include "shardmap/family_rules.h"

static const sm_rule cohere_rules[] = {
    SM_RULES_TOP,
    SM_RULE(SM_LAYER "input_layernorm.weight", SM_LAYER "input_layernorm.weight", SM_K_REPL, 0,
            SM_U_NONE, SM_C_ALL, 0, 1, SM_D_HID, SM_D_ANY),
    SM_RULES_ATTN,
    SM_RULES_MLP("mlp.", SM_D_I, SM_U_I, SM_C_ALL),
    SM_RULE(SM_LAYER "self_attn.q_norm.weight", SM_LAYER "self_attn.q_norm.weight", SM_K_ROWS, 0,
            SM_U_HEADS, SM_C_QKNORM, 0, 2, SM_D_H, SM_D_HD),
    SM_RULE(SM_LAYER "self_attn.k_norm.weight", SM_LAYER "self_attn.k_norm.weight", SM_K_KVH, 0,
            SM_U_HEADS, SM_C_QKNORM, 0, 2, SM_D_KVH, SM_D_HD),
};

/* Cohere2 has no q/k norms (Cohere2Config has no use_qk_norm): the same table without
 * them, so a q_norm / k_norm tensor is refused as unknown. */
static const sm_rule cohere2_rules[] = {
    SM_RULES_TOP,
    SM_RULE(SM_LAYER "input_layernorm.weight", SM_LAYER "input_layernorm.weight", SM_K_REPL, 0,
            SM_U_NONE, SM_C_ALL, 0, 1, SM_D_HID, SM_D_ANY),
    SM_RULES_ATTN,
    SM_RULES_MLP("mlp.", SM_D_I, SM_U_I, SM_C_ALL),
};

/* layer_types as transformers' layer_type_validation checks it (one entry per layer), and
 * only the two types the hybrid sliding-window families build masks for (any other is a
 * KeyError in their models' mask mapping): Cohere2, OLMo 3, EXAONE 4.0, SmolLM3 (fam names
 * them). */
int shardmap_check_swa_layer_types(const ckpt_config *c, const char *fam, wt_errbuf *err)
{
	if (!c->has_layer_types)
		return WT_OK;
	if ((uint64_t)c->num_hidden_layers != c->n_layer_types)
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: layer_types has %zu entries but num_hidden_layers "
		                 "is %" PRId64 "; give one type per layer",
		                 c->n_layer_types, c->num_hidden_layers);
	for (size_t k = 0; k < c->n_layer_types; k++)
		if (c->layer_types[k] != CKPT_LAYER_SLIDING_ATTN &&
		    c->layer_types[k] != CKPT_LAYER_FULL_ATTN)
			return wt_seterr(err, WT_ECORRUPT,
			                 "config.json: layer_types[%zu] is neither "
			                 "\"sliding_attention\" nor \"full_attention\", the two "
			                 "%s layer types",
			                 k, fam);
	return WT_OK;
}

static int cohere2_check(const ckpt_config *c, wt_errbuf *err)
{
	return shardmap_check_swa_layer_types(c, "Cohere2", err);
}

static const char *const cohere_archs[] = {"CohereForCausalLM", NULL};
static const char *const cohere2_archs[] = {"Cohere2ForCausalLM", NULL};

const sm_family shardmap_family_cohere = {
    .name = "cohere",
    .archs = cohere_archs,
    .rules = cohere_rules,
    .n_rules = SM_NRULES(cohere_rules),
    .layer_prefix = "model.layers.",
    .tie_default = true,
};
const sm_family shardmap_family_cohere2 = {
    .name = "cohere2",
    .archs = cohere2_archs,
    .rules = cohere2_rules,
    .n_rules = SM_NRULES(cohere2_rules),
    .layer_prefix = "model.layers.",
    .check = cohere2_check,
    .tie_default = true,
};
