/*
 * config_llava.c — LLaVA's config keys (model_type llava / llava_next / llava_next_video:
 * LlavaConfig, LlavaNextConfig, LlavaNextVideoConfig, transformers 4.57.1; the last also
 * spatial_pool_mode / spatial_pool_stride): vision_feature_layer (an integer unless a list;
 * default -2), vision_config.model_type (default clip_vision_model) and text_config.model_type
 * (default llama), read beside the vision_config the common parser reads. Idefics3's and
 * SmolVLM's (Idefics3Config, SmolVLMConfig): scale_factor (default 2, the connector's pixel
 * shuffle, kept as the spatial merge) and text_config.model_type (default llama). PaliGemma's
 * (PaliGemmaConfig): text_config.model_type (default gemma). Aya Vision's (AyaVisionConfig),
 * LLaVA-OneVision's (LlavaOnevisionConfig) and Cohere2Vision's (Cohere2VisionConfig) below.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "loader/config_int.h"
#include "loader/loader.h"

bool config_is_llava(json_t *root)
{
	const char *mt = json_string_value(json_object_get(root, "model_type"));
	return mt != NULL && (strcmp(mt, "llava") == 0 || strcmp(mt, "llava_next") == 0 ||
	                      strcmp(mt, "llava_next_video") == 0);
}

bool config_is_llava_next_video(json_t *root)
{
	const char *mt = json_string_value(json_object_get(root, "model_type"));
	return mt != NULL && strcmp(mt, "llava_next_video") == 0;
}

/* A LLaVA-style config: vision_feature_layer (layer when absent; not when
 * a list), vision_config.model_type (vision when it has none) and
 * text_config.model_type (text when it has none; "" without a text_config). */
static int parse_llava_like(json_t *root, json_t *v, ckpt_config *c, int64_t layer,
                            const char *vision, const char *text, wt_errbuf *err)
{
	int rv = WT_OK;
	if (!c->v_feature_list)
		rv = config_get_int(root, "vision_feature_layer", layer, -(int64_t)INT32_MAX,
		                    &c->v_feature_layer, err);
	const char *vmt = json_string_value(json_object_get(v, "model_type"));
	snprintf(c->v_model_type, sizeof(c->v_model_type), "%s", vmt != NULL ? vmt : vision);
	json_t *uh = json_object_get(v, "vision_use_head");
	if (uh != NULL && !json_is_boolean(uh) && !json_is_null(uh))
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: vision_config.vision_use_head is not true, false or "
		                 "null; vLLM builds the tower's pooling head unless it is false");
	c->v_use_head = uh == NULL || json_is_true(uh);
	json_t *tc = json_object_get(root, "text_config");
	const char *tmt = json_string_value(json_object_get(tc, "model_type"));
	snprintf(c->lm_model_type, sizeof(c->lm_model_type), "%s",
	         !json_is_object(tc) ? ""
	         : tmt != NULL       ? tmt
	                             : text);
	return rv;
}

/* LlavaConfig / LlavaNextConfig / LlavaNextVideoConfig: -2, clip_vision_model, llama;
 * LlavaNextVideoConfig's spatial_pool_mode ("average") and spatial_pool_stride (2) */
/* Tarsier's split-token ids: required (TarsierHfConfig; vLLM's __init__ reads them unguarded),
 * whole numbers from 0 (the planner checks them against the vocabulary). */
static int parse_tarsier(json_t *root, ckpt_config *c, wt_errbuf *err)
{
	static const char *const keys[] = {"image_newline_idx", "image_new_idx"};
	int64_t *out[] = {&c->ts_newline_idx, &c->ts_new_idx};
	for (int i = 0; i < 2; i++) {
		json_t *x = json_object_get(root, keys[i]);
		if (x == NULL || json_is_null(x))
			return wt_seterr(
			    err, WT_ENOTFOUND,
			    "config.json: '%s' is missing: vLLM's "
			    "TarsierForConditionalGeneration reads it (the token whose "
			    "embedding splits the image's patches); set it as the "
			    "release's config.json does",
			    keys[i]);
		int rv = config_get_int(root, keys[i], -1, 0, out[i], err);
		if (rv != WT_OK)
			return rv;
	}
	return WT_OK;
}

