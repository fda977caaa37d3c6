/*
 * config_bailing_v2.c — Bailing MoE V2's config keys (model_type bailing_moe_v2,
 * BailingMoeV2ForCausalLM: Ling 2.0's remote BailingMoeV2Config, configuration_bailing_moe_v2.py;
 * vLLM keeps no copy, so the signature is the one the Ming-Omni repositories carry over from it,
 * stored beside vLLM-Omni), read as the later vLLM bailing_moe.py builds the model (its
 * getattr defaults for the keys the class does not set). BailingMoeV2Config's dims:
 * config_defaults_remote.c.
 *
 *   key                            BailingMoeV2Config / vLLM  here
 *   num_key_value_heads            0                required (0 builds no kv heads)
 *   moe_intermediate_size          None             required (FusedMoE's width)
 *   intermediate_size              None             required when first_k_dense_replace > 0
 *                                                   (the dense BailingMLP's width)
 *   num_shared_experts             0                shared MLP num_shared_experts x
 *   moe_shared_expert_intermediate_size  (absent)   this width, else moe_intermediate_size
 *                                                   (read as shared_expert_intermediate_size)
 *   use_qkv_bias                   false            read as attention_bias
 *   use_bias                       true             must be false (as bailing_moe: FusedMoE's
 *                                                   stacks get no bias; no Ling release sets it)
 *   tie_word_embeddings            false            must be false (no Ling 2.0 release ties; not
 *                                                   cut here)
 *   use_qk_norm / use_rmsnorm      false / false    use_qk_norm true needs use_rmsnorm true:
 *                                                   vLLM builds nn.LayerNorm q/k norms
 *                                                   otherwise, whose biases no checkpoint has
 *   moe_router_enable_expert_bias  false            must be true (mlp.gate.expert_bias)
 *   score_function                 None (softmax)   must be "sigmoid" (vLLM asserts sigmoid
 *                                                   with the expert bias; None routes softmax)
 *   hidden_act                     "silu"           must be silu (SiluAndMul)
 */
#include <string.h>

#include "loader/config_int.h"
#include "loader/loader.h"

static int b2_required(json_t *v, const char *key, const char *dflt, wt_errbuf *err)
{
	json_t *k = json_object_get(v, key);
	if (k == NULL || json_is_null(k))
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: %s is missing; BailingMoeV2Config's default (%s) "
		                 "builds no model vLLM can load: give the checkpoint's value",
		                 key, dflt);
	return WT_OK;
}

/* An integer key >= 0, dflt when absent; null or not an integer refused naming it. */
static int b2_int(json_t *v, const char *key, json_int_t dflt, json_int_t *out, wt_errbuf *err)
{
	json_t *k = json_object_get(v, key);
	*out = dflt;
	if (k == NULL)
		return WT_OK;
	if (!json_is_integer(k) || json_integer_value(k) < 0)
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: %s is not an integer >= 0 (vLLM's bailing_moe.py "
		                 "multiplies it into the shared experts' width)",
		                 key);
	*out = json_integer_value(k);
	return WT_OK;
}

/* num_shared_experts x (moe_shared_expert_intermediate_size, else moe_intermediate_size) as
 * shared_expert_intermediate_size, num_shared_experts as n_shared_experts. */
static int b2_shared(json_t *v, wt_errbuf *err)
{
	json_int_t ns = 0, moe = 0, w = 0;
	int rv = b2_int(v, "num_shared_experts", 0, &ns, err);
	if (rv == WT_OK)
		rv = b2_int(v, "moe_intermediate_size", 0, &moe, err);
	if (rv == WT_OK)
		rv = b2_int(v, "moe_shared_expert_intermediate_size", moe, &w, err);
	if (rv == WT_OK && (ns > 4096 || w > (1ll << 24)))
		rv = wt_seterr(err, WT_ECORRUPT,
		               "config.json: num_shared_experts %lld x %lld is not a model's",
		               (long long)ns, (long long)w);
	if (rv == WT_OK &&
	    (json_object_set_new(v, "n_shared_experts", json_integer(ns)) != 0 ||
	     json_object_set_new(v, "shared_expert_intermediate_size", json_integer(ns * w)) != 0))
		rv = wt_seterr(err, WT_ENOMEM, "config.json: out of memory");
	return rv;
}

