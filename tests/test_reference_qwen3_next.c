/*
 * test_reference_qwen3_next.c — the reference forward pass over Qwen3-Next
 * (Qwen3NextForCausalLM; reference/qwen3_next.c, reference/cfg_qwen3_next.c): gated delta
 * net layers (in_proj_qkvz / in_proj_ba grouped per key head, the causal depthwise conv,
 * l2-normalised q / k, the gated delta rule, RMSNormGated, out_proj) and gated full
 * attention layers (q_proj rows [query; gate] per head, zero-centred q / k norms, RoPE on
 * a quarter of each head, output times sigmoid(gate)), zero-centred RMSNorms, Qwen2-MoE's
 * experts with the sigmoid-gated shared expert and the dense layer 0 (mlp_only_layers).
 * Full and sharded logits agree within REF_TOL_F32 (TP 1, 2, 4, EP 2, 4, TP 2 x EP 2) or
 * the quantized layouts' budgets (REF_BUDGET_LIN_*) on the fixture and a variant (RoPE on
 * half the head with linear scaling, layer_types, top-3 without renormalisation); the
 * full path's logits equal transformers 4.57.1's (eager, float32, its torch paths of the
 * conv and the delta rule) at 35 points; rank tensors broken the way a wrong planner
 * would break them are caught; config defaults and refusals are checked. The fixture
 * comes from $WT_BUILD/wt-mkckpt --family qwen3_next (hid 256, H 4, KV 2, d 64; 4 key /
 * 8 value heads of 32, conv 4; layers 0, 2 linear, 1, 3 full; I 384, 4 experts of 64 +
 * a shared expert of 128, V 1000; seed printed).
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

#define V_Q3N 1000
#define HID   256
#define IE    64
#define N_EXP 4
#define D     64 /* full attention head_dim */
#define DK    32 /* linear attention key / value head dims */
#define HK    4  /* key heads; 8 value heads, 2 per key head */
#define LIN0  "model.layers.0.linear_attn."
#define ATT1  "model.layers.1.self_attn."
#define M1    "model.layers.1.mlp."

static int setup(void **state)
{
	(void)state;
	static const char *fams[] = {"qwen3_next"};
	if (gen_fixtures("reference_qwen3_next", fams, 1) != 0 ||
	    gen_family("qwen3_next", "q3n_var"))
		return -1;
	/* half of each head turned, with linear scaling; the layer pattern as layer_types;
	 * top-3 of the 4 experts, weights not renormalised */
	char *dir = tu_path(g_root, "q3n_var");
	edit_config(dir, "\"partial_rotary_factor\": 0.25", "\"partial_rotary_factor\": 0.5");
	edit_config(dir, "\"rope_scaling\": null",
	            "\"rope_scaling\": {\"rope_type\": \"linear\", \"factor\": 4.0}");
	edit_config(dir, "\"full_attention_interval\": 2",
	            "\"layer_types\": [\"linear_attention\", \"full_attention\", "
	            "\"linear_attention\", \"full_attention\"]");
	edit_config(dir, "\"num_experts_per_tok\": 2", "\"num_experts_per_tok\": 3");
	edit_config(dir, "\"norm_topk_prob\": true", "\"norm_topk_prob\": false");
	free(dir);
	return 0;
}

/* int4-group (group 32: the experts' 64 columns) runs and stays finite; the fixture
 * measures 0.57-1.16 against REF_BUDGET_INT4, as coarse as a slicing error
 * (reference.h), so its verdict is not asserted. */
static void expect_int4_runs(const char *fam)
{
	model m = {0};
	wt_layout l;
	wt_errbuf err = {0};
	ref_result res;
	open_model(&m, fam);
	wt_layout_init(&l);
	l.quant = WT_QUANT_INT4_GROUP;
	l.group_size = 32;
	assert_int_equal(ref_verify(m.c, &l, g_tokens, N_TOK, NULL, NULL, &res, &err), WT_OK);
	print_message("%s int4-group 32: ratio %.3g (budget %.3g)\n", fam,
	              res.diff.max_abs_diff / res.diff.max_abs_ref, res.budget);
	assert_false(res.diff.nonfinite);
	assert_true(res.budget == REF_BUDGET_INT4);
	assert_true(res.diff.max_abs_diff > REF_TOL_F32 * res.diff.max_abs_ref);
	wt_layout_clear(&l);
	close_model(&m);
}

