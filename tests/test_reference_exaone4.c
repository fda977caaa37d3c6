/*
 * test_reference_exaone4.c — the reference forward pass over EXAONE 4.0
 * (Exaone4ForCausalLM; reference/cfg_olmo3.c): OLMo 2's block (no input norms, post-attention
 * and post-feedforward norms) with Qwen3's per-head q_norm / k_norm [d] replicated on every
 * rank, layers 0-2 sliding (window 4 over 7 tokens, llama3-scaled RoPE) and layer 3 full
 * without RoPE (global NoPE), tied. Full and sharded logits agree within REF_TOL_F32 (TP 1,
 * 2, 4, 8) or the quantized layouts' budgets; the full path's logits equal transformers
 * 4.57.1's (eager, float32) at 28 points; rank tensors broken the way a wrong planner would
 * break them are caught; each switch moves the logits; config defaults and refusals.
 * Fixture from $WT_BUILD/wt-mkckpt --family exaone4 (hid 256, H 8, KV 2, d 32, I 512,
 * V 1000, 4 layers; seed printed).
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

#define V_EX 1000
#define A1   "model.layers.1.self_attn."

static int setup(void **state)
{
	(void)state;
	static const char *fams[] = {"exaone4"};
	return gen_fixtures("reference_exaone4", fams, 1);
}

static void test_exaone4_pass(void **state)
{
	(void)state;
	expect_pass("exaone4", 1, 1, WT_QUANT_NONE, 0);
	expect_pass("exaone4", 2, 1, WT_QUANT_NONE, 0);
	expect_pass("exaone4", 4, 1, WT_QUANT_NONE, 0); /* KV 2 < TP 4 */
	expect_pass("exaone4", 8, 1, WT_QUANT_NONE, 0);
	expect_pass("exaone4", 2, 1, WT_QUANT_INT8_CHANNEL, 0);
	expect_pass("exaone4", 2, 1, WT_QUANT_FP8_BLOCK, 0);
	expect_pass("exaone4", 8, 1, WT_QUANT_FP8_BLOCK, 0);
	/* fp8-channel measures 0.135 (TP 4) / 0.142 (TP 2) of the largest logit on this random
	 * model, above the scheme's 0.12 (the post norms rescale small block outputs, their
	 * rounding error with them); its slicing is the unquantized layout's, checked above */
}

/* (row, column, transformers 4.57.1 logit), tokens g_tokens */
static const gold_pt gold_exaone4[] = {
    {0, 155, 9.35215726e-02f},  {0, 681, 1.48214534e-01f},  {0, 768, 2.12281883e-01f},
    {0, 990, -2.53545165e-01f}, {1, 21, 2.40846664e-01f},   {1, 555, 1.96282580e-01f},
    {1, 618, 3.56621519e-02f},  {1, 676, 2.72364736e-01f},  {2, 284, -5.25067210e-01f},
    {2, 456, -4.33033109e-02f}, {2, 481, -2.07359791e-01f}, {2, 583, 6.23431802e-03f},
    {3, 302, -4.12337184e-02f}, {3, 342, -3.88908461e-02f}, {3, 364, 9.02197659e-02f},
    {3, 857, -1.38954699e-01f}, {4, 504, 3.80163252e-01f},  {4, 560, 1.42846078e-01f},
    {4, 561, -9.03736055e-03f}, {4, 751, 1.63558573e-01f},  {5, 113, 1.50043696e-01f},
    {5, 119, 5.32689095e-01f},  {5, 364, 2.64375925e-01f},  {5, 720, 3.21964562e-01f},
    {6, 372, -4.17647064e-01f}, {6, 651, 3.93877268e-01f},  {6, 867, -4.27830994e-01f},
    {6, 958, 5.15158653e-01f},
};

/* The full path's logits at the golden points, within 1e-5 (measured 1.1e-6; over all
 * 7000 logits 1.9e-6 of max |logit| 1.39): the sliding window, the global layer's NoPE,
 * llama3 scaling and the q/k norms each move them by far more (test_exaone4_switches). */
#define GOLD_TOL 1e-5

static void test_exaone4_transformers(void **state)
{
	(void)state;
	expect_gold("exaone4", V_EX, GOLD_TOL, gold_exaone4,
	            sizeof(gold_exaone4) / sizeof(gold_exaone4[0]));
}