int config_parse_llava(json_t *root, json_t *v, ckpt_config *c, wt_errbuf *err)
{
	int rv = parse_llava_like(root, v, c, -2, "clip_vision_model", "llama", err);
	c->ts_newline_idx = c->ts_new_idx = -1;
	if (rv == WT_OK && c->architecture != NULL &&
	    strcmp(c->architecture, "TarsierForConditionalGeneration") == 0)
		rv = parse_tarsier(root, c, err);
	if (rv != WT_OK || !config_is_llava_next_video(root))
		return rv;
	json_t *pm = json_object_get(root, "spatial_pool_mode");
	if (pm != NULL && !json_is_string(pm))
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: spatial_pool_mode is not a string");
	snprintf(c->v_pool_mode, sizeof(c->v_pool_mode), "%s",
	         pm != NULL ? json_string_value(pm) : "average");
	return config_get_int(root, "spatial_pool_stride", 2, 1, &c->v_pool_stride, err);
}

bool config_is_idefics3(json_t *root)
{
	const char *mt = json_string_value(json_object_get(root, "model_type"));
	return mt != NULL && (strcmp(mt, "idefics3") == 0 || strcmp(mt, "smolvlm") == 0);
}

int config_parse_idefics3(json_t *root, ckpt_config *c, wt_errbuf *err)
{
	int rv = config_get_int(root, "scale_factor", 2, 1, &c->v_spatial_merge_size, err);
	json_t *tc = json_object_get(root, "text_config");
	const char *tmt = json_string_value(json_object_get(tc, "model_type"));
	snprintf(c->lm_model_type, sizeof(c->lm_model_type), "%s",
	         !json_is_object(tc) ? ""
	         : tmt != NULL       ? tmt
	                             : "llama");
	return rv;
}

bool config_is_paligemma(json_t *root)
{
	const char *mt = json_string_value(json_object_get(root, "model_type"));
	return mt != NULL && strcmp(mt, "paligemma") == 0;
}

/* PaliGemmaConfig builds text_config by its model_type, gemma when it has none */
void config_parse_paligemma(json_t *root, ckpt_config *c)
{
	json_t *tc = json_object_get(root, "text_config");
	const char *tmt = json_string_value(json_object_get(tc, "model_type"));
	snprintf(c->lm_model_type, sizeof(c->lm_model_type), "%s",
	         !json_is_object(tc) ? ""
	         : tmt != NULL       ? tmt
	                             : "gemma");
}

bool config_is_aya_vision(json_t *root)
{
	const char *mt = json_string_value(json_object_get(root, "model_type"));
	return mt != NULL && strcmp(mt, "aya_vision") == 0;
}

/* AyaVisionConfig: vision_feature_layer (-1), downsample_factor (2, kept as the spatial
 * merge), alignment_intermediate_size (vLLM's getattr default: text hidden_size; kept in
 * v_proj_in_dim, -1 when absent) and text_config.model_type (cohere2 when it has none) */
int config_parse_aya_vision(json_t *root, ckpt_config *c, wt_errbuf *err)
{
	int rv = WT_OK;
	if (!c->v_feature_list)
		rv = config_get_int(root, "vision_feature_layer", -1, -(int64_t)INT32_MAX,
		                    &c->v_feature_layer, err);
	if (rv == WT_OK)
		rv = config_get_int(root, "downsample_factor", 2, 1, &c->v_spatial_merge_size, err);
	if (rv == WT_OK)
		rv = config_get_int(root, "alignment_intermediate_size", -1, 1, &c->v_proj_in_dim,
		                    err);
	json_t *tc = json_object_get(root, "text_config");
	const char *tmt = json_string_value(json_object_get(tc, "model_type"));
	snprintf(c->lm_model_type, sizeof(c->lm_model_type), "%s",
	         !json_is_object(tc) ? ""
	         : tmt != NULL       ? tmt
	                             : "cohere2");
	return rv;
}

