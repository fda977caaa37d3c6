/*
 * test_reference_mamba.c — the reference forward pass over Mamba (MambaForCausalLM;
 * reference/mamba.c over jamba.c's mixer): every layer x + mixer(RMSNorm(x)), the mixer
 * in_proj [x; z], the causal conv with its bias and silu, x_proj into dt / B / C (no
 * norms), dt_proj and softplus, the selective scan with A = -exp(A_log) and D, times
 * silu(z), out_proj; norm_f and the tied LM head. Full and sharded logits agree within
 * REF_TOL_F32 (TP 1, 2, 4, 8) and under the quantized layouts (which quantize nothing);
 * the full path's logits equal transformers 4.57.1's (float32, the sequential
 * slow_forward) at 28 points; rank tensors broken the way a wrong planner would break them
 * are caught; each switch moves the logits; MambaConfig's defaults and refusals. Fixture
 * from $WT_BUILD/wt-mkckpt --family mamba (hid 128, Im 256, state 16, dt rank 8, conv 4,
 * V 1000, 2 layers, tied); seed printed.
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

#define V_MB 1000
#define FAM  "mamba"
#define M0   "backbone.layers.0.mixer."
#define M1   "backbone.layers.1.mixer."

static int setup(void **state)
{
	(void)state;
	static const char *fams[] = {FAM};
	return gen_fixtures("reference_mamba", fams, 1);
}

/* A quantized layout at TP tp: nothing of Mamba is quantized (MambaMixer takes no
 * quant_config; embeddings and LM head never are), so it passes within the exact
 * tolerance. */
static void expect_unquantized(uint32_t tp, wt_quant q)
{
	ref_result res;
	wt_errbuf err = {0};
	assert_int_equal(run(FAM, tp, 1, q, 0, NULL, NULL, &res, &err), WT_OK);
	assert_true(res.pass && !res.diff.nonfinite && res.diff.max_abs_ref > 0.1);
	assert_true(res.diff.max_abs_diff <= REF_TOL_F32 * res.diff.max_abs_ref);
}

static void test_mb_pass(void **state)
{
	(void)state;
	expect_pass(FAM, 1, 1, WT_QUANT_NONE, 0);
	expect_pass(FAM, 2, 1, WT_QUANT_NONE, 0); /* x_proj's partials summed over 2 ranks */
	expect_pass(FAM, 4, 1, WT_QUANT_NONE, 0);
	expect_pass(FAM, 8, 1, WT_QUANT_NONE, 0); /* 32 channels a rank */
	expect_unquantized(2, WT_QUANT_INT8_CHANNEL);
	expect_unquantized(4, WT_QUANT_FP8_BLOCK);
}

/* (row, column, transformers 4.57.1 logit), tokens g_tokens */
static const gold_pt gold_mb[] = {
    {0, 307, -2.32236218e-02f}, {0, 383, 7.23499954e-02f},  {0, 933, 3.07288736e-01f},
    {0, 940, 2.08277851e-01f},  {1, 221, -1.39093593e-01f}, {1, 785, 1.37210354e-01f},
    {1, 821, 2.04035621e-02f},  {1, 882, 6.61868528e-02f},  {2, 36, 1.23065397e-01f},
    {2, 384, -2.21891433e-01f}, {2, 421, 7.55132958e-02f},  {2, 731, 2.33168051e-01f},
    {3, 19, 4.30889241e-02f},   {3, 470, -1.88076496e-01f}, {3, 790, 5.95870838e-02f},
    {3, 906, -2.34937623e-01f}, {4, 394, 1.02684602e-01f},  {4, 402, -2.91059256e-01f},
    {4, 686, -3.79281342e-01f}, {4, 991, -6.41339868e-02f}, {5, 409, -6.66560233e-03f},
    {5, 799, 2.28141546e-01f},  {5, 893, -2.60780692e-01f}, {5, 942, -2.45986879e-03f},
    {6, 231, -2.86998898e-01f}, {6, 429, 2.18568534e-01f},  {6, 444, 5.96184134e-02f},
    {6, 603, 1.98589653e-01f},
};

/* The full path's logits at the golden points, within 1e-5 (over all 7000 logits 7.2e-7
 * of max |logit| 2.60): the mixer's pieces each move them by far more (test_mb_switches
 * and the purpose-broken variants listed in the commit). */
#define GOLD_TOL 1e-5

static void test_mb_transformers(void **state)
{
	(void)state;
	expect_gold(FAM, V_MB, GOLD_TOL, gold_mb, sizeof(gold_mb) / sizeof(gold_mb[0]));
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
	(void)ctx; /* TP 2: rank 1's in_proj x and z rows (128 each of 128 BF16) exchanged, as
	              a planner cutting in_proj as one block would mix them */
	assert_int_equal(n, 2);
	swap_stack_halves(find_tensor(&r[1], M1 "in_proj.weight")->data, 1, 128, 128 * 2);
}

