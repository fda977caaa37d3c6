/*
 * family_qwen3_next.c — Qwen3-Next (Qwen3NextForCausalLM, model_type qwen3_next:
 * Qwen/Qwen3-Next-80B-A3B-*; docs/format.md section 2.7), as transformers 4.57's
 * modeling_qwen3_next.py lays it out and vLLM's qwen3_next.py shards it.
 *
 * Layers are full attention or linear attention: layer_types when given, else layer i is
 * full attention iff (i + 1) % full_attention_interval == 0 (Qwen3NextConfig, default 4).
 * - Full attention (self_attn.): Qwen3's attention whose q_proj carries an output gate,
 *   [H*d*2, hid] with rows [query_h (d); gate_h (d)] per head; fused with k/v into
 *   qkv_proj taking whole heads with their gates (vLLM: QKVParallelLinear over 2*H
 *   "heads"), o_proj by columns, q_norm / k_norm [d] replicated.
 * - Linear attention (linear_attn., the gated delta net; Hk key heads of dk, Hv value
 *   heads of dv): in_proj_qkvz [2*Hk*dk + 2*Hv*dv, hid] and in_proj_ba [2*Hv, hid] are
 *   grouped per key head, so a contiguous row split gives each rank whole key-head groups;
 *   conv1d [2*Hk*dk + Hv*dv, 1, K] has channels [q; k; v], each segment split
 *   (SM_K_CONVQKV); A_log, dt_bias [Hv] split; norm [dv] replicated; out_proj by columns.
 * - MLP: Qwen2-MoE's (router, per-expert gate/up/down stacked, a shared expert with its
 *   sigmoid gate), a dense Qwen3NextMLP in mlp_only_layers and off decoder_sparse_step;
 *   no biases anywhere in the MLPs.
 * - mtp.*: the multi-token-prediction module of the released checkpoints, dropped (listed
 *   as skipped) as transformers ignores it on load (_keys_to_ignore_on_load_unexpected); the
 *   draft family qwen3_next_mtp (family_qwen3_next_mtp.c) cuts it.
 */
#include <inttypes.h>

#include "shardmap/family_rules.h"

#define Q3N_ATT SM_LAYER "self_attn."
#define Q3N_LIN SM_LAYER "linear_attn."

/* Gated q (dims d: SM_D_Q2), k, v weight / optional bias of full-attention layers. */
#define Q3N_QKV(x, part, d)                                                                        \
	SM_RULE(Q3N_ATT x "_proj.weight", Q3N_ATT "qkv_proj.weight", SM_K_QKV, part, SM_U_HEADS,   \
	        SM_C_FULLATT, SM_F_QUANT, 2, d, SM_D_HID),                                         \
	    SM_RULE(Q3N_ATT x "_proj.bias", Q3N_ATT "qkv_proj.bias", SM_K_QKV, part, SM_U_HEADS,   \
	            SM_C_FULLATT, SM_F_OPT, 1, d, SM_D_ANY)

/* A replicated 1-D tensor of the layer's attention module (cond C). */
#define Q3N_REPL(n, C, d)                                                                          \
	SM_RULE(SM_LAYER n, SM_LAYER n, SM_K_REPL, 0, SM_U_NONE, C, 0, 1, d, SM_D_ANY)

/* A linear-attention tensor split by rows in unit U (not quantized unless F says). */
#define Q3N_LROWS(n, U, F, nd, d0, d1)                                                             \
	SM_RULE(Q3N_LIN n, Q3N_LIN n, SM_K_ROWS, 0, U, SM_C_LINATT, F, nd, d0, d1)

