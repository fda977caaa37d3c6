/*
 * config_baichuan.c — Baichuan's config keys (model_type baichuan: the remote code's
 * BaiChuanConfig of Baichuan-7B, vLLM's configs/baichuan.py, and BaichuanConfig of
 * Baichuan-13B / Baichuan2, configs/baichuan_13b.py / baichuan2.py), read as vLLM's
 * baichuan.py builds the model.
 *
 * Both classes share model_type baichuan but not their dims: a key left out takes the class
 * of architectures[0]'s default, laid over view v before the shared class defaults
 * (config_defaults_classic.c: vocab_size 64000, rms_norm_eps 1e-6, rope_theta 10000, untied):
 *
 *   key                       BaiChuanConfig (7B)   BaichuanConfig (13B, Baichuan2)
 *   hidden_size               4096                  5120
 *   intermediate_size         11008                 13696
 *   num_hidden_layers         32                    40
 *   num_attention_heads       32                    40
 *
 *   hidden_act   "silu"   must be silu: vLLM's BaiChuanMLP raises on any other
 *
 * num_key_value_heads / head_dim are no keys of either class (the planner's check refuses
 * values other than num_attention_heads / hidden_size over it); model_max_length,
 * z_loss_weight, gradient_checkpointing and max_position_embeddings (the RoPE cache's length)
 * are not the cut's.
 */
#include <stdbool.h>
#include <string.h>

#include "loader/config_int.h"
#include "loader/loader.h"

/* architectures[0] of v is BaiChuanForCausalLM (Baichuan-7B's class) */
static bool baichuan_7b(json_t *v)
{
	json_t *a = json_array_get(json_object_get(v, "architectures"), 0);
	return json_is_string(a) && strcmp(json_string_value(a), "BaiChuanForCausalLM") == 0;
}

int config_baichuan_keys(json_t *v, wt_errbuf *err)
{
	static const char *const keys[] = {"hidden_size", "intermediate_size", "num_hidden_layers",
	                                   "num_attention_heads"};
	static const json_int_t dims[2][4] = {{5120, 13696, 40, 40}, {4096, 11008, 32, 32}};
	json_t *act = json_object_get(v, "hidden_act");
	if (act != NULL && !json_is_null(act) && !json_is_string(act))
		return wt_seterr(err, WT_ECORRUPT, "config.json: 'hidden_act' is not a string");
	if (act != NULL && json_is_string(act) && strcmp(json_string_value(act), "silu") != 0)
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "config.json: hidden_act '%s'; vLLM's baichuan.py runs only silu: "
		                 "give \"silu\"",
		                 json_string_value(act));
	const json_int_t *d = dims[baichuan_7b(v) ? 1 : 0];
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		json_t *cur = json_object_get(v, keys[i]);
		if (cur != NULL && !json_is_null(cur))
			continue;
		if (json_object_set_new(v, keys[i], json_integer(d[i])) != 0)
			return wt_seterr(err, WT_ENOMEM, "config.json: out of memory");
	}
	return WT_OK;
}
