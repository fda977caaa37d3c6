/*
 * test_fixtures_cfg_mm.h — test_fixtures_cfg.h's checks, continued: the multimodal and audio
 * fixtures' tower and projector keys (vision_config, audio / encoder configs, text_config's
 * model type). Included by test_fixtures_cfg.h only.
 */
#ifndef WT_TEST_FIXTURES_CFG_MM_H
#define WT_TEST_FIXTURES_CFG_MM_H

/* InternVLVisionConfig's keys ([h, w] image / patch sizes, the switches InternVL3-1B-hf sets),
 * InternVLConfig's (downsample_ratio 0.5 as the merge 2), a text_config of model_type lm: qwen2
 * untied, qwen3 tied (InternVL3.5's), qwen3_moe untied (InternVL3.5-30B-A3B's; its experts are
 * the fam_expect's) */
static void check_internvl(const ckpt_config *cfg, const char *lm)
{
	bool q3 = strcmp(lm, "qwen3") == 0;
	assert_true(cfg->has_vision && cfg->v_num_layers == 2 && cfg->v_hidden_size == 64 &&
	            cfg->v_intermediate_size == 128 && cfg->v_num_attn_heads == 4 &&
	            cfg->v_image_size == 32 && cfg->v_patch_size == 8 && cfg->v_in_chans == 3);
	assert_true(cfg->v_attn_bias && !cfg->v_qk_norm && cfg->v_norm_ln && !cfg->v_mask_token &&
	            cfg->v_abs_pos && cfg->v_mean_pool);
	assert_true(cfg->v_spatial_merge_size == 2 && cfg->v_feature_layer == -1 &&
	            !cfg->v_feature_list && strcmp(cfg->v_select, "default") == 0);
	assert_string_equal(cfg->lm_model_type, lm);
	assert_true(cfg->tie_given && cfg->tie_word_embeddings == q3);
}

/* BLIP-2: Blip2VisionConfig's / Blip2QFormerConfig's keys, num_query_tokens, an opt text_config
 * tied by its default (no key in text_config: tie_given false) */
static void check_blip2(const ckpt_config *cfg)
{
	assert_true(cfg->v_hidden_size == 64 && cfg->v_intermediate_size == 128 &&
	            cfg->v_num_layers == 2 && cfg->v_num_attn_heads == 8 &&
	            cfg->v_image_size == 16 && cfg->v_patch_size == 8 && cfg->v_attn_bias);
	assert_true(cfg->qf_hidden == 48 && cfg->qf_inter == 96 && cfg->qf_layers == 3 &&
	            cfg->qf_heads == 4 && cfg->qf_cross == 2 && cfg->num_query_tokens == 4);
	assert_true(cfg->opt_word_embed_proj_dim == 128 && cfg->opt_max_pos == 64 &&
	            cfg->opt_final_norm && cfg->attention_bias);
	assert_string_equal(cfg->lm_model_type, "opt");
	assert_false(cfg->tie_given); /* the planner: OPTConfig's true (tie_default) */
}

/* Siglip2VisionConfig's keys, Lfm2VlConfig's, an lfm2 text_config, untied */
static void check_lfm2_vl(const ckpt_config *cfg)
{
	assert_true(cfg->v_hidden_size == 64 && cfg->v_num_layers == 2 && cfg->v_num_pos == 16 &&
	            cfg->v_patch_size == 8 && cfg->v_in_chans == 3 &&
	            cfg->v_spatial_merge_size == 2 && cfg->v_proj_in_dim == 160 &&
	            cfg->mm_projector_bias && cfg->lfm2_conv_l_cache == 3);
	assert_string_equal(cfg->lm_model_type, "lfm2");
	assert_string_equal(cfg->v_model_type, "siglip2_vision_model");
	assert_true(cfg->tie_given && !cfg->tie_word_embeddings);
}

