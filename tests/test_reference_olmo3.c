/*
 * test_reference_olmo3.c — the reference forward pass over OLMo 3 (Olmo3ForCausalLM;
 * reference/cfg_olmo3.c): OLMo 2's decoder (no input norms, post-attention and
 * post-feedforward norms, q_norm [H*d] / k_norm [KV*d] over all heads, replicated on
 * every rank) with layers 0-2 sliding (window 4 over 7 tokens, the default RoPE) and
 * layer 3 full (YaRN rope_scaling). Full and sharded logits agree within REF_TOL_F32
 * (TP 1, 2, 4, 8) or the quantized layouts' budgets; the full path's logits equal
 * transformers 4.57.1's (eager, float32) at 28 points; rank tensors broken the way a
 * wrong planner would break them are caught; each switch moves the logits; config
 * defaults and refusals. Fixture from $WT_BUILD/wt-mkckpt --family olmo3 (hid 256, H 8,
 * KV 2, d 32, I 512, V 1000, 4 layers; seed printed).
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

#define V_O3 1000
#define A1   "model.layers.1.self_attn."

static int setup(void **state)
{
	(void)state;
	static const char *fams[] = {"olmo3"};
	return gen_fixtures("reference_olmo3", fams, 1);
}

static void test_olmo3_pass(void **state)
{
	(void)state;
	expect_pass("olmo3", 1, 1, WT_QUANT_NONE, 0);
	expect_pass("olmo3", 2, 1, WT_QUANT_NONE, 0);
	expect_pass("olmo3", 4, 1, WT_QUANT_NONE, 0); /* KV 2 < TP 4 */
	expect_pass("olmo3", 8, 1, WT_QUANT_NONE, 0);
	expect_pass("olmo3", 2, 1, WT_QUANT_INT8_CHANNEL, 0);
	expect_pass("olmo3", 4, 1, WT_QUANT_FP8_CHANNEL, 0);
	expect_pass("olmo3", 2, 1, WT_QUANT_FP8_BLOCK, 0);
}

/* (row, column, transformers 4.57.1 logit), tokens g_tokens */
static const gold_pt gold_olmo3[] = {
    {0, 155, -1.84728593e-01f}, {0, 681, 4.11119521e-01f},  {0, 768, 2.78354615e-01f},
    {0, 990, -1.53776318e-01f}, {1, 21, -2.32061580e-01f},  {1, 555, 6.92974776e-02f},
    {1, 618, -7.59550743e-03f}, {1, 676, 1.38110429e-01f},  {2, 284, 5.54027557e-01f},
    {2, 456, 3.44358981e-02f},  {2, 481, -1.07944563e-01f}, {2, 583, -1.44271225e-01f},
    {3, 302, -5.15374601e-01f}, {3, 342, -2.30015099e-01f}, {3, 364, -2.91673183e-01f},
    {3, 857, 2.07736045e-01f},  {4, 504, -4.77395207e-01f}, {4, 560, -3.93060416e-01f},
    {4, 561, 2.10591480e-01f},  {4, 751, 2.97469556e-01f},  {5, 113, -2.05291033e-01f},
    {5, 119, 7.91755140e-01f},  {5, 364, -1.20889395e-01f}, {5, 720, 3.43791880e-02f},
    {6, 372, 2.86480963e-01f},  {6, 651, 1.65465400e-01f},  {6, 867, -1.06054276e-01f},
    {6, 958, -6.11135215e-02f},
};

/* The full path's logits at the golden points, within 1e-5 (measured 9.5e-7; over all
 * 7000 logits 1.6e-6 of max |logit| 1.35): the sliding window, YaRN on the full layer
 * only and the q/k norms each move them by far more (test_olmo3_switches). */
#define GOLD_TOL 1e-5

static void test_olmo3_transformers(void **state)
{
	(void)state;
	expect_gold("olmo3", V_O3, GOLD_TOL, gold_olmo3,
	            sizeof(gold_olmo3) / sizeof(gold_olmo3[0]));
}

