/*
 * test_reference_dots1.c — the reference forward pass over dots.llm1 (Dots1ForCausalLM;
 * reference/cfg_fam.c, GLM-4.5's DeepSeek-V3 MoE under Qwen3's attention): per-head q/k
 * RMSNorms on every layer, rotate-half RoPE over the whole head, the dense layer 0, MoE
 * layers routed by sigmoid scores with the correction bias (one group), normalised and
 * times routed_scaling_factor 2.5, plus two shared experts. Full and sharded logits agree
 * within REF_TOL_F32 (TP 1, 2, 4, 8, EP 2, 4, TP 2 x EP 2) or the quantized layouts'
 * budgets on the fixture and a variant (layers 1-2 sliding with window 3, 4 groups with the
 * best 2 kept, norm_topk_prob false); the full path's logits equal transformers 4.57.1's
 * (eager, float32) at 28 + 7 points; rank tensors broken the way a wrong planner would break
 * them are caught; each switch moves the logits; config defaults and refusals. The fixture
 * comes from $WT_BUILD/wt-mkckpt --family dots1 (hid 256, H 8, KV 4, d 32, I 512, 8
 * experts of 64 + 2 shared, V 1000, 3 layers; seed printed).
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

#define V_D1  1000
#define HID   256
#define IE    64
#define N_EXP 8
#define M1    "model.layers.1.mlp."
#define A1    "model.layers.1.self_attn."

static int setup(void **state)
{
	(void)state;
	static const char *fams[] = {"dots1"};
	if (gen_fixtures("reference_dots1", fams, 1) != 0 || gen_family("dots1", "dots_var"))
		return -1;
	/* layers >= 1 sliding (window 3 of 7 tokens), 4 groups of 2 with the best 2 kept, the
	 * top-2 weights not normalised */
	char *dir = tu_path(g_root, "dots_var");
	edit_config(dir, "\"sliding_window\": null", "\"sliding_window\": 3");
	edit_config(dir, "\"max_window_layers\": 3", "\"max_window_layers\": 1");
	edit_config(dir, "\"n_group\": 1", "\"n_group\": 4");
	edit_config(dir, "\"topk_group\": 1", "\"topk_group\": 2");
	edit_config(dir, "\"norm_topk_prob\": true", "\"norm_topk_prob\": false");
	free(dir);
	return 0;
}

static void test_dots1_pass(void **state)
{
	(void)state;
	static const char *forms[] = {"dots1", "dots_var"};
	for (int f = 0; f < 2; f++) {
		expect_pass(forms[f], 1, 1, WT_QUANT_NONE, 0);
		expect_pass(forms[f], 2, 1, WT_QUANT_NONE, 0);
		expect_pass(forms[f], 4, 1, WT_QUANT_NONE, 0);
		expect_pass(forms[f], 8, 1, WT_QUANT_NONE, 0); /* KV 4 < TP 8 */
		expect_pass(forms[f], 1, 2, WT_QUANT_NONE, 0);
		expect_pass(forms[f], 1, 4, WT_QUANT_NONE, 1);
		expect_pass(forms[f], 2, 2, WT_QUANT_NONE, 0);
		expect_pass(forms[f], 2, 1, WT_QUANT_FP8_CHANNEL, 0);
		expect_pass(forms[f], 1, 2, WT_QUANT_INT8_CHANNEL, 0);
	}
	expect_pass("dots1", 2, 1, WT_QUANT_FP8_BLOCK, 0);
	expect_pass("dots1", 2, 2, WT_QUANT_FP8_TENSOR, 1);
	expect_pass("dots1", 4, 1, WT_QUANT_INT8_CHANNEL, 0);
}

