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
 * MPT's keys (config_mpt_keys) and Persimmon's layer_norm_eps check (config_persimmon_eps)
 * are here too.
 */
#include <stdlib.h>
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
		return wt_seterr(
		    err, WT_ECORRUPT,
		    "config.json: '%s' is not an object (the config class nests its %s "
		    "keys there)",
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

/* A key of MPT's that vLLM's mpt.py asserts on or ignores, refused unless it holds what the
 * released checkpoints hold (absent is MptConfig's default, which does). */
static int mpt_refuse(json_t *o, const char *pre, const char *key, const char *why,
                      bool (*ok)(json_t *), wt_errbuf *err)
{
	json_t *x = o ? json_object_get(o, key) : NULL;
	if (x == NULL || ok(x))
		return WT_OK;
	char *val = json_dumps(x, JSON_ENCODE_ANY | JSON_COMPACT);
	int rv = wt_seterr(err, WT_EUNSUPPORTED, "config.json: %s%s is %s on MPT; %s", pre, key,
	                   val ? val : "?", why);
	free(val);
	return rv;
}

static bool is_true(json_t *x)
{
	return json_is_true(x);
}
static bool is_false(json_t *x)
{
	return json_is_false(x);
}
static bool is_null(json_t *x)
{
	return json_is_null(x);
}
static bool is_one(json_t *x)
{
	return json_is_number(x) && json_number_value(x) == 1.0;
}
static bool is_eps(json_t *x)
{
	return json_is_number(x) && json_number_value(x) == 1e-5;
}
static bool is_lpln(json_t *x)
{
	return json_is_string(x) && strcmp(json_string_value(x), "low_precision_layernorm") == 0;
}

int config_mpt_keys(json_t *v, wt_errbuf *err)
{
	static const char *const top[][2] = {{"d_model", "hidden_size"},
	                                     {"n_heads", "num_attention_heads"},
	                                     {"n_layers", "num_hidden_layers"},
	                                     {"max_seq_len", "max_position_embeddings"}};
	static const char *const attn[][2] = {{"kv_n_heads", "num_key_value_heads"},
	                                      {"clip_qkv", "clip_qkv"}};
	json_t *a = NULL;
	int rv = nested(v, "attn_config", &a, err);
	static const struct {
		bool in_attn;
		const char *key, *why;
		bool (*ok)(json_t *);
	} refs[] = {
	    {false, "tie_word_embeddings",
	     "vLLM's mpt.py asserts true (lm_head is transformer.wte): set it true or remove it",
	     is_true},
	    {false, "no_bias",
	     "false gives biases transformers' MptForCausalLM never builds (the released MPT "
	     "models have none): set it true",
	     is_true},
	    {false, "embedding_fraction", "vLLM's mpt.py asserts 1.0", is_one},
	    {false, "norm_type", "vLLM's mpt.py asserts \"low_precision_layernorm\"", is_lpln},
	    {false, "logit_scale", "vLLM's mpt.py does not scale the logits: give null", is_null},
	    {false, "layer_norm_epsilon",
	     "vLLM's mpt.py builds nn.LayerNorm with its default eps 1e-5: give 1e-5", is_eps},
	    {true, "alibi", "vLLM's mpt.py asserts ALiBi (true)", is_true},
	    {true, "prefix_lm", "vLLM's mpt.py asserts false", is_false},
	    {true, "qk_ln",
	     "true needs q_ln / k_ln over the whole d_model, which vLLM's mpt.py applies to a "
	     "rank's slice and transformers never builds: set it false",
	     is_false},
	    {true, "softmax_scale",
	     "vLLM's mpt.py scales by head_dim^-0.5 whatever it says: give null", is_null},
	};
	for (size_t i = 0; i < sizeof(refs) / sizeof(refs[0]) && rv == WT_OK; i++)
		rv = mpt_refuse(refs[i].in_attn ? a : v, refs[i].in_attn ? "attn_config." : "",
		                refs[i].key, refs[i].why, refs[i].ok, err);
	for (size_t i = 0; i < sizeof(top) / sizeof(top[0]) && rv == WT_OK; i++)
		rv = set_from(v, v, top[i][0], top[i][1], err);
	for (size_t i = 0; i < sizeof(attn) / sizeof(attn[0]) && rv == WT_OK; i++)
		rv = set_from(v, a, attn[i][0], attn[i][1], err);
	/* MPTMLP: expansion_ratio * d_model (MptConfig's defaults 4 and 2048) */
	json_t *er = json_object_get(v, "expansion_ratio"), *dm = json_object_get(v, "d_model");
	if (rv == WT_OK && er != NULL && !json_is_integer(er))
		rv =
		    wt_seterr(err, WT_ECORRUPT,
		              "config.json: expansion_ratio is not an integer (vLLM's mpt.py sizes "
		              "the MLP expansion_ratio * d_model)");
	if (rv == WT_OK && (dm == NULL || json_is_integer(dm)) &&
	    json_object_get(v, "intermediate_size") == NULL) {
		json_int_t n;
		if (__builtin_mul_overflow(er ? json_integer_value(er) : 4,
		                           dm ? json_integer_value(dm) : 2048, &n))
			return wt_seterr(
			    err, WT_ECORRUPT,
			    "config.json: expansion_ratio * d_model overflows; give the "
			    "model's values");
		if (json_object_set_new(v, "intermediate_size", json_integer(n)) != 0)
			rv = wt_seterr(err, WT_ENOMEM, "config.json: out of memory");
	}
	return rv;
}

int config_persimmon_eps(json_t *root, bool qk_layernorm, wt_errbuf *err)
{
	json_t *x = json_object_get(root, "layer_norm_eps");
	if (!qk_layernorm || x == NULL || json_is_null(x) || is_eps(x))
		return WT_OK;
	if (!json_is_number(x))
		return wt_seterr(err, WT_ECORRUPT, "config.json: layer_norm_eps is not a number");
	return wt_seterr(err, WT_EUNSUPPORTED,
	                 "config.json: layer_norm_eps %g on Persimmon with qk_layernorm true; "
	                 "vLLM's persimmon.py builds q_layernorm / k_layernorm with eps 1e-5 "
	                 "(transformers with layer_norm_eps): give 1e-5",
	                 json_number_value(x));
}
