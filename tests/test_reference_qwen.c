/*
 * test_reference_qwen.c — the reference forward pass over Qwen, first generation
 * (QWenLMHeadModel, remote code; fixture qwen): Llama's decoder with q/k/v biases under
 * GPT-2-style names (transformer.h.{i}.attn.c_attn [q; k; v] with its bias, attn.c_proj,
 * mlp.w1 / w2 / c_proj, ln_1 / ln_2), read renamed onto Llama's (reference/qwen.c). Full and
 * sharded logits agree within REF_TOL_F32 (TP 1, 2, 4, 8) or the quantized layouts' budgets;
 * the full path's logits equal transformers 4.57.1's Qwen2ForCausalLM built from the same
 * weights (c_attn split into q / k / v_proj, w2 as gate_proj, w1 as up_proj; eager, float32)
 * at 28 points; rank tensors broken the way a wrong planner would break them are caught.
 * Fixture from $WT_BUILD/wt-mkckpt --family qwen (hid 128, H 8 (MHA), MLP width 192
 * (intermediate_size 384), V 1000, 2 layers, untied, rotary_emb_base 50000; seed printed).
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
	static const char *fams[] = {"qwen"};
	return gen_fixtures("reference_qwen", fams, 1);
}

static void test_qwen_pass(void **state)
{
	(void)state;
	expect_pass_tp("qwen", true);
}

/* (token, column, transformers 4.57.1 value), tokens g_tokens: Qwen2ForCausalLM.from_pretrained
 * of the fixture with c_attn split into q / k / v_proj (weights and biases), w2 as gate_proj, w1
 * as up_proj, c_proj as down_proj (strict: no missing, unexpected or mismatched key), rope_theta
 * rotary_emb_base, eager, float32; all 7 x 1000 logits within 4.5e-7 of the reference's (largest
 * 0.861; rope_theta 10000 instead moves them by 3.8e-3) */
static const gold_pt gold_qwen[] = {
    {0, 0, 1.641595736e-02f},    {0, 333, 3.542355299e-01f},  {0, 666, -1.710630953e-01f},
    {0, 999, 1.433281004e-01f},  {1, 0, -3.507936001e-02f},   {1, 333, -7.385022193e-02f},
    {1, 666, -3.005295098e-01f}, {1, 999, 1.809564829e-01f},  {2, 0, 1.044298988e-02f},
    {2, 333, 1.172712818e-01f},  {2, 666, -1.763741374e-01f}, {2, 999, 9.898876399e-02f},
    {3, 0, 3.455377370e-02f},    {3, 333, 2.065508962e-01f},  {3, 666, -1.025212929e-01f},
    {3, 999, 4.188190401e-02f},  {4, 0, -8.132547140e-03f},   {4, 333, 1.490275264e-01f},
    {4, 666, -4.431083798e-03f}, {4, 999, 8.839212358e-03f},  {5, 0, 9.018529952e-02f},
    {5, 333, 1.904514730e-01f},  {5, 666, -1.122570932e-01f}, {5, 999, 1.899295747e-01f},
    {6, 0, -1.671388745e-02f},   {6, 333, 6.168812513e-02f},  {6, 666, -3.177123517e-02f},
    {6, 999, 1.650650501e-01f},
};

#define GOLD_TOL 1e-5

static void test_qwen_transformers(void **state)
{
	(void)state;
	expect_gold("qwen", 1000, GOLD_TOL, gold_qwen, sizeof(gold_qwen) / sizeof(gold_qwen[0]));
}

static void test_qwen_caught(void **state)
{
	(void)state;
	expect_swapped("qwen", 2, 1, L1 "attn.c_attn.weight", "the ranks' q/k/v heads exchanged");
	expect_swapped("qwen", 2, 1, L1 "attn.c_attn.bias", "the ranks' q/k/v biases exchanged");
	expect_swapped("qwen", 2, 1, L1 "attn.c_proj.weight", "attn.c_proj columns exchanged");
	expect_swapped("qwen", 2, 1, L1 "mlp.gate_up_proj.weight", "gate_up rows exchanged");
	expect_swapped("qwen", 2, 1, L1 "mlp.c_proj.weight", "mlp.c_proj columns exchanged");
	expect_halves_swapped("qwen", 2, 1,
	                      (tamper_halves){L1 "mlp.gate_up_proj.weight", 0, 1, 96, 128 * 4},
	                      "rank 0's w2 (gate) / w1 (up) halves exchanged");
}

/* The fixture is read as Llama's decoder: RMSNorms, the gated MLP 192 wide (intermediate_size
 * 384 halved), q/k/v split from c_attn with biases, untied, layer_norm_epsilon, kv_channels and
 * rotary_emb_base under QWenConfig's names. */
static void test_qwen_config(void **state)
{
	(void)state;
	model m = {0};
	ref_set ck = {0};
	ref_cfg c;
	wt_errbuf err = {0};
	open_model(&m, "qwen");
	assert_int_equal(ref_load_ckpt(m.c, &c, &ck, &err), WT_OK);
	assert_true(c.qwen && c.kind == REF_DENSE && !c.fused_ckpt && !c.layernorm &&
	            !c.plain_mlp && !c.tied && c.H == 8 && c.KV == 8 && c.d == 16 && c.I == 192 &&
	            c.L == 2 && c.hid == 128 && c.V == 1000);
	assert_true(fabs(c.eps - 1e-5) < 1e-12);
	assert_true(fabs(c.theta - 5e4) < 1e-6);
	ref_set_clear(&ck);
	close_model(&m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_qwen_pass),
	    cmocka_unit_test(test_qwen_transformers),
	    cmocka_unit_test(test_qwen_caught),
	    cmocka_unit_test(test_qwen_config),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
