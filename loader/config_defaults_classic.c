/*
 * config_defaults_classic.c — the config classes' defaults (transformers 4.57.1) of the
 * GPT-era and state-space families whose config.json keys are their own (GPT-2's n_embd,
 * MPT's d_model, BLOOM's n_embed, OPT's ffn_dim, MambaConfig's state_size ...), read under the
 * common names their loaders lay them onto: config_class_defaults (config_defaults.c) falls
 * back to these.
 */
#include <stddef.h>
#include <string.h>

#include "loader/config_int.h"

/* GPTNeoXConfig's (transformers 4.57.1): GPT-NeoX-20B-like dims (50432 / 6144 / 44 / 64 /
 * 24576), attention_bias true (query_key_value and dense biases unless config.json says
 * false); rotary_pct 0.25, rotary_emb_base 10000, layer_norm_eps 1e-5 and
 * use_parallel_residual true are the reference's (cfg_neox.c). No kv-head or head_dim key:
 * the loader's defaults (num_attention_heads, hidden_size / heads) are the class's. */
static const class_default gpt_neox_defaults[] = {
    {"vocab_size", false, 50432},        {"hidden_size", false, 6144},
    {"intermediate_size", false, 24576}, {"num_hidden_layers", false, 44},
    {"num_attention_heads", false, 64},  {"max_position_embeddings", false, 2048},
    {"attention_bias", false, 1, true},
};

/* PhiConfig's (transformers 4.57.1): phi-1_5-like dims (51200 / 2048 / 24 / 32 / 8192);
 * num_key_value_heads None becomes num_attention_heads as the loader's own default does;
 * hidden_act gelu_new, partial_rotary_factor 0.5, rope_theta 10000, layer_norm_eps 1e-5 are the
 * reference's (cfg_neox.c); qk_layernorm false as the loader's. */
static const class_default phi_defaults[] = {
    {"vocab_size", false, 51200},       {"hidden_size", false, 2048},
    {"intermediate_size", false, 8192}, {"num_hidden_layers", false, 24},
    {"num_attention_heads", false, 32}, {"max_position_embeddings", false, 2048},
};

/* DbrxConfig's (transformers 4.57.1), under the names config_dbrx.c lays DBRX's keys onto:
 * d_model 2048, n_heads 16, n_layers 24, max_seq_len 2048, vocab_size 32000; DbrxAttentionConfig's
 * kv_n_heads 1, rope_theta 10000 (clip_qkv None: absent); DbrxFFNConfig's ffn_hidden_size 3584,
 * moe_num_experts 4, moe_top_k 1, moe_normalize_expert_weights 1.0. Untied (tie_word_embeddings
 * true is refused). */
static const class_default dbrx_defaults[] = {
    {"hidden_size", false, 2048},       {"num_attention_heads", false, 16},
    {"num_hidden_layers", false, 24},   {"max_position_embeddings", false, 2048},
    {"vocab_size", false, 32000},       {"num_key_value_heads", false, 1},
    {"rope_theta", true, 10000.0},      {"moe_intermediate_size", false, 3584},
    {"intermediate_size", false, 3584}, {"num_local_experts", false, 4},
    {"num_experts_per_tok", false, 1},  {"moe_normalize_expert_weights", true, 1.0},
};

/* StableLmConfig's (transformers 4.57.1): stablelm-3b-4e1t-like dims (50304 / 2560 / 32 / 32 /
 * 6912); num_key_value_heads 32; rope_theta 10000; layer_norm_eps 1e-5 and
 * partial_rotary_factor 0.25 are the reference's (cfg_stablelm.c); use_qkv_bias,
 * qk_layernorm and use_parallel_residual false as the loader's. */
static const class_default stablelm_defaults[] = {
    {"vocab_size", false, 50304},
    {"hidden_size", false, 2560},
    {"intermediate_size", false, 6912},
    {"num_hidden_layers", false, 32},
    {"num_attention_heads", false, 32},
    {"num_key_value_heads", false, 32},
    {"max_position_embeddings", false, 4096},
    {"rope_theta", true, 10000.0},
};

