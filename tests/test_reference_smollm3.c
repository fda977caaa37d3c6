/*
 * test_reference_smollm3.c — the reference forward pass over SmolLM3 (SmolLM3ForCausalLM;
 * reference/cfg_smollm3.c on Llama's math): RoPE skipped on the layers no_rope_layers marks
 * 0 (or every no_rope_layer_interval-th, as SmolLM3Config derives them), the sliding mask
 * on the layer_types sliding_attention layers (or, derived, the NoPE layers when
 * use_sliding_window), tied embeddings with the key absent. Full and sharded logits agree
 * within REF_TOL_F32 (TP 1, 2, 4, 8) or the quantized layouts' budgets on the fixture
 * (layer 3 NoPE) and a variant (interval 2: layers 1 and 3 NoPE and sliding with window 3);
 * the full path's logits equal transformers 4.57.1's (eager, float32) at 28 + 7 points;
 * rank tensors broken the way a wrong planner would break them are caught; each switch
 * moves the logits; SmolLM3Config's defaults and refusals. The fixture comes from
 * $WT_BUILD/wt-mkckpt --family smollm3 (hid 256, H 8, KV 2, d 32, I 512, V 1000, 4 layers;
 * seed printed).
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

#define V_SM 1000
#define A3   "model.layers.3.self_attn."

static int setup(void **state)
{
	(void)state;
	static const char *fams[] = {"smollm3"};
	if (gen_fixtures("reference_smollm3", fams, 1) != 0 || gen_family("smollm3", "smol_var"))
		return -1;
	/* no_rope_layers and layer_types renamed away (both derived again): interval 2 makes
	 * layers 1 and 3 NoPE, use_sliding_window with window 3 makes them sliding */
	char *dir = tu_path(g_root, "smol_var");
	edit_config(dir, "\"no_rope_layers\"", "\"x_no_rope_layers\"");
	edit_config(dir, "\"no_rope_layer_interval\": 4", "\"no_rope_layer_interval\": 2");
	edit_config(dir, "\"layer_types\"", "\"x_layer_types\"");
	edit_config(dir, "\"use_sliding_window\": false", "\"use_sliding_window\": true");
	edit_config(dir, "\"sliding_window\": null", "\"sliding_window\": 3");
	free(dir);
	return 0;
}

static void test_smollm3_pass(void **state)
{
	(void)state;
	static const char *forms[] = {"smollm3", "smol_var"};
	for (int f = 0; f < 2; f++) {
		expect_pass(forms[f], 1, 1, WT_QUANT_NONE, 0);
		expect_pass(forms[f], 2, 1, WT_QUANT_NONE, 0);
		expect_pass(forms[f], 4, 1, WT_QUANT_NONE, 0); /* KV 2 < TP 4 */
		expect_pass(forms[f], 8, 1, WT_QUANT_NONE, 0);
		expect_pass(forms[f], 2, 1, WT_QUANT_INT8_CHANNEL, 0);
		expect_pass(forms[f], 4, 1, WT_QUANT_FP8_CHANNEL, 0);
	}
	expect_pass("smollm3", 2, 1, WT_QUANT_FP8_BLOCK, 0);
}

/* (row, column, transformers 4.57.1 logit), tokens g_tokens */
static const gold_pt gold_base[] = {
    {0, 511, 1.16767697e-01f},  {0, 724, 5.54565728e-01f},  {0, 880, 1.32732317e-02f},
    {0, 941, 3.14393967e-01f},  {1, 80, -3.60767692e-01f},  {1, 283, 4.15538818e-01f},
    {1, 452, 2.04817474e-01f},  {1, 606, 2.15619296e-01f},  {2, 174, -1.67080358e-01f},
    {2, 579, -1.34192646e-01f}, {2, 675, -6.24342263e-01f}, {2, 871, 5.77409685e-01f},
    {3, 60, 9.50923562e-02f},   {3, 476, -1.69576049e-01f}, {3, 897, -3.17138195e-01f},
    {3, 899, 6.73459053e-01f},  {4, 369, -4.28907961e-01f}, {4, 928, -1.20861001e-01f},
    {4, 961, 3.65996778e-01f},  {4, 982, 2.92080373e-01f},  {5, 177, -1.40340745e-01f},
    {5, 464, 4.86117452e-01f},  {5, 588, 3.11634600e-01f},  {5, 926, 2.30362415e-02f},
    {6, 207, -3.31026316e-01f}, {6, 407, 2.48048939e-02f},  {6, 665, 2.75719523e-01f},
    {6, 940, 6.01755917e-01f},
};
static const gold_pt gold_var[] = {
    {0, 960, 6.99426293e-01f}, {1, 915, -7.23537445e-01f}, {2, 916, -6.30276322e-01f},
    {3, 899, 6.48513794e-01f}, {4, 291, 3.82241249e-01f},  {5, 703, 4.14136827e-01f},
    {6, 479, 3.77114713e-01f},
};

