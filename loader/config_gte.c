/*
 * config_gte.c — GTE v1.5's config keys (model_type new, GteNewModel: Alibaba-NLP/gte-base-en-v1.5,
 * gte-large-en-v1.5, gte-multilingual-base; the remote NewConfig of Alibaba-NLP/new-impl, served
 * by vLLM under the architecture GteNewModel), read as vLLM's GteNewModelConfig
 * (vllm/model_executor/models/config.py) and bert_with_rope.py build the model.
 *
 * NewConfig names its dims as BERT does (hidden_size, num_attention_heads, num_hidden_layers,
 * intermediate_size, vocab_size): read as they are; absent, NewConfig's class defaults
 * (config_defaults_remote.c; the remote configuration.py, read from a stored copy) fill them, and
 * type_vocab_size is 1 (config.c; 0: no token_type_embeddings, as BertWithRopeEmbedding builds
 * none). Refused naming the key: hidden_act
 * other than "gelu" (vLLM asserts it, then runs geglu), layer_norm_type other than "layer_norm"
 * (vLLM builds nn.LayerNorm whatever it says), position_embedding_type other than "rope" /
 * "rotary" (BertWithRopeEmbedding raises), pack_qkv false (vLLM maps only the packed
 * attention.qkv_proj), logn_attention_scale true (vLLM's attention does not scale by log n).
 * unpad_inputs and use_memory_efficient_attention choose kernels only and are not read.
 * config_parse_gte_new: type_vocab_size (1 when absent) into rob_types, and for
 * GteNewForSequenceClassification the classifier's rows (PretrainedConfig's num_labels:
 * id2label's entries, else num_labels, else 2) into rob_num_labels.
 *
 * GteModel (Snowflake/snowflake-arctic-embed-m-v2.0, -l-v2.0; vLLM's SnowflakeGteNewModel) comes
 * with model_type gte: the remote GteConfig of configuration_hf_alibaba_nlp_gte.py, which vLLM's
 * SnowflakeGteNewModelConfig reads exactly as GteNewModelConfig reads NewConfig. Its source is not
 * stored here, so its class defaults are not known: config_gte_keys requires every key a default
 * would fill (save_pretrained writes them all) and refuses an absent one naming it, then checks
 * NewConfig's switches.
 */
#include <stdbool.h>
#include <string.h>

#include "loader/config_int.h"
#include "loader/loader.h"

/* String key: absent or null reads as dflt; refused unless it is one of ok[0..n). */
static int str_in(json_t *v, const char *key, const char *dflt, const char *const *ok, int n,
                  const char *why, wt_errbuf *err)
{
	json_t *x = json_object_get(v, key);
	if (x != NULL && !json_is_null(x) && !json_is_string(x))
		return wt_seterr(err, WT_ECORRUPT, "config.json: '%s' is not a string", key);
	const char *s = x == NULL || json_is_null(x) ? dflt : json_string_value(x);
	for (int i = 0; i < n; i++)
		if (strcmp(s, ok[i]) == 0)
			return WT_OK;
	return wt_seterr(err, WT_EUNSUPPORTED, "config.json: %s \"%s\": %s; set it to \"%s\"", key,
	                 s, why, ok[0]);
}

static int bool_not(json_t *v, const char *key, bool dflt, bool bad, const char *why,
                    wt_errbuf *err)
{
	bool b = dflt;
	int rv = config_get_bool(v, key, dflt, &b, err);
	if (rv == WT_OK && b == bad)
		return wt_seterr(err, WT_EUNSUPPORTED, "config.json: %s %s: %s; set it %s", key,
		                 bad ? "true" : "false", why, bad ? "false" : "true");
	return rv;
}

int config_gte_new_keys(json_t *v, wt_errbuf *err)
{
	static const char *const gelu[] = {"gelu"}, *const ln[] = {"layer_norm"},
	                         *const rope[] = {"rope", "rotary"};
	int rv =
	    str_in(v, "hidden_act", "gelu", gelu, 1,
	           "vLLM's GteNewModelConfig asserts gelu (run as geglu over up_gate_proj)", err);
	if (rv == WT_OK)
		rv = str_in(v, "layer_norm_type", "layer_norm", ln, 1,
		            "vLLM's BertWithRopeBlock builds nn.LayerNorm whatever it says", err);
	if (rv == WT_OK)
		rv = str_in(v, "position_embedding_type", "rope", rope, 2,
		            "vLLM's BertWithRopeEmbedding supports rotary positions only", err);
	if (rv == WT_OK)
		rv = bool_not(v, "pack_qkv", true, false,
		              "vLLM's GteNewModel maps only the packed attention.qkv_proj", err);
	if (rv == WT_OK)
		rv = bool_not(v, "logn_attention_scale", false, true,
		              "vLLM's attention does not scale by log n", err);
	return rv;
}

int config_gte_keys(json_t *v, wt_errbuf *err)
{
	static const char *const need[] = {"vocab_size",          "hidden_size",
	                                   "intermediate_size",   "num_hidden_layers",
	                                   "num_attention_heads", "max_position_embeddings",
	                                   "type_vocab_size",     "layer_norm_eps",
	                                   "rope_theta",          "hidden_act"};
	for (size_t i = 0; i < sizeof(need) / sizeof(need[0]); i++) {
		json_t *x = json_object_get(v, need[i]);
		if (x == NULL || json_is_null(x))
			return wt_seterr(err, WT_ENOTFOUND,
			                 "config.json: '%s' is missing: model_type gte (GteConfig, "
			                 "remote code) has no class defaults known here; set it as "
			                 "save_pretrained writes it",
			                 need[i]);
	}
	return config_gte_new_keys(v, err);
}

int config_parse_gte_new(json_t *root, struct ckpt_config *c, wt_errbuf *err)
{
	int rv = config_get_int(root, "type_vocab_size", 1, 0, &c->rob_types, err);
	if (rv == WT_OK && c->architecture != NULL &&
	    strcmp(c->architecture, "GteNewForSequenceClassification") == 0)
		rv = config_num_labels(root, &c->rob_num_labels, err);
	return rv;
}
