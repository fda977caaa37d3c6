/*
 * test_reference_voxtral.c — the reference forward pass over Voxtral's language model
 * (VoxtralForConditionalGeneration on text tokens: Llama's math in reference/reference.c,
 * language_model.* read as the text model's names, the Whisper encoder and the projector
 * loaded, not run, as docs/reference.md says for the multimodal families): untied. Full and
 * sharded logits agree within REF_TOL_F32 (TP 1, 2, 4) or the quantized layouts' budgets; the
 * full path's logits equal transformers 4.57.1's (eager, float32) at 28 points; rank tensors
 * broken the way a wrong planner would break them are caught. The fixture comes from
 * $WT_BUILD/wt-mkckpt --family voxtral (hid 128, H 4, KV 2, d 32, I 256, V 1000, 2 layers; a
 * Whisper encoder of 2 layers, hidden 64).
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

#define V_VX 1000
#define A1   "model.layers.1.self_attn."
#define M1   "model.layers.1.mlp."

static int setup(void **state)
{
	(void)state;
	static const char *fams[] = {"voxtral"};
	return gen_fixtures("reference_voxtral", fams, 1);
}

static void test_voxtral_pass(void **state)
{
	(void)state;
	expect_pass("voxtral", 1, 1, WT_QUANT_NONE, 0);
	expect_pass("voxtral", 2, 1, WT_QUANT_NONE, 0);
	expect_pass("voxtral", 4, 1, WT_QUANT_NONE, 0); /* KV 2 < TP 4 */
	expect_pass("voxtral", 2, 1, WT_QUANT_INT8_CHANNEL, 0);
	expect_pass("voxtral", 4, 1, WT_QUANT_FP8_CHANNEL, 0);
}

/* (row, column, transformers 4.57.1 logit), tokens g_tokens */
static const gold_pt gold_vx[] = {
    {0, 623, -1.37909532e-01f}, {0, 683, -6.09508008e-02f}, {0, 897, 2.21616283e-01f},
    {0, 942, 1.22140810e-01f},  {1, 55, 2.57351786e-01f},   {1, 224, 2.61510491e-01f},
    {1, 285, -2.01998819e-02f}, {1, 299, 2.48794034e-01f},  {2, 131, -3.47507864e-01f},
    {2, 498, -2.34393589e-02f}, {2, 797, -2.69577026e-01f}, {2, 819, -4.79511954e-02f},
    {3, 278, -8.19655806e-02f}, {3, 302, -4.97170746e-01f}, {3, 340, 8.94646570e-02f},
    {3, 719, 2.20619842e-01f},  {4, 476, -8.96982700e-02f}, {4, 503, 1.14452481e-01f},
    {4, 553, 4.24316615e-01f},  {4, 581, 2.11234406e-01f},  {5, 341, 3.56201351e-01f},
    {5, 621, -1.35995090e-01f}, {5, 698, 1.85756922e-01f},  {5, 790, 4.01514322e-01f},
    {6, 159, 8.80176574e-03f},  {6, 612, 9.36869606e-02f},  {6, 842, -3.10227007e-01f},
    {6, 856, -5.26253223e-01f},
};

/* The full path's logits at the golden points, within 1e-5 (measured 2.4e-7; over all 7000
 * logits 4.2e-7 of max |logit| 0.84: VoxtralForConditionalGeneration.from_pretrained of the
 * fixture, strict, untied; the full model on input_ids, eager, float32) */
#define GOLD_TOL 1e-5

static void test_voxtral_transformers(void **state)
{
	(void)state;
	expect_gold("voxtral", V_VX, GOLD_TOL, gold_vx, sizeof(gold_vx) / sizeof(gold_vx[0]));
}

static void test_voxtral_caught(void **state)
{
	(void)state;
	expect_swapped("voxtral", 2, 1, A1 "qkv_proj.weight", "qkv exchanged between ranks");
	expect_swapped("voxtral", 2, 1, A1 "o_proj.weight", "o_proj columns exchanged");
	expect_halves_swapped("voxtral", 2, 1,
	                      (tamper_halves){M1 "gate_up_proj.weight", 0, 1, 128, 256},
	                      "gate / up halves swapped");
}

/* The fixture as read: Llama's math, untied, d 32 (text_config's head_dim), 2 layers; the
 * encoder and the projector under their names. */
static void test_voxtral_fixture_cfg(void **state)
{
	(void)state;
	model m = {0};
	ref_set ck = {0};
	ref_cfg c;
	wt_errbuf err = {0};
	open_model(&m, "voxtral");
	assert_int_equal(ref_load_ckpt(m.c, &c, &ck, &err), WT_OK);
	assert_true(c.kind == REF_DENSE && c.cohere == 0 && !c.tied && c.d == 32 && c.H == 4 &&
	            c.KV == 2 && c.I == 256 && c.hid == 128 && c.V == V_VX && c.L == 2);
	assert_non_null(find_tensor(&ck, "model.embed_tokens.weight"));
	assert_non_null(find_tensor(&ck, "lm_head.weight"));
	assert_non_null(find_tensor(&ck, "audio_tower.conv1.weight"));
	assert_non_null(find_tensor(&ck, "multi_modal_projector.linear_2.weight"));
	ref_set_clear(&ck);
	close_model(&m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_voxtral_pass),
	    cmocka_unit_test(test_voxtral_transformers),
	    cmocka_unit_test(test_voxtral_caught),
	    cmocka_unit_test(test_voxtral_fixture_cfg),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
