/*
 * config_paddleocr_vl.c — PaddleOCR-VL's config.json (model_type paddleocr_vl:
 * PaddlePaddle/PaddleOCR-VL, remote code PaddleOCRVLConfig; transformers 5 ships a
 * PaddleOCRVLConfig of its own with a text_config that transformers 4.57.1 lacks).
 *
 * vLLM's paddleocr_vl.py builds Ernie4_5ForCausalLM (its LlamaForCausalLM) on the top-level
 * config, after copying a text_config's keys over it. The flat remote-code layout is read here
 * as every causal LM's (config.c), head_dim 128 by default (both config classes'; the
 * paddleocr_vl class-defaults row), vision_config by the generic SigLIP keys. The two classes
 * disagree on two top-level keys, so config.json must give them:
 *   tie_word_embeddings   remote false, transformers 5 true
 *   num_key_value_heads   remote None (vLLM's Llama then fails), transformers 5 2
 * A text_config (transformers 5's layout) is refused: this reader takes the LM keys from the
 * top level only.
 */
#include <string.h>

#include "loader/config_int.h"
#include "loader/loader.h"

bool config_is_paddleocr_vl(json_t *root)
{
	const char *mt = json_string_value(json_object_get(root, "model_type"));
	return mt != NULL && strcmp(mt, "paddleocr_vl") == 0;
}

int config_parse_paddleocr_vl(json_t *root, wt_errbuf *err)
{
	static const struct {
		const char *key, *why;
	} need[] = {
	    {"tie_word_embeddings", "the remote PaddleOCRVLConfig unties by default, transformers "
	                            "5's ties"},
	    {"num_key_value_heads", "the remote PaddleOCRVLConfig's default is None, which vLLM's "
	                            "Llama attention cannot build; PaddleOCR-VL's release gives 2"},
	};
	json_t *tc = json_object_get(root, "text_config");
	if (tc != NULL && !json_is_null(tc))
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "config.json: PaddleOCR-VL with a text_config (transformers 5's "
		                 "layout, whose keys vLLM copies over the top level): this reader "
		                 "takes the language model's keys from the top level; move them "
		                 "there (the remote-code layout) and drop text_config");
	for (size_t k = 0; k < sizeof(need) / sizeof(need[0]); k++) {
		json_t *v = json_object_get(root, need[k].key);
		if (v == NULL || json_is_null(v))
			return wt_seterr(err, WT_ECORRUPT,
			                 "config.json: PaddleOCR-VL needs %s (%s): give the "
			                 "release's value",
			                 need[k].key, need[k].why);
	}
	return WT_OK;
}
