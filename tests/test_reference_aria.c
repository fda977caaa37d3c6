/*
 * test_reference_aria.c — the reference forward pass over Aria's language model
 * (AriaForConditionalGeneration on text tokens: AriaTextModel under language_model., read as
 * model.* / lm_head.*; the vision tower and projector loaded, unused): Llama's attention and
 * every layer's AriaTextMoELayer (the softmax of the top moe_topk router logits over the
 * stacked fc1 / fc2 experts, + the ungated shared experts). Full and sharded logits agree
 * within REF_TOL_F32 (TP 1, 2, 4, EP 2, EP 2 up_gate, TP 2 x EP 2) or the quantized layouts'
 * budgets; the full path's logits equal transformers 4.57.1's
 * (AriaForConditionalGeneration, eager, float32) at 28 points; rank tensors broken the way a
 * wrong planner would break them are caught; the configuration read and refused. Fixture from
 * $WT_BUILD/wt-mkckpt --family aria (hid 128, H 8, KV 2, 4 experts of 64, top 2, 2 shared
 * experts, V 1000, 2 layers; seed printed).
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

#define V_AR 1000
#define HID  128
#define M1   "model.layers.1.mlp."
#define A1   "model.layers.1.self_attn."

static int setup(void **state)
{
	(void)state;
	static const char *fams[] = {"aria"};
	return gen_fixtures("reference_aria", fams, 1);
}

static void test_aria_pass(void **state)
{
	(void)state;
	expect_pass("aria", 1, 1, WT_QUANT_NONE, 0);
	expect_pass("aria", 2, 1, WT_QUANT_NONE, 0);
	expect_pass("aria", 4, 1, WT_QUANT_NONE, 0);
	expect_pass("aria", 1, 2, WT_QUANT_NONE, 0);
	expect_pass("aria", 1, 2, WT_QUANT_NONE, 1);
	expect_pass("aria", 2, 2, WT_QUANT_NONE, 0);
	expect_pass("aria", 2, 1, WT_QUANT_INT8_CHANNEL, 0);
	expect_pass("aria", 4, 1, WT_QUANT_FP8_CHANNEL, 0);
}

/* (row, column, transformers 4.57.1 logit), tokens g_tokens:
 * AriaForConditionalGeneration.from_pretrained of the fixture (strict, untied), eager,
 * float32, on input_ids */
static const gold_pt gold_aria[] = {
    {0, 128, -4.97260839e-01f}, {0, 133, 1.17422961e-01f},  {0, 499, 1.97554044e-02f},
    {0, 796, -6.19640835e-02f}, {1, 28, -9.59246978e-03f},  {1, 147, -1.32799163e-01f},
    {1, 401, 7.50145614e-02f},  {1, 484, 1.06150873e-01f},  {2, 129, -2.28676587e-01f},
    {2, 541, 2.07558393e-01f},  {2, 753, -2.53281593e-01f}, {2, 948, 1.39865121e-02f},
    {3, 145, 5.03043160e-02f},  {3, 367, 4.01470304e-01f},  {3, 443, 1.01575851e-01f},
    {3, 510, 1.86640292e-01f},  {4, 137, 3.35373431e-01f},  {4, 347, 2.35753864e-01f},
    {4, 788, 2.54710019e-01f},  {4, 853, 7.17405081e-02f},  {5, 510, 2.63004899e-01f},
    {5, 815, -2.27487609e-02f}, {5, 839, -1.19647346e-01f}, {5, 939, -2.92098105e-01f},
    {6, 134, 4.42542434e-01f},  {6, 204, -2.40864083e-01f}, {6, 308, 1.26618415e-01f},
    {6, 553, -1.21490061e-01f},
};

/* The full path's logits at the golden points, within 1e-5 (over all 7000 logits 4.8e-7 of
 * max |logit| 0.81; 3.3e-7 at these points). */
#define GOLD_TOL 1e-5

static void test_aria_transformers(void **state)
{
	(void)state;
	expect_gold("aria", V_AR, GOLD_TOL, gold_aria, sizeof(gold_aria) / sizeof(gold_aria[0]));
}

