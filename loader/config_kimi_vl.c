/*
 * config_kimi_vl.c — Kimi-VL's config.json (model_type kimi_vl: moonshotai/Kimi-VL-A3B-Instruct,
 * -Thinking, -Thinking-2506, remote code), read as vLLM reads it: vLLM registers its own
 * KimiVLConfig for kimi_vl (vllm/transformers_utils/configs/kimi_vl.py and moonvit.py), which
 * builds MoonViTConfig(**vision_config) and DeepseekV2Config(**text_config) whatever their
 * model_type says.
 *
 *   key (vision_config)      MoonViTConfig   here
 *   hidden_size              1152            v_hidden_size
 *   intermediate_size        4304            v_intermediate_size
 *   num_hidden_layers        27              v_num_layers
 *   num_attention_heads      16              v_num_attn_heads (must divide hidden_size, and
 *                                            hidden_size / heads must be a multiple of 4:
 *                                            Rope2DPosEmb asserts it)
 *   patch_size               14              v_patch_size (an integer: MoonVisionPatchEmbed)
 *   init_pos_emb_height      64              v_pos_h (patch_embed.pos_emb.weight's rows)
 *   init_pos_emb_width       64              v_pos_w (its columns)
 *   merge_kernel_size        [2, 2]          v_merge_h, v_merge_w (the projector's input is
 *                                            hidden_size x kh x kw)
 *   (channels)               3               v_in_chans: MoonVisionPatchEmbed's in_dim is 3
 *
 * vision_config absent or null is MoonViTConfig()'s whole default (KimiVLConfig builds it so).
 * text_config must be an object (the language model's sizes are read from it; KimiVLConfig
 * would build DeepseekV2Config() of nothing, a 4096-wide model no release is): its keys take
 * DeepseekV2Config's defaults (transformers 4.57.1; config_defaults_vl.c and
 * config_kimi_vl_text_keys below), and its topk_method ("greedy" when absent) says whether
 * the MoE layers hold gate.e_score_correction_bias (kv_noaux: "noaux_tc").
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "loader/config_int.h"
#include "loader/loader.h"

bool config_is_kimi_vl(json_t *root)
{
	const char *mt = json_string_value(json_object_get(root, "model_type"));
	return mt != NULL && strcmp(mt, "kimi_vl") == 0;
}

/* merge_kernel_size: a list of two integers >= 1 (MoonViTConfig's (2, 2) when absent). */
static int parse_merge(json_t *v, ckpt_config *c, wt_errbuf *err)
{
	json_t *k = json_object_get(v, "merge_kernel_size");
	c->v_merge_h = c->v_merge_w = 2;
	if (k == NULL || json_is_null(k))
		return WT_OK;
	json_t *h = json_array_get(k, 0), *w = json_array_get(k, 1);
	if (!json_is_array(k) || json_array_size(k) != 2 || !json_is_integer(h) ||
	    !json_is_integer(w) || json_integer_value(h) < 1 || json_integer_value(w) < 1 ||
	    json_integer_value(h) > 64 || json_integer_value(w) > 64)
		return wt_seterr(
		    err, WT_ECORRUPT,
		    "config.json: vision_config.merge_kernel_size is not a list of two "
		    "integers in [1, 64] (Kimi-VL's: [2, 2]: patch_merger folds kh x kw "
		    "patches into one token)");
	c->v_merge_h = (int64_t)json_integer_value(h);
	c->v_merge_w = (int64_t)json_integer_value(w);
	return WT_OK;
}

/* MoonViTConfig's keys (v an object, or NULL / null: every default) into c. */
static int parse_moonvit(json_t *v, ckpt_config *c, wt_errbuf *err)
{
	static const config_int_key ints[] = {
	    {"hidden_size", 1152, offsetof(ckpt_config, v_hidden_size)},
	    {"intermediate_size", 4304, offsetof(ckpt_config, v_intermediate_size)},
	    {"num_hidden_layers", 27, offsetof(ckpt_config, v_num_layers)},
	    {"num_attention_heads", 16, offsetof(ckpt_config, v_num_attn_heads)},
	    {"patch_size", 14, offsetof(ckpt_config, v_patch_size)},
	    {"init_pos_emb_height", 64, offsetof(ckpt_config, v_pos_h)},
	    {"init_pos_emb_width", 64, offsetof(ckpt_config, v_pos_w)},
	};
	int rv = config_read_ints(v, "vision_config", ints, CONFIG_NKEYS(ints), c, err);
	if (rv == WT_OK)
		rv = parse_merge(json_is_object(v) ? v : NULL, c, err);
	c->v_in_chans = 3;
	c->v_patch_given = true;
	c->has_vision = true;
	return rv;
}

int config_kimi_vl_need_text(json_t *root, wt_errbuf *err)
{
	if (!config_is_kimi_vl(root) || json_is_object(json_object_get(root, "text_config")))
		return WT_OK;
	return wt_seterr(err, WT_ECORRUPT,
	                 "config.json: Kimi-VL needs a text_config object (the DeepSeek-V3 "
	                 "language model vLLM builds as DeepseekV2ForCausalLM: hidden_size, "
	                 "num_hidden_layers, kv_lora_rank, n_routed_experts, ...)");
}

int config_parse_kimi_vl(json_t *root, json_t *v, ckpt_config *c, wt_errbuf *err)
{
	json_t *tc = json_object_get(root, "text_config");
	int rv = config_kimi_vl_need_text(root, err);
	if (rv != WT_OK)
		return rv;
	json_t *tm = json_object_get(tc, "topk_method");
	if (tm != NULL && !json_is_null(tm) && !json_is_string(tm))
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: text_config.topk_method is not a string (Kimi-VL's: "
		                 "\"noaux_tc\")");
	c->kv_noaux = json_is_string(tm) && strcmp(json_string_value(tm), "noaux_tc") == 0;
	rv = config_get_int(tc, "num_nextn_predict_layers", 0, 0, &c->kv_nextn, err);
	if (rv != WT_OK) {
		if (err != NULL)
			wt_errprefix(err, "in text_config");
		return rv;
	}
	return parse_moonvit(v, c, err);
}

/* DeepseekV2Config's keys whose null the class keeps (q_lora_rank: q_proj instead of the q_a /
 * q_b pair; n_routed_experts / n_shared_experts: none; the MLA sizes: a model vLLM cannot
 * build, refused by the planner), given their class default only when absent. Laid over view
 * v before the null-blind class defaults. */
int config_kimi_vl_text_keys(json_t *v, wt_errbuf *err)
{
	static const struct {
		const char *key;
		json_int_t dflt;
	} absent[] = {
	    {"q_lora_rank", 1536}, {"n_routed_experts", 64},  {"n_shared_experts", 2},
	    {"kv_lora_rank", 512}, {"qk_nope_head_dim", 128}, {"qk_rope_head_dim", 64},
	    {"v_head_dim", 128},
	};
	for (size_t i = 0; i < sizeof(absent) / sizeof(absent[0]); i++) {
		if (json_object_get(v, absent[i].key) != NULL)
			continue;
		if (json_object_set_new(v, absent[i].key, json_integer(absent[i].dflt)) != 0)
			return wt_seterr(err, WT_ENOMEM, "config.json: out of memory");
	}
	return WT_OK;
}