/* MptConfig's (transformers 4.57.1), under the names config_mpt_keys lays MPT's keys onto:
 * d_model 2048, n_heads 16, n_layers 24, max_seq_len 2048, vocab_size 50368, expansion_ratio 4
 * (intermediate_size 4 * 2048 when d_model is absent too); kv_n_heads absent is n_heads (vLLM's
 * mpt.py). Tied (tie_word_embeddings false is refused). */
static const class_default mpt_defaults[] = {
    {"hidden_size", false, 2048},     {"num_attention_heads", false, 16},
    {"num_hidden_layers", false, 24}, {"max_position_embeddings", false, 2048},
    {"vocab_size", false, 50368},     {"intermediate_size", false, 8192},
};

/* GPT2Config's (transformers 4.57.1), under the names config_gpt2.c lays GPT-2's n_* keys
 * onto: gpt2's dims (50257 / 768 / 12 / 12, n_positions 1024); intermediate_size is set
 * there (n_inner or 4 * n_embd). Tied by default (the family's tie_default). GPTBigCodeConfig's
 * are the same (num_key_value_heads 1 from multi_query, config_gpt2.c). */
static const class_default gpt2_defaults[] = {
    {"vocab_size", false, 50257},
    {"hidden_size", false, 768},
    {"num_hidden_layers", false, 12},
    {"num_attention_heads", false, 12},
    {"max_position_embeddings", false, 1024},
};

/* MambaConfig's (transformers 4.57.1): mamba-130m-like dims (50280 / 768 / 32 layers),
 * state_size 16, expand 2, conv_kernel 4, use_bias false, use_conv_bias true,
 * layer_norm_epsilon 1e-5, tie_word_embeddings true (PretrainedConfig's); time_step_rank
 * "auto" (ceil(hidden_size / 16)) and intermediate_size (int(expand * hidden_size)) are
 * config_mamba_keys'. MambaConfig has no attention and no num_attention_heads. */
static const class_default mamba_defaults[] = {
    {"vocab_size", false, 50280},
    {"hidden_size", false, 768},
    {"num_hidden_layers", false, 32},
    {"state_size", false, 16},
    {"expand", false, 2},
    {"conv_kernel", false, 4},
    {"use_bias", false, 0, true},
    {"use_conv_bias", false, 1, true},
    {"layer_norm_epsilon", true, 1e-5},
    {"tie_word_embeddings", false, 1, true},
};

/* FalconMambaConfig's (transformers 4.57.1): MambaConfig's and mixer_rms_eps 1e-6 (the
 * weightless norms of the mixer's dt / B / C); tied by default as PretrainedConfig's
 * (tiiuae/falcon-mamba-7b's config.json says false). */
static const class_default falcon_mamba_defaults[] = {
    {"vocab_size", false, 50280},
    {"hidden_size", false, 768},
    {"num_hidden_layers", false, 32},
    {"state_size", false, 16},
    {"expand", false, 2},
    {"conv_kernel", false, 4},
    {"use_bias", false, 0, true},
    {"use_conv_bias", false, 1, true},
    {"layer_norm_epsilon", true, 1e-5},
    {"mixer_rms_eps", true, 1e-6},
    {"tie_word_embeddings", false, 1, true},
};

/* Mamba2Config's (transformers 4.57.1): Mamba-Codestral-7B-like dims (32768 / 4096 / 64
 * layers, 128 heads of 64, state 128, 8 groups), expand 2, conv_kernel 4, use_bias false,
 * use_conv_bias true, chunk_size 256, layer_norm_epsilon 1e-5, untied; hidden_act silu is
 * the loader's own default. config_mamba2_keys renames them onto the Mamba2 mixer's keys. */
static const class_default mamba2_defaults[] = {
    {"vocab_size", false, 32768},
    {"hidden_size", false, 4096},
    {"num_hidden_layers", false, 64},
    {"num_heads", false, 128},
    {"head_dim", false, 64},
    {"state_size", false, 128},
    {"n_groups", false, 8},
    {"expand", false, 2},
    {"conv_kernel", false, 4},
    {"chunk_size", false, 256},
    {"use_bias", false, 0, true},
    {"use_conv_bias", false, 1, true},
    {"layer_norm_epsilon", true, 1e-5},
    {"tie_word_embeddings", false, 0, true},
};

