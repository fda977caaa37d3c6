/*
 * family_qformer.h — a BLIP-2 Q-Former (vLLM's Blip2QFormerModel), shared by Granite Speech's
 * projector (projector.qformer.*) and BLIP-2 (qformer.*). Every module is a plain nn.Linear /
 * nn.LayerNorm in vLLM's blip2.py: each tensor whole on every rank, never quantized. Per
 * layer ({i} of SM_F_QF: the loader's qf_layers) the self-attention (query / key / value
 * over SM_D_QFH), its output dense and LayerNorm, the crossattention (key / value
 * SM_D_QFE = encoder_hidden_size wide) in the layers SM_C_QFCROSS selects,
 * intermediate_query and output_query.
 */
#ifndef WT_SHARDMAP_FAMILY_QFORMER_H
#define WT_SHARDMAP_FAMILY_QFORMER_H

#include "shardmap/family_rules.h"

/* a tensor of Q-Former layer {i} under P, whole: condition c, nd dims d0 x d1 */
#define SM_QF_R(P, n, c, nd, d0, d1)                                                               \
	SM_RULE(P "encoder.layer.{i}." n, P "encoder.layer.{i}." n, SM_K_REPL, 0, SM_U_NONE, c,    \
	        SM_F_QF, nd, d0, d1)
/* a Linear (weight [d0, d1], bias [d0]) and a LayerNorm ([QFH]) of a layer */
#define SM_QF_LIN(P, n, c, d0, d1)                                                                 \
	SM_QF_R(P, n ".weight", c, 2, d0, d1), SM_QF_R(P, n ".bias", c, 1, d0, SM_D_ANY)
#define SM_QF_LN(P, n, c)                                                                          \
	SM_QF_R(P, n ".weight", c, 1, SM_D_QFH, SM_D_ANY),                                         \
	    SM_QF_R(P, n ".bias", c, 1, SM_D_QFH, SM_D_ANY)
/* an attention block (self: key / value over QFH; cross: over encoder_hidden_size) */
#define SM_QF_ATT(P, a, c, kv)                                                                     \
	SM_QF_LIN(P, a ".attention.query", c, SM_D_QFH, SM_D_QFH),                                 \
	    SM_QF_LIN(P, a ".attention.key", c, SM_D_QFH, kv),                                     \
	    SM_QF_LIN(P, a ".attention.value", c, SM_D_QFH, kv),                                   \
	    SM_QF_LIN(P, a ".output.dense", c, SM_D_QFH, SM_D_QFH),                                \
	    SM_QF_LN(P, a ".output.LayerNorm", c)
/* The Q-Former under P ("qformer.", "projector.qformer."): its final layernorm, then every
 * layer's tensors. */
#define SM_RULES_QFORMER(P)                                                                        \
	SM_RULE(P "layernorm.weight", P "layernorm.weight", SM_K_REPL, 0, SM_U_NONE, SM_C_ALL, 0,  \
	        1, SM_D_QFH, SM_D_ANY),                                                            \
	    SM_RULE(P "layernorm.bias", P "layernorm.bias", SM_K_REPL, 0, SM_U_NONE, SM_C_ALL, 0,  \
	            1, SM_D_QFH, SM_D_ANY),                                                        \
	    SM_QF_ATT(P, "attention", SM_C_ALL, SM_D_QFH),                                         \
	    SM_QF_ATT(P, "crossattention", SM_C_QFCROSS, SM_D_QFE),                                \
	    SM_QF_LIN(P, "intermediate_query.dense", SM_C_ALL, SM_D_QFI, SM_D_QFH),                \
	    SM_QF_LIN(P, "output_query.dense", SM_C_ALL, SM_D_QFH, SM_D_QFI),                      \
	    SM_QF_LN(P, "output_query.LayerNorm", SM_C_ALL)

/* What vLLM's Blip2QFormerModel cannot build, or what no model is: a Q-Former of another
 * model_type, with text input (embeddings and intermediate / output modules vLLM's
 * Blip2QFormerLayer lacks) or relative positions (Blip2QFormerMultiHeadAttention raises),
 * heads not dividing its width (it raises too); key names the config object in errors
 * (family_qformer.c). */
int shardmap_qformer_check(const ckpt_config *c, const char *key, wt_errbuf *err);

#endif
