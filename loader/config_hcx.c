/*
 * config_hcx.c — HyperCLOVAX-SEED-Vision's config keys (model_type hyperclovax_vlm:
 * HCXVisionConfig, the remote configuration_hyperclovax.py vLLM vendors), read beside the
 * vision_config the common parser reads:
 *
 * | key                              | default | read as                                       |
 * |----------------------------------|---------|-----------------------------------------------|
 * | text_config.model_type           | none    | lm_model_type (AutoConfig.for_model of it)    |
 * | vision_config.model_type         | none    | v_model_type (the same)                       |
 * | vision_config.vision_use_head    | true    | v_use_head (SiglipVisionTransformer's)        |
 * | use_nth_layer                    | -2      | v_feature_layer (vLLM's tower depth)          |
 * | anyres                           | false   | must be true (vLLM reads image_newline)       |
 * | mm_projector_type                | none    | must be cabstractor                           |
 * | num_queries_vis_abstractor_image | none    | a square >= 1 (build_net asserts it)          |
 * | proj_pos_emb                     | true    | hcx_pos_emb (mm_projector.pos_emb)            |
 * | proj_prenorm                     | false   | hcx_prenorm (mm_projector.prenorm)            |
 */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "loader/config_int.h"
#include "loader/loader.h"

bool config_is_hcx(json_t *root)
{
	const char *mt = json_string_value(json_object_get(root, "model_type"));
	return mt != NULL && strcmp(mt, "hyperclovax_vlm") == 0;
}

/* sub-config key's model_type into buf (required: HCXVisionConfig indexes it). */
static int sub_type(json_t *root, const char *key, char *buf, size_t n, wt_errbuf *err)
{
	json_t *o = json_object_get(root, key);
	const char *mt = json_string_value(json_object_get(o, "model_type"));
	if (!json_is_object(o) || mt == NULL)
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: %s.model_type is missing: HCXVisionConfig builds %s "
		                 "by it (AutoConfig.for_model); give it as the release does "
		                 "(HyperCLOVAX-SEED-Vision-Instruct-3B: %s)",
		                 key, key,
		                 strcmp(key, "text_config") == 0 ? "llama" : "siglip_vision_model");
	snprintf(buf, n, "%s", mt);
	return WT_OK;
}

/* mm_projector_type cabstractor with a square num_queries_vis_abstractor_image. */
static int projector(json_t *root, wt_errbuf *err)
{
	const char *pt = json_string_value(json_object_get(root, "mm_projector_type"));
	if (pt == NULL)
		return wt_seterr(
		    err, WT_ECORRUPT,
		    "config.json: mm_projector_type is missing or not a string: vLLM's "
		    "hyperclovax_vision.py reads it (the release's: cabstractor)");
	if (strcmp(pt, "cabstractor") != 0)
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "config.json: mm_projector_type '%s': only cabstractor (the "
		                 "C-Abstractor HyperCLOVAX-SEED-Vision-Instruct-3B ships) is cut "
		                 "here; vLLM's linear / mlp / inverted_mlp projectors are not",
		                 pt);
	int64_t q = 0;
	json_t *x = json_object_get(root, "num_queries_vis_abstractor_image");
	int rv = x == NULL || json_is_null(x)
	             ? wt_seterr(err, WT_ECORRUPT,
	                         "config.json: num_queries_vis_abstractor_image is missing: "
	                         "vLLM's C-Abstractor reads it (the release's: 81)")
	             : config_get_int(root, "num_queries_vis_abstractor_image", 1, 1, &q, err);
	if (rv != WT_OK)
		return rv;
	int64_t s = 1;
	while (s * s < q)
		s++;
	if (s * s != q)
		return wt_seterr(
		    err, WT_ECORRUPT,
		    "config.json: num_queries_vis_abstractor_image %" PRId64
		    " is not a square: vLLM's C-Abstractor pools to a sqrt x sqrt grid "
		    "(build_net asserts it); give a square such as 81",
		    q);
	return WT_OK;
}

int config_parse_hcx(json_t *root, json_t *v, ckpt_config *c, wt_errbuf *err)
{
	int rv = sub_type(root, "text_config", c->lm_model_type, sizeof(c->lm_model_type), err);
	if (rv == WT_OK)
		rv = sub_type(root, "vision_config", c->v_model_type, sizeof(c->v_model_type), err);
	if (rv == WT_OK)
		rv = config_get_int(root, "use_nth_layer", -2, -(int64_t)INT32_MAX,
		                    &c->v_feature_layer, err);
	json_t *uh = json_object_get(v, "vision_use_head");
	if (rv == WT_OK && uh != NULL && !json_is_boolean(uh) && !json_is_null(uh))
		rv = wt_seterr(err, WT_ECORRUPT,
		               "config.json: vision_config.vision_use_head is not true, false or "
		               "null; vLLM builds the tower's pooling head unless it is false");
	c->v_use_head = uh == NULL || json_is_true(uh);
	if (rv == WT_OK)
		rv = config_refuse_bool(
		    root, "anyres", false, false,
		    "vLLM's hyperclovax_vision.py builds image_newline only with "
		    "anyres true and reads it for every image: set anyres true "
		    "(the release's) with its image_newline",
		    err);
	if (rv == WT_OK)
		rv = projector(root, err);
	if (rv == WT_OK)
		rv = config_get_bool(root, "proj_pos_emb", true, &c->hcx_pos_emb, err);
	if (rv == WT_OK)
		rv = config_get_bool(root, "proj_prenorm", false, &c->hcx_prenorm, err);
	return rv;
}