/* NemotronHConfig's (remote code; vLLM's copy in transformers_utils/configs/nemotron_h.py):
 * Nemotron-H-8B-like dims (131072 / 4096 / 21504 / 52 layers, 32 heads of attention_head_dim
 * 128, 8 kv heads), the Mamba2 mixer's 128 heads of 64, ssm_state_size 128, n_groups 8,
 * conv_kernel 4, expand 2, use_conv_bias true, chunk_size 256; use_bias, mlp_bias and
 * attention_bias false, layer_norm_epsilon 1e-5, untied. The stored names (n_groups ...)
 * take the constructor's (mamba_n_groups ...) first (config_nemotron_h_alias); the pattern
 * and the acts default in config_nemotron_h.c. */
static const class_default nemotron_h_defaults[] = {
    {"vocab_size", false, 131072},
    {"hidden_size", false, 4096},
    {"intermediate_size", false, 21504},
    {"num_hidden_layers", false, 52},
    {"num_attention_heads", false, 32},
    {"attention_head_dim", false, 128},
    {"num_key_value_heads", false, 8},
    {"max_position_embeddings", false, 4096},
    {"mamba_num_heads", false, 128},
    {"mamba_head_dim", false, 64},
    {"ssm_state_size", false, 128},
    {"n_groups", false, 8},
    {"conv_kernel", false, 4},
    {"expand", false, 2},
    {"chunk_size", false, 256},
    {"use_conv_bias", false, 1, true},
    {"use_bias", false, 0, true},
    {"mlp_bias", false, 0, true},
    {"attention_bias", false, 0, true},
    {"layer_norm_epsilon", true, 1e-5},
    {"tie_word_embeddings", false, 0, true},
};

/* Zamba2Config's (transformers 4.57.1): Zamba2-2.7B-like dims (32000 / 2560 / 54 layers, 32
 * heads), the Mamba2 mixer's mamba_d_state 64, mamba_d_conv 4, mamba_expand 2, mamba_ngroups 1,
 * n_mamba_heads 8, use_conv_bias true, chunk_size 256; add_bias_linear false, one shared block
 * (num_mem_blocks 1), use_shared_attention_adapter false, adapter_rank 128, use_mem_rope false,
 * rope_theta 10000, rms_norm_eps 1e-5, time_step_min 0.001, tied (PretrainedConfig's);
 * layers_block_type, intermediate_size, head_dim and hidden_act default in config_zamba2.c. */
static const class_default zamba2_defaults[] = {
    {"vocab_size", false, 32000},
    {"hidden_size", false, 2560},
    {"num_hidden_layers", false, 54},
    {"num_attention_heads", false, 32},
    {"max_position_embeddings", false, 4096},
    {"mamba_d_state", false, 64},
    {"mamba_d_conv", false, 4},
    {"mamba_expand", false, 2},
    {"mamba_ngroups", false, 1},
    {"n_mamba_heads", false, 8},
    {"use_conv_bias", false, 1, true},
    {"chunk_size", false, 256},
    {"add_bias_linear", false, 0, true},
    {"num_mem_blocks", false, 1},
    {"use_shared_attention_adapter", false, 0, true},
    {"adapter_rank", false, 128},
    {"use_mem_rope", false, 0, true},
    {"rope_theta", true, 10000.0},
    {"rms_norm_eps", true, 1e-5},
    {"time_step_min", true, 0.001},
    {"tie_word_embeddings", false, 1, true},
};

/* Gemma3nTextConfig's (transformers 4.57.1): gemma-3n-E4B-like dims (262400 / 2048 / 35 layers,
 * 8 heads, 2 kv heads of 256), the per-layer inputs (hidden_size_per_layer_input 256 over
 * vocab_size_per_layer_input 262144), AltUp's four streams (altup_active_idx 0,
 * altup_correct_scale true), laurel_rank 64, num_kv_shared_layers 15, sliding_window 512,
 * final_logit_softcapping 30, rope_theta 1e6 (local 1e4), rms_norm_eps 1e-6 (tied: the
 * family's tie_default, so a config without the key reads as not given); layer_types and
 * activation_sparsity_pattern default in config_gemma3n.c. */
