/*
 * config_minimax01.c — MiniMax-Text-01's and MiniMax-M1's remote config.json (model_type
 * minimax_text_01 / minimax_m1; MiniMaxText01ForCausalLM, MiniMaxM1ForCausalLM), read as
 * vLLM's minimax_text_01.py reads it, laid onto the names of transformers' MiniMaxConfig that
 * the minimax family (shardmap/family_minimax.c) and its reference read:
 *
 *   remote key                          read as                    vLLM's default
 *   attn_type_list (0 lightning,        layer_types (the first     none: refused absent
 *     1 softmax attention)                num_hidden_layers)         (ForCausalLM reads it)
 *   layernorm_full_attention_alpha      full_attn_alpha_factor     1
 *   layernorm_full_attention_beta       full_attn_beta_factor      1
 *   layernorm_linear_attention_alpha    linear_attn_alpha_factor   1
 *   layernorm_linear_attention_beta     linear_attn_beta_factor    1
 *   layernorm_mlp_alpha                 mlp_alpha_factor           1
 *   layernorm_mlp_beta                  mlp_beta_factor            1
 *   rope_theta                          int(rope_theta)            (the class's 1e6)
 *
 * The transformers names, when such a config carries them, are not vLLM's and are replaced.
 * Refused naming the key (what this family's cut or vLLM cannot build):
 *   attn_type_list absent, not a list of 0 / 1, or shorter than num_hidden_layers;
 *   num_local_experts a per-layer list, or 1 (vLLM then builds a dense mlp.gate_up_proj);
 *   shared_intermediate_size above 0 (vLLM's shared_mlp and coefficient);
 *   tie_word_embeddings true (vLLM's MiniMaxText01ForCausalLM loads its own lm_head);
 *   rope_scaling (vLLM's MiniMaxText01RotaryEmbedding is plain RoPE);
 *   rotary_dim odd, below 2 or above head_dim.
 * postnorm and rotary_dim are the reference's (reference/cfg_minimax.c).
 */
#include <math.h>
#include <stdbool.h>
#include <string.h>

#include "loader/config_int.h"
#include "loader/loader.h"

static int refuse(wt_errbuf *err, const char *key, const char *why)
{
	return wt_seterr(err, WT_EUNSUPPORTED, "config.json: %s %s", key, why);
}

bool config_is_minimax01(const char *mt)
{
	return mt != NULL && (strcmp(mt, "minimax_text_01") == 0 || strcmp(mt, "minimax_m1") == 0);
}

/* attn_type_list's first num_hidden_layers entries as layer_types' strings. */
static int mm01_layer_types(json_t *v, wt_errbuf *err)
{
	int64_t L = 0;
	int rv = config_get_int(v, "num_hidden_layers", 32, 1, &L, err);
	if (rv != WT_OK)
		return rv;
	json_t *a = json_object_get(v, "attn_type_list");
	if (a == NULL || json_is_null(a))
		return refuse(err, "attn_type_list",
		              "is missing; vLLM's MiniMaxText01ForCausalLM reads each layer's kind "
		              "from it (0 lightning, 1 softmax attention): give one per layer");
	if (!json_is_array(a))
		return wt_seterr(err, WT_ECORRUPT, "config.json: attn_type_list is not a list");
	if ((int64_t)json_array_size(a) < L)
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: attn_type_list has %zu entries for %lld layers "
		                 "(num_hidden_layers); give one per layer",
		                 json_array_size(a), (long long)L);
	json_t *lt = json_array();
	for (int64_t i = 0; lt != NULL && i < L; i++) {
		json_t *x = json_array_get(a, (size_t)i);
		if (!json_is_integer(x) ||
		    (json_integer_value(x) != 0 && json_integer_value(x) != 1)) {
			json_decref(lt);
			return wt_seterr(
			    err, WT_EUNSUPPORTED,
			    "config.json: attn_type_list[%lld] is not 0 (lightning) or 1 "
			    "(softmax attention), the two kinds vLLM's "
			    "MiniMaxText01DecoderLayer builds",
			    (long long)i);
		}
		const char *t = json_integer_value(x) == 0 ? "linear_attention" : "full_attention";
		if (json_array_append_new(lt, json_string(t)) != 0) {
			json_decref(lt);
			lt = NULL;
		}
	}
	if (lt == NULL || json_object_set_new(v, "layer_types", lt) != 0)
		return wt_seterr(err, WT_ENOMEM, "config.json: out of memory");
	return WT_OK;
}

