/*
 * test_reference_cohere2_vision.c — the reference forward pass over Cohere2Vision's language
 * model (Cohere2VisionForConditionalGeneration on text tokens: Cohere 2's math in
 * reference/reference.c and cfg_cohere.c, language_model.* read as the text model's names, the
 * tower and the projector loaded, not run, as docs/reference.md says for the multimodal
 * families): tied by text_config, the transformers 4.57 layout. Full and sharded logits agree
 * within REF_TOL_F32 (TP 1, 2, 4) or the quantized layouts' budgets; the full path's logits
 * equal transformers 4.57.1's language model's (eager, float32: model.language_model, lm_head
 * and Cohere's logit_scale, as vLLM computes them) at 28 points; rank tensors broken the way a
 * wrong planner would break them are caught. The fixture comes from $WT_BUILD/wt-mkckpt
 * --family cohere2_vision (hid 128, H 4, KV 2, d 32, I 256, V 1000, 2 layers, sliding window 4
 * and pattern 2; a SigLIP tower of 2 blocks of width 64).
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

#define V_C2V 1000
#define A1    "model.layers.1.self_attn."
#define M1    "model.layers.1.mlp."

static int setup(void **state)
{
	(void)state;
	static const char *fams[] = {"cohere2_vision"};
	return gen_fixtures("reference_cohere2_vision", fams, 1);
}

static void test_c2v_pass(void **state)
{
	(void)state;
	expect_pass("cohere2_vision", 1, 1, WT_QUANT_NONE, 0);
	expect_pass("cohere2_vision", 2, 1, WT_QUANT_NONE, 0);
	expect_pass("cohere2_vision", 4, 1, WT_QUANT_NONE, 0); /* KV 2 < TP 4 */
	expect_pass("cohere2_vision", 2, 1, WT_QUANT_INT8_CHANNEL, 0);
	expect_pass("cohere2_vision", 4, 1, WT_QUANT_FP8_CHANNEL, 0);
}

/* (row, column, transformers 4.57.1 logit), tokens g_tokens */
static const gold_pt gold_c2v[] = {
    {0, 623, -1.34729698e-01f}, {0, 683, 1.14055276e-01f},  {0, 897, 1.05794601e-01f},
    {0, 942, -2.45357901e-02f}, {1, 55, -7.89829791e-02f},  {1, 224, 1.13502674e-01f},
    {1, 285, -1.43855020e-01f}, {1, 299, -4.34196517e-02f}, {2, 131, 7.35606179e-02f},
    {2, 498, 1.22913569e-01f},  {2, 797, -4.93097343e-02f}, {2, 819, 1.70524269e-02f},
    {3, 278, -2.47388005e-01f}, {3, 302, -4.63702343e-02f}, {3, 340, -8.67343545e-02f},
    {3, 719, 8.21126327e-02f},  {4, 476, -1.31999329e-01f}, {4, 503, -8.50492343e-03f},
    {4, 553, 6.90017790e-02f},  {4, 581, 4.82223034e-02f},  {5, 341, 5.68976849e-02f},
    {5, 621, 2.02078070e-03f},  {5, 698, -1.39271066e-01f}, {5, 790, -5.46861403e-02f},
    {6, 159, -7.26367235e-02f}, {6, 612, 1.50164634e-01f},  {6, 842, 1.30510218e-02f},
    {6, 856, -1.11792289e-01f},
};

/* The full path's logits at the golden points, within 1e-5 (over all 7000 logits 3.0e-7 of
 * max |logit| 0.53: Cohere2VisionForConditionalGeneration.from_pretrained of the fixture,
 * strict, lm_head tied; its language model, lm_head, logit_scale 0.5 (the full model's logits
 * are these / 0.5 exactly: it applies no logit_scale)) */
#define GOLD_TOL 1e-5

static void test_c2v_transformers(void **state)
{
	(void)state;
	expect_gold("cohere2_vision", V_C2V, GOLD_TOL, gold_c2v,
	            sizeof(gold_c2v) / sizeof(gold_c2v[0]));
}

static void test_c2v_caught(void **state)
{
	(void)state;
	expect_swapped("cohere2_vision", 2, 1, A1 "qkv_proj.weight", "qkv exchanged between ranks");
	expect_swapped("cohere2_vision", 2, 1, A1 "o_proj.weight", "o_proj columns exchanged");
	expect_halves_swapped("cohere2_vision", 2, 1,
	                      (tamper_halves){M1 "gate_up_proj.weight", 0, 1, 128, 256},
	                      "gate / up halves swapped");
}

/* The fixture as read: Cohere 2's math, tied, d 32, 2 layers; the tower and the projector
 * under their canonical names (4.57's layout read as the released one's). */
static void test_c2v_fixture_cfg(void **state)
{
	(void)state;
	model m = {0};
	ref_set ck = {0};
	ref_cfg c;
	wt_errbuf err = {0};
	open_model(&m, "cohere2_vision");
	assert_int_equal(ref_load_ckpt(m.c, &c, &ck, &err), WT_OK);
	assert_true(c.kind == REF_DENSE && c.cohere == 2 && c.tied && c.d == 32 && c.H == 4 &&
	            c.KV == 2 && c.I == 256 && c.hid == 128 && c.V == V_C2V && c.L == 2);
	assert_non_null(find_tensor(&ck, "model.embed_tokens.weight"));
	assert_non_null(find_tensor(&ck, "vision_tower.vision_model.post_layernorm.weight"));
	assert_non_null(find_tensor(&ck, "multi_modal_projector.linear_2.bias"));
	ref_set_clear(&ck);
	close_model(&m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_c2v_pass),
	    cmocka_unit_test(test_c2v_transformers),
	    cmocka_unit_test(test_c2v_caught),
	    cmocka_unit_test(test_c2v_fixture_cfg),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
