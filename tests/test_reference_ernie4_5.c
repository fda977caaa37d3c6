/*
 * test_reference_ernie4_5.c — the reference forward pass over Baidu ERNIE 4.5
 * (reference/cfg.c, the MoE of reference/mla.c). ernie4_5 (Ernie4_5ForCausalLM): Llama's
 * decoder with every use_bias bias, RoPE on adjacent pairs (x[2i], x[2i+1]) over the whole
 * head, tied embeddings. ernie4_5_moe (Ernie4_5_MoeForCausalLM): the same attention,
 * dense layers 0 and 3 (moe_layer_start_index 1, moe_layer_end_index 2), MoE layers routed
 * by a float32 softmax whose top-k is chosen on softmax + moe_statics.
 * e_score_correction_bias and weighted by the unbiased values over max(sum, moe_norm_min),
 * plus two shared experts. Full and sharded logits agree within REF_TOL_F32 (TP 1, 2, 4, 8,
 * EP 2, 4, TP 2 x EP 2) or the quantized layouts' budgets on the fixtures and a variant
 * (moe_k 3, moe_norm_min 0.9); the full path's logits equal transformers 4.57.1's (eager,
 * float32) at pinned points; rank tensors broken the way a wrong planner would break them
 * are caught; config defaults and refusals are checked. The fixtures come from
 * $WT_BUILD/wt-mkckpt --family ernie4_5 / ernie4_5_moe (seed printed).
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

#define V_ERN 1000
#define HID   128
#define IE    64
#define N_EXP 8
#define M1    "model.layers.1.mlp."
#define A1    "model.layers.1.self_attn."
#define CB    M1 "moe_statics.e_score_correction_bias"

static int setup(void **state)
{
	(void)state;
	static const char *fams[] = {"ernie4_5", "ernie4_5_moe"};
	if (gen_fixtures("reference_ernie4_5", fams, 2) != 0 ||
	    gen_family("ernie4_5_moe", "ernie_var"))
		return -1;
	/* top-3, and a floor on the weights' sum above the top-3's softmax sum */
	char *dir = tu_path(g_root, "ernie_var");
	edit_config(dir, "\"moe_k\": 2", "\"moe_k\": 3");
	edit_config(dir, "\"moe_norm_min\": 1e-12", "\"moe_norm_min\": 0.9");
	free(dir);
	return 0;
}

static void test_ernie4_5_pass(void **state)
{
	(void)state;
	expect_pass("ernie4_5", 1, 1, WT_QUANT_NONE, 0);
	expect_pass("ernie4_5", 2, 1, WT_QUANT_NONE, 0);
	expect_pass("ernie4_5", 4, 1, WT_QUANT_NONE, 0);
	expect_pass("ernie4_5", 8, 1, WT_QUANT_NONE, 0); /* KV 2 < TP 8 */
	expect_pass("ernie4_5", 2, 1, WT_QUANT_FP8_BLOCK, 0);
	expect_pass("ernie4_5", 2, 1, WT_QUANT_INT8_CHANNEL, 0);
	static const char *forms[] = {"ernie4_5_moe", "ernie_var"};
	for (int f = 0; f < 2; f++) {
		expect_pass(forms[f], 1, 1, WT_QUANT_NONE, 0);
		expect_pass(forms[f], 2, 1, WT_QUANT_NONE, 0);
		expect_pass(forms[f], 4, 1, WT_QUANT_NONE, 0);
		expect_pass(forms[f], 1, 2, WT_QUANT_NONE, 0);
		expect_pass(forms[f], 1, 4, WT_QUANT_NONE, 1);
		expect_pass(forms[f], 2, 2, WT_QUANT_NONE, 0);
		expect_pass(forms[f], 2, 2, WT_QUANT_NONE, 1);
		expect_pass(forms[f], 2, 1, WT_QUANT_FP8_CHANNEL, 0);
		expect_pass(forms[f], 1, 2, WT_QUANT_INT8_CHANNEL, 0);
	}
	expect_pass("ernie4_5_moe", 2, 1, WT_QUANT_FP8_BLOCK, 0);
	expect_pass("ernie4_5_moe", 2, 2, WT_QUANT_FP8_TENSOR, 1);
	/* int4-group: the experts' 64 columns (32 at TP 2) need a group of 32 */
	model m = {0};
	wt_layout l;
	wt_errbuf err = {0};
	ref_result res;
	open_model(&m, "ernie4_5_moe");
	wt_layout_init(&l);
	l.tp_size = 2;
	l.quant = WT_QUANT_INT4_GROUP;
	l.group_size = 32;
	assert_int_equal(ref_verify(m.c, &l, g_tokens, N_TOK, NULL, NULL, &res, &err), WT_OK);
	print_message("ernie4_5_moe tp 2 int4-group 32: ratio %.3g (budget %.3g)\n",
	              res.diff.max_abs_diff / res.diff.max_abs_ref, res.budget);
	assert_true(res.pass && !res.diff.nonfinite && res.budget == REF_BUDGET_INT4);
	wt_layout_clear(&l);
	close_model(&m);
}

