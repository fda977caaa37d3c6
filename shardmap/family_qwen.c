/*
 * family_qwen.c — Qwen, first generation (QWenLMHeadModel, remote code: Qwen/Qwen-1_8B, Qwen-7B,
 * Qwen-14B, Qwen-72B and their -Chat), cut as vLLM's qwen.py loads it.
 *
 * Names are kept (transformer.wte, transformer.h.{i}.*, transformer.ln_f, lm_head), as vLLM's
 * module paths. attn.c_attn [3*H*d, hid] holds contiguous [q; k; v] rows (multi-head: no kv
 * groups); vLLM loads it whole into a QKVParallelLinear, which cuts each third by heads into
 * [q_r; k_r; v_r] (SM_K_QKVC with KV = H), its bias (always present: the remote code builds
 * c_attn with one whatever no_bias says) the same way; attn.c_proj by columns
 * (RowParallelLinear). mlp.w2 / w1 are merged by rows into mlp.gate_up_proj [w2_r; w1_r]: vLLM's
 * stacked_params_mapping puts w2 in shard 0 (the gate: the remote QWenMLP computes
 * w1(x) * silu(w2(x))) and w1 in shard 1 (the up); each is intermediate_size / 2 rows (the
 * loader halves QWenConfig's intermediate_size, loader/config_qwen.c, as vLLM's
 * `config.intermediate_size // 2`); mlp.c_proj by columns. ln_1 / ln_2 / transformer.ln_f
 * (RMSNorm) replicated; wte (VocabParallelEmbedding) and lm_head (ParallelLMHead) by padded
 * vocabulary rows, never tied (vLLM's qwen.py builds lm_head untied; the loader refuses
 * tie_word_embeddings true). Every Linear quantized, the embedding, lm_head, norms and the
 * c_attn bias not. No other biases: no_bias false is refused by the loader, so a c_proj / w1 /
 * w2 bias is unknown.
 */
#include <inttypes.h>

#include "shardmap/family_rules.h"

#define QW_L       "transformer.h.{i}."
#define QW_REPL(x) SM_RULE(x, x, SM_K_REPL, 0, SM_U_NONE, SM_C_ALL, 0, 1, SM_D_HID, SM_D_ANY)

static const sm_rule qwen_rules[] = {
    SM_RULE("transformer.wte.weight", "transformer.wte.weight", SM_K_VOCAB, 0, SM_U_NONE, SM_C_ALL,
            0, 2, SM_D_V, SM_D_HID),
    SM_RULE("lm_head.weight", "lm_head.weight", SM_K_VOCAB, 0, SM_U_NONE, SM_C_ALL, SM_F_LMHEAD, 2,
            SM_D_V, SM_D_HID),
    QW_REPL("transformer.ln_f.weight"),
    QW_REPL(QW_L "ln_1.weight"),
    QW_REPL(QW_L "ln_2.weight"),
    SM_RULE(QW_L "attn.c_attn.weight", QW_L "attn.c_attn.weight", SM_K_QKVC, 0, SM_U_HEADS,
            SM_C_ALL, SM_F_QUANT, 2, SM_D_QKV, SM_D_HID),
    SM_RULE(QW_L "attn.c_attn.bias", QW_L "attn.c_attn.bias", SM_K_QKVC, 0, SM_U_HEADS, SM_C_ALL, 0,
            1, SM_D_QKV, SM_D_ANY),
    SM_RULE(QW_L "attn.c_proj.weight", QW_L "attn.c_proj.weight", SM_K_COLS, 0, SM_U_HEADS,
            SM_C_ALL, SM_F_QUANT, 2, SM_D_HID, SM_D_Q),
    SM_RULE(QW_L "mlp.w2.weight", QW_L "mlp.gate_up_proj.weight", SM_K_ROWS, 0, SM_U_I, SM_C_ALL,
            SM_F_QUANT, 2, SM_D_I, SM_D_HID),
    SM_RULE(QW_L "mlp.w1.weight", QW_L "mlp.gate_up_proj.weight", SM_K_ROWS, 1, SM_U_I, SM_C_ALL,
            SM_F_QUANT, 2, SM_D_I, SM_D_HID),
    SM_RULE(QW_L "mlp.c_proj.weight", QW_L "mlp.c_proj.weight", SM_K_COLS, 0, SM_U_I, SM_C_ALL,
            SM_F_QUANT, 2, SM_D_HID, SM_D_I),
};

/* vLLM's QWenAttention: head size hidden_size / num_attention_heads, every head its own k / v;
 * the remote QWenAttention's heads are kv_channels wide (the loader reads kv_channels as
 * head_dim, QWenConfig's 128 when absent). */
static int qwen_check(const ckpt_config *c, wt_errbuf *err)
{
	int hq = shardmap_check_head_quotient(c, "hidden_size", "num_attention_heads",
	                                      "kv_channels", err);
	if (hq != WT_OK)
		return hq;
	if (c->num_key_value_heads != c->num_attention_heads)
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "config.json: num_key_value_heads %" PRId64
		                 " is not num_attention_heads %" PRId64
		                 "; QWenLMHeadModel has one k / v head per head and no such key: "
		                 "remove it",
		                 c->num_key_value_heads, c->num_attention_heads);
	return WT_OK;
}

static const char *const qwen_archs[] = {"QWenLMHeadModel", NULL};

const sm_family shardmap_family_qwen = {
    .name = "qwen",
    .archs = qwen_archs,
    .rules = qwen_rules,
    .n_rules = SM_NRULES(qwen_rules),
    .layer_prefix = "transformer.h.",
    .check = qwen_check,
};
