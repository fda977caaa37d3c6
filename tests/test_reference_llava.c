/*
 * test_reference_llava.c — the reference forward pass over LLaVA's language model
 * (LlavaForConditionalGeneration on text tokens; Llama's math in reference/reference.c,
 * the CLIP tower and the projector loaded, not run, as docs/reference.md says for
 * Gemma 3 / Mistral 3): untied, LlamaConfig's class defaults for a text_config that leaves
 * keys out. Full and sharded logits agree within REF_TOL_F32 (TP 1, 2, 4) or the quantized
 * layouts' budgets; the full path's logits equal transformers 4.57.1's (eager, float32) at
 * 28 points; rank tensors broken the way a wrong planner would break them are caught. The
 * fixtures come from $WT_BUILD/wt-mkckpt --family llava (hid 128, H 4, KV 2, d 32, I 256,
 * V 1000, 2 layers; CLIP 2 blocks of width 64) and llava_next (LLaVA-NeXT in the
 * transformers >= 4.52 layout: the same dims, Mistral's language model, image_newline).
 * The llava fixture saved as Mantis and as Tarsier (their split-token ids added) gives LLaVA's
 * logits bit for bit.
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

#define V_LV 1000
#define A1   "model.layers.1.self_attn."
#define M1   "model.layers.1.mlp."

/* dir: the llava fixture's files with architectures arch (and extra keys before
 * ignore_index). */
static int write_as(const char *dir_name, const char *arch, const char *extra)
{
	static const char *const files[] = {"config.json", "model.safetensors.index.json",
	                                    "model-00001-of-00002.safetensors",
	                                    "model-00002-of-00002.safetensors"};
	if (copy_fixture("llava", dir_name, files, sizeof(files) / sizeof(files[0])) != 0)
		return -1;
	char *dir = tu_path(g_root, dir_name);
	edit_config(dir, "\"LlavaForConditionalGeneration\"", arch);
	edit_config(dir, "\"ignore_index\"", extra);
	free(dir);
	return 0;
}

static int setup(void **state)
{
	(void)state;
	static const char *fams[] = {"llava", "llava_next"};
	int rv = gen_fixtures("reference_llava", fams, 2);
	if (rv == 0)
		rv = write_as("llava_mantis", "\"MantisForConditionalGeneration\"",
		              "\"ignore_index\"");
	if (rv == 0)
		rv = write_as(
		    "llava_tarsier", "\"TarsierForConditionalGeneration\"",
		    "\"image_newline_idx\": 998, \"image_new_idx\": 999, \"ignore_index\"");
	return rv;
}

static void test_llava_pass(void **state)
{
	(void)state;
	expect_pass("llava", 1, 1, WT_QUANT_NONE, 0);
	expect_pass("llava", 2, 1, WT_QUANT_NONE, 0);
	expect_pass("llava", 4, 1, WT_QUANT_NONE, 0); /* KV 2 < TP 4 */
	expect_pass("llava", 2, 1, WT_QUANT_INT8_CHANNEL, 0);
	expect_pass("llava", 4, 1, WT_QUANT_FP8_CHANNEL, 0);
	expect_pass("llava", 2, 1, WT_QUANT_FP8_BLOCK, 0);
	/* LLaVA-NeXT (>= 4.52 layout, image_newline beside): Mistral's language model */
	expect_pass("llava_next", 1, 1, WT_QUANT_NONE, 0);
	expect_pass("llava_next", 2, 1, WT_QUANT_NONE, 0);
	expect_pass("llava_next", 4, 1, WT_QUANT_NONE, 0);
	expect_pass("llava_next", 2, 1, WT_QUANT_INT8_CHANNEL, 0);
}

