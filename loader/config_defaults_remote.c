/*
 * config_defaults_remote.c — the config classes' defaults of the families whose configuration
 * is remote code (trust_remote_code: InternLM, InternLM2 / 3, ChatGLM, EXAONE, Qwen (1),
 * Baichuan, Xverse, Aquila, Orion, TeleChat2, Arctic, MiniCPM3, Grok-1, Bailing MoE, Falcon's
 * RefinedWeb ...),
 * taken from the class signatures (vLLM's stored copies or the Hub's files; each table says
 * which): config_class_defaults_classic (config_defaults_classic.c) falls back to these, and
 * these to config_defaults_vl.c's.
 */
#include <stddef.h>
#include <string.h>

#include "loader/config_int.h"

/* InternLM2Config's (remote code, configuration_internlm2.py): internlm2-7b's dims (vocab_size
 * 103168, hidden_size 4096, intermediate_size 11008, 32 layers, 32 heads), num_key_value_heads
 * None becomes num_attention_heads as the loader's own default does, max_position_embeddings
 * 2048, rms_norm_eps 1e-6, rope_theta 10000; untied (tie_word_embeddings False); bias true and
 * hidden_act silu are config_internlm2.c's. */
static const class_default internlm2_defaults[] = {
    {"vocab_size", false, 103168},       {"hidden_size", false, 4096},
    {"intermediate_size", false, 11008}, {"num_hidden_layers", false, 32},
    {"num_attention_heads", false, 32},  {"max_position_embeddings", false, 2048},
    {"rms_norm_eps", true, 1e-6},        {"rope_theta", true, 10000.0},
};

/* ChatGLMConfig's (vLLM's configs/chatglm.py, the remote configuration_chatglm.py's), under
 * the names config_chatglm_keys lays ChatGLM's keys onto: chatglm2-6b's dims (num_layers 28,
 * padded_vocab_size 65024, hidden_size 4096, ffn_hidden_size 13696, kv_channels 128, 32
 * heads), seq_length 2048, layernorm_epsilon 1e-5, rope base 10000 (rope_ratio 1); the kv
 * heads and the bias / norm switches are config_chatglm.c's; tied (PretrainedConfig's). */
static const class_default chatglm_defaults[] = {
    {"vocab_size", false, 65024},
    {"hidden_size", false, 4096},
    {"intermediate_size", false, 13696},
    {"num_hidden_layers", false, 28},
    {"num_attention_heads", false, 32},
    {"head_dim", false, 128},
    {"max_position_embeddings", false, 2048},
    {"rms_norm_eps", true, 1e-5},
};

/* ExaoneConfig's (remote configuration_exaone.py, vLLM's configs/exaone.py), under the names
 * config_exaone_keys lays its keys onto: vocab_size 102400, hidden_size 2048, num_layers 32, 32
 * heads (num_key_value_heads None -> the heads, the loader's own default), max_position_embeddings
 * 2048, layer_norm_epsilon 1e-6, rope_theta 10000 (vLLM's getattr default); tied is the family's
 * tie_default; intermediate_size (4 x hidden_size) and activation_function silu are
 * config_exaone.c's. */
static const class_default exaone_defaults[] = {
    {"vocab_size", false, 102400},
    {"hidden_size", false, 2048},
    {"num_hidden_layers", false, 32},
    {"num_attention_heads", false, 32},
    {"max_position_embeddings", false, 2048},
    {"rms_norm_eps", true, 1e-6},
    {"rope_theta", true, 10000.0},
};

/* QWenConfig's (remote configuration_qwen.py), under the names config_qwen_keys lays its keys
 * onto: vocab_size 151936, hidden_size 4096, num_hidden_layers 32, 32 heads (no kv-head key: the
 * loader's default, the heads), kv_channels 128, max_position_embeddings 8192, layer_norm_epsilon
 * 1e-6, rotary_emb_base 10000, intermediate_size 22016 held halved (11008, QWenMLP's width);
 * untied (tie_word_embeddings False). */
static const class_default qwen_defaults[] = {
    {"vocab_size", false, 151936},
    {"hidden_size", false, 4096},
    {"intermediate_size", false, 11008},
    {"num_hidden_layers", false, 32},
    {"num_attention_heads", false, 32},
    {"head_dim", false, 128},
    {"max_position_embeddings", false, 8192},
    {"rms_norm_eps", true, 1e-6},
    {"rope_theta", true, 10000.0},
};

/* MolmoConfig's (remote config_molmo.py of allenai/Molmo-7B-D-0924; its signature as stored
 * copies give it), under the names config_molmo_keys lays its keys onto: vocab_size (and
 * embedding_size, which config_molmo_keys makes the view's vocab_size) 50304, hidden_size 4096,
 * intermediate_size 11008 (halved after: config_molmo_width), 32 layers, 32 heads
 * (num_key_value_heads None: the heads), max_position_embeddings 2048, layer_norm_eps 1e-5,
 * rope_theta 10000; untied (weight_tying False; tie_word_embeddings, default True, vLLM never
 * reads). */
static const class_default molmo_defaults[] = {
    {"vocab_size", false, 50304},        {"hidden_size", false, 4096},
    {"intermediate_size", false, 11008}, {"num_hidden_layers", false, 32},
    {"num_attention_heads", false, 32},  {"max_position_embeddings", false, 2048},
    {"rms_norm_eps", true, 1e-5},        {"rope_theta", true, 10000.0},
};

