/*
 * family_rules.h — table fragments shared by the family tables (private to
 * shardmap/). Each macro expands to rows of an sm_rule array.
 */
#ifndef WT_SHARDMAP_FAMILY_RULES_H
#define WT_SHARDMAP_FAMILY_RULES_H

#include "shardmap/shardmap_int.h"

#define SM_RULE(ck, rt, kind, part, unit, cond, flags, nd, d0, d1)                                 \
	{                                                                                          \
		ck, rt, kind, part, unit, cond, flags, nd,                                         \
		{                                                                                  \
			d0, d1                                                                     \
		}                                                                                  \
	}

/* The Conv3d patch embed of the Qwen2-VL-style towers (Qwen2-VL, Qwen2.5-VL, Qwen2.5-Omni,
 * Qwen3-VL, GLM-4V) under prefix P: [embed_dim, in_chans, temporal_patch_size, patch_size,
 * patch_size], whole on every rank, never quantized. */
#define SM_RULE_PATCH3D(P)                                                                         \
	{                                                                                          \
		P "patch_embed.proj.weight", P "patch_embed.proj.weight", SM_K_REPL, 0, SM_U_NONE, \
		    SM_C_ALL, 0, 5,                                                                \
		{                                                                                  \
			SM_D_VE, SM_D_VCH, SM_D_VTP, SM_D_VP, SM_D_VP                              \
		}                                                                                  \
	}

/* A rule checking three dimensions (a stacked checkpoint tensor). */
#define SM_RULE3(ck, rt, kind, part, unit, cond, flags, d0, d1, d2)                                \
	{                                                                                          \
		ck, rt, kind, part, unit, cond, flags, 3,                                          \
		{                                                                                  \
			d0, d1, d2                                                                 \
		}                                                                                  \
	}

#define SM_LAYER "model.layers.{i}."

/* Embedding, final norm, LM head under module prefix P ("" for a decoder; Gemma 3's
 * multimodal language model: "language_model."). */
#define SM_RULES_TOP_AT(P)                                                                         \
	SM_RULE(P "model.embed_tokens.weight", P "model.embed_tokens.weight", SM_K_VOCAB, 0,       \
	        SM_U_NONE, SM_C_ALL, 0, 2, SM_D_V, SM_D_HID),                                      \
	    SM_RULE(P "lm_head.weight", P "lm_head.weight", SM_K_VOCAB, 0, SM_U_NONE, SM_C_ALL,    \
	            SM_F_LMHEAD, 2, SM_D_V, SM_D_HID),                                             \
	    SM_RULE(P "model.norm.weight", P "model.norm.weight", SM_K_REPL, 0, SM_U_NONE,         \
	            SM_C_ALL, 0, 1, SM_D_HID, SM_D_ANY)
#define SM_RULES_TOP SM_RULES_TOP_AT("")

/* The state-space LMs' backbone (Mamba's, Falcon-Mamba's, Mamba2's): backbone.embeddings
 * and lm_head vocab-parallel, backbone.norm_f and each layer's norm replicated. */
#define SM_RULES_BACKBONE                                                                          \
	SM_RULE("backbone.embeddings.weight", "backbone.embeddings.weight", SM_K_VOCAB, 0,         \
	        SM_U_NONE, SM_C_ALL, 0, 2, SM_D_V, SM_D_HID),                                      \
	    SM_RULE("lm_head.weight", "lm_head.weight", SM_K_VOCAB, 0, SM_U_NONE, SM_C_ALL,        \
	            SM_F_LMHEAD, 2, SM_D_V, SM_D_HID),                                             \
	    SM_RULE("backbone.norm_f.weight", "backbone.norm_f.weight", SM_K_REPL, 0, SM_U_NONE,   \
	            SM_C_ALL, 0, 1, SM_D_HID, SM_D_ANY),                                           \
	    SM_RULE("backbone.layers.{i}.norm.weight", "backbone.layers.{i}.norm.weight",          \
	            SM_K_REPL, 0, SM_U_NONE, SM_C_ALL, 0, 1, SM_D_HID, SM_D_ANY)

/* Layer norms. */
#define SM_RULES_LNORM                                                                             \
	SM_RULE(SM_LAYER "input_layernorm.weight", SM_LAYER "input_layernorm.weight", SM_K_REPL,   \
	        0, SM_U_NONE, SM_C_ALL, 0, 1, SM_D_HID, SM_D_ANY),                                 \
	    SM_RULE(SM_LAYER "post_attention_layernorm.weight",                                    \
	            SM_LAYER "post_attention_layernorm.weight", SM_K_REPL, 0, SM_U_NONE, SM_C_ALL, \
	            0, 1, SM_D_HID, SM_D_ANY)

/* Llama-style attention: q/k/v (+ optional biases) fused, o_proj row parallel. */
#define SM_QKV_W(x, part, d)                                                                       \
	SM_RULE(SM_LAYER "self_attn." x "_proj.weight", SM_LAYER "self_attn.qkv_proj.weight",      \
	        SM_K_QKV, part, SM_U_HEADS, SM_C_ALL, SM_F_QUANT, 2, d, SM_D_HID)
#define SM_QKV_B(x, part, d)                                                                       \
	SM_RULE(SM_LAYER "self_attn." x "_proj.bias", SM_LAYER "self_attn.qkv_proj.bias",          \
	        SM_K_QKV, part, SM_U_HEADS, SM_C_ALL, SM_F_OPT, 1, d, SM_D_ANY)
#define SM_RULES_ATTN                                                                              \
	SM_QKV_W("q", 0, SM_D_Q), SM_QKV_W("k", 1, SM_D_KV), SM_QKV_W("v", 2, SM_D_KV),            \
	    SM_QKV_B("q", 0, SM_D_Q), SM_QKV_B("k", 1, SM_D_KV), SM_QKV_B("v", 2, SM_D_KV),        \
	    SM_RULE(SM_LAYER "self_attn.o_proj.weight", SM_LAYER "self_attn.o_proj.weight",        \
	            SM_K_COLS, 0, SM_U_HEADS, SM_C_ALL, SM_F_QUANT, 2, SM_D_HID, SM_D_Q),          \
	    SM_RULE(SM_LAYER "self_attn.o_proj.bias", SM_LAYER "self_attn.o_proj.bias", SM_K_REPL, \
	            0, SM_U_NONE, SM_C_ALL, SM_F_OPT, 1, SM_D_HID, SM_D_ANY)

/* Llama-style attention without biases (Ministral's, MiniCPM's: every Linear bias=False, so a
 * bias is an unknown tensor): q/k/v fused by heads, o_proj by columns. */
#define MINISTRAL_ATTN                                                                             \
	SM_QKV_W("q", 0, SM_D_Q), SM_QKV_W("k", 1, SM_D_KV), SM_QKV_W("v", 2, SM_D_KV),            \
	    SM_RULE(SM_LAYER "self_attn.o_proj.weight", SM_LAYER "self_attn.o_proj.weight",        \
	            SM_K_COLS, 0, SM_U_HEADS, SM_C_ALL, SM_F_QUANT, 2, SM_D_HID, SM_D_Q)

/* Llama-style attention whose q/k/v and o_proj biases are there exactly when config.json's
 * attention_bias is true (every Linear of the attention built with bias=attention_bias:
 * dots.llm1, SmolLM3): required then, unknown otherwise. */
#define SM_QKV_BS(x, part, d)                                                                      \
	SM_RULE(SM_LAYER "self_attn." x "_proj.bias", SM_LAYER "self_attn.qkv_proj.bias",          \
	        SM_K_QKV, part, SM_U_HEADS, SM_C_ATTNBIAS, 0, 1, d, SM_D_ANY)
