/*
 * config_rvl.c — R-4B's config.json (RForConditionalGeneration: YannQi/R-4B, remote code). Its
 * configuration class is the remote configuration_r.py, which neither transformers 4.57.1 nor
 * vLLM ships; vLLM's rvl.py subclasses LlavaOnevisionForConditionalGeneration and reads the
 * same attributes LlavaOnevisionConfig has. So a config is R-4B's by its architecture
 * (architectures[0] RForConditionalGeneration, whatever model_type it gives), and its keys are
 * read as LLaVA-OneVision's (config_parse_llava_onevision: vision_feature_layer -1 when absent,
 * vision_config.model_type siglip_vision_model when absent, vision_use_head), except that
 * text_config must name its model_type (qwen3 in the release; the planner admits it alone):
 * without it the class the remote config builds is unknown here. The language model's keys take
 * Qwen3Config's defaults (config_view.c) and text_config's tie_word_embeddings alone ties (vLLM
 * builds Qwen3ForCausalLM of text_config).
 */
#include <stdbool.h>
#include <string.h>

#include "loader/config_int.h"
#include "loader/loader.h"

bool config_is_rvl(json_t *root)
{
	const char *a =
	    json_string_value(json_array_get(json_object_get(root, "architectures"), 0));
	return a != NULL && strcmp(a, "RForConditionalGeneration") == 0;
}

int config_parse_rvl(json_t *root, json_t *v, ckpt_config *c, wt_errbuf *err)
{
	json_t *tc = json_object_get(root, "text_config");
	if (json_is_object(tc) && !json_is_string(json_object_get(tc, "model_type")))
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: text_config.model_type is missing: "
		                 "RForConditionalGeneration's language model is the class it names "
		                 "(R-4B's: qwen3); give it");
	return config_parse_llava_onevision(root, v, c, err);
}
