/*
 * family_jamba.c — Jamba (JambaForCausalLM, model_type jamba: ai21labs Jamba-v0.1,
 * AI21-Jamba-Mini-1.5 / Large-1.5; docs/format.md section 2.7), as transformers 4.57.1's
 * modeling_jamba.py lays it out and vLLM's jamba.py / mamba/mamba_mixer.py (MambaMixer,
 * the Mamba v1 mixer) load it.
 *
 * Layer i is softmax attention when i % attn_layer_period == attn_layer_offset, else a
 * Mamba mixer; its feed_forward has num_experts experts when num_experts > 1 and
 * i % expert_layer_period == expert_layer_offset, else a dense MLP of intermediate_size.
 * - Attention (self_attn.): q/k/v fused into qkv_proj (no biases), o_proj by columns,
 *   head_dim hidden_size / num_attention_heads, no positional embedding.
 * - Mamba (mamba.), Im = mamba_expand * hidden_size channels split by tp: in_proj [2*Im,
 *   hid] rows [x; z], each half re-sliced per rank (MergedColumnParallelLinear); conv1d
 *   [Im, 1, Kc] and its bias (mamba_conv_bias) by channels; x_proj [R + 2N, Im] by columns
 *   (RowParallelLinear: every rank's dt, B, C summed); dt_proj [Im, R] and its bias by
 *   rows; A_log [Im, N] and D [Im] by rows; out_proj by columns (its bias whole, in_proj's
 *   bias cut like its weight, both with mamba_proj_bias); dt_layernorm [R], b_layernorm /
 *   c_layernorm [N] whole. vLLM builds the mixer's linears without quant_config: none of
 *   them is quantized.
 * - MLP: dense feed_forward gate_proj / up_proj fused into gate_up_proj, down_proj by
 *   columns; MoE feed_forward.router (replicated, never quantized) and experts.{j} stacked
 *   as w13 / w2 (FusedMoE, EP supported).
 *
 * Jamba's sequence classifier (JambaForSequenceClassification, jamba_cls: ai21labs
 * Jamba-tiny-reward-dev), as vLLM's jamba.py builds it: JambaForCausalLM (the decoder above
 * under model., and its ParallelLMHead, which a checkpoint of transformers' class has no
 * tensor for: lm_head.weight is cut by vocabulary rows when present, else absent) plus score =
 * nn.Linear(hidden_size, num_labels, bias=score_bias, dtype=float32), no quant_config: whole on
 * every rank, never quantized. score_bias true (vLLM's own key; transformers' class has no
 * bias) is refused by the loader.
 */
#include <inttypes.h>

#include "shardmap/family_rules.h"

#define JB_ATT SM_LAYER "self_attn."
#define JB_MAM SM_LAYER "mamba."

#define JB_QKV(x, part, d)                                                                         \
	SM_RULE(JB_ATT x "_proj.weight", JB_ATT "qkv_proj.weight", SM_K_QKV, part, SM_U_HEADS,     \
	        SM_C_FULLATT, SM_F_QUANT, 2, d, SM_D_HID)

/* A Mamba tensor split by rows in Im channels, never quantized: [Im] or [Im, d1]. */
#define JB_MROWS(n, nd, d1)                                                                        \
	SM_RULE(JB_MAM n, JB_MAM n, SM_K_ROWS, 0, SM_U_MI, SM_C_LINATT, 0, nd, SM_D_MI, d1)

/* A Mamba RMSNorm weight, replicated. */
#define JB_MNORM(n, d)                                                                             \
	SM_RULE(JB_MAM n ".weight", JB_MAM n ".weight", SM_K_REPL, 0, SM_U_NONE, SM_C_LINATT, 0,   \
	        1, d, SM_D_ANY)

/* The embedding, then the decoder after lm_head: the norms, attention, the Mamba (v1) mixer,
 * the dense MLPs or experts (shared by JambaForSequenceClassification). */
#define JB_EMBED                                                                                   \
	SM_RULE("model.embed_tokens.weight", "model.embed_tokens.weight", SM_K_VOCAB, 0,           \
	        SM_U_NONE, SM_C_ALL, 0, 2, SM_D_V, SM_D_HID)
