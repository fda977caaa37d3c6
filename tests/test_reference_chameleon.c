/*
 * test_reference_chameleon.c — the reference forward pass over Chameleon's language model
 * (ChameleonForConditionalGeneration: Llama's decoder with per-head q/k LayerNorms, weights and
 * biases [H, d] / [KV, d]; the VQ-VAE loaded, unused on text tokens): full and sharded logits
 * agree within REF_TOL_F32 (TP 1, 2, 4) or the quantized layouts' budgets; the full path's
 * logits equal transformers 4.57.1's (eager, float32) at 28 points, for the fixture as made
 * (swin_norm false: chameleon-7b's blocks) and with swin_norm true (chameleon-30b's: the norms
 * after the sublayers); rank tensors broken the way a wrong planner would break them are
 * caught. Fixture from $WT_BUILD/wt-mkckpt --family chameleon (hid 128, H 8, KV 4, I 256,
 * V 1000, 2 layers; seed printed), and a copy whose config.json says swin_norm true.
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

#define V_CH 1000
#define A1   "model.layers.1.self_attn."

/* g_root/chameleon_swin: the fixture with "swin_norm": true */
static int make_swin(void)
{
	if (gen_family("chameleon", "chameleon_swin") != 0)
		return -1;
	char *dir = tu_path(g_root, "chameleon_swin"), *p = tu_path(dir, "config.json");
	size_t n = 0;
	char *s = tu_read_file(p, &n);
	char *at = s != NULL ? strstr(s, "\"swin_norm\": false") : NULL;
	int rv = -1;
	if (at != NULL) {
		memcpy(at, "\"swin_norm\":  true", 18); /* same length */
		rv = tu_write_file(dir, "config.json", s, n);
	}
	free(s);
	free(p);
	free(dir);
	return rv;
}

static int setup(void **state)
{
	(void)state;
	static const char *fams[] = {"chameleon"};
	if (gen_fixtures("reference_chameleon", fams, 1) != 0)
		return -1;
	return make_swin();
}

static void test_chameleon_pass(void **state)
{
	(void)state;
	static const char *const fams[] = {"chameleon", "chameleon_swin"};
	for (int k = 0; k < 2; k++) {
		expect_pass(fams[k], 1, 1, WT_QUANT_NONE, 0);
		expect_pass(fams[k], 2, 1, WT_QUANT_NONE, 0);
		expect_pass(fams[k], 4, 1, WT_QUANT_NONE, 0);
		expect_pass(fams[k], 2, 1, WT_QUANT_INT8_CHANNEL, 0);
		expect_pass(fams[k], 4, 1, WT_QUANT_FP8_CHANNEL, 0);
	}
}

/* (row, column, transformers 4.57.1 logit), tokens g_tokens:
 * ChameleonForConditionalGeneration.from_pretrained of the fixture (strict: no missing,
 * unexpected or mismatched key; untied), eager, float32, on input_ids */
static const gold_pt gold_chameleon[] = {
    {0, 380, 2.61663675e-01f},  {0, 974, -3.53657037e-01f}, {0, 976, 4.06666338e-01f},
    {0, 986, 3.12781245e-01f},  {1, 138, -1.52713060e-01f}, {1, 260, -1.36405397e-02f},
    {1, 318, -2.98610199e-02f}, {1, 536, -1.27078414e-01f}, {2, 317, 1.76980317e-01f},
    {2, 783, -9.98239592e-02f}, {2, 792, -2.64850289e-01f}, {2, 964, 4.50996041e-01f},
    {3, 254, -3.38796973e-02f}, {3, 439, -1.23007849e-01f}, {3, 609, 5.40243499e-02f},
    {3, 897, 5.40204167e-01f},  {4, 516, -9.09447670e-02f}, {4, 659, 2.82805473e-01f},
    {4, 673, -1.49777889e-01f}, {4, 954, 2.89386623e-02f},  {5, 171, 2.76465043e-02f},
    {5, 222, -6.39312118e-02f}, {5, 788, -5.38861901e-02f}, {5, 865, -5.24542034e-01f},
    {6, 41, -1.98623687e-01f},  {6, 161, -2.60809958e-01f}, {6, 671, -9.75638404e-02f},
    {6, 682, -1.29631847e-01f},
};

