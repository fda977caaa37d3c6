/*
 * test_reference_mimo_v2.c — the reference forward pass over MiMo-V2-Flash
 * (MiMoV2FlashForCausalLM; fixture mimo_v2_flash) as vLLM's mimo_v2_flash.py runs it: per layer
 * x += attn(input_layernorm(x)), x += mlp(post_attention_layernorm(x)); layers 0 / 2 the full
 * attention (8 heads, 2 kv heads, head_dim 32, v_head_dim 16, rope_theta 5e6), layer 1 the
 * sliding-window one (16 heads, 4 kv heads, swa_head_dim 24, swa_v_head_dim 12, swa_rope_theta
 * 1e4, a window of 4 keys, attention_sink_bias per head); RoPE on the first half of each head
 * (partial_rotary_factor 0.5), v times attention_value_scale 0.707; layer 0 a dense SiLU MLP,
 * layers 1-2 (moe_layer_freq [0, 1, 1]) the sigmoid router with e_score_correction_bias, 8
 * experts in 4 groups, top 2 of the best 2 groups, renormalized; lm_head untied. Full and sharded
 * logits agree within REF_TOL_F32 (TP 1, 2, 4, 8; TP 1 / 2 x EP 2) or the quantized layouts'
 * budgets; the full path's logits equal an independent torch model at 28 points; rank tensors
 * broken the way a wrong planner would break them are caught. Fixture from
 * $WT_BUILD/wt-mkckpt --family mimo_v2_flash (seed printed).
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

#define FAM  "mimo_v2_flash"
#define V_MV 1000
#define L0   "model.layers.0."
#define L1   "model.layers.1."

static int setup(void **state)
{
	(void)state;
	static const char *fams[] = {FAM};
	return gen_fixtures("reference_mimo_v2", fams, 1);
}

/* TP 1 / 2 / 4 / 8 (the SWA layer's 4 kv heads and the full layers' 2 replicated past them),
 * int8-channel TP 2, fp8-channel TP 4; EP 2 alone and with TP 2 */
static void test_mv_pass(void **state)
{
	(void)state;
	expect_pass_tp(FAM, true);
	expect_pass(FAM, 1, 2, WT_QUANT_NONE, 0);
	expect_pass(FAM, 2, 2, WT_QUANT_NONE, 0);
}

/* (token, column, torch logit), tokens g_tokens: neither transformers 4.57.1 nor vLLM keeps
 * MiMo-V2-Flash's modeling code outside vLLM's engine, so a torch model written from vLLM's
 * mimo_v2_flash.py module semantics (float32, torch 2.4.1 CPU) over transformers 4.57.1's
 * LlamaRMSNorm (the layer norms, model.norm), LlamaRotaryEmbedding with partial_rotary_factor
 * and GLM-4.5-MoE's partial apply_rotary_pos_emb (each kind its own head_dim and theta), GPT-OSS's
 * eager_attention_forward (the sink attention of layer 1, its window as an additive mask),
 * Llama's eager_attention_forward (layers 0 / 2), DeepseekV3TopkRouter (n_group 4, topk_group 2,
 * routed_scaling_factor 1) and LlamaMLP (layer 0's mlp, every expert), each load_state_dict
 * strict, every fixture tensor read once but the MTP one (vLLM skips it): all 7 x 1000 logits
 * within 4.2e-7 of the reference's (largest 0.871) */
static const gold_pt gold_mv[] = {
    {0, 0, 1.918502748e-01f},    {0, 333, 2.483536601e-01f},  {0, 666, 1.439670771e-01f},
    {0, 999, 3.742780387e-01f},  {1, 0, 1.256090701e-01f},    {1, 333, -4.164089635e-02f},
    {1, 666, 7.493177429e-03f},  {1, 999, 3.609539866e-01f},  {2, 0, -4.338347539e-02f},
    {2, 333, -6.253108382e-02f}, {2, 666, -5.954239145e-02f}, {2, 999, 2.187948972e-01f},
    {3, 0, 1.994334012e-01f},    {3, 333, -3.155249357e-02f}, {3, 666, 1.856287271e-01f},
    {3, 999, 3.172638118e-01f},  {4, 0, 4.030059278e-02f},    {4, 333, -1.484504193e-01f},
    {4, 666, 3.667686880e-02f},  {4, 999, 2.063209265e-01f},  {5, 0, 8.561111242e-02f},
    {5, 333, -8.557169884e-02f}, {5, 666, -9.867044538e-02f}, {5, 999, 1.647406965e-01f},
    {6, 0, 2.317358255e-01f},    {6, 333, -1.272913814e-01f}, {6, 666, 1.589989066e-01f},
    {6, 999, 2.818420231e-01f}};

