/*
 * test_reference_hunyuan.c — the reference forward pass over Hunyuan V1 dense
 * (HunYuanDenseV1ForCausalLM; reference/cfg_hunyuan.c) and MoE (HunYuanMoEV1ForCausalLM: the
 * same attention, every layer a softmax top-k router, renormalised, plus the ungated
 * shared_mlp). Dense: Llama's decoder with q/k/v and o_proj
 * biases (attention_bias), per-head query_layernorm / key_layernorm [d] after RoPE
 * (replicated on every rank), the NTK-alpha RoPE base (rope_scaling dynamic with alpha).
 * Full and sharded logits agree within REF_TOL_F32 (TP 1, 2, 4, 8) or the quantized layouts'
 * budgets; the full path's logits equal transformers 4.57.1's (eager, float32) at 28
 * points; rank tensors broken the way a wrong planner would break them are caught; each
 * switch moves the logits; config defaults and refusals. Fixture from
 * $WT_BUILD/wt-mkckpt --family hunyuan_v1_dense (hid 256, H 8, KV 2, d 64, I 512, V 1000,
 * 2 layers, tied) and --family hunyuan_v1_moe (hid 256, H 8, KV 2, d 32, 8 experts top-2 of
 * 128, shared MLP 128, 2 layers, tied; seed printed).
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

#define V_HY "hunyuan_v1_dense"
#define V_HM "hunyuan_v1_moe"
#define V_N  1000
#define A1   "model.layers.1.self_attn."

static int setup(void **state)
{
	(void)state;
	static const char *fams[] = {V_HY, V_HM};
	return gen_fixtures("reference_hunyuan", fams, 2);
}

static void test_hunyuan_dense_pass(void **state)
{
	(void)state;
	expect_pass(V_HY, 1, 1, WT_QUANT_NONE, 0);
	expect_pass(V_HY, 2, 1, WT_QUANT_NONE, 0);
	expect_pass(V_HY, 4, 1, WT_QUANT_NONE, 0); /* KV 2 < TP 4 */
	expect_pass(V_HY, 8, 1, WT_QUANT_NONE, 0);
	expect_pass(V_HY, 2, 1, WT_QUANT_INT8_CHANNEL, 0);
	expect_pass(V_HY, 4, 1, WT_QUANT_FP8_CHANNEL, 0);
	expect_pass(V_HY, 2, 1, WT_QUANT_FP8_BLOCK, 0);
}

/* (row, column, transformers 4.57.1 logit), tokens g_tokens */
static const gold_pt gold_hunyuan_dense[] = {
    {0, 298, 4.06334639e-01f},  {0, 553, 1.96459711e-01f},  {0, 859, 4.03358907e-01f},
    {0, 993, -2.23228917e-01f}, {1, 18, -3.48743379e-01f},  {1, 532, 3.06297123e-01f},
    {1, 671, 2.49879420e-01f},  {1, 939, 7.56891251e-01f},  {2, 489, 7.89452791e-01f},
    {2, 500, 3.01900618e-02f},  {2, 842, -9.72452834e-02f}, {2, 947, -9.14657563e-02f},
    {3, 228, -4.87723410e-01f}, {3, 277, 1.24372929e-01f},  {3, 582, -1.53899938e-01f},
    {3, 834, 5.13182044e-01f},  {4, 27, 4.21242505e-01f},   {4, 399, -3.56371880e-01f},
    {4, 756, 2.29872972e-01f},  {4, 797, -2.19845504e-01f}, {5, 604, 5.02699614e-01f},
    {5, 647, -1.44230872e-01f}, {5, 859, 7.23851621e-01f},  {5, 894, -2.22654969e-01f},
    {6, 128, 2.60977685e-01f},  {6, 420, -1.60572514e-01f}, {6, 538, -1.03023306e-01f},
    {6, 757, 2.18395665e-02f},
};

/* The full path's logits at the golden points, within 1e-5 (measured 5.1e-7; over all 7000
 * logits 1.25e-6 of max |logit| 1.19): the NTK-alpha base and the head norms each move them
 * by far more (test_hunyuan_dense_switches), the norms put before RoPE by 0.0074. */