/* Qwen3NextMLP (no biases) under module M: gate/up merged by rows, down by columns. */
#define Q3N_MLP(M, D, U, C)                                                                        \
	SM_RULE(SM_LAYER M "gate_proj.weight", SM_LAYER M "gate_up_proj.weight", SM_K_ROWS, 0, U,  \
	        C, SM_F_QUANT, 2, D, SM_D_HID),                                                    \
	    SM_RULE(SM_LAYER M "up_proj.weight", SM_LAYER M "gate_up_proj.weight", SM_K_ROWS, 1,   \
	            U, C, SM_F_QUANT, 2, D, SM_D_HID),                                             \
	    SM_RULE(SM_LAYER M "down_proj.weight", SM_LAYER M "down_proj.weight", SM_K_COLS, 0, U, \
	            C, SM_F_QUANT, 2, SM_D_HID, D)

static const sm_rule qwen3_next_rules[] = {
    SM_RULES_TOP,
    SM_RULES_LNORM,
    /* full attention */
    Q3N_QKV("q", 0, SM_D_Q2),
    Q3N_QKV("k", 1, SM_D_KV),
    Q3N_QKV("v", 2, SM_D_KV),
    SM_RULE(Q3N_ATT "o_proj.weight", Q3N_ATT "o_proj.weight", SM_K_COLS, 0, SM_U_HEADS,
            SM_C_FULLATT, SM_F_QUANT, 2, SM_D_HID, SM_D_Q),
    SM_RULE(Q3N_ATT "o_proj.bias", Q3N_ATT "o_proj.bias", SM_K_REPL, 0, SM_U_NONE, SM_C_FULLATT,
            SM_F_OPT, 1, SM_D_HID, SM_D_ANY),
    Q3N_REPL("self_attn.q_norm.weight", SM_C_FULLATT, SM_D_HD),
    Q3N_REPL("self_attn.k_norm.weight", SM_C_FULLATT, SM_D_HD),
    /* linear attention: in_proj_ba is never quantized (Qwen's FP8 release keeps it BF16;
     * vLLM: ba_proj takes no block FP8), nor are conv1d, A_log, dt_bias and the norm */
    Q3N_LROWS("in_proj_qkvz.weight", SM_U_LKH, SM_F_QUANT, 2, SM_D_LQKVZ, SM_D_HID),
    Q3N_LROWS("in_proj_ba.weight", SM_U_LKH, 0, 2, SM_D_LBA, SM_D_HID),
    SM_RULE3(Q3N_LIN "conv1d.weight", Q3N_LIN "conv1d.weight", SM_K_CONVQKV, 0, SM_U_LKH,
             SM_C_LINATT, 0, SM_D_LCONV, SM_D_ONE, SM_D_LKER),
    Q3N_LROWS("A_log", SM_U_LVH, 0, 1, SM_D_LHV, SM_D_ANY),
    Q3N_LROWS("dt_bias", SM_U_LVH, 0, 1, SM_D_LHV, SM_D_ANY),
    Q3N_REPL("linear_attn.norm.weight", SM_C_LINATT, SM_D_LDV),
    SM_RULE(Q3N_LIN "out_proj.weight", Q3N_LIN "out_proj.weight", SM_K_COLS, 0, SM_U_LVH,
            SM_C_LINATT, SM_F_QUANT, 2, SM_D_HID, SM_D_LVD),
    /* MLP: Qwen2-MoE's */
    Q3N_MLP("mlp.", SM_D_I, SM_U_I, SM_C_DENSE),
    SM_RULE_ROUTER("mlp.gate.weight", 2, SM_D_E, SM_D_HID),
    SM_RULES_EXPERTS("mlp.experts.", "gate_proj", "up_proj", "down_proj"),
    Q3N_MLP("mlp.shared_expert.", SM_D_ISH, SM_U_ISH, SM_C_SHARED),
    SM_RULE(SM_LAYER "mlp.shared_expert_gate.weight", SM_LAYER "mlp.shared_expert_gate.weight",
            SM_K_REPL, 0, SM_U_NONE, SM_C_SHARED, 0, 2, SM_D_ONE, SM_D_HID),
};

/* Qwen3NextConfig's default full_attention_interval (the kwargs default it reads). */
#define Q3N_INTERVAL 4

/* Qwen3NextDecoderLayer: linear_attn when layer_types[i] is "linear_attention"; without
 * layer_types, every full_attention_interval-th layer (1-based) is full attention. */
