/*
 * config_internvl_chat.c — InternVL's chat-format config.json (model_type internvl_chat:
 * InternVLChatConfig and InternVisionConfig, the remote configuration_internvl_chat.py /
 * configuration_intern_vit.py of OpenGVLab/InternVL2-*, InternVL2_5-*, InternVL3-*; neither
 * transformers 4.57.1 nor vLLM ships them: keys and defaults read from OpenGVLab/InternVL's
 * internvl_chat/internvl/model/internvl_chat/ copies).
 *
 * The language model: InternVLChatConfig builds llm_config's class from
 * llm_config.architectures[0] (LlamaConfig, InternLM2Config, Qwen2Config, ...) and vLLM reads
 * llm_config as text_config and builds the registered model of that architecture. So the flat
 * view (config_internvl_chat_root) is config.json with text_config = llm_config, its model_type
 * the architecture's class (internlm2, qwen2, llama, qwen3, phi3): that class's defaults fill
 * the absent keys and the language model's own checks run (InternLM2's bias / hidden_act). Any
 * other architecture is refused naming llm_config.architectures (Qwen3MoeForCausalLM /
 * GptOssForCausalLM of InternVL3.5, InternLM2VEForCausalLM of Mono-InternVL, Gemma2ForCausalLM:
 * not cut here), as is an llm_config without one (InternVLChatConfig indexes it).
 *
 * The tower, vision_config (InternVisionConfig; absent: all defaults): hidden_size 3200,
 * intermediate_size 12800, num_hidden_layers 48, num_attention_heads 25, image_size 224,
 * patch_size 14, num_channels 3, qkv_bias false, qk_normalization true, norm_type rms_norm
 * (layer_norm or rms_norm: vLLM's NORM2FN has no other). The top level's select_layer (-1)
 * decides the blocks vLLM builds, num_hidden_layers + select_layer + 1 when negative,
 * select_layer + 1 otherwise (InternVLChatModel._init_vision_model): that count goes into
 * v_num_layers (a count outside [1, num_hidden_layers] refused naming select_layer), select_layer
 * into v_feature_layer; downsample_ratio (0.5) into v_spatial_merge_size as 1 / ratio (a ratio
 * not 1 / n refused: mlp1 is VE x int(1 / ratio)^2 wide).
 *
 * H2OVL (model_type h2ovl_chat, H2OVLChatConfig) and Skywork-R1V (skywork_chat,
 * SkyworkChatConfig) are read the same way: their remote configuration files (not read here)
 * are forks of InternVLChatConfig with the same keys, and vLLM's h2ovl.py / skyworkr1v.py read
 * the same ones. NVLM-D (model_type NVLM_D: vLLM's NVLM_D_Config is its InternVLChatConfig
 * with text_config a Qwen2Config of llm_config; nvidia/NVLM-D-72B's configuration_nvlm_d.py,
 * not read here, is a fork of InternVLChatConfig) too; the planner refuses a language model
 * other than Qwen2's there (family_internvl_chat.c nvlm_check).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "loader/config_int.h"
#include "loader/loader.h"

bool config_is_internvl_chat(json_t *root)
{
	const char *mt = json_string_value(json_object_get(root, "model_type"));
	return mt != NULL && (strcmp(mt, "internvl_chat") == 0 || strcmp(mt, "h2ovl_chat") == 0 ||
	                      strcmp(mt, "skywork_chat") == 0 || strcmp(mt, "NVLM_D") == 0);
}

/* llm_config.architectures[0] -> the config class vLLM's registered model reads it as. */
static const struct {
	const char *arch, *mt;
} ivc_lms[] = {
    {"InternLM2ForCausalLM", "internlm2"}, {"Qwen2ForCausalLM", "qwen2"},
    {"LlamaForCausalLM", "llama"},         {"Qwen3ForCausalLM", "qwen3"},
    {"Phi3ForCausalLM", "phi3"},
};

static int lm_class_of(json_t *llm, const char **mt, wt_errbuf *err)
{
	const char *a = json_string_value(json_array_get(json_object_get(llm, "architectures"), 0));
	if (a == NULL)
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: llm_config.architectures[0] is missing: "
		                 "InternVLChatConfig builds the language model's config of it and "
		                 "vLLM the model; give e.g. [\"Qwen2ForCausalLM\"]");
	for (size_t k = 0; k < sizeof(ivc_lms) / sizeof(ivc_lms[0]); k++)
		if (strcmp(a, ivc_lms[k].arch) == 0) {
			*mt = ivc_lms[k].mt;
			return WT_OK;
		}
	return wt_seterr(err, WT_EUNSUPPORTED,
	                 "config.json: llm_config.architectures[0] '%s': InternVLChatModel's "
	                 "language model is cut here only as InternLM2ForCausalLM, "
	                 "Qwen2ForCausalLM, LlamaForCausalLM, Qwen3ForCausalLM or Phi3ForCausalLM "
	                 "(the internlm2 / qwen2 / llama / qwen3 / phi3 families' tables)",
	                 a);
}

int config_internvl_chat_root(json_t *root, json_t **out, wt_errbuf *err)
{
	json_t *llm = json_object_get(root, "llm_config");
	if (llm == NULL || json_is_null(llm))
		return wt_seterr(
		    err, WT_ECORRUPT,
		    "config.json: llm_config is missing: InternVLChatConfig indexes "
		    "llm_config.architectures (the released config.json files hold the "
		    "whole language-model config there)");
	if (!json_is_object(llm))
		return wt_seterr(err, WT_ECORRUPT, "config.json: llm_config is not an object");
	const char *mt = NULL;
	int rv = lm_class_of(llm, &mt, err);
	if (rv != WT_OK)
		return rv;
	json_t *v = json_copy(root), *tc = json_deep_copy(llm);
	if (v == NULL || tc == NULL ||
	    json_object_set_new(tc, "model_type", json_string(mt)) != 0 ||
	    json_object_del(v, "llm_config") != 0 || json_object_set(v, "text_config", tc) != 0) {
		json_decref(v);
		json_decref(tc);
		return wt_seterr(err, WT_ENOMEM, "config.json: out of memory");
	}
	json_decref(tc);
	*out = v;
	return WT_OK;
}

