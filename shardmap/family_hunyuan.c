/*
 * family_hunyuan.c — Hunyuan V1 dense and MoE (transformers 4.57.1
 * modeling_hunyuan_v1_dense.py: Hunyuan-7B / 4B / 1.8B / 0.5B; modeling_hunyuan_v1_moe.py:
 * Hunyuan-A13B), cut as vLLM's hunyuan_v1.py loads them.
 */
#include <inttypes.h>

#include "shardmap/family_rules.h"

/* Per-head query / key RMSNorms [head_dim] (HunYuanAttention's query_layernorm /
 * key_layernorm, applied after RoPE), replicated in full; vLLM builds them exactly when
 * use_qk_norm is true (the loader's class default for the Hunyuan model types:
 * transformers builds them always). */
#define HY_QK_NORM(x)                                                                              \
	SM_RULE(SM_LAYER "self_attn." x ".weight", SM_LAYER "self_attn." x ".weight", SM_K_REPL,   \
	        0, SM_U_NONE, SM_C_QKNORM, 0, 1, SM_D_HD, SM_D_ANY)

/* Hunyuan V1 dense (HunYuanDenseV1ForCausalLM): Llama's table with q/k/v and o_proj biases
 * exactly when attention_bias is true (every attention Linear built with
 * bias=attention_bias), the two per-head norms, a bias-free gated MLP (gate / up merged by
 * rows, down by columns). */
static const sm_rule hunyuan_dense_rules[] = {
    SM_RULES_TOP,
    SM_RULES_LNORM,
    SM_RULES_ATTN_SWITCHED,
    HY_QK_NORM("query_layernorm"),
    HY_QK_NORM("key_layernorm"),
    SM_RULES_MLP_NOBIAS,
};

/* Cross-layer attention (use_cla: vLLM's HunYuanCrossAttention layers hold q_proj only and
 * read the previous layer's k / v) has no transformers 4.57.1 counterpart; refused. */
static int hunyuan_check_attn(const ckpt_config *c, wt_errbuf *err)
{
	if (c->use_cla)
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "config.json: %s with use_cla true (cross-layer attention: layers "
		                 "without k_proj / v_proj) is not supported: transformers 4.57.1 "
		                 "builds every layer with its own k / v; set use_cla false for a "
		                 "checkpoint whose layers all have them",
		                 c->architecture ? c->architecture : "Hunyuan V1");
	return WT_OK;
}

/* Hunyuan V1 MoE (HunYuanMoEV1ForCausalLM): the dense table's attention; every layer a
 * HunYuanSparseMoeBlock: the router mlp.gate.wg [E, hid] (vLLM's ReplicatedLinear
 * mlp.gate) replicated and never quantized, the experts mlp.experts.{j}.{gate,up,down}_proj
 * stacked as w13 / w2 (split by Ie under TP, by experts under EP), the shared MLP
 * mlp.shared_mlp.{gate,up,down}_proj (intermediate_size x num_shared_expert rows, with
 * use_mixed_mlp_moe) merged as a dense MLP; no biases in the MLPs. */
#define HY_SHARED(x, part)                                                                         \
	SM_RULE(SM_LAYER "mlp.shared_mlp." x ".weight",                                            \
	        SM_LAYER "mlp.shared_mlp.gate_up_proj.weight", SM_K_ROWS, part, SM_U_ISH,          \
	        SM_C_SHARED, SM_F_QUANT, 2, SM_D_ISH, SM_D_HID)
static const sm_rule hunyuan_moe_rules[] = {
    SM_RULES_TOP,
    SM_RULES_LNORM,
    SM_RULES_ATTN_SWITCHED,
    HY_QK_NORM("query_layernorm"),
    HY_QK_NORM("key_layernorm"),
    SM_RULE(SM_LAYER "mlp.gate.wg.weight", SM_LAYER "mlp.gate.weight", SM_K_REPL, 0, SM_U_NONE,
            SM_C_MOE, 0, 2, SM_D_E, SM_D_HID),
    SM_RULES_EXPERTS("mlp.experts.", "gate_proj", "up_proj", "down_proj"),
    HY_SHARED("gate_proj", 0),
    HY_SHARED("up_proj", 1),
    SM_RULE(SM_LAYER "mlp.shared_mlp.down_proj.weight", SM_LAYER "mlp.shared_mlp.down_proj.weight",
            SM_K_COLS, 0, SM_U_ISH, SM_C_SHARED, SM_F_QUANT, 2, SM_D_HID, SM_D_ISH),
};

/* Every layer MoE (vLLM's _is_moe: num_experts > 1). HunYuanMoEV1Config's num_experts
 * default is 1, with which vLLM builds a dense MLP and transformers a one-expert MoE: refused
 * (as is a per-layer list, which vLLM's FusedMoE cannot take). */
static bool hunyuan_layer_is_moe(const ckpt_config *cfg, int64_t i)
{
	(void)i;
	return cfg->num_experts > 1;
}

static int hunyuan_moe_check(const ckpt_config *c, wt_errbuf *err)
{
	int rv = hunyuan_check_attn(c, err);
	if (rv != WT_OK)
		return rv;
	if (c->num_experts <= 1)
		return wt_seterr(
		    err, WT_ECORRUPT,
		    "config.json: HunYuanMoEV1ForCausalLM needs num_experts > 1 (every "
		    "layer is MoE); num_experts is %" PRId64
		    " (HunYuanMoEV1Config's default 1 when absent), with which vLLM builds "
		    "a dense MLP and transformers a one-expert MoE; write the model's "
		    "expert count into config.json",
		    c->num_experts);
	return WT_OK;
}

static const char *const hunyuan_dense_archs[] = {"HunYuanDenseV1ForCausalLM", NULL};

/* HunYuanDenseV1Config unties by default (tie_word_embeddings=False; Hunyuan-0.5B's
 * config.json sets it true) */
const sm_family shardmap_family_hunyuan_v1_dense = {
    .name = "hunyuan_v1_dense",
    .archs = hunyuan_dense_archs,
    .rules = hunyuan_dense_rules,
    .n_rules = SM_NRULES(hunyuan_dense_rules),
    .layer_prefix = "model.layers.",
    .check = hunyuan_check_attn,
};

static const char *const hunyuan_moe_archs[] = {"HunYuanMoEV1ForCausalLM", NULL};

/* HunYuanMoEV1Config unties by default (Hunyuan-A13B's config.json sets it true) */
const sm_family shardmap_family_hunyuan_moe = {
    .name = "hunyuan_v1_moe",
    .archs = hunyuan_moe_archs,
    .rules = hunyuan_moe_rules,
    .n_rules = SM_NRULES(hunyuan_moe_rules),
    .layer_is_moe = hunyuan_layer_is_moe,
    .layer_prefix = "model.layers.",
    .check = hunyuan_moe_check,
    .moe_keys = "num_experts",
};
