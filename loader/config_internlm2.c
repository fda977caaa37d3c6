/*
 * config_internlm2.c — InternLM2's own config keys (model_type internlm2, InternLM2ForCausalLM:
 * the remote code's InternLM2Config, configuration_internlm2.py), read as vLLM's internlm2.py
 * builds the model; the Llama-like dims are read for every family (InternLM2Config's defaults
 * for those: config_defaults_classic.c).
 *
 *   key          InternLM2Config   here
 *   bias         true              must be false: vLLM builds wqkv and wo without biases and
 *                                  its load_weights skips a checkpoint's .bias tensors, so
 *                                  the model would run without them (every release says false)
 *   hidden_act   "silu"            must be silu: vLLM's InternLM2MLP raises on any other
 *
 * rope_theta / rope_scaling ({type linear | dynamic, factor}) and attn_implementation are the
 * math's (the reference reads the first two), not the cut's.
 */
#include <stdbool.h>
#include <string.h>

#include "loader/config_int.h"
#include "loader/loader.h"

int config_parse_internlm2(json_t *root, ckpt_config *c, wt_errbuf *err)
{
	(void)c;
	bool bias = true;
	int rv = config_get_bool(root, "bias", true, &bias, err);
	if (rv != WT_OK)
		return rv;
	if (bias)
		return wt_seterr(
		    err, WT_EUNSUPPORTED,
		    "config.json: bias is true (InternLM2Config's default when the key "
		    "is absent); vLLM's internlm2.py builds wqkv and wo without biases "
		    "and skips the checkpoint's: give \"bias\": false for a checkpoint "
		    "without them");
	json_t *act = json_object_get(root, "hidden_act");
	if (act != NULL && !json_is_null(act) && !json_is_string(act))
		return wt_seterr(err, WT_ECORRUPT, "config.json: 'hidden_act' is not a string");
	if (act != NULL && json_is_string(act) && strcmp(json_string_value(act), "silu") != 0)
		return wt_seterr(
		    err, WT_EUNSUPPORTED,
		    "config.json: hidden_act '%s'; vLLM's internlm2.py runs only silu: "
		    "give \"silu\"",
		    json_string_value(act));
	return WT_OK;
}