#define JB_DECODER                                                                                 \
	SM_RULE("model.final_layernorm.weight", "model.final_layernorm.weight", SM_K_REPL, 0,      \
	        SM_U_NONE, SM_C_ALL, 0, 1, SM_D_HID, SM_D_ANY),                                    \
	    SM_RULE(SM_LAYER "input_layernorm.weight", SM_LAYER "input_layernorm.weight",          \
	            SM_K_REPL, 0, SM_U_NONE, SM_C_ALL, 0, 1, SM_D_HID, SM_D_ANY),                  \
	    SM_RULE(SM_LAYER "pre_ff_layernorm.weight", SM_LAYER "pre_ff_layernorm.weight",        \
	            SM_K_REPL, 0, SM_U_NONE, SM_C_ALL, 0, 1, SM_D_HID, SM_D_ANY),                  \
	    JB_QKV("q", 0, SM_D_Q), JB_QKV("k", 1, SM_D_KV), JB_QKV("v", 2, SM_D_KV),              \
	    SM_RULE(JB_ATT "o_proj.weight", JB_ATT "o_proj.weight", SM_K_COLS, 0, SM_U_HEADS,      \
	            SM_C_FULLATT, SM_F_QUANT, 2, SM_D_HID, SM_D_Q),                                \
	    SM_RULE(JB_MAM "in_proj.weight", JB_MAM "in_proj.weight", SM_K_ROWS2, 0, SM_U_MI,      \
	            SM_C_LINATT, 0, 2, SM_D_MI2, SM_D_HID),                                        \
	    SM_RULE(JB_MAM "in_proj.bias", JB_MAM "in_proj.bias", SM_K_ROWS2, 0, SM_U_MI,          \
	            SM_C_MPROJB, 0, 1, SM_D_MI2, SM_D_ANY),                                        \
	    SM_RULE3(JB_MAM "conv1d.weight", JB_MAM "conv1d.weight", SM_K_ROWS, 0, SM_U_MI,        \
	             SM_C_LINATT, 0, SM_D_MI, SM_D_ONE, SM_D_MKER),                                \
	    SM_RULE(JB_MAM "conv1d.bias", JB_MAM "conv1d.bias", SM_K_ROWS, 0, SM_U_MI,             \
	            SM_C_MCONVB, 0, 1, SM_D_MI, SM_D_ANY),                                         \
	    SM_RULE(JB_MAM "x_proj.weight", JB_MAM "x_proj.weight", SM_K_COLS, 0, SM_U_MI,         \
	            SM_C_LINATT, 0, 2, SM_D_MXP, SM_D_MI),                                         \
	    JB_MROWS("dt_proj.weight", 2, SM_D_MR), JB_MROWS("dt_proj.bias", 1, SM_D_ANY),         \
	    JB_MROWS("A_log", 2, SM_D_MN), JB_MROWS("D", 1, SM_D_ANY),                             \
	    SM_RULE(JB_MAM "out_proj.weight", JB_MAM "out_proj.weight", SM_K_COLS, 0, SM_U_MI,     \
	            SM_C_LINATT, 0, 2, SM_D_HID, SM_D_MI),                                         \
	    SM_RULE(JB_MAM "out_proj.bias", JB_MAM "out_proj.bias", SM_K_REPL, 0, SM_U_NONE,       \
	            SM_C_MPROJB, 0, 1, SM_D_HID, SM_D_ANY),                                        \
	    JB_MNORM("dt_layernorm", SM_D_MR), JB_MNORM("b_layernorm", SM_D_MN),                   \
	    JB_MNORM("c_layernorm", SM_D_MN),                                                      \
	    SM_RULES_MLP("feed_forward.", SM_D_I, SM_U_I, SM_C_DENSE),                             \
	    SM_RULE_ROUTER("feed_forward.router.weight", 2, SM_D_E, SM_D_HID),                     \
	    SM_RULES_EXPERTS("feed_forward.experts.", "gate_proj", "up_proj", "down_proj")

static const sm_rule jamba_rules[] = {
    JB_EMBED,
    SM_RULE("lm_head.weight", "lm_head.weight", SM_K_VOCAB, 0, SM_U_NONE, SM_C_ALL, SM_F_LMHEAD, 2,
            SM_D_V, SM_D_HID),
    JB_DECODER,
};

/* Layer i is Mamba unless i % attn_layer_period == attn_layer_offset (JambaConfig's
 * layers_block_type). */
static bool jb_mamba(const ckpt_config *c, int64_t i)
{
	return c->jamba_attn_period <= 0 || i % c->jamba_attn_period != c->jamba_attn_offset;
}

/* JambaConfig's layers_num_experts: num_experts in layers with i % expert_layer_period ==
 * expert_layer_offset, else 1, and one expert is a dense JambaMLP. */
static bool jb_moe(const ckpt_config *c, int64_t i)
{
	return c->num_experts > 1 && c->jamba_expert_period > 0 &&
	       i % c->jamba_expert_period == c->jamba_expert_offset;
}

