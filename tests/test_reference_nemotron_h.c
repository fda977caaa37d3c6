/*
 * test_reference_nemotron_h.c — the reference forward pass over Nemotron-H
 * (NemotronHForCausalLM; reference/nemotron_h.c over granite4.c's Mamba2 mixer, the
 * attention without RoPE and nogate.c's relu2 MLP): every layer x = x + mixer(norm(x)), one
 * mixer per layer as hybrid_override_pattern says. Full and sharded logits agree within
 * REF_TOL_F32 (TP 1, 2, 4), int8-channel TP 2 and fp8-channel TP 4 within their budgets; the
 * full path's logits equal those of a torch model assembled from transformers 4.57.1's
 * blocks (float32, eager: BambaMixer.torch_forward with a gated norm per n_groups group as
 * Zamba2RMSNormGated, LlamaAttention with identity rotary, a relu2 MLP; the remote code is not
 * in transformers 4.57.1) at 28 points; rank tensors broken the way a wrong planner would
 * break them are caught; the gated norm's groups, relu2 and RoPE move the logits;
 * NemotronHConfig's defaults and the reference's refusals. Fixture from
 * $WT_BUILD/wt-mkckpt --family nemotron_h (hid 64, "M-M*-", V 1000, untied); seed printed.
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
#include "kernels/kernels.h"
#include "tests/util/testutil.h"
#include "tests/test_reference_util.h"

#define V_NH 1000
#define FAM  "nemotron_h"
#define NH_L "backbone.layers."

static int setup(void **state)
{
	(void)state;
	static const char *fams[] = {FAM};
	return gen_fixtures("reference_nemotron_h", fams, 1);
}

static void test_nh_pass(void **state)
{
	(void)state;
	expect_pass(FAM, 1, 1, WT_QUANT_NONE, 0);
	expect_pass(FAM, 2, 1, WT_QUANT_NONE, 0); /* two mixer groups a rank */
	expect_pass(FAM, 4, 1, WT_QUANT_NONE, 0); /* one group, one kv head a rank */
	expect_pass(FAM, 2, 1, WT_QUANT_INT8_CHANNEL, 0);
	expect_pass(FAM, 4, 1, WT_QUANT_FP8_CHANNEL, 0);
}

/* (row, column, logit of the torch model from transformers 4.57.1's blocks), tokens
 * g_tokens */
static const gold_pt gold_nh[] = {
    {0, 22, -1.36717543e-01f},  {0, 668, -1.72550932e-01f}, {0, 803, -1.13098763e-01f},
    {0, 807, -1.24205738e-01f}, {1, 53, 2.10490469e-02f},   {1, 277, -7.05722868e-02f},
    {1, 284, 3.49025846e-01f},  {1, 977, -4.85738814e-02f}, {2, 1, 4.32746075e-02f},
    {2, 45, -2.76178978e-02f},  {2, 48, 5.19152097e-02f},   {2, 130, 4.14685942e-02f},
    {3, 234, 1.23869762e-01f},  {3, 282, 1.29888296e-01f},  {3, 650, 2.15224013e-01f},
    {3, 748, -8.00728351e-02f}, {4, 177, -4.36826646e-02f}, {4, 796, -2.17799708e-01f},
    {4, 844, 1.57470524e-01f},  {4, 895, 1.58270851e-01f},  {5, 491, 9.39317793e-03f},
    {5, 662, 1.08689167e-01f},  {5, 664, 9.82078016e-02f},  {5, 676, -9.69816893e-02f},
    {6, 270, 1.08625129e-01f},  {6, 361, -7.33889043e-02f}, {6, 879, 1.40470058e-01f},
    {6, 900, 1.84343189e-01f},
};

/* The full path's logits at the golden points, within 1e-5 (over all 7000 logits 2.7e-7 of
 * max |logit| 0.68, a ratio of 3.9e-7; at these points 1.8e-7). */
#define GOLD_TOL 1e-5

static void test_nh_transformers(void **state)
{
	(void)state;
	expect_gold(FAM, V_NH, GOLD_TOL, gold_nh, sizeof(gold_nh) / sizeof(gold_nh[0]));
}

static void test_nh_caught(void **state)
{
	(void)state;
	expect_swapped(FAM, 2, 1, NH_L "0.mixer.conv1d.weight",
	               "Mamba2 layer 0's conv1d channels exchanged between the ranks");
	expect_swapped(FAM, 2, 1, NH_L "2.mixer.A_log",
	               "Mamba2 layer 2's A_log heads exchanged between the ranks");
	expect_swapped(FAM, 2, 1, NH_L "3.mixer.qkv_proj.weight",
	               "attention layer 3's q / k / v heads exchanged between the ranks");
	expect_swapped(FAM, 2, 1, NH_L "1.mixer.up_proj.weight",
	               "MLP layer 1's up_proj rows exchanged between the ranks");
	expect_swapped(FAM, 4, 1, NH_L "4.mixer.down_proj.weight",
	               "MLP layer 4's down_proj columns exchanged between ranks 0 and 1");
	expect_halves_swapped(FAM, 2, 1, (tamper_halves){"lm_head.weight", 0, 1, 256, 64 * 2},
	                      "rank 0's lm_head row halves exchanged");
}

