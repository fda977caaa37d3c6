/*
 * test_reference_qwen3vl.c — the reference forward pass over the language models of
 * Qwen3-VL (Qwen3VLForConditionalGeneration) and Qwen3-VL-MoE
 * (Qwen3VLMoeForConditionalGeneration) on text tokens (reference/qwen3vl.c): Qwen3's
 * decoder (per-head q/k RMSNorms, rotate-half RoPE: the interleaved MRoPE with three
 * equal position streams), Qwen3-VL-MoE's softmax router renormalising its top k whatever
 * norm_topk_prob says, the experts read by the full path from the checkpoint's bmm stacks
 * and by the sharded path from the planner's w13 / w2. Full and sharded logits agree
 * within REF_TOL_F32 (TP 1/2/4, EP 2/3/4, TP 2 x EP 2) or the quantized budgets; the full
 * path's logits equal transformers 4.57.1's (eager, float32) at 28 points each; rank
 * tensors broken the way a wrong planner would break them are caught; each switch moves
 * the logits; config defaults and refusals. Fixtures from $WT_BUILD/wt-mkckpt --family
 * qwen3_vl / qwen3_vl_moe (hid 256, H 8, KV 2, head_dim 48, V 1024; seed printed).
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

#define V_Q3 1024
#define L0   "model.layers.0."

static int setup(void **state)
{
	(void)state;
	static const char *fams[] = {"qwen3_vl", "qwen3_vl_moe"};
	return gen_fixtures("reference_qwen3vl", fams, 2);
}

/* TP 8 is refused by the tower's 4 heads (test_shardmap_qwen3vl); EP up to the 8 experts */
static void test_q3vl_pass(void **state)
{
	(void)state;
	expect_pass("qwen3_vl", 1, 1, WT_QUANT_NONE, 0);
	expect_pass("qwen3_vl", 2, 1, WT_QUANT_NONE, 0);
	expect_pass("qwen3_vl", 4, 1, WT_QUANT_NONE, 0); /* KV 2 < TP 4 */
	expect_pass("qwen3_vl", 2, 1, WT_QUANT_INT8_CHANNEL, 0);
	expect_pass("qwen3_vl", 4, 1, WT_QUANT_FP8_CHANNEL, 0);
	expect_pass("qwen3_vl", 2, 1, WT_QUANT_FP8_BLOCK, 0);
	expect_pass("qwen3_vl_moe", 1, 1, WT_QUANT_NONE, 0);
	expect_pass("qwen3_vl_moe", 2, 1, WT_QUANT_NONE, 0);
	expect_pass("qwen3_vl_moe", 4, 1, WT_QUANT_NONE, 1);
	expect_pass("qwen3_vl_moe", 1, 2, WT_QUANT_NONE, 0);
	expect_pass("qwen3_vl_moe", 1, 3, WT_QUANT_NONE, 0); /* 3 3 2 experts */
	expect_pass("qwen3_vl_moe", 1, 4, WT_QUANT_NONE, 1);
	expect_pass("qwen3_vl_moe", 2, 2, WT_QUANT_NONE, 1);
	expect_pass("qwen3_vl_moe", 2, 2, WT_QUANT_FP8_CHANNEL, 0);
	expect_pass("qwen3_vl_moe", 4, 1, WT_QUANT_INT8_CHANNEL, 0);
	expect_pass("qwen3_vl_moe", 1, 2, WT_QUANT_FP8_BLOCK, 0);
}