/* FuyuConfig's top-level patch keys, a persimmon text_config, untied */
static void check_fuyu(const ckpt_config *cfg)
{
	assert_true(cfg->v_patch_size == 8 && cfg->v_in_chans == 3 && cfg->v_hidden_size == 128 &&
	            cfg->qk_layernorm);
	assert_string_equal(cfg->lm_model_type, "persimmon");
	assert_true(cfg->tie_given && !cfg->tie_word_embeddings);
}

/* ChameleonConfig's switches and vq_config */
static void check_chameleon(const ckpt_config *cfg)
{
	assert_true(!cfg->cham_swin && cfg->cham_act_silu && cfg->vq_attn && !cfg->attention_bias &&
	            !cfg->mlp_bias);
	assert_true(cfg->vq_levels == 2 && cfg->vq_mult[0] == 1 && cfg->vq_mult[1] == 2 &&
	            cfg->vq_res_blocks == 1 && cfg->vq_resolution == 32);
	assert_true(cfg->vq_n_attn_res == 1 && cfg->vq_attn_res[0] == 16);
}

/* SiglipVisionConfig's keys, AyaVisionConfig's, a cohere2 text_config */
static void check_aya_vision(const ckpt_config *cfg)
{
	assert_int_equal(cfg->v_num_layers, 2);
	assert_int_equal(cfg->v_hidden_size, 64);
	assert_int_equal(cfg->v_spatial_merge_size, 2);
	assert_int_equal(cfg->v_feature_layer, -1);
	assert_int_equal(cfg->v_proj_in_dim, 256);
	assert_string_equal(cfg->lm_model_type, "cohere2");
	assert_false(cfg->tie_given);
}

/* SiglipVisionConfig's keys, Cohere2VisionConfig's, a cohere2 text_config */
static void check_cohere2_vision(const ckpt_config *cfg)
{
	assert_int_equal(cfg->v_num_layers, 2);
	assert_int_equal(cfg->v_hidden_size, 64);
	assert_int_equal(cfg->v_spatial_merge_size, 2);
	assert_int_equal(cfg->v_proj_in_dim, 256);
	assert_string_equal(cfg->lm_model_type, "cohere2");
	assert_false(cfg->tie_given);
}

/* SiglipVisionConfig's keys, LlavaOnevisionConfig's, a qwen2 text_config tying */
static void check_llava_onevision(const ckpt_config *cfg)
{
	assert_int_equal(cfg->v_num_layers, 2);
	assert_int_equal(cfg->v_hidden_size, 64);
	assert_int_equal(cfg->v_feature_layer, -1);
	assert_true(cfg->mm_projector_bias && !cfg->v_feature_list);
	assert_string_equal(cfg->v_model_type, "siglip_vision_model");
	assert_string_equal(cfg->lm_model_type, "qwen2");
	assert_true(cfg->tie_given && cfg->tie_word_embeddings);
}

/* SiglipVisionConfig's keys, a gemma2 text_config, tied by its default */
static void check_paligemma(const ckpt_config *cfg)
{
	assert_int_equal(cfg->v_num_layers, 2);
	assert_int_equal(cfg->v_hidden_size, 64);
	assert_int_equal(cfg->v_image_size, 32);
	assert_int_equal(cfg->v_patch_size, 8);
	assert_string_equal(cfg->lm_model_type, "gemma2");
	assert_false(cfg->tie_given);
}

/* Idefics3VisionConfig's keys, scale_factor 2, a llama text_config */
static void check_idefics3(const ckpt_config *cfg)
{
	assert_int_equal(cfg->v_num_layers, 2);
	assert_int_equal(cfg->v_hidden_size, 64);
	assert_int_equal(cfg->v_image_size, 32);
	assert_int_equal(cfg->v_patch_size, 8);
	assert_int_equal(cfg->v_spatial_merge_size, 2);
	assert_string_equal(cfg->lm_model_type, "llama");
	/* tied by text_config alone: smolvlm's true, the top level's false not read */
	assert_int_equal(cfg->tie_word_embeddings, strcmp(cfg->model_type, "smolvlm") == 0);
}