static const class_default gemma3n_text_defaults[] = {
    {"vocab_size", false, 262400},
    {"vocab_size_per_layer_input", false, 262144},
    {"hidden_size", false, 2048},
    {"hidden_size_per_layer_input", false, 256},
    {"intermediate_size", false, 16384},
    {"num_hidden_layers", false, 35},
    {"num_attention_heads", false, 8},
    {"num_key_value_heads", false, 2},
    {"head_dim", false, 256},
    {"max_position_embeddings", false, 32768},
    {"sliding_window", false, 512},
    {"altup_active_idx", false, 0},
    {"altup_num_inputs", false, 4},
    {"altup_correct_scale", false, 1, true},
    {"num_kv_shared_layers", false, 15},
    {"laurel_rank", false, 64},
    {"attention_bias", false, 0, true},
    {"final_logit_softcapping", true, 30.0},
    {"rms_norm_eps", true, 1e-6},
    {"rope_theta", true, 1000000.0},
    {"rope_local_base_freq", true, 10000.0},
};

/* OPTConfig's (transformers 4.57.1): opt-125m's dims (50272 / 768 / 12 / 12, ffn_dim 3072
 * read as intermediate_size: config_opt.c), max_position_embeddings 2048; no kv-head or
 * head_dim key: the loader's defaults (num_attention_heads, hidden_size / heads) are the
 * class's. word_embed_proj_dim, do_layer_norm_before, _remove_final_layer_norm, enable_bias
 * and layer_norm_elementwise_affine default in config_opt.c; tied by default
 * (PretrainedConfig's tie_word_embeddings, the planner's tie_default). */
static const class_default opt_defaults[] = {
    {"vocab_size", false, 50272},       {"hidden_size", false, 768},
    {"intermediate_size", false, 3072}, {"num_hidden_layers", false, 12},
    {"num_attention_heads", false, 12}, {"max_position_embeddings", false, 2048},
};

/* WhisperConfig's (transformers 4.57.1): whisper-tiny's decoder under its own names
 * (config_whisper_keys lays them over hidden_size / num_attention_heads / num_hidden_layers /
 * intermediate_size after these fill the absent ones); the encoder's sizes and
 * max_target_positions default in config_whisper.c; tied by default (PretrainedConfig's
 * tie_word_embeddings, the planner's tie_default). */
static const class_default whisper_defaults[] = {
    {"vocab_size", false, 51865},          {"d_model", false, 384},
    {"decoder_attention_heads", false, 6}, {"decoder_layers", false, 4},
    {"decoder_ffn_dim", false, 1536},
};

/* BertConfig's (transformers 4.57.1): bert-base's dims (30522 / 768 / 3072 / 12 / 12);
 * max_position_embeddings 512 and type_vocab_size 2, read by config_roberta.c for BERT's heads
 * (config_parse_bert_head); layer_norm_eps 1e-12 and hidden_act gelu are the reference's. */
static const class_default bert_defaults[] = {
    {"vocab_size", false, 30522},       {"hidden_size", false, 768},
    {"intermediate_size", false, 3072}, {"num_hidden_layers", false, 12},
    {"num_attention_heads", false, 12}, {"max_position_embeddings", false, 512},
    {"type_vocab_size", false, 2},      {"pad_token_id", false, 0},
};

/* RobertaConfig's / XLMRobertaConfig's (transformers 4.57.1): roberta-base's dims and the
 * vocabulary, RoBERTa's 50265, XLM-RoBERTa's 30522 (the class's, not xlm-roberta-base's
 * 250002); max_position_embeddings 512, type_vocab_size 2 and pad_token_id 1, read by
 * config_roberta.c; layer_norm_eps 1e-12 and hidden_act gelu are the reference's. */
static const class_default roberta_defaults[] = {
    {"vocab_size", false, 50265},       {"hidden_size", false, 768},
    {"intermediate_size", false, 3072}, {"num_hidden_layers", false, 12},
    {"num_attention_heads", false, 12}, {"max_position_embeddings", false, 512},
    {"type_vocab_size", false, 2},      {"pad_token_id", false, 1},
};
static const class_default xlm_roberta_defaults[] = {
    {"vocab_size", false, 30522},       {"hidden_size", false, 768},
    {"intermediate_size", false, 3072}, {"num_hidden_layers", false, 12},
    {"num_attention_heads", false, 12}, {"max_position_embeddings", false, 512},
    {"type_vocab_size", false, 2},      {"pad_token_id", false, 1},
};

