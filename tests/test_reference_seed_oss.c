/*
 * test_reference_seed_oss.c — the reference forward pass over Seed-OSS
 * (SeedOssForCausalLM; Llama's math in reference/reference.c): RMSNorm decoder with q/k/v
 * biases, o_proj's bias and the MLP's biases (the fixture switches on attention_out_bias and
 * mlp_bias, which the release leaves off, so that every bias SeedOssConfig can ask for is
 * run), head_dim 64 with H x d 512 against hidden 256. Full and sharded logits agree within
 * REF_TOL_F32 (TP 1, 2, 4, 8) or the quantized layouts' budgets; the full path's logits
 * equal transformers 4.57.1's (eager, float32) at 28 points; rank tensors broken the way a
 * wrong planner would break them (a replicated bias split or added twice, fused bias parts
 * out of order) are caught; SeedOssConfig's defaults and refusals. The fixture comes from
 * $WT_BUILD/wt-mkckpt --family seed_oss (hid 256, H 8, KV 2, d 64, I 512, V 1000, 2 layers;
 * seed printed).
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

#define V_SO 1000
#define A1   "model.layers.1.self_attn."
#define M1   "model.layers.1.mlp."

static int setup(void **state)
{
	(void)state;
	static const char *fams[] = {"seed_oss"};
	if (gen_fixtures("reference_seed_oss", fams, 1) != 0 || gen_family("seed_oss", "seed_def"))
		return -1;
	/* attention_bias left out: SeedOssConfig's true, the same model */
	char *dir = tu_path(g_root, "seed_def");
	edit_config(dir, "\"attention_bias\": true,", "");
	free(dir);
	return 0;
}

static void test_seed_oss_pass(void **state)
{
	(void)state;
	static const char *forms[] = {"seed_oss", "seed_def"};
	for (int f = 0; f < 2; f++) {
		expect_pass(forms[f], 1, 1, WT_QUANT_NONE, 0);
		expect_pass(forms[f], 2, 1, WT_QUANT_NONE, 0);
		expect_pass(forms[f], 4, 1, WT_QUANT_NONE, 0); /* KV 2 < TP 4 */
		expect_pass(forms[f], 8, 1, WT_QUANT_NONE, 0);
	}
	expect_pass("seed_oss", 2, 1, WT_QUANT_INT8_CHANNEL, 0);
	expect_pass("seed_oss", 4, 1, WT_QUANT_FP8_CHANNEL, 0);
	expect_pass("seed_oss", 2, 1, WT_QUANT_FP8_BLOCK, 0);
	expect_pass("seed_oss", 2, 1, WT_QUANT_FP8_TENSOR, 0);
}

/* (row, column, transformers 4.57.1 logit), tokens g_tokens */
static const gold_pt gold_seed[] = {
    {0, 511, -4.17122304e-01f}, {0, 724, 7.38696009e-02f},  {0, 880, 1.88102975e-01f},
    {0, 941, 2.37367004e-01f},  {1, 80, -1.69818655e-01f},  {1, 283, -1.16787694e-01f},
    {1, 452, 1.68784827e-01f},  {1, 606, 1.25175536e-01f},  {2, 174, -1.93250209e-01f},
    {2, 579, 2.42600992e-01f},  {2, 675, -5.30959629e-02f}, {2, 871, 3.68301421e-01f},
    {3, 60, -1.66632116e-01f},  {3, 476, 2.68070996e-02f},  {3, 897, 2.15012386e-01f},
    {3, 899, 7.69575238e-02f},  {4, 369, 2.66892940e-01f},  {4, 928, 4.84948158e-01f},
    {4, 961, 2.14799151e-01f},  {4, 982, -2.86904395e-01f}, {5, 177, 1.20918453e-01f},
    {5, 464, -4.51199442e-01f}, {5, 588, 2.22298503e-03f},  {5, 926, 5.34898713e-02f},
    {6, 207, 2.66957581e-01f},  {6, 407, 2.15343446e-01f},  {6, 665, -5.55432588e-03f},
    {6, 940, 8.23740363e-02f},
};

/* The full path's logits at the golden points, within 1e-5 (over all 7000 logits 1.07e-6
 * of max |logit| 1.25): the o_proj and MLP biases move transformers' logits by 0.25, the q/k/v
 * biases by 0.07. */
#define GOLD_TOL 1e-5

static void test_seed_oss_transformers(void **state)
{
	(void)state;
	expect_gold("seed_oss", V_SO, GOLD_TOL, gold_seed,
	            sizeof(gold_seed) / sizeof(gold_seed[0]));
	expect_gold("seed_def", V_SO, GOLD_TOL, gold_seed,
	            sizeof(gold_seed) / sizeof(gold_seed[0]));
}

/* BF16 tensor name of rank set r times f. */
static void scale_bf16(ref_set *r, const char *name, float f)
{
	ref_tensor *t = find_tensor(r, name);
	uint16_t *v = (uint16_t *)(void *)t->data;
	for (uint64_t i = 0; i < t->nbytes / 2; i++)
		v[i] = kern_f32_to_bf16(kern_bf16_to_f32(v[i]) * f);
}

static void zero(ref_set *r, const char *name)
{
	ref_tensor *t = find_tensor(r, name);
	memset(t->data, 0, t->nbytes);
}