/* The gated norm per n_groups group, relu2 and no RoPE: each moves the logits. */
static void test_nh_switches(void **state)
{
	(void)state;
	model m = {0};
	ref_set ck = {0};
	ref_cfg c;
	wt_errbuf err = {0};
	open_model(&m, FAM);
	assert_int_equal(ref_load_ckpt(m.c, &c, &ck, &err), WT_OK);
	assert_true(c.nh && c.g4 && c.nogate && !c.g4_rope && !c.mamba_lm && !c.jamba &&
	            !c.granite && !c.bamba && !c.tied && c.kind == REF_DENSE && c.L == 5 &&
	            c.H == 4 && c.KV == 2 && c.d == 16 && c.I == 128 && c.m_heads == 8 &&
	            c.m_dh == 16 && c.m_groups == 4 && c.m_norm_groups == 4 && c.m_state == 16 &&
	            c.m_conv == 4 && c.act == REF_ACT_RELU2);
	assert_true(c.g4_mamba[0] == 0x5u && c.nh_mlp[0] == 0x12u);
	assert_float_equal(c.eps, 1e-5, 1e-15);
	size_t n = N_TOK * V_NH;
	float *base = malloc(n * sizeof(float)), *lg = malloc(n * sizeof(float));
	assert_true(base && lg);
	logits_with(&c, &ck, base);
	ref_cfg off = c;
	off.m_norm_groups = 1;
	logits_with(&off, &ck, lg);
	expect_moved(base, lg, n, 1e-3, "the gated norm over all channels");
	off = c;
	off.act = REF_ACT_SILU;
	logits_with(&off, &ck, lg);
	expect_moved(base, lg, n, 1e-3, "silu for relu2 in the MLP layers");
	off = c;
	off.g4_rope = true;
	off.theta = 10000.0;
	logits_with(&off, &ck, lg);
	expect_moved(base, lg, n, 1e-4, "RoPE in the attention layer");
	free(base);
	free(lg);
	ref_set_clear(&ck);
	close_model(&m);
}

#define NH_CFG(extra)                                                                              \
	"{\"architectures\": [\"NemotronHForCausalLM\"], \"model_type\": \"nemotron_h\", "         \
	"\"hidden_size\": 64, \"num_hidden_layers\": 3, \"num_attention_heads\": 8, "              \
	"\"attention_head_dim\": 8, \"vocab_size\": 1000, \"hybrid_override_pattern\": "           \
	"\"M*-\", \"mamba_num_heads\": 8, \"mamba_head_dim\": 16" extra "}"

/* NemotronHConfig's defaults (relu2, layer_norm_epsilon 1e-5, no RoPE, untied, 8 kv heads,
 * n_groups 8, ssm_state_size 128, conv_kernel 4, intermediate_size 21504) and the
 * reference's refusals. */
static void test_nh_config(void **state)
{
	(void)state;
	ref_cfg c;
	wt_errbuf err = {0};
	const char *j = NH_CFG("");
	assert_int_equal(ref_cfg_parse_json(j, strlen(j), &c, &err), WT_OK);
	assert_true(c.nh && c.act == REF_ACT_RELU2 && !c.g4_rope && !c.tied && c.I == 21504 &&
	            c.d == 8 && c.KV == 8 && c.m_heads == 8 && c.m_dh == 16 && c.m_groups == 8 &&
	            c.m_norm_groups == 8 && c.m_state == 128 && c.m_conv == 4 &&
	            c.g4_mamba[0] == 1u && c.nh_mlp[0] == 4u);
	assert_float_equal(c.eps, 1e-5, 1e-15);
	j = NH_CFG(", \"layer_norm_epsilon\": 1e-6");
	assert_int_equal(ref_cfg_parse_json(j, strlen(j), &c, &err), WT_OK);
	assert_float_equal(c.eps, 1e-6, 1e-15);
	expect_cfg(NH_CFG(", \"n_groups\": 3"), WT_ECORRUPT, "n_groups (3) dividing them");
	expect_cfg("{\"architectures\": [\"NemotronHForCausalLM\"], \"model_type\": "
	           "\"nemotron_h\", \"hidden_size\": 64, \"num_hidden_layers\": 1, "
	           "\"num_attention_heads\": 8, \"attention_head_dim\": 8, \"vocab_size\": 1000, "
	           "\"hybrid_override_pattern\": \"M\", \"mamba_num_heads\": 32, "
	           "\"mamba_head_dim\": 4, \"n_groups\": 32}",
	           WT_EUNSUPPORTED, "up to 16 groups");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_nh_pass),   cmocka_unit_test(test_nh_transformers),
	    cmocka_unit_test(test_nh_caught), cmocka_unit_test(test_nh_switches),
	    cmocka_unit_test(test_nh_config),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
