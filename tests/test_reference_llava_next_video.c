/*
 * test_reference_llava_next_video.c — the reference forward pass over LLaVA-NeXT-Video's
 * language model (LlavaNextVideoForConditionalGeneration on text tokens: Llama's math in
 * reference/reference.c, language_model.* read as the text model's names, the tower, the
 * projector and image_newline loaded, not run, as docs/reference.md says for the multimodal
 * families): untied. Full and sharded logits agree within REF_TOL_F32 (TP 1, 2, 4) or the
 * quantized layouts' budgets; the full path's logits equal transformers 4.57.1's (eager,
 * float32) at 28 points; rank tensors broken the way a wrong planner would break them are
 * caught. The fixture comes from $WT_BUILD/wt-mkckpt --family llava_next_video (hid 128, H 4,
 * KV 2, d 32, I 256, V 1000, 2 layers; a CLIP tower of 2 blocks of width 64).
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

#define V_NV 1000
#define A1   "model.layers.1.self_attn."
#define M1   "model.layers.1.mlp."

static int setup(void **state)
{
	(void)state;
	static const char *fams[] = {"llava_next_video"};
	return gen_fixtures("reference_llava_next_video", fams, 1);
}

static void test_next_video_pass(void **state)
{
	(void)state;
	expect_pass("llava_next_video", 1, 1, WT_QUANT_NONE, 0);
	expect_pass("llava_next_video", 2, 1, WT_QUANT_NONE, 0);
	expect_pass("llava_next_video", 4, 1, WT_QUANT_NONE, 0); /* KV 2 < TP 4 */
	expect_pass("llava_next_video", 2, 1, WT_QUANT_INT8_CHANNEL, 0);
	expect_pass("llava_next_video", 4, 1, WT_QUANT_FP8_CHANNEL, 0);
}

/* (row, column, transformers 4.57.1 logit), tokens g_tokens */
static const gold_pt gold_nv[] = {
    {0, 22, -7.40374774e-02f},  {0, 668, 1.31261408e-01f},  {0, 803, -1.13687515e-01f},
    {0, 807, 4.02386665e-01f},  {1, 53, 1.92072168e-01f},   {1, 277, -6.50409535e-02f},
    {1, 284, 1.69853091e-01f},  {1, 977, -1.53170481e-01f}, {2, 1, -1.31307229e-01f},
    {2, 45, -5.35119735e-02f},  {2, 48, 3.51919457e-02f},   {2, 130, -1.93496142e-02f},
    {3, 234, -1.45152688e-01f}, {3, 282, -1.92028806e-02f}, {3, 650, 1.23629004e-01f},
    {3, 748, -1.71920612e-01f}, {4, 177, -2.53043413e-01f}, {4, 796, 1.34076476e-01f},
    {4, 844, -9.03732777e-02f}, {4, 895, -7.90280327e-02f}, {5, 491, -2.61785448e-01f},
    {5, 662, -1.63181916e-01f}, {5, 664, 2.06146210e-01f},  {5, 676, 5.94362505e-02f},
    {6, 270, -8.74439403e-02f}, {6, 361, -3.12203825e-01f}, {6, 879, -2.02345401e-01f},
    {6, 900, 3.89923334e-01f},
};

/* The full path's logits at the golden points, within 1e-5 (over all 7000 logits 4.2e-7 of
 * max |logit| 0.83: LlavaNextVideoForConditionalGeneration.from_pretrained of the fixture,
 * strict, untied; the full model on input_ids, eager, float32) */
#define GOLD_TOL 1e-5

static void test_next_video_transformers(void **state)
{
	(void)state;
	expect_gold("llava_next_video", V_NV, GOLD_TOL, gold_nv,
	            sizeof(gold_nv) / sizeof(gold_nv[0]));
}

static void test_next_video_caught(void **state)
{
	(void)state;
	expect_swapped("llava_next_video", 2, 1, A1 "qkv_proj.weight",
	               "qkv exchanged between ranks");
	expect_swapped("llava_next_video", 2, 1, A1 "o_proj.weight", "o_proj columns exchanged");
	expect_halves_swapped("llava_next_video", 2, 1,
	                      (tamper_halves){M1 "gate_up_proj.weight", 0, 1, 128, 256},
	                      "gate / up halves swapped");
}

/* The fixture as read: Llama's math, untied, d 32, 2 layers; the tower, the projector and
 * image_newline under their canonical names. */
static void test_next_video_fixture_cfg(void **state)
{
	(void)state;
	model m = {0};
	ref_set ck = {0};
	ref_cfg c;
	wt_errbuf err = {0};
	open_model(&m, "llava_next_video");
	assert_int_equal(ref_load_ckpt(m.c, &c, &ck, &err), WT_OK);
	assert_true(c.kind == REF_DENSE && c.cohere == 0 && !c.tied && c.d == 32 && c.H == 4 &&
	            c.KV == 2 && c.I == 256 && c.hid == 128 && c.V == V_NV && c.L == 2);
	assert_non_null(find_tensor(&ck, "model.embed_tokens.weight"));
	assert_non_null(find_tensor(&ck, "lm_head.weight"));
	assert_non_null(find_tensor(&ck, "image_newline"));
	assert_non_null(find_tensor(&ck, "multi_modal_projector.linear_2.bias"));
	ref_set_clear(&ck);
	close_model(&m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_next_video_pass),
	    cmocka_unit_test(test_next_video_transformers),
	    cmocka_unit_test(test_next_video_caught),
	    cmocka_unit_test(test_next_video_fixture_cfg),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
