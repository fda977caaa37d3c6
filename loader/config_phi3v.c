/*
 * config_phi3v.c — Phi-3-Vision's image keys (model_type phi3_v: the remote
 * configuration_phi3_v.py's Phi3VConfig, which neither transformers 4.57.1 nor vLLM ships; the
 * keys and the switches below are the ones vLLM's phi3v.py Phi3HDImageEmbedding reads, and the
 * released config.json files hold them):
 *
 *   img_processor {image_dim_out, num_img_tokens, layer_idx (-2), type_feature ("patch"),
 *                  name, model_name}
 *   embd_layer    {use_hd_transform (false), with_learnable_separator (false),
 *                  hd_transform_order ("glb_sub"), embedding_cls, projection_cls}
 *
 * vLLM builds the tower of its hard-coded CLIP_VIT_LARGE_PATCH14_336_CONFIG (width 1024, MLP
 * 4096, 24 blocks, 16 heads, image 336, patch 14, 3 channels), so those go into the vision
 * fields whatever config.json says, but v_num_layers: the blocks vLLM builds (24 + idx + 1 for
 * a negative layer_idx, idx + 1 for one >= 0, as _init_img_processor counts), the blocks the
 * checkpoint must hold (the planner drops the rest: family_phi3v.c); v_feature_layer is that
 * count as shardmap_vision_kept reads it (layer_idx itself when negative, idx + 1 when not).
 *
 * Refused as vLLM cannot run them: img_processor or embd_layer not an object (Phi3VConfig's
 * defaults None and "default" fail vLLM's subscripting / .get); image_dim_out or
 * num_img_tokens missing (vLLM indexes both); image_dim_out other than 1024 (the 2x2 merge
 * asserts the CLIP width 1024: glb_GN / sub_GN / img_projection.0 are 4 x image_dim_out wide);
 * use_hd_transform or with_learnable_separator false (asserted at init); hd_transform_order
 * other than sub_glb (asserted per image); type_feature other than patch (cls_patch's 577
 * rows fail the merge's 24 x 24 assertion); layer_idx past the 24 blocks (CLIPVisionTransformer
 * refuses more blocks than the config's) or below -24 (-25, no block at all, vLLM would build as
 * an empty encoder; no release sets it, and the planner counts one block at least: refused).
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "loader/config_int.h"
#include "loader/loader.h"

#define P3V_WIDTH  1024
#define P3V_BLOCKS 24

bool config_is_phi3v(json_t *root)
{
	const char *mt = json_string_value(json_object_get(root, "model_type"));
	return mt != NULL && strcmp(mt, "phi3_v") == 0;
}

/* A string key of sub-config `in` (absent or null: dflt) that must equal want. */
static int want_str(json_t *o, const char *in, const char *key, const char *dflt, const char *want,
                    const char *why, wt_errbuf *err)
{
	json_t *v = json_object_get(o, key);
	const char *s = v == NULL || json_is_null(v) ? dflt : json_string_value(v);
	if (s == NULL)
		return wt_seterr(err, WT_ECORRUPT, "config.json: %s.%s is not a string", in, key);
	if (strcmp(s, want) != 0)
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "config.json: %s.%s '%s'%s: vLLM's phi3v.py %s; set it to \"%s\"",
		                 in, key, s, v == NULL || json_is_null(v) ? " (the default)" : "",
		                 why, want);
	return WT_OK;
}

/* embd_layer: the HD transform with learnable separators, sub-images before the global one. */
static int embd_layer_keys(json_t *root, wt_errbuf *err)
{
	json_t *e = json_object_get(root, "embd_layer");
	if (!json_is_object(e))
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: embd_layer is %s; Phi3VForCausalLM needs the object "
		                 "(use_hd_transform, with_learnable_separator, hd_transform_order) "
		                 "vLLM's Phi3HDImageEmbedding reads",
		                 e == NULL ? "missing" : "not an object");
	static const char *const sw[] = {"use_hd_transform", "with_learnable_separator"};
	for (size_t i = 0; i < 2; i++) {
		bool on;
		int rv = config_get_bool(e, sw[i], false, &on, err);
		if (rv != WT_OK)
			return rv;
		if (!on)
			return wt_seterr(
			    err, WT_EUNSUPPORTED,
			    "config.json: embd_layer.%s is false%s: vLLM's "
			    "Phi3HDImageEmbedding asserts use_hd_transform and "
			    "with_learnable_separator (its glb_GN / sub_GN separators); "
			    "set both true",
			    sw[i], json_object_get(e, sw[i]) == NULL ? " (the default)" : "");
	}
	return want_str(e, "embd_layer", "hd_transform_order", "glb_sub", "sub_glb",
	                "implements only sub_glb (sub-image rows, glb_GN, then the global image)",
	                err);
}

