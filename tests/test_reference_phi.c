/*
 * test_reference_phi.c — the reference forward pass over Phi (PhiForCausalLM, phi-2;
 * reference/cfg_neox.c, neox.c): one input_layernorm before the parallel attention and MLP
 * (x + attn(ln(x)) + mlp(ln(x))), q/k/v and dense with biases, RoPE on the first
 * int(d * partial_rotary_factor) dims, fc2(gelu_new(fc1(x))) with biases, final_layernorm,
 * lm_head with its bias (vocab parallel, padding zero). Full and sharded logits agree within
 * REF_TOL_F32 (TP 1, 2, 4, 8) or the quantized layouts' budgets; the full path's logits equal
 * transformers 4.57.1's (eager, float32) at 28 points; rank tensors broken the way a wrong
 * planner would break them are caught; each switch moves the logits; config defaults and
 * refusals. Fixture from $WT_BUILD/wt-mkckpt --family phi (hid 128, H 8, d 16, I 512, V 1000,
 * 2 layers; seed printed).
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

#define V_PH 1000
#define L1   "model.layers.1."

static int setup(void **state)
{
	(void)state;
	static const char *fams[] = {"phi"};
	return gen_fixtures("reference_phi", fams, 1);
}

static void test_phi_pass(void **state)
{
	(void)state;
	expect_pass_tp("phi", true);
	expect_pass("phi", 2, 1, WT_QUANT_FP8_BLOCK, 0);
}

/* (row, column, transformers 4.57.1 logit), tokens g_tokens */
static const gold_pt gold_phi[] = {
    {0, 35, 8.21390972e-02f},   {0, 421, -6.42982125e-02f}, {0, 641, -1.39875472e-01f},
    {0, 692, 3.95954624e-02f},  {1, 113, -2.05448970e-01f}, {1, 119, 5.75003102e-02f},
    {1, 652, 1.45766646e-01f},  {1, 659, 8.86955261e-02f},  {2, 107, 1.43943042e-01f},
    {2, 201, -6.54363036e-02f}, {2, 217, 2.45365009e-01f},  {2, 716, 2.36106098e-01f},
    {3, 348, -1.80169284e-01f}, {3, 413, -9.97971892e-02f}, {3, 479, 9.37356576e-02f},
    {3, 730, 7.59209171e-02f},  {4, 16, -1.09775767e-01f},  {4, 152, -1.02187142e-01f},
    {4, 300, 7.83218443e-02f},  {4, 389, -1.35790884e-01f}, {5, 44, -1.85653046e-01f},
    {5, 78, 5.62932119e-02f},   {5, 624, -1.50601521e-01f}, {5, 681, -3.27413201e-01f},
    {6, 272, -1.81533813e-01f}, {6, 290, -1.03110775e-01f}, {6, 542, 4.93060797e-02f},
    {6, 652, -1.75969571e-01f},
};

/* The full path's logits at the golden points, within 1e-5 (over all 7000 logits 4.8e-7
 * of max |logit| 0.93): the partial rotary, the parallel block, gelu_new and the biases
 * each move them by far more (test_phi_switches, test_phi_caught). */
#define GOLD_TOL 1e-5

static void test_phi_transformers(void **state)
{
	(void)state;
	expect_gold("phi", V_PH, GOLD_TOL, gold_phi, sizeof(gold_phi) / sizeof(gold_phi[0]));
}

/* BF16 tensor name of rank set r times f. */
static void scale_bf16(ref_set *r, const char *name, float f)
{
	ref_tensor *t = find_tensor(r, name);
	uint16_t *v = (uint16_t *)(void *)t->data;
	for (uint64_t i = 0; i < t->nbytes / 2; i++)
		v[i] = kern_f32_to_bf16(kern_bf16_to_f32(v[i]) * f);
}

static void tamper_lm_bias(void *ctx, ref_set *r, uint32_t n)
{
	(void)ctx; /* TP 2: rank 0's lm_head.bias slice times 3 (an exchange of the slices trips
	            * rank 1's padding check first) */
	assert_int_equal(n, 2);
	scale_bf16(&r[0], "lm_head.bias", 3.0f);
}

static void tamper_dense_bias(void *ctx, ref_set *r, uint32_t n)
{
	(void)ctx; /* TP 4: rank 0's self_attn.dense bias (added once) times 3 */
	assert_int_equal(n, 4);
	scale_bf16(&r[0], L1 "self_attn.dense.bias", 3.0f);
}

