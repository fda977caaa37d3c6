/*
 * test_reference_bailing_v2.c — the reference forward pass over Bailing MoE V2
 * (BailingMoeV2ForCausalLM, Ling 2.0, remote code; fixture bailing_moe_v2) as vLLM's later
 * bailing_moe.py runs it: query_key_value as Phi-3's qkv_proj (8 q / 2 kv heads of 32),
 * per-head query_layernorm / key_layernorm RMSNorms, rotate-half RoPE on the first
 * int(32 x 0.5) dims, layer 0 a dense MLP, layers 1-2 sigmoid routing with the F32
 * mlp.gate.expert_bias over 4 groups (top 2 groups by their two best, top 2 experts,
 * renormalized, times routed_scaling_factor 2.5) plus one shared expert; the MTP layer 3
 * never read; lm_head untied. Full and sharded logits agree within REF_TOL_F32 (TP 1, 2, 4, 8;
 * TP 1 x EP 2, TP 2 x EP 2) or the quantized layouts' budgets; the full path's logits equal
 * transformers 4.57.1's Glm4MoeForCausalLM (the same math) at 28 points; rank tensors broken
 * the way a wrong planner would break them are caught. Fixture from $WT_BUILD/wt-mkckpt
 * --family bailing_moe_v2 (seed printed).
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

#define FAM "bailing_moe_v2"
#define V_B 1000
#define L0  "model.layers.0."
#define L1  "model.layers.1."

static int setup(void **state)
{
	(void)state;
	static const char *fams[] = {FAM};
	return gen_fixtures("reference_bailing_v2", fams, 1);
}

/* TP 8 over 2 kv heads: each kv head on 4 ranks (vLLM's max(1, KV / tp)) */
static void test_b2_pass(void **state)
{
	(void)state;
	expect_pass_tp(FAM, true);
	expect_pass(FAM, 1, 2, WT_QUANT_NONE, 0);
	expect_pass(FAM, 2, 2, WT_QUANT_NONE, 0);
}

/* (token, column, torch logit), tokens g_tokens: transformers 4.57.1's Glm4MoeForCausalLM
 * (float32, eager attention, torch 2.4.1 CPU) configured from the fixture's config.json
 * (head_dim 32, partial_rotary_factor 0.5, use_qk_norm, n_routed_experts 8, n_group 4,
 * topk_group 2, norm_topk_prob, routed_scaling_factor 2.5, first_k_dense_replace 1, one shared
 * expert) with the fixture's tensors renamed (query_key_value split into q/k/v_proj, dense as
 * o_proj, query/key_layernorm as q/k_norm, expert_bias as e_score_correction_bias) and the MTP
 * layer left out, load_state_dict strict: all 7 x 1000 logits within 6.6e-7 of the reference's
 * (largest 0.945). Moved by (torch): the expert bias zeroed 0.062, routed_scaling_factor 1
 * 0.070, the q/k norms dropped 0.30 */
static const gold_pt gold_b2[] = {
    {0, 0, 1.609679908e-01f},   {0, 333, 6.747823209e-02f}, {0, 666, -5.836974457e-02f},
    {0, 999, 2.793572843e-01f}, {1, 0, 1.742361039e-01f},   {1, 333, 1.528174877e-01f},
    {1, 666, 8.654950559e-02f}, {1, 999, 2.472070456e-01f}, {2, 0, 1.913424730e-01f},
    {2, 333, 9.592725337e-02f}, {2, 666, 1.228522137e-02f}, {2, 999, 4.131082594e-01f},
    {3, 0, 2.310082912e-01f},   {3, 333, 1.485167891e-01f}, {3, 666, -1.017335877e-01f},
    {3, 999, 1.613648683e-01f}, {4, 0, 3.543723226e-01f},   {4, 333, 9.869993478e-02f},
    {4, 666, 4.248592630e-02f}, {4, 999, 1.899186075e-01f}, {5, 0, 1.767866611e-01f},
    {5, 333, 1.009928286e-01f}, {5, 666, 8.205551654e-02f}, {5, 999, 8.129141480e-02f},
    {6, 0, 1.699982435e-01f},   {6, 333, 4.831551015e-02f}, {6, 666, -3.396316618e-02f},
    {6, 999, 2.282773107e-01f}};