/* (row, column, transformers 4.57.1 logit); the fixtures of seed 11, tokens g_tokens */
static const gold_pt gold_dense[] = {
    {0, 572, -4.59904552e-01f}, {0, 731, -4.08518016e-01f}, {0, 922, -8.57504457e-02f},
    {1, 705, -2.82683492e-01f}, {1, 762, -2.56539524e-01f}, {1, 811, -1.13412663e-01f},
    {2, 423, 2.51948297e-01f},  {2, 566, -4.77373958e-01f}, {2, 778, -3.57549161e-01f},
    {3, 281, -4.03542370e-01f}, {3, 408, -4.92539316e-01f}, {3, 593, 6.55073971e-02f},
    {4, 512, -3.08361501e-01f}, {4, 626, 2.24619642e-01f},  {4, 820, 2.39644181e-02f},
    {5, 529, 2.20614299e-01f},  {5, 722, 1.25173284e-02f},  {5, 938, -3.05290461e-01f},
    {6, 415, 4.64465708e-01f},  {6, 468, -1.22269429e-02f}, {6, 486, -1.32495716e-01f},
};
static const gold_pt gold_moe[] = {
    {0, 46, -3.90165985e-01f},  {0, 360, 4.55767870e-01f},  {0, 628, 1.20741792e-01f},
    {0, 843, 4.49426055e-01f},  {0, 861, 2.84569770e-01f},  {1, 44, -2.27276057e-01f},
    {1, 340, 1.63012818e-01f},  {1, 411, -2.43083954e-01f}, {1, 415, -4.68700975e-02f},
    {1, 700, 2.18141060e-02f},  {2, 62, -2.22206086e-01f},  {2, 106, -3.26527864e-01f},
    {2, 153, 1.04970513e-02f},  {2, 367, -5.57104535e-02f}, {2, 553, 1.14569813e-01f},
    {3, 174, -1.43764615e-01f}, {3, 194, 1.27746940e-01f},  {3, 263, -1.40680209e-01f},
    {3, 709, -3.11991334e-01f}, {3, 844, -1.66410252e-01f}, {4, 35, -3.26260418e-01f},
    {4, 173, -1.86278799e-03f}, {4, 372, 2.74684042e-01f},  {4, 737, -6.89116120e-01f},
    {4, 956, -2.02486143e-01f}, {5, 31, -2.60446876e-01f},  {5, 123, 1.87459961e-02f},
    {5, 325, 8.54765102e-02f},  {5, 924, 1.48121759e-01f},  {5, 991, -4.29351330e-01f},
    {6, 13, 7.02944994e-02f},   {6, 209, -1.35383159e-01f}, {6, 396, -2.90973604e-01f},
    {6, 795, 4.66247499e-02f},  {6, 974, -2.39698410e-01f},
};
static const gold_pt gold_var[] = {
    {0, 727, -3.11093647e-02f}, {1, 818, 3.52704197e-01f}, {2, 508, -2.56212428e-02f},
    {3, 319, -3.32466364e-02f}, {4, 964, 2.38933176e-01f}, {5, 436, -4.72518653e-01f},
    {6, 813, -2.24235311e-01f},
};

/* The full path's logits of form fam at the golden points, within 1e-5 (measured
 * 4.5e-7 over all 7000 logits of each form): the adjacent-pair RoPE, the correction
 * bias (zeroed, transformers' logits move by 0.028), moe_k and moe_norm_min (0.043) and
 * the rest move some of these points. */
#define GOLD_TOL 1e-5

static void test_ernie4_5_transformers(void **state)
{
	(void)state;
	expect_gold("ernie4_5", V_ERN, GOLD_TOL, gold_dense,
	            sizeof(gold_dense) / sizeof(gold_dense[0]));
	expect_gold("ernie4_5_moe", V_ERN, GOLD_TOL, gold_moe,
	            sizeof(gold_moe) / sizeof(gold_moe[0]));
	expect_gold("ernie_var", V_ERN, GOLD_TOL, gold_var, sizeof(gold_var) / sizeof(gold_var[0]));
}

