/*
 * test_reference_glm4_moe.c — the reference forward pass over GLM-4.5 / 4.6
 * (Glm4MoeForCausalLM; reference/cfg_fam.c, the DeepSeek-V3 MoE of reference/mla.c):
 * Llama's attention with q/k/v biases and per-head q/k norms, rotate-half RoPE on the
 * first half of each head (partial_rotary_factor 0.5), the dense layer 0, and MoE layers
 * routed by sigmoid scores with the correction bias over groups (n_group 2, topk_group 1),
 * normalised and times routed_scaling_factor 2.5, plus the shared expert. Full and
 * sharded logits agree within REF_TOL_F32 (TP 1, 2, 4, 8, EP 2, 4, TP 2 x EP 2) or the
 * quantized layouts' budgets on the fixture and two variants (partial rotary 1.0 with 4
 * groups, top-2 groups, top-3; tied embeddings); the full path's logits equal
 * transformers 4.57.1's (eager, float32) at points where each switch moves them; rank
 * tensors broken the way a wrong planner would break them are caught; config defaults
 * and refusals are checked. The fixture comes from $WT_BUILD/wt-mkckpt --family glm4_moe
 * (hid 128, H 8, KV 2, d 32, I 256, 8 experts of 64 + 1 shared, V 1000, 3 layers + the
 * MTP layer; seed printed).
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

#define V_GLM 1000
#define HID   128
#define IE    64
#define N_EXP 8
#define M1    "model.layers.1.mlp."
#define A1    "model.layers.1.self_attn."

static int setup(void **state)
{
	(void)state;
	static const char *fams[] = {"glm4_moe"};
	if (gen_fixtures("reference_glm4_moe", fams, 1) != 0 || gen_family("glm4_moe", "glm_var") ||
	    gen_family("glm4_moe", "glm_tied"))
		return -1;
	/* every head dim turned, 4 groups of 2 experts with the best 2 kept, top-3 */
	char *dir = tu_path(g_root, "glm_var");
	edit_config(dir, "\"partial_rotary_factor\": 0.5", "\"partial_rotary_factor\": 1.0");
	edit_config(dir, "\"n_group\": 2", "\"n_group\": 4");
	edit_config(dir, "\"topk_group\": 1", "\"topk_group\": 2");
	edit_config(dir, "\"num_experts_per_tok\": 2", "\"num_experts_per_tok\": 3");
	free(dir);
	dir = tu_path(g_root, "glm_tied"); /* lm_head.weight dropped, the embedding serves */
	edit_config(dir, "\"tie_word_embeddings\": false", "\"tie_word_embeddings\": true");
	free(dir);
	return 0;
}

