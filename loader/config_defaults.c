/*
 * config_defaults.c — the config classes' defaults (transformers) that the loader
 * puts back where config.json leaves a key out (config_lm_view, config_view.c).
 */
#include <stddef.h>
#include <string.h>

#include "loader/config_int.h"

static const class_default gemma3_text_defaults[] = {
    {"vocab_size", false, 262208},
    {"hidden_size", false, 2304},
    {"intermediate_size", false, 9216},
    {"num_hidden_layers", false, 26},
    {"num_attention_heads", false, 8},
    {"num_key_value_heads", false, 4},
    {"head_dim", false, 256},
    {"max_position_embeddings", false, 131072},
    {"query_pre_attn_scalar", false, 256},
    {"sliding_window", false, 4096},
    {"rms_norm_eps", true, 1e-6},
    {"rope_theta", true, 1000000.0},
    {"rope_local_base_freq", true, 10000.0},
};

/* Llama4TextConfig's (transformers 4.54.1): Scout's own dims, so a text_config that
 * save_pretrained wrote for a fine-tuned Scout may carry almost none of them. (The
 * attention knobs the reference alone reads take the same defaults there, where an
 * explicit null stays an error as in transformers.) */
static const class_default llama4_text_defaults[] = {
    {"vocab_size", false, 202048},
    {"hidden_size", false, 5120},
    {"intermediate_size", false, 8192},
    {"intermediate_size_mlp", false, 16384},
    {"num_hidden_layers", false, 48},
    {"num_attention_heads", false, 40},
    {"num_key_value_heads", false, 8},
    {"head_dim", false, 128},
    {"max_position_embeddings", false, 131072},
    {"num_experts_per_tok", false, 1},
    {"num_local_experts", false, 16},
    {"interleave_moe_layer_step", false, 1},
    {"rms_norm_eps", true, 1e-5},
    {"rope_theta", true, 500000.0},
};

/* Qwen3NextConfig's (transformers 4.57.1): Qwen3-Next-80B-A3B's linear-attention and
 * MoE dims; full_attention_interval is the kwargs default the class applies when
 * layer_types is absent. */
static const class_default qwen3_next_defaults[] = {
    {"vocab_size", false, 151936},
    {"hidden_size", false, 2048},
    {"intermediate_size", false, 5632},
    {"num_hidden_layers", false, 48},
    {"num_attention_heads", false, 16},
    {"num_key_value_heads", false, 2},
    {"head_dim", false, 256},
    {"max_position_embeddings", false, 32768},
    {"linear_conv_kernel_dim", false, 4},
    {"linear_key_head_dim", false, 128},
    {"linear_value_head_dim", false, 128},
    {"linear_num_key_heads", false, 16},
    {"linear_num_value_heads", false, 32},
    {"decoder_sparse_step", false, 1},
    {"moe_intermediate_size", false, 512},
    {"shared_expert_intermediate_size", false, 512},
    {"num_experts_per_tok", false, 10},
    {"num_experts", false, 512},
    {"full_attention_interval", false, 4},
    {"rms_norm_eps", true, 1e-6},
    {"rope_theta", true, 10000.0},
    {"partial_rotary_factor", true, 0.25},
};

/* Glm4MoeConfig's (transformers 4.57.1): GLM-4.5-Air's dims. config.json is the
 * top-level config here, which save_pretrained writes whole, but a hand-written one
 * may leave keys out and transformers then builds the model from these; the
 * loader's generic defaults differ for the MoE keys (no experts, no shared expert,
 * every layer MoE, moe_intermediate_size = intermediate_size). */
static const class_default glm4_moe_defaults[] = {
    {"vocab_size", false, 151552},
    {"hidden_size", false, 4096},
    {"intermediate_size", false, 10944},
    {"num_hidden_layers", false, 46},
    {"num_attention_heads", false, 96},
    {"num_key_value_heads", false, 8},
    {"max_position_embeddings", false, 131072},
    {"moe_intermediate_size", false, 1408},
    {"num_experts_per_tok", false, 8},
    {"n_shared_experts", false, 1},
    {"n_routed_experts", false, 128},
    {"n_group", false, 1},
    {"topk_group", false, 1},
    {"first_k_dense_replace", false, 1},
    {"routed_scaling_factor", true, 1.0},
    {"partial_rotary_factor", true, 0.5},
    {"rms_norm_eps", true, 1e-5},
    {"rope_theta", true, 10000.0},
};

