/*
 * config_nemotron_h.c — Nemotron-H's config keys (model_type nemotron_h: NemotronHConfig,
 * remote code, as vLLM's transformers_utils/configs/nemotron_h.py copies it;
 * nvidia/NVIDIA-Nemotron-Nano-9B-v2, Nemotron-H-8B / 47B-Base) under the names the planner
 * reads. NemotronHConfig takes mamba_n_groups / mamba_d_conv / mamba_expand / mamba_conv_bias /
 * mamba_chunk_size / mamba_dt_limit and keeps them as n_groups / conv_kernel / expand /
 * use_conv_bias / chunk_size / time_step_limit, the names its saved config.json carries (which
 * win, as PretrainedConfig sets the saved keys after __init__); then the Mamba2 mixer's names:
 * mamba_num_heads -> mamba_n_heads, mamba_head_dim -> mamba_d_head, ssm_state_size ->
 * mamba_d_state, n_groups -> mamba_n_groups, conv_kernel -> mamba_d_conv, expand ->
 * mamba_expand, use_conv_bias -> mamba_conv_bias, use_bias -> mamba_proj_bias (vLLM's
 * MambaMixer2 and the remote code give in_proj / out_proj use_bias), chunk_size ->
 * mamba_chunk_size, layer_norm_epsilon -> rms_norm_eps, the mixer's width mamba_d_ssm =
 * mamba_num_heads * mamba_head_dim (what vLLM builds; expand is not read), and
 * hybrid_override_pattern ("M" Mamba2, "*" attention, "-" MLP, "E" MoE; the class's 52-layer
 * default when absent) as layer_types "mamba" / "attention" / "mlp" / "moe"; with MoE layers
 * the remote config's MoE defaults and the shared experts' width. Refused, naming the key,
 * what vLLM's nemotron_h.py cannot build as the remote code does (the messages say why).
 */
#include <stdio.h>
#include <string.h>

#include "loader/config_int.h"
#include "loader/loader.h"

/* NemotronHConfig's hybrid_override_pattern default (52 layers). */
#define NH_DEFAULT_PATTERN "M-M-M-M*-M-M-M-M-M*-M-M-M-M-M*-M-M-M-M-M*-M-M-M-M-M-"

/* NemotronHConfig's stored names and the constructor arguments they come from. */
static const char *const nh_alias[][2] = {
    {"n_groups", "mamba_n_groups"},     {"conv_kernel", "mamba_d_conv"},
    {"expand", "mamba_expand"},         {"use_conv_bias", "mamba_conv_bias"},
    {"chunk_size", "mamba_chunk_size"}, {"time_step_limit", "mamba_dt_limit"},
};

int config_nemotron_h_alias(json_t *v, wt_errbuf *err)
{
	for (size_t i = 0; i < sizeof(nh_alias) / sizeof(nh_alias[0]); i++) {
		json_t *a = json_object_get(v, nh_alias[i][0]);
		json_t *x = json_object_get(v, nh_alias[i][1]);
		if ((a == NULL || json_is_null(a)) && x != NULL &&
		    json_object_set(v, nh_alias[i][0], x) != 0)
			return wt_seterr(err, WT_ENOMEM, "config.json: out of memory");
	}
	return WT_OK;
}

/* hybrid_override_pattern as layer_types, one per layer ("M" mamba, "*" attention, "-" mlp,
 * "E" moe); *moe: an "E" layer is there. */
