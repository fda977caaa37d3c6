/*
 * test_shardmap_biased.h — a Llama-named test model with optional attention biases, built
 * with test_shardmap_util.h's tm_layers: the planner tests of the families whose biases follow
 * config switches (InternLM, InternLM3).
 */
#ifndef WT_TEST_SHARDMAP_BIASED_H
#define WT_TEST_SHARDMAP_BIASED_H

#include "test_shardmap_util.h"

/* Bias options of tm_llama_biased. */
enum { TM_B_QKV = 1, TM_B_O = 2 };

/* Two Llama layers under Llama's names, hid wide: q_proj [qd, hid], k_proj / v_proj [kvd, hid],
 * o_proj [hid, qd], a SwiGLU MLP I wide; the q/k/v biases with TM_B_QKV in bias, o_proj's with
 * TM_B_O; embed_tokens [1000, hid], the final norm, lm_head.weight when head. */
static __attribute__((unused)) tm_model *tm_llama_biased(uint64_t seed, int64_t hid, int64_t qd,
                                                         int64_t kvd, int64_t I, int head, int bias)
{
	tm_model *m = tm_new(seed, WT_BF16);
	tm_top(m, 1000, hid, head);
	const tm_leaf L[] = {{"input_layernorm.weight", hid, 0, 0},
	                     {"post_attention_layernorm.weight", hid, 0, 0},
	                     {"self_attn.q_proj.weight", qd, hid, 0},
	                     {"self_attn.k_proj.weight", kvd, hid, 0},
	                     {"self_attn.v_proj.weight", kvd, hid, 0},
	                     {"self_attn.q_proj.bias", qd, 0, TM_B_QKV},
	                     {"self_attn.k_proj.bias", kvd, 0, TM_B_QKV},
	                     {"self_attn.v_proj.bias", kvd, 0, TM_B_QKV},
	                     {"self_attn.o_proj.weight", hid, qd, 0},
	                     {"self_attn.o_proj.bias", hid, 0, TM_B_O},
	                     {"mlp.gate_proj.weight", I, hid, 0},
	                     {"mlp.up_proj.weight", I, hid, 0},
	                     {"mlp.down_proj.weight", hid, I, 0}};
	tm_layers(m, TM_L, 2, L, TM_NLEAVES(L), bias);
	return m;
}

#endif
