/*
 * config_internvl.c — InternVL's config keys (model_type internvl: InternVLConfig and its
 * InternVLVisionConfig, transformers 4.57.1). The vision_config is read here whole, not by the
 * common parser: its image_size and patch_size are [height, width] pairs. Absent keys take
 * InternVLVisionConfig's defaults (hidden_size 1024, intermediate_size 4096, 24 layers, 16
 * heads, image 448, patch 14, 3 channels, attention_bias false, use_qk_norm false, norm_type
 * layer_norm, use_mask_token false, use_absolute_position_embeddings true, use_mean_pooling
 * true); the top level's downsample_ratio (0.5; kept as the spatial merge 1 / ratio, the pixel
 * shuffle's factor), vision_feature_layer (-1), vision_feature_select_strategy ("default")
 * and text_config.model_type (qwen2 when it has none; "" without a text_config object; qwen3
 * for InternVL3.5) take InternVLConfig's. The planner checks what vLLM builds of them.
 *
 * model_type interns1 (InternS1ForConditionalGeneration: internlm/Intern-S1, Intern-S1-mini;
 * remote code configuration_interns1.py) is read the same way: its InternS1Config has
 * InternVLConfig's keys and defaults (image_token_id 151667, image_seq_length 256,
 * downsample_ratio 0.5, projector_hidden_act gelu, vision_feature_layer -1, "default"; a
 * text_config without model_type is qwen2's) and InternS1VisionConfig InternVLVisionConfig's.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "loader/config_int.h"
#include "loader/loader.h"

bool config_is_internvl(json_t *root)
{
	const char *mt = json_string_value(json_object_get(root, "model_type"));
	return mt != NULL && (strcmp(mt, "internvl") == 0 || strcmp(mt, "interns1") == 0);
}

/* vision_config's image_size / patch_size: an integer or an [height, width] pair (absent or
 * null: dflt); a pair of two sizes is refused (vLLM's InternS1 reads [0] alone). */
static int square_size(json_t *v, const char *key, int64_t dflt, int64_t *out, wt_errbuf *err)
{
	json_t *x = json_object_get(v, key);
	if (x == NULL || json_is_null(x) || !json_is_array(x))
		return config_get_int(v, key, dflt, 1, out, err);
	json_t *h = json_array_get(x, 0), *w = json_array_get(x, 1);
	if (json_array_size(x) != 2 || !json_is_integer(h) || !json_is_integer(w) ||
	    json_integer_value(h) < 1 || json_integer_value(w) < 1)
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: vision_config.%s must be an integer or an [height, "
		                 "width] pair of positive integers",
		                 key);
	if (json_integer_value(h) != json_integer_value(w))
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "config.json: vision_config.%s [%lld, %lld]: only square ones are "
		                 "supported (vLLM's InternS1ForConditionalGeneration reads %s[0] "
		                 "alone); give equal sizes",
		                 key, (long long)json_integer_value(h),
		                 (long long)json_integer_value(w), key);
	*out = (int64_t)json_integer_value(h);
	return WT_OK;
}

