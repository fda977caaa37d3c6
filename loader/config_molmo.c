/*
 * config_molmo.c — Molmo's config keys (model_type molmo, MolmoForCausalLM: the remote
 * MolmoConfig, config_molmo.py, of allenai/Molmo-7B-D-0924, Molmo-7B-O-0924, Molmo-72B-0924),
 * read as vLLM's molmo.py builds the model.
 *
 * MolmoConfig names the RMSNorms' epsilon layer_norm_eps, the q/k/v biases qkv_bias and the
 * q / k norms attention_layer_norm; they are laid over rms_norm_eps / attention_bias /
 * use_qk_norm (the targets overwritten) before the class defaults (config_defaults_remote.c)
 * fill what is absent. vLLM sizes the language model's vocabulary tables by
 * `embedding_size or vocab_size` (lm_head: that many rows; the embedding 128 more,
 * wte.new_embedding's), so the view's vocab_size is that count (MolmoConfig's default
 * embedding_size 50304 when the key is absent). intermediate_size is twice the MLP's width
 * (ff_proj holds both halves; vLLM passes config.intermediate_size // 2): the view holds the
 * halved width (config_molmo_width, after the defaults), an odd one refused. head_dim is
 * hidden_size / num_attention_heads in vLLM whatever the config says (dropped from the view).
 *
 *   key                   MolmoConfig   here
 *   weight_tying          false         true refused: vLLM's molmo.py ties lm_head to
 *                                       model.transformer.wte, which its MolmoModel lacks
 *   tie_word_embeddings   true          ignored (vLLM reads weight_tying alone): untied
 *   layer_norm_type       "rms"         other refused: vLLM asserts "rms"
 *   moe_num_experts,      (MolmoE-1B)   refused: vLLM's molmo.py builds no experts
 *   block_type "moe"
 *
 * The vision backbone's sizes are vLLM's hard-coded VisionBackboneConfig (config.json carries
 * none): config_parse_molmo lays them onto the vision fields.
 */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "loader/config_int.h"
#include "loader/loader.h"

/* MolmoConfig's embedding_size default (config_molmo.py) */
#define MOLMO_EMBEDDING_SIZE 50304

bool config_is_molmo(json_t *root)
{
	const char *mt = json_string_value(json_object_get(root, "model_type"));
	return mt != NULL && strcmp(mt, "molmo") == 0;
}

/* MolmoE-1B's mixture of experts (its OLMoE language model): vLLM's molmo.py has none. */
static int molmo_moe(json_t *v, wt_errbuf *err)
{
	json_t *e = json_object_get(v, "moe_num_experts");
	const char *bt = json_string_value(json_object_get(v, "block_type"));
	if ((json_is_integer(e) && json_integer_value(e) > 0) ||
	    (bt != NULL && strcmp(bt, "moe") == 0))
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "config.json: %s is set (MolmoE-1B's mixture of experts); vLLM's "
		                 "molmo.py builds a dense language model and no experts: serve a "
		                 "dense Molmo (Molmo-7B-D / 7B-O / 72B)",
		                 json_is_integer(e) && json_integer_value(e) > 0
		                     ? "moe_num_experts"
		                     : "block_type \"moe\"");
	return WT_OK;
}

static int molmo_refusals(json_t *v, wt_errbuf *err)
{
	int rv = molmo_moe(v, err);
	if (rv == WT_OK)
		rv = config_refuse_bool(v, "weight_tying", false, true,
		                        "vLLM's molmo.py ties lm_head to model.transformer.wte, "
		                        "which its MolmoModel does not have (it cannot load such a "
		                        "model): give false with model.transformer.ff_out.weight",
		                        err);
	if (rv != WT_OK)
		return rv;
	json_t *t = json_object_get(v, "layer_norm_type");
	const char *s = t == NULL || json_is_null(t) ? "rms" : json_string_value(t);
	if (s == NULL)
		return wt_seterr(err, WT_ECORRUPT, "config.json: layer_norm_type is not a string");
	if (strcmp(s, "rms") != 0)
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "config.json: layer_norm_type '%s': vLLM's molmo.py asserts "
		                 "\"rms\" (its RMSNorm layers); set it to \"rms\"",
		                 s);
	return WT_OK;
}

