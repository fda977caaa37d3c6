/*
 * test_reference_glm4v.c — the reference forward pass over GLM-4.1V's and GLM-4.5V's
 * language models (Glm4vForConditionalGeneration / Glm4vMoeForConditionalGeneration on
 * text tokens, the vision tower loaded, not run, as docs/reference.md says for Qwen2-VL /
 * Qwen3-VL): GLM-4-0414's decoder (four norms, q/k/v biases, fused gate_up_proj) and
 * GLM-4.5's (V3's sigmoid group routing with the correction bias, shared experts) without
 * q/k norms. Both turn the first int(head_dim * partial_rotary_factor) dims of each head
 * under MRoPE, which on text tokens (three equal position streams) is the plain RoPE: GLM-4's
 * adjacent pairs for GLM-4.1V (apply_multimodal_rotary_pos_emb's repeat_interleave and
 * rotate_half_llm), GLM-4.5's rotate-half for GLM-4.5V. Full and sharded logits agree within
 * REF_TOL_F32 (TP 1, 2, 4; EP 2, TP 2 x EP 2) or the quantized layouts' budgets; the full
 * path's logits equal transformers 4.57.1's (eager, float32) at 28 points each; rank tensors
 * broken the way a wrong planner would break them are caught; the classes' defaults fill a
 * text_config. The fixtures come from $WT_BUILD/wt-mkckpt --family glm4v / glm4v_moe (hid
 * 128, H 4, KV 2, d 32, V 1000; glm4v I 192, L 2; glm4v_moe L 3 + MTP, 8 experts of 64).
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

#define V_G4V 1000
#define A1    "model.layers.1.self_attn."
#define M1    "model.layers.1.mlp."

static int setup(void **state)
{
	(void)state;
	static const char *fams[] = {"glm4v", "glm4v_moe"};
	return gen_fixtures("reference_glm4v", fams, 2);
}

static void test_glm4v_pass(void **state)
{
	(void)state;
	expect_pass("glm4v", 1, 1, WT_QUANT_NONE, 0);
	expect_pass("glm4v", 2, 1, WT_QUANT_NONE, 0);
	expect_pass("glm4v", 4, 1, WT_QUANT_NONE, 0); /* KV 2 < TP 4 */
	expect_pass("glm4v", 2, 1, WT_QUANT_INT8_CHANNEL, 0);
	expect_pass("glm4v", 4, 1, WT_QUANT_FP8_CHANNEL, 0);
	expect_pass("glm4v", 2, 1, WT_QUANT_FP8_BLOCK, 0);
	expect_pass("glm4v_moe", 1, 1, WT_QUANT_NONE, 0);
	expect_pass("glm4v_moe", 2, 1, WT_QUANT_NONE, 0);
	expect_pass("glm4v_moe", 4, 1, WT_QUANT_NONE, 0);
	expect_pass("glm4v_moe", 1, 2, WT_QUANT_NONE, 0);
	expect_pass("glm4v_moe", 2, 2, WT_QUANT_NONE, 1);
	expect_pass("glm4v_moe", 2, 1, WT_QUANT_INT8_CHANNEL, 0);
	expect_pass("glm4v_moe", 1, 4, WT_QUANT_FP8_BLOCK, 0);
}

