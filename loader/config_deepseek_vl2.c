/*
 * config_deepseek_vl2.c — DeepSeek-VL2's config.json (model_type deepseek_vl_v2,
 * DeepseekVLV2ForCausalLM: deepseek-ai/deepseek-vl2-tiny, -small, deepseek-vl2; remote code),
 * read as vLLM's deepseek_vl2.py and its DeepseekVLV2Config (transformers_utils/configs/
 * deepseek_vl2.py, a copy of the remote modeling_deepseek_vl_v2.py's config classes) read it.
 *
 * The language model: DeepseekVLV2Config builds DeepseekV2Config(**language_config) and vLLM
 * the registered model of one architecture: DeepseekV3ForCausalLM when topk_method is
 * noaux_tc, else DeepseekForCausalLM when use_mla is false, else DeepseekV2ForCausalLM. So the
 * flat view (config_deepseek_vl2_root) is config.json with text_config = language_config (its
 * model_type deepseek_v2 when it has none: no class defaults, as the deepseek_v2 family's
 * keys are required), and lm_model_type names the pick (deepseek_v3, deepseek, deepseek_v2),
 * the planner's table (family_deepseek_vl2.c). use_mla absent is true (the remote
 * DeepseekV2Config's default; transformers' class has no such key), topk_method absent greedy.
 * vLLM's deepseek_v2.py builds plain attention (DeepseekAttention) exactly when
 * qk_nope_head_dim and qk_rope_head_dim are both 0, older vLLMs' deepseek.py for every
 * DeepseekForCausalLM: a use_mla that disagrees with those sizes is refused (the two readings
 * differ), as is noaux_tc over plain attention. A v_head_dim of 0 (deepseek-vl2-tiny's, beside its
 * 0 qk sizes) is left out of the view: plain attention reads none of them.
 *
 *   key (VisionEncoderConfig)  default                    here
 *   model_name                 siglip_large_patch16_384   must be siglip_so400m_patch14_384
 *                                                         (vLLM builds timm's
 *                                                         vit_so400m_patch14_siglip_384 alone)
 *   width, layers, heads       1024, 24, 16               the tower's sizes (the checkpoint's:
 *   patch_size, image_size     16, 384                    the remote model built it of them)
 *   mlp_ratio                  4                          MLP int(width x mlp_ratio)
 *   class_token                false                      must be false (no cls_token in vLLM)
 *   global_pool                map                        must be map (attn_pool in vLLM)
 *
 *   key (MlpProjectorConfig)   default                    here
 *   projector_type             downsample_mlp_gelu        must be it (vLLM raises otherwise)
 *   token_pooling              false                      must be false (vLLM asserts)
 *   depth                      2                          1 or 2 (layers.0 and layers.2)
 *   mlp_ratio                  1                          layers.0 rows n_embed x mlp_ratio
 *   downsample_ratio           2                          layers.0 columns input_dim x ratio^2
 *   input_dim                  1152                       must be vision_config.width
 *   n_embed                    2048                       must be language_config.hidden_size
 *
 * tile_tag (DeepseekVLV2Config's __init__ default "tile_tag") must be "2D": vLLM raises on any
 * other and builds image_newline / view_seperator only for it.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "loader/config_int.h"
#include "loader/loader.h"

bool config_is_deepseek_vl2(json_t *root)
{
	const char *mt = json_string_value(json_object_get(root, "model_type"));
	const char *a =
	    json_string_value(json_array_get(json_object_get(root, "architectures"), 0));
	/* DeepSeek-OCR shares the model_type under an architecture of its own */
	return mt != NULL && strcmp(mt, "deepseek_vl_v2") == 0 &&
	       (a == NULL || strcmp(a, "DeepseekVLV2ForCausalLM") == 0);
}

int config_deepseek_vl2_root(json_t *root, json_t **out, wt_errbuf *err)
{
	json_t *lc = json_object_get(root, "language_config");
	if (lc == NULL || json_is_null(lc))
		return wt_seterr(
		    err, WT_ECORRUPT,
		    "config.json: language_config is missing: DeepseekVLV2Config builds "
		    "the language model's DeepseekV2Config of it (the releases hold the "
		    "whole language-model config there)");
	if (!json_is_object(lc))
		return wt_seterr(err, WT_ECORRUPT, "config.json: language_config is not an object");
	json_t *v = json_copy(root), *tc = json_deep_copy(lc);
	json_t *mt = json_object_get(lc, "model_type");
	if (v == NULL || tc == NULL ||
	    (json_string_value(mt) == NULL &&
	     json_object_set_new(tc, "model_type", json_string("deepseek_v2")) != 0) ||
	    json_object_del(v, "language_config") != 0 ||
	    json_object_set(v, "text_config", tc) != 0) {
		json_decref(v);
		json_decref(tc);
		return wt_seterr(err, WT_ENOMEM, "config.json: out of memory");
	}
	json_decref(tc);
	/* deepseek-vl2-tiny's v_head_dim 0 (with qk_nope / qk_rope 0: plain attention, which
	 * reads none of the three) is not read as an MLA size (the generic reader's >= 1) */
	json_t *vh = json_object_get(tc, "v_head_dim");
	if (json_is_integer(vh) && json_integer_value(vh) == 0)
		json_object_del(tc, "v_head_dim");
	/* nor DeepSeek-OCR's top-level copy of it (its release repeats language_config's keys) */
	vh = json_object_get(v, "v_head_dim");
	if (json_is_integer(vh) && json_integer_value(vh) == 0)
		json_object_del(v, "v_head_dim");
	*out = v;
	return WT_OK;
}

