/*
 * test_reference_falconh1.c — the reference forward pass over Falcon-H1
 * (FalconH1ForCausalLM; reference/granite4.c's Mamba2 mixer, cfg_granite4.c's
 * ref_cfg_falconh1): in every layer Bamba's Mamba2 mixer (mamba_d_ssm 192 = 8 heads of 24,
 * one group of state 16, the gated norm after the gate) and the attention (H 8 / KV 2 /
 * head_dim 32, RoPE on the whole head) side by side on input_layernorm's output, summed
 * into the residual; a SwiGLU feed_forward after pre_ff_layernorm; every muP multiplier
 * other than 1 (attention / ssm in and out, key, ssm_multipliers on in_proj's rows,
 * mlp_multipliers, embedding and lm_head). Full and sharded logits agree within REF_TOL_F32
 * (TP 1, 2, 4, 8) or the quantized layouts' budgets; the full path's logits equal
 * transformers 4.57.1's (eager, float32) at 28 points; rank tensors broken the way a wrong
 * planner would break them are caught; each switch moves the logits; config defaults and
 * refusals. Fixture from $WT_BUILD/wt-mkckpt --family falcon_h1 (hid 128, 2 layers,
 * SwiGLU 192, V 1000, untied).
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

#define V_FH 1000
#define FAM  "falcon_h1"
#define M0   "model.layers.0.mamba."

static int setup(void **state)
{
	(void)state;
	static const char *fams[] = {FAM};
	return gen_fixtures("reference_falconh1", fams, 1);
}

static void test_falconh1_pass(void **state)
{
	(void)state;
	expect_pass(FAM, 1, 1, WT_QUANT_NONE, 0);
	expect_pass(FAM, 2, 1, WT_QUANT_NONE, 0); /* B / C whole on both ranks */
	expect_pass(FAM, 4, 1, WT_QUANT_NONE, 0);
	expect_pass(FAM, 8, 1, WT_QUANT_NONE, 0); /* one Mamba head, one q head per rank */
	expect_pass(FAM, 1, 1, WT_QUANT_INT8_CHANNEL, 0);
	expect_pass(FAM, 1, 1, WT_QUANT_FP8_CHANNEL, 0);
}

/* (row, column, transformers 4.57.1 logit), tokens g_tokens */
static const gold_pt gold_falconh1[] = {
    {0, 623, -2.31931776e-01f}, {0, 683, -5.42091653e-02f}, {0, 897, 1.71623617e-01f},
    {0, 942, 5.96738197e-02f},  {1, 55, 1.90743104e-01f},   {1, 224, -4.20722254e-02f},
    {1, 285, 1.16807476e-01f},  {1, 299, -3.35264131e-02f}, {2, 131, 2.27728069e-01f},
    {2, 498, 1.30514741e-01f},  {2, 797, 3.46330851e-02f},  {2, 819, 7.29363784e-02f},
    {3, 278, 1.72638550e-01f},  {3, 302, 4.23626509e-03f},  {3, 340, 1.84762347e-02f},
    {3, 719, 3.69857140e-02f},  {4, 476, 8.86659510e-03f},  {4, 503, 1.52009606e-01f},
    {4, 553, -1.30750388e-01f}, {4, 581, -2.26180367e-02f}, {5, 341, -8.17849338e-02f},
    {5, 621, -3.40925194e-02f}, {5, 698, -3.35311711e-01f}, {5, 790, 7.24083260e-02f},
    {6, 159, 6.56856894e-02f},  {6, 612, 1.04202107e-01f},  {6, 842, -2.15013083e-02f},
    {6, 856, -3.67102772e-03f},
};

/* The full path's logits at the golden points, within 1e-5 (measured over all 7000 logits:
 * 4.4e-7 of max |logit| 0.62) */
#define GOLD_TOL 1e-5

static void test_falconh1_transformers(void **state)
{
	(void)state;
	expect_gold(FAM, V_FH, GOLD_TOL, gold_falconh1,
	            sizeof(gold_falconh1) / sizeof(gold_falconh1[0]));
}

static void tamper_bc(void *ctx, ref_set *r, uint32_t n)
{
	(void)ctx; /* TP 2: rank 1's in_proj B rows [192, 208) and C rows [208, 224) exchanged */
	assert_int_equal(n, 2);
	swap_stack_halves(find_tensor(&r[1], M0 "in_proj.weight")->data + 192 * 128 * 2, 1, 16,
	                  128 * 2);
}

