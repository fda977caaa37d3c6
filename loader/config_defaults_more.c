/*
 * config_defaults_more.c — config_defaults.c's tables, continued: the config classes'
 * defaults (transformers 4.57.1) of the text families from Apertus to LongCat-Flash, put back
 * where config.json leaves a key out (config_lm_view, config_view.c).
 */
#include <stddef.h>
#include <string.h>

#include "loader/config_int.h"

/* ApertusConfig's (transformers 4.57.1): Apertus-8B's dims; num_key_value_heads None
 * becomes num_attention_heads, as the loader's own default does; rope_theta 1.2e7. Its
 * default rope_scaling (llama3, factor 8, original 8192, low 1, high 4) is the
 * reference's (cfg_apertus.c): the loader does not read RoPE scaling. */
static const class_default apertus_defaults[] = {
    {"vocab_size", false, 131072},       {"hidden_size", false, 4096},
    {"intermediate_size", false, 14336}, {"num_hidden_layers", false, 32},
    {"num_attention_heads", false, 32},  {"max_position_embeddings", false, 65536},
    {"rms_norm_eps", true, 1e-5},        {"rope_theta", true, 12000000.0},
};

/* ArceeConfig's (transformers 4.57.1): num_key_value_heads None becomes num_attention_heads
 * and head_dim None hidden_size / num_attention_heads, as the loader's own defaults do;
 * rope_scaling None (none). */
static const class_default arcee_defaults[] = {
    {"vocab_size", false, 32000},        {"hidden_size", false, 2560},
    {"intermediate_size", false, 18432}, {"num_hidden_layers", false, 32},
    {"num_attention_heads", false, 32},  {"max_position_embeddings", false, 4096},
    {"rms_norm_eps", true, 1e-5},        {"rope_theta", true, 10000.0},
};

/* Lfm2Config's (transformers 4.57.1): LFM2-2.6B-like dims, tied embeddings, norm_eps (its
 * name for the RMSNorm epsilon). block_ffn_dim_multiplier is not here: an explicit null
 * means no multiplier (loader/config.c parse_lfm2), absent 1.0. The original key names
 * block_ff_dim, theta and tie_embedding take precedence (config_view.c lfm2_aliases). */
static const class_default lfm2_defaults[] = {
    {"vocab_size", false, 65536},
    {"hidden_size", false, 2560},
    {"intermediate_size", false, 12288},
    {"num_hidden_layers", false, 32},
    {"num_attention_heads", false, 32},
    {"num_key_value_heads", false, 8},
    {"max_position_embeddings", false, 128000},
    {"conv_L_cache", false, 3},
    {"block_multiple_of", false, 256},
    {"norm_eps", true, 1e-5},
    {"rope_theta", true, 1000000.0},
    {"tie_word_embeddings", false, 1, true},
    {"conv_bias", false, 0, true},
    {"block_auto_adjust_ff_dim", false, 1, true},
};

/* GraniteMoeHybridConfig's (transformers 4.57.1): num_key_value_heads None becomes
 * num_attention_heads, as the loader's own default does; mamba_d_head "auto" is left to
 * the planner (mamba_expand * hidden_size / mamba_n_heads); layer_types None means every
 * layer mamba (the family reads it); position_embedding_type None means no RoPE. */
static const class_default granitemoehybrid_defaults[] = {
    {"vocab_size", false, 32000},
    {"hidden_size", false, 4096},
    {"intermediate_size", false, 11008},
    {"num_hidden_layers", false, 32},
    {"num_attention_heads", false, 32},
    {"max_position_embeddings", false, 2048},
    {"num_local_experts", false, 8},
    {"num_experts_per_tok", false, 2},
    {"shared_intermediate_size", false, 1024},
    {"mamba_n_heads", false, 128},
    {"mamba_n_groups", false, 1},
    {"mamba_d_state", false, 256},
    {"mamba_d_conv", false, 4},
    {"mamba_expand", false, 2},
    {"mamba_chunk_size", false, 256},
    {"mamba_conv_bias", false, 1, true},
    {"mamba_proj_bias", false, 0, true},
    {"rms_norm_eps", true, 1e-6},
    {"rope_theta", true, 10000.0},
    {"embedding_multiplier", true, 1.0},
    {"logits_scaling", true, 1.0},
    {"residual_multiplier", true, 1.0},
    {"attention_multiplier", true, 1.0},
};

