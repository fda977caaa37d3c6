/*
 * test_reference_aya_vision.c — the reference forward pass over Aya Vision's language model
 * (AyaVisionForConditionalGeneration on text tokens: Cohere 2's math in reference/reference.c
 * and cfg_cohere.c, language_model.* read as the text model's names, the tower and the
 * projector loaded, not run, as docs/reference.md says for the multimodal families): tied by
 * text_config, Cohere2Config's defaults. Full and sharded logits agree within REF_TOL_F32 (TP
 * 1, 2, 4) or the quantized layouts' budgets; the full path's logits equal transformers
 * 4.57.1's language model's (eager, float32: model.language_model, lm_head and Cohere's
 * logit_scale, as vLLM computes them) at 28 points; rank tensors broken the way a wrong
 * planner would break them are caught. The fixture comes from $WT_BUILD/wt-mkckpt --family
 * aya_vision (hid 128, H 4, KV 2, d 32, I 256, V 1000, 4 layers, sliding window 4 and pattern
 * 4; a SigLIP tower of 2 blocks of width 64).
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

#define V_AV 1000
#define A1   "model.layers.1.self_attn."
#define M1   "model.layers.1.mlp."

static int setup(void **state)
{
	(void)state;
	static const char *fams[] = {"aya_vision"};
	return gen_fixtures("reference_aya_vision", fams, 1);
}

static void test_aya_vision_pass(void **state)
{
	(void)state;
	expect_pass("aya_vision", 1, 1, WT_QUANT_NONE, 0);
	expect_pass("aya_vision", 2, 1, WT_QUANT_NONE, 0);
	expect_pass("aya_vision", 4, 1, WT_QUANT_NONE, 0); /* KV 2 < TP 4 */
	expect_pass("aya_vision", 2, 1, WT_QUANT_INT8_CHANNEL, 0);
	expect_pass("aya_vision", 4, 1, WT_QUANT_FP8_CHANNEL, 0);
}

/* (row, column, transformers 4.57.1 logit), tokens g_tokens */
static const gold_pt gold_av[] = {
    {0, 154, 3.08685660e-01f},  {0, 331, -4.33746763e-02f}, {0, 404, 5.35792336e-02f},
    {0, 970, 1.05820574e-01f},  {1, 49, -5.81523739e-02f},  {1, 74, 9.46813170e-03f},
    {1, 666, -5.98278493e-02f}, {1, 840, 8.49126875e-02f},  {2, 96, 7.15988968e-03f},
    {2, 374, -8.52214992e-02f}, {2, 548, 2.91450624e-03f},  {2, 596, 5.91325462e-02f},
    {3, 59, -1.49600118e-01f},  {3, 219, -2.68172603e-02f}, {3, 519, -2.79647410e-02f},
    {3, 931, -2.02070951e-01f}, {4, 38, -1.34290308e-01f},  {4, 88, 3.68924551e-02f},
    {4, 428, 1.42949045e-01f},  {4, 444, 8.94154310e-02f},  {5, 71, 1.24374107e-02f},
    {5, 92, -1.85726508e-01f},  {5, 246, 3.38783488e-03f},  {5, 564, 1.33172020e-01f},
    {6, 60, 2.75646225e-02f},   {6, 434, -1.27248883e-01f}, {6, 579, 9.18436274e-02f},
    {6, 846, -2.35469013e-01f},
};

/* The full path's logits at the golden points, within 1e-5 (over all 7000 logits 2.1e-7 of
 * max |logit| 0.42: AyaVisionForConditionalGeneration.from_pretrained of the fixture, strict,
 * lm_head tied; its language model, lm_head, logit_scale 0.5) */
#define GOLD_TOL 1e-5

static void test_aya_vision_transformers(void **state)
{
	(void)state;
	expect_gold("aya_vision", V_AV, GOLD_TOL, gold_av, sizeof(gold_av) / sizeof(gold_av[0]));
}

static void test_aya_vision_caught(void **state)
{
	(void)state;
	expect_swapped("aya_vision", 2, 1, A1 "qkv_proj.weight", "qkv exchanged between ranks");
	expect_swapped("aya_vision", 2, 1, A1 "o_proj.weight", "o_proj columns exchanged");
	expect_halves_swapped("aya_vision", 2, 1,
	                      (tamper_halves){M1 "gate_up_proj.weight", 0, 1, 128, 256},
	                      "gate / up halves swapped");
}

/* The fixture as read: Cohere 2's math, tied, d 32, 4 layers; the tower and the projector
 * under their canonical names. */
static void test_aya_vision_fixture_cfg(void **state)
{
	(void)state;
	model m = {0};
	ref_set ck = {0};
	ref_cfg c;
	wt_errbuf err = {0};
	open_model(&m, "aya_vision");
	assert_int_equal(ref_load_ckpt(m.c, &c, &ck, &err), WT_OK);
	assert_true(c.kind == REF_DENSE && c.cohere == 2 && c.tied && c.d == 32 && c.H == 4 &&
	            c.KV == 2 && c.I == 256 && c.hid == 128 && c.V == V_AV && c.L == 4);
	assert_non_null(find_tensor(&ck, "model.embed_tokens.weight"));
	assert_non_null(find_tensor(&ck, "vision_tower.vision_model.post_layernorm.weight"));
	assert_non_null(find_tensor(&ck, "multi_modal_projector.linear_2.bias"));
	ref_set_clear(&ck);
	close_model(&m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_aya_vision_pass),
	    cmocka_unit_test(test_aya_vision_transformers),
	    cmocka_unit_test(test_aya_vision_caught),
	    cmocka_unit_test(test_aya_vision_fixture_cfg),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