/* Ernie4_5Config's (transformers 4.57.1): ERNIE-4.5-0.3B's dims (head_dim 128 given). */
static const class_default ernie4_5_defaults[] = {
    {"vocab_size", false, 103424},      {"hidden_size", false, 1024},
    {"intermediate_size", false, 3072}, {"num_hidden_layers", false, 18},
    {"num_attention_heads", false, 16}, {"num_key_value_heads", false, 2},
    {"head_dim", false, 128},           {"max_position_embeddings", false, 131072},
    {"rms_norm_eps", true, 1e-5},       {"rope_theta", true, 500000.0},
};

/* Ernie4_5_MoeConfig's (transformers 4.57.1): ERNIE-4.5-21B-A3B's dims; no head_dim
 * (hid / H); moe_layer_end_index -1 is the last layer. */
static const class_default ernie4_5_moe_defaults[] = {
    {"vocab_size", false, 103424},
    {"hidden_size", false, 2560},
    {"intermediate_size", false, 12288},
    {"num_hidden_layers", false, 28},
    {"num_attention_heads", false, 20},
    {"num_key_value_heads", false, 4},
    {"max_position_embeddings", false, 131072},
    {"moe_intermediate_size", false, 1536},
    {"moe_k", false, 6},
    {"moe_num_experts", false, 64},
    {"moe_num_shared_experts", false, 2},
    {"moe_layer_start_index", false, 1},
    {"moe_layer_end_index", false, -1},
    {"moe_layer_interval", false, 1},
    {"moe_norm_min", true, 1e-12},
    {"rms_norm_eps", true, 1e-5},
    {"rope_theta", true, 500000.0},
};

/* CohereConfig's and Cohere2Config's (transformers 4.57.1; Command R's dims):
 * num_key_value_heads None becomes num_attention_heads, as the loader's own default
 * does; head_dim is hidden_size / num_attention_heads in both. Cohere2 adds
 * sliding_window. */
static const class_default cohere_defaults[] = {
    {"vocab_size", false, 256000},       {"hidden_size", false, 8192},
    {"intermediate_size", false, 22528}, {"num_hidden_layers", false, 40},
    {"num_attention_heads", false, 64},  {"max_position_embeddings", false, 8192},
    {"logit_scale", true, 0.0625},       {"layer_norm_eps", true, 1e-5},
    {"rope_theta", true, 10000.0},       {"sliding_window", false, 4096},
};
static const class_default cohere2_defaults[] = {
    {"vocab_size", false, 256000},       {"hidden_size", false, 8192},
    {"intermediate_size", false, 22528}, {"num_hidden_layers", false, 40},
    {"num_attention_heads", false, 64},  {"max_position_embeddings", false, 8192},
    {"logit_scale", true, 0.0625},       {"layer_norm_eps", true, 1e-5},
    {"rope_theta", true, 10000.0},
};

/* Qwen3VLTextConfig's and Qwen3VLMoeTextConfig's (transformers 4.57.1; Qwen3-VL-4B's and
 * Qwen3-VL-30B-A3B's sizes). Both leave num_key_value_heads at their own default (32, 16),
 * not num_attention_heads, when it is absent; the MoE text config's head_dim is
 * hidden_size / num_attention_heads (the loader's default), the dense one's 128. The MoE
 * config's decoder_sparse_step 1 and mlp_only_layers [] are the loader's defaults too. */
static const class_default qwen3_vl_text_defaults[] = {
    {"vocab_size", false, 151936},
    {"hidden_size", false, 4096},
    {"intermediate_size", false, 22016},
    {"num_hidden_layers", false, 32},
    {"num_attention_heads", false, 32},
    {"num_key_value_heads", false, 32},
    {"head_dim", false, 128},
    {"max_position_embeddings", false, 128000},
    {"rms_norm_eps", true, 1e-6},
    {"rope_theta", true, 5000000.0},
};
static const class_default qwen3_vl_moe_text_defaults[] = {
    {"vocab_size", false, 151936},
    {"hidden_size", false, 2048},
    {"intermediate_size", false, 5632},
    {"num_hidden_layers", false, 24},
    {"num_attention_heads", false, 16},
    {"num_key_value_heads", false, 16},
    {"max_position_embeddings", false, 128000},
    {"moe_intermediate_size", false, 1408},
    {"num_experts_per_tok", false, 4},
    {"num_experts", false, 60},
    {"rms_norm_eps", true, 1e-6},
    {"rope_theta", true, 5000000.0},
};