#define SM_RULES_ATTN_SWITCHED                                                                     \
	SM_QKV_W("q", 0, SM_D_Q), SM_QKV_W("k", 1, SM_D_KV), SM_QKV_W("v", 2, SM_D_KV),            \
	    SM_QKV_BS("q", 0, SM_D_Q), SM_QKV_BS("k", 1, SM_D_KV), SM_QKV_BS("v", 2, SM_D_KV),     \
	    SM_RULE(SM_LAYER "self_attn.o_proj.weight", SM_LAYER "self_attn.o_proj.weight",        \
	            SM_K_COLS, 0, SM_U_HEADS, SM_C_ALL, SM_F_QUANT, 2, SM_D_HID, SM_D_Q),          \
	    SM_RULE(SM_LAYER "self_attn.o_proj.bias", SM_LAYER "self_attn.o_proj.bias", SM_K_REPL, \
	            0, SM_U_NONE, SM_C_ATTNBIAS, 0, 1, SM_D_HID, SM_D_ANY)

/* Per-head q / k RMSNorm weights [head_dim] (Qwen3, Qwen3-MoE, Gemma 3), replicated, where
 * condition C holds. */
#define SM_RULES_QK_NORM_IF(C)                                                                     \
	SM_RULE(SM_LAYER "self_attn.q_norm.weight", SM_LAYER "self_attn.q_norm.weight", SM_K_REPL, \
	        0, SM_U_NONE, C, 0, 1, SM_D_HD, SM_D_ANY),                                         \
	    SM_RULE(SM_LAYER "self_attn.k_norm.weight", SM_LAYER "self_attn.k_norm.weight",        \
	            SM_K_REPL, 0, SM_U_NONE, C, 0, 1, SM_D_HD, SM_D_ANY)
#define SM_RULES_QK_NORM SM_RULES_QK_NORM_IF(SM_C_ALL)

/* OLMo 2's post norms (OLMo 2 / 3, EXAONE 4.0, FlexOlmo): no input_layernorm;
 * post_attention_layernorm and post_feedforward_layernorm norm the block outputs,
 * replicated. */
#define SM_RULES_POST_NORMS                                                                        \
	SM_RULE(SM_LAYER "post_attention_layernorm.weight",                                        \
	        SM_LAYER "post_attention_layernorm.weight", SM_K_REPL, 0, SM_U_NONE, SM_C_ALL, 0,  \
	        1, SM_D_HID, SM_D_ANY),                                                            \
	    SM_RULE(SM_LAYER "post_feedforward_layernorm.weight",                                  \
	            SM_LAYER "post_feedforward_layernorm.weight", SM_K_REPL, 0, SM_U_NONE,         \
	            SM_C_ALL, 0, 1, SM_D_HID, SM_D_ANY)

/* q / k RMSNorm weights over all heads, q_norm [H*d] and k_norm [KV*d] (OLMo 2, OLMoE),
 * replicated in full: engines gather q and k before them under TP. */
#define SM_RULES_QK_NORM_FULL                                                                      \
	SM_RULE(SM_LAYER "self_attn.q_norm.weight", SM_LAYER "self_attn.q_norm.weight", SM_K_REPL, \
	        0, SM_U_NONE, SM_C_ALL, 0, 1, SM_D_Q, SM_D_ANY),                                   \
	    SM_RULE(SM_LAYER "self_attn.k_norm.weight", SM_LAYER "self_attn.k_norm.weight",        \
	            SM_K_REPL, 0, SM_U_NONE, SM_C_ALL, 0, 1, SM_D_KV, SM_D_ANY)

/* Dense MLP under module path M ("mlp."), intermediate dim D split in unit U. */
#define SM_RULES_MLP(M, D, U, C)                                                                   \
	SM_RULE(SM_LAYER M "gate_proj.weight", SM_LAYER M "gate_up_proj.weight", SM_K_ROWS, 0, U,  \
	        C, SM_F_QUANT, 2, D, SM_D_HID),                                                    \
	    SM_RULE(SM_LAYER M "up_proj.weight", SM_LAYER M "gate_up_proj.weight", SM_K_ROWS, 1,   \
	            U, C, SM_F_QUANT, 2, D, SM_D_HID),                                             \
	    SM_RULE(SM_LAYER M "down_proj.weight", SM_LAYER M "down_proj.weight", SM_K_COLS, 0, U, \
	            C, SM_F_QUANT, 2, SM_D_HID, D),                                                \
	    SM_RULE(SM_LAYER M "gate_proj.bias", SM_LAYER M "gate_up_proj.bias", SM_K_ROWS, 0, U,  \
	            C, SM_F_OPT, 1, D, SM_D_ANY),                                                  \
	    SM_RULE(SM_LAYER M "up_proj.bias", SM_LAYER M "gate_up_proj.bias", SM_K_ROWS, 1, U, C, \
	            SM_F_OPT, 1, D, SM_D_ANY),                                                     \
	    SM_RULE(SM_LAYER M "down_proj.bias", SM_LAYER M "down_proj.bias", SM_K_REPL, 0,        \
	            SM_U_NONE, C, SM_F_OPT, 1, SM_D_HID, SM_D_ANY)

/* The decoder layer of a Llama / Qwen2 / Qwen3 language model that a multimodal wrapper builds
 * from its text config (vLLM's LlamaForCausalLM, Qwen2ForCausalLM or Qwen3ForCausalLM): the
 * norms, the fused QKV (biases where SM_C_ATTNBIAS) and o_proj, the gate / up / down MLP, and
 * Qwen3's per-head q / k norms where the text config is a qwen3 one (SM_C_QWEN3). */
#define SM_RULES_LLAMA_QWEN_LAYER                                                                  \
	SM_RULES_LNORM, SM_RULES_ATTN, SM_RULES_MLP("mlp.", SM_D_I, SM_U_I, SM_C_ALL),             \
	    SM_RULES_QK_NORM_IF(SM_C_QWEN3)

/* SM_RULES_MLP without the biases: under module path M, intermediate dim D split in unit U, in
 * the layers where C holds (Bailing's shared experts: "mlp.shared_experts.", SM_D_ISH). */
#define SM_RULES_MLP_NOBIAS_AT(M, D, U, C)                                                         \
	SM_RULE(SM_LAYER M "gate_proj.weight", SM_LAYER M "gate_up_proj.weight", SM_K_ROWS, 0, U,  \
	        C, SM_F_QUANT, 2, D, SM_D_HID),                                                    \
	    SM_RULE(SM_LAYER M "up_proj.weight", SM_LAYER M "gate_up_proj.weight", SM_K_ROWS, 1,   \
	            U, C, SM_F_QUANT, 2, D, SM_D_HID),                                             \
	    SM_RULE(SM_LAYER M "down_proj.weight", SM_LAYER M "down_proj.weight", SM_K_COLS, 0, U, \
	            C, SM_F_QUANT, 2, SM_D_HID, D)
/* Llama's MLP without biases (Ministral, StableLM, Hunyuan, Gemma 3n, Baichuan: vLLM builds it
 * with bias=False, so a bias tensor is unknown): gate_proj / up_proj merged into gate_up_proj,
 * down_proj by columns; in the layers where C holds (MiniCPM: SM_C_DENSE). */
#define SM_RULES_MLP_NOBIAS_IF(C) SM_RULES_MLP_NOBIAS_AT("mlp.", SM_D_I, SM_U_I, C)
#define SM_RULES_MLP_NOBIAS       SM_RULES_MLP_NOBIAS_IF(SM_C_ALL)

/* Llama's MLP whose gate / up / down biases are there exactly when config.json's mlp_bias is
 * true (Seed-OSS, SmolLM3, Chameleon): required then, unknown otherwise. */
