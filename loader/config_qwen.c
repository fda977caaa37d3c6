/*
 * config_qwen.c — Qwen's (first generation) config keys (model_type qwen, QWenLMHeadModel: the
 * remote QWenConfig, configuration_qwen.py, of Qwen/Qwen-7B and its siblings), read as vLLM's
 * qwen.py builds the model.
 *
 * QWenConfig names the RMSNorms' epsilon layer_norm_epsilon, the head width kv_channels and the
 * RoPE base rotary_emb_base; they are laid over rms_norm_eps / head_dim / rope_theta (the
 * targets overwritten) before the class defaults (config_defaults_classic.c) fill what is absent.
 * intermediate_size is twice the MLP's width (the remote QWenMLP's w1 / w2 are
 * intermediate_size // 2 rows, and vLLM passes config.intermediate_size // 2): the view holds
 * the halved width, which is what the planner cuts (QWenConfig's 22016 -> 11008 when absent).
 *
 *   key                 QWenConfig   here
 *   visual              (Qwen-VL)    refused: its vision tower is not cut (vLLM's qwen.py skips
 *                                    transformer.visual.* and runs text only)
 *   no_bias             true         false refused: vLLM builds c_proj / w1 / w2 without
 *                                    biases and skips a checkpoint's
 *   rotary_pct          1.0          other refused: vLLM rotates the whole head
 *   scale_attn_weights  true         false refused: vLLM scales by head_dim^-0.5 always
 *   tie_word_embeddings false        true refused: vLLM's lm_head is its own ParallelLMHead
 *
 * use_dynamic_ntk / use_logn_attn (QWenConfig: true) change the remote code's attention only
 * past seq_length tokens; vLLM ignores both, and so do these shards (docs/format.md, Qwen).
 * kv_channels other than hidden_size / num_attention_heads and a num_key_value_heads other
 * than the heads are the planner's refusals (family_qwen.c).
 */
#include <stdbool.h>
#include <string.h>

#include "loader/config_int.h"

static int qwen_refusals(json_t *v, wt_errbuf *err)
{
	json_t *vis = json_object_get(v, "visual");
	if (vis != NULL && !json_is_null(vis))
		return wt_seterr(
		    err, WT_EUNSUPPORTED,
		    "config.json: visual is set (Qwen-VL); its vision tower "
		    "(transformer.visual.*) is not cut here and vLLM's qwen.py runs "
		    "text only: serve the language model of a Qwen (not Qwen-VL) release");
	int rv =
	    config_refuse_bool(v, "no_bias", true, false,
	                       "vLLM's qwen.py builds attn.c_proj and the MLP without biases and "
	                       "skips a checkpoint's: give \"no_bias\": true",
	                       err);
	if (rv == WT_OK)
		rv = config_refuse_bool(
		    v, "scale_attn_weights", true, false,
		    "vLLM's qwen.py scales the scores by head_dim^-0.5 always: give "
		    "\"scale_attn_weights\": true",
		    err);
	if (rv == WT_OK)
		rv = config_refuse_bool(
		    v, "tie_word_embeddings", false, true,
		    "vLLM's qwen.py builds lm_head as its own ParallelLMHead and never "
		    "ties it to transformer.wte: give false with lm_head.weight",
		    err);
	double pct = 1.0;
	if (rv == WT_OK)
		rv = config_get_pos_real(v, "rotary_pct", 1.0, &pct, err);
	if (rv == WT_OK && pct != 1.0)
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "config.json: rotary_pct is %g; vLLM's qwen.py rotates the whole "
		                 "head (rotary_dim = head_dim): give 1.0",
		                 pct);
	return rv;
}

/* intermediate_size // 2, QWenMLP's width; anything but a positive integer below 2^40 is left
 * for the field readers to name. */
static int qwen_width(json_t *v, wt_errbuf *err)
{
	json_t *I = json_object_get(v, "intermediate_size");
	if (!json_is_integer(I) || json_integer_value(I) <= 0 ||
	    json_integer_value(I) >= ((json_int_t)1 << 40))
		return WT_OK;
	if (json_object_set_new(v, "intermediate_size", json_integer(json_integer_value(I) / 2)) !=
	    0)
		return wt_seterr(err, WT_ENOMEM, "config.json: out of memory");
	return WT_OK;
}

int config_qwen_keys(json_t *v, wt_errbuf *err)
{
	static const char *const keys[][2] = {{"layer_norm_epsilon", "rms_norm_eps"},
	                                      {"kv_channels", "head_dim"},
	                                      {"rotary_emb_base", "rope_theta"}};
	int rv = qwen_refusals(v, err);
	for (size_t i = 0; rv == WT_OK && i < sizeof(keys) / sizeof(keys[0]); i++)
		json_object_del(v, keys[i][1]);
	if (rv == WT_OK)
		rv = config_alias_keys(v, keys, sizeof(keys) / sizeof(keys[0]), true, err);
	if (rv == WT_OK)
		rv = qwen_width(v, err);
	return rv;
}
