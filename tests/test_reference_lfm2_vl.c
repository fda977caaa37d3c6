/*
 * test_reference_lfm2_vl.c — the reference forward pass over LFM2-VL's language model
 * (Lfm2VlForConditionalGeneration: LFM2 under model.language_model., read as
 * Lfm2ForCausalLM's names; the SigLIP2 tower and the projector loaded, unused on text
 * tokens): full and sharded logits agree within REF_TOL_F32 (TP 1, 2, 4) or the quantized
 * layouts' budgets; the full path's logits equal transformers 4.57.1's
 * (Lfm2VlForConditionalGeneration, eager, float32) at 28 points; rank tensors broken the way a
 * wrong planner would break them are caught; the language model's keys are text_config's.
 * Fixture from $WT_BUILD/wt-mkckpt --family lfm2_vl (hid 256, H 8, KV 4, d 32, MLP 512, conv
 * 3 taps, V 1000, 4 layers (2 attention), untied; seed printed).
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

#define V_LV 1000
#define S0   "model.layers.0.short_conv."
#define A2   "model.layers.2.self_attn."

static int setup(void **state)
{
	(void)state;
	static const char *fams[] = {"lfm2_vl"};
	return gen_fixtures("reference_lfm2_vl", fams, 1);
}

static void test_lfm2_vl_pass(void **state)
{
	(void)state;
	expect_pass_tp("lfm2_vl", false);
}

/* (row, column, transformers 4.57.1 logit), tokens g_tokens:
 * Lfm2VlForConditionalGeneration.from_pretrained of the fixture (strict, untied), eager,
 * float32, on input_ids */
static const gold_pt gold_lfm2_vl[] = {
    {0, 22, -1.67382777e-01f},  {0, 668, 8.96483138e-02f},  {0, 803, -1.21556967e-01f},
    {0, 807, 3.96686435e-01f},  {1, 53, -1.06486998e-01f},  {1, 277, 1.79230243e-01f},
    {1, 284, -1.64977878e-01f}, {1, 977, 2.95068830e-01f},  {2, 1, -6.95697516e-02f},
    {2, 45, 3.73024404e-01f},   {2, 48, -1.70957744e-01f},  {2, 130, 7.75282860e-01f},
    {3, 234, -2.95741737e-01f}, {3, 282, -1.75798282e-01f}, {3, 650, 1.54288650e-01f},
    {3, 748, 1.32439882e-01f},  {4, 177, 2.89302945e-01f},  {4, 796, 1.31647557e-01f},
    {4, 844, 1.47931904e-01f},  {4, 895, 2.23678261e-01f},  {5, 491, -1.77536815e-01f},
    {5, 662, 7.38849342e-01f},  {5, 664, -3.64648730e-01f}, {5, 676, 3.08473170e-01f},
    {6, 270, -1.74015015e-01f}, {6, 361, -1.89353764e-01f}, {6, 879, 2.97357321e-01f},
    {6, 900, -1.21430606e-01f},
};

/* The full path's logits at the golden points, within 1e-5 (measured 1.1e-6; over all 7000
 * logits 2.4e-6 of max |logit| 1.32). */
#define GOLD_TOL 1e-5

static void test_lfm2_vl_transformers(void **state)
{
	(void)state;
	expect_gold("lfm2_vl", V_LV, GOLD_TOL, gold_lfm2_vl,
	            sizeof(gold_lfm2_vl) / sizeof(gold_lfm2_vl[0]));
}

static void test_lfm2_vl_caught(void **state)
{
	(void)state;
	expect_swapped("lfm2_vl", 2, 1, A2 "qkv_proj.weight",
	               "the ranks' qkv_proj heads exchanged");
	expect_swapped("lfm2_vl", 2, 1, S0 "out_proj.weight",
	               "short_conv.out_proj columns exchanged");
	expect_halves_swapped(
	    "lfm2_vl", 2, 1,
	    (tamper_halves){"model.layers.1.feed_forward.w13.weight", 1, 1, 256, 256 * 2},
	    "rank 1's w13 gate / up exchanged");
	expect_halves_swapped("lfm2_vl", 2, 1,
	                      (tamper_halves){S0 "in_proj.weight", 1, 1, 128, 256 * 2},
	                      "rank 1's in_proj B and C exchanged");
}

/* The language model's keys are text_config's: the fixture's read as LFM2's; the tie is
 * text_config's alone (a top-level key says nothing). */
static void test_lfm2_vl_config(void **state)
{
	(void)state;
	model m = {0};
	ref_set ck = {0};
	ref_cfg c;
	wt_errbuf err = {0};
	open_model(&m, "lfm2_vl");
	assert_int_equal(ref_load_ckpt(m.c, &c, &ck, &err), WT_OK);
	assert_true(c.lfm2 && c.kind == REF_DENSE && !c.tied && !c.lfm2_conv_bias && c.d == 32 &&
	            c.L == 4 && c.I == 512 && c.lfm2_kconv == 3 && c.hid == 256 && c.V == 1000);
	for (int64_t l = 0; l < 4; l++)
		assert_int_equal(ref_lfm2_conv(&c, l), l != 2);
	assert_float_equal(c.eps, 1e-5, 1e-15);
	assert_float_equal(c.theta, 1000000.0, 1e-6);
	ref_set_clear(&ck);
	close_model(&m);
#define LV(top, text)                                                                              \
	"{\"architectures\": [\"Lfm2VlForConditionalGeneration\"], \"model_type\": \"lfm2_vl\", "  \
	"\"vision_config\": {\"vision_use_head\": false}" top ", \"text_config\": {"               \
	"\"hidden_size\": 64, \"num_attention_heads\": 4, \"num_key_value_heads\": 2, "            \
	"\"num_hidden_layers\": 4, \"vocab_size\": 100" text "}}"
	/* Lfm2Config's defaults under text_config: every layer attention, MLP 12288 -> 8192,
	 * tied whatever the top level says */
	static const char plain[] = LV(", \"tie_word_embeddings\": false", "");
	assert_int_equal(ref_cfg_parse_json(plain, strlen(plain), &c, &err), WT_OK);
	assert_true(c.lfm2 && c.tied && c.I == 8192 && c.lfm2_kconv == 3 && c.d == 16);
	for (int64_t l = 0; l < 4; l++)
		assert_false(ref_lfm2_conv(&c, l));
	static const char orig[] =
	    LV(", \"tie_word_embeddings\": true",
	       ", \"full_attn_idxs\": [1, 3], \"block_ff_dim\": 300, \"theta\": 5000.0, "
	       "\"tie_embedding\": false, \"norm_eps\": 1e-6, \"conv_L_cache\": 4, "
	       "\"block_multiple_of\": 64");
	assert_int_equal(ref_cfg_parse_json(orig, strlen(orig), &c, &err), WT_OK);
	for (int64_t l = 0; l < 4; l++)
		assert_int_equal(ref_lfm2_conv(&c, l), l % 2 == 0);
	assert_true(!c.tied && c.I == 256 && c.lfm2_kconv == 4);
	assert_float_equal(c.theta, 5000.0, 1e-9);
	assert_float_equal(c.eps, 1e-6, 1e-15);
	expect_cfg(LV("", ", \"layer_types\": [\"conv\"]"), WT_ECORRUPT, "layer_types has 1");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_lfm2_vl_pass),
	    cmocka_unit_test(test_lfm2_vl_transformers),
	    cmocka_unit_test(test_lfm2_vl_caught),
	    cmocka_unit_test(test_lfm2_vl_config),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
