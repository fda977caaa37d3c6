/*
 * config_blip2.c — BLIP-2's config keys (model_type "blip-2", Blip2Config; transformers
 * 4.57.1): vision_config (a Blip2VisionConfig whether or not it says so; absent: all its
 * defaults) with that class's defaults for absent keys (hidden_size 1408, intermediate_size
 * 6144, num_hidden_layers 39, num_attention_heads 16, image_size 224, patch_size 14,
 * qkv_bias true into v_attn_bias), qformer_config (config_parse_qformer; its
 * encoder_hidden_size is always vision_config.hidden_size, as Blip2Config sets it), the top
 * level's num_query_tokens (32) and text_config's model_type (opt when it has none; "" without
 * a text_config object).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "loader/config_int.h"
#include "loader/loader.h"

bool config_is_blip2(json_t *root)
{
	const char *mt = json_string_value(json_object_get(root, "model_type"));
	return mt != NULL && strcmp(mt, "blip-2") == 0;
}

static int parse_vision(json_t *v, ckpt_config *c, wt_errbuf *err)
{
	static const config_int_key ints[] = {
	    {"hidden_size", 1408, offsetof(ckpt_config, v_hidden_size)},
	    {"intermediate_size", 6144, offsetof(ckpt_config, v_intermediate_size)},
	    {"num_hidden_layers", 39, offsetof(ckpt_config, v_num_layers)},
	    {"num_attention_heads", 16, offsetof(ckpt_config, v_num_attn_heads)},
	    {"image_size", 224, offsetof(ckpt_config, v_image_size)},
	    {"patch_size", 14, offsetof(ckpt_config, v_patch_size)},
	};
	int rv = config_read_ints(v, "vision_config", ints, CONFIG_NKEYS(ints), c, err);
	if (rv == WT_OK)
		rv = config_get_bool(v, "qkv_bias", true, &c->v_attn_bias, err);
	c->has_vision = true;
	c->v_patch_given = true;
	c->v_in_chans = 3; /* BlipVisionEmbeddings' Conv2d: in_channels=3 */
	return rv;
}

int config_parse_blip2(json_t *root, ckpt_config *c, wt_errbuf *err)
{
	json_t *tc = json_object_get(root, "text_config");
	const char *tmt = json_string_value(json_object_get(tc, "model_type"));
	snprintf(c->lm_model_type, sizeof(c->lm_model_type), "%s",
	         !json_is_object(tc) ? ""
	         : tmt != NULL       ? tmt
	                             : "opt");
	int rv = parse_vision(json_object_get(root, "vision_config"), c, err);
	if (rv == WT_OK)
		rv = config_parse_qformer(json_object_get(root, "qformer_config"), "qformer_config",
		                          c, err);
	c->qf_enc = c->v_hidden_size; /* Blip2Config sets it, whatever qformer_config says */
	if (rv == WT_OK)
		rv = config_get_int(root, "num_query_tokens", 32, 1, &c->num_query_tokens, err);
	return rv;
}
