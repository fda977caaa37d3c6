/*
 * config_jais2.c — Jais 2's config keys (model_type jais2, Jais2ForCausalLM: inceptionai
 * Jais-2-8B / -70B, base and Chat), read as vLLM's jais2.py builds the model. Jais2Config is
 * transformers' (after 4.57.1: models/jais2/configuration_jais2.py, a LlamaConfig whose
 * rms_norm_eps is renamed layer_norm_eps); its scalar defaults are config_defaults_remote.c's.
 *
 *   key                          Jais2Config / vLLM      here
 *   hidden_act                   "relu2"                 must be relu2: Jais2MLP runs
 *                                                        ReLUSquaredActivation whatever the key
 *                                                        says, so another value would be a
 *                                                        model vLLM does not run
 *   attention_bias               true                    `attention_bias or bias` (vLLM's
 *   bias                         (none: false)           Jais2DecoderLayer) laid onto
 *                                                        attention_bias: q/k/v's and o_proj's
 *                                                        biases
 *   mlp_bias                     true                    up_proj's and down_proj's biases
 *                                                        (the class default table)
 *   interleaved_sliding_window   (none)                  absent: full attention; an integer
 *                                                        > 0: that window on every layer; a
 *                                                        non-empty list of integers > 0 or
 *                                                        null: layer i takes entry i % length
 *                                                        (null: full attention). Any other
 *                                                        value is refused: vLLM's
 *                                                        Jais2Attention raises on a type other
 *                                                        than int / list (null included, as the
 *                                                        attribute then exists)
 */
#include <stdbool.h>
#include <string.h>

#include "loader/config_int.h"
#include "loader/loader.h"

static int relu2_only(json_t *v, wt_errbuf *err)
{
	json_t *act = json_object_get(v, "hidden_act");
	if (act != NULL && (!json_is_string(act) || strcmp(json_string_value(act), "relu2") != 0))
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "config.json: hidden_act is not \"relu2\"; vLLM's jais2.py runs "
		                 "ReLU squared in every MLP: give \"relu2\" or remove the key");
	return WT_OK;
}

/* A window vLLM's Attention takes: a JSON integer (not a boolean) above 0. */
static bool window_ok(json_t *w)
{
	return json_is_integer(w) && json_integer_value(w) > 0;
}

static int sliding_window(json_t *v, wt_errbuf *err)
{
	json_t *w = json_object_get(v, "interleaved_sliding_window");
	if (w == NULL || window_ok(w))
		return WT_OK;
	size_t n = json_is_array(w) ? json_array_size(w) : 0;
	for (size_t i = 0; i < n; i++) {
		json_t *e = json_array_get(w, i);
		if (!json_is_null(e) && !window_ok(e))
			return wt_seterr(
			    err, WT_EUNSUPPORTED,
			    "config.json: interleaved_sliding_window[%zu] is not an integer "
			    "above 0 or null; vLLM's jais2.py gives it to the attention as a "
			    "layer's window: fix the entry",
			    i);
	}
	if (n > 0)
		return WT_OK;
	return wt_seterr(err, WT_EUNSUPPORTED,
	                 "config.json: interleaved_sliding_window is not an integer above 0 or a "
	                 "non-empty list of them (null entries: full attention); vLLM's jais2.py "
	                 "raises on any other value: fix it or remove the key");
}

int config_jais2_keys(json_t *v, wt_errbuf *err)
{
	bool attn = true, bias = false;
	int rv = relu2_only(v, err);
	if (rv == WT_OK)
		rv = sliding_window(v, err);
	if (rv == WT_OK) /* Jais2Config's attention_bias default: true */
		rv = config_get_bool(v, "attention_bias", true, &attn, err);
	if (rv == WT_OK) /* no Jais2Config key: vLLM's getattr(config, "bias", False) */
		rv = config_get_bool(v, "bias", false, &bias, err);
	if (rv != WT_OK)
		return rv;
	if (json_object_set_new(v, "attention_bias", json_boolean(attn || bias)) != 0)
		return wt_seterr(err, WT_ENOMEM, "config.json: out of memory");
	return WT_OK;
}
