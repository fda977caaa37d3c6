/*
 * test_reference_longcat.c — the reference forward pass over LongCat-Flash
 * (LongcatFlashForCausalLM; reference/cfg_longcat.c, longcat.c): per layer two MLA sublayers
 * (DeepSeek's, with the q / kv latents scaled by sqrt(hidden / rank) and the interleaved
 * RoPE) and two dense MLPs, the shortcut MoE on the first MLP's input added after the
 * second (softmax router over the routed and the zero experts, the top-k of scores + the
 * correction bias, weights times routed_scaling_factor, a zero expert the identity). Full and
 * sharded logits agree within REF_TOL_F32 (TP 1, 2, 4, 8, EP 2, TP 2 x EP 2 up_gate) or the
 * quantized layouts' budgets; the full path's logits equal transformers 4.57.1's (eager,
 * float32) at 28 points; rank tensors broken the way a wrong planner would break them are
 * caught; each switch moves the logits; config keys and refusals. Fixture from
 * $WT_BUILD/wt-mkckpt --family longcat_flash (hid 128, H 8, 4 experts + 2 zero experts top-2,
 * V 1000, 2 layers; seed printed).
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

#define V_LC 1000
#define FAM  "longcat_flash"
#define L1   "model.layers.1."

static int setup(void **state)
{
	(void)state;
	static const char *fams[] = {FAM};
	return gen_fixtures("reference_longcat", fams, 1);
}

static void test_longcat_pass(void **state)
{
	(void)state;
	expect_pass(FAM, 1, 1, WT_QUANT_NONE, 0);
	expect_pass(FAM, 2, 1, WT_QUANT_NONE, 0);
	expect_pass(FAM, 4, 1, WT_QUANT_NONE, 0);
	expect_pass(FAM, 8, 1, WT_QUANT_NONE, 0);
	expect_pass(FAM, 1, 2, WT_QUANT_NONE, 0);
	expect_pass(FAM, 2, 2, WT_QUANT_NONE, 1);
	expect_pass(FAM, 2, 1, WT_QUANT_INT8_CHANNEL, 0);
	expect_pass(FAM, 4, 1, WT_QUANT_FP8_CHANNEL, 0);
	expect_pass(FAM, 1, 2, WT_QUANT_FP8_BLOCK, 0);
}

/* (row, column, transformers 4.57.1 logit), tokens g_tokens, fixture seed 11 (7 and 6 of
 * the 14 choices of layers 0 and 1 are zero experts) */
static const gold_pt gold_lc[] = {
    {0, 97, 3.95807207e-01f},   {0, 543, 1.61761686e-01f},  {0, 740, -1.47562221e-01f},
    {0, 753, 2.34874517e-01f},  {1, 78, -2.15612315e-02f},  {1, 103, 5.79509176e-02f},
    {1, 358, -4.42081094e-01f}, {1, 965, 4.15892780e-01f},  {2, 134, 1.33491874e-01f},
    {2, 426, -1.17878146e-01f}, {2, 513, 2.07216460e-02f},  {2, 856, 1.27132684e-01f},
    {3, 748, -8.10248703e-02f}, {3, 792, -2.56112833e-02f}, {3, 839, 8.15472528e-02f},
    {3, 945, -3.28508019e-01f}, {4, 136, 1.42789528e-01f},  {4, 274, -3.86635542e-01f},
    {4, 433, -3.46195757e-01f}, {4, 609, -8.37656930e-02f}, {5, 185, -1.97798431e-01f},
    {5, 550, 2.95714349e-01f},  {5, 712, 4.84540761e-02f},  {5, 901, 6.39526695e-02f},
    {6, 6, 4.99800742e-01f},    {6, 61, -1.45707816e-01f},  {6, 403, 7.76955485e-02f},
    {6, 551, 1.02719218e-01f},
};

/* The full path's logits at the golden points, within 1e-5 (over all 7000 logits 4.2e-7 of
 * max |logit| 0.83); the latents' scaling, the zero experts and the shortcut's place each
 * move them by far more (test_longcat_switches). */
#define GOLD_TOL 1e-5

static void test_longcat_transformers(void **state)
{
	(void)state;
	expect_gold(FAM, V_LC, GOLD_TOL, gold_lc, sizeof(gold_lc) / sizeof(gold_lc[0]));
}

static void tamper_o(void *ctx, ref_set *r, uint32_t n)
{
	(void)ctx; /* TP 4: two ranks' o_proj column slices of the second sublayer exchanged */
	assert_int_equal(n, 4);
	swap_data(&r[0], &r[3], L1 "self_attn.1.o_proj.weight");
}

static void tamper_bias(void *ctx, ref_set *r, uint32_t n)
{
	(void)ctx; /* TP 2: rank 1's correction bias sends every token to zero expert 4 */
	assert_int_equal(n, 2);
	float *b =
	    (float *)find_tensor(&r[1], "model.layers.0.mlp.router.e_score_correction_bias")->data;
	b[4] = 1.0f;
}

