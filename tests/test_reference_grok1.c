/*
 * test_reference_grok1.c — the reference forward pass over Grok-1 (Grok1ModelForCausalLM,
 * remote code; fixture grok1): four RMSNorms per layer (x += post_attn_norm(attn(
 * pre_attn_norm(x))), x += post_moe_norm(moe(pre_moe_norm(x)))), GQA attention with
 * rotate-half RoPE, scores soft-capped cap tanh(s / cap) (attn_logit_softcapping 1.0 in the
 * fixture), o_proj's output times attn_output_multiplier, the router's logits capped
 * 30 tanh(x / 30) then softmax top-2 renormalized, gelu (erf) experts linear / linear_v /
 * linear_1, the embeddings times embedding_multiplier_scale and the logits times
 * output_multiplier_scale, tied, as vLLM's grok1.py runs it. Full and sharded logits agree
 * within REF_TOL_F32 (TP 1, 2, 4, EP 2, TP 2 x EP 2) or the quantized layouts' budgets; the
 * full path's logits equal a float32 torch model of vLLM's Grok-1 semantics at 28 points (no
 * transformers class exists); rank tensors broken the way a wrong planner would break them
 * are caught. Fixture from $WT_BUILD/wt-mkckpt --family grok1 (hid 128, H 4, KV 2, d 32,
 * 4 experts of I 64 top-2, V 1000, 2 layers, tied; seed printed).
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

#define V_G 1000
#define L1  "model.layers.1."

static int setup(void **state)
{
	(void)state;
	static const char *fams[] = {"grok1"};
	return gen_fixtures("reference_grok1", fams, 1);
}

static void test_grok1_pass(void **state)
{
	(void)state;
	expect_pass("grok1", 1, 1, WT_QUANT_NONE, 0);
	expect_pass("grok1", 2, 1, WT_QUANT_NONE, 0);
	expect_pass("grok1", 4, 1, WT_QUANT_NONE, 0);
	expect_pass("grok1", 1, 2, WT_QUANT_NONE, 0);
	expect_pass("grok1", 2, 2, WT_QUANT_NONE, 0);
	expect_pass("grok1", 2, 1, WT_QUANT_INT8_CHANNEL, 0);
	expect_pass("grok1", 4, 1, WT_QUANT_FP8_CHANNEL, 0);
}

/* (token, column, torch logit), tokens g_tokens: a float32 torch model of vLLM's grok1.py
 * (no transformers class exists) on the fixture's safetensors, written from vLLM's
 * Grok1Attention / Grok1MoE / Grok1DecoderLayer / Grok1Model: RMSNorm x rsqrt(mean x^2 +
 * eps) w, rotate-half RoPE, scores times d^-0.5 then 1.0 tanh(s / 1.0), causal softmax,
 * o_proj times 0.0884, the sandwich norms, router 30 tanh(x / 30), softmax, top-2
 * renormalized, experts linear_1(gelu(linear(h)) * linear_v(h)), embeddings times 78.38,
 * logits times 0.577; all 7 x 1000 logits within 2.7e-7 of the reference's (largest 1.13).
 * Moved by (torch): the attention soft-cap off 2.8e-4, attn_output_multiplier 1 0.061,
 * embedding_multiplier_scale 1 1.18, output_multiplier_scale 1 0.83, the router cap off
 * 1.7e-5, tanh gelu in the experts 1.8e-5 */
static const gold_pt gold_grok1[] = {
    {0, 0, 8.149406314e-02f},    {0, 333, -7.516405731e-02f}, {0, 666, -1.208756790e-01f},
    {0, 999, -1.245150249e-02f}, {1, 0, 1.164432094e-01f},    {1, 333, -1.148053184e-01f},
    {1, 666, -7.428970933e-02f}, {1, 999, 9.992591739e-01f},  {2, 0, 1.260693818e-01f},
    {2, 333, 7.834791206e-03f},  {2, 666, -2.777864039e-02f}, {2, 999, 1.821239293e-01f},
    {3, 0, 1.178747229e-02f},    {3, 333, -3.029699624e-02f}, {3, 666, 8.217580616e-02f},
    {3, 999, 2.199526643e-03f},  {4, 0, 7.581427693e-02f},    {4, 333, 1.030349284e-01f},
    {4, 666, -1.523588300e-01f}, {4, 999, -2.643556148e-02f}, {5, 0, -4.209795222e-02f},
    {5, 333, 6.881300360e-02f},  {5, 666, 1.746724360e-02f},  {5, 999, -1.590642929e-01f},
    {6, 0, 6.249039248e-02f},    {6, 333, -3.962726146e-02f}, {6, 666, 2.929138243e-01f},
    {6, 999, -7.290802896e-02f}};

#define GOLD_TOL 1e-5

static void test_grok1_torch(void **state)
{
	(void)state;
	expect_gold("grok1", V_G, GOLD_TOL, gold_grok1, sizeof(gold_grok1) / sizeof(gold_grok1[0]));
}

static void test_grok1_caught(void **state)
{
	(void)state;
	expect_swapped("grok1", 2, 1, L1 "attn.qkv_proj.weight",
	               "the ranks' q/k/v heads exchanged");
	expect_swapped("grok1", 2, 1, L1 "attn.o_proj.weight", "o_proj columns exchanged");
	expect_swapped("grok1", 2, 1, L1 "moe_block.experts.w13_weight",
	               "the ranks' expert gate/up rows exchanged");
	expect_swapped("grok1", 2, 1, L1 "moe_block.experts.w2_weight",
	               "the ranks' expert down columns exchanged");
	expect_stacks_swapped("grok1", 1, 2, L1 "moe_block.experts.",
	                      "the EP ranks' expert stacks exchanged");
	expect_halves_swapped("grok1", 2, 1,
	                      (tamper_halves){L1 "moe_block.experts.w13_weight", 1, 4, 32, 128 * 2},
	                      "rank 1's linear and linear_v rows exchanged (up_gate)");
	expect_halves_swapped("grok1", 4, 1,
	                      (tamper_halves){L1 "attn.qkv_proj.weight", 1, 1, 32, 128 * 2},
	                      "rank 1's q and k rows exchanged");
}