#define SM_RULES_MLP_SWITCHED                                                                      \
	SM_RULE(SM_LAYER "mlp.gate_proj.weight", SM_LAYER "mlp.gate_up_proj.weight", SM_K_ROWS, 0, \
	        SM_U_I, SM_C_ALL, SM_F_QUANT, 2, SM_D_I, SM_D_HID),                                \
	    SM_RULE(SM_LAYER "mlp.up_proj.weight", SM_LAYER "mlp.gate_up_proj.weight", SM_K_ROWS,  \
	            1, SM_U_I, SM_C_ALL, SM_F_QUANT, 2, SM_D_I, SM_D_HID),                         \
	    SM_RULE(SM_LAYER "mlp.down_proj.weight", SM_LAYER "mlp.down_proj.weight", SM_K_COLS,   \
	            0, SM_U_I, SM_C_ALL, SM_F_QUANT, 2, SM_D_HID, SM_D_I),                         \
	    SM_RULE(SM_LAYER "mlp.gate_proj.bias", SM_LAYER "mlp.gate_up_proj.bias", SM_K_ROWS, 0, \
	            SM_U_I, SM_C_MLPBIAS, 0, 1, SM_D_I, SM_D_ANY),                                 \
	    SM_RULE(SM_LAYER "mlp.up_proj.bias", SM_LAYER "mlp.gate_up_proj.bias", SM_K_ROWS, 1,   \
	            SM_U_I, SM_C_MLPBIAS, 0, 1, SM_D_I, SM_D_ANY),                                 \
	    SM_RULE(SM_LAYER "mlp.down_proj.bias", SM_LAYER "mlp.down_proj.bias", SM_K_REPL, 0,    \
	            SM_U_NONE, SM_C_MLPBIAS, 0, 1, SM_D_HID, SM_D_ANY)

/* Phi-3's attention (Phi-3, Phi-3-Vision's language model): q/k/v fused in the checkpoint as
 * self_attn.qkv_proj [(H + 2 KV) d, hid], re-sliced into each rank's [q_r; k_r; v_r] (kv heads
 * replicated when KV < T); o_proj by columns. */
#define SM_RULES_PHI3_ATTN                                                                         \
	SM_RULE(SM_LAYER "self_attn.qkv_proj.weight", SM_LAYER "self_attn.qkv_proj.weight",        \
	        SM_K_QKVC, 0, SM_U_HEADS, SM_C_ALL, SM_F_QUANT, 2, SM_D_QKV, SM_D_HID),            \
	    SM_RULE(SM_LAYER "self_attn.o_proj.weight", SM_LAYER "self_attn.o_proj.weight",        \
	            SM_K_COLS, 0, SM_U_HEADS, SM_C_ALL, SM_F_QUANT, 2, SM_D_HID, SM_D_Q)

/* Dense MLP with gate/up already fused in the checkpoint (Phi-3, GLM):
 * mlp.gate_up_proj [2I, hid] re-sliced into [gate_r ; up_r], down_proj by columns. */
#define SM_RULES_MLP_FUSED                                                                         \
	SM_RULE(SM_LAYER "mlp.gate_up_proj.weight", SM_LAYER "mlp.gate_up_proj.weight",            \
	        SM_K_ROWS2, 0, SM_U_I, SM_C_ALL, SM_F_QUANT, 2, SM_D_I2, SM_D_HID),                \
	    SM_RULE(SM_LAYER "mlp.down_proj.weight", SM_LAYER "mlp.down_proj.weight", SM_K_COLS,   \
	            0, SM_U_I, SM_C_ALL, SM_F_QUANT, 2, SM_D_HID, SM_D_I)

/* GLM-4-0414's norms after the attention and after the MLP (Glm4ForCausalLM, GLM-4.1V's
 * language model), [hid] replicated. */
#define SM_RULES_GLM4_NORMS                                                                        \
	SM_RULE(SM_LAYER "post_self_attn_layernorm.weight",                                        \
	        SM_LAYER "post_self_attn_layernorm.weight", SM_K_REPL, 0, SM_U_NONE, SM_C_ALL, 0,  \
	        1, SM_D_HID, SM_D_ANY),                                                            \
	    SM_RULE(SM_LAYER "post_mlp_layernorm.weight", SM_LAYER "post_mlp_layernorm.weight",    \
	            SM_K_REPL, 0, SM_U_NONE, SM_C_ALL, 0, 1, SM_D_HID, SM_D_ANY)

/* Routed experts under module path M ("mlp.experts."), leaf names g/u/d, stacked into the
 * runtime names W13 / W2 (full leaf patterns under the layer) with flags F. */
#define SM_RULES_EXPERTS_AS(M, g, u, d, W13, W2, F)                                                \
	SM_RULE(SM_LAYER M "{j}." g ".weight", SM_LAYER W13, SM_K_EXP13, 0, SM_U_IE, SM_C_MOE, F,  \
	        2, SM_D_IE, SM_D_HID),                                                             \
	    SM_RULE(SM_LAYER M "{j}." u ".weight", SM_LAYER W13, SM_K_EXP13, 1, SM_U_IE, SM_C_MOE, \
	            F, 2, SM_D_IE, SM_D_HID),                                                      \
	    SM_RULE(SM_LAYER M "{j}." d ".weight", SM_LAYER W2, SM_K_EXP2, 0, SM_U_IE, SM_C_MOE,   \
	            F, 2, SM_D_HID, SM_D_IE)
/* The same into M "w13_weight" / M "w2_weight" (vLLM's FusedMoE), quantized. */
#define SM_RULES_EXPERTS(M, g, u, d)                                                               \
	SM_RULES_EXPERTS_AS(M, g, u, d, M "w13_weight", M "w2_weight", SM_F_QUANT)

/* Routed experts stored stacked under module path M ("block_sparse_moe.", GraniteMoE):
 * input_linear [E, 2*Ie, hid] ([gate_j; up_j] rows per expert) and output_linear
 * [E, hid, Ie] become M "experts.w13_weight" / "w2_weight" as SM_RULES_EXPERTS' do. */
#define SM_RULES_EXPERTS_STACKED(M)                                                                \
	SM_RULE3(SM_LAYER M "input_linear.weight", SM_LAYER M "experts.w13_weight", SM_K_EXP13S,   \
	         0, SM_U_IE, SM_C_MOE, SM_F_QUANT, SM_D_E, SM_D_IE2, SM_D_HID),                    \
	    SM_RULE3(SM_LAYER M "output_linear.weight", SM_LAYER M "experts.w2_weight",            \
	             SM_K_EXP2S, 0, SM_U_IE, SM_C_MOE, SM_F_QUANT, SM_D_E, SM_D_HID, SM_D_IE)

/* The layer_is_moe hook of the families whose layers are all MoE when config.json has routed
 * experts (family_moe.c: Mixtral, OLMoE, ...; MiniCPM-MoE). */
bool shardmap_moe_all(const ckpt_config *cfg, int64_t i);
/* ERNIE 4.5 MoE's (family_ernie.c; ERNIE-4.5-VL's too): Ernie4_5_MoeDecoderLayer's MoE layers
 * (moe_layer_start_index .. moe_layer_end_index, -1 the last, every moe_layer_interval-th), and
 * use_bias refused where there are routed experts. */
bool shardmap_ernie_moe_layer(const ckpt_config *cfg, int64_t i);
int shardmap_ernie_moe_check(const ckpt_config *cfg, wt_errbuf *err);

/* Replicated router-like tensor of MoE layers. */
#define SM_RULE_ROUTER(ck, nd, d0, d1)                                                             \
	SM_RULE(SM_LAYER ck, SM_LAYER ck, SM_K_REPL, 0, SM_U_NONE, SM_C_MOE, 0, nd, d0, d1)

/* DeepSeek-V3's MoE rows (also GLM-4.5's, GLM-4.5V's, dots.llm1's): the dense MLP of
 * layers < first_k_dense_replace, the router, the routed experts and the shared experts
 * (n_shared_experts x moe_intermediate_size) of the MoE layers. */
#define DEEPSEEK_RULES_MOE                                                                         \
	SM_RULES_MLP("mlp.", SM_D_I, SM_U_I, SM_C_DENSE),                                          \
	    SM_RULE_ROUTER("mlp.gate.weight", 2, SM_D_E, SM_D_HID),                                \
	    SM_RULES_EXPERTS("mlp.experts.", "gate_proj", "up_proj", "down_proj"),                 \
	    SM_RULES_MLP("mlp.shared_experts.", SM_D_ISH, SM_U_ISH, SM_C_SHARED)