/* BF16 tensor name of rank set r times f. */
static void scale_bf16(ref_set *r, const char *name, float f)
{
	ref_tensor *t = find_tensor(r, name);
	uint16_t *v = (uint16_t *)(void *)t->data;
	for (uint64_t i = 0; i < t->nbytes / 2; i++)
		v[i] = kern_f32_to_bf16(kern_bf16_to_f32(v[i]) * f);
}

static void tamper_qnorm_halves(void *ctx, ref_set *r, uint32_t n)
{
	(void)ctx; /* TP 2: rank 1's q_norm [256] with its halves exchanged (heads 4-7's
	              weights first), as a planner splitting it by rank and gluing would */
	assert_int_equal(n, 2);
	swap_stack_halves(find_tensor(&r[1], A1 "q_norm.weight")->data, 1, 128, 2);
}

static void tamper_knorm(void *ctx, ref_set *r, uint32_t n)
{
	(void)ctx; /* TP 4 (> KV 2): rank 3's k_norm replica times 2 */
	assert_int_equal(n, 4);
	scale_bf16(&r[3], A1 "k_norm.weight", 2.0f);
}

static void tamper_post_ff(void *ctx, ref_set *r, uint32_t n)
{
	(void)ctx; /* TP 2: rank 1's post_feedforward_layernorm replica times 2 (layer 3, the
	              full one) */
	assert_int_equal(n, 2);
	scale_bf16(&r[1], "model.layers.3.post_feedforward_layernorm.weight", 2.0f);
}

static void test_olmo3_caught(void **state)
{
	(void)state;
	expect_caught("olmo3", 2, 1, tamper_qnorm_halves, "rank 1's q_norm halves exchanged");
	expect_caught("olmo3", 4, 1, tamper_knorm, "k_norm replica x2 on rank 3");
	expect_caught("olmo3", 2, 1, tamper_post_ff, "post_feedforward_layernorm x2 on rank 1");
	expect_zeroed("olmo3", 2, 1, 1, "model.layers.0.self_attn.o_proj.weight",
	              "rank 1's o_proj slice dropped");
}

/* Each switch moves the logits (the golden points above pin their values). */
static void test_olmo3_switches(void **state)
{
	(void)state;
	model m = {0};
	ref_set ck = {0};
	ref_cfg c;
	wt_errbuf err = {0};
	open_model(&m, "olmo3");
	assert_int_equal(ref_load_ckpt(m.c, &c, &ck, &err), WT_OK);
	assert_true(c.olmo3 && c.olmo2 && c.qk_norm && c.qk_norm_full && c.sandwich &&
	            c.kind == REF_DENSE && !c.tied && !c.rope_pairs && c.d == 32 && c.L == 4);
	assert_int_equal(c.window, 4);
	assert_int_equal(c.window_pattern, 4);
	assert_float_equal(c.eps, 1e-6, 1e-15);
	assert_float_equal(c.theta, 500000.0, 1e-9);
	assert_float_equal(c.theta_local, 500000.0, 1e-9);
	assert_float_equal(c.rope_mscale, 1.2, 1e-12); /* attention_factor */
	assert_true(c.n_ext > 0);                      /* YaRN's divisors */
	size_t n = N_TOK * V_O3;
	float *base = malloc(n * sizeof(float)), *lg = malloc(n * sizeof(float));
	assert_true(base && lg);
	logits_with(&c, &ck, base);
	ref_cfg off = c;
	off.window = 0;
	logits_with(&off, &ck, lg);
	expect_moved(base, lg, n, 1e-3, "no sliding window");
	off = c;
	off.olmo3 = false; /* YaRN on the sliding layers too */
	logits_with(&off, &ck, lg);
	expect_moved(base, lg, n, 1e-3, "rope_scaling on the sliding layers");
	off = c;
	off.n_ext = 0;
	off.rope_mscale = 0.0;
	logits_with(&off, &ck, lg);
	expect_moved(base, lg, n, 1e-3, "rope_scaling ignored on the full layer");
	off = c;
	off.qk_norm = false;
	logits_with(&off, &ck, lg);
	expect_moved(base, lg, n, 1e-3, "no q/k norms");
	free(base);
	free(lg);
	ref_set_clear(&ck);
	close_model(&m);
}

