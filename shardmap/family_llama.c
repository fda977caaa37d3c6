/*
 * family_llama.c — dense decoder families: Llama, Mistral, Qwen2, Qwen3, Gemma, Phi-3,
 * StarCoder2, GLM-4, OLMo 2, Granite, OLMo 1 (tables only), OLMo 3 (OLMo 2's table and a
 * layer_types check), EXAONE 4.0, Seed-OSS, SmolLM3 (tables, SmolLM3's layer_types
 * check), Ministral, MiniCPM (Ministral's table), InternLM3 (Seed-OSS's table).
 */
#include <inttypes.h>

#include "shardmap/family_rules.h"

static const sm_rule llama_rules[] = {
    SM_RULES_TOP,
    SM_RULES_LNORM,
    SM_RULES_ATTN,
    SM_RULES_MLP("mlp.", SM_D_I, SM_U_I, SM_C_ALL),
};

static const sm_rule qwen3_rules[] = {
    SM_RULES_TOP,     SM_RULES_LNORM, SM_RULES_ATTN, SM_RULES_MLP("mlp.", SM_D_I, SM_U_I, SM_C_ALL),
    SM_RULES_QK_NORM,
};

/* Phi-3 (Phi-3, Phi-3.5-mini, Phi-4, Phi-4-mini): q/k/v and gate/up come fused
 * in the checkpoint under the runtime names; each rank gets Llama's
 * [q_r; k_r; v_r] (kv heads replicated when KV < T) and [gate_r ; up_r]. */
static const sm_rule phi3_rules[] = {
    SM_RULES_TOP,
    SM_RULES_LNORM,
    SM_RULES_PHI3_ATTN,
    SM_RULES_MLP_FUSED,
};

/* GLM-4 (GlmForCausalLM: glm-4-9b-*-hf): Llama's attention (q/k/v biases), gate/up
 * fused in the checkpoint as Phi-3's; GLM-4-0414 (Glm4ForCausalLM) adds a norm
 * after attention and after the MLP. */
static const sm_rule glm_rules[] = {
    SM_RULES_TOP,
    SM_RULES_LNORM,
    SM_RULES_ATTN,
    SM_RULES_MLP_FUSED,
};
static const sm_rule glm4_rules[] = {
    SM_RULES_TOP, SM_RULES_LNORM, SM_RULES_GLM4_NORMS, SM_RULES_ATTN, SM_RULES_MLP_FUSED,
};

/* OLMo 2 (Olmo2ForCausalLM): no input_layernorm; post_attention_layernorm and
 * post_feedforward_layernorm norm the block outputs; q_norm / k_norm span the
 * whole q ([H*d]) and k ([KV*d]) and are replicated in full (SM_RULES_QK_NORM_FULL). */
static const sm_rule olmo2_rules[] = {
    SM_RULES_TOP,
    SM_RULES_POST_NORMS,
    SM_RULES_QK_NORM_FULL,
    SM_RULES_ATTN,
    SM_RULES_MLP("mlp.", SM_D_I, SM_U_I, SM_C_ALL),
};

/* EXAONE 4.0 (Exaone4ForCausalLM): OLMo 2's post norms (no input_layernorm), Qwen3's
 * per-head q_norm / k_norm [d] replicated, Llama's attention and MLP without biases
 * (Exaone4Attention's Linears have none: a bias is refused as unknown). */
static const sm_rule exaone4_rules[] = {
    SM_RULES_TOP,
    SM_RULES_POST_NORMS,
    SM_RULES_QK_NORM,
    SM_QKV_W("q", 0, SM_D_Q),
    SM_QKV_W("k", 1, SM_D_KV),
    SM_QKV_W("v", 2, SM_D_KV),
    SM_RULE(SM_LAYER "self_attn.o_proj.weight", SM_LAYER "self_attn.o_proj.weight", SM_K_COLS, 0,
            SM_U_HEADS, SM_C_ALL, SM_F_QUANT, 2, SM_D_HID, SM_D_Q),
    SM_RULES_MLP("mlp.", SM_D_I, SM_U_I, SM_C_ALL),
};

