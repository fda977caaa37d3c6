/*
 * test_reference_lfm2_moe.c — the reference forward pass over LFM2-MoE (Lfm2MoeForCausalLM;
 * reference/cfg_lfm2.c, lfm2.c, the MoE of reference.c / shard_moe.c): LFM2's short-conv and
 * attention layers; layer 0's feed_forward the SwiGLU (w1 / w3 / w2), layers 1-3 the MoE as
 * vLLM's lfm2_moe.py runs it (sigmoid of feed_forward.gate, the top-k chosen on it plus the
 * expert bias, weighted by the sigmoid, renormalised, x routed_scaling_factor; experts w1 /
 * w3 / w2). Full and sharded logits agree within REF_TOL_F32 (TP 1, 2, 4, TP 2 x EP 2) or the
 * quantized layouts' budgets; the full path's logits equal a torch model built from
 * transformers 4.57.1's Lfm2 blocks with a torch MoE block of vLLM's semantics at 28 points;
 * rank tensors broken the way a wrong planner would break them are caught; config defaults
 * and refusals. Fixture from $WT_BUILD/wt-mkckpt --family lfm2_moe (hid 128, layers conv,
 * attention (H 4, KV 2, d 32), conv, conv; SwiGLU 192 in layer 0, 8 experts of 64, top 3,
 * in 1-3; V 1000, tied; seed printed).
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

#define V_LM 1000
#define FAM  "lfm2_moe"
#define L1   "model.layers.1.feed_forward."
#define L2   "model.layers.2.feed_forward."

static int setup(void **state)
{
	(void)state;
	static const char *fams[] = {FAM};
	return gen_fixtures("reference_lfm2_moe", fams, 1);
}

static void test_lm_pass(void **state)
{
	(void)state;
	expect_pass(FAM, 1, 1, WT_QUANT_NONE, 0);
	expect_pass(FAM, 2, 1, WT_QUANT_NONE, 0); /* 32 of each expert's 64 rows a rank */
	expect_pass(FAM, 4, 1, WT_QUANT_NONE, 0);
	expect_pass(FAM, 2, 2, WT_QUANT_NONE, 0); /* 4 whole experts an EP rank */
	expect_pass(FAM, 2, 1, WT_QUANT_INT8_CHANNEL, 0);
	expect_pass(FAM, 4, 1, WT_QUANT_FP8_CHANNEL, 0);
}

/* (row, column, logit of the torch model from transformers 4.57.1's Lfm2 blocks and the MoE
 * in torch), tokens g_tokens */
static const gold_pt gold_lm[] = {
    {0, 49, 1.12004437e-01f},   {0, 291, -2.99977779e-01f}, {0, 411, -1.14414051e-01f},
    {0, 695, 3.46450388e-01f},  {1, 192, 5.81640303e-02f},  {1, 229, 2.84432024e-01f},
    {1, 717, -4.16952334e-02f}, {1, 838, -2.05502525e-01f}, {2, 185, -1.68127596e-01f},
    {2, 477, -2.59207100e-01f}, {2, 611, 4.07434285e-01f},  {2, 879, 2.84117669e-01f},
    {3, 339, 1.53620034e-01f},  {3, 505, -1.65810257e-01f}, {3, 517, 1.37966588e-01f},
    {3, 546, -1.56818870e-02f}, {4, 106, 1.45618856e-01f},  {4, 386, -2.88690627e-03f},
    {4, 459, 1.49359271e-01f},  {4, 490, 1.47893280e-01f},  {5, 83, -1.08392775e-01f},
    {5, 414, 1.57645732e-01f},  {5, 416, 5.11706434e-02f},  {5, 732, 2.20725238e-02f},
    {6, 384, -7.94360191e-02f}, {6, 558, 1.83449686e-02f},  {6, 647, 5.85696958e-02f},
    {6, 838, 1.76335052e-02f},
};

/* The full path's logits at the golden points, within 1e-5 (over all 7000 logits 8.5e-7 of
 * max |logit| 0.945, a ratio of 9.0e-7; at these points 4.5e-7). */
#define GOLD_TOL 1e-5

static void test_lm_transformers(void **state)
{
	(void)state;
	expect_gold(FAM, V_LM, GOLD_TOL, gold_lm, sizeof(gold_lm) / sizeof(gold_lm[0]));
}

