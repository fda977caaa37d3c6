/*
 * test_reference_gptj.c — the reference forward pass over GPT-J (GPTJForCausalLM;
 * reference/cfg_neox.c, gptj.c, then Phi's path): one ln_1 before the parallel attention and
 * MLP, q/k/v/out_proj without biases, RoPE on the adjacent pairs of the first rotary_dim dims,
 * fc_out(gelu_new(fc_in(x))) with biases, ln_f, lm_head with its bias. Full and sharded logits
 * agree within REF_TOL_F32 (TP 1, 2, 4, 8) or the quantized layouts' budgets; the full path's
 * logits equal transformers 4.57.1's (eager, float32) at 28 points; rank tensors broken the
 * way a wrong planner would break them are caught; each switch moves the logits; config
 * defaults and refusals. Fixture from $WT_BUILD/wt-mkckpt --family gptj (n_embd 128, n_head 8,
 * d 16, rotary_dim 8, n_inner 256, V 1000, 2 layers; seed printed).
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

#define V_GJ 1000
#define L1   "transformer.h.1."

static int setup(void **state)
{
	(void)state;
	static const char *fams[] = {"gptj"};
	return gen_fixtures("reference_gptj", fams, 1);
}

static void test_gptj_pass(void **state)
{
	(void)state;
	expect_pass_tp("gptj", true);
	expect_pass("gptj", 2, 1, WT_QUANT_FP8_BLOCK, 0);
}

/* (row, column, transformers 4.57.1 logit), tokens g_tokens */
static const gold_pt gold_gptj[] = {
    {0, 128, 1.41925290e-01f},  {0, 133, 5.12647986e-01f},  {0, 499, -1.63061425e-01f},
    {0, 796, 7.52991438e-02f},  {1, 28, -2.58130759e-01f},  {1, 147, -1.37407318e-01f},
    {1, 401, 4.91246492e-01f},  {1, 484, -1.33520961e-01f}, {2, 129, -2.27081656e-01f},
    {2, 541, -2.05969006e-01f}, {2, 753, -2.71321744e-01f}, {2, 948, -3.07111219e-02f},
    {3, 145, -6.41730577e-02f}, {3, 367, -2.45964706e-01f}, {3, 443, -6.48424506e-01f},
    {3, 510, 1.81427747e-01f},  {4, 137, -1.98969573e-01f}, {4, 347, -4.30972815e-01f},
    {4, 788, 2.62092888e-01f},  {4, 853, -1.92906976e-01f}, {5, 510, -9.67288613e-02f},
    {5, 815, -9.93798673e-02f}, {5, 839, -3.76899466e-02f}, {5, 939, -2.20255554e-03f},
    {6, 134, -1.77371427e-01f}, {6, 204, -3.09541523e-01f}, {6, 308, 3.53905916e-01f},
    {6, 553, -1.29251257e-02f},
};

/* The full path's logits at the golden points, within 1e-5 (over all 7000 logits 4.8e-7
 * of max |logit| 0.86): the interleaved pairs, the partial rotary, the parallel block and
 * lm_head.bias each move them by far more (test_gptj_switches). */
#define GOLD_TOL 1e-5

static void test_gptj_transformers(void **state)
{
	(void)state;
	expect_gold("gptj", V_GJ, GOLD_TOL, gold_gptj, sizeof(gold_gptj) / sizeof(gold_gptj[0]));
}

static void tamper_out_proj(void *ctx, ref_set *r, uint32_t n)
{
	(void)ctx; /* TP 4: ranks 0 and 3's out_proj column slices exchanged */
	assert_int_equal(n, 4);
	swap_data(&r[0], &r[3], L1 "attn.out_proj.weight");
}

static void test_gptj_caught(void **state)
{
	(void)state;
	expect_halves_swapped("gptj", 2, 1,
	                      (tamper_halves){L1 "attn.qkv_proj.weight", 1, 1, 64, 128 * 2},
	                      "rank 1's q and k rows exchanged");
	expect_swapped("gptj", 2, 1, L1 "mlp.fc_in.bias", "fc_in bias slices exchanged");
	expect_caught("gptj", 4, 1, tamper_out_proj, "out_proj slices of ranks 0 and 3 exchanged");
}