/* Ling's Bailing MoE (V1 and V2): model.word_embeddings / lm_head by padded vocabulary rows,
 * model.norm and the layer norms replicated, attention.query_key_value [q; k; v] (its bias with
 * use_qkv_bias) cut by heads into [q_r; k_r; v_r], attention.dense by columns. */
#define SM_BAILING_ATTN SM_LAYER "attention."
#define SM_RULES_BAILING_BASE                                                                      \
	SM_RULE("model.word_embeddings.weight", "model.word_embeddings.weight", SM_K_VOCAB, 0,     \
	        SM_U_NONE, SM_C_ALL, 0, 2, SM_D_V, SM_D_HID),                                      \
	    SM_RULE("lm_head.weight", "lm_head.weight", SM_K_VOCAB, 0, SM_U_NONE, SM_C_ALL,        \
	            SM_F_LMHEAD, 2, SM_D_V, SM_D_HID),                                             \
	    SM_RULE("model.norm.weight", "model.norm.weight", SM_K_REPL, 0, SM_U_NONE, SM_C_ALL,   \
	            0, 1, SM_D_HID, SM_D_ANY),                                                     \
	    SM_RULES_LNORM,                                                                        \
	    SM_RULE(SM_BAILING_ATTN "query_key_value.weight",                                      \
	            SM_BAILING_ATTN "query_key_value.weight", SM_K_QKVC, 0, SM_U_HEADS, SM_C_ALL,  \
	            SM_F_QUANT, 2, SM_D_QKV, SM_D_HID),                                            \
	    SM_RULE(SM_BAILING_ATTN "query_key_value.bias",                                        \
	            SM_BAILING_ATTN "query_key_value.bias", SM_K_QKVC, 0, SM_U_HEADS,              \
	            SM_C_ATTNBIAS, 0, 1, SM_D_QKV, SM_D_ANY),                                      \
	    SM_RULE(SM_BAILING_ATTN "dense.weight", SM_BAILING_ATTN "dense.weight", SM_K_COLS, 0,  \
	            SM_U_HEADS, SM_C_ALL, SM_F_QUANT, 2, SM_D_HID, SM_D_Q)

/* A Gemma 2 / 3 norm of every layer, [hid] replicated. */
#define SM_RULE_GEMMA_NORM(x)                                                                      \
	SM_RULE(SM_LAYER x ".weight", SM_LAYER x ".weight", SM_K_REPL, 0, SM_U_NONE, SM_C_ALL, 0,  \
	        1, SM_D_HID, SM_D_ANY)

/* Gemma 3's language model (Gemma3ForCausalLM's table) under module prefix P; its
 * layers are under SM_LAYER as defined where the table is written (the macros here
 * expand SM_LAYER there). */
#define SM_RULES_GEMMA3_LM(P)                                                                      \
	SM_RULES_TOP_AT(P), SM_RULES_LNORM, SM_RULE_GEMMA_NORM("pre_feedforward_layernorm"),       \
	    SM_RULE_GEMMA_NORM("post_feedforward_layernorm"), SM_RULES_QK_NORM, SM_RULES_ATTN,     \
	    SM_RULES_MLP("mlp.", SM_D_I, SM_U_I, SM_C_ALL)

/* DeepSeek-V3's multi-head latent attention under module path A ("self_attn."; LongCat-Flash:
 * "self_attn.0." / "self_attn.1."), as vLLM's deepseek_v2.py loads it: q_a_proj,
 * q_a_layernorm, kv_a_proj_with_mqa, kv_a_layernorm replicated; q_b_proj (q_proj without
 * q_lora_rank) and kv_b_proj by heads; o_proj by columns in heads. */
#define SM_RULES_MLA(A)                                                                            \
	SM_RULE(SM_LAYER A "q_a_proj.weight", SM_LAYER A "q_a_proj.weight", SM_K_REPL, 0,          \
	        SM_U_NONE, SM_C_QLORA, SM_F_QUANT, 2, SM_D_QLORA, SM_D_HID),                       \
	    SM_RULE(SM_LAYER A "q_a_layernorm.weight", SM_LAYER A "q_a_layernorm.weight",          \
	            SM_K_REPL, 0, SM_U_NONE, SM_C_QLORA, 0, 1, SM_D_QLORA, SM_D_ANY),              \
	    SM_RULE(SM_LAYER A "q_b_proj.weight", SM_LAYER A "q_b_proj.weight", SM_K_ROWS, 0,      \
	            SM_U_HEADS, SM_C_QLORA, SM_F_QUANT, 2, SM_D_QB, SM_D_QLORA),                   \
	    SM_RULES_MLA_KV(A, SM_C_NOQLORA, SM_C_ALL)

/* The MLA rows but q_lora_rank's under module path A: q_proj (condition cq), kv_a_proj_with_mqa,
 * kv_a_layernorm, kv_b_proj and o_proj (condition c). Kimi-Linear gives SM_C_FULLATT for both:
 * its MLA layers, without q_lora_rank. */
#define SM_RULES_MLA_KV(A, cq, c)                                                                  \
	SM_RULE(SM_LAYER A "q_proj.weight", SM_LAYER A "q_proj.weight", SM_K_ROWS, 0, SM_U_HEADS,  \
	        cq, SM_F_QUANT, 2, SM_D_QB, SM_D_HID),                                             \
	    SM_RULE(SM_LAYER A "kv_a_proj_with_mqa.weight",                                        \
	            SM_LAYER A "kv_a_proj_with_mqa.weight", SM_K_REPL, 0, SM_U_NONE, c,            \
	            SM_F_QUANT, 2, SM_D_KVA, SM_D_HID),                                            \
	    SM_RULE(SM_LAYER A "kv_a_layernorm.weight", SM_LAYER A "kv_a_layernorm.weight",        \
	            SM_K_REPL, 0, SM_U_NONE, c, 0, 1, SM_D_KVLORA, SM_D_ANY),                      \
	    SM_RULE(SM_LAYER A "kv_b_proj.weight", SM_LAYER A "kv_b_proj.weight", SM_K_ROWS, 0,    \
	            SM_U_HEADS, c, SM_F_QUANT, 2, SM_D_KVB, SM_D_KVLORA),                          \
	    SM_RULE(SM_LAYER A "o_proj.weight", SM_LAYER A "o_proj.weight", SM_K_COLS, 0,          \
	            SM_U_HEADS, c, SM_F_QUANT, 2, SM_D_HID, SM_D_OV)

/* A Mamba tensor under prefix M split by rows in mamba heads (never quantized): [Hm] or
 * [Im]. */
#define SM_MROWS(M, n, d, cond) SM_RULE(M n, M n, SM_K_ROWS, 0, SM_U_MH, cond, 0, 1, d, SM_D_ANY)

/* The Mamba2 mixer's tensors under prefix M (Granite 4.0's mamba., Mamba2's mixer., Zamba2's
 * mamba. / mamba_decoder.mamba.), as vLLM's MambaMixer2 loads them: in_proj [z; x; B; C; dt]
 * and conv1d [x; B; C] per segment, A_log / D / dt_bias / the gated norm by heads, out_proj
 * by columns, in_proj / out_proj quantized. Conditions: at the mixer's layers, convb its
 * conv1d bias, projb its in_proj / out_proj biases, nrm its gated norm. */
