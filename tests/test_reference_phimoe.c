/*
 * test_reference_phimoe.c — the reference forward pass over PhiMoE
 * (PhiMoEForCausalLM, Phi-3.5-MoE; reference/cfg_phimoe.c): LayerNorms with bias,
 * q/k/v/o biases, Mixtral's experts routed by sparsemixer (eval), LongRoPE with
 * short_mscale, and lm_head.bias added to the logits, cut over the TP ranks as the LM
 * head's rows. Full and sharded logits agree within REF_TOL_F32 (TP 2, EP 2, TP 2 x EP 2,
 * TP 8) or the scheme's budget; another rank's lm_head.bias, a non-zero padding entry
 * of it and exchanged expert stacks are caught; sparsemixer picks and weighs as
 * modeling_phimoe.py does (hand-computed cases), and replacing it by a softmax top-2
 * moves the logits, as do the LM head bias and the mscale; configurations the reference
 * does not model are refused. The fixture comes from $WT_BUILD/wt-mkckpt --family phimoe
 * (hid 256, H 8, KV 2, d 32, 4 experts, V 1003; seed printed).
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

#define V_PM 1003 /* the fixture's vocab_size: 512 entries per TP 2 rank, 21 of them padding */

static int setup(void **state)
{
	(void)state;
	static const char *fams[] = {"phimoe"};
	return gen_fixtures("reference_phimoe", fams, 1);
}

static void test_phimoe_pass(void **state)
{
	(void)state;
	expect_pass("phimoe", 2, 1, WT_QUANT_NONE, 0);
	expect_pass("phimoe", 1, 2, WT_QUANT_NONE, 0);
	expect_pass("phimoe", 2, 2, WT_QUANT_NONE, 1);
	expect_pass("phimoe", 8, 1, WT_QUANT_NONE, 0); /* KV 2 < TP 8; 128 entries per rank */
	expect_pass("phimoe", 2, 1, WT_QUANT_INT8_CHANNEL, 0);
	expect_pass("phimoe", 2, 2, WT_QUANT_FP8_CHANNEL, 0);
}

static void tamper_lm_bias(void *ctx, ref_set *r, uint32_t n)
{
	(void)ctx; /* TP 2: rank 0's lm_head.bias holds rank 1's slice */
	assert_int_equal(n, 2);
	ref_tensor *a = find_tensor(&r[0], "lm_head.bias"), *b = find_tensor(&r[1], "lm_head.bias");
	assert_int_equal(a->nbytes, b->nbytes);
	memcpy(a->data, b->data, a->nbytes);
}

static void tamper_lm_bias_pad(void *ctx, ref_set *r, uint32_t n)
{
	(void)ctx; /* TP 2: padding entry 500 of rank 1 (vocab row 1012) non-zero */
	assert_int_equal(n, 2);
	ref_tensor *t = find_tensor(&r[1], "lm_head.bias");
	uint16_t one = kern_f32_to_bf16(1.0f);
	memcpy(t->data + 500 * 2, &one, sizeof(one));
}

static void tamper_experts(void *ctx, ref_set *r, uint32_t n)
{
	(void)ctx; /* EP 2: experts 0-1 and 2-3 exchanged */
	assert_int_equal(n, 2);
	swap_data(&r[0], &r[1], "model.layers.1.block_sparse_moe.experts.w2_weight");
	swap_data(&r[0], &r[1], "model.layers.1.block_sparse_moe.experts.w13_weight");
}

static void test_phimoe_caught(void **state)
{
	(void)state;
	ref_result res;
	wt_errbuf err = {0};
	assert_int_equal(run("phimoe", 2, 1, WT_QUANT_NONE, 0, tamper_lm_bias, NULL, &res, &err),
	                 WT_OK);
	assert_false(res.pass);
	assert_int_equal(
	    run("phimoe", 2, 1, WT_QUANT_NONE, 0, tamper_lm_bias_pad, NULL, &res, &err),
	    WT_ECORRUPT);
	assert_non_null(strstr(err.msg, "lm_head.bias"));
	assert_non_null(strstr(err.msg, "padding entry 500"));
	assert_int_equal(run("phimoe", 1, 2, WT_QUANT_NONE, 0, tamper_experts, NULL, &res, &err),
	                 WT_OK);
	assert_false(res.pass);
}

