/*
 * test_reference_arctic.c — the reference forward pass over Snowflake Arctic
 * (ArcticForCausalLM, remote code; fixture arctic): Mixtral's attention and routing (kind
 * REF_MIXTRAL under block_sparse_moe.; softmax over the router's logits, top
 * num_experts_per_tok, renormalized above top-1 as ArcticMoE's fused_topk), the dense ArcticMLP
 * block_sparse_moe.mlp on the layers moe_layer_frequency leaves dense, and with use_residual the
 * parallel block of vLLM's ArcticDecoderLayer: out = x1 + residual_mlp(residual_layernorm(x1))
 * + moe(post_attention_layernorm(x)), x1 = x + attn (reference/arctic.c). Full and sharded
 * logits agree within REF_TOL_F32 (TP 1, 2, 4, 8: every expert on every rank, cut by tp in
 * block_sparse_moe.ws / w2s; w13_order up_gate leaves ws [w1; w3]) or the quantized layouts'
 * budgets (experts and residual MLP unquantized, the router quantized); the full path's logits
 * equal a float32 torch model of vLLM's semantics built from transformers 4.57.1's Mixtral
 * blocks at 28 points; rank tensors broken the way a wrong planner would break them are
 * caught. Fixture from $WT_BUILD/wt-mkckpt --family arctic (hid 128, H 8, KV 2, I 64, 4
 * experts top-2, V 1000, layer 0 dense, layer 1 MoE with the residual MLP; seed printed).
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

#define L0 "model.layers.0."
#define L1 "model.layers.1."

static int setup(void **state)
{
	(void)state;
	static const char *fams[] = {"arctic"};
	return gen_fixtures("reference_arctic", fams, 1);
}

static void test_arctic_pass(void **state)
{
	(void)state;
	expect_pass("arctic", 1, 1, WT_QUANT_NONE, 0);
	expect_pass("arctic", 2, 1, WT_QUANT_NONE, 0);
	expect_pass("arctic", 4, 1, WT_QUANT_NONE, 0);
	expect_pass("arctic", 8, 1, WT_QUANT_NONE, 0);
	expect_pass("arctic", 2, 1, WT_QUANT_NONE, 1);
	expect_pass("arctic", 2, 1, WT_QUANT_INT8_CHANNEL, 0);
	expect_pass("arctic", 4, 1, WT_QUANT_FP8_CHANNEL, 0);
}

/* (token, column, torch value), tokens g_tokens: a float32 torch model of vLLM's arctic.py
 * from transformers 4.57.1's Mixtral blocks (torch 2.4.1 CPU): MixtralAttention (eager,
 * causal mask, MixtralRotaryEmbedding at int(rope_theta)) and MixtralRMSNorm, layer 0's
 * block_sparse_moe.mlp a MixtralBlockSparseTop2MLP (w1 / w3 / w2), layer 1's block_sparse_moe a
 * MixtralSparseMoeBlock (4 experts, top-2, renormalized) on post_attention_layernorm of the
 * layer's input, plus residual_mlp (a MixtralBlockSparseTop2MLP hidden_size wide) on
 * residual_layernorm of x + attn; the fixture's safetensors loaded by load_state_dict (no missing
 * or unexpected key). All 7 x 1000 logits within 5.4e-7 of the reference's (largest 0.830);
 * dropping the residual MLP moves them by 0.128, the MoE on x + attn instead of x by 0.062 */
static const gold_pt gold_arctic[] = {
    {0, 0, 1.981852949e-01f},    {0, 333, 2.847174108e-01f},  {0, 666, 2.086724937e-01f},
    {0, 999, 3.746734560e-02f},  {1, 0, 1.202220917e-01f},    {1, 333, 1.861749962e-02f},
    {1, 666, -9.213301539e-02f}, {1, 999, -1.469120383e-01f}, {2, 0, 6.547047943e-02f},
    {2, 333, 2.779126167e-02f},  {2, 666, -2.132547349e-01f}, {2, 999, -3.390341699e-01f},
    {3, 0, 1.717405766e-01f},    {3, 333, 7.943257689e-02f},  {3, 666, -7.727123797e-02f},
    {3, 999, -2.691080272e-01f}, {4, 0, 1.571252346e-01f},    {4, 333, 4.032490402e-02f},
    {4, 666, -9.877101332e-02f}, {4, 999, -3.150345683e-01f}, {5, 0, 2.624632418e-01f},
    {5, 333, 9.137915820e-02f},  {5, 666, -1.061210036e-01f}, {5, 999, -3.174584508e-01f},
    {6, 0, 2.420369238e-01f},    {6, 333, -1.588395983e-02f}, {6, 666, -1.187665015e-02f},
    {6, 999, -2.792376876e-01f}};

#define GOLD_TOL 1e-5

static void test_arctic_torch(void **state)
{
	(void)state;
	expect_gold("arctic", 1000, GOLD_TOL, gold_arctic,
	            sizeof(gold_arctic) / sizeof(gold_arctic[0]));
}

/* TP 2: ws 4 experts of [w1 rows; w3 rows], 32 rows each; residual_mlp.w13 [w1 rows; w3 rows]
 * 64 rows each; F32 rows of 128. */
