/*
 * test_reference_deepseek_moe.c — the reference forward pass over DeepSeek-MoE
 * (DeepseekForCausalLM, remote code; fixture deepseek_moe) as vLLM's deepseek_v2.py runs it
 * (DeepseekAttention): Llama's decoder (RMSNorm, rotate-half RoPE over the whole head, 8 heads,
 * no biases), layer 0 a dense MLP (first_k_dense_replace 1), layers 1 and 2 MoE blocks: softmax
 * over mlp.gate, top 3 of 8 experts not renormalized (norm_topk_prob false), routed_scaling_factor
 * 1.0, two shared experts (one MLP of 2 x Ie) added ungated; lm_head untied. Full and sharded
 * logits agree within REF_TOL_F32 (TP 1, 2, 4, 8; TP 1 x EP 2, TP 2 x EP 2, TP 1 x EP 8) or the
 * quantized layouts' budgets; the full path's logits equal a float32 torch model of vLLM's
 * semantics at 28 points; rank tensors broken the way a wrong planner would break them are
 * caught. Fixture from $WT_BUILD/wt-mkckpt --family deepseek_moe (hid 128, H 8, KV 8, d 16,
 * I 256, Ie 64, E 8, top 3, 2 shared, V 1000, 3 layers, BF16; seed printed).
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

#define V_D 1000
#define FX  "deepseek_moe"
#define L0  "model.layers.0."
#define L1  "model.layers.1."

static int setup(void **state)
{
	(void)state;
	static const char *fams[] = {FX};
	return gen_fixtures("reference_deepseek_moe", fams, 1);
}

static void test_deepseek_moe_pass(void **state)
{
	(void)state;
	expect_pass(FX, 1, 1, WT_QUANT_NONE, 0);
	expect_pass(FX, 2, 1, WT_QUANT_NONE, 0);
	expect_pass(FX, 4, 1, WT_QUANT_NONE, 0);
	expect_pass(FX, 8, 1, WT_QUANT_NONE, 0);
	expect_pass(FX, 1, 2, WT_QUANT_NONE, 0);
	expect_pass(FX, 2, 2, WT_QUANT_NONE, 1);
	expect_pass(FX, 1, 8, WT_QUANT_NONE, 0);
	expect_pass(FX, 2, 1, WT_QUANT_INT8_CHANNEL, 0);
	expect_pass(FX, 4, 1, WT_QUANT_FP8_CHANNEL, 0);
}

/* (token, column, torch logit), tokens g_tokens: a float32 torch model of vLLM's deepseek_v2.py
 * for model_type deepseek (no transformers class exists) built from transformers 4.57.1's Llama
 * pieces (LlamaAttention eager with LlamaRotaryEmbedding, LlamaRMSNorm, LlamaMLP for the dense
 * layer, each expert and the shared experts) with DeepseekV2MoE's routing written out (softmax
 * over mlp.gate, top 3, not renormalized), loaded strictly (no missing or unexpected key) from
 * the fixture's safetensors: all 7 x 1000 logits within 6.0e-7 of the reference's (largest
 * 0.998). Moved by (torch): the top-3 weights renormalized 0.020, the shared experts dropped
 * 0.089 */
static const gold_pt gold_deepseek_moe[] = {
    {0, 0, 7.775970548e-02f},    {0, 333, 9.495554864e-02f},  {0, 666, -2.098244578e-01f},
    {0, 999, 1.280057430e-01f},  {1, 0, -1.743312739e-02f},   {1, 333, -7.485887408e-02f},
    {1, 666, -1.891333908e-01f}, {1, 999, -4.470033944e-02f}, {2, 0, -1.559215598e-02f},
    {2, 333, -6.251509488e-02f}, {2, 666, -1.963421702e-01f}, {2, 999, -1.308162957e-01f},
    {3, 0, 4.734428227e-02f},    {3, 333, -4.193162546e-03f}, {3, 666, -1.053752080e-01f},
    {3, 999, -1.437607408e-01f}, {4, 0, -2.368830331e-02f},   {4, 333, 1.142185833e-02f},
    {4, 666, -1.362272501e-01f}, {4, 999, -8.320903033e-02f}, {5, 0, 3.798038512e-02f},
    {5, 333, 4.076194763e-02f},  {5, 666, -2.101105452e-01f}, {5, 999, -6.963543594e-02f},
    {6, 0, 3.965501487e-02f},    {6, 333, -5.174640939e-02f}, {6, 666, -2.526165247e-01f},
    {6, 999, -5.640311912e-02f}};