/* (row, column, transformers 4.57.1 logit), tokens g_tokens, fixtures seed 11 */
static const gold_pt gold_q3vl[] = {
    {0, 313, 8.42694789e-02f},  {0, 364, -3.52710485e-04f}, {0, 463, -2.82763362e-01f},
    {0, 882, -2.12139457e-01f}, {1, 1, -1.03512086e-01f},   {1, 106, 5.39569497e-01f},
    {1, 216, -3.14199626e-02f}, {1, 348, -7.43098855e-02f}, {2, 505, -5.95690906e-02f},
    {2, 634, 2.45397106e-01f},  {2, 804, -2.66073436e-01f}, {2, 1022, -4.51475382e-01f},
    {3, 496, 4.57943916e-01f},  {3, 703, 5.73599562e-02f},  {3, 788, 3.16160679e-01f},
    {3, 814, -2.06890076e-01f}, {4, 6, 4.56749588e-01f},    {4, 285, -4.31880981e-01f},
    {4, 540, -5.04749417e-01f}, {4, 936, -1.41924724e-01f}, {5, 18, 2.50287354e-01f},
    {5, 54, 2.08099589e-01f},   {5, 825, -3.52250338e-02f}, {5, 959, -1.14721507e-01f},
    {6, 522, 3.01792443e-01f},  {6, 527, 3.57328385e-01f},  {6, 644, 6.66031241e-03f},
    {6, 968, -4.92978215e-01f},
};
static const gold_pt gold_q3vl_moe[] = {
    {0, 313, -6.13717586e-02f}, {0, 364, 1.70399740e-01f},  {0, 463, -2.60868967e-01f},
    {0, 882, -1.68908566e-01f}, {1, 1, -7.62161463e-02f},   {1, 106, 4.76016164e-01f},
    {1, 216, 1.27245843e-01f},  {1, 348, 1.25362992e-01f},  {2, 505, 1.88635677e-01f},
    {2, 634, 5.89429915e-01f},  {2, 804, -1.80424035e-01f}, {2, 1022, 2.38033623e-01f},
    {3, 496, 1.32587746e-01f},  {3, 703, -1.25846267e-03f}, {3, 788, 1.08475536e-01f},
    {3, 814, -3.16427976e-01f}, {4, 6, 3.14487696e-01f},    {4, 285, -2.31144577e-01f},
    {4, 540, -6.76288128e-01f}, {4, 936, 1.74216479e-01f},  {5, 18, 2.40282521e-01f},
    {5, 54, 4.17677462e-01f},   {5, 825, -4.79453564e-01f}, {5, 959, 1.85307860e-03f},
    {6, 522, 7.23570064e-02f},  {6, 527, -7.74352849e-02f}, {6, 644, -7.00024515e-02f},
    {6, 968, -5.40752895e-02f},
};

/* The full path's logits at the golden points, within 1e-5 (measured 5.4e-7 and 5.7e-7;
 * over all 7 x 1024 logits 1.25e-6 and 1.07e-6): the q/k norms, the renormalised top k, the gate
 * half of the stacks and the activation each move them by far more (test_q3vl_switches). */
#define GOLD_TOL 1e-5

static void test_q3vl_transformers(void **state)
{
	(void)state;
	expect_gold("qwen3_vl", V_Q3, GOLD_TOL, gold_q3vl,
	            sizeof(gold_q3vl) / sizeof(gold_q3vl[0]));
	expect_gold("qwen3_vl_moe", V_Q3, GOLD_TOL, gold_q3vl_moe,
	            sizeof(gold_q3vl_moe) / sizeof(gold_q3vl_moe[0]));
}

/* BF16 tensor name of rank set r times f. */
static void scale_bf16(ref_set *r, const char *name, float f)
{
	ref_tensor *t = find_tensor(r, name);
	uint16_t *v = (uint16_t *)(void *)t->data;
	for (uint64_t i = 0; i < t->nbytes / 2; i++)
		v[i] = kern_f32_to_bf16(kern_bf16_to_f32(v[i]) * f);
}

static void tamper_router(void *ctx, ref_set *r, uint32_t n)
{
	(void)ctx; /* TP 2: rank 1's router replica times 3 */
	assert_int_equal(n, 2);
	scale_bf16(&r[1], L0 "mlp.gate.weight", 3.0f);
}

static void tamper_q_norm(void *ctx, ref_set *r, uint32_t n)
{
	(void)ctx; /* TP 2: rank 1's q_norm replica times 2 */
	assert_int_equal(n, 2);
	scale_bf16(&r[1], "model.layers.1.self_attn.q_norm.weight", 2.0f);
}

static void test_q3vl_caught(void **state)
{
	(void)state;
	expect_halves_swapped("qwen3_vl_moe", 1, 1,
	                      (tamper_halves){L0 "mlp.experts.w13_weight", 0, 8, 64, 256 * 2},
	                      "experts' gate / up swapped");
	expect_stacks_swapped("qwen3_vl_moe", 1, 2, L0 "mlp.experts.",
	                      "EP ranks' stacks exchanged");
	expect_caught("qwen3_vl_moe", 2, 1, tamper_router, "rank 1's router x3");
	expect_swapped("qwen3_vl_moe", 2, 1, L0 "mlp.experts.w2_weight",
	               "w2 column slices exchanged");
	expect_caught("qwen3_vl", 2, 1, tamper_q_norm, "rank 1's q_norm replica x2");
}

