/*
 * test_reference_zamba2.c — the reference forward pass over Zamba2 (Zamba2ForCausalLM;
 * reference/zamba2.c over granite4.c's Mamba2 mixer): every layer x = x + mixer(norm(x)),
 * a hybrid layer's input first plus linear(its shared block on [x; embeddings]), with the
 * LoRA adapters of its application. Full and sharded logits agree within REF_TOL_F32 (TP 1,
 * 2, 4), int8-channel TP 2 and fp8-channel TP 4 within their budgets; the full path's logits
 * equal transformers 4.57.1's (float32, eager, Zamba2MambaMixer.torch_forward) at 28 points;
 * rank tensors broken the way a wrong planner would break them are caught; the adapters,
 * RoPE and the gated norm's groups move the logits; Zamba2Config's defaults and the
 * reference's refusals. Fixture from $WT_BUILD/wt-mkckpt --family zamba2 (hid 64, layers
 * mamba / hybrid / hybrid / mamba / hybrid, 2 shared blocks, V 1000, tied); seed printed.
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

#define V_Z2 1000
#define FAM  "zamba2"
#define B1   "model.layers.1.shared_transformer."
#define B2   "model.layers.2.shared_transformer."

static int setup(void **state)
{
	(void)state;
	static const char *fams[] = {FAM};
	return gen_fixtures("reference_zamba2", fams, 1);
}

static void test_z2_pass(void **state)
{
	(void)state;
	expect_pass(FAM, 1, 1, WT_QUANT_NONE, 0);
	expect_pass(FAM, 2, 1, WT_QUANT_NONE, 0); /* two mixer groups a rank, the A's gathered */
	expect_pass(FAM, 4, 1, WT_QUANT_NONE, 0);
	expect_pass(FAM, 2, 1, WT_QUANT_INT8_CHANNEL, 0);
	expect_pass(FAM, 4, 1, WT_QUANT_FP8_CHANNEL, 0);
}

/* (row, column, transformers 4.57.1 logit), tokens g_tokens */
static const gold_pt gold_z2[] = {
    {0, 22, -3.29677969e-01f},  {0, 668, -4.76940536e+00f}, {0, 803, -1.10408449e+00f},
    {0, 807, -1.72098804e+00f}, {1, 53, 7.84411144e+00f},   {1, 277, 1.05316658e+01f},
    {1, 284, 9.32662547e-01f},  {1, 977, 5.42717755e-01f},  {2, 1, -2.35575390e+00f},
    {2, 45, 1.81563258e+00f},   {2, 48, -5.21172345e-01f},  {2, 130, -5.26487494e+00f},
    {3, 234, 1.35612631e+00f},  {3, 282, -1.59919441e+00f}, {3, 650, -3.13268209e+00f},
    {3, 748, 3.59052634e+00f},  {4, 177, -8.55134106e+00f}, {4, 796, 2.25738764e+00f},
    {4, 844, -8.86898422e+00f}, {4, 895, -1.50332880e+00f}, {5, 491, 1.81891227e+00f},
    {5, 662, -3.34462309e+00f}, {5, 664, 8.71868896e+00f},  {5, 676, -4.06073904e+00f},
    {6, 270, -2.12890720e+00f}, {6, 361, 3.36157322e+00f},  {6, 879, 2.60256982e+00f},
    {6, 900, 2.50494099e+00f},
};

/* The full path's logits at the golden points, within 5e-5 (over all 7000 logits 7.6e-6 of max
 * |logit| 26.2, a ratio of 2.9e-7; at these points 3.4e-6). */
#define GOLD_TOL 5e-5

static void test_z2_transformers(void **state)
{
	(void)state;
	expect_gold(FAM, V_Z2, GOLD_TOL, gold_z2, sizeof(gold_z2) / sizeof(gold_z2[0]));
}

static void test_z2_caught(void **state)
{
	(void)state;
	expect_swapped(FAM, 2, 1, B1 "self_attn.qkv_proj.weight",
	               "block 0's q / k / v heads exchanged between the ranks");
	expect_swapped(FAM, 2, 1, B1 "self_attn.linear_k_adapter_list.2.0.weight",
	               "application 2's k adapter A rows exchanged between the ranks");
	expect_swapped(FAM, 2, 1, B2 "feed_forward.down_proj.weight",
	               "block 1's down_proj columns exchanged between the ranks");
	expect_swapped(FAM, 2, 1, "model.layers.1.mamba_decoder.mamba.conv1d.weight",
	               "hybrid layer 1's conv1d channels exchanged between the ranks");
	expect_halves_swapped(FAM, 2, 1,
	                      (tamper_halves){B2
	                                      "feed_forward.gate_up_proj_adapter_list.1.1.weight",
	                                      0, 1, 64, 8 * 2},
	                      "rank 0's gate / up rows of application 1's MLP adapter B exchanged");
}

