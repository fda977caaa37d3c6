/*
 * config_bagel.c — BAGEL's config.json (model_type bagel: vLLM's BagelConfig,
 * vllm/transformers_utils/configs/bagel.py). ByteDance-Seed/BAGEL-7B-MoT ships llm_config.json and
 * vit_config.json but no config.json of this form: vLLM's BAGEL pull request (#28439) has the
 * user write one holding them as llm_config (with qk_norm true) and vit_config.
 *
 *   key                      BagelConfig's      read here as
 *   llm_config               Qwen2Config()      text_config, model_type qwen2: Qwen2Config's
 *                                               defaults for absent keys (BagelConfig builds
 *                                               Qwen2Config(**llm_config) whatever it says,
 *                                               vLLM Qwen2ForCausalLM of it)
 *   llm_config.qk_norm       (none: false)      use_qk_norm (qwen2.py's Qwen2Attention builds
 *                                               q_norm / k_norm [head_dim] when true)
 *   vit_config               SiglipVisionConfig vision_config, model_type siglip_vision_model
 *   vit_config.              12                 27 read as 26 (bagel.py's override: the
 *     num_hidden_layers                         release's tower has 26 blocks)
 *   vit_config.              (none)             absent: false (bagel.py sets it); true builds
 *     vision_use_head                           SiglipVisionModel's pooling head
 *   visual_und               true               false refused (no tower: not cut here)
 *
 * vit_max_num_patch_per_side sizes vit_pos_embed.pos_embed, a buffer vLLM computes (the
 * checkpoint's copy is skipped); connector_act, visual_gen, vae_config, latent_patch_size,
 * max_latent_size, interpolate_pos and timestep_shift are not layout (the generation branch is
 * skipped whole). Tied by llm_config.tie_word_embeddings alone (Qwen2Config's default false).
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "loader/config_int.h"
#include "loader/loader.h"

bool config_is_bagel(json_t *root)
{
	const char *mt = json_string_value(json_object_get(root, "model_type"));
	return mt != NULL && strcmp(mt, "bagel") == 0;
}

/* A sub-config of root (key), deep-copied: absent or null an empty object (the class's
 * defaults), not an object refused. */
static int sub_config(json_t *root, const char *key, json_t **out, wt_errbuf *err)
{
	json_t *s = json_object_get(root, key);
	if (s != NULL && !json_is_null(s) && !json_is_object(s))
		return wt_seterr(
		    err, WT_ECORRUPT,
		    "config.json: %s is not an object (BagelConfig builds %s of it)", key,
		    strcmp(key, "llm_config") == 0 ? "Qwen2Config" : "SiglipVisionConfig");
	*out = s == NULL || json_is_null(s) ? json_object() : json_deep_copy(s);
	return *out != NULL ? WT_OK : wt_seterr(err, WT_ENOMEM, "config.json: out of memory");
}

/* llm_config's model_type qwen2 and its qk_norm as use_qk_norm (the key the planner reads). */
static int lm_view(json_t *tc, wt_errbuf *err)
{
	json_t *qk = json_object_get(tc, "qk_norm");
	if (qk != NULL && !json_is_null(qk) && !json_is_boolean(qk))
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: llm_config.qk_norm is not true or false (vLLM's "
		                 "Qwen2Attention builds q_norm / k_norm when it is true; "
		                 "BAGEL-7B-MoT's is true)");
	json_object_del(tc, "use_qk_norm");
	if (json_object_set_new(tc, "model_type", json_string("qwen2")) != 0 ||
	    json_object_set_new(tc, "use_qk_norm", json_boolean(json_is_true(qk))) != 0)
		return wt_seterr(err, WT_ENOMEM, "config.json: out of memory");
	return WT_OK;
}

/* vit_config as bagel.py leaves it: 27 blocks read as 26, no pooling head unless asked. */
static int vit_view(json_t *v, wt_errbuf *err)
{
	json_t *nl = json_object_get(v, "num_hidden_layers");
	int rv = 0;
	if (json_is_integer(nl) && json_integer_value(nl) == 27)
		rv |= json_object_set_new(v, "num_hidden_layers", json_integer(26));
	json_t *uh = json_object_get(v, "vision_use_head");
	if (uh != NULL && !json_is_boolean(uh))
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: vit_config.vision_use_head is not true or false "
		                 "(vLLM's bagel.py sets it false when absent; true builds the "
		                 "pooling head)");
	if (uh == NULL)
		rv |= json_object_set_new(v, "vision_use_head", json_false());
	rv |= json_object_set_new(v, "model_type", json_string("siglip_vision_model"));
	return rv == 0 ? WT_OK : wt_seterr(err, WT_ENOMEM, "config.json: out of memory");
}

int config_bagel_root(json_t *root, json_t **out, wt_errbuf *err)
{
	json_t *und = json_object_get(root, "visual_und");
	if (und != NULL && !json_is_true(und))
		return wt_seterr(
		    err, WT_EUNSUPPORTED,
		    "config.json: visual_und is not true: vLLM's bagel.py then builds no "
		    "vit_model / connector / vit_pos_embed, which is not cut here; "
		    "set visual_und true (BAGEL-7B-MoT's)");
	json_t *tc = NULL, *vc = NULL, *v = NULL;
	int rv = sub_config(root, "llm_config", &tc, err);
	if (rv == WT_OK)
		rv = sub_config(root, "vit_config", &vc, err);
	if (rv == WT_OK)
		rv = lm_view(tc, err);
	if (rv == WT_OK)
		rv = vit_view(vc, err);
	if (rv == WT_OK && (v = json_copy(root)) != NULL) {
		json_object_del(v, "llm_config"); /* -1 when absent */
		json_object_del(v, "vit_config");
	}
	if (rv == WT_OK && (v == NULL || json_object_set(v, "text_config", tc) != 0 ||
	                    json_object_set(v, "vision_config", vc) != 0))
		rv = wt_seterr(err, WT_ENOMEM, "config.json: out of memory");
	json_decref(tc);
	json_decref(vc);
	if (rv != WT_OK) {
		json_decref(v);
		return rv;
	}
	*out = v;
	return WT_OK;
}

void config_parse_bagel(json_t *v, ckpt_config *c)
{
	/* SiglipVisionTransformer builds the head unless the key is false (the flat view set it
	 * false where vit_config had none, as bagel.py does) */
	c->v_use_head = !json_is_false(json_object_get(v, "vision_use_head"));
	snprintf(c->lm_model_type, sizeof(c->lm_model_type), "qwen2");
}
