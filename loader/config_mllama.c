/*
 * config_mllama.c — Mllama's config keys (model_type mllama: MllamaConfig, transformers
 * 4.57.1). vision_config (MllamaConfig builds a MllamaVisionConfig of it whatever its
 * model_type; absent: the class's defaults) with MllamaVisionConfig's defaults for absent keys:
 * hidden_size 1280, intermediate_size 5120, num_hidden_layers 32, num_global_layers 8,
 * attention_heads 16 (the key save_pretrained writes; num_attention_heads, the __init__
 * argument, when it is absent), num_channels 3, image_size 448, patch_size 14,
 * vision_output_dim 7680, max_num_tiles 4, norm_eps 1e-5 and supported_aspect_ratios (its 8
 * entries; absent with max_num_tiles other than 4 is refused, as the class raises).
 * text_config's cross_attention_layers (MllamaTextConfig's [3, 8, 13, 18, 23, 28, 33, 38]
 * when absent or null) and whether it gives head_dim (MllamaTextConfig has none: transformers
 * uses hidden_size / num_attention_heads where vLLM's LlamaAttention would read the key).
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "loader/config_int.h"
#include "loader/loader.h"

bool config_is_mllama(json_t *root)
{
	const char *mt = json_string_value(json_object_get(root, "model_type"));
	return mt != NULL && strcmp(mt, "mllama") == 0;
}

/* MllamaVisionConfig's integer keys of v (an object, or NULL: every default) into c. */
static int parse_vision_ints(json_t *v, ckpt_config *c, wt_errbuf *err)
{
	static const config_int_key ints[] = {
	    {"hidden_size", 1280, offsetof(ckpt_config, v_hidden_size)},
	    {"intermediate_size", 5120, offsetof(ckpt_config, v_intermediate_size)},
	    {"num_hidden_layers", 32, offsetof(ckpt_config, v_num_layers)},
	    {"num_global_layers", 8, offsetof(ckpt_config, ml_global_layers)},
	    {"num_channels", 3, offsetof(ckpt_config, v_in_chans)},
	    {"image_size", 448, offsetof(ckpt_config, v_image_size)},
	    {"patch_size", 14, offsetof(ckpt_config, v_patch_size)},
	    {"vision_output_dim", 7680, offsetof(ckpt_config, v_output_dim)},
	    {"max_num_tiles", 4, offsetof(ckpt_config, ml_max_tiles)},
	};
	int rv = config_read_ints(v, "vision_config", ints, CONFIG_NKEYS(ints), c, err);
	if (rv != WT_OK)
		return rv;
	/* attention_heads (the attribute save_pretrained writes) wins over num_attention_heads
	 * (the __init__ argument): PretrainedConfig sets it from kwargs after __init__ */
	static const char *const heads[] = {"attention_heads", "num_attention_heads", NULL};
	const char *which = "attention_heads";
	config_first_of(v, heads, &which);
	rv = config_get_int(v, which, 16, 1, &c->v_num_attn_heads, err);
	if (rv == WT_OK)
		rv = config_get_pos_real(v, "norm_eps", 1e-5, &c->ml_norm_eps, err);
	if (rv != WT_OK && err != NULL)
		wt_errprefix(err, "in vision_config");
	return rv;
}

/* supported_aspect_ratios: its entries (max_aspect_ratio_id), the class's 8 when absent. */
static int parse_aspects(json_t *v, ckpt_config *c, wt_errbuf *err)
{
	json_t *a = json_object_get(v, "supported_aspect_ratios");
	if (a == NULL || json_is_null(a)) {
		if (c->ml_max_tiles != 4)
			return wt_seterr(err, WT_ECORRUPT,
			                 "config.json: vision_config.max_num_tiles %lld without "
			                 "supported_aspect_ratios (MllamaVisionConfig raises: its "
			                 "default ratios are for 4 tiles); give the ratios",
			                 (long long)c->ml_max_tiles);
		c->ml_n_aspect = 8;
		return WT_OK;
	}
	if (!json_is_array(a) || json_array_size(a) == 0)
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: vision_config.supported_aspect_ratios is not a "
		                 "non-empty array");
	c->ml_n_aspect = (int64_t)json_array_size(a);
	return WT_OK;
}

int config_parse_mllama(json_t *root, json_t *v, ckpt_config *c, wt_errbuf *err)
{
	if (v != NULL && !json_is_null(v) && !json_is_object(v))
		return wt_seterr(err, WT_ECORRUPT, "config.json: 'vision_config' is not an object");
	json_t *vo = json_is_object(v) ? v : NULL;
	c->has_vision = true;
	c->v_patch_given = true;
	int rv = parse_vision_ints(vo, c, err);
	if (rv == WT_OK)
		rv = parse_aspects(vo, c, err); /* its messages name vision_config */
	if (rv != WT_OK)
		return rv;
	json_t *tc = json_object_get(root, "text_config");
	const char *tmt = json_string_value(json_object_get(tc, "model_type"));
	snprintf(c->lm_model_type, sizeof(c->lm_model_type), "%s",
	         !json_is_object(tc) ? ""
	         : tmt != NULL       ? tmt
	                             : "mllama_text_model");
	c->ml_head_dim_key = json_object_get(tc, "head_dim") != NULL;
	json_t *x = json_object_get(tc, "cross_attention_layers");
	c->has_full_attn_idxs = true;
	if (x != NULL && !json_is_null(x))
		return config_int_list(x, "text_config.cross_attention_layers", &c->full_attn_idxs,
		                       &c->n_full_attn_idxs, err);
	static const int64_t dflt[] = {3, 8, 13, 18, 23, 28, 33, 38};
	if ((c->full_attn_idxs = malloc(sizeof(dflt))) == NULL)
		return wt_seterr(err, WT_ENOMEM, "config.json: out of memory");
	memcpy(c->full_attn_idxs, dflt, sizeof(dflt));
	c->n_full_attn_idxs = sizeof(dflt) / sizeof(dflt[0]);
	return WT_OK;
}
