/*
 * test_reference_internvl.c — the reference forward pass over InternVL's language model
 * (InternVLForConditionalGeneration on text tokens: Qwen2's math in reference/reference.c, q/k/v
 * biases, language_model.* read as the text model's names, the InternViT tower and the projector
 * loaded, not run, as docs/reference.md says for the multimodal families): untied. Full and
 * sharded logits agree within REF_TOL_F32 (TP 1, 2, 4) or the quantized layouts' budgets; the
 * full path's logits equal transformers 4.57.1's (eager, float32) at 28 points; rank tensors
 * broken the way a wrong planner would break them are caught. The fixture comes from
 * $WT_BUILD/wt-mkckpt --family internvl (hid 128, H 4, KV 2, d 32, I 256, V 1000, 2 layers; an
 * InternViT of 2 layers, width 64, in transformers 4.57's layout) and --family internvl_qwen3
 * (InternVL3.5's Qwen3 language model: head_dim 64, per-head q / k norms, no q/k/v biases, tied
 * by text_config; the same tower).
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

#define V_IV 1000
#define A1   "model.layers.1.self_attn."
#define M1   "model.layers.1.mlp."

static int setup(void **state)
{
	(void)state;
	static const char *fams[] = {"internvl", "internvl_qwen3"};
	return gen_fixtures("reference_internvl", fams, 2);
}

static void test_internvl_pass(void **state)
{
	(void)state;
	expect_pass("internvl", 1, 1, WT_QUANT_NONE, 0);
	expect_pass("internvl", 2, 1, WT_QUANT_NONE, 0);
	expect_pass("internvl", 4, 1, WT_QUANT_NONE, 0); /* KV 2 < TP 4 */
	expect_pass("internvl", 2, 1, WT_QUANT_INT8_CHANNEL, 0);
	expect_pass("internvl", 4, 1, WT_QUANT_FP8_CHANNEL, 0);
}

/* (row, column, transformers 4.57.1 logit), tokens g_tokens */
static const gold_pt gold_iv[] = {
    {0, 623, -1.37882113e-01f}, {0, 683, -5.22894934e-02f}, {0, 897, 2.15801790e-01f},
    {0, 942, 1.19737029e-01f},  {1, 55, 2.46889651e-01f},   {1, 224, 2.63709009e-01f},
    {1, 285, -2.09616479e-02f}, {1, 299, 2.43970037e-01f},  {2, 131, -3.18871439e-01f},
    {2, 498, -5.21819619e-03f}, {2, 797, -2.60804445e-01f}, {2, 819, -5.91237694e-02f},
    {3, 278, -6.43035769e-02f}, {3, 302, -5.00264406e-01f}, {3, 340, 7.94008523e-02f},
    {3, 719, 1.97806418e-01f},  {4, 476, -6.47141933e-02f}, {4, 503, 1.11387201e-01f},
    {4, 553, 4.19462055e-01f},  {4, 581, 1.99304059e-01f},  {5, 341, 3.68559033e-01f},
    {5, 621, -1.03589632e-01f}, {5, 698, 1.98442668e-01f},  {5, 790, 3.91772866e-01f},
    {6, 159, 6.19769506e-02f},  {6, 612, 9.37398076e-02f},  {6, 842, -3.15685630e-01f},
    {6, 856, -5.39802492e-01f},
};

/* The full path's logits at the golden points, within 1e-5 (over all 7000 logits 4.2e-7 of
 * max |logit| 0.83: InternVLForConditionalGeneration.from_pretrained of the fixture, strict,
 * untied; the full model on input_ids, eager, float32) */
#define GOLD_TOL 1e-5

static void test_internvl_transformers(void **state)
{
	(void)state;
	expect_gold("internvl", V_IV, GOLD_TOL, gold_iv, sizeof(gold_iv) / sizeof(gold_iv[0]));
}

static void test_internvl_caught(void **state)
{
	(void)state;
	expect_swapped("internvl", 2, 1, A1 "qkv_proj.weight", "qkv exchanged between ranks");
	expect_swapped("internvl", 2, 1, A1 "qkv_proj.bias", "qkv biases exchanged");
	expect_swapped("internvl", 2, 1, A1 "o_proj.weight", "o_proj columns exchanged");
	expect_halves_swapped("internvl", 2, 1,
	                      (tamper_halves){M1 "gate_up_proj.weight", 0, 1, 128, 256},
	                      "gate / up halves swapped");
}

/* The fixture as read: Qwen2's math (q/k/v biases), untied, d 32, 2 layers; the tower and the
 * projector under vLLM's names. */
static void test_internvl_fixture_cfg(void **state)
{
	(void)state;
	model m = {0};
	ref_set ck = {0};
	ref_cfg c;
	wt_errbuf err = {0};
	open_model(&m, "internvl");
	assert_int_equal(ref_load_ckpt(m.c, &c, &ck, &err), WT_OK);
	assert_true(c.kind == REF_DENSE && c.cohere == 0 && !c.tied && c.d == 32 && c.H == 4 &&
	            c.KV == 2 && c.I == 256 && c.hid == 128 && c.V == V_IV && c.L == 2);
	assert_non_null(find_tensor(&ck, "model.embed_tokens.weight"));
	assert_non_null(find_tensor(&ck, "lm_head.weight"));
	assert_non_null(find_tensor(&ck, "model.layers.0.self_attn.q_proj.bias"));
	assert_non_null(find_tensor(&ck, "vision_tower.embeddings.cls_token"));
	assert_non_null(find_tensor(&ck, "vision_tower.encoder.layer.1.lambda_2"));
	assert_non_null(find_tensor(&ck, "multi_modal_projector.layer_norm.bias"));
	ref_set_clear(&ck);
	close_model(&m);
}

