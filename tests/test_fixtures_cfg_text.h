/*
 * test_fixtures_cfg_text.h — test_fixtures_cfg.h's checks, continued: the text families'
 * config keys (one function per family; cfg_checks[] in test_fixtures_cfg.h names the
 * fixtures each applies to). New families' checks go at the end of this file.
 * Included by test_fixtures_cfg.h only.
 */
#ifndef WT_TEST_FIXTURES_CFG_TEXT_H
#define WT_TEST_FIXTURES_CFG_TEXT_H

#include "loader/loader_decilm.h"

/* Zamba2Config's keys under the mixer's names, layers_block_type as layer_types, the blocks. */
static void check_zamba2(const ckpt_config *cfg)
{
	static const int hybrid[5] = {0, 1, 1, 0, 1};
	assert_int_equal(cfg->n_layer_types, 5);
	for (int k = 0; k < 5; k++)
		assert_int_equal(cfg->layer_types[k],
		                 hybrid[k] ? CKPT_LAYER_HYBRID : CKPT_LAYER_MAMBA);
	assert_true(cfg->mamba_n_heads == 8 && cfg->mamba_n_groups == 4 &&
	            cfg->mamba_d_state == 16 && cfg->mamba_d_conv == 4 && cfg->mamba_expand == 2 &&
	            cfg->mamba_conv_bias && !cfg->mamba_proj_bias);
	assert_true(cfg->z2_mem_blocks == 2 && cfg->z2_adapter_rank == 8 && cfg->z2_attn_adapter);
}

/* RobertaConfig's keys as the fixture gives them */
static void check_roberta(const ckpt_config *cfg)
{
	assert_true(cfg->rob_max_pos == 66 && cfg->rob_types == 1 && cfg->rob_pad == 1 &&
	            cfg->rob_abs_pos && !cfg->rob_decoder &&
	            cfg->rob_num_labels == (strstr(cfg->architecture, "Classification") ? 1 : 2));
}

/* ModernBertConfig's keys as the fixture gives */
static void check_modernbert(const ckpt_config *cfg)
{
	assert_true(cfg->mb_every == 3 && cfg->mb_local == 4 && cfg->mb_norm_bias &&
	            cfg->attention_bias && cfg->mlp_bias && cfg->mb_gelu &&
	            cfg->mb_global_theta == 160000.0 && cfg->mb_local_theta == 10000.0);
}

/* modernbert_cls's keys, head.dense's bias */
static void check_modernbert_tok(const ckpt_config *cfg)
{
	assert_true(cfg->mb_every == 2 && !cfg->mb_norm_bias && cfg->mb_cls_bias &&
	            cfg->mb_cls_gelu && cfg->rob_num_labels == 2);
}

/* no bias, a null local theta, mean pooling */
static void check_modernbert_cls(const ckpt_config *cfg)
{
	assert_true(cfg->mb_every == 2 && cfg->mb_local == 2 && !cfg->mb_norm_bias &&
	            !cfg->attention_bias && !cfg->mlp_bias && !cfg->mb_cls_bias &&
	            cfg->mb_pool == 1 && cfg->rob_num_labels == 1 &&
	            cfg->mb_local_theta == 160000.0);
}

/* the gated delta net and its layer pattern */
static void check_qwen3_next(const ckpt_config *cfg)
{
	assert_int_equal(cfg->full_attention_interval, 2);
	assert_false(cfg->has_layer_types);
	assert_int_equal(cfg->lin_num_k_heads, 4);
	assert_int_equal(cfg->lin_num_v_heads, 8);
	assert_int_equal(cfg->lin_k_head_dim, 32);
	assert_int_equal(cfg->lin_v_head_dim, 32);
	assert_int_equal(cfg->lin_conv_kernel, 4);
	assert_int_equal(cfg->shared_expert_intermediate_size, 128);
	assert_int_equal(cfg->n_mlp_only_layers, 1);
}

/* two groups, every bias */
static void check_granitemoehybrid_dense(const ckpt_config *cfg)
{
	assert_int_equal(cfg->layer_types[0], CKPT_LAYER_ATTN);
	assert_int_equal(cfg->layer_types[2], CKPT_LAYER_MAMBA);
	assert_int_equal(cfg->mamba_n_groups, 2);
	assert_int_equal(cfg->mamba_d_conv, 3);
	assert_true(cfg->mamba_proj_bias && cfg->mamba_conv_bias && cfg->attention_bias);
	assert_int_equal(cfg->shared_expert_intermediate_size, 192);
}