/* The config rules JambaConfig (offset < period) and its modules (head_dim = hidden_size
 * / num_attention_heads, the Mamba dims) need. */
static int jb_check(const ckpt_config *c, wt_errbuf *err)
{
	if (c->jamba_attn_period <= 0 || c->jamba_attn_offset < 0 ||
	    c->jamba_attn_offset >= c->jamba_attn_period)
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: attn_layer_offset %" PRId64
		                 " must be smaller than attn_layer_period %" PRId64
		                 " (JambaConfig's check; the attention layers are those with "
		                 "i %% period == offset)",
		                 c->jamba_attn_offset, c->jamba_attn_period);
	if (c->jamba_expert_period <= 0 || c->jamba_expert_offset < 0 ||
	    c->jamba_expert_offset >= c->jamba_expert_period)
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: expert_layer_offset %" PRId64
		                 " must be smaller than expert_layer_period %" PRId64
		                 " (JambaConfig's check)",
		                 c->jamba_expert_offset, c->jamba_expert_period);
	if (c->num_experts < 1)
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: Jamba's num_experts is %" PRId64
		                 "; give 1 (dense MLPs only) or more",
		                 c->num_experts);
	if (c->hidden_size % c->num_attention_heads ||
	    c->head_dim != c->hidden_size / c->num_attention_heads)
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: Jamba's attention has head_dim = hidden_size "
		                 "%" PRId64 " / num_attention_heads %" PRId64
		                 " exactly (head_dim %" PRId64 " given or derived); fix "
		                 "hidden_size, num_attention_heads or drop head_dim",
		                 c->hidden_size, c->num_attention_heads, c->head_dim);
	if (c->mamba_d_state <= 0 || c->mamba_d_conv <= 0 || c->mamba_expand <= 0)
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: Jamba's Mamba layers need mamba_d_state, "
		                 "mamba_d_conv and mamba_expand > 0 (-1 = missing: %" PRId64
		                 ", %" PRId64 ", %" PRId64 ")",
		                 c->mamba_d_state, c->mamba_d_conv, c->mamba_expand);
	return WT_OK;
}

static const char *const jamba_archs[] = {"JambaForCausalLM", NULL};

/* JambaConfig leaves tie_word_embeddings false */
const sm_family shardmap_family_jamba = {
    .name = "jamba",
    .archs = jamba_archs,
    .rules = jamba_rules,
    .n_rules = SM_NRULES(jamba_rules),
    .layer_is_moe = jb_moe,
    .layer_prefix = "model.layers.",
    .check = jb_check,
    .layer_is_linear = jb_mamba,
    .linear_keys = "attn_layer_period, attn_layer_offset",
    .moe_keys = "num_experts, expert_layer_period, expert_layer_offset",
    .mamba = true,
};

static const sm_rule jamba_cls_rules[] = {
    JB_EMBED,
    SM_RULE("lm_head.weight", "lm_head.weight", SM_K_VOCAB, 0, SM_U_NONE, SM_C_ALL,
            SM_F_LMHEAD | SM_F_OPT, 2, SM_D_V, SM_D_HID),
    JB_DECODER,
    /* nn.Linear(hidden_size, num_labels, bias=False): whole, never quantized */
    SM_RULE("score.weight", "score.weight", SM_K_REPL, 0, SM_U_NONE, SM_C_ALL, 0, 2, SM_D_NLAB,
            SM_D_HID),
};

/* Jamba's checks and the score head's labels (the loader's num_labels: id2label's entries,
 * else num_labels, else 2). */
static int jb_cls_check(const ckpt_config *c, wt_errbuf *err)
{
	int rv = jb_check(c, err);
	if (rv == WT_OK && c->rob_num_labels < 1)
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: JambaForSequenceClassification has %" PRId64
		                 " labels; give num_labels (or id2label) >= 1",
		                 c->rob_num_labels);
	return rv;
}

static const char *const jamba_cls_archs[] = {"JambaForSequenceClassification", NULL};

const sm_family shardmap_family_jamba_cls = {
    .name = "jamba_cls",
    .archs = jamba_cls_archs,
    .rules = jamba_cls_rules,
    .n_rules = SM_NRULES(jamba_cls_rules),
    .layer_is_moe = jb_moe,
    .layer_prefix = "model.layers.",
    .check = jb_cls_check,
    .layer_is_linear = jb_mamba,
    .linear_keys = "attn_layer_period, attn_layer_offset",
    .moe_keys = "num_experts, expert_layer_period, expert_layer_offset",
    .mamba = true,
};