#define GOLD_TOL 1e-5

static void test_hunyuan_dense_transformers(void **state)
{
	(void)state;
	expect_gold(V_HY, V_N, GOLD_TOL, gold_hunyuan_dense,
	            sizeof(gold_hunyuan_dense) / sizeof(gold_hunyuan_dense[0]));
}

/* BF16 tensor name of rank set r times f. */
static void scale_bf16(ref_set *r, const char *name, float f)
{
	ref_tensor *t = find_tensor(r, name);
	uint16_t *v = (uint16_t *)(void *)t->data;
	for (uint64_t i = 0; i < t->nbytes / 2; i++)
		v[i] = kern_f32_to_bf16(kern_bf16_to_f32(v[i]) * f);
}

static void tamper_knorm(void *ctx, ref_set *r, uint32_t n)
{
	(void)ctx; /* TP 4 (> KV 2): rank 3's key_layernorm replica times 2 */
	assert_int_equal(n, 4);
	scale_bf16(&r[3], A1 "key_layernorm.weight", 2.0f);
}

static void tamper_o_bias(void *ctx, ref_set *r, uint32_t n)
{
	(void)ctx; /* TP 2: o_proj's bias halved on both ranks, as a planner splitting it
	              across the ranks' partial sums would leave it */
	assert_int_equal(n, 2);
	scale_bf16(&r[0], A1 "o_proj.bias", 0.5f);
	scale_bf16(&r[1], A1 "o_proj.bias", 0.5f);
}

static void test_hunyuan_dense_caught(void **state)
{
	(void)state;
	expect_halves_swapped(V_HY, 2, 1, (tamper_halves){A1 "query_layernorm.weight", 1, 1, 32, 2},
	                      "rank 1's query_layernorm halves exchanged");
	expect_caught(V_HY, 4, 1, tamper_knorm, "key_layernorm replica x2 on rank 3");
	expect_caught(V_HY, 2, 1, tamper_o_bias, "o_proj bias halved on both ranks");
	expect_swapped(V_HY, 2, 1, A1 "qkv_proj.bias", "qkv_proj biases exchanged between ranks");
}

/* Each switch moves the logits (the golden points above pin their values). */
static void test_hunyuan_dense_switches(void **state)
{
	(void)state;
	model m = {0};
	ref_set ck = {0};
	ref_cfg c;
	wt_errbuf err = {0};
	open_model(&m, V_HY);
	assert_int_equal(ref_load_ckpt(m.c, &c, &ck, &err), WT_OK);
	assert_true(c.hunyuan && c.qk_norm && !c.qk_norm_full && c.kind == REF_DENSE && c.tied &&
	            c.d == 64 && c.L == 2 && c.act == REF_ACT_SILU);
	assert_float_equal(c.eps, 1e-5, 1e-15);
	/* 10000 x 1000^(64 / 62) */
	assert_float_equal(c.theta, 10000.0 * pow(1000.0, 64.0 / 62.0), 1e-3);
	assert_float_equal(c.rope_dyn, 0.0, 0.0); /* no dynamic NTK beside the alpha base */
	size_t n = N_TOK * V_N;
	float *base = malloc(n * sizeof(float)), *lg = malloc(n * sizeof(float));
	assert_true(base && lg);
	logits_with(&c, &ck, base);
	ref_cfg off = c;
	off.theta = 10000.0;
	logits_with(&off, &ck, lg);
	expect_moved(base, lg, n, 1e-3, "rope_scaling's alpha ignored");
	off = c;
	off.qk_norm = false;
	logits_with(&off, &ck, lg);
	expect_moved(base, lg, n, 1e-3, "no query / key layernorms");
	off = c;
	off.hunyuan = false; /* q_norm / k_norm names, before RoPE: the tensors are missing */
	assert_int_not_equal(ref_forward_full(&off, &ck, g_tokens, N_TOK, lg, NULL, &err), WT_OK);
	free(base);
	free(lg);
	ref_set_clear(&ck);
	close_model(&m);
}

