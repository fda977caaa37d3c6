/*
 * family_modernbert.h — ModernBERT's encoder rows (family_modernbert.c), shared by
 * ModernBertModel and its sequence classifier (private to shardmap/).
 */
#ifndef WT_SHARDMAP_FAMILY_MODERNBERT_H
#define WT_SHARDMAP_FAMILY_MODERNBERT_H

#include "shardmap/family_rules.h"

#define MB_L(P)                   P "layers.{i}."
#define MB_REPL(n, c, nd, d0, d1) SM_RULE(n, n, SM_K_REPL, 0, SM_U_NONE, c, 0, nd, d0, d1)
#define MB_LN(n, cw, cb)                                                                           \
	MB_REPL(n ".weight", cw, 1, SM_D_HID, SM_D_ANY),                                           \
	    MB_REPL(n ".bias", cb, 1, SM_D_HID, SM_D_ANY)

/* ModernBertModel's tensors under prefix P ("" or "model."): tok_embeddings vocab-parallel;
 * Wqkv [q_r; k_r; v_r] by heads; attn.Wo / mlp.Wo by columns; mlp.Wi whole; nothing
 * quantized (vLLM builds no Linear of ModernBERT with the quantization config). */
#define MB_RULES_AT(P)                                                                             \
	SM_RULE(P "embeddings.tok_embeddings.weight", P "embeddings.tok_embeddings.weight",        \
	        SM_K_VOCAB, 0, SM_U_NONE, SM_C_ALL, 0, 2, SM_D_V, SM_D_HID),                       \
	    MB_LN(P "embeddings.norm", SM_C_ALL, SM_C_NORMBIAS),                                   \
	    MB_LN(MB_L(P) "attn_norm", SM_C_MBLATER, SM_C_MBLATERB),                               \
	    SM_RULE(MB_L(P) "attn.Wqkv.weight", MB_L(P) "attn.Wqkv.weight", SM_K_QKVF, 0,          \
	            SM_U_HEADS, SM_C_ALL, 0, 2, SM_D_QKV, SM_D_HID),                               \
	    SM_RULE(MB_L(P) "attn.Wqkv.bias", MB_L(P) "attn.Wqkv.bias", SM_K_QKVF, 0, SM_U_HEADS,  \
	            SM_C_ATTNBIAS, 0, 1, SM_D_QKV, SM_D_ANY),                                      \
	    SM_RULE(MB_L(P) "attn.Wo.weight", MB_L(P) "attn.Wo.weight", SM_K_COLS, 0, SM_U_HEADS,  \
	            SM_C_ALL, 0, 2, SM_D_HID, SM_D_Q),                                             \
	    MB_REPL(MB_L(P) "attn.Wo.bias", SM_C_ATTNBIAS, 1, SM_D_HID, SM_D_ANY),                 \
	    MB_LN(MB_L(P) "mlp_norm", SM_C_ALL, SM_C_NORMBIAS),                                    \
	    MB_REPL(MB_L(P) "mlp.Wi.weight", SM_C_ALL, 2, SM_D_I2, SM_D_HID),                      \
	    MB_REPL(MB_L(P) "mlp.Wi.bias", SM_C_MLPBIAS, 1, SM_D_I2, SM_D_ANY),                    \
	    SM_RULE(MB_L(P) "mlp.Wo.weight", MB_L(P) "mlp.Wo.weight", SM_K_COLS, 0, SM_U_I,        \
	            SM_C_ALL, 0, 2, SM_D_HID, SM_D_I),                                             \
	    MB_REPL(MB_L(P) "mlp.Wo.bias", SM_C_MLPBIAS, 1, SM_D_HID, SM_D_ANY),                   \
	    MB_LN(P "final_norm", SM_C_ALL, SM_C_NORMBIAS)

/* Whether canonical name cn (under prefix p) is a bias whose config.json switch is false
 * (attention_bias, mlp_bias, norm_bias): vLLM builds no parameter for it and skips it. */
bool shardmap_modernbert_bias_off(const ckpt_config *c, const char *p, const char *cn);
/* ModernBertConfig's checks (hidden_activation, the attention pattern, the head size). */
int shardmap_modernbert_check(const ckpt_config *c, wt_errbuf *err);

#endif
