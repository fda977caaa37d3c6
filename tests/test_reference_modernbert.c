/*
 * test_reference_modernbert.c — the reference forward pass over ModernBertModel (pre-norm
 * encoder, global / local attention, two RoPE bases): full and sharded outputs agree within
 * REF_TOL_F32 (TP 1, 2, 4, 8); the quantized layouts leave every tensor as it was (vLLM
 * quantizes no Linear of ModernBERT), so they agree as closely; the full path's last hidden
 * state equals transformers 4.57.1's (ModernBertModel, eager, float32) at 28 points; rank
 * tensors broken the way a wrong planner would break them are caught; the attention pattern
 * and the RoPE bases move the output. Fixture from $WT_BUILD/wt-mkckpt --family modernbert
 * (hid 128, H 8, I 96, V 1000, 4 layers, local_attention 4; seed printed). The sequence
 * classifier (ModernBertForSequenceClassification, fixture modernbert_cls: 3 layers, no bias,
 * local_attention 2, local_rope_theta null, mean pooling, one label): its hidden state and
 * score against transformers', the same passes and catches, the pooling read.
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
#define L1  "layers.1."

static int setup(void **state)
{
	(void)state;
	static const char *fams[] = {"modernbert", "modernbert_cls"};
	return gen_fixtures("reference_modernbert", fams, 2);
}

/* A quantized layout: it passes, and its outputs are the unquantized ones (nothing of
 * ModernBERT is quantized). */
static void expect_unquantized(const char *fam, uint32_t tp, wt_quant q)
{
	ref_result res;
	wt_errbuf err = {0};
	assert_int_equal(run(fam, tp, 1, q, 0, NULL, NULL, &res, &err), WT_OK);
	assert_true(res.pass && res.diff.max_abs_ref > 0.1);
	assert_true(res.diff.max_abs_diff <= REF_TOL_F32 * res.diff.max_abs_ref);
}

static void test_modernbert_pass(void **state)
{
	(void)state;
	expect_pass("modernbert", 1, 1, WT_QUANT_NONE, 0);
	expect_pass("modernbert", 2, 1, WT_QUANT_NONE, 0);
	expect_pass("modernbert", 4, 1, WT_QUANT_NONE, 0);
	expect_pass("modernbert", 8, 1, WT_QUANT_NONE, 0);
	expect_unquantized("modernbert", 2, WT_QUANT_INT8_CHANNEL);
	expect_unquantized("modernbert", 4, WT_QUANT_FP8_CHANNEL);
	expect_pass("modernbert_cls", 1, 1, WT_QUANT_NONE, 0);
	expect_pass("modernbert_cls", 2, 1, WT_QUANT_NONE, 0);
	expect_pass("modernbert_cls", 4, 1, WT_QUANT_NONE, 0);
	expect_unquantized("modernbert_cls", 2, WT_QUANT_INT8_CHANNEL);
	expect_unquantized("modernbert_cls", 4, WT_QUANT_FP8_CHANNEL);
}

/* (row, column, transformers 4.57.1 value), tokens g_tokens: ModernBertModel.from_pretrained
 * of the fixture (strict: no missing / unexpected / mismatched key), eager, float32,
 * last_hidden_state of input_ids */
static const gold_pt gold_modernbert[] = {
    {0, 2, -4.45844263e-01f},   {0, 83, -5.46343923e-01f},  {0, 101, -3.78393054e-01f},
    {0, 103, 4.37872857e-01f},  {1, 6, 3.40692550e-02f},    {1, 35, -1.26647973e+00f},
    {1, 123, -1.21150100e+00f}, {1, 127, 9.77589786e-01f},  {2, 0, -9.45433974e-01f},
    {2, 5, -2.38669679e-01f},   {2, 6, 7.76314378e-01f},    {2, 16, -1.01135559e-01f},
    {3, 29, -2.44351178e-02f},  {3, 36, -1.57093203e+00f},  {3, 81, -8.49295139e-01f},
    {3, 94, -4.14587148e-02f},  {4, 22, -1.13580835e+00f},  {4, 101, -1.85506105e+00f},
    {4, 108, 5.93716085e-01f},  {4, 113, -1.11555234e-01f}, {5, 61, -9.95730937e-01f},
    {5, 83, -2.78264880e-01f},  {5, 84, 1.87965024e+00f},   {5, 85, -8.56996596e-01f},
    {6, 34, -3.36853117e-01f},  {6, 45, 2.76581264e+00f},   {6, 112, -8.27964902e-01f},
    {6, 127, -2.00078082e+00f},
};

/* The full path's values at the golden points, within 1e-5 (over all 7 x 128 values 9.5e-7
 * of max |value| 2.77). */
#define GOLD_TOL 1e-5

static void test_modernbert_transformers(void **state)
{
	(void)state;
	expect_gold("modernbert", HID, GOLD_TOL, gold_modernbert,
	            sizeof(gold_modernbert) / sizeof(gold_modernbert[0]));
}