#define GOLD_TOL 1e-5

static void test_deepseek_moe_torch(void **state)
{
	(void)state;
	expect_gold(FX, V_D, GOLD_TOL, gold_deepseek_moe,
	            sizeof(gold_deepseek_moe) / sizeof(gold_deepseek_moe[0]));
}

static void test_deepseek_moe_caught(void **state)
{
	(void)state;
	expect_swapped(FX, 2, 1, L1 "self_attn.qkv_proj.weight",
	               "the ranks' q/k/v heads exchanged");
	expect_swapped(FX, 2, 1, L1 "self_attn.o_proj.weight", "o_proj columns exchanged");
	expect_swapped(FX, 2, 1, L0 "mlp.gate_up_proj.weight", "the dense gate_up rows exchanged");
	expect_swapped(FX, 2, 1, L0 "mlp.down_proj.weight",
	               "the dense down_proj columns exchanged");
	expect_swapped(FX, 2, 1, L1 "mlp.shared_experts.gate_up_proj.weight",
	               "the shared experts' gate/up rows exchanged");
	expect_swapped(FX, 2, 1, L1 "mlp.shared_experts.down_proj.weight",
	               "the shared experts' down_proj columns exchanged");
	expect_stacks_swapped(FX, 1, 2, L1 "mlp.experts.", "the EP ranks' experts exchanged");
	expect_halves_swapped(FX, 2, 1,
	                      (tamper_halves){L1 "mlp.experts.w13_weight", 0, 8, 32, 128 * 2},
	                      "rank 0's experts' gate / up halves exchanged");
	expect_halves_swapped(
	    FX, 2, 1,
	    (tamper_halves){L1 "mlp.shared_experts.gate_up_proj.weight", 1, 1, 64, 128 * 2},
	    "rank 1's shared gate / up halves exchanged");
	expect_zeroed(FX, 2, 1, 1, "model.layers.2.mlp.experts.w2_weight",
	              "rank 1's last expert slices dropped");
}

/* The fixture read as vLLM's deepseek_v2.py runs it, and each switch moves the logits. */
static void test_deepseek_moe_switches(void **state)
{
	(void)state;
	model m = {0};
	ref_set ck = {0};
	ref_cfg c;
	wt_errbuf err = {0};
	open_model(&m, FX);
	assert_int_equal(ref_load_ckpt(m.c, &c, &ck, &err), WT_OK);
	assert_true(c.ds_moe && c.glm4_moe && !c.ds_v2 && !c.dots1 && c.kind == REF_DEEPSEEK &&
	            !c.tied && c.d == 16 && c.H == 8 && c.KV == 8 && c.E == 8 && c.topk == 3 &&
	            c.Ie == 64 && c.Is == 128 && c.I == 256 && !c.norm_topk && c.L == 3 &&
	            c.first_dense == 1 && c.layer_freq == 1 && c.n_group == 1 && !c.qk_norm &&
	            !c.rope_interleave && c.rot_dim == 0 && !ref_is_mla(&c));
	assert_float_equal(c.eps, 1e-6, 1e-15);
	assert_float_equal(c.routed_scale, 1.0, 1e-15);
	assert_false(ref_layer_is_moe(&c, 0));
	assert_true(ref_layer_is_moe(&c, 1) && ref_layer_is_moe(&c, 2));
	size_t n = N_TOK * V_D;
	float *base = malloc(n * sizeof(float)), *lg = malloc(n * sizeof(float));
	assert_true(base && lg);
	logits_with(&c, &ck, base);
	ref_cfg off = c;
	off.norm_topk = true;
	logits_with(&off, &ck, lg);
	expect_moved(base, lg, n, 1e-3, "the top-3 weights renormalized");
	off = c;
	off.Is = 0;
	logits_with(&off, &ck, lg);
	expect_moved(base, lg, n, 1e-3, "the shared experts dropped");
	free(base);
	free(lg);
	ref_set_clear(&ck);
	close_model(&m);
}

/* vLLM's grouped_topk with softmax scores and no correction bias ranks a group by its best expert
 * (a config giving n_group / topk_group): experts [2, -5 | 1.5, 1.4], one group of two kept: group
 * 0 (best 0.464 against 0.281; by the sum of its two best, V3's rule, group 1 would win with
 * 0.536), so top 1 is expert 0 at its softmax weight and top 2 adds expert 1, not 2. */
