/*
 * test_reference_gte_new_cls.c — the reference forward pass over GteNewForSequenceClassification
 * (fixture gte_new_cls, model_type new, remote code), as vLLM's bert_with_rope.py runs it:
 * GteNewModel's encoder (test_reference_gte_new.c) read under new., then BertPooler
 * tanh(pooler.dense(x[0])) and classifier: the output is the last hidden state and one more row
 * holding the num_labels logits, then zeros. Full and sharded outputs agree within REF_TOL_F32
 * (TP 1, 2, 4, 8) or the quantized layouts' budgets (the classifier quantized with the encoder);
 * the full path equals an independent torch model at 28 points and the logit; rank tensors
 * broken the way a wrong planner would break them are caught. Fixture from $WT_BUILD/wt-mkckpt
 * --family gte_new_cls (gte_new's dims, 1 label; seed printed).
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

#define FAM "gte_new_cls"
#define L1  "encoder.layers.1."
#define HID 128

static int setup(void **state)
{
	(void)state;
	static const char *fams[] = {FAM, "gte_new"};
	return gen_fixtures("reference_gte_new_cls", fams, 2);
}

static void test_gte_cls_pass(void **state)
{
	(void)state;
	expect_pass_tp(FAM, true);
}

/* (token, column, torch value), tokens g_tokens, then the logit: a torch model written from
 * vLLM's bert_with_rope.py module semantics (GteNewModel as test_reference_gte_new.c's, on
 * transformers 4.57.1's nn.LayerNorm, GELUActivation and modeling_llama's apply_rotary_pos_emb)
 * under new., then transformers' BertPooler (dense, tanh on token 0; state dict loaded strict)
 * and an nn.Linear classifier (strict), float32, every fixture tensor used. Largest difference
 * over all 7 x 128 hidden values 7.2e-7 (largest 3.09), the logit 1.1e-7 (the encoder's values
 * are gte_new's: the fixtures share its tensors' bytes). */
static const gold_pt gold_gte_cls[] = {
    {0, 0, 1.333478570e+00f},    {0, 37, -9.785990715e-01f},  {0, 90, 2.261646748e+00f},
    {0, 127, 1.729277223e-01f},  {1, 0, 1.894758582e+00f},    {1, 37, 3.276935518e-01f},
    {1, 90, 2.311037540e+00f},   {1, 127, -8.721115589e-01f}, {2, 0, 7.073609233e-01f},
    {2, 37, -1.299494982e+00f},  {2, 90, 1.791876674e+00f},   {2, 127, -5.820043683e-01f},
    {3, 0, 5.913900733e-01f},    {3, 37, -1.203569651e+00f},  {3, 90, 1.035311222e+00f},
    {3, 127, 3.824415803e-01f},  {4, 0, 3.992697597e-01f},    {4, 37, -2.956793904e-01f},
    {4, 90, 1.356135130e+00f},   {4, 127, 3.208527565e-01f},  {5, 0, 2.068621397e+00f},
    {5, 37, 3.722757697e-01f},   {5, 90, 1.181928635e+00f},   {5, 127, -7.948524356e-01f},
    {6, 0, -1.439237688e-02f},   {6, 37, -1.849743277e-01f},  {6, 90, 6.415687799e-01f},
    {6, 127, -1.404270172e+00f},
};
static const double gte_cls_logit = -7.041084021e-02;

#define GOLD_TOL 1e-5

static void test_gte_cls_torch(void **state)
{
	(void)state;
	float *o = malloc((N_TOK + 1) * HID * sizeof(float));
	assert_non_null(o);
	ref_cfg c;
	full_logits(FAM, o, &c);
	double worst = 0;
	for (size_t k = 0; k < sizeof(gold_gte_cls) / sizeof(gold_gte_cls[0]); k++) {
		const gold_pt *g = &gold_gte_cls[k];
		worst = fmax(worst, fabs((double)o[g->row * HID + g->col] - (double)g->v));
	}
	double logit = fabs((double)o[N_TOK * HID] - gte_cls_logit);
	print_message("gte_new_cls: max |reference - torch| over 28 points %.3g, logit %.3g\n",
	              worst, logit);
	assert_true(worst < GOLD_TOL && logit < GOLD_TOL);
	for (int64_t i = 1; i < HID; i++) /* the logit row: one logit, then zeros */
		assert_true(o[N_TOK * HID + i] == 0.0f);
	free(o);
}