/* sparsemixer's picks and weights, hand-computed from modeling_phimoe.py's eval path */
static void test_sparsemixer(void **state)
{
	(void)state;
	int64_t idx[2], codes[2];
	float w[2];
	/* thr 0.02: expert 1 is within (1 - 0.99) / 1 = 0.01 of expert 0, 2 and 3 are masked;
	 * then expert 1 alone */
	const float a[4] = {1.0f, 0.99f, 0.5f, -2.0f};
	ref_route_sparsemixer(a, 4, 0.01, NULL, idx, w, codes);
	assert_true(idx[0] == 0 && idx[1] == 1);
	assert_float_equal(w[0], 1.0 / (1.0 + exp(-0.01)), 1e-6);
	assert_float_equal(w[1], 1.0f, 1e-6);
	/* thr 0.6: expert 2 (0.5 below, relative 0.5) joins both softmaxes, 3 (1.5) does not */
	ref_route_sparsemixer(a, 4, 0.3, NULL, idx, w, codes);
	assert_true(idx[0] == 0 && idx[1] == 1);
	double e0 = exp(1.0), e1 = exp(0.99), e2 = exp(0.5);
	assert_float_equal(w[0], e0 / (e0 + e1 + e2), 1e-6);
	assert_float_equal(w[1], e1 / (e1 + e2), 1e-6);
	/* negative scores: the relative gap divides by max(|s_e|, top): expert 3 is
	 * 0.02 / 0.52 = 0.038 below expert 1 (kept at thr 0.1, masked at thr 0.02) */
	const float b[4] = {-1.0f, -0.5f, -3.0f, -0.52f};
	ref_route_sparsemixer(b, 4, 0.05, NULL, idx, w, codes);
	assert_true(idx[0] == 1 && idx[1] == 3);
	assert_float_equal(w[0], 1.0 / (1.0 + exp(-0.02)), 1e-6);
	assert_float_equal(w[1], 1.0f, 1e-6);
	ref_route_sparsemixer(b, 4, 0.01, NULL, idx, w, codes);
	assert_float_equal(w[0], 1.0f, 1e-6);
	/* forced experts (the sharded path under quantization): weights at them */
	const int64_t forced[2] = {1, 0};
	ref_route_sparsemixer(a, 4, 0.3, forced, idx, w, codes);
	assert_true(idx[0] == 1 && idx[1] == 0);
	assert_float_equal(w[0], e1 / (e0 + e1 + e2), 1e-6);
	/* the full path's codes: expert 0 with {0, 1} kept, then expert 1 alone */
	ref_route_sparsemixer(a, 4, 0.01, NULL, idx, w, codes);
	assert_true(codes[0] == (0 | 3 << 8) && codes[1] == (1 | 2 << 8));
	/* forced codes keep the full path's masks: expert 1 moved to 0.97 (0.03 below, past
	 * thr 0.02) still shares the first softmax; recomputed, it would not */
	const float a2[4] = {1.0f, 0.97f, 0.5f, -2.0f};
	const int64_t fc[2] = {codes[0], codes[1]};
	ref_route_sparsemixer(a2, 4, 0.01, fc, idx, w, codes);
	assert_true(idx[0] == 0 && idx[1] == 1);
	assert_float_equal(w[0], 1.0 / (1.0 + exp(-0.03)), 1e-6);
	ref_route_sparsemixer(a2, 4, 0.01, NULL, idx, w, codes);
	assert_float_equal(w[0], 1.0f, 1e-6);
}

