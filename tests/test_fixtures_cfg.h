/*
 * test_fixtures_cfg.h — test_fixtures.c's checks of the config keys one family (or a few)
 * reads beyond the common sizes of the fam_expect table: one function per family, cfg_checks[]
 * naming the fixtures each applies to (every row must name one: test_families checks it).
 * Included by test_fixtures.c only.
 */
#ifndef WT_TEST_FIXTURES_CFG_H
#define WT_TEST_FIXTURES_CFG_H

#include "tests/test_fixtures_cfg_mm.h"
#include "tests/test_fixtures_cfg_text.h"

/* Grok-1: num_experts 4 of intermediate_size 64 (each expert's), GQA, tied */
static void check_grok1(const ckpt_config *cfg)
{
	assert_true(cfg->head_dim == 32 && cfg->num_key_value_heads == 2 && cfg->num_experts == 4 &&
	            cfg->moe_intermediate_size == 64 && cfg->tie_word_embeddings &&
	            strcmp(cfg->model_type, "grok-1") == 0 &&
	            strcmp(cfg->architecture, "Grok1ModelForCausalLM") == 0);
}

/* Bailing MoE: num_shared_experts as n_shared_experts, use_qkv_bias as attention_bias, every
 * layer MoE (first_k_dense_replace 0), GQA 8 / 4, untied */
static void check_bailing_moe(const ckpt_config *cfg)
{
	assert_true(cfg->n_shared_experts == 1 && cfg->attention_bias && !cfg->use_bias &&
	            cfg->first_k_dense_replace == 0 && cfg->num_experts == 4 &&
	            cfg->moe_intermediate_size == 64 && cfg->head_dim == 16 &&
	            cfg->num_key_value_heads == 4 && !cfg->tie_word_embeddings &&
	            strcmp(cfg->model_type, "bailing_moe") == 0 &&
	            strcmp(cfg->architecture, "BailingMoeForCausalLM") == 0);
}

/* Bailing MoE V2 (Ling 2.0): the shared experts' width num_shared_experts x
 * moe_shared_expert_intermediate_size as shared_expert_intermediate_size, q/k norms, layer 0
 * dense, head_dim 32 given, GQA 8 / 2, untied */
static void check_bailing_moe_v2(const ckpt_config *cfg)
{
	assert_true(cfg->n_shared_experts == 1 && cfg->shared_expert_intermediate_size == 64 &&
	            !cfg->attention_bias && cfg->use_qk_norm && cfg->first_k_dense_replace == 1 &&
	            cfg->num_experts == 8 && cfg->head_dim == 32 && cfg->num_key_value_heads == 2 &&
	            !cfg->tie_word_embeddings && strcmp(cfg->model_type, "bailing_moe_v2") == 0 &&
	            strcmp(cfg->architecture, "BailingMoeV2ForCausalLM") == 0);
}

/* Xverse: no bias key (no attention / o_proj bias), MHA (no num_key_value_heads), head_dim
 * hid / H, untied */
static void check_xverse(const ckpt_config *cfg)
{
	assert_true(!cfg->attention_bias && !cfg->attention_out_bias && cfg->head_dim == 16 &&
	            cfg->num_key_value_heads == 8 && !cfg->tie_word_embeddings &&
	            strcmp(cfg->model_type, "xverse") == 0 &&
	            strcmp(cfg->architecture, "XverseForCausalLM") == 0);
}

/* StableLM Epoch: use_qkv_bias read into attention_bias, rope_pct onto partial_rotary_factor,
 * GQA 8 / 4, untied */
static void check_stablelm_epoch(const ckpt_config *cfg)
{
	assert_true(cfg->attention_bias && !cfg->qk_layernorm && !cfg->use_parallel_residual &&
	            cfg->num_key_value_heads == 4 && cfg->head_dim == 16 &&
	            !cfg->tie_word_embeddings && cfg->partial_rotary_factor == 0.5 &&
	            strcmp(cfg->model_type, "stablelm_epoch") == 0 &&
	            strcmp(cfg->architecture, "StableLMEpochForCausalLM") == 0);
}

