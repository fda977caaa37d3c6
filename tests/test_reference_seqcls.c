/*
 * test_reference_seqcls.c — the reference forward pass over the decoder sequence classifiers
 * (Qwen3ForSequenceClassification, fixture qwen3_cls): Qwen3's decoder without lm_head, then
 * score.weight on every token's final hidden state (transformers' score is the last non-pad
 * token's; with no pad_token_id the last token's). Full and sharded scores agree within
 * REF_TOL_F32 (TP 1, 2, 4) or the quantized layouts' budgets (score quantized with the
 * decoder's Linears); the full path's scores equal transformers 4.57.1's
 * (Qwen3ForSequenceClassification, eager, float32) at all 7 tokens, the last one its pooled
 * output; rank tensors broken the way a wrong planner would break them are caught. Fixture
 * from $WT_BUILD/wt-mkckpt --family qwen3_cls (hid 128, H 4, KV 2, head_dim 48, I 192, V 1000,
 * 2 layers, 1 label; seed printed).
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
	static const char *fams[] = {"qwen3_cls"};
	return gen_fixtures("reference_seqcls", fams, 1);
}

static void test_seqcls_pass(void **state)
{
	(void)state;
	expect_pass_tp("qwen3_cls", false);
}

/* (token, label, transformers 4.57.1 score), tokens g_tokens: the score of every token's last
 * hidden state (Qwen3ForSequenceClassification.from_pretrained of the fixture, strict, eager,
 * float32); token 6's is the model's pooled output (logits [1, 1]) */
static const gold_pt gold_qwen3_cls[] = {
    {0, 0, 2.902743220e-01f}, {1, 0, 3.083132505e-01f}, {2, 0, 3.160141110e-01f},
    {3, 0, 1.941407919e-01f}, {4, 0, 1.361276954e-01f}, {5, 0, 4.176265597e-01f},
    {6, 0, 3.328626752e-01f},
};

#define GOLD_TOL 1e-5

static void test_seqcls_transformers(void **state)
{
	(void)state;
	expect_gold("qwen3_cls", 1, GOLD_TOL, gold_qwen3_cls,
	            sizeof(gold_qwen3_cls) / sizeof(gold_qwen3_cls[0]));
}

/* Rank 1's score.weight zeroed (a rank given no head, or the wrong tensor). */
static void zero_score(void *ctx, ref_set *r, uint32_t n)
{
	(void)ctx;
	assert_true(n >= 2);
	ref_tensor *t = find_tensor(&r[1], "score.weight");
	memset(t->data, 0, (size_t)t->nbytes);
}

static void test_seqcls_caught(void **state)
{
	(void)state;
	expect_swapped("qwen3_cls", 2, 1, L1 "self_attn.qkv_proj.weight",
	               "the ranks' q/k/v heads exchanged");
	expect_swapped("qwen3_cls", 2, 1, L1 "self_attn.o_proj.weight", "o_proj columns exchanged");
	expect_swapped("qwen3_cls", 2, 1, L1 "mlp.gate_up_proj.weight", "gate_up rows exchanged");
	expect_caught("qwen3_cls", 2, 1, zero_score, "one rank's score.weight zeroed");
}

/* The fixture is read as a Qwen3 classifier: q / k norms, one label, no lm_head. */
static void test_seqcls_config(void **state)
{
	(void)state;
	model m = {0};
	ref_set ck = {0};
	ref_cfg c;
	wt_errbuf err = {0};
	open_model(&m, "qwen3_cls");
	assert_int_equal(ref_load_ckpt(m.c, &c, &ck, &err), WT_OK);
	assert_true(c.dec_cls && c.qk_norm && c.kind == REF_DENSE && c.n_labels == 1 && c.H == 4 &&
	            c.KV == 2 && c.d == 48 && c.I == 192 && c.L == 2);
	assert_int_equal(ref_out_count(&c, N_TOK), N_TOK);
	assert_null(ref_set_find(&ck, "lm_head.weight"));
	ref_set_clear(&ck);
	close_model(&m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_seqcls_pass),
	    cmocka_unit_test(test_seqcls_transformers),
	    cmocka_unit_test(test_seqcls_caught),
	    cmocka_unit_test(test_seqcls_config),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
