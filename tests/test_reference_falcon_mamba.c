/*
 * test_reference_falcon_mamba.c — the reference forward pass over Falcon-Mamba
 * (FalconMambaForCausalLM; reference/mamba.c over jamba.c's mixer): Mamba's
 * (test_reference_mamba.c) with the mixer's dt / B / C through weightless RMSNorms (mixer_rms_eps)
 * before dt_proj and the scan, untied. Full and sharded logits agree within REF_TOL_F32 (TP 1, 2,
 * 4, 8); the full path's logits equal transformers 4.57.1's (float32, the sequential slow_forward)
 * at 28 points; rank tensors broken the way a wrong planner would break them are caught; the norms
 * and their epsilon move the logits; FalconMambaConfig's defaults. Fixture from $WT_BUILD/wt-mkckpt
 * --family falcon_mamba (hid 128, Im 256, state 16, dt rank 8, conv 4, V 1000, 2 layers, untied);
 * seed printed.
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

#define V_FM 1000
#define FAM  "falcon_mamba"
#define M0   "backbone.layers.0.mixer."

static int setup(void **state)
{
	(void)state;
	static const char *fams[] = {FAM};
	return gen_fixtures("reference_falcon_mamba", fams, 1);
}

static void test_fm_pass(void **state)
{
	(void)state;
	expect_pass(FAM, 1, 1, WT_QUANT_NONE, 0);
	expect_pass(FAM, 2, 1, WT_QUANT_NONE, 0); /* the norms on the all-reduced dt / B / C */
	expect_pass(FAM, 4, 1, WT_QUANT_NONE, 0);
	expect_pass(FAM, 8, 1, WT_QUANT_NONE, 0);
}

/* (row, column, transformers 4.57.1 logit), tokens g_tokens */
static const gold_pt gold_fm[] = {
    {0, 256, -2.04148442e-01f}, {0, 574, -5.08846045e-02f}, {0, 614, -2.93892622e-01f},
    {0, 961, 2.75313016e-03f},  {1, 6, 6.90313429e-02f},    {1, 247, 7.02385837e-03f},
    {1, 345, -2.68608600e-01f}, {1, 549, 1.21549722e-02f},  {2, 15, 3.28070223e-01f},
    {2, 109, 3.05410057e-01f},  {2, 243, 4.71482933e-01f},  {2, 272, 1.28904432e-01f},
    {3, 64, -3.63455415e-01f},  {3, 238, -1.06043592e-01f}, {3, 473, 7.24465847e-02f},
    {3, 893, 2.62961388e-01f},  {4, 64, 4.40629900e-01f},   {4, 502, -3.26686725e-02f},
    {4, 715, -3.52471352e-01f}, {4, 980, 1.94011569e-01f},  {5, 341, 5.43720305e-01f},
    {5, 407, -1.24702327e-01f}, {5, 742, 1.02933198e-02f},  {5, 764, 2.42608756e-01f},
    {6, 195, 1.22824833e-02f},  {6, 266, 2.28170007e-01f},  {6, 411, 1.41873732e-01f},
    {6, 860, 9.37138051e-02f},
};

/* The full path's logits at the golden points, within 1e-5 (over all 7000 logits 8.0e-7
 * of max |logit| 0.83): the weightless norms move them by far more (test_fm_switches). */
#define GOLD_TOL 1e-5

static void test_fm_transformers(void **state)
{
	(void)state;
	expect_gold(FAM, V_FM, GOLD_TOL, gold_fm, sizeof(gold_fm) / sizeof(gold_fm[0]));
}

static void tamper_xproj(void *ctx, ref_set *r, uint32_t n)
{
	(void)ctx; /* TP 2: the ranks' x_proj column slices exchanged: each rank's dt / B / C
	              partial from the other's channels, normalised after the sum */
	assert_int_equal(n, 2);
	swap_data(&r[0], &r[1], M0 "x_proj.weight");
}

static void test_fm_caught(void **state)
{
	(void)state;
	expect_caught(FAM, 2, 1, tamper_xproj, "the ranks' x_proj columns exchanged");
	expect_halves_swapped(FAM, 2, 1, (tamper_halves){"lm_head.weight", 0, 1, 256, 128 * 2},
	                      "rank 0's lm_head row halves exchanged");
}

/* The weightless norms and their epsilon move the logits. */
static void test_fm_switches(void **state)
{
	(void)state;
	model m = {0};
	ref_set ck = {0};
	ref_cfg c;
	wt_errbuf err = {0};
	open_model(&m, FAM);
	assert_int_equal(ref_load_ckpt(m.c, &c, &ck, &err), WT_OK);
	assert_true(c.mamba_lm && c.m_plain_norm && c.jamba && !c.tied && c.kind == REF_DENSE &&
	            c.L == 2 && c.m_inner == 256 && c.m_rank == 8 && c.m_state == 16);
	assert_float_equal(c.m_rms_eps, 1e-6, 1e-15);
	assert_float_equal(c.eps, 1e-5, 1e-15);
	size_t n = N_TOK * V_FM;
	float *base = malloc(n * sizeof(float)), *lg = malloc(n * sizeof(float));
	assert_true(base && lg);
	logits_with(&c, &ck, base);
	ref_cfg off = c;
	off.m_plain_norm = false; /* Mamba's mixer: dt / B / C as they are */
	logits_with(&off, &ck, lg);
	expect_moved(base, lg, n, 1e-3, "the dt / B / C norms dropped");
	off = c;
	off.m_rms_eps = 1.0;
	logits_with(&off, &ck, lg);
	expect_moved(base, lg, n, 1e-3, "mixer_rms_eps 1");
	free(base);
	free(lg);
	ref_set_clear(&ck);
	close_model(&m);
}

#define FMC(extra)                                                                                 \
	"{\"architectures\": [\"FalconMambaForCausalLM\"], \"model_type\": \"falcon_mamba\", "     \
	"\"hidden_size\": 64, \"num_hidden_layers\": 3, \"vocab_size\": 100" extra "}"

static void test_fm_config(void **state)
{
	(void)state;
	ref_cfg c;
	wt_errbuf err = {0};
	/* FalconMambaConfig's defaults: Mamba's, mixer_rms_eps 1e-6, tied */
	static const char plain[] = FMC("");
	assert_int_equal(ref_cfg_parse_json(plain, strlen(plain), &c, &err), WT_OK);
	assert_true(c.mamba_lm && c.m_plain_norm && c.tied && c.m_inner == 128 && c.m_rank == 4 &&
	            c.m_state == 16 && c.m_conv == 4);
	assert_float_equal(c.m_rms_eps, 1e-6, 1e-15);
	static const char given[] = FMC(", \"mixer_rms_eps\": 1e-5, \"expand\": 16, "
	                                "\"intermediate_size\": 96");
	assert_int_equal(ref_cfg_parse_json(given, strlen(given), &c, &err), WT_OK);
	assert_true(c.m_inner == 96);
	assert_float_equal(c.m_rms_eps, 1e-5, 1e-15);
	expect_cfg(FMC(", \"mixer_rms_eps\": -1"), WT_ECORRUPT, "mixer_rms_eps");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_fm_pass),   cmocka_unit_test(test_fm_transformers),
	    cmocka_unit_test(test_fm_caught), cmocka_unit_test(test_fm_switches),
	    cmocka_unit_test(test_fm_config),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