/* Olmo3Config's (transformers 4.57.1): num_key_value_heads None becomes
 * num_attention_heads, as the loader's own default does. sliding_window (4096) is left to
 * the reference, which tells an explicit null from an absent key. */
static const class_default olmo3_defaults[] = {
    {"vocab_size", false, 50304},        {"hidden_size", false, 4096},
    {"intermediate_size", false, 11008}, {"num_hidden_layers", false, 32},
    {"num_attention_heads", false, 32},  {"max_position_embeddings", false, 2048},
    {"rms_norm_eps", true, 1e-5},        {"rope_theta", true, 10000.0},
};

/* Exaone4Config's (transformers 4.57.1); sliding_window (4096) is left to the reference,
 * for which an explicit null means no sliding layer (and RoPE on every layer). */
static const class_default exaone4_defaults[] = {
    {"vocab_size", false, 102400},
    {"hidden_size", false, 4096},
    {"intermediate_size", false, 16384},
    {"num_hidden_layers", false, 32},
    {"num_attention_heads", false, 32},
    {"num_key_value_heads", false, 32},
    {"max_position_embeddings", false, 2048},
    {"rms_norm_eps", true, 1e-5},
    {"rope_theta", true, 10000.0},
};

/* Dots1Config's (transformers 4.57.1): dots.llm1's dims but for hidden_size (4608, the
 * released 4096) and its MoE counts, which it leaves None (n_routed_experts,
 * n_shared_experts, num_experts_per_tok: the planner and the reference refuse a config
 * without them). num_key_value_heads is 32 whatever num_attention_heads is; every layer MoE
 * (first_k_dense_replace 0); norm_topk_prob false is a JSON bool the reference defaults
 * itself. sliding_window (4096) is not here: a null one means no sliding layers, and a
 * filled default would turn it into 4096 (the reference reads it; cfg_fam.c). */
static const class_default dots1_defaults[] = {
    {"vocab_size", false, 152064},
    {"hidden_size", false, 4608},
    {"intermediate_size", false, 10944},
    {"moe_intermediate_size", false, 1408},
    {"num_hidden_layers", false, 62},
    {"num_attention_heads", false, 32},
    {"num_key_value_heads", false, 32},
    {"n_group", false, 1},
    {"topk_group", false, 1},
    {"first_k_dense_replace", false, 0},
    {"max_position_embeddings", false, 2048},
    {"max_window_layers", false, 62},
    {"routed_scaling_factor", true, 1.0},
    {"rms_norm_eps", true, 1e-6},
    {"rope_theta", true, 10000.0},
};

/* SeedOssConfig's (transformers 4.57.1): head_dim 128 (not hidden / heads: 4096 / 80 is no
 * integer), attention_bias true (q/k/v biases unless config.json says false); the other
 * two bias switches default false as the loader's do. */
static const class_default seed_oss_defaults[] = {
    {"vocab_size", false, 155136},
    {"hidden_size", false, 4096},
    {"intermediate_size", false, 27648},
    {"num_hidden_layers", false, 64},
    {"num_attention_heads", false, 80},
    {"num_key_value_heads", false, 8},
    {"head_dim", false, 128},
    {"max_position_embeddings", false, 524288},
    {"rms_norm_eps", true, 1e-6},
    {"rope_theta", true, 10000.0},
    {"attention_bias", false, 1, true},
};

/* SmolLM3Config's (transformers 4.57.1): SmolLM3-3B's dims, 4 kv heads whatever the heads,
 * rope_theta 2e6, every no_rope_layer_interval-th (4th) layer NoPE when no_rope_layers is
 * left out (the reference derives the list); tie_word_embeddings is PretrainedConfig's true
 * (the family's tie_default). */