/* (row, column, transformers 4.57.1 logit), tokens g_tokens */
static const gold_pt gold_base[] = {
    {0, 511, -1.48739398e-01f}, {0, 724, -7.12275505e-01f}, {0, 880, 4.93898362e-01f},
    {0, 941, -5.09017289e-01f}, {1, 80, 4.34758186e-01f},   {1, 283, -1.34419978e-01f},
    {1, 452, 2.63716936e-01f},  {1, 606, -2.84475714e-01f}, {2, 174, 3.18385959e-01f},
    {2, 579, 2.84626514e-01f},  {2, 675, 1.22512370e-01f},  {2, 871, 3.53303909e-01f},
    {3, 60, -1.74740896e-01f},  {3, 476, 5.02366275e-02f},  {3, 897, -3.01897109e-01f},
    {3, 899, -3.96445453e-01f}, {4, 369, 3.69400382e-02f},  {4, 928, -7.92029947e-02f},
    {4, 961, 1.96023822e-01f},  {4, 982, -1.53847784e-02f}, {5, 177, 1.14596277e-01f},
    {5, 464, 1.19386077e-01f},  {5, 588, -5.83747923e-02f}, {5, 926, -1.80284739e-01f},
    {6, 207, 1.57525539e-01f},  {6, 407, -4.67975140e-02f}, {6, 665, 1.18231654e-01f},
    {6, 940, 3.45276475e-01f},
};
static const gold_pt gold_var[] = {
    {0, 286, 6.42933369e-01f},  {1, 775, 5.01054585e-01f}, {2, 916, -7.42698669e-01f},
    {3, 899, -4.31373626e-01f}, {4, 291, 5.27902365e-01f}, {5, 966, -3.99112225e-01f},
    {6, 781, -4.73864466e-01f},
};

/* The full path's logits of each form at the golden points, within 1e-5 (over all 7000
 * logits 1.04e-6 and 1.07e-6 of max |logit| 1.24 / 1.25): the variant's window, groups and
 * unnormalised weights move its logits by up to 0.57, and each switch of
 * test_dots1_switches by more than 1e-3 of the largest. */
#define GOLD_TOL 1e-5

