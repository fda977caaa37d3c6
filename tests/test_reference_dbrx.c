/*
 * test_reference_dbrx.c — the reference forward pass over DBRX (DbrxForCausalLM;
 * reference/cfg_dbrx.c, dbrx.c): Mixtral's math under DBRX's names, bias-free LayerNorms
 * norm_1 / norm_2 / norm_f, Wqkv [q; k; v] clamped to +-clip_qkv, RoPE, the softmax top-k
 * router renormalised (moe_normalize_expert_weights 1), silu experts from the 2-D stacks
 * w1 / v1 / w2 [E*Ie, d] (w2 used as x @ w2_j). Full and sharded logits agree within
 * REF_TOL_F32 (TP 1, 2, 4, 8, EP 2, TP 2 x EP 2 up_gate) or the quantized layouts' budgets;
 * the full path's logits equal transformers 4.57.1's (eager, float32) at 28 points; rank
 * tensors broken the way a wrong planner would break them are caught; each switch moves the
 * logits; config keys and refusals. Fixture from $WT_BUILD/wt-mkckpt --family dbrx (d_model
 * 256, H 8, KV 2, 4 experts top-2 of 128, V 1000, 2 layers, clip_qkv 0.3; seed printed).
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

#define V_DB 1000
#define B1   "transformer.blocks.1."

static int setup(void **state)
{
	(void)state;
	static const char *fams[] = {"dbrx"};
	return gen_fixtures("reference_dbrx", fams, 1);
}

static void test_dbrx_pass(void **state)
{
	(void)state;
	expect_pass("dbrx", 1, 1, WT_QUANT_NONE, 0);
	expect_pass("dbrx", 2, 1, WT_QUANT_NONE, 0);
	expect_pass("dbrx", 4, 1, WT_QUANT_NONE, 0);
	expect_pass("dbrx", 8, 1, WT_QUANT_NONE, 0);
	expect_pass("dbrx", 1, 2, WT_QUANT_NONE, 0);
	expect_pass("dbrx", 2, 2, WT_QUANT_NONE, 1);
	expect_pass("dbrx", 2, 1, WT_QUANT_INT8_CHANNEL, 0);
	expect_pass("dbrx", 1, 2, WT_QUANT_FP8_CHANNEL, 0);
	expect_pass("dbrx", 2, 1, WT_QUANT_FP8_BLOCK, 0);
}

/* (row, column, transformers 4.57.1 logit), tokens g_tokens */
static const gold_pt gold_dbrx[] = {
    {0, 22, -3.14320594e-01f},  {0, 668, -2.47435585e-01f}, {0, 803, 4.17548507e-01f},
    {0, 807, 5.04818559e-02f},  {1, 53, 1.66511536e-01f},   {1, 277, 2.34670624e-01f},
    {1, 284, -2.92916670e-02f}, {1, 977, -2.18317240e-01f}, {2, 1, 4.91455913e-01f},
    {2, 45, 2.96715975e-01f},   {2, 48, 3.82294238e-01f},   {2, 130, 4.37338054e-01f},
    {3, 234, 6.73065305e-01f},  {3, 282, -3.25810671e-01f}, {3, 650, 9.43565369e-03f},
    {3, 748, 7.83252046e-02f},  {4, 177, 4.58519012e-01f},  {4, 796, 3.02824795e-01f},
    {4, 844, -5.05308136e-02f}, {4, 895, 2.95774549e-01f},  {5, 491, -1.93457127e-01f},
    {5, 662, -1.83332622e-01f}, {5, 664, 3.30179363e-01f},  {5, 676, 2.79633939e-01f},
    {6, 270, 1.32077008e-01f},  {6, 361, 1.56096756e-01f},  {6, 879, -1.89834177e-01f},
    {6, 900, 6.85570389e-02f},
};

/* The full path's logits at the golden points, within 1e-5 (over all 7000 logits 1.0e-6 of
 * max |logit| 1.29): clip_qkv, the renormalised router and the experts' layout each move
 * them by far more (test_dbrx_switches, test_dbrx_caught). */
#define GOLD_TOL 1e-5

static void test_dbrx_transformers(void **state)
{
	(void)state;
	expect_gold("dbrx", V_DB, GOLD_TOL, gold_dbrx, sizeof(gold_dbrx) / sizeof(gold_dbrx[0]));
}

static void tamper_out(void *ctx, ref_set *r, uint32_t n)
{
	(void)ctx; /* TP 4: two ranks' out_proj column slices exchanged */
	assert_int_equal(n, 4);
	swap_data(&r[0], &r[3], B1 "norm_attn_norm.attn.out_proj.weight");
}

