/*
 * config_bailing.c — Bailing MoE's config keys (model_type bailing_moe, BailingMoeForCausalLM:
 * the remote BailingMoeConfig, configuration_bailing_moe.py, of which vLLM keeps a copy in
 * transformers_utils/configs/bailing_moe.py), read as the first vLLM bailing_moe.py builds the
 * model. BailingMoeConfig's dims: config_defaults_classic.c.
 *
 *   key                    BailingMoeConfig   here
 *   num_key_value_heads    0                  required (0 builds no kv heads)
 *   moe_intermediate_size  None               required (FusedMoE's and the shared MLP's width)
 *   num_shared_experts     0                  read as n_shared_experts (shared MLP
 *                                             num_shared_experts x moe_intermediate_size)
 *   use_qkv_bias           false              read as attention_bias (query_key_value.bias)
 *   use_bias               true               must be false: vLLM builds dense and the shared
 *                                             MLP with biases then, but FusedMoE's stacks none
 *                                             while the remote experts carry them; no Ling
 *                                             release sets it
 *   tie_word_embeddings    false              must be false: that vLLM's tied head reads an
 *                                             attribute BailingMoeForCausalLM lacks
 *   first_k_dense_replace  0                  must be 0: that vLLM builds every layer MoE
 *   use_qk_norm            (none)             must be false or absent (no q/k norms there)
 *   hidden_act             "silu"             must be silu (SiluAndMul whatever it says)
 *   norm_head              false              read by nothing: vLLM's normalization of
 *                                             lm_head.weight is never reached (family_bailing.c)
 */
#include <string.h>

#include "loader/config_int.h"
#include "loader/loader.h"

static int bailing_required(json_t *v, const char *key, wt_errbuf *err)
{
	json_t *k = json_object_get(v, key);
	if (k == NULL || json_is_null(k))
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: %s is missing; BailingMoeConfig's default (%s) "
		                 "builds no model vLLM can load: give the checkpoint's value",
		                 key, strcmp(key, "num_key_value_heads") == 0 ? "0" : "None");
	return WT_OK;
}

/* use_qkv_bias -> attention_bias, num_shared_experts -> n_shared_experts */
static int bailing_alias(json_t *v, const char *from, const char *to, wt_errbuf *err)
{
	json_t *f = json_object_get(v, from);
	if (f == NULL || json_is_null(f))
		return WT_OK;
	if (json_object_set(v, to, f) != 0)
		return wt_seterr(err, WT_ENOMEM, "config.json: out of memory");
	return WT_OK;
}

static int bailing_refusals(json_t *v, wt_errbuf *err)
{
	int rv =
	    config_refuse_bool(v, "use_bias", true, true,
	                       "vLLM's bailing_moe.py then gives attention.dense and the "
	                       "shared experts biases but the routed experts' stacks none, and "
	                       "no Ling release sets it: give false (BailingMoeConfig's default "
	                       "is true)",
	                       err);
	if (rv == WT_OK)
		rv = config_refuse_bool(v, "tie_word_embeddings", false, true,
		                        "vLLM's bailing_moe.py ties lm_head to an attribute "
		                        "BailingMoeForCausalLM does not have: give false",
		                        err);
	if (rv == WT_OK)
		rv = config_refuse_bool(v, "use_qk_norm", false, true,
		                        "vLLM's bailing_moe.py (BailingMoeForCausalLM) has no q/k "
		                        "norms: remove the key",
		                        err);
	json_t *k = json_object_get(v, "first_k_dense_replace");
	if (rv == WT_OK && k != NULL && !json_is_null(k) &&
	    !(json_is_integer(k) && json_integer_value(k) == 0))
		rv = wt_seterr(err, WT_EUNSUPPORTED,
		               "config.json: first_k_dense_replace is not 0; vLLM's bailing_moe.py "
		               "builds every layer as an MoE block: give 0 or remove the key");
	json_t *act = json_object_get(v, "hidden_act");
	if (rv == WT_OK && act != NULL && !json_is_null(act) &&
	    (!json_is_string(act) || strcmp(json_string_value(act), "silu") != 0))
		rv =
		    wt_seterr(err, WT_EUNSUPPORTED,
		              "config.json: hidden_act is not \"silu\"; vLLM's bailing_moe.py runs "
		              "SiluAndMul whatever it says: give \"silu\" or remove the key");
	return rv;
}

int config_bailing_keys(json_t *v, wt_errbuf *err)
{
	int rv = bailing_required(v, "num_key_value_heads", err);
	if (rv == WT_OK)
		rv = bailing_required(v, "moe_intermediate_size", err);
	if (rv == WT_OK)
		rv = bailing_refusals(v, err);
	if (rv == WT_OK)
		rv = bailing_alias(v, "use_qkv_bias", "attention_bias", err);
	if (rv == WT_OK)
		rv = bailing_alias(v, "num_shared_experts", "n_shared_experts", err);
	return rv;
}