/* (row, column, transformers 4.57.1 logit), tokens g_tokens */
static const gold_pt gold_g4v[] = {
    {0, 623, 1.07866250e-01f},  {0, 683, -1.49354771e-01f}, {0, 897, -5.83890192e-02f},
    {0, 942, -2.84215640e-02f}, {1, 55, 5.69442153e-01f},   {1, 224, 8.64475146e-02f},
    {1, 285, 1.05630934e-01f},  {1, 299, 1.33742914e-02f},  {2, 131, -1.61576360e-01f},
    {2, 498, 1.97874352e-01f},  {2, 797, -2.26754382e-01f}, {2, 819, -1.15605935e-01f},
    {3, 278, -1.62482988e-02f}, {3, 302, -5.94887435e-01f}, {3, 340, -1.07693434e-01f},
    {3, 719, 1.03881106e-01f},  {4, 476, -3.44317794e-01f}, {4, 503, -1.06280141e-01f},
    {4, 553, 1.67456537e-01f},  {4, 581, -1.58203229e-01f}, {5, 341, 3.60229909e-01f},
    {5, 621, 2.88321525e-02f},  {5, 698, 3.39633882e-01f},  {5, 790, 1.73070967e-01f},
    {6, 159, 1.47115171e-01f},  {6, 612, 1.18367866e-01f},  {6, 842, -6.66464493e-02f},
    {6, 856, -4.80866283e-01f},
};
static const gold_pt gold_g4vm[] = {
    {0, 623, -1.87662274e-01f}, {0, 683, 1.54645473e-01f},  {0, 897, 2.18677700e-01f},
    {0, 942, 2.42281571e-01f},  {1, 55, 3.49941254e-01f},   {1, 224, 1.93434760e-01f},
    {1, 285, -2.53013492e-01f}, {1, 299, 1.22270279e-01f},  {2, 131, -1.27836347e-01f},
    {2, 498, -6.48837835e-02f}, {2, 797, -2.07355637e-02f}, {2, 819, -4.43568118e-02f},
    {3, 278, -1.04838431e-01f}, {3, 302, -4.89499509e-01f}, {3, 340, 2.17919484e-01f},
    {3, 719, 1.97595745e-01f},  {4, 476, -1.77054748e-01f}, {4, 503, 1.11606255e-01f},
    {4, 553, 2.87906468e-01f},  {4, 581, -1.66139886e-01f}, {5, 341, 2.95936227e-01f},
    {5, 621, -3.64008993e-01f}, {5, 698, 3.00165057e-01f},  {5, 790, 4.53212112e-01f},
    {6, 159, 1.11155719e-01f},  {6, 612, -8.36835057e-02f}, {6, 842, -9.56118256e-02f},
    {6, 856, -3.76398951e-01f},
};

/* The full path's logits at the golden points, within 1e-5 (over all 7000 logits: glm4v
 * 6.3e-7 of max |logit| 0.92, glm4v_moe 4.8e-7 of 0.77). */
#define GOLD_TOL 1e-5

static void test_glm4v_transformers(void **state)
{
	(void)state;
	expect_gold("glm4v", V_G4V, GOLD_TOL, gold_g4v, sizeof(gold_g4v) / sizeof(gold_g4v[0]));
	expect_gold("glm4v_moe", V_G4V, GOLD_TOL, gold_g4vm,
	            sizeof(gold_g4vm) / sizeof(gold_g4vm[0]));
}

static void tamper_sandwich(void *ctx, ref_set *r, uint32_t n)
{
	(void)ctx; /* a replica of post_self_attn_layernorm and post_mlp_layernorm exchanged */
	(void)n;
	ref_tensor *a = find_tensor(&r[1], "model.layers.1.post_self_attn_layernorm.weight");
	ref_tensor *b = find_tensor(&r[1], "model.layers.1.post_mlp_layernorm.weight");
	uint8_t *t = a->data;
	a->data = b->data;
	b->data = t;
}

static void test_glm4v_caught(void **state)
{
	(void)state;
	expect_swapped("glm4v", 2, 1, A1 "qkv_proj.weight", "qkv exchanged between ranks");
	expect_swapped("glm4v", 2, 1, A1 "qkv_proj.bias", "qkv biases exchanged between ranks");
	expect_halves_swapped("glm4v", 2, 1,
	                      (tamper_halves){M1 "gate_up_proj.weight", 0, 1, 96, 256},
	                      "gate / up halves swapped");
	expect_caught("glm4v", 2, 1, tamper_sandwich, "post norms exchanged on rank 1");
	expect_swapped("glm4v_moe", 2, 1, A1 "qkv_proj.weight", "moe: qkv exchanged between ranks");
	expect_stacks_swapped("glm4v_moe", 1, 2, M1 "experts.", "moe: expert stacks exchanged");
	expect_halves_swapped(
	    "glm4v_moe", 2, 1,
	    (tamper_halves){M1 "shared_experts.gate_up_proj.weight", 1, 1, 32, 256},
	    "moe: shared gate / up swapped");
}

/* The fixtures as read: GLM-4-0414's math on half the head, GLM-4.5's without q/k norms;
 * the tower loaded beside the language model, unused. */