#define SM_RULES_MIXER2_C(M, at, convb, projb, nrm)                                                \
	SM_RULE(M "in_proj.weight", M "in_proj.weight", SM_K_MAMBA, 0, SM_U_MH, at, SM_F_QUANT, 2, \
	        SM_D_MIN, SM_D_HID),                                                               \
	    SM_RULE(M "in_proj.bias", M "in_proj.bias", SM_K_MAMBA, 0, SM_U_MH, projb, 0, 1,       \
	            SM_D_MIN, SM_D_ANY),                                                           \
	    SM_RULE3(M "conv1d.weight", M "conv1d.weight", SM_K_MAMBA, 0, SM_U_MH, at, 0,          \
	             SM_D_MCONV, SM_D_ONE, SM_D_MKER),                                             \
	    SM_RULE(M "conv1d.bias", M "conv1d.bias", SM_K_MAMBA, 0, SM_U_MH, convb, 0, 1,         \
	            SM_D_MCONV, SM_D_ANY),                                                         \
	    SM_MROWS(M, "A_log", SM_D_MH, at), SM_MROWS(M, "D", SM_D_MH, at),                      \
	    SM_MROWS(M, "dt_bias", SM_D_MH, at), SM_MROWS(M, "norm.weight", SM_D_MI, nrm),         \
	    SM_RULE(M "out_proj.weight", M "out_proj.weight", SM_K_COLS, 0, SM_U_MH, at,           \
	            SM_F_QUANT, 2, SM_D_HID, SM_D_MI),                                             \
	    SM_RULE(M "out_proj.bias", M "out_proj.bias", SM_K_REPL, 0, SM_U_NONE, projb, 0, 1,    \
	            SM_D_HID, SM_D_ANY)

#define SM_NRULES(a) (sizeof(a) / sizeof((a)[0]))

/* A vision block's plain MLP under prefix VB (Qwen2-VL visual.blocks.{i}., Gemma 3's
 * SigLIP encoder.layers.{i}.): fc1 rows with its bias, fc2 columns (its bias is the
 * family's replicated row). */
#define SM_RULES_VIS_FC(VB)                                                                        \
	SM_RULE(VB "mlp.fc1.weight", VB "mlp.fc1.weight", SM_K_ROWS, 0, SM_U_VI, SM_C_ALL,         \
	        SM_F_QUANT | SM_F_VIS, 2, SM_D_VI, SM_D_VE),                                       \
	    SM_RULE(VB "mlp.fc1.bias", VB "mlp.fc1.bias", SM_K_ROWS, 0, SM_U_VI, SM_C_ALL,         \
	            SM_F_VIS, 1, SM_D_VI, SM_D_ANY),                                               \
	    SM_RULE(VB "mlp.fc2.weight", VB "mlp.fc2.weight", SM_K_COLS, 0, SM_U_VI, SM_C_ALL,     \
	            SM_F_QUANT | SM_F_VIS, 2, SM_D_VE, SM_D_VI)

/* A ViT tower's patch Conv2d under VT: replicated, never quantized, [VE, VCH, VP, VP]. */
/* clang-format off */
#define SM_VIT_PATCH(VT)                                                                           \
	{VT "embeddings.patch_embedding.weight", VT "embeddings.patch_embedding.weight",           \
	 SM_K_REPL, 0, SM_U_NONE, SM_C_ALL, 0, 4, {SM_D_VE, SM_D_VCH, SM_D_VP, SM_D_VP}}
/* clang-format on */
/* A SigLIP / CLIP tower's encoder blocks under VT (q/k/v with biases fused by heads, out_proj
 * by columns, fc1 by rows, fc2 by columns, the LayerNorms and the row parallel biases
 * replicated) and its post_layernorm. */
#define SM_RULES_VIT_ENCODER(VT)                                                                   \
	SM_SIGLIP_VB_REPL(VT, "layer_norm1.weight"), SM_SIGLIP_VB_REPL(VT, "layer_norm1.bias"),    \
	    SM_SIGLIP_QKV(VT, "q", 0), SM_SIGLIP_QKV(VT, "k", 1), SM_SIGLIP_QKV(VT, "v", 2),       \
	    SM_RULE(VT "encoder.layers.{i}.self_attn.out_proj.weight",                             \
	            VT "encoder.layers.{i}.self_attn.out_proj.weight", SM_K_COLS, 0, SM_U_VHEADS,  \
	            SM_C_ALL, SM_F_QUANT | SM_F_VIS, 2, SM_D_VE, SM_D_VE),                         \
	    SM_SIGLIP_VB_REPL(VT, "self_attn.out_proj.bias"),                                      \
	    SM_SIGLIP_VB_REPL(VT, "layer_norm2.weight"),                                           \
	    SM_SIGLIP_VB_REPL(VT, "layer_norm2.bias"), SM_RULES_VIS_FC(VT "encoder.layers.{i}."),  \
	    SM_SIGLIP_VB_REPL(VT, "mlp.fc2.bias"),                                                 \
	    SM_SIGLIP_REPL(VT "post_layernorm.weight", 1, SM_D_VE, SM_D_ANY),                      \
	    SM_SIGLIP_REPL(VT "post_layernorm.bias", 1, SM_D_VE, SM_D_ANY)

/* A SigLIP-style vision tower under prefix VT (Gemma 3's "vision_tower.vision_model.",
 * Idefics3's "model.vision_model."), as vLLM's siglip.py / idefics2_vision_model.py build
 * it: the patch Conv2d with its bias, the position table ((image_size / patch_size)^2 rows)
 * and every LayerNorm replicated; per block q/k/v with biases fused by heads into
 * self_attn.qkv_proj (QKVParallelLinear, KV = H), out_proj by columns (RowParallelLinear,
 * its bias replicated), fc1 by rows, fc2 by columns (its bias replicated); post_layernorm. */
#define SM_SIGLIP_REPL(n, nd, d0, d1)                                                              \
	SM_RULE(n, n, SM_K_REPL, 0, SM_U_NONE, SM_C_ALL, 0, nd, d0, d1)
/* A pre-normed two-Linear projector of plain torch modules under P (R-4B's
 * RVLMultiModalProjector, Bee-8B's BeeMultiModalProjector: LayerNorm(VE), Linear(VE, MID),
 * Linear(MID, hid), the biases always) and LLaVA-OneVision's image_newline [hid]: whole on every
 * rank, never quantized, required. */
#define SM_RULES_PRENORM_PROJ(P, MID)                                                              \
	SM_SIGLIP_REPL(P "pre_norm.weight", 1, SM_D_VE, SM_D_ANY),                                 \
	    SM_SIGLIP_REPL(P "pre_norm.bias", 1, SM_D_VE, SM_D_ANY),                               \
	    SM_SIGLIP_REPL(P "linear_1.weight", 2, MID, SM_D_VE),                                  \
	    SM_SIGLIP_REPL(P "linear_1.bias", 1, MID, SM_D_ANY),                                   \
	    SM_SIGLIP_REPL(P "linear_2.weight", 2, SM_D_HID, MID),                                 \
	    SM_SIGLIP_REPL(P "linear_2.bias", 1, SM_D_HID, SM_D_ANY),                              \
	    SM_SIGLIP_REPL("image_newline", 1, SM_D_HID, SM_D_ANY)

#define SM_SIGLIP_VB_REPL(VT, n)                                                                   \
	SM_RULE(VT "encoder.layers.{i}." n, VT "encoder.layers.{i}." n, SM_K_REPL, 0, SM_U_NONE,   \
	        SM_C_ALL, SM_F_VIS, 1, SM_D_VE, SM_D_ANY)
#define SM_SIGLIP_QKV(VT, x, part)                                                                 \
	SM_RULE(VT "encoder.layers.{i}.self_attn." x "_proj.weight",                               \
	        VT "encoder.layers.{i}.self_attn.qkv_proj.weight", SM_K_ROWS, part, SM_U_VHEADS,   \
	        SM_C_ALL, SM_F_QUANT | SM_F_VIS, 2, SM_D_VE, SM_D_VE),                             \
	    SM_RULE(VT "encoder.layers.{i}.self_attn." x "_proj.bias",                             \
	            VT "encoder.layers.{i}.self_attn.qkv_proj.bias", SM_K_ROWS, part, SM_U_VHEADS, \
	            SM_C_ALL, SM_F_VIS, 1, SM_D_VE, SM_D_ANY)
