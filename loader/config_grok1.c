/*
 * config_grok1.c — Grok-1's config keys (model_type grok-1, Grok1ModelForCausalLM:
 * hpcai-tech/grok-1; remote code, no transformers class), read as vLLM's grok1.py reads them,
 * what it cannot build refused naming the key. Grok1Config's defaults for absent keys are
 * config_defaults_classic.c's (grok1_defaults).
 *
 *   key                          absent           accepted
 *   num_experts_per_tok          2                1..num_experts
 *   attn_output_multiplier       0.0884 (class)   a positive number (o_proj's output scale)
 *   embedding_multiplier_scale   78.38 (class)    a positive number (the embeddings' scale)
 *   output_multiplier_scale      0.577 (class)    a positive number (the logits' scale)
 *   attn_logit_softcapping       30 (vLLM)        a number (<= 0: no soft-cap, vLLM's max(.., 0))
 *   rope_scaling                 none             none: Grok-1 has no RoPE scaling here
 *
 * max_attn_value (Grok1Config: 30) is not read: vLLM's soft-cap is attn_logit_softcapping. The
 * dims (hidden_size, num_attention_heads, num_key_value_heads, intermediate_size: each
 * expert's, num_experts) are the common keys of config.c; head_dim must be hidden_size /
 * num_attention_heads (the planner's check, family_grok1.c).
 */
#include <string.h>

#include "loader/config_int.h"
#include "loader/loader.h"

static int need_number(json_t *root, const char *key, bool positive, wt_errbuf *err)
{
	json_t *v = json_object_get(root, key);
	if (v == NULL || json_is_null(v))
		return WT_OK;
	if (!json_is_number(v) || (positive && !(json_number_value(v) > 0.0)))
		return wt_seterr(err, WT_ECORRUPT, "config.json: %s must be a %snumber", key,
		                 positive ? "positive " : "");
	return WT_OK;
}

int config_parse_grok1(json_t *root, const ckpt_config *c, wt_errbuf *err)
{
	static const char *const scales[] = {"attn_output_multiplier", "embedding_multiplier_scale",
	                                     "output_multiplier_scale"};
	int rv = WT_OK;
	for (size_t i = 0; i < sizeof(scales) / sizeof(scales[0]) && rv == WT_OK; i++)
		rv = need_number(root, scales[i], true, err);
	if (rv == WT_OK)
		rv = need_number(root, "attn_logit_softcapping", false, err);
	json_t *rs = json_object_get(root, "rope_scaling");
	if (rv == WT_OK && rs != NULL && !json_is_null(rs))
		rv = wt_seterr(err, WT_EUNSUPPORTED,
		               "config.json: rope_scaling is set; Grok-1 is served here with plain "
		               "RoPE (the releases have none): remove it");
	int64_t k = -1;
	if (rv == WT_OK)
		rv = config_get_int(root, "num_experts_per_tok", 2, 1, &k, err);
	if (rv == WT_OK && k > c->num_experts)
		rv =
		    wt_seterr(err, WT_ECORRUPT,
		              "config.json: num_experts_per_tok %lld is more than num_experts %lld "
		              "(vLLM's FusedMoE picks top-k of them; Grok-1: 2 of 8): lower it",
		              (long long)k, (long long)c->num_experts);
	return rv;
}
