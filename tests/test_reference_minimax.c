/*
 * test_reference_minimax.c — the reference forward pass over MiniMax (MiniMaxForCausalLM;
 * reference/cfg_minimax.c, minimax.c): lightning-attention layers (silu(qkv_proj) per head
 * [q; k; v], the per-head slope decay recurrence, the RMSNorm over all heads, the
 * sigmoid(output_gate) gate, out_proj) beside a softmax-attention layer, Mixtral's MoE in
 * every layer and the residuals x = alpha * norm(x) + beta * branch. Full and sharded logits
 * agree within REF_TOL_F32 (TP 1, 2, 4, 8, EP 2 / 4, TP 2 x EP 2) or the quantized layouts'
 * budgets; the full path's logits equal transformers 4.57.1's (eager, float32) at 28 points;
 * rank tensors broken the way a wrong planner would break them are caught; config defaults
 * and refusals. Fixture from $WT_BUILD/wt-mkckpt --family minimax (hid 256, H 8, KV 4, d 32,
 * 4 experts of 128 top-2, V 1000, layers lightning, lightning, softmax, lightning; seed
 * printed).
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

#define V_MM 1000
#define A0   "model.layers.0.self_attn."

static int setup(void **state)
{
	(void)state;
	static const char *fams[] = {"minimax"};
	return gen_fixtures("reference_minimax", fams, 1);
}

static void test_minimax_pass(void **state)
{
	(void)state;
	expect_pass("minimax", 1, 1, WT_QUANT_NONE, 0);
	expect_pass("minimax", 2, 1, WT_QUANT_NONE, 0);
	expect_pass("minimax", 4, 1, WT_QUANT_NONE, 0);
	expect_pass("minimax", 8, 1, WT_QUANT_NONE, 0); /* KV 4 < TP 8 */
	expect_pass("minimax", 1, 2, WT_QUANT_NONE, 0);
	expect_pass("minimax", 2, 2, WT_QUANT_NONE, 1);
	expect_pass("minimax", 2, 1, WT_QUANT_INT8_CHANNEL, 0);
	expect_pass("minimax", 4, 1, WT_QUANT_FP8_CHANNEL, 0);
	expect_pass("minimax", 1, 2, WT_QUANT_FP8_BLOCK, 0);
}

/* (row, column, transformers 4.57.1 logit), tokens g_tokens */
static const gold_pt gold_minimax[] = {
    {0, 305, 4.40258116e-01f},  {0, 356, 8.06636512e-02f},  {0, 452, 5.08007407e-01f},
    {0, 861, -7.86212832e-02f}, {1, 1, 3.85624915e-01f},    {1, 104, -5.73575974e-01f},
    {1, 210, 5.39443493e-01f},  {1, 340, 1.26746252e-01f},  {2, 493, 9.07037854e-02f},
    {2, 619, 6.84021354e-01f},  {2, 785, 5.85804701e-01f},  {2, 998, -1.38809130e-01f},
    {3, 485, -2.41124123e-01f}, {3, 686, 2.84533650e-01f},  {3, 769, 4.11058068e-02f},
    {3, 795, 1.90492153e-01f},  {4, 6, 6.65209234e-01f},    {4, 278, -4.29765671e-01f},
    {4, 528, 5.93917727e-01f},  {4, 914, -1.13282941e-01f}, {5, 18, 2.98468657e-02f},
    {5, 53, 5.21660805e-01f},   {5, 806, 8.65861773e-03f},  {5, 936, -1.35479838e-01f},
    {6, 510, 3.60647023e-01f},  {6, 514, 7.34529942e-02f},  {6, 629, 6.44682795e-02f},
    {6, 945, -2.97381401e-01f},
};

/* The full path's logits at the golden points, within 1e-5 (over all 7000 logits 8.9e-7 of
 * max |logit| 1.32). */
#define GOLD_TOL 1e-5

static void test_minimax_transformers(void **state)
{
	(void)state;
	expect_gold("minimax", V_MM, GOLD_TOL, gold_minimax,
	            sizeof(gold_minimax) / sizeof(gold_minimax[0]));
}

/* BF16 tensor name of rank set r times f. */
static void scale_bf16(ref_set *r, const char *name, float f)
{
	ref_tensor *t = find_tensor(r, name);
	uint16_t *v = (uint16_t *)(void *)t->data;
	for (uint64_t i = 0; i < t->nbytes / 2; i++)
		v[i] = kern_f32_to_bf16(kern_bf16_to_f32(v[i]) * f);
}

static void tamper_norm_repl(void *ctx, ref_set *r, uint32_t n)
{
	(void)ctx; /* TP 2: both ranks' lightning norm the first half of the channels, as a
	              planner taking the norm for a replicated one (cut to size) would */
	assert_int_equal(n, 2);
	ref_tensor *a = find_tensor(&r[0], A0 "norm.weight"),
	           *b = find_tensor(&r[1], A0 "norm.weight");
	memcpy(b->data, a->data, a->nbytes);
}

static void tamper_qkv_heads(void *ctx, ref_set *r, uint32_t n)
{
	(void)ctx; /* TP 2: rank 1's qkv_proj heads in another order (its two halves, 2 heads of
	              [q; k; v] each, exchanged) */
	assert_int_equal(n, 2);
	swap_stack_halves(find_tensor(&r[1], A0 "qkv_proj.weight")->data, 1, 192, 256 * 2);
}

static void tamper_norm(void *ctx, ref_set *r, uint32_t n)
{
	(void)ctx; /* TP 4: rank 3's lightning norm times 2 */
	assert_int_equal(n, 4);
	scale_bf16(&r[3], A0 "norm.weight", 2.0f);
}

