/*
 * test_reference_lfm2.c — the reference forward pass over LFM2 (Lfm2ForCausalLM;
 * reference/cfg_lfm2.c, lfm2.c): short-conv layers (in_proj [B; C; x], y = C * causal
 * depthwise conv(B * x), out_proj) and an attention layer (q/k layernorms per head, RoPE,
 * out_proj), each with the SwiGLU feed_forward (w1 / w3 / w2, the size from block_ff_dim by
 * Lfm2MLP's rule), model.embedding_norm last, tied. Full and sharded logits agree within
 * REF_TOL_F32 (TP 1, 2, 4, 8) or the quantized layouts' budgets; the full path's logits
 * equal transformers 4.57.1's (eager, float32) at 28 points; rank tensors broken the way a
 * wrong planner would break them are caught; config defaults and refusals. Fixture from
 * $WT_BUILD/wt-mkckpt --family lfm2 (hid 256, H 8, KV 4, d 32, MLP 512, conv 3 taps,
 * V 1000, layers conv, conv, attention, conv; seed printed).
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

#define V_LF 1000
#define S0   "model.layers.0.short_conv."
#define A2   "model.layers.2.self_attn."

static int setup(void **state)
{
	(void)state;
	static const char *fams[] = {"lfm2"};
	return gen_fixtures("reference_lfm2", fams, 1);
}

static void test_lfm2_pass(void **state)
{
	(void)state;
	expect_pass("lfm2", 1, 1, WT_QUANT_NONE, 0);
	expect_pass("lfm2", 2, 1, WT_QUANT_NONE, 0);
	expect_pass("lfm2", 4, 1, WT_QUANT_NONE, 0);
	expect_pass("lfm2", 8, 1, WT_QUANT_NONE, 0); /* KV 4 < TP 8 */
	expect_pass("lfm2", 2, 1, WT_QUANT_INT8_CHANNEL, 0);
	expect_pass("lfm2", 4, 1, WT_QUANT_FP8_CHANNEL, 0);
	expect_pass("lfm2", 2, 1, WT_QUANT_FP8_BLOCK, 0);
}

/* (row, column, transformers 4.57.1 logit), tokens g_tokens */
static const gold_pt gold_lfm2[] = {
    {0, 22, -7.85011768e-01f},  {0, 668, 2.05805749e-01f},  {0, 803, -4.54383582e-01f},
    {0, 807, -1.95395470e-01f}, {1, 53, -2.53557771e-01f},  {1, 277, 1.51306745e-02f},
    {1, 284, 9.12462696e-02f},  {1, 977, 1.61504745e-01f},  {2, 1, 4.61612999e-01f},
    {2, 45, -2.02103734e-01f},  {2, 48, -4.24851030e-01f},  {2, 130, 2.08799601e-01f},
    {3, 234, 2.85851479e-01f},  {3, 282, 3.23911849e-03f},  {3, 650, 9.25700366e-03f},
    {3, 748, 4.20263857e-01f},  {4, 177, 2.11485088e-01f},  {4, 796, -6.35382235e-02f},
    {4, 844, -3.07908118e-01f}, {4, 895, 5.13298392e-01f},  {5, 491, 2.44053304e-01f},
    {5, 662, 1.40280634e-01f},  {5, 664, 1.13949150e-01f},  {5, 676, 7.45458066e-01f},
    {6, 270, -2.15552434e-01f}, {6, 361, -2.30821639e-01f}, {6, 879, -1.07974038e-01f},
    {6, 900, -2.13184953e-03f},
};

/* The full path's logits at the golden points, within 1e-5 (measured 9.8e-7; over all
 * 7000 logits 2.2e-6 of max |logit| 1.21, transformers' own float32 vs float64 1.5e-6). */
#define GOLD_TOL 1e-5

static void test_lfm2_transformers(void **state)
{
	(void)state;
	expect_gold("lfm2", V_LF, GOLD_TOL, gold_lfm2, sizeof(gold_lfm2) / sizeof(gold_lfm2[0]));
}

/* BF16 tensor name of rank set r times f. */
static void scale_bf16(ref_set *r, const char *name, float f)
{
	ref_tensor *t = find_tensor(r, name);
	uint16_t *v = (uint16_t *)(void *)t->data;
	for (uint64_t i = 0; i < t->nbytes / 2; i++)
		v[i] = kern_f32_to_bf16(kern_bf16_to_f32(v[i]) * f);
}

