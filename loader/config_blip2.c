/*
 * config_blip2.c — BLIP-2's config keys (model_type "blip-2", Blip2Config; transformers
 * 4.57.1): vision_config (a Blip2VisionConfig whether or not it says so; absent: all its
 * defaults) with that class's defaults for absent keys (hidden_size 1408, intermediate_size
 * 6144, num_hidden_layers 39, num_attention_heads 16, image_size 224, patch_size 14,
 * qkv_bias true into v_attn_bias), qformer_config (Blip2QFormerConfig: hidden_size 768,
 * num_hidden_layers 12, num_attention_heads 12, intermediate_size 3072,
 * cross_attention_frequency 2; its encoder_hidden_size is always vision_config.hidden_size,
 * as Blip2Config sets it), the top level's num_query_tokens (32) and text_config's model_type
 * (opt when it has none; "" without a text_config object). Refused: a Q-Former with its text
 * input (use_qformer_text_input true: embeddings vLLM's blip2.py does not build) or a
 * position_embedding_type other than absolute (vLLM raises NotImplementedError).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "loader/config_int.h"
#include "loader/loader.h"

bool config_is_blip2(json_t *root)
{
	const char *mt = json_string_value(json_object_get(root, "model_type"));
	return mt != NULL && strcmp(mt, "blip-2") == 0;
}

typedef struct b2_int {
	const char *key;
	int64_t dflt;
	size_t off;
} b2_int;

/* The integer keys ks of o (an object, or NULL: all defaults) into c; errors say "in
 * what". */
static int b2_ints(json_t *o, const b2_int *ks, size_t n, const char *what, ckpt_config *c,
                   wt_errbuf *err)
{
	json_t *empty = o == NULL ? json_object() : NULL;
	if (o == NULL && empty == NULL)
		return wt_seterr(err, WT_ENOMEM, "config.json: out of memory");
	int rv = WT_OK;
	for (size_t k = 0; rv == WT_OK && k < n; k++)
		rv = config_get_int(o != NULL ? o : empty, ks[k].key, ks[k].dflt, 1,
		                    (int64_t *)((char *)c + ks[k].off), err);
	json_decref(empty);
	if (rv != WT_OK && err != NULL)
		wt_errprefix(err, what);
	return rv;
}

/* A sub-config: absent or null is NULL (the class's defaults), else it must be an object. */
static int b2_sub(json_t *root, const char *key, json_t **out, wt_errbuf *err)
{
	json_t *o = json_object_get(root, key);
	*out = o == NULL || json_is_null(o) ? NULL : o;
	if (*out != NULL && !json_is_object(*out))
		return wt_seterr(err, WT_ECORRUPT, "config.json: '%s' is not an object", key);
	return WT_OK;
}

static int parse_vision(json_t *v, ckpt_config *c, wt_errbuf *err)
{
	static const b2_int ints[] = {
	    {"hidden_size", 1408, offsetof(ckpt_config, v_hidden_size)},
	    {"intermediate_size", 6144, offsetof(ckpt_config, v_intermediate_size)},
	    {"num_hidden_layers", 39, offsetof(ckpt_config, v_num_layers)},
	    {"num_attention_heads", 16, offsetof(ckpt_config, v_num_attn_heads)},
	    {"image_size", 224, offsetof(ckpt_config, v_image_size)},
	    {"patch_size", 14, offsetof(ckpt_config, v_patch_size)},
	};
	int rv = b2_ints(v, ints, sizeof(ints) / sizeof(ints[0]), "in vision_config", c, err);
	if (rv == WT_OK && v != NULL)
		rv = config_get_bool(v, "qkv_bias", true, &c->v_attn_bias, err);
	else
		c->v_attn_bias = true;
	c->has_vision = true;
	c->v_patch_given = true;
	c->v_in_chans = 3; /* BlipVisionEmbeddings' Conv2d: in_channels=3 */
	return rv;
}

static int parse_qformer(json_t *q, ckpt_config *c, wt_errbuf *err)
{
	static const b2_int ints[] = {
	    {"hidden_size", 768, offsetof(ckpt_config, qf_hidden)},
	    {"num_hidden_layers", 12, offsetof(ckpt_config, qf_layers)},
	    {"num_attention_heads", 12, offsetof(ckpt_config, qf_heads)},
	    {"intermediate_size", 3072, offsetof(ckpt_config, qf_inter)},
	    {"cross_attention_frequency", 2, offsetof(ckpt_config, qf_cross_freq)},
	};
	int rv = b2_ints(q, ints, sizeof(ints) / sizeof(ints[0]), "in qformer_config", c, err);
	if (rv != WT_OK || q == NULL)
		return rv;
	bool text_input = false;
	rv = config_get_bool(q, "use_qformer_text_input", false, &text_input, err);
	if (rv == WT_OK && text_input)
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "config.json: qformer_config.use_qformer_text_input is true: the "
		                 "Q-Former then has text embeddings (qformer.embeddings.*, "
		                 "InstructBLIP-style) that vLLM's blip2.py does not build; set it "
		                 "false (as the blip2-opt releases do)");
	json_t *pe = json_object_get(q, "position_embedding_type");
	const char *pes = json_string_value(pe);
	if (rv == WT_OK && pe != NULL && !json_is_null(pe) &&
	    (pes == NULL || strcmp(pes, "absolute") != 0))
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "config.json: qformer_config.position_embedding_type is not "
		                 "\"absolute\": vLLM's blip2.py raises NotImplementedError for any "
		                 "other; set it \"absolute\" (Blip2QFormerConfig's default)");
	return rv;
}

int config_parse_blip2(json_t *root, ckpt_config *c, wt_errbuf *err)
{
	json_t *tc = json_object_get(root, "text_config");
	const char *tmt = json_string_value(json_object_get(tc, "model_type"));
	snprintf(c->lm_model_type, sizeof(c->lm_model_type), "%s",
	         !json_is_object(tc) ? ""
	         : tmt != NULL       ? tmt
	                             : "opt");
	json_t *v = NULL, *q = NULL;
	int rv = b2_sub(root, "vision_config", &v, err);
	if (rv == WT_OK)
		rv = b2_sub(root, "qformer_config", &q, err);
	if (rv == WT_OK)
		rv = parse_vision(v, c, err);
	if (rv == WT_OK)
		rv = parse_qformer(q, c, err);
	if (rv == WT_OK)
		rv = config_get_int(root, "num_query_tokens", 32, 1, &c->num_query_tokens, err);
	return rv;
}
