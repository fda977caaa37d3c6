/*
 * family_qvl_rules.h — the Qwen2-VL / Qwen2.5-VL rows (the Qwen2 language model, the vision
 * tower `visual.*`, the merger) that family_qwen2vl.c's tables and HyperCLOVAX-SEED-Think's
 * (family_hcx.c: Qwen2.5-VL's tower under its own prefixes) are built of.
 */
#ifndef WT_SHARDMAP_FAMILY_QVL_RULES_H
#define WT_SHARDMAP_FAMILY_QVL_RULES_H

#include "shardmap/family_rules.h"

#define SM_VB "visual.blocks.{i}."

/* Replicated vision tensor of one block: [embed_dim]. */
#define SM_VB_REPL(n)                                                                              \
	SM_RULE(SM_VB n, SM_VB n, SM_K_REPL, 0, SM_U_NONE, SM_C_ALL, SM_F_VIS, 1, SM_D_VE, SM_D_ANY)
#define SM_V_REPL(n, d)                                                                            \
	SM_RULE("visual." n, "visual." n, SM_K_REPL, 0, SM_U_NONE, SM_C_ALL, 0, 1, d, SM_D_ANY)

/* The Qwen2 language model, the Conv3d patch embed [embed_dim, in_chans,
 * temporal_patch_size, patch_size, patch_size], each block's fused qkv and
 * proj, and the merger's MLP: the same in both families. */
#define QVL_COMMON_RULES                                                                           \
	SM_RULES_TOP, SM_RULES_LNORM, SM_RULES_ATTN,                                               \
	    SM_RULES_MLP("mlp.", SM_D_I, SM_U_I, SM_C_ALL), QVL_TOWER_RULES

/* The tower's rows of QVL_COMMON_RULES: the patch embed, each block's qkv / proj, the merger's
 * MLP. */
#define QVL_TOWER_RULES                                                                            \
	SM_RULE_PATCH3D("visual."),                                                                \
	    SM_RULE(SM_VB "attn.qkv.weight", SM_VB "attn.qkv.weight", SM_K_QKVF, 0, SM_U_VHEADS,   \
	            SM_C_ALL, SM_F_QUANT | SM_F_VIS, 2, SM_D_V3E, SM_D_VE),                        \
	    SM_RULE(SM_VB "attn.qkv.bias", SM_VB "attn.qkv.bias", SM_K_QKVF, 0, SM_U_VHEADS,       \
	            SM_C_ALL, SM_F_VIS, 1, SM_D_V3E, SM_D_ANY),                                    \
	    SM_RULE(SM_VB "attn.proj.weight", SM_VB "attn.proj.weight", SM_K_COLS, 0, SM_U_VHEADS, \
	            SM_C_ALL, SM_F_QUANT | SM_F_VIS, 2, SM_D_VE, SM_D_VE),                         \
	    SM_VB_REPL("attn.proj.bias"),                                                          \
	    SM_RULE("visual.merger.mlp.0.weight", "visual.merger.mlp.0.weight", SM_K_ROWS, 0,      \
	            SM_U_VM, SM_C_ALL, SM_F_QUANT, 2, SM_D_VM, SM_D_VM),                           \
	    SM_RULE("visual.merger.mlp.0.bias", "visual.merger.mlp.0.bias", SM_K_ROWS, 0, SM_U_VM, \
	            SM_C_ALL, 0, 1, SM_D_VM, SM_D_ANY),                                            \
	    SM_RULE("visual.merger.mlp.2.weight", "visual.merger.mlp.2.weight", SM_K_COLS, 0,      \
	            SM_U_VM, SM_C_ALL, SM_F_QUANT, 2, SM_D_HID, SM_D_VM),                          \
	    SM_V_REPL("merger.mlp.2.bias", SM_D_HID)

/* Qwen2-VL's own vision block and merger rows. */
#define QVL_V1_RULES                                                                               \
	SM_VB_REPL("norm1.weight"), SM_VB_REPL("norm1.bias"), SM_VB_REPL("norm2.weight"),          \
	    SM_VB_REPL("norm2.bias"), SM_RULES_VIS_FC(SM_VB), SM_VB_REPL("mlp.fc2.bias"),          \
	    SM_V_REPL("merger.ln_q.weight", SM_D_VE), SM_V_REPL("merger.ln_q.bias", SM_D_VE)

/* Qwen2.5-VL blocks: RMSNorms (no bias), a gated MLP with biases fused like
 * the language model's (gate_up_proj = [gate_r ; up_r], down_proj by columns,
 * its bias replicated); the merger's ln_q is an RMSNorm too. */
#define QVL_25_RULES                                                                               \
	SM_VB_REPL("norm1.weight"), SM_VB_REPL("norm2.weight"),                                    \
	    SM_RULE(SM_VB "mlp.gate_proj.weight", SM_VB "mlp.gate_up_proj.weight", SM_K_ROWS, 0,   \
	            SM_U_VI, SM_C_ALL, SM_F_QUANT | SM_F_VIS, 2, SM_D_VI, SM_D_VE),                \
	    SM_RULE(SM_VB "mlp.up_proj.weight", SM_VB "mlp.gate_up_proj.weight", SM_K_ROWS, 1,     \
	            SM_U_VI, SM_C_ALL, SM_F_QUANT | SM_F_VIS, 2, SM_D_VI, SM_D_VE),                \
	    SM_RULE(SM_VB "mlp.gate_proj.bias", SM_VB "mlp.gate_up_proj.bias", SM_K_ROWS, 0,       \
	            SM_U_VI, SM_C_ALL, SM_F_VIS, 1, SM_D_VI, SM_D_ANY),                            \
	    SM_RULE(SM_VB "mlp.up_proj.bias", SM_VB "mlp.gate_up_proj.bias", SM_K_ROWS, 1,         \
	            SM_U_VI, SM_C_ALL, SM_F_VIS, 1, SM_D_VI, SM_D_ANY),                            \
	    SM_RULE(SM_VB "mlp.down_proj.weight", SM_VB "mlp.down_proj.weight", SM_K_COLS, 0,      \
	            SM_U_VI, SM_C_ALL, SM_F_QUANT | SM_F_VIS, 2, SM_D_VE, SM_D_VI),                \
	    SM_VB_REPL("mlp.down_proj.bias"), SM_V_REPL("merger.ln_q.weight", SM_D_VE)

#endif