#define SM_RULES_SIGLIP_TOWER(VT)                                                                  \
	SM_VIT_PATCH(VT),                                                                          \
	    SM_SIGLIP_REPL(VT "embeddings.patch_embedding.bias", 1, SM_D_VE, SM_D_ANY),            \
	    SM_SIGLIP_REPL(VT "embeddings.position_embedding.weight", 2, SM_D_VNP, SM_D_VE),       \
	    SM_RULES_VIT_ENCODER(VT)

/* A SigLIP tower's attention-pooling head under P (SiglipMultiheadAttentionPoolingHead, built
 * when vision_config.vision_use_head is not false; cond says when the checkpoint must hold it):
 * probe [1, 1, VE], the torch.nn.MultiheadAttention's in_proj_weight [3 VE, VE] / in_proj_bias
 * and out_proj (a plain torch module: whole, never quantized), layernorm replicated, its
 * SiglipMLP fc1 by rows, fc2 by columns (quant_config reaches it), fc2's bias replicated. */
#define SM_SIGLIP_HEAD_REPL(n, cond, nd, d0, d1)                                                   \
	SM_RULE(n, n, SM_K_REPL, 0, SM_U_NONE, cond, 0, nd, d0, d1)
#define SM_RULES_SIGLIP_POOL_HEAD(P, cond)                                                         \
	SM_RULE3(P "probe", P "probe", SM_K_REPL, 0, SM_U_NONE, cond, 0, SM_D_ONE, SM_D_ONE,       \
	         SM_D_VE),                                                                         \
	    SM_SIGLIP_HEAD_REPL(P "attention.in_proj_weight", cond, 2, SM_D_V3E, SM_D_VE),         \
	    SM_SIGLIP_HEAD_REPL(P "attention.in_proj_bias", cond, 1, SM_D_V3E, SM_D_ANY),          \
	    SM_SIGLIP_HEAD_REPL(P "attention.out_proj.weight", cond, 2, SM_D_VE, SM_D_VE),         \
	    SM_SIGLIP_HEAD_REPL(P "attention.out_proj.bias", cond, 1, SM_D_VE, SM_D_ANY),          \
	    SM_SIGLIP_HEAD_REPL(P "layernorm.weight", cond, 1, SM_D_VE, SM_D_ANY),                 \
	    SM_SIGLIP_HEAD_REPL(P "layernorm.bias", cond, 1, SM_D_VE, SM_D_ANY),                   \
	    SM_RULE(P "mlp.fc1.weight", P "mlp.fc1.weight", SM_K_ROWS, 0, SM_U_VI, cond,           \
	            SM_F_QUANT, 2, SM_D_VI, SM_D_VE),                                              \
	    SM_RULE(P "mlp.fc1.bias", P "mlp.fc1.bias", SM_K_ROWS, 0, SM_U_VI, cond, 0, 1,         \
	            SM_D_VI, SM_D_ANY),                                                            \
	    SM_RULE(P "mlp.fc2.weight", P "mlp.fc2.weight", SM_K_COLS, 0, SM_U_VI, cond,           \
	            SM_F_QUANT, 2, SM_D_VE, SM_D_VI),                                              \
	    SM_SIGLIP_HEAD_REPL(P "mlp.fc2.bias", cond, 1, SM_D_VE, SM_D_ANY)

/* A CLIP vision tower under prefix VT (LLaVA's "vision_tower.vision_model.", CLIPModel's
 * "vision_model."), as vLLM's clip.py CLIPVisionTransformer builds it: the class embedding,
 * the patch Conv2d (no bias), the position table ((image_size / patch_size)^2 + 1 rows: the
 * class token's), pre_layrnorm (sic) and every LayerNorm replicated; SigLIP's blocks (q/k/v
 * with biases fused by heads, out_proj by columns, fc1 by rows, fc2 by columns, the row
 * parallel biases replicated); post_layernorm. */
#define SM_RULES_CLIP_TOWER(VT)                                                                    \
	SM_SIGLIP_REPL(VT "embeddings.class_embedding", 1, SM_D_VE, SM_D_ANY), SM_VIT_PATCH(VT),   \
	    SM_SIGLIP_REPL(VT "embeddings.position_embedding.weight", 2, SM_D_VNP, SM_D_VE),       \
	    SM_SIGLIP_REPL(VT "pre_layrnorm.weight", 1, SM_D_VE, SM_D_ANY),                        \
	    SM_SIGLIP_REPL(VT "pre_layrnorm.bias", 1, SM_D_VE, SM_D_ANY), SM_RULES_VIT_ENCODER(VT)

/* A Pixtral vision tower under prefix VT ("vision_tower." for Mistral 3 and LLaVA's
 * Pixtral-HF conversions), as vLLM's pixtral.py PixtralHFVisionModel builds it: patch_conv
 * (no bias) and ln_pre replicated; per block (transformer.layers.{i}.) the RMSNorms
 * attention_norm / ffn_norm replicated, q/k/v without biases fused by vision heads into
 * attention.qkv_proj (QKVParallelLinear, KV = H), o_proj by columns, the gated MLP's gate /
 * up merged by rows into feed_forward.gate_up_proj (MergedColumnParallelLinear), down_proj
 * by columns; no position table (2-D RoPE without weights), no post-norm. */
#define SM_PIX_VB_NORM(VT, n)                                                                      \
	SM_RULE(VT "transformer.layers.{i}." n ".weight",                                          \
	        VT "transformer.layers.{i}." n ".weight", SM_K_REPL, 0, SM_U_NONE, SM_C_ALL,       \
	        SM_F_VIS, 1, SM_D_VE, SM_D_ANY)
#define SM_PIX_QKV(VT, x, part)                                                                    \
	SM_RULE(VT "transformer.layers.{i}.attention." x "_proj.weight",                           \
	        VT "transformer.layers.{i}.attention.qkv_proj.weight", SM_K_ROWS, part,            \
	        SM_U_VHEADS, SM_C_ALL, SM_F_QUANT | SM_F_VIS, 2, SM_D_VE, SM_D_VE)
#define SM_PIX_GU(VT, x, part)                                                                     \
	SM_RULE(VT "transformer.layers.{i}.feed_forward." x "_proj.weight",                        \
	        VT "transformer.layers.{i}.feed_forward.gate_up_proj.weight", SM_K_ROWS, part,     \
	        SM_U_VI, SM_C_ALL, SM_F_QUANT | SM_F_VIS, 2, SM_D_VI, SM_D_VE)
#define SM_RULES_PIXTRAL_TOWER(VT)                                                                 \
	{VT "patch_conv.weight",                                                                   \
	 VT "patch_conv.weight",                                                                   \
	 SM_K_REPL,                                                                                \
	 0,                                                                                        \
	 SM_U_NONE,                                                                                \
	 SM_C_ALL,                                                                                 \
	 0,                                                                                        \
	 4,                                                                                        \
	 {SM_D_VE, SM_D_VCH, SM_D_VP, SM_D_VP}},                                                   \
	    SM_RULE(VT "ln_pre.weight", VT "ln_pre.weight", SM_K_REPL, 0, SM_U_NONE, SM_C_ALL, 0,  \
	            1, SM_D_VE, SM_D_ANY),                                                         \
	    SM_PIX_VB_NORM(VT, "attention_norm"), SM_PIX_VB_NORM(VT, "ffn_norm"),                  \
	    SM_PIX_QKV(VT, "q", 0), SM_PIX_QKV(VT, "k", 1), SM_PIX_QKV(VT, "v", 2),                \
	    SM_RULE(VT "transformer.layers.{i}.attention.o_proj.weight",                           \
	            VT "transformer.layers.{i}.attention.o_proj.weight", SM_K_COLS, 0,             \
	            SM_U_VHEADS, SM_C_ALL, SM_F_QUANT | SM_F_VIS, 2, SM_D_VE, SM_D_VE),            \
	    SM_PIX_GU(VT, "gate", 0), SM_PIX_GU(VT, "up", 1),                                      \
	    SM_RULE(VT "transformer.layers.{i}.feed_forward.down_proj.weight",                     \
	            VT "transformer.layers.{i}.feed_forward.down_proj.weight", SM_K_COLS, 0,       \
	            SM_U_VI, SM_C_ALL, SM_F_QUANT | SM_F_VIS, 2, SM_D_VE, SM_D_VI)

