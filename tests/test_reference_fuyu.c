/*
 * test_reference_fuyu.c — the reference forward pass over Fuyu's language model
 * (FuyuForCausalLM: Persimmon under language_model., read as PersimmonForCausalLM's names;
 * vision_embed_tokens loaded, unused on text tokens): full and sharded logits agree within
 * REF_TOL_F32 (TP 1, 2, 4) or the quantized layouts' budgets; the full path's logits equal
 * transformers 4.57.1's (FuyuForCausalLM, eager, float32) at 28 points; rank tensors broken
 * the way a wrong planner would break them are caught; the text_config's keys are the ones
 * read. Fixture from $WT_BUILD/wt-mkckpt --family fuyu (hid 128, H 8, I 512, V 1000,
 * 2 layers; seed printed).
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

#define V_FY 1000
#define A1   "model.layers.1.self_attn."

static int setup(void **state)
{
	(void)state;
	static const char *fams[] = {"fuyu"};
	return gen_fixtures("reference_fuyu", fams, 1);
}

static void test_fuyu_pass(void **state)
{
	(void)state;
	expect_pass_tp("fuyu", false);
}

/* (row, column, transformers 4.57.1 logit), tokens g_tokens: FuyuForCausalLM.from_pretrained
 * of the fixture (strict, untied), eager, float32, on input_ids */
static const gold_pt gold_fuyu[] = {
    {0, 22, 2.15893894e-01f},   {0, 668, 2.91819543e-01f},  {0, 803, -2.63843864e-01f},
    {0, 807, 2.23992392e-01f},  {1, 53, 3.06998163e-01f},   {1, 277, -2.61959434e-01f},
    {1, 284, -1.25936925e-01f}, {1, 977, 1.88033208e-01f},  {2, 1, -1.73304100e-02f},
    {2, 45, 1.14281047e-02f},   {2, 48, 3.75159025e-01f},   {2, 130, -4.84523177e-02f},
    {3, 234, 6.58988416e-01f},  {3, 282, 2.26993829e-01f},  {3, 650, -3.52165610e-01f},
    {3, 748, 2.50569899e-02f},  {4, 177, 2.19999149e-01f},  {4, 796, 6.61817640e-02f},
    {4, 844, 3.51888835e-01f},  {4, 895, 3.60606492e-01f},  {5, 491, -2.35140234e-01f},
    {5, 662, 1.83826685e-02f},  {5, 664, -2.37804294e-01f}, {5, 676, -1.05582975e-01f},
    {6, 270, -3.46850961e-01f}, {6, 361, 1.25192314e-01f},  {6, 879, 2.99989820e-01f},
    {6, 900, -2.21673042e-01f},
};

/* The full path's logits at the golden points, within 1e-5 (over all 7000 logits 5.7e-7 of
 * max |logit| 1.05). */
#define GOLD_TOL 1e-5

static void test_fuyu_transformers(void **state)
{
	(void)state;
	expect_gold("fuyu", V_FY, GOLD_TOL, gold_fuyu, sizeof(gold_fuyu) / sizeof(gold_fuyu[0]));
}

static void test_fuyu_caught(void **state)
{
	(void)state;
	expect_swapped("fuyu", 2, 1, A1 "query_key_value.weight",
	               "the ranks' query_key_value heads exchanged");
	expect_swapped("fuyu", 2, 1, A1 "dense.weight", "dense columns exchanged");
	expect_swapped("fuyu", 2, 1, "model.layers.1.mlp.dense_h_to_4h.bias",
	               "dense_h_to_4h bias slices exchanged");
}

/* The language model's keys are text_config's (the top level's without one): the
 * fixture's read as Persimmon's; a text_config turning qk_layernorm off wins over the top
 * level. */
static void test_fuyu_config(void **state)
{
	(void)state;
	model m = {0};
	ref_set ck = {0};
	ref_cfg c;
	wt_errbuf err = {0};
	open_model(&m, "fuyu");
	assert_int_equal(ref_load_ckpt(m.c, &c, &ck, &err), WT_OK);
	assert_true(c.persimmon && c.ps_qkln && c.layernorm && c.fused_ckpt && c.plain_mlp &&
	            c.kind == REF_DENSE && !c.tied && c.d == 16 && c.H == 8 && c.KV == 8 &&
	            c.I == 512 && c.L == 2 && c.act == REF_ACT_RELU2 && c.rot_dim == 8);
	assert_float_equal(c.theta, 25000.0, 0.0);
	ref_set_clear(&ck);
	close_model(&m);
#define FY "{\"architectures\": [\"FuyuForCausalLM\"], \"model_type\": \"fuyu\", "
#define LMK                                                                                        \
	"\"hidden_size\": 64, \"num_attention_heads\": 4, \"num_hidden_layers\": 2, "              \
	"\"intermediate_size\": 256, \"vocab_size\": 100"
	static const char flat[] = FY LMK ", \"partial_rotary_factor\": 0.25}";
	assert_int_equal(ref_cfg_parse_json(flat, strlen(flat), &c, &err), WT_OK);
	assert_true(c.persimmon && c.ps_qkln && c.H == 4 && c.d == 16 && c.rot_dim == 4 && !c.tied);
	static const char nested[] = FY "\"hidden_size\": 64, \"qk_layernorm\": true, "
	                                "\"text_config\": {\"model_type\": \"persimmon\", " LMK
	                                ", \"qk_layernorm\": false}}";
	assert_int_equal(ref_cfg_parse_json(nested, strlen(nested), &c, &err), WT_OK);
	assert_true(c.persimmon && !c.ps_qkln && c.H == 4 && c.rot_dim == 8);
	expect_cfg(FY LMK ", \"layer_norm_eps\": 1e-6}", WT_EUNSUPPORTED, "layer_norm_eps");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_fuyu_pass),
	    cmocka_unit_test(test_fuyu_transformers),
	    cmocka_unit_test(test_fuyu_caught),
	    cmocka_unit_test(test_fuyu_config),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