/* CLIP's vision_config, LlavaConfig's keys; the text model llama */
static void check_llava(const ckpt_config *cfg)
{
	assert_int_equal(cfg->v_num_layers, 2);
	assert_int_equal(cfg->v_hidden_size, 64);
	assert_int_equal(cfg->v_image_size, 28);
	assert_int_equal(cfg->v_feature_layer, -2);
	assert_true(cfg->mm_projector_bias && !cfg->v_feature_list);
	assert_string_equal(cfg->v_model_type, "clip_vision_model");
	assert_string_equal(cfg->lm_model_type,
	                    strcmp(cfg->model_type, "llava_next") == 0 ? "mistral" : "llama");
}

/* Pixtral's vision_config, pixtral-12b's LlavaConfig keys; a mistral text model untied by its
 * default (no top-level tie_word_embeddings) */
static void check_llava_pixtral(const ckpt_config *cfg)
{
	assert_true(cfg->v_num_layers == 2 && cfg->v_hidden_size == 64 &&
	            cfg->v_num_attn_heads == 4 && cfg->v_patch_size == 14);
	assert_int_equal(cfg->v_feature_layer, -1);
	assert_true(cfg->mm_projector_bias && !cfg->v_feature_list && !cfg->tie_given);
	assert_string_equal(cfg->v_model_type, "pixtral");
	assert_string_equal(cfg->lm_model_type, "mistral");
}

/* Qwen2AudioEncoderConfig's keys */
static void check_qwen2_audio(const ckpt_config *cfg)
{
	assert_true(cfg->has_audio && !cfg->has_vision && !cfg->tie_given);
	assert_true(cfg->a_d_model == 64 && cfg->a_heads == 4 && cfg->a_ffn == 128 &&
	            cfg->a_layers == 2 && cfg->a_mel == 16 && cfg->a_max_pos == 16);
	assert_string_equal(cfg->lm_model_type, "qwen2");
}

/* encoder_config / projector_config */
static void check_granite_speech(const ckpt_config *cfg)
{
	assert_true(cfg->gs_hidden == 64 && cfg->gs_layers == 2 && cfg->gs_heads == 4 &&
	            cfg->gs_dim_head == 16 && cfg->gs_out == 64 && cfg->gs_max_pos == 8 &&
	            cfg->gs_ctx == 4 && cfg->gs_in == 16 && cfg->gs_kernel == 3);
	assert_true(cfg->qf_hidden == 64 && cfg->qf_layers == 2 && cfg->qf_cross == 2 &&
	            cfg->qf_inter == 128 && cfg->gs_window == 4 && cfg->gs_downsample == 2 &&
	            !cfg->tie_word_embeddings);
	assert_string_equal(cfg->lm_model_type, "granite");
}

/* Idefics3VisionConfig's keys, the projector's queries */
static void check_aria(const ckpt_config *cfg)
{
	assert_true(cfg->v_num_layers == 2 && cfg->v_hidden_size == 64 && cfg->v_patch_size == 8 &&
	            cfg->aria_queries == 8 && cfg->n_shared_experts == 2 &&
	            !cfg->tie_word_embeddings && strcmp(cfg->lm_model_type, "aria_text") == 0);
}

/* VoxtralEncoderConfig's keys; untied */
static void check_voxtral(const ckpt_config *cfg)
{
	assert_true(cfg->has_audio && !cfg->has_vision && !cfg->tie_word_embeddings);
	assert_true(cfg->a_d_model == 64 && cfg->a_heads == 4 && cfg->a_ffn == 256 &&
	            cfg->a_layers == 2 && cfg->a_mel == 16 && cfg->a_max_pos == 16);
	assert_string_equal(cfg->lm_model_type, "llama");
}

/* MllamaVisionConfig's keys, text_config's cross_attention_layers */
static void check_mllama(const ckpt_config *cfg)
{
	assert_true(cfg->v_hidden_size == 64 && cfg->v_num_layers == 2 &&
	            cfg->ml_global_layers == 2 && cfg->v_num_attn_heads == 8 &&
	            cfg->v_image_size == 28 && cfg->v_patch_size == 14 &&
	            cfg->v_output_dim == 128 && cfg->ml_max_tiles == 2 && cfg->ml_n_aspect == 3 &&
	            !cfg->tie_word_embeddings);
	assert_true(cfg->n_full_attn_idxs == 1 && cfg->full_attn_idxs[0] == 1);
	assert_string_equal(cfg->lm_model_type, "mllama_text_model");
}