static void test_glm4v_fixture_cfg(void **state)
{
	(void)state;
	model m = {0};
	ref_set ck = {0};
	ref_cfg c;
	wt_errbuf err = {0};
	open_model(&m, "glm4v");
	assert_int_equal(ref_load_ckpt(m.c, &c, &ck, &err), WT_OK);
	assert_true(c.kind == REF_DENSE && c.glm == 2 && c.sandwich && c.rope_pairs && !c.tied &&
	            c.d == 32 && c.H == 4 && c.KV == 2 && c.I == 192 && c.rot_dim == 16 &&
	            c.act == REF_ACT_SILU && !c.qk_norm);
	assert_float_equal(c.eps, 1e-5, 1e-12);
	assert_float_equal(c.theta, 10000.0, 1e-9);
	assert_non_null(find_tensor(&ck, "visual.downsample.weight"));
	assert_non_null(find_tensor(&ck, "visual.merger.gate_proj.weight"));
	ref_set_clear(&ck);
	close_model(&m);
	open_model(&m, "glm4v_moe");
	assert_int_equal(ref_load_ckpt(m.c, &c, &ck, &err), WT_OK);
	assert_true(c.kind == REF_DEEPSEEK && c.glm4_moe && !c.qk_norm && !c.rope_pairs &&
	            !c.rope_interleave && c.rot_dim == 16 && c.E == 8 && c.topk == 2 &&
	            c.Ie == 64 && c.n_group == 2 && c.topk_group == 1 && c.first_dense == 1 &&
	            c.norm_topk && c.L == 3);
	assert_float_equal(c.routed_scale, 2.5, 1e-12);
	ref_set_clear(&ck);
	close_model(&m);
}

#define G4V_JSON(mt, text)                                                                         \
	"{\"architectures\": [\"Glm4vForConditionalGeneration\"], \"model_type\": \"" mt "\", "    \
	"\"vision_config\": {}, \"text_config\": {\"model_type\": \"" mt "_text\"" text "}}"

/* Glm4vTextConfig's defaults (hidden 4096, 32 heads of 128, KV 2, eps 1e-5, theta 1e4) with
 * the RoPE over the whole head (no partial_rotary_factor in the class), where GLM-4-0414's
 * own class turns half of it; Glm4vMoeTextConfig's turn half (GLM-4.5V gives head_dim 128:
 * the class's 4096 / 96 = 42 would turn an odd 21 dims, refused). */
static void test_glm4v_config(void **state)
{
	(void)state;
	ref_cfg c;
	wt_errbuf err = {0};
	static const char plain[] = G4V_JSON("glm4v", "");
	assert_int_equal(ref_cfg_parse_json(plain, strlen(plain), &c, &err), WT_OK);
	assert_true(c.kind == REF_DENSE && c.glm == 2 && c.hid == 4096 && c.H == 32 && c.d == 128 &&
	            c.KV == 2 && c.I == 13696 && c.V == 151552 && c.L == 40 && !c.tied &&
	            c.rot_dim == 128);
	assert_float_equal(c.eps, 1e-5, 1e-15);
	assert_float_equal(c.theta, 10000.0, 1e-9);
	static const char half[] = G4V_JSON("glm4v", ", \"partial_rotary_factor\": 0.5");
	assert_int_equal(ref_cfg_parse_json(half, strlen(half), &c, &err), WT_OK);
	assert_int_equal(c.rot_dim, 64);
	static const char moe[] =
	    "{\"architectures\": [\"Glm4vMoeForConditionalGeneration\"], \"model_type\": "
	    "\"glm4v_moe\", \"vision_config\": {}, \"text_config\": {\"head_dim\": 128}}";
	assert_int_equal(ref_cfg_parse_json(moe, strlen(moe), &c, &err), WT_OK);
	assert_true(c.kind == REF_DEEPSEEK && c.glm4_moe && c.hid == 4096 && c.H == 96 &&
	            c.d == 128 && c.KV == 8 && c.E == 128 && c.Ie == 1408 && c.topk == 8 &&
	            c.V == 151424 && c.L == 46 && c.rot_dim == 64 && !c.qk_norm);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_glm4v_pass),   cmocka_unit_test(test_glm4v_transformers),
	    cmocka_unit_test(test_glm4v_caught), cmocka_unit_test(test_glm4v_fixture_cfg),
	    cmocka_unit_test(test_glm4v_config),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