/* The last rank's classifier (or pooler bias) zeroed: a rank given no head or a wrong replica. */
static void zero_last(void *ctx, ref_set *r, uint32_t n)
{
	ref_tensor *t = find_tensor(&r[n - 1], (const char *)ctx);
	memset(t->data, 0, (size_t)t->nbytes);
}

static void test_gte_cls_caught(void **state)
{
	(void)state;
	expect_caught_ctx(FAM, 2, 1, zero_last, "classifier.weight", "rank 1's classifier zeroed");
	expect_caught_ctx(FAM, 4, 1, zero_last, "classifier.bias",
	                  "rank 3's classifier bias zeroed");
	expect_caught_ctx(FAM, 2, 1, zero_last, "pooler.dense.bias", "rank 1's pooler bias zeroed");
	expect_zeroed(FAM, 2, 1, 0, "pooler.dense.weight", "rank 0's pooler zeroed");
	expect_swapped(FAM, 2, 1, L1 "attn.qkv_proj.weight", "the ranks' q/k/v heads exchanged");
	tamper_halves gu = {L1 "mlp.gate_up_proj.weight", 1, 1, 96, HID * sizeof(float)};
	expect_halves_swapped(FAM, 2, 1, gu, "rank 1's gate and up halves exchanged");
}

/* The fixture as read: GTE's encoder (brope 2) with the head, 1 label, one more output row, the
 * checkpoint's names with new. dropped (the pooler's too), the classifier at the top. */
static void test_gte_cls_config(void **state)
{
	(void)state;
	model m = {0};
	ref_set ck = {0};
	ref_cfg c;
	wt_errbuf err = {0};
	open_model(&m, FAM);
	assert_int_equal(ref_load_ckpt(m.c, &c, &ck, &err), WT_OK);
	assert_true(c.kind == REF_BERT && c.brope == 2 && c.br_cls && !c.roberta && !c.bt_cls &&
	            c.n_labels == 1 && c.n_types == 1 && c.hid == HID && c.L == 2);
	assert_int_equal(ref_out_rows(&c, N_TOK), N_TOK + 1);
	assert_int_equal(ref_out_count(&c, N_TOK), (N_TOK + 1) * HID);
	assert_non_null(ref_set_find(&ck, "encoder.layer.1.mlp.up_gate_proj.weight"));
	assert_non_null(ref_set_find(&ck, "pooler.dense.weight"));
	assert_non_null(ref_set_find(&ck, "classifier.bias"));
	assert_null(ref_set_find(&ck, "new.pooler.dense.weight"));
	ref_set_clear(&ck);
	close_model(&m);
	/* GteNewModel: no head, no extra row */
	open_model(&m, "gte_new");
	assert_int_equal(ref_load_ckpt(m.c, &c, &ck, &err), WT_OK);
	assert_true(!c.br_cls && ref_out_rows(&c, N_TOK) == N_TOK);
	ref_set_clear(&ck);
	close_model(&m);
}

/* The labels the reference can write into one row (cfg_bert_rope.c): 1 to hidden_size. */
static void test_gte_cls_labels(void **state)
{
	(void)state;
	static const int64_t labels[] = {0, 1, HID, HID + 1};
	static const int want[] = {WT_EUNSUPPORTED, WT_OK, WT_OK, WT_EUNSUPPORTED};
	for (size_t i = 0; i < 4; i++) {
		ref_cfg c;
		wt_errbuf err = {0};
		memset(&c, 0, sizeof(c));
		c.brope = 2;
		c.br_cls = true;
		c.hid = HID;
		c.H = c.KV = 8;
		c.d = 16;
		c.n_labels = labels[i];
		assert_int_equal(ref_cfg_bert_rope(&c, "{}", 2, &err), want[i]);
		if (want[i] != WT_OK)
			assert_non_null(strstr(err.msg, "labels"));
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_gte_cls_pass),   cmocka_unit_test(test_gte_cls_torch),
	    cmocka_unit_test(test_gte_cls_caught), cmocka_unit_test(test_gte_cls_config),
	    cmocka_unit_test(test_gte_cls_labels),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
