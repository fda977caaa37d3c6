/*
 * config_granite_speech.c — Granite Speech's config keys (model_type granite_speech:
 * GraniteSpeechConfig, transformers 4.57.1): encoder_config, the CTC conformer's
 * (GraniteSpeechEncoderConfig's defaults when absent: input_dim 160, num_layers 10,
 * hidden_dim 1024, feedforward_mult 4, num_heads 8, dim_head 128, output_dim 42,
 * context_size 200, max_pos_emb 512, conv_kernel_size 15, conv_expansion_factor 2);
 * projector_config, the BLIP-2 Q-Former's (config_parse_qformer); the top level's
 * window_size 15 and downsample_rate 5; text_config.model_type (granite when it has none;
 * "" without a text_config object). Each size at least 1 (config_get_int).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "loader/config_int.h"
#include "loader/loader.h"

bool config_is_granite_speech(json_t *root)
{
	const char *mt = json_string_value(json_object_get(root, "model_type"));
	return mt != NULL && strcmp(mt, "granite_speech") == 0;
}

static const config_int_key enc_keys[] = {
    {"input_dim", 160, offsetof(ckpt_config, gs_in)},
    {"num_layers", 10, offsetof(ckpt_config, gs_layers)},
    {"hidden_dim", 1024, offsetof(ckpt_config, gs_hidden)},
    {"feedforward_mult", 4, offsetof(ckpt_config, gs_ff_mult)},
    {"num_heads", 8, offsetof(ckpt_config, gs_heads)},
    {"dim_head", 128, offsetof(ckpt_config, gs_dim_head)},
    {"output_dim", 42, offsetof(ckpt_config, gs_out)},
    {"context_size", 200, offsetof(ckpt_config, gs_ctx)},
    {"max_pos_emb", 512, offsetof(ckpt_config, gs_max_pos)},
    {"conv_kernel_size", 15, offsetof(ckpt_config, gs_kernel)},
    {"conv_expansion_factor", 2, offsetof(ckpt_config, gs_conv_exp)},
};

static const config_int_key top_keys[] = {
    {"window_size", 15, offsetof(ckpt_config, gs_window)},
    {"downsample_rate", 5, offsetof(ckpt_config, gs_downsample)},
};

int config_parse_granite_speech(json_t *root, ckpt_config *c, wt_errbuf *err)
{
	json_t *tc = json_object_get(root, "text_config");
	const char *tmt = json_string_value(json_object_get(tc, "model_type"));
	snprintf(c->lm_model_type, sizeof(c->lm_model_type), "%s",
	         !json_is_object(tc) ? ""
	         : tmt != NULL       ? tmt
	                             : "granite");
	int rv = config_read_ints(json_object_get(root, "encoder_config"), "encoder_config",
	                          enc_keys, CONFIG_NKEYS(enc_keys), c, err);
	if (rv == WT_OK)
		rv = config_parse_qformer(json_object_get(root, "projector_config"),
		                          "projector_config", c, err);
	if (rv == WT_OK)
		rv =
		    config_read_ints(root, "config.json", top_keys, CONFIG_NKEYS(top_keys), c, err);
	return rv;
}
