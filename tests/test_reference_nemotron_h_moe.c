/*
 * test_reference_nemotron_h_moe.c — the reference forward pass over Nemotron-H's MoE layers
 * (NemotronHForCausalLM with "E" in hybrid_override_pattern: Nemotron 3 Nano; reference/
 * nemotron_h.c, mla.c's ref_route_ds, nogate.c): an "E" layer's mixer is DeepSeek-V3's
 * routing (sigmoid scores, gate.e_score_correction_bias for the choice only, n_group /
 * topk_group, renormalised, routed_scaling_factor) over relu2 experts without a gate, plus the
 * shared experts. Full and sharded logits agree within REF_TOL_F32 (TP 1, 2, 4, TP 2 x EP 2),
 * int8-channel TP 2 and fp8-channel TP 4 within their budgets; the full path's logits equal
 * those of a torch model assembled from transformers 4.57.1's blocks (float32, eager:
 * BambaMixer.torch_forward with Zamba2RMSNormGated, LlamaAttention with identity rotary)
 * and the MoE block written in torch as the remote code and vLLM's NemotronHMoE run it, at
 * 28 points; rank tensors broken the way a wrong planner would break them are caught; the
 * routing's switches move the logits; the reference's MoE defaults and refusals. Fixture
 * from $WT_BUILD/wt-mkckpt --family nemotron_h_moe (hid 64, "ME*E", 8 experts, V 1000,
 * untied); seed printed.
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

#define V_NH 1000
#define FAM  "nemotron_h_moe"
#define NH_L "backbone.layers."

static int setup(void **state)
{
	(void)state;
	static const char *fams[] = {FAM};
	return gen_fixtures("reference_nemotron_h_moe", fams, 1);
}

static void test_nhm_pass(void **state)
{
	(void)state;
	expect_pass(FAM, 1, 1, WT_QUANT_NONE, 0);
	expect_pass(FAM, 2, 1, WT_QUANT_NONE, 0); /* 32 of each expert's 64 rows a rank */
	expect_pass(FAM, 4, 1, WT_QUANT_NONE, 0);
	expect_pass(FAM, 2, 2, WT_QUANT_NONE, 0); /* 4 whole experts an EP rank */
	expect_pass(FAM, 2, 1, WT_QUANT_INT8_CHANNEL, 0);
	expect_pass(FAM, 4, 1, WT_QUANT_FP8_CHANNEL, 0);
}

/* (row, column, logit of the torch model from transformers 4.57.1's blocks and the MoE in
 * torch), tokens g_tokens */
static const gold_pt gold_nhm[] = {
    {0, 128, -2.23481469e-02f}, {0, 133, -1.02201663e-01f}, {0, 499, -5.32190911e-02f},
    {0, 796, -2.41169080e-01f}, {1, 28, -2.69762754e-01f},  {1, 147, 7.77699100e-03f},
    {1, 401, -4.47507836e-02f}, {1, 484, -1.06122702e-01f}, {2, 129, 8.69507119e-02f},
    {2, 541, 7.80416355e-02f},  {2, 753, 2.68936247e-01f},  {2, 948, 1.13432154e-01f},
    {3, 145, -1.86300725e-01f}, {3, 367, -1.43352136e-01f}, {3, 443, -1.18198074e-01f},
    {3, 510, -4.63987477e-02f}, {4, 137, -2.36892581e-01f}, {4, 347, -3.19008172e-01f},
    {4, 788, -9.64432359e-02f}, {4, 853, -1.00764379e-01f}, {5, 510, -2.27688119e-01f},
    {5, 815, 2.53327608e-01f},  {5, 839, -7.24160001e-02f}, {5, 939, -1.59359306e-01f},
    {6, 134, -1.43991470e-01f}, {6, 204, -1.03744864e-03f}, {6, 308, -1.34514272e-02f},
    {6, 553, -1.15961358e-01f},
};

/* The full path's logits at the golden points, within 1e-5 (over all 7000 logits 3.0e-7 of
 * max |logit| 0.60, a ratio of 4.9e-7; at these points 1.3e-7). */
#define GOLD_TOL 1e-5

static void test_nhm_transformers(void **state)
{
	(void)state;
	expect_gold(FAM, V_NH, GOLD_TOL, gold_nhm, sizeof(gold_nhm) / sizeof(gold_nhm[0]));
}

static void test_nhm_caught(void **state)
{
	(void)state;
	expect_swapped(FAM, 2, 1, NH_L "1.mixer.experts.w13_weight",
	               "MoE layer 1's expert up_proj rows exchanged between the ranks");
	expect_swapped(FAM, 4, 1, NH_L "3.mixer.experts.w2_weight",
	               "MoE layer 3's expert down_proj columns exchanged between ranks 0 and 1");
	expect_swapped(FAM, 2, 1, NH_L "1.mixer.shared_experts.up_proj.weight",
	               "MoE layer 1's shared up_proj rows exchanged between the ranks");
	expect_swapped(FAM, 4, 1, NH_L "3.mixer.shared_experts.down_proj.weight",
	               "MoE layer 3's shared down_proj columns exchanged between ranks 0 and 1");
	/* EP 2: rank 0's experts 0-1 and 2-3 exchanged in its w13 stack [4, 64, 64] */
	expect_halves_swapped(FAM, 2, 2,
	                      (tamper_halves){NH_L "1.mixer.experts.w13_weight", 0, 1, 128, 64 * 2},
	                      "EP rank 0's w13 expert slots 0-1 and 2-3 exchanged");
}