static int nh_pattern(json_t *v, bool *moe, wt_errbuf *err)
{
	json_t *p = json_object_get(v, "hybrid_override_pattern");
	if (p != NULL && !json_is_null(p) && !json_is_string(p))
		return wt_seterr(
		    err, WT_ECORRUPT,
		    "config.json: Nemotron-H's hybrid_override_pattern is not a string "
		    "of \"M\" / \"*\" / \"-\" / \"E\"");
	const char *s = json_is_string(p) ? json_string_value(p) : NH_DEFAULT_PATTERN;
	size_t n = strlen(s);
	json_t *nl = json_object_get(v, "num_hidden_layers");
	if (!json_is_integer(nl) || json_integer_value(nl) < 0 ||
	    (size_t)json_integer_value(nl) != n)
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: Nemotron-H's hybrid_override_pattern has %zu layers "
		                 "but num_hidden_layers is %lld (NemotronHConfig asserts they are "
		                 "equal); give one character per layer",
		                 n, json_is_integer(nl) ? (long long)json_integer_value(nl) : -1LL);
	json_t *lt = json_array();
	if (lt == NULL)
		return wt_seterr(err, WT_ENOMEM, "config.json: out of memory");
	int rv = WT_OK;
	*moe = false;
	for (size_t i = 0; i < n && rv == WT_OK; i++) {
		const char *t = s[i] == 'M'   ? "mamba"
		                : s[i] == '*' ? "attention"
		                : s[i] == 'E' ? "moe"
		                              : "mlp";
		*moe = *moe || s[i] == 'E';
		if (s[i] != 'M' && s[i] != '*' && s[i] != '-' && s[i] != 'E')
			rv =
			    wt_seterr(err, WT_ECORRUPT,
			              "config.json: Nemotron-H's hybrid_override_pattern[%zu] is "
			              "'%c', not \"M\" (Mamba2), \"*\" (attention), \"-\" (MLP) or "
			              "\"E\" (MoE)",
			              i, s[i] >= 32 && s[i] < 127 ? s[i] : '?');
		else if (json_array_append_new(lt, json_string(t)) != 0)
			rv = wt_seterr(err, WT_ENOMEM, "config.json: out of memory");
	}
	if (rv == WT_OK && json_object_set_new(v, "layer_types", lt) != 0)
		return wt_seterr(err, WT_ENOMEM, "config.json: out of memory");
	if (rv != WT_OK)
		json_decref(lt);
	return rv;
}

/* The remote NemotronHConfig's MoE defaults (Nemotron 3 Nano's configuration_nemotron_h.py),
 * filled only when an "E" layer is there (a dense model stays without experts). */
static const class_default nh_moe_defaults[] = {
    {"n_routed_experts", false, 8},
    {"n_shared_experts", false, 1},
    {"moe_intermediate_size", false, 7688},
    {"moe_shared_expert_intermediate_size", false, 7688},
    {"num_experts_per_tok", false, 2},
    {"routed_scaling_factor", true, 1.0},
    {"n_group", false, 1},
    {"topk_group", false, 1},
    {"norm_topk_prob", false, 1, true},
};

/* An integer key of the MoE, *out its value (absent: the default filled before). */
static int nh_moe_int(json_t *v, const char *key, json_int_t lo, json_int_t *out, wt_errbuf *err)
{
	json_t *x = json_object_get(v, key);
	if (!json_is_integer(x) || json_integer_value(x) < lo ||
	    json_integer_value(x) > CONFIG_INT_MAX)
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: Nemotron-H's %s must be an integer >= %lld (at most "
		                 "2^40) with MoE (\"E\") layers",
		                 key, (long long)lo);
	*out = json_integer_value(x);
	return WT_OK;
}

/* The MoE layers' keys: the defaults, the routing's consistency (vLLM's grouped_topk), the
 * shared experts' width n_shared_experts x moe_shared_expert_intermediate_size (null or 0
 * shared experts: none) as shared_expert_intermediate_size; refused: a latent MoE
 * (moe_latent_size) and mlp_bias with MoE layers. */
