/*
 * test_reference_roberta.c — the reference forward pass over RobertaModel and XLMRobertaModel
 * (reference/bert.c: BERT's post-norm encoder, RoBERTa's positions pad_token_id + 1 + the count
 * of non-pad tokens so far, a pad token at pad_token_id; no pooler: the output is the last hidden
 * state, [7, 128]). Full and sharded outputs agree within REF_TOL_F32 (TP 1, 2, 4) or the
 * quantized layouts' budgets; the full path's last hidden state equals transformers 4.57.1's
 * (eager, float32) at 28 points per family, g_tokens starting with the pad token 1; rank tensors
 * broken the way a wrong planner would break them are caught. The fixtures come from
 * $WT_BUILD/wt-mkckpt --family roberta (hid 128, H 4, I 512, V 1000, 2 layers) and
 * xlm_roberta (hid 128, H 8, I 256, V 1200, 3 layers), both 66 positions, 1 token type,
 * pad_token_id 1, layer_norm_eps 1e-5. xlm_roberta_cls (XLMRobertaForSequenceClassification: the
 * same encoder under roberta., the head classifier.dense / out_proj, 1 label): the output's last
 * row holds the score, pinned to transformers' logits too.
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
#include "loader/loader_st.h"
#include "tests/util/testutil.h"
#include "tests/test_reference_util.h"

#define HID 128
#define L1  "encoder.layer.1."

/* roberta_mlm: the roberta fixture as RobertaForMaskedLM saves it (FacebookAI/roberta-base's
 * layout): every encoder tensor under roberta., no pooler, the MLM head lm_head.dense /
 * layer_norm / bias (the decoder tied, not saved), architectures RobertaForMaskedLM. */
static int write_mlm(void)
{
	model m = {0};
	ref_set ck = {0};
	ref_cfg c;
	wt_errbuf err = {0};
	open_model(&m, "roberta");
	int rv = ref_load_ckpt(m.c, &c, &ck, &err);
	close_model(&m);
	static const struct {
		const char *name;
		int64_t n;
	} head[] = {{"lm_head.dense.weight", HID * HID},
	            {"lm_head.dense.bias", HID},
	            {"lm_head.layer_norm.weight", HID},
	            {"lm_head.layer_norm.bias", HID},
	            {"lm_head.bias", 1000}};
	enum { NH = sizeof(head) / sizeof(head[0]) };
	st_desc *d = calloc(ck.n + NH, sizeof(*d));
	const void **data = calloc(ck.n + NH, sizeof(*data));
	char **names = calloc(ck.n, sizeof(*names));
	float *hv = malloc((HID * HID) * sizeof(float));
	assert_true(d != NULL && data != NULL && names != NULL && hv != NULL);
	size_t n = 0;
	for (size_t i = 0; rv == WT_OK && i < ck.n; i++) {
		const ref_tensor *t = &ck.t[i];
		if (strncmp(t->name, "pooler.", 7) == 0)
			continue;
		size_t nl = strlen(t->name) + 9;
		names[i] = malloc(nl);
		assert_non_null(names[i]);
		snprintf(names[i], nl, "roberta.%s", t->name);
		d[n] = (st_desc){names[i], t->dtype, t->ndim, {0}};
		memcpy(d[n].shape, t->shape, sizeof(t->shape));
		data[n++] = t->data;
	}
	for (int64_t k = 0; k < HID * HID; k++)
		hv[k] = 0.05f * sinf(0.37f * (float)k);
	for (size_t k = 0; k < NH; k++) { /* dense.weight [HID, HID], the rest 1-D */
		d[n] = (st_desc){head[k].name, WT_F32, k == 0 ? 2 : 1, {0}};
		d[n].shape[0] = k == 0 ? HID : head[k].n;
		d[n].shape[1] = k == 0 ? HID : 0;
		data[n++] = hv;
	}
	char *src = tu_path(g_root, "roberta"), *dir = tu_path(g_root, "roberta_mlm");
	char *cpath = tu_path(src, "config.json"), *out = tu_path(dir, "model.safetensors");
	size_t len = 0;
	char *json = tu_read_file(cpath, &len);
	if (rv == WT_OK)
		rv = json != NULL && tu_write_file(dir, "config.json", json, len) == 0 ? WT_OK : -1;
	if (rv == WT_OK)
		rv = st_write_path(out, d, data, n, NULL, 0, &err);
	if (rv == WT_OK)
		edit_config(dir, "\"RobertaModel\"", "\"RobertaForMaskedLM\"");
	for (size_t i = 0; i < ck.n; i++)
		free(names[i]);
	free(names);
	free(d);
	free(data);
	free(hv);
	free(json);
	free(src);
	free(dir);
	free(cpath);
	free(out);
	ref_set_clear(&ck);
	return rv == WT_OK ? 0 : -1;
}

