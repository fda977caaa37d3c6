/*
 * test_reference_llama_bidir_emb.c — the reference forward pass over LlamaBidirectionalModel
 * (fixture llama_bidir_emb, model_type llama_bidirec): Llama's decoder under the base model's
 * names, no lm_head, attention WITHOUT the causal mask (vLLM's LlamaBidirectionalConfig sets
 * is_causal false); the output is every token's final hidden state. Full and sharded outputs
 * agree within REF_TOL_F32 (TP 1, 2, 4) or the quantized layouts' budgets; the full path's
 * equal transformers 4.57.1's LlamaModel (eager, float32, strict load, an all-ones 4-D mask
 * built by hand so every query sees every key) at 28 points; the causal pass is not what is
 * served; rank tensors broken the way a wrong planner would break them are caught. Fixture
 * from $WT_BUILD/wt-mkckpt --family llama_bidir_emb (hid 128, H 4, KV 2, I 192, V 1000, 2
 * layers; seed printed).
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

#define FAM "llama_bidir_emb"
#define L1  "model.layers.1."
#define HID 128

static int setup(void **state)
{
	(void)state;
	static const char *fams[] = {FAM};
	return gen_fixtures("reference_llama_bidir_emb", fams, 1);
}

static void test_bidir_pass(void **state)
{
	(void)state;
	expect_pass_tp(FAM, false);
}

/* (token, column, transformers 4.57.1 value), tokens g_tokens: last_hidden_state of
 * LlamaModel built from the fixture's config (architectures / model_type / pooling /
 * temperature dropped), load_state_dict strict, eager, float32, attention_mask an all-zero
 * additive [1, 1, 7, 7] (bidirectional); four columns of each token's final hidden state.
 * Largest difference over all 7 x 128 values 1.2e-6 (largest 3.01); the causal LlamaModel
 * differs by 3.26. */
static const gold_pt gold_bidir[] = {
    {0, 0, 9.157632589e-01f},    {0, 37, -8.673343807e-02f},  {0, 90, 8.381303549e-01f},
    {0, 127, -1.702693582e+00f}, {1, 0, 9.888539910e-01f},    {1, 37, -3.490161300e-01f},
    {1, 90, 5.914813876e-01f},   {1, 127, -9.931715131e-01f}, {2, 0, 8.115403652e-01f},
    {2, 37, -5.128275156e-01f},  {2, 90, 3.313808143e-01f},   {2, 127, -1.489536285e+00f},
    {3, 0, 8.596516848e-01f},    {3, 37, -4.921589419e-02f},  {3, 90, 6.682796478e-01f},
    {3, 127, -1.575224280e+00f}, {4, 0, 9.041721821e-01f},    {4, 37, -2.296743244e-01f},
    {4, 90, 4.833587706e-01f},   {4, 127, -1.774602771e+00f}, {5, 0, 1.107980132e+00f},
    {5, 37, 2.544536255e-02f},   {5, 90, 4.798389971e-01f},   {5, 127, -1.644923687e+00f},
    {6, 0, 8.350057602e-01f},    {6, 37, -3.075074255e-01f},  {6, 90, 4.754559100e-01f},
    {6, 127, -1.195415735e+00f},
};

#define GOLD_TOL 1e-5

static void test_bidir_transformers(void **state)
{
	(void)state;
	expect_gold(FAM, HID, GOLD_TOL, gold_bidir, sizeof(gold_bidir) / sizeof(gold_bidir[0]));
}

/* The bidirectional switch is read and moves the output: the same weights under the causal
 * mask give other hidden states, token 0's among them (a causal token 0 sees itself alone). */
static void test_bidir_not_causal(void **state)
{
	(void)state;
	model m = {0};
	ref_set ck = {0};
	ref_cfg c;
	wt_errbuf err = {0};
	float bi[N_TOK * HID], ca[N_TOK * HID];
	open_model(&m, FAM);
	assert_int_equal(ref_load_ckpt(m.c, &c, &ck, &err), WT_OK);
	assert_true(c.bidir);
	logits_with(&c, &ck, bi);
	c.bidir = false;
	logits_with(&c, &ck, ca);
	expect_moved(bi, ca, N_TOK * HID, 1e-3, "causal mask in place of the bidirectional one");
	expect_moved(bi, ca, HID, 1e-3, "token 0 under the causal mask");
	ref_set_clear(&ck);
	close_model(&m);
}

/* Rank 1's final norm zeroed (a rank given the wrong tensor for it). */
static void zero_norm(void *ctx, ref_set *r, uint32_t n)
{
	(void)ctx;
	assert_true(n >= 2);
	ref_tensor *t = find_tensor(&r[1], "model.norm.weight");
	memset(t->data, 0, (size_t)t->nbytes);
}

static void test_bidir_caught(void **state)
{
	(void)state;
	expect_swapped(FAM, 2, 1, L1 "self_attn.qkv_proj.weight",
	               "the ranks' q/k/v heads exchanged");
	expect_swapped(FAM, 2, 1, L1 "self_attn.o_proj.weight", "o_proj columns exchanged");
	expect_swapped(FAM, 2, 1, L1 "mlp.gate_up_proj.weight", "gate_up rows exchanged");
	expect_swapped(FAM, 2, 1, L1 "mlp.down_proj.weight", "down_proj columns exchanged");
	expect_zeroed(FAM, 2, 1, 0, "model.layers.0.self_attn.qkv_proj.weight",
	              "rank 0's layer-0 q/k/v zeroed");
	expect_caught(FAM, 2, 1, zero_norm, "one rank's final norm zeroed");
}

/* The fixture is read as a Llama base model with bidirectional attention: no biases, no head,
 * hid floats per token, its unprefixed names read under the causal LM's. */
static void test_bidir_config(void **state)
{
	(void)state;
	model m = {0};
	ref_set ck = {0};
	ref_cfg c;
	wt_errbuf err = {0};
	open_model(&m, FAM);
	assert_int_equal(ref_load_ckpt(m.c, &c, &ck, &err), WT_OK);
	assert_true(c.dec_emb && c.bidir && !c.dec_cls && !c.qk_norm && c.kind == REF_DENSE &&
	            c.H == 4 && c.KV == 2 && c.d == 32 && c.I == 192 && c.L == 2 && c.hid == HID);
	assert_int_equal(ref_out_count(&c, N_TOK), N_TOK * HID);
	assert_non_null(ref_set_find(&ck, "model.embed_tokens.weight"));
	assert_null(ref_set_find(&ck, L1 "self_attn.q_proj.bias"));
	assert_null(ref_set_find(&ck, "lm_head.weight"));
	ref_set_clear(&ck);
	close_model(&m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_bidir_pass),       cmocka_unit_test(test_bidir_transformers),
	    cmocka_unit_test(test_bidir_not_causal), cmocka_unit_test(test_bidir_caught),
	    cmocka_unit_test(test_bidir_config),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
