/*
 * config_minimax_m2.c — MiniMax-M2's config keys (model_type minimax_m2,
 * MiniMaxM2ForCausalLM: MiniMaxAI/MiniMax-M2, -M2.1; remote code, no transformers class),
 * read as vLLM's minimax_m2.py reads them, what it cannot build refused naming the key.
 *
 *   key                        absent            accepted
 *   rotary_dim                 refused (vLLM     even, 2..head_dim; partial_rotary_factor,
 *                              reads it always)  when given, must equal rotary_dim / head_dim
 *   scoring_func               refused           "sigmoid" (the releases' router)
 *   use_routing_bias           refused (vLLM:    true: e_score_correction_bias [E] per layer
 *                              false)
 *   use_qk_norm                true              true: vLLM always builds q_norm / k_norm
 *   qk_norm_type               "per_layer"       "per_layer": one RMSNorm over all heads
 *   attn_type_list             every layer full  num_hidden_layers entries, each 1 (full
 *                                                attention; vLLM's M2 has no linear layers)
 *   shared_intermediate_size   0                 0: M2 has no shared expert
 *   attention_bias             false             false (the releases have no q/k/v bias)
 *   tie_word_embeddings        false             false: vLLM always loads lm_head
 *   num_experts_per_tok        refused           1..num_local_experts
 *
 * The dims (hidden_size, head_dim: hidden_size / num_attention_heads when absent,
 * num_key_value_heads, intermediate_size: each expert's, num_local_experts) are the
 * common keys of config.c.
 */
#include <string.h>

#include "loader/config_int.h"
#include "loader/loader.h"

static int refuse(wt_errbuf *err, const char *key, const char *why)
{
	return wt_seterr(err, WT_EUNSUPPORTED, "config.json: %s %s", key, why);
}

static bool is_str(json_t *v, const char *s)
{
	return json_is_string(v) && strcmp(json_string_value(v), s) == 0;
}

/* rotary_dim: even, within the head; partial_rotary_factor, when given, its ratio. */
static int check_rotary(json_t *root, const ckpt_config *c, wt_errbuf *err)
{
	int64_t rd = -1;
	int rv = config_get_int(root, "rotary_dim", -1, 1, &rd, err);
	if (rv != WT_OK)
		return rv;
	if (rd < 0)
		return refuse(err, "rotary_dim",
		              "is missing; vLLM's MiniMaxM2Attention turns that many dims of each "
		              "head (MiniMax-M2: 64): give it");
	if (rd % 2 != 0 || rd > c->head_dim)
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: rotary_dim %lld must be even and at most head_dim "
		                 "%lld",
		                 (long long)rd, (long long)c->head_dim);
	json_t *f = json_object_get(root, "partial_rotary_factor");
	if (f != NULL && !json_is_null(f) &&
	    (!json_is_number(f) || json_number_value(f) * (double)c->head_dim != (double)rd))
		return refuse(err, "partial_rotary_factor",
		              "disagrees with rotary_dim / head_dim; vLLM's versions read one or "
		              "the other: make them agree (MiniMax-M2: 0.5 with 64 of 128) or "
		              "remove it");
	return WT_OK;
}

/* attn_type_list: one entry per layer, each 1 (softmax attention). */
static int check_attn_types(json_t *root, const ckpt_config *c, wt_errbuf *err)
{
	json_t *a = json_object_get(root, "attn_type_list");
	if (a == NULL || json_is_null(a))
		return WT_OK;
	if (!json_is_array(a) || (int64_t)json_array_size(a) != c->num_hidden_layers)
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: attn_type_list must be an array of "
		                 "num_hidden_layers (%lld) entries",
		                 (long long)c->num_hidden_layers);
	for (size_t i = 0; i < json_array_size(a); i++) {
		json_t *e = json_array_get(a, i);
		if (!json_is_integer(e) || json_integer_value(e) != 1)
			return wt_seterr(err, WT_EUNSUPPORTED,
			                 "config.json: attn_type_list[%zu] is not 1 (full "
			                 "attention); vLLM's MiniMaxM2ForCausalLM has no "
			                 "linear-attention layer (MiniMax-Text-01's are "
			                 "MiniMaxForCausalLM): serve such a model as that",
			                 i);
	}
	return WT_OK;
}

/* The switches of the table above. */
static int check_switches(json_t *root, wt_errbuf *err)
{
	json_t *sf = json_object_get(root, "scoring_func");
	if (!is_str(sf, "sigmoid"))
		return refuse(err, "scoring_func",
		              "is missing or not \"sigmoid\"; the MiniMax-M2 router this family "
		              "serves scores the experts by sigmoid: set it so");
	if (!json_is_true(json_object_get(root, "use_routing_bias")))
		return refuse(err, "use_routing_bias",
		              "is missing or false; vLLM then routes without "
		              "e_score_correction_bias, which this family does not serve "
		              "(MiniMax-M2: true): set it true");
	if (json_is_false(json_object_get(root, "use_qk_norm")))
		return refuse(err, "use_qk_norm",
		              "is false; vLLM's MiniMaxM2Attention always applies q_norm / k_norm: "
		              "set it true or remove it");
	json_t *nt = json_object_get(root, "qk_norm_type");
	if (nt != NULL && !json_is_null(nt) && !is_str(nt, "per_layer"))
		return refuse(err, "qk_norm_type",
		              "is not \"per_layer\"; vLLM's MiniMaxM2Attention norms q and k over "
		              "all heads (MiniMaxText01RMSNormTP) only: set it so or remove it");
	if (json_is_true(json_object_get(root, "attention_bias")))
		return refuse(err, "attention_bias",
		              "is true; MiniMax-M2's q/k/v have no bias in this family: set it "
		              "false or remove it");
	if (json_is_true(json_object_get(root, "tie_word_embeddings")))
		return refuse(err, "tie_word_embeddings",
		              "is true; vLLM's MiniMaxM2ForCausalLM always loads its own "
		              "lm_head: set it false or remove it");
	return WT_OK;
}

int config_parse_minimax_m2(json_t *root, const ckpt_config *c, wt_errbuf *err)
{
	int rv = check_switches(root, err);
	if (rv == WT_OK)
		rv = check_rotary(root, c, err);
	if (rv == WT_OK)
		rv = check_attn_types(root, c, err);
	if (rv == WT_OK && c->shared_expert_intermediate_size > 0)
		rv = refuse(err, "shared_intermediate_size",
		            "is not 0; vLLM's MiniMaxM2MoE has no shared expert: set it 0 or "
		            "remove it");
	int64_t k = -1;
	if (rv == WT_OK)
		rv = config_get_int(root, "num_experts_per_tok", -1, 1, &k, err);
	if (rv == WT_OK && (k < 1 || k > c->num_experts))
		rv = wt_seterr(err, WT_ECORRUPT,
		               "config.json: num_experts_per_tok must be given, in "
		               "1..num_local_experts (%lld; MiniMax-M2: 8)",
		               (long long)c->num_experts);
	return rv;
}
