/*
 * config_step3_vl.c — Step3-VL's config.json (model_type step3_vl: Step3VLConfig,
 * Step3VisionEncoderConfig and Step3TextConfig of stepfun-ai/step3, remote code; transformers
 * 4.57.1 has none: vLLM's copies in vllm/transformers_utils/configs/step3_vl.py, read at
 * fb6c0501), read as vLLM's step3_vl.py builds the model.
 *
 *   key                               Step3VLConfig        vLLM's step3_vl.py       here
 *   text_config                       Step3TextConfig()    the language model:      required (its
 *                                     when absent          Step3TextConfig whatever
 * moe_layers_enum: its model_type says      config_step3.c) vision_config                     the
 * class's          Step3VisionTransformer   the defaults defaults when absent below
 *   understand_projector_stride       1                    vit_downsampler's stride an integer >= 1
 *   projector_bias                    true                 vit_large_projector's    a boolean
 *                                                          bias
 *   vision_config: hidden_size 1792, intermediate_size 3072, output_hidden_size 4096,
 *   num_hidden_layers 63, num_attention_heads 16, num_channels 3, image_size 728,
 *   patch_size 14, hidden_act quick_gelu (get_act_fn's names only).
 *
 * The language model's view (config_view.c) lays text_config over the top level and takes
 * Step3TextConfig's defaults and checks (config_step3.c) whatever text_config's model_type.
 */
#include <stddef.h>
#include <string.h>
#include <strings.h>

#include "loader/config_int.h"
#include "loader/loader.h"

bool config_is_step3_vl(json_t *root)
{
	const char *mt = json_string_value(json_object_get(root, "model_type"));
	return mt != NULL && strcmp(mt, "step3_vl") == 0;
}

int config_step3_vl_need_text(json_t *root, wt_errbuf *err)
{
	if (!config_is_step3_vl(root) || json_is_object(json_object_get(root, "text_config")))
		return WT_OK;
	return wt_seterr(err, WT_ECORRUPT,
	                 "config.json: Step3-VL needs a text_config object: Step3VLConfig "
	                 "builds Step3TextConfig() without one, whose moe_layers_enum is a tuple "
	                 "vLLM's step3_text.py cannot read; give the checkpoint's text_config "
	                 "(hidden_size, num_hidden_layers, moe_layers_enum \"1,2,3\", ...)");
}

/* vLLM's get_act_fn names (vllm/model_executor/layers/activation.py _ACTIVATION_REGISTRY,
 * matched after .lower()). */
static const char *const s3v_acts[] = {"gelu", "gelu_fast", "gelu_new", "gelu_pytorch_tanh",
                                       "relu", "relu2",     "silu",     "quick_gelu",
                                       NULL};

static int s3v_act(json_t *v, wt_errbuf *err)
{
	json_t *a = json_object_get(v, "hidden_act");
	if (a == NULL || json_is_null(a))
		return WT_OK; /* quick_gelu */
	for (size_t k = 0; json_is_string(a) && s3v_acts[k] != NULL; k++)
		if (strcasecmp(json_string_value(a), s3v_acts[k]) == 0)
			return WT_OK;
	return wt_seterr(err, WT_EUNSUPPORTED,
	                 "config.json: vision_config.hidden_act is not an activation vLLM's "
	                 "get_act_fn builds (Step3VisionMLP): give \"quick_gelu\" "
	                 "(Step3VisionEncoderConfig's) or remove the key");
}

int config_parse_step3_vl(json_t *root, json_t *v, ckpt_config *c, wt_errbuf *err)
{
	static const config_int_key ints[] = {
	    {"hidden_size", 1792, offsetof(ckpt_config, v_hidden_size)},
	    {"intermediate_size", 3072, offsetof(ckpt_config, v_intermediate_size)},
	    {"output_hidden_size", 4096, offsetof(ckpt_config, v_out_hidden_size)},
	    {"num_hidden_layers", 63, offsetof(ckpt_config, v_num_layers)},
	    {"num_attention_heads", 16, offsetof(ckpt_config, v_num_attn_heads)},
	    {"num_channels", 3, offsetof(ckpt_config, v_in_chans)},
	    {"image_size", 728, offsetof(ckpt_config, v_image_size)},
	    {"patch_size", 14, offsetof(ckpt_config, v_patch_size)},
	};
	int rv = config_step3_vl_need_text(root, err);
	if (rv != WT_OK)
		return rv;
	if (v != NULL && !json_is_null(v) && !json_is_object(v))
		return wt_seterr(err, WT_ECORRUPT, "config.json: 'vision_config' is not an object");
	rv = config_read_ints(v, "vision_config", ints, CONFIG_NKEYS(ints), c, err);
	if (rv == WT_OK && json_is_object(v))
		rv = s3v_act(v, err);
	int64_t stride = 1;
	if (rv == WT_OK)
		rv = config_get_int(root, "understand_projector_stride", 1, 1, &stride, err);
	if (rv == WT_OK)
		rv = config_get_bool(root, "projector_bias", true, &c->mm_projector_bias, err);
	c->v_patch_given = true;
	c->has_vision = rv == WT_OK;
	return rv;
}
