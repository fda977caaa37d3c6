/*
 * family_bloom.c — BLOOM (BloomForCausalLM, transformers 4.57.1 modeling_bloom.py:
 * bigscience/bloom-560m ... bloom, bloomz), cut as vLLM's bloom.py loads it.
 *
 * Runtime names are vLLM's (transformer.word_embeddings, transformer.h.{i}.*,
 * transformer.ln_f); a checkpoint may store them with the transformer. prefix (what
 * save_pretrained writes) or without it (bigscience's releases: h.{i}.*, word_embeddings.*,
 * ln_f.*), as vLLM's _add_transformer_prefix takes both (the family's aliases).
 * self_attention.query_key_value [3*hid, hid] holds its rows per head, [H, 3, d]; vLLM's
 * BloomModel.load_weights views it (H, 3, d), swaps to [q; k; v] and QKVParallelLinear cuts
 * that, so rank r holds [q_r; k_r; v_r] of its heads (SM_K_QKVH, GPT-NeoX's), its bias
 * alike; self_attention.dense by columns (bias replicated); mlp.dense_h_to_4h [4*hid, hid]
 * by rows with its bias, dense_4h_to_h by columns (bias replicated); the word-embedding
 * LayerNorm, the two per-layer LayerNorms and ln_f replicated; word_embeddings by
 * vocabulary rows. The LM head is always word_embeddings (vLLM skips lm_head.weight):
 * a tied lm_head.weight in the checkpoint is skipped, tie_word_embeddings false refused.
 * The ALiBi slopes are no tensor (each engine rank computes its heads' own).
 */
#include <inttypes.h>

#include "shardmap/family_rules.h"

#define BL_LAYER    "transformer.h.{i}."
#define BL_REPL(x)  SM_RULE(x, x, SM_K_REPL, 0, SM_U_NONE, SM_C_ALL, 0, 1, SM_D_HID, SM_D_ANY)
#define BL_REPL2(x) BL_REPL(x ".weight"), BL_REPL(x ".bias")

static const sm_rule bloom_rules[] = {
    SM_RULE("transformer.word_embeddings.weight", "transformer.word_embeddings.weight", SM_K_VOCAB,
            0, SM_U_NONE, SM_C_ALL, 0, 2, SM_D_V, SM_D_HID),
    SM_RULE("lm_head.weight", "lm_head.weight", SM_K_VOCAB, 0, SM_U_NONE, SM_C_ALL, SM_F_LMHEAD, 2,
            SM_D_V, SM_D_HID),
    BL_REPL2("transformer.word_embeddings_layernorm"),
    BL_REPL2("transformer.ln_f"),
    BL_REPL2(BL_LAYER "input_layernorm"),
    BL_REPL2(BL_LAYER "post_attention_layernorm"),
    SM_RULE(BL_LAYER "self_attention.query_key_value.weight",
            BL_LAYER "self_attention.query_key_value.weight", SM_K_QKVH, 0, SM_U_HEADS, SM_C_ALL,
            SM_F_QUANT, 2, SM_D_QKV, SM_D_HID),
    SM_RULE(BL_LAYER "self_attention.query_key_value.bias",
            BL_LAYER "self_attention.query_key_value.bias", SM_K_QKVH, 0, SM_U_HEADS, SM_C_ALL, 0,
            1, SM_D_QKV, SM_D_ANY),
    SM_RULE(BL_LAYER "self_attention.dense.weight", BL_LAYER "self_attention.dense.weight",
            SM_K_COLS, 0, SM_U_HEADS, SM_C_ALL, SM_F_QUANT, 2, SM_D_HID, SM_D_Q),
    BL_REPL(BL_LAYER "self_attention.dense.bias"),
    SM_RULE(BL_LAYER "mlp.dense_h_to_4h.weight", BL_LAYER "mlp.dense_h_to_4h.weight", SM_K_ROWS, 0,
            SM_U_I, SM_C_ALL, SM_F_QUANT, 2, SM_D_I, SM_D_HID),
    SM_RULE(BL_LAYER "mlp.dense_h_to_4h.bias", BL_LAYER "mlp.dense_h_to_4h.bias", SM_K_ROWS, 0,
            SM_U_I, SM_C_ALL, 0, 1, SM_D_I, SM_D_ANY),
    SM_RULE(BL_LAYER "mlp.dense_4h_to_h.weight", BL_LAYER "mlp.dense_4h_to_h.weight", SM_K_COLS, 0,
            SM_U_I, SM_C_ALL, SM_F_QUANT, 2, SM_D_HID, SM_D_I),
    BL_REPL(BL_LAYER "mlp.dense_4h_to_h.bias"),
};

/* vLLM's BloomAttention: head size hidden_size / n_head (asserted exact), no grouped kv
 * heads; BloomMLP 4 * hidden_size wide (the loader sets intermediate_size so); lm_head is
 * word_embeddings (an untied one would never be loaded). */
static int bloom_check(const ckpt_config *c, wt_errbuf *err)
{
	int hq = shardmap_check_head_quotient(c, "hidden_size", "n_head", "head_dim", err);
	if (hq != WT_OK)
		return hq;
	if (c->num_key_value_heads != c->num_attention_heads)
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "config.json: num_key_value_heads %" PRId64
		                 " differs from n_head %" PRId64
		                 "; BloomForCausalLM has no grouped kv heads: remove the key",
		                 c->num_key_value_heads, c->num_attention_heads);
	if (c->tie_given && !c->tie_word_embeddings)
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "config.json: tie_word_embeddings false; vLLM's bloom.py skips "
		                 "lm_head.weight and would leave an untied LM head unloaded: "
		                 "set it true (BloomConfig's default) with the embedding as head");
	return WT_OK;
}

static const char *const bloom_archs[] = {"BloomForCausalLM", NULL};
/* bigscience's releases store the names without BloomForCausalLM's transformer. prefix */
static const char *const bloom_aliases[] = {
    "h.",
    "transformer.h.",
    "word_embeddings.",
    "transformer.word_embeddings.",
    "word_embeddings_layernorm.",
    "transformer.word_embeddings_layernorm.",
    "ln_f.",
    "transformer.ln_f.",
    NULL,
};

const sm_family shardmap_family_bloom = {
    .name = "bloom",
    .archs = bloom_archs,
    .rules = bloom_rules,
    .n_rules = SM_NRULES(bloom_rules),
    .layer_prefix = "transformer.h.",
    .check = bloom_check,
    .aliases = bloom_aliases,
    .tie_default = true, /* PretrainedConfig's: BloomConfig sets nothing else */
};
