/*
 * config_mimo_v2.c — MiMo-V2-Flash's config keys (model_type mimo_v2_flash,
 * MiMoV2FlashForCausalLM: XiaomiMiMo/MiMo-V2-Flash; remote code, of which neither transformers
 * 4.57.1 nor vLLM keeps a configuration class), read as vLLM's mimo_v2_flash.py reads them:
 * config.X (required here: the model cannot be built without it) or getattr(config, X, d)
 * (d here).
 *
 *   key                          vLLM reads                here
 *   hidden_act                   config.hidden_act         must be "silu" (MiMoV2MLP and
 *                                                          MiMoV2MoE raise otherwise)
 *   layernorm_epsilon            config.layernorm_epsilon  required; read as rms_norm_eps
 *   head_dim                     config.head_dim           required (every full layer's)
 *   moe_layer_freq               per-layer list (truthy:   a list: its truthy entries as
 *                                MoE); absent or an int:   moe_layers; absent or an integer:
 *                                no MoE layer              no MoE layer (moe_layers [])
 *   n_routed_experts,            config.X where a layer    required when a layer is MoE
 *   moe_intermediate_size,       is MoE
 *   num_experts_per_tok, n_group,
 *   topk_group, norm_topk_prob
 *   routed_scaling_factor        never read (FusedMoE's    set to 1
 *                                default 1.0)
 *   (scoring)                    "sigmoid" hard-coded      scoring_func "sigmoid"
 *   tie_word_embeddings          never ties lm_head        must be false or absent
 *   hybrid_layer_pattern, swa_*, per layer (the planner's layer_dims: ckpt_config_mimo_v2)
 *   add_swa_attention_sink_bias
 */
#include <stdlib.h>
#include <string.h>

#include "loader/config_int.h"
#include "loader/loader.h"
#include "loader/loader_mimo_v2.h"

static int mv_set(json_t *v, const char *key, json_t *val, wt_errbuf *err)
{
	if (val == NULL || json_object_set_new(v, key, val) != 0)
		return wt_seterr(err, WT_ENOMEM, "config.json: out of memory");
	return WT_OK;
}

static int mv_required(json_t *v, const char *key, const char *why, wt_errbuf *err)
{
	json_t *k = json_object_get(v, key);
	if (k == NULL || json_is_null(k))
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: %s is missing; vLLM's mimo_v2_flash.py reads "
		                 "config.%s (%s): give the checkpoint's value",
		                 key, key, why);
	return WT_OK;
}

/* moe_layer_freq: a list marks each layer MoE by its truthiness (is_moe_layer); an integer or
 * no key makes no layer MoE. Read as moe_layers, the key itself removed (the DeepSeek reading
 * of an integer moe_layer_freq does not apply). */
static int mv_moe_layers(json_t *v, bool *any, wt_errbuf *err)
{
	json_t *f = json_object_get(v, "moe_layer_freq");
	json_t *arr = json_array();
	if (arr == NULL)
		return wt_seterr(err, WT_ENOMEM, "config.json: out of memory");
	int rv = WT_OK;
	if (f != NULL && !json_is_null(f) && !json_is_integer(f) && !json_is_array(f))
		rv = wt_seterr(err, WT_ECORRUPT,
		               "config.json: moe_layer_freq is not a list (one 0 / 1 per layer) "
		               "or an integer; vLLM's mimo_v2_flash.py indexes it by layer: give "
		               "the checkpoint's list");
	for (size_t i = 0; rv == WT_OK && json_is_array(f) && i < json_array_size(f); i++) {
		json_t *e = json_array_get(f, i);
		if (!json_is_integer(e) && !json_is_boolean(e))
			rv = wt_seterr(err, WT_ECORRUPT,
			               "config.json: moe_layer_freq[%zu] is not 0 / 1; give one "
			               "integer per layer (1: a MoE layer)",
			               i);
		else if ((json_is_integer(e) && json_integer_value(e) != 0) || json_is_true(e)) {
			*any = true;
			if (json_array_append_new(arr, json_integer((json_int_t)i)) != 0)
				rv = wt_seterr(err, WT_ENOMEM, "config.json: out of memory");
		}
	}
	if (rv == WT_OK && json_object_set(v, "moe_layers", arr) != 0)
		rv = wt_seterr(err, WT_ENOMEM, "config.json: out of memory");
	json_decref(arr);
	if (rv == WT_OK && f != NULL)
		json_object_del(v, "moe_layer_freq");
	return rv;
}