/* attn_layer_indices, the class's rotary factor */
static void check_bamba(const ckpt_config *cfg)
{
	assert_false(cfg->has_layer_types);
	assert_true(cfg->has_full_attn_idxs);
	assert_int_equal(cfg->n_full_attn_idxs, 1);
	assert_int_equal(cfg->full_attn_idxs[0], 1);
	assert_int_equal(cfg->mamba_n_heads, 8);
	assert_int_equal(cfg->mamba_d_state, 16);
	assert_true(cfg->mamba_conv_bias);
	assert_true(cfg->partial_rotary_factor == 0.5);
}

/* LongcatFlashConfig's own key names */
static void check_longcat_flash(const ckpt_config *cfg)
{
	assert_int_equal(cfg->zero_expert_num, 2);
	assert_int_equal(cfg->q_lora_rank, 64);
	assert_int_equal(cfg->kv_lora_rank, 32);
	assert_int_equal(cfg->qk_rope_head_dim, 8);
	assert_int_equal(cfg->v_head_dim, 16);
}

/* mamba_d_ssm, the gated norm, projectors */
static void check_falcon_h1(const ckpt_config *cfg)
{
	assert_false(cfg->has_layer_types);
	assert_int_equal(cfg->mamba_d_ssm, 192);
	assert_int_equal(cfg->mamba_n_heads, 8);
	assert_int_equal(cfg->head_dim, 32);
	assert_true(cfg->mamba_rms_norm && cfg->mamba_conv_bias);
	assert_false(cfg->projectors_bias || cfg->mamba_proj_bias);
}

static void check_mamba(const ckpt_config *cfg)
{
	/* MambaConfig's (FalconMambaConfig's) keys under the mixer's names; falcon_mamba's
	 * intermediate_size 256 over its expand 16 */
	assert_int_equal(cfg->intermediate_size, 256);
	assert_int_equal(cfg->mamba_d_state, 16);
	assert_int_equal(cfg->mamba_d_conv, 4);
	assert_int_equal(cfg->mamba_dt_rank, 8);
	assert_true(cfg->mamba_conv_bias);
	assert_false(cfg->mamba_proj_bias);
}

/* id2label's one entry; no online conversion */
static void check_qwen3_cls(const ckpt_config *cfg)
{
	assert_true(cfg->rob_num_labels == 1 && !cfg->cls_from_token);
}

/* id2label's entries; BertEmbedding's tables */
static void check_bert_cls(const ckpt_config *cfg)
{
	assert_true(cfg->rob_num_labels == (strstr(cfg->architecture, "Sequence") ? 2 : 4) &&
	            cfg->rob_max_pos == 64 && cfg->rob_types == 2 && cfg->rob_abs_pos &&
	            !cfg->rob_decoder);
}

/* Gemma3nTextConfig's sizes; I from the list */
static void check_gemma3n_text(const ckpt_config *cfg)
{
	assert_true(cfg->g3n_altup == 4 && cfg->g3n_active == 0 && cfg->g3n_laurel == 16 &&
	            cfg->g3n_ple == 16 && cfg->g3n_ple_vocab == 1000 && cfg->g3n_kv_shared == 2 &&
	            cfg->n_layer_types == 5 && cfg->layer_types[2] == CKPT_LAYER_FULL_ATTN);
}

/* the class's one label */
static void check_qwen2_rm(const ckpt_config *cfg)
{
	assert_true(cfg->rob_num_labels == 1 && !cfg->cls_from_token);
}

/* id2label's two entries over GPT2Config's keys */
static void check_gpt2_cls(const ckpt_config *cfg)
{
	assert_true(cfg->rob_num_labels == 2 && !cfg->cls_from_token &&
	            cfg->num_key_value_heads == 8);
}

/* InternLM2Config's bias false, no head_dim key */
static void check_internlm2(const ckpt_config *cfg)
{
	assert_true(!cfg->attention_bias && cfg->head_dim == 16 &&
	            strcmp(cfg->model_type, "internlm2") == 0);
}

/* Mono-InternVL's llm_config: InternLM2Config's keys (model_type internlm2) under
 * InternLM2VEForCausalLM, KV 4 */
static void check_internlm2_ve(const ckpt_config *cfg)
{
	check_internlm2(cfg);
	assert_true(cfg->num_key_value_heads == 4 &&
	            strcmp(cfg->architecture, "InternLM2VEForCausalLM") == 0);
}

/* ChatGLMConfig's names: add_qkv_bias, kv_channels */
static void check_chatglm(const ckpt_config *cfg)
{
	assert_true(cfg->attention_bias && cfg->head_dim == 16 && !cfg->tie_word_embeddings &&
	            strcmp(cfg->model_type, "chatglm") == 0);
}

/* ExaoneConfig's names: num_layers, layer_norm_epsilon */
static void check_exaone(const ckpt_config *cfg)
{
	assert_true(!cfg->attention_bias && cfg->head_dim == 16 && cfg->num_hidden_layers == 2 &&
	            !cfg->tie_word_embeddings && strcmp(cfg->model_type, "exaone") == 0);
}