/* (row, column, transformers 4.57.1 logit), tokens g_tokens */
static const gold_pt gold_lv[] = {
    {0, 22, -7.40374774e-02f},  {0, 668, 1.31261408e-01f},  {0, 803, -1.13687515e-01f},
    {0, 807, 4.02386665e-01f},  {1, 53, 1.92072168e-01f},   {1, 277, -6.50409535e-02f},
    {1, 284, 1.69853091e-01f},  {1, 977, -1.53170481e-01f}, {2, 1, -1.31307229e-01f},
    {2, 45, -5.35119735e-02f},  {2, 48, 3.51919457e-02f},   {2, 130, -1.93496142e-02f},
    {3, 234, -1.45152688e-01f}, {3, 282, -1.92028806e-02f}, {3, 650, 1.23629004e-01f},
    {3, 748, -1.71920612e-01f}, {4, 177, -2.53043413e-01f}, {4, 796, 1.34076476e-01f},
    {4, 844, -9.03732777e-02f}, {4, 895, -7.90280327e-02f}, {5, 491, -2.61785448e-01f},
    {5, 662, -1.63181916e-01f}, {5, 664, 2.06146210e-01f},  {5, 676, 5.94362505e-02f},
    {6, 270, -8.74439403e-02f}, {6, 361, -3.12203825e-01f}, {6, 879, -2.02345401e-01f},
    {6, 900, 3.89923334e-01f},
};

/* llava_next's (seed 11: Mistral's LM, rope_theta 1e6) */
static const gold_pt gold_next[] = {
    {0, 286, -1.41739622e-01f}, {0, 420, -3.73945981e-01f}, {0, 868, 4.23039906e-02f},
    {0, 960, -2.48697892e-01f}, {1, 641, -5.27660072e-01f}, {1, 715, 2.40916889e-02f},
    {1, 775, -1.38156919e-03f}, {1, 915, 2.59634759e-02f},  {2, 13, 2.95508176e-01f},
    {2, 26, -3.24757189e-01f},  {2, 718, -5.93103282e-02f}, {2, 916, -1.32866710e-01f},
    {3, 65, -3.05411011e-01f},  {3, 483, 1.50499046e-01f},  {3, 673, 1.72212124e-01f},
    {3, 899, 2.62721837e-01f},  {4, 291, -3.04505937e-02f}, {4, 348, 1.28123671e-01f},
    {4, 784, -3.07107985e-01f}, {4, 981, 2.86009133e-01f},  {5, 298, 1.72166377e-02f},
    {5, 512, 6.12228751e-01f},  {5, 703, -9.68872532e-02f}, {5, 966, 2.49066234e-01f},
    {6, 479, -2.21663266e-01f}, {6, 781, 1.32644966e-01f},  {6, 837, -6.10198617e-01f},
    {6, 987, 1.03313304e-01f},
};

/* The full path's logits at the golden points, within 1e-5 (over all 7000 logits 4.2e-7
 * of max |logit| 0.83; llava_next 4.5e-7 of 0.84). */
#define GOLD_TOL 1e-5

static void test_llava_transformers(void **state)
{
	(void)state;
	expect_gold("llava", V_LV, GOLD_TOL, gold_lv, sizeof(gold_lv) / sizeof(gold_lv[0]));
	expect_gold("llava_next", V_LV, GOLD_TOL, gold_next,
	            sizeof(gold_next) / sizeof(gold_next[0]));
}

static void test_llava_caught(void **state)
{
	(void)state;
	expect_swapped("llava", 2, 1, A1 "qkv_proj.weight", "qkv exchanged between ranks");
	expect_swapped("llava", 2, 1, A1 "o_proj.weight", "o_proj columns exchanged");
	expect_halves_swapped("llava", 2, 1,
	                      (tamper_halves){M1 "gate_up_proj.weight", 0, 1, 128, 256},
	                      "gate / up halves swapped");
	expect_swapped("llava_next", 2, 1, A1 "qkv_proj.weight", "llava_next: qkv exchanged");
}

/* The fixture as read: Llama's math, untied, eps 1e-5, LlamaConfig's theta. */
static void test_llava_fixture_cfg(void **state)
{
	(void)state;
	model m = {0};
	ref_set ck = {0};
	ref_cfg c;
	wt_errbuf err = {0};
	open_model(&m, "llava");
	assert_int_equal(ref_load_ckpt(m.c, &c, &ck, &err), WT_OK);
	assert_true(c.kind == REF_DENSE && !c.qk_norm && !c.tied && c.d == 32 && c.H == 4 &&
	            c.KV == 2 && c.I == 256 && c.hid == 128 && c.V == V_LV && c.L == 2 &&
	            c.rot_dim == 0 && !c.rope_pairs && c.window == 0 && c.act == REF_ACT_SILU);
	assert_float_equal(c.eps, 1e-5, 1e-12);
	assert_float_equal(c.theta, 10000.0, 1e-9);
	/* the tower and projector loaded beside the language model, unused */
	assert_non_null(find_tensor(&ck, "vision_tower.vision_model.embeddings.class_embedding"));
	assert_non_null(find_tensor(&ck, "multi_modal_projector.linear_1.weight"));
	ref_set_clear(&ck);
	close_model(&m);
	/* llava_next: Mistral's (rope_theta 1e6, sliding_window null), image_newline loaded */
	open_model(&m, "llava_next");
	assert_int_equal(ref_load_ckpt(m.c, &c, &ck, &err), WT_OK);
	assert_true(c.kind == REF_DENSE && !c.tied && c.d == 32 && c.KV == 2 && c.window == 0);
	assert_float_equal(c.theta, 1e6, 1e-3);
	assert_non_null(find_tensor(&ck, "image_newline"));
	ref_set_clear(&ck);
	close_model(&m);
}