/* ModernBertConfig's (transformers 4.57.1): ModernBERT-base's dims (50368 / 768 / 1152 / 22 /
 * 12, 8192 positions), norm_eps 1e-5, global_rope_theta 160000, global_attn_every_n_layers 3,
 * local_attention 128 and the bias switches false (attention_bias, mlp_bias, norm_bias,
 * classifier_bias). local_rope_theta (10000) is config_modernbert.c's: a null there means the
 * global theta, which a class default laid over null would hide. */
static const class_default modernbert_defaults[] = {
    {"vocab_size", false, 50368},
    {"hidden_size", false, 768},
    {"intermediate_size", false, 1152},
    {"num_hidden_layers", false, 22},
    {"num_attention_heads", false, 12},
    {"max_position_embeddings", false, 8192},
    {"norm_eps", true, 1e-5},
    {"global_rope_theta", true, 160000.0},
    {"global_attn_every_n_layers", false, 3},
    {"local_attention", false, 128},
    {"attention_bias", false, 0, true},
    {"mlp_bias", false, 0, true},
    {"norm_bias", false, 0, true},
    {"classifier_bias", false, 0, true},
};

/* GPTJConfig's (transformers 4.57.1), under the names config_gptj.c lays GPT-J's keys onto:
 * n_embd 4096, n_head 16, n_layer 28, n_positions 2048, vocab_size 50400 (n_inner None: 4 x
 * n_embd, set by config_gptj.c); rotary_dim 64, activation_function gelu_new and
 * layer_norm_epsilon 1e-5 are the reference's; untied. */
static const class_default gptj_defaults[] = {
    {"vocab_size", false, 50400},
    {"hidden_size", false, 4096},
    {"num_hidden_layers", false, 28},
    {"num_attention_heads", false, 16},
    {"max_position_embeddings", false, 2048},
};

/* BloomConfig's (transformers 4.57.1), under the names config_bloom.c lays BLOOM's keys onto:
 * vocab_size 250880, hidden_size 64, n_layer 2, n_head 8 (intermediate_size is then
 * 4 * hidden_size, config_bloom_width); layer_norm_epsilon 1e-5 and
 * apply_residual_connection_post_layernorm false are the reference's (cfg_bloom.c). Tied
 * (PretrainedConfig's default; the family's tie_default). */
static const class_default bloom_defaults[] = {
    {"vocab_size", false, 250880},
    {"hidden_size", false, 64},
    {"num_hidden_layers", false, 2},
    {"num_attention_heads", false, 8},
};

/* FalconConfig's (transformers 4.57.1): falcon-7b's dims (vocab_size 65024, hidden_size 4544,
 * num_hidden_layers 32, num_attention_heads 71), max_position_embeddings 2048, rope_theta
 * 10000; multi_query true, parallel_attn true, bias false, new_decoder_architecture false
 * (config_falcon.c reads those); tied (PretrainedConfig's default, vLLM's when the key is
 * absent). */
static const class_default falcon_defaults[] = {
    {"vocab_size", false, 65024},
    {"hidden_size", false, 4544},
    {"num_hidden_layers", false, 32},
    {"num_attention_heads", false, 71},
    {"max_position_embeddings", false, 2048},
    {"rope_theta", true, 10000.0},
};

/* OrionConfig's (remote configuration_orion.py, as vLLM's copy transformers_utils/configs/
 * orion.py gives it): vocab_size 84608, hidden_size 4096, intermediate_size 15360, 40 layers,
 * 40 heads (4096 / 40 is no head size: a config.json without both hidden_size and the heads is
 * refused by the planner's head check), num_key_value_heads 40, max_position_embeddings 4096,
 * rms_norm_eps 1e-5 (the LayerNorms' eps), rope_theta 10000; untied (the family's default);
 * hidden_act silu, attention_bias false and rope_scaling None are config_orion.c's. */

