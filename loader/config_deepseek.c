/*
 * config_deepseek.c — DeepSeek-MoE's config keys (model_type deepseek, DeepseekForCausalLM:
 * deepseek-ai/deepseek-moe-16b-base / -chat, the remote DeepseekConfig of
 * configuration_deepseek.py), read as vLLM's deepseek_v2.py builds the model (its
 * DeepseekForCausalLM is DeepseekV2ForCausalLM with DeepseekAttention). DeepseekConfig's dims:
 * config_defaults_remote.c.
 *
 *   key                   DeepseekConfig  here
 *   hidden_act            "silu"          must be silu (DeepseekV2MLP / DeepseekV2MoE raise on
 *                                         anything else)
 *   attention_bias        false           must be false: DeepseekAttention's qkv_proj and
 *                                         o_proj have no bias
 *   tie_word_embeddings   false           must be false: DeepseekV2ForCausalLM's ParallelLMHead
 *                                         is never tied (it loads lm_head.weight)
 *   scoring_func          "softmax"       must be softmax (the remote MoEGate's only one)
 *   num_experts_per_tok   None            required when n_routed_experts is given (FusedMoE's
 *                                         top_k)
 *   n_routed_experts      None            None or 0: no MoE layer (vLLM's is_moe_layer)
 *   n_shared_experts      None            None or 0: no shared experts
 *   norm_topk_prob        false           read by the reference (the JSON bool's absent value)
 *
 * head_dim other than hidden_size / num_attention_heads is the planner's refusal
 * (family_deepseek.c).
 */
#include <stdbool.h>
#include <string.h>

#include "loader/config_int.h"
#include "loader/loader.h"

static int deepseek_string(json_t *v, const char *key, const char *want, const char *why,
                           wt_errbuf *err)
{
	json_t *k = json_object_get(v, key);
	if (k == NULL || json_is_null(k))
		return WT_OK;
	if (!json_is_string(k) || strcmp(json_string_value(k), want) != 0)
		return wt_seterr(err, WT_EUNSUPPORTED, "config.json: %s is not \"%s\"; %s", key,
		                 want, why);
	return WT_OK;
}

static bool given(json_t *v, const char *key)
{
	json_t *k = json_object_get(v, key);
	return k != NULL && !json_is_null(k);
}

int config_deepseek_keys(json_t *v, wt_errbuf *err)
{
	int rv = deepseek_string(v, "hidden_act", "silu",
	                         "vLLM's deepseek_v2.py runs only silu in DeepSeek-MoE's MLPs and "
	                         "experts: give \"silu\" or remove the key",
	                         err);
	if (rv == WT_OK)
		rv = deepseek_string(
		    v, "scoring_func", "softmax",
		    "DeepSeek-MoE's router (MoEGate) scores with softmax only: give "
		    "\"softmax\" or remove the key",
		    err);
	if (rv == WT_OK)
		rv = config_refuse_bool(v, "attention_bias", false, true,
		                        "vLLM's deepseek_v2.py builds DeepSeek-MoE's attention "
		                        "(DeepseekAttention) without biases: give false",
		                        err);
	if (rv == WT_OK)
		rv =
		    config_refuse_bool(v, "tie_word_embeddings", false, true,
		                       "vLLM's deepseek_v2.py never ties DeepSeek-MoE's lm_head to "
		                       "the embeddings (it loads lm_head.weight): give false",
		                       err);
	if (rv == WT_OK && given(v, "n_routed_experts") && !given(v, "num_experts_per_tok"))
		rv = wt_seterr(
		    err, WT_ECORRUPT,
		    "config.json: n_routed_experts is given but num_experts_per_tok is "
		    "missing (DeepseekConfig's default is None, which vLLM's FusedMoE "
		    "cannot route with); give the experts per token (deepseek-moe-16b: 6)");
	return rv;
}
