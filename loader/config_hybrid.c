/*
 * config_hybrid.c — the config keys of the families whose layers are not all attention,
 * each read for its own model_type only (so no other family's config is refused over
 * them): LFM2's short conv, Granite 4.0 / Bamba / Falcon-H1's Mamba2 mixer, Jamba's
 * layer periods (ckpt_config_parse, config.c).
 */
#include <string.h>

#include "loader/config_int.h"
#include "loader/loader.h"

/* LFM2's keys (Lfm2Config; read for model_type lfm2 only, so no other family's config is
 * refused over them): the short conv, the MLP size rule, vLLM's block_dim / conv_dim, and
 * full_attn_idxs. A null block_ffn_dim_multiplier is kept apart from an absent one
 * (Lfm2Config's 1.0). */
int config_parse_lfm2(json_t *root, ckpt_config *c, wt_errbuf *err)
{
	int rv = config_get_int(root, "conv_L_cache", -1, 1, &c->lfm2_conv_l_cache, err);
	if (rv == WT_OK)
		rv = config_get_int(root, "block_multiple_of", -1, 1, &c->lfm2_multiple_of, err);
	if (rv == WT_OK)
		rv = config_get_int(root, "block_dim", -1, 1, &c->lfm2_block_dim, err);
	if (rv == WT_OK)
		rv = config_get_int(root, "conv_dim", -1, 1, &c->lfm2_conv_dim, err);
	if (rv == WT_OK)
		rv = config_get_bool(root, "conv_bias", false, &c->lfm2_conv_bias, err);
	if (rv == WT_OK)
		rv = config_get_bool(root, "block_auto_adjust_ff_dim", true, &c->lfm2_auto_adjust,
		                     err);
	json_t *m = json_object_get(root, "block_ffn_dim_multiplier");
	c->lfm2_ffn_mult_null = m != NULL && json_is_null(m);
	if (rv == WT_OK)
		rv = config_get_pos_real(root, "block_ffn_dim_multiplier", 1.0, &c->lfm2_ffn_mult,
		                         err);
	json_t *f = json_object_get(root, "full_attn_idxs");
	c->has_full_attn_idxs = f != NULL && !json_is_null(f);
	if (rv == WT_OK)
		rv = config_int_list(f, "full_attn_idxs", &c->full_attn_idxs, &c->n_full_attn_idxs,
		                     err);
	return rv;
}

/* LFM2-MoE's keys (Lfm2MoeConfig; read for model_type lfm2_moe only): the short conv's
 * conv_L_cache / conv_bias, num_dense_layers (the dense feed_forward layers below it, kept as
 * first_k_dense_replace), use_expert_bias, num_experts_per_tok (1 to num_experts, as
 * FusedMoE's top-k needs). Lfm2MoeMlp is intermediate_size wide: no block_* size rule. An
 * untied config is refused: vLLM's lfm2_moe.py ties lm_head whatever it says. */
int config_parse_lfm2_moe(json_t *root, ckpt_config *c, wt_errbuf *err)
{
	int64_t k = 0;
	c->lfm2_auto_adjust = c->lfm2_ffn_mult_null = false;
	c->lfm2_ffn_mult = 1.0;
	c->lfm2_multiple_of = c->lfm2_block_dim = c->lfm2_conv_dim = -1;
	int rv = config_get_int(root, "conv_L_cache", -1, 1, &c->lfm2_conv_l_cache, err);
	if (rv == WT_OK)
		rv = config_get_bool(root, "conv_bias", false, &c->lfm2_conv_bias, err);
	if (rv == WT_OK)
		rv = config_get_int(root, "num_dense_layers", 2, 0, &c->first_k_dense_replace, err);
	if (rv == WT_OK)
		rv = config_get_bool(root, "use_expert_bias", true, &c->lfm2_expert_bias, err);
	if (rv == WT_OK)
		rv = config_get_int(root, "num_experts_per_tok", 4, 1, &k, err);
	if (rv == WT_OK && !c->tie_word_embeddings)
		rv = wt_seterr(
		    err, WT_EUNSUPPORTED,
		    "config.json: tie_word_embeddings (tie_embedding) is false, but vLLM's "
		    "lfm2_moe.py ties lm_head to embed_tokens whatever the config says (an "
		    "lm_head.weight would be loaded over the embedding): set it true");
	if (rv == WT_OK && c->num_experts > 0 && k > c->num_experts)
		rv = wt_seterr(err, WT_ECORRUPT,
		               "config.json: num_experts_per_tok %lld is more than num_experts "
		               "%lld; FusedMoE picks the top-k of the experts: lower it",
		               (long long)k, (long long)c->num_experts);
	return rv;
}