/* OLMo 1 (OlmoForCausalLM, OLMo-1B-hf / 7B-hf): Llama's attention (biases when
 * attention_bias), MLP, embedding and lm_head; its LayerNorms have no weight or bias,
 * so the checkpoint holds no norm tensor at all (a stray one is refused as unknown). */
static const sm_rule olmo_rules[] = {
    SM_RULE("model.embed_tokens.weight", "model.embed_tokens.weight", SM_K_VOCAB, 0, SM_U_NONE,
            SM_C_ALL, 0, 2, SM_D_V, SM_D_HID),
    SM_RULE("lm_head.weight", "lm_head.weight", SM_K_VOCAB, 0, SM_U_NONE, SM_C_ALL, SM_F_LMHEAD, 2,
            SM_D_V, SM_D_HID),
    SM_RULES_ATTN,
    SM_RULES_MLP("mlp.", SM_D_I, SM_U_I, SM_C_ALL),
};

/* StarCoder2: LayerNorms with biases, Llama's attention (biases when use_bias),
 * a plain GELU MLP c_fc (rows) / c_proj (columns, bias replicated). */
#define SC2_NORM_BIAS(x)                                                                           \
	SM_RULE(x ".bias", x ".bias", SM_K_REPL, 0, SM_U_NONE, SM_C_ALL, 0, 1, SM_D_HID, SM_D_ANY)
static const sm_rule starcoder2_rules[] = {
    SM_RULES_TOP,
    SC2_NORM_BIAS("model.norm"),
    SM_RULES_LNORM,
    SC2_NORM_BIAS(SM_LAYER "input_layernorm"),
    SC2_NORM_BIAS(SM_LAYER "post_attention_layernorm"),
    SM_RULES_ATTN,
    SM_RULE(SM_LAYER "mlp.c_fc.weight", SM_LAYER "mlp.c_fc.weight", SM_K_ROWS, 0, SM_U_I, SM_C_ALL,
            SM_F_QUANT, 2, SM_D_I, SM_D_HID),
    SM_RULE(SM_LAYER "mlp.c_fc.bias", SM_LAYER "mlp.c_fc.bias", SM_K_ROWS, 0, SM_U_I, SM_C_ALL,
            SM_F_OPT, 1, SM_D_I, SM_D_ANY),
    SM_RULE(SM_LAYER "mlp.c_proj.weight", SM_LAYER "mlp.c_proj.weight", SM_K_COLS, 0, SM_U_I,
            SM_C_ALL, SM_F_QUANT, 2, SM_D_HID, SM_D_I),
    SM_RULE(SM_LAYER "mlp.c_proj.bias", SM_LAYER "mlp.c_proj.bias", SM_K_REPL, 0, SM_U_NONE,
            SM_C_ALL, SM_F_OPT, 1, SM_D_HID, SM_D_ANY),
};

/* Seed-OSS (modeling_seed_oss.py, transformers 4.57.1): Llama's table whose biases follow
 * SeedOssConfig's three switches, each required when true and unknown when false:
 * attention_bias (default true) the q/k/v biases (fused), attention_out_bias o_proj's
 * (replicated), mlp_bias gate / up (merged by rows) and down (replicated). */
#define SEED_QKV_B(x, part, d)                                                                     \
	SM_RULE(SM_LAYER "self_attn." x "_proj.bias", SM_LAYER "self_attn.qkv_proj.bias",          \
	        SM_K_QKV, part, SM_U_HEADS, SM_C_ATTNBIAS, 0, 1, d, SM_D_ANY)
static const sm_rule seed_oss_rules[] = {
    SM_RULES_TOP,
    SM_RULES_LNORM,
    SM_QKV_W("q", 0, SM_D_Q),
    SM_QKV_W("k", 1, SM_D_KV),
    SM_QKV_W("v", 2, SM_D_KV),
    SEED_QKV_B("q", 0, SM_D_Q),
    SEED_QKV_B("k", 1, SM_D_KV),
    SEED_QKV_B("v", 2, SM_D_KV),
    SM_RULE(SM_LAYER "self_attn.o_proj.weight", SM_LAYER "self_attn.o_proj.weight", SM_K_COLS, 0,
            SM_U_HEADS, SM_C_ALL, SM_F_QUANT, 2, SM_D_HID, SM_D_Q),
    SM_RULE(SM_LAYER "self_attn.o_proj.bias", SM_LAYER "self_attn.o_proj.bias", SM_K_REPL, 0,
            SM_U_NONE, SM_C_OUTBIAS, 0, 1, SM_D_HID, SM_D_ANY),
    SM_RULES_MLP_SWITCHED,
};

