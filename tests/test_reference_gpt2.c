/*
 * test_reference_gpt2.c — the reference forward pass over GPT-2 (GPT2LMHeadModel;
 * reference/gpt2.c): the learned positions transformer.wpe added to the embeddings, no RoPE,
 * LayerNorms with biases (ln_1, ln_2, ln_f), the Conv1D weights [in, out] of the checkpoint
 * transposed into nn.Linear's [out, in] (each rank's already so), c_attn as [q; k; v] with its
 * bias, c_proj with its bias, mlp.c_proj(gelu_new(mlp.c_fc(x))) with biases, lm_head tied to
 * wte. Full and sharded logits agree within REF_TOL_F32 (TP 1, 2, 4, 8) or the quantized
 * layouts' budgets; the full path's logits equal transformers 4.57.1's (eager, float32) at 28
 * points; rank tensors broken the way a wrong planner would break them are caught; each
 * switch moves the logits; config defaults and refusals. Fixture from $WT_BUILD/wt-mkckpt
 * --family gpt2 (hid 128, H 8, d 16, I 512, V 1000, 2 layers, 64 positions; seed printed).
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

#define V_G2 1000
#define H1   "transformer.h.1."

static int setup(void **state)
{
	(void)state;
	static const char *fams[] = {"gpt2"};
	return gen_fixtures("reference_gpt2", fams, 1);
}

static void test_gpt2_pass(void **state)
{
	(void)state;
	expect_pass_tp("gpt2", true);
	expect_pass("gpt2", 2, 1, WT_QUANT_FP8_BLOCK, 0);
}

/* (row, column, transformers 4.57.1 logit), tokens g_tokens */
static const gold_pt gold_gpt2[] = {
    {0, 623, -1.27326086e-01f}, {0, 683, -3.36356431e-01f}, {0, 897, 1.34203602e-02f},
    {0, 942, 3.93450521e-02f},  {1, 55, -6.41693128e-03f},  {1, 224, 1.18475474e-01f},
    {1, 285, -2.15255171e-01f}, {1, 299, 5.20574808e-01f},  {2, 131, -4.12710249e-01f},
    {2, 498, -2.14267429e-02f}, {2, 797, 1.09540060e-01f},  {2, 819, 1.95573736e-02f},
    {3, 278, -5.08864643e-03f}, {3, 302, 2.58752853e-01f},  {3, 340, 3.86951894e-01f},
    {3, 719, -1.41312420e-01f}, {4, 476, -2.42693245e-01f}, {4, 503, -4.91083562e-01f},
    {4, 553, 1.78531185e-03f},  {4, 581, 1.08264610e-01f},  {5, 341, 2.51714557e-01f},
    {5, 621, -4.30804789e-02f}, {5, 698, 2.07232445e-01f},  {5, 790, 4.62948650e-01f},
    {6, 159, -3.56404990e-01f}, {6, 612, -1.87316343e-01f}, {6, 842, 3.22196893e-02f},
    {6, 856, -2.21673727e-01f},
};

/* The full path's logits at the golden points, within 1e-5 (over all 7000 logits 6.9e-7
 * of max |logit| 0.85): the positions, the transposes, gelu_new and the biases each move
 * them by far more (test_gpt2_switches, test_gpt2_caught). */
#define GOLD_TOL 1e-5

static void test_gpt2_transformers(void **state)
{
	(void)state;
	expect_gold("gpt2", V_G2, GOLD_TOL, gold_gpt2, sizeof(gold_gpt2) / sizeof(gold_gpt2[0]));
}

/* BF16 tensor name of rank set r times f. */
static void scale_bf16(ref_set *r, const char *name, float f)
{
	ref_tensor *t = find_tensor(r, name);
	uint16_t *v = (uint16_t *)(void *)t->data;
	for (uint64_t i = 0; i < t->nbytes / 2; i++)
		v[i] = kern_f32_to_bf16(kern_bf16_to_f32(v[i]) * f);
}

static void tamper_wpe(void *ctx, ref_set *r, uint32_t n)
{
	(void)ctx; /* TP 2: rank 0's replicated positions times 3 */
	assert_int_equal(n, 2);
	scale_bf16(&r[0], "transformer.wpe.weight", 3.0f);
}

static void tamper_proj_bias(void *ctx, ref_set *r, uint32_t n)
{
	(void)ctx; /* TP 4: rank 0's attn.c_proj bias (added once) times 3 */
	assert_int_equal(n, 4);
	scale_bf16(&r[0], H1 "attn.c_proj.bias", 3.0f);
}

