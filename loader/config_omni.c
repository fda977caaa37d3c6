/*
 * config_omni.c — Qwen2.5-Omni's config keys (model_type qwen2_5_omni: Qwen2_5OmniConfig,
 * transformers 4.57.1). vLLM's Qwen2_5OmniThinkerForConditionalGeneration reads
 * thinker_config alone (the talker's and token2wav's configs, enable_audio_output: ignored),
 * so the loader reads the model from a flat view (config_omni_root): thinker_config's keys
 * with the top level's architectures, model_type and quantization_config. An absent (or
 * null) thinker_config, or sub-config of it, is the class's defaults, as transformers builds
 * them:
 * - text_config (Qwen2_5OmniTextConfig, whatever its model_type: config_view.c names it
 *   qwen2_5_omni:text, its defaults in config_defaults_classic.c) with rope_scaling
 *   {mrope_section [16, 24, 24]} when that is absent or null;
 * - vision_config (Qwen2_5OmniVisionEncoderConfig): depth 32, hidden_size 3584,
 *   intermediate_size 3420, num_heads 16, in_channels 3, patch_size 14, spatial_merge_size 2,
 *   temporal_patch_size 2, out_hidden_size 3584, laid into the view's vision_config where
 *   absent or null;
 * - audio_config (Qwen2_5OmniAudioEncoderConfig, config_parse_omni_audio): num_mel_bins 128,
 *   encoder_layers 32, encoder_attention_heads 20, encoder_ffn_dim 5120, d_model 1280,
 *   max_source_positions 1500, output_dim 3584.
 * lm_head's tie is text_config.tie_word_embeddings alone (the thinker's get_text_config;
 * Qwen2_5OmniTextConfig's default false): config_view.c's tie_by_text.
 *
 * Qwen3-Omni (model_type qwen3_omni_moe: Qwen3OmniMoeConfig) is read the same way, with its
 * own classes' defaults:
 * - text_config (Qwen3OmniMoeTextConfig, named qwen3_omni_moe:text; norm_topk_prob true
 *   where absent or null, as the reference reads it); rope_scaling gets
 *   mrope_section [24, 20, 20] when it is an object without one (the thinker's rotary
 *   embedding's .get default); an absent or null rope_scaling is left so (transformers calls
 *   .get on None), which the planner refuses;
 * - vision_config (Qwen3OmniMoeVisionEncoderConfig): depth 27, hidden_size 1152,
 *   intermediate_size 4304, num_heads 16, in_channels 3, patch_size 16, spatial_merge_size 2,
 *   temporal_patch_size 2, out_hidden_size 3584, num_position_embeddings 2304,
 *   deepstack_visual_indexes [8, 16, 24];
 * - audio_config (Qwen3OmniMoeAudioEncoderConfig): Qwen2.5-Omni's numbers, and
 *   downsample_hidden_size 480 (the Conv2d stem's channels).
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "loader/config_int.h"
#include "loader/loader.h"

bool config_is_qwen2_5_omni(json_t *root)
{
	const char *mt = json_string_value(json_object_get(root, "model_type"));
	return mt != NULL && strcmp(mt, "qwen2_5_omni") == 0;
}

bool config_is_qwen3_omni(json_t *root)
{
	const char *mt = json_string_value(json_object_get(root, "model_type"));
	return mt != NULL && strcmp(mt, "qwen3_omni_moe") == 0;
}

bool config_is_omni(json_t *root)
{
	return config_is_qwen2_5_omni(root) || config_is_qwen3_omni(root);
}

/* o's sub-object key of the view (a new empty one when absent or null); NULL with err set
 * when it is something else, or out of memory. Borrowed from o. */
static json_t *sub_object(json_t *o, const char *key, const char *in, wt_errbuf *err)
{
	json_t *s = json_object_get(o, key);
	if (s != NULL && !json_is_null(s)) {
		if (!json_is_object(s))
			wt_seterr(err, WT_ECORRUPT, "config.json: '%s%s' is not an object", in,
			          key);
		return json_is_object(s) ? s : NULL;
	}
	if (json_object_set_new(o, key, json_object()) != 0) {
		wt_seterr(err, WT_ENOMEM, "config.json: out of memory");
		return NULL;
	}
	return json_object_get(o, key);
}

typedef struct {
	const char *key;
	int64_t v;
} omni_int_default;

/* Qwen2_5OmniVisionEncoderConfig's */
static const omni_int_default vision2_5[] = {
    {"depth", 32},
    {"hidden_size", 3584},
    {"intermediate_size", 3420},
    {"num_heads", 16},
    {"in_channels", 3},
    {"patch_size", 14},
    {"spatial_merge_size", 2},
    {"temporal_patch_size", 2},
    {"out_hidden_size", 3584},
};

/* Qwen3OmniMoeVisionEncoderConfig's (deepstack_visual_indexes in vision_defaults) */
static const omni_int_default vision3[] = {
    {"depth", 27},
    {"hidden_size", 1152},
    {"intermediate_size", 4304},
    {"num_heads", 16},
    {"in_channels", 3},
    {"patch_size", 16},
    {"spatial_merge_size", 2},
    {"temporal_patch_size", 2},
    {"out_hidden_size", 3584},
    {"num_position_embeddings", 2304},
};