/* SmolLM3 (modeling_smollm3.py, transformers 4.57.1): Llama's table; attention_bias gives
 * q/k/v AND o_proj their biases, mlp_bias the MLP's, each required when true and unknown
 * when false (both default false). NoPE layers and sliding windows are math. */
static const sm_rule smollm3_rules[] = {
    SM_RULES_TOP,
    SM_RULES_LNORM,
    SM_RULES_ATTN_SWITCHED,
    SM_RULES_MLP_SWITCHED,
};

/* SmolLM3's layer_types as layer_type_validation and SmolLM3Model read them (the
 * hybrid sliding-window families' check). */
static int smollm3_check(const ckpt_config *c, wt_errbuf *err)
{
	return shardmap_check_swa_layer_types(c, "SmolLM3", err);
}

/* LLaMAForCausalLM: the name transformers' first conversion script wrote
 * (decapoda-research/llama-*-hf); IQuestCoderForCausalLM (IQuestLab's IQuest-Coder-V1, remote
 * code, model_type iquestcoder: its keys config_iquestcoder.c's); vLLM's registry maps both onto
 * the same LlamaForCausalLM. */
static const char *const llama_archs[] = {"LlamaForCausalLM", "LLaMAForCausalLM",
                                          "IQuestCoderForCausalLM", NULL};
/* GritLM (parasail-ai/GritLM-7B-vllm: GritLM/GritLM-7B under vLLM's name): gritlm.py's GritLM
 * subclasses LlamaForCausalLM and keeps its load_weights, lm_head included, in both runners (the
 * pooling runner only turns is_causal off); its config is Mistral's. */
static const char *const mistral_archs[] = {"MistralForCausalLM", "GritLM", NULL};
static const char *const qwen2_archs[] = {"Qwen2ForCausalLM", NULL};
static const char *const qwen3_archs[] = {"Qwen3ForCausalLM", NULL};
static const char *const phi3_archs[] = {"Phi3ForCausalLM", NULL};
static const char *const gemma_archs[] = {"GemmaForCausalLM", NULL};
static const char *const starcoder2_archs[] = {"Starcoder2ForCausalLM", NULL};
static const char *const glm_archs[] = {"GlmForCausalLM", NULL};
static const char *const glm4_archs[] = {"Glm4ForCausalLM", NULL};
static const char *const olmo2_archs[] = {"Olmo2ForCausalLM", NULL};
static const char *const granite_archs[] = {"GraniteForCausalLM", NULL};
static const char *const olmo_archs[] = {"OlmoForCausalLM", NULL};
static const char *const olmo3_archs[] = {"Olmo3ForCausalLM", NULL};
static const char *const exaone4_archs[] = {"Exaone4ForCausalLM", NULL};
static const char *const seed_oss_archs[] = {"SeedOssForCausalLM", NULL};
static const char *const smollm3_archs[] = {"SmolLM3ForCausalLM", NULL};
/* CwmForCausalLM (facebook/cwm, cwm-sft, cwm-pretrain): vLLM's registry maps it onto llama.py's
 * LlamaForCausalLM, whose attention windows the layers layer_types names sliding; no biases
 * (CwmConfig has no attention_bias), so Ministral's reading (below) is its own. */
static const char *const ministral_archs[] = {"MinistralForCausalLM", "CwmForCausalLM", NULL};

const sm_family shardmap_family_llama = {
    "llama", llama_archs, llama_rules, SM_NRULES(llama_rules), NULL, false, "model.layers."};
const sm_family shardmap_family_mistral = {
    "mistral", mistral_archs, llama_rules, SM_NRULES(llama_rules), NULL, false, "model.layers."};
const sm_family shardmap_family_qwen2 = {
    "qwen2", qwen2_archs, llama_rules, SM_NRULES(llama_rules), NULL, false, "model.layers."};