static void test_phi_caught(void **state)
{
	(void)state;
	expect_halves_swapped("phi", 2, 1,
	                      (tamper_halves){L1 "self_attn.qkv_proj.weight", 1, 1, 64, 128 * 2},
	                      "rank 1's q and k rows exchanged");
	expect_caught("phi", 2, 1, tamper_lm_bias, "rank 0's lm_head.bias x3");
	expect_caught("phi", 4, 1, tamper_dense_bias, "dense bias x3 on rank 0");
	expect_swapped("phi", 2, 1, L1 "mlp.fc1.bias", "fc1 bias slices exchanged");
}

/* Each switch moves the logits (the golden points above pin their values). */
static void test_phi_switches(void **state)
{
	(void)state;
	model m = {0};
	ref_set ck = {0};
	ref_cfg c;
	wt_errbuf err = {0};
	open_model(&m, "phi");
	assert_int_equal(ref_load_ckpt(m.c, &c, &ck, &err), WT_OK);
	assert_true(c.phi && !c.neox && c.neox_par && c.layernorm && c.plain_mlp && c.lm_bias &&
	            !c.fused_ckpt && c.kind == REF_DENSE && !c.tied && c.d == 16 &&
	            c.rot_dim == 8 && c.L == 2 && c.act == REF_ACT_GELU_TANH);
	assert_float_equal(c.eps, 1e-5, 1e-15);
	size_t n = N_TOK * V_PH;
	float *base = malloc(n * sizeof(float)), *lg = malloc(n * sizeof(float));
	assert_true(base && lg);
	logits_with(&c, &ck, base);
	ref_cfg off = c;
	off.rot_dim = 16;
	logits_with(&off, &ck, lg);
	expect_moved(base, lg, n, 1e-3, "RoPE over the whole head");
	off = c;
	off.lm_bias = false;
	logits_with(&off, &ck, lg);
	expect_moved(base, lg, n, 1e-3, "lm_head.bias dropped");
	off = c;
	off.act = REF_ACT_SILU;
	logits_with(&off, &ck, lg);
	expect_moved(base, lg, n, 1e-3, "silu instead of gelu_new");
	free(base);
	free(lg);
	ref_set_clear(&ck);
	close_model(&m);
}

#define PH(extra)                                                                                  \
	"{\"architectures\": [\"PhiForCausalLM\"], \"model_type\": \"phi\", "                      \
	"\"hidden_size\": 64, \"num_attention_heads\": 4, \"num_hidden_layers\": 2, "              \
	"\"vocab_size\": 100, \"intermediate_size\": 96" extra "}"

static void test_phi_config(void **state)
{
	(void)state;
	ref_cfg c;
	wt_errbuf err = {0};
	/* PhiConfig's defaults: gelu_new, partial_rotary_factor 0.5, theta 10000, eps 1e-5,
	 * untied, lm_head.bias */
	static const char plain[] = PH("");
	assert_int_equal(ref_cfg_parse_json(plain, strlen(plain), &c, &err), WT_OK);
	assert_true(c.phi && c.neox_par && c.lm_bias && !c.tied && c.d == 16 && c.rot_dim == 8 &&
	            c.act == REF_ACT_GELU_TANH && c.KV == 4 && c.n_ext == 0);
	assert_float_equal(c.eps, 1e-5, 1e-12);
	assert_float_equal(c.theta, 10000.0, 1e-9);
	static const char set[] = PH(", \"partial_rotary_factor\": 0.25, \"rope_theta\": 500.0, "
	                             "\"layer_norm_eps\": 1e-6, \"hidden_act\": \"gelu\"");
	assert_int_equal(ref_cfg_parse_json(set, strlen(set), &c, &err), WT_OK);
	assert_true(c.rot_dim == 4 && c.act == REF_ACT_GELU);
	assert_float_equal(c.theta, 500.0, 1e-9);
	assert_float_equal(c.eps, 1e-6, 1e-15);
	expect_cfg(PH(", \"partial_rotary_factor\": 0.1"), WT_EUNSUPPORTED,
	           "partial_rotary_factor");
	expect_cfg(PH(", \"qk_layernorm\": true"), WT_EUNSUPPORTED, "qk_layernorm true");
	expect_cfg(PH(", \"hidden_act\": \"relu6\""), WT_EUNSUPPORTED, "relu6");
	expect_cfg(PH(", \"layer_norm_eps\": -1.0"), WT_ECORRUPT, "layer_norm_eps");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_phi_pass),   cmocka_unit_test(test_phi_transformers),
	    cmocka_unit_test(test_phi_caught), cmocka_unit_test(test_phi_switches),
	    cmocka_unit_test(test_phi_config),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
