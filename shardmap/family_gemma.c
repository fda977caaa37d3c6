/*
 * family_gemma.c — Gemma 2 and the text-only Gemma 3 (Gemma3ForCausalLM), tables
 * only; Gemma (1) is Llama's table (family_llama.c), the multimodal Gemma 3
 * family_gemma3.c.
 *
 * Their tensors carry Llama's names; Gemma 2 and 3 add a norm before and after
 * the MLP (`pre_feedforward_layernorm`, `post_feedforward_layernorm`), Gemma 3
 * the per-head `q_norm` / `k_norm` of Qwen3. Norm weights are stored as the
 * offset from 1 (the engine computes x * (1 + w)); they are replicated as
 * stored. `head_dim` is given (256 for most sizes; H x head_dim need not equal
 * hidden_size). The word embeddings are tied: transformers' Gemma configs
 * default to it and save_pretrained omits the key, hence `tie_default`.
 */
#include "shardmap/family_rules.h"

static const sm_rule gemma2_rules[] = {
    SM_RULES_TOP,
    SM_RULES_LNORM,
    SM_RULE_GEMMA_NORM("pre_feedforward_layernorm"),
    SM_RULE_GEMMA_NORM("post_feedforward_layernorm"),
    SM_RULES_ATTN,
    SM_RULES_MLP("mlp.", SM_D_I, SM_U_I, SM_C_ALL),
};

/* VaultGemma (VaultGemmaForCausalLM, google/vaultgemma-1b): Gemma 2's decoder without its
 * post norms (no post_attention_layernorm / post_feedforward_layernorm): input_layernorm
 * and pre_feedforward_layernorm only, replicated as stored. vLLM has no VaultGemma model;
 * its table follows Gemma 2's (gemma2.py). */
static const sm_rule vaultgemma_rules[] = {
    SM_RULES_TOP,
    SM_RULE_GEMMA_NORM("input_layernorm"),
    SM_RULE_GEMMA_NORM("pre_feedforward_layernorm"),
    SM_RULES_ATTN,
    SM_RULES_MLP("mlp.", SM_D_I, SM_U_I, SM_C_ALL),
};

static const sm_rule gemma3_rules[] = {SM_RULES_GEMMA3_LM("")};

static const char *const gemma2_archs[] = {"Gemma2ForCausalLM", NULL};
static const char *const gemma3_archs[] = {"Gemma3ForCausalLM", NULL};

const sm_family shardmap_family_gemma2 = {
    .name = "gemma2",
    .archs = gemma2_archs,
    .rules = gemma2_rules,
    .n_rules = SM_NRULES(gemma2_rules),
    .layer_prefix = "model.layers.",
    .tie_default = true,
};
const sm_family shardmap_family_gemma3_text = {
    .name = "gemma3_text",
    .archs = gemma3_archs,
    .rules = gemma3_rules,
    .n_rules = SM_NRULES(gemma3_rules),
    .layer_prefix = "model.layers.",
    .tie_default = true,
};

static const char *const vaultgemma_archs[] = {"VaultGemmaForCausalLM", NULL};

/* VaultGemmaConfig ties by default, as Gemma 2's */
const sm_family shardmap_family_vaultgemma = {
    .name = "vaultgemma",
    .archs = vaultgemma_archs,
    .rules = vaultgemma_rules,
    .n_rules = SM_NRULES(vaultgemma_rules),
    .layer_prefix = "model.layers.",
    .tie_default = true,
};