/* HunYuanDenseV1Config's (transformers 4.57.1): num_key_value_heads None becomes
 * num_attention_heads and head_dim None hidden_size / num_attention_heads, as the loader's own
 * defaults do (transformers' attention then fails on the None; vLLM takes hidden / heads).
 * use_qk_norm is no key of the class: HunYuanDenseV1Attention builds query_layernorm /
 * key_layernorm always, and vLLM's hunyuan_v1.py only when use_qk_norm is true, so an absent
 * key reads as true (the releases say true). */
static const class_default hunyuan_v1_dense_defaults[] = {
    {"vocab_size", false, 290943},       {"hidden_size", false, 4096},
    {"intermediate_size", false, 11008}, {"num_hidden_layers", false, 32},
    {"num_attention_heads", false, 32},  {"max_position_embeddings", false, 2048},
    {"rms_norm_eps", true, 1e-5},        {"rope_theta", true, 10000.0},
    {"use_qk_norm", false, 1, true},
};

/* HunYuanMoEV1Config's (transformers 4.57.1): the dense class's defaults plus num_experts 1
 * and moe_topk 1 (the planner refuses one expert: vLLM builds a dense MLP then); use_qk_norm
 * as the dense one's. */
static const class_default hunyuan_v1_moe_defaults[] = {
    {"vocab_size", false, 290943},       {"hidden_size", false, 4096},
    {"intermediate_size", false, 11008}, {"num_hidden_layers", false, 32},
    {"num_attention_heads", false, 32},  {"max_position_embeddings", false, 2048},
    {"rms_norm_eps", true, 1e-5},        {"rope_theta", true, 10000.0},
    {"num_experts", false, 1},           {"moe_topk", false, 1},
    {"use_qk_norm", false, 1, true},
};

/* BambaConfig's (transformers 4.57.1): num_key_value_heads None becomes
 * num_attention_heads, as the loader's own default does; mamba_d_head "auto" is left to
 * the planner; attn_layer_indices None means every layer Mamba. The class sets
 * rope_theta 10000 and partial_rotary_factor 0.5 itself (a key given in config.json
 * still wins, as PretrainedConfig sets the remaining keys after). */
static const class_default bamba_defaults[] = {
    {"vocab_size", false, 128000},
    {"hidden_size", false, 4096},
    {"intermediate_size", false, 14336},
    {"num_hidden_layers", false, 32},
    {"num_attention_heads", false, 32},
    {"num_key_value_heads", false, 8},
    {"max_position_embeddings", false, 262144},
    {"mamba_n_heads", false, 128},
    {"mamba_n_groups", false, 1},
    {"mamba_d_state", false, 256},
    {"mamba_d_conv", false, 4},
    {"mamba_expand", false, 2},
    {"mamba_chunk_size", false, 256},
    {"mamba_conv_bias", false, 1, true},
    {"mamba_proj_bias", false, 0, true},
    {"rms_norm_eps", true, 1e-5},
    {"rope_theta", true, 10000.0},
    {"partial_rotary_factor", true, 0.5},
};

/* NemotronConfig's (transformers 4.57.1): num_key_value_heads None stays None there (its
 * attention then fails), the loader's num_attention_heads as vLLM takes it; head_dim None
 * hidden_size / num_attention_heads; norm_eps 1e-5 for every LayerNorm1P;
 * partial_rotary_factor 0.5; rope_scaling None (NemotronRotaryEmbedding is always the
 * default RoPE). */
static const class_default nemotron_defaults[] = {
    {"vocab_size", false, 256000},
    {"hidden_size", false, 6144},
    {"intermediate_size", false, 24576},
    {"num_hidden_layers", false, 32},
    {"num_attention_heads", false, 48},
    {"max_position_embeddings", false, 4096},
    {"norm_eps", true, 1e-5},
    {"rope_theta", true, 10000.0},
    {"partial_rotary_factor", true, 0.5},
};

