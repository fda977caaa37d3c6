/*
 * family_chatglm.h — ChatGLM / GLM-4's rules in THUDM's original names (vLLM's chatglm.py),
 * shared by the chatglm family (family_chatglm.c) and GLM-4V's language model
 * (family_glm4v_old.c: GLM4VForCausalLM builds the same ChatGLMModel under the same names).
 */
#ifndef WT_SHARDMAP_FAMILY_CHATGLM_H
#define WT_SHARDMAP_FAMILY_CHATGLM_H

#include "shardmap/family_rules.h"

#define CG_LAYER   "transformer.encoder.layers.{i}."
#define CG_REPL(x) SM_RULE(x, x, SM_K_REPL, 0, SM_U_NONE, SM_C_ALL, 0, 1, SM_D_HID, SM_D_ANY)

#define CG_RULES                                                                                   \
	SM_RULE("transformer.embedding.word_embeddings.weight",                                    \
	        "transformer.embedding.word_embeddings.weight", SM_K_VOCAB, 0, SM_U_NONE,          \
	        SM_C_ALL, 0, 2, SM_D_V, SM_D_HID),                                                 \
	    SM_RULE("transformer.output_layer.weight", "transformer.output_layer.weight",          \
	            SM_K_VOCAB, 0, SM_U_NONE, SM_C_ALL, SM_F_LMHEAD, 2, SM_D_V, SM_D_HID),         \
	    CG_REPL("transformer.encoder.final_layernorm.weight"),                                 \
	    CG_REPL(CG_LAYER "input_layernorm.weight"),                                            \
	    CG_REPL(CG_LAYER "post_attention_layernorm.weight"),                                   \
	    SM_RULE(CG_LAYER "self_attention.query_key_value.weight",                              \
	            CG_LAYER "self_attention.query_key_value.weight", SM_K_QKVC, 0, SM_U_HEADS,    \
	            SM_C_ALL, SM_F_QUANT, 2, SM_D_QKV, SM_D_HID),                                  \
	    SM_RULE(CG_LAYER "self_attention.query_key_value.bias",                                \
	            CG_LAYER "self_attention.query_key_value.bias", SM_K_QKVC, 0, SM_U_HEADS,      \
	            SM_C_ATTNBIAS, 0, 1, SM_D_QKV, SM_D_ANY),                                      \
	    SM_RULE(CG_LAYER "self_attention.dense.weight",                                        \
	            CG_LAYER "self_attention.dense.weight", SM_K_COLS, 0, SM_U_HEADS, SM_C_ALL,    \
	            SM_F_QUANT, 2, SM_D_HID, SM_D_Q),                                              \
	    SM_RULE(CG_LAYER "mlp.dense_h_to_4h.weight", CG_LAYER "mlp.dense_h_to_4h.weight",      \
	            SM_K_ROWS2, 0, SM_U_I, SM_C_ALL, SM_F_QUANT, 2, SM_D_I2, SM_D_HID),            \
	    SM_RULE(CG_LAYER "mlp.dense_4h_to_h.weight", CG_LAYER "mlp.dense_4h_to_h.weight",      \
	            SM_K_COLS, 0, SM_U_I, SM_C_ALL, SM_F_QUANT, 2, SM_D_HID, SM_D_I)

/* The head-size and multi_query_group_num checks (family_chatglm.c). */
int shardmap_chatglm_check(const ckpt_config *c, wt_errbuf *err);

/* The buffer vLLM skips: rotary_pos_emb.inv_freq (NULL-terminated). */
extern const char *const shardmap_chatglm_drops[];

#endif
