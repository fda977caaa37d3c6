/*
 * test_reference_idefics3.c — the reference forward pass over Idefics3's language model
 * (Idefics3ForConditionalGeneration on text tokens; Llama's math in reference/reference.c,
 * model.text_model.* read as model.*, the vision tower and the connector loaded, not run, as
 * docs/reference.md says for the multimodal families): untied by text_config, LlamaConfig's
 * class defaults for a text_config that leaves keys out, the top level's
 * tie_word_embeddings not read. Full and sharded logits agree within REF_TOL_F32 (TP 1, 2,
 * 4) or the quantized layouts' budgets; the full path's logits equal transformers 4.57.1's
 * (eager, float32) at 28 points; rank tensors broken the way a wrong planner would break
 * them are caught. The fixture comes from $WT_BUILD/wt-mkckpt --family idefics3 (hid 128,
 * H 4, KV 2, d 32, I 256, V 1000, 2 layers; a SigLIP-style tower of 2 blocks of width 64) and
 * --family smolvlm (SmolVLMForConditionalGeneration: the same names, KV 1, tied by text_config).
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

#define V_I3 1000
#define A1   "model.layers.1.self_attn."
#define M1   "model.layers.1.mlp."

static int setup(void **state)
{
	(void)state;
	static const char *fams[] = {"idefics3", "smolvlm"};
	return gen_fixtures("reference_idefics3", fams, 2);
}

static void test_idefics3_pass(void **state)
{
	(void)state;
	expect_pass("idefics3", 1, 1, WT_QUANT_NONE, 0);
	expect_pass("idefics3", 2, 1, WT_QUANT_NONE, 0);
	expect_pass("idefics3", 4, 1, WT_QUANT_NONE, 0); /* KV 2 < TP 4 */
	expect_pass("idefics3", 2, 1, WT_QUANT_INT8_CHANNEL, 0);
	expect_pass("idefics3", 4, 1, WT_QUANT_FP8_CHANNEL, 0);
	/* SmolVLM: KV 1 (replicated at every TP), tied by text_config */
	expect_pass("smolvlm", 1, 1, WT_QUANT_NONE, 0);
	expect_pass("smolvlm", 2, 1, WT_QUANT_NONE, 0);
	expect_pass("smolvlm", 4, 1, WT_QUANT_NONE, 0);
	expect_pass("smolvlm", 2, 1, WT_QUANT_INT8_CHANNEL, 0);
}

/* (row, column, transformers 4.57.1 logit), tokens g_tokens */
static const gold_pt gold_i3[] = {
    {0, 22, -7.40374774e-02f},  {0, 668, 1.31261408e-01f},  {0, 803, -1.13687515e-01f},
    {0, 807, 4.02386665e-01f},  {1, 53, 1.91956118e-01f},   {1, 277, -6.54091090e-02f},
    {1, 284, 1.70023367e-01f},  {1, 977, -1.52865365e-01f}, {2, 1, -1.31641611e-01f},
    {2, 45, -5.35678677e-02f},  {2, 48, 3.51899490e-02f},   {2, 130, -1.94274522e-02f},
    {3, 234, -1.45395979e-01f}, {3, 282, -1.96830705e-02f}, {3, 650, 1.22620590e-01f},
    {3, 748, -1.71975851e-01f}, {4, 177, -2.52797574e-01f}, {4, 796, 1.35435134e-01f},
    {4, 844, -8.90619010e-02f}, {4, 895, -7.97065869e-02f}, {5, 491, -2.62368649e-01f},
    {5, 662, -1.62266985e-01f}, {5, 664, 2.07294986e-01f},  {5, 676, 5.95166683e-02f},
    {6, 270, -8.63057822e-02f}, {6, 361, -3.11760217e-01f}, {6, 879, -2.00494379e-01f},
    {6, 900, 3.88057530e-01f},
};

/* smolvlm's (seed 11: KV 1, rope_theta 1e5, tied by text_config) */
static const gold_pt gold_smol[] = {
    {0, 22, 9.34976414e-02f},   {0, 668, 8.67217109e-02f},  {0, 803, -1.00063615e-01f},
    {0, 807, 3.62834670e-02f},  {1, 53, -1.86827630e-01f},  {1, 277, -1.80558160e-01f},
    {1, 284, 4.54925925e-01f},  {1, 977, 3.11135918e-01f},  {2, 1, -1.00662336e-01f},
    {2, 45, -1.13440327e-01f},  {2, 48, 2.45999202e-01f},   {2, 130, 2.63333116e-02f},
    {3, 234, 3.84409493e-03f},  {3, 282, 2.40758985e-01f},  {3, 650, -2.18405455e-01f},
    {3, 748, 6.89708721e-03f},  {4, 177, -3.77826214e-01f}, {4, 796, -1.81519002e-01f},
    {4, 844, 1.20918542e-01f},  {4, 895, 5.06334305e-01f},  {5, 491, -7.20635653e-02f},
    {5, 662, -2.18154341e-01f}, {5, 664, -5.05065471e-02f}, {5, 676, -1.13994732e-01f},
    {6, 270, -6.51387870e-03f}, {6, 361, 7.24138916e-02f},  {6, 879, -6.23987541e-02f},
    {6, 900, -3.09124112e-01f},
};