static void test_q3n_pass(void **state)
{
	(void)state;
	static const char *forms[] = {"qwen3_next", "q3n_var"};
	for (int f = 0; f < 2; f++) {
		expect_pass(forms[f], 1, 1, WT_QUANT_NONE, 0);
		expect_pass(forms[f], 2, 1, WT_QUANT_NONE, 0);
		expect_pass(forms[f], 4, 1, WT_QUANT_NONE, 0); /* KV 2 < TP 4: replicated */
		expect_pass(forms[f], 1, 2, WT_QUANT_NONE, 0);
		expect_pass(forms[f], 1, 4, WT_QUANT_NONE, 1);
		expect_pass(forms[f], 2, 2, WT_QUANT_NONE, 0);
		expect_pass(forms[f], 2, 2, WT_QUANT_NONE, 1);
		expect_pass(forms[f], 2, 1, WT_QUANT_FP8_CHANNEL, 0);
		expect_pass(forms[f], 1, 2, WT_QUANT_INT8_CHANNEL, 0);
	}
	expect_pass("qwen3_next", 2, 1, WT_QUANT_FP8_BLOCK, 0);
	expect_pass("qwen3_next", 2, 2, WT_QUANT_FP8_TENSOR, 1);
	expect_pass("qwen3_next", 4, 1, WT_QUANT_INT8_CHANNEL, 0);
	expect_int4_runs("qwen3_next");
	/* the budget: REF_BUDGET_LIN_* for a model with gated-delta-net layers */
	ref_result res;
	wt_errbuf err = {0};
	assert_int_equal(run("qwen3_next", 2, 1, WT_QUANT_FP8_CHANNEL, 0, NULL, NULL, &res, &err),
	                 WT_OK);
	assert_true(res.budget == REF_BUDGET_LIN_FP8);
	assert_int_equal(run("qwen3_next", 2, 1, WT_QUANT_INT8_CHANNEL, 0, NULL, NULL, &res, &err),
	                 WT_OK);
	assert_true(res.budget == REF_BUDGET_LIN_INT8);
	/* 8 ranks split neither the 4 heads nor the 4 key heads: the planner refuses it */
	assert_int_equal(run("qwen3_next", 8, 1, WT_QUANT_NONE, 0, NULL, NULL, &res, &err),
	                 WT_ELAYOUT);
}

/* (row, column, transformers 4.57.1 logit): each row's largest and smallest logit and
 * two others; the variant one per row */
static const gold_pt gold_base[] = {
    {0, 577, 1.94303119e+00f},  {0, 625, -9.97340560e-01f}, {0, 944, 7.04814196e-01f},
    {0, 961, -1.76160002e+00f}, {1, 432, 1.87707078e+00f},  {1, 614, -1.95028949e+00f},
    {1, 684, -6.40430033e-01f}, {1, 897, 1.93608999e-02f},  {2, 300, 1.79611719e+00f},
    {2, 578, 5.38616121e-01f},  {2, 775, -1.42175508e+00f}, {2, 835, -2.11762810e+00f},
    {3, 225, -4.43075597e-03f}, {3, 556, 1.65378141e+00f},  {3, 787, -1.89483666e+00f},
    {3, 833, 5.83404899e-01f},  {4, 55, 1.12051344e+00f},   {4, 300, 6.52438521e-01f},
    {4, 916, -2.06990910e+00f}, {4, 999, 1.72290051e+00f},  {5, 285, 9.39007401e-01f},
    {5, 752, -1.92309141e+00f}, {5, 873, -2.85560191e-01f}, {5, 987, 2.33598995e+00f},
    {6, 5, -2.94611216e-01f},   {6, 678, -1.88156664e+00f}, {6, 747, 2.43422604e+00f},
    {6, 912, 2.83572972e-01f},
};
static const gold_pt gold_var[] = {
    {0, 499, -2.55023539e-01f}, {1, 821, 4.72244620e-01f},  {2, 131, 1.83527052e-01f},
    {3, 797, -3.37865740e-01f}, {4, 119, -3.37093174e-02f}, {5, 467, 1.15880482e-01f},
    {6, 816, -4.75042045e-01f},
};

