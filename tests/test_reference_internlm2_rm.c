/*
 * test_reference_internlm2_rm.c — the reference forward pass over InternLM2's reward models
 * (InternLM2ForRewardModel, fixture internlm2_rm; remote code, vLLM's internlm2.py): InternLM2's
 * decoder without output, then v_head [1, hid] (no bias) on every token's final hidden state
 * (vLLM's token pooling returns every token's score; the reward is the last token's). Full and
 * sharded scores agree within REF_TOL_F32 (TP 1, 2, 4, 8) or the quantized layouts' budgets
 * (v_head by columns, never quantized); the full path's scores equal those of a torch module
 * made of transformers 4.57.1's LlamaModel (the packed wqkv unpacked as the remote code's
 * rearrange reads it, strict load, eager, float32) and a bias-free Linear(hid, 1) at all 7
 * tokens; rank tensors broken the way a wrong planner would break them are caught. Fixture from
 * $WT_BUILD/wt-mkckpt --family internlm2_rm (hid 128, H 8, KV 2, I 192, V 1000, 2 layers).
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

#define FAM "internlm2_rm"
#define L1  "model.layers.1."

static int setup(void **state)
{
	(void)state;
	static const char *fams[] = {FAM};
	return gen_fixtures("reference_internlm2_rm", fams, 1);
}

static void test_il2rm_pass(void **state)
{
	(void)state;
	expect_pass_tp(FAM, true);
}

/* (token, label, value), tokens g_tokens: v_head(last_hidden_state) of transformers 4.57.1's
 * LlamaModel built from the fixture (wqkv unpacked per kv group, the names mapped, strict) and
 * Linear(hid, 1, bias=False) holding v_head.weight, eager, float32 */
static const gold_pt gold_il2rm[] = {
    {0, 0, 1.483408511e-01f},  {1, 0, -6.053382158e-02f}, {2, 0, 2.140988111e-01f},
    {3, 0, 1.127293631e-01f},  {4, 0, 2.844875157e-01f},  {5, 0, 2.565560937e-01f},
    {6, 0, -3.809185326e-02f},
};

#define GOLD_TOL 1e-6

static void test_il2rm_transformers(void **state)
{
	(void)state;
	expect_gold(FAM, 1, GOLD_TOL, gold_il2rm, sizeof(gold_il2rm) / sizeof(gold_il2rm[0]));
}

static void test_il2rm_caught(void **state)
{
	(void)state;
	expect_swapped(FAM, 2, 1, L1 "attention.wqkv.weight", "the ranks' q/k/v heads exchanged");
	expect_swapped(FAM, 2, 1, L1 "feed_forward.w2.weight", "w2 columns exchanged");
	expect_swapped(FAM, 2, 1, "v_head.weight", "v_head columns exchanged");
	expect_swapped(FAM, 4, 1, "v_head.weight", "v_head columns exchanged (TP 4)");
	expect_zeroed(FAM, 4, 1, 3, "v_head.weight", "rank 3's v_head columns zeroed");
}

/* The fixture is read as an InternLM2 reward model: one label, no output, v_head as the score;
 * every token's score is out. */
static void test_il2rm_config(void **state)
{
	(void)state;
	model m = {0};
	ref_set ck = {0};
	ref_cfg c;
	wt_errbuf err = {0};
	open_model(&m, FAM);
	assert_int_equal(ref_load_ckpt(m.c, &c, &ck, &err), WT_OK);
	assert_true(c.dec_cls && c.vh_cols && !c.rm_head && !c.dec_emb && c.internlm2 &&
	            c.kind == REF_DENSE && c.n_labels == 1 && c.H == 8 && c.KV == 2 && c.d == 16 &&
	            c.I == 192 && c.L == 2);
	assert_int_equal(ref_out_count(&c, N_TOK), N_TOK);
	assert_null(ref_set_find(&ck, "output.weight"));
	assert_non_null(ref_set_find(&ck, "v_head.weight"));
	ref_set_clear(&ck);
	close_model(&m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_il2rm_pass),
	    cmocka_unit_test(test_il2rm_transformers),
	    cmocka_unit_test(test_il2rm_caught),
	    cmocka_unit_test(test_il2rm_config),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
