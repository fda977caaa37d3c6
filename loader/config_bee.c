/*
 * config_bee.c — Bee's config keys (model_type bee: BeeConfig, the remote configuration_bee.py
 * of Open-Bee/Bee-8B-RL / -SFT, which neither transformers 4.57.1 nor vLLM ships): read as
 * LLaVA-OneVision's (config_parse_llava_onevision: vision_feature_layer,
 * vision_config.model_type, vision_config.vision_use_head, text_config.model_type), vLLM's
 * BeeForConditionalGeneration being LlavaOnevisionForConditionalGeneration with its own
 * projector. The remote class's defaults are not stored here, so none is assumed: the three
 * keys vLLM's model reads (text_config.model_type, which picks the language model,
 * vision_config.model_type, which picks the tower, and vision_feature_layer, which sets its
 * depth) must be in config.json, as save_pretrained writes them in the releases. The
 * text_config view takes Qwen3Config's defaults (config_view.c) and decides the tie alone.
 */
#include <string.h>

#include "loader/config_int.h"
#include "loader/loader.h"

bool config_is_bee(json_t *root)
{
	const char *mt = json_string_value(json_object_get(root, "model_type"));
	return mt != NULL && strcmp(mt, "bee") == 0;
}

int config_parse_bee(json_t *root, json_t *v, ckpt_config *c, wt_errbuf *err)
{
	json_t *tc = json_object_get(root, "text_config");
	if (json_is_object(tc) && !json_is_string(json_object_get(tc, "model_type")))
		return wt_seterr(
		    err, WT_ECORRUPT,
		    "config.json: text_config.model_type is missing: the remote BeeConfig "
		    "builds text_config by it and its default is not assumed here; set it "
		    "as the release's config.json does (Bee-8B's: qwen3)");
	if (json_is_object(v) && !json_is_string(json_object_get(v, "model_type")))
		return wt_seterr(
		    err, WT_ECORRUPT,
		    "config.json: vision_config.model_type is missing: the remote "
		    "BeeConfig builds vision_config by it and its default is not assumed "
		    "here; set it as the release's config.json does (Bee-8B's: "
		    "siglip_vision_model)");
	json_t *fl = json_object_get(root, "vision_feature_layer");
	if (fl == NULL || json_is_null(fl))
		return wt_seterr(
		    err, WT_ECORRUPT,
		    "config.json: vision_feature_layer is missing: vLLM builds the "
		    "vision tower up to it and the remote BeeConfig's default is not "
		    "assumed here; set it as the release's config.json does (Bee-8B's: -1)");
	return config_parse_llava_onevision(root, v, c, err);
}
