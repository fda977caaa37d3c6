/*
 * family_mimo_v2.c — Xiaomi's MiMo-V2-Flash (MiMoV2FlashForCausalLM, model_type mimo_v2_flash;
 * remote code), cut as vLLM's mimo_v2_flash.py loads it.
 *
 * model.embed_tokens / lm_head by padded vocabulary rows (lm_head a ParallelLMHead, never tied:
 * loader/config_mimo_v2.c), norms replicated. Each layer's attention is MiMoV2Attention with
 * the layer's own sizes (the loader's ckpt_config_mimo_v2, the family's layer_dims):
 * hybrid_layer_pattern[i] == 1 makes it the sliding-window attention of
 * swa_num_attention_heads / swa_num_key_value_heads / swa_head_dim / swa_v_head_dim, else the
 * full attention of num_attention_heads / num_key_value_heads / head_dim / v_head_dim.
 * q_proj / k_proj / v_proj fused by heads into qkv_proj [q_r; k_r; v_r] (QKVParallelLinear with
 * v_head_size: a v head is v_head_dim rows, kv heads replicated past the layer's kv heads), their
 * biases with attention_bias, o_proj by columns (H x v_head_dim of them), and on SWA layers with
 * add_swa_attention_sink_bias self_attn.attention_sink_bias [H] by heads (load_weights narrows it
 * to the rank's heads). The layers moe_layer_freq marks (the loader's moe_layers) are MiMoV2MoE:
 * mlp.gate [E, hid] (an nn.Linear in moe_router_dtype) and mlp.gate.e_score_correction_bias
 * [E] replicated and never quantized, mlp.experts.{j} stacked as FusedMoE's w13 / w2 (no shared
 * experts); the others MiMoV2MLP of intermediate_size. Tensors whose names hold "mtp" (the MTP
 * module) and layers past num_hidden_layers are no parameter of the model, which load_weights
 * skips: dropped. vLLM refuses tp_size above n_routed_experts (MiMoV2MoE): so is the layout.
 */
#include <stdlib.h>
#include <string.h>

#include "loader/loader_mimo_v2.h"
#include "shardmap/family_rules.h"

#define MV_ATT SM_LAYER "self_attn."

static const sm_rule mimo_v2_flash_rules[] = {
    SM_RULES_TOP,
    SM_RULES_LNORM,
    SM_QKV_W("q", 0, SM_D_Q),
    SM_QKV_W("k", 1, SM_D_KV),
    SM_QKV_W("v", 2, SM_D_KVV),
    SM_QKV_BS("q", 0, SM_D_Q),
    SM_QKV_BS("k", 1, SM_D_KV),
    SM_QKV_BS("v", 2, SM_D_KVV),
    SM_RULE(MV_ATT "o_proj.weight", MV_ATT "o_proj.weight", SM_K_COLS, 0, SM_U_HEADS, SM_C_ALL,
            SM_F_QUANT, 2, SM_D_HID, SM_D_OV),
    /* one learned logit per head of the SWA layers: the rank's q heads */
    SM_RULE(MV_ATT "attention_sink_bias", MV_ATT "attention_sink_bias", SM_K_ROWS, 0, SM_U_HEADS,
            SM_C_LSINK, 0, 1, SM_D_H, SM_D_ANY),
    SM_RULES_MLP_NOBIAS_IF(SM_C_DENSE),
    SM_RULE_ROUTER("mlp.gate.weight", 2, SM_D_E, SM_D_HID),
    SM_RULE_ROUTER("mlp.gate.e_score_correction_bias", 1, SM_D_E, SM_D_ANY),
    SM_RULES_EXPERTS("mlp.experts.", "gate_proj", "up_proj", "down_proj"),
};

/* MiMoV2FlashDecoderLayer.is_moe_layer: moe_layer_freq[i] truthy (the loader's moe_layers). */
static bool mimo_v2_moe(const ckpt_config *c, int64_t i)
{
	for (size_t k = 0; c->has_moe_layers && k < c->n_moe_layers; k++)
		if (c->moe_layers[k] == i)
			return true;
	return false;
}

/* MiMoV2MoE needs experts and their width where a layer is MoE, and raises when tp_size
 * exceeds n_routed_experts (shardmap_plan_instances: tp_le_experts). */
static int mimo_v2_check(const ckpt_config *c, wt_errbuf *err)
{
	for (int64_t i = 0; i < c->num_hidden_layers; i++)
		if (mimo_v2_moe(c, i) && (c->num_experts <= 0 || c->moe_intermediate_size <= 0))
			return wt_seterr(
			    err, WT_ECORRUPT,
			    "config.json: n_routed_experts / moe_intermediate_size not "
			    ">= 1 but moe_layer_freq makes layer %lld a MiMoV2MoE: give "
			    "the checkpoint's values",
			    (long long)i);
	return WT_OK;
}

/* Each layer's attention from hybrid_layer_pattern and the full / swa_* keys. */
static int mimo_v2_layer_dims(const ckpt *c, sm_layer_dims **out, wt_errbuf *err)
{
	size_t len;
	const char *json = ckpt_config_json(c, &len);
	const ckpt_config *cfg = ckpt_get_config(c);
	ckpt_mimo_v2_layer *b;
	*out = NULL;
	int rv = ckpt_config_mimo_v2(json, len, cfg, &b, err);
	if (rv != WT_OK)
		return rv;
	sm_layer_dims *d = calloc((size_t)cfg->num_hidden_layers, sizeof(*d));
	if (d == NULL) {
		free(b);
		return wt_seterr(err, WT_ENOMEM, "plan: out of memory for the layers' dims");
	}
	for (int64_t i = 0; i < cfg->num_hidden_layers; i++)
		d[i] = (sm_layer_dims){.attn = true,
		                       .mlp = true,
		                       .kv_heads = b[i].kv_heads,
		                       .inter = cfg->intermediate_size,
		                       .heads = b[i].heads,
		                       .head_dim = b[i].head_dim,
		                       .v_head_dim = b[i].v_head_dim,
		                       .sinks = b[i].sinks,
		                       .heads_key = b[i].swa ? "swa_num_attention_heads" : NULL,
		                       .kv_key = b[i].swa ? "swa_num_key_value_heads" : NULL};
	free(b);
	*out = d;
	return WT_OK;
}

/* load_weights skips every name holding "mtp". */
static bool mimo_v2_drop(const ckpt_config *cfg, const char *cn)
{
	(void)cfg;
	return strstr(cn, "mtp") != NULL;
}

static const char *const mimo_v2_flash_archs[] = {"MiMoV2FlashForCausalLM", NULL};

const sm_family shardmap_family_mimo_v2_flash = {
    .name = "mimo_v2_flash",
    .archs = mimo_v2_flash_archs,
    .rules = mimo_v2_flash_rules,
    .n_rules = SM_NRULES(mimo_v2_flash_rules),
    .layer_is_moe = mimo_v2_moe,
    .drop_extra_layers = true,
    .layer_prefix = "model.layers.",
    .check = mimo_v2_check,
    .moe_keys = "moe_layer_freq",
    .drop_canon = mimo_v2_drop,
    .layer_dims = mimo_v2_layer_dims,
    .qkv_v_head_dim = true,
    .tp_le_experts = true,
};