/* The adapters, RoPE and the gated norm's groups move the logits. */
static void test_z2_switches(void **state)
{
	(void)state;
	model m = {0};
	ref_set ck = {0};
	ref_cfg c;
	wt_errbuf err = {0};
	open_model(&m, FAM);
	assert_int_equal(ref_load_ckpt(m.c, &c, &ck, &err), WT_OK);
	assert_true(c.zamba2 && c.mamba_lm && c.g4 && !c.jamba && !c.granite && !c.mamba2 &&
	            c.tied && c.kind == REF_DENSE && c.L == 5 && c.H == 8 && c.d == 16 &&
	            c.I == 128 && c.m_heads == 8 && c.m_dh == 16 && c.m_groups == 4 &&
	            c.m_norm_groups == 4 && c.z2_blocks == 2 && c.z2_rank == 8 && c.z2_attn_ad &&
	            c.z2_rope && c.act == REF_ACT_GELU);
	assert_true(c.z2_hybrid[0] == 0x16u);
	assert_float_equal(c.eps, 1e-5, 1e-15);
	size_t n = N_TOK * V_Z2;
	float *base = malloc(n * sizeof(float)), *lg = malloc(n * sizeof(float));
	assert_true(base && lg);
	logits_with(&c, &ck, base);
	ref_cfg off = c;
	off.z2_attn_ad = false;
	logits_with(&off, &ck, lg);
	expect_moved(base, lg, n, 1e-3, "without the attention adapters");
	off = c;
	off.z2_rope = false;
	logits_with(&off, &ck, lg);
	expect_moved(base, lg, n, 1e-3, "without RoPE");
	off = c;
	off.m_norm_groups = 1;
	logits_with(&off, &ck, lg);
	expect_moved(base, lg, n, 1e-3, "the gated norm over all channels");
	off = c;
	off.z2_blocks = 1; /* block 0 for every hybrid layer: application 1 has no adapter there */
	wt_errbuf e2 = {0};
	assert_int_equal(ref_forward_full(&off, &ck, g_tokens, N_TOK, lg, NULL, &e2), WT_ENOTFOUND);
	print_message("one block: %s\n", e2.msg);
	free(base);
	free(lg);
	ref_set_clear(&ck);
	close_model(&m);
}

#define Z2_CFG(extra)                                                                              \
	"{\"architectures\": [\"Zamba2ForCausalLM\"], \"model_type\": \"zamba2\", "                \
	"\"hidden_size\": 64, \"num_hidden_layers\": 2, \"num_attention_heads\": 8, "              \
	"\"vocab_size\": 1000, \"layers_block_type\": [\"mamba\", \"hybrid\"], "                   \
	"\"n_mamba_heads\": 8, \"mamba_d_state\": 16" extra "}"

/* Zamba2Config's defaults (gelu, rms_norm_eps 1e-5, no RoPE, tied, I 4 x hid) and the
 * reference's refusals. */
static void test_z2_config(void **state)
{
	(void)state;
	ref_cfg c;
	wt_errbuf err = {0};
	const char *j = Z2_CFG("");
	assert_int_equal(ref_cfg_parse_json(j, strlen(j), &c, &err), WT_OK);
	assert_true(c.zamba2 && c.act == REF_ACT_GELU && !c.z2_rope && c.tied && c.I == 256 &&
	            c.d == 16 && c.KV == 8 && c.z2_blocks == 1 && c.z2_rank == 128 &&
	            !c.z2_attn_ad && c.m_groups == 1 && c.m_dh == 16 && c.m_conv == 4);
	assert_float_equal(c.eps, 1e-5, 1e-15);
	assert_float_equal(c.theta, 10000.0, 1e-9);
	expect_cfg(Z2_CFG(", \"use_mem_rope\": true, \"use_long_context\": true"), WT_EUNSUPPORTED,
	           "use_long_context");
	expect_cfg(Z2_CFG(", \"hidden_act\": \"silu\""), WT_EUNSUPPORTED, "hidden_act");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_z2_pass),   cmocka_unit_test(test_z2_transformers),
	    cmocka_unit_test(test_z2_caught), cmocka_unit_test(test_z2_switches),
	    cmocka_unit_test(test_z2_config),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