#define HY(extra)                                                                                  \
	"{\"architectures\": [\"HunYuanDenseV1ForCausalLM\"], \"model_type\": "                    \
	"\"hunyuan_v1_dense\", \"hidden_size\": 64, \"num_attention_heads\": 4, "                  \
	"\"num_key_value_heads\": 2, \"num_hidden_layers\": 2, \"vocab_size\": 100, "              \
	"\"intermediate_size\": 96" extra "}"

static void test_hunyuan_dense_config(void **state)
{
	(void)state;
	ref_cfg c;
	wt_errbuf err = {0};
	/* HunYuanDenseV1Config's defaults: eps 1e-5, theta 10000, untied, silu, head_dim hid / H,
	 * the head norms (use_qk_norm absent reads true) */
	static const char plain[] = HY("");
	assert_int_equal(ref_cfg_parse_json(plain, strlen(plain), &c, &err), WT_OK);
	assert_true(c.hunyuan && c.qk_norm && !c.tied && c.d == 16 && c.act == REF_ACT_SILU);
	assert_float_equal(c.eps, 1e-5, 1e-12);
	assert_float_equal(c.theta, 10000.0, 1e-9);
	static const char nonorm[] = HY(", \"use_qk_norm\": false");
	assert_int_equal(ref_cfg_parse_json(nonorm, strlen(nonorm), &c, &err), WT_OK);
	assert_false(c.qk_norm);
	/* alpha over head_dim 32; linear scaling as cfg_rope.c's */
	static const char alpha[] =
	    HY(", \"head_dim\": 32, \"rope_theta\": 1000.0, \"rope_scaling\": {\"type\": "
	       "\"dynamic\", \"alpha\": 8.0, \"factor\": 1.0}");
	assert_int_equal(ref_cfg_parse_json(alpha, strlen(alpha), &c, &err), WT_OK);
	assert_float_equal(c.theta, 1000.0 * pow(8.0, 32.0 / 30.0), 1e-6);
	assert_float_equal(c.rope_dyn, 0.0, 0.0);
	static const char lin[] = HY(", \"rope_scaling\": {\"type\": \"linear\", \"factor\": 4.0}");
	assert_int_equal(ref_cfg_parse_json(lin, strlen(lin), &c, &err), WT_OK);
	assert_float_equal(c.rope_factor[0], 4.0, 0.0);
	expect_cfg(HY(", \"rope_scaling\": {\"type\": \"dynamic\", \"factor\": 2.0}"),
	           WT_EUNSUPPORTED, "without alpha");
	expect_cfg(HY(", \"rope_scaling\": {\"type\": \"dynamic\", \"alpha\": \"big\"}"),
	           WT_ECORRUPT, "alpha");
	expect_cfg(HY(", \"hidden_act\": \"gelu\""), WT_EUNSUPPORTED, "silu only");
	expect_cfg(HY(", \"use_qk_norm\": 1"), WT_ECORRUPT, "use_qk_norm");
}

/* Hunyuan V1 MoE: the same attention (no biases here), every layer a softmax router
 * (mlp.gate.wg) over 8 experts, top moe_topk 2 renormalised, + the ungated shared_mlp */
static void test_hunyuan_moe_pass(void **state)
{
	(void)state;
	expect_pass(V_HM, 1, 1, WT_QUANT_NONE, 0);
	expect_pass(V_HM, 2, 1, WT_QUANT_NONE, 0);
	expect_pass(V_HM, 4, 1, WT_QUANT_NONE, 0);
	expect_pass(V_HM, 1, 2, WT_QUANT_NONE, 0);
	expect_pass(V_HM, 1, 4, WT_QUANT_NONE, 0);
	expect_pass(V_HM, 2, 2, WT_QUANT_NONE, 1);
	expect_pass(V_HM, 2, 1, WT_QUANT_INT8_CHANNEL, 0);
	expect_pass(V_HM, 1, 2, WT_QUANT_FP8_BLOCK, 0);
	expect_pass(V_HM, 4, 1, WT_QUANT_FP8_CHANNEL, 0);
}

