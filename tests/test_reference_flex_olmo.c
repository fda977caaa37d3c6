/*
 * test_reference_flex_olmo.c — the reference forward pass over FlexOlmo
 * (FlexOlmoForCausalLM; reference/cfg.c, cfg_fam.c): OLMo 2's decoder (no input norms,
 * post_attention_layernorm / post_feedforward_layernorm on the block outputs, q_norm /
 * k_norm over all of q and k) with OLMoE's softmax top-k experts in every layer
 * (norm_topk_prob false). Full and sharded logits agree within REF_TOL_F32 (TP 1, 2, 4,
 * 8; EP 2 and 4) or the quantized layouts' budgets; the full path's logits equal
 * transformers 4.57.1's (eager, float32) at 28 points; rank tensors broken the way a wrong
 * planner would break them are caught; each switch moves the logits; config defaults and
 * refusals. Fixture from $WT_BUILD/wt-mkckpt --family flex_olmo (hid 256, H 8, KV 2, d 32,
 * I 128, 4 experts top-2, V 1000, 2 layers; seed printed).
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

#define V_FO 1000
#define L0   "model.layers.0."
#define L1   "model.layers.1."

static int setup(void **state)
{
	(void)state;
	static const char *fams[] = {"flex_olmo"};
	return gen_fixtures("reference_flex_olmo", fams, 1);
}

static void test_flex_olmo_pass(void **state)
{
	(void)state;
	expect_pass("flex_olmo", 1, 1, WT_QUANT_NONE, 0);
	expect_pass("flex_olmo", 2, 1, WT_QUANT_NONE, 0);
	expect_pass("flex_olmo", 4, 1, WT_QUANT_NONE, 0);
	expect_pass("flex_olmo", 8, 1, WT_QUANT_NONE, 0); /* KV 2 < TP 8 */
	expect_pass("flex_olmo", 1, 4, WT_QUANT_NONE, 0);
	expect_pass("flex_olmo", 2, 2, WT_QUANT_NONE, 1);
	expect_pass("flex_olmo", 2, 1, WT_QUANT_INT8_CHANNEL, 0);
	expect_pass("flex_olmo", 4, 1, WT_QUANT_FP8_CHANNEL, 0);
	expect_pass("flex_olmo", 2, 2, WT_QUANT_FP8_BLOCK, 0);
}

/* (row, column, transformers 4.57.1 logit), tokens g_tokens */
static const gold_pt gold_fo[] = {
    {0, 22, 4.36991751e-02f},   {0, 668, 2.70530999e-01f},  {0, 803, -3.32536399e-01f},
    {0, 807, -2.38075793e-01f}, {1, 53, -8.98314565e-02f},  {1, 277, 4.21715617e-01f},
    {1, 284, 2.20865384e-01f},  {1, 977, -1.61141068e-01f}, {2, 1, -8.39968443e-01f},
    {2, 45, 2.81372726e-01f},   {2, 48, -7.06344843e-01f},  {2, 130, 3.51460576e-01f},
    {3, 234, 8.68245512e-02f},  {3, 282, -1.01107806e-01f}, {3, 650, 2.96764851e-01f},
    {3, 748, 1.84918866e-01f},  {4, 177, -8.91679823e-02f}, {4, 796, 3.66668165e-01f},
    {4, 844, 1.52595907e-01f},  {4, 895, -1.33138001e-02f}, {5, 491, 2.30457976e-01f},
    {5, 662, 1.60820544e-01f},  {5, 664, 5.59503436e-01f},  {5, 676, -2.85597324e-01f},
    {6, 270, 3.12984645e-01f},  {6, 361, 1.87773556e-01f},  {6, 879, 1.34969950e-01f},
    {6, 900, -1.96117789e-01f},
};

/* The full path's logits at the golden points, within 1e-5 (over all 7000 logits 1.4e-6 of max
 * |logit| 1.33): the post norms, the full-width q/k norms and the routing each move them by far
 * more (test_flex_olmo_switches, test_flex_olmo_caught). */
#define GOLD_TOL 1e-5

static void test_flex_olmo_transformers(void **state)
{
	(void)state;
	const char *dump = getenv("WT_REF_DUMP"); /* the whole [7, V] logits, for a comparison */
	if (dump != NULL) {
		float *lg = malloc(N_TOK * V_FO * sizeof(float));
		assert_non_null(lg);
		ref_cfg c;
		full_logits("flex_olmo", lg, &c);
		FILE *f = fopen(dump, "wb");
		assert_non_null(f);
		assert_int_equal(fwrite(lg, sizeof(float), N_TOK * V_FO, f), N_TOK * V_FO);
		fclose(f);
		free(lg);
	}
	expect_gold("flex_olmo", V_FO, GOLD_TOL, gold_fo, sizeof(gold_fo) / sizeof(gold_fo[0]));
}

/* Set element i of a BF16 tensor to v. */
static void set_bf16_at(ref_tensor *t, int64_t i, float v)
{
	assert_int_equal(t->dtype, WT_BF16);
	assert_true(i >= 0 && (uint64_t)(i + 1) * 2 <= t->nbytes);
	uint16_t x = kern_f32_to_bf16(v);
	memcpy(t->data + i * 2, &x, sizeof(x));
}

static void tamper_q_norm_slice(void *ctx, ref_set *r, uint32_t n)
{
	(void)ctx; /* TP 2: rank 1's q_norm replica holds rank 0's half where its own should be */
	assert_int_equal(n, 2);
	ref_tensor *t = find_tensor(&r[1], L1 "self_attn.q_norm.weight");
	memcpy(t->data + t->nbytes / 2, t->data, t->nbytes / 2);
}