/* QWenConfig's names: kv_channels, intermediate_size x 2 */
static void check_qwen(const ckpt_config *cfg)
{
	assert_true(!cfg->attention_bias && cfg->head_dim == 16 && cfg->intermediate_size == 192 &&
	            cfg->num_key_value_heads == 8 && !cfg->tie_word_embeddings &&
	            strcmp(cfg->model_type, "qwen") == 0);
}

/* W_pack: multi-head, no head_dim key */
static void check_baichuan(const ckpt_config *cfg)
{
	assert_true(!cfg->attention_bias && cfg->num_key_value_heads == cfg->num_attention_heads &&
	            cfg->head_dim * cfg->num_attention_heads == 128 && !cfg->tie_word_embeddings &&
	            strcmp(cfg->model_type, "baichuan") == 0);
}

/* Llama's names, tied by MiniCPMConfig's default (no tie_word_embeddings key) */
static void check_minicpm(const ckpt_config *cfg)
{
	assert_true(!cfg->attention_bias && cfg->head_dim == 16 && !cfg->tie_given &&
	            strcmp(cfg->model_type, "minicpm") == 0);
}

/* qkv_bias / bias false read as attention_bias / attention_out_bias, head_dim given, untied */
static void check_internlm3(const ckpt_config *cfg)
{
	assert_true(!cfg->attention_bias && !cfg->attention_out_bias && cfg->head_dim == 16 &&
	            !cfg->tie_word_embeddings && strcmp(cfg->model_type, "internlm3") == 0);
}

/* the base model, read as Qwen2Config */
static void check_qwen2_emb(const ckpt_config *cfg)
{
	assert_true(strcmp(cfg->architecture, "Qwen2Model") == 0 &&
	            strcmp(cfg->model_type, "qwen2") == 0);
}

/* Mamba2Config's keys under the mixer's names */
static void check_mamba2(const ckpt_config *cfg)
{
	assert_int_equal(cfg->mamba_n_heads, 8);
	assert_int_equal(cfg->mamba_d_head, 32);
	assert_int_equal(cfg->mamba_n_groups, 2);
	assert_int_equal(cfg->mamba_d_state, 16);
	assert_int_equal(cfg->mamba_d_conv, 4);
	assert_int_equal(cfg->mamba_expand, 2);
	assert_true(cfg->mamba_conv_bias);
	assert_false(cfg->mamba_proj_bias);
}

/* NemotronHConfig's keys, the pattern */
static void check_nemotron_h(const ckpt_config *cfg)
{
	assert_true(cfg->mamba_n_heads == 8 && cfg->mamba_d_head == 16 && cfg->mamba_d_ssm == 128 &&
	            cfg->mamba_n_groups == 4 && cfg->mamba_d_state == 16 &&
	            cfg->mamba_d_conv == 4 && cfg->mamba_conv_bias && !cfg->mamba_proj_bias &&
	            !cfg->mlp_bias && cfg->n_layer_types == 5);
	static const uint8_t kinds[] = {CKPT_LAYER_MAMBA, CKPT_LAYER_MLP, CKPT_LAYER_MAMBA,
	                                CKPT_LAYER_ATTN, CKPT_LAYER_MLP};
	for (int k = 0; k < 5; k++)
		assert_int_equal(cfg->layer_types[k], kinds[k]);
}

/* NemotronHConfig's MoE keys, the pattern with "E" layers */
static void check_nemotron_h_moe(const ckpt_config *cfg)
{
	assert_true(cfg->mamba_n_heads == 8 && cfg->mamba_n_groups == 4 &&
	            cfg->n_layer_types == 4 && cfg->num_experts == 8 &&
	            cfg->moe_intermediate_size == 64 && cfg->n_shared_experts == 1 &&
	            cfg->shared_expert_intermediate_size == 128);
	static const uint8_t kinds[] = {CKPT_LAYER_MAMBA, CKPT_LAYER_MOE, CKPT_LAYER_ATTN,
	                                CKPT_LAYER_MOE};
	for (int k = 0; k < 4; k++)
		assert_int_equal(cfg->layer_types[k], kinds[k]);
}

/* MLA dims, v_head_dim None -> qk_nope_head_dim, tied by MiniCPM3Config's default (no key) */
static void check_minicpm3(const ckpt_config *cfg)
{
	assert_true(!cfg->attention_bias && !cfg->tie_given && cfg->q_lora_rank == 64 &&
	            cfg->kv_lora_rank == 32 && cfg->qk_nope_head_dim == 16 &&
	            cfg->qk_rope_head_dim == 8 && cfg->v_head_dim == 16 && cfg->num_experts == 0 &&
	            strcmp(cfg->model_type, "minicpm3") == 0);
}