/* The full path's logits of form fam at the golden points, within 3e-5 (measured 3.1e-6;
 * float32 noise: transformers in float32 and float64 differ by 1e-6 of the largest
 * logit): every step of the gated delta net or the gated attention left out or changed
 * moves these points by 1e-2 or more. */
#define GOLD_TOL 3e-5

static void test_q3n_transformers(void **state)
{
	(void)state;
	expect_gold("qwen3_next", V_Q3N, GOLD_TOL, gold_base,
	            sizeof(gold_base) / sizeof(gold_base[0]));
	expect_gold("q3n_var", V_Q3N, GOLD_TOL, gold_var, sizeof(gold_var) / sizeof(gold_var[0]));
}

/* BF16 tensor name of rank set r times f. */
static void scale_bf16(ref_set *r, const char *name, float f)
{
	ref_tensor *t = find_tensor(r, name);
	assert_int_equal(t->dtype, WT_BF16);
	uint16_t *v = (uint16_t *)(void *)t->data;
	for (uint64_t i = 0; i < t->nbytes / 2; i++)
		v[i] = kern_f32_to_bf16(kern_bf16_to_f32(v[i]) * f);
}

/* Rows [a, a + n) and [b, b + n) of a 2-D tensor of `cols` columns exchanged. */
static void swap_rows(ref_tensor *t, int64_t a, int64_t b, int64_t n, int64_t cols)
{
	size_t el =
	    t->nbytes / (size_t)(t->shape[0] * t->shape[1] * (t->ndim > 2 ? t->shape[2] : 1));
	size_t rb = (size_t)cols * el, sz = (size_t)n * rb;
	uint8_t *tmp = malloc(sz);
	assert_non_null(tmp);
	memcpy(tmp, t->data + (size_t)a * rb, sz);
	memcpy(t->data + (size_t)a * rb, t->data + (size_t)b * rb, sz);
	memcpy(t->data + (size_t)b * rb, tmp, sz);
	free(tmp);
}

static void tamper_qkvz_vz(void *ctx, ref_set *r, uint32_t n)
{
	(void)ctx; /* TP 2: rank 0's first group read [q; k; z; v] (value and gate rows) */
	assert_int_equal(n, 2);
	swap_rows(find_tensor(&r[0], LIN0 "in_proj_qkvz.weight"), 2 * DK, 2 * DK + 2 * DK, 2 * DK,
	          HID);
}

static void tamper_qkvz_flat(void *ctx, ref_set *r, uint32_t n)
{
	(void)ctx; /* TP 1: the rows laid [q; k; v; z] over all heads instead of per key head
	            * (here: key head 0's k rows exchanged with key head 1's q rows) */
	assert_int_equal(n, 1);
	int64_t grp = 2 * DK + 4 * DK;
	swap_rows(find_tensor(&r[0], LIN0 "in_proj_qkvz.weight"), DK, grp, DK, HID);
}

static void tamper_ba(void *ctx, ref_set *r, uint32_t n)
{
	(void)ctx; /* TP 2: rank 1's in_proj_ba b and a rows exchanged in each group */
	assert_int_equal(n, 2);
	ref_tensor *t = find_tensor(&r[1], LIN0 "in_proj_ba.weight");
	for (int64_t g = 0; g < HK / 2; g++)
		swap_rows(t, g * 4, g * 4 + 2, 2, HID);
}