/* The same with swin_norm true */
static const gold_pt gold_swin[] = {
    {0, 159, -2.27672175e-01f}, {0, 177, -1.86636344e-01f}, {0, 183, 2.29229003e-01f},
    {0, 374, 9.52322483e-02f},  {1, 153, -1.55122504e-02f}, {1, 567, 8.12257156e-02f},
    {1, 826, -5.04698083e-02f}, {1, 835, -2.44152844e-01f}, {2, 30, -4.86503065e-01f},
    {2, 317, 3.81717920e-01f},  {2, 592, -1.49329975e-01f}, {2, 742, -8.57261345e-02f},
    {3, 292, -5.10064900e-01f}, {3, 411, -7.71584064e-02f}, {3, 681, -2.01125145e-01f},
    {3, 973, -6.02066219e-02f}, {4, 44, 2.43503019e-01f},   {4, 181, 2.21305415e-01f},
    {4, 245, 3.86682630e-01f},  {4, 259, -2.42436677e-01f}, {5, 413, 1.27267689e-01f},
    {5, 553, -6.95123300e-02f}, {5, 565, -7.34463036e-02f}, {5, 679, -6.17359951e-02f},
    {6, 300, 1.42417550e-01f},  {6, 442, -4.21530679e-02f}, {6, 589, -1.62681580e-01f},
    {6, 736, 3.57926130e-01f},
};

/* The full path's logits at the golden points, within 1e-5 (over all 7000 logits 4.8e-7 of
 * max |logit| 0.83; swin_norm 6.7e-7 of 0.94). */
#define GOLD_TOL 1e-5

static void test_chameleon_transformers(void **state)
{
	(void)state;
	expect_gold("chameleon", V_CH, GOLD_TOL, gold_chameleon,
	            sizeof(gold_chameleon) / sizeof(gold_chameleon[0]));
	expect_gold("chameleon_swin", V_CH, GOLD_TOL, gold_swin,
	            sizeof(gold_swin) / sizeof(gold_swin[0]));
}

static void test_chameleon_caught(void **state)
{
	(void)state;
	expect_swapped("chameleon", 2, 1, A1 "q_norm.weight", "the ranks' q_norm heads exchanged");
	expect_swapped("chameleon", 2, 1, A1 "k_norm.bias",
	               "the ranks' k_norm bias rows exchanged");
	expect_swapped("chameleon", 2, 1, A1 "qkv_proj.weight", "the ranks' qkv heads exchanged");
	expect_swapped("chameleon_swin", 2, 1, "model.layers.1.mlp.down_proj.weight",
	               "down_proj columns exchanged (swin_norm)");
}

/* The fixture's switches; swin_norm read into OLMo 2's block with Chameleon's norm names. */
static void test_chameleon_config(void **state)
{
	(void)state;
	model m = {0};
	ref_set ck = {0};
	ref_cfg c;
	wt_errbuf err = {0};
	open_model(&m, "chameleon");
	assert_int_equal(ref_load_ckpt(m.c, &c, &ck, &err), WT_OK);
	assert_true(c.chameleon && !c.qk_norm && !c.olmo2 && !c.sandwich && !c.layernorm &&
	            c.kind == REF_DENSE && !c.tied && c.d == 16 && c.H == 8 && c.KV == 4 &&
	            c.I == 256 && c.L == 2 && c.act == REF_ACT_SILU);
	assert_float_equal(c.theta, 10000.0, 0.0);
	assert_float_equal(c.eps, 1e-5, 1e-12);
	ref_set_clear(&ck);
	close_model(&m);
#define CH                                                                                         \
	"{\"architectures\": [\"ChameleonForConditionalGeneration\"], \"model_type\": "            \
	"\"chameleon\", \"hidden_size\": 64, \"num_attention_heads\": 4, "                         \
	"\"num_key_value_heads\": 4, \"num_hidden_layers\": 2, \"intermediate_size\": 128, "       \
	"\"vocab_size\": 100"
	static const char swin[] = CH ", \"swin_norm\": true}";
	assert_int_equal(ref_cfg_parse_json(swin, strlen(swin), &c, &err), WT_OK);
	assert_true(c.chameleon && c.olmo2 && c.sandwich);
	assert_string_equal(ref_post_norm(&c, false), "input_layernorm");
	assert_string_equal(ref_post_norm(&c, true), "post_attention_layernorm");
	static const char dflt[] = CH "}"; /* ChameleonConfig's rms_norm_eps 1e-5, theta 1e4 */
	assert_int_equal(ref_cfg_parse_json(dflt, strlen(dflt), &c, &err), WT_OK);
	assert_float_equal(c.eps, 1e-5, 1e-12);
	assert_float_equal(c.theta, 10000.0, 0.0);
	assert_true(!c.olmo2 && !c.tied);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_chameleon_pass),
	    cmocka_unit_test(test_chameleon_transformers),
	    cmocka_unit_test(test_chameleon_caught),
	    cmocka_unit_test(test_chameleon_config),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