/* A vision tower class: the need-message's label ("SigLIP: ", "CLIP: ", "") and its
 * vision_config class defaults for absent keys (SM_SIGLIP_*, SM_CLIP_*, SM_I3V_*, SM_PIX_*);
 * the planner's dims read them too (plan_dims.c vit_class_dims). */
typedef struct sm_vis_class {
	const char *label;
	int64_t hidden, heads, layers, image, patch, inter;
} sm_vis_class;
extern const sm_vis_class shardmap_vis_siglip;  /* SiglipVisionConfig */
extern const sm_vis_class shardmap_vis_clip;    /* CLIPVisionConfig */
extern const sm_vis_class shardmap_vis_i3v;     /* Idefics3VisionConfig / SmolVLM's */
extern const sm_vis_class shardmap_vis_pixtral; /* PixtralVisionConfig */

/* The tower's geometry: vision_config's values, the class's defaults for absent keys. */
typedef struct sm_vis_geom {
	int64_t ve, vh, vd, img, patch;
} sm_vis_geom;

/* family_vision.c. vLLM's siglip.py SiglipMLP: quant_config reaches fc1 / fc2 only when
 * hidden_size and intermediate_size are both multiples of 64 (shardmap_siglip_mlp_odd: not,
 * so built unquantized). shardmap_siglip_mlp_float: canonical name cn is a SigLIP tower's
 * `mlp.fc1.weight` / `mlp.fc2.weight` under prefix vt (its blocks' and pooling head's) and
 * the tower's vision_config sizes (SiglipVisionConfig's defaults for absent keys) are not
 * both multiples of 64. shardmap_siglip_tower_float: that under `vision_tower.vision_model.`
 * (the keep_float hook of the families whose tower is vLLM's SiglipVisionModel). */
bool shardmap_siglip_mlp_odd(int64_t hidden, int64_t inter);
bool shardmap_siglip_mlp_float(const ckpt_config *c, const char *vt, const char *cn);
bool shardmap_siglip_tower_float(const ckpt_config *c, const char *cn);
/* family_vision.c. shardmap_vision_need: WT_ECORRUPT "<arch> needs vision_config (...)"
 * when c has none. shardmap_vision_geom: fills *g; refuses heads not dividing the width
 * and image_size below patch_size (shardmap_vision_heads_err / _patch_err). */
int shardmap_vision_need(const ckpt_config *c, const sm_vis_class *k, wt_errbuf *err);
int shardmap_vision_geom(const ckpt_config *c, const sm_vis_class *k, sm_vis_geom *g,
                         wt_errbuf *err);
/* family_vision.c. A SigLIP tower with the mlp_AR projector (Keye-VL, PaddleOCR-VL): a
 * vision_config with its six sizes given (`whose`: why no class default is assumed, e.g. "the
 * remote KeyeVisionConfig's default is not assumed here"), spatial_merge_size 2 (`proj`: the
 * projector's model, whose mlp_AR merges 2 x 2 whatever the config says), the heads dividing
 * the width and a patch grid (shardmap_vision_geom). */
int shardmap_vision_mlp_ar_check(const ckpt_config *c, const char *whose, const char *proj,
                                 wt_errbuf *err);
/* A composite config's language model: a text_config object (its sizes are read from it,
 * not from the top level: WT_ECORRUPT, `missing` or NULL saying more) of model type `type`
 * (WT_EUNSUPPORTED otherwise, `why` naming what vLLM builds). family_vision.c. */
int shardmap_text_config_is(const ckpt_config *c, const char *type, const char *missing,
                            const char *why, wt_errbuf *err);
/* family_vision.c. A SigLIP tower (vision_config.model_type siglip_vision_model, `whose` the
 * checkpoints that carry it: WT_EUNSUPPORTED otherwise) beside a text_config of model type
 * `type` (shardmap_text_config_is, `why`); its geometry into *g (shardmap_vision_geom). */
int shardmap_siglip_text_check(const ckpt_config *c, const char *whose, const char *type,
                               const char *why, sm_vis_geom *g, wt_errbuf *err);
/* The blocks vLLM builds for vision_feature_layer (_get_num_hidden_layers: a negative
 * index counts from the end, VD + index + 1). */
int64_t shardmap_vision_kept(const ckpt_config *c, int64_t vd);
/* One vision_feature_layer within the tower: a list refused naming `who` (the module that
 * takes one layer's features) and `wide` (its input width), an index outside [-VD-1, VD]
 * refused; `eg` the index the messages suggest. */
int shardmap_vision_feature(const ckpt_config *c, const sm_vis_geom *g, const char *who,
                            const char *wide, const char *eg, wt_errbuf *err);
/* Whether canonical name cn under tower prefix vt is dropped: a block past the feature
 * layer (a block past num_hidden_layers is left to the rules: refused), and post_layernorm
 * always (post_always: require_post_norm=False) or when a block is dropped (None). */
bool shardmap_vision_drop(const ckpt_config *c, const char *vt, int64_t vd, bool post_always,
                          const char *cn);
/* The same with the blocks kept given (a model whose own key says how many: HyperCLOVAX's
 * use_nth_layer): block b in [kept, vd) dropped, post_layernorm when post_always or kept < vd. */
bool shardmap_tower_drop(const char *vt, int64_t kept, int64_t vd, bool post_always,
                         const char *cn);
/* Whether canonical name cn is a Pixtral tower block (vision_tower.transformer.layers.*)
 * past the feature layer: PixtralHFVisionModel is built only up to it (LLaVA's
 * init_vision_tower_for_llava, Mistral 3's init_vision_tower_for_mistral3) and its
 * load_weights skips the rest. */
bool shardmap_pixtral_drop(const ckpt_config *c, const char *cn);
/* The pixel shuffle's factor (config key `key`, kept in v_spatial_merge_size) dividing
 * the patch grid's side; `who` the module shuffling, `tail` appended to the advice. */
int shardmap_vision_shuffle(const ckpt_config *c, const sm_vis_geom *g, const char *key,
                            const char *who, const char *tail, wt_errbuf *err);

/* A BERT encoder layer (BertModel, RobertaModel, XLMRobertaModel; vLLM's BertLayer): query /
 * key / value fused into attention.self.qkv_proj by heads (KV = H), attention.output.dense and
 * output.dense row-parallel with their biases whole, intermediate.dense column-parallel with its
 * bias split, the LayerNorms replicated; the four Linears quantized. */
#define SM_BL_AT(P) P "encoder.layer.{i}."
#define SM_BERT_QKV(P, x, part)                                                                    \
	SM_RULE(SM_BL_AT(P) "attention.self." x ".weight",                                         \
	        SM_BL_AT(P) "attention.self.qkv_proj.weight", SM_K_QKV, part, SM_U_HEADS,          \
	        SM_C_ALL, SM_F_QUANT, 2, SM_D_Q, SM_D_HID),                                        \
	    SM_RULE(SM_BL_AT(P) "attention.self." x ".bias",                                       \
	            SM_BL_AT(P) "attention.self.qkv_proj.bias", SM_K_QKV, part, SM_U_HEADS,        \
	            SM_C_ALL, 0, 1, SM_D_Q, SM_D_ANY)
#define SM_BERT_REPL(n, nd, d0, d1) SM_RULE(n, n, SM_K_REPL, 0, SM_U_NONE, SM_C_ALL, 0, nd, d0, d1)
#define SM_BERT_LN(n)                                                                              \
	SM_BERT_REPL(n ".weight", 1, SM_D_HID, SM_D_ANY),                                          \
	    SM_BERT_REPL(n ".bias", 1, SM_D_HID, SM_D_ANY)

