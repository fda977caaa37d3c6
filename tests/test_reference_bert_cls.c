/*
 * test_reference_bert_cls.c — the reference forward pass over BERT's heads (reference/bert.c):
 * BertForSequenceClassification (fixture bert_cls: bert's encoder and pooler under bert., 2
 * labels) gives the last hidden state [7, 128] and one more row holding the classifier's logits
 * over the pooler's tanh(dense(x[0])), then zeros; BertForTokenClassification (fixture
 * bert_tok: no pooler, 4 labels) gives each token's 4 logits of the classifier over its last
 * hidden state, then zeros. Full and sharded outputs agree within REF_TOL_F32 (TP 1, 2, 4) or
 * the quantized layouts' budgets (the encoder quantized, the heads not); the full path equals
 * transformers 4.57.1's (eager, float32, strict from_pretrained) at 28 hidden values and the
 * 2 logits (bert_cls) and at all 28 logits (bert_tok); rank tensors broken the way a wrong planner
 * would break them are caught. Fixtures from $WT_BUILD/wt-mkckpt --family bert_cls / bert_tok
 * (hid 128, H 4, I 512, V 1000, 2 layers, 64 positions, 2 token types; seed printed).
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
#define L1  "encoder.layer.1."

static int setup(void **state)
{
	(void)state;
	static const char *fams[] = {"bert_cls", "bert_tok"};
	return gen_fixtures("reference_bert_cls", fams, 2);
}

static void test_bert_heads_pass(void **state)
{
	(void)state;
	static const char *const fams[] = {"bert_cls", "bert_tok"};
	for (size_t i = 0; i < 2; i++) {
		expect_pass(fams[i], 1, 1, WT_QUANT_NONE, 0);
		expect_pass(fams[i], 2, 1, WT_QUANT_NONE, 0);
		expect_pass(fams[i], 4, 1, WT_QUANT_NONE, 0);
		expect_pass(fams[i], 2, 1, WT_QUANT_INT8_CHANNEL, 0);
		expect_pass(fams[i], 4, 1, WT_QUANT_FP8_CHANNEL, 0);
	}
}

/* (row, column, transformers 4.57.1's value), tokens g_tokens, input_ids alone: bert_cls's
 * last hidden state (output_hidden_states), bert_tok's logits [7, 4] */
static const gold_pt gold_bert_cls[] = {
    {0, 12, 2.04584077e-01f},   {0, 38, 2.10690331e+00f},  {0, 82, -1.33194268e+00f},
    {0, 101, -1.69534969e+00f}, {1, 14, 1.05650365e+00f},  {1, 18, 4.79702316e-02f},
    {1, 24, 3.79160345e-01f},   {1, 93, 1.09235454e+00f},  {2, 9, 4.76882100e-01f},
    {2, 22, -1.97379923e+00f},  {2, 54, -4.04897183e-01f}, {2, 111, 9.22969282e-02f},
    {3, 17, -1.49288505e-01f},  {3, 23, -4.25603628e-01f}, {3, 61, 2.06281424e-01f},
    {3, 107, 3.81948113e-01f},  {4, 15, -3.04323882e-01f}, {4, 31, 1.78207862e+00f},
    {4, 57, -1.02967195e-01f},  {4, 108, 8.47994030e-01f}, {5, 12, 4.11917567e-01f},
    {5, 15, 9.42314982e-01f},   {5, 56, 1.50895262e+00f},  {5, 101, 1.03361338e-01f},
    {6, 11, -8.18276525e-01f},  {6, 34, 3.12006831e-01f},  {6, 74, 3.76278944e-02f},
    {6, 107, -3.52201581e-01f},
};
static const gold_pt gold_bert_tok[] = {
    {0, 0, -1.27165109e-01f}, {0, 1, -2.35271677e-01f}, {0, 2, -4.85608950e-02f},
    {0, 3, 9.13160518e-02f},  {1, 0, 2.99199998e-01f},  {1, 1, -4.28421855e-01f},
    {1, 2, -3.08426350e-01f}, {1, 3, -2.00638056e-01f}, {2, 0, 1.28209233e-01f},
    {2, 1, 1.44157242e-02f},  {2, 2, 7.84875304e-02f},  {2, 3, -9.16157961e-02f},
    {3, 0, -4.04850133e-02f}, {3, 1, -5.60998142e-01f}, {3, 2, 5.54200448e-03f},
    {3, 3, -3.80116045e-01f}, {4, 0, 4.53545637e-02f},  {4, 1, -1.47875875e-01f},
    {4, 2, -1.14749156e-01f}, {4, 3, -2.25186124e-01f}, {5, 0, 1.66840672e-01f},
    {5, 1, -1.71849787e-01f}, {5, 2, -2.43237600e-01f}, {5, 3, -2.48591244e-01f},
    {6, 0, -9.66655910e-02f}, {6, 1, -2.55929649e-01f}, {6, 2, 7.99312219e-02f},
    {6, 3, -4.28112566e-01f},
};
/* BertForSequenceClassification's logits [1, 2] */
static const double bert_cls_logits[] = {-4.62539075e-03, 5.20135045e-01};

