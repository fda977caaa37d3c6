/*
 * family_minimax.h — MiniMax-Text-01's layer rules and hooks (family_minimax.c), shared by
 * the families that hold its language model: minimax itself under `model.` and MiniMax-VL-01
 * (family_minimax_vl.c) under `language_model.`. The rules expand SM_LAYER where they are
 * used, so a family that redefines it before its table gets them under its own prefix.
 */
#ifndef WT_SHARDMAP_FAMILY_MINIMAX_H
#define WT_SHARDMAP_FAMILY_MINIMAX_H

#include "shardmap/family_rules.h"

#define MM_ATT SM_LAYER "self_attn."

/* q / k / v of the softmax-attention layers, fused as vLLM's QKVParallelLinear. */
#define MM_QKV(x, part, d)                                                                         \
	SM_RULE(MM_ATT x "_proj.weight", MM_ATT "qkv_proj.weight", SM_K_QKV, part, SM_U_HEADS,     \
	        SM_C_FULLATT, SM_F_QUANT, 2, d, SM_D_HID)

/* A MiniMax decoder layer: the norms, softmax or lightning attention (SM_C_FULLATT /
 * SM_C_LINATT, picked by shardmap_minimax_linear), Mixtral's MoE in every layer. */
#define SM_RULES_MINIMAX_LAYERS                                                                    \
	SM_RULES_LNORM, /* softmax attention */                                                    \
	    MM_QKV("q", 0, SM_D_Q), MM_QKV("k", 1, SM_D_KV), MM_QKV("v", 2, SM_D_KV),              \
	    SM_RULE(MM_ATT "o_proj.weight", MM_ATT "o_proj.weight", SM_K_COLS, 0, SM_U_HEADS,      \
	            SM_C_FULLATT, SM_F_QUANT, 2, SM_D_HID,                                         \
	            SM_D_Q), /* lightning attention: the norm is never quantized */                \
	    SM_RULE(MM_ATT "qkv_proj.weight", MM_ATT "qkv_proj.weight", SM_K_ROWS, 0, SM_U_HEADS,  \
	            SM_C_LINATT, SM_F_QUANT, 2, SM_D_Q3, SM_D_HID),                                \
	    SM_RULE(MM_ATT "output_gate.weight", MM_ATT "output_gate.weight", SM_K_ROWS, 0,        \
	            SM_U_HEADS, SM_C_LINATT, SM_F_QUANT, 2, SM_D_Q, SM_D_HID),                     \
	    SM_RULE(MM_ATT "norm.weight", MM_ATT "norm.weight", SM_K_ROWS, 0, SM_U_HEADS,          \
	            SM_C_LINATT, 0, 1, SM_D_Q, SM_D_ANY),                                          \
	    SM_RULE(MM_ATT "out_proj.weight", MM_ATT "out_proj.weight", SM_K_COLS, 0, SM_U_HEADS,  \
	            SM_C_LINATT, SM_F_QUANT, 2, SM_D_HID,                                          \
	            SM_D_Q), /* Mixtral's MoE in every layer */                                    \
	    SM_RULE_ROUTER("block_sparse_moe.gate.weight", 2, SM_D_E, SM_D_HID),                   \
	    SM_RULES_EXPERTS("block_sparse_moe.experts.", "w1", "w3", "w2")

/* family_minimax.c: layer i lightning attention (layer_types, else MiniMaxConfig's
 * alternation); every layer MoE; layer_types and the expert count checked; the lightning
 * buffers a transformers checkpoint holds (dropped as vLLM computes them). */
bool shardmap_minimax_linear(const ckpt_config *c, int64_t i);
bool shardmap_minimax_moe(const ckpt_config *c, int64_t i);
int shardmap_minimax_check(const ckpt_config *c, wt_errbuf *err);
extern const char *const shardmap_minimax_drops[];

#endif
