/*
 * family_gptj.c — GPT-J (GPTJForCausalLM, transformers 4.57.1 modeling_gptj.py:
 * EleutherAI/gpt-j-6b), cut as vLLM's gpt_j.py loads it.
 *
 * Names stay the checkpoint's (transformer.*, lm_head). attn.q_proj / k_proj / v_proj (no
 * biases) fused by heads into attn.qkv_proj (QKVParallelLinear over n_head heads of n_embd /
 * n_head, no kv grouping), attn.out_proj by columns (no bias), mlp.fc_in by rows with its
 * bias, mlp.fc_out by columns (bias replicated); ln_1 (one LayerNorm per block: attention and
 * MLP read it in parallel) and ln_f with biases replicated; transformer.wte and lm_head by
 * vocabulary rows, lm_head.bias [V] with them (ParallelLMHead(bias=True): 1-D, padding entries
 * zero). The old attn.bias / attn.masked_bias buffers are skipped, as vLLM skips them.
 */
#include <inttypes.h>

#include "shardmap/family_rules.h"

#define GJ_L       "transformer.h.{i}."
#define GJ_REPL(x) SM_RULE(x, x, SM_K_REPL, 0, SM_U_NONE, SM_C_ALL, 0, 1, SM_D_HID, SM_D_ANY)
#define GJ_QKV(x, part, d)                                                                         \
	SM_RULE(GJ_L "attn." x "_proj.weight", GJ_L "attn.qkv_proj.weight", SM_K_QKV, part,        \
	        SM_U_HEADS, SM_C_ALL, SM_F_QUANT, 2, d, SM_D_HID)

static const sm_rule gptj_rules[] = {
    SM_RULE("transformer.wte.weight", "transformer.wte.weight", SM_K_VOCAB, 0, SM_U_NONE, SM_C_ALL,
            0, 2, SM_D_V, SM_D_HID),
    SM_RULE("lm_head.weight", "lm_head.weight", SM_K_VOCAB, 0, SM_U_NONE, SM_C_ALL, SM_F_LMHEAD, 2,
            SM_D_V, SM_D_HID),
    SM_RULE("lm_head.bias", "lm_head.bias", SM_K_VOCAB, 0, SM_U_NONE, SM_C_ALL, 0, 1, SM_D_V,
            SM_D_ANY),
    GJ_REPL("transformer.ln_f.weight"),
    GJ_REPL("transformer.ln_f.bias"),
    GJ_REPL(GJ_L "ln_1.weight"),
    GJ_REPL(GJ_L "ln_1.bias"),
    GJ_QKV("q", 0, SM_D_Q),
    GJ_QKV("k", 1, SM_D_KV),
    GJ_QKV("v", 2, SM_D_KV),
    SM_RULE(GJ_L "attn.out_proj.weight", GJ_L "attn.out_proj.weight", SM_K_COLS, 0, SM_U_HEADS,
            SM_C_ALL, SM_F_QUANT, 2, SM_D_HID, SM_D_Q),
    SM_RULE(GJ_L "mlp.fc_in.weight", GJ_L "mlp.fc_in.weight", SM_K_ROWS, 0, SM_U_I, SM_C_ALL,
            SM_F_QUANT, 2, SM_D_I, SM_D_HID),
    SM_RULE(GJ_L "mlp.fc_in.bias", GJ_L "mlp.fc_in.bias", SM_K_ROWS, 0, SM_U_I, SM_C_ALL, 0, 1,
            SM_D_I, SM_D_ANY),
    SM_RULE(GJ_L "mlp.fc_out.weight", GJ_L "mlp.fc_out.weight", SM_K_COLS, 0, SM_U_I, SM_C_ALL,
            SM_F_QUANT, 2, SM_D_HID, SM_D_I),
    GJ_REPL(GJ_L "mlp.fc_out.bias"),
};

/* vLLM's GPTJAttention: n_head heads of n_embd / n_head, no kv grouping; GPTJForCausalLM
 * asserts an untied lm_head (it has a bias the embedding has not). */
static int gptj_check(const ckpt_config *c, wt_errbuf *err)
{
	int hq = shardmap_check_head_quotient(c, "n_embd", "n_head", "head_dim", err);
	if (hq != WT_OK)
		return hq;
	if (c->num_key_value_heads != c->num_attention_heads)
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "config.json: num_key_value_heads %" PRId64
		                 " differs from n_head %" PRId64
		                 "; vLLM's gpt_j.py builds q/k/v over n_head only: remove the key",
		                 c->num_key_value_heads, c->num_attention_heads);
	if (c->tie_given && c->tie_word_embeddings)
		return wt_seterr(
		    err, WT_EUNSUPPORTED,
		    "config.json: tie_word_embeddings true; vLLM's gpt_j.py asserts an "
		    "untied lm_head (with its bias): set it false");
	return WT_OK;
}

static const char *const gptj_archs[] = {"GPTJForCausalLM", NULL};
static const char *const gptj_drop[] = {"attn.bias", "attn.masked_bias", NULL};

/* GPTJConfig unties by default (tie_word_embeddings=False) */
const sm_family shardmap_family_gptj = {
    .name = "gptj",
    .archs = gptj_archs,
    .rules = gptj_rules,
    .n_rules = SM_NRULES(gptj_rules),
    .layer_prefix = "transformer.h.",
    .check = gptj_check,
    .drop_suffixes = gptj_drop,
};
