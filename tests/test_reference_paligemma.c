/*
 * test_reference_paligemma.c — the reference forward pass over PaliGemma's language model
 * (PaliGemmaForConditionalGeneration on text tokens: Gemma 2's math in reference/reference.c
 * and cfg_gemma.c when text_config.model_type is gemma2, language_model.* read as the text
 * model's names, the tower and the projector loaded, not run, as docs/reference.md says for
 * the multimodal families): tied by text_config, GemmaConfig's / Gemma2Config's class
 * defaults, PaliGemmaConfig's own hidden_size not read. Full and sharded logits agree within
 * REF_TOL_F32 (TP 1, 2, 4) or the quantized layouts' budgets; the full path's logits equal
 * transformers 4.57.1's language model's (eager, float32: model.language_model, lm_head and
 * Gemma 2's final soft-cap, as vLLM computes them) at 28 points; rank tensors broken the way a
 * wrong planner would break them are caught. The fixture comes from $WT_BUILD/wt-mkckpt
 * --family paligemma (hid 128, H 4, KV 2, d 32, I 256, V 1000, 2 layers, sliding window 4;
 * a SigLIP tower of 2 blocks of width 64) in transformers 4.57's layout.
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

#define V_PG 1000
#define A1   "model.layers.1.self_attn."
#define M1   "model.layers.1.mlp."

static int setup(void **state)
{
	(void)state;
	static const char *fams[] = {"paligemma"};
	return gen_fixtures("reference_paligemma", fams, 1);
}

static void test_paligemma_pass(void **state)
{
	(void)state;
	expect_pass("paligemma", 1, 1, WT_QUANT_NONE, 0);
	expect_pass("paligemma", 2, 1, WT_QUANT_NONE, 0);
	expect_pass("paligemma", 4, 1, WT_QUANT_NONE, 0); /* KV 2 < TP 4 */
	expect_pass("paligemma", 2, 1, WT_QUANT_INT8_CHANNEL, 0);
	expect_pass("paligemma", 4, 1, WT_QUANT_FP8_CHANNEL, 0);
}

/* (row, column, transformers 4.57.1 logit), tokens g_tokens */
static const gold_pt gold_pg[] = {
    {0, 154, 3.08159858e-01f},  {0, 331, -1.68754756e-01f}, {0, 404, -2.83415973e-01f},
    {0, 970, 5.32742381e-01f},  {1, 49, 5.78791350e-02f},   {1, 74, -8.23698640e-02f},
    {1, 666, 1.22803137e-01f},  {1, 840, 5.12953699e-01f},  {2, 96, -3.51960123e-01f},
    {2, 374, -4.89314944e-01f}, {2, 548, -2.49323815e-01f}, {2, 596, 6.56571209e-01f},
    {3, 59, -8.76114845e-01f},  {3, 219, 2.78515130e-01f},  {3, 519, 3.67508940e-02f},
    {3, 931, -4.90659297e-01f}, {4, 38, -2.43655920e-01f},  {4, 88, -8.02954957e-02f},
    {4, 428, 4.79211122e-01f},  {4, 444, -2.38743752e-01f}, {5, 71, 3.44496131e-01f},
    {5, 92, 4.41891998e-02f},   {5, 246, 3.08360666e-01f},  {5, 564, -1.28653586e-01f},
    {6, 60, 1.27656117e-01f},   {6, 434, 5.59978709e-02f},  {6, 579, 2.37839431e-01f},
    {6, 846, -4.29946482e-01f},
};

/* The full path's logits at the golden points, within 1e-5 (over all 7000 logits 1.3e-6 of
 * max |logit| 1.83: PaliGemmaForConditionalGeneration.from_pretrained of the fixture,
 * strict, lm_head tied; its language model, lm_head, tanh soft-cap 30) */
#define GOLD_TOL 1e-5

static void test_paligemma_transformers(void **state)
{
	(void)state;
	expect_gold("paligemma", V_PG, GOLD_TOL, gold_pg, sizeof(gold_pg) / sizeof(gold_pg[0]));
}

