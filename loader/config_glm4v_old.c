/*
 * config_glm4v_old.c — GLM-4V's vision_config (GLM4VForCausalLM, model_type chatglm:
 * THUDM/glm-4v-9b, remote code), read as vLLM's glm4v.py reads it: EVA2CLIPModel builds its
 * tower of Namespace(**config.vision_config), so every key it reads must be there (no class
 * defaults: the remote configuration_chatglm.py keeps vision_config a plain dict).
 *
 *   key                 read by (vLLM glm4v.py)               here
 *   hidden_size         every tower Linear, conv's inputs     required, the width [VE]
 *   intermediate_size   mlp.fc1 / fc2                         required [VI]
 *   num_heads           EVA2CLIPAttention                     required; must divide the width
 *   num_hidden_layers   EVA2CLIPTransformer                   required, the block count
 *   image_size          the processor, the grid               required
 *   patch_size          patch_embedding.proj's kernel         required
 *   in_channels         patch_embedding.proj                  required
 *   num_positions       position_embedding's rows             required; must be
 *                                                             (image_size / patch_size)^2 + 1
 *                                                             (the forward adds them to the
 *                                                             class token and every patch)
 *   layer_norm_eps, hidden_act, dropout_prob, scaling_factor  required (read, not cut)
 *
 * The conv after the tower is vLLM's fixed Conv2d(kernel 2, stride 2): the merge size is 2
 * whatever vision_config says. The language-model keys are ChatGLM's (config_chatglm.c).
 */
#include <inttypes.h>
#include <stdbool.h>
#include <string.h>

#include "loader/config_int.h"
#include "loader/loader.h"

bool config_is_glm4v_old(json_t *root)
{
	const char *mt = json_string_value(json_object_get(root, "model_type"));
	const char *arch =
	    json_string_value(json_array_get(json_object_get(root, "architectures"), 0));
	return mt != NULL && arch != NULL && strcmp(mt, "chatglm") == 0 &&
	       strcmp(arch, "GLM4VForCausalLM") == 0;
}

static int required(json_t *v, wt_errbuf *err)
{
	static const char *const keys[] = {
	    "hidden_size",    "intermediate_size", "num_heads",    "num_hidden_layers",
	    "image_size",     "patch_size",        "in_channels",  "num_positions",
	    "layer_norm_eps", "hidden_act",        "dropout_prob", "scaling_factor"};
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		json_t *x = json_object_get(v, keys[i]);
		if (x == NULL || json_is_null(x))
			return wt_seterr(err, WT_ECORRUPT,
			                 "config.json: vision_config.%s is absent; vLLM's glm4v.py "
			                 "builds the EVA2CLIP tower of Namespace(**vision_config) "
			                 "and reads it (no default): give it as THUDM/glm-4v-9b's "
			                 "config.json does",
			                 keys[i]);
	}
	return WT_OK;
}

int config_parse_glm4v_old(json_t *root, json_t *v, ckpt_config *c, wt_errbuf *err)
{
	(void)root;
	int rv = required(v, err);
	int64_t npos = 0;
	if (rv == WT_OK)
		rv = config_get_int(v, "num_positions", 1, 1, &npos, err);
	if (rv != WT_OK)
		return rv;
	if (c->v_image_size <= 0 || c->v_patch_size <= 0 || c->v_image_size > (1 << 20) ||
	    c->v_image_size < c->v_patch_size)
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: vision_config.image_size %" PRId64
		                 " / patch_size %" PRId64 " is not an image grid",
		                 c->v_image_size, c->v_patch_size);
	int64_t side = c->v_image_size / c->v_patch_size;
	if (npos != side * side + 1)
		return wt_seterr(
		    err, WT_ECORRUPT,
		    "config.json: vision_config.num_positions %" PRId64
		    " is not (image_size %" PRId64 " / patch_size %" PRId64 ")^2 + 1 = %" PRId64
		    " (the class token and every patch): vLLM's EVA2CLIP adds "
		    "position_embedding to each; give \"num_positions\": %" PRId64,
		    npos, c->v_image_size, c->v_patch_size, side * side + 1, side * side + 1);
	c->v_num_pos = npos;
	c->v_num_attn_heads = c->v_num_heads; /* EVA2CLIP names its heads num_heads */
	c->v_spatial_merge_size = 2;          /* vLLM's conv: kernel 2, stride 2 */
	return WT_OK;
}