static void tamper_k_norm(void *ctx, ref_set *r, uint32_t n)
{
	(void)ctx; /* TP 2: rank 1 holds kv head 1, k_norm [32, 64) */
	assert_int_equal(n, 2);
	set_bf16_at(find_tensor(&r[1], L0 "self_attn.k_norm.weight"), 40, 3.0f);
}

static void tamper_post_ff_norm(void *ctx, ref_set *r, uint32_t n)
{
	(void)ctx; /* TP 2: rank 1's post_feedforward_layernorm replica off in one entry */
	assert_int_equal(n, 2);
	set_bf16_at(find_tensor(&r[1], L1 "post_feedforward_layernorm.weight"), 7, 3.0f);
}

static void tamper_router(void *ctx, ref_set *r, uint32_t n)
{
	(void)ctx; /* TP 2: the router replica of rank 0 off in one entry */
	assert_int_equal(n, 2);
	set_bf16_at(find_tensor(&r[0], L0 "mlp.gate.weight"), 3, 5.0f);
}

static void test_flex_olmo_caught(void **state)
{
	(void)state;
	expect_caught("flex_olmo", 2, 1, tamper_q_norm_slice, "rank 1's q_norm half wrong");
	expect_caught("flex_olmo", 2, 1, tamper_k_norm, "rank 1's k_norm entry x3");
	expect_caught("flex_olmo", 2, 1, tamper_post_ff_norm, "rank 1's post-MLP norm entry");
	expect_caught("flex_olmo", 2, 1, tamper_router, "rank 0's router entry");
}

/* Each switch moves the logits (the golden points above pin their values). */
static void test_flex_olmo_switches(void **state)
{
	(void)state;
	model m = {0};
	ref_set ck = {0};
	ref_cfg c;
	wt_errbuf err = {0};
	open_model(&m, "flex_olmo");
	assert_int_equal(ref_load_ckpt(m.c, &c, &ck, &err), WT_OK);
	assert_true(c.flex_olmo && c.olmo2 && c.sandwich && c.qk_norm && c.qk_norm_full &&
	            c.kind == REF_QWEN2_MOE && !c.tied && c.d == 32 && c.L == 2 && c.E == 4 &&
	            c.topk == 2 && !c.norm_topk && c.Is == 0 && c.act == REF_ACT_SILU);
	assert_float_equal(c.eps, 1e-6, 1e-15);
	size_t n = N_TOK * V_FO;
	float *base = malloc(n * sizeof(float)), *lg = malloc(n * sizeof(float));
	assert_true(base && lg);
	logits_with(&c, &ck, base);
	ref_cfg off = c;
	off.norm_topk = true;
	logits_with(&off, &ck, lg);
	expect_moved(base, lg, n, 1e-3, "top-k renormalised");
	off = c;
	off.qk_norm_full = false;
	off.qk_norm = false;
	logits_with(&off, &ck, lg);
	expect_moved(base, lg, n, 1e-3, "no q/k norms");
	off = c;
	off.topk = 1;
	logits_with(&off, &ck, lg);
	expect_moved(base, lg, n, 1e-3, "top-1");
	free(base);
	free(lg);
	ref_set_clear(&ck);
	close_model(&m);
}

#define FO(extra)                                                                                  \
	"{\"architectures\": [\"FlexOlmoForCausalLM\"], \"model_type\": \"flex_olmo\", "           \
	"\"hidden_size\": 64, \"num_attention_heads\": 4, \"num_hidden_layers\": 2, "              \
	"\"vocab_size\": 100, \"intermediate_size\": 96" extra "}"

static void test_flex_olmo_config(void **state)
{
	(void)state;
	ref_cfg c;
	wt_errbuf err = {0};
	/* FlexOlmoConfig's defaults: silu, eps 1e-6, rope_theta 500000, 7 experts top-5, not
	 * renormalised, untied */
	static const char plain[] = FO("");
	assert_int_equal(ref_cfg_parse_json(plain, strlen(plain), &c, &err), WT_OK);
	assert_true(c.flex_olmo && c.olmo2 && c.sandwich && c.qk_norm_full && !c.tied && c.E == 7 &&
	            c.topk == 5 && !c.norm_topk && c.Ie == 96 && c.KV == 4 &&
	            c.act == REF_ACT_SILU);
	assert_float_equal(c.eps, 1e-6, 1e-15);
	assert_float_equal(c.theta, 500000.0, 1e-6);
	static const char set[] = FO(", \"num_experts\": 4, \"num_experts_per_tok\": 2, "
	                             "\"norm_topk_prob\": true, \"rms_norm_eps\": 1e-5");
	assert_int_equal(ref_cfg_parse_json(set, strlen(set), &c, &err), WT_OK);
	assert_true(c.E == 4 && c.topk == 2 && c.norm_topk);
	assert_float_equal(c.eps, 1e-5, 1e-15);
	expect_cfg(FO(", \"hidden_act\": \"relu6\""), WT_EUNSUPPORTED, "relu6");
	expect_cfg(FO(", \"num_experts\": 4, \"num_experts_per_tok\": 5"), WT_EUNSUPPORTED,
	           "top-k");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_flex_olmo_pass),   cmocka_unit_test(test_flex_olmo_transformers),
	    cmocka_unit_test(test_flex_olmo_caught), cmocka_unit_test(test_flex_olmo_switches),
	    cmocka_unit_test(test_flex_olmo_config),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
