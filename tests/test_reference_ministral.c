/*
 * test_reference_ministral.c — the reference forward pass over Ministral
 * (MinistralForCausalLM; reference/cfg_smollm3.c, Llama's math): Mistral's decoder whose
 * sliding_attention layers (layer_types) see key s from query t only when t - s <
 * sliding_window. Full and sharded logits agree within REF_TOL_F32 (TP 1, 2, 4, 8) or the
 * quantized layouts' budgets; the full path's logits equal transformers 4.57.1's (eager,
 * float32) at 28 points; a rank tensor broken the way a wrong planner would break it is
 * caught; the sliding mask moves the logits; config defaults and refusals. Fixture from
 * $WT_BUILD/wt-mkckpt --family ministral (hid 256, H 8, KV 2, d 32, I 512, V 1000, 2 layers:
 * sliding with window 3, full; seed printed).
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

#define V_MI 1000
#define L0   "model.layers.0."

static int setup(void **state)
{
	(void)state;
	static const char *fams[] = {"ministral"};
	return gen_fixtures("reference_ministral", fams, 1);
}

static void test_ministral_pass(void **state)
{
	(void)state;
	expect_pass_tp("ministral", true);
}

/* (row, column, transformers 4.57.1 logit), tokens g_tokens */
static const gold_pt gold_ministral[] = {
    {0, 22, 1.12885892e-01f},   {0, 668, 5.58306575e-01f},  {0, 803, 9.64821428e-02f},
    {0, 807, -4.71033961e-01f}, {1, 53, -8.64550471e-03f},  {1, 277, -6.12080134e-02f},
    {1, 284, 8.10702145e-02f},  {1, 977, -2.75168717e-01f}, {2, 1, -4.23777312e-01f},
    {2, 45, -3.19483817e-01f},  {2, 48, -9.43749905e-01f},  {2, 130, 6.43021241e-02f},
    {3, 234, -9.91762280e-02f}, {3, 282, -2.29974672e-01f}, {3, 650, 2.37833351e-01f},
    {3, 748, 5.27833104e-01f},  {4, 177, -2.54637480e-01f}, {4, 796, 1.37166113e-01f},
    {4, 844, 2.84524322e-01f},  {4, 895, -1.11058459e-01f}, {5, 491, 3.10130864e-01f},
    {5, 662, -1.07501715e-01f}, {5, 664, 8.78515169e-02f},  {5, 676, -1.57775566e-01f},
    {6, 270, -2.45279521e-01f}, {6, 361, -7.47298971e-02f}, {6, 879, -3.60482275e-01f},
    {6, 900, 2.11750954e-01f},
};

/* The full path's logits at the golden points, within 1e-5 (over all 7000 logits 9.8e-7 of max
 * |logit| 1.26): the sliding mask moves them by far more (test_ministral_switches). */
#define GOLD_TOL 1e-5

static void test_ministral_transformers(void **state)
{
	(void)state;
	expect_gold("ministral", V_MI, GOLD_TOL, gold_ministral,
	            sizeof(gold_ministral) / sizeof(gold_ministral[0]));
}

static void test_ministral_caught(void **state)
{
	(void)state;
	expect_swapped("ministral", 2, 1, L0 "self_attn.o_proj.weight",
	               "o_proj column slices exchanged");
}

/* The sliding mask moves the logits (the golden points above pin their values). */
static void test_ministral_switches(void **state)
{
	(void)state;
	model m = {0};
	ref_set ck = {0};
	ref_cfg c;
	wt_errbuf err = {0};
	open_model(&m, "ministral");
	assert_int_equal(ref_load_ckpt(m.c, &c, &ck, &err), WT_OK);
	assert_true(c.ministral && c.local_masked && c.window == 3 && c.kind == REF_DENSE &&
	            !c.tied && c.d == 32 && c.L == 2 && c.KV == 2 && !c.layernorm);
	assert_true(ref_l4_bit(c.local_mask, 0) && !ref_l4_bit(c.local_mask, 1));
	assert_float_equal(c.eps, 1e-6, 1e-15);
	size_t n = N_TOK * V_MI;
	float *base = malloc(n * sizeof(float)), *lg = malloc(n * sizeof(float));
	assert_true(base && lg);
	logits_with(&c, &ck, base);
	ref_cfg off = c;
	memset(off.local_mask, 0, sizeof(off.local_mask));
	logits_with(&off, &ck, lg);
	expect_moved(base, lg, n, 1e-3, "layer 0 without the sliding mask");
	off = c;
	off.local_mask[0] = 3u;
	logits_with(&off, &ck, lg);
	expect_moved(base, lg, n, 1e-3, "layer 1 sliding too");
	free(base);
	free(lg);
	ref_set_clear(&ck);
	close_model(&m);
}

#define MI(extra)                                                                                  \
	"{\"architectures\": [\"MinistralForCausalLM\"], \"model_type\": \"ministral\", "          \
	"\"hidden_size\": 64, \"num_attention_heads\": 4, \"num_key_value_heads\": 2, "            \
	"\"num_hidden_layers\": 2, \"vocab_size\": 100, \"intermediate_size\": 96" extra "}"

static void test_ministral_config(void **state)
{
	(void)state;
	ref_cfg c;
	wt_errbuf err = {0};
	/* MinistralConfig's defaults: sliding_window 4096 and layer_types absent: every layer
	 * sliding; rms_norm_eps 1e-6, theta 10000, untied */
	static const char plain[] = MI("");
	assert_int_equal(ref_cfg_parse_json(plain, strlen(plain), &c, &err), WT_OK);
	assert_true(c.ministral && c.local_masked && c.window == 4096 && !c.tied && c.d == 16 &&
	            ref_l4_bit(c.local_mask, 0) && ref_l4_bit(c.local_mask, 1));
	assert_float_equal(c.eps, 1e-6, 1e-15);
	assert_float_equal(c.theta, 10000.0, 1e-9);
	/* sliding_window null: every layer full */
	static const char none[] = MI(", \"sliding_window\": null");
	assert_int_equal(ref_cfg_parse_json(none, strlen(none), &c, &err), WT_OK);
	assert_true(c.window == 0 && !ref_l4_bit(c.local_mask, 0) && !ref_l4_bit(c.local_mask, 1));
	static const char typed[] = MI(", \"sliding_window\": 8, \"layer_types\": "
	                               "[\"full_attention\", \"sliding_attention\"]");
	assert_int_equal(ref_cfg_parse_json(typed, strlen(typed), &c, &err), WT_OK);
	assert_true(c.window == 8 && !ref_l4_bit(c.local_mask, 0) && ref_l4_bit(c.local_mask, 1));
	expect_cfg(MI(", \"layer_types\": [\"full_attention\"]"), WT_ECORRUPT, "layer_types");
	expect_cfg(MI(", \"layer_types\": [\"full_attention\", \"chunked_attention\"]"),
	           WT_ECORRUPT, "layer_types");
	expect_cfg(MI(", \"sliding_window\": -2"), WT_ECORRUPT, "sliding_window");
	expect_cfg(MI(", \"hidden_act\": \"relu6\""), WT_EUNSUPPORTED, "relu6");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_ministral_pass),   cmocka_unit_test(test_ministral_transformers),
	    cmocka_unit_test(test_ministral_caught), cmocka_unit_test(test_ministral_switches),
	    cmocka_unit_test(test_ministral_config),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
