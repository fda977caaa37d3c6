/*
 * family_qwen2_audio.h — the rows of transformers' Qwen2AudioEncoder under `audio_tower.`
 * (family_qwen2_audio.c), shared by the families whose vLLM model builds that class itself
 * (no tensor parallelism, no quant config): Qwen2-Audio and Audio Flamingo 3
 * (family_audioflamingo3.c, whose AudioFlamingo3Encoder subclasses it and adds only a
 * weightless avg_pooler).
 *
 * conv1 [AE, mel, 3] and conv2 [AE, AE, 3] with their biases, embed_positions
 * [max_source_positions, AE], per layer self_attn.{q,k,v,out}_proj [AE, AE] (k_proj without a
 * bias), self_attn_layer_norm, fc1 [AI, AE], fc2 [AE, AI] with their biases,
 * final_layer_norm, then layer_norm: every one whole on every rank, never quantized. AE, AI,
 * the block count and mel are the vision dims SM_D_VE, SM_D_VI, vis_depth, SM_D_VCH
 * (SM_D_VNP the positions), set from the loader's a_* fields (the family's .audio).
 */
#ifndef WT_SHARDMAP_FAMILY_QWEN2_AUDIO_H
#define WT_SHARDMAP_FAMILY_QWEN2_AUDIO_H

#include "shardmap/family_rules.h"

#define QA_T "audio_tower."
#define QA_B QA_T "layers.{i}."

#define QA_R(n, nd, d0, d1) SM_RULE(n, n, SM_K_REPL, 0, SM_U_NONE, SM_C_ALL, 0, nd, d0, d1)
#define QA_BR(n, nd, d0, d1)                                                                       \
	SM_RULE(QA_B n, QA_B n, SM_K_REPL, 0, SM_U_NONE, SM_C_ALL, SM_F_VIS, nd, d0, d1)
/* a Conv1d weight [out, in, kernel 3] (the kernel is the class's constant, not checked) */
#define QA_CONV(n, d1)                                                                             \
	{                                                                                          \
		QA_T n, QA_T n, SM_K_REPL, 0, SM_U_NONE, SM_C_ALL, 0, 3,                           \
		{                                                                                  \
			SM_D_VE, d1, SM_D_ANY                                                      \
		}                                                                                  \
	}

/* Qwen2AudioEncoder's tensors under audio_tower., replicated, never quantized. */
#define SM_RULES_QWEN2_AUDIO_TOWER                                                                 \
	QA_CONV("conv1.weight", SM_D_VCH), QA_R(QA_T "conv1.bias", 1, SM_D_VE, SM_D_ANY),          \
	    QA_CONV("conv2.weight", SM_D_VE), QA_R(QA_T "conv2.bias", 1, SM_D_VE, SM_D_ANY),       \
	    QA_R(QA_T "embed_positions.weight", 2, SM_D_VNP, SM_D_VE),                             \
	    QA_BR("self_attn.q_proj.weight", 2, SM_D_VE, SM_D_VE),                                 \
	    QA_BR("self_attn.q_proj.bias", 1, SM_D_VE, SM_D_ANY),                                  \
	    QA_BR("self_attn.k_proj.weight", 2, SM_D_VE, SM_D_VE),                                 \
	    QA_BR("self_attn.v_proj.weight", 2, SM_D_VE, SM_D_VE),                                 \
	    QA_BR("self_attn.v_proj.bias", 1, SM_D_VE, SM_D_ANY),                                  \
	    QA_BR("self_attn.out_proj.weight", 2, SM_D_VE, SM_D_VE),                               \
	    QA_BR("self_attn.out_proj.bias", 1, SM_D_VE, SM_D_ANY),                                \
	    QA_BR("self_attn_layer_norm.weight", 1, SM_D_VE, SM_D_ANY),                            \
	    QA_BR("self_attn_layer_norm.bias", 1, SM_D_VE, SM_D_ANY),                              \
	    QA_BR("fc1.weight", 2, SM_D_VI, SM_D_VE), QA_BR("fc1.bias", 1, SM_D_VI, SM_D_ANY),     \
	    QA_BR("fc2.weight", 2, SM_D_VE, SM_D_VI), QA_BR("fc2.bias", 1, SM_D_VE, SM_D_ANY),     \
	    QA_BR("final_layer_norm.weight", 1, SM_D_VE, SM_D_ANY),                                \
	    QA_BR("final_layer_norm.bias", 1, SM_D_VE, SM_D_ANY),                                  \
	    QA_R(QA_T "layer_norm.weight", 1, SM_D_VE, SM_D_ANY),                                  \
	    QA_R(QA_T "layer_norm.bias", 1, SM_D_VE, SM_D_ANY)

#endif
