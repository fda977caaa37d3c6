/*
 * test_reference_arcee.c — the reference forward pass over Arcee (ArceeForCausalLM;
 * reference/cfg_apertus.c, nogate.c): Llama's decoder whose MLP has no gate,
 * down_proj(relu2(up_proj(x))), with the mlp_bias biases (up_proj's by rows on each rank,
 * down_proj's added once) and YaRN rope_scaling. Full and sharded logits agree within
 * REF_TOL_F32 (TP 1, 2, 4, 8) or the quantized layouts' budgets; the full path's logits
 * equal transformers 4.57.1's (eager, float32) at 28 points; rank tensors broken the way
 * a wrong planner would break them are caught; each switch moves the logits; config
 * defaults and refusals. Fixture from $WT_BUILD/wt-mkckpt --family arcee (hid 256, H 8,
 * KV 2, d 32, I 512, V 1000, 2 layers; seed printed).
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

#define V_AR 1000
#define M1   "model.layers.1.mlp."

static int setup(void **state)
{
	(void)state;
	static const char *fams[] = {"arcee"};
	return gen_fixtures("reference_arcee", fams, 1);
}

static void test_arcee_pass(void **state)
{
	(void)state;
	expect_pass("arcee", 1, 1, WT_QUANT_NONE, 0);
	expect_pass("arcee", 2, 1, WT_QUANT_NONE, 0);
	expect_pass("arcee", 4, 1, WT_QUANT_NONE, 0); /* KV 2 < TP 4 */
	expect_pass("arcee", 8, 1, WT_QUANT_NONE, 0);
	expect_pass("arcee", 2, 1, WT_QUANT_INT8_CHANNEL, 0);
	expect_pass("arcee", 4, 1, WT_QUANT_FP8_CHANNEL, 0);
	expect_pass("arcee", 2, 1, WT_QUANT_FP8_BLOCK, 0);
}

/* (row, column, transformers 4.57.1 logit), tokens g_tokens */
static const gold_pt gold_arcee[] = {
    {0, 208, -1.89756468e-01f}, {0, 519, 2.91868061e-01f},  {0, 525, 2.38827646e-01f},
    {0, 837, -4.59006965e-01f}, {1, 24, 1.87452465e-01f},   {1, 176, -4.35088784e-01f},
    {1, 206, 2.38476336e-01f},  {1, 524, 3.30099463e-03f},  {2, 23, -3.44711244e-02f},
    {2, 46, -6.16068482e-01f},  {2, 111, -2.64189363e-01f}, {2, 693, 8.39162171e-02f},
    {3, 136, -6.12654328e-01f}, {3, 152, -4.85016525e-01f}, {3, 280, -1.07782573e-01f},
    {3, 766, 4.02831256e-01f},  {4, 113, 1.33606374e-01f},  {4, 140, 2.38940999e-01f},
    {4, 551, -1.50342554e-01f}, {4, 730, 9.65623707e-02f},  {5, 46, -6.81784987e-01f},
    {5, 618, -3.53092581e-01f}, {5, 629, -1.25606224e-01f}, {5, 890, -5.01113594e-01f},
    {6, 80, -3.40404540e-01f},  {6, 441, 5.97140849e-01f},  {6, 715, 1.55911326e-01f},
    {6, 828, -1.49423972e-01f},
};

/* The full path's logits at the golden points, within 1e-5 (over all 7000 logits 1.4e-6
 * of max |logit| 1.21): relu2, the MLP biases and YaRN each move them by far more
 * (test_arcee_switches). */
#define GOLD_TOL 1e-5

static void test_arcee_transformers(void **state)
{
	(void)state;
	expect_gold("arcee", V_AR, GOLD_TOL, gold_arcee,
	            sizeof(gold_arcee) / sizeof(gold_arcee[0]));
}

/* BF16 tensor name of rank set r times f. */
static void scale_bf16(ref_set *r, const char *name, float f)
{
	ref_tensor *t = find_tensor(r, name);
	uint16_t *v = (uint16_t *)(void *)t->data;
	for (uint64_t i = 0; i < t->nbytes / 2; i++)
		v[i] = kern_f32_to_bf16(kern_bf16_to_f32(v[i]) * f);
}

