/*
 * test_reference_afmoe.c — the reference forward pass over AFMoE (AfmoeForCausalLM, Arcee's
 * Trinity; fixture afmoe) as vLLM's afmoe.py runs it: the embeddings times sqrt(128)
 * (mup_enabled); per layer Gemma 2's sandwich under AFMoE's names (input_layernorm,
 * post_attention_layernorm on the attention output, pre_mlp_layernorm, post_mlp_layernorm on the
 * MLP's); q/k/v (8 q / 2 kv heads of 32), per-head q_norm / k_norm, on the sliding layers 0-2
 * rotate-half RoPE and a window of 3, on the full layer 3 neither, the attention output times
 * sigmoid(gate_proj(x)) before o_proj; layer 0 a dense MLP, layers 1-3 sigmoid routing with the
 * F32 mlp.expert_bias over 4 groups (top 2 groups by their two best, top 2 experts, renormalized
 * (route_norm), times route_scale 2.5) plus the two shared experts (one MLP of 128 rows);
 * lm_head untied. Full and sharded logits agree within REF_TOL_F32 (TP 1, 2, 4, 8; TP 1 x EP 2,
 * TP 2 x EP 2) or the quantized layouts' budgets; the full path's logits equal an independent
 * torch model of vLLM's module semantics at 28 points; rank tensors broken the way a wrong planner
 * would break them are caught. Fixture from $WT_BUILD/wt-mkckpt --family afmoe (seed printed).
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

#define FAM  "afmoe"
#define V_AF 1000
#define L0   "model.layers.0."
#define L1   "model.layers.1."

static int setup(void **state)
{
	(void)state;
	static const char *fams[] = {FAM};
	return gen_fixtures("reference_afmoe", fams, 1);
}

/* TP 8 over 2 kv heads: each kv head on 4 ranks (QKVParallelLinear's replication) */
static void test_af_pass(void **state)
{
	(void)state;
	expect_pass_tp(FAM, true);
	expect_pass(FAM, 1, 2, WT_QUANT_NONE, 0);
	expect_pass(FAM, 2, 2, WT_QUANT_NONE, 0);
}

/* (token, column, torch logit), tokens g_tokens: transformers 4.57.1 has no AFMoE, so a torch
 * model written from vLLM's afmoe.py module semantics (float32, torch 2.4.1 CPU) over transformers
 * 4.57.1's LlamaRMSNorm (every norm, q/k per head), LlamaRotaryEmbedding / apply_rotary_pos_emb
 * (the sliding layers), LlamaMLP (layer 0) and DeepseekV3MoE (the grouped sigmoid top-k with
 * e_score_correction_bias = expert_bias, norm_topk_prob = route_norm, routed_scaling_factor =
 * route_scale, n_shared_experts 2), each load_state_dict strict, every fixture tensor read once;
 * eager attention with the sliding mask (t - s < 3) and the output gate: all 7 x 1000 logits
 * within 7.7e-7 of the reference's (largest 0.871). Moved by (torch): the gate dropped 0.32, the
 * expert bias zeroed 0.40, mup off 0.46, RoPE on the full layer 0.27 */
static const gold_pt gold_af[] = {
    {0, 0, 3.751308620e-01f},    {0, 333, -1.949281394e-01f}, {0, 666, 1.554045081e-01f},
    {0, 999, -1.423364431e-01f}, {1, 0, 3.864906356e-02f},    {1, 333, -2.985128388e-02f},
    {1, 666, 4.669773206e-02f},  {1, 999, -2.507530153e-01f}, {2, 0, -2.246246189e-01f},
    {2, 333, 4.041508958e-02f},  {2, 666, 2.315483242e-02f},  {2, 999, 1.033159439e-02f},
    {3, 0, -4.282444119e-01f},   {3, 333, -1.719621867e-01f}, {3, 666, -2.192461118e-02f},
    {3, 999, 2.086528689e-01f},  {4, 0, -2.877099514e-01f},   {4, 333, 1.018791124e-01f},
    {4, 666, 1.955834962e-02f},  {4, 999, -1.443864852e-01f}, {5, 0, -7.242635638e-02f},
    {5, 333, 1.740943491e-01f},  {5, 666, -6.553122401e-02f}, {5, 999, -5.555734411e-02f},
    {6, 0, 7.259349525e-02f},    {6, 333, -7.047468424e-02f}, {6, 666, 9.946370870e-02f},
    {6, 999, -1.388561875e-01f}};