static void tamper_conv(void *ctx, ref_set *r, uint32_t n)
{
	(void)ctx; /* TP 2: rank 0's conv1d [k_r; q_r; v_r] instead of [q_r; k_r; v_r] */
	assert_int_equal(n, 2);
	ref_tensor *t = find_tensor(&r[0], LIN0 "conv1d.weight");
	swap_rows(t, 0, 2 * DK, 2 * DK, t->shape[2]);
}

static void tamper_gnorm(void *ctx, ref_set *r, uint32_t n)
{
	(void)ctx; /* TP 2: rank 1's RMSNormGated replica times 2 */
	assert_int_equal(n, 2);
	scale_bf16(&r[1], LIN0 "norm.weight", 2.0f);
}

static void tamper_gate_rows(void *ctx, ref_set *r, uint32_t n)
{
	(void)ctx; /* TP 2: rank 0's first head read [gate; query] */
	assert_int_equal(n, 2);
	swap_rows(find_tensor(&r[0], ATT1 "qkv_proj.weight"), 0, D, D, HID);
}

static void tamper_qnorm(void *ctx, ref_set *r, uint32_t n)
{
	(void)ctx; /* TP 2: rank 1's q_norm replica times 2 */
	assert_int_equal(n, 2);
	scale_bf16(&r[1], ATT1 "q_norm.weight", 2.0f);
}

static void tamper_input_norm(void *ctx, ref_set *r, uint32_t n)
{
	(void)ctx; /* TP 2: rank 1's input_layernorm replica of a linear layer times 2 */
	assert_int_equal(n, 2);
	scale_bf16(&r[1], "model.layers.2.input_layernorm.weight", 2.0f);
}

static void tamper_shared_gate(void *ctx, ref_set *r, uint32_t n)
{
	(void)ctx; /* TP 2: rank 1's shared_expert_gate replica negated */
	assert_int_equal(n, 2);
	scale_bf16(&r[1], M1 "shared_expert_gate.weight", -1.0f);
}

static void test_q3n_caught(void **state)
{
	(void)state;
	expect_swapped("qwen3_next", 2, 1, LIN0 "in_proj_qkvz.weight",
	               "in_proj_qkvz ranks exchanged");
	expect_caught("qwen3_next", 2, 1, tamper_qkvz_vz, "v / z rows of a group exchanged");
	expect_caught("qwen3_next", 1, 1, tamper_qkvz_flat, "rows not grouped per key head");
	expect_caught("qwen3_next", 2, 1, tamper_ba, "b / a rows exchanged on rank 1");
	expect_caught("qwen3_next", 2, 1, tamper_conv, "conv1d q / k segments exchanged");
	expect_swapped("qwen3_next", 2, 1, LIN0 "A_log", "A_log slices exchanged");
	expect_swapped("qwen3_next", 2, 1, LIN0 "dt_bias", "dt_bias slices exchanged");
	expect_caught("qwen3_next", 2, 1, tamper_gnorm, "RMSNormGated replica x2 on rank 1");
	expect_swapped("qwen3_next", 2, 1, LIN0 "out_proj.weight", "out_proj columns exchanged");
	expect_caught("qwen3_next", 2, 1, tamper_gate_rows, "query / gate rows exchanged");
	expect_caught("qwen3_next", 2, 1, tamper_qnorm, "q_norm replica x2 on rank 1");
	expect_caught("qwen3_next", 2, 1, tamper_input_norm, "input_layernorm replica x2");
	expect_stacks_swapped("qwen3_next", 1, 2, M1 "experts.", "expert stacks exchanged");
	expect_stacks_swapped("q3n_var", 1, 2, M1 "experts.", "the same, top-3 unnormalised");
	expect_caught("qwen3_next", 2, 1, tamper_shared_gate, "shared_expert_gate negated");
}

