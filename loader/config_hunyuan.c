/*
 * config_hunyuan.c — Hunyuan V1 MoE's config keys (model_type hunyuan_v1_moe,
 * HunYuanMoEV1ForCausalLM: Hunyuan-A13B), read as vLLM's hunyuan_v1.py reads them.
 *
 * Hunyuan-A13B's config.json gives moe_intermediate_size, moe_topk and num_shared_expert
 * as lists of one entry per layer (vLLM indexes them by layer). The planner's stacks and the
 * reference take one size for every MoE layer, so a list whose entries are all equal is read
 * as that value (in the language-model view, for the loader and the reference alike); a list
 * with different entries, or not one integer per layer, is refused naming the key.
 */
#include <inttypes.h>
#include <string.h>

#include "loader/config_int.h"

static int uniform_list(json_t *v, const char *key, wt_errbuf *err)
{
	json_t *a = json_object_get(v, key);
	if (a == NULL || !json_is_array(a))
		return WT_OK;
	json_t *nl = json_object_get(v, "num_hidden_layers");
	size_t n = json_array_size(a);
	if (!json_is_integer(nl) || json_integer_value(nl) != (json_int_t)n || n == 0)
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: %s has %zu entries; a per-layer list needs one per "
		                 "layer (num_hidden_layers)",
		                 key, n);
	json_t *first = json_array_get(a, 0);
	for (size_t i = 0; i < n; i++) {
		json_t *x = json_array_get(a, i);
		if (!json_is_integer(x))
			return wt_seterr(err, WT_ECORRUPT, "config.json: %s[%zu] is not an integer",
			                 key, i);
		if (json_integer_value(x) != json_integer_value(first))
			return wt_seterr(
			    err, WT_EUNSUPPORTED,
			    "config.json: %s[%zu] is %" PRId64 " where %s[0] is %" PRId64
			    ": layers of different sizes or top-k are not supported (one "
			    "expert stack shape for every layer); give one value",
			    key, i, (int64_t)json_integer_value(x), key,
			    (int64_t)json_integer_value(first));
	}
	json_t *one = json_integer(json_integer_value(first));
	if (one == NULL || json_object_set_new(v, key, one) != 0)
		return wt_seterr(err, WT_ENOMEM, "config.json: out of memory");
	return WT_OK;
}

int config_hunyuan_lists(json_t *v, wt_errbuf *err)
{
	static const char *const keys[] = {"moe_intermediate_size", "moe_topk",
	                                   "num_shared_expert"};
	for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]); k++) {
		int rv = uniform_list(v, keys[k], err);
		if (rv != WT_OK)
			return rv;
	}
	return WT_OK;
}
