/*
 * test_reference_qwen2_5_omni.c — the reference forward pass over Qwen2.5-Omni's thinker
 * language model (Qwen2_5OmniForConditionalGeneration on text tokens: Qwen2's math in
 * reference/reference.c, q/k/v biases, thinker.* read as the text model's names; M-RoPE over
 * text positions is 1-D RoPE; the vision tower, the audio encoder and the speech generator
 * loaded, not run, as docs/reference.md says for the multimodal families): untied. Full and
 * sharded logits agree within REF_TOL_F32 (TP 1, 2, 4) or the quantized layouts' budgets; the
 * full path's logits equal transformers 4.57.1's (eager, float32) at 28 points; rank tensors
 * broken the way a wrong planner would break them are caught. The fixture comes from
 * $WT_BUILD/wt-mkckpt --family qwen2_5_omni (hid 128, H 4, KV 2, d 32, I 256, V 1000, 2
 * layers; thinker_config nests the text, vision and audio configs).
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

#define V_QO 1000
#define A1   "model.layers.1.self_attn."
#define M1   "model.layers.1.mlp."

static int setup(void **state)
{
	(void)state;
	static const char *fams[] = {"qwen2_5_omni"};
	return gen_fixtures("reference_qwen2_5_omni", fams, 1);
}

static void test_qwen2_5_omni_pass(void **state)
{
	(void)state;
	expect_pass("qwen2_5_omni", 1, 1, WT_QUANT_NONE, 0);
	expect_pass("qwen2_5_omni", 2, 1, WT_QUANT_NONE, 0);
	expect_pass("qwen2_5_omni", 4, 1, WT_QUANT_NONE, 0); /* KV 2 < TP 4 */
	expect_pass("qwen2_5_omni", 2, 1, WT_QUANT_INT8_CHANNEL, 0);
	expect_pass("qwen2_5_omni", 4, 1, WT_QUANT_FP8_CHANNEL, 0);
}

/* (row, column, transformers 4.57.1 logit), tokens g_tokens */
static const gold_pt gold_qo[] = {
    {0, 284, 9.58294868e-02f},  {0, 580, 2.21386880e-01f},  {0, 599, -8.31232592e-02f},
    {0, 615, -1.42196327e-01f}, {1, 126, -2.61212200e-01f}, {1, 149, -1.41316980e-01f},
    {1, 521, -1.50618777e-01f}, {1, 964, 2.66532861e-02f},  {2, 91, 3.34564745e-01f},
    {2, 704, -6.92927122e-01f}, {2, 726, 1.77930012e-01f},  {2, 866, -3.03064466e-01f},
    {3, 239, -6.87850416e-02f}, {3, 339, -3.86707276e-01f}, {3, 392, 2.35614523e-01f},
    {3, 556, 7.51557723e-02f},  {4, 196, -8.28190669e-02f}, {4, 597, -1.96694136e-01f},
    {4, 731, 1.12191841e-01f},  {4, 904, 7.26917684e-02f},  {5, 85, 8.76818523e-02f},
    {5, 616, -1.44502714e-01f}, {5, 748, -1.39782518e-01f}, {5, 900, 3.71959269e-01f},
    {6, 196, -1.48652524e-01f}, {6, 322, -1.07450716e-01f}, {6, 475, -3.26336920e-01f},
    {6, 960, -4.17060226e-01f},
};

/* The full path's logits at the golden points, within 1e-5 (over all 7000 logits 4.2e-7 of max
 * |logit| 0.83: Qwen2_5OmniThinkerForConditionalGeneration.from_pretrained of the fixture's
 * thinker.* tensors with its thinker_config, strict (no missing / unexpected / mismatched key),
 * untied; on input_ids, eager, float32) */
#define GOLD_TOL 1e-5

static void test_qwen2_5_omni_transformers(void **state)
{
	(void)state;
	expect_gold("qwen2_5_omni", V_QO, GOLD_TOL, gold_qo, sizeof(gold_qo) / sizeof(gold_qo[0]));
}

static void test_qwen2_5_omni_caught(void **state)
{
	(void)state;
	expect_swapped("qwen2_5_omni", 2, 1, A1 "qkv_proj.weight", "qkv exchanged between ranks");
	expect_swapped("qwen2_5_omni", 2, 1, A1 "qkv_proj.bias", "qkv bias exchanged");
	expect_swapped("qwen2_5_omni", 2, 1, A1 "o_proj.weight", "o_proj columns exchanged");
	expect_halves_swapped("qwen2_5_omni", 2, 1,
	                      (tamper_halves){M1 "gate_up_proj.weight", 0, 1, 128, 256},
	                      "gate / up halves swapped");
}

/* The fixture as read: Qwen2's math (q/k/v biases), untied, d 32, 2 layers, rope_theta 1e6 and
 * rms_norm_eps 1e-6 of thinker_config.text_config; the towers and the speech generator under
 * their names without thinker. */
static void test_qwen2_5_omni_fixture_cfg(void **state)
{
	(void)state;
	model m = {0};
	ref_set ck = {0};
	ref_cfg c;
	wt_errbuf err = {0};
	open_model(&m, "qwen2_5_omni");
	assert_int_equal(ref_load_ckpt(m.c, &c, &ck, &err), WT_OK);
	assert_true(c.kind == REF_DENSE && !c.tied && c.d == 32 && c.H == 4 && c.KV == 2 &&
	            c.I == 256 && c.hid == 128 && c.V == V_QO && c.L == 2);
	assert_true(fabs(c.theta - 1e6) < 1 && fabs(c.eps - 1e-6) < 1e-12);
	assert_non_null(find_tensor(&ck, "model.embed_tokens.weight"));
	assert_non_null(find_tensor(&ck, "model.layers.0.self_attn.q_proj.bias"));
	assert_non_null(find_tensor(&ck, "lm_head.weight"));
	assert_non_null(find_tensor(&ck, "visual.blocks.0.attn.q.weight"));
	assert_non_null(find_tensor(&ck, "audio_tower.conv1.weight"));
	assert_non_null(find_tensor(&ck, "talker.codec_head.weight"));
	ref_set_clear(&ck);
	close_model(&m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_qwen2_5_omni_pass),
	    cmocka_unit_test(test_qwen2_5_omni_transformers),
	    cmocka_unit_test(test_qwen2_5_omni_caught),
	    cmocka_unit_test(test_qwen2_5_omni_fixture_cfg),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
