/*
 * test_reference_mllama.c — the reference forward pass over Mllama's language model
 * (MllamaForConditionalGeneration: Llama's decoder under language_model., read as
 * LlamaForCausalLM's names; the cross-attention layers skipped on text tokens as
 * MllamaTextModel skips them without cross-attention states; embed_tokens' vocab_size + 8
 * rows; the vision model and the projector loaded, unused): full and sharded logits agree
 * within REF_TOL_F32 (TP 1, 2, 4) or the quantized layouts' budgets; the full path's logits
 * equal transformers 4.57.1's (MllamaForConditionalGeneration, eager, float32) at 28 points;
 * rank tensors broken the way a wrong planner would break them are caught; text_config's
 * keys are the ones read. Fixture from $WT_BUILD/wt-mkckpt --family mllama (hid 128, H 8,
 * KV 2, I 256, V 1024 (+ 8), 3 layers, layer 1 cross-attention, llama3 RoPE; seed printed).
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

#define V_ML 1024
#define A2   "model.layers.2.self_attn."
#define M2   "model.layers.2.mlp."

static int setup(void **state)
{
	(void)state;
	static const char *fams[] = {"mllama"};
	return gen_fixtures("reference_mllama", fams, 1);
}

static void test_mllama_pass(void **state)
{
	(void)state;
	expect_pass_tp("mllama", false);
}

/* (row, column, transformers 4.57.1 logit), tokens g_tokens:
 * MllamaForConditionalGeneration.from_pretrained of the fixture (strict, untied), eager,
 * float32, on input_ids without pixel_values (equal to its language_model and lm_head's) */
static const gold_pt gold_mllama[] = {
    {0, 131, -5.81229217e-02f}, {0, 136, -2.78450727e-01f}, {0, 511, -5.32815307e-02f},
    {0, 815, -2.77194232e-01f}, {1, 29, 1.47542119e-01f},   {1, 151, -2.52908915e-01f},
    {1, 411, 2.47779936e-02f},  {1, 496, 1.65854976e-01f},  {2, 132, 3.31168562e-01f},
    {2, 554, -8.75663757e-02f}, {2, 771, 5.47923706e-02f},  {2, 971, 1.05658229e-02f},
    {3, 148, -3.82672518e-01f}, {3, 376, 3.39498669e-01f},  {3, 454, -6.52728304e-02f},
    {3, 523, 3.79608497e-02f},  {4, 141, 6.94475099e-02f},  {4, 355, -3.19662750e-01f},
    {4, 806, 4.26825076e-01f},  {4, 873, 3.79470855e-01f},  {5, 523, 1.63387507e-02f},
    {5, 835, -2.71928757e-01f}, {5, 859, 1.15071133e-01f},  {5, 961, 3.20475340e-01f},
    {6, 137, -3.54892612e-02f}, {6, 209, 1.37675136e-01f},  {6, 315, -1.90389797e-01f},
    {6, 567, 2.01807067e-01f},
};

/* The full path's logits at the golden points, within 1e-6 (over all 7 x 1024 logits 4.2e-7
 * of max |logit| 0.78; without llama3's RoPE scaling they move by up to 2.0e-5). */
#define GOLD_TOL 1e-6

static void test_mllama_transformers(void **state)
{
	(void)state;
	expect_gold("mllama", V_ML, GOLD_TOL, gold_mllama,
	            sizeof(gold_mllama) / sizeof(gold_mllama[0]));
}

static void test_mllama_caught(void **state)
{
	(void)state;
	expect_swapped("mllama", 2, 1, A2 "qkv_proj.weight", "qkv exchanged between ranks");
	expect_swapped("mllama", 2, 1, A2 "o_proj.weight", "o_proj columns exchanged");
	expect_halves_swapped("mllama", 2, 1,
	                      (tamper_halves){M2 "gate_up_proj.weight", 0, 1, 128, 256},
	                      "gate / up halves swapped");
}

/* The fixture as read: Llama's math, layer 1 skipped, untied, d 16, llama3 RoPE; the vision
 * model and the projector under their names. */
static void test_mllama_fixture_cfg(void **state)
{
	(void)state;
	model m = {0};
	ref_set ck = {0};
	ref_cfg c;
	wt_errbuf err = {0};
	open_model(&m, "mllama");
	assert_int_equal(ref_load_ckpt(m.c, &c, &ck, &err), WT_OK);
	assert_true(c.kind == REF_DENSE && c.mllama && !c.tied && c.d == 16 && c.H == 8 &&
	            c.KV == 2 && c.I == 256 && c.hid == 128 && c.V == V_ML && c.L == 3);
	assert_true(!ref_ml_cross(&c, 0) && ref_ml_cross(&c, 1) && !ref_ml_cross(&c, 2));
	assert_int_equal(ref_embed_rows(&c), V_ML + 8);
	assert_true(c.n_ext == 8 && c.eps == 1e-5); /* llama3's divisor per frequency */
	assert_float_equal(c.theta, 500000.0, 0.0);
	assert_non_null(find_tensor(&ck, "model.embed_tokens.weight"));
	assert_non_null(find_tensor(&ck, "model.layers.1.cross_attn.q_proj.weight"));
	assert_non_null(find_tensor(&ck, "vision_model.global_transformer.layers.1.gate_attn"));
	ref_set_clear(&ck);
	close_model(&m);
}

/* text_config's keys, MllamaTextConfig's defaults where it leaves them out (its sizes,
 * cross_attention_layers [3, 8, ..., 38], rope_theta 500000). */
static void test_mllama_config(void **state)
{
	(void)state;
	ref_cfg c;
	wt_errbuf err = {0};
#define ML "{\"architectures\": [\"MllamaForConditionalGeneration\"], \"model_type\": \"mllama\", "
	static const char bare[] = ML "\"text_config\": {}}";
	assert_int_equal(ref_cfg_parse_json(bare, strlen(bare), &c, &err), WT_OK);
	assert_true(c.mllama && !c.tied && c.hid == 4096 && c.H == 32 && c.KV == 8 && c.d == 128 &&
	            c.I == 14336 && c.L == 40 && c.V == 128256);
	assert_float_equal(c.theta, 500000.0, 0.0);
	for (int64_t l = 0; l < 40; l++)
		assert_int_equal(ref_ml_cross(&c, l), l % 5 == 3);
	static const char some[] = ML "\"text_config\": {\"num_hidden_layers\": 4, "
	                              "\"cross_attention_layers\": [0, 2]}}";
	assert_int_equal(ref_cfg_parse_json(some, strlen(some), &c, &err), WT_OK);
	assert_true(c.L == 4 && ref_ml_cross(&c, 0) && !ref_ml_cross(&c, 1) &&
	            ref_ml_cross(&c, 2) && !ref_ml_cross(&c, 3));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_mllama_pass),   cmocka_unit_test(test_mllama_transformers),
	    cmocka_unit_test(test_mllama_caught), cmocka_unit_test(test_mllama_fixture_cfg),
	    cmocka_unit_test(test_mllama_config),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
