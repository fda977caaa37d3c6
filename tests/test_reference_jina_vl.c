/*
 * test_reference_jina_vl.c — the reference forward pass over jina-reranker-m0
 * (JinaVLForRanking, fixture jina_vl; remote code, vLLM's jina_vl.py): Qwen2-VL's language
 * model on text tokens (the vision tower loaded, not run: image inputs are outside the
 * reference), then the score head score.0 (+ bias), ReLU, score.2 (+ bias) on every token's
 * final hidden state (vLLM pools the last token's: its row here; the pooler's logit bias 2.65
 * and sigmoid are the engine's math). Full and sharded scores agree within REF_TOL_F32 (TP 1,
 * 2, 4) or the quantized layouts' budgets (the head never quantized); the full path's scores
 * equal those of transformers 4.57.1's Qwen2VLForConditionalGeneration with jina_vl.py's head
 * (from_pretrained: no missing or unexpected keys; eager, float32) at all 7 tokens; rank
 * tensors broken the way a wrong planner would break them are caught. Fixture from
 * $WT_BUILD/wt-mkckpt --family jina_vl (hid 256, H 8, KV 2, I 512, V 1024, 2 layers, q/k/v
 * biases, tied, vision depth 2, 1 label; seed printed).
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
	static const char *fams[] = {"jina_vl"};
	return gen_fixtures("reference_jina_vl", fams, 1);
}

static void test_jina_pass(void **state)
{
	(void)state;
	expect_pass_tp("jina_vl", false);
}

/* (token, label, value), tokens g_tokens: score(last_hidden_state) of transformers 4.57.1's
 * Qwen2VLForConditionalGeneration subclassed with nn.Sequential(Linear(hid, hid), ReLU,
 * Linear(hid, 1)) as jina_vl.py's JinaVLScorer, from_pretrained on the fixture (no missing /
 * unexpected keys, lm_head tied), eager, float32 */
static const gold_pt gold_jina_vl[] = {
    {0, 0, 3.186431503e+01f}, {1, 0, 3.339350510e+01f}, {2, 0, 3.058265114e+01f},
    {3, 0, 3.254214478e+01f}, {4, 0, 3.202146530e+01f}, {5, 0, 3.009632683e+01f},
    {6, 0, 3.104453468e+01f},
};

/* scores near 32: a few float32 ulps (3.8e-6 each) */
#define GOLD_TOL 2e-5

static void test_jina_transformers(void **state)
{
	(void)state;
	expect_gold("jina_vl", 1, GOLD_TOL, gold_jina_vl,
	            sizeof(gold_jina_vl) / sizeof(gold_jina_vl[0]));
}

static void test_jina_caught(void **state)
{
	(void)state;
	expect_swapped("jina_vl", 2, 1, L1 "self_attn.qkv_proj.weight",
	               "the ranks' q/k/v heads exchanged");
	expect_swapped("jina_vl", 2, 1, L1 "mlp.down_proj.weight", "down_proj columns exchanged");
	expect_swapped("jina_vl", 2, 1, "score.0.weight", "score.0 rows exchanged");
	expect_swapped("jina_vl", 2, 1, "score.0.bias", "score.0 bias rows exchanged");
	expect_swapped("jina_vl", 2, 1, "score.2.weight", "score.2 columns exchanged");
	expect_zeroed("jina_vl", 2, 1, 1, "score.2.bias", "rank 1's score.2.bias zeroed");
}

/* The fixture is read as Qwen2-VL with the score head: q/k/v biases, one label, tied. */
static void test_jina_config(void **state)
{
	(void)state;
	model m = {0};
	ref_set ck = {0};
	ref_cfg c;
	wt_errbuf err = {0};
	open_model(&m, "jina_vl");
	assert_int_equal(ref_load_ckpt(m.c, &c, &ck, &err), WT_OK);
	assert_true(c.dec_cls && c.rm_head && !c.dec_emb && !c.qk_norm && c.kind == REF_DENSE &&
	            c.n_labels == 1 && c.H == 8 && c.KV == 2 && c.d == 32 && c.I == 512 &&
	            c.L == 2);
	assert_int_equal(ref_out_count(&c, N_TOK), N_TOK);
	assert_null(ref_set_find(&ck, "lm_head.weight"));
	assert_non_null(ref_set_find(&ck, "score.0.bias"));
	ref_set_clear(&ck);
	close_model(&m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_jina_pass),
	    cmocka_unit_test(test_jina_transformers),
	    cmocka_unit_test(test_jina_caught),
	    cmocka_unit_test(test_jina_config),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
