/*
 * family_internlm2.h — InternLM2's decoder rules (vLLM's internlm2.py), shared by the
 * internlm2 families (family_internlm2.c) and InternVLChatModel's InternLM2 language model
 * (family_internvl_chat.c, under "language_model."). SM_LAYER is the includer's.
 */
#ifndef WT_SHARDMAP_FAMILY_INTERNLM2_H
#define WT_SHARDMAP_FAMILY_INTERNLM2_H

#include "shardmap/family_rules.h"

#define IL_REPL(x) SM_RULE(x, x, SM_K_REPL, 0, SM_U_NONE, SM_C_ALL, 0, 1, SM_D_HID, SM_D_ANY)

/* InternLM2's feed_forward (pre "feed_forward."), or InternLM2-VE's visual expert
 * (pre "feed_forward_ve."): w1 / w3 merged by rows into gate_up_proj, w2 by columns. */
#define IL_MLP(pre)                                                                                \
	SM_RULE(SM_LAYER pre "w1.weight", SM_LAYER pre "gate_up_proj.weight", SM_K_ROWS, 0,        \
	        SM_U_I, SM_C_ALL, SM_F_QUANT, 2, SM_D_I, SM_D_HID),                                \
	    SM_RULE(SM_LAYER pre "w3.weight", SM_LAYER pre "gate_up_proj.weight", SM_K_ROWS, 1,    \
	            SM_U_I, SM_C_ALL, SM_F_QUANT, 2, SM_D_I, SM_D_HID),                            \
	    SM_RULE(SM_LAYER pre "w2.weight", SM_LAYER pre "w2.weight", SM_K_COLS, 0, SM_U_I,      \
	            SM_C_ALL, SM_F_QUANT, 2, SM_D_HID, SM_D_I)

/* The output head under prefix P (dropped when tied). */
#define IL_OUTPUT_AT(P)                                                                            \
	SM_RULE(P "output.weight", P "output.weight", SM_K_VOCAB, 0, SM_U_NONE, SM_C_ALL,          \
	        SM_F_LMHEAD, 2, SM_D_V, SM_D_HID)

/* InternLM2's decoder under prefix P: the embedding, the layers (SM_LAYER) and the final norm
 * (no output). */
#define IL_RULES_AT(P)                                                                             \
	SM_RULE(P "model.tok_embeddings.weight", P "model.tok_embeddings.weight", SM_K_VOCAB, 0,   \
	        SM_U_NONE, SM_C_ALL, 0, 2, SM_D_V, SM_D_HID),                                      \
	    IL_REPL(P "model.norm.weight"), IL_REPL(SM_LAYER "attention_norm.weight"),             \
	    IL_REPL(SM_LAYER "ffn_norm.weight"),                                                   \
	    SM_RULE(SM_LAYER "attention.wqkv.weight", SM_LAYER "attention.wqkv.weight", SM_K_QKVH, \
	            0, SM_U_HEADS, SM_C_ALL, SM_F_QUANT, 2, SM_D_QKV, SM_D_HID),                   \
	    SM_RULE(SM_LAYER "attention.wo.weight", SM_LAYER "attention.wo.weight", SM_K_COLS, 0,  \
	            SM_U_HEADS, SM_C_ALL, SM_F_QUANT, 2, SM_D_HID, SM_D_Q),                        \
	    IL_MLP("feed_forward.")

/* vLLM's InternLM2Attention's head checks (family_internlm2.c). */
int shardmap_internlm2_check(const ckpt_config *c, wt_errbuf *err);

#endif