/* MiniMaxConfig's (transformers 4.57.1): head_dim None becomes hidden_size /
 * num_attention_heads as the loader's own default; layer_types None alternates full and
 * linear attention (shardmap/family_minimax.c). */
static const class_default minimax_defaults[] = {
    {"vocab_size", false, 32000},
    {"hidden_size", false, 4096},
    {"intermediate_size", false, 14336},
    {"num_hidden_layers", false, 32},
    {"num_attention_heads", false, 32},
    {"num_key_value_heads", false, 8},
    {"max_position_embeddings", false, 131072},
    {"num_experts_per_tok", false, 2},
    {"num_local_experts", false, 8},
    {"rms_norm_eps", true, 1e-5},
    {"rope_theta", true, 1000000.0},
};

/* JambaConfig's (transformers 4.57.1): Jamba-v0.1's dims; mamba_dt_rank "auto" is left to
 * the planner (ceil(hidden_size / 16)); num_key_value_heads None becomes
 * num_attention_heads, as the loader's own default does. */
static const class_default jamba_defaults[] = {
    {"vocab_size", false, 65536},
    {"hidden_size", false, 4096},
    {"intermediate_size", false, 14336},
    {"num_hidden_layers", false, 32},
    {"num_attention_heads", false, 32},
    {"num_key_value_heads", false, 8},
    {"max_position_embeddings", false, 262144},
    {"num_experts_per_tok", false, 2},
    {"num_experts", false, 16},
    {"expert_layer_period", false, 2},
    {"expert_layer_offset", false, 1},
    {"attn_layer_period", false, 8},
    {"attn_layer_offset", false, 4},
    {"mamba_d_state", false, 16},
    {"mamba_d_conv", false, 4},
    {"mamba_expand", false, 2},
    {"mamba_conv_bias", false, 1, true},
    {"mamba_proj_bias", false, 0, true},
    {"rms_norm_eps", true, 1e-6},
};

/* FlexOlmoConfig's (transformers 4.57.1): FlexOlmo-7x7B-1T's dims (100352 / 4096 / 32 /
 * 32, the expert size 11008), 7 experts top-5, rms_norm_eps 1e-6, rope_theta 500000;
 * num_key_value_heads None becomes num_attention_heads as the loader's own default does;
 * norm_topk_prob false as the loader's. */
static const class_default flex_olmo_defaults[] = {
    {"vocab_size", false, 100352},       {"hidden_size", false, 4096},
    {"intermediate_size", false, 11008}, {"num_hidden_layers", false, 32},
    {"num_attention_heads", false, 32},  {"max_position_embeddings", false, 4096},
    {"num_experts_per_tok", false, 5},   {"num_experts", false, 7},
    {"rms_norm_eps", true, 1e-6},        {"rope_theta", true, 500000.0},
};

/* VaultGemmaConfig's (transformers 4.57.1): Gemma 2's 2B dims (256000 / 2304 / 9216 / 26,
 * heads 8 / 4, head_dim 256, query_pre_attn_scalar 256, sliding_window 4096); the soft-caps
 * (50 / 30) and hidden_activation are the reference's (cfg_gemma.c). */