/* HyperCLOVAXConfig's (the text_config class of naver-hyperclovax/HyperCLOVAX-SEED-Think-32B; its
 * signature as the stored transformers port, HyperClovaXConfig, gives it): vocab_size 32000,
 * hidden_size 4096, intermediate_size 11008, 32 layers, 32 heads (num_key_value_heads None: the
 * heads), max_position_embeddings 2048, rms_norm_eps 1e-6, rope_theta 10000; untied;
 * attention_bias / mlp_bias / use_post_norm false (the loader's and config_hcx_v2.c's). */
static const class_default hyperclovax_defaults[] = {
    {"vocab_size", false, 32000},        {"hidden_size", false, 4096},
    {"intermediate_size", false, 11008}, {"num_hidden_layers", false, 32},
    {"num_attention_heads", false, 32},  {"max_position_embeddings", false, 2048},
    {"rms_norm_eps", true, 1e-6},        {"rope_theta", true, 10000.0},
};

/* InternLMConfig's (remote configuration_internlm.py, InternLM's first generation; signature as
 * mindnlp's port of it gives it): vocab_size 103168, hidden_size 4096, intermediate_size 11008,
 * 32 layers, 32 heads (no num_key_value_heads: the heads), max_position_embeddings 2048,
 * rms_norm_eps 1e-6; rope_theta 10000 is vLLM's getattr default (the class has rotary instead);
 * untied; bias true, hidden_act silu and rotary are config_internlm3.c's. */
static const class_default internlm_defaults[] = {
    {"vocab_size", false, 103168},       {"hidden_size", false, 4096},
    {"intermediate_size", false, 11008}, {"num_hidden_layers", false, 32},
    {"num_attention_heads", false, 32},  {"max_position_embeddings", false, 2048},
    {"rms_norm_eps", true, 1e-6},        {"rope_theta", true, 10000.0},
};

/* XverseConfig's (remote configuration_xverse.py, as the copy in ssbuild/deep_training gives
 * it): vocab_size 100278, hidden_size 5120, intermediate_size 13824, 40 layers, 40 heads (no
 * num_key_value_heads: the heads), max_position_embeddings 8192, rms_norm_eps 1e-6, untied;
 * rope_theta 10000 is vLLM's getattr default (the class has none). */
static const class_default xverse_defaults[] = {
    {"vocab_size", false, 100278},       {"hidden_size", false, 5120},
    {"intermediate_size", false, 13824}, {"num_hidden_layers", false, 40},
    {"num_attention_heads", false, 40},  {"max_position_embeddings", false, 8192},
    {"rms_norm_eps", true, 1e-6},        {"rope_theta", true, 10000.0},
};

/* AquilaConfig's (remote configuration_aquila.py, as Huawei's atb_models port gives it):
 * vocab_size 100008, hidden_size 4096, intermediate_size 11008, 32 layers, 32 heads
 * (num_key_value_heads None: the heads), max_position_embeddings 2048, rms_norm_eps 1e-6,
 * rope_theta 10000, untied. */
static const class_default aquila_defaults[] = {
    {"vocab_size", false, 100008},       {"hidden_size", false, 4096},
    {"intermediate_size", false, 11008}, {"num_hidden_layers", false, 32},
    {"num_attention_heads", false, 32},  {"max_position_embeddings", false, 2048},
    {"rms_norm_eps", true, 1e-6},        {"rope_theta", true, 10000.0},
};

/* Phi3VConfig's (the remote configuration_phi3_v.py of microsoft/Phi-3-vision-128k-instruct,
 * not read here: its signature as recalled, Phi3Config's of its time, which transformers
 * 4.57.1's Phi3Config still has): vocab_size 32064, hidden_size 3072, intermediate_size 8192,
 * 32 layers, 32 heads (num_key_value_heads None: the heads), max_position_embeddings 4096,
 * rms_norm_eps 1e-5, rope_theta 10000, untied; img_processor None and embd_layer "default",
 * which config_phi3v.c refuses. */
static const class_default phi3_v_defaults[] = {
    {"vocab_size", false, 32064},       {"hidden_size", false, 3072},
    {"intermediate_size", false, 8192}, {"num_hidden_layers", false, 32},
    {"num_attention_heads", false, 32}, {"max_position_embeddings", false, 4096},
    {"rms_norm_eps", true, 1e-5},       {"rope_theta", true, 10000.0},
};

/* LlamaBidirectionalConfig's (the remote configuration of nvidia/llama-nemotron-embed-1b-v2, a
 * LlamaConfig subclass adding pooling "avg" and temperature 1.0): transformers 4.57.1's
 * LlamaConfig defaults, vocab_size 32000, hidden_size 4096, intermediate_size 11008, 32 layers,
 * 32 heads (num_key_value_heads None: the heads), max_position_embeddings 2048, rms_norm_eps
 * 1e-6, rope_theta 10000. */
static const class_default llama_bidirec_defaults[] = {
    {"vocab_size", false, 32000},        {"hidden_size", false, 4096},
    {"intermediate_size", false, 11008}, {"num_hidden_layers", false, 32},
    {"num_attention_heads", false, 32},  {"max_position_embeddings", false, 2048},
    {"rms_norm_eps", true, 1e-6},        {"rope_theta", true, 10000.0},
};

