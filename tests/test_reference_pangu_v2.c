/*
 * test_reference_pangu_v2.c — the reference forward pass over openPangu-Pro-MoE-V2
 * (PanguProMoEV2ForCausalLM, fixture pangu_pro_moe_v2) as vLLM's openpangu.py runs
 * OpenPanguMoEModel with the sink attention: per layer input_layernorm, OpenPanguSinkAttention
 * (8 heads over 4 kv heads of head_dim 40 = qk_nope_dim 24 + qk_rope_dim 16, v heads of
 * v_channels 24; k_layernorm on the keys and the sink keys; GPT-J RoPE on the first 16 dims at
 * rope_theta 1.6e7; 4 static sinks per kv head before the tokens), the sandwich norms; layer 0 a
 * dense MLP, layer 1 the sigmoid router of one group choosing on the scores plus
 * mlp.e_score_correction_bias (top 2 of 4, renormalized, times 2.5) plus one shared expert; the
 * MTP layer unread; lm_head untied. Full and sharded logits agree within REF_TOL_F32 (TP 1, 2,
 * 4; TP 1 x EP 2, TP 2 x EP 2) or the quantized layouts' budgets; the full path's logits equal
 * an independent torch model at 28 points; rank tensors broken the way a wrong planner would
 * break them are caught. Fixture from $WT_BUILD/wt-mkckpt --family pangu_pro_moe_v2 (seed
 * printed).
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

#define FAM  "pangu_pro_moe_v2"
#define V_PV 1024
#define L0   "model.layers.0."
#define L1   "model.layers.1."

static int setup(void **state)
{
	(void)state;
	static const char *fams[] = {FAM};
	return gen_fixtures("reference_pangu_v2", fams, 1);
}

/* TP 1 / 2 / 4 (TP 8 is above the 4 kv heads: refused as vLLM refuses it), int8-channel TP 2
 * and fp8-channel TP 4 within their budgets, TP 1 x EP 2 and TP 2 x EP 2. */
static void test_pv2_pass(void **state)
{
	(void)state;
	expect_pass_tp(FAM, false);
	expect_pass(FAM, 1, 2, WT_QUANT_NONE, 0);
	expect_pass(FAM, 2, 2, WT_QUANT_NONE, 0);
}

/* (token, column, torch logit), tokens g_tokens: transformers 4.57.1 has no openPangu MoE, so
 * a torch model written from vLLM's openpangu.py module semantics (float32, torch 2.4.1 CPU):
 * OpenPanguSinkAttention as vLLM's StaticSinkAttention runs it (q / k / v of the fixture's
 * tensors, DeepseekV3RMSNorm as k_layernorm on the keys and the sink keys, GPT-J RoPE on the
 * first qk_rope_dim dims, the sinks prepended to every kv head's keys and values, eager softmax
 * at head_dim^-0.5), OpenPanguDecoderLayer.forward_normal with sandwich_norm, transformers'
 * DeepseekV3MLP for layer 0 and DeepseekV3MoE (n_group / topk_group 1, the fixture's
 * mlp.e_score_correction_bias as gate.e_score_correction_bias, load_state_dict strict) for layer
 * 1: all 7 x 1024 logits within 7.5e-7 of the reference's (largest 1.17) */
static const gold_pt gold_pv2[] = {
    {0, 0, 2.831128538e-01f},    {0, 333, 4.634934664e-01f},  {0, 666, 4.815697670e-03f},
    {0, 999, 8.558892012e-01f},  {1, 0, -7.460559160e-02f},   {1, 333, 7.356023788e-01f},
    {1, 666, -2.214308828e-01f}, {1, 999, 5.502449870e-01f},  {2, 0, 2.024100348e-02f},
    {2, 333, 3.498621285e-01f},  {2, 666, -3.278307617e-02f}, {2, 999, 9.102369547e-01f},
    {3, 0, 1.264128536e-01f},    {3, 333, 3.782583475e-01f},  {3, 666, 1.827109605e-01f},
    {3, 999, 1.039049506e+00f},  {4, 0, -1.386936903e-01f},   {4, 333, 1.609144509e-01f},
    {4, 666, 1.363202929e-02f},  {4, 999, 7.748364806e-01f},  {5, 0, 1.593774706e-01f},
    {5, 333, -5.125357211e-02f}, {5, 666, 2.961825728e-01f},  {5, 999, 6.849873662e-01f},
    {6, 0, 1.567093730e-01f},    {6, 333, -2.498921305e-01f}, {6, 666, 1.751640141e-01f},
    {6, 999, 2.521909475e-01f}};