int config_deepseek_vl2_want(json_t *o, const char *in, const char *key, const char *dflt,
                             const char *want, const char *why, wt_errbuf *err)
{
	json_t *k = json_object_get(o, key);
	const char *s = k == NULL || json_is_null(k) ? dflt : json_string_value(k);
	if (s != NULL && strcmp(s, want) == 0)
		return WT_OK;
	return wt_seterr(err, WT_EUNSUPPORTED, "config.json: %s%s is %s%s%s, not \"%s\"; %s", in,
	                 key, s ? "\"" : "", s ? s : "not a string", s ? "\"" : "", want, why);
}

/* A boolean key of o (absent or null: false) that must be false; else WT_EUNSUPPORTED naming
 * in.key and why. */
static int want_false(json_t *o, const char *in, const char *key, const char *why, wt_errbuf *err)
{
	bool b = false;
	int rv = config_get_bool(o, key, false, &b, err);
	if (rv != WT_OK || !b)
		return rv;
	return wt_seterr(err, WT_EUNSUPPORTED, "config.json: %s%s is true; %s", in, key, why);
}

/* VisionEncoderConfig's keys of v (an object or NULL) into c, its defaults for absent ones. */
static int parse_vision(json_t *v, ckpt_config *c, wt_errbuf *err)
{
	static const config_int_key ints[] = {
	    {"width", 1024, offsetof(ckpt_config, v_hidden_size)},
	    {"layers", 24, offsetof(ckpt_config, v_num_layers)},
	    {"heads", 16, offsetof(ckpt_config, v_num_attn_heads)},
	    {"patch_size", 16, offsetof(ckpt_config, v_patch_size)},
	    {"image_size", 384, offsetof(ckpt_config, v_image_size)},
	};
	int rv = config_deepseek_vl2_want(
	    v, "vision_config.", "model_name", "siglip_large_patch16_384",
	    "siglip_so400m_patch14_384",
	    "vLLM's deepseek_vl2.py builds timm's vit_so400m_patch14_siglip_384 "
	    "whatever vision_config says (every DeepSeek-VL2 release names it)",
	    err);
	if (rv == WT_OK)
		rv = config_deepseek_vl2_want(
		    v, "vision_config.", "global_pool", "map", "map",
		    "vLLM's tower has the MAP head (attn_pool) and no other", err);
	if (rv == WT_OK)
		rv = want_false(v, "vision_config.", "class_token",
		                "vLLM's so400m tower has no class token: give false", err);
	if (rv == WT_OK)
		rv = config_read_ints(v, "vision_config", ints, CONFIG_NKEYS(ints), c, err);
	double ratio = 4.0;
	if (rv == WT_OK)
		rv = config_get_pos_real(v, "mlp_ratio", 4.0, &ratio, err);
	if (rv != WT_OK)
		return rv;
	if (c->v_image_size < c->v_patch_size || (double)c->v_hidden_size * ratio > 1e12)
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: vision_config.image_size %lld is below patch_size "
		                 "%lld, or width x mlp_ratio is not a model's",
		                 (long long)c->v_image_size, (long long)c->v_patch_size);
	c->v_intermediate_size = (int64_t)((double)c->v_hidden_size * ratio); /* timm's int() */
	int64_t side = c->v_image_size / c->v_patch_size;
	c->v_num_pos = side * side; /* both at most 2^40: side^2 fits */
	c->v_in_chans = 3;
	c->v_patch_given = true;
	return WT_OK;
}

/* MlpProjectorConfig's keys of p (an object or NULL) into c: the downsample ratio, layers.0's
 * rows (v_proj_in_dim); input_dim / n_embed checked against the tower and language model. */
