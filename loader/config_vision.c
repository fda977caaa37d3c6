/*
 * config_vision.c — a multimodal config.json's vision keys: vision_config (Qwen2-VL,
 * Qwen2.5-VL, Qwen3-VL, GLM-4.1V, Gemma 3's SigLIP, Llama 4, Pixtral, LLaVA's CLIP; InternVL's
 * in config_internvl.c) with the transformers defaults, the top-level keys about the tower and
 * projector (Mistral 3's, LlavaConfig's), and the language model's mrope_section.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "loader/config_int.h"
#include "loader/loader.h"

/* vision_config (Qwen2-VL, Qwen2.5-VL, Gemma 3's SigLIP): field names as config.json writes
 * them, with the transformers defaults; the planner checks what the family
 * needs. */
/* vision_config's own keys (the Qwen-VL / Llama 4 / SigLIP-style sizes; -1 where absent) into
 * c, with deepstack_visual_indexes; errors prefixed "in vision_config". */
static int parse_vision_keys(json_t *v, ckpt_config *c, wt_errbuf *err)
{
	static const config_int_key ints[] = {
	    {"depth", -1, offsetof(ckpt_config, v_depth)},
	    {"embed_dim", -1, offsetof(ckpt_config, v_embed_dim)},
	    {"num_heads", -1, offsetof(ckpt_config, v_num_heads)},
	    {"patch_size", 14, offsetof(ckpt_config, v_patch_size)},
	    {"temporal_patch_size", 2, offsetof(ckpt_config, v_temporal_patch_size)},
	    {"spatial_merge_size", 2, offsetof(ckpt_config, v_spatial_merge_size)},
	    {"hidden_size", -1, offsetof(ckpt_config, v_hidden_size)},
	    {"intermediate_size", -1, offsetof(ckpt_config, v_intermediate_size)},
	    {"out_hidden_size", -1, offsetof(ckpt_config, v_out_hidden_size)},
	    {"num_hidden_layers", -1, offsetof(ckpt_config, v_num_layers)},
	    {"num_attention_heads", -1, offsetof(ckpt_config, v_num_attn_heads)},
	    {"image_size", -1, offsetof(ckpt_config, v_image_size)},
	    {"vision_output_dim", -1, offsetof(ckpt_config, v_output_dim)},
	    {"projector_input_dim", -1, offsetof(ckpt_config, v_proj_in_dim)},
	    {"projector_output_dim", -1, offsetof(ckpt_config, v_proj_out_dim)},
	    {"num_position_embeddings", -1, offsetof(ckpt_config, v_num_pos)},
	};
	static const char *const chans[] = {"in_chans", "in_channels", "num_channels", NULL};
	json_t *patch = json_object_get(v, "patch_size");
	c->v_patch_given = patch != NULL && !json_is_null(patch);
	int rv = config_read_ints(v, "vision_config", ints, CONFIG_NKEYS(ints), c, err);
	if (rv != WT_OK)
		return rv;
	const char *which = "in_chans";
	rv = config_get_pos_real(v, "mlp_ratio", 4.0, &c->v_mlp_ratio, err);
	if (rv == WT_OK && config_first_of(v, chans, &which))
		rv = config_get_int(v, which, 3, 1, &c->v_in_chans, err);
	json_t *ds = json_object_get(v, "deepstack_visual_indexes");
	c->has_deepstack = ds != NULL && !json_is_null(ds);
	if (rv == WT_OK && c->has_deepstack)
		rv = config_int_list(ds, "deepstack_visual_indexes", &c->deepstack, &c->n_deepstack,
		                     err);
	if (rv != WT_OK && err != NULL)
		wt_errprefix(err, "in vision_config");
	return rv;
}

/* The top level's keys about the vision tower and projector (Mistral 3's, LLaVA's), then the
 * composite family's own (config_parse_llava, _idefics3, ...). */