static const class_default smollm3_defaults[] = {
    {"vocab_size", false, 128256},
    {"hidden_size", false, 2048},
    {"intermediate_size", false, 11008},
    {"num_hidden_layers", false, 36},
    {"num_attention_heads", false, 16},
    {"num_key_value_heads", false, 4},
    {"max_position_embeddings", false, 32768},
    {"no_rope_layer_interval", false, 4},
    {"rms_norm_eps", true, 1e-6},
    {"rope_theta", true, 2000000.0},
};

/* MistralConfig's (transformers 4.57.1), the class Mistral3Config builds its text_config
 * with (Mistral-Small-3.1 / 3.2, Magistral Small); head_dim's None means hidden / heads,
 * so it is not put back. */
static const class_default mistral3_text_defaults[] = {
    {"vocab_size", false, 32000},
    {"hidden_size", false, 4096},
    {"intermediate_size", false, 14336},
    {"num_hidden_layers", false, 32},
    {"num_attention_heads", false, 32},
    {"num_key_value_heads", false, 8},
    {"max_position_embeddings", false, 131072},
    {"rms_norm_eps", true, 1e-6},
    {"rope_theta", true, 10000.0},
};

/* Glm4vTextConfig's (transformers 4.57.1; GLM-4.1V-9B's sizes). The class sets no
 * partial_rotary_factor: the RoPE then spans the whole head (modeling_rope_utils reads 1.0),
 * put back here so the planner's MRoPE check sees what transformers builds. */
static const class_default glm4v_text_defaults[] = {
    {"vocab_size", false, 151552},
    {"hidden_size", false, 4096},
    {"intermediate_size", false, 13696},
    {"num_hidden_layers", false, 40},
    {"num_attention_heads", false, 32},
    {"num_key_value_heads", false, 2},
    {"max_position_embeddings", false, 32768},
    {"partial_rotary_factor", true, 1.0},
    {"rms_norm_eps", true, 1e-5},
    {"rope_theta", true, 10000.0},
};

/* Glm4vMoeTextConfig's (transformers 4.57.1; GLM-4.5V's, GLM-4.5-Air's sizes): as
 * Glm4MoeConfig's but vocab_size 151424 and max_position_embeddings 65536. */
static const class_default glm4v_moe_text_defaults[] = {
    {"vocab_size", false, 151424},
    {"hidden_size", false, 4096},
    {"intermediate_size", false, 10944},
    {"num_hidden_layers", false, 46},
    {"num_attention_heads", false, 96},
    {"num_key_value_heads", false, 8},
    {"max_position_embeddings", false, 65536},
    {"moe_intermediate_size", false, 1408},
    {"num_experts_per_tok", false, 8},
    {"n_shared_experts", false, 1},
    {"n_routed_experts", false, 128},
    {"n_group", false, 1},
    {"topk_group", false, 1},
    {"first_k_dense_replace", false, 1},
    {"routed_scaling_factor", true, 1.0},
    {"partial_rotary_factor", true, 0.5},
    {"rms_norm_eps", true, 1e-5},
    {"rope_theta", true, 10000.0},
};

/* LlamaConfig's (transformers 4.57.1), the class LlavaConfig builds a llama text_config with
 * (llava-1.5's text_config holds little beyond model_type and vocab_size); num_key_value_heads
 * and head_dim's None mean num_attention_heads and hidden / heads, so they are not put back. */
static const class_default llava_llama_defaults[] = {
    {"vocab_size", false, 32000},        {"hidden_size", false, 4096},
    {"intermediate_size", false, 11008}, {"num_hidden_layers", false, 32},
    {"num_attention_heads", false, 32},  {"max_position_embeddings", false, 2048},
    {"rms_norm_eps", true, 1e-6},        {"rope_theta", true, 10000.0},
};

/* GemmaConfig's and Gemma2Config's (transformers 4.57.1), the classes PaliGemmaConfig builds
 * a gemma / gemma2 text_config with (paligemma-3b's text_config gives no head_dim);
 * tie_word_embeddings' true is the family's tie_default. The Gemma 2 attention knobs the
 * reference alone reads take the same defaults there (cfg_gemma.c). */
