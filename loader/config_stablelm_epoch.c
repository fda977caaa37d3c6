/*
 * config_stablelm_epoch.c — StableLM Epoch's config keys (model_type stablelm_epoch,
 * StableLMEpochForCausalLM: the remote-code releases stabilityai/stablelm-3b-4e1t,
 * stablelm-zephyr-3b, stable-code-3b and stablelm-2-1_6b's early revisions), read as vLLM's
 * stablelm.py builds the model (its registry maps StableLMEpochForCausalLM onto
 * StablelmForCausalLM) and laid onto the names the stablelm family reads:
 *
 *   key            vLLM's stablelm.py reads                   laid onto
 *   rope_pct       getattr(rope_pct, partial_rotary_factor)    partial_rotary_factor
 *   norm_eps       getattr(norm_eps, layer_norm_eps, 1e-5)     layer_norm_eps
 *   use_qkv_bias   getattr(use_qkv_bias, False)                (read as stablelm's: config.c)
 *
 * The old names win over the new ones, as vLLM's getattr fallbacks take them first.
 * StableLMEpochConfig's class defaults (the Hub's remote configuration_stablelm_epoch.py) were
 * not read here: vLLM does not store that file and no copy of it was at hand, so no default is
 * taken for the keys they would give and each must be in config.json (every release's is):
 * intermediate_size, num_key_value_heads, max_position_embeddings, rope_theta, rope_pct,
 * norm_eps and tie_word_embeddings (hidden_size, num_attention_heads, num_hidden_layers and
 * vocab_size are required for every family). use_qkv_bias absent reads false, vLLM's getattr
 * default: a checkpoint with q/k/v biases then fails the planner's bias check instead of
 * loading without them.
 */
#include <stdbool.h>
#include <string.h>

#include "loader/config_int.h"
#include "loader/loader.h"

static const char *const required[] = {
    "intermediate_size", "num_key_value_heads", "max_position_embeddings", "rope_theta", "rope_pct",
    "norm_eps",          "tie_word_embeddings",
};

/* v[to] = v[from], a number > 0 (and at most 1 when unit). */
static int lay_real(json_t *v, const char *from, const char *to, bool unit, wt_errbuf *err)
{
	json_t *x = json_object_get(v, from);
	double d = json_is_number(x) ? json_number_value(x) : -1.0;
	if (!(d > 0.0) || (unit && d > 1.0))
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: '%s' is not a number in %s on model_type "
		                 "stablelm_epoch; fix it",
		                 from, unit ? "(0, 1]" : "(0, inf)");
	if (json_object_set_new(v, to, json_real(d)) != 0)
		return wt_seterr(err, WT_ENOMEM, "config.json: out of memory");
	return WT_OK;
}

int config_stablelm_epoch_keys(json_t *v, wt_errbuf *err)
{
	for (size_t i = 0; i < sizeof(required) / sizeof(required[0]); i++) {
		json_t *x = json_object_get(v, required[i]);
		if (x == NULL || json_is_null(x))
			return wt_seterr(
			    err, WT_ECORRUPT,
			    "config.json: required field '%s' is missing on model_type "
			    "stablelm_epoch; StableLMEpochConfig's defaults (the remote "
			    "configuration_stablelm_epoch.py) are not known here: add it as the "
			    "release's config.json gives it",
			    required[i]);
	}
	int rv = lay_real(v, "rope_pct", "partial_rotary_factor", true, err);
	return rv != WT_OK ? rv : lay_real(v, "norm_eps", "layer_norm_eps", false, err);
}
