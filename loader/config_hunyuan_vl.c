/*
 * config_hunyuan_vl.c — HunYuan-VL's vision_config (model_type hunyuan_vl:
 * tencent/HunyuanOCR; vLLM's own HunYuanVLConfig / HunYuanVLVisionConfig in
 * vllm/transformers_utils/configs/hunyuan_vl.py, transformers 4.57.1 has neither).
 *
 * The language model's keys are the top level's (HunYuanVLConfig builds its text config of
 * them when there is no text_config; a text_config is laid over the top level as for every
 * composite config), read as every causal LM's with the hunyuan_vl class-defaults row
 * (HunYuanVLTextConfig's). vision_config's keys go through the generic reader (hidden_size,
 * intermediate_size, num_hidden_layers, num_attention_heads, patch_size, num_channels,
 * spatial_merge_size, out_hidden_size); here HunYuanVLVisionConfig's defaults fill the absent
 * ones (1152, 4304, 27, 16, patch 16, out 4096) and two derived sizes are set:
 *   v_num_pos      (max_image_size // patch_size)^2 + 1: HunYuanVisionPatchEmbed's
 *                  position_embedding rows (max_image_size default 2048)
 *   v_proj_in_dim  4 x hidden_size: the merger's proj.2 output, image_newline, mlp's input
 */
#include <inttypes.h>
#include <string.h>

#include "loader/config_int.h"
#include "loader/loader.h"

bool config_is_hunyuan_vl(json_t *root)
{
	const char *mt = json_string_value(json_object_get(root, "model_type"));
	return mt != NULL && strcmp(mt, "hunyuan_vl") == 0;
}

int config_parse_hunyuan_vl(json_t *v, ckpt_config *c, wt_errbuf *err)
{
	struct {
		int64_t *f, dflt;
	} def[] = {{&c->v_hidden_size, 1152},
	           {&c->v_intermediate_size, 4304},
	           {&c->v_num_layers, 27},
	           {&c->v_num_attn_heads, 16},
	           {&c->v_out_hidden_size, 4096}};
	for (size_t k = 0; k < sizeof(def) / sizeof(def[0]); k++)
		if (*def[k].f < 0)
			*def[k].f = def[k].dflt;
	if (!c->v_patch_given)
		c->v_patch_size = 16;
	c->v_patch_given = true;
	int64_t max_image;
	int rv = config_get_int(v, "max_image_size", 2048, 1, &max_image, err);
	if (rv != WT_OK) {
		if (err != NULL)
			wt_errprefix(err, "in vision_config");
		return rv;
	}
	if (c->v_patch_size < 1 || max_image < c->v_patch_size ||
	    max_image / c->v_patch_size > 32768)
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: vision_config.max_image_size %" PRId64
		                 " over patch_size %" PRId64
		                 " gives no position table HunYuanVisionPatchEmbed can build (1 to "
		                 "32768 patches a side); give the release's (2048 / 16)",
		                 max_image, c->v_patch_size);
	int64_t side = max_image / c->v_patch_size;
	c->v_num_pos = side * side + 1; /* the class token's row, skipped by the forward */
	c->v_proj_in_dim = 4 * c->v_hidden_size;
	return WT_OK;
}
