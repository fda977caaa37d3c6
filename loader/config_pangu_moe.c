/*
 * config_pangu_moe.c — openPangu-Ultra-MoE's config keys (model_type pangu_ultra_moe,
 * PanguUltraMoEForCausalLM: openPangu-Ultra-MoE-718B, -718B-V1.1; the remote
 * configuration_openpangu_moe.py), read as vLLM's openpangu.py builds OpenPanguMoEModel.
 *
 * vLLM reads DeepSeek-V3's names (config.qk_nope_head_dim, config.n_routed_experts, ...). The
 * remote class's own spellings (attention_q_lora_dim, attention_kv_lora_dim, attention_qk_dim,
 * attention_qk_rope_dim, attention_v_dim, num_routed_experts, num_shared_experts,
 * num_dense_layers) are not read by vLLM: one given without vLLM's name is refused naming the
 * rename (vLLM would build another model: no MLA, or no MoE layer).
 *
 *   key                      vLLM's reading                    here
 *   kv_lora_rank,            all four given: MLA (use_mla)     required, positive integers
 *   qk_nope_head_dim,
 *   qk_rope_head_dim,
 *   v_head_dim
 *   q_lora_rank              getattr, None: q_proj             read (null: q_proj)
 *   n_routed_experts,        config.X (no default)             required (the planner refuses 0)
 *   first_k_dense_replace
 *   n_shared_experts         config.X; None: no shared experts required, null or >= 1
 *   moe_intermediate_size,   config.X                          required
 *   num_experts_per_tok,
 *   routed_scaling_factor,
 *   norm_topk_prob
 *   hidden_act               check_ffn_act_fn: silu only       must be silu
 *   sandwich_norm            getattr False                     read (pre / post_mlp_layernorm)
 *   param_sink_number > 0, use_mhc, use_mome, index_topk, sliding_window, sliding_window_list,
 *   block_post_layernorm_idx (non-empty), router_enable_expert_bias: the variants openpangu.py
 *   builds from them (sink MLA, mHC streams, MoME convolutions, the DSA indexer, windows, block
 *   post-layernorms, the router's e_score_correction_bias) are refused naming the key.
 * rope_scaling is not read: vLLM's OpenPanguMLAAttention fixes its RoPE (deepseek_yarn of factor
 * 1 over rope_theta). Class defaults: config_defaults_remote.c.
 */
#include <stdbool.h>
#include <string.h>

#include "loader/config_int.h"
#include "loader/loader.h"

static bool given(json_t *v, const char *key)
{
	json_t *k = json_object_get(v, key);
	return k != NULL && !json_is_null(k);
}

/* The remote class's spelling, and vLLM's name for the same value. */
static const char *const pgm_renames[][2] = {
    {"attention_q_lora_dim", "q_lora_rank"},    {"attention_kv_lora_dim", "kv_lora_rank"},
    {"attention_qk_dim", "qk_nope_head_dim"},   {"attention_qk_rope_dim", "qk_rope_head_dim"},
    {"attention_v_dim", "v_head_dim"},          {"num_routed_experts", "n_routed_experts"},
    {"num_shared_experts", "n_shared_experts"}, {"num_dense_layers", "first_k_dense_replace"},
};

/* Keys vLLM's openpangu.py reads as config.X for this model (an AttributeError when absent). */
static const char *const pgm_required[] = {
    "kv_lora_rank",          "qk_nope_head_dim",
    "qk_rope_head_dim",      "v_head_dim",
    "n_routed_experts",      "first_k_dense_replace",
    "moe_intermediate_size", "num_experts_per_tok",
    "routed_scaling_factor", "norm_topk_prob",
};

enum { PGM_PRESENT, PGM_TRUE, PGM_POSITIVE, PGM_NONEMPTY };

static const struct {
	const char *key;
	int when;
	const char *what;
} pgm_variants[] = {
    {"param_sink_number", PGM_POSITIVE, "the static-sink MLA (param_sink_k_pe / _compressed_kv)"},
    {"use_mhc", PGM_TRUE, "the mHC streams"},
    {"use_mome", PGM_TRUE, "the MoME convolutions"},
    {"index_topk", PGM_PRESENT, "the DSA indexer"},
    {"sliding_window", PGM_PRESENT, "sliding-window MLA"},
    {"sliding_window_list", PGM_PRESENT, "sliding-window MLA"},
    {"block_post_layernorm_idx", PGM_NONEMPTY, "block post-layernorms"},
    {"router_enable_expert_bias", PGM_TRUE, "the router's e_score_correction_bias"},
};

