/* test_fixtures.c — every wt-mkckpt family opens with our own checkpoint view
 * (loader/ckpt_open) with the tensor count, byte total and config fields
 * computed by hand below; the generator is found as $WT_BUILD/wt-mkckpt. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "loader/loader.h"
#include "shardmap/shardmap.h"
#include "tests/util/testutil.h"

#define SEED 7u

#include "tests/test_fixtures_expect.h"

static char *mkckpt_path(void)
{
	const char *b = getenv("WT_BUILD");
	return tu_path(b != NULL && *b ? b : "build", "wt-mkckpt");
}

/* Run wt-mkckpt; returns its exit status. */
static int run_mkckpt(const char *args)
{
	char *bin = mkckpt_path();
	char cmd[2048];
	snprintf(cmd, sizeof(cmd), "'%s' %s >/dev/null 2>&1", bin, args);
	free(bin);
	int st = system(cmd);
	return st == -1 ? -1 : WEXITSTATUS(st);
}

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

static void check_family(const fam_expect *e, const char *root)
{
	char *dir = tu_path(root, e->name);
	char args[1024];
	snprintf(args, sizeof(args), "--family %s --out '%s' --seed %u", e->name, dir, SEED);
	assert_int_equal(run_mkckpt(args), 0);

	store *s = NULL;
	ckpt *c = NULL;
	wt_errbuf err = {0};
	int rv = store_open(&s, dir, &err);
	if (rv == WT_OK)
		rv = ckpt_open(&c, s, &err);
	if (rv != WT_OK)
		print_error("%s: %s\n", e->name, err.msg);
	assert_int_equal(rv, WT_OK);

	const ckpt_config *cfg = ckpt_get_config(c);
	print_message("%s: %zu tensors, %llu bytes\n", e->name, ckpt_n_tensors(c),
	              (unsigned long long)ckpt_total_bytes(c));
	assert_int_equal(ckpt_n_tensors(c), e->n_tensors);
	assert_int_equal(ckpt_total_bytes(c), e->total_bytes);
	assert_int_equal(cfg->hidden_size, e->hidden);
	assert_int_equal(cfg->num_attention_heads, e->heads);
	assert_int_equal(cfg->num_key_value_heads, e->kv_heads);
	assert_int_equal(cfg->head_dim, e->head_dim);
	assert_int_equal(cfg->intermediate_size, e->inter);
	assert_int_equal(cfg->vocab_size, e->vocab);
	assert_int_equal(cfg->num_hidden_layers, e->layers);
	/* the gemma and starcoder2 fixtures leave tie_word_embeddings out, as
	 * transformers does */
	assert_int_equal(shardmap_tied(cfg), e->tied);
	if (strncmp(e->name, "gemma", 5) == 0 || strcmp(e->name, "starcoder2") == 0)
		assert_false(cfg->tie_given);
	assert_int_equal(cfg->num_experts, e->experts);
	if (e->moe_inter > 0)
		assert_int_equal(cfg->moe_intermediate_size, e->moe_inter);
	assert_int_equal(cfg->quant, e->quant);
	/* Qwen2-VL: vision_config and mrope_section, from the top level (4.x) or with the
	 * language model in text_config and rope_parameters (5.x); Qwen2.5-VL names its
	 * vision width hidden_size and gives intermediate_size and out_hidden_size */
	bool v25 = strncmp(e->name, "qwen2_5_vl", 10) == 0;
	bool g3 = strncmp(e->name, "gemma3", 6) == 0 && strcmp(e->name, "gemma3_text") != 0 &&
	          strncmp(e->name, "gemma3n", 7) != 0;
	bool l4v = strcmp(e->name, "llama4") == 0 || strcmp(e->name, "llama4_fbgemm") == 0;
	bool q3v = strncmp(e->name, "qwen3_vl", 8) == 0;
	bool m3 = strncmp(e->name, "mistral3", 8) == 0;
	bool g4v = strncmp(e->name, "glm4v", 5) == 0;
	bool ov = strcmp(e->name, "llava_onevision") == 0;
	bool c2v = strcmp(e->name, "cohere2_vision") == 0;
	bool lvv = strcmp(e->name, "llava_next_video") == 0;
	bool px = strcmp(e->name, "llava_pixtral") == 0;
	bool lv = strncmp(e->name, "llava", 5) == 0 && !ov && !px; /* llava, llava_next(_video) */
	bool i3 = strcmp(e->name, "idefics3") == 0 || strcmp(e->name, "smolvlm") == 0;
	bool pg = strcmp(e->name, "paligemma") == 0;
	bool av = strcmp(e->name, "aya_vision") == 0;
	bool ivl = strncmp(e->name, "internvl", 8) == 0;
	bool fy = strcmp(e->name, "fuyu") == 0;
	bool lvl = strcmp(e->name, "lfm2_vl") == 0;
	bool b2 = strcmp(e->name, "blip2") == 0;
	bool ar = strcmp(e->name, "aria") == 0;
	bool ml = strcmp(e->name, "mllama") == 0;
	bool qo = strcmp(e->name, "qwen2_5_omni") == 0 || strcmp(e->name, "qwen3_omni_moe") == 0;
	bool cl = strcmp(e->name, "clip") == 0;
	bool sg = strcmp(e->name, "siglip") == 0;
	assert_int_equal(cfg->has_vision, strncmp(e->name, "qwen2_vl", 8) == 0 || v25 || g3 ||
	                                      l4v || q3v || m3 || g4v || lv || i3 || pg || av ||
	                                      ov || c2v || ivl || px || fy || lvl || b2 || ar ||
	                                      ml || qo || cl || sg);
	if (b2)
		check_blip2(cfg);
	if (lvl) { /* Siglip2VisionConfig's keys, Lfm2VlConfig's, an lfm2 text_config, untied */
		assert_true(cfg->v_hidden_size == 64 && cfg->v_num_layers == 2 &&
		            cfg->v_num_pos == 16 && cfg->v_patch_size == 8 &&
		            cfg->v_in_chans == 3 && cfg->v_spatial_merge_size == 2 &&
		            cfg->v_proj_in_dim == 160 && cfg->mm_projector_bias &&
		            cfg->lfm2_conv_l_cache == 3);
		assert_string_equal(cfg->lm_model_type, "lfm2");
		assert_string_equal(cfg->v_model_type, "siglip2_vision_model");
		assert_true(cfg->tie_given && !cfg->tie_word_embeddings);
	}
	if (fy) { /* FuyuConfig's top-level patch keys, a persimmon text_config, untied */
		assert_true(cfg->v_patch_size == 8 && cfg->v_in_chans == 3 &&
		            cfg->v_hidden_size == 128 && cfg->qk_layernorm);
		assert_string_equal(cfg->lm_model_type, "persimmon");
		assert_true(cfg->tie_given && !cfg->tie_word_embeddings);
	}
	if (strcmp(e->name, "chameleon") == 0) { /* ChameleonConfig's switches and vq_config */
		assert_true(!cfg->cham_swin && cfg->cham_act_silu && cfg->vq_attn &&
		            !cfg->attention_bias && !cfg->mlp_bias);
		assert_true(cfg->vq_levels == 2 && cfg->vq_mult[0] == 1 && cfg->vq_mult[1] == 2 &&
		            cfg->vq_res_blocks == 1 && cfg->vq_resolution == 32);
		assert_true(cfg->vq_n_attn_res == 1 && cfg->vq_attn_res[0] == 16);
	}
	if (av) { /* SiglipVisionConfig's keys, AyaVisionConfig's, a cohere2 text_config */
		assert_int_equal(cfg->v_num_layers, 2);
		assert_int_equal(cfg->v_hidden_size, 64);
		assert_int_equal(cfg->v_spatial_merge_size, 2);
		assert_int_equal(cfg->v_feature_layer, -1);
		assert_int_equal(cfg->v_proj_in_dim, 256);
		assert_string_equal(cfg->lm_model_type, "cohere2");
		assert_false(cfg->tie_given);
	}
	if (c2v) { /* SiglipVisionConfig's keys, Cohere2VisionConfig's, a cohere2 text_config */
		assert_int_equal(cfg->v_num_layers, 2);
		assert_int_equal(cfg->v_hidden_size, 64);
		assert_int_equal(cfg->v_spatial_merge_size, 2);
		assert_int_equal(cfg->v_proj_in_dim, 256);
		assert_string_equal(cfg->lm_model_type, "cohere2");
		assert_false(cfg->tie_given);
	}
	if (ov) { /* SiglipVisionConfig's keys, LlavaOnevisionConfig's, a qwen2 text_config tying */
		assert_int_equal(cfg->v_num_layers, 2);
		assert_int_equal(cfg->v_hidden_size, 64);
		assert_int_equal(cfg->v_feature_layer, -1);
		assert_true(cfg->mm_projector_bias && !cfg->v_feature_list);
		assert_string_equal(cfg->v_model_type, "siglip_vision_model");
		assert_string_equal(cfg->lm_model_type, "qwen2");
		assert_true(cfg->tie_given && cfg->tie_word_embeddings);
	}
	if (pg) { /* SiglipVisionConfig's keys, a gemma2 text_config, tied by its default */
		assert_int_equal(cfg->v_num_layers, 2);
		assert_int_equal(cfg->v_hidden_size, 64);
		assert_int_equal(cfg->v_image_size, 32);
		assert_int_equal(cfg->v_patch_size, 8);
		assert_string_equal(cfg->lm_model_type, "gemma2");
		assert_false(cfg->tie_given);
	}
	if (i3) { /* Idefics3VisionConfig's keys, scale_factor 2, a llama text_config */
		assert_int_equal(cfg->v_num_layers, 2);
		assert_int_equal(cfg->v_hidden_size, 64);
		assert_int_equal(cfg->v_image_size, 32);
		assert_int_equal(cfg->v_patch_size, 8);
		assert_int_equal(cfg->v_spatial_merge_size, 2);
		assert_string_equal(cfg->lm_model_type, "llama");
		/* tied by text_config alone: smolvlm's true, the top level's false not read */
		assert_int_equal(cfg->tie_word_embeddings, e->name[0] == 's');
	}
	if (lv) { /* CLIP's vision_config, LlavaConfig's keys; the text model llama */
		assert_int_equal(cfg->v_num_layers, 2);
		assert_int_equal(cfg->v_hidden_size, 64);
		assert_int_equal(cfg->v_image_size, 28);
		assert_int_equal(cfg->v_feature_layer, -2);
		assert_true(cfg->mm_projector_bias && !cfg->v_feature_list);
		assert_string_equal(cfg->v_model_type, "clip_vision_model");
		assert_string_equal(cfg->lm_model_type, e->name[5] && !lvv ? "mistral" : "llama");
	}
	if (px) { /* Pixtral's vision_config, pixtral-12b's LlavaConfig keys; a mistral text model
		   * untied by its default (no top-level tie_word_embeddings) */
		assert_true(cfg->v_num_layers == 2 && cfg->v_hidden_size == 64 &&
		            cfg->v_num_attn_heads == 4 && cfg->v_patch_size == 14);
		assert_int_equal(cfg->v_feature_layer, -1);
		assert_true(cfg->mm_projector_bias && !cfg->v_feature_list && !cfg->tie_given);
		assert_string_equal(cfg->v_model_type, "pixtral");
		assert_string_equal(cfg->lm_model_type, "mistral");
	}
	if (strcmp(e->name, "qwen2_audio") == 0) { /* Qwen2AudioEncoderConfig's keys */
		assert_true(cfg->has_audio && !cfg->has_vision && !cfg->tie_given);
		assert_true(cfg->a_d_model == 64 && cfg->a_heads == 4 && cfg->a_ffn == 128 &&
		            cfg->a_layers == 2 && cfg->a_mel == 16 && cfg->a_max_pos == 16);
		assert_string_equal(cfg->lm_model_type, "qwen2");
	}
	if (strcmp(e->name, "granite_speech") == 0) { /* encoder_config / projector_config */
		assert_true(cfg->gs_hidden == 64 && cfg->gs_layers == 2 && cfg->gs_heads == 4 &&
		            cfg->gs_dim_head == 16 && cfg->gs_out == 64 && cfg->gs_max_pos == 8 &&
		            cfg->gs_ctx == 4 && cfg->gs_in == 16 && cfg->gs_kernel == 3);
		assert_true(cfg->qf_hidden == 64 && cfg->qf_layers == 2 && cfg->qf_cross == 2 &&
		            cfg->qf_inter == 128 && cfg->gs_window == 4 &&
		            cfg->gs_downsample == 2 && !cfg->tie_word_embeddings);
		assert_string_equal(cfg->lm_model_type, "granite");
	}
	if (ar) /* Idefics3VisionConfig's keys, the projector's queries */
		assert_true(cfg->v_num_layers == 2 && cfg->v_hidden_size == 64 &&
		            cfg->v_patch_size == 8 && cfg->aria_queries == 8 &&
		            cfg->n_shared_experts == 2 && !cfg->tie_word_embeddings &&
		            strcmp(cfg->lm_model_type, "aria_text") == 0);
	if (strcmp(e->name, "voxtral") == 0) { /* VoxtralEncoderConfig's keys; untied */
		assert_true(cfg->has_audio && !cfg->has_vision && !cfg->tie_word_embeddings);
		assert_true(cfg->a_d_model == 64 && cfg->a_heads == 4 && cfg->a_ffn == 256 &&
		            cfg->a_layers == 2 && cfg->a_mel == 16 && cfg->a_max_pos == 16);
		assert_string_equal(cfg->lm_model_type, "llama");
	}
	if (ml) { /* MllamaVisionConfig's keys, text_config's cross_attention_layers */
		assert_true(cfg->v_hidden_size == 64 && cfg->v_num_layers == 2 &&
		            cfg->ml_global_layers == 2 && cfg->v_num_attn_heads == 8 &&
		            cfg->v_image_size == 28 && cfg->v_patch_size == 14 &&
		            cfg->v_output_dim == 128 && cfg->ml_max_tiles == 2 &&
		            cfg->ml_n_aspect == 3 && !cfg->tie_word_embeddings);
		assert_true(cfg->n_full_attn_idxs == 1 && cfg->full_attn_idxs[0] == 1);
		assert_string_equal(cfg->lm_model_type, "mllama_text_model");
	}
	if (ivl)
		check_internvl(cfg, e->name[8] != '\0' ? e->name + 9 : "qwen2");
	if (strstr(e->name, "roberta") != NULL) /* RobertaConfig's keys as the fixture gives them */
		assert_true(cfg->rob_max_pos == 66 && cfg->rob_types == 1 && cfg->rob_pad == 1 &&
		            cfg->rob_abs_pos && !cfg->rob_decoder &&
		            cfg->rob_num_labels == (strstr(e->name, "_cls") ? 1 : 2));
	if (strcmp(e->name, "modernbert") == 0) /* ModernBertConfig's keys as the fixture gives */
		assert_true(cfg->mb_every == 3 && cfg->mb_local == 4 && cfg->mb_norm_bias &&
		            cfg->attention_bias && cfg->mlp_bias && cfg->mb_gelu &&
		            cfg->mb_global_theta == 160000.0 && cfg->mb_local_theta == 10000.0);
	if (strcmp(e->name, "modernbert_tok") == 0) /* modernbert_cls's keys, head.dense's bias */
		assert_true(cfg->mb_every == 2 && !cfg->mb_norm_bias && cfg->mb_cls_bias &&
		            cfg->mb_cls_gelu && cfg->rob_num_labels == 2);
	if (strcmp(e->name, "modernbert_cls") == 0) /* no bias, a null local theta, mean pooling */
		assert_true(cfg->mb_every == 2 && cfg->mb_local == 2 && !cfg->mb_norm_bias &&
		            !cfg->attention_bias && !cfg->mlp_bias && !cfg->mb_cls_bias &&
		            cfg->mb_pool == 1 && cfg->rob_num_labels == 1 &&
		            cfg->mb_local_theta == 160000.0);
	if (lvv) { /* LlavaNextVideoConfig's pooling; untied (the top level's not laid in) */
		assert_string_equal(cfg->v_pool_mode, "average");
		assert_int_equal(cfg->v_pool_stride, 2);
		assert_false(cfg->tie_given);
	}
	if (g4v) { /* GLM-4.1V's vision_config; half the head under MRoPE [2, 3, 3] */
		assert_int_equal(cfg->v_depth, 2);
		assert_int_equal(cfg->v_hidden_size, 64);
		assert_int_equal(cfg->v_intermediate_size, 256);
		assert_int_equal(cfg->v_out_hidden_size, 128);
		assert_int_equal(cfg->v_image_size, 16);
		assert_true(cfg->partial_rotary_factor == 0.5);
		assert_true(cfg->has_mrope && cfg->n_mrope == 3 && cfg->mrope_section[2] == 3);
	}
	if (m3) { /* Pixtral's vision_config; the projector's keys at the top level */
		assert_int_equal(cfg->v_num_layers, 2);
		assert_int_equal(cfg->v_hidden_size, 128);
		assert_int_equal(cfg->v_num_attn_heads, 4);
		assert_int_equal(cfg->v_spatial_merge_size, 2);
		assert_int_equal(cfg->mm_projector_bias, strcmp(e->name, "mistral3_hf5") == 0);
		assert_false(cfg->v_feature_list);
	}
	if (l4v) { /* Llama 4's vision_config and its MoE interleave (text_config) */
		assert_int_equal(cfg->v_num_layers, 2);
		assert_int_equal(cfg->v_hidden_size, 64);
		assert_int_equal(cfg->v_proj_in_dim, 128);
		assert_int_equal(cfg->v_output_dim, 128);
	}
	if (strcmp(e->name, "qwen3_next") == 0) { /* the gated delta net and its layer pattern */
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
	if (strcmp(e->name, "granitemoehybrid_dense") == 0) { /* two groups, every bias */
		assert_int_equal(cfg->layer_types[0], CKPT_LAYER_ATTN);
		assert_int_equal(cfg->layer_types[2], CKPT_LAYER_MAMBA);
		assert_int_equal(cfg->mamba_n_groups, 2);
		assert_int_equal(cfg->mamba_d_conv, 3);
		assert_true(cfg->mamba_proj_bias && cfg->mamba_conv_bias && cfg->attention_bias);
		assert_int_equal(cfg->shared_expert_intermediate_size, 192);
	}
	if (strcmp(e->name, "bamba") == 0) { /* attn_layer_indices, the class's rotary factor */
		assert_false(cfg->has_layer_types);
		assert_true(cfg->has_full_attn_idxs);
		assert_int_equal(cfg->n_full_attn_idxs, 1);
		assert_int_equal(cfg->full_attn_idxs[0], 1);
		assert_int_equal(cfg->mamba_n_heads, 8);
		assert_int_equal(cfg->mamba_d_state, 16);
		assert_true(cfg->mamba_conv_bias);
		assert_true(cfg->partial_rotary_factor == 0.5);
	}
	if (strcmp(e->name, "longcat_flash") == 0) { /* LongcatFlashConfig's own key names */
		assert_int_equal(cfg->zero_expert_num, 2);
		assert_int_equal(cfg->q_lora_rank, 64);
		assert_int_equal(cfg->kv_lora_rank, 32);
		assert_int_equal(cfg->qk_rope_head_dim, 8);
		assert_int_equal(cfg->v_head_dim, 16);
	}
	if (strcmp(e->name, "falcon_h1") == 0) { /* mamba_d_ssm, the gated norm, projectors */
		assert_false(cfg->has_layer_types);
		assert_int_equal(cfg->mamba_d_ssm, 192);
		assert_int_equal(cfg->mamba_n_heads, 8);
		assert_int_equal(cfg->head_dim, 32);
		assert_true(cfg->mamba_rms_norm && cfg->mamba_conv_bias);
		assert_false(cfg->projectors_bias || cfg->mamba_proj_bias);
	}
	if (strcmp(e->name, "mamba") == 0 || strcmp(e->name, "falcon_mamba") == 0) {
		/* MambaConfig's (FalconMambaConfig's) keys under the mixer's names; falcon_mamba's
		 * intermediate_size 256 over its expand 16 */
		assert_int_equal(cfg->intermediate_size, 256);
		assert_int_equal(cfg->mamba_d_state, 16);
		assert_int_equal(cfg->mamba_d_conv, 4);
		assert_int_equal(cfg->mamba_dt_rank, 8);
		assert_true(cfg->mamba_conv_bias);
		assert_false(cfg->mamba_proj_bias);
	}
	if (strcmp(e->name, "zamba2") == 0)
		check_zamba2(cfg);
	if (strcmp(e->name, "qwen3_cls") == 0) /* id2label's one entry; no online conversion */
		assert_true(cfg->rob_num_labels == 1 && !cfg->cls_from_token);
	if (strncmp(e->name, "bert_", 5) == 0) /* id2label's entries; BertEmbedding's tables */
		assert_true(cfg->rob_num_labels == (strcmp(e->name, "bert_cls") == 0 ? 2 : 4) &&
		            cfg->rob_max_pos == 64 && cfg->rob_types == 2 && cfg->rob_abs_pos &&
		            !cfg->rob_decoder);
	if (strcmp(e->name, "qwen2_5_omni") == 0) /* thinker_config's towers, MRoPE [4, 6, 6] */
		assert_true(cfg->has_audio && cfg->a_d_model == 32 && cfg->a_layers == 2 &&
		            cfg->a_ffn == 96 && cfg->a_mel == 16 && cfg->a_out_dim == 128 &&
		            cfg->has_vision && cfg->v_hidden_size == 64 && cfg->v_depth == 2 &&
		            cfg->has_mrope && cfg->mrope_section[0] == 4);
	if (strcmp(e->name, "qwen3_omni_moe") == 0) /* its towers, MRoPE [4, 6, 6], layer 1 dense */
		assert_true(cfg->has_audio && cfg->a_d_model == 32 && cfg->a_layers == 2 &&
		            cfg->a_dsh == 8 && cfg->a_mel == 16 && cfg->a_out_dim == 128 &&
		            cfg->v_hidden_size == 64 && cfg->v_num_pos == 16 &&
		            cfg->n_deepstack == 2 && cfg->has_mrope && cfg->mrope_section[0] == 4 &&
		            cfg->n_mlp_only_layers == 1 && cfg->mlp_only_layers[0] == 1);
	if (strcmp(e->name, "gemma3n_text") == 0) /* Gemma3nTextConfig's sizes; I from the list */
		assert_true(cfg->g3n_altup == 4 && cfg->g3n_active == 0 && cfg->g3n_laurel == 16 &&
		            cfg->g3n_ple == 16 && cfg->g3n_ple_vocab == 1000 &&
		            cfg->g3n_kv_shared == 2 && cfg->n_layer_types == 5 &&
		            cfg->layer_types[2] == CKPT_LAYER_FULL_ATTN);
	if (strcmp(e->name, "whisper") == 0) /* the encoder's top-level keys; the decoder's */
		assert_true(cfg->has_audio && cfg->a_d_model == 64 && cfg->a_layers == 2 &&
		            cfg->a_heads == 4 && cfg->a_ffn == 128 && cfg->a_mel == 16 &&
		            cfg->a_max_pos == 8 && cfg->rob_max_pos == 32);
	if (strcmp(e->name, "qwen2_rm") == 0) /* the class's one label */
		assert_true(cfg->rob_num_labels == 1 && !cfg->cls_from_token);
	if (strcmp(e->name, "gpt2_cls") == 0) /* id2label's two entries over GPT2Config's keys */
		assert_true(cfg->rob_num_labels == 2 && !cfg->cls_from_token &&
		            cfg->num_key_value_heads == 8);
	if (strcmp(e->name, "clip") == 0) /* CLIPConfig's projection_dim, the text positions */
		assert_true(cfg->rob_num_labels == 80 && cfg->rob_max_pos == 16 &&
		            cfg->v_hidden_size == 64);
	if (strcmp(e->name, "internlm2") == 0) /* InternLM2Config's bias false, no head_dim key */
		assert_true(!cfg->attention_bias && cfg->head_dim == 16 &&
		            strcmp(cfg->model_type, "internlm2") == 0);
	if (sg) /* text_config.projection_size, the text positions */
		assert_true(cfg->rob_num_labels == 80 && cfg->rob_max_pos == 16 &&
		            cfg->v_hidden_size == 64 && cfg->v_intermediate_size == 128);
	if (strcmp(e->name, "chatglm") == 0) /* ChatGLMConfig's names: add_qkv_bias, kv_channels */
		assert_true(cfg->attention_bias && cfg->head_dim == 16 &&
		            !cfg->tie_word_embeddings && strcmp(cfg->model_type, "chatglm") == 0);
	if (strcmp(e->name, "exaone") ==
	    0) /* ExaoneConfig's names: num_layers, layer_norm_epsilon */
		assert_true(!cfg->attention_bias && cfg->head_dim == 16 &&
		            cfg->num_hidden_layers == 2 && !cfg->tie_word_embeddings &&
		            strcmp(cfg->model_type, "exaone") == 0);
	if (strncmp(e->name, "baichuan", 8) == 0) /* W_pack: multi-head, no head_dim key */
		assert_true(!cfg->attention_bias &&
		            cfg->num_key_value_heads == cfg->num_attention_heads &&
		            cfg->head_dim * cfg->num_attention_heads == 128 &&
		            !cfg->tie_word_embeddings && strcmp(cfg->model_type, "baichuan") == 0);
	if (strcmp(e->name, "qwen2_emb") == 0) /* the base model, read as Qwen2Config */
		assert_true(strcmp(cfg->architecture, "Qwen2Model") == 0 &&
		            strcmp(cfg->model_type, "qwen2") == 0);
	if (strcmp(e->name, "mamba2") == 0) { /* Mamba2Config's keys under the mixer's names */
		assert_int_equal(cfg->mamba_n_heads, 8);
		assert_int_equal(cfg->mamba_d_head, 32);
		assert_int_equal(cfg->mamba_n_groups, 2);
		assert_int_equal(cfg->mamba_d_state, 16);
		assert_int_equal(cfg->mamba_d_conv, 4);
		assert_int_equal(cfg->mamba_expand, 2);
		assert_true(cfg->mamba_conv_bias);
		assert_false(cfg->mamba_proj_bias);
	}
	if (strcmp(e->name, "nemotron_h") == 0) { /* NemotronHConfig's keys, the pattern */
		assert_true(cfg->mamba_n_heads == 8 && cfg->mamba_d_head == 16 &&
		            cfg->mamba_d_ssm == 128 && cfg->mamba_n_groups == 4 &&
		            cfg->mamba_d_state == 16 && cfg->mamba_d_conv == 4 &&
		            cfg->mamba_conv_bias && !cfg->mamba_proj_bias && !cfg->mlp_bias &&
		            cfg->n_layer_types == 5);
		static const uint8_t kinds[] = {CKPT_LAYER_MAMBA, CKPT_LAYER_MLP, CKPT_LAYER_MAMBA,
		                                CKPT_LAYER_ATTN, CKPT_LAYER_MLP};
		for (int k = 0; k < 5; k++)
			assert_int_equal(cfg->layer_types[k], kinds[k]);
	}
	if (strcmp(e->name, "granitemoehybrid") == 0) { /* the Mamba2 mixer and its layers */
		assert_true(cfg->has_layer_types);
		assert_int_equal(cfg->n_layer_types, 4);
		for (int k = 0; k < 4; k++)
			assert_int_equal(cfg->layer_types[k],
			                 k == 2 ? CKPT_LAYER_ATTN : CKPT_LAYER_MAMBA);
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
	if (strncmp(e->name, "cohere", 6) == 0) { /* Command R+'s q/k norms; Cohere2's none */
		assert_int_equal(cfg->use_qk_norm, strcmp(e->name, "cohere") == 0);
		assert_int_equal(cfg->tie_given, strcmp(e->name, "cohere2") == 0);
		assert_false(cfg->has_layer_types);
	}
	if (strcmp(e->name, "olmo3") == 0 || strcmp(e->name, "exaone4") == 0) {
		/* layers 0-2 sliding, 3 full, as listed */
		assert_true(cfg->has_layer_types);
		assert_int_equal(cfg->n_layer_types, 4);
		for (int k = 0; k < 4; k++)
			assert_int_equal(cfg->layer_types[k],
			                 k < 3 ? CKPT_LAYER_SLIDING_ATTN : CKPT_LAYER_FULL_ATTN);
	}
	if (strcmp(e->name, "lfm2") == 0) { /* conv, conv, full_attention, conv; Lfm2Config keys */
		assert_true(cfg->has_layer_types && cfg->tie_given && cfg->has_full_attn_idxs);
		assert_int_equal(cfg->n_layer_types, 4);
		for (int k = 0; k < 4; k++)
			assert_int_equal(cfg->layer_types[k],
			                 k == 2 ? CKPT_LAYER_FULL_ATTN : CKPT_LAYER_CONV);
		assert_int_equal(cfg->lfm2_conv_l_cache, 3);
		assert_int_equal(cfg->lfm2_multiple_of, 256);
		assert_int_equal(cfg->lfm2_block_dim, 256);
		assert_true(cfg->lfm2_auto_adjust && !cfg->lfm2_conv_bias &&
		            !cfg->lfm2_ffn_mult_null);
		assert_true(cfg->lfm2_ffn_mult == 1.0);
	}
	if (strcmp(e->name, "hunyuan_v1_dense") == 0) { /* the releases' switches, biases on */
		assert_true(cfg->use_qk_norm && cfg->attention_bias && !cfg->use_cla);
		assert_true(cfg->tie_given && cfg->tie_word_embeddings);
	}
	if (strcmp(e->name, "hunyuan_v1_moe") == 0) { /* the per-layer lists read as one value */
		assert_true(cfg->use_qk_norm && !cfg->attention_bias && !cfg->use_cla);
		assert_int_equal(cfg->shared_expert_intermediate_size, 128);
	}
	if (strcmp(e->name, "nemotron") == 0) /* the fixture's q/k/v/o biases, no MLP biases */
		assert_true(cfg->attention_bias && !cfg->mlp_bias);
	if (strcmp(e->name, "opt") == 0) { /* OPTConfig's keys: ffn_dim read as intermediate_size */
		assert_true(cfg->opt_word_embed_proj_dim == 64 && cfg->opt_max_pos == 64 &&
		            cfg->opt_ln_before && cfg->opt_final_norm && cfg->opt_ln_affine &&
		            cfg->attention_bias);
	}
	if (strcmp(e->name, "gptj") == 0) /* GPTJConfig's n_positions, n_inner */
		assert_int_equal(cfg->intermediate_size, 256);
	if (strcmp(e->name, "ministral") == 0) { /* one type per layer: sliding, full */
		assert_true(cfg->has_layer_types && cfg->n_layer_types == 2);
		assert_int_equal(cfg->layer_types[0], CKPT_LAYER_SLIDING_ATTN);
		assert_int_equal(cfg->layer_types[1], CKPT_LAYER_FULL_ATTN);
	}
	if (strcmp(e->name, "stablelm") == 0) /* use_qkv_bias read into attention_bias */
		assert_true(cfg->attention_bias && !cfg->qk_layernorm &&
		            !cfg->use_parallel_residual);
	if (strcmp(e->name, "minimax") == 0) { /* layer_types of the two kinds */
		assert_true(cfg->has_layer_types);
		assert_int_equal(cfg->n_layer_types, 4);
		assert_true(cfg->layer_types[0] == CKPT_LAYER_LINEAR_ATTN &&
		            cfg->layer_types[2] == CKPT_LAYER_FULL_ATTN);
		assert_int_equal(cfg->num_experts, 4);
	}
	if (strcmp(e->name, "jamba_cls") == 0) /* id2label's two entries over JambaConfig's */
		assert_true(cfg->rob_num_labels == 2 && cfg->jamba_attn_period == 4 &&
		            cfg->jamba_expert_offset == 1 && !cfg->tie_word_embeddings);
	if (strcmp(e->name, "jamba") == 0) { /* the periods, the v1 mixer's keys */
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
	if (strcmp(e->name, "glm4_moe") == 0) { /* GLM-4.5's q/k norms and MoE keys */
		assert_true(cfg->use_qk_norm);
		assert_int_equal(cfg->first_k_dense_replace, 1);
		assert_int_equal(cfg->n_shared_experts, 1);
	}
	if (strcmp(e->name, "smollm3") == 0) { /* tied by the class default, layer_types given */
		assert_false(cfg->tie_given);
		assert_true(cfg->has_layer_types);
		assert_false(cfg->attention_bias || cfg->mlp_bias);
	}
	if (strcmp(e->name, "seed_oss") == 0) { /* every bias switch on */
		assert_true(cfg->attention_bias && cfg->attention_out_bias && cfg->mlp_bias);
		assert_false(cfg->tie_word_embeddings);
	}
	if (strcmp(e->name, "dots1") == 0) { /* dots.llm1's MoE keys, no q/k norm key */
		assert_false(cfg->use_qk_norm);
		assert_int_equal(cfg->first_k_dense_replace, 1);
		assert_int_equal(cfg->n_shared_experts, 2);
		assert_false(cfg->has_layer_types);
	}
	if (strcmp(e->name, "ernie4_5") == 0) /* ERNIE-4.5-0.3B: every Linear with a bias */
		assert_true(cfg->use_bias);
	if (strcmp(e->name, "ernie4_5_moe") == 0) { /* ERNIE 4.5 MoE's keys */
		assert_false(cfg->use_bias);
		assert_int_equal(cfg->n_shared_experts, 2); /* moe_num_shared_experts */
		assert_int_equal(cfg->moe_layer_start_index, 1);
		assert_int_equal(cfg->moe_layer_end_index, 2);
		assert_int_equal(cfg->moe_layer_interval, 1);
	}
	if (strcmp(e->name, "falcon") == 0) { /* new_decoder_architecture: ln_attn / ln_mlp */
		assert_int_equal(cfg->falcon_ln, 2);
		assert_false(cfg->attention_bias || cfg->attention_out_bias || cfg->mlp_bias);
	}
	if (strncmp(e->name, "llama4", 6) == 0) {
		assert_int_equal(cfg->interleave_moe_layer_step, 2);
		assert_int_equal(cfg->intermediate_size_mlp, 384);
		assert_false(cfg->has_moe_layers);
	} else if (m3 || g4v || lv || i3 || pg || av || ov || c2v || ivl || px || fy || lvl || b2 ||
	           ar || ml || qo || cl || sg) {
		/* checked above */
	} else if (g3) { /* SigLIP's vision_config (text_config holds the LM) */
		assert_int_equal(cfg->v_num_layers, 2);
		assert_int_equal(cfg->v_num_attn_heads, 4);
		assert_int_equal(cfg->v_hidden_size, 128);
		assert_int_equal(cfg->v_intermediate_size, 256);
		assert_int_equal(cfg->v_image_size, 56);
		assert_true(cfg->v_patch_given);
		assert_int_equal(cfg->v_patch_size, 14);
		assert_int_equal(cfg->v_in_chans, 3);
	} else if (q3v) { /* Qwen3-VL's vision_config and interleaved MRoPE (text_config) */
		assert_int_equal(cfg->v_depth, 3);
		assert_int_equal(cfg->v_hidden_size, 64);
		assert_int_equal(cfg->v_intermediate_size, 192);
		assert_int_equal(cfg->v_out_hidden_size, 256);
		assert_int_equal(cfg->v_num_pos, 16);
		assert_int_equal(cfg->v_patch_size, 4);
		assert_true(cfg->has_deepstack);
		assert_int_equal(cfg->n_deepstack, 2);
		assert_int_equal(cfg->deepstack[1], 2);
		assert_true(cfg->has_mrope);
		assert_int_equal(cfg->n_mrope, 3);
		assert_int_equal(cfg->mrope_section[0], 8);
		assert_int_equal(cfg->n_mlp_only_layers, strcmp(e->name, "qwen3_vl_moe") == 0);
	} else if (cfg->has_vision) {
		assert_int_equal(cfg->v_depth, v25 ? 4 : 2);
		assert_int_equal(v25 ? cfg->v_hidden_size : cfg->v_embed_dim, 128);
		assert_int_equal(cfg->v_intermediate_size, v25 ? 384 : -1);
		assert_int_equal(cfg->v_out_hidden_size, v25 ? 256 : -1);
		assert_int_equal(cfg->v_num_heads, 4);
		assert_true(cfg->v_mlp_ratio == 4.0);
		assert_int_equal(cfg->v_patch_size, 14);
		assert_int_equal(cfg->v_in_chans, 3);
		assert_true(cfg->has_mrope);
		assert_int_equal(cfg->n_mrope, 3);
		assert_int_equal(cfg->mrope_section[0], 4);
		assert_int_equal(cfg->mrope_section[2], 6);
	}
	assert_int_equal(cfg->quant_group, e->quant == CKPT_QUANT_CT_INT4 ? 128 : 0);
	assert_int_equal(cfg->quant_int4_i8, strcmp(e->name, "llama_w4a8") == 0);
	assert_int_equal(cfg->quant_asym, strstr(e->name, "_asym") != NULL);
	assert_int_equal(cfg->quant_pack8, strcmp(e->name, "llama_w8a16") == 0);
	assert_int_equal(cfg->quant_gidx, strcmp(e->name, "llama_w4a16_actorder") == 0);
	if (e->quant == CKPT_QUANT_CT_INT4 || e->quant == CKPT_QUANT_CT_INT8 ||
	    e->quant == CKPT_QUANT_CT_FP8 || strcmp(e->name, "llama_ct_fp8_tensor") == 0 ||
	    strcmp(e->name, "qwen3_ct_fp8_block") == 0)
		assert_int_equal(cfg->n_quant_ignore, 1); /* "ignore": ["lm_head"] */
	/* Maverick's list, kept verbatim (matched as transformers does, not as patterns) */
	assert_int_equal(cfg->n_quant_keep, e->quant == CKPT_QUANT_FBGEMM_FP8 ? 6 : 0);
	if (e->quant == CKPT_QUANT_FBGEMM_FP8)
		assert_int_equal(cfg->n_quant_ignore, 0);
	if (e->quant == CKPT_QUANT_FP8_BLOCK) {
		assert_int_equal(cfg->quant_block[0], 128);
		assert_int_equal(cfg->quant_block[1], 128);
	}

	/* objects: the safetensors files the tensors live in */
	const char *objs[4] = {0};
	size_t n_objs = 0;
	for (size_t i = 0; i < ckpt_n_tensors(c); i++) {
		const char *o = ckpt_tensor_at(c, i)->object;
		size_t k = 0;
		while (k < n_objs && strcmp(objs[k], o) != 0)
			k++;
		if (k == n_objs) {
			assert_true(n_objs < 4);
			objs[n_objs++] = o;
		}
	}
	assert_int_equal(n_objs, e->n_objects);
	ckpt_close(c);
	store_close(s);
	free(dir);
}

static void test_families(void **state)
{
	(void)state;
	char *root = tu_mkdtemp("fixtures");
	assert_non_null(root);
	print_message("seed %u\n", SEED);
	for (size_t i = 0; i < N_FAMS; i++)
		check_family(fam_at(i), root);
	tu_rmrf(root);
	free(root);
}

/* Every family the generator lists is covered above, and no other. */
static void test_list(void **state)
{
	(void)state;
	char *bin = mkckpt_path();
	char cmd[1024];
	snprintf(cmd, sizeof(cmd), "'%s' --family list", bin);
	free(bin);
	FILE *p = popen(cmd, "r");
	assert_non_null(p);
	char line[128];
	size_t n = 0;
	while (fgets(line, sizeof(line), p) != NULL) {
		line[strcspn(line, "\n")] = '\0';
		assert_true(n < N_FAMS);
		assert_string_equal(line, fam_at(n)->name);
		n++;
	}
	assert_int_equal(pclose(p), 0);
	assert_int_equal(n, N_FAMS);
}

/* The MTP layer and the pre-quantized tensors have the names real checkpoints use. */
static void test_deepseek_names(void **state)
{
	(void)state;
	char *root = tu_mkdtemp("fixtures-ds");
	char args[1024];
	snprintf(args, sizeof(args), "--family deepseek_v3 --out '%s' --seed %u", root, SEED);
	assert_int_equal(run_mkckpt(args), 0);
	store *s = NULL;
	ckpt *c = NULL;
	assert_int_equal(store_open(&s, root, NULL), WT_OK);
	assert_int_equal(ckpt_open(&c, s, NULL), WT_OK);
	static const struct {
		const char *name;
		wt_dtype dt;
		int64_t d0, d1;
	} want[] = {
	    {"model.layers.0.self_attn.q_b_proj.weight", WT_F8_E4M3, 512, 128},
	    {"model.layers.0.self_attn.q_b_proj.weight_scale_inv", WT_F32, 4, 1},
	    {"model.layers.1.mlp.experts.3.down_proj.weight_scale_inv", WT_F32, 2, 2},
	    {"model.layers.1.mlp.gate.weight", WT_BF16, 4, 256},
	    {"model.layers.1.mlp.gate.e_score_correction_bias", WT_F32, 4, -1},
	    {"model.layers.2.eh_proj.weight", WT_F8_E4M3, 256, 512},
	    {"model.layers.2.shared_head.head.weight", WT_BF16, 1024, 256},
	    {"model.layers.0.self_attn.rotary_emb.inv_freq", WT_F32, 16, -1},
	};
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		const ckpt_tensor *t = ckpt_find(c, want[i].name);
		if (t == NULL)
			fail_msg("missing %s", want[i].name);
		assert_int_equal(t->dtype, want[i].dt);
		assert_int_equal(t->shape[0], want[i].d0);
		assert_int_equal(t->ndim, want[i].d1 < 0 ? 1 : 2);
		if (want[i].d1 >= 0)
			assert_int_equal(t->shape[1], want[i].d1);
	}
	assert_null(ckpt_find(c, "model.layers.0.mlp.experts.0.up_proj.weight"));
	assert_null(ckpt_find(c, "model.layers.1.mlp.gate_proj.weight"));
	ckpt_close(c);
	store_close(s);
	tu_rmrf(root);
	free(root);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_list),
	    cmocka_unit_test(test_families),
	    cmocka_unit_test(test_deepseek_names),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