/* BF16 tensor name of rank set r times f. */
static void scale_bf16(ref_set *r, const char *name, float f)
{
	ref_tensor *t = find_tensor(r, name);
	uint16_t *v = (uint16_t *)(void *)t->data;
	for (uint64_t i = 0; i < t->nbytes / 2; i++)
		v[i] = kern_f32_to_bf16(kern_bf16_to_f32(v[i]) * f);
}

/* TP 2: rank 1's router replica times 3 (its routing differs from rank 0's). */
static void tamper_router(void *ctx, ref_set *r, uint32_t n)
{
	(void)ctx;
	assert_int_equal(n, 2);
	scale_bf16(&r[1], M1 "router.weight", 3.0f);
}

static void test_aria_caught(void **state)
{
	(void)state;
	expect_swapped("aria", 2, 1, A1 "qkv_proj.weight", "qkv exchanged between ranks");
	expect_swapped("aria", 2, 1, A1 "o_proj.weight", "o_proj columns exchanged");
	expect_halves_swapped("aria", 2, 1, (tamper_halves){M1 "experts.w13_weight", 0, 4, 32, 256},
	                      "the experts' gate / up halves swapped (fc1's halves read up first)");
	expect_swapped("aria", 2, 1, M1 "experts.w2_weight", "w2 column slices exchanged");
	expect_halves_swapped(
	    "aria", 2, 1, (tamper_halves){M1 "shared_experts.gate_up_proj.weight", 0, 1, 64, 256},
	    "the shared experts' gate / up halves swapped");
	expect_swapped("aria", 2, 1, M1 "shared_experts.down_proj.weight",
	               "shared experts' down_proj columns exchanged");
	expect_stacks_swapped("aria", 1, 2, M1 "experts.", "EP ranks' stacks exchanged");
	expect_caught("aria", 2, 1, tamper_router, "rank 1's router x3");
}

/* The fixture's text_config read as AriaTextConfig's; AriaTextConfig's defaults for absent
 * keys (moe_topk 2, moe_num_shared_experts 2); the refusals. */
static void test_aria_config(void **state)
{
	(void)state;
	model m = {0};
	ref_set ck = {0};
	ref_cfg c;
	wt_errbuf err = {0};
	open_model(&m, "aria");
	assert_int_equal(ref_load_ckpt(m.c, &c, &ck, &err), WT_OK);
	assert_true(c.aria && c.kind == REF_QWEN2_MOE && c.norm_topk && !c.tied && c.E == 4 &&
	            c.topk == 2 && c.Ie == 64 && c.Is == 128 && c.H == 8 && c.KV == 2 &&
	            c.d == 16 && c.L == 2 && c.act == REF_ACT_SILU);
	assert_float_equal(c.theta, 5000000.0, 0.0);
	ref_set_clear(&ck);
	close_model(&m);
#define AR "{\"architectures\": [\"AriaForConditionalGeneration\"], \"model_type\": \"aria\", "
#define LMK                                                                                        \
	"\"model_type\": \"aria_text\", \"hidden_size\": 64, \"num_attention_heads\": 4, "         \
	"\"num_hidden_layers\": 2, \"intermediate_size\": 32, \"vocab_size\": 100"
	static const char dflt[] = AR "\"text_config\": {" LMK "}}";
	assert_int_equal(ref_cfg_parse_json(dflt, strlen(dflt), &c, &err), WT_OK);
	assert_true(c.aria && c.E == 8 && c.topk == 2 && c.Ie == 32 && c.Is == 64 && c.KV == 4 &&
	            !c.tied);
	assert_float_equal(c.eps, 1e-6, 1e-12);
	static const char tied[] = AR "\"tie_word_embeddings\": false, \"text_config\": {" LMK
	                              ", \"tie_word_embeddings\": true, \"moe_topk\": 1}}";
	assert_int_equal(ref_cfg_parse_json(tied, strlen(tied), &c, &err), WT_OK);
	assert_true(c.tied && c.topk == 1);
	expect_cfg(AR "\"text_config\": {" LMK ", \"hidden_act\": \"gelu\"}}", WT_EUNSUPPORTED,
	           "hidden_act");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_aria_pass),
	    cmocka_unit_test(test_aria_transformers),
	    cmocka_unit_test(test_aria_caught),
	    cmocka_unit_test(test_aria_config),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
