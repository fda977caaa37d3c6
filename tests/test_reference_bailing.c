/*
 * test_reference_bailing.c — the reference forward pass over Bailing MoE (BailingMoeForCausalLM,
 * remote code; fixture bailing_moe): Llama's decoder (RMSNorm, neox-style RoPE, 8 q / 4 kv
 * heads) with query_key_value as Phi-3's qkv_proj and its bias, and in every layer 4 experts
 * routed as Qwen2-MoE's (softmax over mlp.gate, top 2, renormalized: norm_topk_prob) plus one
 * shared expert added ungated, lm_head untied and read as stored (norm_head is never applied
 * by vLLM), as vLLM's bailing_moe.py runs it. Full and sharded logits agree within
 * REF_TOL_F32 (TP 1, 2, 4; TP 2 x EP 2) or the quantized layouts' budgets; the full path's
 * logits equal a float32 torch model of vLLM's semantics at 28 points (no transformers class
 * exists); rank tensors broken the way a wrong planner would break them are caught. Fixture
 * from $WT_BUILD/wt-mkckpt --family bailing_moe (hid 128, H 8, KV 4, d 16, Ie 64, E 4, top 2,
 * 1 shared, V 1000, 2 layers; seed printed).
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

#define V_B 1000
#define L1  "model.layers.1."

static int setup(void **state)
{
	(void)state;
	static const char *fams[] = {"bailing_moe"};
	return gen_fixtures("reference_bailing", fams, 1);
}

static void test_bailing_pass(void **state)
{
	(void)state;
	expect_pass("bailing_moe", 1, 1, WT_QUANT_NONE, 0);
	expect_pass("bailing_moe", 2, 1, WT_QUANT_NONE, 0);
	expect_pass("bailing_moe", 4, 1, WT_QUANT_NONE, 0);
	expect_pass("bailing_moe", 1, 2, WT_QUANT_NONE, 0);
	expect_pass("bailing_moe", 2, 2, WT_QUANT_NONE, 0);
	expect_pass("bailing_moe", 2, 1, WT_QUANT_INT8_CHANNEL, 0);
	expect_pass("bailing_moe", 4, 1, WT_QUANT_FP8_CHANNEL, 0);
}

/* (token, column, torch logit), tokens g_tokens: a float32 torch model of vLLM's bailing_moe.py
 * (no transformers class exists) built from transformers 4.57.1's Llama pieces (LlamaRMSNorm,
 * LlamaRotaryEmbedding + apply_rotary_pos_emb, eager_attention_forward with repeat_kv, LlamaMLP
 * for each expert and the shared expert) and Qwen2MoeSparseMoeBlock's routing written out
 * (softmax over mlp.gate, top 2, divided by their sum), query_key_value split [q; k; v] with its
 * bias, the shared expert added ungated, lm_head as stored, on the fixture's safetensors: all
 * 7 x 1000 logits within 4.5e-7 of the reference's (largest 0.857). Moved by (torch): the top-2
 * weights not renormalized 0.035, the shared expert dropped 0.15, lm_head's columns normalized
 * (the remote model's norm_head) 0.51 */
static const gold_pt gold_bailing[] = {
    {0, 0, -4.808979481e-02f},   {0, 333, -2.242526412e-01f}, {0, 666, 2.548875213e-01f},
    {0, 999, -5.259183422e-02f}, {1, 0, -1.380984038e-01f},   {1, 333, -8.570510149e-02f},
    {1, 666, 3.254217803e-01f},  {1, 999, 8.132424206e-02f},  {2, 0, -1.114854440e-01f},
    {2, 333, 6.941174716e-02f},  {2, 666, 2.142668515e-01f},  {2, 999, 1.061289236e-01f},
    {3, 0, -1.317163557e-01f},   {3, 333, 1.272476315e-01f},  {3, 666, 2.453470379e-01f},
    {3, 999, -8.618251979e-02f}, {4, 0, -1.589996219e-01f},   {4, 333, 1.491303742e-01f},
    {4, 666, 8.471493423e-02f},  {4, 999, 3.313508630e-02f},  {5, 0, -2.330039144e-01f},
    {5, 333, 1.432501674e-01f},  {5, 666, 9.858873487e-02f},  {5, 999, -5.137778819e-02f},
    {6, 0, 2.228851989e-02f},    {6, 333, 1.185980886e-01f},  {6, 666, -6.780344248e-02f},
    {6, 999, -1.050812006e-02f}};

#define GOLD_TOL 1e-5

static void test_bailing_torch(void **state)
{
	(void)state;
	expect_gold("bailing_moe", V_B, GOLD_TOL, gold_bailing,
	            sizeof(gold_bailing) / sizeof(gold_bailing[0]));
}