#define O3(extra)                                                                                  \
	"{\"architectures\": [\"Olmo3ForCausalLM\"], \"model_type\": \"olmo3\", "                  \
	"\"hidden_size\": 64, \"num_attention_heads\": 4, \"num_key_value_heads\": 2, "            \
	"\"num_hidden_layers\": 8, \"vocab_size\": 100, \"intermediate_size\": 96" extra "}"
#define LT_ALL_FULL                                                                                \
	"[\"full_attention\", \"full_attention\", \"full_attention\", \"full_attention\", "        \
	"\"full_attention\", \"full_attention\", \"full_attention\", \"full_attention\"]"

static void test_olmo3_config(void **state)
{
	(void)state;
	ref_cfg c;
	wt_errbuf err = {0};
	/* Olmo3Config's defaults: sliding_window 4096, every 4th layer full, eps 1e-5, theta
	 * 10000, untied, silu */
	static const char plain[] = O3("");
	assert_int_equal(ref_cfg_parse_json(plain, strlen(plain), &c, &err), WT_OK);
	assert_true(c.olmo3 && c.olmo2 && c.qk_norm_full && !c.tied && c.window == 4096 &&
	            c.window_pattern == 4 && c.d == 16 && c.act == REF_ACT_SILU);
	assert_float_equal(c.eps, 1e-5, 1e-12);
	assert_float_equal(c.theta, 10000.0, 1e-9);
	/* layer_types, the window and linear scaling (full layers only) */
	static const char lt[] =
	    O3(", \"sliding_window\": 512, \"rope_scaling\": {\"rope_type\": \"linear\", "
	       "\"factor\": 4.0}, \"layer_types\": [\"sliding_attention\", \"full_attention\", "
	       "\"sliding_attention\", \"full_attention\", \"sliding_attention\", "
	       "\"full_attention\", \"sliding_attention\", \"full_attention\"]");
	assert_int_equal(ref_cfg_parse_json(lt, strlen(lt), &c, &err), WT_OK);
	assert_true(c.window == 512 && c.window_pattern == 2);
	assert_float_equal(c.rope_factor[0], 4.0, 0.0);
	assert_float_equal(c.rope_factor[1], 0.0, 0.0);
	/* every layer full: no window needed, none applied */
	static const char full[] = O3(", \"sliding_window\": null, \"layer_types\": " LT_ALL_FULL);
	assert_int_equal(ref_cfg_parse_json(full, strlen(full), &c, &err), WT_OK);
	assert_int_equal(c.window, 0);
	expect_cfg(O3(", \"sliding_window\": null"), WT_EUNSUPPORTED, "sliding_window is null");
	expect_cfg(O3(", \"sliding_window\": 0"), WT_EUNSUPPORTED, "positive window");
	expect_cfg(O3(", \"layer_types\": [\"full_attention\", \"sliding_attention\", "
	              "\"sliding_attention\", \"sliding_attention\", \"full_attention\", "
	              "\"sliding_attention\", \"sliding_attention\", \"sliding_attention\"]"),
	           WT_EUNSUPPORTED, "layer_types[1]");
	expect_cfg(O3(", \"hidden_act\": \"relu\""), WT_EUNSUPPORTED, "hidden_act");
	expect_cfg(O3(", \"rope_scaling\": {\"rope_type\": \"longrope\", \"factor\": 2}"),
	           WT_EUNSUPPORTED, "longrope");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_olmo3_pass),   cmocka_unit_test(test_olmo3_transformers),
	    cmocka_unit_test(test_olmo3_caught), cmocka_unit_test(test_olmo3_switches),
	    cmocka_unit_test(test_olmo3_config),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
