/*
 * test_reference_minimax_m2.c — the reference forward pass over MiniMax-M2
 * (MiniMaxM2ForCausalLM; reference/cfg_minimax_m2.c): softmax attention with q_norm / k_norm
 * RMSNorms over all heads (in a shard each rank's own heads' channels, the mean squares
 * all-reduced), RoPE on the first rotary_dim dims, block_sparse_moe with the sigmoid router
 * choosing the top-k on score + e_score_correction_bias and weighting by the scores
 * renormalised. Full and sharded logits agree within REF_TOL_F32 (TP 1, 2, 4, 8, EP 2,
 * TP 2 x EP 2) or the quantized layouts' budgets; the full path's logits equal a torch
 * implementation of vLLM's minimax_m2.py on transformers 4.57.1's building blocks (eager,
 * float32) at 28 points; rank tensors broken the way a wrong planner would break them are
 * caught; config switches. Fixture from $WT_BUILD/wt-mkckpt --family minimax_m2 (hid 256,
 * H 8, KV 2, d 32, rotary 16, 4 experts of 128 top-2, V 1000, 3 layers; seed printed).
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

#define V_M2 1000
#define A0   "model.layers.0.self_attn."
#define A1   "model.layers.1.self_attn."
#define M1   "model.layers.1.block_sparse_moe."

static int setup(void **state)
{
	(void)state;
	static const char *fams[] = {"minimax_m2"};
	return gen_fixtures("reference_minimax_m2", fams, 1);
}

static void test_m2_pass(void **state)
{
	(void)state;
	expect_pass("minimax_m2", 1, 1, WT_QUANT_NONE, 0);
	expect_pass("minimax_m2", 2, 1, WT_QUANT_NONE, 0);
	expect_pass("minimax_m2", 4, 1, WT_QUANT_NONE, 0); /* KV 2 < TP 4: shared kv heads */
	expect_pass("minimax_m2", 8, 1, WT_QUANT_NONE, 0);
	expect_pass("minimax_m2", 1, 2, WT_QUANT_NONE, 0);
	expect_pass("minimax_m2", 2, 2, WT_QUANT_NONE, 1);
	expect_pass("minimax_m2", 2, 1, WT_QUANT_INT8_CHANNEL, 0);
	expect_pass("minimax_m2", 4, 1, WT_QUANT_FP8_CHANNEL, 0);
}

/* (row, column, torch logit), tokens g_tokens */
static const gold_pt gold_m2[] = {
    {0, 22, 3.00872654e-01f},   {0, 668, 4.65095818e-01f},  {0, 803, 3.40583980e-01f},
    {0, 807, -2.79509455e-01f}, {1, 53, 2.80840158e-01f},   {1, 277, -7.86389709e-02f},
    {1, 284, 1.50102556e-01f},  {1, 977, -1.54503167e-01f}, {2, 1, -5.30054569e-01f},
    {2, 45, -1.11512452e-01f},  {2, 48, -1.06875873e+00f},  {2, 130, -1.73255354e-01f},
    {3, 234, 2.92479157e-01f},  {3, 282, -3.59872103e-01f}, {3, 650, 2.47494668e-01f},
    {3, 748, 5.53667918e-02f},  {4, 177, -1.43357664e-02f}, {4, 796, 5.28846741e-01f},
    {4, 844, 1.42918110e-01f},  {4, 895, -3.53855222e-01f}, {5, 491, 1.80889472e-01f},
    {5, 662, 3.38246822e-02f},  {5, 664, -2.03168258e-01f}, {5, 676, -5.91620654e-02f},
    {6, 270, 1.19632266e-01f},  {6, 361, 9.78776067e-02f},  {6, 879, 7.18559995e-02f},
    {6, 900, 6.04447275e-02f},
};

/* The full path's logits at the golden points, within 1e-5 (over all 7000 logits 9.5e-7
 * of max |logit| 1.12). */
#define GOLD_TOL 1e-5

static void test_m2_torch(void **state)
{
	(void)state;
	expect_gold("minimax_m2", V_M2, GOLD_TOL, gold_m2, sizeof(gold_m2) / sizeof(gold_m2[0]));
}