/* img_processor: CLIP ViT-L/14-336's 1024-wide patch features, up to layer_idx. */
static int img_processor_keys(json_t *root, ckpt_config *c, wt_errbuf *err)
{
	json_t *p = json_object_get(root, "img_processor");
	if (!json_is_object(p))
		return wt_seterr(
		    err, WT_ECORRUPT,
		    "config.json: img_processor is %s; Phi3VForCausalLM needs the object "
		    "(image_dim_out, num_img_tokens, layer_idx) vLLM's "
		    "Phi3HDImageEmbedding reads",
		    p == NULL ? "missing" : "not an object");
	static const char *const need[] = {"image_dim_out", "num_img_tokens"};
	int64_t v[2];
	for (size_t i = 0; i < 2; i++) {
		json_t *x = json_object_get(p, need[i]);
		if (x == NULL || json_is_null(x))
			return wt_seterr(err, WT_ECORRUPT,
			                 "config.json: img_processor.%s is missing; vLLM's "
			                 "Phi3HDImageEmbedding reads it (CLIP ViT-L/14-336: "
			                 "image_dim_out 1024, num_img_tokens 144)",
			                 need[i]);
		int rv = config_get_int(p, need[i], 1, 1, &v[i], err);
		if (rv != WT_OK) {
			wt_errprefix(err, "in img_processor");
			return rv;
		}
	}
	if (v[0] != P3V_WIDTH)
		return wt_seterr(
		    err, WT_EUNSUPPORTED,
		    "config.json: img_processor.image_dim_out %lld: vLLM's phi3v.py "
		    "builds CLIP ViT-L/14-336 (width %d) whatever config.json says and "
		    "merges its features 2x2 asserting that width; set it to %d",
		    (long long)v[0], P3V_WIDTH, P3V_WIDTH);
	int rv = want_str(p, "img_processor", "type_feature", "patch", "patch",
	                  "merges 24 x 24 patch rows (cls_patch adds the class token's)", err);
	int64_t idx;
	if (rv == WT_OK)
		rv = config_get_int(p, "layer_idx", -2, -(int64_t)INT32_MAX, &idx, err);
	if (rv != WT_OK)
		return rv;
	if (idx < -P3V_BLOCKS || idx >= P3V_BLOCKS)
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: img_processor.layer_idx %lld is outside CLIP "
		                 "ViT-L/14-336's %d blocks: give an index in [%d, %d], e.g. -2",
		                 (long long)idx, P3V_BLOCKS, -P3V_BLOCKS, P3V_BLOCKS - 1);
	c->v_feature_layer = idx < 0 ? idx : idx + 1;
	/* the blocks vLLM builds (at least one): the ones the checkpoint must hold */
	c->v_num_layers = idx < 0 ? P3V_BLOCKS + idx + 1 : idx + 1;
	return WT_OK;
}

int config_parse_phi3v(json_t *root, ckpt_config *c, wt_errbuf *err)
{
	c->v_hidden_size = P3V_WIDTH;
	int rv = img_processor_keys(root, c, err);
	if (rv == WT_OK)
		rv = embd_layer_keys(root, err);
	if (rv != WT_OK)
		return rv;
	c->has_vision = true;
	snprintf(c->v_model_type, sizeof(c->v_model_type), "clip_vision_model");
	c->v_intermediate_size = 4096;
	c->v_num_attn_heads = 16;
	c->v_image_size = 336;
	c->v_patch_size = 14;
	c->v_patch_given = true;
	c->v_in_chans = 3;
	c->v_spatial_merge_size = 2; /* the 2x2 merge: glb_GN / sub_GN 4 x 1024 wide */
	return WT_OK;
}
