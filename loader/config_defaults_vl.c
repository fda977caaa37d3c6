/*
 * config_defaults_vl.c — Qwen2-VL's and Qwen2.5-VL's config classes' defaults
 * (transformers 4.57.1's Qwen2VLConfig / Qwen2_5_VLConfig), for the models the qwen2_vl and
 * qwen2_5_vl families serve: Qwen2VLForConditionalGeneration, Qwen2_5_VLForConditionalGeneration,
 * JinaVLForRanking (jina-reranker-m0: model_type qwen2_vl) and Tarsier2 (its text_config is a
 * Qwen2-VL config, read flat: config_tarsier2.c).
 *
 *   key (language model)       Qwen2VLTextConfig = Qwen2_5_VLTextConfig
 *   vocab_size                 152064
 *   hidden_size                8192
 *   intermediate_size          29568
 *   num_hidden_layers          80
 *   num_attention_heads        64
 *   num_key_value_heads        8 (an explicit null: num_attention_heads, config_qwen2_vl_keys)
 *   max_position_embeddings    32768
 *   rms_norm_eps               1e-5
 *   rope_theta                 1000000.0
 *   tie_word_embeddings        false: the family's tie_default (tie_given stays false)
 *   use_sliding_window false, sliding_window None, max_window_layers 80: no window (the
 *   loader and the reference read none for these families)
 *
 * A flat config.json (transformers < 4.52) is the text config itself (Qwen2VLConfig builds
 * Qwen2VLTextConfig of its kwargs); a nested one (>= 4.52) carries text_config, laid over the
 * top level (config_view.c). Either way config_lm_view fills these under the top level's
 * model_type (qwen2_vl / qwen2_5_vl); the *_text names are the nested text_config's own.
 *
 *   key (vision_config)        Qwen2VLVisionConfig     Qwen2_5_VLVisionConfig
 *   depth                      32                      32
 *   embed_dim                  1280                    -
 *   hidden_size                3584 (merger output)    3584 (the tower's width)
 *   intermediate_size          -                       3420
 *   num_heads                  16                      16
 *   out_hidden_size            -                       3584
 *   mlp_ratio, patch_size, temporal_patch_size, spatial_merge_size, in_channels: 4, 14, 2, 2, 3,
 *   the loader's own defaults (config_vision.c) for both
 *
 * vision_config absent or null is the class's whole default (Qwen2VLConfig builds it so).
 * OpenCUA's (model_type opencua: vLLM's OpenCUAConfig builds Qwen2_5_VLVisionConfig of its
 * vision_config, the class's whole default when absent) takes Qwen2.5-VL's vision defaults.
 *
 * Kimi-VL's text_config (class "kimi_vl:deepseek_v2": vLLM's KimiVLConfig builds
 * DeepseekV2Config(**text_config), transformers 4.57.1's defaults): vocab_size 32000,
 * hidden_size 4096, intermediate_size 11008, num_hidden_layers 32, num_attention_heads 32,
 * max_position_embeddings 2048, rms_norm_eps 1e-6, rope_theta 10000, moe_intermediate_size
 * 1407, first_k_dense_replace 0, routed_scaling_factor 1.0, untied; q_lora_rank 1536,
 * kv_lora_rank 512, qk_nope_head_dim 128, qk_rope_head_dim 64, v_head_dim 128,
 * n_routed_experts 64 and n_shared_experts 2 only when absent (a null there is the class's
 * None, kept: config_kimi_vl_text_keys; the planner refuses a null MLA size).
 */
#include <stddef.h>
#include <string.h>

#include "loader/config_int.h"
#include "loader/loader.h"

static const class_default qwen2_vl_text_defaults[] = {
    {"vocab_size", false, 152064},
    {"hidden_size", false, 8192},
    {"intermediate_size", false, 29568},
    {"num_hidden_layers", false, 80},
    {"num_attention_heads", false, 64},
    {"num_key_value_heads", false, 8},
    {"max_position_embeddings", false, 32768},
    {"rms_norm_eps", true, 1e-5},
    {"rope_theta", true, 1000000.0},
};

static const class_default qwen2_vl_vision_defaults[] = {
    {"depth", false, 32},
    {"embed_dim", false, 1280},
    {"hidden_size", false, 3584},
    {"num_heads", false, 16},
};

