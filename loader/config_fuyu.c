/*
 * config_fuyu.c — Fuyu's config keys (model_type fuyu: FuyuConfig, transformers 4.57.1):
 * the top-level patch_size (30), num_channels (3) and hidden_size (4096, vision_embed_tokens'
 * output) with FuyuConfig's defaults into v_patch_size / v_in_chans / v_hidden_size, and
 * text_config's model_type (persimmon when it has none, or without a text_config: FuyuConfig
 * builds a PersimmonConfig of its top-level keys then).
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "loader/config_int.h"
#include "loader/loader.h"

bool config_is_fuyu(json_t *root)
{
	const char *mt = json_string_value(json_object_get(root, "model_type"));
	return mt != NULL && strcmp(mt, "fuyu") == 0;
}

int config_parse_fuyu(json_t *root, ckpt_config *c, wt_errbuf *err)
{
	json_t *tc = json_object_get(root, "text_config");
	const char *tmt = json_string_value(json_object_get(tc, "model_type"));
	snprintf(c->lm_model_type, sizeof(c->lm_model_type), "%s", tmt != NULL ? tmt : "persimmon");
	c->has_vision = true;
	c->v_patch_given = true;
	int rv = config_get_int(root, "patch_size", 30, 1, &c->v_patch_size, err);
	if (rv == WT_OK)
		rv = config_get_int(root, "num_channels", 3, 1, &c->v_in_chans, err);
	if (rv == WT_OK)
		rv = config_get_int(root, "hidden_size", 4096, 1, &c->v_hidden_size, err);
	return rv;
}