/* Lfm2MoeConfig's keys: layer_types, num_dense_layers 1 (first_k_dense_replace), the expert
 * bias, tied by tie_embedding, the MLP intermediate_size wide (no block_* rule) */
static void check_lfm2_moe(const ckpt_config *cfg)
{
	assert_true(cfg->has_layer_types && cfg->n_layer_types == 4 && cfg->num_experts == 8 &&
	            cfg->moe_intermediate_size == 64 && cfg->first_k_dense_replace == 1 &&
	            cfg->lfm2_expert_bias && cfg->tie_word_embeddings && !cfg->lfm2_auto_adjust &&
	            cfg->lfm2_conv_l_cache == 3 && strcmp(cfg->model_type, "lfm2_moe") == 0);
	static const uint8_t kinds[] = {CKPT_LAYER_CONV, CKPT_LAYER_FULL_ATTN, CKPT_LAYER_CONV,
	                                CKPT_LAYER_CONV};
	for (int k = 0; k < 4; k++)
		assert_int_equal(cfg->layer_types[k], kinds[k]);
}

/* MiniCPM-MoE: num_experts / num_experts_per_tok through MiniCPMConfig's kwargs, the experts
 * intermediate_size wide, tied by MiniCPMConfig's default (no key) */
static void check_minicpm_moe(const ckpt_config *cfg)
{
	assert_true(!cfg->attention_bias && cfg->head_dim == 16 && !cfg->tie_given &&
	            cfg->num_experts == 4 && cfg->moe_intermediate_size == 64 &&
	            cfg->intermediate_size == 64 && strcmp(cfg->model_type, "minicpm") == 0 &&
	            strcmp(cfg->architecture, "MiniCPMForCausalLM") == 0);
}

/* InternLM: bias true read as attention_bias / attention_out_bias (q/k/v and o_proj), MHA
 * (no num_key_value_heads), head_dim hid / H, untied */
static void check_internlm(const ckpt_config *cfg)
{
	assert_true(cfg->attention_bias && cfg->attention_out_bias && cfg->head_dim == 16 &&
	            cfg->num_key_value_heads == 8 && !cfg->tie_word_embeddings &&
	            strcmp(cfg->model_type, "internlm") == 0 &&
	            strcmp(cfg->architecture, "InternLMForCausalLM") == 0);
}

/* Orion: no linear biases (attention_bias false), grouped kv heads, head_dim hid / H, untied */
static void check_orion(const ckpt_config *cfg)
{
	assert_true(!cfg->attention_bias && !cfg->attention_out_bias && !cfg->mlp_bias &&
	            cfg->head_dim == 32 && cfg->num_key_value_heads == 2 &&
	            !cfg->tie_word_embeddings && strcmp(cfg->model_type, "orion") == 0 &&
	            strcmp(cfg->architecture, "OrionForCausalLM") == 0);
}

/* TeleChat2: n_head / n_layer / ffn_hidden_size read as the Llama keys, MHA (no
 * num_key_value_heads), head_dim hid / n_head, untied as the release says */
static void check_telechat2(const ckpt_config *cfg)
{
	assert_true(cfg->num_attention_heads == 8 && cfg->num_hidden_layers == 2 &&
	            cfg->intermediate_size == 192 && cfg->head_dim == 16 &&
	            cfg->num_key_value_heads == 8 && !cfg->tie_word_embeddings &&
	            strcmp(cfg->model_type, "telechat") == 0 &&
	            strcmp(cfg->architecture, "TeleChat2ForCausalLM") == 0);
}

/* JAIS: GPT2Config's n_* keys laid over the common names, n_inner 320 as intermediate_size,
 * ALiBi (no wpe: jais_wpe false), MHA, tied */
static void check_jais(const ckpt_config *cfg)
{
	assert_true(!cfg->jais_wpe && cfg->head_dim == 16 && cfg->num_key_value_heads == 8 &&
	            cfg->intermediate_size == 320 && cfg->tie_word_embeddings &&
	            strcmp(cfg->model_type, "jais") == 0 &&
	            strcmp(cfg->architecture, "JAISLMHeadModel") == 0);
}

/* Arctic: use_residual and moe_layer_frequency 2 read (layer 1 MoE), 4 experts top-2
 * intermediate_size wide, GQA, untied */
static void check_arctic(const ckpt_config *cfg)
{
	assert_true(cfg->arctic_residual && cfg->arctic_moe_freq == 2 && cfg->num_experts == 4 &&
	            cfg->moe_intermediate_size == 64 && cfg->head_dim == 16 &&
	            cfg->num_key_value_heads == 2 && !cfg->tie_word_embeddings &&
	            strcmp(cfg->model_type, "arctic") == 0 &&
	            strcmp(cfg->architecture, "ArcticForCausalLM") == 0);
}