static int setup(void **state)
{
	(void)state;
	static const char *fams[] = {"roberta", "xlm_roberta", "xlm_roberta_cls"};
	int rv = gen_fixtures("reference_roberta", fams, 3);
	return rv == 0 ? write_mlm() : rv;
}

static void test_roberta_pass(void **state)
{
	(void)state;
	static const char *const fams[] = {"roberta", "xlm_roberta", "xlm_roberta_cls",
	                                   "roberta_mlm"};
	for (size_t i = 0; i < 4; i++) {
		expect_pass(fams[i], 1, 1, WT_QUANT_NONE, 0);
		expect_pass(fams[i], 2, 1, WT_QUANT_NONE, 0);
		expect_pass(fams[i], 4, 1, WT_QUANT_NONE, 0);
		expect_pass(fams[i], 2, 1, WT_QUANT_INT8_CHANNEL, 0);
		expect_pass(fams[i], 4, 1, WT_QUANT_FP8_CHANNEL, 0);
	}
}

/* (row, column, transformers 4.57.1's last_hidden_state), tokens g_tokens */
static const gold_pt gold_roberta[] = {
    {0, 12, 1.49822056e+00f},   {0, 38, 1.40575624e+00f},  {0, 82, -6.00666046e-01f},
    {0, 101, -1.03903973e+00f}, {1, 14, 5.38391232e-01f},  {1, 18, 6.07008874e-01f},
    {1, 24, -5.62199771e-01f},  {1, 93, 9.54599619e-01f},  {2, 9, 6.94455385e-01f},
    {2, 22, -2.20457697e+00f},  {2, 54, -1.28210112e-01f}, {2, 111, 5.41424751e-01f},
    {3, 17, -2.65400678e-01f},  {3, 23, -7.90423691e-01f}, {3, 61, 5.61281681e-01f},
    {3, 107, 1.57412124e+00f},  {4, 15, 8.28551054e-02f},  {4, 31, 7.57639408e-01f},
    {4, 57, 3.53285000e-02f},   {4, 108, 5.52420437e-01f}, {5, 12, 2.56125003e-01f},
    {5, 15, 8.83488894e-01f},   {5, 56, -3.00716341e-01f}, {5, 101, 4.61825788e-01f},
    {6, 11, -2.32904196e-01f},  {6, 34, 3.78878593e-01f},  {6, 74, -3.20737332e-01f},
    {6, 107, 8.29015255e-01f},
};
static const gold_pt gold_xlm_roberta[] = {
    {0, 12, 1.42614400e+00f},   {0, 38, 1.43389070e+00f},  {0, 82, -4.91213739e-01f},
    {0, 101, -9.88297045e-01f}, {1, 14, 3.96352649e-01f},  {1, 18, 4.67516392e-01f},
    {1, 24, -3.02214801e-01f},  {1, 93, 8.88462245e-01f},  {2, 9, 8.15189362e-01f},
    {2, 22, -2.31768751e+00f},  {2, 54, -1.24367617e-01f}, {2, 111, 5.20096660e-01f},
    {3, 17, -5.24841964e-01f},  {3, 23, -8.59691620e-01f}, {3, 61, 5.02161026e-01f},
    {3, 107, 1.60377657e+00f},  {4, 15, 2.04488561e-01f},  {4, 31, 8.96597743e-01f},
    {4, 57, -3.08916084e-02f},  {4, 108, 5.77407241e-01f}, {5, 12, 1.43297523e-01f},
    {5, 15, 8.53623688e-01f},   {5, 56, -1.84439644e-01f}, {5, 101, 5.39905906e-01f},
    {6, 11, -3.41697752e-01f},  {6, 34, 4.32897329e-01f},  {6, 74, -1.71395689e-01f},
    {6, 107, 9.72546220e-01f},
};

