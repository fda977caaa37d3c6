/*
 * config_audioflamingo3.c — Audio Flamingo 3's config keys (model_type audioflamingo3:
 * AudioFlamingo3Config, transformers' configuration_audioflamingo3.py; transformers 4.57.1
 * has no such class): text_config.model_type (qwen2 when it has none; "" without a
 * text_config object), projector_bias (true when absent, into mm_projector_bias) and
 * audio_config, the Qwen2-Audio-style encoder's (AudioFlamingo3EncoderConfig: num_mel_bins
 * 128, num_hidden_layers 32, num_attention_heads 20, intermediate_size 5120, hidden_size
 * 1280, max_source_positions 1500; the whole object when audio_config is absent or null, as
 * AudioFlamingo3Config builds it), into the Qwen2-Audio fields. The released config.json
 * (convert_audioflamingo3_to_hf.py) writes the canonical names; the class's attribute_map
 * also takes d_model, encoder_layers, encoder_attention_heads and encoder_ffn_dim, read
 * here when the canonical key is absent (both given with different values: refused).
 * Each size at least 1 (config_get_int).
 */
#include <jansson.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "loader/config_int.h"
#include "loader/loader.h"

bool config_is_audioflamingo3(json_t *root)
{
	const char *mt = json_string_value(json_object_get(root, "model_type"));
	return mt != NULL && strcmp(mt, "audioflamingo3") == 0;
}

/* The name of key k of a to read: its attribute_map alias when only that is given. */
static int af3_key(json_t *a, const char *canon, const char *alias, const char **out,
                   wt_errbuf *err)
{
	json_t *x = json_object_get(a, canon), *y = json_object_get(a, alias);
	*out = canon;
	if (y == NULL || json_is_null(y))
		return WT_OK;
	if (x == NULL || json_is_null(x)) {
		*out = alias;
		return WT_OK;
	}
	if (!json_equal(x, y))
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: audio_config gives both %s and %s (its alias in "
		                 "AudioFlamingo3EncoderConfig's attribute_map) with different "
		                 "values; keep %s alone",
		                 canon, alias, canon);
	return WT_OK;
}

int config_parse_audioflamingo3(json_t *root, ckpt_config *c, wt_errbuf *err)
{
	json_t *tc = json_object_get(root, "text_config");
	const char *tmt = json_string_value(json_object_get(tc, "model_type"));
	snprintf(c->lm_model_type, sizeof(c->lm_model_type), "%s",
	         !json_is_object(tc) ? ""
	         : tmt != NULL       ? tmt
	                             : "qwen2");
	int rv = config_get_bool(root, "projector_bias", true, &c->mm_projector_bias, err);
	if (rv != WT_OK)
		return rv;
	json_t *a = json_object_get(root, "audio_config");
	if (a != NULL && !json_is_null(a) && !json_is_object(a))
		return wt_seterr(err, WT_ECORRUPT, "config.json: 'audio_config' is not an object");
	json_t *src = json_is_object(a) ? a : NULL;
	const char *amt = json_string_value(json_object_get(src, "model_type"));
	if (amt != NULL && strcmp(amt, "audioflamingo3_encoder") != 0)
		return wt_seterr(
		    err, WT_EUNSUPPORTED,
		    "config.json: audio_config.model_type '%s': Audio Flamingo 3's "
		    "encoder is AudioFlamingo3EncoderConfig's (audioflamingo3_encoder), "
		    "which vLLM's audioflamingo3.py builds as a Qwen2AudioEncoder; only "
		    "that one is supported",
		    amt);
	c->has_audio = true;
	config_int_key keys[] = {
	    {"num_mel_bins", 128, offsetof(ckpt_config, a_mel)},
	    {"num_hidden_layers", 32, offsetof(ckpt_config, a_layers)},
	    {"num_attention_heads", 20, offsetof(ckpt_config, a_heads)},
	    {"intermediate_size", 5120, offsetof(ckpt_config, a_ffn)},
	    {"hidden_size", 1280, offsetof(ckpt_config, a_d_model)},
	    {"max_source_positions", 1500, offsetof(ckpt_config, a_max_pos)},
	};
	static const char *const alias[][2] = {{"num_hidden_layers", "encoder_layers"},
	                                       {"num_attention_heads", "encoder_attention_heads"},
	                                       {"intermediate_size", "encoder_ffn_dim"},
	                                       {"hidden_size", "d_model"}};
	for (size_t i = 0; src != NULL && i < sizeof(alias) / sizeof(alias[0]); i++) {
		rv = af3_key(src, alias[i][0], alias[i][1], &keys[i + 1].key, err);
		if (rv != WT_OK)
			return rv;
	}
	return config_read_ints(src, "audio_config", keys, CONFIG_NKEYS(keys), c, err);
}