#define GOLD_TOL 1e-5

static void test_af_torch(void **state)
{
	(void)state;
	expect_gold(FAM, V_AF, GOLD_TOL, gold_af, sizeof(gold_af) / sizeof(gold_af[0]));
}

static void test_af_caught(void **state)
{
	(void)state;
	expect_swapped(FAM, 2, 1, L1 "self_attn.qkv_proj.weight",
	               "the ranks' q/k/v heads exchanged");
	expect_swapped(FAM, 2, 1, L1 "self_attn.gate_proj.weight",
	               "the ranks' output-gate rows exchanged");
	expect_zeroed(FAM, 2, 1, 1, L1 "self_attn.gate_proj.weight",
	              "rank 1's output gate lost (sigmoid(0) for its heads)");
	expect_swapped(FAM, 2, 1, L1 "self_attn.o_proj.weight", "o_proj columns exchanged");
	expect_swapped(FAM, 2, 1, L0 "mlp.gate_up_proj.weight",
	               "the dense layer's gate/up rows exchanged");
	expect_swapped(FAM, 2, 1, L1 "mlp.shared_experts.down_proj.weight",
	               "the shared experts' down_proj columns exchanged");
	expect_zeroed(FAM, 2, 1, 1, L1 "mlp.expert_bias",
	              "rank 1's expert bias lost (the router's correction not whole on a rank)");
	expect_zeroed(FAM, 2, 1, 1, L1 "self_attn.q_norm.weight", "rank 1's q norm lost");
	expect_zeroed(FAM, 2, 1, 1, L1 "post_attention_layernorm.weight",
	              "rank 1's post-attention norm lost");
	expect_stacks_swapped(FAM, 1, 2, L1 "mlp.experts.", "the EP ranks' experts exchanged");
	/* TP 4 over 2 kv heads: rank 1 holds 2 q heads (64 rows) and kv head 0 (k, v: 32 rows
	 * each); its q rows exchanged with its k / v rows (BF16 rows of 128) */
	expect_halves_swapped(FAM, 4, 1,
	                      (tamper_halves){L1 "self_attn.qkv_proj.weight", 1, 1, 64, 128 * 2},
	                      "rank 1's q rows and k / v rows exchanged");
}

/* The switches: the ckpt's config read as vLLM's afmoe.py runs Trinity, and each moves the
 * logits. */
static void test_af_switches(void **state)
{
	(void)state;
	model m = {0};
	ref_set ck = {0};
	ref_cfg c;
	wt_errbuf err = {0};
	open_model(&m, FAM);
	assert_int_equal(ref_load_ckpt(m.c, &c, &ck, &err), WT_OK);
	assert_true(c.afmoe && c.glm4_moe && c.sandwich && c.nope_global && c.local_masked &&
	            !c.fused_ckpt && c.kind == REF_DEEPSEEK && !c.tied && c.d == 32 && c.H == 8 &&
	            c.KV == 2 && c.E == 8 && c.topk == 2 && c.Ie == 64 && c.Is == 128 &&
	            c.norm_topk && c.n_group == 4 && c.topk_group == 2 && c.first_dense == 1 &&
	            c.L == 4 && c.qk_norm && c.window == 3 && c.local_mask[0] == 0x7);
	assert_float_equal(c.routed_scale, 2.5, 1e-12);
	assert_float_equal(c.eps, 1e-5, 1e-15);
	assert_float_equal(c.embed_scale, sqrt(128.0), 1e-6);
	size_t n = N_TOK * V_AF;
	float *base = malloc(n * sizeof(float)), *lg = malloc(n * sizeof(float));
	assert_true(base && lg);
	logits_with(&c, &ck, base);
	ref_cfg off = c;
	off.routed_scale = 1.0;
	logits_with(&off, &ck, lg);
	expect_moved(base, lg, n, 1e-3, "route_scale 1");
	off = c;
	off.embed_scale = 0.0f;
	logits_with(&off, &ck, lg);
	expect_moved(base, lg, n, 1e-3, "mup off");
	off = c;
	off.nope_global = false;
	logits_with(&off, &ck, lg);
	expect_moved(base, lg, n, 1e-3, "RoPE on the full_attention layer");
	off = c;
	off.local_mask[0] = 0;
	logits_with(&off, &ck, lg);
	expect_moved(base, lg, n, 1e-3, "no sliding layer (window and RoPE off)");
	off = c;
	off.window = 7;
	logits_with(&off, &ck, lg);
	expect_moved(base, lg, n, 1e-3, "the window past the tokens");
	off = c;
	off.n_group = off.topk_group = 1;
	logits_with(&off, &ck, lg);
	expect_moved(base, lg, n, 1e-3, "the groups ignored");
	free(base);
	free(lg);
	ref_set_clear(&ck);
	close_model(&m);
}