static const class_default qwen2_5_vl_vision_defaults[] = {
    {"depth", false, 32},     {"hidden_size", false, 3584},     {"intermediate_size", false, 3420},
    {"num_heads", false, 16}, {"out_hidden_size", false, 3584},
};

static const class_default kimi_vl_text_defaults[] = {
    {"vocab_size", false, 32000},           {"hidden_size", false, 4096},
    {"intermediate_size", false, 11008},    {"num_hidden_layers", false, 32},
    {"num_attention_heads", false, 32},     {"max_position_embeddings", false, 2048},
    {"rms_norm_eps", true, 1e-6},           {"rope_theta", true, 10000.0},
    {"moe_intermediate_size", false, 1407}, {"first_k_dense_replace", false, 0},
    {"routed_scaling_factor", true, 1.0},   {"tie_word_embeddings", false, 0, true},
};

#define CLASS(mt, tab)                                                                             \
	{                                                                                          \
		mt, tab, sizeof(tab) / sizeof(tab[0])                                              \
	}

static const struct {
	const char *model_type;
	const class_default *defaults;
	size_t n;
} classes[] = {
    CLASS("qwen2_vl", qwen2_vl_text_defaults),
    CLASS("qwen2_vl_text", qwen2_vl_text_defaults),
    CLASS("qwen2_5_vl", qwen2_vl_text_defaults),
    CLASS("qwen2_5_vl_text", qwen2_vl_text_defaults),
    CLASS("kimi_vl:deepseek_v2", kimi_vl_text_defaults),
};

const class_default *config_class_defaults_vl(const char *mt, size_t *n)
{
	for (size_t i = 0; i < sizeof(classes) / sizeof(classes[0]); i++)
		if (strcmp(mt, classes[i].model_type) == 0) {
			*n = classes[i].n;
			return classes[i].defaults;
		}
	return NULL;
}

/* Qwen2VLTextConfig: num_key_value_heads None (an explicit null) becomes num_attention_heads
 * (the class's 64 when that is absent too), not the class default 8. */
int config_qwen2_vl_keys(json_t *v, wt_errbuf *err)
{
	json_t *kv = json_object_get(v, "num_key_value_heads");
	if (kv == NULL || !json_is_null(kv))
		return WT_OK;
	json_t *h = json_object_get(v, "num_attention_heads");
	json_t *x = h != NULL && !json_is_null(h) ? json_incref(h) : json_integer(64);
	if (x == NULL || json_object_set_new(v, "num_key_value_heads", x) != 0)
		return wt_seterr(err, WT_ENOMEM, "config.json: out of memory");
	return WT_OK;
}

int config_qwen2_vl_vision(json_t *root, json_t **out, wt_errbuf *err)
{
	*out = NULL;
	const char *mt = json_string_value(json_object_get(root, "model_type"));
	const class_default *d = NULL;
	size_t n = 0;
	if (mt != NULL && strcmp(mt, "qwen2_vl") == 0) {
		d = qwen2_vl_vision_defaults;
		n = sizeof(qwen2_vl_vision_defaults) / sizeof(qwen2_vl_vision_defaults[0]);
	} else if (mt != NULL && (strcmp(mt, "qwen2_5_vl") == 0 || strcmp(mt, "opencua") == 0 ||
	                          strcmp(mt, "vlm") == 0)) {
		d = qwen2_5_vl_vision_defaults;
		n = sizeof(qwen2_5_vl_vision_defaults) / sizeof(qwen2_5_vl_vision_defaults[0]);
	}
	json_t *v = json_object_get(root, "vision_config");
	if (d == NULL || (v != NULL && !json_is_null(v) && !json_is_object(v)))
		return WT_OK; /* not these classes; not an object: config_parse_vision says so */
	json_t *o = json_is_object(v) ? json_deep_copy(v) : json_object();
	for (size_t i = 0; o != NULL && i < n; i++) {
		json_t *cur = json_object_get(o, d[i].key);
		if (cur != NULL && !json_is_null(cur))
			continue;
		if (json_object_set_new(o, d[i].key, json_integer((json_int_t)d[i].v)) != 0) {
			json_decref(o);
			o = NULL;
		}
	}
	if (o == NULL)
		return wt_seterr(err, WT_ENOMEM, "config.json: out of memory");
	*out = o;
	return WT_OK;
}