/* (row, column, transformers 4.57.1 logit), tokens g_tokens */
static const gold_pt gold_hunyuan_moe[] = {
    {0, 298, -3.86374354e-01f}, {0, 553, 1.97652966e-01f},  {0, 859, -2.80247569e-01f},
    {0, 993, 3.74861598e-01f},  {1, 18, 6.95180655e-01f},   {1, 532, -1.39134273e-01f},
    {1, 671, -5.68080187e-01f}, {1, 939, -1.77595153e-01f}, {2, 489, -5.80400586e-01f},
    {2, 500, 1.33040369e-01f},  {2, 842, 6.94724083e-01f},  {2, 947, -4.33752388e-01f},
    {3, 228, -8.41590241e-02f}, {3, 277, 8.69066641e-02f},  {3, 582, 2.88901776e-01f},
    {3, 834, -1.02557406e-01f}, {4, 27, 3.20660025e-02f},   {4, 399, -2.48851418e-01f},
    {4, 756, 8.22147131e-02f},  {4, 797, 3.66638422e-01f},  {5, 604, -9.02227998e-01f},
    {5, 647, -1.72352374e-01f}, {5, 859, -1.59904644e-01f}, {5, 894, -4.01054829e-01f},
    {6, 128, -1.35982633e-02f}, {6, 420, 7.92682171e-03f},  {6, 538, 3.00461888e-01f},
    {6, 757, 2.09311485e-01f},
};

/* Over all 7000 logits 1.07e-6 of max |logit| 1.26 */
static void test_hunyuan_moe_transformers(void **state)
{
	(void)state;
	expect_gold(V_HM, V_N, GOLD_TOL, gold_hunyuan_moe,
	            sizeof(gold_hunyuan_moe) / sizeof(gold_hunyuan_moe[0]));
}

#define HM1 "model.layers.1.mlp."

static void tamper_router(void *ctx, ref_set *r, uint32_t n)
{
	(void)ctx; /* EP 2: rank 0's router replica with experts 0 and 1's rows exchanged, as a
	              planner misplacing the router's rows would */
	assert_int_equal(n, 2);
	swap_stack_halves(find_tensor(&r[0], HM1 "gate.weight")->data, 1, 1, 256 * 2);
}

static void test_hunyuan_moe_caught(void **state)
{
	(void)state;
	expect_caught(V_HM, 1, 2, tamper_router, "router rows 0 / 1 exchanged on rank 0");
	expect_halves_swapped(
	    V_HM, 2, 1, (tamper_halves){HM1 "shared_mlp.gate_up_proj.weight", 1, 1, 64, 256 * 2},
	    "shared gate / up halves exchanged on rank 1");
	expect_swapped(V_HM, 1, 2, HM1 "experts.w13_weight",
	               "w13 stacks exchanged between EP ranks");
	expect_zeroed(V_HM, 1, 2, 1, HM1 "shared_mlp.down_proj.weight",
	              "shared down_proj zero on rank 1");
}

static void test_hunyuan_moe_switches(void **state)
{
	(void)state;
	model m = {0};
	ref_set ck = {0};
	ref_cfg c;
	wt_errbuf err = {0};
	open_model(&m, V_HM);
	assert_int_equal(ref_load_ckpt(m.c, &c, &ck, &err), WT_OK);
	assert_true(c.hunyuan && c.qk_norm && c.kind == REF_QWEN2_MOE && c.norm_topk && c.tied &&
	            c.d == 32 && c.L == 2);
	assert_int_equal(c.E, 8);
	assert_int_equal(c.topk, 2); /* moe_topk [2, 2] */
	assert_int_equal(c.Ie, 128); /* moe_intermediate_size [128, 128] */
	assert_int_equal(c.Is, 128); /* intermediate_size x num_shared_expert [1, 1] */
	assert_true(ref_layer_is_moe(&c, 0) && ref_layer_is_moe(&c, 1));
	size_t n = N_TOK * V_N;
	float *base = malloc(n * sizeof(float)), *lg = malloc(n * sizeof(float));
	assert_true(base && lg);
	logits_with(&c, &ck, base);
	ref_cfg off = c;
	off.norm_topk = false;
	logits_with(&off, &ck, lg);
	expect_moved(base, lg, n, 1e-3, "top-k weights not renormalised");
	off = c;
	off.Is = 0;
	logits_with(&off, &ck, lg);
	expect_moved(base, lg, n, 1e-3, "no shared MLP");
	off = c;
	off.topk = 1;
	logits_with(&off, &ck, lg);
	expect_moved(base, lg, n, 1e-3, "top-1");
	free(base);
	free(lg);
	ref_set_clear(&ck);
	close_model(&m);
}

