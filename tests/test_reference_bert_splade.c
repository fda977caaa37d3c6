/*
 * test_reference_bert_splade.c — the reference forward pass over BertSpladeSparseEmbeddingModel
 * (fixture bert_splade: BERT's encoder under bert., the masked-LM head cls.predictions.* with an
 * untied decoder), as vLLM's bert.py runs it: BertModel, then BertMLMHead on every token
 * (decoder(LayerNorm(gelu(dense x)))) and SPLADESparsePooler (log1p(relu(logits)), max over the
 * tokens without the first when it is cls_token_id and the last when it is sep_token_id). The
 * output is [T + 1, V]: the logits, then the sparse embedding. Full and sharded outputs agree
 * (TP 1, 2, 4; int8-channel TP 2, fp8-channel TP 4 with the head unquantized); the full path
 * equals transformers 4.57.1's BertForMaskedLM and the pooling at pinned points; the CLS / SEP
 * switches move the pooled row; broken rank tensors are caught. Fixture from
 * $WT_BUILD/wt-mkckpt --family bert_splade (hid 128, H 4, I 512, V 1000, 2 layers; seed printed).
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

#define FAM "bert_splade"
#define VOC 1000
#define OUT ((N_TOK + 1) * VOC)

static int setup(void **state)
{
	(void)state;
	static const char *fams[] = {FAM};
	return gen_fixtures("reference_bert_splade", fams, 1);
}

static void test_splade_pass(void **state)
{
	(void)state;
	expect_pass_tp(FAM, false);
}

/* (row, column, value), tokens g_tokens: rows 0..6 transformers 4.57.1's
 * BertForMaskedLM(config, tie_word_embeddings false, eager) logits, its state dict loaded strict
 * from the fixture (cls.predictions.bias given the decoder bias vLLM loads, which
 * BertLMPredictionHead ties to it); row 7 the SPLADE pooling of them in torch (log1p(relu), max
 * over tokens 1..5: token 0 is cls_token_id 1, token 6 sep_token_id 640). Column 28's max is
 * token 0's and column 32's token 6's (both left out), column 13 has no positive logit. Largest
 * difference over all 7 x 1000 logits 3.9e-7 (largest 0.94), over the pooled row 2.4e-7. */
static const gold_pt gold_splade[] = {
    {0, 0, -2.386901528e-01f},
    {0, 333, 6.486542523e-02f},
    {0, 500, -4.869571924e-01f},
    {0, 999, -1.767426431e-01f},
    {1, 0, 3.463039398e-01f},
    {1, 333, 1.098949183e-02f},
    {1, 500, -2.676839530e-01f},
    {1, 999, 1.046295911e-01f},
    {2, 0, 4.127316475e-01f},
    {2, 333, 2.415087223e-01f},
    {2, 500, -2.455701530e-01f},
    {2, 999, 2.265784740e-01f},
    {3, 0, 5.234751105e-01f},
    {3, 333, 4.417515174e-02f},
    {3, 500, -1.524371356e-01f},
    {3, 999, 2.416723073e-01f},
    {4, 0, -7.677480578e-02f},
    {4, 333, 3.950872645e-02f},
    {4, 500, -3.284184933e-01f},
    {4, 999, -5.921525508e-02f},
    {5, 0, 2.478591353e-01f},
    {5, 333, 7.235282660e-02f},
    {5, 500, 2.662838399e-01f},
    {5, 999, 3.198253214e-01f},
    {6, 0, 4.376804531e-01f},
    {6, 333, 6.967270374e-02f},
    {6, 500, -4.602082074e-03f},
    {6, 999, 4.522833228e-01f},
    {7, 0, 4.209939837e-01f},
    {7, 333, 2.163273543e-01f},
    {7, 500, 2.360865027e-01f},
    {7, 999, 2.774994075e-01f},
    {7, 28, 3.825692236e-01f},
    {7, 32, 2.697332799e-01f},
    {7, 13, 0.0f},
};

#define GOLD_TOL 1e-5

static void test_splade_transformers(void **state)
{
	(void)state;
	float *o = malloc(OUT * sizeof(float));
	assert_non_null(o);
	ref_cfg c;
	full_logits(FAM, o, &c);
	double worst = 0;
	for (size_t k = 0; k < sizeof(gold_splade) / sizeof(gold_splade[0]); k++) {
		const gold_pt *g = &gold_splade[k];
		worst = fmax(worst, fabs((double)o[g->row * VOC + g->col] - (double)g->v));
	}
	print_message("bert_splade: max |reference - transformers| over %zu points %.3g\n",
	              sizeof(gold_splade) / sizeof(gold_splade[0]), worst);
	assert_true(worst < GOLD_TOL);
	for (int64_t v = 0; v < VOC; v++) /* the pooled row is log1p of a ReLU: never negative */
		assert_true(o[N_TOK * VOC + v] >= 0.0f);
	free(o);
}

