/*
 * family_nomic_bert.c — NomicBertModel (nomic-ai/nomic-embed-text-v1 / v1.5, nomic-bert-2048's
 * encoder), docs/format.md section 2.7, as vLLM's bert_with_rope.py builds and loads it.
 *
 * vLLM's NomicBertModel renames (hf_to_vllm_mapper) emb_ln to embeddings.LayerNorm, attn.Wqkv
 * to attn.qkv_proj, norm1 / norm2 to attn_ln / mlp_ln, mlp.fc11 / fc12 / fc2 to up_proj /
 * gate_proj / down_proj, then merges gate_proj (shard 0) and up_proj (shard 1) into
 * gate_up_proj (MergedColumnParallelLinear: rank r holds [fc12_r; fc11_r]). word_embeddings and
 * token_type_embeddings are VocabParallelEmbeddings: both cut by padded rows (type_vocab_size
 * rows padded like the vocabulary). qkv_proj is a QKVParallelLinear loaded from the fused Wqkv
 * (rank r: [q_r; k_r; v_r], SM_K_QKVF); out_proj and down_proj RowParallelLinear (columns, biases
 * whole). Every Linear is built with the quantization config; embeddings and LayerNorms are not.
 * The Linears' biases follow qkv_proj_bias (== mlp_fc1_bias == mlp_fc2_bias, the loader copies it
 * onto attention_bias / mlp_bias); a LayerNorm always has its bias. Only the swiglu MLP is read
 * (config_nomic.c refuses gelu and the MoE layers).
 */
#include <inttypes.h>

#include "shardmap/family_rules.h"

#define NB_L                       "encoder.layers.{i}."
#define NB_REPL(ck, rt, c, nd, d0) SM_RULE(ck, rt, SM_K_REPL, 0, SM_U_NONE, c, 0, nd, d0, SM_D_ANY)
#define NB_LN(ck, rt)                                                                              \
	NB_REPL(ck ".weight", rt ".weight", SM_C_ALL, 1, SM_D_HID),                                \
	    NB_REPL(ck ".bias", rt ".bias", SM_C_ALL, 1, SM_D_HID)
#define NB_GU(src, w, part, c, f, nd, d1)                                                          \
	SM_RULE(NB_L "mlp." src "." w, NB_L "mlp.gate_up_proj." w, SM_K_ROWS, part, SM_U_I, c, f,  \
	        nd, SM_D_I, d1)

static const sm_rule nomic_bert_rules[] = {
    SM_RULE("embeddings.word_embeddings.weight", "embeddings.word_embeddings.weight", SM_K_VOCAB, 0,
            SM_U_NONE, SM_C_ALL, 0, 2, SM_D_V, SM_D_HID),
    SM_RULE("embeddings.token_type_embeddings.weight", "embeddings.token_type_embeddings.weight",
            SM_K_VOCAB, 0, SM_U_NONE, SM_C_ALL, 0, 2, SM_D_RTYPES, SM_D_HID),
    NB_LN("emb_ln", "embeddings.LayerNorm"),
    SM_RULE(NB_L "attn.Wqkv.weight", NB_L "attn.qkv_proj.weight", SM_K_QKVF, 0, SM_U_HEADS,
            SM_C_ALL, SM_F_QUANT, 2, SM_D_QKV, SM_D_HID),
    SM_RULE(NB_L "attn.Wqkv.bias", NB_L "attn.qkv_proj.bias", SM_K_QKVF, 0, SM_U_HEADS,
            SM_C_ATTNBIAS, 0, 1, SM_D_QKV, SM_D_ANY),
    SM_RULE(NB_L "attn.out_proj.weight", NB_L "attn.out_proj.weight", SM_K_COLS, 0, SM_U_HEADS,
            SM_C_ALL, SM_F_QUANT, 2, SM_D_HID, SM_D_Q),
    NB_REPL(NB_L "attn.out_proj.bias", NB_L "attn.out_proj.bias", SM_C_ATTNBIAS, 1, SM_D_HID),
    NB_LN(NB_L "norm1", NB_L "attn_ln"),
    NB_GU("fc12", "weight", 0, SM_C_ALL, SM_F_QUANT, 2, SM_D_HID),
    NB_GU("fc11", "weight", 1, SM_C_ALL, SM_F_QUANT, 2, SM_D_HID),
    NB_GU("fc12", "bias", 0, SM_C_MLPBIAS, 0, 1, SM_D_ANY),
    NB_GU("fc11", "bias", 1, SM_C_MLPBIAS, 0, 1, SM_D_ANY),
    SM_RULE(NB_L "mlp.fc2.weight", NB_L "mlp.down_proj.weight", SM_K_COLS, 0, SM_U_I, SM_C_ALL,
            SM_F_QUANT, 2, SM_D_HID, SM_D_I),
    NB_REPL(NB_L "mlp.fc2.bias", NB_L "mlp.down_proj.bias", SM_C_MLPBIAS, 1, SM_D_HID),
    NB_LN(NB_L "norm2", NB_L "mlp_ln"),
};

/* BertWithRopeAttention (Nomic BERT's and GTE's, family_gte.c): total_num_kv_heads =
 * total_num_heads, head_dim = hidden / heads (asserted to divide); heads_key / hidden_key: the
 * family's config.json names of the two sizes, for the error. */
int shardmap_bert_rope_check(const ckpt_config *c, const char *heads_key, const char *hidden_key,
                             wt_errbuf *err)
{
	if (c->num_key_value_heads != c->num_attention_heads)
		return wt_seterr(
		    err, WT_EUNSUPPORTED,
		    "config.json: num_key_value_heads %" PRId64
		    " is not num_attention_heads %" PRId64
		    ": BertWithRopeAttention has one key / value head per head; remove "
		    "the key",
		    c->num_key_value_heads, c->num_attention_heads);
	if (c->hidden_size % c->num_attention_heads != 0 ||
	    c->head_dim != c->hidden_size / c->num_attention_heads)
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: %s %" PRId64 " does not divide %s %" PRId64
		                 " (BertWithRopeAttention asserts head_dim * heads == hidden_size)",
		                 heads_key, c->num_attention_heads, hidden_key, c->hidden_size);
	return WT_OK;
}

static int nomic_bert_check(const ckpt_config *c, wt_errbuf *err)
{
	return shardmap_bert_rope_check(c, "n_head", "n_embd", err);
}

static const char *const nomic_bert_archs[] = {"NomicBertModel", NULL};

const sm_family shardmap_family_nomic_bert = {
    .name = "nomic_bert",
    .archs = nomic_bert_archs,
    .rules = nomic_bert_rules,
    .n_rules = SM_NRULES(nomic_bert_rules),
    .layer_prefix = "encoder.layers.",
    .check = nomic_bert_check,
    .bias_key_all = "qkv_proj_bias",
};