/* DeepSeek-MoE: layer 0 dense (first_k_dense_replace 1), then MoE every layer (moe_layer_freq 1)
 * with two shared experts, no attention bias, MHA, untied */
static void check_deepseek_moe(const ckpt_config *cfg)
{
	assert_true(cfg->n_shared_experts == 2 && cfg->first_k_dense_replace == 1 &&
	            cfg->moe_layer_freq == 1 && cfg->num_experts == 8 &&
	            cfg->moe_intermediate_size == 64 && !cfg->attention_bias &&
	            cfg->num_key_value_heads == 8 && !cfg->tie_word_embeddings &&
	            strcmp(cfg->model_type, "deepseek") == 0 &&
	            strcmp(cfg->architecture, "DeepseekForCausalLM") == 0);
}

/* TeleChat (TeleChatForCausalLM): TelechatConfig's n_head / n_layer / ffn_hidden_size read as
 * TeleChat2's, MHA, tied (no tie_word_embeddings key) */
static void check_telechat(const ckpt_config *cfg)
{
	assert_true(cfg->num_attention_heads == 8 && cfg->num_key_value_heads == 8 &&
	            cfg->num_hidden_layers == 2 && cfg->intermediate_size == 192 &&
	            !cfg->tie_given && strcmp(cfg->model_type, "telechat") == 0 &&
	            strcmp(cfg->architecture, "TeleChatForCausalLM") == 0);
}

/* Aquila: no bias key (no attention / o_proj bias), GQA 8 / 2, head_dim hid / H, untied */
static void check_aquila(const ckpt_config *cfg)
{
	assert_true(!cfg->attention_bias && !cfg->attention_out_bias && cfg->head_dim == 16 &&
	            cfg->num_key_value_heads == 2 && !cfg->tie_word_embeddings &&
	            strcmp(cfg->model_type, "aquila") == 0 &&
	            strcmp(cfg->architecture, "AquilaForCausalLM") == 0);
}

/* Tele-FLM: no bias key, MHA (no num_key_value_heads key), head_dim hid / H, untied; its muP
 * keys are the reference's (test_reference_teleflm) */
static void check_teleflm(const ckpt_config *cfg)
{
	assert_true(!cfg->attention_bias && !cfg->attention_out_bias && cfg->head_dim == 16 &&
	            cfg->num_key_value_heads == 8 && !cfg->tie_word_embeddings &&
	            strcmp(cfg->model_type, "TeleFLM") == 0 &&
	            strcmp(cfg->architecture, "TeleFLMForCausalLM") == 0);
}

/* Solar: attention_bias false (no attention / o_proj bias), GQA 8 / 2, head_dim hid / H, 4
 * layers (the skip connections inside them), untied */
static void check_solar(const ckpt_config *cfg)
{
	assert_true(!cfg->attention_bias && !cfg->attention_out_bias && cfg->head_dim == 16 &&
	            cfg->num_key_value_heads == 2 && cfg->num_hidden_layers == 4 &&
	            !cfg->tie_word_embeddings && strcmp(cfg->model_type, "solar") == 0 &&
	            strcmp(cfg->architecture, "SolarForCausalLM") == 0);
}

/* MiMo: Qwen2's attention (q/k/v biases read from the tensors, none switched on), GQA 8 / 2,
 * head_dim hid / H, untied; the MTP layer's tensors are in the checkpoint */
static void check_mimo(const ckpt_config *cfg)
{
	assert_true(!cfg->attention_out_bias && cfg->head_dim == 16 &&
	            cfg->num_key_value_heads == 2 && !cfg->tie_word_embeddings &&
	            strcmp(cfg->model_type, "mimo") == 0 &&
	            strcmp(cfg->architecture, "MiMoForCausalLM") == 0);
}

