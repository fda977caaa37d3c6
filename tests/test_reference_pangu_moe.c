/*
 * test_reference_pangu_moe.c — the reference forward pass over openPangu-Ultra-MoE
 * (PanguUltraMoEForCausalLM, fixture pangu_ultra_moe) as vLLM's openpangu.py runs
 * OpenPanguMoEModel: per layer input_layernorm, DeepSeek-V3's MLA (q LoRA 128, kv LoRA 64, qk
 * 32 + 32 with interleaved RoPE at rope_theta 25600000, v 32; 8 heads), the sandwich
 * (post_attention_layernorm on the attention output, pre_mlp_layernorm on the MLP's input,
 * post_mlp_layernorm on its output: sandwich_norm); layer 0 a dense MLP, layer 1 the sigmoid
 * router of one group without a correction bias (top 2 of 4, renormalized, times 2.5) plus one
 * shared expert; the MTP layer unread; lm_head untied. Full and sharded logits agree within
 * REF_TOL_F32 (TP 1, 2, 4, 8; TP 1 x EP 2, TP 2 x EP 2) or the quantized layouts' budgets; the
 * full path's logits equal an independent torch model at 28 points; rank tensors broken the way
 * a wrong planner would break them are caught. Fixture from $WT_BUILD/wt-mkckpt --family
 * pangu_ultra_moe (seed printed).
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

#define FAM  "pangu_ultra_moe"
#define V_PG 1024
#define L0   "model.layers.0."
#define L1   "model.layers.1."

static int setup(void **state)
{
	(void)state;
	static const char *fams[] = {FAM};
	return gen_fixtures("reference_pangu_moe", fams, 1);
}

static void test_pgm_pass(void **state)
{
	(void)state;
	expect_pass_tp(FAM, true);
	expect_pass(FAM, 1, 2, WT_QUANT_NONE, 0);
	expect_pass(FAM, 2, 2, WT_QUANT_NONE, 0);
}

/* (token, column, torch logit), tokens g_tokens: transformers 4.57.1 has no openPangu MoE, so
 * its DeepseekV3ForCausalLM (float32, eager, torch 2.4.1 CPU: DeepseekV3Attention's MLA with
 * rope_interleave, DeepseekV3MoE with n_group / topk_group 1 and a zero e_score_correction_bias,
 * DeepseekV3MLP, DeepseekV3RMSNorm) configured from the fixture's keys, load_state_dict strict
 * with the fixture's tensors (the MTP layer left out as vLLM skips it), each decoder layer's
 * forward written over as vLLM's OpenPanguDecoderLayer runs it with sandwich_norm
 * (post_attention_layernorm on the attention output, pre_mlp_layernorm / post_mlp_layernorm
 * around the MLP): all 7 x 1024 logits within 9.3e-7 of the reference's (largest 1.29) */
static const gold_pt gold_pgm[] = {
    {0, 0, -3.586369753e-01f},   {0, 333, -5.525084138e-01f}, {0, 666, -1.302941740e-01f},
    {0, 999, 3.261823356e-01f},  {1, 0, -3.465639651e-01f},   {1, 333, -4.718689248e-02f},
    {1, 666, 4.748977423e-01f},  {1, 999, 4.934564829e-01f},  {2, 0, -6.143564582e-01f},
    {2, 333, 6.585338712e-02f},  {2, 666, 1.534439772e-01f},  {2, 999, 6.611920893e-02f},
    {3, 0, -2.239891589e-01f},   {3, 333, 2.201550752e-01f},  {3, 666, -1.781520247e-01f},
    {3, 999, 1.550897062e-01f},  {4, 0, -1.208312064e-01f},   {4, 333, 2.168286443e-01f},
    {4, 666, -1.702197194e-01f}, {4, 999, 4.229679704e-01f},  {5, 0, -1.952028275e-01f},
    {5, 333, 2.886178493e-01f},  {5, 666, 2.670728043e-02f},  {5, 999, 4.386662245e-01f},
    {6, 0, -1.710951924e-01f},   {6, 333, 3.874604702e-01f},  {6, 666, -2.283146232e-01f},
    {6, 999, 3.307470679e-01f}};

#define GOLD_TOL 1e-5

static void test_pgm_torch(void **state)
{
	(void)state;
	expect_gold(FAM, V_PG, GOLD_TOL, gold_pgm, sizeof(gold_pgm) / sizeof(gold_pgm[0]));
}