/* The vision config class's defaults into v where a key is absent or null. */
static int vision_defaults(json_t *v, bool q3, wt_errbuf *err)
{
	const omni_int_default *d = q3 ? vision3 : vision2_5;
	size_t n =
	    q3 ? sizeof(vision3) / sizeof(vision3[0]) : sizeof(vision2_5) / sizeof(vision2_5[0]);
	json_t *ds = json_object_get(v, "deepstack_visual_indexes");
	if (q3 && (ds == NULL || json_is_null(ds)) &&
	    json_object_set_new(v, "deepstack_visual_indexes", json_pack("[i,i,i]", 8, 16, 24)) !=
	        0)
		return wt_seterr(err, WT_ENOMEM, "config.json: out of memory");
	for (size_t i = 0; i < n; i++) {
		json_t *cur = json_object_get(v, d[i].key);
		if ((cur == NULL || json_is_null(cur)) &&
		    json_object_set_new(v, d[i].key, json_integer((json_int_t)d[i].v)) != 0)
			return wt_seterr(err, WT_ENOMEM, "config.json: out of memory");
	}
	return WT_OK;
}

/* text_config's rope_scaling: Qwen2_5OmniTextConfig's {mrope_section [16, 24, 24]} where it is
 * absent or null; Qwen3-Omni's mrope_section [24, 20, 20] in one without it. */
static int text_defaults(json_t *t, bool q3, wt_errbuf *err)
{
	json_t *r = json_object_get(t, "rope_scaling");
	if (q3 && json_is_object(r) && json_object_get(r, "mrope_section") == NULL &&
	    json_object_set_new(r, "mrope_section", json_pack("[i,i,i]", 24, 20, 20)) != 0)
		return wt_seterr(err, WT_ENOMEM, "config.json: out of memory");
	json_t *nt = json_object_get(t, "norm_topk_prob"); /* Qwen3OmniMoeTextConfig's true */
	if (q3 && (nt == NULL || json_is_null(nt)) &&
	    json_object_set_new(t, "norm_topk_prob", json_true()) != 0)
		return wt_seterr(err, WT_ENOMEM, "config.json: out of memory");
	if (q3 || (r != NULL && !json_is_null(r)))
		return WT_OK;
	json_t *m = json_pack("{s:[i,i,i],s:s,s:s}", "mrope_section", 16, 24, 24, "rope_type",
	                      "default", "type", "default");
	if (m == NULL || json_object_set_new(t, "rope_scaling", m) != 0)
		return wt_seterr(err, WT_ENOMEM, "config.json: out of memory");
	return WT_OK;
}

int config_omni_root(json_t *root, json_t **out, wt_errbuf *err)
{
	json_t *tk = json_object_get(root, "thinker_config");
	if (tk != NULL && !json_is_null(tk) && !json_is_object(tk))
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: 'thinker_config' is not an object");
	json_t *v = json_is_object(tk) ? json_deep_copy(tk) : json_object();
	static const char *const top[] = {"architectures", "model_type", "quantization_config"};
	int rv = v != NULL ? WT_OK : wt_seterr(err, WT_ENOMEM, "config.json: out of memory");
	for (size_t i = 0; rv == WT_OK && i < sizeof(top) / sizeof(top[0]); i++) {
		json_t *x = json_object_get(root, top[i]);
		if (x != NULL && json_object_set(v, top[i], x) != 0)
			rv = wt_seterr(err, WT_ENOMEM, "config.json: out of memory");
	}
	json_t *t = NULL, *vis = NULL;
	if (rv == WT_OK && (t = sub_object(v, "text_config", "thinker_config.", err)) == NULL)
		rv = err ? err->code : WT_ECORRUPT;
	if (rv == WT_OK && (vis = sub_object(v, "vision_config", "thinker_config.", err)) == NULL)
		rv = err ? err->code : WT_ECORRUPT;
	bool q3 = config_is_qwen3_omni(root);
	if (rv == WT_OK)
		rv = text_defaults(t, q3, err);
	if (rv == WT_OK)
		rv = vision_defaults(vis, q3, err);
	if (rv != WT_OK) {
		json_decref(v);
		return rv;
	}
	*out = v;
	return WT_OK;
}

int config_parse_omni_audio(json_t *root, ckpt_config *c, wt_errbuf *err)
{
	json_t *a = json_object_get(root, "audio_config");
	if (a != NULL && !json_is_null(a) && !json_is_object(a))
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: 'thinker_config.audio_config' is not an object");
	c->has_audio = true;
	static const config_int_key keys[] = {
	    {"num_mel_bins", 128, offsetof(ckpt_config, a_mel)},
	    {"encoder_layers", 32, offsetof(ckpt_config, a_layers)},
	    {"encoder_attention_heads", 20, offsetof(ckpt_config, a_heads)},
	    {"encoder_ffn_dim", 5120, offsetof(ckpt_config, a_ffn)},
	    {"d_model", 1280, offsetof(ckpt_config, a_d_model)},
	    {"max_source_positions", 1500, offsetof(ckpt_config, a_max_pos)},
	    {"output_dim", 3584, offsetof(ckpt_config, a_out_dim)},
	    /* Qwen3OmniMoeAudioEncoderConfig's only (read for qwen3_omni_moe alone) */
	    {"downsample_hidden_size", 480, offsetof(ckpt_config, a_dsh)},
	};
	size_t n = CONFIG_NKEYS(keys) - (config_is_qwen3_omni(root) ? 0 : 1);
	return config_read_ints(json_is_object(a) ? a : NULL, "thinker_config.audio_config", keys,
	                        n, c, err);
}
