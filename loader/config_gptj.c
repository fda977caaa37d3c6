/*
 * config_gptj.c — GPT-J's config keys (model_type gptj, GPTJForCausalLM: EleutherAI/gpt-j-6b),
 * read as transformers 4.57.1's GPTJConfig reads them.
 *
 * GPTJConfig names its dims n_embd, n_head, n_layer, n_positions (its attribute_map makes them
 * hidden_size, num_attention_heads, num_hidden_layers, max_position_embeddings) and the MLP's
 * width n_inner (None: 4 * n_embd). In the language-model view of a model_type gptj config
 * they are laid over the keys every family reads before the class defaults fill what is
 * absent; the MLP's width from n_inner, else 4 x n_embd (n_embd's default 4096 when absent).
 */
#include <string.h>

#include "loader/config_int.h"

int config_gptj_keys(json_t *v, wt_errbuf *err)
{
	static const char *const keys[][2] = {{"n_embd", "hidden_size"},
	                                      {"n_head", "num_attention_heads"},
	                                      {"n_layer", "num_hidden_layers"},
	                                      {"n_positions", "max_position_embeddings"}};
	int rv = config_alias_keys(v, keys, sizeof(keys) / sizeof(keys[0]), true, err);
	if (rv != WT_OK)
		return rv;
	json_t *inner = json_object_get(v, "n_inner");
	json_t *hid = json_object_get(v, "hidden_size");
	json_t *I = NULL;
	if (inner != NULL && !json_is_null(inner))
		I = json_incref(inner);
	else if (hid == NULL || json_is_null(hid))
		I = json_integer(4 * 4096);
	else if (json_is_integer(hid) && json_integer_value(hid) > 0 &&
	         json_integer_value(hid) < ((json_int_t)1 << 40))
		I = json_integer(4 * json_integer_value(hid));
	if (I == NULL) { /* a bad n_embd: the field readers name it */
		json_object_del(v, "intermediate_size");
		return WT_OK;
	}
	if (json_object_set_new(v, "intermediate_size", I) != 0)
		return wt_seterr(err, WT_ENOMEM, "config.json: out of memory");
	return WT_OK;
}
