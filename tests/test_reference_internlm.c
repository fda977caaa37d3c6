/*
 * test_reference_internlm.c — the reference forward pass over InternLM, first generation
 * (InternLMForCausalLM, remote code; fixture internlm): Llama's decoder under Llama's names, as
 * vLLM's llama.py runs it, with the q/k/v and o_proj biases of internlm-7b's bias true, MHA,
 * rope_theta 10000 (rotary's base). Full and sharded logits agree within REF_TOL_F32 (TP 1, 2,
 * 4, 8) or the quantized layouts' budgets; the full path's logits equal transformers 4.57.1's
 * LlamaForCausalLM built from the same weights (attention_bias true; eager, float32) at 28
 * points; rank tensors broken the way a wrong planner would break them are caught. Fixture from
 * $WT_BUILD/wt-mkckpt --family internlm (hid 128, H 8, d 16, I 192, V 1000, 2 layers, untied;
 * seed printed).
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
	static const char *fams[] = {"internlm"};
	return gen_fixtures("reference_internlm", fams, 1);
}

static void test_internlm_pass(void **state)
{
	(void)state;
	expect_pass_tp("internlm", true);
}

/* (token, column, transformers 4.57.1 value), tokens g_tokens: LlamaForCausalLM.from_pretrained
 * of the fixture (strict: no missing, unexpected or mismatched key; attention_bias true as
 * bias, MHA, rope_theta 10000 as rotary's base), eager, float32; all 7 x 1000 logits within
 * 4.2e-7 of the reference's (largest 0.909; without the q_proj and o_proj biases transformers
 * moves by 0.32) */
static const gold_pt gold_internlm[] = {
    {0, 0, 2.028563470e-01f},    {0, 333, 1.091961861e-01f},  {0, 666, -2.062663287e-01f},
    {0, 999, 3.964977264e-01f},  {1, 0, 8.896695822e-02f},    {1, 333, -1.824008971e-01f},
    {1, 666, -1.512018442e-01f}, {1, 999, 3.403181434e-01f},  {2, 0, 4.423928633e-02f},
    {2, 333, -2.230553627e-01f}, {2, 666, -1.916587055e-01f}, {2, 999, 2.871794701e-01f},
    {3, 0, 1.302430034e-01f},    {3, 333, -1.708680689e-01f}, {3, 666, -1.222537458e-01f},
    {3, 999, 2.638664544e-01f},  {4, 0, 1.766144484e-02f},    {4, 333, -1.855678856e-01f},
    {4, 666, -1.092257053e-01f}, {4, 999, 3.076137006e-01f},  {5, 0, 7.346089184e-02f},
    {5, 333, -1.482622027e-01f}, {5, 666, -1.202826127e-01f}, {5, 999, 3.127934039e-01f},
    {6, 0, 1.395940781e-01f},    {6, 333, -2.872114480e-01f}, {6, 666, -1.712985933e-01f},
    {6, 999, 4.090537727e-01f}};

#define GOLD_TOL 1e-5

static void test_internlm_transformers(void **state)
{
	(void)state;
	expect_gold("internlm", 1000, GOLD_TOL, gold_internlm,
	            sizeof(gold_internlm) / sizeof(gold_internlm[0]));
}

static void test_internlm_caught(void **state)
{
	(void)state;
	expect_swapped("internlm", 2, 1, L1 "self_attn.qkv_proj.weight",
	               "the ranks' q/k/v heads exchanged");
	expect_swapped("internlm", 2, 1, L1 "self_attn.qkv_proj.bias",
	               "the ranks' q/k/v biases exchanged");
	expect_swapped("internlm", 2, 1, L1 "self_attn.o_proj.weight", "o_proj columns exchanged");
	expect_swapped("internlm", 2, 1, L1 "mlp.gate_up_proj.weight", "gate_up rows exchanged");
	expect_swapped("internlm", 2, 1, L1 "mlp.down_proj.weight", "down_proj columns exchanged");
	expect_halves_swapped("internlm", 2, 1,
	                      (tamper_halves){L1 "mlp.gate_up_proj.weight", 0, 1, 96, 128 * 4},
	                      "rank 0's gate / up halves exchanged");
}

/* The fixture is read as Llama's decoder: RMSNorms, the gated MLP (silu), q/k/v unfused with
 * their biases, o_proj's bias, untied (InternLMConfig's default), MHA, head_dim 16 (hid / H),
 * rms_norm_eps 1e-6, rope_theta 10000 (absent: rotary's base). */
static void test_internlm_config(void **state)
{
	(void)state;
	model m = {0};
	ref_set ck = {0};
	ref_cfg c;
	wt_errbuf err = {0};
	open_model(&m, "internlm");
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
	    cmocka_unit_test(test_internlm_pass),
	    cmocka_unit_test(test_internlm_transformers),
	    cmocka_unit_test(test_internlm_caught),
	    cmocka_unit_test(test_internlm_config),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
