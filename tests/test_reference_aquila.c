/*
 * test_reference_aquila.c — the reference forward pass over Aquila (AquilaForCausalLM, remote
 * code; fixture aquila): Llama's decoder under Llama's names, as vLLM's llama.py runs it, with
 * no biases (AquilaConfig has no bias key), GQA (8 heads over 2 kv heads, Aquila2-34B's kind),
 * rope_theta 1e6, rms_norm_eps 1e-5. Full and sharded logits agree within REF_TOL_F32 (TP 1, 2,
 * 4, 8) or the quantized layouts' budgets; the full path's logits equal transformers 4.57.1's
 * LlamaForCausalLM built from the same weights (eager, float32) at 28 points; rank tensors
 * broken the way a wrong planner would break them are caught. Fixture from $WT_BUILD/wt-mkckpt
 * --family aquila (hid 128, H 8, KV 2, d 16, I 192, V 1000, 2 layers, untied; seed printed).
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
	static const char *fams[] = {"aquila"};
	return gen_fixtures("reference_aquila", fams, 1);
}

static void test_aquila_pass(void **state)
{
	(void)state;
	expect_pass_tp("aquila", true);
}

/* (token, column, transformers 4.57.1 value), tokens g_tokens: LlamaForCausalLM.from_pretrained
 * of the fixture (strict: no missing, unexpected or mismatched key; attention_bias and mlp_bias
 * false, GQA 8 / 2, rope_theta 1e6, rms_norm_eps 1e-5), eager, float32; all 7 x 1000 logits
 * within 4.2e-7 of the reference's (largest 0.785) */
static const gold_pt gold_aquila[] = {
    {0, 0, 1.781793684e-01f},    {0, 333, 2.528676987e-01f},  {0, 666, 1.320915967e-01f},
    {0, 999, 4.057690129e-02f},  {1, 0, 5.592183769e-02f},    {1, 333, 2.375398204e-02f},
    {1, 666, -1.454724669e-01f}, {1, 999, -2.002898008e-01f}, {2, 0, 1.971905120e-03f},
    {2, 333, 2.269068733e-02f},  {2, 666, -2.471344620e-01f}, {2, 999, -3.894029558e-01f},
    {3, 0, 1.642872244e-01f},    {3, 333, 1.199961007e-01f},  {3, 666, -3.663409501e-02f},
    {3, 999, -3.723537624e-01f}, {4, 0, 1.379403174e-01f},    {4, 333, 6.073114648e-02f},
    {4, 666, -1.854807325e-02f}, {4, 999, -3.519186378e-01f}, {5, 0, 2.421608567e-01f},
    {5, 333, 1.987867206e-01f},  {5, 666, -4.158617556e-02f}, {5, 999, -3.571803868e-01f},
    {6, 0, 2.216419578e-01f},    {6, 333, 2.821593732e-02f},  {6, 666, 9.931637347e-02f},
    {6, 999, -2.654096484e-01f}};

#define GOLD_TOL 1e-5

static void test_aquila_transformers(void **state)
{
	(void)state;
	expect_gold("aquila", 1000, GOLD_TOL, gold_aquila,
	            sizeof(gold_aquila) / sizeof(gold_aquila[0]));
}

static void test_aquila_caught(void **state)
{
	(void)state;
	expect_swapped("aquila", 2, 1, L1 "self_attn.qkv_proj.weight",
	               "the ranks' q/k/v heads exchanged");
	expect_swapped("aquila", 2, 1, L1 "self_attn.o_proj.weight", "o_proj columns exchanged");
	expect_swapped("aquila", 2, 1, L1 "mlp.gate_up_proj.weight", "gate_up rows exchanged");
	expect_swapped("aquila", 2, 1, L1 "mlp.down_proj.weight", "down_proj columns exchanged");
	expect_halves_swapped("aquila", 2, 1,
	                      (tamper_halves){L1 "mlp.gate_up_proj.weight", 0, 1, 96, 128 * 4},
	                      "rank 0's gate / up halves exchanged");
}

/* The fixture is read as Llama's decoder: RMSNorms, the gated MLP (silu), q/k/v unfused, no
 * biases, untied (AquilaConfig's default), GQA 8 / 2, head_dim 16 (hid / H), rms_norm_eps
 * 1e-5, rope_theta 1e6. */
static void test_aquila_config(void **state)
{
	(void)state;
	model m = {0};
	ref_set ck = {0};
	ref_cfg c;
	wt_errbuf err = {0};
	open_model(&m, "aquila");
	assert_int_equal(ref_load_ckpt(m.c, &c, &ck, &err), WT_OK);
	assert_true(c.kind == REF_DENSE && c.read_act && !c.fused_ckpt && !c.layernorm &&
	            !c.plain_mlp && !c.tied && c.H == 8 && c.KV == 2 && c.d == 16 && c.I == 192 &&
	            c.L == 2 && c.hid == 128 && c.V == 1000 && c.act == REF_ACT_SILU);
	assert_true(fabs(c.eps - 1e-5) < 1e-12);
	assert_true(fabs(c.theta - 1e6) < 1e-3);
	ref_set_clear(&ck);
	close_model(&m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_aquila_pass),
	    cmocka_unit_test(test_aquila_transformers),
	    cmocka_unit_test(test_aquila_caught),
	    cmocka_unit_test(test_aquila_config),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
