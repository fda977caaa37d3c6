/*
 * config_pangu_v2.c — openPangu-Pro-MoE-V2's config keys (model_type PanguProMoEV2,
 * PanguProMoEV2ForCausalLM; remote code), read as vLLM's openpangu.py builds OpenPanguMoEModel
 * with the sink attention (OpenPanguSinkAttention) and OpenPanguMoE.
 *
 * OpenPanguDecoderLayer picks MLA when the config has all of qk_nope_head_dim,
 * qk_rope_head_dim, v_head_dim and kv_lora_rank (hasattr), else the sink attention when
 * param_sink_number > 0, else OpenPanguEmbeddedAttention. Only the sink attention is read here.
 *
 *   key                     vLLM's reading                          here
 *   param_sink_number       hasattr and > 0: the sink attention     required, integer >= 1
 *   qk_nope_dim,            getattr None (None + None raises):      required, >= 0 / >= 1 / >= 1
 *   qk_rope_dim,            head_dim = qk_rope_dim + qk_nope_dim,   (each up to 2^20), laid onto
 *   v_channels              v heads of v_channels                   head_dim and v_head_dim
 *                                                                   (vLLM never reads
 *                                                                   config.head_dim here)
 *   attention_bias, bias,   `attention_bias or bias`, qkv_bias      Xverse's switches
 *   qkv_bias                                                        (config_internlm3.c)
 *   hidden_act              check_ffn_act_fn: silu only             must be silu
 *   n_routed_experts, ...   config.X (OpenPanguMoE)                 config_pangu_moe_need
 *   sandwich_norm,          getattr False                           read (config_pangu_flags)
 *   router_enable_expert_bias
 *   interleaved_sliding_window  windows in the sink attention       refused: remove the key
 *   is_causal false         raises ("not support for attention      refused
 *                           with sink")
 *   use_mhc true, block_post_layernorm_idx non-empty: the mHC streams and block post-layernorms
 *   are refused naming the key. use_mome, sliding_window(_list), index_topk feed only the MLA
 *   attention (inert here). Class defaults: config_defaults_remote.c.
 */
#include <stdbool.h>
#include <string.h>

#include "loader/config_int.h"
#include "loader/loader.h"

#define PV2_ARCH    "PanguProMoEV2ForCausalLM"
#define PV2_MAX_DIM (1 << 20) /* a head dim past this is no model's (and sums stay exact) */

/* The sink attention's dims: qk_nope_dim >= 0, qk_rope_dim and v_channels >= 1; laid onto
 * head_dim (qk_rope_dim + qk_nope_dim) and v_head_dim (v_channels). */
static int pv2_dims(json_t *v, wt_errbuf *err)
{
	static const struct {
		const char *key;
		json_int_t min;
	} dims[] = {{"qk_nope_dim", 0}, {"qk_rope_dim", 1}, {"v_channels", 1}};
	json_int_t val[3];
	for (size_t i = 0; i < 3; i++) {
		json_t *x = json_object_get(v, dims[i].key);
		if (x == NULL || json_is_null(x))
			return wt_seterr(
			    err, WT_ECORRUPT,
			    "config.json: %s is missing; vLLM's OpenPanguSinkAttention "
			    "reads it for " PV2_ARCH " (no default): give %s",
			    dims[i].key, dims[i].key);
		if (!json_is_integer(x) || json_integer_value(x) < dims[i].min ||
		    json_integer_value(x) > PV2_MAX_DIM)
			return wt_seterr(
			    err, WT_ECORRUPT,
			    "config.json: %s is not an integer from %lld to %d: give the "
			    "checkpoint's value",
			    dims[i].key, (long long)dims[i].min, PV2_MAX_DIM);
		val[i] = json_integer_value(x);
	}
	if (json_object_set_new(v, "head_dim", json_integer(val[0] + val[1])) != 0 ||
	    json_object_set_new(v, "v_head_dim", json_integer(val[2])) != 0)
		return wt_seterr(err, WT_ENOMEM, "config.json: out of memory");
	return WT_OK;
}

/* The attention vLLM builds: MLA (all four MLA keys) or the embedded attention (no sink) are
 * other models. */
static int pv2_attention(json_t *v, wt_errbuf *err)
{
	if (json_object_get(v, "qk_nope_head_dim") && json_object_get(v, "qk_rope_head_dim") &&
	    json_object_get(v, "v_head_dim") && json_object_get(v, "kv_lora_rank"))
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "config.json: qk_nope_head_dim, qk_rope_head_dim, v_head_dim and "
		                 "kv_lora_rank select MLA attention in vLLM's openpangu.py, not "
		                 "the sink attention " PV2_ARCH " is read with here: remove them");
	json_t *n = json_object_get(v, "param_sink_number");
	if (n == NULL || !json_is_integer(n) || json_integer_value(n) < 1)
		return wt_seterr(
		    err, WT_EUNSUPPORTED,
		    "config.json: param_sink_number is missing or not an integer >= 1; "
		    "vLLM's openpangu.py then builds OpenPanguEmbeddedAttention, not "
		    "the sink attention " PV2_ARCH " is read with here: give the "
		    "checkpoint's param_sink_number");
	return WT_OK;
}

static int pv2_variants(json_t *v, wt_errbuf *err)
{
	static const struct {
		const char *key, *what;
	} bad[] = {
	    {"interleaved_sliding_window", "sliding-window sink attention"},
	    {"use_mhc", "the mHC streams"},
	    {"block_post_layernorm_idx", "block post-layernorms"},
	    {"is_causal", "bidirectional attention (vLLM raises: not supported with sinks)"},
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		json_t *x = json_object_get(v, bad[i].key);
		bool on = x != NULL && !json_is_null(x);
		if (i == 1)
			on = json_is_true(x);
		else if (i == 2)
			on = on && (!json_is_array(x) || json_array_size(x) > 0);
		else if (i == 3)
			on = json_is_false(x);
		if (on)
			return wt_seterr(
			    err, WT_EUNSUPPORTED,
			    "config.json: %s selects %s in vLLM's openpangu.py, which " PV2_ARCH
			    " is not read with here: remove the key",
			    bad[i].key, bad[i].what);
	}
	return WT_OK;
}

int config_pangu_v2_keys(json_t *v, wt_errbuf *err)
{
	int rv = pv2_attention(v, err);
	if (rv == WT_OK)
		rv = pv2_dims(v, err);
	if (rv == WT_OK)
		rv = pv2_variants(v, err);
	if (rv == WT_OK)
		rv = config_pangu_moe_need(v, PV2_ARCH, 4, err);
	return rv == WT_OK ? config_xverse_keys(v, err) : rv;
}