/* The layer under module prefix P ("" for BertModel / RobertaModel; "roberta." for the
 * sequence classifiers, whose runtime names keep it as vLLM's module path does). */
#define SM_RULES_BERT_LAYER_AT(P)                                                                  \
	SM_BERT_QKV(P, "query", 0), SM_BERT_QKV(P, "key", 1), SM_BERT_QKV(P, "value", 2),          \
	    SM_RULE(SM_BL_AT(P) "attention.output.dense.weight",                                   \
	            SM_BL_AT(P) "attention.output.dense.weight", SM_K_COLS, 0, SM_U_HEADS,         \
	            SM_C_ALL, SM_F_QUANT, 2, SM_D_HID, SM_D_Q),                                    \
	    SM_BERT_REPL(SM_BL_AT(P) "attention.output.dense.bias", 1, SM_D_HID, SM_D_ANY),        \
	    SM_BERT_LN(SM_BL_AT(P) "attention.output.LayerNorm"),                                  \
	    SM_RULE(SM_BL_AT(P) "intermediate.dense.weight",                                       \
	            SM_BL_AT(P) "intermediate.dense.weight", SM_K_ROWS, 0, SM_U_I, SM_C_ALL,       \
	            SM_F_QUANT, 2, SM_D_I, SM_D_HID),                                              \
	    SM_RULE(SM_BL_AT(P) "intermediate.dense.bias", SM_BL_AT(P) "intermediate.dense.bias",  \
	            SM_K_ROWS, 0, SM_U_I, SM_C_ALL, 0, 1, SM_D_I, SM_D_ANY),                       \
	    SM_RULE(SM_BL_AT(P) "output.dense.weight", SM_BL_AT(P) "output.dense.weight",          \
	            SM_K_COLS, 0, SM_U_I, SM_C_ALL, SM_F_QUANT, 2, SM_D_HID, SM_D_I),              \
	    SM_BERT_REPL(SM_BL_AT(P) "output.dense.bias", 1, SM_D_HID, SM_D_ANY),                  \
	    SM_BERT_LN(SM_BL_AT(P) "output.LayerNorm")
#define SM_RULES_BERT_LAYER SM_RULES_BERT_LAYER_AT("")

/* A Whisper-style layer's own attention and MLP under block prefix B ("...layers.{i}."), as
 * vLLM's whisper.py loads them (the Whisper encoder of Voxtral and Whisper, Whisper's decoder):
 * q/k/v_proj [E, E] fused into self_attn.qkv_proj by heads (QKVParallelLinear with as many kv
 * heads as heads), its bias [q_r; zeros; v_r] (k_proj has none: vLLM loads zeros for it);
 * out_proj by columns, its bias replicated; fc1 by rows with its bias, fc2 by columns, its bias
 * replicated; those six weights quantized; the two LayerNorms replicated. F: the rule flags of
 * the block (SM_F_VIS for an encoder counted by the vision dims), UH / UI the head and MLP
 * units, E / I the width and the MLP's dims. */
#define SM_WH_R(B, n, F, nd, d0, d1)                                                               \
	SM_RULE(B n, B n, SM_K_REPL, 0, SM_U_NONE, SM_C_ALL, F, nd, d0, d1)
#define SM_WH_S(B, n, rt, kind, part, unit, F, nd, d0, d1)                                         \
	SM_RULE(B n, B rt, kind, part, unit, SM_C_ALL, F, nd, d0, d1)
#define SM_WH_QKV "self_attn.qkv_proj."
#define SM_RULES_WHISPER_LAYER(B, F, UH, UI, E, I)                                                 \
	SM_WH_S(B, "self_attn.q_proj.weight", SM_WH_QKV "weight", SM_K_ROWS, 0, UH,                \
	        (F) | SM_F_QUANT, 2, E, E),                                                        \
	    SM_WH_S(B, "self_attn.k_proj.weight", SM_WH_QKV "weight", SM_K_ROWS, 1, UH,            \
	            (F) | SM_F_QUANT, 2, E, E),                                                    \
	    SM_WH_S(B, "self_attn.v_proj.weight", SM_WH_QKV "weight", SM_K_ROWS, 2, UH,            \
	            (F) | SM_F_QUANT, 2, E, E),                                                    \
	    SM_WH_S(B, "self_attn.q_proj.bias", SM_WH_QKV "bias", SM_K_QKVZ, 0, UH, F, 1, E,       \
	            SM_D_ANY),                                                                     \
	    SM_WH_S(B, "self_attn.v_proj.bias", SM_WH_QKV "bias", SM_K_QKVZ, 1, UH, F, 1, E,       \
	            SM_D_ANY),                                                                     \
	    SM_WH_S(B, "self_attn.out_proj.weight", "self_attn.out_proj.weight", SM_K_COLS, 0, UH, \
	            (F) | SM_F_QUANT, 2, E, E),                                                    \
	    SM_WH_R(B, "self_attn.out_proj.bias", F, 1, E, SM_D_ANY),                              \
	    SM_WH_R(B, "self_attn_layer_norm.weight", F, 1, E, SM_D_ANY),                          \
	    SM_WH_R(B, "self_attn_layer_norm.bias", F, 1, E, SM_D_ANY),                            \
	    SM_WH_S(B, "fc1.weight", "fc1.weight", SM_K_ROWS, 0, UI, (F) | SM_F_QUANT, 2, I, E),   \
	    SM_WH_S(B, "fc1.bias", "fc1.bias", SM_K_ROWS, 0, UI, F, 1, I, SM_D_ANY),               \
	    SM_WH_S(B, "fc2.weight", "fc2.weight", SM_K_COLS, 0, UI, (F) | SM_F_QUANT, 2, E, I),   \
	    SM_WH_R(B, "fc2.bias", F, 1, E, SM_D_ANY),                                             \
	    SM_WH_R(B, "final_layer_norm.weight", F, 1, E, SM_D_ANY),                              \
	    SM_WH_R(B, "final_layer_norm.bias", F, 1, E, SM_D_ANY)

/* The Whisper encoder under prefix T ("audio_tower.", "model.encoder."): conv1 [E, mel, 3] and
 * conv2 [E, E, 3] (nn.Conv1d; the kernel is the class's constant, not checked) with their
 * biases, embed_positions [max_source_positions, E] (nn.Embedding) and the final layer_norm
 * whole on every rank, never quantized; its layers SM_RULES_WHISPER_LAYER over the vision dims
 * (the loader's audio_config / encoder sizes). */
#define SM_WH_CONV(T, n, d1)                                                                       \
	{                                                                                          \
		T n, T n, SM_K_REPL, 0, SM_U_NONE, SM_C_ALL, 0, 3,                                 \
		{                                                                                  \
			SM_D_VE, d1, SM_D_ANY                                                      \
		}                                                                                  \
	}
#define SM_RULES_WHISPER_ENCODER(T)                                                                \
	SM_WH_CONV(T, "conv1.weight", SM_D_VCH),                                                   \
	    SM_WH_R(T, "conv1.bias", 0, 1, SM_D_VE, SM_D_ANY),                                     \
	    SM_WH_CONV(T, "conv2.weight", SM_D_VE),                                                \
	    SM_WH_R(T, "conv2.bias", 0, 1, SM_D_VE, SM_D_ANY),                                     \
	    SM_WH_R(T, "embed_positions.weight", 0, 2, SM_D_VNP, SM_D_VE),                         \
	    SM_RULES_WHISPER_LAYER(T "layers.{i}.", SM_F_VIS, SM_U_VHEADS, SM_U_VI, SM_D_VE,       \
	                           SM_D_VI),                                                       \
	    SM_WH_R(T, "layer_norm.weight", 0, 1, SM_D_VE, SM_D_ANY),                              \
	    SM_WH_R(T, "layer_norm.bias", 0, 1, SM_D_VE, SM_D_ANY)

#endif