/* BF16 tensor name of rank set r times f. */
static void scale_bf16(ref_set *r, const char *name, float f)
{
	ref_tensor *t = find_tensor(r, name);
	uint16_t *v = (uint16_t *)(void *)t->data;
	for (uint64_t i = 0; i < t->nbytes / 2; i++)
		v[i] = kern_f32_to_bf16(kern_bf16_to_f32(v[i]) * f);
}

static void tamper_knorm(void *ctx, ref_set *r, uint32_t n)
{
	(void)ctx; /* TP 4 (> KV 2): rank 3's k_norm replica times 2 */
	assert_int_equal(n, 4);
	scale_bf16(&r[3], A1 "k_norm.weight", 2.0f);
}

static void tamper_post_attn(void *ctx, ref_set *r, uint32_t n)
{
	(void)ctx; /* TP 2: rank 1's post_attention_layernorm replica of the NoPE layer x2 */
	assert_int_equal(n, 2);
	scale_bf16(&r[1], "model.layers.3.post_attention_layernorm.weight", 2.0f);
}

static void tamper_embed(void *ctx, ref_set *r, uint32_t n)
{
	(void)ctx; /* TP 2, tied: rank 1's embedding rows (its vocabulary half, also the LM
	              head's) times 2 */
	assert_int_equal(n, 2);
	scale_bf16(&r[1], "model.embed_tokens.weight", 2.0f);
}

static void test_exaone4_caught(void **state)
{
	(void)state;
	expect_halves_swapped("exaone4", 2, 1, (tamper_halves){A1 "q_norm.weight", 1, 1, 16, 2},
	                      "rank 1's q_norm halves exchanged");
	expect_caught("exaone4", 4, 1, tamper_knorm, "k_norm replica x2 on rank 3");
	expect_caught("exaone4", 2, 1, tamper_post_attn, "post_attention_layernorm x2 on rank 1");
	expect_caught("exaone4", 2, 1, tamper_embed, "tied embedding x2 on rank 1");
}

/* Each switch moves the logits (the golden points above pin their values). */
static void test_exaone4_switches(void **state)
{
	(void)state;
	model m = {0};
	ref_set ck = {0};
	ref_cfg c;
	wt_errbuf err = {0};
	open_model(&m, "exaone4");
	assert_int_equal(ref_load_ckpt(m.c, &c, &ck, &err), WT_OK);
	assert_true(c.exaone4 && c.nope_global && c.olmo2 && c.qk_norm && !c.qk_norm_full &&
	            !c.olmo3 && c.sandwich && c.kind == REF_DENSE && c.tied && !c.rope_pairs &&
	            c.d == 32 && c.L == 4);
	assert_int_equal(c.window, 4);
	assert_int_equal(c.window_pattern, 4);
	assert_float_equal(c.eps, 1e-5, 1e-12);
	assert_float_equal(c.theta, 1000000.0, 1e-6);
	assert_true(c.n_ext > 0); /* llama3's divisors */
	size_t n = N_TOK * V_EX;
	float *base = malloc(n * sizeof(float)), *lg = malloc(n * sizeof(float));
	assert_true(base && lg);
	logits_with(&c, &ck, base);
	ref_cfg off = c;
	off.window = 0; /* no window, and RoPE on every layer */
	off.nope_global = false;
	logits_with(&off, &ck, lg);
	expect_moved(base, lg, n, 1e-3, "no sliding window");
	off = c;
	off.nope_global = false;
	logits_with(&off, &ck, lg);
	expect_moved(base, lg, n, 1e-3, "RoPE on the global layer");
	off = c;
	off.n_ext = 0;
	logits_with(&off, &ck, lg);
	expect_moved(base, lg, n, 1e-4, "llama3 scaling ignored"); /* low frequencies only */
	off = c;
	off.qk_norm = false;
	logits_with(&off, &ck, lg);
	expect_moved(base, lg, n, 1e-3, "no q/k norms");
	free(base);
	free(lg);
	ref_set_clear(&ck);
	close_model(&m);
}

#define EX(extra)                                                                                  \
	"{\"architectures\": [\"Exaone4ForCausalLM\"], \"model_type\": \"exaone4\", "              \
	"\"hidden_size\": 64, \"num_attention_heads\": 4, \"num_key_value_heads\": 2, "            \
	"\"num_hidden_layers\": 8, \"vocab_size\": 100, \"intermediate_size\": 96" extra "}"
