/*
 * config_internlm3.c — the InternLM families' config keys, read as vLLM's llama.py builds the
 * model (its registry maps both architectures to LlamaForCausalLM):
 *   - InternLM3 (model_type internlm3, InternLM3ForCausalLM: the remote InternLM3Config,
 *     configuration_internlm3.py);
 *   - InternLM (first generation; model_type internlm, InternLMForCausalLM: internlm-7b / -20b
 *     and their chat models, the remote InternLMConfig, configuration_internlm.py);
 *   - Xverse (model_type xverse, XverseForCausalLM: xverse/XVERSE-7B / -13B / -65B and their
 *     chat models, the remote XverseConfig, configuration_xverse.py: none of the bias keys, so
 *     Llama's switches all read false unless a config.json gives one; hidden_act silu);
 *   - Aquila (model_type aquila, AquilaForCausalLM / AquilaModel: BAAI/Aquila-7B, Aquila2-7B /
 *     -34B and their chat models, the remote AquilaConfig: read as Xverse's);
 *   - openPangu-Embedded (model_type PanguEmbedded: vLLM's openpangu.py reads the same switches;
 *     PanguEmbeddedConfig's bias defaults to true, as InternLMConfig's; config_pangu.c refuses
 *     its other variants first).
 *
 * vLLM's LlamaDecoderLayer takes the attention biases from `attention_bias or bias` (o_proj's
 * and q/k/v's alike) and then q/k/v's from qkv_bias when the config has that attribute, which
 * InternLM3Config always sets (default false) and InternLMConfig never does (a qkv_bias in a
 * config.json is still read). They are laid onto attention_bias (q/k/v) and attention_out_bias
 * (o_proj), the switches of the families' table (Seed-OSS's), before the class defaults
 * (config_defaults_classic.c) fill what is absent. mlp_bias is read as Llama's (false).
 *
 *   key          InternLM3Config  InternLMConfig            here
 *   qkv_bias     false            (none)                    the q/k/v biases when given
 *   bias         false            true                      with attention_bias: o_proj's bias
 *                                                           (and q/k/v's without qkv_bias)
 *   hidden_act   "silu"           "silu"                    must be silu (vLLM's LlamaMLP)
 *   rotary       -                {base 10000, "dynamic"}   InternLM: vLLM reads rope_theta
 *                                                           (10000) instead, so a base that
 *                                                           differs or a type other than
 *                                                           dynamic / origin is refused
 */
#include <stdbool.h>
#include <string.h>

#include "loader/config_int.h"
#include "loader/loader.h"

static int silu_only(json_t *v, wt_errbuf *err)
{
	json_t *act = json_object_get(v, "hidden_act");
	if (act != NULL && (!json_is_string(act) || strcmp(json_string_value(act), "silu") != 0))
		return wt_seterr(
		    err, WT_EUNSUPPORTED,
		    "config.json: hidden_act is not \"silu\"; vLLM's llama.py runs only "
		    "silu: give \"silu\" or remove the key");
	return WT_OK;
}

/* The bias switches: `bias` absent reads as bias_dflt (the class's); qkv_bias absent gives
 * q/k/v the o_proj's switch unless qkv_dflt_false (InternLM3Config always has qkv_bias). */
static int bias_switches(json_t *v, bool bias_dflt, bool qkv_dflt_false, wt_errbuf *err)
{
	bool qkv = false, attn = false, bias = false;
	int rv = config_get_bool(v, "attention_bias", false, &attn, err);
	if (rv == WT_OK)
		rv = config_get_bool(v, "bias", bias_dflt, &bias, err);
	if (rv == WT_OK)
		rv = config_get_bool(v, "qkv_bias", qkv_dflt_false ? false : (attn || bias), &qkv,
		                     err);
	if (rv != WT_OK)
		return rv;
	if (json_object_set_new(v, "attention_bias", json_boolean(qkv)) != 0 ||
	    json_object_set_new(v, "attention_out_bias", json_boolean(attn || bias)) != 0)
		return wt_seterr(err, WT_ENOMEM, "config.json: out of memory");
	return WT_OK;
}

int config_internlm3_keys(json_t *v, wt_errbuf *err)
{
	int rv = silu_only(v, err);
	return rv != WT_OK ? rv : bias_switches(v, false, true, err);
}

/* InternLMConfig's rotary {base, type}: the release's dynamic NTK scaling acts only past
 * max_position_embeddings ("origin": none), and vLLM's llama.py reads rope_theta (default
 * 10000), not rotary.base: a base other than rope_theta would be another model. */
static int internlm_rotary(json_t *v, wt_errbuf *err)
{
	json_t *r = json_object_get(v, "rotary");
	if (r == NULL || json_is_null(r))
		return WT_OK;
	if (!json_is_object(r))
		return wt_seterr(err, WT_ECORRUPT, "config.json: rotary is not an object");
	json_t *t = json_object_get(r, "type");
	if (t != NULL && (!json_is_string(t) || (strcmp(json_string_value(t), "dynamic") != 0 &&
	                                         strcmp(json_string_value(t), "origin") != 0)))
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "config.json: rotary.type is not \"dynamic\" or \"origin\"; "
		                 "vLLM's llama.py runs plain RoPE: give one of them");
	double theta = 0, base = 0;
	int rv = config_get_pos_real(v, "rope_theta", 10000.0, &theta, err);
	if (rv == WT_OK)
		rv = config_get_pos_real(r, "base", 10000.0, &base, err);
	if (rv != WT_OK)
		return rv;
	if (base != theta)
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "config.json: rotary.base %g differs from rope_theta %g (the one "
		                 "vLLM's llama.py reads): give rope_theta the same value",
		                 base, theta);
	return WT_OK;
}

int config_internlm_keys(json_t *v, wt_errbuf *err)
{
	int rv = silu_only(v, err);
	if (rv == WT_OK)
		rv = internlm_rotary(v, err);
	return rv != WT_OK ? rv : bias_switches(v, true, false, err);
}

int config_xverse_keys(json_t *v, wt_errbuf *err)
{
	int rv = silu_only(v, err);
	return rv != WT_OK ? rv : bias_switches(v, false, false, err);
}

int config_pangu_dense_switches(json_t *v, wt_errbuf *err)
{
	int rv = silu_only(v, err);
	return rv != WT_OK ? rv : bias_switches(v, true, false, err);
}