#define GOLD_TOL 1e-5

static void test_b2_torch(void **state)
{
	(void)state;
	expect_gold(FAM, V_B, GOLD_TOL, gold_b2, sizeof(gold_b2) / sizeof(gold_b2[0]));
}

static void test_b2_caught(void **state)
{
	(void)state;
	expect_swapped(FAM, 2, 1, L1 "attention.query_key_value.weight",
	               "the ranks' q/k/v heads exchanged");
	expect_swapped(FAM, 2, 1, L1 "attention.dense.weight", "attention.dense columns exchanged");
	expect_swapped(FAM, 2, 1, L0 "mlp.gate_up_proj.weight",
	               "the dense layer's gate/up rows exchanged");
	expect_swapped(FAM, 2, 1, L1 "mlp.shared_experts.down_proj.weight",
	               "the shared experts' down_proj columns exchanged");
	expect_zeroed(FAM, 2, 1, 1, L1 "mlp.gate.expert_bias",
	              "rank 1's expert bias lost (the router's correction not whole on a rank)");
	expect_zeroed(FAM, 2, 1, 1, L1 "attention.query_layernorm.weight", "rank 1's q norm lost");
	expect_stacks_swapped(FAM, 1, 2, L1 "mlp.experts.", "the EP ranks' experts exchanged");
	/* TP 4 over 2 kv heads: rank 1 holds 2 q heads (64 rows) and kv head 0 as rank 0 does;
	 * its q rows exchanged with its k / v rows (BF16 rows of 128) */
	expect_halves_swapped(
	    FAM, 4, 1, (tamper_halves){L1 "attention.query_key_value.weight", 1, 1, 64, 128 * 2},
	    "rank 1's q rows and k / v rows exchanged");
}

/* The switches: the ckpt's config read as vLLM's bailing_moe.py runs Ling 2.0, and each moves
 * the logits. */
static void test_b2_switches(void **state)
{
	(void)state;
	model m = {0};
	ref_set ck = {0};
	ref_cfg c;
	wt_errbuf err = {0};
	open_model(&m, FAM);
	assert_int_equal(ref_load_ckpt(m.c, &c, &ck, &err), WT_OK);
	assert_true(c.bailing_v2 && c.glm4_moe && c.fused_ckpt && !c.bailing &&
	            c.kind == REF_DEEPSEEK && !c.tied && c.d == 32 && c.H == 8 && c.KV == 2 &&
	            c.E == 8 && c.topk == 2 && c.Ie == 64 && c.Is == 64 && c.norm_topk &&
	            c.n_group == 4 && c.topk_group == 2 && c.first_dense == 1 && c.L == 3 &&
	            c.qk_norm && c.rot_dim == 16);
	assert_float_equal(c.routed_scale, 2.5, 1e-12);
	assert_float_equal(c.eps, 1e-6, 1e-15);
	size_t n = N_TOK * V_B;
	float *base = malloc(n * sizeof(float)), *lg = malloc(n * sizeof(float));
	assert_true(base && lg);
	logits_with(&c, &ck, base);
	ref_cfg off = c;
	off.routed_scale = 1.0;
	logits_with(&off, &ck, lg);
	expect_moved(base, lg, n, 1e-3, "routed_scaling_factor 1");
	off = c;
	off.rot_dim = c.d;
	logits_with(&off, &ck, lg);
	expect_moved(base, lg, n, 1e-3, "RoPE over the whole head");
	off = c;
	off.qk_norm = false;
	logits_with(&off, &ck, lg);
	expect_moved(base, lg, n, 1e-3, "the q/k norms dropped");
	off = c;
	off.n_group = off.topk_group = 1;
	logits_with(&off, &ck, lg);
	expect_moved(base, lg, n, 1e-3, "the groups ignored");
	free(base);
	free(lg);
	ref_set_clear(&ck);
	close_model(&m);
}