bool config_is_llava_onevision(json_t *root)
{
	const char *mt = json_string_value(json_object_get(root, "model_type"));
	return mt != NULL && strcmp(mt, "llava_onevision") == 0;
}

/* LlavaOnevisionConfig: vision_feature_layer (-1), vision_config.model_type
 * (siglip_vision_model when it has none) and text_config.model_type (qwen2 when it has
 * none) */
int config_parse_llava_onevision(json_t *root, json_t *v, ckpt_config *c, wt_errbuf *err)
{
	return parse_llava_like(root, v, c, -1, "siglip_vision_model", "qwen2", err);
}

bool config_is_cohere2_vision(json_t *root)
{
	const char *mt = json_string_value(json_object_get(root, "model_type"));
	return mt != NULL && strcmp(mt, "cohere2_vision") == 0;
}

/* Cohere2VisionConfig: downsample_factor (2, kept as the spatial merge),
 * alignment_intermediate_size (36864, kept in v_proj_in_dim) and text_config.model_type
 * (cohere2 when it has none); no vision_feature_layer (the tower's last hidden state) */
int config_parse_cohere2_vision(json_t *root, ckpt_config *c, wt_errbuf *err)
{
	int rv = config_get_int(root, "downsample_factor", 2, 1, &c->v_spatial_merge_size, err);
	if (rv == WT_OK)
		rv = config_get_int(root, "alignment_intermediate_size", 36864, 1,
		                    &c->v_proj_in_dim, err);
	json_t *tc = json_object_get(root, "text_config");
	const char *tmt = json_string_value(json_object_get(tc, "model_type"));
	snprintf(c->lm_model_type, sizeof(c->lm_model_type), "%s",
	         !json_is_object(tc) ? ""
	         : tmt != NULL       ? tmt
	                             : "cohere2");
	return rv;
}

bool config_is_minimax_vl(json_t *root)
{
	const char *mt = json_string_value(json_object_get(root, "model_type"));
	return mt != NULL && strcmp(mt, "minimax_vl_01") == 0;
}

/* MiniMaxVL01Config (the remote configuration_minimax_vl_01.py, vLLM's copy in
 * vllm/transformers_utils/configs/): vision_feature_layer (-2), vision_config.model_type
 * (clip_vision_model when it has none); text_config must name its model_type (the class
 * asserts it, then builds a MiniMaxText01Config of it). */
int config_parse_minimax_vl(json_t *root, json_t *v, ckpt_config *c, wt_errbuf *err)
{
	json_t *tc = json_object_get(root, "text_config");
	if (json_is_object(tc) && !json_is_string(json_object_get(tc, "model_type")))
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: text_config.model_type is missing: "
		                 "MiniMaxVL01Config asserts it (MiniMax-VL-01's: "
		                 "minimax_text_01)");
	return parse_llava_like(root, v, c, -2, "clip_vision_model", "", err);
}

/* The reference's reading of a MiniMax-VL-01 config (reference/ckpt.c json_keys): text_config
 * laid over the top level as the loader's view does (the top level's tie dropped), then
 * MiniMax-Text-01's remote keys renamed (config_minimax01_keys). */
int config_minimax_vl_flat(json_t *root, wt_errbuf *err)
{
	json_t *tc = json_object_get(root, "text_config");
	if (!json_is_object(tc))
		return WT_OK;
	json_incref(tc);
	json_object_del(root, "tie_word_embeddings");
	json_object_del(root, "text_config");
	int rv = json_object_update(root, tc) == 0
	             ? WT_OK
	             : wt_seterr(err, WT_ENOMEM, "config.json: out of memory");
	json_decref(tc);
	return rv == WT_OK ? config_minimax01_keys(root, err) : rv;
}