/* InternVLVisionConfig's keys of v (an object) into c, its defaults for absent ones. */
static int parse_internvl_vision(json_t *v, ckpt_config *c, wt_errbuf *err)
{
	static const config_int_key ints[] = {
	    {"hidden_size", 1024, offsetof(ckpt_config, v_hidden_size)},
	    {"intermediate_size", 4096, offsetof(ckpt_config, v_intermediate_size)},
	    {"num_hidden_layers", 24, offsetof(ckpt_config, v_num_layers)},
	    {"num_attention_heads", 16, offsetof(ckpt_config, v_num_attn_heads)},
	    {"num_channels", 3, offsetof(ckpt_config, v_in_chans)},
	};
	static const struct {
		const char *key;
		bool dflt;
		size_t off;
	} bools[] = {
	    {"attention_bias", false, offsetof(ckpt_config, v_attn_bias)},
	    {"use_qk_norm", false, offsetof(ckpt_config, v_qk_norm)},
	    {"use_mask_token", false, offsetof(ckpt_config, v_mask_token)},
	    {"use_absolute_position_embeddings", true, offsetof(ckpt_config, v_abs_pos)},
	    {"use_mean_pooling", true, offsetof(ckpt_config, v_mean_pool)},
	};
	int rv = config_read_ints(v, "vision_config", ints, CONFIG_NKEYS(ints), c, err);
	if (rv != WT_OK)
		return rv;
	for (size_t k = 0; rv == WT_OK && k < sizeof(bools) / sizeof(bools[0]); k++)
		rv = config_get_bool(v, bools[k].key, bools[k].dflt,
		                     (bool *)((char *)c + bools[k].off), err);
	if (rv != WT_OK) {
		if (err != NULL)
			wt_errprefix(err, "in vision_config");
		return rv;
	}
	rv = square_size(v, "image_size", 448, &c->v_image_size, err);
	if (rv == WT_OK)
		rv = square_size(v, "patch_size", 14, &c->v_patch_size, err);
	if (rv != WT_OK)
		return rv;
	c->v_patch_given = true;
	json_t *nt = json_object_get(v, "norm_type");
	const char *ns = nt == NULL || json_is_null(nt) ? "layer_norm" : json_string_value(nt);
	if (ns == NULL || (strcmp(ns, "layer_norm") != 0 && strcmp(ns, "rms_norm") != 0))
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "config.json: vision_config.norm_type is not 'layer_norm' or "
		                 "'rms_norm' (the two InternVLVisionConfig and vLLM's InternS1 "
		                 "tower build); give one of them");
	c->v_norm_ln = strcmp(ns, "layer_norm") == 0;
	return WT_OK;
}

/* InternVLConfig's top-level keys: downsample_ratio as the spatial merge 1 / ratio (a ratio
 * that is not 1 / n for a whole n refused: the projector is VE x int(1 / ratio)^2 wide and the
 * pixel shuffle takes n x n patches), vision_feature_layer, vision_feature_select_strategy. */
static int parse_internvl_top(json_t *root, ckpt_config *c, wt_errbuf *err)
{
	double ratio = 0.5;
	int rv = config_get_pos_real(root, "downsample_ratio", 0.5, &ratio, err);
	if (rv != WT_OK)
		return rv;
	/* 1 / ratio converted only within [1, 64]: a tiny ratio would overflow int64_t */
	int64_t n = ratio <= 1.0 && ratio >= 1.0 / 64 ? (int64_t)(1.0 / ratio) : 0;
	if (n < 1 || n > 64 || (double)n * ratio != 1.0)
		return wt_seterr(
		    err, WT_EUNSUPPORTED,
		    "config.json: downsample_ratio %g is not 1 / n for a whole n up to "
		    "64 (the pixel shuffle merges n x n patches; InternVL3's is 0.5)",
		    ratio);
	c->v_spatial_merge_size = n;
	c->v_feature_list = json_is_array(json_object_get(root, "vision_feature_layer"));
	if (!c->v_feature_list)
		rv = config_get_int(root, "vision_feature_layer", -1, -(int64_t)INT32_MAX,
		                    &c->v_feature_layer, err);
	if (rv != WT_OK)
		return rv;
	json_t *s = json_object_get(root, "vision_feature_select_strategy");
	if (s != NULL && !json_is_null(s) && !json_is_string(s))
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: vision_feature_select_strategy is not a string");
	const char *ss = json_is_string(s) ? json_string_value(s) : "default";
	snprintf(c->v_select, sizeof(c->v_select), "%s", ss);
	return WT_OK;
}

int config_parse_internvl(json_t *root, json_t *v, ckpt_config *c, wt_errbuf *err)
{
	json_t *tc = json_object_get(root, "text_config");
	const char *tmt = json_string_value(json_object_get(tc, "model_type"));
	snprintf(c->lm_model_type, sizeof(c->lm_model_type), "%s",
	         !json_is_object(tc) ? ""
	         : tmt != NULL       ? tmt
	                             : "qwen2");
	int rv = parse_internvl_top(root, c, err);
	if (rv != WT_OK || v == NULL || json_is_null(v))
		return rv;
	if (!json_is_object(v))
		return wt_seterr(err, WT_ECORRUPT, "config.json: 'vision_config' is not an object");
	c->has_vision = true;
	return parse_internvl_vision(v, c, err);
}