#define B2A(extra)                                                                                 \
	"{\"architectures\": [\"BailingMoeV2ForCausalLM\"], \"model_type\": \"bailing_moe_v2\", "  \
	"\"hidden_size\": 64, \"num_attention_heads\": 4, \"num_hidden_layers\": 2, "              \
	"\"vocab_size\": 100, \"num_key_value_heads\": 2, \"moe_intermediate_size\": 32, "         \
	"\"num_experts\": 16, \"use_bias\": false" extra "}"
#define B2R(extra)                                                                                 \
	B2A(", \"moe_router_enable_expert_bias\": true, \"score_function\": \"sigmoid\"" extra)

static void test_b2_config(void **state)
{
	(void)state;
	ref_cfg c;
	wt_errbuf err = {0};
	/* BailingMoeV2Config's defaults: 2 per token, n_group 8, topk_group 4,
	 * routed_scaling_factor 2.5, partial_rotary_factor 0.5, rms_norm_eps 1e-5, rope_theta
	 * 10000, no shared experts, no dense layer, no q/k norms, untied */
	static const char plain[] = B2R("");
	int rv = ref_cfg_parse_json(plain, strlen(plain), &c, &err);
	if (rv != WT_OK)
		print_error("%s\n", err.msg);
	assert_int_equal(rv, WT_OK);
	assert_true(c.bailing_v2 && c.E == 16 && c.topk == 2 && c.n_group == 8 &&
	            c.topk_group == 4 && c.Is == 0 && c.first_dense == 0 && !c.qk_norm && !c.tied &&
	            c.d == 16 && c.rot_dim == 8 && c.norm_topk);
	assert_float_equal(c.routed_scale, 2.5, 1e-12);
	assert_float_equal(c.eps, 1e-5, 1e-12);
	assert_float_equal(c.theta, 10000.0, 1e-9);
	/* vLLM: get_rope(rotary_dim=config.rotary_dim, partial_rotary_factor) turns rotary_dim x
	 * the factor; the shared experts num_shared_experts x moe_shared_expert_intermediate_size
	 */
	static const char rd[] = B2R(", \"rotary_dim\": 12, \"num_shared_experts\": 2, "
	                             "\"moe_shared_expert_intermediate_size\": 24");
	assert_int_equal(ref_cfg_parse_json(rd, strlen(rd), &c, &err), WT_OK);
	assert_true(c.rot_dim == 6 && c.Is == 48);
	static const char full[] = B2R(", \"rotary_dim\": 16, \"partial_rotary_factor\": 1.0");
	assert_int_equal(ref_cfg_parse_json(full, strlen(full), &c, &err), WT_OK);
	assert_true(c.rot_dim == 16);
	expect_cfg(B2R(", \"rotary_dim\": 40"), WT_EUNSUPPORTED, "rotary_dim");
	expect_cfg(B2R(", \"n_group\": 3"), WT_EUNSUPPORTED, "n_group");
	expect_cfg(B2R(", \"use_qk_norm\": true"), WT_EUNSUPPORTED, "use_rmsnorm");
	expect_cfg(
	    B2A(", \"moe_router_enable_expert_bias\": true, \"score_function\": \"softmax\""),
	    WT_EUNSUPPORTED, "score_function");
	expect_cfg(B2A(", \"score_function\": \"sigmoid\""), WT_EUNSUPPORTED,
	           "moe_router_enable_expert_bias");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_b2_pass),   cmocka_unit_test(test_b2_torch),
	    cmocka_unit_test(test_b2_caught), cmocka_unit_test(test_b2_switches),
	    cmocka_unit_test(test_b2_config),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