static void test_dots1_transformers(void **state)
{
	(void)state;
	expect_gold("dots1", V_D1, GOLD_TOL, gold_base, sizeof(gold_base) / sizeof(gold_base[0]));
	expect_gold("dots_var", V_D1, GOLD_TOL, gold_var, sizeof(gold_var) / sizeof(gold_var[0]));
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

static void tamper_bias_half(void *ctx, ref_set *r, uint32_t n)
{
	(void)ctx; /* EP 2: rank 1's correction bias as if split by experts (its other half
	            * zero), the planner replicating it wrongly */
	assert_int_equal(n, 2);
	ref_tensor *t = find_tensor(&r[1], M1 "gate.e_score_correction_bias");
	memset(t->data, 0, t->nbytes / 2);
}

static void tamper_router(void *ctx, ref_set *r, uint32_t n)
{
	(void)ctx; /* TP 2: rank 1's router replica times 2 */
	assert_int_equal(n, 2);
	scale_bf16(&r[1], M1 "gate.weight", 2.0f);
}

static void tamper_knorm(void *ctx, ref_set *r, uint32_t n)
{
	(void)ctx; /* TP 2: rank 1's k_norm replica times 2 */
	assert_int_equal(n, 2);
	scale_bf16(&r[1], A1 "k_norm.weight", 2.0f);
}

static void test_dots1_caught(void **state)
{
	(void)state;
	expect_caught("dots1", 2, 1, tamper_bias, "correction bias negated on rank 1");
	expect_caught("dots1", 1, 2, tamper_bias_half, "correction bias half zero on rank 1");
	expect_caught("dots1", 2, 1, tamper_router, "router replica x2 on rank 1");
	expect_caught("dots1", 2, 1, tamper_knorm, "k_norm replica x2 on rank 1");
	expect_halves_swapped("dots1", 1, 1,
	                      (tamper_halves){M1 "experts.w13_weight", 0, N_EXP, IE, HID * 2},
	                      "w13 gate / up halves swapped");
	expect_zeroed("dots1", 2, 1, 1, M1 "shared_experts.down_proj.weight",
	              "shared experts' slice dropped on rank 1");
	expect_stacks_swapped("dots1", 1, 2, M1 "experts.", "expert stacks exchanged");
	expect_stacks_swapped("dots_var", 1, 2, M1 "experts.",
	                      "the same, 4 groups, sliding layers");
	expect_swapped("dots1", 2, 1, A1 "qkv_proj.weight", "q/k/v slices exchanged between ranks");
}

/* Each switch moves the logits (the golden points above pin their values). */
static void test_dots1_switches(void **state)
{
	(void)state;
	static const char *forms[] = {"dots1", "dots_var"};
	for (int f = 0; f < 2; f++) {
		model m = {0};
		ref_set ck = {0};
		ref_cfg c;
		wt_errbuf err = {0};
		open_model(&m, forms[f]);
		assert_int_equal(ref_load_ckpt(m.c, &c, &ck, &err), WT_OK);
		assert_true(c.dots1 && c.glm4_moe && c.kind == REF_DEEPSEEK && !ref_is_mla(&c) &&
		            c.E == N_EXP && c.topk == 2 && c.Ie == IE && c.Is == 2 * IE &&
		            c.I == 512 && c.d == 32 && c.KV == 4 && c.rot_dim == 0 && c.qk_norm &&
		            !c.qk_norm_full && !c.rope_pairs && !c.rope_interleave &&
		            c.first_dense == 1 && c.layer_freq == 1 && !c.tied && c.local_masked);
		assert_true(
		    f == 0 ? c.n_group == 1 && c.topk_group == 1 && c.norm_topk && c.window == 0
		           : c.n_group == 4 && c.topk_group == 2 && !c.norm_topk && c.window == 3 &&
		                 !ref_l4_bit(c.local_mask, 0) && ref_l4_bit(c.local_mask, 1) &&
		                 ref_l4_bit(c.local_mask, 2));
		assert_float_equal(c.routed_scale, 2.5, 1e-12);
		assert_float_equal(c.eps, 1e-5, 1e-12);
		assert_true(!ref_layer_is_moe(&c, 0) && ref_layer_is_moe(&c, 1) &&
		            ref_layer_is_moe(&c, 2));
		size_t n = N_TOK * V_D1;
		float *base = malloc(n * sizeof(float)), *lg = malloc(n * sizeof(float));
		assert_true(base && lg);
		logits_with(&c, &ck, base);
		ref_cfg off = c;
		off.qk_norm = false;
		logits_with(&off, &ck, lg);
		expect_moved(base, lg, n, 1e-3, "no q/k norms");
		off = c;
		off.rot_dim = c.d / 2;
		logits_with(&off, &ck, lg);
		expect_moved(base, lg, n, 1e-3, "RoPE on half of each head");
		off = c;
		off.routed_scale = 1.0;
		logits_with(&off, &ck, lg);
		expect_moved(base, lg, n, 1e-3, "routed_scaling_factor 1");
		off = c;
		off.norm_topk = !c.norm_topk;
		logits_with(&off, &ck, lg);
		expect_moved(base, lg, n, 1e-3, "norm_topk_prob flipped");
		if (f == 1) {
			off = c;
			off.window = 0;
			logits_with(&off, &ck, lg);
			expect_moved(base, lg, n, 1e-3, "no sliding window");
			off = c;
			off.topk_group = off.n_group;
			logits_with(&off, &ck, lg);
			expect_moved(base, lg, n, 1e-3, "every group kept");
		}
		free(base);
		free(lg);
		ref_set_clear(&ck);
		close_model(&m);
	}
}

#define D1_BASE(extra)                                                                             \
	"{\"architectures\": [\"Dots1ForCausalLM\"], \"model_type\": \"dots1\", "                  \
	"\"hidden_size\": 512, \"num_attention_heads\": 32, \"num_hidden_layers\": 4, "            \
	"\"vocab_size\": 100, \"intermediate_size\": 96, \"moe_intermediate_size\": 32, "          \
	"\"n_routed_experts\": 8, \"n_shared_experts\": 2" extra "}"
#define D1_JSON(extra) D1_BASE(", \"num_experts_per_tok\": 2" extra)

static void test_dots1_config(void **state)
{
	(void)state;
	ref_cfg c;
	wt_errbuf err = {0};
	/* Dots1Config's defaults: 32 kv heads whatever the heads, every layer MoE, one group,
	 * norm_topk_prob false, scale 1, eps 1e-6, theta 10000; sliding_window 4096 from
	 * max_window_layers 62 on (no layer here) */
	static const char plain[] = D1_JSON("");
	assert_int_equal(ref_cfg_parse_json(plain, strlen(plain), &c, &err), WT_OK);
	assert_true(c.dots1 && c.kind == REF_DEEPSEEK && c.KV == 32 && c.d == 16 && c.topk == 2 &&
	            c.n_group == 1 && c.topk_group == 1 && c.Is == 64 && c.first_dense == 0 &&
	            c.rot_dim == 0 && c.qk_norm && !c.norm_topk && !c.tied && c.window == 4096 &&
	            c.local_masked && c.local_mask[0] == 0);
	assert_float_equal(c.eps, 1e-6, 1e-15);
	assert_float_equal(c.theta, 10000.0, 1e-9);
	assert_float_equal(c.routed_scale, 1.0, 0.0);
	for (int64_t i = 0; i < 4; i++)
		assert_true(ref_layer_is_moe(&c, i));
	/* moe_layer_freq and scoring_func are not read; layers >= max_window_layers slide */
	static const char win[] =
	    D1_JSON(", \"moe_layer_freq\": 2, \"scoring_func\": \"noaux_tc\", "
	            "\"max_window_layers\": 2, \"num_key_value_heads\": 2");
	assert_int_equal(ref_cfg_parse_json(win, strlen(win), &c, &err), WT_OK);
	assert_true(c.KV == 2 && c.window == 4096 && c.local_mask[0] == 0xc);
	for (int64_t i = 0; i < 4; i++)
		assert_true(ref_layer_is_moe(&c, i));
	/* a null window: no sliding layer; layer_types wins over max_window_layers */
	static const char none[] = D1_JSON(", \"sliding_window\": null, \"max_window_layers\": 0");
	assert_int_equal(ref_cfg_parse_json(none, strlen(none), &c, &err), WT_OK);
	assert_true(c.window == 0 && c.local_mask[0] == 0);
	static const char lt[] =
	    D1_JSON(", \"sliding_window\": 5, \"max_window_layers\": 0, \"layer_types\": "
	            "[\"full_attention\", \"sliding_attention\", \"full_attention\", "
	            "\"sliding_attention\"]");
	assert_int_equal(ref_cfg_parse_json(lt, strlen(lt), &c, &err), WT_OK);
	assert_true(c.window == 5 && c.local_mask[0] == 0xa);
	expect_cfg(D1_JSON(", \"layer_types\": [\"full_attention\"]"), WT_ECORRUPT, "layer_types");
	expect_cfg(D1_JSON(", \"sliding_window\": null, \"layer_types\": [\"full_attention\", "
	                   "\"sliding_attention\", \"full_attention\", \"full_attention\"]"),
	           WT_ECORRUPT, "sliding_window is null");
	expect_cfg(D1_JSON(", \"partial_rotary_factor\": 0.5"), WT_EUNSUPPORTED,
	           "partial_rotary_factor");
	expect_cfg(D1_JSON(", \"n_group\": 3"), WT_EUNSUPPORTED, "n_group 3");
	expect_cfg(D1_BASE(", \"num_experts_per_tok\": 9"), WT_EUNSUPPORTED, "top-k");
	expect_cfg(D1_BASE(""), WT_ECORRUPT, "num_experts_per_tok"); /* Dots1Config: None */
	expect_cfg(D1_JSON(", \"hidden_act\": \"relu\""), WT_EUNSUPPORTED, "hidden_act");
	expect_cfg(D1_JSON(", \"norm_topk_prob\": 1"), WT_ECORRUPT, "norm_topk_prob");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_dots1_pass),   cmocka_unit_test(test_dots1_transformers),
	    cmocka_unit_test(test_dots1_caught), cmocka_unit_test(test_dots1_switches),
	    cmocka_unit_test(test_dots1_config),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
