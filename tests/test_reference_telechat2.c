/*
 * test_reference_telechat2.c — the reference forward pass over TeleChat2 (TeleChat2ForCausalLM,
 * remote code; fixture telechat2): Llama's decoder as vLLM's telechat2.py runs it, the
 * checkpoint's transformer.h.* names read as Llama's and self_attention.key_value ([KV, 2, d]
 * rows) de-interleaved into k_proj / v_proj, o_proj (dense) and down_proj biased, MHA,
 * rope_theta 10000. Full and sharded logits agree within REF_TOL_F32 (TP 1, 2, 4, 8) or the
 * quantized layouts' budgets; the full path's logits equal transformers 4.57.1's
 * LlamaForCausalLM built from the same weights at 28 points; rank tensors broken the way a wrong
 * planner would break them (k and v exchanged inside a rank's qkv_proj among them) are caught.
 * Fixture from $WT_BUILD/wt-mkckpt --family telechat2 (hid 128, H 8, d 16, I 192, V 1000, 2
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

#define L1 "model.layers.1."

static int setup(void **state)
{
	(void)state;
	static const char *fams[] = {"telechat2"};
	return gen_fixtures("reference_telechat2", fams, 1);
}

static void test_telechat2_pass(void **state)
{
	(void)state;
	expect_pass_tp("telechat2", true);
}

/* (token, column, transformers 4.57.1 value), tokens g_tokens: LlamaForCausalLM.from_pretrained
 * of the fixture's tensors under Llama's names (key_value de-interleaved per head into k_proj /
 * v_proj; attention_bias and mlp_bias true with the q/k/v and gate/up biases zero; strict: no
 * missing, unexpected or mismatched key), MHA, rope_theta 10000, eager, float32; all 7 x 1000
 * logits within 4.2e-7 of the reference's (largest 0.789; key_value read as [k; v] without the
 * de-interleave moves transformers by 0.99, the o_proj and down_proj biases zeroed by 0.64) */
static const gold_pt gold_telechat2[] = {
    {0, 0, 1.422125399e-01f},    {0, 333, -3.226482868e-01f}, {0, 666, 3.563463390e-01f},
    {0, 999, 4.792409241e-01f},  {1, 0, -1.827315092e-01f},   {1, 333, -3.763660491e-01f},
    {1, 666, 7.173060626e-02f},  {1, 999, 2.925411761e-01f},  {2, 0, -1.488047540e-01f},
    {2, 333, -3.862351179e-01f}, {2, 666, -2.396415323e-01f}, {2, 999, 1.839744747e-01f},
    {3, 0, -9.405530989e-02f},   {3, 333, -3.058901131e-01f}, {3, 666, -1.550062895e-01f},
    {3, 999, 5.089957714e-01f},  {4, 0, -2.234097123e-01f},   {4, 333, -3.936560452e-01f},
    {4, 666, -2.645916641e-01f}, {4, 999, 3.112786412e-01f},  {5, 0, -2.815850377e-01f},
    {5, 333, -3.340543509e-01f}, {5, 666, -3.413992524e-01f}, {5, 999, 1.985095739e-01f},
    {6, 0, -2.028943300e-01f},   {6, 333, -3.744542599e-01f}, {6, 666, -2.661583424e-01f},
    {6, 999, 2.803021669e-01f}};

#define GOLD_TOL 1e-5

static void test_telechat2_transformers(void **state)
{
	(void)state;
	expect_gold("telechat2", 1000, GOLD_TOL, gold_telechat2,
	            sizeof(gold_telechat2) / sizeof(gold_telechat2[0]));
}

/* Rank 0's k and v rows of layer 1's qkv_proj exchanged (TP 2: [q_r; k_r; v_r] of 64 rows
 * each, 128 F32 columns): a key_value cut without the de-interleave's k / v order. */
