/*
 * test_reference_qwen2_audio.c — the reference forward pass over Qwen2-Audio's language model
 * (Qwen2AudioForConditionalGeneration on text tokens: Qwen2's math in reference/reference.c,
 * q/k/v biases, language_model.* read as the text model's names, the audio encoder and the
 * projector loaded, not run, as docs/reference.md says for the multimodal families): untied. Full
 * and sharded logits agree within REF_TOL_F32 (TP 1, 2, 4) or the quantized layouts' budgets; the
 * full path's logits equal transformers 4.57.1's (eager, float32) at 28 points; rank tensors broken
 * the way a wrong planner would break them are caught. The fixture comes from $WT_BUILD/wt-mkckpt
 * --family qwen2_audio (hid 128, H 4, KV 2, d 32, I 256, V 1000, 2 layers; an audio encoder of 2
 * layers, d_model 64).
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

#define V_QA 1000
#define A1   "model.layers.1.self_attn."
#define M1   "model.layers.1.mlp."

static int setup(void **state)
{
	(void)state;
	static const char *fams[] = {"qwen2_audio"};
	return gen_fixtures("reference_qwen2_audio", fams, 1);
}

static void test_audio_pass(void **state)
{
	(void)state;
	expect_pass("qwen2_audio", 1, 1, WT_QUANT_NONE, 0);
	expect_pass("qwen2_audio", 2, 1, WT_QUANT_NONE, 0);
	expect_pass("qwen2_audio", 4, 1, WT_QUANT_NONE, 0); /* KV 2 < TP 4 */
	expect_pass("qwen2_audio", 2, 1, WT_QUANT_INT8_CHANNEL, 0);
	expect_pass("qwen2_audio", 4, 1, WT_QUANT_FP8_CHANNEL, 0);
}

/* (row, column, transformers 4.57.1 logit), tokens g_tokens */
static const gold_pt gold_qa[] = {
    {0, 22, -9.66223180e-02f},  {0, 668, 1.37302861e-01f},  {0, 803, -9.82531458e-02f},
    {0, 807, 4.31873083e-01f},  {1, 53, 2.08482027e-01f},   {1, 277, -5.39345555e-02f},
    {1, 284, 1.88224539e-01f},  {1, 977, -1.43761754e-01f}, {2, 1, -1.34971738e-01f},
    {2, 45, -7.00889006e-02f},  {2, 48, 3.77976708e-02f},   {2, 130, -1.79723930e-02f},
    {3, 234, -1.71275064e-01f}, {3, 282, -2.52957251e-02f}, {3, 650, 1.55722767e-01f},
    {3, 748, -1.71255842e-01f}, {4, 177, -2.50917941e-01f}, {4, 796, 1.46244496e-01f},
    {4, 844, -1.09285839e-01f}, {4, 895, -8.39644372e-02f}, {5, 491, -2.66247690e-01f},
    {5, 662, -1.91406518e-01f}, {5, 664, 1.98926419e-01f},  {5, 676, 7.46576786e-02f},
    {6, 270, -1.16651401e-01f}, {6, 361, -3.42759669e-01f}, {6, 879, -2.15191796e-01f},
    {6, 900, 3.65519881e-01f},
};

/* The full path's logits at the golden points, within 1e-5 (over all 7000 logits 4.8e-7 of
 * max |logit| 0.82: Qwen2AudioForConditionalGeneration.from_pretrained of the fixture,
 * strict, untied; the full model on input_ids, eager, float32) */
#define GOLD_TOL 1e-5

static void test_audio_transformers(void **state)
{
	(void)state;
	expect_gold("qwen2_audio", V_QA, GOLD_TOL, gold_qa, sizeof(gold_qa) / sizeof(gold_qa[0]));
}

static void test_audio_caught(void **state)
{
	(void)state;
	expect_swapped("qwen2_audio", 2, 1, A1 "qkv_proj.weight", "qkv exchanged between ranks");
	expect_swapped("qwen2_audio", 2, 1, A1 "qkv_proj.bias", "qkv biases exchanged");
	expect_swapped("qwen2_audio", 2, 1, A1 "o_proj.weight", "o_proj columns exchanged");
	expect_halves_swapped("qwen2_audio", 2, 1,
	                      (tamper_halves){M1 "gate_up_proj.weight", 0, 1, 128, 256},
	                      "gate / up halves swapped");
}

/* The fixture as read: Qwen2's math (q/k/v biases), untied, d 32, 2 layers; the encoder and
 * the projector under their names. */
static void test_audio_fixture_cfg(void **state)
{
	(void)state;
	model m = {0};
	ref_set ck = {0};
	ref_cfg c;
	wt_errbuf err = {0};
	open_model(&m, "qwen2_audio");
	assert_int_equal(ref_load_ckpt(m.c, &c, &ck, &err), WT_OK);
	assert_true(c.kind == REF_DENSE && c.cohere == 0 && !c.tied && c.d == 32 && c.H == 4 &&
	            c.KV == 2 && c.I == 256 && c.hid == 128 && c.V == V_QA && c.L == 2);
	assert_non_null(find_tensor(&ck, "model.embed_tokens.weight"));
	assert_non_null(find_tensor(&ck, "lm_head.weight"));
	assert_non_null(find_tensor(&ck, "model.layers.0.self_attn.q_proj.bias"));
	assert_non_null(find_tensor(&ck, "audio_tower.conv1.weight"));
	assert_non_null(find_tensor(&ck, "multi_modal_projector.linear.bias"));
	ref_set_clear(&ck);
	close_model(&m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_audio_pass),
	    cmocka_unit_test(test_audio_transformers),
	    cmocka_unit_test(test_audio_caught),
	    cmocka_unit_test(test_audio_fixture_cfg),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
