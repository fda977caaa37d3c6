/*
 * config_lfm2_vl.c — LFM2-VL's config keys (model_type lfm2_vl, which Lfm2VlConfig writes as
 * "lfm2-vl"; transformers 4.57.1): vision_config (a Siglip2VisionConfig: model_type
 * siglip2_vision_model when it has none) with that class's defaults for absent keys
 * (hidden_size 768, intermediate_size 3072, num_hidden_layers 12, num_attention_heads 12,
 * num_channels 3, num_patches 256 into v_num_pos, patch_size 16), the top level's
 * downsample_factor (2, kept as the spatial merge), projector_hidden_size (2560, kept in
 * v_proj_in_dim), projector_bias (true, kept in mm_projector_bias) and text_config's
 * model_type (lfm2 when it has none). Refused: a tower other than siglip2_vision_model (vLLM's
 * lfm2_vl.py builds Siglip2Model alone), a pooling head (vision_use_head not false: vLLM
 * builds none) and projector_use_layernorm false (transformers 4.57.1's projector always has
 * its layer_norm).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "loader/config_int.h"
#include "loader/loader.h"

bool config_is_lfm2_vl(json_t *root)
{
	const char *mt = json_string_value(json_object_get(root, "model_type"));
	return mt != NULL && (strcmp(mt, "lfm2_vl") == 0 || strcmp(mt, "lfm2-vl") == 0);
}

/* Siglip2VisionConfig's keys of v (an object) into c, its defaults for absent ones. */
static int parse_siglip2(json_t *v, ckpt_config *c, wt_errbuf *err)
{
	static const config_int_key ints[] = {
	    {"hidden_size", 768, offsetof(ckpt_config, v_hidden_size)},
	    {"intermediate_size", 3072, offsetof(ckpt_config, v_intermediate_size)},
	    {"num_hidden_layers", 12, offsetof(ckpt_config, v_num_layers)},
	    {"num_attention_heads", 12, offsetof(ckpt_config, v_num_attn_heads)},
	    {"num_channels", 3, offsetof(ckpt_config, v_in_chans)},
	    {"num_patches", 256, offsetof(ckpt_config, v_num_pos)},
	    {"patch_size", 16, offsetof(ckpt_config, v_patch_size)},
	};
	int rv = config_read_ints(v, "vision_config", ints, CONFIG_NKEYS(ints), c, err);
	if (rv != WT_OK)
		return rv;
	c->v_patch_given = true;
	const char *vmt = json_string_value(json_object_get(v, "model_type"));
	snprintf(c->v_model_type, sizeof(c->v_model_type), "%s",
	         vmt != NULL ? vmt : "siglip2_vision_model");
	if (strcmp(c->v_model_type, "siglip2_vision_model") != 0)
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "config.json: vision_config.model_type '%s': vLLM's lfm2_vl.py "
		                 "builds a siglip2_vision_model tower alone; give that one",
		                 c->v_model_type);
	json_t *head = json_object_get(v, "vision_use_head");
	if (!json_is_false(head))
		return wt_seterr(
		    err, WT_EUNSUPPORTED,
		    "config.json: vision_config.vision_use_head is %s: transformers "
		    "builds the SigLIP2 pooling head then (absent counts as true), which "
		    "vLLM's lfm2_siglip2.py has no module for; set it false (as the "
		    "LFM2-VL releases do) and leave out the head.* tensors",
		    head == NULL ? "absent" : "not false");
	return WT_OK;
}

int config_parse_lfm2_vl(json_t *root, json_t *v, ckpt_config *c, wt_errbuf *err)
{
	json_t *tc = json_object_get(root, "text_config");
	const char *tmt = json_string_value(json_object_get(tc, "model_type"));
	snprintf(c->lm_model_type, sizeof(c->lm_model_type), "%s",
	         !json_is_object(tc) ? ""
	         : tmt != NULL       ? tmt
	                             : "lfm2");
	int rv = parse_siglip2(v, c, err);
	if (rv == WT_OK)
		rv = config_get_int(root, "downsample_factor", 2, 1, &c->v_spatial_merge_size, err);
	if (rv == WT_OK)
		rv = config_get_int(root, "projector_hidden_size", 2560, 1, &c->v_proj_in_dim, err);
	if (rv == WT_OK)
		rv = config_get_bool(root, "projector_bias", true, &c->mm_projector_bias, err);
	bool ln = true;
	if (rv == WT_OK)
		rv = config_get_bool(root, "projector_use_layernorm", true, &ln, err);
	if (rv == WT_OK && !ln)
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "config.json: projector_use_layernorm is false: transformers "
		                 "4.57.1's Lfm2VlMultiModalProjector always has its layer_norm "
		                 "(multi_modal_projector.layer_norm), so the checkpoint would not "
		                 "load there; set it true with the layer_norm tensors");
	return rv;
}