const sm_family shardmap_family_qwen3 = {
    "qwen3", qwen3_archs, qwen3_rules, SM_NRULES(qwen3_rules), NULL, false, "model.layers."};
const sm_family shardmap_family_phi3 = {"phi3", phi3_archs, phi3_rules,     SM_NRULES(phi3_rules),
                                        NULL,   false,      "model.layers."};
/* Gemma: Llama's names (head_dim given); tied when config.json omits the key
 * (family_gemma.c says why) */
const sm_family shardmap_family_gemma = {
    .name = "gemma",
    .archs = gemma_archs,
    .rules = llama_rules,
    .n_rules = SM_NRULES(llama_rules),
    .layer_prefix = "model.layers.",
    .tie_default = true,
};
/* StarCoder2's config class leaves tie_word_embeddings at transformers' default
 * (true), and save_pretrained then omits it */
const sm_family shardmap_family_starcoder2 = {
    .name = "starcoder2",
    .archs = starcoder2_archs,
    .rules = starcoder2_rules,
    .n_rules = SM_NRULES(starcoder2_rules),
    .layer_prefix = "model.layers.",
    .tie_default = true,
};
const sm_family shardmap_family_glm = {"glm", glm_archs, glm_rules,      SM_NRULES(glm_rules),
                                       NULL,  false,     "model.layers."};
const sm_family shardmap_family_glm4 = {"glm4", glm4_archs, glm4_rules,     SM_NRULES(glm4_rules),
                                        NULL,   false,      "model.layers."};
const sm_family shardmap_family_olmo2 = {
    "olmo2", olmo2_archs, olmo2_rules, SM_NRULES(olmo2_rules), NULL, false, "model.layers."};
/* Granite (IBM Granite 3.x): Llama's names; its embedding / residual / attention
 * multipliers and logits_scaling are math, not layout */
const sm_family shardmap_family_granite = {
    "granite", granite_archs, llama_rules, SM_NRULES(llama_rules), NULL, false, "model.layers."};
/* OLMo 1: OlmoConfig unties by default (OLMo-1B-hf sets tie_word_embeddings true) */
const sm_family shardmap_family_olmo = {"olmo", olmo_archs, olmo_rules,     SM_NRULES(olmo_rules),
                                        NULL,   false,      "model.layers."};

/* OLMo 3 (Olmo3ForCausalLM, transformers 4.57.1 modeling_olmo3.py): OLMo 2's tensors, names
 * and shapes exactly; its sliding_attention / full_attention layers (layer_types, or
 * Olmo3Config's every-fourth-layer-full default) and their two RoPEs are math, not layout.
 * Olmo3Config unties by default. */
static int olmo3_check(const ckpt_config *c, wt_errbuf *err)
{
	return shardmap_check_swa_layer_types(c, "OLMo 3", err);
}
const sm_family shardmap_family_olmo3 = {
    .name = "olmo3",
    .archs = olmo3_archs,
    .rules = olmo2_rules,
    .n_rules = SM_NRULES(olmo2_rules),
    .layer_prefix = "model.layers.",
    .check = olmo3_check,
};

/* EXAONE 4.0 (Exaone4ForCausalLM, transformers 4.57.1 modeling_exaone4.py): its hybrid
 * layers (layer_types, or Exaone4Config's sliding_window_pattern rule) and the global
 * layers' NoPE are math, not layout. Exaone4Config unties by default (EXAONE-4.0-1.2B
 * sets tie_word_embeddings true). */
static int exaone4_check(const ckpt_config *c, wt_errbuf *err)
{
	return shardmap_check_swa_layer_types(c, "EXAONE 4.0", err);
}
const sm_family shardmap_family_exaone4 = {
    .name = "exaone4",
    .archs = exaone4_archs,
    .rules = exaone4_rules,
    .n_rules = SM_NRULES(exaone4_rules),
    .layer_prefix = "model.layers.",
    .check = exaone4_check,
};