/* Jamba's keys (JambaConfig; read for model_type jamba only, so no other family's config is
 * refused over them): the attention / expert layer periods and offsets and mamba_dt_rank
 * ("auto", JambaConfig's default, kept as -1 like an absent one). */
int config_parse_jamba(json_t *root, ckpt_config *c, wt_errbuf *err)
{
	int rv = config_get_int(root, "attn_layer_period", -1, 1, &c->jamba_attn_period, err);
	if (rv == WT_OK)
		rv = config_get_int(root, "attn_layer_offset", -1, 0, &c->jamba_attn_offset, err);
	if (rv == WT_OK)
		rv = config_get_int(root, "expert_layer_period", -1, 1, &c->jamba_expert_period,
		                    err);
	if (rv == WT_OK)
		rv = config_get_int(root, "expert_layer_offset", -1, 0, &c->jamba_expert_offset,
		                    err);
	if (rv == WT_OK)
		rv = config_parse_dt_rank(root, c, err);
	return rv;
}

int config_parse_dt_rank(json_t *root, ckpt_config *c, wt_errbuf *err)
{
	json_t *r = json_object_get(root, "mamba_dt_rank");
	if (json_is_string(r) && strcmp(json_string_value(r), "auto") == 0) {
		c->mamba_dt_rank = -1;
		return WT_OK;
	}
	return config_get_int(root, "mamba_dt_rank", -1, 1, &c->mamba_dt_rank, err);
}

/* Set key to x (a new reference, taken) in v. */
static int set_new(json_t *v, const char *key, json_t *x, wt_errbuf *err)
{
	if (x == NULL || json_object_set_new(v, key, x) != 0)
		return wt_seterr(err, WT_ENOMEM, "config.json: out of memory");
	return WT_OK;
}

/*
 * MambaConfig's (and FalconMambaConfig's) keys (transformers 4.57.1) under the Mamba mixers'
 * names: state_size ->
 * mamba_d_state, conv_kernel -> mamba_d_conv, time_step_rank -> mamba_dt_rank ("auto"
 * kept), use_conv_bias -> mamba_conv_bias, use_bias -> mamba_proj_bias, layer_norm_epsilon
 * -> rms_norm_eps (the reference's); intermediate_size when absent or null is MambaConfig's
 * int(expand * hidden_size) (a key config.json gives overrides it, as PretrainedConfig's
 * kwargs do); num_attention_heads, which MambaConfig lacks, 1 (no tensor is cut by heads).
 */
int config_mamba_keys(json_t *v, wt_errbuf *err)
{
	static const char *const keys[][2] = {
	    {"state_size", "mamba_d_state"},     {"conv_kernel", "mamba_d_conv"},
	    {"time_step_rank", "mamba_dt_rank"}, {"use_conv_bias", "mamba_conv_bias"},
	    {"use_bias", "mamba_proj_bias"},     {"layer_norm_epsilon", "rms_norm_eps"}};
	static const char *const pos[] = {"state_size", "conv_kernel", "time_step_rank"};
	for (size_t i = 0; i < sizeof(pos) / sizeof(pos[0]); i++) { /* named as given */
		json_t *x = json_object_get(v, pos[i]);
		bool is_auto = json_is_string(x) && strcmp(json_string_value(x), "auto") == 0;
		if (x != NULL && !(json_is_integer(x) && json_integer_value(x) >= 1) &&
		    !(i == 2 && is_auto))
			return wt_seterr(err, WT_ECORRUPT,
			                 "config.json: Mamba's %s must be an integer >= 1%s",
			                 pos[i], i == 2 ? " or \"auto\"" : "");
	}
	int rv = config_alias_keys(v, keys, sizeof(keys) / sizeof(keys[0]), false, err);
	json_t *im = json_object_get(v, "intermediate_size");
	json_t *ex = json_object_get(v, "expand"), *hid = json_object_get(v, "hidden_size");
	if (rv == WT_OK && (im == NULL || json_is_null(im))) {
		if (!json_is_number(ex) || !json_is_integer(hid))
			return wt_seterr(
			    err, WT_ECORRUPT,
			    "config.json: Mamba's expand and hidden_size must be numbers "
			    "(intermediate_size is int(expand * hidden_size))");
		double w = json_number_value(ex) * (double)json_integer_value(hid);
		if (!(w >= 1.0 && w < 9007199254740992.0))
			return wt_seterr(
			    err, WT_ECORRUPT,
			    "config.json: Mamba's expand %g x hidden_size %lld is not a "
			    "positive width; give intermediate_size",
			    json_number_value(ex), (long long)json_integer_value(hid));
		rv = set_new(v, "intermediate_size", json_integer((json_int_t)w), err);
	}
	json_t *h = json_object_get(v, "num_attention_heads");
	if (rv == WT_OK && (h == NULL || json_is_null(h)))
		rv = set_new(v, "num_attention_heads", json_integer(1), err);
	return rv;
}