static const class_default paligemma_gemma_defaults[] = {
    {"vocab_size", false, 256000},
    {"hidden_size", false, 3072},
    {"intermediate_size", false, 24576},
    {"num_hidden_layers", false, 28},
    {"num_attention_heads", false, 16},
    {"num_key_value_heads", false, 16},
    {"head_dim", false, 256},
    {"max_position_embeddings", false, 8192},
    {"rms_norm_eps", true, 1e-6},
    {"rope_theta", true, 10000.0},
};
static const class_default paligemma_gemma2_defaults[] = {
    {"vocab_size", false, 256000},
    {"hidden_size", false, 2304},
    {"intermediate_size", false, 9216},
    {"num_hidden_layers", false, 26},
    {"num_attention_heads", false, 8},
    {"num_key_value_heads", false, 4},
    {"head_dim", false, 256},
    {"max_position_embeddings", false, 8192},
    {"query_pre_attn_scalar", false, 256},
    {"sliding_window", false, 4096},
    {"rms_norm_eps", true, 1e-6},
    {"rope_theta", true, 10000.0},
};

/* Qwen2Config's (transformers 4.57.1), the class LlavaOnevisionConfig builds a qwen2
 * text_config with (num_key_value_heads 32 when absent, not num_attention_heads;
 * tie_word_embeddings false is the family's, use_sliding_window false the reference's) */
static const class_default onevision_qwen2_defaults[] = {
    {"vocab_size", false, 151936},
    {"hidden_size", false, 4096},
    {"intermediate_size", false, 22016},
    {"num_hidden_layers", false, 32},
    {"num_attention_heads", false, 32},
    {"num_key_value_heads", false, 32},
    {"max_position_embeddings", false, 32768},
    {"rms_norm_eps", true, 1e-6},
    {"rope_theta", true, 10000.0},
};

/* Qwen3Config's (transformers 4.57.1), for InternVL3.5's qwen3 text_config (head_dim 128,
 * not hidden_size / heads; untied) */
static const class_default qwen3_defaults[] = {
    {"vocab_size", false, 151936},
    {"hidden_size", false, 4096},
    {"intermediate_size", false, 22016},
    {"num_hidden_layers", false, 32},
    {"num_attention_heads", false, 32},
    {"num_key_value_heads", false, 32},
    {"head_dim", false, 128},
    {"max_position_embeddings", false, 32768},
    {"rms_norm_eps", true, 1e-6},
    {"rope_theta", true, 10000.0},
};

/* Qwen3MoeConfig's (transformers 4.57.1), for InternVL3.5's qwen3_moe text_config: 128
 * experts of 768, top 8 (Qwen3-30B-A3B's); no head_dim key (hidden_size / heads, the loader's
 * default); decoder_sparse_step 1, mlp_only_layers [] the loader's, norm_topk_prob false the
 * reference's; untied */
static const class_default qwen3_moe_defaults[] = {
    {"vocab_size", false, 151936},
    {"hidden_size", false, 2048},
    {"intermediate_size", false, 6144},
    {"num_hidden_layers", false, 24},
    {"num_attention_heads", false, 32},
    {"num_key_value_heads", false, 4},
    {"max_position_embeddings", false, 32768},
    {"moe_intermediate_size", false, 768},
    {"num_experts_per_tok", false, 8},
    {"num_experts", false, 128},
    {"rms_norm_eps", true, 1e-6},
    {"rope_theta", true, 10000.0},
};

#define CLASS(mt, tab)                                                                             \
	{                                                                                          \
		mt, tab, sizeof(tab) / sizeof(tab[0])                                              \
	}

/* model_type -> its config class's defaults. Llama4Config builds its text_config as a
 * Llama4TextConfig; Gemma3ForConditionalGeneration's text_config is a Gemma3TextConfig
 * even when it does not say so (Gemma3Config builds one from whatever it holds); so do
 * Qwen3VLConfig and Qwen3VLMoeConfig theirs. Mistral3Config's text_config is a
 * MistralConfig (model_type mistral), whose defaults fill it under mistral3 only:
 * MistralForCausalLM's own config.json keeps its required keys required. */