static void tamper_embed(void *ctx, ref_set *r, uint32_t n)
{
	(void)ctx; /* TP 2: rank 0's vocabulary rows [0, 256) and [256, 512) exchanged (tied:
	              the LM head's too) */
	assert_int_equal(n, 2);
	swap_stack_halves(find_tensor(&r[0], "backbone.embeddings.weight")->data, 1, 256, 128 * 2);
}

static void test_mb_caught(void **state)
{
	(void)state;
	expect_caught(FAM, 2, 1, tamper_xproj, "the ranks' x_proj columns exchanged");
	expect_caught(FAM, 2, 1, tamper_in_halves, "rank 1's in_proj x / z exchanged");
	expect_halves_swapped(FAM, 4, 1, (tamper_halves){M0 "A_log", 3, 1, 32, 16 * 2},
	                      "rank 3's A_log halves exchanged");
	expect_swapped(FAM, 2, 1, M1 "conv1d.bias", "the ranks' conv1d biases exchanged");
	expect_caught(FAM, 2, 1, tamper_embed, "rank 0's embedding row halves exchanged");
}

/* Each switch moves the logits (the golden points above pin their values). */
static void test_mb_switches(void **state)
{
	(void)state;
	model m = {0};
	ref_set ck = {0};
	ref_cfg c;
	wt_errbuf err = {0};
	open_model(&m, FAM);
	assert_int_equal(ref_load_ckpt(m.c, &c, &ck, &err), WT_OK);
	assert_true(c.mamba_lm && c.jamba && c.tied && c.kind == REF_DENSE && c.E == 0 &&
	            c.L == 2 && c.act == REF_ACT_SILU);
	assert_true(c.m_inner == 256 && c.m_rank == 8 && c.m_state == 16 && c.m_conv == 4);
	for (int64_t i = 0; i < 2; i++) {
		assert_true(ref_jb_mamba_layer(&c, i));
		assert_false(ref_layer_is_moe(&c, i));
	}
	assert_float_equal(c.eps, 1e-5, 1e-15);
	size_t n = N_TOK * V_MB;
	float *base = malloc(n * sizeof(float)), *lg = malloc(n * sizeof(float));
	assert_true(base && lg);
	logits_with(&c, &ck, base);
	ref_cfg off = c;
	off.act = REF_ACT_GELU; /* the conv's and the gate's activation */
	logits_with(&off, &ck, lg);
	expect_moved(base, lg, n, 1e-3, "gelu for silu");
	off = c;
	off.eps = 1e-1; /* the layer norms and norm_f */
	logits_with(&off, &ck, lg);
	expect_moved(base, lg, n, 1e-3, "layer_norm_epsilon 1e-1");
	off = c;
	off.mamba_lm = false; /* Jamba's reading: dt / B / C norms and a feed_forward it lacks */
	assert_int_equal(ref_forward_full(&off, &ck, g_tokens, N_TOK, lg, NULL, &err),
	                 WT_ENOTFOUND);
	free(base);
	free(lg);
	ref_set_clear(&ck);
	close_model(&m);
}

#define MB(extra)                                                                                  \
	"{\"architectures\": [\"MambaForCausalLM\"], \"model_type\": \"mamba\", "                  \
	"\"hidden_size\": 64, \"num_hidden_layers\": 3, \"vocab_size\": 100" extra "}"

static void test_mb_config(void **state)
{
	(void)state;
	ref_cfg c;
	wt_errbuf err = {0};
	/* MambaConfig's defaults: Im 128 (expand 2), dt rank "auto" 4, state 16, conv 4, silu,
	 * layer_norm_epsilon 1e-5, tied */
	static const char plain[] = MB("");
	assert_int_equal(ref_cfg_parse_json(plain, strlen(plain), &c, &err), WT_OK);
	assert_true(c.mamba_lm && c.jamba && c.tied && c.kind == REF_DENSE && c.m_inner == 128 &&
	            c.m_rank == 4 && c.m_state == 16 && c.m_conv == 4 && c.act == REF_ACT_SILU);
	assert_float_equal(c.eps, 1e-5, 1e-15);
	for (int64_t i = 0; i < 3; i++)
		assert_true(ref_jb_mamba_layer(&c, i));
	static const char given[] = MB(", \"intermediate_size\": 96, \"time_step_rank\": 6, "
	                               "\"layer_norm_epsilon\": 1e-6, \"state_size\": 8, "
	                               "\"tie_word_embeddings\": false");
	assert_int_equal(ref_cfg_parse_json(given, strlen(given), &c, &err), WT_OK);
	assert_true(!c.tied && c.m_inner == 96 && c.m_rank == 6 && c.m_state == 8);
	assert_float_equal(c.eps, 1e-6, 1e-15);
	expect_cfg(MB(", \"hidden_act\": \"relu\""), WT_EUNSUPPORTED, "hidden_act");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_mb_pass),   cmocka_unit_test(test_mb_transformers),
	    cmocka_unit_test(test_mb_caught), cmocka_unit_test(test_mb_switches),
	    cmocka_unit_test(test_mb_config),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
