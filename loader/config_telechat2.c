/*
 * config_telechat2.c — TeleChat2's config keys (model_type telechat, TeleChat2ForCausalLM: the
 * remote Telechat2Config of Tele-AI/TeleChat2-*, the copy vLLM registers for model_type telechat,
 * configs/telechat2.py), read as vLLM's telechat2.py builds the model.
 *
 * Telechat2Config names Llama's keys its own way (attribute_map); each is laid over the name the
 * loader reads where config.json does not give that name itself (PretrainedConfig sets a mapped
 * key passed in after the class's own, so it wins), before the class defaults
 * (config_defaults_classic.c) fill what is absent:
 *
 *   Telechat2Config      read as                  default
 *   n_layer              num_hidden_layers        30
 *   n_head               num_attention_heads      32
 *   ffn_hidden_size      intermediate_size        12288
 *   layer_norm_epsilon   rms_norm_eps             1e-5
 *   n_embed              hidden_size (overrides)  hidden_size's 4096
 *   num_key_value_heads  (null: removed)          the heads (MHA)
 *
 *   hidden_act                    any          laid to "silu": vLLM's telechat2.py forces it
 *   apply_residual_connection_    false        true refused: vLLM's Llama layers keep the
 *     post_layernorm                           pre-norm residual
 *   embed_layernorm               false        true refused: vLLM has no embedding LayerNorm
 *   base                          (absent)     other than rope_theta (10000 when absent)
 *                                              refused: vLLM reads rope_theta only
 *
 * training_seqlen / logn (the remote code's extrapolation past training_seqlen) are not vLLM's
 * and not the cut's; tie_word_embeddings absent is true (PretrainedConfig's: the family's
 * tie_default). head_dim other than hidden_size / n_head is the planner's refusal
 * (family_telechat2.c).
 */
#include <stdbool.h>
#include <string.h>

#include "loader/config_int.h"

static int telechat2_refusals(json_t *v, wt_errbuf *err)
{
	int rv = config_refuse_bool(v, "apply_residual_connection_post_layernorm", false, true,
	                            "vLLM's telechat2.py (Llama's layers) adds the block's input, "
	                            "not its normed input, to the residual: give false",
	                            err);
	if (rv == WT_OK)
		rv = config_refuse_bool(v, "embed_layernorm", false, true,
		                        "vLLM's telechat2.py has no LayerNorm after "
		                        "transformer.word_embeddings: give false",
		                        err);
	double theta = 10000.0, base = 0.0;
	if (rv == WT_OK)
		rv = config_get_pos_real(v, "rope_theta", 10000.0, &theta, err);
	if (rv == WT_OK)
		rv = config_get_pos_real(v, "base", theta, &base, err);
	if (rv == WT_OK && base != theta)
		return wt_seterr(
		    err, WT_EUNSUPPORTED,
		    "config.json: base %g differs from rope_theta %g; vLLM's "
		    "telechat2.py reads rope_theta only: give rope_theta %g or remove base",
		    base, theta, base);
	return rv;
}

int config_telechat2_keys(json_t *v, wt_errbuf *err)
{
	static const char *const keys[][2] = {{"n_layer", "num_hidden_layers"},
	                                      {"n_head", "num_attention_heads"},
	                                      {"ffn_hidden_size", "intermediate_size"},
	                                      {"layer_norm_epsilon", "rms_norm_eps"}};
	static const char *const embed[][2] = {{"n_embed", "hidden_size"}};
	int rv = telechat2_refusals(v, err);
	for (size_t i = 0; rv == WT_OK && i < sizeof(keys) / sizeof(keys[0]); i++) {
		json_t *own = json_object_get(v, keys[i][1]);
		if (own == NULL || json_is_null(own))
			rv = config_alias_keys(v, &keys[i], 1, true, err);
	}
	if (rv == WT_OK)
		rv = config_alias_keys(v, embed, 1, true, err);
	if (rv == WT_OK && json_is_null(json_object_get(v, "num_key_value_heads")))
		json_object_del(v, "num_key_value_heads");
	if (rv == WT_OK && json_object_set_new(v, "hidden_act", json_string("silu")) != 0)
		return wt_seterr(err, WT_ENOMEM, "config.json: out of memory");
	return rv;
}
