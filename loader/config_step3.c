/*
 * config_step3.c — Step 3's config keys (model_type step3_text, Step3TextForCausalLM: the text
 * model of stepfun-ai/step3; the remote Step3TextConfig, of which transformers 4.57.1 keeps no
 * copy: vLLM's vllm/transformers_utils/configs/step3_vl.py), read as vLLM's step3_text.py
 * builds the model. Step3TextConfig's dims: config_defaults_remote.c.
 *
 *   key                   Step3TextConfig        vLLM's step3_text.py     here
 *   num_attention_groups  1                      never read: one kv head  must be 1 (read as
 *                                                (num_kv_heads=1)         num_key_value_heads)
 *   moe_layers_enum       a tuple (4..59)        .strip().split(","):     required, a string of
 *                                                the tuple cannot be read layer numbers (read
 *                                                                         as moe_layers)
 *   share_q_dim           2048                   q_proj's rows; 0 / None  an integer >= 1 (read
 *                                                break qkv_params_mapping as q_lora_rank)
 *   share_expert_dim      5120                   share_expert's width     an integer >= 1 (read
 *                                                                         as shared_expert_
 *                                                                         intermediate_size)
 *   tie_word_embeddings   (PretrainedConfig's)   never tied: lm_head read read as false
 *   hidden_act            (not a key)            silu whatever it says    silu or absent
 */
#include <stdlib.h>
#include <string.h>

#include "loader/config_int.h"
#include "loader/loader.h"

/* moe_layers_enum "a,b,c" (Python's int() of each piece: an optionally signed integer with
 * optional blanks; one naming no layer names none) as the JSON array moe_layers. */
static int step3_layers(json_t *v, wt_errbuf *err)
{
	json_t *e = json_object_get(v, "moe_layers_enum");
	if (e == NULL || json_is_null(e))
		return wt_seterr(
		    err, WT_ECORRUPT,
		    "config.json: moe_layers_enum is missing; Step3TextConfig's default "
		    "is a tuple vLLM's step3_text.py cannot read (it splits a string): "
		    "give the checkpoint's string of MoE layers, e.g. \"1,2,3\"");
	if (!json_is_string(e))
		return wt_seterr(
		    err, WT_ECORRUPT,
		    "config.json: moe_layers_enum is not a string; vLLM's step3_text.py "
		    "splits it at commas: give e.g. \"1,2,3\"");
	json_t *arr = json_array();
	const char *s = json_string_value(e);
	int rv = arr ? WT_OK : wt_seterr(err, WT_ENOMEM, "config.json: out of memory");
	while (rv == WT_OK) {
		while (*s == ' ')
			s++;
		char *end = NULL;
		long long n = strtoll(s, &end, 10);
		bool digits = end != s;
		while (digits && *end == ' ')
			end++;
		if (!digits || (*end != ',' && *end != '\0') || n > (1ll << 20))
			rv = wt_seterr(
			    err, WT_ECORRUPT,
			    "config.json: moe_layers_enum \"%s\" is not a comma-separated "
			    "list of layer numbers: give e.g. \"1,2,3\"",
			    json_string_value(e));
		else if (json_array_append_new(arr, json_integer(n)) != 0)
			rv = wt_seterr(err, WT_ENOMEM, "config.json: out of memory");
		if (rv != WT_OK || *end == '\0')
			break;
		s = end + 1;
	}
	if (rv == WT_OK && json_object_set(v, "moe_layers", arr) != 0)
		rv = wt_seterr(err, WT_ENOMEM, "config.json: out of memory");
	json_decref(arr);
	return rv;
}

/* The present key `from` (an integer >= 1) as `to`. */
static int step3_width(json_t *v, const char *from, const char *to, wt_errbuf *err)
{
	json_t *k = json_object_get(v, from);
	if (k == NULL)
		return WT_OK;
	if (!json_is_integer(k) || json_integer_value(k) < 1)
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: %s is not an integer >= 1; vLLM's step3_text.py "
		                 "sizes its weights by it: give the checkpoint's value",
		                 from);
	if (json_object_set(v, to, k) != 0)
		return wt_seterr(err, WT_ENOMEM, "config.json: out of memory");
	return WT_OK;
}

/* moe_top_k (Step3TextConfig's 3 when absent; FusedMoE's top_k) as num_experts_per_tok. */
static int step3_topk(json_t *v, wt_errbuf *err)
{
	json_t *k = json_object_get(v, "moe_top_k");
	if (k != NULL && (!json_is_integer(k) || json_integer_value(k) < 1))
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: moe_top_k is not an integer >= 1; vLLM's "
		                 "step3_text.py routes each token to that many experts: give the "
		                 "checkpoint's value");
	json_int_t n = k != NULL ? json_integer_value(k) : 3;
	if (json_object_set_new(v, "num_experts_per_tok", json_integer(n)) != 0)
		return wt_seterr(err, WT_ENOMEM, "config.json: out of memory");
	return WT_OK;
}

int config_step3_text_keys(json_t *v, wt_errbuf *err)
{
	json_t *act = json_object_get(v, "hidden_act");
	if (act != NULL && (!json_is_string(act) || strcmp(json_string_value(act), "silu") != 0))
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "config.json: hidden_act is not \"silu\"; vLLM's step3_text.py "
		                 "builds every MLP with silu: give \"silu\" or remove the key");
	int64_t groups = 0;
	int rv = config_get_int(v, "num_attention_groups", 1, 1, &groups, err);
	if (rv == WT_OK && groups != 1)
		rv = wt_seterr(err, WT_EUNSUPPORTED,
		               "config.json: num_attention_groups is %lld; vLLM's step3_text.py "
		               "builds one shared kv head (Step3TextAttention's num_kv_heads must "
		               "be 1): give 1",
		               (long long)groups);
	json_t *kv = json_object_get(v, "num_key_value_heads");
	if (rv == WT_OK && kv != NULL && !(json_is_integer(kv) && json_integer_value(kv) == 1))
		rv = wt_seterr(err, WT_EUNSUPPORTED,
		               "config.json: num_key_value_heads is not 1; vLLM's step3_text.py "
		               "builds one shared kv head: give 1 or remove the key");
	if (rv == WT_OK && json_object_set_new(v, "num_key_value_heads", json_integer(1)) != 0)
		rv = wt_seterr(err, WT_ENOMEM, "config.json: out of memory");
	if (rv == WT_OK)
		rv = step3_layers(v, err);
	if (rv == WT_OK)
		rv = step3_width(v, "share_q_dim", "q_lora_rank", err);
	if (rv == WT_OK)
		rv = step3_width(v, "share_expert_dim", "shared_expert_intermediate_size", err);
	if (rv == WT_OK)
		rv = step3_topk(v, err);
	/* ParallelLMHead, loaded from lm_head.weight and never tied to the embedding */
	if (rv == WT_OK && json_object_set_new(v, "tie_word_embeddings", json_false()) != 0)
		rv = wt_seterr(err, WT_ENOMEM, "config.json: out of memory");
	return rv;
}