static int nh_moe_keys(json_t *v, wt_errbuf *err)
{
	for (size_t i = 0; i < sizeof(nh_moe_defaults) / sizeof(nh_moe_defaults[0]); i++) {
		const class_default *d = &nh_moe_defaults[i];
		json_t *x = d->boolean ? json_boolean(d->v != 0)
		            : d->real  ? json_real(d->v)
		                       : json_integer((json_int_t)d->v);
		if (json_object_get(v, d->key) == NULL && json_object_set_new(v, d->key, x) != 0)
			return wt_seterr(err, WT_ENOMEM, "config.json: out of memory");
		if (json_object_get(v, d->key) != x)
			json_decref(x);
	}
	json_t *lat = json_object_get(v, "moe_latent_size");
	if (lat != NULL && !json_is_null(lat))
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "config.json: Nemotron-H's moe_latent_size (a latent MoE: "
		                 "fc1_latent_proj / fc2_latent_proj around the routed experts) is "
		                 "not cut here; only moe_latent_size null or absent");
	if (json_is_true(json_object_get(v, "mlp_bias")))
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "config.json: Nemotron-H's mlp_bias true with MoE (\"E\") layers, "
		                 "but vLLM's FusedMoE and shared NemotronHMLP build no biases (the "
		                 "remote code would read them); drop the key");
	json_int_t e = 0, k = 0, g = 0, tg = 0, ns = 0, is = 0;
	json_t *nsx = json_object_get(v, "n_shared_experts");
	int rv = nh_moe_int(v, "n_routed_experts", 1, &e, err);
	if (rv == WT_OK)
		rv = nh_moe_int(v, "num_experts_per_tok", 1, &k, err);
	if (rv == WT_OK)
		rv = nh_moe_int(v, "n_group", 1, &g, err);
	if (rv == WT_OK)
		rv = nh_moe_int(v, "topk_group", 1, &tg, err);
	if (rv == WT_OK && !json_is_null(nsx))
		rv = nh_moe_int(v, "n_shared_experts", 0, &ns, err);
	if (rv == WT_OK && ns > 0)
		rv = nh_moe_int(v, "moe_shared_expert_intermediate_size", 1, &is, err);
	if (rv != WT_OK)
		return rv;
	if (e % g != 0 || tg > g || k > tg * (e / g))
		return wt_seterr(
		    err, WT_EUNSUPPORTED,
		    "config.json: Nemotron-H's routing: n_group %lld must divide "
		    "n_routed_experts %lld, topk_group %lld be at most n_group and "
		    "num_experts_per_tok %lld at most the experts of topk_group groups "
		    "(vLLM's grouped_topk)",
		    (long long)g, (long long)e, (long long)tg, (long long)k);
	if (ns > 4096)
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: Nemotron-H's n_shared_experts %lld is not a model's "
		                 "(at most 4096)",
		                 (long long)ns);
	if (json_object_set_new(v, "shared_expert_intermediate_size", json_integer(ns * is)) != 0)
		return wt_seterr(err, WT_ENOMEM, "config.json: out of memory");
	return WT_OK;
}

/* A string key that must be `want` when present. */
static int nh_string(json_t *v, const char *key, const char *want, const char *why, wt_errbuf *err)
{
	json_t *x = json_object_get(v, key);
	if (x == NULL || json_is_null(x) ||
	    (json_is_string(x) && strcmp(json_string_value(x), want) == 0))
		return WT_OK;
	return wt_seterr(err, WT_EUNSUPPORTED, "config.json: Nemotron-H's %s must be \"%s\" (%s)",
	                 key, want, why);
}

/* The switches and sizes the remote code and vLLM would build apart: refused naming the
 * key. */
static int nh_refusals(json_t *v, wt_errbuf *err)
{
	int rv = nh_string(v, "mlp_hidden_act", "relu2",
	                   "vLLM's NemotronHMLP runs ReLUSquaredActivation whatever it says", err);
	if (rv == WT_OK)
		rv = nh_string(v, "mamba_hidden_act", "silu",
		               "the Mamba2 mixer's conv activation as vLLM's MambaMixer2 runs it",
		               err);
	if (rv != WT_OK)
		return rv;
	if (json_is_true(json_object_get(v, "attention_bias")))
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "config.json: Nemotron-H's attention_bias true, but vLLM's "
		                 "NemotronHAttention builds q/k/v and o_proj without biases (the "
		                 "remote code would read them); drop the key");
	if (json_is_true(json_object_get(v, "tie_word_embeddings")))
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "config.json: Nemotron-H's tie_word_embeddings true, but vLLM's "
		                 "NemotronHForCausalLM loads its own lm_head.weight and never ties "
		                 "it; drop the key and save lm_head.weight");
	json_t *bc = json_object_get(v, "block_configs");
	if (bc != NULL && !json_is_null(bc))
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "config.json: Nemotron-H's block_configs (per-layer sizes of a "
		                 "heterogeneous model) are not cut here; drop the key");
	if (!config_dt_limit_open(json_object_get(v, "time_step_limit")))
		return wt_seterr(
		    err, WT_EUNSUPPORTED,
		    "config.json: Nemotron-H's time_step_limit (mamba_dt_limit) clamps "
		    "dt in the remote code but vLLM's MambaMixer2 ignores it; only (0, "
		    "inf) (or the key absent) is cut alike");
	return WT_OK;
}

