/*
 * test_reference_jamba_cls.c — the reference forward pass over Jamba's sequence classifier
 * (JambaForSequenceClassification, fixture jamba_cls): Jamba's decoder (reference/jamba.c:
 * layers 0, 1 and 3 Mamba (v1) mixers, layer 2 attention without RoPE, experts in layers 1
 * and 3) then score.weight on every token (dec_cls; transformers' pooled logits are the last
 * non-pad token's row, here the last). Full and sharded outputs agree within REF_TOL_F32 (TP 1,
 * 2, 4, TP 2 x EP 2) or the quantized layouts' budgets (score whole and unquantized); the full
 * path's values equal transformers 4.57.1's (JambaForSequenceClassification, eager, float32,
 * use_mamba_kernels false) at all 14 points of the 7 x 2 output; rank tensors broken the way a
 * wrong planner would break them are caught. Fixture from $WT_BUILD/wt-mkckpt --family
 * jamba_cls (jamba's dims, F32, 2 labels; seed printed).
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

#define M0 "model.layers.0.mamba."

static int setup(void **state)
{
	(void)state;
	static const char *fams[] = {"jamba_cls"};
	return gen_fixtures("reference_jamba_cls", fams, 1);
}

static void test_jb_cls_pass(void **state)
{
	(void)state;
	expect_pass("jamba_cls", 1, 1, WT_QUANT_NONE, 0);
	expect_pass("jamba_cls", 2, 1, WT_QUANT_NONE, 0);
	expect_pass("jamba_cls", 4, 1, WT_QUANT_NONE, 0);
	expect_pass("jamba_cls", 2, 2, WT_QUANT_NONE, 0);
	expect_pass("jamba_cls", 2, 1, WT_QUANT_INT8_CHANNEL, 0);
	expect_pass("jamba_cls", 4, 1, WT_QUANT_FP8_CHANNEL, 0);
}

/* (token, label, transformers 4.57.1 score), tokens g_tokens: the score of every token's last
 * hidden state (JambaForSequenceClassification.from_pretrained of the fixture, strict, eager,
 * float32); token 6's are the model's pooled logits [1, 2] exactly */
static const gold_pt gold_jb_cls[] = {
    {0, 0, -5.349864811e-02f}, {0, 1, -2.698940933e-01f}, {1, 0, 1.011638045e-01f},
    {1, 1, 3.125439212e-02f},  {2, 0, -3.860888481e-01f}, {2, 1, 3.591544032e-01f},
    {3, 0, -3.791348338e-01f}, {3, 1, 4.122986197e-01f},  {4, 0, -4.443317950e-01f},
    {4, 1, 1.002680957e-01f},  {5, 0, -2.479789704e-01f}, {5, 1, 2.804446220e-01f},
    {6, 0, -2.025478184e-01f}, {6, 1, 2.023953795e-01f},
};

#define GOLD_TOL 1e-5

static void test_jb_cls_transformers(void **state)
{
	(void)state;
	expect_gold("jamba_cls", 2, GOLD_TOL, gold_jb_cls,
	            sizeof(gold_jb_cls) / sizeof(gold_jb_cls[0]));
}

/* Rank 1's score.weight zeroed (a rank given no head, or the wrong tensor). */
static void zero_score(void *ctx, ref_set *r, uint32_t n)
{
	(void)ctx;
	assert_true(n >= 2);
	ref_tensor *t = find_tensor(&r[1], "score.weight");
	memset(t->data, 0, (size_t)t->nbytes);
}

static void test_jb_cls_caught(void **state)
{
	(void)state;
	expect_swapped("jamba_cls", 2, 1, "model.layers.2.self_attn.o_proj.weight",
	               "o_proj columns exchanged");
	expect_swapped("jamba_cls", 2, 1, M0 "out_proj.weight", "Mamba out_proj columns exchanged");
	expect_swapped("jamba_cls", 2, 1, "model.layers.0.feed_forward.down_proj.weight",
	               "down_proj columns exchanged");
	expect_caught("jamba_cls", 2, 1, zero_score, "one rank's score.weight zeroed");
}

/* The fixture is read as Jamba with the score head: two labels, no lm_head. */
static void test_jb_cls_config(void **state)
{
	(void)state;
	model m = {0};
	ref_set ck = {0};
	ref_cfg c;
	wt_errbuf err = {0};
	open_model(&m, "jamba_cls");
	assert_int_equal(ref_load_ckpt(m.c, &c, &ck, &err), WT_OK);
	assert_true(c.dec_cls && c.jamba && !c.rm_head && c.kind == REF_QWEN2_MOE &&
	            c.n_labels == 2 && c.H == 4 && c.KV == 2 && c.d == 32 && c.L == 4);
	assert_int_equal(ref_out_count(&c, N_TOK), 2 * N_TOK);
	assert_null(ref_set_find(&ck, "lm_head.weight"));
	ref_set_clear(&ck);
	close_model(&m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_jb_cls_pass),
	    cmocka_unit_test(test_jb_cls_transformers),
	    cmocka_unit_test(test_jb_cls_caught),
	    cmocka_unit_test(test_jb_cls_config),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
