/*
 * config_pangu.c — openPangu-Embedded's config keys (model_type PanguEmbedded,
 * PanguEmbeddedForCausalLM: openPangu-Embedded-1B / -7B, the remote PanguEmbeddedConfig,
 * configuration_openpangu_dense.py), read as vLLM's openpangu.py builds the model.
 *
 * vLLM's OpenPanguDecoderLayer picks its attention from the config: MLA when it has all of
 * qk_nope_head_dim, qk_rope_head_dim, v_head_dim and kv_lora_rank (PanguUltraMoE's), the sink
 * attention when param_sink_number > 0 (PanguProMoEV2's), else OpenPanguEmbeddedAttention:
 * Llama's q/k/v / o_proj with `attention_bias or bias` / qkv_bias (vLLM's LlamaDecoderLayer
 * reading; PanguEmbeddedConfig's bias defaults to true). It builds OpenPanguMoE where
 * n_routed_experts is set, extra norms with sandwich_norm / use_mhc / block_post_layernorm_idx,
 * windows with interleaved_sliding_window, encoder-only attention with is_causal false and
 * Pangu's interleaved M-RoPE with rope_scaling.mrope_interleaved. Only the dense Llama-like
 * decoder is read here (the family pangu_dense): every other variant is refused naming its
 * key, as is a hidden_act other than silu (vLLM's check_ffn_act_fn raises).
 */
#include <stdbool.h>
#include <string.h>

#include "loader/config_int.h"
#include "loader/loader.h"

enum { PG_PRESENT, PG_TRUE, PG_FALSE, PG_POSITIVE, PG_NONEMPTY };

static const struct {
	const char *key;
	int when;         /* PG_*: the value that selects the variant */
	const char *what; /* the variant vLLM's openpangu.py then builds */
} pg_variants[] = {
    {"kv_lora_rank", PG_PRESENT, "MLA attention (PanguUltraMoE's)"},
    {"param_sink_number", PG_POSITIVE, "the sink attention (PanguProMoEV2's)"},
    {"n_routed_experts", PG_PRESENT, "OpenPanguMoE layers"},
    {"sandwich_norm", PG_TRUE, "the sandwich norms"},
    {"use_mhc", PG_TRUE, "the mHC streams"},
    {"block_post_layernorm_idx", PG_NONEMPTY, "block post-layernorms"},
    {"interleaved_sliding_window", PG_PRESENT, "sliding-window attention"},
    {"is_causal", PG_FALSE, "encoder-only (bidirectional) attention"},
};

/* Whether v's key `key` (given, not null) selects its variant. */
static bool pg_selects(json_t *x, int when)
{
	switch (when) {
	case PG_TRUE:
		return json_is_true(x);
	case PG_FALSE:
		return json_is_false(x);
	case PG_POSITIVE:
		return !json_is_number(x) || json_number_value(x) > 0;
	case PG_NONEMPTY:
		return !json_is_array(x) || json_array_size(x) > 0;
	default:
		return true;
	}
}

int config_pangu_dense_keys(json_t *v, wt_errbuf *err)
{
	for (size_t i = 0; i < sizeof(pg_variants) / sizeof(pg_variants[0]); i++) {
		json_t *x = json_object_get(v, pg_variants[i].key);
		if (x == NULL || json_is_null(x) || !pg_selects(x, pg_variants[i].when))
			continue;
		/* MLA needs all four keys (vLLM's use_mla); kv_lora_rank alone is inert there */
		if (i == 0 &&
		    (!json_object_get(v, "qk_nope_head_dim") ||
		     !json_object_get(v, "qk_rope_head_dim") || !json_object_get(v, "v_head_dim")))
			continue;
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "config.json: %s selects %s in vLLM's openpangu.py, which "
		                 "PanguEmbeddedForCausalLM is not read with here: remove the key",
		                 pg_variants[i].key, pg_variants[i].what);
	}
	json_t *rs = json_object_get(v, "rope_scaling");
	if (json_is_object(rs) && json_is_true(json_object_get(rs, "mrope_interleaved")))
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "config.json: rope_scaling.mrope_interleaved selects openPangu's "
		                 "interleaved M-RoPE, which is not read here: remove the key");
	return config_pangu_dense_switches(v, err);
}