/* the Mamba2 mixer and its layers */
static void check_granitemoehybrid(const ckpt_config *cfg)
{
	assert_true(cfg->has_layer_types);
	assert_int_equal(cfg->n_layer_types, 4);
	for (int k = 0; k < 4; k++)
		assert_int_equal(cfg->layer_types[k], k == 2 ? CKPT_LAYER_ATTN : CKPT_LAYER_MAMBA);
	assert_int_equal(cfg->mamba_n_heads, 8);
	assert_int_equal(cfg->mamba_n_groups, 1);
	assert_int_equal(cfg->mamba_d_state, 16);
	assert_int_equal(cfg->mamba_d_conv, 4);
	assert_int_equal(cfg->mamba_expand, 2);
	assert_int_equal(cfg->mamba_d_head, -1); /* "auto" */
	assert_true(cfg->mamba_conv_bias);
	assert_false(cfg->mamba_proj_bias);
	assert_int_equal(cfg->shared_expert_intermediate_size, 96);
}

/* Command R+'s q/k norms; Cohere2's none */
static void check_cohere(const ckpt_config *cfg)
{
	assert_int_equal(cfg->use_qk_norm, strcmp(cfg->model_type, "cohere") == 0);
	assert_int_equal(cfg->tie_given, strcmp(cfg->model_type, "cohere2") == 0);
	assert_false(cfg->has_layer_types);
}

static void check_olmo3(const ckpt_config *cfg)
{
	/* layers 0-2 sliding, 3 full, as listed */
	assert_true(cfg->has_layer_types);
	assert_int_equal(cfg->n_layer_types, 4);
	for (int k = 0; k < 4; k++)
		assert_int_equal(cfg->layer_types[k],
		                 k < 3 ? CKPT_LAYER_SLIDING_ATTN : CKPT_LAYER_FULL_ATTN);
}

/* conv, conv, full_attention, conv; Lfm2Config keys */
static void check_lfm2(const ckpt_config *cfg)
{
	assert_true(cfg->has_layer_types && cfg->tie_given && cfg->has_full_attn_idxs);
	assert_int_equal(cfg->n_layer_types, 4);
	for (int k = 0; k < 4; k++)
		assert_int_equal(cfg->layer_types[k],
		                 k == 2 ? CKPT_LAYER_FULL_ATTN : CKPT_LAYER_CONV);
	assert_int_equal(cfg->lfm2_conv_l_cache, 3);
	assert_int_equal(cfg->lfm2_multiple_of, 256);
	assert_int_equal(cfg->lfm2_block_dim, 256);
	assert_true(cfg->lfm2_auto_adjust && !cfg->lfm2_conv_bias && !cfg->lfm2_ffn_mult_null);
	assert_true(cfg->lfm2_ffn_mult == 1.0);
}

/* the releases' switches, biases on */
static void check_hunyuan_v1_dense(const ckpt_config *cfg)
{
	assert_true(cfg->use_qk_norm && cfg->attention_bias && !cfg->use_cla);
	assert_true(cfg->tie_given && cfg->tie_word_embeddings);
}

/* the per-layer lists read as one value */
static void check_hunyuan_v1_moe(const ckpt_config *cfg)
{
	assert_true(cfg->use_qk_norm && !cfg->attention_bias && !cfg->use_cla);
	assert_int_equal(cfg->shared_expert_intermediate_size, 128);
}

/* the fixture's q/k/v/o biases, no MLP biases */
static void check_nemotron(const ckpt_config *cfg)
{
	assert_true(cfg->attention_bias && !cfg->mlp_bias);
}

/* OPTConfig's keys: ffn_dim read as intermediate_size */
static void check_opt(const ckpt_config *cfg)
{
	assert_true(cfg->opt_word_embed_proj_dim == 64 && cfg->opt_max_pos == 64 &&
	            cfg->opt_ln_before && cfg->opt_final_norm && cfg->opt_ln_affine &&
	            cfg->attention_bias);
}

/* GPTJConfig's n_positions, n_inner */
static void check_gptj(const ckpt_config *cfg)
{
	assert_int_equal(cfg->intermediate_size, 256);
}

