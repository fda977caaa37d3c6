/*
 * family_hunyuan.c — Hunyuan V1 (transformers 4.57.1 modeling_hunyuan_v1_dense.py: Hunyuan-7B /
 * 4B / 1.8B / 0.5B), cut as vLLM's hunyuan_v1.py loads it.
 */
#include "shardmap/family_rules.h"

/* Per-head query / key RMSNorms [head_dim] (HunYuanAttention's query_layernorm /
 * key_layernorm, applied after RoPE), replicated in full; vLLM builds them exactly when
 * use_qk_norm is true (the loader's class default for the Hunyuan model types:
 * transformers builds them always). */
#define HY_QK_NORM(x)                                                                              \
	SM_RULE(SM_LAYER "self_attn." x ".weight", SM_LAYER "self_attn." x ".weight", SM_K_REPL, 0, \
	        SM_U_NONE, SM_C_QKNORM, 0, 1, SM_D_HD, SM_D_ANY)

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
    SM_RULE(SM_LAYER "mlp.gate_proj.weight", SM_LAYER "mlp.gate_up_proj.weight", SM_K_ROWS, 0,
            SM_U_I, SM_C_ALL, SM_F_QUANT, 2, SM_D_I, SM_D_HID),
    SM_RULE(SM_LAYER "mlp.up_proj.weight", SM_LAYER "mlp.gate_up_proj.weight", SM_K_ROWS, 1, SM_U_I,
            SM_C_ALL, SM_F_QUANT, 2, SM_D_I, SM_D_HID),
    SM_RULE(SM_LAYER "mlp.down_proj.weight", SM_LAYER "mlp.down_proj.weight", SM_K_COLS, 0, SM_U_I,
            SM_C_ALL, SM_F_QUANT, 2, SM_D_HID, SM_D_I),
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