/* intermediate_size as one integer (a one-entry list read as its entry, as vLLM does);
 * head_dim: its own key when present (vLLM reads config.head_dim), else hidden_size /
 * num_attention_heads, which attention_head_dim (the remote code's) must equal. */
static int nh_sizes(json_t *v, wt_errbuf *err)
{
	json_t *im = json_object_get(v, "intermediate_size");
	if (json_is_array(im) && json_array_size(im) == 1 &&
	    json_object_set(v, "intermediate_size", json_array_get(im, 0)) != 0)
		return wt_seterr(err, WT_ENOMEM, "config.json: out of memory");
	if (json_is_array(im) && json_array_size(im) != 1)
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "config.json: Nemotron-H's intermediate_size is a list of %zu "
		                 "sizes (one per MLP layer); only one size is cut here",
		                 json_array_size(im));
	json_t *hid = json_object_get(v, "hidden_size"),
	       *h = json_object_get(v, "num_attention_heads");
	json_t *hd = json_object_get(v, "head_dim"), *ad = json_object_get(v, "attention_head_dim");
	if (!json_is_integer(hid) || !json_is_integer(h) || json_integer_value(h) < 1)
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: Nemotron-H's hidden_size and num_attention_heads "
		                 "must be integers (num_attention_heads >= 1)");
	json_int_t d = json_is_integer(hd) ? json_integer_value(hd)
	                                   : json_integer_value(hid) / json_integer_value(h);
	if (!json_is_integer(ad) || json_integer_value(ad) != d)
		return wt_seterr(
		    err, WT_EUNSUPPORTED,
		    "config.json: Nemotron-H's attention_head_dim %lld differs from "
		    "the head_dim %lld vLLM reads (%s); give both the same",
		    json_is_integer(ad) ? (long long)json_integer_value(ad) : -1LL, (long long)d,
		    json_is_integer(hd) ? "head_dim" : "hidden_size / num_attention_heads");
	json_t *nh = json_object_get(v, "mamba_num_heads"),
	       *mh = json_object_get(v, "mamba_head_dim");
	json_int_t w = 0;
	if (!json_is_integer(nh) || !json_is_integer(mh) || json_integer_value(nh) < 1 ||
	    json_integer_value(mh) < 1 ||
	    __builtin_mul_overflow(json_integer_value(nh), json_integer_value(mh), &w) ||
	    w > CONFIG_INT_MAX)
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: Nemotron-H's mamba_num_heads and mamba_head_dim "
		                 "must be integers >= 1 whose product (the mixer's width) is at "
		                 "most 2^40");
	if (json_object_set_new(v, "mamba_d_ssm", json_integer(w)) != 0)
		return wt_seterr(err, WT_ENOMEM, "config.json: out of memory");
	return WT_OK;
}

int config_nemotron_h_keys(json_t *v, wt_errbuf *err)
{
	static const char *const keys[][2] = {
	    {"mamba_num_heads", "mamba_n_heads"}, {"mamba_head_dim", "mamba_d_head"},
	    {"ssm_state_size", "mamba_d_state"},  {"n_groups", "mamba_n_groups"},
	    {"conv_kernel", "mamba_d_conv"},      {"expand", "mamba_expand"},
	    {"use_conv_bias", "mamba_conv_bias"}, {"use_bias", "mamba_proj_bias"},
	    {"chunk_size", "mamba_chunk_size"},   {"layer_norm_epsilon", "rms_norm_eps"}};
	bool moe = false;
	int rv = nh_refusals(v, err);
	if (rv == WT_OK)
		rv = nh_sizes(v, err);
	if (rv == WT_OK)
		rv = nh_pattern(v, &moe, err);
	if (rv == WT_OK && moe)
		rv = nh_moe_keys(v, err);
	if (rv == WT_OK)
		rv = config_alias_keys(v, keys, sizeof(keys) / sizeof(keys[0]), false, err);
	return rv;
}