/* The routing's groups, renormalisation and scale, and relu2 in the experts: each moves the
 * logits. */
static void test_nhm_switches(void **state)
{
	(void)state;
	model m = {0};
	ref_set ck = {0};
	ref_cfg c;
	wt_errbuf err = {0};
	open_model(&m, FAM);
	assert_int_equal(ref_load_ckpt(m.c, &c, &ck, &err), WT_OK);
	assert_true(c.nh && c.nogate && c.kind == REF_DENSE && c.L == 4 && c.E == 8 && c.Ie == 64 &&
	            c.Is == 128 && c.topk == 3 && c.n_group == 4 && c.topk_group == 2 &&
	            c.norm_topk && c.act == REF_ACT_RELU2);
	assert_true(c.g4_mamba[0] == 0x1u && c.nh_mlp[0] == 0xau && c.nh_moe[0] == 0xau);
	assert_true(!ref_layer_is_moe(&c, 0) && ref_layer_is_moe(&c, 1) &&
	            !ref_layer_is_moe(&c, 2) && ref_layer_is_moe(&c, 3));
	assert_float_equal(c.routed_scale, 2.5, 1e-12);
	size_t n = N_TOK * V_NH;
	float *base = malloc(n * sizeof(float)), *lg = malloc(n * sizeof(float));
	assert_true(base && lg);
	logits_with(&c, &ck, base);
	ref_cfg off = c;
	off.topk_group = off.n_group;
	logits_with(&off, &ck, lg);
	expect_moved(base, lg, n, 1e-3, "every group kept (no grouped top-k)");
	off = c;
	off.norm_topk = false;
	logits_with(&off, &ck, lg);
	expect_moved(base, lg, n, 1e-3, "the top-k weights not renormalised");
	off = c;
	off.routed_scale = 1.0;
	logits_with(&off, &ck, lg);
	expect_moved(base, lg, n, 1e-3, "routed_scaling_factor 1");
	off = c;
	off.act = REF_ACT_SILU;
	logits_with(&off, &ck, lg);
	expect_moved(base, lg, n, 1e-3, "silu for relu2 in the experts");
	free(base);
	free(lg);
	ref_set_clear(&ck);
	close_model(&m);
}

#define NHM_CFG(extra)                                                                             \
	"{\"architectures\": [\"NemotronHForCausalLM\"], \"model_type\": \"nemotron_h\", "         \
	"\"hidden_size\": 64, \"num_hidden_layers\": 3, \"num_attention_heads\": 8, "              \
	"\"attention_head_dim\": 8, \"vocab_size\": 1000, \"hybrid_override_pattern\": "           \
	"\"M*E\", \"mamba_num_heads\": 8, \"mamba_head_dim\": 16" extra "}"

/* The remote NemotronHConfig's MoE defaults (8 experts of 7688, 2 per token, one group kept
 * of one, renormalised, scale 1, one shared expert of 7688) and the reference's refusals. */
static void test_nhm_config(void **state)
{
	(void)state;
	ref_cfg c;
	wt_errbuf err = {0};
	const char *j = NHM_CFG("");
	assert_int_equal(ref_cfg_parse_json(j, strlen(j), &c, &err), WT_OK);
	assert_true(c.nh && c.E == 8 && c.Ie == 7688 && c.Is == 7688 && c.topk == 2 &&
	            c.n_group == 1 && c.topk_group == 1 && c.norm_topk && c.nh_moe[0] == 4u &&
	            c.nh_mlp[0] == 4u && c.g4_mamba[0] == 1u);
	assert_float_equal(c.routed_scale, 1.0, 1e-12);
	j = NHM_CFG(", \"n_shared_experts\": null, \"norm_topk_prob\": false");
	assert_int_equal(ref_cfg_parse_json(j, strlen(j), &c, &err), WT_OK);
	assert_true(c.Is == 0 && !c.norm_topk);
	j = NHM_CFG(", \"n_shared_experts\": 2, \"moe_shared_expert_intermediate_size\": 64");
	assert_int_equal(ref_cfg_parse_json(j, strlen(j), &c, &err), WT_OK);
	assert_true(c.Is == 128);
	expect_cfg(NHM_CFG(", \"n_routed_experts\": 1024"), WT_EUNSUPPORTED, "1024 experts");
	expect_cfg(NHM_CFG(", \"routed_scaling_factor\": 1e300"), WT_EUNSUPPORTED,
	           "routed_scaling_factor 1e+300");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_nhm_pass),   cmocka_unit_test(test_nhm_transformers),
	    cmocka_unit_test(test_nhm_caught), cmocka_unit_test(test_nhm_switches),
	    cmocka_unit_test(test_nhm_config),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