/* PersimmonConfig's (transformers 4.57.1): persimmon-8b's dims (262144 / 4096 / 16384 / 36 /
 * 64), max_position_embeddings 16384, rope_theta 25000, qk_layernorm true; hidden_act relu2,
 * partial_rotary_factor 0.5 and layer_norm_eps 1e-5 are the reference's (cfg_neox.c); untied. */
static const class_default persimmon_defaults[] = {
    {"vocab_size", false, 262144},       {"hidden_size", false, 4096},
    {"intermediate_size", false, 16384}, {"num_hidden_layers", false, 36},
    {"num_attention_heads", false, 64},  {"max_position_embeddings", false, 16384},
    {"rope_theta", true, 25000.0},       {"qk_layernorm", false, 1, true},
};

/* ChameleonConfig's (transformers 4.57.1; chameleon-7b's dims): vocab_size 65536, hidden_size
 * 4096, intermediate_size 11008, 32 layers, 32 heads and 32 kv heads, max_position_embeddings
 * 4096, rms_norm_eps 1e-5, rope_theta 10000; untied, attention_bias / mlp_bias / swin_norm
 * false and hidden_act silu as the loader's (config_chameleon.c). */
static const class_default chameleon_defaults[] = {
    {"vocab_size", false, 65536},
    {"hidden_size", false, 4096},
    {"intermediate_size", false, 11008},
    {"num_hidden_layers", false, 32},
    {"num_attention_heads", false, 32},
    {"num_key_value_heads", false, 32},
    {"max_position_embeddings", false, 4096},
    {"rms_norm_eps", true, 1e-5},
    {"rope_theta", true, 10000.0},
};

/* GraniteConfig's (transformers 4.57.1), for Granite Speech's granite text_config
 * (num_key_value_heads None: num_attention_heads; untied; the four multipliers 1.0 and
 * rms_norm_eps 1e-6 are the reference's defaults for granite too) */
static const class_default granite_speech_granite_defaults[] = {
    {"vocab_size", false, 32000},        {"hidden_size", false, 4096},
    {"intermediate_size", false, 11008}, {"num_hidden_layers", false, 32},
    {"num_attention_heads", false, 32},  {"max_position_embeddings", false, 2048},
    {"rms_norm_eps", true, 1e-6},        {"rope_theta", true, 10000.0},
};

/* AriaTextConfig's (transformers 4.57.1), for Aria's text_config (num_key_value_heads None:
 * num_attention_heads; head_dim hidden_size / heads; untied): moe_num_experts 8, moe_topk 2,
 * moe_num_shared_experts 2 (the shared experts intermediate_size x 2 wide) */
static const class_default aria_text_defaults[] = {
    {"vocab_size", false, 32000},         {"hidden_size", false, 4096},
    {"intermediate_size", false, 4096},   {"num_hidden_layers", false, 32},
    {"num_attention_heads", false, 32},   {"max_position_embeddings", false, 2048},
    {"rms_norm_eps", true, 1e-6},         {"rope_theta", true, 10000.0},
    {"moe_num_experts", false, 8},        {"moe_topk", false, 2},
    {"moe_num_shared_experts", false, 2},
};

/* LlamaConfig's (transformers 4.57.1) under VoxtralConfig's _default_text_config_kwargs,
 * for Voxtral's llama text_config (num_attention_heads LlamaConfig's 32; head_dim 128 over
 * hidden_size / heads; untied: LlamaConfig's false) */
static const class_default voxtral_llama_defaults[] = {
    {"vocab_size", false, 131072},      {"hidden_size", false, 3072},
    {"intermediate_size", false, 8192}, {"num_hidden_layers", false, 30},
    {"num_attention_heads", false, 32}, {"num_key_value_heads", false, 8},
    {"head_dim", false, 128},           {"max_position_embeddings", false, 131072},
    {"rms_norm_eps", true, 1e-5},       {"rope_theta", true, 100000000.0},
};

/* MllamaTextConfig's (transformers 4.57.1; Llama-3.2-11B-Vision's dims): vocab_size 128256,
 * hidden_size 4096, intermediate_size 14336, 40 layers, 32 heads, 8 kv heads,
 * max_position_embeddings 131072, rms_norm_eps 1e-5, rope_theta 500000; untied and no head_dim
 * (hidden_size / heads) as the loader's; cross_attention_layers in config_mllama.c */