/* one type per layer: sliding, full */
static void check_ministral(const ckpt_config *cfg)
{
	assert_true(cfg->has_layer_types && cfg->n_layer_types == 2);
	assert_int_equal(cfg->layer_types[0], CKPT_LAYER_SLIDING_ATTN);
	assert_int_equal(cfg->layer_types[1], CKPT_LAYER_FULL_ATTN);
}

/* use_qkv_bias read into attention_bias */
static void check_stablelm(const ckpt_config *cfg)
{
	assert_true(cfg->attention_bias && !cfg->qk_layernorm && !cfg->use_parallel_residual);
}

/* layer_types of the two kinds */
static void check_minimax(const ckpt_config *cfg)
{
	assert_true(cfg->has_layer_types);
	assert_int_equal(cfg->n_layer_types, 4);
	assert_true(cfg->layer_types[0] == CKPT_LAYER_LINEAR_ATTN &&
	            cfg->layer_types[2] == CKPT_LAYER_FULL_ATTN);
	assert_int_equal(cfg->num_experts, 4);
}

/* MiniMax-Text-01's remote keys: attn_type_list [0, 0, 1, 0] read as layer_types */
static void check_minimax_text01(const ckpt_config *cfg)
{
	check_minimax(cfg);
	assert_true(cfg->layer_types[1] == CKPT_LAYER_LINEAR_ATTN &&
	            cfg->layer_types[3] == CKPT_LAYER_LINEAR_ATTN && !cfg->tie_word_embeddings &&
	            strcmp(cfg->model_type, "minimax_text_01") == 0 &&
	            strcmp(cfg->architecture, "MiniMaxText01ForCausalLM") == 0);
}

/* id2label's two entries over JambaConfig's */
static void check_jamba_cls(const ckpt_config *cfg)
{
	assert_true(cfg->rob_num_labels == 2 && cfg->jamba_attn_period == 4 &&
	            cfg->jamba_expert_offset == 1 && !cfg->tie_word_embeddings);
}

/* the periods, the v1 mixer's keys */
static void check_jamba(const ckpt_config *cfg)
{
	assert_int_equal(cfg->jamba_attn_period, 4);
	assert_int_equal(cfg->jamba_attn_offset, 2);
	assert_int_equal(cfg->jamba_expert_period, 2);
	assert_int_equal(cfg->jamba_expert_offset, 1);
	assert_int_equal(cfg->mamba_d_state, 16);
	assert_int_equal(cfg->mamba_d_conv, 4);
	assert_int_equal(cfg->mamba_expand, 2);
	assert_int_equal(cfg->mamba_dt_rank, -1); /* "auto" */
	assert_true(cfg->mamba_conv_bias);
	assert_false(cfg->mamba_proj_bias);
}

/* GLM-4.5's q/k norms and MoE keys */
static void check_glm4_moe(const ckpt_config *cfg)
{
	assert_true(cfg->use_qk_norm);
	assert_int_equal(cfg->first_k_dense_replace, 1);
	assert_int_equal(cfg->n_shared_experts, 1);
}

/* tied by the class default, layer_types given */
static void check_smollm3(const ckpt_config *cfg)
{
	assert_false(cfg->tie_given);
	assert_true(cfg->has_layer_types);
	assert_false(cfg->attention_bias || cfg->mlp_bias);
}

/* every bias switch on */
static void check_seed_oss(const ckpt_config *cfg)
{
	assert_true(cfg->attention_bias && cfg->attention_out_bias && cfg->mlp_bias);
	assert_false(cfg->tie_word_embeddings);
}

/* dots.llm1's MoE keys, no q/k norm key */
static void check_dots1(const ckpt_config *cfg)
{
	assert_false(cfg->use_qk_norm);
	assert_int_equal(cfg->first_k_dense_replace, 1);
	assert_int_equal(cfg->n_shared_experts, 2);
	assert_false(cfg->has_layer_types);
}

