/*
 * config_nomic.c — Nomic BERT's config keys (model_type nomic_bert, NomicBertModel:
 * nomic-ai/nomic-embed-text-v1 / v1.5, nomic-bert-2048; the remote NomicBertConfig,
 * configuration_hf_nomic_bert.py, a GPT2Config), read as vLLM's NomicBertModelConfig
 * (vllm/model_executor/models/config.py) rewrites them for bert_with_rope.py.
 *
 * GPT2Config names the dims n_embd, n_head, n_layer, n_inner; vLLM sets hidden_size = n_embd,
 * num_hidden_layers = n_layer, intermediate_size = n_inner (num_attention_heads is n_head by
 * GPT2Config's attribute_map), layer_norm_eps = layer_norm_epsilon. They are laid over the keys
 * every family reads before the class defaults (config_defaults_remote.c) fill what is absent.
 * vLLM asserts mlp_fc1_bias == mlp_fc2_bias == qkv_proj_bias (all true by default) and builds
 * every Linear's bias from it: it is copied onto attention_bias and mlp_bias.
 *
 * Refused naming the key: activation_function other than "swiglu" (vLLM asserts swiglu or gelu;
 * gelu builds the ungated BertWithRopeMLP, which only the MoE nomic-embed-text-v2-moe uses, not
 * read here; GPT2Config's default gelu_new fails vLLM's assert), the three bias switches
 * differing, rotary_emb_scale_base set and rotary_emb_interleaved true (vLLM asserts both off),
 * n_inner absent or null (vLLM takes intermediate_size = n_inner, None), moe_every_n_layers > 0
 * (NomicMoE layers), and the block variants vLLM's post-norm BertWithRopeBlock does not build
 * whatever they say (prenorm, parallel_block, use_rms_norm true, causal true).
 */
#include <stdbool.h>
#include <string.h>

#include "loader/config_int.h"

/* v[key] is a boolean equal to `bad`: refused with why (absent / null: the class default). */
static int refuse_bool(json_t *v, const char *key, bool bad, const char *why, wt_errbuf *err)
{
	json_t *x = json_object_get(v, key);
	if (x == NULL || json_is_null(x))
		return WT_OK;
	if (!json_is_boolean(x))
		return wt_seterr(err, WT_ECORRUPT, "config.json: '%s' is not a boolean", key);
	if (json_is_true(x) == bad)
		return wt_seterr(err, WT_EUNSUPPORTED, "config.json: %s %s: %s; remove the key",
		                 key, bad ? "true" : "false", why);
	return WT_OK;
}

static int nomic_act(json_t *v, wt_errbuf *err)
{
	json_t *a = json_object_get(v, "activation_function");
	if (a != NULL && !json_is_null(a) && !json_is_string(a))
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: 'activation_function' is not a string");
	if (a == NULL || json_is_null(a) || strcmp(json_string_value(a), "swiglu") != 0)
		return wt_seterr(
		    err, WT_EUNSUPPORTED,
		    "config.json: activation_function \"%s\" is not \"swiglu\": vLLM's "
		    "bert_with_rope.py runs swiglu (gate_up_proj) or gelu (the MoE "
		    "release's ungated MLP, not read here); set it to \"swiglu\"",
		    a == NULL || json_is_null(a) ? "gelu_new" : json_string_value(a));
	return WT_OK;
}

/* The three bias switches (default true) must agree; *bias = their value. */
static int nomic_bias(json_t *v, bool *bias, wt_errbuf *err)
{
	static const char *const keys[] = {"qkv_proj_bias", "mlp_fc1_bias", "mlp_fc2_bias"};
	bool b[3];
	for (int i = 0; i < 3; i++) {
		int rv = config_get_bool(v, keys[i], true, &b[i], err);
		if (rv != WT_OK)
			return rv;
	}
	if (b[1] != b[0] || b[2] != b[0])
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "config.json: qkv_proj_bias %s, mlp_fc1_bias %s, mlp_fc2_bias %s "
		                 "differ: vLLM's NomicBertModelConfig asserts them equal (one bias "
		                 "switch for every Linear); make them equal",
		                 b[0] ? "true" : "false", b[1] ? "true" : "false",
		                 b[2] ? "true" : "false");
	*bias = b[0];
	return WT_OK;
}

static int nomic_variants(json_t *v, wt_errbuf *err)
{
	json_t *sb = json_object_get(v, "rotary_emb_scale_base");
	if (sb != NULL && !json_is_null(sb))
		return wt_seterr(
		    err, WT_EUNSUPPORTED,
		    "config.json: rotary_emb_scale_base is set: vLLM's "
		    "NomicBertModelConfig asserts it None (no xPos scaling); remove the "
		    "key");
	int64_t every = 0;
	int rv = config_get_int(v, "moe_every_n_layers", 0, 0, &every, err);
	if (rv == WT_OK && every > 0)
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "config.json: moe_every_n_layers %lld: the NomicMoE layers "
		                 "(nomic-embed-text-v2-moe) are not read here; remove the key",
		                 (long long)every);
	if (rv == WT_OK)
		rv = refuse_bool(v, "rotary_emb_interleaved", true,
		                 "vLLM's NomicBertModelConfig asserts it false (neox-style RoPE)",
		                 err);
	static const char *const post[] = {"prenorm", "parallel_block", "use_rms_norm", "causal"};
	for (int i = 0; rv == WT_OK && i < 4; i++)
		rv = refuse_bool(
		    v, post[i], true,
		    "vLLM's BertWithRopeBlock is a sequential post-norm LayerNorm block "
		    "with bidirectional attention whatever it says",
		    err);
	json_t *ni = json_object_get(v, "n_inner");
	if (rv == WT_OK && (ni == NULL || json_is_null(ni)))
		return wt_seterr(
		    err, WT_EUNSUPPORTED,
		    "config.json: n_inner is absent or null: vLLM's NomicBertModelConfig "
		    "takes intermediate_size = n_inner (GPT-2's 4 * n_embd is not "
		    "applied); give n_inner");
	return rv;
}

int config_nomic_bert_keys(json_t *v, wt_errbuf *err)
{
	bool bias = true;
	int rv = nomic_act(v, err);
	if (rv == WT_OK)
		rv = nomic_bias(v, &bias, err);
	if (rv == WT_OK)
		rv = nomic_variants(v, err);
	if (rv != WT_OK)
		return rv;
	static const char *const keys[][2] = {{"n_embd", "hidden_size"},
	                                      {"n_head", "num_attention_heads"},
	                                      {"n_layer", "num_hidden_layers"},
	                                      {"n_inner", "intermediate_size"},
	                                      {"n_positions", "max_position_embeddings"}};
	rv = config_alias_keys(v, keys, sizeof(keys) / sizeof(keys[0]), true, err);
	if (rv == WT_OK && (json_object_set_new(v, "attention_bias", json_boolean(bias)) != 0 ||
	                    json_object_set_new(v, "mlp_bias", json_boolean(bias)) != 0))
		return wt_seterr(err, WT_ENOMEM, "config.json: out of memory");
	return rv;
}