/* (row, column, value) of the sequence classifier's last hidden state and its score:
 * ModernBertForSequenceClassification.from_pretrained of modernbert_cls (strict), eager,
 * float32, on g_tokens: model.last_hidden_state and logits[0][0] */
static const gold_pt gold_cls[] = {
    {0, 78, 4.72896188e-01f},   {0, 86, 7.08474159e-01f},   {0, 114, 8.83211493e-01f},
    {0, 118, -7.23178923e-01f}, {1, 6, 6.64729998e-02f},    {1, 28, -1.14296190e-01f},
    {1, 36, 3.13727915e-01f},   {1, 38, 7.30500042e-01f},   {2, 16, -9.68061984e-02f},
    {2, 62, -1.12795067e+00f},  {2, 102, -4.17130053e-01f}, {2, 103, -7.82439709e-01f},
    {3, 35, 1.76596969e-01f},   {3, 37, 4.49053526e-01f},   {3, 43, -1.38641804e-01f},
    {3, 92, 1.12048614e+00f},   {4, 59, -1.59408283e+00f},  {4, 63, 1.16929936e+00f},
    {4, 70, 1.39122045e+00f},   {4, 73, -5.59532225e-01f},  {5, 43, -6.47523999e-01f},
    {5, 79, 1.19589722e+00f},   {5, 88, -4.94243145e-01f},  {5, 99, -8.92126858e-01f},
    {6, 20, -4.82555121e-01f},  {6, 78, -3.81089807e-01f},  {6, 105, -8.34956348e-01f},
    {6, 108, 1.33837175e+00f},
};
#define SCORE_CLS 3.29390883e-01

/* No bias anywhere, a window of 1, the null local base (the global one), mean pooling: the
 * hidden state within 4.8e-7 of transformers' (largest 2.77), the score within 1e-7. */
static void test_modernbert_cls_transformers(void **state)
{
	(void)state;
	float *o = malloc((N_TOK + 1) * HID * sizeof(float));
	assert_non_null(o);
	ref_cfg c;
	full_logits("modernbert_cls", o, &c);
	assert_true(c.mb_cls && c.mb_pool_mean && !c.mb_cls_bias && !c.mb_norm_bias &&
	            c.mb_theta_local == c.mb_theta && c.n_labels == 1);
	double worst = 0;
	for (size_t k = 0; k < sizeof(gold_cls) / sizeof(gold_cls[0]); k++)
		worst = fmax(worst, fabs((double)o[gold_cls[k].row * HID + gold_cls[k].col] -
		                         (double)gold_cls[k].v));
	double score = fabs((double)o[N_TOK * HID] - SCORE_CLS);
	print_message("modernbert_cls: max |reference - transformers| over 28 points %.3g, score "
	              "%.3g\n",
	              worst, score);
	assert_true(worst < GOLD_TOL && score < GOLD_TOL);
	for (int64_t i = 1; i < HID; i++) /* the score row: one logit, then zeros */
		assert_true(o[N_TOK * HID + i] == 0.0f);
	free(o);
}

static void tamper_head_norm(void *ctx, ref_set *r, uint32_t n)
{
	(void)ctx; /* the last rank's head.norm weight zeroed (a wrong replica) */
	ref_tensor *t = ref_set_find(&r[n - 1], "head.norm.weight");
	assert_non_null(t);
	memset(t->data, 0, HID * sizeof(float));
}

static void tamper_wi_rank(void *ctx, ref_set *r, uint32_t n)
{
	(void)ctx; /* the last rank's Wi (whole on every rank) with its input / gate halves
	            * exchanged: a wrong replica */
	(void)n;
	tamper_halves h = {L1 "mlp.Wi.weight", n - 1, 1, 96, HID * sizeof(float)};
	tamper_swap_halves(&h, r, n);
}

static void test_modernbert_caught(void **state)
{
	(void)state;
	expect_swapped("modernbert", 2, 1, L1 "attn.Wqkv.weight",
	               "the ranks' Wqkv heads exchanged");
	expect_swapped("modernbert", 2, 1, L1 "attn.Wqkv.bias", "Wqkv bias slices exchanged");
	expect_swapped("modernbert", 2, 1, L1 "attn.Wo.weight", "attn.Wo columns exchanged");
	expect_swapped("modernbert", 2, 1, "layers.0.mlp.Wo.weight", "mlp.Wo columns exchanged");
	expect_halves_swapped(
	    "modernbert", 1, 1,
	    (tamper_halves){L1 "attn.Wqkv.weight", 0, 1, HID, HID * sizeof(float)},
	    "Wqkv's q and k rows exchanged");
	expect_caught("modernbert", 4, 1, tamper_wi_rank, "one rank's Wi halves exchanged");
	expect_swapped("modernbert_cls", 2, 1, "model." L1 "attn.Wqkv.weight",
	               "the classifier's Wqkv heads exchanged");
	expect_caught("modernbert_cls", 2, 1, tamper_head_norm, "one rank's head.norm zeroed");
}