/* The keys the reference reads move the pooled row: no cls_token_id (token 0 pooled: column
 * 28's max is token 0's), no sep_token_id (column 32's is token 6's). */
static void test_splade_switches(void **state)
{
	(void)state;
	model m = {0};
	ref_set ck = {0};
	ref_cfg c;
	wt_errbuf err = {0};
	float *a = malloc(OUT * sizeof(float)), *b = malloc(OUT * sizeof(float));
	assert_true(a != NULL && b != NULL);
	open_model(&m, FAM);
	assert_int_equal(ref_load_ckpt(m.c, &c, &ck, &err), WT_OK);
	assert_true(c.bt_splade && !c.bt_cls && !c.bt_tok && !c.roberta && c.sp_cls == 1 &&
	            c.sp_sep == 640 && c.V == VOC && c.hid == 128);
	assert_int_equal(ref_out_rows(&c, N_TOK), N_TOK + 1);
	assert_int_equal(ref_out_count(&c, N_TOK), OUT);
	assert_non_null(ref_set_find(&ck, "cls.predictions.decoder.weight"));
	assert_null(ref_set_find(&ck, "pooler.dense.weight"));
	logits_with(&c, &ck, a);
	c.sp_cls = -1;
	logits_with(&c, &ck, b);
	print_message("no cls_token_id: column 28 %.4f -> %.4f\n", a[N_TOK * VOC + 28],
	              b[N_TOK * VOC + 28]);
	assert_true(fabsf(b[N_TOK * VOC + 28] - log1pf(6.091e-1f)) < 1e-3f);
	assert_true(memcmp(a, b, N_TOK * VOC * sizeof(float)) == 0); /* the logits alike */
	c.sp_cls = 1;
	c.sp_sep = -1;
	logits_with(&c, &ck, b);
	assert_true(fabsf(b[N_TOK * VOC + 32] - log1pf(4.384e-1f)) < 1e-3f);
	expect_moved(a + N_TOK * VOC, b + N_TOK * VOC, VOC, 1e-4, "sep_token_id left out");
	ref_set_clear(&ck);
	close_model(&m);
	free(a);
	free(b);
}

/* The last rank's copy of one head tensor zeroed (a rank given a wrong replica). */
static void zero_last(void *ctx, ref_set *r, uint32_t n)
{
	ref_tensor *t = find_tensor(&r[n - 1], (const char *)ctx);
	memset(t->data, 0, (size_t)t->nbytes);
}

static void test_splade_caught(void **state)
{
	(void)state;
	expect_caught_ctx(FAM, 2, 1, zero_last, "cls.predictions.decoder.weight",
	                  "rank 1's decoder zeroed");
	expect_caught_ctx(FAM, 4, 1, zero_last, "cls.predictions.decoder.bias",
	                  "rank 3's decoder bias zeroed");
	expect_caught_ctx(FAM, 2, 1, zero_last, "cls.predictions.transform.LayerNorm.bias",
	                  "rank 1's transform LayerNorm bias zeroed");
	expect_swapped(FAM, 2, 1, "encoder.layer.1.attention.self.qkv_proj.weight",
	               "the ranks' q/k/v heads exchanged");
}

/* The token ids as read (cfg.c through splade.c): absent or null none, else refused unless a
 * whole number from 0. */
static void test_splade_keys(void **state)
{
	(void)state;
	static const struct {
		const char *json;
		int rv;
		int64_t cls, sep;
	} k[] = {
	    {"{}", WT_OK, -1, -1},
	    {"{\"cls_token_id\": 101, \"sep_token_id\": null}", WT_OK, 101, -1},
	    {"{\"sep_token_id\": 102}", WT_OK, -1, 102},
	    {"{\"cls_token_id\": -1}", WT_ECORRUPT, 0, 0},
	    {"{\"sep_token_id\": \"[SEP]\"}", WT_ECORRUPT, 0, 0},
	};
	for (size_t i = 0; i < sizeof(k) / sizeof(k[0]); i++) {
		ref_cfg c;
		wt_errbuf err = {0};
		memset(&c, 0, sizeof(c));
		assert_int_equal(ref_cfg_splade(&c, k[i].json, strlen(k[i].json), &err), k[i].rv);
		if (k[i].rv == WT_OK)
			assert_true(c.sp_cls == k[i].cls && c.sp_sep == k[i].sep);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_splade_pass),     cmocka_unit_test(test_splade_transformers),
	    cmocka_unit_test(test_splade_switches), cmocka_unit_test(test_splade_caught),
	    cmocka_unit_test(test_splade_keys),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
