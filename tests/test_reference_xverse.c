/*
 * test_reference_xverse.c — the reference forward pass over Xverse (XverseForCausalLM, remote
 * code; fixture xverse): Llama's decoder under Llama's names, as vLLM's llama.py runs it, with
 * no biases (XverseConfig has no bias key), MHA, rope_theta 10000 (vLLM's default). Full and
 * sharded logits agree within REF_TOL_F32 (TP 1, 2, 4, 8) or the quantized layouts' budgets;
 * the full path's logits equal transformers 4.57.1's LlamaForCausalLM built from the same
 * weights (eager, float32) at 28 points; rank tensors broken the way a wrong planner would
 * break them are caught. Fixture from $WT_BUILD/wt-mkckpt --family xverse (hid 128, H 8, d 16,
 * I 192, V 1000, 2 layers, untied; seed printed).
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

#define L1 "model.layers.1."

static int setup(void **state)
{
	(void)state;
	static const char *fams[] = {"xverse"};
	return gen_fixtures("reference_xverse", fams, 1);
}

static void test_xverse_pass(void **state)
{
	(void)state;
	expect_pass_tp("xverse", true);
}

/* (token, column, transformers 4.57.1 value), tokens g_tokens: LlamaForCausalLM.from_pretrained
 * of the fixture (strict: no missing, unexpected or mismatched key; attention_bias and mlp_bias
 * false, MHA, rope_theta 10000), eager, float32; all 7 x 1000 logits within 3.9e-7 of the
 * reference's (largest 0.822) */
static const gold_pt gold_xverse[] = {
    {0, 0, 1.517572850e-01f},    {0, 333, 7.651343197e-02f},  {0, 666, -2.439314872e-01f},
    {0, 999, 3.195001185e-01f},  {1, 0, 2.349786088e-02f},    {1, 333, -2.175676674e-01f},
    {1, 666, -1.936493814e-01f}, {1, 999, 2.283949256e-01f},  {2, 0, -1.079661865e-02f},
    {2, 333, -2.630478740e-01f}, {2, 666, -2.290588468e-01f}, {2, 999, 1.594809890e-01f},
    {3, 0, 8.556303382e-02f},    {3, 333, -1.954655051e-01f}, {3, 666, -1.582451910e-01f},
    {3, 999, 1.346581429e-01f},  {4, 0, -3.958041966e-02f},   {4, 333, -1.857346743e-01f},
    {4, 666, -1.389806867e-01f}, {4, 999, 1.649363041e-01f},  {5, 0, 1.430748403e-02f},
    {5, 333, -1.591258645e-01f}, {5, 666, -1.558200568e-01f}, {5, 999, 1.537846029e-01f},
    {6, 0, 9.824047983e-02f},    {6, 333, -2.833455205e-01f}, {6, 666, -2.212400734e-01f},
    {6, 999, 2.232978940e-01f}};

#define GOLD_TOL 1e-5

static void test_xverse_transformers(void **state)
{
	(void)state;
	expect_gold("xverse", 1000, GOLD_TOL, gold_xverse,
	            sizeof(gold_xverse) / sizeof(gold_xverse[0]));
}

static void test_xverse_caught(void **state)
{
	(void)state;
	expect_swapped("xverse", 2, 1, L1 "self_attn.qkv_proj.weight",
	               "the ranks' q/k/v heads exchanged");
	expect_swapped("xverse", 2, 1, L1 "self_attn.o_proj.weight", "o_proj columns exchanged");
	expect_swapped("xverse", 2, 1, L1 "mlp.gate_up_proj.weight", "gate_up rows exchanged");
	expect_swapped("xverse", 2, 1, L1 "mlp.down_proj.weight", "down_proj columns exchanged");
	expect_halves_swapped("xverse", 2, 1,
	                      (tamper_halves){L1 "mlp.gate_up_proj.weight", 0, 1, 96, 128 * 4},
	                      "rank 0's gate / up halves exchanged");
}

/* The fixture is read as Llama's decoder: RMSNorms, the gated MLP (silu), q/k/v unfused, no
 * biases, untied (XverseConfig's default), MHA, head_dim 16 (hid / H), rms_norm_eps 1e-6,
 * rope_theta 10000 (absent: vLLM's default). */
static void test_xverse_config(void **state)
{
	(void)state;
	model m = {0};
	ref_set ck = {0};
	ref_cfg c;
	wt_errbuf err = {0};
	open_model(&m, "xverse");
	assert_int_equal(ref_load_ckpt(m.c, &c, &ck, &err), WT_OK);
	assert_true(c.kind == REF_DENSE && c.read_act && !c.fused_ckpt && !c.layernorm &&
	            !c.plain_mlp && !c.tied && c.H == 8 && c.KV == 8 && c.d == 16 && c.I == 192 &&
	            c.L == 2 && c.hid == 128 && c.V == 1000 && c.act == REF_ACT_SILU);
	assert_true(fabs(c.eps - 1e-6) < 1e-12);
	assert_true(fabs(c.theta - 1e4) < 1e-6);
	ref_set_clear(&ck);
	close_model(&m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_xverse_pass),
	    cmocka_unit_test(test_xverse_transformers),
	    cmocka_unit_test(test_xverse_caught),
	    cmocka_unit_test(test_xverse_config),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
