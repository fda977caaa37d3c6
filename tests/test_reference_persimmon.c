/*
 * test_reference_persimmon.c — the reference forward pass over Persimmon
 * (PersimmonForCausalLM; reference/cfg_neox.c, neox.c): LayerNorms with biases, the
 * sequential residual, query_key_value [H, 3, d] per head with its bias (reordered as
 * GPT-NeoX's), q_layernorm / k_layernorm [d] with biases shared by every head before RoPE on
 * the first 8 of 16 head dims (rope_theta 25000), dense_4h_to_h(relu2(dense_h_to_4h(x))) with
 * biases, final_layernorm, lm_head untied. Full and sharded logits agree within REF_TOL_F32
 * (TP 1, 2, 4) or the quantized layouts' budgets; the full path's logits equal transformers
 * 4.57.1's (eager, float32) at 28 points; rank tensors broken the way a wrong planner would
 * break them are caught; each switch moves the logits; config keys and refusals. Fixture from
 * $WT_BUILD/wt-mkckpt --family persimmon (hid 128, H 8, I 512, V 1000, 2 layers; seed
 * printed).
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

#define V_PS 1000
#define A1   "model.layers.1.self_attn."

static int setup(void **state)
{
	(void)state;
	static const char *fams[] = {"persimmon"};
	return gen_fixtures("reference_persimmon", fams, 1);
}

static void test_persimmon_pass(void **state)
{
	(void)state;
	expect_pass_tp("persimmon", false);
	expect_pass("persimmon", 2, 1, WT_QUANT_FP8_BLOCK, 0);
}

/* (row, column, transformers 4.57.1 logit), tokens g_tokens */
static const gold_pt gold_persimmon[] = {
    {0, 128, 4.73801911e-01f},  {0, 133, -1.03099398e-01f}, {0, 499, 1.23711824e-02f},
    {0, 796, -3.75995010e-01f}, {1, 28, 3.08015347e-02f},   {1, 147, 5.44551760e-02f},
    {1, 401, 1.79954425e-01f},  {1, 484, -8.65653064e-03f}, {2, 129, 2.85889894e-01f},
    {2, 541, 3.55880857e-01f},  {2, 753, -1.37397707e-01f}, {2, 948, 2.68062647e-03f},
    {3, 145, 4.12410557e-01f},  {3, 367, -3.58715445e-01f}, {3, 443, 1.37739480e-01f},
    {3, 510, 7.60490224e-02f},  {4, 137, 2.23334461e-01f},  {4, 347, -2.13400513e-01f},
    {4, 788, -5.32199293e-02f}, {4, 853, 1.02832302e-01f},  {5, 510, 3.47205490e-01f},
    {5, 815, -1.72360927e-01f}, {5, 839, -2.56751999e-02f}, {5, 939, 2.94313878e-01f},
    {6, 134, 2.20074654e-01f},  {6, 204, -4.49583709e-01f}, {6, 308, -2.40466580e-01f},
    {6, 553, 1.79096758e-02f},
};

/* The full path's logits at the golden points, within 1e-5 (over all 7000 logits 5.7e-7 of
 * max |logit| 1.05): the q/k layernorms, the rotary dims and relu2 each move them by far more
 * (test_persimmon_switches). */
#define GOLD_TOL 1e-5

static void test_persimmon_transformers(void **state)
{
	(void)state;
	expect_gold("persimmon", V_PS, GOLD_TOL, gold_persimmon,
	            sizeof(gold_persimmon) / sizeof(gold_persimmon[0]));
}

static void tamper_dense(void *ctx, ref_set *r, uint32_t n)
{
	(void)ctx; /* TP 4: two ranks' dense column slices exchanged */
	assert_int_equal(n, 4);
	swap_data(&r[0], &r[3], A1 "dense.weight");
}

static void tamper_kln(void *ctx, ref_set *r, uint32_t n)
{
	(void)ctx; /* TP 2: rank 1's k_layernorm bias replaced by its q_layernorm's */
	assert_int_equal(n, 2);
	ref_tensor *k = (ref_tensor *)ref_set_find(&r[1], A1 "k_layernorm.bias");
	const ref_tensor *q = ref_set_find(&r[1], A1 "q_layernorm.bias");
	assert_non_null(k);
	assert_non_null(q);
	memcpy(k->data, q->data, k->nbytes);
}

static void test_persimmon_caught(void **state)
{
	(void)state;
	expect_swapped("persimmon", 2, 1, A1 "query_key_value.weight",
	               "the ranks' query_key_value heads exchanged");
	expect_caught("persimmon", 4, 1, tamper_dense, "dense slices exchanged");
	expect_swapped("persimmon", 2, 1, "model.layers.1.mlp.dense_h_to_4h.bias",
	               "dense_h_to_4h bias slices exchanged");
	expect_caught("persimmon", 2, 1, tamper_kln, "k_layernorm bias on rank 1");
}

