/*
 * test_reference_mistral3.c — the reference forward pass over Mistral 3's language model
 * (Mistral3ForConditionalGeneration on text tokens; Llama's math in reference/reference.c,
 * the Pixtral tower and the projector loaded, not run, as docs/reference.md says for
 * Gemma 3 / Qwen2-VL): head_dim 48 given (H x d 192 against hidden 256, as Mistral Small's
 * 32 x 128 against 5120), untied, rope_theta 1e9. Full and sharded logits agree within
 * REF_TOL_F32 (TP 1, 2, 4) or the quantized layouts' budgets, in both checkpoint layouts
 * (language_model.model.* and transformers >= 4.52's model.language_model.*); the full
 * path's logits equal transformers 4.57.1's (eager, float32) at 28 points; rank tensors
 * broken the way a wrong planner would break them are caught; MistralConfig's class
 * defaults fill a text_config. The fixtures come from $WT_BUILD/wt-mkckpt --family mistral3
 * / mistral3_hf5 (hid 256, H 4, KV 2, d 48, I 384, V 1000, 2 layers).
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

#define V_M3 1000
#define A1   "model.layers.1.self_attn."
#define M1   "model.layers.1.mlp."

static int setup(void **state)
{
	(void)state;
	static const char *fams[] = {"mistral3", "mistral3_hf5"};
	return gen_fixtures("reference_mistral3", fams, 2);
}

static void test_mistral3_pass(void **state)
{
	(void)state;
	static const char *forms[] = {"mistral3", "mistral3_hf5"};
	for (int f = 0; f < 2; f++) {
		expect_pass(forms[f], 1, 1, WT_QUANT_NONE, 0);
		expect_pass(forms[f], 2, 1, WT_QUANT_NONE, 0);
		expect_pass(forms[f], 4, 1, WT_QUANT_NONE, 0); /* KV 2 < TP 4 */
	}
	expect_pass("mistral3", 2, 1, WT_QUANT_INT8_CHANNEL, 0);
	expect_pass("mistral3", 4, 1, WT_QUANT_FP8_CHANNEL, 0);
	expect_pass("mistral3_hf5", 2, 1, WT_QUANT_FP8_BLOCK, 0);
}

/* (row, column, transformers 4.57.1 logit), tokens g_tokens */
static const gold_pt gold_m3[] = {
    {0, 85, 3.19592506e-01f},   {0, 179, 2.69578815e-01f},  {0, 236, 1.17054284e-02f},
    {0, 809, 1.24249406e-01f},  {1, 39, 2.71447867e-01f},   {1, 94, -8.05762768e-01f},
    {1, 332, 4.45072860e-01f},  {1, 580, -2.64982343e-01f}, {2, 159, -1.86956525e-01f},
    {2, 263, 4.31269109e-02f},  {2, 690, 7.81725720e-02f},  {2, 734, 3.82988125e-01f},
    {3, 390, 4.48230982e-01f},  {3, 420, -1.54955000e-01f}, {3, 516, 2.85752922e-01f},
    {3, 886, 6.69346392e-01f},  {4, 172, 2.66029388e-02f},  {4, 736, 2.33192354e-01f},
    {4, 755, 2.66974807e-01f},  {4, 956, -2.99295187e-01f}, {5, 646, -3.93938541e-01f},
    {5, 649, 1.36928335e-02f},  {5, 695, -4.75893915e-01f}, {5, 869, 5.90577424e-02f},
    {6, 76, 7.51751661e-02f},   {6, 298, 7.35590756e-02f},  {6, 942, 2.18513533e-01f},
    {6, 971, -1.14890508e-01f},
};

/* The full path's logits at the golden points, within 1e-5 (over all 7000 logits 9.5e-7
 * of max |logit| 1.27, both layouts). */
#define GOLD_TOL 1e-5

static void test_mistral3_transformers(void **state)
{
	(void)state;
	expect_gold("mistral3", V_M3, GOLD_TOL, gold_m3, sizeof(gold_m3) / sizeof(gold_m3[0]));
	expect_gold("mistral3_hf5", V_M3, GOLD_TOL, gold_m3, sizeof(gold_m3) / sizeof(gold_m3[0]));
}

