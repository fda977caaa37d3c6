/*
 * test_reference_telechat.c — the reference forward pass over TeleChat (the first generation,
 * TeleChatForCausalLM, remote code; fixture telechat): TeleChat2's pass (reference/telechat2.c:
 * Llama's decoder under the checkpoint's transformer.h.* names renamed onto Llama's, key_value's
 * per-head [k; v] rows de-interleaved, the dense and down_proj biases, silu), as vLLM's
 * telechat2.py runs it, tied as TeleChat-7B (no lm_head). Full and sharded logits agree within
 * REF_TOL_F32 (TP 1, 2, 4, 8) or the quantized layouts' budgets; the full path's logits equal
 * transformers 4.57.1's LlamaForCausalLM built from the same weights (renamed, key_value
 * de-interleaved, zero q/k/v and gate/up biases, tied) at 28 points; rank tensors broken the way
 * a wrong planner would break them are caught. Fixture from $WT_BUILD/wt-mkckpt --family telechat
 * (hid 128, n_head 8, d 16, I 192, V 1000, 2 layers, MHA, tied; seed printed).
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
	static const char *fams[] = {"telechat"};
	return gen_fixtures("reference_telechat", fams, 1);
}

static void test_telechat_pass(void **state)
{
	(void)state;
	expect_pass_tp("telechat", true);
}

/* (token, column, transformers 4.57.1 value), tokens g_tokens: LlamaForCausalLM.from_pretrained
 * (strict: no missing, unexpected or mismatched key) of the fixture's weights renamed onto
 * Llama's, key_value de-interleaved per head (reshape(KV, 2, d, hid)), attention_bias and
 * mlp_bias true with the q/k/v and gate/up biases zero, tied, rope_theta 10000, rms_norm_eps
 * 1e-5; eager, float32; all 7 x 1000 logits within 6.0e-7 of the reference's (largest 0.923) */
static const gold_pt gold_telechat[] = {
    {0, 0, -2.064119279e-01f},   {0, 333, 7.299932837e-01f},  {0, 666, 2.976647019e-01f},
    {0, 999, -2.406672984e-01f}, {1, 0, -1.186960712e-01f},   {1, 333, 6.176775694e-01f},
    {1, 666, 4.202997088e-01f},  {1, 999, 3.148303330e-01f},  {2, 0, 1.170084346e-02f},
    {2, 333, 5.371495485e-01f},  {2, 666, 5.022008419e-01f},  {2, 999, -3.045938909e-02f},
    {3, 0, -1.252260059e-01f},   {3, 333, 5.254752636e-01f},  {3, 666, 4.928844869e-01f},
    {3, 999, -1.714796126e-01f}, {4, 0, 2.165782265e-02f},    {4, 333, 4.977436662e-01f},
    {4, 666, 5.354352593e-01f},  {4, 999, -8.475290239e-02f}, {5, 0, 4.889411852e-03f},
    {5, 333, 3.940958083e-01f},  {5, 666, 5.363121033e-01f},  {5, 999, -7.449582685e-03f},
    {6, 0, -1.220856830e-01f},   {6, 333, 3.651554286e-01f},  {6, 666, 4.202511609e-01f},
    {6, 999, 7.277494669e-02f},
};

#define GOLD_TOL 1e-5

static void test_telechat_transformers(void **state)
{
	(void)state;
	expect_gold("telechat", 1000, GOLD_TOL, gold_telechat,
	            sizeof(gold_telechat) / sizeof(gold_telechat[0]));
}

static void test_telechat_caught(void **state)
{
	(void)state;
	expect_swapped("telechat", 2, 1, L1 "self_attn.qkv_proj.weight",
	               "the ranks' q/k/v heads exchanged");
	expect_swapped("telechat", 2, 1, L1 "self_attn.o_proj.weight", "o_proj columns exchanged");
	expect_swapped("telechat", 2, 1, L1 "mlp.down_proj.weight", "down_proj columns exchanged");
	expect_halves_swapped("telechat", 2, 1,
	                      (tamper_halves){L1 "self_attn.qkv_proj.weight", 0, 1, 64, 128 * 4},
	                      "rank 0's q and k rows exchanged");
	expect_halves_swapped("telechat", 2, 1,
	                      (tamper_halves){L1 "mlp.gate_up_proj.weight", 0, 1, 96, 128 * 4},
	                      "rank 0's gate / up halves exchanged");
	expect_zeroed("telechat", 2, 1, 0, L1 "mlp.down_proj.bias",
	              "rank 0's down_proj bias zeroed");
	expect_zeroed("telechat", 4, 1, 0, L1 "self_attn.o_proj.bias",
	              "rank 0's o_proj bias zeroed (TP 4)");
}

/* The fixture is read as TeleChat2's: Llama's decoder, MHA, head_dim 16, n_layer 2,
 * ffn_hidden_size 192, layer_norm_epsilon 1e-5, rope_theta 10000 (absent), tied (the key
 * absent: lm_head from the embedding). */
static void test_telechat_config(void **state)
{
	(void)state;
	model m = {0};
	ref_set ck = {0};
	ref_cfg c;
	wt_errbuf err = {0};
	open_model(&m, "telechat");
	assert_int_equal(ref_load_ckpt(m.c, &c, &ck, &err), WT_OK);
	assert_true(c.kind == REF_DENSE && c.telechat2 && !c.layernorm && !c.plain_mlp && c.tied &&
	            c.H == 8 && c.KV == 8 && c.d == 16 && c.I == 192 && c.L == 2 && c.hid == 128 &&
	            c.V == 1000 && c.act == REF_ACT_SILU);
	assert_true(fabs(c.eps - 1e-5) < 1e-12);
	assert_true(fabs(c.theta - 1e4) < 1e-6);
	assert_null(ref_set_find(&ck, "lm_head.weight"));
	ref_set_clear(&ck);
	close_model(&m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_telechat_pass),
	    cmocka_unit_test(test_telechat_transformers),
	    cmocka_unit_test(test_telechat_caught),
	    cmocka_unit_test(test_telechat_config),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
