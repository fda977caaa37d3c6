/*
 * config_exaone.c — EXAONE 3.x's config keys (model_type exaone, ExaoneForCausalLM: the
 * remote ExaoneConfig, configuration_exaone.py, which vLLM copies as configs/exaone.py),
 * read as vLLM's exaone.py builds the model.
 *
 * ExaoneConfig names the depth num_layers (num_hidden_layers is set from it: a config's own
 * num_hidden_layers is overwritten) and the RMSNorms' epsilon layer_norm_epsilon; they are laid
 * over num_hidden_layers / rms_norm_eps before the class defaults (config_defaults_classic.c)
 * fill what is absent. intermediate_size falsy (absent, null, 0) is 4 x hidden_size (hidden_size's
 * default 2048 when absent), as ExaoneConfig's `if intermediate_size`.
 *
 *   key                          ExaoneConfig   here
 *   activation_function          "silu"         must be silu: vLLM's ExaoneGatedMLP raises
 *   attention_bias, bias         absent         must not be true: weightd cuts no EXAONE bias
 *   mlp_bias                     absent         (vLLM would build q/k/v/out_proj or the MLP with
 *                                               one; no release has them)
 */
#include <stdbool.h>
#include <string.h>

#include "loader/config_int.h"
#include "loader/loader.h"

static int exaone_refusals(json_t *v, wt_errbuf *err)
{
	static const char *const biases[] = {"attention_bias", "bias", "mlp_bias"};
	json_t *act = json_object_get(v, "activation_function");
	if (act != NULL && (!json_is_string(act) || strcmp(json_string_value(act), "silu") != 0))
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "config.json: activation_function is not \"silu\"; vLLM's "
		                 "exaone.py runs only silu: give \"silu\" or remove the key");
	for (size_t i = 0; i < sizeof(biases) / sizeof(biases[0]); i++) {
		bool b = false;
		int rv = config_get_bool(v, biases[i], false, &b, err);
		if (rv != WT_OK)
			return rv;
		if (b)
			return wt_seterr(
			    err, WT_EUNSUPPORTED,
			    "config.json: %s is true; weightd cuts EXAONE without "
			    "biases (no release has them): give false or remove the key",
			    biases[i]);
	}
	return WT_OK;
}

static int exaone_width(json_t *v, wt_errbuf *err)
{
	json_t *I = json_object_get(v, "intermediate_size");
	if (I != NULL && !json_is_null(I) && !(json_is_integer(I) && json_integer_value(I) == 0))
		return WT_OK;
	json_t *hid = json_object_get(v, "hidden_size");
	json_t *x = NULL;
	if (hid == NULL || json_is_null(hid))
		x = json_integer(4 * 2048);
	else if (json_is_integer(hid) && json_integer_value(hid) > 0 &&
	         json_integer_value(hid) < ((json_int_t)1 << 40))
		x = json_integer(4 * json_integer_value(hid));
	if (x == NULL) { /* a bad hidden_size: the field readers name it */
		json_object_del(v, "intermediate_size");
		return WT_OK;
	}
	if (json_object_set_new(v, "intermediate_size", x) != 0)
		return wt_seterr(err, WT_ENOMEM, "config.json: out of memory");
	return WT_OK;
}

int config_exaone_keys(json_t *v, wt_errbuf *err)
{
	static const char *const keys[][2] = {{"num_layers", "num_hidden_layers"},
	                                      {"layer_norm_epsilon", "rms_norm_eps"}};
	int rv = exaone_refusals(v, err);
	for (size_t i = 0; rv == WT_OK && i < sizeof(keys) / sizeof(keys[0]); i++)
		json_object_del(v, keys[i][1]);
	if (rv == WT_OK)
		rv = config_alias_keys(v, keys, sizeof(keys) / sizeof(keys[0]), true, err);
	if (rv == WT_OK)
		rv = exaone_width(v, err);
	return rv;
}
