/*
 * config_jais.c — JAIS's config keys (model_type jais, JAISLMHeadModel: inceptionai/jais-13b,
 * jais-13b-chat, jais-30b-v3, the jais-family / jais-adapted releases; remote code), read as
 * vLLM's JAISConfig (vllm/transformers_utils/configs/jais.py) and jais.py read them.
 *
 * JAISConfig is GPT2Config's key set (n_embd, n_head, n_layer, n_positions, n_inner; the same
 * class defaults) plus the muP scales and position_embedding_type, so the GPT-2 keys are laid
 * over the common names by config_gpt2_keys (with its refusals of what vLLM's JAISModel
 * asserts false: add_cross_attention, scale_attn_by_inverse_layer_idx, reorder_and_upcast_attn;
 * and scale_attn_weights false, which jais.py ignores). Then:
 *
 *   key                      JAISConfig   here
 *   activation_function      "gelu_new"   must be "swiglu": jais.py's JAISMLP calls its
 *                                         SwiGLUActivation with one input otherwise (a
 *                                         TypeError), so absent is refused too
 *   tie_word_embeddings      true         must be true: jais.py skips every lm_head.weight
 *                                         (wte serves as the head), so an untied head would
 *                                         never be loaded
 *   position_embedding_type  "learned"    "learned" (transformer.wpe) or "alibi" (no wpe)
 *
 * The scales (embeddings_scale / mup_embeddings_scale, width_scale / mup_output_alpha *
 * mup_width_scale, scale_qk_dot_by_d / mup_scale_qk_dot_by_d) change no tensor: the reference
 * forward pass reads them (reference/gpt2.c). alibi_scaling is not read (jais.py ignores it).
 */
#include <string.h>

#include "loader/config_int.h"
#include "loader/loader.h"

/* position_embedding_type of v: absent or null "learned"; another string than learned /
 * alibi refused. *alibi when it is "alibi". */
static int jais_pos(json_t *v, bool *alibi, wt_errbuf *err)
{
	json_t *p = json_object_get(v, "position_embedding_type");
	*alibi = false;
	if (p == NULL || json_is_null(p))
		return WT_OK;
	const char *s = json_string_value(p);
	if (s == NULL)
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: 'position_embedding_type' is not a string");
	*alibi = strcmp(s, "alibi") == 0;
	if (!*alibi && strcmp(s, "learned") != 0)
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "config.json: position_embedding_type '%.64s'; JAIS has learned "
		                 "positions (transformer.wpe) or ALiBi: set it learned or alibi",
		                 s);
	return WT_OK;
}

int config_jais_keys(json_t *v, wt_errbuf *err)
{
	json_t *act = json_object_get(v, "activation_function");
	if (act != NULL && !json_is_null(act) && !json_is_string(act))
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: 'activation_function' is not a string");
	const char *an = json_is_string(act) ? json_string_value(act) : "gelu_new";
	if (strcmp(an, "swiglu") != 0)
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "config.json: activation_function '%.64s'%s; vLLM's jais.py runs "
		                 "only swiglu (c_fc(x) * silu(c_fc2(x))): set it swiglu",
		                 an, json_is_string(act) ? "" : " (JAISConfig's default)");
	json_t *tie = json_object_get(v, "tie_word_embeddings");
	if (tie != NULL && !json_is_null(tie) && !json_is_boolean(tie))
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: 'tie_word_embeddings' is not a boolean");
	if (json_is_false(tie))
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "config.json: tie_word_embeddings false; vLLM's jais.py skips "
		                 "every lm_head.weight and serves transformer.wte as the head, so "
		                 "an untied head would never be loaded: set it true or remove it");
	bool alibi;
	int rv = jais_pos(v, &alibi, err);
	return rv == WT_OK ? config_gpt2_keys(v, "jais", err) : rv;
}

int config_parse_jais(json_t *root, ckpt_config *c, wt_errbuf *err)
{
	bool alibi;
	int rv = jais_pos(root, &alibi, err);
	c->jais_wpe = rv == WT_OK && !alibi;
	return rv;
}