/* Granite 4.0's Mamba2 mixer (GraniteMoeHybridConfig's mamba_* keys); mamba_d_head may
 * be the string "auto" (GraniteMoeHybridConfig's default: expand * hidden / heads), kept
 * as -1 like an absent one. */
int config_parse_mamba(json_t *root, ckpt_config *c, wt_errbuf *err)
{
	const struct {
		const char *key;
		int64_t *out;
	} dims[] = {
	    {"mamba_n_heads", &c->mamba_n_heads}, {"mamba_n_groups", &c->mamba_n_groups},
	    {"mamba_d_state", &c->mamba_d_state}, {"mamba_d_conv", &c->mamba_d_conv},
	    {"mamba_expand", &c->mamba_expand},
	};
	int rv = WT_OK;
	for (size_t i = 0; i < sizeof(dims) / sizeof(dims[0]) && rv == WT_OK; i++)
		rv = config_get_int(root, dims[i].key, -1, 1, dims[i].out, err);
	json_t *dh = json_object_get(root, "mamba_d_head");
	if (rv == WT_OK && json_is_string(dh) && strcmp(json_string_value(dh), "auto") == 0)
		c->mamba_d_head = -1;
	else if (rv == WT_OK)
		rv = config_get_int(root, "mamba_d_head", -1, 1, &c->mamba_d_head, err);
	if (rv == WT_OK)
		rv = config_get_bool(root, "mamba_conv_bias", false, &c->mamba_conv_bias, err);
	if (rv == WT_OK)
		rv = config_get_bool(root, "mamba_proj_bias", false, &c->mamba_proj_bias, err);
	return rv;
}

/* Bamba's attn_layer_indices (BambaConfig; read for model_type bamba only): the attention
 * layers, kept where LFM2's full_attn_idxs goes (has_full_attn_idxs; absent, null or empty:
 * every layer Mamba). */
int config_parse_bamba(json_t *root, ckpt_config *c, wt_errbuf *err)
{
	json_t *f = json_object_get(root, "attn_layer_indices");
	c->has_full_attn_idxs = f != NULL && !json_is_null(f);
	return config_int_list(f, "attn_layer_indices", &c->full_attn_idxs, &c->n_full_attn_idxs,
	                       err);
}

/* Falcon-H1's mixer keys (FalconH1Config; read for model_type falcon_h1 only):
 * mamba_d_ssm absent is the class's 1024, null is mamba_expand * hidden_size (-1; the
 * class defaults do not fill it, as they would a null); mamba_rms_norm, projectors_bias. */
int config_parse_falcon_h1(json_t *root, ckpt_config *c, wt_errbuf *err)
{
	json_t *d = json_object_get(root, "mamba_d_ssm");
	int rv = d == NULL ? (c->mamba_d_ssm = 1024, WT_OK)
	                   : config_get_int(root, "mamba_d_ssm", -1, 1, &c->mamba_d_ssm, err);
	if (rv == WT_OK)
		rv = config_get_bool(root, "mamba_rms_norm", false, &c->mamba_rms_norm, err);
	if (rv == WT_OK)
		rv = config_get_bool(root, "projectors_bias", false, &c->projectors_bias, err);
	return rv;
}