/* BailingMoeConfig's (the remote configuration_bailing_moe.py, as vLLM's copy
 * transformers_utils/configs/bailing_moe.py gives it): vocab_size 30592, hidden_size 1024, 24
 * layers, 16 heads, max_position_embeddings 16384, rms_norm_eps 1e-5, rope_theta 10000, 16
 * experts, 2 per token, head_dim hid / H; num_key_value_heads (0) and moe_intermediate_size
 * (None) are required and use_bias (true) refused by config_bailing.c; num_shared_experts 0
 * and use_qkv_bias false are the loader's own absent values. */
static const class_default bailing_moe_defaults[] = {
    {"vocab_size", false, 30592},
    {"hidden_size", false, 1024},
    {"num_hidden_layers", false, 24},
    {"num_attention_heads", false, 16},
    {"max_position_embeddings", false, 16384},
    {"num_experts", false, 16},
    {"num_experts_per_tok", false, 2},
    {"rms_norm_eps", true, 1e-5},
    {"rope_theta", true, 10000.0},
};

/* BailingMoeV2Config's (Ling 2.0's remote configuration_bailing_moe_v2.py, whose signature the
 * Ming-Omni repositories carry over; vLLM keeps no copy): vocab_size 30592, hidden_size 1024, 24
 * layers, 16 heads, max_position_embeddings 16384, rms_norm_eps 1e-5, rope_theta 10000, 16
 * experts, 2 per token, n_group 8, topk_group 4, routed_scaling_factor 2.5 (partial_rotary_factor
 * 0.5: the reference's absent value), first_k_dense_replace 0, head_dim hid / H;
 * num_key_value_heads (0), moe_intermediate_size / intermediate_size (None) are required and
 * use_bias (true) refused by config_bailing_v2.c; num_shared_experts 0, use_qkv_bias / use_qk_norm
 * false are the loader's own absent values. */
static const class_default bailing_moe_v2_defaults[] = {
    {"vocab_size", false, 30592},
    {"hidden_size", false, 1024},
    {"num_hidden_layers", false, 24},
    {"num_attention_heads", false, 16},
    {"max_position_embeddings", false, 16384},
    {"num_experts", false, 16},
    {"num_experts_per_tok", false, 2},
    {"rms_norm_eps", true, 1e-5},
    {"rope_theta", true, 10000.0},
    {"n_group", false, 8},
    {"topk_group", false, 4},
    {"routed_scaling_factor", true, 2.5},
};

/* DeepseekConfig's (DeepSeek-MoE's remote configuration_deepseek.py, the signature
 * DeepSeek-V2's remote DeepseekV2Config carries on without its MLA keys; the Hub's file was not
 * read here): vocab_size 102400, hidden_size 4096, intermediate_size 11008,
 * moe_intermediate_size 1407, 30 layers, 32 heads, num_key_value_heads 32 (whatever the heads
 * are), first_k_dense_replace 0, max_position_embeddings 2048, rms_norm_eps 1e-6, rope_theta
 * 10000; moe_layer_freq 1, n_routed_experts / n_shared_experts None (0) and untied are the
 * loader's own absent values, num_experts_per_tok (None) required by config_deepseek.c. */
static const class_default deepseek_defaults[] = {
    {"vocab_size", false, 102400},
    {"hidden_size", false, 4096},
    {"intermediate_size", false, 11008},
    {"moe_intermediate_size", false, 1407},
    {"num_hidden_layers", false, 30},
    {"num_attention_heads", false, 32},
    {"num_key_value_heads", false, 32},
    {"first_k_dense_replace", false, 0},
    {"max_position_embeddings", false, 2048},
    {"rms_norm_eps", true, 1e-6},
    {"rope_theta", true, 10000.0},
};

static const class_default orion_defaults[] = {
    {"vocab_size", false, 84608},
    {"hidden_size", false, 4096},
    {"intermediate_size", false, 15360},
    {"num_hidden_layers", false, 40},
    {"num_attention_heads", false, 40},
    {"num_key_value_heads", false, 40},
    {"max_position_embeddings", false, 4096},
    {"rms_norm_eps", true, 1e-5},
    {"rope_theta", true, 10000.0},
};

/* InternLM3Config's (remote configuration_internlm3.py): vocab_size 128512, hidden_size 4096,
 * intermediate_size 11008, 32 layers, 32 heads, num_key_value_heads 32, max_position_embeddings
 * 32768, rms_norm_eps 1e-6, rope_theta 10000 (head_dim None -> hid / H, the loader's own
 * default); untied; qkv_bias / bias false and hidden_act silu are config_internlm3.c's. */
static const class_default internlm3_defaults[] = {
    {"vocab_size", false, 128512},
    {"hidden_size", false, 4096},
    {"intermediate_size", false, 11008},
    {"num_hidden_layers", false, 32},
    {"num_attention_heads", false, 32},
    {"num_key_value_heads", false, 32},
    {"max_position_embeddings", false, 32768},
    {"rms_norm_eps", true, 1e-6},
    {"rope_theta", true, 10000.0},
};

/* Telechat2Config's (the remote configuration_telechat2.py as vLLM's configs/telechat2.py copies
 * it), under the names config_telechat2_keys lays its keys onto: vocab_size 160256, hidden_size
 * 4096, ffn_hidden_size 12288, n_layer 30, n_head 32 (num_key_value_heads None: the heads),
 * layer_norm_epsilon 1e-5; rope_theta 10000 and max_position_embeddings 8192 are vLLM's getattr
 * defaults (the class has neither); tied is the family's tie_default, hidden_act silu
 * config_telechat2.c's. */
