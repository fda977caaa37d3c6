/*
 * config_chameleon.c — Chameleon's own config keys (model_type chameleon: ChameleonConfig,
 * transformers 4.57.1 configuration_chameleon.py), beside the Llama-like dims the loader
 * reads for every family (ChameleonConfig's defaults for those: config_defaults_classic.c).
 *
 * swin_norm (false: chameleon-30b's true puts input_layernorm after the attention and
 * post_attention_layernorm after the MLP), hidden_act ("silu"; vLLM's ChameleonMLP raises on
 * any other) and vq_config, the VQ-VAE image tokenizer (ChameleonVQVAEConfig's defaults:
 * channel_multiplier [1, 1, 2, 2, 4], num_res_blocks 2, resolution 512, attn_resolutions None,
 * attn_type "vanilla"): which of model.vqmodel.encoder's modules exist (vLLM's
 * ChameleonVQVAEEncoder builds them as transformers does; the planner's chameleon_vq_built).
 */
#include <stddef.h>
#include <string.h>

#include "loader/config_int.h"
#include "loader/loader.h"

/* Integer list key of vq_config vq into out (at most CKPT_MAX_VQ_LEVELS entries, each >= 1);
 * absent or null: dflt (nd entries). */
static int vq_list(json_t *vq, const char *key, const int64_t *dflt, size_t nd, int64_t *out,
                   size_t *n, wt_errbuf *err)
{
	json_t *a = json_object_get(vq, key);
	if (a == NULL || json_is_null(a)) {
		if (nd > 0) /* attn_resolutions' default: none (NULL) */
			memcpy(out, dflt, nd * sizeof(*out));
		*n = nd;
		return WT_OK;
	}
	if (!json_is_array(a))
		return wt_seterr(err, WT_ECORRUPT, "config.json: 'vq_config.%s' is not an array",
		                 key);
	if (json_array_size(a) > CKPT_MAX_VQ_LEVELS)
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "config.json: 'vq_config.%s' has %zu entries; at most %d are read",
		                 key, json_array_size(a), CKPT_MAX_VQ_LEVELS);
	for (size_t i = 0; i < json_array_size(a); i++) {
		json_t *x = json_array_get(a, i);
		if (!json_is_integer(x) || json_integer_value(x) < 1)
			return wt_seterr(
			    err, WT_ECORRUPT,
			    "config.json: 'vq_config.%s'[%zu] is not a positive integer", key, i);
		out[i] = (int64_t)json_integer_value(x);
	}
	*n = json_array_size(a);
	return WT_OK;
}

static int parse_vq(json_t *vq, ckpt_config *c, wt_errbuf *err)
{
	static const int64_t mult[] = {1, 1, 2, 2, 4};
	size_t nl = 0;
	int rv = vq_list(vq, "channel_multiplier", mult, 5, c->vq_mult, &nl, err);
	if (rv == WT_OK && nl == 0)
		rv = wt_seterr(err, WT_ECORRUPT,
		               "config.json: 'vq_config.channel_multiplier' is "
		               "empty; the encoder needs at least one level");
	c->vq_levels = (int64_t)nl;
	if (rv == WT_OK)
		rv = vq_list(vq, "attn_resolutions", NULL, 0, c->vq_attn_res, &c->vq_n_attn_res,
		             err);
	if (rv == WT_OK)
		rv = config_get_int(vq, "num_res_blocks", 2, 1, &c->vq_res_blocks, err);
	if (rv == WT_OK)
		rv = config_get_int(vq, "resolution", 512, 1, &c->vq_resolution, err);
	static const config_int_key dims[] = {
	    {"base_channels", 128, offsetof(ckpt_config, vq_base)},
	    {"in_channels", 3, offsetof(ckpt_config, vq_in)},
	    {"latent_channels", 256, offsetof(ckpt_config, vq_latent)},
	    {"embed_dim", 256, offsetof(ckpt_config, vq_embed)},
	    {"num_embeddings", 8192, offsetof(ckpt_config, vq_n_embed)}};
	if (rv == WT_OK)
		rv = config_read_ints(vq, "vq_config", dims, CONFIG_NKEYS(dims), c, err);
	if (rv == WT_OK)
		rv = config_get_bool(vq, "double_latent", false, &c->vq_double, err);
	if (rv != WT_OK)
		return rv;
	json_t *at = json_object_get(vq, "attn_type");
	if (at != NULL && !json_is_null(at) && !json_is_string(at))
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: 'vq_config.attn_type' is not a "
		                 "string");
	/* ChameleonVQVAEEncoder builds attention blocks for "vanilla" only (None: none) */
	c->vq_attn =
	    at == NULL || (json_is_string(at) && strcmp(json_string_value(at), "vanilla") == 0);
	return WT_OK;
}

int config_parse_chameleon(json_t *root, ckpt_config *c, wt_errbuf *err)
{
	int rv = config_get_bool(root, "swin_norm", false, &c->cham_swin, err);
	if (rv != WT_OK)
		return rv;
	json_t *act = json_object_get(root, "hidden_act");
	if (act != NULL && !json_is_null(act) && !json_is_string(act))
		return wt_seterr(err, WT_ECORRUPT, "config.json: 'hidden_act' is not a string");
	c->cham_act_silu =
	    act == NULL || json_is_null(act) || strcmp(json_string_value(act), "silu") == 0;
	json_t *vq = json_object_get(root, "vq_config");
	if (vq != NULL && !json_is_null(vq) && !json_is_object(vq))
		return wt_seterr(err, WT_ECORRUPT, "config.json: 'vq_config' is not an object");
	return parse_vq(vq, c, err);
}