static void tamper_bias(void *ctx, ref_set *r, uint32_t n)
{
	(void)ctx; /* TP 2: rank 1's correction bias negated (its expert choices) */
	assert_int_equal(n, 2);
	ref_tensor *t = find_tensor(&r[1], CB);
	float *v = (float *)(void *)t->data;
	for (uint64_t i = 0; i < t->nbytes / 4; i++)
		v[i] = -v[i];
}

static void tamper_router(void *ctx, ref_set *r, uint32_t n)
{
	(void)ctx; /* TP 2: rank 1's F32 router replica times 2 */
	assert_int_equal(n, 2);
	ref_tensor *t = find_tensor(&r[1], M1 "gate.weight");
	float *v = (float *)(void *)t->data;
	for (uint64_t i = 0; i < t->nbytes / 4; i++)
		v[i] *= 2.0f;
}

static void test_ernie4_5_caught(void **state)
{
	(void)state;
	expect_caught("ernie4_5_moe", 2, 1, tamper_bias, "correction bias negated on rank 1");
	expect_caught("ernie4_5_moe", 2, 1, tamper_router, "router replica x2 on rank 1");
	expect_halves_swapped("ernie4_5_moe", 1, 1,
	                      (tamper_halves){M1 "experts.w13_weight", 0, N_EXP, IE, HID * 2},
	                      "w13 gate / up halves swapped");
	expect_zeroed("ernie4_5_moe", 2, 1, 1, M1 "shared_experts.down_proj.weight",
	              "shared experts slice dropped on rank 1");
	expect_stacks_swapped("ernie4_5_moe", 1, 2, M1 "experts.", "expert stacks exchanged");
	expect_stacks_swapped("ernie_var", 1, 2, M1 "experts.", "the same, top-3");
	expect_halves_swapped(
	    "ernie4_5_moe", 2, 1,
	    (tamper_halves){"model.layers.3.mlp.gate_up_proj.weight", 0, 1, 128, HID * 2},
	    "layer 3 gate_up halves swapped");
	expect_zeroed("ernie4_5", 2, 1, 0, A1 "o_proj.bias", "o_proj bias dropped on rank 0");
	expect_halves_swapped("ernie4_5", 2, 1,
	                      (tamper_halves){"model.layers.1.mlp.gate_up_proj.bias", 0, 1, 128, 2},
	                      "gate_up bias halves swapped");
}

/* Each switch moves the logits (the golden points above pin their values). */
static void test_ernie4_5_switches(void **state)
{
	(void)state;
	model m = {0};
	ref_set ck = {0};
	ref_cfg c;
	wt_errbuf err = {0};
	open_model(&m, "ernie4_5_moe");
	assert_int_equal(ref_load_ckpt(m.c, &c, &ck, &err), WT_OK);
	assert_true(c.ernie && c.kind == REF_DEEPSEEK && !ref_is_mla(&c) && c.E == N_EXP &&
	            c.topk == 2 && c.Ie == IE && c.Is == 2 * IE && c.I == 256 && c.d == 32 &&
	            c.rope_pairs && !c.rope_interleave && c.n_group == 1 && c.topk_group == 1 &&
	            c.moe_start == 1 && c.moe_end == 2 && c.moe_every == 1 && !c.tied &&
	            (c.rot_dim == 0 || c.rot_dim == c.d));
	assert_float_equal(c.routed_scale, 1.0, 0.0);
	assert_float_equal(c.norm_min, 1e-12, 1e-24);
	assert_float_equal(c.eps, 1e-5, 1e-12);
	assert_float_equal(c.theta, 500000.0, 1e-6);
	assert_true(!ref_layer_is_moe(&c, 0) && ref_layer_is_moe(&c, 1) &&
	            ref_layer_is_moe(&c, 2) && !ref_layer_is_moe(&c, 3));
	size_t n = N_TOK * V_ERN;
	float *base = malloc(n * sizeof(float)), *lg = malloc(n * sizeof(float));
	assert_true(base && lg);
	logits_with(&c, &ck, base);
	ref_cfg off = c;
	off.rope_pairs = false;
	logits_with(&off, &ck, lg);
	expect_moved(base, lg, n, 1e-3, "rotate-half instead of adjacent pairs");
	off = c;
	off.norm_min = 0.9;
	logits_with(&off, &ck, lg);
	expect_moved(base, lg, n, 1e-3, "moe_norm_min 0.9");
	off = c;
	off.moe_end = 3; /* layer 3's experts do not exist: an error, not a silent MLP */
	assert_int_not_equal(ref_forward_full(&off, &ck, g_tokens, N_TOK, lg, NULL, &err), WT_OK);
	free(base);
	free(lg);
	ref_set_clear(&ck);
	close_model(&m);
	/* the dense model: tied, adjacent pairs, every head dim */
	open_model(&m, "ernie4_5");
	assert_int_equal(ref_load_ckpt(m.c, &c, &ck, &err), WT_OK);
	assert_true(c.ernie && c.kind == REF_DENSE && c.tied && c.rope_pairs && c.d == 32 &&
	            c.H == 8 && c.KV == 2 && c.E == 0);
	ref_set_clear(&ck);
	close_model(&m);
}