static const class_default telechat2_defaults[] = {
    {"vocab_size", false, 160256},       {"hidden_size", false, 4096},
    {"intermediate_size", false, 12288}, {"num_hidden_layers", false, 30},
    {"num_attention_heads", false, 32},  {"max_position_embeddings", false, 8192},
    {"rms_norm_eps", true, 1e-5},        {"rope_theta", true, 10000.0},
};

/* ArcticConfig's (vLLM's configs/arctic.py, the remote configuration_arctic.py): vocab_size
 * 32000, hidden_size 4096, intermediate_size 14336, 32 layers, 32 heads (num_key_value_heads
 * None -> the heads), max_position_embeddings 4096, rms_norm_eps 1e-5, rope_theta 1e6,
 * num_local_experts 8, num_experts_per_tok 1 (the docstring's 2 is not the code's);
 * moe_layer_frequency 2 is config_arctic.c's, untied the family's. */
static const class_default arctic_defaults[] = {
    {"vocab_size", false, 32000},        {"hidden_size", false, 4096},
    {"intermediate_size", false, 14336}, {"num_hidden_layers", false, 32},
    {"num_attention_heads", false, 32},  {"max_position_embeddings", false, 4096},
    {"rms_norm_eps", true, 1e-5},        {"rope_theta", true, 1e6},
    {"num_local_experts", false, 8},     {"num_experts_per_tok", false, 1},
};

/* MiniCPM3Config's (openbmb's remote configuration_minicpm.py for MiniCPM3-4B): vocab_size
 * 32000, hidden_size 4096, intermediate_size 11008, 32 layers, 32 heads, MLA ranks q 768 / kv
 * 256, qk_nope_head_dim 64, qk_rope_head_dim 32 (v_head_dim None -> qk_nope_head_dim, put in
 * by config_minicpm.c), max_position_embeddings 2048, rms_norm_eps 1e-6, rope_theta 10000;
 * tied is the family's tie_default. */
static const class_default minicpm3_defaults[] = {
    {"vocab_size", false, 32000},        {"hidden_size", false, 4096},
    {"intermediate_size", false, 11008}, {"num_hidden_layers", false, 32},
    {"num_attention_heads", false, 32},  {"q_lora_rank", false, 768},
    {"kv_lora_rank", false, 256},        {"qk_nope_head_dim", false, 64},
    {"qk_rope_head_dim", false, 32},     {"max_position_embeddings", false, 2048},
    {"rms_norm_eps", true, 1e-6},        {"rope_theta", true, 10000.0},
};

/* What Baichuan's two remote classes share (BaiChuanConfig, vLLM's configs/baichuan.py;
 * BaichuanConfig, configs/baichuan_13b.py / baichuan2.py): vocab_size 64000, rms_norm_eps 1e-6,
 * rope_theta 10000 (neither class has the key: the rope default); untied; the dims that differ
 * by class and hidden_act silu are config_baichuan.c's. */
static const class_default baichuan_defaults[] = {
    {"vocab_size", false, 64000},
    {"rms_norm_eps", true, 1e-6},
    {"rope_theta", true, 10000.0},
};

/* Grok1Config's (hpcai-tech's remote configuration_grok1.py): vocab_size 131072, hidden_size
 * 6144, intermediate_size 32768 (each expert's), 64 layers, 48 heads, num_key_value_heads 8,
 * max_position_embeddings 8192, rms_norm_eps 1e-5, num_experts 8, num_experts_per_tok 2, tied,
 * and its multipliers attn_output_multiplier 0.0884 (vLLM's getattr default, 1.0, is never
 * reached), embedding_multiplier_scale 78.38, output_multiplier_scale 0.577; rope_theta 10000
 * is vLLM's get_rope default (the class has none). */
static const class_default grok1_defaults[] = {
    {"vocab_size", false, 131072},
    {"hidden_size", false, 6144},
    {"intermediate_size", false, 32768},
    {"num_hidden_layers", false, 64},
    {"num_attention_heads", false, 48},
    {"num_key_value_heads", false, 8},
    {"max_position_embeddings", false, 8192},
    {"rms_norm_eps", true, 1e-5},
    {"rope_theta", true, 10000.0},
    {"num_experts", false, 8},
    {"num_experts_per_tok", false, 2},
    {"tie_word_embeddings", false, 1, true},
    {"attn_output_multiplier", true, 0.08838834764831845},
    {"embedding_multiplier_scale", true, 78.38367176906169},
    {"output_multiplier_scale", true, 0.5773502691896257},
};

/* TeleFLMConfig (remote configuration_teleflm.py): its signature was not read here (neither
 * transformers nor vLLM keeps a copy), so config_teleflm.c requires the keys it would default;
 * these two are vLLM's own getattr defaults in LlamaAttention (rope_theta 10000,
 * max_position_embeddings 8192), taken whatever the class says. */
static const class_default teleflm_defaults[] = {
    {"rope_theta", true, 10000.0},
    {"max_position_embeddings", false, 8192},
};

/* MiniMaxText01Config's (MiniMaxAI/MiniMax-Text-01's and -M1's remote
 * configuration_minimax_text_01.py / configuration_minimax_m1.py, Mixtral's signature; the
 * Hub's files were not read here, the values are MixtralConfig's, which transformers'
 * MiniMaxConfig keeps): head_dim absent is hidden_size / num_attention_heads (vLLM's
 * getattr); attn_type_list has no default (refused, loader/config_minimax01.c); untied. */
