/*
 * test_reference_interns1.c — the reference forward pass over Intern-S1
 * (InternS1ForConditionalGeneration, model_type interns1; vLLM's interns1.py, the class it builds
 * for InternVL too): the internvl_qwen3 fixture (Intern-S1-mini's shape: a Qwen3 language model)
 * and the internvl_qwen3_moe fixture (Intern-S1's: Qwen3-MoE) saved as Intern-S1's release
 * writes them, config.json naming InternS1ForConditionalGeneration / interns1 (the same names and
 * keys otherwise). The full and sharded logits agree (TP 1, 2, 4, EP 2; int8-channel TP 2,
 * fp8-channel TP 4), the full logits are InternVL's bit for bit and transformers 4.57.1's at 28
 * points each, and rank tensors broken the way a wrong planner would break them are caught.
 * Fixtures from $WT_BUILD/wt-mkckpt (seed printed).
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

#define V_IV  1000
#define MINI  "internvl_qwen3"
#define FULL  "internvl_qwen3_moe"
#define SMINI "interns1_mini"
#define SFULL "interns1"
#define A1    "model.layers.1.self_attn."
#define M1    "model.layers.1.mlp."

/* g_root/to: fixture `from` with config.json naming Intern-S1's architecture and model_type. */
static int write_s1(const char *from, const char *to)
{
	static const char *const files[] = {"config.json", "model.safetensors.index.json",
	                                    "model-00001-of-00002.safetensors",
	                                    "model-00002-of-00002.safetensors"};
	if (copy_fixture(from, to, files, sizeof(files) / sizeof(files[0])) != 0)
		return -1;
	char *dir = tu_path(g_root, to);
	edit_config(dir, "\"InternVLForConditionalGeneration\"",
	            "\"InternS1ForConditionalGeneration\"");
	edit_config(dir, "\"model_type\": \"internvl\",", "\"model_type\": \"interns1\",");
	free(dir);
	return 0;
}

static int setup(void **state)
{
	(void)state;
	static const char *fams[] = {MINI, FULL};
	int rv = gen_fixtures("reference_interns1", fams, 2);
	if (rv == 0)
		rv = write_s1(MINI, SMINI);
	return rv == 0 ? write_s1(FULL, SFULL) : rv;
}

static void test_pass(void **state)
{
	(void)state;
	expect_pass_tp(SMINI, false); /* 4 heads: no TP 8 */
	expect_pass_tp(SFULL, false);
	expect_pass(SFULL, 1, 2, WT_QUANT_NONE, 0);
	expect_pass(SFULL, 2, 2, WT_QUANT_NONE, 0);
}

/* The full path's logits are InternVL's bit for bit (the same module in vLLM). */
static void test_logits(void **state)
{
	(void)state;
	static const char *const pairs[][2] = {{MINI, SMINI}, {FULL, SFULL}};
	float *a = malloc(N_TOK * V_IV * sizeof(float)), *b = malloc(N_TOK * V_IV * sizeof(float));
	assert_true(a != NULL && b != NULL);
	for (size_t k = 0; k < 2; k++) {
		ref_cfg ca, cb;
		full_logits(pairs[k][0], a, &ca);
		full_logits(pairs[k][1], b, &cb);
		assert_int_equal(cb.V, V_IV);
		assert_int_equal(ca.kind, cb.kind);
		assert_true(cb.qk_norm && ca.tied == cb.tied);
		assert_memory_equal(a, b, N_TOK * V_IV * sizeof(float));
	}
	free(a);
	free(b);
}

/* (row, column, transformers 4.57.1 logit), tokens g_tokens: InternVLForConditionalGeneration
 * (InternS1Config's keys are InternVLConfig's; transformers has no InternS1 class) from_pretrained
 * of each Intern-S1 fixture with model_type / architectures put back to InternVL's, strict (no
 * missing / unexpected / mismatched keys), eager, float32. Over all 7000 logits: 6.0e-7 of max
 * |logit| 0.84 (mini, tied), 6.0e-7 of 0.87 (MoE, untied). */