static int parse_vision_top(json_t *root, json_t *v, ckpt_config *c, wt_errbuf *err)
{
	int rv = WT_OK;
	/* Mistral3Config's */
	if (json_object_get(v, "spatial_merge_size") == NULL)
		rv =
		    config_get_int(root, "spatial_merge_size", 2, 1, &c->v_spatial_merge_size, err);
	bool llava = config_is_llava(root), onevision = config_is_llava_onevision(root);
	if (rv == WT_OK)
		rv = config_get_bool(root, "multimodal_projector_bias", llava || onevision,
		                     &c->mm_projector_bias, err);
	c->v_feature_list = json_is_array(json_object_get(root, "vision_feature_layer"));
	const char *mt = json_string_value(json_object_get(root, "model_type"));
	if (rv == WT_OK && mt != NULL && strcmp(mt, "mistral3") == 0 && !c->v_feature_list)
		rv = config_get_int(root, "vision_feature_layer", -1, -(int64_t)INT32_MAX,
		                    &c->v_feature_layer, err); /* Mistral3Config's default */
	json_t *tc = json_object_get(root, "text_config");
	if (rv == WT_OK && mt != NULL && strcmp(mt, "mistral3") == 0 && json_is_object(tc)) {
		/* Mistral3Config builds text_config by its model_type, mistral when it has none
		 * (LightOnOCR-1B's is qwen3: the planner's q_norm / k_norm) */
		const char *tmt = json_string_value(json_object_get(tc, "model_type"));
		snprintf(c->lm_model_type, sizeof(c->lm_model_type), "%s",
		         tmt != NULL ? tmt : "mistral");
	}
	if (rv == WT_OK && llava)
		rv = config_parse_llava(root, v, c, err);
	if (rv == WT_OK && config_is_idefics3(root))
		rv = config_parse_idefics3(root, c, err);
	if (rv == WT_OK && config_is_paligemma(root))
		config_parse_paligemma(root, c);
	if (rv == WT_OK && config_is_aya_vision(root))
		rv = config_parse_aya_vision(root, c, err);
	if (rv == WT_OK && onevision)
		rv = config_parse_llava_onevision(root, v, c, err);
	if (rv == WT_OK && !onevision && config_is_rvl(root)) /* R-4B: LLaVA-OneVision's keys */
		rv = config_parse_rvl(root, v, c, err);
	if (rv == WT_OK && config_is_cohere2_vision(root))
		rv = config_parse_cohere2_vision(root, c, err);
	if (rv == WT_OK && config_is_lfm2_vl(root))
		rv = config_parse_lfm2_vl(root, v, c, err);
	if (rv == WT_OK && config_is_minimax_vl(root))
		rv = config_parse_minimax_vl(root, v, c, err);
	if (rv == WT_OK && config_is_bee(root))
		rv = config_parse_bee(root, v, c, err);
	if (rv == WT_OK && config_is_paddleocr_vl(root))
		rv = config_parse_paddleocr_vl(root, err);
	if (rv == WT_OK && config_is_glm4v_old(root)) /* EVA2CLIP's keys, no defaults */
		rv = config_parse_glm4v_old(root, v, c, err);
	if (rv == WT_OK && config_is_hunyuan_vl(root))
		rv = config_parse_hunyuan_vl(v, c, err);
	if (rv == WT_OK && config_is_bagel(root)) /* the flat view's vit_config */
		config_parse_bagel(v, c);
	if (rv == WT_OK && config_is_hcx(root)) /* HCXVisionConfig's top-level keys */
		rv = config_parse_hcx(root, v, c, err);
	if (rv == WT_OK && config_is_hcx_v2(root)) /* HyperCLOVAX-SEED-Think's text_config */
		rv = config_parse_hcx_v2(root, c, err);
	return rv;
}

