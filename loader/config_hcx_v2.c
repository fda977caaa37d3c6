/*
 * config_hcx_v2.c — HyperCLOVAX-SEED-Think's config keys (HCXVisionV2ForCausalLM, model_type
 * vlm: the remote HCXVisionConfig of naver-hyperclovax/HyperCLOVAX-SEED-Think-32B), read as
 * vLLM's hyperclovax_vision_v2.py builds the model: Qwen2_5_VisionTransformer of vision_config
 * (Qwen2_5_VLVisionConfig's defaults: config_defaults_vl.c), nn.Linear(out_hidden_size,
 * text_config.hidden_size) as mm_projector, init_vllm_registered_model of text_config.
 *
 * | key                          | default | read as                                        |
 * |------------------------------|---------|------------------------------------------------|
 * | text_config.model_type       | none    | lm_model_type: hyperclovax (the release's,     |
 * |                              |         | vLLM's hyperclovax.py) or llama; others refused|
 * | text_config.use_post_norm    | false   | hcx_post_norm (hyperclovax: post_norm1 / 2)    |
 * | vision_config.model_type     | none    | v_model_type (qwen2_5_vl or qwen2_5_vl_visual) |
 *
 * mm_projector_type, use_nth_layer and the C-Abstractor's keys are not read (vLLM's V2 class
 * builds a Linear whatever they say).
 */
#include <stdio.h>
#include <string.h>

#include "loader/config_int.h"
#include "loader/loader.h"

bool config_is_hcx_v2(json_t *root)
{
	const char *mt = json_string_value(json_object_get(root, "model_type"));
	return mt != NULL && strcmp(mt, "vlm") == 0;
}

/* text_config's model_type: hyperclovax or llama (vLLM's registry builds either). */
static int text_type(json_t *tc, char *buf, size_t n, wt_errbuf *err)
{
	const char *mt = json_string_value(json_object_get(tc, "model_type"));
	if (!json_is_object(tc) || mt == NULL)
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: text_config.model_type is missing: vLLM's "
		                 "hyperclovax_vision_v2.py builds the language model by it "
		                 "(HyperCLOVAX-SEED-Think-32B's: hyperclovax)");
	if (strcmp(mt, "hyperclovax") != 0 && strcmp(mt, "llama") != 0)
		return wt_seterr(
		    err, WT_EUNSUPPORTED,
		    "config.json: text_config.model_type '%s': HCXVisionV2ForCausalLM's "
		    "language model is cut here as hyperclovax (the release's) or "
		    "llama; give one of them",
		    mt);
	snprintf(buf, n, "%s", mt);
	return WT_OK;
}

int config_parse_hcx_v2(json_t *root, ckpt_config *c, wt_errbuf *err)
{
	json_t *tc = json_object_get(root, "text_config");
	int rv = text_type(tc, c->lm_model_type, sizeof(c->lm_model_type), err);
	if (rv != WT_OK)
		return rv;
	const char *vt = json_string_value(
	    json_object_get(json_object_get(root, "vision_config"), "model_type"));
	snprintf(c->v_model_type, sizeof(c->v_model_type), "%s", vt != NULL ? vt : "");
	c->hcx_post_norm = false;
	if (strcmp(c->lm_model_type, "hyperclovax") != 0)
		return WT_OK; /* LlamaForCausalLM builds no post norms */
	json_t *pn = json_object_get(tc, "use_post_norm");
	if (pn != NULL && !json_is_boolean(pn) && !json_is_null(pn))
		return wt_seterr(
		    err, WT_ECORRUPT,
		    "config.json: text_config.use_post_norm is not true, false or null; "
		    "vLLM builds each layer's post_norm1 / post_norm2 when it is true");
	c->hcx_post_norm = json_is_true(pn);
	return WT_OK;
}