static void test_internvl_qwen3_pass(void **state)
{
	(void)state;
	expect_pass("internvl_qwen3", 1, 1, WT_QUANT_NONE, 0);
	expect_pass("internvl_qwen3", 2, 1, WT_QUANT_NONE, 0);
	expect_pass("internvl_qwen3", 4, 1, WT_QUANT_NONE, 0); /* KV 2 < TP 4 */
	expect_pass("internvl_qwen3", 2, 1, WT_QUANT_INT8_CHANNEL, 0);
	expect_pass("internvl_qwen3", 4, 1, WT_QUANT_FP8_CHANNEL, 0);
}

/* (row, column, transformers 4.57.1 logit), tokens g_tokens: the internvl_qwen3 fixture */
static const gold_pt gold_q3[] = {
    {0, 623, 3.76754105e-02f},  {0, 683, -1.19978905e-01f}, {0, 897, -9.11015831e-03f},
    {0, 942, 2.69745082e-01f},  {1, 55, -1.78688914e-01f},  {1, 224, -2.06775069e-01f},
    {1, 285, -2.13119268e-01f}, {1, 299, 2.14030758e-01f},  {2, 131, 1.16803467e-01f},
    {2, 498, 1.64315268e-01f},  {2, 797, 1.09000012e-01f},  {2, 819, -1.13097057e-01f},
    {3, 278, -1.45615935e-02f}, {3, 302, 2.23100483e-01f},  {3, 340, -1.30289361e-01f},
    {3, 719, -4.24685590e-02f}, {4, 476, 2.52212554e-01f},  {4, 503, -3.65549892e-01f},
    {4, 553, 2.53252059e-01f},  {4, 581, 6.81138337e-02f},  {5, 341, -4.44468558e-01f},
    {5, 621, -2.11674675e-01f}, {5, 698, 4.05755639e-02f},  {5, 790, -9.99368727e-03f},
    {6, 159, -1.03722531e-02f}, {6, 612, -1.08001083e-02f}, {6, 842, -2.52528906e-01f},
    {6, 856, 1.42981306e-01f},
};

/* within 1e-5 (over all 7000 logits 5.7e-7 of max |logit| 0.84: the fixture loaded strict,
 * tied by text_config, its language model Qwen3Model; eager, float32) */
static void test_internvl_qwen3_transformers(void **state)
{
	(void)state;
	expect_gold("internvl_qwen3", V_IV, GOLD_TOL, gold_q3,
	            sizeof(gold_q3) / sizeof(gold_q3[0]));
}

static void tamper_q_norm(void *ctx, ref_set *r, uint32_t n)
{
	(void)ctx; /* TP 2: rank 1's q_norm read as k_norm's (the per-head norms mixed up) */
	assert_int_equal(n, 2);
	ref_tensor *q = find_tensor(&r[1], A1 "q_norm.weight"),
	           *k = find_tensor(&r[1], A1 "k_norm.weight");
	assert_int_equal(q->nbytes, k->nbytes);
	memcpy(q->data, k->data, q->nbytes);
}

static void test_internvl_qwen3_caught(void **state)
{
	(void)state;
	expect_swapped("internvl_qwen3", 2, 1, A1 "qkv_proj.weight", "qkv exchanged between ranks");
	expect_swapped("internvl_qwen3", 2, 1, A1 "o_proj.weight", "o_proj columns exchanged");
	expect_caught("internvl_qwen3", 2, 1, tamper_q_norm, "q_norm read as k_norm");
}

/* The qwen3 fixture as read: Qwen3's q / k norms, head_dim 64 (not hid / H), tied, no q/k/v
 * biases. */
static void test_internvl_qwen3_fixture_cfg(void **state)
{
	(void)state;
	model m = {0};
	ref_set ck = {0};
	ref_cfg c;
	wt_errbuf err = {0};
	open_model(&m, "internvl_qwen3");
	assert_int_equal(ref_load_ckpt(m.c, &c, &ck, &err), WT_OK);
	assert_true(c.kind == REF_DENSE && c.qk_norm && c.tied && c.d == 64 && c.H == 4 &&
	            c.KV == 2 && c.I == 256 && c.hid == 128 && c.V == V_IV && c.L == 2);
	assert_non_null(find_tensor(&ck, "model.layers.1.self_attn.q_norm.weight"));
	assert_null(ref_set_find(&ck, "model.layers.0.self_attn.q_proj.bias"));
	ref_set_clear(&ck);
	close_model(&m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_internvl_pass),
	    cmocka_unit_test(test_internvl_transformers),
	    cmocka_unit_test(test_internvl_caught),
	    cmocka_unit_test(test_internvl_fixture_cfg),
	    cmocka_unit_test(test_internvl_qwen3_pass),
	    cmocka_unit_test(test_internvl_qwen3_transformers),
	    cmocka_unit_test(test_internvl_qwen3_caught),
	    cmocka_unit_test(test_internvl_qwen3_fixture_cfg),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