#define LT_ALL_FULL                                                                                \
	"[\"full_attention\", \"full_attention\", \"full_attention\", \"full_attention\", "        \
	"\"full_attention\", \"full_attention\", \"full_attention\", \"full_attention\"]"

static void test_exaone4_config(void **state)
{
	(void)state;
	ref_cfg c;
	wt_errbuf err = {0};
	/* Exaone4Config's defaults: sliding_window 4096, every 4th layer full (NoPE), eps 1e-5,
	 * theta 10000, untied, silu */
	static const char plain[] = EX("");
	assert_int_equal(ref_cfg_parse_json(plain, strlen(plain), &c, &err), WT_OK);
	assert_true(c.exaone4 && c.nope_global && c.qk_norm && !c.qk_norm_full && !c.tied &&
	            c.window == 4096 && c.window_pattern == 4 && c.d == 16 &&
	            c.act == REF_ACT_SILU);
	assert_float_equal(c.eps, 1e-5, 1e-12);
	assert_float_equal(c.theta, 10000.0, 1e-9);
	/* an integer pattern without layer_types; linear scaling on every RoPE layer */
	static const char pat[] =
	    EX(", \"sliding_window\": 512, \"sliding_window_pattern\": 2, \"rope_scaling\": "
	       "{\"rope_type\": \"linear\", \"factor\": 4.0}, \"tie_word_embeddings\": true");
	assert_int_equal(ref_cfg_parse_json(pat, strlen(pat), &c, &err), WT_OK);
	assert_true(c.window == 512 && c.window_pattern == 2 && c.tied);
	assert_float_equal(c.rope_factor[0], 4.0, 0.0);
	assert_float_equal(c.rope_factor[1], 4.0, 0.0);
	/* "LLLG" with layer_types: the list decides */
	static const char str[] =
	    EX(", \"sliding_window_pattern\": \"LLLG\", \"layer_types\": [\"sliding_attention\", "
	       "\"full_attention\", \"sliding_attention\", \"full_attention\", "
	       "\"sliding_attention\", \"full_attention\", \"sliding_attention\", "
	       "\"full_attention\"]");
	assert_int_equal(ref_cfg_parse_json(str, strlen(str), &c, &err), WT_OK);
	assert_true(c.window == 4096 && c.window_pattern == 2 && c.nope_global);
	/* sliding_window null, every layer full: no window, RoPE on every layer */
	static const char full[] = EX(", \"sliding_window\": null, \"layer_types\": " LT_ALL_FULL);
	assert_int_equal(ref_cfg_parse_json(full, strlen(full), &c, &err), WT_OK);
	assert_true(c.window == 0 && !c.nope_global);
	/* a window with every layer full: NoPE everywhere, as Exaone4Attention does */
	static const char nope[] = EX(", \"layer_types\": " LT_ALL_FULL);
	assert_int_equal(ref_cfg_parse_json(nope, strlen(nope), &c, &err), WT_OK);
	assert_true(c.window == 0 && c.nope_global);
	expect_cfg(EX(", \"sliding_window\": null"), WT_EUNSUPPORTED, "zero pattern");
	expect_cfg(EX(", \"sliding_window_pattern\": \"LLLG\""), WT_EUNSUPPORTED,
	           "sliding_window_pattern is not a positive integer");
	expect_cfg(EX(", \"sliding_window_pattern\": 0"), WT_EUNSUPPORTED,
	           "sliding_window_pattern");
	expect_cfg(EX(", \"sliding_window\": null, \"layer_types\": [\"sliding_attention\", "
	              "\"full_attention\", \"sliding_attention\", \"full_attention\", "
	              "\"sliding_attention\", \"full_attention\", \"sliding_attention\", "
	              "\"full_attention\"]"),
	           WT_EUNSUPPORTED, "sliding_window is null");
	expect_cfg(EX(", \"layer_types\": [\"full_attention\", \"sliding_attention\", "
	              "\"sliding_attention\", \"sliding_attention\", \"full_attention\", "
	              "\"sliding_attention\", \"sliding_attention\", \"sliding_attention\"]"),
	           WT_EUNSUPPORTED, "layer_types[1]");
	expect_cfg(EX(", \"hidden_act\": \"relu\""), WT_EUNSUPPORTED, "hidden_act");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_exaone4_pass),   cmocka_unit_test(test_exaone4_transformers),
	    cmocka_unit_test(test_exaone4_caught), cmocka_unit_test(test_exaone4_switches),
	    cmocka_unit_test(test_exaone4_config),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
