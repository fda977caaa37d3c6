/*
 * test_reference_vaultgemma.c — the reference forward pass over VaultGemma
 * (VaultGemmaForCausalLM; reference/cfg.c, cfg_gemma.c): Gemma 2's decoder (embedding times
 * sqrt(hid), (1 + w) RMSNorms, query_pre_attn_scalar, attention and final logit soft-caps,
 * gelu_pytorch_tanh) without its post norms: x += attn(input_layernorm(x)),
 * x += mlp(pre_feedforward_layernorm(x)). Full and sharded logits agree within
 * REF_TOL_F32 (TP 1, 2, 4, 8) or the quantized layouts' budgets; the full path's logits
 * equal transformers 4.57.1's (eager, float32) at 28 points; rank tensors broken the way a
 * wrong planner would break them are caught; each switch moves the logits; config defaults.
 * Fixture from $WT_BUILD/wt-mkckpt --family vaultgemma (hid 256, H 8, KV 4, d 64, I 512,
 * V 1000, 2 layers, tied; seed printed).
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

#define V_VG 1000
#define L1   "model.layers.1."

static int setup(void **state)
{
	(void)state;
	static const char *fams[] = {"vaultgemma"};
	return gen_fixtures("reference_vaultgemma", fams, 1);
}

static void test_vaultgemma_pass(void **state)
{
	(void)state;
	expect_pass("vaultgemma", 1, 1, WT_QUANT_NONE, 0);
	expect_pass("vaultgemma", 2, 1, WT_QUANT_NONE, 0);
	expect_pass("vaultgemma", 4, 1, WT_QUANT_NONE, 0);
	expect_pass("vaultgemma", 8, 1, WT_QUANT_NONE, 0); /* KV 4 < TP 8 */
	expect_pass("vaultgemma", 2, 1, WT_QUANT_INT8_CHANNEL, 0);
	expect_pass("vaultgemma", 4, 1, WT_QUANT_FP8_CHANNEL, 0);
}

/* (row, column, transformers 4.57.1 logit), tokens g_tokens */
static const gold_pt gold_vg[] = {
    {0, 22, -2.52497852e-01f},  {0, 668, 4.17520821e-01f},  {0, 803, -9.10663977e-02f},
    {0, 807, 3.79004449e-01f},  {1, 53, 7.32460260e-01f},   {1, 277, -1.21270351e-01f},
    {1, 284, 7.88333058e-01f},  {1, 977, 2.42476359e-01f},  {2, 1, 1.04031658e+00f},
    {2, 45, 6.96864188e-01f},   {2, 48, 1.47855893e-01f},   {2, 130, 1.18257034e+00f},
    {3, 234, 5.14545679e-01f},  {3, 282, 5.10737896e-01f},  {3, 650, 4.63585198e-01f},
    {3, 748, -6.82608008e-01f}, {4, 177, 3.21783274e-01f},  {4, 796, 1.60053164e-01f},
    {4, 844, -2.86668539e-01f}, {4, 895, -1.98601499e-01f}, {5, 491, -4.03420687e-01f},
    {5, 662, 1.31375134e-01f},  {5, 664, 1.37788534e-01f},  {5, 676, -3.66531044e-01f},
    {6, 270, -4.42152321e-01f}, {6, 361, -1.66571379e-01f}, {6, 879, 2.90907383e-01f},
    {6, 900, -2.45126322e-01f},
};

/* The full path's logits at the golden points, within 1e-5 (over all 7000 logits 2.6e-6 of max
 * |logit| 5.7): the soft-caps and the (1 + w) norms each move them by far more
 * (test_vaultgemma_switches). */
#define GOLD_TOL 1e-5

static void test_vaultgemma_transformers(void **state)
{
	(void)state;
	const char *dump = getenv("WT_REF_DUMP"); /* the whole [7, V] logits, for a comparison */
	if (dump != NULL) {
		float *lg = malloc(N_TOK * V_VG * sizeof(float));
		assert_non_null(lg);
		ref_cfg c;
		full_logits("vaultgemma", lg, &c);
		FILE *f = fopen(dump, "wb");
		assert_non_null(f);
		assert_int_equal(fwrite(lg, sizeof(float), N_TOK * V_VG, f), N_TOK * V_VG);
		fclose(f);
		free(lg);
	}
	expect_gold("vaultgemma", V_VG, GOLD_TOL, gold_vg, sizeof(gold_vg) / sizeof(gold_vg[0]));
}

/* Set element i of a BF16 tensor to v. */
static void set_bf16_at(ref_tensor *t, int64_t i, float v)
{
	assert_int_equal(t->dtype, WT_BF16);
	assert_true(i >= 0 && (uint64_t)(i + 1) * 2 <= t->nbytes);
	uint16_t x = kern_f32_to_bf16(v);
	memcpy(t->data + i * 2, &x, sizeof(x));
}

