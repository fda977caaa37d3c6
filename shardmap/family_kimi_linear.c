/*
 * family_kimi_linear.c — Kimi Linear (KimiLinearForCausalLM, model_type kimi_linear:
 * moonshotai/Kimi-Linear-48B-A3B-*, remote code), cut as vLLM's kimi_linear.py and its
 * KimiDeltaAttention (vllm/model_executor/layers/kda.py) load it. The loader
 * (loader/config_kimi_linear.c) reads linear_attn_config into layer_types (layer i is KDA when
 * i + 1 is in kda_layers, else MLA) and the linear_* sizes (Hk = Hv = num_heads heads of
 * dk = dv = head_dim, the conv's short_conv_kernel_size taps).
 * - MLA layers (SM_C_FULLATT; vLLM's KimiMLAAttention, q_lora_rank None and use_nope):
 *   DeepSeek's rows without q_lora_rank's (SM_RULES_MLA_KV): q_proj and kv_b_proj by heads,
 *   kv_a_proj_with_mqa whole (quantized), kv_a_layernorm whole, o_proj by columns.
 * - KDA layers (SM_C_LINATT, the same self_attn. names): q_proj / k_proj / v_proj, f_b_proj,
 *   g_b_proj and b_proj column-parallel by the KDA heads (separate ColumnParallelLinears, none
 *   merged), f_a_proj / g_a_proj ReplicatedLinears whole (both quantized), o_proj by columns;
 *   q_conv1d / k_conv1d / v_conv1d [Hk*dk, 1, K] by rows (ColumnParallelLinears built without
 *   quant_config, never quantized), dt_bias [Hk*dk] by rows (sharded_weight_loader(0)), A_log
 *   [1, 1, Hk, 1] on dim 2 (sharded_weight_loader(2)), o_norm [dk] whole.
 * - MLP: KimiMLP (gate / up merged, down by columns, no biases) below first_k_dense_replace and
 *   off moe_layer_freq; else block_sparse_moe: gate (ReplicatedLinear, quant_config None) and
 *   its e_score_correction_bias whole, experts w1 / w3 / w2 into FusedMoE's w13 / w2 stacks
 *   (expert parallelism as DeepSeek's), shared_experts (num_shared_experts x
 *   moe_intermediate_size wide) as KimiMLP.
 * - Top: embed_tokens / lm_head vocabulary-parallel, norm whole. Layers num_hidden_layers ..
 *   + num_nextn_predict_layers - 1 are dropped (vLLM's get_spec_layer_idx_from_weight_name).
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "shardmap/family_rules.h"

#define KL_ATT SM_LAYER "self_attn."

/* A KDA tensor of kind K split by the KDA heads (unit SM_U_LVH). */
#define KL_KDA(n, K, F, nd, d0, d1)                                                                \
	SM_RULE(KL_ATT n, KL_ATT n, K, 0, SM_U_LVH, SM_C_LINATT, F, nd, d0, d1)
/* A KDA short convolution [Hk*dk, 1, K] by rows. */
#define KL_CONV(x)                                                                                 \
	SM_RULE3(KL_ATT x "_conv1d.weight", KL_ATT x "_conv1d.weight", SM_K_ROWS, 0, SM_U_LVH,     \
	         SM_C_LINATT, 0, SM_D_LVD, SM_D_ONE, SM_D_LKER)
/* KimiMLP (no biases) under module M: gate / up merged by rows, down by columns. */
#define KL_MLP(M, D, U, C)                                                                         \
	SM_RULE(SM_LAYER M "gate_proj.weight", SM_LAYER M "gate_up_proj.weight", SM_K_ROWS, 0, U,  \
	        C, SM_F_QUANT, 2, D, SM_D_HID),                                                    \
	    SM_RULE(SM_LAYER M "up_proj.weight", SM_LAYER M "gate_up_proj.weight", SM_K_ROWS, 1,   \
	            U, C, SM_F_QUANT, 2, D, SM_D_HID),                                             \
	    SM_RULE(SM_LAYER M "down_proj.weight", SM_LAYER M "down_proj.weight", SM_K_COLS, 0, U, \
	            C, SM_F_QUANT, 2, SM_D_HID, D)

