/*
 * test_reference_gpt2_cls.c — the reference forward pass over GPT-2's sequence classifier
 * (GPT2ForSequenceClassification, fixture gpt2_cls): GPT-2's decoder (reference/gpt2.c: learned
 * positions, LayerNorms with biases, the Conv1D weights transposed) without lm_head, then
 * score.weight [2, hid] (no bias) on every token's final hidden state (transformers' score is
 * the last non-pad token's; the fixture's pad_token_id 0 is not among the test tokens, so the
 * last token's). Full and sharded scores agree within REF_TOL_F32 (TP 1, 2, 4) or the quantized
 * layouts' budgets (score kept whole and unquantized, the decoder's Linears quantized); the full
 * path's scores equal transformers 4.57.1's (GPT2ForSequenceClassification, eager, float32) at
 * all 7 tokens x 2 labels, the last row its pooled output; rank tensors broken the way a wrong
 * planner would break them are caught. Fixture from $WT_BUILD/wt-mkckpt --family gpt2_cls
 * (hid 128, H 8, d 16, I 512, V 1000, 2 layers, 64 positions, 2 labels; seed printed).
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

#define H1 "transformer.h.1."

static int setup(void **state)
{
	(void)state;
	static const char *fams[] = {"gpt2_cls"};
	return gen_fixtures("reference_gpt2_cls", fams, 1);
}

static void test_gpt2_cls_pass(void **state)
{
	(void)state;
	expect_pass_tp("gpt2_cls", false);
}

/* (token, label, transformers 4.57.1 score), tokens g_tokens: the score of every token's last
 * hidden state (GPT2ForSequenceClassification.from_pretrained of the fixture, strict, eager,
 * float32); token 6's are the model's pooled output (logits [1, 2]) */
static const gold_pt gold_gpt2_cls[] = {
    {0, 0, 2.702316046e-01f},  {0, 1, 7.410965860e-03f},  {1, 0, -2.415225469e-02f},
    {1, 1, -6.430953741e-02f}, {2, 0, 1.027251557e-01f},  {2, 1, -4.975800216e-02f},
    {3, 0, 2.479100525e-01f},  {3, 1, -6.342917681e-02f}, {4, 0, 3.385230303e-01f},
    {4, 1, 3.319865465e-02f},  {5, 0, 1.679917797e-02f},  {5, 1, -1.737077832e-01f},
    {6, 0, 1.137477010e-01f},  {6, 1, -1.893035620e-01f},
};

#define GOLD_TOL 1e-5

static void test_gpt2_cls_transformers(void **state)
{
	(void)state;
	expect_gold("gpt2_cls", 2, GOLD_TOL, gold_gpt2_cls,
	            sizeof(gold_gpt2_cls) / sizeof(gold_gpt2_cls[0]));
}

/* Rank 1's score.weight zeroed (a rank given no head, or the wrong tensor). */
static void zero_score(void *ctx, ref_set *r, uint32_t n)
{
	(void)ctx;
	assert_true(n >= 2);
	ref_tensor *t = find_tensor(&r[1], "score.weight");
	memset(t->data, 0, (size_t)t->nbytes);
}

static void test_gpt2_cls_caught(void **state)
{
	(void)state;
	expect_halves_swapped("gpt2_cls", 2, 1,
	                      (tamper_halves){H1 "attn.c_attn.weight", 1, 1, 64, 128 * 4},
	                      "rank 1's q and k rows exchanged");
	expect_swapped("gpt2_cls", 2, 1, H1 "attn.c_proj.weight", "c_proj columns exchanged");
	expect_swapped("gpt2_cls", 2, 1, H1 "mlp.c_fc.weight", "c_fc rows exchanged");
	expect_caught("gpt2_cls", 2, 1, zero_score, "one rank's score.weight zeroed");
}

/* The fixture is read as GPT-2 with the score head: two labels, no lm_head. */
static void test_gpt2_cls_config(void **state)
{
	(void)state;
	model m = {0};
	ref_set ck = {0};
	ref_cfg c;
	wt_errbuf err = {0};
	open_model(&m, "gpt2_cls");
	assert_int_equal(ref_load_ckpt(m.c, &c, &ck, &err), WT_OK);
	assert_true(c.dec_cls && c.gpt2 && !c.bigcode && !c.rm_head && c.kind == REF_DENSE &&
	            c.n_labels == 2 && c.H == 8 && c.KV == 8 && c.d == 16 && c.I == 512 &&
	            c.L == 2);
	assert_int_equal(ref_out_count(&c, N_TOK), 2 * N_TOK);
	assert_null(ref_set_find(&ck, "lm_head.weight"));
	ref_set_clear(&ck);
	close_model(&m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_gpt2_cls_pass),
	    cmocka_unit_test(test_gpt2_cls_transformers),
	    cmocka_unit_test(test_gpt2_cls_caught),
	    cmocka_unit_test(test_gpt2_cls_config),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