static void test_deepseek_moe_groups(void **state)
{
	(void)state;
	ref_cfg c;
	memset(&c, 0, sizeof(c));
	c.kind = REF_DEEPSEEK;
	c.ds_moe = c.glm4_moe = true;
	c.E = 4;
	c.n_group = 2;
	c.topk_group = 1;
	c.topk = 1;
	c.routed_scale = 1.0;
	const float logits[4] = {2.0f, -5.0f, 1.5f, 1.4f};
	double sum = exp(2.0) + exp(-5.0) + exp(1.5) + exp(1.4);
	int64_t idx[2];
	float w[2];
	ref_route_ds(&c, logits, NULL, NULL, idx, w);
	assert_int_equal(idx[0], 0);
	assert_float_equal(w[0], exp(2.0) / sum, 1e-6);
	c.topk = 2;
	ref_route_ds(&c, logits, NULL, NULL, idx, w);
	assert_int_equal(idx[0], 0);
	assert_int_equal(idx[1], 1);
	assert_float_equal(w[1], exp(-5.0) / sum, 1e-6);
}

#define DS(extra)                                                                                  \
	"{\"architectures\": [\"DeepseekForCausalLM\"], \"model_type\": \"deepseek\", "            \
	"\"hidden_size\": 64, \"num_attention_heads\": 4, \"num_key_value_heads\": 4, "            \
	"\"num_hidden_layers\": 4, \"vocab_size\": 100, \"intermediate_size\": 96, "               \
	"\"moe_intermediate_size\": 32" extra "}"
#define DSE(extra) DS(", \"n_routed_experts\": 8, \"num_experts_per_tok\": 2" extra)

/* DeepseekConfig's defaults: norm_topk_prob false, no shared experts (n_shared_experts None),
 * rms_norm_eps 1e-6, rope_theta 10000, first_k_dense_replace 0, moe_layer_freq 1, untied; and
 * the refusals. */
static void test_deepseek_moe_config(void **state)
{
	(void)state;
	ref_cfg c;
	wt_errbuf err = {0};
	static const char plain[] = DSE("");
	assert_int_equal(ref_cfg_parse_json(plain, strlen(plain), &c, &err), WT_OK);
	assert_true(c.ds_moe && c.E == 8 && c.topk == 2 && !c.norm_topk && c.Is == 0 && !c.tied &&
	            c.d == 16 && c.Ie == 32 && c.first_dense == 0 && c.layer_freq == 1);
	assert_float_equal(c.eps, 1e-6, 1e-12);
	assert_float_equal(c.theta, 10000.0, 1e-9);
	static const char freq[] = DSE(", \"n_shared_experts\": 2, \"norm_topk_prob\": true, "
	                               "\"first_k_dense_replace\": 1, \"moe_layer_freq\": 2");
	assert_int_equal(ref_cfg_parse_json(freq, strlen(freq), &c, &err), WT_OK);
	assert_true(c.Is == 64 && c.norm_topk && c.first_dense == 1 && c.layer_freq == 2);
	assert_true(!ref_layer_is_moe(&c, 0) && !ref_layer_is_moe(&c, 1) &&
	            ref_layer_is_moe(&c, 2) && !ref_layer_is_moe(&c, 3));
	expect_cfg(DSE(", \"scoring_func\": \"sigmoid\""), WT_EUNSUPPORTED, "scoring_func");
	expect_cfg(DSE(", \"hidden_act\": \"gelu\""), WT_EUNSUPPORTED, "hidden_act");
	expect_cfg(DSE(", \"attention_bias\": true"), WT_EUNSUPPORTED, "attention_bias");
	expect_cfg(DSE(", \"tie_word_embeddings\": true"), WT_EUNSUPPORTED, "tie_word_embeddings");
	expect_cfg(DS(", \"n_routed_experts\": 8"), WT_ECORRUPT, "num_experts_per_tok");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_deepseek_moe_pass),
	    cmocka_unit_test(test_deepseek_moe_torch),
	    cmocka_unit_test(test_deepseek_moe_caught),
	    cmocka_unit_test(test_deepseek_moe_switches),
	    cmocka_unit_test(test_deepseek_moe_config),
	    cmocka_unit_test(test_deepseek_moe_groups),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
