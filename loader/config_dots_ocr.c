/*
 * config_dots_ocr.c — dots.ocr's config.json (model_type dots_ocr: DotsOCRConfig,
 * rednote-hilab/dots.ocr, remote code; keys and defaults read from vLLM's own copy,
 * vllm/transformers_utils/configs/dotsocr.py, which transformers 4.57.1 does not ship).
 *
 * DotsOCRConfig subclasses Qwen2Config: the language model's keys are the top level's, with
 * Qwen2Config's defaults (config_defaults.c's dots_ocr row); vLLM builds Qwen2ForCausalLM of it.
 * vision_config (absent or null: DotsVisionConfig() with every default) is DotsVisionConfig:
 * embed_dim 1536 (the tower's width, into v_hidden_size), hidden_size 1536 (the merger's
 * output, into v_out_hidden_size), intermediate_size 4224, num_hidden_layers 42 (into v_depth),
 * num_attention_heads 12 (into v_num_heads), num_channels 3, patch_size 14,
 * spatial_merge_size 2, temporal_patch_size 1, use_bias false (into v_attn_bias), post_norm
 * true (into dt_post_norm). attn_implementation, is_causal, rms_norm_eps and the init keys
 * build no weights and are not read.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "loader/config_int.h"
#include "loader/loader.h"

bool config_is_dots_ocr(json_t *root)
{
	const char *mt = json_string_value(json_object_get(root, "model_type"));
	return mt != NULL && strcmp(mt, "dots_ocr") == 0;
}

int config_parse_dots_ocr(json_t *v, ckpt_config *c, wt_errbuf *err)
{
	static const config_int_key ints[] = {
	    {"embed_dim", 1536, offsetof(ckpt_config, v_hidden_size)},
	    {"hidden_size", 1536, offsetof(ckpt_config, v_out_hidden_size)},
	    {"intermediate_size", 4224, offsetof(ckpt_config, v_intermediate_size)},
	    {"num_hidden_layers", 42, offsetof(ckpt_config, v_depth)},
	    {"num_attention_heads", 12, offsetof(ckpt_config, v_num_heads)},
	    {"num_channels", 3, offsetof(ckpt_config, v_in_chans)},
	    {"patch_size", 14, offsetof(ckpt_config, v_patch_size)},
	    {"spatial_merge_size", 2, offsetof(ckpt_config, v_spatial_merge_size)},
	    {"temporal_patch_size", 1, offsetof(ckpt_config, v_temporal_patch_size)},
	};
	int rv = config_read_ints(v, "vision_config", ints, CONFIG_NKEYS(ints), c, err);
	if (rv != WT_OK)
		return rv;
	json_t *o = json_is_object(v) ? v : NULL;
	rv = config_get_bool(o, "use_bias", false, &c->v_attn_bias, err);
	if (rv == WT_OK)
		rv = config_get_bool(o, "post_norm", true, &c->dt_post_norm, err);
	if (rv == WT_OK && c->v_spatial_merge_size > 64)
		rv = wt_seterr(err, WT_EUNSUPPORTED,
		               "config.json: spatial_merge_size %lld is past 64 (dots.ocr's is 2)",
		               (long long)c->v_spatial_merge_size);
	if (rv != WT_OK) {
		if (err != NULL)
			wt_errprefix(err, "in vision_config");
		return rv;
	}
	c->v_num_layers = c->v_depth;
	c->v_num_attn_heads = c->v_num_heads;
	c->v_patch_given = true;
	c->has_vision = true;
	c->dt_config = true;
	return WT_OK;
}
