/*
 * family_ouro.c — Ouro (OuroForCausalLM, model_type ouro: ByteDance/Ouro-1.4B, Ouro-2.6B and
 * their -Thinking; remote code), cut as vLLM's ouro.py loads it.
 *
 * A Qwen2-like decoder whose layers run total_ut_steps times over the same weights (the loop
 * is the engine's; the weights are cut once). Names are kept: model.embed_tokens and lm_head
 * (VocabParallelEmbedding / ParallelLMHead) by padded vocabulary rows, lm_head dropped when
 * tie_word_embeddings (vLLM's lm_head is then embed_tokens itself); q_proj / k_proj / v_proj
 * fused by heads into self_attn.qkv_proj [q_r; k_r; v_r] (QKVParallelLinear bias=False; kv
 * heads replicated when fewer than T); o_proj by columns (RowParallelLinear, no bias);
 * gate_proj / up_proj merged into gate_up_proj, down_proj by columns (no biases); the four
 * norms of each layer (input_layernorm, input_layernorm_2 on the attention output,
 * post_attention_layernorm, post_attention_layernorm_2 on the MLP output) and model.norm
 * replicated. model.early_exit_gate (RowParallelLinear(hidden_size, 1, bias=True), built
 * without quant_config): weight [1, hid] by columns, bias [1] whole on every rank, never
 * quantized; vLLM's forward pass does not read it, its loader loads it, so it is served.
 * Every attention / MLP Linear quantized; embedding, lm_head, norms and the gate not. A q/k/v,
 * o_proj or MLP bias is an unknown tensor (vLLM would skip it silently: another model).
 */
#include "shardmap/family_rules.h"

#define OU_REPL(x) SM_RULE(x, x, SM_K_REPL, 0, SM_U_NONE, SM_C_ALL, 0, 1, SM_D_HID, SM_D_ANY)

static const sm_rule ouro_rules[] = {
    SM_RULES_TOP,
    SM_RULES_LNORM,
    OU_REPL(SM_LAYER "input_layernorm_2.weight"),
    OU_REPL(SM_LAYER "post_attention_layernorm_2.weight"),
    SM_QKV_W("q", 0, SM_D_Q),
    SM_QKV_W("k", 1, SM_D_KV),
    SM_QKV_W("v", 2, SM_D_KV),
    SM_RULE(SM_LAYER "self_attn.o_proj.weight", SM_LAYER "self_attn.o_proj.weight", SM_K_COLS, 0,
            SM_U_HEADS, SM_C_ALL, SM_F_QUANT, 2, SM_D_HID, SM_D_Q),
    SM_RULES_MLP_NOBIAS,
    SM_RULE("model.early_exit_gate.weight", "model.early_exit_gate.weight", SM_K_COLS, 0, SM_U_HID,
            SM_C_ALL, 0, 2, SM_D_ONE, SM_D_HID),
    SM_RULE("model.early_exit_gate.bias", "model.early_exit_gate.bias", SM_K_REPL, 0, SM_U_NONE,
            SM_C_ALL, 0, 1, SM_D_ONE, SM_D_ANY),
};

/* vLLM's OuroAttention takes head_dim = hidden_size / num_attention_heads: a head_dim key that
 * differs is refused. */
static int ouro_check(const ckpt_config *c, wt_errbuf *err)
{
	return shardmap_check_head_quotient(c, "hidden_size", "num_attention_heads", "head_dim",
	                                    err);
}

static const char *const ouro_archs[] = {"OuroForCausalLM", NULL};

/* OuroConfig unties by default (tie_word_embeddings=False) */
const sm_family shardmap_family_ouro = {
    .name = "ouro",
    .archs = ouro_archs,
    .rules = ouro_rules,
    .n_rules = SM_NRULES(ouro_rules),
    .layer_prefix = "model.layers.",
    .check = ouro_check,
};