static bool b2_is_string(json_t *v, const char *key, const char *want)
{
	json_t *k = json_object_get(v, key);
	return json_is_string(k) && strcmp(json_string_value(k), want) == 0;
}

static int b2_router(json_t *v, wt_errbuf *err)
{
	int rv = config_refuse_bool(
	    v, "moe_router_enable_expert_bias", false, false,
	    "this cut reads Ling 2.0's sigmoid router with its mlp.gate.expert_bias (every Ling "
	    "2.0 "
	    "release sets it true); a softmax-routed Ling is BailingMoeForCausalLM's",
	    err);
	if (rv == WT_OK && !b2_is_string(v, "score_function", "sigmoid"))
		rv = wt_seterr(err, WT_EUNSUPPORTED,
		               "config.json: score_function is not \"sigmoid\"; vLLM's "
		               "bailing_moe.py routes by sigmoid with the expert bias "
		               "(moe_router_enable_expert_bias) and otherwise asserts or routes by "
		               "softmax: give \"sigmoid\"");
	return rv;
}

static int b2_refusals(json_t *v, wt_errbuf *err)
{
	int rv =
	    config_refuse_bool(v, "use_bias", true, true,
	                       "vLLM's bailing_moe.py then gives attention.dense and the "
	                       "shared experts biases but the routed experts' stacks none, and "
	                       "no Ling release sets it: give false (BailingMoeV2Config's "
	                       "default is true)",
	                       err);
	if (rv == WT_OK)
		rv = config_refuse_bool(v, "tie_word_embeddings", false, true,
		                        "no Ling 2.0 release ties its head and a tied "
		                        "BailingMoeV2ForCausalLM is not cut here: give false",
		                        err);
	bool qk = false;
	if (rv == WT_OK)
		rv = config_get_bool(v, "use_qk_norm", false, &qk, err);
	if (rv == WT_OK && qk)
		rv = config_refuse_bool(v, "use_rmsnorm", false, false,
		                        "with use_qk_norm vLLM's bailing_moe.py then builds "
		                        "nn.LayerNorm q/k norms (eps 1e-6, a bias no checkpoint "
		                        "has) where Ling 2.0's are RMSNorms: give true",
		                        err);
	json_t *act = json_object_get(v, "hidden_act");
	if (rv == WT_OK && act != NULL && !json_is_null(act) &&
	    (!json_is_string(act) || strcmp(json_string_value(act), "silu") != 0))
		rv =
		    wt_seterr(err, WT_EUNSUPPORTED,
		              "config.json: hidden_act is not \"silu\"; vLLM's bailing_moe.py runs "
		              "SiluAndMul whatever it says: give \"silu\" or remove the key");
	if (rv == WT_OK)
		rv = b2_router(v, err);
	return rv;
}

int config_bailing_v2_keys(json_t *v, wt_errbuf *err)
{
	int rv = b2_required(v, "num_key_value_heads", "0", err);
	if (rv == WT_OK)
		rv = b2_required(v, "moe_intermediate_size", "None", err);
	json_int_t k = 0;
	if (rv == WT_OK)
		rv = b2_int(v, "first_k_dense_replace", 0, &k, err);
	if (rv == WT_OK && k > 0)
		rv = b2_required(v, "intermediate_size", "None", err);
	if (rv == WT_OK)
		rv = b2_refusals(v, err);
	if (rv == WT_OK) {
		json_t *f = json_object_get(v, "use_qkv_bias");
		if (f != NULL && !json_is_null(f) && json_object_set(v, "attention_bias", f) != 0)
			rv = wt_seterr(err, WT_ENOMEM, "config.json: out of memory");
	}
	if (rv == WT_OK)
		rv = b2_shared(v, err);
	return rv;
}