/* vocab_size := embedding_size or vocab_size (absent embedding_size: MolmoConfig's 50304). */
static int molmo_vocab(json_t *v, wt_errbuf *err)
{
	json_t *es = json_object_get(v, "embedding_size");
	json_t *n = NULL;
	if (es == NULL)
		n = json_integer(MOLMO_EMBEDDING_SIZE);
	else if (json_is_integer(es) && json_integer_value(es) != 0)
		n = json_incref(es);
	else if (!json_is_null(es) && !json_is_integer(es))
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: embedding_size is not an integer; give the "
		                 "vocabulary rows of model.transformer.wte.embedding");
	if (n == NULL) { /* null or 0: vocab_size (MolmoConfig's 50304 when absent) */
		json_t *vs = json_object_get(v, "vocab_size");
		n = vs == NULL || json_is_null(vs) ? json_integer(MOLMO_EMBEDDING_SIZE)
		                                   : json_incref(vs);
	}
	if (n == NULL || json_object_set_new(v, "vocab_size", n) != 0)
		return wt_seterr(err, WT_ENOMEM, "config.json: out of memory");
	return WT_OK;
}

int config_molmo_keys(json_t *v, wt_errbuf *err)
{
	static const char *const keys[][2] = {{"layer_norm_eps", "rms_norm_eps"},
	                                      {"qkv_bias", "attention_bias"},
	                                      {"attention_layer_norm", "use_qk_norm"}};
	int rv = molmo_refusals(v, err);
	if (rv == WT_OK)
		rv = molmo_vocab(v, err);
	if (rv != WT_OK)
		return rv;
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		json_object_del(v, keys[i][1]);
	json_object_del(v, "head_dim");
	if (json_object_set_new(v, "tie_word_embeddings", json_false()) != 0)
		return wt_seterr(err, WT_ENOMEM, "config.json: out of memory");
	return config_alias_keys(v, keys, sizeof(keys) / sizeof(keys[0]), true, err);
}

/* intermediate_size // 2, the MLP's width (after the class defaults); odd refused: vLLM's
 * MergedColumnParallelLinear of 2 x (I // 2) rows cannot load ff_proj's I. Anything but a
 * positive integer below 2^40 is left for the field readers to name. */
int config_molmo_width(json_t *v, wt_errbuf *err)
{
	json_t *I = json_object_get(v, "intermediate_size");
	if (!json_is_integer(I) || json_integer_value(I) <= 0 ||
	    json_integer_value(I) >= ((json_int_t)1 << 40))
		return WT_OK;
	if (json_integer_value(I) % 2 != 0)
		return wt_seterr(
		    err, WT_ECORRUPT,
		    "config.json: intermediate_size %lld is odd; Molmo's ff_proj holds "
		    "two halves of intermediate_size / 2 rows (vLLM's molmo.py): give "
		    "the checkpoint's ff_proj rows",
		    (long long)json_integer_value(I));
	if (json_object_set_new(v, "intermediate_size", json_integer(json_integer_value(I) / 2)) !=
	    0)
		return wt_seterr(err, WT_ENOMEM, "config.json: out of memory");
	return WT_OK;
}

/* vLLM's VisionBackboneConfig (molmo.py, hard-coded: config.json is not read for it): a
 * 1024-wide ViT of 23 blocks, 16 heads (kv heads too), MLP 4096, image 336, patch 14, 577
 * positions (24 x 24 + the class token). */
int config_parse_molmo(ckpt_config *c)
{
	c->has_vision = true;
	snprintf(c->v_model_type, sizeof(c->v_model_type), "clip_vision_model");
	c->v_hidden_size = 1024;
	c->v_intermediate_size = 4096;
	c->v_num_attn_heads = 16;
	c->v_num_layers = 23;
	c->v_image_size = 336;
	c->v_patch_size = 14;
	c->v_patch_given = true;
	c->v_in_chans = 3;
	return WT_OK;
}