static void test_falconh1_caught(void **state)
{
	(void)state;
	expect_caught(FAM, 2, 1, tamper_bc, "rank 1's B and C rows exchanged");
	expect_halves_swapped(
	    FAM, 2, 1,
	    (tamper_halves){"model.layers.1.feed_forward.gate_up_proj.weight", 0, 1, 96, 128 * 2},
	    "rank 0's gate / up halves exchanged");
	expect_swapped(FAM, 2, 1, "model.layers.0.self_attn.o_proj.weight",
	               "o_proj slices exchanged");
	expect_swapped(FAM, 2, 1, M0 "norm.weight", "gated norm slices exchanged");
	expect_halves_swapped(FAM, 4, 1, (tamper_halves){M0 "A_log", 3, 1, 1, 2},
	                      "rank 3's A_log halves exchanged");
}

/* Each switch and multiplier moves the logits (the golden points above pin their values). */
static void test_falconh1_switches(void **state)
{
	(void)state;
	model m = {0};
	ref_set ck = {0};
	ref_cfg c;
	wt_errbuf err = {0};
	open_model(&m, FAM);
	assert_int_equal(ref_load_ckpt(m.c, &c, &ck, &err), WT_OK);
	assert_true(c.fh1 && c.bamba && c.g4 && !c.granite && c.g4_rope && !c.tied &&
	            c.kind == REF_DENSE && c.I == 192 && c.d == 32 && c.rot_dim == 32 && c.L == 2 &&
	            c.H == 8 && c.KV == 2);
	assert_true(c.m_heads == 8 && c.m_dh == 24 && c.m_groups == 1 && c.m_state == 16 &&
	            c.m_conv == 4 && c.m_rms_norm && !c.m_norm_before_gate && c.m_norm_groups == 1);
	for (int64_t i = 0; i < 2; i++)
		assert_true(ref_g4_mamba_layer(&c, i));
	assert_float_equal(c.eps, 1e-5, 1e-15);
	assert_true(c.embed_scale == 1.5f && c.logit_mult == 0.75 && c.fh1_attn_in == 1.25f &&
	            c.fh1_attn_out == 0.875f && c.fh1_key == 0.5f && c.fh1_ssm_in == 1.125f &&
	            c.fh1_ssm_out == 0.625f && c.fh1_gate == 1.5f && c.fh1_down == 0.625f &&
	            c.fh1_mup[0] == 1.25f && c.fh1_mup[4] == 1.75f);
	size_t n = N_TOK * V_FH;
	float *base = malloc(n * sizeof(float)), *lg = malloc(n * sizeof(float));
	assert_true(base && lg);
	logits_with(&c, &ck, base);
	static const struct {
		size_t off;
		const char *what;
	} one[] = {
	    {offsetof(ref_cfg, fh1_attn_in), "attention_in_multiplier 1"},
	    {offsetof(ref_cfg, fh1_attn_out), "attention_out_multiplier 1"},
	    {offsetof(ref_cfg, fh1_key), "key_multiplier 1"},
	    {offsetof(ref_cfg, fh1_ssm_in), "ssm_in_multiplier 1"},
	    {offsetof(ref_cfg, fh1_ssm_out), "ssm_out_multiplier 1"},
	    {offsetof(ref_cfg, fh1_gate), "mlp_multipliers[0] 1"},
	    {offsetof(ref_cfg, fh1_down), "mlp_multipliers[1] 1"},
	};
	for (size_t k = 0; k < sizeof(one) / sizeof(one[0]); k++) {
		ref_cfg off = c;
		*(float *)((char *)&off + one[k].off) = 1.0f;
		logits_with(&off, &ck, lg);
		expect_moved(base, lg, n, 1e-4, one[k].what);
	}
	for (int k = 0; k < 5; k++) {
		ref_cfg off = c;
		off.fh1_mup[k] = 1.0f;
		logits_with(&off, &ck, lg);
		expect_moved(base, lg, n, 1e-4, "one of ssm_multipliers 1 (mup_vector)");
	}
	ref_cfg off = c;
	off.m_norm_before_gate = true;
	logits_with(&off, &ck, lg);
	expect_moved(base, lg, n, 1e-4, "mamba_norm_before_gate true");
	off = c;
	off.m_rms_norm = false;
	logits_with(&off, &ck, lg);
	expect_moved(base, lg, n, 1e-4, "mamba_rms_norm false");
	off = c;
	off.rot_dim = c.d / 2;
	logits_with(&off, &ck, lg);
	expect_moved(base, lg, n, 1e-4, "RoPE over half the head");
	off = c;
	off.fh1 = false; /* Bamba: the Mamba mixer alone in every layer, no multipliers */
	logits_with(&off, &ck, lg);
	expect_moved(base, lg, n, 1e-4, "Bamba's layers (no attention beside the mixer)");
	free(base);
	free(lg);
	ref_set_clear(&ck);
	close_model(&m);
}