/* LlavaNextVideoConfig's pooling; untied (the top level's not laid in) */
static void check_llava_next_video(const ckpt_config *cfg)
{
	assert_string_equal(cfg->v_pool_mode, "average");
	assert_int_equal(cfg->v_pool_stride, 2);
	assert_false(cfg->tie_given);
}

/* GLM-4.1V's vision_config; half the head under MRoPE [2, 3, 3] */
static void check_glm4v(const ckpt_config *cfg)
{
	assert_int_equal(cfg->v_depth, 2);
	assert_int_equal(cfg->v_hidden_size, 64);
	assert_int_equal(cfg->v_intermediate_size, 256);
	assert_int_equal(cfg->v_out_hidden_size, 128);
	assert_int_equal(cfg->v_image_size, 16);
	assert_true(cfg->partial_rotary_factor == 0.5);
	assert_true(cfg->has_mrope && cfg->n_mrope == 3 && cfg->mrope_section[2] == 3);
}

/* Llama 4's vision_config and its MoE interleave (text_config) */
static void check_llama4(const ckpt_config *cfg)
{
	assert_int_equal(cfg->v_num_layers, 2);
	assert_int_equal(cfg->v_hidden_size, 64);
	assert_int_equal(cfg->v_proj_in_dim, 128);
	assert_int_equal(cfg->v_output_dim, 128);
}

/* thinker_config's towers, MRoPE [4, 6, 6] */
static void check_qwen2_5_omni(const ckpt_config *cfg)
{
	assert_true(cfg->has_audio && cfg->a_d_model == 32 && cfg->a_layers == 2 &&
	            cfg->a_ffn == 96 && cfg->a_mel == 16 && cfg->a_out_dim == 128 &&
	            cfg->has_vision && cfg->v_hidden_size == 64 && cfg->v_depth == 2 &&
	            cfg->has_mrope && cfg->mrope_section[0] == 4);
}

/* its towers, MRoPE [4, 6, 6], layer 1 dense */
static void check_qwen3_omni_moe(const ckpt_config *cfg)
{
	assert_true(cfg->has_audio && cfg->a_d_model == 32 && cfg->a_layers == 2 &&
	            cfg->a_dsh == 8 && cfg->a_mel == 16 && cfg->a_out_dim == 128 &&
	            cfg->v_hidden_size == 64 && cfg->v_num_pos == 16 && cfg->n_deepstack == 2 &&
	            cfg->has_mrope && cfg->mrope_section[0] == 4 && cfg->n_mlp_only_layers == 1 &&
	            cfg->mlp_only_layers[0] == 1);
}

/* the encoder's top-level keys; the decoder's */
static void check_whisper(const ckpt_config *cfg)
{
	assert_true(cfg->has_audio && cfg->a_d_model == 64 && cfg->a_layers == 2 &&
	            cfg->a_heads == 4 && cfg->a_ffn == 128 && cfg->a_mel == 16 &&
	            cfg->a_max_pos == 8 && cfg->rob_max_pos == 32);
}

/* CLIPConfig's projection_dim, the text positions */
static void check_clip(const ckpt_config *cfg)
{
	assert_true(cfg->rob_num_labels == 80 && cfg->rob_max_pos == 16 &&
	            cfg->v_hidden_size == 64);
}

/* text_config.projection_size, the text positions */
static void check_siglip(const ckpt_config *cfg)
{
	assert_true(cfg->rob_num_labels == 80 && cfg->rob_max_pos == 16 &&
	            cfg->v_hidden_size == 64 && cfg->v_intermediate_size == 128);
}

#endif /* WT_TEST_FIXTURES_CFG_MM_H */