#define ERN_JSON(extra)                                                                            \
	"{\"architectures\": [\"Ernie4_5_MoeForCausalLM\"], \"model_type\": \"ernie4_5_moe\", "    \
	"\"hidden_size\": 64, \"num_attention_heads\": 4, \"num_key_value_heads\": 2, "            \
	"\"num_hidden_layers\": 6, \"vocab_size\": 100, \"intermediate_size\": 96, "               \
	"\"moe_intermediate_size\": 32, \"moe_num_experts\": 8" extra "}"

static void test_ernie4_5_config(void **state)
{
	(void)state;
	ref_cfg c;
	wt_errbuf err = {0};
	/* Ernie4_5_MoeConfig's defaults: moe_k 6, 2 shared experts, MoE from layer 1 to the
	 * last, every layer; tied; eps 1e-5, theta 500000, norm_min 1e-12 */
	static const char plain[] = ERN_JSON("");
	assert_int_equal(ref_cfg_parse_json(plain, strlen(plain), &c, &err), WT_OK);
	assert_true(c.ernie && c.kind == REF_DEEPSEEK && c.topk == 6 && c.Is == 64 &&
	            c.moe_start == 1 && c.moe_end == 5 && c.moe_every == 1 && c.tied &&
	            c.rope_pairs && c.d == 16);
	assert_float_equal(c.eps, 1e-5, 1e-12);
	assert_float_equal(c.theta, 500000.0, 1e-9);
	assert_float_equal(c.norm_min, 1e-12, 1e-24);
	assert_true(!ref_layer_is_moe(&c, 0) && ref_layer_is_moe(&c, 5));
	/* (i + 1) % moe_layer_interval == 0 within [start, end] */
	static const char every[] =
	    ERN_JSON(", \"moe_layer_interval\": 2, \"moe_layer_start_index\": 0, "
	             "\"moe_layer_end_index\": 4, "
	             "\"moe_num_shared_experts\": 0, \"moe_k\": 2");
	assert_int_equal(ref_cfg_parse_json(every, strlen(every), &c, &err), WT_OK);
	for (int64_t i = 0; i < 6; i++)
		assert_int_equal(ref_layer_is_moe(&c, i), i == 1 || i == 3);
	assert_true(c.Is == 0 && c.topk == 2);
	expect_cfg(ERN_JSON(", \"moe_k\": 9"), WT_EUNSUPPORTED, "top-k");
	expect_cfg(ERN_JSON(", \"moe_norm_min\": -1"), WT_ECORRUPT, "moe_norm_min");
	expect_cfg(ERN_JSON(", \"hidden_act\": \"gelu\""), WT_EUNSUPPORTED, "hidden_act");
	expect_cfg(ERN_JSON(", \"rope_scaling\": {\"rope_type\": \"longrope\", \"factor\": 2}"),
	           WT_EUNSUPPORTED, "longrope");
	/* the dense model's class defaults: head_dim 128 (here given), tied */
	static const char dense[] =
	    "{\"architectures\": [\"Ernie4_5ForCausalLM\"], \"model_type\": \"ernie4_5\", "
	    "\"hidden_size\": 64, \"num_attention_heads\": 4, \"num_hidden_layers\": 2, "
	    "\"vocab_size\": 100, \"intermediate_size\": 96}";
	assert_int_equal(ref_cfg_parse_json(dense, strlen(dense), &c, &err), WT_OK);
	assert_true(c.ernie && c.kind == REF_DENSE && c.d == 128 && c.KV == 2 && c.tied &&
	            c.rope_pairs);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_ernie4_5_pass),   cmocka_unit_test(test_ernie4_5_transformers),
	    cmocka_unit_test(test_ernie4_5_caught), cmocka_unit_test(test_ernie4_5_switches),
	    cmocka_unit_test(test_ernie4_5_config),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