static void tamper_pre_ff_norm(void *ctx, ref_set *r, uint32_t n)
{
	(void)ctx; /* TP 2: rank 1's pre_feedforward_layernorm replica off in one entry */
	assert_int_equal(n, 2);
	set_bf16_at(find_tensor(&r[1], L1 "pre_feedforward_layernorm.weight"), 7, 3.0f);
}

static void tamper_in_norm(void *ctx, ref_set *r, uint32_t n)
{
	(void)ctx; /* TP 2: rank 0's input_layernorm replica off in one entry */
	assert_int_equal(n, 2);
	set_bf16_at(find_tensor(&r[0], L1 "input_layernorm.weight"), 3, 3.0f);
}

static void test_vaultgemma_caught(void **state)
{
	(void)state;
	expect_caught("vaultgemma", 2, 1, tamper_pre_ff_norm, "rank 1's pre-MLP norm entry");
	expect_caught("vaultgemma", 2, 1, tamper_in_norm, "rank 0's input norm entry");
}

/* Each switch moves the logits (the golden points above pin their values). */
static void test_vaultgemma_switches(void **state)
{
	(void)state;
	model m = {0};
	ref_set ck = {0};
	ref_cfg c;
	wt_errbuf err = {0};
	open_model(&m, "vaultgemma");
	assert_int_equal(ref_load_ckpt(m.c, &c, &ck, &err), WT_OK);
	assert_true(c.vaultgemma && c.gemma == 2 && !c.sandwich && c.tied && c.d == 64 &&
	            c.L == 2 && c.kind == REF_DENSE);
	assert_float_equal(c.attn_cap, 50.0, 1e-9);
	assert_float_equal(c.final_cap, 30.0, 1e-9);
	size_t n = N_TOK * V_VG;
	float *base = malloc(n * sizeof(float)), *lg = malloc(n * sizeof(float));
	assert_true(base && lg);
	logits_with(&c, &ck, base);
	ref_cfg off = c;
	off.final_cap = 0.0;
	logits_with(&off, &ck, lg);
	expect_moved(base, lg, n, 1e-3, "no final soft-cap");
	off = c;
	off.attn_cap = 1.0;
	logits_with(&off, &ck, lg);
	expect_moved(base, lg, n, 1e-3, "attention soft-cap 1");
	off = c;
	off.norm_off = 0.0f;
	logits_with(&off, &ck, lg);
	expect_moved(base, lg, n, 1e-3, "norms by w, not 1 + w");
	free(base);
	free(lg);
	ref_set_clear(&ck);
	close_model(&m);
}

#define VG(extra)                                                                                  \
	"{\"architectures\": [\"VaultGemmaForCausalLM\"], \"model_type\": \"vaultgemma\", "        \
	"\"hidden_size\": 64, \"num_attention_heads\": 4, \"num_key_value_heads\": 2, "            \
	"\"head_dim\": 32, \"num_hidden_layers\": 2, \"vocab_size\": 100, "                        \
	"\"intermediate_size\": 96" extra "}"

static void test_vaultgemma_config(void **state)
{
	(void)state;
	ref_cfg c;
	wt_errbuf err = {0};
	/* VaultGemmaConfig's defaults (Gemma 2's): soft-caps 50 / 30, query_pre_attn_scalar 256,
	 * gelu_pytorch_tanh, tied */
	static const char plain[] = VG("");
	assert_int_equal(ref_cfg_parse_json(plain, strlen(plain), &c, &err), WT_OK);
	assert_true(c.vaultgemma && c.gemma == 2 && !c.sandwich && c.tied &&
	            c.act == REF_ACT_GELU_TANH);
	assert_float_equal(c.attn_cap, 50.0, 1e-9);
	assert_float_equal(c.final_cap, 30.0, 1e-9);
	assert_float_equal(c.attn_scale, 1.0 / 16.0, 1e-12);
	static const char set[] = VG(", \"attn_logit_softcapping\": null, "
	                             "\"final_logit_softcapping\": 10.0, "
	                             "\"query_pre_attn_scalar\": 64");
	assert_int_equal(ref_cfg_parse_json(set, strlen(set), &c, &err), WT_OK);
	assert_float_equal(c.attn_cap, 0.0, 1e-12);
	assert_float_equal(c.final_cap, 10.0, 1e-9);
	assert_float_equal(c.attn_scale, 0.125, 1e-12);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_vaultgemma_pass),
	    cmocka_unit_test(test_vaultgemma_transformers),
	    cmocka_unit_test(test_vaultgemma_caught),
	    cmocka_unit_test(test_vaultgemma_switches),
	    cmocka_unit_test(test_vaultgemma_config),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
