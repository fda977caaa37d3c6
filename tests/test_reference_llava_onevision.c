/*
 * test_reference_llava_onevision.c — the reference forward pass over LLaVA-OneVision's
 * language model (LlavaOnevisionForConditionalGeneration on text tokens: Qwen2's math in
 * reference/reference.c, q/k/v biases, language_model.* read as the text model's names, the
 * tower, the projector and image_newline loaded, not run, as docs/reference.md says for the
 * multimodal families): tied by text_config alone. Full and sharded logits agree within
 * REF_TOL_F32 (TP 1, 2, 4) or the quantized layouts' budgets; the full path's logits equal
 * transformers 4.57.1's (eager, float32) at 28 points; rank tensors broken the way a wrong
 * planner would break them are caught. The fixture comes from $WT_BUILD/wt-mkckpt --family
 * llava_onevision (hid 128, H 4, KV 2, d 32, I 256, V 1000, 2 layers; a SigLIP tower of 2
 * blocks of width 64).
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

#define V_OV 1000
#define A1   "model.layers.1.self_attn."
#define M1   "model.layers.1.mlp."

static int setup(void **state)
{
	(void)state;
	static const char *fams[] = {"llava_onevision"};
	return gen_fixtures("reference_llava_onevision", fams, 1);
}

static void test_onevision_pass(void **state)
{
	(void)state;
	expect_pass("llava_onevision", 1, 1, WT_QUANT_NONE, 0);
	expect_pass("llava_onevision", 2, 1, WT_QUANT_NONE, 0);
	expect_pass("llava_onevision", 4, 1, WT_QUANT_NONE, 0); /* KV 2 < TP 4 */
	expect_pass("llava_onevision", 2, 1, WT_QUANT_INT8_CHANNEL, 0);
	expect_pass("llava_onevision", 4, 1, WT_QUANT_FP8_CHANNEL, 0);
}

/* (row, column, transformers 4.57.1 logit), tokens g_tokens */
static const gold_pt gold_ov[] = {
    {0, 22, -6.69702962e-02f},  {0, 668, -1.63250968e-01f}, {0, 803, 5.63143045e-02f},
    {0, 807, 4.49656323e-03f},  {1, 53, 1.50566936e-01f},   {1, 277, 2.75546521e-01f},
    {1, 284, 1.16877414e-01f},  {1, 977, -2.40891740e-01f}, {2, 1, 1.09248705e-01f},
    {2, 45, -4.88997772e-02f},  {2, 48, 2.10856482e-01f},   {2, 130, -3.66670132e-01f},
    {3, 234, 3.01327314e-02f},  {3, 282, -3.09931159e-01f}, {3, 650, 8.32996964e-02f},
    {3, 748, -2.25119501e-01f}, {4, 177, 1.27617285e-01f},  {4, 796, -4.87325668e-01f},
    {4, 844, -2.85514817e-02f}, {4, 895, -1.97189361e-01f}, {5, 491, 8.70091394e-02f},
    {5, 662, -1.03534535e-02f}, {5, 664, 8.42931196e-02f},  {5, 676, -6.47185072e-02f},
    {6, 270, -3.73275727e-01f}, {6, 361, 1.14774108e-01f},  {6, 879, 2.43786573e-02f},
    {6, 900, -9.84739736e-02f},
};

/* The full path's logits at the golden points, within 1e-5 (over all 7000 logits 4.2e-7 of
 * max |logit| 0.98: LlavaOnevisionForConditionalGeneration.from_pretrained of the fixture,
 * strict, lm_head tied by text_config; the full model on input_ids, eager, float32) */
#define GOLD_TOL 1e-5

static void test_onevision_transformers(void **state)
{
	(void)state;
	expect_gold("llava_onevision", V_OV, GOLD_TOL, gold_ov,
	            sizeof(gold_ov) / sizeof(gold_ov[0]));
}

static void test_onevision_caught(void **state)
{
	(void)state;
	expect_swapped("llava_onevision", 2, 1, A1 "qkv_proj.weight",
	               "qkv exchanged between ranks");
	expect_swapped("llava_onevision", 2, 1, A1 "qkv_proj.bias", "qkv biases exchanged");
	expect_swapped("llava_onevision", 2, 1, A1 "o_proj.weight", "o_proj columns exchanged");
	expect_halves_swapped("llava_onevision", 2, 1,
	                      (tamper_halves){M1 "gate_up_proj.weight", 0, 1, 128, 256},
	                      "gate / up halves swapped");
}

/* The fixture as read: Qwen2's math, tied by text_config, d 32, 2 layers; the tower, the
 * projector and image_newline under their canonical names. */
static void test_onevision_fixture_cfg(void **state)
{
	(void)state;
	model m = {0};
	ref_set ck = {0};
	ref_cfg c;
	wt_errbuf err = {0};
	open_model(&m, "llava_onevision");
	assert_int_equal(ref_load_ckpt(m.c, &c, &ck, &err), WT_OK);
	assert_true(c.kind == REF_DENSE && c.cohere == 0 && c.tied && c.d == 32 && c.H == 4 &&
	            c.KV == 2 && c.I == 256 && c.hid == 128 && c.V == V_OV && c.L == 2);
	assert_non_null(find_tensor(&ck, "model.embed_tokens.weight"));
	assert_non_null(find_tensor(&ck, "model.layers.0.self_attn.q_proj.bias"));
	assert_non_null(find_tensor(&ck, "image_newline"));
	assert_non_null(find_tensor(&ck, "multi_modal_projector.linear_2.bias"));
	ref_set_clear(&ck);
	close_model(&m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_onevision_pass),
	    cmocka_unit_test(test_onevision_transformers),
	    cmocka_unit_test(test_onevision_caught),
	    cmocka_unit_test(test_onevision_fixture_cfg),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