static void test_longcat_caught(void **state)
{
	(void)state;
	expect_halves_swapped(FAM, 2, 1,
	                      (tamper_halves){L1 "mlp.experts.w13_weight", 1, 4, 32, 128 * 2},
	                      "rank 1's expert gate and up rows exchanged");
	expect_caught(FAM, 4, 1, tamper_o, "self_attn.1.o_proj slices exchanged");
	expect_swapped(FAM, 2, 1, "model.layers.0.self_attn.0.kv_b_proj.weight",
	               "self_attn.0.kv_b_proj slices exchanged");
	expect_halves_swapped(FAM, 2, 1,
	                      (tamper_halves){L1 "mlps.1.gate_up_proj.weight", 0, 1, 96, 128 * 2},
	                      "mlps.1 gate and up exchanged");
	expect_swapped(FAM, 1, 2, "model.layers.0.mlp.experts.w13_weight",
	               "the EP ranks' w13 stacks exchanged");
	expect_caught(FAM, 2, 1, tamper_bias, "rank 1's correction bias changed");
}

/* Each switch moves the logits (the golden points above pin their values). */
static void test_longcat_switches(void **state)
{
	(void)state;
	model m = {0};
	ref_set ck = {0};
	ref_cfg c;
	wt_errbuf err = {0};
	open_model(&m, FAM);
	assert_int_equal(ref_load_ckpt(m.c, &c, &ck, &err), WT_OK);
	assert_true(c.longcat && c.kind == REF_DEEPSEEK && c.L == 4 && c.E == 4 && c.n_zero == 2 &&
	            c.topk == 2 && c.Ie == 64 && c.I == 192 && c.Is == 0 && c.q_lora == 64 &&
	            c.kv_lora == 32 && c.nope == 16 && c.rope == 8 && c.vhd == 16 && !c.tied &&
	            !c.norm_topk && c.rope_interleave && c.act == REF_ACT_SILU);
	assert_float_equal(c.routed_scale, 6.0, 1e-12);
	assert_float_equal(c.eps, 1e-5, 1e-15);
	assert_float_equal(c.theta, 1e7, 1e-3);
	size_t n = N_TOK * V_LC;
	float *base = malloc(n * sizeof(float)), *lg = malloc(n * sizeof(float));
	assert_true(base && lg);
	logits_with(&c, &ck, base);
	ref_cfg off = c;
	off.routed_scale = 1.0;
	logits_with(&off, &ck, lg);
	expect_moved(base, lg, n, 1e-3, "routed_scaling_factor 1");
	off = c;
	off.theta = 10000.0;
	logits_with(&off, &ck, lg);
	expect_moved(base, lg, n, 1e-3, "rope_theta 10000");
	off = c;
	off.rope_interleave = false;
	logits_with(&off, &ck, lg);
	expect_moved(base, lg, n, 1e-3, "RoPE not interleaved");
	free(base);
	free(lg);
	ref_set_clear(&ck);
	close_model(&m);
}

#define LC(extra)                                                                                  \
	"{\"architectures\": [\"LongcatFlashForCausalLM\"], \"model_type\": \"longcat_flash\", "   \
	"\"hidden_size\": 64, \"num_attention_heads\": 4, \"num_layers\": 2, \"vocab_size\": "     \
	"100, "                                                                                    \
	"\"ffn_hidden_size\": 96, \"expert_ffn_hidden_size\": 32, \"n_routed_experts\": 4, "       \
	"\"zero_expert_num\": 3, \"moe_topk\": 2, \"q_lora_rank\": 32, \"kv_lora_rank\": 16, "     \
	"\"qk_nope_head_dim\": 16, \"qk_rope_head_dim\": 8, \"head_dim\": 8, "                     \
	"\"v_head_dim\": 16" extra "}"

static void test_longcat_config(void **state)
{
	(void)state;
	ref_cfg c;
	wt_errbuf err = {0};
	/* LongcatFlashConfig's defaults: routed_scaling_factor 6, rope_theta 1e7, eps 1e-5 */
	static const char plain[] = LC("");
	assert_int_equal(ref_cfg_parse_json(plain, strlen(plain), &c, &err), WT_OK);
	assert_true(c.longcat && c.L == 4 && c.E == 4 && c.n_zero == 3 && c.topk == 2 &&
	            c.Ie == 32 && c.I == 96 && !c.norm_topk && c.rope_interleave && !c.tied);
	assert_float_equal(c.routed_scale, 6.0, 1e-12);
	assert_float_equal(c.theta, 1e7, 1e-3);
	assert_float_equal(c.eps, 1e-5, 1e-15);
	static const char set[] =
	    LC(", \"routed_scaling_factor\": 2.5, \"rope_theta\": 50000, \"rms_norm_eps\": 1e-6, "
	       "\"rope_interleave\": false, \"norm_topk_prob\": true");
	assert_int_equal(ref_cfg_parse_json(set, strlen(set), &c, &err), WT_OK);
	assert_float_equal(c.routed_scale, 2.5, 1e-12);
	assert_float_equal(c.theta, 50000.0, 1e-9);
	assert_float_equal(c.eps, 1e-6, 1e-15);
	assert_true(c.rope_interleave && !c.norm_topk); /* keys LongcatFlash does not read */
	expect_cfg(LC(", \"rope_scaling\": {\"type\": \"yarn\", \"factor\": 4}"), WT_EUNSUPPORTED,
	           "rope_scaling is set");
	expect_cfg(LC(", \"routed_scaling_factor\": -1"), WT_ECORRUPT, "routed_scaling_factor");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_longcat_pass),   cmocka_unit_test(test_longcat_transformers),
	    cmocka_unit_test(test_longcat_caught), cmocka_unit_test(test_longcat_switches),
	    cmocka_unit_test(test_longcat_config),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