static const gold_pt gold_mini[] = {
    {0, 22, 2.076158375e-01f},   {0, 668, 6.723096967e-02f},  {0, 803, 3.115902543e-01f},
    {0, 807, -7.979543507e-02f}, {1, 53, -1.358894855e-01f},  {1, 277, -2.974871732e-02f},
    {1, 284, 3.346359730e-01f},  {1, 977, -3.293612301e-01f}, {2, 1, -5.037995577e-01f},
    {2, 45, -7.841549814e-03f},  {2, 48, 4.235800803e-01f},   {2, 130, 9.817889333e-02f},
    {3, 234, -4.432743043e-02f}, {3, 282, -1.023823097e-01f}, {3, 650, -2.105060732e-03f},
    {3, 748, -1.014897898e-01f}, {4, 177, 1.608232558e-01f},  {4, 796, -6.968636811e-02f},
    {4, 844, -2.754095197e-02f}, {4, 895, -1.451655179e-01f}, {5, 491, -4.072424397e-02f},
    {5, 662, 3.297995925e-01f},  {5, 664, 1.270205155e-02f},  {5, 676, -4.043420553e-01f},
    {6, 270, -1.658898592e-01f}, {6, 361, 2.518400550e-01f},  {6, 879, 4.378716052e-01f},
    {6, 900, 6.657434162e-03f},
};
static const gold_pt gold_full[] = {
    {0, 122, -2.086639553e-01f}, {0, 341, 1.991278529e-01f},  {0, 677, -7.546961308e-02f},
    {0, 869, 3.909962773e-01f},  {1, 18, -2.978673950e-02f},  {1, 306, -1.655571461e-01f},
    {1, 870, 8.678924292e-02f},  {1, 881, 1.429933459e-01f},  {2, 1, -4.094924778e-02f},
    {2, 37, -3.073751740e-02f},  {2, 335, -1.026239470e-01f}, {2, 502, 1.614627987e-01f},
    {3, 294, 2.149994969e-01f},  {3, 324, -1.039556190e-01f}, {3, 526, -1.004016176e-01f},
    {3, 806, -9.489371628e-02f}, {4, 148, 1.896438003e-01f},  {4, 280, 5.347456932e-01f},
    {4, 579, 7.171201706e-02f},  {4, 697, -1.159193143e-01f}, {5, 59, 4.781895503e-02f},
    {5, 235, 4.037151337e-01f},  {5, 319, -2.427175045e-01f}, {5, 797, 5.898852274e-02f},
    {6, 289, -3.651503921e-01f}, {6, 505, 7.826042362e-03f},  {6, 967, 1.926230341e-01f},
    {6, 998, 1.536556035e-01f},
};

static void test_transformers(void **state)
{
	(void)state;
	expect_gold(SMINI, V_IV, 1e-5, gold_mini, sizeof(gold_mini) / sizeof(gold_mini[0]));
	expect_gold(SFULL, V_IV, 1e-5, gold_full, sizeof(gold_full) / sizeof(gold_full[0]));
}

static void test_caught(void **state)
{
	(void)state;
	expect_swapped(SMINI, 2, 1, A1 "qkv_proj.weight", "qkv exchanged between ranks");
	expect_swapped(SMINI, 2, 1, A1 "o_proj.weight", "o_proj columns exchanged");
	expect_zeroed(SMINI, 2, 1, 1, M1 "down_proj.weight", "rank 1's down_proj columns lost");
	expect_swapped(SFULL, 2, 1, M1 "experts.w2_weight", "w2 column slices exchanged");
	expect_stacks_swapped(SFULL, 1, 2, M1 "experts.", "EP ranks' stacks exchanged");
}

/* A config of its own read as InternVL's: the same kind and switches for each text model, and
 * Qwen3Config's / Qwen3MoeConfig's defaults under an Intern-S1 text_config */
static void test_config(void **state)
{
	(void)state;
	ref_cfg a, b;
	wt_errbuf err = {0};
#define S1_JSON(arch, mt, text)                                                                    \
	"{\"architectures\": [\"" arch "\"], \"model_type\": \"" mt "\", \"text_config\": "        \
	"{\"model_type\": \"" text "\"}, \"vision_config\": {}}"
	static const char *const s1[] = {
	    S1_JSON("InternS1ForConditionalGeneration", "interns1", "qwen3"),
	    S1_JSON("InternS1ForConditionalGeneration", "interns1", "qwen3_moe")};
	static const char *const iv[] = {
	    S1_JSON("InternVLForConditionalGeneration", "internvl", "qwen3"),
	    S1_JSON("InternVLForConditionalGeneration", "internvl", "qwen3_moe")};
	for (size_t k = 0; k < 2; k++) {
		assert_int_equal(ref_cfg_parse_json(s1[k], strlen(s1[k]), &a, &err), WT_OK);
		assert_int_equal(ref_cfg_parse_json(iv[k], strlen(iv[k]), &b, &err), WT_OK);
		assert_true(a.kind == b.kind && a.qk_norm && a.hid == b.hid && a.H == b.H &&
		            a.KV == b.KV && a.d == b.d && a.I == b.I && a.L == b.L && a.V == b.V &&
		            a.E == b.E && a.Ie == b.Ie && a.topk == b.topk && a.tied == b.tied);
		assert_float_equal(a.theta, b.theta, 0);
		assert_float_equal(a.eps, b.eps, 0);
	}
	assert_true(a.kind == REF_QWEN2_MOE && a.E == 128 && a.Ie == 768 && a.topk == 8);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_pass),         cmocka_unit_test(test_logits),
	    cmocka_unit_test(test_transformers), cmocka_unit_test(test_caught),
	    cmocka_unit_test(test_config),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
