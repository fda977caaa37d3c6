/*
 * config_isaac.c — Isaac's config.json (IsaacForConditionalGeneration, model_type isaac:
 * PerceptronAI/Isaac-0.1), read as vLLM reads it: vLLM registers its own IsaacConfig
 * (vllm/transformers_utils/configs/isaac.py), a Qwen3Config whose top-level keys are the
 * language model's (Qwen3Config's defaults: config_defaults.c), and which builds
 * PixelShuffleSiglip2VisionConfig(**vision_config) whatever its model_type says, or that
 * class's whole default when vision_config is absent or null:
 *
 *   key (vision_config)          default   here
 *   hidden_size                  768       v_hidden_size
 *   intermediate_size            3072      v_intermediate_size
 *   num_hidden_layers            12        v_num_layers
 *   num_attention_heads          12        v_num_attn_heads
 *   num_channels                 3         v_in_chans
 *   num_patches                  256       v_num_pos (the position table's rows)
 *   patch_size                   16        v_patch_size
 *   pixel_shuffle_scale_factor   1         v_spatial_merge_size (the projector's input is
 *                                          hidden_size x factor^2)
 *
 * The class's own num_patches / pixel_shuffle_scale_factor always exist, so IsaacConfig's
 * fallbacks to the top-level vision_max_num_patches / pixel_shuffle_scale never apply.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "loader/config_int.h"
#include "loader/loader.h"

bool config_is_isaac(json_t *root)
{
	const char *mt = json_string_value(json_object_get(root, "model_type"));
	return mt != NULL && strcmp(mt, "isaac") == 0;
}

int config_parse_isaac(json_t *v, ckpt_config *c, wt_errbuf *err)
{
	static const config_int_key ints[] = {
	    {"hidden_size", 768, offsetof(ckpt_config, v_hidden_size)},
	    {"intermediate_size", 3072, offsetof(ckpt_config, v_intermediate_size)},
	    {"num_hidden_layers", 12, offsetof(ckpt_config, v_num_layers)},
	    {"num_attention_heads", 12, offsetof(ckpt_config, v_num_attn_heads)},
	    {"num_channels", 3, offsetof(ckpt_config, v_in_chans)},
	    {"num_patches", 256, offsetof(ckpt_config, v_num_pos)},
	    {"patch_size", 16, offsetof(ckpt_config, v_patch_size)},
	    {"pixel_shuffle_scale_factor", 1, offsetof(ckpt_config, v_spatial_merge_size)},
	};
	if (v != NULL && !json_is_null(v) && !json_is_object(v))
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: 'vision_config' is not an object (Isaac's "
		                 "PixelShuffleSiglip2VisionConfig: hidden_size, num_hidden_layers, "
		                 "num_patches, pixel_shuffle_scale_factor, ...)");
	int rv = config_read_ints(v, "vision_config", ints, CONFIG_NKEYS(ints), c, err);
	c->v_patch_given = true;
	c->has_vision = rv == WT_OK;
	return rv;
}