/* Seed-OSS: SeedOssConfig unties by default (tie_word_embeddings=False) */
const sm_family shardmap_family_seed_oss = {
    .name = "seed_oss",
    .archs = seed_oss_archs,
    .rules = seed_oss_rules,
    .n_rules = SM_NRULES(seed_oss_rules),
    .layer_prefix = "model.layers.",
};
/* SmolLM3: SmolLM3Config passes no tie_word_embeddings, so PretrainedConfig's true holds
 * when config.json leaves it out (SmolLM3-3B's does) */
const sm_family shardmap_family_smollm3 = {
    .name = "smollm3",
    .archs = smollm3_archs,
    .rules = smollm3_rules,
    .n_rules = SM_NRULES(smollm3_rules),
    .layer_prefix = "model.layers.",
    .check = smollm3_check,
    .tie_default = true,
};

/* Ministral's layer_types (MinistralConfig, transformers 4.57.1) as the hybrid sliding-window
 * families check them. */
static int ministral_check(const ckpt_config *c, wt_errbuf *err)
{
	return shardmap_check_swa_layer_types(c, "Ministral", err);
}

/* Ministral (MinistralForCausalLM, Ministral-8B-Instruct-2410): Mistral's tensors exactly, cut
 * as vLLM's llama.py loads them (its registry maps the architecture there): no biases anywhere
 * (MinistralAttention / MinistralMLP build every Linear with bias=False, and vLLM's llama.py
 * builds none without attention_bias / mlp_bias, which MinistralConfig lacks), so a bias is an
 * unknown tensor; the per-layer sliding / full attention (layer_types, sliding_window) is math.
 * MinistralConfig unties. MINISTRAL_ATTN: family_rules.h. */
static const sm_rule ministral_rules[] = {
    SM_RULES_TOP,
    SM_RULES_LNORM,
    MINISTRAL_ATTN,
    SM_RULES_MLP_NOBIAS,
};

const sm_family shardmap_family_ministral = {
    .name = "ministral",
    .archs = ministral_archs,
    .rules = ministral_rules,
    .n_rules = SM_NRULES(ministral_rules),
    .layer_prefix = "model.layers.",
    .check = ministral_check,
};

/* MiniCPM (MiniCPMForCausalLM, remote code: openbmb/MiniCPM-2B-sft / -dpo, MiniCPM-1B,
 * MiniCPM-2B-128k; MiniCPM-MoE-8x2B with num_experts > 0), cut as vLLM's minicpm.py loads it:
 * Llama's names and Ministral's table without biases (MiniCPMAttention / MiniCPMMLP build every
 * Linear with bias=False; the loader refuses attention_bias true, so a bias tensor is unknown):
 * q/k/v fused by heads into qkv_proj (kv heads replicated when KV < T), gate / up merged by
 * rows into gate_up_proj, o_proj / down_proj by columns, every Linear quantized, embed_tokens /
 * lm_head by padded vocabulary rows, norms replicated. scale_emb, scale_depth and
 * dim_model_base are math, not layout. MiniCPMConfig ties by default (MiniCPM-2B's config.json
 * leaves the key out).
 *
 * With num_experts > 0 every layer's MLP is vLLM's MiniCPMMoE instead, which is not FusedMoE:
 * the router mlp.gate [E, hid] is a ReplicatedLinear built with quant_config=None (whole on
 * every rank, never quantized); every rank holds ALL experts, each cut by tp as its
 * weight_loader narrows them: mlp.ws [E, 2*I/T, hid] = [w1 rows of rank r; w3 rows of rank r]
 * per expert, mlp.w2s [E, hid, I/T] = w2's columns of rank r, I = intermediate_size; both plain
 * nn.Parameters in params_dtype, so never quantized. No expert parallelism (tp_experts). */
static const sm_rule minicpm_rules[] = {
    SM_RULES_TOP,
    SM_RULES_LNORM,
    MINISTRAL_ATTN,
    SM_RULES_MLP_NOBIAS_IF(SM_C_DENSE),
    SM_RULE_ROUTER("mlp.gate.weight", 2, SM_D_E, SM_D_HID),
    SM_RULES_EXPERTS_AS("mlp.experts.", "w1", "w3", "w2", "mlp.ws", "mlp.w2s", 0),
};

static const char *const minicpm_archs[] = {"MiniCPMForCausalLM", NULL};

