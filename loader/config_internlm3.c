/*
 * config_internlm3.c — InternLM3's config keys (model_type internlm3, InternLM3ForCausalLM: the
 * remote InternLM3Config, configuration_internlm3.py), read as vLLM's llama.py builds the model
 * (its registry maps the architecture to LlamaForCausalLM).
 *
 * vLLM's LlamaDecoderLayer takes o_proj's bias from `attention_bias or bias` and q/k/v's from
 * qkv_bias, which InternLM3Config always sets (default false); they are laid onto
 * attention_bias (q/k/v) and attention_out_bias (o_proj), the switches of the family's table
 * (Seed-OSS's), before the class defaults (config_defaults_classic.c) fill what is absent.
 * mlp_bias is read as Llama's (InternLM3Config has none: false).
 *
 *   key                 InternLM3Config   here
 *   qkv_bias            false             the q/k/v biases (attention_bias's switch)
 *   bias                false             o_proj's bias, with attention_bias (attention_out_bias)
 *   hidden_act          "silu"            must be silu: vLLM's LlamaMLP raises on another
 */
#include <stdbool.h>
#include <string.h>

#include "loader/config_int.h"
#include "loader/loader.h"

int config_internlm3_keys(json_t *v, wt_errbuf *err)
{
	json_t *act = json_object_get(v, "hidden_act");
	if (act != NULL && (!json_is_string(act) || strcmp(json_string_value(act), "silu") != 0))
		return wt_seterr(
		    err, WT_EUNSUPPORTED,
		    "config.json: hidden_act is not \"silu\"; vLLM's llama.py runs only "
		    "silu: give \"silu\" or remove the key");
	bool qkv = false, attn = false, bias = false;
	int rv = config_get_bool(v, "qkv_bias", false, &qkv, err);
	if (rv == WT_OK)
		rv = config_get_bool(v, "attention_bias", false, &attn, err);
	if (rv == WT_OK)
		rv = config_get_bool(v, "bias", false, &bias, err);
	if (rv != WT_OK)
		return rv;
	if (json_object_set_new(v, "attention_bias", json_boolean(qkv)) != 0 ||
	    json_object_set_new(v, "attention_out_bias", json_boolean(attn || bias)) != 0)
		return wt_seterr(err, WT_ENOMEM, "config.json: out of memory");
	return WT_OK;
}
