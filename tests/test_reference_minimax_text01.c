/*
 * test_reference_minimax_text01.c — the reference forward pass over MiniMax-Text-01 / -M1
 * under their remote-code names (MiniMaxText01ForCausalLM, model_type minimax_text_01;
 * reference/cfg_minimax.c, minimax.c, the keys laid by loader/config_minimax01.c): the
 * minimax family's lightning and softmax attention, Mixtral's MoE, the residuals
 * x = alpha * norm(x) + beta * branch (postnorm true), and RoPE on the first rotary_dim dims
 * of a head (vLLM's MiniMaxText01RotaryEmbedding). Full and sharded logits agree within
 * REF_TOL_F32 (TP 1, 2, 4, 8, EP 2, TP 2 x EP 2) or the quantized layouts' budgets; the full
 * path's logits equal transformers 4.57.1's MiniMaxForCausalLM (eager, float32, the config
 * renamed, its rotary applied to rotary_dim dims) at 28 points; rank tensors broken the way a
 * wrong planner would break them are caught; the remote keys and refusals. Fixture from
 * $WT_BUILD/wt-mkckpt --family minimax_text01 (hid 256, H 8, KV 4, d 32, rotary_dim 16, 4
 * experts of 128 top-2, V 1000, attn_type_list [0, 0, 1, 0]; seed printed).
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "reference/reference.h"
#include "reference/reference_int.h"
#include "reference/ckpt.h"
#include "tests/util/testutil.h"
#include "tests/test_reference_util.h"

#define FAM  "minimax_text01"
#define V_MM 1000
#define A0   "model.layers.0.self_attn."
#define A2   "model.layers.2.self_attn."

static int setup(void **state)
{
	(void)state;
	static const char *fams[] = {FAM};
	return gen_fixtures("reference_minimax_text01", fams, 1);
}

static void test_t01_pass(void **state)
{
	(void)state;
	expect_pass(FAM, 1, 1, WT_QUANT_NONE, 0);
	expect_pass(FAM, 2, 1, WT_QUANT_NONE, 0);
	expect_pass(FAM, 4, 1, WT_QUANT_NONE, 0);
	expect_pass(FAM, 8, 1, WT_QUANT_NONE, 0); /* KV 4 < TP 8 */
	expect_pass(FAM, 1, 2, WT_QUANT_NONE, 0);
	expect_pass(FAM, 2, 2, WT_QUANT_NONE, 1);
	expect_pass(FAM, 2, 1, WT_QUANT_INT8_CHANNEL, 0);
	expect_pass(FAM, 4, 1, WT_QUANT_FP8_CHANNEL, 0);
}

/* (row, column, transformers 4.57.1 logit), tokens g_tokens */
static const gold_pt gold_t01[] = {
    {0, 623, 2.64676094e-01f},  {0, 683, -4.71757278e-02f}, {0, 897, 1.84782207e-01f},
    {0, 942, -4.97008324e-01f}, {1, 55, -1.83971792e-01f},  {1, 224, 4.96196330e-01f},
    {1, 285, 6.69836760e-01f},  {1, 299, -8.62398505e-01f}, {2, 131, 6.64674193e-02f},
    {2, 498, -1.58135384e-01f}, {2, 797, -2.68481337e-02f}, {2, 819, 1.26201048e-01f},
    {3, 278, 5.33380866e-01f},  {3, 302, -5.68859726e-02f}, {3, 340, -2.50603855e-01f},
    {3, 719, -2.77166247e-01f}, {4, 476, -4.67538014e-02f}, {4, 503, -1.50486469e-01f},
    {4, 553, 1.09608606e-01f},  {4, 581, 1.62969649e-01f},  {5, 341, 5.93006611e-03f},
    {5, 621, -1.27983660e-01f}, {5, 698, 1.85078233e-01f},  {5, 790, -2.24819168e-01f},
    {6, 159, -1.67096406e-01f}, {6, 612, -1.85642987e-02f}, {6, 842, -3.13500106e-01f},
    {6, 856, -4.07711476e-01f},
};

/* The full path's logits at the golden points, within 1e-5 (over all 7000 logits 1.07e-6 of
 * max |logit| 1.32). */
#define GOLD_TOL 1e-5

static void test_t01_transformers(void **state)
{
	(void)state;
	expect_gold(FAM, V_MM, GOLD_TOL, gold_t01, sizeof(gold_t01) / sizeof(gold_t01[0]));
}

static void test_t01_caught(void **state)
{
	(void)state;
	expect_swapped(FAM, 2, 1, A0 "qkv_proj.weight", "lightning qkv_proj heads exchanged");
	expect_swapped(FAM, 2, 1, A0 "out_proj.weight", "out_proj columns exchanged");
	expect_zeroed(FAM, 4, 1, 3, A0 "norm.weight", "rank 3's lightning norm dropped");
	expect_swapped(FAM, 2, 1, A2 "qkv_proj.weight", "softmax qkv_proj heads exchanged");
	expect_stacks_swapped(FAM, 1, 2, "model.layers.1.block_sparse_moe.experts.",
	                      "EP ranks' experts exchanged");
}

