/*
 * test_reference_gpt_neox.c — the reference forward pass over GPT-NeoX (GPTNeoXForCausalLM;
 * reference/cfg_neox.c, neox.c): LayerNorms with biases, query_key_value stored per head
 * ([H, 3, d] rows; each rank holds [q_r; k_r; v_r]) with its bias, RoPE on the first
 * int(d * rotary_pct) dims, attention.dense and the gelu MLP with biases (the row-parallel
 * biases added once), the parallel residual, embed_out untied. Full and sharded logits agree
 * within REF_TOL_F32 (TP 1, 2, 4, 8) or the quantized layouts' budgets; the full path's
 * logits equal transformers 4.57.1's (eager, float32) at 28 points; rank tensors broken
 * the way a wrong planner would break them are caught; each switch moves the logits; config
 * defaults and refusals. Fixture from $WT_BUILD/wt-mkckpt --family gpt_neox (hid 128, H 8,
 * d 16, I 512, V 1000, 2 layers; seed printed).
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

#define V_NX 1000
#define L1   "gpt_neox.layers.1."

static int setup(void **state)
{
	(void)state;
	static const char *fams[] = {"gpt_neox"};
	return gen_fixtures("reference_gpt_neox", fams, 1);
}

static void test_neox_pass(void **state)
{
	(void)state;
	expect_pass_tp("gpt_neox", true);
	expect_pass("gpt_neox", 2, 1, WT_QUANT_FP8_BLOCK, 0);
}

/* (row, column, transformers 4.57.1 logit), tokens g_tokens */
static const gold_pt gold_neox[] = {
    {0, 356, -1.03192300e-01f}, {0, 419, -2.99448580e-01f}, {0, 587, 1.54656217e-01f},
    {0, 925, -3.51543039e-01f}, {1, 29, -1.61335230e-01f},  {1, 59, -2.56457776e-01f},
    {1, 310, 2.19335169e-01f},  {1, 440, 1.08202592e-01f},  {2, 311, 3.07196707e-01f},
    {2, 321, -1.54642209e-01f}, {2, 537, -1.44192919e-01f}, {2, 846, 6.76204741e-01f},
    {3, 436, -2.52605110e-01f}, {3, 674, -4.82133687e-01f}, {3, 787, 1.15267225e-02f},
    {3, 925, -3.26484203e-01f}, {4, 620, -4.02176902e-02f}, {4, 667, -4.26940203e-01f},
    {4, 712, -3.28493416e-01f}, {4, 919, -8.88564140e-02f}, {5, 367, 6.48882538e-02f},
    {5, 440, -1.73507571e-01f}, {5, 603, 1.51947439e-01f},  {5, 645, -3.22520852e-01f},
    {6, 89, -4.54364687e-01f},  {6, 544, -2.54156813e-03f}, {6, 741, -4.03693914e-01f},
    {6, 761, -8.68713781e-02f},
};

/* The full path's logits at the golden points, within 1e-5 (over all 7000 logits 6.0e-7
 * of max |logit| 0.87): the per-head qkv order, the partial rotary, the parallel residual
 * and the biases each move them by far more (test_neox_switches, test_neox_caught). */
#define GOLD_TOL 1e-5

static void test_neox_transformers(void **state)
{
	(void)state;
	expect_gold("gpt_neox", V_NX, GOLD_TOL, gold_neox,
	            sizeof(gold_neox) / sizeof(gold_neox[0]));
}

/* BF16 tensor name of rank set r times f. */
static void scale_bf16(ref_set *r, const char *name, float f)
{
	ref_tensor *t = find_tensor(r, name);
	uint16_t *v = (uint16_t *)(void *)t->data;
	for (uint64_t i = 0; i < t->nbytes / 2; i++)
		v[i] = kern_f32_to_bf16(kern_bf16_to_f32(v[i]) * f);
}

static void tamper_dense_bias(void *ctx, ref_set *r, uint32_t n)
{
	(void)ctx; /* TP 4: rank 0's attention.dense bias (added once) times 3 */
	assert_int_equal(n, 4);
	scale_bf16(&r[0], L1 "attention.dense.bias", 3.0f);
}

static void test_neox_caught(void **state)
{
	(void)state;
	expect_halves_swapped(
	    "gpt_neox", 2, 1,
	    (tamper_halves){L1 "attention.query_key_value.weight", 1, 1, 64, 128 * 2},
	    "rank 1's q and k rows exchanged");
	expect_swapped("gpt_neox", 2, 1, L1 "attention.query_key_value.bias",
	               "query_key_value bias slices exchanged");
	expect_caught("gpt_neox", 4, 1, tamper_dense_bias, "dense bias x3 on rank 0");
	expect_swapped("gpt_neox", 2, 1, L1 "mlp.dense_h_to_4h.bias",
	               "dense_h_to_4h bias slices exchanged");
}