/* config_parse_vision over vision_config v (NULL or null when absent). */
static int parse_vision(json_t *root, json_t *v, ckpt_config *c, wt_errbuf *err)
{
	c->v_depth = c->v_embed_dim = c->v_num_heads = -1;
	c->v_hidden_size = c->v_intermediate_size = c->v_out_hidden_size = -1;
	c->v_num_layers = c->v_num_attn_heads = c->v_image_size = -1;
	c->v_output_dim = c->v_proj_in_dim = c->v_proj_out_dim = c->v_num_pos = -1;
	c->v_mlp_ratio = 4.0;
	c->v_patch_size = 14;
	c->v_temporal_patch_size = 2;
	c->v_spatial_merge_size = 2;
	c->v_in_chans = 3;
	if (config_is_fuyu(root)) /* no vision_config: vision_embed_tokens' top-level keys */
		return config_parse_fuyu(root, c, err);
	if (config_is_phi3v(root)) /* no vision_config: vLLM's fixed CLIP, img_processor's */
		return config_parse_phi3v(root, c, err);
	if (config_is_molmo(root)) /* no vision_config: vLLM's fixed VisionBackboneConfig */
		return config_parse_molmo(c);
	if (config_is_mllama(root)) /* MllamaVisionConfig's keys and defaults */
		return config_parse_mllama(root, v, c, err);
	if (config_is_internvl(root)) /* [h, w] sizes, InternVLVisionConfig's defaults */
		return config_parse_internvl(root, v, c, err);
	if (config_is_internvl_chat(root)) /* InternVisionConfig's keys, select_layer */
		return config_parse_internvl_chat(root, v, c, err);
	if (config_is_ovis(root)) /* visual_tokenizer_config's AIMv2 backbone */
		return config_parse_ovis(root, c, err);
	if (config_is_ovis2_5(root)) /* vit_config's SigLIP2-NaViT, Siglip2NavitConfig's */
		return config_parse_ovis2_5(root, c, err);
	if (config_is_dots_ocr(root)) /* DotsVisionConfig's keys and defaults */
		return config_parse_dots_ocr(v, c, err);
	if (config_is_deepseek_vl2(root)) /* VisionEncoderConfig's keys, projector_config */
		return config_parse_deepseek_vl2(root, v, c, err);
	if (config_is_deepseek_ocr(root)) /* SAM ViT-B and CLIP-L: vision_config.width's */
		return config_parse_deepseek_ocr(root, v, c, err);
	if (config_is_minicpmv(root)) /* SiglipVisionConfig's keys, query_num, version */
		return config_parse_minicpmv(root, v, c, err);
	if (config_is_blip2(root)) /* absent sub-configs: Blip2Config's defaults */
		return config_parse_blip2(root, c, err);
	if (config_is_step3_vl(root)) /* Step3VisionEncoderConfig's keys and defaults */
		return config_parse_step3_vl(root, v, c, err);
	if (config_is_kimi_vl(root)) /* absent vision_config: MoonViTConfig's defaults */
		return config_parse_kimi_vl(root, v, c, err);
	if (config_is_isaac(root)) /* absent: PixelShuffleSiglip2VisionConfig's defaults */
		return config_parse_isaac(v, c, err);
	if (config_is_nano_vl(root)) /* RADIO: args.model's sizes, mlp1's top-level keys */
		return config_parse_nano_vl(root, v, c, err);
	int rv = config_is_aria(root) ? config_parse_aria(root, c, err) : WT_OK;
	if (rv == WT_OK && config_is_ernie45vl(root)) /* vision_config required, its keys too */
		rv = config_ernie45vl_vision(root, v, c, err);
	if (rv != WT_OK || v == NULL || json_is_null(v))
		return rv; /* Aria without one: Idefics3VisionConfig's defaults (the planner's) */
	if (!json_is_object(v))
		return wt_seterr(err, WT_ECORRUPT, "config.json: 'vision_config' is not an object");
	c->has_vision = true;
	rv = parse_vision_keys(v, c, err);
	if (rv != WT_OK)
		return rv;
	return parse_vision_top(root, v, c, err);
}

int config_parse_vision(json_t *root, ckpt_config *c, wt_errbuf *err)
{
	json_t *own = NULL; /* Qwen2-VL / Qwen2.5-VL: the vision class's defaults filled in */
	int rv = config_qwen2_vl_vision(root, &own, err);
	if (rv == WT_OK)
		rv = parse_vision(root, own != NULL ? own : json_object_get(root, "vision_config"),
		                  c, err);
	json_decref(own);
	return rv;
}

/* rope_scaling.mrope_section (transformers 4.x) or rope_parameters.mrope_section (5.x). */
int config_parse_mrope(json_t *lm, ckpt_config *c, wt_errbuf *err)
{
	static const char *const keys[] = {"rope_scaling", "rope_parameters", NULL};
	const char *which = "rope_scaling";
	json_t *r = config_first_of(lm, keys, &which);
	if (r == NULL)
		return WT_OK;
	if (!json_is_object(r))
		return wt_seterr(err, WT_ECORRUPT, "config.json: '%s' is not an object", which);
	json_t *m = json_object_get(r, "mrope_section");
	if (m == NULL || json_is_null(m))
		return WT_OK;
	if (!json_is_array(m) || json_array_size(m) > CKPT_MAX_MROPE)
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: %s.mrope_section must be an array of at most %d "
		                 "integers",
		                 which, CKPT_MAX_MROPE);
	for (size_t i = 0; i < json_array_size(m); i++) {
		json_t *x = json_array_get(m, i);
		if (!json_is_integer(x))
			return wt_seterr(err, WT_ECORRUPT,
			                 "config.json: %s.mrope_section[%zu] is not an integer",
			                 which, i);
		c->mrope_section[i] = (int64_t)json_integer_value(x);
	}
	c->has_mrope = true;
	c->n_mrope = json_array_size(m);
	return WT_OK;
}