static bool q3n_linear(const ckpt_config *c, int64_t i)
{
	if (c->has_layer_types)
		return i >= 0 && (uint64_t)i < c->n_layer_types &&
		       c->layer_types[i] == CKPT_LAYER_LINEAR_ATTN;
	int64_t n = c->full_attention_interval > 0 ? c->full_attention_interval : Q3N_INTERVAL;
	return (i + 1) % n != 0;
}

/* layer_types as transformers' layer_type_validation checks it (one per layer), and only
 * the two types a Qwen3-Next layer can be. */
static int q3n_check_types(const ckpt_config *c, wt_errbuf *err)
{
	if (!c->has_layer_types)
		return WT_OK;
	if ((uint64_t)c->num_hidden_layers != c->n_layer_types)
		return wt_seterr(
		    err, WT_ECORRUPT,
		    "config.json: layer_types has %zu entries but num_hidden_layers is "
		    "%" PRId64 "; give one type per layer",
		    c->n_layer_types, c->num_hidden_layers);
	for (size_t k = 0; k < c->n_layer_types; k++)
		if (c->layer_types[k] != CKPT_LAYER_LINEAR_ATTN &&
		    c->layer_types[k] != CKPT_LAYER_FULL_ATTN)
			return wt_seterr(err, WT_ECORRUPT,
			                 "config.json: layer_types[%zu] is neither "
			                 "\"linear_attention\" nor \"full_attention\", the two "
			                 "Qwen3-Next layer types",
			                 k);
	return WT_OK;
}

/* The layer types, then the gated delta net's sizes when a layer has it: all of them
 * given, and a whole number of value heads per key head (Hv / Hk, how in_proj_qkvz and
 * in_proj_ba group their rows). */
static int q3n_check(const ckpt_config *c, wt_errbuf *err)
{
	int rv = q3n_check_types(c, err);
	if (rv != WT_OK)
		return rv;
	int64_t n_lin = 0;
	for (int64_t i = 0; i < c->num_hidden_layers; i++)
		n_lin += q3n_linear(c, i);
	if (n_lin == 0)
		return WT_OK;
	if (c->lin_num_k_heads <= 0 || c->lin_num_v_heads <= 0 || c->lin_k_head_dim <= 0 ||
	    c->lin_v_head_dim <= 0 || c->lin_conv_kernel <= 0)
		return wt_seterr(
		    err, WT_ECORRUPT,
		    "config.json: Qwen3-Next has %" PRId64
		    " linear-attention layers and needs linear_num_key_heads, "
		    "linear_num_value_heads, linear_key_head_dim, linear_value_head_dim "
		    "and linear_conv_kernel_dim (-1 = missing: %" PRId64 ", %" PRId64 ", %" PRId64
		    ", %" PRId64 ", %" PRId64 ")",
		    n_lin, c->lin_num_k_heads, c->lin_num_v_heads, c->lin_k_head_dim,
		    c->lin_v_head_dim, c->lin_conv_kernel);
	if (c->lin_num_v_heads % c->lin_num_k_heads)
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: linear_num_value_heads %" PRId64
		                 " is not a multiple of linear_num_key_heads %" PRId64
		                 " (each key head leads linear_num_value_heads / "
		                 "linear_num_key_heads value heads)",
		                 c->lin_num_v_heads, c->lin_num_k_heads);
	return WT_OK;
}

static const char *const qwen3_next_archs[] = {"Qwen3NextForCausalLM", NULL};

/* Qwen3NextConfig leaves tie_word_embeddings false */
const sm_family shardmap_family_qwen3_next = {
    .name = "qwen3_next",
    .archs = qwen3_next_archs,
    .rules = qwen3_next_rules,
    .n_rules = SM_NRULES(qwen3_next_rules),
    .layer_is_moe = shardmap_moe_qwen,
    .layer_prefix = "model.layers.",
    .check = q3n_check,
    .layer_is_linear = q3n_linear,
    .q_gated = true,
    .drop_prefix = "mtp.",
};