static void test_arctic_caught(void **state)
{
	(void)state;
	expect_swapped("arctic", 2, 1, L1 "block_sparse_moe.ws", "the ranks' ws rows exchanged");
	expect_swapped("arctic", 2, 1, L1 "block_sparse_moe.w2s",
	               "the ranks' w2s columns exchanged");
	expect_swapped("arctic", 2, 1, L1 "residual_mlp.w13.weight",
	               "the ranks' residual w13 rows exchanged");
	expect_swapped("arctic", 2, 1, L1 "residual_mlp.w2.weight",
	               "the ranks' residual w2 columns exchanged");
	expect_swapped("arctic", 2, 1, L0 "block_sparse_moe.mlp.w13.weight",
	               "the ranks' dense w13 rows exchanged");
	expect_swapped("arctic", 2, 1, L0 "block_sparse_moe.mlp.w2.weight",
	               "the ranks' dense w2 columns exchanged");
	expect_swapped("arctic", 2, 1, L1 "self_attn.qkv_proj.weight",
	               "the ranks' q/k/v heads exchanged");
	expect_halves_swapped("arctic", 2, 1,
	                      (tamper_halves){L1 "block_sparse_moe.ws", 0, 4, 32, 128 * 4},
	                      "rank 0's w1 / w3 halves exchanged in every expert");
	expect_halves_swapped("arctic", 2, 1,
	                      (tamper_halves){L1 "residual_mlp.w13.weight", 0, 1, 64, 128 * 4},
	                      "rank 0's residual w1 / w3 halves exchanged");
	expect_zeroed("arctic", 2, 1, 1, L1 "residual_layernorm.weight",
	              "rank 1's residual_layernorm lost");
}

/* The switches move the logits: the residual MLP, the MoE on the layer's input, the top-k
 * renormalization. */
static void test_arctic_switches(void **state)
{
	(void)state;
	model m = {0};
	ref_set ck = {0};
	ref_cfg c;
	wt_errbuf err = {0};
	size_t n = N_TOK * 1000;
	float *a = malloc(n * sizeof(float)), *b = malloc(n * sizeof(float));
	assert_non_null(a);
	assert_non_null(b);
	open_model(&m, "arctic");
	assert_int_equal(ref_load_ckpt(m.c, &c, &ck, &err), WT_OK);
	logits_with(&c, &ck, a);
	c.arctic_res = false;
	logits_with(&c, &ck, b);
	expect_moved(a, b, n, 0.01, "use_residual false");
	c.arctic_res = true;
	c.norm_topk = false;
	logits_with(&c, &ck, b);
	expect_moved(a, b, n, 1e-3, "top-2 weights unnormalized");
	free(a);
	free(b);
	ref_set_clear(&ck);
	close_model(&m);
}

/* The fixture is read as Arctic: 4 experts of intermediate_size 64, top-2 renormalized, no
 * shared expert, layer 1 MoE with the residual MLP, layer 0 dense under block_sparse_moe.mlp. */
static void test_arctic_config(void **state)
{
	(void)state;
	model m = {0};
	ref_set ck = {0};
	ref_cfg c;
	wt_errbuf err = {0};
	open_model(&m, "arctic");
	assert_int_equal(ref_load_ckpt(m.c, &c, &ck, &err), WT_OK);
	assert_true(c.arctic && c.arctic_res && c.kind == REF_MIXTRAL && c.E == 4 && c.topk == 2 &&
	            c.Ie == 64 && c.Is == 0 && c.norm_topk && !c.tied && c.act == REF_ACT_SILU);
	assert_true(!ref_layer_is_moe(&c, 0) && ref_layer_is_moe(&c, 1));
	assert_true(!ref_arctic_res(&c, 0) && ref_arctic_res(&c, 1));
	char p[64];
	ref_moe_prefix(&c, 1, p, sizeof(p));
	assert_string_equal(p, L1 "block_sparse_moe.");
	assert_string_equal(ref_ffn_module(&c), "block_sparse_moe.mlp.");
	ref_set_clear(&ck);
	close_model(&m);
	const char *base = "{\"architectures\": [\"ArcticForCausalLM\"], \"model_type\": "
	                   "\"arctic\", \"hidden_size\": 128, \"intermediate_size\": 64, "
	                   "\"num_attention_heads\": 8, \"num_hidden_layers\": 2, "
	                   "\"vocab_size\": 1000, \"num_local_experts\": 4";
	char js[768];
	snprintf(js, sizeof(js), "%s, \"use_residual\": false}", base);
	ref_cfg_parse_json(js, strlen(js), &c, &err);
	assert_int_equal(err.code, WT_OK);
	/* ArcticConfig's num_experts_per_tok 1 (not renormalized) and moe_layer_frequency 2 */
	assert_true(c.arctic && !c.arctic_res && c.topk == 1 && !c.norm_topk && c.sparse_step == 2);
	snprintf(js, sizeof(js), "%s}", base);
	expect_cfg(js, WT_EUNSUPPORTED, "use_residual is missing");
	snprintf(js, sizeof(js), "%s, \"use_residual\": true, \"moe_layer_frequency\": 3}", base);
	expect_cfg(js, WT_EUNSUPPORTED, "moe_layer_frequency 3");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_arctic_pass),   cmocka_unit_test(test_arctic_torch),
	    cmocka_unit_test(test_arctic_caught), cmocka_unit_test(test_arctic_switches),
	    cmocka_unit_test(test_arctic_config),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
