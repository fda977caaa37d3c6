/*
 * test_reference_llava_pixtral.c — the reference forward pass over the language model of
 * LLaVA with a Pixtral tower (LlavaForConditionalGeneration, vision_config.model_type
 * pixtral: pixtral-12b, on text tokens: Mistral's math (Llama's) in reference/reference.c,
 * language_model.* read as the text model's names, the tower and the projector loaded, not
 * run, as docs/reference.md says for the multimodal families): untied, head_dim given.
 * Full and sharded logits agree within REF_TOL_F32 (TP 1, 2, 4) or the quantized layouts'
 * budgets; the full path's logits equal transformers 4.57.1's (eager, float32) at 28
 * points; rank tensors broken the way a wrong planner would break them are caught. The
 * fixture comes from $WT_BUILD/wt-mkckpt --family llava_pixtral (hid 128, H 4, KV 2, d 48,
 * I 256, V 1000, 2 layers; a Pixtral tower of 2 blocks of width 64).
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

#define V_PX 1000
#define A1   "model.layers.1.self_attn."
#define M1   "model.layers.1.mlp."

static int setup(void **state)
{
	(void)state;
	static const char *fams[] = {"llava_pixtral"};
	return gen_fixtures("reference_llava_pixtral", fams, 1);
}

static void test_pixtral_pass(void **state)
{
	(void)state;
	expect_pass("llava_pixtral", 1, 1, WT_QUANT_NONE, 0);
	expect_pass("llava_pixtral", 2, 1, WT_QUANT_NONE, 0);
	expect_pass("llava_pixtral", 4, 1, WT_QUANT_NONE, 0); /* KV 2 < TP 4 */
	expect_pass("llava_pixtral", 2, 1, WT_QUANT_INT8_CHANNEL, 0);
	expect_pass("llava_pixtral", 4, 1, WT_QUANT_FP8_CHANNEL, 0);
}

/* (row, column, transformers 4.57.1 logit), tokens g_tokens */
static const gold_pt gold_px[] = {
    {0, 128, -3.06123495e-01f}, {0, 133, 1.47260353e-01f},  {0, 499, 1.71633158e-03f},
    {0, 796, 2.89436907e-01f},  {1, 28, -1.16022296e-01f},  {1, 147, 5.76258032e-03f},
    {1, 401, -8.00643042e-02f}, {1, 484, -1.15720993e-02f}, {2, 129, 4.22114164e-01f},
    {2, 541, -1.32106068e-02f}, {2, 753, -4.54307407e-01f}, {2, 948, -1.03456102e-01f},
    {3, 145, -5.15962671e-03f}, {3, 367, -7.23530650e-02f}, {3, 443, 2.86261111e-01f},
    {3, 510, -3.78106236e-01f}, {4, 137, 3.10025930e-01f},  {4, 347, 7.46398196e-02f},
    {4, 788, -2.31787235e-01f}, {4, 853, 5.39160728e-01f},  {5, 510, -4.13677782e-01f},
    {5, 815, -1.81606814e-01f}, {5, 839, 9.14729834e-02f},  {5, 939, 1.87814146e-01f},
    {6, 134, -5.93644083e-02f}, {6, 204, -4.90567148e-01f}, {6, 308, -4.04955521e-02f},
    {6, 553, 1.62173584e-01f},
};

/* The full path's logits at the golden points, within 1e-5 (over all 7000 logits 4.2e-7
 * of max |logit| 0.79: LlavaForConditionalGeneration.from_pretrained of the fixture,
 * strict, untied, a PixtralVisionModel tower; the full model on input_ids, eager,
 * float32) */
#define GOLD_TOL 1e-5

static void test_pixtral_transformers(void **state)
{
	(void)state;
	expect_gold("llava_pixtral", V_PX, GOLD_TOL, gold_px, sizeof(gold_px) / sizeof(gold_px[0]));
}

static void test_pixtral_caught(void **state)
{
	(void)state;
	expect_swapped("llava_pixtral", 2, 1, A1 "qkv_proj.weight", "qkv exchanged between ranks");
	expect_swapped("llava_pixtral", 2, 1, A1 "o_proj.weight", "o_proj columns exchanged");
	expect_halves_swapped("llava_pixtral", 2, 1,
	                      (tamper_halves){M1 "gate_up_proj.weight", 0, 1, 128, 256},
	                      "gate / up halves swapped");
}

/* The fixture as read: Mistral's math, untied, d 48 (given: not 128 / 4), 2 layers; the
 * Pixtral tower and the projector under their canonical names. */
static void test_pixtral_fixture_cfg(void **state)
{
	(void)state;
	model m = {0};
	ref_set ck = {0};
	ref_cfg c;
	wt_errbuf err = {0};
	open_model(&m, "llava_pixtral");
	assert_int_equal(ref_load_ckpt(m.c, &c, &ck, &err), WT_OK);
	assert_true(c.kind == REF_DENSE && c.cohere == 0 && !c.tied && c.d == 48 && c.H == 4 &&
	            c.KV == 2 && c.I == 256 && c.hid == 128 && c.V == V_PX && c.L == 2);
	assert_non_null(find_tensor(&ck, "model.embed_tokens.weight"));
	assert_non_null(find_tensor(&ck, "lm_head.weight"));
	assert_non_null(find_tensor(&ck, "vision_tower.patch_conv.weight"));
	assert_non_null(find_tensor(&ck, "multi_modal_projector.linear_2.bias"));
	ref_set_clear(&ck);
	close_model(&m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_pixtral_pass),
	    cmocka_unit_test(test_pixtral_transformers),
	    cmocka_unit_test(test_pixtral_caught),
	    cmocka_unit_test(test_pixtral_fixture_cfg),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
