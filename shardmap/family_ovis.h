/*
 * family_ovis.h — the rows Ovis (family_ovis.c) and Ovis2.5 (family_ovis2_5.c) share: the
 * language model under llm. (Llama's rows, Qwen2's q/k/v biases optional), the visual
 * tokenizer's head and the visual embedding table (private to shardmap/).
 */
#ifndef WT_SHARDMAP_FAMILY_OVIS_H
#define WT_SHARDMAP_FAMILY_OVIS_H

#include "shardmap/family_rules.h"

#define OV_H "visual_tokenizer.head."

/* A tensor outside the blocks, whole on every rank, never quantized. */
#define OV_REPL(n, nd, d0, d1) SM_RULE(n, n, SM_K_REPL, 0, SM_U_NONE, SM_C_ALL, 0, nd, d0, d1)

/* The language model under llm.: Qwen2's / Llama's rows (SM_LAYER llm.model.layers.{i}.). */
#define OV_LM_RULES                                                                                \
	SM_RULES_TOP_AT("llm."), SM_RULES_LNORM, SM_RULES_ATTN,                                    \
	    SM_RULES_MLP("mlp.", SM_D_I, SM_U_I, SM_C_ALL)
/* The visual tokenizer's head (HR rows: the visual vocabulary less the indicator tokens) and
 * the visual embedding table: whole, never quantized. */
#define OV_HEAD_RULES_OF(HR)                                                                       \
	OV_REPL(OV_H "0.weight", 2, HR, SM_D_VM), OV_REPL(OV_H "1.weight", 1, HR, SM_D_ANY),       \
	    OV_REPL(OV_H "1.bias", 1, HR, SM_D_ANY), OV_REPL("vte.weight", 2, SM_D_OVV, SM_D_HID)
#define OV_HEAD_RULES OV_HEAD_RULES_OF(SM_D_OVH)

#endif
