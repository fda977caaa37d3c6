/*
 * config_deepseek_ocr.c — DeepSeek-OCR's config.json (model_type deepseek_vl_v2,
 * DeepseekOCRForCausalLM: deepseek-ai/DeepSeek-OCR; remote code), read as vLLM's
 * deepseek_ocr.py and its DeepseekVLV2Config read it. The flat view is DeepSeek-VL2's
 * (config_deepseek_vl2_root: language_config as text_config, model_type deepseek_v2 when it
 * has none, a v_head_dim of 0 left out).
 *
 * The language model: vLLM builds the architecture language_config.architectures names
 * (init_vllm_registered_model without architectures; the release's DeepseekV2ForCausalLM, or
 * DeepseekV3ForCausalLM); deepseek_v2.py takes plain attention (DeepseekAttention) exactly
 * when qk_nope_head_dim and qk_rope_head_dim are both 0 (the release's), else MLA; topk_method
 * noaux_tc gives the router its e_score_correction_bias. lm_model_type names the table
 * (deepseek, deepseek_v2, deepseek_v3), as DeepSeek-VL2's loader does.
 *
 * The towers: vLLM builds SAM ViT-B (build_sam_vit_b: width 768, 12 blocks, 12 heads, global
 * attention in blocks 2, 5, 8, 11, window 14, image 1024 / patch 16, neck 256 channels,
 * net_2 / net_3 512 / 1024) and CLIP-L/14 (width 1024, 24 blocks, 16 heads, MLP 4096, image
 * 224) whatever vision_config says; the remote model was built of the same. The sizes are read
 * from vision_config.width (the release's object of both towers), vLLM's as defaults:
 *
 *   key                                        default  here
 *   model_name                                 -        must be deeplip_b_l
 *   image_size                                 1024     SAM's grid image_size / 16
 *   width.clip-l-14-224 width / layers / heads 1024 / 24 / 16  MLP 4 x width
 *   width.clip-l-14-224 patch_size / image_size 14 / 224  (image / patch)^2 + 1 positions
 *   width.sam_vit_b width / layers / heads     768 / 12 / 12   MLP 4 x width
 *   width.sam_vit_b global_attn_indexes        [2, 5, 8, 11]   each a block
 *   width.sam_vit_b downsample_channels        [512, 1024]     net_2 / net_3 outputs
 *
 *   key (MlpProjectorConfig)   default                    here
 *   projector_type             downsample_mlp_gelu        must be linear (the release's)
 *   token_pooling              false                      must be false (vLLM asserts)
 *   input_dim                  1152                       CLIP width + net_3's channels
 *   n_embed                    2048                       language_config.hidden_size
 *
 * tile_tag must be "2D" (vLLM raises on any other).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "loader/config_int.h"
#include "loader/loader.h"

#define OCR_SAM_MAX_BLOCKS 64

bool config_is_deepseek_ocr(json_t *root)
{
	const char *mt = json_string_value(json_object_get(root, "model_type"));
	const char *a =
	    json_string_value(json_array_get(json_object_get(root, "architectures"), 0));
	return mt != NULL && strcmp(mt, "deepseek_vl_v2") == 0 && a != NULL &&
	       strcmp(a, "DeepseekOCRForCausalLM") == 0;
}

/* global_attn_indexes g (NULL or null: [2, 5, 8, 11]) into c->ocr_sam_global. */
static int sam_globals(json_t *g, ckpt_config *c, wt_errbuf *err)
{
	static const int64_t dflt[] = {2, 5, 8, 11};
	c->ocr_sam_global = 0;
	if (g == NULL || json_is_null(g)) {
		for (size_t k = 0; k < 4; k++)
			if (dflt[k] < c->ocr_sam_layers)
				c->ocr_sam_global |= UINT64_C(1) << dflt[k];
		return WT_OK;
	}
	if (!json_is_array(g))
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: vision_config.width.sam_vit_b.global_attn_indexes "
		                 "is not a list of block indexes");
	for (size_t k = 0; k < json_array_size(g); k++) {
		json_t *x = json_array_get(g, k);
		json_int_t i = json_is_integer(x) ? json_integer_value(x) : -1;
		if (i < 0 || i >= c->ocr_sam_layers)
			return wt_seterr(
			    err, WT_ECORRUPT,
			    "config.json: vision_config.width.sam_vit_b."
			    "global_attn_indexes[%zu] is not a block below layers %lld",
			    k, (long long)c->ocr_sam_layers);
		c->ocr_sam_global |= UINT64_C(1) << i;
	}
	return WT_OK;
}