/* Each of Grok-1's switches moves the logits (the golden points above pin their values). */
static void test_grok1_switches(void **state)
{
	(void)state;
	model m = {0};
	ref_set ck = {0};
	ref_cfg c;
	wt_errbuf err = {0};
	open_model(&m, "grok1");
	assert_int_equal(ref_load_ckpt(m.c, &c, &ck, &err), WT_OK);
	assert_true(c.grok && c.sandwich && c.kind == REF_MIXTRAL && c.tied && c.d == 32 &&
	            c.Ie == 64 && c.E == 4 && c.topk == 2 && c.norm_topk && c.L == 2 && c.H == 4 &&
	            c.KV == 2 && c.act == REF_ACT_GELU);
	assert_float_equal(c.eps, 1e-5, 1e-15);
	assert_float_equal(c.embed_scale, 78.38367176906169f, 1e-4);
	assert_float_equal(c.logit_mult, 0.5773502691896257, 1e-7);
	assert_float_equal(c.gk_attn_mult, 0.08838834764831845f, 1e-8);
	assert_float_equal(c.attn_cap, 1.0, 1e-15);
	size_t n = N_TOK * V_G;
	float *base = malloc(n * sizeof(float)), *lg = malloc(n * sizeof(float));
	assert_true(base && lg);
	logits_with(&c, &ck, base);
	ref_cfg off = c;
	off.attn_cap = 0.0;
	logits_with(&off, &ck, lg);
	expect_moved(base, lg, n, 1e-4, "attention soft-cap off");
	off = c;
	off.gk_attn_mult = 1.0f;
	logits_with(&off, &ck, lg);
	expect_moved(base, lg, n, 1e-3, "attn_output_multiplier ignored");
	off = c;
	off.embed_scale = 0.0f;
	logits_with(&off, &ck, lg);
	expect_moved(base, lg, n, 1e-3, "embedding_multiplier_scale ignored");
	off = c;
	off.logit_mult = 0.0;
	logits_with(&off, &ck, lg);
	expect_moved(base, lg, n, 1e-3, "output_multiplier_scale ignored");
	off = c;
	off.sandwich = false;
	logits_with(&off, &ck, lg);
	expect_moved(base, lg, n, 1e-3, "post_attn_norm / post_moe_norm skipped");
	free(base);
	free(lg);
	ref_set_clear(&ck);
	close_model(&m);
}

#define GK(extra)                                                                                  \
	"{\"architectures\": [\"Grok1ModelForCausalLM\"], \"model_type\": \"grok-1\", "            \
	"\"hidden_size\": 64, \"num_attention_heads\": 4, \"num_key_value_heads\": 2, "            \
	"\"num_hidden_layers\": 2, \"vocab_size\": 100, \"intermediate_size\": 32, "               \
	"\"num_experts\": 4" extra "}"

static void test_grok1_config(void **state)
{
	(void)state;
	ref_cfg c;
	wt_errbuf err = {0};
	/* Grok1Config's defaults: the multipliers, top-2, tied; vLLM's soft-cap 30 */
	static const char plain[] = GK("");
	assert_int_equal(ref_cfg_parse_json(plain, strlen(plain), &c, &err), WT_OK);
	assert_true(c.grok && c.tied && c.topk == 2 && c.d == 16 && c.Ie == 32 && c.sandwich &&
	            c.act == REF_ACT_GELU);
	assert_float_equal(c.gk_attn_mult, 0.08838834764831845f, 1e-8);
	assert_float_equal(c.embed_scale, 78.38367176906169f, 1e-4);
	assert_float_equal(c.logit_mult, 0.5773502691896257, 1e-12);
	assert_float_equal(c.attn_cap, 30.0, 0);
	assert_float_equal(c.eps, 1e-5, 1e-12);
	/* given keys; a soft-cap <= 0 is none (vLLM's max(.., 0)); max_attn_value not read */
	static const char given[] =
	    GK(", \"attn_output_multiplier\": 0.5, \"embedding_multiplier_scale\": 2.0, "
	       "\"output_multiplier_scale\": 0.25, \"attn_logit_softcapping\": -1, "
	       "\"max_attn_value\": 7.0, \"num_experts_per_tok\": 1");
	assert_int_equal(ref_cfg_parse_json(given, strlen(given), &c, &err), WT_OK);
	assert_true(c.topk == 1 && c.attn_cap == 0.0);
	assert_float_equal(c.gk_attn_mult, 0.5f, 0);
	assert_float_equal(c.embed_scale, 2.0f, 0);
	assert_float_equal(c.logit_mult, 0.25, 0);
	expect_cfg(GK(", \"num_experts_per_tok\": 5"), WT_ECORRUPT, "num_experts_per_tok");
	expect_cfg(GK(", \"rope_scaling\": {\"type\": \"linear\", \"factor\": 2.0}"),
	           WT_EUNSUPPORTED, "rope_scaling");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_grok1_pass),   cmocka_unit_test(test_grok1_torch),
	    cmocka_unit_test(test_grok1_caught), cmocka_unit_test(test_grok1_switches),
	    cmocka_unit_test(test_grok1_config),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