#define GOLD_TOL 1e-5

static void test_mv_torch(void **state)
{
	(void)state;
	expect_gold(FAM, V_MV, GOLD_TOL, gold_mv, sizeof(gold_mv) / sizeof(gold_mv[0]));
}

static void test_mv_caught(void **state)
{
	(void)state;
	expect_swapped(FAM, 2, 1, L1 "self_attn.qkv_proj.weight",
	               "the sliding layer's q / k / v rows exchanged between the ranks");
	expect_swapped(FAM, 2, 1, L0 "self_attn.qkv_proj.weight",
	               "the full layer's q / k / v rows exchanged between the ranks");
	expect_swapped(FAM, 2, 1, L1 "self_attn.attention_sink_bias",
	               "the sinks of the ranks' heads exchanged");
	expect_zeroed(FAM, 2, 1, 1, L1 "self_attn.attention_sink_bias", "rank 1's sinks lost");
	expect_swapped(FAM, 4, 1, L1 "self_attn.o_proj.weight",
	               "o_proj columns (H x swa_v_head_dim) exchanged");
	expect_swapped(FAM, 2, 1, L0 "self_attn.o_proj.weight",
	               "o_proj columns (H x v_head_dim) exchanged");
	expect_swapped(FAM, 2, 1, L0 "mlp.gate_up_proj.weight",
	               "the dense layer's gate/up rows exchanged");
	expect_swapped(FAM, 2, 1, L1 "mlp.experts.w2_weight", "the experts' w2 slices exchanged");
	expect_zeroed(FAM, 2, 1, 1, L1 "mlp.gate.weight", "rank 1's router lost");
	expect_stacks_swapped(FAM, 1, 2, L1 "mlp.experts.", "the EP ranks' experts exchanged");
	/* TP 2 rank 0's SWA qkv_proj: q heads 0 and 1 (swa_head_dim 24 rows of 128 BF16 each)
	 * exchanged, as a cut of the wrong head width would misplace them */
	expect_halves_swapped(FAM, 2, 1,
	                      (tamper_halves){L1 "self_attn.qkv_proj.weight", 0, 1, 24, 128 * 2},
	                      "q heads of the sliding layer mixed in qkv_proj");
}

/* The config read as vLLM's mimo_v2_flash.py builds the model, and each switch moves the
 * logits. */
