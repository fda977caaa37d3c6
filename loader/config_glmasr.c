/*
 * config_glmasr.c — GLM-ASR's config keys (model_type glmasr: GlmAsrConfig, transformers'
 * configuration_glmasr.py): audio_config, GlmAsrEncoderConfig's (its defaults when absent:
 * num_mel_bins 128, num_hidden_layers 32, num_attention_heads 20, intermediate_size 5120,
 * hidden_size 1280, max_position_embeddings 1500), into the Qwen2-Audio fields;
 * text_config.model_type (llama when it has none; "" without a text_config object).
 * num_key_value_heads other than num_attention_heads is refused: vLLM's encoder attention
 * would be a GQA QKVParallelLinear, which the Whisper-style rows do not cut.
 */
#include <inttypes.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "loader/config_int.h"
#include "loader/loader.h"

bool config_is_glmasr(json_t *root)
{
	const char *mt = json_string_value(json_object_get(root, "model_type"));
	return mt != NULL && strcmp(mt, "glmasr") == 0;
}

int config_parse_glmasr(json_t *root, ckpt_config *c, wt_errbuf *err)
{
	json_t *src;
	int rv = config_whisper_like(root, c, "GLM-ASR", "GlmAsrEncoderConfig", "glmasr_encoder",
	                             "max_position_embeddings", &src, err);
	if (rv != WT_OK)
		return rv;
	json_t *kv = json_object_get(src, "num_key_value_heads");
	if (kv != NULL && !json_is_null(kv) &&
	    (!json_is_integer(kv) || json_integer_value(kv) != c->a_heads))
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "config.json: audio_config.num_key_value_heads is not "
		                 "num_attention_heads %" PRId64
		                 ": a grouped-query GLM-ASR encoder is not supported (remove the "
		                 "key or set it to num_attention_heads)",
		                 c->a_heads);
	return WT_OK;
}
