/*
 * config_chatglm.c — ChatGLM's config keys (model_type chatglm, ChatGLMModel /
 * ChatGLMForConditionalGeneration: THUDM/glm-4-9b-chat, chatglm3-6b), read as vLLM's
 * chatglm.py reads them (its ChatGLMConfig, vllm/transformers_utils/configs/chatglm.py, the
 * remote configuration_chatglm.py's keys and defaults).
 *
 * ChatGLMConfig names its dims num_layers, padded_vocab_size, ffn_hidden_size, kv_channels,
 * seq_length, layernorm_epsilon, multi_query_group_num (the kv heads when
 * multi_query_attention, else num_attention_heads), rope_ratio (vLLM's RoPE base is
 * 10000 * rope_ratio) and add_qkv_bias. In the language-model view of a model_type chatglm
 * config they are laid over the keys every family reads (num_hidden_layers, vocab_size,
 * intermediate_size, head_dim, max_position_embeddings, rms_norm_eps, num_key_value_heads,
 * rope_theta, attention_bias), any key of those names dropped first (vLLM reads ChatGLM's),
 * before the class defaults (config_defaults_classic.c) fill what is absent.
 *
 *   key              ChatGLMConfig   here
 *   vision_config    (GLM-4V)        refused unless architectures[0] is GLM4VForCausalLM
 *                                    (vLLM's ChatGLMForCausalLM raises on it and asks for
 *                                    that override; config_glm4v_old.c reads it), which
 *                                    needs it
 *   add_bias_linear  false           true refused: no release has the dense / MLP biases,
 *                                    and these shards do not serve them
 *   rmsnorm          true            false refused (LayerNorms with biases: no release)
 *   post_layer_norm  true            false refused (no final_layernorm: no release)
 *   original_rope    (none)          must be given: vLLM reads config.original_rope
 *                                    (true: GLM's interleaved pairs, false: rotate-half)
 *
 * kv_channels other than hidden_size / num_attention_heads is the planner's refusal
 * (family_chatglm.c); apply_residual_connection_post_layernorm is the math's (the reference
 * refuses true), not the cut's.
 */
#include <stdbool.h>
#include <string.h>

#include "loader/config_int.h"

static int refusals(json_t *v, wt_errbuf *err)
{
	json_t *vis = json_object_get(v, "vision_config");
	bool has_vis = vis != NULL && !json_is_null(vis);
	if (config_is_glm4v_old(v) && !json_is_object(vis))
		return wt_seterr(
		    err, WT_ECORRUPT,
		    "config.json: architectures GLM4VForCausalLM needs a vision_config "
		    "object (EVA2CLIP's keys); vLLM's glm4v.py builds its tower of it: "
		    "give THUDM/glm-4v-9b's vision_config, or name ChatGLMModel for "
		    "the text-only model");
	if (has_vis && !config_is_glm4v_old(v))
		return wt_seterr(
		    err, WT_EUNSUPPORTED,
		    "config.json: vision_config is set (GLM-4V) but architectures "
		    "does not name GLM4VForCausalLM; vLLM's chatglm.py refuses it (the "
		    "text-only ChatGLMForCausalLM, which asks for --hf-overrides "
		    "'{\"architectures\": [\"GLM4VForCausalLM\"]}'): give "
		    "\"architectures\": [\"GLM4VForCausalLM\"] (or the configuration "
		    "override: weightctl --architecture GLM4VForCausalLM, weightd's "
		    "model_override), or remove the vision tower");
	int rv =
	    config_refuse_bool(v, "add_bias_linear", false, true,
	                       "no ChatGLM / GLM-4 release has the dense / MLP biases and these "
	                       "shards do not serve them: give \"add_bias_linear\": false",
	                       err);
	if (rv == WT_OK)
		rv = config_refuse_bool(
		    v, "rmsnorm", true, false,
		    "its LayerNorms (with biases) are not served here, only RMSNorm: "
		    "give \"rmsnorm\": true",
		    err);
	if (rv == WT_OK)
		rv = config_refuse_bool(
		    v, "post_layer_norm", true, false,
		    "a model without transformer.encoder.final_layernorm is not served "
		    "here: give \"post_layer_norm\": true",
		    err);
	json_t *orig = json_object_get(v, "original_rope");
	if (rv == WT_OK && (orig == NULL || json_is_null(orig)))
		return wt_seterr(
		    err, WT_EUNSUPPORTED,
		    "config.json: original_rope is absent; vLLM's chatglm.py reads it "
		    "(ChatGLMConfig has no default): give \"original_rope\": true (GLM's "
		    "interleaved rotary, every release)");
	if (rv == WT_OK && !json_is_boolean(orig))
		return wt_seterr(err, WT_ECORRUPT, "config.json: 'original_rope' is not a boolean");
	return rv;
}

static int set_int(json_t *v, const char *key, json_t *x, wt_errbuf *err)
{
	if (json_object_set(v, key, x) != 0)
		return wt_seterr(err, WT_ENOMEM, "config.json: out of memory");
	return WT_OK;
}

/* num_key_value_heads: multi_query_group_num (default 1) under multi_query_attention, else
 * absent (num_attention_heads); rope_theta: 10000 * rope_ratio (default 1). */
static int kv_and_rope(json_t *v, wt_errbuf *err)
{
	bool mqa = false;
	int rv = config_get_bool(v, "multi_query_attention", false, &mqa, err);
	json_t *g = json_object_get(v, "multi_query_group_num");
	json_object_del(v, "num_key_value_heads");
	if (rv == WT_OK && mqa && g != NULL && !json_is_null(g))
		rv = set_int(v, "num_key_value_heads", g, err);
	else if (rv == WT_OK && mqa &&
	         json_object_set_new(v, "num_key_value_heads", json_integer(1)) != 0)
		rv = wt_seterr(err, WT_ENOMEM, "config.json: out of memory");
	double ratio = 1.0;
	if (rv == WT_OK)
		rv = config_get_pos_real(v, "rope_ratio", 1.0, &ratio, err);
	json_object_del(v, "rope_theta");
	if (rv == WT_OK && json_object_set_new(v, "rope_theta", json_real(10000.0 * ratio)) != 0)
		rv = wt_seterr(err, WT_ENOMEM, "config.json: out of memory");
	return rv;
}

int config_chatglm_keys(json_t *v, wt_errbuf *err)
{
	static const char *const keys[][2] = {
	    {"num_layers", "num_hidden_layers"},       {"padded_vocab_size", "vocab_size"},
	    {"ffn_hidden_size", "intermediate_size"},  {"kv_channels", "head_dim"},
	    {"seq_length", "max_position_embeddings"}, {"layernorm_epsilon", "rms_norm_eps"},
	    {"add_qkv_bias", "attention_bias"}};
	int rv = refusals(v, err);
	for (size_t i = 0; rv == WT_OK && i < sizeof(keys) / sizeof(keys[0]); i++) {
		json_t *x = json_object_get(v, keys[i][0]);
		json_object_del(v, keys[i][1]);
		if (x != NULL && !json_is_null(x))
			rv = set_int(v, keys[i][1], x, err);
	}
	if (rv == WT_OK)
		rv = kv_and_rope(v, err);
	return rv;
}