static void test_minimax_caught(void **state)
{
	(void)state;
	expect_caught("minimax", 2, 1, tamper_norm_repl, "lightning norm replicated");
	expect_caught("minimax", 2, 1, tamper_qkv_heads, "rank 1's qkv_proj heads exchanged");
	expect_swapped("minimax", 2, 1, A0 "output_gate.weight", "output_gate rows exchanged");
	expect_caught("minimax", 4, 1, tamper_norm, "rank 3's norm x2");
}

/* The loaded configuration, and that the golden points see what it sets. */
static void test_minimax_switches(void **state)
{
	(void)state;
	model m = {0};
	ref_set ck = {0};
	ref_cfg c;
	wt_errbuf err = {0};
	open_model(&m, "minimax");
	assert_int_equal(ref_load_ckpt(m.c, &c, &ck, &err), WT_OK);
	assert_true(c.minimax && c.kind == REF_MIXTRAL && !c.tied && c.d == 32 && c.L == 4 &&
	            c.E == 4 && c.topk == 2 && c.resid_mult == 0.0);
	for (int64_t l = 0; l < 4; l++)
		assert_int_equal(ref_mm_lin(&c, l), l != 2);
	for (int k = 0; k < 3; k++)
		assert_float_equal(c.mm_alpha[k], 3.5565588, 1e-9);
	size_t n = N_TOK * V_MM;
	float *base = malloc(n * sizeof(float)), *lg = malloc(n * sizeof(float));
	assert_true(base && lg);
	logits_with(&c, &ck, base);
	ref_cfg off = c;
	off.mm_alpha[1] = 1.0;
	logits_with(&off, &ck, lg);
	expect_moved(base, lg, n, 1e-3, "linear_attn_alpha_factor 1");
	off = c;
	off.mm_alpha[2] = 1.0;
	logits_with(&off, &ck, lg);
	expect_moved(base, lg, n, 1e-3, "mlp_alpha_factor 1");
	off = c;
	off.resid_mult = 1.3;
	logits_with(&off, &ck, lg);
	expect_moved(base, lg, n, 1e-3, "betas 1.3");
	off = c;
	off.mm_lin[0] = 0x2; /* only layer 1 lightning: layers 0 and 3 then need q/k/v */
	assert_int_not_equal(ref_forward_full(&off, &ck, g_tokens, N_TOK, lg, NULL, &err), WT_OK);
	free(base);
	free(lg);
	ref_set_clear(&ck);
	close_model(&m);
}

#define MM(extra)                                                                                  \
	"{\"architectures\": [\"MiniMaxForCausalLM\"], \"model_type\": \"minimax\", "              \
	"\"hidden_size\": 64, \"num_attention_heads\": 4, \"num_key_value_heads\": 2, "            \
	"\"intermediate_size\": 32, \"num_local_experts\": 4, \"num_hidden_layers\": 4, "          \
	"\"vocab_size\": 100" extra "}"

static void test_minimax_config(void **state)
{
	(void)state;
	ref_cfg c;
	wt_errbuf err = {0};
	/* MiniMaxConfig's defaults: layers full, linear, full, linear; factors 1; top-2; eps
	 * 1e-5; theta 1e6; untied */
	static const char plain[] = MM("");
	assert_int_equal(ref_cfg_parse_json(plain, strlen(plain), &c, &err), WT_OK);
	assert_true(c.minimax && !c.tied && c.topk == 2 && c.resid_mult == 0.0 && c.d == 16);
	for (int64_t l = 0; l < 4; l++)
		assert_int_equal(ref_mm_lin(&c, l), l % 2 == 1);
	for (int k = 0; k < 3; k++)
		assert_float_equal(c.mm_alpha[k], 1.0, 0.0);
	assert_float_equal(c.eps, 1e-5, 1e-12);
	assert_float_equal(c.theta, 1000000.0, 1e-6);
	/* layer_types and factors; equal betas carried as the residual multiplier */
	static const char lt[] =
	    MM(", \"layer_types\": [\"linear_attention\", \"linear_attention\", "
	       "\"full_attention\", \"linear_attention\"], \"full_attn_alpha_factor\": 2.0, "
	       "\"linear_attn_alpha_factor\": 3.0, \"mlp_alpha_factor\": 4.0, "
	       "\"full_attn_beta_factor\": 0.5, \"linear_attn_beta_factor\": 0.5, "
	       "\"mlp_beta_factor\": 0.5");
	assert_int_equal(ref_cfg_parse_json(lt, strlen(lt), &c, &err), WT_OK);
	for (int64_t l = 0; l < 4; l++)
		assert_int_equal(ref_mm_lin(&c, l), l != 2);
	assert_true(c.mm_alpha[0] == 2.0 && c.mm_alpha[1] == 3.0 && c.mm_alpha[2] == 4.0 &&
	            c.resid_mult == 0.5);
	expect_cfg(MM(", \"mlp_beta_factor\": 2.0"), WT_EUNSUPPORTED, "mlp_beta_factor 2");
	expect_cfg(MM(", \"layer_types\": [\"linear_attention\"]"), WT_ECORRUPT,
	           "layer_types has 1");
	expect_cfg(MM(", \"layer_types\": [\"linear_attention\", \"conv\", \"full_attention\", "
	              "\"full_attention\"]"),
	           WT_ECORRUPT, "layer_types[1]");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_minimax_pass),   cmocka_unit_test(test_minimax_transformers),
	    cmocka_unit_test(test_minimax_caught), cmocka_unit_test(test_minimax_switches),
	    cmocka_unit_test(test_minimax_config),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