static void test_mv_switches(void **state)
{
	(void)state;
	model m = {0};
	ref_set ck = {0};
	ref_cfg c;
	wt_errbuf err = {0};
	open_model(&m, FAM);
	assert_int_equal(ref_load_ckpt(m.c, &c, &ck, &err), WT_OK);
	assert_true(c.mimo_v2 && c.glm4_moe && c.kind == REF_DEEPSEEK && !c.tied && c.L == 3 &&
	            c.mv_h[0] == 8 && c.mv_kv[0] == 2 && c.mv_d[0] == 32 && c.mv_vd[0] == 16 &&
	            c.mv_h[1] == 16 && c.mv_kv[1] == 4 && c.mv_d[1] == 24 && c.mv_vd[1] == 12 &&
	            c.mv_rot[0] == 16 && c.mv_rot[1] == 12 && c.mv_sinks && c.local_masked &&
	            c.local_mask[0] == 0x2 && c.window == 4 && c.E == 8 && c.topk == 2 &&
	            c.Ie == 64 && c.Is == 0 && c.n_group == 4 && c.topk_group == 2 && c.norm_topk &&
	            !c.qk_norm && c.l4_moe[0] == 0x6 && !ref_layer_is_moe(&c, 0) &&
	            ref_layer_is_moe(&c, 1) && ref_layer_is_moe(&c, 2));
	assert_float_equal(c.eps, 1e-5, 1e-15);
	assert_float_equal(c.theta, 5000000.0, 1e-6);
	assert_float_equal(c.theta_local, 10000.0, 1e-9);
	assert_float_equal(c.mv_vscale, 0.707, 1e-12);
	assert_float_equal(c.routed_scale, 1.0, 0.0);
	size_t n = N_TOK * V_MV;
	float *base = malloc(n * sizeof(float)), *lg = malloc(n * sizeof(float));
	assert_true(base && lg);
	logits_with(&c, &ck, base);
	ref_cfg off = c;
	off.mv_vscale = 1.0;
	logits_with(&off, &ck, lg);
	expect_moved(base, lg, n, 1e-3, "attention_value_scale off");
	off = c;
	off.window = 64;
	logits_with(&off, &ck, lg);
	expect_moved(base, lg, n, 1e-3, "sliding_window_size past the tokens");
	off = c;
	off.mv_sinks = false;
	logits_with(&off, &ck, lg);
	expect_moved(base, lg, n, 1e-3, "attention sinks off");
	off = c;
	off.mv_rot[0] = 32;
	logits_with(&off, &ck, lg);
	expect_moved(base, lg, n, 1e-3, "the full layers' RoPE over the whole head");
	off = c;
	off.mv_rot[1] = 24;
	logits_with(&off, &ck, lg);
	expect_moved(base, lg, n, 1e-3, "the sliding layer's RoPE over the whole head");
	off = c;
	off.theta_local = c.theta;
	logits_with(&off, &ck, lg);
	expect_moved(base, lg, n, 1e-3, "swa_rope_theta as rope_theta");
	off = c;
	off.theta = c.theta_local;
	logits_with(&off, &ck, lg);
	expect_moved(base, lg, n, 1e-3, "rope_theta as swa_rope_theta");
	off = c;
	off.norm_topk = false;
	logits_with(&off, &ck, lg);
	expect_moved(base, lg, n, 1e-3, "norm_topk_prob off");
	off = c;
	off.n_group = off.topk_group = 1;
	logits_with(&off, &ck, lg);
	expect_moved(base, lg, n, 1e-3, "one expert group");
	free(base);
	free(lg);
	ref_set_clear(&ck);
	close_model(&m);
}

#define MVJP(pattern, extra)                                                                       \
	"{\"architectures\": [\"MiMoV2FlashForCausalLM\"], \"model_type\": \"mimo_v2_flash\", "    \
	"\"hidden_size\": 64, \"intermediate_size\": 96, \"num_attention_heads\": 4, "             \
	"\"num_key_value_heads\": 2, \"head_dim\": 16, \"num_hidden_layers\": 2, "                 \
	"\"vocab_size\": 100, \"hidden_act\": \"silu\", \"layernorm_epsilon\": 1e-6, "             \
	"\"hybrid_layer_pattern\": " pattern ", \"swa_num_attention_heads\": 8, "                  \
	"\"swa_num_key_value_heads\": 8, \"swa_head_dim\": 24, \"sliding_window_size\": 3, "       \
	"\"attention_bias\": false, \"moe_layer_freq\": [0, 1], \"n_routed_experts\": 4, "         \
	"\"moe_intermediate_size\": 16, \"num_experts_per_tok\": 2, \"n_group\": 2, "              \
	"\"topk_group\": 1, \"norm_topk_prob\": false" extra "}"
#define MVJ(extra) MVJP("[1, 0]", extra)
#define MV1J(window)                                                                               \
	"{\"architectures\": [\"MiMoV2FlashForCausalLM\"], \"model_type\": \"mimo_v2_flash\", "    \
	"\"hidden_size\": 64, \"intermediate_size\": 96, \"num_attention_heads\": 4, "             \
	"\"num_key_value_heads\": 2, \"head_dim\": 16, \"num_hidden_layers\": 1, "                 \
	"\"vocab_size\": 100, \"hidden_act\": \"silu\", \"layernorm_epsilon\": 1e-6, "             \
	"\"hybrid_layer_pattern\": [1], \"swa_num_attention_heads\": 4, "                          \
	"\"swa_num_key_value_heads\": 2, \"swa_head_dim\": 16, \"sliding_window_size\": " window   \
	", \"attention_bias\": false}"