/* ERNIE-4.5-0.3B: every Linear with a bias */
static void check_ernie4_5(const ckpt_config *cfg)
{
	assert_true(cfg->use_bias);
}

/* ERNIE 4.5 MoE's keys */
static void check_ernie4_5_moe(const ckpt_config *cfg)
{
	assert_false(cfg->use_bias);
	assert_int_equal(cfg->n_shared_experts, 2); /* moe_num_shared_experts */
	assert_int_equal(cfg->moe_layer_start_index, 1);
	assert_int_equal(cfg->moe_layer_end_index, 2);
	assert_int_equal(cfg->moe_layer_interval, 1);
}

/* new_decoder_architecture: ln_attn / ln_mlp */
static void check_falcon(const ckpt_config *cfg)
{
	assert_int_equal(cfg->falcon_ln, 2);
	assert_false(cfg->attention_bias || cfg->attention_out_bias || cfg->mlp_bias);
}

/* RWForCausalLM (model_type RefinedWeb): RWConfig's n_head / n_head_kv / n_layer read, the new
 * architecture's ln_attn / ln_mlp, no biases, tied */
static void check_falcon_rw(const ckpt_config *cfg)
{
	assert_true(cfg->falcon_ln == 2 && cfg->num_key_value_heads == 2 &&
	            cfg->num_attention_heads == 8 && cfg->num_hidden_layers == 2 &&
	            !cfg->attention_bias && !cfg->mlp_bias && !cfg->tie_given &&
	            strcmp(cfg->model_type, "RefinedWeb") == 0 &&
	            strcmp(cfg->architecture, "RWForCausalLM") == 0);
}

/* The config keys one family (or a few) reads beyond the common sizes: its fixture
 * names, space-separated, and the check. Every row must name a fixture of the list. */