/* The full path's logits of each form at the golden points, within 1e-5 (over all 7000
 * logits 1.01e-6 and 1.07e-6 of max |logit| 1.31): RoPE on the fixture's NoPE layer moves
 * transformers' logits by 0.0073, the variant's NoPE / sliding layers by up to 0.36. */
#define GOLD_TOL 1e-5

static void test_smollm3_transformers(void **state)
{
	(void)state;
	expect_gold("smollm3", V_SM, GOLD_TOL, gold_base, sizeof(gold_base) / sizeof(gold_base[0]));
	expect_gold("smol_var", V_SM, GOLD_TOL, gold_var, sizeof(gold_var) / sizeof(gold_var[0]));
}

static void test_smollm3_caught(void **state)
{
	(void)state;
	expect_swapped("smollm3", 2, 1, A3 "qkv_proj.weight",
	               "NoPE layer's q/k/v slices exchanged");
	expect_zeroed("smollm3", 2, 1, 1, A3 "o_proj.weight", "NoPE layer's o_proj slice dropped");
	expect_halves_swapped(
	    "smollm3", 2, 1,
	    (tamper_halves){"model.layers.3.mlp.gate_up_proj.weight", 0, 1, 256, 256 * 2},
	    "gate / up halves swapped on rank 0");
	expect_swapped("smol_var", 2, 1, A3 "qkv_proj.weight", "the same, sliding NoPE layers");
}

/* Each switch moves the logits (the golden points above pin their values). */
static void test_smollm3_switches(void **state)
{
	(void)state;
	static const char *forms[] = {"smollm3", "smol_var"};
	for (int f = 0; f < 2; f++) {
		model m = {0};
		ref_set ck = {0};
		ref_cfg c;
		wt_errbuf err = {0};
		open_model(&m, forms[f]);
		assert_int_equal(ref_load_ckpt(m.c, &c, &ck, &err), WT_OK);
		assert_true(c.smollm3 && c.kind == REF_DENSE && c.tied && c.d == 32 && c.L == 4 &&
		            c.local_masked && c.act == REF_ACT_SILU && !c.qk_norm);
		assert_true(f == 0
		                ? c.nope_mask[0] == 0x8 && c.local_mask[0] == 0 && c.window == 0
		                : c.nope_mask[0] == 0xa && c.local_mask[0] == 0xa && c.window == 3);
		assert_float_equal(c.eps, 1e-6, 1e-15);
		size_t n = N_TOK * V_SM;
		float *base = malloc(n * sizeof(float)), *lg = malloc(n * sizeof(float));
		assert_true(base && lg);
		logits_with(&c, &ck, base);
		ref_cfg off = c;
		memset(off.nope_mask, 0, sizeof(off.nope_mask));
		logits_with(&off, &ck, lg);
		expect_moved(base, lg, n, 1e-3, "RoPE on the NoPE layers");
		off = c;
		off.nope_mask[0] = 0xf;
		logits_with(&off, &ck, lg);
		expect_moved(base, lg, n, 1e-3, "no RoPE on any layer");
		if (f == 1) {
			off = c;
			off.window = 0;
			logits_with(&off, &ck, lg);
			expect_moved(base, lg, n, 1e-3, "no sliding window");
		}
		free(base);
		free(lg);
		ref_set_clear(&ck);
		close_model(&m);
	}
}

