/*
 * test_reference_rm.c — the reference forward pass over Qwen2's reward models
 * (Qwen2ForRewardModel, fixture qwen2_rm; remote code, vLLM's qwen2_rm.py): Qwen2's decoder
 * without lm_head, then the score head score.0 (+ bias), ReLU, score.2 (+ bias) on every
 * token's final hidden state (vLLM's reward pooling returns every token's). Full and sharded
 * scores agree within REF_TOL_F32 (TP 1, 2, 4) or the quantized layouts' budgets (score.0 by
 * rows, score.2 by columns, both quantized); the full path's scores equal those of a torch
 * module made of transformers 4.57.1's Qwen2Model and the remote code's score Sequential
 * (strict load, eager, float32) at all 7 tokens; rank tensors broken the way a wrong planner
 * would break them are caught. Fixture from $WT_BUILD/wt-mkckpt --family qwen2_rm (hid 128,
 * H 4, KV 2, I 192, V 1000, 2 layers, q/k/v biases, 1 label; seed printed).
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
	static const char *fams[] = {"qwen2_rm"};
	return gen_fixtures("reference_rm", fams, 1);
}

static void test_rm_pass(void **state)
{
	(void)state;
	expect_pass_tp("qwen2_rm", false);
}

/* (token, label, value), tokens g_tokens: score(last_hidden_state) of a torch module made of
 * transformers 4.57.1's Qwen2Model and nn.Sequential(Linear(hid, hid), ReLU, Linear(hid, 1))
 * (the remote code's Qwen2ForRewardModel), the fixture loaded strictly, eager, float32 */
static const gold_pt gold_qwen2_rm[] = {
    {0, 0, 1.389980614e-01f}, {1, 0, 1.491895616e-01f}, {2, 0, 1.395847201e-01f},
    {3, 0, 1.469346583e-01f}, {4, 0, 1.025596634e-01f}, {5, 0, 7.020492107e-02f},
    {6, 0, 8.669357747e-02f},
};

#define GOLD_TOL 1e-6

static void test_rm_transformers(void **state)
{
	(void)state;
	expect_gold("qwen2_rm", 1, GOLD_TOL, gold_qwen2_rm,
	            sizeof(gold_qwen2_rm) / sizeof(gold_qwen2_rm[0]));
}

/* Rank 1's score.2.bias zeroed (a rank given no copy of the replicated bias). */
static void zero_bias(void *ctx, ref_set *r, uint32_t n)
{
	(void)ctx;
	assert_true(n >= 2);
	ref_tensor *t = find_tensor(&r[1], "score.2.bias");
	memset(t->data, 0, (size_t)t->nbytes);
}

static void test_rm_caught(void **state)
{
	(void)state;
	expect_swapped("qwen2_rm", 2, 1, L1 "self_attn.qkv_proj.weight",
	               "the ranks' q/k/v heads exchanged");
	expect_swapped("qwen2_rm", 2, 1, "score.0.weight", "score.0 rows exchanged");
	expect_swapped("qwen2_rm", 2, 1, "score.0.bias", "score.0 bias rows exchanged");
	expect_swapped("qwen2_rm", 2, 1, "score.2.weight", "score.2 columns exchanged");
	expect_caught("qwen2_rm", 2, 1, zero_bias, "one rank's score.2.bias zeroed");
}

/* The fixture is read as a Qwen2 reward model: q/k/v biases, one label, no lm_head. */
static void test_rm_config(void **state)
{
	(void)state;
	model m = {0};
	ref_set ck = {0};
	ref_cfg c;
	wt_errbuf err = {0};
	open_model(&m, "qwen2_rm");
	assert_int_equal(ref_load_ckpt(m.c, &c, &ck, &err), WT_OK);
	assert_true(c.dec_cls && c.rm_head && !c.dec_emb && !c.qk_norm && c.kind == REF_DENSE &&
	            c.n_labels == 1 && c.H == 4 && c.KV == 2 && c.d == 32 && c.I == 192 &&
	            c.L == 2);
	assert_int_equal(ref_out_count(&c, N_TOK), N_TOK);
	assert_null(ref_set_find(&ck, "lm_head.weight"));
	assert_non_null(ref_set_find(&ck, "score.0.bias"));
	ref_set_clear(&ck);
	close_model(&m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_rm_pass),
	    cmocka_unit_test(test_rm_transformers),
	    cmocka_unit_test(test_rm_caught),
	    cmocka_unit_test(test_rm_config),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