/* AFMoE: num_dense_layers 1 as first_k_dense_replace, num_shared_experts 2 x Ie 64 as the shared
 * width, the four layer_types codes (3 sliding, 1 full), head_dim 32 given, GQA 8 / 2, untied */
static void check_afmoe(const ckpt_config *cfg)
{
	assert_true(cfg->first_k_dense_replace == 1 && cfg->n_shared_experts == 2 &&
	            cfg->shared_expert_intermediate_size == 128 && cfg->num_experts == 8 &&
	            cfg->head_dim == 32 && cfg->num_key_value_heads == 2 && cfg->has_layer_types &&
	            cfg->n_layer_types == 4 && cfg->layer_types[2] == CKPT_LAYER_SLIDING_ATTN &&
	            cfg->layer_types[3] == CKPT_LAYER_FULL_ATTN && !cfg->tie_word_embeddings &&
	            strcmp(cfg->model_type, "afmoe") == 0 &&
	            strcmp(cfg->architecture, "AfmoeForCausalLM") == 0);
}

/* Ouro: Qwen2's dims without biases, GQA 8 / 2, head_dim 16 (hid / H), untied */
static void check_ouro(const ckpt_config *cfg)
{
	assert_true(!cfg->attention_bias && cfg->head_dim == 16 && cfg->num_key_value_heads == 2 &&
	            cfg->intermediate_size == 192 && !cfg->tie_word_embeddings &&
	            strcmp(cfg->model_type, "ouro") == 0 &&
	            strcmp(cfg->architecture, "OuroForCausalLM") == 0);
}

/* DeciLM (Llama-Nemotron): its block_configs read layer by layer by the loader's
 * ckpt_config_decilm: layer 0 two kv heads and 256 wide, layer 1 no attention and 512 wide, layer
 * 2 one kv head and no MLP, layer 3 one kv head and 256 wide; intermediate_size and
 * num_key_value_heads null (the heads), untied */
static void check_decilm(const ckpt_config *cfg)
{
	assert_true(strcmp(cfg->model_type, "nemotron-nas") == 0 &&
	            strcmp(cfg->architecture, "DeciLMForCausalLM") == 0 &&
	            !cfg->tie_word_embeddings && cfg->num_key_value_heads == 8 &&
	            cfg->intermediate_size < 0 && !cfg->attention_bias && !cfg->mlp_bias);
	static const ckpt_decilm_block want[4] = {
	    {true, true, 2, 256}, {false, true, 0, 512}, {true, false, 1, 0}, {true, true, 1, 256}};
	ckpt_decilm_block *b;
	wt_errbuf err = {0};
	static const char json[] =
	    "{\"block_configs\":[{\"attention\":{\"n_heads_in_group\":4},\"ffn\":{\"ffn_mult\":"
	    "1.3125}},{\"attention\":{\"no_op\":true},\"ffn\":{\"ffn_mult\":5.25}},{\"attention\":"
	    "{\"n_heads_in_group\":8},\"ffn\":{\"no_op\":true}},{\"attention\":{\"n_heads_in_"
	    "group\""
	    ":8},\"ffn\":{\"ffn_mult\":1.3125}}]}";
	assert_int_equal(ckpt_config_decilm(json, sizeof(json) - 1, cfg, &b, &err), WT_OK);
	for (int i = 0; i < 4; i++)
		assert_true(b[i].attn == want[i].attn && b[i].ffn == want[i].ffn &&
		            b[i].kv_heads == want[i].kv_heads && b[i].inter == want[i].inter);
	free(b);
}

/* Jais 2: attention_bias / mlp_bias read true (Jais2Config's defaults given as such), head_dim
 * 16, GQA over 2 kv heads, intermediate_size 256, untied */
static void check_jais2(const ckpt_config *cfg)
{
	assert_true(cfg->attention_bias && cfg->mlp_bias && cfg->head_dim == 16 &&
	            cfg->num_key_value_heads == 2 && cfg->intermediate_size == 256 &&
	            !cfg->tie_word_embeddings && strcmp(cfg->model_type, "jais2") == 0 &&
	            strcmp(cfg->architecture, "Jais2ForCausalLM") == 0);
}

/* DeepSeek-V3.2: V3's keys read as V3's (q_lora_rank 128, kv_lora_rank 64, nope / rope / v 32,
 * layer 0 dense, 4 experts + 1 shared), model_type deepseek_v32 (the index keys are the loader's
 * checks, not ckpt_config fields) */
