/*
 * config_gpt2.c — GPT-2's config keys (model_type gpt2, GPT2LMHeadModel: openai-community/gpt2
 * ... gpt2-xl, distilgpt2), read as transformers 4.57.1's GPT2Config reads them.
 *
 * GPT2Config names its dims n_embd, n_head, n_layer, n_positions (its attribute_map makes them
 * hidden_size, num_attention_heads, num_hidden_layers, max_position_embeddings) and the MLP's
 * width n_inner (None: 4 * n_embd, as GPT2Block builds it). In the language-model view of a
 * model_type gpt2 config they are laid over the keys every family reads, with
 * intermediate_size = n_inner or 4 * n_embd, before the class defaults fill what is absent.
 * What vLLM's gpt2.py cannot run is refused naming the key: add_cross_attention,
 * scale_attn_by_inverse_layer_idx and reorder_and_upcast_attn true (GPT2Model asserts them
 * false), scale_attn_weights false (GPT2Attention scales by head_dim^-0.5 whatever it says).
 *
 * JAIS (model_type jais, config_jais.c) has GPT2Config's keys and is read through here with the
 * refusals naming vLLM's jais.py.
 *
 * GPTBigCode (model_type gpt_bigcode, GPTBigCodeForCausalLM: bigcode/starcoderbase,
 * santacoder) has GPT2Config's key names (GPTBigCodeConfig's attribute_map) and multi_query
 * (default true): num_key_value_heads is 1 then, as the class sets it. multi_query false is
 * refused: transformers reads that c_attn per head ([H, 3, d] rows), vLLM's gpt_bigcode.py as
 * [q; k; v], so no cut serves both. add_cross_attention true and scale_attn_weights false are
 * refused as GPT-2's (vLLM asserts the one false and always scales).
 */
#include <string.h>

#include "loader/config_int.h"

#define GPT2_N_EMBD 768 /* GPT2Config's n_embd */

static int set_from(json_t *v, const char *from, const char *to, wt_errbuf *err)
{
	json_t *x = json_object_get(v, from);
	if (x == NULL || json_is_null(x))
		return WT_OK;
	if (json_object_set(v, to, x) != 0)
		return wt_seterr(err, WT_ENOMEM, "config.json: out of memory");
	return WT_OK;
}

/* key given as the boolean `bad` (absent or null: the class default, which is fine) */
static int refuse_if(json_t *v, const char *key, bool bad, const char *why, wt_errbuf *err)
{
	json_t *x = json_object_get(v, key);
	if (x == NULL || json_is_null(x))
		return WT_OK;
	if (!json_is_boolean(x))
		return wt_seterr(err, WT_ECORRUPT, "config.json: '%s' is not a boolean", key);
	if (json_is_true(x) == bad)
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "config.json: %s %s; %s: set it %s or remove it", key,
		                 bad ? "true" : "false", why, bad ? "false" : "true");
	return WT_OK;
}

/* GPTBigCode's multi_query (absent or null: true) and the num_key_value_heads it implies. */
static int bigcode_kv(json_t *v, wt_errbuf *err)
{
	json_t *mq = json_object_get(v, "multi_query");
	if (mq != NULL && !json_is_null(mq) && !json_is_boolean(mq))
		return wt_seterr(err, WT_ECORRUPT, "config.json: 'multi_query' is not a boolean");
	if (json_is_false(mq))
		return wt_seterr(
		    err, WT_EUNSUPPORTED,
		    "config.json: multi_query false; transformers reads such a c_attn per head "
		    "([H, 3, d] rows) and vLLM's gpt_bigcode.py as [q; k; v], so no cut serves "
		    "both: only multi-query checkpoints (one kv head) are read");
	json_t *kv = json_object_get(v, "num_key_value_heads");
	if (kv != NULL && !json_is_null(kv) &&
	    !(json_is_integer(kv) && json_integer_value(kv) == 1))
		return wt_seterr(
		    err, WT_EUNSUPPORTED,
		    "config.json: num_key_value_heads is not 1; GPTBigCodeConfig sets it "
		    "from multi_query (one kv head): remove the key");
	if (json_object_set_new(v, "num_key_value_heads", json_integer(1)) != 0)
		return wt_seterr(err, WT_ENOMEM, "config.json: out of memory");
	return WT_OK;
}

int config_gpt2_keys(json_t *v, const char *mt, wt_errbuf *err)
{
	bool bigcode = mt != NULL && strcmp(mt, "gpt_bigcode") == 0;
	bool jais = mt != NULL && strcmp(mt, "jais") == 0; /* JAISConfig: GPT-2's keys */
	static const char *const keys[][2] = {{"n_embd", "hidden_size"},
	                                      {"n_head", "num_attention_heads"},
	                                      {"n_layer", "num_hidden_layers"},
	                                      {"n_positions", "max_position_embeddings"}};
	int rv =
	    refuse_if(v, "add_cross_attention", true,
	              bigcode ? "vLLM's gpt_bigcode.py has no cross-attention"
	              : jais  ? "vLLM's jais.py has no cross-attention (JAISModel asserts it false)"
	                     : "vLLM's gpt2.py has no cross-attention (GPT2Model asserts it false)",
	              err);
	if (rv == WT_OK && bigcode)
		rv = refuse_if(
		    v, "scale_attn_weights", false,
		    "vLLM's gpt_bigcode.py scales the attention by head_dim^-0.5 whatever "
		    "it says",
		    err);
	if (rv == WT_OK && bigcode)
		rv = bigcode_kv(v, err);
	if (rv == WT_OK && !bigcode)
		rv = refuse_if(
		    v, "scale_attn_by_inverse_layer_idx", true,
		    jais ? "vLLM's jais.py asserts it false (it scales every layer alike)"
		         : "vLLM's gpt2.py asserts it false (it scales every layer alike)",
		    err);
	if (rv == WT_OK && !bigcode)
		rv = refuse_if(v, "reorder_and_upcast_attn", true,
		               jais ? "vLLM's jais.py asserts it false"
		                    : "vLLM's gpt2.py asserts it false",
		               err);
	if (rv == WT_OK && !bigcode)
		rv = refuse_if(
		    v, "scale_attn_weights", false,
		    jais ? "vLLM's jais.py scales the attention (by head_dim^-0.5, or ^-1 "
		           "with scale_qk_dot_by_d) whatever it says"
		         : "vLLM's gpt2.py scales the attention by head_dim^-0.5 whatever "
		           "it says",
		    err);
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]) && rv == WT_OK; i++)
		rv = set_from(v, keys[i][0], keys[i][1], err);
	if (rv != WT_OK)
		return rv;
	/* intermediate_size: n_inner, else 4 * hidden_size (GPT2Block's inner_dim) */
	json_t *inner = json_object_get(v, "n_inner");
	if (inner != NULL && !json_is_null(inner))
		return set_from(v, "n_inner", "intermediate_size", err);
	json_t *ii = json_object_get(v, "intermediate_size");
	if (ii != NULL && !json_is_null(ii))
		return WT_OK;
	json_t *h = json_object_get(v, "hidden_size");
	json_int_t hid = GPT2_N_EMBD;
	if (h != NULL && !json_is_null(h)) {
		if (!json_is_integer(h) || json_integer_value(h) < 1 ||
		    json_integer_value(h) > ((json_int_t)1 << 40))
			return WT_OK; /* the loader names the bad key */
		hid = json_integer_value(h);
	}
	if (json_object_set_new(v, "intermediate_size", json_integer(4 * hid)) != 0)
		return wt_seterr(err, WT_ENOMEM, "config.json: out of memory");
	return WT_OK;
}