static void tamper_in_proj(void *ctx, ref_set *r, uint32_t n)
{
	(void)ctx; /* TP 2: rank 1's in_proj [B_r; C_r; x_r] with B_r and C_r exchanged, as a
	              planner taking the segments in another order would */
	assert_int_equal(n, 2);
	swap_stack_halves(find_tensor(&r[1], S0 "in_proj.weight")->data, 1, 128, 256 * 2);
}

static void tamper_in_proj_block(void *ctx, ref_set *r, uint32_t n)
{
	(void)ctx; /* TP 2: rank r's in_proj rows [r*384, (r+1)*384) of the whole [B; C; x], as a
	              planner splitting it as one block would: rank 0 then holds B and the first
	              half of C, rank 1 the rest of C and x */
	assert_int_equal(n, 2);
	uint16_t *a = (uint16_t *)(void *)find_tensor(&r[0], S0 "in_proj.weight")->data;
	uint16_t *b = (uint16_t *)(void *)find_tensor(&r[1], S0 "in_proj.weight")->data;
	size_t row = 256, seg = 128 * row;
	uint16_t *all = malloc(6 * seg * 2);
	assert_non_null(all);
	for (int k = 0; k < 3; k++) { /* back to [B; C; x] */
		memcpy(all + (2 * k) * seg, a + k * seg, seg * 2);
		memcpy(all + (2 * k + 1) * seg, b + k * seg, seg * 2);
	}
	memcpy(a, all, 3 * seg * 2);
	memcpy(b, all + 3 * seg, 3 * seg * 2);
	free(all);
}

static void tamper_conv_taps(void *ctx, ref_set *r, uint32_t n)
{
	(void)ctx; /* TP 4: rank 2's conv taps reversed per channel */
	assert_int_equal(n, 4);
	ref_tensor *t = find_tensor(&r[2], S0 "conv.weight");
	uint16_t *v = (uint16_t *)(void *)t->data;
	for (uint64_t ch = 0; ch < t->nbytes / 6; ch++) {
		uint16_t x = v[ch * 3];
		v[ch * 3] = v[ch * 3 + 2];
		v[ch * 3 + 2] = x;
	}
}

static void tamper_qln(void *ctx, ref_set *r, uint32_t n)
{
	(void)ctx; /* TP 2: rank 1's q_layernorm replica times 2 */
	assert_int_equal(n, 2);
	scale_bf16(&r[1], A2 "q_layernorm.weight", 2.0f);
}

static void test_lfm2_caught(void **state)
{
	(void)state;
	expect_caught("lfm2", 2, 1, tamper_in_proj, "rank 1's in_proj B and C exchanged");
	expect_caught("lfm2", 2, 1, tamper_in_proj_block, "in_proj split as one block");
	expect_caught("lfm2", 4, 1, tamper_conv_taps, "rank 2's conv taps reversed");
	expect_swapped("lfm2", 2, 1, S0 "out_proj.weight", "short_conv.out_proj columns exchanged");
	expect_caught("lfm2", 2, 1, tamper_qln, "q_layernorm x2 on rank 1");
	expect_halves_swapped(
	    "lfm2", 2, 1,
	    (tamper_halves){"model.layers.1.feed_forward.w13.weight", 1, 1, 256, 256 * 2},
	    "rank 1's w13 gate / up exchanged");
}