static void test_pgm_caught(void **state)
{
	(void)state;
	expect_swapped(FAM, 2, 1, L1 "self_attn.q_b_proj.weight", "the ranks' q_b_proj heads");
	expect_swapped(FAM, 2, 1, L1 "self_attn.kv_b_proj.weight", "the ranks' kv_b_proj heads");
	expect_swapped(FAM, 2, 1, L1 "self_attn.o_proj.weight", "o_proj columns exchanged");
	expect_swapped(FAM, 2, 1, L0 "mlp.gate_up_proj.weight",
	               "the dense layer's gate/up rows exchanged");
	expect_swapped(FAM, 2, 1, L1 "mlp.shared_experts.down_proj.weight",
	               "the shared expert's down_proj columns exchanged");
	expect_zeroed(FAM, 2, 1, 1, L1 "post_attention_layernorm.weight",
	              "rank 1's sandwich attention norm lost");
	expect_zeroed(FAM, 2, 1, 1, L1 "pre_mlp_layernorm.weight", "rank 1's pre-MLP norm lost");
	expect_zeroed(FAM, 2, 1, 1, L1 "post_mlp_layernorm.weight", "rank 1's post-MLP norm lost");
	expect_zeroed(FAM, 2, 1, 1, L1 "self_attn.kv_a_layernorm.weight",
	              "rank 1's kv_a_layernorm lost");
	expect_stacks_swapped(FAM, 1, 2, L1 "mlp.experts.", "the EP ranks' experts exchanged");
}

/* The ckpt's config as vLLM's openpangu.py runs it, and each switch moves the logits. */
static void test_pgm_switches(void **state)
{
	(void)state;
	model m = {0};
	ref_set ck = {0};
	ref_cfg c;
	wt_errbuf err = {0};
	open_model(&m, FAM);
	assert_int_equal(ref_load_ckpt(m.c, &c, &ck, &err), WT_OK);
	assert_true(c.pangu_moe && c.sandwich && c.kind == REF_DEEPSEEK && !c.tied && c.H == 8 &&
	            c.E == 4 && c.topk == 2 && c.Ie == 256 && c.Is == 256 && c.norm_topk &&
	            c.n_group == 1 && c.topk_group == 1 && c.first_dense == 1 && c.L == 2 &&
	            c.rope_interleave);
	assert_float_equal(c.routed_scale, 2.5, 1e-12);
	assert_float_equal(c.theta, 25600000.0, 1e-3);
	size_t n = N_TOK * V_PG;
	float *base = malloc(n * sizeof(float)), *lg = malloc(n * sizeof(float));
	assert_true(base && lg);
	logits_with(&c, &ck, base);
	ref_cfg off = c;
	off.routed_scale = 1.0;
	logits_with(&off, &ck, lg);
	expect_moved(base, lg, n, 1e-3, "routed_scaling_factor 1");
	off = c;
	off.sandwich = false;
	logits_with(&off, &ck, lg);
	expect_moved(base, lg, n, 1e-3, "the sandwich norms dropped");
	off = c;
	off.rope_interleave = false;
	logits_with(&off, &ck, lg);
	expect_moved(base, lg, n, 1e-3, "rotate-half RoPE instead of interleaved");
	free(base);
	free(lg);
	ref_set_clear(&ck);
	close_model(&m);
}

#define PGA(extra)                                                                                 \
	"{\"architectures\": [\"PanguUltraMoEForCausalLM\"], \"model_type\": "                     \
	"\"pangu_ultra_moe\", "                                                                    \
	"\"hidden_size\": 64, \"num_attention_heads\": 4, \"num_hidden_layers\": 2, "              \
	"\"vocab_size\": 100, \"intermediate_size\": 96, \"moe_intermediate_size\": 32, "          \
	"\"n_routed_experts\": 8, \"n_shared_experts\": 1, \"first_k_dense_replace\": 1, "         \
	"\"num_experts_per_tok\": 2, \"routed_scaling_factor\": 2.5, \"norm_topk_prob\": true, "   \
	"\"q_lora_rank\": 32, \"kv_lora_rank\": 16, \"qk_nope_head_dim\": 16, "                    \
	"\"qk_rope_head_dim\": 8, \"v_head_dim\": 16" extra "}"

/* vLLM's getattr defaults (rope_theta 10000), sandwich_norm false when absent; rope_scaling and
 * a grouped router refused (vLLM ignores the one and routes in one group). */
static void test_pgm_config(void **state)
{
	(void)state;
	ref_cfg c;
	wt_errbuf err = {0};
	static const char plain[] = PGA("");
	int rv = ref_cfg_parse_json(plain, strlen(plain), &c, &err);
	if (rv != WT_OK)
		print_error("%s\n", err.msg);
	assert_int_equal(rv, WT_OK);
	assert_true(c.pangu_moe && !c.sandwich && c.E == 8 && c.n_group == 1 && c.Is == 32);
	assert_float_equal(c.theta, 10000.0, 1e-9);
	static const char sw[] = PGA(", \"sandwich_norm\": true");
	assert_int_equal(ref_cfg_parse_json(sw, strlen(sw), &c, &err), WT_OK);
	assert_true(c.sandwich);
	expect_cfg(PGA(", \"rope_scaling\": {\"type\": \"yarn\", \"factor\": 4.0}"),
	           WT_EUNSUPPORTED, "rope_scaling");
	expect_cfg(PGA(", \"n_group\": 2, \"topk_group\": 1"), WT_EUNSUPPORTED, "n_group");
	expect_cfg(PGA(", \"sandwich_norm\": 1"), WT_ECORRUPT, "sandwich_norm");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_pgm_pass),   cmocka_unit_test(test_pgm_torch),
	    cmocka_unit_test(test_pgm_caught), cmocka_unit_test(test_pgm_switches),
	    cmocka_unit_test(test_pgm_config),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
