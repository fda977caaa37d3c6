/*
 * family_telechat2.c — TeleChat2 (TeleChat2ForCausalLM, remote code: Tele-AI/TeleChat2-3B, -7B,
 * -35B, -115B), cut as vLLM's telechat2.py loads it.
 *
 * vLLM's TeleChat2ForCausalLM is its LlamaForCausalLM with the checkpoint's names mapped onto
 * Llama's (transformer. -> model., .h. -> .layers., .self_attention. -> .self_attn.,
 * .word_embeddings. -> .embed_tokens., .dense. -> .o_proj., .ln_f. -> .norm.), so the shards
 * carry Llama's runtime names:
 *
 *   checkpoint                                  runtime                            cut
 *   transformer.word_embeddings.weight          model.embed_tokens.weight          vocab rows
 *   lm_head.weight                              lm_head.weight                     vocab rows
 *   transformer.ln_f.weight                     model.norm.weight                  replicated
 *   transformer.h.{i}.input_layernorm / post_attention_layernorm (RMSNorm)         replicated
 *   ..self_attention.query.weight [H*d, hid]    model.layers.{i}.self_attn.        [q_r; k_r; v_r]
 *   ..self_attention.key_value.weight                qkv_proj.weight               by heads
 *     [KV, 2, d] rows: each kv head's k, then its v (de-interleaved by _split_key_value)
 *   ..self_attention.dense.weight / .bias       self_attn.o_proj.weight / .bias    columns / repl.
 *   ..mlp.gate_proj / up_proj.weight            mlp.gate_up_proj.weight            [gate_r; up_r]
 *   ..mlp.down_proj.weight / .bias              mlp.down_proj.weight / .bias       columns / repl.
 *
 * vLLM builds the model with bias and mlp_bias forced true, then removes qkv_proj's and
 * gate_up_proj's biases: o_proj and down_proj have a bias (RowParallelLinear adds it once, so it
 * is whole on every rank) and it is required; a query / key_value / gate / up bias is unknown.
 * _split_key_value reads the kv heads as hidden_size / n_head wide and slices the rows past the
 * tensor's end empty, so a num_key_value_heads below n_head is de-interleaved right (kv heads
 * replicated when KV < T, as Llama's). Every Linear quantized; the embedding, lm_head, norms
 * and biases not. lm_head is dropped when tie_word_embeddings (PretrainedConfig's true when
 * config.json leaves it out: Telechat2Config passes none).
 */
#include <inttypes.h>

#include "shardmap/family_rules.h"

#define TC_L            "transformer.h.{i}."
#define TC_REPL(ck, rt) SM_RULE(ck, rt, SM_K_REPL, 0, SM_U_NONE, SM_C_ALL, 0, 1, SM_D_HID, SM_D_ANY)

static const sm_rule telechat2_rules[] = {
    SM_RULE("transformer.word_embeddings.weight", "model.embed_tokens.weight", SM_K_VOCAB, 0,
            SM_U_NONE, SM_C_ALL, 0, 2, SM_D_V, SM_D_HID),
    SM_RULE("lm_head.weight", "lm_head.weight", SM_K_VOCAB, 0, SM_U_NONE, SM_C_ALL, SM_F_LMHEAD, 2,
            SM_D_V, SM_D_HID),
    TC_REPL("transformer.ln_f.weight", "model.norm.weight"),
    TC_REPL(TC_L "input_layernorm.weight", SM_LAYER "input_layernorm.weight"),
    TC_REPL(TC_L "post_attention_layernorm.weight", SM_LAYER "post_attention_layernorm.weight"),
    SM_RULE(TC_L "self_attention.query.weight", SM_LAYER "self_attn.qkv_proj.weight", SM_K_QKVI, 0,
            SM_U_HEADS, SM_C_ALL, SM_F_QUANT, 2, SM_D_Q, SM_D_HID),
    SM_RULE(TC_L "self_attention.key_value.weight", SM_LAYER "self_attn.qkv_proj.weight", SM_K_QKVI,
            1, SM_U_HEADS, SM_C_ALL, SM_F_QUANT, 2, SM_D_KV2, SM_D_HID),
    SM_RULE(TC_L "self_attention.dense.weight", SM_LAYER "self_attn.o_proj.weight", SM_K_COLS, 0,
            SM_U_HEADS, SM_C_ALL, SM_F_QUANT, 2, SM_D_HID, SM_D_Q),
    TC_REPL(TC_L "self_attention.dense.bias", SM_LAYER "self_attn.o_proj.bias"),
    SM_RULE(TC_L "mlp.gate_proj.weight", SM_LAYER "mlp.gate_up_proj.weight", SM_K_ROWS, 0, SM_U_I,
            SM_C_ALL, SM_F_QUANT, 2, SM_D_I, SM_D_HID),
    SM_RULE(TC_L "mlp.up_proj.weight", SM_LAYER "mlp.gate_up_proj.weight", SM_K_ROWS, 1, SM_U_I,
            SM_C_ALL, SM_F_QUANT, 2, SM_D_I, SM_D_HID),
    SM_RULE(TC_L "mlp.down_proj.weight", SM_LAYER "mlp.down_proj.weight", SM_K_COLS, 0, SM_U_I,
            SM_C_ALL, SM_F_QUANT, 2, SM_D_HID, SM_D_I),
    TC_REPL(TC_L "mlp.down_proj.bias", SM_LAYER "mlp.down_proj.bias"),
};

/* vLLM's _split_key_value takes the kv heads hidden_size / n_head wide (LlamaAttention too when
 * config.json has no head_dim), and its kv heads must group the heads. */
static int telechat2_check(const ckpt_config *c, wt_errbuf *err)
{
	int hq = shardmap_check_head_quotient(c, "hidden_size", "n_head", "head_dim", err);
	if (hq != WT_OK)
		return hq;
	if (c->num_attention_heads % c->num_key_value_heads != 0)
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "config.json: num_key_value_heads %" PRId64
		                 " does not divide n_head %" PRId64
		                 "; TeleChat2's kv heads each serve n_head / num_key_value_heads "
		                 "heads: fix num_key_value_heads",
		                 c->num_key_value_heads, c->num_attention_heads);
	return WT_OK;
}

/* TeleChatForCausalLM (the first generation: Tele-AI/telechat-7B, TeleChat-12B, TeleChat-52B,
 * model_type telechat too): vLLM's registry maps it onto the same TeleChat2ForCausalLM, and its
 * checkpoints hold the same names, biases (dense and down_proj only) and per-head key_value
 * interleave (the remote modeling_telechat.py views key_value as [KV, 2*d] and splits each
 * head's row in two), so it reads this table. */
static const char *const telechat2_archs[] = {"TeleChat2ForCausalLM", "TeleChatForCausalLM", NULL};

const sm_family shardmap_family_telechat2 = {
    .name = "telechat2",
    .archs = telechat2_archs,
    .rules = telechat2_rules,
    .n_rules = SM_NRULES(telechat2_rules),
    .layer_prefix = "transformer.h.",
    .check = telechat2_check,
    .tie_default = true,
};
