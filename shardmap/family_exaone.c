/*
 * family_exaone.c — EXAONE 3.x (ExaoneForCausalLM, remote code: LGAI-EXAONE/EXAONE-3.0-7.8B,
 * EXAONE-3.5-2.4B / 7.8B / 32B, EXAONE-Deep), cut as vLLM's exaone.py loads it.
 *
 * Llama's decoder under GPT-2-style names, which are kept: transformer.wte and lm_head
 * (ParallelLMHead) by padded vocabulary rows, lm_head not emitted when tie_word_embeddings
 * (ExaoneConfig ties by default: EXAONE-3.5-2.4B has no lm_head); attn.attention.q_proj /
 * k_proj / v_proj fused by heads into attn.attention.qkv_proj ([q_r; k_r; v_r], kv heads
 * replicated when KV < T) and mlp.c_fc_0 / c_fc_1 (gate / up) merged by rows into
 * mlp.gate_up_proj ([gate_r; up_r]): vLLM's stacked_params_mapping; attn.attention.out_proj
 * and mlp.c_proj by columns (RowParallelLinear); ln_1 / ln_2 / transformer.ln_f (RMSNorm)
 * replicated. Every Linear quantized, the embedding, lm_head and norms not. No biases: the
 * loader refuses attention_bias / bias / mlp_bias true (loader/config_exaone.c), so a bias
 * tensor is unknown.
 */
#include "shardmap/family_rules.h"

#define EX_L       "transformer.h.{i}."
#define EX_REPL(x) SM_RULE(x, x, SM_K_REPL, 0, SM_U_NONE, SM_C_ALL, 0, 1, SM_D_HID, SM_D_ANY)
#define EX_QKV(x, part, d)                                                                         \
	SM_RULE(EX_L "attn.attention." x "_proj.weight", EX_L "attn.attention.qkv_proj.weight",    \
	        SM_K_QKV, part, SM_U_HEADS, SM_C_ALL, SM_F_QUANT, 2, d, SM_D_HID)

static const sm_rule exaone_rules[] = {
    SM_RULE("transformer.wte.weight", "transformer.wte.weight", SM_K_VOCAB, 0, SM_U_NONE, SM_C_ALL,
            0, 2, SM_D_V, SM_D_HID),
    SM_RULE("lm_head.weight", "lm_head.weight", SM_K_VOCAB, 0, SM_U_NONE, SM_C_ALL, SM_F_LMHEAD, 2,
            SM_D_V, SM_D_HID),
    EX_REPL("transformer.ln_f.weight"),
    EX_REPL(EX_L "ln_1.weight"),
    EX_REPL(EX_L "ln_2.weight"),
    EX_QKV("q", 0, SM_D_Q),
    EX_QKV("k", 1, SM_D_KV),
    EX_QKV("v", 2, SM_D_KV),
    SM_RULE(EX_L "attn.attention.out_proj.weight", EX_L "attn.attention.out_proj.weight", SM_K_COLS,
            0, SM_U_HEADS, SM_C_ALL, SM_F_QUANT, 2, SM_D_HID, SM_D_Q),
    SM_RULE(EX_L "mlp.c_fc_0.weight", EX_L "mlp.gate_up_proj.weight", SM_K_ROWS, 0, SM_U_I,
            SM_C_ALL, SM_F_QUANT, 2, SM_D_I, SM_D_HID),
    SM_RULE(EX_L "mlp.c_fc_1.weight", EX_L "mlp.gate_up_proj.weight", SM_K_ROWS, 1, SM_U_I,
            SM_C_ALL, SM_F_QUANT, 2, SM_D_I, SM_D_HID),
    SM_RULE(EX_L "mlp.c_proj.weight", EX_L "mlp.c_proj.weight", SM_K_COLS, 0, SM_U_I, SM_C_ALL,
            SM_F_QUANT, 2, SM_D_HID, SM_D_I),
};

static const char *const exaone_archs[] = {"ExaoneForCausalLM", NULL};

const sm_family shardmap_family_exaone = {
    .name = "exaone",
    .archs = exaone_archs,
    .rules = exaone_rules,
    .n_rules = SM_NRULES(exaone_rules),
    .layer_prefix = "transformer.h.",
    .tie_default = true,
};