/* Within 1e-5 (measured over all values: bert_cls's hidden state 1.2e-6 of max 3.68, its 2
 * logits 9.1e-7 of max 0.520; bert_tok's 28 logits 1.8e-7 of max 0.561) */
#define GOLD_TOL 1e-5

static void test_bert_heads_transformers(void **state)
{
	(void)state;
	expect_gold("bert_tok", HID, GOLD_TOL, gold_bert_tok,
	            sizeof(gold_bert_tok) / sizeof(gold_bert_tok[0]));
	float *o = malloc((N_TOK + 1) * HID * sizeof(float));
	assert_non_null(o);
	ref_cfg c;
	full_logits("bert_cls", o, &c);
	double worst = 0;
	for (size_t k = 0; k < sizeof(gold_bert_cls) / sizeof(gold_bert_cls[0]); k++) {
		const gold_pt *g = &gold_bert_cls[k];
		worst = fmax(worst, fabs((double)o[g->row * HID + g->col] - (double)g->v));
	}
	double logit = fmax(fabs((double)o[N_TOK * HID] - bert_cls_logits[0]),
	                    fabs((double)o[N_TOK * HID + 1] - bert_cls_logits[1]));
	print_message("bert_cls: max |reference - transformers| over 28 points %.3g, logits %.3g\n",
	              worst, logit);
	assert_true(worst < GOLD_TOL && logit < GOLD_TOL);
	for (int64_t i = 2; i < HID; i++) /* the logit row: two logits, then zeros */
		assert_true(o[N_TOK * HID + i] == 0.0f);
	free(o);
}

/* The last rank's classifier zeroed (a rank given no head, or the wrong tensor). */
static void zero_classifier(void *ctx, ref_set *r, uint32_t n)
{
	(void)ctx;
	ref_tensor *t = find_tensor(&r[n - 1], "classifier.weight");
	memset(t->data, 0, (size_t)t->nbytes);
}

/* The last rank's pooler bias zeroed (a wrong replica). */
static void zero_pooler_bias(void *ctx, ref_set *r, uint32_t n)
{
	(void)ctx;
	ref_tensor *t = find_tensor(&r[n - 1], "pooler.dense.bias");
	memset(t->data, 0, (size_t)t->nbytes);
}

static void test_bert_heads_caught(void **state)
{
	(void)state;
	expect_swapped("bert_cls", 2, 1, L1 "attention.self.qkv_proj.weight",
	               "qkv exchanged between ranks");
	expect_swapped("bert_tok", 2, 1, L1 "output.dense.weight",
	               "output.dense columns exchanged");
	expect_swapped("bert_tok", 2, 1, L1 "intermediate.dense.bias",
	               "intermediate biases exchanged");
	expect_caught("bert_cls", 2, 1, zero_classifier, "one rank's classifier zeroed");
	expect_caught("bert_tok", 4, 1, zero_classifier, "one rank's classifier zeroed");
	expect_caught("bert_cls", 2, 1, zero_pooler_bias, "one rank's pooler bias zeroed");
}

/* The fixtures as read: BERT's heads (not RoBERTa's), the encoder under BertModel's names. */
static void test_bert_heads_config(void **state)
{
	(void)state;
	static const char *const fams[] = {"bert_cls", "bert_tok"};
	for (size_t i = 0; i < 2; i++) {
		model m = {0};
		ref_set ck = {0};
		ref_cfg c;
		wt_errbuf err = {0};
		open_model(&m, fams[i]);
		assert_int_equal(ref_load_ckpt(m.c, &c, &ck, &err), WT_OK);
		assert_true(c.kind == REF_BERT && !c.roberta && !c.rb_cls && !c.modernbert &&
		            c.bt_cls == (i == 0) && c.bt_tok == (i == 1) &&
		            c.n_labels == (i == 0 ? 2 : 4) && c.hid == HID && c.H == 4 &&
		            c.I == 512 && c.L == 2 && c.max_pos == 64 && c.n_types == 2);
		assert_int_equal(ref_out_rows(&c, N_TOK), i == 0 ? N_TOK + 1 : N_TOK);
		assert_non_null(find_tensor(&ck, "encoder.layer.1.output.dense.weight"));
		assert_non_null(find_tensor(&ck, "classifier.weight"));
		assert_true((ref_set_find(&ck, "pooler.dense.weight") != NULL) == (i == 0));
		ref_set_clear(&ck);
		close_model(&m);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_bert_heads_pass),
	    cmocka_unit_test(test_bert_heads_transformers),
	    cmocka_unit_test(test_bert_heads_caught),
	    cmocka_unit_test(test_bert_heads_config),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