static void test_bailing_caught(void **state)
{
	(void)state;
	expect_swapped("bailing_moe", 2, 1, L1 "attention.query_key_value.weight",
	               "the ranks' q/k/v heads exchanged");
	expect_swapped("bailing_moe", 2, 1, L1 "attention.query_key_value.bias",
	               "the ranks' q/k/v biases exchanged");
	expect_swapped("bailing_moe", 2, 1, L1 "attention.dense.weight",
	               "attention.dense columns exchanged");
	expect_swapped("bailing_moe", 2, 1, L1 "mlp.shared_experts.gate_up_proj.weight",
	               "the shared experts' gate/up rows exchanged");
	expect_swapped("bailing_moe", 2, 1, L1 "mlp.shared_experts.down_proj.weight",
	               "the shared experts' down_proj columns exchanged");
	expect_stacks_swapped("bailing_moe", 1, 2, L1 "mlp.experts.",
	                      "the EP ranks' experts exchanged");
	expect_halves_swapped(
	    "bailing_moe", 2, 1,
	    (tamper_halves){L1 "attention.query_key_value.weight", 1, 1, 64, 128 * 4},
	    "rank 1's q and k rows exchanged");
}

/* Bailing's switches: the ckpt's config read as vLLM's bailing_moe.py runs it, and each moves
 * the logits. */
static void test_bailing_switches(void **state)
{
	(void)state;
	model m = {0};
	ref_set ck = {0};
	ref_cfg c;
	wt_errbuf err = {0};
	open_model(&m, "bailing_moe");
	assert_int_equal(ref_load_ckpt(m.c, &c, &ck, &err), WT_OK);
	assert_true(c.bailing && c.fused_ckpt && c.kind == REF_QWEN2_MOE && !c.tied && c.d == 16 &&
	            c.H == 8 && c.KV == 4 && c.E == 4 && c.topk == 2 && c.Ie == 64 && c.Is == 64 &&
	            c.norm_topk && c.sparse_step == 1 && c.L == 2 && !c.layernorm);
	assert_float_equal(c.eps, 1e-6, 1e-15);
	size_t n = N_TOK * V_B;
	float *base = malloc(n * sizeof(float)), *lg = malloc(n * sizeof(float));
	assert_true(base && lg);
	logits_with(&c, &ck, base);
	ref_cfg off = c;
	off.norm_topk = false;
	logits_with(&off, &ck, lg);
	expect_moved(base, lg, n, 1e-3, "the top-2 weights not renormalized");
	off = c;
	off.Is = 0;
	logits_with(&off, &ck, lg);
	expect_moved(base, lg, n, 1e-3, "the shared expert dropped");
	free(base);
	free(lg);
	ref_set_clear(&ck);
	close_model(&m);
}

#define BA(extra)                                                                                  \
	"{\"architectures\": [\"BailingMoeForCausalLM\"], \"model_type\": \"bailing_moe\", "       \
	"\"hidden_size\": 64, \"num_attention_heads\": 4, \"num_hidden_layers\": 2, "              \
	"\"vocab_size\": 100, \"num_key_value_heads\": 2, \"moe_intermediate_size\": 32" extra "}"
#define BF(extra) BA(", \"use_bias\": false" extra)

static void test_bailing_config(void **state)
{
	(void)state;
	ref_cfg c;
	wt_errbuf err = {0};
	/* BailingMoeConfig's defaults: 16 experts, 2 per token, norm_topk_prob true, no shared
	 * experts, rms_norm_eps 1e-5, rope_theta 10000, untied */
	static const char plain[] = BF("");
	assert_int_equal(ref_cfg_parse_json(plain, strlen(plain), &c, &err), WT_OK);
	assert_true(c.bailing && c.E == 16 && c.topk == 2 && c.norm_topk && c.Is == 0 && !c.tied &&
	            c.d == 16 && c.Ie == 32);
	assert_float_equal(c.eps, 1e-5, 1e-12);
	assert_float_equal(c.theta, 10000.0, 1e-9);
	static const char shared[] =
	    BF(", \"num_shared_experts\": 2, \"norm_topk_prob\": false, \"rms_norm_eps\": 1e-6");
	assert_int_equal(ref_cfg_parse_json(shared, strlen(shared), &c, &err), WT_OK);
	assert_true(c.Is == 64 && !c.norm_topk);
	assert_float_equal(c.eps, 1e-6, 1e-12);
	expect_cfg(BA(", \"use_bias\": true"), WT_EUNSUPPORTED, "use_bias");
	expect_cfg(BA(""), WT_EUNSUPPORTED, "use_bias"); /* BailingMoeConfig's default true */
	expect_cfg(BF(", \"tie_word_embeddings\": true"), WT_EUNSUPPORTED, "tie_word_embeddings");
	expect_cfg(BF(", \"first_k_dense_replace\": 1"), WT_EUNSUPPORTED, "first_k_dense_replace");
	expect_cfg(BF(", \"hidden_act\": \"gelu\""), WT_EUNSUPPORTED, "hidden_act");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_bailing_pass),   cmocka_unit_test(test_bailing_torch),
	    cmocka_unit_test(test_bailing_caught), cmocka_unit_test(test_bailing_switches),
	    cmocka_unit_test(test_bailing_config),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