static void test_phimoe_switches(void **state)
{
	(void)state;
	model m = {0};
	ref_set ck = {0};
	ref_cfg c;
	wt_errbuf err = {0};
	open_model(&m, "phimoe");
	assert_int_equal(ref_load_ckpt(m.c, &c, &ck, &err), WT_OK);
	assert_true(c.kind == REF_MIXTRAL && c.phimoe && c.layernorm && c.lm_bias && c.E == 4 &&
	            c.topk == 2 && c.n_ext == 16 && c.rope_orig_max == 4096 && c.V == V_PM);
	assert_float_equal(c.jitter_eps, 0.01, 1e-12);
	assert_float_equal(c.rope_mscale, 1.2431631, 1e-6);
	assert_float_equal(c.eps, 1e-5, 1e-12);
	size_t n = N_TOK * V_PM;
	float *base = malloc(n * sizeof(float)), *lg = malloc(n * sizeof(float));
	assert_true(base && lg);
	logits_with(&c, &ck, base);
	ref_cfg off = c;
	off.phimoe = false; /* Mixtral's softmax top-2, renormalised */
	logits_with(&off, &ck, lg);
	expect_moved(base, lg, n, 1e-3, "sparsemixer vs softmax top-2");
	off = c;
	off.jitter_eps = 0.5; /* a wider sparsemixer mask */
	logits_with(&off, &ck, lg);
	expect_moved(base, lg, n, 1e-3, "router_jitter_noise 0.5 vs 0.01");
	off = c;
	off.lm_bias = false;
	logits_with(&off, &ck, lg);
	expect_moved(base, lg, n, 1e-2, "without lm_head.bias");
	off = c;
	off.rope_mscale = 1.0;
	logits_with(&off, &ck, lg);
	expect_moved(base, lg, n, 1e-3, "short_mscale 1");
	free(base);
	free(lg);
	ref_set_clear(&ck);
	close_model(&m);
}

#define PM_JSON(extra)                                                                             \
	"{\"architectures\": [\"PhiMoEForCausalLM\"], \"hidden_size\": 64, "                       \
	"\"num_attention_heads\": 4, \"num_hidden_layers\": 1, \"vocab_size\": 100, "              \
	"\"intermediate_size\": 32, \"num_local_experts\": 4" extra "}"
#define PM_ROPE(orig, mscales)                                                                     \
	PM_JSON(", \"num_experts_per_tok\": 2, \"rope_scaling\": {\"type\": \"longrope\", "        \
	        "\"original_max_position_embeddings\": " orig ", \"short_factor\": [1, 1, 1, 1, "  \
	        "1, 1, 1, 1], \"long_factor\": [2, 2, 2, 2, 2, 2, 2, 2]" mscales "}")

static void test_phimoe_config(void **state)
{
	(void)state;
	ref_cfg c;
	wt_errbuf err = {0};
	/* PhimoeConfig's defaults: rope_theta 1e6, eps 1e-5, jitter 0.01, no lm_head bias */
	static const char plain[] = PM_JSON(", \"num_experts_per_tok\": 2");
	assert_int_equal(ref_cfg_parse_json(plain, strlen(plain), &c, &err), WT_OK);
	assert_true(c.phimoe && !c.lm_bias && c.n_ext == 0 && c.window == 0);
	assert_float_equal(c.theta, 1e6, 1e-3);
	assert_float_equal(c.eps, 1e-5, 1e-12);
	assert_float_equal(c.jitter_eps, 0.01, 1e-12);
	expect_cfg(PM_ROPE("4096", ", \"short_mscale\": 1.5, \"long_mscale\": 1.7"), WT_OK, "");
	/* sparsemixer routes exactly 2 */
	expect_cfg(PM_JSON(", \"num_experts_per_tok\": 3"), WT_EUNSUPPORTED, "exactly 2");
	/* mscales are required; the long LongRoPE is not modelled within 64 tokens */
	expect_cfg(PM_ROPE("4096", ", \"long_mscale\": 1.7"), WT_ECORRUPT, "short_mscale");
	expect_cfg(PM_ROPE("32", ", \"short_mscale\": 1.5, \"long_mscale\": 1.7"), WT_EUNSUPPORTED,
	           "original_max_position_embeddings 32");
	expect_cfg(PM_JSON(", \"num_experts_per_tok\": 2, \"rope_scaling\": {\"type\": "
	                   "\"linear\", \"factor\": 2.0}"),
	           WT_EUNSUPPORTED, "'linear'");
	expect_cfg(PM_JSON(", \"num_experts_per_tok\": 2, \"hidden_act\": \"gelu\""),
	           WT_EUNSUPPORTED, "gelu");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_phimoe_pass),   cmocka_unit_test(test_phimoe_caught),
	    cmocka_unit_test(test_sparsemixer),   cmocka_unit_test(test_phimoe_switches),
	    cmocka_unit_test(test_phimoe_config),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
