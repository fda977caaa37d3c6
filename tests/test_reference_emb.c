/*
 * test_reference_emb.c — the reference forward pass over the decoder embedding models saved as
 * base models (Qwen2Model, fixture qwen2_emb): Qwen2's decoder named without model. and no
 * lm_head; the output is the final hidden states (after the final norm) of every token,
 * transformers' last_hidden_state. Full and sharded outputs agree within REF_TOL_F32 (TP 1, 2,
 * 4) or the quantized layouts' budgets; the full path's equal transformers 4.57.1's
 * (AutoModel: Qwen2Model, eager, float32) at 28 points; rank tensors broken the way a wrong
 * planner would break them are caught. Fixture from $WT_BUILD/wt-mkckpt --family qwen2_emb
 * (hid 128, H 4, KV 2, I 192, V 1000, 2 layers, q/k/v biases; seed printed).
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

#define L1  "model.layers.1."
#define HID 128

static int setup(void **state)
{
	(void)state;
	static const char *fams[] = {"qwen2_emb"};
	return gen_fixtures("reference_emb", fams, 1);
}

static void test_emb_pass(void **state)
{
	(void)state;
	expect_pass_tp("qwen2_emb", false);
}

/* (token, column, transformers 4.57.1 value), tokens g_tokens: last_hidden_state of
 * AutoModel.from_pretrained of the fixture (Qwen2Model, strict, eager, float32), four columns
 * of each token's final hidden state */
static const gold_pt gold_qwen2_emb[] = {
    {0, 0, 3.657590449e-01f},    {0, 37, -1.864658147e-01f},  {0, 90, 5.917246938e-01f},
    {0, 127, -4.882919192e-01f}, {1, 0, 2.565612197e-01f},    {1, 37, 3.582223654e-01f},
    {1, 90, 7.860100865e-01f},   {1, 127, -6.020920277e-01f}, {2, 0, 5.042770505e-01f},
    {2, 37, 8.576659858e-02f},   {2, 90, 7.088115811e-01f},   {2, 127, -1.559296250e+00f},
    {3, 0, 7.001463175e-01f},    {3, 37, 5.860669017e-01f},   {3, 90, 8.205239177e-01f},
    {3, 127, -1.541028738e+00f}, {4, 0, 4.697072506e-01f},    {4, 37, 6.731219888e-01f},
    {4, 90, 6.189912558e-01f},   {4, 127, -1.771088123e+00f}, {5, 0, 3.761650026e-01f},
    {5, 37, 4.659714997e-01f},   {5, 90, 5.841420293e-01f},   {5, 127, -1.471620440e+00f},
    {6, 0, 3.476485908e-01f},    {6, 37, -6.233175844e-02f},  {6, 90, 8.080856204e-01f},
    {6, 127, -1.052344680e+00f},
};

#define GOLD_TOL 1e-5

static void test_emb_transformers(void **state)
{
	(void)state;
	expect_gold("qwen2_emb", HID, GOLD_TOL, gold_qwen2_emb,
	            sizeof(gold_qwen2_emb) / sizeof(gold_qwen2_emb[0]));
}

/* Rank 1's final norm zeroed (a rank given the wrong tensor for it). */
static void zero_norm(void *ctx, ref_set *r, uint32_t n)
{
	(void)ctx;
	assert_true(n >= 2);
	ref_tensor *t = find_tensor(&r[1], "model.norm.weight");
	memset(t->data, 0, (size_t)t->nbytes);
}

static void test_emb_caught(void **state)
{
	(void)state;
	expect_swapped("qwen2_emb", 2, 1, L1 "self_attn.qkv_proj.weight",
	               "the ranks' q/k/v heads exchanged");
	expect_swapped("qwen2_emb", 2, 1, L1 "self_attn.qkv_proj.bias",
	               "the ranks' q/k/v biases exchanged");
	expect_swapped("qwen2_emb", 2, 1, L1 "self_attn.o_proj.weight", "o_proj columns exchanged");
	expect_swapped("qwen2_emb", 2, 1, L1 "mlp.gate_up_proj.weight", "gate_up rows exchanged");
	expect_caught("qwen2_emb", 2, 1, zero_norm, "one rank's final norm zeroed");
}

/* The fixture is read as a Qwen2 base model: q/k/v biases, no head, hid floats per token, its
 * unprefixed names read under the causal LM's. */
static void test_emb_config(void **state)
{
	(void)state;
	model m = {0};
	ref_set ck = {0};
	ref_cfg c;
	wt_errbuf err = {0};
	open_model(&m, "qwen2_emb");
	assert_int_equal(ref_load_ckpt(m.c, &c, &ck, &err), WT_OK);
	assert_true(c.dec_emb && !c.dec_cls && !c.qk_norm && c.kind == REF_DENSE && c.H == 4 &&
	            c.KV == 2 && c.d == 32 && c.I == 192 && c.L == 2 && c.hid == HID);
	assert_int_equal(ref_out_count(&c, N_TOK), N_TOK * HID);
	assert_int_equal(ref_out_rows(&c, N_TOK), N_TOK);
	assert_non_null(ref_set_find(&ck, "model.embed_tokens.weight"));
	assert_non_null(ref_set_find(&ck, L1 "self_attn.q_proj.bias"));
	assert_null(ref_set_find(&ck, "layers.1.self_attn.q_proj.bias"));
	assert_null(ref_set_find(&ck, "lm_head.weight"));
	ref_set_clear(&ck);
	close_model(&m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_emb_pass),
	    cmocka_unit_test(test_emb_transformers),
	    cmocka_unit_test(test_emb_caught),
	    cmocka_unit_test(test_emb_config),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