/* Each switch moves the logits (the golden points above pin their values). */
static void test_q3n_switches(void **state)
{
	(void)state;
	model m = {0};
	ref_set ck = {0};
	ref_cfg c;
	wt_errbuf err = {0};
	open_model(&m, "qwen3_next");
	assert_int_equal(ref_load_ckpt(m.c, &c, &ck, &err), WT_OK);
	assert_true(c.q3n && c.kind == REF_QWEN2_MOE && c.E == N_EXP && c.topk == 2 && c.Ie == IE &&
	            c.Is == 128 && c.I == 384 && c.d == D && c.rot_dim == 16 && c.qk_norm &&
	            c.norm_topk && !c.tied && c.lin_hk == HK && c.lin_hv == 8 && c.lin_dk == DK &&
	            c.lin_dv == DK && c.lin_kconv == 4 && c.act == REF_ACT_SILU);
	assert_true(ref_q3n_linear(&c, 0) && !ref_q3n_linear(&c, 1) && ref_q3n_linear(&c, 2) &&
	            !ref_q3n_linear(&c, 3));
	assert_true(!ref_layer_is_moe(&c, 0) && ref_layer_is_moe(&c, 1) && ref_layer_is_moe(&c, 3));
	assert_float_equal(c.norm_off, 1.0, 0.0);
	assert_float_equal(c.eps, 1e-6, 1e-15);
	assert_float_equal(c.theta, 10000000.0, 1e-3);
	size_t n = N_TOK * V_Q3N;
	float *base = malloc(n * sizeof(float)), *lg = malloc(n * sizeof(float));
	assert_true(base && lg);
	logits_with(&c, &ck, base);
	ref_cfg off = c;
	off.rot_dim = c.d;
	logits_with(&off, &ck, lg);
	expect_moved(base, lg, n, 1e-3, "RoPE on every head dim");
	off = c;
	off.norm_off = 0.0f;
	logits_with(&off, &ck, lg);
	expect_moved(base, lg, n, 1e-3, "norms not zero-centred");
	off = c;
	off.qk_norm = false;
	logits_with(&off, &ck, lg);
	expect_moved(base, lg, n, 1e-3, "no q/k norms");
	off = c;
	off.norm_topk = false;
	logits_with(&off, &ck, lg);
	expect_moved(base, lg, n, 1e-3, "top-k weights not renormalised");
	off = c;
	off.lin_kconv = 2; /* the conv's shape is checked, not read past */
	assert_int_equal(ref_forward_full(&off, &ck, g_tokens, N_TOK, lg, NULL, &err), WT_ESHAPE);
	/* 4 ranks do not split 2 key heads: refused before any rank tensor is read */
	off = c;
	off.lin_hk = 2;
	wt_layout lay;
	wt_layout_init(&lay);
	lay.tp_size = 4;
	ref_set ranks[4] = {{0}};
	assert_int_equal(ref_forward_sharded(&off, ranks, &lay, 0, g_tokens, N_TOK, NULL, lg, &err),
	                 WT_ELAYOUT);
	print_message("refused: %s\n", err.msg);
	wt_layout_clear(&lay);
	off = c;
	off.q3n_linear[0] &= ~1ull; /* layer 0 as full attention: its tensors are absent */
	assert_int_equal(ref_forward_full(&off, &ck, g_tokens, N_TOK, lg, NULL, &err),
	                 WT_ENOTFOUND);
	print_message("refused: %s\n", err.msg);
	free(base);
	free(lg);
	ref_set_clear(&ck);
	close_model(&m);
}

/* A config of `n` experts (a JSON number) with keys `extra` (linear_num_value_heads
 * among them: Q3N_JSON gives 4) */
#define Q3N_CFG(n, extra)                                                                          \
	"{\"architectures\": [\"Qwen3NextForCausalLM\"], \"model_type\": \"qwen3_next\", "         \
	"\"hidden_size\": 64, \"num_attention_heads\": 4, \"num_key_value_heads\": 2, "            \
	"\"head_dim\": 16, \"num_hidden_layers\": 8, \"vocab_size\": 100, "                        \
	"\"intermediate_size\": 96, \"moe_intermediate_size\": 32, \"num_experts\": " n ", "       \
	"\"linear_num_key_heads\": 2, \"linear_key_head_dim\": 8, "                                \
	"\"linear_value_head_dim\": 8" extra "}"