static bool pgm_selects(json_t *x, int when)
{
	switch (when) {
	case PGM_TRUE:
		return json_is_true(x);
	case PGM_POSITIVE:
		return !json_is_number(x) || json_number_value(x) > 0;
	case PGM_NONEMPTY:
		return !json_is_array(x) || json_array_size(x) > 0;
	default:
		return true;
	}
}

static int pgm_names(json_t *v, wt_errbuf *err)
{
	for (size_t i = 0; i < sizeof(pgm_renames) / sizeof(pgm_renames[0]); i++)
		if (given(v, pgm_renames[i][0]) && !given(v, pgm_renames[i][1]))
			return wt_seterr(
			    err, WT_EUNSUPPORTED,
			    "config.json: %s is the remote configuration_openpangu_moe.py's "
			    "name, which vLLM's openpangu.py does not read (it reads %s): "
			    "rename %s to %s",
			    pgm_renames[i][0], pgm_renames[i][1], pgm_renames[i][0],
			    pgm_renames[i][1]);
	for (size_t i = 0; i < 4; i++) /* the MLA dims */
		if (!given(v, pgm_required[i]))
			return wt_seterr(
			    err, WT_ECORRUPT,
			    "config.json: %s is missing; vLLM's openpangu.py reads it for "
			    "PanguUltraMoEForCausalLM (no class default): give %s",
			    pgm_required[i], pgm_required[i]);
	return config_pangu_moe_need(v, "PanguUltraMoEForCausalLM", 4, err);
}

int config_pangu_moe_need(json_t *v, const char *arch, size_t first, wt_errbuf *err)
{
	for (size_t i = first; i < sizeof(pgm_required) / sizeof(pgm_required[0]); i++)
		if (!given(v, pgm_required[i]))
			return wt_seterr(
			    err, WT_ECORRUPT,
			    "config.json: %s is missing; vLLM's openpangu.py reads it for "
			    "%s (no class default): give %s",
			    pgm_required[i], arch, pgm_required[i]);
	json_t *ns = json_object_get(v, "n_shared_experts");
	if (ns == NULL)
		return wt_seterr(
		    err, WT_ECORRUPT,
		    "config.json: n_shared_experts is missing; vLLM's OpenPanguMoE reads "
		    "it (no class default): give it, null for no shared experts");
	if (!json_is_null(ns) && (!json_is_integer(ns) || json_integer_value(ns) < 1))
		return wt_seterr(
		    err, WT_ECORRUPT,
		    "config.json: n_shared_experts is not null or an integer >= 1 "
		    "(vLLM's OpenPanguMoE builds moe_intermediate_size x n_shared_experts "
		    "shared rows): give null for no shared experts");
	return WT_OK;
}

int config_pangu_flags(json_t *root, ckpt_config *c, wt_errbuf *err)
{
	const char *mt = c->model_type != NULL ? c->model_type : "";
	bool v2 = strcmp(mt, "PanguProMoEV2") == 0;
	int rv = WT_OK;
	c->router_expert_bias = false;
	c->sink_number = 0;
	if (v2) /* its presence and range are config_pangu_v2.c's */
		rv = config_get_int(root, "param_sink_number", 0, 0, &c->sink_number, err);
	if (rv == WT_OK && (v2 || strcmp(mt, "pangu_ultra_moe") == 0))
		rv = config_get_bool(root, "sandwich_norm", false, &c->sandwich_norm, err);
	if (rv == WT_OK && v2)
		rv = config_get_bool(root, "router_enable_expert_bias", false,
		                     &c->router_expert_bias, err);
	return rv;
}

int config_pangu_moe_keys(json_t *v, wt_errbuf *err)
{
	int rv = pgm_names(v, err);
	for (size_t i = 0; rv == WT_OK && i < sizeof(pgm_variants) / sizeof(pgm_variants[0]); i++) {
		json_t *x = json_object_get(v, pgm_variants[i].key);
		if (x != NULL && !json_is_null(x) && pgm_selects(x, pgm_variants[i].when))
			rv = wt_seterr(
			    err, WT_EUNSUPPORTED,
			    "config.json: %s selects %s in vLLM's openpangu.py, which "
			    "PanguUltraMoEForCausalLM is not read with here: remove the key",
			    pgm_variants[i].key, pgm_variants[i].what);
	}
	json_t *act = json_object_get(v, "hidden_act");
	if (rv == WT_OK && act != NULL && !json_is_null(act) &&
	    (!json_is_string(act) || strcmp(json_string_value(act), "silu") != 0))
		rv =
		    wt_seterr(err, WT_EUNSUPPORTED,
		              "config.json: hidden_act is not \"silu\"; vLLM's openpangu.py "
		              "(check_ffn_act_fn) runs only silu: give \"silu\" or remove the key");
	return rv;
}