static const class_default mllama_text_defaults[] = {
    {"vocab_size", false, 128256},
    {"hidden_size", false, 4096},
    {"intermediate_size", false, 14336},
    {"num_hidden_layers", false, 40},
    {"num_attention_heads", false, 32},
    {"num_key_value_heads", false, 8},
    {"max_position_embeddings", false, 131072},
    {"rms_norm_eps", true, 1e-5},
    {"rope_theta", true, 500000.0},
};

/* Qwen2_5OmniTextConfig's (transformers 4.57.1; Qwen2.5-Omni-7B's thinker dims), for its
 * thinker_config.text_config whatever its model_type (config_view.c names it so): untied, no
 * head_dim key (hidden_size / heads); rope_scaling's mrope_section in config_omni.c */
static const class_default omni_text_defaults[] = {
    {"vocab_size", false, 152064},
    {"hidden_size", false, 3584},
    {"intermediate_size", false, 18944},
    {"num_hidden_layers", false, 28},
    {"num_attention_heads", false, 28},
    {"num_key_value_heads", false, 4},
    {"max_position_embeddings", false, 32768},
    {"rms_norm_eps", true, 1e-6},
    {"rope_theta", true, 1000000.0},
};

/* Qwen3OmniMoeTextConfig's (transformers 4.57.1), for Qwen3-Omni's thinker_config.text_config
 * whatever its model_type: 128 experts of 768, top 8; untied, no head_dim key (hidden_size /
 * heads), decoder_sparse_step 1 and mlp_only_layers [] the loader's, norm_topk_prob true the
 * reference's; rope_scaling's mrope_section in config_omni.c */
static const class_default omni3_text_defaults[] = {
    {"vocab_size", false, 3584},
    {"hidden_size", false, 2048},
    {"intermediate_size", false, 18944},
    {"num_hidden_layers", false, 28},
    {"num_attention_heads", false, 28},
    {"num_key_value_heads", false, 4},
    {"max_position_embeddings", false, 32768},
    {"moe_intermediate_size", false, 768},
    {"num_experts_per_tok", false, 8},
    {"num_experts", false, 128},
    {"rms_norm_eps", true, 1e-6},
    {"rope_theta", true, 1000000.0},
};

#define CLASS(mt, tab)                                                                             \
	{                                                                                          \
		mt, tab, sizeof(tab) / sizeof(tab[0])                                              \
	}

/* CLIPTextConfig's (transformers 4.57.1): clip-vit-base-patch32's text tower (49408 / 512 /
 * 2048 / 12 / 8), max_position_embeddings 77; hidden_act quick_gelu and layer_norm_eps 1e-5 are
 * the reference's (reference/clip.c); CLIPConfig's projection_dim 512 is config_clip.c's. */
static const class_default clip_text_defaults[] = {
    {"vocab_size", false, 49408},       {"hidden_size", false, 512},
    {"intermediate_size", false, 2048}, {"num_hidden_layers", false, 12},
    {"num_attention_heads", false, 8},  {"max_position_embeddings", false, 77},
};

/* SiglipTextConfig's (transformers 4.57.1): siglip-base-patch16-224's text tower (32000 / 768
 * / 3072 / 12 / 12), max_position_embeddings 64; hidden_act gelu_pytorch_tanh and
 * layer_norm_eps 1e-6 are the reference's (reference/clip.c); projection_size (hidden_size)
 * is config_clip.c's. */
static const class_default siglip_text_defaults[] = {
    {"vocab_size", false, 32000},       {"hidden_size", false, 768},
    {"intermediate_size", false, 3072}, {"num_hidden_layers", false, 12},
    {"num_attention_heads", false, 12}, {"max_position_embeddings", false, 64},
};

/* Lfm2MoeConfig's (transformers' configuration_lfm2_moe.py; not in 4.57.1): LFM2-8B-A1B's
 * dims, tied embeddings, norm_eps, rope_theta 1e6 (its default_theta); the MoE keys
 * num_experts 32, num_experts_per_tok 4, moe_intermediate_size 1792, num_dense_layers 2,
 * use_expert_bias true (config_parse_lfm2_moe), routed_scaling_factor 1.0, norm_topk_prob true
 * (the reference's, cfg_lfm2.c). layer_types None has no default (refused: vLLM indexes it);
 * tie_embedding takes precedence (config_view.c). */