static void test_mv_config(void **state)
{
	(void)state;
	ref_cfg c;
	wt_errbuf err = {0};
	/* vLLM's getattr defaults: rope_theta 1e6, swa_rope_theta rope_theta, v heads of the
	 * layer's head_dim, partial_rotary_factor 1, no attention_value_scale (1), no sinks */
	static const char plain[] = MVJ("");
	int rv = ref_cfg_parse_json(plain, strlen(plain), &c, &err);
	if (rv != WT_OK)
		print_error("%s\n", err.msg);
	assert_int_equal(rv, WT_OK);
	assert_true(c.mimo_v2 && c.mv_h[1] == 8 && c.mv_kv[1] == 8 && c.mv_d[1] == 24 &&
	            c.mv_vd[1] == 24 && c.mv_vd[0] == 16 && c.mv_rot[0] == 16 &&
	            c.mv_rot[1] == 24 && !c.mv_sinks && c.local_mask[0] == 0x1 && c.window == 3 &&
	            c.l4_moe[0] == 0x2 && c.E == 4 && c.n_group == 2 && c.topk_group == 1 &&
	            !c.norm_topk);
	assert_float_equal(c.eps, 1e-6, 1e-15);
	assert_float_equal(c.theta, 1000000.0, 1e-6);
	assert_float_equal(c.theta_local, 1000000.0, 1e-6);
	assert_float_equal(c.mv_vscale, 1.0, 0.0);
	static const char keys[] =
	    MVJ(", \"rope_theta\": 20000.0, \"swa_rope_theta\": 500.0, \"swa_v_head_dim\": 8, "
	        "\"partial_rotary_factor\": 0.25, \"attention_value_scale\": 0.5, "
	        "\"add_swa_attention_sink_bias\": true");
	assert_int_equal(ref_cfg_parse_json(keys, strlen(keys), &c, &err), WT_OK);
	assert_true(c.mv_vd[1] == 8 && c.mv_rot[0] == 4 && c.mv_rot[1] == 6 && c.mv_sinks);
	assert_float_equal(c.theta, 20000.0, 1e-9);
	assert_float_equal(c.theta_local, 500.0, 1e-9);
	assert_float_equal(c.mv_vscale, 0.5, 0.0);
	expect_cfg(MVJ(", \"partial_rotary_factor\": 0.125"), WT_EUNSUPPORTED, "swa_head_dim 24");
	expect_cfg(MVJ(", \"partial_rotary_factor\": 0.0625"), WT_EUNSUPPORTED, "head_dim 16");
	expect_cfg(MVJ(", \"rope_theta\": 1.0"), WT_EUNSUPPORTED, "rope_theta");
	expect_cfg(MVJ(", \"swa_rope_theta\": 0.5"), WT_EUNSUPPORTED, "swa_rope_theta");
	/* the config sweep's 1e300: v, then the logits, overflow */
	expect_cfg(MVJ(", \"attention_value_scale\": 1e300"), WT_EUNSUPPORTED,
	           "attention_value_scale 1e+300");
	expect_cfg(MVJ(", \"attention_value_scale\": -1e300"), WT_EUNSUPPORTED,
	           "attention_value_scale -1e+300");
	/* one sliding layer, no moe_layer_freq: no MoE layer, so no MoE key read (a dense kind);
	 * a sliding_window_size below 1 (vLLM's -1: no window) refused */
	static const char dense[] = MV1J("3"), nowin[] = MV1J("-1");
	assert_int_equal(ref_cfg_parse_json(dense, strlen(dense), &c, &err), WT_OK);
	assert_true(c.mimo_v2 && c.kind == REF_DENSE && c.l4_moe[0] == 0 && c.window == 3 &&
	            !ref_layer_is_moe(&c, 0));
	expect_cfg(nowin, WT_EUNSUPPORTED, "sliding_window_size -1");
	/* the loader's refusals reach the reference (config_mimo_v2.c) */
	expect_cfg(MVJP("[1]", ""), WT_ECORRUPT, "hybrid_layer_pattern");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_mv_pass),   cmocka_unit_test(test_mv_torch),
	    cmocka_unit_test(test_mv_caught), cmocka_unit_test(test_mv_switches),
	    cmocka_unit_test(test_mv_config),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