#define GOLD_TOL 1e-5

static void test_pv2_torch(void **state)
{
	(void)state;
	expect_gold(FAM, V_PV, GOLD_TOL, gold_pv2, sizeof(gold_pv2) / sizeof(gold_pv2[0]));
}

static void test_pv2_caught(void **state)
{
	(void)state;
	expect_swapped(FAM, 2, 1, L1 "self_attn.qkv_proj.weight", "the ranks' qkv_proj heads");
	expect_swapped(FAM, 2, 1, L1 "self_attn.o_proj.weight", "o_proj columns exchanged");
	expect_swapped(FAM, 2, 1, L1 "self_attn.param_sink_key", "the ranks' sink keys exchanged");
	expect_swapped(FAM, 4, 1, L0 "self_attn.param_sink_value",
	               "the ranks' sink values exchanged");
	expect_zeroed(FAM, 2, 1, 1, L1 "self_attn.k_layernorm.weight", "rank 1's k_layernorm lost");
	expect_zeroed(FAM, 2, 1, 1, L1 "post_attention_layernorm.weight",
	              "rank 1's sandwich attention norm lost");
	expect_zeroed(FAM, 2, 1, 1, L1 "post_mlp_layernorm.weight", "rank 1's post-MLP norm lost");
	expect_swapped(FAM, 2, 1, L0 "mlp.gate_up_proj.weight",
	               "the dense layer's gate/up rows exchanged");
	expect_stacks_swapped(FAM, 1, 2, L1 "mlp.experts.", "the EP ranks' experts exchanged");
}

/* The ckpt's config as vLLM's openpangu.py runs it, and each switch moves the logits. */
static void test_pv2_switches(void **state)
{
	(void)state;
	model m = {0};
	ref_set ck = {0};
	ref_cfg c;
	wt_errbuf err = {0};
	open_model(&m, FAM);
	assert_int_equal(ref_load_ckpt(m.c, &c, &ck, &err), WT_OK);
	assert_true(c.pv2 && c.pangu_moe && c.sandwich && c.kind == REF_DEEPSEEK && c.glm4_moe &&
	            !c.tied && c.H == 8 && c.KV == 4 && c.d == 40 && c.pv2_vd == 24 &&
	            c.pv2_sinks == 4 && c.rot_dim == 16 && c.rope_pairs && c.E == 4 &&
	            c.topk == 2 && c.norm_topk && c.n_group == 1 && c.first_dense == 1 && c.L == 2);
	assert_float_equal(c.routed_scale, 2.5, 1e-12);
	assert_float_equal(c.theta, 16000000.0, 1e-3);
	size_t n = N_TOK * V_PV;
	float *base = malloc(n * sizeof(float)), *lg = malloc(n * sizeof(float));
	assert_true(base && lg);
	logits_with(&c, &ck, base);
	ref_cfg off = c;
	off.rope_pairs = false;
	logits_with(&off, &ck, lg);
	expect_moved(base, lg, n, 1e-3, "rotate-half RoPE instead of GPT-J's pairs");
	off = c;
	off.rot_dim = 0;
	logits_with(&off, &ck, lg);
	expect_moved(base, lg, n, 1e-3, "RoPE over the whole head");
	off = c;
	off.sandwich = false;
	logits_with(&off, &ck, lg);
	expect_moved(base, lg, n, 1e-3, "the sandwich norms dropped");
	for (int i = 0; i < 2; i++) { /* the sinks' values zeroed */
		char b[128];
		snprintf(b, sizeof(b), "model.layers.%d.self_attn.param_sink_value", i);
		ref_tensor *t = find_tensor(&ck, b);
		memset(t->data, 0, t->nbytes);
	}
	logits_with(&c, &ck, lg);
	expect_moved(base, lg, n, 1e-4, "the sinks' values zeroed");
	/* the router bias read (the checkpoint's mlp.e_score_correction_bias under vLLM's name):
	 * one that picks experts 0 and 1 moves the logits (the fixture's agrees with the scores) */
	ref_tensor *eb = find_tensor(&ck, L1 "mlp.e_score_correction_bias");
	assert_int_equal(eb->nbytes, 4 * sizeof(float));
	memcpy(eb->data, (const float[]){5.0f, 5.0f, -5.0f, -5.0f}, 4 * sizeof(float));
	logits_with(&c, &ck, base);
	expect_moved(base, lg, n, 1e-3, "the router bias");
	free(base);
	free(lg);
	ref_set_clear(&ck);
	close_model(&m);
}

