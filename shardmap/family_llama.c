/* family_llama.c — dense decoder families: Llama, Mistral, Qwen2, Qwen3 (tables only). */
#include "shardmap/family_rules.h"

static const sm_rule llama_rules[] = {
    SM_RULES_TOP,
    SM_RULES_LNORM,
    SM_RULES_ATTN,
    SM_RULES_MLP("mlp.", SM_D_I, SM_U_I, SM_C_ALL),
};

static const sm_rule qwen3_rules[] = {
    SM_RULES_TOP,
    SM_RULES_LNORM,
    SM_RULES_ATTN,
    SM_RULES_MLP("mlp.", SM_D_I, SM_U_I, SM_C_ALL),
    SM_RULE(SM_LAYER "self_attn.q_norm.weight", SM_LAYER "self_attn.q_norm.weight", SM_K_REPL, 0,
            SM_U_NONE, SM_C_ALL, 0, 1, SM_D_HD, SM_D_ANY),
    SM_RULE(SM_LAYER "self_attn.k_norm.weight", SM_LAYER "self_attn.k_norm.weight", SM_K_REPL, 0,
            SM_U_NONE, SM_C_ALL, 0, 1, SM_D_HD, SM_D_ANY),
};

static const char *const llama_archs[] = {"LlamaForCausalLM", NULL};
static const char *const mistral_archs[] = {"MistralForCausalLM", NULL};
static const char *const qwen2_archs[] = {"Qwen2ForCausalLM", NULL};
static const char *const qwen3_archs[] = {"Qwen3ForCausalLM", NULL};

const sm_family shardmap_family_llama = {
    "llama", llama_archs, llama_rules, SM_NRULES(llama_rules), NULL, false, "model.layers."};
const sm_family shardmap_family_mistral = {
    "mistral", mistral_archs, llama_rules, SM_NRULES(llama_rules), NULL, false, "model.layers."};
const sm_family shardmap_family_qwen2 = {
    "qwen2", qwen2_archs, llama_rules, SM_NRULES(llama_rules), NULL, false, "model.layers."};
const sm_family shardmap_family_qwen3 = {
    "qwen3", qwen3_archs, qwen3_rules, SM_NRULES(qwen3_rules), NULL, false, "model.layers."};