static void tamper_ffn_norm(void *ctx, ref_set *r, uint32_t n)
{
	(void)ctx; /* TP 2: rank 1's pre- and post-MLP norms of layer 1 exchanged */
	assert_int_equal(n, 2);
	ref_tensor *a = find_tensor(&r[1], "model.layers.1.pre_feedforward_layernorm.weight");
	ref_tensor *b = find_tensor(&r[1], "model.layers.1.post_feedforward_layernorm.weight");
	void *t = a->data;
	a->data = b->data;
	b->data = t;
}

static void test_paligemma_caught(void **state)
{
	(void)state;
	expect_swapped("paligemma", 2, 1, A1 "qkv_proj.weight", "qkv exchanged between ranks");
	expect_swapped("paligemma", 2, 1, A1 "o_proj.weight", "o_proj columns exchanged");
	expect_halves_swapped("paligemma", 2, 1,
	                      (tamper_halves){M1 "gate_up_proj.weight", 0, 1, 128, 256},
	                      "gate / up halves swapped");
	expect_caught("paligemma", 2, 1, tamper_ffn_norm, "Gemma 2's MLP norms exchanged");
}

/* The fixture as read: Gemma 2's math, tied, head_dim 32; the tower and the projector
 * under their canonical names. */
static void test_paligemma_fixture_cfg(void **state)
{
	(void)state;
	model m = {0};
	ref_set ck = {0};
	ref_cfg c;
	wt_errbuf err = {0};
	open_model(&m, "paligemma");
	assert_int_equal(ref_load_ckpt(m.c, &c, &ck, &err), WT_OK);
	assert_true(c.kind == REF_DENSE && c.gemma == 2 && c.tied && c.d == 32 && c.H == 4 &&
	            c.KV == 2 && c.I == 256 && c.hid == 128 && c.V == V_PG && c.L == 2);
	assert_non_null(find_tensor(&ck, "model.embed_tokens.weight"));
	assert_non_null(find_tensor(&ck, "model.layers.0.pre_feedforward_layernorm.weight"));
	assert_non_null(find_tensor(&ck, "vision_tower.vision_model.post_layernorm.weight"));
	assert_non_null(find_tensor(&ck, "multi_modal_projector.linear.bias"));
	ref_set_clear(&ck);
	close_model(&m);
}

#define PG_JSON(top, text)                                                                         \
	"{\"architectures\": [\"PaliGemmaForConditionalGeneration\"], \"model_type\": "            \
	"\"paligemma\", \"hidden_size\": 2048, " top                                               \
	"\"vision_config\": {}, \"text_config\": {" text "}}"

static void test_paligemma_config(void **state)
{
	(void)state;
	ref_cfg c;
	wt_errbuf err = {0};
	/* GemmaConfig's defaults (a text_config without model_type is gemma): hidden 3072, 16
	 * heads of 256, I 24576, 28 layers; Gemma (1) math, tied */
	static const char g1[] = PG_JSON("", "\"vocab_size\": 257216");
	assert_int_equal(ref_cfg_parse_json(g1, strlen(g1), &c, &err), WT_OK);
	assert_true(c.kind == REF_DENSE && c.gemma == 1 && c.hid == 3072 && c.H == 16 &&
	            c.d == 256 && c.KV == 16 && c.I == 24576 && c.V == 257216 && c.L == 28 &&
	            c.tied);
	/* Gemma2Config's: hidden 2304, 8 heads (KV 4) of 256, 26 layers; Gemma 2 math; the top
	 * level's tie_word_embeddings false not read */
	static const char g2[] = PG_JSON("\"tie_word_embeddings\": false, ",
	                                 "\"model_type\": \"gemma2\", \"vocab_size\": 257216");
	assert_int_equal(ref_cfg_parse_json(g2, strlen(g2), &c, &err), WT_OK);
	assert_true(c.gemma == 2 && c.hid == 2304 && c.H == 8 && c.KV == 4 && c.d == 256 &&
	            c.I == 9216 && c.L == 26 && c.tied);
	/* text_config's false is */
	static const char un[] =
	    PG_JSON("", "\"model_type\": \"gemma2\", \"tie_word_embeddings\": false");
	assert_int_equal(ref_cfg_parse_json(un, strlen(un), &c, &err), WT_OK);
	assert_false(c.tied);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_paligemma_pass),   cmocka_unit_test(test_paligemma_transformers),
	    cmocka_unit_test(test_paligemma_caught), cmocka_unit_test(test_paligemma_fixture_cfg),
	    cmocka_unit_test(test_paligemma_config),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