static void test_dbrx_caught(void **state)
{
	(void)state;
	expect_halves_swapped("dbrx", 2, 1,
	                      (tamper_halves){B1 "ffn.experts.w13_weight", 1, 4, 64, 256 * 2},
	                      "rank 1's gate and up rows exchanged");
	expect_swapped("dbrx", 2, 1, B1 "ffn.experts.w2_weight", "w2_weight slices exchanged");
	expect_caught("dbrx", 4, 1, tamper_out, "out_proj slices exchanged");
	expect_swapped("dbrx", 1, 2, B1 "ffn.experts.w13_weight",
	               "the EP ranks' w13 stacks exchanged");
}

/* Each switch moves the logits (the golden points above pin their values). */
static void test_dbrx_switches(void **state)
{
	(void)state;
	model m = {0};
	ref_set ck = {0};
	ref_cfg c;
	wt_errbuf err = {0};
	open_model(&m, "dbrx");
	assert_int_equal(ref_load_ckpt(m.c, &c, &ck, &err), WT_OK);
	assert_true(c.dbrx && c.layernorm && c.fused_ckpt && c.norm_topk && !c.phimoe &&
	            c.kind == REF_MIXTRAL && !c.tied && c.d == 32 && c.KV == 2 && c.E == 4 &&
	            c.topk == 2 && c.Ie == 128 && c.L == 2 && c.act == REF_ACT_SILU);
	assert_float_equal(c.eps, 1e-5, 1e-15);
	assert_float_equal(c.clip_qkv, 0.3, 1e-12);
	assert_float_equal(c.theta, 500000.0, 1e-6);
	size_t n = N_TOK * V_DB;
	float *base = malloc(n * sizeof(float)), *lg = malloc(n * sizeof(float));
	assert_true(base && lg);
	logits_with(&c, &ck, base);
	ref_cfg off = c;
	off.clip_qkv = 0.0;
	logits_with(&off, &ck, lg);
	expect_moved(base, lg, n, 1e-3, "clip_qkv dropped");
	off = c;
	off.norm_topk = false;
	logits_with(&off, &ck, lg);
	expect_moved(base, lg, n, 1e-3, "router not renormalised");
	off = c;
	off.theta = 10000.0;
	logits_with(&off, &ck, lg);
	expect_moved(base, lg, n, 1e-3, "rope_theta 10000");
	free(base);
	free(lg);
	ref_set_clear(&ck);
	close_model(&m);
}

#define DB(attn, ffn)                                                                              \
	"{\"architectures\": [\"DbrxForCausalLM\"], \"model_type\": \"dbrx\", \"d_model\": 64, "   \
	"\"n_heads\": 4, \"n_layers\": 2, \"vocab_size\": 100, \"tie_word_embeddings\": false, "   \
	"\"attn_config\": {\"kv_n_heads\": 2" attn "}, \"ffn_config\": {\"ffn_hidden_size\": 32, " \
	"\"moe_num_experts\": 4, \"moe_top_k\": 2" ffn "}}"

static void test_dbrx_config(void **state)
{
	(void)state;
	ref_cfg c;
	wt_errbuf err = {0};
	/* DbrxConfig's defaults: rope_theta 10000, no clip, eps 1e-5 (nn.LayerNorm's) */
	static const char plain[] = DB("", "");
	assert_int_equal(ref_cfg_parse_json(plain, strlen(plain), &c, &err), WT_OK);
	assert_true(c.dbrx && c.KV == 2 && c.E == 4 && c.topk == 2 && c.Ie == 32 && c.d == 16 &&
	            c.norm_topk && !c.tied);
	assert_float_equal(c.eps, 1e-5, 1e-15);
	assert_float_equal(c.theta, 10000.0, 1e-9);
	assert_float_equal(c.clip_qkv, 0.0, 0.0);
	static const char set[] = DB(", \"rope_theta\": 500000, \"clip_qkv\": 8",
	                             ", \"moe_normalize_expert_weights\": 1");
	assert_int_equal(ref_cfg_parse_json(set, strlen(set), &c, &err), WT_OK);
	assert_float_equal(c.theta, 500000.0, 1e-9);
	assert_float_equal(c.clip_qkv, 8.0, 1e-12);
	expect_cfg(DB("", ", \"moe_normalize_expert_weights\": 2"), WT_EUNSUPPORTED,
	           "moe_normalize_expert_weights");
	expect_cfg(DB("", ", \"moe_normalize_expert_weights\": null"), WT_EUNSUPPORTED,
	           "moe_normalize_expert_weights");
	expect_cfg(DB(", \"clip_qkv\": -1", ""), WT_ECORRUPT, "clip_qkv");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_dbrx_pass),   cmocka_unit_test(test_dbrx_transformers),
	    cmocka_unit_test(test_dbrx_caught), cmocka_unit_test(test_dbrx_switches),
	    cmocka_unit_test(test_dbrx_config),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
