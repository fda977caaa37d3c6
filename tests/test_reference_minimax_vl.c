/*
 * test_reference_minimax_vl.c — the reference forward pass over MiniMax-VL-01's language model
 * (MiniMaxVL01ForConditionalGeneration on text tokens: the minimax family's math over
 * language_model.* read as the text model's names, text_config laid over the top level and its
 * remote MiniMax-Text-01 keys renamed as for MiniMaxText01ForCausalLM; the CLIP tower, the
 * projector and image_newline loaded, not run, as for the other multimodal families). Full and
 * sharded logits agree within REF_TOL_F32 (TP 1, 2, 4, EP 2, TP 2 x EP 2; TP 8 is past the tower's
 * 4 heads) or the quantized
 * layouts' budgets; the language model's tensors are minimax_text01's byte for byte (the
 * fixture's values come from the names before the rename), so the full path's logits equal
 * that fixture's exactly and transformers 4.57.1's MiniMaxForCausalLM's at its 28 pinned points
 * (test_reference_minimax_text01.c); rank tensors broken the way a wrong planner would break
 * them are caught; the config's reading. Fixtures from $WT_BUILD/wt-mkckpt --family
 * minimax_vl_01 and minimax_text01 (hid 256, H 8, KV 4, d 32, rotary_dim 16, 4 experts of 128
 * top-2, V 1000, attn_type_list [0, 0, 1, 0]; a CLIP tower of 2 blocks of width 64).
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
#include "tests/util/testutil.h"
#include "tests/test_reference_util.h"

#define FAM  "minimax_vl_01"
#define V_MM 1000
#define A0   "model.layers.0.self_attn." /* rank sets under the text model's names */
#define A2   "model.layers.2.self_attn."

static int setup(void **state)
{
	(void)state;
	static const char *fams[] = {FAM, "minimax_text01"};
	return gen_fixtures("reference_minimax_vl", fams, 2);
}

static void test_mv_pass(void **state)
{
	(void)state;
	expect_pass(FAM, 1, 1, WT_QUANT_NONE, 0);
	expect_pass(FAM, 2, 1, WT_QUANT_NONE, 0);
	expect_pass(FAM, 4, 1, WT_QUANT_NONE, 0);
	expect_pass(FAM, 1, 2, WT_QUANT_NONE, 0);
	expect_pass(FAM, 2, 2, WT_QUANT_NONE, 1);
	expect_pass(FAM, 2, 1, WT_QUANT_INT8_CHANNEL, 0);
	expect_pass(FAM, 4, 1, WT_QUANT_FP8_CHANNEL, 0);
}

/* (row, column, transformers 4.57.1 logit), tokens g_tokens: test_reference_minimax_text01.c's
 * points (MiniMaxForCausalLM of the same weights, eager, float32, its rotary on rotary_dim) */
static const gold_pt gold_t01[] = {
    {0, 623, 2.64676094e-01f},  {0, 683, -4.71757278e-02f}, {0, 897, 1.84782207e-01f},
    {0, 942, -4.97008324e-01f}, {1, 55, -1.83971792e-01f},  {1, 224, 4.96196330e-01f},
    {1, 285, 6.69836760e-01f},  {1, 299, -8.62398505e-01f}, {2, 131, 6.64674193e-02f},
    {2, 498, -1.58135384e-01f}, {2, 797, -2.68481337e-02f}, {2, 819, 1.26201048e-01f},
    {3, 278, 5.33380866e-01f},  {3, 302, -5.68859726e-02f}, {3, 340, -2.50603855e-01f},
    {3, 719, -2.77166247e-01f}, {4, 476, -4.67538014e-02f}, {4, 503, -1.50486469e-01f},
    {4, 553, 1.09608606e-01f},  {4, 581, 1.62969649e-01f},  {5, 341, 5.93006611e-03f},
    {5, 621, -1.27983660e-01f}, {5, 698, 1.85078233e-01f},  {5, 790, -2.24819168e-01f},
    {6, 159, -1.67096406e-01f}, {6, 612, -1.85642987e-02f}, {6, 842, -3.13500106e-01f},
    {6, 856, -4.07711476e-01f},
};

#define GOLD_TOL 1e-5

/* Every logit equals the MiniMaxText01ForCausalLM fixture's (the same LM weights and keys),
 * and the pinned transformers points within GOLD_TOL. */
