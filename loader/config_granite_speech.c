/*
 * config_granite_speech.c — Granite Speech's config keys (model_type granite_speech:
 * GraniteSpeechConfig, transformers 4.57.1): encoder_config, the CTC conformer's
 * (GraniteSpeechEncoderConfig's defaults when absent: input_dim 160, num_layers 10,
 * hidden_dim 1024, feedforward_mult 4, num_heads 8, dim_head 128, output_dim 42,
 * context_size 200, max_pos_emb 512, conv_kernel_size 15, conv_expansion_factor 2);
 * projector_config, the BLIP-2 Q-Former's (Blip2QFormerConfig's: hidden_size 768,
 * num_hidden_layers 12, num_attention_heads 12, intermediate_size 3072,
 * cross_attention_frequency 2, encoder_hidden_size 1408, use_qformer_text_input false,
 * position_embedding_type absolute, model_type blip_2_qformer); the top level's
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

typedef struct gs_key {
	const char *key;
	int64_t dflt;
	size_t off;
} gs_key;

/* keys of object o (NULL or null: every default) into c; prefix names o in errors */
static int read_keys(json_t *o, const char *prefix, const gs_key *k, size_t n, ckpt_config *c,
                     wt_errbuf *err)
{
	if (o != NULL && !json_is_null(o) && !json_is_object(o))
		return wt_seterr(err, WT_ECORRUPT, "config.json: '%s' is not an object", prefix);
	json_t *src = json_is_object(o) ? o : NULL;
	for (size_t i = 0; i < n; i++) {
		int64_t *dst = (int64_t *)((char *)c + k[i].off);
		int rv = src ? config_get_int(src, k[i].key, k[i].dflt, 1, dst, err) : WT_OK;
		if (src == NULL)
			*dst = k[i].dflt;
		if (rv != WT_OK) {
			if (err != NULL)
				wt_errprefix(err, "in %s", prefix);
			return rv;
		}
	}
	return WT_OK;
}

static const gs_key enc_keys[] = {
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

static const gs_key proj_keys[] = {
    {"hidden_size", 768, offsetof(ckpt_config, gs_q_hidden)},
    {"num_hidden_layers", 12, offsetof(ckpt_config, gs_q_layers)},
    {"num_attention_heads", 12, offsetof(ckpt_config, gs_q_heads)},
    {"intermediate_size", 3072, offsetof(ckpt_config, gs_q_inter)},
    {"cross_attention_frequency", 2, offsetof(ckpt_config, gs_q_cross)},
    {"encoder_hidden_size", 1408, offsetof(ckpt_config, gs_q_enc)},
};

static const gs_key top_keys[] = {
    {"window_size", 15, offsetof(ckpt_config, gs_window)},
    {"downsample_rate", 5, offsetof(ckpt_config, gs_downsample)},
};

/* projector_config's switches and model_type (Blip2QFormerConfig's defaults) */
static int read_projector_kind(json_t *p, ckpt_config *c, wt_errbuf *err)
{
	json_t *o = json_is_object(p) ? p : NULL;
	const char *mt = json_string_value(json_object_get(o, "model_type"));
	snprintf(c->gs_q_model, sizeof(c->gs_q_model), "%s", mt != NULL ? mt : "blip_2_qformer");
	const char *pe = json_string_value(json_object_get(o, "position_embedding_type"));
	json_t *pej = json_object_get(o, "position_embedding_type");
	if (pej != NULL && !json_is_null(pej) && pe == NULL)
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: projector_config.position_embedding_type is not a "
		                 "string");
	c->gs_q_abs = pe == NULL || strcmp(pe, "absolute") == 0;
	int rv =
	    o ? config_get_bool(o, "use_qformer_text_input", false, &c->gs_q_text, err) : WT_OK;
	if (rv != WT_OK && err != NULL)
		wt_errprefix(err, "in projector_config");
	return rv;
}

int config_parse_granite_speech(json_t *root, ckpt_config *c, wt_errbuf *err)
{
	json_t *tc = json_object_get(root, "text_config");
	const char *tmt = json_string_value(json_object_get(tc, "model_type"));
	snprintf(c->lm_model_type, sizeof(c->lm_model_type), "%s",
	         !json_is_object(tc) ? ""
	         : tmt != NULL       ? tmt
	                             : "granite");
	int rv = read_keys(json_object_get(root, "encoder_config"), "encoder_config", enc_keys,
	                   sizeof(enc_keys) / sizeof(enc_keys[0]), c, err);
	json_t *p = json_object_get(root, "projector_config");
	if (rv == WT_OK)
		rv = read_keys(p, "projector_config", proj_keys,
		               sizeof(proj_keys) / sizeof(proj_keys[0]), c, err);
	if (rv == WT_OK)
		rv = read_projector_kind(p, c, err);
	if (rv == WT_OK)
		rv = read_keys(root, "config.json", top_keys,
		               sizeof(top_keys) / sizeof(top_keys[0]), c, err);
	return rv;
}