static void test_gpt2_caught(void **state)
{
	(void)state;
	expect_halves_swapped("gpt2", 2, 1,
	                      (tamper_halves){H1 "attn.c_attn.weight", 1, 1, 64, 128 * 2},
	                      "rank 1's q and k rows exchanged");
	expect_caught("gpt2", 2, 1, tamper_wpe, "rank 0's wpe x3");
	expect_caught("gpt2", 4, 1, tamper_proj_bias, "attn.c_proj bias x3 on rank 0");
	expect_swapped("gpt2", 2, 1, H1 "mlp.c_fc.bias", "c_fc bias slices exchanged");
}

/* Each switch moves the logits (the golden points above pin their values). */
static void test_gpt2_switches(void **state)
{
	(void)state;
	model m = {0};
	ref_set ck = {0};
	ref_cfg c;
	wt_errbuf err = {0};
	open_model(&m, "gpt2");
	assert_int_equal(ref_load_ckpt(m.c, &c, &ck, &err), WT_OK);
	assert_true(c.gpt2 && !c.neox && !c.neox_par && c.layernorm && c.plain_mlp &&
	            c.fused_ckpt && c.kind == REF_DENSE && c.tied && c.d == 16 && c.I == 512 &&
	            c.L == 2 && c.act == REF_ACT_GELU_TANH);
	assert_float_equal(c.eps, 1e-5, 1e-15);
	size_t n = N_TOK * V_G2;
	float *base = malloc(n * sizeof(float)), *lg = malloc(n * sizeof(float));
	assert_true(base && lg);
	logits_with(&c, &ck, base);
	ref_cfg off = c;
	off.act = REF_ACT_GELU;
	logits_with(&off, &ck, lg);
	expect_moved(base, lg, n, 1e-4, "exact gelu instead of gelu_new");
	off = c;
	off.eps = 1e-1;
	logits_with(&off, &ck, lg);
	expect_moved(base, lg, n, 1e-3, "layer_norm_epsilon 0.1");
	/* the learned positions dropped */
	ref_tensor *p = find_tensor(&ck, "transformer.wpe.weight");
	memset(p->data, 0, p->nbytes);
	free(p->f32);
	p->f32 = NULL;
	logits_with(&c, &ck, lg);
	expect_moved(base, lg, n, 1e-3, "wpe zero");
	free(base);
	free(lg);
	ref_set_clear(&ck);
	close_model(&m);
}

#define G2(extra)                                                                                  \
	"{\"architectures\": [\"GPT2LMHeadModel\"], \"model_type\": \"gpt2\", "                    \
	"\"n_embd\": 64, \"n_head\": 4, \"n_layer\": 2, \"vocab_size\": 100" extra "}"

static void test_gpt2_config(void **state)
{
	(void)state;
	ref_cfg c;
	wt_errbuf err = {0};
	/* GPT2Config's defaults: gelu_new, layer_norm_epsilon 1e-5, n_inner 4 * n_embd, tied */
	static const char plain[] = G2("");
	assert_int_equal(ref_cfg_parse_json(plain, strlen(plain), &c, &err), WT_OK);
	assert_true(c.gpt2 && !c.neox_par && c.tied && c.d == 16 && c.I == 256 &&
	            c.act == REF_ACT_GELU_TANH && c.KV == 4 && c.hid == 64 && c.H == 4);
	assert_float_equal(c.eps, 1e-5, 1e-12);
	static const char set[] = G2(", \"n_inner\": 96, \"layer_norm_epsilon\": 1e-6, "
	                             "\"activation_function\": \"gelu\", "
	                             "\"tie_word_embeddings\": false");
	assert_int_equal(ref_cfg_parse_json(set, strlen(set), &c, &err), WT_OK);
	assert_true(c.I == 96 && c.act == REF_ACT_GELU && !c.tied);
	assert_float_equal(c.eps, 1e-6, 1e-15);
	expect_cfg(G2(", \"activation_function\": \"relu6\""), WT_EUNSUPPORTED, "relu6");
	expect_cfg(G2(", \"layer_norm_epsilon\": -1.0"), WT_ECORRUPT, "layer_norm_eps");
	expect_cfg(G2(", \"scale_attn_by_inverse_layer_idx\": true"), WT_EUNSUPPORTED,
	           "scale_attn_by_inverse_layer_idx");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_gpt2_pass),   cmocka_unit_test(test_gpt2_transformers),
	    cmocka_unit_test(test_gpt2_caught), cmocka_unit_test(test_gpt2_switches),
	    cmocka_unit_test(test_gpt2_config),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
