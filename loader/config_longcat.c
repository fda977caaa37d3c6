/*
 * config_longcat.c — LongCat-Flash's config keys (model_type longcat_flash,
 * LongcatFlashForCausalLM: meituan-longcat/LongCat-Flash-Chat), read as transformers
 * 4.57.1's LongcatFlashConfig reads them, with what vLLM's longcat_flash.py reads otherwise
 * refused.
 *
 * LongcatFlashConfig names its dims num_layers (the decoder layers, each with two attention
 * sublayers; the class sets num_hidden_layers to twice that for its cache), ffn_hidden_size
 * (the two dense MLPs), expert_ffn_hidden_size (each routed expert) and moe_topk. In the
 * language-model view they are laid over num_hidden_layers, intermediate_size,
 * moe_intermediate_size and num_experts_per_tok after the class defaults, whatever those
 * keys say (transformers builds num_layers layers; vLLM's FlashConfig takes
 * ffn_hidden_size and expert_ffn_hidden_size over the others).
 *
 * Refused before the class defaults fill them, naming the key: q_lora_rank or
 * zero_expert_num null (LongcatFlashMLA always runs q_a_proj / q_b_proj and divides by
 * q_lora_rank; LongcatFlashMoE builds range(zero_expert_num) identities), attention_bias
 * or router_bias true (vLLM's MLA and its router's classifier built by this family have no
 * bias), mla_scale_q_lora / mla_scale_kv_lora false (transformers always scales the q and
 * kv latents by sqrt(hidden_size / rank); vLLM only when these are true), hidden_act other
 * than silu (vLLM's FlashMLP raises), zero_expert_type other than "identity".
 */
#include <string.h>

#include "loader/config_int.h"
#include "loader/loader.h"

static int refuse(wt_errbuf *err, const char *key, const char *why)
{
	return wt_seterr(err, WT_EUNSUPPORTED, "config.json: %s %s", key, why);
}

int config_longcat_check(json_t *v, wt_errbuf *err)
{
	json_t *q = json_object_get(v, "q_lora_rank");
	if (q != NULL && json_is_null(q))
		return refuse(err, "q_lora_rank",
		              "is null; LongcatFlashMLA always projects the queries through "
		              "q_a_proj / q_b_proj (LongCat-Flash-Chat: 1536): give it");
	json_t *z = json_object_get(v, "zero_expert_num");
	if (z != NULL && json_is_null(z))
		return refuse(err, "zero_expert_num",
		              "is null; LongcatFlashMoE builds that many identity experts "
		              "(LongCat-Flash-Chat: 256): give it, 0 for none");
	if (json_is_true(json_object_get(v, "attention_bias")))
		return refuse(err, "attention_bias",
		              "is true; vLLM's DeepseekV2MLAAttention has no q_a / kv_a / o_proj "
		              "biases: set it false or remove it");
	if (json_is_true(json_object_get(v, "router_bias")))
		return refuse(err, "router_bias",
		              "is true; a router classifier bias is not read by this family: "
		              "set it false or remove it");
	static const char *const scales[] = {"mla_scale_q_lora", "mla_scale_kv_lora"};
	for (size_t i = 0; i < 2; i++)
		if (json_is_false(json_object_get(v, scales[i])))
			return refuse(err, scales[i],
			              "is false; transformers scales the MLA latents always and "
			              "vLLM only when it is true: set it true or remove it");
	json_t *act = json_object_get(v, "hidden_act");
	if (act != NULL && !json_is_null(act) &&
	    (!json_is_string(act) || strcmp(json_string_value(act), "silu") != 0))
		return refuse(err, "hidden_act",
		              "is not \"silu\"; vLLM's FlashMLP supports silu only: set it so "
		              "or remove it");
	json_t *zt = json_object_get(v, "zero_expert_type");
	if (zt != NULL && !json_is_null(zt) &&
	    (!json_is_string(zt) || strcmp(json_string_value(zt), "identity") != 0))
		return refuse(err, "zero_expert_type",
		              "is not \"identity\"; the zero experts are identities in "
		              "transformers' LongcatFlashMoE: set it so or remove it");
	return WT_OK;
}

int config_longcat_keys(json_t *v, wt_errbuf *err)
{
	static const char *const map[][2] = {{"num_layers", "num_hidden_layers"},
	                                     {"ffn_hidden_size", "intermediate_size"},
	                                     {"expert_ffn_hidden_size", "moe_intermediate_size"},
	                                     {"moe_topk", "num_experts_per_tok"}};
	for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++) {
		json_t *x = json_object_get(v, map[i][0]);
		if (x != NULL && json_object_set(v, map[i][1], x) != 0)
			return wt_seterr(err, WT_ENOMEM, "config.json: out of memory");
	}
	return WT_OK;
}

int config_parse_longcat(json_t *root, ckpt_config *c, wt_errbuf *err)
{
	return config_get_int(root, "zero_expert_num", 0, 0, &c->zero_expert_num, err);
}