static const class_default vaultgemma_defaults[] = {
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

/* MinistralConfig's (transformers 4.57.1): Mistral-7B-like dims (32000 / 4096 / 32 / 32 / 8 /
 * 14336); head_dim None is hidden_size / num_attention_heads; sliding_window 4096 (the
 * reference's: layer_types absent is every layer sliding then); untied. */
static const class_default ministral_defaults[] = {
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

/* FalconH1Config's (transformers 4.57.1): num_key_value_heads None becomes
 * num_attention_heads, as the loader's own default does; mamba_d_head "auto" is left to
 * the planner; mamba_d_ssm (1024, None = mamba_expand * hidden_size) is the loader's
 * (parse_falcon_h1), since a default here would also fill a null. The class fixes
 * attention_bias and mlp_bias false; the multipliers default to 1 (the reference's). */
static const class_default falcon_h1_defaults[] = {
    {"vocab_size", false, 128000},
    {"hidden_size", false, 4096},
    {"intermediate_size", false, 14336},
    {"num_hidden_layers", false, 32},
    {"num_attention_heads", false, 32},
    {"num_key_value_heads", false, 8},
    {"max_position_embeddings", false, 8192},
    {"mamba_n_heads", false, 128},
    {"mamba_n_groups", false, 1},
    {"mamba_d_state", false, 256},
    {"mamba_d_conv", false, 4},
    {"mamba_expand", false, 2},
    {"mamba_chunk_size", false, 256},
    {"mamba_conv_bias", false, 1, true},
    {"mamba_proj_bias", false, 0, true},
    {"mamba_rms_norm", false, 0, true},
    {"mamba_norm_before_gate", false, 1, true},
    {"projectors_bias", false, 0, true},
    {"rms_norm_eps", true, 1e-5},
    {"rope_theta", true, 100000.0},
};

/* LongcatFlashConfig's (transformers 4.57.1): LongCat-Flash-Chat's dims under the class's own
 * names (config_longcat.c lays num_layers, ffn_hidden_size, expert_ffn_hidden_size and
 * moe_topk over the common ones after these); num_key_value_heads None is
 * num_attention_heads, as the loader's own default; untied. */
static const class_default longcat_flash_defaults[] = {
    {"vocab_size", false, 131072},
    {"hidden_size", false, 6144},
    {"num_layers", false, 28},
    {"num_attention_heads", false, 64},
    {"max_position_embeddings", false, 131072},
    {"ffn_hidden_size", false, 12288},
    {"q_lora_rank", false, 1536},
    {"kv_lora_rank", false, 512},
    {"qk_nope_head_dim", false, 128},
    {"qk_rope_head_dim", false, 64},
    {"head_dim", false, 64},
    {"v_head_dim", false, 128},
    {"moe_topk", false, 12},
    {"n_routed_experts", false, 512},
    {"zero_expert_num", false, 256},
    {"expert_ffn_hidden_size", false, 2048},
    {"routed_scaling_factor", true, 6.0},
    {"rms_norm_eps", true, 1e-5},
    {"rope_theta", true, 10000000.0},
};

/* vLLM's MedusaConfig (vllm/transformers_utils/configs/medusa.py): FasterDecoding's
 * medusa-vicuna-7b-v1.3 dims; num_attention_heads is a property there (0: no attention), 1 here
 * so the loader's head count is defined (no rule reads it). */
static const class_default medusa_defaults[] = {
    {"hidden_size", false, 4096},      {"vocab_size", false, 32001},
    {"num_heads", false, 5},           {"num_hidden_layers", false, 1},
    {"num_attention_heads", false, 1}, {"tie_word_embeddings", false, 0, true},
};

/* vLLM's MLPSpeculatorConfig (vllm/transformers_utils/configs/mlp_speculator.py); the sizes the
 * loader reads are derived from these by config_mlp_speculator_keys. */
static const class_default mlp_speculator_defaults[] = {
    {"vocab_size", false, 32000},    {"emb_dim", false, 4096},
    {"inner_dim", false, 0},         {"n_predict", false, 3},
    {"n_candidates", false, 5},      {"tie_weights", false, 0, true},
    {"scale_input", false, 0, true}, {"tie_word_embeddings", false, 0, true},
};

/* PaddleOCR-VL's top level (model_type paddleocr_vl): head_dim 128 both in the remote
 * PaddleOCRVLConfig and in transformers 5's PaddleOCRTextConfig (Ernie4_5Config); the keys the
 * two disagree on are required (config_paddleocr_vl.c). */
static const class_default paddleocr_vl_defaults[] = {
    {"head_dim", false, 128},
};

/* LlamaConfig's (transformers) under GlmAsrConfig's _default_text_config_kwargs, for
 * GLM-ASR's llama text_config (GLM-ASR-Nano-2512's dims; head_dim hidden_size / heads; untied:
 * LlamaConfig's false) */
static const class_default glmasr_llama_defaults[] = {
    {"vocab_size", false, 59264},
    {"hidden_size", false, 2048},
    {"intermediate_size", false, 6144},
    {"num_hidden_layers", false, 28},
    {"num_attention_heads", false, 16},
    {"num_key_value_heads", false, 4},
    {"max_position_embeddings", false, 8192},
    {"rms_norm_eps", true, 1e-5},
    {"rope_theta", true, 10000.0},
};

/* HunYuan-VL's top level (model_type hunyuan_vl): vLLM's HunYuanVLTextConfig (built of the
 * top-level keys when there is no text_config). use_qk_norm is no key of it: vLLM's
 * hunyuan_v1.py reads it with getattr(..., False), the loader's own default. */
static const class_default hunyuan_vl_defaults[] = {
    {"vocab_size", false, 290943},       {"hidden_size", false, 4096},
    {"intermediate_size", false, 11008}, {"num_hidden_layers", false, 32},
    {"num_attention_heads", false, 32},  {"max_position_embeddings", false, 2048},
    {"rms_norm_eps", true, 1e-5},        {"rope_theta", true, 10000.0},
};

/* Kimi Linear's top level (model_type kimi_linear): vLLM's KimiLinearConfig
 * (vllm/transformers_utils/configs/kimi_linear.py; the remote configuration_kimi.py alike):
 * head_dim and num_key_value_heads None become hidden_size / heads and the heads, the
 * loader's own defaults; untied, the family's; num_shared_experts (0), num_experts (None),
 * q_lora_rank and the MLA sizes (None), mla_use_nope (false) and linear_attn_config (None)
 * are config_kimi_linear.c's, which tells null from absent. */
static const class_default kimi_linear_defaults[] = {
    {"vocab_size", false, 163840},       {"hidden_size", false, 4096},
    {"intermediate_size", false, 11008}, {"num_hidden_layers", false, 32},
    {"num_attention_heads", false, 32},  {"rms_norm_eps", true, 1e-6},
    {"rope_theta", true, 10000.0},       {"first_k_dense_replace", false, 0},
    {"moe_layer_freq", false, 1},        {"routed_scaling_factor", true, 1.0},
};

#define CLASS(mt, tab)                                                                             \
	{                                                                                          \
		mt, tab, sizeof(tab) / sizeof(tab[0])                                              \
	}

/* model_type -> its config class's defaults */
static const struct {
	const char *model_type;
	const class_default *defaults;
	size_t n;
} classes[] = {
    CLASS("apertus", apertus_defaults),
    CLASS("arcee", arcee_defaults),
    CLASS("lfm2", lfm2_defaults),
    CLASS("granitemoehybrid", granitemoehybrid_defaults),
    CLASS("hunyuan_v1_dense", hunyuan_v1_dense_defaults),
    CLASS("hunyuan_v1_moe", hunyuan_v1_moe_defaults),
    CLASS("bamba", bamba_defaults),
    CLASS("nemotron", nemotron_defaults),
    CLASS("minimax", minimax_defaults),
    CLASS("jamba", jamba_defaults),
    CLASS("flex_olmo", flex_olmo_defaults),
    CLASS("vaultgemma", vaultgemma_defaults),
    CLASS("ministral", ministral_defaults),
    CLASS("falcon_h1", falcon_h1_defaults),
    CLASS("longcat_flash", longcat_flash_defaults),
    CLASS("medusa", medusa_defaults),
    CLASS("mlp_speculator", mlp_speculator_defaults),
    CLASS("paddleocr_vl", paddleocr_vl_defaults),
    CLASS("hunyuan_vl", hunyuan_vl_defaults),
    CLASS("glmasr:llama", glmasr_llama_defaults),
    CLASS("kimi_linear", kimi_linear_defaults),
};

const class_default *config_class_defaults_more(const char *mt, size_t *n)
{
	for (size_t i = 0; i < sizeof(classes) / sizeof(classes[0]); i++)
		if (strcmp(mt, classes[i].model_type) == 0) {
			*n = classes[i].n;
			return classes[i].defaults;
		}
	return config_class_defaults_classic(mt, n);
}
