/*
 * config_cwm.c — Code World Model's config keys (model_type cwm, CwmForCausalLM: facebook/cwm,
 * cwm-sft, cwm-pretrain), read as vLLM's llama.py builds the model (its registry maps the
 * architecture onto LlamaForCausalLM, whose attention takes a per-layer sliding window from
 * layer_types and sliding_window). CwmConfig (transformers' configuration_cwm.py / modular_cwm.py)
 * derives three keys a config.json may leave out, which a scalar class-default table cannot
 * give, so they are filled here (absent or null) before its scalar defaults
 * (config_defaults_remote.c):
 *
 *   key            CwmConfig's default
 *   layer_types    "full_attention" on layers i % 4 == 0, "sliding_attention" on the others
 *                  (num_hidden_layers of them; 64 when that is absent)
 *   sliding_window 8192
 *   rope_scaling   {rope_type llama3, factor 16, low_freq_factor 1, high_freq_factor 4,
 *                   original_max_position_embeddings 8192} when neither it nor
 *                  rope_parameters is given; rope_theta 1e6
 *
 * The reference reads the same keys from the config.json text (reference/ckpt.c runs this on
 * it), so the scalar defaults it reads are laid here too. hidden_act other than silu is
 * refused (vLLM's LlamaMLP). Other model_types are left as they are.
 */
#include <stdbool.h>
#include <string.h>

#include "loader/config_int.h"
#include "loader/loader.h"

static bool absent(json_t *v, const char *key)
{
	json_t *x = json_object_get(v, key);
	return x == NULL || json_is_null(x);
}

static int set(json_t *v, const char *key, json_t *x, wt_errbuf *err)
{
	if (x == NULL || json_object_set_new(v, key, x) != 0)
		return wt_seterr(err, WT_ENOMEM, "config.json: out of memory");
	return WT_OK;
}

/* CwmConfig's layer_types for L layers: every 4th (from layer 0) full attention. */
static int cwm_layer_types(json_t *v, wt_errbuf *err)
{
	int64_t L = 0;
	int rv = config_get_int(v, "num_hidden_layers", 64, 1, &L, err);
	if (rv != WT_OK || !absent(v, "layer_types"))
		return rv;
	if (L > 4096)
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: num_hidden_layers %lld is too many", (long long)L);
	json_t *a = json_array();
	for (int64_t i = 0; a != NULL && i < L; i++)
		if (json_array_append_new(
		        a, json_string(i % 4 == 0 ? "full_attention" : "sliding_attention")) != 0) {
			json_decref(a);
			a = NULL;
		}
	return set(v, "layer_types", a, err);
}

static int cwm_rope(json_t *v, wt_errbuf *err)
{
	if (!absent(v, "rope_scaling") || !absent(v, "rope_parameters"))
		return WT_OK;
	json_t *r = json_pack("{s:s, s:f, s:f, s:f, s:i}", "rope_type", "llama3", "factor", 16.0,
	                      "low_freq_factor", 1.0, "high_freq_factor", 4.0,
	                      "original_max_position_embeddings", 8192);
	return set(v, "rope_scaling", r, err);
}

int config_cwm_keys(json_t *v, wt_errbuf *err)
{
	const char *mt = json_string_value(json_object_get(v, "model_type"));
	if (mt == NULL || strcmp(mt, "cwm") != 0)
		return WT_OK;
	json_t *act = json_object_get(v, "hidden_act");
	if (act != NULL && (!json_is_string(act) || strcmp(json_string_value(act), "silu") != 0))
		return wt_seterr(
		    err, WT_EUNSUPPORTED,
		    "config.json: hidden_act is not \"silu\"; vLLM's llama.py runs only "
		    "silu: give \"silu\" or remove the key");
	int rv = cwm_layer_types(v, err);
	if (rv == WT_OK)
		rv = cwm_rope(v, err);
	/* the scalar defaults, for the reference's reading of the text as well */
	size_t n = 0;
	const class_default *d = config_class_defaults("cwm", &n);
	for (size_t i = 0; rv == WT_OK && i < n; i++)
		if (absent(v, d[i].key))
			rv = set(v, d[i].key,
			         d[i].real ? json_real(d[i].v) : json_integer((json_int_t)d[i].v),
			         err);
	return rv;
}
