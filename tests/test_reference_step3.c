/*
 * test_reference_step3.c — the reference forward pass over Step 3's language model
 * (Step3TextForCausalLM; fixture step3_text) as vLLM's step3_text.py runs it: per layer
 * x += attn(input_layernorm(x)), x += ffn(post_attention_layernorm(x)); the attention
 * [qa; k; v] = x [q_proj; k_proj; v_proj]^T (qa of share_q_dim 96, ONE kv head of head_dim 64),
 * q = inter_norm(qa) wq^T (4 heads of 64), rotate-half RoPE over the whole head, causal softmax,
 * o_proj; layer 0 a dense SiLU MLP, layers 1-2 (moe_layers_enum "1,2") a softmax top-2 over 4
 * stacked experts, renormalized (norm_expert_weight), plus share_expert ungated; lm_head untied.
 * Full and sharded logits agree within REF_TOL_F32 (TP 1, 2, 4; TP 1 x EP 2, TP 2 x EP 2) or the
 * quantized layouts' budgets; the full path's logits equal an independent torch model of vLLM's
 * module semantics at 28 points; rank tensors broken the way a wrong planner would break them
 * are caught. Fixture from $WT_BUILD/wt-mkckpt --family step3_text (seed printed).
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

#define FAM  "step3_text"
#define V_S3 1000
#define L0   "model.layers.0."
#define L1   "model.layers.1."

static int setup(void **state)
{
	(void)state;
	static const char *fams[] = {FAM};
	return gen_fixtures("reference_step3", fams, 1);
}

/* TP 1 / 2 / 4 (4 heads), int8-channel TP 2, fp8-channel TP 4; EP 2 alone and with TP 2 */
static void test_s3_pass(void **state)
{
	(void)state;
	expect_pass_tp(FAM, false);
	expect_pass(FAM, 1, 2, WT_QUANT_NONE, 0);
	expect_pass(FAM, 2, 2, WT_QUANT_NONE, 0);
}

/* (token, column, torch logit), tokens g_tokens: transformers 4.57.1 has no Step 3, so a torch
 * model written from vLLM's step3_text.py module semantics (float32, torch 2.4.1 CPU) over
 * transformers 4.57.1's LlamaRMSNorm (the layer norms, inter_norm over share_q_dim, model.norm),
 * LlamaRotaryEmbedding / apply_rotary_pos_emb (head_dim 64, rope_theta 500000) and LlamaMLP
 * (layer 0's mlp, share_expert), each load_state_dict strict, every fixture tensor read once;
 * eager causal attention over the one kv head, the softmax top-2 renormalized over the stacked
 * experts: all 7 x 1000 logits within 4.8e-7 of the reference's (largest 0.997) */
static const gold_pt gold_s3[] = {
    {0, 0, 1.914050579e-01f},    {0, 333, -5.272318795e-02f}, {0, 666, -3.295909762e-01f},
    {0, 999, 9.197154641e-02f},  {1, 0, 4.079735875e-01f},    {1, 333, -4.137749970e-02f},
    {1, 666, -2.022730857e-01f}, {1, 999, -6.562536210e-02f}, {2, 0, 3.086610734e-01f},
    {2, 333, 2.831108170e-03f},  {2, 666, -2.560042143e-01f}, {2, 999, -1.483997256e-01f},
    {3, 0, 3.096450865e-01f},    {3, 333, 4.514230788e-02f},  {3, 666, -2.145759910e-01f},
    {3, 999, -8.728225529e-02f}, {4, 0, 3.007692993e-01f},    {4, 333, 6.148810685e-02f},
    {4, 666, -2.219533473e-01f}, {4, 999, -8.231774718e-02f}, {5, 0, 3.292363584e-01f},
    {5, 333, 1.668995023e-01f},  {5, 666, -2.215091139e-01f}, {5, 999, -8.181636035e-02f},
    {6, 0, 3.855767846e-01f},    {6, 333, 1.519203484e-01f},  {6, 666, -1.914736032e-01f},
    {6, 999, -2.915284224e-02f}};

#define GOLD_TOL 1e-5

static void test_s3_torch(void **state)
{
	(void)state;
	expect_gold(FAM, V_S3, GOLD_TOL, gold_s3, sizeof(gold_s3) / sizeof(gold_s3[0]));
}

static void test_s3_caught(void **state)
{
	(void)state;
	expect_swapped(FAM, 2, 1, L1 "self_attn.wq.weight", "the ranks' wq rows exchanged");
	expect_zeroed(FAM, 2, 1, 1, L1 "self_attn.qkv_proj.weight",
	              "rank 1's replicated qkv_proj lost (cut instead of whole)");
	expect_zeroed(FAM, 2, 1, 1, L1 "self_attn.inter_norm.weight", "rank 1's inter_norm lost");
	expect_swapped(FAM, 2, 1, L1 "self_attn.o_proj.weight", "o_proj columns exchanged");
	expect_swapped(FAM, 2, 1, L0 "mlp.gate_up_proj.weight",
	               "the dense layer's gate/up rows exchanged");
	expect_swapped(FAM, 2, 1, L1 "share_expert.down_proj.weight",
	               "share_expert's down_proj columns exchanged");
	expect_swapped(FAM, 2, 1, L1 "moe.experts.w2_weight", "the experts' w2 slices exchanged");
	expect_zeroed(FAM, 2, 1, 1, L1 "moe.gate.weight", "rank 1's router lost");
	expect_stacks_swapped(FAM, 1, 2, L1 "moe.experts.", "the EP ranks' experts exchanged");
	/* TP 1: the fused [qa; k; v] with its qa rows' first 64 and next 64 exchanged (k pulled
	 * into q: q_proj's 96 rows are not split where the head_dim would put them) */
	expect_halves_swapped(FAM, 1, 1,
	                      (tamper_halves){L1 "self_attn.qkv_proj.weight", 0, 1, 64, 128 * 4},
	                      "q_proj and k_proj rows mixed in qkv_proj");
}