static void check_deepseek_v32(const ckpt_config *cfg)
{
	assert_true(cfg->q_lora_rank == 128 && cfg->kv_lora_rank == 64 &&
	            cfg->qk_nope_head_dim == 32 && cfg->qk_rope_head_dim == 32 &&
	            cfg->v_head_dim == 32 && cfg->first_k_dense_replace == 1 &&
	            cfg->num_experts == 4 && cfg->n_shared_experts == 1 &&
	            !cfg->tie_word_embeddings && strcmp(cfg->model_type, "deepseek_v32") == 0 &&
	            strcmp(cfg->architecture, "DeepseekV32ForCausalLM") == 0);
}

/* Step 3: moe_layers_enum "1,2" read as moe_layers, share_q_dim 96 as q_lora_rank,
 * share_expert_dim 96 as the shared width, one kv head, head_dim 64 given, untied */
static void check_step3_text(const ckpt_config *cfg)
{
	assert_true(cfg->has_moe_layers && cfg->n_moe_layers == 2 && cfg->moe_layers[0] == 1 &&
	            cfg->moe_layers[1] == 2 && cfg->q_lora_rank == 96 &&
	            cfg->shared_expert_intermediate_size == 96 && cfg->num_experts == 4 &&
	            cfg->moe_intermediate_size == 64 && cfg->head_dim == 64 &&
	            cfg->num_key_value_heads == 1 && !cfg->tie_word_embeddings &&
	            strcmp(cfg->model_type, "step3_text") == 0 &&
	            strcmp(cfg->architecture, "Step3TextForCausalLM") == 0);
}

/* PLaMo 3: head_dim 32 given (H d 256 against hid 128), GQA 8 / 2, V 1008, 3 layers, no biases,
 * untied (Plamo3Config's default is tied) */
static void check_plamo3(const ckpt_config *cfg)
{
	assert_true(!cfg->attention_bias && cfg->head_dim == 32 && cfg->num_key_value_heads == 2 &&
	            cfg->intermediate_size == 192 && cfg->vocab_size == 1008 &&
	            cfg->num_hidden_layers == 3 && !cfg->tie_word_embeddings &&
	            strcmp(cfg->model_type, "plamo3") == 0 &&
	            strcmp(cfg->architecture, "Plamo3ForCausalLM") == 0);
}

/* openPangu-Embedded: bias true read as q/k/v and o_proj biases, GQA 8 / 2, head_dim 16 (hid /
 * H), untied */
static void check_pangu_dense(const ckpt_config *cfg)
{
	assert_true(cfg->attention_bias && cfg->attention_out_bias && cfg->head_dim == 16 &&
	            cfg->num_key_value_heads == 2 && cfg->intermediate_size == 192 &&
	            !cfg->tie_word_embeddings && strcmp(cfg->model_type, "PanguEmbedded") == 0 &&
	            strcmp(cfg->architecture, "PanguEmbeddedForCausalLM") == 0);
}

/* MiMo-V2-Flash: moe_layer_freq [0, 1, 1] read as moe_layers 1, 2; the full layers' dims (the
 * SWA layers' are the planner's layer_dims). */
static void check_mimo_v2_flash(const ckpt_config *cfg)
{
	assert_true(cfg->has_moe_layers && cfg->n_moe_layers == 2 && cfg->moe_layers[0] == 1 &&
	            cfg->moe_layers[1] == 2 && cfg->num_experts == 8 &&
	            cfg->moe_intermediate_size == 64 && cfg->head_dim == 32 &&
	            cfg->v_head_dim == 16 && cfg->num_key_value_heads == 2 &&
	            !cfg->tie_word_embeddings && strcmp(cfg->model_type, "mimo_v2_flash") == 0 &&
	            strcmp(cfg->architecture, "MiMoV2FlashForCausalLM") == 0);
}

/* InternLM2's reward model: InternLM2Config's keys (model_type internlm2, KV 2, untied) under
 * InternLM2ForRewardModel, v_head's one label */
static void check_internlm2_rm(const ckpt_config *cfg)
{
	check_internlm2(cfg);
	assert_true(cfg->num_key_value_heads == 2 && cfg->rob_num_labels == 1 &&
	            strcmp(cfg->architecture, "InternLM2ForRewardModel") == 0);
}

/* LlamaBidirectionalModel: model_type llama_bidirec read with LlamaConfig's keys (GQA 4 / 2,
 * head_dim 32), no attention bias, tied as the 1B release */
static void check_llama_bidir_emb(const ckpt_config *cfg)
{
	assert_true(!cfg->attention_bias && cfg->head_dim == 32 && cfg->num_key_value_heads == 2 &&
	            cfg->intermediate_size == 192 && cfg->tie_word_embeddings &&
	            strcmp(cfg->model_type, "llama_bidirec") == 0 &&
	            strcmp(cfg->architecture, "LlamaBidirectionalModel") == 0);
}

