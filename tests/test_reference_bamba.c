/*
 * test_reference_bamba.c — the reference forward pass over Bamba (BambaForCausalLM;
 * reference/granite4.c's Mamba2 mixer, cfg_granite4.c / cfg_fam.c's parse_bamba): layers 0
 * and 2 Mamba2 mixers, layer 1 (attn_layer_indices [1]) Llama's attention with RoPE on the
 * first half of each head (partial_rotary_factor 0.5), a SwiGLU feed_forward after
 * pre_ff_layernorm in every layer, model.final_layernorm. Full and sharded logits agree
 * within REF_TOL_F32 (TP 1, 2, 4, 8 with the one group's B / C on every rank) or the
 * quantized layouts' budgets; the full path's logits equal transformers 4.57.1's (eager,
 * float32) at 28 points; rank tensors broken the way a wrong planner would break them are
 * caught; each switch moves the logits; config defaults and refusals. Fixture from
 * $WT_BUILD/wt-mkckpt --family bamba (hid 128, 8 Mamba heads of 32, 1 group of state 16,
 * attention H 8 / KV 2 / d 16, SwiGLU 192, V 1000, 3 layers, untied).
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

#define V_BA 1000
#define FAM  "bamba"
#define M0   "model.layers.0.mamba."

static int setup(void **state)
{
	(void)state;
	static const char *fams[] = {FAM};
	return gen_fixtures("reference_bamba", fams, 1);
}

static void test_bamba_pass(void **state)
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
static const gold_pt gold_bamba[] = {
    {0, 9, -3.46967988e-02f},   {0, 48, -3.91055085e-02f},  {0, 546, 2.40445599e-01f},
    {0, 634, -2.83677340e-01f}, {1, 106, -9.74130407e-02f}, {1, 609, -1.29716441e-01f},
    {1, 672, 1.80603743e-01f},  {1, 718, -6.19179197e-02f}, {2, 470, 2.15443999e-01f},
    {2, 507, -9.58165675e-02f}, {2, 516, 5.37409633e-02f},  {2, 620, -9.53918472e-02f},
    {3, 410, -2.86506623e-01f}, {3, 674, 1.56423271e-01f},  {3, 864, 1.45517796e-01f},
    {3, 901, 2.66549110e-01f},  {4, 117, -2.36484811e-01f}, {4, 477, 2.83157438e-01f},
    {4, 941, 2.11404860e-01f},  {4, 975, -1.87903047e-01f}, {5, 46, 6.25744164e-02f},
    {5, 598, 6.74945861e-03f},  {5, 759, -2.79508173e-01f}, {5, 951, -2.97849506e-01f},
    {6, 134, -4.36336994e-02f}, {6, 460, 2.08901465e-01f},  {6, 705, -1.16398409e-01f},
    {6, 894, 6.32010937e-01f},
};

/* The full path's logits at the golden points, within 1e-5 (measured 3.2e-7; over all 7000
 * logits 6.9e-7 of max |logit| 0.91) */
#define GOLD_TOL 1e-5

static void test_bamba_transformers(void **state)
{
	(void)state;
	expect_gold(FAM, V_BA, GOLD_TOL, gold_bamba, sizeof(gold_bamba) / sizeof(gold_bamba[0]));
}

static void tamper_bc(void *ctx, ref_set *r, uint32_t n)
{
	(void)ctx; /* TP 2: rank 1's in_proj B rows [256, 272) and C rows [272, 288) exchanged */
	assert_int_equal(n, 2);
	swap_stack_halves(find_tensor(&r[1], M0 "in_proj.weight")->data + 256 * 128 * 2, 1, 16,
	                  128 * 2);
}

static void test_bamba_caught(void **state)
{
	(void)state;
	expect_caught(FAM, 2, 1, tamper_bc, "rank 1's B and C rows exchanged");
	expect_halves_swapped(
	    FAM, 2, 1,
	    (tamper_halves){"model.layers.2.feed_forward.gate_up_proj.weight", 0, 1, 96, 128 * 2},
	    "rank 0's gate / up halves exchanged");
	expect_swapped(FAM, 2, 1, "model.layers.1.self_attn.o_proj.weight",
	               "o_proj slices exchanged");
	expect_halves_swapped(FAM, 4, 1, (tamper_halves){M0 "A_log", 3, 1, 1, 2},
	                      "rank 3's A_log halves exchanged");
}

