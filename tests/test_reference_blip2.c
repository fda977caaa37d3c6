/*
 * test_reference_blip2.c — the reference forward pass over BLIP-2's language model
 * (Blip2ForConditionalGeneration: OPT under language_model., read as OPTForCausalLM's names;
 * the BLIP tower, query_tokens, Q-Former and language_projection loaded, unused on text
 * tokens): full and sharded logits agree within REF_TOL_F32 (TP 1, 2, 4) or the quantized
 * layouts' budgets; the full path's logits equal transformers 4.57.1's
 * (Blip2ForConditionalGeneration, eager, float32) at 28 points; rank tensors broken the way a
 * wrong planner would break them are caught; text_config's keys are the ones read. Fixture
 * from $WT_BUILD/wt-mkckpt --family blip2 (OPT hid 128, H 8, ffn_dim 256, V 1000, 2 layers,
 * tied; seed printed).
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

#define V_B2 1000
#define L1   "model.decoder.layers.1."

static int setup(void **state)
{
	(void)state;
	static const char *fams[] = {"blip2"};
	return gen_fixtures("reference_blip2", fams, 1);
}

static void test_blip2_pass(void **state)
{
	(void)state;
	expect_pass_tp("blip2", false);
}

/* (row, column, transformers 4.57.1 logit), tokens g_tokens:
 * Blip2ForConditionalGeneration.from_pretrained of the fixture (strict: no missing,
 * unexpected or mismatched key; lm_head tied by text_config), eager, float32, its
 * language_model on input_ids (equal to get_input_embeddings() then language_model on
 * inputs_embeds) */
static const gold_pt gold_blip2[] = {
    {0, 22, 6.20337762e-02f},   {0, 668, -1.64915565e-02f}, {0, 803, -9.81463864e-03f},
    {0, 807, 3.38609636e-01f},  {1, 53, -1.14616245e-01f},  {1, 277, 1.76726744e-01f},
    {1, 284, -1.86505809e-01f}, {1, 977, 1.54934987e-01f},  {2, 1, 2.50354856e-01f},
    {2, 45, 2.14880809e-01f},   {2, 48, -2.30607972e-01f},  {2, 130, -2.47811213e-01f},
    {3, 234, -6.06918521e-02f}, {3, 282, 2.52809495e-01f},  {3, 650, 1.48573309e-01f},
    {3, 748, -1.37098685e-01f}, {4, 177, 9.99324024e-02f},  {4, 796, 7.58225620e-02f},
    {4, 844, -1.80125348e-02f}, {4, 895, -3.20945382e-01f}, {5, 491, 5.25512397e-02f},
    {5, 662, -6.55461848e-02f}, {5, 664, 9.98103619e-02f},  {5, 676, 1.26433238e-01f},
    {6, 270, 5.94161823e-03f},  {6, 361, -3.37641686e-01f}, {6, 879, 3.40168118e-01f},
    {6, 900, 2.90531874e-01f},
};

/* The full path's logits at the golden points, within 1e-5 (over all 7000 logits 5.4e-7 of
 * max |logit| 0.74). */
#define GOLD_TOL 1e-5

static void test_blip2_transformers(void **state)
{
	(void)state;
	expect_gold("blip2", V_B2, GOLD_TOL, gold_blip2,
	            sizeof(gold_blip2) / sizeof(gold_blip2[0]));
}

static void test_blip2_caught(void **state)
{
	(void)state;
	expect_halves_swapped("blip2", 2, 1,
	                      (tamper_halves){L1 "self_attn.qkv_proj.weight", 1, 1, 64, 128 * 2},
	                      "rank 1's q and k rows exchanged");
	expect_swapped("blip2", 2, 1, L1 "self_attn.out_proj.weight", "out_proj columns exchanged");
	expect_swapped("blip2", 2, 1, L1 "fc1.bias", "fc1 bias slices exchanged");
}

/* The language model's keys are text_config's: the fixture's read as OPT's (tied by
 * text_config's default); text_config's activation_function, enable_bias and tie win over the
 * top level's (laid over it, as for the other composite configs), and a text_config without
 * model_type is OPT's. */
static void test_blip2_config(void **state)
{
	(void)state;
	model m = {0};
	ref_set ck = {0};
	ref_cfg c;
	wt_errbuf err = {0};
	open_model(&m, "blip2");
	assert_int_equal(ref_load_ckpt(m.c, &c, &ck, &err), WT_OK);
	assert_true(c.opt && c.opt_pre && c.opt_fnorm && c.opt_bias && c.kind == REF_DENSE &&
	            c.tied && c.d == 16 && c.H == 8 && c.wep == 128 && c.max_pos == 64 &&
	            c.I == 256 && c.L == 2 && c.act == REF_ACT_RELU);
	ref_set_clear(&ck);
	close_model(&m);
#define B2 "{\"architectures\": [\"Blip2ForConditionalGeneration\"], \"model_type\": \"blip-2\", "
#define LMK                                                                                        \
	"\"hidden_size\": 64, \"num_attention_heads\": 4, \"num_hidden_layers\": 2, "              \
	"\"ffn_dim\": 256, \"vocab_size\": 100"
	static const char nested[] =
	    B2 "\"activation_function\": \"gelu\", \"enable_bias\": false, \"text_config\": {" LMK
	       ", \"model_type\": \"opt\", \"activation_function\": \"relu\", "
	       "\"enable_bias\": true, \"tie_word_embeddings\": false}}";
	assert_int_equal(ref_cfg_parse_json(nested, strlen(nested), &c, &err), WT_OK);
	assert_true(c.opt && c.opt_bias && c.act == REF_ACT_RELU && c.H == 4 && c.d == 16 &&
	            c.I == 256 && !c.tied);
	static const char bare[] = B2 "\"text_config\": {" LMK ", \"enable_bias\": false}}";
	assert_int_equal(ref_cfg_parse_json(bare, strlen(bare), &c, &err), WT_OK);
	assert_true(c.opt && !c.opt_bias && c.tied && c.wep == 64);
	expect_cfg(B2 "\"text_config\": {" LMK ", \"layer_norm_elementwise_affine\": false}}",
	           WT_EUNSUPPORTED, "layer_norm_elementwise_affine");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_blip2_pass),
	    cmocka_unit_test(test_blip2_transformers),
	    cmocka_unit_test(test_blip2_caught),
	    cmocka_unit_test(test_blip2_config),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
