/*
 * family_falcon.c — Falcon (FalconForCausalLM, transformers 4.57.1 modeling_falcon.py:
 * tiiuae/falcon-7b, falcon-40b, falcon-180B, falcon-rw-1b, Falcon2-11B), cut as vLLM's
 * falcon.py loads it.
 *
 * Names are kept (transformer.word_embeddings, transformer.h.{i}.*, transformer.ln_f,
 * lm_head). self_attention.query_key_value [(H + 2*KV)*d, hid] holds its rows per kv group,
 * [KV, H/KV + 2, d] (group g's H/KV q heads, then its k head, then its v head): falcon-40b /
 * 180B's new_decoder_architecture with num_kv_heads groups, falcon-7b's multi_query one group
 * ([q; k; v]), falcon-rw-1b's H groups ([H, 3, d], BLOOM's). vLLM's FalconModel.load_weights
 * views it (KV, H/KV + 2, d), narrows out q, k and v and concatenates [q; k; v] for
 * QKVParallelLinear, so rank r holds [q_r; k_r; v_r] with the kv heads replicated when
 * KV < T (SM_K_QKVH), its bias alike; self_attention.dense by columns; mlp.dense_h_to_4h
 * [4*hid, hid] by rows, dense_4h_to_h by columns; the biases (config.json bias, loaded into
 * the three bias switches) of the row-parallel Linears replicated; the LayerNorms (weights
 * and biases) replicated: ln_attn / ln_mlp, or input_layernorm, or input_layernorm and
 * post_attention_layernorm as falcon_ln says; word_embeddings / lm_head by vocabulary rows,
 * tied unless tie_word_embeddings is false (Falcon2-11B).
 */
#include <inttypes.h>

#include "shardmap/family_rules.h"

#define FL_LAYER      "transformer.h.{i}."
#define FL_REPL(x, c) SM_RULE(x, x, SM_K_REPL, 0, SM_U_NONE, c, 0, 1, SM_D_HID, SM_D_ANY)
#define FL_LN(x, c)   FL_REPL(FL_LAYER x ".weight", c), FL_REPL(FL_LAYER x ".bias", c)

static const sm_rule falcon_rules[] = {
    SM_RULE("transformer.word_embeddings.weight", "transformer.word_embeddings.weight", SM_K_VOCAB,
            0, SM_U_NONE, SM_C_ALL, 0, 2, SM_D_V, SM_D_HID),
    SM_RULE("lm_head.weight", "lm_head.weight", SM_K_VOCAB, 0, SM_U_NONE, SM_C_ALL, SM_F_LMHEAD, 2,
            SM_D_V, SM_D_HID),
    FL_REPL("transformer.ln_f.weight", SM_C_ALL),
    FL_REPL("transformer.ln_f.bias", SM_C_ALL),
    FL_LN("ln_attn", SM_C_FLN2),
    FL_LN("ln_mlp", SM_C_FLN2),
    FL_LN("input_layernorm", SM_C_FLN1),
    FL_LN("post_attention_layernorm", SM_C_FPOST),
    SM_RULE(FL_LAYER "self_attention.query_key_value.weight",
            FL_LAYER "self_attention.query_key_value.weight", SM_K_QKVH, 0, SM_U_HEADS, SM_C_ALL,
            SM_F_QUANT, 2, SM_D_QKV, SM_D_HID),
    SM_RULE(FL_LAYER "self_attention.query_key_value.bias",
            FL_LAYER "self_attention.query_key_value.bias", SM_K_QKVH, 0, SM_U_HEADS, SM_C_ATTNBIAS,
            0, 1, SM_D_QKV, SM_D_ANY),
    SM_RULE(FL_LAYER "self_attention.dense.weight", FL_LAYER "self_attention.dense.weight",
            SM_K_COLS, 0, SM_U_HEADS, SM_C_ALL, SM_F_QUANT, 2, SM_D_HID, SM_D_Q),
    FL_REPL(FL_LAYER "self_attention.dense.bias", SM_C_OUTBIAS),
    SM_RULE(FL_LAYER "mlp.dense_h_to_4h.weight", FL_LAYER "mlp.dense_h_to_4h.weight", SM_K_ROWS, 0,
            SM_U_I, SM_C_ALL, SM_F_QUANT, 2, SM_D_I, SM_D_HID),
    SM_RULE(FL_LAYER "mlp.dense_h_to_4h.bias", FL_LAYER "mlp.dense_h_to_4h.bias", SM_K_ROWS, 0,
            SM_U_I, SM_C_MLPBIAS, 0, 1, SM_D_I, SM_D_ANY),
    SM_RULE(FL_LAYER "mlp.dense_4h_to_h.weight", FL_LAYER "mlp.dense_4h_to_h.weight", SM_K_COLS, 0,
            SM_U_I, SM_C_ALL, SM_F_QUANT, 2, SM_D_HID, SM_D_I),
    FL_REPL(FL_LAYER "mlp.dense_4h_to_h.bias", SM_C_MLPBIAS),
};

/* vLLM's FalconAttention: head size hidden_size / num_attention_heads (asserted exact), the
 * q heads grouped evenly over the kv heads (loader/config_falcon.c sets KV). */
static int falcon_check(const ckpt_config *c, wt_errbuf *err)
{
	int hq =
	    shardmap_check_head_quotient(c, "hidden_size", "num_attention_heads", "head_dim", err);
	if (hq != WT_OK)
		return hq;
	if (c->num_key_value_heads <= 0 || c->num_attention_heads % c->num_key_value_heads != 0)
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: num_kv_heads %" PRId64
		                 " does not divide num_attention_heads %" PRId64
		                 "; Falcon's query_key_value groups the q heads evenly over them",
		                 c->num_key_value_heads, c->num_attention_heads);
	return WT_OK;
}

/* RWForCausalLM: the original releases' remote code (model_type RefinedWebModel: falcon-7b,
 * falcon-rw-1b / 7b; RefinedWeb: falcon-40b), which vLLM's registry maps onto the same
 * FalconForCausalLM; its config keys are RWConfig's (loader/config_falcon.c). */
static const char *const falcon_archs[] = {"FalconForCausalLM", "RWForCausalLM", NULL};

const sm_family shardmap_family_falcon = {
    .name = "falcon",
    .archs = falcon_archs,
    .rules = falcon_rules,
    .n_rules = SM_NRULES(falcon_rules),
    .layer_prefix = "transformer.h.",
    .check = falcon_check,
    .bias_key_all = "bias",
    .tie_default = true, /* PretrainedConfig's, and vLLM's when the key is absent */
};