/* The full path's last hidden state at the golden points, within 1e-5 (over all 7 x 128 values
 * 9.5e-7 of max |value| 3.42 (RobertaModel) and 9.5e-7 of 3.26 (XLMRobertaModel):
 * from_pretrained of the fixture, strict, eager, float32, on input_ids alone) */
#define GOLD_TOL 1e-5

static void test_roberta_transformers(void **state)
{
	(void)state;
	expect_gold("roberta", HID, GOLD_TOL, gold_roberta,
	            sizeof(gold_roberta) / sizeof(gold_roberta[0]));
	expect_gold("xlm_roberta", HID, GOLD_TOL, gold_xlm_roberta,
	            sizeof(gold_xlm_roberta) / sizeof(gold_xlm_roberta[0]));
	/* RobertaForMaskedLM (vLLM's RobertaEmbeddingModel: the encoder's last hidden state, the
	 * MLM head unread): roberta's output bit for bit, so its golden points too */
	expect_gold("roberta_mlm", HID, GOLD_TOL, gold_roberta,
	            sizeof(gold_roberta) / sizeof(gold_roberta[0]));
	float *a = malloc(N_TOK * HID * sizeof(float)), *b = malloc(N_TOK * HID * sizeof(float));
	assert_true(a != NULL && b != NULL);
	ref_cfg ca, cb;
	full_logits("roberta", a, &ca);
	full_logits("roberta_mlm", b, &cb);
	assert_memory_equal(a, b, N_TOK * HID * sizeof(float));
	free(a);
	free(b);
	/* the reranker: XLMRobertaForSequenceClassification's last hidden state (its encoder holds
	 * xlm_roberta's bytes under roberta.) and its logit, row 7 (measured 1.5e-8; 1.5e-8 with
	 * pads inside the sequence too) */
	float *o = malloc((N_TOK + 1) * HID * sizeof(float));
	assert_non_null(o);
	ref_cfg c;
	full_logits("xlm_roberta_cls", o, &c);
	double worst = 0;
	for (size_t k = 0; k < sizeof(gold_xlm_roberta) / sizeof(gold_xlm_roberta[0]); k++) {
		const gold_pt *g = &gold_xlm_roberta[k];
		worst = fmax(worst, fabs((double)o[g->row * HID + g->col] - (double)g->v));
	}
	double score = fabs((double)o[N_TOK * HID] - -9.72043499e-02);
	print_message("xlm_roberta_cls: max |reference - transformers| over 28 points %.3g, "
	              "score %.3g\n",
	              worst, score);
	assert_true(worst < GOLD_TOL && score < GOLD_TOL);
	for (int64_t i = 1; i < HID; i++) /* the score row: one logit, then zeros */
		assert_true(o[N_TOK * HID + i] == 0.0f);
	free(o);
}

/* BERT's positions (0, 1, ..., pad_id -1 makes every token count from 0) move the output. */
static void test_roberta_positions(void **state)
{
	(void)state;
	model m = {0};
	ref_set ck = {0};
	ref_cfg c;
	wt_errbuf err = {0};
	open_model(&m, "roberta");
	assert_int_equal(ref_load_ckpt(m.c, &c, &ck, &err), WT_OK);
	float *a = malloc(N_TOK * HID * sizeof(float)), *b = malloc(N_TOK * HID * sizeof(float));
	assert_true(a != NULL && b != NULL);
	logits_with(&c, &ck, a);
	c.pad_id = -1;
	logits_with(&c, &ck, b);
	expect_moved(a, b, N_TOK * HID, 1e-3, "positions from 0 (BERT's)");
	free(a);
	free(b);
	ref_set_clear(&ck);
	close_model(&m);
}

