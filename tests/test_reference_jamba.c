/*
 * test_reference_jamba.c — the reference forward pass over Jamba (JambaForCausalLM;
 * reference/jamba.c, cfg_jamba.c): layers 0, 1 and 3 Mamba (v1) mixers (in_proj [x; z],
 * the causal conv with its bias and silu, x_proj into dt / B / C and their RMSNorms,
 * dt_proj and softplus, the selective scan with A = -exp(A_log) and D, times silu(z),
 * out_proj), layer 2 Llama's attention without positions; a dense feed_forward in layers
 * 0 / 2, 4 experts top-2 (softmax, not renormalised) in 1 / 3. Full and sharded logits
 * agree within REF_TOL_F32 (TP 1, 2, 4, TP 2 x EP 2) or the quantized layouts' budgets;
 * the full path's logits equal transformers 4.57.1's (eager, float32, use_mamba_kernels
 * false) at 28 points; rank tensors broken the way a wrong planner would break them are
 * caught; each switch moves the logits; config defaults and refusals. Fixture from
 * $WT_BUILD/wt-mkckpt --family jamba (hid 128, Im 256, state 16, dt rank 8, conv 4,
 * attention H 4 / KV 2, V 1000, 4 layers); seed printed.
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

#define V_JB 1000
#define FAM  "jamba"
#define M0   "model.layers.0.mamba."

static int setup(void **state)
{
	(void)state;
	static const char *fams[] = {FAM};
	return gen_fixtures("reference_jamba", fams, 1);
}

static void test_jb_pass(void **state)
{
	(void)state;
	expect_pass(FAM, 1, 1, WT_QUANT_NONE, 0);
	expect_pass(FAM, 2, 1, WT_QUANT_NONE, 0); /* x_proj's partials summed over 2 ranks */
	expect_pass(FAM, 4, 1, WT_QUANT_NONE, 0); /* KV 2 < TP 4 too */
	expect_pass(FAM, 1, 2, WT_QUANT_NONE, 0);
	expect_pass(FAM, 2, 2, WT_QUANT_NONE, 1);
	expect_pass(FAM, 1, 1, WT_QUANT_INT8_CHANNEL, 0);
	expect_pass(FAM, 2, 1, WT_QUANT_FP8_CHANNEL, 0);
	expect_pass(FAM, 1, 2, WT_QUANT_FP8_BLOCK, 0);
}

/* (row, column, transformers 4.57.1 logit), tokens g_tokens */
static const gold_pt gold_jb[] = {
    {0, 22, -4.14923280e-01f},  {0, 668, 1.64334923e-01f},  {0, 803, -7.93921351e-02f},
    {0, 807, 1.09659083e-01f},  {1, 53, -5.01764603e-02f},  {1, 277, 6.43012002e-02f},
    {1, 284, 8.66381526e-02f},  {1, 977, 6.80311173e-02f},  {2, 1, -3.37598979e-01f},
    {2, 45, 1.34397537e-01f},   {2, 48, 3.07934999e-01f},   {2, 130, -1.05855003e-01f},
    {3, 234, -3.06680173e-01f}, {3, 282, 1.58260077e-01f},  {3, 650, 2.50094652e-01f},
    {3, 748, 5.29576875e-02f},  {4, 177, 2.29066700e-01f},  {4, 796, 1.99377581e-01f},
    {4, 844, -3.83115947e-01f}, {4, 895, -1.75337315e-01f}, {5, 491, -2.31364027e-01f},
    {5, 662, 3.09075415e-01f},  {5, 664, -1.52931586e-01f}, {5, 676, -2.47104496e-01f},
    {6, 270, 5.90470508e-02f},  {6, 361, 2.50217915e-02f},  {6, 879, 1.09195963e-01f},
    {6, 900, -9.22670513e-02f},
};

/* The full path's logits at the golden points, within 1e-5 (measured 3.9e-7; over all
 * 7000 logits 7.2e-7 of max |logit| 0.89): the mixer's pieces each move them by far more
 * (test_jb_switches and the purpose-broken variants listed in the commit). */
