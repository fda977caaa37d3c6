/*
 * test_reference_granite_speech.c — the reference forward pass over Granite Speech's language
 * model (GraniteSpeechForConditionalGeneration: Granite under language_model., read as
 * GraniteForCausalLM's names; the conformer encoder and the Q-Former projector loaded, unused
 * on text tokens): full and sharded logits agree within REF_TOL_F32 (TP 1, 2, 4) or the
 * quantized layouts' budgets; the full path's logits equal transformers 4.57.1's
 * (GraniteSpeechForConditionalGeneration, eager, float32) at 28 points; rank tensors broken
 * the way a wrong planner would break them are caught; text_config's keys are the ones read.
 * Fixture from $WT_BUILD/wt-mkckpt --family granite_speech (hid 128, H 4, KV 2, I 256,
 * V 1000, 2 layers, granite-3.3's multipliers; seed printed).
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

#define V_GS 1000
#define A1   "model.layers.1.self_attn."
#define M1   "model.layers.1.mlp."

static int setup(void **state)
{
	(void)state;
	static const char *fams[] = {"granite_speech"};
	return gen_fixtures("reference_granite_speech", fams, 1);
}

static void test_speech_pass(void **state)
{
	(void)state;
	expect_pass_tp("granite_speech", false);
}

/* (row, column, transformers 4.57.1 logit), tokens g_tokens:
 * GraniteSpeechForConditionalGeneration.from_pretrained of the fixture (strict, untied),
 * eager, float32, on input_ids (audio_token_index 49155 is none of them: the model's logits
 * are its language model's) */
static const gold_pt gold_speech[] = {
    {0, 22, -9.04941652e-03f},  {0, 668, 5.17060934e-03f},  {0, 803, -5.17777307e-03f},
    {0, 807, 1.59351509e-02f},  {1, 53, -2.13037655e-02f},  {1, 277, 1.46964584e-02f},
    {1, 284, -3.03513687e-02f}, {1, 977, 3.51906233e-02f},  {2, 1, -4.63006198e-02f},
    {2, 45, 3.86152267e-02f},   {2, 48, 2.74629090e-02f},   {2, 130, 1.33920172e-02f},
    {3, 234, 1.11122569e-02f},  {3, 282, 3.11717410e-02f},  {3, 650, 3.52704036e-03f},
    {3, 748, 6.27337070e-03f},  {4, 177, -5.24348021e-02f}, {4, 796, 8.90869647e-03f},
    {4, 844, 5.24323434e-04f},  {4, 895, -3.33775394e-03f}, {5, 491, 1.23891607e-03f},
    {5, 662, -6.87650498e-03f}, {5, 664, -2.30830945e-02f}, {5, 676, -2.13218722e-02f},
    {6, 270, 2.22764146e-02f},  {6, 361, 4.06866893e-02f},  {6, 879, 1.37537159e-02f},
    {6, 900, -8.70109908e-03f},
};

/* The full path's logits at the golden points, within 1e-6 (over all 7000 logits 6.0e-8 of
 * max |logit| 0.106: logits_scaling 8 keeps them small). */
#define GOLD_TOL 1e-6

static void test_speech_transformers(void **state)
{
	(void)state;
	expect_gold("granite_speech", V_GS, GOLD_TOL, gold_speech,
	            sizeof(gold_speech) / sizeof(gold_speech[0]));
}

static void test_speech_caught(void **state)
{
	(void)state;
	expect_swapped("granite_speech", 2, 1, A1 "qkv_proj.weight", "qkv exchanged between ranks");
	expect_swapped("granite_speech", 2, 1, A1 "o_proj.weight", "o_proj columns exchanged");
	expect_halves_swapped("granite_speech", 2, 1,
	                      (tamper_halves){M1 "gate_up_proj.weight", 0, 1, 128, 256},
	                      "gate / up halves swapped");
}

/* The fixture as read: Granite's math with text_config's multipliers, untied, d 32; the
 * encoder and the projector under their names. */
static void test_speech_fixture_cfg(void **state)
{
	(void)state;
	model m = {0};
	ref_set ck = {0};
	ref_cfg c;
	wt_errbuf err = {0};
	open_model(&m, "granite_speech");
	assert_int_equal(ref_load_ckpt(m.c, &c, &ck, &err), WT_OK);
	assert_true(c.kind == REF_DENSE && c.granite && !c.tied && c.d == 32 && c.H == 4 &&
	            c.KV == 2 && c.I == 256 && c.hid == 128 && c.V == V_GS && c.L == 2);
	assert_true(c.embed_scale == 12.0f && c.resid_mult == 0.22 && c.attn_scale == 0.015625 &&
	            c.logits_div == 8.0 && c.eps == 1e-5);
	assert_float_equal(c.theta, 10000000.0, 0.0);
	assert_non_null(find_tensor(&ck, "model.embed_tokens.weight"));
	assert_non_null(find_tensor(&ck, "lm_head.weight"));
	assert_non_null(find_tensor(&ck, "encoder.layers.0.conv.up_conv.weight"));
	assert_non_null(find_tensor(&ck, "projector.qformer.encoder.layer.0.crossattention."
	                                 "attention.key.weight"));
	ref_set_clear(&ck);
	close_model(&m);
}

/* text_config's keys, GraniteConfig's defaults where it leaves them out (multipliers 1.0,
 * rms_norm_eps 1e-6, untied), the tie text_config's alone. */
static void test_speech_config(void **state)
{
	(void)state;
	ref_cfg c;
	wt_errbuf err = {0};
#define GS                                                                                         \
	"{\"architectures\": [\"GraniteSpeechForConditionalGeneration\"], \"model_type\": "        \
	"\"granite_speech\", "
#define LMK                                                                                        \
	"\"hidden_size\": 64, \"num_attention_heads\": 4, \"num_hidden_layers\": 2, "              \
	"\"intermediate_size\": 256, \"vocab_size\": 100"
	static const char bare[] = GS "\"tie_word_embeddings\": true, \"text_config\": {" LMK "}}";
	assert_int_equal(ref_cfg_parse_json(bare, strlen(bare), &c, &err), WT_OK);
	assert_true(c.granite && !c.tied && c.H == 4 && c.KV == 4 && c.d == 16 &&
	            c.embed_scale == 1.0f && c.resid_mult == 1.0 && c.attn_scale == 1.0 &&
	            c.logits_div == 1.0 && c.eps == 1e-6);
	static const char tied[] = GS "\"tie_word_embeddings\": false, \"text_config\": {" LMK
	                              ", \"tie_word_embeddings\": true, \"logits_scaling\": 4.0}}";
	assert_int_equal(ref_cfg_parse_json(tied, strlen(tied), &c, &err), WT_OK);
	assert_true(c.granite && c.tied && c.logits_div == 4.0);
	static const char sizes[] = GS "\"text_config\": {\"model_type\": \"granite\"}}";
	assert_int_equal(ref_cfg_parse_json(sizes, strlen(sizes), &c, &err), WT_OK);
	assert_true(c.hid == 4096 && c.H == 32 && c.KV == 32 && c.I == 11008 && c.L == 32 &&
	            c.V == 32000);
	expect_cfg(GS "\"text_config\": {" LMK ", \"logits_scaling\": 1e-300}}", WT_EUNSUPPORTED,
	           "logits_scaling");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_speech_pass),   cmocka_unit_test(test_speech_transformers),
	    cmocka_unit_test(test_speech_caught), cmocka_unit_test(test_speech_fixture_cfg),
	    cmocka_unit_test(test_speech_config),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