/* The residual factors under transformers' names; int(rope_theta). */
static int mm01_names(json_t *v, wt_errbuf *err)
{
	static const char *const alias[][2] = {
	    {"layernorm_full_attention_alpha", "full_attn_alpha_factor"},
	    {"layernorm_full_attention_beta", "full_attn_beta_factor"},
	    {"layernorm_linear_attention_alpha", "linear_attn_alpha_factor"},
	    {"layernorm_linear_attention_beta", "linear_attn_beta_factor"},
	    {"layernorm_mlp_alpha", "mlp_alpha_factor"},
	    {"layernorm_mlp_beta", "mlp_beta_factor"},
	};
	size_t n = sizeof(alias) / sizeof(alias[0]);
	for (size_t i = 0; i < n; i++)
		json_object_del(v, alias[i][1]);
	int rv = config_alias_keys(v, alias, n, true, err);
	json_t *th = json_object_get(v, "rope_theta");
	if (rv == WT_OK && json_is_real(th) && json_real_value(th) >= 1.0 &&
	    json_real_value(th) < 1e15 &&
	    json_object_set_new(v, "rope_theta", json_real(floor(json_real_value(th)))) != 0)
		return wt_seterr(err, WT_ENOMEM, "config.json: out of memory");
	return rv;
}

/* shared_intermediate_size: an integer or a per-layer list; any entry above 0 refused. */
static int mm01_shared(json_t *v, wt_errbuf *err)
{
	json_t *s = json_object_get(v, "shared_intermediate_size");
	size_t n = json_is_array(s) ? json_array_size(s) : 1;
	for (size_t i = 0; s != NULL && i < n; i++) {
		json_t *x = json_is_array(s) ? json_array_get(s, i) : s;
		if (json_is_number(x) && json_number_value(x) > 0.0)
			return refuse(err, "shared_intermediate_size",
			              "is above 0; vLLM's shared_mlp and coefficient (the shared "
			              "expert MiniMax-Text-01 and -M1 do not have) are not this "
			              "family's cut: give 0");
	}
	return WT_OK;
}

static int mm01_refusals(json_t *v, wt_errbuf *err)
{
	json_t *e = json_object_get(v, "num_local_experts");
	if (json_is_array(e))
		return refuse(err, "num_local_experts",
		              "is a per-layer list; this family cuts one expert count in every "
		              "layer (MiniMax-Text-01: 32): give an integer");
	if (json_is_integer(e) && json_integer_value(e) == 1)
		return refuse(err, "num_local_experts",
		              "is 1; vLLM's MiniMaxText01DecoderLayer then builds a dense "
		              "mlp.gate_up_proj, not block_sparse_moe: give the expert count");
	int rv = mm01_shared(v, err);
	if (rv == WT_OK)
		rv = config_refuse_bool(v, "tie_word_embeddings", false, true,
		                        "vLLM's MiniMaxText01ForCausalLM loads its own lm_head "
		                        "and never ties it: give false",
		                        err);
	json_t *rs = json_object_get(v, "rope_scaling");
	if (rv == WT_OK && rs != NULL && !json_is_null(rs))
		return refuse(err, "rope_scaling",
		              "is set; vLLM's MiniMaxText01RotaryEmbedding is plain RoPE and "
		              "ignores it: remove it");
	int64_t H = 32, hid = 4096, d = 0, rd = 0;
	if (rv == WT_OK)
		rv = config_get_int(v, "num_attention_heads", 32, 1, &H, err);
	if (rv == WT_OK)
		rv = config_get_int(v, "hidden_size", 4096, 1, &hid, err);
	if (rv == WT_OK)
		rv = config_get_int(v, "head_dim", hid / H, 1, &d, err);
	if (rv == WT_OK)
		rv = config_get_int(v, "rotary_dim", d, 0, &rd, err);
	if (rv == WT_OK && (rd < 2 || rd % 2 != 0 || rd > d))
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "config.json: rotary_dim %lld of head_dim %lld; vLLM's neox RoPE "
		                 "turns an even count of dims from 2 to head_dim (MiniMax-Text-01: "
		                 "64 of 128)",
		                 (long long)rd, (long long)d);
	return rv;
}

int config_minimax01_keys(json_t *v, wt_errbuf *err)
{
	if (!config_is_minimax01(json_string_value(json_object_get(v, "model_type"))))
		return WT_OK;
	int rv = mm01_refusals(v, err);
	if (rv == WT_OK)
		rv = mm01_layer_types(v, err);
	return rv == WT_OK ? mm01_names(v, err) : rv;
}