#define GOLD_TOL 1e-5

static void test_jb_transformers(void **state)
{
	(void)state;
	expect_gold(FAM, V_JB, GOLD_TOL, gold_jb, sizeof(gold_jb) / sizeof(gold_jb[0]));
}

/* BF16 tensor name of rank set r times f. */
static void scale_bf16(ref_set *r, const char *name, float f)
{
	ref_tensor *t = find_tensor(r, name);
	uint16_t *v = (uint16_t *)(void *)t->data;
	for (uint64_t i = 0; i < t->nbytes / 2; i++)
		v[i] = kern_f32_to_bf16(kern_bf16_to_f32(v[i]) * f);
}

static void tamper_xproj(void *ctx, ref_set *r, uint32_t n)
{
	(void)ctx; /* TP 2: the ranks' x_proj column slices exchanged (each rank's dt / B / C
	              partial from the other's channels) */
	assert_int_equal(n, 2);
	swap_data(&r[0], &r[1], M0 "x_proj.weight");
}

static void tamper_in_halves(void *ctx, ref_set *r, uint32_t n)
{
	(void)ctx; /* TP 2: rank 0's in_proj x and z rows (128 each of 128 BF16) exchanged, as
	              a planner cutting in_proj as one block would mix them */
	assert_int_equal(n, 2);
	swap_stack_halves(find_tensor(&r[0], M0 "in_proj.weight")->data, 1, 128, 128 * 2);
}

static void tamper_bnorm(void *ctx, ref_set *r, uint32_t n)
{
	(void)ctx; /* TP 2: rank 1's b_layernorm replica times 2 */
	assert_int_equal(n, 2);
	scale_bf16(&r[1], M0 "b_layernorm.weight", 2.0f);
}

static void tamper_router(void *ctx, ref_set *r, uint32_t n)
{
	(void)ctx; /* TP 2: rank 0's router of layer 1 times 4 */
	assert_int_equal(n, 2);
	scale_bf16(&r[0], "model.layers.1.feed_forward.router.weight", 4.0f);
}

static void test_jb_caught(void **state)
{
	(void)state;
	expect_caught(FAM, 2, 1, tamper_xproj, "the ranks' x_proj columns exchanged");
	expect_caught(FAM, 2, 1, tamper_in_halves, "rank 0's in_proj x / z exchanged");
	expect_halves_swapped(FAM, 4, 1, (tamper_halves){M0 "A_log", 3, 1, 32, 16 * 2},
	                      "rank 3's A_log halves exchanged");
	expect_caught(FAM, 2, 1, tamper_bnorm, "rank 1's b_layernorm x2");
	expect_caught(FAM, 2, 1, tamper_router, "rank 0's router x4");
}