static const struct {
	const char *names;
	void (*check)(const ckpt_config *cfg);
} cfg_checks[] = {
    {"blip2", check_blip2},
    {"lfm2_vl", check_lfm2_vl},
    {"fuyu", check_fuyu},
    {"chameleon", check_chameleon},
    {"aya_vision", check_aya_vision},
    {"cohere2_vision", check_cohere2_vision},
    {"llava_onevision", check_llava_onevision},
    {"paligemma", check_paligemma},
    {"idefics3 smolvlm", check_idefics3},
    {"llava llava_next llava_next_video", check_llava},
    {"llava_pixtral", check_llava_pixtral},
    {"qwen2_audio", check_qwen2_audio},
    {"granite_speech", check_granite_speech},
    {"aria", check_aria},
    {"voxtral", check_voxtral},
    {"mllama", check_mllama},
    {"roberta xlm_roberta xlm_roberta_cls", check_roberta},
    {"modernbert", check_modernbert},
    {"modernbert_tok", check_modernbert_tok},
    {"modernbert_cls", check_modernbert_cls},
    {"llava_next_video", check_llava_next_video},
    {"glm4v glm4v_moe", check_glm4v},
    {"llama4 llama4_fbgemm", check_llama4},
    {"qwen3_next", check_qwen3_next},
    {"granitemoehybrid_dense", check_granitemoehybrid_dense},
    {"bamba", check_bamba},
    {"longcat_flash", check_longcat_flash},
    {"falcon_h1", check_falcon_h1},
    {"mamba falcon_mamba", check_mamba},
    {"zamba2", check_zamba2},
    {"qwen3_cls", check_qwen3_cls},
    {"bert_cls bert_tok", check_bert_cls},
    {"qwen2_5_omni", check_qwen2_5_omni},
    {"qwen3_omni_moe", check_qwen3_omni_moe},
    {"gemma3n_text", check_gemma3n_text},
    {"whisper", check_whisper},
    {"qwen2_rm", check_qwen2_rm},
    {"gpt2_cls", check_gpt2_cls},
    {"clip", check_clip},
    {"internlm2", check_internlm2},
    {"internlm2_ve", check_internlm2_ve},
    {"internlm2_rm", check_internlm2_rm},
    {"siglip", check_siglip},
    {"chatglm", check_chatglm},
    {"exaone", check_exaone},
    {"qwen", check_qwen},
    {"baichuan baichuan_7b", check_baichuan},
    {"minicpm", check_minicpm},
    {"internlm3", check_internlm3},
    {"nemotron_h_moe", check_nemotron_h_moe},
    {"minicpm3", check_minicpm3},
    {"lfm2_moe", check_lfm2_moe},
    {"minicpm_moe", check_minicpm_moe},
    {"internlm", check_internlm},
    {"orion", check_orion},
    {"telechat2", check_telechat2},
    {"jais", check_jais},
    {"arctic", check_arctic},
    {"afmoe", check_afmoe},
    {"step3_text", check_step3_text},
    {"mimo_v2_flash", check_mimo_v2_flash},
    {"grok1", check_grok1},
    {"bailing_moe", check_bailing_moe},
    {"bailing_moe_v2", check_bailing_moe_v2},
    {"decilm", check_decilm},
    {"xverse", check_xverse},
    {"aquila", check_aquila},
    {"stablelm_epoch", check_stablelm_epoch},
    {"teleflm", check_teleflm},
    {"falcon_rw", check_falcon_rw},
    {"solar", check_solar},
    {"mimo", check_mimo},
    {"deepseek_moe", check_deepseek_moe},
    {"telechat", check_telechat},
    {"ouro", check_ouro},
    {"plamo3", check_plamo3},
    {"plamo2", check_plamo2},
    {"pangu_dense", check_pangu_dense},
    {"llama_bidir_emb", check_llama_bidir_emb},
    {"llama_bidir_cls", check_llama_bidir_cls},
    {"gritlm", check_gritlm},
    {"nomic_bert", check_nomic_bert},
    {"gte_new", check_gte_new},
    {"gte_new_cls", check_gte_new_cls},
    {"bert_splade", check_bert_splade},
    {"jina_vl", check_jina_vl},
    {"qwen2_emb", check_qwen2_emb},
    {"mamba2", check_mamba2},
    {"nemotron_h", check_nemotron_h},
    {"granitemoehybrid", check_granitemoehybrid},
    {"cohere cohere2 cohere2_vision", check_cohere},
    {"olmo3 exaone4", check_olmo3},
    {"lfm2", check_lfm2},
    {"hunyuan_v1_dense", check_hunyuan_v1_dense},
    {"hunyuan_v1_moe", check_hunyuan_v1_moe},
    {"nemotron", check_nemotron},
    {"jais2", check_jais2},
    {"deepseek_v32", check_deepseek_v32},
    {"pangu_ultra_moe", check_pangu_ultra_moe},
    {"pangu_pro_moe_v2", check_pangu_pro_moe_v2},
    {"opt", check_opt},
    {"gptj", check_gptj},
    {"ministral", check_ministral},
    {"stablelm", check_stablelm},
    {"minimax", check_minimax},
    {"minimax_text01", check_minimax_text01},
    {"minimax_vl_01", check_minimax_vl_01},
    {"phi3v", check_phi3v},
    {"jamba_cls", check_jamba_cls},
    {"jamba", check_jamba},
    {"glm4_moe", check_glm4_moe},
    {"smollm3", check_smollm3},
    {"seed_oss", check_seed_oss},
    {"dots1", check_dots1},
    {"ernie4_5", check_ernie4_5},
    {"ernie4_5_moe", check_ernie4_5_moe},
    {"falcon", check_falcon},
};

static bool cfg_checks_used[sizeof(cfg_checks) / sizeof(cfg_checks[0])];

/* Whether the space-separated list names holds name. */
static bool names_hold(const char *names, const char *name)
{
	size_t n = strlen(name);
	for (const char *p = names; (p = strstr(p, name)) != NULL; p += n)
		if ((p == names || p[-1] == ' ') && (p[n] == ' ' || p[n] == '\0'))
			return true;
	return false;
}

#endif /* WT_TEST_FIXTURES_CFG_H */
