/*
 * test_reference_internlm3.c — the reference forward pass over InternLM3 (InternLM3ForCausalLM,
 * remote code; fixture internlm3): Llama's decoder under Llama's names, as vLLM's llama.py runs
 * it, with head_dim given, qkv_bias / bias false (no biases) and dynamic rope scaling as
 * internlm3-8b-instruct's. Full and sharded logits agree within REF_TOL_F32 (TP 1, 2, 4, 8: the
 * two kv heads split at TP 2, replicated at TP 4 and 8) or the quantized layouts' budgets; the
 * full path's logits equal transformers 4.57.1's LlamaForCausalLM built from the same weights
 * (attention_bias false as InternLM3's qkv_bias / bias; eager, float32) at 28 points; rank
 * tensors broken the way a wrong planner would break them are caught. Fixture from
 * $WT_BUILD/wt-mkckpt --family internlm3 (hid 128, H 8, KV 2, d 16, I 192, V 1000, 2 layers,
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

#define L1 "model.layers.1."

static int setup(void **state)
{
	(void)state;
	static const char *fams[] = {"internlm3"};
	return gen_fixtures("reference_internlm3", fams, 1);
}

static void test_internlm3_pass(void **state)
{
	(void)state;
	expect_pass_tp("internlm3", true);
}

/* (token, column, transformers 4.57.1 value), tokens g_tokens: LlamaForCausalLM.from_pretrained
 * of the fixture (strict: no missing, unexpected or mismatched key; attention_bias false as
 * qkv_bias / bias, head_dim 16, the dynamic rope_scaling), eager, float32; all 7 x 1000 logits
 * within 3.9e-7 of the reference's (largest 0.785; without the rope scaling, which does not act on
 * 7 tokens, transformers moves by 3.0e-7) */
static const gold_pt gold_internlm3[] = {
    {0, 0, 1.781793684e-01f},    {0, 333, 2.528676987e-01f},  {0, 666, 1.320915967e-01f},
    {0, 999, 4.057690129e-02f},  {1, 0, 5.605160445e-02f},    {1, 333, 2.352651767e-02f},
    {1, 666, -1.457145959e-01f}, {1, 999, -1.997737437e-01f}, {2, 0, 1.652215607e-03f},
    {2, 333, 2.278090268e-02f},  {2, 666, -2.471886426e-01f}, {2, 999, -3.889952004e-01f},
    {3, 0, 1.645448953e-01f},    {3, 333, 1.196428835e-01f},  {3, 666, -3.656878322e-02f},
    {3, 999, -3.731157184e-01f}, {4, 0, 1.372918636e-01f},    {4, 333, 6.071919575e-02f},
    {4, 666, -1.853798889e-02f}, {4, 999, -3.527229428e-01f}, {5, 0, 2.419776767e-01f},
    {5, 333, 1.995732188e-01f},  {5, 666, -4.257863760e-02f}, {5, 999, -3.558072448e-01f},
    {6, 0, 2.215211838e-01f},    {6, 333, 2.787277102e-02f},  {6, 666, 9.885562956e-02f},
    {6, 999, -2.649143040e-01f}};

#define GOLD_TOL 1e-5

static void test_internlm3_transformers(void **state)
{
	(void)state;
	expect_gold("internlm3", 1000, GOLD_TOL, gold_internlm3,
	            sizeof(gold_internlm3) / sizeof(gold_internlm3[0]));
}

static void test_internlm3_caught(void **state)
{
	(void)state;
	expect_swapped("internlm3", 2, 1, L1 "self_attn.qkv_proj.weight",
	               "the ranks' q/k/v heads exchanged");
	expect_swapped("internlm3", 2, 1, L1 "self_attn.o_proj.weight", "o_proj columns exchanged");
	expect_swapped("internlm3", 2, 1, L1 "mlp.gate_up_proj.weight", "gate_up rows exchanged");
	expect_swapped("internlm3", 2, 1, L1 "mlp.down_proj.weight", "down_proj columns exchanged");
	expect_swapped("internlm3", 4, 1, L1 "self_attn.qkv_proj.weight",
	               "ranks 0 and 1's q heads exchanged (their kv head replicated)");
	expect_halves_swapped("internlm3", 2, 1,
	                      (tamper_halves){L1 "mlp.gate_up_proj.weight", 0, 1, 96, 128 * 4},
	                      "rank 0's gate / up halves exchanged");
}

/* The fixture is read as Llama's decoder: RMSNorms, the gated MLP (silu), q/k/v unfused, untied
 * (InternLM3Config's default), head_dim 16, rms_norm_eps 1e-5, rope_theta 5e7. */
static void test_internlm3_config(void **state)
{
	(void)state;
	model m = {0};
	ref_set ck = {0};
	ref_cfg c;
	wt_errbuf err = {0};
	open_model(&m, "internlm3");
	assert_int_equal(ref_load_ckpt(m.c, &c, &ck, &err), WT_OK);
	assert_true(c.kind == REF_DENSE && c.read_act && !c.fused_ckpt && !c.layernorm &&
	            !c.plain_mlp && !c.tied && c.H == 8 && c.KV == 2 && c.d == 16 && c.I == 192 &&
	            c.L == 2 && c.hid == 128 && c.V == 1000 && c.act == REF_ACT_SILU);
	assert_true(fabs(c.eps - 1e-5) < 1e-12);
	assert_true(fabs(c.theta - 5e7) < 1e-3);
	ref_set_clear(&ck);
	close_model(&m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_internlm3_pass),
	    cmocka_unit_test(test_internlm3_transformers),
	    cmocka_unit_test(test_internlm3_caught),
	    cmocka_unit_test(test_internlm3_config),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
