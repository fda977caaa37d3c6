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
	json_t *tc = json_object_get(root, "text_config");
	const char *tmt = json_string_value(json_object_get(tc, "model_type"));
	snprintf(c->lm_model_type, sizeof(c->lm_model_type), "%s",
	         !json_is_object(tc) ? ""
	         : tmt != NULL       ? tmt
	                             : "llama");
	json_t *a = json_object_get(root, "audio_config");
	if (a != NULL && !json_is_null(a) && !json_is_object(a))
		return wt_seterr(err, WT_ECORRUPT, "config.json: 'audio_config' is not an object");
	json_t *src = json_is_object(a) ? a : NULL;
	const char *amt = json_string_value(json_object_get(src, "model_type"));
	if (amt != NULL && strcmp(amt, "glmasr_encoder") != 0)
		return wt_seterr(
		    err, WT_EUNSUPPORTED,
		    "config.json: audio_config.model_type '%s': GLM-ASR's encoder is "
		    "GlmAsrEncoderConfig's (glmasr_encoder); only that one is supported",
		    amt);
	c->has_audio = true;
	static const config_int_key keys[] = {
	    {"num_mel_bins", 128, offsetof(ckpt_config, a_mel)},
	    {"num_hidden_layers", 32, offsetof(ckpt_config, a_layers)},
	    {"num_attention_heads", 20, offsetof(ckpt_config, a_heads)},
	    {"intermediate_size", 5120, offsetof(ckpt_config, a_ffn)},
	    {"hidden_size", 1280, offsetof(ckpt_config, a_d_model)},
	    {"max_position_embeddings", 1500, offsetof(ckpt_config, a_max_pos)},
	};
	int rv = config_read_ints(src, "audio_config", keys, CONFIG_NKEYS(keys), c, err);
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