static void test_mistral3_caught(void **state)
{
	(void)state;
	expect_swapped("mistral3", 2, 1, A1 "qkv_proj.weight", "qkv exchanged between ranks");
	expect_swapped("mistral3", 2, 1, A1 "o_proj.weight", "o_proj columns exchanged");
	expect_halves_swapped("mistral3_hf5", 2, 1,
	                      (tamper_halves){M1 "gate_up_proj.weight", 0, 1, 192, 512},
	                      "gate / up halves swapped");
}

/* The fixture as read: Llama's math, untied, its head_dim, eps and theta. */
static void test_mistral3_fixture_cfg(void **state)
{
	(void)state;
	static const char *forms[] = {"mistral3", "mistral3_hf5"};
	for (int f = 0; f < 2; f++) {
		model m = {0};
		ref_set ck = {0};
		ref_cfg c;
		wt_errbuf err = {0};
		open_model(&m, forms[f]);
		assert_int_equal(ref_load_ckpt(m.c, &c, &ck, &err), WT_OK);
		assert_true(c.kind == REF_DENSE && !c.qk_norm && !c.tied && c.d == 48 && c.H == 4 &&
		            c.KV == 2 && c.I == 384 && c.rot_dim == 0 && !c.rope_pairs &&
		            c.window == 0 && c.act == REF_ACT_SILU);
		assert_float_equal(c.eps, 1e-5, 1e-12);
		assert_float_equal(c.theta, 1e9, 1.0);
		/* the tower and projector loaded beside the language model, unused */
		assert_non_null(find_tensor(&ck, "vision_tower.patch_conv.weight"));
		assert_non_null(find_tensor(&ck, "multi_modal_projector.linear_1.weight"));
		ref_set_clear(&ck);
		close_model(&m);
	}
}

#define M3_JSON(text)                                                                              \
	"{\"architectures\": [\"Mistral3ForConditionalGeneration\"], \"model_type\": "             \
	"\"mistral3\", \"vision_config\": {\"model_type\": \"pixtral\"}, \"text_config\": "        \
	"{\"model_type\": \"mistral\"" text "}}"

static void test_mistral3_config(void **state)
{
	(void)state;
	ref_cfg c;
	wt_errbuf err = {0};
	/* MistralConfig's defaults: hidden 4096, 32 heads of 128, KV 8, I 14336, vocab 32000,
	 * 32 layers, eps 1e-6, theta 10000, untied */
	static const char plain[] = M3_JSON("");
	assert_int_equal(ref_cfg_parse_json(plain, strlen(plain), &c, &err), WT_OK);
	assert_true(c.kind == REF_DENSE && c.hid == 4096 && c.H == 32 && c.d == 128 && c.KV == 8 &&
	            c.I == 14336 && c.V == 32000 && c.L == 32 && !c.tied && c.act == REF_ACT_SILU);
	assert_float_equal(c.eps, 1e-6, 1e-15);
	assert_float_equal(c.theta, 10000.0, 1e-9);
	/* the defaults fill only what is left out; head_dim given apart from hidden / heads */
	static const char given[] = M3_JSON(", \"hidden_size\": 5120, \"head_dim\": 128, "
	                                    "\"rms_norm_eps\": 1e-5, \"rope_theta\": 1e9");
	assert_int_equal(ref_cfg_parse_json(given, strlen(given), &c, &err), WT_OK);
	assert_true(c.hid == 5120 && c.d == 128 && c.H == 32);
	assert_float_equal(c.eps, 1e-5, 1e-12);
	assert_float_equal(c.theta, 1e9, 1.0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_mistral3_pass),   cmocka_unit_test(test_mistral3_transformers),
	    cmocka_unit_test(test_mistral3_caught), cmocka_unit_test(test_mistral3_fixture_cfg),
	    cmocka_unit_test(test_mistral3_config),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