#define LV_JSON(text)                                                                              \
	"{\"architectures\": [\"LlavaForConditionalGeneration\"], \"model_type\": "                \
	"\"llava\", \"vision_config\": {\"model_type\": \"clip_vision_model\"}, "                  \
	"\"text_config\": {" text "}}"

static void test_llava_config(void **state)
{
	(void)state;
	ref_cfg c;
	wt_errbuf err = {0};
	/* LlamaConfig's defaults (llava-1.5-7b-hf's text_config: model_type and vocab_size):
	 * hidden 4096, 32 heads of 128, KV = H, I 11008, 32 layers, eps 1e-6, theta 10000 */
	static const char plain[] = LV_JSON("\"model_type\": \"llama\", \"vocab_size\": 32064");
	assert_int_equal(ref_cfg_parse_json(plain, strlen(plain), &c, &err), WT_OK);
	assert_true(c.kind == REF_DENSE && c.hid == 4096 && c.H == 32 && c.d == 128 && c.KV == 32 &&
	            c.I == 11008 && c.V == 32064 && c.L == 32 && !c.tied && c.act == REF_ACT_SILU);
	assert_float_equal(c.eps, 1e-6, 1e-15);
	assert_float_equal(c.theta, 10000.0, 1e-9);
	/* no model_type: LlavaConfig's llama */
	static const char bare[] = LV_JSON("\"rms_norm_eps\": 1e-5");
	assert_int_equal(ref_cfg_parse_json(bare, strlen(bare), &c, &err), WT_OK);
	assert_true(c.hid == 4096 && c.I == 11008 && c.V == 32000 && c.KV == 32);
	assert_float_equal(c.eps, 1e-5, 1e-12);
	/* mistral: MistralConfig's (KV 8, I 14336) */
	static const char mis[] = LV_JSON("\"model_type\": \"mistral\"");
	assert_int_equal(ref_cfg_parse_json(mis, strlen(mis), &c, &err), WT_OK);
	assert_true(c.hid == 4096 && c.KV == 8 && c.I == 14336 && c.V == 32000);
}

/* Mantis and Tarsier (vLLM's llava.py subclass and tarsier.py: LLaVA's language model on text
 * tokens): their layouts pass and their logits are LLaVA's bit for bit. */
static void test_mantis_tarsier(void **state)
{
	(void)state;
	static const char *const fams[] = {"llava_mantis", "llava_tarsier"};
	float *a = malloc(N_TOK * V_LV * sizeof(float)), *b = malloc(N_TOK * V_LV * sizeof(float));
	assert_true(a != NULL && b != NULL);
	ref_cfg ca, cb;
	full_logits("llava", a, &ca);
	for (size_t i = 0; i < 2; i++) {
		expect_pass(fams[i], 2, 1, WT_QUANT_NONE, 0);
		expect_pass(fams[i], 4, 1, WT_QUANT_FP8_CHANNEL, 0);
		expect_pass(fams[i], 2, 1, WT_QUANT_INT8_CHANNEL, 0);
		full_logits(fams[i], b, &cb);
		assert_memory_equal(a, b, N_TOK * V_LV * sizeof(float));
	}
	free(a);
	free(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_llava_pass),   cmocka_unit_test(test_llava_transformers),
	    cmocka_unit_test(test_llava_caught), cmocka_unit_test(test_llava_fixture_cfg),
	    cmocka_unit_test(test_llava_config), cmocka_unit_test(test_mantis_tarsier),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