/* The MoE keys MiMoV2MoE reads with config.X, needed where a layer is MoE. */
static int mv_moe_keys(json_t *v, wt_errbuf *err)
{
	static const char *const keys[] = {"n_routed_experts",    "moe_intermediate_size",
	                                   "num_experts_per_tok", "n_group",
	                                   "topk_group",          "norm_topk_prob"};
	int rv = WT_OK;
	for (size_t k = 0; rv == WT_OK && k < sizeof(keys) / sizeof(keys[0]); k++)
		rv = mv_required(v, keys[k], "moe_layer_freq makes a layer MiMoV2MoE", err);
	return rv;
}

int config_mimo_v2_flash_keys(json_t *v, wt_errbuf *err)
{
	json_t *act = json_object_get(v, "hidden_act");
	if (act == NULL || !json_is_string(act) || strcmp(json_string_value(act), "silu") != 0)
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "config.json: hidden_act is not \"silu\"; vLLM's mimo_v2_flash.py "
		                 "raises for any other activation (MiMoV2MLP, MiMoV2MoE): give "
		                 "\"silu\"");
	int rv =
	    config_refuse_bool(v, "tie_word_embeddings", false, true,
	                       "vLLM's mimo_v2_flash.py never ties lm_head to the "
	                       "embedding (a tied checkpoint has no head it loads): give false",
	                       err);
	if (rv == WT_OK)
		rv = mv_required(v, "layernorm_epsilon", "every RMSNorm's eps", err);
	if (rv == WT_OK)
		rv = mv_required(v, "head_dim", "the full-attention layers' head_dim", err);
	if (rv == WT_OK)
		rv = mv_set(v, "rms_norm_eps",
		            json_deep_copy(json_object_get(v, "layernorm_epsilon")), err);
	bool any = false;
	if (rv == WT_OK)
		rv = mv_moe_layers(v, &any, err);
	if (rv == WT_OK && any)
		rv = mv_moe_keys(v, err);
	if (rv == WT_OK)
		rv = mv_set(v, "scoring_func", json_string("sigmoid"), err);
	if (rv == WT_OK)
		rv = mv_set(v, "routed_scaling_factor", json_real(1.0), err);
	return rv;
}

/* The SWA attention's integer key k (>= 1) of root, required. */
static int mv_swa_int(json_t *root, const char *k, int64_t *out, wt_errbuf *err)
{
	int rv = mv_required(root, k, "a layer is SWA by hybrid_layer_pattern", err);
	return rv == WT_OK ? config_get_int(root, k, 1, 1, out, err) : rv;
}

