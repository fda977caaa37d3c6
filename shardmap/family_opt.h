/*
 * family_opt.h — OPT's decoder rows (family_opt.c) under a module prefix: OPTForCausalLM's
 * at "", BLIP-2's language model at "language_model." (private to shardmap/).
 */
#ifndef WT_SHARDMAP_FAMILY_OPT_H
#define WT_SHARDMAP_FAMILY_OPT_H

#include "shardmap/family_rules.h"

#define OPT_L(P)                      P "model.decoder.layers.{i}."
#define OPT_REPL(x, c, f, nd, d0, d1) SM_RULE(x, x, SM_K_REPL, 0, SM_U_NONE, c, f, nd, d0, d1)
#define OPT_NORM(x)                                                                                \
	OPT_REPL(x ".weight", SM_C_ALL, 0, 1, SM_D_HID, SM_D_ANY),                                 \
	    OPT_REPL(x ".bias", SM_C_ALL, 0, 1, SM_D_HID, SM_D_ANY)
#define OPT_QKV(P, x, part, d)                                                                     \
	SM_RULE(OPT_L(P) "self_attn." x "_proj.weight", OPT_L(P) "self_attn.qkv_proj.weight",      \
	        SM_K_QKV, part, SM_U_HEADS, SM_C_ALL, SM_F_QUANT, 2, d, SM_D_HID),                 \
	    SM_RULE(OPT_L(P) "self_attn." x "_proj.bias", OPT_L(P) "self_attn.qkv_proj.bias",      \
	            SM_K_QKV, part, SM_U_HEADS, SM_C_ATTNBIAS, 0, 1, d, SM_D_ANY)

/* OPT's table under module prefix P (see family_opt.c). */
#define OPT_RULES(P)                                                                               \
	SM_RULE(P "model.decoder.embed_tokens.weight", P "model.decoder.embed_tokens.weight",      \
	        SM_K_VOCAB, 0, SM_U_NONE, SM_C_ALL, 0, 2, SM_D_V, SM_D_WEP),                       \
	    SM_RULE(P "lm_head.weight", P "lm_head.weight", SM_K_VOCAB, 0, SM_U_NONE, SM_C_ALL,    \
	            SM_F_LMHEAD, 2, SM_D_V, SM_D_WEP),                                             \
	    OPT_REPL(P "model.decoder.embed_positions.weight", SM_C_ALL, 0, 2, SM_D_OPOS,          \
	             SM_D_HID),                                                                    \
	    OPT_REPL(P "model.decoder.project_in.weight", SM_C_OPROJ, SM_F_QUANT, 2, SM_D_HID,     \
	             SM_D_WEP),                                                                    \
	    OPT_REPL(P "model.decoder.project_out.weight", SM_C_OPROJ, SM_F_QUANT, 2, SM_D_WEP,    \
	             SM_D_HID),                                                                    \
	    OPT_REPL(P "model.decoder.final_layer_norm.weight", SM_C_OFNORM, 0, 1, SM_D_HID,       \
	             SM_D_ANY),                                                                    \
	    OPT_REPL(P "model.decoder.final_layer_norm.bias", SM_C_OFNORM, 0, 1, SM_D_HID,         \
	             SM_D_ANY),                                                                    \
	    OPT_NORM(OPT_L(P) "self_attn_layer_norm"), OPT_NORM(OPT_L(P) "final_layer_norm"),      \
	    OPT_QKV(P, "q", 0, SM_D_Q), OPT_QKV(P, "k", 1, SM_D_KV), OPT_QKV(P, "v", 2, SM_D_KV),  \
	    SM_RULE(OPT_L(P) "self_attn.out_proj.weight", OPT_L(P) "self_attn.out_proj.weight",    \
	            SM_K_COLS, 0, SM_U_HEADS, SM_C_ALL, SM_F_QUANT, 2, SM_D_HID, SM_D_Q),          \
	    OPT_REPL(OPT_L(P) "self_attn.out_proj.bias", SM_C_ATTNBIAS, 0, 1, SM_D_HID, SM_D_ANY), \
	    SM_RULE(OPT_L(P) "fc1.weight", OPT_L(P) "fc1.weight", SM_K_ROWS, 0, SM_U_I, SM_C_ALL,  \
	            SM_F_QUANT, 2, SM_D_I, SM_D_HID),                                              \
	    SM_RULE(OPT_L(P) "fc1.bias", OPT_L(P) "fc1.bias", SM_K_ROWS, 0, SM_U_I, SM_C_ATTNBIAS, \
	            0, 1, SM_D_I, SM_D_ANY),                                                       \
	    SM_RULE(OPT_L(P) "fc2.weight", OPT_L(P) "fc2.weight", SM_K_COLS, 0, SM_U_I, SM_C_ALL,  \
	            SM_F_QUANT, 2, SM_D_HID, SM_D_I),                                              \
	    OPT_REPL(OPT_L(P) "fc2.bias", SM_C_ATTNBIAS, 0, 1, SM_D_HID, SM_D_ANY)

/* OPT's checks of config.json (family_opt.c), BLIP-2's language model's too. */
int shardmap_opt_check(const ckpt_config *c, wt_errbuf *err);

#endif