bool config_dt_limit_open(const json_t *x)
{
	return x == NULL || json_is_null(x) ||
	       (json_is_array(x) && json_array_size(x) == 2 &&
	        json_is_number(json_array_get(x, 0)) &&
	        json_number_value(json_array_get(x, 0)) <= 0.0 &&
	        json_is_number(json_array_get(x, 1)) &&
	        json_number_value(json_array_get(x, 1)) >= 3.4e38);
}

/*
 * Mamba2Config's keys (transformers 4.57.1; model_type mamba2 only) under the Mamba2
 * mixer's names Granite 4.0's reads (config_parse_mamba): num_heads -> mamba_n_heads,
 * head_dim -> mamba_d_head (then dropped: no attention head), state_size -> mamba_d_state,
 * n_groups -> mamba_n_groups, conv_kernel -> mamba_d_conv, expand -> mamba_expand,
 * use_bias -> mamba_proj_bias, use_conv_bias -> mamba_conv_bias, chunk_size ->
 * mamba_chunk_size, layer_norm_epsilon -> rms_norm_eps; num_attention_heads absent = 1 (a
 * placeholder no tensor is cut by). Refused, naming the key, what vLLM's mamba2.py /
 * MambaMixer2 cannot build as transformers does: a non-integer expand (vLLM's width is
 * expand * hidden_size unrounded), an intermediate_size other than expand * hidden_size
 * (vLLM reads it, transformers does not), rms_norm false (both build the gated norm all the
 * same), norm_before_gate true (both gate before the norm), a time_step_limit other than
 * (0, inf) (transformers clamps dt to it, vLLM does not).
 */
int config_mamba2_keys(json_t *v, wt_errbuf *err)
{
	static const char *const keys[][2] = {
	    {"num_heads", "mamba_n_heads"},     {"head_dim", "mamba_d_head"},
	    {"state_size", "mamba_d_state"},    {"n_groups", "mamba_n_groups"},
	    {"conv_kernel", "mamba_d_conv"},    {"expand", "mamba_expand"},
	    {"use_bias", "mamba_proj_bias"},    {"use_conv_bias", "mamba_conv_bias"},
	    {"chunk_size", "mamba_chunk_size"}, {"layer_norm_epsilon", "rms_norm_eps"}};
	json_t *ex = json_object_get(v, "expand"), *hid = json_object_get(v, "hidden_size");
	if (!json_is_integer(ex) || json_integer_value(ex) < 1)
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "config.json: Mamba2's expand must be an integer >= 1 (vLLM's "
		                 "MambaMixer2 is expand * hidden_size wide, transformers "
		                 "int(expand * hidden_size)); give a whole expand");
	json_t *im = json_object_get(v, "intermediate_size");
	json_int_t want = 0;
	if (im != NULL && !json_is_null(im) &&
	    (!json_is_integer(im) || !json_is_integer(hid) ||
	     __builtin_mul_overflow(json_integer_value(ex), json_integer_value(hid), &want) ||
	     json_integer_value(im) != want))
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "config.json: Mamba2's intermediate_size must be expand %lld x "
		                 "hidden_size (vLLM's mamba2.py reads intermediate_size, "
		                 "transformers' Mamba2Mixer expand * hidden_size); drop the key",
		                 (long long)json_integer_value(ex));
	json_t *rn = json_object_get(v, "rms_norm"), *nb = json_object_get(v, "norm_before_gate");
	if (json_is_false(rn))
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "config.json: Mamba2's rms_norm false, but vLLM's MambaMixer2 and "
		                 "transformers' Mamba2Mixer both run the gated norm "
		                 "(mixer.norm.weight); drop the key");
	if (json_is_true(nb))
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "config.json: Mamba2's norm_before_gate true, but vLLM's "
		                 "MambaMixer2 and transformers' Mamba2Mixer gate before the norm; "
		                 "drop the key");
	if (!config_dt_limit_open(json_object_get(v, "time_step_limit")))
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "config.json: Mamba2's time_step_limit clamps dt in transformers "
		                 "but vLLM's MambaMixer2 ignores it; only (0, inf) (or the key "
		                 "absent) is cut alike");
	int rv = config_alias_keys(v, keys, sizeof(keys) / sizeof(keys[0]), false, err);
	if (rv == WT_OK)
		json_object_del(v, "head_dim");
	json_t *h = json_object_get(v, "num_attention_heads");
	if (rv == WT_OK && (h == NULL || json_is_null(h)))
		rv = set_new(v, "num_attention_heads", json_integer(1), err);
	return rv;
}