/* Each switch moves the logits (the golden points above pin their values). */
static void test_persimmon_switches(void **state)
{
	(void)state;
	model m = {0};
	ref_set ck = {0};
	ref_cfg c;
	wt_errbuf err = {0};
	open_model(&m, "persimmon");
	assert_int_equal(ref_load_ckpt(m.c, &c, &ck, &err), WT_OK);
	assert_true(c.persimmon && c.ps_qkln && c.layernorm && c.fused_ckpt && c.plain_mlp &&
	            !c.neox && !c.phi && !c.neox_par && !c.qk_norm && !c.lm_bias &&
	            c.kind == REF_DENSE && !c.tied && c.d == 16 && c.H == 8 && c.KV == 8 &&
	            c.I == 512 && c.L == 2 && c.act == REF_ACT_RELU2 && c.rot_dim == 8);
	assert_float_equal(c.eps, 1e-5, 1e-15);
	assert_float_equal(c.theta, 25000.0, 0.0);
	size_t n = N_TOK * V_PS;
	float *base = malloc(n * sizeof(float)), *lg = malloc(n * sizeof(float));
	assert_true(base && lg);
	logits_with(&c, &ck, base);
	ref_cfg off = c;
	off.ps_qkln = false;
	logits_with(&off, &ck, lg);
	expect_moved(base, lg, n, 1e-3, "q/k layernorms dropped");
	off = c;
	off.rot_dim = 16;
	logits_with(&off, &ck, lg);
	expect_moved(base, lg, n, 1e-3, "RoPE on the whole head");
	off = c;
	off.theta = 10000.0;
	logits_with(&off, &ck, lg);
	expect_moved(base, lg, n, 1e-5, "rope_theta 10000");
	off = c;
	off.act = REF_ACT_GELU;
	logits_with(&off, &ck, lg);
	expect_moved(base, lg, n, 1e-3, "GELU instead of relu2");
	off = c;
	off.neox_par = true;
	logits_with(&off, &ck, lg);
	expect_moved(base, lg, n, 1e-3, "parallel residual");
	free(base);
	free(lg);
	ref_set_clear(&ck);
	close_model(&m);
}

#define PS(extra)                                                                                  \
	"{\"architectures\": [\"PersimmonForCausalLM\"], \"model_type\": \"persimmon\", "          \
	"\"hidden_size\": 64, \"num_attention_heads\": 4, \"num_hidden_layers\": 2, "              \
	"\"intermediate_size\": 256, \"vocab_size\": 100" extra "}"

static void test_persimmon_config(void **state)
{
	(void)state;
	ref_cfg c;
	wt_errbuf err = {0};
	/* PersimmonConfig's defaults: relu2, partial_rotary_factor 0.5, rope_theta 25000,
	 * layer_norm_eps 1e-5, qk_layernorm true, untied */
	static const char plain[] = PS("");
	assert_int_equal(ref_cfg_parse_json(plain, strlen(plain), &c, &err), WT_OK);
	assert_true(c.persimmon && c.ps_qkln && c.H == 4 && c.KV == 4 && c.d == 16 &&
	            c.rot_dim == 8 && !c.tied && c.act == REF_ACT_RELU2);
	assert_float_equal(c.theta, 25000.0, 0.0);
	assert_float_equal(c.eps, 1e-5, 1e-15);
	static const char set[] = PS(", \"qk_layernorm\": false, \"layer_norm_eps\": 1e-6, "
	                             "\"partial_rotary_factor\": 0.25, \"rope_theta\": 10000, "
	                             "\"hidden_act\": \"gelu\"");
	assert_int_equal(ref_cfg_parse_json(set, strlen(set), &c, &err), WT_OK);
	assert_true(!c.ps_qkln && c.rot_dim == 4 && c.act == REF_ACT_GELU);
	assert_float_equal(c.eps, 1e-6, 1e-15);
	assert_float_equal(c.theta, 10000.0, 0.0);
	expect_cfg(PS(", \"layer_norm_eps\": 1e-6"), WT_EUNSUPPORTED, "layer_norm_eps");
	expect_cfg(PS(", \"rope_scaling\": {\"rope_type\": \"linear\", \"factor\": 2.0}"),
	           WT_EUNSUPPORTED, "linear");
	expect_cfg(PS(", \"partial_rotary_factor\": 0.05"), WT_EUNSUPPORTED,
	           "partial_rotary_factor");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_persimmon_pass),   cmocka_unit_test(test_persimmon_transformers),
	    cmocka_unit_test(test_persimmon_caught), cmocka_unit_test(test_persimmon_switches),
	    cmocka_unit_test(test_persimmon_config),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