static void test_glm4_moe_pass(void **state)
{
	(void)state;
	static const char *forms[] = {"glm4_moe", "glm_var", "glm_tied"};
	for (int f = 0; f < 3; f++) {
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
	expect_pass("glm4_moe", 8, 1, WT_QUANT_NONE, 0); /* KV 2 < TP 8 */
	expect_pass("glm4_moe", 2, 1, WT_QUANT_FP8_BLOCK, 0);
	expect_pass("glm4_moe", 2, 2, WT_QUANT_FP8_TENSOR, 1);
	expect_pass("glm4_moe", 2, 1, WT_QUANT_INT8_CHANNEL, 0);
	/* int4-group: the experts' 64 columns (32 at TP 2) need a group of 32 */
	model m = {0};
	wt_layout l;
	wt_errbuf err = {0};
	ref_result res;
	open_model(&m, "glm4_moe");
	wt_layout_init(&l);
	l.tp_size = 2;
	l.quant = WT_QUANT_INT4_GROUP;
	l.group_size = 32;
	assert_int_equal(ref_verify(m.c, &l, g_tokens, N_TOK, NULL, NULL, &res, &err), WT_OK);
	print_message("glm4_moe tp 2 int4-group 32: ratio %.3g (budget %.3g)\n",
	              res.diff.max_abs_diff / res.diff.max_abs_ref, res.budget);
	assert_true(res.pass && !res.diff.nonfinite && res.budget == REF_BUDGET_INT4);
	wt_layout_clear(&l);
	close_model(&m);
}

/* (row, column, transformers 4.57.1 logit) */
static const gold_pt gold_base[] = {
    {0, 0, 4.31247026e-01f},    {0, 77, 6.22409046e-01f},   {0, 784, 2.76556015e-01f},
    {0, 961, 5.37378713e-03f},  {1, 241, 1.34272531e-01f},  {1, 677, 7.25692930e-03f},
    {1, 960, 2.92289585e-01f},  {1, 996, 2.03344688e-01f},  {2, 233, 1.56731263e-01f},
    {2, 293, -3.57704788e-01f}, {2, 610, 5.84006786e-01f},  {2, 917, -1.19071528e-02f},
    {3, 68, -7.51474053e-02f},  {3, 172, 1.02855727e-01f},  {3, 181, -3.25678170e-01f},
    {3, 689, 4.29225340e-02f},  {4, 79, -3.15326601e-01f},  {4, 451, -3.64777982e-01f},
    {4, 576, -6.01500869e-02f}, {4, 827, -1.75293043e-01f}, {5, 142, 2.39408597e-01f},
    {5, 222, 8.76026377e-02f},  {5, 313, 4.48686749e-01f},  {5, 430, -3.42873037e-01f},
    {6, 142, 1.66384026e-01f},  {6, 181, -3.22961241e-01f}, {6, 621, -5.39855659e-01f},
    {6, 955, -2.23947763e-02f},
};
static const gold_pt gold_var[] = {
    {0, 961, 6.52946904e-02f},  {1, 271, -7.00044446e-03f}, {2, 850, 2.17096329e-01f},
    {3, 689, -7.92432278e-02f}, {4, 576, 7.15507194e-02f},  {5, 143, 3.98629278e-01f},
    {6, 763, 1.09103046e-01f},
};

/* The full path's logits of form fam at the golden points, within 1e-5 (measured
 * 6e-7): each of partial rotary, group routing, routed_scaling_factor and the q/k norms
 * moves some of these points by 0.05-0.3 in transformers. */
#define GOLD_TOL 1e-5

static void test_glm4_moe_transformers(void **state)
{
	(void)state;
	expect_gold("glm4_moe", V_GLM, GOLD_TOL, gold_base,
	            sizeof(gold_base) / sizeof(gold_base[0]));
	expect_gold("glm_var", V_GLM, GOLD_TOL, gold_var, sizeof(gold_var) / sizeof(gold_var[0]));
}

/* BF16 tensor name of rank set r times f. */
static void scale_bf16(ref_set *r, const char *name, float f)
{
	ref_tensor *t = find_tensor(r, name);
	uint16_t *v = (uint16_t *)(void *)t->data;
	for (uint64_t i = 0; i < t->nbytes / 2; i++)
		v[i] = kern_f32_to_bf16(kern_bf16_to_f32(v[i]) * f);
}

static void tamper_bias(void *ctx, ref_set *r, uint32_t n)
{
	(void)ctx; /* TP 2: rank 1's correction bias negated (its expert choices) */
	assert_int_equal(n, 2);
	ref_tensor *t = find_tensor(&r[1], M1 "gate.e_score_correction_bias");
	float *v = (float *)(void *)t->data;
	for (uint64_t i = 0; i < t->nbytes / 4; i++)
		v[i] = -v[i];
}

static void tamper_router(void *ctx, ref_set *r, uint32_t n)
{
	(void)ctx; /* TP 2: rank 1's router replica times 2 */
	assert_int_equal(n, 2);
	scale_bf16(&r[1], M1 "gate.weight", 2.0f);
}

static void tamper_qnorm(void *ctx, ref_set *r, uint32_t n)
{
	(void)ctx; /* TP 2: rank 1's q_norm replica times 2 */
	assert_int_equal(n, 2);
	scale_bf16(&r[1], A1 "q_norm.weight", 2.0f);
}

static void test_glm4_moe_caught(void **state)
{
	(void)state;
	expect_caught("glm4_moe", 2, 1, tamper_bias, "correction bias negated on rank 1");
	expect_caught("glm4_moe", 2, 1, tamper_router, "router replica x2 on rank 1");
	expect_caught("glm4_moe", 2, 1, tamper_qnorm, "q_norm replica x2 on rank 1");
	expect_zeroed("glm4_moe", 2, 1, 1, A1 "qkv_proj.bias", "q/k/v biases dropped on rank 1");
	expect_halves_swapped("glm4_moe", 1, 1,
	                      (tamper_halves){M1 "experts.w13_weight", 0, N_EXP, IE, HID * 2},
	                      "w13 gate / up halves swapped");
	expect_zeroed("glm4_moe", 2, 1, 1, M1 "shared_experts.down_proj.weight",
	              "shared expert slice dropped on rank 1");
	expect_stacks_swapped("glm4_moe", 1, 2, M1 "experts.", "expert stacks exchanged");
	expect_stacks_swapped("glm_var", 1, 2, M1 "experts.", "the same, 4 groups, top-3");
	expect_halves_swapped(
	    "glm4_moe", 2, 1,
	    (tamper_halves){"model.layers.0.mlp.gate_up_proj.weight", 0, 1, 128, HID * 2},
	    "dense gate_up halves swapped on rank 0");
}

/* Each switch moves the logits (the golden points above pin their values). */
static void test_glm4_moe_switches(void **state)
{
	(void)state;
	model m = {0};
	ref_set ck = {0};
	ref_cfg c;
	wt_errbuf err = {0};
	open_model(&m, "glm4_moe");
	assert_int_equal(ref_load_ckpt(m.c, &c, &ck, &err), WT_OK);
	assert_true(c.glm4_moe && c.kind == REF_DEEPSEEK && !ref_is_mla(&c) && c.E == N_EXP &&
	            c.topk == 2 && c.Ie == IE && c.Is == IE && c.I == 256 && c.d == 32 &&
	            c.rot_dim == 16 && c.qk_norm && !c.qk_norm_full && !c.rope_pairs &&
	            !c.rope_interleave && c.n_group == 2 && c.topk_group == 1 && c.norm_topk &&
	            c.first_dense == 1 && c.layer_freq == 1 && !c.tied);
	assert_float_equal(c.routed_scale, 2.5, 1e-12);
	assert_float_equal(c.eps, 1e-5, 1e-12);
	assert_float_equal(c.theta, 1000000.0, 1e-6);
	assert_true(!ref_layer_is_moe(&c, 0) && ref_layer_is_moe(&c, 1) && ref_layer_is_moe(&c, 2));
	size_t n = N_TOK * V_GLM;
	float *base = malloc(n * sizeof(float)), *lg = malloc(n * sizeof(float));
	assert_true(base && lg);
	logits_with(&c, &ck, base);
	ref_cfg off = c;
	off.rot_dim = c.d;
	logits_with(&off, &ck, lg);
	expect_moved(base, lg, n, 1e-3, "RoPE on every head dim");
	off = c;
	off.rope_pairs = true;
	logits_with(&off, &ck, lg);
	expect_moved(base, lg, n, 1e-3, "adjacent pairs instead of rotate-half");
	off = c;
	off.qk_norm = false;
	logits_with(&off, &ck, lg);
	expect_moved(base, lg, n, 1e-3, "no q/k norms");
	off = c;
	off.topk_group = off.n_group;
	logits_with(&off, &ck, lg);
	expect_moved(base, lg, n, 1e-3, "every group kept");
	off = c;
	off.routed_scale = 1.0;
	logits_with(&off, &ck, lg);
	expect_moved(base, lg, n, 1e-3, "routed_scaling_factor 1");
	off = c;
	off.first_dense = 0; /* layer 0's experts do not exist: an error, not a silent MLP */
	assert_int_not_equal(ref_forward_full(&off, &ck, g_tokens, N_TOK, lg, NULL, &err), WT_OK);
	free(base);
	free(lg);
	ref_set_clear(&ck);
	close_model(&m);
}

#define GLM_JSON(extra)                                                                            \
	"{\"architectures\": [\"Glm4MoeForCausalLM\"], \"model_type\": \"glm4_moe\", "             \
	"\"hidden_size\": 64, \"num_attention_heads\": 4, \"num_key_value_heads\": 2, "            \
	"\"head_dim\": 16, \"num_hidden_layers\": 4, \"vocab_size\": 100, "                        \
	"\"intermediate_size\": 96, \"moe_intermediate_size\": 32, \"n_routed_experts\": 8" extra  \
	"}"

static void test_glm4_moe_config(void **state)
{
	(void)state;
	ref_cfg c;
	wt_errbuf err = {0};
	/* Glm4MoeConfig's defaults: top-8, one group, one shared expert, layer 0 dense, rotary
	 * half, no q/k norms, eps 1e-5, theta 10000, scale 1, normalised */
	static const char plain[] = GLM_JSON("");
	assert_int_equal(ref_cfg_parse_json(plain, strlen(plain), &c, &err), WT_OK);
	assert_true(c.glm4_moe && c.kind == REF_DEEPSEEK && c.topk == 8 && c.n_group == 1 &&
	            c.topk_group == 1 && c.Is == 32 && c.first_dense == 1 && c.rot_dim == 8 &&
	            !c.qk_norm && c.norm_topk && !c.rope_interleave && !c.tied);
	assert_float_equal(c.eps, 1e-5, 1e-12);
	assert_float_equal(c.theta, 10000.0, 1e-9);
	assert_float_equal(c.routed_scale, 1.0, 0.0);
	/* moe_layer_freq is not read: every layer from first_k_dense_replace on is MoE */
	static const char freq[] = GLM_JSON(
	    ", \"moe_layer_freq\": 2, \"first_k_dense_replace\": 0, \"use_qk_norm\": true, "
	    "\"partial_rotary_factor\": 1.0, \"n_shared_experts\": 2");
	assert_int_equal(ref_cfg_parse_json(freq, strlen(freq), &c, &err), WT_OK);
	for (int64_t i = 0; i < 4; i++)
		assert_true(ref_layer_is_moe(&c, i));
	assert_true(c.qk_norm && c.rot_dim == 16 && c.Is == 64);
	expect_cfg(GLM_JSON(", \"n_group\": 3"), WT_EUNSUPPORTED, "n_group 3");
	expect_cfg(GLM_JSON(", \"n_group\": 2, \"topk_group\": 3"), WT_EUNSUPPORTED,
	           "topk_group 3");
	expect_cfg(GLM_JSON(", \"partial_rotary_factor\": 0.1"), WT_EUNSUPPORTED,
	           "partial_rotary_factor");
	expect_cfg(GLM_JSON(", \"scoring_func\": \"softmax\""), WT_EUNSUPPORTED, "scoring_func");
	expect_cfg(GLM_JSON(", \"routed_scaling_factor\": 0"), WT_ECORRUPT,
	           "routed_scaling_factor");
	expect_cfg(GLM_JSON(", \"num_experts_per_tok\": 9"), WT_EUNSUPPORTED, "top-k");
	expect_cfg(GLM_JSON(", \"hidden_act\": \"relu\""), WT_EUNSUPPORTED, "hidden_act");
	expect_cfg(GLM_JSON(", \"use_qk_norm\": 1"), WT_ECORRUPT, "use_qk_norm");
	expect_cfg(GLM_JSON(", \"rope_scaling\": {\"rope_type\": \"longrope\", \"factor\": 2}"),
	           WT_EUNSUPPORTED, "longrope");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_glm4_moe_pass),   cmocka_unit_test(test_glm4_moe_transformers),
	    cmocka_unit_test(test_glm4_moe_caught), cmocka_unit_test(test_glm4_moe_switches),
	    cmocka_unit_test(test_glm4_moe_config),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