/* BF16 tensor name of rank set r times f. */
static void scale_bf16(ref_set *r, const char *name, float f)
{
	ref_tensor *t = find_tensor(r, name);
	uint16_t *v = (uint16_t *)(void *)t->data;
	for (uint64_t i = 0; i < t->nbytes / 2; i++)
		v[i] = kern_f32_to_bf16(kern_bf16_to_f32(v[i]) * f);
}

static void tamper_knorm_repl(void *ctx, ref_set *r, uint32_t n)
{
	(void)ctx; /* TP 4: ranks 2 and 3 given kv head 0's k_norm channels, as a planner
	              cutting k_norm by rank / T of its rows' count would not, nor one
	              taking the first rows for every rank */
	assert_int_equal(n, 4);
	for (uint32_t k = 2; k < 4; k++) {
		ref_tensor *a = find_tensor(&r[0], A1 "k_norm.weight"),
		           *b = find_tensor(&r[k], A1 "k_norm.weight");
		memcpy(b->data, a->data, a->nbytes);
	}
}

static void tamper_qnorm(void *ctx, ref_set *r, uint32_t n)
{
	(void)ctx; /* TP 4: rank 3's q_norm times 2 */
	assert_int_equal(n, 4);
	scale_bf16(&r[3], A0 "q_norm.weight", 2.0f);
}

static void tamper_ebias(void *ctx, ref_set *r, uint32_t n)
{
	(void)ctx; /* TP 2: rank 1's correction bias reversed (the experts it chooses) */
	assert_int_equal(n, 2);
	ref_tensor *t = find_tensor(&r[1], M1 "e_score_correction_bias");
	float *v = (float *)(void *)t->data;
	for (int i = 0; i < 2; i++) {
		float x = v[i];
		v[i] = v[3 - i];
		v[3 - i] = x;
	}
}

static void test_m2_caught(void **state)
{
	(void)state;
	expect_swapped("minimax_m2", 2, 1, A0 "q_norm.weight", "q_norm slices exchanged");
	expect_swapped("minimax_m2", 2, 1, A1 "k_norm.weight", "k_norm slices exchanged");
	expect_caught("minimax_m2", 4, 1, tamper_knorm_repl, "k_norm of kv head 0 on ranks 2, 3");
	expect_caught("minimax_m2", 4, 1, tamper_qnorm, "rank 3's q_norm x2");
	expect_caught("minimax_m2", 2, 1, tamper_ebias, "rank 1's correction bias reversed");
	tamper_halves h = {M1 "experts.w13_weight", 1, 4, 64, 256 * 2};
	expect_halves_swapped("minimax_m2", 2, 1, h, "rank 1's w13 [w3; w1]");
}

/* The loaded configuration, and that the golden points see what it sets. */
static void test_m2_switches(void **state)
{
	(void)state;
	model m = {0};
	ref_set ck = {0};
	ref_cfg c;
	wt_errbuf err = {0};
	open_model(&m, "minimax_m2");
	assert_int_equal(ref_load_ckpt(m.c, &c, &ck, &err), WT_OK);
	assert_true(c.m2 && c.kind == REF_MIXTRAL && c.qk_norm && c.qk_norm_full && !c.tied &&
	            c.d == 32 && c.rot_dim == 16 && c.L == 3 && c.E == 4 && c.topk == 2 &&
	            c.norm_topk && c.n_group == 1 && c.routed_scale == 1.0);
	assert_float_equal(c.theta, 5000000.0, 1e-6);
	size_t n = N_TOK * V_M2;
	float *base = malloc(n * sizeof(float)), *lg = malloc(n * sizeof(float));
	assert_true(base && lg);
	logits_with(&c, &ck, base);
	ref_cfg off = c;
	off.rot_dim = 32;
	logits_with(&off, &ck, lg);
	expect_moved(base, lg, n, 1e-3, "rotary_dim 32");
	off = c;
	off.qk_norm_full = false; /* per head: needs [d] weights, refused */
	assert_int_not_equal(ref_forward_full(&off, &ck, g_tokens, N_TOK, lg, NULL, &err), WT_OK);
	off = c;
	off.m2 = false; /* softmax routing without the bias */
	logits_with(&off, &ck, lg);
	expect_moved(base, lg, n, 1e-3, "softmax routing");
	free(base);
	free(lg);
	ref_set_clear(&ck);
	close_model(&m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_m2_pass),
	    cmocka_unit_test(test_m2_torch),
	    cmocka_unit_test(test_m2_caught),
	    cmocka_unit_test(test_m2_switches),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
