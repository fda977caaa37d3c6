/*
 * test_reference_mamba2.c — the reference forward pass over Mamba2 (Mamba2ForCausalLM;
 * reference/mamba.c's renaming over granite4.c's Mamba2 mixer): every layer x = x +
 * mixer(norm(x)), no feed_forward, norm_f, untied lm_head. Full and sharded logits agree
 * within REF_TOL_F32 (TP 1, 2; one group at TP 4 is another fixture's); the full path's
 * logits equal transformers 4.57.1's (float32, Mamba2Mixer.torch_forward) at 28 points; rank
 * tensors broken the way a wrong planner would break them are caught; the gated norm per
 * group (vLLM's Mixer2RMSNormGated with n_groups 2) moves the logits; Mamba2Config's
 * defaults. Fixture from $WT_BUILD/wt-mkckpt --family mamba2 (hid 128, 8 heads of 32, 2
 * groups, state 16, conv 4, V 1000, 2 layers, untied); seed printed.
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
#define FAM  "mamba2"
#define M0   "backbone.layers.0.mixer."

static int setup(void **state)
{
	(void)state;
	static const char *fams[] = {FAM};
	return gen_fixtures("reference_mamba2", fams, 1);
}

static void test_m2_pass(void **state)
{
	(void)state;
	expect_pass(FAM, 1, 1, WT_QUANT_NONE, 0);
	expect_pass(FAM, 2, 1, WT_QUANT_NONE, 0); /* one group a rank, the norm all-reduced */
}

/* (row, column, transformers 4.57.1 logit), tokens g_tokens */
static const gold_pt gold_m2[] = {
    {0, 109, -2.22292602e-01f}, {0, 261, 2.84044743e-01f},  {0, 298, 3.97580713e-02f},
    {0, 835, 1.63555920e-01f},  {1, 91, -7.41586164e-02f},  {1, 334, -6.53155223e-02f},
    {1, 599, -3.14720243e-01f}, {1, 813, 1.74310938e-01f},  {2, 55, -2.69328147e-01f},
    {2, 274, 6.11798279e-03f},  {2, 557, 1.86843172e-01f},  {2, 877, -1.99327976e-01f},
    {3, 149, 2.03723442e-02f},  {3, 259, -1.81422662e-02f}, {3, 560, -2.34665141e-01f},
    {3, 749, -1.71730295e-01f}, {4, 219, 2.00325809e-02f},  {4, 421, -6.26784861e-02f},
    {4, 633, 2.54097208e-03f},  {4, 942, 4.46428470e-02f},  {5, 39, -3.12803388e-02f},
    {5, 379, 1.76164836e-01f},  {5, 391, -1.29875690e-01f}, {5, 681, -5.63322484e-01f},
    {6, 510, 4.03195053e-01f},  {6, 577, -7.57026672e-02f}, {6, 691, 7.90546983e-02f},
    {6, 891, 2.00259089e-01f},
};

/* The full path's logits at the golden points, within 1e-5 (over all 7000 logits 6.6e-7
 * of max |logit| 0.86). */
#define GOLD_TOL 1e-5

static void test_m2_transformers(void **state)
{
	(void)state;
	expect_gold(FAM, V_M2, GOLD_TOL, gold_m2, sizeof(gold_m2) / sizeof(gold_m2[0]));
}

static void test_m2_caught(void **state)
{
	(void)state;
	expect_swapped(FAM, 2, 1, M0 "dt_bias", "the ranks' dt_bias heads exchanged");
	expect_swapped(FAM, 2, 1, M0 "conv1d.weight", "the ranks' conv1d channels exchanged");
	expect_halves_swapped(FAM, 2, 1, (tamper_halves){"lm_head.weight", 0, 1, 256, 128 * 2},
	                      "rank 0's lm_head row halves exchanged");
}

/* The gated norm per n_groups group (vLLM's Mixer2RMSNormGated; transformers 4.57.1 runs it
 * over all channels) and the epsilon move the logits. */
static void test_m2_switches(void **state)
{
	(void)state;
	model m = {0};
	ref_set ck = {0};
	ref_cfg c;
	wt_errbuf err = {0};
	open_model(&m, FAM);
	assert_int_equal(ref_load_ckpt(m.c, &c, &ck, &err), WT_OK);
	assert_true(c.mamba2 && c.mamba_lm && c.g4 && !c.jamba && !c.bamba && !c.tied &&
	            c.kind == REF_DENSE && c.L == 2 && c.m_heads == 8 && c.m_dh == 32 &&
	            c.m_groups == 2 && c.m_state == 16 && c.m_conv == 4);
	assert_float_equal(c.eps, 1e-5, 1e-15);
	size_t n = N_TOK * V_M2;
	float *base = malloc(n * sizeof(float)), *lg = malloc(n * sizeof(float));
	assert_true(base && lg);
	logits_with(&c, &ck, base);
	ref_cfg off = c;
	off.m_norm_groups = 2;
	logits_with(&off, &ck, lg);
	expect_moved(base, lg, n, 1e-4, "the gated norm per group");
	off = c;
	off.eps = 0.1;
	logits_with(&off, &ck, lg);
	expect_moved(base, lg, n, 1e-3, "layer_norm_epsilon 0.1");
	free(base);
	free(lg);
	ref_set_clear(&ck);
	close_model(&m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_m2_pass),
	    cmocka_unit_test(test_m2_transformers),
	    cmocka_unit_test(test_m2_caught),
	    cmocka_unit_test(test_m2_switches),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