#define AFA(extra)                                                                                 \
	"{\"architectures\": [\"AfmoeForCausalLM\"], \"model_type\": \"afmoe\", "                  \
	"\"hidden_size\": 64, \"num_attention_heads\": 4, \"num_hidden_layers\": 2, "              \
	"\"vocab_size\": 100, \"moe_intermediate_size\": 32, \"num_experts\": 16, "                \
	"\"layer_types\": [\"sliding_attention\", \"full_attention\"]" extra "}"

static void test_af_config(void **state)
{
	(void)state;
	ref_cfg c;
	wt_errbuf err = {0};
	/* AfmoeConfig's defaults (vLLM's copy): kv heads = heads, head_dim 128, 6 per token,
	 * n_group / topk_group 1, route_norm, route_scale 1, num_dense_layers 1, 2 shared experts,
	 * sliding_window 2048, mup off, rms_norm_eps 1e-5, rope_theta 10000, untied */
	static const char plain[] = AFA("");
	int rv = ref_cfg_parse_json(plain, strlen(plain), &c, &err);
	if (rv != WT_OK)
		print_error("%s\n", err.msg);
	assert_int_equal(rv, WT_OK);
	assert_true(c.afmoe && c.E == 16 && c.topk == 6 && c.n_group == 1 && c.topk_group == 1 &&
	            c.Is == 64 && c.first_dense == 1 && c.qk_norm && !c.tied && c.KV == 4 &&
	            c.d == 128 && c.window == 2048 && c.local_mask[0] == 1 && c.norm_topk &&
	            c.embed_scale == 0.0f);
	assert_float_equal(c.routed_scale, 1.0, 1e-12);
	assert_float_equal(c.eps, 1e-5, 1e-12);
	assert_float_equal(c.theta, 10000.0, 1e-9);
	/* the router keys read as vLLM passes them to FusedMoE */
	static const char keys[] = AFA(", \"route_norm\": false, \"route_scale\": 2.826, "
	                               "\"num_dense_layers\": 0, \"num_shared_experts\": 1, "
	                               "\"mup_enabled\": true, \"sliding_window\": 5");
	assert_int_equal(ref_cfg_parse_json(keys, strlen(keys), &c, &err), WT_OK);
	assert_true(!c.norm_topk && c.first_dense == 0 && c.Is == 32 && c.window == 5);
	assert_float_equal(c.routed_scale, 2.826, 1e-12);
	assert_float_equal(c.embed_scale, 8.0, 1e-6);
	expect_cfg(AFA(", \"score_func\": \"softmax\""), WT_EUNSUPPORTED, "scoring_func");
	expect_cfg(AFA(", \"n_group\": 3"), WT_EUNSUPPORTED, "n_group");
	expect_cfg(AFA(", \"rope_scaling\": {\"rope_type\": \"su\", \"factor\": 2.0}"),
	           WT_EUNSUPPORTED, "su");
	expect_cfg(AFA(", \"sliding_window\": 0"), WT_EUNSUPPORTED, "sliding_window");
	expect_cfg(AFA(", \"hidden_act\": \"gelu\""), WT_EUNSUPPORTED, "hidden_act");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_af_pass),   cmocka_unit_test(test_af_torch),
	    cmocka_unit_test(test_af_caught), cmocka_unit_test(test_af_switches),
	    cmocka_unit_test(test_af_config),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