/* The attention pattern and the RoPE bases are read and move the output: every layer
 * global, the two bases exchanged. */
static void test_modernbert_switches(void **state)
{
	(void)state;
	model m = {0};
	ref_set ck = {0};
	ref_cfg c;
	wt_errbuf err = {0};
	open_model(&m, "modernbert");
	assert_int_equal(ref_load_ckpt(m.c, &c, &ck, &err), WT_OK);
	assert_true(c.modernbert && !c.roberta && c.kind == REF_BERT && c.mb_every == 3 &&
	            c.mb_window == 2 && c.mb_attn_bias && c.mb_mlp_bias && c.mb_norm_bias &&
	            c.H == 8 && c.d == 16 && c.I == 96 && c.L == 4);
	assert_float_equal(c.mb_theta, 160000.0, 0.0);
	assert_float_equal(c.mb_theta_local, 10000.0, 0.0);
	assert_float_equal(c.mb_eps, 1e-5, 0.0);
	assert_int_equal(ref_out_rows(&c, N_TOK), N_TOK);
	size_t n = N_TOK * HID;
	float *a = malloc(n * sizeof(float)), *b = malloc(n * sizeof(float));
	assert_true(a != NULL && b != NULL);
	logits_with(&c, &ck, a);
	ref_cfg g = c;
	g.mb_every = 1;
	logits_with(&g, &ck, b);
	expect_moved(a, b, n, 1e-3, "every layer global");
	g = c;
	g.mb_theta = c.mb_theta_local;
	g.mb_theta_local = c.mb_theta;
	logits_with(&g, &ck, b);
	expect_moved(a, b, n, 1e-5, "the RoPE bases exchanged");
	ref_set_clear(&ck);
	close_model(&m);
	/* the classifier: token 0's state instead of the mean moves the score */
	open_model(&m, "modernbert_cls");
	assert_int_equal(ref_load_ckpt(m.c, &c, &ck, &err), WT_OK);
	float *sa = malloc((N_TOK + 1) * HID * sizeof(float)),
	      *sb = malloc((N_TOK + 1) * HID * sizeof(float));
	assert_true(sa != NULL && sb != NULL);
	logits_with(&c, &ck, sa);
	g = c;
	g.mb_pool_mean = false;
	logits_with(&g, &ck, sb);
	print_message("cls pooling for mean: score %.4g -> %.4g\n", sa[N_TOK * HID],
	              sb[N_TOK * HID]);
	assert_true(fabs(sa[N_TOK * HID] - sb[N_TOK * HID]) > 1e-3);
	free(sa);
	free(sb);
	free(a);
	free(b);
	ref_set_clear(&ck);
	close_model(&m);
}

#define MB                                                                                         \
	"{\"architectures\": [\"ModernBertModel\"], \"model_type\": \"modernbert\", "              \
	"\"hidden_size\": 64, \"num_attention_heads\": 4, \"num_hidden_layers\": 2, "              \
	"\"intermediate_size\": 96, \"vocab_size\": 100"

/* ModernBertConfig's defaults; local_rope_theta null is the global base. */
static void test_modernbert_config(void **state)
{
	(void)state;
	ref_cfg c;
	wt_errbuf err = {0};
	static const char plain[] = MB "}";
	assert_int_equal(ref_cfg_parse_json(plain, strlen(plain), &c, &err), WT_OK);
	assert_true(c.modernbert && c.mb_every == 3 && c.mb_window == 64 && !c.mb_attn_bias &&
	            !c.mb_mlp_bias && !c.mb_norm_bias && c.d == 16);
	assert_float_equal(c.mb_theta, 160000.0, 0.0);
	assert_float_equal(c.mb_theta_local, 10000.0, 0.0);
	assert_float_equal(c.mb_eps, 1e-5, 0.0);
	static const char nul[] = MB ", \"local_rope_theta\": null, \"global_rope_theta\": 5e4}";
	assert_int_equal(ref_cfg_parse_json(nul, strlen(nul), &c, &err), WT_OK);
	assert_float_equal(c.mb_theta_local, 5e4, 0.0);
	expect_cfg(MB ", \"global_attn_every_n_layers\": 0}", WT_EUNSUPPORTED,
	           "global_attn_every_n_layers");
	expect_cfg(MB ", \"local_rope_theta\": 1e-300}", WT_EUNSUPPORTED, "local_rope_theta");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_modernbert_pass),
	    cmocka_unit_test(test_modernbert_transformers),
	    cmocka_unit_test(test_modernbert_cls_transformers),
	    cmocka_unit_test(test_modernbert_caught),
	    cmocka_unit_test(test_modernbert_switches),
	    cmocka_unit_test(test_modernbert_config),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