/* NomicBertModel: GPT-2's n_* dims read onto BERT's names (n_inner as intermediate_size), the
 * bias switches onto attention_bias / mlp_bias, type_vocab_size 2 */
static void check_nomic_bert(const ckpt_config *cfg)
{
	assert_true(cfg->attention_bias && cfg->mlp_bias && cfg->head_dim == 16 &&
	            cfg->num_key_value_heads == 8 && cfg->intermediate_size == 192 &&
	            cfg->rob_types == 2 && strcmp(cfg->model_type, "nomic_bert") == 0 &&
	            strcmp(cfg->architecture, "NomicBertModel") == 0);
}

/* GteNewModel (model_type new): BERT's dim names read as they are, one token type row */
static void check_gte_new(const ckpt_config *cfg)
{
	assert_true(cfg->head_dim == 16 && cfg->num_key_value_heads == 8 &&
	            cfg->intermediate_size == 192 && cfg->rob_types == 1 &&
	            strcmp(cfg->model_type, "new") == 0 &&
	            strcmp(cfg->architecture, "GteNewModel") == 0);
}

/* LlamaBidirectionalForSequenceClassification: model_type llama_bidirec read with LlamaConfig's
 * keys (GQA 4 / 2, head_dim 32) and one label (id2label), tied as the 1B reranker */
static void check_llama_bidir_cls(const ckpt_config *cfg)
{
	assert_true(!cfg->attention_bias && cfg->head_dim == 32 && cfg->num_key_value_heads == 2 &&
	            cfg->rob_num_labels == 1 && !cfg->cls_from_token && cfg->tie_word_embeddings &&
	            strcmp(cfg->model_type, "llama_bidirec") == 0 &&
	            strcmp(cfg->architecture, "LlamaBidirectionalForSequenceClassification") == 0);
}

/* GritLM: model_type mistral read with MistralConfig's keys (GQA 4 / 2, head_dim 32), untied,
 * the architecture vLLM's name for it */
static void check_gritlm(const ckpt_config *cfg)
{
	assert_true(!cfg->attention_bias && cfg->head_dim == 32 && cfg->num_key_value_heads == 2 &&
	            !cfg->tie_word_embeddings && strcmp(cfg->model_type, "mistral") == 0 &&
	            strcmp(cfg->architecture, "GritLM") == 0);
}

/* openPangu-Ultra-MoE: DeepSeek-V3's keys read as V3's (q_lora_rank 128, kv_lora_rank 64, nope /
 * rope / v 32, layer 0 dense, 4 experts + 1 shared), sandwich_norm read, untied */
static void check_pangu_ultra_moe(const ckpt_config *cfg)
{
	assert_true(cfg->q_lora_rank == 128 && cfg->kv_lora_rank == 64 &&
	            cfg->qk_nope_head_dim == 32 && cfg->qk_rope_head_dim == 32 &&
	            cfg->v_head_dim == 32 && cfg->first_k_dense_replace == 1 &&
	            cfg->num_experts == 4 && cfg->n_shared_experts == 1 && cfg->sandwich_norm &&
	            !cfg->tie_word_embeddings && strcmp(cfg->model_type, "pangu_ultra_moe") == 0 &&
	            strcmp(cfg->architecture, "PanguUltraMoEForCausalLM") == 0);
}

static void check_gte_new_cls(const ckpt_config *cfg)
{
	assert_true(cfg->head_dim == 16 && cfg->intermediate_size == 192 && cfg->rob_types == 1 &&
	            cfg->rob_num_labels == 1 && strcmp(cfg->model_type, "new") == 0 &&
	            strcmp(cfg->architecture, "GteNewForSequenceClassification") == 0);
}

static void check_bert_splade(const ckpt_config *cfg)
{
	assert_true(cfg->rob_max_pos == 64 && cfg->rob_types == 2 && cfg->rob_abs_pos &&
	            !cfg->rob_decoder && !cfg->tie_word_embeddings &&
	            strcmp(cfg->architecture, "BertSpladeSparseEmbeddingModel") == 0);
}

/* jina-reranker-m0: Qwen2-VL's keys (vision depth 2, embed 128, MRoPE [4, 6, 6]) under
 * JinaVLForRanking, tied, the one label vLLM sets */
static void check_jina_vl(const ckpt_config *cfg)
{
	assert_true(cfg->rob_num_labels == 1 && !cfg->cls_from_token && cfg->tie_word_embeddings &&
	            cfg->has_vision && cfg->v_depth == 2 && cfg->v_embed_dim == 128 &&
	            cfg->has_mrope && cfg->n_mrope == 3 && cfg->mrope_section[0] == 4 &&
	            strcmp(cfg->model_type, "qwen2_vl") == 0 &&
	            strcmp(cfg->architecture, "JinaVLForRanking") == 0);
}

