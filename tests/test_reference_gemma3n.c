/*
 * test_reference_gemma3n.c — the reference forward pass over Gemma 3n's language model
 * (Gemma3nForCausalLM, fixture gemma3n_text: hid 64, 4 heads / 2 kv heads of 32, I 128, V 1200,
 * five layers sliding / sliding / full / sliding / full with a window of 4, the last two sharing
 * layers 1's and 2's keys and values, the gaussian top-k in layers 0 and 1, AltUp over four
 * streams, laurel_rank 16, per-layer inputs of 16 over 1000 rows, tied; seed printed). Full and
 * sharded logits agree within REF_TOL_F32 (TP 1, 2, 4) or the quantized layouts' budgets; the
 * full path's logits equal transformers 4.57.1's (eager, float32, strict load) at 28 points;
 * rank tensors broken the way a wrong planner would break them are caught; the switches the
 * family reads move the logits.
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

#define FAM "gemma3n_text"
#define L1  "model.layers.1."
#define V   1200

static int setup(void **state)
{
	(void)state;
	static const char *fams[] = {FAM};
	return gen_fixtures("reference_gemma3n", fams, 1);
}

static void test_g3n_pass(void **state)
{
	(void)state;
	expect_pass(FAM, 1, 1, WT_QUANT_NONE, 0);
	expect_pass(FAM, 2, 1, WT_QUANT_NONE, 0);
	expect_pass(FAM, 4, 1, WT_QUANT_NONE, 0);
	expect_pass(FAM, 2, 1, WT_QUANT_INT8_CHANNEL, 0);
	expect_pass(FAM, 4, 1, WT_QUANT_FP8_CHANNEL, 0);
}

/* (token, vocabulary entry, transformers 4.57.1 logit), tokens g_tokens: Gemma3nForCausalLM.
 * from_pretrained of the fixture (seed 11; strict: no missing / unexpected / mismatched key),
 * eager, float32, use_cache (its KV-shared layers read their source layers' keys and values
 * only through the cache): columns 0, 573, 999 and the row's largest */
static const gold_pt gold_g3n[] = {
    {0, 0, -2.346157551e+00f},   {0, 573, 2.900952816e+00f},  {0, 999, -7.200558782e-01f},
    {0, 1105, 1.112674999e+01f}, {1, 0, -1.168460608e+00f},   {1, 573, 2.201738834e+00f},
    {1, 999, 1.013935757e+01f},  {1, 736, 1.127516079e+01f},  {2, 0, 2.885992527e+00f},
    {2, 573, -3.648153782e+00f}, {2, 999, 6.719306946e+00f},  {2, 17, 1.557320595e+01f},
    {3, 0, 1.328317165e+00f},    {3, 573, -2.822223425e+00f}, {3, 999, -6.797015667e+00f},
    {3, 749, 1.163209915e+01f},  {4, 0, -5.830698490e+00f},   {4, 573, -3.740284741e-01f},
    {4, 999, 8.206030130e-01f},  {4, 438, 1.176943493e+01f},  {5, 0, -9.850684404e-01f},
    {5, 573, -8.161833286e-01f}, {5, 999, -9.400950670e-01f}, {5, 256, 1.167625713e+01f},
    {6, 0, -9.975382090e-01f},   {6, 573, -8.688810349e+00f}, {6, 999, -4.670758545e-01f},
    {6, 1043, 1.186125278e+01f},
};

#define GOLD_TOL 1e-4

static void test_g3n_transformers(void **state)
{
	(void)state;
	expect_gold(FAM, V, GOLD_TOL, gold_g3n, sizeof(gold_g3n) / sizeof(gold_g3n[0]));
}

static void test_g3n_caught(void **state)
{
	(void)state;
	expect_swapped(FAM, 2, 1, L1 "self_attn.qkv_proj.weight",
	               "the ranks' q/k/v heads exchanged");
	expect_swapped(FAM, 2, 1, L1 "self_attn.o_proj.weight", "o_proj columns exchanged");
	expect_swapped(FAM, 2, 1, L1 "mlp.gate_up_proj.weight", "gate_up rows exchanged");
	expect_swapped(FAM, 2, 1, L1 "mlp.down_proj.weight", "down_proj columns exchanged");
	expect_swapped(FAM, 2, 1, L1 "laurel.linear_left.weight", "Laurel's left rows exchanged");
	expect_swapped(FAM, 2, 1, L1 "laurel.linear_right.weight",
	               "Laurel's right columns exchanged");
	expect_swapped(FAM, 2, 1, "model.per_layer_model_projection.weight",
	               "the per-layer projection's rows exchanged");
	/* at TP 4 ranks 0 and 1 hold real rows only (1000 padded to 1024, 256 a rank) */
	expect_swapped(FAM, 4, 1, "model.embed_tokens_per_layer.weight",
	               "the per-layer embedding's vocabulary rows exchanged");
	expect_swapped(FAM, 2, 1, "model.altup_projections.1.weight",
	               "an AltUp projection's rows exchanged");
	expect_swapped(FAM, 2, 1, "model.altup_unembed_projections.2.weight",
	               "an AltUp unembedding's rows exchanged");
	/* rank 1's gate_up_proj [up_r; gate_r] (64 rows each) */
	tamper_halves h = {L1 "mlp.gate_up_proj.weight", 1, 1, 64, 64 * sizeof(float)};
	expect_halves_swapped(FAM, 2, 1, h, "rank 1's gate / up halves exchanged");
}