/* Each switch moves the logits (the golden points above pin their values). */
static void test_bamba_switches(void **state)
{
	(void)state;
	model m = {0};
	ref_set ck = {0};
	ref_cfg c;
	wt_errbuf err = {0};
	open_model(&m, FAM);
	assert_int_equal(ref_load_ckpt(m.c, &c, &ck, &err), WT_OK);
	assert_true(c.bamba && c.g4 && !c.granite && !c.stacked_experts && c.g4_rope && !c.tied &&
	            c.kind == REF_DENSE && c.I == 192 && c.d == 16 && c.rot_dim == 8 && c.L == 3);
	assert_true(c.m_heads == 8 && c.m_dh == 32 && c.m_groups == 1 && c.m_state == 16 &&
	            c.m_conv == 4);
	for (int64_t i = 0; i < 3; i++)
		assert_int_equal(ref_g4_mamba_layer(&c, i), i != 1);
	assert_float_equal(c.eps, 1e-5, 1e-15);
	assert_true(c.embed_scale == 0.0f && c.resid_mult == 0.0 && c.logits_div == 0.0);
	size_t n = N_TOK * V_BA;
	float *base = malloc(n * sizeof(float)), *lg = malloc(n * sizeof(float));
	assert_true(base && lg);
	logits_with(&c, &ck, base);
	ref_cfg off = c;
	off.rot_dim = c.d;
	logits_with(&off, &ck, lg);
	expect_moved(base, lg, n, 1e-4, "RoPE over the whole head");
	off = c;
	off.g4_rope = false;
	logits_with(&off, &ck, lg);
	expect_moved(base, lg, n, 1e-4, "no RoPE on the attention layer");
	off = c;
	off.g4_mamba[0] |= 1ull << 1; /* layer 1 read as Mamba: no such tensors */
	float *x = malloc(n * sizeof(float));
	assert_non_null(x);
	assert_int_equal(ref_forward_full(&off, &ck, g_tokens, N_TOK, x, NULL, &err), WT_ENOTFOUND);
	free(x);
	off = c;
	off.act = REF_ACT_GELU; /* the conv's and the feed_forward's activation */
	logits_with(&off, &ck, lg);
	expect_moved(base, lg, n, 1e-3, "gelu for silu");
	free(base);
	free(lg);
	ref_set_clear(&ck);
	close_model(&m);
}

#define BA(extra)                                                                                  \
	"{\"architectures\": [\"BambaForCausalLM\"], \"model_type\": \"bamba\", "                  \
	"\"hidden_size\": 64, \"num_attention_heads\": 4, \"num_key_value_heads\": 2, "            \
	"\"num_hidden_layers\": 3, \"vocab_size\": 100, \"intermediate_size\": 32, "               \
	"\"mamba_n_heads\": 4, \"mamba_d_state\": 8" extra "}"

static void test_bamba_config(void **state)
{
	(void)state;
	ref_cfg c;
	wt_errbuf err = {0};
	/* BambaConfig's defaults: one group, conv 4, expand 2 (d_head "auto": 128 / 4 = 32),
	 * RoPE on half of each head, eps 1e-5, untied, no attention layer without the list */
	static const char plain[] = BA("");
	assert_int_equal(ref_cfg_parse_json(plain, strlen(plain), &c, &err), WT_OK);
	assert_true(c.bamba && c.g4 && c.g4_rope && !c.tied && c.kind == REF_DENSE && c.I == 32 &&
	            c.m_heads == 4 && c.m_dh == 32 && c.m_groups == 1 && c.m_state == 8 &&
	            c.m_conv == 4 && c.act == REF_ACT_SILU && c.d == 16 && c.rot_dim == 8 &&
	            c.KV == 2);
	assert_float_equal(c.eps, 1e-5, 1e-15);
	for (int64_t i = 0; i < 3; i++)
		assert_true(ref_g4_mamba_layer(&c, i));
	static const char idx[] = BA(", \"attn_layer_indices\": [0, 2], "
	                             "\"partial_rotary_factor\": 1.0");
	assert_int_equal(ref_cfg_parse_json(idx, strlen(idx), &c, &err), WT_OK);
	assert_true(!ref_g4_mamba_layer(&c, 0) && ref_g4_mamba_layer(&c, 1) &&
	            !ref_g4_mamba_layer(&c, 2) && c.rot_dim == 16);
	expect_cfg(BA(", \"mamba_d_head\": 16"), WT_ECORRUPT, "mamba_d_head 16");
	expect_cfg(BA(", \"mamba_n_groups\": 3"), WT_ECORRUPT, "mamba_n_groups");
	expect_cfg(BA(", \"head_dim\": 32"), WT_EUNSUPPORTED, "head_dim 32");
	expect_cfg(BA(", \"hidden_act\": \"relu\""), WT_EUNSUPPORTED, "hidden_act");
	expect_cfg(BA(", \"partial_rotary_factor\": 0.1"), WT_EUNSUPPORTED,
	           "partial_rotary_factor");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_bamba_pass),   cmocka_unit_test(test_bamba_transformers),
	    cmocka_unit_test(test_bamba_caught), cmocka_unit_test(test_bamba_switches),
	    cmocka_unit_test(test_bamba_config),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