static void tamper_kv(void *ctx, ref_set *r, uint32_t n)
{
	(void)ctx;
	assert_true(n >= 1);
	swap_stack_halves(find_tensor(&r[0], L1 "self_attn.qkv_proj.weight")->data + 64 * 128 * 4,
	                  1, 64, 128 * 4);
}

static void test_telechat2_caught(void **state)
{
	(void)state;
	expect_caught("telechat2", 2, 1, tamper_kv, "rank 0's k and v exchanged inside qkv_proj");
	expect_swapped("telechat2", 2, 1, L1 "self_attn.qkv_proj.weight",
	               "the ranks' q/k/v heads exchanged");
	expect_swapped("telechat2", 2, 1, L1 "self_attn.o_proj.weight", "o_proj columns exchanged");
	expect_swapped("telechat2", 2, 1, L1 "mlp.gate_up_proj.weight", "gate_up rows exchanged");
	expect_swapped("telechat2", 2, 1, L1 "mlp.down_proj.weight", "down_proj columns exchanged");
	expect_halves_swapped("telechat2", 2, 1,
	                      (tamper_halves){L1 "mlp.gate_up_proj.weight", 0, 1, 96, 128 * 4},
	                      "rank 0's gate / up halves exchanged");
}

/* The fixture is read as Llama's decoder: RMSNorms, the gated MLP (silu), q/k/v unfused (k / v
 * from key_value), untied, MHA, head_dim 16 (hid / n_head), n_layer 2, ffn_hidden_size 192,
 * layer_norm_epsilon 1e-5 as rms_norm_eps, rope_theta 10000 (absent); the checkpoint's names
 * renamed onto Llama's, key_value's interleaved rows split by kv head. */
static void test_telechat2_config(void **state)
{
	(void)state;
	model m = {0};
	ref_set ck = {0};
	ref_cfg c;
	wt_errbuf err = {0};
	open_model(&m, "telechat2");
	assert_int_equal(ref_load_ckpt(m.c, &c, &ck, &err), WT_OK);
	assert_true(c.kind == REF_DENSE && c.telechat2 && !c.fused_ckpt && !c.layernorm &&
	            !c.plain_mlp && !c.tied && c.H == 8 && c.KV == 8 && c.d == 16 && c.I == 192 &&
	            c.L == 2 && c.hid == 128 && c.V == 1000 && c.act == REF_ACT_SILU);
	assert_true(fabs(c.eps - 1e-5) < 1e-12);
	assert_true(fabs(c.theta - 1e4) < 1e-6);
	ref_set r = {0};
	assert_true(ref_own_names(&c, &ck));
	assert_int_equal(ref_rename_own(&c, &ck, &r, true, &err), WT_OK);
	const ref_tensor *kv = ref_set_find(&ck, "transformer.h.1.self_attention.key_value.weight");
	const ref_tensor *k = ref_set_find(&r, L1 "self_attn.k_proj.weight");
	const ref_tensor *v = ref_set_find(&r, L1 "self_attn.v_proj.weight");
	assert_true(kv != NULL && k != NULL && v != NULL && k->shape[0] == 128);
	/* kv head 3's k is key_value rows [96, 112), its v rows [112, 128) (F32, 128 columns) */
	assert_memory_equal(k->data + 3 * 16 * 512, kv->data + 6 * 16 * 512, 16 * 512);
	assert_memory_equal(v->data + 3 * 16 * 512, kv->data + 7 * 16 * 512, 16 * 512);
	assert_non_null(ref_set_find(&r, L1 "self_attn.o_proj.bias"));
	assert_non_null(ref_set_find(&r, L1 "mlp.down_proj.bias"));
	assert_non_null(ref_set_find(&r, "model.embed_tokens.weight"));
	assert_null(ref_set_find(&r, L1 "self_attn.key_value.weight"));
	ref_set_clear(&r);
	ref_set_clear(&ck);
	close_model(&m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_telechat2_pass),
	    cmocka_unit_test(test_telechat2_transformers),
	    cmocka_unit_test(test_telechat2_caught),
	    cmocka_unit_test(test_telechat2_config),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