/* Each switch moves the logits (the golden points above pin their values). */
static void test_jb_switches(void **state)
{
	(void)state;
	model m = {0};
	ref_set ck = {0};
	ref_cfg c;
	wt_errbuf err = {0};
	open_model(&m, FAM);
	assert_int_equal(ref_load_ckpt(m.c, &c, &ck, &err), WT_OK);
	assert_true(c.jamba && !c.g4 && !c.tied && c.kind == REF_QWEN2_MOE && c.E == 4 &&
	            c.topk == 2 && !c.norm_topk && c.Ie == 64 && c.Is == 0 && c.I == 64 &&
	            c.d == 32 && c.L == 4 && c.act == REF_ACT_SILU);
	assert_true(c.m_inner == 256 && c.m_rank == 8 && c.m_state == 16 && c.m_conv == 4);
	for (int64_t i = 0; i < 4; i++) {
		assert_int_equal(ref_jb_mamba_layer(&c, i), i != 2);
		assert_int_equal(ref_layer_is_moe(&c, i), i % 2 == 1);
	}
	assert_float_equal(c.eps, 1e-6, 1e-15);
	size_t n = N_TOK * V_JB;
	float *base = malloc(n * sizeof(float)), *lg = malloc(n * sizeof(float));
	assert_true(base && lg);
	logits_with(&c, &ck, base);
	ref_cfg off = c;
	off.norm_topk = true;
	logits_with(&off, &ck, lg);
	expect_moved(base, lg, n, 1e-3, "the top-k weights renormalised");
	off = c;
	off.act = REF_ACT_GELU; /* the conv's, the gate's and the MLPs' activation */
	logits_with(&off, &ck, lg);
	expect_moved(base, lg, n, 1e-3, "gelu for silu");
	off = c;
	off.eps = 1e-2; /* the dt / B / C norms and the layer norms */
	logits_with(&off, &ck, lg);
	expect_moved(base, lg, n, 1e-3, "rms_norm_eps 1e-2");
	off = c;
	off.g4_mamba[0] &= ~(1ull << 3); /* layer 3 read as attention: no such tensors */
	assert_int_equal(ref_forward_full(&off, &ck, g_tokens, N_TOK, lg, NULL, &err),
	                 WT_ENOTFOUND);
	free(base);
	free(lg);
	ref_set_clear(&ck);
	close_model(&m);
}

#define JB(extra)                                                                                  \
	"{\"architectures\": [\"JambaForCausalLM\"], \"model_type\": \"jamba\", "                  \
	"\"hidden_size\": 64, \"num_attention_heads\": 4, \"num_key_value_heads\": 2, "            \
	"\"num_hidden_layers\": 4, \"vocab_size\": 100, \"intermediate_size\": 32" extra "}"

static void test_jb_config(void **state)
{
	(void)state;
	ref_cfg c;
	wt_errbuf err = {0};
	/* JambaConfig's defaults: 16 experts top-2 in the odd layers (period 2, offset 1), no
	 * attention in 4 layers (period 8, offset 4), Im 128 (expand 2), dt rank "auto" 4,
	 * state 16, conv 4, silu, eps 1e-6, untied */
	static const char plain[] = JB("");
	assert_int_equal(ref_cfg_parse_json(plain, strlen(plain), &c, &err), WT_OK);
	assert_true(c.jamba && !c.tied && c.kind == REF_QWEN2_MOE && c.E == 16 && c.topk == 2 &&
	            !c.norm_topk && c.Ie == 32 && c.m_inner == 128 && c.m_rank == 4 &&
	            c.m_state == 16 && c.m_conv == 4 && c.act == REF_ACT_SILU && c.d == 16);
	assert_float_equal(c.eps, 1e-6, 1e-15);
	for (int64_t i = 0; i < 4; i++) {
		assert_true(ref_jb_mamba_layer(&c, i));
		assert_int_equal(ref_layer_is_moe(&c, i), i % 2 == 1);
	}
	/* one expert: every feed_forward dense; layer 1 attends; dt rank given */
	static const char dense[] = JB(", \"num_experts\": 1, \"attn_layer_period\": 2, "
	                               "\"attn_layer_offset\": 1, \"mamba_dt_rank\": 6");
	assert_int_equal(ref_cfg_parse_json(dense, strlen(dense), &c, &err), WT_OK);
	assert_true(c.kind == REF_DENSE && c.m_rank == 6 && ref_jb_mamba_layer(&c, 0) &&
	            !ref_jb_mamba_layer(&c, 1) && !ref_layer_is_moe(&c, 1));
	expect_cfg(JB(", \"hidden_act\": \"relu\""), WT_EUNSUPPORTED, "hidden_act");
	expect_cfg(JB(", \"head_dim\": 32"), WT_EUNSUPPORTED, "head_dim 32");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_jb_pass),   cmocka_unit_test(test_jb_transformers),
	    cmocka_unit_test(test_jb_caught), cmocka_unit_test(test_jb_switches),
	    cmocka_unit_test(test_jb_config),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