/* openPangu-Pro-MoE-V2: the sink attention's head_dim qk_nope_dim + qk_rope_dim (40, not hid / H)
 * and v_head_dim v_channels (24) laid on by the loader, 4 kv heads, layer 0 dense, 4 experts + 1
 * shared, sandwich_norm and router_enable_expert_bias read, untied */
static void check_pangu_pro_moe_v2(const ckpt_config *cfg)
{
	assert_true(cfg->head_dim == 40 && cfg->v_head_dim == 24 && cfg->num_key_value_heads == 4 &&
	            cfg->first_k_dense_replace == 1 && cfg->num_experts == 4 &&
	            cfg->n_shared_experts == 1 && cfg->sandwich_norm && cfg->router_expert_bias &&
	            !cfg->tie_word_embeddings && strcmp(cfg->model_type, "PanguProMoEV2") == 0 &&
	            strcmp(cfg->architecture, "PanguProMoEV2ForCausalLM") == 0);
}

/* PLaMo 2: hidden_size_per_head 16 read as head_dim and the mixer's head width, H 8 over one kv
 * head, mamba_step 2 laid out as layer_types mamba / attention / mamba / attention, 8 mamba heads
 * (width 128), state 16, time_step_rank max(64, 64 / 16) = 64, untied (Plamo2Config ties) */
static void check_plamo2(const ckpt_config *cfg)
{
	assert_true(
	    cfg->head_dim == 16 && cfg->num_key_value_heads == 1 && cfg->intermediate_size == 128 &&
	    cfg->vocab_size == 1000 && cfg->num_hidden_layers == 4 && !cfg->tie_word_embeddings &&
	    cfg->mamba_n_heads == 8 && cfg->mamba_d_ssm == 128 && cfg->mamba_d_state == 16 &&
	    cfg->mamba_d_conv == 4 && cfg->mamba_dt_rank == 64 && cfg->n_layer_types == 4 &&
	    cfg->layer_types[0] == CKPT_LAYER_MAMBA && cfg->layer_types[1] == CKPT_LAYER_ATTN &&
	    cfg->layer_types[2] == CKPT_LAYER_MAMBA && cfg->layer_types[3] == CKPT_LAYER_ATTN &&
	    strcmp(cfg->model_type, "plamo2") == 0 &&
	    strcmp(cfg->architecture, "Plamo2ForCausalLM") == 0);
}

/* MiniMax-VL-01: text_config's MiniMax-Text-01 keys (attn_type_list [0, 0, 1, 0] as layer_types,
 * 4 experts), the CLIP tower, vision_feature_layer -1; the top level's tie not the LM's */
static void check_minimax_vl_01(const ckpt_config *cfg)
{
	assert_true(cfg->has_layer_types && cfg->n_layer_types == 4 &&
	            cfg->layer_types[1] == CKPT_LAYER_LINEAR_ATTN &&
	            cfg->layer_types[2] == CKPT_LAYER_FULL_ATTN && cfg->num_experts == 4 &&
	            !cfg->tie_word_embeddings && cfg->v_feature_layer == -1 &&
	            cfg->v_hidden_size == 64 && cfg->v_num_layers == 2 &&
	            strcmp(cfg->v_model_type, "clip_vision_model") == 0 &&
	            strcmp(cfg->lm_model_type, "minimax_text_01") == 0 &&
	            strcmp(cfg->model_type, "minimax_vl_01") == 0 &&
	            strcmp(cfg->architecture, "MiniMaxVL01ForConditionalGeneration") == 0);
}

/* Phi-3-Vision: Phi-3's keys under model_type phi3_v; vLLM's fixed CLIP ViT-L/14-336 sizes laid
 * onto the vision fields, img_processor.layer_idx -24: one block built; untied */
static void check_phi3v(const ckpt_config *cfg)
{
	assert_true(cfg->has_vision && !cfg->tie_word_embeddings && cfg->v_hidden_size == 1024 &&
	            cfg->v_intermediate_size == 4096 && cfg->v_num_attn_heads == 16 &&
	            cfg->v_num_layers == 1 && cfg->v_feature_layer == -24 &&
	            cfg->v_image_size == 336 && cfg->v_patch_size == 14 &&
	            cfg->v_spatial_merge_size == 2 &&
	            strcmp(cfg->v_model_type, "clip_vision_model") == 0 &&
	            strcmp(cfg->model_type, "phi3_v") == 0 &&
	            strcmp(cfg->architecture, "Phi3VForCausalLM") == 0);
}

#endif /* WT_TEST_FIXTURES_CFG_TEXT_H */