const sm_family shardmap_family_minicpm = {
    .name = "minicpm",
    .archs = minicpm_archs,
    .rules = minicpm_rules,
    .n_rules = SM_NRULES(minicpm_rules),
    .layer_is_moe = shardmap_moe_all,
    .layer_prefix = "model.layers.",
    .tie_default = true,
    .moe_keys = "num_experts",
    .tp_experts = true,
};

/* InternLM3 (InternLM3ForCausalLM, remote code: internlm/internlm3-8b-instruct), cut as vLLM's
 * llama.py loads it (its registry maps the architecture to LlamaForCausalLM): Seed-OSS's table,
 * whose three switches the loader sets as vLLM's LlamaDecoderLayer reads InternLM3Config
 * (loader/config_internlm3.c): qkv_bias gives the q/k/v biases (fused by heads as the weights),
 * bias (or attention_bias) o_proj's (replicated), mlp_bias the MLP's; each bias required when
 * its switch is true and unknown when false (the release has none). InternLM3Config unties. */
static const char *const internlm3_archs[] = {"InternLM3ForCausalLM", NULL};

const sm_family shardmap_family_internlm3 = {
    .name = "internlm3",
    .archs = internlm3_archs,
    .rules = seed_oss_rules,
    .n_rules = SM_NRULES(seed_oss_rules),
    .layer_prefix = "model.layers.",
    .attn_bias_key = "qkv_bias",
    .out_bias_key = "bias",
};

/* InternLM, first generation (InternLMForCausalLM, remote code: internlm/internlm-7b, -20b and
 * their chat models), cut as vLLM's llama.py loads it (its registry maps the architecture to
 * LlamaForCausalLM): InternLM3's reading of Seed-OSS's table, the switches set by the loader
 * (loader/config_internlm3.c) from `attention_bias or bias` (InternLMConfig's bias defaults to
 * true: the release's q/k/v and o_proj all carry biases; a config.json's qkv_bias, if any, gives
 * q/k/v's). q/k/v biases fused by heads as the weights, o_proj's replicated (RowParallelLinear
 * adds it once); each bias required when its switch is true and unknown when false.
 * InternLMConfig unties. */
static const char *const internlm_archs[] = {"InternLMForCausalLM", NULL};

const sm_family shardmap_family_internlm = {
    .name = "internlm",
    .archs = internlm_archs,
    .rules = seed_oss_rules,
    .n_rules = SM_NRULES(seed_oss_rules),
    .layer_prefix = "model.layers.",
    .attn_bias_key = "bias",
    .out_bias_key = "bias",
};

/* Xverse (XverseForCausalLM, remote code: xverse/XVERSE-7B, -13B, -65B and their chat models),
 * cut as vLLM's llama.py loads it (its registry maps the architecture to LlamaForCausalLM):
 * InternLM's reading of Seed-OSS's table, the switches set by the loader
 * (loader/config_internlm3.c) as vLLM's LlamaDecoderLayer reads a config.json: `attention_bias or
 * bias` for o_proj's bias and q/k/v's (unless qkv_bias is given), mlp_bias the MLP's.
 * XverseConfig has none of these keys, so the releases carry no bias; a bias is required when
 * its switch is true and unknown when false. MHA unless num_key_value_heads is given (XVERSE-65B);
 * XverseConfig unties. */
static const char *const xverse_archs[] = {"XverseForCausalLM", NULL};

const sm_family shardmap_family_xverse = {
    .name = "xverse",
    .archs = xverse_archs,
    .rules = seed_oss_rules,
    .n_rules = SM_NRULES(seed_oss_rules),
    .layer_prefix = "model.layers.",
    .attn_bias_key = "bias",
    .out_bias_key = "bias",
};

/* Aquila (AquilaForCausalLM / AquilaModel, remote code: BAAI/Aquila-7B, AquilaChat-7B, Aquila2-7B,
 * AquilaChat2-7B, -34B), cut as vLLM's llama.py loads it (its registry maps both architectures to
 * LlamaForCausalLM): Xverse's reading (Seed-OSS's table under Llama's bias switches, none of
 * which AquilaConfig has, so the releases carry no bias). MHA unless num_key_value_heads is given
 * (Aquila2-34B); AquilaConfig unties. */