/* The full path's logits at the golden points, within 1e-5 (over all 7000 logits 4.2e-7 of
 * max |logit| 0.84: Idefics3ForConditionalGeneration.from_pretrained of the fixture, strict;
 * smolvlm 4.8e-7 of 0.91, SmolVLMForConditionalGeneration, strict, lm_head tied) */
#define GOLD_TOL 1e-5

static void test_idefics3_transformers(void **state)
{
	(void)state;
	expect_gold("idefics3", V_I3, GOLD_TOL, gold_i3, sizeof(gold_i3) / sizeof(gold_i3[0]));
	expect_gold("smolvlm", V_I3, GOLD_TOL, gold_smol, sizeof(gold_smol) / sizeof(gold_smol[0]));
}

static void test_idefics3_caught(void **state)
{
	(void)state;
	expect_swapped("idefics3", 2, 1, A1 "qkv_proj.weight", "qkv exchanged between ranks");
	expect_swapped("idefics3", 2, 1, A1 "o_proj.weight", "o_proj columns exchanged");
	expect_halves_swapped("idefics3", 2, 1,
	                      (tamper_halves){M1 "gate_up_proj.weight", 0, 1, 128, 256},
	                      "gate / up halves swapped");
	expect_swapped("smolvlm", 2, 1, A1 "o_proj.weight", "smolvlm: o_proj columns exchanged");
}

/* The fixture as read: Llama's math, untied, eps 1e-5, theta 500000; the tower and the
 * connector under their checkpoint names. */
static void test_idefics3_fixture_cfg(void **state)
{
	(void)state;
	model m = {0};
	ref_set ck = {0};
	ref_cfg c;
	wt_errbuf err = {0};
	open_model(&m, "idefics3");
	assert_int_equal(ref_load_ckpt(m.c, &c, &ck, &err), WT_OK);
	assert_true(c.kind == REF_DENSE && !c.qk_norm && !c.tied && c.d == 32 && c.H == 4 &&
	            c.KV == 2 && c.I == 256 && c.hid == 128 && c.V == V_I3 && c.L == 2 &&
	            c.rot_dim == 0 && c.window == 0 && c.act == REF_ACT_SILU);
	assert_float_equal(c.eps, 1e-5, 1e-12);
	assert_float_equal(c.theta, 500000.0, 1e-6);
	assert_non_null(find_tensor(&ck, "model.embed_tokens.weight"));
	assert_non_null(find_tensor(&ck, "model.layers.0.self_attn.q_proj.weight"));
	assert_non_null(find_tensor(&ck, "model.vision_model.post_layernorm.weight"));
	assert_non_null(find_tensor(&ck, "model.connector.modality_projection.proj.weight"));
	ref_set_clear(&ck);
	close_model(&m);
	/* smolvlm: tied by text_config (the top level's false not read), KV 1, theta 1e5 */
	open_model(&m, "smolvlm");
	assert_int_equal(ref_load_ckpt(m.c, &c, &ck, &err), WT_OK);
	assert_true(c.kind == REF_DENSE && c.tied && c.KV == 1 && c.d == 32 && c.L == 2);
	assert_float_equal(c.theta, 100000.0, 1e-6);
	assert_non_null(find_tensor(&ck, "model.vision_model.post_layernorm.weight"));
	ref_set_clear(&ck);
	close_model(&m);
}

#define I3_JSON(top, text)                                                                         \
	"{\"architectures\": [\"Idefics3ForConditionalGeneration\"], \"model_type\": "             \
	"\"idefics3\", " top "\"vision_config\": {}, \"text_config\": {" text "}}"

static void test_idefics3_config(void **state)
{
	(void)state;
	ref_cfg c;
	wt_errbuf err = {0};
	/* LlamaConfig's defaults: hidden 4096, 32 heads of 128, KV = H, I 11008, 32 layers,
	 * eps 1e-6, theta 10000; untied */
	static const char plain[] =
	    I3_JSON("", "\"model_type\": \"llama\", \"vocab_size\": 128259");
	assert_int_equal(ref_cfg_parse_json(plain, strlen(plain), &c, &err), WT_OK);
	assert_true(c.kind == REF_DENSE && c.hid == 4096 && c.H == 32 && c.d == 128 && c.KV == 32 &&
	            c.I == 11008 && c.V == 128259 && c.L == 32 && !c.tied && c.act == REF_ACT_SILU);
	assert_float_equal(c.eps, 1e-6, 1e-15);
	assert_float_equal(c.theta, 10000.0, 1e-9);
	/* the top level's tie_word_embeddings is not read (transformers ties by text_config) */
	static const char top[] = I3_JSON("\"tie_word_embeddings\": true, ", "\"vocab_size\": 100");
	assert_int_equal(ref_cfg_parse_json(top, strlen(top), &c, &err), WT_OK);
	assert_false(c.tied);
	/* text_config's is */
	static const char tied[] =
	    I3_JSON("\"tie_word_embeddings\": false, ", "\"tie_word_embeddings\": true");
	assert_int_equal(ref_cfg_parse_json(tied, strlen(tied), &c, &err), WT_OK);
	assert_true(c.tied && c.V == 32000);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_idefics3_pass),   cmocka_unit_test(test_idefics3_transformers),
	    cmocka_unit_test(test_idefics3_caught), cmocka_unit_test(test_idefics3_fixture_cfg),
	    cmocka_unit_test(test_idefics3_config),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