#define PVA(extra)                                                                                 \
	"{\"architectures\": [\"PanguProMoEV2ForCausalLM\"], \"model_type\": \"PanguProMoEV2\", "  \
	"\"hidden_size\": 64, \"num_attention_heads\": 4, \"num_key_value_heads\": 2, "            \
	"\"num_hidden_layers\": 2, \"vocab_size\": 100, \"intermediate_size\": 96, "               \
	"\"moe_intermediate_size\": 32, \"n_routed_experts\": 8, \"n_shared_experts\": 1, "        \
	"\"first_k_dense_replace\": 1, \"num_experts_per_tok\": 2, "                               \
	"\"routed_scaling_factor\": 2.5, \"norm_topk_prob\": true, \"v_channels\": 12, "           \
	"\"rms_norm_eps\": 1e-5" extra "}"
#define QKS ", \"qk_nope_dim\": 8, \"qk_rope_dim\": 8, \"rope_theta\": 10000"
#define QK  QKS ", \"param_sink_number\": 2"

/* rope_interleave true and sandwich_norm false when absent; rope_theta required; rope_scaling,
 * a grouped router, an odd rotary width and too many sinks refused; the loader's refusals
 * first. */
static void test_pv2_config(void **state)
{
	(void)state;
	ref_cfg c;
	wt_errbuf err = {0};
	static const char plain[] = PVA(QK);
	int rv = ref_cfg_parse_json(plain, strlen(plain), &c, &err);
	if (rv != WT_OK)
		print_error("%s\n", err.msg);
	assert_int_equal(rv, WT_OK);
	assert_true(c.pv2 && !c.sandwich && c.rope_pairs && c.d == 16 && c.pv2_vd == 12 &&
	            c.pv2_sinks == 2 && c.rot_dim == 8 && c.E == 8 && c.Is == 32);
	static const char gx[] = PVA(QK ", \"rope_interleave\": false");
	assert_int_equal(ref_cfg_parse_json(gx, strlen(gx), &c, &err), WT_OK);
	assert_false(c.rope_pairs);
	expect_cfg(PVA(", \"qk_nope_dim\": 8, \"qk_rope_dim\": 8, \"param_sink_number\": 2"),
	           WT_ECORRUPT, "rope_theta");
	expect_cfg(PVA(QK ", \"rope_scaling\": {\"type\": \"yarn\", "
	                  "\"factor\": 4.0}"),
	           WT_EUNSUPPORTED, "rope_scaling");
	expect_cfg(PVA(QK ", \"n_group\": 2, \"topk_group\": 1"), WT_EUNSUPPORTED, "n_group");
	expect_cfg(PVA(", \"rope_theta\": 10000, \"qk_rope_dim\": 7, \"qk_nope_dim\": 9, "
	               "\"param_sink_number\": 2"),
	           WT_EUNSUPPORTED, "qk_rope_dim");
	expect_cfg(PVA(QKS ", \"param_sink_number\": 64"), WT_EUNSUPPORTED, "param_sink_number");
	expect_cfg(PVA(QK ", \"is_causal\": false"), WT_EUNSUPPORTED, "is_causal");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_pv2_pass),   cmocka_unit_test(test_pv2_torch),
	    cmocka_unit_test(test_pv2_caught), cmocka_unit_test(test_pv2_switches),
	    cmocka_unit_test(test_pv2_config),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