/* Each switch moves the logits (the golden points above pin their values). */
static void test_q3vl_switches(void **state)
{
	(void)state;
	static const char *forms[] = {"qwen3_vl", "qwen3_vl_moe"};
	for (int f = 0; f < 2; f++) {
		model m = {0};
		ref_set ck = {0};
		ref_cfg c;
		wt_errbuf err = {0};
		open_model(&m, forms[f]);
		assert_int_equal(ref_load_ckpt(m.c, &c, &ck, &err), WT_OK);
		assert_true(c.qk_norm && !c.tied && c.d == 48 && c.H == 8 && c.KV == 2 &&
		            c.act == REF_ACT_SILU && !c.rope_pairs && c.q3vl_moe == (f == 1));
		assert_float_equal(c.theta, 5000000.0, 1e-3);
		assert_float_equal(c.eps, 1e-6, 1e-15);
		if (f == 1)
			assert_true(c.kind == REF_QWEN2_MOE && c.E == 8 && c.topk == 2 &&
			            c.Ie == 64 && c.I == 384 && c.norm_topk && c.Is == 0 &&
			            !ref_layer_is_moe(&c, 1) && ref_layer_is_moe(&c, 2));
		size_t n = N_TOK * V_Q3;
		float *base = malloc(n * sizeof(float)), *lg = malloc(n * sizeof(float));
		assert_true(base && lg);
		logits_with(&c, &ck, base);
		ref_cfg off = c;
		off.qk_norm = false;
		logits_with(&off, &ck, lg);
		expect_moved(base, lg, n, 1e-3, "no q/k norms");
		off = c;
		off.act = REF_ACT_GELU_TANH;
		logits_with(&off, &ck, lg);
		expect_moved(base, lg, n, 1e-3, "gelu_pytorch_tanh instead of silu");
		if (f == 1) {
			off = c;
			off.norm_topk = false;
			logits_with(&off, &ck, lg);
			expect_moved(base, lg, n, 1e-3, "top-k weights not renormalised");
		}
		free(base);
		free(lg);
		ref_set_clear(&ck);
		close_model(&m);
	}
}

#define Q3_JSON(arch, mt, tmt, text)                                                               \
	"{\"architectures\": [\"" arch "\"], \"model_type\": \"" mt "\", \"text_config\": "        \
	"{\"model_type\": \"" tmt "\", \"hidden_size\": 64, \"num_attention_heads\": 4, "          \
	"\"num_key_value_heads\": 2, \"num_hidden_layers\": 2, \"vocab_size\": 100, "              \
	"\"intermediate_size\": 96, \"rope_scaling\": {\"mrope_interleaved\": true, "              \
	"\"mrope_section\": [4, 2, 2], \"rope_type\": \"default\"}" text "}, "                     \
	"\"vision_config\": {}}"
#define Q3D(text) Q3_JSON("Qwen3VLForConditionalGeneration", "qwen3_vl", "qwen3_vl_text", text)
#define Q3M(text)                                                                                  \
	Q3_JSON("Qwen3VLMoeForConditionalGeneration", "qwen3_vl_moe", "qwen3_vl_moe_text", text)

static void test_q3vl_config(void **state)
{
	(void)state;
	ref_cfg c;
	wt_errbuf err = {0};
	/* Qwen3VLTextConfig's defaults: theta 5e6, eps 1e-6, head_dim 128, silu, untied */
	static const char dense[] = Q3D("");
	assert_int_equal(ref_cfg_parse_json(dense, strlen(dense), &c, &err), WT_OK);
	assert_true(c.kind == REF_DENSE && c.qk_norm && c.d == 128 && !c.tied &&
	            c.act == REF_ACT_SILU && !c.q3vl_moe);
	assert_float_equal(c.theta, 5000000.0, 1e-3);
	assert_float_equal(c.eps, 1e-6, 1e-15);
	/* the MoE: 60 experts of 1408 top 4 by default; norm_topk_prob false still
	 * renormalises (Qwen3VLMoeTextSparseMoeBlock does not read it); head_dim hid / H */
	static const char moe[] = Q3M(", \"norm_topk_prob\": false");
	assert_int_equal(ref_cfg_parse_json(moe, strlen(moe), &c, &err), WT_OK);
	assert_true(c.kind == REF_QWEN2_MOE && c.q3vl_moe && c.norm_topk && c.E == 60 &&
	            c.Ie == 1408 && c.topk == 4 && c.d == 16 && c.sparse_step == 1);
	static const char gelu[] = Q3M(", \"hidden_act\": \"gelu_pytorch_tanh\", "
	                               "\"num_experts\": 4, \"num_experts_per_tok\": 1");
	assert_int_equal(ref_cfg_parse_json(gelu, strlen(gelu), &c, &err), WT_OK);
	assert_true(c.act == REF_ACT_GELU_TANH && c.E == 4 && c.topk == 1);
	expect_cfg(Q3D(", \"hidden_act\": \"relu\""), WT_EUNSUPPORTED, "hidden_act 'relu'");
	expect_cfg(Q3M(", \"num_experts_per_tok\": 61"), WT_EUNSUPPORTED, "top-k");
	expect_cfg(Q3D(", \"rms_norm_eps\": -1"), WT_ECORRUPT, "epsilon");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_q3vl_pass),   cmocka_unit_test(test_q3vl_transformers),
	    cmocka_unit_test(test_q3vl_caught), cmocka_unit_test(test_q3vl_switches),
	    cmocka_unit_test(test_q3vl_config),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
