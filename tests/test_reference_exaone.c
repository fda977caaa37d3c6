/*
 * test_reference_exaone.c — the reference forward pass over EXAONE 3.x (ExaoneForCausalLM,
 * remote code; fixture exaone): Llama's decoder under GPT-2-style names (transformer.h.{i}.
 * attn.attention.q_proj, mlp.c_fc_0 / c_fc_1 / c_proj, ln_1 / ln_2), read renamed onto
 * Llama's (reference/exaone.c), with llama3 rope scaling as EXAONE 3.5's. Full and sharded
 * logits agree within REF_TOL_F32 (TP 1, 2, 4, 8: the two kv heads split at TP 2, replicated
 * at TP 4 and 8) or the quantized layouts' budgets; the full path's logits equal transformers
 * 4.57.1's LlamaForCausalLM built from the same weights (the names mapped; eager, float32) at
 * 28 points; rank tensors broken the way a wrong planner would break them are caught. Fixture
 * from $WT_BUILD/wt-mkckpt --family exaone (hid 128, H 8, KV 2, I 192, V 1000, 2 layers,
 * untied; seed printed).
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

#define L1 "transformer.h.1."

static int setup(void **state)
{
	(void)state;
	static const char *fams[] = {"exaone"};
	return gen_fixtures("reference_exaone", fams, 1);
}

static void test_exaone_pass(void **state)
{
	(void)state;
	expect_pass_tp("exaone", true);
}

/* (token, column, transformers 4.57.1 value), tokens g_tokens: LlamaForCausalLM.from_pretrained
 * of the fixture with the names mapped (strict: no missing, unexpected or mismatched key),
 * eager, float32; all 7 x 1000 logits within 6.6e-7 of the reference's (largest 0.813) */
static const gold_pt gold_exaone[] = {
    {0, 0, 3.911395967e-01f},    {0, 333, 7.578503340e-02f},  {0, 666, -7.536321133e-02f},
    {0, 999, -5.564593151e-02f}, {1, 0, 4.349167645e-01f},    {1, 333, -1.181897372e-01f},
    {1, 666, 1.580063850e-01f},  {1, 999, -3.043748438e-01f}, {2, 0, 4.250606894e-01f},
    {2, 333, 8.189094812e-02f},  {2, 666, 2.297559567e-02f},  {2, 999, -2.494876087e-01f},
    {3, 0, 4.868490100e-01f},    {3, 333, -1.300719082e-01f}, {3, 666, 4.329800606e-02f},
    {3, 999, -1.675180048e-01f}, {4, 0, 1.767752469e-01f},    {4, 333, -2.196131647e-01f},
    {4, 666, -6.298896670e-02f}, {4, 999, -3.251424432e-02f}, {5, 0, 5.849617720e-01f},
    {5, 333, -4.030904174e-02f}, {5, 666, -1.160872877e-01f}, {5, 999, 1.165531203e-01f},
    {6, 0, 5.437842607e-01f},    {6, 333, 1.405717432e-02f},  {6, 666, 2.214128673e-01f},
    {6, 999, 3.295901716e-01f},
};

#define GOLD_TOL 1e-5

static void test_exaone_transformers(void **state)
{
	(void)state;
	expect_gold("exaone", 1000, GOLD_TOL, gold_exaone,
	            sizeof(gold_exaone) / sizeof(gold_exaone[0]));
}

static void test_exaone_caught(void **state)
{
	(void)state;
	expect_swapped("exaone", 2, 1, L1 "attn.attention.qkv_proj.weight",
	               "the ranks' q/k/v heads exchanged");
	expect_swapped("exaone", 2, 1, L1 "attn.attention.out_proj.weight",
	               "out_proj columns exchanged");
	expect_swapped("exaone", 2, 1, L1 "mlp.gate_up_proj.weight", "gate_up rows exchanged");
	expect_swapped("exaone", 2, 1, L1 "mlp.c_proj.weight", "c_proj columns exchanged");
	expect_swapped("exaone", 4, 1, L1 "attn.attention.qkv_proj.weight",
	               "ranks 0 and 1's q heads exchanged (their kv head replicated)");
	expect_halves_swapped("exaone", 2, 1,
	                      (tamper_halves){L1 "mlp.gate_up_proj.weight", 0, 1, 96, 128 * 4},
	                      "rank 0's gate / up halves exchanged");
}

/* The fixture is read as Llama's decoder: RMSNorms, the gated MLP, q/k/v unfused, untied,
 * num_layers and layer_norm_epsilon under ExaoneConfig's names, rope_theta and llama3
 * scaling. */
static void test_exaone_config(void **state)
{
	(void)state;
	model m = {0};
	ref_set ck = {0};
	ref_cfg c;
	wt_errbuf err = {0};
	open_model(&m, "exaone");
	assert_int_equal(ref_load_ckpt(m.c, &c, &ck, &err), WT_OK);
	assert_true(c.exaone && c.kind == REF_DENSE && !c.fused_ckpt && !c.layernorm &&
	            !c.plain_mlp && !c.tied && c.H == 8 && c.KV == 2 && c.d == 16 && c.I == 192 &&
	            c.L == 2 && c.hid == 128 && c.V == 1000);
	assert_true(fabs(c.eps - 1e-5) < 1e-12);
	assert_true(fabs(c.theta - 1e6) < 1e-6);
	ref_set_clear(&ck);
	close_model(&m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_exaone_pass),
	    cmocka_unit_test(test_exaone_transformers),
	    cmocka_unit_test(test_exaone_caught),
	    cmocka_unit_test(test_exaone_config),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
