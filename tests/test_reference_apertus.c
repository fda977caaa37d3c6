/*
 * test_reference_apertus.c — the reference forward pass over Apertus (ApertusForCausalLM;
 * reference/cfg_apertus.c, nogate.c): attention_layernorm before Llama's attention with
 * per-head q_norm / k_norm, feedforward_layernorm before an MLP without a gate,
 * down_proj(xielu(up_proj(x))), whose per-layer scalars act_fn.alpha_p / alpha_n / beta /
 * eps every rank holds whole; ApertusConfig's default llama3 rope_scaling (the fixture
 * leaves the key out). Full and sharded logits agree within REF_TOL_F32 (TP 1, 2, 4, 8) or
 * the quantized layouts' budgets; the full path's logits equal transformers 4.57.1's
 * (eager, float32) at 28 points; rank tensors broken the way a wrong planner would break
 * them are caught; each switch moves the logits; config defaults and refusals. Fixture
 * from $WT_BUILD/wt-mkckpt --family apertus (hid 256, H 8, KV 2, d 32, I 512, V 1000, 4
 * layers; layer 3's eps -0.076 makes the clamp of the negative branch bite; seed printed).
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

#define V_AP 1000
#define M1   "model.layers.1.mlp."

static int setup(void **state)
{
	(void)state;
	static const char *fams[] = {"apertus"};
	return gen_fixtures("reference_apertus", fams, 1);
}

static void test_apertus_pass(void **state)
{
	(void)state;
	expect_pass("apertus", 1, 1, WT_QUANT_NONE, 0);
	expect_pass("apertus", 2, 1, WT_QUANT_NONE, 0);
	expect_pass("apertus", 4, 1, WT_QUANT_NONE, 0); /* KV 2 < TP 4 */
	expect_pass("apertus", 8, 1, WT_QUANT_NONE, 0);
	expect_pass("apertus", 2, 1, WT_QUANT_INT8_CHANNEL, 0);
	expect_pass("apertus", 4, 1, WT_QUANT_FP8_CHANNEL, 0);
	expect_pass("apertus", 2, 1, WT_QUANT_FP8_BLOCK, 0);
}

/* (row, column, transformers 4.57.1 logit), tokens g_tokens */
static const gold_pt gold_apertus[] = {
    {0, 217, 2.74902582e-03f},  {0, 499, -6.35167599e-01f}, {0, 786, 2.04734385e-01f},
    {0, 930, -2.12188199e-01f}, {1, 331, 1.92223191e-01f},  {1, 598, -2.01432243e-01f},
    {1, 831, -3.88636559e-01f}, {1, 877, 2.37179831e-01f},  {2, 151, 1.23534845e-02f},
    {2, 181, 1.57610103e-02f},  {2, 933, 5.69181368e-02f},  {2, 944, 4.08159405e-01f},
    {3, 525, 4.30853158e-01f},  {3, 796, -2.50354618e-01f}, {3, 917, 8.32334697e-01f},
    {3, 996, 3.50341439e-01f},  {4, 18, 8.50146860e-02f},   {4, 326, -1.58950374e-01f},
    {4, 545, 1.71777278e-01f},  {4, 953, 3.92681658e-01f},  {5, 136, -5.48071563e-01f},
    {5, 644, -2.96330154e-01f}, {5, 646, 9.80044901e-02f},  {5, 673, -1.93351179e-01f},
    {6, 378, 3.19885552e-01f},  {6, 381, -2.34797820e-02f}, {6, 770, -2.61839926e-01f},
    {6, 881, -8.10344756e-01f},
};

/* The full path's logits at the golden points, within 1e-5 (over all 7000 logits 1.55e-6
 * of max |logit| 1.24): xIELU's scalars, the default llama3 RoPE and the q/k norms each
 * move them by far more (test_apertus_switches). */
#define GOLD_TOL 1e-5

static void test_apertus_transformers(void **state)
{
	(void)state;
	expect_gold("apertus", V_AP, GOLD_TOL, gold_apertus,
	            sizeof(gold_apertus) / sizeof(gold_apertus[0]));
}

/* BF16 tensor name of rank set r times f. */
static void scale_bf16(ref_set *r, const char *name, float f)
{
	ref_tensor *t = find_tensor(r, name);
	uint16_t *v = (uint16_t *)(void *)t->data;
	for (uint64_t i = 0; i < t->nbytes / 2; i++)
		v[i] = kern_f32_to_bf16(kern_bf16_to_f32(v[i]) * f);
}

static void tamper_alpha(void *ctx, ref_set *r, uint32_t n)
{
	(void)ctx; /* TP 2: rank 1's alpha_p replica times 2 */
	assert_int_equal(n, 2);
	scale_bf16(&r[1], M1 "act_fn.alpha_p", 2.0f);
}

static void tamper_eps(void *ctx, ref_set *r, uint32_t n)
{
	(void)ctx; /* TP 4: rank 2's eps of layer 3 (-0.076) made positive, as a planner
	              taking some other layer's buffer would */
	assert_int_equal(n, 4);
	scale_bf16(&r[2], "model.layers.3.mlp.act_fn.eps", -1.0f);
}