/* Each switch moves the logits (the golden points above pin their values). */
static void test_neox_switches(void **state)
{
	(void)state;
	model m = {0};
	ref_set ck = {0};
	ref_cfg c;
	wt_errbuf err = {0};
	open_model(&m, "gpt_neox");
	assert_int_equal(ref_load_ckpt(m.c, &c, &ck, &err), WT_OK);
	assert_true(c.neox && c.neox_par && c.layernorm && c.plain_mlp && c.fused_ckpt &&
	            c.kind == REF_DENSE && !c.tied && c.d == 16 && c.rot_dim == 4 && c.L == 2 &&
	            c.act == REF_ACT_GELU);
	assert_float_equal(c.eps, 1e-5, 1e-15);
	size_t n = N_TOK * V_NX;
	float *base = malloc(n * sizeof(float)), *lg = malloc(n * sizeof(float));
	assert_true(base && lg);
	logits_with(&c, &ck, base);
	ref_cfg off = c;
	off.neox_par = false;
	logits_with(&off, &ck, lg);
	expect_moved(base, lg, n, 1e-3, "sequential residual");
	off = c;
	off.rot_dim = 16;
	logits_with(&off, &ck, lg);
	expect_moved(base, lg, n, 1e-3, "RoPE over the whole head");
	off = c;
	off.act = REF_ACT_SILU;
	logits_with(&off, &ck, lg);
	expect_moved(base, lg, n, 1e-3, "silu instead of gelu");
	free(base);
	free(lg);
	ref_set_clear(&ck);
	close_model(&m);
}

#define NX(extra)                                                                                  \
	"{\"architectures\": [\"GPTNeoXForCausalLM\"], \"model_type\": \"gpt_neox\", "             \
	"\"hidden_size\": 64, \"num_attention_heads\": 4, \"num_hidden_layers\": 2, "              \
	"\"vocab_size\": 100, \"intermediate_size\": 96" extra "}"

static void test_neox_config(void **state)
{
	(void)state;
	ref_cfg c;
	wt_errbuf err = {0};
	/* GPTNeoXConfig's defaults: gelu, rotary_pct 0.25, base 10000, eps 1e-5, parallel
	 * residual, untied */
	static const char plain[] = NX("");
	assert_int_equal(ref_cfg_parse_json(plain, strlen(plain), &c, &err), WT_OK);
	assert_true(c.neox && c.neox_par && !c.tied && c.d == 16 && c.rot_dim == 4 &&
	            c.act == REF_ACT_GELU && c.KV == 4 && c.n_ext == 0);
	assert_float_equal(c.eps, 1e-5, 1e-12);
	assert_float_equal(c.theta, 10000.0, 1e-9);
	/* rotary_emb_base wins over rope_theta (the class copies it over) */
	static const char set[] =
	    NX(", \"rotary_pct\": 0.5, \"rotary_emb_base\": 500.0, \"rope_theta\": 7.0, "
	       "\"layer_norm_eps\": 1e-6, \"use_parallel_residual\": false, "
	       "\"hidden_act\": \"gelu_new\"");
	assert_int_equal(ref_cfg_parse_json(set, strlen(set), &c, &err), WT_OK);
	assert_true(!c.neox_par && c.rot_dim == 8 && c.act == REF_ACT_GELU_TANH);
	assert_float_equal(c.theta, 500.0, 1e-9);
	assert_float_equal(c.eps, 1e-6, 1e-15);
	expect_cfg(NX(", \"rotary_pct\": 0.1"), WT_EUNSUPPORTED, "rotary_pct 0.1");
	expect_cfg(NX(", \"rotary_pct\": 0.0"), WT_EUNSUPPORTED, "rotary_pct 0");
	expect_cfg(NX(", \"hidden_act\": \"relu6\""), WT_EUNSUPPORTED, "relu6");
	expect_cfg(NX(", \"layer_norm_eps\": -1.0"), WT_ECORRUPT, "layer_norm_eps");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_neox_pass),   cmocka_unit_test(test_neox_transformers),
	    cmocka_unit_test(test_neox_caught), cmocka_unit_test(test_neox_switches),
	    cmocka_unit_test(test_neox_config),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
