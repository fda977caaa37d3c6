/*
 * test_reference_pangu_dense.c — the reference forward pass over openPangu-Embedded
 * (PanguEmbeddedForCausalLM, remote code; fixture pangu_dense): Llama's decoder under Llama's
 * names as vLLM's openpangu.py runs its dense variant (OpenPanguEmbeddedAttention, OpenPanguMLP),
 * with q/k/v and o_proj biases (bias true), GQA (8 heads over 2 kv heads, the releases' kind),
 * rope_theta 1.6e7, rms_norm_eps 1e-5. Full and sharded logits agree within REF_TOL_F32 (TP 1,
 * 2, 4, 8) or the quantized layouts' budgets; the full path's logits equal transformers 4.57.1's
 * LlamaForCausalLM (attention_bias true) built from the same weights (eager, float32) at 28
 * points; rank tensors broken the way a wrong planner would break them are caught. Fixture from
 * $WT_BUILD/wt-mkckpt --family pangu_dense (hid 128, H 8, KV 2, d 16, I 192, V 1000, 2
 * layers, untied; seed printed).
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

#define FAM "pangu_dense"
#define L1  "model.layers.1."

static int setup(void **state)
{
	(void)state;
	static const char *fams[] = {FAM};
	return gen_fixtures("reference_pangu_dense", fams, 1);
}

static void test_pangu_dense_pass(void **state)
{
	(void)state;
	expect_pass_tp(FAM, true);
}

/* (token, column, transformers 4.57.1 value), tokens g_tokens: LlamaForCausalLM.from_pretrained
 * of the fixture (strict: no missing, unexpected or mismatched key; attention_bias true, mlp_bias
 * false, GQA 8 / 2, rope_theta 1.6e7, rms_norm_eps 1e-5), eager, float32; all 7 x 1000 logits
 * within 4.8e-7 of the reference's (largest 0.831) */
static const gold_pt gold_pangu[] = {
    {0, 0, 1.068444848e-01f},    {0, 333, 3.640795648e-01f},  {0, 666, 1.913729161e-01f},
    {0, 999, 9.158444405e-02f},  {1, 0, -5.844530184e-03f},   {1, 333, 1.501917690e-01f},
    {1, 666, -7.635674626e-02f}, {1, 999, -1.360989660e-01f}, {2, 0, -7.962215692e-02f},
    {2, 333, 1.528387964e-01f},  {2, 666, -1.725921780e-01f}, {2, 999, -3.365455270e-01f},
    {3, 0, 5.034198985e-02f},    {3, 333, 2.599904537e-01f},  {3, 666, 2.679288015e-02f},
    {3, 999, -3.096671700e-01f}, {4, 0, 3.155365959e-02f},    {4, 333, 2.322596163e-01f},
    {4, 666, 5.953118950e-02f},  {4, 999, -2.846759260e-01f}, {5, 0, 1.094864458e-01f},
    {5, 333, 3.651527762e-01f},  {5, 666, 4.917433113e-02f},  {5, 999, -2.463362962e-01f},
    {6, 0, 8.095169067e-02f},    {6, 333, 1.991669387e-01f},  {6, 666, 1.747881025e-01f},
    {6, 999, -1.572058648e-01f}};

#define GOLD_TOL 1e-5

static void test_pangu_dense_transformers(void **state)
{
	(void)state;
	expect_gold(FAM, 1000, GOLD_TOL, gold_pangu, sizeof(gold_pangu) / sizeof(gold_pangu[0]));
}

static void test_pangu_dense_caught(void **state)
{
	(void)state;
	expect_swapped(FAM, 2, 1, L1 "self_attn.qkv_proj.weight",
	               "the ranks' q/k/v heads exchanged");
	expect_swapped(FAM, 2, 1, L1 "self_attn.qkv_proj.bias",
	               "the ranks' q/k/v bias heads exchanged");
	expect_swapped(FAM, 2, 1, L1 "self_attn.o_proj.weight", "o_proj columns exchanged");
	expect_zeroed(FAM, 2, 1, 0, L1 "self_attn.o_proj.bias", "rank 0's o_proj bias lost");
	expect_swapped(FAM, 2, 1, L1 "mlp.gate_up_proj.weight", "gate_up rows exchanged");
	expect_swapped(FAM, 2, 1, L1 "mlp.down_proj.weight", "down_proj columns exchanged");
	expect_halves_swapped(FAM, 2, 1,
	                      (tamper_halves){L1 "mlp.gate_up_proj.weight", 0, 1, 96, 128 * 4},
	                      "rank 0's gate / up halves exchanged");
}

/* The fixture is read as Llama's decoder: RMSNorms, the gated MLP (silu), q/k/v unfused with
 * their biases and o_proj's (bias true), untied, GQA 8 / 2, head_dim 16 (hid / H), rms_norm_eps
 * 1e-5, rope_theta 1.6e7. */
static void test_pangu_dense_config(void **state)
{
	(void)state;
	model m = {0};
	ref_set ck = {0};
	ref_cfg c;
	wt_errbuf err = {0};
	open_model(&m, FAM);
	assert_int_equal(ref_load_ckpt(m.c, &c, &ck, &err), WT_OK);
	assert_true(c.kind == REF_DENSE && c.read_act && !c.fused_ckpt && !c.layernorm &&
	            !c.plain_mlp && !c.tied && !c.dec_emb && c.H == 8 && c.KV == 2 && c.d == 16 &&
	            c.I == 192 && c.L == 2 && c.hid == 128 && c.V == 1000 && c.act == REF_ACT_SILU);
	assert_true(fabs(c.eps - 1e-5) < 1e-12);
	assert_true(fabs(c.theta - 1.6e7) < 1e-1);
	assert_non_null(ref_set_find(&ck, L1 "self_attn.q_proj.bias"));
	assert_non_null(ref_set_find(&ck, L1 "self_attn.o_proj.bias"));
	ref_set_clear(&ck);
	close_model(&m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_pangu_dense_pass),
	    cmocka_unit_test(test_pangu_dense_transformers),
	    cmocka_unit_test(test_pangu_dense_caught),
	    cmocka_unit_test(test_pangu_dense_config),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