/* InternVisionConfig's keys of v (an object) into c, its defaults for absent ones. */
static int parse_intern_vit(json_t *v, ckpt_config *c, wt_errbuf *err)
{
	static const config_int_key ints[] = {
	    {"hidden_size", 3200, offsetof(ckpt_config, v_hidden_size)},
	    {"intermediate_size", 12800, offsetof(ckpt_config, v_intermediate_size)},
	    {"num_hidden_layers", 48, offsetof(ckpt_config, v_num_layers)},
	    {"num_attention_heads", 25, offsetof(ckpt_config, v_num_attn_heads)},
	    {"image_size", 224, offsetof(ckpt_config, v_image_size)},
	    {"patch_size", 14, offsetof(ckpt_config, v_patch_size)},
	    {"num_channels", 3, offsetof(ckpt_config, v_in_chans)},
	};
	int rv = config_read_ints(v, "vision_config", ints, CONFIG_NKEYS(ints), c, err);
	if (rv == WT_OK)
		rv = config_get_bool(v, "qkv_bias", false, &c->v_attn_bias, err);
	if (rv == WT_OK)
		rv = config_get_bool(v, "qk_normalization", true, &c->v_qk_norm, err);
	if (rv != WT_OK) {
		if (err != NULL)
			wt_errprefix(err, "in vision_config");
		return rv;
	}
	c->v_patch_given = true;
	json_t *nt = json_object_get(v, "norm_type");
	const char *ns = nt == NULL || json_is_null(nt) ? "rms_norm" : json_string_value(nt);
	if (ns == NULL || (strcmp(ns, "layer_norm") != 0 && strcmp(ns, "rms_norm") != 0))
		return wt_seterr(
		    err, WT_EUNSUPPORTED,
		    "config.json: vision_config.norm_type is not 'rms_norm' or "
		    "'layer_norm' (the two norms vLLM's intern_vit.py builds); give one "
		    "of them");
	c->v_norm_ln = strcmp(ns, "layer_norm") == 0;
	return WT_OK;
}

/* select_layer -> the blocks vLLM builds; downsample_ratio -> the pixel shuffle's n. */
static int parse_ivc_top(json_t *root, ckpt_config *c, wt_errbuf *err)
{
	int64_t sl = -1, nl = c->v_num_layers;
	int rv = config_get_int(root, "select_layer", -1, -(int64_t)INT32_MAX, &sl, err);
	if (rv != WT_OK)
		return rv;
	int64_t built = sl < 0 ? nl + sl + 1 : sl + 1;
	if (built < 1 || built > nl)
		return wt_seterr(
		    err, WT_ECORRUPT,
		    "config.json: select_layer %lld is outside the tower's %lld blocks "
		    "(vision_config.num_hidden_layers): give an index in [%lld, %lld], "
		    "e.g. -1",
		    (long long)sl, (long long)nl, (long long)-nl, (long long)nl - 1);
	c->v_feature_layer = sl;
	c->v_num_layers = built;
	double ratio = 0.5;
	rv = config_get_pos_real(root, "downsample_ratio", 0.5, &ratio, err);
	if (rv != WT_OK)
		return rv;
	int64_t n = ratio <= 1.0 && ratio >= 1.0 / 64 ? (int64_t)(1.0 / ratio) : 0;
	if (n < 1 || n > 64 || (double)n * ratio != 1.0)
		return wt_seterr(
		    err, WT_EUNSUPPORTED,
		    "config.json: downsample_ratio %g is not 1 / n for a whole n up to "
		    "64 (mlp1 is vision_config.hidden_size x int(1 / downsample_ratio)^2 "
		    "wide; InternVL2's is 0.5)",
		    ratio);
	c->v_spatial_merge_size = n;
	return WT_OK;
}

int config_parse_internvl_chat(json_t *root, json_t *v, ckpt_config *c, wt_errbuf *err)
{
	json_t *tc = json_object_get(root, "text_config"); /* config_internvl_chat_root's */
	const char *tmt = json_string_value(json_object_get(tc, "model_type"));
	snprintf(c->lm_model_type, sizeof(c->lm_model_type), "%s", tmt != NULL ? tmt : "");
	if (v != NULL && !json_is_null(v) && !json_is_object(v))
		return wt_seterr(err, WT_ECORRUPT, "config.json: 'vision_config' is not an object");
	json_t *empty = json_object(); /* vision_config absent: InternVisionConfig's defaults */
	int rv = empty != NULL ? parse_intern_vit(json_is_object(v) ? v : empty, c, err)
	                       : wt_seterr(err, WT_ENOMEM, "config.json: out of memory");
	json_decref(empty);
	if (rv == WT_OK)
		rv = parse_ivc_top(root, c, err);
	if (rv == WT_OK && strcmp(c->lm_model_type, "internlm2") == 0) {
		rv = config_parse_internlm2(tc, c, err); /* bias false, hidden_act silu */
		if (rv != WT_OK && err != NULL)
			wt_errprefix(err, "in llm_config");
	}
	c->has_vision = rv == WT_OK;
	return rv;
}
