/*
 * config_dbrx.c — DBRX's config keys (model_type dbrx, DbrxForCausalLM: databricks/dbrx-base,
 * dbrx-instruct), read as transformers 4.57.1's DbrxConfig reads them.
 *
 * DbrxConfig names its dims d_model, n_heads, n_layers, max_seq_len (its attribute_map makes
 * them hidden_size, num_attention_heads, num_hidden_layers, max_position_embeddings) and
 * nests the rest: attn_config {kv_n_heads, rope_theta, clip_qkv, attn_pdrop} and ffn_config
 * {ffn_hidden_size, moe_num_experts, moe_top_k, moe_normalize_expert_weights, ffn_act_fn,
 * ...}. In the language-model view of a model_type dbrx config they are laid over the keys
 * every family reads (num_key_value_heads, rope_theta, clip_qkv, num_local_experts,
 * num_experts_per_tok, moe_intermediate_size and intermediate_size = ffn_hidden_size,
 * moe_normalize_expert_weights), before the class defaults fill what is absent. A nested
 * config that is not an object, tie_word_embeddings true (DbrxConfig raises on it) and an
 * ffn_act_fn other than silu (vLLM's experts run silu) are refused naming the key.
 */
#include <string.h>

#include "loader/config_int.h"

static int set_from(json_t *v, json_t *src, const char *from, const char *to, wt_errbuf *err)
{
	json_t *x = src ? json_object_get(src, from) : NULL;
	if (x == NULL || json_is_null(x))
		return WT_OK;
	if (json_object_set(v, to, x) != 0)
		return wt_seterr(err, WT_ENOMEM, "config.json: out of memory");
	return WT_OK;
}

static int nested(json_t *v, const char *key, json_t **out, wt_errbuf *err)
{
	json_t *x = json_object_get(v, key);
	*out = json_is_object(x) ? x : NULL;
	if (x != NULL && !json_is_null(x) && !json_is_object(x))
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: '%s' is not an object (DbrxConfig nests its %s keys "
		                 "there)",
		                 key, strcmp(key, "attn_config") == 0 ? "attention" : "MoE");
	return WT_OK;
}

int config_dbrx_keys(json_t *v, wt_errbuf *err)
{
	static const char *const top[][2] = {{"d_model", "hidden_size"},
	                                     {"n_heads", "num_attention_heads"},
	                                     {"n_layers", "num_hidden_layers"},
	                                     {"max_seq_len", "max_position_embeddings"}};
	static const char *const attn[][2] = {{"kv_n_heads", "num_key_value_heads"},
	                                      {"rope_theta", "rope_theta"},
	                                      {"clip_qkv", "clip_qkv"}};
	static const char *const ffn[][2] = {
	    {"moe_num_experts", "num_local_experts"},
	    {"moe_top_k", "num_experts_per_tok"},
	    {"ffn_hidden_size", "moe_intermediate_size"},
	    {"ffn_hidden_size", "intermediate_size"},
	    {"moe_normalize_expert_weights", "moe_normalize_expert_weights"}};
	json_t *tie = json_object_get(v, "tie_word_embeddings");
	if (json_is_true(tie))
		return wt_seterr(
		    err, WT_EUNSUPPORTED,
		    "config.json: tie_word_embeddings true; DbrxConfig refuses it (DBRX "
		    "has its own lm_head): set it false or remove it");
	json_t *a = NULL, *f = NULL;
	int rv = nested(v, "attn_config", &a, err);
	if (rv == WT_OK)
		rv = nested(v, "ffn_config", &f, err);
	/* vLLM's dbrx.py runs every expert as silu(x w1^T) * (x v1^T) (fused_moe), whatever
	 * ffn_act_fn says */
	json_t *act = f ? json_object_get(f, "ffn_act_fn") : NULL;
	const char *an =
	    json_is_object(act) ? json_string_value(json_object_get(act, "name")) : NULL;
	if (rv == WT_OK && act != NULL && !json_is_null(act) &&
	    (an == NULL || strcmp(an, "silu") != 0))
		return wt_seterr(
		    err, WT_EUNSUPPORTED,
		    "config.json: ffn_config.ffn_act_fn is not {\"name\": \"silu\"} "
		    "(%s); vLLM's dbrx.py runs its experts with silu: set it so or remove "
		    "it",
		    an ? an : "no name");
	for (size_t i = 0; i < sizeof(top) / sizeof(top[0]) && rv == WT_OK; i++)
		rv = set_from(v, v, top[i][0], top[i][1], err);
	for (size_t i = 0; i < sizeof(attn) / sizeof(attn[0]) && rv == WT_OK; i++)
		rv = set_from(v, a, attn[i][0], attn[i][1], err);
	for (size_t i = 0; i < sizeof(ffn) / sizeof(ffn[0]) && rv == WT_OK; i++)
		rv = set_from(v, f, ffn[i][0], ffn[i][1], err);
	return rv;
}
