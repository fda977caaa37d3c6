/*
 * config_afmoe.c — AFMoE's config keys (model_type afmoe, AfmoeForCausalLM: Arcee's Trinity;
 * transformers 4.57.1 has no AfmoeConfig, so the class is vLLM's own copy,
 * vllm/transformers_utils/configs/afmoe.py), read as vLLM's afmoe.py builds the model. The
 * class's dims: config_defaults_remote.c.
 *
 *   key                  AfmoeConfig   here
 *   num_dense_layers     1             first_k_dense_replace (AfmoeDecoderLayer: MoE from it on)
 *   num_shared_experts   2             n_shared_experts; x moe_intermediate_size (1408) as
 *                                      shared_expert_intermediate_size (one shared LlamaMLP)
 *   score_func           "sigmoid"     scoring_func; "sigmoid" or "softmax" (FusedMoE's two)
 *   route_norm           true          norm_topk_prob (vLLM renormalizes only with sigmoid)
 *   route_scale          1.0           routed_scaling_factor
 *   hidden_act           "silu"        must be silu (AfmoeMoE raises otherwise)
 *   tie_word_embeddings  false         must be false (the lm_head is never tied to the
 *                                      embedding: a tied checkpoint has no head vLLM loads)
 * layer_types (None in the class; vLLM indexes it) is required by the planner's family check.
 */
#include <string.h>

#include "loader/config_int.h"
#include "loader/loader.h"

static int af_set(json_t *v, const char *key, json_t *val, wt_errbuf *err)
{
	if (val == NULL || json_object_set_new(v, key, val) != 0)
		return wt_seterr(err, WT_ENOMEM, "config.json: out of memory");
	return WT_OK;
}

/* num_dense_layers and the shared experts' width. */
static int af_layers(json_t *v, wt_errbuf *err)
{
	int64_t nd = 1, ns = 2, moe = 1408;
	int rv = config_get_int(v, "num_dense_layers", 1, 0, &nd, err);
	if (rv == WT_OK)
		rv = config_get_int(v, "num_shared_experts", 2, 0, &ns, err);
	if (rv == WT_OK)
		rv = config_get_int(v, "moe_intermediate_size", 1408, 1, &moe, err);
	if (rv == WT_OK && (ns > 4096 || moe > (INT64_C(1) << 24)))
		rv = wt_seterr(err, WT_ECORRUPT,
		               "config.json: num_shared_experts %lld x moe_intermediate_size %lld "
		               "is not a model's",
		               (long long)ns, (long long)moe);
	if (rv == WT_OK)
		rv = af_set(v, "first_k_dense_replace", json_integer(nd), err);
	if (rv == WT_OK)
		rv = af_set(v, "n_shared_experts", json_integer(ns), err);
	if (rv == WT_OK)
		rv = af_set(v, "shared_expert_intermediate_size", json_integer(ns * moe), err);
	return rv;
}

/* score_func, route_norm, route_scale as the DeepSeek-V3 router keys. */
static int af_router(json_t *v, wt_errbuf *err)
{
	json_t *sf = json_object_get(v, "score_func");
	const char *s = "sigmoid";
	if (sf != NULL && !json_is_null(sf)) {
		if (!json_is_string(sf) || (strcmp(json_string_value(sf), "sigmoid") != 0 &&
		                            strcmp(json_string_value(sf), "softmax") != 0))
			return wt_seterr(
			    err, WT_EUNSUPPORTED,
			    "config.json: score_func is not \"sigmoid\" or \"softmax\"; "
			    "vLLM's FusedMoE scores the router by one of them: give "
			    "\"sigmoid\" (AfmoeConfig's default)");
		s = json_string_value(sf);
	}
	bool sig = strcmp(s, "sigmoid") == 0, norm = true;
	double scale = 1.0;
	int rv = config_get_bool(v, "route_norm", true, &norm, err);
	if (rv == WT_OK)
		rv = config_get_pos_real(v, "route_scale", 1.0, &scale, err);
	if (rv == WT_OK)
		rv = af_set(v, "scoring_func", json_string(s), err);
	if (rv == WT_OK) /* renormalize = route_norm if sigmoid else False */
		rv = af_set(v, "norm_topk_prob", json_boolean(sig && norm), err);
	if (rv == WT_OK)
		rv = af_set(v, "routed_scaling_factor", json_real(scale), err);
	return rv;
}

int config_afmoe_keys(json_t *v, wt_errbuf *err)
{
	json_t *act = json_object_get(v, "hidden_act");
	if (act != NULL && !json_is_null(act) &&
	    (!json_is_string(act) || strcmp(json_string_value(act), "silu") != 0))
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "config.json: hidden_act is not \"silu\"; vLLM's afmoe.py raises "
		                 "\"Only silu is supported for now\": give \"silu\"");
	int rv = config_refuse_bool(v, "tie_word_embeddings", false, true,
	                            "vLLM's AfmoeForCausalLM never ties its lm_head to "
	                            "embed_tokens (no Trinity release ties): give false",
	                            err);
	if (rv == WT_OK)
		rv = af_layers(v, err);
	if (rv == WT_OK)
		rv = af_router(v, err);
	return rv;
}
