/*
 * test_reference_modernbert_tok.c — the reference forward pass over ModernBERT's token
 * classifier (ModernBertForTokenClassification, fixture modernbert_tok: modernbert_cls's
 * encoder under model. (3 layers, no encoder bias, local_attention 2, local_rope_theta null),
 * head.dense with its bias (classifier_bias true), GELU, head.norm, classifier [2, hid] with
 * its bias on every token): each output row holds its token's 2 logits, then zeros. Full and
 * sharded outputs agree within REF_TOL_F32 (TP 1, 2, 4) and the quantized layouts leave every
 * tensor as it was (vLLM quantizes nothing of ModernBERT); the full path's logits equal
 * transformers 4.57.1's (ModernBertForTokenClassification, eager, float32) at all 14 points;
 * rank tensors broken the way a wrong planner would break them are caught. Fixture from
 * $WT_BUILD/wt-mkckpt --family modernbert_tok (seed printed).
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

#define HID 128
#define FAM "modernbert_tok"

static int setup(void **state)
{
	(void)state;
	static const char *fams[] = {FAM};
	return gen_fixtures("reference_modernbert_tok", fams, 1);
}

static void test_mb_tok_pass(void **state)
{
	(void)state;
	expect_pass(FAM, 1, 1, WT_QUANT_NONE, 0);
	expect_pass(FAM, 2, 1, WT_QUANT_NONE, 0);
	expect_pass(FAM, 4, 1, WT_QUANT_NONE, 0);
	ref_result res;
	wt_errbuf err = {0};
	assert_int_equal(run(FAM, 2, 1, WT_QUANT_INT8_CHANNEL, 0, NULL, NULL, &res, &err), WT_OK);
	assert_true(res.pass && res.diff.max_abs_diff <= REF_TOL_F32 * res.diff.max_abs_ref);
}

/* (token, label, transformers 4.57.1 logit), tokens g_tokens: the logits of
 * ModernBertForTokenClassification.from_pretrained of the fixture (strict: no missing /
 * unexpected / mismatched key), eager, float32 */
static const gold_pt gold_tok[] = {
    {0, 0, -2.550556660e-01f}, {0, 1, -5.435967818e-03f}, {1, 0, 4.656724632e-01f},
    {1, 1, 1.062353514e-02f},  {2, 0, 4.304188192e-01f},  {2, 1, -3.782566190e-01f},
    {3, 0, -3.206813931e-01f}, {3, 1, 6.618185341e-02f},  {4, 0, 3.844418526e-01f},
    {4, 1, -1.857403219e-01f}, {5, 0, -2.985187471e-01f}, {5, 1, 2.350574434e-01f},
    {6, 0, 4.734914005e-01f},  {6, 1, 8.394703269e-02f},
};

#define GOLD_TOL 1e-5

/* The 14 logits, and every row's columns past the 2 labels zero. */
static void test_mb_tok_transformers(void **state)
{
	(void)state;
	expect_gold(FAM, HID, GOLD_TOL, gold_tok, sizeof(gold_tok) / sizeof(gold_tok[0]));
	float *o = malloc(N_TOK * HID * sizeof(float));
	assert_non_null(o);
	ref_cfg c;
	full_logits(FAM, o, &c);
	for (size_t t = 0; t < N_TOK; t++)
		for (int64_t i = 2; i < HID; i++)
			assert_true(o[t * HID + i] == 0.0f);
	free(o);
}

static void tamper_head(void *ctx, ref_set *r, uint32_t n)
{
	ref_tensor *t = ref_set_find(&r[n - 1], (const char *)ctx);
	assert_non_null(t);
	memset(t->data, 0, (size_t)t->nbytes); /* the last rank's replica zeroed */
}

static void test_mb_tok_caught(void **state)
{
	(void)state;
	expect_swapped(FAM, 2, 1, "model.layers.1.attn.Wqkv.weight",
	               "the ranks' Wqkv heads exchanged");
	expect_swapped(FAM, 2, 1, "model.layers.0.mlp.Wo.weight", "mlp.Wo columns exchanged");
	static const char *const head[] = {"head.dense.weight", "head.dense.bias",
	                                   "head.norm.weight", "classifier.weight"};
	for (size_t k = 0; k < sizeof(head) / sizeof(head[0]); k++)
		expect_caught_ctx(FAM, 2, 1, tamper_head, (void *)head[k], head[k]);
}

/* The fixture is read as the token classifier: two labels, the head's bias, GELU; another
 * classifier_activation is refused by the reference (its head runs GELU). */
static void test_mb_tok_config(void **state)
{
	(void)state;
	model m = {0};
	ref_set ck = {0};
	ref_cfg c;
	wt_errbuf err = {0};
	open_model(&m, FAM);
	assert_int_equal(ref_load_ckpt(m.c, &c, &ck, &err), WT_OK);
	assert_true(c.mb_tok && !c.mb_cls && c.modernbert && c.mb_cls_bias && c.mb_cls_gelu &&
	            c.kind == REF_BERT && c.n_labels == 2 && c.hid == HID);
	assert_int_equal(ref_out_count(&c, N_TOK), N_TOK * HID);
	ref_set_clear(&ck);
	close_model(&m);
	static const char silu[] =
	    "{\"architectures\":[\"ModernBertForTokenClassification\"],\"model_type\":"
	    "\"modernbert\",\"hidden_size\":128,\"num_attention_heads\":8,\"intermediate_size\":96,"
	    "\"vocab_size\":1000,\"num_hidden_layers\":3,\"classifier_activation\":\"silu\"}";
	ref_cfg s = c;
	s.mb_cls_gelu = false;
	assert_int_equal(
	    ref_cfg_finish(&s, FAM, "ModernBertForTokenClassification", silu, strlen(silu), &err),
	    WT_EUNSUPPORTED);
	assert_non_null(strstr(err.msg, "classifier_activation"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_mb_tok_pass),
	    cmocka_unit_test(test_mb_tok_transformers),
	    cmocka_unit_test(test_mb_tok_caught),
	    cmocka_unit_test(test_mb_tok_config),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
