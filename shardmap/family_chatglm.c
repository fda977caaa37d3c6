/*
 * family_chatglm.c — ChatGLM / GLM-4 in THUDM's original format (ChatGLMModel,
 * ChatGLMForConditionalGeneration, remote code: THUDM/glm-4-9b-chat, chatglm3-6b, chatglm2-6b,
 * codegeex4-all-9b), cut as vLLM's chatglm.py (ChatGLMForCausalLM, registered for both
 * names) loads it.
 *
 * Names are kept (transformer.embedding.word_embeddings, transformer.encoder.layers.{i}.*,
 * transformer.encoder.final_layernorm, transformer.output_layer). self_attention.
 * query_key_value [(H + 2*KV)*d, hid] holds contiguous [q; k; v] rows (KV =
 * multi_query_group_num when multi_query_attention, else H); vLLM loads it whole into a
 * QKVParallelLinear, which cuts it into [q_r; k_r; v_r] by heads, kv heads replicated when
 * KV < T (SM_K_QKVC), its bias (add_qkv_bias) the same way; self_attention.dense by
 * columns; mlp.dense_h_to_4h [2I, hid] holds [gate; up] and vLLM's MergedColumnParallelLinear
 * ([I, I]) cuts each half, [gate_r; up_r] (SM_K_ROWS2); mlp.dense_4h_to_h by columns; the
 * RMSNorms replicated; word_embeddings (VocabParallelEmbedding; vLLM's mapper drops the
 * ".word_embeddings") and output_layer (ParallelLMHead) by padded vocabulary rows,
 * output_layer not emitted when tie_word_embeddings (vLLM ties it to the embedding;
 * PretrainedConfig's default true when the key is absent). Every Linear is quantized, the
 * embedding, output_layer and norms not. transformer.rotary_pos_emb.inv_freq (a buffer the
 * remote code saves; vLLM skips it) is dropped. add_bias_linear, rmsnorm false, post_layer_norm
 * false and a vision tower under another architecture than GLM4VForCausalLM (GLM-4V: the
 * glm4v_old family, family_glm4v_old.c, shares these rules through family_chatglm.h) are
 * refused by the loader (loader/config_chatglm.c).
 */
#include <inttypes.h>

#include "shardmap/family_chatglm.h"

static const sm_rule chatglm_rules[] = {
    CG_RULES,
};

/* vLLM's GLMAttention: head size hidden_size / num_attention_heads; the checkpoint's
 * query_key_value is kv_channels wide per head (the loader reads kv_channels as head_dim). */
int shardmap_chatglm_check(const ckpt_config *c, wt_errbuf *err)
{
	int hq = shardmap_check_head_quotient(c, "hidden_size", "num_attention_heads",
	                                      "kv_channels", err);
	if (hq != WT_OK)
		return hq;
	if (c->num_key_value_heads <= 0 || c->num_attention_heads % c->num_key_value_heads != 0)
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: multi_query_group_num %" PRId64
		                 " does not divide num_attention_heads %" PRId64,
		                 c->num_key_value_heads, c->num_attention_heads);
	return WT_OK;
}

static const char *const chatglm_archs[] = {"ChatGLMModel", "ChatGLMForConditionalGeneration",
                                            NULL};
const char *const shardmap_chatglm_drops[] = {"rotary_pos_emb.inv_freq", NULL};

/* PretrainedConfig's tie_word_embeddings (true) when config.json omits it: ChatGLMConfig sets
 * none, and vLLM ties output_layer to the embedding then */
const sm_family shardmap_family_chatglm = {
    .name = "chatglm",
    .archs = chatglm_archs,
    .rules = chatglm_rules,
    .n_rules = SM_NRULES(chatglm_rules),
    .layer_prefix = "transformer.encoder.layers.",
    .check = shardmap_chatglm_check,
    .attn_bias_key = "add_qkv_bias",
    .drop_suffixes = shardmap_chatglm_drops,
    .tie_default = true,
};