static void test_lm_caught(void **state)
{
	(void)state;
	expect_swapped(FAM, 2, 1, L1 "experts.w13_weight",
	               "MoE layer 1's expert w1 / w3 rows exchanged between the ranks");
	expect_swapped(FAM, 4, 1, L2 "experts.w2_weight",
	               "MoE layer 2's expert w2 columns exchanged between ranks 0 and 1");
	/* TP 2: rank 1's w13 [8, 64, 128]: each expert's w1 / w3 halves of 32 rows exchanged */
	expect_halves_swapped(FAM, 2, 1, (tamper_halves){L1 "experts.w13_weight", 1, 8, 32, 256},
	                      "rank 1's expert w1 / w3 exchanged");
	/* EP 2: rank 0's experts 0-1 and 2-3 exchanged in its w13 stack [4, 128, 128] */
	expect_halves_swapped(FAM, 2, 2, (tamper_halves){L1 "experts.w13_weight", 0, 1, 256, 256},
	                      "EP rank 0's w13 expert slots 0-1 and 2-3 exchanged");
	expect_halves_swapped(
	    FAM, 2, 1, (tamper_halves){"model.layers.0.feed_forward.w13.weight", 1, 1, 96, 256},
	    "rank 1's dense w13 gate / up exchanged");
	expect_swapped(FAM, 2, 1, "model.layers.0.feed_forward.w2.weight",
	               "layer 0's dense w2 columns exchanged between the ranks");
}

/* The loaded configuration; the expert bias, the renormalisation and the scale each move the
 * logits. */
static void test_lm_switches(void **state)
{
	(void)state;
	model m = {0};
	ref_set ck = {0};
	ref_cfg c;
	wt_errbuf err = {0};
	open_model(&m, FAM);
	assert_int_equal(ref_load_ckpt(m.c, &c, &ck, &err), WT_OK);
	assert_true(c.lfm2 && c.lfm2_moe && c.lfm2_bias && c.kind == REF_MIXTRAL && c.tied &&
	            c.L == 4 && c.I == 192 && c.E == 8 && c.Ie == 64 && c.topk == 3 &&
	            c.n_group == 1 && c.topk_group == 1 && c.norm_topk && c.first_dense == 1 &&
	            c.d == 32 && c.lfm2_kconv == 3);
	for (int64_t l = 0; l < 4; l++) {
		assert_int_equal(ref_lfm2_conv(&c, l), l != 1);
		assert_int_equal(ref_layer_is_moe(&c, l), l > 0);
	}
	assert_float_equal(c.routed_scale, 1.5, 1e-12);
	size_t n = N_TOK * V_LM;
	float *base = malloc(n * sizeof(float)), *lg = malloc(n * sizeof(float));
	assert_true(base && lg);
	logits_with(&c, &ck, base);
	ref_cfg off = c;
	off.lfm2_bias = false;
	logits_with(&off, &ck, lg);
	expect_moved(base, lg, n, 1e-3, "chosen without the expert bias");
	off = c;
	off.norm_topk = false;
	logits_with(&off, &ck, lg);
	expect_moved(base, lg, n, 1e-3, "the top-k weights not renormalised");
	off = c;
	off.routed_scale = 1.0;
	logits_with(&off, &ck, lg);
	expect_moved(base, lg, n, 1e-3, "routed_scaling_factor 1");
	free(base);
	free(lg);
	ref_set_clear(&ck);
	close_model(&m);
}

#define LM(extra)                                                                                  \
	"{\"architectures\": [\"Lfm2MoeForCausalLM\"], \"model_type\": \"lfm2_moe\", "             \
	"\"hidden_size\": 64, \"num_attention_heads\": 4, \"num_key_value_heads\": 2, "            \
	"\"num_hidden_layers\": 4, \"vocab_size\": 100" extra "}"

/* Lfm2MoeConfig's defaults (32 experts of 1792, 4 a token, 2 dense layers of 7168, the expert
 * bias, renormalised, scale 1) and the reference's refusals. */
static void test_lm_config(void **state)
{
	(void)state;
	ref_cfg c;
	wt_errbuf err = {0};
	static const char plain[] = LM("");
	assert_int_equal(ref_cfg_parse_json(plain, strlen(plain), &c, &err), WT_OK);
	assert_true(c.lfm2_moe && c.tied && c.E == 32 && c.Ie == 1792 && c.topk == 4 &&
	            c.I == 7168 && c.first_dense == 2 && c.lfm2_bias && c.norm_topk &&
	            c.n_group == 1 && c.topk_group == 1 && c.lfm2_kconv == 3);
	assert_float_equal(c.routed_scale, 1.0, 1e-12);
	assert_float_equal(c.eps, 1e-5, 1e-15);
	assert_float_equal(c.theta, 1000000.0, 1e-6);
	static const char off[] =
	    LM(", \"use_expert_bias\": false, \"norm_topk_prob\": false, \"num_dense_layers\": 0, "
	       "\"routed_scaling_factor\": 2.5");
	assert_int_equal(ref_cfg_parse_json(off, strlen(off), &c, &err), WT_OK);
	assert_true(!c.lfm2_bias && !c.norm_topk && c.first_dense == 0);
	assert_float_equal(c.routed_scale, 2.5, 1e-12);
	expect_cfg(LM(", \"num_experts\": 1024"), WT_EUNSUPPORTED, "experts 1024");
	expect_cfg(LM(", \"routed_scaling_factor\": 1e300"), WT_ECORRUPT,
	           "routed_scaling_factor 1e+300");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_lm_pass),   cmocka_unit_test(test_lm_transformers),
	    cmocka_unit_test(test_lm_caught), cmocka_unit_test(test_lm_switches),
	    cmocka_unit_test(test_lm_config),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
