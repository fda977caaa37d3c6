/*
 * config_audio.c — Qwen2-Audio's config keys (model_type qwen2_audio: Qwen2AudioConfig,
 * transformers 4.57.1): audio_config, the Whisper-style encoder's (Qwen2AudioEncoderConfig:
 * num_mel_bins 128, encoder_layers 32, encoder_attention_heads 20, encoder_ffn_dim 5120,
 * d_model 1280, max_source_positions 1500 when absent), and text_config.model_type (qwen2
 * when it has none; "" without a text_config object).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "loader/config_int.h"
#include "loader/loader.h"

bool config_is_qwen2_audio(json_t *root)
{
	const char *mt = json_string_value(json_object_get(root, "model_type"));
	return mt != NULL && strcmp(mt, "qwen2_audio") == 0;
}

int config_parse_audio(json_t *root, ckpt_config *c, wt_errbuf *err)
{
	if (config_is_granite_speech(root))
		return config_parse_granite_speech(root, c, err);
	if (config_is_voxtral(root))
		return config_parse_voxtral(root, c, err);
	if (config_is_glmasr(root))
		return config_parse_glmasr(root, c, err);
	if (config_is_audioflamingo3(root))
		return config_parse_audioflamingo3(root, c, err);
	if (config_is_ultravox(root))
		return config_parse_ultravox(root, c, err);
	if (config_is_whisper(root))
		return config_parse_whisper(root, c, err);
	if (config_is_omni(root))
		return config_parse_omni_audio(root, c, err);
	if (!config_is_qwen2_audio(root))
		return WT_OK;
	json_t *tc = json_object_get(root, "text_config");
	const char *tmt = json_string_value(json_object_get(tc, "model_type"));
	snprintf(c->lm_model_type, sizeof(c->lm_model_type), "%s",
	         !json_is_object(tc) ? ""
	         : tmt != NULL       ? tmt
	                             : "qwen2");
	json_t *a = json_object_get(root, "audio_config");
	if (a == NULL || json_is_null(a))
		return WT_OK;
	if (!json_is_object(a))
		return wt_seterr(err, WT_ECORRUPT, "config.json: 'audio_config' is not an object");
	c->has_audio = true;
	static const config_int_key keys[] = {
	    {"num_mel_bins", 128, offsetof(ckpt_config, a_mel)},
	    {"encoder_layers", 32, offsetof(ckpt_config, a_layers)},
	    {"encoder_attention_heads", 20, offsetof(ckpt_config, a_heads)},
	    {"encoder_ffn_dim", 5120, offsetof(ckpt_config, a_ffn)},
	    {"d_model", 1280, offsetof(ckpt_config, a_d_model)},
	    {"max_source_positions", 1500, offsetof(ckpt_config, a_max_pos)},
	};
	return config_read_ints(a, "audio_config", keys, CONFIG_NKEYS(keys), c, err);
}