/* downsample_channels d (NULL or null: [512, 1024]): net_2's and net_3's outputs. */
static int sam_channels(json_t *d, ckpt_config *c, wt_errbuf *err)
{
	c->ocr_sam_ds[0] = 512;
	c->ocr_sam_ds[1] = 1024;
	if (d == NULL || json_is_null(d))
		return WT_OK;
	json_t *a = json_array_get(d, 0), *b = json_array_get(d, 1);
	if (!json_is_array(d) || json_array_size(d) != 2 || !json_is_integer(a) ||
	    !json_is_integer(b) || json_integer_value(a) < 1 || json_integer_value(b) < 1 ||
	    json_integer_value(a) > (1 << 20) || json_integer_value(b) > (1 << 20))
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: vision_config.width.sam_vit_b.downsample_channels "
		                 "must be two positive channel counts (net_2's, net_3's: the "
		                 "release's [512, 1024])");
	c->ocr_sam_ds[0] = json_integer_value(a);
	c->ocr_sam_ds[1] = json_integer_value(b);
	return WT_OK;
}

/* vision_config.width's two towers (w NULL: vLLM's sizes) into c. */
static int parse_towers(json_t *w, ckpt_config *c, wt_errbuf *err)
{
	static const config_int_key clip[] = {
	    {"width", 1024, offsetof(ckpt_config, v_hidden_size)},
	    {"layers", 24, offsetof(ckpt_config, v_num_layers)},
	    {"heads", 16, offsetof(ckpt_config, v_num_attn_heads)},
	    {"patch_size", 14, offsetof(ckpt_config, v_patch_size)},
	    {"image_size", 224, offsetof(ckpt_config, v_image_size)},
	};
	static const config_int_key sam[] = {
	    {"width", 768, offsetof(ckpt_config, ocr_sam_width)},
	    {"layers", 12, offsetof(ckpt_config, ocr_sam_layers)},
	    {"heads", 12, offsetof(ckpt_config, ocr_sam_heads)},
	};
	json_t *cl = json_object_get(w, "clip-l-14-224"), *sm = json_object_get(w, "sam_vit_b");
	int rv = config_read_ints(cl, "vision_config.width.clip-l-14-224", clip, CONFIG_NKEYS(clip),
	                          c, err);
	if (rv == WT_OK)
		rv = config_read_ints(sm, "vision_config.width.sam_vit_b", sam, CONFIG_NKEYS(sam),
		                      c, err);
	if (rv != WT_OK)
		return rv;
	if (c->v_hidden_size % c->v_num_attn_heads != 0 || c->ocr_sam_width % c->ocr_sam_heads != 0)
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: vision_config.width's clip-l-14-224.heads %lld / "
		                 "sam_vit_b.heads %lld must divide its width %lld / %lld",
		                 (long long)c->v_num_attn_heads, (long long)c->ocr_sam_heads,
		                 (long long)c->v_hidden_size, (long long)c->ocr_sam_width);
	if (c->ocr_sam_layers > c->v_num_layers || c->ocr_sam_layers > OCR_SAM_MAX_BLOCKS)
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "config.json: vision_config.width.sam_vit_b.layers %lld above "
		                 "clip-l-14-224.layers %lld (or 64) is not planned here; vLLM "
		                 "builds 12 and 24 (the release's)",
		                 (long long)c->ocr_sam_layers, (long long)c->v_num_layers);
	if (c->v_image_size < c->v_patch_size || c->v_hidden_size > (1 << 20) ||
	    c->ocr_sam_width > (1 << 20))
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: vision_config.width.clip-l-14-224.image_size %lld "
		                 "is below its patch_size %lld, or a width is past 2^20",
		                 (long long)c->v_image_size, (long long)c->v_patch_size);
	c->v_intermediate_size = 4 * c->v_hidden_size; /* CLIPVisionConfig(intermediate 4096) */
	int64_t side = c->v_image_size / c->v_patch_size;
	c->v_num_pos = side * side + 1; /* the class token's */
	int rv2 = sam_globals(json_object_get(sm, "global_attn_indexes"), c, err);
	return rv2 == WT_OK ? sam_channels(json_object_get(sm, "downsample_channels"), c, err)
	                    : rv2;
}