#define FH(extra)                                                                                  \
	"{\"architectures\": [\"FalconH1ForCausalLM\"], \"model_type\": \"falcon_h1\", "           \
	"\"hidden_size\": 64, \"num_attention_heads\": 4, \"num_key_value_heads\": 2, "            \
	"\"num_hidden_layers\": 2, \"vocab_size\": 100, \"intermediate_size\": 32, "               \
	"\"mamba_n_heads\": 4, \"mamba_d_state\": 8, \"mamba_d_ssm\": 64" extra "}"

static void test_falconh1_config(void **state)
{
	(void)state;
	ref_cfg c;
	wt_errbuf err = {0};
	/* FalconH1Config's defaults: every multiplier 1, norm before the gate, no gated norm,
	 * one group, conv 4, RoPE on the whole head, eps 1e-5, untied */
	static const char plain[] = FH("");
	assert_int_equal(ref_cfg_parse_json(plain, strlen(plain), &c, &err), WT_OK);
	assert_true(c.fh1 && c.bamba && c.g4 && c.g4_rope && !c.tied && c.kind == REF_DENSE &&
	            c.I == 32 && c.m_heads == 4 && c.m_dh == 16 && c.m_groups == 1 &&
	            c.m_state == 8 && c.m_conv == 4 && c.act == REF_ACT_SILU && c.d == 16 &&
	            c.rot_dim == 16 && c.KV == 2 && c.m_norm_before_gate && !c.m_rms_norm);
	assert_true(c.embed_scale == 1.0f && c.logit_mult == 1.0 && c.fh1_attn_in == 1.0f &&
	            c.fh1_attn_out == 1.0f && c.fh1_key == 1.0f && c.fh1_ssm_in == 1.0f &&
	            c.fh1_ssm_out == 1.0f && c.fh1_gate == 1.0f && c.fh1_down == 1.0f &&
	            c.fh1_mup[0] == 1.0f && c.fh1_mup[4] == 1.0f);
	assert_float_equal(c.eps, 1e-5, 1e-15);
	for (int64_t i = 0; i < 2; i++)
		assert_true(ref_g4_mamba_layer(&c, i));
	static const char more[] = FH(", \"head_dim\": 32, \"mamba_n_groups\": 2, "
	                              "\"mamba_rms_norm\": true, \"ssm_multipliers\": [1, 2, 3, "
	                              "4, 5], \"mamba_norm_before_gate\": false");
	assert_int_equal(ref_cfg_parse_json(more, strlen(more), &c, &err), WT_OK);
	assert_true(c.d == 32 && c.m_groups == 2 && c.m_norm_groups == 2 && c.m_rms_norm &&
	            !c.m_norm_before_gate && c.fh1_mup[1] == 2.0f && c.fh1_mup[4] == 5.0f);
	expect_cfg(FH(", \"ssm_multipliers\": [1, 2]"), WT_EUNSUPPORTED, "ssm_multipliers");
	expect_cfg(FH(", \"mlp_multipliers\": 2"), WT_EUNSUPPORTED, "mlp_multipliers");
	expect_cfg(FH(", \"key_multiplier\": 0"), WT_EUNSUPPORTED, "key_multiplier");
	expect_cfg(FH(", \"hidden_act\": \"relu\""), WT_EUNSUPPORTED, "hidden_act");
	expect_cfg(FH(", \"mamba_n_groups\": 3"), WT_ECORRUPT, "mamba_n_groups");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_falconh1_pass),   cmocka_unit_test(test_falconh1_transformers),
	    cmocka_unit_test(test_falconh1_caught), cmocka_unit_test(test_falconh1_switches),
	    cmocka_unit_test(test_falconh1_config),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