static const class_default lfm2_moe_defaults[] = {
    {"vocab_size", false, 65536},       {"hidden_size", false, 2048},
    {"intermediate_size", false, 7168}, {"moe_intermediate_size", false, 1792},
    {"num_hidden_layers", false, 32},   {"num_attention_heads", false, 32},
    {"num_key_value_heads", false, 8},  {"max_position_embeddings", false, 128000},
    {"norm_eps", true, 1e-5},           {"rope_theta", true, 1000000.0},
    {"conv_L_cache", false, 3},         {"num_experts", false, 32},
    {"num_experts_per_tok", false, 4},  {"tie_word_embeddings", false, 1, true},
    {"conv_bias", false, 0, true},
};

static const struct {
	const char *model_type;
	const class_default *defaults;
	size_t n;
} classes[] = {
    CLASS("gpt_neox", gpt_neox_defaults),
    /* FuyuConfig's (no text_config: its top-level keys make the PersimmonConfig) */
    CLASS("fuyu", persimmon_defaults),
    CLASS("phi", phi_defaults),
    CLASS("dbrx", dbrx_defaults),
    CLASS("stablelm", stablelm_defaults),
    CLASS("mpt", mpt_defaults),
    CLASS("gpt2", gpt2_defaults),
    CLASS("gpt_bigcode", gpt2_defaults),
    CLASS("mamba", mamba_defaults),
    CLASS("falcon_mamba", falcon_mamba_defaults),
    CLASS("opt", opt_defaults),
    CLASS("roberta", roberta_defaults),
    CLASS("xlm-roberta", xlm_roberta_defaults),
    CLASS("gptj", gptj_defaults),
    CLASS("bloom", bloom_defaults),
    CLASS("falcon", falcon_defaults),
    /* MiniCPMConfig's (openbmb's remote configuration_minicpm.py) are GraniteConfig's: vocab_size
     * 32000, hidden_size 4096, intermediate_size 11008, 32 layers, 32 heads (num_key_value_heads
     * None -> the heads), max_position_embeddings 2048, rms_norm_eps 1e-6, rope_theta 10000; tied
     * is the family's tie_default, hidden_act silu and attention_bias false config_minicpm.c's */
    CLASS("minicpm", granite_speech_granite_defaults),
    CLASS("persimmon", persimmon_defaults),
    CLASS("mamba2", mamba2_defaults),
    CLASS("zamba2", zamba2_defaults),
    CLASS("chameleon", chameleon_defaults),
    CLASS("modernbert", modernbert_defaults),
    CLASS("granite_speech:granite", granite_speech_granite_defaults),
    /* Aria's text_config (config_lm_view names it so, whatever its model_type) */
    CLASS("aria:aria_text", aria_text_defaults),
    CLASS("voxtral:llama", voxtral_llama_defaults),
    CLASS("mllama_text_model", mllama_text_defaults),
    CLASS("bert", bert_defaults),
    CLASS("qwen2_5_omni:text", omni_text_defaults),
    CLASS("qwen3_omni_moe:text", omni3_text_defaults),
    CLASS("gemma3n_text", gemma3n_text_defaults),
    CLASS("whisper", whisper_defaults),
    /* CLIPConfig's text_config (its top level carries no text keys) */
    CLASS("clip", clip_text_defaults),
    CLASS("nemotron_h", nemotron_h_defaults),
    /* SiglipConfig's text_config (the same) */
    CLASS("siglip", siglip_text_defaults),
    CLASS("lfm2_moe", lfm2_moe_defaults),
    /* JAISConfig's (vLLM's configs/jais.py): GPT2Config's dims and names (config_jais.c lays
     * them as GPT-2's); tied by default (the family's tie_default, untied refused) */
    CLASS("jais", gpt2_defaults),
};

const class_default *config_class_defaults_classic(const char *mt, size_t *n)
{
	for (size_t i = 0; i < sizeof(classes) / sizeof(classes[0]); i++)
		if (strcmp(mt, classes[i].model_type) == 0) {
			*n = classes[i].n;
			return classes[i].defaults;
		}
	return config_class_defaults_remote(mt, n);
}
