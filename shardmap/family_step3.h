/*
 * family_step3.h — Step 3's language-model layer rules and hooks (family_step3.c), shared by
 * the families that hold its text model: step3_text itself and Step3-VL
 * (family_step3_vl.c), both under the checkpoint's `model.layers.{i}.` (vLLM's
 * Step3VLForConditionalGeneration only moves model.* / lm_head.* under its language_model
 * module). The rules expand SM_LAYER where they are used.
 */
#ifndef WT_SHARDMAP_FAMILY_STEP3_H
#define WT_SHARDMAP_FAMILY_STEP3_H

#include "shardmap/family_rules.h"

#define ST_ATT SM_LAYER "self_attn."
#define ST_MOE SM_LAYER "moe."

/* Every layer's rules (the table but SM_RULES_TOP): family_step3.c's comment says how. */
#define SM_RULES_STEP3_TEXT_LAYERS                                                                 \
	SM_RULES_LNORM,                                                                            \
	    SM_RULE(ST_ATT "q_proj.weight", ST_ATT "qkv_proj.weight", SM_K_REPLF, 0, SM_U_NONE,    \
	            SM_C_ALL, SM_F_QUANT, 2, SM_D_QLORA, SM_D_HID),                                \
	    SM_RULE(ST_ATT "k_proj.weight", ST_ATT "qkv_proj.weight", SM_K_REPLF, 1, SM_U_NONE,    \
	            SM_C_ALL, SM_F_QUANT, 2, SM_D_HD, SM_D_HID),                                   \
	    SM_RULE(ST_ATT "v_proj.weight", ST_ATT "qkv_proj.weight", SM_K_REPLF, 2, SM_U_NONE,    \
	            SM_C_ALL, SM_F_QUANT, 2, SM_D_HD, SM_D_HID),                                   \
	    SM_RULE(ST_ATT "inter_norm.weight", ST_ATT "inter_norm.weight", SM_K_REPL, 0,          \
	            SM_U_NONE, SM_C_ALL, 0, 1, SM_D_QLORA, SM_D_ANY),                              \
	    SM_RULE(ST_ATT "wq.weight", ST_ATT "wq.weight", SM_K_ROWS, 0, SM_U_HEADS, SM_C_ALL,    \
	            SM_F_QUANT, 2, SM_D_Q, SM_D_QLORA),                                            \
	    SM_RULE(ST_ATT "o_proj.weight", ST_ATT "o_proj.weight", SM_K_COLS, 0, SM_U_HEADS,      \
	            SM_C_ALL, SM_F_QUANT, 2, SM_D_HID, SM_D_Q),                                    \
	    SM_RULES_MLP_NOBIAS_IF(SM_C_DENSE),                                                    \
	    SM_RULE_ROUTER("moe.gate.weight", 2, SM_D_E, SM_D_HID),                                \
	    SM_RULE3(ST_MOE "gate_proj.weight", ST_MOE "experts.w13_weight", SM_K_EXPGU, 0,        \
	             SM_U_IE, SM_C_MOE, SM_F_QUANT, SM_D_E, SM_D_IE, SM_D_HID),                    \
	    SM_RULE3(ST_MOE "up_proj.weight", ST_MOE "experts.w13_weight", SM_K_EXPGU, 1, SM_U_IE, \
	             SM_C_MOE, SM_F_QUANT, SM_D_E, SM_D_IE, SM_D_HID),                             \
	    SM_RULE3(ST_MOE "down_proj.weight", ST_MOE "experts.w2_weight", SM_K_EXP2S, 0,         \
	             SM_U_IE, SM_C_MOE, SM_F_QUANT, SM_D_E, SM_D_HID, SM_D_IE),                    \
	    SM_RULES_MLP_NOBIAS_AT("share_expert.", SM_D_ISH, SM_U_ISH, SM_C_SHARED)

/* family_step3.c: the MoE layers (moe_layers_enum) and the expert count check. */
bool shardmap_step3_text_moe(const ckpt_config *c, int64_t i);
int shardmap_step3_text_check(const ckpt_config *c, wt_errbuf *err);

#endif