#define Q3N_JSON(extra) Q3N_CFG("16", ", \"linear_num_value_heads\": 4" extra)

static void test_q3n_config(void **state)
{
	(void)state;
	ref_cfg c;
	wt_errbuf err = {0};
	/* Qwen3NextConfig's defaults: top-10, normalised, a shared expert of 512, a quarter
	 * of each head rotated, eps 1e-6, theta 10000, conv 4, every 4th layer full */
	static const char plain[] = Q3N_JSON("");
	assert_int_equal(ref_cfg_parse_json(plain, strlen(plain), &c, &err), WT_OK);
	assert_true(c.q3n && c.kind == REF_QWEN2_MOE && c.topk == 10 && c.norm_topk &&
	            c.Is == 512 && c.rot_dim == 4 && c.lin_kconv == 4 && c.qk_norm && !c.tied &&
	            c.norm_off == 1.0f && c.sparse_step == 1);
	assert_float_equal(c.eps, 1e-6, 1e-15);
	assert_float_equal(c.theta, 10000.0, 1e-9);
	for (int64_t i = 0; i < 8; i++)
		assert_int_equal(ref_q3n_linear(&c, i), (i + 1) % 4 != 0);
	static const char lt[] = Q3N_CFG(
	    "0",
	    ", \"linear_num_value_heads\": 4, \"layer_types\": [\"full_attention\", "
	    "\"linear_attention\", \"full_attention\", "
	    "\"full_attention\", \"linear_attention\", \"linear_attention\", \"full_attention\", "
	    "\"full_attention\"], \"full_attention_interval\": 2, \"norm_topk_prob\": false");
	assert_int_equal(ref_cfg_parse_json(lt, strlen(lt), &c, &err), WT_OK);
	assert_true(c.kind == REF_DENSE && !c.norm_topk && !ref_layer_is_moe(&c, 1));
	for (int64_t i = 0; i < 8; i++) /* layer_types wins over full_attention_interval */
		assert_int_equal(ref_q3n_linear(&c, i), i == 1 || i == 4 || i == 5);
	static const char iv[] = Q3N_JSON(", \"full_attention_interval\": 2");
	assert_int_equal(ref_cfg_parse_json(iv, strlen(iv), &c, &err), WT_OK);
	for (int64_t i = 0; i < 8; i++)
		assert_int_equal(ref_q3n_linear(&c, i), i % 2 == 0);
	expect_cfg(Q3N_JSON(", \"layer_types\": [\"linear_attention\", \"full_attention\"]"),
	           WT_ECORRUPT, "layer_types has 2 entries");
	expect_cfg(Q3N_JSON(", \"layer_types\": [\"linear_attention\", \"full_attention\", "
	                    "\"linear_attention\", \"full_attention\", \"linear_attention\", "
	                    "\"sliding_attention\", \"linear_attention\", \"full_attention\"]"),
	           WT_ECORRUPT, "layer_types[5]");
	expect_cfg(Q3N_CFG("16", ", \"linear_num_value_heads\": 3"), WT_ECORRUPT, "not a multiple");
	expect_cfg(Q3N_JSON(", \"partial_rotary_factor\": 0.1"), WT_EUNSUPPORTED,
	           "partial_rotary_factor");
	expect_cfg(Q3N_JSON(", \"hidden_act\": \"relu\""), WT_EUNSUPPORTED, "hidden_act");
	expect_cfg(Q3N_JSON(", \"num_experts_per_tok\": 17"), WT_EUNSUPPORTED, "top-k");
	expect_cfg(Q3N_JSON(", \"norm_topk_prob\": 1"), WT_ECORRUPT, "norm_topk_prob");
	expect_cfg(Q3N_JSON(", \"rope_scaling\": {\"rope_type\": \"longrope\", \"factor\": 2}"),
	           WT_EUNSUPPORTED, "longrope");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_q3n_pass),   cmocka_unit_test(test_q3n_transformers),
	    cmocka_unit_test(test_q3n_caught), cmocka_unit_test(test_q3n_switches),
	    cmocka_unit_test(test_q3n_config),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