/* The full and the SWA layers' attention, as the layers of each kind build it. */
static int mv_kinds(json_t *root, const ckpt_config *cfg, bool need_swa, ckpt_mimo_v2_layer k[2],
                    wt_errbuf *err)
{
	int64_t sw = 0;
	bool sinks = false;
	k[0] = (ckpt_mimo_v2_layer){
	    false,         false,        cfg->num_attention_heads, cfg->num_key_value_heads,
	    cfg->head_dim, cfg->head_dim};
	int rv = config_get_int(root, "v_head_dim", cfg->head_dim, 1, &k[0].v_head_dim, err);
	k[1] = k[0];
	k[1].swa = true;
	if (rv != WT_OK || !need_swa)
		return rv;
	rv = mv_swa_int(root, "swa_num_attention_heads", &k[1].heads, err);
	if (rv == WT_OK)
		rv = mv_swa_int(root, "swa_num_key_value_heads", &k[1].kv_heads, err);
	if (rv == WT_OK)
		rv = mv_swa_int(root, "swa_head_dim", &k[1].head_dim, err);
	if (rv == WT_OK)
		rv =
		    config_get_int(root, "swa_v_head_dim", k[1].head_dim, 1, &k[1].v_head_dim, err);
	if (rv == WT_OK)
		rv = mv_required(root, "sliding_window_size", "the SWA layers' window", err);
	if (rv == WT_OK)
		rv = config_get_int(root, "sliding_window_size", -1, -1, &sw, err);
	if (rv == WT_OK)
		rv = config_get_bool(root, "add_swa_attention_sink_bias", false, &sinks, err);
	k[1].sinks = sinks;
	for (int j = 0; rv == WT_OK && j < 2; j++)
		if (k[j].kv_heads < 1 || k[j].heads % k[j].kv_heads != 0)
			rv = wt_seterr(err, WT_ECORRUPT,
			               "config.json: %s %lld does not divide %s %lld; give the "
			               "checkpoint's values",
			               j ? "swa_num_key_value_heads" : "num_key_value_heads",
			               (long long)k[j].kv_heads,
			               j ? "swa_num_attention_heads" : "num_attention_heads",
			               (long long)k[j].heads);
	return rv;
}

static int mv_layers(json_t *root, const ckpt_config *cfg, ckpt_mimo_v2_layer **out, wt_errbuf *err)
{
	int64_t L = cfg->num_hidden_layers;
	json_t *p = json_object_get(root, "hybrid_layer_pattern");
	if (p == NULL || !json_is_array(p) || (int64_t)json_array_size(p) < L)
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: hybrid_layer_pattern is not a list of at least "
		                 "num_hidden_layers (%lld) entries; vLLM's mimo_v2_flash.py reads "
		                 "each layer's (1: sliding-window attention, 0: full): give the "
		                 "checkpoint's list",
		                 (long long)L);
	bool need_swa = false;
	for (int64_t i = 0; i < L; i++) {
		json_t *e = json_array_get(p, (size_t)i);
		if (!json_is_integer(e) ||
		    (json_integer_value(e) != 0 && json_integer_value(e) != 1))
			return wt_seterr(
			    err, WT_ECORRUPT,
			    "config.json: hybrid_layer_pattern[%lld] is not 0 or 1; give "
			    "1 for a sliding-window layer, 0 for a full-attention one",
			    (long long)i);
		need_swa |= json_integer_value(e) == 1;
	}
	ckpt_mimo_v2_layer k[2];
	int rv = mv_kinds(root, cfg, need_swa, k, err);
	if (rv != WT_OK)
		return rv;
	ckpt_mimo_v2_layer *d = calloc((size_t)L, sizeof(*d));
	if (d == NULL)
		return wt_seterr(err, WT_ENOMEM, "config.json: out of memory for the layers");
	for (int64_t i = 0; i < L; i++)
		d[i] = k[json_integer_value(json_array_get(p, (size_t)i)) == 1];
	*out = d;
	return WT_OK;
}

int ckpt_config_mimo_v2(const char *json, size_t len, const ckpt_config *cfg,
                        ckpt_mimo_v2_layer **out, wt_errbuf *err)
{
	*out = NULL;
	if (cfg->num_hidden_layers < 1)
		return wt_seterr(err, WT_ECORRUPT, "config.json: num_hidden_layers is not >= 1");
	json_error_t je;
	json_t *v = json_loadb(json, len, JSON_REJECT_DUPLICATES, &je);
	if (v == NULL || !json_is_object(v)) {
		json_decref(v);
		return wt_seterr(err, WT_ECORRUPT, "config.json: not a JSON object");
	}
	int rv = mv_layers(v, cfg, out, err);
	json_decref(v);
	return rv;
}