/* The loaded configuration: attn_type_list's kinds, the layernorm_* alphas, rotary_dim; the
 * logits see the partial RoPE. */
static void test_t01_switches(void **state)
{
	(void)state;
	model m = {0};
	ref_set ck = {0};
	ref_cfg c;
	wt_errbuf err = {0};
	open_model(&m, FAM);
	assert_int_equal(ref_load_ckpt(m.c, &c, &ck, &err), WT_OK);
	assert_true(c.minimax && c.kind == REF_MIXTRAL && !c.tied && c.d == 32 && c.rot_dim == 16 &&
	            c.resid_mult == 0.0 && c.theta == 1e7);
	for (int64_t l = 0; l < 4; l++)
		assert_int_equal(ref_mm_lin(&c, l), l != 2);
	for (int k = 0; k < 3; k++)
		assert_float_equal(c.mm_alpha[k], 3.5565588, 1e-6);
	size_t n = N_TOK * V_MM;
	float *base = malloc(n * sizeof(float)), *lg = malloc(n * sizeof(float));
	assert_true(base && lg);
	logits_with(&c, &ck, base);
	ref_cfg off = c;
	off.rot_dim = 0; /* RoPE over the whole head */
	logits_with(&off, &ck, lg);
	expect_moved(base, lg, n, 1e-4, "rotary_dim ignored");
	free(base);
	free(lg);
	ref_set_clear(&ck);
	close_model(&m);
}

#define T01_RAW(extra)                                                                             \
	"{\"architectures\": [\"MiniMaxText01ForCausalLM\"], \"model_type\": "                     \
	"\"minimax_text_01\", "                                                                    \
	"\"hidden_size\": 64, \"num_attention_heads\": 4, \"num_key_value_heads\": 2, "            \
	"\"intermediate_size\": 32, \"num_local_experts\": 4, \"num_hidden_layers\": 4, "          \
	"\"vocab_size\": 100, \"attn_type_list\": [0, 1, 0, 1]" extra "}"
#define T01(extra) T01_RAW(", \"postnorm\": true" extra)

static void test_t01_config(void **state)
{
	(void)state;
	ref_cfg c;
	wt_errbuf err = {0};
	/* defaults: factors 1, RoPE over the head, theta 1e6; attn_type_list's kinds */
	static const char plain[] = T01("");
	assert_int_equal(ref_cfg_parse_json(plain, strlen(plain), &c, &err), WT_OK);
	assert_true(c.minimax && !c.tied && c.resid_mult == 0.0 && c.d == 16 && c.rot_dim == 16);
	for (int64_t l = 0; l < 4; l++)
		assert_int_equal(ref_mm_lin(&c, l), l % 2 == 0);
	for (int k = 0; k < 3; k++)
		assert_float_equal(c.mm_alpha[k], 1.0, 0.0);
	assert_float_equal(c.theta, 1000000.0, 1e-6);
	/* the remote names of the factors (transformers' names replaced), int(rope_theta) */
	static const char named[] =
	    T01(", \"layernorm_full_attention_alpha\": 2.0, \"layernorm_linear_attention_alpha\": "
	        "3.0, \"layernorm_mlp_alpha\": 4.0, \"layernorm_full_attention_beta\": 0.5, "
	        "\"layernorm_linear_attention_beta\": 0.5, \"layernorm_mlp_beta\": 0.5, "
	        "\"full_attn_alpha_factor\": 9.0, \"rotary_dim\": 8, \"rope_theta\": 10000.7");
	assert_int_equal(ref_cfg_parse_json(named, strlen(named), &c, &err), WT_OK);
	assert_true(c.mm_alpha[0] == 2.0 && c.mm_alpha[1] == 3.0 && c.mm_alpha[2] == 4.0 &&
	            c.resid_mult == 0.5 && c.rot_dim == 8 && c.theta == 10000.0);
	expect_cfg(T01_RAW(""), WT_EUNSUPPORTED, "postnorm is absent or false");
	expect_cfg(T01_RAW(", \"postnorm\": false"), WT_EUNSUPPORTED, "postnorm");
	expect_cfg(T01(", \"layernorm_mlp_beta\": 2.0"), WT_EUNSUPPORTED, "mlp_beta_factor 2");
	expect_cfg(T01(", \"rotary_dim\": 6, \"head_dim\": 4"), WT_EUNSUPPORTED,
	           "rotary_dim 6 of head_dim 4");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_t01_pass),   cmocka_unit_test(test_t01_transformers),
	    cmocka_unit_test(test_t01_caught), cmocka_unit_test(test_t01_switches),
	    cmocka_unit_test(test_t01_config),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