static const struct {
	const char *model_type;
	const class_default *defaults;
	size_t n;
} classes[] = {
    CLASS("qwen3_next", qwen3_next_defaults),
    CLASS("glm4_moe", glm4_moe_defaults),
    CLASS("ernie4_5", ernie4_5_defaults),
    CLASS("ernie4_5_moe", ernie4_5_moe_defaults),
    CLASS("cohere", cohere_defaults),
    CLASS("cohere2", cohere2_defaults),
    CLASS("olmo3", olmo3_defaults),
    CLASS("exaone4", exaone4_defaults),
    CLASS("dots1", dots1_defaults),
    CLASS("seed_oss", seed_oss_defaults),
    CLASS("smollm3", smollm3_defaults),
    CLASS("llama4_text", llama4_text_defaults),
    CLASS("llama4", llama4_text_defaults),
    CLASS("gemma3_text", gemma3_text_defaults),
    CLASS("gemma3", gemma3_text_defaults),
    CLASS("qwen3_vl_text", qwen3_vl_text_defaults),
    CLASS("qwen3_vl", qwen3_vl_text_defaults),
    CLASS("qwen3_vl_moe_text", qwen3_vl_moe_text_defaults),
    CLASS("qwen3_vl_moe", qwen3_vl_moe_text_defaults),
    CLASS("mistral3", mistral3_text_defaults),
    CLASS("glm4v_text", glm4v_text_defaults),
    CLASS("glm4v", glm4v_text_defaults),
    CLASS("glm4v_moe_text", glm4v_moe_text_defaults),
    CLASS("glm4v_moe", glm4v_moe_text_defaults),
    /* LLaVA's text_config (config_lm_view names them by the text model's model_type) */
    CLASS("llava:llama", llava_llama_defaults),
    CLASS("llava:mistral", mistral3_text_defaults),
    /* Idefics3's / SmolVLM's llama text_config (config_lm_view names it so): LlamaConfig's */
    CLASS("idefics3:llama", llava_llama_defaults),
    /* PaliGemma's gemma / gemma2 text_config (config_lm_view names them so) */
    CLASS("paligemma:gemma", paligemma_gemma_defaults),
    CLASS("paligemma:gemma2", paligemma_gemma2_defaults),
    /* LLaVA-OneVision's qwen2 text_config (config_lm_view names it so): Qwen2Config's */
    CLASS("llava_onevision:qwen2", onevision_qwen2_defaults),
    /* Qwen2-Audio's qwen2 text_config (config_lm_view names it so): Qwen2Config's */
    CLASS("qwen2_audio:qwen2", onevision_qwen2_defaults),
    /* Audio Flamingo 3's qwen2 text_config (config_lm_view names it so): Qwen2Config's */
    CLASS("audioflamingo3:qwen2", onevision_qwen2_defaults),
    /* InternVL's qwen2 text_config (config_lm_view names it so): Qwen2Config's */
    CLASS("internvl:qwen2", onevision_qwen2_defaults),
    /* InternVL3.5's qwen3 text_config (config_lm_view names it so): Qwen3Config's */
    CLASS("internvl:qwen3", qwen3_defaults),
    /* InternVL3.5's qwen3_moe text_config (config_lm_view names it so): Qwen3MoeConfig's */
    CLASS("internvl:qwen3_moe", qwen3_moe_defaults),
    /* MiniCPM-V's flat config read as its version's class (config_lm_view names it so):
     * LlamaConfig's (2.5, 4.0), Qwen2Config's (2.6), Qwen3Config's (4.5) */
    CLASS("minicpmv:llama", llava_llama_defaults),
    CLASS("minicpmv:qwen2", onevision_qwen2_defaults),
    CLASS("minicpmv:qwen3", qwen3_defaults),
    /* dots.ocr's top level (DotsOCRConfig subclasses Qwen2Config): Qwen2Config's */
    CLASS("dots_ocr", onevision_qwen2_defaults),
    /* Isaac's top level (vLLM's IsaacConfig subclasses Qwen3Config): Qwen3Config's */
    CLASS("isaac", qwen3_defaults),
};

/* The class defaults of the language model whose model_type is mt, or NULL. */
const class_default *config_class_defaults(const char *mt, size_t *n)
{
	if (mt == NULL)
		return NULL;
	for (size_t i = 0; i < sizeof(classes) / sizeof(classes[0]); i++)
		if (strcmp(mt, classes[i].model_type) == 0) {
			*n = classes[i].n;
			return classes[i].defaults;
		}
	return config_class_defaults_more(mt, n);
}
