/*
 * test_reference_llama_bidir_cls.c — the reference forward pass over
 * LlamaBidirectionalForSequenceClassification (fixture llama_bidir_cls, model_type
 * llama_bidirec, as nvidia/llama-nemotron-rerank-1b-v2): Llama's decoder under model., no
 * lm_head, attention WITHOUT the causal mask (vLLM's LlamaBidirectionalConfig sets is_causal
 * false), then score.weight on every token's final hidden state (as the other decoder
 * classifiers: vLLM pools first, MEAN for pooling avg, and the score is linear, so the pooled
 * score is the mean of these). Full and sharded scores agree within REF_TOL_F32 (TP 1, 2, 4)
 * or the quantized layouts' budgets; the full path's scores equal transformers 4.57.1's
 * (LlamaForSequenceClassification's decoder and score, strict load, eager, float32, an
 * all-zero additive mask built by hand so every query sees every key) at all 7 tokens; the
 * causal pass is not what is served; rank tensors broken the way a wrong planner would break
 * them are caught. Fixture from $WT_BUILD/wt-mkckpt --family llama_bidir_cls (hid 128, H 4,
 * KV 2, I 192, V 1000, 2 layers, 1 label; seed printed).
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

#define FAM "llama_bidir_cls"
#define L1  "model.layers.1."

static int setup(void **state)
{
	(void)state;
	static const char *fams[] = {FAM};
	return gen_fixtures("reference_llama_bidir_cls", fams, 1);
}

static void test_bidir_cls_pass(void **state)
{
	(void)state;
	expect_pass_tp(FAM, false);
}

/* (token, label, transformers 4.57.1 score), tokens g_tokens: score(last_hidden_state) of
 * LlamaForSequenceClassification built from the fixture's config (architectures / model_type /
 * pooling / temperature dropped), load_state_dict strict, eager, float32, the decoder run with
 * an all-zero additive [1, 1, 7, 7] mask (bidirectional). Their mean -8.154 is the score of
 * the mean-pooled hidden state (vLLM's MEAN pooling); the causal decoder moves token 0's score
 * by 22.2. */
static const gold_pt gold_bidir_cls[] = {
    {0, 0, -6.542308331e+00f}, {1, 0, -4.752404213e+00f}, {2, 0, -8.227136612e+00f},
    {3, 0, -9.537214279e+00f}, {4, 0, -9.015615463e+00f}, {5, 0, -9.770414352e+00f},
    {6, 0, -9.230593681e+00f},
};

#define GOLD_TOL 3e-5 /* measured 7.6e-6 on scores up to 9.8 (7.8e-7 of them) */

static void test_bidir_cls_transformers(void **state)
{
	(void)state;
	expect_gold(FAM, 1, GOLD_TOL, gold_bidir_cls,
	            sizeof(gold_bidir_cls) / sizeof(gold_bidir_cls[0]));
}

/* The bidirectional switch is read and moves the scores: the same weights under the causal
 * mask give other scores, token 0's among them (a causal token 0 sees itself alone). */
static void test_bidir_cls_not_causal(void **state)
{
	(void)state;
	model m = {0};
	ref_set ck = {0};
	ref_cfg c;
	wt_errbuf err = {0};
	float bi[N_TOK], ca[N_TOK];
	open_model(&m, FAM);
	assert_int_equal(ref_load_ckpt(m.c, &c, &ck, &err), WT_OK);
	assert_true(c.bidir);
	logits_with(&c, &ck, bi);
	c.bidir = false;
	logits_with(&c, &ck, ca);
	expect_moved(bi, ca, N_TOK, 1e-3, "causal mask in place of the bidirectional one");
	expect_moved(bi, ca, 1, 1e-3, "token 0's score under the causal mask");
	ref_set_clear(&ck);
	close_model(&m);
}

/* Rank 1's score.weight zeroed (a rank given no head, or the wrong tensor). */
static void zero_score(void *ctx, ref_set *r, uint32_t n)
{
	(void)ctx;
	assert_true(n >= 2);
	ref_tensor *t = find_tensor(&r[1], "score.weight");
	memset(t->data, 0, (size_t)t->nbytes);
}

static void test_bidir_cls_caught(void **state)
{
	(void)state;
	expect_swapped(FAM, 2, 1, L1 "self_attn.qkv_proj.weight",
	               "the ranks' q/k/v heads exchanged");
	expect_swapped(FAM, 2, 1, L1 "self_attn.o_proj.weight", "o_proj columns exchanged");
	expect_swapped(FAM, 2, 1, L1 "mlp.gate_up_proj.weight", "gate_up rows exchanged");
	expect_swapped(FAM, 2, 1, L1 "mlp.down_proj.weight", "down_proj columns exchanged");
	expect_zeroed(FAM, 2, 1, 0, "model.layers.0.self_attn.qkv_proj.weight",
	              "rank 0's layer-0 q/k/v zeroed");
	expect_caught(FAM, 2, 1, zero_score, "one rank's score.weight zeroed");
}

/* The fixture is read as a bidirectional Llama classifier: no biases, one label, no lm_head. */
static void test_bidir_cls_config(void **state)
{
	(void)state;
	model m = {0};
	ref_set ck = {0};
	ref_cfg c;
	wt_errbuf err = {0};
	open_model(&m, FAM);
	assert_int_equal(ref_load_ckpt(m.c, &c, &ck, &err), WT_OK);
	assert_true(c.dec_cls && c.bidir && !c.dec_emb && !c.qk_norm && c.kind == REF_DENSE &&
	            c.n_labels == 1 && c.H == 4 && c.KV == 2 && c.d == 32 && c.I == 192 &&
	            c.L == 2);
	assert_int_equal(ref_out_count(&c, N_TOK), N_TOK);
	assert_non_null(ref_set_find(&ck, "score.weight"));
	assert_null(ref_set_find(&ck, L1 "self_attn.q_proj.bias"));
	assert_null(ref_set_find(&ck, "lm_head.weight"));
	ref_set_clear(&ck);
	close_model(&m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_bidir_cls_pass),
	    cmocka_unit_test(test_bidir_cls_transformers),
	    cmocka_unit_test(test_bidir_cls_not_causal),
	    cmocka_unit_test(test_bidir_cls_caught),
	    cmocka_unit_test(test_bidir_cls_config),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