#define HMC(extra)                                                                                 \
	"{\"architectures\": [\"HunYuanMoEV1ForCausalLM\"], \"model_type\": \"hunyuan_v1_moe\", "  \
	"\"hidden_size\": 64, \"num_attention_heads\": 4, \"num_key_value_heads\": 2, "            \
	"\"num_hidden_layers\": 2, \"vocab_size\": 100, \"intermediate_size\": 96" extra "}"

static void test_hunyuan_moe_config(void **state)
{
	(void)state;
	ref_cfg c;
	wt_errbuf err = {0};
	/* HunYuanMoEV1Config's moe_topk 1; the shared MLP intermediate_size wide, the experts too
	 * when moe_intermediate_size is absent; renormalised whatever norm_topk_prob says */
	static const char plain[] = HMC(", \"num_experts\": 4, \"norm_topk_prob\": false");
	assert_int_equal(ref_cfg_parse_json(plain, strlen(plain), &c, &err), WT_OK);
	assert_true(c.hunyuan && c.norm_topk && c.kind == REF_QWEN2_MOE && c.qk_norm);
	assert_true(c.E == 4 && c.topk == 1 && c.Ie == 96 && c.Is == 96);
	static const char lists[] =
	    HMC(", \"num_experts\": 4, \"moe_topk\": [3, 3], \"moe_intermediate_size\": [32, 32], "
	        "\"num_shared_expert\": [2, 2]");
	assert_int_equal(ref_cfg_parse_json(lists, strlen(lists), &c, &err), WT_OK);
	assert_true(c.topk == 3 && c.Ie == 32 && c.Is == 192);
	static const char nomix[] = HMC(", \"num_experts\": 4, \"use_mixed_mlp_moe\": false");
	assert_int_equal(ref_cfg_parse_json(nomix, strlen(nomix), &c, &err), WT_OK);
	assert_int_equal(c.Is, 0);
	expect_cfg(HMC(", \"num_experts\": 4, \"moe_topk\": 5"), WT_EUNSUPPORTED, "top-k");
	expect_cfg(HMC(", \"num_experts\": 4, \"moe_topk\": [2, 1]"), WT_EUNSUPPORTED,
	           "moe_topk[1]");
	/* num_experts_per_tok is not Hunyuan's key; a null moe_topk is the class default */
	static const char other[] =
	    HMC(", \"num_experts\": 4, \"num_experts_per_tok\": 3, \"moe_topk\": null");
	assert_int_equal(ref_cfg_parse_json(other, strlen(other), &c, &err), WT_OK);
	assert_int_equal(c.topk, 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_hunyuan_dense_pass),
	    cmocka_unit_test(test_hunyuan_dense_transformers),
	    cmocka_unit_test(test_hunyuan_dense_caught),
	    cmocka_unit_test(test_hunyuan_dense_switches),
	    cmocka_unit_test(test_hunyuan_dense_config),
	    cmocka_unit_test(test_hunyuan_moe_pass),
	    cmocka_unit_test(test_hunyuan_moe_transformers),
	    cmocka_unit_test(test_hunyuan_moe_caught),
	    cmocka_unit_test(test_hunyuan_moe_switches),
	    cmocka_unit_test(test_hunyuan_moe_config),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