/* The fixture's reading, and each switch of the pass moves the logits. */
static void test_g3n_switches(void **state)
{
	(void)state;
	model m = {0};
	ref_set ck = {0};
	ref_cfg c;
	wt_errbuf err = {0};
	open_model(&m, FAM);
	assert_int_equal(ref_load_ckpt(m.c, &c, &ck, &err), WT_OK);
	assert_true(c.g3n && c.kind == REF_DENSE && c.tied && c.L == 5 && c.H == 4 && c.KV == 2 &&
	            c.d == 32 && c.I == 128 && c.g3n_alt == 4 && c.g3n_active == 0 &&
	            c.g3n_laurel == 16 && c.g3n_ple == 16 && c.g3n_pvocab == 1000 && c.window == 4);
	assert_true(c.g3n_full[0] == 0x14u && c.g3n_src[0] == -1 && c.g3n_src[2] == -1 &&
	            c.g3n_src[3] == 1 && c.g3n_src[4] == 2);
	assert_float_equal(c.g3n_zmul[0], 1.6448536f, 1e-6);
	assert_float_equal(c.g3n_zmul[2], 0.0f, 0.0);
	assert_float_equal(c.final_cap, 30.0, 0.0);
	size_t n = N_TOK * V;
	float *base = malloc(n * sizeof(float)), *lg = malloc(n * sizeof(float));
	assert_true(base && lg);
	logits_with(&c, &ck, base);
	ref_cfg off = c;
	off.g3n_src[3] = off.g3n_src[4] = -1;
	logits_with(&off, &ck, lg);
	expect_moved(base, lg, n, 1e-3, "the KV-shared layers on their own keys and values");
	off = c;
	off.g3n_zmul[0] = off.g3n_zmul[1] = 0.0f;
	logits_with(&off, &ck, lg);
	expect_moved(base, lg, n, 1e-3, "without the gaussian top-k");
	off = c;
	off.window = 64;
	logits_with(&off, &ck, lg);
	expect_moved(base, lg, n, 1e-3, "without the sliding window");
	off = c;
	off.g3n_active = 1;
	logits_with(&off, &ck, lg);
	expect_moved(base, lg, n, 1e-3, "AltUp's active stream 1");
	off = c;
	off.final_cap = 0;
	logits_with(&off, &ck, lg);
	expect_moved(base, lg, n, 1e-3, "without the soft cap");
	free(base);
	free(lg);
	ref_set_clear(&ck);
	close_model(&m);
}

/* ref_cfg_g3n of config.json text js over L layers. */
static int cfg_of(const char *js, int64_t L, ref_cfg *c, wt_errbuf *err)
{
	memset(c, 0, sizeof(*c));
	c->L = L;
	c->H = 8;
	return ref_cfg_g3n(c, "Gemma3nForCausalLM", js, strlen(js), err);
}

/* Gemma3nTextConfig's defaults for what config.json leaves out, and the refusals. */
static void test_g3n_config(void **state)
{
	(void)state;
	ref_cfg c;
	wt_errbuf err = {0};
	assert_int_equal(cfg_of("{}", 35, &c, &err), WT_OK);
	assert_float_equal(c.final_cap, 30.0, 0.0);
	assert_float_equal(c.theta, 1e6, 0.0);
	assert_float_equal(c.theta_local, 1e4, 0.0);
	assert_float_equal(c.eps, 1e-6, 0.0);
	assert_int_equal(c.window, 512);
	assert_float_equal(c.g3n_zmul[9], 1.6448536f, 1e-6); /* 0.95 in the first 10 layers */
	assert_float_equal(c.g3n_zmul[10], 0.0f, 0.0);
	assert_int_equal(cfg_of("{}", 10, &c, &err), WT_OK); /* 10 layers or fewer: none */
	assert_float_equal(c.g3n_zmul[0], 0.0f, 0.0);
	assert_int_equal(cfg_of("{\"final_logit_softcapping\": null}", 5, &c, &err), WT_OK);
	assert_float_equal(c.final_cap, 0.0, 0.0);
	assert_int_equal(
	    cfg_of("{\"rope_scaling\": {\"rope_type\": \"linear\", \"factor\": 2.0}}", 5, &c, &err),
	    WT_EUNSUPPORTED);
	print_message("%s\n", err.msg);
	assert_non_null(strstr(err.msg, "rope_scaling"));
	assert_int_equal(cfg_of("{\"activation_sparsity_pattern\": [0.9, 0.0]}", 5, &c, &err),
	                 WT_ECORRUPT);
	assert_non_null(strstr(err.msg, "activation_sparsity_pattern"));
	assert_int_equal(cfg_of("{}", REF_G3N_MAX_LAYERS + 1, &c, &err), WT_EUNSUPPORTED);
	assert_int_equal(cfg_of("{\"rope_local_base_freq\": 0}", 5, &c, &err), WT_ECORRUPT);
	assert_non_null(strstr(err.msg, "rope_local_base_freq"));
	assert_int_equal(cfg_of("{\"rms_norm_eps\": -1}", 5, &c, &err), WT_ECORRUPT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_g3n_pass),   cmocka_unit_test(test_g3n_transformers),
	    cmocka_unit_test(test_g3n_caught), cmocka_unit_test(test_g3n_switches),
	    cmocka_unit_test(test_g3n_config),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
