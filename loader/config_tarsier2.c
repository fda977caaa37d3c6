/*
 * config_tarsier2.c — Tarsier2's config.json (Tarsier2ForConditionalGeneration:
 * omni-research/Tarsier2-Recap-7b, Tarsier2-7b-0115). The release is a LLaVA config
 * (model_type llava) whose text_config is a whole Qwen2-VL config (model_type qwen2_vl, its
 * own vision_config, rope_scaling with mrope_section). vLLM's Tarsier2ForConditionalGeneration
 * (qwen2_vl.py) replaces the model's hf_config with that text_config, setting its
 * architectures to the top level's, and builds Qwen2VLForConditionalGeneration of it: the top
 * level's other keys (LlavaConfig's vision_config, tie, ids) are not read. So the loader reads
 * the model from a flat view (config_tarsier2_root): text_config's keys, with the top level's
 * architectures and, where the top level has one, its quantization_config (vLLM builds the
 * quantization config from the top level before the model replaces it).
 *
 * text_config absent, not an object, or of another model_type than qwen2_vl is refused naming
 * the key: without it LlavaConfig builds a LlamaConfig, which has no vision_config for
 * Qwen2-VL's tower (vLLM's __init__ fails); a Qwen2.5-VL one would build Qwen2-VL's tower of
 * the wrong config.
 */
#include <stdbool.h>
#include <string.h>

#include "loader/config_int.h"
#include "loader/loader.h"

bool config_is_tarsier2(json_t *root)
{
	const char *a =
	    json_string_value(json_array_get(json_object_get(root, "architectures"), 0));
	return a != NULL && strcmp(a, "Tarsier2ForConditionalGeneration") == 0;
}

int config_tarsier2_root(json_t *root, json_t **out, wt_errbuf *err)
{
	json_t *tc = json_object_get(root, "text_config");
	if (tc == NULL || json_is_null(tc))
		return wt_seterr(
		    err, WT_ENOTFOUND,
		    "config.json: 'text_config' is missing: vLLM's "
		    "Tarsier2ForConditionalGeneration builds Qwen2-VL of it; put the "
		    "Qwen2-VL config (model_type qwen2_vl, with its vision_config) there "
		    "as the release does");
	if (!json_is_object(tc))
		return wt_seterr(err, WT_ECORRUPT, "config.json: 'text_config' is not an object");
	const char *mt = json_string_value(json_object_get(tc, "model_type"));
	if (mt == NULL || strcmp(mt, "qwen2_vl") != 0)
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "config.json: text_config.model_type '%s': vLLM's "
		                 "Tarsier2ForConditionalGeneration builds Qwen2-VL of text_config, "
		                 "which must be a Qwen2-VL config (model_type qwen2_vl)",
		                 mt != NULL ? mt : "(none)");
	json_t *v = json_deep_copy(tc);
	if (v == NULL)
		return wt_seterr(err, WT_ENOMEM, "config.json: out of memory");
	static const char *const top[] = {"architectures", "quantization_config"};
	for (size_t i = 0; i < sizeof(top) / sizeof(top[0]); i++) {
		json_t *x = json_object_get(root, top[i]);
		if (x != NULL && json_object_set(v, top[i], x) != 0) {
			json_decref(v);
			return wt_seterr(err, WT_ENOMEM, "config.json: out of memory");
		}
	}
	*out = v;
	return WT_OK;
}

int config_flat_root(json_t *root, json_t **out, wt_errbuf *err)
{
	*out = NULL;
	if (config_is_omni(root))
		return config_omni_root(root, out, err);
	if (config_is_tarsier2(root))
		return config_tarsier2_root(root, out, err);
	if (config_is_internvl_chat(root)) /* llm_config as text_config */
		return config_internvl_chat_root(root, out, err);
	if (config_is_ovis(root) || config_is_ovis2_5(root)) /* llm_config as text_config */
		return config_ovis_root(root, out, err);
	if (config_is_deepseek_vl2(root) || config_is_deepseek_ocr(root)) /* language_config */
		return config_deepseek_vl2_root(root, out, err);
	if (config_is_minicpmv(root)) /* its own keys as text_config, the version's class */
		return config_minicpmv_root(root, out, err);
	if (config_is_bagel(root)) /* llm_config / vit_config as text_config / vision_config */
		return config_bagel_root(root, out, err);
	if (config_is_ernie45vl(root)) /* the [text, vision] MoE lists as their text entries */
		return config_ernie45vl_root(root, out, err);
	return WT_OK;
}