/* Each switch moves the logits (the golden points above pin their values). */
static void test_gptj_switches(void **state)
{
	(void)state;
	model m = {0};
	ref_set ck = {0};
	ref_cfg c;
	wt_errbuf err = {0};
	open_model(&m, "gptj");
	assert_int_equal(ref_load_ckpt(m.c, &c, &ck, &err), WT_OK);
	assert_true(c.gptj && c.phi && c.neox_par && c.layernorm && c.plain_mlp && c.lm_bias &&
	            c.rope_pairs && c.kind == REF_DENSE && !c.tied && c.d == 16 && c.rot_dim == 8 &&
	            c.I == 256 && c.L == 2 && c.act == REF_ACT_GELU_TANH);
	assert_float_equal(c.eps, 1e-5, 1e-15);
	size_t n = N_TOK * V_GJ;
	float *base = malloc(n * sizeof(float)), *lg = malloc(n * sizeof(float));
	assert_true(base && lg);
	logits_with(&c, &ck, base);
	ref_cfg off = c;
	off.rope_pairs = false;
	logits_with(&off, &ck, lg);
	expect_moved(base, lg, n, 1e-3, "rotate-half instead of adjacent pairs");
	off = c;
	off.rot_dim = 16;
	logits_with(&off, &ck, lg);
	expect_moved(base, lg, n, 1e-3, "RoPE over the whole head");
	off = c;
	off.lm_bias = false;
	logits_with(&off, &ck, lg);
	expect_moved(base, lg, n, 1e-3, "lm_head.bias dropped");
	off = c;
	off.neox_par = false;
	logits_with(&off, &ck, lg);
	expect_moved(base, lg, n, 1e-3, "a sequential block");
	free(base);
	free(lg);
	ref_set_clear(&ck);
	close_model(&m);
}

#define GJ(extra)                                                                                  \
	"{\"architectures\": [\"GPTJForCausalLM\"], \"model_type\": \"gptj\", "                    \
	"\"n_embd\": 64, \"n_head\": 4, \"n_layer\": 2, \"vocab_size\": 100" extra "}"

static void test_gptj_config(void **state)
{
	(void)state;
	ref_cfg c;
	wt_errbuf err = {0};
	/* GPTJConfig's defaults: gelu_new, rotary_dim 64 (the whole 16-dim head here: refused
	 * above 16), n_inner 4 x n_embd, eps 1e-5, untied */
	static const char plain[] = GJ(", \"rotary_dim\": 8");
	assert_int_equal(ref_cfg_parse_json(plain, strlen(plain), &c, &err), WT_OK);
	assert_true(c.gptj && c.phi && c.rope_pairs && !c.tied && c.d == 16 && c.rot_dim == 8 &&
	            c.I == 256 && c.act == REF_ACT_GELU_TANH && c.KV == 4);
	assert_float_equal(c.eps, 1e-5, 1e-12);
	assert_float_equal(c.theta, 10000.0, 1e-9);
	static const char set[] =
	    GJ(", \"rotary_dim\": 16, \"n_inner\": 96, "
	       "\"layer_norm_epsilon\": 1e-6, \"activation_function\": \"gelu\"");
	assert_int_equal(ref_cfg_parse_json(set, strlen(set), &c, &err), WT_OK);
	assert_true(c.rot_dim == 16 && c.I == 96 && c.act == REF_ACT_GELU);
	assert_float_equal(c.eps, 1e-6, 1e-15);
	expect_cfg(GJ(""), WT_EUNSUPPORTED, "rotary_dim 64");
	expect_cfg(GJ(", \"rotary_dim\": null"), WT_EUNSUPPORTED, "rotary_dim null");
	expect_cfg(GJ(", \"rotary_dim\": 7"), WT_EUNSUPPORTED, "rotary_dim 7");
	expect_cfg(GJ(", \"rotary_dim\": 8, \"rope_theta\": 500.0"), WT_EUNSUPPORTED, "rope_theta");
	expect_cfg(GJ(", \"rotary_dim\": 8, \"activation_function\": \"relu6\""), WT_EUNSUPPORTED,
	           "relu6");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_gptj_pass),   cmocka_unit_test(test_gptj_transformers),
	    cmocka_unit_test(test_gptj_caught), cmocka_unit_test(test_gptj_switches),
	    cmocka_unit_test(test_gptj_config),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