static const sm_rule kimi_linear_rules[] = {
    SM_RULES_TOP,
    SM_RULES_LNORM,
    /* MLA first: its q_proj / o_proj give way to KDA's at the KDA layers */
    SM_RULES_MLA_KV("self_attn.", SM_C_FULLATT, SM_C_FULLATT),
    KL_KDA("q_proj.weight", SM_K_ROWS, SM_F_QUANT, 2, SM_D_LVD, SM_D_HID),
    KL_KDA("k_proj.weight", SM_K_ROWS, SM_F_QUANT, 2, SM_D_LVD, SM_D_HID),
    KL_KDA("v_proj.weight", SM_K_ROWS, SM_F_QUANT, 2, SM_D_LVD, SM_D_HID),
    KL_CONV("q"),
    KL_CONV("k"),
    KL_CONV("v"),
    {KL_ATT "A_log",
     KL_ATT "A_log",
     SM_K_ROWS,
     0,
     SM_U_LVH,
     SM_C_LINATT,
     0,
     4,
     {SM_D_ONE, SM_D_ONE, SM_D_LHV, SM_D_ONE}},
    KL_KDA("f_a_proj.weight", SM_K_REPL, SM_F_QUANT, 2, SM_D_LDV, SM_D_HID),
    KL_KDA("f_b_proj.weight", SM_K_ROWS, SM_F_QUANT, 2, SM_D_LVD, SM_D_LDV),
    KL_KDA("dt_bias", SM_K_ROWS, 0, 1, SM_D_LVD, SM_D_ANY),
    KL_KDA("b_proj.weight", SM_K_ROWS, SM_F_QUANT, 2, SM_D_LHV, SM_D_HID),
    KL_KDA("g_a_proj.weight", SM_K_REPL, SM_F_QUANT, 2, SM_D_LDV, SM_D_HID),
    KL_KDA("g_b_proj.weight", SM_K_ROWS, SM_F_QUANT, 2, SM_D_LVD, SM_D_LDV),
    KL_KDA("o_norm.weight", SM_K_REPL, 0, 1, SM_D_LDV, SM_D_ANY),
    KL_KDA("o_proj.weight", SM_K_COLS, SM_F_QUANT, 2, SM_D_HID, SM_D_LVD),
    /* MLP */
    KL_MLP("mlp.", SM_D_I, SM_U_I, SM_C_DENSE),
    SM_RULE_ROUTER("block_sparse_moe.gate.weight", 2, SM_D_E, SM_D_HID),
    SM_RULE_ROUTER("block_sparse_moe.gate.e_score_correction_bias", 1, SM_D_E, SM_D_ANY),
    SM_RULES_EXPERTS("block_sparse_moe.experts.", "w1", "w3", "w2"),
    KL_MLP("block_sparse_moe.shared_experts.", SM_D_ISH, SM_U_ISH, SM_C_SHARED),
};

/* KimiDecoderLayer: KDA where the loader's layer_types (kda_layers, 1-based) says so. */
static bool kl_kda(const ckpt_config *c, int64_t i)
{
	return c->has_layer_types && i >= 0 && (uint64_t)i < c->n_layer_types &&
	       c->layer_types[i] == CKPT_LAYER_LINEAR_ATTN;
}

/* The layer index of "model.layers.N." name n, else -1. */
static int64_t kl_layer(const char *n)
{
	static const char pre[] = "model.layers.";
	if (strncmp(n, pre, sizeof(pre) - 1) != 0)
		return -1;
	char *end;
	long long i = strtoll(n + sizeof(pre) - 1, &end, 10);
	return end != n + sizeof(pre) - 1 && *end == '.' && i >= 0 ? (int64_t)i : -1;
}

/* The MTP layers vLLM's KimiLinearModel.load_weights skips: num_hidden_layers ..
 * + num_nextn_predict_layers - 1 (the loader's kv_nextn). */
static bool kl_drop(const ckpt_config *c, const char *cn)
{
	int64_t i = kl_layer(cn);
	return i >= c->num_hidden_layers && i - c->num_hidden_layers < c->kv_nextn;
}

/* What the loader's reader (config_kimi_linear_keys) makes of a config it ran on: the layer
 * kinds, and the sizes each kind is cut by. Refused: a KimiLinearForCausalLM config of another
 * model_type (the reader never ran), a missing MLA or KDA size where such a layer is. */
static int kl_check(const ckpt_config *c, wt_errbuf *err)
{
	if (c->model_type == NULL || strcmp(c->model_type, "kimi_linear") != 0)
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "config.json: KimiLinearForCausalLM with model_type '%s': vLLM "
		                 "reads its config as KimiLinearConfig (model_type kimi_linear, "
		                 "linear_attn_config's layer kinds); give model_type kimi_linear",
		                 c->model_type != NULL ? c->model_type : "");
	int64_t n_kda = 0;
	for (int64_t i = 0; i < c->num_hidden_layers; i++)
		n_kda += kl_kda(c, i);
	if (n_kda > 0 &&
	    (c->lin_num_v_heads <= 0 || c->lin_v_head_dim <= 0 || c->lin_conv_kernel <= 0))
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: Kimi-Linear has %" PRId64
		                 " KDA layers and needs linear_attn_config.num_heads, head_dim and "
		                 "short_conv_kernel_size",
		                 n_kda);
	if (n_kda < c->num_hidden_layers && (c->kv_lora_rank <= 0 || c->qk_nope_head_dim <= 0 ||
	                                     c->qk_rope_head_dim < 0 || c->v_head_dim <= 0))
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: Kimi-Linear has %" PRId64
		                 " MLA layers (not in linear_attn_config.kda_layers) and needs "
		                 "kv_lora_rank, qk_nope_head_dim, qk_rope_head_dim and v_head_dim",
		                 c->num_hidden_layers - n_kda);
	return WT_OK;
}

static const char *const kimi_linear_archs[] = {"KimiLinearForCausalLM", NULL};

/* KimiLinearConfig unties (the loader refuses a tie: vLLM's head is never the embedding). */
const sm_family shardmap_family_kimi_linear = {
    .name = "kimi_linear",
    .archs = kimi_linear_archs,
    .rules = kimi_linear_rules,
    .n_rules = SM_NRULES(kimi_linear_rules),
    .layer_is_moe = shardmap_moe_deepseek,
    .layer_prefix = "model.layers.",
    .check = kl_check,
    .layer_is_linear = kl_kda,
    .drop_canon = kl_drop,
    .linear_keys = "linear_attn_config.kda_layers",
    .moe_keys = "num_experts, first_k_dense_replace, moe_layer_freq",
    .lin_heads_key = "linear_attn_config.num_heads",
};
