/*
 * config_clip.c — CLIP's config keys (model_type clip: CLIPConfig, transformers 4.57.1): the
 * text tower's are text_config's (config_lm_view lays it over the top level; CLIPTextConfig's
 * defaults for absent keys: vocab_size 49408, hidden_size 512, intermediate_size 2048,
 * num_hidden_layers 12, num_attention_heads 8, max_position_embeddings 77), the vision
 * tower's vision_config's (config_vision.c; the planner applies CLIPVisionConfig's defaults).
 *
 * Read here: CLIPConfig's own projection_dim (default 512; the top level's, which
 * CLIPModel's text_projection / visual_projection take, not text_config's) into
 * rob_num_labels, and text_config.max_position_embeddings (the position table's rows) into
 * rob_max_pos.
 *
 * SigLIP's (model_type siglip: SiglipConfig, transformers 4.57.1): text_config laid over the
 * top level with SiglipTextConfig's defaults (vocab_size 32000, hidden_size 768,
 * intermediate_size 3072, num_hidden_layers 12, num_attention_heads 12,
 * max_position_embeddings 64); text_config.projection_size (absent or null: hidden_size, the
 * text head's rows) into rob_num_labels and max_position_embeddings into rob_max_pos; the
 * vision tower's vision_config (the planner applies SiglipVisionConfig's defaults), whose
 * vision_use_head false is refused.
 */
#include <string.h>

#include "loader/config_int.h"
#include "loader/loader.h"

bool config_is_clip(json_t *root)
{
	const char *mt = json_string_value(json_object_get(root, "model_type"));
	return mt != NULL && strcmp(mt, "clip") == 0;
}

int config_parse_clip(json_t *root, json_t *lm, ckpt_config *c, wt_errbuf *err)
{
	int rv = config_get_int(root, "projection_dim", 512, 1, &c->rob_num_labels, err);
	if (rv == WT_OK)
		rv = config_get_int(lm, "max_position_embeddings", 77, 1, &c->rob_max_pos, err);
	return rv;
}

bool config_is_siglip(json_t *root)
{
	const char *mt = json_string_value(json_object_get(root, "model_type"));
	return mt != NULL && strcmp(mt, "siglip") == 0;
}

int config_parse_siglip(json_t *root, json_t *lm, ckpt_config *c, wt_errbuf *err)
{
	json_t *vc = json_object_get(root, "vision_config");
	if (json_is_false(json_object_get(vc, "vision_use_head")))
		return wt_seterr(
		    err, WT_EUNSUPPORTED,
		    "config.json: vision_config.vision_use_head is false: SiglipModel's "
		    "vision tower then has no attention-pooling head (vision_model.head.*), "
		    "a layout weightd does not cut; remove the key (true is the default) "
		    "and keep the head's tensors");
	int rv = config_get_int(lm, "projection_size", c->hidden_size, 1, &c->rob_num_labels, err);
	if (rv == WT_OK)
		rv = config_get_int(lm, "max_position_embeddings", 64, 1, &c->rob_max_pos, err);
	return rv;
}