static void tamper_up_halves(void *ctx, ref_set *r, uint32_t n)
{
	(void)ctx; /* TP 2: rank 0's up_proj rows [0, 128) and [128, 256) exchanged, a wrong
	              row offset inside the slice */
	assert_int_equal(n, 2);
	swap_stack_halves(find_tensor(&r[0], M1 "up_proj.weight")->data, 1, 128, 256 * 2);
}

static void tamper_ff_norm(void *ctx, ref_set *r, uint32_t n)
{
	(void)ctx; /* TP 2: rank 1's feedforward_layernorm replica times 2 */
	assert_int_equal(n, 2);
	scale_bf16(&r[1], "model.layers.2.feedforward_layernorm.weight", 2.0f);
}

static void test_apertus_caught(void **state)
{
	(void)state;
	expect_caught("apertus", 2, 1, tamper_alpha, "rank 1's alpha_p replica x2");
	expect_caught("apertus", 4, 1, tamper_eps, "rank 2's layer-3 eps sign flipped");
	expect_caught("apertus", 2, 1, tamper_up_halves, "rank 0's up_proj halves exchanged");
	expect_caught("apertus", 2, 1, tamper_ff_norm, "feedforward_layernorm x2 on rank 1");
}

/* Each switch moves the logits (the golden points above pin their values). */
static void test_apertus_switches(void **state)
{
	(void)state;
	model m = {0};
	ref_set ck = {0};
	ref_cfg c;
	wt_errbuf err = {0};
	open_model(&m, "apertus");
	assert_int_equal(ref_load_ckpt(m.c, &c, &ck, &err), WT_OK);
	assert_true(c.apertus && c.nogate && c.qk_norm && !c.qk_norm_full && !c.olmo2 &&
	            c.kind == REF_DENSE && !c.tied && c.d == 32 && c.L == 4 &&
	            c.act == REF_ACT_XIELU);
	assert_float_equal(c.eps, 1e-5, 1e-15);
	assert_float_equal(c.theta, 12000000.0, 1e-6);
	assert_true(c.n_ext > 0); /* llama3's divisors: ApertusConfig's default rope_scaling */
	size_t n = N_TOK * V_AP;
	float *base = malloc(n * sizeof(float)), *lg = malloc(n * sizeof(float));
	assert_true(base && lg);
	logits_with(&c, &ck, base);
	ref_cfg off = c;
	off.n_ext = 0; /* no llama3 scaling */
	logits_with(&off, &ck, lg);
	expect_moved(base, lg, n, 5e-4, "default llama3 rope_scaling ignored");
	off = c;
	off.act = REF_ACT_RELU2;
	logits_with(&off, &ck, lg);
	expect_moved(base, lg, n, 1e-3, "relu2 instead of xIELU");
	off = c;
	off.qk_norm = false;
	logits_with(&off, &ck, lg);
	expect_moved(base, lg, n, 1e-3, "no q/k norms");
	free(base);
	free(lg);
	ref_set_clear(&ck);
	close_model(&m);
}

#define AP(extra)                                                                                  \
	"{\"architectures\": [\"ApertusForCausalLM\"], \"model_type\": \"apertus\", "              \
	"\"hidden_size\": 64, \"num_attention_heads\": 4, \"num_key_value_heads\": 2, "            \
	"\"num_hidden_layers\": 2, \"vocab_size\": 100, \"intermediate_size\": 96" extra "}"

static void test_apertus_config(void **state)
{
	(void)state;
	ref_cfg c;
	wt_errbuf err = {0};
	/* ApertusConfig's defaults: xielu, eps 1e-5, theta 1.2e7, llama3 factor 8, untied */
	static const char plain[] = AP("");
	assert_int_equal(ref_cfg_parse_json(plain, strlen(plain), &c, &err), WT_OK);
	assert_true(c.apertus && c.nogate && c.qk_norm && !c.tied && c.d == 16 &&
	            c.act == REF_ACT_XIELU && c.n_ext > 0);
	assert_float_equal(c.eps, 1e-5, 1e-12);
	assert_float_equal(c.theta, 12000000.0, 1e-6);
	/* rope_scaling null: none; given: that one */
	static const char none[] = AP(", \"rope_scaling\": null");
	assert_int_equal(ref_cfg_parse_json(none, strlen(none), &c, &err), WT_OK);
	assert_int_equal(c.n_ext, 0);
	static const char lin[] = AP(", \"rope_scaling\": {\"rope_type\": \"linear\", "
	                             "\"factor\": 2.0}");
	assert_int_equal(ref_cfg_parse_json(lin, strlen(lin), &c, &err), WT_OK);
	assert_true(c.n_ext == 0 && c.rope_factor[0] == 2.0);
	expect_cfg(AP(", \"hidden_act\": \"silu\""), WT_EUNSUPPORTED, "xIELU");
	expect_cfg(AP(", \"rope_scaling\": {\"rope_type\": \"longrope\", \"factor\": 2}"),
	           WT_EUNSUPPORTED, "longrope");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_apertus_pass),   cmocka_unit_test(test_apertus_transformers),
	    cmocka_unit_test(test_apertus_caught), cmocka_unit_test(test_apertus_switches),
	    cmocka_unit_test(test_apertus_config),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
