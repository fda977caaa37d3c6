/*
 * test_reference_mpt.c — the reference forward pass over MPT (MptForCausalLM;
 * reference/cfg_dbrx.c, dbrx.c): bias-free LayerNorms norm_1 / norm_2 / norm_f, Wqkv
 * [q; k; v] clamped to +-clip_qkv, no RoPE but ALiBi (12 heads: the interleaved slopes of
 * 16), the plain exact-GELU MLP up_proj / down_proj, lm_head tied to wte. Full and sharded
 * logits agree within REF_TOL_F32 (TP 1, 2, 4) or the quantized layouts' budgets; the full
 * path's logits equal transformers 4.57.1's (eager, float32) at 28 points; rank tensors
 * broken the way a wrong planner would break them are caught; each switch moves the logits;
 * config keys and refusals. Fixture from $WT_BUILD/wt-mkckpt --family mpt (d_model 192,
 * H 12, I 768, V 1000, 2 layers, clip_qkv 0.5; seed printed).
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

#define V_MPT 1000
#define B1    "transformer.blocks.1."

static int setup(void **state)
{
	(void)state;
	static const char *fams[] = {"mpt"};
	return gen_fixtures("reference_mpt", fams, 1);
}

static void test_mpt_pass(void **state)
{
	(void)state;
	expect_pass_tp("mpt", false);
	expect_pass("mpt", 2, 1, WT_QUANT_FP8_BLOCK, 0);
}

/* (row, column, transformers 4.57.1 logit), tokens g_tokens */
static const gold_pt gold_mpt[] = {
    {0, 269, 2.53010355e-02f},  {0, 510, -9.97717157e-02f}, {0, 635, 2.14664221e-01f},
    {0, 848, -2.42249936e-01f}, {1, 16, 1.80363402e-01f},   {1, 174, -1.51806727e-01f},
    {1, 649, 2.30618283e-01f},  {1, 812, 1.64321601e-01f},  {2, 543, -5.09824991e-01f},
    {2, 631, 4.01390761e-01f},  {2, 728, 1.42522395e-01f},  {2, 967, 1.56125635e-01f},
    {3, 2, 4.72892672e-01f},    {3, 394, 1.65952668e-01f},  {3, 669, -1.25138432e-01f},
    {3, 813, -2.24083960e-02f}, {4, 175, 1.09873295e-01f},  {4, 728, 2.71919459e-01f},
    {4, 762, -1.22697063e-01f}, {4, 845, -1.29946619e-02f}, {5, 80, 2.01173529e-01f},
    {5, 299, -4.62820977e-01f}, {5, 481, 5.44820189e-01f},  {5, 539, -1.41496718e-01f},
    {6, 5, 4.59414899e-01f},    {6, 8, 1.35047108e-01f},    {6, 124, -2.96976507e-01f},
    {6, 670, 2.28823483e-01f},
};

/* The full path's logits at the golden points, within 1e-5 (over all 7000 logits 9.2e-7 of
 * max |logit| 1.11): ALiBi, its slopes' order and clip_qkv each move them by far more
 * (test_mpt_switches). */
#define GOLD_TOL 1e-5

static void test_mpt_transformers(void **state)
{
	(void)state;
	expect_gold("mpt", V_MPT, GOLD_TOL, gold_mpt, sizeof(gold_mpt) / sizeof(gold_mpt[0]));
}

static void tamper_out(void *ctx, ref_set *r, uint32_t n)
{
	(void)ctx; /* TP 4: two ranks' out_proj column slices exchanged */
	assert_int_equal(n, 4);
	swap_data(&r[0], &r[3], B1 "attn.out_proj.weight");
}

static void test_mpt_caught(void **state)
{
	(void)state;
	expect_swapped("mpt", 2, 1, B1 "attn.Wqkv.weight", "the ranks' Wqkv heads exchanged");
	expect_caught("mpt", 4, 1, tamper_out, "out_proj slices exchanged");
	expect_swapped("mpt", 2, 1, B1 "ffn.up_proj.weight", "up_proj slices exchanged");
}

/* ALiBi's slopes: 8 heads 2^-1 .. 2^-8; 12 heads those of 16 (2^-0.5 k), the even k first */
static void test_mpt_slopes(void **state)
{
	(void)state;
	ref_cfg c = {0};
	float s[16];
	c.H = 8;
	c.alibi_max = 8.0;
	ref_alibi_slopes(&c, s);
	for (int k = 0; k < 8; k++)
		assert_float_equal(s[k], ldexp(1.0, -(k + 1)), 1e-9);
	c.H = 12;
	ref_alibi_slopes(&c, s);
	for (int j = 0; j < 12; j++) {
		int k = j < 8 ? 2 * j + 2 : 2 * (j - 8) + 1;
		assert_float_equal(s[j], pow(2.0, -0.5 * k), 1e-7);
	}
}