/* The loaded configuration, and that the golden points see what it sets. */
static void test_lfm2_switches(void **state)
{
	(void)state;
	model m = {0};
	ref_set ck = {0};
	ref_cfg c;
	wt_errbuf err = {0};
	open_model(&m, "lfm2");
	assert_int_equal(ref_load_ckpt(m.c, &c, &ck, &err), WT_OK);
	assert_true(c.lfm2 && c.kind == REF_DENSE && c.tied && !c.lfm2_conv_bias && c.d == 32 &&
	            c.L == 4 && c.I == 512 && c.lfm2_kconv == 3 && c.norm_off == 0.0f);
	for (int64_t l = 0; l < 4; l++)
		assert_int_equal(ref_lfm2_conv(&c, l), l != 2);
	assert_float_equal(c.eps, 1e-5, 1e-15);
	assert_float_equal(c.theta, 1000000.0, 1e-6);
	size_t n = N_TOK * V_LF;
	float *base = malloc(n * sizeof(float)), *lg = malloc(n * sizeof(float));
	assert_true(base && lg);
	logits_with(&c, &ck, base);
	ref_cfg off = c;
	off.norm_off = 1.0f;
	logits_with(&off, &ck, lg);
	expect_moved(base, lg, n, 1e-3, "zero-centred norms");
	off = c;
	off.theta = 10000.0;
	logits_with(&off, &ck, lg);
	expect_moved(base, lg, n, 1e-3, "rope_theta 1e4");
	free(base);
	free(lg);
	ref_set_clear(&ck);
	close_model(&m);
}

#define LF(extra)                                                                                  \
	"{\"architectures\": [\"Lfm2ForCausalLM\"], \"model_type\": \"lfm2\", "                    \
	"\"hidden_size\": 64, \"num_attention_heads\": 4, \"num_key_value_heads\": 2, "            \
	"\"num_hidden_layers\": 4, \"vocab_size\": 100" extra "}"

static void test_lfm2_config(void **state)
{
	(void)state;
	ref_cfg c;
	wt_errbuf err = {0};
	/* Lfm2Config's defaults: every layer attention, MLP 12288 -> 8192, eps 1e-5, theta 1e6,
	 * tied, conv 3 taps without biases */
	static const char plain[] = LF("");
	assert_int_equal(ref_cfg_parse_json(plain, strlen(plain), &c, &err), WT_OK);
	assert_true(c.lfm2 && c.tied && c.I == 8192 && c.lfm2_kconv == 3 && !c.lfm2_conv_bias &&
	            c.d == 16);
	for (int64_t l = 0; l < 4; l++)
		assert_false(ref_lfm2_conv(&c, l));
	assert_float_equal(c.eps, 1e-5, 1e-12);
	assert_float_equal(c.theta, 1000000.0, 1e-6);
	/* full_attn_idxs without layer_types; the original key names */
	static const char idx[] =
	    LF(", \"full_attn_idxs\": [1, 3], \"block_ff_dim\": 300, \"intermediate_size\": 900, "
	       "\"theta\": 5000.0, \"tie_embedding\": false, \"norm_eps\": 1e-6, "
	       "\"conv_bias\": true, \"conv_L_cache\": 4, \"block_multiple_of\": 64");
	assert_int_equal(ref_cfg_parse_json(idx, strlen(idx), &c, &err), WT_OK);
	for (int64_t l = 0; l < 4; l++)
		assert_int_equal(ref_lfm2_conv(&c, l), l % 2 == 0);
	assert_true(!c.tied && c.I == 256 && c.lfm2_kconv == 4 && c.lfm2_conv_bias);
	assert_float_equal(c.theta, 5000.0, 1e-9);
	assert_float_equal(c.eps, 1e-6, 1e-15);
	/* layer_types wins over full_attn_idxs */
	static const char lt[] = LF(", \"full_attn_idxs\": [0], \"layer_types\": [\"conv\", "
	                            "\"full_attention\", \"conv\", \"conv\"]");
	assert_int_equal(ref_cfg_parse_json(lt, strlen(lt), &c, &err), WT_OK);
	for (int64_t l = 0; l < 4; l++)
		assert_int_equal(ref_lfm2_conv(&c, l), l != 1);
	expect_cfg(LF(", \"layer_types\": [\"conv\", \"conv\"]"), WT_ECORRUPT, "layer_types has 2");
	expect_cfg(LF(", \"layer_types\": [\"conv\", \"sliding_attention\", \"conv\", \"conv\"]"),
	           WT_ECORRUPT, "layer_types[1]");
	expect_cfg(LF(", \"rope_scaling\": {\"rope_type\": \"longrope\", \"factor\": 2}"),
	           WT_EUNSUPPORTED, "longrope");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_lfm2_pass),   cmocka_unit_test(test_lfm2_transformers),
	    cmocka_unit_test(test_lfm2_caught), cmocka_unit_test(test_lfm2_switches),
	    cmocka_unit_test(test_lfm2_config),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