static void test_mv_transformers(void **state)
{
	(void)state;
	size_t n = N_TOK * V_MM;
	float *a = malloc(n * sizeof(float)), *b = malloc(n * sizeof(float));
	assert_true(a && b);
	ref_cfg ca, cb;
	full_logits(FAM, a, &ca);
	full_logits("minimax_text01", b, &cb);
	double worst = 0, top = 0;
	for (size_t k = 0; k < n; k++) {
		worst = fmax(worst, fabs((double)a[k] - (double)b[k]));
		top = fmax(top, fabs((double)b[k]));
	}
	print_message("%s vs minimax_text01: max |diff| %.3g of max |logit| %.3g\n", FAM, worst,
	              top);
	assert_true(worst == 0.0 && top > 0.1);
	free(a);
	free(b);
	expect_gold(FAM, V_MM, GOLD_TOL, gold_t01, sizeof(gold_t01) / sizeof(gold_t01[0]));
}

static void test_mv_caught(void **state)
{
	(void)state;
	expect_swapped(FAM, 2, 1, A0 "qkv_proj.weight", "lightning qkv_proj heads exchanged");
	expect_swapped(FAM, 2, 1, A0 "out_proj.weight", "out_proj columns exchanged");
	expect_zeroed(FAM, 4, 1, 3, A0 "norm.weight", "rank 3's lightning norm dropped");
	expect_swapped(FAM, 2, 1, A2 "qkv_proj.weight", "softmax qkv_proj heads exchanged");
	expect_stacks_swapped(FAM, 1, 2, "model.layers.1.block_sparse_moe.experts.",
	                      "EP ranks' experts exchanged");
}

#define MV_RAW(top, text)                                                                          \
	"{\"architectures\": [\"MiniMaxVL01ForConditionalGeneration\"], \"model_type\": "          \
	"\"minimax_vl_01\", " top "\"text_config\": {\"model_type\": \"minimax_text_01\", "        \
	"\"hidden_size\": 64, \"num_attention_heads\": 4, \"num_key_value_heads\": 2, "            \
	"\"intermediate_size\": 32, \"num_local_experts\": 4, \"num_hidden_layers\": 4, "          \
	"\"vocab_size\": 100, \"attn_type_list\": [0, 1, 0, 1]" text "}, \"vision_config\": "      \
	"{\"hidden_size\": 32, \"intermediate_size\": 64, \"num_attention_heads\": 4, "            \
	"\"num_hidden_layers\": 2, \"image_size\": 28, \"patch_size\": 14}}"

/* text_config's keys read as MiniMaxText01ForCausalLM's: the kinds, the layernorm_* factors,
 * rotary_dim, postnorm required; the top level's tie not the text model's. */
static void test_mv_config(void **state)
{
	(void)state;
	ref_cfg c;
	wt_errbuf err = {0};
	static const char named[] =
	    MV_RAW("\"tie_word_embeddings\": true, ",
	           ", \"postnorm\": true, \"layernorm_full_attention_alpha\": 2.0, "
	           "\"layernorm_linear_attention_alpha\": 3.0, \"layernorm_mlp_alpha\": 4.0, "
	           "\"rotary_dim\": 8, \"rope_theta\": 10000.7");
	assert_int_equal(ref_cfg_parse_json(named, strlen(named), &c, &err), WT_OK);
	assert_true(c.minimax && c.kind == REF_MIXTRAL && !c.tied && c.d == 16 && c.rot_dim == 8 &&
	            c.mm_alpha[0] == 2.0 && c.mm_alpha[1] == 3.0 && c.mm_alpha[2] == 4.0 &&
	            c.theta == 10000.0 && c.hid == 64 && c.V == 100);
	for (int64_t l = 0; l < 4; l++)
		assert_int_equal(ref_mm_lin(&c, l), l % 2 == 0);
	expect_cfg(MV_RAW("", ""), WT_EUNSUPPORTED, "postnorm is absent or false");
	expect_cfg(MV_RAW("", ", \"postnorm\": true, \"layernorm_mlp_beta\": 2.0"), WT_EUNSUPPORTED,
	           "mlp_beta_factor 2");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_mv_pass),
	    cmocka_unit_test(test_mv_transformers),
	    cmocka_unit_test(test_mv_caught),
	    cmocka_unit_test(test_mv_config),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