/* Each switch moves the logits (the golden points above pin their values). */
static void test_mpt_switches(void **state)
{
	(void)state;
	model m = {0};
	ref_set ck = {0};
	ref_cfg c;
	wt_errbuf err = {0};
	open_model(&m, "mpt");
	assert_int_equal(ref_load_ckpt(m.c, &c, &ck, &err), WT_OK);
	assert_true(c.mpt && c.layernorm && c.fused_ckpt && c.plain_mlp && !c.dbrx &&
	            c.kind == REF_DENSE && c.tied && c.d == 16 && c.H == 12 && c.KV == 12 &&
	            c.I == 768 && c.L == 2 && c.act == REF_ACT_GELU);
	assert_float_equal(c.eps, 1e-5, 1e-15);
	assert_float_equal(c.clip_qkv, 0.5, 1e-12);
	assert_float_equal(c.alibi_max, 8.0, 0.0);
	size_t n = N_TOK * V_MPT;
	float *base = malloc(n * sizeof(float)), *lg = malloc(n * sizeof(float));
	assert_true(base && lg);
	logits_with(&c, &ck, base);
	ref_cfg off = c;
	off.clip_qkv = 0.0;
	logits_with(&off, &ck, lg);
	expect_moved(base, lg, n, 1e-3, "clip_qkv dropped");
	off = c;
	off.alibi_max = 4.0;
	logits_with(&off, &ck, lg);
	expect_moved(base, lg, n, 1e-3, "alibi_bias_max 4");
	off = c;
	off.act = REF_ACT_GELU_TANH;
	logits_with(&off, &ck, lg);
	expect_moved(base, lg, n, 1e-5, "tanh GELU");
	free(base);
	free(lg);
	ref_set_clear(&ck);
	close_model(&m);
}

#define MPT(top, attn)                                                                             \
	"{\"architectures\": [\"MptForCausalLM\"], \"model_type\": \"mpt\", \"d_model\": 64, "     \
	"\"n_heads\": 4, \"n_layers\": 2, \"vocab_size\": 100" top ", \"attn_config\": {"          \
	"\"attn_type\": \"multihead_attention\"" attn "}}"

static void test_mpt_config(void **state)
{
	(void)state;
	ref_cfg c;
	wt_errbuf err = {0};
	/* MptConfig's defaults: expansion_ratio 4, alibi_bias_max 8, no clip, tied, eps 1e-5 */
	static const char plain[] = MPT("", "");
	assert_int_equal(ref_cfg_parse_json(plain, strlen(plain), &c, &err), WT_OK);
	assert_true(c.mpt && c.H == 4 && c.KV == 4 && c.d == 16 && c.I == 256 && c.tied &&
	            c.L == 2 && c.V == 100);
	assert_float_equal(c.alibi_max, 8.0, 0.0);
	assert_float_equal(c.clip_qkv, 0.0, 0.0);
	static const char set[] = MPT(", \"expansion_ratio\": 2, \"no_bias\": true",
	                              ", \"kv_n_heads\": 2, \"clip_qkv\": 6, "
	                              "\"alibi_bias_max\": 16, \"softmax_scale\": null");
	assert_int_equal(ref_cfg_parse_json(set, strlen(set), &c, &err), WT_OK);
	assert_true(c.KV == 2 && c.I == 128);
	assert_float_equal(c.clip_qkv, 6.0, 1e-12);
	assert_float_equal(c.alibi_max, 16.0, 0.0);
	expect_cfg(MPT("", ", \"alibi\": false"), WT_EUNSUPPORTED, "attn_config.alibi");
	expect_cfg(MPT("", ", \"qk_ln\": true"), WT_EUNSUPPORTED, "attn_config.qk_ln");
	expect_cfg(MPT("", ", \"prefix_lm\": true"), WT_EUNSUPPORTED, "attn_config.prefix_lm");
	expect_cfg(MPT("", ", \"softmax_scale\": 0.5"), WT_EUNSUPPORTED,
	           "attn_config.softmax_scale");
	expect_cfg(MPT(", \"no_bias\": false", ""), WT_EUNSUPPORTED, "no_bias");
	expect_cfg(MPT(", \"tie_word_embeddings\": false", ""), WT_EUNSUPPORTED,
	           "tie_word_embeddings");
	expect_cfg(MPT(", \"logit_scale\": 2", ""), WT_EUNSUPPORTED, "logit_scale");
	expect_cfg(MPT(", \"layer_norm_epsilon\": 1e-6", ""), WT_EUNSUPPORTED,
	           "layer_norm_epsilon");
	expect_cfg(MPT(", \"embedding_fraction\": 0.5", ""), WT_EUNSUPPORTED, "embedding_fraction");
	expect_cfg(MPT(", \"norm_type\": \"layernorm\"", ""), WT_EUNSUPPORTED, "norm_type");
	expect_cfg(MPT("", ", \"alibi_bias_max\": 0"), WT_ECORRUPT, "alibi_bias_max");
	expect_cfg(MPT("", ", \"clip_qkv\": -1"), WT_ECORRUPT, "clip_qkv");
	expect_cfg("{\"architectures\": [\"MptForCausalLM\"], \"model_type\": \"mpt\", "
	           "\"attn_config\": 3}",
	           WT_ECORRUPT, "attn_config");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_mpt_pass),     cmocka_unit_test(test_mpt_transformers),
	    cmocka_unit_test(test_mpt_caught),   cmocka_unit_test(test_mpt_slopes),
	    cmocka_unit_test(test_mpt_switches), cmocka_unit_test(test_mpt_config),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