static void tamper_o_bias(void *ctx, ref_set *r, uint32_t n)
{
	(void)ctx; /* TP 2: o_proj's bias on both ranks x 0.5, as if split in halves that the
	            * engine's all-reduce sums (the planner must replicate it whole) */
	assert_int_equal(n, 2);
	scale_bf16(&r[0], A1 "o_proj.bias", 0.5f);
	scale_bf16(&r[1], A1 "o_proj.bias", 0.5f);
}

static void tamper_o_bias_zero(void *ctx, ref_set *r, uint32_t n)
{
	(void)ctx; /* TP 2: rank 0's o_proj bias dropped (the rank that adds it) */
	assert_int_equal(n, 2);
	zero(&r[0], A1 "o_proj.bias");
}

static void tamper_down_bias(void *ctx, ref_set *r, uint32_t n)
{
	(void)ctx; /* TP 2: rank 0's down_proj bias x2 (the rank that adds it) */
	assert_int_equal(n, 2);
	scale_bf16(&r[0], M1 "down_proj.bias", 2.0f);
}

static void tamper_qkv_bias(void *ctx, ref_set *r, uint32_t n)
{
	(void)ctx; /* TP 2: rank 1's q/k/v biases dropped */
	assert_int_equal(n, 2);
	zero(&r[1], A1 "qkv_proj.bias");
}

static void test_seed_oss_caught(void **state)
{
	(void)state;
	expect_caught("seed_oss", 2, 1, tamper_o_bias, "o_proj bias halved on both ranks");
	expect_caught("seed_oss", 2, 1, tamper_o_bias_zero, "o_proj bias dropped on rank 0");
	expect_caught("seed_oss", 2, 1, tamper_down_bias, "down_proj bias x2 on rank 0");
	expect_halves_swapped("seed_oss", 2, 1,
	                      (tamper_halves){M1 "gate_up_proj.bias", 0, 1, 128, 2},
	                      "gate / up bias halves swapped");
	expect_swapped("seed_oss", 2, 1, M1 "gate_up_proj.bias", "gate_up biases exchanged");
	expect_caught("seed_oss", 2, 1, tamper_qkv_bias, "q/k/v biases dropped on rank 1");
}

/* The fixture as read: Llama's math, untied, its head_dim and eps. */
static void test_seed_oss_fixture_cfg(void **state)
{
	(void)state;
	model m = {0};
	ref_set ck = {0};
	ref_cfg c;
	wt_errbuf err = {0};
	open_model(&m, "seed_oss");
	assert_int_equal(ref_load_ckpt(m.c, &c, &ck, &err), WT_OK);
	assert_true(c.kind == REF_DENSE && !c.qk_norm && !c.tied && c.d == 64 && c.H == 8 &&
	            c.KV == 2 && c.I == 512 && c.rot_dim == 0 && !c.rope_pairs && c.window == 0 &&
	            c.act == REF_ACT_SILU);
	assert_float_equal(c.eps, 1e-6, 1e-15);
	assert_float_equal(c.theta, 10000000.0, 1e-3);
	ref_set_clear(&ck);
	close_model(&m);
}

#define SO_JSON(extra)                                                                             \
	"{\"architectures\": [\"SeedOssForCausalLM\"], \"model_type\": \"seed_oss\", "             \
	"\"hidden_size\": 64, \"num_attention_heads\": 4, \"num_key_value_heads\": 2, "            \
	"\"num_hidden_layers\": 2, \"vocab_size\": 100, \"intermediate_size\": 96" extra "}"

static void test_seed_oss_config(void **state)
{
	(void)state;
	ref_cfg c;
	wt_errbuf err = {0};
	/* SeedOssConfig's defaults: head_dim 128 (not 64 / 4), eps 1e-6, theta 10000, untied */
	static const char plain[] = SO_JSON("");
	assert_int_equal(ref_cfg_parse_json(plain, strlen(plain), &c, &err), WT_OK);
	assert_true(c.kind == REF_DENSE && c.d == 128 && !c.tied && c.act == REF_ACT_SILU);
	assert_float_equal(c.eps, 1e-6, 1e-15);
	assert_float_equal(c.theta, 10000.0, 1e-9);
	/* the class defaults fill only what is left out */
	static const char given[] =
	    SO_JSON(", \"head_dim\": 16, \"rms_norm_eps\": 1e-5, "
	            "\"rope_theta\": 10000000.0, \"tie_word_embeddings\": true");
	assert_int_equal(ref_cfg_parse_json(given, strlen(given), &c, &err), WT_OK);
	assert_true(c.d == 16 && c.tied);
	assert_float_equal(c.eps, 1e-5, 1e-12);
	assert_float_equal(c.theta, 10000000.0, 1e-3);
	expect_cfg(SO_JSON(", \"hidden_act\": \"relu\""), WT_EUNSUPPORTED, "hidden_act");
	static const char gelu[] = SO_JSON(", \"hidden_act\": \"gelu_pytorch_tanh\"");
	assert_int_equal(ref_cfg_parse_json(gelu, strlen(gelu), &c, &err), WT_OK);
	assert_int_equal(c.act, REF_ACT_GELU_TANH);
	expect_cfg(SO_JSON(", \"rope_scaling\": {\"rope_type\": \"longrope\", \"factor\": 2}"),
	           WT_EUNSUPPORTED, "longrope");
	expect_cfg(SO_JSON(", \"rms_norm_eps\": -1"), WT_ECORRUPT, "epsilon");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_seed_oss_pass),   cmocka_unit_test(test_seed_oss_transformers),
	    cmocka_unit_test(test_seed_oss_caught), cmocka_unit_test(test_seed_oss_fixture_cfg),
	    cmocka_unit_test(test_seed_oss_config),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
