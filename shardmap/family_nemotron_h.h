/*
 * family_nemotron_h.h — Nemotron-H's table (family_nemotron_h.c), shared with Nemotron Nano VL
 * v2 (family_nano_vl.c), whose language model it is (moved unchanged from family_nemotron_h.c).
 */
#ifndef WT_SHARDMAP_FAMILY_NEMOTRON_H_H
#define WT_SHARDMAP_FAMILY_NEMOTRON_H_H

#include "shardmap/family_rules.h"

#define NH_MIX "backbone.layers.{i}.mixer."

#define NH_QKV(x, part, d)                                                                         \
	SM_RULE(NH_MIX x "_proj.weight", NH_MIX "qkv_proj.weight", SM_K_QKV, part, SM_U_HEADS,     \
	        SM_C_NHATT, SM_F_QUANT, 2, d, SM_D_HID)

/* Nemotron-H's rules (family_nemotron_h.c), under the canonical names backbone.* / lm_head.*;
 * Nemotron Nano VL v2 (family_nano_vl.c) serves them under language_model. */
#define SM_RULES_NEMOTRON_H                                                                        \
	SM_RULES_BACKBONE,                                                                         \
	    SM_RULES_MIXER2_C(NH_MIX, SM_C_LINATT, SM_C_MCONVB, SM_C_MPROJB, SM_C_LINATT),         \
	    NH_QKV("q", 0, SM_D_Q), NH_QKV("k", 1, SM_D_KV), NH_QKV("v", 2, SM_D_KV),              \
	    SM_RULE(NH_MIX "o_proj.weight", NH_MIX "o_proj.weight", SM_K_COLS, 0, SM_U_HEADS,      \
	            SM_C_NHATT, SM_F_QUANT, 2, SM_D_HID, SM_D_Q),                                  \
	    SM_RULE(NH_MIX "up_proj.weight", NH_MIX "up_proj.weight", SM_K_ROWS, 0, SM_U_I,        \
	            SM_C_NHMLP, SM_F_QUANT, 2, SM_D_I, SM_D_HID),                                  \
	    SM_RULE(NH_MIX "up_proj.bias", NH_MIX "up_proj.bias", SM_K_ROWS, 0, SM_U_I,            \
	            SM_C_NHMLPB, 0, 1, SM_D_I, SM_D_ANY),                                          \
	    SM_RULE(NH_MIX "down_proj.weight", NH_MIX "down_proj.weight", SM_K_COLS, 0, SM_U_I,    \
	            SM_C_NHMLP, SM_F_QUANT, 2, SM_D_HID, SM_D_I),                                  \
	    SM_RULE(NH_MIX "down_proj.bias", NH_MIX "down_proj.bias", SM_K_REPL, 0, SM_U_NONE,     \
	            SM_C_NHMLPB, 0, 1, SM_D_HID, SM_D_ANY),                                        \
	    SM_RULE(NH_MIX "gate.weight", NH_MIX "gate.weight", SM_K_REPL, 0, SM_U_NONE, SM_C_MOE, \
	            0, 2, SM_D_E, SM_D_HID),                                                       \
	    SM_RULE(NH_MIX "gate.e_score_correction_bias", NH_MIX "gate.e_score_correction_bias",  \
	            SM_K_REPL, 0, SM_U_NONE, SM_C_MOE, 0, 1, SM_D_E, SM_D_ANY),                    \
	    SM_RULE(NH_MIX "experts.{j}.up_proj.weight", NH_MIX "experts.w13_weight", SM_K_EXP1,   \
	            0, SM_U_IE, SM_C_MOE, SM_F_QUANT, 2, SM_D_IE, SM_D_HID),                       \
	    SM_RULE(NH_MIX "experts.{j}.down_proj.weight", NH_MIX "experts.w2_weight", SM_K_EXP2,  \
	            0, SM_U_IE, SM_C_MOE, SM_F_QUANT, 2, SM_D_HID, SM_D_IE),                       \
	    SM_RULE(NH_MIX "shared_experts.up_proj.weight",                                        \
	            NH_MIX "shared_experts.up_proj.weight", SM_K_ROWS, 0, SM_U_ISH, SM_C_SHARED,   \
	            SM_F_QUANT, 2, SM_D_ISH, SM_D_HID),                                            \
	    SM_RULE(NH_MIX "shared_experts.down_proj.weight",                                      \
	            NH_MIX "shared_experts.down_proj.weight", SM_K_COLS, 0, SM_U_ISH, SM_C_SHARED, \
	            SM_F_QUANT, 2, SM_D_HID, SM_D_ISH)

/* Nemotron-H's config checks (the pattern's length, MoE sizes, the Mamba2 mixers) and layer
 * kinds (hybrid_override_pattern) */
int shardmap_nemotron_h_check(const ckpt_config *c, wt_errbuf *err);
bool shardmap_nemotron_h_moe(const ckpt_config *c, int64_t i);
bool shardmap_nemotron_h_mamba(const ckpt_config *c, int64_t i);

#endif
