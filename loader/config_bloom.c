/*
 * config_bloom.c — BLOOM's config keys (model_type bloom, BloomForCausalLM), read as
 * transformers 4.57.1's BloomConfig reads them.
 *
 * BloomConfig names its dims n_layer and n_head (its attribute_map makes them
 * num_hidden_layers and num_attention_heads; a num_* key given too is set after them and
 * wins) and takes the old n_embed over hidden_size (bigscience/bloom-560m's config.json
 * says n_embed). In the language-model view of a model_type bloom config they are laid
 * over the names the loader reads before the class defaults fill what is absent; after
 * them intermediate_size becomes 4 * hidden_size, the MLP's width in vLLM's BloomMLP and
 * transformers' BloomMLP (BloomConfig has no such key; one given is not read by either).
 */
#include <string.h>

#include "loader/config_int.h"

static int lay(json_t *v, const char *from, const char *to, bool over, wt_errbuf *err)
{
	json_t *x = json_object_get(v, from), *cur = json_object_get(v, to);
	if (x == NULL || json_is_null(x) || (!over && cur != NULL && !json_is_null(cur)))
		return WT_OK;
	if (json_object_set(v, to, x) != 0)
		return wt_seterr(err, WT_ENOMEM, "config.json: out of memory");
	return WT_OK;
}

int config_bloom_keys(json_t *v, wt_errbuf *err)
{
	int rv = lay(v, "n_embed", "hidden_size", true, err);
	if (rv == WT_OK)
		rv = lay(v, "n_layer", "num_hidden_layers", false, err);
	if (rv == WT_OK)
		rv = lay(v, "n_head", "num_attention_heads", false, err);
	return rv;
}

int config_bloom_width(json_t *v, wt_errbuf *err)
{
	json_t *h = json_object_get(v, "hidden_size");
	if (!json_is_integer(h))
		return WT_OK; /* the field reader names a wrong type */
	json_int_t hid = json_integer_value(h);
	if (hid <= 0 || hid > ((json_int_t)1 << 40))
		return WT_OK; /* the field reader or the planner's dim check refuses it */
	if (json_object_set_new(v, "intermediate_size", json_integer(4 * hid)) != 0)
		return wt_seterr(err, WT_ENOMEM, "config.json: out of memory");
	return WT_OK;
}