static int parse_projector(json_t *p, ckpt_config *c, wt_errbuf *err)
{
	int64_t depth = 2, mr = 1, ds = 2, in = 1152, ne = 2048;
	int rv = config_deepseek_vl2_want(
	    p, "projector_config.", "projector_type", "downsample_mlp_gelu", "downsample_mlp_gelu",
	    "vLLM's MlpProjector builds no other (NotImplementedError)", err);
	if (rv == WT_OK)
		rv = want_false(p, "projector_config.", "token_pooling",
		                "vLLM's MlpProjector asserts it is false: give false", err);
	if (rv != WT_OK)
		return rv;
	rv = config_get_int(p, "depth", 2, 1, &depth, err);
	if (rv == WT_OK)
		rv = config_get_int(p, "mlp_ratio", 1, 1, &mr, err);
	if (rv == WT_OK)
		rv = config_get_int(p, "downsample_ratio", 2, 1, &ds, err);
	if (rv == WT_OK)
		rv = config_get_int(p, "input_dim", 1152, 1, &in, err);
	if (rv == WT_OK)
		rv = config_get_int(p, "n_embed", 2048, 1, &ne, err);
	if (rv != WT_OK) {
		if (err != NULL)
			wt_errprefix(err, "in projector_config");
		return rv;
	}
	if (depth > 2)
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "config.json: projector_config.depth %lld: MlpProjector's hidden "
		                 "Linears past layers.2 are not cut here (every release has depth "
		                 "2); give 2",
		                 (long long)depth);
	if (in != c->v_hidden_size || ne != c->hidden_size)
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: projector_config.input_dim %lld / n_embed %lld must "
		                 "be vision_config.width %lld / language_config.hidden_size %lld "
		                 "(the projector maps the tower's features into the language "
		                 "model's embeddings)",
		                 (long long)in, (long long)ne, (long long)c->v_hidden_size,
		                 (long long)c->hidden_size);
	if (ds > 64 || mr > 64)
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: projector_config.downsample_ratio %lld or mlp_ratio "
		                 "%lld is past 64: not a model's",
		                 (long long)ds, (long long)mr);
	c->v_spatial_merge_size = ds;
	c->v_proj_in_dim = ne * mr; /* n_embed = hidden_size: at most 2^40 x 64 */
	return WT_OK;
}

/* The architecture vLLM's DeepseekVLV2ForCausalLM builds of language_config tc, into
 * c->lm_model_type as the family of its table. */
static int pick_lm(json_t *tc, ckpt_config *c, wt_errbuf *err)
{
	bool mla = true;
	int rv = config_get_bool(tc, "use_mla", true, &mla, err);
	json_t *tk = json_object_get(tc, "topk_method");
	const char *topk = tk == NULL || json_is_null(tk) ? "greedy" : json_string_value(tk);
	if (rv != WT_OK)
		return err != NULL ? wt_errprefix(err, "in language_config") : rv;
	if (topk == NULL)
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: language_config.topk_method is not a string");
	bool mha = c->qk_nope_head_dim == 0 && c->qk_rope_head_dim == 0;
	bool v3 = strcmp(topk, "noaux_tc") == 0;
	if (v3 ? mha : mla == mha)
		return wt_seterr(
		    err, WT_EUNSUPPORTED,
		    "config.json: language_config %s, but qk_nope_head_dim %lld and "
		    "qk_rope_head_dim %lld build %s (vLLM's deepseek_v2.py builds plain "
		    "attention exactly when both are 0): the checkpoint's attention and "
		    "the architecture deepseek_vl2.py picks disagree; give use_mla false "
		    "with both 0 (deepseek-vl2-tiny) or use_mla true with MLA sizes",
		    v3    ? "topk_method noaux_tc (DeepseekV3ForCausalLM)"
		    : mla ? "use_mla true (DeepseekV2ForCausalLM)"
		          : "use_mla false (DeepseekForCausalLM)",
		    (long long)c->qk_nope_head_dim, (long long)c->qk_rope_head_dim,
		    mha ? "plain attention" : "MLA");
	snprintf(c->lm_model_type, sizeof(c->lm_model_type), "%s",
	         v3    ? "deepseek_v3"
	         : mla ? "deepseek_v2"
	               : "deepseek");
	return WT_OK;
}

int config_deepseek_vl2_top(json_t *root, json_t *v, const char *script, json_t **p, wt_errbuf *err)
{
	json_t *pc = json_object_get(root, "projector_config");
	if ((v != NULL && !json_is_null(v) && !json_is_object(v)) ||
	    (pc != NULL && !json_is_null(pc) && !json_is_object(pc)))
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: 'vision_config' or 'projector_config' is not an "
		                 "object");
	char why[256];
	snprintf(why, sizeof(why),
	         "vLLM's %s supports only the 2D tile tag (image_newline and view_seperator; "
	         "DeepseekVLV2Config's default is the string \"tile_tag\"): give \"2D\"",
	         script);
	int rv = config_deepseek_vl2_want(root, "", "tile_tag", "tile_tag", "2D", why, err);
	if (rv == WT_OK)
		*p = json_is_object(pc) ? pc : NULL;
	return rv;
}

int config_parse_deepseek_vl2(json_t *root, json_t *v, ckpt_config *c, wt_errbuf *err)
{
	json_t *p = NULL;
	int rv = config_deepseek_vl2_top(root, v, "deepseek_vl2.py", &p, err);
	if (rv == WT_OK)
		rv = parse_vision(json_is_object(v) ? v : NULL, c, err);
	if (rv == WT_OK)
		rv = parse_projector(p, c, err);
	if (rv == WT_OK) /* config_deepseek_vl2_root's */
		rv = pick_lm(json_object_get(root, "text_config"), c, err);
	c->has_vision = rv == WT_OK;
	return rv;
}