/* The config read as vLLM's step3_text.py builds the model, and each switch moves the logits. */
static void test_s3_switches(void **state)
{
	(void)state;
	model m = {0};
	ref_set ck = {0};
	ref_cfg c;
	wt_errbuf err = {0};
	open_model(&m, FAM);
	assert_int_equal(ref_load_ckpt(m.c, &c, &ck, &err), WT_OK);
	assert_true(c.step3 && c.glm4_moe && c.ds_moe && c.kind == REF_DEEPSEEK && !c.tied &&
	            c.d == 64 && c.H == 4 && c.KV == 1 && c.q_lora == 96 && c.E == 4 &&
	            c.topk == 2 && c.Ie == 64 && c.Is == 96 && c.norm_topk && c.n_group == 1 &&
	            c.L == 3 && !c.qk_norm && c.l4_moe[0] == 0x6 && !ref_layer_is_moe(&c, 0) &&
	            ref_layer_is_moe(&c, 1) && ref_layer_is_moe(&c, 2));
	assert_float_equal(c.eps, 1e-5, 1e-15);
	assert_float_equal(c.theta, 500000.0, 1e-6);
	size_t n = N_TOK * V_S3;
	float *base = malloc(n * sizeof(float)), *lg = malloc(n * sizeof(float));
	assert_true(base && lg);
	logits_with(&c, &ck, base);
	ref_cfg off = c;
	off.norm_topk = false;
	logits_with(&off, &ck, lg);
	expect_moved(base, lg, n, 1e-3, "norm_expert_weight off");
	off = c;
	off.topk = 1;
	logits_with(&off, &ck, lg);
	expect_moved(base, lg, n, 1e-3, "moe_top_k 1");
	off = c;
	off.theta = 10000.0;
	logits_with(&off, &ck, lg);
	expect_moved(base, lg, n, 1e-3, "rope_theta 10000");
	free(base);
	free(lg);
	ref_set_clear(&ck);
	close_model(&m);
}

#define S3J(extra)                                                                                 \
	"{\"architectures\": [\"Step3TextForCausalLM\"], \"model_type\": \"step3_text\", "         \
	"\"hidden_size\": 64, \"intermediate_size\": 96, \"num_attention_heads\": 4, "             \
	"\"num_hidden_layers\": 3, \"vocab_size\": 100, \"head_dim\": 32, \"share_q_dim\": 48, "   \
	"\"moe_num_experts\": 8, \"moe_intermediate_size\": 16, \"share_expert_dim\": 24, "        \
	"\"moe_layers_enum\": \"0,2\"" extra "}"

static void test_s3_config(void **state)
{
	(void)state;
	ref_cfg c;
	wt_errbuf err = {0};
	/* Step3TextConfig's defaults: moe_top_k 3, norm_expert_weight false, rms_norm_eps 1e-5,
	 * rope_theta 500000; one kv head; untied */
	static const char plain[] = S3J("");
	int rv = ref_cfg_parse_json(plain, strlen(plain), &c, &err);
	if (rv != WT_OK)
		print_error("%s\n", err.msg);
	assert_int_equal(rv, WT_OK);
	assert_true(c.step3 && c.E == 8 && c.topk == 3 && !c.norm_topk && c.KV == 1 && c.d == 32 &&
	            c.q_lora == 48 && c.Is == 24 && c.Ie == 16 && !c.tied && c.l4_moe[0] == 0x5);
	assert_float_equal(c.eps, 1e-5, 1e-12);
	assert_float_equal(c.theta, 500000.0, 1e-6);
	static const char keys[] = S3J(", \"moe_top_k\": 2, \"norm_expert_weight\": true, "
	                               "\"rms_norm_eps\": 1e-6, \"rope_theta\": 10000.0");
	assert_int_equal(ref_cfg_parse_json(keys, strlen(keys), &c, &err), WT_OK);
	assert_true(c.topk == 2 && c.norm_topk);
	assert_float_equal(c.eps, 1e-6, 1e-12);
	assert_float_equal(c.theta, 10000.0, 1e-9);
	expect_cfg(S3J(", \"moe_top_k\": 0"), WT_ECORRUPT, "moe_top_k");
	expect_cfg(S3J(", \"moe_top_k\": 9"), WT_EUNSUPPORTED, "");
	expect_cfg(S3J(", \"rope_scaling\": {\"rope_type\": \"su\", \"factor\": 2.0}"),
	           WT_EUNSUPPORTED, "su");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_s3_pass),   cmocka_unit_test(test_s3_torch),
	    cmocka_unit_test(test_s3_caught), cmocka_unit_test(test_s3_switches),
	    cmocka_unit_test(test_s3_config),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