static const char *const aquila_archs[] = {"AquilaForCausalLM", "AquilaModel", NULL};

const sm_family shardmap_family_aquila = {
    .name = "aquila",
    .archs = aquila_archs,
    .rules = seed_oss_rules,
    .n_rules = SM_NRULES(seed_oss_rules),
    .layer_prefix = "model.layers.",
    .attn_bias_key = "bias",
    .out_bias_key = "bias",
};

/* Tele-FLM (TeleFLMForCausalLM, remote code: CofeAI/Tele-FLM (FLM-2-52B), FLM-2-52B-Instruct,
 * Tele-FLM-1T), cut as vLLM's teleflm.py loads it: its TeleFLMForCausalLM subclasses
 * LlamaForCausalLM and keeps its load_weights, so Xverse's reading (Seed-OSS's table under
 * Llama's bias switches; the releases carry no bias). The muP multipliers (use_mup: input_mult on
 * the embeddings, output_mult / mup_scale_factor on the logits) change no tensor; the loader
 * checks them (loader/config_teleflm.c), the reference applies them. */
static const char *const teleflm_archs[] = {"TeleFLMForCausalLM", NULL};

const sm_family shardmap_family_teleflm = {
    .name = "teleflm",
    .archs = teleflm_archs,
    .rules = seed_oss_rules,
    .n_rules = SM_NRULES(seed_oss_rules),
    .layer_prefix = "model.layers.",
    .attn_bias_key = "bias",
    .out_bias_key = "bias",
};

/* Solar (SolarForCausalLM, remote code: upstage/solar-pro-preview-instruct), cut as vLLM's
 * solar.py loads it: Llama's modules under Llama's names (SolarModel.load_weights fuses q / k / v
 * into qkv_proj and gate / up into gate_up_proj; AutoWeightsLoader skips rotary_emb.inv_freq), so
 * Seed-OSS's table; the switches set by the loader (loader/config_solar.c): `attention_bias or
 * bias` gives q/k/v's and o_proj's biases alike (SolarAttention builds both with one bias; no
 * qkv_bias), mlp_bias the MLP's; a bias required when its switch is true and unknown when false.
 * The block skip connections (bskcn_*) mix layer inputs and store nothing. SolarConfig unties. */
static const char *const solar_archs[] = {"SolarForCausalLM", NULL};

const sm_family shardmap_family_solar = {
    .name = "solar",
    .archs = solar_archs,
    .rules = seed_oss_rules,
    .n_rules = SM_NRULES(seed_oss_rules),
    .layer_prefix = "model.layers.",
    .attn_bias_key = "bias",
    .out_bias_key = "bias",
};

/* openPangu-Embedded (PanguEmbeddedForCausalLM, remote code: FreedomIntelligence / Huawei's
 * openPangu-Embedded-1B and -7B, -7B-V1.1), cut as vLLM's openpangu.py loads it for a config
 * without MLA, sink-attention or MoE keys (the loader refuses those, loader/config_pangu.c):
 * OpenPanguEmbeddedAttention is Llama's QKVParallelLinear / RowParallelLinear under Llama's
 * names with the switches of vLLM's LlamaDecoderLayer (`attention_bias or bias` for o_proj's and
 * q/k/v's bias, qkv_bias for q/k/v's when given, mlp_bias the MLP's), OpenPanguMLP Llama's
 * gate_up_proj / down_proj, three RMSNorms: Seed-OSS's table under Xverse's reading.
 * PanguEmbeddedConfig's bias defaults to true, so the releases carry q/k/v and o_proj biases
 * (q/k/v's fused by heads as the weights, o_proj's whole); untied by default. */
static const char *const pangu_dense_archs[] = {"PanguEmbeddedForCausalLM", NULL};

const sm_family shardmap_family_pangu_dense = {
    .name = "pangu_dense",
    .archs = pangu_dense_archs,
    .rules = seed_oss_rules,
    .n_rules = SM_NRULES(seed_oss_rules),
    .layer_prefix = "model.layers.",
    .attn_bias_key = "bias",
    .out_bias_key = "bias",
};