/* vision_config v (an object or NULL). */
static int parse_vision(json_t *v, ckpt_config *c, wt_errbuf *err)
{
	int rv = config_deepseek_vl2_want(
	    v, "vision_config.", "model_name", "siglip_large_patch16_384", "deeplip_b_l",
	    "vLLM's deepseek_ocr.py builds SAM ViT-B and CLIP-L/14 (deeplip_b_l, "
	    "the release's) whatever vision_config says",
	    err);
	json_t *w = json_object_get(v, "width");
	if (rv == WT_OK && w != NULL && !json_is_null(w) && !json_is_object(w))
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: vision_config.width must be the object of the two "
		                 "towers' sizes ('clip-l-14-224', 'sam_vit_b'), as DeepSeek-OCR's "
		                 "is; a width number is DeepSeek-VL2's");
	int64_t image = 1024;
	if (rv == WT_OK)
		rv = config_get_int(v, "image_size", 1024, 16, &image, err);
	if (rv == WT_OK)
		rv = parse_towers(json_is_object(w) ? w : NULL, c, err);
	if (rv != WT_OK)
		return rv;
	if (image > (1 << 20))
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: vision_config.image_size %lld is not a model's",
		                 (long long)image);
	c->ocr_sam_grid = image / 16; /* SAM's PatchEmbed: 16 x 16 patches */
	c->v_in_chans = 3;
	c->v_patch_given = true;
	c->v_spatial_merge_size = 1;
	return WT_OK;
}

/* projector_config p (an object or NULL): MlpProjector's linear nn.Linear(input_dim, n_embed). */
static int parse_projector(json_t *p, ckpt_config *c, wt_errbuf *err)
{
	int64_t in = 1152, ne = 2048;
	int rv = config_deepseek_vl2_want(
	    p, "projector_config.", "projector_type", "downsample_mlp_gelu", "linear",
	    "DeepSeek-OCR's projector is MlpProjector's linear one (the "
	    "release's); no other is cut here",
	    err);
	bool pool = false;
	if (rv == WT_OK)
		rv = config_get_bool(p, "token_pooling", false, &pool, err);
	if (rv == WT_OK && pool)
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "config.json: projector_config.token_pooling is true; vLLM's "
		                 "MlpProjector asserts it is false: give false");
	if (rv == WT_OK)
		rv = config_get_int(p, "input_dim", 1152, 1, &in, err);
	if (rv == WT_OK)
		rv = config_get_int(p, "n_embed", 2048, 1, &ne, err);
	if (rv != WT_OK)
		return rv;
	if (in != c->v_hidden_size + c->ocr_sam_ds[1] || ne != c->hidden_size)
		return wt_seterr(
		    err, WT_ECORRUPT,
		    "config.json: projector_config.input_dim %lld / n_embed %lld must "
		    "be the CLIP width + net_3's channels %lld / "
		    "language_config.hidden_size %lld (the projector maps both towers' "
		    "features into the language model's embeddings)",
		    (long long)in, (long long)ne, (long long)(c->v_hidden_size + c->ocr_sam_ds[1]),
		    (long long)c->hidden_size);
	c->v_proj_in_dim = in;
	return WT_OK;
}

/* The table of the architecture vLLM builds of language_config tc, into c->lm_model_type. */
static int pick_lm(json_t *tc, ckpt_config *c, wt_errbuf *err)
{
	const char *a = json_string_value(json_array_get(json_object_get(tc, "architectures"), 0));
	if (a == NULL ||
	    (strcmp(a, "DeepseekV2ForCausalLM") != 0 && strcmp(a, "DeepseekV3ForCausalLM") != 0))
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "config.json: language_config.architectures[0] is %s: vLLM's "
		                 "deepseek_ocr.py builds the architecture language_config names; "
		                 "give DeepseekV2ForCausalLM (the release's) or "
		                 "DeepseekV3ForCausalLM",
		                 a != NULL ? a : "missing");
	json_t *tk = json_object_get(tc, "topk_method");
	const char *topk = tk == NULL || json_is_null(tk) ? "greedy" : json_string_value(tk);
	if (topk == NULL)
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: language_config.topk_method is not a string");
	bool mha = c->qk_nope_head_dim == 0 && c->qk_rope_head_dim == 0;
	bool v3 = strcmp(topk, "noaux_tc") == 0;
	if (v3 && mha)
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "config.json: language_config topk_method noaux_tc over plain "
		                 "attention (qk_nope_head_dim and qk_rope_head_dim 0) is not cut "
		                 "here; give greedy (the release's) or MLA sizes");
	snprintf(c->lm_model_type, sizeof(c->lm_model_type), "%s",
	         v3    ? "deepseek_v3"
	         : mha ? "deepseek"
	               : "deepseek_v2");
	return WT_OK;
}

int config_parse_deepseek_ocr(json_t *root, json_t *v, ckpt_config *c, wt_errbuf *err)
{
	json_t *p = NULL;
	int rv = config_deepseek_vl2_top(root, v, "deepseek_ocr.py", &p, err);
	if (rv == WT_OK)
		rv = parse_vision(json_is_object(v) ? v : NULL, c, err);
	if (rv == WT_OK)
		rv = parse_projector(p, c, err);
	if (rv == WT_OK) /* config_deepseek_vl2_root's */
		rv = pick_lm(json_object_get(root, "text_config"), c, err);
	c->has_vision = rv == WT_OK;
	return rv;
}