static void tamper_down_bias(void *ctx, ref_set *r, uint32_t n)
{
	(void)ctx; /* TP 4: rank 0's down_proj bias (added once) times 3 */
	assert_int_equal(n, 4);
	scale_bf16(&r[0], M1 "down_proj.bias", 3.0f);
}

static void test_arcee_caught(void **state)
{
	(void)state;
	expect_swapped("arcee", 2, 1, M1 "up_proj.bias", "up_proj bias slices exchanged");
	expect_caught("arcee", 4, 1, tamper_down_bias, "down_proj bias x3 on rank 0");
	expect_halves_swapped("arcee", 2, 1,
	                      (tamper_halves){M1 "up_proj.weight", 1, 1, 128, 256 * 2},
	                      "rank 1's up_proj halves exchanged");
}

/* Each switch moves the logits (the golden points above pin their values). */
static void test_arcee_switches(void **state)
{
	(void)state;
	model m = {0};
	ref_set ck = {0};
	ref_cfg c;
	wt_errbuf err = {0};
	open_model(&m, "arcee");
	assert_int_equal(ref_load_ckpt(m.c, &c, &ck, &err), WT_OK);
	assert_true(c.nogate && !c.apertus && !c.qk_norm && c.kind == REF_DENSE && !c.tied &&
	            c.d == 32 && c.L == 2 && c.act == REF_ACT_RELU2);
	assert_float_equal(c.eps, 1e-5, 1e-15);
	assert_true(c.n_ext > 0); /* YaRN's divisors */
	size_t n = N_TOK * V_AR;
	float *base = malloc(n * sizeof(float)), *lg = malloc(n * sizeof(float));
	assert_true(base && lg);
	logits_with(&c, &ck, base);
	ref_cfg off = c;
	off.act = REF_ACT_SILU;
	logits_with(&off, &ck, lg);
	expect_moved(base, lg, n, 1e-3, "silu instead of relu2");
	off = c;
	off.n_ext = 0;
	off.rope_mscale = 0.0;
	logits_with(&off, &ck, lg);
	expect_moved(base, lg, n, 1e-3, "YaRN ignored");
	free(base);
	free(lg);
	ref_set_clear(&ck);
	close_model(&m);
}

#define AR(extra)                                                                                  \
	"{\"architectures\": [\"ArceeForCausalLM\"], \"model_type\": \"arcee\", "                  \
	"\"hidden_size\": 64, \"num_attention_heads\": 4, \"num_key_value_heads\": 2, "            \
	"\"num_hidden_layers\": 2, \"vocab_size\": 100, \"intermediate_size\": 96" extra "}"

static void test_arcee_config(void **state)
{
	(void)state;
	ref_cfg c;
	wt_errbuf err = {0};
	/* ArceeConfig's defaults: relu2, eps 1e-5, theta 10000, no scaling, untied */
	static const char plain[] = AR("");
	assert_int_equal(ref_cfg_parse_json(plain, strlen(plain), &c, &err), WT_OK);
	assert_true(c.nogate && !c.apertus && !c.tied && c.d == 16 && c.act == REF_ACT_RELU2 &&
	            c.n_ext == 0);
	assert_float_equal(c.eps, 1e-5, 1e-12);
	assert_float_equal(c.theta, 10000.0, 1e-9);
	static const char silu[] = AR(", \"hidden_act\": \"silu\"");
	assert_int_equal(ref_cfg_parse_json(silu, strlen(silu), &c, &err), WT_OK);
	assert_int_equal(c.act, REF_ACT_SILU);
	expect_cfg(AR(", \"hidden_act\": \"xielu\""), WT_EUNSUPPORTED, "xielu");
	expect_cfg(AR(", \"hidden_act\": \"relu6\""), WT_EUNSUPPORTED, "relu6");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_arcee_pass),   cmocka_unit_test(test_arcee_transformers),
	    cmocka_unit_test(test_arcee_caught), cmocka_unit_test(test_arcee_switches),
	    cmocka_unit_test(test_arcee_config),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
