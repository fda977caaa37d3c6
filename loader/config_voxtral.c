/*
 * config_voxtral.c — Voxtral's config keys (model_type voxtral: VoxtralConfig, transformers
 * 4.57.1): audio_config, the Whisper encoder's (VoxtralEncoderConfig's defaults when absent:
 * num_mel_bins 128, num_hidden_layers 32, num_attention_heads 20, intermediate_size 5120,
 * hidden_size 1280, max_source_positions 1500; the whole object when audio_config is absent
 * or null, as VoxtralConfig builds it), into the Qwen2-Audio fields; text_config.model_type
 * (llama when it has none; "" without a text_config object). VoxtralEncoderConfig's
 * attribute_map names (d_model, encoder_layers, ...) are not read: its __init__ sets the
 * canonical names after PretrainedConfig's, so transformers loads the defaults over them.
 * Each size at least 1 (config_get_int).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "loader/config_int.h"
#include "loader/loader.h"

bool config_is_voxtral(json_t *root)
{
	const char *mt = json_string_value(json_object_get(root, "model_type"));
	return mt != NULL && strcmp(mt, "voxtral") == 0;
}

int config_whisper_like(json_t *root, ckpt_config *c, const char *model, const char *cls,
                        const char *type, const char *pos_key, json_t **src, wt_errbuf *err)
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
	*src = json_is_object(a) ? a : NULL;
	const char *amt = json_string_value(json_object_get(*src, "model_type"));
	if (amt != NULL && strcmp(amt, type) != 0)
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "config.json: audio_config.model_type '%s': %s's encoder is %s's "
		                 "(%s); only that one is supported",
		                 amt, model, cls, type);
	c->has_audio = true;
	const config_int_key keys[] = {
	    {"num_mel_bins", 128, offsetof(ckpt_config, a_mel)},
	    {"num_hidden_layers", 32, offsetof(ckpt_config, a_layers)},
	    {"num_attention_heads", 20, offsetof(ckpt_config, a_heads)},
	    {"intermediate_size", 5120, offsetof(ckpt_config, a_ffn)},
	    {"hidden_size", 1280, offsetof(ckpt_config, a_d_model)},
	    {pos_key, 1500, offsetof(ckpt_config, a_max_pos)},
	};
	return config_read_ints(*src, "audio_config", keys, CONFIG_NKEYS(keys), c, err);
}

int config_parse_voxtral(json_t *root, ckpt_config *c, wt_errbuf *err)
{
	json_t *src;
	return config_whisper_like(root, c, "Voxtral", "VoxtralEncoderConfig", "voxtral_encoder",
	                           "max_source_positions", &src, err);
}