static const class_default minimax01_defaults[] = {
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

/* RWConfig's (vLLM's stored copy, transformers_utils/configs/falcon.py, adapted from falcon-7b's
 * configuration_RW.py), for model_type RefinedWeb (falcon-40b) and RefinedWebModel (falcon-7b,
 * falcon-rw-1b / 7b), under the names config_rw_keys lays n_layer / n_head onto: vocab_size
 * 250880, hidden_size 64, 2 layers, 8 heads; layer_norm_epsilon 1e-5 and rope_theta 10000 are the
 * reference's and vLLM's getattr defaults; n_head_kv 1, multi_query true, parallel_attn false,
 * bias false, new_decoder_architecture false (true at hidden_size 8192) are config_falcon.c's;
 * tied (PretrainedConfig's default; the falcon family's tie_default). */
static const class_default rw_defaults[] = {
    {"vocab_size", false, 250880},
    {"hidden_size", false, 64},
    {"num_hidden_layers", false, 2},
    {"num_attention_heads", false, 8},
};

/* SolarConfig's (vLLM's copy, transformers_utils/configs/solar.py): vocab_size 32000,
 * hidden_size 4096, intermediate_size 11008, 32 layers, 32 heads (num_key_value_heads None: the
 * heads), max_position_embeddings 2048, rms_norm_eps 1e-6, rope_theta 10000, untied; the skip
 * connections' defaults are config_solar.c's. */
static const class_default solar_defaults[] = {
    {"vocab_size", false, 32000},        {"hidden_size", false, 4096},
    {"intermediate_size", false, 11008}, {"num_hidden_layers", false, 32},
    {"num_attention_heads", false, 32},  {"max_position_embeddings", false, 2048},
    {"rms_norm_eps", true, 1e-6},        {"rope_theta", true, 10000.0},
};

/* MiMoConfig's (the remote configuration_mimo.py subclasses Qwen2Config and adds
 * num_nextn_predict_layers, default 0): Qwen2Config's defaults in transformers 4.57.1,
 * vocab_size 151936, hidden_size 4096, intermediate_size 22016, 32 layers, 32 heads,
 * num_key_value_heads 32 (not the heads), max_position_embeddings 32768, rms_norm_eps 1e-6,
 * rope_theta 10000, untied. */
static const class_default mimo_defaults[] = {
    {"vocab_size", false, 151936},
    {"hidden_size", false, 4096},
    {"intermediate_size", false, 22016},
    {"num_hidden_layers", false, 32},
    {"num_attention_heads", false, 32},
    {"num_key_value_heads", false, 32},
    {"max_position_embeddings", false, 32768},
    {"rms_norm_eps", true, 1e-6},
    {"rope_theta", true, 10000.0},
    {"tie_word_embeddings", false, 0, true},
    {"num_nextn_predict_layers", false, 0},
};

/* IQuestCoderConfig's (the remote configuration_iquestcoder.py, IQuestLab's IQuest-Coder-V1):
 * vocab_size 76800, hidden_size 5120, intermediate_size 27648, 80 layers, 40 heads over 8 kv
 * heads, head_dim 128 (given, not hid / H), max_position_embeddings 16384, rms_norm_eps 1e-5,
 * rope_theta 500000; untied (the llama family's default); attention_bias / mlp_bias false
 * (LlamaConfig's reading); clip_qkv and the sliding window are config_iquestcoder.c's. */
static const class_default iquestcoder_defaults[] = {
    {"vocab_size", false, 76800},
    {"hidden_size", false, 5120},
    {"intermediate_size", false, 27648},
    {"num_hidden_layers", false, 80},
    {"num_attention_heads", false, 40},
    {"num_key_value_heads", false, 8},
    {"head_dim", false, 128},
    {"max_position_embeddings", false, 16384},
    {"rms_norm_eps", true, 1e-5},
    {"rope_theta", true, 500000.0},
};

/* CwmConfig's scalars (transformers' configuration_cwm.py; not in transformers 4.57.1):
 * vocab_size 128256, hidden_size 6144, intermediate_size 21504, 64 layers, 48 heads over 8 kv
 * heads, head_dim 128, max_position_embeddings 131072, rms_norm_eps 1e-5, rope_theta 1e6,
 * sliding_window 8192; untied. layer_types and rope_scaling are config_cwm.c's. */
static const class_default cwm_defaults[] = {
    {"vocab_size", false, 128256},
    {"hidden_size", false, 6144},
    {"intermediate_size", false, 21504},
    {"num_hidden_layers", false, 64},
    {"num_attention_heads", false, 48},
    {"num_key_value_heads", false, 8},
    {"head_dim", false, 128},
    {"max_position_embeddings", false, 131072},
    {"rms_norm_eps", true, 1e-5},
    {"rope_theta", true, 1000000.0},
    {"sliding_window", false, 8192},
};

/* AfmoeConfig's (vLLM's vllm/transformers_utils/configs/afmoe.py; transformers 4.57.1 has no
 * AfmoeConfig): vocab_size 200192, hidden_size 2048, intermediate_size 6144,
 * moe_intermediate_size 1408, 32 layers, 16 heads (num_key_value_heads None -> the heads),
 * head_dim 128 (given, not hid / H), max_position_embeddings 131072, rms_norm_eps 1e-5,
 * rope_theta 10000, 64 experts, 6 per token, n_group 1, topk_group 1, sliding_window 2048;
 * num_dense_layers 1, num_shared_experts 2, score_func "sigmoid", route_norm true, route_scale
 * 1.0 and untied are config_afmoe.c's absent values. */
static const class_default afmoe_defaults[] = {
    {"vocab_size", false, 200192},
    {"hidden_size", false, 2048},
    {"intermediate_size", false, 6144},
    {"moe_intermediate_size", false, 1408},
    {"num_hidden_layers", false, 32},
    {"num_attention_heads", false, 16},
    {"head_dim", false, 128},
    {"max_position_embeddings", false, 131072},
    {"rms_norm_eps", true, 1e-5},
    {"rope_theta", true, 10000.0},
    {"num_experts", false, 64},
    {"num_experts_per_tok", false, 6},
    {"n_group", false, 1},
    {"topk_group", false, 1},
    {"sliding_window", false, 2048},
};

/* OuroConfig's (the remote configuration_ouro.py, not read here: no network; neither
 * transformers 4.57.1 nor vLLM keeps a copy), as a third-party port "adapted from
 * ByteDance/Ouro-1.4B configuration_ouro.py" (OuroConfig dataclass, revision 574fa66c) gives
 * them: vocab_size 49152, hidden_size 2048, intermediate_size 5632, 24 layers, 16 heads over 16
 * kv heads (head_dim 2048 / 16 = 128, vLLM's hid / H), max_position_embeddings 65536,
 * rms_norm_eps 1e-6, rope_theta 1e6; untied (the family's default); total_ut_steps 4 (vLLM's
 * getattr default too), hidden_act, is_causal and the sliding window are config_ouro.c's. */
static const class_default ouro_defaults[] = {
    {"vocab_size", false, 49152},
    {"hidden_size", false, 2048},
    {"intermediate_size", false, 5632},
    {"num_hidden_layers", false, 24},
    {"num_attention_heads", false, 16},
    {"num_key_value_heads", false, 16},
    {"max_position_embeddings", false, 65536},
    {"rms_norm_eps", true, 1e-6},
    {"rope_theta", true, 1000000.0},
};

/* DeciLMConfig's (the remote configuration_decilm.py of the Llama-Nemotron releases: a
 * transformers 4.44.2 LlamaConfig whose intermediate_size and num_key_value_heads it sets to None,
 * the per-layer block_configs deciding both: config_decilm.c): vocab_size 32000, hidden_size
 * 4096, 32 layers, 32 heads, max_position_embeddings 2048, rms_norm_eps 1e-6, rope_theta 10000;
 * untied. */
static const class_default decilm_defaults[] = {
    {"vocab_size", false, 32000},
    {"hidden_size", false, 4096},
    {"num_hidden_layers", false, 32},
    {"num_attention_heads", false, 32},
    {"max_position_embeddings", false, 2048},
    {"rms_norm_eps", true, 1e-6},
    {"rope_theta", true, 10000.0},
};

/* Jais2Config's (transformers' models/jais2, after 4.57.1; Jais-2-8B's dims): vocab_size
 * 150272, hidden_size 3328, intermediate_size 26624, 32 layers, 26 heads (num_key_value_heads
 * None: the heads, head_dim None: hidden_size / heads, the loader's own defaults),
 * max_position_embeddings 8192, layer_norm_eps 1e-5, rope_theta 500000 (modular_jais2.py's
 * signature), mlp_bias true; untied. hidden_act relu2 and attention_bias true are
 * config_jais2.c's. */
static const class_default jais2_defaults[] = {
    {"vocab_size", false, 150272},       {"hidden_size", false, 3328},
    {"intermediate_size", false, 26624}, {"num_hidden_layers", false, 32},
    {"num_attention_heads", false, 26},  {"max_position_embeddings", false, 8192},
    {"layer_norm_eps", true, 1e-5},      {"rope_theta", true, 500000.0},
    {"mlp_bias", false, 1, true},
};

/* Step3TextConfig's (vLLM's vllm/transformers_utils/configs/step3_vl.py; transformers 4.57.1
 * has none): vocab_size 128815, hidden_size 7168, intermediate_size 18432, 61 layers, 64 heads,
 * head_dim 256, rms_norm_eps 1e-5, rope_theta 500000, 48 experts
 * (moe_num_experts) of moe_intermediate_size 5120, share_q_dim 2048 (as q_lora_rank),
 * share_expert_dim 5120 (as shared_expert_intermediate_size). moe_layers_enum (a tuple vLLM
 * cannot read), num_attention_groups and the tie are config_step3.c's. */
static const class_default step3_text_defaults[] = {
    {"vocab_size", false, 128815},       {"hidden_size", false, 7168},
    {"intermediate_size", false, 18432}, {"num_hidden_layers", false, 61},
    {"num_attention_heads", false, 64},  {"head_dim", false, 256},
    {"rms_norm_eps", true, 1e-5},        {"rope_theta", true, 500000.0},
    {"moe_num_experts", false, 48},      {"moe_intermediate_size", false, 5120},
    {"q_lora_rank", false, 2048},        {"shared_expert_intermediate_size", false, 5120},
};

/* Plamo3Config's (the remote configuration_plamo3.py; neither transformers 4.57.1 nor vLLM keeps
 * a copy: read from SGLang's srt/configs/plamo3.py, "Copyright contributors to the vLLM
 * project"): hidden_size 4096, 32 layers, 32 heads over 4 kv heads of head_dim 128,
 * intermediate_size 13312, vocab_size 32000, max_position_embeddings 2048, rms_norm_eps 1e-6,
 * rope_theta 1e6; tied (the family's default); window_size 2048, sliding_window_pattern 8,
 * rope_local_theta 10000, rope_scaling_factor 1 and the refusals are config_plamo3.c's. */
static const class_default plamo3_defaults[] = {
    {"vocab_size", false, 32000},
    {"hidden_size", false, 4096},
    {"intermediate_size", false, 13312},
    {"num_hidden_layers", false, 32},
    {"num_attention_heads", false, 32},
    {"num_key_value_heads", false, 4},
    {"head_dim", false, 128},
    {"max_position_embeddings", false, 2048},
    {"rms_norm_eps", true, 1e-6},
    {"rope_theta", true, 1000000.0},
};

/* PanguEmbeddedConfig's (remote configuration_openpangu_dense.py, as the transformers port of
 * it in public sources gives its signature; openPangu-Embedded-7B's dims): vocab_size 153376,
 * hidden_size 4096, intermediate_size 12800, 34 layers, 32 heads, 8 kv heads,
 * max_position_embeddings 32768, rms_norm_eps 1e-5, rope_theta 1.6e7; untied. bias true and
 * hidden_act silu are config_internlm3.c's (config_pangu_dense_switches). */
static const class_default pangu_dense_defaults[] = {
    {"vocab_size", false, 153376},
    {"hidden_size", false, 4096},
    {"intermediate_size", false, 12800},
    {"num_hidden_layers", false, 34},
    {"num_attention_heads", false, 32},
    {"num_key_value_heads", false, 8},
    {"max_position_embeddings", false, 32768},
    {"rms_norm_eps", true, 1e-5},
    {"rope_theta", true, 16000000.0},
};

/* openPangu-Ultra-MoE (model_type pangu_ultra_moe): the remote PanguUltraMoEConfig of
 * configuration_openpangu_moe.py as the Hub's openPangu-Ultra-MoE-718B carries it sets no model
 * key (pad / bos / eos and an untied head only: config.json gives every size), so these are vLLM's
 * openpangu.py getattr defaults: max_position_embeddings 8192, rope_theta 10000
 * (set_default_rope_theta). The keys it reads as config.X are required (config_pangu_moe.c). */
static const class_default pangu_ultra_moe_defaults[] = {
    {"max_position_embeddings", false, 8192},
    {"rope_theta", true, 10000.0},
};

/* openPangu-Pro-MoE-V2 (model_type PanguProMoEV2; remote code): no configuration class is in
 * public sources, so vLLM's openpangu.py getattr defaults only: max_position_embeddings 8192
 * (OpenPanguDecoderLayer). rope_theta has none there (config.rope_theta without rope_scaling);
 * the keys read as config.X are required (config_pangu_v2.c). */
static const class_default pangu_v2_defaults[] = {
    {"max_position_embeddings", false, 8192},
};

/* MiMo-V2-Flash (remote code; neither transformers 4.57.1 nor vLLM keeps its class): vLLM's
 * mimo_v2_flash.py's getattr defaults only, rope_theta 1000000 and max_position_embeddings
 * 32768; the keys it reads with config.X are required (config_mimo_v2.c). */
static const class_default mimo_v2_flash_defaults[] = {
    {"rope_theta", true, 1000000.0},
    {"max_position_embeddings", false, 32768},
};

/* NomicBertConfig (the remote configuration_hf_nomic_bert.py) is a GPT2Config and passes its dims
 * through: transformers 4.57.1's GPT2Config defaults (vocab_size 50257, n_embd 768, n_layer 12,
 * n_head 12, n_positions 1024), laid in after config_nomic.c maps n_* onto these keys; tied
 * (tie_word_embeddings true), which an encoder without a head does not read. */
static const class_default nomic_bert_defaults[] = {
    {"vocab_size", false, 50257},
    {"hidden_size", false, 768},
    {"num_hidden_layers", false, 12},
    {"num_attention_heads", false, 12},
    {"max_position_embeddings", false, 1024},
};

/* NewConfig's (GTE v1.5, model_type new: the remote configuration.py of Alibaba-NLP/new-impl, read
 * from a stored copy) dims; type_vocab_size 1 is config.c's, the switches config_gte.c's. */
static const class_default gte_new_defaults[] = {
    {"vocab_size", false, 30528},       {"hidden_size", false, 768},
    {"intermediate_size", false, 3072}, {"num_hidden_layers", false, 12},
    {"num_attention_heads", false, 12}, {"max_position_embeddings", false, 2048},
};

/* Plamo2Config's (the remote modeling_plamo2.py; neither transformers 4.57.1 nor vLLM keeps a
 * copy, vLLM's plamo2.py only a typing stub: read from a public MLX port that copies the class,
 * and its rope base from vLLM's earlier plamo2.py, 10000 when absent): hidden_size 4096, 32
 * layers, 32 heads over 4 kv heads, hidden_size_per_head 128, intermediate_size 13312,
 * vocab_size 32000, rms_norm_eps 1e-6, max_position_embeddings max(10 * 2^20, 2048);
 * mamba_d_state 64, mamba_d_conv 4, mamba_num_heads 64, mamba_step 2, mamba_chunk_size 256,
 * mamba_enabled true; tied (the family's default). config_plamo2.c reads them. */
static const class_default plamo2_defaults[] = {
    {"vocab_size", false, 32000},         {"hidden_size", false, 4096},
    {"intermediate_size", false, 13312},  {"num_hidden_layers", false, 32},
    {"num_attention_heads", false, 32},   {"num_key_value_heads", false, 4},
    {"hidden_size_per_head", false, 128}, {"max_position_embeddings", false, 10485760},
    {"rms_norm_eps", true, 1e-6},         {"rope_theta", true, 10000.0},
    {"mamba_d_state", false, 64},         {"mamba_d_conv", false, 4},
    {"mamba_num_heads", false, 64},       {"mamba_step", false, 2},
    {"mamba_chunk_size", false, 256},     {"mamba_enabled", false, 1, true},
};

#define CLASS(mt, tab)                                                                             \
	{                                                                                          \
		mt, tab, sizeof(tab) / sizeof(tab[0])                                              \
	}

static const struct {
	const char *model_type;
	const class_default *defaults;
	size_t n;
} classes[] = {
    /* one model_type a line, each family's line its own */
    /* clang-format off */
    CLASS("internlm2", internlm2_defaults),
    CLASS("chatglm", chatglm_defaults),
    CLASS("exaone", exaone_defaults),
    CLASS("qwen", qwen_defaults),
    CLASS("baichuan", baichuan_defaults),
    CLASS("internlm3", internlm3_defaults),
    CLASS("internlm", internlm_defaults),
    CLASS("xverse", xverse_defaults),
    CLASS("aquila", aquila_defaults),
    CLASS("orion", orion_defaults),
    CLASS("telechat", telechat2_defaults),
    CLASS("arctic", arctic_defaults),
    CLASS("minicpm3", minicpm3_defaults),
    CLASS("grok-1", grok1_defaults),
    CLASS("bailing_moe", bailing_moe_defaults),
    CLASS("bailing_moe_v2", bailing_moe_v2_defaults), /* Ling 2.0 */
    CLASS("TeleFLM", teleflm_defaults), /* vLLM's getattr defaults only */
    CLASS("RefinedWeb", rw_defaults),      /* RWForCausalLM: falcon-40b */
    CLASS("RefinedWebModel", rw_defaults), /* falcon-7b, falcon-rw-1b / 7b */
    /* MiniMax-Text-01, MiniMax-M1 (one class) */
    CLASS("minimax_text_01", minimax01_defaults),
    CLASS("minimax_m1", minimax01_defaults),
    /* the skip connections' defaults: config_solar.c */
    CLASS("solar", solar_defaults),
    CLASS("mimo", mimo_defaults), /* MiMoConfig: a Qwen2Config */
    /* DeepSeek-MoE (DeepseekForCausalLM) */
    CLASS("deepseek", deepseek_defaults),
    CLASS("iquestcoder", iquestcoder_defaults), /* IQuestCoderForCausalLM: llama family */
    CLASS("afmoe", afmoe_defaults), /* Arcee's Trinity (vLLM's AfmoeConfig) */
    CLASS("cwm", cwm_defaults), /* CwmForCausalLM: ministral family (config_cwm.c) */
    CLASS("ouro", ouro_defaults), /* OuroForCausalLM (config_ouro.c) */
    CLASS("nemotron-nas", decilm_defaults), /* DeciLMForCausalLM (config_decilm.c) */
    CLASS("jais2", jais2_defaults), /* Jais2ForCausalLM (config_jais2.c) */
    CLASS("step3_text", step3_text_defaults), /* Step3TextForCausalLM (config_step3.c) */
    CLASS("plamo3", plamo3_defaults), /* Plamo3ForCausalLM (config_plamo3.c) */
    CLASS("plamo2", plamo2_defaults), /* Plamo2ForCausalLM (config_plamo2.c) */
    CLASS("PanguEmbedded", pangu_dense_defaults), /* openPangu-Embedded (config_pangu.c) */
    CLASS("pangu_ultra_moe", pangu_ultra_moe_defaults), /* config_pangu_moe.c */
    CLASS("PanguProMoEV2", pangu_v2_defaults), /* config_pangu_v2.c */
    CLASS("mimo_v2_flash", mimo_v2_flash_defaults), /* MiMoV2FlashForCausalLM (config_mimo_v2.c) */
    CLASS("llama_bidirec", llama_bidirec_defaults), /* LlamaBidirectionalModel (config_bidir.c) */
    CLASS("nomic_bert", nomic_bert_defaults), /* NomicBertModel (config_nomic.c) */
    CLASS("new", gte_new_defaults),           /* GteNewModel (config_gte.c) */
    CLASS("phi3_v", phi3_v_defaults), /* Phi3VForCausalLM (config_phi3v.c) */
    CLASS("molmo", molmo_defaults), /* MolmoForCausalLM (config_molmo.c) */
    CLASS("hyperclovax", hyperclovax_defaults), /* HCXVisionV2ForCausalLM's text_config */
    /* clang-format on */
};

const class_default *config_class_defaults_remote(const char *mt, size_t *n)
{
	for (size_t i = 0; i < sizeof(classes) / sizeof(classes[0]); i++)
		if (strcmp(mt, classes[i].model_type) == 0) {
			*n = classes[i].n;
			return classes[i].defaults;
		}
	return config_class_defaults_vl(mt, n);
}