#define SM_JSON(extra)                                                                             \
	"{\"architectures\": [\"SmolLM3ForCausalLM\"], \"model_type\": \"smollm3\", "              \
	"\"hidden_size\": 64, \"num_attention_heads\": 4, \"num_hidden_layers\": 8, "              \
	"\"vocab_size\": 100, \"intermediate_size\": 96" extra "}"

static void test_smollm3_config(void **state)
{
	(void)state;
	ref_cfg c;
	wt_errbuf err = {0};
	/* SmolLM3Config's defaults: 4 kv heads, eps 1e-6, theta 2e6, tied, every 4th layer NoPE,
	 * no sliding layer */
	static const char plain[] = SM_JSON("");
	assert_int_equal(ref_cfg_parse_json(plain, strlen(plain), &c, &err), WT_OK);
	assert_true(c.smollm3 && c.KV == 4 && c.d == 16 && c.tied && c.nope_mask[0] == 0x88 &&
	            c.local_mask[0] == 0 && c.window == 0 && c.act == REF_ACT_SILU);
	assert_float_equal(c.eps, 1e-6, 1e-15);
	assert_float_equal(c.theta, 2000000.0, 1e-6);
	/* a given list wins (booleans too); derived sliding layers are the NoPE ones */
	static const char list[] =
	    SM_JSON(", \"no_rope_layers\": [0, 1, true, false, 1, 1, 1, 1, 1], "
	            "\"use_sliding_window\": true, "
	            "\"sliding_window\": 16, \"tie_word_embeddings\": false");
	assert_int_equal(ref_cfg_parse_json(list, strlen(list), &c, &err), WT_OK);
	assert_true(c.nope_mask[0] == 0x9 && c.local_mask[0] == 0x9 && c.window == 16 && !c.tied);
	/* layer_types wins over the derivation, whatever use_sliding_window says */
	static const char lt[] = SM_JSON(
	    ", \"no_rope_layer_interval\": 2, \"sliding_window\": 5, \"layer_types\": "
	    "[\"sliding_attention\", \"full_attention\", \"full_attention\", \"full_attention\", "
	    "\"full_attention\", \"full_attention\", \"full_attention\", \"sliding_attention\"]");
	assert_int_equal(ref_cfg_parse_json(lt, strlen(lt), &c, &err), WT_OK);
	assert_true(c.nope_mask[0] == 0xaa && c.local_mask[0] == 0x81 && c.window == 5);
	expect_cfg(SM_JSON(", \"no_rope_layers\": [1, 1, 1]"), WT_ECORRUPT, "no_rope_layers");
	expect_cfg(SM_JSON(", \"no_rope_layers\": [1, 1, 1, \"0\", 1, 1, 1, 1]"), WT_ECORRUPT,
	           "no_rope_layers[3]");
	expect_cfg(SM_JSON(", \"no_rope_layer_interval\": 0"), WT_ECORRUPT,
	           "no_rope_layer_interval");
	expect_cfg(SM_JSON(", \"layer_types\": [\"full_attention\"]"), WT_ECORRUPT, "layer_types");
	expect_cfg(SM_JSON(", \"layer_types\": [\"sliding_attention\", \"full_attention\", "
	                   "\"full_attention\", \"full_attention\", \"full_attention\", "
	                   "\"full_attention\", \"full_attention\", \"full_attention\"]"),
	           WT_ECORRUPT, "sliding_window is null");
	expect_cfg(SM_JSON(", \"hidden_act\": \"relu\""), WT_EUNSUPPORTED, "hidden_act");
	expect_cfg(SM_JSON(", \"rope_scaling\": {\"rope_type\": \"longrope\", \"factor\": 2}"),
	           WT_EUNSUPPORTED, "longrope");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_smollm3_pass),   cmocka_unit_test(test_smollm3_transformers),
	    cmocka_unit_test(test_smollm3_caught), cmocka_unit_test(test_smollm3_switches),
	    cmocka_unit_test(test_smollm3_config),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