static void tamper_pos_row(void *ctx, ref_set *r, uint32_t n)
{
	(void)ctx; /* the last rank's position table shifted by one row (BERT's positions) */
	ref_tensor *t = ref_set_find(&r[n - 1], "embeddings.position_embeddings.weight");
	assert_non_null(t);
	memmove(t->data, (uint8_t *)t->data + HID * sizeof(float), 65 * HID * sizeof(float));
}

static void tamper_cls_head(void *ctx, ref_set *r, uint32_t n)
{
	(void)ctx; /* the last rank's classifier.dense bias zeroed (a wrong replica) */
	ref_tensor *t = ref_set_find(&r[n - 1], "classifier.dense.bias");
	assert_non_null(t);
	memset(t->data, 0, HID * sizeof(float));
}

static void test_roberta_caught(void **state)
{
	(void)state;
	expect_swapped("roberta", 2, 1, L1 "attention.self.qkv_proj.weight",
	               "qkv exchanged between ranks");
	expect_swapped("xlm_roberta", 2, 1, L1 "attention.self.qkv_proj.weight",
	               "qkv exchanged between ranks");
	expect_swapped("roberta", 2, 1, L1 "output.dense.weight", "output.dense columns exchanged");
	expect_swapped("roberta_mlm", 2, 1, L1 "attention.self.qkv_proj.weight",
	               "qkv exchanged between ranks");
	expect_zeroed("roberta_mlm", 4, 1, 3, L1 "output.dense.bias",
	              "rank 3's output.dense bias zeroed");
	expect_swapped("roberta", 2, 1, L1 "intermediate.dense.bias",
	               "intermediate biases exchanged");
	expect_caught("xlm_roberta", 2, 1, tamper_pos_row, "position table shifted");
	expect_caught("xlm_roberta_cls", 2, 1, tamper_cls_head, "classifier replica wrong");
	expect_swapped("xlm_roberta_cls", 2, 1, L1 "attention.self.qkv_proj.weight",
	               "qkv exchanged between ranks");
}

/* The fixtures as read: RoBERTa's switch, pad_token_id 1, 66 positions, 1 token type, eps
 * 1e-5; the pooler in the checkpoint, not used. */
static void test_roberta_fixture_cfg(void **state)
{
	(void)state;
	static const char *const fams[] = {"roberta", "xlm_roberta"};
	for (size_t i = 0; i < 2; i++) {
		model m = {0};
		ref_set ck = {0};
		ref_cfg c;
		wt_errbuf err = {0};
		open_model(&m, fams[i]);
		assert_int_equal(ref_load_ckpt(m.c, &c, &ck, &err), WT_OK);
		assert_true(c.kind == REF_BERT && c.roberta && c.pad_id == 1 && c.max_pos == 66 &&
		            c.n_types == 1 && fabs(c.eps - 1e-5) < 1e-12 && c.hid == HID);
		assert_true(i == 0 ? c.H == 4 && c.I == 512 && c.V == 1000 && c.L == 2
		                   : c.H == 8 && c.I == 256 && c.V == 1200 && c.L == 3);
		assert_int_equal(ref_out_rows(&c, N_TOK), N_TOK);
		assert_non_null(find_tensor(&ck, "pooler.dense.weight"));
		ref_set_clear(&ck);
		close_model(&m);
	}
	/* the reranker: the encoder read under RobertaModel's names, one label, a score row */
	model m = {0};
	ref_set ck = {0};
	ref_cfg c;
	wt_errbuf err = {0};
	open_model(&m, "xlm_roberta_cls");
	assert_int_equal(ref_load_ckpt(m.c, &c, &ck, &err), WT_OK);
	assert_true(c.roberta && c.rb_cls && c.n_labels == 1 && c.H == 8 && c.L == 3);
	assert_int_equal(ref_out_rows(&c, N_TOK), N_TOK + 1);
	assert_non_null(find_tensor(&ck, "encoder.layer.2.output.dense.weight"));
	assert_non_null(find_tensor(&ck, "classifier.out_proj.weight"));
	ref_set_clear(&ck);
	close_model(&m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_roberta_pass),        cmocka_unit_test(test_roberta_transformers),
	    cmocka_unit_test(test_roberta_positions),   cmocka_unit_test(test_roberta_caught),
	    cmocka_unit_test(test_roberta_fixture_cfg),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
